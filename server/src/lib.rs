//! The Patience Race server: authoritative races over WebSockets.
//!
//! Layout:
//! - [`clock`]: the wall clock of the daily deal, virtual in tests;
//! - [`cluster`]: several nodes behind one Redis: room leases, tokens,
//!   redirects and one quick-race queue per game (off without `redis_url`);
//! - [`config`]: every address, limit and timing, from defaults, a TOML
//!   file, environment variables and flags;
//! - [`listener`]: the accept loop, with the connection cap and back-off;
//! - [`connection`]: one socket's reader loop and writer task;
//! - [`room`]: the room actor that owns a race;
//! - [`bots`]: bots the server runs in rooms' seats, fed their seats' frames;
//! - [`registry`]: rooms by code and resume tokens by hash (handles only);
//! - [`lobby`]: the open public rooms still forming, of every node;
//! - [`rematch`]: opens the rooms of rematches every racer accepted;
//! - [`failover`]: running races whose node is gone, taken over here;
//! - [`deal_pool`]: proved-winnable deals, proved on a dedicated thread;
//! - [`signup`]: the per-address limit on registering accounts (and on
//!   trying sign-in codes);
//! - [`store`]: what is kept (players, finished races, daily deals and
//!   attempts) behind a small trait, SQLite by default, PostgreSQL with
//!   `--database-url`;
//! - [`database`]: the thread that owns the store and commits in batches;
//! - [`ratings`]: a rated race's rating changes, the rating list;
//! - [`daily`]: the deal of the day and players' attempts at it;
//! - [`metrics`] and [`admin`]: `/metrics` and `/healthz`;
//! - [`web`]: the web page, over plain HTTP on the WebSocket port.
//!
//! [`start`] binds the sockets and returns a [`Server`] handle with its
//! addresses and a graceful [`Server::shutdown`]; the binary and the tests
//! both go through it.

pub mod admin;
pub mod bots;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod connection;
pub mod daily;
pub mod database;
pub mod deal_pool;
pub mod failover;
pub mod leaderboard_feed;
pub mod listener;
pub mod lobby;
pub mod matchmaking;
pub mod metrics;
pub mod open_files;
pub mod outbox;
pub mod ratings;
pub mod registry;
pub mod rematch;
pub mod room;
pub mod room_handle;
pub mod secrets;
pub mod signup;
pub mod state;
pub mod store;
pub mod web;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::bots::Bots;
use crate::clock::Clock;
use crate::cluster::Cluster;
pub use crate::config::Config;
use crate::daily::Daily;
use crate::database::{Database, OpenError};
use crate::deal_pool::DealPool;
use crate::metrics::{Metrics, bump};
use crate::signup::SignupLimiter;
pub use crate::state::Shared;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// An address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The deal pool's thread could not start.
    #[error("cannot start the deal pool: {0}")]
    DealPool(std::io::Error),
    /// The database could not be opened.
    #[error(transparent)]
    Database(#[from] OpenError),
    /// The database could not be read.
    #[error("cannot read the database: {0}")]
    Storage(#[from] store::StoreError),
    /// The cluster's Redis could not be reached.
    #[error("cannot join the cluster: {0}")]
    Cluster(#[from] cluster::ClusterError),
}

/// A running server.
#[derive(Debug)]
pub struct Server {
    shared: Arc<Shared>,
    address: SocketAddr,
    admin_address: Option<SocketAddr>,
}

/// Sockets accepted beyond `max_connections`, so that the ones over the cap
/// can be told `server_full` instead of hanging.
pub(crate) const OVER_CAP_SOCKETS: usize = 64;

async fn bind(address: SocketAddr) -> Result<(TcpListener, SocketAddr), StartError> {
    let bound = |source| StartError::Bind { address, source };
    let listener = TcpListener::bind(address).await.map_err(bound)?;
    let local = listener.local_addr().map_err(bound)?;
    Ok((listener, local))
}

/// What `/healthz` answers while a node waits for its Redis at start.
const WAITING_FOR_REDIS: &str = "starting: redis unreachable; trying again\n";

/// Whether a failure to join the cluster is in the settings (a bad Redis
/// URL), which trying again will not mend.
fn is_settings_error(error: &cluster::ClusterError) -> bool {
    matches!(error, cluster::ClusterError::Redis(error)
        if error.kind() == redis::ErrorKind::InvalidClientConfig)
}

/// Joins the cluster, trying again (pauses from 100 ms doubling to 5 s)
/// until Redis answers, so that a node started before its Redis waits for
/// it instead of exiting. Meanwhile the admin port answers `/livez` (alive)
/// and `503` to everything else (not ready), and no game socket is served.
async fn join_cluster(
    settings: cluster::Settings,
    metrics: &Arc<Metrics>,
    admin: &mut Option<(TcpListener, SocketAddr)>,
    admin_capacity: usize,
) -> Result<(Cluster, cluster::WriteQueue), StartError> {
    let mut error = match Cluster::connect(settings.clone(), Arc::clone(metrics)).await {
        Ok(joined) => return Ok(joined),
        Err(error) if is_settings_error(&error) => return Err(error.into()),
        Err(error) => error,
    };
    let started = CancellationToken::new();
    let waiting = admin.take().map(|(listener, local)| {
        let answering = admin::serve_while_starting(
            listener,
            WAITING_FOR_REDIS,
            admin_capacity,
            started.clone(),
        );
        (tokio::spawn(answering), local)
    });
    let mut pause = Duration::from_millis(100);
    let joined = loop {
        tracing::warn!(%error, ?pause, "redis cannot be reached at start; trying again");
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(5));
        match Cluster::connect(settings.clone(), Arc::clone(metrics)).await {
            Ok(joined) => break Ok(joined),
            Err(failed) if is_settings_error(&failed) => break Err(failed.into()),
            Err(failed) => error = failed,
        }
    };
    started.cancel();
    if let Some((answering, local)) = waiting {
        *admin = Some(match answering.await {
            Ok(listener) => (listener, local),
            // The task panicked and took the listener down: bind again.
            Err(_) => bind(local).await?,
        });
    }
    joined
}

/// Binds the sockets, starts the deal pool and serves until shut down.
pub async fn start(mut config: Config) -> Result<Server, StartError> {
    let reserved = open_files::BASE_RESERVED
        .saturating_add(OVER_CAP_SOCKETS as u64)
        .saturating_add(config.admin_max_connections as u64);
    config.max_connections = open_files::fit_process_limit(config.max_connections, reserved);
    let (listener, address) = bind(config.listen).await?;
    let mut admin = match config.admin_listen {
        Some(admin) => Some(bind(admin).await?),
        None => None,
    };
    let database = match &config.database_url {
        Some(url) => {
            tracing::info!(%url, "keeping the data in PostgreSQL");
            Database::open_postgres(url, config.database_queue)?
        }
        None => Database::open(config.data_dir.as_deref(), config.database_queue)?,
    };
    let secret = match config
        .daily_secret
        .as_deref()
        .and_then(config::parse_secret)
    {
        Some(secret) => secret,
        None => {
            let mut fresh = [0u8; 32];
            rand::Rng::fill_bytes(&mut rand::rng(), &mut fresh);
            database
                .call(move |store| store.server_secret(fresh))
                .await?
        }
    };
    let daily = Daily::new(
        database.clone(),
        secret,
        config.solver_budget_positions,
        config.daily_time_limit_ms,
    )
    .with_pace_rule(daily::PaceRule {
        window_moves: config.daily_review_window_moves,
        median_gap_ms: config.daily_review_median_gap_ms,
    });
    let signups = SignupLimiter::new(
        config.registrations_per_hour,
        config.registration_burst,
        config.registration_addresses,
    );
    // The registration limit as it stood when the server last stopped (the
    // sign-in code limit starts afresh: a code lives minutes, see signup).
    let capacity = config.registration_addresses;
    let kept = database
        .call(move |store| store.registration_buckets(capacity))
        .await?;
    signups.restore(kept);
    let sign_ins = SignupLimiter::new(
        config.sign_in_attempts_per_hour,
        config.sign_in_attempt_burst,
        config.registration_addresses,
    );
    let bots = Bots::new(config.max_bots, config.bot_threads, config.bot_min_pace_ms);
    let metrics: Arc<Metrics> = Arc::default();
    let cluster = match (&config.redis_url, &config.public_url) {
        (Some(redis_url), Some(public_url)) => {
            let settings = cluster::Settings {
                redis_url: redis_url.clone(),
                public_url: public_url.clone(),
                node_id: config.node_id.clone(),
                lease_ms: config.node_lease_ms,
            };
            let capacity = config.admin_max_connections;
            Some(join_cluster(settings, &metrics, &mut admin, capacity).await?)
        }
        _ => None,
    };
    let (cluster, cluster_writes) = match cluster {
        Some((cluster, writes)) => (Some(cluster), Some(writes)),
        None => (None, None),
    };
    // The deals proved before the last stop are dealt first; a cluster
    // node keeps its own (its id is stable when `--node-id` is given).
    let owner = cluster
        .as_ref()
        .map(|cluster| cluster.node_id().to_string())
        .unwrap_or_default();
    {
        // The running races this node saves or claims are kept as its own,
        // so that the other nodes' failover scans know whose they are.
        let node = owner.clone();
        database
            .call(move |store| {
                store.set_node(&node);
                Ok(())
            })
            .await?;
    }
    let kept = {
        let owner = owner.clone();
        database
            .call(move |store| store.proved_deals(&owner))
            .await?
    };
    let supply = deal_pool::Supply {
        database: database.clone(),
        owner,
        kept,
    };
    let pool = DealPool::start(
        &config.deal_games,
        deal_pool::Sizing {
            floor: config.deal_pool_size,
            most: config.deal_pool_max,
        },
        config.clock.clone(),
        config.deal_seed_start,
        config.solver_budget_positions,
        Some(supply),
    )
    .map_err(StartError::DealPool)?;
    let clock = config.clock.clone();
    let (rematches, rematch_requests) = tokio::sync::mpsc::channel(room_handle::REMATCH_QUEUE);
    let shared = Arc::new(Shared {
        rematches,
        signups,
        sign_ins,
        bots,
        clock,
        socket_slots: Arc::new(Semaphore::new(config.max_connections + OVER_CAP_SOCKETS)),
        config,
        registry: Arc::default(),
        pool,
        database,
        daily,
        metrics,
        cluster,
        shutdown: CancellationToken::new(),
        tracker: TaskTracker::new(),
        next_connection_id: AtomicU64::new(1),
    });
    // Races that were running when the server last stopped, however it
    // stopped, run on before anyone can connect, so that every resume
    // token works. One that cannot be rebuilt stays in the store for an
    // operator to look at, and is reported at every start.
    let running = shared.database.call(|store| store.live_races()).await?;
    let context = shared.room_context();
    for saved in running {
        // In a cluster a race runs only where its code's lease is; one
        // another node holds stays with it (a store shared by the nodes),
        // and one whose owner is gone is taken by the failover scan.
        if let Some(cluster) = &shared.cluster
            && !cluster.claim_existing(&saved.code).await?
        {
            tracing::info!(code = %saved.code, "a kept race is owned by another node");
            continue;
        }
        let code = saved.code;
        match room::claim_and_restore(&context, &code).await {
            Ok(restored) => {
                tracing::info!(code = %restored.room.code, "running race restored");
                bots::reseat_bots(shared.bot_hosting(), &restored.room, &restored.bots).await;
            }
            Err(error) => {
                bump(&shared.metrics.storage_errors);
                tracing::error!(%error, "a kept race could not run again");
                if let Some(cluster) = &shared.cluster {
                    cluster.release(&Arc::from(code.as_str()));
                }
            }
        }
    }
    if let (Some(cluster), Some(writes)) = (&shared.cluster, cluster_writes) {
        let tracker = &shared.tracker;
        // Subscribed before the node takes a connection, so that a day
        // followed here misses no other node's change.
        let relay = cluster.subscribe_leaderboards().await?;
        tracker.spawn(relay.run_forever(shared.daily.feed().clone(), shared.shutdown.clone()));
        tracker.spawn(
            cluster
                .clone()
                .write_forever(writes, shared.shutdown.clone()),
        );
        tracker.spawn(
            cluster
                .clone()
                .renew_forever(Arc::clone(&shared.registry), shared.shutdown.clone()),
        );
        tracker.spawn(failover::keep_store_lease_forever(
            Arc::clone(&shared),
            cluster.clone(),
        ));
        if shared.config.failover_scan_ms > 0 {
            tracker.spawn(failover::take_over_forever(
                Arc::clone(&shared),
                cluster.clone(),
            ));
        }
    }
    shared
        .tracker
        .spawn(rematch::serve(Arc::clone(&shared), rematch_requests));
    shared
        .tracker
        .spawn(listener::accept_loop(Arc::clone(&shared), listener));
    let sweeper = Arc::clone(&shared);
    shared.tracker.spawn(async move {
        let period = sweeper.config.daily_sweep_interval_ms;
        (sweeper.daily)
            .sweep_forever(&sweeper.clock, period, &sweeper.shutdown)
            .await;
    });
    let preparer = Arc::clone(&shared);
    shared.tracker.spawn(async move {
        let games = &preparer.config.deal_games;
        (preparer.daily)
            .prepare_forever(&preparer.clock, games, &preparer.shutdown)
            .await;
    });
    let admin_address = admin.map(|(admin, local)| {
        shared
            .tracker
            .spawn(admin::serve(Arc::clone(&shared), admin));
        local
    });
    tracing::info!(%address, ?admin_address, "listening");
    Ok(Server {
        shared,
        address,
        admin_address,
    })
}

impl Server {
    /// Where WebSocket clients connect.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Where `/healthz` and `/metrics` are served.
    pub fn admin_address(&self) -> Option<SocketAddr> {
        self.admin_address
    }

    /// The clock of the daily deal: a test advances a virtual one here.
    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    /// The server's counters.
    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// Waits until the database thread has answered every job queued
    /// before this call (its queue is first in, first out): for tests that
    /// must know the server's own writes are done before they move a
    /// virtual clock.
    #[doc(hidden)]
    pub async fn database_caught_up_for_tests(&self) {
        let _ = self.shared.database.call(|_| Ok(())).await;
    }

    /// Kills the database thread as a crash would, and waits until it has
    /// stopped: for tests of a server that can no longer store anything.
    #[doc(hidden)]
    pub async fn crash_database_for_tests(&self) {
        self.shared.database.crash_for_tests().await;
    }

    /// Stops: connections are told and closed, rooms end, the deal pool
    /// stops. Waits for the tasks up to the configured grace.
    pub async fn shutdown(self) {
        tracing::info!("shutting down");
        self.shared.shutdown.cancel();
        self.shared.pool.stop();
        self.shared.daily.stop();
        self.shared.tracker.close();
        let grace = config::millis(self.shared.config.shutdown_grace_ms);
        if tokio::time::timeout(grace, self.shared.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("some tasks did not stop in time");
        }
        if let Some(cluster) = &self.shared.cluster {
            // Every room has kept its race: its lease goes now, so that
            // the node that runs it next need not wait for it to lapse.
            match tokio::time::timeout(grace, cluster.leave()).await {
                Ok(Ok(())) => tracing::info!("left the cluster"),
                Ok(Err(error)) => tracing::warn!(%error, "leaving the cluster failed"),
                Err(_) => tracing::warn!("leaving the cluster took too long"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    use patience_shared::module_graph::cycle;

    /// Each top-level module of this crate and the top-level modules its
    /// code (not its comments) names through `crate::`.
    fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
        patience_shared::module_graph::module_graph(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            // The root re-exports these from their modules.
            &[("Config", "config"), ("Shared", "state")],
        )
    }

    #[test]
    fn the_modules_form_no_cycle() {
        let graph = module_graph();
        // The check sees real edges: the connection uses the room.
        assert!(graph["connection"].contains("room"), "{graph:?}");
        assert_eq!(cycle(&graph), None, "{graph:#?}");
        // And would see a cycle: add one and it is found.
        let mut planted = graph.clone();
        planted
            .entry("outbox".to_string())
            .or_default()
            .insert("connection".to_string());
        assert!(cycle(&planted).is_some());
    }

    #[test]
    fn the_room_core_and_the_leaves_use_no_server_state() {
        let graph = module_graph();
        for leaf in [
            "clock",
            "secrets",
            "outbox",
            "metrics",
            "room_handle",
            "leaderboard_feed",
        ] {
            for forbidden in ["crate", "state", "connection", "room", "registry", "daily"] {
                assert!(
                    !graph[leaf].contains(forbidden),
                    "{leaf} must not use {forbidden}: {:?}",
                    graph[leaf]
                );
            }
        }
        for module in ["room", "registry", "daily", "database", "store"] {
            assert!(
                !graph[module].contains("state") && !graph[module].contains("connection"),
                "{module} takes what it uses, not the server's state: {:?}",
                graph[module]
            );
        }
    }
}
