//! Bots: ordinary protocol clients that race at a human pace.
//!
//! A bot sees only what a person sees. It guesses the hidden cards
//! ([`guess`]), asks the solver for a winning line of that guess, and plays
//! it move by move, one every `pace`. After each move it compares the board
//! the server sent with the board the plan expected: when a turned card
//! proves the guess wrong, it guesses again and plans again. Most guesses of
//! a deal are unwinnable, so a plan tries several; with no line found it
//! plays one good move (home, the stock, uncovering a card) that leads to no
//! board it has seen, and with none left it resigns.
//! The solver runs on a blocking thread, never on a runtime worker.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use patience_shared::any::AnyGame;
use patience_shared::protocol::{ClientMessage, ServerMessage};
use patience_shared::rules::{Rules, View, Zone};
use patience_shared::solver::{Budget, Verdict};
use tokio::time::Instant;

use crate::config::Store;
use crate::net::NetError;
use crate::position::{guess, move_shapes, solve_line};
use crate::session::{Entry, SeatSlot, Session};

/// The solver budget of one plan of Three Blind Mice, whose solver settles
/// most positions in far less.
pub const BOT_BUDGET: u64 = 100_000;

/// The budget for the two-deck games, whose plain search rarely settles a
/// position early: a plan must stay well under a human move's time.
pub const BOT_BUDGET_TWO_DECKS: u64 = 25_000;

/// A bot's plan: each move's text and the board expected after it.
#[derive(Debug, Default)]
struct Plan {
    steps: VecDeque<(String, View)>,
}

/// How many guesses of the hidden cards a plan tries before settling for
/// a single good move: most guesses of a deal are unwinnable ones.
const GUESSES_PER_PLAN: u64 = 12;

/// Plans from `board`: a solver line on some guess, or one good move that
/// leads to no board seen before.
fn make_plan(board: &View, variation: u64, seen: &HashSet<View>) -> Plan {
    let mut first_guess = None;
    for attempt in 0..GUESSES_PER_PLAN {
        let Ok(position) = guess(board, variation * GUESSES_PER_PLAN + attempt) else {
            return Plan::default();
        };
        let budget = if board.game.decks() == 1 {
            BOT_BUDGET
        } else {
            BOT_BUDGET_TWO_DECKS
        };
        let verdict = solve_line(&position, Budget::positions(budget));
        if let Ok(Verdict::Winnable(line)) = verdict {
            let mut state = position.clone();
            let mut steps = VecDeque::new();
            for mv in line {
                let text = state.format_move(mv);
                if state.apply(mv).is_err() {
                    break;
                }
                steps.push_back((text, state.view()));
            }
            return Plan { steps };
        }
        first_guess.get_or_insert(position);
        // A search that ran out of budget on one guess will on the others
        // too; only proofs of unwinnable guesses are worth another guess.
        if !matches!(verdict, Ok(Verdict::Unwinnable)) {
            break;
        }
    }
    first_guess
        .and_then(|position| good_move(&position, seen))
        .map(|(text, after)| Plan {
            steps: [(text, after)].into(),
        })
        .unwrap_or_default()
}

/// A move that makes progress without a plan: a card home, else one that
/// uncovers a face-down card, else one from the waste, else the stock, else
/// any, never back to a board already seen.
fn good_move(position: &AnyGame, seen: &HashSet<View>) -> Option<(String, View)> {
    let before = position.view();
    let uncovers = |zone: Zone, depth: usize| {
        before
            .zones
            .iter()
            .any(|z| z.zone == zone && z.hidden > 0 && depth + 1 == z.face_up.len())
    };
    move_shapes(position)
        .into_iter()
        .filter_map(|shape| {
            let mut after = position.clone();
            after.apply(shape.mv).ok()?;
            let after = after.view();
            let rank = match (shape.to, shape.from) {
                (Some(Zone::Foundation(_) | Zone::Discard), _) => 0,
                _ if uncovers(shape.from, shape.depth) => 1,
                (_, Zone::Waste | Zone::Reserve(_)) => 2,
                (_, Zone::Stock) => 3,
                _ => 4,
            };
            (!seen.contains(&after)).then_some((rank, shape.text, after))
        })
        .min_by_key(|(rank, _, _)| *rank)
        .map(|(_, text, after)| (text, after))
}

/// Joins room `code` on `server` as `name` and races until the race ends,
/// telling `log` what happens in the room. With `store`, the bot keeps its
/// seat there ([`SeatSlot::Bot`]) and takes back the one saved for `code`
/// instead of joining anew: `play --bot` brings its bot back after a
/// restart. A bot started on its own (`patience bot`) passes
/// [`Store::none`].
///
/// Cancel-safe in effect: dropped early, the bot's session is dropped,
/// which keeps its seat for a resume; [`Session::start`] inside it is not
/// (see `crate::session`).
pub async fn run(
    server: &str,
    name: &str,
    code: &str,
    pace: Duration,
    store: Store,
    mut log: impl FnMut(&str) + Send,
) -> Result<(), NetError> {
    let slot = SeatSlot::Bot {
        pace_ms: u64::try_from(pace.as_millis()).unwrap_or(u64::MAX),
    };
    let (mut session, notes) =
        Session::start_in_slot(server, name, Entry::Join(code.to_string()), store, slot).await?;
    for note in &notes {
        log(note);
    }
    let mut plan = Plan::default();
    let mut expected: Option<View> = None;
    let mut variation = 0u64;
    let mut next_move: Option<(Instant, String)> = None;
    let mut awaiting_answer = false;
    let mut seen: HashSet<View> = HashSet::new();
    let mut moves_played = 0u64;
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
                match message {
                    ServerMessage::MoveAccepted { .. } => awaiting_answer = false,
                    ServerMessage::MoveRejected { .. } => {
                        awaiting_answer = false;
                        // The plan was wrong about this position: plan afresh.
                        expected = None;
                    }
                    _ => {}
                }
                if !session.state.can_move() || next_move.is_some() || awaiting_answer {
                    continue;
                }
                let Some(board) = session.state.my_board().cloned() else { continue };
                seen.insert(board.clone());
                if expected.as_ref() != Some(&board) || plan.steps.is_empty() {
                    variation += 1;
                    let (planned, seen) = (board.clone(), seen.clone());
                    plan = tokio::task::spawn_blocking(move || make_plan(&planned, variation, &seen))
                        .await
                        .unwrap_or_default();
                }
                match plan.steps.pop_front() {
                    Some((text, after)) => {
                        expected = Some(after);
                        next_move = Some((Instant::now() + human_pace(pace, moves_played), text));
                        moves_played += 1;
                    }
                    None => {
                        session.send(&ClientMessage::Resign).await?;
                        awaiting_answer = true;
                    }
                }
            }
            () = sleep_until(due) => {
                if let Some((_, text)) = next_move.take() {
                    session.send(&ClientMessage::Move { text, seat: None }).await?;
                    awaiting_answer = true;
                }
            }
        }
    }
    session.close().await;
    Ok(())
}

/// `pace` varied by up to a third either way, the same for the same move
/// number: people do not move like a metronome.
fn human_pace(pace: Duration, move_number: u64) -> Duration {
    let mut hash = move_number.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    hash ^= hash >> 29;
    let factor = 2.0 / 3.0 + (hash % 1000) as f64 / 1500.0;
    pace.mul_f64(factor)
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}
