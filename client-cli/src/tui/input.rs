//! The cursor, the picked card and the keys ([`Ui`]): what a key or a
//! click on a board asks for ([`Action`]), and why a drop is refused.

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::card::Card;
use patience_shared::game::GameKind;
use patience_shared::position::{
    DropRefusal, MoveShape, drop_refusal, guess, move_between, move_shapes, natural_move,
};
use patience_shared::rules::{Effect, Rules, View, Zone};
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;

use super::board::{Marks, Spot, card_label, spot_at};

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
    /// Waiting for a quick race, offered a bot: race it (`true`), or keep
    /// waiting.
    QuickRaceAnswer(bool),
}

/// The cursor, the picked card, the command line and the overlays.
#[derive(Clone, Debug, Default)]
pub struct Ui {
    /// Index into the board's zones in navigation order.
    pub(super) slot: usize,
    /// Depth from the top of the cursor's zone.
    pub(super) depth: usize,
    /// The card picked up to move.
    pub(super) picked: Option<Spot>,
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
    /// Waiting alone for a quick race, a bot is offered: `b` races it, `w`
    /// keeps waiting. Set as `quit_resigns` is.
    pub bot_offered: bool,
    /// Watch mode: which racer is shown when boards do not fit side by side.
    pub watched: usize,
    /// The card the last move turned up.
    pub(super) fresh: Option<Card>,
    /// The hint on the board: the card to move and where it goes.
    pub hint: Option<(Spot, Option<Zone>)>,
}

/// The zones the cursor visits, in order.
pub(super) fn slots(view: &View) -> Vec<Zone> {
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
        self.bot_offered = state.bot_offered();
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

    pub(super) fn say(&mut self, text: impl Into<String>, error: bool) {
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
            KeyCode::Char('b') if self.bot_offered => return Action::QuickRaceAnswer(true),
            KeyCode::Char('w') if self.bot_offered => return Action::QuickRaceAnswer(false),
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

/// Why the card at `from` cannot go to `to`, in the engine's words: the
/// same text a typed move gets.
pub(super) fn refusal(view: &View, from: Spot, to: Zone) -> String {
    let position = match guess(view, 0) {
        Ok(position) => position,
        Err(error) => return error.to_string(),
    };
    match drop_refusal(&position, from.zone, from.depth, to) {
        DropRefusal::Refused(reason) => reason,
        // Legal after all (a Virginia Reel move that needs its refill
        // chain typed): say how to type it.
        DropRefusal::NeedsTyping { typed } => format!("type it with : ({typed}…)"),
    }
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
