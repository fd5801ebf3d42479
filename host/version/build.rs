// Bakes the commit this crate is built from into `DISCERN_COMMIT` (empty outside a git
// checkout), and reruns when HEAD or the branch it names moves.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=DISCERN_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    let (Some(git_dir), Some(common)) = (
        git(&["rev-parse", "--absolute-git-dir"]),
        git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
    ) else {
        return;
    };
    // Only paths that exist (cargo reruns on every build for one that does not): HEAD, the
    // branch's loose ref, or else the folder a new loose ref appears in, and packed-refs.
    let mut watched = vec![format!("{git_dir}/HEAD"), format!("{common}/packed-refs")];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(format!("{common}/{branch}"));
        if let Some((folder, _)) = branch.rsplit_once('/') {
            watched.push(format!("{common}/{folder}"));
        }
    }
    for path in watched.iter().filter(|p| std::path::Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
