//! Positions a client can compute with, from what it may see.
//!
//! A client receives a [`View`]: face-down cards and the stock's order are
//! secret. Which moves are legal does not depend on them (a face-down card
//! never moves, and "turn the stock" is legal whatever its next card), so
//! [`guess`] fills every hidden place with the cards not yet seen, in an
//! order drawn from a number, and builds a real position of the rules
//! engine. The client uses it to list legal moves, to find a card's natural
//! place and to read the notation; the bots plan a solver line on it (with
//! the game's own search, through `patience_shared::solver::any`) and plan
//! again whenever a turned card proves the guess wrong.
//!
//! Moves are described by what they do to the view ([`MoveShape`]): which
//! card leaves which zone and where it lands, found by playing the move on a
//! copy and comparing the views. That works the same for every game and
//! every notation. What the engine does on its own after a move is read from
//! the move's [`Outcome`], not from the board: a run that the move completes
//! goes home ([`Effect::RunRemoved`]), so the pile the cards landed on no
//! longer shows them; the comparison is made as if the run were still there.

use std::collections::HashMap;
use std::fmt::Write as _;

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::card::Card;
use patience_shared::deck::ordered_pack;
use patience_shared::game::GameKind;
use patience_shared::games::forty_thieves::FortyThieves;
use patience_shared::games::three_blind_mice::ThreeBlindMice;
use patience_shared::games::virginia_reel::VirginiaReel;
use patience_shared::rules::{Effect, Outcome, Rules, View, Zone, ZoneView};

/// A view that no position of its game can have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the board cannot be read: {0}")]
pub struct GuessError(pub String);

/// A position with the view's visible cards where they are and the unseen
/// cards, shuffled by `variation`, in the hidden places.
pub fn guess(view: &View, variation: u64) -> Result<AnyGame, GuessError> {
    let mut unseen = unseen_cards(view)?;
    shuffle(&mut unseen, variation);
    let mut unseen = unseen.into_iter();
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

/// A small Fisher–Yates driven by splitmix64: guesses need variety, not secrecy.
fn shuffle(cards: &mut [Card], variation: u64) {
    let mut state = variation;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for index in (1..cards.len()).rev() {
        let other = (next() % (index as u64 + 1)) as usize;
        cards.swap(index, other);
    }
}

/// What a move does, seen from the board: where its card comes from and
/// where it lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveShape {
    /// The move.
    pub mv: AnyMove,
    /// Its canonical notation.
    pub text: String,
    /// The zone the moved card leaves (the stock for a turn or a deal).
    pub from: Zone,
    /// The moved card, counted from the top of `from` (0: the top card).
    pub depth: usize,
    /// Where the card lands, if it stays on the board's zones.
    pub to: Option<Zone>,
    /// Whether `to` was empty before the move.
    pub onto_empty: bool,
}

/// Every legal move of `position`, with its shape.
pub fn move_shapes(position: &AnyGame) -> Vec<MoveShape> {
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    let before = position.view();
    moves
        .into_iter()
        .filter_map(|mv| {
            let mut after = position.clone();
            let outcome = after.apply(mv).ok()?;
            let landed = with_runs_put_back(after.view(), &outcome);
            shape_of(&before, &landed, mv, position.format_move(mv))
        })
        .collect()
}

/// `after` as it stood before the runs that the move completed went home:
/// each removed run back on top of the pile it left, latest removal first
/// undone, so the moved cards show where they landed.
fn with_runs_put_back(mut after: View, outcome: &Outcome) -> View {
    for effect in outcome.effects.iter().rev() {
        let &Effect::RunRemoved { from, to, suit } = effect else {
            continue;
        };
        let Some(home) = after.zones.iter_mut().find(|zone| zone.zone == to) else {
            continue;
        };
        let (run, rest): (Vec<Card>, Vec<Card>) =
            home.face_up.iter().partition(|card| card.suit() == suit);
        home.face_up = rest;
        if let Some(pile) = after.zones.iter_mut().find(|zone| zone.zone == from) {
            pile.face_up.extend(run);
        }
    }
    after
}

fn total(zone: &ZoneView) -> usize {
    usize::from(zone.hidden) + zone.face_up.len()
}

/// The card at absolute height `height` of a zone, `None` if face down or absent.
fn card_at(zone: &ZoneView, height: usize) -> Option<Card> {
    height
        .checked_sub(usize::from(zone.hidden))
        .and_then(|index| zone.face_up.get(index).copied())
}

fn shape_of(before: &View, after: &View, mv: AnyMove, text: String) -> Option<MoveShape> {
    let pairs: Vec<(&ZoneView, &ZoneView)> = before.zones.iter().zip(&after.zones).collect();
    // The stock turning or dealing: its size drops.
    if let Some((stock, _)) = pairs
        .iter()
        .find(|(b, a)| b.zone == Zone::Stock && total(a) < total(b))
    {
        return Some(MoveShape {
            mv,
            text,
            from: stock.zone,
            depth: 0,
            to: None,
            onto_empty: false,
        });
    }
    // The deepest face-up card that is no longer where it was.
    let (source, depth, card) = pairs.iter().find_map(|(b, a)| {
        let hidden = usize::from(b.hidden);
        b.face_up.iter().enumerate().find_map(|(index, &card)| {
            (card_at(a, hidden + index) != Some(card))
                .then(|| (b.zone, b.face_up.len() - 1 - index, card))
        })
    })?;
    let landing = pairs.iter().find(|(b, a)| {
        b.zone != source && a.face_up.contains(&card) && (total(a) > total(b) || a != b)
    });
    Some(MoveShape {
        mv,
        text,
        from: source,
        depth,
        to: landing.map(|(b, _)| b.zone),
        onto_empty: landing.is_some_and(|(b, _)| total(b) == 0),
    })
}

/// How natural a landing place is: home first, then onto a card, then an
/// empty zone (as the seeds describe a click on a card).
fn naturalness(shape: &MoveShape) -> u8 {
    match shape.to {
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
        .filter(|shape| shape.from == from && shape.depth == depth)
        .min_by_key(|shape| (naturalness(shape), shape.to))
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
        .filter(|shape| shape.from == from && shape.depth == depth && shape.to == Some(to))
        .min_by_key(|shape| shape.text.len())
}

#[cfg(test)]
mod tests {
    use patience_shared::games::three_blind_mice::TbmMove;
    use patience_shared::solver::Budget;
    use patience_shared::solver::any::solve_deal;

    use super::*;

    /// Three Blind Mice deals the solver wins within its budget (most deals
    /// are proved lost at once); the first is the deal of issue 12.
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

    /// Issue 12: the move that completes a run sends it home, so the
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

    /// The position of issue 12: K♦…8♦ on pile 1, 7♦…A♦ on pile 5.
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
}
