//! What only the PostgreSQL store has: its migrations on a server, a
//! statement that failed unseen (PostgreSQL would turn the commit into a
//! rollback), servers that cannot be reached, and the test databases'
//! URLs. The contract it shares with SQLite is tested in `store/tests.rs`,
//! on both. Each test has a database of its own on the server that
//! `tests/with-services` starts.

use super::*;
use crate::store::Store;
use crate::store::tests::{Backend, hash, key, live_race};

impl Backend for PostgresStore {
    fn sql_execute(&mut self, sql: &str) -> u64 {
        self.backend
            .client
            .execute(sql, &[])
            .expect("the statement runs")
    }

    fn sql_strings(&mut self, sql: &str) -> Vec<String> {
        self.backend
            .client
            .query(sql, &[])
            .expect("queries")
            .iter()
            .map(|row| row.try_get(0).expect("text"))
            .collect()
    }

    fn sql_count(&mut self, sql: &str) -> i64 {
        self.backend
            .client
            .query_one(sql, &[])
            .expect("counts")
            .try_get(0)
            .expect("an integer")
    }

    fn damage_move_logs(&mut self) {
        self.sql_execute("UPDATE race_players SET log = '\\xc1'::BYTEA");
    }
}

fn connect(database: &ScratchDatabase) -> PostgresStore {
    PostgresStore::connect(database.url()).expect("the test database opens")
}

#[test]
fn a_database_keeps_its_data_and_migrates_once() {
    let database = ScratchDatabase::create();
    let player = {
        let mut store = connect(&database);
        store.begin().expect("begins");
        let player = store.register("ada", &hash(1), 0).expect("registers");
        store.commit().expect("commits");
        player
    };
    // A second migration would fail: its tables exist.
    let mut store = connect(&database);
    assert_eq!(
        store.schema_version().expect("reads"),
        MIGRATIONS.len() as u32
    );
    assert_eq!(
        store.player_by_token(&hash(1)).expect("reads"),
        Some(player)
    );
}

#[test]
fn a_version_one_database_keeps_its_suspended_race_as_a_running_one() {
    let database = ScratchDatabase::create();
    let kept = live_race("AAAAAA", [&["a", "b"], &[]]);
    let body = rmp_serde::to_vec_named(&kept).expect("encodes");
    let mut client = postgres::Client::connect(database.url(), NoTls).expect("connects");
    client
        .batch_execute(&format!(
            "CREATE TABLE schema_version (
                 one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
                 version BIGINT NOT NULL
             );
             INSERT INTO schema_version (version) VALUES (1);
             {}",
            MIGRATIONS[0]
        ))
        .expect("version 1");
    client
        .execute(
            "INSERT INTO suspended_rooms (code, body) VALUES ($1, $2)",
            &[&kept.code, &body],
        )
        .expect("a suspended room");
    let mut store = connect(&database);
    assert_eq!(
        store.schema_version().expect("reads"),
        MIGRATIONS.len() as u32
    );
    assert_eq!(store.live_races().expect("reads"), [kept]);
}

#[test]
fn servers_starting_together_migrate_once() {
    let database = ScratchDatabase::create();
    let versions: Vec<u32> = std::thread::scope(|scope| {
        let starting: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| connect(&database).schema_version().expect("reads")))
            .collect();
        starting
            .into_iter()
            .map(|start| start.join().expect("connects and migrates"))
            .collect()
    });
    assert_eq!(versions, [MIGRATIONS.len() as u32; 4]);
}

#[test]
fn a_database_from_a_newer_server_is_refused() {
    let database = ScratchDatabase::create();
    connect(&database).sql_execute("UPDATE schema_version SET version = 99");
    assert!(matches!(
        PostgresStore::connect(database.url()),
        Err(StoreError::NewerSchema { found: 99, .. })
    ));
}

#[test]
fn a_statement_that_failed_unseen_stops_the_commit() {
    let database = ScratchDatabase::create();
    let mut store = connect(&database);
    let nobody = key(999);
    // A job that swallows the error of the database itself: PostgreSQL
    // then refuses the rest, and would roll back on `COMMIT`. The commit
    // says so instead of pretending.
    store.begin().expect("begins");
    store.savepoint().expect("opens");
    store.register("ada", &hash(1), 0).expect("registers");
    assert!(matches!(
        store.begin_attempt(&nobody, 0),
        Err(StoreError::Postgres(_))
    ));
    assert!(matches!(
        store.register("bob", &hash(2), 0),
        Err(StoreError::Postgres(_))
    ));
    store
        .release_savepoint()
        .expect_err("the transaction is aborted");
    assert!(matches!(store.commit(), Err(StoreError::Commit(_))));
    assert_eq!(store.player_by_token(&hash(1)).expect("reads"), None);

    // Rolled back to its savepoint, as the database thread does with a
    // failed job, the error is gone and the rest of the batch commits.
    store.begin().expect("begins");
    store.savepoint().expect("opens");
    store.register("ada", &hash(1), 0).expect("registers");
    store.release_savepoint().expect("releases");
    store.savepoint().expect("opens");
    assert!(store.begin_attempt(&nobody, 0).is_err());
    store.rollback_to_savepoint().expect("rolls back");
    store.commit().expect("commits");
    assert!(store.player_by_token(&hash(1)).expect("reads").is_some());
}

#[test]
fn a_server_that_cannot_be_reached_is_a_typed_error() {
    for url in [
        "host=/nonexistent/patience-socket-dir user=postgres connect_timeout=2",
        "postgres://postgres@%2Fnonexistent%2Fpatience/postgres",
        "postgres://user@host:notaport/db",
    ] {
        let error = PostgresStore::connect(url).expect_err("refused");
        assert!(matches!(error, StoreError::Postgres(_)), "{url}: {error}");
    }
}

#[test]
fn a_test_database_url_names_the_database_in_either_form() {
    let check = |url: &str, expected: &str| assert_eq!(with_dbname(url, "t1"), expected, "{url}");
    check(
        "host=/tmp/pg user=postgres",
        "host=/tmp/pg user=postgres dbname=t1",
    );
    check(
        "host=/tmp/pg dbname=postgres",
        "host=/tmp/pg dbname=postgres dbname=t1",
    );
    check(
        "postgres://postgres@%2Ftmp%2Fpg/postgres",
        "postgres://postgres@%2Ftmp%2Fpg/t1",
    );
    check("postgresql://u:p@db:5433", "postgresql://u:p@db:5433/t1");
    check(
        "postgres://u@db/x?sslmode=disable",
        "postgres://u@db/t1?sslmode=disable",
    );
    check(
        "postgres://u@db?host=/tmp/pg",
        "postgres://u@db/t1?host=/tmp/pg",
    );
    // And the crate reads the last `dbname` of the pairs.
    let config =
        postgres::Config::from_str("host=/tmp/pg dbname=postgres dbname=t1").expect("parses");
    assert_eq!(config.get_dbname(), Some("t1"));
}

/// What the URL leaves out gets this server's defaults; what it sets is
/// kept. No server is needed: nothing connects.
#[test]
fn a_url_keeps_its_own_timeouts_and_gets_the_defaults_for_the_rest() {
    let cases = [
        (
            "postgres://ada@db/patience",
            CONNECT_TIMEOUT,
            TCP_USER_TIMEOUT,
            "patience-server",
        ),
        (
            "postgres://ada@db/patience?connect_timeout=3&tcp_user_timeout=4&application_name=ops",
            Duration::from_secs(3),
            Duration::from_secs(4),
            "ops",
        ),
        (
            "host=/run/postgresql dbname=patience tcp_user_timeout=30",
            CONNECT_TIMEOUT,
            Duration::from_secs(30),
            "patience-server",
        ),
    ];
    for (url, connect, tcp_user, application) in cases {
        let config = connection_config(url).expect("a valid URL");
        assert_eq!(config.get_connect_timeout(), Some(&connect), "{url}");
        assert_eq!(config.get_tcp_user_timeout(), Some(&tcp_user), "{url}");
        assert_eq!(config.get_application_name(), Some(application), "{url}");
    }
}

/// The id of the server process behind `store`'s connection.
fn backend_pid(store: &mut PostgresStore) -> i32 {
    store
        .backend
        .client
        .query_one("SELECT pg_backend_pid()", &[])
        .expect("asks")
        .try_get(0)
        .expect("an integer")
}

/// Waits until the session `pid` waits for a lock (true) or `call` has
/// returned without waiting (false): the signal that a call on another
/// thread is blocked, read off `pg_stat_activity` rather than guessed from
/// a pause.
fn blocked_on_a_lock<T>(
    observer: &mut PostgresStore,
    pid: i32,
    call: &std::thread::ScopedJoinHandle<'_, T>,
) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let waiting: bool = observer
            .backend
            .client
            .query_one(
                "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false)
                 FROM pg_stat_activity WHERE pid = $1",
                &[&pid],
            )
            .expect("asks")
            .try_get(0)
            .expect("a boolean");
        if waiting {
            return true;
        }
        if call.is_finished() {
            return false;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the call neither returned nor waited for a lock within a minute"
        );
        std::thread::yield_now();
    }
}

fn move_under_first_claim(index: u32, text: &str) -> LiveMove {
    LiveMove {
        seat: 0,
        index,
        text: text.to_string(),
        elapsed_ms: 1_500,
        seq: 11,
        epoch: 0,
    }
}

#[test]
fn a_claim_between_a_moves_insert_and_its_commit_waits_for_the_commit_and_reads_the_move() {
    let database = ScratchDatabase::create();
    let mut owner = connect(&database);
    let mut claimer = connect(&database);
    let mut observer = connect(&database);
    owner
        .save_live_race(&live_race("AAAAAA", [&["a"], &[]]))
        .expect("saves");
    let claimer_pid = backend_pid(&mut claimer);
    // The owner's batch: the move is inserted, not yet committed.
    owner.begin().expect("begins");
    owner
        .record_live_move("AAAAAA", &move_under_first_claim(1, "b"))
        .expect("records");
    // The hook between the insert and the commit: another server claims
    // the race now, under READ COMMITTED as a claim runs.
    let (waited, claimed) = std::thread::scope(|scope| {
        let claim = scope.spawn(|| claimer.claim_live_race("AAAAAA"));
        let waited = blocked_on_a_lock(&mut observer, claimer_pid, &claim);
        // Committed: the owner tells its player the move is kept.
        owner.commit().expect("the owner commits");
        (waited, claim.join().expect("the claim does not panic"))
    });
    let claimed = claimed.expect("claims").expect("the race is kept");
    assert_eq!(
        claimed.seats[0].log,
        ["a", "b"],
        "the new owner must run on from every move the old one acknowledged"
    );
    assert!(waited, "the claim must wait for the move's commit");
    assert_eq!(claimed.epoch, 1);
}

#[test]
fn a_move_made_while_a_claim_is_uncommitted_waits_for_it_and_is_fenced() {
    let database = ScratchDatabase::create();
    let mut owner = connect(&database);
    let mut claimer = connect(&database);
    let mut observer = connect(&database);
    owner
        .save_live_race(&live_race("AAAAAA", [&["a"], &[]]))
        .expect("saves");
    let owner_pid = backend_pid(&mut owner);
    // The claim has bumped the epoch and read the moves, not yet committed.
    claimer.begin().expect("begins");
    let claimed = claimer
        .claim_live_race("AAAAAA")
        .expect("claims")
        .expect("the race is kept");
    assert_eq!(claimed.seats[0].log, ["a"]);
    let (waited, written) = std::thread::scope(|scope| {
        let write =
            scope.spawn(|| owner.record_live_move("AAAAAA", &move_under_first_claim(1, "b")));
        let waited = blocked_on_a_lock(&mut observer, owner_pid, &write);
        claimer.commit().expect("the claim commits");
        (waited, write.join().expect("the write does not panic"))
    });
    assert!(
        matches!(&written, Err(StoreError::Fenced { code }) if code == "AAAAAA"),
        "a move the claim did not read must be refused, not kept: {written:?}"
    );
    assert!(waited, "the move must wait for the claim's commit");
    let races = observer.live_races().expect("reads");
    assert_eq!(races[0].seats[0].log, ["a"]);
}

/// How many times `table` was scanned and how many of its rows were read,
/// by any path, as this session counts them (counts not yet reported
/// included: take the difference of two, in one transaction, during which
/// nothing is reported).
fn reads_so_far(store: &mut PostgresStore, table: &str) -> (i64, i64) {
    let row = store
        .backend
        .client
        .query_one(
            "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0),
                    coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
             FROM pg_stat_xact_user_tables WHERE relname = $1",
            &[&table],
        )
        .expect("asks");
    (
        row.try_get(0).expect("a count"),
        row.try_get(1).expect("a count"),
    )
}

/// The codes `store`'s scan finds at `now_ms`, and the scans and rows of
/// `live_races` and of `live_moves` it read.
fn scan_and_count(store: &mut PostgresStore, now_ms: u64) -> (Vec<String>, (i64, i64), (i64, i64)) {
    store.backend.client.batch_execute("BEGIN").expect("begins");
    let races_before = reads_so_far(store, "live_races");
    let moves_before = reads_so_far(store, "live_moves");
    let codes = store.orphaned_races(now_ms).expect("scans");
    let races_after = reads_so_far(store, "live_races");
    let moves_after = reads_so_far(store, "live_moves");
    store
        .backend
        .client
        .batch_execute("COMMIT")
        .expect("commits");
    (
        codes,
        (
            races_after.0 - races_before.0,
            races_after.1 - races_before.1,
        ),
        (
            moves_after.0 - moves_before.0,
            moves_after.1 - moves_before.1,
        ),
    )
}

#[test]
fn the_failover_scan_reads_no_move_and_only_the_races_of_nodes_that_are_gone() {
    let database = ScratchDatabase::create();
    let mut store = connect(&database);
    // 300 running races, two moves each, of a node whose lease runs.
    store.set_node("live");
    for index in 0..300 {
        let code = format!("L{index:05}");
        store
            .save_live_race(&live_race(&code, [&[], &[]]))
            .expect("saves");
        for (move_index, text) in ["a", "b"].into_iter().enumerate() {
            let kept = LiveMove {
                index: u32::try_from(move_index).expect("small"),
                ..move_under_first_claim(0, text)
            };
            store.record_live_move(&code, &kept).expect("records");
        }
    }
    store.renew_node_lease("live", 10_000).expect("renews");
    store
        .backend
        .client
        .batch_execute("ANALYZE")
        .expect("analyzes");

    // While every node's lease runs, the scan reads not one race.
    let (codes, races, moves) = scan_and_count(&mut store, 5_000);
    assert_eq!(codes, Vec::<String>::new());
    assert_eq!(races, (0, 0), "live_races: scans, rows");
    assert_eq!(moves, (0, 0), "live_moves: scans, rows");

    // A node that is gone, with one race: the scan reads that race alone.
    store.set_node("gone");
    store
        .save_live_race(&live_race("G00000", [&["a"], &[]]))
        .expect("saves");
    store
        .backend
        .client
        .batch_execute("ANALYZE")
        .expect("analyzes");
    let (codes, races, moves) = scan_and_count(&mut store, 5_000);
    assert_eq!(codes, ["G00000"]);
    assert_eq!(races, (1, 1), "one index scan, one row, of 301 races");
    assert_eq!(moves, (0, 0), "live_moves: scans, rows");
}
