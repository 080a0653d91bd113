//! Which races count for ratings, and which of their racers: the room's
//! rule, pure, beside the room that runs the race. The mathematics is
//! `patience_shared::rating`'s; the server applies it to what this
//! module lets count, in the job that stores the race.
//!
//! - A room's races are rated ([`room_is_rated`]) if it is open to quick
//!   race (public) or was created rated, and it allows neither undo nor
//!   open boards: a take-back, or a rival's board in view, is not the race
//!   the others ran.
//! - Of a rated room's racers, the registered people count
//!   ([`rated_racers`]): a server bot's seat and a guest's are left out,
//!   and the people are rated among themselves (every board is dealt alike
//!   and played alone, so a bot in the race changes nothing of how the
//!   people fared against each other). Fewer than two people left: not
//!   rated.
//! - One account in two seats (two devices, or a sign-in code's new token,
//!   which is the same account): not rated. The server knows a player only
//!   by account; it keeps no address with a seat, so two accounts are two
//!   players to it.

use std::collections::HashSet;

use patience_shared::protocol::{PlayerStatus, RaceResult, RoomOptions};

use crate::records::PlayerId;

/// Whether a room's races count for ratings: a public room (quick race's)
/// or one created rated, and neither with undo nor with open boards.
pub fn room_is_rated(public: bool, options: &RoomOptions) -> bool {
    (public || options.rated) && !options.undo_allowed && !options.open_boards
}

/// Why a finished race of a rated room changes no rating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unrated {
    /// Fewer than two registered people raced.
    TooFewPeople,
    /// One account held two seats.
    OneAccountTwice,
}

/// The racers who count, in the standings' order (the winners first, in
/// their finish order): each registered person and whether they won the
/// deal. `players` are the seats of registered players, as
/// [`NewRace::players`](crate::records::NewRace::players) lists them.
pub fn rated_racers(
    result: &RaceResult,
    players: &[(u8, PlayerId)],
) -> Result<Vec<(PlayerId, bool)>, Unrated> {
    let mut seen = HashSet::new();
    let mut racers = Vec::new();
    for standing in &result.standings {
        if standing.bot.is_some() {
            continue;
        }
        let Some(player) = players
            .iter()
            .find(|(seat, _)| *seat == standing.seat)
            .map(|(_, player)| *player)
        else {
            continue;
        };
        if !seen.insert(player) {
            return Err(Unrated::OneAccountTwice);
        }
        racers.push((player, standing.status == PlayerStatus::Won));
    }
    if racers.len() < 2 {
        return Err(Unrated::TooFewPeople);
    }
    Ok(racers)
}

/// A race's result made up for tests: each racer's seat, status and bot
/// level, best first, on a Three Blind Mice deal with no moves.
#[cfg(any(test, feature = "test-support"))]
pub fn made_up_result(
    racers: &[(
        u8,
        PlayerStatus,
        Option<patience_shared::protocol::BotLevel>,
    )],
) -> RaceResult {
    use patience_shared::game::GameKind;
    use patience_shared::protocol::{MoveLog, Progress, Reveal, Standing};
    RaceResult {
        race_id: None,
        standings: (1u8..)
            .zip(racers)
            .map(|(rank, (seat, status, bot))| Standing {
                rank,
                seat: *seat,
                name: format!("seat {seat}"),
                status: *status,
                progress: Progress::default(),
                bot: *bot,
            })
            .collect(),
        reveal: Reveal {
            game: GameKind::ThreeBlindMice,
            seed: 7,
            salt: "00112233445566778899aabbccddeeff".to_string(),
        },
        logs: racers
            .iter()
            .map(|(seat, ..)| MoveLog {
                seat: *seat,
                moves: Vec::new(),
            })
            .collect(),
        open_boards: false,
    }
}

#[cfg(test)]
mod tests;
