//! The socket: the request head (a page request is answered and the socket
//! closed), the WebSocket handshake, then a reader loop that decodes
//! frames, holds the hello deadline, the idle timeout and the rate limits,
//! and hands each message to the dispatcher; and a writer task that drains
//! the connection's **bounded** outbox.
//!
//! A player whose outbox is full (in frames or in bytes), or whose socket
//! has taken nothing for the write timeout, is disconnected `too_slow` (and
//! may resume); a spectator's is coalesced by its room (events skipped,
//! then one snapshot). Each fatal error goes out with its close code.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _};
use patience_shared::protocol::{self, ErrorCode, ServerMessage};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};
use tracing::Instrument as _;

use super::Session;
use crate::config::millis;
use crate::metrics::{Metrics, bump, gauge};
use crate::outbox::{ConnectionHandle, OutboxReceiver, outbox};
use crate::state::Shared;
use crate::web;

/// The WebSocket settings for game traffic: small frames, a small read
/// buffer, a bounded write buffer.
pub fn websocket_config(config: &crate::Config) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(config.read_buffer_bytes)
        .write_buffer_size(config.write_buffer_bytes)
        .max_write_buffer_size(config.write_buffer_bytes * 8 + config.max_message_bytes * 64)
        .max_message_size(Some(config.max_message_bytes))
        .max_frame_size(Some(config.max_message_bytes))
}

/// How long a socket accepted over the connection cap has to send its
/// request head before it is answered `503` anyway: a client sends its
/// head with the connection, and the sockets over the cap are few.
const OVER_CAP_HEAD_TIMEOUT: Duration = Duration::from_secs(1);

/// Serves one accepted socket until it closes. `over_cap` says that the
/// server held `max_connections` sockets already when it was accepted
/// (unfinished request heads included): it is refused as soon as its head
/// is read, `503` for a page request, `server_full` with close code 1013
/// for a WebSocket.
pub async fn serve(
    shared: Arc<Shared>,
    stream: TcpStream,
    peer: SocketAddr,
    permit: OwnedSemaphorePermit,
    over_cap: bool,
) {
    let id = shared.next_connection_id.fetch_add(1, Ordering::Relaxed);
    let span = tracing::info_span!("connection", id, %peer);
    async move {
        let _permit = permit;
        let handshake_timeout = millis(shared.config.handshake_timeout_ms);
        let started = tokio::time::Instant::now();
        // The request head and the handshake are boxed: each is made once,
        // and would otherwise size the connection's task for all of its life.
        let head_timeout = if over_cap {
            OVER_CAP_HEAD_TIMEOUT.min(handshake_timeout)
        } else {
            handshake_timeout
        };
        let reading = web_or_upgrade(&shared, stream, head_timeout, over_cap);
        let Some(Upgrade { socket, accept }) = Box::pin(reading).await else {
            return;
        };
        let handshake = Box::pin(web::upgrade(
            socket,
            &accept,
            websocket_config(&shared.config),
        ));
        let left = handshake_timeout.saturating_sub(started.elapsed());
        let handshaken = tokio::time::timeout(left, handshake).await;
        // Sent: not kept for the life of the connection.
        drop(accept);
        let socket = match handshaken {
            Ok(Ok(socket)) => socket,
            Ok(Err(error)) => {
                tracing::debug!(%error, "websocket handshake failed");
                return;
            }
            Err(_) => {
                tracing::debug!("websocket handshake timed out");
                return;
            }
        };
        gauge(&shared.metrics.connections, 1);
        bump(&shared.metrics.connections_total);
        run(&shared, socket, id, peer, over_cap).await;
        gauge(&shared.metrics.connections, -1);
        tracing::debug!("closed");
    }
    .instrument(span)
    .await;
}

/// Reads the request head: a WebSocket upgrade gets the stream back, with
/// the answer that accepts it; any other request (or an upgrade that is
/// not a valid WebSocket one) is answered with the web page's files (or
/// `400`, or `503` over the connection cap) and closed. `None` once the
/// socket is done with.
async fn web_or_upgrade(
    shared: &Arc<Shared>,
    mut stream: TcpStream,
    timeout: Duration,
    over_cap: bool,
) -> Option<Upgrade> {
    let started = tokio::time::Instant::now();
    let response = match tokio::time::timeout(timeout, web::read_request(&mut stream)).await {
        Err(_) if over_cap => {
            bump(&shared.metrics.connections_refused);
            web::Response::busy()
        }
        Err(_) => {
            tracing::debug!("request head timed out");
            return None;
        }
        Ok(Ok((request, rest))) if request.is_websocket_upgrade() => {
            match web::websocket_accept(&request) {
                Ok(accept) => {
                    let socket = web::Prefixed::new(rest, stream);
                    return Some(Upgrade { socket, accept });
                }
                Err(error) => {
                    tracing::debug!(%error, "websocket handshake failed");
                    web::Response::bad_request()
                }
            }
        }
        Ok(Ok(_)) if over_cap => {
            bump(&shared.metrics.connections_refused);
            web::Response::busy()
        }
        Ok(Ok((request, _))) => web::respond(&request),
        Ok(Err(web::HeadError::Closed | web::HeadError::Io(_))) => return None,
        Ok(Err(error)) => {
            tracing::debug!(%error, "bad request");
            web::Response::bad_request()
        }
    };
    // Counted as a connection while it is answered (it counted under the
    // cap from its accept).
    gauge(&shared.metrics.connections, 1);
    let linger = timeout.saturating_sub(started.elapsed()).min(WEB_LINGER);
    let answered = tokio::time::timeout(timeout, web::answer(&mut stream, &response, linger)).await;
    gauge(&shared.metrics.connections, -1);
    if let Ok(Err(error)) = answered {
        tracing::debug!(%error, "answering a web request failed");
    }
    None
}

/// How long a web request's socket is kept, after the answer, for the
/// client to read it and close.
const WEB_LINGER: Duration = Duration::from_secs(1);

/// A game connection's socket: the TCP stream, with whatever the client
/// sent after its upgrade's head.
type Socket = web::Prefixed<TcpStream>;

/// A WebSocket upgrade read and found valid: the socket, and the
/// `101 Switching Protocols` answer to send on it.
struct Upgrade {
    socket: Socket,
    accept: Vec<u8>,
}

async fn run(
    shared: &Arc<Shared>,
    socket: WebSocketStream<Socket>,
    id: u64,
    peer: SocketAddr,
    over_cap: bool,
) {
    let (sink, mut stream) = socket.split();
    let config = &shared.config;
    let (handle, outbox_receiver) = outbox(id, config.outbox_capacity, config.outbox_bytes);
    let writer = tokio::spawn(
        write_loop(
            sink,
            outbox_receiver,
            handle.clone(),
            shared.shutdown.clone(),
            Arc::clone(&shared.metrics),
            WriterTimings {
                heartbeat: millis(config.heartbeat_interval_ms),
                write_timeout: millis(config.write_timeout_ms),
                farewell_timeout: millis(config.farewell_timeout_ms),
            },
        )
        .in_current_span(),
    );
    if over_cap {
        bump(&shared.metrics.connections_refused);
        handle.kick(
            ErrorCode::ServerFull,
            "the server has too many connections; try again later",
        );
    }
    let mut session = Session::new(Arc::clone(shared), handle.clone(), peer);
    let idle = millis(shared.config.idle_timeout_ms);
    let hello_deadline = tokio::time::Instant::now() + millis(shared.config.handshake_timeout_ms);
    // The quiet timer is lazy: a frame only notes when it was heard, and
    // the timer, when it fires, moves itself to the real deadline if
    // something was heard since. A timer made or reset on every frame
    // costs a trip through the runtime's timer wheel each time.
    let mut heard_at = tokio::time::Instant::now();
    let mut quiet = std::pin::pin!(tokio::time::sleep_until(hello_deadline));
    let mut closed = std::pin::pin!(handle.closing().cancelled());
    let mut stopped = std::pin::pin!(shared.shutdown.cancelled());
    loop {
        // A kick is seen here even while frames keep coming; the futures
        // below the stream are polled only when it has nothing to read.
        if handle.is_closing() {
            break;
        }
        let daily_deadline = session.daily_deadline();
        let quick_look = session.quick_look_at();
        let next_close = session.next_close();
        let next = tokio::select! {
            biased;
            next = stream.next() => next,
            () = quiet.as_mut() => {
                let deadline = if session.greeted { heard_at + idle } else { hello_deadline };
                if tokio::time::Instant::now() < deadline {
                    quiet.as_mut().reset(deadline);
                    continue;
                }
                if session.greeted {
                    handle.kick(ErrorCode::IdleTimeout, "no message or pong for too long");
                } else {
                    handle.kick(ErrorCode::HelloRequired, "no hello in time");
                }
                break;
            }
            _ = closed.as_mut() => break,
            _ = stopped.as_mut() => break,
            // The branches below are off for most connections: each is a
            // boxed future when on, a pointer when off (see `maybe`).
            next = maybe(session.following.as_mut().map(|following| Box::pin(following.next()))) => {
                Box::pin(session.on_feed(next)).await;
                continue;
            }
            () = maybe(next_close.map(|(_, at)| Box::pin(shared.clock.sleep_until(at)))) => {
                if let Some((game, _)) = next_close {
                    Box::pin(session.send_final_page(game)).await;
                }
                continue;
            }
            () = maybe(quick_look.map(|at| Box::pin(shared.clock.sleep_until(at)))) => {
                Box::pin(session.on_quick_look()).await;
                continue;
            }
            () = maybe(daily_deadline.map(|at| Box::pin(shared.clock.sleep_until(at)))) => {
                Box::pin(session.daily_timeout()).await;
                continue;
            }
        };
        heard_at = tokio::time::Instant::now();
        let message = match next {
            None => break,
            Some(Err(WsError::Capacity(error))) => {
                bump(&shared.metrics.malformed_messages);
                handle.kick(
                    ErrorCode::MalformedMessage,
                    format!("frame too large: {error}"),
                );
                break;
            }
            Some(Err(error)) => {
                tracing::debug!(%error, "read failed");
                break;
            }
            Some(Ok(message)) => message,
        };
        if is_charged(&message) && !session.allow_message() {
            break;
        }
        match message {
            Message::Binary(bytes) => session.handle_frame(&bytes).await,
            Message::Text(_) if !session.greeted => session.error(
                ErrorCode::HelloRequired,
                "the first message must be hello, in a binary frame",
            ),
            Message::Text(_) => session.error(
                ErrorCode::TextFrame,
                "this protocol uses binary frames only",
            ),
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
    // Boxed, as the rare handlers are: made once, at the end.
    Box::pin(session.disconnected()).await;
    handle.close_quietly();
    // The long farewell keeps a kicked player's seat while it reads its
    // last frames; a connection that never said hello has no seat, and
    // holds a slot of the connection cap for as long as it lingers.
    let farewell = if session.greeted {
        millis(shared.config.farewell_timeout_ms)
    } else {
        SHORT_FAREWELL
    };
    Box::pin(await_goodbye(writer, stream, &shared.shutdown, farewell)).await;
}

/// What `future` gives, or never, if there is none: a branch of the
/// reader's select that is most often off. The future comes boxed, so that
/// the branch costs the connection's task a pointer rather than the
/// future's size while it is off; every idle socket pays for what its task
/// holds.
async fn maybe<F: Future + ?Sized>(future: Option<Pin<Box<F>>>) -> F::Output {
    match future {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

/// Waits for the writer to say goodbye, then ends the socket's sending
/// side and reads (and drops) what the client still sends until it answers
/// the close frame or goes; at most `farewell` in all (half a second at
/// shutdown).
///
/// Closing the whole socket at once would lose the farewell: a client that
/// has stopped reading still queues pongs for the server's pings, and when
/// it reads again and sends them to a socket already closed, the kernel
/// answers with a reset that discards whatever the client had not read
/// yet, the error and the close frame included. A socket closed for
/// sending only takes them, and its end of stream still tells a client
/// that reads to the end that the server is done.
async fn await_goodbye(
    writer: tokio::task::JoinHandle<Sink>,
    stream: futures::stream::SplitStream<WebSocketStream<Socket>>,
    shutdown: &CancellationToken,
    farewell: Duration,
) {
    let goodbye = async {
        let Ok(sink) = writer.await else { return };
        let Ok(mut socket) = sink.reunite(stream) else {
            return;
        };
        let _ = tokio::io::AsyncWriteExt::shutdown(socket.get_mut()).await;
        while let Some(Ok(message)) = socket.next().await {
            if matches!(message, Message::Close(_)) {
                break;
            }
        }
    };
    let limit = if shutdown.is_cancelled() {
        SHORT_FAREWELL
    } else {
        farewell
    };
    tokio::select! {
        _ = tokio::time::timeout(limit, goodbye) => {}
        _ = shutdown.cancelled(), if !shutdown.is_cancelled() => {}
    }
}

/// Whether a frame from the client counts against its message rate limit:
/// every frame but the close. Pings and pongs too: each costs the server a
/// read, a ping a pong as well, so a ping flood is a message flood.
fn is_charged(message: &Message) -> bool {
    !matches!(message, Message::Close(_))
}

/// Whether `code` ends a connection that has no seat to keep (it never
/// said hello, or was over the cap): its farewell is short, so that its
/// slot of the connection cap is freed at once whether or not it reads.
fn ends_before_hello(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::HelloRequired | ErrorCode::ServerFull | ErrorCode::UnsupportedVersion
    )
}

/// The close code sent with each fatal error.
fn close_code(code: ErrorCode) -> CloseCode {
    match code {
        ErrorCode::RateLimited
        | ErrorCode::HelloRequired
        | ErrorCode::UnsupportedVersion
        | ErrorCode::TooSlow => CloseCode::Policy,
        ErrorCode::MalformedMessage => CloseCode::Size,
        ErrorCode::ServerFull => CloseCode::Again,
        ErrorCode::ShuttingDown => CloseCode::Away,
        ErrorCode::Internal => CloseCode::Error,
        _ => CloseCode::Normal,
    }
}

type Sink = futures::stream::SplitSink<WebSocketStream<Socket>, Message>;

/// The writer's clocks.
#[derive(Clone, Copy, Debug)]
struct WriterTimings {
    /// How often to ping.
    heartbeat: Duration,
    /// How long the socket may take nothing before the connection counts
    /// as stalled.
    write_timeout: Duration,
    /// How long a kicked client has to read its last frames.
    farewell_timeout: Duration,
}

/// The most frames written together before one flush.
const MAX_BATCH: usize = 32;

/// How a write to the socket ended.
enum Written {
    /// It reached the socket (or failed: the socket is gone).
    Done(Result<(), WsError>),
    /// The connection is closing or the server stopping: stop writing.
    Stop,
}

/// Drains the outbox into the socket, pings on a timer, and closes with a
/// reason when the connection is kicked or the server stops; gives the
/// sink back for the closing handshake. Frames queued together are written
/// together and flushed once.
///
/// A write the socket does not take within the write timeout marks the
/// outbox stalled: the room's next frame for this client is refused as
/// full, so a player is kicked `too_slow` and a spectator is coalesced. The
/// write itself goes on waiting: a client that reads again unstalls it.
async fn write_loop<S>(
    mut sink: S,
    mut outbox: OutboxReceiver,
    handle: ConnectionHandle,
    shutdown: CancellationToken,
    metrics: Arc<Metrics>,
    timings: WriterTimings,
) -> S
where
    S: futures::Sink<Message, Error = WsError> + Unpin,
{
    let heartbeat = timings.heartbeat;
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + heartbeat, heartbeat);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let closing = handle.closing().clone();
    // Made once and kept registered: a cancellation future made afresh on
    // every frame costs two registrations with its token and two locks.
    let closed = std::pin::pin!(closing.cancelled());
    let stopped = std::pin::pin!(shutdown.cancelled());
    let mut stop = Stop { closed, stopped };
    // Grown as frames come, not made for the largest batch at once: an
    // idle socket only ever writes a ping at a time, and most of the
    // sockets of a busy server are idle.
    let mut batch: Vec<Message> = Vec::new();
    let result: Result<(), WsError> = async {
        loop {
            // A kick is seen here even while frames keep coming; the
            // futures below are polled only when there is nothing to write.
            if outbox.is_closing() {
                break;
            }
            let bytes = tokio::select! {
                biased;
                _ = ticker.tick() => {
                    batch.push(Message::Ping(Bytes::new()));
                    0
                }
                frame = outbox.recv() => {
                    let Some(frame) = frame else { break };
                    let mut bytes = frame.len();
                    batch.push(Message::Binary(frame));
                    while batch.len() < MAX_BATCH {
                        let Some(frame) = outbox.try_recv() else { break };
                        bytes += frame.len();
                        batch.push(Message::Binary(frame));
                    }
                    bytes
                }
                _ = stop.closed.as_mut() => break,
                _ = stop.stopped.as_mut() => break,
            };
            let write = async {
                for message in batch.drain(..) {
                    sink.feed(message).await?;
                }
                sink.flush().await
            };
            let watched = watch_write(write, &outbox, &metrics, timings.write_timeout, &mut stop);
            match watched.await {
                Written::Done(written) => written?,
                Written::Stop => break,
            }
            outbox.written(bytes);
        }
        Ok(())
    }
    .await;
    if let Err(error) = result {
        tracing::debug!(%error, "write failed");
        handle.close_quietly();
        return sink;
    }
    // Say goodbye: why, then a close frame. A kicked client that does not
    // read gets the farewell timeout to take them (its seat is kept
    // meanwhile); at shutdown every client gets half a second.
    let reason = handle.take_reason();
    let stopping = shutdown.is_cancelled();
    let (code, message) = match reason {
        Some((code, message)) => (code, message),
        None if stopping => (
            ErrorCode::ShuttingDown,
            "the server is shutting down; a race in progress is kept: resume with your token once it is back".to_string(),
        ),
        None => {
            let _ = tokio::time::timeout(SHORT_FAREWELL, sink.send(Message::Close(None))).await;
            return sink;
        }
    };
    if code == ErrorCode::TooSlow {
        // The client is behind: what it was still to be sent is stale, and
        // would only stand between it and the reason it is told.
        outbox.discard();
    }
    let farewell = async {
        while let Some(frame) = outbox.try_recv() {
            let _ = sink.feed(Message::Binary(frame)).await;
        }
        let notice = if code == ErrorCode::ShuttingDown {
            ServerMessage::ShuttingDown {
                message: message.clone(),
            }
        } else {
            ServerMessage::Error {
                code,
                message: message.clone(),
            }
        };
        let _ = sink
            .feed(Message::Binary(Bytes::from(protocol::encode(&notice))))
            .await;
        let close = CloseFrame {
            code: close_code(code),
            reason: code.as_str().into(),
        };
        let _ = sink.send(Message::Close(Some(close))).await;
    };
    // Boxed: it is made once, at the end, and would otherwise size the
    // writer's task for all of its life.
    let farewell = Box::pin(farewell);
    if stopping || ends_before_hello(code) {
        let _ = tokio::time::timeout(SHORT_FAREWELL, farewell).await;
    } else {
        tokio::select! {
            _ = tokio::time::timeout(timings.farewell_timeout, farewell) => {}
            _ = shutdown.cancelled() => {}
        }
    }
    handle.close_quietly();
    sink
}

/// How long a client closed at shutdown, or without a reason, has to take
/// its close frame.
const SHORT_FAREWELL: Duration = Duration::from_millis(500);

/// The writer's reasons to stop: its connection closing, the server
/// stopping.
struct Stop<'pin, 'token> {
    closed: Pin<&'pin mut WaitForCancellationFuture<'token>>,
    stopped: Pin<&'pin mut WaitForCancellationFuture<'token>>,
}

/// Drives one write to the socket; if it has not completed after
/// `write_timeout`, marks the outbox stalled and keeps waiting.
async fn watch_write(
    write: impl Future<Output = Result<(), WsError>>,
    outbox: &OutboxReceiver,
    metrics: &Metrics,
    write_timeout: Duration,
    stop: &mut Stop<'_, '_>,
) -> Written {
    let mut write = std::pin::pin!(write);
    // Most writes go straight into the socket's buffer: they need no timer.
    if let Poll::Ready(written) = futures::poll!(write.as_mut()) {
        return Written::Done(written);
    }
    let stalled_at = tokio::time::sleep(write_timeout);
    let mut stalled_at = std::pin::pin!(stalled_at);
    let mut stalled = false;
    loop {
        tokio::select! {
            biased;
            _ = stop.closed.as_mut() => return Written::Stop,
            _ = stop.stopped.as_mut() => return Written::Stop,
            written = &mut write => return Written::Done(written),
            () = &mut stalled_at, if !stalled => {
                stalled = true;
                outbox.set_stalled();
                bump(&metrics.write_stalls);
                tracing::debug!(?write_timeout, "the socket takes no writes: stalled");
            }
        }
    }
}

impl Session {
    pub(super) fn rate_limited(&self, what: &str) -> bool {
        bump(&self.shared.metrics.rate_limited);
        self.handle
            .kick(ErrorCode::RateLimited, format!("too many {what}"));
        false
    }

    pub(super) fn allow_message(&mut self) -> bool {
        self.messages.allow() || self.rate_limited("messages")
    }

    /// Whether the client may make another move now; if not, it is kicked.
    pub(super) fn moves_allowed(&mut self) -> bool {
        self.moves.allow() || self.rate_limited("moves")
    }
}

/// A token bucket: `rate` per second on average, `burst` at once.
#[derive(Debug)]
pub(super) struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    pub(super) fn new(rate: u32, burst: u32) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket {
            rate: f64::from(rate),
            burst,
            tokens: burst,
            last: Instant::now(),
        }
    }

    pub(super) fn allow(&mut self) -> bool {
        let now = Instant::now();
        let earned = now.duration_since(self.last).as_secs_f64() * self.rate;
        self.tokens = (self.tokens + earned).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket that takes every frame at once and records, for each
    /// flush, how many frames were fed since the one before.
    #[derive(Debug, Default)]
    struct Recorder {
        flushes: std::sync::Mutex<Vec<usize>>,
        flushed: tokio::sync::Notify,
    }

    impl Recorder {
        fn frames_flushed(&self) -> usize {
            self.flushes
                .lock()
                .map_or(0, |flushes| flushes.iter().sum())
        }

        async fn until_flushed(&self, frames: usize) {
            while self.frames_flushed() < frames {
                self.flushed.notified().await;
            }
        }
    }

    /// The writer's end of a [`Recorder`].
    struct RecordingSink(Arc<Recorder>, usize);

    impl futures::Sink<Message> for RecordingSink {
        type Error = WsError;

        fn poll_ready(
            self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> Poll<Result<(), WsError>> {
            Poll::Ready(Ok(()))
        }

        fn start_send(mut self: Pin<&mut Self>, _: Message) -> Result<(), WsError> {
            self.1 += 1;
            Ok(())
        }

        fn poll_flush(
            mut self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> Poll<Result<(), WsError>> {
            let fed = std::mem::take(&mut self.1);
            if let Ok(mut flushes) = self.0.flushes.lock() {
                flushes.push(fed);
            }
            self.0.flushed.notify_one();
            Poll::Ready(Ok(()))
        }

        fn poll_close(
            self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> Poll<Result<(), WsError>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn frames_queued_together_are_flushed_once_per_batch_not_once_per_frame() {
        let (handle, receiver) = outbox(1, 64, 1 << 20);
        let recorder = Arc::new(Recorder::default());
        let shutdown = CancellationToken::new();
        let frame = || Bytes::from_static(&[0x81, 0xa4, 0x74, 0x79, 0x70, 0x65]);
        // Queued before the writer first wakes: more than one batch.
        for _ in 0..40 {
            assert!(handle.send(frame()).is_ok());
        }
        let writer = tokio::spawn(write_loop(
            RecordingSink(Arc::clone(&recorder), 0),
            receiver,
            handle.clone(),
            shutdown.clone(),
            Arc::new(Metrics::default()),
            WriterTimings {
                // No ping within the test.
                heartbeat: Duration::from_secs(3600),
                write_timeout: Duration::from_secs(3600),
                farewell_timeout: Duration::from_secs(1),
            },
        ));
        recorder.until_flushed(40).await;
        // Three frames of one event (a move's answer and two broadcasts),
        // queued while the writer sleeps.
        for _ in 0..3 {
            assert!(handle.send(frame()).is_ok());
        }
        recorder.until_flushed(43).await;
        handle.close_quietly();
        let sink = writer.await.expect("the writer ends");
        let flushes = sink.0.flushes.lock().map(|flushes| flushes.clone());
        // Then the close frame, sent on its own.
        assert_eq!(flushes.ok(), Some(vec![MAX_BATCH, 40 - MAX_BATCH, 3, 1]));
    }

    #[test]
    fn a_token_bucket_allows_its_burst_then_refuses() {
        // One per second: the test runs far faster, so only the burst counts.
        let mut bucket = TokenBucket::new(1, 3);
        let allowed: Vec<bool> = (0..5).map(|_| bucket.allow()).collect();
        assert_eq!(allowed, [true, true, true, false, false]);
    }

    #[test]
    fn close_codes_follow_the_document() {
        let check = |code: ErrorCode, close: CloseCode| {
            assert_eq!(close_code(code), close, "{code:?}");
        };
        check(ErrorCode::RateLimited, CloseCode::Policy);
        check(ErrorCode::HelloRequired, CloseCode::Policy);
        check(ErrorCode::UnsupportedVersion, CloseCode::Policy);
        check(ErrorCode::MalformedMessage, CloseCode::Size);
        check(ErrorCode::ServerFull, CloseCode::Again);
        check(ErrorCode::ShuttingDown, CloseCode::Away);
        check(ErrorCode::Internal, CloseCode::Error);
        check(ErrorCode::IdleTimeout, CloseCode::Normal);
    }

    #[test]
    fn every_frame_but_the_close_counts_against_the_rate_limit() {
        use tokio_tungstenite::tungstenite::protocol::frame::Frame;
        let check = |message: Message, charged: bool| {
            assert_eq!(is_charged(&message), charged, "{message:?}");
        };
        check(Message::binary(vec![0x80]), true);
        check(Message::text("{}"), true);
        check(Message::Ping(Bytes::new()), true);
        check(Message::Pong(Bytes::from_static(b"pong")), true);
        check(Message::Frame(Frame::ping(Bytes::new())), true);
        check(Message::Close(None), false);
    }
}
