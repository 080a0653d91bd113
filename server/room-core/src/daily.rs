//! The daily attempt as a room of one seat: one player, the day's deal,
//! no undo, the attempt's own time limit, and its own store calls and
//! messages. Like [`RoomCore`](crate::RoomCore) it is a state machine on
//! the server's clock: [`DailyCore::handle`] takes an input and the time
//! it happened, [`DailyCore::on_timeout`] the time its deadline was
//! reached, and both leave [`DailyOutput`]s to collect with
//! [`DailyCore::poll_output`]; [`DailyCore::poll_timeout`] says when it
//! next needs waking. Every move, the race's or the daily's, is judged by
//! [`judge::play`], and every deadline takes effect at its own time,
//! before any input stamped later.
//!
//! What differs from a race room, and why:
//! - A move is written alone ([`DailyOutput::WriteMove`]) and
//!   acknowledged once the store has it. A write that fails takes the
//!   move back and refuses it ([`Written::Failed`]): the player has only
//!   its own board to lose and may play the move again, where a race room
//!   holds everyone's events behind the write and writes the race again.
//!   Inputs that come while a write is unanswered wait for its answer.
//! - The attempt may be taken over by another connection of the same
//!   player (the newest plays it). A connection that wrote a move the
//!   store no longer expects ([`Written::MovedOn`]) is stale: it refuses
//!   the move and opens the attempt again as stored
//!   ([`DailyOutput::Reopen`]).
//! - The store's sweeper may close an attempt whose time is up while no
//!   connection plays it, or before this one's timer fires
//!   ([`Written::NotOpen`], [`CloseAnswer::NotOpen`]).
//! - The end is stored as the attempt's result, with its rank
//!   ([`DailyOutput::Close`]), and told as `daily_finished`.
//!
//! Layout: the inputs and outputs, then [`DailyCore`]: its making (the
//! attempt replayed from its stored moves), its inputs, its deadline, and
//! what it tells the player.

use std::collections::VecDeque;
use std::sync::Arc;

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    DailyResult, ErrorCode, PlayerStatus, Progress, ServerMessage, UNDO_TEXT,
};
use patience_shared::rules::{Effect, MoveError, Outcome, Rules as _, View};

use crate::Millis;
use crate::judge;
use crate::metrics::{Counter, RoomMetrics};

/// The pause before an attempt whose time is up is closed again, after the
/// store failed to close it (the sweeper closes it meanwhile if this
/// server cannot).
pub const CLOSE_RETRY_PAUSE_MS: Millis = crate::RETRY_PAUSE_MAX_MS;

/// Something that happened to the attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DailyInput {
    /// A move in notation.
    Move {
        /// The notation.
        text: String,
        /// The board the client named, if any (a daily has seat 0 only).
        seat: Option<u8>,
    },
    /// The player asks to take back a move: daily deals allow none.
    Undo,
    /// The player gives up.
    Resign,
    /// The store's answer to [`DailyOutput::WriteMove`].
    Written(Written),
    /// The store's answer to [`DailyOutput::Close`].
    Closed(CloseAnswer),
}

/// What became of a move's write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// It is committed: the player may hear of the move.
    Committed,
    /// The store holds another move at that place: another connection of
    /// this player moved on before it took the attempt over.
    MovedOn,
    /// The attempt is closed (the sweeper found its time up).
    NotOpen,
    /// The store failed; nothing was written.
    Failed {
        /// For the player: what went wrong and what to do.
        message: String,
    },
}

/// What became of the attempt's close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseAnswer {
    /// The result is committed, with its rank.
    Committed(Box<DailyResult>),
    /// Someone closed it first (the sweeper: its time was up).
    NotOpen,
    /// The store failed; the attempt is still open.
    Failed {
        /// For the player: what went wrong and what to do.
        message: String,
    },
}

/// Something the attempt needs done, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DailyOutput {
    /// Tell the player.
    Send(Box<ServerMessage>),
    /// Write an accepted move, and answer [`DailyInput::Written`] before
    /// anything else (the move is not acknowledged until then).
    WriteMove(MoveWrite),
    /// Close the attempt as `status` and store its result, and answer
    /// [`DailyInput::Closed`].
    Close {
        /// How it ended.
        status: PlayerStatus,
        /// When it ended, on the server's clock.
        at_ms: Millis,
    },
    /// This connection no longer plays the attempt: it is over, or closed
    /// elsewhere. It comes before what the player is told of it. The core
    /// takes no more inputs.
    Release,
    /// This copy of the attempt is stale (it moved on elsewhere): open the
    /// attempt again as stored. The core takes no more inputs.
    Reopen,
}

/// An accepted move, to be stored as the attempt's move `index`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveWrite {
    /// Its place in the attempt, from 0.
    pub index: u32,
    /// The move in canonical notation.
    pub text: String,
    /// When it was played, on the server's clock.
    pub at_ms: Millis,
}

/// Why a stored attempt cannot be played again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("daily move {index} {text:?}: {reason}")]
pub struct ReplayError {
    /// The move's place.
    pub index: usize,
    /// The move.
    pub text: String,
    /// Why the judge refused it.
    pub reason: String,
}

/// An attempt as the store holds it, to play on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAttempt<'moves> {
    /// The game.
    pub game: GameKind,
    /// The deal's seed.
    pub seed: u64,
    /// When the attempt began, on the server's clock.
    pub started_at_ms: Millis,
    /// When its time is up.
    pub deadline_ms: Millis,
    /// Its moves, in canonical notation.
    pub moves: &'moves [String],
    /// When each was played (`None`: stored before times were kept).
    pub move_times_ms: Vec<Option<Millis>>,
}

/// Where the attempt stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The player plays.
    Playing,
    /// Ended as this; the store is closing it.
    Closing(PlayerStatus),
    /// Over for this connection: released or to be opened again.
    Over,
}

/// A move played on the position and written, not yet acknowledged.
#[derive(Debug)]
struct Unwritten {
    /// The text the player sent, for a refusal.
    sent: String,
    text: String,
    undo: (AnyMove, Outcome),
    effects: Vec<Effect>,
    at_ms: Millis,
}

/// One player's daily attempt.
pub struct DailyCore {
    metrics: Arc<dyn RoomMetrics>,
    /// The deal as dealt, as the player saw it: progress is measured from it.
    dealt: View,
    position: AnyGame,
    moves: Vec<String>,
    move_times_ms: Vec<Option<Millis>>,
    started_at_ms: Millis,
    deadline_ms: Millis,
    /// The latest time the core has seen.
    now: Millis,
    stage: Stage,
    /// The move whose write is unanswered.
    unwritten: Option<Unwritten>,
    /// Inputs that came while a write was unanswered, with their times.
    held: VecDeque<(Millis, DailyInput)>,
    /// After a close the store failed: not closed again for its time
    /// before this.
    close_again_at: Option<Millis>,
    outputs: VecDeque<DailyOutput>,
}

impl std::fmt::Debug for DailyCore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DailyCore")
            .field("moves", &self.moves.len())
            .field("started_at_ms", &self.started_at_ms)
            .field("deadline_ms", &self.deadline_ms)
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl DailyCore {
    /// The attempt `stored` at `now`, its moves played again on the deal by
    /// the judge; a move the judge refuses means the record is corrupt.
    pub fn replayed(
        stored: StoredAttempt<'_>,
        metrics: Arc<dyn RoomMetrics>,
        now: Millis,
    ) -> Result<DailyCore, ReplayError> {
        let mut position = AnyGame::deal(stored.game, stored.seed);
        let dealt = position.view();
        for (index, text) in stored.moves.iter().enumerate() {
            judge::play(&mut position, text).map_err(|refused| ReplayError {
                index,
                text: text.clone(),
                reason: refused.message,
            })?;
        }
        Ok(DailyCore {
            metrics,
            dealt,
            position,
            moves: stored.moves.to_vec(),
            move_times_ms: stored.move_times_ms,
            started_at_ms: stored.started_at_ms,
            deadline_ms: stored.deadline_ms,
            now,
            stage: Stage::Playing,
            unwritten: None,
            held: VecDeque::new(),
            close_again_at: None,
            outputs: VecDeque::new(),
        })
    }

    /// The moves played, in canonical notation.
    pub fn moves(&self) -> &[String] {
        &self.moves
    }

    /// When each move was played, as stored.
    pub fn move_times_ms(&self) -> &[Option<Millis>] {
        &self.move_times_ms
    }

    /// When the attempt began.
    pub fn started_at_ms(&self) -> Millis {
        self.started_at_ms
    }

    /// When the attempt's time is up.
    pub fn deadline_ms(&self) -> Millis {
        self.deadline_ms
    }

    /// The board as the player may see it.
    pub fn view(&self) -> View {
        self.position.view()
    }

    /// Moves played, cards home, and the clock since the start at `now`
    /// (stopped at the time limit).
    pub fn progress(&self, now: Millis) -> Progress {
        Progress::measure(
            &self.dealt,
            &self.position.view(),
            u32::try_from(self.moves.len()).unwrap_or(u32::MAX),
            now.min(self.deadline_ms).saturating_sub(self.started_at_ms),
        )
    }

    /// Whether the attempt is over for this connection (released, or to be
    /// opened again): it takes no more inputs.
    pub fn is_over(&self) -> bool {
        self.stage == Stage::Over
    }

    /// Handles `input`, which happened at `now`, after the deadline if it
    /// came by `now`. A store's answer is taken at once; anything else
    /// waits while a move's write is unanswered.
    pub fn handle(&mut self, now: Millis, input: DailyInput) {
        self.now = self.now.max(now);
        match input {
            DailyInput::Written(written) => self.written(written),
            DailyInput::Closed(answer) => self.closed(answer),
            input => self.held.push_back((self.now, input)),
        }
        self.run();
    }

    /// Acts on the deadline if it came by `now`.
    pub fn on_timeout(&mut self, now: Millis) {
        self.now = self.now.max(now);
        self.run();
    }

    /// When the core next needs [`DailyCore::on_timeout`], if ever: the
    /// attempt's time limit (or, after a close the store failed, the next
    /// try).
    pub fn poll_timeout(&self) -> Option<Millis> {
        (self.stage == Stage::Playing && self.unwritten.is_none())
            .then(|| self.deadline_ms.max(self.close_again_at.unwrap_or(0)))
    }

    /// The next thing to do, if any.
    pub fn poll_output(&mut self) -> Option<DailyOutput> {
        self.outputs.pop_front()
    }

    /// Takes the held inputs in order, each after the deadline if it came
    /// by the input's time, until a write is unanswered.
    fn run(&mut self) {
        while self.unwritten.is_none() {
            let Some((at, input)) = self.held.pop_front() else {
                break;
            };
            self.act_on_deadline(at, false);
            self.dispatch(at, input);
        }
        if self.held.is_empty() {
            self.act_on_deadline(self.now, true);
        }
    }

    fn dispatch(&mut self, at: Millis, input: DailyInput) {
        match input {
            DailyInput::Move { text, seat } => self.play(at, text, seat),
            DailyInput::Undo => self.refuse(
                UNDO_TEXT.to_string(),
                ErrorCode::UndoNotAllowed,
                None,
                "daily deals allow no undo".to_string(),
            ),
            DailyInput::Resign => {
                if self.stage == Stage::Playing {
                    self.end(PlayerStatus::Resigned, at);
                }
            }
            // Answers are taken as they come, never held.
            DailyInput::Written(_) | DailyInput::Closed(_) => {}
        }
    }

    /// The time limit, at its own time: the attempt ends out of time. An
    /// input comes after it once `at` reaches it; a wake without one waits
    /// out the pause after a close the store failed (`paced`).
    fn act_on_deadline(&mut self, at: Millis, paced: bool) {
        if self.stage != Stage::Playing || self.unwritten.is_some() {
            return;
        }
        let due = if paced {
            self.deadline_ms.max(self.close_again_at.unwrap_or(0))
        } else {
            self.deadline_ms
        };
        if at >= due {
            self.end(PlayerStatus::OutOfTime, at);
        }
    }

    fn play(&mut self, at: Millis, text: String, seat: Option<u8>) {
        if let Some(seat) = seat.filter(|&seat| seat != 0) {
            let message = format!("a daily attempt has one board, seat 0, not seat {seat}");
            return self.refuse(text, ErrorCode::NotYourBoard, None, message);
        }
        match self.stage {
            Stage::Playing => {}
            Stage::Closing(PlayerStatus::OutOfTime) => {
                let message = "your time is up".to_string();
                return self.refuse(text, ErrorCode::RaceOver, None, message);
            }
            Stage::Closing(_) | Stage::Over => {
                let message = "your daily attempt is over".to_string();
                return self.refuse(text, ErrorCode::RaceOver, None, message);
            }
        }
        let played = match judge::play(&mut self.position, &text) {
            Ok(played) => played,
            Err(judge::Refused {
                code,
                reason,
                message,
            }) => return self.refuse(text, code, reason, message),
        };
        self.moves.push(played.text.clone());
        self.move_times_ms.push(Some(at));
        let index = u32::try_from(self.moves.len() - 1).unwrap_or(u32::MAX);
        self.out(DailyOutput::WriteMove(MoveWrite {
            index,
            text: played.text.clone(),
            at_ms: at,
        }));
        self.unwritten = Some(Unwritten {
            sent: text,
            effects: played.outcome.effects.to_vec(),
            undo: (played.mv, played.outcome),
            text: played.text,
            at_ms: at,
        });
    }

    /// The store's answer to the unwritten move.
    fn written(&mut self, written: Written) {
        let Some(move_) = self.unwritten.take() else {
            return;
        };
        if written != Written::Committed {
            let (mv, outcome) = move_.undo;
            self.position.undo(mv, &outcome);
            self.moves.pop();
            self.move_times_ms.pop();
        }
        match written {
            Written::Committed => {
                self.metrics.bump(Counter::MovesAccepted);
                let progress = self.progress(move_.at_ms);
                self.send(ServerMessage::MoveAccepted {
                    seq: u64::from(progress.moves),
                    text: move_.text,
                    effects: move_.effects,
                    board: self.position.view(),
                    progress,
                });
                if self.position.is_won() {
                    self.end(PlayerStatus::Won, move_.at_ms);
                } else if self.position.is_stuck() {
                    // Daily deals allow no undo: no legal move left ends it.
                    self.end(PlayerStatus::Stuck, move_.at_ms);
                }
            }
            Written::MovedOn => {
                let message = "your attempt moved on elsewhere; here it is as stored";
                self.refuse(move_.sent, ErrorCode::Internal, None, message.to_string());
                self.stage = Stage::Over;
                self.out(DailyOutput::Reopen);
            }
            Written::NotOpen => {
                self.release();
                let message = "your daily attempt is over".to_string();
                self.refuse(move_.sent, ErrorCode::RaceOver, None, message);
            }
            Written::Failed { message } => {
                self.metrics.bump(Counter::StorageErrors);
                self.refuse(move_.sent, ErrorCode::Internal, None, message);
            }
        }
    }

    /// The attempt ends as `status` at `at`: the store closes it first.
    fn end(&mut self, status: PlayerStatus, at: Millis) {
        self.stage = Stage::Closing(status);
        self.out(DailyOutput::Close { status, at_ms: at });
    }

    /// The store's answer to the close.
    fn closed(&mut self, answer: CloseAnswer) {
        let Stage::Closing(status) = self.stage else {
            return;
        };
        match answer {
            CloseAnswer::Committed(result) => {
                self.release();
                self.send(ServerMessage::DailyFinished { result: *result });
            }
            CloseAnswer::NotOpen => {
                self.release();
                self.send(ServerMessage::Error {
                    code: ErrorCode::RaceOver,
                    message: "your daily attempt is over".to_string(),
                });
            }
            CloseAnswer::Failed { message } => {
                // Still open: the player may resign again; a time limit
                // reached is tried again after a pause, not at once.
                self.metrics.bump(Counter::StorageErrors);
                self.stage = Stage::Playing;
                if status == PlayerStatus::OutOfTime {
                    self.close_again_at = Some(self.now.saturating_add(CLOSE_RETRY_PAUSE_MS));
                }
                self.send(ServerMessage::Error {
                    code: ErrorCode::Internal,
                    message,
                });
            }
        }
    }

    /// Over for this connection, which lets the attempt go before it tells
    /// the player: once told, the player may open it elsewhere.
    fn release(&mut self) {
        self.stage = Stage::Over;
        self.out(DailyOutput::Release);
    }

    fn refuse(
        &mut self,
        text: String,
        code: ErrorCode,
        reason: Option<MoveError>,
        message: String,
    ) {
        self.metrics.bump(Counter::MovesRejected);
        self.send(ServerMessage::MoveRejected {
            text,
            code,
            reason,
            message,
        });
    }

    fn send(&mut self, message: ServerMessage) {
        self.out(DailyOutput::Send(Box::new(message)));
    }

    fn out(&mut self, output: DailyOutput) {
        self.outputs.push_back(output);
    }
}

#[cfg(test)]
mod tests;
