//! `patience-load`: drives a running `patience-server` over real WebSockets
//! with rooms of Three Blind Mice racers playing legal moves at a steady
//! pace, plus spectators, and reports what the clients saw: moves per
//! second, move→ack and move→opponent latencies (p50, p99, max), errors and
//! disconnects.
//!
//! `--stall-players K` and `--stall-spectators K` make K racers and K
//! spectators (one each in the first K rooms) stop reading after the
//! warm-up, so that the others' latencies can be compared with and without
//! slow consumers; the report says what happened to the stalled ones when
//! they read again (how long until the room saw a player dropped, the
//! frames still waiting, the close frame, the resume; a spectator's
//! catch-up snapshot).
//!
//! Layout: the command line; one task per room that owns its connections'
//! write halves, plays the moves and keeps the books; one reader task per
//! connection that timestamps each frame as it arrives and can be told to
//! stop reading; the report.
//!
//! Each racer picks its move from its own board as the server sent it
//! (`race_started`, then each `move_accepted`): the client's guess of the
//! hidden cards makes a position of the rules engine, whose legal moves do
//! not depend on them. Rooms allow undo, and a racer with no legal move
//! takes one back, so random play does not end races by itself; a racer
//! that wins stops, and once the race has ended the room's connections
//! close and a new room starts.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt as _, StreamExt as _};
use patience_cli::position::guess;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, PROTOCOL_VERSION, PlayerStatus, RoomOptions, ServerMessage,
};
use patience_shared::rules::{Rules as _, View};
use patience_tests::seq_of;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "patience-load",
    about = "Load a running patience-server with racing rooms"
)]
struct Cli {
    /// The server, e.g. ws://127.0.0.1:7878
    #[arg(long, default_value = "ws://127.0.0.1:7878")]
    url: String,
    /// Rooms racing at once.
    #[arg(long, default_value_t = 10)]
    rooms: usize,
    /// Racers per room.
    #[arg(long, default_value_t = 4)]
    players: u8,
    /// Spectators per room.
    #[arg(long, default_value_t = 2)]
    spectators: usize,
    /// Each racer moves every this many milliseconds.
    #[arg(long, default_value_t = 500)]
    move_interval_ms: u64,
    /// How long to measure, in seconds, after the warm-up.
    #[arg(long, default_value_t = 30)]
    duration_s: u64,
    /// Seconds from the start before anything is measured (connecting,
    /// the countdown, the first moves).
    #[arg(long, default_value_t = 10)]
    warmup_s: u64,
    /// Racers that stop reading after the warm-up (one per room, in the
    /// first rooms).
    #[arg(long, default_value_t = 0)]
    stall_players: usize,
    /// Spectators that stop reading after the warm-up.
    #[arg(long, default_value_t = 0)]
    stall_spectators: usize,
    /// Seconds a stalled client reads nothing before it reads again;
    /// by default until the end of the measurement.
    #[arg(long)]
    stall_s: Option<u64>,
    /// The kernel receive buffer of the stalled clients' sockets, in bytes
    /// (by default the system's).
    #[arg(long)]
    stall_recv_buffer: Option<u32>,
    /// Open the rooms with `open_boards`: each `progress` then carries the
    /// mover's board (about a kilobyte instead of a hundred bytes).
    #[arg(long)]
    open_boards: bool,
}

/// Latencies in microseconds and counters, shared by every room.
#[derive(Debug, Default)]
struct Stats {
    ack_micros: Mutex<Vec<u64>>,
    opponent_micros: Mutex<Vec<u64>>,
    spectator_micros: Mutex<Vec<u64>>,
    moves_sent: AtomicU64,
    moves_accepted: AtomicU64,
    moves_rejected: AtomicU64,
    errors: AtomicU64,
    disconnects: AtomicU64,
    late_ticks: AtomicU64,
    races_started: AtomicU64,
    races_ended: AtomicU64,
    stalls: Mutex<Vec<String>>,
}

impl Stats {
    fn record(list: &Mutex<Vec<u64>>, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        list.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(micros);
    }
}

/// When measuring starts and stops, and where to connect.
#[derive(Debug)]
struct Plan {
    url: String,
    address: SocketAddr,
    players: u8,
    spectators: usize,
    move_interval: Duration,
    measure_from: Instant,
    measure_until: Instant,
    stall_for: Duration,
    stall_recv_buffer: Option<u32>,
    open_boards: bool,
}

impl Plan {
    fn measuring(&self, at: Instant) -> bool {
        at >= self.measure_from && at < self.measure_until
    }
}

type Sink = SplitSink<WebSocketStream<MaybeTlsStream<TcpStream>>, Message>;
type Stream = SplitStream<WebSocketStream<MaybeTlsStream<TcpStream>>>;

/// What a reader saw, with when.
#[derive(Debug)]
struct Event {
    conn: usize,
    at: Instant,
    what: Received,
}

#[derive(Debug)]
enum Received {
    Message(Box<ServerMessage>),
    /// The close frame, or `None` when the socket ended without one.
    Closed(Option<CloseFrame>),
}

/// One connection of a room, as its room task sees it.
#[derive(Debug)]
struct Conn {
    sink: Option<Sink>,
    /// For racers: the seat; spectators have none.
    seat: Option<u8>,
    is_player: bool,
    token: Option<String>,
    last_seq: u64,
    /// The racer's board as the server last sent it.
    view: Option<View>,
    /// A move sent and not yet answered, and when.
    pending: Option<Instant>,
    moves: u32,
    racing: bool,
    /// Tells the reader to stop reading (`true`) or go on.
    stall: Option<watch::Sender<bool>>,
    stall_state: StallState,
    closed: bool,
}

/// Where a stalled connection is in its story.
#[derive(Debug, Default)]
struct StallState {
    since: Option<Instant>,
    /// When the room (a rival's `room_update`) showed the player gone.
    dropped_after: Option<Duration>,
    reading_again: Option<Instant>,
    frames_after: usize,
    error: Option<ErrorCode>,
    close: Option<String>,
    done: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let address = cli
        .url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .context("the url names no host")?
        .parse::<SocketAddr>()
        .context("the url's host must be IP:PORT")?;
    anyhow::ensure!((2..=8).contains(&cli.players), "a room has 2 to 8 players");
    let start = Instant::now();
    let measure_from = start + Duration::from_secs(cli.warmup_s);
    let measure_until = measure_from + Duration::from_secs(cli.duration_s);
    let plan = Arc::new(Plan {
        url: cli.url.clone(),
        address,
        players: cli.players,
        spectators: cli.spectators,
        move_interval: Duration::from_millis(cli.move_interval_ms.max(1)),
        measure_from,
        measure_until,
        stall_for: cli
            .stall_s
            .map_or(Duration::from_secs(cli.duration_s), Duration::from_secs),
        stall_recv_buffer: cli.stall_recv_buffer,
        open_boards: cli.open_boards,
    });
    let stats = Arc::new(Stats::default());
    let mut rooms = Vec::new();
    for room in 0..cli.rooms {
        let stall_player = room < cli.stall_players;
        let stall_spectator = room < cli.stall_spectators && cli.spectators > 0;
        let plan = Arc::clone(&plan);
        let stats = Arc::clone(&stats);
        rooms.push(tokio::spawn(async move {
            if let Err(error) = run_room(room, &plan, &stats, stall_player, stall_spectator).await {
                stats.errors.fetch_add(1, Ordering::Relaxed);
                eprintln!("room {room}: {error:#}");
            }
        }));
        // Connecting hundreds of sockets at once only measures the accept
        // queue; a short stagger spreads the rooms' moves too.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for room in rooms {
        let _ = room.await;
    }
    report(&cli, &stats);
    Ok(())
}

async fn connect(plan: &Plan, recv_buffer: Option<u32>) -> anyhow::Result<(Sink, Stream)> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    if let Some(bytes) = recv_buffer {
        socket.set_recv_buffer_size(bytes)?;
    }
    let stream = socket.connect(plan.address).await?;
    stream.set_nodelay(true)?;
    let (socket, _) =
        tokio_tungstenite::client_async(plan.url.as_str(), MaybeTlsStream::Plain(stream))
            .await
            .context("websocket handshake")?;
    Ok(socket.split())
}

async fn send(sink: &mut Sink, message: &ClientMessage) -> anyhow::Result<()> {
    sink.send(Message::Binary(protocol::encode(message).into()))
        .await
        .context("send")
}

/// Reads frames and hands them to the room with the time they arrived;
/// while `stall` is true it reads nothing.
async fn read_loop(
    conn: usize,
    mut stream: Stream,
    events: mpsc::Sender<Event>,
    mut stall: watch::Receiver<bool>,
) {
    loop {
        if *stall.borrow() {
            if stall.changed().await.is_err() {
                return;
            }
            continue;
        }
        let next = tokio::select! {
            next = stream.next() => next,
            changed = stall.changed() => {
                if changed.is_err() { return; }
                continue;
            }
        };
        let at = Instant::now();
        let what = match next {
            Some(Ok(Message::Binary(bytes))) => match protocol::decode_server(&bytes) {
                Ok(message) => Received::Message(Box::new(message)),
                Err(_) => continue,
            },
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

/// Runs races in one room until the measurement ends.
async fn run_room(
    room: usize,
    plan: &Plan,
    stats: &Stats,
    stall_player: bool,
    stall_spectator: bool,
) -> anyhow::Result<()> {
    let mut stall_player = stall_player;
    let mut stall_spectator = stall_spectator;
    while Instant::now() < plan.measure_until {
        race(room, plan, stats, &mut stall_player, &mut stall_spectator).await?;
    }
    Ok(())
}

/// Opens a room, fills it, races until the race ends or the measurement
/// does. A stall, once played out, is not played again.
async fn race(
    room: usize,
    plan: &Plan,
    stats: &Stats,
    stall_player: &mut bool,
    stall_spectator: &mut bool,
) -> anyhow::Result<()> {
    let (events_in, mut events) = mpsc::channel::<Event>(1024);
    let total = usize::from(plan.players) + plan.spectators;
    let mut conns: Vec<Conn> = Vec::with_capacity(total);
    // Racer 1 and spectator 0 are the ones that may stall.
    let stalled_player = (*stall_player).then_some(1);
    let stalled_spectator = (*stall_spectator).then_some(usize::from(plan.players));
    let mut streams = Vec::new();
    for index in 0..total {
        let stalls = Some(index) == stalled_player || Some(index) == stalled_spectator;
        let buffer = if stalls { plan.stall_recv_buffer } else { None };
        let (mut sink, mut stream) = connect(plan, buffer).await?;
        let name = format!("r{room}c{index}");
        send(
            &mut sink,
            &ClientMessage::Hello {
                version: PROTOCOL_VERSION,
                name,
            },
        )
        .await?;
        match next_message(&mut stream).await? {
            ServerMessage::Welcome { .. } => {}
            other => anyhow::bail!("expected welcome, got {other:?}"),
        }
        conns.push(Conn {
            sink: Some(sink),
            seat: None,
            is_player: index < usize::from(plan.players),
            token: None,
            last_seq: 0,
            view: None,
            pending: None,
            moves: 0,
            racing: false,
            stall: None,
            stall_state: StallState::default(),
            closed: false,
        });
        streams.push(stream);
    }
    // The owner opens the room; the others take seats, then watch.
    let mut code = String::new();
    for index in 0..total {
        let request = if index == 0 {
            ClientMessage::CreateRoom {
                game: GameKind::ThreeBlindMice,
                max_players: plan.players,
                public: false,
                options: RoomOptions {
                    undo_allowed: true,
                    open_boards: plan.open_boards,
                    ..RoomOptions::default()
                },
            }
        } else if conns[index].is_player {
            ClientMessage::JoinRoom { code: code.clone() }
        } else {
            ClientMessage::Spectate { code: code.clone() }
        };
        let sink = conns[index].sink.as_mut().context("no sink")?;
        send(sink, &request).await?;
        let joined = loop {
            match next_message(&mut streams[index]).await? {
                joined @ ServerMessage::RoomJoined { .. } => break joined,
                ServerMessage::Error { code, message } => {
                    anyhow::bail!("joining: {code:?} {message}")
                }
                _ => {}
            }
        };
        if let ServerMessage::RoomJoined {
            room,
            seat,
            resume_token,
            seq,
        } = joined
        {
            code = room.code;
            conns[index].seat = seat;
            conns[index].token = resume_token;
            conns[index].last_seq = seq;
        }
    }
    for (index, stream) in streams.into_iter().enumerate() {
        let (stall_tx, stall_rx) = watch::channel(false);
        conns[index].stall = Some(stall_tx);
        tokio::spawn(read_loop(index, stream, events_in.clone(), stall_rx));
    }

    let mut ticker = tokio::time::interval(plan.move_interval / u32::from(plan.players));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next_mover = 0usize;
    // Per seat: (the racer's move count after a move, when it was sent).
    let mut sent: Vec<VecDeque<(u32, Instant)>> = vec![VecDeque::new(); usize::from(plan.players)];
    let mut variation = room as u64;
    let stall_at = tokio::time::Instant::from_std(plan.measure_from);
    let stall_timer = tokio::time::sleep_until(stall_at);
    tokio::pin!(stall_timer);
    let mut stalling = stalled_player.is_some() || stalled_spectator.is_some();
    let read_again = tokio::time::sleep_until(stall_at + plan.stall_for);
    tokio::pin!(read_again);
    let mut read_again_pending = false;
    let end = tokio::time::sleep_until(tokio::time::Instant::from_std(plan.measure_until));
    tokio::pin!(end);
    let mut race_over = false;
    loop {
        tokio::select! {
            _ = &mut end => break,
            () = &mut stall_timer, if stalling => {
                stalling = false;
                read_again_pending = true;
                for index in [stalled_player, stalled_spectator].into_iter().flatten() {
                    let conn = &mut conns[index];
                    conn.stall_state.since = Some(Instant::now());
                    if let Some(stall) = &conn.stall { let _ = stall.send(true); }
                }
            }
            () = &mut read_again, if read_again_pending => {
                read_again_pending = false;
                for index in [stalled_player, stalled_spectator].into_iter().flatten() {
                    let conn = &mut conns[index];
                    conn.stall_state.reading_again = Some(Instant::now());
                    // The answer to a move sent before the stall may be lost
                    // with the connection; the racer moves on regardless.
                    conn.pending = None;
                    if let Some(stall) = &conn.stall { let _ = stall.send(false); }
                }
            }
            _ = ticker.tick() => {
                let mover = next_mover;
                next_mover = (next_mover + 1) % usize::from(plan.players);
                let conn = &mut conns[mover];
                let stalled =
                    conn.stall_state.since.is_some() && conn.stall_state.reading_again.is_none();
                if !conn.racing || stalled || conn.closed || conn.sink.is_none() {
                    continue;
                }
                if conn.pending.is_some() {
                    if plan.measuring(Instant::now()) {
                        stats.late_ticks.fetch_add(1, Ordering::Relaxed);
                    }
                    continue;
                }
                // A racer with no legal move takes one back (the rooms allow
                // undo), so that random play never ends a race by itself.
                let Some(view) = conn.view.as_ref() else { continue };
                let request = match choose_move(view, &mut variation) {
                    Some(text) => ClientMessage::Move { text, seat: None },
                    None => ClientMessage::Undo,
                };
                let now = Instant::now();
                conn.pending = Some(now);
                if let Some(seat) = conn.seat {
                    let queue = &mut sent[usize::from(seat)];
                    queue.push_back((conn.moves + 1, now));
                    if queue.len() > 64 { queue.pop_front(); }
                }
                if plan.measuring(now) {
                    stats.moves_sent.fetch_add(1, Ordering::Relaxed);
                }
                if let Some(sink) = conn.sink.as_mut()
                    && send(sink, &request).await.is_err()
                {
                    conn.sink = None;
                }
            }
            event = events.recv() => {
                let Some(event) = event else { break };
                if handle(plan, stats, &mut conns, &sent, event, &mut race_over).await? {
                    // A stalled racer was closed and read its farewell: it
                    // takes its seat back on a new connection.
                    let index = stalled_player.context("only the stalled racer resumes")?;
                    resume(plan, &mut conns, index, &events_in).await?;
                }
                if race_over {
                    break;
                }
            }
        }
    }
    // A stalled connection whose story the run cut short says so.
    for index in [stalled_player, stalled_spectator].into_iter().flatten() {
        let state = &conns[index].stall_state;
        if state.since.is_some() {
            let who = if conns[index].is_player {
                "racer"
            } else {
                "spectator"
            };
            stats
                .stalls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(describe_stall(room, who, state));
        }
    }
    if stalled_player.is_some_and(|index| conns[index].stall_state.since.is_some()) {
        *stall_player = false;
    }
    if stalled_spectator.is_some_and(|index| conns[index].stall_state.since.is_some()) {
        *stall_spectator = false;
    }
    for conn in &mut conns {
        if let Some(mut sink) = conn.sink.take() {
            let _ = sink.send(Message::Close(None)).await;
        }
    }
    Ok(())
}

fn describe_stall(room: usize, who: &str, state: &StallState) -> String {
    let seconds = |duration: Option<Duration>| {
        duration.map_or("-".to_string(), |duration| {
            format!("{:.1} s", duration.as_secs_f64())
        })
    };
    format!(
        "room {room} {who}: dropped by the room after {}; read again after {}; {} frames waiting; error {:?}; close {:?}; {}",
        seconds(state.dropped_after),
        seconds(
            state
                .reading_again
                .zip(state.since)
                .map(|(again, since)| again - since)
        ),
        state.frames_after,
        state.error,
        state.close,
        match (who, state.done) {
            ("racer", true) => "resumed its seat",
            ("racer", false) => "not resumed (never dropped, or the resume failed)",
            (_, true) => "caught up with a snapshot",
            (_, false) => "no snapshot (nothing skipped)",
        }
    )
}

/// One event; `Ok(true)` when the stalled racer has read its farewell and
/// should resume.
async fn handle(
    plan: &Plan,
    stats: &Stats,
    conns: &mut [Conn],
    sent: &[VecDeque<(u32, Instant)>],
    event: Event,
    race_over: &mut bool,
) -> anyhow::Result<bool> {
    let index = event.conn;
    // A client that stalled is not one of "the others": what it receives
    // is not measured.
    let measuring = plan.measuring(event.at) && conns[index].stall_state.since.is_none();
    let recovering = {
        let state = &conns[index].stall_state;
        state.reading_again.is_some() && !state.done
    };
    let message = match event.what {
        Received::Closed(frame) => {
            let conn = &mut conns[index];
            conn.closed = true;
            conn.sink = None;
            if recovering {
                conn.stall_state.close = Some(frame.map_or_else(
                    || "none".to_string(),
                    |frame| format!("{} {}", u16::from(frame.code), frame.reason),
                ));
                return Ok(conn.is_player);
            }
            if !*race_over && Instant::now() < plan.measure_until {
                stats.disconnects.fetch_add(1, Ordering::Relaxed);
            }
            return Ok(false);
        }
        Received::Message(message) => *message,
    };
    if let Some(seq) = seq_of(&message) {
        conns[index].last_seq = conns[index].last_seq.max(seq);
    }
    if recovering {
        let state = &mut conns[index].stall_state;
        // What waited for it: read within a second of reading again.
        if state
            .reading_again
            .is_some_and(|again| event.at < again + Duration::from_secs(1))
        {
            state.frames_after += 1;
        }
        match &message {
            ServerMessage::Error { code, .. } => state.error = Some(*code),
            ServerMessage::Snapshot { .. } if !conns[index].is_player => state.done = true,
            _ => {}
        }
    }
    match message {
        ServerMessage::RaceStarted { board, .. } => {
            let conn = &mut conns[index];
            if conn.is_player {
                conn.view = Some(board);
                conn.racing = true;
                if index == 0 {
                    stats.races_started.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        ServerMessage::MoveAccepted {
            board, progress, ..
        } => {
            let conn = &mut conns[index];
            if let Some(sent_at) = conn.pending.take()
                && measuring
            {
                Stats::record(&stats.ack_micros, event.at - sent_at);
                stats.moves_accepted.fetch_add(1, Ordering::Relaxed);
            }
            conn.moves = progress.moves;
            conn.view = Some(board);
        }
        ServerMessage::MoveRejected { code, .. } => {
            conns[index].pending = None;
            if code != ErrorCode::RaceOver && measuring {
                stats.moves_rejected.fetch_add(1, Ordering::Relaxed);
            }
        }
        ServerMessage::Progress { seat, progress, .. } => {
            let sent_at = sent
                .get(usize::from(seat))
                .and_then(|queue| queue.iter().find(|(moves, _)| *moves == progress.moves))
                .map(|(_, at)| *at);
            if let (Some(sent_at), true) = (sent_at, measuring) {
                let list = if conns[index].is_player {
                    &stats.opponent_micros
                } else {
                    &stats.spectator_micros
                };
                Stats::record(list, event.at - sent_at);
            }
        }
        ServerMessage::Finished { seat, status, .. } => {
            if let Some(conn) = conns.iter_mut().find(|conn| conn.seat == Some(seat))
                && status != PlayerStatus::Racing
            {
                conn.racing = false;
            }
        }
        ServerMessage::RoomUpdate { room, .. } => {
            for player in &room.players {
                if player.connected {
                    continue;
                }
                if let Some(conn) = conns.iter_mut().find(|conn| conn.seat == Some(player.seat)) {
                    let state = &mut conn.stall_state;
                    if let (Some(since), None) = (state.since, state.dropped_after) {
                        state.dropped_after = Some(Instant::now() - since);
                    }
                }
            }
        }
        ServerMessage::RaceEnded { .. } if index == 0 => {
            stats.races_ended.fetch_add(1, Ordering::Relaxed);
            *race_over = true;
        }
        ServerMessage::Error { .. } if measuring => {
            stats.errors.fetch_add(1, Ordering::Relaxed);
        }
        _ => {}
    }
    Ok(false)
}

/// The stalled racer comes back: a new connection, `hello`, `resume`.
async fn resume(
    plan: &Plan,
    conns: &mut [Conn],
    index: usize,
    events: &mpsc::Sender<Event>,
) -> anyhow::Result<()> {
    let (mut sink, mut stream) = connect(plan, None).await?;
    send(
        &mut sink,
        &ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: format!("resumed{index}"),
        },
    )
    .await?;
    let conn = &mut conns[index];
    let token = conn.token.clone().context("a racer has a token")?;
    send(
        &mut sink,
        &ClientMessage::Resume {
            token,
            last_seq: conn.last_seq,
        },
    )
    .await?;
    loop {
        match next_message(&mut stream).await? {
            ServerMessage::Resumed { resume_token, .. } => {
                conn.token = Some(resume_token);
                break;
            }
            ServerMessage::Error { code, message } => {
                conn.stall_state.close = Some(format!(
                    "{} ; resume refused: {code:?} {message}",
                    conn.stall_state.close.clone().unwrap_or_default()
                ));
                return Ok(());
            }
            _ => {}
        }
    }
    conn.stall_state.done = true;
    conn.sink = Some(sink);
    conn.closed = false;
    conn.pending = None;
    let (stall_tx, stall_rx) = watch::channel(false);
    conn.stall = Some(stall_tx);
    tokio::spawn(read_loop(index, stream, events.clone(), stall_rx));
    Ok(())
}

/// A legal move of the racer's own board, chosen at random; `None` when it
/// has none.
fn choose_move(view: &View, variation: &mut u64) -> Option<String> {
    *variation = variation
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    let position = guess(view, *variation).ok()?;
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    if moves.is_empty() {
        return None;
    }
    let pick = usize::try_from(*variation >> 33).unwrap_or(0) % moves.len();
    Some(position.format_move(moves[pick]))
}

async fn next_message(stream: &mut Stream) -> anyhow::Result<ServerMessage> {
    loop {
        let next = tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .context("no message for 30 s")?;
        match next {
            Some(Ok(Message::Binary(bytes))) => {
                return protocol::decode_server(&bytes).context("decoding");
            }
            Some(Ok(Message::Close(frame))) => anyhow::bail!("closed: {frame:?}"),
            Some(Ok(_)) => {}
            Some(Err(error)) => return Err(error).context("reading"),
            None => anyhow::bail!("the socket ended"),
        }
    }
}

/// p50, p99 and max of a list of microseconds, in milliseconds.
fn percentiles(list: &Mutex<Vec<u64>>) -> String {
    let mut values = list.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if values.is_empty() {
        return "no samples".to_string();
    }
    values.sort_unstable();
    let at = |fraction: f64| {
        let rank = ((values.len() as f64) * fraction).ceil() as usize;
        values[rank.clamp(1, values.len()) - 1] as f64 / 1000.0
    };
    format!(
        "n {} p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
        values.len(),
        at(0.50),
        at(0.99),
        values[values.len() - 1] as f64 / 1000.0
    )
}

fn report(cli: &Cli, stats: &Stats) {
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let seconds = cli.duration_s.max(1) as f64;
    println!(
        "patience-load: {} rooms x {} racers + {} spectators, a move every {} ms per racer, {} s measured after {} s warm-up; stalled {} racers, {} spectators",
        cli.rooms,
        cli.players,
        cli.spectators,
        cli.move_interval_ms,
        cli.duration_s,
        cli.warmup_s,
        cli.stall_players,
        cli.stall_spectators
    );
    println!(
        "moves/s {:.1} (sent {}, accepted {}, rejected {}, late ticks {})",
        load(&stats.moves_accepted) as f64 / seconds,
        load(&stats.moves_sent),
        load(&stats.moves_accepted),
        load(&stats.moves_rejected),
        load(&stats.late_ticks)
    );
    println!("move->ack        {}", percentiles(&stats.ack_micros));
    println!("move->opponent   {}", percentiles(&stats.opponent_micros));
    println!("move->spectator  {}", percentiles(&stats.spectator_micros));
    println!(
        "errors {}, disconnects {}, races started {}, ended {}",
        load(&stats.errors),
        load(&stats.disconnects),
        load(&stats.races_started),
        load(&stats.races_ended)
    );
    for stall in stats
        .stalls
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        println!("stall: {stall}");
    }
}
