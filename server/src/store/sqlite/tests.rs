//! What only the SQLite store has: its file (WAL mode, migrations of files
//! written by older servers, files that are not ours). The contract it
//! shares with PostgreSQL is tested in `store/tests.rs`, on both.

use super::*;
use crate::store::tests::{Backend, hash, key, race_of};
use crate::store::{Eligibility, Store};
use patience_shared::protocol::{PlayerStatus, Progress};

impl Backend for SqliteStore {
    fn sql_execute(&mut self, sql: &str) -> u64 {
        let changed = self
            .backend
            .connection
            .execute(sql, [])
            .expect("the statement runs");
        u64::try_from(changed).expect("a count")
    }

    fn sql_strings(&mut self, sql: &str) -> Vec<String> {
        self.backend
            .connection
            .prepare(sql)
            .expect("prepares")
            .query_map([], |row| row.get(0))
            .expect("queries")
            .collect::<Result<_, _>>()
            .expect("reads")
    }

    fn sql_count(&mut self, sql: &str) -> i64 {
        self.backend
            .connection
            .query_row(sql, [], |row| row.get(0))
            .expect("counts")
    }

    fn damage_move_logs(&mut self) {
        self.sql_execute("UPDATE race_players SET log = x'c1'");
    }
}

#[test]
fn a_version_one_file_keeps_its_attempts_ranked_and_its_moves_untimed() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    {
        let connection = Connection::open(&path).expect("creates");
        connection.execute_batch(MIGRATIONS[0]).expect("version 1");
        connection
            .execute_batch(
                "PRAGMA user_version = 1;
                 INSERT INTO players (id, name, token_hash, created_at_ms) VALUES (1, 'ada', x'01', 0);
                 INSERT INTO daily_attempts (player_id, game, date, started_at_ms, status)
                     VALUES (1, 'three-blind-mice', '2026-12-01', 0, 'racing');
                 INSERT INTO daily_moves (player_id, game, date, idx, text)
                     VALUES (1, 'three-blind-mice', '2026-12-01', 0, '7h>4');",
            )
            .expect("version 1 rows");
    }
    let mut store = SqliteStore::open(&path).expect("migrates");
    let attempt = store.attempt(&key(1)).expect("reads").expect("kept");
    assert_eq!(attempt.moves, ["7h>4"]);
    assert_eq!(attempt.move_times_ms, [None]);
    let progress = Progress {
        moves: 1,
        cards_home: 0,
        elapsed_ms: 1_000,
        ..Progress::default()
    };
    let race = race_of("ada", 1, PlayerStatus::Resigned, progress);
    store
        .finish_attempt(
            &key(1),
            PlayerStatus::Resigned,
            progress,
            &race,
            Eligibility::default(),
        )
        .expect("finishes");
    assert_eq!(
        store
            .rank(&key(1))
            .expect("reads")
            .map(|rank| rank.finishers),
        Some(1)
    );
}

#[test]
fn names_registered_before_keys_are_keyed_in_order_and_a_look_alike_keeps_none() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    let before_keys = MIGRATIONS.len() - 1;
    {
        let connection = Connection::open(&path).expect("creates");
        for step in &MIGRATIONS[..before_keys] {
            connection.execute_batch(step).expect("migrates");
        }
        connection
            .execute_batch(&format!(
                "PRAGMA user_version = {before_keys};
                 INSERT INTO players (id, name, token_hash, created_at_ms)
                     VALUES (1, 'modern', x'01', 0), (2, 'rnodern', x'02', 0), (3, 'bob', x'03', 0);"
            ))
            .expect("rows of the version before keys");
    }
    let mut store = SqliteStore::open(&path).expect("migrates");
    assert_eq!(
        store.sql_strings("SELECT coalesce(name_key, '-') FROM players ORDER BY id"),
        ["rnodern", "-", "bob"]
    );
    // (The key spells m as rn.) Both older names stay, and the look they
    // share stays taken.
    assert!(matches!(
        store.register("rn0dern", &hash(9), 1),
        Err(StoreError::NameTaken(_))
    ));
    store.register("b0bby", &hash(10), 1).expect("registers");
}

#[test]
fn a_race_stored_before_open_boards_reads_back_closed_with_zero_counts() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    {
        let connection = Connection::open(&path).expect("creates");
        for step in &MIGRATIONS[..2] {
            connection.execute_batch(step).expect("versions 1 and 2");
        }
        connection
            .execute_batch(
                "PRAGMA user_version = 2;
                 INSERT INTO races (id, game, seed, salt, daily_date, ended_at_ms)
                     VALUES (7, 'indian', 42, '00', NULL, 1000);
                 INSERT INTO race_players (race_id, seat, player_id, name, rank, status,
                                           moves, cards_home, elapsed_ms, log)
                     VALUES (7, 0, NULL, 'ada', 1, 'resigned', 0, 0, 500, x'90');",
            )
            .expect("version 2 rows");
    }
    let mut store = SqliteStore::open(&path).expect("migrates");
    let record = store.race(7).expect("reads").expect("kept");
    assert!(!record.result.open_boards);
    assert_eq!(
        record.result.standings[0].progress,
        Progress {
            elapsed_ms: 500,
            ..Progress::default()
        }
    );
}

#[test]
fn a_file_keeps_its_data_and_migrates_once() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    let player = {
        let mut store = SqliteStore::open(&path).expect("creates");
        store.begin().expect("begins");
        let player = store.register("ada", &hash(1), 0).expect("registers");
        store.commit().expect("commits");
        player
    };
    let mut store = SqliteStore::open(&path).expect("reopens");
    assert_eq!(
        store.schema_version().expect("reads"),
        MIGRATIONS.len() as u32
    );
    assert_eq!(
        store.player_by_token(&hash(1)).expect("reads"),
        Some(player)
    );
    let mode: String = store
        .backend
        .connection
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("reads");
    assert_eq!(mode, "wal");
}

#[test]
fn a_database_from_a_newer_server_is_refused() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    {
        let store = SqliteStore::open(&path).expect("creates");
        store
            .backend
            .connection
            .pragma_update(None, "user_version", 99)
            .expect("sets");
    }
    assert!(matches!(
        SqliteStore::open(&path),
        Err(StoreError::NewerSchema { found: 99, .. })
    ));
}

#[test]
fn a_file_that_is_not_a_database_is_a_typed_error() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    std::fs::write(
        &path,
        b"this is not a database, it is a shopping list\n".repeat(200),
    )
    .expect("writes");
    let error = SqliteStore::open(&path).expect_err("refused");
    assert!(matches!(error, StoreError::Database(_)), "{error}");
    assert!(error.to_string().contains("not a database"), "{error}");
}

#[test]
fn a_claim_cannot_run_between_a_moves_insert_and_its_commit() {
    // SQLite has one writer at a time: the owner's batch (BEGIN IMMEDIATE)
    // holds the file's write lock from its first statement to its commit,
    // and a claim begins with a write. So a claim cannot come between a
    // move's INSERT and its COMMIT: it waits (here, with no busy timeout,
    // it is refused at once), then reads the committed move.
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("shared.sqlite3");
    let mut owner = SqliteStore::open(&path).expect("opens");
    let mut claimer = SqliteStore::open(&path).expect("opens");
    claimer
        .backend
        .connection
        .busy_timeout(std::time::Duration::ZERO)
        .expect("sets the timeout");
    owner
        .save_live_race(&crate::store::tests::live_race("AAAAAA", [&["a"], &[]]))
        .expect("saves");
    owner.begin().expect("begins");
    let kept = LiveMove {
        seat: 0,
        index: 1,
        text: "b".to_string(),
        elapsed_ms: 1_500,
        seq: 11,
        epoch: 0,
    };
    owner.record_live_move("AAAAAA", &kept).expect("records");
    let between = claimer.claim_live_race("AAAAAA");
    assert!(
        matches!(
            &between,
            Err(StoreError::Database(rusqlite::Error::SqliteFailure(failure, _)))
                if failure.code == rusqlite::ErrorCode::DatabaseBusy
        ),
        "a claim must not run while a move is uncommitted: {between:?}"
    );
    owner.commit().expect("commits");
    let claimed = claimer
        .claim_live_race("AAAAAA")
        .expect("claims")
        .expect("kept");
    assert_eq!(claimed.seats[0].log, ["a", "b"]);
    assert_eq!(claimed.epoch, 1);
    // And the old owner, whose claim lost, is fenced off.
    assert!(matches!(
        owner.record_live_move("AAAAAA", &LiveMove { index: 2, ..kept }),
        Err(StoreError::Fenced { .. })
    ));
}
