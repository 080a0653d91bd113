//! The embedded default [`Store`](super::Store): one SQLite file in the
//! data directory. The store's queries are written once in
//! [`sql`]; this module is the [`SqliteConnection`] they run on
//! (the `Backend` (`store/backend.rs`) it implements), its schema,
//! and what SQLite does its own way: `?1` placeholders, a running race's
//! move fenced by a plain `EXISTS` (one writer at a time holds the file
//! from a move's insert to its commit), and a tally written a prepared row
//! at a time (each a function call, not a round trip).
//!
//! The file is in WAL mode with `synchronous = FULL`: a transaction that
//! a commit returned from survives a killed process and a power
//! cut. Its cost, one fsync per commit, is shared by every call of a batch
//! (see [`database`](crate::database)).
//!
//! The schema is versioned with `PRAGMA user_version`; [`MIGRATIONS`] brings
//! any older file up to date when the server starts, in one transaction, and
//! a file from a newer server is refused rather than misread.
//!
//! Unsigned 64-bit values (seeds, ids, times) are stored as SQLite's signed
//! integers with the same bits. Move logs are MessagePack arrays of strings.

use std::borrow::Cow;
use std::path::Path;

use patience_shared::game::GameKind;
use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{Connection, params_from_iter};

use super::backend::{Backend, Param, Row, row_through};
use super::columns::int;
use super::sql::{self, SqlStore};
use super::tally::DayTally;
use super::{LiveMove, StoreError};

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
    r#"
-- Ratings (patience_shared::rating): one row per player and game, the
-- rating after the player's last rated race of it.
CREATE TABLE ratings (
    player_id    INTEGER NOT NULL REFERENCES players (id),
    game         TEXT NOT NULL,
    mu           REAL NOT NULL,
    sigma        REAL NOT NULL,
    races        INTEGER NOT NULL,
    last_race_ms INTEGER NOT NULL,
    PRIMARY KEY (player_id, game)
) WITHOUT ROWID;
CREATE INDEX ratings_by_game ON ratings (game, last_race_ms);
-- Each rated race's change of each rated racer; a race's rows are written
-- together, once.
CREATE TABLE rating_history (
    race_id      INTEGER NOT NULL REFERENCES races (id),
    player_id    INTEGER NOT NULL REFERENCES players (id),
    game         TEXT NOT NULL,
    at_ms        INTEGER NOT NULL,
    place        INTEGER NOT NULL,
    racers       INTEGER NOT NULL,
    mu_before    REAL NOT NULL,
    sigma_before REAL NOT NULL,
    mu_after     REAL NOT NULL,
    sigma_after  REAL NOT NULL,
    PRIMARY KEY (race_id, player_id)
) WITHOUT ROWID;
CREATE INDEX rating_history_by_player ON rating_history (player_id, game, at_ms);
"#,
    r#"
-- The room a race was raced in, so that the room's link leads to the
-- race once the room has closed; NULL for daily attempts and for races
-- stored before.
ALTER TABLE races ADD COLUMN room_code TEXT;
CREATE INDEX races_by_room_code ON races (room_code, id);
"#,
];

/// The SQLite store: the store's queries ([`SqlStore`]) on a
/// [`SqliteConnection`].
pub type SqliteStore = SqlStore<SqliteConnection>;

/// A connection to the SQLite file, and what SQLite does its own way.
#[derive(Debug)]
pub struct SqliteConnection {
    connection: Connection,
}

/// How many prepared statements a connection keeps: every statement of the
/// store, so that none is parsed afresh on a busy server.
const STATEMENT_CACHE: usize = 128;

/// `sql` with PostgreSQL's `$1` placeholders spelled as SQLite's `?1` (a
/// `$1` would be a named parameter, numbered in order of appearance).
fn placeholders(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut spelled = String::with_capacity(sql.len());
    let mut characters = sql.chars().peekable();
    while let Some(character) = characters.next() {
        let numbered = characters.peek().is_some_and(char::is_ascii_digit);
        spelled.push(if character == '$' && numbered {
            '?'
        } else {
            character
        });
    }
    Cow::Owned(spelled)
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Param::Int(value) => value.map_or(ToSqlOutput::Owned(Value::Null), ToSqlOutput::from),
            Param::Bool(value) => ToSqlOutput::from(value),
            Param::Text(value) => value.map_or(ToSqlOutput::Owned(Value::Null), ToSqlOutput::from),
            Param::Bytes(value) => ToSqlOutput::from(value),
            Param::Real(value) => ToSqlOutput::from(value),
        })
    }
}

row_through!(rusqlite::Row<'_>, get);

impl SqliteStore {
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
        connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let mut connection = SqliteConnection { connection };
        connection.migrate()?;
        sql::open(connection)
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        self.backend.schema_version()
    }
}

impl SqliteConnection {
    /// Runs a statement of the transaction's frame (begin, commit, a job's
    /// savepoint), prepared once: each batch and each job runs some, and
    /// parsing them afresh every time showed in profiles.
    fn run_cached(&self, statement: &str) -> Result<(), StoreError> {
        self.connection.prepare_cached(statement)?.execute([])?;
        Ok(())
    }

    fn schema_version(&self) -> Result<u32, StoreError> {
        let version: i64 = self
            .connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))?;
        u32::try_from(version).map_err(|_| StoreError::Corrupt(format!("user_version {version}")))
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
}

impl Backend for SqliteConnection {
    // The column's NOCASE collation compares whatever the case.
    const NAME_MATCHES: &'static str = "name = $1";
    // One writer at a time: the transaction that reads a claim holds the
    // whole file until it ends.
    const LOCK_ROW: &'static str = "";

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, StoreError> {
        let changed = self
            .connection
            .prepare_cached(&placeholders(sql))?
            .execute(params_from_iter(params))?;
        Ok(changed as u64)
    }

    fn query<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        mut read: impl FnMut(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut statement = self.connection.prepare_cached(&placeholders(sql))?;
        let mut rows = statement.query(params_from_iter(params))?;
        let mut answer = Vec::new();
        while let Some(row) = rows.next()? {
            answer.push(read(row)?);
        }
        Ok(answer)
    }

    fn atomically<T>(
        &mut self,
        work: impl FnOnce(&mut SqliteConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.connection.execute_batch("SAVEPOINT call")?;
        match work(self) {
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

    fn begin(&mut self) -> Result<(), StoreError> {
        // IMMEDIATE takes the write lock now, so that a second server on the
        // same file waits here (busy_timeout) instead of failing mid-batch.
        self.run_cached("BEGIN IMMEDIATE")
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.run_cached("COMMIT")
    }

    fn rollback(&mut self) {
        if let Err(error) = self.connection.execute_batch("ROLLBACK") {
            tracing::error!(%error, "rollback failed");
        }
    }

    // A name of its own, so that it nests around the `call` savepoints of
    // `atomically` without either ending the other.
    fn savepoint(&mut self) -> Result<(), StoreError> {
        self.run_cached("SAVEPOINT job")
    }

    fn release_savepoint(&mut self) -> Result<(), StoreError> {
        self.run_cached("RELEASE job")
    }

    fn rollback_to_savepoint(&mut self) -> Result<(), StoreError> {
        // ROLLBACK TO undoes but keeps the savepoint open; RELEASE ends it.
        self.connection
            .execute_batch("ROLLBACK TO job; RELEASE job")?;
        Ok(())
    }

    fn record_live_move(&mut self, code: &str, kept: &LiveMove) -> Result<(), StoreError> {
        // One writer at a time: no claim comes between this insert and its
        // commit, so the fence needs no lock of its own.
        let recorded = self.execute(
            "INSERT INTO live_moves (code, seat, idx, text, elapsed_ms, seq)
             SELECT $1, $2, $3, $4, $5, $6
             WHERE EXISTS (SELECT 1 FROM live_races WHERE code = $1 AND epoch = $7)",
            &[
                Param::text(code),
                Param::int(kept.seat),
                Param::int(kept.index),
                Param::text(&kept.text),
                Param::uint(kept.elapsed_ms),
                Param::uint(kept.seq),
                Param::uint(kept.epoch),
            ],
        )?;
        if recorded == 0 {
            return Err(StoreError::Fenced {
                code: code.to_string(),
            });
        }
        Ok(())
    }

    fn orphaned_races(&mut self, now_ms: u64) -> Result<Vec<String>, StoreError> {
        self.query(
            "SELECT r.code FROM live_nodes n JOIN live_races r ON r.owner = n.node
             WHERE n.lease_until_ms < $1 ORDER BY r.code",
            &[Param::uint(now_ms)],
            |row| row.text(0),
        )
    }

    /// A prepared statement a row: each is a function call, not a round
    /// trip.
    fn write_tally(
        &mut self,
        game: GameKind,
        date: &str,
        tally: &DayTally,
    ) -> Result<(), StoreError> {
        for (player, final_rank) in &tally.ranks {
            self.execute(
                "UPDATE daily_attempts SET final_rank = $4
                 WHERE player_id = $1 AND game = $2 AND date = $3",
                &[
                    Param::uint(*player),
                    Param::game(game),
                    Param::text(date),
                    Param::int(*final_rank),
                ],
            )?;
        }
        for addition in &tally.additions {
            for (period, key) in tally.periods() {
                self.execute(
                    "INSERT INTO period_totals
                         (game, period_kind, period_key, player_id, points, days, wins,
                          win_time_ms)
                     VALUES ($1, $2, $3, $4, $5, 1, $6, $7)
                     ON CONFLICT (game, period_kind, period_key, player_id) DO UPDATE SET
                         points = points + excluded.points, days = days + 1,
                         wins = wins + excluded.wins,
                         win_time_ms = win_time_ms + excluded.win_time_ms",
                    &[
                        Param::game(game),
                        Param::text(period),
                        Param::text(key),
                        Param::uint(addition.player),
                        Param::int(addition.points),
                        Param::Bool(addition.won),
                        Param::uint(addition.win_time_ms),
                    ],
                )?;
            }
        }
        for (player, counters) in &tally.records {
            self.execute(
                "INSERT OR REPLACE INTO player_records
                     (player_id, game, days_played, wins, ranked_days, best_rank, best_time_ms,
                      play_streak, best_play_streak, last_played, win_streak, best_win_streak,
                      last_won)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                &[
                    Param::uint(*player),
                    Param::game(game),
                    Param::int(counters.days_played),
                    Param::int(counters.wins),
                    Param::int(counters.ranked_days),
                    Param::Int(counters.best_rank.map(i64::from)),
                    Param::Int(counters.best_time_ms.map(int)),
                    Param::int(counters.play_streak),
                    Param::int(counters.best_play_streak),
                    Param::Text(counters.last_played.as_deref()),
                    Param::int(counters.win_streak),
                    Param::int(counters.best_win_streak),
                    Param::Text(counters.last_won.as_deref()),
                ],
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
