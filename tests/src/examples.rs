//! The example producers of `sdk/examples/`: building all four languages with
//! `sdk/examples/build.sh`, and the fixture repository they must all measure identically. Shared
//! by the end-to-end test and the `examples` benchmark.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The languages the example is written in, Rust first (the reference).
pub const LANGUAGES: [&str; 4] = ["rust", "python", "javascript", "c"];

/// What `build.sh` left for one language.
#[derive(Debug, Clone)]
pub enum Built {
    Component {
        path: PathBuf,
        bytes: u64,
        build_ms: u64,
    },
    /// The toolchain could not be installed here (the reason, with the installer's log).
    Skipped(String),
    /// The toolchain is there but the build failed (the log).
    Failed(String),
}

#[derive(Debug)]
pub struct Examples {
    pub built: Vec<(&'static str, Built)>,
    /// What the script printed (its summary and progress).
    pub output: String,
}

impl Examples {
    /// The languages that produced a component, with its path.
    pub fn components(&self) -> Vec<(&'static str, PathBuf)> {
        self.built
            .iter()
            .filter_map(|(language, built)| match built {
                Built::Component { path, .. } => Some((*language, path.clone())),
                _ => None,
            })
            .collect()
    }
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives in the workspace")
        .to_path_buf()
}

/// Run `sdk/examples/build.sh --out OUT --tools TOOLS` for all four languages.
pub fn build(out: &Path, tools: &Path) -> Examples {
    let script = workspace().join("sdk/examples/build.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg("--out")
        .arg(out)
        .arg("--tools")
        .arg(tools)
        // CI builds the suite with clippy as the workspace wrapper (.ci/run); the examples
        // are built as a user builds them, without it.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    let built = LANGUAGES
        .iter()
        .map(|language| {
            let file = |ext: &str| out.join(format!("{language}.{ext}"));
            let read = |ext: &str| std::fs::read_to_string(file(ext)).ok();
            let built = if let Some(reason) = read("skipped") {
                Built::Skipped(reason)
            } else if let Some(log) = read("failed") {
                Built::Failed(log)
            } else if let Ok(meta) = std::fs::metadata(file("wasm")) {
                Built::Component {
                    path: file("wasm"),
                    bytes: meta.len(),
                    build_ms: read("build-ms")
                        .and_then(|ms| ms.trim().parse().ok())
                        .unwrap_or(0),
                }
            } else {
                Built::Failed(format!(
                    "build.sh left no result for {language} (exit {:?})",
                    output.status.code()
                ))
            };
            (*language, built)
        })
        .collect();
    Examples {
        built,
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// The fixture every language measures: headers in every position that matters.
pub const FIXTURE: &[(&str, &[u8])] = &[
    ("src/a.rs", b"// SPDX-License-Identifier: MIT\nfn a() {}\n"),
    ("src/b.rs", b"fn b() {}\n"),
    // On line 5: inside the default window of 5 lines.
    (
        "src/nested/deep/c.rs",
        b"\n\n\n\n// SPDX-License-Identifier: MIT\n",
    ),
    // On line 6: outside the default window, inside `lines = 6`.
    ("src/d.rs", b"\n\n\n\n\n// SPDX-License-Identifier: MIT\n"),
    (
        "src/crlf.rs",
        b"// SPDX-License-Identifier: MIT\r\nfn x() {}\r\n",
    ),
    ("src/empty.rs", b""),
    ("src/no_newline.rs", b"// SPDX-License-Identifier: MIT"),
    // Not UTF-8: the producers compare bytes.
    (
        "src/latin1.rs",
        b"// \xa9 Acme\n// SPDX-License-Identifier: MIT\n",
    ),
    (
        "src/unicode.rs",
        "// Copyright © Acme\n// SPDX-License-Identifier: MIT\n".as_bytes(),
    ),
    ("docs/guide.md", b"no header, and not selected\n"),
];

/// A file whose only marker lies past the 8 KiB the producers read.
fn big_file() -> Vec<u8> {
    let mut bytes = vec![b'x'; 9000];
    bytes.extend_from_slice(b"\n// SPDX-License-Identifier: MIT\n");
    bytes
}

/// How many files [`write_fixture`] writes.
pub const FIXTURE_FILES: usize = FIXTURE.len() + 2;

/// Write the fixture into `repo` (not committed): [`FIXTURE`], the big file, and a
/// `.gitignore` that keeps `build/` (where components go) out of the snapshot.
pub fn write_fixture(repo: &crate::TestRepo) {
    for (path, bytes) in FIXTURE {
        repo.write(path, bytes);
    }
    repo.write("src/big.rs", big_file());
    repo.write(".gitignore", "build/\n");
}

/// One Standard per language measures each case.
pub struct Case {
    pub suffix: &'static str,
    pub metric: &'static str,
    /// The `config` table, as TOML (for `discern.toml`) and as the JSON the host passes.
    pub toml: &'static str,
    pub json: &'static str,
    pub expected: f64,
}

pub const CASES: &[Case] = &[
    // 10 files; b, big, d and empty lack the marker in their first 5 lines.
    Case {
        suffix: "missing",
        metric: "files_without_header",
        toml: r#"{ paths = ["src/**/*.rs"] }"#,
        json: r#"{"paths":["src/**/*.rs"]}"#,
        expected: 4.0,
    },
    // With 6 lines, d counts: 7 of 10 carry it.
    Case {
        suffix: "share6",
        metric: "license_header_share",
        toml: r#"{ paths = ["src/**/*.rs"], lines = 6 }"#,
        json: r#"{"paths":["src/**/*.rs"],"lines":6}"#,
        expected: 0.7,
    },
    // A non-ASCII marker on the first line only, big.rs excluded: 1 of 9.
    Case {
        suffix: "custom",
        metric: "license_header_share",
        toml: r#"{ paths = ["src/**", ":!src/big.rs"], marker = "Copyright © Acme", lines = 1 }"#,
        json: r#"{"paths":["src/**",":!src/big.rs"],"marker":"Copyright © Acme","lines":1}"#,
        expected: 1.0 / 9.0,
    },
];

/// A config every language refuses, and the message each must give.
pub const BAD_CONFIG: (&str, &str) = (
    r#"{ lines = 6 }"#,
    "config `paths` must be a non-empty list of globs",
);
