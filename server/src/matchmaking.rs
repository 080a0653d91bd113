//! Quick race by rating: which waiting players may meet, when a waiting
//! player is offered a bot, and where a player's rating comes from. The
//! rule is pure: the times are arguments (milliseconds waited, on whatever
//! clock the caller keeps), so it is tested on a virtual clock.
//!
//! Players are matched on their estimate `mu` (not the conservative figure
//! shown, which is low for every new player whatever their skill). A
//! player's window is `mu` ± [`half_width`]: [`START_HALF_WIDTH`] at
//! first (about one skill class), wider by [`GROWTH_PER_STEP`] every
//! [`STEP_MS`], and open to anyone after [`OPEN_AFTER_MS`]. Two players
//! may meet when their estimates differ by no more than the wider of their
//! two windows: a player who has waited long is not kept waiting for a
//! newcomer's narrow window. After [`BOT_OFFER_AFTER_MS`] a player still
//! waiting is offered a marked bot (or to keep waiting); keeping waiting
//! withdraws the offer until another [`BOT_OFFER_AFTER_MS`] has passed.
//!
//! A player's estimate is the rating kept in the store (its `mu` after
//! the idle time since the player's last rated race), read as the player
//! asks; a player with none (a guest, or anyone before their first rated
//! race) has the estimate of a new player, [`UNRATED_MU`]. Tests give
//! estimates in advance instead, through [`RatingLookup`].

use std::fmt;
use std::sync::Arc;

use patience_shared::game::GameKind;

use crate::store::PlayerId;

/// The estimate of a player who has no rating: a new player's `mu`.
pub const UNRATED_MU: f64 = patience_shared::rating::INITIAL_MU;

/// Estimates given in advance, instead of the store's ratings.
pub trait RatingLookup: Send + Sync + fmt::Debug {
    /// The estimate `mu` of the player (registered as `player`, if so,
    /// and named `name`) at `game`; `None` if it gives none.
    fn estimate(&self, player: Option<PlayerId>, name: &str, game: GameKind) -> Option<f64>;
}

/// Estimates by display name, set in advance: for tests, which race
/// players of far ratings without racing them up first.
#[cfg(any(test, feature = "test-support"))]
#[derive(Debug, Default)]
pub struct EstimatesByName(pub std::collections::BTreeMap<String, f64>);

#[cfg(any(test, feature = "test-support"))]
impl RatingLookup for EstimatesByName {
    fn estimate(&self, _: Option<PlayerId>, name: &str, _: GameKind) -> Option<f64> {
        self.0.get(name).copied()
    }
}

/// Where quick race reads estimates: the store's ratings (the default), or
/// a [`RatingLookup`] set in advance.
#[derive(Clone, Debug, Default)]
pub struct Ratings(Option<Arc<dyn RatingLookup>>);

impl Ratings {
    /// Estimates read through `lookup` instead of the store.
    pub fn new(lookup: Arc<dyn RatingLookup>) -> Ratings {
        Ratings(Some(lookup))
    }

    /// The estimate given in advance for this player, if estimates are
    /// and one is; `None`: read the store.
    pub fn given(&self, player: Option<PlayerId>, name: &str, game: GameKind) -> Option<f64> {
        self.0
            .as_ref()?
            .estimate(player, name, game)
            .filter(|mu| mu.is_finite())
    }

    /// Whether estimates are given in advance.
    pub fn are_given(&self) -> bool {
        self.0.is_some()
    }
}

impl PartialEq for Ratings {
    fn eq(&self, other: &Ratings) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(mine), Some(theirs)) => Arc::ptr_eq(mine, theirs),
            _ => false,
        }
    }
}

impl Eq for Ratings {}

/// A player waiting alone in a quick race's room: what others matching
/// read of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Waiter {
    /// Their estimate.
    pub mu: f64,
    /// When they began waiting, on the server's clock.
    pub since_ms: u64,
}

impl Waiter {
    /// Whether this waiter and `other` may race each other at `now_ms`.
    pub fn meets(&self, other: &Waiter, now_ms: u64) -> bool {
        may_meet(
            self.mu,
            now_ms.saturating_sub(self.since_ms),
            other.mu,
            now_ms.saturating_sub(other.since_ms),
        )
    }
}

/// The window a player who has waited `waited_ms` is told of: whole
/// rating points either side, `None` once open to anyone.
pub fn shown_window(waited_ms: u64) -> Option<u8> {
    let width = half_width(waited_ms);
    // Finite widths are whole numbers below 20: the cast loses nothing.
    width
        .is_finite()
        .then(|| width.round().clamp(0.0, 255.0) as u8)
}

/// When a waiter who began at `since_ms` is next looked at after `now_ms`:
/// the next step of their window.
pub fn next_step_ms(since_ms: u64, now_ms: u64) -> u64 {
    let waited = now_ms.saturating_sub(since_ms);
    since_ms.saturating_add((waited / STEP_MS + 1) * STEP_MS)
}

/// The window's half-width when a player starts waiting.
pub const START_HALF_WIDTH: f64 = 4.0;

/// How much the half-width grows each [`STEP_MS`].
pub const GROWTH_PER_STEP: f64 = 2.0;

/// How often the window widens.
pub const STEP_MS: u64 = patience_shared::protocol::QUICK_RACE_STEP_MS;

/// After this long the window is open to anyone.
pub const OPEN_AFTER_MS: u64 = 60_000;

/// After this long a waiting player is offered a bot.
pub const BOT_OFFER_AFTER_MS: u64 = 90_000;

/// The half-width of the window of a player who has waited `waited_ms`.
pub fn half_width(waited_ms: u64) -> f64 {
    if waited_ms >= OPEN_AFTER_MS {
        return f64::INFINITY;
    }
    START_HALF_WIDTH + GROWTH_PER_STEP * (waited_ms / STEP_MS) as f64
}

/// Whether two waiting players, with estimates `first_mu` and
/// `second_mu` and waits `first_waited_ms` and `second_waited_ms`, may
/// race each other.
pub fn may_meet(
    first_mu: f64,
    first_waited_ms: u64,
    second_mu: f64,
    second_waited_ms: u64,
) -> bool {
    let wider = half_width(first_waited_ms).max(half_width(second_waited_ms));
    (first_mu - second_mu).abs() <= wider
}

/// Whether a player who has waited `waited_ms` is offered a bot.
pub fn offers_bot(waited_ms: u64) -> bool {
    waited_ms >= BOT_OFFER_AFTER_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_widens_in_steps_then_opens() {
        let check = |waited_ms: u64, expected: f64| {
            assert_eq!(half_width(waited_ms), expected, "{waited_ms} ms");
        };
        check(0, 4.0);
        check(9_999, 4.0);
        check(10_000, 6.0);
        check(25_000, 8.0);
        check(59_999, 14.0);
        check(60_000, f64::INFINITY);
    }

    #[test]
    fn players_meet_within_the_wider_window() {
        // Equal estimates meet at once.
        assert!(may_meet(25.0, 0, 25.0, 0));
        // Five apart: not at first, once either has waited ten seconds.
        assert!(!may_meet(25.0, 0, 30.0, 0));
        assert!(may_meet(25.0, 10_000, 30.0, 0));
        assert!(may_meet(25.0, 0, 30.0, 10_000));
        // Far apart: only once one window is open.
        assert!(!may_meet(10.0, 59_999, 40.0, 0));
        assert!(may_meet(10.0, 60_000, 40.0, 0));
    }

    #[test]
    fn waiters_meet_by_their_waits_at_the_time_asked() {
        let low = Waiter {
            mu: 15.0,
            since_ms: 1_000,
        };
        let high = Waiter {
            mu: 35.0,
            since_ms: 1_000,
        };
        // Twenty apart: a window of 20 is never reached by steps (14 at
        // 50 s), so they meet when the first window opens, at 60 s.
        assert!(!low.meets(&high, 1_000));
        assert!(!high.meets(&low, 60_999));
        assert!(low.meets(&high, 61_000));
    }

    #[test]
    fn the_window_shown_is_whole_points_until_open() {
        assert_eq!(shown_window(0), Some(4));
        assert_eq!(shown_window(20_000), Some(8));
        assert_eq!(shown_window(OPEN_AFTER_MS), None);
    }

    #[test]
    fn a_waiter_is_looked_at_each_step_of_their_own_wait() {
        assert_eq!(next_step_ms(5_000, 5_000), 15_000);
        assert_eq!(next_step_ms(5_000, 14_999), 15_000);
        assert_eq!(next_step_ms(5_000, 15_000), 25_000);
    }

    #[test]
    fn estimates_given_in_advance_are_finite_or_none() {
        let ratings = Ratings::new(Arc::new(EstimatesByName(
            [("ada".to_string(), 31.5), ("bob".to_string(), f64::NAN)]
                .into_iter()
                .collect(),
        )));
        assert_eq!(ratings.given(None, "ada", GameKind::Indian), Some(31.5));
        assert_eq!(ratings.given(None, "bob", GameKind::Indian), None);
        assert_eq!(ratings.given(None, "cy", GameKind::Indian), None);
        assert_eq!(
            Ratings::default().given(None, "ada", GameKind::Indian),
            None
        );
        assert_eq!(UNRATED_MU, 25.0);
    }

    #[test]
    fn a_bot_is_offered_after_the_documented_wait() {
        assert!(!offers_bot(0));
        assert!(!offers_bot(BOT_OFFER_AFTER_MS - 1));
        assert!(offers_bot(BOT_OFFER_AFTER_MS));
    }
}
