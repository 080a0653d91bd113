//! The Patience Race server: authoritative races over WebSockets.
//!
//! Layout:
//! - [`config`]: every address, limit and timing, from defaults, a TOML
//!   file, environment variables and flags;
//! - [`listener`]: the accept loop, with the connection cap and back-off;
//! - [`connection`]: one socket's reader loop and writer task;
//! - [`room`]: the room actor that owns a race;
//! - [`registry`]: rooms by code and resume tokens by hash (handles only);
//! - [`deal_pool`]: proved-winnable deals, proved on a dedicated thread;
//! - [`metrics`] and [`admin`]: `/metrics` and `/healthz`.
//!
//! [`start`] binds the sockets and returns a [`Server`] handle with its
//! addresses and a graceful [`Server::shutdown`]; the binary and the tests
//! both go through it.

pub mod admin;
pub mod config;
pub mod connection;
pub mod deal_pool;
pub mod listener;
pub mod metrics;
pub mod registry;
pub mod room;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use crate::config::Config;
use crate::deal_pool::DealPool;
use crate::metrics::Metrics;
use crate::registry::Registry;

/// What every task of the server shares.
#[derive(Debug)]
pub struct Shared {
    /// The settings.
    pub config: Config,
    /// Rooms and resume tokens.
    pub registry: Registry,
    /// Proved deals.
    pub pool: DealPool,
    /// Counters for `/metrics`.
    pub metrics: Metrics,
    /// Cancelled when the server stops.
    pub shutdown: CancellationToken,
    /// Every task the server spawned, to wait for at shutdown.
    pub tracker: TaskTracker,
    /// The next connection's id.
    pub next_connection_id: AtomicU64,
    /// Sockets the server may hold open at once (taken before `accept`).
    pub socket_slots: Arc<Semaphore>,
}

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
const OVER_CAP_SOCKETS: usize = 64;

async fn bind(address: SocketAddr) -> Result<(TcpListener, SocketAddr), StartError> {
    let bound = |source| StartError::Bind { address, source };
    let listener = TcpListener::bind(address).await.map_err(bound)?;
    let local = listener.local_addr().map_err(bound)?;
    Ok((listener, local))
}

/// Binds the sockets, starts the deal pool and serves until shut down.
pub async fn start(config: Config) -> Result<Server, StartError> {
    let (listener, address) = bind(config.listen).await?;
    let admin = match config.admin_listen {
        Some(admin) => Some(bind(admin).await?),
        None => None,
    };
    let pool = DealPool::start(
        &config.deal_games,
        config.deal_pool_size,
        config.deal_seed_start,
        config.solver_budget_positions,
    )
    .map_err(StartError::DealPool)?;
    let shared = Arc::new(Shared {
        socket_slots: Arc::new(Semaphore::new(config.max_connections + OVER_CAP_SOCKETS)),
        config,
        registry: Registry::default(),
        pool,
        metrics: Metrics::default(),
        shutdown: CancellationToken::new(),
        tracker: TaskTracker::new(),
        next_connection_id: AtomicU64::new(1),
    });
    shared
        .tracker
        .spawn(listener::accept_loop(Arc::clone(&shared), listener));
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

    /// The server's counters.
    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// Stops: connections are told and closed, rooms end, the deal pool
    /// stops. Waits for the tasks up to the configured grace.
    pub async fn shutdown(self) {
        tracing::info!("shutting down");
        self.shared.shutdown.cancel();
        self.shared.pool.stop();
        self.shared.tracker.close();
        let grace = config::millis(self.shared.config.shutdown_grace_ms);
        if tokio::time::timeout(grace, self.shared.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("some tasks did not stop in time");
        }
    }
}
