//! The deal of the day: one per game and UTC date, the same on every server
//! that shares the daily secret, and one attempt per player.
//!
//! The day's seed stream starts at the first eight bytes of
//! HMAC-SHA-256(secret, `patience-race:daily:v1:{game}:{date}`): nobody
//! without the secret can compute it ahead of time. The deal is the first
//! seed of the stream (start, start + 1, ...) that the solver proves
//! winnable; it is found once, on a blocking thread, and kept in the
//! database, so a restart or a second server deals the same board.
//!
//! An open attempt ([`Play`]) lives in the task of the connection playing it;
//! every accepted move is in the database before the player hears of it, so
//! a new connection (or a restarted server) rebuilds the attempt exactly by
//! replaying the stored moves on the deal. The attempt's clock is the
//! server's wall clock from the attempt's start: dropping the connection does
//! not stop it. An attempt nobody finishes is closed as `out_of_time` by
//! [`sweep`] once its time limit has passed.
//!
//! A day's results become public (leaderboard reveal, replays for anyone)
//! only when the day is **closed**: its UTC date has ended and so has the
//! time limit of any attempt begun in its last moment. Until then the deal
//! could still be in play.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dashmap::DashMap;
use hmac::{KeyInit as _, Mac as _};
use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, DailyAttempt, DailyResult, MAX_WINNING_TIMES, MoveLog, PlayerStatus, Progress,
    RaceResult, Reveal, Standing,
};
use patience_shared::rules::{Effect, Rules as _};
use patience_shared::solver::Budget;
use patience_shared::solver::any::first_winnable_deal;
use tokio::sync::OnceCell;

use crate::database::Database;
use crate::registry::new_secret;
use crate::store::{AttemptKey, DailyDeal, NewRace, Player, StoreError};

/// Milliseconds in a day.
const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// Why a daily request failed.
#[derive(Debug, thiserror::Error)]
pub enum DailyError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The solver's line for the day's deal did not replay: a solver bug.
    #[error("the solver's line for the daily deal did not replay: {0}")]
    Solver(String),
    /// The solver's thread panicked or was cancelled.
    #[error("the daily deal could not be found")]
    Lost,
    /// The player has finished this attempt.
    #[error("you have played today's deal of this game")]
    AlreadyPlayed(Box<DailyResult>),
    /// The clock is before 1970 or after 9999: no date to deal for.
    #[error("the server's clock is out of range")]
    Clock,
}

/// The UTC date of a Unix time in milliseconds, as `YYYY-MM-DD`.
pub fn date_of(now_ms: u64) -> Option<String> {
    let millis = i64::try_from(now_ms).ok()?;
    let timestamp = jiff::Timestamp::from_millisecond(millis).ok()?;
    Some(
        jiff::tz::Offset::UTC
            .to_datetime(timestamp)
            .date()
            .to_string(),
    )
}

/// `text` if it is a real date written `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<String> {
    let date: jiff::civil::Date = text.parse().ok()?;
    let canonical = date.to_string();
    (canonical == text).then_some(canonical)
}

/// Unix milliseconds at which `date` (UTC) begins.
fn start_of(date: &str) -> Option<u64> {
    let date: jiff::civil::Date = date.parse().ok()?;
    let midnight = jiff::tz::Offset::UTC
        .to_timestamp(date.to_datetime(jiff::civil::Time::midnight()))
        .ok()?;
    u64::try_from(midnight.as_millisecond()).ok()
}

/// Whether `date`'s results are final and public at `now_ms`: the day has
/// ended, and so has any attempt begun before its end.
pub fn day_closed(date: &str, now_ms: u64, time_limit_ms: u64) -> bool {
    start_of(date).is_some_and(|start| now_ms >= start + DAY_MS + time_limit_ms)
}

/// The first seed of the day's stream for `game` on `date`.
pub fn stream_start(secret: &[u8; 32], game: GameKind, date: &str) -> u64 {
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret) else {
        // HMAC takes keys of any length; this arm cannot run.
        return 0;
    };
    mac.update(format!("patience-race:daily:v1:{}:{date}", game.slug()).as_bytes());
    let digest = mac.finalize().into_bytes();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// Daily deals, found once each, and the attempts' shared settings.
#[derive(Debug)]
pub struct Daily {
    database: Database,
    secret: [u8; 32],
    budget_positions: u64,
    time_limit_ms: u64,
    deals: DashMap<(GameKind, String), Arc<OnceCell<DailyDeal>>>,
    stopping: Arc<AtomicBool>,
}

impl Daily {
    /// The daily service over `database`, keyed by `secret`.
    pub fn new(
        database: Database,
        secret: [u8; 32],
        budget_positions: u64,
        time_limit_ms: u64,
    ) -> Daily {
        Daily {
            database,
            secret,
            budget_positions,
            time_limit_ms,
            deals: DashMap::new(),
            stopping: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Ends any search for a deal: the server is stopping.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    /// Drops the remembered deals of days before `date` (they stay in the
    /// database).
    pub fn forget_before(&self, date: Option<&str>) {
        if let Some(date) = date {
            self.deals.retain(|(_, day), _| day.as_str() >= date);
        }
    }

    /// Each attempt's time limit.
    pub fn time_limit_ms(&self) -> u64 {
        self.time_limit_ms
    }

    /// The deal of `game` on `date`: from memory, from the database, or
    /// found now by the solver on a blocking thread (one search per game and
    /// date, however many players ask at once).
    pub async fn deal(&self, game: GameKind, date: &str) -> Result<DailyDeal, DailyError> {
        let cell = {
            let key = (game, date.to_string());
            Arc::clone(&self.deals.entry(key).or_default())
        };
        let deal = cell
            .get_or_try_init(|| self.find_deal(game, date.to_string()))
            .await?;
        Ok(deal.clone())
    }

    async fn find_deal(&self, game: GameKind, date: String) -> Result<DailyDeal, DailyError> {
        let lookup_date = date.clone();
        if let Some(deal) = self
            .database
            .call(move |store| store.daily_deal(game, &lookup_date))
            .await?
        {
            return Ok(deal);
        }
        let start = stream_start(&self.secret, game, &date);
        let budget = self.budget_positions;
        tracing::info!(%game, %date, "finding the daily deal");
        let stop = Arc::clone(&self.stopping);
        let proved = tokio::task::spawn_blocking(move || {
            // At shutdown the search ends at once (the runtime waits for
            // blocking threads); nothing half-found is kept.
            let should_stop = || stop.load(Ordering::Relaxed);
            let seeds = (start..).take_while(|_| !should_stop());
            let budget = Budget {
                positions: budget,
                should_stop: Some(&should_stop),
            };
            first_winnable_deal(game, seeds, budget)
        })
        .await
        .map_err(|_| DailyError::Lost)?
        .map_err(|failure| DailyError::Solver(format!("{failure:?}")))?
        .ok_or(DailyError::Lost)?;
        tracing::info!(%game, %date, skipped = proved.skipped, "daily deal found");
        let deal = DailyDeal {
            game,
            date,
            seed: proved.seed,
            salt: new_secret(16),
        };
        // If another server sharing the database found it first, its deal
        // (the same seed, another salt) is the one kept and returned.
        Ok(self
            .database
            .call(move |store| store.save_daily_deal(&deal))
            .await?)
    }

    /// Begins `player`'s attempt at today's deal of `game`, or takes it back
    /// where it stopped.
    pub async fn open(
        &self,
        player: &Player,
        game: GameKind,
        now_ms: u64,
    ) -> Result<(Play, bool), DailyError> {
        let date = date_of(now_ms).ok_or(DailyError::Clock)?;
        let deal = self.deal(game, &date).await?;
        let key = AttemptKey {
            player: player.id,
            game,
            date,
        };
        let lookup = key.clone();
        let limit = u32::try_from(MAX_WINNING_TIMES).unwrap_or(u32::MAX);
        let (stored, standing) = self
            .database
            .call(move |store| {
                let stored = store.attempt(&lookup)?;
                if stored.is_none() {
                    store.begin_attempt(&lookup, now_ms)?;
                }
                let standing = store.winning_times(lookup.game, &lookup.date, limit)?;
                Ok((stored, standing))
            })
            .await?;
        let (started_at_ms, moves, resumed) = match stored {
            None => (now_ms, Vec::new(), false),
            Some(attempt) => match attempt.finish {
                Some(finish) => {
                    let rank = self.rank(&key).await?;
                    return Err(DailyError::AlreadyPlayed(Box::new(DailyResult {
                        game,
                        date: key.date,
                        status: finish.status,
                        progress: finish.progress,
                        rank: rank.0,
                        finishers: rank.1,
                        race_id: finish.race_id,
                    })));
                }
                None => (attempt.started_at_ms, attempt.moves, true),
            },
        };
        let play = Play::replayed(key, player.name.clone(), deal, started_at_ms, &moves)
            .map_err(DailyError::Store)?;
        let play = Play {
            deadline_ms: started_at_ms.saturating_add(self.time_limit_ms),
            standing,
            ..play
        };
        if now_ms >= play.deadline_ms {
            let result = self.finish(&play, PlayerStatus::OutOfTime, now_ms).await?;
            return Err(DailyError::AlreadyPlayed(Box::new(result)));
        }
        Ok((play, resumed))
    }

    async fn rank(&self, key: &AttemptKey) -> Result<(u32, u32), DailyError> {
        let key = key.clone();
        let rank = self.database.call(move |store| store.rank(&key)).await?;
        Ok(rank.map_or((0, 0), |rank| (rank.rank, rank.finishers)))
    }

    /// Writes an accepted move; the player may hear of it once this returns.
    pub async fn record_move(&self, play: &Play) -> Result<(), DailyError> {
        let key = play.key.clone();
        let index = u32::try_from(play.moves.len().saturating_sub(1)).unwrap_or(u32::MAX);
        let Some(text) = play.moves.last().cloned() else {
            return Ok(());
        };
        Ok(self
            .database
            .call(move |store| store.record_move(&key, index, &text))
            .await?)
    }

    /// Closes the attempt as `status` and stores it as a race of one; the
    /// result and its rank come back once committed.
    pub async fn finish(
        &self,
        play: &Play,
        status: PlayerStatus,
        now_ms: u64,
    ) -> Result<DailyResult, DailyError> {
        let progress = play.progress(now_ms.min(play.deadline_ms));
        let race = play.race(status, progress, now_ms);
        let key = play.key.clone();
        let (race_id, rank) = self
            .database
            .call(move |store| {
                let race_id = store.finish_attempt(&key, status, progress, &race)?;
                Ok((race_id, store.rank(&key)?))
            })
            .await?;
        Ok(DailyResult {
            game: play.key.game,
            date: play.key.date.clone(),
            status,
            progress,
            rank: rank.map_or(0, |rank| rank.rank),
            finishers: rank.map_or(0, |rank| rank.finishers),
            race_id,
        })
    }

    /// Closes every open attempt whose time is up, as `out_of_time`; returns
    /// how many it closed.
    pub async fn sweep(&self, now_ms: u64) -> Result<usize, DailyError> {
        let started_by = now_ms.saturating_sub(self.time_limit_ms);
        let expired = self
            .database
            .call(move |store| store.expired_attempts(started_by))
            .await?;
        let mut closed = 0;
        for attempt in expired {
            let deal = self.deal(attempt.key.game, &attempt.key.date).await?;
            let play = match Play::replayed(
                attempt.key,
                attempt.name,
                deal,
                attempt.started_at_ms,
                &attempt.moves,
            ) {
                Ok(play) => play,
                Err(error) => {
                    tracing::error!(%error, "an expired attempt does not replay: left open");
                    continue;
                }
            };
            let play = Play {
                deadline_ms: attempt.started_at_ms.saturating_add(self.time_limit_ms),
                ..play
            };
            match self.finish(&play, PlayerStatus::OutOfTime, now_ms).await {
                Ok(_) => closed += 1,
                // Its player finished it meanwhile.
                Err(DailyError::Store(StoreError::AttemptNotOpen)) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(closed)
    }
}

/// An open daily attempt: the player's position and moves.
#[derive(Debug)]
pub struct Play {
    /// Which attempt.
    pub key: AttemptKey,
    name: String,
    deal: DailyDeal,
    position: AnyGame,
    moves: Vec<String>,
    started_at_ms: u64,
    /// When the attempt's time is up, in Unix milliseconds.
    pub deadline_ms: u64,
    /// The day's finishers and winning times when the attempt opened.
    standing: (u32, Vec<u64>),
}

/// A move the attempt's position accepted, not yet acknowledged.
#[derive(Debug)]
pub struct Accepted {
    /// The move in canonical notation.
    pub text: String,
    /// What it did beyond itself.
    pub effects: Vec<Effect>,
    undo: (
        patience_shared::any::AnyMove,
        patience_shared::rules::Outcome,
    ),
}

/// Why the attempt's position refused a move.
#[derive(Debug)]
pub enum Refused {
    /// Not a move of this position's notation.
    Notation(String),
    /// The rules refuse it.
    Illegal(patience_shared::rules::MoveError),
}

impl Play {
    /// The attempt with `moves` played on the day's deal; a stored move the
    /// rules refuse means the record is corrupt.
    fn replayed(
        key: AttemptKey,
        name: String,
        deal: DailyDeal,
        started_at_ms: u64,
        moves: &[String],
    ) -> Result<Play, StoreError> {
        let mut position = AnyGame::deal(deal.game, deal.seed);
        for (index, text) in moves.iter().enumerate() {
            let mv = position.parse_move(text).map_err(|error| {
                StoreError::Corrupt(format!("daily move {index} {text:?}: {error}"))
            })?;
            position.apply(mv).map_err(|error| {
                StoreError::Corrupt(format!("daily move {index} {text:?}: {error}"))
            })?;
        }
        Ok(Play {
            key,
            name,
            deal,
            position,
            moves: moves.to_vec(),
            started_at_ms,
            deadline_ms: u64::MAX,
            standing: (0, Vec::new()),
        })
    }

    /// The attempt as the player may see it.
    pub fn attempt(&self, now_ms: u64, time_limit_ms: u64, resumed: bool) -> DailyAttempt {
        DailyAttempt {
            game: self.key.game,
            date: self.key.date.clone(),
            commitment: protocol::commitment(self.deal.game, self.deal.seed, &self.deal.salt),
            board: self.position.view(),
            moves: self.moves.clone(),
            progress: self.progress(now_ms),
            time_limit_ms,
            resumed,
            finishers: self.standing.0,
            winning_times_ms: self.standing.1.clone(),
        }
    }

    /// Moves played, cards home, and the server's clock since the start.
    pub fn progress(&self, now_ms: u64) -> Progress {
        Progress {
            moves: u32::try_from(self.moves.len()).unwrap_or(u32::MAX),
            cards_home: protocol::cards_home(&self.position.view()),
            elapsed_ms: now_ms.saturating_sub(self.started_at_ms),
            ..Progress::default()
        }
    }

    /// The board as the player may see it.
    pub fn view(&self) -> patience_shared::rules::View {
        self.position.view()
    }

    /// Plays `text` on the position (the caller writes it, then
    /// acknowledges it, or takes it back with [`Play::take_back`]).
    pub fn play(&mut self, text: &str) -> Result<Accepted, Refused> {
        let mv = self
            .position
            .parse_move(text)
            .map_err(|error| Refused::Notation(error.to_string()))?;
        let canonical = self.position.format_move(mv);
        let outcome = self.position.apply(mv).map_err(Refused::Illegal)?;
        self.moves.push(canonical.clone());
        Ok(Accepted {
            text: canonical,
            effects: outcome.effects.to_vec(),
            undo: (mv, outcome),
        })
    }

    /// Takes back a move that could not be written.
    pub fn take_back(&mut self, accepted: Accepted) {
        let (mv, outcome) = accepted.undo;
        self.position.undo(mv, &outcome);
        self.moves.pop();
    }

    /// How the attempt ends now, if the last move ended it: won, or no
    /// legal move left (daily deals allow no undo).
    pub fn ended(&self) -> Option<PlayerStatus> {
        if self.position.is_won() {
            Some(PlayerStatus::Won)
        } else if self.position.is_stuck() {
            Some(PlayerStatus::Stuck)
        } else {
            None
        }
    }

    fn race(&self, status: PlayerStatus, progress: Progress, now_ms: u64) -> NewRace {
        NewRace {
            daily: Some(self.key.date.clone()),
            ended_at_ms: now_ms,
            result: RaceResult {
                race_id: None,
                standings: vec![Standing {
                    rank: 1,
                    seat: 0,
                    name: self.name.clone(),
                    status,
                    progress,
                }],
                reveal: Reveal {
                    game: self.deal.game,
                    seed: self.deal.seed,
                    salt: self.deal.salt.clone(),
                },
                logs: vec![MoveLog {
                    seat: 0,
                    moves: self.moves.clone(),
                }],
                open_boards: false,
            },
            players: vec![(0, self.key.player)],
        }
    }
}

/// Closes expired attempts now and then until the server stops.
pub async fn sweep_forever(shared: Arc<crate::Shared>) {
    let period = crate::config::millis(shared.config.daily_sweep_interval_ms);
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shared.shutdown.cancelled() => break,
            _ = ticker.tick() => {}
        }
        match shared.daily.sweep(unix_now_ms()).await {
            Ok(0) => {}
            Ok(closed) => tracing::info!(closed, "closed daily attempts whose time was up"),
            Err(error) => tracing::error!(%error, "sweeping daily attempts failed"),
        }
    }
}

/// Finds today's and tomorrow's deals ahead of the players, every hour,
/// so that the first player of a day does not wait for the solver (a
/// Virginia Reel proof can take minutes). Tomorrow's deal is as secret as
/// today's: it is kept only in the database.
pub async fn prepare_forever(shared: Arc<crate::Shared>) {
    let mut ticker = tokio::time::interval(std::time::Duration::from_secs(60 * 60));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shared.shutdown.cancelled() => break,
            _ = ticker.tick() => {}
        }
        let now = unix_now_ms();
        let days = [date_of(now), date_of(now.saturating_add(DAY_MS))];
        shared.daily.forget_before(days[0].as_deref());
        for date in days.iter().flatten() {
            for &game in &shared.config.deal_games {
                let found = tokio::select! {
                    _ = shared.shutdown.cancelled() => return,
                    found = shared.daily.deal(game, date) => found,
                };
                if let Err(error) = found {
                    tracing::error!(%error, %game, %date, "cannot prepare the daily deal");
                }
            }
        }
    }
}

/// The server's wall clock in Unix milliseconds: the one clock of daily
/// attempts and stored races.
pub fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checked against Python's `hmac` module.
    const GOLDEN_START: u64 = 3_163_303_686_179_999_000;

    #[test]
    fn dates_are_utc_days() {
        assert_eq!(date_of(0).as_deref(), Some("1970-01-01"));
        // 2026-12-01T00:00:00Z and one millisecond before it.
        let midnight = 1_796_083_200_000;
        assert_eq!(date_of(midnight).as_deref(), Some("2026-12-01"));
        assert_eq!(date_of(midnight - 1).as_deref(), Some("2026-11-30"));
        assert_eq!(start_of("2026-12-01"), Some(midnight));
    }

    #[test]
    fn only_real_dates_in_the_canonical_form_parse() {
        for good in ["2026-12-01", "2024-02-29"] {
            assert_eq!(parse_date(good).as_deref(), Some(good));
        }
        for bad in [
            "2026-13-01",
            "2025-02-29",
            "2026-12-1",
            "yesterday",
            "",
            "2026-12-01x",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_day_closes_when_its_last_attempt_could_have_ended() {
        let midnight = 1_796_083_200_000; // 2026-12-01T00:00:00Z
        let limit = 60 * 60 * 1000;
        assert!(!day_closed("2026-11-30", midnight - 1, limit));
        assert!(!day_closed("2026-11-30", midnight + limit - 1, limit));
        assert!(day_closed("2026-11-30", midnight + limit, limit));
        assert!(!day_closed("2026-12-01", midnight + limit, limit));
    }

    #[tokio::test]
    async fn the_sweep_closes_expired_attempts_as_out_of_time_with_their_moves() {
        let database = Database::open(None, 16).expect("opens");
        let limit = 1_000;
        let daily = Daily::new(database.clone(), [3; 32], 100_000, limit);
        let date = "2026-12-01".to_string();
        let deal = daily
            .deal(GameKind::ThreeBlindMice, &date)
            .await
            .expect("a deal");
        let position = AnyGame::deal(GameKind::ThreeBlindMice, deal.seed);
        let mut moves = Vec::new();
        position.legal_moves(&mut moves);
        let first = position.format_move(moves[0]);
        let (early, late) = (
            AttemptKey {
                player: 1,
                game: GameKind::ThreeBlindMice,
                date: date.clone(),
            },
            AttemptKey {
                player: 2,
                game: GameKind::ThreeBlindMice,
                date,
            },
        );
        let (early_key, late_key, text) = (early.clone(), late.clone(), first.clone());
        database
            .call(move |store| {
                store.register("ann", &[1; 32], 0)?;
                store.register("bob", &[2; 32], 0)?;
                store.begin_attempt(&early_key, 10_000)?;
                store.record_move(&early_key, 0, &text)?;
                store.begin_attempt(&late_key, 10_500)?;
                Ok(())
            })
            .await
            .expect("stored");

        // At 11,200 only the first attempt's hour (here a second) is up.
        assert_eq!(daily.sweep(11_200).await.expect("sweeps"), 1);
        let stored = database
            .call(move |store| Ok((store.attempt(&early)?, store.attempt(&late)?)))
            .await
            .expect("reads");
        let finish = stored.0.and_then(|attempt| attempt.finish).expect("closed");
        assert_eq!(finish.status, PlayerStatus::OutOfTime);
        assert_eq!(finish.progress.moves, 1);
        assert_eq!(
            finish.progress.elapsed_ms, limit,
            "the clock stops at the limit"
        );
        assert_eq!(stored.1.and_then(|attempt| attempt.finish), None);
        assert_eq!(daily.sweep(11_200).await.expect("sweeps"), 0);
    }

    #[test]
    fn the_stream_start_is_pinned() {
        // A golden value: changing the derivation changes every server's
        // daily deal, so it is a breaking change.
        assert_eq!(
            stream_start(&[7u8; 32], GameKind::ThreeBlindMice, "2026-12-01"),
            GOLDEN_START
        );
    }

    #[test]
    fn the_stream_depends_on_secret_game_and_date() {
        let secret = [7u8; 32];
        let base = stream_start(&secret, GameKind::ThreeBlindMice, "2026-12-01");
        assert_eq!(
            base,
            stream_start(&secret, GameKind::ThreeBlindMice, "2026-12-01")
        );
        assert_ne!(base, stream_start(&secret, GameKind::Indian, "2026-12-01"));
        assert_ne!(
            base,
            stream_start(&secret, GameKind::ThreeBlindMice, "2026-12-02")
        );
        assert_ne!(
            base,
            stream_start(&[8u8; 32], GameKind::ThreeBlindMice, "2026-12-01")
        );
    }
}
