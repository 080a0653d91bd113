//! The echo scenario: the baseline for the race server. As many sockets as
//! the race scenario has racers each send a binary frame the size of an
//! encoded `move` to `patience-echo`, open loop (every interval, the
//! sockets' phases spread over it) or closed loop (the next as soon as the
//! echo is back), and time the echo. In the report a frame sent is a "move
//! sent", its echo the "move accepted" and "move→ack" is the round trip;
//! each echo is one delivery, so the server's CPU per accepted move is its
//! CPU per round trip.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{SinkExt as _, StreamExt as _};
use patience_shared::game::GameKind;
use patience_shared::protocol::{self, ClientMessage};
use patience_shared::rules::Rules as _;
use serde_json::{Map, json};
use tokio_tungstenite::tungstenite::Message;

use crate::measure::{Outcome, Probe, Stats, Window};
use crate::net::{Connector, Socket};

/// How many sockets, how often, how big.
#[derive(Debug)]
pub struct Settings {
    /// Sockets sending frames.
    pub connections: usize,
    /// Each socket sends this often; `None`: closed loop.
    pub move_interval: Option<Duration>,
    /// The frame's size; by default that of an encoded move.
    pub frame_bytes: Option<usize>,
}

/// The text of a real move: the first legal move of a Three Blind Mice
/// deal. The Colyseus scenario sends it too, where no rules read it.
pub fn move_text() -> String {
    let position = patience_shared::any::AnyGame::deal(GameKind::ThreeBlindMice, 1);
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    moves
        .first()
        .map_or_else(|| "1-2".to_string(), |&mv| position.format_move(mv))
}

/// An encoded `move` of a real position ([`move_text`]), in the protocol's
/// encoding.
fn move_frame() -> Vec<u8> {
    protocol::encode(&ClientMessage::Move {
        text: move_text(),
        seat: None,
    })
}

/// Connects every socket, echoes until the window ends.
pub async fn run(
    settings: Settings,
    connector: Arc<Connector>,
    window: Window,
    probe: Probe,
    stats: Arc<Stats>,
) -> anyhow::Result<Outcome> {
    let sampling = tokio::spawn(probe.sample_window(window));
    let mut frame = move_frame();
    if let Some(bytes) = settings.frame_bytes {
        frame.resize(bytes, 0);
    }
    let frame_bytes = frame.len();
    let mut tasks = Vec::with_capacity(settings.connections);
    for index in 0..settings.connections {
        let socket = connector
            .connect(None)
            .await
            .with_context(|| format!("connecting echo socket {index}"))?;
        // Open loop: the sockets' first frames spread over one interval.
        let phase = settings
            .move_interval
            .map(|interval| interval.mul_f64(index as f64 / settings.connections.max(1) as f64));
        tasks.push(tokio::spawn(echo(
            socket,
            frame.clone(),
            settings.move_interval.zip(phase),
            window,
            Arc::clone(&stats),
        )));
    }
    for task in tasks {
        let _ = task.await;
    }
    let (start, end) = sampling.await.context("sampling the server")?;
    let mut extra = Map::new();
    extra.insert("connections".into(), json!(settings.connections));
    extra.insert("frame_bytes".into(), json!(frame_bytes));
    let notes = vec![format!(
        "echo: {} sockets, {frame_bytes}-byte frames; move->ack is the round trip",
        settings.connections
    )];
    Ok(Outcome {
        window,
        start,
        end,
        extra,
        notes,
    })
}

/// One socket: sends `frame` on each tick (`pacing`: interval and phase)
/// or, without pacing, as soon as the last one is back; until the window
/// ends.
async fn echo(
    socket: Socket,
    frame: Vec<u8>,
    pacing: Option<(Duration, Duration)>,
    window: Window,
    stats: Arc<Stats>,
) {
    let (mut sink, mut stream) = socket.split();
    let (interval, phase) = pacing.unwrap_or((Duration::from_secs(3600), Duration::ZERO));
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + phase, interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let closed_loop = pacing.is_none();
    let end = tokio::time::sleep_until(window.until.into());
    tokio::pin!(end);
    let mut pending: Option<Instant> = None;
    let send = |pending: &mut Option<Instant>| {
        let now = Instant::now();
        *pending = Some(now);
        if window.contains(now) {
            Stats::bump(&stats.moves_sent);
        }
        Message::Binary(frame.clone().into())
    };
    if closed_loop && sink.send(send(&mut pending)).await.is_err() {
        Stats::bump(&stats.disconnects);
        return;
    }
    loop {
        tokio::select! {
            () = &mut end => break,
            _ = ticker.tick(), if !closed_loop => {
                if pending.is_some() {
                    if window.contains(Instant::now()) {
                        Stats::bump(&stats.late_ticks);
                    }
                    continue;
                }
                if sink.send(send(&mut pending)).await.is_err() {
                    Stats::bump(&stats.disconnects);
                    return;
                }
            }
            next = stream.next() => match next {
                Some(Ok(Message::Binary(_))) => {
                    let at = Instant::now();
                    if let Some(sent_at) = pending.take()
                        && window.contains(at)
                    {
                        stats.ack.record(at - sent_at);
                        Stats::bump(&stats.moves_accepted);
                        Stats::bump(&stats.deliveries);
                    }
                    if closed_loop && sink.send(send(&mut pending)).await.is_err() {
                        Stats::bump(&stats.disconnects);
                        return;
                    }
                }
                Some(Ok(_)) => {}
                None | Some(Err(_)) => {
                    if Instant::now() < window.until {
                        Stats::bump(&stats.disconnects);
                    }
                    return;
                }
            }
        }
    }
    let _ = sink.send(Message::Close(None)).await;
}
