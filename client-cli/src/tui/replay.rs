//! A replay in the terminal UI: one seat's board at a step, and a panel
//! with the seat, the step, the move just played and, at the end, the
//! standing. Arrows step, space plays and pauses, Tab or a digit picks the
//! seat, `+`/`-` change the speed.
//!
//! [`draw_replay`] is a pure function of the [`Replay`] and its [`Cursor`];
//! [`run`] is the loop, on this thread with no runtime: it waits for a key
//! at most until the next move is due; [`run_on`] is that loop on any
//! screen and event source, for tests.

use anyhow::Context as _;
use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::board::{Marks, board_lines};
use super::draw::PANEL_WIDTH;
use super::frame::{MIN_HEIGHT, MIN_WIDTH, titled_screen, too_small};
use super::screens::{bold, dim, progress_words, status_style};
use super::terminal::{Screen, TerminalGuard};
use crate::race::{status_text, tenths_text};
use crate::replay::{Cursor, Replay, ReplayKey, step_text};

/// What a key does in a replay: `Some(None)` leaves.
pub fn replay_key(key: KeyEvent) -> Option<Option<ReplayKey>> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(None);
    }
    let wanted = match key.code {
        KeyCode::Char('q') | KeyCode::Esc => return Some(None),
        KeyCode::Right | KeyCode::Char('l') => ReplayKey::Forward,
        KeyCode::Left | KeyCode::Char('h') => ReplayKey::Back,
        KeyCode::Home => ReplayKey::First,
        KeyCode::End => ReplayKey::Last,
        KeyCode::Char(' ') => ReplayKey::PlayPause,
        KeyCode::Tab => ReplayKey::NextSeat,
        KeyCode::Char(digit @ '1'..='8') => ReplayKey::Seat(digit as u8 - b'0'),
        KeyCode::Char('+' | '=') => ReplayKey::Faster,
        KeyCode::Char('-') => ReplayKey::Slower,
        _ => return None,
    };
    Some(Some(wanted))
}

/// The panel: seat, step, last move, speed, and the standing at the end.
pub fn replay_panel_lines(replay: &Replay, cursor: &Cursor) -> Vec<Line<'static>> {
    let Some(track) = replay.tracks.get(cursor.track) else {
        return vec![Line::from("no moves were logged")];
    };
    let mut lines = vec![
        Line::from(Span::styled(
            format!("seat {}: {}", track.seat + 1, track.name),
            bold(),
        )),
        Line::from(Span::styled(
            format!(
                "({} seat{})",
                replay.tracks.len(),
                if replay.tracks.len() == 1 { "" } else { "s" }
            ),
            dim(),
        )),
        Line::from(""),
        Line::from(format!("move {} / {}", cursor.step, track.steps.len())),
        Line::from(Span::styled(
            progress_words(&track.start_seen, track.seen(cursor.step)),
            dim(),
        )),
    ];
    match cursor
        .step
        .checked_sub(1)
        .and_then(|index| track.steps.get(index))
    {
        Some(step) => lines.push(Line::from(step_text(cursor.step, step))),
        None => lines.push(Line::from(Span::styled("the deal", dim()))),
    }
    lines.push(Line::from(""));
    lines.push(Line::from(if cursor.playing {
        Span::styled(
            format!("▶ playing, {}/s", speed_text(cursor.speed)),
            Style::default().fg(Color::Green),
        )
    } else {
        Span::styled(format!("⏸ paused ({}/s)", speed_text(cursor.speed)), dim())
    }));
    if cursor.step == track.steps.len() {
        if let Some(broken) = &track.broken {
            lines.push(Line::from(""));
            lines.push(Line::from(Span::styled(
                format!("the log stops: {broken}"),
                Style::default().fg(Color::Red),
            )));
        }
        if let Some(standing) = &track.standing {
            lines.push(Line::from(""));
            lines.push(Line::from(vec![
                Span::raw(format!("{}. ", standing.rank)),
                Span::styled(
                    status_text(standing.status).to_string(),
                    status_style(standing.status),
                ),
            ]));
            lines.push(Line::from(format!(
                "in {}",
                tenths_text(standing.progress.elapsed_ms)
            )));
            lines.push(Line::from(format!(
                "{} cards home",
                standing.progress.cards_home
            )));
        }
    }
    lines
}

fn speed_text(speed: f64) -> String {
    if speed.fract() == 0.0 {
        format!("{speed:.0}")
    } else {
        format!("{speed:.2}").trim_end_matches('0').to_string()
    }
}

/// Draws the replay: title, board and panel, the keys.
pub fn draw_replay(frame: &mut Frame, replay: &Replay, cursor: &Cursor) {
    if too_small(frame, MIN_WIDTH + PANEL_WIDTH, MIN_HEIGHT) {
        return;
    }
    let [body, foot] = titled_screen(frame, format!(" {} ", replay.title()));
    let [left, right] =
        Layout::horizontal([Constraint::Min(40), Constraint::Length(PANEL_WIDTH)]).areas(body);
    if let Some(track) = replay.tracks.get(cursor.track) {
        frame.render_widget(
            Paragraph::new(board_lines(
                track.board(cursor.step),
                Marks::default(),
                left.width,
                left.height,
            )),
            left,
        );
    }
    frame.render_widget(
        Paragraph::new(replay_panel_lines(replay, cursor))
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::LEFT)),
        right,
    );
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            "←→ step · space play/pause · home/end · tab/1-8 seat · +/- speed · q leave",
            dim(),
        ))),
        foot,
    );
}

/// Plays the replay in the terminal until the person leaves.
pub fn run(replay: &Replay, cursor: Cursor) -> anyhow::Result<()> {
    let mut terminal = TerminalGuard::new();
    let events = |wait: std::time::Duration| -> std::io::Result<Option<Event>> {
        if event::poll(wait)? {
            event::read().map(Some)
        } else {
            Ok(None)
        }
    };
    run_on(&mut terminal, events, replay, cursor).map(|_| ())
}

/// The replay's loop on any [`Screen`]: `next_event(wait)` gives the next
/// event within `wait`, or `None` when `wait` passed without one (the next
/// move is then due, if playing). Returns where the cursor was left.
pub fn run_on(
    screen: &mut impl Screen,
    mut next_event: impl FnMut(std::time::Duration) -> std::io::Result<Option<Event>>,
    replay: &Replay,
    mut cursor: Cursor,
) -> anyhow::Result<Cursor> {
    let mut next_move = std::time::Instant::now() + cursor.interval();
    loop {
        screen
            .draw_frame(&mut |frame| draw_replay(frame, replay, &cursor))
            .context("drawing")?;
        let wait = if cursor.playing {
            next_move.saturating_duration_since(std::time::Instant::now())
        } else {
            std::time::Duration::from_secs(3600)
        };
        match next_event(wait).context("reading the keyboard")? {
            Some(Event::Key(key)) => {
                if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('z') {
                    screen.suspend().context("suspending")?;
                    continue;
                }
                match replay_key(key) {
                    Some(None) => return Ok(cursor),
                    Some(Some(wanted)) => {
                        let was_playing = cursor.playing;
                        cursor.key(replay, wanted);
                        if cursor.playing && !was_playing {
                            next_move = std::time::Instant::now() + cursor.interval();
                        }
                    }
                    None => {}
                }
            }
            // A resize or a click: the next frame is drawn at the new size.
            Some(_) => {}
            None if cursor.playing => {
                cursor.tick(replay);
                next_move += cursor.interval();
            }
            None => {}
        }
    }
}
