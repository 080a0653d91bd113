//! The daily attempt in the terminal UI: the board as in a race, and beside
//! it a panel with the server's clock, the moves, the cards home and, once
//! the attempt is over, its result (status, time, rank, race id); the day's
//! standings, followed live on the attempt's connection, under the panel's
//! lines or, on a wide terminal, in a column of their own.
//!
//! Before it, a screen of its own says the terms and waits for the player
//! to start ([`wait_for_start_on`], drawn by [`draw_start`]): no card of
//! the deal has come yet, and the clock starts only with the attempt.
//!
//! [`draw_daily`] is a pure function of the [`DailyState`], the [`Ui`] and
//! an instant, snapshot-tested like the other screens; [`run`] is the event
//! loop. Leaving (`q`) keeps the attempt open on the server, its clock
//! running; `:resign` ends it.

use std::time::Instant;

use anyhow::Context as _;
use patience_shared::protocol::{ClientMessage, ServerMessage};
use ratatui::Frame;
use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use patience_shared::game::GameKind;
use ratatui::layout::Rect;

use super::board::board_lines;
use super::draw::PANEL_WIDTH;
use super::frame::{
    Context, MIN_HEIGHT, MIN_WIDTH, body_area, framed_screen, overlay, titled_screen, too_small,
};
use super::input::{Action, Ui};
use super::live::standings_lines;
use super::screens::{bar, bold, dim, help_lines, status_style};
use super::terminal::{Screen, TerminalGuard, terminal_events};
use crate::daily::{self, Attempt, DailyError, DailyState, Opened, result_lines, start_lines};
use crate::leaderboard::unranked_short_text;
use crate::net::Connection;
use crate::race::{clock_text, status_text, tenths_text};

/// What leaving asks during the daily.
const DAILY_QUIT: &str = "Leave? The attempt stays open and its clock runs. (y/n)";

/// The panel beside the board: clock, progress, and the result at the end.
pub fn daily_panel_lines(state: &DailyState, now: Instant, width: u16) -> Vec<Line<'static>> {
    let Some(attempt) = &state.attempt else {
        return vec![Line::from("opening the attempt…")];
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!("⏱ {}", clock_text(state.elapsed(now))), bold()),
            Span::styled(
                format!(
                    " / {}",
                    clock_text(std::time::Duration::from_millis(attempt.time_limit_ms))
                ),
                dim(),
            ),
        ]),
        Line::from(Span::styled("the server's clock", dim())),
    ];
    if let Some((rank, among)) = state.rank_if_won(now) {
        let unranked = attempt.unranked.is_some();
        lines.push(Line::from(vec![
            Span::styled(
                if unranked {
                    "unranked, would place "
                } else {
                    "win now: "
                },
                dim(),
            ),
            Span::styled(format!("rank {rank}"), bold()),
            Span::styled(format!(" of {among}"), dim()),
        ]));
    }
    lines.push(Line::from(""));
    let progress = state
        .result
        .as_ref()
        .map_or(attempt.progress, |result| result.progress);
    let bar_width = usize::from(width).saturating_sub(8).clamp(4, 30);
    // Three Blind Mice counts the cards in suit order on a King, which
    // move as the runs are built, not only the runs home: the count the
    // server measured, as every bar draws it.
    let done = usize::from(progress.cards_in_order);
    lines.push(Line::from(vec![
        Span::styled(
            bar(done, attempt.game.card_count(), bar_width),
            Style::default().fg(Color::Green),
        ),
        Span::raw(format!(" {done:>3}")),
    ]));
    if attempt.game == GameKind::ThreeBlindMice {
        lines.push(Line::from(Span::styled(
            format!("in suit order · {} home", progress.cards_home),
            dim(),
        )));
    }
    lines.push(Line::from(format!(
        "{} move{}",
        progress.moves,
        if progress.moves == 1 { "" } else { "s" }
    )));
    if attempt.resumed {
        lines.push(Line::from(Span::styled("resumed", dim())));
    }
    if state.stuck && state.result.is_none() {
        lines.push(Line::from(Span::styled(
            "no legal move left",
            Style::default().fg(Color::Yellow),
        )));
    }
    match &state.result {
        Some(result) => {
            lines.push(Line::from(""));
            lines.push(Line::from(Span::styled(
                status_text(result.status).to_string(),
                status_style(result.status),
            )));
            lines.push(Line::from(format!(
                "time  {}",
                tenths_text(result.progress.elapsed_ms)
            )));
            match result.unranked {
                None => {
                    lines.push(Line::from(format!(
                        "rank  {} of {}",
                        result.rank, result.finishers
                    )));
                    lines.push(Line::from(Span::styled("(finishers so far)", dim())));
                }
                Some(unranked) => {
                    lines.push(Line::from(Span::styled(
                        "unranked",
                        Style::default().fg(Color::Yellow),
                    )));
                    lines.push(Line::from(Span::styled(
                        unranked_short_text(unranked),
                        dim(),
                    )));
                    lines.push(Line::from(format!(
                        "would rank {} of {}",
                        result.rank,
                        result.finishers.saturating_add(1)
                    )));
                }
            }
            lines.push(Line::from(format!("race  {}", result.race_id)));
            lines.push(Line::from(""));
            lines.push(Line::from(Span::styled("Watch it again:", dim())));
            lines.push(Line::from(format!("patience replay {}", result.race_id)));
            lines.push(Line::from(Span::styled("Press q to leave.", dim())));
        }
        None => {
            lines.push(Line::from(""));
            lines.push(Line::from(Span::styled(":resign ends it", dim())));
            lines.push(Line::from(Span::styled("q leaves it open", dim())));
        }
    }
    lines
}

/// Columns of the day's standings, beside the panel on a wide terminal.
pub const STANDINGS_WIDTH: u16 = 28;

/// Columns the board keeps beyond its least when the standings take a
/// column of their own: below 108 in all, they go under the panel.
const ROOMY_BOARD: u16 = 14;

/// The fewest lines the standings take under the panel's on a narrower one
/// (a title, the counts and a row); fewer left, and they are not drawn.
const STANDINGS_MIN_LINES: usize = 3;

/// Draws the panel, and the day's standings when they are followed: in a
/// column of their own when the terminal is wide enough, else under the
/// panel's lines in the room left.
fn draw_panel_and_standings(frame: &mut Frame, state: &DailyState, now: Instant, right: Rect) {
    let panel = daily_panel_lines(state, now, right.width);
    let bordered = Block::default().borders(Borders::LEFT);
    let Some(standings) = &state.standings else {
        frame.render_widget(Paragraph::new(panel).block(bordered), right);
        return;
    };
    if right.width >= PANEL_WIDTH + STANDINGS_WIDTH {
        let [panel_area, standings_area] = Layout::horizontal([
            Constraint::Min(PANEL_WIDTH),
            Constraint::Length(STANDINGS_WIDTH),
        ])
        .areas(right);
        frame.render_widget(Paragraph::new(panel).block(bordered.clone()), panel_area);
        frame.render_widget(
            Paragraph::new(standings_lines(
                standings,
                standings_area.width.saturating_sub(1),
                usize::from(standings_area.height),
            ))
            .block(bordered),
            standings_area,
        );
        return;
    }
    let left = usize::from(right.height).saturating_sub(panel.len() + 1);
    let mut lines = panel;
    if left >= STANDINGS_MIN_LINES {
        lines.push(Line::from(""));
        lines.extend(standings_lines(
            standings,
            right.width.saturating_sub(1),
            left,
        ));
    }
    frame.render_widget(Paragraph::new(lines).block(bordered), right);
}

/// Draws the daily: title, board and panel, message and key bar.
pub fn draw_daily(frame: &mut Frame, state: &DailyState, ui: &Ui, now: Instant) {
    let area = frame.area();
    if too_small(frame, MIN_WIDTH + PANEL_WIDTH, MIN_HEIGHT) {
        return;
    }
    let heading = match &state.attempt {
        Some(attempt) => format!(
            " Patience Race · {} · daily deal of {} ",
            attempt.game.title(),
            attempt.date
        ),
        None => " Patience Race · daily deal ".to_string(),
    };
    let context = if state.result.is_some() {
        Context::DailyOver
    } else {
        Context::Daily
    };
    let body = framed_screen(frame, heading, ui, DAILY_QUIT, context);
    let [left, right] = daily_columns(body, state.standings.is_some());
    if let Some(board) = state.board() {
        frame.render_widget(
            Paragraph::new(board_lines(board, ui.marks(board), left.width, left.height)),
            left,
        );
    }
    draw_panel_and_standings(frame, state, now, right);
    if ui.help {
        let game = state
            .attempt
            .as_ref()
            .map_or(GameKind::ThreeBlindMice, |attempt| attempt.game);
        overlay(frame, area, help_lines(game, context));
    }
}

/// The board and the panel side by side; the panel takes the standings'
/// column too when there are standings and the board keeps a roomy width
/// beside both.
fn daily_columns(body: Rect, standings: bool) -> [Rect; 2] {
    let panel =
        if standings && body.width >= MIN_WIDTH + ROOMY_BOARD + PANEL_WIDTH + STANDINGS_WIDTH {
            PANEL_WIDTH + STANDINGS_WIDTH
        } else {
            PANEL_WIDTH
        };
    Layout::horizontal([Constraint::Min(MIN_WIDTH), Constraint::Length(panel)]).areas(body)
}

/// Where the daily draws the board in a terminal of `area`.
fn daily_board_area(area: Rect, ui: &Ui, state: &DailyState) -> Rect {
    daily_columns(body_area(area, ui, DAILY_QUIT), state.standings.is_some())[0]
}

/// The screen before the attempt: its terms, and the keys that start it
/// or leave.
pub fn draw_start(frame: &mut Frame, game: GameKind) {
    let [body, foot] = titled_screen(frame, " Patience Race · daily deal ".to_string());
    let lines: Vec<Line<'static>> = start_lines(game)
        .into_iter()
        .flat_map(|line| [Line::from(line), Line::from("")])
        .collect();
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL)),
        body,
    );
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(" Enter ", bold()),
            Span::raw("start the clock  "),
            Span::styled(" q ", bold()),
            Span::raw("leave, nothing started"),
        ])),
        foot,
    );
}

/// Shows the terms until the player starts (Enter or `s`) or leaves (`q`,
/// Esc, Ctrl-C, or the end of `events`), reading the connection meanwhile
/// so that it answers the server's pings. Whether to start; a connection
/// lost before is an error.
///
/// Cancel-safe: nothing is sent, so dropped early nothing has started.
pub async fn wait_for_start_on(
    screen: &mut impl Screen,
    events: &mut tokio::sync::mpsc::Receiver<Event>,
    connection: &mut Connection,
    game: GameKind,
) -> anyhow::Result<Result<bool, DailyError>> {
    loop {
        screen
            .draw_frame(&mut |frame| draw_start(frame, game))
            .context("drawing")?;
        tokio::select! {
            received = connection.recv() => {
                if let Err(error) = received {
                    return Ok(Err(DailyError::Net(error)));
                }
            }
            event = events.recv() => match event {
                None => return Ok(Ok(false)),
                Some(Event::Key(key)) if key.kind != KeyEventKind::Release => match key.code {
                    KeyCode::Enter | KeyCode::Char('s') => return Ok(Ok(true)),
                    KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        return Ok(Ok(false));
                    }
                    KeyCode::Char('q') | KeyCode::Esc => return Ok(Ok(false)),
                    _ => {}
                },
                Some(_) => {}
            },
        }
    }
}

/// Shows the terms, opens the attempt once the player starts (its clock
/// starts then), and plays it in the terminal UI until it ends and the
/// player leaves, or the player leaves it open. Prints the result (or how
/// to come back, or the day's result when the deal was played already)
/// once the terminal is restored.
///
/// Cancel-safe in effect: dropped early, the terminal is restored and the
/// connection dropped; an attempt opened stays open, as after `q`.
pub async fn run(mut connection: Connection, game: GameKind) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
    let mut events = terminal_events();
    if !wait_for_start_on(&mut terminal, &mut events, &mut connection, game).await?? {
        drop(terminal);
        connection.close().await;
        println!("Not started: the clock has not run.");
        return Ok(());
    }
    let Attempt {
        mut connection,
        state,
        notes,
    } = match daily::start(connection, game).await? {
        Opened::Attempt(attempt) => *attempt,
        Opened::AlreadyPlayed { notes } => {
            drop(terminal);
            for note in notes {
                println!("{note}");
            }
            return Ok(());
        }
    };
    let (state, outcome) = run_on(&mut terminal, events, &mut connection, state, notes).await?;
    drop(terminal);
    connection.close().await;
    outcome?;
    print_end(&state);
    Ok(())
}

/// The daily's loop on any [`Screen`], reading `events` and the server
/// until the attempt ends and the player leaves, or the player leaves it
/// open. Returns the state and how the connection fared; drawing and
/// suspending failures are errors.
///
/// Cancel-safe in effect: dropped early, moves already sent stand and
/// their answers are left unread on `connection`.
pub async fn run_on(
    screen: &mut impl Screen,
    mut events: tokio::sync::mpsc::Receiver<Event>,
    connection: &mut Connection,
    mut state: DailyState,
    notes: Vec<String>,
) -> anyhow::Result<(DailyState, Result<(), DailyError>)> {
    let mut ui = Ui {
        message: notes.last().map(|note| (note.clone(), false)),
        ..Ui::default()
    };
    // The day's standings come on this connection, between the answers.
    if let Some(follow) = state.follow_request()
        && let Err(error) = connection.send(&follow).await
    {
        return Ok((state, Err(DailyError::Net(error))));
    }
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    let outcome: Result<(), DailyError> = loop {
        screen
            .draw_frame(&mut |frame| draw_daily(frame, &state, &ui, Instant::now()))
            .context("drawing")?;
        tokio::select! {
            received = connection.recv() => match received {
                Ok(message) => {
                    let rejected = matches!(message, ServerMessage::MoveRejected { .. });
                    if let ServerMessage::MoveAccepted { effects, .. } = &message {
                        ui.show_effects(effects);
                        ui.picked = None;
                    }
                    let notes = state.apply(message, Instant::now());
                    if let Some(line) = notes.first() {
                        ui.say(line.clone(), rejected);
                    }
                }
                Err(error) => break Err(DailyError::Net(error)),
            },
            event = events.recv() => {
                let board = state.board().cloned();
                // Once the attempt is over there is nothing to lose.
                ui.leaving_is_free = state.result.is_some();
                let action = match (event, &board) {
                    (Some(Event::Key(key)), _) => ui.key(key, board.as_ref(), false),
                    (Some(Event::Mouse(mouse)), Some(view)) => {
                        match ui.mouse(&mouse, view, daily_board_area(screen.area(), &ui, &state)) {
                            Some(action) => action,
                            None => continue,
                        }
                    }
                    (None, _) => break Ok(()),
                    _ => continue,
                };
                let message = match action {
                    Action::None | Action::StartEarly | Action::Rematch(_) | Action::QuickRaceAnswer(_) => None,
                    Action::Suspend => {
                        screen.suspend().context("suspending")?;
                        None
                    }
                    Action::Quit => break Ok(()),
                    Action::Undo => {
                        ui.say("the daily deal has no undo", true);
                        None
                    }
                    Action::Hint => {
                        ui.say("hints are for practice only", true);
                        None
                    }
                    Action::Resign if state.can_move() => Some(ClientMessage::Resign),
                    Action::Move(text) if state.can_move() => {
                        Some(ClientMessage::Move { text, seat: None })
                    }
                    Action::Resign | Action::Move(_) => {
                        ui.say("the attempt is over: q leaves", true);
                        None
                    }
                };
                if let Some(message) = message
                    && let Err(error) = connection.send(&message).await
                {
                    break Err(DailyError::Net(error));
                }
            }
            _ = tick.tick() => {}
        }
    };
    Ok((state, outcome))
}

/// What the player reads once the terminal is restored: the result, or how
/// to take the attempt back.
fn print_end(state: &DailyState) {
    let game = state
        .attempt
        .as_ref()
        .map_or("GAME", |attempt| attempt.game.slug());
    match (&state.result, &state.closed) {
        (Some(result), _) => {
            for line in result_lines(result) {
                println!("{line}");
            }
        }
        (None, Some(reason)) if state.replaced => {
            println!("Another client took the attempt over ({reason}).")
        }
        (None, Some(reason)) => println!(
            "The server closed the connection ({reason}); the attempt stays open: `patience daily {game}` takes it back."
        ),
        (None, None) => println!(
            "The attempt stays open and its clock runs: `patience daily {game}` takes it back."
        ),
    }
}
