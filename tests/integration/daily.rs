//! Players, the daily deal, leaderboards and replays, against a real server
//! with a real database file.

use patience_server::Server;
use patience_server::clock::Clock;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, PlayerStatus, RoomOptions, ServerMessage, Unranked,
};
use patience_tests::{
    Client, DAILY_SECRET, DAY, DAY_BEFORE_NOON, DAY_MORNING, HOUR, NEXT_DAY, daily_deal,
    daily_secret_hex, first_deal, start_server, two_player_race,
};

async fn daily_server(data: &std::path::Path) -> Server {
    let data = data.to_path_buf();
    start_server(move |config| {
        config.data_dir = Some(data);
        config.daily_secret = Some(daily_secret_hex());
    })
    .await
}

/// A daily server on `clock`, with the settings `tweak` changes.
pub(crate) async fn daily_server_with(
    data: &std::path::Path,
    clock: &Clock,
    tweak: impl FnOnce(&mut patience_server::Config),
) -> Server {
    let data = data.to_path_buf();
    let clock = clock.clone();
    start_server(move |config| {
        config.data_dir = Some(data);
        config.daily_secret = Some(daily_secret_hex());
        config.clock = clock;
        tweak(config);
    })
    .await
}

/// Plays `moves` a second apart on the virtual clock: a person's pace.
pub(crate) async fn play_paced(client: &mut Client, clock: &Clock, moves: &[String]) {
    for text in moves {
        clock.advance(1_000);
        client.play_all(std::slice::from_ref(text)).await;
    }
}

/// The asker's own attempt, as `attempt_replay`.
async fn own_replay(client: &mut Client, race_id: u64) -> protocol::OwnAttempt {
    client.send(&ClientMessage::Replay { race_id }).await;
    match client.recv().await {
        ServerMessage::AttemptReplay { attempt } => attempt,
        other => panic!("expected attempt_replay, got {other:?}"),
    }
}

/// Checks that no frame carries the seed (as MessagePack's 64-bit integer
/// or its decimal digits), the salt, or the daily secret.
fn assert_no_secret(name: &str, frames: &[Vec<u8>], seed: u64, salt: &str) {
    let needles: [(&str, Vec<u8>); 4] = [
        (
            "the seed",
            [0xcf].into_iter().chain(seed.to_be_bytes()).collect(),
        ),
        ("the seed in decimal", seed.to_string().into_bytes()),
        ("the salt", salt.as_bytes().to_vec()),
        ("the daily secret", DAILY_SECRET.to_vec()),
    ];
    assert!(!frames.is_empty(), "{name} got frames");
    for frame in frames {
        for (what, needle) in &needles {
            assert!(
                !frame.windows(needle.len()).any(|window| window == needle),
                "{what} went to {name} in {:?}",
                protocol::decode_server(frame)
            );
        }
    }
}

/// A connected, registered player: the client and its token.
pub(crate) async fn player(server: &Server, name: &str) -> (Client, String) {
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

pub(crate) async fn finished(client: &mut Client) -> protocol::DailyResult {
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
async fn a_daily_attempt_is_played_once_ranked_and_replayed_by_others_once_the_day_closes() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server = daily_server_with(data.path(), &clock, |_| {}).await;

    let mut guest = Client::hello(&server, "guest").await;
    guest
        .send(&ClientMessage::DailyPlay {
            game: GameKind::ThreeBlindMice,
        })
        .await;
    assert_eq!(guest.next_error().await, ErrorCode::NotAuthenticated);

    // Accounts registered the day before: they rank on the day.
    let (mut ada, _) = player(&server, "ada").await;
    let (mut bob, _) = player(&server, "bob").await;
    let (mut cal, _) = player(&server, "cal").await;
    clock.set(DAY_MORNING);

    let attempt = ada.daily_play().await;
    assert!(!attempt.resumed);
    assert!(attempt.moves.is_empty());
    assert_eq!(attempt.date, DAY);
    let (seed, line) = daily_deal(&attempt.date);
    assert_eq!(attempt.commitment.len(), 64);

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

    play_paced(&mut ada, &clock, &line).await;
    let result = finished(&mut ada).await;
    assert_eq!(result.status, PlayerStatus::Won);
    assert_eq!((result.rank, result.finishers), (1, 1));
    assert_eq!(result.unranked, None);
    assert_eq!(result.progress.moves as usize, line.len());
    assert_eq!(result.progress.cards_home, 52);

    // One attempt per player, game and day.
    ada.send(&ClientMessage::DailyPlay {
        game: GameKind::ThreeBlindMice,
    })
    .await;
    assert_eq!(ada.next_error().await, ErrorCode::DailyAlreadyPlayed);

    // Bob resigns at once: ranked below.
    let bob_attempt = bob.daily_play().await;
    assert_eq!(bob_attempt.commitment, attempt.commitment, "the same deal");
    assert_eq!(bob_attempt.board, attempt.board);
    // Bob can see where a win would rank: Ada's time is the one to beat.
    assert_eq!(bob_attempt.finishers, 1);
    assert_eq!(bob_attempt.winning_times_ms, [result.progress.elapsed_ms]);
    assert_eq!(bob_attempt.rank_if_won_at(0), 1);
    assert_eq!(bob_attempt.rank_if_won_at(result.progress.elapsed_ms), 2);
    bob.send(&ClientMessage::Resign).await;
    let bob_result = finished(&mut bob).await;
    assert_eq!(bob_result.status, PlayerStatus::Resigned);
    assert_eq!((bob_result.rank, bob_result.finishers), (2, 2));

    // While the day runs, nobody watches anyone else's attempt: not Cal
    // (who has not played), not a guest, not Bob (who has finished).
    for client in [&mut cal, &mut guest, &mut bob] {
        assert_eq!(
            replay(client, result.race_id).await,
            Err(ErrorCode::ReplayNotYet)
        );
    }
    // Ada gets her own attempt as she saw it: views, no seed.
    let own = own_replay(&mut ada, result.race_id).await;
    assert_eq!(own.moves, line);
    assert_eq!(own.boards.len(), line.len() + 1);
    assert_eq!(own.boards[0], attempt.board, "the deal as dealt");
    assert_eq!((own.status, own.progress), (result.status, result.progress));
    let last_board = match ada
        .received()
        .iter()
        .rev()
        .find_map(|message| match message {
            ServerMessage::MoveAccepted { board, .. } => Some(board.clone()),
            _ => None,
        }) {
        Some(board) => board,
        None => panic!("ada's moves were answered"),
    };
    assert_eq!(own.boards.last(), Some(&last_board));

    // The leaderboard: Ada then Bob; Cal sees no own row, Bob his.
    let page = leaderboard(&mut bob, None).await;
    let names: Vec<&str> = page.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada", "bob"]);
    assert_eq!((page.finishers, page.unranked, page.playing), (2, 0, 0));
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
        date: Some("2026-12-02".to_string()),
        limit: None,
    })
    .await;
    assert_eq!(cal.next_error().await, ErrorCode::InvalidRequest);
    let old = leaderboard(&mut cal, Some("2001-01-01")).await;
    assert!(old.day_over && old.rows.is_empty() && old.reveal.is_none());

    // The day is over, but an attempt begun in its last moment could still
    // run: still closed to others.
    clock.set(NEXT_DAY + 1);
    assert_eq!(
        replay(&mut bob, result.race_id).await,
        Err(ErrorCode::ReplayNotYet)
    );
    assert_eq!(leaderboard(&mut bob, Some(DAY)).await.reveal, None);
    let before_close: Vec<(&str, usize)> = [("ada", &ada), ("bob", &bob), ("cal", &cal)]
        .into_iter()
        .map(|(name, client)| (name, client.frames.len()))
        .collect();

    // Closed: the seed, the replays and the reveal are public.
    clock.set(NEXT_DAY + HOUR);
    let record = replay(&mut bob, result.race_id).await.expect("allowed");
    assert_eq!(record.daily.as_deref(), Some(DAY));
    assert_eq!(record.result.reveal.seed, seed);
    let salt = record.result.reveal.salt.clone();
    assert_eq!(
        protocol::commitment(GameKind::ThreeBlindMice, seed, &salt),
        attempt.commitment,
        "the commitment sent at the start matches the stored deal"
    );
    assert_eq!(record.result.logs[0].moves, line);
    let page = leaderboard(&mut cal, Some(DAY)).await;
    assert!(page.day_over);
    assert_eq!(page.reveal.map(|reveal| reveal.seed), Some(seed));
    match replay(&mut ada, result.race_id).await {
        Ok(record) => assert_eq!(record.result.reveal.seed, seed),
        Err(code) => panic!("ada's replay of a closed day: {code:?}"),
    }

    // Nothing secret went to anyone before the close: no frame carries
    // the seed (as MessagePack's 64-bit integer or in decimal), the salt,
    // or the stream's key.
    for (name, count) in before_close {
        let client = match name {
            "ada" => &ada,
            "bob" => &bob,
            _ => &cal,
        };
        assert_no_secret(name, &client.frames[..count], seed, &salt);
    }
    assert_no_secret("guest", &guest.frames, seed, &salt);
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
    // Both accounts are of the day: finished, unranked.
    let page = leaderboard(&mut bob, None).await;
    assert_eq!((page.finishers, page.unranked, page.playing), (0, 2, 0));
    server.shutdown().await;
}

/// The attempt's time limit is a deadline on the server's clock, which
/// wakes the attempt: a virtual clock moved past the limit ends it without
/// a word from its player, nor a ping.
#[tokio::test]
async fn an_attempt_runs_out_of_time_when_the_servers_virtual_clock_passes_its_limit() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_MORNING);
    // No ping in the meantime, nor any other timer of the connection's:
    // nothing but the clock wakes it.
    let server = daily_server_with(data.path(), &clock, |config| {
        config.heartbeat_interval_ms = 10 * HOUR;
        config.idle_timeout_ms = 20 * HOUR;
        config.handshake_timeout_ms = 10 * HOUR;
    })
    .await;
    let (mut ada, _) = player(&server, "ada").await;
    ada.daily_play().await;
    clock.advance(HOUR);
    let result = finished(&mut ada).await;
    assert_eq!(result.status, PlayerStatus::OutOfTime);
    assert_eq!(result.progress.elapsed_ms, HOUR);
    server.shutdown().await;
}

#[tokio::test]
async fn the_throwaway_account_attack_fails_at_every_step() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server = daily_server_with(data.path(), &clock, |config| {
        config.registration_burst = 3;
        config.registrations_per_hour = 2;
    })
    .await;
    // Ada, registered the day before, plays the day honestly.
    let (mut ada, _) = player(&server, "ada").await;
    clock.set(DAY_MORNING);
    let attempt = ada.daily_play().await;
    assert_eq!(
        attempt.unranked, None,
        "an account older than the day ranks"
    );
    let (seed, line) = daily_deal(&attempt.date);
    play_paced(&mut ada, &clock, &line[..line.len() / 2]).await;
    ada.send(&ClientMessage::Resign).await;
    let ada_result = finished(&mut ada).await;

    // Accounts from one address: a burst of three, then refused (and the
    // connection stays open).
    let (mut scout, _) = player(&server, "scout").await;
    let (mut racer, _) = player(&server, "racer").await;
    player(&server, "spare").await;
    let mut third = Client::hello(&server, "third").await;
    for name in ["third", "fourth"] {
        third
            .send(&ClientMessage::Register {
                name: name.to_string(),
            })
            .await;
        match third.recv().await {
            ServerMessage::Error { code, .. } => {
                assert_eq!(code, ErrorCode::RegistrationLimited, "{name}");
                assert!(!code.is_fatal());
            }
            other => panic!("expected registration_limited, got {other:?}"),
        }
    }

    // The scout opens the daily and resigns at move 0: its result is
    // unranked, its account being of the day.
    let scouted = scout.daily_play().await;
    assert_eq!(
        scouted.unranked,
        Some(Unranked::NewAccount),
        "told so when the attempt opens"
    );
    scout.send(&ClientMessage::Resign).await;
    let scout_result = finished(&mut scout).await;
    assert_eq!(scout_result.unranked, Some(Unranked::NewAccount));
    // Its replay is what it saw: the deal as dealt, face-down cards hidden.
    let own = own_replay(&mut scout, scout_result.race_id).await;
    assert!(own.moves.is_empty());
    assert_eq!(own.boards, std::slice::from_ref(&scouted.board));
    let hidden: u32 = own.boards[0]
        .zones
        .iter()
        .map(|zone| u32::from(zone.hidden))
        .sum();
    assert!(hidden > 0, "the deal has face-down cards, and they stay so");
    // Ada's attempt, finished, is refused; so is the scout's to the racer.
    assert_eq!(
        replay(&mut scout, ada_result.race_id).await,
        Err(ErrorCode::ReplayNotYet)
    );
    assert_eq!(
        replay(&mut racer, scout_result.race_id).await,
        Err(ErrorCode::ReplayNotYet)
    );
    // The leaderboard shows results, and the scout's own row is unranked.
    let page = leaderboard(&mut scout, None).await;
    assert_eq!(page.reveal, None);
    let names: Vec<&str> = page.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada"]);
    assert_eq!((page.finishers, page.unranked), (1, 1));
    assert_eq!(
        page.own.and_then(|row| row.unranked),
        Some(Unranked::NewAccount)
    );

    // Even with the winning line, at a person's pace, a new account wins
    // unranked: it sees where it would be, and the ranking is Ada's.
    racer.daily_play().await;
    play_paced(&mut racer, &clock, &line).await;
    let won = finished(&mut racer).await;
    assert_eq!(won.status, PlayerStatus::Won);
    assert_eq!(
        (won.rank, won.finishers, won.unranked),
        (1, 1, Some(Unranked::NewAccount))
    );
    let page = leaderboard(&mut racer, None).await;
    assert_eq!(page.rows[0].name, "ada");
    assert_eq!(page.own.map(|row| row.rank), Some(1));

    assert_eq!(
        server
            .metrics()
            .registrations_refused
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    // An hour later the address may register again.
    clock.advance(HOUR);
    third.register("third").await;

    // Not one frame to the attacker's connections named the deal.
    let salt = server_salt(&server, &clock, ada_result.race_id).await;
    for (name, client) in [("scout", &scout), ("racer", &racer), ("third", &third)] {
        assert_no_secret(name, &client.frames, seed, &salt);
    }
    server.shutdown().await;
}

/// The day's salt, read back once the day is closed (the clock moves on).
async fn server_salt(server: &Server, clock: &Clock, race_id: u64) -> String {
    clock.set(NEXT_DAY + HOUR);
    let mut reader = Client::hello(server, "reader").await;
    match replay(&mut reader, race_id).await {
        Ok(record) => record.result.reveal.salt,
        Err(code) => panic!("the closed day's replay: {code:?}"),
    }
}

#[tokio::test]
async fn moves_faster_than_a_person_plays_are_marked_for_review_and_a_paced_attempt_ranks() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server = daily_server_with(data.path(), &clock, |_| {}).await;
    let (mut bot, _) = player(&server, "bot").await;
    let (mut ada, _) = player(&server, "ada").await;
    clock.set(DAY_MORNING);

    // The bot sends the line back to back: no time passes between moves.
    let attempt = bot.daily_play().await;
    let (_, line) = daily_deal(&attempt.date);
    assert!(line.len() >= 20, "the line is long enough to judge");
    bot.play_all(&line).await;
    let fast = finished(&mut bot).await;
    assert_eq!(fast.status, PlayerStatus::Won);
    assert_eq!(fast.unranked, Some(Unranked::Review));
    assert_eq!((fast.rank, fast.finishers), (1, 0));

    // Ada plays the same line a second a move: she ranks first.
    ada.daily_play().await;
    play_paced(&mut ada, &clock, &line).await;
    let paced = finished(&mut ada).await;
    assert_eq!(paced.unranked, None);
    assert_eq!((paced.rank, paced.finishers), (1, 1));

    let page = leaderboard(&mut bot, None).await;
    let names: Vec<&str> = page.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada"]);
    assert_eq!((page.finishers, page.unranked), (1, 1));
    assert_eq!(
        page.own.map(|row| (row.rank, row.unranked)),
        Some((1, Some(Unranked::Review)))
    );
    server.shutdown().await;
}

/// Sends `register` as `name` and returns the error code it is refused with.
async fn refused_registration(client: &mut Client, name: &str) -> ErrorCode {
    client
        .send(&ClientMessage::Register {
            name: name.to_string(),
        })
        .await;
    match client.recv().await {
        ServerMessage::Error { code, .. } => code,
        other => panic!("expected {name} refused, got {other:?}"),
    }
}

#[tokio::test]
async fn the_registration_limit_outlives_a_restart() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_MORNING);
    let limited = |config: &mut patience_server::Config| {
        config.registration_burst = 2;
        config.registrations_per_hour = 1;
    };
    let server = daily_server_with(data.path(), &clock, limited).await;
    player(&server, "first").await;
    player(&server, "second").await;
    let mut third = Client::hello(&server, "third").await;
    assert_eq!(
        refused_registration(&mut third, "third").await,
        ErrorCode::RegistrationLimited
    );
    server.shutdown().await;

    // The same data, a minute later: the address is still exhausted.
    clock.advance(60_000);
    let server = daily_server_with(data.path(), &clock, limited).await;
    let mut again = Client::hello(&server, "third").await;
    assert_eq!(
        refused_registration(&mut again, "third").await,
        ErrorCode::RegistrationLimited
    );
    // An hour refills one registration, as it would have without a restart.
    clock.advance(HOUR);
    again.register("third").await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_name_that_looks_like_a_registered_one_is_taken() {
    let data = tempfile::tempdir().expect("temp dir");
    let server = daily_server(data.path()).await;
    player(&server, "modern").await;
    player(&server, "Bob").await;
    for look_alike in ["rnodern", "MODERN", "B0b", "bob"] {
        let mut client = Client::hello(&server, look_alike).await;
        assert_eq!(
            refused_registration(&mut client, look_alike).await,
            ErrorCode::NameTaken,
            "{look_alike}"
        );
    }
    player(&server, "mode").await;
    server.shutdown().await;
}
