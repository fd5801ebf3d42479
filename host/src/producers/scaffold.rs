//! `discern producers new NAME --lang rust|python|javascript|c`: a buildable producer folder
//! `NAME/`, made from the license-header example (see `templates`), with a README that says
//! how to build it, try it (`discern producers run`) and point a Standard at it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::templates::{self, File, TemplateError};
use super::{Lang, NewRequest};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section};

/// The SDK this binary was built from: the Rust scaffold's default dependency.
const BUILT_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk");

/// Why no scaffold was written.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotScaffolded {
    #[error("{0:?} is not a producer name: {1}")]
    InvalidName(String, &'static str),
    #[error("{} already exists and is not empty; nothing was written", .0.display())]
    Exists(PathBuf),
    #[error("the Rust scaffold depends on discern-sdk, and {} is no discern-sdk folder", .0.display())]
    NoSdk(PathBuf),
    #[error("cannot write {}: {error}", .path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Template(#[from] TemplateError),
}

/// `data` of `producers new`.
#[derive(Debug, Serialize)]
struct NewData<'a> {
    name: &'a str,
    lang: &'static str,
    dir: String,
    files: Vec<String>,
    /// The command that builds it, run in `dir`.
    build: String,
    /// Where the component appears once built (relative to `dir`).
    component: String,
}

/// Write the scaffold into `dir/NAME/`.
pub(super) fn new(dir: &Path, request: &NewRequest) -> Result<Reply, Refused> {
    write(dir, request).map_err(Refused::from)
}

fn write(dir: &Path, request: &NewRequest) -> Result<Reply, NotScaffolded> {
    let name = request.name.as_str();
    check_name(name)?;
    let target = dir.join(name);
    if std::fs::read_dir(&target).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(NotScaffolded::Exists(target));
    }
    let sdk = sdk_dir(request)?;
    let mut files = templates::files(request.lang, name, &sdk)?;
    files.push(File {
        path: PathBuf::from("README.md"),
        text: readme(request.lang, name),
    });
    files.push(File {
        path: PathBuf::from(".gitignore"),
        text: gitignore(request.lang, name),
    });
    for file in &files {
        let path = target.join(&file.path);
        let parent = path.parent().unwrap_or(&target);
        std::fs::create_dir_all(parent)
            .and_then(|()| std::fs::write(&path, &file.text))
            .map_err(|error| NotScaffolded::Write {
                path: path.clone(),
                error,
            })?;
    }
    Ok(written(request, &target, &files))
}

fn written(request: &NewRequest, target: &Path, files: &[File]) -> Reply {
    let name = request.name.as_str();
    let (build, component) = build(request.lang, name);
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    let report = Report {
        state: format!(
            "Wrote the {} producer {name} into {}/ from discern's license-header example.",
            request.lang.as_str(),
            target.display()
        ),
        sections: vec![
            Section {
                table: None,
                title: "Files".to_owned(),
                lines: paths.clone(),
            },
            Section {
                table: None,
                title: "Build it (in that folder)".to_owned(),
                lines: build.lines().map(str::to_owned).collect(),
            },
        ],
    };
    let data = NewData {
        name,
        lang: request.lang.as_str(),
        dir: target.display().to_string(),
        files: paths,
        build,
        component: component.clone(),
    };
    Reply::new(data, report).with_hint(
        Hint::next_step(
            HintId::BuildCustomProducer,
            "Build it, then run it against this repository's HEAD without touching discern.toml",
        )
        .with_action(
            Action::new(super::RUN_VERB)
                .arg("path", format!("{name}/{component}"))
                .arg("config", r#"{"paths":["**"]}"#),
        ),
    )
}

/// Lowercase letters, digits and single hyphens, starting with a letter: a Cargo package,
/// an npm package, a C file and a folder name alike.
fn check_name(name: &str) -> Result<(), NotScaffolded> {
    let invalid = |why| Err(NotScaffolded::InvalidName(name.to_owned(), why));
    if name.is_empty() || name.len() > 64 {
        return invalid("it must be 1 to 64 characters");
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return invalid("it must start with a lowercase letter");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return invalid("it may hold only lowercase letters, digits and hyphens");
    }
    if name.ends_with('-') || name.contains("--") {
        return invalid("hyphens must separate words");
    }
    if [
        "test",
        "core",
        "std",
        "alloc",
        "proc-macro",
        "build",
        "deps",
    ]
    .contains(&name)
    {
        return invalid("Cargo reserves it");
    }
    Ok(())
}

/// The SDK folder a Rust scaffold depends on (`--sdk`, else the one this discern was built
/// from); other languages need none.
fn sdk_dir(request: &NewRequest) -> Result<PathBuf, NotScaffolded> {
    let given = request
        .sdk
        .clone()
        .unwrap_or_else(|| PathBuf::from(BUILT_SDK));
    if request.lang != Lang::Rust {
        return Ok(given);
    }
    match std::fs::canonicalize(&given) {
        Ok(sdk) if sdk.join("Cargo.toml").is_file() => Ok(sdk),
        _ => Err(NotScaffolded::NoSdk(given)),
    }
}

/// How to build `lang`'s scaffold `name`, and where the component appears.
fn build(lang: Lang, name: &str) -> (String, String) {
    let snake = name.replace('-', "_");
    let wasm = format!("{name}.wasm");
    match lang {
        Lang::Rust => (
            "rustup target add wasm32-wasip2   # once\ncargo build --target wasm32-wasip2 --release".to_owned(),
            format!("target/wasm32-wasip2/release/{snake}.wasm"),
        ),
        Lang::Python => (
            format!(
                "python3 -m venv .venv && .venv/bin/pip install componentize-py=={}\n.venv/bin/componentize-py -d wit -w producer componentize app -o {wasm}",
                templates::pinned("COMPONENTIZE_PY_VERSION")
            ),
            wasm,
        ),
        Lang::Javascript => (format!("npm ci\nnode build.mjs wit {wasm}"), wasm),
        Lang::C => (
            format!(
                "# clang 14 + wasi-libc (Debian: clang-14 lld-14 libclang-rt-14-dev-wasm32 wasi-libc),\n\
                 # wit-bindgen-cli {} (--features c), wasm-tools {}, and the WASI preview-1 reactor adapter {} (sdk/guides/c.md)\n\
                 wit-bindgen c wit --world producer --out-dir gen\n\
                 clang-14 --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 -Wall -Wextra -Igen \\\n  -o core.wasm {snake}.c json.c gen/producer.c gen/producer_component_type.o\n\
                 wasm-tools component new core.wasm \\\n  --adapt wasi_snapshot_preview1=wasi_snapshot_preview1.reactor.wasm -o {wasm}",
                templates::pinned("WIT_BINDGEN_VERSION"),
                templates::pinned("WASM_TOOLS_VERSION"),
                templates::pinned("ADAPTER_VERSION"),
            ),
            wasm,
        ),
    }
}

/// The scaffold's README: what it measures, how to build, try and use it.
fn readme(lang: Lang, name: &str) -> String {
    let (build, component) = build(lang, name);
    format!(
        "# {name}\n\n\
         A discern producer in {lang}, scaffolded by `discern producers new {name} --lang {lang}` from\n\
         discern's license-header example: it counts the files (`config.paths`) that lack a license\n\
         marker (`config.marker`, default `SPDX-License-Identifier:`) in their first `config.lines`\n\
         lines (default 5), as `files_without_header` (one finding per file) and\n\
         `license_header_share`. Change `describe()` and `run` to measure what you need.\n\n\
         ## Build\n\n```sh\n{build}\n```\n\n\
         The component: `{component}`.\n\n\
         ## Try it\n\n\
         From the repository to measure (HEAD by default, `--rev REV` for another commit, `--force`\n\
         for the work tree), without touching `discern.toml`:\n\n\
         ```sh\ndiscern producers run path/to/{name}/{component} --config '{{\"paths\": [\"src/**\"]}}'\n\
         discern producers path/to/{name}/{component}     # its metrics and config schema\n```\n\n\
         ## Use it\n\n\
         **Publish it** when the component is large (Python's is about 18 MB, JavaScript's 12 MB)\n\
         or several repositories share it: push it to an OCI registry your team has (GitHub's\n\
         container registry, Harbor, a self-hosted `distribution`) and name it by the digest\n\
         `publish` prints. discern fetches it once, checks it against that digest and keeps it in\n\
         the per-user cache, so nothing but `discern.toml` is committed for it:\n\n\
         ```sh\ndiscern producers publish {component} --to oci://ghcr.io/acme/{name}:0.1.0\n```\n\n\
         ```toml\n[standards.license_headers]\ndirection = \"down\"\nlimit = 0\n\
         producer = \"oci://ghcr.io/acme/{name}:0.1.0@sha256:…\"   # the line publish printed\n\
         metric = \"files_without_header\"\nconfig = {{ paths = [\"src/**\"] }}\n```\n\n\
         **Commit it** when it is small (Rust's and C's are a few hundred KB) and only this\n\
         repository runs it: copy it into the repository, commit it and name its path,\n\
         `producer = \"tools/{name}.wasm\"`. Either way the Standard pins the exact bytes: a new\n\
         digest, like a new committed component, is a change the owner approves. `.gitignore`\n\
         keeps the build's output out of git.\n",
        lang = lang.as_str(),
    )
}

/// What the build leaves in the folder and git should not hold: the toolchain's output, and the
/// component itself where it is too large to commit (it is published instead).
fn gitignore(lang: Lang, name: &str) -> String {
    let publish = "# The component is published (`discern producers publish`), not committed.";
    match lang {
        Lang::Rust => "target/\n".to_owned(),
        Lang::Python => format!("__pycache__/\n.venv/\n{publish}\n{name}.wasm\n"),
        Lang::Javascript => format!("node_modules/\n{publish}\n{name}.wasm\n"),
        Lang::C => "gen/\ncore.wasm\nwasi_snapshot_preview1.reactor.wasm\n".to_owned(),
    }
}

impl Refusal for NotScaffolded {
    fn slug(&self) -> ErrorSlug {
        match self {
            NotScaffolded::InvalidName(..) => ErrorSlug::InvalidArguments,
            NotScaffolded::Exists(_) => ErrorSlug::AlreadyExists,
            NotScaffolded::NoSdk(_) | NotScaffolded::Write { .. } => ErrorSlug::PreconditionFailed,
            NotScaffolded::Template(_) => ErrorSlug::Internal,
        }
    }

    fn hint(&self) -> Hint {
        let hint = match self {
            NotScaffolded::InvalidName(..) => {
                "Name it like a Cargo package, e.g. `discern producers new long-functions --lang rust`."
            }
            NotScaffolded::Exists(_) => "Choose a new name, or remove that folder first.",
            NotScaffolded::NoSdk(_) => {
                "Pass --sdk DIR with the sdk/ folder of a discern checkout (`git clone` discern's repository)."
            }
            NotScaffolded::Write { .. } => "Run it where you may create a folder.",
            NotScaffolded::Template(_) => {
                "This build of discern is broken; report it with the message."
            }
        };
        let id = match self {
            NotScaffolded::Template(_) => HintId::ReportBug,
            _ => HintId::SeeHelp,
        };
        Hint::next_step(id, hint)
    }

    /// The message ends as a sentence (the errors read as clauses elsewhere).
    fn refused(&self) -> Refused {
        Refused::new(self.slug(), format!("{self}."), self.hint())
    }
}
