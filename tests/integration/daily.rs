//! Players, the daily deal, leaderboards and replays, against a real server
//! with a real database file.

use patience_server::Server;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, PlayerStatus, RoomOptions, ServerMessage,
};
use patience_tests::{
    Client, DAILY_SECRET, daily_deal, daily_secret_hex, first_deal, start_server, two_player_race,
};

async fn daily_server(data: &std::path::Path) -> Server {
    let data = data.to_path_buf();
    start_server(move |config| {
        config.data_dir = Some(data);
        config.daily_secret = Some(daily_secret_hex());
    })
    .await
}

/// A connected, registered player: the client and its token.
async fn player(server: &Server, name: &str) -> (Client, String) {
    let mut client = Client::hello(server, name).await;
    let (_, token) = client.register(name).await;
    (client, token)
}

async fn leaderboard(client: &mut Client, date: Option<&str>) -> protocol::LeaderboardPage {
    client
        .send(&ClientMessage::Leaderboard {
            game: GameKind::ThreeBlindMice,
            date: date.map(str::to_string),
            limit: None,
        })
        .await;
    match client.recv().await {
        ServerMessage::LeaderboardPage { page } => page,
        other => panic!("expected leaderboard_page, got {other:?}"),
    }
}

async fn replay(client: &mut Client, race_id: u64) -> Result<protocol::RaceRecord, ErrorCode> {
    client.send(&ClientMessage::Replay { race_id }).await;
    match client.recv().await {
        ServerMessage::ReplayData { race } => Ok(race),
        ServerMessage::Error { code, .. } => Err(code),
        other => panic!("expected replay_data or an error, got {other:?}"),
    }
}

async fn finished(client: &mut Client) -> protocol::DailyResult {
    match client
        .recv_until(|message| matches!(message, ServerMessage::DailyFinished { .. }))
        .await
    {
        ServerMessage::DailyFinished { result } => result,
        _ => unreachable!("recv_until returned another message"),
    }
}

#[tokio::test]
async fn names_are_validated_unique_and_tokens_are_checked() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = daily_server(data.path()).await;
    let (mut ada, token) = player(&server, "Ada").await;
    assert_eq!(token.len(), 48, "192 bits of secret");

    let mut other = Client::hello(&server, "someone").await;
    for (name, code) in [
        ("ada", ErrorCode::NameTaken),
        ("no spaces", ErrorCode::InvalidName),
        ("x", ErrorCode::InvalidName),
        ("9lives", ErrorCode::InvalidName),
    ] {
        other
            .send(&ClientMessage::Register {
                name: name.to_string(),
            })
            .await;
        assert_eq!(other.next_error().await, code, "{name}");
    }
    other
        .send(&ClientMessage::Authenticate {
            token: "0".repeat(48),
        })
        .await;
    assert_eq!(other.next_error().await, ErrorCode::InvalidToken);
    other.authenticate(&token).await;
    // A connection that is a player cannot register another.
    ada.send(&ClientMessage::Register {
        name: "ada2".to_string(),
    })
    .await;
    assert_eq!(ada.next_error().await, ErrorCode::InvalidRequest);
    server.shutdown().await;
}

#[tokio::test]
async fn a_daily_attempt_is_played_once_ranked_and_replayed_only_by_finishers() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = daily_server(data.path()).await;

    let mut guest = Client::hello(&server, "guest").await;
    guest
        .send(&ClientMessage::DailyPlay {
            game: GameKind::ThreeBlindMice,
        })
        .await;
    assert_eq!(guest.next_error().await, ErrorCode::NotAuthenticated);

    let (mut ada, _) = player(&server, "ada").await;
    let attempt = ada.daily_play().await;
    assert!(!attempt.resumed);
    assert!(attempt.moves.is_empty());
    let (seed, line) = daily_deal(&attempt.date);
    let salt_free_commitment = attempt.commitment.clone();
    assert_eq!(salt_free_commitment.len(), 64);

    // Daily deals allow no undo, and one board: seat 0.
    ada.send(&ClientMessage::Undo).await;
    assert_eq!(ada.next_error().await, ErrorCode::UndoNotAllowed);
    ada.send(&ClientMessage::Move {
        text: line[0].clone(),
        seat: Some(1),
    })
    .await;
    assert_eq!(ada.next_error().await, ErrorCode::NotYourBoard);
    // While the attempt is open, rooms are closed to this connection.
    ada.send(&ClientMessage::QuickRace {
        game: GameKind::ThreeBlindMice,
    })
    .await;
    assert_eq!(ada.next_error().await, ErrorCode::AlreadyInRoom);

    ada.play_all(&line).await;
    let result = finished(&mut ada).await;
    assert_eq!(result.status, PlayerStatus::Won);
    assert_eq!((result.rank, result.finishers), (1, 1));
    assert_eq!(result.progress.moves as usize, line.len());
    assert_eq!(result.progress.cards_home, 52);

    // One attempt per player, game and day.
    ada.send(&ClientMessage::DailyPlay {
        game: GameKind::ThreeBlindMice,
    })
    .await;
    assert_eq!(ada.next_error().await, ErrorCode::DailyAlreadyPlayed);

    // Bob resigns at once: ranked below.
    let (mut bob, _) = player(&server, "bob").await;
    let bob_attempt = bob.daily_play().await;
    assert_eq!(bob_attempt.commitment, attempt.commitment, "the same deal");
    assert_eq!(bob_attempt.board, attempt.board);
    // Bob can see where a win would rank: Ada's time is the one to beat.
    assert_eq!(bob_attempt.finishers, 1);
    assert_eq!(bob_attempt.winning_times_ms, [result.progress.elapsed_ms]);
    assert_eq!(bob_attempt.rank_if_won_at(0), 1);
    assert_eq!(bob_attempt.rank_if_won_at(result.progress.elapsed_ms), 2);

    // Cal has not finished: the day's replays are closed to Cal and to
    // anonymous connections, since they hold the seed.
    let (mut cal, _) = player(&server, "cal").await;
    assert_eq!(
        replay(&mut cal, result.race_id).await,
        Err(ErrorCode::ReplayNotYet)
    );
    assert_eq!(
        replay(&mut guest, result.race_id).await,
        Err(ErrorCode::ReplayNotYet)
    );

    bob.send(&ClientMessage::Resign).await;
    let bob_result = finished(&mut bob).await;
    assert_eq!(bob_result.status, PlayerStatus::Resigned);
    assert_eq!((bob_result.rank, bob_result.finishers), (2, 2));

    // Bob has finished: he may watch Ada's attempt, which replays to a win.
    let record = replay(&mut bob, result.race_id).await.expect("allowed");
    assert_eq!(record.daily.as_deref(), Some(attempt.date.as_str()));
    assert_eq!(record.result.reveal.seed, seed);
    assert_eq!(
        protocol::commitment(GameKind::ThreeBlindMice, seed, &record.result.reveal.salt),
        attempt.commitment,
        "the commitment sent at the start matches the stored deal"
    );
    assert_eq!(record.result.logs[0].moves, line);

    // The leaderboard: Ada then Bob; Cal sees no own row, Bob his.
    let page = leaderboard(&mut bob, None).await;
    let names: Vec<&str> = page.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada", "bob"]);
    assert_eq!((page.finishers, page.playing), (2, 0));
    assert!(!page.day_over);
    assert_eq!(page.reveal, None, "no seed while the day runs");
    assert_eq!(page.own.map(|row| row.rank), Some(2));
    assert_eq!(leaderboard(&mut cal, None).await.own, None);

    // A bad date is refused; a day nobody played is empty.
    cal.send(&ClientMessage::Leaderboard {
        game: GameKind::ThreeBlindMice,
        date: Some("2026-02-30".to_string()),
        limit: None,
    })
    .await;
    assert_eq!(cal.next_error().await, ErrorCode::InvalidRequest);
    cal.send(&ClientMessage::Leaderboard {
        game: GameKind::ThreeBlindMice,
        date: Some("9999-12-31".to_string()),
        limit: None,
    })
    .await;
    assert_eq!(cal.next_error().await, ErrorCode::InvalidRequest);
    let old = leaderboard(&mut cal, Some("2001-01-01")).await;
    assert!(old.day_over && old.rows.is_empty() && old.reveal.is_none());

    // Nothing secret went to Ada before her attempt ended: her frames never
    // carry the seed (as MessagePack's 64-bit integer) nor the stream's key.
    let seed_bytes: Vec<u8> = [0xcf].into_iter().chain(seed.to_be_bytes()).collect();
    for frame in &ada.frames {
        let Ok(message) = protocol::decode_server(frame) else {
            continue;
        };
        if matches!(message, ServerMessage::DailyFinished { .. }) {
            break;
        }
        assert!(
            !frame
                .windows(seed_bytes.len())
                .any(|window| window == seed_bytes),
            "the seed went out in {message:?}"
        );
        assert!(!frame.windows(32).any(|window| window == DAILY_SECRET));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_dropped_daily_attempt_resumes_where_it_stopped_and_a_second_connection_takes_it_over() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = daily_server(data.path()).await;
    let (mut ada, token) = player(&server, "ada").await;
    let attempt = ada.daily_play().await;
    let (_, line) = daily_deal(&attempt.date);
    let half = line.len() / 2;
    ada.play_all(&line[..half]).await;
    let board_before = match ada
        .frames
        .last()
        .map(|frame| protocol::decode_server(frame))
    {
        Some(Ok(ServerMessage::MoveAccepted { board, .. })) => board,
        other => panic!("expected the last move's answer, got {other:?}"),
    };

    // A second connection of the same player takes the attempt over; the
    // first is told why and closed.
    let mut again = Client::hello(&server, "ada's phone").await;
    again.authenticate(&token).await;
    let resumed = again.daily_play().await;
    assert!(resumed.resumed);
    assert_eq!(resumed.moves, line[..half]);
    assert_eq!(resumed.board, board_before);
    assert_eq!(resumed.progress.moves as usize, half);
    let closed = ada.closed().await;
    assert!(
        closed.messages.iter().any(|message| matches!(
            message,
            ServerMessage::Error {
                code: ErrorCode::Replaced,
                ..
            }
        )),
        "{closed:?}"
    );

    again.play_all(&line[half..]).await;
    assert_eq!(finished(&mut again).await.status, PlayerStatus::Won);
    server.shutdown().await;
}

#[tokio::test]
async fn a_raced_result_is_stored_before_it_is_announced_and_replays_to_anyone() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = daily_server(data.path()).await;
    let (_, line) = first_deal();
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    ada.play_all(&line).await;
    bob.send(&ClientMessage::Resign).await;
    let ended = ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await;
    let ServerMessage::RaceEnded { result, .. } = ended else {
        unreachable!("recv_until returned another message");
    };
    let race_id = result.race_id.expect("the race was stored");
    let mut stranger = Client::hello(&server, "stranger").await;
    let record = replay(&mut stranger, race_id)
        .await
        .expect("anyone may watch a race");
    assert_eq!(record.daily, None);
    assert_eq!(record.result, result);
    assert_eq!(
        replay(&mut stranger, race_id + 1000).await,
        Err(ErrorCode::RaceNotFound)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_attempt_runs_out_of_time_on_the_servers_clock_connected_or_not() {
    let data = tempfile::tempdir().expect("temp dir");
    let directory = data.path().to_path_buf();
    let server = start_server(move |config| {
        config.data_dir = Some(directory);
        config.daily_secret = Some(daily_secret_hex());
        config.daily_time_limit_ms = 300;
    })
    .await;
    // Bob opens his attempt and drops; his clock keeps running.
    let (mut bob, bob_token) = player(&server, "bob").await;
    bob.daily_play().await;
    bob.drop_connection();
    // Ada opens hers after Bob and stays: the server ends it when her time
    // is up, without a word from her.
    let (mut ada, _) = player(&server, "ada").await;
    ada.daily_play().await;
    let result = finished(&mut ada).await;
    assert_eq!(result.status, PlayerStatus::OutOfTime);
    assert_eq!(result.progress.elapsed_ms, 300);
    // Bob's time ran out before Ada's: coming back gets him no new attempt.
    let mut bob = Client::hello(&server, "bob").await;
    bob.authenticate(&bob_token).await;
    bob.send(&ClientMessage::DailyPlay {
        game: GameKind::ThreeBlindMice,
    })
    .await;
    assert_eq!(bob.next_error().await, ErrorCode::DailyAlreadyPlayed);
    let page = leaderboard(&mut bob, None).await;
    assert_eq!((page.finishers, page.playing), (2, 0));
    server.shutdown().await;
}
