//! Counters and gauges for `/metrics`, in the Prometheus text format.
//!
//! Plain atomics: recording a value never locks and never allocates, so the
//! hot paths (a move, a frame sent) pay a relaxed increment.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use patience_room_core::metrics::{Counter, Gauge, RoomMetrics};

/// Upper bounds of the latency histograms' buckets, in seconds.
const BUCKETS: [f64; 11] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1,
];

/// A Prometheus histogram of durations, in atomics: buckets from 50 µs
/// to 100 ms, the same for every histogram so that they compare.
#[derive(Debug, Default)]
pub struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Histogram {
    /// Records one duration.
    pub fn observe(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|&bound| seconds <= bound) {
            self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Appends the histogram as `name`, with its `help`, to `out`.
    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += count.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

/// Every metric the server exports.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Connections open now.
    pub connections: AtomicI64,
    /// Connections accepted since start.
    pub connections_total: AtomicU64,
    /// Connections refused because the cap was reached.
    pub connections_refused: AtomicU64,
    /// Rooms open now.
    pub rooms: AtomicI64,
    /// Races running now.
    pub races_running: AtomicI64,
    /// Races started since start.
    pub races_started: AtomicU64,
    /// Races ended since start.
    pub races_finished: AtomicU64,
    /// Moves played.
    pub moves_accepted: AtomicU64,
    /// Moves refused.
    pub moves_rejected: AtomicU64,
    /// Messages that did not fit a connection's outbox.
    pub send_queue_drops: AtomicU64,
    /// Times a socket took no writes for the write timeout.
    pub write_stalls: AtomicU64,
    /// Times a spectator fell behind: it skips events until one snapshot.
    pub spectators_coalesced: AtomicU64,
    /// Races that found no proved deal ready and waited for the solver.
    pub deal_waits: AtomicU64,
    /// Connections closed for sending too fast.
    pub rate_limited: AtomicU64,
    /// Registrations refused by the per-address limit.
    pub registrations_refused: AtomicU64,
    /// Frames that were not messages of the protocol.
    pub malformed_messages: AtomicU64,
    /// Database calls that failed (each is logged).
    pub storage_errors: AtomicU64,
    /// Running races written again, whole, after a write of theirs failed.
    pub store_retries: AtomicU64,
    /// Rooms whose running race waits for the store now: a write failed
    /// and none has committed since.
    pub rooms_waiting_for_store: AtomicI64,
    /// Admin connections refused because the admin cap was reached.
    pub admin_connections_refused: AtomicU64,
    /// Room leases this cluster node holds now (0 on a node alone).
    pub cluster_leases_held: AtomicI64,
    /// Renewals of this node's leases that failed (Redis unreachable).
    pub cluster_renew_failures: AtomicU64,
    /// Room leases a renewal found lost (lapsed or taken by another node).
    pub cluster_leases_lost: AtomicU64,
    /// `redirect`s sent to clients.
    pub cluster_redirects: AtomicU64,
    /// Redis calls that failed or timed out.
    pub cluster_redis_errors: AtomicU64,
    /// Writes to other nodes given up: a token's forget that did not fit
    /// the writes owed to Redis, a leaderboard change not relayed.
    pub cluster_writes_dropped: AtomicU64,
    /// Writes to Redis (a token's pointer, its forget, a lease's release)
    /// whose first try failed: they stay owed and are tried again.
    pub cluster_writes_deferred: AtomicU64,
    /// Writes owed to Redis now, not yet made.
    pub cluster_writes_pending: AtomicI64,
    /// Races of a node that was gone, run on here.
    pub cluster_failovers: AtomicU64,
    /// Time to validate, apply and broadcast a move.
    pub move_handling: Histogram,
    /// Time from a room asking for a proved deal to having one: the pool's
    /// handout, and the wait for the solver when none was ready.
    pub deal_handout: Histogram,
}

/// Adds one to a counter.
pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Adds `delta` to a gauge.
pub(crate) fn gauge(gauge: &AtomicI64, delta: i64) {
    gauge.fetch_add(delta, Ordering::Relaxed);
}

/// A room's counts go to the server's own counters.
impl RoomMetrics for Metrics {
    fn bump(&self, counter: Counter) {
        bump(match counter {
            Counter::RacesStarted => &self.races_started,
            Counter::RacesFinished => &self.races_finished,
            Counter::MovesAccepted => &self.moves_accepted,
            Counter::MovesRejected => &self.moves_rejected,
            Counter::StorageErrors => &self.storage_errors,
            Counter::StoreRetries => &self.store_retries,
        });
    }

    fn gauge(&self, gauge: Gauge, delta: i64) {
        let level = match gauge {
            Gauge::RacesRunning => &self.races_running,
            Gauge::RoomsWaitingForStore => &self.rooms_waiting_for_store,
        };
        level.fetch_add(delta, Ordering::Relaxed);
    }
}

impl Metrics {
    /// The Prometheus text exposition of every metric; `pool` lists the
    /// proved deals ready per game.
    pub fn render(&self, pool: &[(String, usize)], database: &crate::database::Stats) -> String {
        let mut out = String::with_capacity(2048);
        let load_u = |value: &AtomicU64| value.load(Ordering::Relaxed);
        let load_i = |value: &AtomicI64| value.load(Ordering::Relaxed);
        let mut metric = |name: &str, kind: &str, help: &str, value: String| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        };
        metric(
            "patience_connections",
            "gauge",
            "Connections open.",
            load_i(&self.connections).to_string(),
        );
        metric(
            "patience_connections_total",
            "counter",
            "Connections accepted.",
            load_u(&self.connections_total).to_string(),
        );
        metric(
            "patience_connections_refused_total",
            "counter",
            "Connections refused at the cap.",
            load_u(&self.connections_refused).to_string(),
        );
        metric(
            "patience_rooms",
            "gauge",
            "Rooms open.",
            load_i(&self.rooms).to_string(),
        );
        metric(
            "patience_races_running",
            "gauge",
            "Races running.",
            load_i(&self.races_running).to_string(),
        );
        metric(
            "patience_races_started_total",
            "counter",
            "Races started.",
            load_u(&self.races_started).to_string(),
        );
        metric(
            "patience_races_finished_total",
            "counter",
            "Races ended.",
            load_u(&self.races_finished).to_string(),
        );
        metric(
            "patience_moves_accepted_total",
            "counter",
            "Moves played.",
            load_u(&self.moves_accepted).to_string(),
        );
        metric(
            "patience_moves_rejected_total",
            "counter",
            "Moves refused.",
            load_u(&self.moves_rejected).to_string(),
        );
        metric(
            "patience_send_queue_drops_total",
            "counter",
            "Messages that did not fit a connection's outbox.",
            load_u(&self.send_queue_drops).to_string(),
        );
        metric(
            "patience_write_stalls_total",
            "counter",
            "Times a socket took no writes for the write timeout.",
            load_u(&self.write_stalls).to_string(),
        );
        metric(
            "patience_spectators_coalesced_total",
            "counter",
            "Times a spectator fell behind and skipped events until one snapshot.",
            load_u(&self.spectators_coalesced).to_string(),
        );
        metric(
            "patience_deal_waits_total",
            "counter",
            "Races that found no proved deal ready and waited for the solver.",
            load_u(&self.deal_waits).to_string(),
        );
        metric(
            "patience_rate_limited_total",
            "counter",
            "Connections closed for sending too fast.",
            load_u(&self.rate_limited).to_string(),
        );
        metric(
            "patience_registrations_refused_total",
            "counter",
            "Registrations refused by the per-address limit.",
            load_u(&self.registrations_refused).to_string(),
        );
        metric(
            "patience_malformed_messages_total",
            "counter",
            "Frames that were not protocol messages.",
            load_u(&self.malformed_messages).to_string(),
        );
        metric(
            "patience_storage_errors_total",
            "counter",
            "Database calls that failed.",
            load_u(&self.storage_errors).to_string(),
        );
        metric(
            "patience_store_retries_total",
            "counter",
            "Running races written again after a write of theirs failed (the store out of reach or failing).",
            load_u(&self.store_retries).to_string(),
        );
        metric(
            "patience_rooms_waiting_for_store",
            "gauge",
            "Rooms whose running race waits for the store: a write failed and none has committed since.",
            load_i(&self.rooms_waiting_for_store).to_string(),
        );
        metric(
            "patience_admin_connections_refused_total",
            "counter",
            "Admin connections closed at the admin cap to make room for a newer one.",
            load_u(&self.admin_connections_refused).to_string(),
        );
        metric(
            "patience_cluster_leases_held",
            "gauge",
            "Room leases this node holds in the cluster.",
            load_i(&self.cluster_leases_held).to_string(),
        );
        metric(
            "patience_cluster_writes_pending",
            "gauge",
            "Writes owed to Redis (token pointers, their forgets, lease releases) not yet made.",
            load_i(&self.cluster_writes_pending).to_string(),
        );
        for (name, help, value) in [
            (
                "patience_cluster_renew_failures_total",
                "Lease renewals that failed to reach Redis.",
                &self.cluster_renew_failures,
            ),
            (
                "patience_cluster_leases_lost_total",
                "Room leases a renewal found lost to lapse or to another node.",
                &self.cluster_leases_lost,
            ),
            (
                "patience_cluster_redirects_total",
                "Redirects sent to clients for rooms owned by other nodes.",
                &self.cluster_redirects,
            ),
            (
                "patience_cluster_redis_errors_total",
                "Redis calls that failed or timed out.",
                &self.cluster_redis_errors,
            ),
            (
                "patience_cluster_writes_dropped_total",
                "Writes given up: token forgets beyond the writes owed to Redis, leaderboard changes not relayed.",
                &self.cluster_writes_dropped,
            ),
            (
                "patience_cluster_writes_deferred_total",
                "Writes to Redis whose first try failed, kept to be tried again.",
                &self.cluster_writes_deferred,
            ),
            (
                "patience_cluster_failovers_total",
                "Races of a node that was gone, taken over by this node.",
                &self.cluster_failovers,
            ),
        ] {
            metric(name, "counter", help, load_u(value).to_string());
        }
        metric(
            "patience_database_up",
            "gauge",
            "Whether the database thread serves (0 while it reconnects to a lost database server, and once it has stopped: nothing can be stored).",
            u8::from(database.up.load(Ordering::Acquire)).to_string(),
        );
        metric(
            "patience_database_jobs_total",
            "counter",
            "Database calls run.",
            load_u(&database.jobs).to_string(),
        );
        metric(
            "patience_database_commits_total",
            "counter",
            "Transactions committed (each holds a batch of calls).",
            load_u(&database.commits).to_string(),
        );
        metric(
            "patience_database_failed_jobs_total",
            "counter",
            "Database calls whose transaction or savepoint could not begin or commit.",
            load_u(&database.errors).to_string(),
        );
        metric(
            "patience_database_rolled_back_jobs_total",
            "counter",
            "Database calls that failed (an error or a panic) and were rolled back alone.",
            load_u(&database.rolled_back).to_string(),
        );
        metric(
            "patience_database_reconnects_total",
            "counter",
            "Connections to the database server made again after one was lost.",
            load_u(&database.reconnects).to_string(),
        );
        metric(
            "patience_database_commit_seconds_total",
            "counter",
            "Time spent committing.",
            (load_u(&database.commit_micros) as f64 / 1e6).to_string(),
        );

        let _ = writeln!(
            out,
            "# HELP patience_deal_pool_ready Proved deals ready, per game.\n# TYPE patience_deal_pool_ready gauge"
        );
        for (game, ready) in pool {
            let _ = writeln!(out, "patience_deal_pool_ready{{game=\"{game}\"}} {ready}");
        }

        self.move_handling.render(
            &mut out,
            "patience_move_handling_seconds",
            "Time to validate, apply and broadcast a move.",
        );
        self.deal_handout.render(
            &mut out,
            "patience_deal_handout_seconds",
            "Time from a race asking for a proved deal to having one (with any wait for the solver).",
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let metrics = Metrics::default();
        metrics.move_handling.observe(Duration::from_micros(70));
        metrics.move_handling.observe(Duration::from_millis(3));
        metrics.move_handling.observe(Duration::from_secs(1));
        let text = metrics.render(
            &[("three-blind-mice".to_string(), 2)],
            &crate::database::Stats::default(),
        );
        assert!(
            text.contains("patience_move_handling_seconds_bucket{le=\"0.0001\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("patience_move_handling_seconds_bucket{le=\"0.005\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("patience_move_handling_seconds_bucket{le=\"+Inf\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("patience_move_handling_seconds_count 3\n"),
            "{text}"
        );
        // Each histogram renders its own observations under its own name.
        assert!(
            text.contains("patience_deal_handout_seconds_count 0\n"),
            "{text}"
        );
        metrics.deal_handout.observe(Duration::from_micros(30));
        let text = metrics.render(&[], &crate::database::Stats::default());
        assert!(
            text.contains("patience_deal_handout_seconds_bucket{le=\"0.00005\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("patience_move_handling_seconds_count 3\n"),
            "{text}"
        );
        let text = metrics.render(
            &[("three-blind-mice".to_string(), 2)],
            &crate::database::Stats::default(),
        );
        assert!(
            text.contains("patience_deal_pool_ready{game=\"three-blind-mice\"} 2\n"),
            "{text}"
        );
        // Stats that no thread set up read as a database down.
        assert!(text.contains("patience_database_up 0\n"), "{text}");
        let up = crate::database::Stats::default();
        up.up.store(true, Ordering::Relaxed);
        let text = metrics.render(&[], &up);
        assert!(text.contains("patience_database_up 1\n"), "{text}");
    }
}
