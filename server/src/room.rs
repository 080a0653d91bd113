//! A room's actor: a thin shell around its [`RoomCore`].
//!
//! The actor owns the core and the handles of the connections in the room.
//! It reads a closed set of [`Command`]s from a bounded inbox and sleeps on
//! the server's [`Clock`] until the core's next deadline; it hands each to
//! the core with the time, then carries out what the core asks: frames into
//! outboxes (never waiting), tokens into the registry, a deal from the pool,
//! the running race and its result into the database. Every decision is the
//! core's, so the rules of time (countdown, time limit, grace, linger), of
//! delivery and of durability are tested on the core, without sockets or a
//! clock.
//!
//! The writes that keep a running race ([`Output::Keep`]) are sent to the
//! database thread as they come and answered to the core in the same order
//! as they commit, while the actor goes on serving: many moves of many rooms
//! share one commit. They go as one [`Sequence`]: none commits unless every
//! one before it did. When one fails, the actor tells the core (which writes
//! the race again after a pause, see [`core`]'s "Durability"), drops the
//! answers of those after it (they fail too, unwritten) and starts a new
//! sequence. A race's result is stored the same way, off the actor's path,
//! so a store that never answers holds no actor: the core's deadlines go on
//! (it bounds every unanswered write, see [`core`]'s "Durability").
//!
//! A write of the running race is never waited for even to be queued: with
//! the database thread's queue (`database_queue` jobs) full, it fails at
//! once and the core makes it again after a pause. A race's result waits
//! for room in that queue off the actor's path. What the actor itself
//! still waits for is the last keeping of a race at shutdown, which the
//! shutdown grace bounds.

/// The room core, its own crate (no I/O, held by the compiler), named here
/// as the room's `core` as it always was.
pub use patience_room_core as core;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures::StreamExt as _;
use futures::future::BoxFuture;
use futures::stream::FuturesOrdered;
use patience_shared::game::GameKind;
use patience_shared::protocol::{BotLevel, PlayerStatus, RoomOptions};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use self::core::{
    ConnId, Input, Keep, Output, RestoreError, RoomCore, RoomParams, Settings, Stored,
};
use crate::clock::Clock;
use crate::cluster::Cluster;
use crate::database::{Database, Sequence};
use crate::deal_pool::DealPool;
use crate::metrics::{Metrics, bump, gauge};
use crate::outbox::{ConnectionHandle, SendFailure};
use crate::ratings;
use crate::registry::Registry;
use crate::room_handle::{
    Command, INBOX_CAPACITY, ListedRoom, OpenRematch, Refusal, RematchPlan, RoomHandle, RoomSummary,
};
use crate::secrets::fresh_seed;
use crate::store::{LiveRace, NewRace};

/// Writes of one room not yet committed (sent and not answered, or waiting
/// to be made again after a failure) past which the actor reads no more
/// commands until some commit (the database's batch is as large): a room
/// whose database is slow or out stops reading commands instead of
/// queueing without bound. Its inbox fills, then its connections wait to
/// hand it their messages.
const MAX_UNKEPT_WRITES: u64 = crate::database::MAX_BATCH as u64;

/// A write on its way to the database: what became of it.
type Writing = FuturesOrdered<BoxFuture<'static, Stored>>;

/// A race's result on its way to the database: its id once stored.
type StoringResult = FuturesOrdered<BoxFuture<'static, Option<u64>>>;

/// The parts of the server a room uses, and nothing else.
#[derive(Clone, Debug)]
pub struct RoomContext {
    /// Where the room and its resume tokens are found.
    pub registry: Arc<Registry>,
    /// Proved deals.
    pub pool: DealPool,
    /// Where finished races are stored.
    pub database: Database,
    /// Counters.
    pub metrics: Arc<Metrics>,
    /// The server's clock.
    pub clock: Clock,
    /// Cancelled when the server stops.
    pub shutdown: CancellationToken,
    /// Tasks to wait for at shutdown.
    pub tracker: TaskTracker,
    /// The cluster this node is in, if any: the room's tokens and its
    /// closing go there, through a queue (never waited for).
    pub cluster: Option<Cluster>,
    /// Timings and bounds.
    pub settings: Settings,
    /// Where a finished room asks for its rematch's room
    /// ([`crate::rematch`] opens it).
    pub rematches: mpsc::Sender<OpenRematch>,
}

/// Claims the race kept under `code` in the store, which fences off the
/// writes of any server that ran it until now (`Store::claim_live_race`),
/// and runs it again here, under its old code: at a start, or taking it
/// over from a node that is gone.
pub async fn claim_and_restore(
    context: &RoomContext,
    code: &str,
) -> Result<Restored, RestoreError> {
    let claiming = code.to_string();
    let claimed = context
        .database
        .call(move |store| store.claim_live_race(&claiming))
        .await;
    let failed = |reason: String| RestoreError {
        code: code.to_string(),
        reason,
    };
    match claimed {
        Ok(Some(race)) => restore(context, race),
        Ok(None) => Err(failed("it is kept no more".to_string())),
        Err(error) => Err(failed(format!("it could not be claimed: {error}"))),
    }
}

/// A race run again: its room, and the seats of the server's bots still
/// racing in it, which nobody plays until the server seats bots there
/// again (`bots::reseat_bots`).
#[derive(Debug)]
pub struct Restored {
    /// The room.
    pub room: RoomHandle,
    /// Each bot's seat and level.
    pub bots: Vec<(u8, BotLevel)>,
}

/// Runs again a race as the store kept it, under its old code.
fn restore(context: &RoomContext, saved: LiveRace) -> Result<Restored, RestoreError> {
    let bots = saved
        .seats
        .iter()
        .filter(|seat| seat.status == PlayerStatus::Racing)
        .filter_map(|seat| Some((seat.seat, seat.bot?)))
        .collect();
    let (inbox, commands) = mpsc::channel(INBOX_CAPACITY);
    let summary = Arc::new(RoomSummary::new(
        saved.game,
        saved.public,
        saved.max_players,
    ));
    let code: Arc<str> = Arc::from(saved.code.as_str());
    let core = RoomCore::restore(
        saved,
        context.settings,
        context.metrics.clone(),
        fresh_seed(),
        context.clock.now_ms(),
    )?;
    let handle = RoomHandle {
        code: Arc::clone(&code),
        commands: inbox.clone(),
        summary: Arc::clone(&summary),
    };
    if !context.registry.insert(handle.clone()) {
        return Err(RestoreError {
            code: code.to_string(),
            reason: "a room with that code is open".to_string(),
        });
    }
    spawn(context, core, &handle, commands);
    Ok(Restored { room: handle, bots })
}

/// Opens a room under a fresh code, registers it, and starts its actor.
pub fn create(
    context: &RoomContext,
    game: GameKind,
    max_players: u8,
    public: bool,
    quick: bool,
    options: RoomOptions,
) -> RoomHandle {
    let (inbox, commands) = mpsc::channel(INBOX_CAPACITY);
    let summary = Arc::new(RoomSummary::new(game, public, max_players));
    let handle = context.registry.insert_new(|code| RoomHandle {
        code,
        commands: inbox.clone(),
        summary: Arc::clone(&summary),
    });
    start_new(context, handle.clone(), commands, quick, options);
    handle
}

/// Opens a room under `code` (one the cluster gave this node), registers
/// it, and starts its actor; `None` if a room here has that code.
pub fn create_with_code(
    context: &RoomContext,
    code: Arc<str>,
    game: GameKind,
    max_players: u8,
    public: bool,
    quick: bool,
    options: RoomOptions,
) -> Option<RoomHandle> {
    let (inbox, commands) = mpsc::channel(INBOX_CAPACITY);
    let summary = Arc::new(RoomSummary::new(game, public, max_players));
    let handle = RoomHandle {
        code,
        commands: inbox,
        summary,
    };
    if !context.registry.insert(handle.clone()) {
        return None;
    }
    start_new(context, handle.clone(), commands, quick, options);
    Some(handle)
}

/// Opens a rematch's room under `code` (a fresh one here, or one the
/// cluster gave this node) with the seats of `plan` taken, registers it,
/// and starts its actor; `None` if a room here has that code.
pub fn create_rematch(
    context: &RoomContext,
    code: Option<Arc<str>>,
    plan: RematchPlan,
) -> Option<RoomHandle> {
    let max_players = u8::try_from(plan.seats.len()).unwrap_or(u8::MAX);
    let (inbox, commands) = mpsc::channel(INBOX_CAPACITY);
    let summary = Arc::new(RoomSummary::new(plan.game, false, max_players));
    let make = |code: Arc<str>| RoomHandle {
        code,
        commands: inbox.clone(),
        summary: Arc::clone(&summary),
    };
    let handle = match code {
        None => context.registry.insert_new(make),
        Some(code) => {
            let handle = make(code);
            if !context.registry.insert(handle.clone()) {
                return None;
            }
            handle
        }
    };
    let params = RoomParams {
        code: Arc::clone(&handle.code),
        game: plan.game,
        max_players,
        public: false,
        quick: false,
        options: plan.options,
        series: plan.series,
    };
    let core = RoomCore::for_rematch(
        params,
        plan.seats,
        context.settings,
        context.metrics.clone(),
        fresh_seed(),
        context.clock.now_ms(),
    );
    spawn(context, core, &handle, commands);
    Some(handle)
}

fn start_new(
    context: &RoomContext,
    handle: RoomHandle,
    commands: mpsc::Receiver<Command>,
    quick: bool,
    options: RoomOptions,
) {
    let (game, max_players, public) = (
        handle.summary.game,
        handle.summary.max_players,
        handle.summary.public,
    );
    let params = RoomParams {
        code: Arc::clone(&handle.code),
        game,
        max_players,
        public,
        quick,
        options,
        series: None,
    };
    let core = RoomCore::new(
        params,
        context.settings,
        context.metrics.clone(),
        fresh_seed(),
        context.clock.now_ms(),
    );
    spawn(context, core, &handle, commands);
}

fn spawn(
    context: &RoomContext,
    core: RoomCore,
    handle: &RoomHandle,
    commands: mpsc::Receiver<Command>,
) {
    let game = handle.summary.game;
    let actor = Actor {
        context: context.clone(),
        core,
        code: Arc::clone(&handle.code),
        game,
        summary: Arc::clone(&handle.summary),
        inbox: handle.commands.clone(),
        connections: HashMap::new(),
        writing: FuturesOrdered::new(),
        storing: FuturesOrdered::new(),
        sequence: Sequence::new(),
    };
    gauge(&context.metrics.rooms, 1);
    let span = tracing::info_span!("room", code = %handle.code, %game);
    tracing::info!(parent: &span, phase = ?actor.core.phase(), "room opened");
    context.tracker.spawn(actor.run(commands).instrument(span));
}

struct Actor {
    context: RoomContext,
    core: RoomCore,
    code: Arc<str>,
    game: GameKind,
    summary: Arc<RoomSummary>,
    /// For the deal pool's answer.
    inbox: mpsc::Sender<Command>,
    /// The room's connections, by id: the core names them, the shell holds them.
    connections: HashMap<ConnId, ConnectionHandle>,
    /// Writes sent and not yet answered, oldest first.
    writing: Writing,
    /// The race's result, sent and not yet answered.
    storing: StoringResult,
    /// The ordered sequence the room's writes go in.
    sequence: Sequence,
}

impl Actor {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let shutdown = self.context.shutdown.clone();
        let clock = self.context.clock.clone();
        // A restored race has its tokens to register before anything else.
        self.carry_out();
        while !self.core.is_closed() {
            let deadline = self.core.poll_timeout();
            tokio::select! {
                // Commands before the timer: a move stamped before a
                // deadline is judged before it (the core orders by time).
                biased;
                _ = shutdown.cancelled() => {
                    self.keep_for_restart().await;
                    self.core.close_for_shutdown();
                }
                // Commits before commands: what waited for them goes out.
                Some(stored) = self.writing.next(), if !self.writing.is_empty() => {
                    self.answer_write(stored);
                }
                Some(race_id) = self.storing.next(), if !self.storing.is_empty() => {
                    let now = self.now();
                    self.feed(now, Input::RaceStored { race_id });
                }
                command = commands.recv(), if self.core.unkept_writes() < MAX_UNKEPT_WRITES => {
                    match command {
                        Some(command) => self.handle(command),
                        None => self.core.close_for_shutdown(),
                    }
                }
                () = clock.sleep_until(deadline.unwrap_or(0)), if deadline.is_some() => {
                    self.core.on_timeout(clock.now_ms());
                }
            }
            self.carry_out();
        }
        self.context.registry.remove(&self.code);
        // At shutdown the lease is kept until the cluster leaves, all at
        // once, after every room has kept its race.
        if let Some(cluster) = &self.context.cluster
            && !self.context.shutdown.is_cancelled()
        {
            cluster.release(&self.code);
        }
        gauge(&self.context.metrics.rooms, -1);
    }

    /// At shutdown: waits for the writes on their way, then keeps the
    /// running race once more with its clock as it stands, so that the
    /// server that starts next on this database runs it on ([`restore`])
    /// without charging anyone the time it was down.
    async fn keep_for_restart(&mut self) {
        while self.writing.next().await.is_some() {}
        while self.storing.next().await.is_some() {}
        let Some(saved) = self.core.live_race() else {
            return;
        };
        match self
            .context
            .database
            .call(move |store| store.save_live_race(&saved))
            .await
        {
            Ok(()) => tracing::info!("running race kept for the next start"),
            Err(error) => {
                bump(&self.context.metrics.storage_errors);
                tracing::error!(%error, "the running race could not be kept");
            }
        }
    }

    /// Queues a write on the database thread, in the room's sequence; its
    /// answer comes back through `writing`, in order. It never waits: with
    /// the database's queue full, the write fails at once
    /// ([`StoreError::QueueFull`](crate::store::StoreError::QueueFull)) and
    /// the core makes it again after a pause, as after any failed write, so
    /// the room keeps its deadlines (and its bound on the store) whatever
    /// the database does.
    fn send_write(&mut self, write: Keep) {
        let metrics = Arc::clone(&self.context.metrics);
        let database = self.context.database.clone();
        let code = Arc::clone(&self.code);
        // Queued now, so that the room's writes commit in the order the
        // core made them (a token kept twice keeps the later one), and in
        // its sequence, so that none commits after one before it failed.
        let written =
            self.context
                .database
                .queue_in_now(&self.sequence, move |store| match write {
                    Keep::Race(race) => store.save_live_race(&race),
                    Keep::Move(kept) => store.record_live_move(&code, &kept),
                });
        self.writing.push_back(Box::pin(async move {
            match written.await {
                Ok(()) => Stored::Committed,
                Err(error) => {
                    bump(&metrics.storage_errors);
                    // A database thread that stopped for good answers
                    // every call `Closed`, as one reconnecting does: only
                    // the second is worth waiting for.
                    let may_come_back = database.is_up() || database.is_reconnecting();
                    if error.is_transient() && may_come_back {
                        tracing::warn!(%error, "a write of the running race failed; it is made again");
                        Stored::Failed
                    } else {
                        tracing::error!(%error, "a write of the running race was refused");
                        Stored::Refused
                    }
                }
            }
        }));
    }

    /// Hands the core the answer to its oldest write. A write that did not
    /// commit broke the room's sequence: the writes after it fail unwritten,
    /// so their answers are dropped, and the core's next writes go in a new
    /// sequence.
    fn answer_write(&mut self, stored: Stored) {
        let now = self.now();
        self.feed(now, Input::Kept { stored });
        if stored != Stored::Committed {
            self.writing = FuturesOrdered::new();
            self.sequence = Sequence::new();
        }
    }

    fn now(&self) -> u64 {
        self.context.clock.now_ms()
    }

    fn handle(&mut self, command: Command) {
        let now = self.now();
        match command {
            Command::Join {
                conn,
                name,
                player,
                bot,
                reply,
            } => {
                let input = Input::Join {
                    conn: conn.id,
                    name,
                    player,
                    bot,
                };
                self.enter(now, conn, input, reply);
            }
            Command::Spectate { conn, reply } => {
                let input = Input::Spectate { conn: conn.id };
                self.enter(now, conn, input, reply);
            }
            Command::Resume {
                conn,
                token,
                last_seq,
                reply,
            } => {
                let input = Input::Resume {
                    conn: conn.id,
                    token,
                    last_seq,
                };
                self.enter(now, conn, input, reply);
            }
            Command::ResumeBot { conn, seat, reply } => {
                let input = Input::ResumeBot {
                    conn: conn.id,
                    seat,
                };
                self.enter(now, conn, input, reply);
            }
            Command::Leave { conn_id } => self.feed(now, Input::Leave { conn: conn_id }),
            Command::StartEarly { conn_id } => {
                self.feed(now, Input::StartEarly { conn: conn_id });
            }
            Command::Move {
                conn_id,
                text,
                seat,
                received,
                received_ms,
            } => {
                // A move is judged at the time it was read, not handled.
                let input = Input::Move {
                    conn: conn_id,
                    text,
                    seat,
                };
                self.feed(received_ms, input);
                self.context
                    .metrics
                    .move_handling
                    .observe(received.elapsed());
            }
            Command::Undo { conn_id } => self.feed(now, Input::Undo { conn: conn_id }),
            Command::Resign { conn_id } => self.feed(now, Input::Resign { conn: conn_id }),
            Command::Disconnected { conn_id } => {
                self.feed(now, Input::Disconnected { conn: conn_id });
            }
            Command::DealReady { seed } => self.feed(now, Input::DealReady { seed }),
            Command::Rematch { conn_id, accept } => self.feed(
                now,
                Input::Rematch {
                    conn: conn_id,
                    accept,
                },
            ),
            Command::RematchOpened { code } => self.feed(now, Input::RematchOpened { code }),
            Command::LeaseLost => {
                // Closed without a reason, the clients reconnect and
                // resume, which sends them to the new owner; a reason
                // (`shutting_down`) would end their sessions instead.
                for connection in self.connections.values() {
                    connection.close_quietly();
                }
                self.core.close_for_shutdown();
            }
        }
    }

    /// Joining, watching or resuming: the core sees the connection's id,
    /// the shell keeps its handle if it got in, and the connection hears
    /// the answer (unless it stopped waiting, and then nothing happens).
    fn enter(
        &mut self,
        now: u64,
        conn: ConnectionHandle,
        input: Input,
        reply: oneshot::Sender<Result<(), Refusal>>,
    ) {
        if reply.is_closed() {
            return;
        }
        let id = conn.id;
        let fresh = self.connections.insert(id, conn).is_none();
        let answer = self.core.handle(now, input);
        if answer.is_err() && fresh {
            self.connections.remove(&id);
        }
        // The join's frames (`room_joined`, the snapshot) are queued before
        // it is answered, so that whatever the connection sends once it
        // hears the answer follows them.
        self.carry_out();
        let _ = reply.send(answer);
    }

    fn feed(&mut self, now: u64, input: Input) {
        // Only joining can be refused; everything else answers with frames.
        let _ = self.core.handle(now, input);
    }

    /// Does what the core asks, in its order, until it asks nothing more.
    fn carry_out(&mut self) {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::Send { conn, frame } => self.send(conn, frame),
                Output::CatchUp { conn, frame } => self.catch_up(conn, frame),
                Output::FellBehind { .. } => bump(&self.context.metrics.spectators_coalesced),
                Output::Replay {
                    conn,
                    missed,
                    snapshot,
                } => self.replay(conn, missed, snapshot),
                Output::Kick {
                    conn,
                    code,
                    message,
                } => {
                    if let Some(handle) = self.connections.get(&conn) {
                        handle.kick(code, message);
                    }
                }
                Output::Detach { conn } => {
                    self.connections.remove(&conn);
                }
                Output::TokenIssued(hash) => {
                    self.context
                        .registry
                        .insert_token(hash, Arc::clone(&self.code));
                    if let Some(cluster) = &self.context.cluster {
                        cluster.remember_token(hash, Arc::clone(&self.code));
                    }
                }
                Output::TokenRevoked(hash) => {
                    self.context.registry.remove_token(&hash);
                    // A room closing at shutdown, or whose lease another
                    // node took, leaves the pointer: the node that runs
                    // the race next sets it again, and must not find it
                    // deleted after it did.
                    if let Some(cluster) = &self.context.cluster
                        && !self.context.shutdown.is_cancelled()
                        && cluster.holds(&self.code)
                    {
                        cluster.forget_token(hash);
                    }
                }
                Output::NeedDeal => self.fetch_deal(),
                Output::Keep(write) => self.send_write(write),
                Output::StoreRace(race) => self.store_result(race),
                Output::Summary {
                    phase,
                    players,
                    listing,
                    seat_players,
                } => {
                    self.summary.set(phase, players);
                    self.summary
                        .set_listing(listing.map(|room| ListedRoom { room, seat_players }));
                }
                Output::OpenRematch(plan) => self.open_rematch(plan),
            }
        }
    }

    /// Stores the race's result on the database thread; its answer comes
    /// back through `storing`, and the actor goes on serving meanwhile,
    /// even while it waits for room in the database's queue (the core
    /// bounds the wait). It follows every write of the room: the core asks
    /// for it only once they have committed.
    fn store_result(&mut self, race: Box<NewRace>) {
        let code = Arc::clone(&self.code);
        let epoch = self.core.epoch();
        let rated = self.core.is_rated();
        let metrics = Arc::clone(&self.context.metrics);
        let database = self.context.database.clone();
        self.storing.push_back(Box::pin(async move {
            let stored = database
                .call(move |store| {
                    let race_id = store.record_race(&race)?;
                    // In the same job: the race and its rating changes
                    // commit together, once.
                    if rated {
                        ratings::apply(store, race_id, &race)?;
                    }
                    store.end_live_race(&code, epoch)?;
                    Ok(race_id)
                })
                .await;
            match stored {
                Ok(race_id) => {
                    tracing::info!(race_id, "race stored");
                    Some(race_id)
                }
                Err(error) => {
                    bump(&metrics.storage_errors);
                    tracing::error!(%error, "the race's result could not be stored");
                    None
                }
            }
        }));
    }

    fn send(&mut self, conn: ConnId, frame: Bytes) {
        let Some(handle) = self.connections.get(&conn) else {
            return;
        };
        let now = self.now();
        match handle.send(frame) {
            Ok(()) => {}
            Err(SendFailure::Full) => {
                bump(&self.context.metrics.send_queue_drops);
                self.feed(now, Input::Overflow { conn });
            }
            Err(SendFailure::Closed) => self.feed(now, Input::Disconnected { conn }),
        }
    }

    /// A resumed player's missed events if they all fit its outbox now (in
    /// frames and in bytes, with room to spare); otherwise one snapshot.
    fn replay(&mut self, conn: ConnId, missed: Vec<Bytes>, snapshot: Bytes) {
        let Some(handle) = self.connections.get(&conn) else {
            return;
        };
        let bytes = missed.iter().map(Bytes::len).sum();
        if !handle.has_room_for(missed.len(), bytes) {
            return self.send(conn, snapshot);
        }
        for frame in missed {
            self.send(conn, frame);
        }
    }

    /// A spectator that was behind gets its snapshot once its outbox is at
    /// least half empty; until then it skips events.
    fn catch_up(&mut self, conn: ConnId, frame: Bytes) {
        let Some(handle) = self.connections.get(&conn) else {
            return;
        };
        if !handle.has_room_to_catch_up() {
            return;
        }
        let now = self.now();
        match handle.send(frame) {
            Ok(()) => self.feed(now, Input::CaughtUp { conn }),
            Err(SendFailure::Full) => {}
            Err(SendFailure::Closed) => self.feed(now, Input::Disconnected { conn }),
        }
    }

    /// Asks the server to open the rematch's room, never waiting: with its
    /// queue full, the rematch could not open, and the room says so.
    fn open_rematch(&mut self, plan: Box<RematchPlan>) {
        let request = OpenRematch {
            plan,
            reply: self.inbox.clone(),
        };
        if self.context.rematches.try_send(request).is_err() {
            tracing::warn!("the rematch's room could not be asked for");
            let now = self.now();
            self.feed(now, Input::RematchOpened { code: None });
        }
    }

    /// Takes a proved deal if one is ready; otherwise waits for the pool
    /// off the actor, which keeps serving.
    fn fetch_deal(&mut self) {
        let asked = Instant::now();
        if let Some(seed) = self.context.pool.try_take(self.game) {
            self.context.metrics.deal_handout.observe(asked.elapsed());
            let now = self.now();
            return self.feed(now, Input::DealReady { seed });
        }
        tracing::warn!("no proved deal ready: the race waits for the solver");
        bump(&self.context.metrics.deal_waits);
        let pool = self.context.pool.clone();
        let inbox = self.inbox.clone();
        let game = self.game;
        let metrics = Arc::clone(&self.context.metrics);
        self.context.tracker.spawn(async move {
            if let Some(seed) = pool.take(game).await {
                metrics.deal_handout.observe(asked.elapsed());
                let _ = inbox.send(Command::DealReady { seed }).await;
            }
        });
    }
}
