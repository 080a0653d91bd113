//! The database thread: the one place the [`Store`] is touched.
//!
//! Tasks never wait on disk: they send a job down a **bounded** channel and
//! await its answer. The thread takes every job waiting (up to
//! [`MAX_BATCH`]), runs them in one transaction, commits once, and only then
//! answers each. So an answer always means "committed": a task that tells a
//! player a result after `call` returned has it on disk first, and many
//! players' moves share one fsync (group commit).
//!
//! Each job runs in its own savepoint: a job that fails (returns an error
//! or panics) is rolled back to it, so none of its writes survive while the
//! other jobs of its batch commit. If a job cannot be undone, the whole batch
//! is rolled back rather than commit half a job.
//!
//! Jobs run in the order they were queued, but one failing does not stop
//! the next. Writes that must not commit without the ones before them (a
//! running race's moves: the store cannot rebuild a race with a hole in a
//! log) go in a [`Sequence`] ([`Database::queue_in`]): once one of its
//! writes fails or is dropped unrun, every later one fails without running.
//!
//! The thread stops when every handle is dropped, when it panics (outside a
//! job: a job's panic fails that job only), and after [`MAX_FAILED_BATCHES`]
//! batches in a row could not begin or commit. A stopped thread is down for
//! good: [`Database::is_up`] says so (`/healthz` answers 503, `/metrics`
//! shows `patience_database_up 0`) and every [`Database::call`] fails at
//! once with [`StoreError::Closed`], so that nothing waits on a database
//! that will not answer and nobody is told a result that was not stored.
//!
//! A lost connection to a database server (PostgreSQL restarted, the
//! session terminated, the network cut) is not the store failing: the batch
//! it broke fails, the database is down *while* the thread reconnects, with
//! a growing pause between attempts, and up again once it has.
//!
//! ## The connections aside
//! With PostgreSQL the thread's connection is one of a small pool: the
//! others ([`ASIDE_CONNECTIONS`], each on a thread of its own) serve
//! [`Database::call_aside`], for calls that must neither wait behind a
//! batch of moves nor hold one up (the failover scan, the nodes' leases in
//! the store). Each of their statements commits on its own. Every write
//! that must be ordered with the others, or be in a batch's commit, stays
//! on the one thread: the moves are ordered per race ([`Sequence`]) and
//! share commits (group commit), which more writing connections would
//! split. With SQLite, which has one writer at a time, a call aside runs
//! on the thread like any other.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::config::DatabaseUrl;
use crate::store::postgres::PostgresStore;
use crate::store::sqlite::SqliteStore;
use crate::store::{Store, StoreError};

/// The connections a PostgreSQL database keeps beside the thread's, for
/// [`Database::call_aside`].
pub const ASIDE_CONNECTIONS: usize = 2;

/// The calls aside that may wait for a connection: past it,
/// [`Database::call_aside`] waits for room.
const ASIDE_QUEUE: usize = 64;

/// The most jobs committed together.
pub const MAX_BATCH: usize = 256;

/// Batches in a row whose transaction could not begin or commit before the
/// thread gives up. A store failing that way is broken (disk full or gone,
/// the file locked by another process past its busy timeout): a server that
/// went on accepting what it cannot keep would mislead its players, while a
/// down database shows on `/healthz` for the operator to restart.
pub const MAX_FAILED_BATCHES: u32 = 3;

/// The first pause between two attempts to reconnect to a database server
/// whose connection was lost; each failed attempt doubles it.
pub const RECONNECT_PAUSE_MIN: Duration = Duration::from_millis(50);

/// The longest pause between two attempts to reconnect: also about the
/// longest a shutdown waits for a thread that is reconnecting.
pub const RECONNECT_PAUSE_MAX: Duration = Duration::from_secs(2);

/// The file name of the database inside the data directory.
pub const DATABASE_FILE: &str = "patience.sqlite3";

/// What a job hands back once it has run: the answer to send when the
/// commit's outcome is known.
type Answer = Box<dyn FnOnce(Result<(), &StoreError>) + Send>;
type Job = Box<dyn FnOnce(&mut dyn Store) -> Ran + Send>;
/// A call aside ([`Database::call_aside`]), given its connection or why
/// there is none: it answers by itself.
type AsideJob = Box<dyn FnOnce(Result<&mut dyn Store, StoreError>) + Send>;

/// A job that has run.
struct Ran {
    /// Whether it succeeded, so that its writes are kept.
    succeeded: bool,
    /// Its answer.
    answer: Answer,
}

/// A handle on the database thread, cheap to clone.
#[derive(Clone, Debug)]
pub struct Database {
    jobs: mpsc::Sender<Job>,
    /// The connections aside, if the store has them (PostgreSQL).
    aside: Option<mpsc::Sender<AsideJob>>,
    stats: Arc<Stats>,
}

/// Counters for `/metrics`, and whether the thread is up.
#[derive(Debug, Default)]
pub struct Stats {
    /// Whether the thread serves: false once it has stopped, whatever the
    /// reason (and before it starts).
    pub up: AtomicBool,
    /// Jobs run.
    pub jobs: AtomicU64,
    /// Transactions committed.
    pub commits: AtomicU64,
    /// Jobs that failed for the database's sake: their transaction or
    /// savepoint could not begin, or the transaction could not commit.
    pub errors: AtomicU64,
    /// Jobs that failed (an error or a panic) and were rolled back to their
    /// savepoint.
    pub rolled_back: AtomicU64,
    /// Time spent in commits, in microseconds.
    pub commit_micros: AtomicU64,
    /// Connections to the database server made again after one was lost.
    pub reconnects: AtomicU64,
    /// The connection to the database server is lost and the thread is
    /// making it again: the database is down for now, not for good.
    pub reconnecting: AtomicBool,
}

/// Why the database could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The data directory could not be created.
    #[error("cannot create the data directory {path}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a database this server can use.
    #[error("cannot open the database {path}")]
    Store {
        /// The file.
        path: PathBuf,
        /// Why.
        source: StoreError,
    },
    /// The PostgreSQL database could not be reached or used.
    #[error("cannot open the database {url}")]
    Postgres {
        /// The URL, its password left out.
        url: String,
        /// Why.
        source: StoreError,
    },
    /// The thread could not start.
    #[error("cannot start the database thread")]
    Thread(#[source] std::io::Error),
}

impl Database {
    /// Opens `data_dir/patience.sqlite3` (creating the directory and the
    /// file as needed), or a database in memory when `data_dir` is `None`,
    /// migrates it, and starts its thread.
    pub fn open(data_dir: Option<&Path>, queue: usize) -> Result<Database, OpenError> {
        let store = match data_dir {
            Some(directory) => {
                std::fs::create_dir_all(directory).map_err(|source| OpenError::Directory {
                    path: directory.to_path_buf(),
                    source,
                })?;
                let path = directory.join(DATABASE_FILE);
                SqliteStore::open(&path).map_err(|source| OpenError::Store { path, source })?
            }
            None => SqliteStore::in_memory().map_err(|source| OpenError::Store {
                path: PathBuf::from(":memory:"),
                source,
            })?,
        };
        Database::start(Box::new(store), queue).map_err(OpenError::Thread)
    }

    /// Connects to the PostgreSQL database `url` names, migrates it, and
    /// starts its thread. The connection is made on the database thread
    /// itself: the blocking client runs a runtime of its own, which may
    /// neither start nor stop on a runtime's worker. The caller waits for
    /// the connection (at most its `connect_timeout`, 10 s unless the URL
    /// says), as it waits for the SQLite file to open.
    pub fn open_postgres(url: &DatabaseUrl, queue: usize) -> Result<Database, OpenError> {
        let (opened, outcome) = std::sync::mpsc::sync_channel(1);
        let text = url.expose().to_string();
        let spawned = Database::spawn(queue, move || {
            let store = PostgresStore::connect(&text);
            let store = match store {
                Ok(store) => {
                    let _ = opened.send(Ok(()));
                    store
                }
                Err(error) => {
                    let _ = opened.send(Err(error));
                    return None;
                }
            };
            Some(Box::new(store) as Box<dyn Store>)
        })
        .map_err(OpenError::Thread)?;
        let failed = |source| OpenError::Postgres {
            url: url.redacted(),
            source,
        };
        match outcome.recv() {
            Ok(Ok(())) => {}
            Ok(Err(source)) => return Err(failed(source)),
            Err(_) => return Err(failed(StoreError::Panicked)),
        }
        let aside = spawn_aside(url.expose()).map_err(OpenError::Thread)?;
        Ok(Database {
            aside: Some(aside),
            ..spawned
        })
    }

    /// Starts the thread that owns `store`. It stops when every handle is
    /// dropped, after the jobs already sent.
    pub fn start(store: Box<dyn Store>, queue: usize) -> std::io::Result<Database> {
        Database::spawn(queue, move || Some(store))
    }

    /// Starts the thread, which serves the store `open` makes there (none:
    /// it stops at once).
    fn spawn(
        queue: usize,
        open: impl FnOnce() -> Option<Box<dyn Store>> + Send + 'static,
    ) -> std::io::Result<Database> {
        let (jobs, receiver) = mpsc::channel(queue.max(1));
        let stats = Arc::new(Stats::default());
        stats.up.store(true, Ordering::Release);
        let thread_stats = Arc::clone(&stats);
        let spawned = std::thread::Builder::new()
            .name("database".to_string())
            .spawn(move || {
                let Some(store) = open() else {
                    thread_stats.up.store(false, Ordering::Release);
                    return;
                };
                let thread = Thread {
                    store,
                    jobs: receiver,
                    stats: thread_stats,
                };
                thread.serve();
            });
        if let Err(error) = spawned {
            stats.up.store(false, Ordering::Release);
            return Err(error);
        }
        Ok(Database {
            jobs,
            aside: None,
            stats,
        })
    }

    /// Runs `work` on the database thread and returns its result once the
    /// transaction holding it has committed. If `work` fails or panics,
    /// none of its writes are kept. Fails at once with
    /// [`StoreError::Closed`] if the thread has stopped.
    pub async fn call<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.queue(work).await.await
    }

    /// [`Database::call`] in two steps, for a caller whose calls must run
    /// in the order it makes them while it goes on working: the job is in
    /// the thread's queue, behind every job queued before, once this
    /// returns (it waits only while the queue is full), and the future it
    /// returns gives the result once the job has committed.
    pub async fn queue<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        let (job, answer) = job(work);
        self.enqueue(job, answer).await
    }

    /// [`Database::queue`] for one of a [`Sequence`] of writes: it runs
    /// only if every write queued before it in `sequence` has committed or
    /// is in its transaction, and otherwise fails without running
    /// ([`StoreError::Skipped`]).
    pub async fn queue_in<T: Send + 'static>(
        &self,
        sequence: &Sequence,
        work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        let (job, answer) = sequenced(sequence, work);
        self.enqueue(job, answer).await
    }

    /// [`Database::queue_in`] without waiting: with the thread's queue full
    /// (a database that is far behind, or a disk that hangs) the write is
    /// not queued, its answer is [`StoreError::QueueFull`], and, dropped
    /// unrun, it breaks `sequence`. For a room's actor, which must go on
    /// keeping its deadlines whatever the database does.
    pub fn queue_in_now<T: Send + 'static>(
        &self,
        sequence: &Sequence,
        work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        let (job, answer) = sequenced(sequence, work);
        let queued = if self.is_up() {
            // A job refused here is dropped unrun, which breaks its sequence.
            self.jobs.try_send(job).map_err(|refused| match refused {
                mpsc::error::TrySendError::Full(_) => StoreError::QueueFull,
                mpsc::error::TrySendError::Closed(_) => StoreError::Closed,
            })
        } else {
            Err(StoreError::Closed)
        };
        async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Puts `job` in the thread's queue (waiting only while it is full);
    /// the future gives its answer.
    async fn enqueue<T: Send + 'static>(
        &self,
        job: Job,
        answer: oneshot::Receiver<Result<T, StoreError>>,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        let queued = if self.is_up() {
            self.jobs.send(job).await.map_err(|_| StoreError::Closed)
        } else {
            Err(StoreError::Closed)
        };
        async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Runs `work` on a connection aside ([the pool](self#the-connections-aside)),
    /// not the thread's: it neither waits behind the batches of moves nor
    /// holds them up. Each statement commits on its own, so `work` reads
    /// and makes single-statement writes that need no order with the
    /// thread's jobs. A store without connections aside (SQLite) runs it as
    /// [`Database::call`] does.
    pub async fn call_aside<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let Some(aside) = &self.aside else {
            return self.call(work).await;
        };
        let (reply, answer) = oneshot::channel();
        let job: AsideJob = Box::new(move |store| {
            // A panic fails this call alone; the connection's statements
            // each committed or failed on their own.
            let result = match store {
                Ok(store) => std::panic::catch_unwind(AssertUnwindSafe(|| work(store)))
                    .unwrap_or(Err(StoreError::Panicked)),
                Err(error) => Err(error),
            };
            let _ = reply.send(result);
        });
        aside.send(job).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    /// [`Database::call`] for a thread outside the runtime (it blocks the
    /// calling thread until the job has committed): for the deal prover,
    /// which runs on a thread of its own. Never call it on a runtime's
    /// worker thread.
    pub fn blocking_call<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        if !self.is_up() {
            return Err(StoreError::Closed);
        }
        let (job, answer) = job(work);
        self.jobs
            .blocking_send(job)
            .map_err(|_| StoreError::Closed)?;
        answer.blocking_recv().map_err(|_| StoreError::Closed)?
    }

    /// Whether the thread still serves calls.
    pub fn is_up(&self) -> bool {
        self.stats.up.load(Ordering::Acquire) && !self.jobs.is_closed()
    }

    /// Whether the database is down only until the thread has made its
    /// lost connection to the database server again.
    pub fn is_reconnecting(&self) -> bool {
        self.stats.reconnecting.load(Ordering::Acquire) && !self.jobs.is_closed()
    }

    /// Why the database is down, in a line for a person: the same reason
    /// `/healthz` and refused calls give.
    pub fn down_reason(&self) -> &'static str {
        if self.is_reconnecting() {
            "the connection to the database server is lost and is being made again: \
             nothing can be stored until it is back"
        } else {
            "the database thread has stopped and nothing can be stored until the server restarts"
        }
    }

    /// Waits until the thread has stopped.
    pub async fn stopped(&self) {
        self.jobs.closed().await;
    }

    /// Kills the thread as a panic on it would (not one inside a job, which
    /// the thread survives), and waits until it has stopped: for tests of a
    /// server whose database is dead.
    #[doc(hidden)]
    pub async fn crash_for_tests(&self) {
        let crash: Job =
            Box::new(|_| std::panic::resume_unwind(Box::new("the database is crashed by a test")));
        // An error means the thread has stopped already.
        let _ = self.jobs.send(crash).await;
        self.stopped().await;
    }

    /// The thread's counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

/// Starts the threads of the connections aside to the PostgreSQL database
/// `url` names; each connects on its own thread (the blocking client may
/// not start on a runtime's worker), at its first call and again after a
/// lost connection, and they stop once every handle is dropped. A call that
/// finds no connection fails with the reason.
fn spawn_aside(url: &str) -> std::io::Result<mpsc::Sender<AsideJob>> {
    let (sender, receiver) = mpsc::channel::<AsideJob>(ASIDE_QUEUE);
    let receiver = Arc::new(std::sync::Mutex::new(receiver));
    for index in 0..ASIDE_CONNECTIONS {
        let receiver = Arc::clone(&receiver);
        let url = url.to_string();
        std::thread::Builder::new()
            .name(format!("database-aside-{index}"))
            .spawn(move || serve_aside(&url, &receiver))?;
    }
    Ok(sender)
}

/// One connection aside: takes calls until the queue closes.
fn serve_aside(url: &str, receiver: &std::sync::Mutex<mpsc::Receiver<AsideJob>>) {
    let mut store: Option<PostgresStore> = None;
    loop {
        // The lock is held while waiting, so one idle thread waits on the
        // queue and the others on the lock; a poisoned lock (a thread died
        // holding it) leaves the receiver as sound as before.
        let job = receiver
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .blocking_recv();
        let Some(job) = job else {
            return;
        };
        if store.as_ref().is_none_or(Store::connection_lost) {
            store = None;
            match PostgresStore::connect(url) {
                Ok(connected) => store = Some(connected),
                Err(error) => {
                    tracing::warn!(%error, "a database connection aside cannot connect");
                    job(Err(error));
                    continue;
                }
            }
        }
        if let Some(connected) = store.as_mut() {
            job(Ok(connected as &mut dyn Store));
        }
    }
}

/// `work` as a job, and where its answer will come.
fn job<T: Send + 'static>(
    work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
) -> (Job, oneshot::Receiver<Result<T, StoreError>>) {
    let (reply, answer) = oneshot::channel();
    let job: Job = Box::new(move |store| {
        // A panic fails this job alone: the thread rolls its writes back to
        // the job's savepoint, so the store is as if it never ran (that is
        // why asserting unwind safety is sound here).
        let result = match std::panic::catch_unwind(AssertUnwindSafe(|| work(store))) {
            Ok(result) => result,
            Err(_) => {
                tracing::error!("a database call panicked; it is rolled back");
                Err(StoreError::Panicked)
            }
        };
        Ran {
            succeeded: result.is_ok(),
            answer: Box::new(move |committed: Result<(), &StoreError>| {
                let outcome = match committed {
                    Ok(()) => result,
                    Err(error) => Err(StoreError::Commit(error.to_string())),
                };
                let _ = reply.send(outcome);
            }),
        }
    });
    (job, answer)
}

/// Writes that commit in the order they were queued, or not at all: once
/// one of them fails (its own error or panic, its batch's commit, or
/// dropped unrun, as while the thread reconnects), every later one fails
/// without running ([`StoreError::Skipped`]). So no write of a sequence
/// commits while one before it did not: a room keeps its race with one
/// ([`Database::queue_in`]), and after a failure it starts a new sequence
/// and writes again what was lost, in order.
#[derive(Clone, Debug, Default)]
pub struct Sequence {
    broken: Arc<AtomicBool>,
}

impl Sequence {
    /// A sequence none of whose writes has failed yet.
    pub fn new() -> Sequence {
        Sequence::default()
    }

    /// Whether a write of the sequence has failed: every later one fails.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }
}

/// Breaks its sequence when dropped, unless its write committed: a job
/// dropped unrun, or whose answer is a failure, breaks it on the
/// database thread before the next job runs.
struct BreaksUnlessCommitted {
    broken: Arc<AtomicBool>,
    committed: bool,
}

impl Drop for BreaksUnlessCommitted {
    fn drop(&mut self) {
        if !self.committed {
            self.broken.store(true, Ordering::Release);
        }
    }
}

/// `work` as a job of `sequence` ([`Database::queue_in`]).
fn sequenced<T: Send + 'static>(
    sequence: &Sequence,
    work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
) -> (Job, oneshot::Receiver<Result<T, StoreError>>) {
    let broken = Arc::clone(&sequence.broken);
    let (inner, answer) = job(move |store| {
        if broken.load(Ordering::Acquire) {
            return Err(StoreError::Skipped);
        }
        work(store)
    });
    let guard = BreaksUnlessCommitted {
        broken: Arc::clone(&sequence.broken),
        committed: false,
    };
    // One tuple, guard first: a job dropped unrun drops its fields in this
    // order, so the sequence is broken before the answer's sender goes and
    // a caller woken by that sees it broken. (Captured one by one, their
    // drop order is the compiler's choice: the caller could see the answer
    // first.)
    let parts = (guard, inner);
    let job: Job = Box::new(move |store| {
        let (mut guard, inner) = parts;
        let Ran { succeeded, answer } = inner(store);
        if !succeeded {
            // At once: the next job of the sequence may share this batch.
            guard.broken.store(true, Ordering::Release);
        }
        Ran {
            succeeded,
            answer: Box::new(move |committed: Result<(), &StoreError>| {
                guard.committed = succeeded && committed.is_ok();
                drop(guard);
                answer(committed);
            }),
        }
    });
    (job, answer)
}

/// What the database thread owns. Dropping it, as the thread returns or
/// unwinds, marks the database down before the queue closes, so that a
/// caller that sees the queue closed also sees [`Database::is_up`] false.
struct Thread {
    store: Box<dyn Store>,
    jobs: mpsc::Receiver<Job>,
    stats: Arc<Stats>,
}

impl Drop for Thread {
    fn drop(&mut self) {
        self.stats.up.store(false, Ordering::Release);
        if std::thread::panicking() {
            tracing::error!("the database thread panicked: nothing more can be stored");
        }
        // Fields drop after this: the queue closes and the jobs still in it
        // are dropped, so their callers get `StoreError::Closed` at once.
    }
}

impl Thread {
    fn serve(mut self) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        let mut failed_batches = 0;
        loop {
            if self.store.connection_lost() && !self.reconnect() {
                return;
            }
            let Some(job) = self.jobs.blocking_recv() else {
                break;
            };
            batch.push(job);
            while batch.len() < MAX_BATCH {
                match self.jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            if self.run_batch(&mut batch) {
                failed_batches = 0;
            } else if self.store.connection_lost() {
                // Not the store failing but the way to it: the next turn
                // reconnects, however many batches that takes.
                failed_batches = 0;
            } else {
                failed_batches += 1;
                if failed_batches >= MAX_FAILED_BATCHES {
                    tracing::error!(
                        failed_batches,
                        "the database keeps failing; its thread stops and nothing more can be stored"
                    );
                    return;
                }
            }
        }
        tracing::debug!("database thread stopped");
    }

    /// Connects the store again after its connection was lost, retrying
    /// with a growing pause (up to [`RECONNECT_PAUSE_MAX`]) for as long as
    /// it takes. Meanwhile the database is down: [`Database::is_up`] is
    /// false (`/healthz` answers 503, calls fail at once with
    /// [`StoreError::Closed`]), and the jobs that were already queued are
    /// dropped unrun, so that no caller waits on the outage and none is
    /// told a result that was not stored. False if every handle was dropped
    /// meanwhile: the thread is done.
    fn reconnect(&mut self) -> bool {
        self.stats.reconnecting.store(true, Ordering::Release);
        self.stats.up.store(false, Ordering::Release);
        tracing::error!("the database connection is lost; reconnecting");
        let mut pause = RECONNECT_PAUSE_MIN;
        loop {
            while let Ok(job) = self.jobs.try_recv() {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                drop(job);
            }
            if self.jobs.is_closed() {
                self.stats.reconnecting.store(false, Ordering::Release);
                return false;
            }
            match self.store.reconnect() {
                Ok(()) => {
                    self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
                    self.stats.up.store(true, Ordering::Release);
                    self.stats.reconnecting.store(false, Ordering::Release);
                    tracing::warn!("the database connection is back");
                    return true;
                }
                Err(error) => {
                    tracing::error!(%error, ?pause, "cannot reconnect to the database yet");
                }
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(RECONNECT_PAUSE_MAX);
        }
    }

    /// Runs and answers `batch` (leaving it empty); false if its
    /// transaction could not begin or commit.
    fn run_batch(&mut self, batch: &mut Vec<Job>) -> bool {
        let stats = Arc::clone(&self.stats);
        if let Err(error) = self.store.begin() {
            // The jobs never run: dropping them drops their reply channels,
            // and each caller gets `StoreError::Closed`, having written nothing.
            tracing::error!(%error, "cannot begin a transaction");
            stats
                .errors
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            batch.clear();
            return false;
        }
        let mut pending = Vec::with_capacity(batch.len());
        // Set when a failed job could not be undone: its writes are still in
        // the transaction, so nothing of the batch may commit.
        let mut poisoned = None;
        for job in batch.drain(..) {
            if poisoned.is_some() {
                // Dropped unrun: its caller gets `StoreError::Closed`.
                continue;
            }
            if let Err(error) = self.run_job(job, &mut pending) {
                poisoned = Some(error);
            }
        }
        stats
            .jobs
            .fetch_add(pending.len() as u64, Ordering::Relaxed);
        let committed = match poisoned {
            Some(error) => Err(error),
            None => {
                let started = Instant::now();
                let committed = self.store.commit();
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                stats.commit_micros.fetch_add(micros, Ordering::Relaxed);
                committed
            }
        };
        match &committed {
            Ok(()) => {
                stats.commits.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                tracing::error!(%error, "commit failed: the batch is lost");
                stats
                    .errors
                    .fetch_add(pending.len() as u64, Ordering::Relaxed);
                self.store.rollback();
            }
        }
        for answer in pending {
            answer(committed.as_ref().map(|_| ()));
        }
        committed.is_ok()
    }

    /// Runs one job in its own savepoint and adds its answer to `pending`.
    /// `Err` if a failed job could not be undone: the batch must not commit.
    fn run_job(&mut self, job: Job, pending: &mut Vec<Answer>) -> Result<(), StoreError> {
        if let Err(error) = self.store.savepoint() {
            // Without a savepoint the job could not be undone: it does not
            // run, and dropping it tells its caller `StoreError::Closed`.
            tracing::error!(%error, "cannot open a savepoint; the call is refused");
            self.stats.errors.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let Ran { succeeded, answer } = job(self.store.as_mut());
        if succeeded {
            match self.store.release_savepoint() {
                Ok(()) => pending.push(answer),
                Err(error) => {
                    tracing::error!(%error, "cannot release a savepoint; the call is undone");
                    // Answered now, not after the commit: it has failed
                    // whatever the commit does, and a later write of its
                    // sequence, in this same batch, must know it.
                    self.stats.jobs.fetch_add(1, Ordering::Relaxed);
                    answer(Err(&error));
                    return self.undo();
                }
            }
            Ok(())
        } else {
            pending.push(answer);
            self.undo()
        }
    }

    /// Rolls the current job back to its savepoint.
    fn undo(&mut self) -> Result<(), StoreError> {
        self.stats.rolled_back.fetch_add(1, Ordering::Relaxed);
        self.store.rollback_to_savepoint().inspect_err(|error| {
            tracing::error!(%error, "cannot roll a failed call back: its batch is dropped");
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Mutex;
    use std::time::Duration;

    use patience_shared::game::GameKind;
    use patience_shared::protocol::{
        PlayerStatus, Progress, RaceRecord, RaceResult, Reveal, Standing,
    };

    use crate::store::postgres::ScratchDatabase;
    use crate::store::{
        Attempt, AttemptKey, DailyDeal, Eligibility, ExpiredAttempt, Leaderboard, LiveMove,
        LiveRace, NewRace, Player, PlayerId, Rank, TokenHash,
    };

    /// What a [`Faulty`] store gets wrong.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Fault {
        None,
        BeginFails,
        CommitFails,
        CommitPanics,
        RollbackToSavepointFails,
    }

    /// The SQLite store in memory, with one fault planted (or none), its
    /// commits gated or not.
    struct Faulty {
        inner: SqliteStore,
        fault: Fault,
        gate: Option<Gate>,
    }

    fn faulty(fault: Fault) -> Box<dyn Store> {
        Box::new(Faulty {
            inner: SqliteStore::in_memory().expect("opens"),
            fault,
            gate: None,
        })
    }

    fn planted(what: &str) -> StoreError {
        StoreError::Corrupt(format!("planted fault: {what}"))
    }

    impl Store for Faulty {
        fn begin(&mut self) -> Result<(), StoreError> {
            if self.fault == Fault::BeginFails {
                return Err(planted("begin"));
            }
            self.inner.begin()
        }
        fn commit(&mut self) -> Result<(), StoreError> {
            match self.fault {
                Fault::CommitFails => Err(planted("commit")),
                // Unwinds without the panic hook's report, like a panic.
                Fault::CommitPanics => std::panic::resume_unwind(Box::new("planted panic")),
                _ => {
                    let Some(gate) = &self.gate else {
                        return self.inner.commit();
                    };
                    let _ = gate.begun.send(());
                    let _ = gate.go.recv();
                    let committed = self.inner.commit();
                    gate.ended.fetch_add(1, Ordering::SeqCst);
                    committed
                }
            }
        }
        fn rollback(&mut self) {
            self.inner.rollback();
        }
        fn savepoint(&mut self) -> Result<(), StoreError> {
            self.inner.savepoint()
        }
        fn release_savepoint(&mut self) -> Result<(), StoreError> {
            self.inner.release_savepoint()
        }
        fn rollback_to_savepoint(&mut self) -> Result<(), StoreError> {
            if self.fault == Fault::RollbackToSavepointFails {
                return Err(planted("rollback to savepoint"));
            }
            self.inner.rollback_to_savepoint()
        }
        fn server_secret(&mut self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError> {
            self.inner.server_secret(fresh)
        }
        fn register(
            &mut self,
            name: &str,
            token: &TokenHash,
            now_ms: u64,
        ) -> Result<Player, StoreError> {
            self.inner.register(name, token, now_ms)
        }
        fn player_by_token(&mut self, token: &TokenHash) -> Result<Option<Player>, StoreError> {
            self.inner.player_by_token(token)
        }
        fn revoke_token(&mut self, token: &TokenHash) -> Result<bool, StoreError> {
            self.inner.revoke_token(token)
        }
        fn save_registration_bucket(
            &mut self,
            bucket: &crate::signup::SavedBucket,
        ) -> Result<(), StoreError> {
            self.inner.save_registration_bucket(bucket)
        }
        fn registration_buckets(
            &mut self,
            limit: usize,
        ) -> Result<Vec<crate::signup::SavedBucket>, StoreError> {
            self.inner.registration_buckets(limit)
        }
        fn save_sign_in_code(
            &mut self,
            player: PlayerId,
            code: &TokenHash,
            now_ms: u64,
            expires_at_ms: u64,
        ) -> Result<(), StoreError> {
            self.inner
                .save_sign_in_code(player, code, now_ms, expires_at_ms)
        }
        fn redeem_sign_in_code(
            &mut self,
            code: &TokenHash,
            token: &TokenHash,
            now_ms: u64,
        ) -> Result<Option<Player>, StoreError> {
            self.inner.redeem_sign_in_code(code, token, now_ms)
        }
        fn daily_deal(
            &mut self,
            game: GameKind,
            date: &str,
        ) -> Result<Option<DailyDeal>, StoreError> {
            self.inner.daily_deal(game, date)
        }
        fn save_daily_deal(&mut self, deal: &DailyDeal) -> Result<DailyDeal, StoreError> {
            self.inner.save_daily_deal(deal)
        }
        fn attempt(&mut self, key: &AttemptKey) -> Result<Option<Attempt>, StoreError> {
            self.inner.attempt(key)
        }
        fn begin_attempt(
            &mut self,
            key: &AttemptKey,
            started_at_ms: u64,
        ) -> Result<(), StoreError> {
            self.inner.begin_attempt(key, started_at_ms)
        }
        fn record_move(
            &mut self,
            key: &AttemptKey,
            index: u32,
            text: &str,
            at_ms: u64,
        ) -> Result<(), StoreError> {
            self.inner.record_move(key, index, text, at_ms)
        }
        fn finish_attempt(
            &mut self,
            key: &AttemptKey,
            status: PlayerStatus,
            progress: Progress,
            race: &NewRace,
            eligibility: Eligibility,
        ) -> Result<u64, StoreError> {
            self.inner
                .finish_attempt(key, status, progress, race, eligibility)
        }
        fn attempt_of_race(&mut self, race_id: u64) -> Result<Option<AttemptKey>, StoreError> {
            self.inner.attempt_of_race(race_id)
        }
        fn expired_attempts(
            &mut self,
            started_by_ms: u64,
        ) -> Result<Vec<ExpiredAttempt>, StoreError> {
            self.inner.expired_attempts(started_by_ms)
        }
        fn winning_times(
            &mut self,
            game: GameKind,
            date: &str,
            limit: u32,
        ) -> Result<(u32, Vec<u64>), StoreError> {
            self.inner.winning_times(game, date, limit)
        }
        fn rank(&mut self, key: &AttemptKey) -> Result<Option<Rank>, StoreError> {
            self.inner.rank(key)
        }
        fn leaderboard(
            &mut self,
            game: GameKind,
            date: &str,
            limit: u32,
            player: Option<PlayerId>,
        ) -> Result<Leaderboard, StoreError> {
            self.inner.leaderboard(game, date, limit, player)
        }
        fn record_race(&mut self, race: &NewRace) -> Result<u64, StoreError> {
            self.inner.record_race(race)
        }
        fn ratings_of(
            &mut self,
            game: GameKind,
            players: &[crate::store::PlayerId],
        ) -> Result<Vec<crate::store::StoredRating>, StoreError> {
            self.inner.ratings_of(game, players)
        }
        fn record_ratings(&mut self, race: &crate::store::RatedRace) -> Result<bool, StoreError> {
            self.inner.record_ratings(race)
        }
        fn ratings_since(
            &mut self,
            game: GameKind,
            since_ms: u64,
        ) -> Result<Vec<crate::store::StoredRating>, StoreError> {
            self.inner.ratings_since(game, since_ms)
        }
        fn rating_history(
            &mut self,
            player: crate::store::PlayerLookup<'_>,
            game: GameKind,
            limit: u32,
        ) -> Result<Option<crate::store::RatingHistory>, StoreError> {
            self.inner.rating_history(player, game, limit)
        }
        fn race(&mut self, race_id: u64) -> Result<Option<RaceRecord>, StoreError> {
            self.inner.race(race_id)
        }
        fn race_of_room(&mut self, code: &str) -> Result<Option<u64>, StoreError> {
            self.inner.race_of_room(code)
        }
        fn save_live_race(&mut self, room: &LiveRace) -> Result<(), StoreError> {
            self.inner.save_live_race(room)
        }
        fn record_live_move(&mut self, code: &str, kept: &LiveMove) -> Result<(), StoreError> {
            self.inner.record_live_move(code, kept)
        }
        fn end_live_race(&mut self, code: &str, epoch: u64) -> Result<(), StoreError> {
            self.inner.end_live_race(code, epoch)
        }
        fn claim_live_race(&mut self, code: &str) -> Result<Option<LiveRace>, StoreError> {
            self.inner.claim_live_race(code)
        }
        fn live_races(&mut self) -> Result<Vec<LiveRace>, StoreError> {
            self.inner.live_races()
        }
        fn set_node(&mut self, node: &str) {
            self.inner.set_node(node);
        }
        fn renew_node_lease(&mut self, node: &str, until_ms: u64) -> Result<(), StoreError> {
            self.inner.renew_node_lease(node, until_ms)
        }
        fn orphaned_races(&mut self, now_ms: u64) -> Result<Vec<String>, StoreError> {
            self.inner.orphaned_races(now_ms)
        }
        fn keeps_live_race(&mut self, code: &str) -> Result<bool, StoreError> {
            self.inner.keeps_live_race(code)
        }
        fn keep_proved_deal(
            &mut self,
            owner: &str,
            game: GameKind,
            seed: u64,
        ) -> Result<(), StoreError> {
            self.inner.keep_proved_deal(owner, game, seed)
        }
        fn proved_deals(&mut self, owner: &str) -> Result<Vec<(GameKind, u64)>, StoreError> {
            self.inner.proved_deals(owner)
        }
        fn tally_day(&mut self, game: GameKind, date: &str) -> Result<bool, StoreError> {
            self.inner.tally_day(game, date)
        }
        fn untallied_days(
            &mut self,
            closed_through: &str,
        ) -> Result<Vec<(GameKind, String)>, StoreError> {
            self.inner.untallied_days(closed_through)
        }
        fn daily_days(
            &mut self,
            game: GameKind,
            before: Option<&str>,
            limit: u32,
        ) -> Result<crate::store::DaysFound, StoreError> {
            self.inner.daily_days(game, before, limit)
        }
        fn player_record(
            &mut self,
            player: crate::store::PlayerLookup<'_>,
        ) -> Result<Option<patience_shared::protocol::PlayerRecord>, StoreError> {
            self.inner.player_record(player)
        }
        fn standings(
            &mut self,
            game: GameKind,
            span: &crate::store::PeriodSpan,
            today: &str,
            limit: u32,
            player: Option<PlayerId>,
        ) -> Result<crate::store::Standings, StoreError> {
            self.inner.standings(game, span, today, limit, player)
        }
    }

    /// Makes a store's commits each wait for the test's word: it says
    /// when a commit has begun, and counts those that ended.
    struct Gate {
        begun: std::sync::mpsc::SyncSender<()>,
        go: std::sync::mpsc::Receiver<()>,
        ended: Arc<AtomicU64>,
    }

    /// A database thread's state, run by hand so that a test decides
    /// which jobs share a batch.
    fn thread(store: Box<dyn Store>) -> Thread {
        Thread {
            store,
            jobs: mpsc::channel(1).1,
            stats: Arc::new(Stats::default()),
        }
    }

    /// How a job of a batch ends after registering its player.
    #[derive(Clone, Copy, Debug)]
    enum Ending {
        Succeeds,
        Fails,
        Panics,
    }

    fn token(name: &str) -> TokenHash {
        let mut token = [0; 32];
        for (byte, letter) in token.iter_mut().zip(name.bytes()) {
            *byte = letter;
        }
        token
    }

    /// A job that registers `name`, then ends as `ending` says.
    fn registering(
        name: &'static str,
        ending: Ending,
    ) -> (Job, oneshot::Receiver<Result<Player, StoreError>>) {
        job(move |store| {
            let player = store.register(name, &token(name), 0)?;
            match ending {
                Ending::Succeeds => Ok(player),
                // The error a later write of the job could meet.
                Ending::Fails => Err(StoreError::AttemptNotOpen),
                Ending::Panics => std::panic::resume_unwind(Box::new("planted panic")),
            }
        })
    }

    /// A finished race of one guest, seated at `seats` (a seat twice breaks
    /// the race's second write, its players).
    fn race(seats: &[u8]) -> NewRace {
        NewRace {
            daily: None,
            room_code: None,
            ended_at_ms: 1_000,
            result: RaceResult {
                race_id: None,
                standings: seats
                    .iter()
                    .map(|&seat| Standing {
                        rank: 1,
                        seat,
                        name: "a guest".to_string(),
                        status: PlayerStatus::Won,
                        progress: Progress::default(),
                        bot: None,
                    })
                    .collect(),
                reveal: Reveal {
                    game: GameKind::ThreeBlindMice,
                    seed: 7,
                    salt: "00112233445566778899aabbccddeeff".to_string(),
                },
                logs: Vec::new(),
                open_boards: false,
            },
            players: Vec::new(),
        }
    }

    /// Jobs sharing one batch, and whether each one's player is kept.
    const BATCH: &[(&str, Ending, bool)] = &[
        ("ada", Ending::Succeeds, true),
        ("bob", Ending::Fails, false),
        ("cal", Ending::Succeeds, true),
        ("dan", Ending::Panics, false),
        ("eve", Ending::Succeeds, true),
    ];

    #[test]
    fn a_failing_job_leaves_nothing_and_the_rest_of_its_batch_commits() {
        let mut thread = thread(Box::new(SqliteStore::in_memory().expect("opens")));
        let mut batch = Vec::new();
        let mut answers = Vec::new();
        for &(name, ending, _) in BATCH {
            let (job, answer) = registering(name, ending);
            batch.push(job);
            answers.push(answer);
        }
        // A job whose first write (a race) succeeds and whose second (an
        // attempt of a player who does not exist) fails.
        let race_id = Arc::new(Mutex::new(None));
        let written = Arc::clone(&race_id);
        let (half, half_answer) = job(move |store| {
            let id = store.record_race(&race(&[0]))?;
            *written.lock().expect("not poisoned") = Some(id);
            let nobody = AttemptKey {
                player: 999,
                game: GameKind::ThreeBlindMice,
                date: "2026-12-01".to_string(),
            };
            store.begin_attempt(&nobody, 0)
        });
        batch.insert(2, half);
        // A store call whose own second write fails: two rows for seat 0.
        let (broken, broken_answer) = job(|store| store.record_race(&race(&[0, 0])));
        batch.insert(4, broken);

        assert!(thread.run_batch(&mut batch), "the batch commits");
        assert!(batch.is_empty());
        for (&(name, ending, kept), mut answer) in BATCH.iter().zip(answers) {
            let answer = answer.try_recv().expect("answered after the commit");
            match (ending, answer) {
                (Ending::Succeeds, Ok(player)) => assert_eq!(player.name, name),
                (Ending::Fails, Err(StoreError::AttemptNotOpen))
                | (Ending::Panics, Err(StoreError::Panicked)) => {}
                (ending, answer) => panic!("{name} {ending:?}: {answer:?}"),
            }
            let stored = thread
                .store
                .player_by_token(&token(name))
                .expect("reads")
                .map(|player| player.name);
            assert_eq!(stored.is_some(), kept, "{name}: {stored:?}");
        }
        let mut half_answer = half_answer;
        assert!(matches!(
            half_answer.try_recv(),
            Ok(Err(StoreError::Database(_)))
        ));
        let race_id = race_id
            .lock()
            .expect("not poisoned")
            .expect("the first write ran");
        assert_eq!(thread.store.race(race_id).expect("reads"), None);
        let mut broken_answer = broken_answer;
        assert!(matches!(
            broken_answer.try_recv(),
            Ok(Err(StoreError::Database(_)))
        ));
        // Neither race was kept: the next one takes the first id again.
        let next = thread.store.record_race(&race(&[0])).expect("stores");
        assert_eq!(next, race_id);
        let stats = &thread.stats;
        assert_eq!(stats.jobs.load(Ordering::Relaxed), 7);
        assert_eq!(stats.rolled_back.load(Ordering::Relaxed), 4);
        assert_eq!(stats.commits.load(Ordering::Relaxed), 1);
        assert_eq!(stats.errors.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_failed_job_that_cannot_be_undone_drops_its_whole_batch() {
        let mut thread = thread(faulty(Fault::RollbackToSavepointFails));
        let (first, mut first_answer) = registering("ada", Ending::Succeeds);
        let (second, mut second_answer) = registering("bob", Ending::Fails);
        let (third, mut third_answer) = registering("cal", Ending::Succeeds);
        let mut batch = vec![first, second, third];
        assert!(!thread.run_batch(&mut batch), "nothing commits");
        assert!(matches!(
            first_answer.try_recv(),
            Ok(Err(StoreError::Commit(_)))
        ));
        assert!(matches!(
            second_answer.try_recv(),
            Ok(Err(StoreError::Commit(_)))
        ));
        // Never run, once the batch could not commit.
        assert!(third_answer.try_recv().is_err());
        for name in ["ada", "bob", "cal"] {
            assert_eq!(
                thread.store.player_by_token(&token(name)).expect("reads"),
                None,
                "{name}"
            );
        }
    }

    /// Waits for `call`, failing the test rather than hanging.
    async fn at_once<T>(call: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .expect("answers without waiting")
    }

    #[tokio::test]
    async fn a_store_that_keeps_failing_stops_the_thread_and_calls_fail_at_once() {
        for fault in [Fault::BeginFails, Fault::CommitFails] {
            let database = Database::start(faulty(fault), 4).expect("starts");
            for _ in 0..MAX_FAILED_BATCHES {
                assert!(database.is_up(), "{fault:?}");
                let answer = at_once(database.call(|_| Ok(()))).await;
                match (fault, answer) {
                    (Fault::BeginFails, Err(StoreError::Closed))
                    | (Fault::CommitFails, Err(StoreError::Commit(_))) => {}
                    (fault, answer) => panic!("{fault:?}: {answer:?}"),
                }
            }
            at_once(database.stopped()).await;
            assert!(!database.is_up(), "{fault:?}");
            assert!(matches!(
                at_once(database.call(|_| Ok(()))).await,
                Err(StoreError::Closed)
            ));
            assert_eq!(
                database.stats().errors.load(Ordering::Relaxed),
                u64::from(MAX_FAILED_BATCHES)
            );
        }
    }

    /// A job of a sequence that registers `name` and answers it.
    fn registers(
        name: &'static str,
    ) -> impl FnOnce(&mut dyn Store) -> Result<String, StoreError> + Send + 'static {
        move |store| {
            store
                .register(name, &[name.as_bytes()[0]; 32], 0)
                .map(|player| player.name)
        }
    }

    #[tokio::test]
    async fn no_write_of_a_sequence_commits_after_one_before_it_failed() {
        let database = Database::open(None, 16).expect("opens");
        let sequence = Sequence::new();
        // Queued before any is awaited: they may share a batch, and the
        // third would commit in it but for the second's failure.
        let first = database.queue_in(&sequence, registers("ada")).await;
        let second = database
            .queue_in(&sequence, |_| {
                Err::<String, _>(StoreError::Commit("planted".to_string()))
            })
            .await;
        let third = database.queue_in(&sequence, registers("cal")).await;
        assert_eq!(at_once(first).await.ok().as_deref(), Some("ada"));
        assert!(at_once(second).await.is_err());
        assert!(matches!(at_once(third).await, Err(StoreError::Skipped)));
        assert!(sequence.is_broken());
        // Later writes of it are skipped too; a new sequence writes.
        let fourth = database.queue_in(&sequence, registers("dan")).await;
        assert!(matches!(at_once(fourth).await, Err(StoreError::Skipped)));
        let fresh = Sequence::new();
        let again = database.queue_in(&fresh, registers("cal")).await;
        assert_eq!(at_once(again).await.ok().as_deref(), Some("cal"));
        assert!(!fresh.is_broken());
        let dan = at_once(database.call(|store| store.player_by_token(&token("dan")))).await;
        assert!(matches!(dan, Ok(None)), "{dan:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_that_will_not_wait_fails_at_once_on_a_full_queue_and_breaks_its_sequence() {
        let database = Database::open(None, 1).expect("opens");
        // The thread is held inside a job (as by a disk that hangs), and
        // one more job fills its queue of one.
        let (release, held) = std::sync::mpsc::sync_channel::<()>(1);
        let (entered, inside) = oneshot::channel();
        let holding = database
            .queue(move |_| {
                let _ = entered.send(());
                let _ = held.recv();
                Ok(())
            })
            .await;
        at_once(inside).await.expect("the thread runs the job");
        let waiting = database.queue(registers("ada")).await;

        let sequence = Sequence::new();
        let refused = database.queue_in_now(&sequence, registers("bob"));
        assert!(matches!(at_once(refused).await, Err(StoreError::QueueFull)));
        assert!(StoreError::QueueFull.is_transient());
        assert!(
            sequence.is_broken(),
            "a write not queued breaks its sequence"
        );

        release.send(()).expect("the job waits");
        assert!(at_once(holding).await.is_ok());
        assert_eq!(at_once(waiting).await.ok().as_deref(), Some("ada"));
        // Later writes of the broken sequence are skipped; a new one writes.
        let later = database.queue_in_now(&sequence, registers("cal"));
        assert!(matches!(at_once(later).await, Err(StoreError::Skipped)));
        let fresh = Sequence::new();
        let written = database.queue_in_now(&fresh, registers("cal"));
        assert_eq!(at_once(written).await.ok().as_deref(), Some("cal"));
        let bob = at_once(database.call(|store| store.player_by_token(&[b'b'; 32]))).await;
        assert!(matches!(bob, Ok(None)), "{bob:?}");
    }

    #[tokio::test]
    async fn a_write_whose_batch_fails_or_that_is_dropped_unrun_breaks_its_sequence() {
        // The commit fails after the write ran; the transaction cannot
        // begin, so the write is dropped unrun.
        for fault in [Fault::CommitFails, Fault::BeginFails] {
            let database = Database::start(faulty(fault), 4).expect("starts");
            let sequence = Sequence::new();
            let written = database.queue_in(&sequence, registers("ada")).await;
            assert!(at_once(written).await.is_err(), "{fault:?}");
            assert!(sequence.is_broken(), "{fault:?}");
        }
        // One that commits leaves it whole.
        let database = Database::open(None, 4).expect("opens");
        let sequence = Sequence::new();
        let written = database.queue_in(&sequence, registers("ada")).await;
        assert!(at_once(written).await.is_ok());
        assert!(!sequence.is_broken());
    }

    #[tokio::test]
    async fn queued_calls_run_in_the_order_they_were_queued_whatever_is_awaited_first() {
        let database = Database::open(None, 64).expect("opens");
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut answers = Vec::new();
        for index in 0..20 {
            let order = Arc::clone(&order);
            answers.push(
                database
                    .queue(move |_| {
                        order.lock().map_err(|_| StoreError::Panicked)?.push(index);
                        Ok(index)
                    })
                    .await,
            );
        }
        // The last answer awaited first: the jobs were queued already.
        for (index, answer) in answers.into_iter().enumerate().rev() {
            assert_eq!(at_once(answer).await.ok(), Some(index));
        }
        let ran = order.lock().map(|ran| ran.clone()).unwrap_or_default();
        assert_eq!(ran, (0..20).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn calls_that_fail_never_stop_the_thread() {
        // Only the database's own failures count towards stopping: a call's
        // error is rolled back and its batch commits.
        let database = Database::open(None, 4).expect("opens");
        for round in 0..2 * MAX_FAILED_BATCHES {
            let answer = at_once(database.call(move |store| {
                store.register(
                    &format!("p{round}"),
                    &[u8::try_from(round).unwrap_or(0); 32],
                    0,
                )
            }))
            .await;
            assert!(answer.is_ok(), "{answer:?}");
            let failed = at_once(database.call(|_| Err::<(), _>(StoreError::AttemptNotOpen))).await;
            assert!(matches!(failed, Err(StoreError::AttemptNotOpen)));
        }
        assert!(database.is_up());
    }

    #[tokio::test]
    async fn a_panic_on_the_thread_marks_it_down_and_calls_fail_at_once() {
        // A panic in the store itself, outside any job; then one the way
        // the test hook plants it.
        let database = Database::start(faulty(Fault::CommitPanics), 4).expect("starts");
        assert!(matches!(
            at_once(database.call(|_| Ok(()))).await,
            Err(StoreError::Closed)
        ));
        at_once(database.stopped()).await;
        assert!(!database.is_up());

        let database = Database::open(None, 4).expect("opens");
        assert!(database.is_up());
        at_once(database.crash_for_tests()).await;
        assert!(!database.is_up());
        assert!(matches!(
            at_once(database.call(|_| Ok(()))).await,
            Err(StoreError::Closed)
        ));
    }

    #[tokio::test]
    async fn a_panicking_call_fails_alone_and_the_thread_serves_on() {
        panicking_call(Database::open(None, 4).expect("opens")).await;
    }

    /// A call that registers a player and panics: its write is undone.
    async fn panicking_call(database: Database) {
        let panicked = at_once(database.call(|store| -> Result<(), StoreError> {
            store.register("ada", &[1; 32], 0)?;
            std::panic::resume_unwind(Box::new("planted panic"))
        }))
        .await;
        assert!(matches!(panicked, Err(StoreError::Panicked)));
        assert!(database.is_up());
        let again = at_once(database.call(|store| store.register("ada", &[1; 32], 0))).await;
        assert_eq!(again.map(|player| player.name).ok().as_deref(), Some("ada"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_sharing_a_batch_fail_or_succeed_on_their_own() {
        sharing_a_batch(Database::open(None, 16).expect("opens")).await;
    }

    /// A PostgreSQL database of the test's own, behind its thread.
    fn postgres(queue: usize) -> (Database, ScratchDatabase) {
        let scratch = ScratchDatabase::create();
        let url: DatabaseUrl = scratch.url().parse().expect("any text");
        let database = Database::open_postgres(&url, queue).expect("opens");
        (database, scratch)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_sharing_a_batch_fail_or_succeed_on_their_own_on_postgresql() {
        let (database, _scratch) = postgres(16);
        sharing_a_batch(database).await;
    }

    #[tokio::test]
    async fn a_panicking_call_on_postgresql_fails_alone_and_the_thread_serves_on() {
        let (database, _scratch) = postgres(4);
        panicking_call(database).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lost_postgresql_connection_is_made_again_and_nothing_unstored_is_acknowledged() {
        let (database, scratch) = postgres(4);
        let register = |name: &'static str| {
            // A token of each name's own: a token taken is refused like a name.
            let token = [name.as_bytes()[0]; 32];
            database.call(move |store| store.register(name, &token, 0).map(|player| player.name))
        };
        assert_eq!(at_once(register("ada")).await.ok().as_deref(), Some("ada"));
        assert_eq!(
            scratch.terminate_sessions().ok(),
            Some(1),
            "the thread's one session"
        );

        // The call that meets the lost connection fails: nothing of it is kept.
        let broken = at_once(register("bob")).await;
        assert!(broken.is_err(), "{broken:?}");

        // The thread reconnects on its own; until then calls fail at once.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let again = loop {
            match at_once(register("bob")).await {
                Err(StoreError::Closed) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                other => break other,
            }
        };
        assert_eq!(
            again.as_ref().ok().map(String::as_str),
            Some("bob"),
            "{again:?}"
        );
        assert!(database.is_up() && !database.is_reconnecting());
        assert_eq!(database.stats().reconnects.load(Ordering::Relaxed), 1);
        let kept = at_once(register("ada")).await;
        assert!(matches!(kept, Err(StoreError::NameTaken(_))), "{kept:?}");
    }

    #[test]
    fn a_postgresql_database_that_cannot_be_opened_is_named_without_its_password() {
        let url: DatabaseUrl = "host=/nonexistent/patience user=ada password=hunter2"
            .parse()
            .expect("any text");
        let error = Database::open_postgres(&url, 4).expect_err("refused");
        let OpenError::Postgres { url, source } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(url, "host=/nonexistent/patience user=ada password=***");
        assert!(matches!(source, StoreError::Postgres(_)), "{source}");
        assert!(!format!("{error} {error:?}").contains("hunter2"));
    }

    /// 200 calls at once, half of them for one name: one wins it, each
    /// other fails alone.
    async fn sharing_a_batch(database: Database) {
        let calls: Vec<_> = (0u8..200)
            .map(|index| {
                let database = database.clone();
                tokio::spawn(async move {
                    // Every even call asks for the same name: one wins.
                    let name = if index % 2 == 0 {
                        "twin".to_string()
                    } else {
                        format!("p{index}")
                    };
                    database
                        .call(move |store| store.register(&name, &[index; 32], 0))
                        .await
                })
            })
            .collect();
        let mut registered = 0;
        let mut taken = 0;
        for call in calls {
            match call.await.expect("the task runs") {
                Ok(_) => registered += 1,
                Err(StoreError::NameTaken(name)) => {
                    assert_eq!(name, "twin");
                    taken += 1;
                }
                Err(other) => panic!("unexpected {other}"),
            }
        }
        assert_eq!((registered, taken), (101, 99));
        let stats = database.stats();
        assert_eq!(stats.jobs.load(Ordering::Relaxed), 200);
        assert_eq!(stats.errors.load(Ordering::Relaxed), 0);
        // Whatever the batching, every answer came after a commit.
        assert!(stats.commits.load(Ordering::Relaxed) >= 1);
    }

    /// Waits for the gated store's next commit to begin.
    fn commit_begins(begun: &std::sync::mpsc::Receiver<()>) {
        begun
            .recv_timeout(Duration::from_secs(10))
            .expect("a commit begins");
    }

    #[tokio::test]
    async fn a_job_waits_through_at_most_the_commit_in_flight_and_its_own() {
        let (begun_sender, begun) = std::sync::mpsc::sync_channel(8);
        let (go, go_receiver) = std::sync::mpsc::sync_channel(8);
        let ended = Arc::new(AtomicU64::new(0));
        let store = Faulty {
            inner: SqliteStore::in_memory().expect("opens"),
            fault: Fault::None,
            gate: Some(Gate {
                begun: begun_sender,
                go: go_receiver,
                ended: Arc::clone(&ended),
            }),
        };
        let database = Database::start(Box::new(store), 64).expect("starts");
        // Commits a job waits through: those that end between its queueing
        // and its answer.
        let alone = database.queue(|_| Ok(())).await;
        commit_begins(&begun);
        // The first commit is in flight: these arrive during it.
        let mut during = Vec::new();
        for _ in 0..5 {
            during.push(database.queue(|_| Ok(())).await);
        }
        let _ = go.send(());
        at_once(alone).await.expect("committed");
        assert_eq!(
            ended.load(Ordering::SeqCst),
            1,
            "queued alone: its own commit"
        );
        // The next group commit begins the moment the last one ends, and
        // takes every job that waited: none is left for a third.
        commit_begins(&begun);
        let _ = go.send(());
        for answer in during {
            at_once(answer).await.expect("committed");
            assert_eq!(
                ended.load(Ordering::SeqCst),
                2,
                "queued during a commit: that one and its own"
            );
        }
        let stats = database.stats();
        assert_eq!(stats.commits.load(Ordering::Relaxed), 2);
        assert_eq!(stats.jobs.load(Ordering::Relaxed), 6);
    }
}
