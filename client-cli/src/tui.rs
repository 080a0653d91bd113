//! The terminal UI (ratatui + crossterm): practice, races, the lobby, the
//! results and watch mode.
//!
//! Layout of this module, one file per subsystem:
//! - [`input`]: the cursor and the keys ([`Ui`]), and what a key or a click
//!   asks for ([`Action`]).
//! - [`frame`]: the frame every screen shares (a title, the body, the
//!   message lines and the [`key_bar`] of the [`Context`]'s keys, always at
//!   the bottom).
//! - [`board`]: one board; [`screens`]: the lobby, the race panel, the
//!   results and the per-game help, as lines.
//! - [`draw`]: whole screens, practice ([`draw_practice`]) and online
//!   ([`draw_online`]).
//! - [`terminal`]: what a loop draws on ([`Screen`]) and the real terminal's
//!   lifecycle.
//! - The loops: [`mod@practice`], [`mod@online`] (races and watching), [`daily`]
//!   (the daily attempt), [`live`] (the leaderboard followed live, and the
//!   standings beside the daily), [`replay`].
//!
//! Drawing is a pure function of the state and an instant, so snapshot
//! tests render frames with ratatui's `TestBackend`; the loops draw on a
//! [`Screen`] (the real terminal restores itself on drop, on Ctrl-Z and on
//! panic) and read their events from a stream, so tests drive them with a
//! test backend and scripted events.

pub mod board;
pub mod daily;
pub mod draw;
pub mod frame;
pub mod input;
pub mod live;
pub mod lobby;
pub mod online;
pub mod practice;
pub mod replay;
pub mod screens;
pub mod terminal;

pub use self::draw::{PracticeScreen, draw_online, draw_practice, final_boards, online_context};
pub use self::frame::{Context, MIN_HEIGHT, MIN_WIDTH, key_bar};
pub use self::input::{Action, Ui};
pub use self::practice::{PracticeEnd, practice, practice_loop};
pub use self::terminal::{Painter, Screen};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod online_tests;
