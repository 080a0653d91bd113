//! The daily attempt's rules of time and storage, on a virtual clock:
//! each test feeds inputs at chosen times, answers the store calls the
//! core asks for, and reads what it tells the player.

use std::sync::atomic::Ordering;

use patience_shared::solver::Budget;
use patience_shared::solver::any::first_winnable_deal;

use super::*;
use crate::metrics::RoomCounts;

const START: Millis = 1_000_000;
const LIMIT: Millis = 60_000;
const GAME: GameKind = GameKind::ThreeBlindMice;

/// A Three Blind Mice seed the solver proves, and its winning line.
fn proved() -> (u64, Vec<String>) {
    let deal = first_winnable_deal(GAME, 1.., Budget::positions(200_000))
        .expect("the line replays")
        .expect("a deal is winnable");
    let mut replay = AnyGame::deal(GAME, deal.seed);
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

/// An attempt and the store it writes to: the moves committed, as the
/// store's `record_move` keeps them (a move is written at its place or
/// refused as one the attempt moved on from).
struct Attempt {
    core: DailyCore,
    counts: Arc<RoomCounts>,
    seed: u64,
}

impl Attempt {
    /// The attempt begun at `START` with `moves` stored, opened at `now`.
    fn opened(seed: u64, moves: &[String], now: Millis) -> Attempt {
        let counts = Arc::new(RoomCounts::default());
        let stored = StoredAttempt {
            game: GAME,
            seed,
            started_at_ms: START,
            deadline_ms: START + LIMIT,
            moves,
            move_times_ms: vec![None; moves.len()],
        };
        let metrics: Arc<dyn RoomMetrics> = Arc::clone(&counts) as _;
        let core = DailyCore::replayed(stored, metrics, now).expect("replays");
        Attempt { core, counts, seed }
    }

    /// Everything the core asks for now.
    fn outputs(&mut self) -> Vec<DailyOutput> {
        std::iter::from_fn(|| self.core.poll_output()).collect()
    }

    /// Sends `input` at `now` and takes what it asks for.
    fn input(&mut self, now: Millis, input: DailyInput) -> Vec<DailyOutput> {
        self.core.handle(now, input);
        self.outputs()
    }

    /// Plays `text` at `now`, answering its write from `store`, and
    /// takes everything it asks for.
    fn play(&mut self, now: Millis, text: &str, store: &mut Vec<String>) -> Vec<DailyOutput> {
        let mut taken = self.input(now, move_of(text));
        let mut answered = Vec::new();
        for output in &taken {
            if let DailyOutput::WriteMove(write) = output {
                answered.extend(self.input(now, DailyInput::Written(store_move(store, write))));
            }
        }
        taken.extend(answered);
        taken
    }

    fn accepted(&self) -> u64 {
        self.counts.moves_accepted.load(Ordering::Relaxed)
    }

    fn rejected(&self) -> u64 {
        self.counts.moves_rejected.load(Ordering::Relaxed)
    }
}

/// The store's answer to a move's write: written at its place, or refused
/// if another move is there already.
fn store_move(store: &mut Vec<String>, write: &MoveWrite) -> Written {
    if write.index as usize == store.len() {
        store.push(write.text.clone());
        Written::Committed
    } else {
        Written::MovedOn
    }
}

fn move_of(text: &str) -> DailyInput {
    DailyInput::Move {
        text: text.to_string(),
        seat: None,
    }
}

fn result(status: PlayerStatus) -> CloseAnswer {
    CloseAnswer::Committed(Box::new(DailyResult {
        game: GAME,
        date: "2026-12-06".to_string(),
        status,
        progress: Progress::default(),
        rank: 1,
        finishers: 1,
        race_id: 7,
        unranked: None,
    }))
}

/// The messages among `outputs`.
fn messages(outputs: &[DailyOutput]) -> Vec<&ServerMessage> {
    outputs
        .iter()
        .filter_map(|output| match output {
            DailyOutput::Send(message) => Some(&**message),
            _ => None,
        })
        .collect()
}

/// The refusal's code and message, if `message` is one.
fn refusal(message: &ServerMessage) -> Option<(ErrorCode, &str)> {
    match message {
        ServerMessage::MoveRejected { code, message, .. } => Some((*code, message.as_str())),
        _ => None,
    }
}

#[test]
fn the_time_limit_ends_the_attempt_at_its_own_time_and_the_result_is_told_once_stored() {
    let (seed, line) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    let mut store = Vec::new();
    assert_eq!(attempt.core.poll_timeout(), Some(START + LIMIT));
    attempt.play(START + 1_000, &line[0], &mut store);

    attempt.core.on_timeout(START + LIMIT - 1);
    assert_eq!(attempt.outputs(), []);
    // Woken late: the end is at the time of the wake, its clock stopped at
    // the limit.
    attempt.core.on_timeout(START + LIMIT + 250);
    let close = DailyOutput::Close {
        status: PlayerStatus::OutOfTime,
        at_ms: START + LIMIT + 250,
    };
    assert_eq!(attempt.outputs(), [close]);
    assert_eq!(attempt.core.progress(START + LIMIT + 250).elapsed_ms, LIMIT);
    assert_eq!(attempt.core.poll_timeout(), None, "closing: no wake-up");

    // Released before the player hears: then it may open elsewhere.
    let told = attempt.input(
        START + LIMIT + 300,
        DailyInput::Closed(result(PlayerStatus::OutOfTime)),
    );
    assert_eq!(told[0], DailyOutput::Release);
    assert!(matches!(
        messages(&told)[..],
        [ServerMessage::DailyFinished { .. }]
    ));
    assert!(attempt.core.is_over());
}

#[test]
fn a_move_read_after_the_time_limit_is_refused_whichever_comes_first() {
    let (seed, line) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    // The move comes before the timer: the deadline takes effect first.
    let outputs = attempt.input(START + LIMIT, move_of(&line[0]));
    assert_eq!(
        outputs[0],
        DailyOutput::Close {
            status: PlayerStatus::OutOfTime,
            at_ms: START + LIMIT,
        }
    );
    assert_eq!(
        refusal(messages(&outputs)[0]),
        Some((ErrorCode::RaceOver, "your time is up"))
    );
    assert!(attempt.core.moves().is_empty());
    assert_eq!((attempt.accepted(), attempt.rejected()), (0, 1));
}

#[test]
fn a_move_played_before_the_limit_counts_though_its_write_is_answered_after() {
    let (seed, line) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    let played = START + LIMIT - 10;
    let outputs = attempt.input(played, move_of(&line[0]));
    assert!(matches!(outputs[..], [DailyOutput::WriteMove(_)]));
    assert_eq!(attempt.core.poll_timeout(), None, "a write is unanswered");
    // Meanwhile the player resigns: held until the write is answered, and
    // judged then at its own time, after the limit.
    assert_eq!(attempt.input(START + LIMIT + 5, DailyInput::Resign), []);
    let outputs = attempt.input(START + LIMIT + 50, DailyInput::Written(Written::Committed));
    let ServerMessage::MoveAccepted { seq, progress, .. } = messages(&outputs)[0] else {
        panic!("the move is acknowledged first: {outputs:?}");
    };
    assert_eq!((*seq, progress.elapsed_ms), (1, LIMIT - 10));
    assert_eq!(
        outputs.last(),
        Some(&DailyOutput::Close {
            status: PlayerStatus::OutOfTime,
            at_ms: START + LIMIT + 5,
        }),
        "the limit came before the resignation"
    );
}

#[test]
fn resigning_ends_the_attempt_and_a_close_the_store_failed_leaves_it_open() {
    let (seed, _) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    let resign = |attempt: &mut Attempt, now| attempt.input(now, DailyInput::Resign);
    let closing = |at_ms| DailyOutput::Close {
        status: PlayerStatus::Resigned,
        at_ms,
    };
    assert_eq!(resign(&mut attempt, START + 10), [closing(START + 10)]);
    let failed = CloseAnswer::Failed {
        message: "the database is down".to_string(),
    };
    let outputs = attempt.input(START + 20, DailyInput::Closed(failed));
    assert!(matches!(
        messages(&outputs)[..],
        [ServerMessage::Error {
            code: ErrorCode::Internal,
            ..
        }]
    ));
    assert!(!attempt.core.is_over());
    assert_eq!(attempt.core.poll_timeout(), Some(START + LIMIT));

    // Again; the sweeper closed it meanwhile: the player is told it is over.
    assert_eq!(resign(&mut attempt, START + 30), [closing(START + 30)]);
    let outputs = attempt.input(START + 40, DailyInput::Closed(CloseAnswer::NotOpen));
    assert_eq!(outputs[0], DailyOutput::Release);
    assert!(matches!(
        messages(&outputs)[..],
        [ServerMessage::Error {
            code: ErrorCode::RaceOver,
            ..
        }]
    ));
    assert_eq!(attempt.counts.storage_errors.load(Ordering::Relaxed), 1);
}

#[test]
fn a_close_at_the_limit_the_store_failed_is_made_again_after_a_pause() {
    let (seed, line) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    attempt.core.on_timeout(START + LIMIT);
    assert_eq!(attempt.outputs().len(), 1);
    let failed = CloseAnswer::Failed {
        message: "the database is down".to_string(),
    };
    attempt.input(START + LIMIT, DailyInput::Closed(failed));
    let again = START + LIMIT + CLOSE_RETRY_PAUSE_MS;
    assert_eq!(attempt.core.poll_timeout(), Some(again));
    attempt.core.on_timeout(again - 1);
    assert_eq!(attempt.outputs(), []);
    // A move meanwhile is still after the limit: refused, and the close is
    // made again at once.
    let outputs = attempt.input(again - 1, move_of(&line[0]));
    assert!(matches!(outputs[0], DailyOutput::Close { .. }));
    assert_eq!(
        refusal(messages(&outputs)[0]),
        Some((ErrorCode::RaceOver, "your time is up"))
    );
}

#[test]
fn a_move_whose_write_failed_is_taken_back_and_refused_and_may_be_played_again() {
    let (seed, line) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    let dealt = attempt.core.view();
    let outputs = attempt.input(START + 100, move_of(&line[0]));
    let write = MoveWrite {
        index: 0,
        text: line[0].clone(),
        at_ms: START + 100,
    };
    assert_eq!(outputs, [DailyOutput::WriteMove(write)]);
    let failed = Written::Failed {
        message: "try the move again".to_string(),
    };
    let outputs = attempt.input(START + 150, DailyInput::Written(failed));
    assert_eq!(
        refusal(messages(&outputs)[0]),
        Some((ErrorCode::Internal, "try the move again"))
    );
    assert_eq!(attempt.core.view(), dealt, "taken back");
    assert!(attempt.core.moves().is_empty());
    assert!(attempt.core.move_times_ms().is_empty());
    assert!(!attempt.core.is_over());

    let mut store = Vec::new();
    let outputs = attempt.play(START + 200, &line[0], &mut store);
    assert!(matches!(
        messages(&outputs)[..],
        [ServerMessage::MoveAccepted { seq: 1, .. }]
    ));
    assert_eq!(store, [line[0].clone()]);
    assert_eq!(attempt.core.move_times_ms(), [Some(START + 200)]);
    assert_eq!((attempt.accepted(), attempt.rejected()), (1, 1));
    assert_eq!(attempt.counts.storage_errors.load(Ordering::Relaxed), 1);
}

#[test]
fn a_move_the_sweeper_closed_the_attempt_under_is_refused_and_the_attempt_let_go() {
    let (seed, line) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    attempt.input(START + 100, move_of(&line[0]));
    let outputs = attempt.input(START + 150, DailyInput::Written(Written::NotOpen));
    assert_eq!(outputs[0], DailyOutput::Release);
    assert_eq!(
        refusal(messages(&outputs)[0]),
        Some((ErrorCode::RaceOver, "your daily attempt is over"))
    );
    assert!(attempt.core.is_over());
    assert_eq!(attempt.core.poll_timeout(), None);
}

#[test]
fn a_connection_that_took_the_attempt_over_plays_on_and_the_stale_one_opens_it_again() {
    let (seed, line) = proved();
    let mut store = vec![line[0].clone()];
    // The first connection played a move; a second one took the attempt
    // over from the store, and plays on.
    let mut stale = Attempt::opened(seed, &store, START + 1_000);
    let mut newest = Attempt::opened(seed, &store, START + 2_000);
    let outputs = newest.play(START + 3_000, &line[1], &mut store);
    assert!(matches!(
        messages(&outputs)[..],
        [ServerMessage::MoveAccepted { seq: 2, .. }]
    ));

    // The stale copy's move lands where the store has one already.
    let outputs = stale.play(START + 3_500, &line[1], &mut store);
    assert_eq!(
        refusal(messages(&outputs)[0]),
        Some((
            ErrorCode::Internal,
            "your attempt moved on elsewhere; here it is as stored"
        ))
    );
    assert_eq!(outputs.last(), Some(&DailyOutput::Reopen));
    assert!(stale.core.is_over());
    assert_eq!(stale.core.moves(), [line[0].clone()], "taken back");
    assert_eq!(store, line[..2]);

    // Opened again, it is the attempt as stored.
    let reopened = Attempt::opened(stale.seed, &store, START + 4_000);
    assert_eq!(reopened.core.view(), newest.core.view());
}

#[test]
fn the_winning_move_ends_the_attempt_once_written() {
    let (seed, line) = proved();
    let (last, before) = line.split_last().expect("a line");
    let mut attempt = Attempt::opened(seed, before, START);
    let mut store = before.to_vec();
    let outputs = attempt.play(START + 5_000, last, &mut store);
    assert!(matches!(
        messages(&outputs)[..],
        [ServerMessage::MoveAccepted { .. }]
    ));
    assert_eq!(
        outputs.last(),
        Some(&DailyOutput::Close {
            status: PlayerStatus::Won,
            at_ms: START + 5_000,
        })
    );
    assert_eq!(attempt.core.progress(START + 5_000).elapsed_ms, 5_000);
}

#[test]
fn refusals_are_in_the_protocols_terms_and_leave_the_board_as_it_was() {
    let (seed, line) = proved();
    let mut attempt = Attempt::opened(seed, &[], START);
    let dealt = attempt.core.view();
    let check = |attempt: &mut Attempt, input: DailyInput, code: ErrorCode| {
        let outputs = attempt.input(START + 10, input.clone());
        let codes: Vec<ErrorCode> = messages(&outputs)
            .into_iter()
            .filter_map(|message| refusal(message).map(|(code, _)| code))
            .collect();
        assert_eq!(codes, [code], "{input:?}");
        assert_eq!(outputs.len(), 1, "{input:?}: nothing written");
    };
    check(
        &mut attempt,
        move_of("no such move"),
        ErrorCode::BadNotation,
    );
    check(&mut attempt, move_of("1>1"), ErrorCode::IllegalMove);
    check(&mut attempt, DailyInput::Undo, ErrorCode::UndoNotAllowed);
    let rival_board = DailyInput::Move {
        text: line[0].clone(),
        seat: Some(1),
    };
    check(&mut attempt, rival_board, ErrorCode::NotYourBoard);
    assert_eq!(attempt.core.view(), dealt);
    assert_eq!((attempt.accepted(), attempt.rejected()), (0, 4));
}

#[test]
fn a_stored_move_the_judge_refuses_is_a_corrupt_record() {
    let (seed, line) = proved();
    let moves = vec![line[0].clone(), "1>1".to_string()];
    let stored = StoredAttempt {
        game: GAME,
        seed,
        started_at_ms: START,
        deadline_ms: START + LIMIT,
        moves: &moves,
        move_times_ms: vec![None; 2],
    };
    let error =
        DailyCore::replayed(stored, Arc::new(RoomCounts::default()), START).expect_err("corrupt");
    assert_eq!((error.index, error.text.as_str()), (1, "1>1"));
}
