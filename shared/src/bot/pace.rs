//! A bot's pace between moves, varied like a person's.
//!
//! Apart from the planning because it is about time, not moves; pure all
//! the same: the pace and the move number are arguments, and the variation
//! is a hash of the move number, so whoever runs a bot (the server's hosted
//! bots on their room's clock, the terminal's `patience bot` on the wall
//! clock) gets the same pace for the same move.

use std::time::Duration;

/// The least share of the pace a move takes, in thousandths: two thirds.
const FASTEST_THOUSANDTHS: u64 = 667;
/// How many thousandths of the pace the variation spans: from two thirds
/// to four thirds.
const SPAN_THOUSANDTHS: u64 = 667;

/// `pace` varied by up to a third either way, the same for the same move
/// number: people do not move like a metronome. Whole thousandths of
/// `pace`, so a pace in milliseconds gives a whole number of microseconds.
pub fn human_pace(pace: Duration, move_number: u64) -> Duration {
    let mut hash = move_number.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    hash ^= hash >> 29;
    let thousandths = FASTEST_THOUSANDTHS + hash % SPAN_THOUSANDTHS;
    // Below 1,334, so it fits; a pace too long to scale stays as it is.
    let thousandths = u32::try_from(thousandths).unwrap_or(1000);
    (pace / 1000).checked_mul(thousandths).unwrap_or(pace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_varies_by_a_third_either_way() {
        let pace = Duration::from_millis(1_500);
        for move_number in 0..1_000 {
            let varied = human_pace(pace, move_number);
            assert!(
                (Duration::from_millis(1_000)..=Duration::from_millis(2_000)).contains(&varied),
                "move {move_number}: {varied:?}"
            );
        }
    }

    #[test]
    fn the_same_move_number_gets_the_same_pace_and_others_differ() {
        let pace = Duration::from_secs(2);
        let paces: Vec<u128> = (0..6)
            .map(|move_number| human_pace(pace, move_number).as_millis())
            .collect();
        assert_eq!(paces, [1_334, 1_414, 2_120, 2_038, 1_574, 1_384]);
        assert_eq!(human_pace(pace, 4), human_pace(pace, 4));
        assert_eq!(human_pace(Duration::ZERO, 4), Duration::ZERO);
        // Move 2 takes more than the pace, which the longest pace cannot.
        assert_eq!(human_pace(Duration::MAX, 2), Duration::MAX);
    }
}
