//! Indian and Midshipman: two-deck games of the Forty Thieves family, one
//! state type for both (they differ only in the deal).
//!
//! Rules (see `design/rules.md`): piles build down one rank in any suit but
//! the card's own; one card moves at a time, the top card of a pile or of the
//! waste; an empty pile takes any single card; a face-down card on top of a
//! pile turns up at once; the stock turns one card at a time onto the waste,
//! once through; eight foundations, two per suit, build up in suit from Ace to
//! King and never give a card back.
//!
//! Layout of this module:
//! - [`Variant`]: which deal (Indian: ten piles of three, one face down;
//!   Midshipman: nine piles of four, two face down).
//! - [`FortyThieves`]: the position, with [`FortyThieves::deal`], the text
//!   fixtures ([`FortyThieves::from_fixture`], [`FortyThieves::to_fixture`])
//!   and read-only accessors for the solver.
//! - [`FtMove`]: a move, and the [`Rules`] implementation with its notation.
//! - `tests`: rule-by-rule unit tests on fixtures, random-play conformance,
//!   golden deals.
//!
//! Representation, chosen for the solver: every pile is an
//! `ArrayVec<Card, MAX_PILE_LEN>` with its face-down cards at the bottom and
//! counted by a `u8`; the stock and the waste are `ArrayVec`s with their top
//! at the end; a foundation is just the rank of its top card, since its suit
//! is fixed (foundations `2s` and `2s + 1` hold suit `s`).
//!
//! Notation (piles numbered from 1): `3>7` moves the top card of pile 3
//! onto pile 7 (or into it, when empty); `3>f` sends it to its foundation;
//! `w>7` and `w>f` do the same with the waste's top card; `s` turns the
//! stock. Those are the canonical forms; reading ignores case and spaces.
//!
//! Stock order: the stock is what is left of the shuffled pack `P` after the
//! tableau, and the first card turned is the next card of `P` after the
//! tableau (`P[30]` in Indian, `P[36]` in Midshipman), as PySolFC deals it. The
//! stock is stored top last, so it holds `P[103], P[102], ..., P[30]`.

use std::fmt::Write as _;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::card::{Card, KING, Suit};
use crate::deck::shuffled_pack;
use crate::game::GameKind;
use crate::rules::{Board, Effect, MoveError, NotationError, Outcome, Rules, Zone, ZoneCards};

/// The most piles either deal has (Indian's ten).
pub const MAX_PILES: usize = 10;

/// The most cards a pile can ever hold: 16.
///
/// A pile only grows by a card one rank below its top (or by any card when
/// empty), so at any time it is a prefix of its dealt cards followed by a run
/// descending one rank per card from the last of them; an emptied pile is one
/// card followed by such a run. The run under a dealt card of rank `r` has at
/// most `r - 1 <= 12` cards, so a pile holds at most its dealt cards plus 12:
/// 3 + 12 = 15 in Indian, 4 + 12 = 16 in Midshipman (an emptied pile holds at
/// most 13, King to Ace). The state type serves both games, hence 16. Every
/// constructor keeps the invariant this rests on ("from the fifth card up,
/// each card is one rank below the card under it"), so a push never overflows.
pub const MAX_PILE_LEN: usize = 16;

/// The largest stock either deal has (Indian's 74); the waste never holds more.
pub const MAX_STOCK: usize = 74;

/// How many foundations there are: two per suit.
pub const FOUNDATIONS: usize = 8;

/// The number of cards a pile may hold below which they need not form a run
/// (the most cards either game deals to a pile); see [`MAX_PILE_LEN`].
const MAX_DEALT_PER_PILE: usize = 4;

/// Which of the two sister deals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Ten piles of three, the bottom card face down; 74 cards in the stock.
    Indian,
    /// Nine piles of four, the bottom two face down; 68 cards in the stock.
    Midshipman,
}

impl Variant {
    /// Both variants.
    pub const ALL: [Variant; 2] = [Variant::Indian, Variant::Midshipman];

    /// How many tableau piles the deal has.
    pub const fn n_piles(self) -> usize {
        match self {
            Variant::Indian => 10,
            Variant::Midshipman => 9,
        }
    }

    /// How many cards each pile is dealt.
    pub const fn rows(self) -> usize {
        match self {
            Variant::Indian => 3,
            Variant::Midshipman => 4,
        }
    }

    /// How many of each pile's dealt cards lie face down (the bottom rows).
    pub const fn face_down_rows(self) -> usize {
        match self {
            Variant::Indian => 1,
            Variant::Midshipman => 2,
        }
    }

    /// How many cards the stock starts with.
    pub const fn stock_size(self) -> usize {
        104 - self.n_piles() * self.rows()
    }

    /// The game this variant is.
    pub const fn kind(self) -> GameKind {
        match self {
            Variant::Indian => GameKind::Indian,
            Variant::Midshipman => GameKind::Midshipman,
        }
    }
}

/// A move of Indian or Midshipman. Piles are 0-based here; the notation
/// numbers them from 1.
///
/// Foundation moves name the card they send home although the source alone
/// determines it: nothing else in the position after the move says which
/// suit's foundation grew, and [`Rules::undo`] needs it. `parse_move` fills
/// the card in from the position, and `apply` refuses a move whose card is not
/// the source's top card.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FtMove {
    /// The top card of pile `from` onto pile `to` (or into it, when empty).
    PileToPile {
        /// The source pile.
        from: u8,
        /// The destination pile.
        to: u8,
    },
    /// The top card of pile `from`, which is `card`, to its foundation.
    PileToFoundation {
        /// The source pile.
        from: u8,
        /// The card sent home.
        card: Card,
    },
    /// The waste's top card onto pile `to` (or into it, when empty).
    WasteToPile {
        /// The destination pile.
        to: u8,
    },
    /// The waste's top card, which is `card`, to its foundation.
    WasteToFoundation {
        /// The card sent home.
        card: Card,
    },
    /// Turn the stock's top card onto the waste.
    Draw,
}

/// A position of Indian or Midshipman.
///
/// Invariants every constructor establishes and every move keeps: no pile
/// shows a face-down card on top; from the fifth card up each pile descends
/// one rank per card (so no pile outgrows [`MAX_PILE_LEN`]); the stock and
/// the waste together hold at most the variant's stock size; foundation `2s`
/// is never lower than foundation `2s + 1` (the engine fills the lower-index
/// one first, which is what lets undo find the foundation a card went to).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FortyThieves {
    variant: Variant,
    /// How many bottom cards of each pile lie face down.
    face_down: [u8; MAX_PILES],
    /// The rank of each foundation's top card, 0 when empty.
    foundations: [u8; FOUNDATIONS],
    /// The tableau, bottom first; piles past the variant's count stay empty.
    piles: [ArrayVec<Card, MAX_PILE_LEN>; MAX_PILES],
    /// The stock, top (next card turned) last.
    stock: ArrayVec<Card, MAX_STOCK>,
    /// The waste, top last.
    waste: ArrayVec<Card, MAX_STOCK>,
}

/// Whether `card` builds on `onto`: one rank lower, any suit but its own.
const fn builds_on(card: Card, onto: Card) -> bool {
    card.rank() + 1 == onto.rank() && card.suit() as u8 != onto.suit() as u8
}

/// A bit for each of the 52 card faces (by [`Card::index`]).
const fn card_bit(card: Card) -> u64 {
    1 << card.index()
}

impl FortyThieves {
    /// The deal of `variant` for `seed`: the shuffled two-deck pack `P` dealt
    /// row by row across the piles, the bottom rows face down, the rest of
    /// `P` forming the stock with `P[n_piles * rows]` turned first.
    pub fn deal(variant: Variant, seed: u64) -> FortyThieves {
        let pack = shuffled_pack(2, seed);
        let mut state = FortyThieves::empty(variant);
        let n_piles = variant.n_piles();
        let tableau = n_piles * variant.rows();
        for (position, &card) in pack[..tableau].iter().enumerate() {
            // Row-major: card `position` lies in row `position / n_piles`.
            let _ = state.piles[position % n_piles].try_push(card);
        }
        for pile in 0..n_piles {
            state.face_down[pile] = variant.face_down_rows() as u8;
        }
        state.stock.extend(pack[tableau..].iter().rev().copied());
        state
    }

    fn empty(variant: Variant) -> FortyThieves {
        FortyThieves {
            variant,
            face_down: [0; MAX_PILES],
            foundations: [0; FOUNDATIONS],
            piles: std::array::from_fn(|_| ArrayVec::new()),
            stock: ArrayVec::new(),
            waste: ArrayVec::new(),
        }
    }

    /// Which deal this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// How many tableau piles this game has.
    pub fn n_piles(&self) -> usize {
        self.variant.n_piles()
    }

    /// The cards of pile `pile` (0-based), bottom first; empty past the last pile.
    pub fn pile(&self, pile: usize) -> &[Card] {
        self.piles.get(pile).map_or(&[], |cards| cards.as_slice())
    }

    /// How many bottom cards of pile `pile` lie face down.
    pub fn face_down(&self, pile: usize) -> u8 {
        self.face_down.get(pile).copied().unwrap_or(0)
    }

    /// The stock, top (next card turned) last.
    pub fn stock(&self) -> &[Card] {
        &self.stock
    }

    /// The waste, top last.
    pub fn waste(&self) -> &[Card] {
        &self.waste
    }

    /// The rank of foundation `foundation`'s top card (0 when empty, or past
    /// the last foundation). Foundations `2s` and `2s + 1` hold suit `s`.
    pub fn foundation_rank(&self, foundation: usize) -> u8 {
        self.foundations.get(foundation).copied().unwrap_or(0)
    }

    /// The foundation `card` goes to: the lower-index one of its suit that
    /// takes it.
    fn foundation_for(&self, card: Card) -> Option<usize> {
        let first = 2 * card.suit().index();
        (first..first + 2).find(|&f| self.foundations[f] + 1 == card.rank())
    }

    /// Takes `card` back off the foundation a move sent it to. Foundation
    /// `2s` is never below `2s + 1`, so if both show `card` it went on
    /// `2s + 1` (before the move, `2s` would have taken it first otherwise).
    fn take_back_from_foundation(&mut self, card: Card) {
        let first = 2 * card.suit().index();
        let foundation = if self.foundations[first + 1] == card.rank() {
            first + 1
        } else {
            first
        };
        self.foundations[foundation] = self.foundations[foundation].saturating_sub(1);
    }

    /// The 0-based index of pile `pile` if this game has it.
    fn pile_index(&self, pile: u8) -> Result<usize, MoveError> {
        let index = usize::from(pile);
        if index < self.n_piles() {
            Ok(index)
        } else {
            Err(MoveError::NoSuchZone {
                zone: Zone::Pile(pile),
            })
        }
    }

    /// Whether pile `to` takes `card`; `only_card` says the card is the only
    /// one of its pile, which would change nothing by moving into an empty one.
    fn pile_takes(&self, to: usize, card: Card, only_card: bool) -> Result<(), MoveError> {
        let pile = &self.piles[to];
        match pile.last() {
            None if only_card => Err(MoveError::ChangesNothing),
            None => Ok(()),
            Some(&onto) if !builds_on(card, onto) => Err(MoveError::DoesNotBuild { card, onto }),
            // Unreachable while the run invariant holds (a full pile has an
            // Ace on top, which takes nothing); kept so a push cannot fail.
            Some(_) if pile.is_full() => Err(MoveError::ZoneTakesNothing {
                zone: Zone::Pile(to as u8),
            }),
            Some(_) => Ok(()),
        }
    }

    /// Turns pile `pile`'s top card up if it lies face down, and records it.
    fn turn_up(&mut self, pile: usize, outcome: &mut Outcome) {
        let len = self.piles[pile].len();
        if len > 0 && usize::from(self.face_down[pile]) == len {
            self.face_down[pile] -= 1;
            outcome.push(Effect::TurnedUp {
                zone: Zone::Pile(pile as u8),
                card: self.piles[pile][len - 1],
            });
        }
    }

    /// The card faces that could move somewhere right now if they were on
    /// top of a pile or of the waste: the next card of every foundation, and
    /// every card that builds on a pile top. Empty piles are not included.
    fn wanted_cards(&self) -> u64 {
        let mut wanted = 0;
        for (foundation, &rank) in self.foundations.iter().enumerate() {
            if rank < KING {
                let suit = Suit::from_index((foundation / 2) as u8);
                wanted |= card_bit(Card::new(suit, rank + 1));
            }
        }
        for pile in &self.piles[..self.n_piles()] {
            if let Some(&top) = pile.last()
                && top.rank() > 1
            {
                for suit in Suit::ALL {
                    if suit != top.suit() {
                        wanted |= card_bit(Card::new(suit, top.rank() - 1));
                    }
                }
            }
        }
        wanted
    }

    /// Whether any card can move now (any legal move but turning the stock).
    fn has_card_move(&self) -> bool {
        let wanted = self.wanted_cards();
        let piles = &self.piles[..self.n_piles()];
        let has_empty = piles.iter().any(|pile| pile.is_empty());
        let pile_can_move = piles.iter().any(|pile| match pile.last() {
            Some(&top) => wanted & card_bit(top) != 0 || (has_empty && pile.len() > 1),
            None => false,
        });
        let waste_can_move = match self.waste.last() {
            Some(&top) => wanted & card_bit(top) != 0 || has_empty,
            None => false,
        };
        pile_can_move || waste_can_move
    }

    /// The position as a text fixture, one zone per line; see
    /// [`FortyThieves::from_fixture`] for the format.
    pub fn to_fixture(&self) -> String {
        let mut text = String::new();
        let name = match self.variant {
            Variant::Indian => "indian",
            Variant::Midshipman => "midshipman",
        };
        let _ = writeln!(text, "game: {name}");
        let write_cards = |text: &mut String, cards: &[Card]| {
            for card in cards {
                let _ = write!(text, " {card}");
            }
        };
        for pile in 0..self.n_piles() {
            let _ = write!(text, "p{}:", pile + 1);
            let face_down = usize::from(self.face_down[pile]);
            let cards = &self.piles[pile];
            write_cards(&mut text, &cards[..face_down]);
            if face_down > 0 {
                text.push_str(" |");
            }
            write_cards(&mut text, &cards[face_down..]);
            text.push('\n');
        }
        text.push_str("stock:");
        write_cards(&mut text, &self.stock);
        text.push_str("\nwaste:");
        write_cards(&mut text, &self.waste);
        text.push('\n');
        for (foundation, &rank) in self.foundations.iter().enumerate() {
            let _ = write!(text, "f{}:", foundation + 1);
            if rank > 0 {
                let suit = Suit::from_index((foundation / 2) as u8);
                let _ = write!(text, " {}", Card::new(suit, rank));
            }
            text.push('\n');
        }
        text
    }

    /// Reads a position from a text fixture, for tests and tools:
    ///
    /// ```text
    /// game: indian
    /// p1: 9c | Kh 7d
    /// p2: 8s
    /// stock: 4c 5h
    /// waste: Qs
    /// f1: 3c
    /// ```
    ///
    /// The first line names the game (`indian` or `midshipman`). Then one
    /// line per zone, in any order, each at most once; a zone left out is
    /// empty. `pN` is pile N (from 1), bottom first, the cards before `|`
    /// face down; `stock` and `waste` are bottom first, top last (the last
    /// stock card is turned next); `fN` gives the top card of foundation N,
    /// whose suit must be the N-th of clubs, clubs, diamonds, diamonds,
    /// hearts, hearts, spades, spades. A position need not hold all 104
    /// cards (the rest are simply out of the game), but none more than twice.
    ///
    /// Refused, with a reason: a face-down card on top of a pile, a pile
    /// that does not descend one rank per card from its fifth card up (a
    /// pile that could not arise, and could outgrow [`MAX_PILE_LEN`]), a
    /// stock and waste holding more than the variant's stock, a foundation
    /// `2s + 1` above foundation `2s`.
    pub fn from_fixture(text: &str) -> Result<FortyThieves, String> {
        let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
        let first = lines
            .next()
            .ok_or("empty fixture: expected a first line `game: indian` or `game: midshipman`")?;
        let game = split_label(first)
            .filter(|(label, _)| label == "game")
            .map(|(_, name)| name.to_ascii_lowercase());
        let variant = match game.as_deref() {
            Some("indian") => Variant::Indian,
            Some("midshipman") => Variant::Midshipman,
            _ => {
                return Err(format!(
                    "first line {first:?} should be `game: indian` or `game: midshipman`"
                ));
            }
        };
        let mut state = FortyThieves::empty(variant);
        let mut seen: Vec<String> = Vec::new();
        for line in lines {
            let (label, cards_text) =
                split_label(line).ok_or_else(|| format!("line {line:?} has no `label:`"))?;
            if seen.iter().any(|done| done == &label) {
                return Err(format!("zone {label:?} is given twice"));
            }
            seen.push(label.clone());
            match label.as_str() {
                "stock" => {
                    let cards = parse_cards(cards_text, &label)?;
                    state.stock = cards_into(cards, &label)?;
                }
                "waste" => {
                    let cards = parse_cards(cards_text, &label)?;
                    state.waste = cards_into(cards, &label)?;
                }
                _ => {
                    if let Some(number) = label.strip_prefix('p') {
                        let pile = zone_number(number, variant.n_piles(), &label)?;
                        state.read_pile(pile, cards_text, &label)?;
                    } else if let Some(number) = label.strip_prefix('f') {
                        let foundation = zone_number(number, FOUNDATIONS, &label)?;
                        state.foundations[foundation] =
                            read_foundation(foundation, cards_text, &label)?;
                    } else {
                        return Err(format!(
                            "unknown zone {label:?}: expected game, p1.., stock, waste or f1..f8"
                        ));
                    }
                }
            }
        }
        state.check_fixture()?;
        Ok(state)
    }

    /// Reads one pile line of a fixture into pile `pile`.
    fn read_pile(&mut self, pile: usize, text: &str, label: &str) -> Result<(), String> {
        let (down_text, up_text) = match text.split_once('|') {
            Some((down, up)) => (down, up),
            None => ("", text),
        };
        if up_text.contains('|') {
            return Err(format!("{label}: more than one `|`"));
        }
        let down = parse_cards(down_text, label)?;
        let up = parse_cards(up_text, label)?;
        if up.is_empty() && !down.is_empty() {
            return Err(format!(
                "{label}: a face-down card on top would already have turned up"
            ));
        }
        let face_down = down.len();
        let cards: Vec<Card> = down.into_iter().chain(up).collect();
        if cards.len() > MAX_PILE_LEN {
            return Err(format!("{label}: more than {MAX_PILE_LEN} cards"));
        }
        if let Some(bad) =
            (MAX_DEALT_PER_PILE..cards.len()).find(|&i| cards[i].rank() + 1 != cards[i - 1].rank())
        {
            return Err(format!(
                "{label}: from the fifth card up each card must be one rank below the card \
                 under it ({} lies on {}), as in any pile that can arise",
                cards[bad],
                cards[bad - 1]
            ));
        }
        self.piles[pile] = cards_into(cards, label)?;
        self.face_down[pile] = face_down as u8;
        Ok(())
    }

    /// The checks of a fixture that span zones.
    fn check_fixture(&self) -> Result<(), String> {
        if self.stock.len() + self.waste.len() > self.variant.stock_size() {
            return Err(format!(
                "the stock and waste hold {} cards, more than the {} of this game's stock",
                self.stock.len() + self.waste.len(),
                self.variant.stock_size()
            ));
        }
        for suit in 0..4 {
            if self.foundations[2 * suit + 1] > self.foundations[2 * suit] {
                return Err(format!(
                    "f{} is above f{}: the lower-index foundation of a suit is always filled first",
                    2 * suit + 2,
                    2 * suit + 1
                ));
            }
        }
        let mut counts = [0usize; 52];
        let loose = self
            .piles
            .iter()
            .flatten()
            .chain(&self.stock)
            .chain(&self.waste);
        for card in loose {
            counts[card.index()] += 1;
        }
        for (foundation, &rank) in self.foundations.iter().enumerate() {
            let suit = Suit::from_index((foundation / 2) as u8);
            for rank in 1..=rank {
                counts[Card::new(suit, rank).index()] += 1;
            }
        }
        if let Some(index) = counts.iter().position(|&n| n > 2) {
            return Err(format!(
                "{} appears {} times; two decks hold two",
                Card::from_index(index),
                counts[index]
            ));
        }
        Ok(())
    }
}

/// Splits `label: rest` into a lower-case label and the rest.
fn split_label(line: &str) -> Option<(String, &str)> {
    let (label, rest) = line.split_once(':')?;
    let label = label.trim().to_ascii_lowercase();
    (!label.is_empty()).then_some((label, rest.trim()))
}

/// Reads the cards of a fixture line, separated by spaces.
fn parse_cards(text: &str, label: &str) -> Result<Vec<Card>, String> {
    text.split_whitespace()
        .map(|word| word.parse::<Card>().map_err(|e| format!("{label}: {e}")))
        .collect()
}

/// Moves `cards` into a fixed-capacity zone, refusing too many.
fn cards_into<const N: usize>(cards: Vec<Card>, label: &str) -> Result<ArrayVec<Card, N>, String> {
    let count = cards.len();
    ArrayVec::try_from(cards.as_slice())
        .map_err(|_| format!("{label}: {count} cards, more than the {N} it can hold"))
}

/// The 0-based index named by the 1-based `number` of a zone label.
fn zone_number(number: &str, count: usize, label: &str) -> Result<usize, String> {
    match number.parse::<usize>() {
        Ok(n) if (1..=count).contains(&n) => Ok(n - 1),
        _ => Err(format!(
            "unknown zone {label:?}: this game numbers them 1 to {count}"
        )),
    }
}

/// Reads a foundation line: empty, or the top card, of the foundation's suit.
fn read_foundation(foundation: usize, text: &str, label: &str) -> Result<u8, String> {
    let suit = Suit::from_index((foundation / 2) as u8);
    match parse_cards(text, label)?.as_slice() {
        [] => Ok(0),
        [top] if top.suit() == suit => Ok(top.rank()),
        [top] => Err(format!(
            "{label}: {top} is not a {suit:?} card; foundations 2s+1 and 2s+2 hold suit s in the \
             order clubs, diamonds, hearts, spades"
        )),
        _ => Err(format!("{label}: give only the foundation's top card")),
    }
}

impl Rules for FortyThieves {
    type Move = FtMove;

    fn kind(&self) -> GameKind {
        self.variant.kind()
    }

    /// Order: pile tops to foundations (pile order), the waste to its
    /// foundation, pile to pile (source then destination in pile order), the
    /// waste to piles, then turning the stock.
    fn legal_moves(&self, moves: &mut Vec<FtMove>) {
        moves.clear();
        if self.is_won() {
            return;
        }
        let n_piles = self.n_piles();
        for from in 0..n_piles {
            if let Some(&card) = self.piles[from].last()
                && self.foundation_for(card).is_some()
            {
                moves.push(FtMove::PileToFoundation {
                    from: from as u8,
                    card,
                });
            }
        }
        if let Some(&card) = self.waste.last()
            && self.foundation_for(card).is_some()
        {
            moves.push(FtMove::WasteToFoundation { card });
        }
        for from in 0..n_piles {
            let Some(&card) = self.piles[from].last() else {
                continue;
            };
            let only_card = self.piles[from].len() == 1;
            for to in 0..n_piles {
                if to != from && self.pile_takes(to, card, only_card).is_ok() {
                    moves.push(FtMove::PileToPile {
                        from: from as u8,
                        to: to as u8,
                    });
                }
            }
        }
        if let Some(&card) = self.waste.last() {
            for to in 0..n_piles {
                if self.pile_takes(to, card, false).is_ok() {
                    moves.push(FtMove::WasteToPile { to: to as u8 });
                }
            }
        }
        if !self.stock.is_empty() {
            moves.push(FtMove::Draw);
        }
    }

    fn apply(&mut self, mv: FtMove) -> Result<Outcome, MoveError> {
        if self.is_won() {
            return Err(MoveError::GameOver);
        }
        let mut outcome = Outcome::new();
        match mv {
            FtMove::PileToPile { from, to } => {
                let from_index = self.pile_index(from)?;
                let to_index = self.pile_index(to)?;
                if from == to {
                    return Err(MoveError::SameZone);
                }
                let source = &self.piles[from_index];
                let &card = source.last().ok_or(MoveError::EmptySource {
                    zone: Zone::Pile(from),
                })?;
                self.pile_takes(to_index, card, source.len() == 1)?;
                self.piles[from_index].pop();
                let _ = self.piles[to_index].try_push(card);
                self.turn_up(from_index, &mut outcome);
            }
            FtMove::PileToFoundation { from, card } => {
                let from_index = self.pile_index(from)?;
                let &top = self.piles[from_index]
                    .last()
                    .ok_or(MoveError::EmptySource {
                        zone: Zone::Pile(from),
                    })?;
                if top != card {
                    return Err(MoveError::CardNotInPlay { card });
                }
                let foundation = self
                    .foundation_for(card)
                    .ok_or(MoveError::NotNextForFoundation { card })?;
                self.piles[from_index].pop();
                self.foundations[foundation] += 1;
                self.turn_up(from_index, &mut outcome);
            }
            FtMove::WasteToPile { to } => {
                let to_index = self.pile_index(to)?;
                let &card = self
                    .waste
                    .last()
                    .ok_or(MoveError::EmptySource { zone: Zone::Waste })?;
                self.pile_takes(to_index, card, false)?;
                self.waste.pop();
                let _ = self.piles[to_index].try_push(card);
            }
            FtMove::WasteToFoundation { card } => {
                let &top = self
                    .waste
                    .last()
                    .ok_or(MoveError::EmptySource { zone: Zone::Waste })?;
                if top != card {
                    return Err(MoveError::CardNotInPlay { card });
                }
                let foundation = self
                    .foundation_for(card)
                    .ok_or(MoveError::NotNextForFoundation { card })?;
                self.waste.pop();
                self.foundations[foundation] += 1;
            }
            FtMove::Draw => {
                let &card = self.stock.last().ok_or(MoveError::StockEmpty)?;
                // Unreachable: stock and waste together never exceed the capacity.
                if self.waste.is_full() {
                    return Err(MoveError::ZoneTakesNothing { zone: Zone::Waste });
                }
                self.stock.pop();
                self.waste.push(card);
                outcome.push(Effect::Drew { card });
            }
        }
        Ok(outcome)
    }

    fn undo(&mut self, mv: FtMove, outcome: &Outcome) {
        let turned_up = outcome
            .effects
            .iter()
            .any(|effect| matches!(effect, Effect::TurnedUp { .. }));
        // The move was applied, so its indices are valid; `get_mut` keeps a
        // misuse from panicking all the same.
        let hide_again = |state: &mut FortyThieves, pile: usize| {
            if turned_up && let Some(count) = state.face_down.get_mut(pile) {
                *count += 1;
            }
        };
        match mv {
            FtMove::PileToPile { from, to } => {
                let (from, to) = (usize::from(from), usize::from(to));
                hide_again(self, from);
                if let Some(card) = self.piles.get_mut(to).and_then(|pile| pile.pop())
                    && let Some(pile) = self.piles.get_mut(from)
                {
                    let _ = pile.try_push(card);
                }
            }
            FtMove::PileToFoundation { from, card } => {
                let from = usize::from(from);
                hide_again(self, from);
                self.take_back_from_foundation(card);
                if let Some(pile) = self.piles.get_mut(from) {
                    let _ = pile.try_push(card);
                }
            }
            FtMove::WasteToPile { to } => {
                if let Some(card) = self
                    .piles
                    .get_mut(usize::from(to))
                    .and_then(|pile| pile.pop())
                {
                    let _ = self.waste.try_push(card);
                }
            }
            FtMove::WasteToFoundation { card } => {
                self.take_back_from_foundation(card);
                let _ = self.waste.try_push(card);
            }
            FtMove::Draw => {
                if let Some(card) = self.waste.pop() {
                    let _ = self.stock.try_push(card);
                }
            }
        }
    }

    fn is_won(&self) -> bool {
        self.foundations.iter().all(|&rank| rank == KING)
    }

    /// Stuck: not won, no card can move, and no card left in the stock could
    /// move if turned up. Turning cards changes no pile or foundation, so a
    /// stock card could move exactly when it goes to a foundation, onto a pile
    /// top or into an empty pile now; the waste's lower cards never come back
    /// into play, so only the stock cards themselves count.
    fn is_stuck(&self) -> bool {
        if self.is_won() || self.has_card_move() {
            return false;
        }
        if self.stock.is_empty() {
            return true;
        }
        if self.piles[..self.n_piles()]
            .iter()
            .any(|pile| pile.is_empty())
        {
            return false;
        }
        let wanted = self.wanted_cards();
        !self.stock.iter().any(|&card| wanted & card_bit(card) != 0)
    }

    /// Zones in display order: the piles, the stock, the waste, the eight
    /// foundations.
    fn board(&self) -> Board {
        let mut zones = Vec::with_capacity(self.n_piles() + 2 + FOUNDATIONS);
        for pile in 0..self.n_piles() {
            zones.push(ZoneCards {
                zone: Zone::Pile(pile as u8),
                face_down: self.face_down[pile],
                cards: self.piles[pile].to_vec(),
            });
        }
        zones.push(ZoneCards {
            zone: Zone::Stock,
            face_down: self.stock.len() as u8,
            cards: self.stock.to_vec(),
        });
        zones.push(ZoneCards {
            zone: Zone::Waste,
            face_down: 0,
            cards: self.waste.to_vec(),
        });
        for (foundation, &rank) in self.foundations.iter().enumerate() {
            let suit = Suit::from_index((foundation / 2) as u8);
            zones.push(ZoneCards {
                zone: Zone::Foundation(foundation as u8),
                face_down: 0,
                cards: (1..=rank).map(|rank| Card::new(suit, rank)).collect(),
            });
        }
        Board {
            game: self.kind(),
            zones,
        }
    }

    /// Notation: `s` turns the stock; `A>B` moves one card, where the source
    /// `A` is a pile number (from 1) or `w` (the waste top) and the
    /// destination `B` is a pile number or `f` (the card's foundation).
    /// Case and spaces are ignored: `W > F` reads as `w>f`.
    fn parse_move(&self, text: &str) -> Result<FtMove, NotationError> {
        let compact: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        let error = |reason: String| NotationError::new(text, reason);
        if compact.is_empty() {
            return Err(error(
                "no move given: write s to turn the stock, or a move such as 3>7, 3>f, w>7 or w>f"
                    .into(),
            ));
        }
        if compact == "s" {
            return Ok(FtMove::Draw);
        }
        let Some((source, destination)) = compact.split_once('>') else {
            return Err(error(
                "expected s (turn the stock) or SOURCE>DESTINATION, such as 3>7, 3>f, w>7 or w>f"
                    .into(),
            ));
        };
        let pile = |number: &str| -> Result<u8, NotationError> {
            let count = self.n_piles();
            match number.parse::<usize>() {
                Ok(n) if (1..=count).contains(&n) => Ok((n - 1) as u8),
                Ok(n) => Err(error(format!(
                    "there is no pile {n}: this game has piles 1 to {count}"
                ))),
                Err(_) => Err(error(format!(
                    "{number:?} is not a pile number (1 to {count}), w or f"
                ))),
            }
        };
        enum Source {
            Pile(u8),
            Waste,
        }
        let source = match source {
            "w" => Source::Waste,
            "f" => return Err(error("cards on a foundation never move".into())),
            "s" => {
                return Err(error(
                    "the stock only turns onto the waste: write s on its own".into(),
                ));
            }
            "" => return Err(error("the move names no source before `>`".into())),
            number => Source::Pile(pile(number)?),
        };
        match (source, destination) {
            (_, "") => Err(error("the move names no destination after `>`".into())),
            (_, "w") => Err(error("no card may be put on the waste".into())),
            (_, "s") => Err(error("no card may be put back in the stock".into())),
            (Source::Waste, "f") => match self.waste.last() {
                Some(&card) => Ok(FtMove::WasteToFoundation { card }),
                None => Err(error("the waste is empty: no card to send home".into())),
            },
            (Source::Pile(from), "f") => match self.piles[usize::from(from)].last() {
                Some(&card) => Ok(FtMove::PileToFoundation { from, card }),
                None => Err(error(format!(
                    "pile {} is empty: no card to send home",
                    from + 1
                ))),
            },
            (Source::Waste, number) => Ok(FtMove::WasteToPile { to: pile(number)? }),
            (Source::Pile(from), number) => Ok(FtMove::PileToPile {
                from,
                to: pile(number)?,
            }),
        }
    }

    fn format_move(&self, mv: FtMove) -> String {
        match mv {
            FtMove::PileToPile { from, to } => {
                format!("{}>{}", u16::from(from) + 1, u16::from(to) + 1)
            }
            FtMove::PileToFoundation { from, .. } => format!("{}>f", u16::from(from) + 1),
            FtMove::WasteToPile { to } => format!("w>{}", u16::from(to) + 1),
            FtMove::WasteToFoundation { .. } => "w>f".to_string(),
            FtMove::Draw => "s".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::conformance::{TestRng, card_counts, check_random_play};

    fn fixture(text: &str) -> FortyThieves {
        FortyThieves::from_fixture(text).unwrap_or_else(|e| panic!("bad fixture: {e}\n{text}"))
    }

    fn card(text: &str) -> Card {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    /// What a move should do: the position after it and its effects, or the error.
    type Expected<'a> = Result<(&'a str, &'a [Effect]), MoveError>;

    /// Applies `mv` to `before` and compares with `expected`; a refused move
    /// must change nothing, an accepted one must undo exactly.
    fn check_move(before: &str, mv: FtMove, expected: Expected) {
        let mut state = fixture(before);
        let original = state.clone();
        match (state.apply(mv), expected) {
            (Ok(outcome), Ok((after, effects))) => {
                assert_eq!(state.to_fixture(), fixture(after).to_fixture(), "{mv:?}");
                assert_eq!(outcome.effects.as_slice(), effects, "{mv:?}");
                state.undo(mv, &outcome);
                assert_eq!(state, original, "undo of {mv:?}");
            }
            (Err(error), Err(expected)) => {
                assert_eq!(error, expected, "{mv:?}");
                assert_eq!(state, original, "a refused {mv:?} changed the state");
            }
            (got, expected) => panic!("{mv:?}: got {got:?}, expected {expected:?}"),
        }
    }

    /// [`check_move`] with the move given in notation.
    fn check(before: &str, mv: &str, expected: Expected) {
        let state = fixture(before);
        let parsed = state
            .parse_move(mv)
            .unwrap_or_else(|e| panic!("{mv:?} does not parse: {e}"));
        check_move(before, parsed, expected);
    }

    fn turned_up(pile: u8, card_text: &str) -> Effect {
        Effect::TurnedUp {
            zone: Zone::Pile(pile),
            card: card(card_text),
        }
    }

    // ---- Building on piles ----

    #[test]
    fn piles_build_down_in_any_suit_but_the_cards_own() {
        let before = "game: indian\np1: 8c\np2: 9d 7h";
        check(before, "2>1", Ok(("game: indian\np1: 8c 7h\np2: 9d", &[])));
        // Colour does not matter: a red card on a red card.
        check(
            "game: indian\np1: 7h\np2: 9c 6d",
            "2>1",
            Ok(("game: indian\np1: 7h 6d\np2: 9c", &[])),
        );
        check(
            "game: indian\np1: 2s\np2: 9c Ah",
            "2>1",
            Ok(("game: indian\np1: 2s Ah\np2: 9c", &[])),
        );
        let refused = |onto: &str, moved: &str| MoveError::DoesNotBuild {
            card: card(moved),
            onto: card(onto),
        };
        check(
            "game: indian\np1: 8h\np2: 9d 7h",
            "2>1",
            Err(refused("8h", "7h")),
        );
        check(
            "game: indian\np1: 9c\np2: 9d 7h",
            "2>1",
            Err(refused("9c", "7h")),
        );
        check(
            "game: indian\np1: 6c\np2: 9d 7h",
            "2>1",
            Err(refused("6c", "7h")),
        );
        check(
            "game: indian\np1: Ac\np2: 9d Kh",
            "2>1",
            Err(refused("Ac", "Kh")),
        );
    }

    #[test]
    fn only_the_top_card_of_a_pile_moves() {
        // 7h lies under 2d: pile 2 offers only 2d, which does not go on 8c.
        check(
            "game: indian\np1: 8c\np2: 7h 2d",
            "2>1",
            Err(MoveError::DoesNotBuild {
                card: card("2d"),
                onto: card("8c"),
            }),
        );
    }

    #[test]
    fn an_empty_pile_takes_any_single_card() {
        check(
            "game: indian\np1: Kc 5h\np2: 9d",
            "1>3",
            Ok(("game: indian\np1: Kc\np2: 9d\np3: 5h", &[])),
        );
        check(
            "game: indian\np1: Kc 5h\np2: 9d",
            "1>10",
            Ok(("game: indian\np1: Kc\np2: 9d\np10: 5h", &[])),
        );
        check(
            "game: indian\np1: 9d\nwaste: 4s Qh",
            "w>2",
            Ok(("game: indian\np1: 9d\np2: Qh\nwaste: 4s", &[])),
        );
    }

    #[test]
    fn a_piles_only_card_moving_into_an_empty_pile_is_refused() {
        check(
            "game: indian\np1: 5h\np2: 9d",
            "1>3",
            Err(MoveError::ChangesNothing),
        );
        // With a face-down card under it, the move turns that card up: allowed.
        check(
            "game: indian\np1: 9c | 5h",
            "1>2",
            Ok(("game: indian\np1: 9c\np2: 5h", &[turned_up(0, "9c")])),
        );
        // A pile's only card may still build on another pile.
        check(
            "game: indian\np1: 5h\np2: 6s",
            "1>2",
            Ok(("game: indian\np2: 6s 5h", &[])),
        );
    }

    #[test]
    fn a_face_down_card_on_top_turns_up() {
        check(
            "game: indian\np1: 9c | 5h\np2: 6s",
            "1>2",
            Ok(("game: indian\np1: 9c\np2: 6s 5h", &[turned_up(0, "9c")])),
        );
        // Midshipman: only the upper of two face-down cards turns.
        check(
            "game: midshipman\np1: 9c 8d | 5h\np2: 6s",
            "1>2",
            Ok((
                "game: midshipman\np1: 9c | 8d\np2: 6s 5h",
                &[turned_up(0, "8d")],
            )),
        );
        check(
            "game: midshipman\np3: 9c 8d | Ah",
            "3>f",
            Ok((
                "game: midshipman\np3: 9c | 8d\nf5: Ah",
                &[turned_up(2, "8d")],
            )),
        );
        // A face-up card uncovered turns nothing.
        check(
            "game: indian\np1: 9c | Kd 5h\np2: 6s",
            "1>2",
            Ok(("game: indian\np1: 9c | Kd\np2: 6s 5h", &[])),
        );
    }

    #[test]
    fn moves_from_missing_or_empty_zones_are_refused() {
        check(
            "game: indian\np1: 8c",
            "3>1",
            Err(MoveError::EmptySource {
                zone: Zone::Pile(2),
            }),
        );
        check(
            "game: indian\np1: 8c",
            "w>1",
            Err(MoveError::EmptySource { zone: Zone::Waste }),
        );
        check("game: indian\np1: 8c 7h", "1>1", Err(MoveError::SameZone));
        let no_pile = |pile: u8| {
            Err(MoveError::NoSuchZone {
                zone: Zone::Pile(pile),
            })
        };
        // Midshipman has no tenth pile; the notation refuses it too.
        let midshipman = "game: midshipman\np1: 8c 7h";
        check_move(
            midshipman,
            FtMove::PileToPile { from: 0, to: 9 },
            no_pile(9),
        );
        check_move(
            midshipman,
            FtMove::PileToPile { from: 9, to: 0 },
            no_pile(9),
        );
        check_move(midshipman, FtMove::WasteToPile { to: 9 }, no_pile(9));
        let indian = "game: indian\np1: 8c 7h";
        check_move(indian, FtMove::PileToPile { from: 0, to: 10 }, no_pile(10));
        check_move(
            indian,
            FtMove::PileToFoundation {
                from: 200,
                card: card("7h"),
            },
            no_pile(200),
        );
    }

    // ---- The stock and the waste ----

    #[test]
    fn the_stock_turns_one_card_onto_the_waste_once_through() {
        check(
            "game: indian\nstock: 4c 5h\nwaste: Qs",
            "s",
            Ok((
                "game: indian\nstock: 4c\nwaste: Qs 5h",
                &[Effect::Drew { card: card("5h") }],
            )),
        );
        // No redeal: an empty stock stays empty whatever the waste holds.
        check(
            "game: indian\nwaste: Qs 5h",
            "s",
            Err(MoveError::StockEmpty),
        );
        let mut moves = Vec::new();
        fixture("game: indian\np1: Kc 9d\np2: Ks 9h\nwaste: Qs 5h").legal_moves(&mut moves);
        assert!(!moves.contains(&FtMove::Draw));
    }

    #[test]
    fn only_the_waste_top_is_in_play() {
        check(
            "game: indian\np1: 8c\nwaste: 7h Ks",
            "w>1",
            Err(MoveError::DoesNotBuild {
                card: card("Ks"),
                onto: card("8c"),
            }),
        );
        check(
            "game: indian\np1: 8c\nwaste: Ks 7h",
            "w>1",
            Ok(("game: indian\np1: 8c 7h\nwaste: Ks", &[])),
        );
        check(
            "game: indian\nwaste: Ac 2d",
            "w>f",
            Err(MoveError::NotNextForFoundation { card: card("2d") }),
        );
        check(
            "game: indian\nwaste: 2d Ac",
            "w>f",
            Ok(("game: indian\nwaste: 2d\nf1: Ac", &[])),
        );
    }

    // ---- Foundations ----

    #[test]
    fn foundations_build_up_in_suit_from_the_ace() {
        check(
            "game: indian\np1: 9c Ad",
            "1>f",
            Ok(("game: indian\np1: 9c\nf3: Ad", &[])),
        );
        check(
            "game: indian\np1: 9c 2d\nf3: Ad",
            "1>f",
            Ok(("game: indian\np1: 9c\nf3: 2d", &[])),
        );
        check(
            "game: indian\np1: 9c 3d\nf3: Ad",
            "1>f",
            Err(MoveError::NotNextForFoundation { card: card("3d") }),
        );
        // A 2 of another suit does not go on this Ace.
        check(
            "game: indian\np1: 9c 2h\nf3: Ad",
            "1>f",
            Err(MoveError::NotNextForFoundation { card: card("2h") }),
        );
        check(
            "game: indian\np1: 9c Qs\nf7: Ks\nf8: Js",
            "1>f",
            Ok(("game: indian\np1: 9c\nf7: Ks\nf8: Qs", &[])),
        );
    }

    #[test]
    fn a_card_goes_to_the_lower_foundation_of_its_suit_that_takes_it() {
        let foundation_move = "game: indian\np1: 9d {card}\n{foundations}";
        let position = |top: &str, foundations: &str| {
            foundation_move
                .replace("{card}", top)
                .replace("{foundations}", foundations)
        };
        let cases = [
            // (card, foundations before, foundations after)
            ("Ac", "", "f1: Ac"),
            ("Ac", "f1: Ac", "f1: Ac\nf2: Ac"),
            ("2c", "f1: Ac\nf2: Ac", "f1: 2c\nf2: Ac"),
            ("2c", "f1: 3c\nf2: Ac", "f1: 3c\nf2: 2c"),
            ("4c", "f1: 3c\nf2: Ac", "f1: 4c\nf2: Ac"),
            // Both foundations end on 3c; undo must still take it from f2.
            ("3c", "f1: 3c\nf2: 2c", "f1: 3c\nf2: 3c"),
            ("3c", "f1: 2c\nf2: 2c", "f1: 3c\nf2: 2c"),
            ("Ks", "f7: Ks\nf8: Qs", "f7: Ks\nf8: Ks"),
        ];
        for (top, before, after) in cases {
            check(
                &position(top, before),
                "1>f",
                Ok((&position("", after), &[])),
            );
        }
    }

    #[test]
    fn a_foundation_move_must_name_the_sources_top_card() {
        let before = "game: indian\np1: 9d Ac\nwaste: Ad";
        check_move(
            before,
            FtMove::PileToFoundation {
                from: 0,
                card: card("Ad"),
            },
            Err(MoveError::CardNotInPlay { card: card("Ad") }),
        );
        check_move(
            before,
            FtMove::WasteToFoundation { card: card("Ac") },
            Err(MoveError::CardNotInPlay { card: card("Ac") }),
        );
        check_move(
            "game: indian\np1: 9d Ac",
            FtMove::PileToFoundation {
                from: 1,
                card: card("Ac"),
            },
            Err(MoveError::EmptySource {
                zone: Zone::Pile(1),
            }),
        );
        check_move(
            "game: indian\np1: 9d Ac",
            FtMove::WasteToFoundation { card: card("Ac") },
            Err(MoveError::EmptySource { zone: Zone::Waste }),
        );
    }

    #[test]
    fn foundation_cards_never_come_back() {
        let state = fixture("game: indian\np1: 3c 2d\nf1: 2c\nf3: Ad");
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        let texts: Vec<String> = moves.iter().map(|&mv| state.format_move(mv)).collect();
        // Only 2d can move (home, or to an empty pile); nothing comes off a foundation.
        assert_eq!(
            texts,
            [
                "1>f", "1>2", "1>3", "1>4", "1>5", "1>6", "1>7", "1>8", "1>9", "1>10"
            ]
        );
        assert!(state.parse_move("f>1").is_err());
    }

    // ---- Winning, being stuck, legal moves ----

    const ALL_HOME: &str =
        "game: indian\nf1: Kc\nf2: Kc\nf3: Kd\nf4: Kd\nf5: Kh\nf6: Kh\nf7: Ks\nf8: Ks";

    #[test]
    fn the_game_is_won_with_all_104_cards_home() {
        let won = fixture(ALL_HOME);
        assert!(won.is_won());
        assert!(!won.is_stuck());
        assert_eq!(card_counts(&won.board()), [2; 52]);
        let mut moves = vec![FtMove::Draw];
        won.legal_moves(&mut moves);
        assert!(moves.is_empty());
        check_move(ALL_HOME, FtMove::Draw, Err(MoveError::GameOver));
        check_move(
            ALL_HOME,
            FtMove::PileToPile { from: 0, to: 1 },
            Err(MoveError::GameOver),
        );
        // One card short of home is not won.
        let almost = ALL_HOME.replace("f8: Ks", "f8: Qs\np1: Ks");
        let state = fixture(&almost);
        assert!(!state.is_won());
        check(&almost, "1>f", Ok((ALL_HOME, &[])));
    }

    /// Nine piles that take nothing but Queens (on the Kings) and 4s of
    /// diamonds, hearts and spades (on the 5c), and offer nothing that moves.
    const BLOCKED: &str = "game: midshipman
        p1: Kc\np2: Kd\np3: Kh\np4: Ks\np5: Kc\np6: Kd\np7: Kh\np8: Ks\np9: 5c";

    #[test]
    fn stuck_means_no_card_moves_and_the_stock_brings_up_none_that_can() {
        let check_stuck = |extra: &str, stuck: bool| {
            let state = fixture(&format!("{BLOCKED}\n{extra}"));
            assert_eq!(state.is_stuck(), stuck, "{extra:?}");
            assert!(!state.is_won());
        };
        // Nothing left at all.
        check_stuck("", true);
        // The stock turns, but none of its cards can go anywhere.
        check_stuck("stock: 7h 4c 8s", true);
        // A stock card for a foundation, a pile top, an empty pile.
        check_stuck("stock: Ah 7h 8s", false);
        check_stuck("stock: 7h 4d 8s", false);
        check_stuck("stock: 7h 8s Qc", false);
        check_stuck("stock: 7h 8s\nf7: 7s", false);
        // The waste top can move.
        check_stuck("stock: 7h\nwaste: 8s 4h", false);
        // A card under the waste top is not in play.
        check_stuck("waste: 4h 8s", true);
        check_stuck("stock: 8s\nwaste: 4h 9s", true);
        // Only the waste top builds on the stock card, which no pile takes.
        check_stuck("stock: 7h\nwaste: 8s", true);
        // A pile top can go home.
        check_stuck("f1: Qc", false);
        check_stuck("stock: 7h\nf1: Qc", false);
    }

    #[test]
    fn an_empty_pile_unsticks_any_stock_card_but_not_a_lone_card() {
        let no_ninth = BLOCKED.replace("p9: 5c", "");
        let check_stuck = |extra: &str, stuck: bool| {
            let state = fixture(&format!("{no_ninth}\n{extra}"));
            assert_eq!(state.is_stuck(), stuck, "{extra:?}");
        };
        let two_cards = fixture(&no_ninth.replace("p1: Kc", "p1: 7d Kc"));
        assert!(!two_cards.is_stuck(), "Kc may leave 7d for the empty pile");
        // The Kings are each alone: moving one into the empty pile changes nothing.
        check_stuck("", true);
        check_stuck("stock: 8s", false);
        check_stuck("waste: 8s", false);
    }

    #[test]
    fn legal_moves_come_in_a_fixed_order() {
        let state = fixture(
            "game: midshipman
             p1: Kc | 8c
             p2: 9d 7h
             p3: Ac
             p4: Ks\np5: Ks\np6: Kh\np7: Kd\np8: Kd
             stock: 4c
             waste: 2c 6s",
        );
        let mut moves = vec![FtMove::Draw; 3];
        state.legal_moves(&mut moves);
        let texts: Vec<String> = moves.iter().map(|&mv| state.format_move(mv)).collect();
        assert_eq!(
            texts,
            ["3>f", "1>9", "2>1", "2>9", "w>2", "w>9", "s"],
            "pile 3's lone Ace goes home but not into the empty pile 9"
        );
        for mv in moves {
            assert!(state.clone().apply(mv).is_ok(), "{mv:?}");
        }
    }

    // ---- Pile capacity ----

    #[test]
    fn the_longest_pile_fits_and_takes_nothing_more() {
        // Four dealt cards under a King, then Queen down to Ace: 16 cards.
        let longest = "game: midshipman
            p1: Kc Kd | Kh Ks Qc Jd Tc 9d 8c 7d 6c 5d 4c 3d 2c Ad
            waste: Kh";
        let state = fixture(longest);
        assert_eq!(state.pile(0).len(), MAX_PILE_LEN);
        check(
            longest,
            "w>1",
            Err(MoveError::DoesNotBuild {
                card: card("Kh"),
                onto: card("Ad"),
            }),
        );
        // Indian: three dealt cards under a King, then Queen down to Ace.
        let indian = fixture("game: indian\np1: 5c | 7h Ks Qc Jd Tc 9d 8c 7d 6c 5d 4c 3d 2c Ah");
        assert_eq!(indian.pile(0).len(), 15);
    }

    // ---- Fixtures ----

    #[test]
    fn fixtures_refuse_positions_that_cannot_arise() {
        let check_error = |text: &str, reason: &str| {
            let error = FortyThieves::from_fixture(text).err();
            assert!(
                error.as_deref().is_some_and(|e| e.contains(reason)),
                "{text:?}: got {error:?}, expected {reason:?}"
            );
        };
        check_error("", "empty fixture");
        check_error("game: klondike", "first line");
        check_error("p1: Kc", "first line");
        check_error("game: indian\np1: Kc |", "face-down card on top");
        check_error("game: indian\np1: Kc | Qd | Jc", "more than one");
        check_error("game: indian\np1: Kc Kd Kh Ks 9c", "one rank below");
        check_error("game: indian\np1: Xx", "not a card");
        check_error("game: indian\np1: Kc\np1: Kd", "twice");
        check_error("game: midshipman\np10: Kc", "1 to 9");
        check_error("game: indian\np0: Kc", "1 to 10");
        check_error("game: indian\nf9: Kc", "1 to 8");
        check_error("game: indian\nf2: Ac", "above f1");
        check_error("game: indian\nf3: Ac", "not a Diamonds card");
        check_error("game: indian\nf1: Ac 2c", "only the foundation's top card");
        check_error("game: indian\ncells: Ac", "unknown zone");
        check_error("game: indian\nno colon here", "no `label:`");
        check_error(
            "game: indian\np1: Ac\np2: Ac\nwaste: Ac",
            "Ac appears 3 times",
        );
        check_error("game: indian\np1: Ac\nf1: 2c\nf2: Ac", "Ac appears 3 times");
        let long_stock = vec!["Kc"; 75].join(" ");
        check_error(
            &format!("game: indian\nstock: {long_stock}"),
            "more than the 74",
        );
        let stock = vec!["Qc"; 40].join(" ");
        check_error(
            &format!("game: midshipman\nstock: {stock}\nwaste: {stock}"),
            "more than the 68",
        );
    }

    #[test]
    fn fixtures_round_trip_and_read_leniently() {
        let state =
            fixture("  GAME: Midshipman \n\n P2 : 9c 8D | 5h \nwaste: Ks\nStock: 2c 3c\nf1: Ac");
        assert_eq!(state.variant(), Variant::Midshipman);
        assert_eq!(state.pile(1), [card("9c"), card("8d"), card("5h")]);
        assert_eq!(state.face_down(1), 2);
        assert_eq!(state.stock(), [card("2c"), card("3c")]);
        assert_eq!(state.waste(), [card("Ks")]);
        assert_eq!(state.foundation_rank(0), 1);
        assert_eq!(fixture(&state.to_fixture()), state);
        for variant in Variant::ALL {
            let deal = FortyThieves::deal(variant, 42);
            assert_eq!(fixture(&deal.to_fixture()), deal);
        }
    }

    // ---- Notation ----

    #[test]
    fn notation_reads_leniently_and_writes_canonically() {
        let state = fixture("game: midshipman\np3: 9c | 4h\nwaste: Qs 2d");
        let check_notation =
            |text: &str, expected: Result<FtMove, &str>| match (state.parse_move(text), expected) {
                (Ok(mv), Ok(expected)) => {
                    assert_eq!(mv, expected, "{text:?}");
                    let canonical = state.format_move(mv);
                    assert_eq!(state.parse_move(&canonical), Ok(mv), "{canonical:?}");
                    assert_eq!(canonical, text.replace(' ', "").to_lowercase(), "{text:?}");
                }
                (Err(error), Err(reason)) => {
                    assert!(
                        error.reason.contains(reason),
                        "{text:?}: reason {:?} lacks {reason:?}",
                        error.reason
                    );
                    assert_eq!(error.text, text);
                }
                (got, expected) => panic!("{text:?}: got {got:?}, expected {expected:?}"),
            };
        check_notation("s", Ok(FtMove::Draw));
        check_notation(" S ", Ok(FtMove::Draw));
        check_notation("3>7", Ok(FtMove::PileToPile { from: 2, to: 6 }));
        check_notation(" 3 > 7 ", Ok(FtMove::PileToPile { from: 2, to: 6 }));
        check_notation("9>1", Ok(FtMove::PileToPile { from: 8, to: 0 }));
        check_notation("3>3", Ok(FtMove::PileToPile { from: 2, to: 2 }));
        let home = FtMove::PileToFoundation {
            from: 2,
            card: card("4h"),
        };
        check_notation("3>f", Ok(home));
        check_notation("3 > F", Ok(home));
        check_notation("w>7", Ok(FtMove::WasteToPile { to: 6 }));
        check_notation("W>7", Ok(FtMove::WasteToPile { to: 6 }));
        let waste_home = FtMove::WasteToFoundation { card: card("2d") };
        check_notation("w>f", Ok(waste_home));
        check_notation("W > F", Ok(waste_home));

        check_notation("", Err("no move given"));
        check_notation("  ", Err("no move given"));
        check_notation("3-7", Err("SOURCE>DESTINATION"));
        check_notation("draw", Err("SOURCE>DESTINATION"));
        check_notation(
            "10>1",
            Err("there is no pile 10: this game has piles 1 to 9"),
        );
        check_notation("1>0", Err("there is no pile 0"));
        check_notation("x>1", Err("\"x\" is not a pile number"));
        check_notation("1>x", Err("\"x\" is not a pile number"));
        check_notation("3>>7", Err("\">7\" is not a pile number"));
        check_notation("f>1", Err("never move"));
        check_notation("s>1", Err("write s on its own"));
        check_notation("3>w", Err("on the waste"));
        check_notation("3>s", Err("back in the stock"));
        check_notation(">3", Err("no source"));
        check_notation("3>", Err("no destination"));
        check_notation("1>f", Err("pile 1 is empty"));
        let empty_waste = fixture("game: indian\np1: Kc");
        assert!(
            empty_waste
                .parse_move("w>f")
                .is_err_and(|e| e.reason.contains("the waste is empty"))
        );
        assert_eq!(
            empty_waste.parse_move("10>1"),
            Ok(FtMove::PileToPile { from: 9, to: 0 })
        );
    }

    #[test]
    fn moves_serialize_in_snake_case() {
        let check_json = |mv: FtMove, json: &str| {
            assert_eq!(serde_json::to_string(&mv).ok().as_deref(), Some(json));
            assert_eq!(serde_json::from_str::<FtMove>(json).ok(), Some(mv));
        };
        check_json(FtMove::Draw, r#""draw""#);
        check_json(
            FtMove::PileToPile { from: 2, to: 6 },
            r#"{"pile_to_pile":{"from":2,"to":6}}"#,
        );
        check_json(
            FtMove::PileToFoundation {
                from: 0,
                card: card("Ac"),
            },
            r#"{"pile_to_foundation":{"from":0,"card":"Ac"}}"#,
        );
        check_json(
            FtMove::WasteToPile { to: 4 },
            r#"{"waste_to_pile":{"to":4}}"#,
        );
        check_json(
            FtMove::WasteToFoundation { card: card("Td") },
            r#"{"waste_to_foundation":{"card":"Td"}}"#,
        );
        assert!(std::mem::size_of::<FtMove>() <= 3);
    }

    // ---- The deal and the board ----

    #[test]
    fn deals_go_row_by_row_and_the_stock_turns_in_pack_order() {
        for variant in Variant::ALL {
            for seed in [0, 1, 2, 3, u64::MAX] {
                let pack = shuffled_pack(2, seed);
                let state = FortyThieves::deal(variant, seed);
                let n_piles = variant.n_piles();
                let tableau = n_piles * variant.rows();
                assert_eq!(state.kind(), variant.kind());
                for pile in 0..n_piles {
                    let expected: Vec<Card> = (0..variant.rows())
                        .map(|row| pack[row * n_piles + pile])
                        .collect();
                    assert_eq!(state.pile(pile), expected, "{variant:?} seed {seed}");
                    assert_eq!(usize::from(state.face_down(pile)), variant.face_down_rows());
                }
                assert!(state.pile(n_piles).is_empty());
                assert_eq!(state.stock().len(), variant.stock_size());
                // Turning the stock brings up P[tableau], P[tableau + 1], ...
                let mut play = state.clone();
                for &expected in &pack[tableau..] {
                    let outcome = play.apply(FtMove::Draw).expect("the stock has cards");
                    assert_eq!(
                        outcome.effects.as_slice(),
                        [Effect::Drew { card: expected }]
                    );
                }
                assert_eq!(play.apply(FtMove::Draw), Err(MoveError::StockEmpty));
                assert!(state.waste().is_empty());
                assert!((0..FOUNDATIONS).all(|f| state.foundation_rank(f) == 0));
                assert_eq!(card_counts(&state.board()), [2; 52]);
            }
        }
        assert_eq!(Variant::Indian.stock_size(), 74);
        assert_eq!(Variant::Midshipman.stock_size(), 68);
    }

    #[test]
    fn the_board_lists_piles_stock_waste_and_foundations() {
        let state = fixture("game: midshipman\np2: 9c 8d | 5h\nstock: 2c 3c\nwaste: Ks\nf3: 3d");
        let board = state.board();
        assert_eq!(board.game, GameKind::Midshipman);
        let zones: Vec<Zone> = board.zones.iter().map(|zone| zone.zone).collect();
        let mut expected: Vec<Zone> = (0..9).map(Zone::Pile).collect();
        expected.extend([Zone::Stock, Zone::Waste]);
        expected.extend((0..8).map(Zone::Foundation));
        assert_eq!(zones, expected);
        let zone = |z: Zone| board.zones.iter().find(|c| c.zone == z).expect("listed");
        assert_eq!(zone(Zone::Pile(1)).face_down, 2);
        assert_eq!(
            zone(Zone::Pile(1)).cards,
            [card("9c"), card("8d"), card("5h")]
        );
        assert_eq!(zone(Zone::Stock).face_down, 2);
        assert_eq!(zone(Zone::Stock).cards, [card("2c"), card("3c")]);
        assert_eq!(zone(Zone::Waste).face_down, 0);
        assert_eq!(
            zone(Zone::Foundation(2)).cards,
            [card("Ad"), card("2d"), card("3d")]
        );
        let view = state.view();
        assert_eq!(view.zones[1].hidden, 2);
        assert_eq!(view.zones[1].face_up, [card("5h")]);
        assert_eq!(view.zones[9].face_up, []);
        assert_eq!(view.zones[9].hidden, 2);
    }

    #[test]
    fn golden_deals() {
        let check_deal = |variant: Variant, seed: u64, expected: &str| {
            let layout = FortyThieves::deal(variant, seed).to_fixture();
            assert_eq!(layout, expected, "{variant:?} seed {seed}");
        };
        check_deal(Variant::Indian, 1, GOLDEN_INDIAN_1);
        check_deal(Variant::Indian, 2, GOLDEN_INDIAN_2);
        check_deal(Variant::Indian, 3, GOLDEN_INDIAN_3);
        check_deal(Variant::Midshipman, 1, GOLDEN_MIDSHIPMAN_1);
        check_deal(Variant::Midshipman, 2, GOLDEN_MIDSHIPMAN_2);
        check_deal(Variant::Midshipman, 3, GOLDEN_MIDSHIPMAN_3);
    }

    const GOLDEN_INDIAN_1: &str = "\
game: indian\n\
p1: As | 8h 8s\n\
p2: 3d | 5h Qs\n\
p3: 7h | Jc 3s\n\
p4: 9d | Ks 8h\n\
p5: 6s | Ts Td\n\
p6: 9s | 5c 4s\n\
p7: 9h | Kh Td\n\
p8: 2h | Ad Ac\n\
p9: Js | 2s Qd\n\
p10: 3h | Kd 8c\n\
stock: 2c 6s Kc Th Kh Tc Jh 3c 9d Ts 3s 4d 6h 2c 6h Jc 4d Tc 7s Qh Qc 4h 8s Jd Th 4s 6d 8c 4c 5d 5d Ks 3c As Js 4h 2h 7h Qc 9c Kc 7c 4c 7c Qs Ah 6d 7s 5s Jd 9s 7d 6c 5c Kd Ac 5h 2d 2s Ah 8d 7d 8d Ad 5s 3d 6c 9h Jh 2d Qh 9c Qd 3h\n\
waste:\n\
f1:\n\
f2:\n\
f3:\n\
f4:\n\
f5:\n\
f6:\n\
f7:\n\
f8:\n\
";
    const GOLDEN_INDIAN_2: &str = "\
game: indian\n\
p1: Td | Qs 2d\n\
p2: 9h | Qh Jd\n\
p3: 7s | 7d Tc\n\
p4: 3h | 7c 3h\n\
p5: 8d | Kh Kc\n\
p6: 7h | Td Ts\n\
p7: 2c | 8c Qd\n\
p8: 8d | Ad 9c\n\
p9: 4d | Qc 2c\n\
p10: 4c | 8s 8c\n\
stock: Jc Ks Ac 6h Js Ks Qh Ad 4c 3c Th 7s As 2s 9d Kh 6h 9s Kc 8h 5d 4s 5s 6d 2h 2d 4h As 5c 7d Jh Ac 4h Qc 5c Ah Ts 6s 6c 5h 9s 3s 2h Qs Kd Jc Js 8s 9c Jd 4s Tc 8h 5h 3c 9d Qd 6s 7c 6c 9h Kd 3d 2s 4d 3d Th 3s 7h Jh Ah 5s 6d 5d\n\
waste:\n\
f1:\n\
f2:\n\
f3:\n\
f4:\n\
f5:\n\
f6:\n\
f7:\n\
f8:\n\
";
    const GOLDEN_INDIAN_3: &str = "\
game: indian\n\
p1: 8c | Ad 4s\n\
p2: Ts | 7h 9h\n\
p3: 3c | 7h 9c\n\
p4: 5c | 6s Qh\n\
p5: 2c | 6s 5s\n\
p6: 3d | Qd 5d\n\
p7: 4h | 8h 2h\n\
p8: Ad | Tc 7c\n\
p9: 9d | 7c 3h\n\
p10: 6d | 2d 7d\n\
stock: 2s 6h Qc 9s Ah 7s 5h 8s 7s 8d 5h Th Ah 8c 5c 5d 3h Ac Js 4c Kh Qd 2d 2h 6h Kc 7d Qs Td Th Jh Jh Td 9h 6c 4d Ks Qs Jd Jc As Ac 9d Kh Qh 4s 8s 8d 9s 3c 4d Ks Kc Kd 6c Tc 4c 3d 2c Js Kd 2s As Jc 8h 9c 3s 6d 4h Qc 3s Jd 5s Ts\n\
waste:\n\
f1:\n\
f2:\n\
f3:\n\
f4:\n\
f5:\n\
f6:\n\
f7:\n\
f8:\n\
";
    const GOLDEN_MIDSHIPMAN_1: &str = "\
game: midshipman\n\
p1: As 3h | 2s Ac\n\
p2: 3d 8h | Kd Qd\n\
p3: 7h 5h | 8s 8c\n\
p4: 9d Jc | Qs 3h\n\
p5: 6s Ks | 3s Qd\n\
p6: 9s Ts | 8h 9c\n\
p7: 9h 5c | Td Qh\n\
p8: 2h Kh | 4s 2d\n\
p9: Js Ad | Td Jh\n\
stock: 2c 6s Kc Th Kh Tc Jh 3c 9d Ts 3s 4d 6h 2c 6h Jc 4d Tc 7s Qh Qc 4h 8s Jd Th 4s 6d 8c 4c 5d 5d Ks 3c As Js 4h 2h 7h Qc 9c Kc 7c 4c 7c Qs Ah 6d 7s 5s Jd 9s 7d 6c 5c Kd Ac 5h 2d 2s Ah 8d 7d 8d Ad 5s 3d 6c 9h\n\
waste:\n\
f1:\n\
f2:\n\
f3:\n\
f4:\n\
f5:\n\
f6:\n\
f7:\n\
f8:\n\
";
    const GOLDEN_MIDSHIPMAN_2: &str = "\
game: midshipman\n\
p1: Td 4c | Qc 9c\n\
p2: 9h Qs | 8s 2c\n\
p3: 7s Qh | 2d 8c\n\
p4: 3h 7d | Jd 5d\n\
p5: 8d 7c | Tc 6d\n\
p6: 7h Kh | 3h 5s\n\
p7: 2c Td | Kc Ah\n\
p8: 8d 8c | Ts Jh\n\
p9: 4d Ad | Qd 7h\n\
stock: Jc Ks Ac 6h Js Ks Qh Ad 4c 3c Th 7s As 2s 9d Kh 6h 9s Kc 8h 5d 4s 5s 6d 2h 2d 4h As 5c 7d Jh Ac 4h Qc 5c Ah Ts 6s 6c 5h 9s 3s 2h Qs Kd Jc Js 8s 9c Jd 4s Tc 8h 5h 3c 9d Qd 6s 7c 6c 9h Kd 3d 2s 4d 3d Th 3s\n\
waste:\n\
f1:\n\
f2:\n\
f3:\n\
f4:\n\
f5:\n\
f6:\n\
f7:\n\
f8:\n\
";
    const GOLDEN_MIDSHIPMAN_3: &str = "\
game: midshipman\n\
p1: 8c 6d | 7c 7c\n\
p2: Ts Ad | 2d 3h\n\
p3: 3c 7h | 4s 7d\n\
p4: 5c 7h | 9h Ts\n\
p5: 2c 6s | 9c 5s\n\
p6: 3d 6s | Qh Jd\n\
p7: 4h Qd | 5s 3s\n\
p8: Ad 8h | 5d Qc\n\
p9: 9d Tc | 2h 4h\n\
stock: 2s 6h Qc 9s Ah 7s 5h 8s 7s 8d 5h Th Ah 8c 5c 5d 3h Ac Js 4c Kh Qd 2d 2h 6h Kc 7d Qs Td Th Jh Jh Td 9h 6c 4d Ks Qs Jd Jc As Ac 9d Kh Qh 4s 8s 8d 9s 3c 4d Ks Kc Kd 6c Tc 4c 3d 2c Js Kd 2s As Jc 8h 9c 3s 6d\n\
waste:\n\
f1:\n\
f2:\n\
f3:\n\
f4:\n\
f5:\n\
f6:\n\
f7:\n\
f8:\n\
";

    // ---- Random play ----

    /// Any syntactically possible move, legal or not, with pile numbers a
    /// little past the last pile.
    fn arbitrary_move(state: &FortyThieves, rng: &mut TestRng) -> FtMove {
        let pile = |rng: &mut TestRng| rng.below(MAX_PILES + 2) as u8;
        // Half the time the card really on top, so that the foundation checks run.
        let card_of = |rng: &mut TestRng, top: Option<&Card>| match top {
            Some(&top) if rng.below(2) == 0 => top,
            _ => Card::from_index(rng.below(52)),
        };
        match rng.below(5) {
            0 => FtMove::PileToPile {
                from: pile(rng),
                to: pile(rng),
            },
            1 => {
                let from = pile(rng);
                let card = card_of(rng, state.pile(usize::from(from)).last());
                FtMove::PileToFoundation { from, card }
            }
            2 => FtMove::WasteToPile { to: pile(rng) },
            3 => FtMove::WasteToFoundation {
                card: card_of(rng, state.waste().last()),
            },
            _ => FtMove::Draw,
        }
    }

    /// Stuck by its definition: turn the stock card by card and see whether
    /// any card ever moves.
    fn stuck_by_turning_the_stock(state: &FortyThieves) -> bool {
        if state.is_won() {
            return false;
        }
        let mut state = state.clone();
        let mut moves = Vec::new();
        loop {
            state.legal_moves(&mut moves);
            if moves.iter().any(|&mv| mv != FtMove::Draw) {
                return false;
            }
            if state.apply(FtMove::Draw).is_err() {
                return true;
            }
        }
    }

    fn play_and_check_stuck(variant: Variant, seed: u64) {
        let deal = FortyThieves::deal(variant, seed);
        let end = check_random_play(&deal, seed, 600, arbitrary_move);
        // Replay the same game, checking `is_stuck` against its definition.
        let mut rng = TestRng::new(seed ^ 0x5eed);
        let mut state = deal;
        let mut moves = Vec::new();
        for _ in 0..600 {
            assert_eq!(
                state.is_stuck(),
                stuck_by_turning_the_stock(&state),
                "{state:?}"
            );
            state.legal_moves(&mut moves);
            // Favour card moves over turning the stock, to reach stuck positions with stock left.
            let card_moves = moves.iter().filter(|&&mv| mv != FtMove::Draw).count();
            let mv = match moves.len() {
                0 => break,
                _ if card_moves > 0 && rng.below(4) > 0 => moves[rng.below(card_moves)],
                len => moves[rng.below(len)],
            };
            state.apply(mv).expect("a generated move applies");
        }
        assert_eq!(end.is_stuck(), stuck_by_turning_the_stock(&end));
    }

    /// A random position close to blocked, not a whole game: pile tops of
    /// ranks three apart (which never build on one another), rare empty
    /// piles, a short stock. Stuck and not stuck are both common among these.
    fn random_sparse_position(variant: Variant, seed: u64) -> FortyThieves {
        let mut rng = TestRng::new(seed);
        let any_card = |rng: &mut TestRng| Card::from_index(rng.below(52));
        let mut state = FortyThieves::empty(variant);
        for pile in 0..variant.n_piles() {
            if rng.below(30) == 0 {
                continue;
            }
            if rng.below(3) == 0 {
                state.piles[pile].push(any_card(&mut rng));
            }
            let rank = [13, 10, 7, 4][rng.below(4)];
            let suit = Suit::from_index(rng.below(4) as u8);
            state.piles[pile].push(Card::new(suit, rank));
        }
        for suit in 0..4 {
            // The lower-index foundation of a suit is never below the other.
            let high = rng.below(14);
            state.foundations[2 * suit] = high as u8;
            state.foundations[2 * suit + 1] = rng.below(high + 1) as u8;
        }
        for _ in 0..rng.below(5) {
            state.stock.push(any_card(&mut rng));
        }
        for _ in 0..rng.below(3) {
            state.waste.push(any_card(&mut rng));
        }
        state
    }

    #[test]
    fn sparse_positions_are_stuck_exactly_by_the_definition() {
        let mut counts = [0usize; 2];
        for seed in 0..2000 {
            let variant = Variant::ALL[seed as usize % 2];
            let state = random_sparse_position(variant, seed);
            let stuck = stuck_by_turning_the_stock(&state);
            assert_eq!(state.is_stuck(), stuck, "{}", state.to_fixture());
            counts[usize::from(stuck)] += 1;
        }
        // Both answers occur often enough for the comparison to mean something.
        assert!(counts.iter().all(|&n| n > 100), "{counts:?}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn indian_random_play_conforms(seed in any::<u64>()) {
            play_and_check_stuck(Variant::Indian, seed);
        }

        #[test]
        fn midshipman_random_play_conforms(seed in any::<u64>()) {
            play_and_check_stuck(Variant::Midshipman, seed);
        }
    }
}
