//! Virginia Reel (two decks, 104 cards): three rows of eight positions built
//! up in suit by threes on 2s, 3s and 4s, fed from eight reserve piles.
//!
//! Rules: `design/rules.md`, section "Virginia Reel" (seed 004, SolSuite's
//! Virginia Reel, also called Blue Jacket).
//!
//! Layout of a position ([`VirginiaReel`]):
//! - 24 row positions, `Zone::Position(row * 8 + column)`. Row 0 (`A1..A8`)
//!   builds 2-5-8-J, row 1 (`B1..B8`) 3-6-9-Q, row 2 (`C1..C8`) 4-7-T-K.
//!   A position whose bottom card is its row's base rank is *home* and holds
//!   up to four cards; any other position is *misplaced* and holds exactly one
//!   card. A position is never empty: every gap is refilled in the same move.
//! - 8 reserve piles, `Zone::Reserve(0..8)`, all face up; only the top plays.
//! - The stock, `Zone::Stock`, face down: the next card dealt is its last.
//! - The discard, `Zone::Discard`: the Aces, in the order they were discarded.
//!
//! Moves ([`ReelMove`]) and their notation:
//! - Build `r3>B4`: reserve 3's top card onto the home pile at B4.
//! - Release `B5>A2/C1/r4`: the misplaced card at B5 goes onto the home pile at
//!   A2 (or `x`, the discard, if it is an Ace); its gap is filled from C1, whose
//!   own gap is filled from reserve 4. The fillers are listed in order and the
//!   chain always ends at a reserve.
//! - Swap `A3~B6`: two wrong-row base cards that belong in each other's rows
//!   change places (lower position first).
//! - Deal `d`: one stock card onto each reserve pile.
//!
//! Positions can also be written and read as compact text fixtures
//! ([`VirginiaReel::from_fixture`], [`VirginiaReel::to_fixture`]), which the
//! tests use to read like boards.

use std::fmt::{self, Write as _};
use std::ops::ControlFlow;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::card::{ACE, Card, Rank};
use crate::deck::shuffled_pack;
use crate::game::GameKind;
use crate::rules::{Board, Effect, MoveError, NotationError, Outcome, Rules, Zone, ZoneCards};

/// Rows of positions: the 2s row, the 3s row and the 4s row.
pub const ROWS: usize = 3;
/// Positions in each row.
pub const COLUMNS: usize = 8;
/// Row positions in all: `Zone::Position(0..24)`.
pub const POSITIONS: usize = ROWS * COLUMNS;
/// Reserve piles.
pub const RESERVES: usize = 8;
/// Cards in a complete home pile, e.g. 2♥ 5♥ 8♥ J♥.
pub const HOME_PILE_CARDS: usize = 4;
/// The most cards a reserve pile can hold: one from the first deal and one
/// from each of the nine later deals.
pub const RESERVE_CAPACITY: usize = 10;
/// Cards in the stock after the first deal: nine deals of eight.
pub const STOCK_CARDS: usize = 72;
/// Aces in the two decks, all of them dead cards bound for the discard.
pub const ACES: usize = 8;

/// The longest chain of row fillers one Release can have.
///
/// Every filler is a distinct misplaced base card (a 2, 3 or 4 in a wrong
/// row), and a misplaced card can only lie in columns 2 to 8, because column
/// 1 of every row is dealt a home base card and home piles never move. Those
/// are 21 positions, and the released card occupies one of them without being
/// a base card, which leaves at most 20 fillers. Twenty is reachable (the
/// tests build such a position), so the bound is exact.
pub const MAX_FILLERS: usize = POSITIONS - ROWS - 1;

/// The base rank of a row: 2, 3 or 4.
const fn base_rank(row: usize) -> Rank {
    row as Rank + 2
}

/// The row of a position index.
const fn row_of(position: usize) -> usize {
    position / COLUMNS
}

/// The row whose base rank this is, or `None` for any other rank.
fn row_of_base(rank: Rank) -> Option<usize> {
    match rank {
        2..=4 => Some(usize::from(rank - 2)),
        _ => None,
    }
}

/// The bit set of the positions of one row.
const fn row_mask(row: usize) -> u32 {
    0xff << (row * COLUMNS)
}

/// Where a released card goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseTarget {
    /// Onto the home pile at this position (`0..24`).
    Home(u8),
    /// To the discard: the card is an Ace.
    Discard,
}

/// The fillers of a Release, in order, and the reserve that ends the chain.
///
/// The released card's gap is filled from `fillers[0]`, whose gap is filled
/// from `fillers[1]`, and so on; the last gap (the released position itself
/// when there are no fillers) is filled from the top of `reserve`.
/// Fixed capacity so that a move stays `Copy`; unused slots are always zero,
/// so equal chains compare and hash equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "FillChainText", into = "FillChainText")]
pub struct FillChain {
    fillers: [u8; MAX_FILLERS],
    len: u8,
    reserve: u8,
}

/// The wire form of a [`FillChain`]: only the fillers in use.
#[derive(Serialize, Deserialize)]
struct FillChainText {
    fillers: Vec<u8>,
    reserve: u8,
}

impl From<FillChain> for FillChainText {
    fn from(chain: FillChain) -> FillChainText {
        FillChainText {
            fillers: chain.fillers().to_vec(),
            reserve: chain.reserve,
        }
    }
}

impl TryFrom<FillChainText> for FillChain {
    type Error = String;

    fn try_from(text: FillChainText) -> Result<FillChain, String> {
        FillChain::new(&text.fillers, text.reserve)
            .ok_or_else(|| format!("a chain has at most {MAX_FILLERS} fillers"))
    }
}

impl FillChain {
    /// A chain through the positions `fillers` (each `0..24`), ending at
    /// reserve `reserve` (`0..8`). `None` if there are more than
    /// [`MAX_FILLERS`] fillers. Whether the chain is legal is for `apply` to say.
    pub fn new(fillers: &[u8], reserve: u8) -> Option<FillChain> {
        if fillers.len() > MAX_FILLERS {
            return None;
        }
        let mut chain = FillChain::from_reserve(reserve);
        chain.fillers[..fillers.len()].copy_from_slice(fillers);
        chain.len = fillers.len() as u8;
        Some(chain)
    }

    /// The simplest chain: the gap is filled straight from reserve `reserve`.
    pub const fn from_reserve(reserve: u8) -> FillChain {
        FillChain {
            fillers: [0; MAX_FILLERS],
            len: 0,
            reserve,
        }
    }

    /// The row positions that fill each other's gaps, in order.
    pub fn fillers(&self) -> &[u8] {
        &self.fillers[..usize::from(self.len)]
    }

    /// The reserve whose top card fills the last gap.
    pub const fn reserve(&self) -> u8 {
        self.reserve
    }

    /// Appends a filler during the search; the caller keeps within capacity.
    fn push(&mut self, position: usize) {
        self.fillers[usize::from(self.len)] = position as u8;
        self.len += 1;
    }

    /// Removes the last filler, zeroing its slot to keep equality exact.
    fn pop(&mut self) {
        self.len -= 1;
        self.fillers[usize::from(self.len)] = 0;
    }
}

/// A move of Virginia Reel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReelMove {
    /// A reserve top card goes onto a home pile whose top card is the same
    /// suit and three ranks lower. The target is named because two decks can
    /// offer two identical targets.
    Build {
        /// The reserve pile, `0..8`.
        reserve: u8,
        /// The home pile's position, `0..24`.
        to: u8,
    },
    /// A misplaced card leaves its position (onto a home pile, or to the
    /// discard if it is an Ace) and its gap is refilled in the same action
    /// through `chain`. The destination is judged as the board stands before
    /// the move: the card leaves first, then the gaps are refilled, so it
    /// cannot land on a base card that this same chain puts in place.
    Release {
        /// The misplaced card's position, `0..24`.
        from: u8,
        /// Where the card goes.
        to: ReleaseTarget,
        /// How the gap is refilled.
        chain: FillChain,
    },
    /// Two wrong-row base cards that belong in each other's rows change
    /// places. `first < second`.
    Swap {
        /// The lower position, `0..24`.
        first: u8,
        /// The higher position, `0..24`.
        second: u8,
    },
    /// One stock card onto each of the eight reserve piles.
    Deal,
}

/// A position of Virginia Reel: every card, the stock's order included.
///
/// Built only by [`VirginiaReel::deal`] or [`VirginiaReel::from_fixture`], both
/// of which guarantee the invariants the rules rely on: every position holds a
/// home pile or exactly one misplaced card, column 1 is home in every row, no
/// Ace lies on a reserve top, the stock is a whole number of deals that fits
/// on the reserves, and no card appears more than twice.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VirginiaReel {
    /// The row positions, `row * 8 + column`, each bottom first.
    positions: [ArrayVec<Card, HOME_PILE_CARDS>; POSITIONS],
    /// The reserve piles, bottom first.
    reserves: [ArrayVec<Card, RESERVE_CAPACITY>; RESERVES],
    /// The stock; its last card is dealt first.
    stock: ArrayVec<Card, STOCK_CARDS>,
    /// The discarded Aces, in the order they left.
    discard: ArrayVec<Card, ACES>,
}

/// What the chain search needs, computed once per move generation.
struct ChainSearch {
    /// For each row, the misplaced positions holding that row's base rank.
    holders: [u32; ROWS],
    /// For each row, the reserves whose top card is that row's base rank.
    reserve_tops: [u8; ROWS],
}

impl VirginiaReel {
    /// The deal for `seed`, as rules.md describes it: the first 2, 3 and 4
    /// of the shuffled pack go to column 1 of rows A, B and C; the rest is
    /// dealt in order to columns 2-8 of rows A, B, C, then one card to each
    /// reserve, and the last 72 cards are the stock. Aces on the reserve are
    /// discarded at once, as after every deal.
    pub fn deal(seed: u64) -> VirginiaReel {
        let pack = shuffled_pack(GameKind::VirginiaReel.decks(), seed);
        let mut first_base: [Option<usize>; ROWS] = [None; ROWS];
        for (index, card) in pack.iter().enumerate() {
            if let Some(row) = row_of_base(card.rank()) {
                first_base[row].get_or_insert(index);
            }
        }
        let mut state = VirginiaReel::empty();
        let mut rest = Vec::with_capacity(pack.len());
        for (index, &card) in pack.iter().enumerate() {
            match first_base.iter().position(|&first| first == Some(index)) {
                Some(row) => state.positions[row * COLUMNS].push(card),
                None => rest.push(card),
            }
        }
        let mut dealt = rest.into_iter();
        for row in 0..ROWS {
            for column in 1..COLUMNS {
                if let Some(card) = dealt.next() {
                    state.positions[row * COLUMNS + column].push(card);
                }
            }
        }
        for reserve in &mut state.reserves {
            if let Some(card) = dealt.next() {
                reserve.push(card);
            }
        }
        // The stock's first card to be dealt lies on top, i.e. last.
        state.stock.extend(dealt.rev());
        let mut ignored = Outcome::new();
        for reserve in 0..RESERVES {
            state.discard_reserve_aces(reserve, &mut ignored);
        }
        state
    }

    /// A board with nothing on it, for the constructors to fill.
    fn empty() -> VirginiaReel {
        VirginiaReel {
            positions: std::array::from_fn(|_| ArrayVec::new()),
            reserves: std::array::from_fn(|_| ArrayVec::new()),
            stock: ArrayVec::new(),
            discard: ArrayVec::new(),
        }
    }

    /// The cards at row position `position` (`0..24`), bottom first.
    pub fn position(&self, position: usize) -> &[Card] {
        self.positions.get(position).map_or(&[], |pile| pile)
    }

    /// The cards of reserve pile `reserve` (`0..8`), bottom first.
    pub fn reserve(&self, reserve: usize) -> &[Card] {
        self.reserves.get(reserve).map_or(&[], |pile| pile)
    }

    /// The stock, bottom first: the last card is dealt next.
    pub fn stock(&self) -> &[Card] {
        &self.stock
    }

    /// The discarded Aces, in the order they left.
    pub fn discard(&self) -> &[Card] {
        &self.discard
    }

    /// Whether `position` holds a home pile: its bottom card is its row's base rank.
    fn is_home(&self, position: usize) -> bool {
        self.positions[position]
            .first()
            .is_some_and(|card| card.rank() == base_rank(row_of(position)))
    }

    /// The card at `position` if the position is misplaced (it then holds
    /// exactly that one card).
    fn misplaced_card(&self, position: usize) -> Option<Card> {
        match self.positions[position].as_slice() {
            &[card] if card.rank() != base_rank(row_of(position)) => Some(card),
            _ => None,
        }
    }

    /// Whether `card` goes onto the home pile at `position`: same suit, three
    /// ranks higher than its top card. A complete pile takes nothing, since
    /// J, Q and K plus three is no rank.
    fn builds_on(&self, card: Card, position: usize) -> bool {
        self.is_home(position)
            && self.positions[position]
                .last()
                .is_some_and(|top| top.suit() == card.suit() && card.rank() == top.rank() + 3)
    }

    /// Discards Aces from the top of a reserve pile for as long as one shows.
    fn discard_reserve_aces(&mut self, reserve: usize, outcome: &mut Outcome) {
        while let Some(&card) = self.reserves[reserve].last()
            && card.rank() == ACE
        {
            self.reserves[reserve].pop();
            self.discard.push(card);
            outcome.push(Effect::AceDiscarded {
                from: Zone::Reserve(reserve as u8),
                card,
            });
        }
    }

    /// The bit sets the chain search walks.
    fn chain_search(&self) -> ChainSearch {
        let mut search = ChainSearch {
            holders: [0; ROWS],
            reserve_tops: [0; ROWS],
        };
        for position in 0..POSITIONS {
            if let Some(card) = self.misplaced_card(position)
                && let Some(row) = row_of_base(card.rank())
            {
                search.holders[row] |= 1 << position;
            }
        }
        for (reserve, pile) in self.reserves.iter().enumerate() {
            if let Some(row) = pile.last().and_then(|card| row_of_base(card.rank())) {
                search.reserve_tops[row] |= 1 << reserve;
            }
        }
        search
    }

    /// Visits every chain that refills a gap in `gap_row`, extending `chain`
    /// (whose positions, with the released one, are the set `used`).
    ///
    /// Order: first the chains ending here at a reserve (lowest reserve first),
    /// then those continuing through a misplaced base card (lowest position
    /// first). Depth is at most [`MAX_FILLERS`], so the recursion is shallow.
    fn visit_chains(
        search: &ChainSearch,
        gap_row: usize,
        used: u32,
        chain: &mut FillChain,
        visit: &mut impl FnMut(FillChain) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut reserves = search.reserve_tops[gap_row];
        while reserves != 0 {
            chain.reserve = reserves.trailing_zeros() as u8;
            reserves &= reserves - 1;
            visit(*chain)?;
        }
        if usize::from(chain.len) == MAX_FILLERS {
            return ControlFlow::Continue(());
        }
        // A holder of this row's base rank never lies in this row (it would be home).
        let mut candidates = search.holders[gap_row] & !used;
        while candidates != 0 {
            let position = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            chain.push(position);
            let flow =
                Self::visit_chains(search, row_of(position), used | 1 << position, chain, visit);
            chain.pop();
            flow?;
        }
        ControlFlow::Continue(())
    }

    /// Visits every legal move in the fixed order: builds (by reserve, then
    /// target), releases (by source, then target, then chain), swaps (by
    /// first position, then second), then the deal. Stops when `visit` breaks.
    ///
    /// Chains multiply: every ordering of misplaced base cards that hands a
    /// gap from row to row is its own move. In random play over 200,000 deals
    /// the most moves one position had was 1,657 (most have a handful); a
    /// contrived position such as the tests' twenty-filler one has vastly
    /// more, which is why `is_stuck` stops at the first move it finds.
    fn for_each_move(&self, mut visit: impl FnMut(ReelMove) -> ControlFlow<()>) -> ControlFlow<()> {
        if self.is_won() {
            return ControlFlow::Continue(());
        }
        for (reserve, pile) in self.reserves.iter().enumerate() {
            let Some(&card) = pile.last() else { continue };
            for to in 0..POSITIONS {
                if self.builds_on(card, to) {
                    visit(ReelMove::Build {
                        reserve: reserve as u8,
                        to: to as u8,
                    })?;
                }
            }
        }
        let search = self.chain_search();
        for from in 0..POSITIONS {
            let Some(card) = self.misplaced_card(from) else {
                continue;
            };
            let mut release_to = |to: ReleaseTarget| {
                let mut chain = FillChain::from_reserve(0);
                Self::visit_chains(&search, row_of(from), 1 << from, &mut chain, &mut |chain| {
                    visit(ReelMove::Release {
                        from: from as u8,
                        to,
                        chain,
                    })
                })
            };
            if card.rank() == ACE {
                release_to(ReleaseTarget::Discard)?;
            } else {
                for to in 0..POSITIONS {
                    if self.builds_on(card, to) {
                        release_to(ReleaseTarget::Home(to as u8))?;
                    }
                }
            }
        }
        for first in 0..POSITIONS {
            let Some(row) = self
                .misplaced_card(first)
                .and_then(|card| row_of_base(card.rank()))
            else {
                continue;
            };
            // Partners: in the row this card belongs to, holding this row's base rank.
            let above = !((2u32 << first) - 1);
            let mut partners = search.holders[row_of(first)] & row_mask(row) & above;
            while partners != 0 {
                let second = partners.trailing_zeros() as u8;
                partners &= partners - 1;
                visit(ReelMove::Swap {
                    first: first as u8,
                    second,
                })?;
            }
        }
        if !self.stock.is_empty() {
            visit(ReelMove::Deal)?;
        }
        ControlFlow::Continue(())
    }

    /// Checks a position index from a move.
    fn check_position(position: u8) -> Result<usize, MoveError> {
        let index = usize::from(position);
        if index < POSITIONS {
            Ok(index)
        } else {
            Err(MoveError::NoSuchZone {
                zone: Zone::Position(position),
            })
        }
    }

    /// Checks a reserve index from a move and returns its top card.
    fn check_reserve_top(&self, reserve: u8) -> Result<Card, MoveError> {
        let zone = Zone::Reserve(reserve);
        let pile = self
            .reserves
            .get(usize::from(reserve))
            .ok_or(MoveError::NoSuchZone { zone })?;
        pile.last().copied().ok_or(MoveError::EmptySource { zone })
    }

    /// Checks that `card` goes onto the home pile at `to`.
    fn check_build(&self, card: Card, to: u8) -> Result<(), MoveError> {
        let to_index = Self::check_position(to)?;
        if !self.is_home(to_index) {
            return Err(MoveError::ZoneTakesNothing {
                zone: Zone::Position(to),
            });
        }
        match self.positions[to_index].last() {
            Some(&onto) if !self.builds_on(card, to_index) => {
                Err(MoveError::DoesNotBuild { card, onto })
            }
            _ => Ok(()),
        }
    }

    /// Checks a Release without changing anything.
    fn check_release(
        &self,
        from: u8,
        to: ReleaseTarget,
        chain: FillChain,
    ) -> Result<(), MoveError> {
        let from_index = Self::check_position(from)?;
        let card = self
            .misplaced_card(from_index)
            .ok_or(MoveError::ZoneGivesNothing {
                zone: Zone::Position(from),
            })?;
        match to {
            ReleaseTarget::Home(to) => self.check_build(card, to)?,
            ReleaseTarget::Discard if card.rank() != ACE => {
                return Err(MoveError::NotAnAce { card });
            }
            ReleaseTarget::Discard => {}
        }
        let mut gap = from_index;
        let mut used = 1u32 << from_index;
        for &filler in chain.fillers() {
            let filler_index = Self::check_position(filler)?;
            let zone = Zone::Position(filler);
            // A position already in the chain has been refilled with a home
            // base card by the time its turn comes, and home cards never move.
            if used & (1 << filler_index) != 0 {
                return Err(MoveError::ZoneGivesNothing { zone });
            }
            let filler_card = self
                .misplaced_card(filler_index)
                .ok_or(MoveError::ZoneGivesNothing { zone })?;
            if filler_card.rank() != base_rank(row_of(gap)) {
                return Err(MoveError::CannotFill {
                    card: filler_card,
                    zone: Zone::Position(gap as u8),
                });
            }
            used |= 1 << filler_index;
            gap = filler_index;
        }
        let reserve_card = self.check_reserve_top(chain.reserve)?;
        if reserve_card.rank() != base_rank(row_of(gap)) {
            return Err(MoveError::CannotFill {
                card: reserve_card,
                zone: Zone::Position(gap as u8),
            });
        }
        Ok(())
    }

    /// Checks a Swap without changing anything.
    fn check_swap(&self, first: u8, second: u8) -> Result<(), MoveError> {
        let first_index = Self::check_position(first)?;
        let second_index = Self::check_position(second)?;
        if first == second {
            return Err(MoveError::SameZone);
        }
        if first > second {
            return Err(MoveError::SwapOutOfOrder);
        }
        let card_at = |position: usize, zone: u8| {
            self.misplaced_card(position)
                .ok_or(MoveError::ZoneGivesNothing {
                    zone: Zone::Position(zone),
                })
        };
        let first_card = card_at(first_index, first)?;
        let second_card = card_at(second_index, second)?;
        let belongs = |card: Card, row: usize| card.rank() == base_rank(row);
        if belongs(first_card, row_of(second_index)) && belongs(second_card, row_of(first_index)) {
            Ok(())
        } else {
            Err(MoveError::CannotSwap {
                first: first_card,
                second: second_card,
            })
        }
    }

    /// Checks any move without changing anything.
    fn check(&self, mv: ReelMove) -> Result<(), MoveError> {
        if self.is_won() {
            return Err(MoveError::GameOver);
        }
        match mv {
            ReelMove::Build { reserve, to } => {
                let card = self.check_reserve_top(reserve)?;
                self.check_build(card, to)
            }
            ReelMove::Release { from, to, chain } => self.check_release(from, to, chain),
            ReelMove::Swap { first, second } => self.check_swap(first, second),
            ReelMove::Deal if self.stock.is_empty() => Err(MoveError::StockEmpty),
            ReelMove::Deal => Ok(()),
        }
    }

    /// Moves the top card of position `from` onto position `to`.
    fn shift(&mut self, from: usize, to: usize) {
        if let Some(card) = self.positions[from].pop() {
            self.positions[to].push(card);
        }
    }

    /// Reads a position written as the fixture does. Several cards are
    /// joined by `.`, bottom first; `2h*` is the complete pile on 2h.
    fn parse_row_pile(row: usize, token: &str) -> Result<ArrayVec<Card, HOME_PILE_CARDS>, String> {
        let mut pile = ArrayVec::new();
        if let Some(base) = token.strip_suffix('*') {
            let base: Card = base.parse().map_err(|e| format!("{e}"))?;
            if base.rank() != base_rank(row) {
                return Err(format!(
                    "{token}: a complete pile in this row starts with a {}",
                    base_rank(row)
                ));
            }
            for step in 0..HOME_PILE_CARDS as u8 {
                pile.push(Card::new(base.suit(), base.rank() + 3 * step));
            }
            return Ok(pile);
        }
        for text in token.split('.') {
            let card: Card = text.parse().map_err(|e| format!("{e}"))?;
            if let Some(&top) = pile.last() {
                let first: Card = pile[0];
                if first.rank() != base_rank(row) {
                    return Err(format!(
                        "{token}: only a home pile (on a {} in this row) holds more than one card",
                        base_rank(row)
                    ));
                }
                if card.suit() != top.suit() || card.rank() != top.rank() + 3 {
                    return Err(format!("{token}: {card} does not build on {top}"));
                }
            }
            pile.try_push(card)
                .map_err(|_| format!("{token}: a pile holds at most {HOME_PILE_CARDS} cards"))?;
        }
        Ok(pile)
    }

    /// Reads a position from its compact text fixture, one line per part:
    ///
    /// ```text
    /// A: 2h 7c 3d 2s.5s 2c* 2c Ah 2d
    /// B: 3c 3c 3d 3d 3h 3h 3s 3s
    /// C: 4c 4c 4d 4d 4h 4h 4s 4s
    /// r: 5h.8h - 3c - - - - -
    /// s: 9c Td 9c Td 9c Td 9c Td
    /// x: As
    /// ```
    ///
    /// `A`, `B`, `C` give the eight positions of each row (`2s.5s` is a pile,
    /// bottom first; `2c*` the complete pile 2c 5c 8c Jc); `r` the eight
    /// reserve piles (`-` for an empty one); `s` the stock, bottom first, its
    /// last card dealt next; `x` the discarded Aces. The rows are required,
    /// the other lines default to empty. Blank lines are ignored.
    ///
    /// Refused: a position that is neither a home pile nor a single card; a
    /// column 1 that is not home; an Ace on a reserve top; a stock that is not
    /// whole deals of eight or that would overfill a reserve; anything but
    /// Aces in the discard; a card appearing more than twice.
    pub fn from_fixture(text: &str) -> Result<VirginiaReel, String> {
        let mut state = VirginiaReel::empty();
        let mut seen = [false; ROWS + 3];
        for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
            let (label, rest) = line.split_once(':').ok_or_else(|| {
                format!("{line:?}: expected a label (A, B, C, r, s or x) and a colon")
            })?;
            let tokens: Vec<&str> = rest.split_whitespace().collect();
            let part = match label.trim().to_ascii_lowercase().as_str() {
                "a" => 0,
                "b" => 1,
                "c" => 2,
                "r" => 3,
                "s" => 4,
                "x" => 5,
                other => {
                    return Err(format!(
                        "unknown label {other:?}: expected A, B, C, r, s or x"
                    ));
                }
            };
            if std::mem::replace(&mut seen[part], true) {
                return Err(format!("line {label:?} is given twice"));
            }
            match part {
                0..=2 => {
                    if tokens.len() != COLUMNS {
                        return Err(format!(
                            "row {label}: expected {COLUMNS} positions, found {}",
                            tokens.len()
                        ));
                    }
                    for (column, token) in tokens.iter().enumerate() {
                        state.positions[part * COLUMNS + column] =
                            Self::parse_row_pile(part, token)?;
                    }
                    if !state.is_home(part * COLUMNS) {
                        return Err(format!(
                            "row {label}: column 1 must hold a home pile (on a {})",
                            base_rank(part)
                        ));
                    }
                }
                3 => {
                    if tokens.len() != RESERVES {
                        return Err(format!(
                            "reserve: expected {RESERVES} piles, found {}",
                            tokens.len()
                        ));
                    }
                    for (reserve, token) in tokens.iter().enumerate() {
                        if *token == "-" {
                            continue;
                        }
                        for card in token.split('.') {
                            let card: Card = card.parse().map_err(|e| format!("{e}"))?;
                            state.reserves[reserve].try_push(card).map_err(|_| {
                                format!("reserve {}: at most {RESERVE_CAPACITY} cards", reserve + 1)
                            })?;
                        }
                        if state.reserves[reserve]
                            .last()
                            .is_some_and(|card| card.rank() == ACE)
                        {
                            return Err(format!(
                                "reserve {}: an Ace on top is discarded at once",
                                reserve + 1
                            ));
                        }
                    }
                }
                4 => {
                    for token in &tokens {
                        let card: Card = token.parse().map_err(|e| format!("{e}"))?;
                        state
                            .stock
                            .try_push(card)
                            .map_err(|_| format!("stock: at most {STOCK_CARDS} cards"))?;
                    }
                }
                _ => {
                    for token in &tokens {
                        let card: Card = token.parse().map_err(|e| format!("{e}"))?;
                        if card.rank() != ACE {
                            return Err(format!("discard: {card} is not an Ace"));
                        }
                        state
                            .discard
                            .try_push(card)
                            .map_err(|_| format!("discard: at most {ACES} Aces"))?;
                    }
                }
            }
        }
        for (part, label) in ["A", "B", "C"].iter().enumerate() {
            if !seen[part] {
                return Err(format!("row {label} is missing"));
            }
        }
        if state.stock.len() % RESERVES != 0 {
            return Err(format!(
                "stock: {} cards is not whole deals of {RESERVES}",
                state.stock.len()
            ));
        }
        let deals_left = state.stock.len() / RESERVES;
        if let Some(reserve) = state
            .reserves
            .iter()
            .position(|pile| pile.len() + deals_left > RESERVE_CAPACITY)
        {
            return Err(format!(
                "reserve {}: with {deals_left} deals left it would exceed {RESERVE_CAPACITY} cards",
                reserve + 1
            ));
        }
        let mut counts = [0usize; 52];
        for card in state.board().all_cards() {
            counts[card.index()] += 1;
        }
        if let Some(index) = counts.iter().position(|&count| count > 2) {
            return Err(format!(
                "{} appears more than twice",
                Card::from_index(index)
            ));
        }
        Ok(state)
    }

    /// Writes the position as a text fixture that [`VirginiaReel::from_fixture`]
    /// reads back; complete home piles are written `2h*`.
    pub fn to_fixture(&self) -> String {
        let mut text = String::new();
        let join = |cards: &[Card]| {
            cards
                .iter()
                .map(Card::to_string)
                .collect::<Vec<_>>()
                .join(".")
        };
        for (row, label) in ["A", "B", "C"].iter().enumerate() {
            let tokens: Vec<String> = self.positions[row * COLUMNS..(row + 1) * COLUMNS]
                .iter()
                .map(|pile| match pile.first() {
                    Some(base) if pile.len() == HOME_PILE_CARDS => format!("{base}*"),
                    _ => join(pile),
                })
                .collect();
            let _ = writeln!(text, "{label}: {}", tokens.join(" "));
        }
        let reserves: Vec<String> = self
            .reserves
            .iter()
            .map(|pile| {
                if pile.is_empty() {
                    "-".to_string()
                } else {
                    join(pile)
                }
            })
            .collect();
        let _ = writeln!(text, "r: {}", reserves.join(" "));
        let list = |cards: &[Card]| {
            cards
                .iter()
                .map(|card| format!(" {card}"))
                .collect::<String>()
        };
        let _ = writeln!(text, "s:{}", list(&self.stock));
        let _ = writeln!(text, "x:{}", list(&self.discard));
        text
    }
}

/// Writes a position index as `A1..C8`.
struct PositionName(u8);

impl fmt::Display for PositionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = char::from(b'A'.saturating_add(self.0 / COLUMNS as u8));
        write!(f, "{row}{}", usize::from(self.0 % COLUMNS as u8) + 1)
    }
}

/// Reads `a1..c8` (already lower-case) as a position index.
fn parse_position(text: &str) -> Result<u8, String> {
    let bytes = text.as_bytes();
    match bytes {
        &[row @ b'a'..=b'c', column @ b'1'..=b'8'] => {
            Ok((row - b'a') * COLUMNS as u8 + (column - b'1'))
        }
        _ => Err(format!(
            "{:?} is not a position (A1 to C8)",
            text.to_ascii_uppercase()
        )),
    }
}

/// Reads `r1..r8` (already lower-case) as a reserve index.
fn parse_reserve(text: &str) -> Result<u8, String> {
    match text.as_bytes() {
        &[b'r', digit @ b'1'..=b'8'] => Ok(digit - b'1'),
        _ => Err(format!("{text:?} is not a reserve (r1 to r8)")),
    }
}

/// Reads a move's text, already lower-case and without spaces.
fn parse_compact(text: &str) -> Result<ReelMove, String> {
    if text == "d" {
        return Ok(ReelMove::Deal);
    }
    if let Some((first, second)) = text.split_once('~') {
        let (first, second) = (parse_position(first)?, parse_position(second)?);
        // A swap is symmetric: either order names the same move.
        return Ok(ReelMove::Swap {
            first: first.min(second),
            second: first.max(second),
        });
    }
    let Some((source, rest)) = text.split_once('>') else {
        return Err(
            "expected d, a build rN>POS, a release POS>POS/../rN or POS>x/../rN, or a swap POS~POS"
                .into(),
        );
    };
    if source.starts_with('r') {
        return Ok(ReelMove::Build {
            reserve: parse_reserve(source)?,
            to: parse_position(rest)?,
        });
    }
    let from = parse_position(source)?;
    let parts: Vec<&str> = rest.split('/').collect();
    let [target, fillers @ .., reserve] = parts.as_slice() else {
        return Err("a release ends at the reserve that fills the gap, as in B5>A2/r4".into());
    };
    let to = match *target {
        "x" => ReleaseTarget::Discard,
        position => ReleaseTarget::Home(parse_position(position)?),
    };
    let fillers = fillers
        .iter()
        .map(|filler| parse_position(filler))
        .collect::<Result<Vec<u8>, String>>()?;
    let reserve = parse_reserve(reserve).map_err(|_| {
        format!(
            "a release ends at the reserve that fills the last gap (r1 to r8), not {:?}",
            reserve.to_ascii_uppercase()
        )
    })?;
    let chain = FillChain::new(&fillers, reserve)
        .ok_or_else(|| format!("a chain has at most {MAX_FILLERS} fillers"))?;
    Ok(ReelMove::Release { from, to, chain })
}

impl Rules for VirginiaReel {
    type Move = ReelMove;

    fn kind(&self) -> GameKind {
        GameKind::VirginiaReel
    }

    fn legal_moves(&self, moves: &mut Vec<ReelMove>) {
        moves.clear();
        let _ = self.for_each_move(|mv| {
            moves.push(mv);
            ControlFlow::Continue(())
        });
    }

    fn apply(&mut self, mv: ReelMove) -> Result<Outcome, MoveError> {
        self.check(mv)?;
        let mut outcome = Outcome::new();
        match mv {
            ReelMove::Build { reserve, to } => {
                let reserve = usize::from(reserve);
                if let Some(card) = self.reserves[reserve].pop() {
                    self.positions[usize::from(to)].push(card);
                }
                self.discard_reserve_aces(reserve, &mut outcome);
            }
            ReelMove::Release { from, to, chain } => {
                let mut gap = usize::from(from);
                if let Some(card) = self.positions[gap].pop() {
                    match to {
                        ReleaseTarget::Home(to) => self.positions[usize::from(to)].push(card),
                        ReleaseTarget::Discard => self.discard.push(card),
                    }
                }
                for &filler in chain.fillers() {
                    self.shift(usize::from(filler), gap);
                    gap = usize::from(filler);
                }
                let reserve = usize::from(chain.reserve);
                if let Some(card) = self.reserves[reserve].pop() {
                    self.positions[gap].push(card);
                }
                self.discard_reserve_aces(reserve, &mut outcome);
            }
            ReelMove::Swap { first, second } => {
                self.positions.swap(usize::from(first), usize::from(second));
            }
            ReelMove::Deal => {
                for reserve in &mut self.reserves {
                    if let Some(card) = self.stock.pop() {
                        reserve.push(card);
                    }
                }
                outcome.push(Effect::Dealt {
                    count: RESERVES as u8,
                });
                for reserve in 0..RESERVES {
                    self.discard_reserve_aces(reserve, &mut outcome);
                }
            }
        }
        Ok(outcome)
    }

    fn undo(&mut self, mv: ReelMove, outcome: &Outcome) {
        for effect in outcome.effects.iter().rev() {
            match *effect {
                Effect::AceDiscarded {
                    from: Zone::Reserve(reserve),
                    card,
                } => {
                    self.discard.pop();
                    self.reserves[usize::from(reserve)].push(card);
                }
                Effect::Dealt { count } => {
                    for reserve in self.reserves.iter_mut().take(usize::from(count)).rev() {
                        if let Some(card) = reserve.pop() {
                            self.stock.push(card);
                        }
                    }
                }
                _ => {}
            }
        }
        match mv {
            ReelMove::Build { reserve, to } => {
                if let Some(card) = self.positions[usize::from(to)].pop() {
                    self.reserves[usize::from(reserve)].push(card);
                }
            }
            ReelMove::Release { from, to, chain } => {
                let from = usize::from(from);
                let fillers = chain.fillers();
                let last_gap = fillers.last().map_or(from, |&filler| usize::from(filler));
                if let Some(card) = self.positions[last_gap].pop() {
                    self.reserves[usize::from(chain.reserve)].push(card);
                }
                for (index, &filler) in fillers.iter().enumerate().rev() {
                    let gap = if index == 0 {
                        from
                    } else {
                        usize::from(fillers[index - 1])
                    };
                    self.shift(gap, usize::from(filler));
                }
                let card = match to {
                    ReleaseTarget::Home(to) => self.positions[usize::from(to)].pop(),
                    ReleaseTarget::Discard => self.discard.pop(),
                };
                if let Some(card) = card {
                    self.positions[from].push(card);
                }
            }
            ReelMove::Swap { first, second } => {
                self.positions.swap(usize::from(first), usize::from(second));
            }
            ReelMove::Deal => {}
        }
    }

    fn is_won(&self) -> bool {
        self.discard.len() == ACES
            && self
                .positions
                .iter()
                .all(|pile| pile.len() == HOME_PILE_CARDS)
    }

    fn is_stuck(&self) -> bool {
        !self.is_won()
            && self.stock.is_empty()
            && self.for_each_move(|_| ControlFlow::Break(())).is_continue()
    }

    fn board(&self) -> Board {
        let mut zones = Vec::with_capacity(POSITIONS + RESERVES + 2);
        let face_up = |zone: Zone, cards: &[Card]| ZoneCards {
            zone,
            face_down: 0,
            cards: cards.to_vec(),
        };
        for (position, pile) in self.positions.iter().enumerate() {
            zones.push(face_up(Zone::Position(position as u8), pile));
        }
        for (reserve, pile) in self.reserves.iter().enumerate() {
            zones.push(face_up(Zone::Reserve(reserve as u8), pile));
        }
        zones.push(ZoneCards {
            zone: Zone::Stock,
            face_down: self.stock.len() as u8,
            cards: self.stock.to_vec(),
        });
        zones.push(face_up(Zone::Discard, &self.discard));
        Board {
            game: GameKind::VirginiaReel,
            zones,
        }
    }

    fn parse_move(&self, text: &str) -> Result<ReelMove, NotationError> {
        let compact: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        if compact.is_empty() {
            return Err(NotationError::new(text, "the move is empty"));
        }
        parse_compact(&compact).map_err(|reason| NotationError::new(text, reason))
    }

    fn format_move(&self, mv: ReelMove) -> String {
        match mv {
            ReelMove::Build { reserve, to } => {
                format!("r{}>{}", usize::from(reserve) + 1, PositionName(to))
            }
            ReelMove::Release { from, to, chain } => {
                let mut text = format!("{}>", PositionName(from));
                match to {
                    ReleaseTarget::Home(to) => {
                        let _ = write!(text, "{}", PositionName(to));
                    }
                    ReleaseTarget::Discard => text.push('x'),
                }
                for &filler in chain.fillers() {
                    let _ = write!(text, "/{}", PositionName(filler));
                }
                let _ = write!(text, "/r{}", usize::from(chain.reserve) + 1);
                text
            }
            ReelMove::Swap { first, second } => {
                format!("{}~{}", PositionName(first), PositionName(second))
            }
            ReelMove::Deal => "d".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::conformance::{TestRng, check_random_play};

    /// A position from a fixture; a bad fixture is a bug in the test.
    fn board(fixture: &str) -> VirginiaReel {
        VirginiaReel::from_fixture(fixture)
            .unwrap_or_else(|e| panic!("bad fixture: {e}\n{fixture}"))
    }

    fn card(text: &str) -> Card {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    fn moves_text(state: &VirginiaReel) -> String {
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        moves
            .iter()
            .map(|&mv| state.format_move(mv))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Checks the legal moves of a position, in their order.
    fn check_moves(fixture: &str, expected: &str) {
        assert_eq!(moves_text(&board(fixture)), expected, "moves of\n{fixture}");
    }

    /// Plays `mv` on a position and checks the result: the position after it,
    /// or the refusal (which must change nothing). An accepted move must then
    /// be taken back exactly by undo.
    fn check(fixture: &str, mv: &str, expected: Result<&str, MoveError>) {
        let before = board(fixture);
        let parsed = before.parse_move(mv).unwrap_or_else(|e| panic!("{e}"));
        let mut state = before.clone();
        match (state.apply(parsed), expected) {
            (Ok(outcome), Ok(after)) => {
                assert_eq!(state.to_fixture(), board(after).to_fixture(), "after {mv}");
                state.undo(parsed, &outcome);
                assert_eq!(state, before, "undo of {mv}");
            }
            (Err(error), Err(expected)) => {
                assert_eq!(error, expected, "refusal of {mv}");
                assert_eq!(state, before, "a refused {mv} changed the position");
            }
            (result, expected) => panic!("{mv}: got {result:?}, expected {expected:?}"),
        }
    }

    /// Plays `mv` and checks the effects it reports.
    fn check_effects(fixture: &str, mv: &str, expected: &[Effect]) {
        let mut state = board(fixture);
        let parsed = state.parse_move(mv).unwrap_or_else(|e| panic!("{e}"));
        let outcome = state.apply(parsed).unwrap_or_else(|e| panic!("{mv}: {e}"));
        assert_eq!(outcome.effects.as_slice(), expected, "effects of {mv}");
    }

    fn aces_from(reserve: u8, cards: &[&str]) -> Vec<Effect> {
        cards
            .iter()
            .map(|text| Effect::AceDiscarded {
                from: Zone::Reserve(reserve),
                card: card(text),
            })
            .collect()
    }

    fn position(text: &str) -> Zone {
        match parse_position(&text.to_ascii_lowercase()) {
            Ok(index) => Zone::Position(index),
            Err(e) => panic!("{e}"),
        }
    }

    // ---- The deal ----

    /// The deal, restated independently from rules.md for many seeds.
    #[test]
    fn deal_follows_the_rules_for_many_seeds() {
        for seed in 0..200 {
            let pack = shuffled_pack(2, seed);
            let state = VirginiaReel::deal(seed);
            let mut rest = pack.clone();
            for row in 0..ROWS {
                let first = pack
                    .iter()
                    .position(|c| c.rank() == base_rank(row))
                    .unwrap_or_else(|| panic!("no base card"));
                assert_eq!(
                    state.position(row * 8),
                    [pack[first]],
                    "seed {seed} row {row}"
                );
                let at = rest.iter().position(|&c| c == pack[first]).unwrap_or(0);
                rest.remove(at);
            }
            for row in 0..ROWS {
                for column in 1..8 {
                    assert_eq!(
                        state.position(row * 8 + column),
                        [rest[row * 7 + column - 1]]
                    );
                }
            }
            let mut aces = Vec::new();
            for reserve in 0..RESERVES {
                let dealt = rest[21 + reserve];
                if dealt.rank() == ACE {
                    assert!(
                        state.reserve(reserve).is_empty(),
                        "seed {seed}: Ace not discarded"
                    );
                    aces.push(dealt);
                } else {
                    assert_eq!(state.reserve(reserve), [dealt]);
                }
            }
            assert_eq!(state.discard(), aces.as_slice(), "seed {seed}");
            let stock: Vec<Card> = rest[29..].iter().rev().copied().collect();
            assert_eq!(state.stock(), stock.as_slice(), "seed {seed}");
            assert_eq!(state.stock().len(), STOCK_CARDS);
        }
    }

    #[test]
    fn the_first_deal_discards_aces_from_the_reserve() {
        // Seed 1 deals Ac to reserve 4 (checked by hand against the pack).
        let state = VirginiaReel::deal(1);
        assert!(state.reserve(3).is_empty());
        assert_eq!(state.discard(), [card("Ac")]);
    }

    /// The whole layout, one zone per line, as `board()` lists it.
    fn layout(state: &VirginiaReel) -> String {
        let mut text = String::new();
        for zone in state.board().zones {
            let name = match zone.zone {
                Zone::Position(index) => PositionName(index).to_string(),
                Zone::Reserve(index) => format!("r{}", index + 1),
                Zone::Stock => format!("s({} down)", zone.face_down),
                Zone::Discard => "x".to_string(),
                other => panic!("unexpected {other}"),
            };
            let cards: Vec<String> = zone.cards.iter().map(Card::to_string).collect();
            text.push_str(format!("{name}: {}", cards.join(" ")).trim_end());
            text.push('\n');
        }
        text
    }

    /// Seeds 1-3, checked by hand against their packs: the first 2, 3 and 4
    /// of the pack in column 1, then the rest row by row, the reserve, and
    /// the stock with the next card to deal last.
    #[test]
    fn golden_deals() {
        let check = |seed: u64, expected: &str| {
            assert_eq!(layout(&VirginiaReel::deal(seed)), expected, "seed {seed}");
        };
        check(1, GOLDEN_SEED_1);
        check(2, GOLDEN_SEED_2);
        check(3, GOLDEN_SEED_3);
    }

    const GOLDEN_SEED_1: &str = "\
A1: 2h
A2: As
A3: 7h
A4: 9d
A5: 6s
A6: 9s
A7: 9h
A8: Js
B1: 3d
B2: 3h
B3: 8h
B4: 5h
B5: Jc
B6: Ks
B7: Ts
B8: 5c
C1: 4s
C2: Kh
C3: Ad
C4: 2s
C5: Kd
C6: 8s
C7: Qs
C8: 3s
r1: 8h
r2: Td
r3: Td
r4:
r5: Qd
r6: 8c
r7: 3h
r8: Qd
s(72 down): 2c 6s Kc Th Kh Tc Jh 3c 9d Ts 3s 4d 6h 2c 6h Jc 4d Tc 7s Qh Qc 4h 8s Jd Th 4s 6d 8c 4c 5d 5d Ks 3c As Js 4h 2h 7h Qc 9c Kc 7c 4c 7c Qs Ah 6d 7s 5s Jd 9s 7d 6c 5c Kd Ac 5h 2d 2s Ah 8d 7d 8d Ad 5s 3d 6c 9h Jh 2d Qh 9c
x: Ac
";

    const GOLDEN_SEED_2: &str = "\
A1: 2c
A2: Td
A3: 9h
A4: 7s
A5: 8d
A6: 7h
A7: 8d
A8: 4c
B1: 3h
B2: Qs
B3: Qh
B4: 7d
B5: 7c
B6: Kh
B7: Td
B8: 8c
C1: 4d
C2: Ad
C3: Qc
C4: 8s
C5: 2d
C6: Jd
C7: Tc
C8: 3h
r1: Kc
r2: Ts
r3: Qd
r4: 9c
r5: 2c
r6: 8c
r7: 5d
r8: 6d
s(72 down): Jc Ks Ac 6h Js Ks Qh Ad 4c 3c Th 7s As 2s 9d Kh 6h 9s Kc 8h 5d 4s 5s 6d 2h 2d 4h As 5c 7d Jh Ac 4h Qc 5c Ah Ts 6s 6c 5h 9s 3s 2h Qs Kd Jc Js 8s 9c Jd 4s Tc 8h 5h 3c 9d Qd 6s 7c 6c 9h Kd 3d 2s 4d 3d Th 3s 7h Jh Ah 5s
x:
";

    const GOLDEN_SEED_3: &str = "\
A1: 2c
A2: 8c
A3: Ts
A4: 5c
A5: 3d
A6: Ad
A7: 9d
A8: 6d
B1: 3c
B2: Ad
B3: 7h
B4: 7h
B5: 6s
B6: 6s
B7: Qd
B8: 8h
C1: 4h
C2: Tc
C3: 7c
C4: 2d
C5: 4s
C6: 9h
C7: 9c
C8: Qh
r1: 5s
r2: 5d
r3: 2h
r4: 7c
r5: 3h
r6: 7d
r7: Ts
r8: 5s
s(72 down): 2s 6h Qc 9s Ah 7s 5h 8s 7s 8d 5h Th Ah 8c 5c 5d 3h Ac Js 4c Kh Qd 2d 2h 6h Kc 7d Qs Td Th Jh Jh Td 9h 6c 4d Ks Qs Jd Jc As Ac 9d Kh Qh 4s 8s 8d 9s 3c 4d Ks Kc Kd 6c Tc 4c 3d 2c Js Kd 2s As Jc 8h 9c 3s 6d 4h Qc 3s Jd
x:
";

    /// The legal moves of a real deal, in generation order.
    #[test]
    fn golden_moves_of_seed_3() {
        let state = VirginiaReel::deal(3);
        assert_eq!(moves_text(&state), GOLDEN_MOVES_SEED_3);
    }

    /// Checked by hand: 5c goes to 2c; the Aces to the discard; the 7h to 4h.
    /// Row A's gaps take reserve 3's 2h (the 2d at C4 could fill one, but
    /// nothing can fill C4 after it); row B's take reserve 5's 3h or the 3d at
    /// A5, whose gap then takes the 2h.
    const GOLDEN_MOVES_SEED_3: &str = "A4>A1/r3 A6>x/r3 B2>x/r5 B2>x/A5/r3 \
        B3>C1/r5 B3>C1/A5/r3 B4>C1/r5 B4>C1/A5/r3 d";

    // ---- Builds ----

    const BUILDS: &str = "
        A: 2h 2h 2c.5c.8c Kc Kd 2d 2s Kc
        B: 3c 3c 3d 3d 3h 3h 3s 3s
        C: 4c 4c 4d 4d 4h 4h 4s 4s
        r: 5h 6c 9c - 2s Jc 5s.2c Js
    ";

    #[test]
    fn a_reserve_top_builds_in_suit_by_threes_naming_its_target() {
        // Two identical targets (A1, A2) give two moves; base cards and
        // cards with no target give none.
        check_moves(BUILDS, "r1>A1 r1>A2 r2>B1 r2>B2 r6>A3");
        check(
            BUILDS,
            "r1>A2",
            Ok("
                A: 2h 2h.5h 2c.5c.8c Kc Kd 2d 2s Kc
                B: 3c 3c 3d 3d 3h 3h 3s 3s
                C: 4c 4c 4d 4d 4h 4h 4s 4s
                r: - 6c 9c - 2s Jc 5s.2c Js
            "),
        );
        // The fourth card completes a pile.
        check(
            BUILDS,
            "r6>A3",
            Ok("
                A: 2h 2h 2c* Kc Kd 2d 2s Kc
                B: 3c 3c 3d 3d 3h 3h 3s 3s
                C: 4c 4c 4d 4d 4h 4h 4s 4s
                r: 5h 6c 9c - 2s - 5s.2c Js
            "),
        );
    }

    #[test]
    fn builds_that_are_refused() {
        let does_not_build = |c: &str, onto: &str| {
            Err(MoveError::DoesNotBuild {
                card: card(c),
                onto: card(onto),
            })
        };
        // Wrong suit, wrong rank, a base card from the reserve.
        check(BUILDS, "r1>A6", does_not_build("5h", "2d"));
        check(BUILDS, "r3>B1", does_not_build("9c", "3c"));
        check(BUILDS, "r5>A7", does_not_build("2s", "2s"));
        // A complete pile takes nothing more.
        check(
            "
            A: 2h 2h 2c* Kc Kd 2d 2s Kc
            B: 3c 3c 3d 3d 3h 3h 3s 3s
            C: 4c 4c 4d 4d 4h 4h 4s 4s
            r: 5h - - - - - - Js
            ",
            "r8>A3",
            does_not_build("Js", "Jc"),
        );
        // A misplaced card accepts nothing.
        check(
            BUILDS,
            "r8>A8",
            Err(MoveError::ZoneTakesNothing {
                zone: position("A8"),
            }),
        );
        check(
            BUILDS,
            "r4>A1",
            Err(MoveError::EmptySource {
                zone: Zone::Reserve(3),
            }),
        );
    }

    #[test]
    fn moves_naming_missing_zones_are_refused() {
        let mut state = board(BUILDS);
        let before = state.clone();
        let refusals = [
            (
                ReelMove::Build { reserve: 8, to: 0 },
                MoveError::NoSuchZone {
                    zone: Zone::Reserve(8),
                },
            ),
            (
                ReelMove::Build { reserve: 0, to: 24 },
                MoveError::NoSuchZone {
                    zone: Zone::Position(24),
                },
            ),
            (
                ReelMove::Release {
                    from: 200,
                    to: ReleaseTarget::Discard,
                    chain: FillChain::from_reserve(0),
                },
                MoveError::NoSuchZone {
                    zone: Zone::Position(200),
                },
            ),
            (
                ReelMove::Swap {
                    first: 3,
                    second: 30,
                },
                MoveError::NoSuchZone {
                    zone: Zone::Position(30),
                },
            ),
        ];
        for (mv, expected) in refusals {
            assert_eq!(state.apply(mv), Err(expected), "{mv:?}");
            assert_eq!(state, before);
        }
    }

    #[test]
    fn an_ace_reaching_a_reserve_top_is_discarded_again_and_again() {
        // Aces under a card cannot arise in play (every Ace is discarded the
        // moment it shows), but the rule is applied as a loop all the same.
        let fixture = "
            A: 2h Kc Kc Kd Kd Ks Ks Kh
            B: 3c Qc Qc Qd Qd Qs Qs Qh
            C: 4c Jc Jc Jd Jd Js Js Jh
            r: 9h.Ac.Ad.5h - - - - - - -
        ";
        check(
            fixture,
            "r1>A1",
            Ok("
                A: 2h.5h Kc Kc Kd Kd Ks Ks Kh
                B: 3c Qc Qc Qd Qd Qs Qs Qh
                C: 4c Jc Jc Jd Jd Js Js Jh
                r: 9h - - - - - - -
                x: Ad Ac
            "),
        );
        check_effects(fixture, "r1>A1", &aces_from(0, &["Ad", "Ac"]));
    }

    // ---- Releases ----

    const RELEASES: &str = "
        A: 2c 6c As Kc Kc Kd Kd Ks
        B: 3c 3c 2d Qc Qc Qd Qd Qs
        C: 4c Jc Jc Jd Jd Js Js Ks
        r: 2h 3s 2h - - - - -
    ";

    #[test]
    fn a_misplaced_card_leaves_only_with_its_gap_refilled() {
        // 6c may go to either 3c; its gap takes a 2 from reserve 1 or 3 (two
        // equal cards, two moves) or the 2d lying in row B, whose own gap
        // takes the 3s from reserve 2. The As goes to the discard the same
        // ways. The 2d itself is a base card: it moves only as a filler.
        check_moves(
            RELEASES,
            "A2>B1/r1 A2>B1/r3 A2>B1/B3/r2 A2>B2/r1 A2>B2/r3 A2>B2/B3/r2 \
             A3>x/r1 A3>x/r3 A3>x/B3/r2",
        );
        check(
            RELEASES,
            "A2>B2/r3",
            Ok("
                A: 2c 2h As Kc Kc Kd Kd Ks
                B: 3c 3c.6c 2d Qc Qc Qd Qd Qs
                C: 4c Jc Jc Jd Jd Js Js Ks
                r: 2h 3s - - - - - -
            "),
        );
        check(
            RELEASES,
            "A2>B1/B3/r2",
            Ok("
                A: 2c 2d As Kc Kc Kd Kd Ks
                B: 3c.6c 3c 3s Qc Qc Qd Qd Qs
                C: 4c Jc Jc Jd Jd Js Js Ks
                r: 2h - 2h - - - - -
            "),
        );
    }

    #[test]
    fn an_ace_in_a_row_is_discarded_through_a_release() {
        check(
            RELEASES,
            "A3>x/r1",
            Ok("
                A: 2c 6c 2h Kc Kc Kd Kd Ks
                B: 3c 3c 2d Qc Qc Qd Qd Qs
                C: 4c Jc Jc Jd Jd Js Js Ks
                r: - 3s 2h - - - - -
                x: As
            "),
        );
        // The released Ace is the move itself, not an automatic discard.
        check_effects(RELEASES, "A3>x/r1", &[]);
    }

    #[test]
    fn releases_that_are_refused() {
        // Refusals by their message (the typed variants are checked elsewhere).
        let refusals = [
            // The filler must be the gap row's base rank.
            ("A2>B1/r2", "3s cannot fill the gap at position A2"),
            ("A2>B1/B3/r1", "2h cannot fill the gap at position B3"),
            ("A2>B1/C2/r1", "Jc cannot fill the gap at position A2"),
            ("A2>B1/r5", "reserve 5 is empty"),
            // Home cards never move, and a position refilled earlier in the
            // chain is home by the time it would move.
            ("A2>B1/B1/r1", "cards in position B1 cannot move"),
            ("A2>B1/B3/B3/r1", "cards in position B3 cannot move"),
            ("A2>B1/B3/A2/r1", "cards in position A2 cannot move"),
            ("A1>B1/r1", "cards in position A1 cannot move"),
            // Destinations: a home pile it builds on, or the discard for an Ace.
            ("A2>C1/r1", "6c does not go on 4c"),
            ("A2>A4/r1", "position A4 does not take cards"),
            ("A2>A2/r1", "position A2 does not take cards"),
            ("A2>x/r1", "only an Ace can be discarded, not 6c"),
            ("A3>B1/r1", "As does not go on 3c"),
            ("A4>B1/r1", "Kc does not go on 3c"),
            // A wrong-row base card moves only as a filler or by a swap.
            ("B3>A1/r2", "2d does not go on 2c"),
            ("B3>x/r2", "only an Ace can be discarded, not 2d"),
        ];
        for (mv, message) in refusals {
            let mut state = board(RELEASES);
            let before = state.clone();
            let parsed = state.parse_move(mv).unwrap_or_else(|e| panic!("{e}"));
            match state.apply(parsed) {
                Err(error) => assert_eq!(error.to_string(), message, "{mv}"),
                Ok(_) => panic!("{mv} was accepted"),
            }
            assert_eq!(state, before, "a refused {mv} changed the position");
        }
        check(
            RELEASES,
            "A2>B1/B3/r1",
            Err(MoveError::CannotFill {
                card: card("2h"),
                zone: position("B3"),
            }),
        );
        check(
            RELEASES,
            "A2>x/r1",
            Err(MoveError::NotAnAce { card: card("6c") }),
        );
    }

    #[test]
    fn a_release_that_empties_onto_an_ace_discards_it() {
        let fixture = "
            A: 2c 6c Kh Kc Kc Kd Kd Ks
            B: 3c Qc Qc Qd Qd Qs Qh Qs
            C: 4c Jc Jc Jd Jd Js Js Ks
            r: Ah.2h - - - - - - -
        ";
        check(
            fixture,
            "A2>B1/r1",
            Ok("
                A: 2c 2h Kh Kc Kc Kd Kd Ks
                B: 3c.6c Qc Qc Qd Qd Qs Qh Qs
                C: 4c Jc Jc Jd Jd Js Js Ks
                r: - - - - - - - -
                x: Ah
            "),
        );
        check_effects(fixture, "A2>B1/r1", &aces_from(0, &["Ah"]));
    }

    const CYCLES: &str = "
        A: 2c 6c 3d Kc Kc Kd Kd Ks
        B: 3c 2d 2h Qc Qc Qd Qd Qs
        C: 4c Jc Jc Jd Jd Js Js Ks
        r: 2s 3s - - - - - -
    ";

    #[test]
    fn every_chain_is_listed_in_a_fixed_order() {
        // At each gap: the reserves first, then each misplaced base card that
        // fits, lowest position first, each followed by its own chains.
        check_moves(
            CYCLES,
            "A2>B1/r1 A2>B1/B2/r2 A2>B1/B2/A3/r1 A2>B1/B2/A3/B3/r2 \
             A2>B1/B3/r2 A2>B1/B3/A3/r1 A2>B1/B3/A3/B2/r2 A3~B2 A3~B3",
        );
        check(
            CYCLES,
            "A2>B1/B2/A3/B3/r2",
            Ok("
                A: 2c 2d 2h Kc Kc Kd Kd Ks
                B: 3c.6c 3d 3s Qc Qc Qd Qd Qs
                C: 4c Jc Jc Jd Jd Js Js Ks
                r: 2s - - - - - - -
            "),
        );
    }

    // ---- Swaps ----

    #[test]
    fn two_base_cards_in_each_others_rows_swap() {
        check(
            CYCLES,
            "A3~B2",
            Ok("
                A: 2c 6c 2d Kc Kc Kd Kd Ks
                B: 3c 3d 2h Qc Qc Qd Qd Qs
                C: 4c Jc Jc Jd Jd Js Js Ks
                r: 2s 3s - - - - - -
            "),
        );
        // Either order reads as the same swap.
        let state = board(CYCLES);
        assert_eq!(state.parse_move("b3~a3"), state.parse_move("A3~B3"));
    }

    const THREE_CYCLE: &str = "
        A: 2c 6c 3d Kc Kc Kd Kd Ks
        B: 3c 4h Qd Qc Qc Qd Qh Qs
        C: 4c 2h Jc Jc Jd Jd Js Ks
        r: 2s - - - - - - -
    ";

    #[test]
    fn a_longer_cycle_untangles_only_through_a_release_chain() {
        // 3d in row A belongs in B, 4h in B belongs in C, 2h in C belongs in A:
        // no two belong in each other's rows, so no swap.
        check_moves(THREE_CYCLE, "A2>B1/r1 A2>B1/C2/B2/A3/r1");
        check(
            THREE_CYCLE,
            "A3~B2",
            Err(MoveError::CannotSwap {
                first: card("3d"),
                second: card("4h"),
            }),
        );
        check(
            THREE_CYCLE,
            "B2~C2",
            Err(MoveError::CannotSwap {
                first: card("4h"),
                second: card("2h"),
            }),
        );
        check(
            THREE_CYCLE,
            "A2>B1/C2/B2/A3/r1",
            Ok("
                A: 2c 2h 2s Kc Kc Kd Kd Ks
                B: 3c.6c 3d Qd Qc Qc Qd Qh Qs
                C: 4c 4h Jc Jc Jd Jd Js Ks
                r: - - - - - - - -
            "),
        );
    }

    #[test]
    fn swaps_that_are_refused() {
        check(CYCLES, "A3~A3", Err(MoveError::SameZone));
        check(
            CYCLES,
            "A1~B2",
            Err(MoveError::ZoneGivesNothing {
                zone: position("A1"),
            }),
        );
        check(
            CYCLES,
            "A3~B4",
            Err(MoveError::CannotSwap {
                first: card("3d"),
                second: card("Qc"),
            }),
        );
        // The same row: neither belongs there.
        check(
            CYCLES,
            "B2~B3",
            Err(MoveError::CannotSwap {
                first: card("2d"),
                second: card("2h"),
            }),
        );
        // Only the canonical order is a move.
        let mut state = board(CYCLES);
        let before = state.clone();
        assert_eq!(
            state.apply(ReelMove::Swap {
                first: 9,
                second: 2
            }),
            Err(MoveError::SwapOutOfOrder)
        );
        assert_eq!(state, before);
    }

    // ---- The longest chain ----

    /// Twenty misplaced base cards that one chain can visit in turn, the
    /// released Ace at A2 being the twenty-first misplaced card.
    const LONGEST: &str = "
        A: 2c Ah 3c 3d 3d 4c 4d 4d
        B: 3c 2c 2d 2d 2h 4h 4h 4s
        C: 4c 2h 2s 2s 3h 3h 3s 3s
        r: 4s - - - - - - -
    ";

    #[test]
    fn the_longest_chain_has_twenty_fillers() {
        let mv = "A2>x/B2/A3/B3/A4/B4/A5/B5/C5/A6/C2/A7/C3/A8/C4/B6/C6/B7/C7/B8/C8/r1";
        check(
            LONGEST,
            mv,
            Ok("
                A: 2c 2c 2d 2d 2h 2h 2s 2s
                B: 3c 3c 3d 3d 3h 3h 3s 3s
                C: 4c 4d 4d 4h 4c 4h 4s 4s
                r: - - - - - - - -
                x: Ah
            "),
        );
        let state = board(LONGEST);
        match state.parse_move(mv) {
            Ok(ReelMove::Release { chain, .. }) => assert_eq!(chain.fillers().len(), MAX_FILLERS),
            other => panic!("{other:?}"),
        }
        assert!(!state.is_stuck());
    }

    // ---- Deals ----

    const BEFORE_DEAL: &str = "
        A: 2c Kc Kc Kd Kd Ks Ks Kh
        B: 3c Qc Qc Qd Qd Qs Qs Qh
        C: 4c Jc Jc Jd Jd Js Js Jh
        r: 9h - 9h - - - - -
        s: 8s Ad 7d 6d Ac 5d 4s As
    ";

    #[test]
    fn a_deal_puts_one_card_on_every_reserve_then_discards_aces() {
        check_moves(BEFORE_DEAL, "d");
        check(
            BEFORE_DEAL,
            "d",
            Ok("
                A: 2c Kc Kc Kd Kd Ks Ks Kh
                B: 3c Qc Qc Qd Qd Qs Qs Qh
                C: 4c Jc Jc Jd Jd Js Js Jh
                r: 9h 4s 9h.5d - 6d 7d - 8s
                x: As Ac Ad
            "),
        );
        let mut effects = vec![Effect::Dealt { count: 8 }];
        effects.extend(aces_from(0, &["As"]));
        effects.extend(aces_from(3, &["Ac"]));
        effects.extend(aces_from(6, &["Ad"]));
        check_effects(BEFORE_DEAL, "d", &effects);
    }

    #[test]
    fn a_deal_is_allowed_at_any_time_and_only_while_stock_remains() {
        let with_stock = "
            A: 2c 6c As Kc Kc Kd Kd Ks
            B: 3c 3c 2d Qc Qc Qd Qd Qs
            C: 4c Jc Jc Jd Jd Js Js Ks
            r: 2h 3s 2h - - - - -
            s: 9c 9c 9d 9d 9h 9h 9s 9s
        ";
        assert!(moves_text(&board(with_stock)).ends_with(" A3>x/B3/r2 d"));
        check(RELEASES, "d", Err(MoveError::StockEmpty));
    }

    #[test]
    fn an_empty_reserve_is_filled_only_by_the_next_deal() {
        // Reserve 4 is empty and nothing but a deal can reach it: no move
        // names a reserve as a destination, and after the release that empties
        // reserve 1 it stays empty.
        let mut state = board(RELEASES);
        let mv = state
            .parse_move("A3>x/r1")
            .unwrap_or_else(|e| panic!("{e}"));
        state.apply(mv).unwrap_or_else(|e| panic!("{e}"));
        assert!(state.reserve(0).is_empty());
        assert!(!moves_text(&state).contains("r1"), "{}", moves_text(&state));
    }

    // ---- Won and stuck ----

    const WON: &str = "
        A: 2c* 2c* 2d* 2d* 2h* 2h* 2s* 2s*
        B: 3c* 3c* 3d* 3d* 3h* 3h* 3s* 3s*
        C: 4c* 4c* 4d* 4d* 4h* 4h* 4s* 4s*
        x: Ac Ac Ad Ad Ah Ah As As
    ";

    #[test]
    fn won_when_every_pile_is_complete_and_the_aces_are_gone() {
        let state = board(WON);
        assert!(state.is_won());
        assert!(!state.is_stuck(), "a won game is not stuck");
        check_moves(WON, "");
        check(WON, "A1~B1", Err(MoveError::GameOver));
    }

    #[test]
    fn not_won_while_aces_wait_in_the_stock() {
        let fixture = "
            A: 2c* 2c* 2d* 2d* 2h* 2h* 2s* 2s*
            B: 3c* 3c* 3d* 3d* 3h* 3h* 3s* 3s*
            C: 4c* 4c* 4d* 4d* 4h* 4h* 4s* 4s*
            s: Ac Ac Ad Ad Ah Ah As As
        ";
        let mut state = board(fixture);
        assert!(!state.is_won());
        assert!(!state.is_stuck());
        check_moves(fixture, "d");
        let outcome = state
            .apply(ReelMove::Deal)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(outcome.effects.len(), 9, "the deal and eight discards");
        assert!(state.is_won());
    }

    #[test]
    fn the_last_build_wins() {
        let fixture = "
            A: 2c* 2c* 2d* 2d* 2h* 2h* 2s* 2s.5s.8s
            B: 3c* 3c* 3d* 3d* 3h* 3h* 3s* 3s*
            C: 4c* 4c* 4d* 4d* 4h* 4h* 4s* 4s*
            r: Js - - - - - - -
            x: Ac Ac Ad Ad Ah Ah As As
        ";
        let mut state = board(fixture);
        assert!(!state.is_won());
        check_moves(fixture, "r1>A8");
        state
            .apply(ReelMove::Build { reserve: 0, to: 7 })
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(state.is_won());
    }

    #[test]
    fn stuck_when_nothing_moves_and_the_stock_is_empty() {
        let stuck = "
            A: 2c Kc Kc Kd Kd Ks Ks Kh
            B: 3c Qc Qc Qd Qd Qs Qs Qh
            C: 4c Jc Jc Jd Jd Js Js Jh
            r: 9h - 9h - - - - -
        ";
        check_moves(stuck, "");
        assert!(board(stuck).is_stuck());
        // With stock left there is always the deal.
        assert!(!board(BEFORE_DEAL).is_stuck());
        // A legal move, here a release, means not stuck.
        assert!(!board(RELEASES).is_stuck());
    }

    // ---- Board and view ----

    #[test]
    fn the_board_lists_every_zone_and_hides_only_the_stock() {
        let state = VirginiaReel::deal(2);
        let board = state.board();
        let zones: Vec<Zone> = board.zones.iter().map(|zone| zone.zone).collect();
        let mut expected: Vec<Zone> = (0..24).map(Zone::Position).collect();
        expected.extend((0..8).map(Zone::Reserve));
        expected.extend([Zone::Stock, Zone::Discard]);
        assert_eq!(zones, expected);
        for zone in &board.zones {
            let down = if zone.zone == Zone::Stock {
                zone.cards.len()
            } else {
                0
            };
            assert_eq!(usize::from(zone.face_down), down, "{}", zone.zone);
        }
        assert_eq!(board.all_cards().count(), 104);
        let view = state.view();
        assert_eq!(view.zones[32].hidden, 72);
        assert!(view.zones[32].face_up.is_empty());
    }

    // ---- Notation ----

    #[test]
    fn notation_round_trips_and_reads_leniently() {
        let state = board(RELEASES);
        let check = |text: &str, canonical: &str| {
            let mv = state.parse_move(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(state.format_move(mv), canonical, "{text}");
            assert_eq!(state.parse_move(canonical), Ok(mv));
        };
        check("r3>B4", "r3>B4");
        check(" R3 > b4 ", "r3>B4");
        check("B5>A2/C1/r4", "B5>A2/C1/r4");
        check("b5 > a2 / c1 / R4", "B5>A2/C1/r4");
        check("B5>A2/r4", "B5>A2/r4");
        check("B5>X/r4", "B5>x/r4");
        check("A3~B6", "A3~B6");
        check("b6 ~ a3", "A3~B6");
        check("d", "d");
        check(" D ", "d");
    }

    #[test]
    fn notation_errors_say_what_is_wrong() {
        let state = board(RELEASES);
        let check = |text: &str, reason: &str| match state.parse_move(text) {
            Err(error) => {
                assert_eq!(error.text, text);
                assert!(error.reason.contains(reason), "{text}: {}", error.reason);
            }
            Ok(mv) => panic!("{text} read as {mv:?}"),
        };
        check("", "empty");
        check("  ", "empty");
        check("z", "expected d");
        check("dd", "expected d");
        check("r9>B4", "not a reserve");
        check("r3>D4", "\"D4\" is not a position (A1 to C8)");
        check("r3>A9", "not a position");
        check("B5>A2", "ends at the reserve");
        check(
            "B5>A2/C1",
            "ends at the reserve that fills the last gap (r1 to r8), not \"C1\"",
        );
        check("B5>A2/r9", "not \"R9\"");
        check("B5>A2/r4/r5", "not a position");
        check("B5>/r4", "not a position");
        check("A3~", "not a position");
        check("B9~A1", "not a position");
        let long = format!("A2>x/{}r1", "B2/".repeat(MAX_FILLERS + 1));
        check(&long, "at most 20 fillers");
    }

    #[test]
    fn moves_serialize_as_snake_case_json() {
        let state = board(RELEASES);
        let check = |text: &str, json: &str| {
            let mv = state.parse_move(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(serde_json::to_string(&mv).unwrap_or_default(), json);
            assert_eq!(serde_json::from_str::<ReelMove>(json).ok(), Some(mv));
        };
        check("r3>B4", r#"{"build":{"reserve":2,"to":11}}"#);
        check(
            "B5>A2/C1/r4",
            r#"{"release":{"from":12,"to":{"home":1},"chain":{"fillers":[16],"reserve":3}}}"#,
        );
        check(
            "B5>x/r4",
            r#"{"release":{"from":12,"to":"discard","chain":{"fillers":[],"reserve":3}}}"#,
        );
        check("A3~B6", r#"{"swap":{"first":2,"second":13}}"#);
        check("d", r#""deal""#);
        let too_long = format!(
            r#"{{"release":{{"from":1,"to":"discard","chain":{{"fillers":{:?},"reserve":0}}}}}}"#,
            [9u8; MAX_FILLERS + 1]
        );
        assert!(serde_json::from_str::<ReelMove>(&too_long).is_err());
    }

    #[test]
    fn a_move_is_small() {
        assert!(std::mem::size_of::<ReelMove>() <= 26);
    }

    // ---- Fixtures ----

    #[test]
    fn fixtures_round_trip() {
        for seed in 0..20 {
            let state = VirginiaReel::deal(seed);
            assert_eq!(VirginiaReel::from_fixture(&state.to_fixture()), Ok(state));
        }
        for fixture in [BUILDS, RELEASES, CYCLES, LONGEST, BEFORE_DEAL, WON] {
            let state = board(fixture);
            assert_eq!(VirginiaReel::from_fixture(&state.to_fixture()), Ok(state));
        }
    }

    #[test]
    fn bad_fixtures_are_refused_with_a_reason() {
        let rows =
            "A: 2c Kc Kc Kd Kd Ks Ks Kh\nB: 3c Qc Qc Qd Qd Qs Qs Qh\nC: 4c Jc Jc Jd Jd Js Js Jh\n";
        let check = |fixture: &str, reason: &str| match VirginiaReel::from_fixture(fixture) {
            Err(error) => assert!(error.contains(reason), "{error}"),
            Ok(_) => panic!("accepted:\n{fixture}"),
        };
        check("A: 2c Kc Kc Kd Kd Ks Ks Kh\n", "row B is missing");
        check(&format!("{rows}A: 2c Kc Kc Kd Kd Ks Ks Kh"), "given twice");
        check(&format!("{rows}q: 5h"), "unknown label");
        check(&format!("{rows}r: 5h"), "expected 8 piles");
        check(
            "A: 2c Kc\nB: 3c Qc Qc Qd Qd Qs Qs Qh\nC: 4c Jc Jc Jd Jd Js Js Jh",
            "expected 8 positions",
        );
        check(
            "A: Kc 2c Kc Kd Kd Ks Ks Kh\nB: 3c Qc Qc Qd Qd Qs Qs Qh\nC: 4c Jc Jc Jd Jd Js Js Jh",
            "column 1",
        );
        check(
            "A: 2c 5h.8h Kc Kd Kd Ks Ks Kh\nB: 3c Qc Qc Qd Qd Qs Qs Qh\nC: 4c Jc Jc Jd Jd Js Js Jh",
            "only a home pile",
        );
        check(
            "A: 2c.5d Kc Kc Kd Kd Ks Ks Kh\nB: 3c Qc Qc Qd Qd Qs Qs Qh\nC: 4c Jc Jc Jd Jd Js Js Jh",
            "does not build",
        );
        check(
            "A: 3c* Kc Kc Kd Kd Ks Ks Kh\nB: 3c Qc Qc Qd Qd Qs Qs Qh\nC: 4c Jc Jc Jd Jd Js Js Jh",
            "starts with a 2",
        );
        check(&format!("{rows}r: 5h.Ac - - - - - - -"), "Ace on top");
        check(&format!("{rows}s: 5h 6h"), "whole deals");
        check(&format!("{rows}x: 5h"), "not an Ace");
        check(
            &format!("{rows}r: Kc - - - - - - -"),
            "Kc appears more than twice",
        );
        check(&format!("{rows}r: Zz - - - - - - -"), "not a card");
        check(
            &format!(
                "{rows}r: 5h.5h.6h.6h.7h.7h.8h.8h.9h - - - - - - -\n\
                 s: 9s 9s 9d 9d 9c 9c Th Th Tc Tc Td Td Ts Ts 5s 5s"
            ),
            "would exceed",
        );
    }

    // ---- Random play ----

    /// Any move the type can express, legal or not: mostly random, sometimes
    /// a legal move with one part changed, so that near misses are tried too.
    fn arbitrary_move(state: &VirginiaReel, rng: &mut TestRng) -> ReelMove {
        // One past the end, to try missing zones as well.
        let position = |rng: &mut TestRng| rng.below(POSITIONS + 1) as u8;
        let reserve = |rng: &mut TestRng| rng.below(RESERVES + 1) as u8;
        let random_chain = |rng: &mut TestRng| {
            let fillers: Vec<u8> = (0..rng.below(4)).map(|_| position(rng)).collect();
            FillChain::new(&fillers, reserve(rng)).unwrap_or(FillChain::from_reserve(0))
        };
        match rng.below(6) {
            0 => ReelMove::Build {
                reserve: reserve(rng),
                to: position(rng),
            },
            1 => ReelMove::Release {
                from: position(rng),
                to: if rng.below(4) == 0 {
                    ReleaseTarget::Discard
                } else {
                    ReleaseTarget::Home(position(rng))
                },
                chain: random_chain(rng),
            },
            2 => ReelMove::Swap {
                first: position(rng),
                second: position(rng),
            },
            3 => ReelMove::Deal,
            _ => {
                let mut moves = Vec::new();
                state.legal_moves(&mut moves);
                let Some(&mv) = moves.get(rng.below(moves.len().max(1))) else {
                    return ReelMove::Deal;
                };
                match mv {
                    ReelMove::Build { reserve: r, to } => match rng.below(2) {
                        0 => ReelMove::Build {
                            reserve: reserve(rng),
                            to,
                        },
                        _ => ReelMove::Build {
                            reserve: r,
                            to: position(rng),
                        },
                    },
                    ReelMove::Release { from, to, chain } => {
                        let mut fillers = chain.fillers().to_vec();
                        let mut end = chain.reserve();
                        match rng.below(4) {
                            0 => end = reserve(rng),
                            1 => {
                                fillers.pop();
                            }
                            2 => fillers.push(position(rng)),
                            _ => {
                                return ReelMove::Release {
                                    from: position(rng),
                                    to,
                                    chain,
                                };
                            }
                        }
                        let chain = FillChain::new(&fillers, end).unwrap_or(chain);
                        ReelMove::Release { from, to, chain }
                    }
                    ReelMove::Swap { first, second } => ReelMove::Swap {
                        first: second,
                        second: first,
                    },
                    ReelMove::Deal => ReelMove::Deal,
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn random_play_keeps_every_rule(seed in any::<u64>()) {
            let deal = VirginiaReel::deal(seed);
            check_random_play(&deal, seed, 400, arbitrary_move);
        }
    }
}
