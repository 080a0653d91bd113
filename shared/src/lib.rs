//! The shared heart of Patience Race: cards, seeded deals, the rules of every
//! game, the solver and the wire protocol.
//!
//! Everything here is pure: no I/O, no clock, no OS randomness. Time and
//! seeds come in as arguments, so the server, the terminal client and the
//! solver all compute the same thing from the same inputs.
//!
//! Test support ([`conformance`], [`module_graph`]) is compiled only for
//! tests: this crate's own, and others' through the `test-support` feature.

pub mod any;
pub mod bot;
pub mod card;
#[cfg(any(test, feature = "test-support"))]
pub mod conformance;
#[cfg(test)]
mod deal_spec;
pub mod deck;
pub mod game;
pub mod games;
#[cfg(any(test, feature = "test-support"))]
pub mod module_graph;
pub mod position;
pub mod protocol;
pub mod rating;
pub mod replay;
pub mod rules;
#[cfg(test)]
mod slow_tier;
pub mod solver;
pub mod splitmix;
