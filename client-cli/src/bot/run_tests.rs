//! The race loop of [`super::run`] end to end, against the fake server
//! (`crate::fake_server`): the bot's pace, a move whose answer a dropped
//! connection lost (and the wait for it, message by message), and a bot
//! whose every move is refused.
//!
//! The pace: the real loop (its body, [`super::race`], with the real
//! [`super::think_off_runtime`]) races on tokio's paused clock, and the
//! fake server stamps each board it sends and each move it receives with
//! that clock. Nothing sleeps on the wall clock and nothing depends on the
//! machine's speed: the paused clock moves only when every task waits on a
//! timer, to that timer's moment, so a move reaches the server at the time
//! the loop's timer said, to the timer's grain of a millisecond, however
//! long the solver took on the wall clock.
//!
//! The paused clock stands still while the solver runs (on its blocking
//! thread), so the test gives each move's thinking a cost on the runtime's
//! clock: the thinking is the real one, followed by a sleep of that cost
//! (the one seam, `race`'s `think`). Costs shorter than the pace and
//! longer than it tell a move due a pace after the board came (thinking
//! counts toward the pace) from one due a pace after the thinking.
//!
//! One care: when the runtime parks with a timer pending, tokio advances
//! the paused clock to it even if a socket has just become readable (its
//! time driver checks only for a wake from another thread), so a message
//! on its way while a timer is pending can arrive late. The exchange keeps
//! no timer pending while a message is on its way: the bot sets none while
//! it awaits its move's answer, the thinking's sleep starts once the board
//! has come, and the last move is answered without a new board to think
//! about (whose move's timer would race the end of the race).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ClientMessage, ErrorCode, Phase, PlayerInfo, PlayerStatus, Progress, RaceSnapshot, RoomInfo,
    RoomOptions, SeatBoard, ServerMessage,
};
use patience_shared::rules::{Rules as _, View};
use tokio::time::Instant;

use super::{Answer, Bot, BotLevel, Room, human_pace, race, think_off_runtime};
use crate::config::Store;
use crate::fake_server::{self, Reply};
use crate::thinking::think_limit;

/// The bot's pace in the race: its thinking limit is 4 s.
const PACE: Duration = Duration::from_secs(2);

/// What thinking about each board costs on the runtime's clock, in
/// milliseconds, against `human_pace(PACE, n)` of 1,334, 1,414, 2,120,
/// 2,038, 1,574 and 1,384 ms for moves 0 to 5: moves 0, 1, 3 and 5 are
/// thought about in less than their pace (the first in no time), moves 2
/// and 4 in more (move 2 longer than the thinking limit even).
const THINKING_MS: [u64; 6] = [0, 800, 6_000, 1_000, 3_000, 1_200];

/// The timer's grain: a sleep ends on the first millisecond tick at or
/// after its deadline.
const TIMER_GRAIN: Duration = Duration::from_millis(1);

/// When the fake server sent each board and received each move, on the
/// runtime's clock.
#[derive(Debug, Default)]
struct Stamps {
    boards: Vec<Instant>,
    moves: Vec<Instant>,
    /// Anything the fake server did not expect (a refused move...).
    surprises: Vec<String>,
}

fn room() -> RoomInfo {
    RoomInfo {
        code: "K7PQ3M".into(),
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: false,
        options: RoomOptions::default(),
        owner: Some(1),
        phase: Phase::Racing,
        players: vec![PlayerInfo {
            seat: 0,
            name: "bot".into(),
            connected: true,
            status: PlayerStatus::Racing,
            bot: None,
        }],
        spectators: 0,
        series: None,
    }
}

/// A fake server of one race in room K7PQ3M on `deal`: a join gets seat 0
/// and the start of the race; each move is played on the deal and answered
/// with the board after it, but the `moves`-th, answered with the news
/// that the server is stopping, which ends the bot's race. Returns the URL
/// and the stamps.
async fn stamping_server(deal: AnyGame, moves: usize) -> (String, Arc<Mutex<Stamps>>) {
    let stamps = Arc::new(Mutex::new(Stamps::default()));
    let stamped = Arc::clone(&stamps);
    let start = deal.view();
    let mut position = deal;
    let (url, _) = fake_server::start(move |message| {
        let now = Instant::now();
        let mut stamps = stamped.lock().expect("no test thread panicked");
        match message {
            ClientMessage::JoinRoom { .. } => {
                stamps.boards.push(now);
                joined_and_started(&start)
            }
            ClientMessage::Move { text, .. } => {
                stamps.moves.push(now);
                let played = position
                    .parse_move(text)
                    .ok()
                    .and_then(|mv| position.apply(mv).ok());
                let Some(outcome) = played else {
                    stamps.surprises.push(format!("{text} is not legal"));
                    return vec![stopping()];
                };
                let moves_so_far = u32::try_from(stamps.moves.len()).unwrap_or(u32::MAX);
                let board = position.view();
                let accepted = ServerMessage::MoveAccepted {
                    seq: 2 + u64::from(moves_so_far),
                    text: text.clone(),
                    effects: outcome.effects.to_vec(),
                    progress: Progress::measure(&start, &board, moves_so_far, 0),
                    board,
                };
                if stamps.moves.len() < moves {
                    stamps.boards.push(now);
                    vec![accepted]
                } else {
                    // Not the board after the last move, which the bot
                    // would think about and set a timer for: see the
                    // module's doc.
                    vec![stopping()]
                }
            }
            other => {
                stamps.surprises.push(format!("{other:?}"));
                vec![stopping()]
            }
        }
    })
    .await;
    (url, stamps)
}

/// The answer to the bot's join: seat 0 in room K7PQ3M, and the race on
/// `start` under way.
fn joined_and_started(start: &View) -> Vec<ServerMessage> {
    vec![
        ServerMessage::RoomJoined {
            seq: 1,
            room: room(),
            seat: Some(0),
            resume_token: Some("first".into()),
        },
        ServerMessage::RaceStarted {
            seq: 2,
            commitment: "c".into(),
            board: start.clone(),
            time_limit_ms: 600_000,
        },
    ]
}

/// The public [`super::run`] of an Easy bot at pace 0 in room K7PQ3M of
/// the server at `url`.
async fn race_an_easy_bot(url: &str) -> Result<(), crate::net::NetError> {
    super::run(
        url,
        "bot",
        "K7PQ3M",
        Duration::ZERO,
        BotLevel::Easy,
        Store::none(),
        |_| {},
    )
    .await
}

/// What ends the bot's session where the test is over: the seat taken by
/// another connection (`replaced`). Not `shutting_down`: a server stopping
/// mid-race keeps the race, and the session waits for it to come back.
fn stopping() -> ServerMessage {
    ServerMessage::Error {
        code: ErrorCode::Replaced,
        message: "the test is over".into(),
    }
}

/// Each move reaches the server a human pace after the board that asked
/// for it, not before, the first move included; thinking counts toward the
/// pace (a move thought about for less than its pace is due at the pace,
/// one thought about for longer is sent as soon as it is chosen), and the
/// bot thinks within `think_limit(PACE)`.
#[tokio::test(start_paused = true)]
async fn each_move_reaches_the_server_a_human_pace_after_its_board_thinking_included() {
    let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7);
    let (url, stamps) = stamping_server(deal, THINKING_MS.len()).await;
    let limits = Arc::new(Mutex::new(Vec::new()));
    let mut costs = THINKING_MS.iter().map(|&ms| Duration::from_millis(ms));
    let think = {
        let limits = Arc::clone(&limits);
        move |bot: Bot, board: View, limit: Option<Duration>| {
            limits.lock().expect("no test thread panicked").push(limit);
            let cost = costs.next().unwrap_or_default();
            async move {
                let thought = think_off_runtime(bot, board, limit).await;
                tokio::time::sleep(cost).await;
                thought
            }
        }
    };
    let room = Room {
        server: &url,
        name: "bot",
        code: "K7PQ3M",
        store: Store::none(),
    };
    race(room, PACE, BotLevel::Easy, |_| {}, think)
        .await
        .expect("the bot races until the server stops");

    let stamps = stamps.lock().expect("no test thread panicked");
    assert_eq!(stamps.surprises, Vec::<String>::new());
    assert_eq!(
        (stamps.boards.len(), stamps.moves.len()),
        (THINKING_MS.len(), THINKING_MS.len()),
        "a board and a move for each thinking cost"
    );
    for (number, (&cost_ms, (&board, &arrived))) in THINKING_MS
        .iter()
        .zip(stamps.boards.iter().zip(&stamps.moves))
        .enumerate()
    {
        let pace = human_pace(PACE, number as u64);
        let due = pace.max(Duration::from_millis(cost_ms));
        let took = arrived - board;
        assert!(
            took >= due && took <= due + TIMER_GRAIN,
            "move {number}: thought about for {cost_ms} ms at a pace of {pace:?}, \
             due {due:?} after its board, it came {took:?} after"
        );
    }
    let limits = limits.lock().expect("no test thread panicked");
    assert_eq!(
        *limits,
        vec![think_limit(PACE); THINKING_MS.len()],
        "the thinking limit of each move"
    );
    assert_eq!(think_limit(PACE), Some(Duration::from_secs(4)));
}

/// The thinking runs within its limit: with a limit already up when the
/// board comes the bot starts no search and still moves; with a limit far
/// off, or none, it searches. Deterministic: a deadline of zero has passed
/// on any machine, and an hour is never reached by one easy plan.
#[tokio::test]
async fn thinking_off_the_runtime_keeps_to_its_limit() {
    let board = AnyGame::deal(GameKind::ThreeBlindMice, 7).view();
    // (the limit, whether the bot may search)
    let cases = [
        (Some(Duration::ZERO), false),
        (Some(Duration::from_secs(3600)), true),
        (None, true),
    ];
    for (limit, searches) in cases {
        let bot = Bot::new(BotLevel::Easy, 1);
        let (bot, chosen) = think_off_runtime(bot, board.clone(), limit)
            .await
            .expect("the solver does not panic");
        assert!(chosen.is_some(), "{limit:?}: a move");
        assert_eq!(
            bot.searches() > 0,
            searches,
            "{limit:?}: {} searches",
            bot.searches()
        );
    }
}

/// What the fake server says when the bot takes its seat back, after it
/// dropped the connection on the bot's first move without answering it.
#[derive(Clone, Copy, Debug)]
enum AfterTheDrop {
    /// The move was lost on its way: `resumed` with nothing missed.
    NothingMissed,
    /// The move was refused, which is never replayed, and a rival moved:
    /// `resumed`, then the rival's `progress`.
    RivalMovedAfterALostRefusal,
    /// The move was played; the events missed were no longer kept:
    /// `resumed`, then a snapshot.
    Snapshot,
    /// The move was played: `resumed`, then the replayed `move_accepted`.
    AnswerReplayed,
}

/// The longest the resume test waits for the bot: a safety net only.
const PATIENCE: Duration = Duration::from_secs(10);

/// A bot whose move's answer was lost with its connection does not wait
/// for it forever: once the seat is back and the events it missed (if
/// any) are in, it plays on from the board it has, and never sends a move
/// for a board that is no longer its own. Driven through the public
/// [`super::run`] at pace 0; the reconnection waits its 250 ms.
#[tokio::test]
async fn a_move_whose_answer_a_dropped_connection_lost_is_not_awaited_forever() {
    let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7);
    for case in [
        AfterTheDrop::NothingMissed,
        AfterTheDrop::RivalMovedAfterALostRefusal,
        AfterTheDrop::Snapshot,
        AfterTheDrop::AnswerReplayed,
    ] {
        let played = matches!(case, AfterTheDrop::Snapshot | AfterTheDrop::AnswerReplayed);
        let start = deal.view();
        let mut position = deal.clone();
        let mut moves = 0;
        let surprises = Arc::new(Mutex::new(Vec::new()));
        let surprised = Arc::clone(&surprises);
        let (url, _) = fake_server::start_scripted(move |message| {
            let mut surprises = surprised.lock().expect("no test thread panicked");
            let answer = |messages| Reply {
                messages,
                then_drop: false,
            };
            match message {
                ClientMessage::JoinRoom { .. } => answer(joined_and_started(&start)),
                ClientMessage::Move { text, .. } => {
                    moves += 1;
                    let legal = position
                        .parse_move(text)
                        .ok()
                        .and_then(|mv| position.clone().apply(mv).ok().map(|_| mv));
                    let Some(mv) = legal else {
                        surprises.push(format!("move {moves}, {text}, is not legal"));
                        return answer(vec![stopping()]);
                    };
                    if moves > 1 {
                        return answer(vec![stopping()]);
                    }
                    if played {
                        let _ = position.apply(mv);
                    }
                    Reply {
                        messages: Vec::new(),
                        then_drop: true,
                    }
                }
                ClientMessage::Resume { .. } => {
                    let resumed = |seq| ServerMessage::Resumed {
                        seq,
                        room: room(),
                        seat: 0,
                        resume_token: "second".into(),
                        elapsed_ms: Some(1_000),
                    };
                    let board = position.view();
                    let progress = Progress::measure(&start, &board, u32::from(played), 1_000);
                    answer(match case {
                        AfterTheDrop::NothingMissed => vec![resumed(2)],
                        AfterTheDrop::RivalMovedAfterALostRefusal => vec![
                            resumed(3),
                            ServerMessage::Progress {
                                seq: 3,
                                seat: 1,
                                progress: Progress::measure(&start, &start, 1, 900),
                                text: None,
                                board: None,
                            },
                        ],
                        AfterTheDrop::Snapshot => vec![
                            resumed(3),
                            ServerMessage::Snapshot {
                                seq: 3,
                                room: room(),
                                race: Some(RaceSnapshot {
                                    commitment: "c".into(),
                                    elapsed_ms: 1_000,
                                    time_limit_ms: 600_000,
                                    boards: vec![SeatBoard {
                                        seat: 0,
                                        status: PlayerStatus::Racing,
                                        board: Some(board),
                                        progress,
                                    }],
                                    result: None,
                                }),
                            },
                        ],
                        AfterTheDrop::AnswerReplayed => vec![
                            resumed(3),
                            ServerMessage::MoveAccepted {
                                seq: 3,
                                text: "replayed".into(),
                                effects: Vec::new(),
                                board,
                                progress,
                            },
                        ],
                    })
                }
                other => {
                    surprises.push(format!("{other:?}"));
                    answer(vec![stopping()])
                }
            }
        })
        .await;
        let bot = race_an_easy_bot(&url);
        tokio::time::timeout(PATIENCE, bot)
            .await
            .unwrap_or_else(|_| panic!("{case:?}: the bot never moved again"))
            .unwrap_or_else(|error| panic!("{case:?}: {error}"));
        assert_eq!(
            *surprises.lock().expect("no test thread panicked"),
            Vec::<String>::new(),
            "{case:?}"
        );
    }
}

/// A bot whose every move is refused resigns after
/// `REFUSALS_BEFORE_RESIGNING` of them in a row instead of planning again
/// until the race's time limit; it sends nothing after its resignation.
#[tokio::test]
async fn a_bot_refused_move_after_move_resigns() {
    let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7);
    let start = deal.view();
    let received = Arc::new(Mutex::new(Vec::new()));
    let heard = Arc::clone(&received);
    let (url, _) = fake_server::start(move |message| {
        heard
            .lock()
            .expect("no test thread panicked")
            .push(match message {
                ClientMessage::JoinRoom { .. } => "join",
                ClientMessage::Move { .. } => "move",
                ClientMessage::Resign => "resign",
                _ => "something else",
            });
        match message {
            ClientMessage::JoinRoom { .. } => joined_and_started(&start),
            ClientMessage::Move { text, .. } => vec![ServerMessage::MoveRejected {
                text: text.clone(),
                code: ErrorCode::IllegalMove,
                reason: None,
                message: "the server's rules disagree".into(),
            }],
            _ => vec![stopping()],
        }
    })
    .await;
    let bot = race_an_easy_bot(&url);
    tokio::time::timeout(PATIENCE, bot)
        .await
        .expect("the bot never resigned")
        .expect("the bot's race");
    let mut expected = vec!["join"];
    expected.extend((0..super::REFUSALS_BEFORE_RESIGNING).map(|_| "move"));
    expected.push("resign");
    assert_eq!(*received.lock().expect("no test thread panicked"), expected);
}

/// The answer to a move is awaited until it comes, or after a resume
/// until the events missed are in (at once if none was) or a snapshot
/// came: an answer the dropped connection lost is not awaited forever.
#[test]
fn an_answer_is_awaited_until_it_comes_or_the_resume_is_through() {
    #[derive(Clone, Copy, Debug)]
    enum Step {
        Sent,
        Accepted(u64),
        Refused,
        RivalMoved(u64),
        Snapshot(u64),
        Resumed(u64),
    }
    use Step::*;
    let board = AnyGame::deal(GameKind::ThreeBlindMice, 1).view();
    let progress = Progress::measure(&board, &board, 0, 0);
    let message = |step| match step {
        Sent => None,
        Accepted(seq) => Some(ServerMessage::MoveAccepted {
            seq,
            text: "m".into(),
            effects: Vec::new(),
            board: board.clone(),
            progress,
        }),
        Refused => Some(ServerMessage::MoveRejected {
            text: "m".into(),
            code: ErrorCode::IllegalMove,
            reason: None,
            message: "no".into(),
        }),
        RivalMoved(seq) => Some(ServerMessage::Progress {
            seq,
            seat: 1,
            progress,
            text: None,
            board: None,
        }),
        Snapshot(seq) => Some(ServerMessage::Snapshot {
            seq,
            room: room(),
            race: None,
        }),
        Resumed(seq) => Some(ServerMessage::Resumed {
            seq,
            room: room(),
            seat: 0,
            resume_token: "t".into(),
            elapsed_ms: None,
        }),
    };
    // Each step, and whether an answer is awaited after it.
    let cases: [&[(Step, bool)]; 8] = [
        &[(RivalMoved(2), false), (Sent, true), (Accepted(3), false)],
        &[(Sent, true), (RivalMoved(3), true), (Refused, false)],
        // Nothing missed: the move or its refusal was lost.
        &[(RivalMoved(2), false), (Sent, true), (Resumed(2), false)],
        // The events missed are replayed: the answer among them...
        &[
            (RivalMoved(2), false),
            (Sent, true),
            (Resumed(4), true),
            (Accepted(3), false),
            (RivalMoved(4), false),
        ],
        // ...or not: given up after the last.
        &[
            (RivalMoved(2), false),
            (Sent, true),
            (Resumed(4), true),
            (RivalMoved(3), true),
            (RivalMoved(4), false),
        ],
        // The last event missed was another seat's: the next live one.
        &[
            (RivalMoved(2), false),
            (Sent, true),
            (Resumed(5), true),
            (RivalMoved(4), true),
            (RivalMoved(6), false),
        ],
        &[
            (RivalMoved(2), false),
            (Sent, true),
            (Resumed(9), true),
            (Snapshot(9), false),
        ],
        // A resume while nothing was awaited leaves nothing behind.
        &[
            (RivalMoved(2), false),
            (Resumed(9), false),
            (Sent, true),
            (RivalMoved(9), true),
            (RivalMoved(10), true),
            (Accepted(11), false),
        ],
    ];
    for steps in cases {
        let mut answer = Answer::default();
        for (at, &(step, awaited)) in steps.iter().enumerate() {
            match message(step) {
                Some(message) => answer.heard(&message),
                None => answer.sent(),
            }
            assert_eq!(answer.awaited(), awaited, "{steps:?}, step {at}");
        }
    }
}
