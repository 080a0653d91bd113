//! The `patience` command: the terminal client of Patience Race and its
//! inspection tools.
//!
//! `main.rs` only parses arguments and reports errors; every command lives
//! here so the end-to-end tests drive the same code people run.
//!
//! - [`bot`]: bots that race at a human pace on a solver line.
//! - [`cli`]: the command-line grammar (clap).
//! - [`inspect`]: `deal` and `moves`, which show deals and legal moves as
//!   text or JSON.
//! - [`solve`]: `solve` and `survey`, the solver's commands.
//! - [`text`]: boards rendered as plain text.
//! - [`config`]: the name and the resume token kept between runs.
//! - [`net`]: the protocol client, one WebSocket to the race server.
//! - [`race`]: a room and its race as one client sees them (sans I/O).
//! - [`plain`]: the `--plain` line mode, online and in practice.
//! - [`session`]: entering a room, resuming a seat, reconnecting.
//! - [`position`]: legal moves, natural moves and solver lines computed
//!   from what a player may see.

pub mod app;
pub mod bot;
pub mod cli;
pub mod config;
pub mod inspect;
pub mod net;
pub mod plain;
pub mod position;
pub mod race;
pub mod session;
pub mod solve;
pub mod text;
pub mod tui;
