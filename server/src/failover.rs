//! Failover: running races whose node is gone, taken over by this one.
//!
//! A node that dies leaves its rooms' leases to lapse (within
//! `node_lease_ms`) and its running races in the store. Another node takes
//! one over by claiming its code's lease ([`Cluster::claim_existing`], which
//! only succeeds while no live node holds it) and rebuilding the race with
//! [`room::claim_and_restore`], as a restart does (the store's claim
//! fences off the old node's writes, should it be alive after all: paused,
//! or cut off from Redis past its lease); its players' resume tokens lead
//! any node to the code (Redis, or the store when Redis lost the pointer)
//! and the code to the new owner. Two paths do it: a periodic scan of the
//! store (`failover_scan_ms`), and, sooner, a client's `resume` (or
//! `spectate`, or `join_room`) of a running race no live node holds
//! ([`find_room`]). One race is taken over by one node (the lease in
//! Redis) and once on that node ([`Cluster::begin_takeover`]): two players
//! resuming at once must not claim it twice, since the second claim in
//! the store would fence off the room the first one opened. A client's
//! request for a race being taken over (here or elsewhere), or whose live
//! owner has yet to take its lease back after a Redis restart, waits for
//! it, bounded, rather than being refused.
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
use std::time::Duration;

use crate::bots;
use crate::cluster::{Cluster, Owner};
use crate::config::millis;
use crate::metrics::bump;
use crate::room;
use crate::room_handle::RoomHandle;
use crate::secrets::TokenHash;
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

/// How long a client's request for a room (a resume, a spectator, a join)
/// waits, beyond a lease, for a race being taken over to run somewhere:
/// a takeover under way on this node takes a few store calls, and after a
/// Redis restart a live owner takes its leases back within a third of a
/// lease, while nobody may take one over for a lease (and a second).
const FIND_PATIENCE_BEYOND_LEASE: Duration = Duration::from_secs(2);

/// How often such a request asks again where its room is.
const FIND_RETRY: Duration = Duration::from_millis(25);

/// Where a room that is not open on this node is, for a client's request.
#[derive(Debug)]
pub enum Found {
    /// Here: it was taken over here, or opened meanwhile.
    Here(RoomHandle),
    /// At another live node, reached at this URL.
    Elsewhere(String),
    /// Nowhere: no node runs it and the store keeps no running race under
    /// its code (or Redis or the store could not be asked, or the race
    /// found no node within the wait).
    Nowhere,
}

/// Finds the room `code` for a client's request: at a live node that holds
/// it, or here, taking over a running race of the store that no live node
/// holds. While the race is being taken over (here, by another node, or
/// waiting for its live owner to take its lease back after a Redis
/// restart) it waits, within a lease and `FIND_PATIENCE_BEYOND_LEASE`,
/// so that the client is seated, or sent on, rather than refused.
pub async fn find_room(shared: &Shared, cluster: &Cluster, code: &str) -> Found {
    let patience = Duration::from_millis(cluster.lease_length_ms()) + FIND_PATIENCE_BEYOND_LEASE;
    let deadline = tokio::time::Instant::now() + patience;
    // Whether the store keeps a running race under `code`, asked once.
    let mut kept = None;
    loop {
        if let Some(room) = shared.registry.room(code) {
            return Found::Here(room);
        }
        match cluster.owner(code).await {
            Err(error) => {
                tracing::warn!(%error, "the cluster could not say where a room is");
                return Found::Nowhere;
            }
            Ok(Owner::Elsewhere { url }) => return Found::Elsewhere(url),
            Ok(Owner::Here) => {
                // Held here with no room open: a takeover under way here
                // (wait for it), or a room that closed (its release owed).
                if !cluster.is_taking_over(code) && shared.registry.room(code).is_none() {
                    return Found::Nowhere;
                }
            }
            Ok(Owner::Nobody) => {
                let is_kept = match kept {
                    Some(is_kept) => is_kept,
                    None => {
                        let is_kept = keeps_live_race(shared, code).await;
                        kept = Some(is_kept);
                        is_kept
                    }
                };
                if !is_kept {
                    return Found::Nowhere;
                }
                if let Ok(Some(room)) = take_over(shared, cluster, code).await {
                    return Found::Here(room);
                }
            }
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(%code, "a running race found no node to run it in time");
            return Found::Nowhere;
        }
        tokio::time::sleep(FIND_RETRY).await;
    }
}

/// The code of the running race whose seat `token` opens, from the store:
/// for a resume whose pointer Redis lost (it restarted).
pub async fn code_of_token(shared: &Shared, cluster: &Cluster, token: TokenHash) -> Option<String> {
    let _one_at_a_time = cluster.token_lookup().await?;
    match shared
        .database
        .call_aside(move |store| store.live_race_of_token(&token))
        .await
    {
        Ok(code) => code,
        Err(error) => {
            bump(&shared.metrics.storage_errors);
            tracing::warn!(%error, "the store could not say which race a token opens");
            None
        }
    }
}

async fn keeps_live_race(shared: &Shared, code: &str) -> bool {
    let code = code.to_string();
    match shared
        .database
        .call_aside(move |store| store.keeps_live_race(&code))
        .await
    {
        Ok(kept) => kept,
        Err(error) => {
            bump(&shared.metrics.storage_errors);
            tracing::warn!(%error, "the store could not say whether a race runs");
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

/// Claims and runs the race `code`, once however many ask at once:
/// `Ok(Some)` if it runs here now (taken over by this call, or by another
/// under way that finished), `Ok(None)` if it does not (another node holds
/// it, Redis is too young to give it away, a takeover here is still under
/// way, or it cannot run), `Err` if Redis could not be asked.
async fn take_over(
    shared: &Shared,
    cluster: &Cluster,
    code: &str,
) -> Result<Option<RoomHandle>, ()> {
    let Some(_takeover) = cluster.begin_takeover(code) else {
        return Ok(None);
    };
    // Another takeover here may have finished just before this one began.
    if let Some(room) = shared.registry.room(code) {
        return Ok(Some(room));
    }
    if cluster.holds(code) {
        // Held with no room: one closing here, whose release is owed.
        return Ok(None);
    }
    match cluster.claim_existing(code).await {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(error) => {
            tracing::warn!(%error, "a race could not be claimed for failover");
            return Err(());
        }
    }
    let code: Arc<str> = Arc::from(code);
    match room::claim_and_restore(&shared.room_context(), &code).await {
        Ok(restored) => {
            bump(&shared.metrics.cluster_failovers);
            tracing::warn!(%code, "took over a race whose node is gone");
            bots::reseat_bots(shared.bot_hosting(), &restored.room, &restored.bots).await;
            Ok(Some(restored.room))
        }
        Err(error) => {
            bump(&shared.metrics.storage_errors);
            tracing::error!(%error, "a race taken over could not run");
            cluster.release(&code);
            Ok(None)
        }
    }
}
