//! The server's clock, as a value every timed thing reads instead of the
//! system's: real in production, virtual in tests.
//!
//! Rooms (countdown, time limit, grace, linger), the connections' move
//! stamps and the daily deal (an account's age, a day that closes a day and
//! an hour after it begins, the gaps between moves) all read one [`Clock`]
//! and sleep on it. A test that reads the system's clock can only wait, and
//! fails on a loaded machine; a virtual clock moves only when the test says
//! so ([`Clock::advance`]), and everything sleeping on it wakes then. Clones
//! of a virtual clock share one time.
//!
//! Tokio's own paused time is not used: with real sockets and the database
//! and solver threads, the runtime is often idle while work is in flight,
//! and auto-advancing would fire deadlines the test never asked for.
//!
//! The system clock reads Unix milliseconds once, at its creation, and from
//! then on counts the monotonic clock: time never goes backwards under a
//! room, whatever the wall clock does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// Unix milliseconds, from the system or from a test.
#[derive(Clone, Debug)]
pub struct Clock {
    source: Source,
}

#[derive(Clone, Debug)]
enum Source {
    /// The wall clock at `base`, counted on from there by the monotonic clock.
    System { base_unix_ms: u64, base: Instant },
    /// A time shared by clones; sleepers watch it.
    Virtual(Arc<watch::Sender<u64>>),
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::system()
    }
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Clock {
        Clock {
            source: Source::System {
                base_unix_ms: system_now_ms(),
                base: Instant::now(),
            },
        }
    }

    /// A virtual clock that reads `now_ms` until set or advanced.
    pub fn virtual_at(now_ms: u64) -> Clock {
        Clock {
            source: Source::Virtual(Arc::new(watch::Sender::new(now_ms))),
        }
    }

    /// Whether this clock moves only when told.
    pub fn is_virtual(&self) -> bool {
        matches!(self.source, Source::Virtual(_))
    }

    /// Unix milliseconds now.
    pub fn now_ms(&self) -> u64 {
        match &self.source {
            Source::System { base_unix_ms, base } => base_unix_ms
                .saturating_add(u64::try_from(base.elapsed().as_millis()).unwrap_or(u64::MAX)),
            Source::Virtual(now) => *now.borrow(),
        }
    }

    /// Moves a virtual clock forward by `ms`, waking whoever sleeps until
    /// then; the system's clock ignores it.
    pub fn advance(&self, ms: u64) {
        if let Source::Virtual(now) = &self.source {
            now.send_modify(|now| *now = now.saturating_add(ms));
        }
    }

    /// Sets a virtual clock to `now_ms`; the system's clock ignores it.
    pub fn set(&self, now_ms: u64) {
        if let Source::Virtual(now) = &self.source {
            now.send_replace(now_ms);
        }
    }

    /// Returns once the clock reads `deadline_ms` or later.
    ///
    /// Cancel safe: it holds nothing but a timer or a watch.
    pub async fn sleep_until(&self, deadline_ms: u64) {
        match &self.source {
            Source::System { .. } => loop {
                let now = self.now_ms();
                if now >= deadline_ms {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(deadline_ms - now)).await;
            },
            Source::Virtual(now) => {
                let mut watching = now.subscribe();
                // The sender lives as long as `self`, so this never fails
                // while anyone can still move the clock.
                let _ = watching.wait_for(|&now| now >= deadline_ms).await;
            }
        }
    }

    /// Returns after `ms` milliseconds of this clock.
    ///
    /// Cancel safe, as [`Clock::sleep_until`].
    pub async fn sleep(&self, ms: u64) {
        self.sleep_until(self.now_ms().saturating_add(ms)).await;
    }
}

/// Two clocks are equal when they read the same time source (so that
/// [`Config`](crate::Config) stays comparable): every system clock is the
/// system's.
impl PartialEq for Clock {
    fn eq(&self, other: &Clock) -> bool {
        match (&self.source, &other.source) {
            (Source::System { .. }, Source::System { .. }) => true,
            (Source::Virtual(one), Source::Virtual(other)) => Arc::ptr_eq(one, other),
            _ => false,
        }
    }
}

impl Eq for Clock {}

/// The system's wall clock in Unix milliseconds (0 before 1970).
fn system_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_virtual_clock_moves_only_when_told_and_its_clones_share_it() {
        let clock = Clock::virtual_at(1_000);
        let clone = clock.clone();
        assert_eq!(clock.now_ms(), 1_000);
        clone.advance(250);
        assert_eq!(clock.now_ms(), 1_250);
        clock.set(5);
        assert_eq!(clone.now_ms(), 5);
        assert_eq!(clock, clone);
        assert_ne!(clock, Clock::virtual_at(5));
    }

    #[tokio::test]
    async fn a_sleeper_on_a_virtual_clock_wakes_when_the_time_comes_and_not_before() {
        let clock = Clock::virtual_at(1_000);
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep_until(1_500).await }
        });
        clock.advance(499);
        // Let the sleeper see 1_499; it must still be asleep.
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(1);
        sleeper.await.expect("the sleeper wakes");
        // A deadline already passed returns at once.
        clock.sleep_until(0).await;
    }

    #[test]
    fn the_system_clock_ignores_tests() {
        let clock = Clock::system();
        let before = clock.now_ms();
        clock.set(0);
        assert!(clock.now_ms() >= before);
        assert_eq!(clock, Clock::default());
    }
}
