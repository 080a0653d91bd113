//! Three Blind Mice: one deck, ten piles built down in suit, two give-only
//! cells, and four foundations that take only finished runs (rules.md,
//! following seed 000 and PySolFC's `ThreeBlindMice`).
//!
//! # Layout
//!
//! - Ten piles `P0..P9` (numbered 1 to 10 for people), dealt row by row from
//!   the shuffled pack `P`: `P[0..10]` is row 0 across piles 0..9, and so on for
//!   five rows. In rows 0–2 piles 0–6 are face up and piles 7–9 face down (the
//!   nine "blind mice"); rows 3–4 are face up everywhere. Face-down cards
//!   always lie at the bottom of a pile, so a pile stores its cards bottom
//!   first and a count of face-down ones.
//! - Two cells `C0`, `C1` (`c1`, `c2` for people) holding `P[50]` and
//!   `P[51]`, face up. A cell card may be played at any time; nothing ever
//!   enters a cell.
//! - Four foundations, filled in order; each holds one finished run, stored
//!   as the suit it came from and shown King at the bottom, Ace on top (as the
//!   run lay on its pile, and as PySolFC's Spider foundations hold it).
//!
//! # Moves
//!
//! - Pile to pile: any face-up card X, with every card lying on it in whatever
//!   order, onto a pile whose top card is X's suit and one rank higher, or, if
//!   X is a King, into an empty pile. A King already lying at the bottom of
//!   its pile may not move into an empty pile (that changes nothing). Because
//!   there is one deck, X has at most one non-empty destination; a King may
//!   have several empty ones, and each is a separate legal move.
//! - Cell to pile: the same destinations.
//! - Auto, after every move: on the source pile, then on the destination
//!   pile, a finished run on top (the top 13 cards King down to Ace in one
//!   suit, all face up) leaves at once for the first empty foundation
//!   ([`Effect::RunRemoved`]), repeatedly if another finished run lay under
//!   it; then a face-down card left on top turns face up
//!   ([`Effect::TurnedUp`]).
//! - Won: all four runs gone. Stuck: not won, and no legal move.
//!
//! Every move is final, which the solver may rely on: a card lying on its
//! parent can never leave it (its one destination lies under it), and a King
//! moved into an empty pile lies at the bottom for good. So each move either
//! makes one of the 48 parent links for good or beds one of the four Kings,
//! no position ever repeats, and a game ends within 52 moves.
//!
//! # Notation
//!
//! Piles are numbered `1`..`10`, cells `c1`, `c2`. Text is read ignoring
//! case and spaces. Every move has the shape `source>pile`:
//!
//! ```text
//! move    = source ">" pile
//! source  = card            a face-up card in a pile or a cell, e.g. 7h, Th, 10h, K♠
//!         | pile            the top card of that pile (one card)
//!         | pile ":" count  the top `count` cards of that pile (count ≥ 1)
//!         | "c" cell        the card in cell 1 or 2
//! pile    = 1 .. 10
//! ```
//!
//! Canonical forms (what [`Rules::format_move`] writes, and what every legal
//! move reads back from):
//!
//! - `7h>4`: the 7♥ and everything lying on it onto pile 4; `Ks>2`: the King
//!   of spades with what lies on it into (empty) pile 2.
//! - `c1>4`: the card in cell 1 onto pile 4. `Qd>4` is accepted as input when
//!   the Q♦ is in a cell, and reads as the same move as `c1>4`.
//! - `3:2>4` (the top two cards of pile 3 onto pile 4) and `3>4` (its top
//!   card) are accepted as input and read as the same move as the card form.
//!   A move whose cards are not all face up cannot be named by a card; it is
//!   written `3:6>4` (and refused by [`Rules::apply`]).
//!
//! # Capacity
//!
//! A pile is an `ArrayVec` of [`PILE_CAPACITY`] = 52 cards, the whole deck;
//! see that constant for why nothing smaller is safe.

use std::fmt;
use std::ops::ControlFlow;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::card::{ACE, Card, KING, Suit};
use crate::deck::shuffled_pack;
use crate::game::GameKind;
use crate::rules::{Board, Effect, MoveError, NotationError, Outcome, Rules, Zone, ZoneCards};

/// How many tableau piles there are.
pub const PILES: usize = 10;
/// How many cells there are.
pub const CELLS: usize = 2;
/// How many foundations there are (one per finished run).
pub const FOUNDATIONS: usize = 4;
/// How many rows the deal lays across the piles.
pub const DEAL_ROWS: usize = 5;
/// How many cards a finished run holds.
pub const RUN_LENGTH: usize = 13;

/// How many of the first rows are dealt face down on the blind piles.
const FACE_DOWN_ROWS: usize = 3;
/// The first of the blind piles (7, 8, 9) whose first rows are dealt face down.
const FIRST_BLIND_PILE: usize = 7;
/// How many cards the deal uses.
const DECK_SIZE: usize = 52;

/// The most cards one pile can hold: the whole deck.
///
/// Nothing smaller is safe. A pile grows only by building on its top, but
/// the cards carried along keep whatever order they were dealt in, and a
/// finished run leaves only when it is *on top*: an Ace may carry the card
/// it was dealt under, so complete runs can lie buried in a pile and never
/// leave. The test `one_pile_can_hold_the_whole_deck` deals a pack whose
/// piles chain together (an Ace dealt under the next suit's King, and so on)
/// and plays 23 legal moves that gather all 52 cards into pile 1, the cells
/// included. That pack is hand-made, not drawn from a seed; whether some
/// `u64` seed also gets there could only be settled by trying them all, and
/// the capacity must hold for every deal, so it is 52.
pub const PILE_CAPACITY: usize = DECK_SIZE;

/// The cards of one pile, bottom first.
pub type Pile = ArrayVec<Card, PILE_CAPACITY>;

/// A position of Three Blind Mice.
///
/// The fields are private so that every position holds each card at most
/// once (which is also why no pile can overflow [`PILE_CAPACITY`]): positions
/// come only from [`ThreeBlindMice::deal`], [`ThreeBlindMice::from_fixture`]
/// and legal moves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreeBlindMice {
    /// The ten piles, bottom first.
    piles: [Pile; PILES],
    /// How many bottom cards of each pile lie face down.
    face_down: [u8; PILES],
    /// The two cells; `None` once played.
    cells: [Option<Card>; CELLS],
    /// The suit of the run each foundation holds, filled in order.
    foundations: [Option<Suit>; FOUNDATIONS],
}

/// A move of Three Blind Mice, independent of which cards are moved, so the
/// engine and the solver never look a card up to apply it. The notation
/// (see the module docs) names the card for people.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TbmMove {
    /// The top `count` cards of pile `from` (a face-up card and everything
    /// lying on it) onto pile `to`. Piles are 0-based.
    PileToPile {
        /// The source pile, 0-based.
        from: u8,
        /// How many cards move: the named card plus those lying on it.
        count: u8,
        /// The destination pile, 0-based.
        to: u8,
    },
    /// The card in cell `cell` onto pile `to`. Both 0-based.
    CellToPile {
        /// The cell, 0-based.
        cell: u8,
        /// The destination pile, 0-based.
        to: u8,
    },
}

/// Marks "no pile" in the table of pile tops used by move generation.
const NO_PILE: u8 = u8::MAX;

impl ThreeBlindMice {
    /// The deal for `seed`: the shuffled pack dealt row by row as rules.md says.
    pub fn deal(seed: u64) -> ThreeBlindMice {
        ThreeBlindMice::from_pack(&shuffled_pack(1, seed))
    }

    /// Deals `pack` (`P[0]` first): five rows of ten, then the two cells.
    /// A pack shorter than 52 cards leaves the last places empty.
    fn from_pack(pack: &[Card]) -> ThreeBlindMice {
        let mut state = ThreeBlindMice::empty();
        for (position, &card) in pack.iter().take(PILES * DEAL_ROWS).enumerate() {
            // Five cards per pile: far below the capacity.
            let _ = state.piles[position % PILES].try_push(card);
        }
        for pile in FIRST_BLIND_PILE..PILES {
            let dealt = state.piles[pile].len().min(FACE_DOWN_ROWS);
            // At most three, so the cast is exact.
            state.face_down[pile] = dealt as u8;
        }
        for (cell, slot) in state.cells.iter_mut().enumerate() {
            *slot = pack.get(PILES * DEAL_ROWS + cell).copied();
        }
        state
    }

    /// A position with no cards anywhere.
    fn empty() -> ThreeBlindMice {
        ThreeBlindMice {
            piles: [const { ArrayVec::new_const() }; PILES],
            face_down: [0; PILES],
            cells: [None; CELLS],
            foundations: [None; FOUNDATIONS],
        }
    }

    /// The cards of pile `pile` (0-based), bottom first; empty if there is no such pile.
    pub fn pile(&self, pile: usize) -> &[Card] {
        self.piles.get(pile).map_or(&[], |cards| cards.as_slice())
    }

    /// How many bottom cards of pile `pile` (0-based) lie face down.
    pub fn face_down(&self, pile: usize) -> usize {
        self.face_down.get(pile).map_or(0, |&n| usize::from(n))
    }

    /// The card in cell `cell` (0-based), if it has not been played.
    pub fn cell(&self, cell: usize) -> Option<Card> {
        self.cells.get(cell).copied().flatten()
    }

    /// The suit of the run foundation `foundation` (0-based) holds, if any.
    pub fn foundation(&self, foundation: usize) -> Option<Suit> {
        self.foundations.get(foundation).copied().flatten()
    }

    /// How many finished runs have left the piles.
    pub fn runs_removed(&self) -> usize {
        self.foundations.iter().flatten().count()
    }

    /// Reads a position from the text [`fmt::Display`] writes, for tests and
    /// tools. One zone a line, labelled `p1`..`p10`, `c1`, `c2`, `f1`..`f4`;
    /// cards bottom first; in a pile, the cards before a `|` lie face down;
    /// `-` or nothing for an empty zone; a foundation holds `Ks..As` (the run
    /// of that suit); in a pile, `Kc..9c` stands for the clubs from the King
    /// down to the Nine. Zones left out are empty; blank lines and lines
    /// starting with `#` are ignored. The deck may be partial (tests use small
    /// boards), but no card may appear twice, and the position must be one
    /// play can leave: no face-down card on top of a pile, no finished run on
    /// top of a pile.
    pub fn from_fixture(text: &str) -> Result<ThreeBlindMice, String> {
        let mut state = ThreeBlindMice::empty();
        let mut seen_zones: ArrayVec<Zone, { PILES + CELLS + FOUNDATIONS }> = ArrayVec::new();
        let mut seen_cards = [false; DECK_SIZE];
        let mut note_card = |card: Card| -> Result<(), String> {
            if std::mem::replace(&mut seen_cards[card.index()], true) {
                Err(format!("{card} appears twice"))
            } else {
                Ok(())
            }
        };
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (label, content) = line
                .split_once(':')
                .ok_or_else(|| format!("line {line:?} has no `label:`"))?;
            let zone = parse_fixture_label(label.trim())?;
            if seen_zones.contains(&zone) {
                return Err(format!("{zone} is given twice"));
            }
            // At most one line per zone, so this never overflows.
            let _ = seen_zones.try_push(zone);
            let tokens: Vec<&str> = match content.split_whitespace().collect::<Vec<_>>() {
                dash if dash == ["-"] => Vec::new(),
                tokens => tokens,
            };
            match zone {
                Zone::Pile(pile) => {
                    let pile = usize::from(pile);
                    let mut face_down = None;
                    for token in tokens {
                        if token == "|" {
                            if face_down.is_some() {
                                return Err(format!("{zone} has two `|`"));
                            }
                            face_down = Some(state.piles[pile].len());
                            continue;
                        }
                        for card in parse_fixture_cards(token)? {
                            note_card(card)?;
                            // No card twice, so at most 52 cards in all.
                            let _ = state.piles[pile].try_push(card);
                        }
                    }
                    let face_down = face_down.unwrap_or(0);
                    if face_down > 0 && face_down == state.piles[pile].len() {
                        return Err(format!("{zone} has a face-down card on top"));
                    }
                    state.face_down[pile] =
                        u8::try_from(face_down).map_err(|_| format!("{zone}: too many cards"))?;
                    if state.top_run(pile).is_some() {
                        return Err(format!(
                            "{zone} has a finished run on top; it would have left"
                        ));
                    }
                }
                Zone::Cell(cell) => match tokens[..] {
                    [] => {}
                    [token] => {
                        let card = parse_fixture_card(token)?;
                        note_card(card)?;
                        state.cells[usize::from(cell)] = Some(card);
                    }
                    _ => return Err(format!("{zone} holds at most one card")),
                },
                Zone::Foundation(foundation) => match tokens[..] {
                    [] => {}
                    [token] => {
                        let suit = parse_fixture_run(token)?;
                        for rank in ACE..=KING {
                            note_card(Card::new(suit, rank))?;
                        }
                        state.foundations[usize::from(foundation)] = Some(suit);
                    }
                    _ => return Err(format!("{zone} holds one run, written like Ks..As")),
                },
                _ => return Err(format!("{zone} is not a zone of Three Blind Mice")),
            }
        }
        Ok(state)
    }

    /// The suit of the finished run on top of pile `pile`, if there is one:
    /// its top 13 cards, all face up, run King down to Ace in one suit.
    fn top_run(&self, pile: usize) -> Option<Suit> {
        let cards = &self.piles[pile];
        let len = cards.len();
        if len < RUN_LENGTH + usize::from(self.face_down[pile]) {
            return None;
        }
        let run = &cards[len - RUN_LENGTH..];
        // The top card must be an Ace: a cheap test that rejects almost every pile.
        let ace = run[RUN_LENGTH - 1];
        if ace.rank() != ACE {
            return None;
        }
        let suit = ace.suit();
        let is_run = run
            .iter()
            .zip((ACE..=KING).rev())
            .all(|(&card, rank)| card == Card::new(suit, rank));
        is_run.then_some(suit)
    }

    /// Performs the automatic consequences on pile `pile` after a move:
    /// finished runs leave (as long as one lies on top), then a face-down card
    /// on top turns face up. Each is recorded in `outcome`.
    fn settle(&mut self, pile: usize, outcome: &mut Outcome) {
        while let Some(suit) = self.top_run(pile) {
            // One deck has four runs and four foundations, so a slot is always free.
            let Some(foundation) = self.foundations.iter().position(Option::is_none) else {
                break;
            };
            let len = self.piles[pile].len();
            self.piles[pile].truncate(len - RUN_LENGTH);
            self.foundations[foundation] = Some(suit);
            outcome.push(Effect::RunRemoved {
                from: Zone::Pile(pile as u8),
                to: Zone::Foundation(foundation as u8),
                suit,
            });
        }
        let len = self.piles[pile].len();
        if len > 0 && len == usize::from(self.face_down[pile]) {
            self.face_down[pile] -= 1;
            outcome.push(Effect::TurnedUp {
                zone: Zone::Pile(pile as u8),
                card: self.piles[pile][len - 1],
            });
        }
    }

    /// Whether `card` may go onto pile `to` (which exists). `whole_pile` says
    /// the card is the bottom card of its own pile, so moving it into an empty
    /// pile would change nothing.
    fn check_destination(&self, card: Card, to: usize, whole_pile: bool) -> Result<(), MoveError> {
        match self.piles[to].last() {
            None if card.rank() != KING => Err(MoveError::EmptyPileNeedsKing { card }),
            None if whole_pile => Err(MoveError::ChangesNothing),
            None => Ok(()),
            Some(&onto) if card.next_higher() == Some(onto) => Ok(()),
            Some(&onto) => Err(MoveError::DoesNotBuild { card, onto }),
        }
    }

    /// Validates a pile-to-pile move without changing anything.
    fn check_pile_move(&self, from: u8, count: u8, to: u8) -> Result<(), MoveError> {
        let source = self
            .piles
            .get(usize::from(from))
            .ok_or(MoveError::NoSuchZone {
                zone: Zone::Pile(from),
            })?;
        let destination = self
            .piles
            .get(usize::from(to))
            .ok_or(MoveError::NoSuchZone {
                zone: Zone::Pile(to),
            })?;
        if from == to {
            return Err(MoveError::SameZone);
        }
        if source.is_empty() {
            return Err(MoveError::EmptySource {
                zone: Zone::Pile(from),
            });
        }
        if count == 0 {
            return Err(MoveError::ChangesNothing);
        }
        let count_usize = usize::from(count);
        let face_up = source.len() - usize::from(self.face_down[usize::from(from)]);
        if count_usize > face_up {
            return Err(MoveError::NotEnoughCards {
                zone: Zone::Pile(from),
                count,
            });
        }
        // Unreachable while no card is held twice (at most 52 cards in all);
        // checked so that a move can never overflow a pile.
        if destination.len() + count_usize > PILE_CAPACITY {
            return Err(MoveError::ChangesNothing);
        }
        let card = source[source.len() - count_usize];
        self.check_destination(card, usize::from(to), count_usize == source.len())
    }

    /// Validates a cell-to-pile move without changing anything; returns the card.
    fn check_cell_move(&self, cell: u8, to: u8) -> Result<Card, MoveError> {
        let slot = self
            .cells
            .get(usize::from(cell))
            .ok_or(MoveError::NoSuchZone {
                zone: Zone::Cell(cell),
            })?;
        let destination = self
            .piles
            .get(usize::from(to))
            .ok_or(MoveError::NoSuchZone {
                zone: Zone::Pile(to),
            })?;
        let card = slot.ok_or(MoveError::EmptySource {
            zone: Zone::Cell(cell),
        })?;
        // Unreachable while no card is held twice, as for pile moves.
        if destination.is_full() {
            return Err(MoveError::ChangesNothing);
        }
        self.check_destination(card, usize::from(to), false)?;
        Ok(card)
    }

    /// Moves the top `count` cards of pile `from` onto pile `to`, keeping
    /// their order. Does nothing if the piles are not two distinct existing
    /// piles, `from` has fewer cards, or `to` has no room.
    fn transfer(&mut self, from: usize, count: usize, to: usize) {
        let Ok([source, destination]) = self.piles.get_disjoint_mut([from, to]) else {
            return;
        };
        let Some(start) = source.len().checked_sub(count) else {
            return;
        };
        if destination.try_extend_from_slice(&source[start..]).is_ok() {
            source.truncate(start);
        }
    }

    /// Calls `emit` with every legal move, in the fixed order `legal_moves`
    /// documents, stopping early when `emit` breaks.
    fn for_each_move(&self, mut emit: impl FnMut(TbmMove) -> ControlFlow<()>) -> ControlFlow<()> {
        // Which pile each card tops (by card index), and the empty piles: a
        // non-King card's one possible destination is the pile its parent tops.
        let mut topped_by = [NO_PILE; DECK_SIZE];
        let mut empty_piles: ArrayVec<u8, PILES> = ArrayVec::new();
        for (pile, cards) in (0u8..).zip(&self.piles) {
            match cards.last() {
                Some(top) => topped_by[top.index()] = pile,
                None => empty_piles.push(pile),
            }
        }
        let destinations = |card: Card, whole_pile: bool| {
            let (empties, parent_pile): (&[u8], Option<u8>) = match card.next_higher() {
                // A bottom King moving into an empty pile changes nothing.
                None if whole_pile => (&[], None),
                None => (empty_piles.as_slice(), None),
                Some(parent) => (
                    &[],
                    Some(topped_by[parent.index()]).filter(|&p| p != NO_PILE),
                ),
            };
            empties.iter().copied().chain(parent_pile)
        };
        for (from, cards) in (0u8..).zip(&self.piles) {
            let first_face_up = usize::from(self.face_down[usize::from(from)]);
            for position in (first_face_up..cards.len()).rev() {
                // A pile holds at most 52 cards, so the count fits a byte.
                let count = (cards.len() - position) as u8;
                for to in destinations(cards[position], position == 0) {
                    // The parent may lie higher in the same pile: no move.
                    if to != from {
                        emit(TbmMove::PileToPile { from, count, to })?;
                    }
                }
            }
        }
        for (cell, slot) in (0u8..).zip(&self.cells) {
            if let Some(card) = *slot {
                for to in destinations(card, false) {
                    emit(TbmMove::CellToPile { cell, to })?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Where a face-up card lies: the move source that names it.
    fn locate_face_up(&self, card: Card) -> Option<Source> {
        for (pile, cards) in self.piles.iter().enumerate() {
            let first_face_up = usize::from(self.face_down[pile]);
            if let Some(offset) = cards[first_face_up..].iter().position(|&c| c == card) {
                let position = first_face_up + offset;
                return Some(Source::Pile {
                    pile: pile as u8,
                    count: (cards.len() - position) as u8,
                });
            }
        }
        let cell = self.cells.iter().position(|&slot| slot == Some(card))?;
        Some(Source::Cell { cell: cell as u8 })
    }
}

/// Where a move takes its cards from, as the notation names it.
enum Source {
    /// The top `count` cards of a pile (0-based).
    Pile { pile: u8, count: u8 },
    /// A cell (0-based).
    Cell { cell: u8 },
}

impl Rules for ThreeBlindMice {
    type Move = TbmMove;

    fn kind(&self) -> GameKind {
        GameKind::ThreeBlindMice
    }

    /// Pile moves first: by source pile, then by card from the top down
    /// (fewest cards first), then by destination pile; then cell moves, by
    /// cell, then by destination pile. Every empty pile a King may enter is
    /// listed separately.
    fn legal_moves(&self, moves: &mut Vec<TbmMove>) {
        moves.clear();
        let _ = self.for_each_move(|mv| {
            moves.push(mv);
            ControlFlow::Continue(())
        });
    }

    fn apply(&mut self, mv: TbmMove) -> Result<Outcome, MoveError> {
        if self.is_won() {
            return Err(MoveError::GameOver);
        }
        let mut outcome = Outcome::new();
        match mv {
            TbmMove::PileToPile { from, count, to } => {
                self.check_pile_move(from, count, to)?;
                let (from, to) = (usize::from(from), usize::from(to));
                self.transfer(from, usize::from(count), to);
                self.settle(from, &mut outcome);
                self.settle(to, &mut outcome);
            }
            TbmMove::CellToPile { cell, to } => {
                let card = self.check_cell_move(cell, to)?;
                let to = usize::from(to);
                self.cells[usize::from(cell)] = None;
                // Room was checked above.
                let _ = self.piles[to].try_push(card);
                self.settle(to, &mut outcome);
            }
        }
        Ok(outcome)
    }

    fn undo(&mut self, mv: TbmMove, outcome: &Outcome) {
        for effect in outcome.effects.iter().rev() {
            match *effect {
                Effect::TurnedUp {
                    zone: Zone::Pile(pile),
                    ..
                } => {
                    if let Some(face_down) = self.face_down.get_mut(usize::from(pile)) {
                        *face_down = face_down.saturating_add(1);
                    }
                }
                Effect::RunRemoved {
                    from: Zone::Pile(pile),
                    to: Zone::Foundation(foundation),
                    suit,
                } => {
                    if let Some(slot) = self.foundations.get_mut(usize::from(foundation)) {
                        *slot = None;
                    }
                    if let Some(cards) = self.piles.get_mut(usize::from(pile)) {
                        for rank in (ACE..=KING).rev() {
                            let _ = cards.try_push(Card::new(suit, rank));
                        }
                    }
                }
                _ => {}
            }
        }
        match mv {
            TbmMove::PileToPile { from, count, to } => {
                self.transfer(usize::from(to), usize::from(count), usize::from(from));
            }
            TbmMove::CellToPile { cell, to } => {
                let card = self.piles.get_mut(usize::from(to)).and_then(ArrayVec::pop);
                if let Some(slot) = self.cells.get_mut(usize::from(cell)) {
                    *slot = card;
                }
            }
        }
    }

    fn is_won(&self) -> bool {
        self.foundations.iter().all(Option::is_some)
    }

    fn is_stuck(&self) -> bool {
        !self.is_won() && self.for_each_move(|_| ControlFlow::Break(())).is_continue()
    }

    /// Piles 1..10, then cells 1, 2, then foundations 1..4.
    fn board(&self) -> Board {
        let piles = (0u8..).zip(&self.piles).map(|(pile, cards)| ZoneCards {
            zone: Zone::Pile(pile),
            face_down: self.face_down[usize::from(pile)],
            cards: cards.to_vec(),
        });
        let cells = (0u8..).zip(&self.cells).map(|(cell, slot)| ZoneCards {
            zone: Zone::Cell(cell),
            face_down: 0,
            cards: slot.iter().copied().collect(),
        });
        let foundations = (0u8..)
            .zip(&self.foundations)
            .map(|(foundation, slot)| ZoneCards {
                zone: Zone::Foundation(foundation),
                face_down: 0,
                cards: slot
                    .iter()
                    .flat_map(|&suit| (ACE..=KING).rev().map(move |rank| Card::new(suit, rank)))
                    .collect(),
            });
        Board {
            game: GameKind::ThreeBlindMice,
            zones: piles.chain(cells).chain(foundations).collect(),
        }
    }

    fn parse_move(&self, text: &str) -> Result<TbmMove, NotationError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let error = |reason: String| NotationError::new(text, reason);
        let Some((source, destination)) = compact.split_once('>') else {
            return Err(error(
                "expected a move like 7h>4 (card onto pile), c1>4 (cell onto pile), \
                 3>4 or 3:2>4 (top cards of a pile onto a pile)"
                    .to_string(),
            ));
        };
        if destination.to_ascii_lowercase().starts_with('c') {
            return Err(error(
                "nothing ever enters a cell: play cards onto piles 1 to 10".to_string(),
            ));
        }
        let to = parse_pile_number(destination).map_err(&error)?;
        let lower = source.to_ascii_lowercase();
        if let Some(digits) = lower.strip_prefix('c').filter(|d| is_number(d)) {
            let cell = match digits.parse::<usize>() {
                Ok(cell @ 1..=CELLS) => cell as u8 - 1,
                _ => {
                    return Err(error(format!(
                        "there is no cell {digits}: cells are c1 and c2"
                    )));
                }
            };
            return Ok(TbmMove::CellToPile { cell, to });
        }
        if let Some((pile, count_text)) = source.split_once(':') {
            let from = parse_pile_number(pile).map_err(&error)?;
            let count = match count_text.parse::<u8>() {
                Ok(0) => return Err(error("a move takes at least one card".to_string())),
                Ok(count) if is_number(count_text) => count,
                _ => {
                    return Err(error(format!(
                        "{count_text:?} is not a card count: expected a number from 1 to {PILE_CAPACITY}"
                    )));
                }
            };
            return Ok(TbmMove::PileToPile { from, count, to });
        }
        if is_number(source) {
            let from = parse_pile_number(source).map_err(&error)?;
            return Ok(TbmMove::PileToPile { from, count: 1, to });
        }
        let card: Card = source.parse().map_err(|_| {
            error(format!(
                "{source:?} is neither a card (like 7h or Th), a pile (1 to 10) nor a cell (c1, c2)"
            ))
        })?;
        match self.locate_face_up(card) {
            Some(Source::Pile { pile, count }) => Ok(TbmMove::PileToPile {
                from: pile,
                count,
                to,
            }),
            Some(Source::Cell { cell }) => Ok(TbmMove::CellToPile { cell, to }),
            // Said the same way for a face-down card and a foundation card,
            // so that the answer gives no secret away.
            None => Err(error(format!("{card} is not face up in a pile or a cell"))),
        }
    }

    fn format_move(&self, mv: TbmMove) -> String {
        match mv {
            TbmMove::PileToPile { from, count, to } => {
                let (from_index, count_usize) = (usize::from(from), usize::from(count));
                let cards = self.pile(from_index);
                let face_up = cards.len().saturating_sub(self.face_down(from_index));
                match cards.len().checked_sub(count_usize) {
                    Some(position) if (1..=face_up).contains(&count_usize) => {
                        format!("{}>{}", cards[position], u16::from(to) + 1)
                    }
                    // No face-up card to name (and a face-down one must stay secret).
                    _ => format!("{}:{count}>{}", u16::from(from) + 1, u16::from(to) + 1),
                }
            }
            TbmMove::CellToPile { cell, to } => {
                format!("c{}>{}", u16::from(cell) + 1, u16::from(to) + 1)
            }
        }
    }
}

/// Writes the fixture text [`ThreeBlindMice::from_fixture`] reads: one zone a
/// line, piles, then cells, then foundations.
impl fmt::Display for ThreeBlindMice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (pile, cards) in self.piles.iter().enumerate() {
            write!(f, "p{}:", pile + 1)?;
            if cards.is_empty() {
                f.write_str(" -")?;
            }
            let face_down = usize::from(self.face_down[pile]);
            for (position, card) in cards.iter().enumerate() {
                if position == face_down && face_down > 0 {
                    f.write_str(" |")?;
                }
                write!(f, " {card}")?;
            }
            writeln!(f)?;
        }
        for (cell, slot) in self.cells.iter().enumerate() {
            match slot {
                Some(card) => writeln!(f, "c{}: {card}", cell + 1)?,
                None => writeln!(f, "c{}: -", cell + 1)?,
            }
        }
        for (foundation, slot) in self.foundations.iter().enumerate() {
            match slot {
                Some(suit) => {
                    let letter = suit.letter();
                    writeln!(f, "f{}: K{letter}..A{letter}", foundation + 1)?;
                }
                None => writeln!(f, "f{}: -", foundation + 1)?,
            }
        }
        Ok(())
    }
}

/// Whether `text` is a non-empty run of ASCII digits.
fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// A pile number of the notation (`1`..`10`), as a 0-based index.
fn parse_pile_number(text: &str) -> Result<u8, String> {
    if !is_number(text) {
        return Err(format!(
            "{text:?} is not a pile: piles are numbered 1 to {PILES}"
        ));
    }
    match text.parse::<usize>() {
        Ok(pile @ 1..=PILES) => Ok(pile as u8 - 1),
        _ => Err(format!(
            "there is no pile {text}: piles are numbered 1 to {PILES}"
        )),
    }
}

/// A zone label of the fixture text: `p1`..`p10`, `c1`, `c2`, `f1`..`f4`.
fn parse_fixture_label(label: &str) -> Result<Zone, String> {
    let unknown = || format!("unknown zone {label:?}: expected p1..p10, c1, c2 or f1..f4");
    let lower = label.to_ascii_lowercase();
    let mut chars = lower.chars();
    let kind = chars.next().ok_or_else(unknown)?;
    let number = chars.as_str();
    if !is_number(number) {
        return Err(unknown());
    }
    let number = number.parse::<usize>().map_err(|_| unknown())?;
    let index = number.checked_sub(1).ok_or_else(unknown)? as u8;
    match (kind, number) {
        ('p', 1..=PILES) => Ok(Zone::Pile(index)),
        ('c', 1..=CELLS) => Ok(Zone::Cell(index)),
        ('f', 1..=FOUNDATIONS) => Ok(Zone::Foundation(index)),
        _ => Err(unknown()),
    }
}

/// A card of the fixture text.
fn parse_fixture_card(token: &str) -> Result<Card, String> {
    token
        .parse()
        .map_err(|error: crate::card::ParseCardError| error.to_string())
}

/// A card of a pile in the fixture text, or a run written `Kc..9c`
/// (King of clubs down to the Nine, one suit), bottom first.
fn parse_fixture_cards(token: &str) -> Result<ArrayVec<Card, RUN_LENGTH>, String> {
    let Some((high, low)) = token.split_once("..") else {
        return Ok(std::iter::once(parse_fixture_card(token)?).collect());
    };
    let (high, low) = (parse_fixture_card(high)?, parse_fixture_card(low)?);
    if high.suit() != low.suit() || high.rank() < low.rank() {
        return Err(format!(
            "{token:?} is not a run: expected a card down to a lower one of its suit, as in Kc..9c"
        ));
    }
    Ok((low.rank()..=high.rank())
        .rev()
        .map(|rank| Card::new(high.suit(), rank))
        .collect())
}

/// A foundation's run in the fixture text, `Ks..As`: its suit.
fn parse_fixture_run(token: &str) -> Result<Suit, String> {
    let cards = parse_fixture_cards(token)?;
    match cards[..] {
        [king, .., ace] if king.rank() == KING && ace.rank() == ACE => Ok(king.suit()),
        _ => Err(format!(
            "{token:?} is not a finished run: expected a King down to the Ace of its suit, as in Ks..As"
        )),
    }
}

#[cfg(test)]
mod tests;
