//! The desk without a terminal: the grouping of an observation, the state machine's
//! transitions, and frames drawn through ratatui's `TestBackend` at 80×24 and 160×48.

use std::path::PathBuf;

use discern::status::observation::{
    ApprovalFacts, Collision, FleetRow, GitCount, GitFacts, Location, Observation, ProofFacts,
    ProofState,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::board::{Act, Group, board};
use super::state::{Desk, Effect, Key, Screen};
use super::view;

fn row(id: &str, ahead: u64, behind: u64, proof: ProofState) -> FleetRow {
    FleetRow {
        path: format!("/work/app.efforts/{id}"),
        branch: Some(format!("agent/{id}")),
        clean: Some(true),
        changed_files: Some(0),
        ahead: Some(GitCount::Known(ahead)),
        behind: Some(GitCount::Known(behind)),
        id: id.to_owned(),
        proof: Some(proof),
        proof_line: (proof == ProofState::Honored)
            .then(|| format!("Proof: {id} at 1a2b3c4d5e6f passed 2 Standards")),
        ..FleetRow::default()
    }
}

/// A fleet of four efforts, one per group, and a branch without a worktree.
fn observation() -> Observation {
    let main = FleetRow {
        is_main: true,
        is_current: true,
        id: "main".to_owned(),
        path: "/work/app".to_owned(),
        branch: Some("main".to_owned()),
        proof: None,
        proof_line: None,
        ..row("main", 0, 0, ProofState::Missing)
    };
    let gated = FleetRow {
        awaiting_approval: vec![
            "limit todo 5 → 6 (loosened): The new module lists four planned extension points."
                .to_owned(),
        ],
        ..row("gated", 1, 0, ProofState::Honored)
    };
    let lagging = FleetRow {
        collisions: vec![Collision {
            effort: "ready".to_owned(),
            files: 1,
            paths: vec!["src/lib.rs".to_owned()],
        }],
        ..row("lagging", 2, 1, ProofState::Stale)
    };
    let fresh = FleetRow {
        clean: Some(false),
        changed_files: Some(1),
        ..row("fresh", 0, 0, ProofState::Missing)
    };
    Observation {
        location: Location::Main,
        root: PathBuf::from("/work/app"),
        git: GitFacts {
            branch: Some("main".to_owned()),
            trunk: "main".to_owned(),
            clean: Some(true),
            changed_files: Some(0),
            ahead_trunk: None,
            behind_trunk: None,
        },
        proof: ProofFacts {
            status: ProofState::Missing,
            line: None,
            commit: None,
        },
        standards: vec!["todo".to_owned()],
        proposals: Vec::new(),
        proposals_unreadable: None,
        fleet_unreadable: None,
        unpushed_refs: Vec::new(),
        approval: ApprovalFacts {
            policy: "signed",
            note: "only a signature by a key in .discern/allowed_signers approves".to_owned(),
        },
        task: None,
        setup: None,
        fleet: vec![
            main,
            fresh,
            lagging,
            gated,
            row("ready", 1, 0, ProofState::Honored),
        ],
        unlanded_branches: vec!["agent/orphan".to_owned()],
    }
}

fn desk() -> Desk {
    Desk::new(board(&observation()))
}

/// The frame as text, each line's trailing blanks cut.
fn frame(desk: &Desk, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|f| view::render(f, desk))
        .expect("the frame draws");
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            let line: String = (0..width).map(|x| buffer[(x, y)].symbol()).collect();
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn snapshots(name: &str, desk: &Desk) {
    insta::assert_snapshot!(format!("{name}_80x24"), frame(desk, 80, 24));
    insta::assert_snapshot!(format!("{name}_160x48"), frame(desk, 160, 48));
}

#[test]
fn efforts_are_grouped_in_decision_order_each_with_only_its_actions() {
    let board = board(&observation());
    let groups: Vec<(&str, Group)> = board
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.group))
        .collect();
    assert_eq!(
        groups,
        [
            ("ready", Group::Ready),
            ("gated", Group::Approval),
            ("agent/orphan", Group::Attention),
            ("lagging", Group::Attention),
            ("fresh", Group::Working),
        ]
    );
    let acts = |id: &str| {
        board
            .items
            .iter()
            .find(|i| i.id == id)
            .map(|i| i.acts.clone())
    };
    use Act::*;
    assert_eq!(acts("ready"), Some(vec![Inspect, Land, Abandon, Shell]));
    assert_eq!(acts("gated"), Some(vec![Inspect, Approve, Abandon, Shell]));
    assert_eq!(acts("lagging"), Some(vec![Inspect, Update, Abandon, Shell]));
    assert_eq!(acts("agent/orphan"), Some(vec![Inspect, Abandon]));
    assert_eq!(acts("fresh"), Some(vec![Inspect, Abandon, Shell]));
}

#[test]
fn the_grouped_list() {
    snapshots("list", &desk());
}

#[test]
fn help() {
    let mut desk = desk();
    assert_eq!(desk.key(Key::Char('?')), Effect::None);
    snapshots("help", &desk);
    assert_eq!(desk.key(Key::Char('x')), Effect::None);
    assert_eq!(desk.screen, Screen::List, "any key returns from help");
}

#[test]
fn inspect_shows_what_it_gathered() {
    let mut desk = desk();
    let Effect::Inspect(item) = desk.key(Key::Enter) else {
        panic!("enter inspects");
    };
    assert_eq!(item.id, "ready");
    let lines = [
        "ready: clean, 1 ahead, 0 behind, Proof honored",
        "Proof: ready at 1a2b3c4d5e6f passed 2 Standards",
        "",
        "Commits (git log --oneline main..agent/ready):",
        "  1a2b3c4 add ready",
        "Diffstat (git diff --stat main...agent/ready):",
        "   src/ready.rs | 1 +",
        "   1 file changed, 1 insertion(+)",
    ];
    desk.show(
        "Inspect ready".to_owned(),
        lines.iter().map(|l| (*l).to_owned()).collect(),
    );
    snapshots("inspect", &desk);
    assert_eq!(
        desk.key(Key::Esc),
        Effect::Refresh,
        "back to the list, read again"
    );
}

#[test]
fn approving_shows_the_items_then_signs_exactly_them_on_y() {
    let mut desk = desk();
    desk.key(Key::Down);
    let Effect::Preview(item, preview) = desk.key(Key::Char('a')) else {
        panic!("a previews the approval");
    };
    assert_eq!(preview.line(), "discern approve --effort gated --dry-run");
    let sign =
        super::command::Command::new("approve", &["--effort", "gated", "--head", "0123abcd"]);
    let listing = vec![
        "Awaiting the owner's approval on agent/gated (signed):".to_owned(),
        "  limit todo 5 → 6 (loosened): The new module lists four planned extension points."
            .to_owned(),
    ];
    desk.approving(&item, listing, sign.clone());
    snapshots("approve", &desk);
    assert_eq!(desk.key(Key::Char('y')), Effect::Run(sign));
}

#[test]
fn landing_asks_for_a_keystroke_and_any_other_key_cancels() {
    let mut desk = desk();
    assert_eq!(desk.key(Key::Char('l')), Effect::None);
    let Screen::Confirm { command, .. } = &desk.screen else {
        panic!("land asks first");
    };
    assert_eq!(command.line(), "discern accept --effort ready --confirmed");
    assert_eq!(desk.key(Key::Char('n')), Effect::None);
    assert_eq!(desk.screen, Screen::List);
    assert!(
        desk.note
            .as_deref()
            .is_some_and(|n| n.starts_with("Cancelled"))
    );
    desk.key(Key::Char('l'));
    assert!(matches!(desk.key(Key::Char('y')), Effect::Run(c) if c.verb == "accept"));
}

#[test]
fn an_action_the_state_does_not_allow_is_refused_with_a_note() {
    let mut desk = desk();
    assert_eq!(
        desk.key(Key::Char('a')),
        Effect::None,
        "ready awaits no approval"
    );
    assert!(
        desk.note
            .as_deref()
            .is_some_and(|n| n.contains("approve is not open"))
    );
    assert_eq!(desk.screen, Screen::List);
}

#[test]
fn abandoning_unlanded_work_takes_the_name_typed_back() {
    let mut desk = desk();
    desk.key(Key::Down);
    desk.key(Key::Down);
    desk.key(Key::Down);
    assert_eq!(desk.item().map(|i| i.id.as_str()), Some("lagging"));
    desk.key(Key::Char('x'));
    for c in "lag".chars() {
        desk.key(Key::Char(c));
    }
    assert_eq!(
        desk.key(Key::Enter),
        Effect::None,
        "a wrong name abandons nothing"
    );
    assert!(
        desk.note
            .as_deref()
            .is_some_and(|n| n.contains("nothing was abandoned"))
    );
    desk.key(Key::Char('x'));
    for c in "lagging".chars() {
        desk.key(Key::Char(c));
    }
    let Effect::Run(command) = desk.key(Key::Enter) else {
        panic!("the typed name runs it");
    };
    assert_eq!(command.line(), "discern abandon lagging --force");
}

#[test]
fn update_runs_in_the_efforts_worktree() {
    let mut desk = desk();
    desk.refresh(board(&observation()));
    desk.key(Key::Down);
    desk.key(Key::Down);
    desk.key(Key::Down);
    desk.key(Key::Char('u'));
    let Effect::Run(command) = desk.key(Key::Char('y')) else {
        panic!("y runs update");
    };
    assert_eq!(
        command.line(),
        "discern -C /work/app.efforts/lagging update"
    );
}

#[test]
fn the_selection_follows_its_effort_across_a_refresh_and_keys_stay_in_bounds() {
    let mut desk = desk();
    for _ in 0..10 {
        desk.key(Key::Char('j'));
    }
    assert_eq!(desk.item().map(|i| i.id.as_str()), Some("fresh"));
    let mut fewer = observation();
    fewer.fleet.retain(|r| r.id != "ready");
    desk.refresh(board(&fewer));
    assert_eq!(desk.item().map(|i| i.id.as_str()), Some("fresh"));
    assert_eq!(desk.key(Key::Char('q')), Effect::Quit);
}

#[test]
fn the_selected_efforts_detail_says_why_it_needs_attention() {
    let mut desk = desk();
    for _ in 0..3 {
        desk.key(Key::Down);
    }
    insta::assert_snapshot!("list_attention_80x24", frame(&desk, 80, 24));
}

#[test]
fn a_long_fleet_scrolls_so_the_selection_stays_on_screen() {
    let mut many = observation();
    many.fleet
        .extend((0..30).map(|i| row(&format!("e{i:02}"), 0, 0, ProofState::Missing)));
    let mut desk = Desk::new(board(&many));
    for _ in 0..40 {
        desk.key(Key::Char('j'));
    }
    let last = desk.item().map(|i| i.id.clone()).unwrap_or_default();
    assert!(
        frame(&desk, 80, 24).contains(&format!("> {last}")),
        "{last}"
    );
}
