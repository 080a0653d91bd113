//! The precedence counts: the order in which the cards not yet home must
//! go home in every winning line, and the positions that order proves lost.
//!
//! One of the two dead-position checks (the other, the relaxation, is
//! `relaxation.rs`), apart because it is the largest: numbering the cards
//! out, closing the order, and the matchings and deals that add to it.
//!
//! # The counts
//!
//! For every card not yet home, the cards that must
//! be home strictly before it in every line: the cards above it in its
//! reserve pile; its parent, when only one copy of the parent is not yet home
//! and no free parent exists; for a frozen card, its other copy and its
//! parents; and, transitively, theirs. A card that must precede itself proves
//! the position lost. Then, row by row: each time a gap opens it is refilled
//! in the same move, so before any card moves, its row has seen exactly as
//! many arrivals as departures. If a card must wait for more arrivals into a
//! row (or departures from it) than there are other cards of that row that
//! could move before it (those that do not have to wait for it), the
//! position is lost. The check costs about as much as the rest of a node;
//! it ran only in the last two deals until the matchings below made it
//! prove enough earlier in the game: run at every deal, it proves 8 more
//! deals of seeds 1–200 lost and 12 more of seeds 1,001–1,200 settled at a
//! million positions than in the last two deals, in 13% and 15% fewer
//! positions, for roughly half as much CPU time again (`docs/WINNABILITY.md`).
//!
//! # The matchings
//!
//! The counts above read each card's parent only when one
//! copy of it is left; two choices every winning line makes add more
//! (`Link`, `propagate_links`):
//! - *Copies to parents.* When both copies of a card X (rank 5 or more)
//!   are out, no home pile holds X, so every home copy of its parent P tops
//!   a pile that nothing but X can cover, and a pile topped by a copy of P
//!   still out opens only once that copy is home. Each copy of X goes onto
//!   a pile of its own. If no copy of P is home, the copies of X are
//!   matched one to one with the two copies of P, each home strictly after
//!   its own; if one copy of P is home (and free) and the other out, one
//!   copy of X goes home strictly after the one out. A matching in which a
//!   copy of P must follow the copy of X matched to it is ruled out; when
//!   one matching is left, its order is added, and when none is, the
//!   position is lost. Whichever matching a line makes, a copy of X that
//!   must follow the other copy comes after every copy of P out (the other
//!   copy took a pile first).
//! - *Gaps to fillers.* A row's misplaced cards and the base cards of the
//!   row not yet home are as many: every position holds a card, and each
//!   home pile stands on one of the row's eight base cards. A move that
//!   takes a misplaced card out of a row puts a base card of the row in its
//!   place in the same move, and a base card enters its row in no other
//!   way (as a filler or in a swap); a misplaced card goes home (onto a
//!   pile, to the discard, or into its own row) the moment it leaves. So
//!   the two are matched one to one by the positions, each pair going home
//!   in the same move. Two cards one of which must precede the other are no
//!   pair; a card with one partner left is paired with it (which takes that
//!   partner from the others), and then whatever must precede one of the
//!   pair precedes the other, and whatever must follow one follows the
//!   other. A card with no partner left proves the position lost.
//!
//! Each addition holds in every winning line, given the orders it reads,
//! so the closure, the self-precedence test and the row counts stay sound;
//! the additions repeat, keeping the order closed, until nothing changes. Neither
//! reads a freeze. Measured at a million positions, with the counts still
//! in the last two deals only: seed 93's loss is proved in 607,322
//! positions instead of 758,551, and seeds 1, 11, 55 and 77, unknown
//! before, are proved lost (`docs/WINNABILITY.md`).
//!
//! # The deals in the counts
//!
//! The counts above leave the stock's cards
//! unordered, but each is dealt onto a known pile (the stock's last card
//! onto the first pile, the next onto the second, and so on, eight a
//! deal), on top of whatever of that pile is still there. So each deal to
//! come is an event in the order too (`propagate_deals`): it comes after
//! the deal before it and before every card it deals (an Ace it deals is
//! discarded in the same move, after the deal; a deal moves no other card
//! home, since no Ace is ever left on a reserve top for it to uncover).
//! Take a card C that lies on pile p now, or will be dealt onto it, and a
//! later deal that puts the card S on p. C leaves p only by going home (a
//! build, or as a filler, which makes it a home base card; an Ace only when
//! it comes to the top). So either C is home before that deal, or C is
//! still on p when it is made and S lands above it, and then S goes home
//! (or, an Ace, is discarded) before C. Hence, in every winning line:
//! - if C must come after the deal (it must wait for a card that deal or a
//!   later one deals, say), S goes home before C;
//! - if C must go home before S, C goes home before the deal, so before
//!   every card that deal and the later ones deal, and before whatever
//!   must follow them.
//!
//! Each addition holds in every winning line given the orders it reads, as
//! the matchings' do, so the additions repeat with the matchings', the
//! order kept closed, until nothing changes; a deal is never one of a
//! matching's pair (no card goes home in a deal's move but its Aces), and
//! the row counts count cards only. A card of the next deal above a card
//! that must wait for a later deal now waits for it, and what waits for a
//! card the deal buries waits for the cards above it: on a fixture where
//! the only 3♠ that can take the second 6♠ must fill a gap that opens only
//! after the next deal, which puts that 6♠ on the 3♠, the counts see the
//! loss that neither the relaxation (which lets the 3♠ into its row once
//! any card of the row has left) nor the counts without the deals see.
//! Of 150 positions of real deals with two to four deals left, 84 are dead
//! by the counts with the deals and 63 without. Measured at a million
//! positions: seeds 1–200 settle 84.0% (79.5% without: 2 deals more won,
//! 7 more proved lost) and seeds 1,001–1,200 86.0% (80.0%), no verdict
//! changed, in 22% and 24% fewer positions, for about a quarter more CPU
//! time (`docs/WINNABILITY.md`).
//!
//! # The relaxation's deals in the counts
//!
//! The counts order a card after a deal only through the cards it waits
//! for; the relaxation knows more about what can come before a deal, since
//! it lets a card in by any of its ways (either parent, any base card
//! showing for a gap) where the counts read a parent only when one copy is
//! left and a row's gaps only as a matching. Its argument
//! (`relaxation.rs`) shows, card by card, that every card the real game
//! brings home before a deal the relaxation brings home
//! before that deal too (under the same frozen builds, the only freezes
//! either reads). Counting copies: before each deal a line has brought
//! home no more copies of a card than the relaxation has. So when the
//! relaxation brings no copy of a card home before a deal, beyond the
//! copies home now, no winning line does: every copy not yet home goes
//! home after that deal (`relax` records the copies it gains before each
//! deal; the counts put each such card after the last deal before which
//! none is gained, the deals being ordered). This holds in every winning
//! line, so it joins the orders before the closure, and the deals', the
//! matchings' and the row counts' reasoning stays sound on top of it.
//! What it adds is mostly through the deals: a card that must follow a
//! deal follows the card that deal puts on its pile. Of the 100
//! positions with one to three deals left that every check calls alive
//! and one round of the search proves lost, sampled from the unknown
//! deals of seeds 1–200, it proves 32 lost at once. Measured at a million
//! positions: seeds 1–200 settle 86.0% (84.0% without: 4 more deals
//! proved lost) and seeds 1,001–1,200 90.5% (86.0%: 8 more lost, 1 more
//! won), no verdict changed, in 17% and 32% fewer positions for about
//! 10% and 23% less CPU time (`docs/WINNABILITY.md`).

use arrayvec::ArrayVec;

use crate::card::Card;
use crate::games::virginia_reel::{COLUMNS, RESERVE_CAPACITY, RESERVES, ROWS};

use super::relaxation::RelaxedBefore;
use super::{MAX_DEALS_LEFT, NO_CARD, ReelSearch, home_row, parent};

impl ReelSearch {
    /// Whether the precedence counts of the module docs prove the position
    /// lost: some card must wait for itself, or must wait for more arrivals
    /// into a row than that row has other gaps to take them.
    pub(super) fn is_dead_by_precedence(&self) -> bool {
        let mut relaxed: RelaxedBefore = [[0; 52]; MAX_DEALS_LEFT];
        let read = self.pruning.relaxed_deals && !self.relax(Some(&mut relaxed));
        self.is_dead_by_precedence_given(read.then_some(&relaxed))
    }

    /// [`ReelSearch::is_dead_by_precedence`], given what the relaxation
    /// brings home before each deal (`None`: not read).
    pub(super) fn is_dead_by_precedence_given(&self, relaxed: Option<&RelaxedBefore>) -> bool {
        /// The most cards not yet home (101, with the 3 of column 1 home)
        /// and deals to come (9), with room to spare.
        const MAX: usize = 128;
        /// Where a card not yet home lies, for the counts.
        #[derive(Clone, Copy)]
        enum Place {
            /// A misplaced card in this row.
            Row(usize),
            /// A reserve pile and depth, or a stock card (no depth).
            Reserve,
            /// Not a card: the moment a deal is made (module docs, "The
            /// deals in the counts").
            Deal,
        }
        /// Every card not yet home, numbered.
        struct Out {
            cards: [Card; MAX],
            places: [Place; MAX],
            /// The numbers of the cards of each kind, at most two.
            instances: [[u8; 2]; 52],
            n: usize,
        }
        impl Out {
            fn note(&mut self, card: Card, place: Place) -> usize {
                let id = self.n;
                self.cards[id] = card;
                self.places[id] = place;
                let slot = &mut self.instances[card.index()];
                if slot[0] == u8::MAX {
                    slot[0] = id as u8;
                } else {
                    slot[1] = id as u8;
                }
                self.n += 1;
                id
            }
        }
        let mut out = Out {
            cards: [NO_CARD; MAX],
            places: [Place::Reserve; MAX],
            instances: [[u8::MAX; 2]; 52],
            n: 0,
        };
        let mut must = [0u128; MAX];
        for row in 0..ROWS {
            let mut rest = self.rows.misplaced[row];
            while rest != 0 {
                let position = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                out.note(self.card_at(position), Place::Row(row));
            }
        }
        let mut frozen = 0u128;
        // Each pile's cards from the bottom up, those on it now and those
        // the deals to come will put on it, each with the deal that puts
        // it there (0 for a card on the pile now); `None` for a pile too
        // tall to list (only a fixture can make one), which then gets no
        // orders from the deals (fewer orders only prove less).
        let mut stacks: [Option<Stack>; RESERVES] = Default::default();
        for (pile, stack) in stacks.iter_mut().enumerate() {
            let contents = self.state.reserve(pile);
            let first = out.n;
            let mut listed = Some(Stack::new());
            for (depth, &card) in contents.iter().enumerate() {
                let id = out.note(card, Place::Reserve);
                if self.frozen.builds[pile] & (1 << depth) != 0 {
                    frozen |= 1 << id;
                }
                listed =
                    listed.and_then(|mut list| list.try_push((id as u8, 0)).ok().map(|()| list));
            }
            *stack = listed;
            // Every card above must leave first.
            for (below, needs) in must.iter_mut().enumerate().take(out.n).skip(first) {
                for above in below + 1..out.n {
                    *needs |= 1 << above;
                }
            }
        }
        // The stock's last card is dealt first, onto the first pile.
        let stock = self.state.stock();
        let mut dealt_at = [0u8; MAX];
        for (from_top, &card) in stock.iter().rev().enumerate() {
            let id = out.note(card, Place::Reserve);
            let deal = from_top / RESERVES + 1;
            dealt_at[id] = deal as u8;
            let stack = &mut stacks[from_top % RESERVES];
            if let Some(list) = stack
                && list.try_push((id as u8, deal as u8)).is_err()
            {
                *stack = None;
            }
        }
        // The deals to come, as events in the order (module docs, "The
        // deals in the counts"): each after the one before it, and before
        // every card it deals.
        let first_deal = out.n;
        if self.pruning.deal_order {
            for deal in 1..=stock.len().div_ceil(RESERVES) {
                let id = out.n;
                out.cards[id] = NO_CARD;
                out.places[id] = Place::Deal;
                out.n += 1;
                if deal > 1 {
                    must[id] |= 1 << (id - 1);
                }
            }
            for id in 0..out.n {
                if dealt_at[id] != 0 {
                    must[id] |= 1 << (first_deal + usize::from(dealt_at[id]) - 1);
                }
            }
            // A card the relaxation brings no copy of home before a deal
            // goes home after it (module docs, "The relaxation's deals in
            // the counts"); the last such deal is enough, the deals being
            // ordered.
            if let Some(relaxed) = relaxed {
                let deals = (out.n - first_deal).min(relaxed.len());
                for (needs, card) in must.iter_mut().zip(&out.cards).take(first_deal) {
                    let kind = card.index();
                    if let Some(last) = (0..deals).rev().find(|&k| relaxed[k][kind] == 0) {
                        *needs |= 1 << (first_deal + last);
                    }
                }
            }
        }
        let Out {
            cards,
            places,
            instances,
            n,
        } = out;
        // Parents: when no parent is free for a card, the one parent not yet
        // home (if there is just one) must be home first. A frozen card goes
        // after its other copy, so needs that copy and both parents home.
        for id in 0..n {
            let card = cards[id];
            let Some(parent) = parent(card) else { continue };
            let out = instances[parent.index()];
            let twin_first = frozen & (1 << id) != 0;
            let free = i32::from(self.rows.copies[parent.index()])
                - i32::from(self.rows.copies[card.index()])
                - i32::from(twin_first);
            if free > 0 {
                continue;
            }
            if twin_first {
                for other in instances[card.index()] {
                    if usize::from(other) != id && other != u8::MAX {
                        must[id] |= 1 << other;
                    }
                }
                for other in out {
                    if other != u8::MAX {
                        must[id] |= 1 << other;
                    }
                }
            } else if out[1] == u8::MAX && out[0] != u8::MAX {
                must[id] |= 1 << out[0];
            }
        }
        // The matchings (module docs): copies of a card to the parents
        // they go onto, and each row's gaps to the base cards that fill
        // them.
        let mut links: ArrayVec<Link, 64> = ArrayVec::new();
        if self.pruning.matchings {
            for (kind, &ids) in instances.iter().enumerate() {
                let [first, second] = ids;
                if second == u8::MAX {
                    continue;
                }
                let card = cards[usize::from(first)];
                let Some(parent) = parent(card) else { continue };
                let copies = [usize::from(first), usize::from(second)];
                // Both copies are out, so no home pile holds this card and
                // every home copy of the parent tops its pile.
                debug_assert_eq!(self.rows.copies[kind], 0);
                let parents_out = instances[parent.index()];
                let link = match (self.rows.copies[parent.index()], parents_out) {
                    (0, [one, other]) if other != u8::MAX => Link::Parents {
                        copies,
                        parents: [usize::from(one), usize::from(other)],
                    },
                    (1, [one, u8::MAX]) if one != u8::MAX => Link::OneParent {
                        copies,
                        parent: usize::from(one),
                    },
                    _ => continue,
                };
                if links.try_push(link).is_err() {
                    break;
                }
            }
            'rows: for row in 0..ROWS {
                let mut leavers = ArrayVec::<u8, COLUMNS>::new();
                let mut arrivals = ArrayVec::<u8, COLUMNS>::new();
                for id in 0..n {
                    // A list cut short would pair the wrong cards: leave
                    // the row without a link instead (a link fewer only
                    // proves less).
                    let leaves = matches!(places[id], Place::Row(at) if at == row);
                    let arrives = home_row(cards[id]) == Some(row);
                    if (leaves && leavers.try_push(id as u8).is_err())
                        || (arrives && arrivals.try_push(id as u8).is_err())
                    {
                        continue 'rows;
                    }
                }
                if !leavers.is_empty()
                    && leavers.len() == arrivals.len()
                    && links.try_push(Link::Gaps { leavers, arrivals }).is_err()
                {
                    break;
                }
            }
        }
        // Transitive closure.
        loop {
            let mut changed = false;
            for id in 0..n {
                let mut closure = must[id];
                let mut rest = must[id];
                while rest != 0 {
                    let other = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    closure |= must[other];
                }
                if closure != must[id] {
                    must[id] = closure;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        loop {
            if (0..n).any(|id| must[id] & (1 << id) != 0) {
                return true;
            }
            // What the links and the deals add keeps `must` closed.
            let dealt =
                self.pruning.deal_order && propagate_deals(&stacks, first_deal, &mut must[..n]);
            match propagate_links(&links, &mut must[..n]) {
                Propagated::Dead => return true,
                Propagated::Changed => {}
                Propagated::Settled if dealt => {}
                Propagated::Settled => break,
            }
        }
        // Row by row: each moment a row's gap opens it is refilled, so before
        // any card's move a row has had as many arrivals as departures.
        for row in 0..ROWS {
            let mut leavers = 0u128;
            let mut arrivals = 0u128;
            for id in 0..n {
                if let Place::Row(at) = places[id]
                    && at == row
                {
                    leavers |= 1 << id;
                }
                if home_row(cards[id]) == Some(row) {
                    arrivals |= 1 << id;
                }
            }
            let mut events = leavers | arrivals;
            while events != 0 {
                let id = events.trailing_zeros() as usize;
                events &= events - 1;
                let me = 1u128 << id;
                let forced = (must[id] & arrivals)
                    .count_ones()
                    .max((must[id] & leavers).count_ones());
                let can_precede = |set: u128| {
                    let mut count = 0;
                    let mut rest = set & !me;
                    while rest != 0 {
                        let other = rest.trailing_zeros() as usize;
                        rest &= rest - 1;
                        if must[other] & me == 0 {
                            count += 1;
                        }
                    }
                    count
                };
                if forced > can_precede(leavers).min(can_precede(arrivals)) {
                    return true;
                }
            }
        }
        false
    }
}

/// A choice every winning line makes between cards not yet home, for the
/// precedence counts (module docs, "The matchings"); cards are numbered as
/// in [`ReelSearch::is_dead_by_precedence`].
enum Link {
    /// Both copies of a card and both copies of its parent are out: each
    /// copy goes home strictly after a different copy of the parent.
    Parents {
        copies: [usize; 2],
        parents: [usize; 2],
    },
    /// Both copies of a card are out, one home pile is topped by its parent
    /// and the other copy of the parent is out: one of the copies goes home
    /// strictly after that parent.
    OneParent { copies: [usize; 2], parent: usize },
    /// A row's misplaced cards and the base cards of the row not yet home,
    /// as many of each: each misplaced card leaves in the same move as a
    /// different one of those base cards arrives.
    Gaps {
        leavers: ArrayVec<u8, COLUMNS>,
        arrivals: ArrayVec<u8, COLUMNS>,
    },
}

/// A reserve pile's cards from the bottom up, each with the deal that puts
/// it there (0 for a card on the pile now), for the precedence counts
/// (module docs, "The deals in the counts"); cards are numbered as in
/// [`ReelSearch::is_dead_by_precedence`].
type Stack = ArrayVec<(u8, u8), RESERVE_CAPACITY>;

/// Adds to `must` (closed, as in [`propagate_links`]) what the deals force,
/// keeping it closed: a card on a pile, or to be dealt onto it, is home
/// before a later deal (its event numbered `first_deal + deal - 1`) or lies
/// under the card that deal puts on the pile. So a card that must follow
/// the deal follows that card, and a card that must precede that card
/// precedes the deal. Whether it added anything.
fn propagate_deals(stacks: &[Option<Stack>], first_deal: usize, must: &mut [u128]) -> bool {
    let mut changed = false;
    for stack in stacks.iter().flatten() {
        for (at, &(card, since)) in stack.iter().enumerate() {
            let card = usize::from(card);
            for &(cover, deal) in &stack[at + 1..] {
                if deal == since {
                    // A card above it on the pile now: the pile's order.
                    continue;
                }
                let cover = usize::from(cover);
                let deal = first_deal + usize::from(deal) - 1;
                if follows(must, card, deal) {
                    changed |= put_after(must, card, cover);
                }
                if follows(must, cover, card) {
                    changed |= put_after(must, deal, card);
                }
            }
        }
    }
    changed
}

/// Whether `must` (bit `j` of `must[i]` when `j` must go home strictly
/// before `i`) orders `earlier` before `later`.
fn follows(must: &[u128], later: usize, earlier: usize) -> bool {
    must[later] & (1 << earlier) != 0
}

/// Orders `earlier` before `later` in `must`, keeping it closed: whatever
/// follows `later` (or is it) follows `earlier` and what precedes it.
/// Whether it was new.
fn put_after(must: &mut [u128], later: usize, earlier: usize) -> bool {
    if follows(must, later, earlier) {
        return false;
    }
    let gained = must[earlier] | (1 << earlier);
    for (id, set) in must.iter_mut().enumerate() {
        if id == later || *set & (1 << later) != 0 {
            *set |= gained;
        }
    }
    true
}

/// What [`propagate_links`] did.
enum Propagated {
    /// No line can make the links' choices.
    Dead,
    /// It added cards that must go home first.
    Changed,
    /// Nothing new.
    Settled,
}

/// Adds to `must` (transitively closed: bit `j` of `must[i]` when card `j`
/// must go home strictly before card `i`) what the links force, keeping it
/// closed: a choice whose every option but one contradicts `must` takes
/// that option.
fn propagate_links(links: &[Link], must: &mut [u128]) -> Propagated {
    let mut changed = false;
    for link in links {
        match *link {
            Link::Parents {
                copies: [x, y],
                parents: [p, q],
            } => {
                // Matched as x-p, y-q or as x-q, y-p.
                let straight = !follows(must, p, x) && !follows(must, q, y);
                let crossed = !follows(must, q, x) && !follows(must, p, y);
                match (straight, crossed) {
                    (false, false) => return Propagated::Dead,
                    (true, false) => {
                        changed |= put_after(must, x, p) | put_after(must, y, q);
                    }
                    (false, true) => {
                        changed |= put_after(must, x, q) | put_after(must, y, p);
                    }
                    (true, true) => {}
                }
                // The copy that goes second comes after both parents.
                for (second, first) in [(x, y), (y, x)] {
                    if follows(must, second, first) {
                        changed |= put_after(must, second, p) | put_after(must, second, q);
                    }
                }
            }
            Link::OneParent {
                copies: [x, y],
                parent,
            } => {
                match (follows(must, parent, x), follows(must, parent, y)) {
                    (true, true) => return Propagated::Dead,
                    (true, false) => changed |= put_after(must, y, parent),
                    (false, true) => changed |= put_after(must, x, parent),
                    (false, false) => {}
                }
                for (second, first) in [(x, y), (y, x)] {
                    if follows(must, second, first) {
                        changed |= put_after(must, second, parent);
                    }
                }
            }
            Link::Gaps {
                ref leavers,
                ref arrivals,
            } => {
                // Two cards that move in the same move: neither strictly
                // before the other.
                let apart = |must: &[u128], a: u8, b: u8| {
                    follows(must, usize::from(a), usize::from(b))
                        || follows(must, usize::from(b), usize::from(a))
                };
                // Which arrival each leaver may move with, narrowed while
                // some leaver or arrival has a single partner left.
                let mut may = [0u8; COLUMNS];
                for (i, &leaver) in leavers.iter().enumerate() {
                    for (j, &arrival) in arrivals.iter().enumerate() {
                        if !apart(must, leaver, arrival) {
                            may[i] |= 1 << j;
                        }
                    }
                }
                let m = leavers.len();
                let mut narrowed = true;
                while narrowed {
                    narrowed = false;
                    for i in 0..m {
                        if may[i] == 0 {
                            return Propagated::Dead;
                        }
                        let only = may[i];
                        if only.count_ones() == 1 {
                            for (other, set) in may.iter_mut().enumerate().take(m) {
                                if other != i && *set & only != 0 {
                                    *set &= !only;
                                    narrowed = true;
                                }
                            }
                        }
                    }
                    for j in 0..m {
                        let mut with = (0..m).filter(|&i| may[i] & (1 << j) != 0);
                        match (with.next(), with.next()) {
                            (None, _) => return Propagated::Dead,
                            (Some(i), None) if may[i] != 1 << j => {
                                may[i] = 1 << j;
                                narrowed = true;
                            }
                            _ => {}
                        }
                    }
                }
                // A leaver with one partner left moves with it: whatever
                // must precede one precedes the other, and whatever must
                // follow one follows the other.
                for i in 0..m {
                    if may[i].count_ones() != 1 {
                        continue;
                    }
                    let a = usize::from(leavers[i]);
                    let b = usize::from(arrivals[may[i].trailing_zeros() as usize]);
                    let both = (1u128 << a) | (1u128 << b);
                    // Neither is in either set (they are not apart, and
                    // no card precedes itself), and the union of two
                    // closed sets is closed.
                    let union = must[a] | must[b];
                    for (id, set) in must.iter_mut().enumerate() {
                        let grown = if id == a || id == b {
                            *set | union
                        } else if *set & both != 0 {
                            *set | union | both
                        } else {
                            continue;
                        };
                        changed |= grown != *set;
                        *set = grown;
                    }
                }
            }
        }
    }
    if changed {
        Propagated::Changed
    } else {
        Propagated::Settled
    }
}
