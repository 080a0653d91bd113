//! The command-line grammar of `patience`.

use clap::{Args, Parser, Subcommand};
use patience_shared::bot::BotLevel;
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
    /// Quick race: join a public room of GAME whose waiting player is near
    /// your rating, or open one and wait (a bot is offered after 90 s).
    Play {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// Race a bot the server runs, at once, in a private room of two.
        #[arg(long)]
        bot: bool,
        /// The bot's mean seconds per move, thinking included; by default
        /// its level's (easy 3, normal 2, strong 1.5). The server keeps it
        /// between 0.5 and 10.
        #[arg(long, requires = "bot")]
        pace: Option<f64>,
        /// How hard the bot tries: easy, normal or strong (docs/BOTS.md).
        #[arg(long, default_value_t, requires = "bot")]
        bot_level: BotLevel,
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
        /// Show every racer's board and moves to everyone in the room while
        /// the race runs (watchers see every board, each racer a rival's
        /// under their own), for friends who agree to it (the room is then
        /// private).
        #[arg(long)]
        open_boards: bool,
        /// A series: the room's race and its rematches are one match, won
        /// by the first to win a majority of N races (1 to 9).
        #[arg(long, value_name = "N")]
        best_of: Option<u8>,
        /// Count the room's races for ratings (no undo, no open boards).
        /// Public rooms are rated without it, unless they allow undo.
        #[arg(long, conflicts_with_all = ["undo", "open_boards"])]
        rated: bool,
        /// Server, name, plain.
        #[command(flatten)]
        online: Online,
    },
    /// The open public rooms still forming; a digit key takes a seat in
    /// one (with --plain: the list, once).
    Lobby {
        /// Only rooms of this game.
        game: Option<GameKind>,
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
    /// Watch a room's race: every racer's progress live, and every board
    /// live too when the room was created with --open-boards.
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
    /// Join a room as a bot that races at a human pace: it sees what a
    /// racer sees and plans on a guess of the face-down cards.
    Bot {
        /// The room's code.
        #[arg(long)]
        join: String,
        /// Seconds per move, thinking included; the bot thinks about one
        /// move for at most two paces (10 s at most; no limit at 0).
        #[arg(long, default_value_t = 2.0)]
        pace: f64,
        /// How hard the bot tries: easy, normal or strong (docs/BOTS.md).
        #[arg(long, default_value_t)]
        level: BotLevel,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
        /// The bot's name.
        #[arg(long, default_value = "bot")]
        name: String,
    },
    /// Register a player on the server; its secret token is kept in the config directory.
    Register {
        /// The player's name: 3 to 20 characters, ASCII letters, digits, _ and -, starting with a letter.
        name: String,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
        /// Register even if an account is stored for this server (its token is then forgotten).
        #[arg(long)]
        force: bool,
    },
    /// Print a one-time code that signs in as the account stored for the
    /// server on another device (the web page, or `patience sign-in`).
    ///
    /// It works once, for ten minutes; whoever types it first signs in as you.
    SignInCode {
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
    },
    /// Sign in with a code printed by `patience sign-in-code` or shown by
    /// the web page; the new token is kept in the config directory.
    SignIn {
        /// The code, e.g. K7PQ-3M9X (case, spaces and the dash do not matter).
        code: String,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
        /// Sign in even if an account is stored for this server (its token is then forgotten).
        #[arg(long)]
        force: bool,
    },
    /// Play the day's deal of GAME: one attempt per player and day, on the server's clock.
    ///
    /// Registers first (as --name, or the remembered name) if no account is
    /// stored. Shows the terms first: the clock starts, and the board shows,
    /// when you start (Enter; q leaves with nothing started). Run it again
    /// after a dropped connection to take the attempt back. When today's
    /// deal was played already it says so, shows your result and exits
    /// successfully.
    Daily {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// Server, name (for a first registration), plain.
        #[command(flatten)]
        online: Online,
    },
    /// Show a day's leaderboard of GAME's daily deal, follow it live, or list past days.
    ///
    /// With --follow the page stays on screen and changes as attempts begin
    /// and finish (a new row takes its rank and pushes the rows below it
    /// down); --plain (or no terminal) prints the page, then one line per
    /// change, and --json one JSON message per line. With --days it lists
    /// the closed days, newest first: how many finished and won, the podium
    /// and the revealed seed.
    Leaderboard {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// The UTC date, YYYY-MM-DD (default: today, on the server's clock).
        #[arg(long, value_parser = parse_date, conflicts_with = "days")]
        date: Option<String>,
        /// Rows from the top (the server allows at most 100); with --days, days.
        #[arg(long)]
        limit: Option<u32>,
        /// Print the page as JSON (with --follow, one JSON message per line).
        #[arg(long)]
        json: bool,
        /// Stay and show each change live, until q (or Ctrl-C).
        #[arg(long, conflicts_with = "days")]
        follow: bool,
        /// With --follow: print one line per change instead of the screen.
        #[arg(long, requires = "follow")]
        plain: bool,
        /// List the past (closed) days with their podium and seed.
        #[arg(long)]
        days: bool,
        /// With --days: only days before this UTC date, YYYY-MM-DD.
        #[arg(long, value_parser = parse_date, requires = "days")]
        before: Option<String>,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
    },
    /// Show a player's daily records per game (default: yours).
    ///
    /// Per game: days played and won, best and median rank, best and median
    /// winning time, and the current and best streaks of days played and of
    /// days won. The records count closed days only (an open day counts
    /// once it closes); they run through the date shown.
    Stats {
        /// The player (default: the account stored for the server).
        name: Option<String>,
        /// Print the records as JSON.
        #[arg(long)]
        json: bool,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
    },
    /// Show a week's or a month's standings of GAME's daily deal (default: this week).
    ///
    /// Each day's attempt earns points by its place on that day's ranking:
    /// 25 18 15 12 10 8 6 4 2 1 for places 1 to 10, 1 for a win placed
    /// lower, nothing otherwise (an unranked attempt earns nothing). They are
    /// summed over the ISO week (Monday to Sunday, UTC) or the calendar
    /// month. Ties go to more wins, then less time over the winning days,
    /// then the account registered first. While a day of the period is
    /// open its points follow that day's live ranking.
    Standings {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// An ISO week, YYYY-Www (2026-W49); alone, the current one.
        #[arg(long, value_name = "KEY", value_parser = crate::tournament::parse_week, conflicts_with = "month")]
        week: Option<Option<String>>,
        /// A month, YYYY-MM (2026-12); alone, the current one.
        #[arg(long, value_name = "KEY", value_parser = crate::tournament::parse_month)]
        month: Option<Option<String>>,
        /// Rows from the top (the server caps it).
        #[arg(long)]
        limit: Option<u32>,
        /// Print the standings as JSON.
        #[arg(long)]
        json: bool,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
    },
    /// Show GAME's rating list, best first, with your own row.
    ///
    /// A rating is per player and game, from rated races (quick races and
    /// public rooms, and rooms created with --rated; never with undo, open
    /// boards, a bot's seat or one account in two seats): the winners rank
    /// by finish order and everyone who did not win ties for last. The
    /// figure is μ − 3σ (the skill estimate less three times its
    /// uncertainty); `?` marks a provisional one. The list holds players
    /// with a rated race of the game in the last 90 days.
    Ratings {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// Rows from the top (the server caps it).
        #[arg(long)]
        limit: Option<u32>,
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
    },
    /// Show a player's rating at GAME and its history (default: yours).
    Rating {
        /// three-blind-mice (tbm), indian, midshipman or virginia-reel (vr).
        game: GameKind,
        /// The player (default: the account stored for the server).
        name: Option<String>,
        /// Rated races to list, newest first (the server caps it).
        #[arg(long)]
        limit: Option<u32>,
        /// Print the rating and history as JSON.
        #[arg(long)]
        json: bool,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
    },
    /// Play a finished race or daily attempt back, step by step or at speed.
    Replay {
        /// The race's id, as results and leaderboards show it.
        race_id: u64,
        /// The race server's WebSocket URL.
        #[arg(long, env = "PATIENCE_SERVER", default_value = DEFAULT_SERVER)]
        server: String,
        /// Print every step and board as text, then the standings.
        #[arg(long)]
        plain: bool,
        /// Moves per second when playing.
        #[arg(long, default_value_t = 2.0)]
        speed: f64,
        /// Show this seat only (1 is the first seat).
        #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
        seat: Option<u8>,
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
        /// Print the summary as JSON, with the seeds left unknown and those proved lost.
        #[arg(long)]
        json: bool,
    },
}

/// A `YYYY-MM-DD` date as the protocol writes it (the server checks that
/// the day exists; this catches typing slips before connecting).
pub fn parse_date(text: &str) -> Result<String, String> {
    let parts: Vec<&str> = text.split('-').collect();
    let number = |part: &str, digits: usize, range: std::ops::RangeInclusive<u32>| {
        part.len() == digits
            && part.chars().all(|c| c.is_ascii_digit())
            && part
                .parse::<u32>()
                .is_ok_and(|value| range.contains(&value))
    };
    match parts.as_slice() {
        [year, month, day]
            if number(year, 4, 1..=9999) && number(month, 2, 1..=12) && number(day, 2, 1..=31) =>
        {
            Ok(text.to_string())
        }
        _ => Err(format!("{text:?} is not a date written YYYY-MM-DD")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_states_the_scale_the_server_sums() {
        use clap::CommandFactory as _;
        let mut command = Cli::command();
        let help = command
            .find_subcommand_mut("standings")
            .expect("a standings command")
            .render_long_help()
            .to_string();
        assert!(
            help.contains(&crate::tournament::points_scale_text()),
            "{help}"
        );
        assert!(help.contains("1 for a win placed lower"), "{help}");
        assert_eq!(
            crate::tournament::points_scale_text(),
            "25 18 15 12 10 8 6 4 2 1"
        );
    }

    #[test]
    fn dates_are_written_year_month_day() {
        for (text, ok) in [
            ("2026-12-01", true),
            ("2026-02-31", true), // the server knows calendars
            ("2026-12-1", false),
            ("26-12-01", false),
            ("2026-13-01", false),
            ("2026-00-10", false),
            ("2026-12-32", false),
            ("today", false),
            ("2026-12-01-", false),
            ("+026-12-01", false),
        ] {
            assert_eq!(parse_date(text).is_ok(), ok, "{text}");
        }
    }

    #[test]
    fn the_player_commands_parse() {
        use clap::Parser as _;
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|cli| cli.command);
        assert!(matches!(
            parse(&["patience", "register", "ada", "--server", "ws://h:1"]),
            Ok(Command::Register { ref name, force: false, .. }) if name == "ada"
        ));
        assert!(matches!(
            parse(&["patience", "daily", "tbm", "--plain", "--name", "ada"]),
            Ok(Command::Daily { game: GameKind::ThreeBlindMice, ref online })
                if online.plain && online.name.as_deref() == Some("ada")
        ));
        assert!(matches!(
            parse(&[
                "patience",
                "leaderboard",
                "vr",
                "--date",
                "2026-12-01",
                "--limit",
                "5",
                "--json"
            ]),
            Ok(Command::Leaderboard {
                game: GameKind::VirginiaReel,
                limit: Some(5),
                json: true,
                ..
            })
        ));
        assert!(parse(&["patience", "leaderboard", "tbm", "--date", "yesterday"]).is_err());
        assert!(matches!(
            parse(&["patience", "leaderboard", "tbm", "--follow", "--plain"]),
            Ok(Command::Leaderboard {
                follow: true,
                plain: true,
                days: false,
                ..
            })
        ));
        assert!(matches!(
            parse(&[
                "patience",
                "leaderboard",
                "tbm",
                "--days",
                "--before",
                "2026-11-30",
                "--limit",
                "7"
            ]),
            Ok(Command::Leaderboard {
                days: true,
                before: Some(ref before),
                limit: Some(7),
                ..
            }) if before == "2026-11-30"
        ));
        for wrong in [
            &["patience", "leaderboard", "tbm", "--plain"][..],
            &["patience", "leaderboard", "tbm", "--days", "--follow"],
            &[
                "patience",
                "leaderboard",
                "tbm",
                "--days",
                "--date",
                "2026-11-30",
            ],
            &["patience", "leaderboard", "tbm", "--before", "2026-11-30"],
            &["patience", "standings", "tbm", "--week", "--month"],
            &["patience", "standings", "tbm", "--week", "49"],
            &["patience", "standings", "tbm", "--month", "2026-W49"],
        ] {
            assert!(parse(wrong).is_err(), "{wrong:?}");
        }
        assert!(matches!(
            parse(&["patience", "stats"]),
            Ok(Command::Stats {
                name: None,
                json: false,
                ..
            })
        ));
        assert!(matches!(
            parse(&["patience", "stats", "ada", "--json"]),
            Ok(Command::Stats { name: Some(ref name), json: true, .. }) if name == "ada"
        ));
        for (args, week, month) in [
            (&["patience", "standings", "tbm"][..], None, None),
            (
                &["patience", "standings", "tbm", "--week"],
                Some(None),
                None,
            ),
            (
                &["patience", "standings", "tbm", "--week", "2026-W49"],
                Some(Some("2026-W49")),
                None,
            ),
            (
                &["patience", "standings", "tbm", "--month"],
                None,
                Some(None),
            ),
            (
                &[
                    "patience",
                    "standings",
                    "tbm",
                    "--month",
                    "2026-12",
                    "--json",
                ],
                None,
                Some(Some("2026-12")),
            ),
        ] {
            let Ok(Command::Standings {
                week: parsed_week,
                month: parsed_month,
                ..
            }) = parse(args)
            else {
                panic!("{args:?} parses");
            };
            assert_eq!(parsed_week.as_ref().map(Option::as_deref), week, "{args:?}");
            assert_eq!(
                parsed_month.as_ref().map(Option::as_deref),
                month,
                "{args:?}"
            );
        }
        assert!(matches!(
            parse(&["patience", "replay", "731", "--seat", "2", "--speed", "8"]),
            Ok(Command::Replay {
                race_id: 731,
                seat: Some(2),
                ..
            })
        ));
        assert!(parse(&["patience", "replay", "731", "--seat", "0"]).is_err());
    }
}
