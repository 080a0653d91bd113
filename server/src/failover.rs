//! Failover: running races whose node is gone, taken over by this one.
//!
//! A node that dies leaves its rooms' leases to lapse (within
//! `node_lease_ms`) and its running races in the store. Another node takes
//! one over by claiming its code's lease ([`Cluster::claim_existing`], which
//! only succeeds while no live node holds it) and rebuilding the race with
//! [`room::claim_and_restore`], as a restart does (the store's claim
//! fences off the old node's writes, should it be alive after all: paused,
//! or cut off from Redis past its lease); its players' resume tokens lead
//! any node to the code (Redis) and the code to the new owner. Two paths do
//! it: a periodic scan of the store (`failover_scan_ms`), and, sooner, a
//! `resume` whose token names a room no live node holds.
//!
//! ## What the scan reads
//! The scan asks the store for the races of nodes that are gone
//! ([`Store::orphaned_races`](crate::store::Store::orphaned_races)): each
//! node keeps a lease in the store too, renewed every third of
//! `node_lease_ms` ([`keep_store_lease_forever`]), and each running race is
//! kept as the node that saved or claimed it, indexed by that node. So a
//! scan costs in proportion to the nodes and the orphaned races: while
//! every node's lease runs it reads no race and no move, and it reads a
//! race's moves only when it claims the race. Scans and renewals run on a
//! connection aside ([`Database::call_aside`](crate::database::Database::call_aside)),
//! never behind or in front of the moves. The store's lease only says
//! where to look: Redis still decides whether a race is taken over (a
//! node whose store lease lapsed while it holds its rooms' leases, say
//! while its clock is behind, keeps its races).
//!
//! Only races in this node's store can be found: races of other nodes only
//! when the nodes share one store (PostgreSQL once it is a store; until
//! then, processes of one host on one SQLite file). With a store each, a
//! dead node's races wait for it to restart on its data.

use std::sync::Arc;

use crate::cluster::Cluster;
use crate::config::millis;
use crate::metrics::bump;
use crate::room;
use crate::state::Shared;

/// Every `failover_scan_ms`, takes over each running race of the store
/// whose node's lease in the store ended and whose code no live node holds,
/// until the server stops.
pub async fn take_over_forever(shared: Arc<Shared>, cluster: Cluster) {
    let every = millis(shared.config.failover_scan_ms);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let Some(codes) = orphaned_races(&shared).await else {
            continue;
        };
        for code in codes {
            if take_over(&shared, &cluster, &code).await.is_err() {
                // Redis is out of reach: the next scan tries again.
                break;
            }
        }
    }
}

/// Renews this node's lease in the store every third of `node_lease_ms`,
/// for `node_lease_ms`, until the server stops, so that other nodes' scans
/// pass over its races ([`take_over_forever`]). A renewal that fails is
/// tried again at the next tick (meanwhile other nodes' scans may find
/// this node's races, and Redis, which still says this node holds them,
/// keeps them here).
pub async fn keep_store_lease_forever(shared: Arc<Shared>, cluster: Cluster) {
    let lease_ms = shared.config.node_lease_ms;
    let every = millis((lease_ms / 3).max(1));
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let node = cluster.node_id().to_string();
        let until_ms = shared.clock.now_ms().saturating_add(lease_ms);
        let renewed = shared
            .database
            .call_aside(move |store| store.renew_node_lease(&node, until_ms))
            .await;
        if let Err(error) = renewed {
            bump(&shared.metrics.storage_errors);
            tracing::warn!(%error, "this node's lease in the store could not be renewed");
        }
    }
}

/// Takes over the running race `code` if the store has it and no live node
/// holds it; whether it now runs here.
pub async fn take_over_code(shared: &Shared, cluster: &Cluster, code: &str) -> bool {
    let asked = code.to_string();
    match shared
        .database
        .call_aside(move |store| store.keeps_live_race(&asked))
        .await
    {
        Ok(true) => take_over(shared, cluster, code).await.unwrap_or(false),
        Ok(false) => false,
        Err(error) => {
            bump(&shared.metrics.storage_errors);
            tracing::warn!(%error, "the store could not be asked for a race to take over");
            false
        }
    }
}

/// The codes of the running races whose node's lease in the store ended.
async fn orphaned_races(shared: &Shared) -> Option<Vec<String>> {
    let now_ms = shared.clock.now_ms();
    match shared
        .database
        .call_aside(move |store| store.orphaned_races(now_ms))
        .await
    {
        Ok(codes) => Some(codes),
        Err(error) => {
            bump(&shared.metrics.storage_errors);
            tracing::warn!(%error, "the orphaned races could not be read for failover");
            None
        }
    }
}

/// Claims and runs one race; `Ok(true)` if it runs here now, `Err` if Redis
/// could not be asked.
async fn take_over(shared: &Shared, cluster: &Cluster, code: &str) -> Result<bool, ()> {
    if shared.registry.room(code).is_some() || cluster.holds(code) {
        return Ok(false);
    }
    match cluster.claim_existing(code).await {
        Ok(true) => {}
        Ok(false) => return Ok(false),
        Err(error) => {
            tracing::warn!(%error, "a race could not be claimed for failover");
            return Err(());
        }
    }
    let code: Arc<str> = Arc::from(code);
    match room::claim_and_restore(&shared.room_context(), &code).await {
        Ok(_) => {
            bump(&shared.metrics.cluster_failovers);
            tracing::warn!(%code, "took over a race whose node is gone");
            Ok(true)
        }
        Err(error) => {
            bump(&shared.metrics.storage_errors);
            tracing::error!(%error, "a race taken over could not run");
            cluster.release(&code);
            Ok(false)
        }
    }
}
