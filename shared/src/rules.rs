//! What every game's rules have in common: the [`Rules`] trait, the places
//! cards lie ([`Zone`]), what a move did ([`Outcome`]), why a move was refused
//! ([`MoveError`]), and the two ways to look at a position: the full [`Board`]
//! (every card, for inspection tools and the solver's logs) and the [`View`]
//! (only what a player may see).
//!
//! Each game is a pure state machine in its own module under `games/`; this
//! module holds no game logic.

use std::fmt;
use std::hash::Hash;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::card::{Card, Suit};
use crate::game::GameKind;

/// A place where cards lie. Indices are 0-based here; the move notation
/// numbers them from 1 for people. Serialized as `{"kind": "pile", "index": 0}`
/// or `{"kind": "stock"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "index")]
pub enum Zone {
    /// A tableau pile.
    Pile(u8),
    /// A cell (Three Blind Mice: give-only).
    Cell(u8),
    /// The face-down stock.
    Stock,
    /// The waste the stock is turned onto (Indian, Midshipman).
    Waste,
    /// A foundation.
    Foundation(u8),
    /// A reserve pile (Virginia Reel).
    Reserve(u8),
    /// A row position of Virginia Reel: `row * 8 + column`.
    Position(u8),
    /// Where discarded Aces go (Virginia Reel).
    Discard,
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Zone::Pile(i) => write!(f, "pile {}", i + 1),
            Zone::Cell(i) => write!(f, "cell {}", i + 1),
            Zone::Stock => f.write_str("the stock"),
            Zone::Waste => f.write_str("the waste"),
            Zone::Foundation(i) => write!(f, "foundation {}", i + 1),
            Zone::Reserve(i) => write!(f, "reserve {}", i + 1),
            Zone::Position(i) => write!(f, "position {}{}", (b'A' + i / 8) as char, i % 8 + 1),
            Zone::Discard => f.write_str("the discard"),
        }
    }
}

/// One consequence of a move, beyond the move itself. Effects are listed in
/// the order they happened; undo reverses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "effect")]
pub enum Effect {
    /// A face-down card came to the top of its zone and was turned face up.
    TurnedUp {
        /// Where it lies.
        zone: Zone,
        /// The card now showing.
        card: Card,
    },
    /// Thirteen cards of one suit, King down to Ace, left a pile for a foundation.
    RunRemoved {
        /// The pile they left.
        from: Zone,
        /// The foundation they went to.
        to: Zone,
        /// Their suit.
        suit: Suit,
    },
    /// An Ace was discarded.
    AceDiscarded {
        /// Where it lay.
        from: Zone,
        /// The Ace (its suit matters for undo).
        card: Card,
    },
    /// The stock's top card was turned onto the waste.
    Drew {
        /// The card now on top of the waste.
        card: Card,
    },
    /// Cards were dealt from the stock, one onto each of `count` piles.
    Dealt {
        /// How many cards left the stock.
        count: u8,
    },
}

/// The most effects one move can have (a Virginia Reel deal discarding all
/// eight Aces is the largest case).
pub const MAX_EFFECTS: usize = 24;

/// What a move did beyond moving its cards. Fixed capacity: recording it does
/// not allocate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Outcome {
    /// The effects, in the order they happened.
    pub effects: ArrayVec<Effect, MAX_EFFECTS>,
}

impl Outcome {
    /// An outcome with no effects.
    pub fn new() -> Outcome {
        Outcome::default()
    }

    /// Records an effect.
    pub fn push(&mut self, effect: Effect) {
        // Capacity covers the largest move of every game; a debug build checks it.
        debug_assert!(!self.effects.is_full(), "outcome capacity exceeded");
        let _ = self.effects.try_push(effect);
    }
}

/// The moves played so far, each with what it did, for taking them back
/// last first.
///
/// Why not a `Vec<(M, Outcome)>`: an `Outcome` has room for
/// [`MAX_EFFECTS`] effects (about 150 bytes) while most moves have none or
/// one, and a race server holds every racer's moves for the whole race.
/// Here each move costs itself and a count, and only the effects that
/// happened are kept, in one shared list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveStack<M> {
    /// Each move and how many effects it had: its effects are the last
    /// that many of `effects` while it is on top.
    moves: Vec<(M, u8)>,
    effects: Vec<Effect>,
}

impl<M> Default for MoveStack<M> {
    fn default() -> MoveStack<M> {
        MoveStack {
            moves: Vec::new(),
            effects: Vec::new(),
        }
    }
}

impl<M: Copy> MoveStack<M> {
    /// An empty stack.
    pub fn new() -> MoveStack<M> {
        MoveStack::default()
    }

    /// Records a move that was played and what it did.
    pub fn push(&mut self, mv: M, outcome: &Outcome) {
        // `MAX_EFFECTS` is far below `u8::MAX`, so the count always fits.
        let count = u8::try_from(outcome.effects.len()).unwrap_or(u8::MAX);
        self.moves.push((mv, count));
        self.effects.extend_from_slice(&outcome.effects);
    }

    /// Takes the last move off, with its outcome as `apply` returned it.
    pub fn pop(&mut self) -> Option<(M, Outcome)> {
        let (mv, count) = self.moves.pop()?;
        let start = self.effects.len().saturating_sub(usize::from(count));
        let mut outcome = Outcome::new();
        for effect in self.effects.drain(start..) {
            outcome.push(effect);
        }
        Some((mv, outcome))
    }

    /// How many moves are on the stack.
    pub fn len(&self) -> usize {
        self.moves.len()
    }

    /// Whether no move is on the stack.
    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }
}

/// Why a move was refused. A refused move changes nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum MoveError {
    /// The move names a zone this game does not have.
    #[error("there is no {zone}")]
    NoSuchZone {
        /// The zone named.
        zone: Zone,
    },
    /// The move takes a card from an empty zone.
    #[error("{zone} is empty")]
    EmptySource {
        /// The empty zone.
        zone: Zone,
    },
    /// The move asks for more cards than the zone shows face up.
    #[error("{zone} does not have {count} face-up cards")]
    NotEnoughCards {
        /// The zone.
        zone: Zone,
        /// How many cards the move asked for.
        count: u8,
    },
    /// The card named is not where the move says, or is not in play.
    #[error("{card} is not in play")]
    CardNotInPlay {
        /// The card named.
        card: Card,
    },
    /// The card does not build on the destination's top card.
    #[error("{card} does not go on {onto}")]
    DoesNotBuild {
        /// The card moved.
        card: Card,
        /// The destination's top card.
        onto: Card,
    },
    /// An empty pile takes only a King (Three Blind Mice).
    #[error("only a King may fill an empty pile, not {card}")]
    EmptyPileNeedsKing {
        /// The card offered.
        card: Card,
    },
    /// The move would leave the position as it was, e.g. a pile's bottom card
    /// moving into an empty pile.
    #[error("that move changes nothing")]
    ChangesNothing,
    /// A card goes to a foundation only on the one below it in its suit.
    #[error("{card} cannot go to a foundation yet")]
    NotNextForFoundation {
        /// The card offered.
        card: Card,
    },
    /// The source and the destination are the same zone.
    #[error("a card cannot move onto its own pile")]
    SameZone,
    /// This zone does not take cards (a Three Blind Mice cell, a home-fixed position).
    #[error("{zone} does not take cards")]
    ZoneTakesNothing {
        /// The zone.
        zone: Zone,
    },
    /// Cards in this zone may not be moved (a foundation, a home pile).
    #[error("cards in {zone} cannot move")]
    ZoneGivesNothing {
        /// The zone.
        zone: Zone,
    },
    /// The stock is empty.
    #[error("the stock is empty")]
    StockEmpty,
    /// The game is already won.
    #[error("the game is already won")]
    GameOver,
    /// The move is for a different game than the position's.
    #[error("that move belongs to another game")]
    WrongGame,

    // Virginia Reel.
    /// A gap in a Virginia Reel row is filled only with that row's base rank
    /// (a 2, 3 or 4), taken from a reserve top or from another row.
    #[error("{card} cannot fill the gap at {zone}")]
    CannotFill {
        /// The card offered as a filler.
        card: Card,
        /// The gap it was offered for.
        zone: Zone,
    },
    /// Only an Ace may be discarded (Virginia Reel).
    #[error("only an Ace can be discarded, not {card}")]
    NotAnAce {
        /// The card offered.
        card: Card,
    },
    /// Two Virginia Reel cards swap only when each belongs in the other's row.
    #[error("{first} and {second} do not belong in each other's rows")]
    CannotSwap {
        /// The card at the first position named.
        first: Card,
        /// The card at the second position named.
        second: Card,
    },
    /// A Virginia Reel swap names its lower position first, so that each swap
    /// has exactly one form.
    #[error("a swap names its lower position first")]
    SwapOutOfOrder,
}

/// A move's text that does not parse, or names nothing in this position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("cannot read move {text:?}: {reason}")]
pub struct NotationError {
    /// The text that was given.
    pub text: String,
    /// What is wrong with it, for people.
    pub reason: String,
}

impl NotationError {
    /// A notation error for `text` with a reason for people.
    pub fn new(text: &str, reason: impl Into<String>) -> NotationError {
        NotationError {
            text: text.to_string(),
            reason: reason.into(),
        }
    }
}

/// The cards of one zone, all of them, in order from bottom to top.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ZoneCards {
    /// Which zone.
    pub zone: Zone,
    /// How many of the bottom cards lie face down (the whole stock does).
    pub face_down: u8,
    /// Every card, bottom first, face-down ones included.
    pub cards: Vec<Card>,
}

/// The full position, secrets included: for inspection tools, golden tests and
/// logs, never for the wire before a race ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Board {
    /// The game.
    pub game: GameKind,
    /// Every zone, in the game's display order.
    pub zones: Vec<ZoneCards>,
}

/// The cards of one zone as a player may see them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ZoneView {
    /// Which zone.
    pub zone: Zone,
    /// How many cards lie face down under the face-up ones (for the stock, its size).
    pub hidden: u8,
    /// The face-up cards, bottom first.
    pub face_up: Vec<Card>,
}

/// What a player may see of a position: no face-down card, no stock order.
/// A separate type from every game state and from [`Board`], so a secret
/// cannot reach the wire by accident: it has nowhere to go.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct View {
    /// The game.
    pub game: GameKind,
    /// Every zone, in the game's display order.
    pub zones: Vec<ZoneView>,
}

impl Board {
    /// Every card on the board, face-down and stock included.
    pub fn all_cards(&self) -> impl Iterator<Item = Card> + '_ {
        self.zones
            .iter()
            .flat_map(|zone| zone.cards.iter().copied())
    }

    /// The view of this board: face-down cards become counts.
    pub fn to_view(&self) -> View {
        View {
            game: self.game,
            zones: self
                .zones
                .iter()
                .map(|zone| ZoneView {
                    zone: zone.zone,
                    hidden: zone.face_down,
                    face_up: zone.cards[usize::from(zone.face_down).min(zone.cards.len())..]
                        .to_vec(),
                })
                .collect(),
        }
    }
}

/// The rules of one game: a pure, deterministic state machine.
///
/// Implementations do no I/O, read no clock and use no randomness beyond the
/// seed given to their deal. `legal_moves`, `apply` and `undo` do not allocate
/// once the caller's move buffer has grown to its working size, so the
/// solver can call them millions of times a second.
pub trait Rules: Clone + Eq + Hash + fmt::Debug + Send + Sync + 'static {
    /// A move of this game. Small and `Copy`; its text form is the move notation.
    type Move: Copy + Eq + Hash + fmt::Debug + Send + Sync + 'static;

    /// Which game this is.
    fn kind(&self) -> GameKind;

    /// Clears `moves` and fills it with every legal move, in a fixed order.
    fn legal_moves(&self, moves: &mut Vec<Self::Move>);

    /// Plays `mv` if it is legal, with its automatic consequences (turning
    /// cards up, removing runs, discarding Aces), and says what happened.
    /// An illegal move is refused with a reason and changes nothing.
    fn apply(&mut self, mv: Self::Move) -> Result<Outcome, MoveError>;

    /// Takes back `mv`, which must be the last move applied, given what
    /// `apply` returned for it. Restores the state exactly.
    fn undo(&mut self, mv: Self::Move, outcome: &Outcome);

    /// Whether the game is won.
    fn is_won(&self) -> bool;

    /// Whether the game can no longer progress: no legal move, and for games
    /// with a stock nothing left in it that could help. A won game is not stuck.
    fn is_stuck(&self) -> bool;

    /// The full position, secrets included.
    fn board(&self) -> Board;

    /// What a player may see of the position.
    ///
    /// There is no viewer argument on purpose: in these four games a
    /// face-down card or the stock's order is secret from the player who owns
    /// the board as much as from opponents and spectators, so every viewer is
    /// shown the same thing. Who receives a view is the server's decision.
    fn view(&self) -> View {
        self.board().to_view()
    }

    /// Reads a move in the notation of `docs/NOTATION.md`, resolved against
    /// this position (a card named by rank and suit must be found here).
    fn parse_move(&self, text: &str) -> Result<Self::Move, NotationError>;

    /// Writes a move in the canonical notation; `parse_move` reads it back.
    fn format_move(&self, mv: Self::Move) -> String;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{Card, Suit};

    fn outcome(effects: &[Effect]) -> Outcome {
        let mut outcome = Outcome::new();
        for &effect in effects {
            outcome.push(effect);
        }
        outcome
    }

    #[test]
    fn a_move_stack_gives_each_move_back_with_its_own_effects_last_first() {
        let turned = Effect::TurnedUp {
            zone: Zone::Pile(3),
            card: Card::new(Suit::Hearts, 7),
        };
        let drew = Effect::Drew {
            card: Card::new(Suit::Spades, 2),
        };
        let dealt = Effect::Dealt { count: 8 };
        let played: [(u8, Outcome); 4] = [
            (1, outcome(&[turned])),
            (2, outcome(&[])),
            (3, outcome(&[drew, dealt, turned])),
            (4, outcome(&[])),
        ];
        let mut stack = MoveStack::new();
        for (mv, outcome) in &played {
            stack.push(*mv, outcome);
        }
        assert_eq!(stack.len(), 4);
        for (mv, outcome) in played.iter().rev() {
            assert_eq!(stack.pop(), Some((*mv, outcome.clone())));
        }
        assert!(stack.is_empty());
        assert_eq!(stack.pop(), None);
    }
}
