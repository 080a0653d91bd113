//! Fair play on the wire: what each recipient receives during a race tells
//! it nothing about a card that it (a racer) or some racer still racing (a
//! spectator, who may be a racer in disguise) has not seen in its own game.
//!
//! For every game, two racers at different paces (Ada turns many cards, Bob
//! few) and two spectators (Carol from the lobby, Dave from mid-race)
//! record every frame of a whole race without open boards; Bob also drops
//! and resumes from nothing mid-race, so his snapshot is checked too. After the reveal the test replays the logs from the revealed
//! seed, which gives, move by move, the cards each racer had seen; each
//! frame is placed at its moment by the room's `seq` (a racer's move is in
//! effect from the `seq` of its `move_accepted`). Then, for every frame
//! before `race_ended`:
//!
//! - no rival's board and no rival's move text (a `progress` carries counts
//!   only; a `snapshot` carries the recipient's own board alone);
//! - every card the frame names (a card field, or a card inside any text)
//!   is one the recipient may know at that moment;
//! - neither the seed nor the salt appears;
//! - every rival's `progress` carries the public `cards_in_order`: the one
//!   computed from the deal as everyone saw it and that racer's board after
//!   that many moves, which looks at no card dealt face down.
//!
//! The check is a function that returns what it found, so the test also
//! plants leaks into a real recording and watches each one be caught.

use std::collections::{BTreeMap, HashSet};

use patience_shared::any::AnyGame;
use patience_shared::card::Card;
use patience_shared::conformance::TestRng;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, RaceResult, RaceSnapshot, RoomOptions, SeatBoard, ServerMessage,
};
use patience_shared::replay;
use patience_shared::rules::{Effect, Rules, View};
use patience_shared::solver::Budget;
use patience_shared::solver::any::first_winnable_deal;
use patience_tests::{Client, SEED_START, SOLVER_BUDGET, seq_of, start_server};
use serde_json::Value;

/// Everything one recipient received, and who it is.
#[derive(Clone)]
struct Recording {
    /// Its name.
    name: &'static str,
    /// Its seat; `None` for a spectator.
    seat: Option<u8>,
    frames: Vec<Vec<u8>>,
}

/// What the check went through.
#[derive(Debug, Default, PartialEq, Eq)]
struct Checked {
    frames: usize,
    cards: usize,
    /// Rivals' `progress` whose counts were checked.
    counts: usize,
}

/// Every card ever face up in one racer's game, after each of its moves:
/// `seen[k]` after `k` moves.
fn seen_after_each_move(game: GameKind, seed: u64, moves: &[String]) -> Vec<HashSet<Card>> {
    let mut position = AnyGame::deal(game, seed);
    let mut seen = face_up(&position);
    let mut history = vec![seen.clone()];
    for text in moves {
        let mv = position.parse_move(text).expect("a logged move parses");
        position.apply(mv).expect("a logged move is legal");
        seen.extend(face_up(&position));
        history.push(seen.clone());
    }
    history
}

fn face_up(position: &AnyGame) -> HashSet<Card> {
    position
        .board()
        .zones
        .into_iter()
        .flat_map(|zone| {
            let first_up = usize::from(zone.face_down).min(zone.cards.len());
            zone.cards[first_up..].to_vec()
        })
        .collect()
}

/// The cards a text names: two-character tokens (rank, lower-case suit)
/// that stand alone, as in `7h>4` or `7h does not go on 9c`, never inside
/// a longer word or a hex string.
fn cards_in_text(text: &str) -> Vec<Card> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(1))
        .filter(|&at| {
            let alone_before = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            let alone_after = bytes
                .get(at + 2)
                .is_none_or(|byte| !byte.is_ascii_alphanumeric());
            alone_before
                && alone_after
                && b"A23456789TJQK".contains(&bytes[at])
                && b"cdhs".contains(&bytes[at + 1])
        })
        .filter_map(|at| text[at..at + 2].parse().ok())
        .collect()
}

/// Every card named anywhere in a decoded frame, and its integers.
fn scan(value: &Value, cards: &mut Vec<Card>, integers: &mut Vec<u64>) {
    match value {
        Value::String(text) => cards.extend(cards_in_text(text)),
        Value::Number(number) => integers.extend(number.as_u64()),
        Value::Array(items) => items.iter().for_each(|item| scan(item, cards, integers)),
        Value::Object(fields) => fields.values().for_each(|item| scan(item, cards, integers)),
        Value::Null | Value::Bool(_) => {}
    }
}

/// Checks every recording against the truth the result reveals.
fn check_fair_play(
    recordings: &[Recording],
    result: &RaceResult,
) -> Result<BTreeMap<&'static str, Checked>, String> {
    let reveal = &result.reveal;
    let seen: BTreeMap<u8, Vec<HashSet<Card>>> = result
        .logs
        .iter()
        .map(|log| {
            (
                log.seat,
                seen_after_each_move(reveal.game, reveal.seed, &log.moves),
            )
        })
        .collect();
    // When each racer's moves took effect, and when each racer finished.
    let mut move_seqs: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
    let mut finished_at: BTreeMap<u8, u64> = BTreeMap::new();
    for recording in recordings {
        for frame in &recording.frames {
            match protocol::decode_server(frame) {
                Ok(ServerMessage::MoveAccepted { seq, .. }) => {
                    let seat = recording.seat.ok_or("a spectator got a move_accepted")?;
                    move_seqs.entry(seat).or_default().push(seq);
                }
                Ok(ServerMessage::Finished { seq, seat, .. }) => {
                    finished_at.entry(seat).or_insert(seq);
                }
                _ => {}
            }
        }
    }
    let seen_at = |seat: u8, seq: u64| -> &HashSet<Card> {
        let played = move_seqs
            .get(&seat)
            .map_or(0, |seqs| seqs.iter().filter(|&&at| at <= seq).count());
        let history = &seen[&seat];
        &history[played.min(history.len() - 1)]
    };
    // Each racer's board after each of its moves, and the deal as every
    // racer saw it first: what a rival's counts are computed from.
    let deal = AnyGame::deal(reveal.game, reveal.seed).view();
    let boards: BTreeMap<u8, Vec<View>> = result
        .logs
        .iter()
        .map(|log| {
            let boards = replay::boards(AnyGame::deal(reveal.game, reveal.seed), &log.moves)
                .map_err(|(index, error)| format!("seat {}'s move {index}: {error}", log.seat))?;
            Ok((log.seat, boards))
        })
        .collect::<Result<_, String>>()?;
    let seed_text = reveal.seed.to_string();
    let mut report = BTreeMap::new();
    for recording in recordings {
        let checked: &mut Checked = report.entry(recording.name).or_default();
        let mut seq = 0;
        for frame in &recording.frames {
            let message = protocol::decode_server(frame)
                .map_err(|error| format!("an undecodable frame: {error}"))?;
            if let Some(at) = seq_of(&message) {
                seq = at;
            }
            // From the end on, everything is public.
            if matches!(
                &message,
                ServerMessage::RaceEnded { .. }
                    | ServerMessage::Snapshot {
                        race: Some(RaceSnapshot {
                            result: Some(_),
                            ..
                        }),
                        ..
                    }
            ) {
                break;
            }
            let whose = |seat: u8| recording.seat == Some(seat);
            match &message {
                ServerMessage::Progress {
                    seat, text, board, ..
                } if !whose(*seat) && (text.is_some() || board.is_some()) => {
                    return Err(format!(
                        "{} got a rival's move text or board: {message:?}",
                        recording.name
                    ));
                }
                ServerMessage::Progress { seat, progress, .. } if !whose(*seat) => {
                    let board = boards
                        .get(seat)
                        .and_then(|boards| boards.get(usize::try_from(progress.moves).ok()?))
                        .ok_or_else(|| {
                            format!(
                                "{} got a progress past the log: {message:?}",
                                recording.name
                            )
                        })?;
                    let public = protocol::cards_in_order(&deal, board);
                    if progress.cards_in_order != public {
                        return Err(format!(
                            "{} got seat {seat}'s cards in order {}, not the public count {public}: {message:?}",
                            recording.name, progress.cards_in_order
                        ));
                    }
                    checked.counts += 1;
                }
                ServerMessage::Snapshot {
                    race: Some(race), ..
                } => {
                    if let Some(SeatBoard { seat, .. }) = race
                        .boards
                        .iter()
                        .find(|board| board.board.is_some() && !whose(board.seat))
                    {
                        return Err(format!(
                            "{} got seat {seat}'s board in a snapshot",
                            recording.name
                        ));
                    }
                }
                _ => {}
            }
            // What this recipient may know now: a racer, its own cards; a
            // spectator, only the cards every racer still racing has seen.
            let allowed: HashSet<Card> = match recording.seat {
                Some(seat) => seen_at(seat, seq).clone(),
                None => {
                    let racing: Vec<u8> = seen
                        .keys()
                        .copied()
                        .filter(|seat| finished_at.get(seat).is_none_or(|&end| end > seq))
                        .collect();
                    let judges = if racing.is_empty() {
                        seen.keys().copied().collect()
                    } else {
                        racing
                    };
                    let mut sets = judges.iter().map(|&seat| seen_at(seat, seq));
                    let first = sets.next().cloned().unwrap_or_default();
                    sets.fold(first, |known, set| &known & set)
                }
            };
            let value: Value = rmp_serde::from_slice(frame).map_err(|error| error.to_string())?;
            let (mut cards, mut integers) = (Vec::new(), Vec::new());
            scan(&value, &mut cards, &mut integers);
            if let Some(card) = cards.iter().find(|card| !allowed.contains(card)) {
                return Err(format!(
                    "{} was told of {card}, which it may not know at seq {seq}: {value}",
                    recording.name
                ));
            }
            let raw = String::from_utf8_lossy(frame);
            if integers.contains(&reveal.seed) && reveal.seed > u64::from(u32::MAX)
                || raw.contains(&seed_text) && seed_text.len() > 6
                || raw.contains(&reveal.salt)
            {
                return Err(format!(
                    "{} got the seed or the salt before the end: {value}",
                    recording.name
                ));
            }
            checked.frames += 1;
            checked.cards += cards.len();
        }
    }
    Ok(report)
}

/// The first seed a test server deals for `game`, found as the server finds it.
fn first_seed(game: GameKind) -> u64 {
    first_winnable_deal(game, SEED_START.., Budget::positions(SOLVER_BUDGET))
        .expect("the solver's line replays")
        .expect("a winnable deal exists")
        .seed
}

/// Whether a move turns a card: up from face down, off the stock.
fn turns_a_card(position: &AnyGame, mv: patience_shared::any::AnyMove) -> bool {
    let mut trial = position.clone();
    trial.apply(mv).is_ok_and(|outcome| {
        outcome.effects.iter().any(|effect| {
            matches!(
                effect,
                Effect::TurnedUp { .. } | Effect::Drew { .. } | Effect::Dealt { .. }
            )
        })
    })
}

/// A race of `game` played by Ada (a move that turns a card whenever there
/// is one) and Bob (a move every fourth turn, never one that turns a card
/// when he has another), watched by Carol from the lobby on and by Dave from
/// the middle of the race. Returns the four recordings and the result.
async fn record_race(game: GameKind, options: RoomOptions) -> (Vec<Recording>, RaceResult) {
    let seed = tokio::task::spawn_blocking(move || first_seed(game))
        .await
        .expect("the solver thread");
    let server = start_server(|config| {
        config.deal_games = vec![game];
        // Too few to replay a resume from the start: it gets a snapshot.
        config.event_log_capacity = 16;
    })
    .await;
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    let mut carol = Client::hello(&server, "carol").await;
    ada.send(&ClientMessage::CreateRoom {
        game,
        max_players: 2,
        public: false,
        options,
        bots: Vec::new(),
    })
    .await;
    let ServerMessage::RoomJoined { room, .. } = ada.recv().await else {
        panic!("room_joined expected");
    };
    let code = room.code;
    carol
        .send(&ClientMessage::Spectate { code: code.clone() })
        .await;
    carol
        .recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await;
    let (_, bob_token) = bob.join_room(&code).await;
    for client in [&mut ada, &mut bob, &mut carol] {
        client.race_started().await;
    }
    let mut positions = [AnyGame::deal(game, seed), AnyGame::deal(game, seed)];
    let mut racing = [true, true];
    let mut rng = TestRng::new(game.decks() as u64 * 7 + 3);
    let mut legal = Vec::new();
    let mut dave = None;
    let mut bob_before_drop = None;
    let mut played = [0u32; 2];
    for step in 0..120 {
        if step == 60 && racing[1] {
            // Bob loses his connection and resumes from nothing (the test
            // server keeps too few events to replay them): the snapshot he
            // gets must carry his own board alone.
            let mut back = Client::hello(&server, "bob").await;
            back.send(&ClientMessage::Resume {
                token: bob_token.clone(),
                last_seq: 0,
            })
            .await;
            back.recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
                .await;
            bob_before_drop = Some(std::mem::replace(&mut bob, back).frames);
        }
        if step == 30 {
            // A second spectator arrives mid-race: its snapshot is checked too.
            let mut late = Client::hello(&server, "dave").await;
            late.send(&ClientMessage::Spectate { code: code.clone() })
                .await;
            late.recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
                .await;
            dave = Some(late);
        }
        let seat = usize::from(step % 4 == 3);
        if !racing[seat] {
            continue;
        }
        positions[seat].legal_moves(&mut legal);
        let (turning, quiet): (Vec<_>, Vec<_>) = legal
            .iter()
            .partition(|&&mv| turns_a_card(&positions[seat], mv));
        let pick = |moves: &[_], rng: &mut TestRng| moves[rng.below(moves.len())];
        let mv = match (seat, turning.is_empty(), quiet.is_empty()) {
            (_, true, true) => continue,
            (0, false, _) | (1, false, true) => pick(&turning, &mut rng),
            _ => pick(&quiet, &mut rng),
        };
        let text = positions[seat].format_move(mv);
        positions[seat].apply(mv).expect("a legal move");
        let mover = if seat == 0 { &mut ada } else { &mut bob };
        mover.play(&text).await;
        let answer = mover.move_answer().await;
        assert!(
            matches!(answer, ServerMessage::MoveAccepted { .. }),
            "{text}: {answer:?}"
        );
        // The spectators watch as people do, each move as it comes, so that
        // none falls behind and is coalesced.
        played[seat] += 1;
        let moved = u8::try_from(seat).expect("two seats");
        for watcher in std::iter::once(&mut carol).chain(dave.as_mut()) {
            watcher
                .recv_until(|message| {
                    matches!(message, ServerMessage::Progress { seat, progress, .. }
                        if *seat == moved && progress.moves == played[usize::from(*seat)])
                })
                .await;
        }
        if positions[seat].is_won() || positions[seat].is_stuck() {
            racing[seat] = false;
        }
    }
    for (seat, client) in [&mut ada, &mut bob].into_iter().enumerate() {
        if racing[seat] {
            client.send(&ClientMessage::Resign).await;
        }
    }
    let mut dave = dave.expect("Dave came to watch");

    let mut result = None;
    for client in [&mut ada, &mut bob, &mut carol, &mut dave] {
        if let ServerMessage::RaceEnded { result: ended, .. } = client
            .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
            .await
        {
            result = Some(ended);
        }
    }
    let result = result.expect("the race ended");
    assert_eq!(result.reveal.seed, seed);
    // The replay is the race as announced: every board, move and count,
    // and the open-boards mark.
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
    server.shutdown().await;
    let bobs = match bob_before_drop {
        Some(before) => vec![("bob", before), ("bob resumed", bob.frames)],
        None => vec![("bob", bob.frames)],
    };
    let recordings = std::iter::once(("ada", Some(0), ada.frames))
        .chain(
            bobs.into_iter()
                .map(|(name, frames)| (name, Some(1), frames)),
        )
        .chain([("carol", None, carol.frames), ("dave", None, dave.frames)])
        .map(|(name, seat, frames)| Recording { name, seat, frames })
        .collect();
    (recordings, result)
}

/// Plants each kind of leak into a copy of a clean recording and checks
/// that the fair-play check refuses it.
fn planted_leaks_are_caught(recordings: &[Recording], result: &RaceResult) {
    let game = result.reveal.game;
    let deal = AnyGame::deal(game, result.reveal.seed);
    // A card Bob never saw (either copy, in a two-deck game).
    let bob_log = &result.logs[1].moves;
    let bob_saw = seen_after_each_move(game, result.reveal.seed, bob_log)
        .pop()
        .unwrap_or_default();
    let secret = deal
        .board()
        .zones
        .iter()
        .flat_map(|zone| zone.cards.clone())
        .find(|card| !bob_saw.contains(card))
        .expect("Bob left some card unseen");
    // Bob's last connection, the one that saw the end.
    let bob = recordings
        .iter()
        .rfind(|recording| recording.seat == Some(1))
        .map_or("bob", |recording| recording.name);
    let plant = |recipient: &str, message: ServerMessage| {
        let mut planted = recordings.to_vec();
        let frames = &mut planted
            .iter_mut()
            .find(|recording| recording.name == recipient)
            .expect("a recording of that name")
            .frames;
        let end = frames
            .iter()
            .position(|frame| {
                matches!(
                    protocol::decode_server(frame),
                    Ok(ServerMessage::RaceEnded { .. })
                )
            })
            .expect("the race's end was recorded");
        frames.insert(end, protocol::encode(&message));
        check_fair_play(&planted, result)
    };
    let progress = |text: Option<String>, board| ServerMessage::Progress {
        seq: 1,
        seat: 0,
        progress: Default::default(),
        text,
        board,
    };
    // A count that looks at a card dealt face down (a King laid bare, say)
    // is not the public one: one more than the deal's own.
    let counted_a_hidden_card = ServerMessage::Progress {
        seq: 1,
        seat: 0,
        progress: protocol::Progress {
            cards_in_order: protocol::cards_in_order(&deal.view(), &deal.view()) + 1,
            ..Default::default()
        },
        text: None,
        board: None,
    };
    let leaks = [
        ("carol", counted_a_hidden_card),
        (bob, progress(None, Some(deal.view()))),
        ("carol", progress(Some("s".to_string()), None)),
        (
            bob,
            ServerMessage::Error {
                code: ErrorCode::Internal,
                message: format!("the next card is {secret}"),
            },
        ),
        (
            "dave",
            ServerMessage::Error {
                code: ErrorCode::Internal,
                message: format!("seed {} salt {}", result.reveal.seed, result.reveal.salt),
            },
        ),
    ];
    for (recipient, leak) in leaks {
        assert!(
            plant(recipient, leak.clone()).is_err(),
            "the check missed a planted leak to recording {recipient}: {leak:?}"
        );
    }
}

async fn fair_play_holds_for(game: GameKind) -> BTreeMap<&'static str, Checked> {
    let (recordings, result) = record_race(game, RoomOptions::default()).await;
    assert!(!result.open_boards);
    let checked = check_fair_play(&recordings, &result).unwrap_or_else(|leak| panic!("{leak}"));
    let turned = |seat: u8| {
        result
            .standings
            .iter()
            .find(|standing| standing.seat == seat)
            .map_or(0, |standing| {
                standing.progress.cards_uncovered + standing.progress.stock_turned
            })
    };
    assert!(
        turned(0) > turned(1) && !result.logs[1].moves.is_empty(),
        "two paces: Ada turned {} cards, Bob {} in {} moves",
        turned(0),
        turned(1),
        result.logs[1].moves.len()
    );
    for (recipient, counts) in &checked {
        assert!(counts.frames > 10, "{recipient:?} checked {counts:?}");
    }
    assert!(
        checked["carol"].counts > 0,
        "a spectator's progress counts were checked: {checked:?}"
    );
    println!("{game}: frames and cards checked per recipient {checked:?}");
    planted_leaks_are_caught(&recordings, &result);
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_blind_mice_racers_learn_no_card_from_each_other() {
    fair_play_holds_for(GameKind::ThreeBlindMice).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indian_racers_learn_no_card_from_each_other() {
    fair_play_holds_for(GameKind::Indian).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn midshipman_racers_learn_no_card_from_each_other() {
    fair_play_holds_for(GameKind::Midshipman).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn virginia_reel_racers_learn_no_card_from_each_other() {
    fair_play_holds_for(GameKind::VirginiaReel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_boards_show_every_board_live_and_say_so() {
    let options = RoomOptions {
        open_boards: true,
        ..RoomOptions::default()
    };
    let (recordings, result) = record_race(GameKind::ThreeBlindMice, options).await;
    assert!(result.open_boards, "the result is marked");
    let carol: Vec<ServerMessage> = recordings
        .iter()
        .find(|recording| recording.name == "carol")
        .expect("Carol watched")
        .frames
        .iter()
        .filter_map(|frame| protocol::decode_server(frame).ok())
        .collect();
    assert!(carol.iter().any(|message| matches!(
        message,
        ServerMessage::RoomUpdate { room, .. } if room.options.open_boards
    )));
    let shown = carol
        .iter()
        .filter(|message| {
            matches!(
                message,
                ServerMessage::Progress {
                    text: Some(_),
                    board: Some(_),
                    ..
                }
            )
        })
        .count();
    let played: usize = result.logs.iter().map(|log| log.moves.len()).sum();
    assert_eq!(shown, played, "the spectator saw every move and board");
    assert!(
        check_fair_play(&recordings, &result).is_err(),
        "open boards do show rivals' cards"
    );
}

#[tokio::test]
async fn open_boards_rooms_are_private() {
    let server = start_server(|_| {}).await;
    let mut ada = Client::hello(&server, "ada").await;
    ada.send(&ClientMessage::CreateRoom {
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: true,
        options: RoomOptions {
            open_boards: true,
            ..RoomOptions::default()
        },
        bots: Vec::new(),
    })
    .await;
    assert_eq!(ada.next_error().await, ErrorCode::InvalidRequest);
    server.shutdown().await;
}

/// A room with a server bot: the person racing it and a spectator learn no
/// card the rule keeps from them (the bot's board and moves stay the bot's
/// until the end), and the bot, fed its seat's frames like any client,
/// plays on to the end of the race.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_blind_mice_room_with_a_server_bot_keeps_fair_play() {
    fair_play_holds_beside_a_bot(GameKind::ThreeBlindMice).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indian_room_with_a_server_bot_keeps_fair_play() {
    fair_play_holds_beside_a_bot(GameKind::Indian).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_midshipman_room_with_a_server_bot_keeps_fair_play() {
    fair_play_holds_beside_a_bot(GameKind::Midshipman).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_virginia_reel_room_with_a_server_bot_keeps_fair_play() {
    fair_play_holds_beside_a_bot(GameKind::VirginiaReel).await;
}

async fn fair_play_holds_beside_a_bot(game: GameKind) {
    let seed = tokio::task::spawn_blocking(move || first_seed(game))
        .await
        .expect("the solver thread");
    let server = start_server(|config| {
        config.deal_games = vec![game];
        config.bot_min_pace_ms = 0;
        // The bot is quick: the people's outboxes keep every frame.
        config.outbox_capacity = 4096;
        config.outbox_bytes = 16 * 1024 * 1024;
    })
    .await;
    let mut ada = Client::hello(&server, "ada").await;
    let mut carol = Client::hello(&server, "carol").await;
    ada.send(&ClientMessage::CreateRoom {
        game,
        max_players: 2,
        public: false,
        options: RoomOptions::default(),
        bots: vec![protocol::BotSeat {
            level: protocol::BotLevel::Normal,
            pace_ms: Some(5),
        }],
    })
    .await;
    let ServerMessage::RoomJoined { room, .. } = ada.recv().await else {
        panic!("room_joined expected");
    };
    carol
        .send(&ClientMessage::Spectate { code: room.code })
        .await;
    carol
        .recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await;
    ada.race_started().await;
    let mut position = AnyGame::deal(game, seed);
    let mut rng = TestRng::new(11);
    let mut legal = Vec::new();
    for _ in 0..40 {
        position.legal_moves(&mut legal);
        if legal.is_empty() || position.is_won() {
            break;
        }
        let turning: Vec<_> = legal
            .iter()
            .copied()
            .filter(|&mv| turns_a_card(&position, mv))
            .collect();
        let moves = if turning.is_empty() { &legal } else { &turning };
        let mv = moves[rng.below(moves.len())];
        let text = position.format_move(mv);
        position.apply(mv).expect("a legal move");
        ada.play(&text).await;
        let answer = ada.move_answer().await;
        assert!(
            matches!(answer, ServerMessage::MoveAccepted { .. }),
            "{text}: {answer:?}"
        );
        if position.is_stuck() {
            break;
        }
    }
    if !position.is_won() && !position.is_stuck() {
        ada.send(&ClientMessage::Resign).await;
    }
    let mut result = None;
    for client in [&mut ada, &mut carol] {
        if let ServerMessage::RaceEnded { result: ended, .. } = client
            .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
            .await
        {
            result = Some(ended);
        }
    }
    let result = result.expect("the race ended");
    server.shutdown().await;
    let bot = result
        .standings
        .iter()
        .find(|standing| standing.seat == 1)
        .expect("the bot's standing");
    assert_eq!(bot.bot, Some(protocol::BotLevel::Normal));
    let bot_moves = result
        .logs
        .iter()
        .find(|log| log.seat == 1)
        .map_or(0, |log| log.moves.len());
    assert!(bot_moves > 0, "the bot raced: {result:?}");
    let recordings = [
        Recording {
            name: "ada",
            seat: Some(0),
            frames: ada.frames,
        },
        Recording {
            name: "carol",
            seat: None,
            frames: carol.frames,
        },
    ];
    let checked = check_fair_play(&recordings, &result).unwrap_or_else(|leak| panic!("{leak}"));
    for (recipient, counts) in &checked {
        assert!(counts.frames > 10, "{recipient:?} checked {counts:?}");
    }
    // The check sees a leak of the bot's moves to its rival.
    let mut planted = recordings.to_vec();
    let end = planted[0]
        .frames
        .iter()
        .position(|frame| {
            matches!(
                protocol::decode_server(frame),
                Ok(ServerMessage::RaceEnded { .. })
            )
        })
        .expect("the race's end was recorded");
    let leak = ServerMessage::Progress {
        seq: 1,
        seat: 1,
        progress: Default::default(),
        text: result.logs[1].moves.first().cloned(),
        board: None,
    };
    planted[0].frames.insert(end, protocol::encode(&leak));
    assert!(check_fair_play(&planted, &result).is_err());
}
