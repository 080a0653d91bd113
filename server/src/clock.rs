//! The server's wall clock, as a value the daily path (and the end time of
//! every stored race) reads instead of the system's: real in production,
//! virtual in tests.
//!
//! Daily deals turn on dates (an account's age, a day that closes a day and
//! an hour after it begins, the gaps between moves), so a test that could
//! only read the system's clock would have to wait a day. A [`Clock`] is
//! either the system's or a shared virtual time that tests set and advance;
//! clones of a virtual clock share one time. The runtime's timers (rate
//! limits, heartbeats, the rooms' deadlines) stay on tokio's clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Unix milliseconds, from the system or from a test.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// `None`: the system's clock. `Some`: a virtual time shared by clones.
    virtual_ms: Option<Arc<AtomicU64>>,
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Clock {
        Clock { virtual_ms: None }
    }

    /// A virtual clock that reads `now_ms` until set or advanced.
    pub fn virtual_at(now_ms: u64) -> Clock {
        Clock {
            virtual_ms: Some(Arc::new(AtomicU64::new(now_ms))),
        }
    }

    /// Unix milliseconds now.
    pub fn now_ms(&self) -> u64 {
        match &self.virtual_ms {
            Some(now) => now.load(Ordering::SeqCst),
            None => system_now_ms(),
        }
    }

    /// Moves a virtual clock forward by `ms`; the system's clock ignores it.
    pub fn advance(&self, ms: u64) {
        if let Some(now) = &self.virtual_ms {
            now.fetch_add(ms, Ordering::SeqCst);
        }
    }

    /// Sets a virtual clock to `now_ms`; the system's clock ignores it.
    pub fn set(&self, now_ms: u64) {
        if let Some(now) = &self.virtual_ms {
            now.store(now_ms, Ordering::SeqCst);
        }
    }
}

/// Two clocks are equal when they read the same time source (so that
/// [`Config`](crate::Config) stays comparable).
impl PartialEq for Clock {
    fn eq(&self, other: &Clock) -> bool {
        match (&self.virtual_ms, &other.virtual_ms) {
            (None, None) => true,
            (Some(one), Some(other)) => Arc::ptr_eq(one, other),
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

    #[test]
    fn the_system_clock_ignores_tests() {
        let clock = Clock::system();
        let before = clock.now_ms();
        clock.set(0);
        assert!(clock.now_ms() >= before);
        assert_eq!(clock, Clock::default());
    }
}
