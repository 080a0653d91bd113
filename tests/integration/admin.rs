//! The admin port: `/healthz`, `/livez`, `/metrics`, a graceful shutdown
//! that tells every connection, a health check that fails once the
//! database is dead, and the cap on admin connections.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, ErrorCode, RoomOptions, ServerMessage};
use patience_tests::{Client, first_deal, start_server, two_player_race};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// An admin connection that fails the test rather than hang.
fn connect(address: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(address).expect("admin port connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    stream
}

/// Sends `GET path` on `stream` and reads the answer to its end.
fn request(mut stream: TcpStream, path: &str) -> String {
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").expect("request sent");
    read_all(stream)
}

fn read_all(mut stream: TcpStream) -> String {
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response read");
    response
}

fn get(address: SocketAddr, path: &str) -> String {
    request(connect(address), path)
}

async fn get_async(address: SocketAddr, path: &'static str) -> String {
    tokio::task::spawn_blocking(move || get(address, path))
        .await
        .expect("joins")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_metrics_and_a_graceful_shutdown() {
    let server = start_server(|_| {}).await;
    let admin = server.admin_address().expect("admin port");
    let (_, line) = first_deal();
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    ada.play(&line[0]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    ada.play("Kc>Kc").await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveRejected { .. }
    ));

    let health = tokio::task::spawn_blocking(move || get(admin, "/healthz"))
        .await
        .expect("joins");
    assert!(health.starts_with("HTTP/1.1 200 OK"), "{health}");
    assert!(health.ends_with("ok\n"));
    let metrics = tokio::task::spawn_blocking(move || get(admin, "/metrics"))
        .await
        .expect("joins");
    for expected in [
        "patience_connections 2\n",
        "patience_rooms 1\n",
        "patience_races_running 1\n",
        "patience_moves_accepted_total 1\n",
        "patience_moves_rejected_total 1\n",
        "patience_send_queue_drops_total 0\n",
        "patience_move_handling_seconds_count 2\n",
        "patience_deal_pool_ready{game=\"three-blind-mice\"}",
        "patience_storage_errors_total 0\n",
        "patience_database_failed_jobs_total 0\n",
        "patience_database_commits_total ",
    ] {
        assert!(metrics.contains(expected), "{expected} not in\n{metrics}");
    }
    let missing = tokio::task::spawn_blocking(move || get(admin, "/nope"))
        .await
        .expect("joins");
    assert!(missing.starts_with("HTTP/1.1 404"));

    server.shutdown().await;
    for client in [&mut ada, &mut bob] {
        let closed = client.closed().await;
        assert!(
            closed
                .messages
                .iter()
                .any(|message| matches!(message, ServerMessage::ShuttingDown { .. })),
            "{closed:?}"
        );
        assert_eq!(closed.frame.map(|frame| frame.code), Some(CloseCode::Away));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_database_fails_the_health_check_and_storage_is_refused() {
    let server = start_server(|_| {}).await;
    let admin = server.admin_address().expect("admin port");
    let health = get_async(admin, "/healthz").await;
    assert!(health.starts_with("HTTP/1.1 200 OK"), "{health}");
    assert!(
        get_async(admin, "/metrics")
            .await
            .contains("patience_database_up 1\n")
    );
    let mut cat = Client::hello(&server, "cat").await;
    let (_, line) = first_deal();
    let (mut racer, _, _, _, _) = two_player_race(&server, RoomOptions::default()).await;

    server.crash_database_for_tests().await;

    let health = get_async(admin, "/healthz").await;
    assert!(
        health.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{health}"
    );
    let body = health.split_once("\r\n\r\n").map(|(_, body)| body);
    assert_eq!(
        body.map(|body| (body.starts_with("database down: "), body.lines().count())),
        Some((true, 1)),
        "{health}"
    );
    let metrics = get_async(admin, "/metrics").await;
    assert!(metrics.contains("patience_database_up 0\n"), "{metrics}");
    // A request that must be stored is refused at once, with a reason.
    cat.send(&ClientMessage::Register {
        name: "cat".to_string(),
    })
    .await;
    match cat.recv().await {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::Internal);
            assert!(message.contains("database is down"), "{message}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
    // No new race starts that could not be stored...
    cat.send(&ClientMessage::CreateRoom {
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: false,
        options: RoomOptions::default(),
        bots: Vec::new(),
    })
    .await;
    match cat.recv().await {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::Internal);
            assert!(message.contains("database is down"), "{message}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
    // ...and a move in the race already running, which cannot be kept, is
    // not acknowledged: the room tells its players why and closes (the race
    // resumes from what was kept once the server runs again).
    racer.play(&line[0]).await;
    let closed = racer.closed().await;
    assert!(
        !closed
            .messages
            .iter()
            .any(|message| matches!(message, ServerMessage::MoveAccepted { .. })),
        "{closed:?}"
    );
    assert!(
        closed.messages.iter().any(|message| matches!(
            message,
            ServerMessage::Error { code: ErrorCode::Internal, message } if message.contains("could not store this race")
        )),
        "{closed:?}"
    );
    let close = closed.frame.as_ref().map(|frame| u16::from(frame.code));
    assert_eq!(close, Some(1011), "{closed:?}");
    server.shutdown().await;
}

/// Idle `GET /metrics` requests (heads never finished) fill the admin
/// slots; a health check still gets its answer, the oldest idle connection
/// closed to make room for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_checks_are_answered_when_idle_requests_fill_the_admin_slots() {
    let server = start_server(|config| config.admin_max_connections = 4).await;
    let admin = server.admin_address().expect("admin port");
    let checked = tokio::task::spawn_blocking(move || {
        let mut idle = Vec::new();
        for _ in 0..4 {
            let mut stream = connect(admin);
            write!(stream, "GET /metrics HTTP/1.1\r\n").expect("half a request sent");
            idle.push(stream);
        }
        for _ in 0..3 {
            let health = get(admin, "/healthz");
            assert!(health.starts_with("HTTP/1.1 200 OK"), "{health}");
            assert!(health.ends_with("ok\n"), "{health}");
            let live = get(admin, "/livez");
            assert!(live.starts_with("HTTP/1.1 200 OK"), "{live}");
            assert!(live.ends_with("alive\n"), "{live}");
        }
        // The oldest idle connections were closed, unanswered, to make
        // room: the first is gone (closed, or reset if the server had not
        // read all it was sent).
        let mut pushed_out = String::new();
        match idle.remove(0).read_to_string(&mut pushed_out) {
            Ok(_) => assert_eq!(pushed_out, ""),
            Err(error) => assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset),
        }
        let metrics = get(admin, "/metrics");
        assert!(
            metrics.contains("patience_admin_connections_refused_total "),
            "{metrics}"
        );
        assert!(
            !metrics.contains("patience_admin_connections_refused_total 0\n"),
            "{metrics}"
        );
    })
    .await;
    checked.expect("the checks pass");
    server.shutdown().await;
}

/// A cluster node started before its Redis waits for it instead of
/// exiting: alive (`/livez` 200) but not ready (`/healthz` 503) meanwhile,
/// and serving once Redis answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_started_before_its_redis_waits_alive_but_not_ready() {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let socket = directory.path().join("redis.sock");
    let admin: SocketAddr = format!("127.0.0.1:{}", patience_tests::free_port())
        .parse()
        .expect("an address");
    let mut config = patience_tests::test_config();
    config.admin_listen = Some(admin);
    config.redis_url = Some(format!("redis+unix://{}", socket.display()));
    config.public_url = Some("ws://127.0.0.1:1".to_string());
    let starting = tokio::spawn(patience_server::start(config));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let alive = loop {
        let answer = tokio::task::spawn_blocking(move || {
            TcpStream::connect(admin)
                .ok()
                .map(|stream| request(stream, "/livez"))
        })
        .await
        .expect("joins");
        match answer {
            Some(answer) => break answer,
            None => {
                assert!(!starting.is_finished(), "the node gave up on Redis");
                assert!(std::time::Instant::now() < deadline, "no admin port");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    assert!(alive.starts_with("HTTP/1.1 200 OK"), "{alive}");
    let health = get_async(admin, "/healthz").await;
    assert!(health.starts_with("HTTP/1.1 503"), "{health}");
    assert!(health.contains("redis unreachable"), "{health}");
    assert!(!starting.is_finished(), "the node gave up on Redis");

    let mut redis = std::process::Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--save",
            "",
            "--appendonly",
            "no",
            "--unixsocket",
        ])
        .arg(&socket)
        .arg("--dir")
        .arg(directory.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-server runs (apt-get install -y redis-server)");
    let server = starting
        .await
        .expect("joins")
        .expect("the node starts once Redis answers");
    let health = get_async(admin, "/healthz").await;
    assert!(health.starts_with("HTTP/1.1 200 OK"), "{health}");
    let mut ada = Client::hello(&server, "ada").await;
    let _ = ada.create_room(2, RoomOptions::default()).await;
    server.shutdown().await;
    let _ = redis.kill();
    let _ = redis.wait();
}
