//! The rules of each game, one module per family. Each is a pure state
//! machine implementing [`crate::rules::Rules`].

pub mod virginia_reel;
