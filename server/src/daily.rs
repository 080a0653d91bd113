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
//! An open attempt ([`Play`]) lives in the task of the connection playing it,
//! as a room of one seat on the room core ([`DailyCore`]): the same judge
//! as a racer's moves, its time limit a deadline on the server's clock. The
//! connection carries the core's outputs to the store calls here and to
//! the player. Every accepted move is in the database before the player
//! hears of it, so
//! a new connection (or a restarted server) rebuilds the attempt exactly by
//! replaying the stored moves on the deal. The attempt's clock is the
//! server's wall clock from the attempt's start: dropping the connection does
//! not stop it. An attempt nobody finishes is closed as `out_of_time` by
//! [`sweep`](Daily::sweep) once its time limit has passed.
//!
//! A day's results become public (leaderboard reveal, replays for anyone)
//! only when the day is **closed**: its UTC date has ended and so has the
//! time limit of any attempt begun in its last moment. Until then the deal
//! could still be in play, and its seed and salt never leave the server.
//!
//! Not every finished attempt ranks ([`Eligibility`]): an account
//! registered on the attempt's day or later plays unranked, and so does an
//! attempt whose moves came faster than a person plays ([`too_fast`]),
//! which is also marked for an operator's review. Times are the caller's
//! reading of the server's [`Clock`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dashmap::DashMap;
use hmac::{KeyInit as _, Mac as _};
use patience_room_core::daily::{DailyCore, MoveWrite, StoredAttempt};
use patience_room_core::metrics::{RoomCounts, RoomMetrics};
use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, DailyAttempt, DailyResult, LeaderboardUpdate, MAX_WINNING_TIMES, MoveLog, OwnAttempt,
    PlayerStatus, Progress, RaceRecord, RaceResult, Reveal, Standing, Unranked,
};
use patience_shared::rules::Rules as _;
use patience_shared::solver::Budget;
use patience_shared::solver::any::first_winnable_deal;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::database::Database;
use crate::leaderboard_feed::LeaderboardFeed;
use crate::secrets::new_secret;
use crate::store::{AttemptKey, DailyDeal, Eligibility, Leaderboard, NewRace, Player, StoreError};

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
pub fn start_of(date: &str) -> Option<u64> {
    let date: jiff::civil::Date = date.parse().ok()?;
    let midnight = jiff::tz::Offset::UTC
        .to_timestamp(date.to_datetime(jiff::civil::Time::midnight()))
        .ok()?;
    u64::try_from(midnight.as_millisecond()).ok()
}

/// Whether `date`'s results are final and public at `now_ms`: the day has
/// ended, and so has any attempt begun before its end.
pub fn day_closed(date: &str, now_ms: u64, time_limit_ms: u64) -> bool {
    close_time(date, time_limit_ms).is_some_and(|closes| now_ms >= closes)
}

/// When `date` closes: its end, and the time limit of an attempt begun in
/// its last moment.
pub fn close_time(date: &str, time_limit_ms: u64) -> Option<u64> {
    Some(
        start_of(date)?
            .saturating_add(DAY_MS)
            .saturating_add(time_limit_ms),
    )
}

/// The newest date whose results are final at `now_ms` (every date on or
/// before it is closed, see [`day_closed`]); `None` before the first.
pub fn last_closed_date(now_ms: u64, time_limit_ms: u64) -> Option<String> {
    date_of(now_ms.checked_sub(DAY_MS.checked_add(time_limit_ms)?)?)
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

/// The review rule: moves faster than a person plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaceRule {
    /// Consecutive moves judged together; 0 turns the rule off.
    pub window_moves: usize,
    /// A window whose median gap is under this is too fast.
    pub median_gap_ms: u64,
}

/// Whether an attempt's moves came faster than a person plays under
/// `rule`: some `rule.window_moves` consecutive moves whose median gap is
/// under `rule.median_gap_ms`. A move's gap is the time since the move
/// before it (for the first move, since the attempt began); the median of
/// an even number of gaps is the mean of the middle two. A window holding
/// a move of unknown time (stored before times were kept) is not judged.
pub fn too_fast(rule: PaceRule, started_at_ms: u64, move_times_ms: &[Option<u64>]) -> bool {
    let window = rule.window_moves;
    if window == 0 || move_times_ms.len() < window {
        return false;
    }
    let mut previous = Some(started_at_ms);
    let gaps: Vec<Option<u64>> = move_times_ms
        .iter()
        .map(|&time| {
            let gap = time
                .zip(previous)
                .map(|(now, before)| now.saturating_sub(before));
            previous = time;
            gap
        })
        .collect();
    let mut sorted = Vec::with_capacity(window);
    gaps.windows(window).any(|gaps| {
        sorted.clear();
        for gap in gaps {
            match gap {
                Some(gap) => sorted.push(*gap),
                None => return false,
            }
        }
        sorted.sort_unstable();
        let middle = window / 2;
        // Doubled on both sides so that the mean of two stays an integer.
        let doubled_median = if window.is_multiple_of(2) {
            sorted[middle - 1] + sorted[middle]
        } else {
            2 * sorted[middle]
        };
        doubled_median < 2 * rule.median_gap_ms
    })
}

/// Whether an attempt at the deal of `date` ranks: its account must be
/// older than the day, its pace a person's.
pub fn eligibility(
    rule: PaceRule,
    date: &str,
    registered_at_ms: u64,
    started_at_ms: u64,
    move_times_ms: &[Option<u64>],
) -> Eligibility {
    Eligibility {
        new_account: is_new_account(date, registered_at_ms),
        review: too_fast(rule, started_at_ms, move_times_ms),
    }
}

/// Whether an account registered at `registered_at_ms` is too new to rank
/// on the deal of `date`: it was registered on that day (UTC) or later.
pub fn is_new_account(date: &str, registered_at_ms: u64) -> bool {
    // A date that does not parse cannot be begun after: ranked as old.
    start_of(date).is_some_and(|start| registered_at_ms >= start)
}

/// Daily deals, found once each, and the attempts' shared settings.
#[derive(Debug)]
pub struct Daily {
    database: Database,
    secret: [u8; 32],
    budget_positions: u64,
    time_limit_ms: u64,
    pace: PaceRule,
    deals: DashMap<(GameKind, String), Arc<OnceCell<DailyDeal>>>,
    stopping: Arc<AtomicBool>,
    feed: LeaderboardFeed,
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
            pace: PaceRule {
                window_moves: 20,
                median_gap_ms: 150,
            },
            deals: DashMap::new(),
            stopping: Arc::new(AtomicBool::new(false)),
            feed: LeaderboardFeed::new(),
        }
    }

    /// The same service with `pace` as its review rule.
    pub fn with_pace_rule(self, pace: PaceRule) -> Daily {
        Daily { pace, ..self }
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

    /// Where every change to a day's leaderboard is published.
    pub fn feed(&self) -> &LeaderboardFeed {
        &self.feed
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
    /// `metrics` counts the attempt's moves.
    pub async fn open(
        &self,
        player: &Player,
        game: GameKind,
        now_ms: u64,
        metrics: Arc<dyn RoomMetrics>,
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
        let (stored, standing, begun) = self
            .database
            .call(move |store| {
                let stored = store.attempt(&lookup)?;
                let begun = if stored.is_none() {
                    store.begin_attempt(&lookup, now_ms)?;
                    Some(store.leaderboard(lookup.game, &lookup.date, 0, None)?)
                } else {
                    None
                };
                let standing = store.winning_times(lookup.game, &lookup.date, limit)?;
                Ok((stored, standing, begun))
            })
            .await?;
        if let Some(board) = begun {
            self.publish(&key, board);
        }
        let (started_at_ms, moves, resumed) = match stored {
            None => (now_ms, (Vec::new(), Vec::new()), false),
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
                        unranked: finish.eligibility.unranked(),
                    })));
                }
                None => (
                    attempt.started_at_ms,
                    (attempt.moves, attempt.move_times_ms),
                    true,
                ),
            },
        };
        let (moves, move_times_ms) = moves;
        let play = Play::replayed(
            key,
            (player.name.clone(), player.created_at_ms),
            deal,
            StoredTimes {
                started_at_ms,
                deadline_ms: started_at_ms.saturating_add(self.time_limit_ms),
                now_ms,
            },
            (&moves, move_times_ms),
            metrics,
        )
        .map_err(DailyError::Store)?;
        let play = Play { standing, ..play };
        if now_ms >= play.core.deadline_ms() {
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

    /// Writes the attempt's accepted move `write`; the player may hear of
    /// it once this returns.
    pub async fn record_move(&self, key: &AttemptKey, write: MoveWrite) -> Result<(), DailyError> {
        let key = key.clone();
        Ok(self
            .database
            .call(move |store| store.record_move(&key, write.index, &write.text, write.at_ms))
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
        let progress = play.progress(now_ms);
        let race = play.race(status, progress, now_ms);
        let key = play.key.clone();
        let eligibility = eligibility(
            self.pace,
            &play.key.date,
            play.registered_at_ms,
            play.core.started_at_ms(),
            play.core.move_times_ms(),
        );
        let (race_id, rank, board) = self
            .database
            .call(move |store| {
                let race_id = store.finish_attempt(&key, status, progress, &race, eligibility)?;
                let board = store.leaderboard(key.game, &key.date, 0, Some(key.player))?;
                Ok((race_id, store.rank(&key)?, board))
            })
            .await?;
        self.publish(&play.key, board);
        Ok(DailyResult {
            game: play.key.game,
            date: play.key.date.clone(),
            status,
            progress,
            rank: rank.map_or(0, |rank| rank.rank),
            finishers: rank.map_or(0, |rank| rank.finishers),
            race_id,
            unranked: eligibility.unranked(),
        })
    }

    /// Tells the day's followers of a change the store has committed: its
    /// counts after it, and the finished attempt's row, ranked or not.
    fn publish(&self, key: &AttemptKey, board: Leaderboard) {
        self.feed.publish(LeaderboardUpdate {
            game: key.game,
            date: key.date.clone(),
            row: board.own,
            finishers: board.finishers,
            unranked: board.unranked,
            playing: board.playing,
        });
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
                (attempt.name, attempt.registered_at_ms),
                deal,
                StoredTimes {
                    started_at_ms: attempt.started_at_ms,
                    deadline_ms: attempt.started_at_ms.saturating_add(self.time_limit_ms),
                    now_ms,
                },
                (&attempt.moves, attempt.move_times_ms),
                // Closed as it stands: no move is played, nothing counted.
                Arc::new(RoomCounts::default()),
            ) {
                Ok(play) => play,
                Err(error) => {
                    tracing::error!(%error, "an expired attempt does not replay: left open");
                    continue;
                }
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

/// An open daily attempt: who plays it, the day's deal, and the attempt
/// itself as a room of one seat ([`DailyCore`]), which judges its moves
/// and keeps its time.
#[derive(Debug)]
pub struct Play {
    /// Which attempt.
    pub key: AttemptKey,
    name: String,
    registered_at_ms: u64,
    deal: DailyDeal,
    /// The attempt's state machine.
    pub core: DailyCore,
    /// The day's finishers and winning times when the attempt opened.
    standing: (u32, Vec<u64>),
}

/// The times an attempt is played again with.
#[derive(Clone, Copy, Debug)]
struct StoredTimes {
    started_at_ms: u64,
    deadline_ms: u64,
    now_ms: u64,
}

impl Play {
    /// The attempt with `moves` (and their times) played on the day's
    /// deal; a stored move the rules refuse means the record is corrupt.
    /// `player` is the player's name and registration time.
    fn replayed(
        key: AttemptKey,
        player: (String, u64),
        deal: DailyDeal,
        times: StoredTimes,
        moves: (&[String], Vec<Option<u64>>),
        metrics: Arc<dyn RoomMetrics>,
    ) -> Result<Play, StoreError> {
        let (name, registered_at_ms) = player;
        let (moves, move_times_ms) = moves;
        let stored = StoredAttempt {
            game: deal.game,
            seed: deal.seed,
            started_at_ms: times.started_at_ms,
            deadline_ms: times.deadline_ms,
            moves,
            move_times_ms,
        };
        let core = DailyCore::replayed(stored, metrics, times.now_ms)
            .map_err(|error| StoreError::Corrupt(error.to_string()))?;
        Ok(Play {
            key,
            name,
            registered_at_ms,
            deal,
            core,
            standing: (0, Vec::new()),
        })
    }

    /// The attempt as the player may see it.
    pub fn attempt(&self, now_ms: u64, time_limit_ms: u64, resumed: bool) -> DailyAttempt {
        DailyAttempt {
            game: self.key.game,
            date: self.key.date.clone(),
            commitment: protocol::commitment(self.deal.game, self.deal.seed, &self.deal.salt),
            board: self.core.view(),
            moves: self.core.moves().to_vec(),
            progress: self.progress(now_ms),
            time_limit_ms,
            resumed,
            finishers: self.standing.0,
            winning_times_ms: self.standing.1.clone(),
            // Said at the start, so a new account is not shown a rank it
            // cannot take.
            unranked: is_new_account(&self.key.date, self.registered_at_ms)
                .then_some(Unranked::NewAccount),
        }
    }

    /// Moves played, cards home, and the server's clock since the start
    /// (stopped at the time limit).
    pub fn progress(&self, now_ms: u64) -> Progress {
        self.core.progress(now_ms)
    }

    fn race(&self, status: PlayerStatus, progress: Progress, now_ms: u64) -> NewRace {
        NewRace {
            daily: Some(self.key.date.clone()),
            room_code: None,
            ended_at_ms: now_ms,
            result: RaceResult {
                race_id: None,
                standings: vec![Standing {
                    rank: 1,
                    seat: 0,
                    name: self.name.clone(),
                    status,
                    progress,
                    bot: None,
                }],
                reveal: Reveal {
                    game: self.deal.game,
                    seed: self.deal.seed,
                    salt: self.deal.salt.clone(),
                },
                logs: vec![MoveLog {
                    seat: 0,
                    moves: self.core.moves().to_vec(),
                }],
                open_boards: false,
            },
            players: vec![(0, self.key.player)],
        }
    }
}

/// The attempt stored as `race`, as its player saw it: the deal as dealt
/// and the player's view after each move, no seed and no salt.
pub fn own_attempt(race: &RaceRecord, key: &AttemptKey) -> Result<OwnAttempt, StoreError> {
    let reveal = &race.result.reveal;
    let corrupt = |what: String| StoreError::Corrupt(format!("race {}: {what}", race.race_id));
    let standing = race
        .result
        .standings
        .first()
        .ok_or_else(|| corrupt("no standing".to_string()))?;
    let moves = race
        .result
        .logs
        .first()
        .map(|log| log.moves.clone())
        .unwrap_or_default();
    let mut position = AnyGame::deal(reveal.game, reveal.seed);
    let mut boards = Vec::with_capacity(moves.len() + 1);
    boards.push(position.view());
    for (index, text) in moves.iter().enumerate() {
        let mv = position
            .parse_move(text)
            .map_err(|error| corrupt(format!("move {index} {text:?}: {error}")))?;
        position
            .apply(mv)
            .map_err(|error| corrupt(format!("move {index} {text:?}: {error}")))?;
        boards.push(position.view());
    }
    Ok(OwnAttempt {
        game: reveal.game,
        date: key.date.clone(),
        race_id: race.race_id,
        status: standing.status,
        progress: standing.progress,
        moves,
        boards,
    })
}

impl Daily {
    /// Closes expired attempts every `period_ms` until `shutdown`.
    pub async fn sweep_forever(&self, clock: &Clock, period_ms: u64, shutdown: &CancellationToken) {
        let mut ticker = tokio::time::interval(crate::config::millis(period_ms));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = ticker.tick() => {}
            }
            let now = clock.now_ms();
            match self.sweep(now).await {
                Ok(0) => {}
                Ok(closed) => tracing::info!(closed, "closed daily attempts whose time was up"),
                Err(error) => tracing::error!(%error, "sweeping daily attempts failed"),
            }
            // After the sweep: a day is tallied with its last attempts closed.
            match self.tally(now).await {
                Ok(0) => {}
                Ok(days) => tracing::info!(days, "tallied closed days of the tournament"),
                Err(error) => tracing::error!(%error, "tallying closed days failed"),
            }
        }
    }

    /// Tallies every day closed at `now_ms` and not tallied yet
    /// ([`Store::tally_closed_days`](crate::store::Store::tally_closed_days));
    /// returns how many it tallied. Run after [`Daily::sweep`] with the same
    /// `now_ms`, so that no attempt of a closed day is still open.
    pub async fn tally(&self, now_ms: u64) -> Result<u32, DailyError> {
        let Some(through) = last_closed_date(now_ms, self.time_limit_ms) else {
            return Ok(0);
        };
        Ok(self
            .database
            .call(move |store| store.tally_closed_days(&through))
            .await?)
    }

    /// Finds today's and tomorrow's deals of `games` ahead of the players,
    /// every hour, so that the first player of a day does not wait for the
    /// solver (a Virginia Reel proof can take minutes). Tomorrow's deal is
    /// as secret as today's: it is kept only in the database.
    pub async fn prepare_forever(
        &self,
        clock: &Clock,
        games: &[GameKind],
        shutdown: &CancellationToken,
    ) {
        let mut ticker = tokio::time::interval(std::time::Duration::from_secs(60 * 60));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = ticker.tick() => {}
            }
            let now = clock.now_ms();
            let days = [date_of(now), date_of(now.saturating_add(DAY_MS))];
            self.forget_before(days[0].as_deref());
            for date in days.iter().flatten() {
                for &game in games {
                    let found = tokio::select! {
                        _ = shutdown.cancelled() => return,
                        found = self.deal(game, date) => found,
                    };
                    if let Err(error) = found {
                        tracing::error!(%error, %game, %date, "cannot prepare the daily deal");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use patience_shared::protocol::Unranked;

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
                store.record_move(&early_key, 0, &text, 10_100)?;
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
    fn the_last_closed_date_is_the_newest_day_closed() {
        let midnight = 1_796_083_200_000; // 2026-12-01T00:00:00Z
        let limit = 60 * 60 * 1000;
        for now in [
            midnight + limit - 1,
            midnight + limit,
            midnight + DAY_MS + limit - 1,
        ] {
            let through = last_closed_date(now, limit).expect("a date");
            assert!(day_closed(&through, now, limit), "{now}");
            let next = through
                .parse::<jiff::civil::Date>()
                .ok()
                .and_then(|date| date.tomorrow().ok())
                .expect("a date")
                .to_string();
            assert!(!day_closed(&next, now, limit), "{now}");
        }
        assert_eq!(
            last_closed_date(midnight + limit, limit).as_deref(),
            Some("2026-11-30")
        );
        assert_eq!(last_closed_date(limit, limit), None);
    }

    #[tokio::test]
    async fn a_closed_day_is_tallied_once_after_the_sweep_closes_its_last_attempts() {
        let database = Database::open(None, 16).expect("opens");
        let limit = 60 * 60 * 1000;
        let daily = Daily::new(database.clone(), [3; 32], 100_000, limit);
        let midnight = 1_796_083_200_000; // 2026-12-01T00:00:00Z
        let date = "2026-12-01".to_string();
        let game = GameKind::ThreeBlindMice;
        daily.deal(game, &date).await.expect("a deal");
        let key = AttemptKey {
            player: 1,
            game,
            date: date.clone(),
        };
        let begun = key.clone();
        database
            .call(move |store| {
                store.register("ann", &[1; 32], 0)?;
                // Begun in the day's last minute: open past midnight.
                store.begin_attempt(&begun, midnight + DAY_MS - 60_000)?;
                Ok(())
            })
            .await
            .expect("stored");

        // The day is over but attempts begun in it may still run: nothing
        // is tallied.
        let open = midnight + DAY_MS + limit - 1;
        assert_eq!(daily.tally(open).await.expect("tallies"), 0);
        // Closed: the sweep ends the attempt, then the day is tallied, once.
        let closed = midnight + DAY_MS + limit;
        assert_eq!(daily.sweep(closed).await.expect("sweeps"), 1);
        assert_eq!(daily.tally(closed).await.expect("tallies"), 1);
        assert_eq!(daily.tally(closed + DAY_MS).await.expect("tallies"), 0);
        let record = database
            .call(|store| store.player_record(crate::store::PlayerLookup::Id(1)))
            .await
            .expect("reads")
            .expect("ann");
        assert_eq!(record.through.as_deref(), Some("2026-12-01"));
        let games: Vec<(GameKind, u32, Option<u32>)> = record
            .games
            .iter()
            .map(|record| (record.game, record.days_played, record.best_rank))
            .collect();
        assert_eq!(
            games,
            [(game, 1, Some(1))],
            "out of time, ranked first of one"
        );
    }

    /// Whether moves at `gaps` (each the time since the one before, the
    /// first since the start; `None` an untimed move) are too fast for a
    /// rule of `window` moves and a median gap of 150 ms.
    fn check(window: usize, gaps: &[Option<u64>], expected: bool) {
        let rule = PaceRule {
            window_moves: window,
            median_gap_ms: 150,
        };
        let start = 1_000_000;
        let mut now = start;
        let times: Vec<Option<u64>> = gaps
            .iter()
            .map(|gap| {
                now += gap.unwrap_or(1_000);
                gap.map(|_| now)
            })
            .collect();
        assert_eq!(
            too_fast(rule, start, &times),
            expected,
            "{window}: {gaps:?}"
        );
    }

    #[test]
    fn moves_faster_than_a_person_plays_are_marked() {
        let fast = |n: usize, gap: u64| vec![Some(gap); n];
        // Twenty back-to-back moves are too fast; nineteen are too few.
        check(20, &fast(20, 0), true);
        check(20, &fast(19, 0), false);
        // The median, not the mean: one long think does not hide a bot.
        let mut bot = fast(20, 40);
        bot[7] = Some(60_000);
        check(20, &bot, true);
        // Exactly at the threshold is a person's pace.
        check(20, &fast(20, 150), false);
        check(20, &fast(20, 149), true);
        // An even window's median is the mean of its middle two gaps.
        let mut half = fast(10, 100);
        half.extend(fast(10, 199));
        check(20, &half, true);
        let mut half = fast(10, 100);
        half.extend(fast(10, 200));
        check(20, &half, false);
        // A person's pace with a burst of ten quick moves is fine; a
        // window anywhere in a long attempt is enough to mark it.
        let mut person = fast(40, 900);
        person.splice(10..20, fast(10, 50));
        check(20, &person, false);
        let mut late_bot = fast(40, 900);
        late_bot.extend(fast(20, 10));
        check(20, &late_bot, true);
        // Untimed moves (stored before times were kept) are not judged.
        let mut old = fast(20, 0);
        old[3] = None;
        check(20, &old, false);
        // An odd window, and the rule turned off.
        check(3, &[Some(10), Some(500), Some(10)], true);
        check(3, &[Some(10), Some(500), Some(500)], false);
        check(0, &fast(50, 0), false);
    }

    #[test]
    fn only_accounts_older_than_the_day_rank() {
        let midnight = 1_796_083_200_000; // 2026-12-01T00:00:00Z
        let rule = PaceRule {
            window_moves: 20,
            median_gap_ms: 150,
        };
        let of = |registered| eligibility(rule, "2026-12-01", registered, midnight + 10, &[]);
        assert!(!of(midnight - 1).new_account);
        assert!(of(midnight).new_account);
        assert!(of(midnight + 5).new_account);
        assert_eq!(of(midnight).unranked(), Some(Unranked::NewAccount));
        assert_eq!(of(0).unranked(), None);
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
