//! The one end-to-end test binary: each module drives real binaries or the
//! real libraries as their users do.

mod allocation;
mod inspect;

/// Counts allocations per thread for the `allocation` tests; otherwise the
/// system allocator, unchanged.
#[global_allocator]
static ALLOCATOR: allocation::CountingAllocator = allocation::CountingAllocator;
