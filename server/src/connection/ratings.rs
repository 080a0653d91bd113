//! The connection's rating requests: a game's rating list and a player's
//! rating history (see [`crate::ratings`] for what counts).
//!
//! - `ratings`: the players with a rated race of the game in the last
//!   [`ACTIVE_DAYS`](crate::ratings::ACTIVE_DAYS) days, best conservative
//!   figure first at the server's clock (each rating after its idle
//!   time); `limit` rows (default [`DEFAULT_RATING_ROWS`], capped at
//!   `leaderboard_max_rows`) and the asker's own row.
//! - `rating_history`: by name (whatever its case) or, without one, the
//!   authenticated player's; an unknown name is `player_not_found`, no
//!   name without an account is `not_authenticated`; `limit` races
//!   (default [`DEFAULT_HISTORY_ROWS`], capped as above), newest first.

use patience_shared::game::GameKind;
use patience_shared::protocol::{self, ErrorCode, RatingHistoryEntry, ServerMessage};
use patience_shared::rating;

use super::Session;
use crate::ratings;
use crate::store::PlayerLookup;

/// Rows of a rating list when the request names no limit.
pub const DEFAULT_RATING_ROWS: u32 = 20;

/// Races of a rating history when the request names no limit.
pub const DEFAULT_HISTORY_ROWS: u32 = 20;

impl Session {
    pub(super) async fn ratings(&mut self, game: GameKind, limit: Option<u32>) {
        let limit = limit
            .unwrap_or(DEFAULT_RATING_ROWS)
            .min(self.shared.config.leaderboard_max_rows);
        let now_ms = self.shared.clock.now_ms();
        let asker = self.player.as_ref().map(|player| player.id);
        let answer = self
            .shared
            .database
            .call(move |store| {
                let active = store.ratings_since(game, ratings::active_since(now_ms))?;
                let own = match asker {
                    Some(player) => store.ratings_of(game, &[player])?.into_iter().next(),
                    None => None,
                };
                Ok((active, own))
            })
            .await;
        match answer {
            Ok((active, own)) => {
                let list = ratings::list(
                    active,
                    own.as_ref(),
                    now_ms,
                    usize::try_from(limit).unwrap_or(usize::MAX),
                );
                self.reply(&ServerMessage::RatingsPage {
                    game,
                    players: list.players,
                    rows: list.rows,
                    own: list.own,
                });
            }
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn rating_history(
        &mut self,
        game: GameKind,
        name: Option<String>,
        limit: Option<u32>,
    ) {
        let lookup = match (name, &self.player) {
            (Some(name), _) => {
                // A name no account may have names nobody: no need to ask.
                if !protocol::valid_player_name(&name) {
                    return self.no_rated_player(&name);
                }
                Ok(name)
            }
            (None, Some(player)) => Err(player.id),
            (None, None) => {
                return self.error(
                    ErrorCode::NotAuthenticated,
                    "name a player, or register or authenticate to see your own rating",
                );
            }
        };
        let limit = limit
            .unwrap_or(DEFAULT_HISTORY_ROWS)
            .min(self.shared.config.leaderboard_max_rows);
        let now_ms = self.shared.clock.now_ms();
        let asked = lookup.clone();
        let answer = self
            .shared
            .database
            .call(move |store| {
                let player = match &asked {
                    Ok(name) => PlayerLookup::Name(name),
                    Err(id) => PlayerLookup::Id(*id),
                };
                store.rating_history(player, game, limit)
            })
            .await;
        match answer {
            Ok(Some(history)) => self.reply(&ServerMessage::RatingHistoryPage {
                game,
                name: history.name,
                rating: history
                    .current
                    .as_ref()
                    .map(|stored| ratings::row(stored, now_ms, None)),
                races: history
                    .rows
                    .iter()
                    .map(|row| RatingHistoryEntry {
                        race_id: row.race_id,
                        at_ms: row.at_ms,
                        place: row.place,
                        racers: row.racers,
                        before: rating::hundredths(row.before.conservative()),
                        after: rating::hundredths(row.after.conservative()),
                    })
                    .collect(),
            }),
            Ok(None) => match &lookup {
                Ok(name) => self.no_rated_player(name),
                Err(_) => self.error(ErrorCode::PlayerNotFound, "your account is gone"),
            },
            Err(error) => self.storage_failed(&error),
        }
    }

    fn no_rated_player(&self, name: &str) {
        self.error(
            ErrorCode::PlayerNotFound,
            format!("no player is called {name:?}"),
        );
    }
}
