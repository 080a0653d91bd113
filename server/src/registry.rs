//! Which rooms exist and which resume token belongs to which room.
//!
//! The registry holds handles only; each room's state lives in its actor
//! task. Map guards are never held across an `.await`: every lookup clones
//! the handle and drops the guard in the same statement.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
use patience_shared::game::GameKind;
use patience_shared::protocol::{Phase, ROOM_CODE_ALPHABET};
use rand::{Rng as _, RngExt as _};
use tokio::sync::mpsc;

use crate::connection::ConnectionHandle;
use crate::room::Command;
use crate::store::AttemptKey;

/// The length of a room code.
pub const ROOM_CODE_LENGTH: usize = 6;

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
        }
    }

    /// Records the room's phase and seats taken.
    pub fn set(&self, phase: Phase, players: u8) {
        self.phase.store(phase as u8, Ordering::Relaxed);
        self.players.store(players, Ordering::Relaxed);
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

/// A SHA-256 of a resume token: the server keeps no token itself.
pub type TokenHash = [u8; 32];

/// Rooms by code, resume tokens by hash, and which connection plays each
/// open daily attempt.
#[derive(Debug, Default)]
pub struct Registry {
    rooms: DashMap<Arc<str>, RoomHandle>,
    tokens: DashMap<TokenHash, Arc<str>>,
    daily_players: DashMap<AttemptKey, ConnectionHandle>,
}

impl Registry {
    /// The room with this code (case-insensitive).
    pub fn room(&self, code: &str) -> Option<RoomHandle> {
        let code = code.trim().to_ascii_uppercase();
        self.rooms.get(code.as_str()).map(|room| room.clone())
    }

    /// How many rooms are open.
    pub fn room_count(&self) -> usize {
        self.rooms.len()
    }

    /// Registers a room under a fresh random code, built by `make` from it.
    pub fn insert_new(&self, make: impl Fn(Arc<str>) -> RoomHandle) -> RoomHandle {
        loop {
            let code: Arc<str> = new_room_code().into();
            if let Entry::Vacant(vacant) = self.rooms.entry(Arc::clone(&code)) {
                let handle = make(code);
                vacant.insert(handle.clone());
                return handle;
            }
        }
    }

    /// Forgets a room.
    pub fn remove(&self, code: &str) {
        self.rooms.remove(code);
    }

    /// Waiting public rooms of `game`, fullest first, so quick racers meet.
    pub fn quick_race_candidates(&self, game: GameKind) -> Vec<RoomHandle> {
        let mut rooms: Vec<RoomHandle> = self
            .rooms
            .iter()
            .filter(|room| room.summary.open_for_quick_race(game))
            .map(|room| room.clone())
            .collect();
        rooms.sort_by_key(|room| std::cmp::Reverse(room.summary.players.load(Ordering::Relaxed)));
        rooms
    }

    /// Records that a token opens a seat of `code`.
    pub fn insert_token(&self, hash: TokenHash, code: Arc<str>) {
        self.tokens.insert(hash, code);
    }

    /// Forgets a token.
    pub fn remove_token(&self, hash: &TokenHash) {
        self.tokens.remove(hash);
    }

    /// Records that `conn` plays the attempt `key`; returns the connection
    /// that played it before, which must stop.
    pub fn claim_daily(&self, key: AttemptKey, conn: ConnectionHandle) -> Option<ConnectionHandle> {
        let id = conn.id;
        self.daily_players
            .insert(key, conn)
            .filter(|previous| previous.id != id)
    }

    /// Forgets that connection `conn_id` plays `key` (if another took it
    /// over since, that one stays).
    pub fn release_daily(&self, key: &AttemptKey, conn_id: u64) {
        self.daily_players
            .remove_if(key, |_, conn| conn.id == conn_id);
    }

    /// The room a token opens a seat of.
    pub fn room_for_token(&self, hash: &TokenHash) -> Option<RoomHandle> {
        let code = self.tokens.get(hash).map(|code| Arc::clone(&code))?;
        self.rooms.get(&code).map(|room| room.clone())
    }
}

/// Six characters from the unambiguous alphabet, from the OS's randomness.
fn new_room_code() -> String {
    let alphabet = ROOM_CODE_ALPHABET.as_bytes();
    let mut random = rand::rng();
    (0..ROOM_CODE_LENGTH)
        .map(|_| {
            let index = random.random_range(0..alphabet.len());
            char::from(alphabet[index])
        })
        .collect()
}

/// A new secret: `bytes` random bytes from the OS's randomness, as hex.
pub fn new_secret(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    patience_shared::protocol::to_hex(&buffer)
}

/// The hash under which a token is kept.
pub fn token_hash(token: &str) -> TokenHash {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_use_only_the_unambiguous_alphabet() {
        for _ in 0..100 {
            let code = new_room_code();
            assert_eq!(code.len(), ROOM_CODE_LENGTH);
            assert!(
                code.chars().all(|c| ROOM_CODE_ALPHABET.contains(c)),
                "{code}"
            );
        }
    }

    #[test]
    fn secrets_are_long_and_distinct() {
        let first = new_secret(16);
        assert_eq!(first.len(), 32);
        assert_ne!(first, new_secret(16));
    }
}
