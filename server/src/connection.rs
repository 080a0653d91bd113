//! One client's socket: the WebSocket handshake, the `hello`, then a reader
//! loop that decodes messages and hands room business to the room's actor,
//! and a writer task that drains the connection's **bounded** outbox.
//!
//! Nothing here blocks on another client: rooms push frames into the outbox
//! with `try_send`. A player whose outbox is full (in frames or in bytes),
//! or whose socket has taken nothing for the write timeout, is disconnected
//! `too_slow` (and may resume); a spectator's is coalesced by its room
//! (events skipped, then one snapshot). A connection's errors close that
//! connection only.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _};
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, BotSeat, ClientMessage, DecodeError, ErrorCode, Limits, PROTOCOL_VERSION, PlayerStatus,
    RoomOptions, ServerMessage,
};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};
use tracing::Instrument as _;

use crate::bots;
use crate::cluster::{Cluster, Owner};
use crate::config::millis;
use crate::daily;
use crate::failover::{self, Found};
use crate::leaderboard_feed::Following;
use crate::lobby;
use crate::metrics::{bump, gauge};
use crate::outbox::{ConnectionHandle, OutboxReceiver, SendFailure, outbox};
use crate::room;
use crate::room_handle::{Command, Refusal, RoomHandle};
use crate::secrets::token_hash;
use crate::state::Shared;
use crate::store::Player;
use crate::web;

mod accounts;
mod follow;
mod tournament;

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
        let Some(stream) = Box::pin(reading).await else {
            return;
        };
        let handshake = Box::pin(tokio_tungstenite::accept_async_with_config(
            stream,
            Some(websocket_config(&shared.config)),
        ));
        let left = handshake_timeout.saturating_sub(started.elapsed());
        let socket = match tokio::time::timeout(left, handshake).await {
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

/// Reads the request head: a WebSocket upgrade gets the stream back, its
/// head to be read again by the handshake; any other request is answered
/// with the web page's files (or `400`, or `503` over the connection cap)
/// and closed. `None` once the socket is done with.
async fn web_or_upgrade(
    shared: &Arc<Shared>,
    mut stream: TcpStream,
    timeout: Duration,
    over_cap: bool,
) -> Option<Socket> {
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
        Ok(Ok((request, bytes))) if request.is_websocket_upgrade() => {
            return Some(web::Prefixed::new(bytes, stream));
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

/// A game connection's socket: the TCP stream, with the request head the
/// handshake reads first.
type Socket = web::Prefixed<TcpStream>;

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
            Arc::clone(shared),
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
            () = maybe(daily_deadline.map(|at| Box::pin(tokio::time::sleep_until(at)))) => {
                // The deadline is on the wall clock; the timer only wakes us.
                if session.daily_time_is_up() {
                    Box::pin(session.finish_daily(PlayerStatus::OutOfTime)).await;
                }
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
async fn write_loop(
    mut sink: Sink,
    mut outbox: OutboxReceiver,
    handle: ConnectionHandle,
    shared: Arc<Shared>,
    timings: WriterTimings,
) -> Sink {
    let shutdown = shared.shutdown.clone();
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
            let watched = watch_write(write, &outbox, &shared, timings.write_timeout, &mut stop);
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
    shared: &Shared,
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
                bump(&shared.metrics.write_stalls);
                tracing::debug!(?write_timeout, "the socket takes no writes: stalled");
            }
        }
    }
}

/// A token bucket: `rate` per second on average, `burst` at once.
#[derive(Debug)]
struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    fn new(rate: u32, burst: u32) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket {
            rate: f64::from(rate),
            burst,
            tokens: burst,
            last: Instant::now(),
        }
    }

    fn allow(&mut self) -> bool {
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

/// Looks at the quick-race advertisement a request makes at most before it
/// opens a room of its own unadvertised: each look that does not settle it
/// follows a change made by another request meanwhile.
const QUICK_RACE_TRIES: usize = 20;

/// The wait before looking again at an advertisement of this node's whose
/// room is a moment from opening.
const QUICK_RACE_RETRY: Duration = Duration::from_millis(5);

/// Where a resume token no room here knows leads, in a cluster.
enum TokenElsewhere {
    /// To another live node: the client was sent there.
    Redirected,
    /// To a room here: a race whose node is gone, taken over here, or one
    /// whose actor has not yet taken its tokens in.
    Here(RoomHandle),
    /// Nowhere.
    Unknown,
}

/// What the reader loop knows about its client.
struct Session {
    shared: Arc<Shared>,
    handle: ConnectionHandle,
    /// The client's address, for the per-address registration limit.
    peer: SocketAddr,
    greeted: bool,
    name: String,
    /// The registered player this connection is, once it says so.
    player: Option<Player>,
    /// The hash of the token `player` signed in with, which `sign_out`
    /// revokes.
    signed_in_with: Option<crate::secrets::TokenHash>,
    room: Option<RoomHandle>,
    /// The daily attempt this connection plays, if any (boxed: it holds
    /// a whole game, and most connections never play one).
    daily: Option<Box<daily::Play>>,
    /// The days this connection follows live, once it follows one (boxed:
    /// most connections never do).
    following: Option<Box<Following>>,
    messages: TokenBucket,
    moves: TokenBucket,
}

impl Session {
    fn new(shared: Arc<Shared>, handle: ConnectionHandle, peer: SocketAddr) -> Session {
        let config = &shared.config;
        let messages = TokenBucket::new(config.messages_per_second, config.message_burst);
        let moves = TokenBucket::new(config.moves_per_second, config.move_burst);
        Session {
            shared,
            handle,
            peer,
            greeted: false,
            name: String::new(),
            player: None,
            signed_in_with: None,
            room: None,
            daily: None,
            following: None,
            messages,
            moves,
        }
    }

    fn reply(&self, message: &ServerMessage) {
        if self.handle.send_message(message) == Err(SendFailure::Full) {
            bump(&self.shared.metrics.send_queue_drops);
            self.handle
                .kick(ErrorCode::TooSlow, "too many messages waiting to be sent");
        }
    }

    fn error(&self, code: ErrorCode, message: impl Into<String>) {
        let message = message.into();
        if code.is_fatal() {
            self.handle.kick(code, message);
        } else {
            self.reply(&ServerMessage::Error { code, message });
        }
    }

    fn rate_limited(&self, what: &str) -> bool {
        bump(&self.shared.metrics.rate_limited);
        self.handle
            .kick(ErrorCode::RateLimited, format!("too many {what}"));
        false
    }

    fn allow_message(&mut self) -> bool {
        self.messages.allow() || self.rate_limited("messages")
    }

    async fn handle_frame(&mut self, bytes: &[u8]) {
        let error = match protocol::decode_client(bytes) {
            Ok(message) => return self.handle(message).await,
            Err(error) => error,
        };
        bump(&self.shared.metrics.malformed_messages);
        match error {
            // Whatever the frame was, it was not a hello: the document's
            // one rule for a first message, and one close reason for it.
            _ if !self.greeted => self.error(
                ErrorCode::HelloRequired,
                format!("the first message must be hello ({error})"),
            ),
            DecodeError::UnknownGame(game) => self.game_unavailable(&game),
            error => self.error(error.code(), error.to_string()),
        }
    }

    /// Refuses a game this server does not deal, naming the ones it does.
    fn game_unavailable(&self, game: &str) {
        let offered: Vec<&str> = GameKind::ALL
            .into_iter()
            .filter(|&kind| self.shared.pool.deals(kind))
            .map(GameKind::slug)
            .collect();
        self.error(
            ErrorCode::GameUnavailable,
            format!(
                "this server does not deal {game}; it deals {}",
                offered.join(", ")
            ),
        );
    }

    /// Handles one message. A race's moves, most of the traffic, are
    /// handled in this future; everything else in a boxed one of its own,
    /// made only when such a message comes. So the connection's task is
    /// not as large as the largest handler (a room to create, a daily
    /// attempt, a stored replay, ...) for all of its life: it is what every
    /// idle socket costs.
    async fn handle(&mut self, message: ClientMessage) {
        match message {
            ClientMessage::Move { text, seat } if self.greeted && self.daily.is_none() => {
                if self.moves_allowed() {
                    let command = self.move_command(text, seat);
                    self.forward(command).await;
                }
            }
            message => Box::pin(self.handle_any(message)).await,
        }
    }

    /// Whether the client may make another move now; if not, it is kicked.
    fn moves_allowed(&mut self) -> bool {
        self.moves.allow() || self.rate_limited("moves")
    }

    /// A race move for the room's actor, received now.
    fn move_command(&self, text: String, seat: Option<u8>) -> Command {
        Command::Move {
            conn_id: self.handle.id,
            text,
            seat,
            received: Instant::now(),
            received_ms: self.shared.clock.now_ms(),
        }
    }

    async fn handle_any(&mut self, message: ClientMessage) {
        if !self.greeted {
            return match message {
                ClientMessage::Hello { version, name } => self.hello(version, &name),
                _ => self.error(ErrorCode::HelloRequired, "the first message must be hello"),
            };
        }
        match message {
            ClientMessage::Hello { .. } => {
                self.error(ErrorCode::AlreadyGreeted, "hello was already said")
            }
            ClientMessage::CreateRoom {
                game,
                max_players,
                public,
                options,
                bots,
            } => {
                if self.not_in_room() {
                    self.create_room(game, max_players, public, options, false, bots)
                        .await;
                }
            }
            ClientMessage::JoinRoom { code } => {
                if self.not_in_room()
                    && let Some(room) = self.room_anywhere(&code).await
                {
                    self.enter(room, self.join_command()).await;
                }
            }
            ClientMessage::QuickRace { game } => {
                if self.not_in_room() {
                    self.quick_race(game).await;
                }
            }
            ClientMessage::Spectate { code } => {
                if self.not_in_room()
                    && let Some(room) = self.room_anywhere(&code).await
                {
                    self.enter(room, |conn, reply| Command::Spectate { conn, reply })
                        .await;
                }
            }
            ClientMessage::Resume { token, last_seq } => {
                if self.not_in_room() {
                    let hash = token_hash(&token);
                    let room = match self.shared.registry.room_for_token(&hash) {
                        Some(room) => Some(room),
                        None => match self.token_elsewhere(&hash).await {
                            TokenElsewhere::Redirected => return,
                            TokenElsewhere::Here(room) => Some(room),
                            TokenElsewhere::Unknown => None,
                        },
                    };
                    match room {
                        Some(room) => {
                            self.enter(room, |conn, reply| Command::Resume {
                                conn,
                                token: hash,
                                last_seq,
                                reply,
                            })
                            .await;
                        }
                        None => self.error(
                            ErrorCode::InvalidResumeToken,
                            "that resume token is unknown or already used",
                        ),
                    }
                }
            }
            ClientMessage::Leave => {
                if let Some(room) = self.room.take() {
                    let command = Command::Leave {
                        conn_id: self.handle.id,
                    };
                    if !self.tell(&room, command).await {
                        // The room closed meanwhile: the client is out of it all the same.
                        self.reply(&ServerMessage::Left {
                            code: room.code.to_string(),
                        });
                    }
                } else {
                    self.error(ErrorCode::NotInRoom, "you are in no room");
                }
            }
            ClientMessage::StartEarly => {
                self.forward(Command::StartEarly {
                    conn_id: self.handle.id,
                })
                .await
            }
            ClientMessage::Move { text, seat } => {
                if !self.moves_allowed() {
                    return;
                }
                if self.daily.is_some() {
                    return self.daily_move(text, seat).await;
                }
                let command = self.move_command(text, seat);
                self.forward(command).await;
            }
            ClientMessage::Undo => {
                if !self.moves_allowed() {
                    return;
                }
                if self.daily.is_some() {
                    bump(&self.shared.metrics.moves_rejected);
                    return self.reply(&ServerMessage::MoveRejected {
                        text: protocol::UNDO_TEXT.to_string(),
                        code: ErrorCode::UndoNotAllowed,
                        reason: None,
                        message: "daily deals allow no undo".to_string(),
                    });
                }
                self.forward(Command::Undo {
                    conn_id: self.handle.id,
                })
                .await;
            }
            ClientMessage::Resign => {
                if self.daily.is_some() {
                    return self.finish_daily(PlayerStatus::Resigned).await;
                }
                self.forward(Command::Resign {
                    conn_id: self.handle.id,
                })
                .await
            }
            ClientMessage::Register { name } => self.register(name).await,
            ClientMessage::Authenticate { token } => self.authenticate(&token).await,
            ClientMessage::DailyPlay { game } => self.daily_play(game).await,
            ClientMessage::Leaderboard { game, date, limit } => {
                self.leaderboard(game, date, limit).await
            }
            ClientMessage::Replay { race_id } => self.replay(race_id).await,
            ClientMessage::Follow { game, date, limit } => self.follow(game, date, limit).await,
            ClientMessage::Unfollow { game } => self.unfollow(game),
            ClientMessage::DailyDays {
                game,
                before,
                limit,
            } => self.daily_days(game, before, limit).await,
            ClientMessage::PlayerStats { name } => self.player_stats(name).await,
            ClientMessage::Standings {
                game,
                period,
                key,
                limit,
            } => self.standings(game, period, key, limit).await,
            ClientMessage::ReplayBoards { race_id } => self.replay_boards(race_id).await,
            ClientMessage::RequestSignInCode => self.request_sign_in_code().await,
            ClientMessage::RedeemSignInCode { code } => self.redeem_sign_in_code(&code).await,
            ClientMessage::SignOut => self.sign_out().await,
            ClientMessage::Lobby { game } => {
                let shared = &self.shared;
                let page = lobby::page(&shared.registry, shared.cluster.as_ref(), game).await;
                self.reply(&ServerMessage::LobbyPage { page });
            }
            ClientMessage::Rematch { accept } => {
                self.forward(Command::Rematch {
                    conn_id: self.handle.id,
                    accept,
                })
                .await
            }
        }
    }

    /// When the open daily attempt's time is up, on the runtime's clock
    /// (rounded up to the next millisecond).
    fn daily_deadline(&self) -> Option<tokio::time::Instant> {
        let play = self.daily.as_ref()?;
        let left = play.deadline_ms.saturating_sub(self.shared.clock.now_ms());
        Some(tokio::time::Instant::now() + Duration::from_millis(left + 1))
    }

    /// Whether the open daily attempt's time is up on the server's clock.
    fn daily_time_is_up(&self) -> bool {
        self.daily
            .as_ref()
            .is_some_and(|play| self.shared.clock.now_ms() >= play.deadline_ms)
    }

    fn hello(&mut self, version: u32, name: &str) {
        if version != PROTOCOL_VERSION {
            return self.error(
                ErrorCode::UnsupportedVersion,
                format!("this server speaks protocol version {PROTOCOL_VERSION}, not {version}"),
            );
        }
        let name = match protocol::display_name(name) {
            Ok(name) => name,
            Err(error) => return self.error(ErrorCode::InvalidRequest, error.to_string()),
        };
        self.greeted = true;
        self.name = name.to_string();
        let config = &self.shared.config;
        self.reply(&ServerMessage::Welcome {
            version: PROTOCOL_VERSION,
            server: format!("patience-server {}", env!("CARGO_PKG_VERSION")),
            limits: Limits {
                max_message_bytes: u32::try_from(config.max_message_bytes).unwrap_or(u32::MAX),
                messages_per_second: config.messages_per_second,
                burst: config.message_burst,
            },
        });
    }

    /// The command that seats this connection in a room, under the name
    /// others see and with the registered player if there is one.
    fn join_command(
        &self,
    ) -> impl FnOnce(ConnectionHandle, oneshot::Sender<Result<(), Refusal>>) -> Command + use<>
    {
        let name = self.name.clone();
        let player = self.player.as_ref().map(|player| player.id);
        move |conn, reply| Command::Join {
            conn,
            name,
            player,
            bot: None,
            reply,
        }
    }

    fn not_in_room(&mut self) -> bool {
        // A room that has closed (its actor gone) no longer holds anyone.
        if self
            .room
            .as_ref()
            .is_some_and(|room| room.commands.is_closed())
        {
            self.room = None;
        }
        if self.room.is_some() {
            self.error(ErrorCode::AlreadyInRoom, "leave your room first");
        } else if self.daily.is_some() {
            self.error(
                ErrorCode::AlreadyInRoom,
                "you are playing the daily deal: finish it or resign first",
            );
            return false;
        }
        self.room.is_none()
    }

    async fn create_room(
        &mut self,
        game: GameKind,
        max_players: u8,
        public: bool,
        options: RoomOptions,
        quick: bool,
        bots: Vec<BotSeat>,
    ) {
        if bots.len() >= usize::from(max_players.max(1)) {
            return self.error(
                ErrorCode::InvalidRequest,
                format!(
                    "a room of {max_players} seats has at most {} bots: one seat is yours",
                    max_players.saturating_sub(1)
                ),
            );
        }
        if !bots.is_empty() && (public || options.open_boards) {
            // Strangers a quick race brings in never agreed to race bots,
            // and a bot that saw every board would see cards its own board
            // hides.
            return self.error(
                ErrorCode::InvalidRequest,
                "a room with bots is private and without open_boards",
            );
        }
        if !self.may_open_room(game, max_players, public, &options) {
            return;
        }
        let bot_seats = if bots.is_empty() {
            None
        } else {
            match self.shared.bots.reserve(bots.len()) {
                Some(permits) => Some(permits),
                None => {
                    return self.error(
                        ErrorCode::TooManyRooms,
                        "too many bots are racing on this server; try again later",
                    );
                }
            }
        };
        let code = match &self.shared.cluster {
            None => None,
            Some(cluster) => match self.claim_code(cluster).await {
                Some(code) => Some(code),
                None => return,
            },
        };
        self.open_room(code, game, max_players, public, quick, options)
            .await;
        if let (Some(permits), Some(room)) = (bot_seats, &self.room) {
            let hosting = self.shared.bot_hosting();
            if let Err(refusal) = bots::seat_bots(hosting, room, &bots, permits).await {
                tracing::warn!(?refusal, "a bot could not take its seat");
            }
        }
    }

    /// Whether a room of these settings may open now; if not, the client
    /// was told why.
    fn may_open_room(
        &self,
        game: GameKind,
        max_players: u8,
        public: bool,
        options: &RoomOptions,
    ) -> bool {
        let config = &self.shared.config;
        if !(2..=8).contains(&max_players) {
            self.error(ErrorCode::InvalidRequest, "a room has 2 to 8 seats");
            return false;
        }
        if options
            .time_limit_ms
            .is_some_and(|limit| limit == 0 || limit > config.max_time_limit_ms)
        {
            self.error(
                ErrorCode::InvalidRequest,
                format!(
                    "the time limit must be between 1 and {} ms",
                    config.max_time_limit_ms
                ),
            );
            return false;
        }
        if options
            .best_of
            .is_some_and(|best_of| best_of == 0 || best_of > protocol::MAX_BEST_OF)
        {
            self.error(
                ErrorCode::InvalidRequest,
                format!(
                    "a series is the best of 1 to {} races",
                    protocol::MAX_BEST_OF
                ),
            );
            return false;
        }
        if options.open_boards && public {
            // Strangers a quick race brings in never agreed to show their
            // boards, nor to see the deal's cards on others'.
            self.error(
                ErrorCode::InvalidRequest,
                "open_boards rooms are private: quick race never puts strangers in one",
            );
            return false;
        }
        if !self.shared.pool.deals(game) {
            self.game_unavailable(game.slug());
            return false;
        }
        if !self.shared.database.is_up() {
            // A race the server could not store is a race nobody can
            // replay or trust: refuse it before anyone plays.
            let reason = self.shared.database.down_reason();
            self.error(
                ErrorCode::Internal,
                format!("the server's database is down, so no race can be stored: {reason}"),
            );
            return false;
        }
        if self.shared.registry.room_count() >= config.max_rooms {
            self.error(
                ErrorCode::TooManyRooms,
                "too many rooms are open; try again later",
            );
            return false;
        }
        true
    }

    /// Claims a fresh room code in the cluster's Redis, so that no two
    /// nodes ever open rooms under one code; `None` (the client told) if
    /// Redis cannot be reached.
    async fn claim_code(&self, cluster: &Cluster) -> Option<Arc<str>> {
        match cluster.claim_new_code(&self.shared.registry).await {
            Ok(code) => Some(code),
            Err(error) => {
                tracing::warn!(%error, "no room code could be claimed");
                self.error(
                    ErrorCode::Internal,
                    "the cluster's Redis cannot be reached: no new room can open; try again later",
                );
                None
            }
        }
    }

    /// Opens a room, under `code` (claimed in the cluster) or a fresh one,
    /// and seats the client in it.
    async fn open_room(
        &mut self,
        code: Option<Arc<str>>,
        game: GameKind,
        max_players: u8,
        public: bool,
        quick: bool,
        options: RoomOptions,
    ) {
        let context = self.shared.room_context();
        let room = match code {
            None => room::create(&context, game, max_players, public, quick, options),
            Some(code) => {
                let created = room::create_with_code(
                    &context,
                    Arc::clone(&code),
                    game,
                    max_players,
                    public,
                    quick,
                    options,
                );
                match created {
                    Some(room) => room,
                    None => {
                        if let Some(cluster) = &self.shared.cluster {
                            cluster.release(&code);
                        }
                        return self.error(ErrorCode::Internal, "a room code clashed; try again");
                    }
                }
            }
        };
        self.enter(room, self.join_command()).await;
    }

    /// The room `code`, for a join or a spectator: open here, or taken
    /// over here (its node is gone); `None` once the client was sent to
    /// the node that owns it, or told that no room has the code.
    async fn room_anywhere(&self, code: &str) -> Option<RoomHandle> {
        if let Some(room) = self.shared.registry.room(code) {
            return Some(room);
        }
        if let Some(cluster) = &self.shared.cluster {
            match failover::find_room(&self.shared, cluster, code).await {
                Found::Here(room) => return Some(room),
                Found::Elsewhere(url) => {
                    self.redirect(url);
                    return None;
                }
                Found::Nowhere => {}
            }
        }
        self.error(
            ErrorCode::RoomNotFound,
            format!("no room has the code {code}"),
        );
        None
    }

    /// When no room here knows a resume token, asks the cluster which room
    /// it opens a seat of (Redis, or the store when Redis lost the token's
    /// pointer, as it does when it restarts), and finds that room: on
    /// another live node the client gets a `redirect` there; a running
    /// race no live node holds (its node died) is taken over here at once,
    /// rather than at the next failover scan.
    async fn token_elsewhere(&self, hash: &crate::secrets::TokenHash) -> TokenElsewhere {
        let Some(cluster) = &self.shared.cluster else {
            return TokenElsewhere::Unknown;
        };
        let pointed = match cluster.room_of_token(hash).await {
            Ok(code) => code,
            Err(error) => {
                tracing::warn!(%error, "the cluster could not say where a token's room is");
                None
            }
        };
        let code = match pointed {
            Some(code) => code,
            None => match failover::code_of_token(&self.shared, cluster, *hash).await {
                Some(code) => code,
                None => return TokenElsewhere::Unknown,
            },
        };
        match failover::find_room(&self.shared, cluster, &code).await {
            Found::Here(room) => TokenElsewhere::Here(room),
            Found::Elsewhere(url) => {
                self.redirect(url);
                TokenElsewhere::Redirected
            }
            Found::Nowhere => TokenElsewhere::Unknown,
        }
    }

    fn redirect(&self, url: String) {
        bump(&self.shared.metrics.cluster_redirects);
        self.reply(&ServerMessage::Redirect { url });
    }

    /// Seats the client in a quick race of `game`: a waiting room here, or
    /// the one room the cluster advertises (the client is sent to its
    /// node), or a room opened here and advertised. Opening is decided in
    /// Redis, at once ([`Cluster::advertise`]): of two nodes asked at the
    /// same moment, one advertises its room and the other sends its player
    /// there, so they meet.
    async fn quick_race(&mut self, game: GameKind) {
        if !self.shared.pool.deals(game) {
            return self.game_unavailable(game.slug());
        }
        if self.join_waiting_room(game).await {
            return;
        }
        let seats = self.shared.config.quick_race_seats;
        let options = RoomOptions::default();
        let Some(cluster) = self.shared.cluster.clone() else {
            return self
                .create_room(game, seats, true, options, true, Vec::new())
                .await;
        };
        if !self.may_open_room(game, seats, true, &options) {
            return;
        }
        // The code of the room this request would open, claimed once.
        let mut claimed: Option<Arc<str>> = None;
        let give_back = |claimed: &Option<Arc<str>>| {
            if let Some(code) = claimed {
                cluster.release(code);
            }
        };
        for _ in 0..QUICK_RACE_TRIES {
            let stale = match cluster.advertised(game).await {
                Ok(None) => None,
                Ok(Some((_, Owner::Elsewhere { url }))) => {
                    give_back(&claimed);
                    return self.redirect(url);
                }
                Ok(Some((code, Owner::Here))) => {
                    if self.join_waiting_room(game).await {
                        give_back(&claimed);
                        return;
                    }
                    if cluster.holds(&code) && self.shared.registry.room(&code).is_none() {
                        // Advertised by another request here, which opens
                        // it in a moment.
                        tokio::time::sleep(QUICK_RACE_RETRY).await;
                        continue;
                    }
                    // Full, racing or closed: this request's room replaces it.
                    Some(code)
                }
                // Its node is gone.
                Ok(Some((code, Owner::Nobody))) => Some(code),
                Err(error) => {
                    tracing::warn!(%error, "the quick-race advertisement could not be read");
                    give_back(&claimed);
                    return self.error(
                        ErrorCode::Internal,
                        "the cluster's Redis cannot be reached: no quick race can be found; try again later",
                    );
                }
            };
            let code = match &claimed {
                Some(code) => Arc::clone(code),
                None => {
                    let Some(code) = self.claim_code(&cluster).await else {
                        return;
                    };
                    claimed = Some(Arc::clone(&code));
                    code
                }
            };
            match cluster.advertise(game, &code, stale.as_deref()).await {
                Ok(true) => {
                    return self
                        .open_room(Some(code), game, seats, true, true, options)
                        .await;
                }
                // Another room was advertised first: the next look finds it.
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, "a quick-race room could not be advertised");
                    give_back(&claimed);
                    return self.error(
                        ErrorCode::Internal,
                        "the cluster's Redis cannot be reached: no quick race can be found; try again later",
                    );
                }
            }
        }
        // The advertisement changed under every look: a room of this
        // request's own, which quick races here still find.
        tracing::warn!("the quick-race advertisement kept changing; a room opens unadvertised");
        self.open_room(claimed, game, seats, true, true, options)
            .await;
    }

    /// Seats the client in a room of this node waiting for quick racers of
    /// `game`, the fullest first; whether one took it.
    async fn join_waiting_room(&mut self, game: GameKind) -> bool {
        for room in self.shared.registry.quick_race_candidates(game) {
            if self.try_enter(&room, self.join_command()).await.is_ok() {
                self.room = Some(room);
                return true;
            }
        }
        false
    }

    /// Asks `room` to take this connection in, and remembers it if it does.
    async fn enter(
        &mut self,
        room: RoomHandle,
        command: impl FnOnce(ConnectionHandle, oneshot::Sender<Result<(), Refusal>>) -> Command,
    ) {
        match self.try_enter(&room, command).await {
            Ok(()) => self.room = Some(room),
            Err(Refusal { code, message }) => self.error(code, message),
        }
    }

    async fn try_enter(
        &self,
        room: &RoomHandle,
        command: impl FnOnce(ConnectionHandle, oneshot::Sender<Result<(), Refusal>>) -> Command,
    ) -> Result<(), Refusal> {
        let gone = || {
            Refusal::new(
                ErrorCode::RoomNotFound,
                format!("room {} has closed", room.code),
            )
        };
        let (reply, answer) = oneshot::channel();
        room.commands
            .send(command(self.handle.clone(), reply))
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    async fn tell(&self, room: &RoomHandle, command: Command) -> bool {
        room.commands.send(command).await.is_ok()
    }

    /// Sends a command to the room this connection is in.
    async fn forward(&mut self, command: Command) {
        // A move or an undo the room never got is refused as such.
        let refusal = |command: Command| match command {
            Command::Move { text, .. } => Some(text),
            Command::Undo { .. } => Some(protocol::UNDO_TEXT.to_string()),
            _ => None,
        };
        let Some(room) = &self.room else {
            return self.not_in_a_room(refusal(command));
        };
        // Most often the room's queue has room at once; waiting for room is
        // boxed, so that this future stays small (see `handle`). The queue
        // gives back a command it could not take.
        let refused = match room.commands.try_send(command) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Full(command)) => {
                match Box::pin(room.commands.send(command)).await {
                    Ok(()) => return,
                    Err(mpsc::error::SendError(command)) => command,
                }
            }
            Err(mpsc::error::TrySendError::Closed(command)) => command,
        };
        self.room = None;
        self.not_in_a_room(refusal(refused));
    }

    fn not_in_a_room(&self, move_text: Option<String>) {
        let message = "you are in no room".to_string();
        match move_text {
            Some(text) => self.reply(&ServerMessage::MoveRejected {
                text,
                code: ErrorCode::NotInRoom,
                reason: None,
                message,
            }),
            None => self.error(ErrorCode::NotInRoom, message),
        }
    }

    /// Tells the room this connection is gone.
    async fn disconnected(&mut self) {
        self.leave_daily();
        if let Some(room) = self.room.take() {
            self.tell(
                &room,
                Command::Disconnected {
                    conn_id: self.handle.id,
                },
            )
            .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
