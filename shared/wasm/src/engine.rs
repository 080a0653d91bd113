//! What the page asks of the rules engine, and the answers: one
//! MessagePack map in (`op` names the question), one out.
//!
//! Every question names its position ([`PositionSpec`]): in practice the
//! game, the seed and the moves played (the page knows the deal, since it
//! chose the seed); in a race the last board the server sent, which hides
//! what a racer may not see, and the moves played on it since. The engine
//! keeps no game between calls, except the hinter's line (see
//! [`Engine::hint`]), so the page's state is the list of moves and undo is
//! dropping the last one.

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::position::{
    DropRefusal, MoveShape, drop_refusal, guess, move_between, move_shapes, natural_move,
};
use patience_shared::replay::LogReplay;
use patience_shared::rules::{Board, Effect, Rules, View, Zone};
use patience_shared::solver::any::first_winnable_deal;
use patience_shared::solver::hinter::Hinter;
use patience_shared::solver::{Budget, Hint};
use serde::{Deserialize, Serialize};

/// The most positions one hint or one deal search may expand: the page
/// asks for less, and this bounds a page that asks for more.
pub const MAX_BUDGET: u64 = 5_000_000;

/// The most seeds one search for a proved deal may try.
pub const MAX_SEEDS: u64 = 500;

/// Why a question got no answer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    /// The request is not a MessagePack map of a known question.
    #[error("unreadable request: {0}")]
    BadRequest(String),
    /// The position names neither a seed nor a board.
    #[error("the position needs a seed or a view")]
    NoPosition,
    /// The board cannot be a position of its game.
    #[error("{0}")]
    BadView(String),
    /// A move of the list is refused; `index` counts from 0.
    #[error("move {index} ({text}): {reason}")]
    BadMove {
        /// Which move of the list.
        index: usize,
        /// Its text.
        text: String,
        /// The engine's reason.
        reason: String,
    },
    /// The solver's line did not replay (a solver bug, reported, not hidden).
    #[error("the solver's line does not replay at move {0}")]
    Solver(usize),
}

/// A position: a deal and moves, or a board (hidden places filled with
/// unseen cards, which no legal move depends on) and moves.
#[derive(Clone, Debug, Deserialize)]
pub struct PositionSpec {
    /// The game.
    pub game: GameKind,
    /// The deal's seed, in practice.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The board the server sent, in a race.
    #[serde(default)]
    pub view: Option<View>,
    /// Moves played from the deal or the board, in the notation.
    #[serde(default)]
    pub moves: Vec<String>,
}

/// A card picked up: the one `depth` cards from the top of `from`.
#[derive(Clone, Copy, Debug, Deserialize)]
pub struct Held {
    /// Its zone.
    pub from: Zone,
    /// How deep it lies (0: the top card); the cards above it go along.
    #[serde(default)]
    pub depth: usize,
}

/// The questions, by `op`.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The position's board and state, and every legal move.
    State {
        /// The position.
        position: PositionSpec,
    },
    /// The natural move of a held card (the terminal's space key).
    Natural {
        /// The position.
        position: PositionSpec,
        /// The card.
        held: Held,
    },
    /// Every zone a held card may be dropped on, to light them.
    Targets {
        /// The position.
        position: PositionSpec,
        /// The card.
        held: Held,
    },
    /// The move that takes a held card to `to`, or the engine's reason
    /// why there is none.
    Drop {
        /// The position.
        position: PositionSpec,
        /// The card.
        held: Held,
        /// Where it is dropped.
        to: Zone,
    },
    /// The next move of a winning line, within `budget` positions.
    Hint {
        /// The position.
        position: PositionSpec,
        /// The most positions to search.
        budget: u64,
    },
    /// Every board of a finished race's move log, face-down cards
    /// included: the deal is public once the race has ended, and a replay
    /// shows those cards face up. `undo` in the log takes back the move
    /// before it, as in a stored race.
    Revealed {
        /// The game.
        game: GameKind,
        /// The revealed seed.
        seed: u64,
        /// The log, in the notation.
        moves: Vec<String>,
    },
    /// The first of `count` seeds from `first_seed` whose deal is proved
    /// winnable within `budget` positions each.
    ProvedDeal {
        /// The game.
        game: GameKind,
        /// The first seed tried.
        first_seed: u64,
        /// How many seeds to try.
        count: u64,
        /// The most positions per seed.
        budget: u64,
    },
}

/// A legal move as the page draws it: text to send, where its card leaves
/// and lands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MoveInfo {
    /// Canonical notation, what the server is sent.
    pub text: String,
    /// The zone the card leaves.
    pub from: Zone,
    /// How deep the card lies in `from`.
    pub depth: usize,
    /// Where it lands, if on a zone.
    pub to: Option<Zone>,
}

impl From<&MoveShape> for MoveInfo {
    fn from(shape: &MoveShape) -> MoveInfo {
        MoveInfo {
            text: shape.text.clone(),
            from: shape.from,
            depth: shape.depth,
            to: shape.to,
        }
    }
}

/// The answer to [`Request::State`].
#[derive(Debug, Serialize)]
pub struct StateAnswer {
    /// What the player sees.
    pub view: View,
    /// The moves played, in canonical notation.
    pub moves: Vec<String>,
    /// Whether the position is won.
    pub won: bool,
    /// Whether no move is left and it is not won.
    pub stuck: bool,
    /// Every legal move.
    pub legal: Vec<MoveInfo>,
    /// Cards on the foundations or discarded (not Virginia Reel's home
    /// piles, which the server's `cards_home` also counts).
    pub cards_home: usize,
    /// Whether a move played on a server's board turned up, drew or dealt
    /// a card: the view then shows a guess where that card is, and the
    /// page should wait for the server's board before drawing it.
    pub guessed: bool,
}

/// The answer to [`Request::Drop`]: a move, or the engine's reason.
#[derive(Debug, Serialize)]
pub struct DropAnswer {
    /// The move, if the drop is legal.
    #[serde(rename = "move")]
    pub mv: Option<MoveInfo>,
    /// Why not, in the engine's words, if it is not.
    pub reason: Option<String>,
}

/// The answer to [`Request::Hint`].
#[derive(Debug, Serialize)]
pub struct HintAnswer {
    /// `play`, `already_won`, `no_winning_line` or `unknown`.
    pub kind: &'static str,
    /// The move, for `play`.
    #[serde(rename = "move")]
    pub mv: Option<MoveInfo>,
    /// Moves of the line left from here, for `play`.
    pub line_left: usize,
}

/// The answer to [`Request::ProvedDeal`].
#[derive(Debug, Serialize)]
pub struct DealAnswer {
    /// The seed: the proved one, else `first_seed`.
    pub seed: u64,
    /// Whether the solver proved it winnable.
    pub proved: bool,
    /// The length of the line found.
    pub line: usize,
}

/// The engine: no state but the hinter's line, which keeps hints on one
/// line (see `patience_shared::solver::hinter`).
#[derive(Default)]
pub struct Engine {
    hinter: Hinter<AnyGame>,
}

impl Engine {
    /// An engine with no hint line yet.
    pub fn new() -> Engine {
        Engine::default()
    }

    /// Answers one MessagePack request with one MessagePack answer:
    /// `{"ok": ANSWER}` or `{"error": TEXT}`.
    pub fn answer(&mut self, request: &[u8]) -> Vec<u8> {
        #[derive(Serialize)]
        struct Failure {
            error: String,
        }
        let answer = rmp_serde::from_slice::<Request>(request)
            .map_err(|error| EngineError::BadRequest(error.to_string()))
            .and_then(|request| self.handle(request));
        match answer {
            Ok(bytes) => bytes,
            Err(error) => rmp_serde::to_vec_named(&Failure {
                error: error.to_string(),
            })
            .unwrap_or_default(),
        }
    }

    fn handle(&mut self, request: Request) -> Result<Vec<u8>, EngineError> {
        match request {
            Request::State { position } => ok(&state(&position)?),
            Request::Natural { position, held } => {
                let game = build(&position)?;
                let shapes = move_shapes(&game);
                ok(&natural_move(&shapes, held.from, held.depth).map(MoveInfo::from))
            }
            Request::Targets { position, held } => ok(&targets(&position, held)?),
            Request::Drop { position, held, to } => ok(&drop(&position, held, to)?),
            Request::Hint { position, budget } => ok(&self.hint(&position, budget)?),
            Request::Revealed { game, seed, moves } => ok(&revealed(game, seed, &moves)?),
            Request::ProvedDeal {
                game,
                first_seed,
                count,
                budget,
            } => ok(&proved_deal(game, first_seed, count, budget)?),
        }
    }

    /// The hint for `position`: the next move of the line the hinter
    /// follows, searching anew (within `budget`) only off that line.
    pub fn hint(&mut self, spec: &PositionSpec, budget: u64) -> Result<HintAnswer, EngineError> {
        let position = build(spec)?;
        let budget = Budget::positions(budget.min(MAX_BUDGET));
        let hint = self
            .hinter
            .hint(&position, budget)
            .map_err(|failure| EngineError::Solver(failure.index))?;
        let (kind, mv) = match hint {
            Hint::Play(mv) => {
                let info = move_shapes(&position)
                    .iter()
                    .find(|shape| shape.mv == mv)
                    .map(MoveInfo::from);
                ("play", info)
            }
            Hint::AlreadyWon => ("already_won", None),
            Hint::NoWinningLine => ("no_winning_line", None),
            Hint::Unknown => ("unknown", None),
        };
        let line_left = self.hinter.rest_of_line(&position).map_or(0, <[_]>::len);
        Ok(HintAnswer {
            kind,
            mv,
            line_left,
        })
    }
}

fn ok<T: Serialize>(answer: &T) -> Result<Vec<u8>, EngineError> {
    #[derive(Serialize)]
    struct Success<'a, T> {
        ok: &'a T,
    }
    rmp_serde::to_vec_named(&Success { ok: answer })
        .map_err(|error| EngineError::BadRequest(error.to_string()))
}

/// The whole board before the first move of `moves` from the deal of
/// `seed`, then after each: one more than the moves.
pub fn revealed(game: GameKind, seed: u64, moves: &[String]) -> Result<Vec<Board>, EngineError> {
    let mut replay = LogReplay::new(AnyGame::deal(game, seed));
    let mut boards = Vec::with_capacity(moves.len() + 1);
    boards.push(replay.position().board());
    for (index, text) in moves.iter().enumerate() {
        replay.step(text).map_err(|error| EngineError::BadMove {
            index,
            text: text.clone(),
            reason: error.to_string(),
        })?;
        boards.push(replay.position().board());
    }
    Ok(boards)
}

/// The position `spec` names, its moves played.
pub fn build(spec: &PositionSpec) -> Result<AnyGame, EngineError> {
    let mut position = match (&spec.view, spec.seed) {
        (Some(view), _) => {
            if view.game != spec.game {
                return Err(EngineError::BadView(format!(
                    "the board is of {}, not {}",
                    view.game, spec.game
                )));
            }
            guess(view, 0).map_err(|error| EngineError::BadView(error.to_string()))?
        }
        (None, Some(seed)) => AnyGame::deal(spec.game, seed),
        (None, None) => return Err(EngineError::NoPosition),
    };
    for (index, text) in spec.moves.iter().enumerate() {
        let refused = |reason: String| EngineError::BadMove {
            index,
            text: text.clone(),
            reason,
        };
        let mv = position
            .parse_move(text)
            .map_err(|error| refused(error.reason))?;
        position
            .apply(mv)
            .map_err(|error| refused(error.to_string()))?;
    }
    Ok(position)
}

/// The board, the state and the legal moves of `spec`'s position.
pub fn state(spec: &PositionSpec) -> Result<StateAnswer, EngineError> {
    let mut position = match (&spec.view, spec.seed) {
        (None, Some(seed)) => AnyGame::deal(spec.game, seed),
        _ => build(&PositionSpec {
            moves: Vec::new(),
            ..spec.clone()
        })?,
    };
    // The canonical text of each move, written where it is played.
    let mut moves = Vec::with_capacity(spec.moves.len());
    let mut revealed = false;
    for (index, text) in spec.moves.iter().enumerate() {
        let refused = |reason: String| EngineError::BadMove {
            index,
            text: text.clone(),
            reason,
        };
        let mv = position
            .parse_move(text)
            .map_err(|error| refused(error.reason))?;
        moves.push(position.format_move(mv));
        let outcome = position
            .apply(mv)
            .map_err(|error| refused(error.to_string()))?;
        revealed |= outcome.effects.iter().any(|effect| {
            matches!(
                effect,
                Effect::TurnedUp { .. } | Effect::Drew { .. } | Effect::Dealt { .. }
            )
        });
    }
    let view = position.view();
    let cards_home = view
        .zones
        .iter()
        .filter(|zone| matches!(zone.zone, Zone::Foundation(_) | Zone::Discard))
        .map(|zone| usize::from(zone.hidden) + zone.face_up.len())
        .sum();
    Ok(StateAnswer {
        won: position.is_won(),
        stuck: position.is_stuck(),
        legal: move_shapes(&position).iter().map(MoveInfo::from).collect(),
        view,
        moves,
        cards_home,
        guessed: spec.view.is_some() && revealed,
    })
}

/// Every zone of the board that `held` may be dropped on.
pub fn targets(spec: &PositionSpec, held: Held) -> Result<Vec<Zone>, EngineError> {
    let position = build(spec)?;
    let shapes = move_shapes(&position);
    Ok(position
        .view()
        .zones
        .iter()
        .map(|zone| zone.zone)
        .filter(|&to| to != held.from && move_to(&shapes, held, to).is_some())
        .collect())
}

/// The move of `shapes` that takes `held` to `to`. A card dropped on any
/// foundation goes to the one it builds on, as in the terminal.
fn move_to(shapes: &[MoveShape], held: Held, to: Zone) -> Option<&MoveShape> {
    if let Zone::Foundation(_) = to {
        shapes.iter().find(|shape| {
            shape.from == held.from
                && shape.depth == held.depth
                && matches!(shape.to, Some(Zone::Foundation(_)))
        })
    } else {
        move_between(shapes, held.from, held.depth, to)
    }
}

/// The move that takes `held` to `to`, or why there is none.
pub fn drop(spec: &PositionSpec, held: Held, to: Zone) -> Result<DropAnswer, EngineError> {
    let position = build(spec)?;
    let shapes = move_shapes(&position);
    let found = move_to(&shapes, held, to);
    Ok(match found {
        Some(shape) => DropAnswer {
            mv: Some(MoveInfo::from(shape)),
            reason: None,
        },
        None => DropAnswer {
            mv: None,
            reason: Some(refusal(&position, held, to)),
        },
    })
}

/// Why `held` cannot go to `to`, in the engine's words: the text the same
/// move typed in the notation gets. The page has no typing, so a move a
/// drop cannot make is one it does not make.
fn refusal(position: &AnyGame, held: Held, to: Zone) -> String {
    match drop_refusal(position, held.from, held.depth, to) {
        DropRefusal::Refused(reason) => reason,
        DropRefusal::NeedsTyping { .. } => {
            format!("nothing moves from {} to {to} in one move", held.from)
        }
    }
}

/// The first proved-winnable deal of `count` seeds from `first_seed`.
pub fn proved_deal(
    game: GameKind,
    first_seed: u64,
    count: u64,
    budget: u64,
) -> Result<DealAnswer, EngineError> {
    let seeds = first_seed..first_seed.saturating_add(count.min(MAX_SEEDS));
    let found = first_winnable_deal(game, seeds, Budget::positions(budget.min(MAX_BUDGET)))
        .map_err(|failure| EngineError::Solver(failure.index))?;
    Ok(match found {
        Some(deal) => DealAnswer {
            seed: deal.seed,
            proved: true,
            line: deal.line.len(),
        },
        None => DealAnswer {
            seed: first_seed,
            proved: false,
            line: 0,
        },
    })
}

#[cfg(test)]
mod tests;
