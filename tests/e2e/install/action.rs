//! The GitHub Action (`action.yml`) as a runner runs it: every `run` step with the variables a
//! GitHub runner sets, against a local release folder and a local forge; the steps that use
//! another action (the compile cache's restore and save) are GitHub's and are not run here.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Release, VERSION, packaged, workspace};
use crate::support::config::Config;
use crate::support::forge::Forge;

/// One step of `action.yml` as a composite action's runner sees it.
struct Step {
    name: String,
    id: Option<String>,
    env: Vec<(String, String)>,
    run: String,
    /// Another action this step uses (GitHub's; not run here).
    uses: Option<String>,
}

/// The steps of the repository's `action.yml`: its `name`, `id`, `env` and `run` keys, and a
/// `uses` step's action (its `if` and `with` are GitHub's to evaluate); a key this reader does
/// not know fails the test.
fn action_steps() -> Vec<Step> {
    let text = std::fs::read_to_string(workspace().join("action.yml")).expect("action.yml");
    let after = text.split("\n  steps:\n").nth(1).expect("runs.steps");
    let mut steps: Vec<Step> = Vec::new();
    let mut lines = after.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("    - name: ") {
            steps.push(Step {
                name: name.to_owned(),
                id: None,
                env: Vec::new(),
                run: String::new(),
                uses: None,
            });
            continue;
        }
        let step = steps.last_mut().expect("a step starts with its name");
        let (key, value) = line
            .strip_prefix("      ")
            .and_then(|l| l.split_once(':'))
            .unwrap_or_else(|| panic!("unexpected line in action.yml: {line:?}"));
        let value = value.trim();
        match key {
            "id" => step.id = Some(value.to_owned()),
            "shell" => assert_eq!(value, "bash", "{}", step.name),
            "env" => {
                while let Some(entry) = lines.next_if(|l| l.starts_with("        ")) {
                    let (k, v) = entry.trim().split_once(": ").expect("KEY: value");
                    step.env.push((k.to_owned(), v.to_owned()));
                }
            }
            "run" if value == "|" => {
                while let Some(body) =
                    lines.next_if(|l| l.starts_with("        ") || l.trim().is_empty())
                {
                    step.run
                        .push_str(body.strip_prefix("        ").unwrap_or(""));
                    step.run.push('\n');
                }
            }
            "run" => step.run = value.trim_matches('\'').to_owned(),
            "uses" => step.uses = Some(value.to_owned()),
            "if" => assert!(step.uses.is_none() || !value.is_empty()),
            "with" => while lines.next_if(|l| l.starts_with("        ")).is_some() {},
            _ => panic!("action.yml: a step key this test does not run: {key}"),
        }
    }
    steps
}

/// What a GitHub runner knows when it runs the action: the event and the step outputs so far.
struct Runner<'a> {
    workspace: &'a Path,
    temp: PathBuf,
    home: &'a Path,
    event: &'a str,
    before: &'a str,
    /// `github.ref`: what the run checked out.
    git_ref: &'a str,
    /// `inputs.command` and `inputs.evidence-key`.
    command: &'a str,
    evidence_key: &'a str,
    release: &'a Release,
    outputs: std::collections::BTreeMap<String, String>,
}

impl Runner<'_> {
    /// `${{ … }}` in an `env` value, for the expressions action.yml uses (another fails).
    fn expand(&self, value: &str) -> String {
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("a closed expression") + start;
            let expression = rest[start + 3..end].trim();
            let expanded = match expression {
                "inputs.version" => VERSION.to_owned(),
                "inputs.install-base" => self.release.url(),
                "inputs.output-format" => "github".to_owned(),
                "inputs.command" => self.command.to_owned(),
                "inputs.evidence-key" => self.evidence_key.to_owned(),
                // No registry producer in these repositories: no token, no registry.
                "inputs.oci-token" | "inputs.oci-registry" => String::new(),
                "inputs.compile-cache" => "true".to_owned(),
                "github.ref" => self.git_ref.to_owned(),
                "inputs.trunk || github.event.repository.default_branch" => "main".to_owned(),
                "runner.temp" => self.temp.display().to_string(),
                "github.event_name" => self.event.to_owned(),
                "github.event.before" => self.before.to_owned(),
                "github.base_ref" | "github.event.merge_group.base_ref" => String::new(),
                "github.event.merge_group.base_sha" => String::new(),
                other => match other.strip_prefix("steps.") {
                    Some(output) => self.outputs.get(output).cloned().unwrap_or_default(),
                    None => panic!("action.yml uses `{other}`, which this test does not know"),
                },
            };
            out.push_str(&expanded);
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Run every step as the runner does (`bash -e`, GITHUB_* and RUNNER_* set, PATH without
    /// cargo or discern); stop at the first that fails. Each step's exit code and stdout.
    fn run_action(&mut self) -> Vec<(String, i32, String)> {
        let mut results = Vec::new();
        for step in action_steps().into_iter().filter(|s| s.uses.is_none()) {
            let output_file = self.temp.join(format!("output-{}", results.len()));
            std::fs::write(&output_file, "").expect("GITHUB_OUTPUT");
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &step.run])
                .current_dir(self.workspace);
            discern_tests::hermetic(&mut cmd, self.home);
            cmd.env("PATH", "/usr/bin:/bin")
                .env("CI", "true")
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_ACTION_PATH", workspace())
                .env("GITHUB_WORKSPACE", self.workspace)
                .env("GITHUB_EVENT_NAME", self.event)
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_STEP_SUMMARY", self.temp.join("summary.md"))
                .env("RUNNER_TEMP", &self.temp)
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64");
            for (key, value) in &step.env {
                cmd.env(key, self.expand(value));
            }
            let output = cmd.output().expect("run a step");
            let code = output.status.code().unwrap_or(-1);
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            eprintln!(
                "step {:?}: exit {code}\n{stdout}{}",
                step.name,
                String::from_utf8_lossy(&output.stderr)
            );
            if let Some(id) = &step.id {
                let written = std::fs::read_to_string(&output_file).expect("GITHUB_OUTPUT");
                for line in written.lines() {
                    if let Some((k, v)) = line.split_once('=') {
                        self.outputs
                            .insert(format!("{id}.outputs.{k}"), v.to_owned());
                    }
                }
            }
            results.push((step.name, code, stdout));
            if code != 0 {
                break;
            }
        }
        results
    }
}

/// Commit `file` in the contributor's clone and push it to `branch`: the new head.
fn commit_and_push(forge: &Forge, branch: &str, file: &str, content: &str) -> String {
    let head = forge.commit(
        &forge.contributor,
        &[(file, content.as_bytes())],
        &[],
        "work",
    );
    let to = format!("HEAD:{branch}");
    forge.git(&forge.contributor, &["push", "-q", "origin", &to]);
    head
}

/// What the workflow run is: its event, the tip a push replaced, its ref, and the inputs.
struct Event<'a> {
    name: &'a str,
    before: &'a str,
    git_ref: &'a str,
    command: &'a str,
    evidence_key: &'a str,
}

impl<'a> Event<'a> {
    fn pull_request() -> Self {
        Event {
            name: "pull_request",
            before: "",
            git_ref: "refs/pull/1/merge",
            command: "measure",
            evidence_key: "",
        }
    }

    fn push(before: &'a str) -> Self {
        Event {
            name: "push",
            before,
            git_ref: "refs/heads/main",
            command: "measure",
            evidence_key: "",
        }
    }
}

/// What a run of the action left: each step's name, exit code and stdout; the steps' outputs;
/// the runner's temporary folder (the compile cache is in it).
struct Ran {
    steps: Vec<(String, i32, String)>,
    outputs: std::collections::BTreeMap<String, String>,
    temp: tempfile::TempDir,
}

impl Ran {
    fn codes(&self) -> Vec<(&str, i32)> {
        self.steps
            .iter()
            .map(|(n, c, _)| (n.as_str(), *c))
            .collect()
    }

    fn compiled(&self) -> usize {
        std::fs::read_dir(self.temp.path().join("discern-cache/components"))
            .map_or(0, Iterator::count)
    }
}

fn run_action_on(clone: &Path, release: &Release, event: &Event) -> Ran {
    let temp = tempfile::tempdir().expect("RUNNER_TEMP");
    let home = tempfile::tempdir().expect("HOME");
    let mut runner = Runner {
        workspace: clone,
        temp: temp.path().to_path_buf(),
        home: home.path(),
        event: event.name,
        before: event.before,
        git_ref: event.git_ref,
        command: event.command,
        evidence_key: event.evidence_key,
        release,
        outputs: Default::default(),
    };
    let steps = runner.run_action();
    Ran {
        steps,
        outputs: runner.outputs,
        temp,
    }
}

/// A Standard measured by a repository component (the 0.1 test component counts the files
/// under `paths` that mention `LEGACY`): what the compile cache keeps.
const COMPONENT: &str = r#"
[standards.legacy]
direction = "down"
limit = 1
producer = "tools/l.wasm"
config = { paths = ["src/**"], mode = "emit", emit = { legacy_files = 0 } }
metric = "legacy_files"
"#;

#[test]
fn the_action_measures_a_pull_request_and_a_push_with_the_prebuilt_binary() {
    let release = Release::serve();
    release.publish(VERSION, &packaged().current);
    let forge = Forge::new(
        Config::landing().verbatim(COMPONENT),
        &[("tools/l.wasm", discern_tests::LEGACY_V01_WASM)],
    );

    // A pull request that adds four TODOs to a Standard held at 5 (the trunk has 2): it fails,
    // annotated on the lines it added. The compile cache is not a pull request's to read.
    forge
        .fixture
        .git_in(&forge.contributor, &["checkout", "-q", "-b", "more-todos"]);
    let todos = "// TODO: a\n// TODO: b\n// TODO: c\n// TODO: d\npub fn c() {}\n";
    commit_and_push(&forge, "more-todos", "src/more.rs", todos);
    let clone = forge.actions_checkout("pr", "refs/heads/more-todos");
    let ran = run_action_on(&clone, &release, &Event::pull_request());
    assert_eq!(
        ran.steps.len(),
        7,
        "every step up to the measurement: {:?}",
        ran.codes()
    );
    let (name, code, stdout) = ran.steps.last().expect("the measurement");
    assert_eq!(name, "Measure the Standards");
    assert_eq!(*code, 1, "the regression fails the step: {stdout}");
    assert!(
        stdout.contains("::error file=src/more.rs,line="),
        "{stdout}"
    );
    assert!(ran.steps[..4].iter().all(|(_, code, _)| *code == 0));
    assert_eq!(ran.outputs["install.outputs.cache"], "false");
    assert_eq!(ran.outputs["install.outputs.version"], VERSION);

    // A push to the trunk with one TODO fewer: measured against the tip it replaced; passes.
    // The repository's component was compiled into the cache before anything of it ran.
    forge
        .fixture
        .git_in(&forge.contributor, &["checkout", "-q", "main"]);
    let before = forge
        .fixture
        .git_out(&forge.contributor, &["rev-parse", "HEAD"]);
    commit_and_push(
        &forge,
        "main",
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\npub fn b() {}\n",
    );
    let clone = forge.actions_checkout("push", "refs/heads/main");
    let ran = run_action_on(&clone, &release, &Event::push(&before));
    assert_eq!(ran.steps.len(), 8, "every step ran: {:?}", ran.codes());
    assert!(
        ran.steps.iter().all(|(_, code, _)| *code == 0),
        "the push passes: {:?}",
        ran.codes()
    );
    assert_eq!(ran.outputs["install.outputs.cache"], "true");
    assert_eq!(ran.compiled(), 1, "the component's machine code is kept");

    // A push to another branch reads and writes no cache.
    let ran = run_action_on(
        &clone,
        &release,
        &Event {
            git_ref: "refs/heads/feature",
            ..Event::push(&before)
        },
    );
    assert_eq!(ran.outputs["install.outputs.cache"], "false");
}

#[test]
fn the_action_publishes_signed_evidence_in_a_job_of_its_own_and_refuses_without_a_key() {
    discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
    let release = Release::serve();
    release.publish(VERSION, &packaged().current);
    let keys = tempfile::tempdir().expect("a folder for the key");
    let key = keys.path().join("ci-key");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen");
    assert!(made.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).expect("the public key");
    let signers = format!(
        "ci@example.com namespaces=\"discern-evidence\" {}",
        public.trim()
    );
    let forge = Forge::new(
        Config::landing().verbatim("\n[acceptance]\nallowed_signers = \".discern/allowed_signers\"\n\n[evidence]\nrepository = \"example.com/app\"\npublish = \"trunk-ci\"\n"),
        &[(".discern/allowed_signers", signers.as_bytes())],
    );
    let clone = forge.actions_checkout("publish", "refs/heads/main");
    let publish = |evidence_key: &str| {
        run_action_on(
            &clone,
            &release,
            &Event {
                command: "publish",
                evidence_key,
                ..Event::push("")
            },
        )
    };
    let ran = publish("");
    let (name, code, stdout) = ran.steps.last().expect("the publish step");
    assert_eq!(
        name,
        "Measure the trunk's tip afresh and publish it, signed"
    );
    assert_eq!(*code, 1, "no key, no publishing: {stdout}");
    assert!(stdout.contains("needs evidence-key"), "{stdout}");

    let key_text = std::fs::read_to_string(&key).expect("the key");
    let ran = publish(&key_text);
    assert!(
        ran.steps.iter().all(|(_, code, _)| *code == 0),
        "{:?}",
        ran.codes()
    );
    let published = forge.fixture.git_out(
        &forge.origin,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/discern/evidence",
        ],
    );
    assert_eq!(
        published, "refs/discern/evidence",
        "the forge holds the evidence"
    );
}
