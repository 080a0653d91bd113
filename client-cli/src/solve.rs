//! `patience solve` and `patience survey`: the solver's verdicts on one deal
//! or on a range of deals.
//!
//! The solver runs on plain OS threads here (one per `--threads`), never on
//! an async runtime. Times are measured around each solve by this module; the
//! solver itself reads no clock.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use patience_shared::game::GameKind;
use patience_shared::solver::any::{DealReport, VerdictKind, solve_deal};
use patience_shared::solver::{Budget, ReplayFailure};
use serde::Serialize;

/// `solve --json` output: the report plus the time it took.
#[derive(Debug, Serialize)]
pub struct SolveJson {
    /// The report.
    #[serde(flatten)]
    pub report: DealReport,
    /// Wall-clock milliseconds.
    pub millis: u64,
}

/// The text (or JSON) of `patience solve`.
pub fn solve(
    game: GameKind,
    seed: u64,
    budget: u64,
    max_seconds: Option<f64>,
    json: bool,
) -> Result<String, ReplayFailure> {
    let started = Instant::now();
    let deadline = max_seconds.map(|seconds| started + Duration::from_secs_f64(seconds.max(0.0)));
    let stop = move || deadline.is_some_and(|deadline| Instant::now() >= deadline);
    let budget = Budget {
        positions: budget,
        should_stop: max_seconds.map(|_| &stop as &(dyn Fn() -> bool + Sync)),
    };
    let report = solve_deal(game, seed, budget)?;
    let millis = started.elapsed().as_millis() as u64;
    if json {
        return Ok(serde_json::to_string_pretty(&SolveJson { report, millis }).unwrap_or_default());
    }
    let mut out = format!(
        "{} seed {seed}: {} ({} positions, {millis} ms)",
        game.title(),
        verdict_name(report.verdict),
        report.positions
    );
    if !report.solution.is_empty() {
        out.push_str(&format!("\nsolution ({} moves):\n", report.solution.len()));
        out.push_str(&report.solution.join(" "));
    }
    Ok(out)
}

fn verdict_name(verdict: VerdictKind) -> &'static str {
    match verdict {
        VerdictKind::Winnable => "winnable",
        VerdictKind::Unwinnable => "unwinnable",
        VerdictKind::Unknown => "unknown (budget ran out)",
    }
}

/// `survey --json` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SurveySummary {
    /// The game.
    pub game: GameKind,
    /// How many deals were solved.
    pub deals: u64,
    /// The first seed.
    pub from: u64,
    /// Positions budget per deal.
    pub budget: u64,
    /// Deals proved winnable.
    pub winnable: u64,
    /// Deals proved unwinnable.
    pub unwinnable: u64,
    /// Deals not settled.
    pub unknown: u64,
    /// Lower end of the 95% interval for the winnable share, counting every unknown deal as lost.
    pub winnable_ci_low: f64,
    /// Upper end of the 95% interval for the winnable share, counting every unknown deal as won.
    pub winnable_ci_high: f64,
    /// Median wall-clock time per deal.
    pub median_millis: f64,
    /// 99th-percentile wall-clock time per deal.
    pub p99_millis: f64,
    /// Wall-clock time of the whole survey.
    pub total_millis: u64,
    /// Positions expanded over all deals.
    pub positions: u64,
    /// The seeds left unknown, in order, so they can be studied one by one.
    pub unknown_seeds: Vec<u64>,
    /// The seeds proved unwinnable, in order, so that a later search can
    /// be checked against them deal by deal (in the JSON only: in most
    /// deals of some games they would fill the screen).
    pub unwinnable_seeds: Vec<u64>,
}

/// The Wilson score interval for `successes` out of `trials` at 95%.
pub fn wilson_interval(successes: u64, trials: u64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let n = trials as f64;
    let p = successes as f64 / n;
    let denominator = 1.0 + Z * Z / n;
    let centre = p + Z * Z / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + Z * Z / (4.0 * n * n)).sqrt();
    (
        ((centre - spread) / denominator).max(0.0),
        ((centre + spread) / denominator).min(1.0),
    )
}

/// The value at `quantile` (0..=1) of sorted `values`, nearest rank.
fn percentile(sorted: &[f64], quantile: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (quantile * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Summarises per-deal results (verdict, milliseconds, positions).
pub fn summarise(
    game: GameKind,
    from: u64,
    budget: u64,
    results: &[(VerdictKind, f64, u64)],
    total_millis: u64,
) -> SurveySummary {
    let count = |kind| {
        results
            .iter()
            .filter(|(verdict, _, _)| *verdict == kind)
            .count() as u64
    };
    let (winnable, unwinnable, unknown) = (
        count(VerdictKind::Winnable),
        count(VerdictKind::Unwinnable),
        count(VerdictKind::Unknown),
    );
    let deals = results.len() as u64;
    let (winnable_ci_low, _) = wilson_interval(winnable, deals);
    let (_, winnable_ci_high) = wilson_interval(winnable + unknown, deals);
    let mut millis: Vec<f64> = results.iter().map(|(_, ms, _)| *ms).collect();
    millis.sort_by(f64::total_cmp);
    SurveySummary {
        game,
        deals,
        from,
        budget,
        winnable,
        unwinnable,
        unknown,
        winnable_ci_low,
        winnable_ci_high,
        median_millis: percentile(&millis, 0.5),
        p99_millis: percentile(&millis, 0.99),
        total_millis,
        positions: results.iter().map(|(_, _, positions)| positions).sum(),
        unknown_seeds: Vec::new(),
        unwinnable_seeds: Vec::new(),
    }
}

/// Runs `patience survey` and returns its text or JSON.
pub fn survey(
    game: GameKind,
    deals: u64,
    from: u64,
    budget: u64,
    threads: Option<usize>,
    json: bool,
) -> Result<String, ReplayFailure> {
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 256);
    let progress = if std::io::stderr().is_terminal() {
        ProgressBar::new(deals)
    } else {
        ProgressBar::hidden()
    };
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} deals  {elapsed} elapsed, ~{eta} left")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let next = AtomicU64::new(0);
    let results: Mutex<Vec<(VerdictKind, f64, u64)>> =
        Mutex::new(Vec::with_capacity(deals as usize));
    // The seeds of the deals not won, with their verdicts.
    let unsettled_or_lost: Mutex<Vec<(VerdictKind, u64)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<ReplayFailure>> = Mutex::new(None);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= deals {
                        break;
                    }
                    let deal_started = Instant::now();
                    match solve_deal(game, from + index, Budget::positions(budget)) {
                        Ok(report) => {
                            let millis = deal_started.elapsed().as_secs_f64() * 1000.0;
                            if let Ok(mut results) = results.lock() {
                                results.push((report.verdict, millis, report.positions));
                            }
                            if report.verdict != VerdictKind::Winnable
                                && let Ok(mut seeds) = unsettled_or_lost.lock()
                            {
                                seeds.push((report.verdict, from + index));
                            }
                        }
                        Err(error) => {
                            if let Ok(mut failure) = failure.lock() {
                                failure.get_or_insert(error);
                            }
                        }
                    }
                    progress.inc(1);
                }
            });
        }
    });
    progress.finish_and_clear();
    if let Some(error) = failure.into_inner().ok().flatten() {
        return Err(error);
    }
    let results = results.into_inner().unwrap_or_default();
    let mut summary = summarise(
        game,
        from,
        budget,
        &results,
        started.elapsed().as_millis() as u64,
    );
    let mut seeds = unsettled_or_lost.into_inner().unwrap_or_default();
    seeds.sort_unstable_by_key(|&(_, seed)| seed);
    let seeds_of = |kind: VerdictKind| -> Vec<u64> {
        seeds
            .iter()
            .filter(|&&(verdict, _)| verdict == kind)
            .map(|&(_, seed)| seed)
            .collect()
    };
    summary.unknown_seeds = seeds_of(VerdictKind::Unknown);
    summary.unwinnable_seeds = seeds_of(VerdictKind::Unwinnable);
    if json {
        return Ok(serde_json::to_string_pretty(&summary).unwrap_or_default());
    }
    Ok(survey_text(&summary))
}

fn survey_text(s: &SurveySummary) -> String {
    let share = |n: u64| {
        if s.deals == 0 {
            0.0
        } else {
            100.0 * n as f64 / s.deals as f64
        }
    };
    let mut text = format!(
        "{} seeds {}..={} at {} positions per deal\n\
         winnable    {:>6}  {:5.1}%\n\
         unwinnable  {:>6}  {:5.1}%\n\
         unknown     {:>6}  {:5.1}%\n\
         winnable share, 95% interval counting unknown deals both ways: {:.1}% to {:.1}%\n\
         time per deal: median {:.1} ms, 99th percentile {:.1} ms; total {:.1} s; {:.0} positions/s",
        s.game.title(),
        s.from,
        s.from + s.deals.saturating_sub(1),
        s.budget,
        s.winnable,
        share(s.winnable),
        s.unwinnable,
        share(s.unwinnable),
        s.unknown,
        share(s.unknown),
        100.0 * s.winnable_ci_low,
        100.0 * s.winnable_ci_high,
        s.median_millis,
        s.p99_millis,
        s.total_millis as f64 / 1000.0,
        if s.total_millis == 0 {
            0.0
        } else {
            s.positions as f64 * 1000.0 / s.total_millis as f64
        },
    );
    if !s.unknown_seeds.is_empty() {
        let seeds: Vec<String> = s.unknown_seeds.iter().map(u64::to_string).collect();
        text.push_str(&format!("\nunknown seeds: {}", seeds.join(" ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_known_values() {
        let check = |successes, trials, low: f64, high: f64| {
            let (l, h) = wilson_interval(successes, trials);
            assert!(
                (l - low).abs() < 5e-4 && (h - high).abs() < 5e-4,
                "{successes}/{trials}: {l} {h}"
            );
        };
        check(0, 10, 0.0, 0.2775);
        check(5, 10, 0.2366, 0.7634);
        check(470, 1000, 0.4392, 0.5010);
        check(10, 10, 0.7225, 1.0);
    }

    #[test]
    fn summary_counts_unknown_deals_both_ways() {
        let results = [
            (VerdictKind::Winnable, 3.0, 10),
            (VerdictKind::Unwinnable, 1.0, 20),
            (VerdictKind::Unknown, 9.0, 30),
            (VerdictKind::Winnable, 2.0, 40),
        ];
        let summary = summarise(GameKind::Indian, 1, 100, &results, 15);
        assert_eq!(
            (summary.winnable, summary.unwinnable, summary.unknown),
            (2, 1, 1)
        );
        assert_eq!(summary.winnable_ci_low, wilson_interval(2, 4).0);
        assert_eq!(summary.winnable_ci_high, wilson_interval(3, 4).1);
        assert_eq!(summary.median_millis, 2.0);
        assert_eq!(summary.p99_millis, 9.0);
        assert_eq!(summary.positions, 100);
    }

    /// The seeds left unknown are listed, in order, so they can be studied;
    /// a survey that settles everything lists none.
    #[test]
    fn survey_lists_its_unknown_seeds() {
        let cases = [
            // Ten positions settle no Midshipman deal.
            (GameKind::Midshipman, 4, 10, Some("unknown seeds: 5 6 7 8")),
            // Seeds 5 to 8 of Three Blind Mice settle within 100,000.
            (GameKind::ThreeBlindMice, 4, 100_000, None),
        ];
        for (game, deals, budget, listed) in cases {
            let text = survey(game, deals, 5, budget, Some(2), false).expect("survey");
            let line = text.lines().find(|line| line.starts_with("unknown seeds"));
            assert_eq!(line, listed, "{text}");
        }
    }

    /// The JSON lists the seeds proved lost as well as those left unknown,
    /// each in order, and no seed in both.
    #[test]
    fn survey_json_lists_its_lost_and_unknown_seeds() {
        let json = survey(GameKind::ThreeBlindMice, 8, 1, 100_000, Some(2), true).expect("survey");
        let summary: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        let seeds = |field: &str| -> Vec<u64> {
            summary[field]
                .as_array()
                .expect("a list")
                .iter()
                .filter_map(serde_json::Value::as_u64)
                .collect()
        };
        let lost = seeds("unwinnable_seeds");
        // Most Three Blind Mice deals are lost, so these eight hold some.
        assert!(!lost.is_empty(), "{json}");
        assert_eq!(
            Some(lost.len() as u64),
            summary["unwinnable"].as_u64(),
            "{json}"
        );
        assert!(lost.is_sorted(), "{json}");
        for seed in &lost {
            let report = solve_deal(GameKind::ThreeBlindMice, *seed, Budget::positions(100_000))
                .expect("solves");
            assert_eq!(report.verdict, VerdictKind::Unwinnable, "seed {seed}");
        }
        assert_eq!(seeds("unknown_seeds"), Vec::<u64>::new(), "{json}");
    }
}
