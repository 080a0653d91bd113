//! The room's rules of time, delivery and durability, on a virtual clock:
//! every test feeds inputs at chosen times and reads the frames the core
//! asks to send and the writes it asks to keep.

use std::sync::atomic::Ordering;

use patience_shared::solver::Budget;
use patience_shared::solver::any::first_winnable_deal;

use super::*;
use crate::metrics::RoomCounts;
use crate::race::{left_unless_finished, standing_key};
use patience_shared::protocol::{REMATCH_WAIT_MS, RematchStatus};

/// Counts nobody reads.
fn counts() -> Arc<RoomCounts> {
    Arc::default()
}

const COUNTDOWN: u64 = 3_000;
const GRACE: u64 = 10_000;
const LINGER: u64 = 60_000;
const LIMIT: u64 = 600_000;
const START: Millis = 1_000_000;
const OUTAGE: u64 = 30_000;

fn settings() -> Settings {
    Settings {
        countdown_ms: COUNTDOWN,
        grace_ms: GRACE,
        linger_ms: LINGER,
        default_time_limit_ms: LIMIT,
        event_log_capacity: 64,
        event_log_bytes: 1 << 20,
        store_outage_ms: OUTAGE,
        progress_tick_ms: DEFAULT_PROGRESS_TICK_MS,
    }
}

/// A room's default options, with take-backs allowed.
fn undo_allowed() -> RoomOptions {
    RoomOptions {
        undo_allowed: true,
        ..RoomOptions::default()
    }
}

/// A Three Blind Mice seed the solver proves, and its winning line.
fn proved() -> (u64, Vec<String>) {
    let deal = first_winnable_deal(GameKind::ThreeBlindMice, 1.., Budget::positions(200_000))
        .expect("the line replays")
        .expect("a deal is winnable");
    let game = AnyGame::deal(GameKind::ThreeBlindMice, deal.seed);
    let mut replay = game.clone();
    let line = deal
        .line
        .iter()
        .map(|&mv| {
            let text = replay.format_move(mv);
            replay.apply(mv).expect("the line is legal");
            text
        })
        .collect();
    (deal.seed, line)
}

struct Room {
    core: RoomCore,
    /// What the room counted.
    counts: Arc<RoomCounts>,
    now: Millis,
    /// Every output taken so far, in order.
    taken: Vec<Output>,
    /// Whether [`Room::drain`] answers each write as committed, as a shell
    /// with a working database does; off, the test answers them.
    keeps: bool,
}

impl Room {
    fn new(max_players: u8, options: RoomOptions) -> Room {
        let params = RoomParams {
            code: Arc::from("ABCDEF"),
            game: GameKind::ThreeBlindMice,
            max_players,
            public: false,
            quick: false,
            options,
            series: None,
        };
        let counts = Arc::new(RoomCounts::default());
        Room {
            core: RoomCore::new(params, settings(), counts.clone(), [7; 32], START),
            counts,
            now: START,
            taken: Vec::new(),
            keeps: true,
        }
    }

    /// A core already made (a restored one), run from `now`.
    fn around(core: RoomCore, now: Millis) -> Room {
        Room {
            core,
            counts: Arc::default(),
            now,
            taken: Vec::new(),
            keeps: true,
        }
    }

    /// `handle` at the current time.
    fn input(&mut self, input: Input) -> Result<(), Refusal> {
        self.core.handle(self.now, input)
    }

    fn at(&mut self, now: Millis, input: Input) -> Result<(), Refusal> {
        self.now = self.now.max(now);
        self.core.handle(now, input)
    }

    fn advance(&mut self, ms: u64) {
        self.now += ms;
        self.core.on_timeout(self.now);
    }

    /// Takes every output, answering deals from `seed` as a shell would.
    fn drain(&mut self, seed: Option<u64>) -> Vec<Output> {
        let mut outputs = Vec::new();
        while let Some(output) = self.core.poll_output() {
            if let (Output::NeedDeal, Some(seed)) = (&output, seed) {
                let _ = self.input(Input::DealReady { seed });
            }
            if matches!(output, Output::Keep(_)) && self.keeps {
                let _ = self.input(Input::Kept {
                    stored: Stored::Committed,
                });
            }
            // A shell with room in every outbox sends all missed events.
            if let Output::Replay { conn, missed, .. } = output {
                outputs.extend(missed.into_iter().map(|frame| Output::Send { conn, frame }));
                continue;
            }
            outputs.push(output);
        }
        self.taken.extend(outputs.iter().cloned());
        outputs
    }

    /// The messages `conn` was sent in `outputs`.
    fn to(outputs: &[Output], conn: ConnId) -> Vec<ServerMessage> {
        outputs
            .iter()
            .filter_map(|output| match output {
                Output::Send { conn: to, frame } if *to == conn => {
                    Some(protocol::decode_server(frame).expect("the core encodes"))
                }
                _ => None,
            })
            .collect()
    }

    fn join(&mut self, conn: ConnId, name: &str) -> String {
        self.input(Input::Join {
            conn,
            name: name.to_string(),
            player: None,
            bot: None,
        })
        .expect("joins");
        let outputs = self.drain(None);
        let token = Room::to(&outputs, conn)
            .into_iter()
            .find_map(|message| match message {
                ServerMessage::RoomJoined {
                    resume_token: Some(token),
                    ..
                } => Some(token),
                _ => None,
            });
        token.expect("a resume token")
    }

    /// Two players in a two-seat room, raced with `seed` after the countdown.
    fn racing(options: RoomOptions, seed: u64) -> (Room, String, String) {
        let mut room = Room::new(2, options);
        let ada = room.join(1, "ada");
        room.input(Input::Join {
            conn: 2,
            name: "bob".to_string(),
            player: None,
            bot: None,
        })
        .expect("joins");
        let outputs = room.drain(Some(seed));
        let bob = Room::to(&outputs, 2)
            .into_iter()
            .find_map(|message| match message {
                ServerMessage::RoomJoined { resume_token, .. } => resume_token,
                _ => None,
            })
            .expect("bob's token");
        assert_eq!(room.core.phase(), Phase::Countdown);
        assert_eq!(room.core.poll_timeout(), Some(room.now + COUNTDOWN));
        room.advance(COUNTDOWN);
        assert_eq!(room.core.phase(), Phase::Racing);
        room.drain(None);
        (room, ada, bob)
    }

    /// A progress tick longer than any race, for tests of other deadlines:
    /// [`RoomCore::poll_timeout`] then gives theirs.
    fn progress_tick_out_of_the_way(&mut self) {
        self.core.settings.progress_tick_ms = 100 * LIMIT;
    }

    fn play(&mut self, conn: ConnId, text: &str) -> Vec<Output> {
        self.input(Input::Move {
            conn,
            text: text.to_string(),
            seat: None,
        })
        .expect("moves are answered with frames");
        self.drain(None)
    }
}

fn no_undo() -> RoomOptions {
    RoomOptions {
        undo_allowed: false,
        ..RoomOptions::default()
    }
}

fn is_refused(messages: &[ServerMessage], code: ErrorCode) -> bool {
    messages.iter().any(
        |message| matches!(message, ServerMessage::MoveRejected { code: got, .. } if *got == code),
    )
}

fn is_accepted(messages: &[ServerMessage]) -> bool {
    messages
        .iter()
        .any(|message| matches!(message, ServerMessage::MoveAccepted { .. }))
}

#[test]
fn the_countdown_starts_the_race_at_its_own_time() {
    let (seed, _) = proved();
    let (room, _, _) = Room::racing(RoomOptions::default(), seed);
    let started = room.taken.iter().find_map(|output| match output {
        Output::Send { conn: 1, frame } => match protocol::decode_server(frame) {
            Ok(ServerMessage::RaceStarted { time_limit_ms, .. }) => Some(time_limit_ms),
            _ => None,
        },
        _ => None,
    });
    assert_eq!(started, Some(LIMIT));
    // The race's own deadline is next: the time limit from the start.
    assert_eq!(room.core.poll_timeout(), Some(START + COUNTDOWN + LIMIT));
}

#[test]
fn a_move_read_after_the_time_limit_is_refused_whichever_comes_first() {
    let (seed, line) = proved();
    // The actor sees the late move before the timer: the core acts on the
    // deadline first, at its own time, then refuses the move.
    let (mut room, _, _) = Room::racing(no_undo(), seed);
    let deadline = START + COUNTDOWN + LIMIT;
    room.at(
        deadline,
        Input::Move {
            conn: 1,
            text: line[0].clone(),
            seat: None,
        },
    )
    .expect("answered");
    let outputs = room.drain(None);
    assert!(is_refused(&Room::to(&outputs, 1), ErrorCode::RaceOver));
    assert!(!is_accepted(&Room::to(&outputs, 1)));

    // The timer first, then the same move: the same answer.
    let (mut room, _, _) = Room::racing(no_undo(), seed);
    room.core.on_timeout(deadline);
    room.drain(None);
    let outputs = room.play(1, &line[0]);
    assert!(is_refused(&Room::to(&outputs, 1), ErrorCode::RaceOver));

    // One millisecond before the limit the move counts, even if the actor
    // handles it after the deadline has passed on its clock.
    let (mut room, _, _) = Room::racing(no_undo(), seed);
    room.at(
        deadline - 1,
        Input::Move {
            conn: 1,
            text: line[0].clone(),
            seat: None,
        },
    )
    .expect("answered");
    let outputs = room.drain(None);
    assert!(is_accepted(&Room::to(&outputs, 1)));
}

#[test]
fn the_time_limit_ends_the_race_at_the_limit_and_the_end_waits_for_the_store() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(no_undo(), seed);
    room.play(1, &line[0]);
    room.advance(LIMIT + 5_000);
    let outputs = room.drain(None);
    // The result goes to the store; nobody hears the race is over before
    // it is committed.
    let Some(Output::StoreRace(race)) = outputs
        .iter()
        .find(|output| matches!(output, Output::StoreRace(_)))
    else {
        panic!("the result is stored: {outputs:?}");
    };
    assert_eq!(race.ended_at_ms, START + COUNTDOWN + LIMIT);
    let told: Vec<ServerMessage> = Room::to(&outputs, 1);
    assert!(
        !told
            .iter()
            .any(|message| matches!(message, ServerMessage::RaceEnded { .. })),
        "{told:?}"
    );
    room.input(Input::RaceStored { race_id: Some(42) })
        .expect("answered");
    let outputs = room.drain(None);
    let ended = Room::to(&outputs, 2)
        .into_iter()
        .find_map(|message| match message {
            ServerMessage::RaceEnded { result, .. } => Some(result),
            _ => None,
        })
        .expect("announced once stored");
    assert_eq!(ended.race_id, Some(42));
    let standings: Vec<_> = ended
        .standings
        .iter()
        .map(|standing| (standing.seat, standing.status, standing.progress.elapsed_ms))
        .collect();
    // Everyone ran out of time at the limit exactly, whatever the timer's lateness.
    assert!(
        standings
            .iter()
            .all(|&(_, status, _)| status == PlayerStatus::OutOfTime)
    );
    let finished: Vec<u64> = Room::to(&room.taken, 2)
        .into_iter()
        .filter_map(|message| match message {
            ServerMessage::Finished { elapsed_ms, .. } => Some(elapsed_ms),
            _ => None,
        })
        .collect();
    assert_eq!(finished, [LIMIT, LIMIT]);
    // The room lingers for its results, then closes and says so.
    assert_eq!(
        room.core.poll_timeout(),
        Some(START + COUNTDOWN + LIMIT + LINGER)
    );
    room.advance(LINGER);
    assert!(room.core.is_closed());
    let outputs = room.drain(None);
    assert!(
        Room::to(&outputs, 1)
            .iter()
            .any(|message| matches!(message, ServerMessage::Left { .. }))
    );
    assert!(outputs.contains(&Output::Detach { conn: 1 }));
}

#[test]
fn a_standing_shows_the_time_its_race_ended_not_its_last_move() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(no_undo(), seed);
    room.advance(2_000);
    room.play(1, &line[0]);
    room.play(2, &line[0]);
    room.drain(None);
    // Both stop moving; Bob resigns a minute later, Ada two.
    room.advance(60_000);
    room.input(Input::Resign { conn: 2 }).expect("answered");
    room.drain(None);
    room.advance(60_000);
    room.input(Input::Resign { conn: 1 }).expect("answered");
    let outputs = room.drain(None);
    let Some(Output::StoreRace(race)) = outputs
        .iter()
        .find(|output| matches!(output, Output::StoreRace(_)))
    else {
        panic!("the result is stored: {outputs:?}");
    };
    let time_of = |seat: u8| {
        race.result
            .standings
            .iter()
            .find(|standing| standing.seat == seat)
            .map(|standing| standing.progress.elapsed_ms)
    };
    assert_eq!(time_of(1), Some(62_000), "Bob resigned at 1:02");
    assert_eq!(time_of(0), Some(122_000), "Ada resigned at 2:02");
}

#[test]
fn a_won_race_is_announced_only_after_it_is_stored() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(no_undo(), seed);
    room.input(Input::Resign { conn: 2 }).expect("answered");
    room.drain(None);
    let mut last = Vec::new();
    for text in &line {
        last = room.play(1, text);
    }
    let told = Room::to(&last, 1);
    assert!(is_accepted(&told));
    // The winning move is acknowledged; the last `finished` and the result
    // wait for the commit.
    assert!(
        !told.iter().any(|message| matches!(
            message,
            ServerMessage::Finished { .. } | ServerMessage::RaceEnded { .. }
        )),
        "{told:?}"
    );
    assert!(
        last.iter()
            .any(|output| matches!(output, Output::StoreRace(_)))
    );
    // The room waits for the store, up to its bound on unanswered writes.
    room.advance(OUTAGE - 1);
    assert!(!room.core.is_closed());
    assert!(!tells_anyone(&room.drain(None)));
    room.input(Input::RaceStored { race_id: None })
        .expect("answered");
    let told = Room::to(&room.drain(None), 1);
    let kinds: Vec<_> = told
        .iter()
        .filter_map(|message| match message {
            ServerMessage::Finished { seat, status, .. } => Some(format!("{seat} {status:?}")),
            ServerMessage::RaceEnded { result, .. } => {
                Some(format!("ended {:?}", result.standings[0].status))
            }
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["0 Won", "ended Won"]);
}

#[test]
fn a_dropped_seat_waits_out_its_grace_then_is_given_up_at_its_end() {
    let (seed, line) = proved();
    let (mut room, _, bob_token) = Room::racing(no_undo(), seed);
    room.input(Input::Disconnected { conn: 2 })
        .expect("answered");
    room.drain(None);
    assert_eq!(room.core.poll_timeout(), Some(room.now + GRACE));
    // Ada plays on while Bob is away.
    room.play(1, &line[0]);
    // Back one millisecond before the grace ends: the seat is his again.
    room.advance(GRACE - 1);
    room.input(Input::Resume {
        conn: 3,
        token: token_hash(&bob_token),
        last_seq: 0,
    })
    .expect("the seat is taken back");
    let outputs = room.drain(None);
    assert!(
        Room::to(&outputs, 3)
            .iter()
            .any(|message| matches!(message, ServerMessage::Resumed { seat: 1, .. }))
    );
    // Gone again, for good this time.
    room.input(Input::Disconnected { conn: 3 })
        .expect("answered");
    room.drain(None);
    let gone_at = room.now + GRACE;
    room.advance(GRACE + 1);
    let outputs = room.drain(None);
    let left = Room::to(&outputs, 1)
        .into_iter()
        .find_map(|message| match message {
            ServerMessage::Finished {
                seat: 1,
                status,
                elapsed_ms,
                ..
            } => Some((status, elapsed_ms)),
            _ => None,
        });
    assert_eq!(
        left,
        Some((PlayerStatus::Left, gone_at - (START + COUNTDOWN)))
    );
    // The token opens nothing any more.
    assert_eq!(
        room.input(Input::Resume {
            conn: 4,
            token: token_hash(&bob_token),
            last_seq: 0,
        })
        .map_err(|refusal| refusal.code),
        Err(ErrorCode::InvalidResumeToken)
    );
}

#[test]
fn a_resume_gets_the_missed_events_or_a_snapshot_when_they_are_not_kept() {
    let (seed, line) = proved();
    let (mut room, ada_token, _) = Room::racing(RoomOptions::default(), seed);
    let seen = room.core.seq;
    room.input(Input::Disconnected { conn: 1 })
        .expect("answered");
    room.drain(None);
    room.play(2, &line[0]);
    room.input(Input::Resume {
        conn: 5,
        token: token_hash(&ada_token),
        last_seq: seen,
    })
    .expect("resumes");
    let told = Room::to(&room.drain(None), 5);
    // Resumed, then Bob's progress (a count, never his move) and the room update.
    assert!(matches!(told[0], ServerMessage::Resumed { .. }));
    assert!(told.iter().any(|message| matches!(
        message,
        ServerMessage::Progress {
            seat: 1,
            text: None,
            board: None,
            ..
        }
    )));
    assert!(
        !told
            .iter()
            .any(|message| matches!(message, ServerMessage::Snapshot { .. }))
    );

    // Too far back (more than the log keeps): one snapshot with her board only.
    let undo = undo_allowed();
    let (mut room, ada_token, _) = Room::racing(undo, seed);
    room.input(Input::Disconnected { conn: 1 })
        .expect("answered");
    room.drain(None);
    for _ in 0..40 {
        room.play(2, &line[0]);
        room.input(Input::Undo { conn: 2 }).expect("answered");
        room.drain(None);
    }
    room.input(Input::Resume {
        conn: 5,
        token: token_hash(&ada_token),
        last_seq: 1,
    })
    .expect("resumes");
    let told = Room::to(&room.drain(None), 5);
    let Some(ServerMessage::Snapshot {
        race: Some(race), ..
    }) = told.get(1)
    else {
        panic!("a snapshot after resumed: {told:?}");
    };
    let boards: Vec<(u8, bool)> = race
        .boards
        .iter()
        .map(|board| (board.seat, board.board.is_some()))
        .collect();
    assert_eq!(boards, [(0, true), (1, false)]);
}

#[test]
fn a_resume_from_before_the_end_of_a_race_gets_the_result_in_a_snapshot_not_the_race() {
    let (seed, line) = proved();
    let (mut room, _, bob_token) = Room::racing(no_undo(), seed);
    room.input(Input::Resign { conn: 2 }).expect("answered");
    let (before, last) = line.split_at(line.len() - 3);
    for text in before {
        room.play(1, text);
    }
    // Bob misses only a few events, which the log would hold.
    room.input(Input::Disconnected { conn: 2 })
        .expect("answered");
    room.drain(None);
    let seen = room.core.seq;
    for text in last {
        room.play(1, text);
    }
    room.input(Input::RaceStored { race_id: Some(7) })
        .expect("answered");
    room.drain(None);
    assert_eq!(room.core.phase(), Phase::Finished);
    room.input(Input::Resume {
        conn: 5,
        token: token_hash(&bob_token),
        last_seq: seen,
    })
    .expect("resumes");
    let told = Room::to(&room.drain(None), 5);
    // Ada's race, move by move, is gone with it; what is left to know is
    // in one snapshot: every board and the result.
    let [
        ServerMessage::Resumed { .. },
        ServerMessage::Snapshot {
            race: Some(race), ..
        },
        after @ ..,
    ] = told.as_slice()
    else {
        panic!("resumed, then one snapshot: {told:?}");
    };
    assert!(
        after
            .iter()
            .all(|message| matches!(message, ServerMessage::RoomUpdate { .. })),
        "{after:?}"
    );
    assert_eq!(
        race.result.as_ref().and_then(|result| result.race_id),
        Some(7)
    );
    assert!(race.boards.iter().all(|board| board.board.is_some()));
}

#[test]
fn the_event_log_is_bounded_in_bytes_as_well_as_in_events() {
    let (seed, line) = proved();
    let undo = undo_allowed();
    let (mut room, ada_token, _) = Room::racing(undo, seed);
    room.core.settings.event_log_bytes = 2_000;
    room.input(Input::Disconnected { conn: 1 })
        .expect("answered");
    room.drain(None);
    let seen = room.core.seq;
    // Each move a tick apart is logged twice (Bob's `move_accepted` with
    // his board, and his `progress`): far fewer than 64 events, far more
    // than 2,000 bytes.
    for _ in 0..10 {
        room.now += DEFAULT_PROGRESS_TICK_MS;
        room.play(2, &line[0]);
        room.now += DEFAULT_PROGRESS_TICK_MS;
        room.input(Input::Undo { conn: 2 }).expect("answered");
        room.drain(None);
    }
    let kept: usize = room.core.log.iter().map(|event| event.frame.len()).sum();
    assert_eq!(kept, room.core.log_bytes, "the count follows the log");
    assert!(kept <= 2_000, "{kept} bytes kept");
    assert!(room.core.log.len() > 1 && room.core.log.len() < 40);
    // What the log let go of comes back as a snapshot.
    room.input(Input::Resume {
        conn: 5,
        token: token_hash(&ada_token),
        last_seq: seen,
    })
    .expect("resumes");
    let told = Room::to(&room.drain(None), 5);
    assert!(
        matches!(told.get(1), Some(ServerMessage::Snapshot { .. })),
        "{told:?}"
    );
}

#[test]
fn a_player_who_cannot_keep_up_is_kicked_too_slow_and_may_resume() {
    let (seed, line) = proved();
    let (mut room, _, bob_token) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Overflow { conn: 2 }).expect("answered");
    let outputs = room.drain(None);
    assert!(outputs.contains(&Output::Kick {
        conn: 2,
        code: ErrorCode::TooSlow,
        message: "you fell behind; resume to catch up".to_string(),
    }));
    assert!(outputs.contains(&Output::Detach { conn: 2 }));
    // Nothing more goes to the old connection.
    let outputs = room.play(1, &line[0]);
    assert!(Room::to(&outputs, 2).is_empty());
    room.input(Input::Resume {
        conn: 9,
        token: token_hash(&bob_token),
        last_seq: 0,
    })
    .expect("the seat waits for its player");
}

#[test]
fn a_spectator_who_falls_behind_skips_events_then_gets_one_snapshot() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Spectate { conn: 7 }).expect("watches");
    room.drain(None);
    room.input(Input::Overflow { conn: 7 }).expect("answered");
    // Falling behind is told once (for the metrics), however many frames
    // it misses.
    assert_eq!(room.drain(None), vec![Output::FellBehind { conn: 7 }]);
    room.input(Input::Overflow { conn: 7 }).expect("answered");
    assert_eq!(room.drain(None), vec![]);
    room.play(1, &line[0]);
    room.advance(DEFAULT_PROGRESS_TICK_MS);
    let outputs = room.drain(None);
    // Behind: no event, a catch-up snapshot instead (for the shell to send
    // when the outbox has room).
    assert!(Room::to(&outputs, 7).is_empty());
    let catch_up: Vec<ServerMessage> = outputs
        .iter()
        .filter_map(|output| match output {
            Output::CatchUp { conn: 7, frame } => protocol::decode_server(frame).ok(),
            _ => None,
        })
        .collect();
    assert!(matches!(
        catch_up.as_slice(),
        [ServerMessage::Snapshot { race: Some(race), .. }]
            if race.boards.iter().all(|board| board.board.is_none())
    ));
    room.input(Input::CaughtUp { conn: 7 }).expect("answered");
    room.now += DEFAULT_PROGRESS_TICK_MS;
    room.play(1, &line[1]);
    room.advance(DEFAULT_PROGRESS_TICK_MS);
    let outputs = room.drain(None);
    assert!(matches!(
        Room::to(&outputs, 7).as_slice(),
        [ServerMessage::Progress { seat: 0, .. }]
    ));
}

/// The moves counted in each `progress` for `seat` among `messages`.
fn progress_moves(messages: &[ServerMessage], seat: u8) -> Vec<u32> {
    messages
        .iter()
        .filter_map(|message| match message {
            ServerMessage::Progress {
                seat: of, progress, ..
            } if *of == seat => Some(progress.moves),
            _ => None,
        })
        .collect()
}

#[test]
fn rivals_and_spectators_get_a_racers_latest_progress_at_the_end_of_its_tick_and_the_mover_every_ack_at_once()
 {
    const TICK: Millis = DEFAULT_PROGRESS_TICK_MS;
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Spectate { conn: 7 }).expect("watches");
    room.drain(None);
    let started = room.core.race.as_ref().expect("racing").started;
    // Ticks are counted from the race's start: a move 30 ms into the third
    // tick is told at its end.
    room.now = started + 2 * TICK + 30;
    let end_of_tick = started + 3 * TICK;
    // Four moves by Ada and one by Bob within the tick: each mover hears of
    // its own at once, everyone else of none until the tick's end.
    for (conn, text) in [
        (1, &line[0]),
        (1, &line[1]),
        (2, &line[0]),
        (1, &line[2]),
        (1, &line[3]),
    ] {
        let outputs = room.play(conn, text);
        assert!(is_accepted(&Room::to(&outputs, conn)), "{text}");
        assert_eq!(Room::to(&outputs, 3 - conn), [], "{text}");
        assert_eq!(Room::to(&outputs, 7), [], "{text}");
        assert_eq!(room.core.poll_timeout(), Some(end_of_tick));
        room.now += 10;
    }
    room.advance(end_of_tick - room.now);
    let outputs = room.drain(None);
    // The latest counts, once per racer, one frame shared by its rival and
    // the spectator.
    assert_eq!(progress_moves(&Room::to(&outputs, 7), 0), [4]);
    assert_eq!(progress_moves(&Room::to(&outputs, 7), 1), [1]);
    assert_eq!(progress_moves(&Room::to(&outputs, 2), 0), [4]);
    assert_eq!(progress_moves(&Room::to(&outputs, 1), 1), [1]);
    assert_eq!(progress_moves(&Room::to(&outputs, 1), 0), []);
    assert_eq!(progress_moves(&Room::to(&outputs, 2), 1), []);
    assert_eq!(frames_to(&outputs, 2)[0], frames_to(&outputs, 7)[0]);
    // A move on the tick's last instant waits for the next one.
    room.now = started + 4 * TICK;
    room.play(1, &line[4]);
    assert_eq!(room.core.poll_timeout(), Some(started + 5 * TICK));
    // The others see the rest in order: the last counts before the win.
    let mut seen_by_rival = Vec::new();
    let mut seen_by_spectator = Vec::new();
    for text in &line[5..] {
        room.now += 7;
        let outputs = room.play(1, text);
        seen_by_rival.extend(Room::to(&outputs, 2));
        seen_by_spectator.extend(Room::to(&outputs, 7));
    }
    for seen in [seen_by_rival, seen_by_spectator] {
        let finished = seen
            .iter()
            .position(|message| matches!(message, ServerMessage::Finished { seat: 0, .. }))
            .expect("the win is told");
        let told = progress_moves(&seen[..finished], 0);
        assert_eq!(told.last().copied(), u32::try_from(line.len()).ok());
        assert!(told.len() < line.len() - 5, "coalesced: {told:?}");
    }
}

#[test]
fn a_rival_who_resumes_gets_the_progress_told_on_the_tick_from_the_log() {
    let (seed, line) = proved();
    let (mut room, _, bob_token) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Disconnected { conn: 2 })
        .expect("answered");
    room.drain(None);
    let seen = room.core.seq;
    room.play(1, &line[0]);
    room.advance(DEFAULT_PROGRESS_TICK_MS);
    room.play(1, &line[1]);
    room.now += 1;
    room.play(1, &line[2]);
    room.advance(DEFAULT_PROGRESS_TICK_MS);
    room.drain(None);
    room.input(Input::Resume {
        conn: 9,
        token: token_hash(&bob_token),
        last_seq: seen,
    })
    .expect("resumes");
    let told = Room::to(&room.drain(None), 9);
    assert_eq!(progress_moves(&told, 0), [1, 3], "{told:?}");
}

/// The encoded frames `outputs` send to `conn`.
fn frames_to(outputs: &[Output], conn: ConnId) -> Vec<Bytes> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Send { conn: to, frame } if *to == conn => Some(frame.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn an_event_is_encoded_once_and_every_recipient_gets_the_same_bytes() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Spectate { conn: 7 }).expect("watches");
    room.input(Input::Spectate { conn: 8 }).expect("watches");
    room.drain(None);
    // Whether the frames of `outputs` to `conns` that `is` picks are one
    // for each, and one buffer, shared.
    let shared = |outputs: &[Output], conns: &[ConnId], is: fn(&ServerMessage) -> bool| {
        let frames: Vec<&Bytes> = outputs
            .iter()
            .filter_map(|output| match output {
                Output::Send { conn, frame }
                    if conns.contains(conn)
                        && protocol::decode_server(frame).is_ok_and(|message| is(&message)) =>
                {
                    Some(frame)
                }
                _ => None,
            })
            .collect();
        frames.len() == conns.len()
            && frames
                .iter()
                .all(|frame| frame.as_ptr() == frames[0].as_ptr() && frame.len() == frames[0].len())
    };
    // Ada's `progress`: one encoding for her rival and both spectators.
    room.play(1, &line[0]);
    room.advance(DEFAULT_PROGRESS_TICK_MS);
    let outputs = room.drain(None);
    let progress = |message: &ServerMessage| matches!(message, ServerMessage::Progress { .. });
    assert!(shared(&outputs, &[2, 7, 8], progress), "{outputs:?}");
    // An event for everyone: one encoding for the racers and spectators.
    room.input(Input::Resign { conn: 2 }).expect("resigns");
    let outputs = room.drain(None);
    let finished = |message: &ServerMessage| matches!(message, ServerMessage::Finished { .. });
    assert!(shared(&outputs, &[1, 2, 7, 8], finished), "{outputs:?}");
}

#[test]
fn without_a_proved_deal_the_room_deals_then_counts_down() {
    let mut room = Room::new(2, RoomOptions::default());
    room.join(1, "ada");
    room.input(Input::Join {
        conn: 2,
        name: "bob".to_string(),
        player: None,
        bot: None,
    })
    .expect("joins");
    let outputs = room.drain(None);
    assert!(outputs.contains(&Output::NeedDeal));
    assert_eq!(room.core.phase(), Phase::Dealing);
    // No countdown is promised without a deal, however long it takes.
    assert_eq!(room.core.poll_timeout(), None);
    room.now += 120_000;
    let (seed, _) = proved();
    room.input(Input::DealReady { seed }).expect("answered");
    assert_eq!(room.core.phase(), Phase::Countdown);
    assert_eq!(room.core.poll_timeout(), Some(room.now + COUNTDOWN));
}

#[test]
fn players_whose_names_look_alike_are_told_apart() {
    // Each case: the names that join in turn, and the names the room shows.
    let check = |joining: &[&str], shown: &[&str]| {
        let mut room = Room::new(4, RoomOptions::default());
        for (conn, name) in (1..).zip(joining) {
            room.join(conn, name);
        }
        let names: Vec<String> = room
            .core
            .info()
            .players
            .into_iter()
            .map(|player| player.name)
            .collect();
        assert_eq!(names, shown, "{joining:?}");
    };
    // Cyrillic а, fullwidth letters, a zero for an O, rn for m.
    check(
        &["ada", "\u{430}da", "\u{FF41}\u{FF44}\u{FF41}", "bob"],
        &[
            "ada",
            "\u{430}da (2)",
            "\u{FF41}\u{FF44}\u{FF41} (3)",
            "bob",
        ],
    );
    check(&["bob", "b0b"], &["bob", "b0b (2)"]);
    check(&["bOb", "b0b"], &["bOb", "b0b (2)"]);
    check(&["modern", "rnodern"], &["modern", "rnodern (2)"]);
    check(&["ada", "ida"], &["ada", "ida"]);
}

#[test]
fn players_with_the_same_name_are_told_apart() {
    let mut room = Room::new(4, RoomOptions::default());
    for (conn, name) in [(1, "ada"), (2, "Ada"), (3, "ada"), (4, "bob")] {
        room.join(conn, name);
    }
    let names: Vec<String> = room
        .core
        .info()
        .players
        .into_iter()
        .map(|player| player.name)
        .collect();
    assert_eq!(names, ["ada", "Ada (2)", "ada (3)", "bob"]);
}

#[test]
fn the_same_inputs_at_the_same_times_give_the_same_frames() {
    let (seed, line) = proved();
    let run = || {
        let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
        room.input(Input::Spectate { conn: 7 }).expect("watches");
        for text in line.iter().take(10) {
            room.now += 250;
            room.play(1, text);
        }
        room.taken
    };
    let first = run();
    assert!(first.len() > 40);
    assert_eq!(first, run());
}

#[test]
fn a_lobby_closes_when_its_last_player_leaves() {
    let mut room = Room::new(3, RoomOptions::default());
    room.join(1, "ada");
    room.input(Input::Spectate { conn: 7 }).expect("watches");
    room.drain(None);
    room.input(Input::Leave { conn: 1 }).expect("answered");
    assert!(room.core.is_closed());
    let outputs = room.drain(None);
    assert!(
        Room::to(&outputs, 7)
            .iter()
            .any(|message| matches!(message, ServerMessage::Left { .. }))
    );
    assert_eq!(
        room.input(Input::Join {
            conn: 3,
            name: "cy".to_string(),
            player: None,
            bot: None,
        })
        .map_err(|refusal| refusal.code),
        Err(ErrorCode::RoomNotFound)
    );
}

/// A racer at the end: seat, status, when its race ended, cards in order.
type Row = (u8, PlayerStatus, Option<u64>, u16);

/// Ranks rows and checks the seats come out in `expected` order.
fn check(rows: &[Row], expected: &[u8]) {
    let mut rows = rows.to_vec();
    rows.sort_by_key(|&(seat, status, finished_ms, cards_in_order)| {
        let progress = Progress {
            cards_in_order,
            ..Progress::default()
        };
        standing_key(seat, status, finished_ms, progress)
    });
    let seats: Vec<u8> = rows.iter().map(|row| row.0).collect();
    assert_eq!(seats, expected);
}

#[test]
fn standings_rank_winners_by_time_then_cards_in_order_then_who_played_on() {
    use PlayerStatus::*;
    let table: &[(&[Row], &[u8])] = &[
        // Winners first, the faster first.
        (&[(0, Won, Some(900), 52), (1, Won, Some(500), 52)], &[1, 0]),
        // A winner beats more progress.
        (
            &[(0, Resigned, Some(10), 51), (1, Won, Some(999), 52)],
            &[1, 0],
        ),
        // Then cards in order, whatever ended the race.
        (
            &[
                (0, OutOfTime, Some(1000), 13),
                (1, Stuck, Some(300), 26),
                (2, Left, Some(100), 39),
            ],
            &[2, 1, 0],
        ),
        // As many cards in order: who played to the end ranks above who gave
        // up, however many moves the quitter made (the rule PROTOCOL.md
        // states: a resignation after two moves is not a better race).
        (
            &[
                (0, Resigned, Some(5_000), 0),
                (1, OutOfTime, Some(600_000), 0),
                (2, Left, Some(100), 0),
                (3, Stuck, Some(20_000), 0),
            ],
            &[1, 3, 0, 2],
        ),
        // Both gave up with as many in order: the one who stayed longer.
        (
            &[(0, Resigned, Some(100), 4), (1, Resigned, Some(900), 4)],
            &[1, 0],
        ),
        // Nothing else differs: the seat.
        (&[(1, Stuck, Some(7), 0), (0, Stuck, Some(7), 0)], &[0, 1]),
    ];
    for (rows, expected) in table {
        check(rows, expected);
    }
}

#[test]
fn a_finished_status_survives_leaving() {
    use PlayerStatus::*;
    for (before, after) in [
        (Racing, Left),
        (Waiting, Left),
        (Won, Won),
        (Stuck, Stuck),
        (Resigned, Resigned),
        (OutOfTime, OutOfTime),
    ] {
        assert_eq!(left_unless_finished(before), after);
    }
}

#[test]
fn a_move_on_another_seats_board_is_refused() {
    let (seed, _) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Move {
        conn: 1,
        text: "c1>1".to_string(),
        seat: Some(1),
    })
    .expect("answered");
    assert!(is_refused(
        &Room::to(&room.drain(None), 1),
        ErrorCode::NotYourBoard
    ));
}

#[test]
fn a_suspended_race_runs_again_later_with_its_clock_positions_and_tokens() {
    let (seed, line) = proved();
    let undo = undo_allowed();
    let (mut room, ada_token, bob_token) = Room::racing(undo, seed);
    room.now += 4_000;
    room.play(1, &line[0]);
    room.play(1, &line[1]);
    room.input(Input::Undo { conn: 1 }).expect("answered");
    room.now += 1_000;
    room.play(2, &line[0]);
    room.drain(None);
    let saved = room.core.live_race().expect("a running race is kept");
    assert_eq!(saved.elapsed_ms, 5_000);
    assert_eq!(
        saved.seats[0].log,
        [line[0].clone(), line[1].clone(), "undo".to_string()]
    );
    // Kept on disk as MessagePack, read back the same.
    let bytes = rmp_serde::to_vec_named(&saved).expect("encodes");
    let read: LiveRace = rmp_serde::from_slice(&bytes).expect("decodes");
    assert_eq!(read, saved);

    // The server is down for an hour; none of it is charged.
    let later = room.now + 3_600_000;
    let again =
        RoomCore::restore(read, settings(), counts(), [9; 32], later).expect("the logs replay");
    assert_eq!(again.phase(), Phase::Racing);
    let mut again = Room::around(again, later);
    let issued: Vec<TokenHash> = again
        .drain(None)
        .into_iter()
        .filter_map(|output| match output {
            Output::TokenIssued(hash) => Some(hash),
            _ => None,
        })
        .collect();
    assert_eq!(issued, [token_hash(&ada_token), token_hash(&bob_token)]);
    // The same positions as before the stop.
    let boards = |core: &RoomCore| -> Vec<Option<View>> {
        core.seats
            .iter()
            .map(|seat| seat.position.as_ref().map(Rules::view))
            .collect()
    };
    assert_eq!(boards(&again.core), boards(&room.core));
    // Each seat waits its grace for its player, and the limit is where it was.
    assert_eq!(again.core.poll_timeout(), Some(later + GRACE));
    assert_eq!(
        again.core.race.as_ref().map(|race| race.deadline),
        Some(later - 5_000 + LIMIT)
    );
    again
        .at(
            later + 10,
            Input::Resume {
                conn: 11,
                token: token_hash(&ada_token),
                last_seq: saved.seq,
            },
        )
        .expect("the old token opens the seat");
    let resumed = Room::to(&again.drain(None), 11);
    assert!(matches!(
        resumed.first(),
        Some(ServerMessage::Resumed {
            seat: 0,
            elapsed_ms: Some(5_010),
            ..
        })
    ));
    // And the race goes on from there.
    again.now = later + 20;
    assert!(is_accepted(&Room::to(&again.play(11, &line[1]), 11)));
}

#[test]
fn a_log_that_does_not_replay_is_refused_not_guessed() {
    let (seed, line) = proved();
    let (room, _, _) = Room::racing(RoomOptions::default(), seed);
    let mut saved = room.core.live_race().expect("kept");
    saved.seats[0].log = vec!["undo".to_string()];
    assert!(RoomCore::restore(saved.clone(), settings(), counts(), [0; 32], START).is_err());
    saved.seats[0].log = vec![line[1].clone(), line[1].clone()];
    let refused = RoomCore::restore(saved, settings(), counts(), [0; 32], START);
    assert!(refused.is_err_and(|error| error.code == "ABCDEF"));
}

/// The writes in `outputs`.
fn writes(outputs: &[Output]) -> Vec<Keep> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Keep(write) => Some(write.clone()),
            _ => None,
        })
        .collect()
}

/// Whether `outputs` has anything for a connection (a frame or a kick).
fn tells_anyone(outputs: &[Output]) -> bool {
    outputs.iter().any(|output| {
        matches!(
            output,
            Output::Send { .. }
                | Output::Replay { .. }
                | Output::CatchUp { .. }
                | Output::Kick { .. }
        )
    })
}

#[test]
fn a_race_is_kept_before_it_starts_and_each_move_before_it_is_told() {
    let (seed, line) = proved();
    let mut room = Room::new(2, RoomOptions::default());
    room.join(1, "ada");
    room.input(Input::Join {
        conn: 2,
        name: "bob".to_string(),
        player: None,
        bot: None,
    })
    .expect("joins");
    room.drain(Some(seed));
    room.keeps = false;
    room.advance(COUNTDOWN);
    let started = room.drain(None);
    assert!(
        matches!(writes(&started)[..], [Keep::Race(ref race)] if race.seed == seed && race.seats.len() == 2),
        "{started:?}"
    );
    assert!(
        !tells_anyone(&started),
        "race_started waits for the room to be kept"
    );
    room.input(Input::Kept {
        stored: Stored::Committed,
    })
    .expect("answered");
    assert!(
        room.drain(None)
            .iter()
            .any(|output| matches!(output, Output::Send { .. }))
    );

    // Ada moves, then Bob, before either write commits: both writes go out
    // at once (to share a commit), and each player hears only after its own.
    room.now += 1_500;
    let first = room.play(1, &line[0]);
    room.now += 100;
    let second = room.play(2, &line[0]);
    let expected = |seat, elapsed_ms| {
        Keep::Move(LiveMove {
            seat,
            index: 0,
            text: line[0].clone(),
            elapsed_ms,
            seq: 0,
            epoch: 0,
        })
    };
    let without_seq = |write: Keep| match write {
        Keep::Move(kept) => Keep::Move(LiveMove { seq: 0, ..kept }),
        other => other,
    };
    let issued: Vec<Keep> = writes(&first)
        .into_iter()
        .chain(writes(&second))
        .map(without_seq)
        .collect();
    assert_eq!(issued, [expected(0, 1_500), expected(1, 1_600)]);
    assert!(!tells_anyone(&first) && !tells_anyone(&second));
    room.input(Input::Kept {
        stored: Stored::Committed,
    })
    .expect("answered");
    let told = room.drain(None);
    assert!(is_accepted(&Room::to(&told, 1)));
    assert!(
        !is_accepted(&Room::to(&told, 2)),
        "Bob's write is not committed yet"
    );
    room.input(Input::Kept {
        stored: Stored::Committed,
    })
    .expect("answered");
    assert!(is_accepted(&Room::to(&room.drain(None), 2)));
}

#[test]
fn a_write_refused_closes_the_room_and_its_move_is_never_told() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.keeps = false;
    let played = room.play(1, &line[0]);
    assert_eq!(writes(&played).len(), 1);
    room.input(Input::Kept {
        stored: Stored::Refused,
    })
    .expect("answered");
    let after = room.drain(None);
    assert!(room.core.is_closed());
    for conn in [1, 2] {
        assert!(!is_accepted(&Room::to(&after, conn)));
        assert!(after.iter().any(|output| matches!(
            output,
            Output::Kick { conn: to, code: ErrorCode::Internal, .. } if *to == conn
        )));
    }
    assert!(
        !after
            .iter()
            .any(|output| matches!(output, Output::Send { .. })),
        "nothing that waited for the write is sent: {after:?}"
    );
}

#[test]
fn a_new_resume_token_is_kept_before_the_player_has_it() {
    let (seed, _) = proved();
    let (mut room, ada, _) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Disconnected { conn: 1 })
        .expect("answered");
    room.drain(None);
    room.keeps = false;
    room.input(Input::Resume {
        conn: 11,
        token: token_hash(&ada),
        last_seq: 0,
    })
    .expect("resumes");
    let asked = room.drain(None);
    let [Keep::Race(kept)] = &writes(&asked)[..] else {
        panic!("one write of the room: {asked:?}");
    };
    assert!(
        Room::to(&asked, 11).is_empty(),
        "resumed waits for the write"
    );
    room.input(Input::Kept {
        stored: Stored::Committed,
    })
    .expect("answered");
    let token = Room::to(&room.drain(None), 11)
        .into_iter()
        .find_map(|message| match message {
            ServerMessage::Resumed { resume_token, .. } => Some(resume_token),
            _ => None,
        })
        .expect("resumed");
    assert_eq!(kept.seats[0].token, token_hash(&token));
}

/// What a store keeps of a race from the writes it was sent (in order).
fn store_of(kept: &[Keep]) -> Option<LiveRace> {
    let mut race: Option<LiveRace> = None;
    let mut moves = Vec::new();
    for write in kept {
        match write {
            Keep::Race(saved) => {
                race = Some((**saved).clone());
                moves.clear();
            }
            Keep::Move(kept) => moves.push(kept.clone()),
        }
    }
    race.map(|race| race.with_moves(moves).expect("the moves follow on"))
}

/// Every `seq` of a numbered event in `outputs`.
fn seqs(outputs: &[Output]) -> Vec<u64> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Send { frame, .. } => protocol::decode_server(frame).ok(),
            _ => None,
        })
        .filter_map(|message| match message {
            ServerMessage::RoomUpdate { seq, .. }
            | ServerMessage::MoveAccepted { seq, .. }
            | ServerMessage::Progress { seq, .. }
            | ServerMessage::Finished { seq, .. } => Some(seq),
            _ => None,
        })
        .collect()
}

#[test]
fn a_race_rebuilt_from_what_was_kept_has_every_told_move_and_numbers_past_every_event() {
    let (seed, line) = proved();
    // (moves by Ada, then spectators coming and going): with many events
    // and no move, the room is kept again every `SEQ_CHECKPOINT` events.
    for (moves, churn) in [(5, 0), (3, 2_500), (0, 4_000)] {
        let (mut room, ada, _) = Room::racing(RoomOptions::default(), seed);
        for text in &line[..moves] {
            room.now += 1_000;
            room.play(1, text);
        }
        for conn in 100..100 + churn {
            room.input(Input::Spectate { conn }).expect("watches");
            room.input(Input::Leave { conn }).expect("answered");
            room.drain(None);
        }
        let kept = store_of(&writes(&room.taken)).expect("the race was kept");
        assert_eq!(
            kept.seats[0].log,
            line[..moves],
            "moves {moves}, churn {churn}"
        );
        let sent = seqs(&room.taken).into_iter().max().unwrap_or(0);
        // The server dies here; another runs the race from the store.
        let restored =
            RoomCore::restore(kept, settings(), counts(), [3; 32], room.now).expect("rebuilds");
        let mut again = Room::around(restored, room.now);
        again.drain(None);
        again
            .input(Input::Resume {
                conn: 11,
                token: token_hash(&ada),
                last_seq: sent,
            })
            .expect("resumes");
        let after = again.drain(None);
        let next = seqs(&after).into_iter().min().expect("an event follows");
        assert!(
            next > sent,
            "moves {moves}, churn {churn}: {next} after {sent}"
        );
        assert_eq!(
            again.core.seats[0].log, room.core.seats[0].log,
            "the same position"
        );
    }
}

#[test]
fn a_race_won_by_a_move_kept_just_before_the_crash_ends_when_it_is_rebuilt() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.input(Input::Resign { conn: 2 }).expect("answered");
    let (last, rest) = line.split_last().expect("a line");
    for text in rest {
        room.now += 100;
        room.play(1, text);
    }
    // The winning move is kept; the server dies before the race's end is.
    let saved = room.core.live_race().expect("kept");
    let winning = LiveMove {
        seat: 0,
        index: u32::try_from(rest.len()).expect("short"),
        text: last.clone(),
        elapsed_ms: saved.elapsed_ms + 100,
        seq: saved.seq + 1,
        epoch: saved.epoch,
    };
    let kept = saved.with_moves(vec![winning]).expect("follows on");
    let restored = RoomCore::restore(kept, settings(), counts(), [5; 32], room.now + 60_000)
        .expect("rebuilds");
    let mut again = Room::around(restored, room.now + 60_000);
    let outputs = again.drain(None);
    let stored = outputs.iter().find_map(|output| match output {
        Output::StoreRace(race) => Some(race),
        _ => None,
    });
    let stored = stored.expect("the race ends at once");
    let winner = &stored.result.standings[0];
    assert_eq!((winner.seat, winner.status), (0, PlayerStatus::Won));
    assert_eq!(winner.progress.elapsed_ms, room.core.elapsed_ms() + 100);
    assert_eq!(stored.result.logs[0].moves, line);
}

/// The moves `conn` was told were accepted in `outputs`: each text with
/// the race clock it was accepted at.
fn accepted(outputs: &[Output], conn: ConnId) -> Vec<(String, u64)> {
    Room::to(outputs, conn)
        .into_iter()
        .filter_map(|message| match message {
            ServerMessage::MoveAccepted { text, progress, .. } => Some((text, progress.elapsed_ms)),
            _ => None,
        })
        .collect()
}

/// The texts of [`accepted`].
fn accepted_texts(outputs: &[Output], conn: ConnId) -> Vec<String> {
    accepted(outputs, conn)
        .into_iter()
        .map(|(text, _)| text)
        .collect()
}

/// Whether the numbered events each of `conns` got in `outputs` are in
/// increasing order.
fn numbered_in_order(outputs: &[Output], conns: &[ConnId]) -> bool {
    conns.iter().all(|&conn| {
        let mine: Vec<Output> = outputs
            .iter()
            .filter(|output| matches!(output, Output::Send { conn: to, .. } if *to == conn))
            .cloned()
            .collect();
        seqs(&mine).windows(2).all(|pair| pair[0] < pair[1])
    })
}

fn answer(room: &mut Room, stored: Stored) {
    room.input(Input::Kept { stored }).expect("answered");
}

#[test]
fn a_failed_write_is_made_again_after_a_pause_and_what_it_held_goes_out_in_order() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.keeps = false;
    room.now += 1_000;
    let first = room.play(1, &line[0]);
    let second = room.play(2, &line[0]);
    assert_eq!(writes(&first).len() + writes(&second).len(), 2);
    // The store is out: the oldest write fails, and with it the other.
    answer(&mut room, Stored::Failed);
    let failed_at = room.now;
    assert!(room.core.is_waiting_for_store());
    assert_eq!(
        room.core.poll_timeout(),
        Some(failed_at + RETRY_PAUSE_MIN_MS)
    );
    // A move while the room waits is counted, neither written nor told.
    room.now += 50;
    let third = room.play(1, &line[1]);
    assert!(
        writes(&third).is_empty() && !tells_anyone(&third),
        "{third:?}"
    );
    assert_eq!(room.core.unkept_writes(), 3);

    // The first attempt, the race whole, fails too: the pause doubles.
    room.advance(RETRY_PAUSE_MIN_MS - 50);
    let again = room.drain(None);
    assert!(
        matches!(writes(&again)[..], [Keep::Race(_)]) && !tells_anyone(&again),
        "{again:?}"
    );
    answer(&mut room, Stored::Failed);
    assert_eq!(
        room.core.poll_timeout(),
        Some(room.now + 2 * RETRY_PAUSE_MIN_MS)
    );
    room.advance(2 * RETRY_PAUSE_MIN_MS);
    let retried = room.drain(None);
    let [Keep::Race(race)] = &writes(&retried)[..] else {
        panic!("the race written again, whole: {retried:?}");
    };
    assert_eq!(race.seats[0].log, line[..2]);
    assert_eq!(race.seats[1].log, line[..1]);
    assert!(!tells_anyone(&retried));
    let metrics = Arc::clone(&room.counts);
    assert_eq!(metrics.store_retries.load(Ordering::Relaxed), 2);
    assert_eq!(metrics.rooms_waiting_for_store.load(Ordering::Relaxed), 1);

    // It commits: everything held goes out, in order.
    answer(&mut room, Stored::Committed);
    let told = room.drain(None);
    assert_eq!(accepted_texts(&told, 1), line[..2]);
    assert_eq!(accepted_texts(&told, 2), line[..1]);
    assert!(numbered_in_order(&told, &[1, 2]), "{told:?}");
    assert!(!room.core.is_waiting_for_store());
    assert_eq!(metrics.rooms_waiting_for_store.load(Ordering::Relaxed), 0);
    assert_eq!(room.core.unkept_writes(), 0);
    // And writes go out at once again.
    let next = room.play(2, &line[1]);
    assert!(matches!(writes(&next)[..], [Keep::Move(_)]), "{next:?}");
}

#[test]
fn a_later_write_never_goes_out_before_an_earlier_one_that_failed() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    let started = writes(&room.taken);
    room.keeps = false;
    room.now += 1_000;
    room.play(1, &line[0]);
    // Bob's move is made, and its write asked for, but the shell has not
    // taken it yet when Ada's fails: it is lost with hers.
    room.input(Input::Move {
        conn: 2,
        text: line[0].clone(),
        seat: None,
    })
    .expect("answered");
    answer(&mut room, Stored::Failed);
    let after = room.drain(None);
    assert!(writes(&after).is_empty(), "{after:?}");
    // Nor does a write of a move made while the room waits go out.
    room.now += 10;
    let during = room.play(1, &line[1]);
    assert!(writes(&during).is_empty(), "{during:?}");

    room.advance(RETRY_PAUSE_MIN_MS);
    let retried = writes(&room.drain(None));
    assert_eq!(retried.len(), 1, "one write carries them all");
    answer(&mut room, Stored::Committed);
    let told = room.drain(None);
    // The store has what the writes it committed, in order, say: every
    // move told, with no hole in any log.
    let committed: Vec<Keep> = started.into_iter().chain(retried).collect();
    let stored = store_of(&committed).expect("kept");
    assert_eq!(accepted_texts(&told, 1), line[..2]);
    assert_eq!(accepted_texts(&told, 2), line[..1]);
    assert_eq!(stored.seats[0].log, line[..2]);
    assert_eq!(stored.seats[1].log, line[..1]);
}

#[test]
fn a_room_that_waits_for_the_store_past_its_bound_closes_and_its_race_resumes_from_what_was_kept() {
    let (seed, line) = proved();
    let (mut room, ada, _) = Room::racing(RoomOptions::default(), seed);
    room.keeps = false;
    room.now += 1_000;
    room.play(1, &line[0]);
    answer(&mut room, Stored::Committed);
    assert_eq!(accepted_texts(&room.drain(None), 1), line[..1]);
    let committed = writes(&room.taken);
    room.now += 1_000;
    room.play(1, &line[1]);
    answer(&mut room, Stored::Failed);
    let failed_at = room.now;

    // Every attempt fails, each after a longer pause, up to the cap.
    let mut attempts = Vec::new();
    loop {
        let due = room.core.poll_timeout().expect("a deadline");
        if due >= failed_at + OUTAGE {
            break;
        }
        room.now = due;
        room.core.on_timeout(due);
        let out = room.drain(None);
        assert!(!tells_anyone(&out), "{out:?}");
        if !writes(&out).is_empty() {
            attempts.push(due);
            answer(&mut room, Stored::Failed);
        }
    }
    let pauses: Vec<u64> = std::iter::once(failed_at)
        .chain(attempts.iter().copied())
        .collect::<Vec<_>>()
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .collect();
    assert_eq!(pauses[..5], [100, 200, 400, 800, 1_600]);
    assert!(
        pauses[5..].iter().all(|&pause| pause == RETRY_PAUSE_MAX_MS),
        "{pauses:?}"
    );
    assert!(!room.core.is_closed());

    // The bound: the room closes, and says the race resumes.
    room.now = failed_at + OUTAGE;
    room.core.on_timeout(room.now);
    let closed = room.drain(None);
    assert!(room.core.is_closed());
    for conn in [1, 2] {
        assert!(
            closed.iter().any(|output| matches!(
                output,
                Output::Kick { conn: to, code: ErrorCode::Internal, message }
                    if *to == conn && message.contains("resumes from its last stored move")
            )),
            "{closed:?}"
        );
    }
    assert!(
        !closed
            .iter()
            .any(|output| matches!(output, Output::Send { .. })),
        "nothing held is told: {closed:?}"
    );
    let metrics = &room.counts;
    assert_eq!(
        metrics.store_retries.load(Ordering::Relaxed),
        u64::try_from(attempts.len()).expect("few")
    );
    assert_eq!(metrics.rooms_waiting_for_store.load(Ordering::Relaxed), 0);

    // A server that runs the race again finds every move told.
    let kept = store_of(&committed).expect("kept");
    let later = room.now + 60_000;
    let restored = RoomCore::restore(kept, settings(), counts(), [9; 32], later).expect("rebuilds");
    let mut again = Room::around(restored, later);
    again.drain(None);
    again
        .input(Input::Resume {
            conn: 11,
            token: token_hash(&ada),
            last_seq: 0,
        })
        .expect("the token Ada had opens her seat");
    assert_eq!(again.core.seats[0].log.to_vec(), line[..1]);
}

#[test]
fn the_race_clock_stands_still_while_the_room_waits_for_the_store() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.progress_tick_out_of_the_way();
    let deadline = START + COUNTDOWN + LIMIT;
    room.keeps = false;
    room.now += 1_000;
    room.play(1, &line[0]);
    answer(&mut room, Stored::Failed);
    // The time limit is not a deadline while the clock stands still.
    assert_eq!(
        room.core.poll_timeout(),
        Some(room.now + RETRY_PAUSE_MIN_MS)
    );

    // Ten seconds later: the race was written again meanwhile, and Bob
    // moves, at the moment the wait began on the race clock.
    room.now += 10_000;
    room.core.on_timeout(room.now);
    let retried = writes(&room.drain(None));
    let [Keep::Race(race)] = &retried[..] else {
        panic!("{retried:?}");
    };
    assert_eq!(race.elapsed_ms, 1_000);
    let bob = room.play(2, &line[0]);
    assert!(matches!(writes(&bob)[..], [Keep::Move(ref kept)] if kept.elapsed_ms == 1_000));
    answer(&mut room, Stored::Committed);
    answer(&mut room, Stored::Committed);
    let told = room.drain(None);
    assert_eq!(accepted(&told, 1), [(line[0].clone(), 1_000)]);
    assert_eq!(accepted(&told, 2), [(line[0].clone(), 1_000)]);

    // The clock runs again from there, and the time limit moved with it.
    room.keeps = true;
    room.now += 500;
    let next = room.play(1, &line[1]);
    assert_eq!(accepted(&next, 1), [(line[1].clone(), 1_500)]);
    assert_eq!(room.core.poll_timeout(), Some(deadline + 10_000));
}

/// Whether `outputs` kick both racers `internal` with a text containing
/// `why`, and tell nothing else.
fn kicks_both_saying(outputs: &[Output], why: &str) -> bool {
    let kicked = |conn: ConnId| {
        outputs.iter().any(|output| {
            matches!(
                output,
                Output::Kick { conn: to, code: ErrorCode::Internal, message }
                    if *to == conn && message.contains(why)
                        && message.contains("resumes from its last stored move")
            )
        })
    };
    let sent = outputs
        .iter()
        .any(|output| matches!(output, Output::Send { .. } | Output::Replay { .. }));
    kicked(1) && kicked(2) && !sent
}

#[test]
fn a_write_the_store_never_answers_closes_the_room_at_the_outage_bound() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.progress_tick_out_of_the_way();
    room.keeps = false;
    room.now += 1_000;
    let sent_at = room.now;
    let first = room.play(1, &line[0]);
    assert_eq!(writes(&first).len(), 1);
    // The store neither commits nor fails it (a disk that hangs): the
    // room's next deadline is the bound, well before the time limit.
    assert_eq!(room.core.poll_timeout(), Some(sent_at + OUTAGE));
    // Bob moves meanwhile: judged and written, told nobody.
    room.now += 5_000;
    let second = room.play(2, &line[0]);
    assert!(
        writes(&second).len() == 1 && !tells_anyone(&second),
        "{second:?}"
    );
    assert_eq!(
        room.core.poll_timeout(),
        Some(sent_at + OUTAGE),
        "counted from the oldest write"
    );

    room.now = sent_at + OUTAGE - 1;
    room.core.on_timeout(room.now);
    assert!(!room.core.is_closed() && !tells_anyone(&room.drain(None)));
    room.now += 1;
    room.core.on_timeout(room.now);
    let closed = room.drain(None);
    assert!(room.core.is_closed());
    assert!(
        kicks_both_saying(&closed, "did not answer for 30 s"),
        "{closed:?}"
    );
    // An answer that comes after changes nothing.
    assert!(
        room.input(Input::Kept {
            stored: Stored::Committed
        })
        .is_err()
    );
}

#[test]
fn a_slow_write_answered_within_the_bound_keeps_the_room_and_the_next_counts_afresh() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.progress_tick_out_of_the_way();
    room.keeps = false;
    room.now += 1_000;
    room.play(1, &line[0]);
    room.now += OUTAGE - 1;
    room.core.on_timeout(room.now);
    answer(&mut room, Stored::Committed);
    assert_eq!(accepted_texts(&room.drain(None), 1), line[..1]);
    assert!(!room.core.is_closed());
    let sent_at = room.now;
    room.play(1, &line[1]);
    assert_eq!(room.core.poll_timeout(), Some(sent_at + OUTAGE));
}

#[test]
fn with_no_outage_allowed_an_unanswered_write_still_gets_its_floor() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(RoomOptions::default(), seed);
    room.progress_tick_out_of_the_way();
    room.core.settings.store_outage_ms = 0;
    room.keeps = false;
    room.now += 1_000;
    let sent_at = room.now;
    room.play(1, &line[0]);
    // A slow write is no failure: the room waits its floor for it.
    assert_eq!(
        room.core.poll_timeout(),
        Some(sent_at + UNANSWERED_WRITE_MIN_MS)
    );
    room.now = sent_at + UNANSWERED_WRITE_MIN_MS;
    room.core.on_timeout(room.now);
    assert!(room.core.is_closed());
    assert!(kicks_both_saying(
        &room.drain(None),
        "did not answer for 5 s"
    ));
}

#[test]
fn a_result_the_store_never_answers_is_announced_without_an_id_at_the_bound() {
    let (seed, line) = proved();
    let (mut room, _, _) = Room::racing(no_undo(), seed);
    room.input(Input::Resign { conn: 2 }).expect("answered");
    room.drain(None);
    for text in &line {
        room.play(1, text);
    }
    let asked_at = room.now;
    assert!(
        room.taken
            .iter()
            .any(|output| matches!(output, Output::StoreRace(_)))
    );
    // The store holds the result (a hung disk): the core's next deadline
    // is the bound, not the linger, which waits for the result.
    assert_eq!(room.core.poll_timeout(), Some(asked_at + OUTAGE));
    room.advance(OUTAGE);
    let told = Room::to(&room.drain(None), 1);
    let ended = told
        .iter()
        .find_map(|message| match message {
            ServerMessage::RaceEnded { result, .. } => Some(result),
            _ => None,
        })
        .expect("the end is announced");
    assert_eq!(ended.race_id, None, "as a result that could not be stored");
    assert_eq!(room.counts.storage_errors.load(Ordering::Relaxed), 1);
    assert_eq!(ended.standings[0].status, PlayerStatus::Won);
    // The room then lingers and closes; an answer that comes late
    // announces nothing twice.
    room.input(Input::RaceStored { race_id: Some(7) })
        .expect("answered");
    assert!(!tells_anyone(&room.drain(None)));
    room.advance(LINGER);
    assert!(room.core.is_closed());
}

/// A seat taken as a server bot is marked as one in every room message, in
/// the kept race and in the standings; a person's seat never is.
#[test]
fn a_bot_seat_is_marked_in_every_room_message_the_kept_race_and_the_standings() {
    let (seed, _) = proved();
    let mut room = Room::new(2, no_undo());
    room.join(1, "ada");
    room.input(Input::Join {
        conn: 2,
        name: "bot (easy)".to_string(),
        player: None,
        bot: Some(BotLevel::Easy),
    })
    .expect("the bot joins");
    room.drain(Some(seed));
    room.advance(COUNTDOWN);
    assert_eq!(room.core.phase(), Phase::Racing);
    let kept = room.core.live_race().expect("a running race is kept");
    let marks: Vec<Option<BotLevel>> = kept.seats.iter().map(|seat| seat.bot).collect();
    assert_eq!(marks, [None, Some(BotLevel::Easy)]);
    for conn in [1, 2] {
        room.input(Input::Resign { conn }).expect("resigns");
    }
    room.drain(None);
    let _ = room.input(Input::RaceStored { race_id: Some(7) });
    room.drain(None);
    let mut rooms_seen = 0;
    let mut standings_seen = 0;
    for message in Room::to(&room.taken, 1) {
        let (room_info, standings) = match &message {
            ServerMessage::RoomJoined { room, .. } | ServerMessage::RoomUpdate { room, .. } => {
                (Some(room), None)
            }
            ServerMessage::RaceEnded { result, .. } => (None, Some(&result.standings)),
            _ => continue,
        };
        for player in room_info
            .map(|room| room.players.as_slice())
            .unwrap_or_default()
        {
            rooms_seen += 1;
            let expected = (player.seat == 1).then_some(BotLevel::Easy);
            assert_eq!(player.bot, expected, "{message:?}");
        }
        for standing in standings.map(Vec::as_slice).unwrap_or_default() {
            standings_seen += 1;
            let expected = (standing.seat == 1).then_some(BotLevel::Easy);
            assert_eq!(standing.bot, expected, "{message:?}");
        }
    }
    assert!(rooms_seen >= 2, "room messages were checked");
    assert_eq!(standings_seen, 2, "the standings were checked");
}

/// Both racers resign, `first` a second before `second`: the one who played
/// on longer ranks first at equal cards.
fn resign_in_turn(room: &mut Room, first: ConnId, second: ConnId) {
    room.input(Input::Resign { conn: first }).expect("answered");
    room.advance(1_000);
    room.input(Input::Resign { conn: second })
        .expect("answered");
    room.drain(None);
}

/// A two-seat race of a series of `best_of`, ended by both resigning (bob
/// first), the result stored: the room is finished.
fn finished_series(best_of: Option<u8>) -> Room {
    let options = RoomOptions {
        best_of,
        ..RoomOptions::default()
    };
    let (seed, _) = proved();
    let (mut room, _, _) = Room::racing(options, seed);
    resign_in_turn(&mut room, 2, 1);
    room.input(Input::RaceStored { race_id: Some(7) })
        .expect("answered");
    room.drain(None);
    assert_eq!(room.core.phase(), Phase::Finished);
    room
}

/// A rematch offer as the tests compare it: status, accepted, declined,
/// waiting.
type OfferSeats = (RematchStatus, Vec<u8>, Vec<u8>, Vec<u8>);

/// The rematch offers `conn` was told in `outputs`.
fn offers(outputs: &[Output], conn: ConnId) -> Vec<OfferSeats> {
    Room::to(outputs, conn)
        .into_iter()
        .filter_map(|message| match message {
            ServerMessage::RematchOffer { offer, .. } => {
                Some((offer.status, offer.accepted, offer.declined, offer.waiting))
            }
            _ => None,
        })
        .collect()
}

/// What a racer does in a finished room's rematch vote.
#[derive(Clone, Copy, Debug)]
enum Say {
    Accept(ConnId),
    Decline(ConnId),
    Leave(ConnId),
    /// Nothing: only the clock moves.
    Nothing,
}

/// One step of a vote: the milliseconds that pass, then what is said.
type VoteStep = (u64, Say);

/// Plays `steps` in `room`; returns what the last step sent.
fn vote(room: &mut Room, steps: &[VoteStep]) -> Vec<Output> {
    let mut outputs = Vec::new();
    for &(wait_ms, say) in steps {
        room.advance(wait_ms);
        let input = match say {
            Say::Accept(conn) => Some(Input::Rematch { conn, accept: true }),
            Say::Decline(conn) => Some(Input::Rematch {
                conn,
                accept: false,
            }),
            Say::Leave(conn) => Some(Input::Leave { conn }),
            Say::Nothing => None,
        };
        if let Some(input) = input {
            room.input(input).expect("answered");
        }
        outputs = room.drain(None);
    }
    outputs
}

/// A vote in a finished two-seat room (ada on conn 1, bob on conn 2) played
/// `steps`; at the last, racer `told` hears `expected`, and the shell is
/// asked to open the rematch's room only if it is ready.
fn check_vote(best_of: Option<u8>, steps: &[VoteStep], told: ConnId, expected: &[OfferSeats]) {
    let mut room = finished_series(best_of);
    let outputs = vote(&mut room, steps);
    assert_eq!(offers(&outputs, told), expected, "{steps:?}");
    let ready = expected
        .last()
        .is_some_and(|(status, ..)| *status == RematchStatus::Ready);
    let opens = outputs
        .iter()
        .any(|output| matches!(output, Output::OpenRematch(_)));
    assert_eq!(opens, ready, "{steps:?}");
}

#[test]
fn a_rematch_vote_is_ready_declined_or_expired() {
    use RematchStatus::*;
    use Say::*;
    let cases: &[(&[VoteStep], ConnId, OfferSeats)] = &[
        (&[(0, Accept(1))], 2, (Open, vec![0], vec![], vec![1])),
        (
            &[(0, Accept(1)), (REMATCH_WAIT_MS - 1, Accept(2))],
            1,
            (Ready, vec![0, 1], vec![], vec![]),
        ),
        (
            &[(0, Accept(2)), (0, Decline(1))],
            2,
            (Declined, vec![1], vec![0], vec![]),
        ),
        // Proposed again after a decline: a new vote, which runs out while
        // ada says nothing.
        (
            &[
                (0, Accept(2)),
                (0, Decline(1)),
                (0, Accept(2)),
                (REMATCH_WAIT_MS, Nothing),
            ],
            1,
            (Expired, vec![1], vec![], vec![0]),
        ),
        // A racer who leaves declines.
        (
            &[(0, Accept(1)), (0, Leave(2))],
            1,
            (Declined, vec![0], vec![1], vec![]),
        ),
    ];
    for (best_of, (steps, told, expected)) in [None, Some(3)]
        .into_iter()
        .flat_map(|best_of| cases.iter().map(move |case| (best_of, case)))
    {
        check_vote(best_of, steps, *told, std::slice::from_ref(expected));
    }
    // A vote's deadline is the room's next timer.
    let mut room = finished_series(None);
    vote(&mut room, &[(0, Accept(2))]);
    assert_eq!(room.core.poll_timeout(), Some(room.now + REMATCH_WAIT_MS));
}

#[test]
fn a_rematch_every_racer_accepts_opens_a_room_with_the_series_carried_on() {
    let mut room = finished_series(Some(3));
    // The series' point went to the first place: bob resigned first, so
    // ada, who played on, ranks first.
    assert_eq!(
        room.core.info().series.map(|series| series.line()),
        Some("ada 1 - bob 0 (best of 3)".to_string())
    );
    let outputs = vote(
        &mut room,
        &[(0, Say::Accept(1)), (REMATCH_WAIT_MS - 1, Say::Accept(2))],
    );
    let plan = outputs
        .iter()
        .find_map(|output| match output {
            Output::OpenRematch(plan) => Some(plan.clone()),
            _ => None,
        })
        .expect("the shell is asked to open the rematch's room");
    assert_eq!(
        plan.series.as_ref().map(SeriesScore::line),
        Some("ada 1 - bob 0 (best of 3)".to_string())
    );
    room.input(Input::RematchOpened {
        code: Some(Arc::from("NEWONE")),
    })
    .expect("answered");
    let outputs = room.drain(None);
    // Each racer gets its own token; it opens its own seat in the plan.
    for (conn, seat) in [(1, 0), (2, 1)] {
        let token = Room::to(&outputs, conn)
            .into_iter()
            .find_map(|message| match message {
                ServerMessage::RematchReady {
                    code, resume_token, ..
                } if code == "NEWONE" => Some(resume_token),
                _ => None,
            })
            .expect("the new room's code and a token");
        assert_eq!(plan.seats[seat].token, token_hash(&token));
    }

    // The new room: its seats wait for their players, and it counts down
    // once both are back.
    let params = RoomParams {
        code: Arc::from("NEWONE"),
        game: plan.game,
        max_players: 2,
        public: false,
        quick: false,
        options: plan.options,
        series: plan.series.clone(),
    };
    let core = RoomCore::for_rematch(
        params,
        plan.seats.clone(),
        settings(),
        counts(),
        [9; 32],
        room.now,
    );
    let mut rematch = Room::around(core, room.now);
    rematch.drain(None);
    for (conn, seat) in [(11, 0), (12, 1)] {
        assert_eq!(rematch.core.phase(), Phase::Lobby);
        rematch
            .input(Input::Resume {
                conn,
                token: plan.seats[seat].token,
                last_seq: 0,
            })
            .expect("the rematch's token opens the seat");
        rematch.drain(Some(proved().0));
    }
    assert_eq!(rematch.core.phase(), Phase::Countdown);
    rematch.advance(COUNTDOWN);
    // Bob resigns after ada this time: bob ranks first, 1 - 1.
    resign_in_turn(&mut rematch, 11, 12);
    assert_eq!(
        rematch.core.info().series.map(|series| series.line()),
        Some("ada 1 - bob 1 (best of 3)".to_string())
    );
}

#[test]
fn a_rematch_is_refused_while_the_race_runs() {
    let (seed, _) = proved();
    let (mut racing, _, _) = Room::racing(no_undo(), seed);
    racing
        .input(Input::Rematch {
            conn: 1,
            accept: true,
        })
        .expect("answered");
    let told = Room::to(&racing.drain(None), 1);
    assert!(
        told.iter().any(|message| matches!(
            message,
            ServerMessage::Error {
                code: ErrorCode::RaceNotStarted,
                ..
            }
        )),
        "{told:?}"
    );
}

#[test]
fn a_series_is_kept_with_the_running_race_and_comes_back_with_it() {
    let options = RoomOptions {
        best_of: Some(5),
        ..RoomOptions::default()
    };
    let (seed, _) = proved();
    let (room, _, _) = Room::racing(options, seed);
    let kept = room.core.live_race().expect("a running race is kept");
    let series = kept.series.clone().expect("with its series");
    assert_eq!(series.line(), "ada 0 - bob 0 (best of 5)");
    let restored =
        RoomCore::restore(kept, settings(), counts(), [3; 32], room.now).expect("rebuilds");
    assert_eq!(restored.info().series, Some(series));
}
