//! The one end-to-end test binary: each module drives real binaries or the
//! real libraries as their users do.

mod admin;
mod allocation;
mod bots;
mod client;
mod cluster;
mod cluster_recovery;
mod daily;
mod daily_client;
mod deploy;
mod docs;
mod durability;
mod follow;
mod hostile;
mod inspect;
mod load;
mod lobby;
mod matchmaking;
mod open_boards;
mod outage;
mod postgres;
mod race;
mod race_page;
mod ratings;
mod restart;
mod resume;
mod screen;
mod slow;
mod tournament;
mod tournament_client;
mod wire;

/// Counts allocations per thread for the `allocation` tests; otherwise the
/// system allocator, unchanged.
#[global_allocator]
static ALLOCATOR: allocation::CountingAllocator = allocation::CountingAllocator;
