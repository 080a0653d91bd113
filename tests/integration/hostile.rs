//! Hostile and broken clients: each gets a typed error (or is closed), and
//! the server goes on serving everyone else.

use patience_shared::protocol::{self, ClientMessage, ErrorCode, RoomOptions, ServerMessage};
use patience_shared::rules::MoveError;
use patience_tests::{
    Client, Closed, ServerProcess, a_lazy_spectator_catches_up, first_deal, lazy_spectator,
    start_server, two_player_race,
};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

fn error_code(message: &ServerMessage) -> Option<ErrorCode> {
    match message {
        ServerMessage::Error { code, .. } | ServerMessage::MoveRejected { code, .. } => Some(*code),
        _ => None,
    }
}

#[tokio::test]
async fn bad_frames_get_typed_errors_and_the_race_goes_on() {
    let server = start_server(|_| {}).await;
    let (_, line) = first_deal();
    let (mut ada, mut bob, code, _, _) = two_player_race(&server, RoomOptions::default()).await;

    // Malformed MessagePack, a map with an unknown type, a known type with a
    // field missing, a text frame, a second hello.
    bob.send_raw(vec![0xc1, 0xff, 0x00]).await;
    assert_eq!(bob.next_error().await, ErrorCode::MalformedMessage);
    bob.send_raw(protocol::encode(
        &serde_json::json!({"type": "teleport", "to": 3}),
    ))
    .await;
    assert_eq!(bob.next_error().await, ErrorCode::UnknownMessage);
    bob.send_raw(protocol::encode(&serde_json::json!({"type": "move"})))
        .await;
    assert_eq!(bob.next_error().await, ErrorCode::MalformedMessage);
    bob.send_frame(Message::text("{\"type\":\"resign\"}")).await;
    assert_eq!(bob.next_error().await, ErrorCode::TextFrame);
    bob.send(&ClientMessage::Hello {
        version: 1,
        name: "bob".to_string(),
    })
    .await;
    assert_eq!(bob.next_error().await, ErrorCode::AlreadyGreeted);

    // A move on another player's board, bad notation, an illegal move.
    bob.send(&ClientMessage::Move {
        text: line[0].clone(),
        seat: Some(0),
    })
    .await;
    assert_eq!(bob.next_error().await, ErrorCode::NotYourBoard);
    bob.play("hello").await;
    assert_eq!(bob.next_error().await, ErrorCode::BadNotation);
    bob.play("c1>c2").await;
    assert_eq!(bob.next_error().await, ErrorCode::BadNotation);
    bob.play("1>1").await;
    match bob.move_answer().await {
        ServerMessage::MoveRejected {
            code: ErrorCode::IllegalMove,
            reason: Some(reason),
            ..
        } => {
            assert_eq!(reason, MoveError::SameZone);
        }
        other => panic!("expected an illegal move, got {other:?}"),
    }

    // A spectator's move is refused.
    let mut eve = Client::hello(&server, "eve").await;
    eve.send(&ClientMessage::Spectate { code }).await;
    eve.recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await;
    eve.play(&line[0]).await;
    assert_eq!(eve.next_error().await, ErrorCode::NotAPlayer);

    // A move from a connection in no room.
    let mut zed = Client::hello(&server, "zed").await;
    zed.play(&line[0]).await;
    assert_eq!(zed.next_error().await, ErrorCode::NotInRoom);
    zed.send(&ClientMessage::StartEarly).await;
    assert_eq!(zed.next_error().await, ErrorCode::NotInRoom);

    // Through all of it Ada's race went on.
    for text in line.iter().take(3) {
        ada.play(text).await;
        assert!(matches!(
            ada.move_answer().await,
            ServerMessage::MoveAccepted { .. }
        ));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn moves_before_the_start_and_after_the_end_are_refused() {
    let server = start_server(|_| {}).await;
    let (_, line) = first_deal();
    let mut ada = Client::hello(&server, "ada").await;
    ada.create_room(2, RoomOptions::default()).await;
    ada.play(&line[0]).await;
    assert_eq!(ada.next_error().await, ErrorCode::RaceNotStarted);
    ada.send(&ClientMessage::Leave).await;
    ada.recv_until(|message| matches!(message, ServerMessage::Left { .. }))
        .await;

    let (mut ada, mut bob, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    ada.send(&ClientMessage::Resign).await;
    bob.send(&ClientMessage::Resign).await;
    ada.recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await;
    ada.play(&line[0]).await;
    assert_eq!(ada.next_error().await, ErrorCode::RaceOver);
    server.shutdown().await;
}

#[tokio::test]
async fn handshake_errors_close_the_connection() {
    let server = start_server(|_| {}).await;
    // Another protocol version.
    let mut old = Client::connect(&server).await;
    old.send(&ClientMessage::Hello {
        version: 0,
        name: "old".to_string(),
    })
    .await;
    let closed = old.closed().await;
    assert_eq!(
        closed.messages.first().and_then(error_code),
        Some(ErrorCode::UnsupportedVersion)
    );
    assert_eq!(
        closed.frame.map(|frame| frame.code),
        Some(CloseCode::Policy)
    );
    // Anything but hello first.
    let mut rude = Client::connect(&server).await;
    rude.send(&ClientMessage::Resign).await;
    let closed = rude.closed().await;
    assert_eq!(
        closed.messages.first().and_then(error_code),
        Some(ErrorCode::HelloRequired)
    );
    // A stale or made-up resume token.
    let mut guess = Client::hello(&server, "guess").await;
    guess
        .send(&ClientMessage::Resume {
            token: "00".repeat(24),
            last_seq: 0,
        })
        .await;
    assert_eq!(guess.next_error().await, ErrorCode::InvalidResumeToken);
    // A room that does not exist; bad room options.
    guess
        .send(&ClientMessage::JoinRoom {
            code: "QQQQQQ".to_string(),
        })
        .await;
    assert_eq!(guess.next_error().await, ErrorCode::RoomNotFound);
    guess
        .send(&ClientMessage::CreateRoom {
            game: patience_shared::game::GameKind::ThreeBlindMice,
            max_players: 9,
            public: true,
            options: RoomOptions::default(),
            bots: Vec::new(),
        })
        .await;
    assert_eq!(guess.next_error().await, ErrorCode::InvalidRequest);
    server.shutdown().await;
}

/// A close frame's code and reason, as the client read them.
fn close_of(closed: &Closed) -> Option<(CloseCode, String)> {
    closed
        .frame
        .as_ref()
        .map(|frame| (frame.code, frame.reason.as_str().to_string()))
}

#[tokio::test]
async fn every_first_message_but_hello_closes_with_the_code_it_reports() {
    let server = start_server(|_| {}).await;
    let hello = |version: u32| {
        protocol::encode(&ClientMessage::Hello {
            version,
            name: "ada".to_string(),
        })
    };
    let cases = [
        (
            "another version",
            Message::binary(hello(2)),
            ErrorCode::UnsupportedVersion,
        ),
        (
            "not hello",
            Message::binary(protocol::encode(&ClientMessage::Resign)),
            ErrorCode::HelloRequired,
        ),
        (
            "not MessagePack",
            Message::binary(vec![0xc1, 0xff]),
            ErrorCode::HelloRequired,
        ),
        (
            "an unknown type",
            Message::binary(protocol::encode(&json!({"type": "teleport"}))),
            ErrorCode::HelloRequired,
        ),
        (
            "a hello with a field missing",
            Message::binary(protocol::encode(&json!({"type": "hello", "version": 1}))),
            ErrorCode::HelloRequired,
        ),
        (
            "an integer type",
            Message::binary(protocol::encode(
                &json!({"type": 0, "version": 1, "name": "ada"}),
            )),
            ErrorCode::HelloRequired,
        ),
        (
            "a text frame",
            Message::text(r#"{"type":"hello","version":1,"name":"ada"}"#),
            ErrorCode::HelloRequired,
        ),
    ];
    for (what, first, code) in cases {
        let mut client = Client::connect(&server).await;
        client.send_frame(first).await;
        let closed = client.closed().await;
        let codes: Vec<_> = closed.messages.iter().filter_map(error_code).collect();
        assert_eq!(codes, [code], "{what}: {closed:?}");
        assert_eq!(
            close_of(&closed),
            Some((CloseCode::Policy, code.as_str().to_string())),
            "{what}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_hello_with_a_bad_name_may_be_said_again() {
    let server = start_server(|_| {}).await;
    let mut client = Client::connect(&server).await;
    for name in [
        "\u{202E}ada",
        "ada\u{2066}",
        "\u{200B}\u{200D}",
        " \u{3164} ",
        "\u{301}",
        "",
        // Invisible characters inside a name, a blank letter beside
        // visible ones, the server's mark for a repeated name.
        "a\u{200D}da",
        "a\u{200B}da",
        "\u{FEFF}ada",
        "ad\u{2060}a",
        "a\u{AD}da",
        "ada\u{E0041}",
        "ada\u{3164}",
        "ada (2)",
        "ada \u{FF08}\u{FF12}\u{FF09}",
    ] {
        client
            .send(&ClientMessage::Hello {
                version: 1,
                name: name.to_string(),
            })
            .await;
        // The very next message: a welcome here would be a name let in.
        let answer = client.recv().await;
        assert!(
            matches!(
                answer,
                ServerMessage::Error {
                    code: ErrorCode::InvalidRequest,
                    ..
                }
            ),
            "{name:?}: {answer:?}"
        );
    }
    client.say_hello("Zoe\u{308}").await;
    // The account path keeps the same rule, and its own stricter one.
    for name in ["\u{202E}ada", "ada\u{200F}", "\u{200B}ada"] {
        client
            .send(&ClientMessage::Register {
                name: name.to_string(),
            })
            .await;
        let answer = client.recv().await;
        assert!(
            matches!(
                answer,
                ServerMessage::Error {
                    code: ErrorCode::InvalidName,
                    ..
                }
            ),
            "{name:?}: {answer:?}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_game_this_server_lacks_is_game_unavailable_naming_the_games_it_deals() {
    let server = start_server(|_| {}).await;
    let mut ada = Client::hello(&server, "ada").await;
    let requests = [
        json!({"type": "create_room", "game": "klondike", "max_players": 2, "public": false}),
        json!({"type": "quick_race", "game": "klondike"}),
        json!({"type": "daily_play", "game": "klondike"}),
        json!({"type": "leaderboard", "game": "klondike"}),
        // A game of the protocol that this server (Three Blind Mice only)
        // does not deal.
        json!({"type": "create_room", "game": "indian", "max_players": 2, "public": false}),
        json!({"type": "quick_race", "game": "virginia-reel"}),
    ];
    for request in requests {
        ada.send_raw(protocol::encode(&request)).await;
        match ada.recv().await {
            ServerMessage::Error {
                code: ErrorCode::GameUnavailable,
                message,
            } => assert!(
                message.ends_with("it deals three-blind-mice"),
                "{request}: {message}"
            ),
            other => panic!("{request}: expected game_unavailable, got {other:?}"),
        }
    }
    // Ada is still served.
    ada.create_room(2, RoomOptions::default()).await;
    server.shutdown().await;
}

#[tokio::test]
async fn an_integer_type_is_malformed_not_a_variant_index() {
    let server = start_server(|_| {}).await;
    let mut ada = Client::hello(&server, "ada").await;
    // rmp-serde would read 5 as the sixth message, leave (not_in_room), and
    // 2 as join_room (room_not_found).
    for request in [
        json!({"type": 5}),
        json!({"type": 2, "code": "QQQQQQ"}),
        json!({"type": -1}),
    ] {
        ada.send_raw(protocol::encode(&request)).await;
        assert_eq!(
            ada.next_error().await,
            ErrorCode::MalformedMessage,
            "{request}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_ping_flood_is_rate_limited_like_a_message_flood() {
    let server = start_server(|config| {
        config.messages_per_second = 5;
        config.message_burst = 10;
    })
    .await;
    let mut flood = Client::hello(&server, "flood").await;
    flood
        .send_frames((0..50).map(|_| Message::Ping(Vec::new().into())))
        .await;
    let closed = flood.closed().await;
    assert!(
        closed
            .messages
            .iter()
            .any(|message| error_code(message) == Some(ErrorCode::RateLimited)),
        "{closed:?}"
    );
    assert_eq!(
        close_of(&closed),
        Some((CloseCode::Policy, "rate_limited".to_string()))
    );
    // Unsolicited pongs count the same.
    let mut pongs = Client::hello(&server, "pongs").await;
    pongs
        .send_frames((0..50).map(|_| Message::Pong(Vec::new().into())))
        .await;
    assert_eq!(
        close_of(&pongs.closed().await),
        Some((CloseCode::Policy, "rate_limited".to_string()))
    );
    Client::hello(&server, "calm").await;
    server.shutdown().await;
}

#[tokio::test]
async fn an_oversized_frame_closes_the_connection() {
    let server = start_server(|_| {}).await;
    let mut big = Client::hello(&server, "big").await;
    big.play(&"x".repeat(10_000)).await;
    let closed = big.closed().await;
    assert_eq!(
        closed.messages.first().and_then(error_code),
        Some(ErrorCode::MalformedMessage)
    );
    assert_eq!(closed.frame.map(|frame| frame.code), Some(CloseCode::Size));
    server.shutdown().await;
}

#[tokio::test]
async fn flooding_is_rate_limited_with_close_code_1008() {
    let server = start_server(|config| {
        config.messages_per_second = 5;
        config.message_burst = 10;
    })
    .await;
    let mut flood = Client::hello(&server, "flood").await;
    for _ in 0..50 {
        flood.play("s").await;
    }
    let closed = flood.closed().await;
    assert!(
        closed
            .messages
            .iter()
            .any(|message| error_code(message) == Some(ErrorCode::RateLimited)),
        "{closed:?}"
    );
    assert_eq!(
        close_of(&closed),
        Some((CloseCode::Policy, "rate_limited".to_string()))
    );
    // Others are still served.
    Client::hello(&server, "calm").await;
    server.shutdown().await;
}

#[tokio::test]
async fn connections_over_the_cap_are_refused() {
    let server = start_server(|config| config.max_connections = 2).await;
    let _first = Client::hello(&server, "one").await;
    let _second = Client::hello(&server, "two").await;
    let mut third = Client::connect(&server).await;
    let closed = third.closed().await;
    assert_eq!(
        closed.messages.first().and_then(error_code),
        Some(ErrorCode::ServerFull)
    );
    assert_eq!(closed.frame.map(|frame| frame.code), Some(CloseCode::Again));
    server.shutdown().await;
}

/// Under an open-files limit too low for `max_connections` (10,000 by
/// default) the server lowers its cap to what fits, so that the clients
/// beyond it are told `server_full` instead of hanging in a handshake the
/// kernel never lets it accept (`server/src/open_files.rs`).
#[tokio::test]
async fn under_a_low_open_files_limit_the_cap_fits_it_and_the_rest_are_told_server_full() {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let server =
        ServerProcess::start_with_open_files_limit(&directory.path().join("data"), 256, &[]);
    // 256 descriptors, less 64 kept for the server's own files, 64 for
    // sockets over the cap and 16 for the admin port: 112 connections.
    let mut held = Vec::new();
    for number in 0..112 {
        held.push(Client::hello_to(server.address, &format!("player{number}")).await);
    }
    let mut over = Client::connect_to(server.address).await;
    let closed = over.closed().await;
    assert_eq!(
        closed.messages.first().and_then(error_code),
        Some(ErrorCode::ServerFull),
        "{closed:?}"
    );
    drop(held);
}

/// Frames of a raw server-to-client byte stream: (opcode, payload).
fn frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while bytes.len() >= 2 {
        let opcode = bytes[0] & 0x0f;
        let (length, header) = match bytes[1] & 0x7f {
            126 if bytes.len() >= 4 => (usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), 4),
            127 => break,
            length => (usize::from(length), 2),
        };
        let Some(payload) = bytes.get(header..header + length) else {
            break;
        };
        frames.push((opcode, payload.to_vec()));
        bytes = &bytes[header + length..];
    }
    frames
}

#[tokio::test]
async fn silent_clients_are_dropped_by_the_heartbeat() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let server = start_server(|config| {
        config.heartbeat_interval_ms = 50;
        config.idle_timeout_ms = 200;
    })
    .await;
    // A raw client: it says hello, then never answers the server's pings
    // (a WebSocket library would answer them whenever it reads).
    let mut socket = tokio::net::TcpStream::connect(server.address())
        .await
        .expect("connects");
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        server.address()
    );
    socket
        .write_all(request.as_bytes())
        .await
        .expect("upgrade sent");
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = socket.read_u8().await.expect("the upgrade is answered");
        head.push(byte);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    let hello = protocol::encode(&ClientMessage::Hello {
        version: 1,
        name: "mute".to_string(),
    });
    // A masked binary frame with a zero mask: the payload goes as it is.
    let mut frame = vec![
        0x82,
        0x80 | u8::try_from(hello.len()).expect("short"),
        0,
        0,
        0,
        0,
    ];
    frame.extend_from_slice(&hello);
    socket.write_all(&frame).await.expect("hello sent");
    let mut body = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        socket.read_to_end(&mut body),
    );
    read.await
        .expect("the server closes a silent client")
        .expect("read");
    let frames = frames(&body);
    let messages: Vec<_> = frames
        .iter()
        .filter(|(opcode, _)| *opcode == 2)
        .filter_map(|(_, payload)| protocol::decode_server(payload).ok())
        .collect();
    assert!(
        matches!(messages.first(), Some(ServerMessage::Welcome { .. })),
        "{messages:?}"
    );
    assert_eq!(
        messages.last().and_then(error_code),
        Some(ErrorCode::IdleTimeout),
        "{messages:?}"
    );
    assert!(
        frames.iter().any(|(opcode, _)| *opcode == 9),
        "the server pinged"
    );
    assert!(
        frames.iter().any(|(opcode, _)| *opcode == 8),
        "the server sent a close frame"
    );
    server.shutdown().await;
}

/// Ada moves and takes back until `enough` holds of what she was sent.
async fn move_until(ada: &mut Client, first_move: &str, enough: impl Fn(&ServerMessage) -> bool) {
    let already = ada.received().len();
    for _ in 0..5_000 {
        ada.play(first_move).await;
        assert!(matches!(
            ada.move_answer().await,
            ServerMessage::MoveAccepted { .. }
        ));
        ada.send(&ClientMessage::Undo).await;
        assert!(matches!(
            ada.move_answer().await,
            ServerMessage::MoveAccepted { .. }
        ));
        if ada.received().iter().skip(already).any(&enough) {
            return;
        }
    }
    panic!("the slow client was never dropped");
}

fn slow_server(config: &mut patience_server::Config) {
    config.socket_send_buffer_bytes = Some(4096);
    config.outbox_capacity = 4;
    config.write_buffer_bytes = 1024;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_that_falls_behind_is_coalesced_to_the_latest_state() {
    let server = start_server(slow_server).await;
    let (_, line) = first_deal();
    // Open boards make each progress frame carry a board (about a
    // kilobyte), so the spectator's buffers fill in a few hundred moves
    // rather than thousands of count-only frames.
    let options = RoomOptions {
        undo_allowed: true,
        time_limit_ms: None,
        open_boards: true,
        best_of: None,
        rated: false,
    };
    let (mut ada, _bob, code, _, _) = two_player_race(&server, options).await;
    let lazy = lazy_spectator(&server, code, &mut ada).await;
    a_lazy_spectator_catches_up(&server, &mut ada, lazy, &line[0]).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_player_that_cannot_keep_up_is_disconnected_and_may_resume() {
    let server = start_server(slow_server).await;
    let (_, line) = first_deal();
    let options = RoomOptions {
        undo_allowed: true,
        time_limit_ms: None,
        open_boards: false,
        best_of: None,
        rated: false,
    };
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::connect_with_small_buffer(&server).await;
    bob.say_hello("bob").await;
    let (code, _) = ada.create_room(2, options).await;
    let (_, bob_token) = bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    let last_seq = bob.last_seq;
    move_until(&mut ada, &line[0], |message| {
        matches!(message, ServerMessage::RoomUpdate { room, .. } if room.players.get(1).is_some_and(|bob| !bob.connected))
    })
    .await;
    // Bob's connection was closed with too_slow; he comes back on a new one.
    let closed = bob.closed().await;
    assert!(
        closed
            .messages
            .iter()
            .any(|message| error_code(message) == Some(ErrorCode::TooSlow))
            || closed.frame.is_none(),
        "{closed:?}"
    );
    let mut bob = Client::hello(&server, "bob").await;
    bob.send(&ClientMessage::Resume {
        token: bob_token,
        last_seq,
    })
    .await;
    let resumed = bob.recv().await;
    assert!(
        matches!(resumed, ServerMessage::Resumed { seat: 1, .. }),
        "{resumed:?}"
    );
    // He missed more than his outbox holds: a snapshot instead of the events.
    let ServerMessage::Snapshot {
        race: Some(race), ..
    } = bob.recv().await
    else {
        panic!("expected a snapshot");
    };
    assert!(race.boards[0].progress.moves >= 2);
    bob.play(&line[0]).await;
    assert!(matches!(
        bob.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    server.shutdown().await;
}

/// A raw WebSocket whose upgrade the server has answered: it then never
/// sends a frame, and reads only when a test says so.
async fn silent_websocket(address: std::net::SocketAddr) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut socket = tokio::net::TcpStream::connect(address)
        .await
        .expect("connects");
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    socket
        .write_all(request.as_bytes())
        .await
        .expect("upgrade sent");
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(socket.read_u8().await.expect("the upgrade is answered"));
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    socket
}

/// Says hello as `name` until the server takes it: a client refused
/// `server_full` tries again at once, for at most `patience`.
async fn hello_when_there_is_room(
    server: &patience_server::Server,
    name: &str,
    patience: std::time::Duration,
) -> Client {
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let mut client = Client::connect(server).await;
        client
            .send(&ClientMessage::Hello {
                version: protocol::PROTOCOL_VERSION,
                name: name.to_string(),
            })
            .await;
        match client.recv().await {
            ServerMessage::Welcome { .. } => return client,
            ServerMessage::Error {
                code: ErrorCode::ServerFull,
                ..
            } => assert!(
                tokio::time::Instant::now() < deadline,
                "still server_full after {patience:?}"
            ),
            other => panic!("expected welcome or server_full, got {other:?}"),
        }
    }
}

/// Sockets that open a WebSocket and then neither send nor read are closed
/// at the hello deadline, and their slots freed then, not after the
/// farewell a kicked player gets to read its last frames (60 s here).
#[tokio::test]
async fn silent_sockets_free_their_slots_at_the_hello_deadline() {
    let server = start_server(|config| {
        config.max_connections = 4;
        config.handshake_timeout_ms = 300;
        config.farewell_timeout_ms = 60_000;
        config.heartbeat_interval_ms = 60_000;
    })
    .await;
    let mut silent = Vec::new();
    for _ in 0..4 {
        silent.push(silent_websocket(server.address()).await);
    }
    // A client now is over the cap.
    let mut early = Client::connect(&server).await;
    let closed = early.closed().await;
    assert_eq!(
        closed.messages.first().and_then(error_code),
        Some(ErrorCode::ServerFull)
    );
    // Once the silent sockets' hello deadline has passed, there is room
    // again: well within the farewell they would otherwise have kept.
    let late = hello_when_there_is_room(&server, "late", std::time::Duration::from_secs(20)).await;
    drop((late, silent));
    server.shutdown().await;
}

/// Request heads that never end count under the connection cap: the
/// sockets beyond it are answered `503` (a WebSocket `server_full`, close
/// code 1013) instead of waiting, unanswered, for the head timeout.
#[tokio::test]
async fn unfinished_request_heads_count_under_the_cap_and_the_rest_get_503() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let server = start_server(|config| {
        config.max_connections = 10;
        config.handshake_timeout_ms = 60_000;
    })
    .await;
    let mut unfinished = Vec::new();
    for _ in 0..20 {
        let mut socket = tokio::net::TcpStream::connect(server.address())
            .await
            .expect("connects");
        socket
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("half a head sent");
        unfinished.push(socket);
    }
    let mut answered = 0;
    for socket in &mut unfinished[10..] {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            socket.read_to_end(&mut answer),
        );
        read.await
            .expect("a socket over the cap is answered before the head timeout")
            .expect("read");
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{answer}"
        );
        answered += 1;
    }
    assert_eq!(answered, 10);
    // A WebSocket over the cap is told server_full, close code 1013.
    let mut over = Client::connect(&server).await;
    let closed = over.closed().await;
    assert_eq!(
        closed.messages.first().and_then(error_code),
        Some(ErrorCode::ServerFull),
        "{closed:?}"
    );
    assert_eq!(closed.frame.map(|frame| frame.code), Some(CloseCode::Again));
    drop(unfinished);
    server.shutdown().await;
}
