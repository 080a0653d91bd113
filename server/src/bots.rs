//! Bots the server runs in a room's seats (`create_room` with `bots`).
//!
//! A hosted bot is a connection without a socket: it takes its seat with
//! an outbox of its own, like any client, and reads from it the very frames
//! the room sends a player in that seat, decoded, and nothing else. Its
//! [`SeatView`] keeps what those frames say (its seat, its board, whether
//! it may move); the planner, [`patience_shared::bot::Bot`], is handed that
//! board only. So a bot never sees the deal beyond its own view: the room's
//! fair-play rule, which decides what each seat's frames hold, binds it as
//! it binds a person. It sends its moves as a connection's reader does, as
//! [`Command::Move`]s to the room's actor.
//!
//! Bounds: at most [`Config::max_bots`](crate::config::Config::max_bots)
//! bots at once on the server (a seat is a permit, held by the bot's task
//! until it ends; `create_room` asking for more is refused), and at most
//! `bot_threads` of them thinking at once, each on a blocking thread (the
//! solver never runs on a runtime worker); the others wait their turn, so
//! under load a bot's move comes late rather than the races slowing down.
//!
//! Pace: the move is due a pace after the board came, on the server's
//! [`Clock`], varied by up to a third either way; thinking counts toward
//! it, and is cut at two paces (at most 10 s) on the wall clock, the
//! solver's time.
//!
//! Layout: [`Bots`] (the bounds, in `Shared`); [`seat_bots`] (seats a
//! room's bots) and [`reseat_bots`] (puts them back in a race run again
//! after a restart or a failover); the bot's task (`play`); [`SeatView`], sans I/O and
//! unit-tested.

use std::sync::Arc;
use std::time::{Duration, Instant};

use patience_shared::bot::{Bot, Deadline, human_pace};
use patience_shared::protocol::{
    self, BotLevel, BotSeat, Phase, PlayerStatus, ServerMessage, default_bot_pace_ms,
};
use patience_shared::rules::View;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::clock::Clock;
use crate::outbox::{ConnectionHandle, OutboxReceiver, outbox};
use crate::room_handle::{Command, Refusal, RoomHandle};

/// Frames a bot's outbox holds: enough for every rival's progress while it
/// thinks for its longest (10 s), with room to spare.
const BOT_OUTBOX_FRAMES: usize = 4096;

/// Bytes a bot's outbox holds.
const BOT_OUTBOX_BYTES: usize = 4 * 1024 * 1024;

/// Moves refused in a row after which a bot resigns: its board and the
/// room's disagree, which no plan mends.
const REFUSALS_BEFORE_RESIGNING: u32 = 3;

/// How many paces a bot may think about one move, and the most it may.
const THINK_PACES: u32 = 2;
const THINK_CAP: Duration = Duration::from_secs(10);

/// The server's bounds on its bots.
#[derive(Debug)]
pub struct Bots {
    /// A permit per bot seated, over every room.
    seats: Arc<Semaphore>,
    /// A permit per bot thinking.
    thinkers: Arc<Semaphore>,
    /// The fastest pace allowed.
    min_pace_ms: u32,
}

impl Bots {
    /// At most `max_bots` bots seated and `threads` thinking at once, none
    /// faster than `min_pace_ms`.
    pub fn new(max_bots: usize, threads: usize, min_pace_ms: u32) -> Bots {
        Bots {
            seats: Arc::new(Semaphore::new(max_bots)),
            thinkers: Arc::new(Semaphore::new(threads.max(1))),
            min_pace_ms,
        }
    }

    /// Takes `count` seats' permits, if the server has them free.
    pub fn reserve(&self, count: usize) -> Option<OwnedSemaphorePermit> {
        let count = u32::try_from(count).ok()?;
        Arc::clone(&self.seats).try_acquire_many_owned(count).ok()
    }

    /// A bot's pace: the room's, or the level's default, within bounds.
    pub fn pace_ms(&self, seat: &BotSeat) -> u32 {
        seat.pace_ms
            .unwrap_or_else(|| default_bot_pace_ms(seat.level))
            .clamp(self.min_pace_ms, protocol::BOT_PACE_MAX_MS)
    }
}

/// The display name of a bot seat: it says it is a bot.
pub fn bot_name(level: BotLevel) -> String {
    format!("bot ({level})")
}

/// What seating a bot takes from the server (the edges hold it in
/// `Shared`; this module names none of it, so that it depends on no edge).
pub struct Hosting<'a> {
    /// The bounds.
    pub bots: &'a Bots,
    /// The server's connection ids: a bot's seat is a connection's.
    pub next_connection_id: &'a std::sync::atomic::AtomicU64,
    /// The server's clock, for the pace.
    pub clock: &'a Clock,
    /// Cancelled when the server stops: the bots' tasks end.
    pub shutdown: &'a CancellationToken,
    /// Where the bots' tasks are tracked.
    pub tracker: &'a TaskTracker,
}

/// Seats `bots` in `room`, in order, each with one of `permits` (taken
/// with [`Bots::reserve`]), and starts their tasks. Stops at the first
/// seat refused (the room filled or closed meanwhile).
pub async fn seat_bots(
    hosting: Hosting<'_>,
    room: &RoomHandle,
    bots: &[BotSeat],
    mut permits: OwnedSemaphorePermit,
) -> Result<(), Refusal> {
    for (index, seat) in bots.iter().enumerate() {
        let Some(permit) = permits.split(1) else {
            break;
        };
        let level = seat.level;
        let pace_ms = hosting.bots.pace_ms(seat);
        start(
            &hosting,
            room,
            level,
            pace_ms,
            index,
            permit,
            |conn, reply| Command::Join {
                conn,
                name: bot_name(level),
                player: None,
                bot: Some(level),
                reply,
            },
        )
        .await?;
    }
    Ok(())
}

/// Puts bots back in the seats `seats` (seat, level) of a race the server
/// runs again after a restart or a failover: a bot's task ends with its
/// server, and its seat would otherwise wait its grace period and be
/// forfeited, leaving its rival racing nobody. Each plays at its level's
/// pace (the pace asked for is not kept). A seat that cannot be taken back
/// (no bot may be seated now, or the room refuses) is logged and left.
pub async fn reseat_bots(hosting: Hosting<'_>, room: &RoomHandle, seats: &[(u8, BotLevel)]) {
    for (index, &(seat, level)) in seats.iter().enumerate() {
        let Some(permit) = hosting.bots.reserve(1) else {
            tracing::warn!(code = %room.code, seat, "no bot may be seated now: the seat is left");
            continue;
        };
        let pace_ms = hosting.bots.pace_ms(&BotSeat {
            level,
            pace_ms: None,
        });
        let started = start(
            &hosting,
            room,
            level,
            pace_ms,
            index,
            permit,
            |conn, reply| Command::ResumeBot { conn, seat, reply },
        )
        .await;
        if let Err(refusal) = started {
            tracing::warn!(code = %room.code, seat, ?refusal, "a bot could not take its seat back");
        }
    }
}

/// Enters `room` with a bot's connection through the command `enter`
/// makes, and starts the bot's task once the room took it in.
async fn start(
    hosting: &Hosting<'_>,
    room: &RoomHandle,
    level: BotLevel,
    pace_ms: u32,
    index: usize,
    permit: OwnedSemaphorePermit,
    enter: impl FnOnce(ConnectionHandle, oneshot::Sender<Result<(), Refusal>>) -> Command,
) -> Result<(), Refusal> {
    let id = hosting
        .next_connection_id
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (handle, receiver) = outbox(id, BOT_OUTBOX_FRAMES, BOT_OUTBOX_BYTES);
    let (reply, answer) = oneshot::channel();
    let gone = || Refusal::new(protocol::ErrorCode::RoomNotFound, "the room has closed");
    room.commands
        .send(enter(handle, reply))
        .await
        .map_err(|_| gone())?;
    answer.await.map_err(|_| gone())??;
    // Only the solver's choices depend on it; bots of one room start
    // apart.
    let variation = room.code.bytes().fold(index as u64, |hash, byte| {
        hash.wrapping_mul(0x100_0000_01b3) ^ u64::from(byte)
    });
    let task = BotTask {
        receiver,
        id,
        room: room.clone(),
        level,
        pace_ms,
        variation,
        thinkers: Arc::clone(&hosting.bots.thinkers),
        clock: hosting.clock.clone(),
        _seat: permit,
    };
    let shutdown = hosting.shutdown.clone();
    hosting.tracker.spawn(async move {
        tokio::select! {
            () = task.play() => {}
            () = shutdown.cancelled() => {}
        }
    });
    Ok(())
}

/// One bot's task: its seat's frames in, its moves out.
struct BotTask {
    receiver: OutboxReceiver,
    id: u64,
    room: RoomHandle,
    level: BotLevel,
    pace_ms: u32,
    variation: u64,
    thinkers: Arc<Semaphore>,
    clock: Clock,
    /// The bot's seat among the server's [`Bots`], given back when the
    /// task ends.
    _seat: OwnedSemaphorePermit,
}

impl BotTask {
    async fn play(mut self) {
        let mut view = SeatView::default();
        let mut bot = Some(Bot::new(self.level, self.variation));
        let mut due: Option<(u64, String)> = None;
        let mut moves_played = 0u64;
        let mut refused_in_a_row = 0u32;
        loop {
            let due_at = due.as_ref().map(|(at, _)| *at);
            tokio::select! {
                frame = self.receiver.recv() => {
                    let Some(frame) = frame else { break };
                    self.receiver.written(frame.len());
                    if self.receiver.is_closing() {
                        break;
                    }
                    let Ok(message) = protocol::decode_server(&frame) else { continue };
                    match &message {
                        ServerMessage::MoveAccepted { .. } => refused_in_a_row = 0,
                        ServerMessage::MoveRejected { .. } => {
                            refused_in_a_row += 1;
                            if let Some(bot) = bot.as_mut() {
                                bot.refused();
                            }
                        }
                        _ => {}
                    }
                    match view.heard(&message) {
                        Next::Stop => break,
                        Next::Leave => {
                            self.tell(Command::Leave { conn_id: self.id }).await;
                            return;
                        }
                        Next::Wait => continue,
                        Next::Think(board) if due.is_none() => {
                            if refused_in_a_row >= REFUSALS_BEFORE_RESIGNING {
                                tracing::warn!(refused_in_a_row, "a bot's moves were refused: it resigns");
                                self.tell(Command::Resign { conn_id: self.id }).await;
                                view.sent();
                                continue;
                            }
                            let board_came = self.clock.now_ms();
                            let thinking = bot.take().unwrap_or_else(|| Bot::new(self.level, self.variation));
                            let (thought, chosen) = self.think(thinking, board).await;
                            bot = Some(thought);
                            match chosen {
                                Some(text) => {
                                    let pace = pace_for_move_ms(self.pace_ms, moves_played);
                                    due = Some((board_came.saturating_add(pace), text));
                                    moves_played += 1;
                                }
                                None => {
                                    self.tell(Command::Resign { conn_id: self.id }).await;
                                    view.sent();
                                }
                            }
                        }
                        Next::Think(_) => {}
                    }
                }
                () = sleep_until(&self.clock, due_at) => {
                    if let Some((_, text)) = due.take() {
                        let command = Command::Move {
                            conn_id: self.id,
                            text,
                            seat: None,
                            received: tokio::time::Instant::now().into_std(),
                            received_ms: self.clock.now_ms(),
                        };
                        self.tell(command).await;
                        view.sent();
                    }
                }
            }
        }
        // As a socket's end: the room keeps the seat for its grace period.
        self.tell(Command::Disconnected { conn_id: self.id }).await;
    }

    async fn tell(&self, command: Command) {
        // A room that has closed needs telling nothing.
        let _ = self.room.commands.send(command).await;
    }

    /// Thinks about `board` on a blocking thread once one of the bots'
    /// threads is free: the bot back, with its move (`None`: it resigns).
    async fn think(&self, mut bot: Bot, board: View) -> (Bot, Option<String>) {
        let Ok(permit) = Arc::clone(&self.thinkers).acquire_owned().await else {
            return (Bot::new(self.level, self.variation), None);
        };
        let limit = think_limit(self.pace_ms);
        let level = self.level;
        let variation = self.variation;
        let thought = tokio::task::spawn_blocking(move || {
            let _thinking = permit;
            let deadline = WallClockDeadline::after(Instant::now(), limit);
            let chosen = bot.next_move_within(&board, &deadline);
            (bot, chosen)
        })
        .await;
        // A solver that panicked chose nothing: the bot resigns.
        thought.unwrap_or_else(|_| (Bot::new(level, variation), None))
    }
}

/// Returns at `due` on `clock`, never without one.
async fn sleep_until(clock: &Clock, due: Option<u64>) {
    match due {
        Some(due) => clock.sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// The wait after a board before a bot at `pace_ms` sends move
/// `move_number`, in the room clock's milliseconds: the shared
/// [`human_pace`], varied like a person's.
fn pace_for_move_ms(pace_ms: u32, move_number: u64) -> u64 {
    let pace = human_pace(Duration::from_millis(u64::from(pace_ms)), move_number);
    u64::try_from(pace.as_millis()).unwrap_or(u64::MAX)
}

/// How long a bot at `pace_ms` may think about one move: two paces, at
/// most 10 s; none at pace 0 (test servers), where it thinks its fill.
fn think_limit(pace_ms: u32) -> Option<Duration> {
    (pace_ms > 0).then(|| (Duration::from_millis(u64::from(pace_ms)) * THINK_PACES).min(THINK_CAP))
}

/// A moment on the wall clock: the solver's time is the machine's.
struct WallClockDeadline {
    at: Option<Instant>,
}

impl WallClockDeadline {
    fn after(started: Instant, limit: Option<Duration>) -> WallClockDeadline {
        WallClockDeadline {
            at: limit.map(|limit| started + limit),
        }
    }
}

impl Deadline for WallClockDeadline {
    fn passed(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }
}

/// What a bot does after a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing yet.
    Wait,
    /// Choose a move on this board, its own as last sent to its seat.
    Think(View),
    /// The room has no person left before its race: the bot leaves.
    Leave,
    /// The race is over (or the bot's seat gone): the task ends.
    Stop,
}

/// What a bot knows of its seat: only what the frames sent to that seat
/// said. Sans I/O.
#[derive(Clone, Debug, Default)]
pub struct SeatView {
    seat: Option<u8>,
    board: Option<View>,
    racing: bool,
    /// A move or resignation was sent and not answered yet: the bot sends
    /// nothing else meanwhile, so it never plays a move chosen for a board
    /// that is no longer its own.
    awaiting: bool,
}

impl SeatView {
    /// A move or a resignation has just been sent.
    pub fn sent(&mut self) {
        self.awaiting = true;
    }

    /// Takes in one frame sent to the seat, in order.
    pub fn heard(&mut self, message: &ServerMessage) -> Next {
        match message {
            ServerMessage::RoomJoined { seat, .. } => self.seat = *seat,
            ServerMessage::Resumed { seat, .. } => self.seat = Some(*seat),
            ServerMessage::RoomUpdate { room, .. } => {
                let before_race =
                    matches!(room.phase, Phase::Lobby | Phase::Dealing | Phase::Countdown);
                let people = room.players.iter().filter(|player| player.bot.is_none());
                if before_race && people.count() == 0 {
                    return Next::Leave;
                }
            }
            ServerMessage::RaceStarted { board, .. } => {
                self.board = Some(board.clone());
                self.racing = true;
            }
            ServerMessage::MoveAccepted { board, .. } => {
                self.board = Some(board.clone());
                self.awaiting = false;
            }
            ServerMessage::MoveRejected { .. } => self.awaiting = false,
            ServerMessage::Snapshot { race, .. } => {
                self.awaiting = false;
                if let Some(race) = race {
                    let own = race
                        .boards
                        .iter()
                        .find(|board| Some(board.seat) == self.seat);
                    if let Some(own) = own {
                        self.board = own.board.clone();
                        self.racing = own.status == PlayerStatus::Racing;
                    }
                }
            }
            ServerMessage::Finished { seat, .. } if Some(*seat) == self.seat => {
                self.racing = false;
            }
            ServerMessage::RaceEnded { .. } | ServerMessage::Left { .. } => return Next::Stop,
            ServerMessage::Error { code, .. } if code.is_fatal() => return Next::Stop,
            _ => {}
        }
        match &self.board {
            Some(board) if self.racing && !self.awaiting => Next::Think(board.clone()),
            _ => Next::Wait,
        }
    }
}

#[cfg(test)]
mod tests;
