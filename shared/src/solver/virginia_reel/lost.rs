//! Positions proved lost: a table shared by every pass and restart round
//! of one search.
//!
//! Apart from the search driver because it outlives a pass: what one pass
//! or round proves lost, the later ones read, under the freezes it was
//! proved under.
//!
//! # The table
//!
//! A table shared by every pass and restart round of one search
//! (`LostTable`) keeps each position the search has proved lost, keyed by
//! the key *without* what is frozen, with what was frozen when it was
//! proved. A position is lost at once if the table holds it proved lost
//! under a sub-multiset of what is frozen now.
//!
//! Why this is sound. Say a line from a position *respects* a set of
//! freezes when it plays none of the frozen moves while they are in force.
//! What a search of a position P with freezes F proves when it finds no win
//! is that no winning line from P respects F: a child that freezes a move m
//! passed over covers every line that respects F and plays m (as the
//! freezing argument of `freezing.rs` moves m to the front), so the children together
//! cover every line that respects F; a dead-position check proves exactly
//! this for the frozen builds it reads; dropping a freeze that no longer
//! matters, or not recording one, only proves more. The search calls
//! [`SolverGame::proved_lost`] only when every move of P was tried to the
//! end: no line below it was cut at a discrepancy limit, and every position
//! skipped below it as seen before was itself searched to the end. In a
//! round, a position seen before is never one on the current line, since
//! the positions form a DAG (every move is final), so it was searched to
//! the end and lost. The claim "no winning line from P respects F" names
//! neither a move order nor a pass, so it holds in every later pass and
//! round, and for every F' that contains F, since a line that respects F'
//! respects F. The table therefore never calls a position lost that a
//! search without it would win.
//!
//! What is frozen is compared as a multiset of tokens in which a reserve
//! is named by its share of the key (its contents and future) rather than
//! by its index, as in the key (whose term for what is frozen is the sum of
//! the same tokens): with the stock out two reserves with the same contents
//! are interchangeable, and so are their freezes. The
//! dead-position checks read only frozen builds, so a position one of them
//! proves lost is kept under its frozen builds alone, which covers it under
//! any frozen releases and swaps.

use rustc_hash::FxHashMap;

use super::ReelSearch;

/// One position proved lost, in [`LostTable::entries`].
#[derive(Clone, Copy, Debug)]
struct LostEntry {
    /// Its freezes are `LostTable::tokens[first..first + len]`, sorted.
    first: u32,
    len: u32,
    /// The next entry with the same key without freezes, or `u32::MAX`.
    next: u32,
}

/// Positions proved lost by any pass or round of one search, keyed without
/// what is frozen, each with the freezes it was proved lost under (module
/// docs, "Positions proved lost").
#[derive(Debug, Default)]
pub(super) struct LostTable {
    /// The newest entry for each key without freezes.
    heads: FxHashMap<u64, u32>,
    entries: Vec<LostEntry>,
    /// Every entry's freezes as tokens ([`ReelSearch::frozen_tokens`]).
    tokens: Vec<u64>,
}

impl LostTable {
    /// Whether some entry for `key` was proved lost under a sub-multiset of
    /// `tokens` (sorted).
    fn covers(&self, key: u64, tokens: &[u64]) -> bool {
        let mut at = self.heads.get(&key).copied().unwrap_or(u32::MAX);
        while let Some(entry) = self.entries.get(at as usize) {
            let first = entry.first as usize;
            let proved = &self.tokens[first..first + entry.len as usize];
            if is_sub_multiset(proved, tokens) {
                return true;
            }
            at = entry.next;
        }
        false
    }

    /// Whether any entry has `key`.
    fn has(&self, key: u64) -> bool {
        self.heads.contains_key(&key)
    }

    fn insert(&mut self, key: u64, tokens: &[u64]) {
        let at = self.entries.len() as u32;
        let next = self.heads.insert(key, at).unwrap_or(u32::MAX);
        self.entries.push(LostEntry {
            first: self.tokens.len() as u32,
            len: tokens.len() as u32,
            next,
        });
        self.tokens.extend_from_slice(tokens);
    }
}

/// Whether every value of sorted `small` appears in sorted `large`, as
/// often or more.
pub(super) fn is_sub_multiset(small: &[u64], large: &[u64]) -> bool {
    let mut large = large.iter();
    small
        .iter()
        .all(|&value| large.by_ref().any(|&other| other == value))
}

impl ReelSearch {
    /// Whether an earlier pass or round proved this position lost under a
    /// subset of what is frozen now.
    pub(super) fn is_known_lost(&self) -> bool {
        let lost = self.lost.borrow();
        let key = self.unfrozen_key();
        if !lost.has(key) {
            return false;
        }
        let mut tokens = Vec::with_capacity(self.frozen.moves.len() + 16);
        self.frozen_tokens(true, &mut tokens);
        lost.covers(key, &tokens)
    }

    /// Keeps this position in the table as proved lost under what is frozen
    /// now, or under the frozen builds alone when a dead-position check
    /// proved it (those checks read no frozen release or swap).
    pub(super) fn remember_lost(&self) {
        let key = self.unfrozen_key();
        let mut tokens = Vec::with_capacity(self.frozen.moves.len() + 16);
        self.frozen_tokens(self.dead_key.get() != self.key, &mut tokens);
        let mut lost = self.lost.borrow_mut();
        if !lost.covers(key, &tokens) {
            lost.insert(key, &tokens);
        }
    }
}
