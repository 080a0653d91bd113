//! The command-line grammar of `patience`.

use clap::{Parser, Subcommand};
use patience_shared::game::GameKind;
use patience_shared::solver::DEFAULT_BUDGET;

/// Patience Race: race other people on the same solitaire deal.
#[derive(Debug, Parser)]
#[command(name = "patience", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the deal of GAME for SEED, every card included.
    Deal {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// The deal's seed (any 64-bit unsigned number).
        seed: u64,
        /// Print the full state as JSON (layout in docs/NOTATION.md).
        #[arg(long)]
        json: bool,
    },
    /// Play moves from a deal and list the legal moves of the position reached.
    Moves {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// The deal's seed.
        seed: u64,
        /// Moves to play first, in the notation, separated by spaces.
        #[arg(long, value_name = "MOVES", default_value = "")]
        play: String,
        /// Print the position, the won and stuck flags and the moves as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Prove a deal winnable (with a winning line) or unwinnable.
    Solve {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// The deal's seed.
        seed: u64,
        /// The most positions to search before giving up.
        #[arg(long, default_value_t = DEFAULT_BUDGET)]
        budget: u64,
        /// Also give up after this many seconds (the verdict then depends on the machine).
        #[arg(long, value_name = "SECONDS")]
        max_seconds: Option<f64>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Solve a range of deals in parallel and report how many are winnable.
    Survey {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// How many deals to solve.
        #[arg(long)]
        deals: u64,
        /// The first seed; seeds FROM to FROM+DEALS-1 are solved.
        #[arg(long, default_value_t = 1)]
        from: u64,
        /// The most positions to search per deal.
        #[arg(long, default_value_t = DEFAULT_BUDGET)]
        budget: u64,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
}
