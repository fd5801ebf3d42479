//! `discern agents`' result: one line per client's file, what became of it.

use serde::Serialize;

use super::clients::Client;
use super::plan::{Item, Planned, State};
use super::{Mode, VERB};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section};

/// `data` of `discern agents`.
#[derive(Serialize)]
struct AgentsData<'a> {
    command: &'a str,
    found_on_path: Vec<&'static str>,
    files: Vec<FileData<'a>>,
    changed: bool,
}

/// One client's file and what became of it.
#[derive(Serialize)]
struct FileData<'a> {
    client: Option<&'static str>,
    part: &'static str,
    file: &'static str,
    state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
}

pub(crate) fn reply(
    mode: Mode,
    command: &str,
    found: &[Client],
    planned: &[Planned],
) -> Result<Reply, Refused> {
    let files = planned
        .iter()
        .map(|p| FileData {
            client: p.item.client().map(Client::as_str),
            part: p.item.part(),
            file: p.item.file(),
            state: p.state,
            detail: p.detail.as_deref(),
        })
        .collect();
    let changed = planned.iter().any(|p| p.state.changed());
    let data = AgentsData {
        command,
        found_on_path: found.iter().map(|c| c.as_str()).collect(),
        files,
        changed,
    };
    let section = Section {
        title: "Files".to_owned(),
        lines: planned.iter().map(line).collect(),
        table: None,
    };
    let failing: Vec<String> = planned
        .iter()
        .filter(|p| p.state.fails_check())
        .map(|p| format!("{} ({})", p.item.file(), p.state.as_str()))
        .collect();
    match (mode, failing.is_empty()) {
        (Mode::Check, false) => {
            let refusal = Refused::new(
                ErrorSlug::PreconditionFailed,
                format!(
                    "{} file(s) are not as `discern agents` writes them: {}.",
                    failing.len(),
                    failing.join(", ")
                ),
                Hint::next_step(HintId::WireAgents, "Write the entries again")
                    .with_action(Action::new(VERB)),
            );
            let mut refusal = refusal.with_data(data);
            refusal.sections.push(section);
            Err(refusal)
        }
        _ => {
            let mut ok = Reply::new(
                data,
                Report {
                    state: state(mode, changed, found, planned),
                    sections: Vec::new(),
                },
            );
            if mode == Mode::Write && changed {
                ok.hints.push(Hint::next_step(
                    HintId::WireAgents,
                    "Commit the changed files to share them, then restart each client (Codex and Copilot CLI read a project's files once the folder is trusted; Codex runs hooks with `codex_hooks` enabled in its [features])",
                ));
            }
            ok.report.sections.push(section);
            Ok(ok)
        }
    }
}

fn state(mode: Mode, changed: bool, found: &[Client], planned: &[Planned]) -> String {
    let names = |list: &mut dyn Iterator<Item = Client>| {
        list.map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
    };
    let on_path = match found.is_empty() {
        true => "none found on PATH".to_owned(),
        false => format!("found on PATH: {}", names(&mut found.iter().copied())),
    };
    let clients = names(&mut planned.iter().filter_map(|p| match p.item {
        Item::Client(client) => Some(client),
        _ => None,
    }));
    match (mode, changed) {
        (Mode::Write, true) => format!("discern is wired into {clients} ({on_path})."),
        (Mode::Write, false) => {
            format!("Nothing changed: {clients} already start discern ({on_path}).")
        }
        (Mode::Check, _) => format!("Every entry is current: {clients}."),
        (Mode::Remove, true) if clients.is_empty() => {
            "discern's guidance is out of AGENTS.md.".to_owned()
        }
        (Mode::Remove, true) => format!("discern's entries are out of {clients}."),
        (Mode::Remove, false) => {
            "Nothing to remove: no client file holds discern's entry.".to_owned()
        }
    }
}

fn line(planned: &Planned) -> String {
    let detail = planned
        .detail
        .as_deref()
        .map_or_else(String::new, |d| format!(": {d}"));
    format!(
        "{:<9} {} ({}){detail}",
        planned.state.as_str(),
        planned.item.file(),
        planned.item.label()
    )
}

#[cfg(test)]
mod tests {
    use super::super::plan::State;

    #[test]
    fn a_state_is_spelled_as_its_wire_name() {
        for state in [State::Created, State::NotWired, State::Drifted] {
            let wire = serde_json::to_value(state).unwrap();
            assert_eq!(wire.as_str().unwrap().replace('_', " "), state.as_str());
        }
    }
}
