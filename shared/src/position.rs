//! Positions a client can compute with, from what it may see.
//!
//! A client receives a [`View`]: face-down cards and the stock's order are
//! secret. Which moves are legal does not depend on them (a face-down card
//! never moves, and "turn the stock" is legal whatever its next card), so
//! [`guess`] fills every hidden place with the cards not yet seen, in an
//! order drawn from a number, and builds a real position of the rules
//! engine. The client uses it to list legal moves, to find a card's natural
//! place and to read the notation; the bots plan a solver line on it (with
//! the game's own search, through `crate::solver::any`) and plan
//! again whenever a turned card proves the guess wrong.
//!
//! Moves are described by what they do on the board ([`MoveShape`]): which
//! card leaves which zone and where it lands, read from the engine's own
//! move value (each game's move names its source, its destination and how
//! many cards go), never from comparing boards before and after. What the
//! engine does on its own after a move (a card turned up, a finished run
//! sent home, an Ace discarded) is the move's [`Outcome`], kept with the
//! shape: a move that completes a run still lands on its pile, and the run
//! going home makes it the most natural move of its card.
//!
//! A drop that finds no move gets the rules engine's reason from
//! [`drop_refusal`] (`position/refusal.rs`), the same for every client.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::any::{AnyGame, AnyMove};
use crate::card::Card;
use crate::deck::ordered_pack;
use crate::game::GameKind;
use crate::games::forty_thieves::{FortyThieves, FtMove};
use crate::games::three_blind_mice::{TbmMove, ThreeBlindMice};
use crate::games::virginia_reel::{ReelMove, ReleaseTarget, VirginiaReel};
use crate::rules::{Effect, Outcome, Rules, View, Zone};
use crate::splitmix::SplitMix64;

mod refusal;

pub use refusal::{DropRefusal, drop_refusal, typed_move};

/// A view that no position of its game can have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the board cannot be read: {0}")]
pub struct GuessError(pub String);

/// A position with the view's visible cards where they are and the unseen
/// cards, shuffled by `variation`, in the hidden places.
pub fn guess(view: &View, variation: u64) -> Result<AnyGame, GuessError> {
    let mut unseen = unseen_cards(view)?;
    shuffle(&mut unseen, variation);
    fill(view, unseen)
}

/// The position with `view`'s visible cards and `hidden`, in order, in its
/// hidden places: zone by zone in the view's order, each zone's from the
/// bottom.
fn fill(view: &View, hidden: Vec<Card>) -> Result<AnyGame, GuessError> {
    let mut unseen = hidden.into_iter();
    let mut take = |count: u8| -> Result<Vec<Card>, GuessError> {
        let cards: Vec<Card> = unseen.by_ref().take(usize::from(count)).collect();
        if cards.len() == usize::from(count) {
            Ok(cards)
        } else {
            Err(GuessError("more hidden cards than unseen ones".into()))
        }
    };
    let cards = |cards: &[Card]| {
        cards
            .iter()
            .map(Card::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut text = String::new();
    match view.game {
        GameKind::ThreeBlindMice => {
            for zone in &view.zones {
                match zone.zone {
                    Zone::Pile(pile) => {
                        let hidden = take(zone.hidden)?;
                        let bar = if hidden.is_empty() { "" } else { " |" };
                        let _ = writeln!(
                            text,
                            "p{}: {}{bar} {}",
                            pile + 1,
                            cards(&hidden),
                            cards(&zone.face_up)
                        );
                    }
                    Zone::Cell(cell) => {
                        let _ = writeln!(text, "c{}: {}", cell + 1, cards(&zone.face_up));
                    }
                    Zone::Foundation(foundation) => {
                        if let Some(king) = zone.face_up.first() {
                            let _ = writeln!(
                                text,
                                "f{}: K{suit}..A{suit}",
                                foundation + 1,
                                suit = king.suit().letter()
                            );
                        }
                    }
                    _ => {}
                }
            }
            ThreeBlindMice::from_fixture(&text)
                .map(AnyGame::ThreeBlindMice)
                .map_err(GuessError)
        }
        GameKind::Indian | GameKind::Midshipman => {
            let _ = writeln!(text, "game: {}", view.game.slug());
            for zone in &view.zones {
                match zone.zone {
                    Zone::Pile(pile) => {
                        let hidden = take(zone.hidden)?;
                        let bar = if hidden.is_empty() { "" } else { " |" };
                        let _ = writeln!(
                            text,
                            "p{}: {}{bar} {}",
                            pile + 1,
                            cards(&hidden),
                            cards(&zone.face_up)
                        );
                    }
                    Zone::Stock => {
                        let mut stock = take(zone.hidden)?;
                        stock.extend_from_slice(&zone.face_up);
                        let _ = writeln!(text, "stock: {}", cards(&stock));
                    }
                    Zone::Waste => {
                        let _ = writeln!(text, "waste: {}", cards(&zone.face_up));
                    }
                    Zone::Foundation(foundation) => {
                        if let Some(top) = zone.face_up.last() {
                            let _ = writeln!(text, "f{}: {top}", foundation + 1);
                        }
                    }
                    _ => {}
                }
            }
            FortyThieves::from_fixture(&text)
                .map(AnyGame::FortyThieves)
                .map_err(GuessError)
        }
        GameKind::VirginiaReel => {
            let join = |cards: &[Card]| {
                cards
                    .iter()
                    .map(Card::to_string)
                    .collect::<Vec<_>>()
                    .join(".")
            };
            let mut rows = vec![Vec::new(); 3];
            let mut reserves = Vec::new();
            let mut stock = Vec::new();
            let mut discard = Vec::new();
            for zone in &view.zones {
                match zone.zone {
                    Zone::Position(position) => {
                        let token = match zone.face_up.first() {
                            Some(base) if zone.face_up.len() == 4 => format!("{base}*"),
                            _ => join(&zone.face_up),
                        };
                        rows.get_mut(usize::from(position / 8))
                            .ok_or_else(|| GuessError(format!("no {}", zone.zone)))?
                            .push(token);
                    }
                    Zone::Reserve(_) => reserves.push(if zone.face_up.is_empty() {
                        "-".to_string()
                    } else {
                        join(&zone.face_up)
                    }),
                    Zone::Stock => {
                        stock = take(zone.hidden)?;
                        stock.extend_from_slice(&zone.face_up);
                    }
                    Zone::Discard => discard = zone.face_up.clone(),
                    _ => {}
                }
            }
            for (label, row) in ["A", "B", "C"].iter().zip(&rows) {
                let _ = writeln!(text, "{label}: {}", row.join(" "));
            }
            let _ = writeln!(text, "r: {}", reserves.join(" "));
            let _ = writeln!(text, "s: {}", cards(&stock));
            let _ = writeln!(text, "x: {}", cards(&discard));
            VirginiaReel::from_fixture(&text)
                .map(AnyGame::VirginiaReel)
                .map_err(GuessError)
        }
    }
}

/// The cards of the game's packs that the view does not show, in pack order.
fn unseen_cards(view: &View) -> Result<Vec<Card>, GuessError> {
    let mut counts: HashMap<Card, usize> = HashMap::new();
    for card in ordered_pack(view.game.decks()) {
        *counts.entry(card).or_default() += 1;
    }
    for card in view.zones.iter().flat_map(|zone| zone.face_up.iter()) {
        let count = counts
            .get_mut(card)
            .filter(|count| **count > 0)
            .ok_or_else(|| GuessError(format!("{card} shows more often than the packs hold")))?;
        *count -= 1;
    }
    Ok(ordered_pack(view.game.decks())
        .into_iter()
        .filter(|card| {
            counts.get_mut(card).is_some_and(|count| {
                let keep = *count > 0;
                *count = count.saturating_sub(1);
                keep
            })
        })
        .collect())
}

/// A small Fisher–Yates driven by SplitMix64: guesses need variety, not secrecy.
fn shuffle(cards: &mut [Card], variation: u64) {
    let mut generator = SplitMix64::new(variation);
    for index in (1..cards.len()).rev() {
        let other = (generator.next_u64() % (index as u64 + 1)) as usize;
        cards.swap(index, other);
    }
}

/// What a move does, as the engine's move says it: which card leaves which
/// zone (the cards lying on it go along) and where it lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveShape {
    /// The move.
    pub mv: AnyMove,
    /// Its canonical notation.
    pub text: String,
    /// The zone the moved card leaves (the stock for a turn or a deal).
    pub from: Zone,
    /// The moved card, counted from the top of `from` (0: the top card).
    /// The cards above it move with it.
    pub depth: usize,
    /// Where the card lands, if it stays on the board's zones (a turn of
    /// the stock or a deal names none).
    pub to: Option<Zone>,
    /// Whether `to` was empty before the move.
    pub onto_empty: bool,
    /// What the engine did on its own after the move: cards turned up, a
    /// finished run sent home, Aces discarded.
    pub outcome: Outcome,
}

impl MoveShape {
    /// Where this move puts the card `depth` from the top of `from`, if it
    /// moves that card: `to` for its own card, and for a Virginia Reel swap
    /// also the first place for the second's card, so a swap is made by
    /// picking either of the two cards.
    fn takes(&self, from: Zone, depth: usize) -> Option<Option<Zone>> {
        if self.from == from && self.depth == depth {
            return Some(self.to);
        }
        match self.mv {
            AnyMove::VirginiaReel(ReelMove::Swap { .. }) if depth == 0 && self.to == Some(from) => {
                Some(Some(self.from))
            }
            _ => None,
        }
    }

    /// Whether the move sends a finished run home.
    pub fn sends_a_run_home(&self) -> bool {
        self.outcome
            .effects
            .iter()
            .any(|effect| matches!(effect, Effect::RunRemoved { .. }))
    }
}

/// Every legal move of `position`, with its shape.
pub fn move_shapes(position: &AnyGame) -> Vec<MoveShape> {
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    let view = position.view();
    moves
        .into_iter()
        .filter_map(|mv| shape_of(position, &view, mv))
        .collect()
}

/// The shape of `mv` on `position` (whose view is `view`), read from the
/// move value, with the outcome of playing it on a copy; `None` if the
/// engine refuses it.
fn shape_of(position: &AnyGame, view: &View, mv: AnyMove) -> Option<MoveShape> {
    let (from, depth, to) = ends(position, mv)?;
    let outcome = position.clone().apply(mv).ok()?;
    let onto_empty = to.is_some_and(|to| {
        view.zones
            .iter()
            .find(|zone| zone.zone == to)
            .is_some_and(|zone| zone.hidden == 0 && zone.face_up.is_empty())
    });
    Some(MoveShape {
        mv,
        text: position.format_move(mv),
        from,
        depth,
        to,
        onto_empty,
        outcome,
    })
}

/// Where each game's move takes its card from (zone and depth from the top)
/// and where it puts it, from the move's own fields. `None` for a move of
/// another game or one that names no card.
fn ends(position: &AnyGame, mv: AnyMove) -> Option<(Zone, usize, Option<Zone>)> {
    let ends = match mv {
        AnyMove::ThreeBlindMice(TbmMove::PileToPile { from, count, to }) => (
            Zone::Pile(from),
            usize::from(count).checked_sub(1)?,
            Some(Zone::Pile(to)),
        ),
        AnyMove::ThreeBlindMice(TbmMove::CellToPile { cell, to }) => {
            (Zone::Cell(cell), 0, Some(Zone::Pile(to)))
        }
        AnyMove::FortyThieves(FtMove::PileToPile { from, to }) => {
            (Zone::Pile(from), 0, Some(Zone::Pile(to)))
        }
        AnyMove::FortyThieves(FtMove::PileToFoundation { from, card }) => {
            (Zone::Pile(from), 0, Some(foundation_for(position, card)?))
        }
        AnyMove::FortyThieves(FtMove::WasteToPile { to }) => (Zone::Waste, 0, Some(Zone::Pile(to))),
        AnyMove::FortyThieves(FtMove::WasteToFoundation { card }) => {
            (Zone::Waste, 0, Some(foundation_for(position, card)?))
        }
        AnyMove::FortyThieves(FtMove::Draw) | AnyMove::VirginiaReel(ReelMove::Deal) => {
            (Zone::Stock, 0, None)
        }
        AnyMove::VirginiaReel(ReelMove::Build { reserve, to }) => {
            (Zone::Reserve(reserve), 0, Some(Zone::Position(to)))
        }
        AnyMove::VirginiaReel(ReelMove::Release { from, to, .. }) => (
            Zone::Position(from),
            0,
            Some(match to {
                ReleaseTarget::Home(to) => Zone::Position(to),
                ReleaseTarget::Discard => Zone::Discard,
            }),
        ),
        AnyMove::VirginiaReel(ReelMove::Swap { first, second }) => {
            (Zone::Position(first), 0, Some(Zone::Position(second)))
        }
    };
    Some(ends)
}

/// The foundation an Indian or Midshipman card goes to: of its suit's two
/// (`2s` and `2s + 1`), the lower-index one it builds on, as the engine
/// fills them.
fn foundation_for(position: &AnyGame, card: Card) -> Option<Zone> {
    let AnyGame::FortyThieves(game) = position else {
        return None;
    };
    let first = 2 * card.suit().index();
    (first..first + 2)
        .find(|&foundation| game.foundation_rank(foundation) + 1 == card.rank())
        .and_then(|foundation| u8::try_from(foundation).ok())
        .map(Zone::Foundation)
}

/// How natural a landing place is: home first, then onto a card, then an
/// empty zone (as the seeds describe a click on a card).
fn naturalness(shape: &MoveShape, to: Option<Zone>) -> u8 {
    match to {
        _ if shape.sends_a_run_home() => 0,
        Some(Zone::Foundation(_) | Zone::Discard) | None => 0,
        Some(_) if !shape.onto_empty => 1,
        Some(_) => 2,
    }
}

/// The natural move of the card `depth` from the top of `from`: onto the
/// first pile it builds on (home first), else into the first empty zone
/// that takes it.
pub fn natural_move(shapes: &[MoveShape], from: Zone, depth: usize) -> Option<&MoveShape> {
    shapes
        .iter()
        .filter_map(|shape| Some((shape, shape.takes(from, depth)?)))
        .min_by_key(|&(shape, to)| (naturalness(shape, to), to))
        .map(|(shape, _)| shape)
}

/// The move that takes the card `depth` from the top of `from` to `to`.
pub fn move_between(
    shapes: &[MoveShape],
    from: Zone,
    depth: usize,
    to: Zone,
) -> Option<&MoveShape> {
    shapes
        .iter()
        .filter(|shape| shape.takes(from, depth) == Some(Some(to)))
        .min_by_key(|shape| shape.text.len())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::rules::ZoneView;
    use crate::solver::Budget;
    use crate::solver::any::solve_deal;

    use super::*;

    /// Three Blind Mice deals the solver wins within its budget (most deals
    /// are proved lost at once); the first is a deal a player reported.
    const TBM_SEEDS: [u64; 8] = [128_917_432, 11, 18, 20, 23, 30, 40, 57];

    /// The solver's winning line for a Three Blind Mice deal, played from
    /// the deal: every position before a move, with the move.
    fn tbm_line(seed: u64) -> Vec<(AnyGame, AnyMove)> {
        let report = solve_deal(GameKind::ThreeBlindMice, seed, Budget::positions(200_000))
            .expect("the solver's line replays");
        assert!(!report.solution.is_empty(), "seed {seed} is not solved");
        let mut position = AnyGame::deal(GameKind::ThreeBlindMice, seed);
        let mut line = Vec::new();
        for text in &report.solution {
            let mv = position
                .parse_move(text)
                .expect("the solver's notation reads");
            line.push((position.clone(), mv));
            position.apply(mv).expect("the solver's move is legal");
        }
        assert!(position.is_won(), "seed {seed}");
        line
    }

    /// Where the engine's move takes its card from and puts it, as the
    /// cursor names it: zone, depth from the top, destination.
    fn tbm_ends(mv: AnyMove) -> (Zone, usize, Zone) {
        match mv {
            AnyMove::ThreeBlindMice(TbmMove::PileToPile { from, count, to }) => {
                (Zone::Pile(from), usize::from(count) - 1, Zone::Pile(to))
            }
            AnyMove::ThreeBlindMice(TbmMove::CellToPile { cell, to }) => {
                (Zone::Cell(cell), 0, Zone::Pile(to))
            }
            other => panic!("not a Three Blind Mice move: {other:?}"),
        }
    }

    /// How many runs `mv` sends home (one move can free a finished run
    /// lying under the one it completes).
    fn runs_sent_home(position: &AnyGame, mv: AnyMove) -> usize {
        let mut after = position.clone();
        let outcome = after.apply(mv).expect("a legal move");
        outcome
            .effects
            .iter()
            .filter(|effect| matches!(effect, Effect::RunRemoved { .. }))
            .count()
    }

    /// The move that completes a run sends it home, so the
    /// destination pile no longer shows the cards moved; space and
    /// pick-and-drop must still find it. Every such move of whole won
    /// games, read from the view as the client reads it.
    #[test]
    fn a_move_that_sends_a_run_home_is_the_natural_move_and_the_move_between_its_piles() {
        let mut checked = 0;
        for seed in TBM_SEEDS {
            let mut runs = 0;
            for (position, mv) in tbm_line(seed) {
                let sent_home = runs_sent_home(&position, mv);
                if sent_home == 0 {
                    continue;
                }
                runs += sent_home;
                let text = position.format_move(mv);
                let seen = guess(&position.view(), 0).expect("the view reads");
                let shapes = move_shapes(&seen);
                let (from, depth, to) = tbm_ends(mv);
                assert_eq!(
                    natural_move(&shapes, from, depth).map(|shape| shape.text.as_str()),
                    Some(text.as_str()),
                    "seed {seed}: natural move of {from} depth {depth}"
                );
                assert_eq!(
                    move_between(&shapes, from, depth, to).map(|shape| shape.text.as_str()),
                    Some(text.as_str()),
                    "seed {seed}: {from} depth {depth} to {to}"
                );
                checked += 1;
            }
            assert_eq!(runs, 4, "seed {seed}: every suit's run goes home once");
        }
        assert!(checked >= TBM_SEEDS.len(), "{checked} moves checked");
    }

    /// A whole won game by pick-and-drop only: every move of the solver's
    /// line is the move between its two zones.
    #[test]
    fn every_move_of_a_won_three_blind_mice_game_is_a_move_between_two_zones() {
        for seed in TBM_SEEDS {
            for (position, mv) in tbm_line(seed) {
                let text = position.format_move(mv);
                let shapes = move_shapes(&guess(&position.view(), 0).expect("the view reads"));
                let (from, depth, to) = tbm_ends(mv);
                assert_eq!(
                    move_between(&shapes, from, depth, to).map(|shape| shape.text.as_str()),
                    Some(text.as_str()),
                    "seed {seed}"
                );
            }
        }
    }

    /// A position a player reported: K♦…8♦ on pile 1, 7♦…A♦ on pile 5.
    #[test]
    fn seven_of_diamonds_onto_pile_one_sends_diamonds_home() {
        let position = AnyGame::ThreeBlindMice(
            ThreeBlindMice::from_fixture(
                "p1: Kd Qd Jd Td 9d 8d\n\
                 p5: Kc | Qc 7d 6d 5d 4d 3d 2d Ad\n",
            )
            .expect("a fixture"),
        );
        let shapes = move_shapes(&position);
        let text = |shape: Option<&MoveShape>| shape.map(|shape| shape.text.clone());
        assert_eq!(
            text(natural_move(&shapes, Zone::Pile(4), 6)),
            Some("7d>1".into())
        );
        assert_eq!(
            text(move_between(&shapes, Zone::Pile(4), 6, Zone::Pile(0))),
            Some("7d>1".into())
        );
    }

    /// The guess of a deal's view shows the same view and has the same moves.
    #[test]
    fn guesses_agree_with_the_view_and_the_legal_moves() {
        for game in GameKind::ALL {
            for seed in [1, 2, 3] {
                let truth = AnyGame::deal(game, seed);
                for variation in [0, 7] {
                    let guessed = guess(&truth.view(), variation).expect("a dealt view reads");
                    assert_eq!(guessed.view(), truth.view(), "{game} seed {seed}");
                    let texts = |position: &AnyGame| {
                        let mut moves = Vec::new();
                        position.legal_moves(&mut moves);
                        moves
                            .iter()
                            .map(|&mv| position.format_move(mv))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(texts(&guessed), texts(&truth), "{game} seed {seed}");
                }
            }
        }
    }

    #[test]
    fn every_legal_move_has_a_shape_and_the_stock_turns_naturally() {
        for game in GameKind::ALL {
            let position = AnyGame::deal(game, 5);
            let mut moves = Vec::new();
            position.legal_moves(&mut moves);
            let shapes = move_shapes(&position);
            assert_eq!(shapes.len(), moves.len(), "{game}");
            for shape in &shapes {
                assert_eq!(
                    natural_move(&shapes, shape.from, shape.depth).map(|s| s.from),
                    Some(shape.from)
                );
            }
        }
        let indian = AnyGame::deal(GameKind::Indian, 5);
        let shapes = move_shapes(&indian);
        assert_eq!(
            natural_move(&shapes, Zone::Stock, 0).map(|shape| shape.text.as_str()),
            Some("s")
        );
    }

    /// The kind of a move, for counting which kinds a test has seen.
    fn kind(shape: &MoveShape) -> &'static str {
        match shape.mv {
            AnyMove::ThreeBlindMice(TbmMove::PileToPile { .. }) if shape.sends_a_run_home() => {
                "pile to pile, the run home"
            }
            AnyMove::ThreeBlindMice(TbmMove::PileToPile { count: 1, .. }) => {
                "one card pile to pile"
            }
            AnyMove::ThreeBlindMice(TbmMove::PileToPile { .. }) => "cards pile to pile",
            AnyMove::ThreeBlindMice(TbmMove::CellToPile { .. }) => "cell to pile",
            AnyMove::FortyThieves(FtMove::PileToPile { .. }) => "pile to pile",
            AnyMove::FortyThieves(FtMove::PileToFoundation { .. }) => "pile to foundation",
            AnyMove::FortyThieves(FtMove::WasteToPile { .. }) => "waste to pile",
            AnyMove::FortyThieves(FtMove::WasteToFoundation { .. }) => "waste to foundation",
            AnyMove::FortyThieves(FtMove::Draw) => "draw",
            AnyMove::VirginiaReel(ReelMove::Build { .. }) => "build",
            AnyMove::VirginiaReel(ReelMove::Release {
                to: ReleaseTarget::Home(_),
                chain,
                ..
            }) if chain.fillers().is_empty() => "release home",
            AnyMove::VirginiaReel(ReelMove::Release {
                to: ReleaseTarget::Home(_),
                ..
            }) => "release home through a chain",
            AnyMove::VirginiaReel(ReelMove::Release {
                to: ReleaseTarget::Discard,
                ..
            }) => "release to the discard",
            AnyMove::VirginiaReel(ReelMove::Swap { .. }) => "swap",
            AnyMove::VirginiaReel(ReelMove::Deal) => "deal",
        }
    }

    /// Positions to check shapes on: `seeds`' deals and every position of
    /// a walk of `steps` moves from each, each move the first that sends a
    /// card home, else one drawn from the step (not a plan: variety).
    fn walk(game: GameKind, seeds: &[u64], steps: usize) -> Vec<AnyGame> {
        let mut positions = Vec::new();
        for &seed in seeds {
            let mut position = AnyGame::deal(game, seed);
            for step in 0..steps {
                positions.push(position.clone());
                let shapes = move_shapes(&position);
                let home = shapes.iter().find(|shape| {
                    shape.sends_a_run_home()
                        || matches!(shape.to, Some(Zone::Foundation(_) | Zone::Discard))
                });
                let index = (step * 7 + seed as usize) % shapes.len().max(1);
                let Some(shape) = home.or(shapes.get(index)) else {
                    break;
                };
                position.apply(shape.mv).expect("a legal move");
            }
        }
        positions
    }

    fn zone(view: &View, zone: Zone) -> &ZoneView {
        view.zones
            .iter()
            .find(|z| z.zone == zone)
            .unwrap_or_else(|| panic!("{zone} is not on the board"))
    }

    fn total(zone: &ZoneView) -> usize {
        usize::from(zone.hidden) + zone.face_up.len()
    }

    /// The card at height `height` of a zone, `None` if face down or absent.
    fn card_at(zone: &ZoneView, height: usize) -> Option<Card> {
        height
            .checked_sub(usize::from(zone.hidden))
            .and_then(|index| zone.face_up.get(index).copied())
    }

    /// Checks one shape against the board the engine leaves: the source
    /// shows the moved card face up at the shape's depth; the card lands on
    /// `to` on top of what `to` held (or, for a swap, in its place; or goes
    /// home from `to` with its finished run); the cards above it go along;
    /// and pick-and-drop and space over the same card and target find a
    /// move. Returns what is wrong, for the failure message.
    fn check_shape(
        position: &AnyGame,
        shapes: &[MoveShape],
        shape: &MoveShape,
    ) -> Result<(), String> {
        let before = position.view();
        let mut after = position.clone();
        let outcome = after.apply(shape.mv).map_err(|error| error.to_string())?;
        let after = after.view();
        if outcome != shape.outcome {
            return Err(format!(
                "outcome {:?} is not the engine's {outcome:?}",
                shape.outcome
            ));
        }
        if natural_move(shapes, shape.from, shape.depth).is_none() {
            return Err("space finds no move for the card".into());
        }
        if shape.from == Zone::Stock {
            let (source_before, source_after) =
                (zone(&before, Zone::Stock), zone(&after, Zone::Stock));
            return match shape.to {
                None if total(source_after) < total(source_before) => Ok(()),
                None => Err("the stock did not shrink".into()),
                Some(to) => Err(format!("a stock move names {to}")),
            };
        }
        let source = zone(&before, shape.from);
        let card = source
            .face_up
            .iter()
            .rev()
            .nth(shape.depth)
            .copied()
            .ok_or_else(|| format!("{} shows no card at depth {}", shape.from, shape.depth))?;
        let to = shape.to.ok_or("no destination")?;
        if to == shape.from {
            return Err("the card lands where it was".into());
        }
        let (target_before, target_after) = (zone(&before, to), zone(&after, to));
        let landed = match shape.mv {
            AnyMove::VirginiaReel(ReelMove::Swap { .. }) => {
                target_after.face_up == source.face_up
                    && zone(&after, shape.from).face_up == target_before.face_up
            }
            _ => card_at(target_after, total(target_before)) == Some(card),
        };
        let went_home = outcome.effects.iter().any(|effect| {
            matches!(effect, Effect::RunRemoved { from, suit, .. } if *from == to && *suit == card.suit())
        });
        if !landed && !went_home {
            return Err(format!("{card} is not on {to} after the move"));
        }
        if !matches!(position, AnyGame::VirginiaReel(_)) {
            // A finished run that the move uncovers goes home too.
            let freed = outcome
                .effects
                .iter()
                .filter(|effect| matches!(effect, Effect::RunRemoved { from, .. } if *from == shape.from))
                .count();
            let moved = total(source) - total(zone(&after, shape.from)) - 13 * freed;
            if moved != shape.depth + 1 {
                return Err(format!(
                    "{moved} cards left {}, not {}",
                    shape.from,
                    shape.depth + 1
                ));
            }
        }
        match move_between(shapes, shape.from, shape.depth, to) {
            Some(found) if found.from == shape.from && found.to == shape.to => Ok(()),
            Some(found) => Err(format!("pick-and-drop finds {}", found.text)),
            None => Err(format!("pick-and-drop finds nothing to {to}")),
        }
    }

    /// Every legal move of positions along walks of every game: its shape
    /// names a source that shows the moved card and a destination where the
    /// engine puts it, and every kind of move of the game is met.
    #[test]
    fn every_legal_moves_shape_is_where_the_engine_takes_and_puts_its_card() {
        let all = |kinds: &[&'static str]| kinds.iter().copied().collect::<BTreeSet<_>>();
        let forty_thieves = all(&[
            "pile to pile",
            "pile to foundation",
            "waste to pile",
            "waste to foundation",
            "draw",
        ]);
        let cases = [
            (
                GameKind::ThreeBlindMice,
                all(&[
                    "one card pile to pile",
                    "cards pile to pile",
                    "cell to pile",
                    "pile to pile, the run home",
                ]),
            ),
            (GameKind::Indian, forty_thieves.clone()),
            (GameKind::Midshipman, forty_thieves),
            (
                GameKind::VirginiaReel,
                all(&[
                    "build",
                    "release home",
                    "release home through a chain",
                    "release to the discard",
                    "swap",
                    "deal",
                ]),
            ),
        ];
        for (game, kinds) in cases {
            let mut positions = walk(game, &[1, 2, 3, 4, 5, 6], 150);
            if game == GameKind::ThreeBlindMice {
                positions.extend(
                    TBM_SEEDS[..3]
                        .iter()
                        .flat_map(|&seed| tbm_line(seed).into_iter().map(|(position, _)| position)),
                );
            }
            let mut seen = BTreeSet::new();
            for position in &positions {
                let mut moves = Vec::new();
                position.legal_moves(&mut moves);
                let shapes = move_shapes(position);
                assert_eq!(
                    shapes.len(),
                    moves.len(),
                    "{game}: a legal move has no shape"
                );
                for shape in &shapes {
                    seen.insert(kind(shape));
                    if let Err(wrong) = check_shape(position, &shapes, shape) {
                        panic!("{game} {}: {wrong}\n{:?}", shape.text, position.view());
                    }
                }
            }
            assert_eq!(seen, kinds, "{game}: the kinds of move met");
        }
    }
}
