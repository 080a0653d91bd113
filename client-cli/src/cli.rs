//! The command-line grammar of `patience`.

use clap::{Args, Parser, Subcommand};
use patience_shared::game::GameKind;
use patience_shared::solver::DEFAULT_BUDGET;

use crate::net::DEFAULT_SERVER;

/// Options of every online command.
#[derive(Debug, Clone, Args)]
pub struct Online {
    /// The race server's WebSocket URL.
    #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
    pub server: String,
    /// The name others see (remembered in the config directory).
    #[arg(long)]
    pub name: Option<String>,
    /// Line mode: moves from standard input, board and events as text.
    #[arg(long)]
    pub plain: bool,
}

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
    /// Quick race: join a public room of GAME, or open one.
    Play {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// Race a bot at once, in a private room of two.
        #[arg(long)]
        bot: bool,
        /// The bot's seconds per move.
        #[arg(long, default_value_t = 2.0, requires = "bot")]
        pace: f64,
        /// Server, name, plain.
        #[command(flatten)]
        online: Online,
    },
    /// Open a room, print its code and wait in its lobby.
    Create {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// Seats, 2 to 8.
        #[arg(long, default_value_t = 2)]
        players: u8,
        /// Keep quick race out: only people given the code may join.
        #[arg(long)]
        private: bool,
        /// Let players take back moves.
        #[arg(long)]
        undo: bool,
        /// Server, name, plain.
        #[command(flatten)]
        online: Online,
    },
    /// Take a seat in a room by its code.
    Join {
        /// The room's code, e.g. K7PQ3M.
        code: String,
        /// Server, name, plain.
        #[command(flatten)]
        online: Online,
    },
    /// Watch a room's race, every board live.
    Watch {
        /// The room's code.
        code: String,
        /// Server, name, plain.
        #[command(flatten)]
        online: Online,
    },
    /// Play GAME offline, no server: a proved-winnable deal unless SEED is given.
    Practice {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// The deal's seed.
        seed: Option<u64>,
        /// Line mode: moves from standard input, board as text.
        #[arg(long)]
        plain: bool,
    },
    /// Join a room as a bot that plays a solver line at a human pace.
    Bot {
        /// The room's code.
        #[arg(long)]
        join: String,
        /// Seconds per move.
        #[arg(long, default_value_t = 2.0)]
        pace: f64,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
        /// The bot's name.
        #[arg(long, default_value = "bot")]
        name: String,
    },
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
