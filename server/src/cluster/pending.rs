//! The writes to Redis a node owes for its rooms, without I/O: a resume
//! token's pointer to its room (`token:{hash}` → code), forgetting one,
//! and giving up a room's lease. The [`cluster`](super) shell puts every
//! such write here, flushes them in batches and hands back how each batch
//! went; so a write that fails (Redis down, or refusing writes) is not
//! lost but tried again, and these rules are tested without a Redis or a
//! clock.
//!
//! Writes are keyed by what they write, and the later write of a key
//! replaces the earlier one: a forget after a set of the same token
//! cancels the set (and a set after a forget the forget), a second
//! release of a code is one release. Each key's write carries a version,
//! so that a batch that succeeds takes out only the writes it carried: one
//! that replaced them while the batch was on its way stays to be flushed
//! after it, in that order.
//!
//! What is left out of a batch, because writing it is no longer right or
//! no longer needed:
//! - a token's set whose room the node no longer holds: the room closed at
//!   shutdown or lost its lease, and whichever node runs the race next
//!   sets the same pointer itself (a room that closed while held forgets
//!   its tokens, which replaced their sets);
//! - a release pending for longer than a lease: the lease, no longer
//!   renewed since it was given up, has lapsed by itself.
//!
//! A release is a compare-and-delete of a lease that still names this
//! node, so one flushed late never deletes another node's lease; and one
//! of a code this node holds again is cancelled when it takes the code
//! ([`PendingWrites::cancel_release`]).
//!
//! ## Bound
//! Sets are bounded by the seats of the rooms the node holds, releases by
//! the rooms it gave up within a lease (and no room opens while Redis
//! refuses writes, as its code's claim is one). Forgets are the one kind
//! that piles up while Redis is gone (players leaving and rooms closing),
//! so at [`PENDING_CAP`] writes a new forget is given up, and a new set or
//! release pushes out the oldest forget: the pointer a forget leaves
//! lapses by itself within a day, and it can only send a resume of a token
//! that no longer opens a seat to a node that refuses it, as the node the
//! token came from would.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::secrets::TokenHash;

/// Writes held at most: well above the seats and rooms a node holds (5 000
/// rooms by default), so that only forgets are ever given up.
pub const PENDING_CAP: usize = 65_536;

/// Writes sent to Redis in one pipelined batch.
pub const FLUSH_BATCH: usize = 256;

/// One write to Redis the node owes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// `token:{hash}` → `code`: the token opens a seat of the room `code`.
    SetToken {
        /// The token's SHA-256.
        hash: TokenHash,
        /// The room's code.
        code: Arc<str>,
    },
    /// Deletes `token:{hash}`: the token opens no seat any more.
    ForgetToken {
        /// The token's SHA-256.
        hash: TokenHash,
    },
    /// Deletes `room:{code}` if it still names this node.
    Release {
        /// The room's code.
        code: Arc<str>,
    },
}

/// What a write writes: the later write of a key replaces the earlier.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Token(TokenHash),
    Room(Arc<str>),
}

impl Write {
    fn key(&self) -> Key {
        match self {
            Write::SetToken { hash, .. } | Write::ForgetToken { hash } => Key::Token(*hash),
            Write::Release { code } => Key::Room(Arc::clone(code)),
        }
    }
}

#[derive(Debug)]
struct Entry {
    write: Write,
    version: u64,
    /// When it was put here, on the node's clock.
    since_ms: u64,
    /// Whether a flush of it failed already (it is counted once).
    failed: bool,
}

/// A write taken out for a flush, with the version it had then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The write to make.
    pub write: Write,
    version: u64,
}

/// Every write the node owes, at most one per key.
#[derive(Debug)]
pub struct PendingWrites {
    lease_ms: u64,
    cap: usize,
    entries: BTreeMap<Key, Entry>,
    /// The pending forgets by version, oldest first: those given up first.
    forgets: BTreeSet<(u64, TokenHash)>,
    next_version: u64,
}

impl PendingWrites {
    /// None pending yet, for leases of `lease_ms`, holding at most `cap`.
    pub fn new(lease_ms: u64, cap: usize) -> PendingWrites {
        PendingWrites {
            lease_ms,
            cap: cap.max(1),
            entries: BTreeMap::new(),
            forgets: BTreeSet::new(),
            next_version: 0,
        }
    }

    /// Writes pending.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds `write` at `now_ms`, replacing the pending write of its key;
    /// answers the write given up, if one was: at the cap, `write` itself
    /// if it is a forget (or nothing pending is one), else the oldest
    /// forget, to make room.
    pub fn push(&mut self, write: Write, now_ms: u64) -> Option<Write> {
        let key = write.key();
        let mut given_up = None;
        if !self.entries.contains_key(&key) && self.entries.len() >= self.cap {
            match self.forgets.first().copied() {
                Some((_, hash)) if !matches!(write, Write::ForgetToken { .. }) => {
                    given_up = self.remove(&Key::Token(hash)).map(|entry| entry.write);
                }
                _ => return Some(write),
            }
        }
        self.remove(&key);
        let version = self.next_version;
        self.next_version += 1;
        if let Write::ForgetToken { hash } = &write {
            self.forgets.insert((version, *hash));
        }
        self.entries.insert(
            key,
            Entry {
                write,
                version,
                since_ms: now_ms,
                failed: false,
            },
        );
        given_up
    }

    /// Drops the pending release of `code`, as the node holds it again:
    /// flushed now, it would delete the node's own lease. Whether one was.
    pub fn cancel_release(&mut self, code: &str) -> bool {
        self.remove(&Key::Room(Arc::from(code))).is_some()
    }

    fn remove(&mut self, key: &Key) -> Option<Entry> {
        let entry = self.entries.remove(key)?;
        if let Write::ForgetToken { hash } = &entry.write {
            self.forgets.remove(&(entry.version, *hash));
        }
        Some(entry)
    }

    /// Up to `size` writes to flush at `now_ms`, leaving them pending until
    /// [`flushed`](Self::flushed). First leaves out (for good) the ones no
    /// longer to be written: sets of tokens of rooms `holds` says the node
    /// does not hold, and releases pending for longer than a lease.
    pub fn batch(&mut self, size: usize, now_ms: u64, holds: impl Fn(&str) -> bool) -> Vec<Taken> {
        let stale: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, entry)| match &entry.write {
                Write::SetToken { code, .. } => !holds(code),
                Write::Release { .. } => now_ms.saturating_sub(entry.since_ms) >= self.lease_ms,
                Write::ForgetToken { .. } => false,
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in &stale {
            self.remove(key);
        }
        self.entries
            .values()
            .take(size.max(1))
            .map(|entry| Taken {
                write: entry.write.clone(),
                version: entry.version,
            })
            .collect()
    }

    /// Takes out the writes of `batch`, which reached Redis, except those
    /// replaced since it was taken.
    pub fn flushed(&mut self, batch: &[Taken]) {
        for taken in batch {
            let key = taken.write.key();
            if self
                .entries
                .get(&key)
                .is_some_and(|entry| entry.version == taken.version)
            {
                self.remove(&key);
            }
        }
    }

    /// Records that `batch` failed: its writes stay. Answers how many of
    /// them failed for the first time.
    pub fn failed(&mut self, batch: &[Taken]) -> usize {
        let mut first_failures = 0;
        for taken in batch {
            if let Some(entry) = self.entries.get_mut(&taken.write.key())
                && entry.version == taken.version
                && !entry.failed
            {
                entry.failed = true;
                first_failures += 1;
            }
        }
        first_failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE_MS: u64 = 9_000;

    /// A write from compact text: `set T1 ROOM`, `forget T1`, `release ROOM`,
    /// a token named by its first byte.
    fn write(text: &str) -> Write {
        let words: Vec<&str> = text.split_whitespace().collect();
        let hash = |name: &str| {
            let mut hash = [0; 32];
            hash[0] = name.trim_start_matches('T').parse().expect("a token T<n>");
            hash
        };
        match words.as_slice() {
            ["set", token, code] => Write::SetToken {
                hash: hash(token),
                code: Arc::from(*code),
            },
            ["forget", token] => Write::ForgetToken { hash: hash(token) },
            ["release", code] => Write::Release {
                code: Arc::from(*code),
            },
            _ => panic!("not a write: {text}"),
        }
    }

    fn text(write: &Write) -> String {
        match write {
            Write::SetToken { hash, code } => format!("set T{} {code}", hash[0]),
            Write::ForgetToken { hash } => format!("forget T{}", hash[0]),
            Write::Release { code } => format!("release {code}"),
        }
    }

    fn texts(batch: &[Taken]) -> Vec<String> {
        batch.iter().map(|taken| text(&taken.write)).collect()
    }

    fn pending_of(writes: &[&str], cap: usize) -> PendingWrites {
        let mut pending = PendingWrites::new(LEASE_MS, cap);
        for (at, each) in writes.iter().enumerate() {
            pending.push(write(each), at as u64);
        }
        pending
    }

    fn everything(pending: &mut PendingWrites) -> Vec<String> {
        texts(&pending.batch(usize::MAX, 0, |_| true))
    }

    #[test]
    fn the_later_write_of_a_key_wins() {
        let check = |writes: &[&str], expected: &[&str]| {
            let mut pending = pending_of(writes, PENDING_CAP);
            assert_eq!(everything(&mut pending), expected, "{writes:?}");
            assert_eq!(pending.len(), expected.len(), "{writes:?}");
        };
        check(&["set T1 AAA", "forget T1"], &["forget T1"]);
        check(&["forget T1", "set T1 AAA"], &["set T1 AAA"]);
        check(&["set T1 AAA", "set T1 BBB"], &["set T1 BBB"]);
        check(&["set T1 AAA", "forget T1", "set T1 AAA"], &["set T1 AAA"]);
        check(&["release AAA", "release AAA"], &["release AAA"]);
        // Different keys do not touch: a token's key and a room's are apart
        // even when the token points at the room.
        check(
            &["set T1 AAA", "release AAA", "forget T2"],
            &["set T1 AAA", "forget T2", "release AAA"],
        );
    }

    #[test]
    fn taking_a_code_again_cancels_its_pending_release() {
        let mut pending = pending_of(&["release AAA", "release BBB"], PENDING_CAP);
        assert!(pending.cancel_release("AAA"));
        assert!(!pending.cancel_release("AAA"), "cancelled once");
        assert!(!pending.cancel_release("CCC"));
        assert_eq!(everything(&mut pending), ["release BBB"]);
    }

    #[test]
    fn a_full_set_gives_up_the_oldest_forget_and_nothing_else() {
        // (writes, cap, the write pushed last, what it gave up, left after)
        let check =
            |writes: &[&str], cap: usize, last: &str, given_up: Option<&str>, left: &[&str]| {
                let mut pending = pending_of(writes, cap);
                let answer = pending.push(write(last), 99);
                assert_eq!(
                    answer.as_ref().map(text).as_deref(),
                    given_up,
                    "{writes:?} + {last}"
                );
                assert_eq!(everything(&mut pending), left, "{writes:?} + {last}");
                assert!(pending.len() <= cap);
            };
        check(
            &["forget T1", "forget T2"],
            2,
            "set T3 AAA",
            Some("forget T1"),
            &["forget T2", "set T3 AAA"],
        );
        check(
            &["forget T2", "forget T1"],
            2,
            "release AAA",
            Some("forget T2"),
            &["forget T1", "release AAA"],
        );
        // A new forget does not push out an older one: it is the one given up.
        check(
            &["forget T1", "set T2 AAA"],
            2,
            "forget T3",
            Some("forget T3"),
            &["forget T1", "set T2 AAA"],
        );
        // Nothing to give up but sets and releases: the new write does not fit.
        check(
            &["set T1 AAA", "release AAA"],
            2,
            "set T2 AAA",
            Some("set T2 AAA"),
            &["set T1 AAA", "release AAA"],
        );
        // A write to a key already pending always fits.
        check(
            &["set T1 AAA", "release AAA"],
            2,
            "forget T1",
            None,
            &["forget T1", "release AAA"],
        );
        // A forget that replaced a set, then a set: the forget's place in
        // the age order goes with it.
        check(
            &["forget T1", "set T1 AAA", "forget T2"],
            2,
            "release BBB",
            Some("forget T2"),
            &["set T1 AAA", "release BBB"],
        );
    }

    #[test]
    fn a_flush_takes_out_what_it_wrote_and_nothing_written_since() {
        let mut pending = pending_of(&["set T1 AAA", "set T2 AAA", "release BBB"], PENDING_CAP);
        let batch = pending.batch(2, 0, |_| true);
        assert_eq!(texts(&batch), ["set T1 AAA", "set T2 AAA"]);
        // While the batch is on its way, T2's room closes.
        pending.push(write("forget T2"), 1);
        pending.flushed(&batch);
        assert_eq!(everything(&mut pending), ["forget T2", "release BBB"]);
    }

    #[test]
    fn a_failed_flush_keeps_everything_and_counts_each_write_once() {
        let mut pending = pending_of(&["set T1 AAA", "forget T2"], PENDING_CAP);
        let batch = pending.batch(FLUSH_BATCH, 0, |_| true);
        assert_eq!(pending.failed(&batch), 2);
        assert_eq!(pending.len(), 2);
        let again = pending.batch(FLUSH_BATCH, 0, |_| true);
        assert_eq!(again, batch, "the same writes are tried again");
        assert_eq!(
            pending.failed(&again),
            0,
            "counted at their first failure only"
        );
        // A write that replaced a failed one is new: its failure counts.
        pending.push(write("forget T1"), 1);
        let third = pending.batch(FLUSH_BATCH, 0, |_| true);
        assert_eq!(pending.failed(&third), 1);
        pending.flushed(&third);
        assert!(pending.is_empty());
    }

    #[test]
    fn a_batch_leaves_out_sets_of_rooms_not_held_and_releases_older_than_a_lease() {
        // (writes pushed at 0, 1, 2…, rooms held, now, the batch)
        let check = |writes: &[&str], held: &[&str], now_ms: u64, expected: &[&str]| {
            let mut pending = pending_of(writes, PENDING_CAP);
            let batch = pending.batch(FLUSH_BATCH, now_ms, |code| held.contains(&code));
            assert_eq!(
                texts(&batch),
                expected,
                "{writes:?} held {held:?} at {now_ms}"
            );
            assert_eq!(pending.len(), expected.len(), "left out for good");
        };
        check(&["set T1 AAA", "set T2 BBB"], &["AAA"], 0, &["set T1 AAA"]);
        // A forget does not depend on the room: it is owed either way.
        check(&["forget T1"], &[], 0, &["forget T1"]);
        // Released at 0 and 1; the lease given up at 0 has lapsed at 9 000.
        check(
            &["release AAA", "release BBB"],
            &[],
            LEASE_MS - 1,
            &["release AAA", "release BBB"],
        );
        check(
            &["release AAA", "release BBB"],
            &[],
            LEASE_MS,
            &["release BBB"],
        );
    }

    #[test]
    fn batches_are_bounded_and_drain_in_turn() {
        let writes: Vec<String> = (1..=5).map(|token| format!("forget T{token}")).collect();
        let writes: Vec<&str> = writes.iter().map(String::as_str).collect();
        let mut pending = pending_of(&writes, PENDING_CAP);
        let mut sizes = Vec::new();
        loop {
            let batch = pending.batch(2, 0, |_| true);
            if batch.is_empty() {
                break;
            }
            sizes.push(batch.len());
            pending.flushed(&batch);
        }
        assert_eq!(sizes, [2, 2, 1]);
    }
}
