//! The slow tier of the client's tests, as in `patience-shared`: the long
//! loops (bots playing whole games at the strong level) run in full only
//! when the environment variable `PATIENCE_SLOW_TESTS` is set, as CI's slow
//! step does (`.ci/run`), and a short version of themselves otherwise,
//! saying so on their output.

/// The environment variable that turns the slow tier on.
const VARIABLE: &str = "PATIENCE_SLOW_TESTS";

/// `full` in the slow tier, `short` otherwise, which `test` prints: how many
/// moves, deals or games its loop runs.
pub(crate) fn count(test: &str, full: usize, short: usize) -> usize {
    let enabled = std::env::var_os(VARIABLE).is_some_and(|value| !value.is_empty() && value != "0");
    if enabled {
        full
    } else {
        println!("slow tier: {test} runs {short} of {full} (set {VARIABLE}=1 for all of them)");
        short.min(full)
    }
}
