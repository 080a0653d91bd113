//! Bots the server runs, raced by real clients, and sign-in codes that carry
//! an account from the terminal client to another connection and back.
//!
//! The bots' pace is lowered on these test servers (`bot_min_pace_ms`), so
//! a race against one ends in seconds; nothing waits on wall-clock time but
//! the test's own patience for a message. Codes expire on a virtual clock.

use patience_server::clock::Clock;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    BOT_PACE_MIN_MS, BotLevel, BotSeat, ClientMessage, ErrorCode, PlayerStatus, RoomOptions,
    SIGN_IN_CODE_MS, ServerMessage,
};
use patience_tests::{Client, ServerProcess, first_deal, spawn_patience, start_server};

/// A private room of two whose second seat is a server bot of `level`.
fn room_with_bot(level: BotLevel, pace_ms: Option<u32>) -> ClientMessage {
    ClientMessage::CreateRoom {
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: false,
        options: RoomOptions::default(),
        bots: vec![BotSeat { level, pace_ms }],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_races_a_server_bot_to_the_end_and_the_bot_is_marked_everywhere() {
    let server = start_server(|config| config.bot_min_pace_ms = 0).await;
    let (_, line) = first_deal();
    let mut ada = Client::hello(&server, "ada").await;
    ada.send(&room_with_bot(BotLevel::Easy, Some(10))).await;
    let ServerMessage::RoomJoined { room, seat, .. } = ada.recv().await else {
        panic!("room_joined expected");
    };
    assert_eq!(seat, Some(0), "the creator's seat comes first");
    let seated = ada
        .recv_until(|message| {
            matches!(message, ServerMessage::RoomUpdate { room, .. } if room.players.len() == 2)
        })
        .await;
    let ServerMessage::RoomUpdate { room: full, .. } = seated else {
        unreachable!("recv_until returned another message");
    };
    let marks: Vec<(u8, &str, Option<BotLevel>)> = full
        .players
        .iter()
        .map(|player| (player.seat, player.name.as_str(), player.bot))
        .collect();
    assert_eq!(
        marks,
        [(0, "ada", None), (1, "bot (easy)", Some(BotLevel::Easy))]
    );
    // A full room counts down by itself.
    ada.race_started().await;
    ada.play_all(&line).await;
    let ended = ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await;
    let ServerMessage::RaceEnded { result, .. } = ended else {
        unreachable!("recv_until returned another message");
    };
    let standing = |seat: u8| {
        result
            .standings
            .iter()
            .find(|standing| standing.seat == seat)
            .cloned()
            .expect("a standing per seat")
    };
    assert_eq!(
        (standing(0).status, standing(0).bot),
        (PlayerStatus::Won, None)
    );
    let bot = standing(1);
    assert_eq!(bot.bot, Some(BotLevel::Easy));
    assert_ne!(bot.status, PlayerStatus::Racing);
    let bot_moves = result
        .logs
        .iter()
        .find(|log| log.seat == 1)
        .map_or(0, |log| log.moves.len());
    assert!(bot_moves > 0, "the bot played: {result:?}");
    // Every room message ada got marked the bot's seat, never hers.
    for message in ada.received() {
        let info = match &message {
            ServerMessage::RoomJoined { room, .. }
            | ServerMessage::RoomUpdate { room, .. }
            | ServerMessage::Snapshot { room, .. } => room,
            _ => continue,
        };
        for player in &info.players {
            assert_eq!(player.bot.is_some(), player.seat == 1, "{message:?}");
        }
    }
    // The stored race keeps the mark.
    let mut viewer = Client::hello(&server, "viewer").await;
    viewer
        .send(&ClientMessage::Replay {
            race_id: result.race_id.expect("the race was stored"),
        })
        .await;
    match viewer.recv().await {
        ServerMessage::ReplayData { race } => assert_eq!(race.result, result),
        other => panic!("expected replay_data, got {other:?}"),
    }
    drop(room);
    server.shutdown().await;
}

#[tokio::test]
async fn bot_seats_are_private_bounded_and_leave_a_seat_to_the_creator() {
    let server = start_server(|config| config.max_bots = 2).await;
    let mut ada = Client::hello(&server, "ada").await;
    let refused =
        |public: bool, open_boards: bool, bots: usize, max_players: u8| ClientMessage::CreateRoom {
            game: GameKind::ThreeBlindMice,
            max_players,
            public,
            options: RoomOptions {
                open_boards,
                ..RoomOptions::default()
            },
            bots: vec![
                BotSeat {
                    level: BotLevel::Normal,
                    pace_ms: None
                };
                bots
            ],
        };
    for (request, code) in [
        (refused(true, false, 1, 2), ErrorCode::InvalidRequest),
        (refused(false, true, 1, 2), ErrorCode::InvalidRequest),
        (refused(false, false, 2, 2), ErrorCode::InvalidRequest),
        (refused(false, false, 3, 4), ErrorCode::TooManyRooms),
    ] {
        ada.send(&request).await;
        assert_eq!(ada.next_error().await, code, "{request:?}");
    }
    // Two bots fit the server's bound: the room of four waits for a person.
    ada.send(&refused(false, false, 2, 4)).await;
    let update = ada
        .recv_until(|message| {
            matches!(message, ServerMessage::RoomUpdate { room, .. } if room.players.len() == 3)
        })
        .await;
    let ServerMessage::RoomUpdate { room, .. } = update else {
        unreachable!("recv_until returned another message");
    };
    let names: Vec<&str> = room
        .players
        .iter()
        .map(|player| player.name.as_str())
        .collect();
    assert_eq!(names, ["ada", "bot (normal)", "bot (normal) (2)"]);
    // The server's two bots are seated: another room with one is refused.
    let mut bob = Client::hello(&server, "bob").await;
    bob.send(&room_with_bot(BotLevel::Easy, None)).await;
    assert_eq!(bob.next_error().await, ErrorCode::TooManyRooms);
    // Once ada leaves, no person is left: the bots leave too, and their
    // seats are the server's again.
    ada.send(&ClientMessage::Leave).await;
    ada.recv_until(|message| matches!(message, ServerMessage::Left { .. }))
        .await;
    let mut seated = false;
    for _ in 0..200 {
        bob.send(&room_with_bot(BotLevel::Easy, None)).await;
        match bob.recv().await {
            ServerMessage::RoomJoined { .. } => {
                seated = true;
                break;
            }
            ServerMessage::Error {
                code: ErrorCode::TooManyRooms,
                ..
            } => tokio::task::yield_now().await,
            other => panic!("expected room_joined or too_many_rooms, got {other:?}"),
        }
    }
    assert!(seated, "the bots' seats came back once they left");
    server.shutdown().await;
}

/// What `patience` printed, or why it failed.
fn run_patience(config: &std::path::Path, args: &[&str]) -> String {
    let output = spawn_patience(config, args)
        .wait_with_output()
        .expect("patience runs");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "patience {args:?}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_code_carries_an_account_from_the_terminal_and_back() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let directory = |name: &str| {
        std::env::temp_dir().join(format!("patience-sign-in-{name}-{}", std::process::id()))
    };
    let (terminal, other_terminal) = (directory("ada"), directory("bob"));
    for dir in [&terminal, &other_terminal] {
        let _ = std::fs::remove_dir_all(dir);
    }
    // The terminal registers ada and prints a code for her account.
    let blocking = |config: std::path::PathBuf, args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_patience(&config, &args)
        })
    };
    let args = |words: &[&str]| {
        words
            .iter()
            .map(|word| word.to_string())
            .chain(["--server".to_string(), url.clone()])
            .collect::<Vec<_>>()
    };
    blocking(terminal.clone(), args(&["register", "ada"]))
        .await
        .expect("patience register");
    let printed = blocking(terminal.clone(), args(&["sign-in-code"]))
        .await
        .expect("patience sign-in-code");
    let code = printed.lines().next().unwrap_or_default().to_string();
    assert_eq!(code.len(), 9, "two groups of four: {printed}");
    // Another connection (the page, say) redeems it, in lower case.
    let mut page = Client::hello(&server, "someone").await;
    page.send(&ClientMessage::RedeemSignInCode {
        code: code.to_lowercase(),
    })
    .await;
    let token = match page.recv().await {
        ServerMessage::SignedIn { name, token, .. } => {
            assert_eq!(name, "ada");
            token
        }
        other => panic!("expected signed_in, got {other:?}"),
    };
    assert_eq!(token.len(), 48);
    // Once only.
    let mut thief = Client::hello(&server, "thief").await;
    thief
        .send(&ClientMessage::RedeemSignInCode { code: code.clone() })
        .await;
    assert_eq!(thief.next_error().await, ErrorCode::InvalidSignInCode);
    // The page signs out: its token goes, the terminal's stays.
    page.send(&ClientMessage::SignOut).await;
    assert!(matches!(page.recv().await, ServerMessage::SignedOut));
    page.send(&ClientMessage::SignOut).await;
    assert_eq!(page.next_error().await, ErrorCode::NotAuthenticated);
    page.send(&ClientMessage::RequestSignInCode).await;
    assert_eq!(page.next_error().await, ErrorCode::NotAuthenticated);
    let mut again = Client::hello(&server, "again").await;
    again
        .send(&ClientMessage::Authenticate {
            token: token.clone(),
        })
        .await;
    assert_eq!(again.next_error().await, ErrorCode::InvalidToken);
    // The other way: a connection signed in as bob gives a code to a
    // terminal, which keeps a token of its own that works.
    let mut bob = Client::hello(&server, "bob").await;
    bob.register("bob").await;
    bob.send(&ClientMessage::RequestSignInCode).await;
    let code = match bob.recv().await {
        ServerMessage::SignInCode {
            code,
            expires_in_ms,
        } => {
            assert_eq!(expires_in_ms, SIGN_IN_CODE_MS);
            code
        }
        other => panic!("expected sign_in_code, got {other:?}"),
    };
    let printed = blocking(other_terminal.clone(), args(&["sign-in", &code]))
        .await
        .expect("patience sign-in");
    assert!(printed.starts_with("signed in as bob"), "{printed}");
    let printed = blocking(other_terminal.clone(), args(&["sign-in-code"]))
        .await
        .expect("patience sign-in-code with the new token");
    assert!(printed.contains("as bob on"), "{printed}");
    // Ada's terminal still signs in with its own token.
    blocking(terminal.clone(), args(&["sign-in-code"]))
        .await
        .expect("the terminal's token stays");
    server.shutdown().await;
    for dir in [&terminal, &other_terminal] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Asks for a code as the signed-in `client`.
async fn code_of(client: &mut Client) -> String {
    client.send(&ClientMessage::RequestSignInCode).await;
    match client.recv().await {
        ServerMessage::SignInCode { code, .. } => code,
        other => panic!("expected sign_in_code, got {other:?}"),
    }
}

/// Redeems `code` on a fresh connection: the name signed in as, or the
/// error.
async fn redeem(server: &patience_server::Server, code: &str) -> Result<String, ErrorCode> {
    let mut client = Client::hello(server, "guest").await;
    client
        .send(&ClientMessage::RedeemSignInCode {
            code: code.to_string(),
        })
        .await;
    match client.recv().await {
        ServerMessage::SignedIn { name, .. } => Ok(name),
        ServerMessage::Error { code, .. } => Err(code),
        other => panic!("expected signed_in or an error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_code_expires_after_ten_minutes_of_the_servers_clock_and_a_new_one_voids_the_old() {
    let clock = Clock::virtual_at(1_796_083_200_000);
    let server = start_server(|config| config.clock = clock.clone()).await;
    let mut ada = Client::hello(&server, "ada").await;
    ada.register("ada").await;
    let code = code_of(&mut ada).await;
    clock.advance(SIGN_IN_CODE_MS - 1);
    assert_eq!(redeem(&server, &code).await, Ok("ada".to_string()));
    let code = code_of(&mut ada).await;
    clock.advance(SIGN_IN_CODE_MS);
    assert_eq!(
        redeem(&server, &code).await,
        Err(ErrorCode::InvalidSignInCode)
    );
    let old = code_of(&mut ada).await;
    let new = code_of(&mut ada).await;
    assert_eq!(
        redeem(&server, &old).await,
        Err(ErrorCode::InvalidSignInCode)
    );
    assert_eq!(redeem(&server, &new).await, Ok("ada".to_string()));
    server.shutdown().await;
}

#[tokio::test]
async fn an_address_that_tries_too_many_codes_is_refused_even_the_right_one() {
    let server = start_server(|config| {
        config.sign_in_attempt_burst = 3;
        config.sign_in_attempts_per_hour = 1;
    })
    .await;
    let mut ada = Client::hello(&server, "ada").await;
    ada.register("ada").await;
    let code = code_of(&mut ada).await;
    for wrong in ["K7PQ-3M9X", "not a code", "AAAA-AAAA"] {
        assert_eq!(
            redeem(&server, wrong).await,
            Err(ErrorCode::InvalidSignInCode),
            "{wrong}"
        );
    }
    let mut client = Client::hello(&server, "guest").await;
    client.send(&ClientMessage::RedeemSignInCode { code }).await;
    match client.recv().await {
        ServerMessage::Error {
            code: ErrorCode::SignInLimited,
            message,
        } => assert!(message.contains("try again in 60 minutes"), "{message}"),
        other => panic!("expected sign_in_limited, got {other:?}"),
    }
    server.shutdown().await;
}

/// A server restarted mid-race puts its bots back in their seats: the
/// race its player takes back is not one against an empty seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_plays_on_after_the_server_restarts_mid_race() {
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");
    let server = ServerProcess::start(&data, &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    ada.send(&room_with_bot(BotLevel::Easy, Some(BOT_PACE_MIN_MS)))
        .await;
    let ServerMessage::RoomJoined {
        resume_token: Some(token),
        ..
    } = ada.recv().await
    else {
        panic!("room_joined with a token expected: {:?}", ada.received());
    };
    ada.race_started().await;
    assert!(server.terminate(), "SIGTERM stops the server cleanly");
    drop(ada);

    let server = ServerProcess::start(&data, &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    ada.send(&ClientMessage::Resume { token, last_seq: 0 })
        .await;
    assert!(
        matches!(ada.recv().await, ServerMessage::Resumed { seat: 0, .. }),
        "ada takes her seat back: {:?}",
        ada.received()
    );
    // The bot's seat is played again: it moves (or finishes) after the
    // restart, with no person doing anything for it.
    let bot_moved = ada
        .recv_until(|message| {
            matches!(
                message,
                ServerMessage::Progress { seat: 1, .. } | ServerMessage::Finished { seat: 1, .. }
            )
        })
        .await;
    assert!(
        matches!(
            bot_moved,
            ServerMessage::Progress { seat: 1, .. } | ServerMessage::Finished { seat: 1, .. }
        ),
        "{bot_moved:?}"
    );
    // It is the bot still, and connected.
    let standing = ada
        .received()
        .into_iter()
        .rev()
        .find_map(|message| match message {
            ServerMessage::Resumed { room, .. }
            | ServerMessage::RoomUpdate { room, .. }
            | ServerMessage::Snapshot { room, .. } => {
                room.players.into_iter().find(|player| player.seat == 1)
            }
            _ => None,
        })
        .expect("the room was shown after the restart");
    assert_eq!(standing.bot, Some(BotLevel::Easy));
    assert!(standing.connected, "the bot's seat is taken: {standing:?}");
    server.kill();
}
