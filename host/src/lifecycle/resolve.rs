//! `discern.toml` merged by meaning wherever two lines of work meet: `discern merge-driver` is
//! git's merge driver for the file (installed by `discern init --merge-driver`), `discern
//! resolve` settles a conflicted `discern.toml` a merge without the driver left (a forge's merge,
//! a clone without the driver) in any checkout. Both follow `config::merge_limits`: a limit
//! one side changed takes that side, one both sides tightened the tighter; a loosening, a
//! redefinition or a deletion meeting another change stays a conflict, with its reason.

use std::path::{Path, PathBuf};

use crate::config::{Config, FILE, LimitConflict, merge_limits};
use crate::git::Repo;
use crate::result::{ErrorSlug, Hint, HintId, Refused, Reply, Report};

pub(crate) const DRIVER_VERB: &str = "merge-driver";
pub(crate) const RESOLVE_VERB: &str = "resolve";

/// git's `%O %A %B %P`: the base, ours (where the result goes), theirs, and the path.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MergeDriverRequest {
    /// The common ancestor's version (`%O`; empty when the file is new on both sides).
    pub base: PathBuf,
    /// Our version (`%A`), overwritten with the result.
    pub ours: PathBuf,
    /// Their version (`%B`).
    pub theirs: PathBuf,
    /// The path in the repository (`%P`), for messages.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResolveRequest {}

/// The refusal, as the reply of a verb here.
fn refuse(slug: ErrorSlug, message: String, hint: &str) -> Result<Reply, Refused> {
    Err(Refused::new(
        slug,
        message,
        Hint::next_step(HintId::CheckRepository, hint),
    ))
}

/// `data` of a resolution: nothing beyond the report (`{}`).
#[derive(serde::Serialize)]
struct Resolved {}

fn ok(state: String) -> Result<Reply, Refused> {
    Ok(Reply::new(
        Resolved {},
        Report {
            state,
            sections: Vec::new(),
        },
    ))
}

/// The merge driver: the result in `ours` and exit 0, or conflict markers (led by the reason)
/// in `ours` and a refusal (git sees a non-zero exit: a conflict).
pub(crate) fn merge_driver(request: &MergeDriverRequest) -> Result<Reply, Refused> {
    let path = request.path.as_deref().unwrap_or(FILE);
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (base, ours, theirs) = match (
        read(&request.base),
        read(&request.ours),
        read(&request.theirs),
    ) {
        (Ok(b), Ok(o), Ok(t)) => (b, o, t),
        (b, o, t) => {
            let why = [b.err(), o.err(), t.err()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>();
            return refuse(
                ErrorSlug::PreconditionFailed,
                format!("The versions of {path} cannot be read: {}.", why.join("; ")),
                "Resolve the conflict by hand (`discern resolve` settles limit conflicts).",
            );
        }
    };
    let base = Some(base.as_str()).filter(|b| !b.is_empty());
    let (content, why) = match settle(base, &ours, &theirs, request) {
        Ok(merged) => (merged, None),
        Err((marked, why)) => (marked, Some(why)),
    };
    if let Err(e) = std::fs::write(&request.ours, &content) {
        let message = format!("The merged {path} cannot be written: {e}.");
        return refuse(
            ErrorSlug::PreconditionFailed,
            message,
            "Resolve the conflict by hand.",
        );
    }
    match why {
        None => ok(format!("{path}: merged by meaning.")),
        Some(why) => refuse(
            ErrorSlug::PreconditionFailed,
            format!("{path} conflicts: {why}."),
            "Resolve it by hand: a loosening is proposed again against the merged limit, for the owner's approval.",
        ),
    }
}

/// The merged text, or the text with conflict markers and why.
fn settle(
    base: Option<&str>,
    ours: &str,
    theirs: &str,
    request: &MergeDriverRequest,
) -> Result<String, (String, String)> {
    let why = match merge_limits(base, ours, theirs) {
        Ok(merged) => return Ok(merged),
        Err(LimitConflict::Limit(why)) => why,
        Err(LimitConflict::NotLimitsOnly) => match textual(request) {
            Ok(merged) => match no_looser(&merged, ours, theirs)
                .and_then(|()| not_crossed(base, ours, theirs))
            {
                Ok(()) => return Ok(merged),
                Err(why) => why,
            },
            Err(_) => "the two sides change more than limit values in the same place".to_owned(),
        },
    };
    let marked = textual(request).unwrap_or_else(|marked| marked);
    Err((format!("# discern: {why}\n{marked}"), why))
}

/// git's own line merge of the three versions: the result, or the text with conflict markers.
fn textual(request: &MergeDriverRequest) -> Result<String, String> {
    let output = crate::git::command()
        .args([
            "merge-file",
            "-p",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
        ])
        .arg(&request.ours)
        .arg(&request.base)
        .arg(&request.theirs)
        .output();
    match output {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => Err(String::from_utf8_lossy(&out.stdout).into_owned()),
        Err(e) => Err(format!("git merge-file cannot run: {e}\n")),
    }
}

/// The merged config holds no limit looser than either side's.
fn no_looser(merged: &str, ours: &str, theirs: &str) -> Result<(), String> {
    let parse =
        |text: &str| Config::parse(text).map_err(|e| format!("the merged file is not valid: {e}"));
    let merged = parse(merged)?;
    for side in [parse(ours)?, parse(theirs)?] {
        for standard in &merged.standards {
            let Some(was) = side
                .standard(&standard.name)
                .filter(|s| s.direction == standard.direction)
            else {
                continue;
            };
            if crate::protected::tighter(standard.direction, was.limit, standard.limit) {
                return Err(format!(
                    "{} would be looser ({}) than on one side ({})",
                    standard.name, standard.limit, was.limit
                ));
            }
        }
    }
    Ok(())
}

/// No Standard one side redefined or deleted has its limit or definition changed by the other:
/// a limit moved under one meaning does not carry over to another.
fn not_crossed(base: Option<&str>, ours: &str, theirs: &str) -> Result<(), String> {
    let Some(base) = base.and_then(|b| Config::parse_tolerant(b).ok()) else {
        return Ok(());
    };
    // A side whose changes cannot be told is a conflict, never "changed nothing".
    let touched = |side: &str| -> Result<Vec<(String, bool)>, String> {
        let side = Config::parse(side)
            .map_err(|e| format!("what one side changed cannot be told ({e})"))?;
        let no_blob = |_: &str| Ok(None);
        let changes = crate::protected::compare(&base, &no_blob, &side, &no_blob)
            .map_err(|e| format!("what one side changed cannot be told ({e})"))?;
        // A Standard a side added is not in the base: nothing of it crosses meanings.
        let redefined = changes
            .protected
            .iter()
            .filter(|c| !c.adds_standard())
            .filter_map(|c| c.standard().map(|s| (s.to_owned(), true)));
        let loosened = changes.loosened.iter().map(|l| (l.standard.clone(), false));
        let tightened = base.standards.iter().filter_map(|b| {
            let after = side.standard(&b.name)?;
            (after.limit != b.limit).then(|| (b.name.clone(), false))
        });
        Ok(redefined.chain(loosened).chain(tightened).collect())
    };
    let (mine, theirs) = (touched(ours)?, touched(theirs)?);
    for (name, redefined) in &mine {
        if let Some((_, other)) = theirs.iter().find(|(n, _)| n == name)
            && (*redefined || *other)
        {
            return Err(format!(
                "{name} is redefined or deleted on one side and changed on the other; its limit cannot be carried across meanings"
            ));
        }
    }
    Ok(())
}

/// `discern resolve`: a conflicted `discern.toml` in this checkout settled by meaning and
/// staged; anything else refused with why.
pub(crate) fn resolve(repo: &Repo) -> Result<Reply, Refused> {
    let stage = |n: u8| {
        repo.git_bytes(&["show", &format!(":{n}:{FILE}")])
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    let (Some(ours), Some(theirs)) = (stage(2), stage(3)) else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!("{FILE} is not in conflict here: there is nothing to resolve."),
            "Run it after a merge (or a forge's merge ref) left discern.toml conflicted.",
        );
    };
    let base = stage(1);
    match merge_limits(base.as_deref(), &ours, &theirs) {
        Ok(merged) => {
            if let Err(e) = std::fs::write(repo.root().join(FILE), &merged)
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    repo.git(&["add", "--", FILE])
                        .map(drop)
                        .map_err(|e| e.to_string())
                })
            {
                return refuse(
                    ErrorSlug::PreconditionFailed,
                    format!("The merged {FILE} cannot be written and staged: {e}."),
                    "Resolve it by hand.",
                );
            }
            ok(format!(
                "{FILE} resolved by meaning and staged; conclude the merge (`git commit`), then measure the merged tree."
            ))
        }
        Err(e) => refuse(
            ErrorSlug::PreconditionFailed,
            format!("{FILE} cannot be settled by meaning: {e}."),
            "Resolve it by hand; a loosening is proposed again against the merged limit, for the owner's approval.",
        ),
    }
}
