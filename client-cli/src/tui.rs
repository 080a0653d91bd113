//! The terminal UI (ratatui + crossterm): practice, races, the lobby, the
//! results and watch mode.
//!
//! Layout of this module: [`board`] draws one board; [`screens`] the lobby,
//! the race panel, the results and the per-game help; [`daily`] the daily
//! attempt's screen and loop; [`live`] the leaderboard followed live (and
//! the standings beside the daily); [`replay`] the replay's; [`mod@online`] the
//! online loop; this file holds the cursor and the keys ([`Ui`]), the frame
//! every screen shares (a title, the body, the message lines and the
//! [`key_bar`] of the [`Context`]'s keys, always at the bottom), the
//! whole-screen drawing ([`draw_practice`], [`draw_online`]), the practice
//! loop and the online one's set-up. Drawing is a pure function of the
//! state and an instant, so snapshot tests render frames with ratatui's
//! `TestBackend`; the loops draw on a [`Screen`] (the real terminal is
//! `TerminalGuard`, which also restores it on drop, on Ctrl-Z and on panic)
//! and read their events from a stream, so tests drive them with a test
//! backend and scripted events.

pub mod board;
pub mod daily;
pub mod live;
pub mod online;
pub mod replay;
pub mod screens;

use std::time::Instant;

use anyhow::Context as _;
use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::card::Card;
use patience_shared::game::GameKind;
use patience_shared::position::{MoveShape, guess, move_between, move_shapes, natural_move};
use patience_shared::rules::{Effect, Outcome, Rules, View, Zone};
use patience_shared::solver::hinter::Hinter;
use patience_shared::solver::{Budget, Hint};
use ratatui::Frame;
use ratatui::crossterm::event::{
    self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use tokio::sync::mpsc;

use self::board::{Marks, Spot, board_lines, card_label, spot_at, widest_board_width};
use self::screens::{
    help_lines, lobby_lines, progress_words, race_panel_lines, results_lines, watch_table_lines,
};
use crate::plain::PRACTICE_BUDGET;
use crate::race::effect_text;
use crate::session::Session;

/// What a key asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond redrawing.
    None,
    /// Play this move (notation).
    Move(String),
    /// Take back the last move.
    Undo,
    /// Ask the solver (practice).
    Hint,
    /// Start the countdown now (room owner).
    StartEarly,
    /// Give up the race or the daily attempt (typed: `:resign`).
    Resign,
    /// Leave: resigns a race.
    Quit,
    /// Ctrl-Z: hand the terminal back and stop until the shell resumes us.
    Suspend,
    /// After a race: accept (or propose) a rematch, or decline it.
    Rematch(bool),
}

/// The cursor, the picked card, the command line and the overlays.
#[derive(Clone, Debug, Default)]
pub struct Ui {
    /// Index into the board's zones in navigation order.
    slot: usize,
    /// Depth from the top of the cursor's zone.
    depth: usize,
    /// The card picked up to move.
    picked: Option<Spot>,
    /// The command line, while typing.
    pub command: Option<String>,
    /// Feedback: text and whether it is an error.
    pub message: Option<(String, bool)>,
    /// The help overlay is shown.
    pub help: bool,
    /// "Leave?" is asked.
    pub confirm_quit: bool,
    /// Leaving loses nothing (a watcher, a race or attempt that is over, a
    /// lobby): `q` and Ctrl-C leave at once instead of asking. The event
    /// loop sets it from the state before each key.
    pub leaving_is_free: bool,
    /// Confirming "leave?" resigns instead: in a race the player stays to
    /// see the standings and, at the end, the result. The event loop sets it
    /// from the state before each key ([`Ui::follow_race`]).
    pub quit_resigns: bool,
    /// The race is over and this racer may answer a rematch: `r` accepts
    /// (or proposes), `n` declines. Set as `quit_resigns` is.
    pub may_rematch: bool,
    /// Watch mode: which racer is shown when boards do not fit side by side.
    pub watched: usize,
    /// The card the last move turned up.
    fresh: Option<Card>,
    /// The hint on the board: the card to move and where it goes.
    pub hint: Option<(Spot, Option<Zone>)>,
}

/// The zones the cursor visits, in order.
fn slots(view: &View) -> Vec<Zone> {
    let mut slots: Vec<Zone> = view
        .zones
        .iter()
        .map(|zone| zone.zone)
        .filter(|zone| {
            matches!(
                zone,
                Zone::Pile(_) | Zone::Cell(_) | Zone::Reserve(_) | Zone::Position(_) | Zone::Waste
            ) || *zone == Zone::Stock
        })
        .collect();
    slots.sort_by_key(|zone| match zone {
        Zone::Position(_) => 0,
        Zone::Pile(_) | Zone::Reserve(_) => 1,
        Zone::Cell(_) => 2,
        Zone::Stock => 3,
        Zone::Waste => 4,
        _ => 5,
    });
    if view
        .zones
        .iter()
        .any(|z| matches!(z.zone, Zone::Foundation(_)))
        && view.game != GameKind::ThreeBlindMice
    {
        slots.push(Zone::Foundation(0));
    }
    slots
}

impl Ui {
    /// The spot under the cursor.
    fn cursor(&self, view: &View) -> Option<Spot> {
        slots(view).get(self.slot).map(|&zone| Spot {
            zone,
            depth: self.depth,
        })
    }

    /// What to highlight on `view`.
    pub fn marks(&self, view: &View) -> Marks {
        let cursor = self.cursor(view);
        Marks {
            cursor,
            picked: self.picked,
            fresh: self.fresh,
            hint: self.hint,
            unfold: cursor,
        }
    }

    /// Sets what leaving costs from a room's state: nothing for a watcher,
    /// a lobby or a race that is over; a resignation while racing.
    pub fn follow_race(&mut self, state: &crate::race::RaceState) {
        self.leaving_is_free = !state.can_move();
        self.quit_resigns = state.can_move();
        self.may_rematch = state.may_rematch();
    }

    /// Shows the solver's next move on the board and says it in words.
    pub fn show_hint(&mut self, position: &AnyGame, mv: AnyMove) {
        let text = position.format_move(mv);
        let shape = move_shapes(position)
            .into_iter()
            .find(|shape| shape.mv == mv);
        match shape {
            Some(shape) => {
                let view = position.view();
                let from = Spot {
                    zone: shape.from,
                    depth: shape.depth,
                };
                let what = match shape.to {
                    _ if shape.from == Zone::Stock => "the stock".to_string(),
                    Some(to) => format!("{} on {} to {to}", Ui::describe(&view, from), shape.from),
                    None => format!("{} on {}", Ui::describe(&view, from), shape.from),
                };
                let home = if shape.sends_a_run_home() {
                    ", and its run goes home"
                } else {
                    ""
                };
                self.hint = Some((from, shape.to));
                self.say(
                    format!("hint: {text}: {what}{home} (lit on the board)"),
                    false,
                );
            }
            None => {
                self.hint = None;
                self.say(format!("hint: {text}"), false);
            }
        }
    }

    /// Remembers the card a move turned up, to show it as it happens.
    pub fn show_effects(&mut self, effects: &[Effect]) {
        self.fresh = effects.iter().find_map(|effect| match effect {
            Effect::TurnedUp { card, .. } | Effect::Drew { card } => Some(*card),
            _ => None,
        });
    }

    fn say(&mut self, text: impl Into<String>, error: bool) {
        self.message = Some((text.into(), error));
    }

    fn jump(&mut self, view: &View, wanted: impl Fn(Zone) -> bool) {
        if let Some(index) = slots(view).iter().position(|&zone| wanted(zone)) {
            self.slot = index;
            self.depth = 0;
        }
    }

    /// Handles a key on `view` (the player's board, if any).
    pub fn key(&mut self, key: KeyEvent, view: Option<&View>, in_lobby: bool) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('z') {
            return Action::Suspend;
        }
        if let Some(command) = &mut self.command {
            match key.code {
                KeyCode::Enter => {
                    let text = command.trim().to_string();
                    self.command = None;
                    return match text.as_str() {
                        "" => Action::None,
                        "undo" | "u" => Action::Undo,
                        "hint" | "h" => Action::Hint,
                        "quit" | "q" => Action::Quit,
                        "start" => Action::StartEarly,
                        "resign" => Action::Resign,
                        _ => Action::Move(text),
                    };
                }
                KeyCode::Esc => self.command = None,
                KeyCode::Backspace => {
                    command.pop();
                }
                KeyCode::Char(c) => command.push(c),
                _ => {}
            }
            return Action::None;
        }
        if self.confirm_quit {
            self.confirm_quit = false;
            return if !matches!(key.code, KeyCode::Char('y' | 'Y') | KeyCode::Enter) {
                Action::None
            } else if self.quit_resigns {
                self.say(
                    "you resigned: the standings follow the race; q leaves",
                    false,
                );
                Action::Resign
            } else {
                Action::Quit
            };
        }
        if self.help {
            self.help = false;
            return Action::None;
        }
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if ctrl_c || key.code == KeyCode::Char('q') {
            if self.leaving_is_free {
                return Action::Quit;
            }
            // Ctrl-C in a race asks like q: a slip must not resign.
            self.confirm_quit = true;
            return Action::None;
        }
        match key.code {
            KeyCode::Char('?') => {
                self.help = true;
                return Action::None;
            }
            KeyCode::Char(':') | KeyCode::Char('/') => {
                self.command = Some(String::new());
                return Action::None;
            }
            KeyCode::Tab => {
                self.watched = self.watched.wrapping_add(1);
                return Action::None;
            }
            KeyCode::Char('s') if in_lobby => return Action::StartEarly,
            KeyCode::Char('r') if self.may_rematch => return Action::Rematch(true),
            KeyCode::Char('n') if self.may_rematch => return Action::Rematch(false),
            KeyCode::Esc => {
                self.picked = None;
                self.message = None;
                return Action::None;
            }
            _ => {}
        }
        let Some(view) = view else {
            return Action::None;
        };
        let count = slots(view).len().max(1);
        let zone_of = |slot: usize| slots(view).get(slot).copied();
        let face_up = |zone: Option<Zone>| {
            zone.and_then(|zone| view.zones.iter().find(|z| z.zone == zone))
                .map_or(0, |z| z.face_up.len())
        };
        match key.code {
            KeyCode::Left => {
                self.slot = (self.slot + count - 1) % count;
                self.depth = 0;
            }
            KeyCode::Right => {
                self.slot = (self.slot + 1) % count;
                self.depth = 0;
            }
            KeyCode::Up | KeyCode::Down if view.game == GameKind::VirginiaReel => {
                let step = if key.code == KeyCode::Up {
                    count - 8
                } else {
                    8
                };
                self.slot = (self.slot + step) % count;
                self.depth = 0;
            }
            KeyCode::Up => {
                let zone = zone_of(self.slot);
                if self.depth + 1 < face_up(zone) && !matches!(zone, Some(Zone::Waste)) {
                    self.depth += 1;
                }
            }
            KeyCode::Down => self.depth = self.depth.saturating_sub(1),
            KeyCode::Char(digit @ '0'..='9') => {
                let index = (digit as u8 - b'0' + 9) % 10;
                self.jump(
                    view,
                    |zone| matches!(zone, Zone::Pile(i) | Zone::Reserve(i) if i == index),
                );
            }
            KeyCode::Char('c') => {
                let next = match zone_of(self.slot) {
                    Some(Zone::Cell(0)) => 1,
                    _ => 0,
                };
                self.jump(view, |zone| zone == Zone::Cell(next));
            }
            KeyCode::Char('w') => self.jump(view, |zone| zone == Zone::Waste),
            KeyCode::Char('s') | KeyCode::Char('d') => self.jump(view, |zone| zone == Zone::Stock),
            KeyCode::Char('f') => self.jump(view, |zone| matches!(zone, Zone::Foundation(_))),
            KeyCode::Char('u') => return Action::Undo,
            KeyCode::Char('h') => return Action::Hint,
            KeyCode::Char(' ') => return self.natural(view),
            KeyCode::Enter => return self.pick_or_drop(view),
            _ => {}
        }
        Action::None
    }

    /// A mouse click on `spot`: the cursor goes there and the card is picked
    /// up or dropped, as with Enter; a right click sends it to its natural
    /// place.
    pub fn click(&mut self, view: &View, spot: Spot, natural: bool) -> Action {
        let slot_zone = match spot.zone {
            Zone::Foundation(_) => Zone::Foundation(0),
            zone => zone,
        };
        let Some(index) = slots(view).iter().position(|&zone| zone == slot_zone) else {
            return Action::None;
        };
        self.slot = index;
        self.depth = spot.depth;
        if natural {
            self.natural(view)
        } else {
            self.pick_or_drop(view)
        }
    }

    fn shapes(&mut self, view: &View) -> Option<Vec<MoveShape>> {
        match guess(view, 0) {
            Ok(position) => Some(move_shapes(&position)),
            Err(error) => {
                self.say(error.to_string(), true);
                None
            }
        }
    }

    fn describe(view: &View, spot: Spot) -> String {
        view.zones
            .iter()
            .find(|zone| zone.zone == spot.zone)
            .and_then(|zone| zone.face_up.iter().rev().nth(spot.depth))
            .map_or_else(|| spot.zone.to_string(), |&card| card_label(card))
    }

    fn natural(&mut self, view: &View) -> Action {
        let Some(spot) = self.cursor(view) else {
            return Action::None;
        };
        let Some(shapes) = self.shapes(view) else {
            return Action::None;
        };
        match natural_move(&shapes, spot.zone, spot.depth) {
            Some(shape) => {
                self.picked = None;
                Action::Move(shape.text.clone())
            }
            None => {
                self.say(
                    format!("{} has nowhere to go", Ui::describe(view, spot)),
                    true,
                );
                Action::None
            }
        }
    }

    fn pick_or_drop(&mut self, view: &View) -> Action {
        let Some(spot) = self.cursor(view) else {
            return Action::None;
        };
        let Some(from) = self.picked.take() else {
            if spot.zone == Zone::Stock {
                return self.natural(view);
            }
            self.picked = Some(spot);
            self.say(
                format!("{} picked: choose where it goes", Ui::describe(view, spot)),
                false,
            );
            return Action::None;
        };
        if from.zone == spot.zone {
            self.message = None;
            return Action::None;
        }
        let Some(shapes) = self.shapes(view) else {
            return Action::None;
        };
        let found = if let Zone::Foundation(_) = spot.zone {
            shapes.iter().find(|shape| {
                shape.from == from.zone
                    && shape.depth == from.depth
                    && matches!(shape.to, Some(Zone::Foundation(_)))
            })
        } else {
            move_between(&shapes, from.zone, from.depth, spot.zone)
        };
        match found {
            Some(shape) => Action::Move(shape.text.clone()),
            None => {
                let reason = refusal(view, from, spot.zone);
                self.say(
                    format!(
                        "{} cannot go to {}: {reason}",
                        Ui::describe(view, from),
                        spot.zone
                    ),
                    true,
                );
                Action::None
            }
        }
    }
}

/// The notation of moving the card `from` onto `to`, as a person would type
/// it, where the game has one.
fn typed_move(game: GameKind, from: Spot, to: Zone) -> Option<String> {
    let source = match (game, from.zone) {
        (GameKind::ThreeBlindMice, Zone::Pile(pile)) => format!("{}:{}", pile + 1, from.depth + 1),
        (GameKind::ThreeBlindMice, Zone::Cell(cell)) => format!("c{}", cell + 1),
        (GameKind::Indian | GameKind::Midshipman, Zone::Pile(pile)) => format!("{}", pile + 1),
        (GameKind::Indian | GameKind::Midshipman, Zone::Waste) => "w".into(),
        (GameKind::VirginiaReel, Zone::Reserve(reserve)) => format!("r{}", reserve + 1),
        (GameKind::VirginiaReel, Zone::Position(index)) => position_name(index),
        _ => return None,
    };
    let target = match to {
        Zone::Pile(pile) => format!("{}", pile + 1),
        Zone::Foundation(_) if matches!(game, GameKind::Indian | GameKind::Midshipman) => {
            "f".into()
        }
        Zone::Position(index) => position_name(index),
        Zone::Discard => "x".into(),
        _ => return None,
    };
    Some(format!("{source}>{target}"))
}

/// A Virginia Reel position as the notation writes it: `B4`.
fn position_name(index: u8) -> String {
    format!("{}{}", char::from(b'A' + index / 8), index % 8 + 1)
}

/// Why the card at `from` cannot go to `to`, in the engine's words: the
/// same text a typed move gets.
fn refusal(view: &View, from: Spot, to: Zone) -> String {
    let unmovable = || match view.game {
        GameKind::ThreeBlindMice => {
            "cards move only onto piles; a finished run K to A goes home by itself".to_string()
        }
        GameKind::Indian | GameKind::Midshipman if from.depth > 0 => {
            "only the top card moves".to_string()
        }
        _ => format!("nothing moves from {} to {to}", from.zone),
    };
    if view.game != GameKind::ThreeBlindMice && from.depth > 0 {
        return unmovable();
    }
    let Some(text) = typed_move(view.game, from, to) else {
        return unmovable();
    };
    let position = match guess(view, 0) {
        Ok(position) => position,
        Err(error) => return error.to_string(),
    };
    match position.parse_move(&text) {
        Err(error) => error.reason,
        Ok(mv) => match position.clone().apply(mv) {
            Err(error) => error.to_string(),
            // Legal after all (a Virginia Reel move that needs its refill
            // chain typed): say how to type it.
            Ok(_) => format!("type it with : ({text}…)"),
        },
    }
}

/// What leaving asks in practice.
const PRACTICE_QUIT: &str = "Leave practice? (y/n)";

/// What leaving asks in a race (a watcher, a lobby or a finished race is
/// left at once).
const RACE_QUIT: &str =
    "Resign? You stay to see the standings and the result; q then leaves. (y/n)";

/// The smallest terminal a board fits in: ten piles of four columns, and
/// the title, a few rows, the message and the key bar.
pub const MIN_WIDTH: u16 = 40;
/// See [`MIN_WIDTH`].
pub const MIN_HEIGHT: u16 = 12;

/// Which keys work on a screen: the key bar and the help follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Practice, offline: undo and hints.
    Practice,
    /// A room before the race; the owner may start it.
    Lobby {
        /// This client owns the room.
        owner: bool,
    },
    /// Racing.
    Race {
        /// The room allows taking moves back.
        undo: bool,
    },
    /// This client is out of a race that goes on (resigned, stuck, won).
    RaceOut,
    /// Watching a race.
    Watch {
        /// Tab cycles boards (open boards that do not fit side by side).
        boards: bool,
    },
    /// The race is over: its result.
    Results,
    /// The daily attempt, running.
    Daily,
    /// The daily attempt, over.
    DailyOver,
    /// A day's leaderboard, followed live.
    Leaderboard,
}

/// The key bar: every key that works here, the most used first; what does
/// not fit `width` is left out before `?` and `q`, which always show.
pub fn key_bar(context: Context, width: u16) -> Line<'static> {
    let board = [
        ("←→↑↓", "choose"),
        ("space", "send"),
        ("enter", "pick/drop"),
        ("click", "pick/drop"),
        ("right-click", "send"),
        (":", "type a move"),
    ];
    let mut items: Vec<(&str, &str)> = match context {
        Context::Practice => {
            let mut items = board.to_vec();
            items.insert(3, ("u", "undo"));
            items.insert(4, ("h", "hint"));
            items
        }
        Context::Race { undo } => {
            let mut items = board.to_vec();
            if undo {
                items.insert(3, ("u", "undo"));
            }
            items
        }
        Context::Daily => {
            let mut items = board.to_vec();
            items.push((":resign", "give up"));
            items
        }
        Context::Lobby { owner: true } => vec![("s", "start now")],
        Context::Results => vec![("tab", "boards")],
        Context::Leaderboard => vec![("↑↓", "scroll")],
        Context::Lobby { owner: false } | Context::RaceOut => vec![],
        Context::Watch { boards: true } => vec![("tab", "next board")],
        Context::Watch { boards: false } | Context::DailyOver => vec![],
    };
    let leave = match context {
        Context::Race { .. } => "resign",
        Context::Daily => "leave (stays open)",
        _ => "leave",
    };
    let last = [("?", "help"), ("q", leave)];
    // Each item is "key what", joined by " · ".
    let length = |items: &[(&str, &str)]| -> usize {
        items
            .iter()
            .map(|(key, what)| key.chars().count() + what.chars().count() + 1 + 3)
            .sum::<usize>()
            - 3
    };
    while !items.is_empty() && length(&items) + 3 + length(&last) > usize::from(width) {
        items.pop();
    }
    let mut spans = Vec::new();
    for (index, (key, what)) in items.iter().chain(last.iter()).enumerate() {
        if index > 0 {
            spans.push(Span::styled(" · ", Style::default().fg(Color::DarkGray)));
        }
        spans.push(Span::styled(
            (*key).to_string(),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::styled(
            format!(" {what}"),
            Style::default().fg(Color::DarkGray),
        ));
    }
    Line::from(spans)
}

/// `text` broken into lines of at most `width` characters at spaces (a
/// longer word is cut), at most `most` lines, the last ending in `…` when
/// more was left out.
fn wrap_text(text: &str, width: usize, most: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = current.chars().count();
            let gap = usize::from(used > 0);
            if used + gap + word.len() <= width {
                if gap > 0 {
                    current.push(' ');
                }
                current.extend(word.drain(..));
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut current));
                continue;
            }
            current.extend(word.drain(..width));
            lines.push(std::mem::take(&mut current));
            if word.is_empty() {
                break;
            }
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    if lines.len() > most {
        lines.truncate(most);
        if let Some(last) = lines.last_mut() {
            let mut chars: Vec<char> = last.chars().collect();
            chars.truncate(width.saturating_sub(1));
            *last = chars.into_iter().collect::<String>() + "…";
        }
    }
    lines
}

/// The most lines a message takes above the key bar.
const MESSAGE_LINES: usize = 3;

/// The message lines for a screen `width` wide: the command line, the
/// question leaving asks (`quit`), or the last feedback, wrapped (an error
/// is never cut at the edge).
fn message_lines(ui: &Ui, quit: &'static str, width: u16) -> Vec<Line<'static>> {
    if let Some(command) = &ui.command {
        return vec![Line::from(vec![
            Span::styled("move: ", Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(format!("{command}▏")),
        ])];
    }
    let (text, style) = if ui.confirm_quit {
        (
            quit.to_string(),
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        )
    } else if let Some((text, error)) = &ui.message {
        let style = if *error {
            Style::default().fg(Color::Red)
        } else {
            Style::default().fg(Color::Green)
        };
        (text.clone(), style)
    } else {
        return vec![Line::from("")];
    };
    wrap_text(&text, usize::from(width), MESSAGE_LINES)
        .into_iter()
        .map(|line| Line::from(Span::styled(line, style)))
        .collect()
}

/// A screen's frame: a title line, the body, the message lines and the
/// key bar at the bottom, always there.
struct Framed {
    /// The body.
    body: Rect,
    message: Rect,
    keys: Rect,
}

/// Lays out a screen of `area` whose message takes `message_height` lines.
fn frame_areas(area: Rect, message_height: u16) -> (Rect, Framed) {
    let [title, body, message, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(message_height),
        Constraint::Length(1),
    ])
    .areas(area);
    (
        title,
        Framed {
            body,
            message,
            keys,
        },
    )
}

/// Draws a screen's title, message and key bar; returns the body.
fn framed_screen(
    frame: &mut Frame,
    heading: String,
    ui: &Ui,
    quit: &'static str,
    context: Context,
) -> Rect {
    let area = frame.area();
    let message = message_lines(ui, quit, area.width);
    let (title, framed) = frame_areas(area, message.len() as u16);
    let line = Line::from(Span::styled(
        heading,
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
    ));
    frame.render_widget(Paragraph::new(line), title);
    frame.render_widget(Paragraph::new(message), framed.message);
    frame.render_widget(Paragraph::new(key_bar(context, area.width)), framed.keys);
    framed.body
}

/// The body of a screen of `area` drawn by [`framed_screen`] for `ui`.
fn body_area(area: Rect, ui: &Ui, quit: &'static str) -> Rect {
    let height = message_lines(ui, quit, area.width).len() as u16;
    frame_areas(area, height).1.body
}

/// Splits the screen into a title line, a body and a footer line, draws
/// `heading` as the title, and returns the body and the footer (the
/// replay's screen, which has its own keys in its panel).
fn titled_screen(frame: &mut Frame, heading: String) -> [Rect; 2] {
    let [title, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let line = Line::from(Span::styled(
        heading,
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
    ));
    frame.render_widget(Paragraph::new(line), title);
    [body, foot]
}

/// Whether `area` is too small for a screen that needs `width` × `height`;
/// if so, says so on the whole screen.
fn too_small(frame: &mut Frame, width: u16, height: u16) -> bool {
    let area = frame.area();
    if area.width >= width && area.height >= height {
        return false;
    }
    let text = format!(
        "The terminal is too small: {}×{}, this screen needs {width}×{height}. \
         Enlarge it, or press q to leave.",
        area.width, area.height
    );
    let lines: Vec<Line<'static>> =
        wrap_text(&text, usize::from(area.width), usize::from(area.height))
            .into_iter()
            .map(|line| Line::from(Span::styled(line, Style::default().fg(Color::Yellow))))
            .collect();
    frame.render_widget(Paragraph::new(lines), area);
    true
}

fn overlay(frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>) {
    let width = area.width.min(78);
    let height = area.height.min(lines.len() as u16 + 2);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL)),
        popup,
    );
}

/// What a practice screen shows.
pub struct PracticeScreen<'a> {
    /// The game.
    pub game: GameKind,
    /// The seed.
    pub seed: u64,
    /// The board.
    pub view: &'a View,
    /// Moves played.
    pub moves: usize,
    /// Won or stuck, in words.
    pub state: Option<&'a str>,
}

/// Draws practice: title, board, message and key bar.
pub fn draw_practice(frame: &mut Frame, screen: &PracticeScreen<'_>, ui: &Ui) {
    let area = frame.area();
    if too_small(frame, MIN_WIDTH, MIN_HEIGHT) {
        return;
    }
    let mut heading = format!(
        " {} · practice · seed {} · {} move{} ",
        screen.game.title(),
        screen.seed,
        screen.moves,
        if screen.moves == 1 { "" } else { "s" },
    );
    if let Some(state) = screen.state {
        heading.push_str(&format!("· {state} "));
    }
    heading.push_str(&format!("· {} ", progress_words(screen.view)));
    let body = framed_screen(frame, heading, ui, PRACTICE_QUIT, Context::Practice);
    let lines = board_lines(screen.view, ui.marks(screen.view), body.width, body.height);
    frame.render_widget(Paragraph::new(lines), body);
    if ui.help {
        overlay(frame, area, help_lines(screen.game, Context::Practice));
    }
}

/// Width of the race panel beside the board.
const PANEL_WIDTH: u16 = 26;

/// The board and the race panel side by side in `body`: the panel takes
/// [`PANEL_WIDTH`], or, when the board at its widest columns leaves room
/// for a rich panel, everything the board does not use. The board's own
/// width decides, not a fixed one: Virginia Reel's board is half as wide as
/// Indian's, and a fixed width left its race screen's middle empty.
fn race_columns(body: Rect, view: &View) -> [Rect; 2] {
    let board = widest_board_width(view);
    let panel = if body.width >= board.saturating_add(screens::RICH_PANEL) {
        body.width - board
    } else {
        PANEL_WIDTH
    };
    Layout::horizontal([Constraint::Min(MIN_WIDTH), Constraint::Length(panel)]).areas(body)
}

/// Where practice draws the board in a terminal of `area`.
fn practice_board_area(area: Rect, ui: &Ui) -> Rect {
    body_area(area, ui, PRACTICE_QUIT)
}

/// Where a race draws the player's board in a terminal of `area`.
fn race_board_area(area: Rect, ui: &Ui, view: &View) -> Rect {
    race_columns(body_area(area, ui, RACE_QUIT), view)[0]
}

impl Ui {
    /// A mouse event on a terminal whose board is drawn in `board`: a left
    /// click picks up or drops the card under it (as Enter), a right click
    /// sends it to its natural place (as space). `None`: not on a card.
    pub fn mouse(&mut self, event: &MouseEvent, view: &View, board: Rect) -> Option<Action> {
        let natural = match event.kind {
            MouseEventKind::Down(MouseButton::Left) => false,
            MouseEventKind::Down(MouseButton::Right) => true,
            _ => return None,
        };
        let inside = event.column >= board.x
            && event.row >= board.y
            && event.column < board.x + board.width
            && event.row < board.y + board.height;
        if !inside {
            return None;
        }
        let spot = spot_at(
            view,
            self.marks(view).unfold,
            board.width,
            board.height,
            event.column - board.x,
            event.row - board.y,
        )?;
        Some(self.click(view, spot, natural))
    }
}

/// Which keys work on an online screen, from the room's state.
pub fn online_context(state: &crate::race::RaceState) -> Context {
    if state.result.is_some() {
        return Context::Results;
    }
    if state.racers.is_empty() {
        let owner =
            state.seat.is_some() && state.room.as_ref().and_then(|room| room.owner) == state.seat;
        return Context::Lobby { owner };
    }
    if state.my_board().is_some() {
        if state.can_move() {
            let undo = state
                .room
                .as_ref()
                .is_some_and(|room| room.options.undo_allowed);
            return Context::Race { undo };
        }
        return Context::RaceOut;
    }
    Context::Watch {
        boards: state.open_boards(),
    }
}

/// Draws an online screen: lobby, race (board and panel), watch or results.
pub fn draw_online(frame: &mut Frame, state: &crate::race::RaceState, ui: &Ui, now: Instant) {
    let area = frame.area();
    let context = online_context(state);
    let needs = match context {
        Context::Race { .. } | Context::RaceOut => MIN_WIDTH + PANEL_WIDTH,
        _ => MIN_WIDTH,
    };
    if too_small(frame, needs, MIN_HEIGHT) {
        return;
    }
    let heading = match &state.room {
        Some(room) => format!(
            " Patience Race · {} · room {} ",
            room.game.title(),
            room.code
        ),
        None => " Patience Race · connecting ".to_string(),
    };
    let body = framed_screen(frame, heading, ui, RACE_QUIT, context);
    if state.result.is_some() {
        draw_results(frame, state, ui, body);
    } else if state.racers.is_empty() {
        frame.render_widget(Paragraph::new(lobby_lines(state, now)), body);
    } else if let Some(board) = state.my_board() {
        let [left, right] = race_columns(body, board);
        frame.render_widget(
            Paragraph::new(board_lines(board, ui.marks(board), left.width, left.height)),
            left,
        );
        frame.render_widget(
            Paragraph::new(race_panel_lines(state, now, right.width))
                .block(Block::default().borders(Borders::LEFT)),
            right,
        );
    } else {
        draw_watch(frame, state, ui, now, body);
    }
    if ui.help {
        let game = state
            .room
            .as_ref()
            .map_or(GameKind::ThreeBlindMice, |room| room.game);
        overlay(frame, area, help_lines(game, context));
    }
}

/// Every racer's board at the end of the race, replayed from the revealed
/// deal and the published move logs (empty before the result).
pub fn final_boards(state: &crate::race::RaceState) -> Vec<(u8, View)> {
    let Some(result) = &state.result else {
        return Vec::new();
    };
    result
        .logs
        .iter()
        .map(|log| {
            let mut position = AnyGame::deal(result.reveal.game, result.reveal.seed);
            let mut history = Vec::new();
            for text in &log.moves {
                if text == patience_shared::protocol::UNDO_TEXT {
                    if let Some((mv, outcome)) = history.pop() {
                        position.undo(mv, &outcome);
                    }
                    continue;
                }
                let Ok(mv) = position.parse_move(text) else {
                    break;
                };
                match position.apply(mv) {
                    Ok(outcome) => history.push((mv, outcome)),
                    Err(_) => break,
                }
            }
            (log.seat, position.view())
        })
        .collect()
}

/// The result, and beside it on a wide terminal every racer's final board
/// (public once the race is over).
fn draw_results(frame: &mut Frame, state: &crate::race::RaceState, ui: &Ui, body: Rect) {
    const RESULTS_WIDTH: u16 = 80;
    let results = Paragraph::new(results_lines(state)).wrap(Wrap { trim: false });
    if body.width < RESULTS_WIDTH + BOARD_WIDTH {
        // No room beside the result: Tab turns to each final board in turn.
        let boards = final_boards(state);
        let choice = ui.watched % (boards.len() + 1);
        match choice.checked_sub(1).and_then(|index| boards.get(index)) {
            Some(board) => draw_boards(frame, state, &Ui::default(), vec![board.clone()], body),
            None => frame.render_widget(results, body),
        }
        return;
    }
    let [left, right] = Layout::horizontal([
        Constraint::Length(RESULTS_WIDTH),
        Constraint::Min(BOARD_WIDTH),
    ])
    .areas(body);
    frame.render_widget(results, left);
    draw_boards(frame, state, ui, final_boards(state), right);
}

/// The width a board needs beside others.
const BOARD_WIDTH: u16 = 54;

/// Boards side by side in `area`, each under its racer's name; when they do
/// not fit, as many as fit from the one Tab chose.
fn draw_boards(
    frame: &mut Frame,
    state: &crate::race::RaceState,
    ui: &Ui,
    racers: Vec<(u8, View)>,
    area: Rect,
) {
    if racers.is_empty() {
        return;
    }
    let fit = usize::from((area.width / BOARD_WIDTH).max(1));
    let shown: Vec<(u8, View)> = if racers.len() <= fit {
        racers
    } else {
        let first = ui.watched % racers.len();
        let count = racers.len();
        racers
            .into_iter()
            .cycle()
            .skip(first)
            .take(fit.min(count))
            .collect()
    };
    let columns = Layout::horizontal(vec![
        Constraint::Ratio(1, shown.len().max(1) as u32);
        shown.len()
    ])
    .split(area);
    for ((seat, view), column) in shown.into_iter().zip(columns.iter()) {
        let mut lines = vec![Line::from(Span::styled(
            format!("{} · {}", state.name_of(seat), progress_words(&view)),
            Style::default().add_modifier(Modifier::BOLD),
        ))];
        lines.extend(board_lines(
            &view,
            Marks::default(),
            column.width,
            column.height.saturating_sub(1),
        ));
        frame.render_widget(Paragraph::new(lines), *column);
    }
}

/// Watch mode with open boards: every racer's board side by side when they
/// fit, else one at a time (Tab), with the race panel. Without open boards
/// the boards are not sent until the race ends, and the watcher sees each
/// racer's progress in a table.
fn draw_watch(
    frame: &mut Frame,
    state: &crate::race::RaceState,
    ui: &Ui,
    now: Instant,
    body: Rect,
) {
    if !state.open_boards() {
        frame.render_widget(
            Paragraph::new(watch_table_lines(state, now)).wrap(Wrap { trim: false }),
            body,
        );
        return;
    }
    let [boards, panel] =
        Layout::horizontal([Constraint::Min(40), Constraint::Length(PANEL_WIDTH)]).areas(body);
    frame.render_widget(
        Paragraph::new(race_panel_lines(state, now, panel.width))
            .block(Block::default().borders(Borders::LEFT)),
        panel,
    );
    let racers: Vec<(u8, View)> = state
        .racers
        .iter()
        .filter_map(|(&seat, racer)| Some((seat, racer.board.clone()?)))
        .collect();
    draw_boards(frame, state, ui, racers, boards);
}

/// Whether `NO_COLOR` asks for no colors (set and not empty, as
/// <https://no-color.org> says).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty())
}

/// Drops every color of a drawn frame and keeps its modifiers, so the
/// cursor (reversed) and the picked card (bold) stay visible without color.
fn without_colors(buffer: &mut ratatui::buffer::Buffer) {
    for cell in &mut buffer.content {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}

/// What an event loop draws on: the real terminal (`TerminalGuard`), or a
/// test backend.
pub trait Screen {
    /// Draws one frame with `render`.
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()>;
    /// The terminal's size.
    fn area(&self) -> Rect;
    /// Ctrl-Z: hands the terminal back to the shell, stops this process as
    /// the shell's own Ctrl-Z would, and takes the terminal again when the
    /// shell resumes it (`fg`).
    fn suspend(&mut self) -> std::io::Result<()>;
    /// Wipes the screen: a client started again after one that died
    /// without restoring the terminal must not draw over its leftovers.
    fn clear(&mut self) -> std::io::Result<()>;
}

/// A ratatui terminal whose frames lose their colors when asked (the
/// `NO_COLOR` convention), keeping their modifiers.
pub struct Painter<B: ratatui::backend::Backend> {
    /// The terminal.
    pub terminal: ratatui::Terminal<B>,
    /// Draw without colors.
    pub colorless: bool,
}

impl<B: ratatui::backend::Backend> Painter<B> {
    /// Draws a frame, without its colors if [`Painter::colorless`].
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> std::io::Result<()> {
        let colorless = self.colorless;
        self.terminal
            .draw(|frame| {
                render(frame);
                if colorless {
                    without_colors(frame.buffer_mut());
                }
            })
            .map(|_| ())
            .map_err(|error| std::io::Error::other(error.to_string()))
    }

    /// Wipes the screen, so that the next frame is drawn whole.
    ///
    /// Not `Terminal::clear`: ratatui 0.30 first asks the terminal where
    /// its cursor is, and while a thread of ours waits for keys
    /// (`terminal_events`) crossterm cannot read the answer, so the
    /// question fails after 2 s (the online client then ended with "the
    /// cursor position could not be read") or waits for the next key with
    /// the screen blank. Resizing a full-screen terminal to its own size
    /// wipes the screen and the frame last drawn, and asks nothing.
    pub fn clear(&mut self) -> std::io::Result<()> {
        let size = self
            .terminal
            .size()
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        self.terminal
            .resize(Rect::new(0, 0, size.width, size.height))
            .map_err(|error| std::io::Error::other(error.to_string()))
    }

    /// The terminal's size (empty if it cannot be read).
    pub fn area(&self) -> Rect {
        self.terminal
            .size()
            .map(|size| Rect::new(0, 0, size.width, size.height))
            .unwrap_or_default()
    }
}

/// The crossterm terminal, restored on drop (and on panic, by ratatui).
struct TerminalGuard(Painter<ratatui::backend::CrosstermBackend<std::io::Stdout>>);

/// Takes the terminal: raw mode, the alternate screen, mouse clicks.
fn enter_terminal() -> std::io::Result<()> {
    use ratatui::crossterm::{event::EnableMouseCapture, execute, terminal};
    terminal::enable_raw_mode()?;
    execute!(std::io::stdout(), terminal::EnterAlternateScreen)?;
    // Mouse clicks where the terminal supports them; keys work regardless.
    let _ = execute!(std::io::stdout(), EnableMouseCapture);
    Ok(())
}

/// Gives the terminal back as it was.
fn leave_terminal() {
    let _ = ratatui::crossterm::execute!(
        std::io::stdout(),
        ratatui::crossterm::event::DisableMouseCapture
    );
    ratatui::restore();
}

impl TerminalGuard {
    fn new() -> TerminalGuard {
        // Left to crossterm, NO_COLOR turns each color change into an empty
        // `ESC[;m`, which resets the reverse video of the cursor. The frames
        // carry no colors instead (see `Painter::draw`) and crossterm
        // writes its color resets as usual.
        ratatui::crossterm::style::Colored::set_ansi_color_disabled(false);
        let terminal = ratatui::init();
        let _ = ratatui::crossterm::execute!(
            std::io::stdout(),
            ratatui::crossterm::event::EnableMouseCapture
        );
        TerminalGuard(Painter {
            terminal,
            colorless: no_color(),
        })
    }

    /// Draws a frame, without its colors under `NO_COLOR`.
    fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> std::io::Result<()> {
        self.0.draw(render)
    }

    fn area(&self) -> Rect {
        self.0.area()
    }

    /// See [`Screen::suspend`].
    fn suspend(&mut self) -> std::io::Result<()> {
        leave_terminal();
        stop_this_process()?;
        enter_terminal()?;
        // The shell drew over the screen meanwhile: draw it all again.
        self.0.clear()
    }
}

impl Screen for TerminalGuard {
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()> {
        self.draw(render)
    }

    fn area(&self) -> Rect {
        TerminalGuard::area(self)
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        TerminalGuard::suspend(self)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.0.clear()
    }
}

/// Stops this process with SIGTSTP, as the terminal's Ctrl-Z does outside
/// raw mode; returns once the shell resumes it. `kill` does the sending,
/// so that no signal library is needed.
fn stop_this_process() -> std::io::Result<()> {
    if cfg!(unix) {
        std::process::Command::new("kill")
            .arg("-TSTP")
            .arg(std::process::id().to_string())
            .status()?;
    }
    Ok(())
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        leave_terminal();
    }
}

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
/// leaves (or the events end).
pub fn practice_loop(
    screen: &mut impl Screen,
    events: impl IntoIterator<Item = std::io::Result<Event>>,
    game: GameKind,
    seed: u64,
    note: Option<String>,
) -> anyhow::Result<PracticeEnd> {
    let mut events = events.into_iter();
    let mut position = AnyGame::deal(game, seed);
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
        let state = if end.won {
            Some("won!")
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
            Action::None | Action::StartEarly | Action::Rematch(_) => {}
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

/// Keyboard and mouse events, read on a thread of their own and handed
/// over through a bounded channel.
fn terminal_events() -> mpsc::Receiver<Event> {
    let (sender, receiver) = mpsc::channel(64);
    std::thread::spawn(move || {
        while let Ok(event) = event::read() {
            if sender.blocking_send(event).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Online play or watching in the terminal UI, until the player leaves
/// (the loop is [`online::run`]).
///
/// Cancel-safe in effect, as [`online::run`]; the terminal is restored on drop.
pub async fn online(session: Session, notes: Vec<String>) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
    let mut events = terminal_events();
    let ending = online::run(&mut terminal, &mut events, session, notes).await;
    drop(terminal);
    online::finish(ending?).await
}

/// The lobby in the terminal UI, until a key picks a room (its code) or
/// the player leaves (the loop is [`crate::lobby::run`]).
///
/// Cancel-safe in effect, as [`crate::lobby::run`]; the terminal is
/// restored on drop.
pub async fn lobby(
    connection: &mut crate::net::Connection,
    game: Option<GameKind>,
) -> anyhow::Result<Option<String>> {
    let mut terminal = TerminalGuard::new();
    let mut events = terminal_events();
    let picked = crate::lobby::run(&mut terminal, &mut events, connection, game).await;
    drop(terminal);
    picked
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod online_tests;
