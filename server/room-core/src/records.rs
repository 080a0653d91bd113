//! The records a room hands its store and takes back: a finished race to
//! store ([`NewRace`]), a running race as kept ([`LiveRace`], its seats)
//! and one accepted move of it ([`LiveMove`]), and the plan of a rematch's
//! room ([`RematchPlan`]). Plain data, written and read
//! by the server's store; the core only builds them and rebuilds a race
//! from them.

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    BotLevel, PlayerStatus, Progress, RaceResult, RoomOptions, SeriesScore,
};

use crate::secrets::TokenHash;

/// A registered player's id.
pub type PlayerId = u64;

/// A kept race that cannot be read back as it was written: the store
/// reports it as a corrupt record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CorruptRace(pub String);

/// A finished race to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRace {
    /// For a daily attempt, its UTC date.
    pub daily: Option<String>,
    /// The code of the room it was raced in (`None` for a daily attempt):
    /// a link to the room leads to the race once the room has closed.
    pub room_code: Option<String>,
    /// When it ended: Unix milliseconds.
    pub ended_at_ms: u64,
    /// Standings, reveal and logs; its `race_id` is ignored.
    pub result: RaceResult,
    /// The registered player in each seat, if any, by seat number.
    pub players: Vec<(u8, PlayerId)>,
}

/// One accepted move of a running race, kept before its player is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveMove {
    /// The seat.
    pub seat: u8,
    /// Its number in the seat's log, from 0.
    pub index: u32,
    /// The move in canonical notation, or `undo`.
    pub text: String,
    /// The race's clock when it was accepted.
    pub elapsed_ms: u64,
    /// The room's last event number when it was accepted.
    pub seq: u64,
    /// The claim the room keeps the race under ([`LiveRace::epoch`]).
    pub epoch: u64,
}

/// A running race as kept in the store: enough to rebuild it exactly (the
/// deal from its seed, each position from its move log) and to let its
/// players take their seats back with their resume tokens after the server
/// stopped, however it stopped. Kept on disk only, never sent.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LiveRace {
    /// The room's code.
    pub code: String,
    /// The game.
    pub game: GameKind,
    /// Seats.
    pub max_players: u8,
    /// Open to quick race.
    pub public: bool,
    /// Opened by quick race.
    pub quick: bool,
    /// The owner's choices, time limit filled in.
    pub options: RoomOptions,
    /// The owner's seat.
    pub owner: Option<u8>,
    /// The deal's seed and the commitment's salt.
    pub seed: u64,
    /// The salt.
    pub salt: String,
    /// The race's clock when it was kept: time the server is down is not
    /// charged to anyone.
    pub elapsed_ms: u64,
    /// The room's last event number when it was kept; a room run again
    /// numbers on from well past it, so that clients' `last_seq` stays
    /// meaningful.
    pub seq: u64,
    /// Every seat.
    pub seats: Vec<LiveSeat>,
    /// The claim the race is kept under: 0 from its start, one more each
    /// time a server claims it to run it on (the store's `claim_live_race`).
    /// The store's own count is the truth; this copy says which claim a
    /// write is made under.
    #[serde(default)]
    pub epoch: u64,
    /// The series the race belongs to, with the points of the races before
    /// it (a room kept without one has none).
    #[serde(default)]
    pub series: Option<SeriesScore>,
}

/// One seat of a [`LiveRace`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LiveSeat {
    /// The seat.
    pub seat: u8,
    /// The display name.
    pub name: String,
    /// The registered player, if any.
    pub player: Option<PlayerId>,
    /// A bot the server runs, and its level (absent in races kept before
    /// bots: a person).
    #[serde(default)]
    pub bot: Option<BotLevel>,
    /// The hash of its current resume token.
    pub token: TokenHash,
    /// Racing, or how its race ended.
    pub status: PlayerStatus,
    /// Its counts.
    pub progress: Progress,
    /// When its race ended, if it has.
    pub finished_ms: Option<u64>,
    /// Its moves in canonical notation, `undo` for a take-back.
    pub log: Vec<String>,
}

impl LiveRace {
    /// Whether one of its seats is opened by the resume token whose hash
    /// is `token`.
    pub fn holds_token(&self, token: &TokenHash) -> bool {
        self.seats.iter().any(|seat| seat.token == *token)
    }

    /// Whether the race kept as `body` (its room, as
    /// the store's `save_live_race` writes it) under `code` has a seat that
    /// `token` opens.
    pub fn body_holds_token(
        code: &str,
        body: &[u8],
        token: &TokenHash,
    ) -> Result<bool, CorruptRace> {
        let room: LiveRace = rmp_serde::from_slice(body)
            .map_err(|error| CorruptRace(format!("running race {code}: {error}")))?;
        Ok(room.holds_token(token))
    }

    /// The race with `moves` (recorded since it was saved, in any order)
    /// added to its seats' logs, each seat's progress time at its latest
    /// move (the counts are the rules' to take from the rebuilt board), and
    /// the race's clock and numbering at the latest of them. Rows the saved logs already hold are skipped; a gap in a
    /// seat's numbering, or a move for a seat the room does not have, is
    /// [`CorruptRace`]: a race is not run again on a guess.
    pub fn with_moves(mut self, mut moves: Vec<LiveMove>) -> Result<LiveRace, CorruptRace> {
        moves.sort_by_key(|kept| (kept.seat, kept.index));
        for kept in moves {
            let code = &self.code;
            let seat = self
                .seats
                .iter_mut()
                .find(|seat| seat.seat == kept.seat)
                .ok_or_else(|| {
                    CorruptRace(format!(
                        "running race {code}: a move of seat {}, which it does not have",
                        kept.seat
                    ))
                })?;
            let next = seat.log.len();
            match usize::try_from(kept.index) {
                Ok(index) if index < next => continue,
                Ok(index) if index == next => {
                    seat.log.push(kept.text);
                    seat.progress.elapsed_ms = kept.elapsed_ms;
                }
                _ => {
                    return Err(CorruptRace(format!(
                        "running race {code}: seat {} has {next} moves, then move {}",
                        kept.seat, kept.index
                    )));
                }
            }
            self.elapsed_ms = self.elapsed_ms.max(kept.elapsed_ms);
            self.seq = self.seq.max(kept.seq);
        }
        Ok(self)
    }
}

/// A rematch every racer accepted: the room to open, with its seats taken
/// already, each waiting for its player to take it with its token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RematchPlan {
    /// The game.
    pub game: GameKind,
    /// The finished room's options (its time limit filled in).
    pub options: RoomOptions,
    /// The series score the rematch races for, if the room is in a series.
    pub series: Option<SeriesScore>,
    /// The seats, in seat order.
    pub seats: Vec<RematchSeat>,
}

/// One seat of a [`RematchPlan`]: the finished room's racer, under the same
/// seat number and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RematchSeat {
    /// The seat number.
    pub seat: u8,
    /// The name, as the finished room showed it.
    pub name: String,
    /// The registered player, if it is one.
    pub player: Option<PlayerId>,
    /// A bot the server runs, and its level.
    pub bot: Option<BotLevel>,
    /// The hash of the token that takes the seat.
    pub token: TokenHash,
}
