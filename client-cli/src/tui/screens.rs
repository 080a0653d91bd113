//! The parts of the screen around the board: the lobby, the race panel with
//! each racer's progress, the watcher's progress table, the results table,
//! the help.

use std::time::{Duration, Instant};

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{Phase, PlayerStatus, RematchOffer, RematchStatus, cards_in_order};
use patience_shared::rules::{Rules, View, Zone};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::frame::Context;
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
            } else if state.seat.is_some() {
                "Boards stay private until the race ends; others see only your progress."
            } else {
                "Boards stay private until the race ends; you will see each racer's progress."
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
    if let Some(series) = state.series_line() {
        lines.extend([Line::from(Span::styled(series, bold())), Line::from("")]);
    }
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
    if let Some(wait) = &state.quick_wait {
        lines.push(Line::from(Span::styled(wait.line(), dim())));
        if wait.bot_offer {
            lines.push(Line::from(Span::styled(
                "No rival yet. Press b to race a server bot now, or w to keep waiting.",
                bold().fg(Color::Yellow),
            )));
        }
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

/// The cards of `view`, a board dealt as `deal`, that are where a win
/// needs them ([`cards_in_order`]): the measure every progress bar draws,
/// for every racer and every viewer alike.
pub fn cards_in_place(deal: &View, view: &View) -> usize {
    usize::from(cards_in_order(deal, view))
}

/// What the bars of `game` count, in words.
pub fn in_order_words(game: GameKind) -> &'static str {
    if game == GameKind::ThreeBlindMice {
        "in suit order"
    } else {
        "home"
    }
}

/// How far a board dealt as `deal` has come, in words: "14/52 in suit
/// order" for Three Blind Mice, "31/104 home" for the others.
pub fn progress_words(deal: &View, view: &View) -> String {
    count_words(view.game, cards_in_place(deal, view))
}

/// `done` cards of `game` in their winning order, in words.
pub fn count_words(game: GameKind, done: usize) -> String {
    let total = game.card_count();
    format!("{done}/{total} {}", in_order_words(game))
}

/// The face-down cards a deal of `game` has outside the stock.
fn dealt_face_down(game: GameKind) -> u16 {
    AnyGame::deal(game, 0)
        .view()
        .zones
        .iter()
        .filter(|zone| zone.zone != Zone::Stock)
        .map(|zone| u16::from(zone.hidden))
        .sum()
}

/// The panel is rich from this width on: every count on lines of its own.
pub const RICH_PANEL: u16 = 40;

/// The race panel: the clock, then each racer's bar, moves and state; on a
/// wide panel also its counts (home, runs, uncovered, stock) and its pace.
/// A rival's board counts only where this client may see it (open boards);
/// otherwise only the counts every racer's progress publishes.
pub fn race_panel_lines(state: &RaceState, now: Instant, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(clock) = clock_line(state, now) {
        lines.extend([clock, Line::from("")]);
    }
    if let Some(series) = state.series_line() {
        lines.extend([Line::from(Span::styled(series, bold())), Line::from("")]);
    }
    let game = state
        .room
        .as_ref()
        .map_or(GameKind::ThreeBlindMice, |room| room.game);
    let total = game.card_count();
    let face_down = dealt_face_down(game);
    let rich = width >= RICH_PANEL;
    let bar_width = usize::from(width)
        .saturating_sub(if rich { 22 } else { 8 })
        .clamp(4, 40);
    for (&seat, racer) in &state.racers {
        let connected = connected(state, seat);
        let mut name = state.name_of(seat);
        if state.seat == Some(seat) {
            name.push_str(" (you)");
        }
        let status = if connected || racer.status != PlayerStatus::Racing {
            status_text(racer.status)
        } else {
            "reconnecting"
        };
        let progress = &racer.progress;
        // One measure for every bar, one's own and a rival's alike.
        let done = usize::from(progress.cards_in_order);
        let what = in_order_words(game);
        let moves = format!(
            "{} move{}",
            progress.moves,
            if progress.moves == 1 { "" } else { "s" }
        );
        if !rich {
            lines.push(Line::from(Span::styled(name, bold())));
            lines.push(Line::from(vec![
                Span::styled(
                    bar(done, total, bar_width),
                    Style::default().fg(Color::Green),
                ),
                Span::raw(format!(" {done:>3}")),
            ]));
            lines.push(Line::from(vec![
                Span::raw(format!("{moves} · ")),
                Span::styled(status.to_string(), status_style(racer.status)),
            ]));
            let mut counts = Vec::new();
            if progress.cards_uncovered > 0 {
                counts.push(format!("{} uncovered", progress.cards_uncovered));
            }
            if progress.stock_turned > 0 {
                counts.push(format!("{} from stock", progress.stock_turned));
            }
            if !counts.is_empty() {
                lines.push(Line::from(Span::styled(counts.join(" · "), dim())));
            }
            continue;
        }
        lines.push(Line::from(vec![
            Span::styled(name, bold()),
            Span::raw("  "),
            Span::styled(status.to_string(), status_style(racer.status)),
        ]));
        lines.push(Line::from(vec![
            Span::styled(
                bar(done, total, bar_width),
                Style::default().fg(Color::Green),
            ),
            Span::raw(format!(" {done}/{total} {what}")),
        ]));
        let mut counts = vec![format!("{} home", progress.cards_home)];
        if progress.runs_home > 0 {
            counts.push(format!(
                "{} run{}",
                progress.runs_home,
                if progress.runs_home == 1 { "" } else { "s" }
            ));
        }
        if face_down > 0 {
            counts.push(format!(
                "{}/{face_down} uncovered",
                progress.cards_uncovered
            ));
        }
        if game != GameKind::ThreeBlindMice {
            counts.push(format!("{} from stock", progress.stock_turned));
        }
        lines.push(Line::from(Span::styled(counts.join(" · "), dim())));
        let mut pace = vec![moves];
        if progress.elapsed_ms > 0 {
            pace.push(format!(
                "last at {}",
                clock_text(Duration::from_millis(progress.elapsed_ms))
            ));
            let per_minute = f64::from(progress.moves) * 60_000.0 / progress.elapsed_ms as f64;
            pace.push(format!("{per_minute:.0}/min"));
        }
        lines.push(Line::from(Span::styled(pace.join(" · "), dim())));
        lines.push(Line::from(""));
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
    let game = state
        .room
        .as_ref()
        .map_or(GameKind::ThreeBlindMice, |room| room.game);
    let total = game.card_count();
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
                bar(usize::from(racer.progress.cards_in_order), total, 30),
                Style::default().fg(Color::Green),
            ),
            Span::raw(format!(
                " {}/{total} {} · {}",
                racer.progress.cards_in_order,
                in_order_words(game),
                progress_text(&racer.progress)
            )),
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
    let game = result.reveal.game;
    let in_order = if game == GameKind::ThreeBlindMice {
        "in order"
    } else {
        "home"
    };
    let mut lines = vec![
        Line::from(Span::styled("The race is over", bold())),
        Line::from(""),
        Line::from(Span::styled(
            format!(
                "  {:<4} {:<16} {:<16} {:>8} {:>6} {:>7}",
                "rank", "name", "result", in_order, "moves", "time"
            ),
            dim(),
        )),
    ];
    for standing in &result.standings {
        let own = state.seat == Some(standing.seat);
        let name_style = if own { bold() } else { Style::default() };
        let name = if own {
            format!("{} (you)", standing.name)
        } else {
            standing.name.clone()
        };
        lines.push(Line::from(vec![
            Span::styled(if own { "▶ " } else { "  " }, name_style),
            Span::styled(format!("{:<4} {:<16} ", standing.rank, name), name_style),
            Span::styled(
                format!("{:<16}", status_text(standing.status)),
                status_style(standing.status),
            ),
            Span::raw(format!(
                " {:>8} {:>6} {:>7}",
                standing.progress.cards_in_order,
                standing.progress.moves,
                clock_text(Duration::from_millis(standing.progress.elapsed_ms))
            )),
        ]));
    }
    lines.extend(
        standings_order_words(game)
            .into_iter()
            .map(|text| Line::from(Span::styled(text, dim()))),
    );
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
        if let Some(page) = state.race_page(race_id) {
            lines.push(Line::from(vec![
                Span::raw("Its page, to keep or share: "),
                Span::styled(page, Style::default().fg(Color::Cyan)),
            ]));
        }
        lines.push(Line::from(format!(
            "Watch it again: patience replay {race_id}"
        )));
    }
    if let Some(series) = state.series_line() {
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled(series, bold())));
    }
    lines.push(Line::from(""));
    if let Some(offer) = &state.rematch {
        lines.push(Line::from(rematch_text(state, offer)));
    }
    lines.push(Line::from(Span::styled(
        if state.may_rematch() {
            "Press r for a rematch (n declines), q to leave."
        } else {
            "Press q to leave."
        },
        dim(),
    )));
    lines
}

/// How the results are ordered, in words, for under the table.
pub fn standings_order_words(game: GameKind) -> [String; 3] {
    [
        format!(
            "Order: winners by time, then most cards {};",
            in_order_words(game)
        ),
        "at equal cards, playing to the end beats giving up, then lasting longer.".to_string(),
        "Time: when each racer's race ended (a win, a resignation, the limit).".to_string(),
    ]
}

/// Where a rematch stands, in words.
fn rematch_text(state: &RaceState, offer: &RematchOffer) -> String {
    let names = |seats: &[u8]| {
        seats
            .iter()
            .map(|&seat| state.name_of(seat))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match offer.status {
        RematchStatus::Open => {
            let mut text = format!("Rematch: {} accepted", names(&offer.accepted));
            if !offer.waiting.is_empty() {
                text.push_str(&format!("; waiting for {}", names(&offer.waiting)));
            }
            text
        }
        RematchStatus::Ready => "Rematch: everyone accepted; the new room opens".to_string(),
        RematchStatus::Declined => format!("No rematch: {} declined", names(&offer.declined)),
        RematchStatus::Expired => format!(
            "No rematch: {} did not answer in time",
            names(&offer.waiting)
        ),
    }
}

/// A game's rules in a few lines, for the help (the decided rules are
/// `shared/design/rules.md`; `docs/RULES.md` says them for players).
pub fn rules_lines(game: GameKind) -> &'static [&'static str] {
    match game {
        GameKind::ThreeBlindMice => &[
            "One deck: ten piles, two cells. No stock and no waste.",
            "Any face-up card moves, with every card lying on it, onto the card of its",
            "suit one rank higher (7♦ and what lies on it onto 8♦); only a King (with",
            "its cards) goes into an empty pile. The two cells' cards play the same way;",
            "nothing enters a cell. A pile whose top 13 cards run K to A in one suit",
            "goes home by itself. Win: all four runs home.",
        ],
        GameKind::Indian => &[
            "Two decks: ten piles of three (the bottom card face down), 74 in the stock.",
            "Piles build down one rank in any suit but the card's own",
            "(7♥ onto 8♣, 8♦ or 8♠, never 8♥). One card moves at a time: a pile's top",
            "or the waste's top; an empty pile takes any card. The stock turns one card",
            "onto the waste, once through. Eight foundations build up in suit, A to K.",
            "Win: all 104 cards home.",
        ],
        GameKind::Midshipman => &[
            "Two decks: nine piles of four (two face down), 68 in the stock.",
            "Piles build down one rank in any suit but the card's own",
            "(7♥ onto 8♣, 8♦ or 8♠, never 8♥). One card moves at a time: a pile's top",
            "or the waste's top; an empty pile takes any card. The stock turns one card",
            "onto the waste, once through. Eight foundations build up in suit, A to K.",
            "Win: all 104 cards home.",
        ],
        GameKind::VirginiaReel => &[
            "Two decks. Three rows of eight: A 2-5-8-J, B 3-6-9-Q, C 4-7-10-K.",
            "A position is home when its bottom card is its row's base: it builds up in",
            "suit by threes, four cards at most. Misplaced cards (dimmed) and reserve",
            "tops build on home piles; a misplaced card leaves only if its gap is filled",
            "at once with the row's base (type it: B5>A2/r4). Aces are discarded.",
            "d deals a card onto each reserve. Win: all 24 home piles complete.",
        ],
    }
}

/// The help page for `game` on a screen where `context`'s keys work: the
/// game's rules, then every key and mouse action that works there.
pub fn help_lines(game: GameKind, context: Context) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(
        format!("{} · rules", game.title()),
        bold(),
    ))];
    lines.extend(rules_lines(game).iter().map(|line| Line::from(*line)));
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled("Keys and mouse", bold())));
    let plays = matches!(
        context,
        Context::Practice | Context::Race { .. } | Context::Daily
    );
    let mut keys: Vec<(&str, String)> = Vec::new();
    if plays {
        let (rows, jumps, places) = match game {
            GameKind::ThreeBlindMice => (
                "←/→ a pile, ↑/↓ a deeper card",
                "1..9, 0 pile 1..10",
                "c the cells (again: the other cell)",
            ),
            GameKind::Indian => (
                "←/→ a pile, ↑/↓ a deeper card",
                "1..9, 0 pile 1..10",
                "w waste · s stock · f foundations",
            ),
            GameKind::Midshipman => (
                "←/→ a pile, ↑/↓ a deeper card",
                "1..9 pile 1..9",
                "w waste · s stock · f foundations",
            ),
            GameKind::VirginiaReel => (
                "←/→ a place, ↑/↓ the row above or below",
                "1..8 reserve 1..8",
                "s or d the stock",
            ),
        };
        keys.push(("arrows", rows.to_string()));
        keys.push(("keys", format!("{jumps} · {places}")));
        keys.push((
            "space",
            match game {
                GameKind::Indian | GameKind::Midshipman => {
                    "send the card to its natural place; on the stock: turn one".into()
                }
                GameKind::VirginiaReel => {
                    "send the card to its natural place; on the stock: deal".into()
                }
                GameKind::ThreeBlindMice => "send the card (and those on it) to its place".into(),
            },
        ));
        keys.push((
            "enter",
            "pick the card up, then enter on another place drops it".into(),
        ));
        keys.push((
            "click",
            "left: pick up or drop, as enter · right: send, as space".into(),
        ));
        keys.push((
            ":",
            format!(
                "type a move: {}",
                match game {
                    GameKind::ThreeBlindMice => "7d>1, 3:2>4, c1>4",
                    GameKind::Indian | GameKind::Midshipman => "3>7, 3>f, w>f, s",
                    GameKind::VirginiaReel => "r3>B4, B5>A2/r4, B5>x/r4, A3~B6, d",
                }
            ),
        ));
        keys.push(("esc", "put the picked card back, clear the message".into()));
    }
    match context {
        Context::Practice => {
            keys.push(("u", "take the last move back".into()));
            keys.push((
                "h",
                "hint: the solver's next move, highlighted on the board".into(),
            ));
        }
        Context::Race { undo: true } => keys.push(("u", "take the last move back".into())),
        Context::Lobby { owner: true } => keys.push(("s", "start the countdown now".into())),
        Context::Watch { boards: true } => keys.push(("tab", "show the next boards".into())),
        Context::Results => {
            keys.push((
                "tab",
                "every racer's final board in turn, then the result".into(),
            ));
            keys.push((
                "r",
                "rematch: the same players, a new deal, once all accept".into(),
            ));
            keys.push(("n", "decline a rematch".into()));
        }
        Context::Daily => keys.push((":resign", "give up: the attempt ends".into())),
        _ => {}
    }
    keys.push(("ctrl-z", "suspend to the shell; fg comes back".into()));
    keys.push(("?", "this help; any key closes it".into()));
    keys.push((
        "q",
        match context {
            Context::Practice => "leave practice (asks first)".into(),
            Context::Race { .. } => {
                "resign (asks first; so does ctrl-c); you stay for the result".into()
            }
            Context::Daily => "leave; the attempt stays open and its clock runs".into(),
            _ => "leave".into(),
        },
    ));
    for (key, what) in keys {
        lines.push(Line::from(vec![
            Span::styled(format!("{key:<8}"), bold()),
            Span::raw(what),
        ]));
    }
    lines
}
