//! Packs of cards and the seeded shuffle every deal starts from.
//!
//! The same seed must give the same deal on every machine and with every
//! version of our dependencies, because races, daily deals, replays and the
//! fair-play commitment all rest on it. So the shuffle uses only two things
//! whose output is fixed by specification: the ChaCha20 stream cipher
//! (`rand_chacha`'s `ChaCha20Rng`, seeded with a 32-byte key we build ourselves
//! from the `u64` seed) and our own Fisher–Yates with rejection sampling.
//! Library conveniences such as `SliceRandom::shuffle` or `seed_from_u64` are
//! avoided: their outputs are allowed to change between crate versions.

use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use crate::card::{Card, Suit};

/// A pack of `decks` standard 52-card decks in a fixed order: deck by deck,
/// suit by suit (clubs, diamonds, hearts, spades), Ace to King.
pub fn ordered_pack(decks: usize) -> Vec<Card> {
    let mut pack = Vec::with_capacity(decks * 52);
    for _ in 0..decks {
        for suit in Suit::ALL {
            for rank in 1..=13 {
                pack.push(Card::new(suit, rank));
            }
        }
    }
    pack
}

/// The ChaCha20 key for a seed: the seed's eight little-endian bytes, then
/// zeros. Written out by hand so that no library's seed expansion can change it.
pub(crate) fn chacha_key(seed: u64) -> [u8; 32] {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key
}

/// A uniform integer in `0..bound` (`bound` ≥ 1) by rejection sampling, so
/// that no value is favoured the way `next_u32() % bound` would favour some.
fn uniform_below(rng: &mut ChaCha20Rng, bound: u32) -> u32 {
    debug_assert!(bound >= 1);
    // The largest multiple of `bound` that fits in 2^32; draws at or above it are rejected.
    let zone = u32::MAX - (u32::MAX % bound + 1) % bound;
    loop {
        let draw = rng.next_u32();
        if draw <= zone {
            return draw % bound;
        }
    }
}

/// The shuffled pack `P` of a deal: `decks` decks permuted by seed.
/// `P[0]` is the first card dealt.
pub fn shuffled_pack(decks: usize, seed: u64) -> Vec<Card> {
    let mut pack = ordered_pack(decks);
    let mut rng = ChaCha20Rng::from_seed(chacha_key(seed));
    // Fisher–Yates from the back: position i takes a uniformly chosen card from 0..=i.
    for i in (1..pack.len()).rev() {
        let j = uniform_below(&mut rng, i as u32 + 1) as usize;
        pack.swap(i, j);
    }
    pack
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(cards: &[Card]) -> String {
        cards
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_pack_holds_each_card_once_per_deck() {
        for decks in [1, 2] {
            let mut counts = [0usize; 52];
            for card in shuffled_pack(decks, 7) {
                counts[card.index()] += 1;
            }
            assert!(counts.iter().all(|&n| n == decks));
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_pack_and_others_differ() {
        assert_eq!(shuffled_pack(2, 99), shuffled_pack(2, 99));
        assert_ne!(shuffled_pack(2, 99), shuffled_pack(2, 100));
    }

    /// Pins the shuffle itself: if this changes, every deal ever dealt changes.
    #[test]
    fn golden_shuffles() {
        let check = |decks: usize, seed: u64, first: &str| {
            let pack = shuffled_pack(decks, seed);
            assert_eq!(text(&pack[..13]), first, "decks {decks} seed {seed}");
        };
        check(1, 0, GOLDEN_ONE_DECK_SEED_0);
        check(1, 1, GOLDEN_ONE_DECK_SEED_1);
        check(2, u64::MAX, GOLDEN_TWO_DECK_SEED_MAX);
    }

    const GOLDEN_ONE_DECK_SEED_0: &str = "5c 6h Js 5s Qs 8c 2h Kh 7h Ks 8d Qd 4c";
    const GOLDEN_ONE_DECK_SEED_1: &str = "3h Td Js 6s Th 4h Ah 7c Ks 2s Qd 7s 9c";
    const GOLDEN_TWO_DECK_SEED_MAX: &str = "2s 5h 8d 3c 5s Qc Ks Js Qd 2d Ts 4c Jd";

    #[test]
    fn uniform_below_stays_in_range() {
        let mut rng = ChaCha20Rng::from_seed(chacha_key(3));
        for bound in [1u32, 2, 3, 52, 104, u32::MAX] {
            for _ in 0..100 {
                assert!(uniform_below(&mut rng, bound) < bound);
            }
        }
    }
}
