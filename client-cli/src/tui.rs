//! The terminal UI (ratatui + crossterm): practice, races, the lobby, the
//! results and watch mode.
//!
//! Layout of this module: [`board`] draws one board; [`screens`] the lobby,
//! the race panel, the results and the help; [`daily`] the daily attempt's
//! screen and loop; [`replay`] the replay's; this file holds the cursor and
//! the keys ([`Ui`]), the whole-screen drawing ([`draw_practice`],
//! [`draw_online`]) and the two event loops. Drawing is a pure function of
//! the state and an instant, so snapshot tests render frames with
//! ratatui's `TestBackend`.

pub mod board;
pub mod daily;
pub mod replay;
pub mod screens;

use std::time::{Duration, Instant};

use anyhow::Context as _;
use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::card::Card;
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, Phase, ServerMessage};
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

use self::board::{Marks, Spot, board_lines, card_label, spot_at};
use self::screens::{help_lines, lobby_lines, race_panel_lines, results_lines, watch_table_lines};
use crate::plain::PRACTICE_BUDGET;
use crate::position::{MoveShape, guess, move_between, move_shapes, natural_move};
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
    /// Watch mode: which racer is shown when boards do not fit side by side.
    pub watched: usize,
    /// The card the last move turned up.
    fresh: Option<Card>,
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
        Marks {
            cursor: self.cursor(view),
            picked: self.picked,
            fresh: self.fresh,
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
            return if matches!(key.code, KeyCode::Char('y' | 'Y') | KeyCode::Enter) {
                Action::Quit
            } else {
                Action::None
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
                self.say(
                    format!("{} cannot go to {}", Ui::describe(view, from), spot.zone),
                    true,
                );
                Action::None
            }
        }
    }
}

/// What leaving asks in practice.
const PRACTICE_QUIT: &str = "Leave practice? (y/n)";

/// What leaving asks in a room.
const RACE_QUIT: &str = "Leave? In a race this resigns. (y/n)";

/// The bottom line: the command line, the feedback, or the keys; `quit` is
/// the question leaving asks.
fn footer(ui: &Ui, quit: &'static str) -> Line<'static> {
    if let Some(command) = &ui.command {
        return Line::from(vec![
            Span::styled("move: ", Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(format!("{command}▏")),
        ]);
    }
    if ui.confirm_quit {
        return Line::from(Span::styled(
            quit,
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        ));
    }
    if let Some((text, error)) = &ui.message {
        let style = if *error {
            Style::default().fg(Color::Red)
        } else {
            Style::default().fg(Color::Green)
        };
        return Line::from(Span::styled(text.clone(), style));
    }
    Line::from(Span::styled(
        "←→↑↓ move · space natural move · enter pick/drop · : notation · ? help · q leave",
        Style::default().fg(Color::DarkGray),
    ))
}

/// Splits the screen into a title line, a body and a footer line, draws
/// `heading` as the title, and returns the body and the footer.
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

fn overlay(frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>) {
    let width = area.width.min(72);
    let height = area.height.min(lines.len() as u16 + 2);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL)),
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

/// Draws practice: title, board, footer.
pub fn draw_practice(frame: &mut Frame, screen: &PracticeScreen<'_>, ui: &Ui) {
    let area = frame.area();
    let mut heading = format!(
        " {} · practice · seed {} · {} move{} ",
        screen.game.title(),
        screen.seed,
        screen.moves,
        if screen.moves == 1 { "" } else { "s" }
    );
    if let Some(state) = screen.state {
        heading.push_str(&format!("· {state} "));
    }
    let [body, foot] = titled_screen(frame, heading);
    let lines = board_lines(screen.view, ui.marks(screen.view), body.width, body.height);
    frame.render_widget(Paragraph::new(lines), body);
    frame.render_widget(Paragraph::new(footer(ui, PRACTICE_QUIT)), foot);
    if ui.help {
        overlay(frame, area, help_lines(true));
    }
}

/// Width of the race panel beside the board.
const PANEL_WIDTH: u16 = 26;

/// Where the player's board is drawn in a frame of `area`.
fn board_area(area: Rect, with_panel: bool) -> Rect {
    let [_, body, _] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    if with_panel {
        let [left, _] =
            Layout::horizontal([Constraint::Min(40), Constraint::Length(PANEL_WIDTH)]).areas(body);
        left
    } else {
        body
    }
}

/// The spot a mouse event points at, and whether it asks for the natural move.
fn clicked(event: &MouseEvent, view: &View, area: Rect) -> Option<(Spot, bool)> {
    let natural = match event.kind {
        MouseEventKind::Down(MouseButton::Left) => false,
        MouseEventKind::Down(MouseButton::Right) => true,
        _ => return None,
    };
    let inside = event.column >= area.x
        && event.row >= area.y
        && event.column < area.x + area.width
        && event.row < area.y + area.height;
    if !inside {
        return None;
    }
    spot_at(
        view,
        area.width,
        area.height,
        event.column - area.x,
        event.row - area.y,
    )
    .map(|spot| (spot, natural))
}

/// Draws an online screen: lobby, race (board and panel), watch or results.
pub fn draw_online(frame: &mut Frame, state: &crate::race::RaceState, ui: &Ui, now: Instant) {
    let area = frame.area();
    let heading = match &state.room {
        Some(room) => format!(
            " Patience Race · {} · room {} ",
            room.game.title(),
            room.code
        ),
        None => " Patience Race · connecting ".to_string(),
    };
    let [body, foot] = titled_screen(frame, heading);
    if state.result.is_some() {
        frame.render_widget(
            Paragraph::new(results_lines(state)).wrap(Wrap { trim: false }),
            body,
        );
    } else if state.racers.is_empty() {
        frame.render_widget(Paragraph::new(lobby_lines(state, now)), body);
    } else if let Some(board) = state.my_board() {
        let [left, right] =
            Layout::horizontal([Constraint::Min(40), Constraint::Length(PANEL_WIDTH)]).areas(body);
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
    frame.render_widget(Paragraph::new(footer(ui, RACE_QUIT)), foot);
    if ui.help {
        overlay(frame, area, help_lines(false));
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
    let racers: Vec<(u8, &View)> = state
        .racers
        .iter()
        .filter_map(|(&seat, racer)| Some((seat, racer.board.as_ref()?)))
        .collect();
    const BOARD_WIDTH: u16 = 54;
    let fit = usize::from((boards.width / BOARD_WIDTH).max(1));
    let shown: Vec<(u8, &View)> = if racers.len() <= fit {
        racers
    } else {
        let first = ui.watched % racers.len();
        racers.into_iter().cycle().skip(first).take(fit).collect()
    };
    let columns = Layout::horizontal(vec![
        Constraint::Ratio(1, shown.len().max(1) as u32);
        shown.len()
    ])
    .split(boards);
    for ((seat, view), column) in shown.into_iter().zip(columns.iter()) {
        let mut lines = vec![Line::from(Span::styled(
            state.name_of(seat),
            Style::default().add_modifier(Modifier::BOLD),
        ))];
        lines.extend(board_lines(
            view,
            Marks::default(),
            column.width,
            column.height.saturating_sub(1),
        ));
        frame.render_widget(Paragraph::new(lines), *column);
    }
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

/// The crossterm terminal, restored on drop (and on panic, by ratatui).
struct TerminalGuard(ratatui::DefaultTerminal);

impl TerminalGuard {
    fn new() -> TerminalGuard {
        // Left to crossterm, NO_COLOR turns each color change into an empty
        // `ESC[;m`, which resets the reverse video of the cursor. The frames
        // carry no colors instead (see `TerminalGuard::draw`) and crossterm
        // writes its color resets as usual.
        ratatui::crossterm::style::Colored::set_ansi_color_disabled(false);
        let terminal = ratatui::init();
        // Mouse clicks where the terminal supports them; keys work regardless.
        let _ = ratatui::crossterm::execute!(
            std::io::stdout(),
            ratatui::crossterm::event::EnableMouseCapture
        );
        TerminalGuard(terminal)
    }

    /// Draws a frame, without its colors under `NO_COLOR`.
    fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> std::io::Result<()> {
        let colorless = no_color();
        self.0
            .draw(|frame| {
                render(frame);
                if colorless {
                    without_colors(frame.buffer_mut());
                }
            })
            .map(|_| ())
    }

    fn area(&self) -> Rect {
        self.0
            .size()
            .map(|size| Rect::new(0, 0, size.width, size.height))
            .unwrap_or_default()
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = ratatui::crossterm::execute!(
            std::io::stdout(),
            ratatui::crossterm::event::DisableMouseCapture
        );
        ratatui::restore();
    }
}

/// Practice in the terminal UI, offline. The solver runs on this thread
/// (no async runtime here) when asked for a hint.
pub fn practice(game: GameKind, seed: u64, note: Option<String>) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
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
        let state = if position.is_won() {
            Some("won!")
        } else if position.is_stuck() {
            Some("stuck: u takes back")
        } else {
            None
        };
        let screen = PracticeScreen {
            game,
            seed,
            view: &view,
            moves: history.len(),
            state,
        };
        terminal
            .draw(|frame| draw_practice(frame, &screen, &ui))
            .context("drawing")?;
        let action = match event::read().context("reading the keyboard")? {
            Event::Key(key) => ui.key(key, Some(&view), false),
            Event::Mouse(mouse) => {
                match clicked(&mouse, &view, board_area(terminal.area(), false)) {
                    Some((spot, natural)) => ui.click(&view, spot, natural),
                    None => continue,
                }
            }
            _ => continue,
        };
        match action {
            Action::None | Action::StartEarly => {}
            Action::Resign => ui.say("practice has nothing to resign: q leaves", true),
            Action::Quit => return Ok(()),
            Action::Undo => match history.pop() {
                Some((mv, outcome)) => {
                    position.undo(mv, &outcome);
                    ui.say(format!("took back {}", position.format_move(mv)), false);
                }
                None => ui.say("nothing to take back", true),
            },
            Action::Hint => {
                let text = match hinter.hint(&position, Budget::positions(PRACTICE_BUDGET)) {
                    Ok(Hint::Play(mv)) => format!("hint: {}", position.format_move(mv)),
                    Ok(Hint::AlreadyWon) => "the game is won".into(),
                    Ok(Hint::NoWinningLine) => "no winning line from here: take moves back".into(),
                    Ok(Hint::Unknown) => "the solver found nothing in time".into(),
                    Err(error) => error.to_string(),
                };
                ui.say(text, false);
            }
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

/// Online play or watching in the terminal UI, until the player leaves.
pub async fn online(mut session: Session, notes: Vec<String>) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
    let mut events = terminal_events();
    let mut ui = Ui {
        message: notes.last().map(|note| (note.clone(), false)),
        ..Ui::default()
    };
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        terminal
            .draw(|frame| draw_online(frame, &session.state, &ui, Instant::now()))
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
                    drop(terminal);
                    // After the result the connection may end quietly; before
                    // it, a connection lost for good is a failure.
                    if session.state.result.is_some() {
                        eprintln!("{error}");
                        return Ok(());
                    }
                    return Err(error.into());
                }
            },
            event = events.recv() => {
                let in_lobby = matches!(session.state.phase(), Some(Phase::Lobby | Phase::Dealing | Phase::Countdown))
                    && session.state.racers.is_empty();
                let board = session.state.my_board().cloned();
                ui.leaving_is_free = !session.state.can_move();
                let action = match (event, &board) {
                    (Some(Event::Key(key)), _) => ui.key(key, board.as_ref(), in_lobby),
                    (Some(Event::Mouse(mouse)), Some(view)) => {
                        match clicked(&mouse, view, board_area(terminal.area(), true)) {
                            Some((spot, natural)) => ui.click(view, spot, natural),
                            None => continue,
                        }
                    }
                    (None, _) => {
                        // The terminal is gone: keep the seat for a resume.
                        drop(terminal);
                        session.close().await;
                        return Ok(());
                    }
                    _ => continue,
                };
                let message = match action {
                    Action::None => None,
                    Action::Move(text) => Some(ClientMessage::Move { text, seat: None }),
                    Action::Undo => Some(ClientMessage::Undo),
                    Action::StartEarly => Some(ClientMessage::StartEarly),
                    Action::Resign => Some(ClientMessage::Resign),
                    Action::Hint => {
                        ui.say("hints are for practice only", true);
                        None
                    }
                    Action::Quit => {
                        drop(terminal);
                        session.leave().await;
                        return Ok(());
                    }
                };
                if let Some(message) = message {
                    session.send(&message).await?;
                }
            }
            _ = tick.tick() => {}
        }
    }
}

#[cfg(test)]
mod tests;
