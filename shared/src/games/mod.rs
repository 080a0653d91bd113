//! The rules of each game, one module per family. Each is a pure state
//! machine implementing [`crate::rules::Rules`].

pub mod forty_thieves;
pub mod three_blind_mice;
pub mod virginia_reel;
