//! Ratings of finished races: the update of a stored race, and the rating
//! list as players see it.
//!
//! The mathematics is [`patience_shared::rating`]'s; which races and which
//! racers count is the room's rule ([`patience_room_core::rated`]).
//!
//! [`apply`] runs in the database job that stores the race (the room's
//! `store_result`), so the race and its rating changes commit together or
//! not at all; the store writes a race's changes once
//! ([`Store::record_ratings`]), so a job made twice changes nothing twice.

use patience_room_core::rated::rated_racers;
use patience_shared::protocol::{RatingRow, SeatRating};
use patience_shared::rating::{self, Entrant, Rating};

use crate::store::{NewRace, PlayerId, RatedRace, RatingChange, Store, StoreError, StoredRating};

/// The rating list shows players with a rated race of the game in this
/// many days.
pub const ACTIVE_DAYS: u64 = 90;

/// The rating changes of a race stored as `race_id`, from the ratings
/// stored now; kept in the store unless the race's were kept before.
/// `None` when the race changes no rating.
pub fn apply(
    store: &mut dyn Store,
    race_id: u64,
    race: &NewRace,
) -> Result<Option<RatedRace>, StoreError> {
    let racers = match rated_racers(&race.result, &race.players) {
        Ok(racers) => racers,
        Err(why) => {
            tracing::info!(race_id, ?why, "race not rated");
            return Ok(None);
        }
    };
    let game = race.result.reveal.game;
    let ids: Vec<PlayerId> = racers.iter().map(|(player, _)| *player).collect();
    let stored = store.ratings_of(game, &ids)?;
    let entrants: Vec<Entrant> = racers
        .iter()
        .map(|(player, won)| Entrant {
            rating: stored
                .iter()
                .find(|rating| rating.player == *player)
                .map_or(Rating::new(), |rating| {
                    rating.rating.at(rating.last_race_ms, race.ended_at_ms)
                }),
            won: *won,
        })
        .collect();
    let won: Vec<bool> = racers.iter().map(|(_, won)| *won).collect();
    let (after, places) = match (rating::rate_race(&entrants), rating::places(&won)) {
        (Ok(after), Ok(places)) => (after, places),
        (Err(error), _) | (_, Err(error)) => {
            // Cannot be: a room has 2 to 8 seats and its standings list
            // the winners first.
            tracing::error!(race_id, %error, "race not rated");
            return Ok(None);
        }
    };
    let rated = RatedRace {
        race_id,
        game,
        ended_at_ms: race.ended_at_ms,
        changes: ids
            .iter()
            .zip(&entrants)
            .zip(after.iter().zip(&places))
            .map(|((player, entrant), (after, place))| RatingChange {
                player: *player,
                before: entrant.rating,
                after: *after,
                place: u8::try_from(*place).unwrap_or(u8::MAX),
            })
            .collect(),
    };
    Ok(store.record_ratings(&rated)?.then_some(rated))
}

/// A stored rating as shown at `now_ms` (after its idle time), with its
/// place on the list if it has one.
pub fn row(stored: &StoredRating, now_ms: u64, rank: Option<u32>) -> RatingRow {
    let rating = stored.rating.at(stored.last_race_ms, now_ms);
    RatingRow {
        rank,
        name: stored.name.clone(),
        rating: rating::hundredths(rating.conservative()),
        mu: rating::hundredths(rating.mu),
        sigma: rating::hundredths(rating.sigma),
        races: stored.races,
        provisional: rating.is_provisional(),
    }
}

/// The rating list of a game at `now_ms`: every rating of a player active
/// in [`ACTIVE_DAYS`], best conservative figure first (ties by name), the
/// top `limit` rows, and `own`'s row wherever it stands (ranked if it is
/// on the list, unranked if its player is inactive).
pub struct RatingList {
    /// Players on the list.
    pub players: u32,
    /// The top rows.
    pub rows: Vec<RatingRow>,
    /// The asker's row.
    pub own: Option<RatingRow>,
}

/// Builds a [`RatingList`] from the stored ratings of active players and
/// the asker's own stored rating.
pub fn list(
    mut active: Vec<StoredRating>,
    own: Option<&StoredRating>,
    now_ms: u64,
    limit: usize,
) -> RatingList {
    let shown =
        |stored: &StoredRating| stored.rating.at(stored.last_race_ms, now_ms).conservative();
    active.sort_by(|first, second| {
        shown(second)
            .total_cmp(&shown(first))
            .then_with(|| first.name.cmp(&second.name))
    });
    let rank_of = |index: usize| u32::try_from(index + 1).ok();
    let own_row = own.map(|own| {
        let rank = active
            .iter()
            .position(|stored| stored.player == own.player)
            .and_then(rank_of);
        row(own, now_ms, rank)
    });
    RatingList {
        players: u32::try_from(active.len()).unwrap_or(u32::MAX),
        rows: active
            .iter()
            .take(limit)
            .enumerate()
            .map(|(index, stored)| row(stored, now_ms, rank_of(index)))
            .collect(),
        own: own_row,
    }
}

/// A lobby seat's rating at `now_ms`: the stored one after its idle
/// time, or a new player's for a player with none.
pub fn seat_rating(stored: Option<&StoredRating>, now_ms: u64) -> SeatRating {
    let rating = stored.map_or(Rating::new(), |stored| {
        stored.rating.at(stored.last_race_ms, now_ms)
    });
    SeatRating {
        rating: rating::hundredths(rating.conservative()),
        provisional: rating.is_provisional(),
    }
}

/// The earliest last race of a player on the list at `now_ms`.
pub fn active_since(now_ms: u64) -> u64 {
    now_ms.saturating_sub(ACTIVE_DAYS * rating::DAY_MS)
}

#[cfg(test)]
mod tests;
