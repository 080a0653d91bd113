//! The per-address limit on registering accounts: a token bucket per
//! source address, in a map of bounded size.
//!
//! Accounts are free, and each fresh one is another attempt at the daily
//! deal; the limit makes a crowd of accounts cost addresses and hours. An
//! IPv6 address counts by its /64 prefix (one host usually holds a whole
//! /64), an IPv4-mapped IPv6 address as the IPv4 address it is.
//!
//! The map never holds more than its capacity: a new address first makes
//! room by forgetting every bucket that has refilled (a full bucket is what
//! a forgotten address gets anyway), then, if none has, the bucket heard
//! from least recently. The guard is a plain mutex, never held across an
//! `.await`. Time is the caller's [`Clock`](crate::clock::Clock) reading.
//!
//! The registration limit outlives a restart: [`SignupLimiter::take_counted`]
//! returns the bucket as it stands after a counted registration, the caller
//! stores it, and a starting server [`restore`](SignupLimiter::restore)s the
//! stored buckets. A bucket needs writing only when a registration is
//! counted: a refused one leaves it as the last write put it, since its
//! refill is a function of time alone.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;

const HOUR_MS: f64 = 60.0 * 60.0 * 1000.0;

/// Registrations allowed per source address.
#[derive(Debug)]
pub struct SignupLimiter {
    per_hour: f64,
    burst: f64,
    capacity: usize,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    updated_ms: u64,
}

/// One address's bucket, as the store keeps it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SavedBucket {
    /// The address that stands for its /64 or its IPv4 address.
    pub source: IpAddr,
    /// Registrations left, before refilling from `updated_ms`.
    pub tokens: f64,
    /// When the bucket last changed: milliseconds, server clock.
    pub updated_ms: u64,
}

/// The address that stands for `address` in the map.
fn source_of(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(prefix))
        }
    }
}

impl SignupLimiter {
    /// `per_hour` registrations per address on average, `burst` at once,
    /// `capacity` addresses remembered.
    pub fn new(per_hour: u32, burst: u32, capacity: usize) -> SignupLimiter {
        SignupLimiter {
            per_hour: f64::from(per_hour.max(1)),
            burst: f64::from(burst.max(1)),
            capacity: capacity.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    fn refilled(&self, bucket: Bucket, now_ms: u64) -> f64 {
        let elapsed = now_ms.saturating_sub(bucket.updated_ms) as f64;
        (bucket.tokens + elapsed * self.per_hour / HOUR_MS).min(self.burst)
    }

    /// Takes one registration for `address` at `now_ms`; `Err` holds the
    /// milliseconds until the next one is allowed.
    pub fn take(&self, address: IpAddr, now_ms: u64) -> Result<(), u64> {
        self.take_counted(address, now_ms).map(|_| ())
    }

    /// Puts back buckets kept from before a restart, the most recent first,
    /// as many as the map holds; a bucket already in the map stays.
    pub fn restore(&self, saved: impl IntoIterator<Item = SavedBucket>) {
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for bucket in saved {
            if buckets.len() >= self.capacity {
                break;
            }
            buckets.entry(source_of(bucket.source)).or_insert(Bucket {
                tokens: bucket.tokens.clamp(0.0, self.burst),
                updated_ms: bucket.updated_ms,
            });
        }
    }

    /// As [`take`](SignupLimiter::take), and when the registration is
    /// counted, the bucket as it now stands, for the store.
    pub fn take_counted(&self, address: IpAddr, now_ms: u64) -> Result<SavedBucket, u64> {
        let source = source_of(address);
        // A poisoned guard only means another connection panicked while
        // holding it; the map itself is always whole.
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !buckets.contains_key(&source) && buckets.len() >= self.capacity {
            buckets.retain(|_, bucket| self.refilled(*bucket, now_ms) < self.burst);
            if buckets.len() >= self.capacity {
                let oldest = buckets
                    .iter()
                    .min_by_key(|(_, bucket)| bucket.updated_ms)
                    .map(|(address, _)| *address);
                if let Some(oldest) = oldest {
                    buckets.remove(&oldest);
                }
            }
        }
        let bucket = buckets.entry(source).or_insert(Bucket {
            tokens: self.burst,
            updated_ms: now_ms,
        });
        let tokens = self.refilled(*bucket, now_ms);
        bucket.updated_ms = now_ms.max(bucket.updated_ms);
        if tokens >= 1.0 {
            bucket.tokens = tokens - 1.0;
            Ok(SavedBucket {
                source,
                tokens: bucket.tokens,
                updated_ms: bucket.updated_ms,
            })
        } else {
            bucket.tokens = tokens;
            let wait = ((1.0 - tokens) * HOUR_MS / self.per_hour).ceil();
            Err(wait as u64)
        }
    }

    /// Addresses remembered now.
    pub fn len(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// Whether no address is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: u64 = 60 * 1000;

    fn address(text: &str) -> IpAddr {
        text.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }

    /// Takes a registration for each `(address, minute)` in turn and
    /// compares the answers: `true` allowed, `false` refused.
    fn check(limiter: &SignupLimiter, attempts: &[(&str, u64)], expected: &[bool]) {
        let answers: Vec<bool> = attempts
            .iter()
            .map(|&(text, minute)| limiter.take(address(text), minute * MINUTE).is_ok())
            .collect();
        assert_eq!(answers, expected, "{attempts:?}");
    }

    #[test]
    fn a_burst_then_the_hourly_rate() {
        // 6 an hour is one every 10 minutes, after a burst of 3.
        let limiter = SignupLimiter::new(6, 3, 100);
        check(
            &limiter,
            &[
                ("10.0.0.1", 0),
                ("10.0.0.1", 0),
                ("10.0.0.1", 0),
                ("10.0.0.1", 0),
                ("10.0.0.2", 0),
                ("10.0.0.1", 9),
                ("10.0.0.1", 10),
                ("10.0.0.1", 11),
            ],
            &[true, true, true, false, true, false, true, false],
        );
        assert_eq!(
            limiter.take(address("10.0.0.1"), 11 * MINUTE),
            Err(9 * MINUTE)
        );
    }

    #[test]
    fn an_ipv6_host_counts_by_its_prefix_and_mapped_ipv4_as_ipv4() {
        let limiter = SignupLimiter::new(1, 1, 100);
        check(
            &limiter,
            &[
                ("2001:db8:1:2::1", 0),
                ("2001:db8:1:2:ffff::9", 0),
                ("2001:db8:1:3::1", 0),
                ("192.0.2.7", 0),
                ("::ffff:192.0.2.7", 0),
            ],
            &[true, false, true, true, false],
        );
    }

    #[test]
    fn restored_buckets_limit_as_before_the_restart() {
        let before = SignupLimiter::new(6, 3, 100);
        let mut saved = Vec::new();
        for _ in 0..3 {
            saved.extend(before.take_counted(address("10.0.0.1"), 0).ok());
        }
        saved.extend(before.take_counted(address("2001:db8:1:2::1"), 0).ok());
        assert_eq!(saved.len(), 4);
        // The store keeps the last bucket of each address.
        saved.reverse();
        saved.dedup_by_key(|bucket| bucket.source);
        let after = SignupLimiter::new(6, 3, 100);
        after.restore(saved);
        check(
            &after,
            &[
                ("10.0.0.1", 1),
                ("10.0.0.2", 1),
                ("2001:db8:1:2::9", 1),
                ("2001:db8:1:2::9", 1),
                ("2001:db8:1:2::9", 1),
                ("10.0.0.1", 10),
            ],
            &[false, true, true, true, false, true],
        );
    }

    #[test]
    fn the_map_stays_within_its_capacity() {
        let limiter = SignupLimiter::new(60, 2, 3);
        for (index, host) in (1..=50).enumerate() {
            let text = format!("10.0.1.{host}");
            assert!(limiter.take(address(&text), index as u64).is_ok());
            assert!(limiter.len() <= 3, "{} addresses", limiter.len());
        }
        // An address still short of tokens is kept over refilled ones.
        check(
            &limiter,
            &[("10.0.2.1", 100), ("10.0.2.1", 100)],
            &[true, true],
        );
        check(
            &limiter,
            &[("10.0.3.1", 100), ("10.0.2.1", 100)],
            &[true, false],
        );
    }
}
