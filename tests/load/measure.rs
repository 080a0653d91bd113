//! What every scenario measures, and the one JSON line a run reports.
//!
//! Nothing here knows the race protocol: a scenario (a target of the load)
//! records latencies and counts into [`Stats`] within the measurement
//! [`Window`], takes a [`Sample`] of the server process and the machine at
//! the window's start and end through a [`Probe`], and hands back an
//! [`Outcome`] with whatever it alone knows; [`report`] turns that into the
//! JSON line (stdout) and the human summary (stderr).
//!
//! With a server pid the probe also reads each of the server's threads
//! (`/proc/PID/task/*/comm` and `stat`), so the report can split its CPU by
//! thread name and leave out the deal prover, whose work (proving deals in
//! the background) is per race, not per move.
//!
//! Layout: the window; latency lists and counters; reading `/proc`; the
//! report.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// When measuring starts and stops: what happens outside it (connecting,
/// countdowns, closing) is not counted.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// The first instant measured.
    pub from: Instant,
    /// The first instant not measured.
    pub until: Instant,
}

impl Window {
    /// Whether `at` falls in the window.
    pub fn contains(&self, at: Instant) -> bool {
        at >= self.from && at < self.until
    }

    /// The window's length in seconds (at least a millisecond, so that
    /// rates are finite).
    pub fn seconds(&self) -> f64 {
        (self.until - self.from).as_secs_f64().max(0.001)
    }
}

/// Latencies in microseconds.
#[derive(Debug, Default)]
pub struct Latencies(Mutex<Vec<u64>>);

impl Latencies {
    /// Adds one.
    pub fn record(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(micros);
    }

    /// How many there are.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    fn sorted(&self) -> Vec<u64> {
        let mut values = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        values.sort_unstable();
        values
    }
}

/// The value at `fraction` (0.5 for the median) of a sorted list: the
/// smallest value with at least that fraction of the list at or below it.
fn percentile(sorted: &[u64], fraction: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((sorted.len() as f64) * fraction).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// `{"samples", "p50", "p99", "p99_9", "max"}` in microseconds; the
/// percentiles are null without samples.
fn summary(sorted: &[u64]) -> Value {
    json!({
        "samples": sorted.len(),
        "p50": percentile(sorted, 0.50),
        "p99": percentile(sorted, 0.99),
        "p99_9": percentile(sorted, 0.999),
        "max": sorted.last(),
    })
}

fn human(sorted: &[u64]) -> String {
    let millis = |fraction| percentile(sorted, fraction).map_or(0.0, |micros| micros as f64 / 1e3);
    if sorted.is_empty() {
        return "no samples".to_string();
    }
    format!(
        "n {} p50 {:.2} ms p99 {:.2} ms p99.9 {:.2} ms max {:.2} ms",
        sorted.len(),
        millis(0.50),
        millis(0.99),
        millis(0.999),
        millis(1.0)
    )
}

/// What the clients saw within the window, shared by all of them. For the
/// echo baseline a "move" is a frame sent and its "ack" the echo.
#[derive(Debug, Default)]
pub struct Stats {
    /// A move sent to its answer (`move_accepted`; the echo).
    pub ack: Latencies,
    /// A move sent to a rival's `progress` for it.
    pub opponent: Latencies,
    /// A move sent to a spectator's `progress` for it.
    pub spectator: Latencies,
    /// Moves sent.
    pub moves_sent: AtomicU64,
    /// Moves answered with `move_accepted` (frames echoed).
    pub moves_accepted: AtomicU64,
    /// Moves refused, except for a race already over.
    pub moves_rejected: AtomicU64,
    /// Frames received by all the clients.
    pub deliveries: AtomicU64,
    /// Protocol errors received, and rooms that failed.
    pub errors: AtomicU64,
    /// Connections closed by the server while they should have been open.
    pub disconnects: AtomicU64,
    /// Times a client was due to move while its last move was unanswered
    /// (open loop only): it skips that turn.
    pub late_ticks: AtomicU64,
}

impl Stats {
    /// Adds one to `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

fn load(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

// ----- The server process and the machine, from /proc -----

/// Reads a process's CPU time and memory, and the machine's load.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    pid: Option<u32>,
    ticks_per_second: u64,
}

/// The process and the machine at one instant; `None` where `/proc` could
/// not be read (no `--server-pid`, or the process has gone).
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// User plus system time, in clock ticks.
    pub cpu_ticks: Option<u64>,
    /// Resident memory, in bytes.
    pub rss_bytes: Option<u64>,
    /// The 1, 5 and 15 minute load averages.
    pub load_average: Option<[f64; 3]>,
    /// The process's threads then.
    pub threads: Option<Threads>,
}

/// A process's threads, by thread id.
pub type Threads = BTreeMap<u32, ThreadSample>;

/// One thread at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadSample {
    /// Its name (`comm`: at most 15 bytes, as the kernel keeps it).
    pub name: String,
    /// When it started, in clock ticks after boot: with the thread id, what
    /// tells a thread from a later one that reuses its id.
    pub started: u64,
    /// User plus system time, in clock ticks.
    pub cpu_ticks: u64,
}

/// A process's CPU between two samples, per thread name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ThreadCpu {
    /// Clock ticks per thread name, over the threads seen at the end.
    pub ticks_by_name: BTreeMap<String, u64>,
    /// Threads at the end that were not there at the start: all their CPU
    /// time is counted, since all of it was spent after the start.
    pub appeared: usize,
    /// Threads at the start that had gone by the end: their time in
    /// between cannot be read any more (the kernel folds it into the
    /// process's total when a thread exits), so the names' sum falls short
    /// of the process's CPU by that much.
    pub vanished: usize,
}

/// What each thread name spent between `start` and `end`. A thread is the
/// same at both ends if its id and start time are; a thread whose id was
/// reused in between counts as one that vanished and one that appeared.
pub fn thread_cpu(start: &Threads, end: &Threads) -> ThreadCpu {
    let mut cpu = ThreadCpu::default();
    for (tid, thread) in end {
        let before = start
            .get(tid)
            .filter(|before| before.started == thread.started);
        let spent = match before {
            Some(before) => thread.cpu_ticks.saturating_sub(before.cpu_ticks),
            None => {
                cpu.appeared += 1;
                thread.cpu_ticks
            }
        };
        *cpu.ticks_by_name.entry(thread.name.clone()).or_default() += spent;
    }
    cpu.vanished = start
        .iter()
        .filter(|(tid, thread)| {
            end.get(tid)
                .is_none_or(|after| after.started != thread.started)
        })
        .count();
    cpu
}

/// The thread name of the server's deal prover (`server/src/deal_pool.rs`).
pub const DEAL_PROVER_THREAD: &str = "deal-prover";

impl Probe {
    /// A probe of `pid` (if any) and the machine.
    pub fn new(pid: Option<u32>) -> Probe {
        Probe {
            pid,
            ticks_per_second: rustix::param::clock_ticks_per_second(),
        }
    }

    /// Reads it all now.
    pub fn sample(&self) -> Sample {
        let read = |path: String| std::fs::read_to_string(path).ok();
        let stat = self.pid.and_then(|pid| read(format!("/proc/{pid}/stat")));
        let status = self.pid.and_then(|pid| read(format!("/proc/{pid}/status")));
        Sample {
            cpu_ticks: stat.as_deref().and_then(cpu_ticks),
            rss_bytes: status.as_deref().and_then(rss_bytes),
            load_average: read("/proc/loadavg".to_string())
                .as_deref()
                .and_then(load_average),
            threads: self.pid.and_then(read_threads),
        }
    }

    /// Samples at the window's start and at its end.
    pub async fn sample_window(self, window: Window) -> (Sample, Sample) {
        tokio::time::sleep_until(window.from.into()).await;
        let start = self.sample();
        tokio::time::sleep_until(window.until.into()).await;
        (start, self.sample())
    }
}

/// Field `number` (counting from 1, as `proc(5)` does) of a
/// `/proc/PID/stat` line, from field 3 on: they are counted after the
/// command name, which is in parentheses and may hold spaces.
fn stat_field(stat: &str, number: usize) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Field 3 (the state) is the first after the name.
    after_name
        .split_whitespace()
        .nth(number.checked_sub(3)?)?
        .parse()
        .ok()
}

/// `utime + stime` from `/proc/PID/stat` (or a thread's
/// `/proc/PID/task/TID/stat`): fields 14 and 15.
fn cpu_ticks(stat: &str) -> Option<u64> {
    Some(stat_field(stat, 14)? + stat_field(stat, 15)?)
}

/// A thread from its `comm` and `stat` files (`starttime` is field 22).
fn thread_sample(comm: &str, stat: &str) -> Option<ThreadSample> {
    Some(ThreadSample {
        name: comm.trim_end_matches('\n').to_string(),
        started: stat_field(stat, 22)?,
        cpu_ticks: cpu_ticks(stat)?,
    })
}

/// Every thread of `pid` that can be read now. A thread that exits while
/// the directory is walked is left out (it is one that vanished).
fn read_threads(pid: u32) -> Option<Threads> {
    let directory = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut threads = Threads::new();
    for entry in directory.flatten() {
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        let comm = std::fs::read_to_string(path.join("comm"));
        let stat = std::fs::read_to_string(path.join("stat"));
        if let (Ok(comm), Ok(stat)) = (comm, stat)
            && let Some(thread) = thread_sample(&comm, &stat)
        {
            threads.insert(tid, thread);
        }
    }
    Some(threads)
}

/// `VmRSS` from `/proc/PID/status`, in bytes.
fn rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let mut words = line["VmRSS:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib * 1024)
}

/// The three averages of `/proc/loadavg`.
fn load_average(loadavg: &str) -> Option<[f64; 3]> {
    let mut words = loadavg.split_whitespace();
    let mut next = || words.next()?.parse::<f64>().ok();
    Some([next()?, next()?, next()?])
}

// ----- The report -----

/// What a scenario hands back: its window, the samples at either end, and
/// the fields only it knows (added to the JSON line as they are).
#[derive(Debug)]
pub struct Outcome {
    /// What was measured.
    pub window: Window,
    /// The server and the machine at the window's start.
    pub start: Sample,
    /// The server and the machine at the window's end.
    pub end: Sample,
    /// The scenario's own fields.
    pub extra: Map<String, Value>,
    /// Lines for the human summary.
    pub notes: Vec<String>,
}

/// The run as one JSON object: `scenario` and `settings` as given, then
/// what [`Stats`] holds over the window, the server's CPU and memory, the
/// load averages, and the scenario's own fields.
pub fn report(
    scenario: &str,
    settings: Value,
    stats: &Stats,
    probe: &Probe,
    outcome: &Outcome,
) -> Value {
    let seconds = outcome.window.seconds();
    let accepted = load(&stats.moves_accepted);
    let deliveries = load(&stats.deliveries);
    let per = |value: f64, count: u64| (count > 0).then(|| value / count as f64);
    let server = probe.pid.map(|pid| {
        let micros = |ticks: u64| ticks as f64 * 1e6 / probe.ticks_per_second.max(1) as f64;
        let cpu_micros = outcome
            .start
            .cpu_ticks
            .zip(outcome.end.cpu_ticks)
            .map(|(start, end)| micros(end.saturating_sub(start)));
        let threads = outcome
            .start
            .threads
            .as_ref()
            .zip(outcome.end.threads.as_ref())
            .map(|(start, end)| thread_cpu(start, end));
        let by_thread = threads.as_ref().map(|threads| {
            threads
                .ticks_by_name
                .iter()
                .map(|(name, &ticks)| (name.clone(), json!(micros(ticks) / 1e6)))
                .collect::<Map<String, Value>>()
        });
        // The process's total (which keeps the time of threads that exited)
        // less what the deal prover's thread spent.
        let without_deal_prover = cpu_micros.zip(threads.as_ref()).map(|(cpu, threads)| {
            let prover = threads
                .ticks_by_name
                .get(DEAL_PROVER_THREAD)
                .copied()
                .unwrap_or(0);
            (cpu - micros(prover)).max(0.0)
        });
        json!({
            "pid": pid,
            "clock_ticks_per_s": probe.ticks_per_second,
            "cpu_s": cpu_micros.map(|cpu| cpu / 1e6),
            "cpu_share_of_a_core": cpu_micros.map(|cpu| cpu / 1e6 / seconds),
            "cpu_us_per_accepted_move": cpu_micros.and_then(|cpu| per(cpu, accepted)),
            "cpu_us_per_delivery": cpu_micros.and_then(|cpu| per(cpu, deliveries)),
            "cpu_us_per_accepted_move_without_deal_prover":
                without_deal_prover.and_then(|cpu| per(cpu, accepted)),
            "cpu_s_by_thread": by_thread,
            "threads_start": outcome.start.threads.as_ref().map(BTreeMap::len),
            "threads_end": outcome.end.threads.as_ref().map(BTreeMap::len),
            "threads_appeared": threads.as_ref().map(|threads| threads.appeared),
            "threads_vanished": threads.as_ref().map(|threads| threads.vanished),
            "rss_bytes_start": outcome.start.rss_bytes,
            "rss_bytes_end": outcome.end.rss_bytes,
        })
    });
    let mut line = json!({
        "tool": "patience-load",
        "scenario": scenario,
        "settings": settings,
        "window_s": seconds,
        "moves_sent": load(&stats.moves_sent),
        "moves_sent_per_s": load(&stats.moves_sent) as f64 / seconds,
        "moves_accepted": accepted,
        "moves_accepted_per_s": accepted as f64 / seconds,
        "moves_rejected": load(&stats.moves_rejected),
        "late_ticks": load(&stats.late_ticks),
        "deliveries": deliveries,
        "deliveries_per_s": deliveries as f64 / seconds,
        "move_to_ack_us": summary(&stats.ack.sorted()),
        "move_to_opponent_us": summary(&stats.opponent.sorted()),
        "move_to_spectator_us": summary(&stats.spectator.sorted()),
        "errors": load(&stats.errors),
        "disconnects": load(&stats.disconnects),
        "server": server,
        "load_average_start": outcome.start.load_average,
        "load_average_end": outcome.end.load_average,
    });
    if let Value::Object(fields) = &mut line {
        fields.extend(outcome.extra.clone());
    }
    line
}

/// The same run for a person, on several lines.
pub fn human_summary(scenario: &str, stats: &Stats, line: &Value, outcome: &Outcome) -> String {
    let seconds = outcome.window.seconds();
    let mut text = format!(
        "patience-load {scenario}: {:.1} s measured\n\
         moves/s sent {:.1}, accepted {:.1} (sent {}, accepted {}, rejected {}, late ticks {}); deliveries/s {:.1}\n\
         move->ack        {}\n\
         move->opponent   {}\n\
         move->spectator  {}\n\
         errors {}, disconnects {}\n",
        seconds,
        load(&stats.moves_sent) as f64 / seconds,
        load(&stats.moves_accepted) as f64 / seconds,
        load(&stats.moves_sent),
        load(&stats.moves_accepted),
        load(&stats.moves_rejected),
        load(&stats.late_ticks),
        load(&stats.deliveries) as f64 / seconds,
        human(&stats.ack.sorted()),
        human(&stats.opponent.sorted()),
        human(&stats.spectator.sorted()),
        load(&stats.errors),
        load(&stats.disconnects),
    );
    if let Some(server) = line.get("server").filter(|server| !server.is_null()) {
        text.push_str(&format!("server {server}\n"));
    }
    text.push_str(&format!(
        "load average {:?} -> {:?}\n",
        outcome.start.load_average, outcome.end.load_average
    ));
    for note in &outcome.notes {
        text.push_str(note);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_the_smallest_values_covering_the_fraction() {
        let hundred: Vec<u64> = (1..=100).collect();
        let thousand: Vec<u64> = (1..=1000).collect();
        for (list, fraction, expected) in [
            (&hundred[..], 0.50, Some(50)),
            (&hundred[..], 0.99, Some(99)),
            (&hundred[..], 0.999, Some(100)),
            (&hundred[..], 1.0, Some(100)),
            (&thousand[..], 0.999, Some(999)),
            (&[7][..], 0.5, Some(7)),
            (&[][..], 0.5, None),
        ] {
            assert_eq!(
                percentile(list, fraction),
                expected,
                "{fraction} of {} values",
                list.len()
            );
        }
    }

    #[test]
    fn proc_files_are_read() {
        // A command name with spaces and a parenthesis, as a process may
        // choose; utime 1234 and stime 56 are fields 14 and 15.
        let stat = "4242 (patience (x) y) S 1 4242 4242 0 -1 4194560 5000 0 0 0 1234 56 0 0 20 0 8 0 \
                    100 2000000 3000 18446744073709551615";
        assert_eq!(cpu_ticks(stat), Some(1290));
        assert_eq!(cpu_ticks("4242 (short) S 1"), None);
        // A thread's stat has the same fields; its start time is field 22.
        assert_eq!(
            thread_sample("tokio-rt-worker\n", stat),
            Some(ThreadSample {
                name: "tokio-rt-worker".to_string(),
                started: 100,
                cpu_ticks: 1290,
            })
        );
        assert_eq!(thread_sample("short\n", "4242 (short) S 1"), None);
        let status =
            "Name:\tpatience-server\nVmPeak:\t  99999 kB\nVmRSS:\t   18432 kB\nThreads:\t8\n";
        assert_eq!(rss_bytes(status), Some(18432 * 1024));
        assert_eq!(rss_bytes("Name:\tkthreadd\n"), None);
        assert_eq!(
            load_average("2.46 2.39 2.61 3/456 6057\n"),
            Some([2.46, 2.39, 2.61])
        );
        assert_eq!(load_average(""), None);
    }

    /// Threads as `(tid, name, started, cpu_ticks)`.
    fn threads(list: &[(u32, &str, u64, u64)]) -> Threads {
        list.iter()
            .map(|&(tid, name, started, cpu_ticks)| {
                (
                    tid,
                    ThreadSample {
                        name: name.to_string(),
                        started,
                        cpu_ticks,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn thread_cpu_is_grouped_by_name_and_counts_threads_that_came_and_went() {
        let start = threads(&[
            (1, "patience-server", 5, 40),
            (2, "tokio-rt-worker", 6, 100),
            (3, "tokio-rt-worker", 6, 200),
            (4, "deal-prover", 7, 1_000),
            // Gone by the end.
            (5, "tokio-runtime-w", 9, 30),
            // Its id is reused by a later thread.
            (6, "tokio-runtime-w", 9, 50),
        ]);
        let end = threads(&[
            (1, "patience-server", 5, 41),
            (2, "tokio-rt-worker", 6, 150),
            (3, "tokio-rt-worker", 6, 260),
            (4, "deal-prover", 7, 1_500),
            (6, "tokio-runtime-w", 300, 4),
            (7, "database", 310, 12),
        ]);
        let cpu = thread_cpu(&start, &end);
        let expected: BTreeMap<String, u64> = [
            ("patience-server", 1),
            ("tokio-rt-worker", 50 + 60),
            ("deal-prover", 500),
            ("tokio-runtime-w", 4),
            ("database", 12),
        ]
        .into_iter()
        .map(|(name, ticks)| (name.to_string(), ticks))
        .collect();
        assert_eq!(cpu.ticks_by_name, expected);
        assert_eq!((cpu.appeared, cpu.vanished), (2, 2));
        let same = thread_cpu(&start, &start);
        assert_eq!((same.appeared, same.vanished), (0, 0));
        assert!(same.ticks_by_name.values().all(|&ticks| ticks == 0));
    }

    #[test]
    fn the_server_costs_are_per_accepted_move_and_per_delivery() {
        let stats = Stats::default();
        stats.moves_accepted.store(400, Ordering::Relaxed);
        stats.deliveries.store(2_000, Ordering::Relaxed);
        stats.ack.record(Duration::from_micros(250));
        let probe = Probe {
            pid: Some(1),
            ticks_per_second: 100,
        };
        let from = Instant::now();
        let outcome = Outcome {
            window: Window {
                from,
                until: from + Duration::from_secs(2),
            },
            start: Sample {
                cpu_ticks: Some(1_000),
                rss_bytes: Some(1 << 20),
                load_average: Some([1.0, 1.0, 1.0]),
                threads: Some(threads(&[
                    (1, "tokio-rt-worker", 1, 500),
                    (2, "deal-prover", 1, 400),
                ])),
            },
            end: Sample {
                cpu_ticks: Some(1_006),
                rss_bytes: Some(2 << 20),
                load_average: Some([1.5, 1.0, 1.0]),
                threads: Some(threads(&[
                    (1, "tokio-rt-worker", 1, 504),
                    (2, "deal-prover", 1, 402),
                ])),
            },
            extra: Map::from_iter([("rooms_seen".to_string(), json!(3))]),
            notes: Vec::new(),
        };
        let line = report("race", json!({"rooms": 2}), &stats, &probe, &outcome);
        let server = &line["server"];
        assert_eq!(server["cpu_s"], json!(0.06));
        assert_eq!(server["cpu_us_per_accepted_move"], json!(150.0));
        assert_eq!(server["cpu_us_per_delivery"], json!(30.0));
        // 6 ticks in all, 2 of them the deal prover's: 40 ms over 400 moves.
        assert_eq!(
            server["cpu_us_per_accepted_move_without_deal_prover"],
            json!(100.0)
        );
        assert_eq!(
            server["cpu_s_by_thread"],
            json!({"tokio-rt-worker": 0.04, "deal-prover": 0.02})
        );
        assert_eq!(server["threads_end"], json!(2));
        assert_eq!(server["threads_vanished"], json!(0));
        assert_eq!(server["rss_bytes_end"], json!(2 << 20));
        assert_eq!(line["moves_accepted_per_s"], json!(200.0));
        assert_eq!(line["move_to_ack_us"]["p99_9"], json!(250));
        assert_eq!(line["move_to_opponent_us"]["p50"], Value::Null);
        assert_eq!(line["rooms_seen"], json!(3));
        assert_eq!(line["settings"]["rooms"], json!(2));
    }
}
