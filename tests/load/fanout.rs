//! What the two race scenarios share, so that `race` (patience-server) and
//! `colyseus` (the Colyseus room) measure the same things the same way:
//! starting the rooms ([`run_rooms`]), the open-loop pacing of a room's
//! racers ([`Pacing`]), remembering when each seat's moves went out and
//! timing the frames that answer or report them ([`SentMoves`],
//! [`move_sent`], [`answered`], [`reported`]), and the reader task that
//! timestamps each frame as it arrives ([`read_loop`]).
//!
//! Nothing here knows either protocol: a scenario passes its decoder to the
//! read loop and says which seat and move count a frame reports.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use futures::stream::{SplitSink, SplitStream};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

use crate::measure::{Stats, Window};
use crate::net::Socket;

/// The write half of a load socket.
pub type Sink = SplitSink<Socket, Message>;
/// The read half of a load socket.
pub type Stream = SplitStream<Socket>;

/// How far apart the rooms start: connecting hundreds of sockets at once
/// only measures the accept queue, and a short stagger spreads the rooms'
/// moves too.
const ROOM_STAGGER: Duration = Duration::from_millis(5);

/// Moves remembered per seat to match the rivals' reports to: far more than
/// can be in flight, since a racer waits for its answer before moving again.
const REMEMBERED_MOVES: usize = 64;

/// Runs `room(0)`, `room(1)`, … as tasks started [`ROOM_STAGGER`] apart, and
/// waits for all of them. A room that fails counts as an error and says why
/// on stderr; the others go on.
pub async fn run_rooms<F, Fut>(rooms: usize, stats: &Arc<Stats>, room: F)
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let mut tasks = Vec::with_capacity(rooms);
    for index in 0..rooms {
        let stats = Arc::clone(stats);
        let running = room(index);
        tasks.push(tokio::spawn(async move {
            if let Err(error) = running.await {
                Stats::bump(&stats.errors);
                eprintln!("room {index}: {error:#}");
            }
        }));
        tokio::time::sleep(ROOM_STAGGER).await;
    }
    for task in tasks {
        let _ = task.await;
    }
}

/// Whose turn it is to move in one room. Open loop: one racer's turn every
/// interval / players, in seat order, so each racer moves once per interval;
/// closed loop (no interval): never, since each answer brings the mover's
/// next move instead.
#[derive(Debug)]
pub struct Pacing {
    ticker: Option<tokio::time::Interval>,
    next_mover: usize,
    players: usize,
}

impl Pacing {
    /// The pacing of `players` racers moving every `move_interval` (`None`:
    /// closed loop).
    pub fn new(move_interval: Option<Duration>, players: u8) -> Pacing {
        let ticker = move_interval.map(|interval| {
            let tick = (interval / u32::from(players.max(1))).max(Duration::from_micros(100));
            let mut ticker = tokio::time::interval(tick);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticker
        });
        Pacing {
            ticker,
            next_mover: 0,
            players: usize::from(players.max(1)),
        }
    }

    /// Whether each answer brings the next move (no ticks).
    pub fn closed_loop(&self) -> bool {
        self.ticker.is_none()
    }

    /// Waits for the next turn and returns the index of the racer whose turn
    /// it is (racers first among a room's connections); in closed loop it
    /// never returns. Cancel-safe, for `select!`.
    pub async fn next_turn(&mut self) -> usize {
        let Some(ticker) = self.ticker.as_mut() else {
            return std::future::pending().await;
        };
        ticker.tick().await;
        let mover = self.next_mover;
        self.next_mover = (mover + 1) % self.players;
        mover
    }
}

/// Per seat, the last few moves sent: the seat's move count once the move
/// is made, and when it went out.
#[derive(Debug)]
pub struct SentMoves(Vec<VecDeque<(u64, Instant)>>);

impl SentMoves {
    /// Nothing sent yet by `players` seats.
    pub fn new(players: u8) -> SentMoves {
        SentMoves(vec![VecDeque::new(); usize::from(players)])
    }

    fn record(&mut self, seat: u8, moves: u64, at: Instant) {
        if let Some(queue) = self.0.get_mut(usize::from(seat)) {
            queue.push_back((moves, at));
            if queue.len() > REMEMBERED_MOVES {
                queue.pop_front();
            }
        }
    }

    /// When `seat`'s move that brought its count to `moves` went out.
    pub fn sent_at(&self, seat: u8, moves: u64) -> Option<Instant> {
        self.0
            .get(usize::from(seat))?
            .iter()
            .find(|(sent, _)| *sent == moves)
            .map(|(_, at)| *at)
    }
}

/// A racer's move goes out now: counted as sent if the window holds it, and
/// (for a seated racer) remembered as the move that brings `seat`'s count to
/// `moves_after`. Returns when, for the mover's own answer.
pub fn move_sent(
    stats: &Stats,
    window: Window,
    sent: &mut SentMoves,
    seat: Option<u8>,
    moves_after: u64,
) -> Instant {
    let now = Instant::now();
    if let Some(seat) = seat {
        sent.record(seat, moves_after, now);
    }
    if window.contains(now) {
        Stats::bump(&stats.moves_sent);
    }
    now
}

/// The mover's answer to its move sent at `sent_at` arrived at `at`
/// (`move_accepted`; Colyseus's `ack`): a move→ack sample and an accepted
/// move, if `measuring`.
pub fn answered(stats: &Stats, sent_at: Instant, at: Instant, measuring: bool) {
    if measuring {
        stats.ack.record(at - sent_at);
        Stats::bump(&stats.moves_accepted);
    }
}

/// A frame reporting `seat`'s move that brought its count to `moves`
/// (`progress`) reached a rival (`to_racer`) or a spectator at `at`: a
/// move→opponent or move→spectator sample, if `measuring` and the move is
/// one this room sent and still remembers.
pub fn reported(
    stats: &Stats,
    sent: &SentMoves,
    seat: u8,
    moves: u64,
    at: Instant,
    measuring: bool,
    to_racer: bool,
) {
    let Some(sent_at) = sent.sent_at(seat, moves) else {
        return;
    };
    if measuring {
        let latencies = if to_racer {
            &stats.opponent
        } else {
            &stats.spectator
        };
        latencies.record(at - sent_at);
    }
}

/// What a reader saw, with when.
#[derive(Debug)]
pub struct Event<M> {
    /// The connection's index in its room.
    pub conn: usize,
    /// When the frame was read off the socket.
    pub at: Instant,
    /// The frame, decoded, or the end.
    pub what: Received<M>,
}

/// A decoded frame, or the end of the socket.
#[derive(Debug)]
pub enum Received<M> {
    /// A binary frame, as the scenario's decoder made it.
    Message(M),
    /// The close frame, or `None` when the socket ended without one.
    Closed(Option<CloseFrame>),
}

/// Reads frames and hands them to the room task with the time they arrived,
/// counting each binary frame as a delivery within the window. A frame
/// `decode` returns `None` for is counted and skipped. While `stall` holds
/// `true` it reads nothing (which also leaves the server's pings
/// unanswered); without `stall` it always reads. It returns once the socket
/// ends, the room stops listening, or the stall's sender is dropped.
pub async fn read_loop<M, D>(
    conn: usize,
    mut stream: Stream,
    events: mpsc::Sender<Event<M>>,
    mut stall: Option<watch::Receiver<bool>>,
    stats: Arc<Stats>,
    window: Window,
    decode: D,
) where
    D: Fn(&[u8]) -> Option<M>,
{
    loop {
        let stalled = stall.as_ref().is_some_and(|stall| *stall.borrow());
        if stalled {
            if stall_changed(&mut stall).await.is_err() {
                return;
            }
            continue;
        }
        let next = tokio::select! {
            next = stream.next() => next,
            changed = stall_changed(&mut stall) => {
                if changed.is_err() { return; }
                continue;
            }
        };
        let at = Instant::now();
        let what = match next {
            Some(Ok(Message::Binary(bytes))) => {
                if window.contains(at) {
                    Stats::bump(&stats.deliveries);
                }
                match decode(&bytes) {
                    Some(message) => Received::Message(message),
                    None => continue,
                }
            }
            Some(Ok(Message::Close(frame))) => Received::Closed(frame),
            Some(Ok(_)) => continue,
            None | Some(Err(_)) => Received::Closed(None),
        };
        let last = matches!(what, Received::Closed(_));
        if events.send(Event { conn, at, what }).await.is_err() || last {
            return;
        }
    }
}

/// The stall switch's next change; never, without one.
async fn stall_changed(
    stall: &mut Option<watch::Receiver<bool>>,
) -> Result<(), watch::error::RecvError> {
    match stall {
        Some(stall) => stall.changed().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rivals_reports_match_the_move_they_report() {
        let stats = Stats::default();
        let start = Instant::now();
        let window = Window {
            from: start,
            until: start + Duration::from_secs(3600),
        };
        let mut sent = SentMoves::new(2);
        let first = move_sent(&stats, window, &mut sent, Some(1), 1);
        let second = move_sent(&stats, window, &mut sent, Some(1), 2);
        // A spectator's frame has no seat of its own to remember.
        move_sent(&stats, window, &mut sent, None, 1);
        assert_eq!(sent.sent_at(1, 1), Some(first));
        assert_eq!(sent.sent_at(1, 2), Some(second));
        assert_eq!(sent.sent_at(0, 1), None, "seat 0 sent nothing");
        assert_eq!(sent.sent_at(7, 1), None, "no such seat");
        let later = second + Duration::from_millis(3);
        // Two rivals and a spectator.
        reported(&stats, &sent, 1, 2, later, true, true);
        reported(&stats, &sent, 1, 2, later, true, true);
        reported(&stats, &sent, 1, 2, later, true, false);
        // Not measured, or a move this room never sent: no sample.
        reported(&stats, &sent, 1, 1, later, false, true);
        reported(&stats, &sent, 0, 9, later, true, true);
        answered(&stats, second, later, true);
        answered(&stats, first, later, false);
        assert_eq!(
            stats.moves_sent.load(std::sync::atomic::Ordering::Relaxed),
            3
        );
        assert_eq!(
            stats
                .moves_accepted
                .load(std::sync::atomic::Ordering::Relaxed),
            1
        );
        assert_eq!(stats.opponent.count(), 2);
        assert_eq!(stats.spectator.count(), 1);
        assert_eq!(stats.ack.count(), 1);
    }

    #[test]
    fn a_seat_remembers_only_its_last_moves() {
        let stats = Stats::default();
        let start = Instant::now();
        let window = Window {
            from: start,
            until: start,
        };
        let mut sent = SentMoves::new(1);
        for moves in 1..=(REMEMBERED_MOVES as u64 + 1) {
            move_sent(&stats, window, &mut sent, Some(0), moves);
        }
        assert_eq!(sent.sent_at(0, 1), None, "the oldest is forgotten");
        assert!(sent.sent_at(0, 2).is_some());
        assert!(sent.sent_at(0, REMEMBERED_MOVES as u64 + 1).is_some());
        assert_eq!(
            stats.moves_sent.load(std::sync::atomic::Ordering::Relaxed),
            0,
            "an empty window counts nothing"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn open_loop_turns_go_round_the_seats_and_closed_loop_has_none() {
        let mut pacing = Pacing::new(Some(Duration::from_millis(400)), 4);
        assert!(!pacing.closed_loop());
        let start = tokio::time::Instant::now();
        let mut turns = Vec::new();
        for _ in 0..6 {
            turns.push(pacing.next_turn().await);
        }
        assert_eq!(turns, [0, 1, 2, 3, 0, 1]);
        // The first tick is at once, then one every 100 ms.
        assert_eq!(start.elapsed(), Duration::from_millis(500));
        let mut closed = Pacing::new(None, 4);
        assert!(closed.closed_loop());
        let turn = tokio::time::timeout(Duration::from_secs(60), closed.next_turn()).await;
        assert!(turn.is_err(), "closed loop gave a turn");
    }
}
