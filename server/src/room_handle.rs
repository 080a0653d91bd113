//! What the rest of the server holds of a room: a cheap handle on its
//! actor's bounded inbox, the closed set of commands the actor takes, and a
//! summary that quick race reads without a round trip.
//!
//! This is a leaf below [`room`](crate::room), [`registry`](crate::registry)
//! and [`connection`](crate::connection), so that none of them needs another
//! to name a room.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use patience_shared::game::GameKind;
use patience_shared::protocol::{BotLevel, LobbyRoom, Phase};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::matchmaking::Waiter;
use crate::outbox::ConnectionHandle;
use crate::secrets::TokenHash;
use crate::store::PlayerId;

/// Commands waiting for a room before senders wait.
pub const INBOX_CAPACITY: usize = 256;

pub use patience_room_core::Refusal;

/// Everything a room's actor can be asked.
#[derive(Debug)]
pub enum Command {
    /// Take a seat.
    Join {
        /// The connection.
        conn: ConnectionHandle,
        /// Its display name.
        name: String,
        /// The registered player, if the connection is one.
        player: Option<PlayerId>,
        /// A bot the server runs, at this level.
        bot: Option<BotLevel>,
        /// Whether it got a seat.
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// Watch.
    Spectate {
        /// The connection.
        conn: ConnectionHandle,
        /// Always accepted while the room is open.
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// Take back a seat with its resume token.
    Resume {
        /// The new connection.
        conn: ConnectionHandle,
        /// The token's hash.
        token: TokenHash,
        /// The last event the client saw.
        last_seq: u64,
        /// Whether the seat was taken back.
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// A server bot takes back its seat in a race run again
    /// ([`Input::ResumeBot`](crate::room::core::Input::ResumeBot)).
    ResumeBot {
        /// The bot's new connection.
        conn: ConnectionHandle,
        /// Its seat.
        seat: u8,
        /// Whether the seat was taken back.
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// Leave the room.
    Leave {
        /// Who.
        conn_id: u64,
    },
    /// The owner starts the countdown now.
    StartEarly {
        /// Who.
        conn_id: u64,
    },
    /// A move in notation.
    Move {
        /// Who.
        conn_id: u64,
        /// The notation.
        text: String,
        /// The board the client named, if any.
        seat: Option<u8>,
        /// When the connection read it, for the latency histogram.
        received: Instant,
        /// When the connection read it, on the server's clock: the move is
        /// judged at this time.
        received_ms: u64,
    },
    /// Take back the last move.
    Undo {
        /// Who.
        conn_id: u64,
    },
    /// Give up.
    Resign {
        /// Who.
        conn_id: u64,
    },
    /// A connection closed.
    Disconnected {
        /// Which.
        conn_id: u64,
    },
    /// The deal pool has a proved seed for this room.
    DealReady {
        /// The seed.
        seed: u64,
    },
    /// Another node of the cluster holds this room's lease now: close
    /// without a word (its players resume there) and keep nothing.
    LeaseLost,
    /// After the race: the connection's answer to a rematch.
    Rematch {
        /// Who.
        conn_id: u64,
        /// Accepts (or proposes) or declines.
        accept: bool,
    },
    /// The rematch's room is open under `code` (`None`: it could not open).
    RematchOpened {
        /// The new room's code.
        code: Option<Arc<str>>,
    },
}

pub use patience_room_core::records::{RematchPlan, RematchSeat};

/// A finished room asks the server to open its rematch's room and answer
/// [`Command::RematchOpened`] into `reply`.
#[derive(Debug)]
pub struct OpenRematch {
    /// What to open.
    pub plan: Box<RematchPlan>,
    /// The finished room's inbox.
    pub reply: mpsc::Sender<Command>,
}

/// Rematch rooms waiting to be opened before finished rooms' requests are
/// refused.
pub const REMATCH_QUEUE: usize = 64;

/// A way to talk to a room's actor, cheap to clone.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    /// The room's code.
    pub code: Arc<str>,
    /// The actor's inbox.
    pub commands: mpsc::Sender<Command>,
    /// What quick race needs to know without asking the actor.
    pub summary: Arc<RoomSummary>,
}

/// A room's facts that others read without a message round trip. The actor
/// keeps `phase` and `players` up to date.
#[derive(Debug)]
pub struct RoomSummary {
    /// The game.
    pub game: GameKind,
    /// Open to quick race.
    pub public: bool,
    /// Seats.
    pub max_players: u8,
    phase: AtomicU8,
    players: AtomicU8,
    /// The room as the lobby lists it, for a public room (the actor sets
    /// it with each change).
    listing: Mutex<Option<ListedRoom>>,
    /// The player who opened it for a quick race and waits in it, whose
    /// rating window decides who may join it.
    waiter: Mutex<Option<Waiter>>,
}

/// A room as the lobby lists it, with the registered player of each seat,
/// which the lobby turns into their ratings (the ids themselves go to no
/// client). Nodes of a cluster publish their rooms in this form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedRoom {
    /// The room, its `ratings` not yet filled in.
    pub room: LobbyRoom,
    /// The registered player of each of `room.players`, in order; `None`
    /// for a guest or a bot.
    pub seat_players: Vec<Option<PlayerId>>,
}

impl RoomSummary {
    /// A summary of a new room in its lobby.
    pub fn new(game: GameKind, public: bool, max_players: u8) -> RoomSummary {
        RoomSummary {
            game,
            public,
            max_players,
            phase: AtomicU8::new(Phase::Lobby as u8),
            players: AtomicU8::new(0),
            listing: Mutex::new(None),
            waiter: Mutex::new(None),
        }
    }

    /// Records who waits in this quick race's room (`None`: nobody's
    /// window bars anyone from it).
    pub fn set_waiter(&self, waiter: Option<Waiter>) {
        *self.waiter.lock().unwrap_or_else(PoisonError::into_inner) = waiter;
    }

    /// Who waits in this quick race's room, if a rating window guards it.
    pub fn waiter(&self) -> Option<Waiter> {
        *self.waiter.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the room's race has not begun yet (waiting, dealing or
    /// counting down).
    pub fn is_forming(&self) -> bool {
        let phase = self.phase.load(Ordering::Relaxed);
        [Phase::Lobby, Phase::Dealing, Phase::Countdown]
            .iter()
            .any(|&forming| phase == forming as u8)
    }

    /// Whether the room's race is running.
    pub fn is_racing(&self) -> bool {
        self.phase.load(Ordering::Relaxed) == Phase::Racing as u8
    }

    /// Whether the room waits in its lobby, before any countdown.
    pub fn is_waiting(&self) -> bool {
        self.phase.load(Ordering::Relaxed) == Phase::Lobby as u8
    }

    /// Records the room as the lobby lists it.
    pub fn set_listing(&self, listing: Option<ListedRoom>) {
        *self.listing.lock().unwrap_or_else(PoisonError::into_inner) = listing;
    }

    /// The room as the lobby lists it, while it is open public and still
    /// forming: waiting, dealing or counting down with a seat free.
    pub fn lobby_listing(&self) -> Option<ListedRoom> {
        if !self.open_for_quick_race(self.game) {
            return None;
        }
        self.listing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records the room's phase and seats taken.
    pub fn set(&self, phase: Phase, players: u8) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        self.players.store(players, Ordering::Relaxed);
    }

    /// Seats taken.
    pub fn players(&self) -> u8 {
        self.players.load(Ordering::Relaxed)
    }

    /// Whether quick race for `game` may try this room.
    pub fn open_for_quick_race(&self, game: GameKind) -> bool {
        let phase = self.phase.load(Ordering::Relaxed);
        self.public
            && self.game == game
            && [Phase::Lobby, Phase::Dealing, Phase::Countdown]
                .iter()
                .any(|&open| phase == open as u8)
            && self.players.load(Ordering::Relaxed) < self.max_players
    }
}
