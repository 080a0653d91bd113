//! A store outage mid-race: the PostgreSQL database of a running server
//! refuses new connections and its sessions are ended, a player moves,
//! the database comes back. The race rides it out: its players keep their
//! connections, the move is acknowledged once it is stored, the race goes
//! on and ends, and every acknowledged move is stored once. And a write
//! the database never answers (held by a lock, as a disk that hangs holds
//! it): the room closes at its bound, on the server's virtual clock,
//! having told nobody the move. The database is one of the test's own on
//! the server `tests/with-services` starts.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

use patience_server::clock::Clock;
use patience_server::store::postgres::{ScratchDatabase, TEST_URL_VARIABLE};
use patience_shared::protocol::{ClientMessage, ErrorCode, RoomOptions, ServerMessage};
use patience_tests::{Client, first_deal, start_server, test_config};

/// The test server's own database, which never refuses connections.
fn admin_url() -> String {
    std::env::var(TEST_URL_VARIABLE).expect("run through tests/with-services")
}

/// `psql`, beside the server's binaries.
fn psql_program() -> std::path::PathBuf {
    std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's binaries (tests/with-services needs them too)")
        .filter_map(|version| Some(version.ok()?.path().join("bin/psql")))
        .find(|path| path.is_file())
        .expect("psql beside the server's binaries")
}

/// Runs `sql` with `psql` on the database `url`, and returns what it printed.
fn psql(url: &str, sql: &str) -> String {
    let output = Command::new(psql_program())
        .args([
            "--no-psqlrc",
            "--tuples-only",
            "--no-align",
            "-v",
            "ON_ERROR_STOP=1",
        ])
        .arg(url)
        .args(["-c", sql])
        .output()
        .expect("psql runs");
    let printed = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert!(
        output.status.success(),
        "{sql}: {printed} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    printed
}

/// The name of the scratch database behind `url`.
fn database_name(url: &str) -> &str {
    url.rsplit('/').next().expect("a URL with a database")
}

/// Waits until `condition` holds, failing the test after 30 s.
async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_race_rides_out_a_postgresql_outage_and_every_acknowledged_move_is_stored_once() {
    let database = ScratchDatabase::create();
    let name = database_name(database.url()).to_string();
    let server = start_server(|config| {
        config.database_url = Some(database.url().parse().expect("any text"));
    })
    .await;
    let metrics = server.metrics();
    let (_, line) = first_deal();
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    ada.play_all(&line[..2]).await;

    // The database goes: no new session, and the server's are ended (each
    // waited for, up to 5 s, so none writes after this).
    let admin = admin_url();
    psql(
        &admin,
        &format!("ALTER DATABASE {name} ALLOW_CONNECTIONS false"),
    );
    let ended = psql(
        &admin,
        &format!(
            "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity \
         WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        ),
    );
    assert_ne!(ended, "0", "the server had a session");
    // Ada moves, and so does Bob: the room cannot store either.
    ada.play(&line[2]).await;
    bob.play(&line[0]).await;
    eventually("the room waits for the store", || {
        metrics.rooms_waiting_for_store.load(Ordering::Relaxed) == 1
    })
    .await;
    eventually("the room tries again", || {
        metrics.store_retries.load(Ordering::Relaxed) >= 1
    })
    .await;

    // The database comes back: both moves are acknowledged, on the same
    // connections, and the room no longer waits.
    psql(
        &admin,
        &format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"),
    );
    match ada.move_answer().await {
        ServerMessage::MoveAccepted { text, .. } => assert_eq!(text, line[2]),
        other => panic!("ada's move is acknowledged once stored: {other:?}"),
    }
    match bob.move_answer().await {
        ServerMessage::MoveAccepted { text, .. } => assert_eq!(text, line[0]),
        other => panic!("bob's move is acknowledged once stored: {other:?}"),
    }
    assert_eq!(metrics.rooms_waiting_for_store.load(Ordering::Relaxed), 0);

    // The race goes on and ends, with every move either was told of.
    ada.play_all(&line[3..]).await;
    bob.send(&ClientMessage::Resign).await;
    let ServerMessage::RaceEnded { result, .. } = ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await
    else {
        unreachable!("waited for race_ended");
    };
    assert_eq!(result.logs[0].moves, line);
    assert_eq!(result.logs[1].moves, line[..1]);
    let race_id = result.race_id.expect("stored");
    for (client, name) in [(&ada, "ada"), (&bob, "bob")] {
        assert!(
            !client
                .received()
                .iter()
                .any(|message| matches!(message, ServerMessage::Error { .. })),
            "{name} was told of no error: {:?}",
            client.received()
        );
    }

    // Stored once, and running no more.
    let mut viewer = Client::hello(&server, "viewer").await;
    viewer.send(&ClientMessage::Replay { race_id }).await;
    match viewer.recv().await {
        ServerMessage::ReplayData { race } => assert_eq!(race.result, result),
        other => panic!("expected replay_data, got {other:?}"),
    }
    viewer
        .send(&ClientMessage::Replay {
            race_id: race_id + 1,
        })
        .await;
    assert_eq!(viewer.next_error().await, ErrorCode::RaceNotFound);
    // In the database itself: one race, none running.
    let count = |table: &str| psql(database.url(), &format!("SELECT count(*) FROM {table}"));
    assert_eq!(
        (count("races"), count("live_races"), count("live_moves")),
        ("1".to_string(), "0".to_string(), "0".to_string())
    );
    server.shutdown().await;
}

/// The database queue of the server whose write is never answered.
const QUEUE: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_write_is_never_answered_closes_the_room_at_the_bound_untold() {
    let database = ScratchDatabase::create();
    let clock = Clock::virtual_at(1_000_000_000);
    let outage_ms = 10_000;
    let server = start_server(|config| {
        config.database_url = Some(database.url().parse().expect("any text"));
        config.clock = clock.clone();
        config.store_outage_ms = outage_ms;
        // A short queue, so that the room's writes fill it while the
        // thread is held.
        config.database_queue = QUEUE;
    })
    .await;
    let (_, line) = first_deal();
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    bob.join_room(&code).await;
    // The countdown begins only once the room has a proved deal, and ends
    // countdown_ms after that on the virtual clock: moved before the deal
    // came (a slow deal pool), the clock would never reach its end.
    ada.recv_until(|message| matches!(message, ServerMessage::Countdown { .. }))
        .await;
    // The set-up's writes (players, deals) done first: with a queue of
    // eight, the race's first write could otherwise find it full, and its
    // next try waits on the virtual clock, which only the test moves.
    server.database_caught_up_for_tests().await;
    clock.advance(test_config().countdown_ms);
    ada.race_started().await;
    bob.race_started().await;
    ada.play_all(&line[..2]).await;

    // A session of the test's own holds the moves' table: the server's
    // next write waits for it, neither committing nor failing.
    let mut holder = Command::new(psql_program())
        .args(["--no-psqlrc", "--quiet", "-v", "ON_ERROR_STOP=1"])
        .arg(database.url())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("psql runs");
    let mut holding = holder.stdin.take().expect("psql's input");
    holding
        .write_all(b"BEGIN;\nLOCK TABLE live_moves IN ACCESS EXCLUSIVE MODE;\n")
        .expect("psql reads");
    holding.flush().expect("psql reads");
    let url = database.url().to_string();
    eventually("the test's session holds the lock", || {
        psql(
            &url,
            "SELECT count(*) FROM pg_locks WHERE relation = 'live_moves'::regclass \
             AND mode = 'AccessExclusiveLock' AND granted",
        ) == "1"
    })
    .await;
    ada.play(&line[2]).await;
    let name = database_name(database.url()).to_string();
    eventually("the server's write waits for the lock", || {
        psql(
            &admin_url(),
            &format!(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = '{name}' AND wait_event_type = 'Lock'"
            ),
        ) == "1"
    })
    .await;

    // More moves: their writes fill the database's queue, and the last
    // finds it full. The room's actor does not wait for room in it (it
    // would then keep no deadline at all).
    bob.play(&line[0]).await;
    for text in &line[3..3 + QUEUE] {
        ada.play(text).await;
    }
    let metrics = server.metrics();
    eventually("a write finds the database's queue full", || {
        metrics.storage_errors.load(Ordering::Relaxed) >= 1
    })
    .await;

    // The bound passes on the server's clock: the room closes, and says
    // why; no move made since the lock was acknowledged.
    clock.advance(outage_ms);
    for (client, name) in [(&mut ada, "ada"), (&mut bob, "bob")] {
        let closed = client.closed().await;
        let told: Vec<ServerMessage> = client
            .received()
            .into_iter()
            .chain(closed.messages)
            .collect();
        assert!(
            told.iter().any(|message| matches!(
                message,
                ServerMessage::Error { code: ErrorCode::Internal, message }
                    if message.contains("did not answer for 10 s")
            )),
            "{name}: {told:?}"
        );
        let acknowledged = told
            .iter()
            .filter(|message| matches!(message, ServerMessage::MoveAccepted { .. }))
            .count();
        let before_the_lock = if name == "ada" { 2 } else { 0 };
        assert_eq!(
            acknowledged, before_the_lock,
            "{name} was told of a move not stored: {told:?}"
        );
    }

    // The lock goes (its session ends): the write made long ago commits.
    drop(holding);
    let _ = holder.wait();
    server.shutdown().await;
}
