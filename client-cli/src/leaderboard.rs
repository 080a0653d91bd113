//! `patience leaderboard GAME`: a day's ranking of the daily deal.
//!
//! [`fetch`] signs in when an account is stored for the server (so the
//! player's own row comes back) and asks for the page; [`page_text`] draws
//! it as a table: rank, name, status, time, moves, cards home and the race
//! id to replay, then the player's own row when it is outside the top rows,
//! whether the day is over, and once it is, the deal that was played.

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ClientMessage, LeaderboardPage, LeaderboardRow, ServerMessage, Unranked,
};

use crate::account::{AccountError, connect_signed_in_if_stored};
use crate::config::Store;
use crate::net::message_name;
use crate::race::{status_text, tenths_text};

/// Signs in if an account is stored for `server`, then asks for the page.
/// Returns the page and lines for standard error (a stored token the
/// server no longer knows is a warning here, not a failure).
///
/// Cancel-safe: it changes nothing on the server; dropped early, its
/// connection is dropped.
pub async fn fetch(
    server: &str,
    store: &Store,
    game: GameKind,
    date: Option<String>,
    limit: Option<u32>,
) -> Result<(LeaderboardPage, Vec<String>), AccountError> {
    let (mut connection, warnings) =
        connect_signed_in_if_stored(server, store, "showing the leaderboard").await?;
    connection
        .send(&ClientMessage::Leaderboard { game, date, limit })
        .await?;
    let answer = connection.recv().await?;
    connection.close().await;
    match answer {
        ServerMessage::LeaderboardPage { page } => Ok((page, warnings)),
        ServerMessage::Error { code, message } => Err(AccountError::Refused { code, message }),
        other => Err(AccountError::Unexpected(message_name(&other))),
    }
}

/// Why an attempt is off the ranking, in words.
pub fn unranked_text(unranked: Unranked) -> &'static str {
    match unranked {
        Unranked::NewAccount => {
            "your account was registered on the day, and only accounts registered before the day began (UTC) rank"
        }
        Unranked::Review => {
            "the moves came faster than a person plays; the attempt is held for the server operator's review"
        }
    }
}

/// Why an attempt is off the ranking, in a few words (for a narrow panel).
pub fn unranked_short_text(unranked: Unranked) -> &'static str {
    match unranked {
        Unranked::NewAccount => "(account of the day)",
        Unranked::Review => "(held for review)",
    }
}

/// The column titles.
pub(crate) const HEADER: &str =
    "rank  name                  status            time  moves  home   race";

/// One row of the table; `you` marks the player's own.
pub(crate) fn row_text(row: &LeaderboardRow, you: bool) -> String {
    // An unranked row has no rank of its own: a dash, and why after it.
    let rank = match row.unranked {
        None => row.rank.to_string(),
        Some(_) => "-".to_string(),
    };
    let mark = match (you, row.unranked) {
        (true, None) => "  ← you".to_string(),
        (true, Some(unranked)) => format!(
            "  ← you, unranked {} (would rank {})",
            unranked_short_text(unranked),
            row.rank
        ),
        (false, _) => String::new(),
    };
    format!(
        "{:>4}  {:<20}  {:<14} {:>7}  {:>5}  {:>4}  {:>5}{}",
        rank,
        row.name,
        status_text(row.status),
        tenths_text(row.elapsed_ms),
        row.moves,
        row.cards_home,
        row.race_id,
        mark
    )
}

/// The page as a table, with the player's own row, the state of the day and
/// the revealed deal. Ends without a newline.
pub fn page_text(page: &LeaderboardPage) -> String {
    let mut lines = vec![
        format!(
            "{} · daily deal of {} · {} finished{}, {} playing",
            page.game.title(),
            page.date,
            page.finishers,
            if page.unranked > 0 {
                format!(" ({} more unranked)", page.unranked)
            } else {
                String::new()
            },
            page.playing
        ),
        String::new(),
    ];
    let own_race = page.own.as_ref().map(|row| row.race_id);
    if page.rows.is_empty() {
        lines.push("no finished attempts yet".into());
    } else {
        lines.push(HEADER.into());
        for row in &page.rows {
            lines.push(row_text(row, own_race == Some(row.race_id)));
        }
    }
    if let Some(own) = &page.own
        && !page.rows.iter().any(|row| row.race_id == own.race_id)
    {
        lines.push("   ⋮".into());
        lines.push(row_text(own, true));
        if let Some(unranked) = own.unranked {
            lines.push(format!("      unranked: {}.", unranked_text(unranked)));
        }
    }
    lines.push(String::new());
    if page.day_over {
        lines.push("The day is over: the ranking is final.".into());
        match &page.reveal {
            Some(reveal) => lines.push(format!(
                "The deal: {} seed {} (salt {}); `patience deal {} {}` shows it.",
                reveal.game.title(),
                reveal.seed,
                reveal.salt,
                reveal.game.slug(),
                reveal.seed
            )),
            None => lines.push("No deal to reveal for that day.".into()),
        }
    } else {
        lines.push(
            "The day is still running: ranks may change, and the deal is revealed once it is over."
                .into(),
        );
    }
    lines.join("\n")
}

/// The page as pretty JSON, the protocol's own field names.
pub fn page_json(page: &LeaderboardPage) -> String {
    serde_json::to_string_pretty(page).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use patience_shared::protocol::{PlayerStatus, Reveal, Unranked};

    use super::*;

    fn row(
        rank: u32,
        name: &str,
        status: PlayerStatus,
        elapsed_ms: u64,
        race_id: u64,
    ) -> LeaderboardRow {
        LeaderboardRow {
            rank,
            name: name.into(),
            status,
            elapsed_ms,
            moves: 40 + rank,
            cards_home: if status == PlayerStatus::Won { 52 } else { 13 },
            race_id,
            unranked: None,
        }
    }

    fn page(day_over: bool, own: Option<LeaderboardRow>) -> LeaderboardPage {
        LeaderboardPage {
            game: GameKind::ThreeBlindMice,
            date: "2026-12-01".into(),
            day_over,
            finishers: 41,
            playing: 5,
            rows: vec![
                row(1, "ada", PlayerStatus::Won, 184_020, 731),
                row(2, "bob", PlayerStatus::Won, 201_370, 733),
                row(3, "carol", PlayerStatus::Resigned, 61_000, 740),
            ],
            own,
            reveal: day_over.then(|| Reveal {
                game: GameKind::ThreeBlindMice,
                seed: 1042,
                salt: "9f86d081884c7d659a2feaa0c55ad015".into(),
            }),
            unranked: 0,
        }
    }

    fn check(page: &LeaderboardPage, expected: &str) {
        assert_eq!(page_text(page), expected, "\n{}", page_text(page));
    }

    #[test]
    fn an_unranked_own_row_says_why_and_where_it_would_be() {
        let mut own = row(2, "newbie", PlayerStatus::Won, 190_000, 801);
        own.unranked = Some(Unranked::NewAccount);
        let mut running = page(false, Some(own));
        running.unranked = 3;
        let text = page_text(&running);
        assert!(
            text.starts_with("Three Blind Mice · daily deal of 2026-12-01 · 41 finished (3 more unranked), 5 playing"),
            "{text}"
        );
        assert!(
            text.contains("   -  newbie                won             3:10.0     42    52    801  ← you, unranked (account of the day) (would rank 2)"),
            "{text}"
        );
        assert!(
            text.contains("unranked: your account was registered on the day, and only accounts registered before the day began (UTC) rank."),
            "{text}"
        );
    }

    #[test]
    fn a_running_day_with_the_players_row_below_the_top() {
        check(
            &page(
                false,
                Some(row(12, "dan", PlayerStatus::OutOfTime, 3_600_000, 802)),
            ),
            "\
Three Blind Mice · daily deal of 2026-12-01 · 41 finished, 5 playing

rank  name                  status            time  moves  home   race
   1  ada                   won             3:04.0     41    52    731
   2  bob                   won             3:21.3     42    52    733
   3  carol                 resigned        1:01.0     43    13    740
   ⋮
  12  dan                   ran out of time 60:00.0     52    13    802  ← you

The day is still running: ranks may change, and the deal is revealed once it is over.",
        );
    }

    #[test]
    fn a_finished_day_with_the_player_in_the_top_and_the_deal_revealed() {
        check(
            &page(true, Some(row(2, "bob", PlayerStatus::Won, 201_370, 733))),
            "\
Three Blind Mice · daily deal of 2026-12-01 · 41 finished, 5 playing

rank  name                  status            time  moves  home   race
   1  ada                   won             3:04.0     41    52    731
   2  bob                   won             3:21.3     42    52    733  ← you
   3  carol                 resigned        1:01.0     43    13    740

The day is over: the ranking is final.
The deal: Three Blind Mice seed 1042 (salt 9f86d081884c7d659a2feaa0c55ad015); `patience deal three-blind-mice 1042` shows it.",
        );
    }

    #[test]
    fn an_empty_day() {
        let mut empty = page(false, None);
        empty.rows.clear();
        empty.finishers = 0;
        check(
            &empty,
            "\
Three Blind Mice · daily deal of 2026-12-01 · 0 finished, 5 playing

no finished attempts yet

The day is still running: ranks may change, and the deal is revealed once it is over.",
        );
    }

    #[test]
    fn a_day_over_without_a_deal() {
        let mut empty = page(true, None);
        empty.rows.clear();
        empty.reveal = None;
        assert!(
            page_text(&empty).ends_with(
                "no finished attempts yet\n\nThe day is over: the ranking is final.\nNo deal to reveal for that day."
            ),
            "{}",
            page_text(&empty)
        );
    }

    #[test]
    fn json_is_the_page_with_the_protocols_field_names() {
        let page = page(true, None);
        let json = page_json(&page);
        let back: LeaderboardPage = serde_json::from_str(&json).expect("the JSON reads back");
        assert_eq!(back, page);
        assert!(json.contains("\"day_over\": true"), "{json}");
        assert!(json.contains("\"game\": \"three-blind-mice\""), "{json}");
    }

    #[tokio::test]
    async fn a_stored_account_signs_in_first_and_a_stale_token_only_warns() {
        let (url, received) = crate::fake_server::start(|message| match message {
            ClientMessage::Authenticate { token } if token == "good" => {
                vec![ServerMessage::Authenticated {
                    player: 4,
                    name: "dan".into(),
                }]
            }
            ClientMessage::Authenticate { .. } => vec![ServerMessage::Error {
                code: patience_shared::protocol::ErrorCode::InvalidToken,
                message: "unknown token".into(),
            }],
            ClientMessage::Leaderboard { date, .. } if date.as_deref() == Some("bad") => {
                vec![ServerMessage::Error {
                    code: patience_shared::protocol::ErrorCode::InvalidRequest,
                    message: "not a date".into(),
                }]
            }
            ClientMessage::Leaderboard { .. } => vec![ServerMessage::LeaderboardPage {
                page: page(false, None),
            }],
            _ => Vec::new(),
        })
        .await;
        let directory =
            std::env::temp_dir().join(format!("patience-leaderboard-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        let store = Store::in_directory(&directory);
        let mut account = crate::config::Account {
            server: url.clone(),
            player: 4,
            name: "dan".into(),
            token: "good".into(),
        };
        store.save_account(&account).expect("writable");
        let game = GameKind::ThreeBlindMice;
        let (fetched, warnings) = fetch(&url, &store, game, None, Some(3))
            .await
            .expect("a page");
        assert_eq!(
            (fetched, warnings),
            (page(false, None), Vec::<String>::new())
        );
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        assert!(matches!(sent[1], ClientMessage::Authenticate { .. }));
        assert_eq!(
            sent[2],
            ClientMessage::Leaderboard {
                game,
                date: None,
                limit: Some(3)
            }
        );
        account.token = "stale".into();
        store.save_account(&account).expect("writable");
        let (_, warnings) = fetch(&url, &store, game, None, None)
            .await
            .expect("a page all the same");
        assert!(
            warnings[0].contains("showing the leaderboard anonymously"),
            "{warnings:?}"
        );
        let refused = fetch(&url, &Store::none(), game, Some("bad".into()), None).await;
        assert!(
            matches!(refused, Err(AccountError::Refused { ref message, .. }) if message == "not a date")
        );
        let _ = std::fs::remove_dir_all(&directory);
    }
}
