//! The slow tier of the test suite, as rust-analyzer's `RUN_SLOW_TESTS`.
//!
//! The long soundness and survey loops (verdicts compared over a thousand
//! deals, lines replayed over five thousand) run in full only when the
//! environment variable `PATIENCE_SLOW_TESTS` is set; CI runs them so, as a
//! step of its own (`.ci/run`). Otherwise each runs a short version of
//! itself, the same checks over fewer deals, and says so on its output, so
//! that the default `cargo test` stays quick and still checks something.

/// The environment variable that turns the slow tier on.
const VARIABLE: &str = "PATIENCE_SLOW_TESTS";

/// Whether the slow tier is on: the variable is set, to anything but `0` or
/// nothing.
#[allow(
    clippy::disallowed_methods,
    reason = "test support only (the module is cfg(test)): the switch is the environment's, as rust-analyzer's"
)]
pub(crate) fn enabled() -> bool {
    std::env::var_os(VARIABLE).is_some_and(|value| !value.is_empty() && value != "0")
}

/// How many of a loop's `full` items `test` runs: all of them in the slow
/// tier, `short` otherwise, which it prints.
pub(crate) fn count(test: &str, full: u64, short: u64) -> u64 {
    if enabled() {
        full
    } else {
        println!("slow tier: {test} runs {short} of {full} (set {VARIABLE}=1 for all of them)");
        short.min(full)
    }
}

/// A floor set for a loop of `full` items (at least so many deals compared,
/// won, …), scaled to the `n` items the loop runs.
pub(crate) fn floor(at_full: usize, full: u64, n: u64) -> usize {
    let scaled = u128::from(n) * at_full as u128 / u128::from(full.max(1));
    usize::try_from(scaled).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_scales_with_the_loop() {
        for (at_full, full, n, expected) in [
            (500, 1000, 1000, 500),
            (500, 1000, 100, 50),
            (1000, 5000, 250, 50),
            (700, 1000, 0, 0),
        ] {
            assert_eq!(
                floor(at_full, full, n),
                expected,
                "{at_full} of {full} at {n}"
            );
        }
    }

    #[test]
    fn the_short_count_never_exceeds_the_full_one() {
        let n = count("the_short_count_never_exceeds_the_full_one", 10, 20);
        assert!(n == 10, "{n}");
    }
}
