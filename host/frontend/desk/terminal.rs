//! The thin loop that owns the terminal: draw the state, read a key (or, after two idle
//! seconds, observe the fleet again), carry out the effect the state machine returned. A
//! command runs with the terminal given back (a prompt it asks is answered as on the CLI),
//! then its result is shown on the desk.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use discern::result::{ErrorSlug, Hint, HintId, Refused};
use discern::workspace::{Settings, Workspace};

use super::board::{self, Board};
use super::command::{Command, human};
use super::state::{Desk, Effect, Key, Screen};
use super::{inspect, view};

/// How long the desk waits for a key before it reads the fleet again.
const REFRESH: Duration = Duration::from_secs(2);

fn failed(message: String) -> Refused {
    Refused::new(
        ErrorSlug::CannotTell,
        message,
        Hint::next_step(
            HintId::CheckRepository,
            "Fix what is named, then open the desk again.",
        ),
    )
}

fn outside(message: String) -> Refused {
    Refused::new(
        ErrorSlug::WrongCheckout,
        message,
        Hint::next_step(
            HintId::RunFromRepository,
            "Run discern from inside a git work tree.",
        ),
    )
}

/// The fleet as `status` observes it, as a board.
fn observed(ws: &Workspace) -> Result<Board, String> {
    discern::status::observe::observe(ws, true)
        .map(|o| board::board(&o))
        .map_err(|e| e.to_string())
}

pub fn run(dir: &Path, settings: &Settings) -> Result<i32, Refused> {
    let ws = Workspace::open(dir, settings.clone()).map_err(|e| outside(e.to_string()))?;
    let board = observed(&ws).map_err(failed)?;
    let mut session = Session {
        root: ws.repo.root().to_owned(),
        ws: &ws,
        settings,
        desk: Desk::new(board),
        terminal: ratatui::init(),
    };
    let ended = session.serve();
    ratatui::restore();
    ended
        .map(|()| 0)
        .map_err(|e| failed(format!("the terminal failed: {e}")))
}

/// What the loop does after a key's effect.
enum Flow {
    Go,
    Quit,
}

/// The desk on its terminal, in its repository.
struct Session<'a> {
    ws: &'a Workspace,
    settings: &'a Settings,
    root: PathBuf,
    desk: Desk,
    terminal: ratatui::DefaultTerminal,
}

impl Session<'_> {
    /// Draw, read keys (or refresh after two idle seconds), carry out their effects, until
    /// the owner quits.
    fn serve(&mut self) -> std::io::Result<()> {
        loop {
            self.terminal
                .draw(|frame| view::render(frame, &self.desk))?;
            if !event::poll(REFRESH)? {
                if self.desk.screen == Screen::List {
                    self.refresh();
                }
                continue;
            }
            let Event::Key(k) = event::read()? else {
                continue;
            };
            if k.kind != KeyEventKind::Press {
                continue;
            }
            for key in keys(k.code, k.modifiers) {
                let effect = self.desk.key(key);
                if let Flow::Quit = self.carry(effect)? {
                    return Ok(());
                }
            }
        }
    }

    fn carry(&mut self, effect: Effect) -> std::io::Result<Flow> {
        let (settings, root) = (self.settings, self.root.as_path());
        match effect {
            Effect::None => {}
            Effect::Quit => return Ok(Flow::Quit),
            Effect::Refresh => self.refresh(),
            Effect::Inspect(item) => {
                let trunk = self.desk.board.trunk.clone();
                let lines = inspect::inspect(&item, (root, &trunk), settings);
                self.desk.show(format!("Inspect {}", item.id), lines);
            }
            Effect::Preview(item, preview) => {
                let listed = preview.run(settings, root);
                let head = listed.data.as_ref().and_then(|d| d["head"].as_str());
                match (listed.ok, head) {
                    (true, Some(head)) if !item.awaiting.is_empty() => {
                        let sign = Command::new("approve", &["--effort", &item.id, "--head", head]);
                        self.desk.approving(&item, human(&listed), sign);
                    }
                    _ => self.desk.ran(&preview, human(&listed)),
                }
            }
            Effect::Run(command) => {
                // On the terminal as given back: a prompt the verb asks is answered as on the CLI.
                ratatui::restore();
                println!("$ {}", command.line());
                let envelope = command.run(settings, root);
                resume(&mut self.terminal)?;
                self.desk.ran(&command, human(&envelope));
                self.refresh();
            }
            Effect::Shell(path) => {
                ratatui::restore();
                shell(&path);
                resume(&mut self.terminal)?;
                self.refresh();
            }
        }
        Ok(Flow::Go)
    }

    fn refresh(&mut self) {
        match observed(self.ws) {
            Ok(board) => self.desk.refresh(board),
            Err(why) => self.desk.note = Some(format!("The fleet cannot be read: {why}")),
        }
    }
}

/// Take the terminal back after a command or a shell had it: raw mode, the alternate screen,
/// a full redraw.
fn resume(terminal: &mut ratatui::DefaultTerminal) -> std::io::Result<()> {
    use ratatui::crossterm::{execute, terminal as term};
    term::enable_raw_mode()?;
    execute!(std::io::stdout(), term::EnterAlternateScreen)?;
    terminal.clear()
}

/// `$SHELL` (else `sh`) in `path`, on the restored terminal, until it exits.
fn shell(path: &Path) {
    let program = std::env::var_os("SHELL")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "sh".into());
    println!("{}: exit the shell to return to the desk.", path.display());
    let status = std::process::Command::new(&program)
        .current_dir(path)
        .status();
    if let Err(e) = status {
        eprintln!("cannot start {}: {e}", program.to_string_lossy());
    }
}

/// A crossterm key as the desk reads it. Ctrl-C is Esc (raw mode catches it): it cancels a
/// confirmation, and quits from the list. Alt with a key is what a terminal sends for Esc
/// typed just before that key: both, in order.
fn keys(code: KeyCode, modifiers: KeyModifiers) -> Vec<Key> {
    if modifiers.contains(KeyModifiers::CONTROL) && code == KeyCode::Char('c') {
        return vec![Key::Esc];
    }
    let key = match code {
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Char(c) => Key::Char(c),
        _ => return Vec::new(),
    };
    match modifiers.contains(KeyModifiers::ALT) {
        true => vec![Key::Esc, key],
        false => vec![key],
    }
}
