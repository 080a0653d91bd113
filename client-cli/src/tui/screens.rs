//! The parts of the screen around the board: the lobby, the race panel with
//! each racer's progress, the watcher's progress table, the results table,
//! the help.

use std::time::{Duration, Instant};

use patience_shared::protocol::{Phase, PlayerStatus};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::race::{RaceState, clock_text, progress_text, status_text};

pub(super) fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub(super) fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub(super) fn status_style(status: PlayerStatus) -> Style {
    match status {
        PlayerStatus::Won => Style::default()
            .fg(Color::Green)
            .add_modifier(Modifier::BOLD),
        PlayerStatus::Racing | PlayerStatus::Waiting => Style::default(),
        _ => Style::default().fg(Color::Yellow),
    }
}

/// The lobby: the room's code, its players, and the countdown.
pub fn lobby_lines(state: &RaceState, now: Instant) -> Vec<Line<'static>> {
    let Some(room) = &state.room else {
        return vec![Line::from("connecting...")];
    };
    let mut lines = vec![
        Line::from(vec![
            Span::raw("Room "),
            Span::styled(room.code.clone(), bold().fg(Color::Cyan)),
            Span::raw(format!(
                " · {} · {}/{} players · {}",
                room.game.title(),
                room.players.len(),
                room.max_players,
                if room.public { "public" } else { "private" }
            )),
        ]),
        Line::from(Span::styled(
            if room.options.open_boards {
                "Open boards: everyone in the room sees every board and move live."
            } else {
                "Boards stay private until the race ends; others see only your progress."
            },
            if room.options.open_boards {
                Style::default().fg(Color::Yellow)
            } else {
                dim()
            },
        )),
        Line::from(Span::styled(
            format!("Others join with:  patience join {}", room.code),
            dim(),
        )),
        Line::from(""),
    ];
    for player in &room.players {
        let mut spans = vec![Span::raw(format!("  {}. ", player.seat + 1))];
        spans.push(Span::styled(player.name.clone(), bold()));
        if room.owner == Some(player.seat) {
            spans.push(Span::styled("  (owner)", dim()));
        }
        if state.seat == Some(player.seat) {
            spans.push(Span::styled("  (you)", dim()));
        }
        if !player.connected {
            spans.push(Span::styled(
                "  reconnecting…",
                Style::default().fg(Color::Yellow),
            ));
        }
        lines.push(Line::from(spans));
    }
    for seat in room.players.len()..usize::from(room.max_players) {
        lines.push(Line::from(Span::styled(
            format!("  {}. (free seat)", seat + 1),
            dim(),
        )));
    }
    lines.push(Line::from(""));
    match (room.phase, state.countdown_ends) {
        (Phase::Dealing, _) => lines.push(Line::from(Span::styled(
            "Dealing: the solver is proving a deal winnable; the countdown follows.",
            bold().fg(Color::Yellow),
        ))),
        (Phase::Countdown, Some(ends)) => lines.push(Line::from(Span::styled(
            format!(
                "The race starts in {:.1} s",
                ends.saturating_duration_since(now).as_secs_f64()
            ),
            bold().fg(Color::Green),
        ))),
        _ if room.owner.is_some() && room.owner == state.seat => {
            lines.push(Line::from("Waiting for players. Press s to start now."))
        }
        _ => lines.push(Line::from("Waiting for players.")),
    }
    lines
}

/// Whether a seat's connection is up, as the room last said.
fn connected(state: &RaceState, seat: u8) -> bool {
    state
        .room
        .as_ref()
        .and_then(|room| room.players.iter().find(|player| player.seat == seat))
        .is_none_or(|player| player.connected)
}

/// A progress bar of `width` cells for `done` out of `total`.
pub(super) fn bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width).checked_div(total).unwrap_or(0).min(width);
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

/// The race's clock and time limit at `now`, once the race has started.
fn clock_line(state: &RaceState, now: Instant) -> Option<Line<'static>> {
    let (started, limit) = state.race_clock?;
    let elapsed = now.saturating_duration_since(started);
    Some(Line::from(vec![
        Span::styled(format!("⏱ {}", clock_text(elapsed)), bold()),
        Span::styled(format!(" / {}", clock_text(limit)), dim()),
    ]))
}

/// The race panel: the clock, then each racer's bar, moves and state.
pub fn race_panel_lines(state: &RaceState, now: Instant, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(clock) = clock_line(state, now) {
        lines.extend([clock, Line::from("")]);
    }
    let total = state
        .room
        .as_ref()
        .map_or(52, |room| room.game.card_count());
    let bar_width = usize::from(width).saturating_sub(8).clamp(4, 30);
    for (&seat, racer) in &state.racers {
        let connected = connected(state, seat);
        let mut name = state.name_of(seat);
        if state.seat == Some(seat) {
            name.push_str(" (you)");
        }
        lines.push(Line::from(Span::styled(name, bold())));
        lines.push(Line::from(vec![
            Span::styled(
                bar(usize::from(racer.progress.cards_home), total, bar_width),
                Style::default().fg(Color::Green),
            ),
            Span::raw(format!(" {:>3}", racer.progress.cards_home)),
        ]));
        let status = if connected || racer.status != PlayerStatus::Racing {
            status_text(racer.status)
        } else {
            "reconnecting"
        };
        lines.push(Line::from(vec![
            Span::raw(format!(
                "{} move{} · ",
                racer.progress.moves,
                if racer.progress.moves == 1 { "" } else { "s" }
            )),
            Span::styled(status.to_string(), status_style(racer.status)),
        ]));
        let mut counts = Vec::new();
        if racer.progress.cards_uncovered > 0 {
            counts.push(format!("{} uncovered", racer.progress.cards_uncovered));
        }
        if racer.progress.stock_turned > 0 {
            counts.push(format!("{} from stock", racer.progress.stock_turned));
        }
        if !counts.is_empty() {
            lines.push(Line::from(Span::styled(counts.join(" · "), dim())));
        }
    }
    lines
}

/// What a watcher sees of a race without open boards: the clock, and per
/// racer its status, a bar of cards home and its counts. The boards come
/// with the result.
pub fn watch_table_lines(state: &RaceState, now: Instant) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = clock_line(state, now).into_iter().collect();
    lines.push(Line::from(Span::styled(
        "Every racer plays the same deal, so boards are shown when the race ends.",
        dim(),
    )));
    lines.push(Line::from(""));
    let total = state
        .room
        .as_ref()
        .map_or(52, |room| room.game.card_count());
    for (&seat, racer) in &state.racers {
        let mut name = state.name_of(seat);
        if state.seat == Some(seat) {
            name.push_str(" (you)");
        }
        let status = if racer.status == PlayerStatus::Racing && !connected(state, seat) {
            "reconnecting"
        } else {
            status_text(racer.status)
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<20} "), bold()),
            Span::styled(status.to_string(), status_style(racer.status)),
            Span::styled(
                format!(
                    "  {}",
                    clock_text(Duration::from_millis(racer.progress.elapsed_ms))
                ),
                dim(),
            ),
        ]));
        lines.push(Line::from(vec![
            Span::styled(
                bar(usize::from(racer.progress.cards_home), total, 30),
                Style::default().fg(Color::Green),
            ),
            Span::raw(format!(" {}", progress_text(&racer.progress))),
        ]));
        lines.push(Line::from(""));
    }
    lines
}

/// The results: standings, the revealed deal, and what verified.
pub fn results_lines(state: &RaceState) -> Vec<Line<'static>> {
    let Some(result) = &state.result else {
        return Vec::new();
    };
    let mut lines = vec![
        Line::from(Span::styled("The race is over", bold())),
        Line::from(""),
        Line::from(Span::styled(
            format!(
                "{:<4} {:<16} {:<16} {:>5} {:>6} {:>7}",
                "rank", "name", "result", "home", "moves", "time"
            ),
            dim(),
        )),
    ];
    for standing in &result.standings {
        lines.push(Line::from(vec![
            Span::raw(format!("{:<4} {:<16} ", standing.rank, standing.name)),
            Span::styled(
                format!("{:<16}", status_text(standing.status)),
                status_style(standing.status),
            ),
            Span::raw(format!(
                " {:>5} {:>6} {:>7}",
                standing.progress.cards_home,
                standing.progress.moves,
                clock_text(Duration::from_millis(standing.progress.elapsed_ms))
            )),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(format!(
        "Deal: {} seed {}",
        result.reveal.game.title(),
        result.reveal.seed
    )));
    if result.open_boards {
        lines.push(Line::from(Span::styled(
            "Open boards: every board was shown live during this race.",
            Style::default().fg(Color::Yellow),
        )));
    }
    match &state.verification {
        Some(verification) => {
            let mark = |ok: bool| {
                if ok {
                    Span::styled("✓ verified", Style::default().fg(Color::Green))
                } else {
                    Span::styled("✗ FAILED", Style::default().fg(Color::Red))
                }
            };
            lines.push(Line::from(vec![
                Span::raw("Deal matches its commitment: "),
                mark(verification.commitment_ok),
            ]));
            for (&seat, &ok) in &verification.logs_ok {
                lines.push(Line::from(vec![
                    Span::raw(format!("Moves of {}: ", state.name_of(seat))),
                    mark(ok),
                ]));
            }
        }
        None => lines.push(Line::from("(no commitment seen: nothing to verify)")),
    }
    if let Some(race_id) = result.race_id {
        lines.push(Line::from(format!(
            "Watch it again: patience replay {race_id}"
        )));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled("Press q to leave.", dim())));
    lines
}

/// The keys.
pub fn help_lines(practice: bool) -> Vec<Line<'static>> {
    let mut text = vec![
        "Keys",
        "",
        "←/→         move between piles (↑/↓: deeper cards, rows)",
        "1..9, 0     jump to pile (reserve) 1..10",
        "c f w s     cells, foundations, waste, stock",
        "space       send the card under the cursor to its natural place",
        "enter       pick up the card, then drop it on another pile",
        ":           type a move in the notation (7h>4, 3>f, s, r3>B4, d)",
        "u           undo (where the room allows it)",
        "esc         cancel",
        "tab         next board (watching)",
        "?           this help",
        "q           leave (asks first; resigns a race)",
    ];
    if practice {
        text.insert(10, "h           hint: the solver's next move");
    } else {
        text.insert(10, "s           start now (room owner, in the lobby)");
    }
    text.into_iter().map(Line::from).collect()
}
