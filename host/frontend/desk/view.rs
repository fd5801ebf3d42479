//! The desk drawn from its state alone: a pure function of [`Desk`] onto a ratatui frame.
//! Readable without colour: the selection is marked with `>` (and reversed), groups by their
//! titles, and every screen names the keys it takes.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};

use super::board::{Group, Item};
use super::state::{Desk, Screen};

pub const HELP: &[&str] = &[
    "The owner's desk: every effort, grouped for deciding.",
    "",
    "  up/down, k/j   choose an effort",
    "  enter, i       inspect: commits, diffstat, Standards, Proof",
    "  a              approve: its items and reasons, then sign",
    "  l              land it (discern accept)",
    "  u              update it from the trunk",
    "  x              abandon it (its name typed back if it holds work)",
    "  s              open a shell in its worktree (exit returns here)",
    "  r              read the fleet again (it also refreshes by itself)",
    "  ?              this help",
    "  q, esc         quit",
    "",
    "Each action shows the discern command it runs before running it;",
    "only the actions an effort's state allows are offered.",
    "",
    "Press any key to return.",
];

pub fn render(frame: &mut Frame, desk: &Desk) {
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(2),
    ])
    .areas(frame.area());
    let title = format!(
        "discern desk · trunk {} · {} effort(s)",
        desk.board.trunk,
        desk.board.items.len()
    );
    frame.render_widget(Paragraph::new(title), header);
    match &desk.screen {
        Screen::List => list(frame, body, desk),
        Screen::Help => text(frame, body, "Help", &owned(HELP), 0),
        Screen::Text {
            title,
            lines,
            scroll,
        } => text(frame, body, title, lines, *scroll),
        Screen::Confirm {
            title,
            lines,
            typed,
            ..
        } => {
            let mut lines = lines.clone();
            if let Some(typed) = typed {
                lines.push(format!("Name: {}_", typed.typed));
            }
            text(frame, body, title, &lines, 0);
        }
    }
    frame.render_widget(Paragraph::new(keys(desk)), footer);
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| (*l).to_owned()).collect()
}

/// The footer: the note of the last key, then the keys this screen takes.
fn keys(desk: &Desk) -> Vec<Line<'static>> {
    let keys = match &desk.screen {
        Screen::List => {
            let mut keys: Vec<String> = desk.item().map_or_else(Vec::new, |item| {
                item.acts
                    .iter()
                    .map(|a| {
                        let (key, name) = a.key();
                        format!("{key} {name}")
                    })
                    .collect()
            });
            keys.extend(["? help".to_owned(), "q quit".to_owned()]);
            keys.join(" · ")
        }
        Screen::Help => "any key returns".to_owned(),
        Screen::Text { .. } => "up/down scroll · any other key returns".to_owned(),
        Screen::Confirm { typed: Some(_), .. } => {
            "type the name · enter confirms · esc cancels".to_owned()
        }
        Screen::Confirm { typed: None, .. } => "y runs it · any other key cancels".to_owned(),
    };
    vec![
        Line::from(desk.note.clone().unwrap_or_default()),
        Line::from(keys),
    ]
}

fn text(frame: &mut Frame, area: Rect, title: &str, lines: &[String], scroll: usize) {
    let lines: Vec<Line> = lines.iter().map(|l| Line::from(l.clone())).collect();
    let paragraph = Paragraph::new(lines)
        .block(Block::bordered().title(format!(" {title} ")))
        .wrap(Wrap { trim: false })
        .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0));
    frame.render_widget(paragraph, area);
}

/// The grouped list above, as tall as its rows (the detail keeps at least five lines), the
/// selected effort's detail in the rest.
fn list(frame: &mut Frame, area: Rect, desk: &Desk) {
    let (lines, at) = grouped(desk);
    let rows = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let list_height = rows.min(area.height.saturating_sub(5)).max(3);
    let [top, bottom] =
        Layout::vertical([Constraint::Length(list_height), Constraint::Min(3)]).areas(area);
    let visible = usize::from(top.height.saturating_sub(2)).max(1);
    let offset = at.saturating_sub(visible - 1);
    let paragraph = Paragraph::new(lines)
        .block(Block::bordered().title(" Efforts "))
        .scroll((u16::try_from(offset).unwrap_or(u16::MAX), 0));
    frame.render_widget(paragraph, top);
    let title = desk
        .item()
        .map_or_else(|| " Detail ".to_owned(), |i| format!(" {} ", i.id));
    let detail_lines = desk.item().map(detail).unwrap_or_default();
    let detail = Paragraph::new(detail_lines.into_iter().map(Line::from).collect::<Vec<_>>())
        .block(Block::bordered().title(title))
        .wrap(Wrap { trim: false });
    frame.render_widget(detail, bottom);
}

/// Every group's title and rows, and the line the selection is on.
fn grouped(desk: &Desk) -> (Vec<Line<'static>>, usize) {
    let mut lines = Vec::new();
    let mut at = 0;
    let width = desk
        .board
        .items
        .iter()
        .map(|i| i.id.len())
        .max()
        .unwrap_or(0);
    for problem in &desk.board.problems {
        lines.push(Line::from(format!("! {problem}")));
    }
    for group in Group::ALL {
        let members: Vec<(usize, &Item)> = desk
            .board
            .items
            .iter()
            .enumerate()
            .filter(|(_, i)| i.group == group)
            .collect();
        lines.push(Line::from(format!("{} ({})", group.title(), members.len())));
        if members.is_empty() {
            lines.push(Line::from("    none"));
        }
        for (index, item) in members {
            let selected = index == desk.selected;
            let mark = if selected { ">" } else { " " };
            let line = Line::from(format!("  {mark} {:width$}  {}", item.id, item.state));
            if selected {
                at = lines.len();
                lines.push(line.style(Style::new().add_modifier(Modifier::REVERSED)));
            } else {
                lines.push(line);
            }
        }
    }
    if desk.board.items.is_empty() {
        lines.push(Line::from(""));
        lines.push(Line::from("No efforts yet: `discern start` makes one."));
    }
    (lines, at)
}

/// What the list says of the selected effort: why it is in its group and what awaits.
fn detail(item: &Item) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(task) = &item.task {
        lines.push(format!("Task: {task}"));
    }
    if let Some(branch) = &item.branch {
        lines.push(format!("Branch: {branch}"));
    }
    lines.extend(item.reasons.iter().map(|r| format!("Attention: {r}")));
    lines.extend(item.awaiting.iter().map(|a| format!("Awaiting: {a}")));
    if let Some(by) = &item.approved_by {
        lines.push(format!("Approved by {by}"));
    }
    lines.extend(item.collisions.iter().map(|c| format!("Same files as {c}")));
    if let Some(running) = &item.running {
        lines.push(format!("Running: {running}"));
    }
    if let Some(proof) = &item.proof_line {
        lines.push(proof.clone());
    }
    lines
}
