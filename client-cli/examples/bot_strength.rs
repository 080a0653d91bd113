//! How often a bot wins, per game and level: the figures of `docs/BOTS.md`.
//!
//! Walks the seeds from `--from` and keeps the first `--deals` of each game
//! that the solver proves winnable with full knowledge of the deal (at
//! `--prove-budget` positions), then lets a bot play each of them alone at
//! pace 0 ([`patience_cli::bot::play_alone`]): the bot sees each board as the
//! server would send it, never the deal. With `--think-limit SECS` each
//! move is chosen within that much wall clock time (a bot racing at pace
//! `p` gets `2 p`, at most 10 s: `patience_cli::thinking::think_limit`);
//! without it, no limit, as in the published figures. Run it in release:
//!
//! ```sh
//! cargo run --release -p patience-cli --example bot_strength -- --level strong
//! ```

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use patience_cli::bot::{BotLevel, play_alone_timed};
use patience_cli::solve::wilson_interval;
use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::solver::Budget;
use patience_shared::solver::any::{VerdictKind, solve_deal};

/// The bot's wins on proved deals.
#[derive(Debug, Parser)]
struct Options {
    /// The games, comma separated.
    #[arg(long, value_delimiter = ',', default_values = ["tbm", "indian", "midshipman", "vr"])]
    games: Vec<GameKind>,
    /// Proved deals per game.
    #[arg(long, default_value_t = 100)]
    deals: usize,
    /// The first seed tried.
    #[arg(long, default_value_t = 1)]
    from: u64,
    /// The bot's level.
    #[arg(long, default_value_t = BotLevel::Strong)]
    level: BotLevel,
    /// Positions the solver may spend proving a deal winnable.
    #[arg(long, default_value_t = 200_000)]
    prove_budget: u64,
    /// The most moves a bot may make in one game before it counts as lost.
    #[arg(long, default_value_t = 1_000)]
    max_moves: u64,
    /// Threads playing games side by side.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Prints each game as it ends (seed, won, moves, time) on stderr.
    #[arg(long)]
    each: bool,
    /// Seconds of wall clock time the bot may think about one move (none:
    /// no limit). Under load the limit strikes after less of the bot's
    /// own work.
    #[arg(long)]
    think_limit: Option<f64>,
}

fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let think_limit = options
        .think_limit
        .map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|error| anyhow::anyhow!("--think-limit: {error}"))?;
    for &game in &options.games {
        let started = Instant::now();
        let mut seeds = Vec::with_capacity(options.deals);
        let mut seed = options.from;
        while seeds.len() < options.deals {
            let report = solve_deal(game, seed, Budget::positions(options.prove_budget))?;
            if report.verdict == VerdictKind::Winnable {
                seeds.push(seed);
            }
            seed += 1;
        }
        let proving = started.elapsed();
        let next = AtomicUsize::new(0);
        let results = Mutex::new(Vec::with_capacity(seeds.len()));
        // Microseconds each move took the bot to choose, over every game.
        let thinking = Mutex::new(Vec::new());
        let playing = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..options.threads.max(1) {
                scope.spawn(|| {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&seed) = seeds.get(index) else { break };
                        let game_started = Instant::now();
                        let mut micros = Vec::new();
                        let alone = play_alone_timed(
                            &AnyGame::deal(game, seed),
                            options.level,
                            seed,
                            options.max_moves,
                            think_limit,
                            |took| micros.push(took.as_micros()),
                        );
                        if let Ok(mut thinking) = thinking.lock() {
                            thinking.extend(micros);
                        }
                        let millis = game_started.elapsed().as_secs_f64() * 1000.0;
                        if options.each {
                            eprintln!(
                                "{} seed {seed}: {} in {} moves, {millis:.0} ms",
                                game.slug(),
                                if alone.won { "won" } else { "lost" },
                                alone.moves
                            );
                        }
                        if let Ok(mut results) = results.lock() {
                            results.push((seed, alone, millis));
                        }
                    }
                });
            }
        });
        let mut results = results.into_inner().unwrap_or_default();
        results.sort_by_key(|(seed, _, _)| *seed);
        let won = results.iter().filter(|(_, alone, _)| alone.won).count() as u64;
        let games = results.len() as u64;
        let (low, high) = wilson_interval(won, games);
        let mut millis: Vec<f64> = results.iter().map(|(_, _, millis)| *millis).collect();
        millis.sort_by(f64::total_cmp);
        let median = millis.get(millis.len() / 2).copied().unwrap_or(0.0);
        let mut thinking = thinking.into_inner().unwrap_or_default();
        thinking.sort_unstable();
        let percentile = |share: f64| {
            let index =
                ((thinking.len() as f64 * share) as usize).min(thinking.len().saturating_sub(1));
            thinking
                .get(index)
                .map_or(0.0, |&micros| micros as f64 / 1000.0)
        };
        let won_moves: Vec<u64> = results
            .iter()
            .filter(|(_, alone, _)| alone.won)
            .map(|(_, alone, _)| alone.moves)
            .collect();
        let mean_moves = if won_moves.is_empty() {
            0.0
        } else {
            won_moves.iter().sum::<u64>() as f64 / won_moves.len() as f64
        };
        let limit = think_limit.map_or_else(
            || "no thinking limit".to_string(),
            |limit| format!("thinking limit {} s", limit.as_secs_f64()),
        );
        println!(
            "{} · level {:?}, {limit}: won {won} of {games} proved deals ({:.1}%, 95% interval {:.1}%–{:.1}%); \
             seeds {}..={} ({} tried); {mean_moves:.0} moves per win; \
             median {median:.0} ms per game, {:.1} s playing, {:.1} s proving",
            game.title(),
            options.level,
            100.0 * won as f64 / games.max(1) as f64,
            100.0 * low,
            100.0 * high,
            options.from,
            seed - 1,
            seed - options.from,
            playing.elapsed().as_secs_f64(),
            proving.as_secs_f64(),
        );
        let lost: Vec<String> = results
            .iter()
            .filter(|(_, alone, _)| !alone.won)
            .map(|(seed, alone, _)| format!("{seed} ({} moves)", alone.moves))
            .collect();
        println!("  lost: {}", lost.join(", "));
        println!(
            "  time to choose a move over {} moves: median {:.1} ms, 99th percentile {:.0} ms, worst {:.0} ms",
            thinking.len(),
            percentile(0.5),
            percentile(0.99),
            thinking
                .last()
                .map_or(0.0, |&micros| micros as f64 / 1000.0),
        );
    }
    Ok(())
}
