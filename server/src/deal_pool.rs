//! Proved-winnable deals per game, ready before anyone asks.
//!
//! One dedicated thread (never a runtime worker: a proof may take seconds)
//! tops the pools up to their target size, one seed at a time, the emptiest
//! game first. The target is sized by demand: as many deals as the game's
//! races took in the last minute (counted by a `TakeMeter`), at least the
//! configured pool size and at most its maximum ([`Sizing`]). So a burst
//! of races (a tournament's start, a load test) finds the next one's deals
//! ready, and a quiet server goes back to its few within a minute. Taking
//! a deal wakes the thread. A race takes its deal when it is due, so
//! starting a race waits on the solver only if deals are taken faster than
//! they are proved. A room waiting in [`DealPool::take`] counts as demand,
//! so a pool with a target of zero proves one deal per waiting race.
//!
//! The thread runs at the lowest priority (niceness 19 on Linux): proving
//! is background work, and on a busy machine every slice of a core it takes
//! is one a room's players wait for (a profile of a loaded server at 100
//! rooms put 14% of its samples in the prover). So it proves in the time
//! the rooms leave idle; under saturation a room waiting for a deal waits
//! longer, rather than every running race slowing down.
//!
//! With a [`Supply`], every deal proved is kept in the store before it is
//! offered, and a pool starts with the deals its store kept: a restarted
//! server deals at once instead of proving again. A deal leaves the store
//! when the race dealt it is first kept (`Store::save_live_race`), in the
//! same write, so no deal is dealt twice, however the server stops.
//!
//! Seeds come from the OS's randomness, or, when the configuration fixes a
//! start, from `start, start + 1, ...` per game, so that tests know the deal.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use patience_shared::game::GameKind;
use patience_shared::solver::Budget;

use crate::clock::Clock;
use crate::database::Database;
use patience_shared::solver::any::first_winnable_deal;
use rand::Rng as _;
use tokio::sync::Notify;

/// The proved deals, shared by the rooms and the proving thread.
#[derive(Clone, Debug)]
pub struct DealPool {
    inner: Arc<Inner>,
}

/// Where a pool keeps the deals it proves, and what it kept before.
#[derive(Clone, Debug)]
pub struct Supply {
    /// The store.
    pub database: Database,
    /// Whose supply it is: the node's id in a cluster, `""` alone.
    pub owner: String,
    /// The deals kept, oldest first, as `Store::proved_deals` gave them.
    pub kept: Vec<(GameKind, u64)>,
}

/// How many deals a pool keeps ready per game: the last minute's demand,
/// between these two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizing {
    /// At least this many (the configured pool size).
    pub floor: usize,
    /// At most this many (below `floor`, `floor` wins).
    pub most: usize,
}

impl Sizing {
    /// Keeps exactly `size` ready, whatever the demand.
    pub fn fixed(size: usize) -> Sizing {
        Sizing {
            floor: size,
            most: size,
        }
    }

    /// The target for a game whose races took `taken` deals in the last minute.
    fn target(self, taken: usize) -> usize {
        taken.clamp(self.floor, self.most.max(self.floor))
    }
}

/// The span of one bucket of a [`TakeMeter`], in milliseconds.
const BUCKET_MS: u64 = 10_000;

/// The buckets of a [`TakeMeter`]: a minute in all.
const BUCKETS: usize = 6;

/// Deals taken in the last minute, counted in six buckets of ten seconds
/// (so the count forgets a burst at most ten seconds late). Pure: the time
/// is an argument.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TakeMeter {
    counts: [usize; BUCKETS],
    /// The bucket `counts` ends with: `now_ms / BUCKET_MS` when last rolled.
    current: u64,
}

impl TakeMeter {
    /// One deal taken at `now_ms`.
    fn record(&mut self, now_ms: u64) {
        self.roll(now_ms);
        self.counts[bucket_slot(self.current)] += 1;
    }

    /// Deals taken in the minute before `now_ms`.
    fn last_minute(&mut self, now_ms: u64) -> usize {
        self.roll(now_ms);
        self.counts.iter().sum()
    }

    /// Empties the buckets that have gone by since the last call.
    fn roll(&mut self, now_ms: u64) {
        let bucket = now_ms / BUCKET_MS;
        // A clock that went back counts into the bucket it was at.
        let passed = bucket.saturating_sub(self.current);
        for step in 1..=passed.min(BUCKETS as u64) {
            self.counts[bucket_slot(self.current + step)] = 0;
        }
        self.current = self.current.max(bucket);
    }
}

fn bucket_slot(bucket: u64) -> usize {
    // The remainder is below BUCKETS, so it fits.
    usize::try_from(bucket % BUCKETS as u64).unwrap_or(0)
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    /// Where proved deals are kept, if anywhere.
    keeper: Option<(Database, String)>,
    /// Wakes the proving thread when a deal is taken or at shutdown.
    wake_prover: Condvar,
    /// Wakes rooms waiting for a deal.
    deal_ready: Notify,
    stop: AtomicBool,
    sizing: Sizing,
    /// Times the takes, for the demand.
    clock: Clock,
    budget_positions: u64,
}

#[derive(Debug)]
struct State {
    ready: HashMap<GameKind, VecDeque<u64>>,
    /// The next seed to try per game, when the stream is fixed.
    next_seed: HashMap<GameKind, u64>,
    /// When each game was last tried (a growing attempt number).
    last_tried: HashMap<GameKind, u64>,
    /// Rooms waiting in `take`, per game: deals wanted beyond the target.
    waiting: HashMap<GameKind, usize>,
    /// Deals taken lately, per game: the demand the target follows.
    taken: HashMap<GameKind, TakeMeter>,
    fixed_seeds: bool,
}

impl DealPool {
    /// A pool for `games`, sized by `sizing` as the takes on `clock` say,
    /// and its proving thread. With a `supply`, it starts with the deals
    /// kept there (of the games it deals) and keeps each one it proves; a
    /// fixed stream of seeds goes on past the last one kept.
    pub fn start(
        games: &[GameKind],
        sizing: Sizing,
        clock: Clock,
        seed_start: Option<u64>,
        budget_positions: u64,
        supply: Option<Supply>,
    ) -> std::io::Result<DealPool> {
        let mut ready: HashMap<GameKind, VecDeque<u64>> =
            games.iter().map(|&game| (game, VecDeque::new())).collect();
        let mut next_seed: HashMap<GameKind, u64> = games
            .iter()
            .map(|&game| (game, seed_start.unwrap_or(0)))
            .collect();
        let keeper = supply.map(|supply| {
            for (game, seed) in supply.kept {
                if let Some(deals) = ready.get_mut(&game) {
                    deals.push_back(seed);
                    if let Some(next) = next_seed.get_mut(&game) {
                        *next = (*next).max(seed.saturating_add(1));
                    }
                }
            }
            (supply.database, supply.owner)
        });
        let pool = DealPool {
            inner: Arc::new(Inner {
                keeper,
                state: Mutex::new(State {
                    ready,
                    next_seed,
                    last_tried: HashMap::new(),
                    waiting: HashMap::new(),
                    taken: HashMap::new(),
                    fixed_seeds: seed_start.is_some(),
                }),
                wake_prover: Condvar::new(),
                deal_ready: Notify::new(),
                stop: AtomicBool::new(false),
                sizing,
                clock,
                budget_positions,
            }),
        };
        let inner = Arc::clone(&pool.inner);
        std::thread::Builder::new()
            .name("deal-prover".to_string())
            .spawn(move || {
                yield_to_the_rooms();
                inner.prove_forever()
            })?;
        Ok(pool)
    }

    /// Whether the pool deals this game at all.
    pub fn deals(&self, game: GameKind) -> bool {
        self.inner.lock().ready.contains_key(&game)
    }

    /// A proved seed of `game` if one is ready.
    pub fn try_take(&self, game: GameKind) -> Option<u64> {
        let seed = {
            let mut state = self.inner.lock();
            let seed = state.ready.get_mut(&game)?.pop_front();
            if seed.is_some() {
                self.inner.taken(&mut state, game);
            }
            seed
        };
        if seed.is_some() {
            self.inner.wake_prover.notify_one();
        }
        seed
    }

    /// A proved seed of `game`, waiting for one if none is ready. `None` if
    /// the pool does not deal this game or is stopping.
    pub async fn take(&self, game: GameKind) -> Option<u64> {
        if let Some(seed) = self.try_take(game) {
            return Some(seed);
        }
        let mut demand = Demand::new(&self.inner, game);
        loop {
            if !self.deals(game) || self.inner.stop.load(Ordering::Relaxed) {
                return None;
            }
            let notified = self.inner.deal_ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            // Taking the deal and giving up the demand under one lock, so
            // the prover never sees the demand without the deal it was for.
            let seed = {
                let mut state = self.inner.lock();
                let seed = state.ready.get_mut(&game).and_then(VecDeque::pop_front);
                if seed.is_some() {
                    demand.fulfilled(&mut state);
                    self.inner.taken(&mut state, game);
                }
                seed
            };
            if let Some(seed) = seed {
                self.inner.wake_prover.notify_one();
                return Some(seed);
            }
            notified.await;
        }
    }

    /// Waits until at least `count` deals of `game` are ready (or the pool
    /// stops, or does not deal it).
    pub async fn ready_at_least(&self, game: GameKind, count: usize) {
        loop {
            let notified = self.inner.deal_ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let ready = self.inner.lock().ready.get(&game).map(VecDeque::len);
            if ready.is_none_or(|ready| ready >= count) || self.inner.stop.load(Ordering::Relaxed) {
                return;
            }
            notified.await;
        }
    }

    /// How many deals are ready, per game, for `/metrics`.
    pub fn ready_counts(&self) -> Vec<(String, usize)> {
        let state = self.inner.lock();
        let mut counts: Vec<_> = state
            .ready
            .iter()
            .map(|(game, ready)| (game.slug().to_string(), ready.len()))
            .collect();
        counts.sort();
        counts
    }

    /// Stops the proving thread (a proof under way gives up) and wakes waiters.
    pub fn stop(&self) {
        self.inner.stop.store(true, Ordering::Relaxed);
        self.inner.wake_prover.notify_all();
        self.inner.deal_ready.notify_waiters();
    }
}

/// One room waiting for a deal of `game`, for as long as it waits (a
/// cancelled wait gives its demand back).
struct Demand<'a> {
    inner: &'a Inner,
    game: GameKind,
    open: bool,
}

impl<'a> Demand<'a> {
    fn new(inner: &'a Inner, game: GameKind) -> Demand<'a> {
        *inner.lock().waiting.entry(game).or_insert(0) += 1;
        inner.wake_prover.notify_one();
        Demand {
            inner,
            game,
            open: true,
        }
    }

    /// The deal came: the demand ends, under the caller's lock.
    fn fulfilled(&mut self, state: &mut State) {
        if std::mem::take(&mut self.open)
            && let Some(waiting) = state.waiting.get_mut(&self.game)
        {
            *waiting = waiting.saturating_sub(1);
        }
    }
}

impl Drop for Demand<'_> {
    fn drop(&mut self) {
        if self.open {
            let mut state = self.inner.lock();
            self.fulfilled(&mut state);
        }
    }
}

impl Inner {
    /// Keeps a proved deal in the store, if the pool has one, before it is
    /// offered; false if that failed, and the deal is not offered (a deal
    /// offered but not kept could be dealt twice after a restart, from the
    /// store and from the stream of fixed seeds).
    fn keep(&self, game: GameKind, seed: u64) -> bool {
        let Some((database, owner)) = &self.keeper else {
            return true;
        };
        let owner = owner.clone();
        match database.blocking_call(move |store| store.keep_proved_deal(&owner, game, seed)) {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, %game, "cannot keep a proved deal; it is not dealt");
                false
            }
        }
    }
}

/// The niceness of the proving thread: the lowest priority there is.
const PROVER_NICENESS: i32 = 19;

/// Lowers the calling thread's priority to [`PROVER_NICENESS`]. On Linux
/// the nice value belongs to a thread, not to its process (setpriority(2),
/// "BUGS"), so this leaves the runtime's workers and the database thread
/// as they were. Elsewhere it does nothing: there the call would lower the
/// whole server.
fn yield_to_the_rooms() {
    #[cfg(target_os = "linux")]
    if let Err(error) =
        rustix::process::setpriority_process(Some(rustix::thread::gettid()), PROVER_NICENESS)
    {
        tracing::warn!(%error, "cannot lower the deal prover's priority; it competes with the rooms for the cores");
    }
}

impl Inner {
    /// A deal of `game` was taken: it counts as demand.
    fn taken(&self, state: &mut State, game: GameKind) {
        let now = self.clock.now_ms();
        state.taken.entry(game).or_default().record(now);
    }

    /// How many deals of `game` to keep ready now.
    fn target(&self, state: &mut State, game: GameKind) -> usize {
        let now = self.clock.now_ms();
        let taken = state
            .taken
            .get_mut(&game)
            .map_or(0, |meter| meter.last_minute(now));
        self.sizing.target(taken) + state.waiting.get(&game).copied().unwrap_or(0)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain queues behind, still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The game to try a seed for: the emptiest below target (raised by the
    /// rooms waiting for one), and among equals the one tried longest ago,
    /// so that a game whose deals are hard to prove never starves the
    /// others of more than one seed's work.
    fn neediest(&self, state: &mut State) -> Option<GameKind> {
        let games: Vec<GameKind> = state.ready.keys().copied().collect();
        games
            .into_iter()
            .filter_map(|game| {
                let target = self.target(state, game);
                let ready = state.ready.get(&game)?.len();
                let tried = state.last_tried.get(&game).copied().unwrap_or(0);
                (ready < target).then_some((ready, tried, game))
            })
            .min()
            .map(|(_, _, game)| game)
    }

    /// Tries one seed at a time, for the neediest game, until stopped.
    fn prove_forever(&self) {
        let mut random = rand::rng();
        let mut attempts: u64 = 0;
        loop {
            let (game, seed) = {
                let mut state = self.lock();
                let game = loop {
                    if self.stopping() {
                        return;
                    }
                    if let Some(game) = self.neediest(&mut state) {
                        break game;
                    }
                    state = self
                        .wake_prover
                        .wait(state)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                };
                attempts += 1;
                state.last_tried.insert(game, attempts);
                let seed = if state.fixed_seeds {
                    let next = state.next_seed.entry(game).or_insert(0);
                    let seed = *next;
                    *next = next.wrapping_add(1);
                    seed
                } else {
                    random.next_u64()
                };
                (game, seed)
            };
            let stop = || self.stopping();
            let budget = Budget {
                positions: self.budget_positions,
                should_stop: Some(&stop),
            };
            let _span = tracing::debug_span!("deal_pool", game = %game, seed).entered();
            let began = std::time::Instant::now();
            match first_winnable_deal(game, std::iter::once(seed), budget) {
                Ok(Some(_)) => {
                    let took_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
                    tracing::debug!(took_ms, "proved a deal winnable");
                    if !self.keep(game, seed) {
                        continue;
                    }
                    if let Some(ready) = self.lock().ready.get_mut(&game) {
                        ready.push_back(seed);
                    }
                    self.deal_ready.notify_waiters();
                }
                Ok(None) => {}
                // A solver bug: log it and try the next seed.
                Err(failure) => tracing::error!(%failure, "the solver's line failed to replay"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meter_counts_the_takes_of_the_last_minute_in_ten_second_buckets() {
        // (takes at these times, asked at, expected)
        let cases: &[(&[u64], u64, usize)] = &[
            (&[], 0, 0),
            (&[0, 1, 9_999], 9_999, 3),
            (&[0, 1, 9_999], 59_999, 3),
            // The bucket of 0..10 s is forgotten once 60 s is reached.
            (&[0, 1, 9_999], 60_000, 0),
            (&[0, 10_000, 20_000], 69_999, 2),
            (&[5_000, 55_000], 65_000, 1),
            // Long idle forgets everything.
            (&[0, 30_000], 1_000_000, 0),
            // A clock that goes back counts into the latest bucket.
            (&[30_000, 20_000], 30_000, 2),
        ];
        for &(takes, asked, expected) in cases {
            let mut meter = TakeMeter::default();
            for &at in takes {
                meter.record(at);
            }
            assert_eq!(meter.last_minute(asked), expected, "{takes:?} at {asked}");
        }
    }

    #[test]
    fn the_target_follows_the_demand_between_the_floor_and_the_most() {
        let sizing = Sizing { floor: 3, most: 50 };
        let targets: Vec<usize> = [0, 2, 3, 20, 50, 500]
            .into_iter()
            .map(|taken| sizing.target(taken))
            .collect();
        assert_eq!(targets, [3, 3, 3, 20, 50, 50]);
        // A floor above the most wins.
        assert_eq!(Sizing { floor: 10, most: 4 }.target(100), 10);
        assert_eq!(Sizing::fixed(2).target(100), 2);
    }

    #[tokio::test]
    async fn a_pool_keeps_ready_what_the_last_minute_took() {
        let tbm = GameKind::ThreeBlindMice;
        let clock = Clock::virtual_at(1_000_000);
        let sizing = Sizing { floor: 1, most: 4 };
        let pool = DealPool::start(&[tbm], sizing, clock.clone(), Some(100), 200_000, None)
            .expect("thread starts");
        for _ in 0..3 {
            assert!(pool.take(tbm).await.is_some());
        }
        // A guard, not a synchronisation: a pool that does not grow would
        // wait for ever.
        let grown = |count| {
            tokio::time::timeout(
                std::time::Duration::from_secs(60),
                pool.ready_at_least(tbm, count),
            )
        };
        // Three taken this minute: three are proved ready for the next.
        grown(3).await.expect("the pool grows to the demand");
        for _ in 0..3 {
            assert!(pool.try_take(tbm).is_some(), "ready without waiting");
        }
        // Six in the minute: the most, four, are kept ready.
        grown(4).await.expect("the pool grows to its most");
        pool.stop();
    }

    #[tokio::test]
    async fn a_fixed_stream_gives_the_first_proved_seeds_in_order() {
        let pool = DealPool::start(
            &[GameKind::ThreeBlindMice],
            Sizing::fixed(2),
            Clock::virtual_at(0),
            Some(100),
            200_000,
            None,
        )
        .expect("thread starts");
        let first = pool.take(GameKind::ThreeBlindMice).await;
        let second = pool.take(GameKind::ThreeBlindMice).await;
        let expected =
            first_winnable_deal(GameKind::ThreeBlindMice, 100.., Budget::positions(200_000))
                .expect("replays")
                .map(|deal| deal.seed);
        assert_eq!(first, expected);
        assert!(second > first);
        assert_eq!(pool.take(GameKind::Indian).await, None);
        pool.stop();
    }

    /// The niceness of this process's thread called `name`, read from
    /// `/proc/self/task/*/stat` (field 19, after the parenthesised name).
    #[cfg(target_os = "linux")]
    fn niceness_of_thread(name: &str) -> Option<i32> {
        std::fs::read_dir("/proc/self/task").ok()?.find_map(|task| {
            let stat = std::fs::read_to_string(task.ok()?.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(") ")?;
            (head.split_once(" (")?.1 == name)
                .then(|| rest.split(' ').nth(16)?.parse().ok())
                .flatten()
        })
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_prover_runs_at_the_lowest_priority_and_the_rest_of_the_server_does_not() {
        let this_thread = || rustix::process::getpriority_process(Some(rustix::thread::gettid()));
        let before = this_thread().ok();
        let pool = DealPool::start(
            &[GameKind::ThreeBlindMice],
            Sizing::fixed(1),
            Clock::virtual_at(0),
            Some(100),
            200_000,
            None,
        )
        .expect("thread starts");
        // Once a deal is proved, the thread has long since set its priority.
        assert!(pool.take(GameKind::ThreeBlindMice).await.is_some());
        assert_eq!(niceness_of_thread("deal-prover"), Some(PROVER_NICENESS));
        assert_eq!(
            this_thread().ok(),
            before,
            "the caller's priority is left alone"
        );
        pool.stop();
    }

    #[tokio::test]
    async fn proved_deals_are_kept_and_a_new_pool_deals_them_first_then_proves_past_them() {
        let tbm = GameKind::ThreeBlindMice;
        let database = Database::open(None, 16).expect("the database opens");
        let supply = |kept| {
            Some(Supply {
                database: database.clone(),
                owner: "node-a".to_string(),
                kept,
            })
        };
        let first = DealPool::start(
            &[tbm],
            Sizing::fixed(2),
            Clock::virtual_at(0),
            Some(100),
            200_000,
            supply(Vec::new()),
        )
        .expect("thread starts");
        let dealt = [first.take(tbm).await, first.take(tbm).await];
        first.stop();
        let kept = database
            .call(|store| store.proved_deals("node-a"))
            .await
            .expect("reads");
        let dealt: Vec<(GameKind, u64)> = dealt
            .into_iter()
            .flatten()
            .map(|seed| (tbm, seed))
            .collect();
        assert_eq!(dealt.len(), 2);
        assert_eq!(
            kept[..2],
            dealt[..],
            "each deal is kept before it is offered"
        );
        // A pool that keeps none ready and so proves only when asked deals
        // the kept ones at once, oldest first.
        let second = DealPool::start(
            &[tbm],
            Sizing::fixed(0),
            Clock::virtual_at(0),
            Some(100),
            200_000,
            supply(kept.clone()),
        )
        .expect("thread starts");
        for (_, seed) in &kept {
            assert_eq!(second.try_take(tbm), Some(*seed));
        }
        assert_eq!(second.try_take(tbm), None);
        // And the fixed stream goes on past them rather than deal one again.
        let next = second.take(tbm).await.expect("a deal is proved");
        assert!(
            kept.iter().all(|&(_, seed)| seed < next),
            "{next} after {kept:?}"
        );
        second.stop();
    }

    #[tokio::test]
    async fn a_pool_that_keeps_none_ready_proves_one_for_each_taker() {
        let pool = DealPool::start(
            &[GameKind::ThreeBlindMice],
            Sizing::fixed(0),
            Clock::virtual_at(0),
            Some(100),
            200_000,
            None,
        )
        .expect("thread starts");
        assert_eq!(pool.try_take(GameKind::ThreeBlindMice), None);
        let first = pool.take(GameKind::ThreeBlindMice).await;
        assert!(first.is_some(), "a waiting taker gets a deal proved");
        assert_eq!(
            pool.try_take(GameKind::ThreeBlindMice),
            None,
            "and none is kept beyond it"
        );
        pool.stop();
    }
}
