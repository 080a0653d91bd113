//! Several nodes behind one Redis: who owns which room, where a resume
//! token's room is, and one quick-race queue per game across the nodes.
//!
//! A node joins a cluster with `redis_url` (and its `public_url`, the
//! WebSocket URL clients reach it at). Without it none of this runs and a
//! node is alone, as before. Redis holds only leases and pointers, never a
//! race: each room's state stays in its actor on its owner node, and what
//! is kept of a running race stays in the [store](crate::store).
//!
//! ## Keys (all under `patience:`)
//! - `node:{id}` → the node's public URL, with a lease of `node_lease_ms`,
//!   renewed every third of it. A node whose key lapsed is gone.
//! - `room:{code}` → the id of the node that owns the room. Set with
//!   `SET … NX PX` when the room opens, so **each room has exactly one
//!   owner** and a code another node holds is never used again while it is
//!   held (a code whose claim fails is not used: another is drawn).
//!   Renewed in batches by a Lua script that extends a lease only where it
//!   still names this node (or takes it back if it lapsed and nobody took
//!   it), and deleted (again only if it names this node) when the room
//!   closes. A lease that a renewal finds another node holding is
//!   forgotten and counted (`patience_cluster_leases_lost_total`), and its
//!   room closes here without a word: its players' clients reconnect, are
//!   redirected and resume at the new owner.
//! - `token:{sha256 hex}` → the room code a resume token opens a seat of,
//!   for a day at most (longer than any race), so that any node can send a
//!   resuming player to the owner. Only the token's hash is kept, as in
//!   the store.
//! - `quick:{game}` → the one room advertised for quick races of that game.
//! - `waiter:{game}` → who waits in it: the room's code, the waiter's
//!   rating estimate and when the wait began (Unix ms), with the
//!   advertisement's lease; trusted only while it names the advertised
//!   room. Without it an advertised room is open to anyone.
//! - `counts:{id}` → how many players wait for and race each game on the
//!   node (a MessagePack list), rewritten at each renewal with a lease.
//! - `lobby:{id}` → the node's open public rooms still forming (a
//!   MessagePack list of `ListedRoom`: each room with its seats' players),
//!   rewritten at each renewal with a
//!   lease, so that a lobby asked of any node lists every node's rooms.
//!
//! ## Quick race across nodes
//! A node asked for a quick race seats the player in a waiting public room
//! of its own if it has one whose waiter's rating window meets the
//! player's ([`matchmaking`](crate::matchmaking); no Redis call).
//! Otherwise it reads the advertisement and its waiter: a room owned by
//! another live node whose waiter meets the player gets the player a
//! `redirect` to that node, where the repeated `quick_race` finds the room
//! local and joins it. A live waiter out of the player's reach leaves the
//! advertisement as it is: the player is sent to the advertised room's
//! node (or, there, waits) in an unadvertised room beside it, which later
//! quick races of that node find, and its waiter moves into an older
//! waiter's room of that node once their windows meet. So a game's
//! waiters gather on one node; a waiter is never moved across nodes. Once
//! the advertised room fills (or its node is gone), the next look of a
//! waiter left behind advertises that waiter's room. Failing all of that,
//! the node claims a code and advertises
//! it **before** opening the room, with one script that sets the
//! advertisement only if none is there (or the one there is the stale one
//! the node just read: a room full, racing, closed or ownerless) and
//! answers what is advertised after it. So of two nodes asked at the same
//! moment, one advertises its room and the other reads that answer, gives
//! its code back and sends its player there: they meet. The owner renews
//! the advertisement while the room is open for quick races and withdraws
//! it (compare and delete) once it is full or racing. An advertisement
//! read just as its room fills sends a player to a node that then opens a
//! room for it; a redirected player may thus be redirected again, and
//! clients bound the hops.
//!
//! ## What is off the hot path
//! No Redis call is made by a room's actor: the pointers of the tokens it
//! issues, their forgets and the releases of the rooms it closes are
//! **owed**, kept in the [lease book](lease::LeaseBook) as a bounded set of
//! [pending writes](pending) with one write per key (the later replaces
//! the earlier), which one writer task flushes in pipelined batches. A
//! write stays owed until it reaches Redis: one that fails (Redis down, or
//! refusing writes) is tried again at each renewal tick, and so within a
//! third of a lease of Redis taking writes again. What is owed is counted
//! (`patience_cluster_writes_pending`), and so is each write whose first
//! try failed (`patience_cluster_writes_deferred_total`). Renewals run on
//! their own task. Redis is called by a connection only to open a room, to
//! look up a room, a token or an advertisement it does not have locally,
//! never per move, and never while a map guard is held.
//!
//! The client is `redis` (redis-rs): the maintained Redis client for Rust,
//! async on tokio, with scripts (`EVALSHA` falling back to `EVAL`) and a
//! `ConnectionManager` that multiplexes every caller over one connection
//! and reconnects after Redis restarts, so a blip costs failed calls, not a
//! broken node.
//!
//! ## Failover
//! See [`failover`](crate::failover): a race whose node died runs on at a
//! node that claims its lapsed lease, when the nodes share a store.
//!
//! ## What this does not do
//! - A node cut off from Redis while the others reach it keeps running
//!   its rooms until a renewal reaches Redis again and finds a lease lost.
//!   With a shared store another node may have taken such a race over
//!   meanwhile; the store fences the old owner out
//!   ([`Store::claim_live_race`](crate::store::Store::claim_live_race)
//!   gives the new owner a later claim, and a write under an older one is
//!   refused, [`StoreError::Fenced`](crate::store::StoreError::Fenced)), so
//!   the old owner's room closes at its next write instead of writing over
//!   the new owner's race. Its players are told `internal`, and resume at
//!   the new owner; no move is acknowledged there after the claim, since
//!   each waits for its write.
//! - Redis without persistence forgets everything when it restarts. Each
//!   node takes its leases back at its next renewal (a third of a lease),
//!   and no node takes a lease nobody holds until Redis has been up for a
//!   lease and a second ([`Cluster::claim_existing`]), so a live owner
//!   always renews first. A renewal that takes a lease back owes Redis the
//!   pointers of the room's tokens again. Until they are written, a
//!   resume through another node finds the token's running race in the
//!   store ([`Store::live_race_of_token`](crate::store::Store::live_race_of_token),
//!   which reads every running race's room: a cost paid only when Redis
//!   has no pointer, one lookup at a time per node, so that unknown tokens
//!   cannot crowd the moves out of the database thread). A lobby's tokens
//!   are not in the store: until its node's next renewal a resume of one
//!   works at its room's own node only.
//! - The writes owed live in the node's memory only: those a node still
//!   owes when it stops are made once as it leaves, and are lost if that
//!   fails or the node is killed. A lost token pointer heals when the race
//!   runs again (the node that runs it sets its pointers); a lost release
//!   lets the lease lapse by itself.
//! - The writes owed are bounded ([`pending::PENDING_CAP`]): past it, the
//!   forgets of tokens are given up (counted,
//!   `patience_cluster_writes_dropped_total`), never a pointer or a
//!   release; a forget given up leaves a pointer that lapses within a day,
//!   and that sends a resume of a dead token to a node that refuses it.
//! - A release on its way to Redis when this node takes the same code again
//!   (its lease lapsed meanwhile) may delete the lease just taken; the next
//!   renewal takes it back, as it does any lease that lapsed with nobody
//!   taking it.
//!
//! [`lease`] is the bookkeeping without I/O: what the node holds, the
//! renewal batches, what a renewal's answer means, and (through
//! [`pending`]) the writes it owes. [`relay`] takes the daily
//! leaderboards' changes from node to node.

pub mod lease;
pub mod pending;
pub mod relay;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use patience_shared::game::GameKind;
use patience_shared::protocol::to_hex;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use self::lease::{LeaseBook, RENEW_BATCH};
use self::pending::{FLUSH_BATCH, Taken, Write};
use crate::matchmaking::Waiter;
use crate::metrics::{Metrics, bump};
use crate::registry::{PlayerCounts, Registry, new_room_code};
use crate::room_handle::{Command, ListedRoom};
use crate::secrets::{TokenHash, new_secret};

/// Pages of `SCAN` read for the lobby's keys at most.
const LOBBY_SCAN_PAGES: usize = 16;

/// Every key of the cluster starts with this, so a Redis may hold others.
const PREFIX: &str = "patience:";

/// How long a token's pointer to its room lasts: longer than any race
/// (the longest time limit is three hours) plus its grace and linger.
const TOKEN_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// Codes drawn before opening a room is given up: with 30^6 codes a clash
/// is rare, so many in a row mean something else is wrong.
const CLAIM_TRIES: usize = 16;

/// Longest one Redis call may take; a call that takes longer fails, so a
/// Redis that hangs is a Redis that is down.
const REDIS_TIMEOUT: Duration = Duration::from_secs(1);

/// Extends each lease in KEYS that still holds ARGV[1] by ARGV[2] ms, and
/// takes back one that lapsed with nobody taking it (Redis restarted
/// empty, or a renewal came late): nobody else can be running that room,
/// since a node runs one only once it holds the lease. Answers 1 for each
/// kept, 2 for each taken back, 0 for each another holds.
const RENEW_SCRIPT: &str = r"
local kept = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    kept[i] = 1
  elseif holder == false then
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    kept[i] = 2
  else
    kept[i] = 0
  end
end
return kept
";

/// Deletes each key in KEYS that still holds ARGV[1]; answers how many.
const RELEASE_SCRIPT: &str = r"
local deleted = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('DEL', key)
    deleted = deleted + 1
  end
end
return deleted
";

/// Takes the lease KEYS[1] of a running race for ARGV[1] (ARGV[2] ms) if
/// nobody holds it, or extends it if ARGV[1] already does; answers 1 if
/// ARGV[1] holds it.
///
/// A lease nobody holds is taken only once Redis has been up for ARGV[3]
/// ms (a lease and a second, its uptime being in whole seconds): a Redis
/// that restarted lost every lease at once, live owners' too, and each
/// live owner takes its own back at its next renewal (a third of a lease
/// away), so a lease missing from a younger Redis says nothing about its
/// owner. Only a lease that lapsed in a Redis up all along does.
const CLAIM_SCRIPT: &str = r"
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
elseif owner ~= false then
  return 0
end
local uptime = string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)')
if uptime == nil or tonumber(uptime) * 1000 < tonumber(ARGV[3]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// Advertises the room ARGV[1] in KEYS[1] (ARGV[2] ms) if no room is, or
/// if the room advertised is ARGV[3] (one the caller found full, closed or
/// ownerless); answers the room advertised after the call, so that of two
/// nodes asking at once one advertises its room and the other learns it.
const ADVERTISE_SCRIPT: &str = r"
local advertised = redis.call('GET', KEYS[1])
if advertised == false or advertised == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
return advertised
";

/// How long Redis must have been up, beyond a lease, before a lease
/// nobody holds is taken over (see [`CLAIM_SCRIPT`]): its uptime is in
/// whole seconds, and a live owner's renewal may be a reconnection late.
const RESTART_GRACE_MS: u64 = 1_000;

/// Why a cluster call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Redis could not be reached, took too long or refused the command.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// Redis took longer than the call's limit.
    #[error("redis took longer than {0:?}")]
    Timeout(Duration),
    /// Every code drawn was taken.
    #[error("no unused room code in {CLAIM_TRIES} tries")]
    NoFreeCode,
}

/// What a node needs to join a cluster.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The Redis URL.
    pub redis_url: String,
    /// The node's WebSocket URL as clients reach it.
    pub public_url: String,
    /// The node's id; random if `None`.
    pub node_id: Option<String>,
    /// Lease length in milliseconds.
    pub lease_ms: u64,
}

/// The room advertised for quick races of a game.
#[derive(Clone, Debug, PartialEq)]
pub struct Advert {
    /// Its code.
    pub code: String,
    /// Where it is.
    pub owner: Owner,
    /// Who waits in it, if Redis has it.
    pub waiter: Option<Waiter>,
}

impl Advert {
    /// Whether its waiter's rating window meets `player`'s at `now_ms`; an
    /// advert without a waiter is open to anyone.
    pub fn meets(&self, player: &Waiter, now_ms: u64) -> bool {
        self.waiter
            .is_none_or(|waiter| waiter.meets(player, now_ms))
    }
}

/// Where a room is, as Redis says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// This node holds its lease.
    Here,
    /// Another live node does, reached at this URL.
    Elsewhere {
        /// The owner's public URL.
        url: String,
    },
    /// No live node holds it.
    Nobody,
}

/// The right to run the one task that flushes the writes the node owes
/// Redis; see [`Cluster::write_forever`]. The writes themselves wait in
/// the [lease book](LeaseBook).
#[derive(Debug)]
pub struct WriteQueue {
    _one_writer: (),
}

/// A takeover of one room under way on this node (see
/// [`Cluster::begin_takeover`]); it ends when this is dropped.
#[derive(Debug)]
pub struct Takeover {
    cluster: Cluster,
    code: Arc<str>,
}

impl Drop for Takeover {
    fn drop(&mut self) {
        self.cluster
            .inner
            .taking_over
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.code);
    }
}

/// This node's membership of the cluster, cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

struct Inner {
    node_id: String,
    public_url: String,
    /// For the connections of their own that subscriptions need.
    client: redis::Client,
    redis: ConnectionManager,
    book: Mutex<LeaseBook>,
    /// Wakes the writer task: a write is owed.
    written: Notify,
    /// Wakes the writer task even after a flush failed: a renewal tick.
    ticked: Notify,
    metrics: Arc<Metrics>,
    /// The origin of the lease book's times: leases are about elapsed
    /// time, not the (possibly virtual) wall clock.
    started: Instant,
    renew: redis::Script,
    release: redis::Script,
    claim: redis::Script,
    advertise: redis::Script,
    /// The rooms this node is taking over right now, so that two requests
    /// for one race (two players resuming at once, or a resume and the
    /// scan) claim and rebuild it once, not twice (the second claim would
    /// fence the first room off).
    taking_over: Mutex<HashSet<Arc<str>>>,
    /// One lookup of a token in the store at a time (see
    /// [`Cluster::token_lookup`]).
    token_lookups: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Cluster")
            .field("node_id", &self.inner.node_id)
            .field("public_url", &self.inner.public_url)
            .finish_non_exhaustive()
    }
}

fn room_key(code: &str) -> String {
    format!("{PREFIX}room:{code}")
}

fn node_key(node_id: &str) -> String {
    format!("{PREFIX}node:{node_id}")
}

fn token_key(hash: &TokenHash) -> String {
    format!("{PREFIX}token:{}", to_hex(hash))
}

fn lobby_key(node_id: &str) -> String {
    format!("{PREFIX}lobby:{node_id}")
}

fn quick_key(game: GameKind) -> String {
    format!("{PREFIX}quick:{}", game.slug())
}

fn waiter_key(game: GameKind) -> String {
    format!("{PREFIX}waiter:{}", game.slug())
}

fn counts_key(node_id: &str) -> String {
    format!("{PREFIX}counts:{node_id}")
}

/// The advertised waiter, as kept beside the advertisement: the room's
/// code (the waiter is trusted only while it names the advertised room),
/// the estimate and the wait's start.
fn waiter_value(code: &str, waiter: &Waiter) -> String {
    format!("{code} {} {}", waiter.mu, waiter.since_ms)
}

fn parse_waiter(value: &str, code: &str) -> Option<Waiter> {
    let mut parts = value.split(' ');
    if parts.next()? != code {
        return None;
    }
    let mu = parts
        .next()?
        .parse::<f64>()
        .ok()
        .filter(|mu| mu.is_finite())?;
    let since_ms = parts.next()?.parse().ok()?;
    Some(Waiter { mu, since_ms })
}

/// A room code as clients may type it, as it is kept.
fn normal_code(code: &str) -> String {
    code.trim().to_ascii_uppercase()
}

impl Cluster {
    /// Connects to Redis and registers this node; fails if Redis cannot be
    /// reached, so that a node never starts half in a cluster. The queue
    /// returned goes to [`Cluster::write_forever`].
    pub async fn connect(
        settings: Settings,
        metrics: Arc<Metrics>,
    ) -> Result<(Cluster, WriteQueue), ClusterError> {
        let client = redis::Client::open(settings.redis_url.as_str())?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(REDIS_TIMEOUT))
            .set_response_timeout(Some(REDIS_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(REDIS_TIMEOUT);
        let redis = ConnectionManager::new_with_config(client.clone(), config).await?;
        let cluster = Cluster {
            inner: Arc::new(Inner {
                node_id: settings.node_id.unwrap_or_else(|| new_secret(8)),
                public_url: settings.public_url,
                client,
                redis,
                book: Mutex::new(LeaseBook::new(settings.lease_ms)),
                written: Notify::new(),
                ticked: Notify::new(),
                metrics,
                started: Instant::now(),
                renew: redis::Script::new(RENEW_SCRIPT),
                release: redis::Script::new(RELEASE_SCRIPT),
                claim: redis::Script::new(CLAIM_SCRIPT),
                advertise: redis::Script::new(ADVERTISE_SCRIPT),
                taking_over: Mutex::new(HashSet::new()),
                token_lookups: tokio::sync::Semaphore::new(1),
            }),
        };
        cluster.register().await?;
        tracing::info!(node = %cluster.inner.node_id, url = %cluster.inner.public_url, "joined the cluster");
        Ok((cluster, WriteQueue { _one_writer: () }))
    }

    /// This node's id.
    pub fn node_id(&self) -> &str {
        &self.inner.node_id
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.inner.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn lease_ms(&self) -> u64 {
        self.with_book(|book| book.lease_ms())
    }

    /// Runs `f` on the lease book; the lock is never held across an await.
    fn with_book<T>(&self, f: impl FnOnce(&mut LeaseBook) -> T) -> T {
        let mut book = self
            .inner
            .book
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let answer = f(&mut book);
        let held = i64::try_from(book.rooms_held()).unwrap_or(i64::MAX);
        let owed = i64::try_from(book.writes_owed()).unwrap_or(i64::MAX);
        drop(book);
        let metrics = &self.inner.metrics;
        metrics
            .cluster_leases_held
            .store(held, std::sync::atomic::Ordering::Relaxed);
        metrics
            .cluster_writes_pending
            .store(owed, std::sync::atomic::Ordering::Relaxed);
        answer
    }

    /// One Redis call under [`REDIS_TIMEOUT`]; a failure is counted.
    async fn call<T>(
        &self,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, ClusterError> {
        let answer = match tokio::time::timeout(REDIS_TIMEOUT, call).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => Err(ClusterError::Redis(error)),
            Err(_) => Err(ClusterError::Timeout(REDIS_TIMEOUT)),
        };
        if answer.is_err() {
            bump(&self.inner.metrics.cluster_redis_errors);
        }
        answer
    }

    fn redis(&self) -> ConnectionManager {
        self.inner.redis.clone()
    }

    async fn register(&self) -> Result<(), ClusterError> {
        let mut redis = self.redis();
        let lease = self.lease_ms();
        self.call(
            redis::cmd("SET")
                .arg(node_key(&self.inner.node_id))
                .arg(&self.inner.public_url)
                .arg("PX")
                .arg(lease)
                .query_async::<()>(&mut redis),
        )
        .await
    }

    /// Whether Redis answers now, for `/healthz`.
    pub async fn ping(&self) -> Result<(), ClusterError> {
        let mut redis = self.redis();
        self.call(redis::cmd("PING").query_async::<()>(&mut redis))
            .await
    }

    /// Draws room codes until one is free here and claimed in Redis for
    /// this node; the room must then open under it (or be
    /// [released](Cluster::release)).
    pub async fn claim_new_code(&self, registry: &Registry) -> Result<Arc<str>, ClusterError> {
        let lease = self.lease_ms();
        let mut redis = self.redis();
        for _ in 0..CLAIM_TRIES {
            let code = new_room_code();
            if registry.room(&code).is_some() {
                continue;
            }
            let set: Option<String> = self
                .call(
                    redis::cmd("SET")
                        .arg(room_key(&code))
                        .arg(&self.inner.node_id)
                        .arg("NX")
                        .arg("PX")
                        .arg(lease)
                        .query_async(&mut redis),
                )
                .await?;
            if set.is_some() {
                let code: Arc<str> = Arc::from(code);
                self.with_book(|book| book.hold(Arc::clone(&code)));
                return Ok(code);
            }
            tracing::debug!(%code, "room code held by another node; drawing another");
        }
        Err(ClusterError::NoFreeCode)
    }

    /// Claims the existing room `code` (a race kept in the store) if no
    /// live node holds it; whether this node now does. A lease missing
    /// from a Redis up for less than a lease is left to its owner's next
    /// renewal (see `CLAIM_SCRIPT`).
    pub async fn claim_existing(&self, code: &str) -> Result<bool, ClusterError> {
        let lease = self.lease_ms();
        let mut redis = self.redis();
        let mut invocation = self.inner.claim.prepare_invoke();
        invocation
            .key(room_key(code))
            .arg(&self.inner.node_id)
            .arg(lease)
            .arg(lease.saturating_add(RESTART_GRACE_MS));
        let claimed: i64 = self.call(invocation.invoke_async(&mut redis)).await?;
        if claimed == 1 {
            self.with_book(|book| book.hold(Arc::from(code)));
        }
        Ok(claimed == 1)
    }

    /// Where the room `code` is.
    pub async fn owner(&self, code: &str) -> Result<Owner, ClusterError> {
        let mut redis = self.redis();
        let node: Option<String> = self
            .call(
                redis::cmd("GET")
                    .arg(room_key(&normal_code(code)))
                    .query_async(&mut redis),
            )
            .await?;
        let Some(node) = node else {
            return Ok(Owner::Nobody);
        };
        if node == self.inner.node_id {
            return Ok(Owner::Here);
        }
        let url: Option<String> = self
            .call(
                redis::cmd("GET")
                    .arg(node_key(&node))
                    .query_async(&mut redis),
            )
            .await?;
        Ok(url.map_or(Owner::Nobody, |url| Owner::Elsewhere { url }))
    }

    /// The room code a resume token opens a seat of, if Redis knows it.
    pub async fn room_of_token(&self, hash: &TokenHash) -> Result<Option<String>, ClusterError> {
        let mut redis = self.redis();
        self.call(
            redis::cmd("GET")
                .arg(token_key(hash))
                .query_async(&mut redis),
        )
        .await
    }

    /// The room advertised for quick races of `game`, if one is, where it
    /// is, and who waits in it.
    pub async fn advertised(&self, game: GameKind) -> Result<Option<Advert>, ClusterError> {
        let mut redis = self.redis();
        let (code, waiter): (Option<String>, Option<String>) = self
            .call(
                redis::cmd("MGET")
                    .arg(quick_key(game))
                    .arg(waiter_key(game))
                    .query_async(&mut redis),
            )
            .await?;
        let Some(code) = code else {
            return Ok(None);
        };
        let owner = self.owner(&code).await?;
        let waiter = waiter.and_then(|value| parse_waiter(&value, &code));
        Ok(Some(Advert {
            code,
            owner,
            waiter,
        }))
    }

    /// Advertises this node's room `code` (claimed, about to open) for
    /// quick races of `game`, with `waiter` waiting in it, if no room is
    /// advertised or the one advertised is `stale`; whether it now is.
    /// When it is not, another room was advertised first, and the caller
    /// goes there.
    pub async fn advertise(
        &self,
        game: GameKind,
        code: &Arc<str>,
        stale: Option<&str>,
        waiter: &Waiter,
    ) -> Result<bool, ClusterError> {
        let lease = self.lease_ms();
        let mut redis = self.redis();
        let mut invocation = self.inner.advertise.prepare_invoke();
        invocation
            .key(quick_key(game))
            .arg(&**code)
            .arg(lease)
            .arg(stale.unwrap_or(""));
        let advertised: String = self.call(invocation.invoke_async(&mut redis)).await?;
        let ours = advertised == **code;
        if ours {
            self.call(
                redis::cmd("SET")
                    .arg(waiter_key(game))
                    .arg(waiter_value(code, waiter))
                    .arg("PX")
                    .arg(lease)
                    .query_async::<()>(&mut redis),
            )
            .await?;
            self.with_book(|book| book.advertise(game, Arc::clone(code)));
        }
        Ok(ours)
    }

    /// Marks `code` as being taken over by this node until the answer is
    /// dropped; `None` if it already is.
    pub fn begin_takeover(&self, code: &str) -> Option<Takeover> {
        let code: Arc<str> = Arc::from(code);
        let mut taking_over = self
            .inner
            .taking_over
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !taking_over.insert(Arc::clone(&code)) {
            return None;
        }
        drop(taking_over);
        Some(Takeover {
            cluster: self.clone(),
            code,
        })
    }

    /// The right to look a resume token up in the store, one lookup at a
    /// time on this node: each reads every running race's room, so a flood
    /// of unknown tokens (Redis knows none of them) must not fill the
    /// database thread's queue ahead of the moves; waiting callers are
    /// bounded by the connection cap. `None` only if the semaphore were
    /// closed, which nothing does.
    pub async fn token_lookup(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.inner.token_lookups.acquire().await.ok()
    }

    /// Whether this node is taking `code` over right now.
    pub fn is_taking_over(&self, code: &str) -> bool {
        self.inner
            .taking_over
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(code)
    }

    /// The lease length, in milliseconds.
    pub fn lease_length_ms(&self) -> u64 {
        self.lease_ms()
    }

    /// Owes Redis a token's write, off the caller's path: the writer task
    /// flushes it, and keeps it until it reaches Redis.
    fn owe(&self, write: Write) {
        let now = self.now_ms();
        if let Some(given_up) = self.with_book(|book| book.owe(write, now)) {
            bump(&self.inner.metrics.cluster_writes_dropped);
            tracing::warn!(
                ?given_up,
                "too many writes owed to Redis: a token's forget was given up"
            );
        }
        self.inner.written.notify_one();
    }

    /// Records, off the caller's path, that a token opens a seat of `code`.
    pub fn remember_token(&self, hash: TokenHash, code: Arc<str>) {
        self.owe(Write::SetToken { hash, code });
    }

    /// Forgets a token, off the caller's path.
    pub fn forget_token(&self, hash: TokenHash) {
        self.owe(Write::ForgetToken { hash });
    }

    /// Gives up the room `code`: its lease stops being renewed at once and
    /// is deleted off the caller's path.
    pub fn release(&self, code: &Arc<str>) {
        let now = self.now_ms();
        if self.with_book(|book| book.give_up(code, now)) {
            self.inner.written.notify_one();
        }
    }

    /// Flushes the writes the node owes until the server stops: when one is
    /// owed, and at every renewal tick. After a flush failed, only the
    /// renewal ticks wake it, so that a Redis that is down is tried once a
    /// tick, not once a write.
    pub async fn write_forever(self, queue: WriteQueue, shutdown: CancellationToken) {
        let WriteQueue { _one_writer: () } = queue;
        let mut failing = false;
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                () = self.inner.ticked.notified() => {}
                () = self.inner.written.notified(), if !failing => {}
            }
            failing = match self.flush_owed().await {
                Ok(()) => false,
                Err(error) => {
                    tracing::warn!(%error, "cluster writes failed: they are tried again at the next renewal");
                    true
                }
            };
        }
    }

    /// Flushes every write owed, in batches, until none is left or one
    /// batch fails; the writes of a failed batch stay owed.
    async fn flush_owed(&self) -> Result<(), ClusterError> {
        loop {
            let now = self.now_ms();
            let batch = self.with_book(|book| book.writes_to_flush(FLUSH_BATCH, now));
            if batch.is_empty() {
                return Ok(());
            }
            match self.write_batch(&batch).await {
                Ok(()) => self.with_book(|book| book.writes_flushed(&batch)),
                Err(error) => {
                    let deferred = self.with_book(|book| book.writes_failed(&batch));
                    self.inner.metrics.cluster_writes_deferred.fetch_add(
                        u64::try_from(deferred).unwrap_or(u64::MAX),
                        std::sync::atomic::Ordering::Relaxed,
                    );
                    return Err(error);
                }
            }
        }
    }

    /// Makes the writes of `batch`: the tokens' in one pipeline, the
    /// releases in one script call. Every write is idempotent, so a batch
    /// that failed half way is made again whole.
    async fn write_batch(&self, batch: &[Taken]) -> Result<(), ClusterError> {
        let mut redis = self.redis();
        let mut tokens = redis::pipe();
        let mut n_tokens = 0;
        let mut release = self.inner.release.prepare_invoke();
        let mut n_releases = 0;
        for taken in batch {
            match &taken.write {
                Write::SetToken { hash, code } => {
                    tokens
                        .cmd("SET")
                        .arg(token_key(hash))
                        .arg(&**code)
                        .arg("PX")
                        .arg(TOKEN_TTL_MS)
                        .ignore();
                    n_tokens += 1;
                }
                Write::ForgetToken { hash } => {
                    tokens.cmd("DEL").arg(token_key(hash)).ignore();
                    n_tokens += 1;
                }
                Write::Release { code } => {
                    release.key(room_key(code));
                    n_releases += 1;
                }
            }
        }
        if n_tokens > 0 {
            self.call(tokens.query_async::<()>(&mut redis)).await?;
        }
        if n_releases > 0 {
            release.arg(&self.inner.node_id);
            self.call(release.invoke_async::<i64>(&mut redis)).await?;
        }
        Ok(())
    }

    /// Renews the node's key, its room leases and its advertisements
    /// every third of a lease until the server stops.
    pub async fn renew_forever(self, registry: Arc<Registry>, shutdown: CancellationToken) {
        let every = Duration::from_millis(self.with_book(|book| book.renew_every_ms()));
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = ticker.tick() => {}
            }
            let began = self.now_ms();
            match self.renew_once(&registry).await {
                Ok(()) => self.with_book(|book| book.reached_redis(began)),
                Err(error) => {
                    bump(&self.inner.metrics.cluster_renew_failures);
                    tracing::warn!(%error, "renewing the cluster leases failed");
                }
            }
            // The writes still owed are tried again (by the writer task,
            // the one that flushes) once a tick, whether or not this
            // renewal reached Redis: writes may pass where a renewal failed.
            self.inner.ticked.notify_one();
        }
    }

    /// Publishes this node's part of the lobby (its open public rooms
    /// still forming) for the other nodes, for a lease.
    async fn publish_lobby(&self, registry: &Registry) -> Result<(), ClusterError> {
        let counts: Vec<(GameKind, PlayerCounts)> = GameKind::ALL
            .into_iter()
            .map(|game| (game, registry.players_of(game)))
            .filter(|(_, counts)| *counts != PlayerCounts::default())
            .collect();
        let mut redis = self.redis();
        let counts_body = patience_shared::protocol::encode(&counts);
        self.call(
            redis::cmd("SET")
                .arg(counts_key(&self.inner.node_id))
                .arg(counts_body)
                .arg("PX")
                .arg(self.lease_ms())
                .query_async::<()>(&mut redis),
        )
        .await?;
        let rooms = registry.lobby(None);
        let key = lobby_key(&self.inner.node_id);
        if rooms.is_empty() {
            return self
                .call(redis::cmd("DEL").arg(key).query_async::<()>(&mut redis))
                .await;
        }
        let body = patience_shared::protocol::encode(&rooms);
        self.call(
            redis::cmd("SET")
                .arg(key)
                .arg(body)
                .arg("PX")
                .arg(self.lease_ms())
                .query_async::<()>(&mut redis),
        )
        .await
    }

    /// The lobby's rooms on the other live nodes, as each published them at
    /// its last renewal (at most a third of a lease ago).
    pub async fn lobby_elsewhere(&self) -> Result<Vec<ListedRoom>, ClusterError> {
        let bodies = self
            .published_elsewhere("lobby", &lobby_key(&self.inner.node_id))
            .await?;
        Ok(bodies
            .into_iter()
            .filter_map(|body| rmp_serde::from_slice::<Vec<ListedRoom>>(&body).ok())
            .flatten()
            .collect())
    }

    /// The players waiting for and racing `game` on the other live nodes,
    /// as each counted them at its last renewal.
    pub async fn players_elsewhere(&self, game: GameKind) -> Result<PlayerCounts, ClusterError> {
        let bodies = self
            .published_elsewhere("counts", &counts_key(&self.inner.node_id))
            .await?;
        Ok(bodies
            .into_iter()
            .filter_map(|body| rmp_serde::from_slice::<Vec<(GameKind, PlayerCounts)>>(&body).ok())
            .flatten()
            .filter(|(counted, _)| *counted == game)
            .fold(PlayerCounts::default(), |sum, (_, counts)| sum.plus(counts)))
    }

    /// What the other live nodes published under `{kind}:{node}`.
    async fn published_elsewhere(
        &self,
        kind: &str,
        own: &str,
    ) -> Result<Vec<Vec<u8>>, ClusterError> {
        let mut redis = self.redis();
        let mut keys = Vec::new();
        let mut cursor = 0u64;
        // Bounded: a cluster has a handful of nodes, each one key.
        for _ in 0..LOBBY_SCAN_PAGES {
            let (next, page): (u64, Vec<String>) = self
                .call(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(format!("{PREFIX}{kind}:*"))
                        .arg("COUNT")
                        .arg(100)
                        .query_async(&mut redis),
                )
                .await?;
            keys.extend(page.into_iter().filter(|key| *key != own));
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let bodies: Vec<Option<Vec<u8>>> = self
            .call(redis::cmd("MGET").arg(&keys).query_async(&mut redis))
            .await?;
        Ok(bodies.into_iter().flatten().collect())
    }

    /// One renewal of everything this node holds.
    pub async fn renew_once(&self, registry: &Registry) -> Result<(), ClusterError> {
        self.register().await?;
        self.publish_lobby(registry).await?;
        let lease = self.lease_ms();
        let mut redis = self.redis();
        for batch in self.with_book(|book| book.batches(RENEW_BATCH)) {
            let mut invocation = self.inner.renew.prepare_invoke();
            for code in &batch {
                invocation.key(room_key(code));
            }
            invocation.arg(&self.inner.node_id).arg(lease);
            let answer: Vec<i64> = self.call(invocation.invoke_async(&mut redis)).await?;
            // A lease taken back lapsed, most likely with Redis restarting
            // empty: its room's token pointers went with it, so they are
            // owed again, and resumes through other nodes find the room
            // through Redis once more, not only through the store.
            for code in LeaseBook::taken_back(&batch, &answer) {
                for hash in registry.tokens_of(&code) {
                    self.remember_token(hash, Arc::clone(&code));
                }
            }
            for code in self.with_book(|book| book.renewed(&batch, &answer)) {
                bump(&self.inner.metrics.cluster_leases_lost);
                tracing::error!(%code, "another node holds this node's room now: the room closes here");
                // Its players reconnect, are redirected, and resume at
                // the node that holds it (which runs it from the store).
                let room = registry.room(&code);
                if let Some(room) = room {
                    let lost = room.commands.send(Command::LeaseLost);
                    let _ = tokio::time::timeout(REDIS_TIMEOUT, lost).await;
                }
            }
        }
        for (game, code) in self.with_book(|book| book.adverts()) {
            let open = registry
                .room(&code)
                .is_some_and(|room| room.summary.open_for_quick_race(game));
            if open {
                let mut invocation = self.inner.renew.prepare_invoke();
                invocation.key(quick_key(game)).arg(&*code).arg(lease);
                let kept: Vec<i64> = self.call(invocation.invoke_async(&mut redis)).await?;
                if matches!(kept.as_slice(), [1 | 2]) {
                    self.call(
                        redis::cmd("PEXPIRE")
                            .arg(waiter_key(game))
                            .arg(lease)
                            .query_async::<()>(&mut redis),
                    )
                    .await?;
                } else {
                    self.with_book(|book| book.withdraw(game));
                }
            } else {
                let mut invocation = self.inner.release.prepare_invoke();
                invocation.key(quick_key(game)).arg(&*code);
                self.call(invocation.invoke_async::<i64>(&mut redis))
                    .await?;
                self.with_book(|book| book.withdraw(game));
            }
        }
        Ok(())
    }

    /// Whether this node's leases can still be its own: its last renewal
    /// reached Redis less than a lease ago.
    pub fn leases_current(&self) -> bool {
        let now = self.now_ms();
        self.with_book(|book| book.leases_current(now))
    }

    /// Whether this node holds the lease of `code` (as far as it knows).
    pub fn holds(&self, code: &str) -> bool {
        self.with_book(|book| book.holds(code))
    }

    /// At shutdown: gives up every lease and the node's key, so that
    /// another node (or this one restarted) can take the rooms at once
    /// rather than a lease later.
    pub async fn leave(&self) -> Result<(), ClusterError> {
        // The writer task has stopped; what it still owed goes now, as the
        // releases of rooms closed before the shutdown are among it.
        if let Err(error) = self.flush_owed().await {
            tracing::warn!(%error, "writes owed to Redis were not made before leaving");
        }
        let batches = self.with_book(|book| book.batches(RENEW_BATCH));
        let mut redis = self.redis();
        for batch in batches {
            let mut invocation = self.inner.release.prepare_invoke();
            for code in &batch {
                invocation.key(room_key(code));
            }
            invocation.arg(&self.inner.node_id);
            self.call(invocation.invoke_async::<i64>(&mut redis))
                .await?;
            self.with_book(|book| {
                for code in &batch {
                    book.release(code);
                }
            });
        }
        let mut invocation = self.inner.release.prepare_invoke();
        invocation
            .key(node_key(&self.inner.node_id))
            .arg(&self.inner.public_url);
        self.call(invocation.invoke_async::<i64>(&mut redis))
            .await
            .map(drop)
    }
}
