//! What a room counts for the server's metrics. The core says what
//! happened through [`RoomMetrics`]; the server adds it to its own
//! counters (one registry for every metric it exports), and a test or the
//! fuzzer reads [`RoomCounts`].

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// A count that only grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// A race started.
    RacesStarted,
    /// A race ended.
    RacesFinished,
    /// A move (or a take-back) was played.
    MovesAccepted,
    /// A move was refused.
    MovesRejected,
    /// A race's result could not be stored.
    StorageErrors,
    /// A running race was written again, whole, after a write failed.
    StoreRetries,
}

/// A level that goes up and down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gauge {
    /// Races running.
    RacesRunning,
    /// Rooms whose running race waits for the store: a write failed and
    /// none has committed since.
    RoomsWaitingForStore,
}

/// Where a room's counts go. Recording must not block: rooms call it on
/// their hot path (every move).
pub trait RoomMetrics: Send + Sync {
    /// Adds one to `counter`.
    fn bump(&self, counter: Counter);
    /// Adds `delta` to `gauge`.
    fn gauge(&self, gauge: Gauge, delta: i64);
}

/// The counts of rooms in plain atomics, for whoever runs rooms without
/// the server (tests, the fuzzer).
#[derive(Debug, Default)]
pub struct RoomCounts {
    /// Races started.
    pub races_started: AtomicU64,
    /// Races ended.
    pub races_finished: AtomicU64,
    /// Moves played.
    pub moves_accepted: AtomicU64,
    /// Moves refused.
    pub moves_rejected: AtomicU64,
    /// Results that could not be stored.
    pub storage_errors: AtomicU64,
    /// Running races written again after a failed write.
    pub store_retries: AtomicU64,
    /// Races running now.
    pub races_running: AtomicI64,
    /// Rooms waiting for the store now.
    pub rooms_waiting_for_store: AtomicI64,
}

impl RoomMetrics for RoomCounts {
    fn bump(&self, counter: Counter) {
        let counter = match counter {
            Counter::RacesStarted => &self.races_started,
            Counter::RacesFinished => &self.races_finished,
            Counter::MovesAccepted => &self.moves_accepted,
            Counter::MovesRejected => &self.moves_rejected,
            Counter::StorageErrors => &self.storage_errors,
            Counter::StoreRetries => &self.store_retries,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn gauge(&self, gauge: Gauge, delta: i64) {
        let gauge = match gauge {
            Gauge::RacesRunning => &self.races_running,
            Gauge::RoomsWaitingForStore => &self.rooms_waiting_for_store,
        };
        gauge.fetch_add(delta, Ordering::Relaxed);
    }
}
