//! The daily tournament beyond one day's page: `patience leaderboard GAME
//! --days` (past days, their podiums and revealed seeds), `patience stats
//! [NAME]` (a player's records per game) and `patience standings GAME`
//! (a week's or a month's points).
//!
//! Each command is one request on a connection signed in as the stored
//! account when there is one ([`fetch_days`], [`fetch_record`],
//! [`fetch_standings`]), and its answer drawn as a table (`*_text`) or
//! printed as the protocol's JSON ([`json`]).

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ClientMessage, DaysPage, GameRecord, Period, PlayerRecord, ServerMessage, StandingRow,
    StandingsPage, points_for,
};
use serde::Serialize;

use crate::account::connect_signed_in_if_stored;
use crate::account::{self, AccountError, Anonymous};
use crate::config::Store;
use crate::net::{Connection, message_name};
use crate::race::{status_text, tenths_text};

/// Why a tournament command failed.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// `stats` without a name, and no account stored to be "me".
    #[error(
        "no account is stored for {server}: name a player (`patience stats NAME`) or register (`patience register NAME`)"
    )]
    NoAccount {
        /// The server.
        server: String,
    },
    /// Signing in, the connection or the server's answer failed.
    #[error(transparent)]
    Account(#[from] AccountError),
}

/// Sends `request` and reads its answer, refusals made errors.
async fn ask(
    connection: &mut Connection,
    request: &ClientMessage,
) -> Result<ServerMessage, AccountError> {
    connection.send(request).await?;
    let answer = connection.recv().await?;
    connection.close_in_place().await;
    match answer {
        ServerMessage::Error { code, message } => Err(AccountError::Refused { code, message }),
        answer => Ok(answer),
    }
}

/// Past closed days of `game`, newest first. Returns the page and lines for
/// standard error.
///
/// Cancel-safe: it changes nothing on the server; dropped early, its
/// connection is dropped.
pub async fn fetch_days(
    server: &str,
    store: &Store,
    game: GameKind,
    before: Option<String>,
    limit: Option<u32>,
) -> Result<(DaysPage, Vec<String>), TournamentError> {
    let (mut connection, warnings) =
        connect_signed_in_if_stored(server, store, "listing the days").await?;
    let request = ClientMessage::DailyDays {
        game,
        before,
        limit,
    };
    match ask(&mut connection, &request).await? {
        ServerMessage::DaysPage { page } => Ok((page, warnings)),
        other => Err(AccountError::Unexpected(message_name(&other)).into()),
    }
}

/// A player's records: `name`'s, or the stored account's without one (which
/// must then sign in).
///
/// Cancel-safe: it changes nothing on the server; dropped early, its
/// connection is dropped.
pub async fn fetch_record(
    server: &str,
    store: &Store,
    name: Option<String>,
) -> Result<(PlayerRecord, Vec<String>), TournamentError> {
    let (mut connection, warnings) = match &name {
        Some(_) => connect_signed_in_if_stored(server, store, "asking").await?,
        None => {
            if store.account(server).is_none() {
                return Err(TournamentError::NoAccount {
                    server: server.to_string(),
                });
            }
            let (connection, _, _) = account::connect(server, store, Anonymous::Allowed).await?;
            (connection, Vec::new())
        }
    };
    match ask(&mut connection, &ClientMessage::PlayerStats { name }).await? {
        ServerMessage::PlayerRecord { record } => Ok((record, warnings)),
        other => Err(AccountError::Unexpected(message_name(&other)).into()),
    }
}

/// A week's or a month's standings of `game` (`key` `None`: the current
/// one), with the stored account's own row when signed in.
///
/// Cancel-safe: it changes nothing on the server; dropped early, its
/// connection is dropped.
pub async fn fetch_standings(
    server: &str,
    store: &Store,
    game: GameKind,
    period: Period,
    key: Option<String>,
    limit: Option<u32>,
) -> Result<(StandingsPage, Vec<String>), TournamentError> {
    let (mut connection, warnings) =
        connect_signed_in_if_stored(server, store, "showing the standings").await?;
    let request = ClientMessage::Standings {
        game,
        period,
        key,
        limit,
    };
    match ask(&mut connection, &request).await? {
        ServerMessage::StandingsPage { page } => Ok((page, warnings)),
        other => Err(AccountError::Unexpected(message_name(&other)).into()),
    }
}

/// Any answer as pretty JSON, the protocol's own field names.
pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The past days as a list: each day's counts and seed, then its podium.
/// Ends without a newline.
pub fn days_text(page: &DaysPage) -> String {
    let mut lines = vec![
        format!("{} · past days, newest first", page.game.title()),
        String::new(),
    ];
    if page.days.is_empty() {
        lines.push("no closed day with a finished attempt".into());
    }
    for day in &page.days {
        lines.push(format!(
            "{} · {} finished, {} won · seed {}",
            day.date, day.finishers, day.winners, day.reveal.seed
        ));
        for row in &day.podium {
            lines.push(format!(
                "  {:>2}  {:<20}  {:<15} {:>8}  {:>4} moves  race {}",
                row.rank,
                row.name,
                status_text(row.status),
                tenths_text(row.elapsed_ms),
                row.moves,
                row.race_id
            ));
        }
        lines.push(String::new());
    }
    let slug = page.game.slug();
    if page.more
        && let Some(last) = page.days.last()
    {
        lines.push(format!(
            "Older days: `patience leaderboard {slug} --days --before {}`.",
            last.date
        ));
    }
    lines.push(format!(
        "A day's whole ranking: `patience leaderboard {slug} --date DATE`; its deal: `patience deal {slug} SEED`."
    ));
    lines.join("\n")
}

/// An optional figure, `-` when there is none.
fn or_dash<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "-".to_string(), show)
}

/// A player's records as a table: one column per game, one line per
/// figure. Ends without a newline.
pub fn record_text(record: &PlayerRecord) -> String {
    let through = match &record.through {
        Some(date) => {
            format!("daily records through {date} (closed days; an open day counts once it closes)")
        }
        None => "daily records: no day has closed yet".to_string(),
    };
    let mut lines = vec![format!("{} · {through}", record.name), String::new()];
    if record.games.is_empty() {
        lines.push(format!(
            "{} has not finished an attempt on a closed day yet.",
            record.name
        ));
        return lines.join("\n");
    }
    type Figure = fn(&GameRecord) -> String;
    let figures: [(&str, Figure); 11] = [
        ("days played", |game| game.days_played.to_string()),
        ("days won", |game| game.wins.to_string()),
        ("best rank", |game| {
            or_dash(game.best_rank, |rank| rank.to_string())
        }),
        ("median rank", |game| {
            or_dash(game.median_rank, |rank| rank.to_string())
        }),
        ("best winning time", |game| {
            or_dash(game.best_time_ms, tenths_text)
        }),
        ("median winning time", |game| {
            or_dash(game.median_time_ms, tenths_text)
        }),
        ("played in a row, now", |game| game.play_streak.to_string()),
        ("played in a row, best", |game| {
            game.best_play_streak.to_string()
        }),
        ("won in a row, now", |game| game.win_streak.to_string()),
        ("won in a row, best", |game| {
            game.best_win_streak.to_string()
        }),
        ("last played", |game| {
            or_dash(game.last_played.clone(), |date| date)
        }),
    ];
    let widths: Vec<usize> = record
        .games
        .iter()
        .map(|game| game.game.title().chars().count().max(10))
        .collect();
    let mut header = format!("{:<22}", "");
    for (game, width) in record.games.iter().zip(&widths) {
        header.push_str(&format!("  {:>width$}", game.game.title()));
    }
    lines.push(header.trim_end().to_string());
    for (label, figure) in figures {
        let mut line = format!("{label:<22}");
        for (game, width) in record.games.iter().zip(&widths) {
            line.push_str(&format!("  {:>width$}", figure(game)));
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// The points scale, place by place: `25 18 15 12 10 8 6 4 2 1`.
pub fn points_scale_text() -> String {
    (1..=10)
        .map(|rank| points_for(rank, false).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The period in words: `week 2026-W49` or `month 2026-12`.
fn period_text(period: Period, key: &str) -> String {
    match period {
        Period::Week => format!("week {key}"),
        Period::Month => format!("month {key}"),
    }
}

/// The column titles of the standings.
const STANDINGS_HEADER: &str = "rank  name                  points  days  wins       time";

fn standing_text(row: &StandingRow, you: bool) -> String {
    format!(
        "{:>4}  {:<20}  {:>6}  {:>4}  {:>4}  {:>9}{}",
        row.rank,
        row.name,
        row.points,
        row.days,
        row.wins,
        if row.wins > 0 {
            tenths_text(row.win_time_ms)
        } else {
            "-".into()
        },
        if you { "  ← you" } else { "" }
    )
}

/// The standings as a table, the player's own row after them when it is
/// not among them, whether the period is live, and the scale. Ends without
/// a newline.
pub fn standings_text(page: &StandingsPage) -> String {
    let mut lines = vec![
        format!(
            "{} · {} ({} to {}) · {} player{}",
            page.game.title(),
            period_text(page.period, &page.key),
            page.first_date,
            page.last_date,
            page.players,
            if page.players == 1 { "" } else { "s" }
        ),
        String::new(),
    ];
    lines.extend(ranked_lines(
        &page.rows,
        page.own.as_ref(),
        |row| &row.name,
        standing_text,
        STANDINGS_HEADER,
        "nobody has a ranked attempt in it yet",
    ));
    lines.push(String::new());
    if page.live {
        lines.push(
            "Live: a day of it is still open, and its points follow that day's ranking as attempts finish."
                .into(),
        );
    } else {
        lines.push("Final: every day of it is closed.".into());
    }
    lines.push(format!(
        "Points a day by rank: {} for places 1 to 10, 1 for a win placed lower. \
         Ties: more wins, then less time over the winning days, then the account registered first.",
        points_scale_text()
    ));
    lines.join("\n")
}

/// A week as the protocol names it, `YYYY-Www` (`2026-W49`).
pub fn parse_week(text: &str) -> Result<String, String> {
    let valid = text.split_once("-W").is_some_and(|(year, week)| {
        year.len() == 4
            && year.chars().all(|c| c.is_ascii_digit())
            && week.len() == 2
            && week
                .parse::<u32>()
                .is_ok_and(|week| (1..=53).contains(&week))
    });
    if valid {
        Ok(text.to_string())
    } else {
        Err(format!(
            "{text:?} is not an ISO week written YYYY-Www (2026-W49)"
        ))
    }
}

/// A month as the protocol names it, `YYYY-MM` (`2026-12`).
pub fn parse_month(text: &str) -> Result<String, String> {
    let valid = text.split_once('-').is_some_and(|(year, month)| {
        year.len() == 4
            && year.chars().all(|c| c.is_ascii_digit())
            && month.len() == 2
            && month
                .parse::<u32>()
                .is_ok_and(|month| (1..=12).contains(&month))
    });
    if valid {
        Ok(text.to_string())
    } else {
        Err(format!("{text:?} is not a month written YYYY-MM (2026-12)"))
    }
}

/// A ranked list as lines: `header` and a line per row, the asker's
/// marked (or `empty` without rows); then the asker's own row below a `⋮`
/// when it is not among them. `line` draws a row, marked or not.
pub(crate) fn ranked_lines<R>(
    rows: &[R],
    own: Option<&R>,
    name: fn(&R) -> &str,
    line: fn(&R, bool) -> String,
    header: &str,
    empty: &str,
) -> Vec<String> {
    let own_name = own.map(name);
    let mut lines = Vec::with_capacity(rows.len() + 3);
    if rows.is_empty() {
        lines.push(empty.to_string());
    } else {
        lines.push(header.to_string());
        lines.extend(
            rows.iter()
                .map(|row| line(row, own_name == Some(name(row)))),
        );
    }
    if let Some(own) = own
        && !rows.iter().any(|row| Some(name(row)) == own_name)
    {
        lines.push("   ⋮".into());
        lines.push(line(own, true));
    }
    lines
}

#[cfg(test)]
mod tests {
    use patience_shared::protocol::{DaySummary, ErrorCode, Reveal};

    use super::*;
    use crate::live::tests::row;

    fn days_page(more: bool) -> DaysPage {
        DaysPage {
            game: GameKind::ThreeBlindMice,
            days: vec![
                DaySummary {
                    date: "2026-11-30".into(),
                    finishers: 41,
                    winners: 12,
                    podium: vec![
                        row("1 ada won 184.02 731"),
                        row("2 bob won 201.37 733"),
                        row("3 carol won 230.0 740"),
                    ],
                    reveal: Reveal {
                        game: GameKind::ThreeBlindMice,
                        seed: 1042,
                        salt: "9f86".into(),
                    },
                },
                DaySummary {
                    date: "2026-11-29".into(),
                    finishers: 1,
                    winners: 0,
                    podium: vec![row("1 dan resigned 61.0 700")],
                    reveal: Reveal {
                        game: GameKind::ThreeBlindMice,
                        seed: 77,
                        salt: "ab".into(),
                    },
                },
            ],
            more,
        }
    }

    #[test]
    fn days_list_each_podium_and_seed_and_how_to_go_back_further() {
        assert_eq!(
            days_text(&days_page(true)),
            "\
Three Blind Mice · past days, newest first

2026-11-30 · 41 finished, 12 won · seed 1042
   1  ada                   won               3:04.0    41 moves  race 731
   2  bob                   won               3:21.3    42 moves  race 733
   3  carol                 won               3:50.0    43 moves  race 740

2026-11-29 · 1 finished, 0 won · seed 77
   1  dan                   resigned          1:01.0    41 moves  race 700

Older days: `patience leaderboard three-blind-mice --days --before 2026-11-29`.
A day's whole ranking: `patience leaderboard three-blind-mice --date DATE`; its deal: `patience deal three-blind-mice SEED`."
        );
        let mut none = days_page(false);
        none.days.clear();
        let text = days_text(&none);
        assert!(
            text.contains("no closed day with a finished attempt"),
            "{text}"
        );
        assert!(!text.contains("Older days"), "{text}");
    }

    fn game_record(game: GameKind, wins: u32) -> GameRecord {
        GameRecord {
            game,
            days_played: 41,
            wins,
            best_rank: Some(1),
            median_rank: Some(4),
            best_time_ms: (wins > 0).then_some(184_020),
            median_time_ms: (wins > 0).then_some(250_100),
            play_streak: 3,
            best_play_streak: 9,
            win_streak: 0,
            best_win_streak: 2,
            last_played: Some("2026-11-30".into()),
        }
    }

    #[test]
    fn a_record_is_a_column_per_game() {
        let record = PlayerRecord {
            name: "ada".into(),
            through: Some("2026-11-30".into()),
            games: vec![
                game_record(GameKind::ThreeBlindMice, 12),
                game_record(GameKind::Indian, 0),
            ],
        };
        assert_eq!(
            record_text(&record),
            "\
ada · daily records through 2026-11-30 (closed days; an open day counts once it closes)

                        Three Blind Mice      Indian
days played                           41          41
days won                              12           0
best rank                              1           1
median rank                            4           4
best winning time                 3:04.0           -
median winning time               4:10.1           -
played in a row, now                   3           3
played in a row, best                  9           9
won in a row, now                      0           0
won in a row, best                     2           2
last played                   2026-11-30  2026-11-30"
        );
        let nothing = PlayerRecord {
            name: "bob".into(),
            through: None,
            games: Vec::new(),
        };
        assert_eq!(
            record_text(&nothing),
            "bob · daily records: no day has closed yet\n\nbob has not finished an attempt on a closed day yet."
        );
    }

    fn standing(rank: u32, name: &str, points: u32, wins: u32) -> StandingRow {
        StandingRow {
            rank,
            name: name.into(),
            points,
            days: 3,
            wins,
            win_time_ms: u64::from(wins) * 184_020,
        }
    }

    fn standings_page(live: bool, own: Option<StandingRow>) -> StandingsPage {
        StandingsPage {
            game: GameKind::ThreeBlindMice,
            period: Period::Week,
            key: "2026-W49".into(),
            first_date: "2026-11-30".into(),
            last_date: "2026-12-06".into(),
            live,
            players: 12,
            rows: vec![standing(1, "ada", 68, 3), standing(2, "bob", 43, 2)],
            own,
        }
    }

    #[test]
    fn standings_show_the_own_row_whether_the_period_is_live_and_the_scale() {
        assert_eq!(
            standings_text(&standings_page(true, Some(standing(14, "dan", 4, 0)))),
            "\
Three Blind Mice · week 2026-W49 (2026-11-30 to 2026-12-06) · 12 players

rank  name                  points  days  wins       time
   1  ada                       68     3     3     9:12.0
   2  bob                       43     3     2     6:08.0
   ⋮
  14  dan                        4     3     0          -  ← you

Live: a day of it is still open, and its points follow that day's ranking as attempts finish.
Points a day by rank: 25 18 15 12 10 8 6 4 2 1 for places 1 to 10, 1 for a win placed lower. Ties: more wins, then less time over the winning days, then the account registered first."
        );
        let text = standings_text(&standings_page(false, Some(standing(2, "bob", 43, 2))));
        assert!(
            text.contains(
                "   2  bob                       43     3     2     6:08.0  ← you\n\nFinal"
            ),
            "{text}"
        );
        assert!(!text.contains('⋮'), "{text}");
    }

    #[test]
    fn weeks_and_months_are_written_as_the_protocol_names_them() {
        for (text, week, month) in [
            ("2026-W49", true, false),
            ("2026-W01", true, false),
            ("2026-W54", false, false),
            ("2026-W1", false, false),
            ("2026-12", false, true),
            ("2026-13", false, false),
            ("26-12", false, false),
            ("this", false, false),
        ] {
            assert_eq!(parse_week(text).is_ok(), week, "{text}");
            assert_eq!(parse_month(text).is_ok(), month, "{text}");
        }
    }

    #[tokio::test]
    async fn each_command_asks_once_and_stats_of_me_needs_an_account() {
        let (url, received) = crate::fake_server::start(|message| match message {
            ClientMessage::Authenticate { .. } => vec![ServerMessage::Authenticated {
                player: 4,
                name: "dan".into(),
            }],
            ClientMessage::DailyDays { .. } => vec![ServerMessage::DaysPage {
                page: days_page(false),
            }],
            ClientMessage::PlayerStats { name } => vec![ServerMessage::PlayerRecord {
                record: PlayerRecord {
                    name: name.clone().unwrap_or_else(|| "dan".into()),
                    through: None,
                    games: Vec::new(),
                },
            }],
            ClientMessage::Standings { key: Some(key), .. } if key == "1999-W01" => {
                vec![ServerMessage::Error {
                    code: ErrorCode::InvalidRequest,
                    message: "no such week".into(),
                }]
            }
            ClientMessage::Standings { .. } => vec![ServerMessage::StandingsPage {
                page: standings_page(true, None),
            }],
            _ => Vec::new(),
        })
        .await;
        let game = GameKind::ThreeBlindMice;
        let anonymous = Store::none();
        let (days, _) = fetch_days(&url, &anonymous, game, Some("2026-12-01".into()), Some(5))
            .await
            .expect("days");
        assert_eq!(days, days_page(false));
        let refused = fetch_record(&url, &anonymous, None).await;
        assert!(
            matches!(refused, Err(TournamentError::NoAccount { ref server }) if *server == url),
            "{refused:?}"
        );
        let (record, _) = fetch_record(&url, &anonymous, Some("ada".into()))
            .await
            .expect("ada's record");
        assert_eq!(record.name, "ada");
        let directory =
            std::env::temp_dir().join(format!("patience-tournament-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        let store = Store::in_directory(&directory);
        store
            .save_account(&crate::config::Account {
                server: url.clone(),
                player: 4,
                name: "dan".into(),
                token: "good".into(),
            })
            .expect("writable");
        let (record, _) = fetch_record(&url, &store, None).await.expect("my record");
        assert_eq!(record.name, "dan");
        let (standings, _) = fetch_standings(&url, &store, game, Period::Month, None, Some(20))
            .await
            .expect("standings");
        assert_eq!(standings, standings_page(true, None));
        let refused = fetch_standings(
            &url,
            &store,
            game,
            Period::Week,
            Some("1999-W01".into()),
            None,
        )
        .await;
        assert!(
            matches!(
                refused,
                Err(TournamentError::Account(AccountError::Refused { ref message, .. }))
                    if message == "no such week"
            ),
            "{refused:?}"
        );
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        let asked: Vec<&ClientMessage> = sent
            .iter()
            .filter(|message| {
                !matches!(
                    message,
                    ClientMessage::Hello { .. } | ClientMessage::Authenticate { .. }
                )
            })
            .collect();
        assert_eq!(
            asked,
            [
                &ClientMessage::DailyDays {
                    game,
                    before: Some("2026-12-01".into()),
                    limit: Some(5)
                },
                &ClientMessage::PlayerStats {
                    name: Some("ada".into())
                },
                &ClientMessage::PlayerStats { name: None },
                &ClientMessage::Standings {
                    game,
                    period: Period::Month,
                    key: None,
                    limit: Some(20)
                },
                &ClientMessage::Standings {
                    game,
                    period: Period::Week,
                    key: Some("1999-W01".into()),
                    limit: None
                },
            ]
        );
        let _ = std::fs::remove_dir_all(&directory);
    }
}
