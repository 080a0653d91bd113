//! Which rooms exist and which resume token belongs to which room.
//!
//! The registry holds handles only; each room's state lives in its actor
//! task. Map guards are never held across an `.await`: every lookup clones
//! the handle and drops the guard in the same statement.

use std::sync::Arc;

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
use patience_shared::game::GameKind;
use patience_shared::protocol::ROOM_CODE_ALPHABET;
use rand::RngExt as _;

use crate::outbox::ConnectionHandle;
use crate::room_handle::{ListedRoom, RoomHandle};
use crate::secrets::TokenHash;
use crate::store::AttemptKey;

/// The length of a room code.
pub const ROOM_CODE_LENGTH: usize = 6;

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

    /// Registers a room under its own code; `false` if the code is taken.
    pub fn insert(&self, handle: RoomHandle) -> bool {
        match self.rooms.entry(Arc::clone(&handle.code)) {
            Entry::Vacant(vacant) => {
                vacant.insert(handle);
                true
            }
            Entry::Occupied(_) => false,
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
        rooms.sort_by_key(|room| std::cmp::Reverse(room.summary.players()));
        rooms
    }

    /// Players seated in this node's rooms of `game`: those waiting in
    /// public rooms whose race has not begun, and those racing.
    pub fn players_of(&self, game: GameKind) -> PlayerCounts {
        let mut counts = PlayerCounts::default();
        for room in self.rooms.iter().filter(|room| room.summary.game == game) {
            let players = u32::from(room.summary.players());
            if room.summary.public && room.summary.is_forming() {
                counts.waiting = counts.waiting.saturating_add(players);
            } else if room.summary.is_racing() {
                counts.racing = counts.racing.saturating_add(players);
            }
        }
        counts
    }

    /// This node's open public rooms still forming (of `game`, or of
    /// every game), as the lobby lists them.
    pub fn lobby(&self, game: Option<GameKind>) -> Vec<ListedRoom> {
        self.rooms
            .iter()
            .filter(|room| game.is_none_or(|game| room.summary.game == game))
            .filter_map(|room| room.summary.lobby_listing())
            .collect()
    }

    /// Records that a token opens a seat of `code`.
    pub fn insert_token(&self, hash: TokenHash, code: Arc<str>) {
        self.tokens.insert(hash, code);
    }

    /// Forgets a token.
    pub fn remove_token(&self, hash: &TokenHash) {
        self.tokens.remove(hash);
    }

    /// Every token that opens a seat of `code`.
    pub fn tokens_of(&self, code: &str) -> Vec<TokenHash> {
        self.tokens
            .iter()
            .filter(|entry| &**entry.value() == code)
            .map(|entry| *entry.key())
            .collect()
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

/// How many players wait for a game's races and how many race it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlayerCounts {
    /// Seated in public rooms whose race has not begun.
    pub waiting: u32,
    /// Seated in rooms whose race runs.
    pub racing: u32,
}

impl PlayerCounts {
    /// The two counts added.
    pub fn plus(self, other: PlayerCounts) -> PlayerCounts {
        PlayerCounts {
            waiting: self.waiting.saturating_add(other.waiting),
            racing: self.racing.saturating_add(other.racing),
        }
    }
}

/// Six characters from the unambiguous alphabet, from the OS's randomness.
pub fn new_room_code() -> String {
    let alphabet = ROOM_CODE_ALPHABET.as_bytes();
    let mut random = rand::rng();
    (0..ROOM_CODE_LENGTH)
        .map(|_| {
            let index = random.random_range(0..alphabet.len());
            char::from(alphabet[index])
        })
        .collect()
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
}
