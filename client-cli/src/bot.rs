//! Bots as ordinary protocol clients: the network loop that races the
//! planner of [`patience_shared::bot`] in a room at a human pace.
//!
//! The planning ([`Bot`], [`BotLevel`], [`play_alone`]) lives in
//! `patience-shared`, so that the server's hosted bots plan with the same
//! code. This module keeps what needs a clock and a socket:
//! - this file, the network loop: [`run`] puts a bot in a room, moving one
//!   every `pace`;
//! - `think.rs`, the thinking and the pace: each move thought about within
//!   [`think_limit`] of the wall clock, on a blocking thread, never on a
//!   runtime worker; [`play_alone_timed`] measures the planner with a
//!   wall-clock limit (`examples/bot_strength.rs`, docs/BOTS.md);
//! - `answer.rs`, the wait for the server's answer to the last move sent.

use std::time::Duration;

use patience_shared::bot::human_pace;
pub use patience_shared::bot::{
    Alone, Bot, BotLevel, Deadline, NoDeadline, PlanLimits, play_alone, play_alone_within,
};
use patience_shared::protocol::{ClientMessage, ServerMessage};
use patience_shared::rules::View;
use tokio::time::Instant;

use self::answer::Answer;
pub use self::think::play_alone_timed;
use self::think::think_off_runtime;
use crate::config::Store;
use crate::net::NetError;
use crate::session::{Entry, SeatSlot, Session};
use crate::thinking::think_limit;

mod answer;
mod think;

/// Joins room `code` on `server` as `name` and races as a bot of `level`
/// until the race ends, telling `log` what happens in the room. With `store`, the bot keeps its
/// seat there ([`SeatSlot::Bot`]) and takes back the one saved for `code`
/// instead of joining anew: `play --bot` brings its bot back after a
/// restart. A bot started on its own (`patience bot`) passes
/// [`Store::none`].
///
/// The bot thinks about each move within [`think_limit`] of `pace` (twice
/// the pace, at most 10 s; no limit at pace 0), on the wall clock from when
/// the board came, and its thinking counts toward the pace: the move is
/// sent a pace (varied like a person's) after the board came, or as soon
/// as it is chosen if thinking took longer.
///
/// Cancel-safe in effect: dropped early, the bot's session is dropped,
/// which keeps its seat for a resume; [`Session::start`] inside it is not
/// (see `crate::session`).
pub async fn run(
    server: &str,
    name: &str,
    code: &str,
    pace: Duration,
    level: BotLevel,
    store: Store,
    log: impl FnMut(&str) + Send,
) -> Result<(), NetError> {
    let room = Room {
        server,
        name,
        code,
        store,
    };
    race(room, pace, level, log, think_off_runtime).await
}

/// Where [`run`] races: the server, the bot's name, the room's code and
/// where its seat is kept.
struct Room<'a> {
    server: &'a str,
    name: &'a str,
    code: &'a str,
    store: Store,
}

/// [`run`], thinking about each board with `think` (the bot, the board and
/// the thinking limit in; the bot back with its move, or `None` if the
/// thinking failed).
///
/// The one seam in the race loop, for the tests of the pace: a race thinks
/// with [`think_off_runtime`]; the tests wrap it in a sleep on the
/// runtime's clock. They run on a paused tokio clock, which stands still
/// while the solver runs on its blocking thread, so without the sleep
/// thinking would cost no time there, and a move due a pace after the
/// board came could not be told from one due a pace after the thinking.
async fn race<Think, Thinking>(
    room: Room<'_>,
    pace: Duration,
    level: BotLevel,
    mut log: impl FnMut(&str) + Send,
    mut think: Think,
) -> Result<(), NetError>
where
    Think: FnMut(Bot, View, Option<Duration>) -> Thinking,
    Thinking: Future<Output = Option<(Bot, Option<String>)>>,
{
    let slot = SeatSlot::Bot {
        pace_ms: u64::try_from(pace.as_millis()).unwrap_or(u64::MAX),
        level,
    };
    let entry = Entry::Join(room.code.to_string());
    let (mut session, notes) =
        Session::start_in_slot(room.server, room.name, entry, room.store, slot).await?;
    for note in &notes {
        log(note);
    }
    // Only the solver's choices depend on it; any number keeps bots apart.
    let variation = room.code.bytes().fold(0u64, |hash, byte| {
        hash.wrapping_mul(0x100_0000_01b3) ^ u64::from(byte)
    });
    let mut bot = Some(Bot::new(level, variation));
    let mut next_move: Option<(Instant, String)> = None;
    let mut answer = Answer::default();
    let mut moves_played = 0u64;
    let mut refused_in_a_row = 0u32;
    loop {
        let due = next_move.as_ref().map(|(at, _)| *at);
        tokio::select! {
            received = session.recv() => {
                let (message, notes) = received?;
                for note in session.take_connection_notes().iter().chain(&notes) {
                    log(note);
                }
                if session.state.result.is_some() || session.state.closed.is_some() {
                    break;
                }
                answer.heard(&message);
                match message {
                    ServerMessage::MoveAccepted { .. } => refused_in_a_row = 0,
                    ServerMessage::MoveRejected { .. } => {
                        refused_in_a_row += 1;
                        // The plan was wrong about this position: plan afresh.
                        if let Some(bot) = bot.as_mut() {
                            bot.refused();
                        }
                    }
                    _ => {}
                }
                if !session.state.can_move() || next_move.is_some() || answer.awaited() {
                    continue;
                }
                let Some(board) = session.state.my_board().cloned() else { continue };
                if refused_in_a_row >= REFUSALS_BEFORE_RESIGNING {
                    // The bot's rules and the server's disagree about this
                    // board; another plan would only be refused again.
                    log(&format!("{refused_in_a_row} moves refused in a row: the bot resigns"));
                    session.send(&ClientMessage::Resign).await?;
                    answer.sent();
                    continue;
                }
                let thinking = bot.take().unwrap_or_else(|| Bot::new(level, variation));
                let board_came = Instant::now();
                let (thought, chosen) = think(thinking, board, think_limit(pace))
                    .await
                    // A solver that panicked chose nothing: resign.
                    .unwrap_or_else(|| (Bot::new(level, variation), None));
                bot = Some(thought);
                match chosen {
                    Some(text) => {
                        // Thinking counts toward the pace: a move thought
                        // about longer than its pace is due at once.
                        next_move = Some((board_came + human_pace(pace, moves_played), text));
                        moves_played += 1;
                    }
                    None => {
                        session.send(&ClientMessage::Resign).await?;
                        answer.sent();
                    }
                }
            }
            () = sleep_until(due) => {
                if let Some((_, text)) = next_move.take() {
                    session.send(&ClientMessage::Move { text, seat: None }).await?;
                    answer.sent();
                }
            }
        }
    }
    session.close().await;
    Ok(())
}

/// Moves refused in a row after which the bot resigns rather than plan
/// again. Its moves come from the rules the server plays by, so a refusal
/// means its board is out of date (a plan afresh mends that) or that the
/// two disagree, which no plan mends; without a bound such a bot would send
/// refused moves until the race's time limit, as fast as its pace.
const REFUSALS_BEFORE_RESIGNING: u32 = 3;

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod run_tests;
