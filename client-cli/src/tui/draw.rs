//! Whole screens drawn as a pure function of the state and an instant:
//! practice ([`draw_practice`]) and online ([`draw_online`]: the lobby,
//! the race with its panel (and, in a room with open boards, a rival's
//! board under one's own), watching and the results with the final
//! boards).

use std::time::Instant;

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::rules::{Rules, View};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::board::{Marks, board_lines, widest_board_width};
use super::frame::{
    Context, MIN_HEIGHT, MIN_WIDTH, PRACTICE_QUIT, RACE_QUIT, body_area, framed_screen, overlay,
    too_small,
};
use super::input::Ui;
use super::screens::{
    self, count_words, help_lines, lobby_lines, progress_words, race_panel_lines, results_lines,
    watch_table_lines,
};

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
    let deal = AnyGame::deal(screen.game, screen.seed).view();
    heading.push_str(&format!("· {} ", progress_words(&deal, screen.view)));
    let body = framed_screen(frame, heading, ui, PRACTICE_QUIT, Context::Practice);
    let lines = board_lines(screen.view, ui.marks(screen.view), body.width, body.height);
    frame.render_widget(Paragraph::new(lines), body);
    if ui.help {
        overlay(frame, area, help_lines(screen.game, Context::Practice));
    }
}

/// Width of the race panel beside the board.
pub(super) const PANEL_WIDTH: u16 = 26;

/// The board and the race panel side by side in `body`: the panel takes
/// [`PANEL_WIDTH`], or, when the board at its widest columns leaves room
/// for a rich panel, everything the board does not use. The board's own
/// width decides, not a fixed one: Virginia Reel's board is half as wide as
/// Indian's, and a fixed width left its race screen's middle empty.
pub(super) fn race_columns(body: Rect, view: &View) -> [Rect; 2] {
    let board = widest_board_width(view);
    let panel = if body.width >= board.saturating_add(screens::RICH_PANEL) {
        body.width - board
    } else {
        PANEL_WIDTH
    };
    Layout::horizontal([Constraint::Min(MIN_WIDTH), Constraint::Length(panel)]).areas(body)
}

/// Where practice draws the board in a terminal of `area`.
pub(super) fn practice_board_area(area: Rect, ui: &Ui) -> Rect {
    body_area(area, ui, PRACTICE_QUIT)
}

/// The lines a rival's compact board takes under the racer's own board:
/// its name line and a board whose piles fold to a few cards.
const RIVAL_BOARD_HEIGHT: u16 = 7;

/// The fewest lines the racer's own board keeps when a rival's board is
/// drawn under it: below this the rival's board is left out.
const OWN_BOARD_MIN_HEIGHT: u16 = 12;

/// Where a racer's screen draws what, in its body.
pub(super) struct RaceLayout {
    /// The racer's own board.
    pub board: Rect,
    /// The rival's compact board, when there is one to draw and room.
    pub rival: Option<Rect>,
    /// The race panel.
    pub panel: Rect,
}

/// A racer's screen in `body`: the own board (`view`), the race panel
/// beside it, and under the board the compact board of a rival when
/// `rival_shown` and the body is tall enough.
pub(super) fn race_layout(body: Rect, view: &View, rival_shown: bool) -> RaceLayout {
    let [left, panel] = race_columns(body, view);
    if rival_shown && left.height >= OWN_BOARD_MIN_HEIGHT + RIVAL_BOARD_HEIGHT {
        let [board, rival] = Layout::vertical([
            Constraint::Min(OWN_BOARD_MIN_HEIGHT),
            Constraint::Length(RIVAL_BOARD_HEIGHT),
        ])
        .areas(left);
        return RaceLayout {
            board,
            rival: Some(rival),
            panel,
        };
    }
    RaceLayout {
        board: left,
        rival: None,
        panel,
    }
}

/// The rival's board a racer sees under its own: only where the server
/// sends rivals' boards (a room with open boards), the one Tab chose.
pub fn shown_rival<'a>(state: &'a crate::race::RaceState, ui: &Ui) -> Option<(u8, &'a View)> {
    let rivals: Vec<(u8, &View)> = state
        .racers
        .iter()
        .filter(|(seat, _)| Some(**seat) != state.seat)
        .filter_map(|(&seat, racer)| Some((seat, racer.board.as_ref()?)))
        .collect();
    if rivals.is_empty() {
        return None;
    }
    rivals.get(ui.watched % rivals.len()).copied()
}

/// Where a race draws the player's board in a terminal of `area`.
pub(super) fn race_board_area(
    area: Rect,
    ui: &Ui,
    state: &crate::race::RaceState,
    view: &View,
) -> Rect {
    let rival_shown = shown_rival(state, ui).is_some();
    race_layout(body_area(area, ui, RACE_QUIT), view, rival_shown).board
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
        let rival = shown_rival(state, ui);
        let layout = race_layout(body, board, rival.is_some());
        frame.render_widget(
            Paragraph::new(board_lines(
                board,
                ui.marks(board),
                layout.board.width,
                layout.board.height,
            )),
            layout.board,
        );
        if let (Some(area), Some((seat, view))) = (layout.rival, rival) {
            draw_rival(frame, state, seat, view, area);
        }
        frame.render_widget(
            Paragraph::new(race_panel_lines(state, now, layout.panel.width))
                .block(Block::default().borders(Borders::LEFT)),
            layout.panel,
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

/// A rival's board, compact, under a line with its name and progress (and
/// how to turn to the next rival's when there are more).
fn draw_rival(
    frame: &mut Frame,
    state: &crate::race::RaceState,
    seat: u8,
    view: &View,
    area: Rect,
) {
    let rivals = state
        .racers
        .iter()
        .filter(|(rival, racer)| Some(**rival) != state.seat && racer.board.is_some())
        .count();
    // The server's public count, as every other bar shows it.
    let done = state
        .racers
        .get(&seat)
        .map_or(0, |racer| usize::from(racer.progress.cards_in_order));
    let mut title = format!(
        " {} · {} ",
        state.name_of(seat),
        count_words(view.game, done)
    );
    if rivals > 1 {
        title.push_str("· tab: next rival ");
    }
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        title,
        Style::default().add_modifier(Modifier::BOLD),
    ));
    let inner = block.inner(area);
    frame.render_widget(
        Paragraph::new(board_lines(
            view,
            Marks::default(),
            inner.width,
            inner.height,
        ))
        .block(block),
        area,
    );
}

/// Every racer's board at the end of the race, replayed from the revealed
/// deal and the published move logs, the cards that lay face down shown
/// face up (empty before the result).
pub fn final_boards(state: &crate::race::RaceState) -> Vec<(u8, View)> {
    final_positions(state)
        .into_iter()
        .map(|(seat, position)| (seat, crate::replay::revealed_view(&position.board())))
        .collect()
}

/// The final boards as the results show them, each with its progress in
/// words as the race counted it (on the board its racer saw).
fn final_boards_shown(state: &crate::race::RaceState) -> Vec<(u8, View, String)> {
    let Some(result) = &state.result else {
        return Vec::new();
    };
    let deal = AnyGame::deal(result.reveal.game, result.reveal.seed).view();
    final_positions(state)
        .into_iter()
        .map(|(seat, position)| {
            let words = progress_words(&deal, &position.view());
            (seat, crate::replay::revealed_view(&position.board()), words)
        })
        .collect()
}

/// Every racer's position at the end of the race, replayed from the
/// revealed deal and the published move logs.
fn final_positions(state: &crate::race::RaceState) -> Vec<(u8, AnyGame)> {
    let Some(result) = &state.result else {
        return Vec::new();
    };
    result
        .logs
        .iter()
        .map(|log| {
            let position = patience_shared::replay::final_position(
                AnyGame::deal(result.reveal.game, result.reveal.seed),
                &log.moves,
            );
            (log.seat, position)
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
        let boards = final_boards_shown(state);
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
    draw_boards(frame, state, ui, final_boards_shown(state), right);
}

/// The width a board needs beside others.
pub(super) const BOARD_WIDTH: u16 = 54;

/// Boards side by side in `area`, each under its racer's name; when they do
/// not fit, as many as fit from the one Tab chose.
fn draw_boards(
    frame: &mut Frame,
    state: &crate::race::RaceState,
    ui: &Ui,
    racers: Vec<(u8, View, String)>,
    area: Rect,
) {
    if racers.is_empty() {
        return;
    }
    let fit = usize::from((area.width / BOARD_WIDTH).max(1));
    let shown: Vec<(u8, View, String)> = if racers.len() <= fit {
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
    for ((seat, view, words), column) in shown.into_iter().zip(columns.iter()) {
        let mut lines = vec![Line::from(Span::styled(
            format!("{} · {words}", state.name_of(seat)),
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
    let racers: Vec<(u8, View, String)> = state
        .racers
        .iter()
        .filter_map(|(&seat, racer)| {
            let view = racer.board.clone()?;
            let words = count_words(view.game, usize::from(racer.progress.cards_in_order));
            Some((seat, view, words))
        })
        .collect();
    draw_boards(frame, state, ui, racers, boards);
}
