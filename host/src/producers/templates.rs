//! The files `discern producers new` writes: the license-header example of `sdk/examples/`,
//! embedded in the binary as it is in the source tree (so a scaffold always follows the
//! example), with the producer's name put in and the repository-relative paths made local.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table};

use super::Lang;

const EXAMPLE: &str = "sdk/examples/license-header";

macro_rules! example {
    ($path:literal) => {
        include_str!(concat!("../../../sdk/examples/license-header/", $path))
    };
}

/// The contract the example is built against (`WIT=` in `sdk/examples/build.sh`).
pub(super) const WIT: &str = include_str!("../../../wit/v0.2/producer.wit");
/// The example's build script: the toolchain versions it pins.
pub(super) const BUILD_SH: &str = include_str!("../../../sdk/examples/build.sh");
const WORKSPACE_MANIFEST: &str = include_str!("../../../Cargo.toml");

/// One file to write: its path inside the new folder and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct File {
    pub path: PathBuf,
    pub text: String,
}

/// An embedded file that no longer has the shape the scaffold expects: a bug in this build.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the embedded example file {file} {why}")]
pub(super) struct TemplateError {
    file: String,
    why: String,
}

impl TemplateError {
    fn new(file: &str, why: impl Into<String>) -> Self {
        Self {
            file: format!("{EXAMPLE}/{file}"),
            why: why.into(),
        }
    }
}

/// The example's files for `lang`, made into producer `name` (Rust: depending on `sdk`).
pub(super) fn files(lang: Lang, name: &str, sdk: &Path) -> Result<Vec<File>, TemplateError> {
    let file = |path: &str, text: String| File {
        path: PathBuf::from(path),
        text,
    };
    let wit = || file("wit/producer.wit", WIT.to_owned());
    Ok(match lang {
        Lang::Rust => vec![
            file("Cargo.toml", cargo_toml(name, sdk)?),
            file(
                "src/lib.rs",
                renamed("rust/src/lib.rs", example!("rust/src/lib.rs"), name)?,
            ),
        ],
        Lang::Python => vec![
            file(
                "app.py",
                renamed("python/app.py", example!("python/app.py"), name)?,
            ),
            wit(),
        ],
        Lang::Javascript => vec![
            file(
                "producer.js",
                renamed(
                    "javascript/producer.js",
                    example!("javascript/producer.js"),
                    name,
                )?,
            ),
            file("build.mjs", local(example!("javascript/build.mjs"))),
            file(
                "package.json",
                package(
                    name,
                    "javascript/package.json",
                    example!("javascript/package.json"),
                )?,
            ),
            file(
                "package-lock.json",
                package(
                    name,
                    "javascript/package-lock.json",
                    example!("javascript/package-lock.json"),
                )?,
            ),
            wit(),
        ],
        Lang::C => vec![
            file(
                &format!("{}.c", name.replace('-', "_")),
                renamed("c/license_header.c", example!("c/license_header.c"), name)?,
            ),
            file("json.c", local(example!("c/json.c"))),
            file("json.h", local(example!("c/json.h"))),
            wit(),
        ],
    })
}

/// `text` with the producer's name (`"license-header"`, `'license-header'`) replaced.
fn renamed(file: &str, text: &str, name: &str) -> Result<String, TemplateError> {
    let mut out = local(text);
    let mut replaced = 0;
    for quote in ['"', '\''] {
        let from = format!("{quote}license-header{quote}");
        replaced += out.matches(&from).count();
        out = out.replace(&from, &format!("{quote}{name}{quote}"));
    }
    match replaced {
        0 => Err(TemplateError::new(
            file,
            "no longer names the producer \"license-header\"",
        )),
        _ => Ok(out),
    }
}

/// The example's paths into the discern repository (`../../../../wit/v0.2`) made local (`wit`).
fn local(text: &str) -> String {
    let mut out = text.to_owned();
    for version in ["v0.1", "v0.2", "v0.3"] {
        out = out.replace(&format!("../../../../wit/{version}"), "wit");
    }
    out
}

/// An npm manifest (or lock) with the package named `name`.
fn package(name: &str, file: &str, text: &str) -> Result<String, TemplateError> {
    const PACKAGE: &str = "discern-example-license-header";
    if !text.contains(PACKAGE) {
        return Err(TemplateError::new(
            file,
            format!("no longer names the package {PACKAGE}"),
        ));
    }
    Ok(local(text).replace(PACKAGE, name))
}

/// The example's `Cargo.toml`, its workspace inheritance resolved from the workspace manifest,
/// named `name`, depending on the SDK at `sdk`, and a workspace of its own (so it builds
/// wherever it is created, inside another Cargo workspace too).
fn cargo_toml(name: &str, sdk: &Path) -> Result<String, TemplateError> {
    const FILE: &str = "rust/Cargo.toml";
    let bad = |why: String| TemplateError::new(FILE, why);
    let mut manifest: DocumentMut = example!("rust/Cargo.toml")
        .parse()
        .map_err(|e| bad(format!("is not TOML: {e}")))?;
    let workspace: DocumentMut = WORKSPACE_MANIFEST
        .parse()
        .map_err(|e| bad(format!("has a workspace manifest that is not TOML: {e}")))?;
    let inherited = &workspace["workspace"];
    let package = manifest["package"]
        .as_table_like_mut()
        .ok_or_else(|| bad("has no [package]".to_owned()))?;
    for (key, item) in package.iter_mut() {
        if from_workspace(item) {
            *item = inherited["package"][key.get()].clone();
        }
    }
    package.insert("name", toml_edit::value(name));
    package.insert(
        "description",
        toml_edit::value(format!(
            "discern producer {name}, scaffolded from discern's license-header example"
        )),
    );
    let dependencies = manifest["dependencies"]
        .as_table_like_mut()
        .ok_or_else(|| bad("has no [dependencies]".to_owned()))?;
    for (key, item) in dependencies.iter_mut() {
        if key.get() == "discern-sdk" {
            let mut sdk_dep = toml_edit::InlineTable::new();
            sdk_dep.insert("path", sdk.display().to_string().into());
            *item = Item::Value(sdk_dep.into());
        } else if from_workspace(item) {
            *item = inherited["dependencies"][key.get()].clone();
        }
    }
    manifest.insert("workspace", Item::Table(Table::new()));
    Ok(manifest.to_string())
}

/// `key.workspace = true` (or `key = { workspace = true }`).
fn from_workspace(item: &Item) -> bool {
    item.as_table_like()
        .and_then(|t| t.get("workspace"))
        .and_then(Item::as_bool)
        == Some(true)
}

/// A version `sdk/examples/build.sh` pins (`NAME=value`), or "(see sdk/examples/build.sh)".
pub(super) fn pinned(variable: &str) -> String {
    BUILD_SH
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{variable}=")))
        .and_then(|rest| rest.split_whitespace().next())
        .map_or_else(|| "(see sdk/examples/build.sh)".to_owned(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_scaffolds_with_the_name_put_in() {
        let sdk = Path::new("/opt/discern/sdk");
        for lang in [Lang::Rust, Lang::Python, Lang::Javascript, Lang::C] {
            let files = files(lang, "word-count", sdk).unwrap_or_else(|e| panic!("{e}"));
            let all: String = files.iter().map(|f| f.text.as_str()).collect();
            assert!(all.contains("word-count"), "{lang:?}");
            assert!(!all.contains("\"license-header\""), "{lang:?}");
            assert!(!all.contains("../../../../wit"), "{lang:?}");
        }
        let rust = files(Lang::Rust, "word-count", sdk).expect("rust");
        let manifest: DocumentMut = rust[0].text.parse().expect("TOML");
        assert_eq!(manifest["package"]["name"].as_str(), Some("word-count"));
        assert_eq!(manifest["package"]["edition"].as_str(), Some("2024"));
        assert_eq!(
            manifest["dependencies"]["discern-sdk"]["path"].as_str(),
            Some("/opt/discern/sdk")
        );
        assert!(manifest["dependencies"]["serde_json"]["version"].is_str());
        assert!(manifest["workspace"].is_table());
        assert!(
            !rust[0].text.contains("workspace = true"),
            "{}",
            rust[0].text
        );
    }

    #[test]
    fn the_embedded_contract_is_the_one_the_example_builds_against() {
        let wit_line = BUILD_SH
            .lines()
            .find(|l| l.starts_with("WIT=$ROOT/"))
            .expect("build.sh names the example's WIT folder");
        let folder = wit_line.trim_start_matches("WIT=$ROOT/");
        let expected = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(folder)
                .join("producer.wit"),
        )
        .expect("the WIT the example builds against");
        assert!(
            WIT == expected,
            "the example builds against {folder}: point `WIT` in host/src/producers/templates.rs at it"
        );
        assert!(pinned("COMPONENTIZE_PY_VERSION").starts_with("0."));
    }
}
