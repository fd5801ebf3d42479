//! The desk as a pure state machine: a key and the state give the next state and the one
//! effect the terminal loop carries out (run a command, open a shell, inspect, quit). Nothing
//! here touches a terminal or a repository, so every transition is a unit test.

use std::path::PathBuf;

use super::board::{Act, Board, Item};
use super::command::Command;

/// A key as the desk reads it (the terminal loop translates crossterm's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Up,
    Down,
    Enter,
    Esc,
    Backspace,
    Char(char),
}

/// Consent typed back: the effort's name, for discarding work the trunk lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed {
    pub expected: String,
    pub typed: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    List,
    Help,
    /// Text to read: an inspection, or a command and its result.
    Text {
        title: String,
        lines: Vec<String>,
        scroll: usize,
    },
    /// A command shown before it runs, waiting for the owner's keystroke (or typed name).
    Confirm {
        title: String,
        lines: Vec<String>,
        command: Command,
        typed: Option<Typed>,
    },
}

/// What the terminal loop does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    None,
    Quit,
    Refresh,
    /// Gather and show what the item is: commits, diffstat, Standards, Proof.
    Inspect(Item),
    /// Run this read-only command and ask to confirm the approval it lists (`approve
    /// --dry-run`), then sign exactly what it showed.
    Preview(Item, Command),
    Run(Command),
    Shell(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desk {
    pub board: Board,
    pub selected: usize,
    pub screen: Screen,
    /// One line under the list: what the last key did or why it did nothing.
    pub note: Option<String>,
}

impl Desk {
    pub fn new(board: Board) -> Self {
        Self {
            board,
            selected: 0,
            screen: Screen::List,
            note: None,
        }
    }

    pub fn item(&self) -> Option<&Item> {
        self.board.items.get(self.selected)
    }

    /// A fresh board; the selection follows its effort when it is still there.
    pub fn refresh(&mut self, board: Board) {
        let id = self.item().map(|i| i.id.clone());
        self.board = board;
        let found = id.and_then(|id| self.board.items.iter().position(|i| i.id == id));
        let last = self.board.items.len().saturating_sub(1);
        self.selected = found.unwrap_or(self.selected.min(last));
    }

    /// Show text (an inspection, a result) until a key returns to the list.
    pub fn show(&mut self, title: String, lines: Vec<String>) {
        self.screen = Screen::Text {
            title,
            lines,
            scroll: 0,
        };
    }

    /// What `command` did, under the command line itself.
    pub fn ran(&mut self, command: &Command, result: Vec<String>) {
        let mut lines = vec![format!("$ {}", command.line()), String::new()];
        lines.extend(result);
        self.show(format!("Ran: {}", command.verb), lines);
    }

    /// The approval listed by its dry run (`listing`), ready to sign with `command`.
    pub fn approving(&mut self, item: &Item, listing: Vec<String>, command: Command) {
        let mut lines = vec![
            format!("What awaits the owner's approval on {}:", item.id),
            String::new(),
        ];
        lines.extend(listing);
        lines.push(String::new());
        lines.push(format!("It runs: {}", command.line()));
        lines.push("Press y to approve exactly this; any other key cancels.".to_owned());
        self.screen = Screen::Confirm {
            title: format!("Approve {}", item.id),
            lines,
            command,
            typed: None,
        };
    }

    pub fn key(&mut self, key: Key) -> Effect {
        match &mut self.screen {
            Screen::List => self.on_list(key),
            Screen::Help => {
                self.screen = Screen::List;
                Effect::None
            }
            Screen::Text { lines, scroll, .. } => match key {
                Key::Up | Key::Char('k') => {
                    *scroll = scroll.saturating_sub(1);
                    Effect::None
                }
                Key::Down | Key::Char('j') => {
                    *scroll = (*scroll + 1).min(lines.len().saturating_sub(1));
                    Effect::None
                }
                _ => {
                    self.screen = Screen::List;
                    Effect::Refresh
                }
            },
            Screen::Confirm { .. } => self.on_confirm(key),
        }
    }

    fn on_list(&mut self, key: Key) -> Effect {
        self.note = None;
        let count = self.board.items.len();
        match key {
            Key::Up | Key::Char('k') => self.selected = self.selected.saturating_sub(1),
            Key::Down | Key::Char('j') => {
                self.selected = (self.selected + 1).min(count.saturating_sub(1));
            }
            Key::Char('q') | Key::Esc => return Effect::Quit,
            Key::Char('?') => self.screen = Screen::Help,
            Key::Char('r') => return Effect::Refresh,
            Key::Enter => return self.act(Act::Inspect),
            Key::Char(c) => {
                let act = [
                    Act::Inspect,
                    Act::Approve,
                    Act::Land,
                    Act::Update,
                    Act::Abandon,
                    Act::Shell,
                ]
                .into_iter()
                .find(|a| a.key().0 == c);
                if let Some(act) = act {
                    return self.act(act);
                }
            }
            Key::Backspace => {}
        }
        Effect::None
    }

    /// The action `act` on the selected effort, when its state allows it.
    fn act(&mut self, act: Act) -> Effect {
        let Some(item) = self.item().cloned() else {
            self.note = Some("No effort to act on.".to_owned());
            return Effect::None;
        };
        if !item.acts.contains(&act) {
            let name = act.key().1;
            self.note = Some(format!(
                "{}: {name} is not open to it in this state.",
                item.id
            ));
            return Effect::None;
        }
        match act {
            Act::Inspect => Effect::Inspect(item),
            Act::Shell => match &item.path {
                Some(path) => Effect::Shell(PathBuf::from(path)),
                None => Effect::None,
            },
            Act::Approve => {
                let preview = Command::new("approve", &["--effort", &item.id, "--dry-run"]);
                Effect::Preview(item, preview)
            }
            Act::Land => {
                let command = Command::new("accept", &["--effort", &item.id, "--confirmed"]);
                let mut lines = vec![
                    format!("{}: {}", item.id, item.state),
                    item.proof_line.clone().unwrap_or_default(),
                ];
                lines.push(format!("Land it on {}?", self.board.trunk));
                self.confirm(format!("Land {}", item.id), lines, command, None);
                Effect::None
            }
            Act::Update => {
                let Some(path) = &item.path else {
                    return Effect::None;
                };
                let command = Command::new("update", &[]).within(path);
                let lines = vec![format!(
                    "Merge {} into {}; a conflict aborts and changes nothing.",
                    self.board.trunk, item.id
                )];
                self.confirm(format!("Update {}", item.id), lines, command, None);
                Effect::None
            }
            Act::Abandon => {
                self.abandon(&item);
                Effect::None
            }
        }
    }

    fn abandon(&mut self, item: &Item) {
        let title = format!("Abandon {}", item.id);
        if !item.unlanded {
            let command = Command::new("abandon", &[&item.id]);
            let lines = vec![format!(
                "Remove {}'s worktree and branch (nothing the trunk lacks is lost).",
                item.id
            )];
            return self.confirm(title, lines, command, None);
        }
        let command = Command::new("abandon", &[&item.id, "--force"]);
        let lines = vec![
            format!(
                "{} holds work the trunk lacks ({}); abandoning it discards that work.",
                item.id, item.state
            ),
            format!(
                "Type its name, {}, then enter to discard it; Esc cancels.",
                item.id
            ),
        ];
        let typed = Typed {
            expected: item.id.clone(),
            typed: String::new(),
        };
        self.confirm(title, lines, command, Some(typed));
    }

    fn confirm(
        &mut self,
        title: String,
        mut lines: Vec<String>,
        command: Command,
        typed: Option<Typed>,
    ) {
        lines.retain(|l| !l.is_empty());
        lines.push(String::new());
        lines.push(format!("It runs: {}", command.line()));
        if typed.is_none() {
            lines.push("Press y to run it; any other key cancels.".to_owned());
        }
        self.screen = Screen::Confirm {
            title,
            lines,
            command,
            typed,
        };
    }

    fn on_confirm(&mut self, key: Key) -> Effect {
        let Screen::Confirm { command, typed, .. } = &mut self.screen else {
            return Effect::None;
        };
        let command = command.clone();
        let Some(typed) = typed else {
            self.screen = Screen::List;
            if key == Key::Char('y') {
                return Effect::Run(command);
            }
            self.note = Some(format!("Cancelled: {}", command.line()));
            return Effect::None;
        };
        match key {
            Key::Char(c) => typed.typed.push(c),
            Key::Backspace => {
                typed.typed.pop();
            }
            Key::Enter if typed.typed == typed.expected => {
                self.screen = Screen::List;
                return Effect::Run(command);
            }
            Key::Enter => {
                let note = format!(
                    "{:?} is not {}: nothing was abandoned.",
                    typed.typed, typed.expected
                );
                self.screen = Screen::List;
                self.note = Some(note);
            }
            _ => {
                self.screen = Screen::List;
                self.note = Some(format!("Cancelled: {}", command.line()));
            }
        }
        Effect::None
    }
}
