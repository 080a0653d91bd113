//! The lease bookkeeping of one node, without I/O: which room codes and
//! quick-race advertisements it holds, which to renew together, what a
//! renewal's answer means, whether the node still counts as holding its
//! leases at a given time, and the [writes it owes](super::pending) Redis
//! (kept here, under the same lock, because taking a room and giving it up
//! change them). The [`cluster`](super) shell does the Redis calls and
//! hands their answers here, so these rules are tested without a Redis or
//! a clock.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use patience_shared::game::GameKind;

use super::pending::{PENDING_CAP, PendingWrites, Taken, Write};

/// Room leases renewed by one script call: small enough that the script
/// holds Redis (single-threaded) for well under a millisecond, large
/// enough that a node with thousands of rooms renews in a few calls.
pub const RENEW_BATCH: usize = 100;

/// What a node holds, and when it last renewed it all.
#[derive(Debug)]
pub struct LeaseBook {
    lease_ms: u64,
    rooms: BTreeSet<Arc<str>>,
    adverts: BTreeMap<GameKind, Arc<str>>,
    /// When the last renewal that reached Redis began, on the node's clock.
    last_renewed_ms: Option<u64>,
    pending: PendingWrites,
}

impl LeaseBook {
    /// An empty book for leases of `lease_ms`.
    pub fn new(lease_ms: u64) -> LeaseBook {
        LeaseBook {
            lease_ms,
            rooms: BTreeSet::new(),
            adverts: BTreeMap::new(),
            last_renewed_ms: None,
            pending: PendingWrites::new(lease_ms, PENDING_CAP),
        }
    }

    /// How often to renew: a third of the lease, so that two renewals in a
    /// row can fail (a Redis restart, a slow network) before one lapses.
    pub fn renew_every_ms(&self) -> u64 {
        (self.lease_ms / 3).max(1)
    }

    /// The lease length, in milliseconds.
    pub fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// Records that the node now holds the room `code`; a release of it
    /// still pending is cancelled, or it would delete the lease just taken.
    pub fn hold(&mut self, code: Arc<str>) {
        self.pending.cancel_release(&code);
        self.rooms.insert(code);
    }

    /// Gives up the room `code` at `now_ms`: it is no longer renewed, and
    /// the deletion of its lease is owed. Whether it was held (one that
    /// was not owes nothing).
    pub fn give_up(&mut self, code: &Arc<str>, now_ms: u64) -> bool {
        let held = self.release(code);
        if held {
            // A release never gives up a forget: the book holds fewer
            // rooms than the cap leaves room for.
            self.pending.push(
                Write::Release {
                    code: Arc::clone(code),
                },
                now_ms,
            );
        }
        held
    }

    /// Owes Redis `write` (a token's), made at `now_ms`; answers the write
    /// given up to make room, if one was (see [`PendingWrites::push`]).
    pub fn owe(&mut self, write: Write, now_ms: u64) -> Option<Write> {
        self.pending.push(write, now_ms)
    }

    /// Writes owed.
    pub fn writes_owed(&self) -> usize {
        self.pending.len()
    }

    /// Up to `size` owed writes to flush at `now_ms`, less those no longer
    /// to be written (see [`PendingWrites::batch`]).
    pub fn writes_to_flush(&mut self, size: usize, now_ms: u64) -> Vec<Taken> {
        let rooms = &self.rooms;
        self.pending
            .batch(size, now_ms, |code| rooms.contains(code))
    }

    /// Records that `batch` reached Redis.
    pub fn writes_flushed(&mut self, batch: &[Taken]) {
        self.pending.flushed(batch);
    }

    /// Records that `batch` failed; answers how many of its writes failed
    /// for the first time.
    pub fn writes_failed(&mut self, batch: &[Taken]) -> usize {
        self.pending.failed(batch)
    }

    /// Forgets the room `code`; whether it was held.
    pub fn release(&mut self, code: &str) -> bool {
        let advertised: Vec<GameKind> = self
            .adverts
            .iter()
            .filter(|(_, advertised)| &***advertised == code)
            .map(|(game, _)| *game)
            .collect();
        for game in advertised {
            self.adverts.remove(&game);
        }
        self.rooms.remove(code)
    }

    /// Whether the node holds `code`.
    pub fn holds(&self, code: &str) -> bool {
        self.rooms.contains(code)
    }

    /// Rooms held.
    pub fn rooms_held(&self) -> usize {
        self.rooms.len()
    }

    /// Every room held, in batches of at most `size` for one renewal each.
    pub fn batches(&self, size: usize) -> Vec<Vec<Arc<str>>> {
        let rooms: Vec<Arc<str>> = self.rooms.iter().cloned().collect();
        rooms
            .chunks(size.max(1))
            .map(<[Arc<str>]>::to_vec)
            .collect()
    }

    /// Takes the answer of a renewal of `batch` (one `1` per lease still
    /// this node's, `2` for one taken back after it lapsed with nobody
    /// taking it, `0` for one another node holds): the lost ones are
    /// forgotten and returned. An answer of the wrong length keeps
    /// everything and loses nothing, for the next renewal to settle.
    pub fn renewed(&mut self, batch: &[Arc<str>], answer: &[i64]) -> Vec<Arc<str>> {
        if batch.len() != answer.len() {
            return Vec::new();
        }
        let lost: Vec<Arc<str>> = batch
            .iter()
            .zip(answer)
            .filter(|(_, kept)| **kept == 0)
            .map(|(code, _)| Arc::clone(code))
            .collect();
        for code in &lost {
            self.release(code);
        }
        lost
    }

    /// The rooms of `batch` whose leases the renewal answered by `answer`
    /// took back after they lapsed (Redis restarted, most likely, and lost
    /// the rooms' token pointers with them, which the node owes again).
    pub fn taken_back(batch: &[Arc<str>], answer: &[i64]) -> Vec<Arc<str>> {
        if batch.len() != answer.len() {
            return Vec::new();
        }
        batch
            .iter()
            .zip(answer)
            .filter(|(_, kept)| **kept == 2)
            .map(|(code, _)| Arc::clone(code))
            .collect()
    }

    /// Records that a renewal that began at `now_ms` reached Redis.
    pub fn reached_redis(&mut self, now_ms: u64) {
        self.last_renewed_ms = Some(now_ms);
    }

    /// Whether the node's leases can still be its own at `now_ms`: its
    /// last renewal that reached Redis began less than a lease ago. Past
    /// that, another node may hold its rooms.
    pub fn leases_current(&self, now_ms: u64) -> bool {
        self.last_renewed_ms
            .is_some_and(|renewed| now_ms.saturating_sub(renewed) < self.lease_ms)
    }

    /// Records that `code` is the room this node advertises for quick
    /// races of `game`.
    pub fn advertise(&mut self, game: GameKind, code: Arc<str>) {
        self.adverts.insert(game, code);
    }

    /// The room this node advertises for `game`, if any.
    pub fn advert(&self, game: GameKind) -> Option<Arc<str>> {
        self.adverts.get(&game).cloned()
    }

    /// Every advertisement of this node.
    pub fn adverts(&self) -> Vec<(GameKind, Arc<str>)> {
        self.adverts
            .iter()
            .map(|(game, code)| (*game, Arc::clone(code)))
            .collect()
    }

    /// Forgets the advertisement of `game`.
    pub fn withdraw(&mut self, game: GameKind) {
        self.adverts.remove(&game);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<Arc<str>> {
        text.split_whitespace().map(Arc::from).collect()
    }

    fn book_of(text: &str) -> LeaseBook {
        let mut book = LeaseBook::new(9_000);
        for code in codes(text) {
            book.hold(code);
        }
        book
    }

    #[test]
    fn renewals_come_every_third_of_a_lease_in_bounded_batches() {
        let book = book_of("A B C D E");
        assert_eq!(book.renew_every_ms(), 3_000);
        let check = |size: usize, expected: &[&str]| {
            let got: Vec<String> = book
                .batches(size)
                .iter()
                .map(|batch| batch.join(" "))
                .collect();
            assert_eq!(got, expected, "batches of {size}");
        };
        check(2, &["A B", "C D", "E"]);
        check(100, &["A B C D E"]);
        check(0, &["A", "B", "C", "D", "E"]);
        assert!(LeaseBook::new(9_000).batches(RENEW_BATCH).is_empty());
    }

    #[test]
    fn a_renewal_forgets_exactly_the_leases_it_did_not_keep() {
        let check = |held: &str, answer: &[i64], lost: &str, left: usize| {
            let mut book = book_of(held);
            let batch = codes(held);
            assert_eq!(
                book.renewed(&batch, answer),
                codes(lost),
                "{held} {answer:?}"
            );
            assert_eq!(book.rooms_held(), left, "{held} {answer:?}");
        };
        check("A B C", &[1, 1, 1], "", 3);
        check("A B C", &[1, 0, 1], "B", 2);
        check("A B C", &[0, 0, 0], "A B C", 0);
        // Taken back after a lapse: still held.
        check("A B C", &[2, 0, 1], "B", 2);
        // A garbled answer loses nothing: the next renewal settles it.
        check("A B C", &[1, 0], "", 3);
    }

    #[test]
    fn the_leases_taken_back_after_a_lapse_are_named() {
        let check = |held: &str, answer: &[i64], taken_back: &str| {
            assert_eq!(
                LeaseBook::taken_back(&codes(held), answer),
                codes(taken_back),
                "{held} {answer:?}"
            );
        };
        check("A B C", &[1, 1, 1], "");
        check("A B C", &[2, 0, 2], "A C");
        check("A B C", &[2, 2], "");
    }

    #[test]
    fn a_lost_or_released_room_takes_its_advertisement_with_it() {
        let mut book = book_of("A B");
        book.advertise(GameKind::ThreeBlindMice, Arc::from("A"));
        assert!(book.release("A"));
        assert!(!book.release("A"), "released once");
        assert_eq!(book.advert(GameKind::ThreeBlindMice), None);
        book.advertise(GameKind::ThreeBlindMice, Arc::from("B"));
        book.renewed(&codes("B"), &[0]);
        assert_eq!(book.advert(GameKind::ThreeBlindMice), None);
        assert!(!book.holds("B"));
    }

    #[test]
    fn a_room_given_up_owes_its_release_until_it_is_taken_again() {
        let mut book = book_of("A B");
        let owed = |book: &mut LeaseBook| -> Vec<Write> {
            book.writes_to_flush(usize::MAX, 0)
                .into_iter()
                .map(|taken| taken.write)
                .collect()
        };
        let release = |code: &str| Write::Release {
            code: Arc::from(code),
        };
        assert!(book.give_up(&Arc::from("A"), 0));
        assert!(
            !book.give_up(&Arc::from("C"), 0),
            "never held: nothing owed"
        );
        assert_eq!(owed(&mut book), [release("A")]);
        // A lost lease is another node's now: nothing to delete.
        book.renewed(&codes("B"), &[0]);
        assert_eq!(owed(&mut book), [release("A")]);
        // The code is taken again before the release reached Redis.
        book.hold(Arc::from("A"));
        assert_eq!(owed(&mut book), []);
        assert!(book.holds("A"));
    }

    #[test]
    fn a_token_set_is_owed_while_its_room_is_held() {
        let mut book = book_of("A");
        let set = Write::SetToken {
            hash: [7; 32],
            code: Arc::from("A"),
        };
        assert_eq!(book.owe(set.clone(), 0), None);
        let batch = book.writes_to_flush(usize::MAX, 0);
        assert_eq!(batch.len(), 1);
        assert_eq!(book.writes_failed(&batch), 1);
        assert_eq!(book.writes_owed(), 1, "a failed write stays owed");
        // The room is lost to another node, which sets the pointer itself.
        book.renewed(&codes("A"), &[0]);
        assert!(book.writes_to_flush(usize::MAX, 0).is_empty());
        assert_eq!(book.writes_owed(), 0);
    }

    #[test]
    fn leases_are_current_for_less_than_a_lease_after_the_last_renewal() {
        let mut book = LeaseBook::new(9_000);
        assert!(!book.leases_current(0), "never renewed");
        book.reached_redis(1_000);
        assert!(book.leases_current(1_000));
        assert!(book.leases_current(9_999));
        assert!(!book.leases_current(10_000));
        // A clock that goes back does not make leases lapse.
        assert!(book.leases_current(500));
    }
}
