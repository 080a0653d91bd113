//! A room and its race: one actor task owns all of it.
//!
//! The actor reads a closed set of [`Command`]s from a bounded inbox and
//! wakes on its own deadlines (countdown, time limit, grace periods, the
//! linger after the race). It is the only code that touches a race's
//! positions, so moves are checked and applied in one order, with no lock.
//!
//! Every event goes out as one encoded frame, shared by all its recipients,
//! and numbered (`seq`). Events meant for players are kept in a bounded log
//! so that a player who reconnects gets what it missed; older gaps get a
//! snapshot instead. Nobody is waited for: a player who cannot keep up is
//! disconnected (and may resume), a spectator who cannot is coalesced (it
//! skips events, then gets one snapshot). What leaves the room is built from
//! [`View`]s only: the
//! positions (`AnyGame`) and the seed stay here until the race is over.
//!
//! Fair play: every racer plays the same deal, so a card face up on one
//! board may be face down on another. Until the race ends a racer's board
//! and move texts go to that racer alone; everyone else gets its progress
//! as counts ([`Progress`]), unless the room was created with
//! `open_boards`. [`Room::snapshot`] is therefore built for one recipient.
//!
//! [`View`]: patience_shared::rules::View

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ErrorCode, MoveLog, Phase, PlayerInfo, PlayerStatus, Progress, RaceResult, RaceSnapshot,
    Reveal, RoomInfo, RoomOptions, SeatBoard, ServerMessage, Standing, UNDO_TEXT,
};
use patience_shared::rules::{Outcome, Rules, View};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument as _;

use crate::Shared;
use crate::config::millis;
use crate::metrics::{bump, gauge};
use crate::outbox::{ConnectionHandle, SendFailure};
use crate::room_handle::{Command, INBOX_CAPACITY, Refusal, RoomHandle, RoomSummary};
use crate::secrets::{TokenHash, new_secret, token_hash};
use crate::store::{NewRace, PlayerId};

/// Who an event is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Audience {
    Everyone,
    Seat(u8),
    AllBut(u8),
}

impl Audience {
    fn includes_seat(self, seat: u8) -> bool {
        match self {
            Audience::Everyone => true,
            Audience::Seat(only) => only == seat,
            Audience::AllBut(mover) => mover != seat,
        }
    }

    fn includes_spectators(self) -> bool {
        !matches!(self, Audience::Seat(_))
    }
}

struct LoggedEvent {
    seq: u64,
    audience: Audience,
    frame: Bytes,
}

struct Seat {
    seat: u8,
    name: String,
    player: Option<PlayerId>,
    conn: Option<ConnectionHandle>,
    token: TokenHash,
    /// Set while the player is away: when its seat is given up.
    grace_until: Option<Instant>,
    status: PlayerStatus,
    position: Option<AnyGame>,
    history: Vec<(AnyMove, Outcome)>,
    log: Vec<String>,
    progress: Progress,
    finished_ms: Option<u64>,
}

struct Race {
    seed: u64,
    salt: String,
    commitment: String,
    /// The deal as everyone saw it at the start: progress is measured from it.
    deal: View,
    started: Instant,
    deadline: Instant,
    result: Option<RaceResult>,
}

struct Room {
    shared: Arc<Shared>,
    code: Arc<str>,
    summary: Arc<RoomSummary>,
    inbox: mpsc::Sender<Command>,
    game: GameKind,
    max_players: u8,
    public: bool,
    quick: bool,
    options: RoomOptions,
    time_limit: Duration,
    owner: Option<u8>,
    phase: Phase,
    seats: Vec<Seat>,
    spectators: Vec<ConnectionHandle>,
    /// Spectators whose outbox overflowed: they get a snapshot when it has room.
    behind: HashSet<u64>,
    seq: u64,
    log: VecDeque<LoggedEvent>,
    countdown_until: Option<Instant>,
    seed: Option<u64>,
    waiting_for_deal: bool,
    race: Option<Race>,
    close_at: Option<Instant>,
    changed: bool,
    /// A result to store and announce.
    unsaved: Option<RaceResult>,
}

/// Opens a room, registers it, and starts its actor.
pub fn create(
    shared: &Arc<Shared>,
    game: GameKind,
    max_players: u8,
    public: bool,
    quick: bool,
    options: RoomOptions,
) -> RoomHandle {
    let (inbox, commands) = mpsc::channel(INBOX_CAPACITY);
    let summary = Arc::new(RoomSummary::new(game, public, max_players));
    let handle = shared.registry.insert_new(|code| RoomHandle {
        code,
        commands: inbox.clone(),
        summary: Arc::clone(&summary),
    });
    let time_limit_ms = options
        .time_limit_ms
        .unwrap_or(shared.config.default_time_limit_ms);
    let room = Room {
        shared: Arc::clone(shared),
        code: Arc::clone(&handle.code),
        summary,
        inbox,
        game,
        max_players,
        public,
        quick,
        options: RoomOptions {
            time_limit_ms: Some(time_limit_ms),
            ..options
        },
        time_limit: millis(time_limit_ms),
        owner: None,
        phase: Phase::Lobby,
        seats: Vec::new(),
        spectators: Vec::new(),
        behind: HashSet::new(),
        seq: 0,
        log: VecDeque::new(),
        countdown_until: None,
        seed: None,
        waiting_for_deal: false,
        race: None,
        close_at: None,
        changed: false,
        unsaved: None,
    };
    gauge(&shared.metrics.rooms, 1);
    let span = tracing::info_span!("room", code = %handle.code, %game);
    shared.tracker.spawn(room.run(commands).instrument(span));
    handle
}

impl Room {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        tracing::info!(
            max_players = self.max_players,
            public = self.public,
            "room opened"
        );
        let shutdown = self.shared.shutdown.clone();
        loop {
            let deadline = self.next_deadline();
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => break,
                command = commands.recv() => match command {
                    Some(command) => self.handle(command),
                    None => break,
                },
                _ = sleep_until(deadline), if deadline.is_some() => {}
            }
            self.on_time(Instant::now());
            if let Some(result) = self.unsaved.take() {
                self.save_and_announce(result).await;
            }
            if self.changed {
                self.changed = false;
                self.summary.set(
                    self.phase,
                    u8::try_from(self.seats.len()).unwrap_or(u8::MAX),
                );
                self.emit(Audience::Everyone, |seq, room| ServerMessage::RoomUpdate {
                    seq,
                    room,
                });
            }
            if self.should_close() {
                break;
            }
        }
        self.close();
    }

    fn next_deadline(&self) -> Option<Instant> {
        let grace = self.seats.iter().filter_map(|seat| seat.grace_until);
        let race = self
            .race
            .as_ref()
            .filter(|_| self.phase == Phase::Racing)
            .map(|race| race.deadline);
        let countdown = self
            .countdown_until
            .filter(|_| self.phase == Phase::Countdown);
        grace
            .chain(race)
            .chain(countdown)
            .chain(self.close_at)
            .min()
    }

    fn should_close(&self) -> bool {
        match self.phase {
            Phase::Lobby | Phase::Dealing | Phase::Countdown => self.seats.is_empty(),
            Phase::Racing => false,
            Phase::Finished => self.close_at.is_some_and(|at| Instant::now() >= at),
        }
    }

    fn close(&mut self) {
        // Whoever is still here is out of the room now (at shutdown the
        // connections say so themselves).
        self.shared.registry.remove(&self.code);
        let tell = !self.shared.shutdown.is_cancelled();
        let left = ServerMessage::Left {
            code: self.code.to_string(),
        };
        for seat in &self.seats {
            self.shared.registry.remove_token(&seat.token);
            if let Some(conn) = seat.conn.as_ref().filter(|_| tell) {
                let _ = conn.send_message(&left);
            }
        }
        for conn in self.spectators.iter().filter(|_| tell) {
            let _ = conn.send_message(&left);
        }
        gauge(&self.shared.metrics.rooms, -1);
        if self.phase == Phase::Racing {
            gauge(&self.shared.metrics.races_running, -1);
        }
        tracing::info!("room closed");
    }

    // ----- Sending -----

    fn info(&self) -> RoomInfo {
        RoomInfo {
            code: self.code.to_string(),
            game: self.game,
            max_players: self.max_players,
            public: self.public,
            options: self.options,
            owner: self.owner,
            phase: self.phase,
            players: self
                .seats
                .iter()
                .map(|seat| PlayerInfo {
                    seat: seat.seat,
                    name: seat.name.clone(),
                    connected: seat.conn.is_some(),
                    status: seat.status,
                })
                .collect(),
            spectators: u32::try_from(self.spectators.len()).unwrap_or(u32::MAX),
        }
    }

    /// Numbers, encodes once, logs and delivers an event.
    fn emit(&mut self, audience: Audience, build: impl FnOnce(u64, RoomInfo) -> ServerMessage) {
        self.seq += 1;
        let frame = Bytes::from(protocol::encode(&build(self.seq, self.info())));
        self.log.push_back(LoggedEvent {
            seq: self.seq,
            audience,
            frame: frame.clone(),
        });
        while self.log.len() > self.shared.config.event_log_capacity {
            self.log.pop_front();
        }
        self.deliver(audience, &frame);
    }

    fn deliver(&mut self, audience: Audience, frame: &Bytes) {
        let grace = millis(self.shared.config.grace_period_ms);
        let metrics = &self.shared.metrics;
        for seat in &mut self.seats {
            if !audience.includes_seat(seat.seat) {
                continue;
            }
            let Some(conn) = &seat.conn else { continue };
            if let Err(failure) = conn.send(frame.clone()) {
                if failure == SendFailure::Full {
                    bump(&metrics.send_queue_drops);
                    conn.kick(ErrorCode::TooSlow, "you fell behind; resume to catch up");
                    tracing::info!(seat = seat.seat, "player too slow: disconnected");
                }
                seat.conn = None;
                seat.grace_until = Some(Instant::now() + grace);
                self.changed = true;
            }
        }
        if audience.includes_spectators() {
            // A spectator whose outbox is full is not waited for and not
            // dropped: it skips events until its outbox has room again, then
            // gets one snapshot of the latest state (coalescing).
            let catch_up = (!self.behind.is_empty())
                .then(|| Bytes::from(protocol::encode(&self.snapshot_message(None))));
            let before = self.spectators.len();
            let behind = &mut self.behind;
            self.spectators.retain(|conn| {
                let sent = match (&catch_up, behind.contains(&conn.id)) {
                    (Some(snapshot), true) if conn.has_room_to_catch_up() => conn
                        .send(snapshot.clone())
                        .map(|()| behind.remove(&conn.id)),
                    (_, true) => Ok(true),
                    (_, false) => conn.send(frame.clone()).map(|()| true),
                };
                match sent {
                    Ok(_) => true,
                    Err(SendFailure::Full) => {
                        bump(&metrics.send_queue_drops);
                        behind.insert(conn.id);
                        true
                    }
                    Err(SendFailure::Closed) => false,
                }
            });
            let present: HashSet<u64> = self.spectators.iter().map(|conn| conn.id).collect();
            self.behind.retain(|id| present.contains(id));
            self.changed |= self.spectators.len() != before;
        }
    }

    /// Sends to one connection, outside the event log.
    fn send_to(&self, conn: &ConnectionHandle, message: &ServerMessage) {
        if conn.send_message(message) == Err(SendFailure::Full) {
            bump(&self.shared.metrics.send_queue_drops);
            conn.kick(ErrorCode::TooSlow, "too many messages waiting to be sent");
        }
    }

    fn error_to(&self, conn_id: u64, code: ErrorCode, message: impl Into<String>) {
        if let Some(conn) = self.connection(conn_id) {
            self.send_to(
                conn,
                &ServerMessage::Error {
                    code,
                    message: message.into(),
                },
            );
        }
    }

    fn reject(
        &self,
        conn_id: u64,
        text: String,
        code: ErrorCode,
        reason: Option<patience_shared::rules::MoveError>,
        message: String,
    ) {
        bump(&self.shared.metrics.moves_rejected);
        if let Some(conn) = self.connection(conn_id) {
            self.send_to(
                conn,
                &ServerMessage::MoveRejected {
                    text,
                    code,
                    reason,
                    message,
                },
            );
        }
    }

    fn connection(&self, conn_id: u64) -> Option<&ConnectionHandle> {
        self.seats
            .iter()
            .filter_map(|seat| seat.conn.as_ref())
            .chain(&self.spectators)
            .find(|conn| conn.id == conn_id)
    }

    fn seat_index_of(&self, conn_id: u64) -> Option<usize> {
        self.seats
            .iter()
            .position(|seat| seat.conn.as_ref().is_some_and(|conn| conn.id == conn_id))
    }

    fn elapsed_ms(&self, now: Instant) -> u64 {
        self.race.as_ref().map_or(0, |race| {
            u64::try_from(now.saturating_duration_since(race.started).as_millis())
                .unwrap_or(u64::MAX)
        })
    }

    /// The race as `viewer` (a seat, or `None` for a spectator) may see it:
    /// its own board, and the others' only once the race is over or in a
    /// room with open boards.
    fn snapshot(&self, viewer: Option<u8>) -> Option<RaceSnapshot> {
        let race = self.race.as_ref()?;
        let all_boards = self.options.open_boards || self.phase == Phase::Finished;
        Some(RaceSnapshot {
            commitment: race.commitment.clone(),
            elapsed_ms: self.elapsed_ms(Instant::now()),
            time_limit_ms: u64::try_from(self.time_limit.as_millis()).unwrap_or(u64::MAX),
            boards: self
                .seats
                .iter()
                .filter(|seat| seat.position.is_some())
                .map(|seat| SeatBoard {
                    seat: seat.seat,
                    status: seat.status,
                    board: seat
                        .position
                        .as_ref()
                        .filter(|_| all_boards || viewer == Some(seat.seat))
                        .map(Rules::view),
                    progress: seat.progress,
                })
                .collect(),
            result: race.result.clone(),
        })
    }

    /// A whole-room snapshot message for `viewer`.
    fn snapshot_message(&self, viewer: Option<u8>) -> ServerMessage {
        ServerMessage::Snapshot {
            seq: self.seq,
            room: self.info(),
            race: self.snapshot(viewer),
        }
    }

    // ----- Commands -----

    fn handle(&mut self, command: Command) {
        match command {
            Command::Join {
                conn,
                name,
                player,
                reply,
            } => self.join(conn, name, player, reply),
            Command::Spectate { conn, reply } => {
                let _ = reply.send(Ok(()));
                self.send_to(
                    &conn,
                    &ServerMessage::RoomJoined {
                        seq: self.seq,
                        room: self.info(),
                        seat: None,
                        resume_token: None,
                    },
                );
                self.send_to(&conn, &self.snapshot_message(None));
                self.spectators.push(conn);
                self.changed = true;
            }
            Command::Resume {
                conn,
                token,
                last_seq,
                reply,
            } => self.resume(conn, token, last_seq, reply),
            Command::Leave { conn_id } => self.leave(conn_id),
            Command::StartEarly { conn_id } => self.start_early(conn_id),
            Command::Move {
                conn_id,
                text,
                seat,
                received,
            } => {
                self.play(conn_id, text, seat);
                self.shared.metrics.observe_move(received.elapsed());
            }
            Command::Undo { conn_id } => self.undo(conn_id),
            Command::Resign { conn_id } => {
                if let Some(index) = self.racing_seat(conn_id, "", false) {
                    self.finish(index, PlayerStatus::Resigned, Instant::now());
                }
            }
            Command::Disconnected { conn_id } => self.disconnected(conn_id),
            Command::DealReady { seed } => {
                self.waiting_for_deal = false;
                self.seed.get_or_insert(seed);
                if self.phase == Phase::Dealing {
                    self.begin_countdown(Instant::now());
                }
            }
        }
    }

    fn join(
        &mut self,
        conn: ConnectionHandle,
        name: String,
        player: Option<PlayerId>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    ) {
        let refusal = match self.phase {
            Phase::Racing | Phase::Finished => Some(Refusal::new(
                ErrorCode::RaceAlreadyStarted,
                "the race has started: you may spectate",
            )),
            _ if self.seats.len() >= usize::from(self.max_players) => {
                Some(Refusal::new(ErrorCode::RoomFull, "every seat is taken"))
            }
            _ => None,
        };
        if let Some(refusal) = refusal {
            let _ = reply.send(Err(refusal));
            return;
        }
        if reply.send(Ok(())).is_err() {
            return;
        }
        let seat_number = (0u8..)
            .find(|number| self.seats.iter().all(|seat| seat.seat != *number))
            .unwrap_or(0);
        let token = new_secret(24);
        let hash = token_hash(&token);
        self.shared
            .registry
            .insert_token(hash, Arc::clone(&self.code));
        let index = self.seats.partition_point(|seat| seat.seat < seat_number);
        self.seats.insert(
            index,
            Seat {
                seat: seat_number,
                name,
                player,
                conn: Some(conn.clone()),
                token: hash,
                grace_until: None,
                status: PlayerStatus::Waiting,
                position: None,
                history: Vec::new(),
                log: Vec::new(),
                progress: Progress::default(),
                finished_ms: None,
            },
        );
        self.owner.get_or_insert(seat_number);
        tracing::info!(seat = seat_number, "player joined");
        self.send_to(
            &conn,
            &ServerMessage::RoomJoined {
                seq: self.seq,
                room: self.info(),
                seat: Some(seat_number),
                resume_token: Some(token),
            },
        );
        self.changed = true;
        let full = self.seats.len() >= usize::from(self.max_players);
        let now = Instant::now();
        match self.phase {
            Phase::Lobby if full || (self.quick && self.seats.len() >= 2) => self.begin_start(now),
            Phase::Countdown if full => {
                // The room filled up during the countdown: no one else can
                // come, so start as soon as the deal is there.
                self.countdown_until = Some(now);
                self.maybe_start(now);
            }
            _ => {}
        }
    }

    fn resume(
        &mut self,
        conn: ConnectionHandle,
        token: TokenHash,
        last_seq: u64,
        reply: oneshot::Sender<Result<(), Refusal>>,
    ) {
        let Some(index) = self
            .seats
            .iter()
            .position(|seat| seat.token == token && seat.status != PlayerStatus::Left)
        else {
            let _ = reply.send(Err(Refusal::new(
                ErrorCode::InvalidResumeToken,
                "that resume token is unknown or already used",
            )));
            return;
        };
        if reply.send(Ok(())).is_err() {
            return;
        }
        let new_token = new_secret(24);
        let new_hash = token_hash(&new_token);
        self.shared.registry.remove_token(&token);
        self.shared
            .registry
            .insert_token(new_hash, Arc::clone(&self.code));
        let seat = &mut self.seats[index];
        if let Some(old) = seat.conn.replace(conn.clone()) {
            old.kick(
                ErrorCode::Replaced,
                "your seat was taken back by another connection",
            );
        }
        seat.token = new_hash;
        seat.grace_until = None;
        let seat_number = seat.seat;
        tracing::info!(seat = seat_number, last_seq, "player resumed");
        self.send_to(
            &conn,
            &ServerMessage::Resumed {
                seq: self.seq,
                room: self.info(),
                seat: seat_number,
                resume_token: new_token,
                elapsed_ms: self.race.as_ref().map(|_| self.elapsed_ms(Instant::now())),
            },
        );
        // The missed events if they are all kept and fit the outbox with
        // room to spare; otherwise one snapshot says it all.
        let kept_from = self.log.front().map_or(self.seq + 1, |event| event.seq);
        let missed: Vec<Bytes> = self
            .log
            .iter()
            .filter(|event| event.seq > last_seq && event.audience.includes_seat(seat_number))
            .map(|event| event.frame.clone())
            .collect();
        let fits = conn.has_room_for(missed.len(), missed.iter().map(Bytes::len).sum());
        if last_seq <= self.seq && kept_from <= last_seq + 1 && fits {
            for frame in missed {
                if conn.send(frame).is_err() {
                    bump(&self.shared.metrics.send_queue_drops);
                    conn.kick(ErrorCode::TooSlow, "too many missed events; resume again");
                    break;
                }
            }
        } else {
            self.send_to(&conn, &self.snapshot_message(Some(seat_number)));
        }
        self.changed = true;
    }

    fn leave(&mut self, conn_id: u64) {
        let left = ServerMessage::Left {
            code: self.code.to_string(),
        };
        if let Some(index) = self.seat_index_of(conn_id) {
            let now = Instant::now();
            if let Some(conn) = self.seats[index].conn.take() {
                self.send_to(&conn, &left);
            }
            self.give_up_seat(index, PlayerStatus::Resigned, now);
        } else if let Some(index) = self.spectators.iter().position(|conn| conn.id == conn_id) {
            let conn = self.spectators.remove(index);
            self.send_to(&conn, &left);
        }
        self.changed = true;
    }

    /// A player is gone for good: out of the lobby, or out of the race as `status`.
    fn give_up_seat(&mut self, index: usize, status: PlayerStatus, now: Instant) {
        let token = self.seats[index].token;
        self.shared.registry.remove_token(&token);
        match self.phase {
            Phase::Lobby | Phase::Dealing | Phase::Countdown => {
                let seat = self.seats.remove(index);
                if self.owner == Some(seat.seat) {
                    self.owner = self.seats.first().map(|seat| seat.seat);
                }
            }
            Phase::Racing => {
                self.seats[index].grace_until = None;
                if self.seats[index].status == PlayerStatus::Racing {
                    self.finish(index, status, now);
                }
                self.seats[index].status = left_unless_finished(self.seats[index].status);
            }
            Phase::Finished => self.seats[index].grace_until = None,
        }
        self.changed = true;
    }

    fn disconnected(&mut self, conn_id: u64) {
        if let Some(index) = self.seat_index_of(conn_id) {
            let seat = &mut self.seats[index];
            seat.conn = None;
            seat.grace_until = Some(Instant::now() + millis(self.shared.config.grace_period_ms));
            tracing::info!(seat = seat.seat, "player dropped");
            self.changed = true;
        } else {
            let before = self.spectators.len();
            self.spectators.retain(|conn| conn.id != conn_id);
            self.changed |= self.spectators.len() != before;
        }
    }

    fn start_early(&mut self, conn_id: u64) {
        let Some(index) = self.seat_index_of(conn_id) else {
            return self.error_to(
                conn_id,
                ErrorCode::NotOwner,
                "only the room's owner may start early",
            );
        };
        if self.owner != Some(self.seats[index].seat) {
            return self.error_to(
                conn_id,
                ErrorCode::NotOwner,
                "only the room's owner may start early",
            );
        }
        match self.phase {
            Phase::Lobby => self.begin_start(Instant::now()),
            Phase::Dealing | Phase::Countdown => {}
            Phase::Racing | Phase::Finished => self.error_to(
                conn_id,
                ErrorCode::RaceAlreadyStarted,
                "the race has already started",
            ),
        }
    }

    // ----- The race -----

    /// The race is due (the room is full, the owner started early, or a
    /// quick race has two players). A countdown is a promise that the race
    /// starts when it ends, so it is sent only with a proved deal at hand;
    /// without one the room says it is dealing, and counts down once the
    /// deal pool delivers ([`Command::DealReady`]).
    fn begin_start(&mut self, now: Instant) {
        if self.seed.is_none() {
            self.seed = self.shared.pool.try_take(self.game);
        }
        if self.seed.is_some() {
            return self.begin_countdown(now);
        }
        self.phase = Phase::Dealing;
        self.changed = true;
        if !self.waiting_for_deal {
            tracing::warn!("no proved deal ready: the race waits for the solver");
            self.waiting_for_deal = true;
            let pool = self.shared.pool.clone();
            let inbox = self.inbox.clone();
            let game = self.game;
            self.shared.tracker.spawn(async move {
                if let Some(seed) = pool.take(game).await {
                    let _ = inbox.send(Command::DealReady { seed }).await;
                }
            });
        }
    }

    fn begin_countdown(&mut self, now: Instant) {
        self.phase = Phase::Countdown;
        let countdown = self.shared.config.countdown_ms;
        self.countdown_until = Some(now + millis(countdown));
        self.changed = true;
        self.emit(Audience::Everyone, |seq, _| ServerMessage::Countdown {
            seq,
            starts_in_ms: countdown,
        });
        self.maybe_start(now);
    }

    fn maybe_start(&mut self, now: Instant) {
        if self.phase != Phase::Countdown {
            return;
        }
        let Some(seed) = self.seed else { return };
        if self.countdown_until.is_some_and(|until| now < until) {
            return;
        }
        let salt = new_secret(16);
        let commitment = protocol::commitment(self.game, seed, &salt);
        let deal = AnyGame::deal(self.game, seed);
        let board = deal.view();
        let progress = Progress::measure(&board, &board, 0, 0);
        for seat in &mut self.seats {
            seat.position = Some(deal.clone());
            seat.status = PlayerStatus::Racing;
            seat.progress = progress;
        }
        self.race = Some(Race {
            seed,
            salt,
            commitment: commitment.clone(),
            deal: board.clone(),
            started: now,
            deadline: now + self.time_limit,
            result: None,
        });
        self.phase = Phase::Racing;
        self.changed = true;
        bump(&self.shared.metrics.races_started);
        gauge(&self.shared.metrics.races_running, 1);
        tracing::info!(players = self.seats.len(), "race started");
        let time_limit_ms = u64::try_from(self.time_limit.as_millis()).unwrap_or(u64::MAX);
        self.emit(Audience::Everyone, |seq, _| ServerMessage::RaceStarted {
            seq,
            commitment,
            board,
            time_limit_ms,
        });
    }

    /// The index of the connection's seat if it may play now; otherwise the
    /// connection is told why not (as a refused move when `text` is a move).
    fn racing_seat(&self, conn_id: u64, text: &str, is_move: bool) -> Option<usize> {
        let refuse = |code: ErrorCode, message: &str| {
            if is_move {
                self.reject(conn_id, text.to_string(), code, None, message.to_string());
            } else {
                self.error_to(conn_id, code, message);
            }
            None
        };
        let Some(index) = self.seat_index_of(conn_id) else {
            return refuse(ErrorCode::NotAPlayer, "spectators cannot play");
        };
        match self.phase {
            Phase::Lobby | Phase::Dealing | Phase::Countdown => {
                refuse(ErrorCode::RaceNotStarted, "the race has not started")
            }
            Phase::Finished => refuse(ErrorCode::RaceOver, "the race is over"),
            Phase::Racing if self.seats[index].status != PlayerStatus::Racing => {
                refuse(ErrorCode::RaceOver, "your race is over")
            }
            Phase::Racing => Some(index),
        }
    }

    fn play(&mut self, conn_id: u64, text: String, named_seat: Option<u8>) {
        let Some(index) = self.racing_seat(conn_id, &text, true) else {
            return;
        };
        if let Some(named) = named_seat.filter(|&named| named != self.seats[index].seat) {
            return self.reject(
                conn_id,
                text,
                ErrorCode::NotYourBoard,
                None,
                format!("you may only move on your own board, not seat {named}'s"),
            );
        }
        let Some(position) = self.seats[index].position.as_mut() else {
            return;
        };
        let mv = match position.parse_move(&text) {
            Ok(mv) => mv,
            Err(error) => {
                return self.reject(
                    conn_id,
                    text,
                    ErrorCode::BadNotation,
                    None,
                    error.to_string(),
                );
            }
        };
        let canonical = position.format_move(mv);
        let outcome = match position.apply(mv) {
            Ok(outcome) => outcome,
            Err(error) => {
                let message = error.to_string();
                return self.reject(conn_id, text, ErrorCode::IllegalMove, Some(error), message);
            }
        };
        bump(&self.shared.metrics.moves_accepted);
        let effects = outcome.effects.to_vec();
        let seat = &mut self.seats[index];
        seat.history.push((mv, outcome));
        seat.log.push(canonical.clone());
        self.after_change(index, canonical, effects);
    }

    fn undo(&mut self, conn_id: u64) {
        let Some(index) = self.racing_seat(conn_id, UNDO_TEXT, true) else {
            return;
        };
        if !self.options.undo_allowed {
            return self.reject(
                conn_id,
                UNDO_TEXT.to_string(),
                ErrorCode::UndoNotAllowed,
                None,
                "this room does not allow undo".to_string(),
            );
        }
        let seat = &mut self.seats[index];
        let (Some(position), Some((mv, outcome))) = (seat.position.as_mut(), seat.history.pop())
        else {
            return self.reject(
                conn_id,
                UNDO_TEXT.to_string(),
                ErrorCode::NothingToUndo,
                None,
                "there is no move to take back".to_string(),
            );
        };
        position.undo(mv, &outcome);
        seat.log.push(UNDO_TEXT.to_string());
        bump(&self.shared.metrics.moves_accepted);
        self.after_change(index, UNDO_TEXT.to_string(), Vec::new());
    }

    /// Acknowledges a played move to its mover, tells everyone else the
    /// mover's progress (and, with open boards only, the move and the
    /// board), and ends the player's race if it is won or stuck.
    fn after_change(
        &mut self,
        index: usize,
        text: String,
        effects: Vec<patience_shared::rules::Effect>,
    ) {
        let now = Instant::now();
        let elapsed_ms = self.elapsed_ms(now);
        let Some(deal) = self.race.as_ref().map(|race| &race.deal) else {
            return;
        };
        let seat = &mut self.seats[index];
        let Some(position) = seat.position.as_ref() else {
            return;
        };
        let board = position.view();
        let (won, stuck) = (position.is_won(), position.is_stuck());
        seat.progress = Progress::measure(deal, &board, seat.progress.moves + 1, elapsed_ms);
        let (seat_number, progress) = (seat.seat, seat.progress);
        // A rival's move text and board name cards that may still be face
        // down in the recipient's own game: they stay with the mover.
        let shown = self
            .options
            .open_boards
            .then(|| (text.clone(), board.clone()));
        self.emit(Audience::Seat(seat_number), |seq, _| {
            ServerMessage::MoveAccepted {
                seq,
                text,
                effects,
                board,
                progress,
            }
        });
        let (text, board) = shown.unzip();
        self.emit(Audience::AllBut(seat_number), |seq, _| {
            ServerMessage::Progress {
                seq,
                seat: seat_number,
                progress,
                text,
                board,
            }
        });
        if won {
            self.finish(index, PlayerStatus::Won, now);
        } else if stuck {
            self.emit(Audience::Seat(seat_number), |seq, _| ServerMessage::Stuck {
                seq,
            });
            if !self.options.undo_allowed {
                self.finish(index, PlayerStatus::Stuck, now);
            }
        }
    }

    fn finish(&mut self, index: usize, status: PlayerStatus, now: Instant) {
        let elapsed_ms = self.elapsed_ms(now);
        let seat = &mut self.seats[index];
        seat.status = status;
        seat.finished_ms = Some(elapsed_ms);
        let seat_number = seat.seat;
        tracing::info!(seat = seat_number, ?status, elapsed_ms, "player finished");
        self.changed = true;
        self.emit(Audience::Everyone, |seq, _| ServerMessage::Finished {
            seq,
            seat: seat_number,
            status,
            elapsed_ms,
        });
        if self
            .seats
            .iter()
            .all(|seat| seat.status != PlayerStatus::Racing)
        {
            self.end_race(now);
        }
    }

    fn end_race(&mut self, now: Instant) {
        let Some(race) = self.race.as_ref() else {
            return;
        };
        let mut order: Vec<&Seat> = self.seats.iter().collect();
        order.sort_by_key(|seat| {
            standing_key(seat.seat, seat.status, seat.finished_ms, seat.progress)
        });
        let standings = (1u8..)
            .zip(order)
            .map(|(rank, seat)| Standing {
                rank,
                seat: seat.seat,
                name: seat.name.clone(),
                status: seat.status,
                progress: seat.progress,
            })
            .collect();
        let result = RaceResult {
            race_id: None,
            standings,
            reveal: Reveal {
                game: self.game,
                seed: race.seed,
                salt: race.salt.clone(),
            },
            logs: self
                .seats
                .iter()
                .map(|seat| MoveLog {
                    seat: seat.seat,
                    moves: seat.log.clone(),
                })
                .collect(),
            open_boards: self.options.open_boards,
        };
        self.phase = Phase::Finished;
        self.close_at = Some(now + millis(self.shared.config.finished_room_linger_ms));
        self.changed = true;
        bump(&self.shared.metrics.races_finished);
        gauge(&self.shared.metrics.races_running, -1);
        tracing::info!("race ended");
        // The result is announced by `run` once it is stored.
        self.unsaved = Some(result);
    }

    /// Stores the race's result, then announces it with its id: nobody
    /// hears a result the database does not hold. If storing fails, the
    /// result is announced without an id (and the failure logged and
    /// counted), since the race is over either way.
    async fn save_and_announce(&mut self, mut result: RaceResult) {
        let race = NewRace {
            daily: None,
            ended_at_ms: self.shared.clock.now_ms(),
            result: result.clone(),
            players: self
                .seats
                .iter()
                .filter_map(|seat| Some((seat.seat, seat.player?)))
                .collect(),
        };
        match self
            .shared
            .database
            .call(move |store| store.record_race(&race))
            .await
        {
            Ok(race_id) => {
                tracing::info!(race_id, "race stored");
                result.race_id = Some(race_id);
            }
            Err(error) => {
                bump(&self.shared.metrics.storage_errors);
                tracing::error!(%error, "the race's result could not be stored");
            }
        }
        if let Some(race) = self.race.as_mut() {
            race.result = Some(result.clone());
        }
        self.emit(Audience::Everyone, |seq, _| ServerMessage::RaceEnded {
            seq,
            result,
        });
    }

    /// Acts on every deadline that has passed.
    fn on_time(&mut self, now: Instant) {
        if self.phase == Phase::Countdown {
            self.maybe_start(now);
        }
        let expired: Vec<usize> = (0..self.seats.len())
            .rev()
            .filter(|&index| {
                self.seats[index]
                    .grace_until
                    .is_some_and(|until| now >= until)
            })
            .collect();
        for index in expired {
            tracing::info!(
                seat = self.seats[index].seat,
                "grace period over: seat given up"
            );
            self.give_up_seat(index, PlayerStatus::Left, now);
        }
        if self.phase == Phase::Racing
            && self.race.as_ref().is_some_and(|race| now >= race.deadline)
        {
            for index in 0..self.seats.len() {
                if self.phase == Phase::Racing && self.seats[index].status == PlayerStatus::Racing {
                    self.finish(index, PlayerStatus::OutOfTime, now);
                }
            }
        }
    }
}

/// The order of the standings: winners first, by finish time; then everyone
/// by cards home (more first), then moves (fewer first); seat breaks ties.
fn standing_key(
    seat: u8,
    status: PlayerStatus,
    finished_ms: Option<u64>,
    progress: Progress,
) -> (bool, u64, std::cmp::Reverse<u16>, u32, u8) {
    let won = status == PlayerStatus::Won;
    let finish = if won {
        finished_ms.unwrap_or(u64::MAX)
    } else {
        0
    };
    (
        !won,
        finish,
        std::cmp::Reverse(progress.cards_home),
        progress.moves,
        seat,
    )
}

/// A seat given up in a race is `left`, unless its race had already ended
/// some other way (won, resigned, stuck, out of time), which it keeps.
fn left_unless_finished(current: PlayerStatus) -> PlayerStatus {
    match current {
        PlayerStatus::Waiting | PlayerStatus::Racing => PlayerStatus::Left,
        finished => finished,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks `(seat, status, finished_ms, cards_home, moves)` rows and
    /// checks the seats come out in `expected` order.
    fn check(rows: &[(u8, PlayerStatus, Option<u64>, u16, u32)], expected: &[u8]) {
        let mut rows = rows.to_vec();
        rows.sort_by_key(|&(seat, status, finished_ms, cards_home, moves)| {
            let progress = Progress {
                moves,
                cards_home,
                elapsed_ms: 0,
                ..Progress::default()
            };
            standing_key(seat, status, finished_ms, progress)
        });
        let seats: Vec<u8> = rows.iter().map(|row| row.0).collect();
        assert_eq!(seats, expected);
    }

    #[test]
    fn standings_rank_by_won_finish_time_progress_then_moves() {
        use PlayerStatus::*;
        // Winners first, the faster first, whatever their move counts.
        check(
            &[(0, Won, Some(900), 52, 40), (1, Won, Some(500), 52, 90)],
            &[1, 0],
        );
        // A winner beats more progress.
        check(
            &[(0, Resigned, Some(10), 51, 5), (1, Won, Some(999), 52, 99)],
            &[1, 0],
        );
        // Others by cards home, then fewer moves, whatever ended their race.
        check(
            &[
                (0, OutOfTime, Some(1000), 13, 50),
                (1, Stuck, Some(300), 26, 70),
                (2, Left, Some(100), 13, 20),
                (3, Resigned, Some(50), 0, 0),
            ],
            &[1, 2, 0, 3],
        );
    }

    #[test]
    fn a_finished_status_survives_leaving() {
        assert_eq!(
            left_unless_finished(PlayerStatus::Racing),
            PlayerStatus::Left
        );
        assert_eq!(
            left_unless_finished(PlayerStatus::Waiting),
            PlayerStatus::Left
        );
        assert_eq!(left_unless_finished(PlayerStatus::Won), PlayerStatus::Won);
        assert_eq!(
            left_unless_finished(PlayerStatus::Stuck),
            PlayerStatus::Stuck
        );
    }
}
