//! How long a bot may think about one move.
//!
//! The bot's decisions never read a clock: [`crate::bot::Bot::next_move_within`]
//! is handed a [`Deadline`] and asks it, between its searches and every few
//! thousand positions inside them (the solver's `should_stop`), whether its
//! time is up. The race loop hands it a [`WallClockDeadline`]; tests hand it
//! a fake that strikes after a set number of questions, so they stay
//! deterministic.
//!
//! In a room the limit follows the bot's pace ([`think_limit`]): thinking
//! counts toward the pace (the move is due a pace after the board came), and
//! a move may take at most [`LIMIT_PER_PACE`] paces, never more than
//! [`LIMIT_CAP`]. The measured cost in wins is in `docs/BOTS.md`.

use std::time::{Duration, Instant};

pub use patience_shared::bot::{Deadline, NoDeadline};

/// A moment on the wall clock: the deadline of a bot in a real race or a
/// strength run with a limit.
#[derive(Clone, Copy, Debug)]
pub struct WallClockDeadline {
    at: Instant,
}

impl WallClockDeadline {
    /// The deadline `limit` after `started` (when the board came).
    pub fn after(started: Instant, limit: Duration) -> WallClockDeadline {
        WallClockDeadline {
            at: started + limit,
        }
    }
}

impl Deadline for WallClockDeadline {
    fn passed(&self) -> bool {
        Instant::now() >= self.at
    }
}

/// How many paces a bot may think about one move. Twice the pace: at the
/// default pace of 2 s a hard move takes at most 4 s, like a person's
/// occasional long look, and the moves that follow a planned line (most of
/// them, in no time) keep the average at the pace.
pub const LIMIT_PER_PACE: u32 = 2;

/// The longest a bot thinks about one move, whatever its pace.
pub const LIMIT_CAP: Duration = Duration::from_secs(10);

/// The thinking limit of a bot racing at `pace`: [`LIMIT_PER_PACE`] paces,
/// at most [`LIMIT_CAP`]; none at pace 0, where the bot is asked to move as
/// soon as it has thought its fill (as in the strength measurements).
pub fn think_limit(pace: Duration) -> Option<Duration> {
    (!pace.is_zero()).then(|| (pace * LIMIT_PER_PACE).min(LIMIT_CAP))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limit is twice the pace, capped, and none at pace 0.
    #[test]
    fn the_limit_is_two_paces_capped_and_none_at_pace_zero() {
        let cases = [
            (0, None),
            (500, Some(1_000)),
            (1_500, Some(3_000)),
            (2_000, Some(4_000)),
            (5_000, Some(10_000)),
            (60_000, Some(10_000)),
        ];
        for (pace_ms, limit_ms) in cases {
            assert_eq!(
                think_limit(Duration::from_millis(pace_ms)),
                limit_ms.map(Duration::from_millis),
                "pace {pace_ms} ms"
            );
        }
    }

    /// A deadline in the past has passed, one an hour away has not (no
    /// waiting: the clock is only read).
    #[test]
    fn a_wall_clock_deadline_passes_at_its_moment() {
        let now = Instant::now();
        assert!(WallClockDeadline::after(now, Duration::ZERO).passed());
        assert!(!WallClockDeadline::after(now, Duration::from_secs(3600)).passed());
        assert!(!NoDeadline.passed());
    }
}
