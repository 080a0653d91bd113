//! The bot's view of its seat, fed frames as the room sends them; its
//! pace and thinking limit.

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ErrorCode, PlayerInfo, Progress, RaceSnapshot, RoomInfo, RoomOptions, SeatBoard,
};
use patience_shared::rules::Rules as _;

use super::*;

fn board(seed: u64) -> View {
    AnyGame::deal(GameKind::ThreeBlindMice, seed).view()
}

fn room(phase: Phase, bots: &[Option<BotLevel>]) -> RoomInfo {
    RoomInfo {
        code: "K7PQ3M".to_string(),
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: false,
        options: RoomOptions::default(),
        owner: Some(0),
        phase,
        players: (0u8..)
            .zip(bots)
            .map(|(seat, bot)| PlayerInfo {
                seat,
                name: format!("seat {seat}"),
                connected: true,
                status: PlayerStatus::Waiting,
                bot: *bot,
            })
            .collect(),
        spectators: 0,
        series: None,
    }
}

fn started(seed: u64) -> ServerMessage {
    ServerMessage::RaceStarted {
        seq: 3,
        commitment: String::new(),
        board: board(seed),
        time_limit_ms: 60_000,
    }
}

fn accepted(seed: u64) -> ServerMessage {
    ServerMessage::MoveAccepted {
        seq: 4,
        text: "x".to_string(),
        effects: Vec::new(),
        board: board(seed),
        progress: Progress::default(),
    }
}

/// Each frame in order, and what the bot does after it.
fn check(frames: &[(ServerMessage, Next)], sent_after: &[usize]) {
    let mut view = SeatView::default();
    for (index, (frame, expected)) in frames.iter().enumerate() {
        assert_eq!(&view.heard(frame), expected, "after frame {index}");
        if sent_after.contains(&index) {
            view.sent();
        }
    }
}

#[test]
fn a_bot_thinks_on_its_own_board_once_racing_and_never_while_a_move_is_unanswered() {
    let joined = ServerMessage::RoomJoined {
        seq: 1,
        room: room(Phase::Lobby, &[None, Some(BotLevel::Easy)]),
        seat: Some(1),
        resume_token: Some("t".to_string()),
    };
    let rival_moved = ServerMessage::Progress {
        seq: 5,
        seat: 0,
        progress: Progress::default(),
        text: None,
        board: None,
    };
    let refused = ServerMessage::MoveRejected {
        text: "x".to_string(),
        code: ErrorCode::IllegalMove,
        reason: None,
        message: String::new(),
    };
    check(
        &[
            (joined, Next::Wait),
            (
                ServerMessage::Countdown {
                    seq: 2,
                    starts_in_ms: 10,
                },
                Next::Wait,
            ),
            (started(1), Next::Think(board(1))),
            // A move was sent: a rival's progress changes nothing.
            (rival_moved.clone(), Next::Wait),
            (accepted(2), Next::Think(board(2))),
            (refused, Next::Think(board(2))),
            (rival_moved, Next::Think(board(2))),
        ],
        &[2],
    );
}

#[test]
fn a_bot_stops_at_its_own_finish_and_at_the_race_end() {
    let finished = |seat| ServerMessage::Finished {
        seq: 6,
        seat,
        status: PlayerStatus::Won,
        elapsed_ms: 1_000,
    };
    let joined = ServerMessage::RoomJoined {
        seq: 1,
        room: room(Phase::Lobby, &[None, Some(BotLevel::Easy)]),
        seat: Some(1),
        resume_token: None,
    };
    check(
        &[
            (joined, Next::Wait),
            (started(1), Next::Think(board(1))),
            (finished(0), Next::Think(board(1))),
            (finished(1), Next::Wait),
            (
                ServerMessage::Left {
                    code: "K7PQ3M".to_string(),
                },
                Next::Stop,
            ),
        ],
        &[],
    );
}

#[test]
fn a_bot_leaves_a_room_with_no_person_before_the_race_only() {
    let update = |phase, bots: &[Option<BotLevel>]| ServerMessage::RoomUpdate {
        seq: 2,
        room: room(phase, bots),
    };
    let bots_only = [Some(BotLevel::Easy), Some(BotLevel::Strong)];
    check(
        &[(
            update(Phase::Lobby, &[None, Some(BotLevel::Easy)]),
            Next::Wait,
        )],
        &[],
    );
    check(&[(update(Phase::Lobby, &bots_only), Next::Leave)], &[]);
    check(&[(update(Phase::Countdown, &bots_only), Next::Leave)], &[]);
    check(&[(update(Phase::Racing, &bots_only), Next::Wait)], &[]);
}

#[test]
fn a_snapshot_gives_back_the_bots_own_board_and_status() {
    let joined = ServerMessage::RoomJoined {
        seq: 1,
        room: room(Phase::Racing, &[None, Some(BotLevel::Easy)]),
        seat: Some(1),
        resume_token: None,
    };
    let seat_board = |seat, seed: u64, status| SeatBoard {
        seat,
        status,
        board: Some(board(seed)),
        progress: Progress::default(),
    };
    let snapshot = |status| ServerMessage::Snapshot {
        seq: 9,
        room: room(Phase::Racing, &[None, Some(BotLevel::Easy)]),
        race: Some(RaceSnapshot {
            commitment: String::new(),
            elapsed_ms: 10,
            time_limit_ms: 60_000,
            boards: vec![
                seat_board(0, 7, PlayerStatus::Racing),
                seat_board(1, 8, status),
            ],
            result: None,
        }),
    };
    check(
        &[
            (joined.clone(), Next::Wait),
            (snapshot(PlayerStatus::Racing), Next::Think(board(8))),
        ],
        &[],
    );
    check(
        &[
            (joined, Next::Wait),
            (snapshot(PlayerStatus::Resigned), Next::Wait),
        ],
        &[],
    );
}

#[test]
fn the_pace_varies_by_a_third_either_way_and_the_limit_is_two_paces_capped() {
    for move_number in 0..1_000 {
        let pace = pace_for_move_ms(1_500, move_number);
        assert!((1_000..=2_000).contains(&pace), "{pace}");
    }
    assert_eq!(pace_for_move_ms(2_000, 0), 1_334);
    assert_eq!(think_limit(0), None);
    assert_eq!(think_limit(1_500), Some(Duration::from_secs(3)));
    assert_eq!(think_limit(9_000), Some(Duration::from_secs(10)));
}

#[test]
fn a_rooms_pace_is_clamped_and_the_default_is_the_levels() {
    let bots = Bots::new(4, 1, protocol::BOT_PACE_MIN_MS);
    let pace = |level, pace_ms| bots.pace_ms(&BotSeat { level, pace_ms });
    assert_eq!(pace(BotLevel::Normal, None), 2_000);
    assert_eq!(pace(BotLevel::Easy, Some(1)), protocol::BOT_PACE_MIN_MS);
    assert_eq!(
        pace(BotLevel::Easy, Some(u32::MAX)),
        protocol::BOT_PACE_MAX_MS
    );
    assert!(bots.reserve(3).is_some());
    let held = bots.reserve(4);
    assert!(held.is_some());
    assert!(bots.reserve(1).is_none(), "every seat is held");
    drop(held);
    assert!(bots.reserve(4).is_some(), "seats come back when bots end");
}
