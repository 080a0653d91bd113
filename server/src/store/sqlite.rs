//! The embedded default [`Store`]: one SQLite file in the data directory.
//!
//! The file is in WAL mode with `synchronous = FULL`: a transaction that
//! [`Store::commit`] returned from survives a killed process and a power
//! cut. Its cost, one fsync per commit, is shared by every call of a batch
//! (see [`database`](crate::database)).
//!
//! The schema is versioned with `PRAGMA user_version`; [`MIGRATIONS`] brings
//! any older file up to date when the server starts, in one transaction, and
//! a file from a newer server is refused rather than misread.
//!
//! Unsigned 64-bit values (seeds, ids, times) are stored as SQLite's signed
//! integers with the same bits. Move logs are MessagePack arrays of strings.

use std::collections::HashMap;
use std::path::Path;

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, BotLevel, DaySummary, LeaderboardRow, MoveLog, PlayerRecord, PlayerStatus, Progress,
    RaceRecord, RaceResult, Reveal, Standing, StandingRow,
};
use rusqlite::{Connection, OptionalExtension as _, Row, params};

use super::columns::{
    OPEN, decode_log, encode_log, int, parse_bot, parse_game, parse_status, status_name,
};
use super::tally::{self, DayAttempt, DayTally, RecordCounters, Totals};
use crate::signup::SavedBucket;

use super::{
    Attempt, AttemptFinish, AttemptKey, DailyDeal, DaysFound, Eligibility, ExpiredAttempt,
    Leaderboard, LiveMove, LiveRace, NewRace, PeriodSpan, Player, PlayerId, PlayerLookup, Rank,
    Standings, Store, StoreError, TokenHash,
};

/// The schema, one step per version: step `n` takes version `n` to `n + 1`.
/// Steps are never edited once released; a change is a new step.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
CREATE TABLE players (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE COLLATE NOCASE,
    token_hash    BLOB NOT NULL UNIQUE,
    created_at_ms INTEGER NOT NULL
);
CREATE TABLE races (
    id          INTEGER PRIMARY KEY,
    game        TEXT NOT NULL,
    seed        INTEGER NOT NULL,
    salt        TEXT NOT NULL,
    daily_date  TEXT,
    ended_at_ms INTEGER NOT NULL
);
CREATE TABLE race_players (
    race_id    INTEGER NOT NULL REFERENCES races (id),
    seat       INTEGER NOT NULL,
    player_id  INTEGER REFERENCES players (id),
    name       TEXT NOT NULL,
    rank       INTEGER NOT NULL,
    status     TEXT NOT NULL,
    moves      INTEGER NOT NULL,
    cards_home INTEGER NOT NULL,
    elapsed_ms INTEGER NOT NULL,
    log        BLOB NOT NULL,
    PRIMARY KEY (race_id, seat)
) WITHOUT ROWID;
CREATE INDEX race_players_by_player ON race_players (player_id);
CREATE TABLE daily_deals (
    game TEXT NOT NULL,
    date TEXT NOT NULL,
    seed INTEGER NOT NULL,
    salt TEXT NOT NULL,
    PRIMARY KEY (game, date)
) WITHOUT ROWID;
CREATE TABLE daily_attempts (
    player_id      INTEGER NOT NULL REFERENCES players (id),
    game           TEXT NOT NULL,
    date           TEXT NOT NULL,
    started_at_ms  INTEGER NOT NULL,
    status         TEXT NOT NULL,
    won            INTEGER,
    moves          INTEGER,
    cards_home     INTEGER,
    elapsed_ms     INTEGER,
    finished_at_ms INTEGER,
    race_id        INTEGER REFERENCES races (id),
    PRIMARY KEY (player_id, game, date)
) WITHOUT ROWID;
CREATE INDEX daily_ranking ON daily_attempts
    (game, date, won DESC, elapsed_ms, moves, finished_at_ms, player_id)
    WHERE race_id IS NOT NULL;
CREATE INDEX daily_open ON daily_attempts (started_at_ms) WHERE race_id IS NULL;
CREATE TABLE daily_moves (
    player_id INTEGER NOT NULL,
    game      TEXT NOT NULL,
    date      TEXT NOT NULL,
    idx       INTEGER NOT NULL,
    text      TEXT NOT NULL,
    PRIMARY KEY (player_id, game, date, idx),
    FOREIGN KEY (player_id, game, date) REFERENCES daily_attempts (player_id, game, date)
) WITHOUT ROWID;
"#,
    r#"
-- Fair play on the daily deal. Each move's time, for the review rule (NULL
-- for moves stored before this step); whether a finished attempt is off
-- the ranking: its account was new that day, or it is marked for review
-- (an operator clears `review` to rank it). Attempts finished before this
-- step keep the ranks they had.
ALTER TABLE daily_moves ADD COLUMN at_ms INTEGER;
ALTER TABLE daily_attempts ADD COLUMN new_account INTEGER NOT NULL DEFAULT 0;
ALTER TABLE daily_attempts ADD COLUMN review INTEGER NOT NULL DEFAULT 0;
CREATE INDEX daily_by_race ON daily_attempts (race_id) WHERE race_id IS NOT NULL;
CREATE INDEX daily_review ON daily_attempts (date, game) WHERE review;
"#,
    r#"
-- Fair play in rooms: whether a race showed every board live (its replay
-- says so), and each racer's progress counts beyond cards home. Races
-- stored before this step had no open boards; their counts read as 0.
ALTER TABLE races ADD COLUMN open_boards INTEGER NOT NULL DEFAULT 0;
ALTER TABLE race_players ADD COLUMN runs_home INTEGER NOT NULL DEFAULT 0;
ALTER TABLE race_players ADD COLUMN cards_uncovered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE race_players ADD COLUMN stock_turned INTEGER NOT NULL DEFAULT 0;
"#,
    r#"
-- Races running when the server stopped (SIGTERM): each a MessagePack
-- `LiveRace`, read back and deleted when the server starts again.
CREATE TABLE suspended_rooms (
    code TEXT PRIMARY KEY,
    body BLOB NOT NULL
);
"#,
    r#"
-- Races kept as they run, so that a crash loses no acknowledged move: the
-- room (seats, tokens, statuses, clock, the moves up to when it was saved)
-- as a MessagePack `LiveRace`, and each move accepted since as a row. A
-- race is forgotten once its result is stored. Rooms kept at a SIGTERM
-- before this step become running races as they are.
ALTER TABLE suspended_rooms RENAME TO live_races;
CREATE TABLE live_moves (
    code       TEXT NOT NULL,
    seat       INTEGER NOT NULL,
    idx        INTEGER NOT NULL,
    text       TEXT NOT NULL,
    elapsed_ms INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (code, seat, idx)
) WITHOUT ROWID;
"#,
    r#"
-- Deals proved winnable and not yet dealt, per node (`owner`, '' for a
-- server alone), so that a restarted server need not prove them again. A
-- deal leaves when a race on it is first kept.
CREATE TABLE proved_deals (
    id    INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    game  TEXT NOT NULL,
    seed  INTEGER NOT NULL,
    UNIQUE (game, seed)
);
CREATE INDEX proved_deals_by_owner ON proved_deals (owner, id);
"#,
    r#"
-- The claim each running race is kept under: 0 from its start, one more
-- each time a server claims it to run it on. A write under an older claim
-- is refused, so a node paused or cut off past its lease cannot write over
-- the race's new owner (a fencing token).
ALTER TABLE live_races ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
"#,
    r#"
-- The daily tournament, tallied once per closed day (see `store::tally`):
-- each ranked attempt's final rank; one row per tallied day (the marker
-- that makes a second tally do nothing, and the day's counts); points
-- summed per game, period (week, month), period key and player, indexed in
-- standings order; and each player's record counters per game.
ALTER TABLE daily_attempts ADD COLUMN final_rank INTEGER;
CREATE INDEX daily_final ON daily_attempts (game, date, final_rank)
    WHERE final_rank IS NOT NULL;
CREATE TABLE daily_tallies (
    game      TEXT NOT NULL,
    date      TEXT NOT NULL,
    finished  INTEGER NOT NULL,
    finishers INTEGER NOT NULL,
    winners   INTEGER NOT NULL,
    PRIMARY KEY (game, date)
) WITHOUT ROWID;
CREATE TABLE period_totals (
    game        TEXT NOT NULL,
    period_kind TEXT NOT NULL,
    period_key  TEXT NOT NULL,
    player_id   INTEGER NOT NULL REFERENCES players (id),
    points      INTEGER NOT NULL,
    days        INTEGER NOT NULL,
    wins        INTEGER NOT NULL,
    win_time_ms INTEGER NOT NULL,
    PRIMARY KEY (game, period_kind, period_key, player_id)
) WITHOUT ROWID;
CREATE INDEX period_standings ON period_totals
    (game, period_kind, period_key, points DESC, wins DESC, win_time_ms, player_id);
CREATE TABLE player_records (
    player_id        INTEGER NOT NULL REFERENCES players (id),
    game             TEXT NOT NULL,
    days_played      INTEGER NOT NULL,
    wins             INTEGER NOT NULL,
    ranked_days      INTEGER NOT NULL,
    best_rank        INTEGER,
    best_time_ms     INTEGER,
    play_streak      INTEGER NOT NULL,
    best_play_streak INTEGER NOT NULL,
    last_played      TEXT,
    win_streak       INTEGER NOT NULL,
    best_win_streak  INTEGER NOT NULL,
    last_won         TEXT,
    PRIMARY KEY (player_id, game)
) WITHOUT ROWID;
"#,
    r#"
-- Which node runs each running race, and each node's lease in the store, so
-- that the failover scan finds the races of nodes that are gone through an
-- index and reads nothing else. Races kept before belong to no node whose
-- lease runs, so they are found until one claims them.
ALTER TABLE live_races ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX live_races_by_owner ON live_races (owner);
CREATE TABLE live_nodes (
    node           TEXT PRIMARY KEY,
    lease_until_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX live_nodes_by_lease ON live_nodes (lease_until_ms);
INSERT OR IGNORE INTO live_nodes (node, lease_until_ms)
    SELECT DISTINCT owner, 0 FROM live_races;
"#,
    r#"
-- Accounts on several devices: every token of an account (the one it was
-- registered with, and one per sign-in code redeemed), each signed out
-- alone. `players.token_hash` keeps the first token's hash for history;
-- only this table signs in.
CREATE TABLE player_tokens (
    token_hash    BLOB PRIMARY KEY,
    player_id     INTEGER NOT NULL REFERENCES players (id),
    created_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO player_tokens (token_hash, player_id, created_at_ms)
    SELECT token_hash, id, created_at_ms FROM players;
-- One-time sign-in codes by their SHA-256, at most one per account: a row
-- goes when redeemed, when its account asks for another, or once expired.
CREATE TABLE sign_in_codes (
    code_hash     BLOB PRIMARY KEY,
    player_id     INTEGER NOT NULL UNIQUE REFERENCES players (id),
    expires_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sign_in_codes_by_expiry ON sign_in_codes (expires_at_ms);
-- A stored race's seat played by a server bot: its level; NULL for a person.
ALTER TABLE race_players ADD COLUMN bot TEXT;
"#,
    r#"
-- The registration limit's buckets, so that a restart does not refill
-- them: one row per source address (an IPv4 address or an IPv6 /64).
CREATE TABLE registration_buckets (
    source     TEXT PRIMARY KEY,
    tokens     REAL NOT NULL,
    updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX registration_buckets_by_time ON registration_buckets (updated_ms);
-- A registered name's confusable key (protocol::name_key), unique: names
-- that look alike cannot both be registered. Rows from before are keyed
-- when the server opens the database (NULL until then).
ALTER TABLE players ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX players_by_name_key ON players (name_key);
"#,
];

/// The SQLite store.
#[derive(Debug)]
pub struct SqliteStore {
    connection: Connection,
    /// The node whose running races this store saves and claims
    /// ([`Store::set_node`]).
    node: String,
}

fn uint(row: &Row<'_>, index: usize) -> rusqlite::Result<u64> {
    Ok(row.get::<_, i64>(index)?.cast_unsigned())
}

/// The running race `code` kept as `body` under the claim `epoch`, with
/// every move recorded since it was saved.
fn read_live_race(
    connection: &Connection,
    code: &str,
    body: &[u8],
    epoch: u64,
) -> Result<LiveRace, StoreError> {
    let room: LiveRace = rmp_serde::from_slice(body)
        .map_err(|error| StoreError::Corrupt(format!("running race {code}: {error}")))?;
    let kept = connection
        .prepare_cached(
            "SELECT seat, idx, text, elapsed_ms, seq FROM live_moves
             WHERE code = ?1 ORDER BY seat, idx",
        )?
        .query_map(params![code], |row| {
            Ok(LiveMove {
                seat: row.get(0)?,
                index: row.get(1)?,
                text: row.get(2)?,
                elapsed_ms: uint(row, 3)?,
                seq: uint(row, 4)?,
                epoch,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(LiveRace { epoch, ..room }.with_moves(kept)?)
}

/// Gives `node` a row among the nodes' leases, if it has none (an ended
/// lease, until the node renews it), so that the failover scan, which
/// starts from the leases, finds its races.
fn enrol_node(connection: &Connection, node: &str) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO live_nodes (node, lease_until_ms) VALUES (?1, 0)
             ON CONFLICT DO NOTHING",
        )?
        .execute(params![node])?;
    Ok(())
}

/// Whether an error is a UNIQUE or PRIMARY KEY violation.
fn is_duplicate(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::ConstraintViolation
                && matches!(
                    failure.extended_code,
                    rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                        | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                )
    )
}

impl SqliteStore {
    /// Runs a statement of the transaction's frame (begin, commit, a job's
    /// savepoint), prepared once: each batch and each job runs some, and
    /// parsing them afresh every time showed in profiles.
    fn run_cached(&self, statement: &str) -> Result<(), StoreError> {
        self.connection.prepare_cached(statement)?.execute([])?;
        Ok(())
    }

    /// Opens (creating if need be) the database file and migrates it.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let connection = Connection::open(path)?;
        // In WAL mode readers never block the writer and a commit appends
        // to the log: the pragma answers with the mode it got.
        let mode: String =
            connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(mode, "the database did not switch to WAL mode");
        }
        SqliteStore::prepare(connection)
    }

    /// A database in memory, gone when the server stops: for tests and
    /// throw-away servers.
    pub fn in_memory() -> Result<SqliteStore, StoreError> {
        SqliteStore::prepare(Connection::open_in_memory()?)
    }

    fn prepare(connection: Connection) -> Result<SqliteStore, StoreError> {
        connection.pragma_update(None, "synchronous", "FULL")?;
        connection.pragma_update(None, "foreign_keys", true)?;
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        let mut store = SqliteStore {
            connection,
            node: String::new(),
        };
        store.migrate()?;
        store.key_older_names()?;
        Ok(store)
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let version: i64 = self
            .connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))?;
        u32::try_from(version).map_err(|_| StoreError::Corrupt(format!("user_version {version}")))
    }

    /// Gives every player registered before names had keys its
    /// [`protocol::name_key`], in the order they registered; a name that
    /// looks like an earlier one keeps no key (it stays, and nobody else
    /// can take the look it shares with the earlier one).
    fn key_older_names(&mut self) -> Result<(), StoreError> {
        let unkeyed: Vec<(i64, String)> = {
            let mut statement = self
                .connection
                .prepare("SELECT id, name FROM players WHERE name_key IS NULL ORDER BY id")?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        for (id, name) in unkeyed {
            self.connection.execute(
                "UPDATE players SET name_key = ?1 WHERE id = ?2
                 AND NOT EXISTS (SELECT 1 FROM players WHERE name_key = ?1)",
                params![protocol::name_key(&name), id],
            )?;
        }
        Ok(())
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let known = u32::try_from(MIGRATIONS.len()).unwrap_or(u32::MAX);
        let found = self.schema_version()?;
        if found > known {
            return Err(StoreError::NewerSchema { found, known });
        }
        if found == known {
            return Ok(());
        }
        let transaction = self.connection.transaction()?;
        for (version, step) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            tracing::info!(from = version, "migrating the database");
            transaction.execute_batch(step)?;
        }
        transaction.pragma_update(None, "user_version", known)?;
        transaction.commit()?;
        Ok(())
    }

    /// Runs `work` so that it keeps all of its writes or none.
    fn atomically<T>(
        &mut self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.connection.execute_batch("SAVEPOINT call")?;
        match work(&self.connection) {
            Ok(value) => {
                self.connection.execute_batch("RELEASE call")?;
                Ok(value)
            }
            Err(error) => {
                if let Err(undo) = self
                    .connection
                    .execute_batch("ROLLBACK TO call; RELEASE call")
                {
                    tracing::error!(%undo, "could not roll back a failed call");
                }
                Err(error)
            }
        }
    }
}

fn insert_race(connection: &Connection, race: &NewRace) -> Result<u64, StoreError> {
    let reveal = &race.result.reveal;
    connection.execute(
        "INSERT INTO races (game, seed, salt, daily_date, ended_at_ms, open_boards)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            reveal.game.slug(),
            int(reveal.seed),
            reveal.salt,
            race.daily,
            int(race.ended_at_ms),
            race.result.open_boards,
        ],
    )?;
    let race_id = connection.last_insert_rowid().cast_unsigned();
    let mut insert = connection.prepare_cached(
        "INSERT INTO race_players (race_id, seat, player_id, name, rank, status, moves, cards_home,
                                   elapsed_ms, log, runs_home, cards_uncovered, stock_turned, bot)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    for standing in &race.result.standings {
        let player = race
            .players
            .iter()
            .find(|(seat, _)| *seat == standing.seat)
            .map(|(_, player)| int(*player));
        let log = race
            .result
            .logs
            .iter()
            .find(|log| log.seat == standing.seat)
            .map(|log| log.moves.as_slice())
            .unwrap_or_default();
        insert.execute(params![
            int(race_id),
            standing.seat,
            player,
            standing.name,
            standing.rank,
            status_name(standing.status),
            standing.progress.moves,
            standing.progress.cards_home,
            int(standing.progress.elapsed_ms),
            encode_log(log),
            standing.progress.runs_home,
            standing.progress.cards_uncovered,
            standing.progress.stock_turned,
            standing.bot.map(BotLevel::as_str),
        ])?;
    }
    Ok(race_id)
}

/// The leaderboard columns of `daily_attempts a JOIN players p`, in the
/// order [`leaderboard_row`] reads them (the rank comes separately).
const ROW_COLUMNS: &str =
    "p.name, a.status, a.elapsed_ms, a.moves, a.cards_home, a.race_id, a.new_account, a.review";

/// The finished attempts of `daily_attempts a` that rank.
const RANKED: &str = "a.race_id IS NOT NULL AND NOT a.new_account AND NOT a.review";

/// The ranking order of finished attempts: won first, then less time, then
/// fewer moves; then who finished first, then who registered first. The
/// row-value comparison in [`Store::rank`] must say the same.
const RANKING: &str = "a.won DESC, a.elapsed_ms, a.moves, a.finished_at_ms, a.player_id";

/// The record counters of `player_records r`, in the order
/// [`record_counters`] reads them.
const RECORD_COLUMNS: &str = "r.days_played, r.wins, r.ranked_days, r.best_rank, r.best_time_ms,
    r.play_streak, r.best_play_streak, r.last_played, r.win_streak, r.best_win_streak, r.last_won";

/// The columns of `period_totals t JOIN players p`, in the order a
/// [`Totals`] is read.
const TOTALS_COLUMNS: &str = "t.player_id, p.name, t.points, t.days, t.wins, t.win_time_ms";

/// The standings order of `period_totals t`: more points, more wins, less
/// winning time, then the lower id (registered first). The row-value
/// comparison of the own row's rank must say the same.
const STANDING: &str = "t.points DESC, t.wins DESC, t.win_time_ms, t.player_id";

/// The rows of a day's podium.
const PODIUM: u32 = 3;

fn record_counters(row: &Row<'_>) -> rusqlite::Result<RecordCounters> {
    Ok(RecordCounters {
        days_played: row.get(0)?,
        wins: row.get(1)?,
        ranked_days: row.get(2)?,
        best_rank: row.get(3)?,
        best_time_ms: row.get::<_, Option<i64>>(4)?.map(i64::cast_unsigned),
        play_streak: row.get(5)?,
        best_play_streak: row.get(6)?,
        last_played: row.get(7)?,
        win_streak: row.get(8)?,
        best_win_streak: row.get(9)?,
        last_won: row.get(10)?,
    })
}

/// Writes what the tally of `date` found: ranks, totals, records, counts.
fn write_tally(
    connection: &Connection,
    game: GameKind,
    date: &str,
    tally: &DayTally,
) -> Result<(), StoreError> {
    let mut rank = connection.prepare_cached(
        "UPDATE daily_attempts SET final_rank = ?4
         WHERE player_id = ?1 AND game = ?2 AND date = ?3",
    )?;
    for (player, final_rank) in &tally.ranks {
        rank.execute(params![int(*player), game.slug(), date, final_rank])?;
    }
    let mut add = connection.prepare_cached(
        "INSERT INTO period_totals
             (game, period_kind, period_key, player_id, points, days, wins, win_time_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7)
         ON CONFLICT (game, period_kind, period_key, player_id) DO UPDATE SET
             points = points + excluded.points, days = days + 1,
             wins = wins + excluded.wins, win_time_ms = win_time_ms + excluded.win_time_ms",
    )?;
    for addition in &tally.additions {
        for (period, key) in tally.periods() {
            add.execute(params![
                game.slug(),
                period,
                key,
                int(addition.player),
                addition.points,
                addition.won,
                int(addition.win_time_ms),
            ])?;
        }
    }
    let mut record = connection.prepare_cached(
        "INSERT OR REPLACE INTO player_records
             (player_id, game, days_played, wins, ranked_days, best_rank, best_time_ms,
              play_streak, best_play_streak, last_played, win_streak, best_win_streak, last_won)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    for (player, counters) in &tally.records {
        record.execute(params![
            int(*player),
            game.slug(),
            counters.days_played,
            counters.wins,
            counters.ranked_days,
            counters.best_rank,
            counters.best_time_ms.map(int),
            counters.play_streak,
            counters.best_play_streak,
            counters.last_played,
            counters.win_streak,
            counters.best_win_streak,
            counters.last_won,
        ])?;
    }
    connection
        .prepare_cached(
            "UPDATE daily_tallies SET finished = ?3, finishers = ?4, winners = ?5
             WHERE game = ?1 AND date = ?2",
        )?
        .execute(params![
            game.slug(),
            date,
            tally.finished,
            tally.finishers,
            tally.winners
        ])?;
    Ok(())
}

fn leaderboard_row(row: &Row<'_>, rank: u32) -> rusqlite::Result<(LeaderboardRow, String)> {
    Ok((
        LeaderboardRow {
            rank,
            name: row.get(0)?,
            status: PlayerStatus::Waiting,
            elapsed_ms: uint(row, 2)?,
            moves: row.get(3)?,
            cards_home: row.get(4)?,
            race_id: uint(row, 5)?,
            unranked: Eligibility {
                new_account: row.get(6)?,
                review: row.get(7)?,
            }
            .unranked(),
        },
        row.get(1)?,
    ))
}

fn with_status((mut row, status): (LeaderboardRow, String)) -> Result<LeaderboardRow, StoreError> {
    row.status = parse_status(&status)?;
    Ok(row)
}

impl Store for SqliteStore {
    fn begin(&mut self) -> Result<(), StoreError> {
        // IMMEDIATE takes the write lock now, so that a second server on the
        // same file waits here (busy_timeout) instead of failing mid-batch.
        self.run_cached("BEGIN IMMEDIATE")?;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.run_cached("COMMIT")?;
        Ok(())
    }

    fn rollback(&mut self) {
        if let Err(error) = self.connection.execute_batch("ROLLBACK") {
            tracing::error!(%error, "rollback failed");
        }
    }

    // A name of its own, so that it nests around the `call` savepoints of
    // `atomically` without either ending the other.
    fn savepoint(&mut self) -> Result<(), StoreError> {
        self.run_cached("SAVEPOINT job")?;
        Ok(())
    }

    fn release_savepoint(&mut self) -> Result<(), StoreError> {
        self.run_cached("RELEASE job")?;
        Ok(())
    }

    fn rollback_to_savepoint(&mut self) -> Result<(), StoreError> {
        // ROLLBACK TO undoes but keeps the savepoint open; RELEASE ends it.
        self.connection
            .execute_batch("ROLLBACK TO job; RELEASE job")?;
        Ok(())
    }

    fn server_secret(&mut self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError> {
        self.connection.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('daily_secret', ?1)",
            params![fresh.as_slice()],
        )?;
        let stored: Vec<u8> = self.connection.query_row(
            "SELECT value FROM meta WHERE key = 'daily_secret'",
            [],
            |row| row.get(0),
        )?;
        stored
            .try_into()
            .map_err(|_| StoreError::Corrupt("the daily secret is not 32 bytes".to_string()))
    }

    fn register(
        &mut self,
        name: &str,
        token: &TokenHash,
        now_ms: u64,
    ) -> Result<Player, StoreError> {
        let inserted = self.connection.execute(
            "INSERT INTO players (name, token_hash, created_at_ms, name_key)
             VALUES (?1, ?2, ?3, ?4)",
            params![
                name,
                token.as_slice(),
                int(now_ms),
                protocol::name_key(name)
            ],
        );
        match inserted {
            Ok(_) => {
                let id = self.connection.last_insert_rowid().cast_unsigned();
                self.connection.execute(
                    "INSERT INTO player_tokens (token_hash, player_id, created_at_ms)
                     VALUES (?1, ?2, ?3)",
                    params![token.as_slice(), int(id), int(now_ms)],
                )?;
                Ok(Player {
                    id,
                    name: name.to_string(),
                    created_at_ms: now_ms,
                })
            }
            Err(error) if is_duplicate(&error) => Err(StoreError::NameTaken(name.to_string())),
            Err(error) => Err(error.into()),
        }
    }

    fn player_by_token(&mut self, token: &TokenHash) -> Result<Option<Player>, StoreError> {
        Ok(self
            .connection
            .query_row(
                "SELECT p.id, p.name, p.created_at_ms
                 FROM player_tokens t JOIN players p ON p.id = t.player_id
                 WHERE t.token_hash = ?1",
                params![token.as_slice()],
                |row| {
                    Ok(Player {
                        id: uint(row, 0)?,
                        name: row.get(1)?,
                        created_at_ms: uint(row, 2)?,
                    })
                },
            )
            .optional()?)
    }

    fn save_registration_bucket(&mut self, bucket: &SavedBucket) -> Result<(), StoreError> {
        self.connection.execute(
            "INSERT INTO registration_buckets (source, tokens, updated_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (source) DO UPDATE
             SET tokens = excluded.tokens, updated_ms = excluded.updated_ms",
            params![
                bucket.source.to_string(),
                bucket.tokens,
                int(bucket.updated_ms)
            ],
        )?;
        Ok(())
    }

    fn registration_buckets(&mut self, limit: usize) -> Result<Vec<SavedBucket>, StoreError> {
        let mut statement = self.connection.prepare(
            "SELECT source, tokens, updated_ms FROM registration_buckets
             ORDER BY updated_ms DESC LIMIT ?1",
        )?;
        let rows =
            statement.query_map(params![i64::try_from(limit).unwrap_or(i64::MAX)], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, f64>(1)?,
                    uint(row, 2)?,
                ))
            })?;
        let mut buckets = Vec::new();
        for row in rows {
            let (source, tokens, updated_ms) = row?;
            if let Ok(source) = source.parse() {
                buckets.push(SavedBucket {
                    source,
                    tokens,
                    updated_ms,
                });
            }
        }
        Ok(buckets)
    }

    fn revoke_token(&mut self, token: &TokenHash) -> Result<bool, StoreError> {
        let deleted = self.connection.execute(
            "DELETE FROM player_tokens WHERE token_hash = ?1",
            params![token.as_slice()],
        )?;
        Ok(deleted > 0)
    }

    fn save_sign_in_code(
        &mut self,
        player: PlayerId,
        code: &TokenHash,
        now_ms: u64,
        expires_at_ms: u64,
    ) -> Result<(), StoreError> {
        // Expired codes are kept no longer than until the next code is
        // asked for: nothing else needs a sweeper.
        self.connection.execute(
            "DELETE FROM sign_in_codes WHERE player_id = ?1 OR expires_at_ms <= ?2",
            params![int(player), int(now_ms)],
        )?;
        self.connection.execute(
            "INSERT INTO sign_in_codes (code_hash, player_id, expires_at_ms) VALUES (?1, ?2, ?3)",
            params![code.as_slice(), int(player), int(expires_at_ms)],
        )?;
        Ok(())
    }

    fn redeem_sign_in_code(
        &mut self,
        code: &TokenHash,
        token: &TokenHash,
        now_ms: u64,
    ) -> Result<Option<Player>, StoreError> {
        let player: Option<i64> = self
            .connection
            .query_row(
                "DELETE FROM sign_in_codes WHERE code_hash = ?1 AND expires_at_ms > ?2
                 RETURNING player_id",
                params![code.as_slice(), int(now_ms)],
                |row| row.get(0),
            )
            .optional()?;
        let Some(player) = player else {
            return Ok(None);
        };
        self.connection.execute(
            "INSERT INTO player_tokens (token_hash, player_id, created_at_ms) VALUES (?1, ?2, ?3)",
            params![token.as_slice(), player, int(now_ms)],
        )?;
        self.player_by_token(token)
    }

    fn daily_deal(&mut self, game: GameKind, date: &str) -> Result<Option<DailyDeal>, StoreError> {
        Ok(self
            .connection
            .query_row(
                "SELECT seed, salt FROM daily_deals WHERE game = ?1 AND date = ?2",
                params![game.slug(), date],
                |row| {
                    Ok(DailyDeal {
                        game,
                        date: date.to_string(),
                        seed: uint(row, 0)?,
                        salt: row.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    fn save_daily_deal(&mut self, deal: &DailyDeal) -> Result<DailyDeal, StoreError> {
        self.connection.execute(
            "INSERT OR IGNORE INTO daily_deals (game, date, seed, salt) VALUES (?1, ?2, ?3, ?4)",
            params![deal.game.slug(), deal.date, int(deal.seed), deal.salt],
        )?;
        self.daily_deal(deal.game, &deal.date)?
            .ok_or_else(|| StoreError::Corrupt("a saved daily deal is missing".to_string()))
    }

    fn attempt(&mut self, key: &AttemptKey) -> Result<Option<Attempt>, StoreError> {
        let header = self
            .connection
            .query_row(
                "SELECT started_at_ms, status, moves, cards_home, elapsed_ms, finished_at_ms, race_id,
                        new_account, review
                 FROM daily_attempts WHERE player_id = ?1 AND game = ?2 AND date = ?3",
                params![int(key.player), key.game.slug(), key.date],
                |row| {
                    let started_at_ms = uint(row, 0)?;
                    let status: String = row.get(1)?;
                    let race_id: Option<i64> = row.get(6)?;
                    let finish = match race_id {
                        Some(race_id) => Some((
                            status,
                            Progress {
                                moves: row.get(2)?,
                                cards_home: row.get(3)?,
                                elapsed_ms: uint(row, 4)?,
                                ..Progress::default()
                            },
                            uint(row, 5)?,
                            race_id.cast_unsigned(),
                            Eligibility {
                                new_account: row.get(7)?,
                                review: row.get(8)?,
                            },
                        )),
                        None => None,
                    };
                    Ok((started_at_ms, finish))
                },
            )
            .optional()?;
        let Some((started_at_ms, finish)) = header else {
            return Ok(None);
        };
        let finish = match finish {
            Some((status, progress, finished_at_ms, race_id, eligibility)) => Some(AttemptFinish {
                status: parse_status(&status)?,
                progress,
                finished_at_ms,
                race_id,
                eligibility,
            }),
            None => None,
        };
        let mut statement = self.connection.prepare_cached(
            "SELECT text, at_ms FROM daily_moves
             WHERE player_id = ?1 AND game = ?2 AND date = ?3 ORDER BY idx",
        )?;
        let rows = statement
            .query_map(params![int(key.player), key.game.slug(), key.date], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, Option<i64>>(1)?.map(i64::cast_unsigned),
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let (moves, move_times_ms) = rows.into_iter().unzip();
        Ok(Some(Attempt {
            started_at_ms,
            moves,
            move_times_ms,
            finish,
        }))
    }

    fn begin_attempt(&mut self, key: &AttemptKey, started_at_ms: u64) -> Result<(), StoreError> {
        let inserted = self.connection.execute(
            "INSERT INTO daily_attempts (player_id, game, date, started_at_ms, status)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                int(key.player),
                key.game.slug(),
                key.date,
                int(started_at_ms),
                OPEN
            ],
        );
        match inserted {
            Ok(_) => Ok(()),
            Err(error) if is_duplicate(&error) => Err(StoreError::AttemptExists),
            Err(error) => Err(error.into()),
        }
    }

    fn record_move(
        &mut self,
        key: &AttemptKey,
        index: u32,
        text: &str,
        at_ms: u64,
    ) -> Result<(), StoreError> {
        let inserted = self.connection.execute(
            "INSERT INTO daily_moves (player_id, game, date, idx, text, at_ms)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (
                 SELECT 1 FROM daily_attempts
                 WHERE player_id = ?1 AND game = ?2 AND date = ?3 AND race_id IS NULL)",
            params![
                int(key.player),
                key.game.slug(),
                key.date,
                index,
                text,
                int(at_ms)
            ],
        );
        match inserted {
            Ok(1) => Ok(()),
            Ok(_) => Err(StoreError::AttemptNotOpen),
            Err(error) if is_duplicate(&error) => Err(StoreError::MoveConflict(index)),
            Err(error) => Err(error.into()),
        }
    }

    fn finish_attempt(
        &mut self,
        key: &AttemptKey,
        status: PlayerStatus,
        progress: Progress,
        race: &NewRace,
        eligibility: Eligibility,
    ) -> Result<u64, StoreError> {
        self.atomically(|connection| {
            let race_id = insert_race(connection, race)?;
            let updated = connection.execute(
                "UPDATE daily_attempts
                 SET status = ?4, won = ?5, moves = ?6, cards_home = ?7, elapsed_ms = ?8,
                     finished_at_ms = ?9, race_id = ?10, new_account = ?11, review = ?12
                 WHERE player_id = ?1 AND game = ?2 AND date = ?3 AND race_id IS NULL",
                params![
                    int(key.player),
                    key.game.slug(),
                    key.date,
                    status_name(status),
                    status == PlayerStatus::Won,
                    progress.moves,
                    progress.cards_home,
                    int(progress.elapsed_ms),
                    int(race.ended_at_ms),
                    int(race_id),
                    eligibility.new_account,
                    eligibility.review,
                ],
            )?;
            if updated == 1 {
                Ok(race_id)
            } else {
                Err(StoreError::AttemptNotOpen)
            }
        })
    }

    fn expired_attempts(&mut self, started_by_ms: u64) -> Result<Vec<ExpiredAttempt>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT a.player_id, a.game, a.date, a.started_at_ms, p.name, p.created_at_ms
             FROM daily_attempts a JOIN players p ON p.id = a.player_id
             WHERE a.race_id IS NULL AND a.started_at_ms <= ?1",
        )?;
        let rows = statement
            .query_map(params![int(started_by_ms)], |row| {
                Ok((
                    uint(row, 0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    uint(row, 3)?,
                    row.get::<_, String>(4)?,
                    uint(row, 5)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        drop(statement);
        let mut expired = Vec::with_capacity(rows.len());
        for (player, game, date, started_at_ms, name, registered_at_ms) in rows {
            let key = AttemptKey {
                player,
                game: parse_game(&game)?,
                date,
            };
            let (moves, move_times_ms) = self
                .attempt(&key)?
                .map(|attempt| (attempt.moves, attempt.move_times_ms))
                .unwrap_or_default();
            expired.push(ExpiredAttempt {
                key,
                name,
                registered_at_ms,
                started_at_ms,
                moves,
                move_times_ms,
            });
        }
        Ok(expired)
    }

    fn winning_times(
        &mut self,
        game: GameKind,
        date: &str,
        limit: u32,
    ) -> Result<(u32, Vec<u64>), StoreError> {
        let finishers: u32 = self.connection.query_row(
            &format!("SELECT COUNT(*) FROM daily_attempts a WHERE a.game = ?1 AND a.date = ?2 AND {RANKED}"),
            params![game.slug(), date],
            |row| row.get(0),
        )?;
        let mut statement = self.connection.prepare_cached(&format!(
            "SELECT a.elapsed_ms FROM daily_attempts a
             WHERE a.game = ?1 AND a.date = ?2 AND {RANKED} AND a.won
             ORDER BY {RANKING} LIMIT ?3"
        ))?;
        let times = statement
            .query_map(params![game.slug(), date, limit], |row| uint(row, 0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok((finishers, times))
    }

    fn rank(&mut self, key: &AttemptKey) -> Result<Option<Rank>, StoreError> {
        let rank = self
            .connection
            .query_row(
                "SELECT
                    (SELECT COUNT(*) FROM daily_attempts b
                     WHERE b.game = a.game AND b.date = a.date AND b.race_id IS NOT NULL
                       AND NOT b.new_account AND NOT b.review
                       AND (-b.won, b.elapsed_ms, b.moves, b.finished_at_ms, b.player_id)
                         < (-a.won, a.elapsed_ms, a.moves, a.finished_at_ms, a.player_id)),
                    (SELECT COUNT(*) FROM daily_attempts c
                     WHERE c.game = a.game AND c.date = a.date AND c.race_id IS NOT NULL
                       AND NOT c.new_account AND NOT c.review)
                 FROM daily_attempts a
                 WHERE a.player_id = ?1 AND a.game = ?2 AND a.date = ?3 AND a.race_id IS NOT NULL",
                params![int(key.player), key.game.slug(), key.date],
                |row| {
                    Ok(Rank {
                        rank: row.get::<_, u32>(0)? + 1,
                        finishers: row.get(1)?,
                    })
                },
            )
            .optional()?;
        Ok(rank)
    }

    fn leaderboard(
        &mut self,
        game: GameKind,
        date: &str,
        limit: u32,
        player: Option<PlayerId>,
    ) -> Result<Leaderboard, StoreError> {
        let (finished, playing, finishers): (u32, u32, u32) = self.connection.query_row(
            &format!(
                "SELECT COUNT(a.race_id), COUNT(*) - COUNT(a.race_id),
                        COALESCE(SUM({RANKED}), 0)
                 FROM daily_attempts a WHERE a.game = ?1 AND a.date = ?2"
            ),
            params![game.slug(), date],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )?;
        let mut statement = self.connection.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM daily_attempts a JOIN players p ON p.id = a.player_id
             WHERE a.game = ?1 AND a.date = ?2 AND {RANKED}
             ORDER BY {RANKING} LIMIT ?3"
        ))?;
        let mut rank = 0;
        let rows = statement
            .query_map(params![game.slug(), date, limit], |row| {
                rank += 1;
                leaderboard_row(row, rank)
            })?
            .collect::<Result<Vec<_>, _>>()?;
        drop(statement);
        let rows = rows
            .into_iter()
            .map(with_status)
            .collect::<Result<Vec<_>, _>>()?;
        let own = match player {
            Some(player) => {
                let key = AttemptKey {
                    player,
                    game,
                    date: date.to_string(),
                };
                match self.rank(&key)? {
                    Some(Rank { rank, .. }) => {
                        let row = self.connection.query_row(
                            &format!(
                                "SELECT {ROW_COLUMNS} FROM daily_attempts a
                                 JOIN players p ON p.id = a.player_id
                                 WHERE a.player_id = ?1 AND a.game = ?2 AND a.date = ?3"
                            ),
                            params![int(player), game.slug(), date],
                            |row| leaderboard_row(row, rank),
                        )?;
                        Some(with_status(row)?)
                    }
                    None => None,
                }
            }
            None => None,
        };
        Ok(Leaderboard {
            finishers,
            unranked: finished.saturating_sub(finishers),
            playing,
            rows,
            own,
        })
    }

    fn attempt_of_race(&mut self, race_id: u64) -> Result<Option<AttemptKey>, StoreError> {
        let found = self
            .connection
            .query_row(
                "SELECT player_id, game, date FROM daily_attempts WHERE race_id = ?1",
                params![int(race_id)],
                |row| {
                    Ok((
                        uint(row, 0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                    ))
                },
            )
            .optional()?;
        match found {
            Some((player, game, date)) => Ok(Some(AttemptKey {
                player,
                game: parse_game(&game)?,
                date,
            })),
            None => Ok(None),
        }
    }

    fn save_live_race(&mut self, room: &LiveRace) -> Result<(), StoreError> {
        let body = rmp_serde::to_vec_named(room)
            .map_err(|error| StoreError::Corrupt(format!("running race {}: {error}", room.code)))?;
        let node = self.node.clone();
        self.atomically(|connection| {
            let saved = connection.execute(
                "INSERT INTO live_races (code, body, epoch, owner) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (code) DO UPDATE SET body = excluded.body, owner = excluded.owner
                 WHERE live_races.epoch = excluded.epoch",
                params![room.code, body, int(room.epoch), node],
            )?;
            if saved == 0 {
                return Err(StoreError::Fenced {
                    code: room.code.clone(),
                });
            }
            enrol_node(connection, &node)?;
            connection
                .prepare_cached("DELETE FROM proved_deals WHERE game = ?1 AND seed = ?2")?
                .execute(params![room.game.slug(), int(room.seed)])?;
            let mut covered = connection.prepare_cached(
                "DELETE FROM live_moves WHERE code = ?1 AND seat = ?2 AND idx < ?3",
            )?;
            for seat in &room.seats {
                covered.execute(params![
                    room.code,
                    seat.seat,
                    i64::try_from(seat.log.len()).unwrap_or(i64::MAX)
                ])?;
            }
            Ok(())
        })
    }

    fn record_live_move(&mut self, code: &str, kept: &LiveMove) -> Result<(), StoreError> {
        let recorded = self
            .connection
            .prepare_cached(
                "INSERT INTO live_moves (code, seat, idx, text, elapsed_ms, seq)
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6
                 WHERE EXISTS (SELECT 1 FROM live_races WHERE code = ?1 AND epoch = ?7)",
            )?
            .execute(params![
                code,
                kept.seat,
                kept.index,
                kept.text,
                int(kept.elapsed_ms),
                int(kept.seq),
                int(kept.epoch)
            ])?;
        if recorded == 0 {
            return Err(StoreError::Fenced {
                code: code.to_string(),
            });
        }
        Ok(())
    }

    fn end_live_race(&mut self, code: &str, epoch: u64) -> Result<(), StoreError> {
        self.atomically(|connection| {
            let claim: Option<i64> = connection
                .query_row(
                    "SELECT epoch FROM live_races WHERE code = ?1",
                    params![code],
                    |row| row.get(0),
                )
                .optional()?;
            if claim.is_some_and(|claim| claim != int(epoch)) {
                return Err(StoreError::Fenced {
                    code: code.to_string(),
                });
            }
            connection.execute("DELETE FROM live_moves WHERE code = ?1", params![code])?;
            connection.execute("DELETE FROM live_races WHERE code = ?1", params![code])?;
            Ok(())
        })
    }

    fn claim_live_race(&mut self, code: &str) -> Result<Option<LiveRace>, StoreError> {
        let node = self.node.clone();
        self.atomically(|connection| {
            let claimed = connection
                .query_row(
                    "UPDATE live_races SET epoch = epoch + 1, owner = ?2 WHERE code = ?1
                     RETURNING body, epoch",
                    params![code, node],
                    |row| Ok((row.get::<_, Vec<u8>>(0)?, uint(row, 1)?)),
                )
                .optional()?;
            if claimed.is_some() {
                enrol_node(connection, &node)?;
            }
            claimed
                .map(|(body, epoch)| read_live_race(connection, code, &body, epoch))
                .transpose()
        })
    }

    fn keep_proved_deal(
        &mut self,
        owner: &str,
        game: GameKind,
        seed: u64,
    ) -> Result<(), StoreError> {
        // A deal kept twice (two nodes drew the same seed) stays once, with
        // its first owner: it is dealt once either way.
        self.connection
            .prepare_cached(
                "INSERT INTO proved_deals (owner, game, seed) VALUES (?1, ?2, ?3)
                 ON CONFLICT (game, seed) DO NOTHING",
            )?
            .execute(params![owner, game.slug(), int(seed)])?;
        Ok(())
    }

    fn proved_deals(&mut self, owner: &str) -> Result<Vec<(GameKind, u64)>, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT game, seed FROM proved_deals WHERE owner = ?1 ORDER BY id")?;
        let rows = statement.query_map(params![owner], |row| {
            Ok((row.get::<_, String>(0)?, uint(row, 1)?))
        })?;
        rows.map(|row| {
            let (game, seed) = row?;
            Ok((parse_game(&game)?, seed))
        })
        .collect()
    }

    fn set_node(&mut self, node: &str) {
        node.clone_into(&mut self.node);
    }

    fn renew_node_lease(&mut self, node: &str, until_ms: u64) -> Result<(), StoreError> {
        self.connection
            .prepare_cached(
                "INSERT INTO live_nodes (node, lease_until_ms) VALUES (?1, ?2)
                 ON CONFLICT (node) DO UPDATE SET lease_until_ms = excluded.lease_until_ms",
            )?
            .execute(params![node, int(until_ms)])?;
        Ok(())
    }

    fn orphaned_races(&mut self, now_ms: u64) -> Result<Vec<String>, StoreError> {
        let mut statement = self.connection.prepare_cached(
            "SELECT r.code FROM live_nodes n JOIN live_races r ON r.owner = n.node
             WHERE n.lease_until_ms < ?1 ORDER BY r.code",
        )?;
        let codes = statement
            .query_map(params![int(now_ms)], |row| row.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(codes)
    }

    fn keeps_live_race(&mut self, code: &str) -> Result<bool, StoreError> {
        Ok(self
            .connection
            .prepare_cached("SELECT 1 FROM live_races WHERE code = ?1")?
            .query_row(params![code], |_| Ok(()))
            .optional()?
            .is_some())
    }

    fn live_races(&mut self) -> Result<Vec<LiveRace>, StoreError> {
        let mut rooms = self
            .connection
            .prepare("SELECT code, body, epoch FROM live_races ORDER BY code")?;
        let bodies = rooms
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, Vec<u8>>(1)?,
                    uint(row, 2)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        bodies
            .into_iter()
            .map(|(code, body, epoch)| read_live_race(&self.connection, &code, &body, epoch))
            .collect()
    }

    fn live_race_of_token(&mut self, token: &TokenHash) -> Result<Option<String>, StoreError> {
        let mut rooms = self
            .connection
            .prepare_cached("SELECT code, body FROM live_races ORDER BY code")?;
        let bodies = rooms
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        for (code, body) in bodies {
            if LiveRace::body_holds_token(&code, &body, token)? {
                return Ok(Some(code));
            }
        }
        Ok(None)
    }

    fn tally_day(&mut self, game: GameKind, date: &str) -> Result<bool, StoreError> {
        self.atomically(|connection| {
            let marked = connection
                .prepare_cached(
                    "INSERT INTO daily_tallies (game, date, finished, finishers, winners)
                     VALUES (?1, ?2, 0, 0, 0) ON CONFLICT DO NOTHING",
                )?
                .execute(params![game.slug(), date])?;
            if marked == 0 {
                return Ok(false);
            }
            let newest_before: Option<String> = connection
                .prepare_cached(
                    "SELECT MAX(date) FROM daily_tallies WHERE game = ?1 AND date <> ?2",
                )?
                .query_row(params![game.slug(), date], |row| row.get(0))?;
            let attempts = connection
                .prepare_cached(&format!(
                    "SELECT a.player_id, a.won, a.elapsed_ms, NOT a.new_account AND NOT a.review
                     FROM daily_attempts a
                     WHERE a.game = ?1 AND a.date = ?2 AND a.race_id IS NOT NULL
                     ORDER BY {RANKING}"
                ))?
                .query_map(params![game.slug(), date], |row| {
                    Ok(DayAttempt {
                        player: uint(row, 0)?,
                        won: row.get(1)?,
                        elapsed_ms: uint(row, 2)?,
                        ranked: row.get(3)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            let before = connection
                .prepare_cached(&format!(
                    "SELECT {RECORD_COLUMNS}, r.player_id FROM player_records r
                     JOIN daily_attempts a ON a.player_id = r.player_id AND a.game = r.game
                     WHERE a.game = ?1 AND a.date = ?2 AND a.race_id IS NOT NULL"
                ))?
                .query_map(params![game.slug(), date], |row| {
                    Ok((uint(row, 11)?, record_counters(row)?))
                })?
                .collect::<Result<HashMap<_, _>, _>>()?;
            let tally = tally::tally_day(date, newest_before.as_deref(), &attempts, &before);
            write_tally(connection, game, date, &tally)?;
            Ok(true)
        })
    }

    fn untallied_days(
        &mut self,
        closed_through: &str,
    ) -> Result<Vec<(GameKind, String)>, StoreError> {
        let rows = self
            .connection
            .prepare_cached(
                "SELECT d.game, d.date FROM daily_deals d
                 WHERE d.date <= ?1 AND NOT EXISTS (
                     SELECT 1 FROM daily_tallies t WHERE t.game = d.game AND t.date = d.date)
                 ORDER BY d.game, d.date",
            )?
            .query_map(params![closed_through], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(game, date)| Ok((parse_game(&game)?, date)))
            .collect()
    }

    fn daily_days(
        &mut self,
        game: GameKind,
        before: Option<&str>,
        limit: u32,
    ) -> Result<DaysFound, StoreError> {
        let mut days = self
            .connection
            .prepare_cached(
                "SELECT t.date, t.finishers, t.winners, d.seed, d.salt
                 FROM daily_tallies t JOIN daily_deals d ON d.game = t.game AND d.date = t.date
                 WHERE t.game = ?1 AND t.finished > 0 AND (?2 IS NULL OR t.date < ?2)
                 ORDER BY t.date DESC LIMIT ?3",
            )?
            .query_map(params![game.slug(), before, i64::from(limit) + 1], |row| {
                Ok(DaySummary {
                    date: row.get(0)?,
                    finishers: row.get(1)?,
                    winners: row.get(2)?,
                    podium: Vec::new(),
                    reveal: Reveal {
                        game,
                        seed: uint(row, 3)?,
                        salt: row.get(4)?,
                    },
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let more = days.len() > limit as usize;
        days.truncate(limit as usize);
        let mut podium = self.connection.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS}, a.final_rank FROM daily_attempts a
             JOIN players p ON p.id = a.player_id
             WHERE a.game = ?1 AND a.date = ?2 AND a.final_rank IS NOT NULL
             ORDER BY a.final_rank LIMIT {PODIUM}"
        ))?;
        for day in &mut days {
            let rows = podium
                .query_map(params![game.slug(), day.date], |row| {
                    let rank = row.get(8)?;
                    leaderboard_row(row, rank)
                })?
                .collect::<Result<Vec<_>, _>>()?;
            day.podium = rows
                .into_iter()
                .map(|row| {
                    with_status(row).map(|row| LeaderboardRow {
                        unranked: None,
                        ..row
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(DaysFound { days, more })
    }

    fn player_record(
        &mut self,
        player: PlayerLookup<'_>,
    ) -> Result<Option<PlayerRecord>, StoreError> {
        let found = match player {
            PlayerLookup::Id(id) => self
                .connection
                .prepare_cached("SELECT id, name FROM players WHERE id = ?1")?
                .query_row(params![int(id)], |row| Ok((uint(row, 0)?, row.get(1)?)))
                .optional()?,
            // The column's NOCASE collation compares whatever the case.
            PlayerLookup::Name(name) => self
                .connection
                .prepare_cached("SELECT id, name FROM players WHERE name = ?1")?
                .query_row(params![name], |row| Ok((uint(row, 0)?, row.get(1)?)))
                .optional()?,
        };
        let Some((id, name)): Option<(u64, String)> = found else {
            return Ok(None);
        };
        let through: Option<String> = self
            .connection
            .prepare_cached("SELECT MAX(date) FROM daily_tallies")?
            .query_row([], |row| row.get(0))?;
        let counters = self
            .connection
            .prepare_cached(&format!(
                "SELECT {RECORD_COLUMNS}, r.game,
                        (SELECT MAX(t.date) FROM daily_tallies t WHERE t.game = r.game)
                 FROM player_records r WHERE r.player_id = ?1"
            ))?
            .query_map(params![int(id)], |row| {
                Ok((
                    record_counters(row)?,
                    row.get::<_, String>(11)?,
                    row.get::<_, Option<String>>(12)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut games = Vec::with_capacity(counters.len());
        for (counters, game, game_through) in counters {
            let game = parse_game(&game)?;
            let median_rank = self
                .connection
                .prepare_cached(
                    "SELECT final_rank FROM daily_attempts
                     WHERE player_id = ?1 AND game = ?2 AND final_rank IS NOT NULL
                     ORDER BY final_rank LIMIT 1 OFFSET ?3",
                )?
                .query_row(
                    params![
                        int(id),
                        game.slug(),
                        tally::lower_median_offset(counters.ranked_days)
                    ],
                    |row| row.get(0),
                )
                .optional()?;
            let median_time_ms = self
                .connection
                .prepare_cached(
                    "SELECT a.elapsed_ms FROM daily_attempts a
                     JOIN daily_tallies t ON t.game = a.game AND t.date = a.date
                     WHERE a.player_id = ?1 AND a.game = ?2 AND a.race_id IS NOT NULL AND a.won
                     ORDER BY a.elapsed_ms LIMIT 1 OFFSET ?3",
                )?
                .query_row(
                    params![
                        int(id),
                        game.slug(),
                        tally::lower_median_offset(counters.wins)
                    ],
                    |row| uint(row, 0),
                )
                .optional()?;
            games.push(tally::game_record(
                game,
                counters,
                game_through.as_deref(),
                median_rank,
                median_time_ms,
            ));
        }
        tally::sort_games(&mut games);
        Ok(Some(PlayerRecord {
            name,
            through,
            games,
        }))
    }

    fn standings(
        &mut self,
        game: GameKind,
        span: &PeriodSpan,
        today: &str,
        limit: u32,
        player: Option<PlayerId>,
    ) -> Result<Standings, StoreError> {
        let period = tally::period_name(span.period);
        let tallied: std::collections::HashSet<String> = self
            .connection
            .prepare_cached(
                "SELECT date FROM daily_tallies WHERE game = ?1 AND date BETWEEN ?2 AND ?3",
            )?
            .query_map(
                params![game.slug(), span.first_date, span.last_date],
                |row| row.get(0),
            )?
            .collect::<Result<_, _>>()?;
        let mut live = Vec::new();
        let mut ranking = self.connection.prepare_cached(&format!(
            "SELECT a.player_id, p.name, a.won, a.elapsed_ms
             FROM daily_attempts a JOIN players p ON p.id = a.player_id
             WHERE a.game = ?1 AND a.date = ?2 AND {RANKED}
             ORDER BY {RANKING}"
        ))?;
        for date in span.dates_through(today) {
            if tallied.contains(&date) {
                continue;
            }
            let ranked = ranking
                .query_map(params![game.slug(), date], |row| {
                    Ok((uint(row, 0)?, row.get(1)?, row.get(2)?, uint(row, 3)?))
                })?
                .collect::<Result<Vec<_>, _>>()?;
            live.extend(tally::live_additions(&ranked));
        }
        drop(ranking);
        let key = params![game.slug(), period, span.key];
        let totals = |row: &Row<'_>| -> rusqlite::Result<Totals> {
            Ok(Totals {
                player: uint(row, 0)?,
                name: row.get(1)?,
                points: row.get(2)?,
                days: row.get(3)?,
                wins: row.get(4)?,
                win_time_ms: uint(row, 5)?,
            })
        };
        if !live.is_empty() {
            // Live points can lift anyone: every line of the period is read
            // and ranked again.
            let tallied = self
                .connection
                .prepare_cached(&format!(
                    "SELECT {TOTALS_COLUMNS} FROM period_totals t JOIN players p ON p.id = t.player_id
                     WHERE t.game = ?1 AND t.period_kind = ?2 AND t.period_key = ?3"
                ))?
                .query_map(key, totals)?
                .collect::<Result<Vec<_>, _>>()?;
            let (players, rows, own) = tally::rank_standings(tallied, live, limit, player);
            return Ok(Standings { players, rows, own });
        }
        // Nothing live: the top rows come straight off the standings index.
        let players: u32 = self
            .connection
            .prepare_cached(
                "SELECT COUNT(*) FROM period_totals
                 WHERE game = ?1 AND period_kind = ?2 AND period_key = ?3",
            )?
            .query_row(key, |row| row.get(0))?;
        let rows = self
            .connection
            .prepare_cached(&format!(
                "SELECT {TOTALS_COLUMNS} FROM period_totals t JOIN players p ON p.id = t.player_id
                 WHERE t.game = ?1 AND t.period_kind = ?2 AND t.period_key = ?3
                 ORDER BY {STANDING} LIMIT ?4"
            ))?
            .query_map(params![game.slug(), period, span.key, limit], totals)?
            .collect::<Result<Vec<_>, _>>()?;
        let rows: Vec<StandingRow> = rows
            .iter()
            .zip(1..)
            .map(|(line, rank)| line.row(rank))
            .collect();
        let own = match player {
            Some(player) => self
                .connection
                .prepare_cached(&format!(
                    "SELECT {TOTALS_COLUMNS},
                        (SELECT COUNT(*) FROM period_totals b
                         WHERE b.game = t.game AND b.period_kind = t.period_kind
                           AND b.period_key = t.period_key
                           AND (-b.points, -b.wins, b.win_time_ms, b.player_id)
                             < (-t.points, -t.wins, t.win_time_ms, t.player_id))
                     FROM period_totals t JOIN players p ON p.id = t.player_id
                     WHERE t.game = ?1 AND t.period_kind = ?2 AND t.period_key = ?3
                       AND t.player_id = ?4"
                ))?
                .query_row(params![game.slug(), period, span.key, int(player)], |row| {
                    let ahead: u32 = row.get(6)?;
                    Ok(totals(row)?.row(ahead + 1))
                })
                .optional()?,
            None => None,
        };
        Ok(Standings { players, rows, own })
    }

    fn record_race(&mut self, race: &NewRace) -> Result<u64, StoreError> {
        self.atomically(|connection| insert_race(connection, race))
    }

    fn race(&mut self, race_id: u64) -> Result<Option<RaceRecord>, StoreError> {
        let header = self
            .connection
            .query_row(
                "SELECT game, seed, salt, daily_date, ended_at_ms, open_boards FROM races WHERE id = ?1",
                params![int(race_id)],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        uint(row, 1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, Option<String>>(3)?,
                        uint(row, 4)?,
                        row.get::<_, bool>(5)?,
                    ))
                },
            )
            .optional()?;
        let Some((game, seed, salt, daily, ended_at_ms, open_boards)) = header else {
            return Ok(None);
        };
        let mut statement = self.connection.prepare_cached(
            "SELECT seat, name, rank, status, moves, cards_home, elapsed_ms, log,
                    runs_home, cards_uncovered, stock_turned, bot
             FROM race_players WHERE race_id = ?1 ORDER BY rank",
        )?;
        let rows = statement
            .query_map(params![int(race_id)], |row| {
                Ok((
                    row.get::<_, u8>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, u8>(2)?,
                    row.get::<_, String>(3)?,
                    Progress {
                        moves: row.get(4)?,
                        cards_home: row.get(5)?,
                        // Not a column: a stored race counts its cards home.
                        cards_in_order: row.get(5)?,
                        runs_home: row.get(8)?,
                        cards_uncovered: row.get(9)?,
                        stock_turned: row.get(10)?,
                        elapsed_ms: uint(row, 6)?,
                    },
                    row.get::<_, Vec<u8>>(7)?,
                    row.get::<_, Option<String>>(11)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut standings = Vec::with_capacity(rows.len());
        let mut logs = Vec::with_capacity(rows.len());
        for (seat, name, rank, status, progress, log, bot) in rows {
            standings.push(Standing {
                rank,
                seat,
                name,
                status: parse_status(&status)?,
                progress,
                bot: bot.as_deref().map(parse_bot).transpose()?,
            });
            logs.push(MoveLog {
                seat,
                moves: decode_log(&log)?,
            });
        }
        logs.sort_by_key(|log| log.seat);
        Ok(Some(RaceRecord {
            race_id,
            daily,
            ended_at_ms,
            result: RaceResult {
                race_id: Some(race_id),
                standings,
                reveal: Reveal {
                    game: parse_game(&game)?,
                    seed,
                    salt,
                },
                logs,
                open_boards,
            },
        }))
    }
}

#[cfg(test)]
mod tests;
