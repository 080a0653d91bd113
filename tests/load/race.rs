//! The race scenario: rooms of Three Blind Mice racers playing legal moves
//! at a steady pace (or as fast as they are answered), plus spectators,
//! over real WebSockets to a running `patience-server`. It records
//! move→ack, move→opponent and move→spectator latencies and the counts of
//! [`crate::measure::Stats`]; its own fields in the JSON line are
//! `races_started`, `races_ended` and `stalls`.
//!
//! `--stall-players K` and `--stall-spectators K` make K racers and K
//! spectators (one each in the first K rooms) stop reading after the
//! warm-up, so that the others' latencies can be compared with and without
//! slow consumers; the report says what happened to the stalled ones when
//! they read again (how long until the room saw a player dropped, the
//! frames still waiting, the close frame, the resume; a spectator's
//! catch-up snapshot).
//!
//! Layout: the settings; one task per room that owns its connections'
//! write halves, plays the moves and keeps the books; one reader task per
//! connection ([`crate::fanout::read_loop`]) that timestamps each frame as
//! it arrives and can be told to stop reading; what the stalled clients
//! went through. The pacing, the move timings and the read loop are
//! [`crate::fanout`]'s, shared with the Colyseus scenario.
//!
//! Each racer picks its move from its own board as the server sent it
//! (`race_started`, then each `move_accepted`): the client's guess of the
//! hidden cards makes a position of the rules engine, whose legal moves do
//! not depend on them. Rooms allow undo, and a racer with no legal move
//! takes one back, so random play does not end races by itself; a racer
//! that wins stops (unless `endless`, where it takes a move back rather
//! than win), and once the race has ended the room's connections close and
//! a new room starts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{SinkExt as _, StreamExt as _};
use patience_shared::game::GameKind;
use patience_shared::position::guess;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, PROTOCOL_VERSION, PlayerStatus, RoomOptions, ServerMessage,
};
use patience_shared::rules::{Rules as _, View};
use patience_tests::seq_of;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;

use crate::fanout::{self, Pacing, Received, SentMoves, Sink};
use crate::measure::{Outcome, Probe, Stats, Window};
use crate::net::Connector;

/// How the rooms race.
#[derive(Debug)]
pub struct Settings {
    /// Rooms racing at once.
    pub rooms: usize,
    /// Racers per room.
    pub players: u8,
    /// Spectators per room.
    pub spectators: usize,
    /// Each racer moves this often; `None`: as soon as its last move is
    /// answered (closed loop).
    pub move_interval: Option<Duration>,
    /// Racers that stop reading after the warm-up (one per room).
    pub stall_players: usize,
    /// Spectators that stop reading after the warm-up (one per room).
    pub stall_spectators: usize,
    /// How long a stalled client reads nothing.
    pub stall_for: Duration,
    /// The kernel receive buffer of the stalled clients' sockets.
    pub stall_recv_buffer: Option<u32>,
    /// Rooms with `open_boards`.
    pub open_boards: bool,
    /// Racers take a move back rather than win, so races do not end.
    pub endless: bool,
}

/// The settings, where to connect, and when to measure.
#[derive(Debug)]
struct Plan {
    settings: Settings,
    connector: Arc<Connector>,
    window: Window,
}

/// What only this scenario counts.
#[derive(Debug, Default)]
struct RaceBooks {
    races_started: AtomicU64,
    races_ended: AtomicU64,
    stalls: Mutex<Vec<Value>>,
    notes: Mutex<Vec<String>>,
}

/// Runs the rooms until the window ends, sampling `probe` at its ends.
pub async fn run(
    settings: Settings,
    connector: Arc<Connector>,
    window: Window,
    probe: Probe,
    stats: Arc<Stats>,
) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        (2..=8).contains(&settings.players),
        "a room has 2 to 8 players"
    );
    let sampling = tokio::spawn(probe.sample_window(window));
    let rooms = settings.rooms;
    let stall_players = settings.stall_players;
    let stall_spectators = settings.stall_spectators;
    let has_spectators = settings.spectators > 0;
    let plan = Arc::new(Plan {
        settings,
        connector,
        window,
    });
    let books = Arc::new(RaceBooks::default());
    fanout::run_rooms(rooms, &stats, |room| {
        let stall_player = room < stall_players;
        let stall_spectator = room < stall_spectators && has_spectators;
        let plan = Arc::clone(&plan);
        let stats = Arc::clone(&stats);
        let books = Arc::clone(&books);
        async move { run_room(room, &plan, &stats, &books, stall_player, stall_spectator).await }
    })
    .await;
    let (start, end) = sampling.await.context("sampling the server")?;
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let stalls = std::mem::take(&mut *books.stalls.lock().unwrap_or_else(PoisonError::into_inner));
    let notes = std::mem::take(&mut *books.notes.lock().unwrap_or_else(PoisonError::into_inner));
    let mut extra = Map::new();
    extra.insert("races_started".into(), json!(load(&books.races_started)));
    extra.insert("races_ended".into(), json!(load(&books.races_ended)));
    extra.insert("stalls".into(), Value::Array(stalls));
    let mut notes = notes;
    notes.insert(
        0,
        format!(
            "races started {}, ended {}",
            load(&books.races_started),
            load(&books.races_ended)
        ),
    );
    Ok(Outcome {
        window,
        start,
        end,
        extra,
        notes,
    })
}

/// What a reader saw, with when.
type Event = fanout::Event<Box<ServerMessage>>;

/// The read loop's decoder: frames that are no server message are skipped.
fn decode(bytes: &[u8]) -> Option<Box<ServerMessage>> {
    protocol::decode_server(bytes).ok().map(Box::new)
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

impl Conn {
    /// Stopped reading and not yet reading again.
    fn stalled(&self) -> bool {
        self.stall_state.since.is_some() && self.stall_state.reading_again.is_none()
    }
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

/// Sends one message of the protocol.
pub async fn send<S>(sink: &mut S, message: &ClientMessage) -> anyhow::Result<()>
where
    S: futures::Sink<Message, Error = tokio_tungstenite::tungstenite::Error> + Unpin,
{
    sink.send(Message::Binary(protocol::encode(message).into()))
        .await
        .context("send")
}

/// Runs races in one room until the measurement ends.
async fn run_room(
    room: usize,
    plan: &Plan,
    stats: &Arc<Stats>,
    books: &RaceBooks,
    stall_player: bool,
    stall_spectator: bool,
) -> anyhow::Result<()> {
    let mut stall_player = stall_player;
    let mut stall_spectator = stall_spectator;
    while Instant::now() < plan.window.until {
        race(
            room,
            plan,
            stats,
            books,
            &mut stall_player,
            &mut stall_spectator,
        )
        .await?;
    }
    Ok(())
}

/// Opens a room, fills it, races until the race ends or the measurement
/// does. A stall, once played out, is not played again.
async fn race(
    room: usize,
    plan: &Plan,
    stats: &Arc<Stats>,
    books: &RaceBooks,
    stall_player: &mut bool,
    stall_spectator: &mut bool,
) -> anyhow::Result<()> {
    let settings = &plan.settings;
    let (events_in, mut events) = mpsc::channel::<Event>(1024);
    let total = usize::from(settings.players) + settings.spectators;
    let mut conns: Vec<Conn> = Vec::with_capacity(total);
    // Racer 1 and spectator 0 are the ones that may stall.
    let stalled_player = (*stall_player).then_some(1);
    let stalled_spectator = (*stall_spectator).then_some(usize::from(settings.players));
    let mut streams = Vec::new();
    for index in 0..total {
        let stalls = Some(index) == stalled_player || Some(index) == stalled_spectator;
        let buffer = if stalls {
            settings.stall_recv_buffer
        } else {
            None
        };
        let (mut sink, mut stream) = plan.connector.connect(buffer).await?.split();
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
            is_player: index < usize::from(settings.players),
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
                max_players: settings.players,
                public: false,
                options: RoomOptions {
                    undo_allowed: true,
                    open_boards: settings.open_boards,
                    ..RoomOptions::default()
                },
                bots: Vec::new(),
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
        tokio::spawn(fanout::read_loop(
            index,
            stream,
            events_in.clone(),
            Some(stall_rx),
            Arc::clone(stats),
            plan.window,
            decode,
        ));
    }

    let mut pacing = Pacing::new(settings.move_interval, settings.players);
    let closed_loop = pacing.closed_loop();
    let mut sent = SentMoves::new(settings.players);
    let mut variation = room as u64;
    let stall_at = tokio::time::Instant::from_std(plan.window.from);
    let stall_timer = tokio::time::sleep_until(stall_at);
    tokio::pin!(stall_timer);
    let mut stalling = stalled_player.is_some() || stalled_spectator.is_some();
    let read_again = tokio::time::sleep_until(stall_at + settings.stall_for);
    tokio::pin!(read_again);
    let mut read_again_pending = false;
    let end = tokio::time::sleep_until(tokio::time::Instant::from_std(plan.window.until));
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
                    if closed_loop {
                        play_next(plan, stats, conn, &mut sent, settings.endless, &mut variation).await;
                    }
                }
            }
            mover = pacing.next_turn() => {
                let conn = &mut conns[mover];
                if conn.pending.is_some() && conn.racing && !conn.stalled() && !conn.closed {
                    if plan.window.contains(Instant::now()) {
                        Stats::bump(&stats.late_ticks);
                    }
                    continue;
                }
                play_next(plan, stats, conn, &mut sent, settings.endless, &mut variation).await;
            }
            event = events.recv() => {
                let Some(event) = event else { break };
                let index = event.conn;
                if handle(plan, stats, books, &mut conns, &sent, event, &mut race_over).await? {
                    // A stalled racer was closed and read its farewell: it
                    // takes its seat back on a new connection.
                    let stalled = stalled_player.context("only the stalled racer resumes")?;
                    resume(plan, stats, &mut conns, stalled, &events_in).await?;
                }
                if race_over {
                    break;
                }
                if closed_loop {
                    let conn = &mut conns[index];
                    play_next(plan, stats, conn, &mut sent, settings.endless, &mut variation).await;
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
            books
                .stalls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(stall_json(room, who, state));
            books
                .notes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(format!("stall: {}", describe_stall(room, who, state)));
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

/// Sends the racer's next move (or takes one back when it has none) if it
/// may move now: racing, reading, connected, its last move answered.
async fn play_next(
    plan: &Plan,
    stats: &Stats,
    conn: &mut Conn,
    sent: &mut SentMoves,
    endless: bool,
    variation: &mut u64,
) {
    if !conn.is_player
        || !conn.racing
        || conn.stalled()
        || conn.closed
        || conn.sink.is_none()
        || conn.pending.is_some()
    {
        return;
    }
    let Some(view) = conn.view.as_ref() else {
        return;
    };
    // A racer with no legal move takes one back (the rooms allow undo), so
    // that random play never ends a race by itself.
    let request = match choose_move(view, variation, endless) {
        Some(text) => ClientMessage::Move { text, seat: None },
        None => ClientMessage::Undo,
    };
    conn.pending = Some(fanout::move_sent(
        stats,
        plan.window,
        sent,
        conn.seat,
        u64::from(conn.moves) + 1,
    ));
    if let Some(sink) = conn.sink.as_mut()
        && send(sink, &request).await.is_err()
    {
        conn.sink = None;
    }
}

fn seconds_between(later: Option<Instant>, earlier: Option<Instant>) -> Option<Duration> {
    later.zip(earlier).map(|(later, earlier)| later - earlier)
}

/// What the stalled client went through, for the JSON line.
fn stall_json(room: usize, who: &str, state: &StallState) -> Value {
    json!({
        "room": room,
        "who": who,
        "dropped_after_s": state.dropped_after.map(|after| after.as_secs_f64()),
        "read_again_after_s": seconds_between(state.reading_again, state.since)
            .map(|after| after.as_secs_f64()),
        "frames_waiting": state.frames_after,
        "error": state.error,
        "close": state.close,
        "outcome": stall_outcome(who, state.done),
    })
}

fn stall_outcome(who: &str, done: bool) -> &'static str {
    match (who, done) {
        ("racer", true) => "resumed",
        ("racer", false) => "not_resumed",
        (_, true) => "snapshot",
        (_, false) => "no_snapshot",
    }
}

/// The same for a person.
fn describe_stall(room: usize, who: &str, state: &StallState) -> String {
    let seconds = |duration: Option<Duration>| {
        duration.map_or("-".to_string(), |duration| {
            format!("{:.1} s", duration.as_secs_f64())
        })
    };
    format!(
        "room {room} {who}: dropped by the room after {}; read again after {}; {} frames waiting; error {:?}; close {:?}; {}",
        seconds(state.dropped_after),
        seconds(seconds_between(state.reading_again, state.since)),
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
    books: &RaceBooks,
    conns: &mut [Conn],
    sent: &SentMoves,
    event: Event,
    race_over: &mut bool,
) -> anyhow::Result<bool> {
    let index = event.conn;
    // A client that stalled is not one of "the others": what it receives
    // is not measured.
    let measuring = plan.window.contains(event.at) && conns[index].stall_state.since.is_none();
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
            if !*race_over && Instant::now() < plan.window.until {
                Stats::bump(&stats.disconnects);
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
                    Stats::bump(&books.races_started);
                }
            }
        }
        ServerMessage::MoveAccepted {
            board, progress, ..
        } => {
            let conn = &mut conns[index];
            if let Some(sent_at) = conn.pending.take() {
                fanout::answered(stats, sent_at, event.at, measuring);
            }
            conn.moves = progress.moves;
            conn.view = Some(board);
        }
        ServerMessage::MoveRejected { code, .. } => {
            conns[index].pending = None;
            if code != ErrorCode::RaceOver && measuring {
                Stats::bump(&stats.moves_rejected);
            }
        }
        ServerMessage::Progress { seat, progress, .. } => {
            fanout::reported(
                stats,
                sent,
                seat,
                u64::from(progress.moves),
                event.at,
                measuring,
                conns[index].is_player,
            );
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
            Stats::bump(&books.races_ended);
            *race_over = true;
        }
        ServerMessage::Error { .. } if measuring => {
            Stats::bump(&stats.errors);
        }
        _ => {}
    }
    Ok(false)
}

/// The stalled racer comes back: a new connection, `hello`, `resume`.
async fn resume(
    plan: &Plan,
    stats: &Arc<Stats>,
    conns: &mut [Conn],
    index: usize,
    events: &mpsc::Sender<Event>,
) -> anyhow::Result<()> {
    let (mut sink, mut stream) = plan.connector.connect(None).await?.split();
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
    tokio::spawn(fanout::read_loop(
        index,
        stream,
        events.clone(),
        Some(stall_rx),
        Arc::clone(stats),
        plan.window,
        decode,
    ));
    Ok(())
}

/// A legal move of the racer's own board, chosen at random; `None` when it
/// has none (with `endless`: none that does not win).
fn choose_move(view: &View, variation: &mut u64, endless: bool) -> Option<String> {
    *variation = variation
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    let position = guess(view, *variation).ok()?;
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    if endless {
        // The guess of the hidden cards may be wrong, but a winning move
        // shows every card, so it is judged right.
        moves.retain(|&mv| {
            let mut after = position.clone();
            !(after.apply(mv).is_ok() && after.is_won())
        });
    }
    if moves.is_empty() {
        return None;
    }
    let pick = usize::try_from(*variation >> 33).unwrap_or(0) % moves.len();
    Some(position.format_move(moves[pick]))
}

/// The next message of the protocol, skipping pings; at most 30 s.
pub async fn next_message<S>(stream: &mut S) -> anyhow::Result<ServerMessage>
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
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
