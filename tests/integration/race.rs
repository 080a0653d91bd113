//! Whole races against an in-process server on 127.0.0.1:0, with real
//! WebSocket clients: a win watched by a spectator, resign, stuck and
//! time-limit endings, quick race, start early, undo.

use std::collections::HashSet;

use patience_server::Server;
use patience_server::clock::Clock;
use patience_shared::any::AnyGame;
use patience_shared::conformance::TestRng;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, Phase, PlayerStatus, RaceResult, RoomOptions, ServerMessage,
};
use patience_shared::rules::Rules;
use patience_tests::{Client, DAY_START, first_deal, start_server, two_player_race};

/// Replays every move log of a result from the revealed deal, checking the
/// commitment first, as any client can.
pub fn check_result(result: &RaceResult, commitment: &str) -> Vec<AnyGame> {
    let reveal = &result.reveal;
    assert_eq!(
        protocol::commitment(reveal.game, reveal.seed, &reveal.salt),
        commitment,
        "the reveal matches the commitment sent at the start"
    );
    assert_eq!(reveal.salt.len(), 32);
    result
        .logs
        .iter()
        .map(|log| {
            let mut position = AnyGame::deal(reveal.game, reveal.seed);
            let mut history = Vec::new();
            for text in &log.moves {
                if text == protocol::UNDO_TEXT {
                    let (mv, outcome) = history.pop().expect("an undo follows a move");
                    position.undo(mv, &outcome);
                    continue;
                }
                let mv = position.parse_move(text).expect("logged moves parse");
                let outcome = position.apply(mv).expect("logged moves are legal");
                history.push((mv, outcome));
            }
            position
        })
        .collect()
}

async fn race_ended(client: &mut Client) -> RaceResult {
    match client
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await
    {
        ServerMessage::RaceEnded { result, .. } => result,
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn two_players_race_to_a_win_watched_by_a_spectator() {
    let server = start_server(|_| {}).await;
    let (seed, line) = first_deal();
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    let mut carol = Client::hello(&server, "carol").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    carol
        .send(&ClientMessage::Spectate { code: code.clone() })
        .await;
    match carol.recv().await {
        ServerMessage::RoomJoined {
            seat: None,
            resume_token: None,
            ..
        } => {}
        other => panic!("expected room_joined as spectator, got {other:?}"),
    }
    match carol.recv().await {
        ServerMessage::Snapshot {
            race: None, room, ..
        } => assert_eq!(room.phase, Phase::Lobby),
        other => panic!("expected a snapshot, got {other:?}"),
    }
    bob.join_room(&code).await;
    let commitment = ada.race_started().await;
    assert_eq!(bob.race_started().await, commitment);
    assert_eq!(carol.race_started().await, commitment);

    // Ada follows the solver's line; every card turned up is shown to her and
    // matches the true deal.
    let mut truth = AnyGame::deal(GameKind::ThreeBlindMice, seed);
    for (played, text) in line.iter().enumerate() {
        ada.play(text).await;
        let ServerMessage::MoveAccepted {
            effects,
            board,
            progress,
            ..
        } = ada.move_answer().await
        else {
            panic!("move {text} was refused");
        };
        let mv = truth.parse_move(text).expect("the line parses");
        let outcome = truth.apply(mv).expect("the line is legal");
        assert_eq!(effects, outcome.effects.to_vec());
        assert_eq!(board, truth.view());
        assert_eq!(progress.moves as usize, played + 1);
        let watched = carol
            .recv_until(|message| matches!(message, ServerMessage::Progress { .. }))
            .await;
        let ServerMessage::Progress {
            seat: 0,
            board,
            text,
            progress: watched_progress,
            ..
        } = watched
        else {
            panic!("expected Ada's progress, got {watched:?}");
        };
        assert_eq!(
            (board, text),
            (None, None),
            "the spectator sees Ada's progress only"
        );
        assert_eq!(watched_progress, progress);
    }
    assert!(truth.is_won());
    let finished = bob
        .recv_until(|message| matches!(message, ServerMessage::Finished { .. }))
        .await;
    assert!(matches!(
        finished,
        ServerMessage::Finished {
            seat: 0,
            status: PlayerStatus::Won,
            ..
        }
    ));

    // Bob goes on, then resigns: the race ends for everyone.
    bob.send(&ClientMessage::Resign).await;
    let result = race_ended(&mut bob).await;
    assert_eq!(race_ended(&mut ada).await, result);
    assert_eq!(race_ended(&mut carol).await, result);
    assert_eq!(result.reveal.seed, seed);
    let standings: Vec<_> = result
        .standings
        .iter()
        .map(|s| (s.rank, s.name.as_str(), s.status))
        .collect();
    assert_eq!(
        standings,
        [
            (1, "ada", PlayerStatus::Won),
            (2, "bob", PlayerStatus::Resigned)
        ]
    );
    assert_eq!(result.standings[0].progress.cards_home, 52);
    let replayed = check_result(&result, &commitment);
    assert!(replayed[0].is_won());
    assert_eq!(result.logs[0].moves, line);
    assert!(result.logs[1].moves.is_empty());
    server.shutdown().await;
}

/// A line of moves from the deal of `seed` to a position with no legal move,
/// found by random play that never revisits a position.
fn stuck_line(seed: u64) -> Vec<String> {
    let mut rng = TestRng::new(7);
    for _ in 0..10_000 {
        let mut position = AnyGame::deal(GameKind::ThreeBlindMice, seed);
        let mut seen = HashSet::from([position.clone()]);
        let mut line = Vec::new();
        let mut moves = Vec::new();
        loop {
            if position.is_stuck() {
                return line;
            }
            position.legal_moves(&mut moves);
            let fresh: Vec<_> = moves
                .iter()
                .filter(|&&mv| {
                    let mut next = position.clone();
                    next.apply(mv).is_ok() && !seen.contains(&next) && !next.is_won()
                })
                .copied()
                .collect();
            if fresh.is_empty() {
                break;
            }
            let mv = fresh[rng.below(fresh.len())];
            line.push(position.format_move(mv));
            position.apply(mv).expect("a legal move applies");
            seen.insert(position.clone());
        }
    }
    panic!("no stuck position found");
}

#[tokio::test]
async fn a_stuck_player_is_told_and_finishes_then_standings_rank_by_progress() {
    let server = start_server(|_| {}).await;
    let (seed, _) = first_deal();
    let line = stuck_line(seed);
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    for text in &line {
        ada.play(text).await;
        assert!(
            matches!(ada.move_answer().await, ServerMessage::MoveAccepted { .. }),
            "{text}"
        );
    }
    assert!(matches!(ada.recv().await, ServerMessage::Stuck { .. }));
    let finished = ada
        .recv_until(|message| matches!(message, ServerMessage::Finished { .. }))
        .await;
    assert!(matches!(
        finished,
        ServerMessage::Finished {
            seat: 0,
            status: PlayerStatus::Stuck,
            ..
        }
    ));
    // A stuck player can no longer move.
    ada.play("c1>1").await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveRejected {
            code: ErrorCode::RaceOver,
            ..
        }
    ));

    bob.send(&ClientMessage::Resign).await;
    let result = race_ended(&mut bob).await;
    let ranked: Vec<_> = result
        .standings
        .iter()
        .map(|s| (s.seat, s.status))
        .collect();
    // Neither won, and Ada has at least as many cards home as Bob (who
    // played none); with as many, Ada played to the end and Bob gave up.
    let expected = [(0, PlayerStatus::Stuck), (1, PlayerStatus::Resigned)];
    assert_eq!(ranked, expected);
    assert_eq!(result.logs[0].moves, line);
    server.shutdown().await;
}

/// A server on a virtual clock that the test moves, with no countdown.
async fn server_on(clock: &Clock) -> Server {
    let clock = clock.clone();
    start_server(move |config| {
        config.clock = clock;
        config.countdown_ms = 0;
    })
    .await
}

const LIMIT_MS: u64 = 60_000;

fn limited() -> RoomOptions {
    RoomOptions {
        undo_allowed: false,
        time_limit_ms: Some(LIMIT_MS),
        open_boards: false,
        best_of: None,
        rated: false,
    }
}

#[tokio::test]
async fn the_time_limit_ends_the_race_for_everyone_still_playing() {
    let clock = Clock::virtual_at(DAY_START);
    let server = server_on(&clock).await;
    let (_, line) = first_deal();
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, limited()).await;
    clock.advance(1_500);
    ada.play(&line[0]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    // However slow the machine, the race lasts exactly its limit, and
    // each racer's time is when their race ended: at the limit.
    clock.advance(LIMIT_MS);
    let result = race_ended(&mut bob).await;
    let mut statuses: Vec<_> = result
        .standings
        .iter()
        .map(|s| (s.seat, s.status, s.progress.moves, s.progress.elapsed_ms))
        .collect();
    statuses.sort_by_key(|(seat, _, _, _)| *seat);
    assert_eq!(
        statuses,
        [
            (0, PlayerStatus::OutOfTime, 1, LIMIT_MS),
            (1, PlayerStatus::OutOfTime, 0, LIMIT_MS)
        ]
    );
    assert_eq!(race_ended(&mut ada).await, result);
    ada.play(&line[1]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveRejected {
            code: ErrorCode::RaceOver,
            ..
        }
    ));
    server.shutdown().await;
}

#[tokio::test]
async fn a_move_read_at_the_time_limit_is_refused_even_before_the_room_ends_the_race() {
    let clock = Clock::virtual_at(DAY_START);
    let server = server_on(&clock).await;
    let (_, line) = first_deal();
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, limited()).await;
    // The clock reaches the limit and the move is sent at once: whether the
    // room's timer or the move comes first, the move is late.
    clock.advance(LIMIT_MS);
    ada.play(&line[0]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveRejected {
            code: ErrorCode::RaceOver,
            ..
        }
    ));
    let result = race_ended(&mut bob).await;
    assert!(
        result
            .standings
            .iter()
            .all(|s| s.status == PlayerStatus::OutOfTime && s.progress.moves == 0),
        "{result:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn undo_takes_back_a_move_when_the_room_allows_it() {
    let server = start_server(|_| {}).await;
    let (seed, line) = first_deal();
    let options = RoomOptions {
        undo_allowed: true,
        time_limit_ms: None,
        open_boards: false,
        best_of: None,
        rated: false,
    };
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, options).await;
    ada.send(&ClientMessage::Undo).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveRejected {
            code: ErrorCode::NothingToUndo,
            ..
        }
    ));
    ada.play(&line[0]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    ada.send(&ClientMessage::Undo).await;
    let ServerMessage::MoveAccepted {
        text,
        board,
        progress,
        ..
    } = ada.move_answer().await
    else {
        panic!("undo refused");
    };
    assert_eq!(text, "undo");
    assert_eq!(board, AnyGame::deal(GameKind::ThreeBlindMice, seed).view());
    assert_eq!(progress.moves, 2);
    // Bob sees the take-back as a third move (counts only: no text).
    let seen = bob
        .recv_until(|message| {
            matches!(message, ServerMessage::Progress { progress, .. } if progress.moves == 2)
        })
        .await;
    assert!(matches!(
        seen,
        ServerMessage::Progress {
            seat: 0,
            text: None,
            board: None,
            ..
        }
    ));

    // Without the option, undo is refused.
    let (mut cid, _, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    cid.send(&ClientMessage::Undo).await;
    assert!(matches!(
        cid.move_answer().await,
        ServerMessage::MoveRejected {
            code: ErrorCode::UndoNotAllowed,
            ..
        }
    ));
    let _ = (&mut bob, seed);
    server.shutdown().await;
}

#[tokio::test]
async fn quick_race_pairs_players_and_counts_down() {
    let server = start_server(|config| config.countdown_ms = 50).await;
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    ada.send(&ClientMessage::QuickRace {
        game: GameKind::ThreeBlindMice,
    })
    .await;
    let ServerMessage::RoomJoined {
        room,
        seat: Some(0),
        ..
    } = ada.recv().await
    else {
        panic!("ada gets a seat");
    };
    assert!(room.public);
    bob.send(&ClientMessage::QuickRace {
        game: GameKind::ThreeBlindMice,
    })
    .await;
    let ServerMessage::RoomJoined {
        room: bobs_room,
        seat: Some(1),
        ..
    } = bob.recv().await
    else {
        panic!("bob gets the second seat");
    };
    assert_eq!(bobs_room.code, room.code);
    let countdown = ada
        .recv_until(|message| matches!(message, ServerMessage::Countdown { .. }))
        .await;
    assert!(matches!(
        countdown,
        ServerMessage::Countdown {
            starts_in_ms: 50,
            ..
        }
    ));
    ada.race_started().await;
    bob.race_started().await;

    // Quick race for a game the server does not deal is refused.
    let mut cid = Client::hello(&server, "cid").await;
    cid.send(&ClientMessage::QuickRace {
        game: GameKind::Indian,
    })
    .await;
    assert!(matches!(
        cid.recv().await,
        ServerMessage::Error {
            code: ErrorCode::GameUnavailable,
            ..
        }
    ));
    server.shutdown().await;
}

#[tokio::test]
async fn only_the_owner_starts_early_and_seats_close_at_the_start() {
    let server = start_server(|_| {}).await;
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    let (code, _) = ada.create_room(4, RoomOptions::default()).await;
    bob.join_room(&code).await;
    bob.send(&ClientMessage::StartEarly).await;
    let refused = bob
        .recv_until(|message| matches!(message, ServerMessage::Error { .. }))
        .await;
    assert!(matches!(
        refused,
        ServerMessage::Error {
            code: ErrorCode::NotOwner,
            ..
        }
    ));
    ada.send(&ClientMessage::StartEarly).await;
    ada.race_started().await;

    let mut cid = Client::hello(&server, "cid").await;
    cid.send(&ClientMessage::JoinRoom { code: code.clone() })
        .await;
    assert!(matches!(
        cid.recv().await,
        ServerMessage::Error {
            code: ErrorCode::RaceAlreadyStarted,
            ..
        }
    ));
    // Spectating a race under way gives every racer's board.
    cid.send(&ClientMessage::Spectate {
        code: code.to_lowercase(),
    })
    .await;
    assert!(matches!(
        cid.recv().await,
        ServerMessage::RoomJoined { seat: None, .. }
    ));
    let ServerMessage::Snapshot {
        race: Some(race),
        room,
        ..
    } = cid.recv().await
    else {
        panic!("expected a snapshot with the race");
    };
    assert_eq!(room.phase, Phase::Racing);
    assert_eq!(race.boards.len(), 2);
    cid.send(&ClientMessage::JoinRoom {
        code: "ZZZZZZ".to_string(),
    })
    .await;
    assert_eq!(cid.next_error().await, ErrorCode::AlreadyInRoom);

    // Leaving a race resigns.
    bob.send(&ClientMessage::Leave).await;
    assert!(matches!(
        bob.recv_until(|message| matches!(message, ServerMessage::Left { .. }))
            .await,
        ServerMessage::Left { .. }
    ));
    let finished = ada
        .recv_until(|message| matches!(message, ServerMessage::Finished { .. }))
        .await;
    assert!(matches!(
        finished,
        ServerMessage::Finished {
            seat: 1,
            status: PlayerStatus::Resigned,
            ..
        }
    ));
    server.shutdown().await;
}

#[tokio::test]
async fn a_lobby_closes_when_its_last_player_leaves_and_spectators_are_told() {
    let server = start_server(|_| {}).await;
    let mut ada = Client::hello(&server, "ada").await;
    let mut carol = Client::hello(&server, "carol").await;
    let (code, _) = ada.create_room(3, RoomOptions::default()).await;
    carol
        .send(&ClientMessage::Spectate { code: code.clone() })
        .await;
    carol
        .recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await;
    ada.send(&ClientMessage::Leave).await;
    ada.recv_until(|message| matches!(message, ServerMessage::Left { .. }))
        .await;
    let left = carol
        .recv_until(|message| matches!(message, ServerMessage::Left { .. }))
        .await;
    assert_eq!(left, ServerMessage::Left { code: code.clone() });
    carol.send(&ClientMessage::JoinRoom { code }).await;
    assert_eq!(carol.next_error().await, ErrorCode::RoomNotFound);
    // Out of the closed room, Carol may open her own.
    carol.create_room(2, RoomOptions::default()).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_race_that_waits_for_the_solver_says_so_and_counts_down_once_dealt() {
    // A pool that keeps no deal ready: every race waits for its proof.
    let server = start_server(|config| config.deal_pool_size = 0).await;
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    for client in [&mut ada, &mut bob] {
        let phases: Vec<&str> = client
            .received()
            .iter()
            .filter_map(|message| match message {
                ServerMessage::RoomUpdate { room, .. } if room.phase == Phase::Dealing => {
                    Some("dealing")
                }
                ServerMessage::Countdown { .. } => Some("countdown"),
                ServerMessage::RaceStarted { .. } => Some("started"),
                _ => None,
            })
            .collect();
        assert_eq!(phases.first(), Some(&"dealing"), "{phases:?}");
        assert_eq!(
            phases.iter().filter(|&&phase| phase == "countdown").count(),
            1,
            "one countdown, once the deal is there: {phases:?}"
        );
        assert_eq!(phases.last(), Some(&"started"), "{phases:?}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_look_alike_name_is_told_apart_in_the_room() {
    let server = start_server(|_| {}).await;
    let mut first = Client::hello(&server, "ada").await;
    // The first letter is the Cyrillic а.
    let mut second = Client::hello(&server, "\u{430}da").await;
    let (code, _) = first.create_room(2, RoomOptions::default()).await;
    second.join_room(&code).await;
    let update = first
        .recv_until(|message| {
            matches!(message, ServerMessage::RoomUpdate { room, .. } if room.players.len() == 2)
        })
        .await;
    let ServerMessage::RoomUpdate { room, .. } = update else {
        unreachable!("waited for the update");
    };
    let names: Vec<&str> = room.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["ada", "\u{430}da (2)"]);
    server.shutdown().await;
}

#[tokio::test]
async fn two_players_with_one_name_are_told_apart_in_the_room_and_the_result() {
    let server = start_server(|_| {}).await;
    let (_, line) = first_deal();
    let mut first = Client::hello(&server, "ada").await;
    let mut second = Client::hello(&server, "ADA").await;
    let (code, _) = first.create_room(2, RoomOptions::default()).await;
    second.join_room(&code).await;
    let update = first
        .recv_until(|message| {
            matches!(message, ServerMessage::RoomUpdate { room, .. } if room.players.len() == 2)
        })
        .await;
    let ServerMessage::RoomUpdate { room, .. } = update else {
        unreachable!("waited for the update");
    };
    let names: Vec<&str> = room.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["ada", "ADA (2)"]);
    first.race_started().await;
    second.race_started().await;
    second.send(&ClientMessage::Resign).await;
    first.play_all(&line).await;
    let result = race_ended(&mut first).await;
    let mut named: Vec<(u8, &str)> = result
        .standings
        .iter()
        .map(|s| (s.seat, s.name.as_str()))
        .collect();
    named.sort_unstable();
    assert_eq!(named, [(0, "ada"), (1, "ADA (2)")]);
    server.shutdown().await;
}
