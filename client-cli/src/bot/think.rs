//! The bot's thinking, apart from the network loop: the planner
//! of [`patience_shared::bot`] run on a blocking thread within a
//! wall-clock limit ([`think_off_runtime`]) or alone against a deal
//! ([`play_alone_timed`]). The pace between moves is the shared
//! [`human_pace`](patience_shared::bot::human_pace).

use std::time::Duration;

use patience_shared::any::AnyGame;
use patience_shared::bot::{Alone, Bot, BotLevel, play_alone_within};
use patience_shared::rules::View;

use crate::thinking::WallClockDeadline;

/// [`play_alone`](patience_shared::bot::play_alone), with at most `think_limit` of wall clock time to choose
/// each move (none: no limit), telling `thought` how long the bot took to
/// choose each move: the time a bot at a human pace must fit in its pace.
pub fn play_alone_timed(
    deal: &AnyGame,
    level: BotLevel,
    variation: u64,
    max_moves: u64,
    think_limit: Option<Duration>,
    mut thought: impl FnMut(Duration),
) -> Alone {
    play_alone_within(deal, level, variation, max_moves, |bot, board| {
        let started = std::time::Instant::now();
        let chosen = match think_limit {
            Some(limit) => bot.next_move_within(board, &WallClockDeadline::after(started, limit)),
            None => bot.next_move(board),
        };
        thought(started.elapsed());
        chosen
    })
}

/// Thinks about `board` within `limit` of wall clock time from now (none:
/// no limit) on a blocking thread, never on a runtime worker: a plan may
/// search for seconds. Returns the bot with its move (`None`: it resigns),
/// or `None` if the solver panicked.
pub(super) async fn think_off_runtime(
    mut bot: Bot,
    board: View,
    limit: Option<Duration>,
) -> Option<(Bot, Option<String>)> {
    // The solver's time is the machine's, whatever the runtime's clock says
    // (tests pause it).
    let deadline = limit.map(|limit| WallClockDeadline::after(std::time::Instant::now(), limit));
    tokio::task::spawn_blocking(move || {
        let chosen = match &deadline {
            Some(deadline) => bot.next_move_within(&board, deadline),
            None => bot.next_move(&board),
        };
        (bot, chosen)
    })
    .await
    .ok()
}
