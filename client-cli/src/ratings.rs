//! Ratings: `patience ratings GAME` (a game's rating list, with one's own
//! row) and `patience rating GAME [NAME]` (a player's rating and its
//! history, one's own by default).
//!
//! Each is one request on a connection signed in as the stored account
//! when there is one ([`fetch_list`], [`fetch_history`]), and its answer
//! drawn as a table ([`list_text`], [`history_text`]) or printed as the
//! protocol's JSON. The figures travel in hundredths and are shown with
//! one decimal ([`show_hundredths`]).

use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, RatingRow, ServerMessage};
use patience_shared::rating::{PROVISIONAL_SIGMA, show_hundredths};
use serde::Serialize;

use crate::account::{self, AccountError, Anonymous, connect_signed_in_if_stored};
use crate::config::Store;
use crate::net::{Connection, message_name};
use crate::tournament::{TournamentError, ranked_lines};

/// A game's rating list as the server sent it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RatingList {
    /// The game.
    pub game: GameKind,
    /// Players on the list.
    pub players: u32,
    /// The top rows.
    pub rows: Vec<RatingRow>,
    /// The asker's row.
    pub own: Option<RatingRow>,
}

/// A player's rating and history as the server sent them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RatingHistory {
    /// The game.
    pub game: GameKind,
    /// The player.
    pub name: String,
    /// The rating now.
    pub rating: Option<RatingRow>,
    /// Rated races, newest first.
    pub races: Vec<patience_shared::protocol::RatingHistoryEntry>,
}

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

/// A game's rating list, with the stored account's own row when signed in.
///
/// Cancel-safe: it changes nothing on the server.
pub async fn fetch_list(
    server: &str,
    store: &Store,
    game: GameKind,
    limit: Option<u32>,
) -> Result<(RatingList, Vec<String>), TournamentError> {
    let (mut connection, warnings) =
        connect_signed_in_if_stored(server, store, "showing the ratings").await?;
    match ask(&mut connection, &ClientMessage::Ratings { game, limit }).await? {
        ServerMessage::RatingsPage {
            game,
            players,
            rows,
            own,
        } => Ok((
            RatingList {
                game,
                players,
                rows,
                own,
            },
            warnings,
        )),
        other => Err(AccountError::Unexpected(message_name(&other)).into()),
    }
}

/// A player's rating at `game` and its history: `name`'s, or the stored
/// account's without one (which must then sign in).
///
/// Cancel-safe: it changes nothing on the server.
pub async fn fetch_history(
    server: &str,
    store: &Store,
    game: GameKind,
    name: Option<String>,
    limit: Option<u32>,
) -> Result<(RatingHistory, Vec<String>), TournamentError> {
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
    let request = ClientMessage::RatingHistory { game, name, limit };
    match ask(&mut connection, &request).await? {
        ServerMessage::RatingHistoryPage {
            game,
            name,
            rating,
            races,
        } => Ok((
            RatingHistory {
                game,
                name,
                rating,
                races,
            },
            warnings,
        )),
        other => Err(AccountError::Unexpected(message_name(&other)).into()),
    }
}

const LIST_HEADER: &str = "   # player                   rating     μ     σ  races";

/// A rating as a person reads it: the figure, and `?` while provisional.
pub fn rating_text(row: &RatingRow) -> String {
    format!(
        "{}{}",
        show_hundredths(row.rating),
        if row.provisional { "?" } else { "" }
    )
}

fn row_text(row: &RatingRow, own: bool) -> String {
    let rank = row
        .rank
        .map_or_else(|| "-".to_string(), |rank| rank.to_string());
    format!(
        "{}{rank:>3} {:<24} {:>6} {:>5} {:>5} {:>6}",
        if own { "▶" } else { " " },
        row.name,
        rating_text(row),
        show_hundredths(row.mu),
        show_hundredths(row.sigma),
        row.races,
    )
}

fn explanation() -> String {
    format!(
        "The rating is μ − 3σ: the skill estimate less three times its uncertainty. \
         `?` marks a provisional rating (σ above {PROVISIONAL_SIGMA}); σ grows back while a player is idle."
    )
}

/// The rating list as a table; the asker's row marked, and added below if
/// it is not among the top rows.
pub fn list_text(list: &RatingList) -> String {
    let mut lines = vec![
        format!(
            "{} ratings · {} player{} active in 90 days",
            list.game.title(),
            list.players,
            if list.players == 1 { "" } else { "s" }
        ),
        String::new(),
    ];
    lines.extend(ranked_lines(
        &list.rows,
        list.own.as_ref(),
        |row| &row.name,
        row_text,
        LIST_HEADER,
        "nobody has a rated race of this game yet",
    ));
    lines.push(String::new());
    lines.push(explanation());
    lines.join("\n")
}

/// A player's rating and history as text.
pub fn history_text(history: &RatingHistory) -> String {
    let mut lines = vec![format!("{} · {}", history.name, history.game.title())];
    match &history.rating {
        None => lines.push("no rated race of this game yet".into()),
        Some(row) => lines.push(format!(
            "rating {}{} (μ {}, σ {}) after {} rated race{}",
            show_hundredths(row.rating),
            if row.provisional { ", provisional" } else { "" },
            show_hundredths(row.mu),
            show_hundredths(row.sigma),
            row.races,
            if row.races == 1 { "" } else { "s" },
        )),
    }
    if !history.races.is_empty() {
        lines.push(String::new());
        lines.push("  race   place   before    after  change".into());
        for race in &history.races {
            let change = race.after - race.before;
            lines.push(format!(
                "{:>6} {:>3} of {} {:>8} {:>8}  {}{}",
                race.race_id,
                race.place,
                race.racers,
                show_hundredths(race.before),
                show_hundredths(race.after),
                if change >= 0 { "+" } else { "" },
                show_hundredths(change),
            ));
        }
    }
    lines.push(String::new());
    lines.push(explanation());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rank: Option<u32>, name: &str, rating: i32, provisional: bool) -> RatingRow {
        RatingRow {
            rank,
            name: name.to_string(),
            rating,
            mu: 2764,
            sigma: 807,
            races: 1,
            provisional,
        }
    }

    #[test]
    fn the_list_marks_ones_own_row_and_provisional_ratings() {
        let list = RatingList {
            game: GameKind::ThreeBlindMice,
            players: 3,
            rows: vec![
                row(Some(1), "ada", 1844, false),
                row(Some(2), "bea", 344, true),
            ],
            own: Some(row(Some(3), "cyd", -183, true)),
        };
        insta::assert_snapshot!(list_text(&list));
    }

    #[test]
    fn the_history_shows_each_change() {
        let history = RatingHistory {
            game: GameKind::ThreeBlindMice,
            name: "ada".to_string(),
            rating: Some(row(None, "ada", 344, true)),
            races: vec![patience_shared::protocol::RatingHistoryEntry {
                race_id: 731,
                at_ms: 1_764_547_200_000,
                place: 1,
                racers: 2,
                before: 0,
                after: 344,
            }],
        };
        insta::assert_snapshot!(history_text(&history));
    }
}
