//! A day's leaderboard followed live in the terminal UI
//! (`patience leaderboard GAME --follow`), and the compact standings drawn
//! beside the daily attempt.
//!
//! [`draw_live`] and [`standings_lines`] are pure functions of a
//! [`LiveBoard`], snapshot-tested; [`run_on`] is the loop: it reads the
//! keys and the server's updates, which [`LiveBoard::apply`] folds in.

use anyhow::Context as _;
use patience_shared::protocol::{LeaderboardRow, PlayerStatus, ServerMessage};
use ratatui::Frame;
use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::frame::{Context, framed_screen, overlay};
use super::input::Ui;
use super::screens::{bold, dim};
use super::terminal::{Screen, TerminalGuard, terminal_events};
use crate::leaderboard::{HEADER, row_text};
use crate::live::{LiveBoard, change_text, counts_text};
use crate::net::{Connection, NetError};
use crate::race::tenths_text;

/// What leaving asks here: nothing, it is left at once.
const LIVE_QUIT: &str = "";

/// The style of the row that came in last.
fn latest_style() -> Style {
    Style::default()
        .fg(Color::Green)
        .add_modifier(Modifier::BOLD)
}

/// The style of the player's own row.
fn own_style() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

fn row_style(board: &LiveBoard, row: &LeaderboardRow) -> Style {
    if board.latest == Some(row.race_id) {
        latest_style()
    } else if board.is_own(row) {
        own_style()
    } else {
        Style::default()
    }
}

/// Where the live screen is: the first row shown, and the help.
#[derive(Clone, Debug, Default)]
pub struct LiveView {
    /// Rows scrolled past.
    pub scroll: usize,
    /// The help overlay is shown.
    pub help: bool,
    /// The footer: the last change, in words.
    pub message: Option<String>,
}

/// The body of the live screen: the counts, the table from `scroll`, the
/// own row below it when it is not shown, and the state of the day, in
/// `height` lines.
pub fn live_lines(board: &LiveBoard, scroll: usize, height: usize) -> Vec<Line<'static>> {
    let page = &board.page;
    let mut lines = vec![
        Line::from(Span::styled(counts_text(page), bold())),
        Line::from(""),
    ];
    let footer = Line::from(Span::styled(
        if page.day_over {
            "The day is over: the ranking is final."
        } else {
            "Live: rows come in as attempts finish; ranks may change."
        },
        dim(),
    ));
    if page.rows.is_empty() {
        lines.push(Line::from("no finished attempts yet"));
        lines.push(Line::from(""));
        lines.push(footer);
        return lines;
    }
    lines.push(Line::from(Span::styled(HEADER, dim())));
    let own_race = board
        .own_race()
        .or(page.own.as_ref().map(|row| row.race_id));
    let own_outside = page
        .own
        .as_ref()
        .filter(|own| !page.rows.iter().any(|row| row.race_id == own.race_id));
    // The counts, the header, a blank and the footer; two more for the own
    // row below the table.
    let reserved = 5 + if own_outside.is_some() { 2 } else { 0 };
    let room = height.saturating_sub(reserved).max(1);
    let scroll = scroll.min(page.rows.len().saturating_sub(room));
    for row in page.rows.iter().skip(scroll).take(room) {
        lines.push(Line::from(Span::styled(
            row_text(row, own_race == Some(row.race_id)),
            row_style(board, row),
        )));
    }
    if let Some(own) = own_outside {
        lines.push(Line::from("   ⋮"));
        lines.push(Line::from(Span::styled(row_text(own, true), own_style())));
    }
    lines.push(Line::from(""));
    lines.push(footer);
    lines
}

/// Draws the live leaderboard: title, body, the last change and the keys.
pub fn draw_live(frame: &mut Frame, board: &LiveBoard, view: &LiveView) {
    let page = &board.page;
    let heading = format!(
        " Patience Race · {} · daily leaderboard of {} · {} ",
        page.game.title(),
        page.date,
        if page.day_over { "final" } else { "live" }
    );
    let ui = Ui {
        message: view.message.clone().map(|text| (text, false)),
        ..Ui::default()
    };
    let body = framed_screen(frame, heading, &ui, LIVE_QUIT, Context::Leaderboard);
    frame.render_widget(
        Paragraph::new(live_lines(board, view.scroll, usize::from(body.height))),
        body,
    );
    if view.help {
        let lines = vec![
            Line::from(Span::styled("The day's leaderboard, live", bold())),
            Line::from("A finished attempt takes its rank; the rows below it move down."),
            Line::from("The row that came in last is green, your own row cyan."),
            Line::from(""),
            Line::from(vec![
                Span::styled(format!("{:<8}", "↑ ↓"), bold()),
                Span::raw("scroll a row (pgup, pgdn: a page; home: the top)"),
            ]),
            Line::from(vec![
                Span::styled(format!("{:<8}", "ctrl-z"), bold()),
                Span::raw("suspend to the shell; fg comes back"),
            ]),
            Line::from(vec![
                Span::styled(format!("{:<8}", "?"), bold()),
                Span::raw("this help; any key closes it"),
            ]),
            Line::from(vec![
                Span::styled(format!("{:<8}", "q"), bold()),
                Span::raw("leave (so do esc and ctrl-c)"),
            ]),
        ];
        overlay(frame, frame.area(), lines);
    }
}

/// A row in a narrow panel: a mark for the player's own, rank, name, and
/// the time of a win or how the attempt ended.
fn compact_row(row: &LeaderboardRow, own: bool, width: usize) -> String {
    let result = match row.status {
        PlayerStatus::Won => tenths_text(row.elapsed_ms),
        PlayerStatus::OutOfTime => "time".to_string(),
        status => crate::race::status_text(status).to_string(),
    };
    let name_width = width.saturating_sub(4 + 1 + 8 + 1).max(3);
    let name: String = row.name.chars().take(name_width).collect();
    format!(
        "{}{:>3} {name:<name_width$} {result:>8}",
        if own { "▸" } else { " " },
        row.rank
    )
}

/// The day's standings for the panel beside the daily attempt, in at most
/// `height` lines of `width`: the counts, the top rows, and the player's
/// own row in place of the last when it is further down.
pub fn standings_lines(board: &LiveBoard, width: u16, height: usize) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let page = &board.page;
    let mut lines = vec![
        Line::from(Span::styled("today's standings", bold())),
        Line::from(Span::styled(counts_text(page), dim())),
    ];
    if height <= lines.len() {
        lines.truncate(height);
        return lines;
    }
    if page.rows.is_empty() {
        lines.push(Line::from(Span::styled("no finished attempt yet", dim())));
        return lines;
    }
    let room = height - lines.len();
    let own = page.own.as_ref().filter(|own| own.unranked.is_none());
    let own_shown = own.is_none_or(|own| {
        page.rows
            .iter()
            .take(room)
            .any(|row| row.race_id == own.race_id)
    });
    let top = if own_shown {
        room
    } else {
        room.saturating_sub(1)
    };
    for row in page.rows.iter().take(top) {
        lines.push(Line::from(Span::styled(
            compact_row(row, board.is_own(row), width),
            row_style(board, row),
        )));
    }
    if !own_shown && let Some(own) = own {
        lines.push(Line::from(Span::styled(
            compact_row(own, true, width),
            own_style(),
        )));
    }
    lines
}

/// Follows the day in the terminal UI until the player leaves; a broken
/// connection is said once the terminal is restored.
///
/// Cancel-safe: it only reads; dropped early, the terminal is restored
/// and the connection dropped.
pub async fn run(mut connection: Connection, board: LiveBoard) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
    let events = terminal_events();
    let (_, outcome) = run_on(&mut terminal, events, &mut connection, board).await?;
    drop(terminal);
    connection.close().await;
    outcome.context("following the leaderboard")?;
    Ok(())
}

/// The live leaderboard's loop on any [`Screen`]: draws, then waits for a
/// key or a server message, until `q` (or the events end). Returns the
/// board and how the connection fared; drawing failures are errors.
///
/// Cancel-safe: it only reads; dropped early, `connection` is left as it
/// is.
pub async fn run_on(
    screen: &mut impl Screen,
    mut events: tokio::sync::mpsc::Receiver<Event>,
    connection: &mut Connection,
    mut board: LiveBoard,
) -> anyhow::Result<(LiveBoard, Result<(), NetError>)> {
    let mut view = LiveView::default();
    let outcome = loop {
        screen
            .draw_frame(&mut |frame| draw_live(frame, &board, &view))
            .context("drawing")?;
        // A page of rows, for page up and down.
        let page_rows = usize::from(screen.area().height).saturating_sub(10).max(1);
        tokio::select! {
            received = connection.recv() => match received {
                Ok(ServerMessage::LeaderboardUpdate { update }) => {
                    if let Some(change) = board.apply(&update) {
                        view.message = Some(change_text(&board, &change));
                    }
                }
                Ok(ServerMessage::LeaderboardPage { page }) => {
                    if board.replace(page) {
                        view.message = Some("caught up: the whole page again".into());
                    }
                }
                Ok(ServerMessage::ShuttingDown { message }) => {
                    view.message = Some(format!("the server is stopping: {message}"));
                }
                Ok(ServerMessage::Error { message, .. }) => {
                    view.message = Some(format!("error: {message}"));
                }
                // Nothing else was asked on this connection.
                Ok(_) => {}
                Err(error) => break Err(error),
            },
            event = events.recv() => {
                let Some(event) = event else { break Ok(()) };
                let Event::Key(key) = event else { continue };
                if key.kind == KeyEventKind::Release {
                    continue;
                }
                if view.help {
                    view.help = false;
                    continue;
                }
                let control = key.modifiers.contains(KeyModifiers::CONTROL);
                match key.code {
                    KeyCode::Char('z') if control => screen.suspend().context("suspending")?,
                    KeyCode::Char('c') if control => break Ok(()),
                    KeyCode::Char('q') | KeyCode::Esc => break Ok(()),
                    KeyCode::Char('?') => view.help = true,
                    KeyCode::Up | KeyCode::Char('k') => {
                        view.scroll = view.scroll.saturating_sub(1);
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        view.scroll = (view.scroll + 1).min(board.page.rows.len().saturating_sub(1));
                    }
                    KeyCode::PageUp => view.scroll = view.scroll.saturating_sub(page_rows),
                    KeyCode::PageDown => {
                        view.scroll = (view.scroll + page_rows).min(board.page.rows.len().saturating_sub(1));
                    }
                    KeyCode::Home | KeyCode::Char('g') => view.scroll = 0,
                    _ => {}
                }
            }
        }
    };
    Ok((board, outcome))
}
