//! `patience-load`: drives a running server over real WebSockets and
//! reports what the clients saw, plus the server's CPU and memory from
//! `/proc`, as one JSON line on stdout (a summary for people on stderr).
//!
//! Scenarios (`--scenario`):
//! - `race` ([`race`]): rooms of racers and spectators of a
//!   `patience-server`, open loop at `--move-interval-ms` or closed loop
//!   at 0, with stalled players and spectators on demand;
//! - `idle` ([`idle`]): N sockets that say hello and then only answer
//!   pings, for the server's memory per socket;
//! - `echo` ([`echo_client`]): the race's racer count of sockets sending a
//!   move-sized frame to `patience-echo` (a bare tokio-tungstenite echo
//!   server) and timing the echo, as the baseline;
//! - `colyseus` ([`colyseus_race`]): the race's rooms, racers and
//!   spectators against the Colyseus 0.16 room of `load/colyseus/`, which
//!   does the same fan-out without rules, for a side-by-side comparison.
//!
//! The two race scenarios share their pacing, move timings and read loop
//! ([`fanout`]); [`colyseus`] is the Colyseus client.
//!
//! A new target plugs in as a [`Scenario`] variant and a module with a
//! `run` that fills [`measure::Stats`] and returns a [`measure::Outcome`];
//! the window, the `/proc` samples and the report are not its business.
//!
//! Layout: the command line; choosing the scenario; the report.

mod colyseus;
mod colyseus_race;
mod echo_client;
mod fanout;
mod idle;
mod measure;
mod net;
mod race;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, ValueEnum};
use serde::Serialize;

use crate::measure::{Probe, Stats, Window};
use crate::net::Connector;

/// What the load is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Scenario {
    /// Racing rooms with spectators (patience-server).
    Race,
    /// Sockets that say hello and idle (patience-server).
    Idle,
    /// Move-sized frames echoed (patience-echo).
    Echo,
    /// Racing rooms with spectators (the Colyseus room of load/colyseus/).
    Colyseus,
}

/// The command line; every setting is also in the JSON line's `settings`.
#[derive(Debug, Parser, Serialize)]
#[command(
    name = "patience-load",
    about = "Load a running patience-server (or patience-echo, or the Colyseus room) and report one JSON line"
)]
struct Cli {
    /// What to run.
    #[arg(long, value_enum, default_value_t = Scenario::Race)]
    scenario: Scenario,
    /// The server, e.g. ws://127.0.0.1:7878 (colyseus: ws://127.0.0.1:2567)
    #[arg(long, default_value = "ws://127.0.0.1:7878")]
    url: String,
    /// The server's process id: its CPU time and memory are read from
    /// /proc/PID at the start and end of the measurement.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Rooms racing at once (race); echo opens rooms × players sockets.
    #[arg(long, default_value_t = 10)]
    rooms: usize,
    /// Racers per room.
    #[arg(long, default_value_t = 4)]
    players: u8,
    /// Spectators per room.
    #[arg(long, default_value_t = 2)]
    spectators: usize,
    /// Each racer (echo: each socket) moves every this many milliseconds;
    /// 0: as soon as its last move is answered (closed loop).
    #[arg(long, default_value_t = 500)]
    move_interval_ms: u64,
    /// How long to measure, in seconds, after the warm-up (idle: how long
    /// the sockets stay open once all are).
    #[arg(long, default_value_t = 30)]
    duration_s: u64,
    /// Seconds from the start before anything is measured (connecting,
    /// the countdown, the first moves). Not for idle.
    #[arg(long, default_value_t = 10)]
    warmup_s: u64,
    /// Racers that stop reading after the warm-up (one per room, in the
    /// first rooms). Race only.
    #[arg(long, default_value_t = 0)]
    stall_players: usize,
    /// Spectators that stop reading after the warm-up. Race only.
    #[arg(long, default_value_t = 0)]
    stall_spectators: usize,
    /// Seconds a stalled client reads nothing before it reads again;
    /// by default until the end of the measurement.
    #[arg(long)]
    stall_s: Option<u64>,
    /// The kernel receive buffer of the stalled clients' sockets, in bytes
    /// (by default the system's).
    #[arg(long)]
    stall_recv_buffer: Option<u32>,
    /// Open the rooms with `open_boards`: each `progress` then carries the
    /// mover's board (about a kilobyte instead of a hundred bytes). Race
    /// only.
    #[arg(long)]
    open_boards: bool,
    /// Racers take a move back rather than win, so that races never end
    /// and rooms never re-form (for closed-loop rates). Colyseus races
    /// never end anyway.
    #[arg(long)]
    endless: bool,
    /// Idle sockets to open (idle).
    #[arg(long, default_value_t = 1000)]
    sockets: usize,
    /// Idle sockets connecting at once (idle).
    #[arg(long, default_value_t = 200)]
    connect_concurrency: usize,
    /// The echoed frame's size in bytes (echo); by default that of an
    /// encoded `move`.
    #[arg(long)]
    echo_bytes: Option<usize>,
    /// Connect from 127.0.0.1 up to 127.0.0.N (loopback targets only);
    /// by default one address per 20,000 sockets.
    #[arg(long)]
    source_addresses: Option<usize>,
}

impl Cli {
    /// Sockets open at once at most, for the open-files limit and the
    /// source addresses.
    fn sockets_needed(&self) -> usize {
        match self.scenario {
            // Each room's stalled racer may resume on a new socket.
            Scenario::Race => self.rooms * (usize::from(self.players) + self.spectators + 1),
            Scenario::Idle => self.sockets,
            Scenario::Echo => self.rooms * usize::from(self.players),
            // And one matchmaking connection at a time per room.
            Scenario::Colyseus => self.rooms * (usize::from(self.players) + self.spectators + 1),
        }
    }

    fn move_interval(&self) -> Option<Duration> {
        (self.move_interval_ms > 0).then(|| Duration::from_millis(self.move_interval_ms))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let sockets = cli.sockets_needed();
    let open_files_limit = net::raise_open_files_limit(u64::try_from(sockets)? + 256);
    let connector = Arc::new(Connector::new(
        &cli.url,
        cli.source_addresses
            .unwrap_or_else(|| Connector::source_addresses_for(sockets)),
    )?);
    let probe = Probe::new(cli.server_pid);
    let stats = Arc::new(Stats::default());
    let start = Instant::now();
    let from = start + Duration::from_secs(cli.warmup_s);
    let window = Window {
        from,
        until: from + Duration::from_secs(cli.duration_s),
    };
    let mut outcome = match cli.scenario {
        Scenario::Race => {
            let settings = race::Settings {
                rooms: cli.rooms,
                players: cli.players,
                spectators: cli.spectators,
                move_interval: cli.move_interval(),
                stall_players: cli.stall_players,
                stall_spectators: cli.stall_spectators,
                stall_for: Duration::from_secs(cli.stall_s.unwrap_or(cli.duration_s)),
                stall_recv_buffer: cli.stall_recv_buffer,
                open_boards: cli.open_boards,
                endless: cli.endless,
            };
            race::run(settings, connector, window, probe, Arc::clone(&stats)).await?
        }
        Scenario::Idle => {
            let settings = idle::Settings {
                sockets: cli.sockets,
                hold: Duration::from_secs(cli.duration_s),
                connect_concurrency: cli.connect_concurrency.max(1),
            };
            idle::run(settings, connector, probe, Arc::clone(&stats)).await?
        }
        Scenario::Echo => {
            let settings = echo_client::Settings {
                connections: cli.rooms * usize::from(cli.players),
                move_interval: cli.move_interval(),
                frame_bytes: cli.echo_bytes,
            };
            echo_client::run(settings, connector, window, probe, Arc::clone(&stats)).await?
        }
        Scenario::Colyseus => {
            anyhow::ensure!(
                cli.stall_players == 0 && cli.stall_spectators == 0,
                "--scenario colyseus has no stalls: its transport drops a socket that misses two pings"
            );
            anyhow::ensure!(
                !cli.open_boards,
                "--scenario colyseus has no boards to open"
            );
            let settings = colyseus_race::Settings {
                base: cli.url.clone(),
                rooms: cli.rooms,
                players: cli.players,
                spectators: u16::try_from(cli.spectators)
                    .context("--spectators: at most 64 for colyseus")?,
                move_interval: cli.move_interval(),
            };
            colyseus_race::run(settings, window, probe, Arc::clone(&stats)).await?
        }
    };
    outcome.extra.insert(
        "open_files_limit".to_string(),
        serde_json::json!(open_files_limit),
    );
    let scenario = serde_json::to_value(cli.scenario)?;
    let scenario = scenario.as_str().unwrap_or("unknown");
    let line = measure::report(
        scenario,
        serde_json::to_value(&cli)?,
        &stats,
        &probe,
        &outcome,
    );
    eprint!(
        "{}",
        measure::human_summary(scenario, &stats, &line, &outcome)
    );
    println!("{line}");
    Ok(())
}
