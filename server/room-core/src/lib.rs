//! The room as a state machine: no I/O, no clock, no OS randomness. Its
//! own crate, so that the compiler holds that: it depends on the rules
//! (`patience-shared`) and on pure crates only, never on tokio, a socket
//! or a database.
//!
//! Everything a room does is a function of its inputs: [`RoomCore::handle`]
//! takes a command and the time it happened, [`RoomCore::on_timeout`] the
//! time a deadline was reached, and both leave [`Output`]s to collect with
//! [`RoomCore::poll_output`] (frames for connections, tokens for the
//! registry, a result to store, a deal to fetch). [`RoomCore::poll_timeout`]
//! says when the core next needs waking. The room's actor in the server
//! (`patience_server::room`) is a thin shell that feeds it and carries its
//! outputs out; the unit tests (`tests.rs`) drive it on a virtual clock.
//!
//! Layout: this file holds the inputs, the outputs and the room's public
//! face; each subsystem has its own file, as methods of [`RoomCore`]:
//! `keeping.rs` (outputs held behind the store's writes, a failed write
//! made again), `sending.rs` (numbered events, snapshots, refusals),
//! `connections.rs` (seats, spectators, resumes), `race.rs` (the
//! countdown, moves, each seat's end, the result, the deadlines). The
//! daily attempt is a room of one seat with its own store calls and
//! messages, [`daily::DailyCore`], judged by the same [`judge`] on the
//! same clock. The records a store keeps are in [`records`], the secrets' hash in
//! [`secrets`], what a room counts in [`metrics`], which races and racers
//! count for ratings in [`rated`]. The fuzzing harness
//! (`fuzzing`) is compiled only with the `fuzzing` feature.
//!
//! Time is in milliseconds of the server's clock.
//! The core's time never goes back, and every deadline takes effect at its
//! own time, before any input stamped later: a move read after the time
//! limit is refused, whichever of the move and the timer the actor sees
//! first.
//!
//! Every event goes out as one encoded frame, shared by all its recipients,
//! and numbered (`seq`). Events meant for players are kept in a bounded log
//! so that a player who reconnects gets what it missed; older gaps get a
//! snapshot instead. Nobody is waited for: a player whose outbox overflows
//! is disconnected (and may resume), a spectator's is coalesced (it skips
//! events, then gets one snapshot). What leaves the room is built from
//! [`View`]s only: the positions (`AnyGame`) and the seed stay here until
//! the race is over.
//!
//! Everyone but a mover (its rivals and the spectators) is told its
//! progress on the room's tick ([`Settings::progress_tick_ms`], counted
//! from the race's start on the core's clock): at the end of the tick in
//! which it moved, one `progress` per racer with its latest counts, encoded
//! once for all of them, and always before any event meant for everyone. A
//! mover's `move_accepted` goes out at once.
//!
//! Fair play: every racer plays the same deal, so a card face up on one
//! board may be face down on another. Until the race ends a racer's board
//! and move texts go to that racer alone; everyone else gets its progress
//! as counts ([`Progress`]), unless the room was created with
//! `open_boards`. Snapshots are therefore built for one recipient.
//!
//! Durability: a running race is kept in the store as it goes
//! ([`Output::Keep`]): its room when it starts and whenever a seat's token
//! or status changes, every accepted move before its player is told. Until
//! the store answers [`Input::Kept`] for a write, every output that comes
//! after it is held back, in order (writes themselves go out at once, so
//! the database commits them together). So nothing is told that a crash
//! could take back, and a race rebuilt from the store
//! ([`RoomCore::restore`]) has every move any player heard acknowledged.
//!
//! A store outage: a write that fails ([`Stored::Failed`]: the database
//! was out of reach or failed for a moment) takes every write after it
//! with it (the shell writes a room's writes as one ordered sequence, so
//! none commits without the ones before). The room goes on holding back
//! everything after the failed write and writes the race again, whole
//! (one [`Keep::Race`] of the room as it then stands, which covers every
//! write lost), after a pause that doubles with each failure from
//! [`RETRY_PAUSE_MIN_MS`] up to [`RETRY_PAUSE_MAX_MS`]; while it waits,
//! new writes are not sent, since that one carries them. Once a write
//! commits, what was held goes out, in order. While the room waits for the
//! store its race clock stands still (the wait is charged to no one, as the
//! time a server is down is not), and a room that has waited
//! [`Settings::store_outage_ms`] closes as if the write had been refused
//! ([`Stored::Refused`], e.g. another server claimed the race): its
//! players are told why and the race resumes from what was kept when a
//! server runs it again.
//!
//! A write the store never answers (a disk that hangs rather than fails)
//! is bounded the same way: a room whose oldest write sent has gone
//! unanswered for [`Settings::store_outage_ms`] (at least
//! [`UNANSWERED_WRITE_MIN_MS`]) closes as one whose store failed that
//! long. Until then an unanswered write is only slow: the race clock runs.
//! A race's result ([`Output::StoreRace`]) the store does not answer for
//! as long is announced as one that could not be stored (no `race_id`),
//! as a result whose write failed is.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, BotLevel, ErrorCode, LobbyRoom, MoveLog, Phase, PlayerInfo, PlayerStatus, Progress,
    RaceResult, RaceSnapshot, Reveal, RoomInfo, RoomOptions, SeatBoard, SeriesScore, ServerMessage,
    Standing, UNDO_TEXT,
};
use patience_shared::replay::LogReplay;
use patience_shared::rules::{Effect, MoveError, MoveStack, Rules, View};
use rand::SeedableRng as _;
use rand::rngs::StdRng;

use crate::metrics::{Counter, Gauge, RoomMetrics};
use crate::records::{LiveMove, LiveRace, LiveSeat, NewRace, PlayerId, RematchSeat};
use crate::secrets::{TokenHash, secret_from, token_hash};
use move_texts::MoveTexts;
use rematch::Vote;

/// Why a room refused a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// For programs.
    pub code: ErrorCode,
    /// For people.
    pub message: String,
}

impl Refusal {
    /// A refusal.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
        }
    }
}

/// Why a kept race could not run again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the race of room {code} cannot be rebuilt: {reason}")]
pub struct RestoreError {
    /// The room.
    pub code: String,
    /// What did not replay.
    pub reason: String,
}

/// The progress tick a server uses unless configured otherwise
/// ([`Settings::progress_tick_ms`]): ten times a second, faster than a
/// person reads a rival's counts.
pub const DEFAULT_PROGRESS_TICK_MS: Millis = 100;

/// A connection, by its server-wide id.
pub type ConnId = u64;

/// Events a running race may number without writing to the store: past
/// this many since its last write, the room is kept again. A race rebuilt
/// from the store numbers on from twice this past the last number kept,
/// beyond any event a client can have been sent (every frame sent waited
/// for the writes before it).
pub const SEQ_CHECKPOINT: u64 = 1_000;

/// Milliseconds on the server's clock.
pub type Millis = u64;

/// The timings and bounds a room follows (from the server's configuration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// From a full room (or an early start) to the race.
    pub countdown_ms: u64,
    /// How long a dropped player's seat waits for it to resume.
    pub grace_ms: u64,
    /// How long a finished room stays open for its results.
    pub linger_ms: u64,
    /// The race's time limit when the room does not set one.
    pub default_time_limit_ms: u64,
    /// Events kept for players who resume.
    pub event_log_capacity: usize,
    /// The most bytes those events may take: a room's memory is bounded
    /// in bytes, however large its frames (a `move_accepted` carries its
    /// player's board).
    pub event_log_bytes: usize,
    /// How long a running race waits for a store whose writes fail before
    /// its room closes (0: at the first failure).
    pub store_outage_ms: u64,
    /// How often a racer's rivals and the spectators are told its progress
    /// (at least 1): its moves within one tick of the room's race (ticks
    /// counted from the race's start) go out at the tick's end as one
    /// `progress` with its latest counts, and every racer who moved within
    /// it goes out together. So a room costs each of its connections at
    /// most one wake-up and one write of progress per tick, however many
    /// moves its racers make, and rooms started at different times tick at
    /// different times. The mover's own `move_accepted` never waits.
    pub progress_tick_ms: Millis,
}

/// The shortest time a room waits for the answer to a write before it
/// closes ([`Settings::store_outage_ms`] when that is longer): with a
/// `store_outage_ms` of 0 (close at the first failure) a write that is
/// merely slow must not close the room.
pub const UNANSWERED_WRITE_MIN_MS: Millis = 5_000;

/// The pause before a failed write is made again the first time; it
/// doubles with each failure in a row, up to [`RETRY_PAUSE_MAX_MS`].
pub const RETRY_PAUSE_MIN_MS: Millis = 100;

/// How long a finished room whose rematch every racer accepted stays open
/// for the new room's code, past its linger.
pub const REMATCH_OPEN_MS: Millis = 10_000;

/// The longest pause between two attempts to write a running race again:
/// as long as the database thread's longest pause between reconnections,
/// so a store that is back is found within it.
pub const RETRY_PAUSE_MAX_MS: Millis = 2_000;

/// What a room is, fixed when it opens.
#[derive(Clone, Debug)]
pub struct RoomParams {
    /// Its code.
    pub code: Arc<str>,
    /// The game raced.
    pub game: GameKind,
    /// Seats.
    pub max_players: u8,
    /// Open to quick race.
    pub public: bool,
    /// Opened by quick race: it starts with two players.
    pub quick: bool,
    /// The owner's choices.
    pub options: RoomOptions,
    /// The series score before this room's race: a rematch's, carried on;
    /// `None` starts one from [`RoomOptions::best_of`] (if above 1).
    pub series: Option<SeriesScore>,
}

/// Something that happened to the room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A connection asks for a seat.
    Join {
        /// The connection.
        conn: ConnId,
        /// Its display name.
        name: String,
        /// The registered player, if it is one.
        player: Option<PlayerId>,
        /// A bot the server runs, at this level: the seat is marked as a
        /// bot in every message and in the stored result.
        bot: Option<BotLevel>,
    },
    /// A connection asks to watch.
    Spectate {
        /// The connection.
        conn: ConnId,
    },
    /// A connection takes back a seat with its resume token.
    Resume {
        /// The new connection.
        conn: ConnId,
        /// The token's hash.
        token: TokenHash,
        /// The last event the client saw.
        last_seq: u64,
    },
    /// The server's bot takes back its seat in a race run again after a
    /// restart or a failover: a bot keeps no token (the store keeps only a
    /// token's hash), so the server names the seat. Only the server sends
    /// it; no client message becomes it.
    ResumeBot {
        /// The bot's new connection.
        conn: ConnId,
        /// The seat, which must be a bot's.
        seat: u8,
    },
    /// A connection leaves the room.
    Leave {
        /// Who.
        conn: ConnId,
    },
    /// The owner starts the countdown now.
    StartEarly {
        /// Who.
        conn: ConnId,
    },
    /// A move in notation.
    Move {
        /// Who.
        conn: ConnId,
        /// The notation.
        text: String,
        /// The board the client named, if any.
        seat: Option<u8>,
    },
    /// Take back the last move.
    Undo {
        /// Who.
        conn: ConnId,
    },
    /// Give up.
    Resign {
        /// Who.
        conn: ConnId,
    },
    /// A connection closed.
    Disconnected {
        /// Which.
        conn: ConnId,
    },
    /// A connection's outbox had no room for a frame.
    Overflow {
        /// Which.
        conn: ConnId,
    },
    /// A spectator that was behind took its catch-up snapshot.
    CaughtUp {
        /// Which.
        conn: ConnId,
    },
    /// The deal pool has a proved seed for this room.
    DealReady {
        /// The seed.
        seed: u64,
    },
    /// The race's result is stored (`race_id`), or could not be (`None`).
    RaceStored {
        /// Its id in the store.
        race_id: Option<u64>,
    },
    /// The store's answer to the oldest [`Output::Keep`] not yet answered.
    Kept {
        /// Committed, failed (with every write after it), or refused.
        stored: Stored,
    },
    /// After the race: a connection's answer to a rematch.
    Rematch {
        /// Who.
        conn: ConnId,
        /// Accepts (or proposes) or declines.
        accept: bool,
    },
    /// The rematch's room is open ([`Output::OpenRematch`]), under this
    /// code, or could not open (`None`).
    RematchOpened {
        /// The new room's code.
        code: Option<Arc<str>>,
    },
}

/// What became of a write of the running race ([`Input::Kept`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// It is committed.
    Committed,
    /// It failed and may succeed if made again (the database was out of
    /// reach, or failed for a moment). Every write sent after it failed
    /// too, or will without being written: the shell answers no more of
    /// them. The room writes the race again after a pause.
    Failed,
    /// It was refused for good (another server claimed the race): the
    /// room closes, since it cannot tell anyone what it cannot keep.
    Refused,
}

/// Something the room needs done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Queue `frame` for `conn` without waiting; report [`Input::Overflow`]
    /// if its outbox is full and [`Input::Disconnected`] if it is closed.
    Send {
        /// The recipient.
        conn: ConnId,
        /// An encoded [`ServerMessage`].
        frame: Bytes,
    },
    /// A spectator that is behind: queue this snapshot only if its outbox
    /// has room to spare, then report [`Input::CaughtUp`].
    CatchUp {
        /// The spectator.
        conn: ConnId,
        /// An encoded snapshot.
        frame: Bytes,
    },
    /// A resumed player's missed events: queue them all if they fit its
    /// outbox now, otherwise `snapshot` instead (a failure reported as for
    /// [`Output::Send`]).
    Replay {
        /// The player's new connection.
        conn: ConnId,
        /// The events it missed, in order.
        missed: Vec<Bytes>,
        /// The room as that player may see it now.
        snapshot: Bytes,
    },
    /// A spectator fell behind: it skips events from now until its
    /// catch-up snapshot (counted in the metrics).
    FellBehind {
        /// The spectator.
        conn: ConnId,
    },
    /// Close the connection, telling it why.
    Kick {
        /// The connection.
        conn: ConnId,
        /// For programs.
        code: ErrorCode,
        /// For people.
        message: String,
    },
    /// The room no longer needs this connection's handle.
    Detach {
        /// The connection.
        conn: ConnId,
    },
    /// A resume token now opens a seat here.
    TokenIssued(TokenHash),
    /// A resume token opens nothing any more.
    TokenRevoked(TokenHash),
    /// No proved deal was at hand: fetch one and answer [`Input::DealReady`].
    NeedDeal,
    /// Store the finished race (and forget it as a running one, in the same
    /// transaction) and answer [`Input::RaceStored`]; without an answer
    /// within the bound on unanswered writes, the core announces the end
    /// without a `race_id`.
    StoreRace(Box<NewRace>),
    /// Keep this in the store, in order after the writes before it (and
    /// never committed unless they are), and answer [`Input::Kept`].
    Keep(Keep),
    /// The room's phase and seats taken, for quick race.
    Summary {
        /// The phase.
        phase: Phase,
        /// Seats taken.
        players: u8,
        /// The room as the lobby lists it: public rooms only.
        listing: Option<LobbyRoom>,
        /// The registered player of each seat of the listing, in its
        /// `players`' order (`None` for a guest or a bot), so that the
        /// lobby can show their ratings.
        seat_players: Vec<Option<PlayerId>>,
    },
    /// Every racer accepted a rematch: open its room, with these seats
    /// taken, and answer [`Input::RematchOpened`].
    OpenRematch(Box<records::RematchPlan>),
}

/// A write that keeps a running race, so that it survives the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The room as it stands (the store's `save_live_race`).
    Race(Box<LiveRace>),
    /// One accepted move (the store's `record_live_move`).
    Move(LiveMove),
}

/// A write sent to the store and not yet answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InFlight {
    /// How many writes are kept once it commits.
    covers: u64,
    /// When the core asked for it.
    sent_at: Millis,
}

/// Who an event is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Audience {
    Everyone,
    Seat(u8),
    /// Every seat but the mover's, and the spectators: whom a racer's
    /// progress is told on the tick ([`Settings::progress_tick_ms`]).
    Others(u8),
}

impl Audience {
    fn includes_seat(self, seat: u8) -> bool {
        match self {
            Audience::Everyone => true,
            Audience::Seat(only) => only == seat,
            Audience::Others(mover) => mover != seat,
        }
    }

    fn includes_spectators(self) -> bool {
        matches!(self, Audience::Everyone | Audience::Others(_))
    }
}

/// A racer's progress its rivals and the spectators are still to be told,
/// as of its latest move.
struct PendingProgress {
    seat: u8,
    progress: Progress,
    /// With open boards: the latest move's text and the board after it.
    text: Option<String>,
    board: Option<View>,
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
    /// A bot the server runs, and its level; `None` for a person.
    bot: Option<BotLevel>,
    conn: Option<ConnId>,
    token: TokenHash,
    /// Set while the player is away: when its seat is given up.
    grace_until: Option<Millis>,
    status: PlayerStatus,
    position: Option<AnyGame>,
    history: MoveStack<AnyMove>,
    log: MoveTexts,
    progress: Progress,
    finished_ms: Option<u64>,
}

struct Race {
    seed: u64,
    salt: String,
    commitment: String,
    /// The deal as everyone saw it at the start: progress is measured from it.
    deal: View,
    started: Millis,
    deadline: Millis,
    result: Option<RaceResult>,
}

/// The end of a race, held back until the store has it: nobody hears that
/// the race is over before it is committed.
struct Ending {
    /// The last player's `finished` event.
    seat: u8,
    status: PlayerStatus,
    elapsed_ms: u64,
    result: RaceResult,
    /// When the shell was asked to store the result ([`Output::StoreRace`]),
    /// once it has been: it waits for the writes before it.
    asked_at: Option<Millis>,
}

/// A room and its race.
pub struct RoomCore {
    params: RoomParams,
    settings: Settings,
    metrics: Arc<dyn RoomMetrics>,
    /// Resume tokens and salts.
    secrets: StdRng,
    time_limit_ms: u64,
    owner: Option<u8>,
    phase: Phase,
    seats: Vec<Seat>,
    spectators: Vec<ConnId>,
    /// Spectators whose outbox overflowed: they get a snapshot when it has room.
    behind: HashSet<ConnId>,
    seq: u64,
    /// The claim the race is kept under (`LiveRace::epoch`): 0 for a race
    /// started here, the store's new claim for one run on after a stop or
    /// taken over from another node. Every write names it, so the store
    /// refuses this room's writes once another server has claimed the race.
    epoch: u64,
    log: VecDeque<LoggedEvent>,
    /// The bytes of the frames in `log`.
    log_bytes: usize,
    countdown_until: Option<Millis>,
    seed: Option<u64>,
    waiting_for_deal: bool,
    race: Option<Race>,
    /// Set while the result is being stored.
    ending: Option<Ending>,
    close_at: Option<Millis>,
    /// The latest time the core has seen.
    now: Millis,
    changed: bool,
    closed: bool,
    outputs: VecDeque<Output>,
    /// Writes made, and how many of them the store has committed.
    writes_issued: u64,
    writes_kept: u64,
    /// The writes sent and not yet answered, oldest first: for each, how
    /// many writes are kept once it commits (a write made again after a
    /// failure carries every write before it), and when it was sent.
    in_flight: VecDeque<InFlight>,
    /// The event number when the last write was issued.
    seq_at_last_write: u64,
    /// Outputs waiting for the writes before them, each with the number of
    /// writes issued when it was made.
    held: VecDeque<(u64, Output)>,
    /// Since when the room has waited for the store: a write failed and
    /// none has committed since. The race clock stands still meanwhile.
    waiting_since: Option<Millis>,
    /// When the race is written again; writes are not sent until then.
    retry_at: Option<Millis>,
    /// Failed writes in a row, for the pause before the next attempt.
    failures: u32,
    /// The race as it ended, kept while writes from before its end are
    /// not committed: what a write made again after the end writes.
    final_race: Option<Box<LiveRace>>,
    /// Racers' progress the others are still to be told, one entry per
    /// seat (its latest), in the order the seats moved.
    progress_pending: Vec<PendingProgress>,
    /// When `progress_pending` goes out: the end of the tick it waits for.
    progress_due: Option<Millis>,
    /// The series the race belongs to; this race's point is counted when
    /// it ends.
    series: Option<SeriesScore>,
    /// The vote on a rematch, once someone proposed one after the race.
    vote: Option<Vote>,
    /// The secret tokens of the rematch's seats, from the moment every
    /// racer accepted until its room is open and each racer has its own.
    rematch_tokens: Vec<(u8, String)>,
    /// A rematch's room, whose seats are taken before their players come:
    /// its countdown begins once every seat is back.
    gathering: bool,
}

impl RoomCore {
    /// A room in its lobby at `now`; `secret_seed` seeds its resume tokens
    /// and salts (the shell takes it from the OS, a test fixes it).
    pub fn new(
        params: RoomParams,
        settings: Settings,
        metrics: Arc<dyn RoomMetrics>,
        secret_seed: [u8; 32],
        now: Millis,
    ) -> RoomCore {
        let time_limit_ms = params
            .options
            .time_limit_ms
            .unwrap_or(settings.default_time_limit_ms);
        let series = params.series.clone().or_else(|| {
            params
                .options
                .best_of
                .filter(|&best_of| best_of > 1)
                .map(SeriesScore::new)
        });
        let params = RoomParams {
            options: RoomOptions {
                time_limit_ms: Some(time_limit_ms),
                ..params.options
            },
            ..params
        };
        RoomCore {
            params,
            settings,
            metrics,
            secrets: StdRng::from_seed(secret_seed),
            time_limit_ms,
            owner: None,
            phase: Phase::Lobby,
            seats: Vec::new(),
            spectators: Vec::new(),
            behind: HashSet::new(),
            seq: 0,
            epoch: 0,
            log: VecDeque::new(),
            log_bytes: 0,
            countdown_until: None,
            seed: None,
            waiting_for_deal: false,
            race: None,
            ending: None,
            close_at: None,
            now,
            changed: false,
            closed: false,
            outputs: VecDeque::new(),
            writes_issued: 0,
            writes_kept: 0,
            in_flight: VecDeque::new(),
            seq_at_last_write: 0,
            held: VecDeque::new(),
            waiting_since: None,
            retry_at: None,
            failures: 0,
            final_race: None,
            progress_pending: Vec::new(),
            progress_due: None,
            series,
            vote: None,
            rematch_tokens: Vec::new(),
            gathering: false,
        }
    }

    /// A rematch's room at `now`: private, its seats those of `seats`
    /// (each waiting its grace period for its player, who takes it with
    /// the token the finished room gave it), its owner the first seat. Its
    /// countdown begins once every seat is back.
    pub fn for_rematch(
        params: RoomParams,
        seats: Vec<RematchSeat>,
        settings: Settings,
        metrics: Arc<dyn RoomMetrics>,
        secret_seed: [u8; 32],
        now: Millis,
    ) -> RoomCore {
        let mut core = RoomCore::new(params, settings, metrics, secret_seed, now);
        for kept in seats {
            core.out(Output::TokenIssued(kept.token));
            core.seats.push(Seat {
                seat: kept.seat,
                name: kept.name,
                player: kept.player,
                bot: kept.bot,
                conn: None,
                token: kept.token,
                grace_until: Some(now.saturating_add(settings.grace_ms)),
                status: PlayerStatus::Waiting,
                position: None,
                history: MoveStack::new(),
                log: MoveTexts::default(),
                progress: Progress::default(),
                finished_ms: None,
            });
        }
        core.seats.sort_by_key(|seat| seat.seat);
        core.owner = core.seats.first().map(|seat| seat.seat);
        core.gathering = true;
        core.changed = true;
        core
    }

    /// Writes made and not yet committed (sent, or waiting to be made
    /// again): the shell stops reading commands past a bound, so that a
    /// room whose store is slow or out holds back a bounded number of
    /// outputs.
    pub fn unkept_writes(&self) -> u64 {
        self.writes_issued - self.writes_kept
    }

    /// Whether the room waits for the store: a write failed and none has
    /// committed since.
    pub fn is_waiting_for_store(&self) -> bool {
        self.waiting_since.is_some()
    }

    /// The room's phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Handles `input`, which happened at `now`, after every deadline up to
    /// `now`. Joining, watching and resuming answer whether the connection
    /// is in; everything else answers `Ok` (refusals go out as frames).
    pub fn handle(&mut self, now: Millis, input: Input) -> Result<(), Refusal> {
        self.advance(now);
        if self.closed {
            return Err(Refusal::new(ErrorCode::RoomNotFound, "the room has closed"));
        }
        let answer = self.dispatch(input);
        self.close_if_done();
        answer
    }

    fn dispatch(&mut self, input: Input) -> Result<(), Refusal> {
        match input {
            Input::Join {
                conn,
                name,
                player,
                bot,
            } => return self.join(conn, name, player, bot),
            Input::Spectate { conn } => self.spectate(conn),
            Input::Resume {
                conn,
                token,
                last_seq,
            } => return self.resume(conn, token, last_seq),
            Input::ResumeBot { conn, seat } => return self.resume_bot(conn, seat),
            Input::Leave { conn } => self.leave(conn),
            Input::StartEarly { conn } => self.start_early(conn),
            Input::Move { conn, text, seat } => self.play(conn, text, seat),
            Input::Undo { conn } => self.undo(conn),
            Input::Resign { conn } => {
                if let Some(index) = self.racing_seat(conn, "", false) {
                    self.finish(index, PlayerStatus::Resigned);
                }
            }
            Input::Disconnected { conn } => self.disconnected(conn),
            Input::Overflow { conn } => self.overflow(conn),
            Input::CaughtUp { conn } => {
                self.behind.remove(&conn);
            }
            Input::DealReady { seed } => {
                self.waiting_for_deal = false;
                self.seed.get_or_insert(seed);
                if self.phase == Phase::Dealing {
                    self.begin_countdown();
                }
            }
            Input::RaceStored { race_id } => self.announce_end(race_id),
            Input::Kept {
                stored: Stored::Committed,
            } => self.kept(),
            Input::Kept {
                stored: Stored::Failed,
            } => self.write_failed(),
            Input::Rematch { conn, accept } => self.rematch(conn, accept),
            Input::RematchOpened { code } => self.rematch_opened(code),
            Input::Kept {
                stored: Stored::Refused,
            } => {
                if !self.in_flight.is_empty() {
                    tracing::error!("a write of the running race was refused: the room closes");
                    self.cannot_keep("the server could not store this race");
                }
            }
        }
        Ok(())
    }

    /// Acts on every deadline up to `now`, each at its own time.
    pub fn on_timeout(&mut self, now: Millis) {
        self.advance(now);
        self.close_if_done();
    }

    /// Moves the core's time to `now` (never back), acting on each deadline
    /// on the way at its own time.
    fn advance(&mut self, now: Millis) {
        while let Some(due) = self.poll_timeout().filter(|&due| due <= now) {
            self.now = self.now.max(due);
            self.act_on_deadlines();
            if self.closed {
                break;
            }
        }
        self.now = self.now.max(now);
    }

    /// When the core next needs [`RoomCore::on_timeout`], if ever.
    pub fn poll_timeout(&self) -> Option<Millis> {
        if self.closed {
            return None;
        }
        let grace = self.seats.iter().filter_map(|seat| seat.grace_until);
        // The race clock stands still while the room waits for the store.
        let race = self
            .race
            .as_ref()
            .filter(|_| self.phase == Phase::Racing && self.waiting_since.is_none())
            .map(|race| race.deadline);
        let countdown = self
            .countdown_until
            .filter(|_| self.phase == Phase::Countdown && self.seed.is_some());
        let linger = self.close_at.filter(|_| self.ending.is_none());
        let vote = self.vote.as_ref().and_then(Vote::deadline);
        let result = self.result_deadline();
        let store = self
            .waiting_since
            .map(|since| since.saturating_add(self.settings.store_outage_ms))
            .into_iter()
            .chain(self.unanswered_deadline())
            .chain(result)
            .chain(self.retry_at);
        grace
            .chain(race)
            .chain(countdown)
            .chain(linger)
            .chain(vote)
            .chain(store)
            .chain(self.progress_due)
            .min()
    }

    /// The next thing to do, if any. A change to the room's seats or phase
    /// goes out last, as one `room_update`, once everything else is taken.
    pub fn poll_output(&mut self) -> Option<Output> {
        if self.outputs.is_empty() && self.changed && !self.closed {
            self.changed = false;
            let listing = self.params.public.then(|| self.listing());
            let seat_players = if listing.is_some() {
                self.seats
                    .iter()
                    .map(|seat| seat.player.filter(|_| seat.bot.is_none()))
                    .collect()
            } else {
                Vec::new()
            };
            self.out(Output::Summary {
                phase: self.phase,
                players: u8::try_from(self.seats.len()).unwrap_or(u8::MAX),
                listing,
                seat_players,
            });
            let room = self.info();
            self.emit(Audience::Everyone, |seq| ServerMessage::RoomUpdate {
                seq,
                room,
            });
        }
        self.outputs.pop_front()
    }

    /// Whether the room has closed: its outputs say goodbye, and it takes
    /// no more input.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Closes the room now (the server is stopping): nobody is told, since
    /// the connections say so themselves; tokens are revoked.
    pub fn close_for_shutdown(&mut self) {
        self.close(false);
    }

    /// The running race as the store keeps it; `None` unless the room is
    /// racing (a lobby is cheap to open again, a finished race is stored
    /// already). The shell keeps it once more at shutdown, for the clock.
    pub fn live_race(&self) -> Option<LiveRace> {
        let race = self.race.as_ref().filter(|_| self.phase == Phase::Racing)?;
        Some(LiveRace {
            code: self.params.code.to_string(),
            game: self.params.game,
            max_players: self.params.max_players,
            public: self.params.public,
            quick: self.params.quick,
            options: self.params.options,
            owner: self.owner,
            seed: race.seed,
            salt: race.salt.clone(),
            elapsed_ms: self.elapsed_ms(),
            seq: self.seq,
            seats: self
                .seats
                .iter()
                .map(|seat| LiveSeat {
                    seat: seat.seat,
                    name: seat.name.clone(),
                    player: seat.player,
                    bot: seat.bot,
                    token: seat.token,
                    status: seat.status,
                    progress: seat.progress,
                    finished_ms: seat.finished_ms,
                    log: seat.log.to_vec(),
                })
                .collect(),
            epoch: self.epoch,
            series: self.series.clone(),
        })
    }

    /// The claim the race is kept under (`LiveRace::epoch`), for the
    /// writes the shell makes itself: the race's result.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Whether the room's races count for ratings
    /// ([`rated::room_is_rated`]).
    pub fn is_rated(&self) -> bool {
        rated::room_is_rated(self.params.public, &self.params.options)
    }

    /// A race kept in the store, running again at `now` with the clock it
    /// had when last kept: each position is rebuilt from the deal and its
    /// log, every seat waits its grace period for its player to resume
    /// with the token it had, and the time the server was down is charged
    /// to no one. Events are numbered on from [`SEQ_CHECKPOINT`] twice past
    /// the last number kept. Its first outputs register the tokens and keep
    /// the race again, with its new clock and numbering.
    pub fn restore(
        saved: LiveRace,
        settings: Settings,
        metrics: Arc<dyn RoomMetrics>,
        secret_seed: [u8; 32],
        now: Millis,
    ) -> Result<RoomCore, RestoreError> {
        let params = RoomParams {
            code: Arc::from(saved.code.as_str()),
            game: saved.game,
            max_players: saved.max_players,
            public: saved.public,
            quick: saved.quick,
            options: saved.options,
            series: saved.series.clone(),
        };
        let mut core = RoomCore::new(params, settings, metrics, secret_seed, now);
        let deal = AnyGame::deal(saved.game, saved.seed);
        let deal_view = deal.view();
        let mut seats = Vec::with_capacity(saved.seats.len());
        for kept in saved.seats {
            let mut replay = LogReplay::new(deal.clone());
            for text in &kept.log {
                replay.step(text).map_err(|error| RestoreError {
                    code: saved.code.clone(),
                    reason: format!("seat {}: {text}: {error}", kept.seat),
                })?;
            }
            let (position, history) = replay.into_parts();
            core.out(Output::TokenIssued(kept.token));
            // The counts are the rules' to take from the rebuilt board: the
            // store kept moves since the room was saved, not their counts.
            let moves = u32::try_from(kept.log.len()).unwrap_or(u32::MAX);
            let progress = Progress::measure(
                &deal_view,
                &position.view(),
                moves,
                kept.progress.elapsed_ms,
            );
            // A race may have been won (or, without undo, lost) by a move
            // that was kept just before the server died, before its end was.
            let (mut status, mut finished_ms) = (kept.status, kept.finished_ms);
            let over =
                position.is_won() || (position.is_stuck() && !core.params.options.undo_allowed);
            if status == PlayerStatus::Racing && over {
                status = if position.is_won() {
                    PlayerStatus::Won
                } else {
                    PlayerStatus::Stuck
                };
                finished_ms = Some(progress.elapsed_ms);
            }
            seats.push(Seat {
                seat: kept.seat,
                name: kept.name,
                player: kept.player,
                bot: kept.bot,
                conn: None,
                token: kept.token,
                grace_until: (status == PlayerStatus::Racing)
                    .then(|| now.saturating_add(settings.grace_ms)),
                status,
                position: Some(position),
                history,
                log: kept.log.iter().map(String::as_str).collect(),
                progress,
                finished_ms,
            });
        }
        let started = now.saturating_sub(saved.elapsed_ms);
        core.race = Some(Race {
            seed: saved.seed,
            commitment: protocol::commitment(saved.game, saved.seed, &saved.salt),
            salt: saved.salt,
            deal: deal_view,
            started,
            deadline: started.saturating_add(core.time_limit_ms),
            result: None,
        });
        core.seats = seats;
        core.owner = saved.owner;
        core.seq = saved.seq.saturating_add(2 * SEQ_CHECKPOINT);
        core.epoch = saved.epoch;
        core.seed = Some(saved.seed);
        core.phase = Phase::Racing;
        core.metrics.gauge(Gauge::RacesRunning, 1);
        let last_finisher = core
            .seats
            .iter()
            .max_by_key(|seat| seat.finished_ms)
            .map(|seat| (seat.seat, seat.status, seat.finished_ms.unwrap_or(0)));
        match last_finisher {
            // Everyone was done: the race ends now, as it would have.
            Some((seat, status, elapsed_ms))
                if core
                    .seats
                    .iter()
                    .all(|seat| seat.status != PlayerStatus::Racing) =>
            {
                core.end_race(seat, status, elapsed_ms);
            }
            _ => core.keep_race(),
        }
        Ok(core)
    }
}

pub mod daily;
pub mod judge;
pub mod metrics;
pub mod rated;
pub mod records;
pub mod secrets;

mod connections;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod keeping;
mod move_texts;
mod race;
pub mod rematch;
mod sending;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod boundary {
    //! The sans-I/O boundary, as the compiler holds it: this crate can only
    //! use what its manifest names, so the manifest names pure crates only.

    /// The crates the core may use: the rules, and crates that do no I/O,
    /// read no clock and reach no OS randomness.
    const PURE: [&str; 8] = [
        "patience-shared",
        "bytes",
        "rand",
        "rmp-serde",
        "serde",
        "sha2",
        "thiserror",
        "tracing",
    ];

    #[test]
    fn the_core_depends_on_pure_crates_only() {
        let manifest = include_str!("../Cargo.toml");
        let mut section = "";
        let mut names = Vec::new();
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line;
                continue;
            }
            let dependencies = section.ends_with("dependencies]");
            let Some((name, spec)) = line.split_once('=').filter(|_| dependencies) else {
                continue;
            };
            let name = name.trim().trim_end_matches(".workspace");
            // rand without `sys_rng` or `thread_rng`: no OS randomness.
            assert!(
                !spec.contains("sys_rng") && !spec.contains("thread_rng"),
                "{line}"
            );
            names.push((section, name));
        }
        assert!(
            names.iter().any(|&(_, name)| name == "rand"),
            "the manifest is read: {names:?}"
        );
        for (section, name) in names {
            assert!(
                section == "[dev-dependencies]" || PURE.contains(&name),
                "{name} in {section} is not a pure crate the room core may use"
            );
        }
    }
}
