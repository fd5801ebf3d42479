//! The fetch of a partial clone's missing blobs (`snapshot::promisor` says which): one `git
//! fetch` as git's own lazy fetch runs it — no negotiation, no tags, no FETCH_HEAD, the object
//! ids on stdin, the clone's filter kept — through [`super::command`], like every git child.
//! git checks each object it receives against its id.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use gix::ObjectId;

/// The command line after `git`, for `remote`.
pub(crate) fn fetch_args(remote: &str) -> Vec<String> {
    [
        "-c",
        "fetch.negotiationAlgorithm=noop",
        "fetch",
        remote,
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--filter=blob:none",
        "--stdin",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Fetch `ids` from `remote` into the repository whose git directory is `git_dir`; git's own
/// message when it fails.
pub(crate) fn fetch(git_dir: &Path, remote: &str, ids: &[ObjectId]) -> Result<(), String> {
    let mut child = super::command()
        .arg("--git-dir")
        .arg(git_dir)
        .args(fetch_args(remote))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git could not be started: {e}"))?;
    let mut list = String::with_capacity(ids.len() * 41);
    for id in ids {
        list.push_str(&id.to_string());
        list.push('\n');
    }
    // Written on its own thread: git may answer on stderr before it has read all of stdin.
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || stdin.map(|mut s| s.write_all(list.as_bytes())));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("git fetch did not finish: {e}"))?;
    match writer.join() {
        Ok(Some(Err(e))) => return Err(format!("the ids could not be handed to git fetch: {e}")),
        Err(_) => return Err("handing the ids to git fetch failed".to_owned()),
        Ok(_) => {}
    }
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut tail: Vec<&str> = stderr.lines().rev().take(3).collect();
    tail.reverse();
    Err(format!(
        "git fetch failed ({}): {}",
        output.status,
        tail.join(" ")
    ))
}
