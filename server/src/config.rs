//! The server's settings: every address, limit and timing, with defaults that
//! need nothing else (`patience-server` alone listens on 127.0.0.1:7878).
//!
//! Settings come, each overriding the one before, from the defaults, an
//! optional TOML file (`--config FILE` or `PATIENCE_CONFIG`), environment
//! variables `PATIENCE_*` and command-line flags. Durations are milliseconds.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use patience_shared::game::GameKind;
use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::matchmaking::Ratings;

/// Everything the server can be told. Field names are the TOML keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where WebSocket clients connect.
    pub listen: SocketAddr,
    /// Where `/healthz` and `/metrics` are served; `None` serves neither.
    pub admin_listen: Option<SocketAddr>,
    /// Admin connections served at once; the next ones get `503` and are
    /// closed at once.
    pub admin_max_connections: usize,
    /// Connections served at once; the next ones get `server_full`.
    pub max_connections: usize,
    /// Rooms open at once.
    pub max_rooms: usize,
    /// The largest client message and frame, in bytes.
    pub max_message_bytes: usize,
    /// Each connection's read buffer, in bytes: allocated per socket, so
    /// it is most of an idle socket's memory. Clients send small messages
    /// (a move is a few dozen bytes); a larger one takes several reads.
    pub read_buffer_bytes: usize,
    /// Each connection's write buffer: the most it holds before it must
    /// write, in bytes.
    pub write_buffer_bytes: usize,
    /// The kernel send buffer of each socket, in bytes (the kernel doubles
    /// it for its bookkeeping); `None` keeps the system's default, which
    /// grows to megabytes. Small, a client that stops reading is noticed
    /// within the write timeout instead of once megabytes have piled up,
    /// and gets fewer stale frames before its `too_slow`.
    pub socket_send_buffer_bytes: Option<usize>,
    /// Messages queued for one connection before it counts as too slow.
    pub outbox_capacity: usize,
    /// Bytes queued for one connection (including what its WebSocket has
    /// not yet written to the socket) before it counts as too slow.
    pub outbox_bytes: usize,
    /// How long the socket may take nothing before the connection counts as
    /// stalled: its next frames are refused, so a player is kicked
    /// `too_slow` and a spectator is coalesced.
    pub write_timeout_ms: u64,
    /// How long a kicked client has to read its last frames: the error and
    /// the close frame whose reason names it.
    pub farewell_timeout_ms: u64,
    /// Messages per second a connection may send, on average.
    pub messages_per_second: u32,
    /// Messages a connection may send in a burst.
    pub message_burst: u32,
    /// Moves per second a player may send, on average.
    pub moves_per_second: u32,
    /// Moves a player may send in a burst.
    pub move_burst: u32,
    /// How often the server pings each connection.
    pub heartbeat_interval_ms: u64,
    /// Silence after which a connection is dropped.
    pub idle_timeout_ms: u64,
    /// Time for the WebSocket handshake and the `hello`.
    pub handshake_timeout_ms: u64,
    /// Countdown before a race starts.
    pub countdown_ms: u64,
    /// Seats of the rooms quick race opens.
    pub quick_race_seats: u8,
    /// How long a quick racer waits alone before a bot is offered (and
    /// again after each "keep waiting").
    pub quick_race_bot_offer_ms: u64,
    /// A race's time limit unless the room sets one.
    pub default_time_limit_ms: u64,
    /// The longest time limit a room may set.
    pub max_time_limit_ms: u64,
    /// How long a dropped player keeps its seat.
    pub grace_period_ms: u64,
    /// How long a room stays open after its race ends, for resumes and results.
    pub finished_room_linger_ms: u64,
    /// Room events kept for players that resume; older ones give a snapshot.
    pub event_log_capacity: usize,
    /// The most bytes a room's kept events may take (older ones go first).
    pub event_log_bytes: usize,
    /// How often a racer's rivals and the spectators are told its progress:
    /// at most one `progress` per racer per tick, with its latest counts
    /// ([`Settings::progress_tick_ms`](crate::room::core::Settings::progress_tick_ms)).
    /// A longer tick costs fewer writes per move and shows rivals later.
    pub progress_tick_ms: u64,
    /// Proved deals kept ready per game, at least.
    pub deal_pool_size: usize,
    /// Proved deals kept ready per game at most, however many the last
    /// minute took: the pool is sized by demand between `deal_pool_size`
    /// and this (a pool size above it wins).
    pub deal_pool_max: usize,
    /// The games the server deals.
    pub deal_games: Vec<GameKind>,
    /// Fixes the seed stream: seeds tried are this one and up, per game.
    /// Unset, seeds are drawn from the OS's randomness. For tests and replays.
    pub deal_seed_start: Option<u64>,
    /// Positions the solver may expand per seed before trying the next.
    pub solver_budget_positions: u64,
    /// How long shutdown waits for connections to close.
    pub shutdown_grace_ms: u64,
    /// Where the database lives (`patience.sqlite3` inside it); `None`
    /// keeps everything in memory, lost when the server stops. Unused when
    /// `database_url` is set.
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL database to keep everything in instead of the SQLite
    /// file: a `postgres://` URL or libpq's `key=value` pairs. Never logged
    /// with its password.
    pub database_url: Option<DatabaseUrl>,
    /// The secret that keys the daily deals, 64 hex digits. Servers that
    /// share it deal the same daily boards. Unset, the database's own secret
    /// is used, generated on the first start.
    pub daily_secret: Option<String>,
    /// The time limit of a daily attempt.
    pub daily_time_limit_ms: u64,
    /// How often open daily attempts whose time is up are closed.
    pub daily_sweep_interval_ms: u64,
    /// Database calls waiting before callers wait. A room's write of its
    /// running race never waits: one that finds the queue full fails at
    /// once and the room makes it again after a pause, as in an outage
    /// (`store_outage_ms` bounds it).
    pub database_queue: usize,
    /// How long a running race rides out a store whose writes fail (a
    /// database server restarting or out of reach, a disk failing a write
    /// for a moment): its players keep their connections, nobody is told
    /// what is not stored, and the write is made again with growing
    /// pauses. Past this the room closes, and the race resumes from its
    /// last stored move when a server runs it again; 0 closes it at the
    /// first failure. A write the store does not answer at all (a disk
    /// that hangs) closes the room the same way once it has waited this
    /// long, and never less than
    /// [`UNANSWERED_WRITE_MIN_MS`](crate::room::core::UNANSWERED_WRITE_MIN_MS).
    pub store_outage_ms: u64,
    /// The most leaderboard rows one request gets.
    pub leaderboard_max_rows: u32,
    /// Accounts one source address may register per hour, on average (an
    /// IPv6 address counts by its /64 prefix).
    pub registrations_per_hour: u32,
    /// Accounts one source address may register in a burst.
    pub registration_burst: u32,
    /// Source addresses whose registrations are remembered; past it, the
    /// one heard from least recently is forgotten.
    pub registration_addresses: usize,
    /// Sign-in codes one source address may try per hour, on average,
    /// right or wrong (counted by address as registrations are, in a map
    /// of `registration_addresses` addresses).
    pub sign_in_attempts_per_hour: u32,
    /// Sign-in codes one source address may try in a burst.
    pub sign_in_attempt_burst: u32,
    /// Bots the server runs at once, over every room: past it, a
    /// `create_room` with bots is refused (`too_many_rooms`).
    pub max_bots: usize,
    /// Bots that think at once, each on a blocking thread: the others wait
    /// their turn (their move comes later), so bots never take more than
    /// this many cores from the races.
    pub bot_threads: usize,
    /// The fastest pace a room may give its bots, in milliseconds
    /// ([`BOT_PACE_MIN_MS`](patience_shared::protocol::BOT_PACE_MIN_MS)
    /// by default; test servers lower it).
    pub bot_min_pace_ms: u32,
    /// Consecutive moves of a daily attempt whose gaps are judged together
    /// for the review rule; 0 turns the rule off.
    pub daily_review_window_moves: usize,
    /// A window whose median gap is under this is faster than a person
    /// plays: the attempt is kept unranked and marked for review.
    pub daily_review_median_gap_ms: u64,
    /// The Redis that joins this node to a cluster (`redis://host:port`,
    /// `redis+unix:///path/redis.sock`); `None` runs one node alone, as
    /// before (see [`cluster`](crate::cluster)).
    pub redis_url: Option<String>,
    /// This node's WebSocket URL as clients reach it (`ws://host:port`),
    /// sent to clients redirected here; required with `redis_url`.
    pub public_url: Option<String>,
    /// This node's id in the cluster; unset, a random one at each start.
    pub node_id: Option<String>,
    /// How long this node's leases (its own, and each room's) last without
    /// renewal; they are renewed every third of it. A node that dies is
    /// noticed, and its rooms given up, this long after its last renewal.
    pub node_lease_ms: u64,
    /// How often a cluster node looks for running races whose owner's
    /// lease has lapsed, to run them itself (needs a store shared by the
    /// nodes); 0 never looks.
    pub failover_scan_ms: u64,
    /// The clock of the daily deal (dates, account ages, move times): the
    /// system's unless a test gives a virtual one. Not a setting of files
    /// or flags.
    #[serde(skip)]
    pub clock: Clock,
    /// Where quick race reads players' ratings: the store's, unless a test
    /// gives estimates in advance. Not a setting of files or flags.
    #[serde(skip)]
    pub ratings: Ratings,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7878)),
            admin_listen: Some(SocketAddr::from(([127, 0, 0, 1], 7879))),
            admin_max_connections: 16,
            max_connections: 10_000,
            max_rooms: 5_000,
            max_message_bytes: 4096,
            // Measured at 10,000 idle sockets: 21.4 KB of RSS each with
            // 8 KiB, 14.3 KB with 1 KiB (docs/BENCHMARKS.md).
            read_buffer_bytes: 1024,
            write_buffer_bytes: 8192,
            socket_send_buffer_bytes: Some(16 * 1024),
            outbox_capacity: 64,
            outbox_bytes: 256 * 1024,
            write_timeout_ms: 5_000,
            farewell_timeout_ms: 60_000,
            messages_per_second: 20,
            message_burst: 40,
            moves_per_second: 15,
            move_burst: 30,
            heartbeat_interval_ms: 15_000,
            idle_timeout_ms: 45_000,
            handshake_timeout_ms: 10_000,
            countdown_ms: 5_000,
            quick_race_seats: 4,
            quick_race_bot_offer_ms: crate::matchmaking::BOT_OFFER_AFTER_MS,
            default_time_limit_ms: 30 * 60 * 1000,
            max_time_limit_ms: 3 * 60 * 60 * 1000,
            grace_period_ms: 60_000,
            finished_room_linger_ms: 60_000,
            event_log_capacity: 512,
            // About a dozen moves with their boards, or a hundred
            // count-only `progress` events: about two seconds of a
            // four-racer room at a brisk pace. A resume after a short drop
            // gets its missed events; a longer one gets a snapshot, which
            // says the same in less than the events it replaces (one board
            // rather than one per move), so a longer log would buy resumes
            // nothing and cost every racing room its memory.
            event_log_bytes: 8 * 1024,
            progress_tick_ms: patience_room_core::DEFAULT_PROGRESS_TICK_MS,
            deal_pool_size: 3,
            deal_pool_max: 500,
            deal_games: GameKind::ALL.to_vec(),
            deal_seed_start: None,
            solver_budget_positions: 1_000_000,
            shutdown_grace_ms: 3_000,
            data_dir: Some(PathBuf::from("patience-data")),
            database_url: None,
            daily_secret: None,
            daily_time_limit_ms: 60 * 60 * 1000,
            daily_sweep_interval_ms: 60_000,
            database_queue: 4096,
            store_outage_ms: 30_000,
            leaderboard_max_rows: 100,
            registrations_per_hour: 10,
            registration_burst: 5,
            registration_addresses: 10_000,
            sign_in_attempts_per_hour: 30,
            sign_in_attempt_burst: 10,
            max_bots: 200,
            bot_threads: 2,
            bot_min_pace_ms: patience_shared::protocol::BOT_PACE_MIN_MS,
            daily_review_window_moves: 20,
            daily_review_median_gap_ms: 150,
            redis_url: None,
            public_url: None,
            node_id: None,
            node_lease_ms: 10_000,
            failover_scan_ms: 10_000,
            clock: Clock::system(),
            ratings: Ratings::default(),
        }
    }
}

/// Where a PostgreSQL database is: a `postgres://user:password@host/db`
/// URL or `host=... dbname=...` pairs, as the `postgres` crate (and libpq)
/// read them. Shown (`Debug`, errors, logs) with its password replaced by
/// `***`; [`DatabaseUrl::expose`] is for the connection alone.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    /// The URL as given, password and all: for connecting, never for showing.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with every password replaced by `***`: the one of a URL's
    /// user (`user:password@`) and any `password=` pair or query parameter.
    pub fn redacted(&self) -> String {
        let mut text = self.0.clone();
        if let Some(scheme_end) = text.find("://") {
            let authority_start = scheme_end + 3;
            let authority_end = text[authority_start..]
                .find(['/', '?'])
                .map_or(text.len(), |at| authority_start + at);
            if let Some(at) = text[authority_start..authority_end].rfind('@') {
                let user_info = authority_start..authority_start + at;
                if let Some(colon) = text[user_info.clone()].find(':') {
                    text.replace_range(user_info.start + colon + 1..user_info.end, "***");
                }
            }
        }
        let mut redacted = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.to_ascii_lowercase().find("password") {
            let after = &rest[at + "password".len()..];
            let trimmed = after.trim_start();
            let Some(value) = trimmed.strip_prefix('=') else {
                redacted.push_str(&rest[..at + "password".len()]);
                rest = after;
                continue;
            };
            let value = value.trim_start();
            // A quoted value ends at its closing quote (libpq escapes one
            // inside with a backslash); a bare one at a space or `&`.
            let value_len = if let Some(quoted) = value.strip_prefix('\'') {
                let mut escaped = false;
                let mut end = value.len();
                for (index, character) in quoted.char_indices() {
                    match character {
                        '\\' if !escaped => escaped = true,
                        '\'' if !escaped => {
                            end = index + 2;
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                end
            } else {
                value
                    .find(|character: char| character.is_whitespace() || character == '&')
                    .unwrap_or(value.len())
            };
            let value_start = rest.len() - value.len();
            redacted.push_str(&rest[..value_start]);
            redacted.push_str("***");
            rest = &value[value_len..];
        }
        redacted.push_str(rest);
        redacted
    }
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "DatabaseUrl({:?})", self.redacted())
    }
}

impl std::fmt::Display for DatabaseUrl {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.redacted())
    }
}

impl std::str::FromStr for DatabaseUrl {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<DatabaseUrl, Self::Err> {
        Ok(DatabaseUrl(text.to_string()))
    }
}

/// A secret of 32 bytes written as 64 hex digits.
pub fn parse_secret(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut secret = [0u8; 32];
    for (byte, pair) in secret.iter_mut().zip(text.as_bytes().chunks(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(secret)
}

/// Milliseconds as a [`Duration`].
pub(crate) fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// The command line. Each flag also reads its environment variable.
#[derive(Debug, Parser)]
#[command(name = "patience-server", version, about = "The Patience Race server")]
pub struct Cli {
    /// A TOML file of settings (keys as in `Config`).
    #[arg(long, env = "PATIENCE_CONFIG")]
    pub config: Option<PathBuf>,
    /// WebSocket address, e.g. 0.0.0.0:7878.
    #[arg(long, env = "PATIENCE_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Admin address for /healthz and /metrics.
    #[arg(long, env = "PATIENCE_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    /// Serve no admin port.
    #[arg(long, env = "PATIENCE_NO_ADMIN")]
    pub no_admin: bool,
    /// Admin connections served at once.
    #[arg(long, env = "PATIENCE_ADMIN_MAX_CONNECTIONS")]
    pub admin_max_connections: Option<usize>,
    /// Connections served at once.
    #[arg(long, env = "PATIENCE_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Rooms open at once.
    #[arg(long, env = "PATIENCE_MAX_ROOMS")]
    pub max_rooms: Option<usize>,
    /// Messages queued for one connection before it counts as too slow.
    #[arg(long, env = "PATIENCE_OUTBOX_CAPACITY")]
    pub outbox_capacity: Option<usize>,
    /// Bytes queued for one connection before it counts as too slow.
    #[arg(long, env = "PATIENCE_OUTBOX_BYTES")]
    pub outbox_bytes: Option<usize>,
    /// How long a socket may take no writes before it counts as stalled,
    /// in milliseconds.
    #[arg(long, env = "PATIENCE_WRITE_TIMEOUT_MS")]
    pub write_timeout_ms: Option<u64>,
    /// How long a kicked client has to read why, in milliseconds.
    #[arg(long, env = "PATIENCE_FAREWELL_TIMEOUT_MS")]
    pub farewell_timeout_ms: Option<u64>,
    /// The kernel send buffer of each socket, in bytes; 0 keeps the
    /// system's default.
    #[arg(long, env = "PATIENCE_SOCKET_SEND_BUFFER_BYTES")]
    pub socket_send_buffer_bytes: Option<usize>,
    /// Countdown before a race, in milliseconds.
    #[arg(long, env = "PATIENCE_COUNTDOWN_MS")]
    pub countdown_ms: Option<u64>,
    /// How long a quick racer waits alone before a bot is offered, in
    /// milliseconds.
    #[arg(long, env = "PATIENCE_QUICK_RACE_BOT_OFFER_MS")]
    pub quick_race_bot_offer_ms: Option<u64>,
    /// Default race time limit, in milliseconds.
    #[arg(long, env = "PATIENCE_TIME_LIMIT_MS")]
    pub default_time_limit_ms: Option<u64>,
    /// How long a dropped player keeps its seat, in milliseconds.
    #[arg(long, env = "PATIENCE_GRACE_PERIOD_MS")]
    pub grace_period_ms: Option<u64>,
    /// Proved deals kept ready per game, at least.
    #[arg(long, env = "PATIENCE_DEAL_POOL_SIZE")]
    pub deal_pool_size: Option<usize>,
    /// Proved deals kept ready per game at most, when the last minute's
    /// demand asks for more than the pool size.
    #[arg(long, env = "PATIENCE_DEAL_POOL_MAX")]
    pub deal_pool_max: Option<usize>,
    /// The games dealt, comma-separated (e.g. tbm,indian).
    #[arg(long, env = "PATIENCE_GAMES", value_delimiter = ',')]
    pub games: Option<Vec<GameKind>>,
    /// Fix the seed stream (tests, replays).
    #[arg(long, env = "PATIENCE_DEAL_SEED_START")]
    pub deal_seed_start: Option<u64>,
    /// Solver positions per seed.
    #[arg(long, env = "PATIENCE_SOLVER_BUDGET")]
    pub solver_budget_positions: Option<u64>,
    /// The data directory (the database is `patience.sqlite3` in it). An
    /// empty value names none: an environment file can then turn a unit
    /// that sets one into a node on --database-url.
    #[arg(
        long = "data",
        value_name = "DIR",
        env = "PATIENCE_DATA",
        value_parser = parse_data_dir
    )]
    pub data_dir: Option<PathBuf>,
    /// Keep everything in memory: nothing survives a restart.
    #[arg(long, env = "PATIENCE_IN_MEMORY", conflicts_with = "data_dir")]
    pub in_memory: bool,
    /// Keep everything in PostgreSQL instead of the data directory:
    /// postgres://user:password@host/db, or "host=/run/postgresql
    /// dbname=patience". Not with --data or --in-memory.
    #[arg(
        long,
        value_name = "URL",
        env = "PATIENCE_DATABASE_URL",
        hide_env_values = true
    )]
    pub database_url: Option<DatabaseUrl>,
    /// The daily-deal secret, 64 hex digits (shared by servers that must
    /// deal the same daily boards).
    #[arg(long, env = "PATIENCE_DAILY_SECRET", hide_env_values = true)]
    pub daily_secret: Option<String>,
    /// The time limit of a daily attempt, in milliseconds.
    #[arg(long, env = "PATIENCE_DAILY_TIME_LIMIT_MS")]
    pub daily_time_limit_ms: Option<u64>,
    /// How long a running race waits for a store whose writes fail, or do
    /// not answer, before its room closes, in milliseconds (0: at the first
    /// failure; a write not answered gets at least 5 s).
    #[arg(long, env = "PATIENCE_STORE_OUTAGE_MS")]
    pub store_outage_ms: Option<u64>,
    /// Join a cluster through this Redis (redis://host:port or
    /// redis+unix:///path); needs --public-url.
    #[arg(long, env = "PATIENCE_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// This node's WebSocket URL as clients reach it (ws://host:port).
    #[arg(long, env = "PATIENCE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// This node's id in the cluster (random at each start if unset).
    #[arg(long, env = "PATIENCE_NODE_ID")]
    pub node_id: Option<String>,
    /// How long node and room leases last unrenewed, in milliseconds.
    #[arg(long, env = "PATIENCE_NODE_LEASE_MS")]
    pub node_lease_ms: Option<u64>,
    /// How often to look for races whose owner is gone, in milliseconds
    /// (0: never).
    #[arg(long, env = "PATIENCE_FAILOVER_SCAN_MS")]
    pub failover_scan_ms: Option<u64>,
}

/// A data directory as given, empty included (it names none).
fn parse_data_dir(text: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(text))
}

impl Cli {
    /// The settings: defaults, then the file, then environment and flags.
    pub fn into_config(mut self) -> anyhow::Result<Config> {
        self.data_dir = self
            .data_dir
            .filter(|directory| !directory.as_os_str().is_empty());
        // Whether the file names a data directory: one with a database URL
        // is a contradiction, where the default directory is not.
        let mut file_data_dir = false;
        let mut config = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let config: Config =
                    toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
                file_data_dir = toml::from_str::<toml::Table>(&text)
                    .is_ok_and(|table| table.contains_key("data_dir"));
                config
            }
            None => Config::default(),
        };
        fn set<T>(target: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *target = value;
            }
        }
        set(&mut config.listen, self.listen);
        if let Some(admin) = self.admin_listen {
            config.admin_listen = Some(admin);
        }
        if self.no_admin {
            config.admin_listen = None;
        }
        set(
            &mut config.admin_max_connections,
            self.admin_max_connections,
        );
        set(&mut config.max_connections, self.max_connections);
        set(&mut config.max_rooms, self.max_rooms);
        set(&mut config.outbox_capacity, self.outbox_capacity);
        set(&mut config.outbox_bytes, self.outbox_bytes);
        set(&mut config.write_timeout_ms, self.write_timeout_ms);
        set(&mut config.farewell_timeout_ms, self.farewell_timeout_ms);
        if let Some(bytes) = self.socket_send_buffer_bytes {
            config.socket_send_buffer_bytes = (bytes > 0).then_some(bytes);
        }
        set(&mut config.countdown_ms, self.countdown_ms);
        set(
            &mut config.quick_race_bot_offer_ms,
            self.quick_race_bot_offer_ms,
        );
        set(
            &mut config.default_time_limit_ms,
            self.default_time_limit_ms,
        );
        set(&mut config.grace_period_ms, self.grace_period_ms);
        set(&mut config.deal_pool_size, self.deal_pool_size);
        set(&mut config.deal_pool_max, self.deal_pool_max);
        set(&mut config.deal_games, self.games);
        if self.deal_seed_start.is_some() {
            config.deal_seed_start = self.deal_seed_start;
        }
        set(
            &mut config.solver_budget_positions,
            self.solver_budget_positions,
        );
        // A database URL replaces the data directory: naming both, or the
        // URL and `--in-memory`, is refused rather than one silently
        // winning (and a server thought to keep nothing keeping it all).
        if self.database_url.is_some() {
            config.database_url = self.database_url;
        }
        if config.database_url.is_some() {
            anyhow::ensure!(
                !self.in_memory,
                "--in-memory and --database-url (PATIENCE_DATABASE_URL, database_url) \
                 contradict each other: choose one"
            );
            anyhow::ensure!(
                self.data_dir.is_none() && !file_data_dir,
                "--data (PATIENCE_DATA, data_dir) and --database-url (PATIENCE_DATABASE_URL, \
                 database_url) both say where the data lives: choose one"
            );
            config.data_dir = None;
        }
        if self.data_dir.is_some() {
            config.data_dir = self.data_dir;
        }
        if self.in_memory {
            config.data_dir = None;
        }
        if self.daily_secret.is_some() {
            config.daily_secret = self.daily_secret;
        }
        set(&mut config.daily_time_limit_ms, self.daily_time_limit_ms);
        set(&mut config.store_outage_ms, self.store_outage_ms);
        if self.redis_url.is_some() {
            config.redis_url = self.redis_url;
        }
        if self.public_url.is_some() {
            config.public_url = self.public_url;
        }
        if self.node_id.is_some() {
            config.node_id = self.node_id;
        }
        set(&mut config.node_lease_ms, self.node_lease_ms);
        set(&mut config.failover_scan_ms, self.failover_scan_ms);
        config.validate()?;
        Ok(config)
    }
}

impl Config {
    /// Refuses settings the server cannot run with.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.max_connections > 0 && self.admin_max_connections > 0,
            "max_connections and admin_max_connections must be at least 1"
        );
        anyhow::ensure!(
            (256..=1 << 20).contains(&self.max_message_bytes),
            "max_message_bytes must be between 256 and 1 MiB"
        );
        anyhow::ensure!(
            self.outbox_capacity > 0,
            "outbox_capacity must be at least 1"
        );
        anyhow::ensure!(
            self.outbox_bytes >= self.max_message_bytes,
            "outbox_bytes must be at least max_message_bytes"
        );
        anyhow::ensure!(
            self.write_timeout_ms > 0,
            "write_timeout_ms must be at least 1"
        );
        anyhow::ensure!(
            self.messages_per_second > 0 && self.moves_per_second > 0,
            "rates must be at least 1 per second"
        );
        anyhow::ensure!(
            (2..=8).contains(&self.quick_race_seats),
            "quick_race_seats must be between 2 and 8"
        );
        anyhow::ensure!(
            self.quick_race_bot_offer_ms > 0,
            "quick_race_bot_offer_ms must be at least 1"
        );
        anyhow::ensure!(!self.deal_games.is_empty(), "deal_games names no game");
        anyhow::ensure!(self.deal_pool_size > 0, "deal_pool_size must be at least 1");

        anyhow::ensure!(
            self.event_log_capacity > 0,
            "event_log_capacity must be at least 1"
        );
        anyhow::ensure!(
            self.event_log_bytes > 0,
            "event_log_bytes must be at least 1"
        );
        anyhow::ensure!(
            (1..=10_000).contains(&self.progress_tick_ms),
            "progress_tick_ms must be between 1 and 10000"
        );
        if let Some(secret) = &self.daily_secret {
            anyhow::ensure!(
                parse_secret(secret).is_some(),
                "daily_secret must be 64 hex digits"
            );
        }
        anyhow::ensure!(
            self.daily_time_limit_ms > 0,
            "daily_time_limit_ms must be at least 1"
        );
        anyhow::ensure!(
            self.daily_sweep_interval_ms > 0 && self.database_queue > 0,
            "daily_sweep_interval_ms and database_queue must be at least 1"
        );
        anyhow::ensure!(
            self.leaderboard_max_rows > 0,
            "leaderboard_max_rows must be at least 1"
        );
        anyhow::ensure!(
            self.registrations_per_hour > 0
                && self.registration_burst > 0
                && self.registration_addresses > 0,
            "registrations_per_hour, registration_burst and registration_addresses must be at least 1"
        );
        anyhow::ensure!(
            self.sign_in_attempts_per_hour > 0 && self.sign_in_attempt_burst > 0,
            "sign_in_attempts_per_hour and sign_in_attempt_burst must be at least 1"
        );
        anyhow::ensure!(self.bot_threads > 0, "bot_threads must be at least 1");
        if self.redis_url.is_some() {
            let public_url = self.public_url.as_deref().unwrap_or_default();
            anyhow::ensure!(
                public_url.starts_with("ws://") || public_url.starts_with("wss://"),
                "redis_url needs public_url, this node's WebSocket URL as clients reach it \
                 (ws://host:port or wss://host:port)"
            );
            anyhow::ensure!(
                self.node_lease_ms >= 300,
                "node_lease_ms must be at least 300"
            );
        }
        if let Some(node_id) = &self.node_id {
            anyhow::ensure!(
                (1..=64).contains(&node_id.len())
                    && node_id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "node_id must be 1 to 64 letters, digits, '-' or '_'"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toml_file_overrides_defaults_and_flags_override_it() {
        let dir = std::env::temp_dir().join(format!("patience-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("server.toml");
        std::fs::write(
            &path,
            "listen = \"127.0.0.1:9000\"\ncountdown_ms = 250\ndeal_games = [\"three-blind-mice\"]\n",
        )
        .expect("write");
        let cli = Cli::parse_from([
            "patience-server",
            "--config",
            path.to_str().expect("utf-8 path"),
            "--countdown-ms",
            "100",
        ]);
        let config = cli.into_config().expect("valid");
        assert_eq!(config.listen, SocketAddr::from(([127, 0, 0, 1], 9000)));
        assert_eq!(config.countdown_ms, 100);
        assert_eq!(config.deal_games, vec![GameKind::ThreeBlindMice]);
        assert_eq!(config.grace_period_ms, 60_000);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn secrets_are_64_hex_digits() {
        let secret = "00ff".repeat(16);
        assert_eq!(
            parse_secret(&secret).map(|bytes| (bytes[0], bytes[1])),
            Some((0x00, 0xff))
        );
        for bad in [
            "",
            "00ff",
            &"zz".repeat(32),
            &"0".repeat(65),
            &"é".repeat(32),
        ] {
            assert_eq!(parse_secret(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_data_directory_comes_from_the_flag_and_in_memory_drops_it() {
        let config = Cli::parse_from(["patience-server", "--data", "/tmp/x"])
            .into_config()
            .expect("valid");
        assert_eq!(config.data_dir, Some(PathBuf::from("/tmp/x")));
        let config = Cli::parse_from(["patience-server", "--in-memory"])
            .into_config()
            .expect("valid");
        assert_eq!(config.data_dir, None);
    }

    #[test]
    fn the_admin_cap_comes_from_the_file_and_the_flag_and_is_at_least_one() {
        assert_eq!(Config::default().admin_max_connections, 16);
        let config: Config = toml::from_str("admin_max_connections = 4").expect("parses");
        assert_eq!(config.admin_max_connections, 4);
        let config = Cli::parse_from(["patience-server", "--admin-max-connections", "2"])
            .into_config()
            .expect("valid");
        assert_eq!(config.admin_max_connections, 2);
        assert!(
            Cli::parse_from(["patience-server", "--admin-max-connections", "0"])
                .into_config()
                .is_err()
        );
    }

    #[test]
    fn the_outbox_bounds_and_write_timeouts_come_from_the_file_and_flags() {
        let config = Config::default();
        assert_eq!(config.outbox_bytes, 256 * 1024);
        assert_eq!(config.write_timeout_ms, 5_000);
        assert_eq!(config.socket_send_buffer_bytes, Some(16 * 1024));
        let from_file: Config = toml::from_str(
            "outbox_bytes = 8192\nwrite_timeout_ms = 250\nfarewell_timeout_ms = 1000\n",
        )
        .expect("valid toml");
        assert_eq!(
            (
                from_file.outbox_bytes,
                from_file.write_timeout_ms,
                from_file.farewell_timeout_ms
            ),
            (8192, 250, 1000)
        );
        let config = Cli::parse_from([
            "patience-server",
            "--outbox-capacity",
            "8",
            "--outbox-bytes",
            "4096",
            "--write-timeout-ms",
            "100",
            "--farewell-timeout-ms",
            "200",
            "--socket-send-buffer-bytes",
            "0",
        ])
        .into_config()
        .expect("valid");
        assert_eq!(config.outbox_capacity, 8);
        assert_eq!(config.outbox_bytes, 4096);
        assert_eq!(config.write_timeout_ms, 100);
        assert_eq!(config.farewell_timeout_ms, 200);
        assert_eq!(
            config.socket_send_buffer_bytes, None,
            "0 keeps the system's"
        );
        let too_small = Cli::parse_from(["patience-server", "--outbox-bytes", "100"]);
        assert!(too_small.into_config().is_err());
    }

    #[test]
    fn a_cluster_node_needs_its_public_url_and_nothing_changes_without_redis() {
        let alone = Config::default();
        assert_eq!(
            (alone.redis_url.as_deref(), alone.node_lease_ms),
            (None, 10_000)
        );
        alone.validate().expect("one node alone needs nothing else");
        let error = Cli::parse_from(["patience-server", "--redis-url", "redis://127.0.0.1:6379"])
            .into_config()
            .expect_err("no public URL");
        assert!(error.to_string().contains("public_url"), "{error}");
        let config = Cli::parse_from([
            "patience-server",
            "--redis-url",
            "redis://127.0.0.1:6379",
            "--public-url",
            "ws://10.0.0.7:7878",
            "--node-id",
            "node-a",
            "--node-lease-ms",
            "3000",
        ])
        .into_config()
        .expect("valid");
        assert_eq!(config.public_url.as_deref(), Some("ws://10.0.0.7:7878"));
        assert_eq!(
            (config.node_id.as_deref(), config.node_lease_ms),
            (Some("node-a"), 3000)
        );
        let from_file: Config = toml::from_str(
            "redis_url = \"redis://r:6379\"\npublic_url = \"ws://a:1\"\nnode_lease_ms = 900\n",
        )
        .expect("valid toml");
        from_file.validate().expect("valid");
        let bad_id = Cli::parse_from(["patience-server", "--node-id", "a b"]);
        assert!(bad_id.into_config().is_err());
    }

    #[test]
    fn a_database_url_comes_from_the_file_or_the_flag_and_excludes_a_directory() {
        let url = "postgres://ada:s3cret@db.example/patience";
        let config = Cli::parse_from(["patience-server", "--database-url", url])
            .into_config()
            .expect("valid");
        assert_eq!(
            config.database_url.as_ref().map(DatabaseUrl::expose),
            Some(url)
        );
        assert_eq!(config.data_dir, None, "the default directory is unused");
        // An empty directory names none: a unit that sets one by default
        // becomes a node on a database URL through its environment file.
        let config = Cli::parse_from(["patience-server", "--data", "", "--database-url", url])
            .into_config()
            .expect("valid");
        assert_eq!(config.data_dir, None);
        let config = Cli::parse_from(["patience-server", "--data", ""])
            .into_config()
            .expect("valid");
        assert_eq!(config.data_dir, Config::default().data_dir);

        let dir = std::env::temp_dir().join(format!("patience-url-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let with_url = dir.join("url.toml");
        std::fs::write(&with_url, format!("database_url = \"{url}\"\n")).expect("write");
        let both = dir.join("both.toml");
        std::fs::write(
            &both,
            format!("database_url = \"{url}\"\ndata_dir = \"/tmp/x\"\n"),
        )
        .expect("write");
        let file = |path: &std::path::Path, extra: &[&str]| {
            let mut args = vec!["patience-server", "--config", path.to_str().expect("utf-8")];
            args.extend_from_slice(extra);
            Cli::parse_from(args).into_config()
        };
        let config = file(&with_url, &[]).expect("valid");
        assert_eq!(
            config.database_url.as_ref().map(DatabaseUrl::expose),
            Some(url)
        );
        for (path, extra) in [
            (&with_url, &["--in-memory"][..]),
            (&with_url, &["--data", "/tmp/x"][..]),
            (&both, &[][..]),
        ] {
            let error = file(path, extra).expect_err("contradictory");
            assert!(error.to_string().contains("--database-url"), "{error}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_database_url_is_shown_without_its_password() {
        let check = |url: &str, expected: &str| {
            let url: DatabaseUrl = url.parse().expect("any text");
            assert_eq!(url.redacted(), expected);
            assert_eq!(format!("{url:?}"), format!("DatabaseUrl({expected:?})"));
        };
        check(
            "postgres://ada:s3cret@db:5432/patience",
            "postgres://ada:***@db:5432/patience",
        );
        check("postgres://ada@db/patience", "postgres://ada@db/patience");
        check(
            "postgresql://ada:p%40ss@%2Frun%2Fpostgresql/patience",
            "postgresql://ada:***@%2Frun%2Fpostgresql/patience",
        );
        check(
            "postgres://ada@db/patience?password=s3cret&sslmode=disable",
            "postgres://ada@db/patience?password=***&sslmode=disable",
        );
        check(
            "host=/run/postgresql user=ada password=s3cret dbname=patience",
            "host=/run/postgresql user=ada password=*** dbname=patience",
        );
        check(
            "host=db password = 'two words\\' here' dbname=patience",
            "host=db password = *** dbname=patience",
        );
        check("host=db PASSWORD=x", "host=db PASSWORD=***");
        check("host=db passwordless=1", "host=db passwordless=1");
    }

    #[test]
    fn the_progress_tick_comes_from_the_file_and_is_at_least_a_millisecond() {
        assert_eq!(Config::default().progress_tick_ms, 100);
        let check = |text: &str| {
            let config: Config = toml::from_str(text).expect("parses");
            config.validate().map(|()| config.progress_tick_ms)
        };
        assert_eq!(check("progress_tick_ms = 250").ok(), Some(250));
        for refused in ["progress_tick_ms = 0", "progress_tick_ms = 60000"] {
            let error = check(refused).expect_err(refused);
            assert!(error.to_string().contains("progress_tick_ms"), "{error}");
        }
    }

    #[test]
    fn the_store_outage_bound_comes_from_the_file_the_environment_and_the_flag() {
        use clap::CommandFactory as _;
        assert_eq!(Config::default().store_outage_ms, 30_000);
        let from_file: Config = toml::from_str("store_outage_ms = 5000").expect("parses");
        assert_eq!(from_file.store_outage_ms, 5_000);
        let config = Cli::parse_from(["patience-server", "--store-outage-ms", "0"])
            .into_config()
            .expect("valid: 0 closes at the first failure");
        assert_eq!(config.store_outage_ms, 0);
        let from_env = Cli::command()
            .get_arguments()
            .find(|argument| argument.get_id() == "store_outage_ms")
            .and_then(|argument| argument.get_env().map(|env| env.to_owned()));
        assert_eq!(
            from_env.as_deref(),
            Some(std::ffi::OsStr::new("PATIENCE_STORE_OUTAGE_MS"))
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<Config>("lisen = \"127.0.0.1:1\"").is_err());
    }
}
