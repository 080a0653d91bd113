//! The online event loop of the terminal UI: a race, its lobby, its
//! results, or watching, until the player leaves.
//!
//! [`run`] takes where to draw (a [`Screen`]: the real terminal, or a
//! test's `TestBackend`) and the stream of terminal events, so tests drive
//! the very loop `patience` runs. It selects the session's next message,
//! the next key or click, and a 250 ms tick that keeps the clocks moving;
//! [`Session::recv`] and [`Session::send`] are cancel-safe, and the
//! reconnection runs in the session's own task, so a drop is mended while
//! the screen goes on ticking, with no key pressed. [`finish`] does what
//! the loop ended with (leave, close, report) once the screen is restored.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use patience_shared::protocol::{ClientMessage, Phase, ServerMessage};
use ratatui::crossterm::event::Event;
use tokio::sync::mpsc;

use super::draw::{draw_online, race_board_area};
use super::input::{Action, Ui};
use super::terminal::{Screen, TerminalGuard, terminal_events};
use crate::net::NetError;
use crate::session::Session;

/// How often the screen is redrawn with nothing happening: the race clock
/// and the countdown move on.
pub const TICK: Duration = Duration::from_millis(250);

/// How the loop ended, for [`finish`] to carry out.
pub enum Ending {
    /// The player left: resign the race if it runs, forget the seat.
    Leave(Session),
    /// The terminal is gone: keep the seat for a resume.
    Close(Session),
    /// The connection is gone for good; `after_result` when the race had
    /// ended already, which makes it no failure.
    Failed {
        /// What broke.
        error: NetError,
        /// The race was over.
        after_result: bool,
    },
}

/// Online play or watching in the real terminal, until the player leaves
/// (the loop is [`run`]).
///
/// Cancel-safe in effect, as [`run`]; the terminal is restored on drop.
pub async fn play(session: Session, notes: Vec<String>) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
    let mut events = terminal_events();
    let ending = run(&mut terminal, &mut events, session, notes).await;
    drop(terminal);
    finish(ending?).await
}

/// The lobby in the real terminal, until a key picks a room (its code) or
/// the player leaves (the loop is [`crate::tui::lobby::run`]).
///
/// Cancel-safe in effect, as [`crate::tui::lobby::run`]; the terminal is
/// restored on drop.
pub async fn lobby(
    connection: &mut crate::net::Connection,
    game: Option<patience_shared::game::GameKind>,
) -> anyhow::Result<Option<String>> {
    let mut terminal = TerminalGuard::new();
    let mut events = terminal_events();
    let picked = crate::tui::lobby::run(&mut terminal, &mut events, connection, game).await;
    drop(terminal);
    picked
}

/// The online loop: draws `session`'s state on `screen` and plays the
/// `events` until the player leaves, the terminal goes or the connection
/// is lost for good. `notes` are the lines [`Session::start`] returned.
///
/// Cancel-safe in effect: dropped early, the session is dropped, which
/// closes the connection and keeps the seat for a resume.
pub async fn run(
    screen: &mut impl Screen,
    events: &mut mpsc::Receiver<Event>,
    mut session: Session,
    notes: Vec<String>,
) -> anyhow::Result<Ending> {
    screen.clear().context("clearing the screen")?;
    let mut ui = Ui {
        message: notes.last().map(|note| (note.clone(), false)),
        ..Ui::default()
    };
    let mut tick = tokio::time::interval(TICK);
    loop {
        if let Some(note) = session.take_connection_notes().pop() {
            ui.say(note, true);
        }
        screen
            .draw_frame(&mut |frame| draw_online(frame, &session.state, &ui, Instant::now()))
            .context("drawing")?;
        tokio::select! {
            received = session.recv() => match received {
                Ok((message, notes)) => match message {
                    ServerMessage::MoveRejected { .. } => {
                        if let Some(line) = notes.last() {
                            ui.say(line.clone(), true);
                        }
                    }
                    // Others' moves show on the race panel; the footer keeps
                    // this player's own feedback.
                    ServerMessage::Progress { .. } => {}
                    ServerMessage::MoveAccepted { effects, .. } => {
                        ui.show_effects(&effects);
                        if let Some(line) = notes.last() {
                            ui.say(line.clone(), false);
                        }
                    }
                    _ => {
                        if let Some(line) = notes.last() {
                            ui.say(line.clone(), false);
                        }
                    }
                },
                Err(error) => {
                    // After the result the connection may end quietly; before
                    // it, a connection lost for good is a failure.
                    let after_result = session.state.result.is_some();
                    return Ok(Ending::Failed { error, after_result });
                }
            },
            event = events.recv() => {
                let in_lobby = matches!(session.state.phase(), Some(Phase::Lobby | Phase::Dealing | Phase::Countdown))
                    && session.state.racers.is_empty();
                let board = session.state.my_board().cloned();
                ui.follow_race(&session.state);
                let action = match (event, &board) {
                    (Some(Event::Key(key)), _) => ui.key(key, board.as_ref(), in_lobby),
                    (Some(Event::Mouse(mouse)), Some(view)) => {
                        match ui.mouse(&mouse, view, race_board_area(screen.area(), &ui, &session.state, view)) {
                            Some(action) => action,
                            None => continue,
                        }
                    }
                    (None, _) => return Ok(Ending::Close(session)),
                    _ => continue,
                };
                let message = match action {
                    Action::None => None,
                    Action::Suspend => {
                        screen.suspend().context("suspending")?;
                        None
                    }
                    Action::Move(text) => Some(ClientMessage::Move { text, seat: None }),
                    Action::Undo => Some(ClientMessage::Undo),
                    Action::StartEarly => Some(ClientMessage::StartEarly),
                    Action::Resign => Some(ClientMessage::Resign),
                    Action::Rematch(accept) => Some(ClientMessage::Rematch { accept }),
                    Action::QuickRaceAnswer(bot) => Some(ClientMessage::QuickRaceAnswer { bot }),
                    Action::Hint => {
                        ui.say("hints are for practice only", true);
                        None
                    }
                    Action::Quit => return Ok(Ending::Leave(session)),
                };
                // Refused only once the link has ended: its reason is the
                // next thing `recv` returns.
                if let Some(message) = message {
                    let _ = session.send(&message).await;
                }
            }
            _ = tick.tick() => {}
        }
    }
}

/// Carries out how the loop ended, once the screen is restored: leaves or
/// closes, or reports the lost connection (a failure before the result).
///
/// Cancel-safe in effect, as [`Session::leave`] and [`Session::close`].
pub async fn finish(ending: Ending) -> anyhow::Result<()> {
    match ending {
        Ending::Leave(session) => session.leave().await,
        Ending::Close(session) => session.close().await,
        Ending::Failed {
            error,
            after_result: true,
        } => eprintln!("{error}"),
        Ending::Failed { error, .. } => return Err(error.into()),
    }
    Ok(())
}
