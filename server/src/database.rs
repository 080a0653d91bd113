//! The database thread: the one place the [`Store`] is touched.
//!
//! Tasks never wait on disk: they send a job down a **bounded** channel and
//! await its answer. The thread takes every job waiting (up to
//! [`MAX_BATCH`]), runs them in one transaction, commits once, and only then
//! answers each. So an answer always means "committed": a task that tells a
//! player a result after `call` returned has it on disk first, and many
//! players' moves share one fsync (group commit).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use crate::store::sqlite::SqliteStore;
use crate::store::{Store, StoreError};

/// The most jobs committed together.
pub const MAX_BATCH: usize = 256;

/// The file name of the database inside the data directory.
pub const DATABASE_FILE: &str = "patience.sqlite3";

/// What a job hands back once it has run: the answer to send when the
/// commit's outcome is known.
type Answer = Box<dyn FnOnce(Result<(), &StoreError>) + Send>;
type Job = Box<dyn FnOnce(&mut dyn Store) -> Answer + Send>;

/// A handle on the database thread, cheap to clone.
#[derive(Clone, Debug)]
pub struct Database {
    jobs: mpsc::Sender<Job>,
    stats: Arc<Stats>,
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Stats {
    /// Jobs run.
    pub jobs: AtomicU64,
    /// Transactions committed.
    pub commits: AtomicU64,
    /// Jobs whose transaction could not begin or commit.
    pub errors: AtomicU64,
    /// Time spent in commits, in microseconds.
    pub commit_micros: AtomicU64,
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

    /// Starts the thread that owns `store`. It stops when every handle is
    /// dropped, after the jobs already sent.
    pub fn start(store: Box<dyn Store>, queue: usize) -> std::io::Result<Database> {
        let (jobs, receiver) = mpsc::channel(queue.max(1));
        let stats = Arc::new(Stats::default());
        let thread_stats = Arc::clone(&stats);
        std::thread::Builder::new()
            .name("database".to_string())
            .spawn(move || serve(store, receiver, &thread_stats))?;
        Ok(Database { jobs, stats })
    }

    /// Runs `work` on the database thread and returns its result once the
    /// transaction holding it has committed.
    pub async fn call<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |store| {
            let result = work(store);
            Box::new(move |committed: Result<(), &StoreError>| {
                let outcome = match committed {
                    Ok(()) => result,
                    Err(error) => Err(StoreError::Commit(error.to_string())),
                };
                let _ = reply.send(outcome);
            })
        });
        self.jobs.send(job).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    /// The thread's counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

fn serve(mut store: Box<dyn Store>, mut jobs: mpsc::Receiver<Job>, stats: &Stats) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while let Some(job) = jobs.blocking_recv() {
        batch.push(job);
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if let Err(error) = store.begin() {
            // The jobs never run: dropping them drops their reply channels,
            // and each caller gets `StoreError::Closed`, having written nothing.
            tracing::error!(%error, "cannot begin a transaction");
            stats
                .errors
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            batch.clear();
            continue;
        }
        let answers: Vec<Answer> = batch.drain(..).map(|job| job(store.as_mut())).collect();
        stats
            .jobs
            .fetch_add(answers.len() as u64, Ordering::Relaxed);
        let started = Instant::now();
        let committed = store.commit();
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        stats.commit_micros.fetch_add(micros, Ordering::Relaxed);
        match &committed {
            Ok(()) => {
                stats.commits.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                tracing::error!(%error, "commit failed: the batch is lost");
                stats
                    .errors
                    .fetch_add(answers.len() as u64, Ordering::Relaxed);
                store.rollback();
            }
        }
        for answer in answers {
            answer(committed.as_ref().map(|_| ()));
        }
    }
    tracing::debug!("database thread stopped");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_sharing_a_batch_fail_or_succeed_on_their_own() {
        let database = Database::open(None, 16).expect("opens");
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
}
