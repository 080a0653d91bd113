//! A day's leaderboard followed live: `patience leaderboard GAME --follow`,
//! and the standings beside the daily attempt.
//!
//! [`LiveBoard`] is sans I/O: it starts from the `leaderboard_page` that
//! answers `follow` and applies each `leaderboard_update` as the protocol
//! says: an update's row takes `row.rank`, every row at that rank or below
//! moves down one, and an update without a row changes only the counts.
//! The rows it keeps are always the top of the ranking without a gap (rank
//! 1, 2, 3, …), so a row ranked past the last one kept is not shown until
//! the rows above it are (it never is: the page is the top). An update for
//! another game or day is ignored. A follower that missed updates gets the
//! whole page again ([`LiveBoard::replace`]), and updates go on from it.
//!
//! [`follow`] opens the connection and the page; [`plain`] prints one line
//! per change (or JSON lines) until the connection ends; the terminal UI is
//! `tui::live`.

use std::io::Write;

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ClientMessage, LeaderboardPage, LeaderboardRow, LeaderboardUpdate, ServerMessage,
};

use crate::account::AccountError;
use crate::account::connect_signed_in_if_stored;
use crate::config::Store;
use crate::net::{Connection, NetError, message_name};
use crate::race::{status_text, tenths_text};

/// The most rows a followed page keeps (the server's own cap on a page).
pub const MOST_ROWS: usize = 100;

/// What an update changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// An attempt finished on the ranking, with its row.
    Finished(LeaderboardRow),
    /// Only the counts changed: an attempt began, or one finished off the
    /// ranking.
    Counts,
}

/// A followed day's leaderboard, kept up to date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveBoard {
    /// The page as it stands: the counts, the top rows, the own row.
    pub page: LeaderboardPage,
    /// How many rows to keep from the top.
    capacity: usize,
    /// The own attempt's race id, when known: its row, once it comes in an
    /// update, becomes the page's own row.
    own_race: Option<u64>,
    /// The race id of the row that came last, to mark it.
    pub latest: Option<u64>,
}

impl LiveBoard {
    /// Starts from the page that answered `follow`, keeping at most
    /// `capacity` rows (at most [`MOST_ROWS`]).
    pub fn new(page: LeaderboardPage, capacity: usize) -> LiveBoard {
        let own_race = page.own.as_ref().map(|row| row.race_id);
        let mut board = LiveBoard {
            page,
            capacity: capacity.clamp(1, MOST_ROWS),
            own_race,
            latest: None,
        };
        board.page.rows.truncate(board.capacity);
        board
    }

    /// Takes a whole page again, as the server sends one to a follower that
    /// missed updates; `false` (and nothing changed) when it is another
    /// game's or day's. The own race is kept.
    pub fn replace(&mut self, page: LeaderboardPage) -> bool {
        if page.game != self.page.game || page.date != self.page.date {
            return false;
        }
        let own_race = page.own.as_ref().map(|row| row.race_id).or(self.own_race);
        self.page = page;
        self.page.rows.truncate(self.capacity);
        self.latest = None;
        self.own_race = None;
        if let Some(race_id) = own_race {
            self.set_own_race(race_id);
        }
        true
    }

    /// Says which race is the player's own (the daily attempt's, once its
    /// result names it), so that its row is marked as the player's.
    pub fn set_own_race(&mut self, race_id: u64) {
        self.own_race = Some(race_id);
        if let Some(row) = self.page.rows.iter().find(|row| row.race_id == race_id) {
            self.page.own = Some(row.clone());
        }
    }

    /// The player's own race id, if known.
    pub fn own_race(&self) -> Option<u64> {
        self.own_race
    }

    /// Applies an update; `None` when it is for another game or day.
    pub fn apply(&mut self, update: &LeaderboardUpdate) -> Option<Change> {
        if update.game != self.page.game || update.date != self.page.date {
            return None;
        }
        self.page.finishers = update.finishers;
        self.page.unranked = update.unranked;
        self.page.playing = update.playing;
        let Some(row) = &update.row else {
            return Some(Change::Counts);
        };
        let row = LeaderboardRow {
            rank: row.rank.max(1),
            ..row.clone()
        };
        let own = self.own_race == Some(row.race_id);
        if row.unranked.is_some() {
            // Off the ranking: it moves nobody (only the own row says so).
            if own {
                self.page.own = Some(row.clone());
            }
            return Some(Change::Finished(row));
        }
        // The same attempt again (a repeated update) moves to its new place
        // rather than standing twice.
        if let Some(index) = self
            .page
            .rows
            .iter()
            .position(|kept| kept.race_id == row.race_id)
        {
            self.page.rows.remove(index);
            for later in &mut self.page.rows[index..] {
                later.rank = later.rank.saturating_sub(1);
            }
        }
        for kept in &mut self.page.rows {
            if kept.rank >= row.rank {
                kept.rank = kept.rank.saturating_add(1);
            }
        }
        if let Some(own_row) = &mut self.page.own
            && own_row.race_id != row.race_id
            && own_row.rank >= row.rank
        {
            own_row.rank = own_row.rank.saturating_add(1);
        }
        let index = usize::try_from(row.rank - 1).unwrap_or(usize::MAX);
        if index <= self.page.rows.len() {
            self.page.rows.insert(index, row.clone());
            self.page.rows.truncate(self.capacity);
        }
        if own {
            self.page.own = Some(row.clone());
        }
        self.latest = Some(row.race_id);
        Some(Change::Finished(row))
    }

    /// Whether `row` is the player's own.
    pub fn is_own(&self, row: &LeaderboardRow) -> bool {
        self.own_race == Some(row.race_id)
    }
}

/// The day's counts in words: `42 finished (3 more unranked), 4 playing`.
pub fn counts_text(page: &LeaderboardPage) -> String {
    format!(
        "{} finished{}, {} playing",
        page.finishers,
        if page.unranked > 0 {
            format!(" ({} more unranked)", page.unranked)
        } else {
            String::new()
        },
        page.playing
    )
}

/// A change in one line, with the day's counts after it.
pub fn change_text(board: &LiveBoard, change: &Change) -> String {
    let counts = counts_text(&board.page);
    match change {
        Change::Counts => counts,
        Change::Finished(row) => {
            let place = match row.unranked {
                None => format!("rank {}", row.rank),
                Some(_) => format!("unranked (would rank {})", row.rank),
            };
            format!(
                "{place}: {}{} {} in {}, {} moves, {} home (race {}) · {counts}",
                row.name,
                if board.is_own(row) { " (you)" } else { "" },
                status_text(row.status),
                tenths_text(row.elapsed_ms),
                row.moves,
                row.cards_home,
                row.race_id
            )
        }
    }
}

/// Signs in if an account is stored (so the page has the player's own
/// row), sends `follow` and reads the page. Returns the open connection,
/// the board and lines for standard error.
///
/// Cancel-safe: it changes nothing on the server; dropped early, its
/// connection is dropped.
pub async fn follow(
    server: &str,
    store: &Store,
    game: GameKind,
    date: Option<String>,
    limit: Option<u32>,
) -> Result<(Connection, LiveBoard, Vec<String>), AccountError> {
    let (mut connection, warnings) =
        connect_signed_in_if_stored(server, store, "following the leaderboard").await?;
    connection
        .send(&ClientMessage::Follow { game, date, limit })
        .await?;
    // A move answer or an update cannot come before the page: nothing else
    // was asked on this connection.
    match connection.recv().await? {
        ServerMessage::LeaderboardPage { page } => {
            let capacity = limit.map_or(MOST_ROWS, |limit| {
                usize::try_from(limit).unwrap_or(MOST_ROWS)
            });
            Ok((connection, LiveBoard::new(page, capacity), warnings))
        }
        ServerMessage::Error { code, message } => Err(AccountError::Refused { code, message }),
        other => Err(AccountError::Unexpected(message_name(&other))),
    }
}

/// Why following stopped.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// The connection failed or the server closed it.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The output could not be written (a closed pipe, a full disk).
    #[error("writing the leaderboard: {0}")]
    Write(#[from] std::io::Error),
}

/// How [`plain`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The page as a table, then a line per change.
    Text,
    /// One JSON object per line: the page, then each update, as the
    /// protocol's messages (`{"type":"leaderboard_update",…}`).
    JsonLines,
}

/// Writes the page, then each change as it comes, until the connection
/// ends. A day already over gets no updates: its page is all, and the
/// function returns at once.
///
/// Cancel-safe: it only reads; dropped early, the lines written stay
/// written and `connection` is dropped.
pub async fn plain(
    mut connection: Connection,
    mut board: LiveBoard,
    output: Output,
    mut writer: impl Write,
) -> Result<(), FollowError> {
    match output {
        Output::Text => writeln!(writer, "{}", crate::leaderboard::page_text(&board.page)),
        Output::JsonLines => writeln!(
            writer,
            "{}",
            json_line(&ServerMessage::LeaderboardPage {
                page: board.page.clone()
            })
        ),
    }?;
    writer.flush()?;
    if board.page.day_over {
        connection.close().await;
        return Ok(());
    }
    if output == Output::Text {
        writeln!(writer, "\nfollowing live (Ctrl-C stops):")?;
    }
    loop {
        let update = match connection.recv().await? {
            ServerMessage::LeaderboardUpdate { update } => update,
            // Updates were missed: the whole page again, drawn again.
            ServerMessage::LeaderboardPage { page } => {
                let json = json_line(&ServerMessage::LeaderboardPage { page: page.clone() });
                if board.replace(page) {
                    match output {
                        Output::Text => writeln!(
                            writer,
                            "caught up with the whole page:\n{}",
                            crate::leaderboard::page_text(&board.page)
                        ),
                        Output::JsonLines => writeln!(writer, "{json}"),
                    }?;
                    writer.flush()?;
                }
                continue;
            }
            // Nothing else was asked; anything else is not this command's.
            _ => continue,
        };
        let Some(change) = board.apply(&update) else {
            continue;
        };
        match output {
            Output::Text => writeln!(writer, "{}", change_text(&board, &change)),
            Output::JsonLines => writeln!(
                writer,
                "{}",
                json_line(&ServerMessage::LeaderboardUpdate { update })
            ),
        }?;
        writer.flush()?;
    }
}

fn json_line(message: &ServerMessage) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    use patience_shared::protocol::{PlayerStatus, Unranked};

    use super::*;

    /// A row from a compact fixture: `"3 carol won 184.0 731"` is rank 3,
    /// carol, won in 184.0 s, race 731 (moves 40 + rank).
    pub(crate) fn row(text: &str) -> LeaderboardRow {
        let parts: Vec<&str> = text.split_whitespace().collect();
        let [rank, name, status, seconds, race_id] = parts[..] else {
            panic!("a row is `rank name status seconds race`: {text:?}");
        };
        let rank: u32 = rank.parse().expect("a rank");
        let status = match status {
            "won" => PlayerStatus::Won,
            "resigned" => PlayerStatus::Resigned,
            "stuck" => PlayerStatus::Stuck,
            "out" => PlayerStatus::OutOfTime,
            other => panic!("not a status: {other}"),
        };
        let seconds: f64 = seconds.parse().expect("seconds");
        LeaderboardRow {
            rank,
            name: name.into(),
            status,
            elapsed_ms: (seconds * 1000.0).round() as u64,
            moves: 40 + rank,
            cards_home: if status == PlayerStatus::Won { 52 } else { 13 },
            race_id: race_id.parse().expect("a race id"),
            unranked: None,
        }
    }

    /// A running day of Three Blind Mice on 2026-12-01 with these rows.
    pub(crate) fn page(rows: &[&str]) -> LeaderboardPage {
        let rows: Vec<LeaderboardRow> = rows.iter().map(|text| row(text)).collect();
        LeaderboardPage {
            game: GameKind::ThreeBlindMice,
            date: "2026-12-01".into(),
            day_over: false,
            finishers: rows.len() as u32,
            unranked: 0,
            playing: 2,
            rows,
            own: None,
            reveal: None,
        }
    }

    pub(crate) fn update(row: Option<&str>, finishers: u32, playing: u32) -> LeaderboardUpdate {
        LeaderboardUpdate {
            game: GameKind::ThreeBlindMice,
            date: "2026-12-01".into(),
            row: row.map(self::row),
            finishers,
            unranked: 0,
            playing,
        }
    }

    /// The rows as `rank name race` lines, for comparing.
    fn rows_text(board: &LiveBoard) -> Vec<String> {
        board
            .page
            .rows
            .iter()
            .map(|row| format!("{} {} {}", row.rank, row.name, row.race_id))
            .collect()
    }

    const THREE: [&str; 3] = [
        "1 ada won 100.0 11",
        "2 bob won 120.0 12",
        "3 carol resigned 30.0 13",
    ];

    #[test]
    fn updates_insert_at_their_rank_and_move_the_rows_below_down() {
        struct Case {
            name: &'static str,
            capacity: usize,
            update: LeaderboardUpdate,
            rows: &'static [&'static str],
            counts: (u32, u32),
        }
        let cases = [
            Case {
                name: "at the top",
                capacity: 10,
                update: update(Some("1 dan won 90.0 14"), 4, 1),
                rows: &["1 dan 14", "2 ada 11", "3 bob 12", "4 carol 13"],
                counts: (4, 1),
            },
            Case {
                name: "in the middle",
                capacity: 10,
                update: update(Some("2 dan won 110.0 14"), 4, 1),
                rows: &["1 ada 11", "2 dan 14", "3 bob 12", "4 carol 13"],
                counts: (4, 1),
            },
            Case {
                name: "at the end",
                capacity: 10,
                update: update(Some("4 dan stuck 20.0 14"), 4, 1),
                rows: &["1 ada 11", "2 bob 12", "3 carol 13", "4 dan 14"],
                counts: (4, 1),
            },
            Case {
                name: "past the kept rows: counted, not shown",
                capacity: 10,
                update: update(Some("6 dan stuck 20.0 14"), 6, 1),
                rows: &["1 ada 11", "2 bob 12", "3 carol 13"],
                counts: (6, 1),
            },
            Case {
                name: "in a full page: the last row falls off",
                capacity: 3,
                update: update(Some("2 dan won 110.0 14"), 4, 1),
                rows: &["1 ada 11", "2 dan 14", "3 bob 12"],
                counts: (4, 1),
            },
            Case {
                name: "counts only",
                capacity: 10,
                update: update(None, 3, 5),
                rows: &["1 ada 11", "2 bob 12", "3 carol 13"],
                counts: (3, 5),
            },
            Case {
                name: "the same attempt again moves, never doubles",
                capacity: 10,
                update: update(Some("1 carol resigned 30.0 13"), 3, 2),
                rows: &["1 carol 13", "2 ada 11", "3 bob 12"],
                counts: (3, 2),
            },
        ];
        for case in cases {
            let mut board = LiveBoard::new(page(&THREE), case.capacity);
            let change = board.apply(&case.update);
            let expected = match &case.update.row {
                Some(row) => Change::Finished(row.clone()),
                None => Change::Counts,
            };
            assert_eq!(change, Some(expected), "{}", case.name);
            assert_eq!(rows_text(&board), case.rows, "{}", case.name);
            assert_eq!(
                (board.page.finishers, board.page.playing),
                case.counts,
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn an_update_for_another_game_or_day_is_ignored() {
        for (game, date) in [
            (GameKind::Indian, "2026-12-01"),
            (GameKind::ThreeBlindMice, "2026-11-30"),
        ] {
            let mut board = LiveBoard::new(page(&THREE), 10);
            let before = board.clone();
            let other = LeaderboardUpdate {
                game,
                date: date.into(),
                ..update(Some("1 dan won 90.0 14"), 9, 9)
            };
            assert_eq!(board.apply(&other), None, "{game:?} {date}");
            assert_eq!(board, before, "{game:?} {date}");
        }
    }

    #[test]
    fn the_own_row_moves_down_and_takes_its_own_update() {
        let mut first = page(&THREE);
        first.own = Some(row("3 carol resigned 30.0 13"));
        let mut board = LiveBoard::new(first, 10);
        board.apply(&update(Some("1 dan won 90.0 14"), 4, 1));
        assert_eq!(board.page.own.as_ref().map(|own| own.rank), Some(4));
        // A player whose attempt is not on the page yet: its row arrives.
        let mut board = LiveBoard::new(page(&THREE), 10);
        board.set_own_race(21);
        board.apply(&update(Some("2 eve won 105.0 21"), 4, 1));
        assert_eq!(board.page.own.as_ref().map(|own| own.rank), Some(2));
        assert!(board.is_own(&board.page.rows[1]));
        assert_eq!(board.latest, Some(21));
        // Off the ranking, it moves nobody.
        let mut board = LiveBoard::new(page(&THREE), 10);
        board.set_own_race(22);
        let mut unranked = update(Some("1 fay won 80.0 22"), 3, 1);
        if let Some(row) = &mut unranked.row {
            row.unranked = Some(Unranked::NewAccount);
        }
        board.apply(&unranked);
        assert_eq!(rows_text(&board), ["1 ada 11", "2 bob 12", "3 carol 13"]);
        assert_eq!(board.page.own.as_ref().map(|own| own.rank), Some(1));
    }

    #[test]
    fn a_whole_page_again_replaces_the_rows_and_keeps_the_own_race() {
        let mut board = LiveBoard::new(page(&THREE), 2);
        board.set_own_race(14);
        board.apply(&update(Some("1 dan won 90.0 14"), 4, 1));
        assert_eq!(board.latest, Some(14));
        let mut again = page(&[
            "1 eve won 80.0 15",
            "2 dan won 90.0 14",
            "3 ada won 100.0 11",
        ]);
        again.playing = 0;
        assert!(board.replace(again));
        assert_eq!(rows_text(&board), ["1 eve 15", "2 dan 14"]);
        assert_eq!(board.page.own.as_ref().map(|own| own.rank), Some(2));
        assert_eq!((board.latest, board.page.playing), (None, 0));
        let mut other_day = page(&[]);
        other_day.date = "2026-11-30".into();
        assert!(!board.replace(other_day));
        assert_eq!(rows_text(&board), ["1 eve 15", "2 dan 14"]);
    }

    #[test]
    fn changes_read_as_one_line() {
        let mut board = LiveBoard::new(page(&THREE), 10);
        board.set_own_race(14);
        let mut check = |update: LeaderboardUpdate, expected: &str| {
            let change = board.apply(&update).expect("the followed day");
            assert_eq!(change_text(&board, &change), expected);
        };
        check(update(None, 3, 3), "3 finished, 3 playing");
        check(
            update(Some("2 dan won 110.0 14"), 4, 2),
            "rank 2: dan (you) won in 1:50.0, 42 moves, 52 home (race 14) · 4 finished, 2 playing",
        );
        let mut counted = update(None, 4, 1);
        counted.unranked = 1;
        check(counted, "4 finished (1 more unranked), 1 playing");
    }

    #[tokio::test]
    async fn plain_prints_the_page_then_a_line_per_change_or_json_lines() {
        use crate::fake_server::{Reply, start_scripted};
        let (url, received) = start_scripted(|message| match message {
            ClientMessage::Follow { .. } => Reply {
                messages: vec![
                    ServerMessage::LeaderboardPage { page: page(&THREE) },
                    ServerMessage::LeaderboardUpdate {
                        update: update(None, 3, 3),
                    },
                    ServerMessage::LeaderboardUpdate {
                        update: LeaderboardUpdate {
                            game: GameKind::Indian,
                            ..update(Some("1 zed won 1.0 99"), 1, 0)
                        },
                    },
                    ServerMessage::LeaderboardUpdate {
                        update: update(Some("1 dan won 90.0 14"), 4, 2),
                    },
                    ServerMessage::LeaderboardPage {
                        page: page(&["1 dan won 90.0 14", "2 eve won 95.0 15"]),
                    },
                ],
                then_drop: true,
            },
            _ => Reply::default(),
        })
        .await;
        let game = GameKind::ThreeBlindMice;
        for output in [Output::Text, Output::JsonLines] {
            let (connection, board, warnings) = follow(&url, &Store::none(), game, None, Some(10))
                .await
                .expect("the page");
            assert!(warnings.is_empty());
            let mut written = Vec::new();
            let ended = plain(connection, board, output, &mut written).await;
            assert!(
                // The fake drops the connection without a close frame.
                matches!(ended, Err(FollowError::Net(_))),
                "{ended:?}"
            );
            let written = String::from_utf8_lossy(&written).into_owned();
            let lines: Vec<&str> = written.lines().collect();
            match output {
                Output::Text => {
                    assert!(written.contains("following live"), "{written}");
                    let changes: Vec<&str> = written
                        .split("following live (Ctrl-C stops):\n")
                        .nth(1)
                        .unwrap_or_default()
                        .lines()
                        .take(4)
                        .collect();
                    assert_eq!(
                        changes,
                        [
                            "3 finished, 3 playing",
                            "rank 1: dan won in 1:30.0, 41 moves, 52 home (race 14) · 4 finished, 2 playing",
                            "caught up with the whole page:",
                            "Three Blind Mice · daily deal of 2026-12-01 · 2 finished, 2 playing",
                        ],
                        "{written}"
                    );
                    assert!(written.contains("   2  eve"), "{written}");
                }
                Output::JsonLines => {
                    assert_eq!(
                        lines.len(),
                        4,
                        "the page, two updates, the page again: {written}"
                    );
                    let messages: Vec<ServerMessage> = lines
                        .iter()
                        .map(|line| serde_json::from_str(line).expect("a JSON message"))
                        .collect();
                    assert!(matches!(messages[0], ServerMessage::LeaderboardPage { .. }));
                    assert_eq!(
                        messages[2],
                        ServerMessage::LeaderboardUpdate {
                            update: update(Some("1 dan won 90.0 14"), 4, 2)
                        }
                    );
                }
            }
        }
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        assert_eq!(
            sent[1],
            ClientMessage::Follow {
                game,
                date: None,
                limit: Some(10)
            }
        );
    }
}
