//! Arbitrary frame sequences through the room core, for the fuzzer
//! (`fuzz/fuzz_targets/room.rs`) and a short run in the unit tests.
//!
//! [`exercise`] reads its input as a script for up to four connections:
//! raw frames (decoded by the real decoder and routed to the core as the
//! connection handler routes them), legal moves (found on positions the
//! harness replays from what each player was told), the clock moving,
//! outboxes overflowing, connections dropping, resumes with the tokens the
//! players were given, deals and stores answered. After every step it
//! checks what went out:
//!
//! - every frame decodes as a [`ServerMessage`];
//! - fair play: until the race ends, in a room without open boards, no
//!   frame to a connection carries another seat's board or move text;
//! - the events a connection gets are numbered in increasing order;
//! - a move is acknowledged only to the seat that made it;
//! - nothing is told before it is kept: a move is acknowledged only once
//!   the store the harness keeps (the writes it committed, in order) has
//!   it, and a race starts only once its room is kept (the harness answers
//!   writes late, fails them, as a store out of reach does, or refuses
//!   them, as the script says; a failed write is made again after the
//!   clock moves);
//! - writes commit in order: a move written is the next of its seat's log
//!   in that store, and none is written before its race;
//! - the race clock never goes back in what a racer is told.
//!
//! A failed check panics, which is what the fuzzer looks for.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::game::GameKind;
use patience_shared::protocol::{self, ClientMessage, Phase, RoomOptions, ServerMessage};
use patience_shared::rules::{Outcome, Rules};

use crate::metrics::RoomCounts;
use crate::records::LiveRace;
use crate::secrets::token_hash;
use crate::{ConnId, Input, Keep, Output, RoomCore, RoomParams, Settings, Stored};

/// What the harness remembers of one connection.
#[derive(Default)]
struct Peer {
    seat: Option<u8>,
    last_seq: u64,
}

struct Replayed {
    position: AnyGame,
    history: Vec<(AnyMove, Outcome)>,
    seq: u64,
}

struct Harness {
    core: RoomCore,
    now: u64,
    open_boards: bool,
    game: GameKind,
    seed: Option<u64>,
    /// Each seat's position, replayed from its own `move_accepted`s, with
    /// its history for take-backs and the last event replayed.
    positions: HashMap<u8, Replayed>,
    tokens: HashMap<u8, String>,
    peers: HashMap<ConnId, Peer>,
    storing: bool,
    /// Writes asked for and not yet answered, oldest first; while
    /// `holding`, the harness leaves them unanswered (a slow database).
    unkept: VecDeque<Keep>,
    holding: bool,
    /// The race as the store keeps it, from the writes committed in order.
    stored: Option<LiveRace>,
    /// The race clock a seat was last told.
    told_elapsed: HashMap<u8, u64>,
    /// Whether a write failed and none has committed since.
    failed: bool,
    /// Whether the store is out of reach: every write answered fails.
    store_out: bool,

    race_over: bool,
    next_seed: u64,
    reached: Reached,
}

/// How far a script got, so that a test can tell the checks had
/// something to check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// Whether a race started.
    pub raced: bool,
    /// Moves acknowledged.
    pub moves: usize,
    /// Whether the race ended and was announced.
    pub ended: bool,
    /// Failed writes the room made again and the store then committed.
    pub rode_out: usize,
}

/// Reads `data` as a script and runs it; panics if a check fails.
pub fn exercise(data: &[u8]) -> Reached {
    let Some((&first, mut rest)) = data.split_first() else {
        return Reached::default();
    };
    let game = GameKind::ALL[usize::from(first & 3) % GameKind::ALL.len()];
    let options = RoomOptions {
        undo_allowed: first & 4 != 0,
        time_limit_ms: Some(60_000),
        open_boards: first & 8 != 0,
        best_of: None,
        rated: false,
    };
    let params = RoomParams {
        code: Arc::from("FUZZED"),
        game,
        max_players: 2 + (first >> 4) % 3,
        public: false,
        quick: first & 0x80 != 0,
        options,
        series: None,
    };
    let settings = Settings {
        countdown_ms: 1_000,
        grace_ms: 5_000,
        linger_ms: 10_000,
        default_time_limit_ms: 60_000,
        event_log_capacity: 16,
        // A few boards: both bounds are reached.
        event_log_bytes: 4096,
        // Within the clock's steps: rooms ride out failed writes and
        // close when they fail too long.
        store_outage_ms: 60_000,
        progress_tick_ms: crate::DEFAULT_PROGRESS_TICK_MS,
    };
    let mut harness = Harness {
        core: RoomCore::new(
            params,
            settings,
            Arc::new(RoomCounts::default()),
            [1; 32],
            0,
        ),
        now: 0,
        open_boards: options.open_boards,
        game,
        seed: None,
        positions: HashMap::new(),
        tokens: HashMap::new(),
        peers: HashMap::new(),
        storing: false,
        unkept: VecDeque::new(),
        holding: false,
        stored: None,
        told_elapsed: HashMap::new(),
        failed: false,
        store_out: false,

        race_over: false,
        next_seed: 1,
        reached: Reached::default(),
    };
    // Each step is an operation byte (its top three bits name the
    // connection) and an argument byte; a raw frame's argument is its
    // length, and its bytes follow.
    while let [op, arg, tail @ ..] = rest {
        rest = tail;
        let (op, arg) = (*op, *arg);
        let conn = ConnId::from(op >> 5) % 4 + 1;
        match op & 0x1f {
            0..=5 => {
                let length = usize::from(arg).min(rest.len());
                let (frame, tail) = rest.split_at(length);
                rest = tail;
                harness.frame(conn, frame);
            }
            // A legal move of the connection's seat, picked by `arg`.
            6..=13 => harness.legal_move(conn, usize::from(arg)),
            14 => harness.input(Input::Join {
                conn,
                name: "ada".to_string(),
                player: None,
                bot: None,
            }),
            15 => harness.input(Input::Spectate { conn }),
            16 => harness.input(Input::Undo { conn }),
            17 => harness.input(Input::Resign { conn }),
            18 => harness.input(Input::Disconnected { conn }),
            19 => harness.input(Input::Overflow { conn }),
            20 => harness.input(Input::CaughtUp { conn }),
            21 => harness.input(Input::StartEarly { conn }),
            22 => harness.input(Input::Leave { conn }),
            // A resume with the token seat `arg` was given.
            23 => {
                if let Some(token) = harness.tokens.get(&(arg % 4)) {
                    let last_seq = harness.peers.get(&conn).map_or(0, |peer| peer.last_seq);
                    let token = token_hash(token);
                    harness.input(Input::Resume {
                        conn,
                        token,
                        last_seq,
                    });
                }
            }
            24 if harness.storing => {
                harness.storing = false;
                harness.input(Input::RaceStored { race_id: Some(7) });
            }
            // The database slows down, or catches up.
            26 => {
                harness.holding = !harness.holding;
                harness.drain();
            }
            // The store goes out of reach, or comes back: while it is
            // out, every write fails (the oldest, and with it every write
            // after it), and the room makes it again once the clock moves.
            27 => {
                harness.store_out = !harness.store_out;
                harness.drain();
            }
            // The oldest write is refused for good: the room closes.
            28 if !harness.unkept.is_empty() => {
                harness.unkept.clear();
                harness.input(Input::Kept {
                    stored: Stored::Refused,
                });
            }
            // The clock moves by up to about 25 s.
            _ => {
                harness.now += u64::from(arg) * 100;
                harness.core.on_timeout(harness.now);
                harness.drain();
            }
        }
    }
    harness.reached
}

impl Harness {
    fn input(&mut self, input: Input) {
        // As the connection handler: a connection already in the room
        // cannot join, watch or resume again.
        if let Input::Join { conn, .. } | Input::Spectate { conn } | Input::Resume { conn, .. } =
            &input
            && self.peers.contains_key(conn)
        {
            return;
        }
        if let Input::Join { conn, .. } | Input::Spectate { conn } | Input::Resume { conn, .. } =
            &input
            && self.core.handle(self.now, input.clone()).is_ok()
        {
            // A connection that got in starts its numbering afresh.
            self.peers.insert(*conn, Peer::default());
            return self.drain();
        }
        if !matches!(
            input,
            Input::Join { .. } | Input::Spectate { .. } | Input::Resume { .. }
        ) {
            let _ = self.core.handle(self.now, input);
        }
        self.drain();
    }

    /// A frame decoded and routed as the connection handler routes it.
    fn frame(&mut self, conn: ConnId, frame: &[u8]) {
        let Ok(message) = protocol::decode_client(frame) else {
            return;
        };
        let input = match message {
            ClientMessage::CreateRoom { .. }
            | ClientMessage::JoinRoom { .. }
            | ClientMessage::QuickRace { .. } => Input::Join {
                conn,
                name: "bob".to_string(),
                player: None,
                bot: None,
            },
            ClientMessage::Spectate { .. } => Input::Spectate { conn },
            ClientMessage::Resume { token, last_seq } => Input::Resume {
                conn,
                token: token_hash(&token),
                last_seq,
            },
            ClientMessage::Leave => Input::Leave { conn },
            ClientMessage::StartEarly => Input::StartEarly { conn },
            ClientMessage::Move { text, seat } => Input::Move { conn, text, seat },
            ClientMessage::Undo => Input::Undo { conn },
            ClientMessage::Resign => Input::Resign { conn },
            // Accounts, daily deals and hellos never reach a room.
            _ => return,
        };
        self.input(input);
    }

    fn legal_move(&mut self, conn: ConnId, pick: usize) {
        let Some(seat) = self.peers.get(&conn).and_then(|peer| peer.seat) else {
            return;
        };
        let Some(Replayed { position, .. }) = self.positions.get(&seat) else {
            return;
        };
        let mut moves = Vec::new();
        position.legal_moves(&mut moves);
        let Some(&mv) = moves.get(pick % moves.len().max(1)) else {
            return;
        };
        let text = position.format_move(mv);
        self.input(Input::Move {
            conn,
            text,
            seat: None,
        });
    }

    /// Takes every output, answering deals and writes (unless holding
    /// them) and checking every frame.
    fn drain(&mut self) {
        loop {
            self.drain_outputs();
            if self.holding {
                return;
            }
            if self.store_out && !self.unkept.is_empty() {
                self.fail_oldest();
                continue;
            }
            let Some(write) = self.unkept.pop_front() else {
                return;
            };
            self.commit(write);
            let _ = self.core.handle(
                self.now,
                Input::Kept {
                    stored: Stored::Committed,
                },
            );
        }
    }

    /// The oldest write fails, and with it every write after it (the
    /// room writes them as one sequence): the room makes it again later.
    fn fail_oldest(&mut self) {
        self.unkept.clear();
        self.failed = true;
        let _ = self.core.handle(
            self.now,
            Input::Kept {
                stored: Stored::Failed,
            },
        );
    }

    /// A write committed: the harness's store has it, in order.
    fn commit(&mut self, write: Keep) {
        if std::mem::take(&mut self.failed) {
            self.reached.rode_out += 1;
        }
        match write {
            Keep::Race(race) => self.stored = Some(*race),
            Keep::Move(kept) => {
                let race = self
                    .stored
                    .as_mut()
                    .expect("a move is written only after its race");
                let seat = race
                    .seats
                    .iter_mut()
                    .find(|seat| seat.seat == kept.seat)
                    .expect("a move of a seat the race has");
                assert_eq!(
                    usize::try_from(kept.index).ok(),
                    Some(seat.log.len()),
                    "seat {}'s move {} written after {} moves: writes out of order",
                    kept.seat,
                    kept.index,
                    seat.log.len()
                );
                seat.log.push(kept.text);
            }
        }
    }

    /// Whether the harness's store has move `index` of `seat`.
    fn is_stored(&self, seat: u8, index: u32) -> bool {
        self.stored.as_ref().is_some_and(|race| {
            race.seats.iter().any(|kept| {
                kept.seat == seat
                    && usize::try_from(index).is_ok_and(|index| index < kept.log.len())
            })
        })
    }

    fn drain_outputs(&mut self) {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::Keep(write) => self.unkept.push_back(write),
                Output::Send { conn, frame } | Output::CatchUp { conn, frame } => {
                    self.check(conn, &frame);
                }
                // As a shell whose outboxes take eight frames.
                Output::Replay {
                    conn,
                    missed,
                    snapshot,
                } => {
                    if missed.len() <= 8 {
                        for frame in missed {
                            self.check(conn, &frame);
                        }
                    } else {
                        self.check(conn, &snapshot);
                    }
                }
                Output::NeedDeal => {
                    let seed = self.next_seed;
                    self.next_seed += 1;
                    let _ = self.core.handle(self.now, Input::DealReady { seed });
                }
                Output::StoreRace(_) => self.storing = true,
                Output::Detach { conn } => {
                    self.peers.remove(&conn);
                }
                Output::Kick { .. }
                | Output::FellBehind { .. }
                | Output::TokenIssued(_)
                | Output::TokenRevoked(_)
                | Output::OpenRematch(_)
                | Output::Summary { .. } => {}
            }
        }
    }

    fn check(&mut self, conn: ConnId, frame: &[u8]) {
        let message = protocol::decode_server(frame).expect("every frame the room sends decodes");
        let peer = self.peers.entry(conn).or_default();
        if let Some(seq) = event_seq(&message) {
            assert!(
                seq > peer.last_seq,
                "events to {conn} out of order: {seq} after {}",
                peer.last_seq
            );
            peer.last_seq = seq;
        }
        let own = peer.seat;
        // Boards are secret while anyone races: in the lobby there are
        // none, and once every racer is done (the race is over, even
        // before its result is stored) nothing on them helps anyone.
        let secret = !self.open_boards && self.core.phase() == Phase::Racing;
        match message {
            ServerMessage::RoomJoined {
                seat,
                resume_token,
                seq,
                ..
            } => {
                peer.seat = seat;
                peer.last_seq = peer.last_seq.max(seq);
                if let (Some(seat), Some(token)) = (seat, resume_token) {
                    self.tokens.insert(seat, token);
                }
            }
            ServerMessage::Resumed {
                seat, resume_token, ..
            } => {
                // The missed events follow, numbered from the client's own
                // `last_seq`: the numbering goes on from there.
                peer.seat = Some(seat);
                self.tokens.insert(seat, resume_token);
            }
            ServerMessage::Snapshot { race, seq, .. } => {
                peer.last_seq = peer.last_seq.max(seq);
                for board in race.iter().flat_map(|race| &race.boards) {
                    assert!(
                        !secret || board.board.is_none() || own == Some(board.seat),
                        "seat {}'s board went to {conn} (seat {own:?})",
                        board.seat
                    );
                }
            }
            ServerMessage::Progress {
                seat, text, board, ..
            } => {
                assert!(
                    !secret || (text.is_none() && board.is_none()),
                    "seat {seat}'s move went to {conn}"
                );
                assert_ne!(own, Some(seat), "a mover is told its own progress");
            }
            ServerMessage::RaceStarted { .. } => {
                assert!(self.stored.is_some(), "the race started before it was kept");
                self.reached.raced = true;
                if self.seed.is_none() {
                    self.seed = self.next_seed.checked_sub(1);
                }
                if let (Some(seat), Some(seed)) = (own, self.seed) {
                    self.positions.entry(seat).or_insert_with(|| Replayed {
                        position: AnyGame::deal(self.game, seed),
                        history: Vec::new(),
                        seq: 0,
                    });
                }
            }
            ServerMessage::MoveAccepted {
                text,
                seq,
                progress,
                ..
            } => {
                let seat = own.expect("only a seat's connection hears its moves accepted");
                // A seat's moves and take-backs are numbered in its log as
                // they are counted.
                let index = progress.moves.saturating_sub(1);
                assert!(
                    self.is_stored(seat, index),
                    "seat {seat}'s move {index} was acknowledged before it was kept"
                );
                let told = self.told_elapsed.entry(seat).or_default();
                assert!(
                    progress.elapsed_ms >= *told,
                    "seat {seat}'s clock went back: {} after {told}",
                    progress.elapsed_ms
                );
                *told = progress.elapsed_ms;
                self.replay(seat, seq, &text);
            }
            ServerMessage::RaceEnded { .. } => {
                self.race_over = true;
                self.reached.ended = true;
            }
            _ => {}
        }
    }

    /// Keeps the harness's copy of `seat`'s position in step with the
    /// server's answers (once each, whoever hears them), so that it can
    /// choose legal moves; every accepted move must replay.
    fn replay(&mut self, seat: u8, seq: u64, text: &str) {
        let Some(seed) = self.seed else { return };
        let game = self.game;
        let replayed = self.positions.entry(seat).or_insert_with(|| Replayed {
            position: AnyGame::deal(game, seed),
            history: Vec::new(),
            seq: 0,
        });
        if seq <= replayed.seq {
            return;
        }
        replayed.seq = seq;
        self.reached.moves += 1;
        if text == protocol::UNDO_TEXT {
            let (mv, outcome) = replayed
                .history
                .pop()
                .expect("an accepted undo takes back a move");
            replayed.position.undo(mv, &outcome);
            return;
        }
        let mv = replayed
            .position
            .parse_move(text)
            .unwrap_or_else(|error| panic!("an accepted move reads back: {text}: {error}"));
        let outcome = replayed
            .position
            .apply(mv)
            .unwrap_or_else(|error| panic!("an accepted move replays: {text}: {error}"));
        replayed.history.push((mv, outcome));
    }
}

/// The `seq` of a numbered room event (not of a reply).
fn event_seq(message: &ServerMessage) -> Option<u64> {
    match message {
        ServerMessage::RoomUpdate { seq, .. }
        | ServerMessage::Countdown { seq, .. }
        | ServerMessage::RaceStarted { seq, .. }
        | ServerMessage::MoveAccepted { seq, .. }
        | ServerMessage::Progress { seq, .. }
        | ServerMessage::Stuck { seq }
        | ServerMessage::Finished { seq, .. }
        | ServerMessage::RaceEnded { seq, .. } => Some(*seq),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use patience_shared::conformance::TestRng;

    use super::*;

    /// A few thousand random scripts, with the bytes that matter most
    /// (joins, legal moves, the clock) made common: the fuzzer's checks
    /// run on every build.
    #[test]
    fn random_scripts_keep_every_check() {
        let mut rng = TestRng::new(16);
        let mut deep = (0, 0, 0, 0);
        for round in 0..4_000 {
            let steps = 1 + rng.below(120);
            let mut script = vec![u8::try_from(rng.below(256)).unwrap_or(0)];
            for _ in 0..steps {
                // With the store slowing down (26), failing (27, the
                // write made again once the clock moves: 25) and refusing
                // (28).
                const OPS: [u8; 37] = [
                    14, 14, 14, 21, 25, 25, 6, 7, 8, 9, 10, 11, 12, 13, 6, 7, 8, 9, 23, 18, 19, 20,
                    16, 17, 24, 24, 15, 0, 26, 27, 27, 25, 28, 10, 11, 12, 13,
                ];
                let op = OPS[rng.below(OPS.len())];
                let conn = u8::try_from(rng.below(4)).unwrap_or(0) << 5;
                script.push(op | conn);
                script.push(u8::try_from(rng.below(256)).unwrap_or(0));
            }
            let run = std::panic::catch_unwind(|| exercise(&script));
            let Ok(reached) = run else {
                panic!("round {round}: {script:?}");
            };
            deep.0 += usize::from(reached.raced);
            deep.1 += reached.moves;
            deep.2 += usize::from(reached.ended);
            deep.3 += reached.rode_out;
        }
        // The scripts reach races, moves and ends, or the checks would
        // have had nothing to look at.
        let (raced, moves, ended, rode_out) = deep;
        assert!(
            raced > 100 && moves > 250 && ended > 20 && rode_out > 20,
            "{deep:?}"
        );
    }
}
