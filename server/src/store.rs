//! What the server keeps: players, finished races, daily deals and daily
//! attempts, behind the small [`Store`] trait.
//!
//! [`Store`] is synchronous and knows nothing of tasks or sockets: the
//! [`database`](crate::database) thread owns the one store and runs every
//! call there, batching concurrent calls into one transaction. Its queries
//! and their row mappings are written once ([`sql::SqlStore`]) over a small
//! backend interface (`store/backend.rs`), which two databases implement, with the same
//! semantics and the same errors:
//!
//! - [`sqlite::SqliteStore`], the embedded default: one file in the data
//!   directory, nothing to install;
//! - [`postgres::PostgresStore`], chosen with `--database-url`: a
//!   PostgreSQL server, for operators who run one already or want several
//!   servers' data in one place.
//!
//! One suite of tests (`store/tests.rs`) runs against both; what only one
//! of them has (SQLite's file format, PostgreSQL's aborted transactions)
//! is tested beside it.
//!
//! Every method that writes more than one row is atomic on its own, so a
//! failed call leaves nothing half-written whatever else shares its batch;
//! the database thread also runs each job (a closure that may make several
//! calls) in its own savepoint, so a job that fails leaves nothing at all.

mod backend;
mod columns;
pub mod postgres;
pub mod ratings;
pub mod sql;
pub mod sqlite;
pub mod tally;

#[cfg(test)]
pub(crate) mod tests;

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    DaySummary, LeaderboardRow, PlayerRecord, PlayerStatus, Progress, RaceRecord, StandingRow,
    Unranked,
};

pub use ratings::{HistoryRow, RatedRace, RatingChange, RatingHistory, StoredRating};
pub use tally::PeriodSpan;

use crate::signup::SavedBucket;

pub use crate::secrets::TokenHash;
/// The records a room hands the store are the room core's.
pub use patience_room_core::records::{LiveMove, LiveRace, LiveSeat, NewRace, PlayerId};

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another player has this name (names are unique whatever their case).
    #[error("the name {0:?} is taken")]
    NameTaken(String),
    /// The player already has an attempt at this daily deal.
    #[error("this daily attempt has already begun")]
    AttemptExists,
    /// The daily attempt is not open (never begun, or finished).
    #[error("this daily attempt is not open")]
    AttemptNotOpen,
    /// The daily attempt already has a move at this index.
    #[error("move {0} of this daily attempt is already recorded")]
    MoveConflict(u32),
    /// A stored value that cannot be read back.
    #[error("corrupt record: {0}")]
    Corrupt(String),
    /// The database was written by a newer server.
    #[error("the database has schema version {found}; this server knows up to {known}")]
    NewerSchema {
        /// The database's version.
        found: u32,
        /// The newest this code knows.
        known: u32,
    },
    /// The database engine failed (SQLite).
    #[error(transparent)]
    Database(#[from] rusqlite::Error),
    /// The database server failed, or could not be reached (PostgreSQL).
    /// Shown with its causes (the client's own message alone says little,
    /// e.g. "db error"), so it has no source of its own.
    #[error("postgresql: {}", postgres_message(.0))]
    Postgres(::postgres::Error),
    /// The batch this call was part of could not be committed: nothing of
    /// it was kept.
    #[error("the database could not commit: {0}")]
    Commit(String),
    /// A write of a running race by a room that no longer owns it: another
    /// server claimed the race since ([`Store::claim_live_race`]), so this
    /// one's writes are refused (a fencing token: a node that was paused or
    /// cut off past its lease cannot write over the race's new owner).
    #[error("the running race {code} was claimed by another server")]
    Fenced {
        /// The room's code.
        code: String,
    },
    /// The database thread has stopped, or could not run the call in a
    /// transaction of its own (which then wrote nothing).
    #[error("the database is unavailable")]
    Closed,
    /// The call panicked on the database thread: nothing of it was kept,
    /// and the thread serves on.
    #[error("the database call panicked")]
    Panicked,
    /// Not run: an earlier write of the same ordered sequence failed
    /// (`database::Sequence`), and this one must not commit without it.
    #[error("not written: an earlier write it follows failed")]
    Skipped,
    /// Not queued: the database thread's queue was full (it is behind, or
    /// stuck), and the caller would not wait (`Database::queue_in_now`).
    #[error("not written: the database's queue is full")]
    QueueFull,
}

impl From<patience_room_core::records::CorruptRace> for StoreError {
    fn from(corrupt: patience_room_core::records::CorruptRace) -> StoreError {
        StoreError::Corrupt(corrupt.0)
    }
}

impl StoreError {
    /// Whether the same call may succeed if it is made again: the database
    /// was out of reach, busy, or failed for a moment. A refusal that
    /// follows from what is stored (a name taken, a race claimed by
    /// another server, a row that already exists) is permanent, and so
    /// is a record that cannot be read.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::NameTaken(_)
            | StoreError::AttemptExists
            | StoreError::AttemptNotOpen
            | StoreError::MoveConflict(_)
            | StoreError::Corrupt(_)
            | StoreError::NewerSchema { .. }
            | StoreError::Fenced { .. } => false,
            StoreError::Database(rusqlite::Error::SqliteFailure(failure, _)) => {
                failure.code != rusqlite::ErrorCode::ConstraintViolation
            }
            StoreError::Database(_) => false,
            // Class 23: an integrity constraint refused the row.
            StoreError::Postgres(error) => error
                .as_db_error()
                .is_none_or(|db| !db.code().code().starts_with("23")),
            StoreError::Commit(_)
            | StoreError::Closed
            | StoreError::Panicked
            | StoreError::Skipped
            | StoreError::QueueFull => true,
        }
    }
}

impl From<::postgres::Error> for StoreError {
    fn from(error: ::postgres::Error) -> StoreError {
        StoreError::Postgres(error)
    }
}

/// A PostgreSQL error and its causes, one after the other.
fn postgres_message(error: &::postgres::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// A registered player.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Player {
    /// Its id.
    pub id: PlayerId,
    /// Its name, as registered.
    pub name: String,
    /// When it registered: Unix milliseconds, the server's clock.
    pub created_at_ms: u64,
}

/// Which daily attempt: one per player, game and UTC date.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AttemptKey {
    /// Whose.
    pub player: PlayerId,
    /// The game.
    pub game: GameKind,
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
}

/// The deal of a game on a date, once found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DailyDeal {
    /// The game.
    pub game: GameKind,
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// The first seed of the day's stream that the solver proved winnable.
    pub seed: u64,
    /// The commitment's salt, 32 hex digits.
    pub salt: String,
}

/// A daily attempt as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// When it began: Unix milliseconds, the server's clock.
    pub started_at_ms: u64,
    /// Every accepted move, in order.
    pub moves: Vec<String>,
    /// When each move was accepted (Unix milliseconds); `None` for moves
    /// stored before move times were kept.
    pub move_times_ms: Vec<Option<u64>>,
    /// How it ended, once it has.
    pub finish: Option<AttemptFinish>,
}

/// Whether a finished attempt may rank, as stored with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Eligibility {
    /// The account was registered on the attempt's day or later.
    pub new_account: bool,
    /// Marked for review: its moves came faster than a person plays. An
    /// operator clears the mark in the database (docs/OPERATIONS.md says how).
    pub review: bool,
}

impl Eligibility {
    /// Why the attempt is off the ranking, if it is; a mark for review
    /// is named first, since it is the one an operator acts on.
    pub fn unranked(self) -> Option<Unranked> {
        if self.review {
            Some(Unranked::Review)
        } else if self.new_account {
            Some(Unranked::NewAccount)
        } else {
            None
        }
    }
}

/// How a daily attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptFinish {
    /// Won, resigned, stuck or out of time.
    pub status: PlayerStatus,
    /// Moves, cards home and elapsed time at the end.
    pub progress: Progress,
    /// When it ended: Unix milliseconds.
    pub finished_at_ms: u64,
    /// The attempt as a race of one.
    pub race_id: u64,
    /// Whether it ranks.
    pub eligibility: Eligibility,
}

/// Where an attempt ranks among a day's finished attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rank {
    /// 1 for the best ranked attempt (for one off the ranking, the place
    /// it would have taken).
    pub rank: u32,
    /// Finished attempts on the ranking.
    pub finishers: u32,
    /// Its place on the day's board, 1 for the top, counting every
    /// finished attempt, ranked or not.
    pub place: u32,
}

/// A day's leaderboard of one game, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaderboard {
    /// Finished attempts on the ranking.
    pub finishers: u32,
    /// Finished attempts off the ranking.
    pub unranked: u32,
    /// Attempts still open.
    pub playing: u32,
    /// The top rows, best first.
    pub rows: Vec<LeaderboardRow>,
    /// The asking player's row, if it has finished.
    pub own: Option<LeaderboardRow>,
}

/// An open daily attempt whose time is up, for the sweeper to close.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiredAttempt {
    /// Which.
    pub key: AttemptKey,
    /// The player's name.
    pub name: String,
    /// When the player registered.
    pub registered_at_ms: u64,
    /// When it began.
    pub started_at_ms: u64,
    /// Its moves.
    pub moves: Vec<String>,
    /// When each move was accepted, as in [`Attempt::move_times_ms`].
    pub move_times_ms: Vec<Option<u64>>,
}

/// Which player's records are asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerLookup<'a> {
    /// By id.
    Id(PlayerId),
    /// By name, whatever its case (names are unique whatever their case).
    Name(&'a str),
}

/// A page of a game's past days, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaysFound {
    /// The tallied days that had at least one finished attempt.
    pub days: Vec<DaySummary>,
    /// Whether older ones are left.
    pub more: bool,
}

/// A period's standings of one game, as the store sums them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standings {
    /// Players with at least one ranked attempt in the period.
    pub players: u32,
    /// The top rows, best first.
    pub rows: Vec<StandingRow>,
    /// The asking player's row, if it has one.
    pub own: Option<StandingRow>,
}

/// Everything the server keeps. Calls run one at a time on the database
/// thread, inside transactions that [`Store::begin`] and [`Store::commit`]
/// bracket; each job of a transaction (one or more calls) runs between
/// [`Store::savepoint`] and [`Store::release_savepoint`], or is undone by
/// [`Store::rollback_to_savepoint`] if it fails.
pub trait Store: Send {
    /// Starts a transaction holding the calls that follow.
    fn begin(&mut self) -> Result<(), StoreError>;
    /// Makes every call since [`Store::begin`] durable.
    fn commit(&mut self) -> Result<(), StoreError>;
    /// Drops every call since [`Store::begin`].
    fn rollback(&mut self);
    /// Marks where one job of the transaction begins, so that
    /// [`Store::rollback_to_savepoint`] can undo that job alone and leave
    /// the others of its batch.
    fn savepoint(&mut self) -> Result<(), StoreError>;
    /// Keeps the writes since [`Store::savepoint`] in the transaction
    /// (durable once it commits) and ends the savepoint.
    fn release_savepoint(&mut self) -> Result<(), StoreError>;
    /// Undoes every write since [`Store::savepoint`] and ends the
    /// savepoint; the writes before it stay in the transaction.
    fn rollback_to_savepoint(&mut self) -> Result<(), StoreError>;

    /// Whether the store has lost its connection to a database server, so
    /// that no call can succeed until [`Store::reconnect`] does. An embedded
    /// store (SQLite) has no connection to lose.
    fn connection_lost(&self) -> bool {
        false
    }
    /// Connects again after [`Store::connection_lost`]: a fresh session,
    /// outside any transaction, with nothing of the lost one carried over
    /// (what it had not committed was never acknowledged).
    fn reconnect(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The server's secret for daily deals: the stored one, or `fresh`
    /// stored now if there is none.
    fn server_secret(&mut self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError>;

    /// Creates a player.
    fn register(
        &mut self,
        name: &str,
        token: &TokenHash,
        now_ms: u64,
    ) -> Result<Player, StoreError>;
    /// The player whose token hashes to `token`: any of the account's
    /// tokens not signed out.
    fn player_by_token(&mut self, token: &TokenHash) -> Result<Option<Player>, StoreError>;
    /// Signs out one token: it no longer names its player (the account's
    /// other tokens stay). Whether it named one.
    fn revoke_token(&mut self, token: &TokenHash) -> Result<bool, StoreError>;
    /// Keeps an address's registration bucket as it stands after a counted
    /// registration, replacing the one kept before.
    fn save_registration_bucket(&mut self, bucket: &SavedBucket) -> Result<(), StoreError>;
    /// The kept registration buckets, the most recently changed first, at
    /// most `limit`; a row whose address does not parse is skipped.
    fn registration_buckets(&mut self, limit: usize) -> Result<Vec<SavedBucket>, StoreError>;
    /// Keeps a new sign-in code of `player` (its hash), made at `now_ms`
    /// and valid until `expires_at_ms`; the player's earlier unused code,
    /// and every code expired by `now_ms`, go.
    fn save_sign_in_code(
        &mut self,
        player: PlayerId,
        code: &TokenHash,
        now_ms: u64,
        expires_at_ms: u64,
    ) -> Result<(), StoreError>;
    /// Redeems a sign-in code at `now_ms`, once: if it is kept and not
    /// expired it goes, `token` becomes a new token of its player, and the
    /// player is returned; `None` if it is unknown, used or expired.
    fn redeem_sign_in_code(
        &mut self,
        code: &TokenHash,
        token: &TokenHash,
        now_ms: u64,
    ) -> Result<Option<Player>, StoreError>;

    /// The deal of `game` on `date`, if found before.
    fn daily_deal(&mut self, game: GameKind, date: &str) -> Result<Option<DailyDeal>, StoreError>;
    /// Keeps a day's deal; if one is kept already, that one stays and is
    /// returned (the first server to find it wins).
    fn save_daily_deal(&mut self, deal: &DailyDeal) -> Result<DailyDeal, StoreError>;

    /// A player's attempt at a daily deal.
    fn attempt(&mut self, key: &AttemptKey) -> Result<Option<Attempt>, StoreError>;
    /// Begins an attempt; [`StoreError::AttemptExists`] if there is one.
    fn begin_attempt(&mut self, key: &AttemptKey, started_at_ms: u64) -> Result<(), StoreError>;
    /// Records the attempt's move number `index` (from 0), accepted at
    /// `at_ms`.
    fn record_move(
        &mut self,
        key: &AttemptKey,
        index: u32,
        text: &str,
        at_ms: u64,
    ) -> Result<(), StoreError>;
    /// Closes an open attempt and stores it as a race of one, ranked or
    /// not as `eligibility` says; returns the race's id.
    /// [`StoreError::AttemptNotOpen`] if it is not open.
    fn finish_attempt(
        &mut self,
        key: &AttemptKey,
        status: PlayerStatus,
        progress: Progress,
        race: &NewRace,
        eligibility: Eligibility,
    ) -> Result<u64, StoreError>;
    /// The daily attempt stored as race `race_id`, if it is one.
    fn attempt_of_race(&mut self, race_id: u64) -> Result<Option<AttemptKey>, StoreError>;
    /// Open attempts that began at or before `started_by_ms`.
    fn expired_attempts(&mut self, started_by_ms: u64) -> Result<Vec<ExpiredAttempt>, StoreError>;
    /// How many attempts of the day have finished on the ranking, and the
    /// winning times among them, fastest first (at most `limit`).
    fn winning_times(
        &mut self,
        game: GameKind,
        date: &str,
        limit: u32,
    ) -> Result<(u32, Vec<u64>), StoreError>;
    /// Where a finished attempt ranks among the ranked ones (for one off
    /// the ranking, the place it would have taken).
    fn rank(&mut self, key: &AttemptKey) -> Result<Option<Rank>, StoreError>;
    /// A day's leaderboard: `limit` rows of the board from the top (every
    /// finished attempt in the ranking's order, one off the ranking marked
    /// and standing where it would have ranked), and `player`'s own row.
    fn leaderboard(
        &mut self,
        game: GameKind,
        date: &str,
        limit: u32,
        player: Option<PlayerId>,
    ) -> Result<Leaderboard, StoreError>;

    /// Tallies the closed day `date` of `game` once (see [`tally`]): final
    /// ranks, the day's summary, points into the week's and the month's
    /// totals, and each player's record. Returns whether it tallied now
    /// (`false`: it was tallied before, and nothing changed). The caller
    /// says the day is closed; the store does not read a clock.
    fn tally_day(&mut self, game: GameKind, date: &str) -> Result<bool, StoreError>;
    /// The days with a deal, on or before `closed_through`, not yet
    /// tallied: by game, oldest first.
    fn untallied_days(
        &mut self,
        closed_through: &str,
    ) -> Result<Vec<(GameKind, String)>, StoreError>;
    /// Tallies every day on or before `closed_through` (the last closed
    /// day) not yet tallied, each game's oldest first, each day in a write
    /// of its own; returns how many it tallied.
    fn tally_closed_days(&mut self, closed_through: &str) -> Result<u32, StoreError> {
        let mut tallied = 0;
        for (game, date) in self.untallied_days(closed_through)? {
            tallied += u32::from(self.tally_day(game, &date)?);
        }
        Ok(tallied)
    }
    /// A game's tallied days that had a finished attempt, newest first,
    /// before `before` if given: at most `limit`, each with its podium (the
    /// first three of its final ranking) and its deal.
    fn daily_days(
        &mut self,
        game: GameKind,
        before: Option<&str>,
        limit: u32,
    ) -> Result<DaysFound, StoreError>;
    /// A player's records over tallied days, one per game played; `None`
    /// if no player is found.
    fn player_record(
        &mut self,
        player: PlayerLookup<'_>,
    ) -> Result<Option<PlayerRecord>, StoreError>;
    /// A period's standings of `game`: the tallied totals, plus the live
    /// points of each of its days up to `today` not yet tallied (from their
    /// rankings as they stand); `limit` rows from the top and `player`'s.
    fn standings(
        &mut self,
        game: GameKind,
        span: &PeriodSpan,
        today: &str,
        limit: u32,
        player: Option<PlayerId>,
    ) -> Result<Standings, StoreError>;

    /// Stores a finished race; returns its id.
    fn record_race(&mut self, race: &NewRace) -> Result<u64, StoreError>;
    /// The stored ratings at `game` of those of `players` who have one.
    fn ratings_of(
        &mut self,
        game: GameKind,
        players: &[PlayerId],
    ) -> Result<Vec<StoredRating>, StoreError>;
    /// Keeps a rated race's changes: a history row per racer, and each
    /// racer's rating. Writes nothing and answers `false` if the race's
    /// changes were kept already, so a race is rated once however often
    /// it is applied.
    fn record_ratings(&mut self, race: &RatedRace) -> Result<bool, StoreError>;
    /// Every rating at `game` whose last rated race ended at or after
    /// `since_ms`, in no particular order.
    fn ratings_since(
        &mut self,
        game: GameKind,
        since_ms: u64,
    ) -> Result<Vec<StoredRating>, StoreError>;
    /// A player's rating at `game` and its history, newest first (at most
    /// `limit` rows); `None` if there is no such player. The rating is
    /// `None` for a player with no rated race of the game.
    fn rating_history(
        &mut self,
        player: PlayerLookup<'_>,
        game: GameKind,
        limit: u32,
    ) -> Result<Option<RatingHistory>, StoreError>;
    /// A finished race.
    fn race(&mut self, race_id: u64) -> Result<Option<RaceRecord>, StoreError>;
    /// The latest finished race raced in the room `code`, if any.
    fn race_of_room(&mut self, code: &str) -> Result<Option<u64>, StoreError>;

    /// Keeps a running race's room as it stands (seats, tokens, statuses,
    /// clock, and each seat's moves so far) under its code, replacing what
    /// was kept; the moves it holds need no [`Store::record_live_move`] rows
    /// any more, which are dropped, and its deal leaves the supply of proved
    /// deals ([`Store::keep_proved_deal`]).
    ///
    /// Every write of a running race names the claim it is made under
    /// (`epoch`, 0 for the server that started the race): a write under an
    /// older claim than the race's latest is [`StoreError::Fenced`] and
    /// changes nothing.
    fn save_live_race(&mut self, room: &LiveRace) -> Result<(), StoreError>;
    /// Keeps one accepted move of a running race kept by
    /// [`Store::save_live_race`]: move number `index` (from 0) of `seat`'s
    /// log, accepted at `elapsed_ms` on the race's clock when the room's
    /// events were numbered up to `seq`. [`StoreError::Fenced`] under an
    /// old claim, or if the race is not kept.
    fn record_live_move(&mut self, code: &str, kept: &LiveMove) -> Result<(), StoreError>;
    /// Forgets the running race under `code` (its result is stored, or it
    /// cannot run again); nothing kept is not an error, one kept under a
    /// later claim than `epoch` is [`StoreError::Fenced`].
    fn end_live_race(&mut self, code: &str, epoch: u64) -> Result<(), StoreError>;
    /// Claims the running race under `code` for the server about to run it
    /// (at a start, or taking it over from a node that is gone): its claim
    /// number goes up by one, which fences off every write of the room that
    /// ran it until now, and the race is read back under the new claim, as
    /// [`Store::live_races`] gives it. `None` if it is not kept.
    fn claim_live_race(&mut self, code: &str) -> Result<Option<LiveRace>, StoreError>;
    /// Names the node this store writes for in a cluster: a running race
    /// it saves or claims is kept as that node's, until another node claims
    /// it ([`Store::orphaned_races`] finds the races of nodes that are
    /// gone). A server alone keeps its races under `""`.
    fn set_node(&mut self, node: &str);
    /// Keeps `node`'s lease in the store until `until_ms` (Unix
    /// milliseconds, the node's clock): its running races are not
    /// orphaned before then. A node whose lease was never renewed has one
    /// that has ended.
    fn renew_node_lease(&mut self, node: &str, until_ms: u64) -> Result<(), StoreError>;
    /// The codes of the running races kept as a node's whose lease ended
    /// before `now_ms`, by code: the candidates for failover. Found through
    /// the nodes' leases and an index on each race's node, so it costs in
    /// proportion to the nodes and the races it finds, and it reads no move
    /// and no race of a node whose lease runs.
    fn orphaned_races(&mut self, now_ms: u64) -> Result<Vec<String>, StoreError>;
    /// Whether a running race is kept under `code`.
    fn keeps_live_race(&mut self, code: &str) -> Result<bool, StoreError>;
    /// Every running race kept, each seat's log with every move recorded
    /// since its room was saved, its clock and numbering at the latest of
    /// them. Nothing is forgotten: the server that reads them runs them on,
    /// keeping them as it goes.
    fn live_races(&mut self) -> Result<Vec<LiveRace>, StoreError>;
    /// The code of the running race one of whose seats `token` (a resume
    /// token's hash) opens, as last kept; for a node that must find a
    /// seat's race when the cluster's Redis has lost the token's pointer.
    /// Reads each running race's room, never its moves.
    fn live_race_of_token(&mut self, token: &TokenHash) -> Result<Option<String>, StoreError> {
        Ok(self
            .live_races()?
            .into_iter()
            .find(|race| race.holds_token(token))
            .map(|race| race.code))
    }

    /// Adds a deal proved winnable to `owner`'s supply (the node's id in a
    /// cluster, `""` for a server alone), so that a restart starts with it.
    /// A deal leaves the supply when a race on it is first kept
    /// ([`Store::save_live_race`] forgets it in the same write), so no deal
    /// is dealt twice, whatever the server's way of stopping.
    fn keep_proved_deal(
        &mut self,
        owner: &str,
        game: GameKind,
        seed: u64,
    ) -> Result<(), StoreError>;
    /// `owner`'s supply of proved deals, oldest first.
    fn proved_deals(&mut self, owner: &str) -> Result<Vec<(GameKind, u64)>, StoreError>;
}
