//! The `patience` command: the terminal client of Patience Race and its
//! inspection tools.
//!
//! `main.rs` only parses arguments and reports errors; every command lives
//! here so the end-to-end tests drive the same code people run.
//!
//! - [`cli`]: the command-line grammar (clap).
//! - [`inspect`]: `deal` and `moves`, which show deals and legal moves as
//!   text or JSON.
//! - [`solve`]: `solve` and `survey`, the solver's commands.
//! - [`text`]: boards rendered as plain text.

pub mod cli;
pub mod inspect;
pub mod solve;
pub mod text;
