//! Ratings as the store keeps them: one row per player and game (the
//! rating after the player's last rated race of it) and one history row
//! per player and rated race. The mathematics is
//! [`patience_shared::rating`]'s; `crate::ratings` decides which races
//! count and computes the changes, and the store only keeps them.
//!
//! A race's changes are written once: the history's key is the race and
//! the player, and [`Store::record_ratings`](super::Store::record_ratings)
//! writes nothing if the race has any history row already, so applying a
//! race again (a job run twice across a failover) changes nothing.
//!
//! The queries are written once, with the store's others, in `store/sql.rs`.

use patience_shared::game::GameKind;
use patience_shared::rating::Rating;

use super::PlayerId;

/// A player's rating at one game, as stored after their last rated race.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRating {
    /// Whose.
    pub player: PlayerId,
    /// The player's name.
    pub name: String,
    /// The rating after the last rated race (before any idle time).
    pub rating: Rating,
    /// Rated races played at this game.
    pub races: u32,
    /// When the last rated race ended: Unix milliseconds.
    pub last_race_ms: u64,
}

/// One player's change in a rated race.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingChange {
    /// Whose.
    pub player: PlayerId,
    /// The rating going in, after the idle time since the player's last
    /// rated race.
    pub before: Rating,
    /// The rating after the race.
    pub after: Rating,
    /// The player's place among the rated racers (the winners 1, 2...,
    /// everyone else tied after them).
    pub place: u8,
}

/// A rated race's changes, written together.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedRace {
    /// The stored race's id.
    pub race_id: u64,
    /// Its game.
    pub game: GameKind,
    /// When it ended: Unix milliseconds.
    pub ended_at_ms: u64,
    /// Every rated racer's change.
    pub changes: Vec<RatingChange>,
}

/// One row of a player's rating history.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryRow {
    /// The race's id.
    pub race_id: u64,
    /// When it ended: Unix milliseconds.
    pub at_ms: u64,
    /// The player's place among the rated racers.
    pub place: u8,
    /// How many racers were rated.
    pub racers: u8,
    /// The rating going in.
    pub before: Rating,
    /// The rating after it.
    pub after: Rating,
}

/// A player's rating at one game and its history.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingHistory {
    /// The player's name, as registered.
    pub name: String,
    /// The rating; `None` before the player's first rated race of the game.
    pub current: Option<StoredRating>,
    /// The rated races, newest first.
    pub rows: Vec<HistoryRow>,
}
