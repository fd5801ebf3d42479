//! The thin loop that owns the terminal: draw the state, read a key (or, after two idle
//! seconds, observe the fleet again), carry out the effect the state machine returned. A
//! command runs with the terminal given back (a prompt it asks is answered as on the CLI),
//! then its result is shown on the desk.

use std::path::Path;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use discern::result::{Envelope, ErrorSlug, Hint, HintId};
use discern::workspace::{Settings, Workspace};

use super::board::{self, Board};
use super::command::{Command, human};
use super::state::{Desk, Effect, Key};
use super::{VERB, inspect, view};

/// How long the desk waits for a key before it reads the fleet again.
const REFRESH: Duration = Duration::from_secs(2);

type Refused = Box<Envelope>;

fn failed(message: String) -> Refused {
    Box::new(Envelope::refusal(
        VERB,
        ErrorSlug::CannotTell,
        message,
        Hint::next_step(
            HintId::CheckRepository,
            "Fix what is named, then open the desk again.",
        ),
    ))
}

fn outside(message: String) -> Refused {
    Box::new(Envelope::refusal(
        VERB,
        ErrorSlug::WrongCheckout,
        message,
        Hint::next_step(
            HintId::RunFromRepository,
            "Run discern from inside a git work tree.",
        ),
    ))
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
    let root = ws.repo.root().to_owned();
    let mut desk = Desk::new(board);
    let mut terminal = ratatui::init();
    let ended = loop {
        if let Err(e) = terminal.draw(|frame| view::render(frame, &desk)) {
            break Err(e);
        }
        let key = match event::poll(REFRESH) {
            Ok(true) => match event::read() {
                Ok(Event::Key(k)) if k.kind == KeyEventKind::Press => key(k.code, k.modifiers),
                Ok(_) => None,
                Err(e) => break Err(e),
            },
            Ok(false) => {
                if desk.screen == super::state::Screen::List {
                    refresh(&ws, &mut desk);
                }
                None
            }
            Err(e) => break Err(e),
        };
        let Some(key) = key else { continue };
        match desk.key(key) {
            Effect::None => {}
            Effect::Quit => break Ok(()),
            Effect::Refresh => refresh(&ws, &mut desk),
            Effect::Inspect(item) => {
                let lines = inspect::inspect(&item, (&root, &desk.board.trunk.clone()), settings);
                desk.show(format!("Inspect {}", item.id), lines);
            }
            Effect::Preview(item, preview) => {
                let listed = preview.run(settings, &root);
                let head = listed.data.as_ref().and_then(|d| d["head"].as_str());
                match (listed.ok, head) {
                    (true, Some(head)) if !item.awaiting.is_empty() => {
                        let sign = Command::new("approve", &["--effort", &item.id, "--head", head]);
                        desk.approving(&item, human(&listed), sign);
                    }
                    _ => desk.ran(&preview, human(&listed)),
                }
            }
            Effect::Run(command) => {
                // On the terminal as given back: a prompt the verb asks is answered as on the CLI.
                ratatui::restore();
                println!("$ {}", command.line());
                let envelope = command.run(settings, &root);
                if let Err(e) = resume(&mut terminal) {
                    break Err(e);
                }
                desk.ran(&command, human(&envelope));
                refresh(&ws, &mut desk);
            }
            Effect::Shell(path) => {
                ratatui::restore();
                shell(&path);
                if let Err(e) = resume(&mut terminal) {
                    break Err(e);
                }
                refresh(&ws, &mut desk);
            }
        }
    };
    ratatui::restore();
    ended
        .map(|()| 0)
        .map_err(|e| failed(format!("the terminal failed: {e}")))
}

/// Take the terminal back after a command or a shell had it: raw mode, the alternate screen,
/// a full redraw.
fn resume(terminal: &mut ratatui::DefaultTerminal) -> std::io::Result<()> {
    use ratatui::crossterm::{execute, terminal as term};
    term::enable_raw_mode()?;
    execute!(std::io::stdout(), term::EnterAlternateScreen)?;
    terminal.clear()
}

fn refresh(ws: &Workspace, desk: &mut Desk) {
    match observed(ws) {
        Ok(board) => desk.refresh(board),
        Err(why) => desk.note = Some(format!("The fleet cannot be read: {why}")),
    }
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

/// A crossterm key as the desk reads it; Ctrl-C is Esc (raw mode catches it): it cancels a
/// confirmation, and quits from the list.
fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Key> {
    if modifiers.contains(KeyModifiers::CONTROL) && code == KeyCode::Char('c') {
        return Some(Key::Esc);
    }
    Some(match code {
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Char(c) => Key::Char(c),
        _ => return None,
    })
}
