//! `patience deal` and `patience moves`: deals and legal moves for people,
//! scripts and third-party tools.

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::rules::{Board, MoveError, NotationError, Rules};
use serde::Serialize;

use crate::text::board_text;

/// A position as `deal --json` prints it: the board with its game and seed.
#[derive(Debug, Serialize)]
pub struct PositionJson {
    /// The deal's seed.
    pub seed: u64,
    /// Every zone with every card.
    #[serde(flatten)]
    pub board: Board,
}

/// What `moves --json` prints.
#[derive(Debug, Serialize)]
pub struct MovesJson {
    /// The position reached, in the layout of `deal --json`.
    pub position: PositionJson,
    /// How many moves were played to reach it.
    pub played: usize,
    /// Whether the position is won.
    pub won: bool,
    /// Whether the position is stuck.
    pub stuck: bool,
    /// Every legal move, in the notation.
    pub moves: Vec<String>,
}

/// A move in a `--play` list that could not be played.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The text is not a move of this game.
    #[error("move {number} of the list, {text:?}, cannot be read")]
    Unreadable {
        /// 1-based position in the list.
        number: usize,
        /// The move's text.
        text: String,
        /// What is wrong with it.
        source: NotationError,
    },
    /// The move is not legal in the position reached.
    #[error("move {number} of the list, {text:?}, is illegal")]
    Illegal {
        /// 1-based position in the list.
        number: usize,
        /// The move's text.
        text: String,
        /// Why the rules refuse it.
        source: MoveError,
    },
}

/// The text of `patience deal GAME SEED`, or its JSON with `json`.
pub fn deal(game: GameKind, seed: u64, json: bool) -> String {
    let state = AnyGame::deal(game, seed);
    if json {
        to_json(&PositionJson {
            seed,
            board: state.board(),
        })
    } else {
        format!(
            "{} · seed {seed}\n\n{}",
            game.title(),
            board_text(&state.board())
        )
    }
}

/// Plays `moves` (notation, whitespace-separated) from the deal.
pub fn play_from_deal(
    game: GameKind,
    seed: u64,
    moves: &str,
) -> Result<(AnyGame, usize), PlayError> {
    let mut state = AnyGame::deal(game, seed);
    let mut played = 0;
    for (index, text) in moves.split_whitespace().enumerate() {
        let number = index + 1;
        let mv = state
            .parse_move(text)
            .map_err(|source| PlayError::Unreadable {
                number,
                text: text.to_string(),
                source,
            })?;
        state.apply(mv).map_err(|source| PlayError::Illegal {
            number,
            text: text.to_string(),
            source,
        })?;
        played += 1;
    }
    Ok((state, played))
}

/// The text of `patience moves GAME SEED --play MOVES`, or its JSON.
pub fn moves(game: GameKind, seed: u64, play: &str, json: bool) -> Result<String, PlayError> {
    let (state, played) = play_from_deal(game, seed, play)?;
    let mut legal = Vec::new();
    state.legal_moves(&mut legal);
    let notation: Vec<String> = legal.iter().map(|&mv| state.format_move(mv)).collect();
    if json {
        return Ok(to_json(&MovesJson {
            position: PositionJson {
                seed,
                board: state.board(),
            },
            played,
            won: state.is_won(),
            stuck: state.is_stuck(),
            moves: notation,
        }));
    }
    let mut out = notation.join("\n");
    if notation.is_empty() {
        out.push_str(if state.is_won() {
            "(won: no moves left)"
        } else {
            "(stuck: no legal move)"
        });
    }
    Ok(out)
}

fn to_json<T: Serialize>(value: &T) -> String {
    // Our types serialize to JSON infallibly (string keys, no non-finite floats).
    serde_json::to_string_pretty(value)
        .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"))
}
