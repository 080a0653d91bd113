//! Why a card dropped on a zone does not move there, in the words a typed
//! move gets.
//!
//! A client that lets a person drag or pick a card (the terminal, the web
//! page) finds the move a drop makes among the [`MoveShape`]s; when there
//! is none, the person is owed the rules engine's reason, the same text the
//! move typed in the notation gets. The drop is written as that notation
//! ([`typed_move`]), read and played on the position, and the engine's
//! refusal is the answer. A drop the notation cannot say gets a sentence
//! about what moves in that game instead. Kept apart from the shapes
//! because it is the one place that turns a gesture into a refusal, so
//! every client says the same thing.
//!
//! [`MoveShape`]: super::MoveShape

use crate::any::AnyGame;
use crate::game::GameKind;
use crate::rules::{Rules, Zone};

/// Why a drop made no move ([`drop_refusal`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DropRefusal {
    /// The rules refuse it: the reason for a person, the same text the
    /// move typed in the notation gets.
    Refused(String),
    /// The move is legal but a drop cannot make it: it needs more than a
    /// drop says (a Virginia Reel release whose refill chain must be
    /// typed). `typed` is the notation as far as the drop gives it.
    NeedsTyping {
        /// The notation of the drop: source and target.
        typed: String,
    },
}

/// Why the card `depth` from the top of `from` does not move to `to` in
/// `position`, for a drop that found no move among the position's shapes.
pub fn drop_refusal(position: &AnyGame, from: Zone, depth: usize, to: Zone) -> DropRefusal {
    let game = position.kind();
    let unmovable = || {
        DropRefusal::Refused(match game {
            GameKind::ThreeBlindMice => {
                "cards move only onto piles; a finished run K to A goes home by itself".to_string()
            }
            GameKind::Indian | GameKind::Midshipman if depth > 0 => {
                "only the top card moves".to_string()
            }
            _ => format!("nothing moves from {from} to {to}"),
        })
    };
    if game != GameKind::ThreeBlindMice && depth > 0 {
        return unmovable();
    }
    let Some(text) = typed_move(game, from, depth, to) else {
        return unmovable();
    };
    match position.parse_move(&text) {
        Err(error) => DropRefusal::Refused(error.reason),
        Ok(mv) => match position.clone().apply(mv) {
            Err(error) => DropRefusal::Refused(error.to_string()),
            Ok(_) => DropRefusal::NeedsTyping { typed: text },
        },
    }
}

/// The notation of moving the card `depth` from the top of `from` onto
/// `to`, as a person would type it, where the game has one.
pub fn typed_move(game: GameKind, from: Zone, depth: usize, to: Zone) -> Option<String> {
    let source = match (game, from) {
        (GameKind::ThreeBlindMice, Zone::Pile(pile)) => format!("{}:{}", pile + 1, depth + 1),
        (GameKind::ThreeBlindMice, Zone::Cell(cell)) => format!("c{}", cell + 1),
        (GameKind::Indian | GameKind::Midshipman, Zone::Pile(pile)) => format!("{}", pile + 1),
        (GameKind::Indian | GameKind::Midshipman, Zone::Waste) => "w".into(),
        (GameKind::VirginiaReel, Zone::Reserve(reserve)) => format!("r{}", reserve + 1),
        (GameKind::VirginiaReel, Zone::Position(index)) => position_name(index),
        _ => return None,
    };
    let target = match to {
        Zone::Pile(pile) => format!("{}", pile + 1),
        Zone::Foundation(_) if matches!(game, GameKind::Indian | GameKind::Midshipman) => {
            "f".into()
        }
        Zone::Position(index) => position_name(index),
        Zone::Discard => "x".into(),
        _ => return None,
    };
    Some(format!("{source}>{target}"))
}

/// A Virginia Reel position as the notation writes it: `B4`.
fn position_name(index: u8) -> String {
    format!("{}{}", char::from(b'A' + index / 8), index % 8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{move_between, move_shapes};

    /// Checks the refusal of a drop on the deal of `seed`.
    fn check(game: GameKind, seed: u64, (from, depth, to): (Zone, usize, Zone), expected: &str) {
        let position = AnyGame::deal(game, seed);
        assert_eq!(
            drop_refusal(&position, from, depth, to),
            DropRefusal::Refused(expected.to_string()),
            "{game} {seed}: {from} ({depth}) to {to}"
        );
    }

    #[test]
    fn a_drop_the_notation_cannot_say_gets_what_moves_in_the_game() {
        let tbm_only_piles =
            "cards move only onto piles; a finished run K to A goes home by itself";
        check(
            GameKind::ThreeBlindMice,
            1,
            (Zone::Pile(0), 0, Zone::Cell(0)),
            tbm_only_piles,
        );
        check(
            GameKind::Indian,
            1,
            (Zone::Pile(0), 1, Zone::Pile(1)),
            "only the top card moves",
        );
        check(
            GameKind::Midshipman,
            1,
            (Zone::Pile(3), 2, Zone::Foundation(0)),
            "only the top card moves",
        );
        check(
            GameKind::VirginiaReel,
            1,
            (Zone::Reserve(0), 1, Zone::Position(9)),
            "nothing moves from reserve 1 to position B2",
        );
    }

    /// Every pile-to-pile drop of an Indian deal that makes no move gets
    /// the reason the same move typed gets from the rules engine.
    #[test]
    fn a_refused_drop_gets_the_reason_of_the_typed_move() {
        let position = AnyGame::deal(GameKind::Indian, 1);
        let shapes = move_shapes(&position);
        let mut refused = 0;
        for from in 0..10 {
            for to in (0..10).filter(|&to| to != from) {
                let (from, to) = (Zone::Pile(from), Zone::Pile(to));
                if move_between(&shapes, from, 0, to).is_some() {
                    continue;
                }
                let text = typed_move(GameKind::Indian, from, 0, to).expect("piles are typed");
                let mv = position.parse_move(&text).expect("pile to pile reads");
                let engine = position
                    .clone()
                    .apply(mv)
                    .expect_err("no shape, so illegal");
                assert_eq!(
                    drop_refusal(&position, from, 0, to),
                    DropRefusal::Refused(engine.to_string())
                );
                refused += 1;
            }
        }
        assert!(refused > 0);
    }

    #[test]
    fn drops_are_typed_as_a_person_types_them() {
        let cases = [
            (
                GameKind::ThreeBlindMice,
                Zone::Pile(2),
                4,
                Zone::Pile(0),
                Some("3:5>1"),
            ),
            (
                GameKind::ThreeBlindMice,
                Zone::Cell(1),
                0,
                Zone::Pile(6),
                Some("c2>7"),
            ),
            (
                GameKind::ThreeBlindMice,
                Zone::Pile(0),
                0,
                Zone::Cell(0),
                None,
            ),
            (
                GameKind::Indian,
                Zone::Waste,
                0,
                Zone::Foundation(3),
                Some("w>f"),
            ),
            (
                GameKind::Midshipman,
                Zone::Pile(9),
                0,
                Zone::Pile(0),
                Some("10>1"),
            ),
            (
                GameKind::VirginiaReel,
                Zone::Reserve(7),
                0,
                Zone::Position(23),
                Some("r8>C8"),
            ),
            (
                GameKind::VirginiaReel,
                Zone::Position(0),
                0,
                Zone::Discard,
                Some("A1>x"),
            ),
            (
                GameKind::VirginiaReel,
                Zone::Position(8),
                0,
                Zone::Foundation(0),
                None,
            ),
        ];
        for (game, from, depth, to, expected) in cases {
            assert_eq!(
                typed_move(game, from, depth, to).as_deref(),
                expected,
                "{game}: {from} ({depth}) to {to}"
            );
        }
    }
}
