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
use crate::store::LiveRace;

/// Every `failover_scan_ms`, takes over each running race of the store
/// whose code no live node holds, until the server stops.
pub async fn take_over_forever(shared: Arc<Shared>, cluster: Cluster) {
    let every = millis(shared.config.failover_scan_ms);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let Some(races) = running_races(&shared).await else {
            continue;
        };
        for saved in races {
            if take_over(&shared, &cluster, saved).await.is_err() {
                // Redis is out of reach: the next scan tries again.
                break;
            }
        }
    }
}

/// Takes over the running race `code` if the store has it and no live node
/// holds it; whether it now runs here.
pub async fn take_over_code(shared: &Shared, cluster: &Cluster, code: &str) -> bool {
    let Some(races) = running_races(shared).await else {
        return false;
    };
    match races.into_iter().find(|race| race.code == code) {
        Some(saved) => take_over(shared, cluster, saved).await.unwrap_or(false),
        None => false,
    }
}

async fn running_races(shared: &Shared) -> Option<Vec<LiveRace>> {
    match shared.database.call(|store| store.live_races()).await {
        Ok(races) => Some(races),
        Err(error) => {
            bump(&shared.metrics.storage_errors);
            tracing::warn!(%error, "the running races could not be read for failover");
            None
        }
    }
}

/// Claims and runs one race; `Ok(true)` if it runs here now, `Err` if Redis
/// could not be asked.
async fn take_over(shared: &Shared, cluster: &Cluster, saved: LiveRace) -> Result<bool, ()> {
    if shared.registry.room(&saved.code).is_some() || cluster.holds(&saved.code) {
        return Ok(false);
    }
    match cluster.claim_existing(&saved.code).await {
        Ok(true) => {}
        Ok(false) => return Ok(false),
        Err(error) => {
            tracing::warn!(%error, "a race could not be claimed for failover");
            return Err(());
        }
    }
    let code: Arc<str> = Arc::from(saved.code.as_str());
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
