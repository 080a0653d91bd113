//! Practice, offline: the loop that deals, draws, reads keys and mouse
//! clicks, and plays, takes back and hints, on any [`Screen`].

use std::time::{Duration, Instant};

use anyhow::Context as _;
use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::game::GameKind;
use patience_shared::rules::{Outcome, Rules};
use patience_shared::solver::hinter::Hinter;
use patience_shared::solver::{Budget, Hint};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};

use super::draw::{PracticeScreen, draw_practice, practice_board_area};
use super::input::{Action, Ui};
use super::terminal::{Screen, TerminalGuard};
use crate::plain::PRACTICE_BUDGET;
use crate::race::effect_text;

/// How a practice game ended when its loop returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PracticeEnd {
    /// The game was won.
    pub won: bool,
    /// Moves on the board (taken-back moves not counted).
    pub moves: usize,
    /// How many hints needed a search: hints that follow one line need one.
    pub hint_searches: u64,
}

/// Practice in the terminal UI, offline. The solver runs on this thread
/// (no async runtime here) when asked for a hint.
pub fn practice(game: GameKind, seed: u64, note: Option<String>) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
    let events = std::iter::from_fn(|| Some(event::read()));
    practice_loop(&mut terminal, events, game, seed, note).map(|_| ())
}

/// The practice loop on any [`Screen`], reading `events` until the player
/// leaves (or the events end). A won game says its moves and time, leaves
/// on `q` without asking (nothing is lost), and `n` deals the next seed.
pub fn practice_loop(
    screen: &mut impl Screen,
    events: impl IntoIterator<Item = std::io::Result<Event>>,
    game: GameKind,
    seed: u64,
    note: Option<String>,
) -> anyhow::Result<PracticeEnd> {
    let mut events = events.into_iter();
    let mut seed = seed;
    let mut position = AnyGame::deal(game, seed);
    // The wall clock of this game, shown once it is won: practice is the
    // client's own loop, not the pure rules.
    let mut dealt_at = Instant::now();
    let mut won_after: Option<Duration> = None;
    let mut history: Vec<(AnyMove, Outcome)> = Vec::new();
    // Keeps the line of the last hint, so hints in a row follow one line.
    let mut hinter = Hinter::new();
    let mut ui = Ui {
        message: note.map(|note| (note, false)),
        ..Ui::default()
    };
    loop {
        let view = position.view();
        let end = PracticeEnd {
            won: position.is_won(),
            moves: history.len(),
            hint_searches: hinter.searches(),
        };
        if end.won && won_after.is_none() {
            let time = dealt_at.elapsed();
            won_after = Some(time);
            ui.say(
                format!(
                    "won! {} moves in {}: n deals a new game, q leaves",
                    history.len(),
                    minutes_text(time)
                ),
                false,
            );
        }
        // Leaving a won game loses nothing: no "Leave?".
        ui.leaving_is_free = end.won;
        let won_text = won_after
            .filter(|_| end.won)
            .map(|time| format!("won in {}", minutes_text(time)));
        let state = if let Some(text) = &won_text {
            Some(text.as_str())
        } else if position.is_stuck() {
            Some("stuck: u takes back")
        } else {
            None
        };
        let screen_state = PracticeScreen {
            game,
            seed,
            view: &view,
            moves: history.len(),
            state,
        };
        screen
            .draw_frame(&mut |frame| draw_practice(frame, &screen_state, &ui))
            .context("drawing")?;
        let Some(event) = events.next() else {
            return Ok(end);
        };
        let action = match event.context("reading the keyboard")? {
            Event::Key(key)
                if end.won
                    && key.code == KeyCode::Char('n')
                    && key.kind != KeyEventKind::Release
                    && ui.command.is_none() =>
            {
                seed = seed.wrapping_add(1);
                position = AnyGame::deal(game, seed);
                history.clear();
                hinter = Hinter::new();
                dealt_at = Instant::now();
                won_after = None;
                ui = Ui::default();
                ui.say(format!("a new deal: seed {seed}"), false);
                continue;
            }
            Event::Key(key) => ui.key(key, Some(&view), false),
            Event::Mouse(mouse) => {
                match ui.mouse(&mouse, &view, practice_board_area(screen.area(), &ui)) {
                    Some(action) => action,
                    None => continue,
                }
            }
            // A resize is drawn by the next frame.
            _ => continue,
        };
        match action {
            Action::None | Action::StartEarly | Action::Rematch(_) | Action::QuickRaceAnswer(_) => {
            }
            Action::Suspend => screen.suspend().context("suspending")?,
            Action::Resign => ui.say("practice has nothing to resign: q leaves", true),
            Action::Quit => return Ok(end),
            Action::Undo => match history.pop() {
                Some((mv, outcome)) => {
                    position.undo(mv, &outcome);
                    ui.hint = None;
                    ui.say(format!("took back {}", position.format_move(mv)), false);
                }
                None => ui.say("nothing to take back", true),
            },
            Action::Hint => match hinter.hint(&position, Budget::positions(PRACTICE_BUDGET)) {
                Ok(Hint::Play(mv)) => ui.show_hint(&position, mv),
                Ok(Hint::AlreadyWon) => ui.say("the game is won", false),
                Ok(Hint::NoWinningLine) => {
                    ui.say("no winning line from here: take moves back", false)
                }
                Ok(Hint::Unknown) => ui.say("the solver found nothing in time", false),
                Err(error) => ui.say(error.to_string(), true),
            },
            Action::Move(text) => match position.parse_move(&text) {
                Err(error) => ui.say(format!("{text}: {}", error.reason), true),
                Ok(mv) => {
                    let canonical = position.format_move(mv);
                    match position.apply(mv) {
                        Err(error) => ui.say(format!("{canonical}: {error}"), true),
                        Ok(outcome) => {
                            let mut line = format!("played {canonical}");
                            for effect in &outcome.effects {
                                line.push_str("; ");
                                line.push_str(&effect_text(effect));
                            }
                            ui.say(line, false);
                            ui.show_effects(&outcome.effects);
                            ui.picked = None;
                            ui.hint = None;
                            history.push((mv, outcome));
                        }
                    }
                }
            },
        }
    }
}

/// A duration as minutes and seconds: `3:07`.
fn minutes_text(time: Duration) -> String {
    let seconds = time.as_secs();
    format!("{}:{:02}", seconds / 60, seconds % 60)
}
