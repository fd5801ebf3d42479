// Builds crates of this workspace for `wasm32-wasip2` from a build script, the way wasmtime's
// `test-programs` artifacts crate does: a nested `cargo build` into a target directory of its
// own, then the components are copied into `OUT_DIR`. Shared by `host/build.rs` (the built-in
// producers) and `tests/build.rs` (the hostile test producers) through `#[path]`.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";
const PROFILE: &str = "producer";

/// Build `packages` (Cargo package names) and copy each `<lib>.wasm` to `OUT_DIR/<file>`.
pub fn build(packages: &[(&str, &str)]) {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let workspace = manifest_dir
        .parent()
        .expect("the crate lives inside the workspace");
    ensure_target_installed();

    let target_dir = shared_target_dir(&out_dir);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .arg("build")
        .arg("--target")
        .arg(TARGET)
        .arg("--profile")
        .arg(PROFILE)
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"));
    for (package, _) in packages {
        cmd.arg("-p").arg(package);
    }
    // The outer build's flags (coverage instrumentation, clippy as a wrapper, a host linker)
    // must not leak into the wasm build.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    // SIMD lets memchr and regex scan snapshot files several times faster.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128");
    let status = cmd
        .status()
        .expect("run cargo to build the wasm32-wasip2 components");
    assert!(
        status.success(),
        "building the wasm32-wasip2 components failed: {status}"
    );

    let built = target_dir.join(TARGET).join(PROFILE);
    for (package, file) in packages {
        let lib = package.replace('-', "_");
        let from = built.join(format!("{lib}.wasm"));
        let to = out_dir.join(file);
        std::fs::copy(&from, &to)
            .unwrap_or_else(|e| panic!("copy {} to {}: {e}", from.display(), to.display()));
    }

    for dir in ["sdk", "producers", "wit", "tests/components"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
}

/// One wasm target directory for every build script and profile: `<target>/wasm-components`,
/// found by walking up from `OUT_DIR` to the directory cargo marks with `CACHEDIR.TAG`.
fn shared_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(|target| target.join("wasm-components"))
        .unwrap_or_else(|| out_dir.join("wasm-components"))
}

/// A fresh machine may have the pinned toolchain without the wasm target (rustup installs the
/// targets of `rust-toolchain.toml` only when it installs the toolchain itself).
fn ensure_target_installed() {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(sysroot) = &sysroot
        && sysroot.join("lib/rustlib").join(TARGET).is_dir()
    {
        return;
    }
    let toolchain = sysroot
        .as_ref()
        .and_then(|s| s.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let mut cmd = Command::new("rustup");
    cmd.args(["target", "add", TARGET]);
    if let Some(toolchain) = &toolchain {
        cmd.args(["--toolchain", toolchain]);
    }
    match cmd.status() {
        Ok(status) if status.success() => {}
        other => panic!(
            "the {TARGET} target is not installed and `rustup target add {TARGET}` failed ({other:?}); \
             install it by hand with `rustup target add {TARGET}`"
        ),
    }
}
