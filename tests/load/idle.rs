//! The idle scenario: N sockets to a `patience-server`, each of which says
//! `hello` and then only reads (tungstenite answers the server's pings as
//! it reads), for what an idle socket costs the server.
//!
//! The server's memory is sampled before the first socket connects and
//! again once all are open and have been held for the hold time; the
//! difference over the sockets it accepted is `rss_bytes_per_socket`. A
//! socket the server turns away (`server_full`) is counted as refused, one
//! that fails otherwise (a reset, a timeout) as failed, with the first
//! such error kept. The measurement window is the hold.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt as _, StreamExt as _};
use patience_shared::protocol::{ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage};
use serde_json::{Map, json};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

use crate::measure::{Outcome, Probe, Stats, Window};
use crate::net::{Connector, Socket};
use crate::race::{next_message, send};

/// How many sockets, and for how long.
#[derive(Debug)]
pub struct Settings {
    /// Sockets to open.
    pub sockets: usize,
    /// How long all of them stay open once they are.
    pub hold: Duration,
    /// Sockets connecting at once.
    pub connect_concurrency: usize,
}

/// How one socket's opening went.
enum Opened {
    /// Welcomed: it idles.
    Accepted(Box<Socket>),
    /// Told `server_full`.
    Refused,
    /// Anything else, with why.
    Failed(String),
}

/// Opens the sockets, holds them, and reports what they cost.
pub async fn run(
    settings: Settings,
    connector: Arc<Connector>,
    probe: Probe,
    stats: Arc<Stats>,
) -> anyhow::Result<Outcome> {
    let before = probe.sample();
    let connecting = Instant::now();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut accepted = 0u64;
    let mut refused = 0u64;
    let mut failed = 0u64;
    let mut first_failure = None;
    let mut idlers = Vec::new();
    let mut openings = futures::stream::iter(0..settings.sockets)
        .map(|index| open(&connector, index))
        .buffer_unordered(settings.connect_concurrency);
    while let Some(opened) = openings.next().await {
        match opened {
            Opened::Accepted(socket) => {
                accepted += 1;
                idlers.push(tokio::spawn(idle(
                    *socket,
                    stop_rx.clone(),
                    Arc::clone(&stats),
                )));
            }
            Opened::Refused => refused += 1,
            Opened::Failed(why) => {
                failed += 1;
                first_failure.get_or_insert(why);
            }
        }
    }
    drop(openings);
    let connect_s = connecting.elapsed().as_secs_f64();
    let from = Instant::now();
    let window = Window {
        from,
        until: from + settings.hold,
    };
    let start = probe.sample();
    tokio::time::sleep_until(window.until.into()).await;
    let end = probe.sample();
    let _ = stop_tx.send(true);
    for idler in idlers {
        let _ = idler.await;
    }
    let per_socket = before
        .rss_bytes
        .zip(end.rss_bytes)
        .filter(|_| accepted > 0)
        .map(|(before, end)| (end as f64 - before as f64) / accepted as f64);
    let mut extra = Map::new();
    extra.insert("sockets".into(), json!(settings.sockets));
    extra.insert("sockets_accepted".into(), json!(accepted));
    extra.insert("sockets_refused".into(), json!(refused));
    extra.insert("sockets_failed".into(), json!(failed));
    extra.insert("first_failure".into(), json!(first_failure));
    extra.insert("connect_s".into(), json!(connect_s));
    extra.insert("rss_bytes_before".into(), json!(before.rss_bytes));
    extra.insert("rss_bytes_per_socket".into(), json!(per_socket));
    let notes = vec![format!(
        "idle: {} sockets: {accepted} accepted, {refused} refused (server_full), {failed} failed{} in {connect_s:.1} s; \
         server RSS {:?} -> {:?} bytes, {:?} per accepted socket",
        settings.sockets,
        first_failure
            .as_ref()
            .map_or(String::new(), |why| format!(" (first: {why})")),
        before.rss_bytes,
        end.rss_bytes,
        per_socket.map(f64::round),
    )];
    Ok(Outcome {
        window,
        start,
        end,
        extra,
        notes,
    })
}

/// Connects, says hello, and waits for the welcome or a refusal.
async fn open(connector: &Connector, index: usize) -> Opened {
    let mut socket = match connector.connect(None).await {
        Ok(socket) => socket,
        Err(error) => return Opened::Failed(format!("{error:#}")),
    };
    let hello = ClientMessage::Hello {
        version: PROTOCOL_VERSION,
        name: format!("idle{index}"),
    };
    if let Err(error) = send(&mut socket, &hello).await {
        return Opened::Failed(format!("{error:#}"));
    }
    match next_message(&mut socket).await {
        Ok(ServerMessage::Welcome { .. }) => Opened::Accepted(Box::new(socket)),
        Ok(ServerMessage::Error {
            code: ErrorCode::ServerFull,
            ..
        }) => Opened::Refused,
        Ok(other) => Opened::Failed(format!("expected welcome, got {other:?}")),
        Err(error) => Opened::Failed(format!("{error:#}")),
    }
}

/// Reads (so that pings are answered) until told to stop, then closes; a
/// socket the server closes first is a disconnect.
async fn idle(mut socket: Socket, mut stop: watch::Receiver<bool>, stats: Arc<Stats>) {
    loop {
        tokio::select! {
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            }
            next = socket.next() => match next {
                Some(Ok(Message::Binary(_))) => {
                    // Nothing is expected after the welcome; still a delivery.
                    Stats::bump(&stats.deliveries);
                }
                Some(Ok(_)) => {}
                None | Some(Err(_)) => {
                    Stats::bump(&stats.disconnects);
                    return;
                }
            }
        }
    }
}
