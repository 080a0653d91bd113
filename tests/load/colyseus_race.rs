//! The Colyseus scenario: the `race` scenario's load against the `race`
//! room of `load/colyseus/server.mjs` (Colyseus 0.16, the same fan-out
//! without rules), so that the two servers' CPU per move and latencies come
//! from the same generator.
//!
//! Per room: the first racer creates it (seat 0), the other racers join
//! (seats in join order), then the spectators. Each racer sends a move
//! every `--move-interval-ms` in turn with the others of its room (closed
//! loop at 0: as soon as its last move is answered), exactly as in `race`:
//! the pacing, the move timings and the read loop are [`crate::fanout`]'s.
//! The move's text is a real move's ([`crate::echo_client::move_text`]);
//! the room reads none of it. Move→ack is a move to its `ack` (which echoes
//! the move's `n`), move→opponent and move→spectator to each rival's and
//! spectator's `progress` naming the seat and its move count.
//!
//! What differs from `race`, because the room has no game: races never end
//! (as with `--endless`), so rooms never re-form, and no move is ever
//! rejected. There are no stalls (`--stall-*` is refused): the transport
//! drops a socket that misses two 3 s pings, so a stalled client measures
//! Colyseus's ping timeout rather than its slow-consumer handling. The
//! sockets are opened by [`crate::colyseus`] (matchmaking over HTTP, then
//! the WebSocket), not by the [`crate::net::Connector`], so they come from
//! one source address with tungstenite's default buffers.
//!
//! Its own fields in the JSON line: `rooms_opened`, `acks_unmatched`,
//! `move_text`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::Context as _;
use futures::SinkExt as _;
use serde_json::{Map, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use crate::colyseus::{self, Frame, FrameError, Role, RoomShape};
use crate::fanout::{self, Pacing, Received, SentMoves, Sink};
use crate::measure::{Outcome, Probe, Stats, Window};

/// How the rooms race.
#[derive(Debug)]
pub struct Settings {
    /// The Colyseus server: `ws://HOST:PORT` (or `http://`, or `HOST:PORT`).
    pub base: String,
    /// Rooms racing at once.
    pub rooms: usize,
    /// Racers per room.
    pub players: u8,
    /// Spectators per room.
    pub spectators: u16,
    /// Each racer moves this often; `None`: closed loop.
    pub move_interval: Option<std::time::Duration>,
}

/// The settings, the move, and when to measure.
#[derive(Debug)]
struct Plan {
    settings: Settings,
    move_text: String,
    window: Window,
}

/// What only this scenario counts.
#[derive(Debug, Default)]
struct ColyseusBooks {
    /// Rooms created with every seat and spectator place taken.
    rooms_opened: AtomicU64,
    /// Acks whose `n` was not the move the racer was waiting for (none,
    /// unless the room misbehaves).
    acks_unmatched: AtomicU64,
}

/// What a reader hands the room: a frame, or why it could not be decoded.
type Event = fanout::Event<Result<Frame, FrameError>>;

/// Every binary frame goes to the room, decodable or not, so that a frame
/// this client does not understand counts as an error rather than
/// vanishing.
fn decode(bytes: &[u8]) -> Option<Result<Frame, FrameError>> {
    Some(colyseus::decode_frame(bytes))
}

/// Runs the rooms until the window ends, sampling `probe` at its ends.
pub async fn run(
    settings: Settings,
    window: Window,
    probe: Probe,
    stats: Arc<Stats>,
) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        (2..=8).contains(&settings.players),
        "a room has 2 to 8 players"
    );
    anyhow::ensure!(
        settings.spectators <= 64,
        "the Colyseus room takes at most 64 spectators"
    );
    let sampling = tokio::spawn(probe.sample_window(window));
    let rooms = settings.rooms;
    let plan = Arc::new(Plan {
        settings,
        move_text: crate::echo_client::move_text(),
        window,
    });
    let books = Arc::new(ColyseusBooks::default());
    fanout::run_rooms(rooms, &stats, |room| {
        let plan = Arc::clone(&plan);
        let stats = Arc::clone(&stats);
        let books = Arc::clone(&books);
        async move { run_room(room, &plan, &stats, &books).await }
    })
    .await;
    let (start, end) = sampling.await.context("sampling the server")?;
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let mut extra = Map::new();
    extra.insert("rooms_opened".into(), json!(load(&books.rooms_opened)));
    extra.insert("acks_unmatched".into(), json!(load(&books.acks_unmatched)));
    extra.insert("move_text".into(), json!(plan.move_text));
    let notes = vec![format!(
        "colyseus: {} rooms opened; no rules, so every move is counted and races never end",
        load(&books.rooms_opened)
    )];
    Ok(Outcome {
        window,
        start,
        end,
        extra,
        notes,
    })
}

/// One client of a room, as its room task sees it.
#[derive(Debug)]
struct Conn {
    sink: Option<Sink>,
    /// For racers: the seat; spectators have none.
    seat: Option<u8>,
    /// Moves sent so far: the `n` of the last one.
    moves: u64,
    /// A move sent and not yet acked: its `n`, and when.
    pending: Option<(u64, Instant)>,
    closed: bool,
}

/// Opens one room, fills it, and races until the window ends.
async fn run_room(
    room: usize,
    plan: &Plan,
    stats: &Arc<Stats>,
    books: &ColyseusBooks,
) -> anyhow::Result<()> {
    let settings = &plan.settings;
    let base = settings.base.as_str();
    let shape = RoomShape {
        players: settings.players,
        spectators: settings.spectators,
    };
    let (room_id, owner) = colyseus::create_room(base, shape, Role::Player)
        .await
        .with_context(|| format!("creating room {room}"))?;
    let mut joined = vec![owner];
    for _ in 1..settings.players {
        joined.push(colyseus::join_room(base, &room_id, Role::Player).await?);
    }
    for _ in 0..settings.spectators {
        joined.push(colyseus::join_room(base, &room_id, Role::Spectator).await?);
    }
    Stats::bump(&books.rooms_opened);

    let (events_in, mut events) = mpsc::channel::<Event>(1024);
    let mut conns = Vec::with_capacity(joined.len());
    for (index, client) in joined.into_iter().enumerate() {
        let (sink, stream) = client.into_parts();
        conns.push(Conn {
            sink: Some(sink),
            // Seats are taken in join order, and the racers joined first.
            seat: u8::try_from(index)
                .ok()
                .filter(|&seat| seat < settings.players),
            moves: 0,
            pending: None,
            closed: false,
        });
        tokio::spawn(fanout::read_loop(
            index,
            stream,
            events_in.clone(),
            None,
            Arc::clone(stats),
            plan.window,
            decode,
        ));
    }
    // The readers hold the only senders: once all have ended, so does the
    // room.
    drop(events_in);

    let mut pacing = Pacing::new(settings.move_interval, settings.players);
    let closed_loop = pacing.closed_loop();
    let mut sent = SentMoves::new(settings.players);
    if closed_loop {
        // Nothing starts the race here (there is no countdown): every racer
        // makes its first move at once.
        for conn in &mut conns {
            play_next(plan, stats, conn, &mut sent).await;
        }
    }
    let end = tokio::time::sleep_until(tokio::time::Instant::from_std(plan.window.until));
    tokio::pin!(end);
    loop {
        tokio::select! {
            () = &mut end => break,
            mover = pacing.next_turn() => {
                let conn = &mut conns[mover];
                if conn.pending.is_some() && !conn.closed {
                    if plan.window.contains(Instant::now()) {
                        Stats::bump(&stats.late_ticks);
                    }
                    continue;
                }
                play_next(plan, stats, conn, &mut sent).await;
            }
            event = events.recv() => {
                let Some(event) = event else { break };
                let index = event.conn;
                handle(plan, stats, books, &mut conns, &sent, event);
                if closed_loop {
                    play_next(plan, stats, &mut conns[index], &mut sent).await;
                }
            }
        }
    }
    // Each client leaves as Colyseus's own client does (the room sees a
    // consented leave), then closes.
    for conn in &mut conns {
        if let Some(mut sink) = conn.sink.take() {
            let _ = colyseus::send_leave(&mut sink).await;
            let _ = sink.send(Message::Close(None)).await;
        }
    }
    Ok(())
}

/// Sends the racer's next move if it may move now: a racer, connected, its
/// last move acked.
async fn play_next(plan: &Plan, stats: &Stats, conn: &mut Conn, sent: &mut SentMoves) {
    if conn.seat.is_none() || conn.closed || conn.pending.is_some() {
        return;
    }
    let Some(sink) = conn.sink.as_mut() else {
        return;
    };
    let n = conn.moves + 1;
    // The room counts every move, so the seat's count after this one is `n`.
    let at = fanout::move_sent(stats, plan.window, sent, conn.seat, n);
    conn.moves = n;
    conn.pending = Some((n, at));
    if colyseus::send_move(sink, n, &plan.move_text).await.is_err() {
        conn.sink = None;
    }
}

/// One frame (or the end) from one of the room's clients.
fn handle(
    plan: &Plan,
    stats: &Stats,
    books: &ColyseusBooks,
    conns: &mut [Conn],
    sent: &SentMoves,
    event: Event,
) {
    let index = event.conn;
    let measuring = plan.window.contains(event.at);
    let frame = match event.what {
        Received::Closed(_) => {
            let conn = &mut conns[index];
            conn.closed = true;
            conn.sink = None;
            if Instant::now() < plan.window.until {
                Stats::bump(&stats.disconnects);
            }
            return;
        }
        Received::Message(Ok(frame)) => frame,
        Received::Message(Err(error)) => {
            if measuring {
                Stats::bump(&stats.errors);
            }
            eprintln!("colyseus: an undecodable frame: {error}");
            return;
        }
    };
    match frame {
        Frame::Ack { n, .. } => {
            let conn = &mut conns[index];
            match conn.pending {
                Some((pending, sent_at)) if pending == n => {
                    conn.pending = None;
                    fanout::answered(stats, sent_at, event.at, measuring);
                }
                _ => Stats::bump(&books.acks_unmatched),
            }
        }
        Frame::Progress { seat, progress, .. } => {
            fanout::reported(
                stats,
                sent,
                seat,
                progress.moves,
                event.at,
                measuring,
                conns[index].seat.is_some(),
            );
        }
        Frame::Error { code, message } => {
            if measuring {
                Stats::bump(&stats.errors);
            }
            eprintln!("colyseus: error {code}: {message}");
        }
        // The join is confirmed before the reader starts, and a leave is
        // followed by the close, counted above.
        Frame::Joined { .. } | Frame::LeaveRoom => {}
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::colyseus::Counters;

    /// A room of two racers and a spectator, racer 0 waiting for the ack of
    /// its move 3, sent at `sent_at` (and remembered for its rivals).
    fn room(sent_at: Instant) -> (Plan, Vec<Conn>, SentMoves, Stats) {
        let plan = Plan {
            settings: Settings {
                base: "127.0.0.1:1".to_string(),
                rooms: 1,
                players: 2,
                spectators: 1,
                move_interval: None,
            },
            move_text: "t1 f".to_string(),
            window: Window {
                from: sent_at,
                until: sent_at + Duration::from_secs(3600),
            },
        };
        let conn = |seat| Conn {
            sink: None,
            seat,
            moves: 0,
            pending: None,
            closed: false,
        };
        let mut conns = vec![conn(Some(0)), conn(Some(1)), conn(None)];
        conns[0].moves = 3;
        conns[0].pending = Some((3, sent_at));
        let stats = Stats::default();
        let mut sent = SentMoves::new(2);
        fanout::move_sent(&stats, plan.window, &mut sent, Some(0), 3);
        (plan, conns, sent, stats)
    }

    fn event(conn: usize, at: Instant, frame: Frame) -> Event {
        Event {
            conn,
            at,
            what: Received::Message(Ok(frame)),
        }
    }

    #[test]
    fn acks_and_progress_are_timed_against_the_move_they_name() {
        let sent_at = Instant::now();
        let (plan, mut conns, sent, stats) = room(sent_at);
        let books = ColyseusBooks::default();
        let at = sent_at + Duration::from_millis(2);
        let progress = Counters {
            moves: 3,
            ..Counters::default()
        };
        // An ack of another move leaves the racer waiting.
        let stale = Frame::Ack {
            n: 2,
            seq: 5,
            progress,
        };
        handle(
            &plan,
            &stats,
            &books,
            &mut conns,
            &sent,
            event(0, at, stale),
        );
        assert!(conns[0].pending.is_some());
        assert_eq!(books.acks_unmatched.load(Ordering::Relaxed), 1);
        let ack = Frame::Ack {
            n: 3,
            seq: 6,
            progress,
        };
        handle(&plan, &stats, &books, &mut conns, &sent, event(0, at, ack));
        assert_eq!(conns[0].pending, None);
        let report = |conn| {
            event(
                conn,
                at,
                Frame::Progress {
                    seq: 6,
                    seat: 0,
                    progress,
                },
            )
        };
        handle(&plan, &stats, &books, &mut conns, &sent, report(1));
        handle(&plan, &stats, &books, &mut conns, &sent, report(2));
        assert_eq!(stats.ack.count(), 1);
        assert_eq!(stats.moves_accepted.load(Ordering::Relaxed), 1);
        assert_eq!(stats.opponent.count(), 1, "the rival's progress");
        assert_eq!(stats.spectator.count(), 1, "the spectator's progress");
        // The end of a socket before the window's is a disconnect.
        let closed = Event {
            conn: 1,
            at,
            what: Received::Closed(None),
        };
        handle(&plan, &stats, &books, &mut conns, &sent, closed);
        assert!(conns[1].closed);
        assert_eq!(stats.disconnects.load(Ordering::Relaxed), 1);
        let garbled = Event {
            conn: 2,
            at,
            what: Received::Message(Err(FrameError::Truncated)),
        };
        handle(&plan, &stats, &books, &mut conns, &sent, garbled);
        assert_eq!(stats.errors.load(Ordering::Relaxed), 1);
    }
}
