//! Quick race by rating, the rule alone: which waiting players may meet,
//! and when a waiting player is offered a bot. Pure: the times are
//! arguments (milliseconds waited, on whatever clock the caller keeps),
//! so the rule is tested on a virtual clock.
//!
//! Players are matched on their estimate `mu` (not the conservative figure
//! shown, which is low for every new player whatever their skill). A
//! player's window is `mu` ± [`half_width`]: [`START_HALF_WIDTH`] at
//! first (about one skill class, `rating::BETA`), wider by
//! [`GROWTH_PER_STEP`] every [`STEP_MS`], and open to anyone after
//! [`OPEN_AFTER_MS`]. Two players may meet when their estimates differ
//! by no more than the wider of their two windows: a player who has
//! waited long is not kept waiting for a newcomer's narrow window. After
//! [`BOT_OFFER_AFTER_MS`] a player still waiting is offered a marked bot
//! (or to keep waiting).
//!
//! Not yet wired into the quick-race handler: the cluster's advert holds
//! one waiting room per game today.

/// The window's half-width when a player starts waiting.
pub const START_HALF_WIDTH: f64 = 4.0;

/// How much the half-width grows each [`STEP_MS`].
pub const GROWTH_PER_STEP: f64 = 2.0;

/// How often the window widens.
pub const STEP_MS: u64 = 10_000;

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
    fn a_bot_is_offered_after_the_documented_wait() {
        assert!(!offers_bot(0));
        assert!(!offers_bot(BOT_OFFER_AFTER_MS - 1));
        assert!(offers_bot(BOT_OFFER_AFTER_MS));
    }
}
