//! The rules engine's hot path does not allocate: a counting global allocator
//! watches `legal_moves`, `apply` and `undo` during random play of every game.
//!
//! The count is per thread, so tests running in parallel do not disturb it.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use patience_shared::conformance::TestRng;
use patience_shared::games::forty_thieves::{FortyThieves, Variant};
use patience_shared::games::three_blind_mice::ThreeBlindMice;
use patience_shared::games::virginia_reel::VirginiaReel;
use patience_shared::rules::Rules;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting allocations made by each thread.
pub struct CountingAllocator;

fn count_one() {
    // `try_with` because the allocator may be called while a thread's locals are torn down.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting
// touches only a const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Plays random games from `deal` and returns the allocations made by the
/// rules calls alone (dealing is not counted). The move buffer is allocated up
/// front with room for any position's moves, as the solver's is.
fn allocations_in_play<R: Rules>(deal: impl Fn(u64) -> R) -> u64 {
    let mut moves = Vec::with_capacity(4096);
    let mut rng = TestRng::new(9);
    let mut counted = 0;
    for seed in 0..20 {
        let mut state = deal(seed);
        for _ in 0..300 {
            let before = allocations();
            state.legal_moves(&mut moves);
            let Some(&mv) = moves.get(rng.below(moves.len().max(1))) else {
                break;
            };
            let applied = state.apply(mv);
            if let Ok(outcome) = &applied {
                state.undo(mv, outcome);
                let _ = state.apply(mv);
            }
            counted += allocations() - before;
        }
    }
    counted
}

#[test]
fn legal_moves_apply_and_undo_do_not_allocate() {
    let check = |name: &str, count: u64| assert_eq!(count, 0, "{name} allocated {count} times");
    check(
        "three blind mice",
        allocations_in_play(ThreeBlindMice::deal),
    );
    check(
        "indian",
        allocations_in_play(|seed| FortyThieves::deal(Variant::Indian, seed)),
    );
    check(
        "midshipman",
        allocations_in_play(|seed| FortyThieves::deal(Variant::Midshipman, seed)),
    );
    check("virginia reel", allocations_in_play(VirginiaReel::deal));
}
