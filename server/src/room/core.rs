//! The room as a state machine: no I/O, no clock, no OS randomness.
//!
//! Everything a room does is a function of its inputs: [`RoomCore::handle`]
//! takes a command and the time it happened, [`RoomCore::on_timeout`] the
//! time a deadline was reached, and both leave [`Output`]s to collect with
//! [`RoomCore::poll_output`] (frames for connections, tokens for the
//! registry, a result to store, a deal to fetch). [`RoomCore::poll_timeout`]
//! says when the core next needs waking. The actor in
//! [`room`](crate::room) is a thin shell that feeds it and carries its
//! outputs out; the unit tests below drive it on a virtual clock.
//!
//! Time is in milliseconds of the server's [`Clock`](crate::clock::Clock).
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
    REMATCH_WAIT_MS, RaceResult, RaceSnapshot, RematchStatus, Reveal, RoomInfo, RoomOptions,
    SeatBoard, SeriesScore, ServerMessage, Standing, UNDO_TEXT,
};
use patience_shared::replay::LogReplay;
use patience_shared::rules::{Effect, MoveError, MoveStack, Rules, View};
use rand::SeedableRng as _;
use rand::rngs::StdRng;

use crate::metrics::{Metrics, bump, gauge};
use crate::room_handle::{Refusal, RematchPlan, RematchSeat};
use crate::secrets::{TokenHash, secret_from, token_hash};
use crate::store::{LiveMove, LiveRace, LiveSeat, NewRace, PlayerId};
use move_texts::MoveTexts;
use rematch::{Vote, Voter};

/// Why a kept race could not run again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the race of room {code} cannot be rebuilt: {reason}")]
pub struct RestoreError {
    /// The room.
    pub code: String,
    /// What did not replay.
    pub reason: String,
}

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
    },
    /// Every racer accepted a rematch: open its room, with these seats
    /// taken, and answer [`Input::RematchOpened`].
    OpenRematch(Box<RematchPlan>),
}

/// A write that keeps a running race, so that it survives the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The room as it stands ([`crate::store::Store::save_live_race`]).
    Race(Box<LiveRace>),
    /// One accepted move ([`crate::store::Store::record_live_move`]).
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
    metrics: Arc<Metrics>,
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
        metrics: Arc<Metrics>,
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
        metrics: Arc<Metrics>,
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
            .min()
    }

    /// The next thing to do, if any. A change to the room's seats or phase
    /// goes out last, as one `room_update`, once everything else is taken.
    pub fn poll_output(&mut self) -> Option<Output> {
        if self.outputs.is_empty() && self.changed && !self.closed {
            self.changed = false;
            let listing = self.params.public.then(|| self.listing());
            self.out(Output::Summary {
                phase: self.phase,
                players: u8::try_from(self.seats.len()).unwrap_or(u8::MAX),
                listing,
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
        metrics: Arc<Metrics>,
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
        gauge(&core.metrics.races_running, 1);
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

    // ----- Sending and keeping -----

    /// Queues `output`, or holds it back while a write before it is not yet
    /// committed.
    fn out(&mut self, output: Output) {
        if self.writes_kept < self.writes_issued {
            self.held.push_back((self.writes_issued, output));
        } else {
            self.outputs.push_back(output);
        }
    }

    /// Issues a write at once, ahead of what is held; after a failure,
    /// only counts it: the race written again carries it.
    fn keep(&mut self, write: Keep) {
        self.writes_issued += 1;
        self.seq_at_last_write = self.seq;
        if self.retry_at.is_some() {
            return;
        }
        self.in_flight.push_back(InFlight {
            covers: self.writes_issued,
            sent_at: self.now,
        });
        self.outputs.push_back(Output::Keep(write));
    }

    /// When the oldest write sent, if it is still unanswered then, has
    /// waited too long for the store.
    fn unanswered_deadline(&self) -> Option<Millis> {
        self.in_flight
            .front()
            .map(|write| write.sent_at.saturating_add(self.unanswered_bound()))
    }

    /// When the race's result, if the store has not answered for it by
    /// then, is announced as one that could not be stored.
    fn result_deadline(&self) -> Option<Millis> {
        let asked_at = self.ending.as_ref()?.asked_at?;
        Some(asked_at.saturating_add(self.unanswered_bound()))
    }

    /// How long a write may go unanswered.
    fn unanswered_bound(&self) -> Millis {
        self.settings.store_outage_ms.max(UNANSWERED_WRITE_MIN_MS)
    }

    /// Keeps the running race's room as it stands; nothing in a lobby or
    /// after the race.
    fn keep_race(&mut self) {
        if let Some(race) = self.live_race() {
            self.keep(Keep::Race(Box::new(race)));
        }
    }

    /// The oldest write is committed: what waited for it goes out, and a
    /// room that waited for the store runs its clock again.
    fn kept(&mut self) {
        let Some(InFlight { covers, .. }) = self.in_flight.pop_front() else {
            return;
        };
        self.writes_kept = self.writes_kept.max(covers);
        self.failures = 0;
        if let Some(since) = self.waiting_since.take() {
            let waited = self.now.saturating_sub(since);
            if let Some(race) = self.race.as_mut() {
                race.started = race.started.saturating_add(waited);
                race.deadline = race.deadline.saturating_add(waited);
            }
            gauge(&self.metrics.rooms_waiting_for_store, -1);
            tracing::warn!(waited, "the store keeps the race again");
        }
        if self.writes_kept == self.writes_issued {
            self.final_race = None;
        }
        while self
            .held
            .front()
            .is_some_and(|(after, _)| *after <= self.writes_kept)
        {
            if let Some((_, output)) = self.held.pop_front() {
                if matches!(output, Output::StoreRace(_))
                    && let Some(ending) = self.ending.as_mut()
                {
                    ending.asked_at = Some(self.now);
                }
                self.outputs.push_back(output);
            }
        }
    }

    /// The oldest write failed, and with it every write sent after it:
    /// nothing is sent until the race is written again, whole, after a
    /// pause; what is held stays held.
    fn write_failed(&mut self) {
        if self.in_flight.is_empty() {
            return;
        }
        self.in_flight.clear();
        // Writes the shell has not taken yet are lost with the others.
        self.outputs
            .retain(|output| !matches!(output, Output::Keep(_)));
        if self.waiting_since.is_none() {
            self.waiting_since = Some(self.now);
            gauge(&self.metrics.rooms_waiting_for_store, 1);
            tracing::warn!("a write of the running race failed: the room waits for the store");
        }
        let pause = RETRY_PAUSE_MIN_MS
            .saturating_mul(1 << self.failures.min(20))
            .min(RETRY_PAUSE_MAX_MS);
        self.failures = self.failures.saturating_add(1);
        self.retry_at = Some(self.now.saturating_add(pause));
    }

    /// Writes the race again, whole, as it stands (or as it ended): it
    /// replaces what was kept, so it carries every write that was lost.
    fn write_again(&mut self) {
        self.retry_at = None;
        let Some(race) = self
            .live_race()
            .map(Box::new)
            .or_else(|| self.final_race.clone())
        else {
            return self.cannot_keep("the server could not store this race");
        };
        bump(&self.metrics.store_retries);
        self.in_flight.push_back(InFlight {
            covers: self.writes_issued,
            sent_at: self.now,
        });
        self.outputs.push_back(Output::Keep(Keep::Race(race)));
    }

    /// A write was refused, or the store has failed for longer than the
    /// room waits: nothing held may be told, and the room cannot go on
    /// telling its players what it cannot keep. They are told why (`why`,
    /// and that the race resumes) and the room closes; the race stays in
    /// the store as far as it was kept, and resumes from there when a
    /// server runs it again.
    fn cannot_keep(&mut self, why: &str) {
        tracing::error!("the running race could not be kept: the room closes");
        self.held.clear();
        self.in_flight.clear();
        self.retry_at = None;
        self.writes_kept = self.writes_issued;
        let conns: Vec<ConnId> = self
            .seats
            .iter()
            .filter_map(|seat| seat.conn)
            .chain(self.spectators.iter().copied())
            .collect();
        let message = format!(
            "{why}; it resumes from its last stored move when a server runs it again \
             (after a restart, or on another node of a cluster)"
        );
        for conn in conns {
            self.out(Output::Kick {
                conn,
                code: ErrorCode::Internal,
                message: message.clone(),
            });
        }
        self.close(false);
    }

    // ----- Sending -----

    fn info(&self) -> RoomInfo {
        RoomInfo {
            code: self.params.code.to_string(),
            game: self.params.game,
            max_players: self.params.max_players,
            public: self.params.public,
            options: self.params.options,
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
                    bot: seat.bot,
                })
                .collect(),
            spectators: u32::try_from(self.spectators.len()).unwrap_or(u32::MAX),
            series: self.series.clone(),
        }
    }

    /// The room as the lobby lists it.
    fn listing(&self) -> LobbyRoom {
        LobbyRoom {
            code: self.params.code.to_string(),
            game: self.params.game,
            max_players: self.params.max_players,
            players: self.seats.iter().map(|seat| seat.name.clone()).collect(),
            phase: self.phase,
            series: self.series.clone(),
        }
    }

    /// Numbers, encodes once, logs and delivers an event.
    fn emit(&mut self, audience: Audience, build: impl FnOnce(u64) -> ServerMessage) {
        if self.seq >= self.seq_at_last_write + SEQ_CHECKPOINT {
            self.keep_race();
        }
        self.seq += 1;
        let frame = Bytes::from(protocol::encode(&build(self.seq)));
        self.log.push_back(LoggedEvent {
            seq: self.seq,
            audience,
            frame: frame.clone(),
        });
        self.log_bytes += frame.len();
        while self.log.len() > self.settings.event_log_capacity
            || (self.log_bytes > self.settings.event_log_bytes && self.log.len() > 1)
        {
            if let Some(oldest) = self.log.pop_front() {
                self.log_bytes -= oldest.frame.len();
            }
        }
        let players: Vec<ConnId> = self
            .seats
            .iter()
            .filter(|seat| audience.includes_seat(seat.seat))
            .filter_map(|seat| seat.conn)
            .collect();
        for conn in players {
            self.out(Output::Send {
                conn,
                frame: frame.clone(),
            });
        }
        if audience.includes_spectators() {
            // A spectator whose outbox is full is not waited for and not
            // dropped: it skips events until its outbox has room again, then
            // gets one snapshot of the latest state (coalescing).
            let catch_up = (!self.behind.is_empty())
                .then(|| Bytes::from(protocol::encode(&self.snapshot_message(None))));
            let outputs: Vec<Output> = self
                .spectators
                .iter()
                .map(|&conn| match &catch_up {
                    Some(snapshot) if self.behind.contains(&conn) => Output::CatchUp {
                        conn,
                        frame: snapshot.clone(),
                    },
                    _ => Output::Send {
                        conn,
                        frame: frame.clone(),
                    },
                })
                .collect();
            for output in outputs {
                self.out(output);
            }
        }
    }

    /// Sends to one connection, outside the event log.
    fn send_to(&mut self, conn: ConnId, message: &ServerMessage) {
        self.out(Output::Send {
            conn,
            frame: Bytes::from(protocol::encode(message)),
        });
    }

    fn error_to(&mut self, conn: ConnId, code: ErrorCode, message: impl Into<String>) {
        self.send_to(
            conn,
            &ServerMessage::Error {
                code,
                message: message.into(),
            },
        );
    }

    fn reject(
        &mut self,
        conn: ConnId,
        text: String,
        code: ErrorCode,
        reason: Option<MoveError>,
        message: String,
    ) {
        bump(&self.metrics.moves_rejected);
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

    fn seat_index_of(&self, conn: ConnId) -> Option<usize> {
        self.seats.iter().position(|seat| seat.conn == Some(conn))
    }

    /// The race clock: it stands still while the room waits for the store.
    fn elapsed_ms(&self) -> u64 {
        let now = self
            .waiting_since
            .map_or(self.now, |since| since.min(self.now));
        self.race
            .as_ref()
            .map_or(0, |race| now.saturating_sub(race.started))
    }

    /// The race as `viewer` (a seat, or `None` for a spectator) may see it:
    /// its own board, and the others' only once the race is over or in a
    /// room with open boards.
    fn snapshot(&self, viewer: Option<u8>) -> Option<RaceSnapshot> {
        let race = self.race.as_ref()?;
        let all_boards = self.params.options.open_boards || self.phase == Phase::Finished;
        Some(RaceSnapshot {
            commitment: race.commitment.clone(),
            elapsed_ms: self.elapsed_ms(),
            time_limit_ms: self.time_limit_ms,
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

    fn new_secret(&mut self, bytes: usize) -> String {
        secret_from(&mut self.secrets, bytes)
    }

    // ----- Connections -----

    fn join(
        &mut self,
        conn: ConnId,
        name: String,
        player: Option<PlayerId>,
        bot: Option<BotLevel>,
    ) -> Result<(), Refusal> {
        match self.phase {
            Phase::Racing | Phase::Finished => {
                return Err(Refusal::new(
                    ErrorCode::RaceAlreadyStarted,
                    "the race has started: you may spectate",
                ));
            }
            _ if self.seats.len() >= usize::from(self.params.max_players) => {
                return Err(Refusal::new(ErrorCode::RoomFull, "every seat is taken"));
            }
            _ => {}
        }
        let seat_number = (0u8..)
            .find(|number| self.seats.iter().all(|seat| seat.seat != *number))
            .unwrap_or(0);
        let token = self.new_secret(24);
        let hash = token_hash(&token);
        self.out(Output::TokenIssued(hash));
        let name = self.distinct_name(name);
        let index = self.seats.partition_point(|seat| seat.seat < seat_number);
        self.seats.insert(
            index,
            Seat {
                seat: seat_number,
                name,
                player,
                bot,
                conn: Some(conn),
                token: hash,
                grace_until: None,
                status: PlayerStatus::Waiting,
                position: None,
                history: MoveStack::new(),
                log: MoveTexts::default(),
                progress: Progress::default(),
                finished_ms: None,
            },
        );
        self.owner.get_or_insert(seat_number);
        tracing::info!(
            seat = seat_number,
            bot = bot.map(BotLevel::as_str),
            "player joined"
        );
        let joined = ServerMessage::RoomJoined {
            seq: self.seq,
            room: self.info(),
            seat: Some(seat_number),
            resume_token: Some(token),
        };
        self.send_to(conn, &joined);
        self.changed = true;
        let full = self.seats.len() >= usize::from(self.params.max_players);
        match self.phase {
            Phase::Lobby if full || (self.params.quick && self.seats.len() >= 2) => {
                self.begin_start();
            }
            Phase::Countdown if full => {
                // The room filled up during the countdown: no one else can
                // come, so start as soon as the deal is there.
                self.countdown_until = Some(self.now);
                self.act_on_deadlines();
            }
            _ => {}
        }
        Ok(())
    }

    /// `name`, or `name (2)`, `name (3)`… if a seat already goes by it or
    /// by a name that looks the same (same [`protocol::name_key`]: any case,
    /// Cyrillic or fullwidth look-alikes), so that everyone can tell the
    /// players apart.
    fn distinct_name(&self, name: String) -> String {
        let taken = |candidate: &str| {
            let key = protocol::name_key(candidate);
            self.seats
                .iter()
                .any(|seat| protocol::name_key(&seat.name) == key)
        };
        if !taken(&name) {
            return name;
        }
        (2..)
            .map(|number| format!("{name} ({number})"))
            .find(|candidate| !taken(candidate))
            .unwrap_or(name)
    }

    fn spectate(&mut self, conn: ConnId) {
        let joined = ServerMessage::RoomJoined {
            seq: self.seq,
            room: self.info(),
            seat: None,
            resume_token: None,
        };
        self.send_to(conn, &joined);
        let snapshot = self.snapshot_message(None);
        self.send_to(conn, &snapshot);
        self.spectators.push(conn);
        self.changed = true;
    }

    /// A server bot takes back its seat, as [`RoomCore::resume`] with the
    /// seat's own token.
    fn resume_bot(&mut self, conn: ConnId, seat: u8) -> Result<(), Refusal> {
        let token = self
            .seats
            .iter()
            .find(|kept| kept.seat == seat && kept.bot.is_some())
            .map(|kept| kept.token)
            .ok_or_else(|| {
                Refusal::new(
                    ErrorCode::InvalidResumeToken,
                    format!("seat {seat} is no bot's"),
                )
            })?;
        self.resume(conn, token, 0)
    }

    fn resume(&mut self, conn: ConnId, token: TokenHash, last_seq: u64) -> Result<(), Refusal> {
        let Some(index) = self
            .seats
            .iter()
            .position(|seat| seat.token == token && seat.status != PlayerStatus::Left)
        else {
            return Err(Refusal::new(
                ErrorCode::InvalidResumeToken,
                "that resume token is unknown or already used",
            ));
        };
        let new_token = self.new_secret(24);
        let new_hash = token_hash(&new_token);
        self.out(Output::TokenRevoked(token));
        self.out(Output::TokenIssued(new_hash));
        let seat = &mut self.seats[index];
        let replaced = seat.conn.replace(conn).filter(|&old| old != conn);
        seat.token = new_hash;
        seat.grace_until = None;
        let seat_number = seat.seat;
        if let Some(old) = replaced {
            self.out(Output::Kick {
                conn: old,
                code: ErrorCode::Replaced,
                message: "your seat was taken back by another connection".to_string(),
            });
            self.out(Output::Detach { conn: old });
        }
        tracing::info!(seat = seat_number, last_seq, "player resumed");
        // The new token must be kept before the player has it, or a crash
        // would leave it holding a token that opens nothing.
        if self.phase == Phase::Racing {
            self.keep_race();
        }
        let resumed = ServerMessage::Resumed {
            seq: self.seq,
            room: self.info(),
            seat: seat_number,
            resume_token: new_token,
            elapsed_ms: self.race.as_ref().map(|_| self.elapsed_ms()),
        };
        self.send_to(conn, &resumed);
        // The missed events if they are all kept (and fit the outbox, which
        // the shell knows); otherwise one snapshot says it all.
        let kept_from = self.log.front().map_or(self.seq + 1, |event| event.seq);
        let snapshot = Bytes::from(protocol::encode(&self.snapshot_message(Some(seat_number))));
        if last_seq <= self.seq && kept_from <= last_seq + 1 {
            let missed = self
                .log
                .iter()
                .filter(|event| event.seq > last_seq && event.audience.includes_seat(seat_number))
                .map(|event| event.frame.clone())
                .collect();
            self.out(Output::Replay {
                conn,
                missed,
                snapshot,
            });
        } else {
            self.out(Output::Send {
                conn,
                frame: snapshot,
            });
        }
        self.changed = true;
        self.start_if_gathered();
        Ok(())
    }

    fn leave(&mut self, conn: ConnId) {
        let left = ServerMessage::Left {
            code: self.params.code.to_string(),
        };
        if let Some(index) = self.seat_index_of(conn) {
            self.seats[index].conn = None;
            self.send_to(conn, &left);
            self.out(Output::Detach { conn });
            self.give_up_seat(index, PlayerStatus::Resigned);
            let seat = self.seats.get(index).map(|seat| seat.seat);
            if let Some(seat) = seat.filter(|_| self.phase == Phase::Finished) {
                self.answer_rematch(seat, false);
            }
        } else if let Some(index) = self.spectators.iter().position(|&id| id == conn) {
            self.spectators.remove(index);
            self.behind.remove(&conn);
            self.send_to(conn, &left);
            self.out(Output::Detach { conn });
        }
        self.changed = true;
    }

    /// A player is gone for good: out of the lobby, or out of the race as `status`.
    fn give_up_seat(&mut self, index: usize, status: PlayerStatus) {
        self.outputs
            .push_back(Output::TokenRevoked(self.seats[index].token));
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
                    self.finish(index, status);
                }
                self.seats[index].status = left_unless_finished(self.seats[index].status);
            }
            Phase::Finished => self.seats[index].grace_until = None,
        }
        self.changed = true;
    }

    /// A seat's connection is gone: the seat waits for it to resume.
    fn drop_seat_connection(&mut self, index: usize) {
        let grace_until = self.now.saturating_add(self.settings.grace_ms);
        let seat = &mut self.seats[index];
        seat.grace_until = Some(grace_until);
        if let Some(conn) = seat.conn.take() {
            self.out(Output::Detach { conn });
        }
        self.changed = true;
    }

    fn disconnected(&mut self, conn: ConnId) {
        if let Some(index) = self.seat_index_of(conn) {
            tracing::info!(seat = self.seats[index].seat, "player dropped");
            self.drop_seat_connection(index);
        } else if let Some(index) = self.spectators.iter().position(|&id| id == conn) {
            self.spectators.remove(index);
            self.behind.remove(&conn);
            self.out(Output::Detach { conn });
            self.changed = true;
        }
    }

    /// Nobody is waited for: a player who cannot keep up is disconnected
    /// and may resume; a spectator skips events, then gets one snapshot.
    fn overflow(&mut self, conn: ConnId) {
        if let Some(index) = self.seat_index_of(conn) {
            tracing::info!(
                seat = self.seats[index].seat,
                "player too slow: disconnected"
            );
            self.out(Output::Kick {
                conn,
                code: ErrorCode::TooSlow,
                message: "you fell behind; resume to catch up".to_string(),
            });
            self.drop_seat_connection(index);
        } else if self.spectators.contains(&conn) && self.behind.insert(conn) {
            self.out(Output::FellBehind { conn });
        }
    }

    fn start_early(&mut self, conn: ConnId) {
        let is_owner = self
            .seat_index_of(conn)
            .is_some_and(|index| self.owner == Some(self.seats[index].seat));
        if !is_owner {
            return self.error_to(
                conn,
                ErrorCode::NotOwner,
                "only the room's owner may start early",
            );
        }
        match self.phase {
            Phase::Lobby => self.begin_start(),
            Phase::Dealing | Phase::Countdown => {}
            Phase::Racing | Phase::Finished => self.error_to(
                conn,
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
    /// deal arrives ([`Input::DealReady`]).
    fn begin_start(&mut self) {
        if self.seed.is_some() {
            return self.begin_countdown();
        }
        self.phase = Phase::Dealing;
        self.changed = true;
        if !self.waiting_for_deal {
            self.waiting_for_deal = true;
            self.out(Output::NeedDeal);
        }
    }

    fn begin_countdown(&mut self) {
        self.phase = Phase::Countdown;
        let countdown = self.settings.countdown_ms;
        self.countdown_until = Some(self.now.saturating_add(countdown));
        self.changed = true;
        self.emit(Audience::Everyone, |seq| ServerMessage::Countdown {
            seq,
            starts_in_ms: countdown,
        });
        self.act_on_deadlines();
    }

    fn start_race(&mut self, seed: u64) {
        let salt = self.new_secret(16);
        let game = self.params.game;
        let commitment = protocol::commitment(game, seed, &salt);
        let deal = AnyGame::deal(game, seed);
        let board = deal.view();
        let progress = Progress::measure(&board, &board, 0, 0);
        for seat in &mut self.seats {
            seat.position = Some(deal.clone());
            seat.status = PlayerStatus::Racing;
            seat.progress = progress;
            if let Some(series) = self.series.as_mut() {
                series.enter(&seat.name);
            }
        }
        self.race = Some(Race {
            seed,
            salt,
            commitment: commitment.clone(),
            deal: board.clone(),
            started: self.now,
            deadline: self.now.saturating_add(self.time_limit_ms),
            result: None,
        });
        self.phase = Phase::Racing;
        self.changed = true;
        bump(&self.metrics.races_started);
        gauge(&self.metrics.races_running, 1);
        tracing::info!(players = self.seats.len(), "race started");
        self.keep_race();
        let time_limit_ms = self.time_limit_ms;
        self.emit(Audience::Everyone, |seq| ServerMessage::RaceStarted {
            seq,
            commitment,
            board,
            time_limit_ms,
        });
    }

    /// The index of the connection's seat if it may play now; otherwise the
    /// connection is told why not (as a refused move when `is_move`).
    fn racing_seat(&mut self, conn: ConnId, text: &str, is_move: bool) -> Option<usize> {
        let index = self.seat_index_of(conn);
        let refusal = match (index, self.phase) {
            (None, _) => Some((ErrorCode::NotAPlayer, "spectators cannot play")),
            (Some(_), Phase::Lobby | Phase::Dealing | Phase::Countdown) => {
                Some((ErrorCode::RaceNotStarted, "the race has not started"))
            }
            (Some(_), Phase::Finished) => Some((ErrorCode::RaceOver, "the race is over")),
            (Some(index), Phase::Racing) if self.seats[index].status != PlayerStatus::Racing => {
                Some((ErrorCode::RaceOver, "your race is over"))
            }
            (Some(_), Phase::Racing) => None,
        };
        match refusal {
            None => index,
            Some((code, message)) if is_move => {
                self.reject(conn, text.to_string(), code, None, message.to_string());
                None
            }
            Some((code, message)) => {
                self.error_to(conn, code, message);
                None
            }
        }
    }

    fn play(&mut self, conn: ConnId, text: String, named_seat: Option<u8>) {
        let Some(index) = self.racing_seat(conn, &text, true) else {
            return;
        };
        if let Some(named) = named_seat.filter(|&named| named != self.seats[index].seat) {
            return self.reject(
                conn,
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
                return self.reject(conn, text, ErrorCode::BadNotation, None, error.to_string());
            }
        };
        let canonical = position.format_move(mv);
        let outcome = match position.apply(mv) {
            Ok(outcome) => outcome,
            Err(error) => {
                let message = error.to_string();
                return self.reject(conn, text, ErrorCode::IllegalMove, Some(error), message);
            }
        };
        bump(&self.metrics.moves_accepted);
        let effects = outcome.effects.to_vec();
        let seat = &mut self.seats[index];
        seat.history.push(mv, &outcome);
        seat.log.push(&canonical);
        self.after_change(index, canonical, effects);
    }

    fn undo(&mut self, conn: ConnId) {
        let Some(index) = self.racing_seat(conn, UNDO_TEXT, true) else {
            return;
        };
        if !self.params.options.undo_allowed {
            return self.reject(
                conn,
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
                conn,
                UNDO_TEXT.to_string(),
                ErrorCode::NothingToUndo,
                None,
                "there is no move to take back".to_string(),
            );
        };
        position.undo(mv, &outcome);
        seat.log.push(UNDO_TEXT);
        bump(&self.metrics.moves_accepted);
        self.after_change(index, UNDO_TEXT.to_string(), Vec::new());
    }

    /// Acknowledges a played move to its mover, tells everyone else the
    /// mover's progress (and, with open boards only, the move and the
    /// board), and ends the player's race if it is won or stuck.
    fn after_change(&mut self, index: usize, text: String, effects: Vec<Effect>) {
        let elapsed_ms = self.elapsed_ms();
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
        let kept = LiveMove {
            seat: seat_number,
            index: u32::try_from(seat.log.len().saturating_sub(1)).unwrap_or(u32::MAX),
            text: text.clone(),
            elapsed_ms,
            seq: self.seq,
            epoch: self.epoch,
        };
        self.keep(Keep::Move(kept));
        // A rival's move text and board name cards that may still be face
        // down in the recipient's own game: they stay with the mover.
        let shown = self
            .params
            .options
            .open_boards
            .then(|| (text.clone(), board.clone()));
        self.emit(Audience::Seat(seat_number), |seq| {
            ServerMessage::MoveAccepted {
                seq,
                text,
                effects,
                board,
                progress,
            }
        });
        let (text, board) = shown.unzip();
        self.emit(Audience::AllBut(seat_number), |seq| {
            ServerMessage::Progress {
                seq,
                seat: seat_number,
                progress,
                text,
                board,
            }
        });
        if won {
            self.finish(index, PlayerStatus::Won);
        } else if stuck {
            self.emit(Audience::Seat(seat_number), |seq| ServerMessage::Stuck {
                seq,
            });
            if !self.params.options.undo_allowed {
                self.finish(index, PlayerStatus::Stuck);
            }
        }
    }

    fn finish(&mut self, index: usize, status: PlayerStatus) {
        let elapsed_ms = self.elapsed_ms();
        let seat = &mut self.seats[index];
        seat.status = status;
        seat.finished_ms = Some(elapsed_ms);
        let seat_number = seat.seat;
        tracing::info!(seat = seat_number, ?status, elapsed_ms, "player finished");
        self.changed = true;
        if self
            .seats
            .iter()
            .any(|seat| seat.status == PlayerStatus::Racing)
        {
            self.keep_race();
            self.emit(Audience::Everyone, |seq| ServerMessage::Finished {
                seq,
                seat: seat_number,
                status,
                elapsed_ms,
            });
        } else {
            self.end_race(seat_number, status, elapsed_ms);
        }
    }

    /// Everyone is done: the result goes to the store, and is announced
    /// (with the last player's `finished`) once it is stored.
    fn end_race(&mut self, seat: u8, status: PlayerStatus, elapsed_ms: u64) {
        // A write made again after a failure writes the race as it ended.
        if self.writes_kept < self.writes_issued {
            self.final_race = self.live_race().map(Box::new);
        }
        let Some(race) = self.race.as_ref() else {
            return;
        };
        let mut order: Vec<&Seat> = self.seats.iter().collect();
        order.sort_by_key(|seat| {
            standing_key(seat.seat, seat.status, seat.finished_ms, seat.progress)
        });
        let standings: Vec<Standing> = (1u8..)
            .zip(order)
            .map(|(rank, seat)| Standing {
                rank,
                seat: seat.seat,
                name: seat.name.clone(),
                status: seat.status,
                progress: seat.progress,
                bot: seat.bot,
            })
            .collect();
        // The race's first place takes the series' point.
        if let (Some(series), Some(first)) = (self.series.as_mut(), standings.first()) {
            series.record(&first.name);
        }
        let result = RaceResult {
            race_id: None,
            standings,
            reveal: Reveal {
                game: self.params.game,
                seed: race.seed,
                salt: race.salt.clone(),
            },
            logs: self
                .seats
                .iter()
                .map(|seat| MoveLog {
                    seat: seat.seat,
                    moves: seat.log.to_vec(),
                })
                .collect(),
            open_boards: self.params.options.open_boards,
        };
        // A finished room lingers for its results, and a busy server holds
        // as many such rooms as races end in `linger_ms`: what only served
        // the running race goes now. No move is taken back any more, the
        // result holds the logs, and a player who resumes from before the
        // end gets a snapshot with the result instead of the race's events.
        for seat in &mut self.seats {
            seat.history = MoveStack::new();
            seat.log = MoveTexts::default();
        }
        self.log.clear();
        self.log_bytes = 0;
        self.phase = Phase::Finished;
        self.close_at = Some(self.now.saturating_add(self.settings.linger_ms));
        self.changed = true;
        bump(&self.metrics.races_finished);
        gauge(&self.metrics.races_running, -1);
        tracing::info!("race ended");
        let stored = NewRace {
            daily: None,
            ended_at_ms: self.now,
            result: result.clone(),
            players: self
                .seats
                .iter()
                .filter_map(|seat| Some((seat.seat, seat.player?)))
                .collect(),
        };
        // Asked now, unless it waits for the writes before it.
        let asked_at = (self.writes_kept == self.writes_issued).then_some(self.now);
        self.ending = Some(Ending {
            seat,
            status,
            elapsed_ms,
            result,
            asked_at,
        });
        self.out(Output::StoreRace(Box::new(stored)));
    }

    /// The result is stored (or could not be: then it is announced without
    /// an id, since the race is over either way).
    fn announce_end(&mut self, race_id: Option<u64>) {
        let Some(Ending {
            seat,
            status,
            elapsed_ms,
            mut result,
            ..
        }) = self.ending.take()
        else {
            return;
        };
        result.race_id = race_id;
        if let Some(race) = self.race.as_mut() {
            race.result = Some(result.clone());
        }
        self.emit(Audience::Everyone, |seq| ServerMessage::Finished {
            seq,
            seat,
            status,
            elapsed_ms,
        });
        self.emit(Audience::Everyone, |seq| ServerMessage::RaceEnded {
            seq,
            result,
        });
    }

    // ----- Rematch -----

    /// A racer answers a rematch (the first to accept proposes it): every
    /// seat of the race votes (see [`rematch`]), and everyone in the room
    /// hears where it stands.
    fn rematch(&mut self, conn: ConnId, accept: bool) {
        let Some(index) = self.seat_index_of(conn) else {
            return self.error_to(conn, ErrorCode::NotAPlayer, "only racers answer a rematch");
        };
        let over = self.phase == Phase::Finished
            && self.race.as_ref().is_some_and(|race| race.result.is_some());
        if !over {
            return self.error_to(
                conn,
                ErrorCode::RaceNotStarted,
                "a rematch is offered once the race is over",
            );
        }
        let settled = self.vote.as_ref().is_none_or(|vote| {
            matches!(
                vote.status(),
                RematchStatus::Declined | RematchStatus::Expired
            )
        });
        if settled {
            if !accept {
                return;
            }
            let voters: Vec<(u8, Voter)> = self
                .seats
                .iter()
                .map(|seat| {
                    let voter = if seat.bot.is_some() {
                        Voter::Bot
                    } else if seat.status == PlayerStatus::Left
                        || (seat.conn.is_none() && seat.grace_until.is_none())
                    {
                        Voter::Gone
                    } else {
                        Voter::Person
                    };
                    (seat.seat, voter)
                })
                .collect();
            let vote = Vote::open(voters, self.now, REMATCH_WAIT_MS);
            // The room stays open while the vote is.
            if let (Some(deadline), Some(close_at)) = (vote.deadline(), self.close_at.as_mut()) {
                *close_at = (*close_at).max(deadline);
            }
            self.vote = Some(vote);
        }
        let seat = self.seats[index].seat;
        if !self.answer_rematch(seat, accept) && settled {
            self.tell_rematch();
        }
    }

    /// Records `seat`'s answer to an open vote and tells it; whether it
    /// changed anything.
    fn answer_rematch(&mut self, seat: u8, accept: bool) -> bool {
        let changed = self
            .vote
            .as_mut()
            .is_some_and(|vote| vote.answer(seat, accept));
        if changed {
            self.tell_rematch();
        }
        changed
    }

    /// Tells everyone in the room where the rematch stands; once every
    /// racer accepted, asks the shell to open its room.
    fn tell_rematch(&mut self) {
        let Some(offer) = self.vote.as_ref().map(|vote| vote.offer(self.now)) else {
            return;
        };
        let ready = offer.status == RematchStatus::Ready;
        self.emit(Audience::Everyone, |seq| ServerMessage::RematchOffer {
            seq,
            offer,
        });
        if ready && self.rematch_tokens.is_empty() {
            self.open_rematch();
        }
    }

    /// Every racer accepted: a token for each seat of the new room, and the
    /// plan of that room for the shell.
    fn open_rematch(&mut self) {
        let mut seats = Vec::with_capacity(self.seats.len());
        for index in 0..self.seats.len() {
            let token = self.new_secret(24);
            let seat = &self.seats[index];
            seats.push(RematchSeat {
                seat: seat.seat,
                name: seat.name.clone(),
                player: seat.player,
                bot: seat.bot,
                token: token_hash(&token),
            });
            self.rematch_tokens.push((seat.seat, token));
        }
        let plan = RematchPlan {
            game: self.params.game,
            options: self.params.options,
            series: self.series.as_ref().map(SeriesScore::for_rematch),
            seats,
        };
        tracing::info!("every racer accepted a rematch: its room opens");
        if let Some(close_at) = self.close_at.as_mut() {
            *close_at = (*close_at).max(self.now.saturating_add(REMATCH_OPEN_MS));
        }
        self.out(Output::OpenRematch(Box::new(plan)));
    }

    /// The rematch's room is open: each racer gets its code and the token
    /// of its seat there (a bot's seat the server takes itself).
    fn rematch_opened(&mut self, code: Option<Arc<str>>) {
        let tokens = std::mem::take(&mut self.rematch_tokens);
        let Some(code) = code else {
            let conns: Vec<ConnId> = self.seats.iter().filter_map(|seat| seat.conn).collect();
            for conn in conns {
                self.error_to(
                    conn,
                    ErrorCode::Internal,
                    "the rematch's room could not open",
                );
            }
            return;
        };
        for (seat, resume_token) in tokens {
            let is_bot = self
                .seats
                .iter()
                .any(|kept| kept.seat == seat && kept.bot.is_some());
            if is_bot {
                continue;
            }
            let code = code.to_string();
            self.emit(Audience::Seat(seat), |seq| ServerMessage::RematchReady {
                seq,
                code,
                resume_token,
            });
        }
    }

    /// A rematch's room begins its countdown once every seat is back (a
    /// seat whose player does not come back within its grace period is
    /// given up, and the others race without it).
    fn start_if_gathered(&mut self) {
        if self.gathering
            && self.phase == Phase::Lobby
            && !self.seats.is_empty()
            && self.seats.iter().all(|seat| seat.conn.is_some())
        {
            self.gathering = false;
            self.begin_start();
        }
    }

    /// Acts on every deadline that has come by `self.now`.
    fn act_on_deadlines(&mut self) {
        let now = self.now;
        if let Some(since) = self.waiting_since
            && now >= since.saturating_add(self.settings.store_outage_ms)
        {
            let seconds = self.settings.store_outage_ms.div_ceil(1_000);
            return self.cannot_keep(&format!(
                "the server could not store this race for {seconds} s"
            ));
        }
        if self.result_deadline().is_some_and(|due| now >= due) {
            tracing::error!(
                "the race's result has gone unanswered too long: announced without an id"
            );
            bump(&self.metrics.storage_errors);
            self.announce_end(None);
        }
        if let Some(due) = self.unanswered_deadline()
            && now >= due
        {
            let seconds = self.unanswered_bound().div_ceil(1_000);
            tracing::error!("a write of the running race has gone unanswered too long");
            return self.cannot_keep(&format!(
                "the server's store did not answer for {seconds} s"
            ));
        }
        if self.retry_at.is_some_and(|at| now >= at) {
            self.write_again();
        }
        if self.phase == Phase::Countdown
            && self.countdown_until.is_some_and(|until| now >= until)
            && let Some(seed) = self.seed
        {
            self.start_race(seed);
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
            let seat = self.seats[index].seat;
            tracing::info!(seat, "grace period over: seat given up");
            self.give_up_seat(index, PlayerStatus::Left);
            if self.phase == Phase::Finished {
                self.answer_rematch(seat, false);
            }
        }
        if self.vote.as_mut().is_some_and(|vote| vote.expire(now)) {
            self.tell_rematch();
        }
        self.start_if_gathered();
        if self.phase == Phase::Racing
            && self.waiting_since.is_none()
            && self.race.as_ref().is_some_and(|race| now >= race.deadline)
        {
            for index in 0..self.seats.len() {
                if self.phase == Phase::Racing && self.seats[index].status == PlayerStatus::Racing {
                    self.finish(index, PlayerStatus::OutOfTime);
                }
            }
        }
        self.close_if_done();
    }

    fn close_if_done(&mut self) {
        let done = match self.phase {
            Phase::Lobby | Phase::Dealing | Phase::Countdown => self.seats.is_empty(),
            Phase::Racing => false,
            Phase::Finished => {
                self.ending.is_none() && self.close_at.is_some_and(|at| self.now >= at)
            }
        };
        if done && !self.closed {
            self.close(true);
        }
    }

    /// Whoever is still here is out of the room now; `tell` says so to
    /// them (at shutdown the connections say so themselves).
    fn close(&mut self, tell: bool) {
        if self.closed {
            return;
        }
        self.closed = true;
        let left = ServerMessage::Left {
            code: self.params.code.to_string(),
        };
        let seats: Vec<(TokenHash, Option<ConnId>)> = self
            .seats
            .iter()
            .map(|seat| (seat.token, seat.conn))
            .collect();
        for (token, conn) in seats {
            self.out(Output::TokenRevoked(token));
            if let Some(conn) = conn {
                if tell {
                    self.send_to(conn, &left);
                }
                self.out(Output::Detach { conn });
            }
        }
        for conn in std::mem::take(&mut self.spectators) {
            if tell {
                self.send_to(conn, &left);
            }
            self.out(Output::Detach { conn });
        }
        if self.phase == Phase::Racing {
            gauge(&self.metrics.races_running, -1);
        }
        if self.waiting_since.take().is_some() {
            gauge(&self.metrics.rooms_waiting_for_store, -1);
        }
        tracing::info!("room closed");
    }
}

/// The order of the standings: winners first, by finish time. Then
/// everyone else by cards home (more first); then those who played to the
/// end (out of time, stuck) above those who gave up (resigned, left); then
/// whoever played longer; the seat breaks ties. So a racer who resigned
/// after two moves never ranks above one who played on.
fn standing_key(
    seat: u8,
    status: PlayerStatus,
    finished_ms: Option<u64>,
    progress: Progress,
) -> (
    bool,
    u64,
    std::cmp::Reverse<u16>,
    bool,
    std::cmp::Reverse<u64>,
    u8,
) {
    let won = status == PlayerStatus::Won;
    let gave_up = matches!(status, PlayerStatus::Resigned | PlayerStatus::Left);
    let finished_ms = finished_ms.unwrap_or(u64::MAX);
    let (finish, played) = if won {
        (finished_ms, 0)
    } else {
        (0, finished_ms)
    };
    (
        !won,
        finish,
        std::cmp::Reverse(progress.cards_home),
        gave_up,
        std::cmp::Reverse(played),
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

#[doc(hidden)]
pub mod fuzzing;
mod move_texts;
pub mod rematch;

#[cfg(test)]
mod tests;
