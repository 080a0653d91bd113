//! What every task of the server shares, behind one `Arc`: the settings,
//! the registry, the deal pool, the database, the daily deals, the counters
//! and the shutdown signal.
//!
//! Only the edges hold it (the listener, the connections, the admin port);
//! a room gets the pieces it uses ([`Shared::room_context`]), and the
//! modules below take what they need as arguments, so no module depends on
//! this one but those edges and the crate's root.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::bots::{self, Bots};
use crate::clock::Clock;
use crate::cluster::Cluster;
use crate::config::Config;
use crate::daily::Daily;
use crate::database::Database;
use crate::deal_pool::DealPool;
use crate::metrics::Metrics;
use crate::registry::Registry;
use crate::room;
use crate::room_handle::OpenRematch;
use crate::signup::SignupLimiter;

/// What every task of the server shares.
#[derive(Debug)]
pub struct Shared {
    /// The settings.
    pub(crate) config: Config,
    /// Rooms and resume tokens.
    pub(crate) registry: Arc<Registry>,
    /// Proved deals.
    pub(crate) pool: DealPool,
    /// The database.
    pub(crate) database: Database,
    /// Daily deals and attempts.
    pub(crate) daily: Daily,
    /// Counters for `/metrics`.
    pub(crate) metrics: Arc<Metrics>,
    /// Cancelled when the server stops.
    pub(crate) shutdown: CancellationToken,
    /// Every task the server spawned, to wait for at shutdown.
    pub(crate) tracker: TaskTracker,
    /// The next connection's id.
    pub(crate) next_connection_id: AtomicU64,
    /// Sockets the server may hold open at once (taken before `accept`).
    pub(crate) socket_slots: Arc<Semaphore>,
    /// Registrations left to each source address.
    pub(crate) signups: SignupLimiter,
    /// Sign-in codes each source address may still try.
    pub(crate) sign_ins: SignupLimiter,
    /// The bounds on the bots the server runs.
    pub(crate) bots: Bots,
    /// The daily deal's wall clock (the configuration's).
    pub(crate) clock: Clock,
    /// This node's membership of a cluster, with `redis_url`.
    pub(crate) cluster: Option<Cluster>,
    /// Where finished rooms ask for their rematches' rooms
    /// ([`crate::rematch::serve`]).
    pub(crate) rematches: mpsc::Sender<OpenRematch>,
}

impl Shared {
    /// What seating a bot takes from the server.
    pub fn bot_hosting(&self) -> bots::Hosting<'_> {
        bots::Hosting {
            bots: &self.bots,
            next_connection_id: &self.next_connection_id,
            clock: &self.clock,
            shutdown: &self.shutdown,
            tracker: &self.tracker,
        }
    }

    /// The pieces of the server a room uses.
    pub fn room_context(&self) -> room::RoomContext {
        let config = &self.config;
        room::RoomContext {
            registry: Arc::clone(&self.registry),
            pool: self.pool.clone(),
            database: self.database.clone(),
            metrics: Arc::clone(&self.metrics),
            clock: self.clock.clone(),
            shutdown: self.shutdown.clone(),
            tracker: self.tracker.clone(),
            cluster: self.cluster.clone(),
            settings: room::core::Settings {
                countdown_ms: config.countdown_ms,
                grace_ms: config.grace_period_ms,
                linger_ms: config.finished_room_linger_ms,
                default_time_limit_ms: config.default_time_limit_ms,
                event_log_capacity: config.event_log_capacity,
                event_log_bytes: config.event_log_bytes,
                store_outage_ms: config.store_outage_ms,
                progress_tick_ms: config.progress_tick_ms,
            },
            rematches: self.rematches.clone(),
        }
    }
}
