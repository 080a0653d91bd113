//! The solver's view of Virginia Reel.
//!
//! [`ReelSearch`] wraps a [`VirginiaReel`] position for the generic search of
//! [`crate::solver`]: it delegates the rules (so every move it plays is
//! checked by the rules engine and undone exactly), keeps a position key up to
//! date as moves are made and unmade, chooses which moves to try, and proves
//! positions lost early.
//!
//! # The shape of the game
//!
//! Every move is final. A build or a release puts a card on a home pile,
//! where it stays; every filler of a release chain and both cards of a swap
//! become home base cards, which never move again; an Ace that leaves is gone;
//! a deal cannot be taken back. So a game is at most about a hundred moves
//! long and the positions form a DAG: the search never wanders in circles. Its
//! cost is breadth: between two deals the same handful of builds and releases
//! can be played in any subset and order, and a deal can come after any of
//! them. Nearly all of the search is spent in the last three deals.
//!
//! # The key
//!
//! Which symmetries are real:
//! - *Columns.* No rule looks at a position's column (column 1 is home from
//!   the deal, and home piles never move), so each row is a multiset of
//!   positions. A position is one of 104 things per row: a home pile, named by
//!   its top card (its suit and height follow), or a misplaced card. The key
//!   adds up one Zobrist value per position, so that order within a row does
//!   not count and two equal positions still count twice.
//! - *Reserve piles.* A pile is its cards *together with the cards the
//!   remaining deals will put on it*; two piles are interchangeable only when
//!   both agree. Each pile is hashed as its contents mixed with the hash of
//!   its future cards, and the mixed values are added up. While stock
//!   remains, two piles almost never share a future, so this is nearly the
//!   plain pile order; once the stock is gone every future is empty and the
//!   piles become a true multiset.
//! - *Two copies of a card* are the same [`Card`] value already.
//! - The discard is left out: which Aces left follows from the rest, and their
//!   order changes nothing.
//! - What is frozen (below) is part of the position the search explores, so
//!   it is part of the key too. A freeze names its reserve by the reserve's
//!   share of the key, not by its index, so that it moves with the reserve:
//!   by index, two positions with the stock out, reserves swapped and
//!   different cards frozen would share a key, and the search, which skips
//!   a key it has seen, could skip a win.
//!
//! [`ReelSearch`] keeps each position's and each pile's share of the key and,
//! after a move, recomputes only the shares of what the move touched (a deal
//! touches all eight piles and every future).
//!
//! # Moves generated
//!
//! The search generates its own moves rather than calling `legal_moves`,
//! whose chains of fillers multiply. A move whose result is the same
//! position up to the key's symmetries as another's is generated once: among
//! identical misplaced cards in one row only the first is released, swapped
//! or used as a filler, and of two home piles with the same top card only the
//! first is a target (a home pile is determined by its top card). Reserves
//! are never merged, since the cards under two equal tops differ. Every move
//! generated is legal; a test checks each against the rules engine's list.
//!
//! Order: first the moves that uncover, on the reserve they take from, a
//! card that can go home at once or an Ace, then those that uncover a base
//! card, then the rest; within each, builds by reserve, releases (chains
//! through misplaced fillers first, longest first, then straight from a
//! reserve), swaps; the deal last. Playing out what the board offers before
//! dealing is usually right. (Sorting by what a move uncovers took seeds
//! 1..=140 from 89 to 91 wins at a million positions; the figures below
//! were measured before it.)
//!
//! # Discrepancy passes, then restarts
//!
//! The time to a win is heavy-tailed: a depth-first search that goes wrong
//! near the root can spend millions of positions below that mistake. So the
//! search first makes six limited-discrepancy passes
//! ([`SolverGame::discrepancy_passes`]) that stray from the order above at
//! most 0, 1, .., 5 times along a line, within 40% of the budget
//! ([`SolverGame::discrepancy_budget`]); then it restarts on the Luby
//! schedule in units of 4,096 positions ([`SolverGame::restart_unit`]), each
//! round with a fresh table and, after the first, the moves of each
//! position in an order shuffled by a hash of the position and the round
//! (the deal stays last). Neither can change a verdict: a win is replayed,
//! and a loss is proved only by a pass that never had to cut a line short
//! or a round that ran out of positions, each a complete search (once
//! the stock is out a pass has no limit: "The endgame in the passes"). The
//! freezing below holds for any order that is a fixed function of the
//! position, which the shuffled order is within a round.
//!
//! Measured on seeds 1..=40 at 1,000,000 positions (winnable, unwinnable,
//! unknown): the full search alone 17, 1, 22; six passes with the whole
//! budget 24, 1, 15 (three passes: 18 wins; ten or thirty passes change
//! nothing, the budget is spent within the first six); restarts alone 24,
//! 1, 15 (but not the same 24, and most found sooner); passes within 40%
//! then restarts 26, 1, 13 (30% with units of 8,192: 25 wins; 60%: 26).
//! All but the last were measured before the relaxation stopped carrying a
//! freeze onto newly dealt cards (a false "lost" the rule tests caught);
//! the last was measured again after the fix, with the same counts.
//!
//! # Best-first phase
//!
//! Beside the restart rounds runs the best-first search of
//! `solver::best_first` on half of what the discrepancy passes leave (so
//! 300,000 of a million when the passes spend their 40%), a share of what
//! the rounds spend at a time, when what the passes leave is at least
//! 100,000 positions (`BEST_FIRST_FROM`: so from a budget of about
//! 167,000; not at the bots' 50,000 per guess, nor in the hint tests).
//! It expands the open position of highest score, where the score is, per
//! unit, -10 for each card on a reserve, -10 for each misplaced card, and
//! +3 for each reserve top that can be used at once (a card of rank 5 or
//! more whose parent tops a home pile, or a base card of a row with a
//! misplaced card that has somewhere to go). Why these: a card on a reserve is the game's
//! trouble (it leaves only from the top, and every deal puts a card on
//! it), and counting reserve cards rather than cards home compares
//! positions across deals fairly: a deal adds eight reserve cards, so it
//! ranks below the builds and releases still open before it, and a
//! position three deals on ranks beside an earlier one only if it has as
//! few cards left on the reserves. A misplaced card needs a release (a
//! target and a filler), so it weighs like a reserve card. The usable tops
//! break ties toward positions with something to play. No cost per move
//! (a cost of 5 per move lost most of what the search alone wins), no
//! weight for how deep cards lie (the sum over piles of pairs of cards,
//! or the cards lying on a usable one: both won fewer). Measured with the
//! search alone at 200,000 positions on the 62 deals of seeds 1–200 that
//! the passes and rounds leave unknown: these weights won 8 of them, the
//! others 1 to 8. With the phase, seeds 1–200 at a million positions give
//! 142 won, 5 lost, 53 unknown (133, 5, 62 before; with a share of 30%,
//! 141, 5, 54), and no deal settled before goes unknown; seeds
//! 1,001–1,200, on which the weights were not chosen, give 126, 14, 60
//! (119, 14, 67 before, 124, 14, 62 with 30%: 8 deals newly won, one,
//! seed 1085, newly unknown). `docs/WINNABILITY.md` has the figures.
//!
//! A loss the best-first search reports (its queue emptied) is as sound as
//! one a depth-first round proves, for the same reasons. What is frozen
//! after a move is a fixed function of the position before it and the
//! move (the moves tried before it in the order of round 0, the order the
//! phase uses), and it is part of the key, so replaying a node's moves
//! rebuilds the same freezes, and two positions with one key are the same
//! position with the same freezes up to the key's symmetries. The children
//! of a position split its winning lines that respect its freezes between
//! them (the freezing argument above), whatever order they are expanded
//! in; `search_moves` gives no move for a position it proves lost under
//! its freezes (the dead-position checks, and the table of lost positions,
//! which the passes and rounds fill as the phase runs: each of its entries
//! holds in any later search, see "Positions proved lost"). So when every
//! position generated has been expanded and none is won, each is lost
//! under its freezes, by induction on the length of the shortest winning
//! line that respects them: the child that covers that line has a shorter
//! one. The phase never tells the game a position was proved lost (it
//! does not call [`SolverGame::proved_lost`]), so it adds nothing to the
//! table. The test
//! `the_best_first_search_alone_proves_the_losses_a_round_proves` checks
//! that, with the table off, it proves the same losses as one round after
//! as many positions.
//!
//! # Safe moves
//!
//! A safe move is played alone: the search tries nothing else there. Each
//! argument takes a winning line and moves the safe move to the front.
//!
//! *A build onto the last free parent.* A reserve card X (rank 5 or more)
//! whose parent P (same suit, three ranks lower) tops a home pile H, when
//! both copies of P are already home. A reserve card leaves only by a build,
//! and only a copy of X can ever go onto P; both copies of P are home, so
//! each is either under the other copy of X already, or the top of a home
//! pile identical to H. A winning line plays X onto some P-topped pile at a
//! time t, and by relabelling identical piles, onto H. Playing X first and
//! then the line without that move is legal: until t nothing but X lands on
//! H; the cards the line deals onto X's pile now lie on the card that was
//! under X, but the line takes them off before t anyway (X must be on top at
//! t) and never reads the pile deeper before t; X is no filler, so no chain
//! needed it. At t both lines reach the same position.
//!
//! *A build whose other copy lies under it.* The same, when the other copy
//! of X lies below X in X's own reserve pile: it cannot reach a parent before
//! X has left, so X is the first copy home in every line, and nothing else
//! can take H before it.
//!
//! *The release of a row's last misplaced card.* A row with one misplaced
//! card M left has exactly one of its base cards not yet home. If that card
//! B tops a reserve, and M is an Ace or both copies of M's parent are home (no
//! other card can want M's target), then M leaves with B straight from that
//! reserve at some time in every winning line (B can fill no other gap, and
//! no chain can end elsewhere: it would need a second base card of the row).
//! Moving that release to the front is legal for the reasons above, and the
//! row's new home pile only adds targets in between.
//!
//! # Freezing the moves passed over
//!
//! The search splits the winning lines of a position between its children.
//! For a build of X from a reserve onto a parent, or a release (a card M with
//! given fillers and a given reserve card), or a swap of two given cards:
//! either some winning line plays that exact move while nothing can have
//! competed for its target (before the other copy of the card it sends home
//! goes home; at any time if that copy is home already, for an Ace or for a
//! swap), and then, as with the safe moves, the move can be moved to the
//! front, so the child that plays it now covers that line; or no winning line
//! does, and the move may be frozen. The children are tried in the order above, and each child
//! freezes every build, release and swap tried before it; the deal's child
//! freezes all of them. A frozen build stays frozen until the other copy of
//! its card is home; a frozen release until the other copy of its card is
//! home (never, for an Ace); a frozen swap for good. Releases are frozen by
//! card classes (row and card, not column), so one freeze covers every copy
//! it stands for. Freezing fewer moves is always sound: releases through
//! more than three fillers, and freezes past 48 at once, are not recorded.
//! Moving a move to the front relies on no other card ever competing for
//! its target before the other copy is home, which is why the freeze lifts
//! then.
//!
//! This is what stops the search from playing the same build at every
//! moment between two deals, and from replaying, after a deal, everything it
//! declined before it.
//!
//! Plausible rules that are wrong, and are not used:
//! - *Swaps are safe.* A swap makes two base cards home with no reserve card,
//!   but one of them may be the only filler that can release a card now: a
//!   misplaced 6♥ in row B whose 9♥ covers the only 3 left on the reserve can
//!   leave only through a chain that uses a misplaced 3 from row A. Swapping
//!   that 3 home first buries the game.
//! - *A release with a free target is safe.* Releases compete for fillers:
//!   the base card it takes may be the one another misplaced card in the row
//!   needs before the next one turns up.
//! - *A build onto a parent is safe.* Not while the other copy of the card may
//!   need that parent first and the other parent is still buried.
//! - *Dead when a row's fillers outnumber its freed gaps*, counted greedily:
//!   which filler takes a gap is a choice, and the greedy count declares
//!   winnable deals lost (tried, and rejected for that reason).
//!
//! # Dead positions
//!
//! Two checks prove a position lost, which is what makes proofs of lost deals
//! short.
//!
//! *The relaxation.* A relaxed game that can do everything the real game can
//! (and more) cannot bring every card home. It walks the remaining deals in
//! order. Between two deals it repeatedly lets any card "go home" that could
//! possibly go home next:
//! - a card on a reserve top (the relaxed pile is the real pile's cards, in
//!   order, minus those already gone home; each deal puts the real next card
//!   of the stock on top), or a misplaced card;
//! - whose destination could be open: for a card of rank 5 or more, more
//!   copies of its parent have gone home than copies of the card were home at
//!   the start (a parent already covered by the other copy does not count);
//!   for a frozen card, its other copy has gone home and both parents have;
//!   for an Ace, always; for a base card, some misplaced card of its row has
//!   gone home in the relaxation (a filler enters a row only as a misplaced
//!   card leaves it), or, for a misplaced base card, a card of the row it
//!   belongs in could swap with it;
//! - and, for a misplaced card that is not a base card, whose gap could be
//!   filled: a base card of its row has shown on a relaxed reserve top, or
//!   lies misplaced in a row whose own gap could be filled.
//!
//! Every condition is monotone in the set of cards gone home and implied by
//! the real rule, and the relaxed pile is always the real pile minus more
//! cards. By induction over the real moves in order (the cards of one chain
//! or swap taken in chain order), every card the real game brings home before
//! a deal, the relaxation brings home before that deal too; so if the
//! relaxation leaves a card out after the last deal, no real line wins. A card
//! buried under a card that needs it, directly, through another card, or
//! through the stock's later deals, is found at once.
//!
//! *The precedence counts.* For every card not yet home, the cards that must
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
//! *The matchings.* The counts above read each card's parent only when one
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
//! *The deals in the counts.* The counts above leave the stock's cards
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
//! *The relaxation's deals in the counts.* The counts order a card after
//! a deal only through the cards it waits for; the relaxation knows more
//! about what can come before a deal, since it lets a card in by any of
//! its ways (either parent, any base card showing for a gap) where the
//! counts read a parent only when one copy is left and a row's gaps only
//! as a matching. Its argument above shows, card by card, that every card
//! the real game brings home before a deal the relaxation brings home
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
//!
//! # Positions proved lost
//!
//! A table shared by every pass and restart round of one search
//! (`LostTable`) keeps each position the search has proved lost, keyed by
//! the key *without* what is frozen, with what was frozen when it was
//! proved. A position is lost at once if the table holds it proved lost
//! under a sub-multiset of what is frozen now.
//!
//! Why this is sound. Say a line from a position *respects* a set of
//! freezes when it plays none of the frozen moves while they are in force.
//! What a search of a position P with freezes F proves when it finds no win
//! is that no winning line from P respects F: a child that freezes a move m
//! passed over covers every line that respects F and plays m (as the
//! freezing argument above moves m to the front), so the children together
//! cover every line that respects F; a dead-position check proves exactly
//! this for the frozen builds it reads; dropping a freeze that no longer
//! matters, or not recording one, only proves more. The search calls
//! [`SolverGame::proved_lost`] only when every move of P was tried to the
//! end: no line below it was cut at a discrepancy limit, and every position
//! skipped below it as seen before was itself searched to the end. In a
//! round, a position seen before is never one on the current line, since
//! the positions form a DAG (every move is final), so it was searched to
//! the end and lost. The claim "no winning line from P respects F" names
//! neither a move order nor a pass, so it holds in every later pass and
//! round, and for every F' that contains F, since a line that respects F'
//! respects F. The table therefore never calls a position lost that a
//! search without it would win.
//!
//! What is frozen is compared as a multiset of tokens in which a reserve
//! is named by its share of the key (its contents and future) rather than
//! by its index, as in the key (whose term for what is frozen is the sum of
//! the same tokens): with the stock out two reserves with the same contents
//! are interchangeable, and so are their freezes. The
//! dead-position checks read only frozen builds, so a position one of them
//! proves lost is kept under its frozen builds alone, which covers it under
//! any frozen releases and swaps.
//!
//! # The endgame in the passes
//!
//! Once the stock is out, a discrepancy pass searches everything below a
//! position without its limit, as a round does
//! ([`SolverGame::unlimited_below`]): a pass that reaches an endgame
//! proves it lost or wins it there and then, and keeps its losses in the
//! table for the later passes and rounds, where a pass cut at its limit
//! would prove nothing below the cut. Sound for the reasons above: the
//! positions below get no limit, so no line below them is cut; the pass's
//! table marks them searched to the end when they are entered, and a
//! position met again is never one on the current line (a DAG), so it was
//! searched to the end and lost. Above the endgame the pass counts its
//! strays as before, so a pass still proves the deal lost only if it cut
//! no line. The test `the_first_pass_proves_a_lost_endgame_by_itself`
//! checks that the hook fires; `positions_told_lost_are_lost` caught a
//! planted bug that called an endgame searched to the end while its lines
//! were still cut. Measured at a million positions (`docs/WINNABILITY.md`): seeds 1–200 give the
//! same verdicts deal for deal (142 won, 5 lost, 53 unknown) in 4.2% fewer
//! positions; seeds 1,001–1,200 give 128 won, 14 lost, 58 unknown (126,
//! 14, 60 before: seeds 1085 and 1198 newly won, none lost) in 8.5% fewer.
//!
//! Dropping every freeze once the stock is out, so that each endgame loss
//! holds under any freezes, was tried and not kept: endgames reached under
//! different pre-deal choices are rarely the same position, and without
//! freezes each is bigger (the same document has the figures).
//!
//! Each rule can be switched off through [`Pruning`]; the tests compare
//! verdicts with and without each on late positions of a thousand deals and on
//! positions built backwards from a win, which must never be called lost.

use std::cell::{Cell, RefCell};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use arrayvec::ArrayVec;
use rustc_hash::FxHashMap;

use crate::card::{ACE, Card, Suit};
use crate::games::virginia_reel::{
    COLUMNS, FillChain, MAX_FILLERS, POSITIONS, RESERVE_CAPACITY, RESERVES, ROWS, ReelMove,
    ReleaseTarget, VirginiaReel,
};
use crate::rules::{MoveError, Outcome, Rules};
use crate::solver::SolverGame;
use crate::solver::zobrist::{mix64, table};

/// Things one row position can be, for the key: a home pile by its top card
/// (`0..52`) or a misplaced card (`52..104`).
const POSITION_KINDS: usize = 104;
/// The deepest a reserve pile can be, with margin (ten deals of one card).
const PILE_DEPTH: usize = 16;
/// The most deals that can remain (nine of eight cards).
const MAX_DEALS_LEFT: usize = 9;
/// Limited-discrepancy passes before the restart rounds (module docs).
const DISCREPANCY_PASSES: u32 = 6;
/// The share of a search's budget, in percent, that the discrepancy passes
/// may spend; the restart rounds get the rest (module docs).
const DISCREPANCY_SHARE_PERCENT: u64 = 40;
/// The unit of the restart schedule, in positions (module docs).
const RESTART_UNIT: u64 = 4096;
/// The best-first phase's share of what the discrepancy passes leave, in
/// percent (module docs, "Best-first phase"): 50 settled one deal more of
/// seeds 1–200 than 30, and two more of seeds 1,001–1,200, and lost none
/// that 30 settled.
const BEST_FIRST_PERCENT: u64 = 50;
/// The smallest budget (what the passes leave) the best-first phase takes
/// a share of (module docs): a small budget is better spent on the restart
/// rounds' first rounds, as in Indian and Midshipman, and the bots' budget
/// of 50,000 per guess stays as it was. Budgets between were not measured.
const BEST_FIRST_FROM: u64 = 100_000;
/// The weights of the best-first score, per card on a reserve, per
/// misplaced card and per reserve top that can be used at once (module
/// docs, "Best-first phase").
const WEIGHT_RESERVE_CARD: i64 = 10;
const WEIGHT_MISPLACED: i64 = 10;
const WEIGHT_USABLE_TOP: i64 = 3;

/// `top` of a position that holds no home pile.
const NOT_HOME: u8 = u8::MAX;
/// A placeholder card for fixed arrays.
const NO_CARD: Card = Card::new(Suit::Clubs, ACE);

/// Zobrist values by `row * 104 + kind` for row positions.
static POSITION_Z: [u64; ROWS * POSITION_KINDS] = table(0x5e11);
/// Zobrist values by `depth * 52 + card` for reserve contents.
static PILE_Z: [u64; PILE_DEPTH * 52] = table(0x5e12);
/// Zobrist values by `deal * 52 + card` for the cards a pile will be dealt.
static FUTURE_Z: [u64; MAX_DEALS_LEFT * 52] = table(0x5e13);
/// Zobrist values by the number of deals left.
static DEALS_Z: [u64; MAX_DEALS_LEFT + 1] = table(0x5e14);
/// Zobrist values by depth for frozen reserve cards (the reserve is named by
/// its share of the key, [`ReelSearch::frozen_token_of_build`]).
static FROZEN_Z: [u64; PILE_DEPTH] = table(0x5e15);

/// The base rank of a row: 2, 3 or 4.
const fn base_rank(row: usize) -> u8 {
    row as u8 + 2
}

/// The row a base card belongs in, or `None` for other ranks.
const fn home_row(card: Card) -> Option<usize> {
    match card.rank() {
        2..=4 => Some(card.rank() as usize - 2),
        _ => None,
    }
}

/// The card a card of rank 5 or more builds on: same suit, three ranks lower.
fn parent(card: Card) -> Option<Card> {
    (card.rank() >= 5).then(|| Card::new(card.suit(), card.rank() - 3))
}

/// A misplaced card's class: its row and the card. Positions of one class
/// are interchangeable (the key ignores columns).
fn class_of(row: usize, card: Card) -> u8 {
    (row * 52 + card.index()) as u8
}

/// Which pruning rules and safe moves the search uses. Each is sound on its
/// own (see the module docs); switching one off is for the tests that check
/// exactly that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pruning {
    /// Play a build onto the last free parent at once, alone.
    pub safe_builds: bool,
    /// Play the release of a row's last misplaced card at once, alone.
    pub safe_releases: bool,
    /// A move passed over for a later sibling is frozen.
    pub freeze_passed_moves: bool,
    /// Declare a position lost when the relaxed game cannot win it.
    pub relaxation: bool,
    /// Declare a position lost when the precedence counts forbid it.
    pub precedence: bool,
    /// In the precedence counts, also match the copies of a card to the
    /// parents they go onto and a row's gaps to the base cards that fill
    /// them (module docs, "The matchings").
    pub matchings: bool,
    /// In the precedence counts, also order the cards of the deals to come
    /// against the cards of the piles they land on (module docs, "The
    /// deals in the counts").
    pub deal_order: bool,
    /// In the precedence counts, also put each card the relaxation cannot
    /// bring home before a deal after that deal (module docs, "The
    /// relaxation's deals in the counts").
    pub relaxed_deals: bool,
    /// Declare a position lost when an earlier pass or round of the same
    /// search proved it lost under no more freezes.
    pub lost_table: bool,
}

impl Pruning {
    /// Every rule on: what the solver uses.
    pub const ALL: Pruning = Pruning {
        safe_builds: true,
        safe_releases: true,
        freeze_passed_moves: true,
        relaxation: true,
        precedence: true,
        matchings: true,
        deal_order: true,
        relaxed_deals: true,
        lost_table: true,
    };
    /// Every rule off: the search still uses its key and move generation.
    pub const NONE: Pruning = Pruning {
        safe_builds: false,
        safe_releases: false,
        freeze_passed_moves: false,
        relaxation: false,
        precedence: false,
        matchings: false,
        deal_order: false,
        relaxed_deals: false,
        lost_table: false,
    };
}

/// What the rows hold, kept up to date move by move for move generation.
#[derive(Clone, Debug)]
struct Rows {
    /// Each position's home pile top (a card index), or [`NOT_HOME`].
    top: [u8; POSITIONS],
    /// How many home piles have this card on top.
    tops: [u8; 52],
    /// The positions whose home pile has this card on top.
    top_at: [u32; 52],
    /// How many copies of this card lie on home piles.
    copies: [u8; 52],
    /// Misplaced positions of each row, as bit sets.
    misplaced: [u32; ROWS],
}

impl Rows {
    fn new() -> Rows {
        Rows {
            top: [NOT_HOME; POSITIONS],
            tops: [0; 52],
            top_at: [0; 52],
            copies: [0; 52],
            misplaced: [0; ROWS],
        }
    }

    /// Takes position `position` out of the counts.
    fn forget(&mut self, position: usize) {
        let row = position / COLUMNS;
        self.misplaced[row] &= !(1 << position);
        let top = self.top[position];
        if top == NOT_HOME {
            return;
        }
        let top = usize::from(top);
        self.tops[top] -= 1;
        self.top_at[top] &= !(1 << position);
        // A home pile is its base and every third card of the suit up to its top.
        let mut card = top;
        loop {
            self.copies[card] -= 1;
            if card % 13 + 1 == usize::from(base_rank(row)) {
                break;
            }
            card -= 3;
        }
        self.top[position] = NOT_HOME;
    }

    /// Counts position `position`, which holds `cards`.
    fn learn(&mut self, position: usize, cards: &[Card]) {
        let row = position / COLUMNS;
        match (cards.first(), cards.last()) {
            (Some(bottom), Some(top)) if bottom.rank() == base_rank(row) => {
                for card in cards {
                    self.copies[card.index()] += 1;
                }
                self.tops[top.index()] += 1;
                self.top_at[top.index()] |= 1 << position;
                self.top[position] = top.index() as u8;
            }
            (Some(_), _) => self.misplaced[row] |= 1 << position,
            _ => {}
        }
    }

    /// A home pile with `card` on top, if any.
    fn pile_topped_by(&self, card: Card) -> Option<u8> {
        let at = self.top_at[card.index()];
        (at != 0).then(|| at.trailing_zeros() as u8)
    }
}

/// `pile` of a frozen swap, which takes no reserve card.
const NO_PILE: u8 = u8::MAX;
/// The longest chain whose refusal is remembered; longer ones are rare and
/// stay unfrozen (freezing less is always sound).
const FROZEN_CHAIN: usize = 3;
/// The most moves frozen at once; past it, further ones are not frozen.
const MAX_FROZEN_MOVES: usize = 48;

/// A release or swap passed over, by card classes so that it covers every
/// copy it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FrozenMove {
    /// The released card's class, or a swap's lower card's class.
    class: u8,
    /// The fillers' classes in chain order, or a swap partner's class.
    partners: [u8; FROZEN_CHAIN],
    n_partners: u8,
    /// The reserve that ends the chain, or [`NO_PILE`] for a swap.
    pile: u8,
    /// The depth of that reserve's top card when the move was passed over.
    depth: u8,
    /// Whether the freeze ends when the other copy of the card goes home.
    lifts: bool,
}

impl FrozenMove {
    fn share(&self) -> u64 {
        let mut bytes = [0u8; 8];
        bytes[0] = self.class;
        bytes[1..4].copy_from_slice(&self.partners);
        bytes[4] = self.n_partners;
        bytes[5] = self.pile;
        bytes[6] = self.depth;
        mix64(u64::from_le_bytes(bytes) ^ 0x5e17_0000_0000_0000)
    }
}

/// Every freeze in force.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Frozen {
    /// Reserve cards that may not be built: bit `depth` of `builds[pile]`.
    builds: [u16; RESERVES],
    /// Releases and swaps that may not be played.
    moves: ArrayVec<FrozenMove, MAX_FROZEN_MOVES>,
}

/// One position proved lost, in [`LostTable::entries`].
#[derive(Clone, Copy, Debug)]
struct LostEntry {
    /// Its freezes are `LostTable::tokens[first..first + len]`, sorted.
    first: u32,
    len: u32,
    /// The next entry with the same key without freezes, or `u32::MAX`.
    next: u32,
}

/// Positions proved lost by any pass or round of one search, keyed without
/// what is frozen, each with the freezes it was proved lost under (module
/// docs, "Positions proved lost").
#[derive(Debug, Default)]
struct LostTable {
    /// The newest entry for each key without freezes.
    heads: FxHashMap<u64, u32>,
    entries: Vec<LostEntry>,
    /// Every entry's freezes as tokens ([`ReelSearch::frozen_tokens`]).
    tokens: Vec<u64>,
}

impl LostTable {
    /// Whether some entry for `key` was proved lost under a sub-multiset of
    /// `tokens` (sorted).
    fn covers(&self, key: u64, tokens: &[u64]) -> bool {
        let mut at = self.heads.get(&key).copied().unwrap_or(u32::MAX);
        while let Some(entry) = self.entries.get(at as usize) {
            let first = entry.first as usize;
            let proved = &self.tokens[first..first + entry.len as usize];
            if is_sub_multiset(proved, tokens) {
                return true;
            }
            at = entry.next;
        }
        false
    }

    /// Whether any entry has `key`.
    fn has(&self, key: u64) -> bool {
        self.heads.contains_key(&key)
    }

    fn insert(&mut self, key: u64, tokens: &[u64]) {
        let at = self.entries.len() as u32;
        let next = self.heads.insert(key, at).unwrap_or(u32::MAX);
        self.entries.push(LostEntry {
            first: self.tokens.len() as u32,
            len: tokens.len() as u32,
            next,
        });
        self.tokens.extend_from_slice(tokens);
    }
}

/// Whether every value of sorted `small` appears in sorted `large`, as
/// often or more.
fn is_sub_multiset(small: &[u64], large: &[u64]) -> bool {
    let mut large = large.iter();
    small
        .iter()
        .all(|&value| large.by_ref().any(|&other| other == value))
}

/// A Virginia Reel position with what the solver keeps up to date beside it:
/// the key's shares, the rows' counts and what is frozen.
#[derive(Clone, Debug)]
pub struct ReelSearch {
    state: VirginiaReel,
    /// Each row position's share of the key.
    position_shares: [u64; POSITIONS],
    /// Each reserve pile's share of the key (contents mixed with future).
    pile_shares: [u64; RESERVES],
    /// `futures[pile][deals_left]`: the hash of the cards the remaining deals
    /// put on that pile, computed once from the stock.
    futures: [[u64; MAX_DEALS_LEFT + 1]; RESERVES],
    /// What is frozen (module docs).
    frozen: Frozen,
    /// The frozen sets before each move played, for undo.
    frozen_before: Vec<Frozen>,
    /// The frozen set's share of the key.
    frozen_share: u64,
    /// The sum of every share.
    key: u64,
    rows: Rows,
    /// Room for the move list `apply` rebuilds to know what it passes over.
    scratch: Vec<ReelMove>,
    pruning: Pruning,
    /// Limited-discrepancy passes before the full search.
    passes: u32,
    /// Positions per unit of the restart schedule; `None` for one search.
    restart_unit: Option<u64>,
    /// The best-first phase's share of the budget, in percent, and the
    /// smallest budget it takes a share of (module docs).
    best_first_percent: u64,
    best_first_from: u64,
    /// Breaks ties in the move order; 0 in the first round of a search.
    round_salt: u64,
    /// Positions proved lost, shared by every clone of this search: the
    /// passes and rounds of one `solve` (module docs).
    lost: Rc<RefCell<LostTable>>,
    /// The key of the last position a dead-position check proved lost:
    /// those checks read no frozen release or swap, so that loss is
    /// remembered under the frozen builds alone.
    dead_key: Cell<u64>,
    /// Whether the discrepancy passes search the endgame to the end
    /// (module docs, "The endgame in the passes").
    endgame_unlimited: bool,
}

impl ReelSearch {
    /// The search's view of `state`, with every rule on.
    pub fn new(state: VirginiaReel) -> ReelSearch {
        ReelSearch::with_pruning(state, Pruning::ALL)
    }

    /// As [`ReelSearch::new`], choosing the rules used.
    pub fn with_pruning(state: VirginiaReel, pruning: Pruning) -> ReelSearch {
        let mut futures = [[0u64; MAX_DEALS_LEFT + 1]; RESERVES];
        let stock = state.stock();
        let deals_now = stock.len() / RESERVES;
        for deals_left in 0..=deals_now.min(MAX_DEALS_LEFT) {
            // With `deals_left` deals to come, the stock is its bottom
            // `8 * deals_left` cards; deal `j` gives pile `i` the card at
            // `8 * deals_left - 1 - (8 * j + i)`.
            for (pile, future) in futures.iter_mut().enumerate() {
                let mut hash = 0u64;
                for deal in 0..deals_left {
                    let card = stock[RESERVES * deals_left - 1 - (RESERVES * deal + pile)];
                    hash ^= FUTURE_Z[deal * 52 + card.index()];
                }
                future[deals_left] = hash;
            }
        }
        let mut search = ReelSearch {
            state,
            position_shares: [0; POSITIONS],
            pile_shares: [0; RESERVES],
            futures,
            frozen: Frozen::default(),
            frozen_before: Vec::with_capacity(128),
            frozen_share: 0,
            key: 0,
            rows: Rows::new(),
            scratch: Vec::with_capacity(64),
            pruning,
            passes: DISCREPANCY_PASSES,
            restart_unit: Some(RESTART_UNIT),
            best_first_percent: BEST_FIRST_PERCENT,
            best_first_from: BEST_FIRST_FROM,
            round_salt: 0,
            lost: Rc::default(),
            dead_key: Cell::new(0),
            endgame_unlimited: true,
        };
        for position in 0..POSITIONS {
            search.position_shares[position] = search.position_share(position);
            search.rows.learn(position, search.state.position(position));
        }
        for pile in 0..RESERVES {
            search.pile_shares[pile] = search.pile_share(pile);
        }
        search.frozen_share = search.frozen_term();
        search.key = search.fresh_key();
        search
    }

    fn deals_left(&self) -> usize {
        (self.state.stock().len() / RESERVES).min(MAX_DEALS_LEFT)
    }

    /// The key computed from scratch out of the shares.
    fn fresh_key(&self) -> u64 {
        let positions = self
            .position_shares
            .iter()
            .fold(0u64, |sum, &share| sum.wrapping_add(share));
        let piles = self
            .pile_shares
            .iter()
            .fold(0u64, |sum, &share| sum.wrapping_add(share));
        positions
            .wrapping_add(piles)
            .wrapping_add(DEALS_Z[self.deals_left()])
            .wrapping_add(self.frozen_share)
    }

    fn position_share(&self, position: usize) -> u64 {
        let row = position / COLUMNS;
        let cards = self.state.position(position);
        let kind = match (cards.first(), cards.last()) {
            (Some(bottom), Some(top)) if bottom.rank() == base_rank(row) => top.index(),
            (_, Some(card)) => 52 + card.index(),
            // Positions are never empty; a share of zero keeps this total.
            _ => return 0,
        };
        POSITION_Z[row * POSITION_KINDS + kind]
    }

    fn pile_share(&self, pile: usize) -> u64 {
        let contents = self
            .state
            .reserve(pile)
            .iter()
            .enumerate()
            .fold(0u64, |hash, (depth, card)| {
                hash ^ PILE_Z[(depth % PILE_DEPTH) * 52 + card.index()]
            });
        mix64(contents ^ self.futures[pile][self.deals_left()])
    }

    /// The key's term for what is frozen: the sum of its tokens
    /// ([`ReelSearch::frozen_token_of_build`], [`ReelSearch::frozen_token_of_move`]).
    ///
    /// Each freeze names its reserve by the reserve's share of the key, not
    /// by its index. With the stock out the key treats reserves as a
    /// multiset, so two positions whose reserves are swapped share the rest
    /// of the key; freezes hashed by index would then give the same key to
    /// "r1 = 8h, r2 = Th, the 8h frozen" and "r1 = Th, r2 = 8h, the Th
    /// frozen", which differ: a win may need the one build frozen in the
    /// other. The search skips a position whose key it has seen, so such a
    /// collision could skip a winnable position and prove a deal lost
    /// falsely. Named by share, a freeze moves with its reserve, and two
    /// reserves with the same share are interchangeable freezes and all.
    /// The tokens are added, not xored: two equal freezes count twice.
    fn frozen_term(&self) -> u64 {
        let mut term = 0u64;
        for (pile, &bits) in self.frozen.builds.iter().enumerate() {
            let mut rest = bits;
            while rest != 0 {
                let depth = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                term = term.wrapping_add(self.frozen_token_of_build(pile, depth));
            }
        }
        self.frozen.moves.iter().fold(term, |sum, frozen| {
            sum.wrapping_add(self.frozen_token_of_move(frozen))
        })
    }

    /// A frozen build's token: its depth in a reserve named by its share.
    fn frozen_token_of_build(&self, pile: usize, depth: usize) -> u64 {
        mix64(self.pile_shares[pile] ^ FROZEN_Z[depth])
    }

    /// A frozen release's or swap's token: its signature with the reserve
    /// named by its share rather than its index.
    fn frozen_token_of_move(&self, frozen: &FrozenMove) -> u64 {
        let pile = if frozen.pile == NO_PILE {
            0
        } else {
            self.pile_shares[usize::from(frozen.pile)]
        };
        let unnamed = FrozenMove { pile: 0, ..*frozen };
        mix64(unnamed.share() ^ pile)
    }

    fn reposition(&mut self, position: u8) {
        let position = usize::from(position);
        let share = self.position_share(position);
        self.key = self
            .key
            .wrapping_sub(self.position_shares[position])
            .wrapping_add(share);
        self.position_shares[position] = share;
        self.rows.forget(position);
        self.rows.learn(position, self.state.position(position));
    }

    fn repile(&mut self, pile: u8) {
        let pile = usize::from(pile);
        let share = self.pile_share(pile);
        self.key = self
            .key
            .wrapping_sub(self.pile_shares[pile])
            .wrapping_add(share);
        self.pile_shares[pile] = share;
    }

    /// Recomputes what `mv` changed (played or taken back): shares, key and
    /// the rows' counts.
    fn update_after(&mut self, mv: ReelMove) {
        match mv {
            ReelMove::Build { reserve, to } => {
                self.reposition(to);
                self.repile(reserve);
            }
            ReelMove::Release { from, to, chain } => {
                self.reposition(from);
                if let ReleaseTarget::Home(to) = to {
                    self.reposition(to);
                }
                for &filler in chain.fillers() {
                    self.reposition(filler);
                }
                self.repile(chain.reserve());
            }
            ReelMove::Swap { first, second } => {
                self.reposition(first);
                self.reposition(second);
            }
            ReelMove::Deal => {
                // Every pile and every future changes, and so does the deals term.
                for pile in 0..RESERVES {
                    self.pile_shares[pile] = self.pile_share(pile);
                }
                self.key = self.fresh_key();
            }
        }
    }

    /// Whether some misplaced position holds a card of class `class`.
    fn class_present(&self, class: u8) -> bool {
        let row = usize::from(class) / 52;
        let card = usize::from(class) % 52;
        let mut rest = self.rows.misplaced[row];
        while rest != 0 {
            let position = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if self.card_at(position).index() == card {
                return true;
            }
        }
        false
    }

    /// Sets what is frozen, dropping what can no longer matter (the other
    /// copy of a card is home, or a card or filler is gone), and updates
    /// the key.
    fn set_frozen(&mut self, mut frozen: Frozen) {
        for (pile, bits) in frozen.builds.iter_mut().enumerate() {
            let cards = self.state.reserve(pile);
            let mut rest = *bits;
            while rest != 0 {
                let depth = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let keep = cards
                    .get(depth)
                    .is_some_and(|card| self.rows.copies[card.index()] == 0);
                if !keep {
                    *bits &= !(1 << depth);
                }
            }
        }
        frozen.moves.retain(|frozen| {
            let card = usize::from(frozen.class) % 52;
            self.class_present(frozen.class)
                && frozen.partners[..usize::from(frozen.n_partners)]
                    .iter()
                    .all(|&partner| self.class_present(partner))
                && (frozen.pile == NO_PILE
                    || self.state.reserve(usize::from(frozen.pile)).len()
                        > usize::from(frozen.depth))
                && !(frozen.lifts && self.rows.copies[card] > 0)
        });
        self.frozen = frozen;
        // Freezes name their reserves by share, so the term changes with the
        // piles the move touched even when the freezes do not.
        let term = self.frozen_term();
        self.key = self.key.wrapping_sub(self.frozen_share).wrapping_add(term);
        self.frozen_share = term;
    }

    /// What is frozen as a sorted multiset of tokens that do not depend on
    /// which reserve is which: a frozen build or release names its reserve
    /// by the reserve's share of the key (its contents and future), as the
    /// key does, rather than by its index. Two positions with the same key
    /// without freezes and the same tokens have the same freezes up to the
    /// key's symmetries.
    fn frozen_tokens(&self, with_moves: bool, tokens: &mut Vec<u64>) {
        tokens.clear();
        for (pile, &bits) in self.frozen.builds.iter().enumerate() {
            let mut rest = bits;
            while rest != 0 {
                let depth = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                tokens.push(self.frozen_token_of_build(pile, depth));
            }
        }
        if with_moves {
            for frozen in &self.frozen.moves {
                tokens.push(self.frozen_token_of_move(frozen));
            }
        }
        tokens.sort_unstable();
    }

    /// The key without its term for what is frozen.
    fn unfrozen_key(&self) -> u64 {
        self.key.wrapping_sub(self.frozen_share)
    }

    /// Whether an earlier pass or round proved this position lost under a
    /// subset of what is frozen now.
    fn is_known_lost(&self) -> bool {
        let lost = self.lost.borrow();
        let key = self.unfrozen_key();
        if !lost.has(key) {
            return false;
        }
        let mut tokens = Vec::with_capacity(self.frozen.moves.len() + 16);
        self.frozen_tokens(true, &mut tokens);
        lost.covers(key, &tokens)
    }

    /// Whether the top card of `pile` is frozen.
    fn top_frozen(&self, pile: usize) -> bool {
        let len = self.state.reserve(pile).len();
        len > 0 && self.frozen.builds[pile] & (1 << (len - 1)) != 0
    }

    /// What freezing `mv` records, if it is a release or swap that can be
    /// frozen.
    fn signature(&self, mv: ReelMove) -> Option<FrozenMove> {
        match mv {
            ReelMove::Release { from, chain, .. } => {
                let from = usize::from(from);
                let card = self.card_at(from);
                let fillers = chain.fillers();
                if fillers.len() > FROZEN_CHAIN {
                    return None;
                }
                let mut partners = [0u8; FROZEN_CHAIN];
                for (partner, &filler) in partners.iter_mut().zip(fillers) {
                    let filler = usize::from(filler);
                    *partner = class_of(filler / COLUMNS, self.card_at(filler));
                }
                let pile = chain.reserve();
                Some(FrozenMove {
                    class: class_of(from / COLUMNS, card),
                    partners,
                    n_partners: fillers.len() as u8,
                    pile,
                    depth: (self.state.reserve(usize::from(pile)).len().max(1) - 1) as u8,
                    lifts: card.rank() != ACE && self.rows.copies[card.index()] == 0,
                })
            }
            ReelMove::Swap { first, second } => {
                let (first, second) = (usize::from(first), usize::from(second));
                Some(FrozenMove {
                    class: class_of(first / COLUMNS, self.card_at(first)),
                    partners: [class_of(second / COLUMNS, self.card_at(second)), 0, 0],
                    n_partners: 1,
                    pile: NO_PILE,
                    depth: 0,
                    lifts: false,
                })
            }
            ReelMove::Build { .. } | ReelMove::Deal => None,
        }
    }

    /// Whether `mv` is frozen.
    fn is_frozen(&self, mv: ReelMove) -> bool {
        self.signature(mv)
            .is_some_and(|signature| self.frozen.moves.contains(&signature))
    }

    /// What is frozen after `mv` is played from here: every move the search
    /// tries before `mv` (module docs). A safe build is the only move tried,
    /// so it freezes nothing.
    fn frozen_after(&self, mv: ReelMove, siblings: &mut Vec<ReelMove>) -> Frozen {
        let mut frozen = self.frozen.clone();
        if !self.pruning.freeze_passed_moves || self.moves_in_order(siblings) {
            return frozen;
        }
        for &sibling in siblings.iter() {
            if sibling == mv {
                break;
            }
            match sibling {
                ReelMove::Build { reserve, .. } => {
                    let pile = usize::from(reserve);
                    let depth = self.state.reserve(pile).len() - 1;
                    frozen.builds[pile] |= 1 << depth;
                }
                _ => {
                    if let Some(signature) = self.signature(sibling) {
                        let _ = frozen.moves.try_push(signature);
                    }
                }
            }
        }
        frozen
    }

    /// The misplaced card at `position`, which the caller knows is misplaced.
    fn card_at(&self, position: usize) -> Card {
        self.state.position(position)[0]
    }

    /// The positions of `set` (a misplaced set within one row) that hold a
    /// card not held by a lower position of the set: one per distinct card.
    fn distinct_cards(&self, set: u32) -> u32 {
        let mut seen = 0u64;
        let mut kept = 0u32;
        let mut rest = set;
        while rest != 0 {
            let position = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let bit = 1u64 << self.card_at(position).index();
            if seen & bit == 0 {
                seen |= bit;
                kept |= 1 << position;
            }
        }
        kept
    }

    /// Where the misplaced card at `from` can go: onto a home pile, or the
    /// discard for an Ace; `None` if nowhere yet.
    fn release_target(&self, from: usize) -> Option<ReleaseTarget> {
        let card = self.card_at(from);
        if card.rank() == ACE {
            return Some(ReleaseTarget::Discard);
        }
        parent(card)
            .and_then(|parent| self.rows.pile_topped_by(parent))
            .map(ReleaseTarget::Home)
    }

    /// Visits every chain filling a gap in `gap_row` once per distinct
    /// outcome: each reserve whose top is the row's base rank, then each
    /// distinct misplaced base card of that rank in another row (the first
    /// position not yet in the chain stands for its copies).
    fn visit_chains(
        &self,
        gap_row: usize,
        used: u32,
        fillers: &mut Vec<u8>,
        visit: &mut impl FnMut(&[u8], u8),
    ) {
        for pile in 0..RESERVES {
            if self
                .state
                .reserve(pile)
                .last()
                .is_some_and(|card| card.rank() == base_rank(gap_row))
            {
                visit(fillers, pile as u8);
            }
        }
        if fillers.len() == MAX_FILLERS {
            return;
        }
        for row in (0..ROWS).filter(|&row| row != gap_row) {
            let mut seen = 0u64;
            let mut rest = self.rows.misplaced[row] & !used;
            while rest != 0 {
                let position = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let card = self.card_at(position);
                if card.rank() != base_rank(gap_row) || seen & (1u64 << card.index()) != 0 {
                    continue;
                }
                seen |= 1u64 << card.index();
                fillers.push(position as u8);
                self.visit_chains(row, used | 1 << position, fillers, visit);
                fillers.pop();
            }
        }
    }

    /// Pushes every release not frozen, in the search's order: chains
    /// through fillers first (longest first), then straight from a reserve.
    fn releases(&self, moves: &mut Vec<ReelMove>) {
        let first = moves.len();
        let mut fillers = Vec::with_capacity(8);
        for row in 0..ROWS {
            let mut rest = self.distinct_cards(self.rows.misplaced[row]);
            while rest != 0 {
                let from = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let Some(to) = self.release_target(from) else {
                    continue;
                };
                self.visit_chains(row, 1 << from, &mut fillers, &mut |chain, pile| {
                    if let Some(chain) = FillChain::new(chain, pile) {
                        let mv = ReelMove::Release {
                            from: from as u8,
                            to,
                            chain,
                        };
                        if !self.is_frozen(mv) {
                            moves.push(mv);
                        }
                    }
                });
            }
        }
        // Stable: within a length, the generation order stays.
        moves[first..].sort_by_key(|mv| match mv {
            ReelMove::Release { chain, .. } => std::cmp::Reverse(chain.fillers().len()),
            _ => std::cmp::Reverse(0),
        });
    }

    /// Pushes every swap not frozen: a card class per row stands for its copies.
    fn swaps(&self, moves: &mut Vec<ReelMove>) {
        for row in 0..ROWS {
            let mut rest = self.distinct_cards(self.rows.misplaced[row]);
            while rest != 0 {
                let first = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let Some(belongs) = home_row(self.card_at(first)) else {
                    continue;
                };
                if belongs <= row {
                    continue; // each pair of rows once, from its lower row
                }
                let mut partners = self.distinct_cards(self.rows.misplaced[belongs]);
                while partners != 0 {
                    let second = partners.trailing_zeros() as usize;
                    partners &= partners - 1;
                    if self.card_at(second).rank() == base_rank(row) {
                        let mv = ReelMove::Swap {
                            first: first as u8,
                            second: second as u8,
                        };
                        if !self.is_frozen(mv) {
                            moves.push(mv);
                        }
                    }
                }
            }
        }
    }

    /// The release of a row's last misplaced card, when nothing competes for
    /// its target and the one filler left for the row shows on a reserve
    /// (module docs).
    fn safe_release(&self) -> Option<ReelMove> {
        for row in 0..ROWS {
            let misplaced = self.rows.misplaced[row];
            if misplaced.count_ones() != 1 {
                continue;
            }
            let from = misplaced.trailing_zeros() as usize;
            let card = self.card_at(from);
            let uncontested = card.rank() == ACE
                || parent(card).is_some_and(|parent| self.rows.copies[parent.index()] == 2);
            if !uncontested {
                continue;
            }
            let Some(to) = self.release_target(from) else {
                continue;
            };
            let Some(pile) = (0..RESERVES).find(|&pile| {
                self.state
                    .reserve(pile)
                    .last()
                    .is_some_and(|top| top.rank() == base_rank(row))
            }) else {
                continue;
            };
            let mv = ReelMove::Release {
                from: from as u8,
                to,
                chain: FillChain::from_reserve(pile as u8),
            };
            if !self.is_frozen(mv) {
                return Some(mv);
            }
        }
        None
    }

    /// Fills `moves` with the moves worth trying, in the search's order:
    /// builds by reserve, releases, swaps, the deal. Returns `true` when it is
    /// a single safe build instead.
    fn moves_in_order(&self, moves: &mut Vec<ReelMove>) -> bool {
        moves.clear();
        let mut safe = None;
        for pile in 0..RESERVES {
            let Some(&card) = self.state.reserve(pile).last() else {
                continue;
            };
            let Some(parent) = parent(card) else { continue };
            let Some(to) = self.rows.pile_topped_by(parent) else {
                continue;
            };
            if self.top_frozen(pile) {
                continue;
            }
            let mv = ReelMove::Build {
                reserve: pile as u8,
                to,
            };
            let cards = self.state.reserve(pile);
            if self.pruning.safe_builds
                && (self.rows.copies[parent.index()] == 2
                    || cards[..cards.len() - 1].contains(&card))
            {
                safe = Some(mv);
                break;
            }
            moves.push(mv);
        }
        if safe.is_none() && self.pruning.safe_releases {
            safe = self.safe_release();
        }
        if let Some(mv) = safe {
            moves.clear();
            moves.push(mv);
            return true;
        }
        self.releases(moves);
        self.swaps(moves);
        if self.round_salt == 0 {
            // Stable: within a score, the order above stays.
            moves.sort_by_key(|&mv| std::cmp::Reverse(self.exposure(mv)));
        }
        if self.round_salt != 0 {
            let salt = self.key ^ self.round_salt;
            moves.sort_by_cached_key(|&mv| {
                let mut hasher = rustc_hash::FxHasher::default();
                mv.hash(&mut hasher);
                mix64(salt ^ hasher.finish())
            });
        }
        if !self.state.stock().is_empty() {
            moves.push(ReelMove::Deal);
        }
        false
    }

    /// How promising the card `mv` uncovers on a reserve is: one that can
    /// go home at once or leaves by itself (an Ace) 3, a base card 2,
    /// anything else (or nothing) 1.
    fn exposure(&self, mv: ReelMove) -> u8 {
        let pile = match mv {
            ReelMove::Build { reserve, .. } => reserve,
            ReelMove::Release { chain, .. } => chain.reserve(),
            ReelMove::Swap { .. } | ReelMove::Deal => return 1,
        };
        let cards = self.state.reserve(usize::from(pile));
        let Some(&under) = cards
            .len()
            .checked_sub(2)
            .and_then(|below| cards.get(below))
        else {
            return 1;
        };
        if under.rank() == ACE
            || parent(under).is_some_and(|parent| self.rows.pile_topped_by(parent).is_some())
        {
            3
        } else if home_row(under).is_some() {
            2
        } else {
            1
        }
    }

    /// Whether the precedence counts of the module docs prove the position
    /// lost: some card must wait for itself, or must wait for more arrivals
    /// into a row than that row has other gaps to take them.
    fn is_dead_by_precedence(&self) -> bool {
        let mut relaxed: RelaxedBefore = [[0; 52]; MAX_DEALS_LEFT];
        let read = self.pruning.relaxed_deals && !self.relax(Some(&mut relaxed));
        self.is_dead_by_precedence_given(read.then_some(&relaxed))
    }

    /// [`ReelSearch::is_dead_by_precedence`], given what the relaxation
    /// brings home before each deal (`None`: not read).
    fn is_dead_by_precedence_given(&self, relaxed: Option<&RelaxedBefore>) -> bool {
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

    /// The best-first score (module docs, "Best-first phase"): fewer
    /// cards on the reserves and fewer misplaced cards are better, and a
    /// reserve top that can be used at once is worth a little.
    fn best_first_score_now(&self) -> i64 {
        // Rows with a misplaced card that could leave now if a base card
        // of the row filled its gap.
        let mut gap_ready = [false; ROWS];
        for (row, ready) in gap_ready.iter_mut().enumerate() {
            let mut rest = self.rows.misplaced[row];
            while rest != 0 {
                let position = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if self.release_target(position).is_some() {
                    *ready = true;
                    break;
                }
            }
        }
        let (mut reserve_cards, mut usable_tops) = (0i64, 0i64);
        for pile in 0..RESERVES {
            let cards = self.state.reserve(pile);
            reserve_cards += cards.len() as i64;
            let usable = cards.last().is_some_and(|&top| match home_row(top) {
                Some(row) => gap_ready[row],
                None => {
                    parent(top).is_some_and(|parent| self.rows.pile_topped_by(parent).is_some())
                }
            });
            usable_tops += i64::from(usable);
        }
        let misplaced: i64 = self
            .rows
            .misplaced
            .iter()
            .map(|set| i64::from(set.count_ones()))
            .sum();
        -WEIGHT_RESERVE_CARD * reserve_cards - WEIGHT_MISPLACED * misplaced
            + WEIGHT_USABLE_TOP * usable_tops
    }

    /// Whether the relaxed game of the module docs cannot bring every card
    /// home, which proves the position lost.
    #[cfg(test)]
    fn is_dead(&self) -> bool {
        self.relax(None)
    }

    /// The relaxation: whether it leaves a card out (the position is
    /// lost), and, into `before`, how many copies of each card it brings
    /// home beyond those home now before each deal to come (module docs,
    /// "The relaxation's deals in the counts").
    fn relax(&self, mut before: Option<&mut RelaxedBefore>) -> bool {
        /// A reserve pile in the relaxation: room for its cards and ten deals.
        struct Pile {
            cards: [Card; 24],
            len: usize,
            frozen: u32,
        }
        // Copies of each card on home piles, really (fixed) and in the relaxation.
        let mut really_home = [0u8; 52];
        let mut misplaced: [(Card, usize); POSITIONS] = [(NO_CARD, 0); POSITIONS];
        let mut n_misplaced = 0;
        // `bases_in[row][belongs]`: misplaced base cards of row `belongs` lying in `row`.
        let mut bases_in = [[0u8; ROWS]; ROWS];
        for position in 0..POSITIONS {
            let row = position / COLUMNS;
            let cards = self.state.position(position);
            match cards.first() {
                Some(bottom) if bottom.rank() == base_rank(row) => {
                    for card in cards {
                        really_home[card.index()] += 1;
                    }
                }
                Some(&card) => {
                    misplaced[n_misplaced] = (card, row);
                    n_misplaced += 1;
                    if let Some(belongs) = home_row(card) {
                        bases_in[row][belongs] += 1;
                    }
                }
                None => {}
            }
        }
        let mut home = really_home;
        let mut piles: [Pile; RESERVES] = std::array::from_fn(|pile| {
            let contents = self.state.reserve(pile);
            let mut cards = [NO_CARD; 24];
            cards[..contents.len()].copy_from_slice(contents);
            Pile {
                cards,
                len: contents.len(),
                frozen: u32::from(self.frozen.builds[pile]),
            }
        });
        // Rows where some misplaced card has gone home, opening a gap.
        let mut open = [false; ROWS];
        // Rows whose base rank has shown on a relaxed reserve top.
        let mut exposed = [false; ROWS];
        let parent_free = |card: Card, home: &[u8; 52]| {
            parent(card).is_some_and(|parent| home[parent.index()] > really_home[card.index()])
        };
        let stock = self.state.stock();
        let deals_left = stock.len() / RESERVES;
        for deal in 0..=deals_left {
            if deal > 0 {
                let next = deal - 1;
                for (index, pile) in piles.iter_mut().enumerate() {
                    let card = stock[RESERVES * deals_left - 1 - (RESERVES * next + index)];
                    if pile.len < pile.cards.len() {
                        pile.cards[pile.len] = card;
                        pile.len += 1;
                    }
                }
            }
            loop {
                let mut changed = false;
                for pile in &piles {
                    if let Some(row) = pile
                        .len
                        .checked_sub(1)
                        .and_then(|top| home_row(pile.cards[top]))
                    {
                        exposed[row] = true;
                    }
                }
                // A gap in a row can be filled from an exposed base card, or
                // through a misplaced base card whose own row can be filled.
                let mut fillable = exposed;
                for _ in 0..ROWS {
                    for row in 0..ROWS {
                        for via in 0..ROWS {
                            if bases_in[via][row] > 0 && fillable[via] {
                                fillable[row] = true;
                            }
                        }
                    }
                }
                let mut index = 0;
                while index < n_misplaced {
                    let (card, row) = misplaced[index];
                    let goes = if card.rank() == ACE {
                        fillable[row]
                    } else if let Some(belongs) = home_row(card) {
                        open[belongs] || bases_in[belongs][row] > 0
                    } else {
                        fillable[row] && parent_free(card, &home)
                    };
                    if goes {
                        home[card.index()] += 1;
                        open[row] = true;
                        n_misplaced -= 1;
                        misplaced[index] = misplaced[n_misplaced];
                        changed = true;
                    } else {
                        index += 1;
                    }
                }
                for pile in &mut piles {
                    while let Some(top) = pile.len.checked_sub(1) {
                        let card = pile.cards[top];
                        let goes = card.rank() == ACE
                            || match home_row(card) {
                                Some(row) => open[row],
                                // A frozen card waits for its other copy,
                                // which takes one parent: it needs both.
                                None if pile.frozen & (1 << top) != 0 => {
                                    home[card.index()] > really_home[card.index()]
                                        && parent(card)
                                            .is_some_and(|parent| home[parent.index()] >= 2)
                                }
                                None => parent_free(card, &home),
                            };
                        if !goes {
                            break;
                        }
                        pile.len = top;
                        // The next deal may put a card at this depth: the
                        // freeze was on the card that left, not on the depth.
                        pile.frozen &= !(1 << top);
                        home[card.index()] += 1;
                        changed = true;
                        if let Some(row) = top
                            .checked_sub(1)
                            .and_then(|below| home_row(pile.cards[below]))
                        {
                            exposed[row] = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
            // What the real game can have home before the next deal.
            if deal < deals_left
                && let Some(before) = before.as_deref_mut()
                && let Some(slot) = before.get_mut(deal)
            {
                for (gained, (&now, &really)) in slot.iter_mut().zip(home.iter().zip(&really_home))
                {
                    *gained = now - really;
                }
            }
        }
        n_misplaced > 0 || piles.iter().any(|pile| pile.len > 0)
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

/// How many copies of each card the relaxation brings home, beyond those
/// home now, before each deal to come (index 0: before the next deal), for
/// the precedence counts (module docs, "The relaxation's deals in the
/// counts").
type RelaxedBefore = [[u8; 52]; MAX_DEALS_LEFT];

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

impl SolverGame for ReelSearch {
    type Game = VirginiaReel;

    fn state(&self) -> &VirginiaReel {
        &self.state
    }

    fn apply(&mut self, mv: ReelMove) -> Result<Outcome, MoveError> {
        let mut siblings = std::mem::take(&mut self.scratch);
        let frozen = self.frozen_after(mv, &mut siblings);
        self.scratch = siblings;
        let outcome = self.state.apply(mv)?;
        self.update_after(mv);
        self.frozen_before.push(self.frozen.clone());
        self.set_frozen(frozen);
        Ok(outcome)
    }

    fn undo(&mut self, mv: ReelMove, outcome: &Outcome) {
        self.state.undo(mv, outcome);
        self.update_after(mv);
        let frozen = self.frozen_before.pop().unwrap_or_default();
        self.set_frozen(frozen);
    }

    fn canonical_key(&self) -> u64 {
        self.key
    }

    fn discrepancy_passes(&self) -> u32 {
        self.passes
    }

    fn discrepancy_budget(&self, budget: u64) -> u64 {
        budget / 100 * DISCREPANCY_SHARE_PERCENT
    }

    fn best_first_budget(&self, budget: u64) -> u64 {
        if budget < self.best_first_from {
            return 0;
        }
        // Budgets are far below u64::MAX / 100.
        budget.saturating_mul(self.best_first_percent.min(100)) / 100
    }

    fn best_first_score(&self, _depth: u32) -> i64 {
        self.best_first_score_now()
    }

    fn restart_unit(&self, _budget: u64) -> Option<u64> {
        self.restart_unit
    }

    fn unlimited_below(&self) -> bool {
        self.endgame_unlimited && self.state.stock().is_empty()
    }

    fn set_round(&mut self, round: u64) {
        self.round_salt = if round == 0 { 0 } else { mix64(round) };
    }

    fn proved_lost(&mut self) {
        if !self.pruning.lost_table {
            return;
        }
        let key = self.unfrozen_key();
        let mut tokens = Vec::with_capacity(self.frozen.moves.len() + 16);
        self.frozen_tokens(self.dead_key.get() != self.key, &mut tokens);
        let mut lost = self.lost.borrow_mut();
        if !lost.covers(key, &tokens) {
            lost.insert(key, &tokens);
        }
    }

    fn search_moves(&self, moves: &mut Vec<ReelMove>) {
        moves.clear();
        if self.state.is_won() {
            return;
        }
        if self.pruning.lost_table && self.is_known_lost() {
            return;
        }
        let dead = if self.pruning.relaxation {
            let mut relaxed: RelaxedBefore = [[0; 52]; MAX_DEALS_LEFT];
            self.relax(Some(&mut relaxed))
                || (self.pruning.precedence
                    && self.is_dead_by_precedence_given(
                        self.pruning.relaxed_deals.then_some(&relaxed),
                    ))
        } else {
            self.pruning.precedence && self.is_dead_by_precedence()
        };
        if dead {
            self.dead_key.set(self.key);
        } else {
            self.moves_in_order(moves);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;
    use crate::conformance::TestRng;
    use crate::solver::plain::Plain;
    use crate::solver::{Budget, Verdict, solve};

    /// A position from a fixture; a bad fixture is a bug in the test.
    fn board(fixture: &str) -> VirginiaReel {
        VirginiaReel::from_fixture(fixture)
            .unwrap_or_else(|e| panic!("bad fixture: {e}\n{fixture}"))
    }

    impl ReelSearch {
        /// The key recomputed from nothing but the position and what is frozen.
        fn key_from_scratch(&self) -> u64 {
            let mut fresh = ReelSearch::with_pruning(self.state.clone(), self.pruning);
            fresh.frozen = self.frozen.clone();
            fresh.frozen_share = fresh.frozen_term();
            fresh.key = fresh.fresh_key();
            fresh.key
        }
    }

    fn key(fixture: &str) -> u64 {
        ReelSearch::new(board(fixture)).canonical_key()
    }

    fn moves_text(search: &ReelSearch) -> String {
        let mut moves = Vec::new();
        search.search_moves(&mut moves);
        moves
            .iter()
            .map(|&mv| search.state().format_move(mv))
            .collect::<Vec<_>>()
            .join(" ")
    }

    // ---- Test positions ----

    /// A position from the deal of `seed` with `deals_left` deals to come,
    /// reached by the search's own first moves with a random one now and then.
    fn played_position(seed: u64, deals_left: usize) -> VirginiaReel {
        let mut rng = TestRng::new(seed);
        let mut search = ReelSearch::new(VirginiaReel::deal(seed));
        let mut moves = Vec::new();
        while search.state().stock().len() > deals_left * RESERVES {
            search.search_moves(&mut moves);
            let pick = if moves.len() > 1 && rng.below(3) == 0 {
                rng.below(moves.len())
            } else {
                0
            };
            let mv = moves.get(pick).copied().unwrap_or(ReelMove::Deal);
            search
                .apply(mv)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        search.state().clone()
    }

    /// Builds positions backwards from the won layout, each step the exact
    /// inverse of a legal move, so every position it returns is winnable.
    struct Unplay {
        rows: Vec<Vec<Vec<Card>>>,
        reserves: Vec<Vec<Card>>,
        stock: Vec<Card>,
        discard: Vec<Card>,
    }

    impl Unplay {
        fn won() -> Unplay {
            let rows = (0..ROWS)
                .map(|row| {
                    (0..COLUMNS)
                        .map(|column| {
                            let suit = Suit::from_index((column / 2) as u8);
                            (0..4)
                                .map(|step| Card::new(suit, base_rank(row) + 3 * step))
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let discard = (0..crate::games::virginia_reel::ACES)
                .map(|ace| Card::new(Suit::from_index((ace / 2) as u8), ACE))
                .collect();
            Unplay {
                rows,
                reserves: vec![Vec::new(); RESERVES],
                stock: Vec::new(),
                discard,
            }
        }

        fn deals_left(&self) -> usize {
            self.stock.len() / RESERVES
        }

        /// A reserve that can take one more card and still take every deal left.
        fn roomy_reserve(&self, rng: &mut TestRng) -> Option<usize> {
            let start = rng.below(RESERVES);
            (0..RESERVES)
                .map(|offset| (start + offset) % RESERVES)
                .find(|&pile| {
                    self.reserves[pile].len() + self.deals_left()
                        < crate::games::virginia_reel::RESERVE_CAPACITY
                })
        }

        /// Positions (not column 1) holding a lone home base card.
        fn lone_bases(&self) -> Vec<(usize, usize)> {
            let mut found = Vec::new();
            for row in 0..ROWS {
                for column in 1..COLUMNS {
                    let pile = &self.rows[row][column];
                    if pile.len() == 1 && pile[0].rank() == base_rank(row) {
                        found.push((row, column));
                    }
                }
            }
            found
        }

        /// One random backward step; `false` if the one tried does not apply.
        fn step(&mut self, rng: &mut TestRng) -> bool {
            match rng.below(10) {
                // Unbuild: a home pile's top card back onto a reserve.
                0..=3 => {
                    let (row, column) = (rng.below(ROWS), rng.below(COLUMNS));
                    let Some(pile) = self.roomy_reserve(rng) else {
                        return false;
                    };
                    if self.rows[row][column].len() < 2 {
                        return false;
                    }
                    let card = self.rows[row][column].pop().unwrap_or(NO_CARD);
                    self.reserves[pile].push(card);
                    true
                }
                // Unrelease: a home pile's top card (or an Ace) back into a
                // lone base card's position, the base card onto a reserve.
                4..=6 => {
                    let lone = self.lone_bases();
                    if lone.is_empty() {
                        return false;
                    }
                    let (row, column) = lone[rng.below(lone.len())];
                    let Some(pile) = self.roomy_reserve(rng) else {
                        return false;
                    };
                    let card = if rng.below(4) == 0 && !self.discard.is_empty() {
                        self.discard.pop().unwrap_or(NO_CARD)
                    } else {
                        let (from_row, from_column) = (rng.below(ROWS), rng.below(COLUMNS));
                        if (from_row, from_column) == (row, column)
                            || self.rows[from_row][from_column].len() < 2
                        {
                            return false;
                        }
                        self.rows[from_row][from_column].pop().unwrap_or(NO_CARD)
                    };
                    let base = std::mem::replace(&mut self.rows[row][column], vec![card]);
                    self.reserves[pile].extend(base);
                    true
                }
                // Unswap: two lone base cards of different rows trade places.
                7 => {
                    let lone = self.lone_bases();
                    if lone.len() < 2 {
                        return false;
                    }
                    let (first, second) =
                        (lone[rng.below(lone.len())], lone[rng.below(lone.len())]);
                    if first.0 == second.0 {
                        return false;
                    }
                    let a = std::mem::take(&mut self.rows[first.0][first.1]);
                    let b = std::mem::replace(&mut self.rows[second.0][second.1], a);
                    self.rows[first.0][first.1] = b;
                    true
                }
                // Undeal: every reserve's top card back to the stock.
                _ => {
                    if self.deals_left() >= MAX_DEALS_LEFT
                        || self.reserves.iter().any(Vec::is_empty)
                    {
                        return false;
                    }
                    for pile in (0..RESERVES).rev() {
                        let card = self.reserves[pile].pop().unwrap_or(NO_CARD);
                        self.stock.push(card);
                    }
                    true
                }
            }
        }

        fn to_state(&self) -> VirginiaReel {
            let cards = |cards: &[Card]| {
                cards
                    .iter()
                    .map(Card::to_string)
                    .collect::<Vec<_>>()
                    .join(".")
            };
            let mut text = String::new();
            for (row, label) in ["A", "B", "C"].iter().enumerate() {
                let piles: Vec<String> = self.rows[row].iter().map(|pile| cards(pile)).collect();
                text.push_str(&format!("{label}: {}\n", piles.join(" ")));
            }
            let reserves: Vec<String> = self
                .reserves
                .iter()
                .map(|pile| {
                    if pile.is_empty() {
                        "-".into()
                    } else {
                        cards(pile)
                    }
                })
                .collect();
            text.push_str(&format!("r: {}\n", reserves.join(" ")));
            let list = |cards: &[Card]| {
                cards
                    .iter()
                    .map(|card| format!(" {card}"))
                    .collect::<String>()
            };
            text.push_str(&format!(
                "s:{}\nx:{}\n",
                list(&self.stock),
                list(&self.discard)
            ));
            board(&text)
        }
    }

    /// A winnable position: `steps` backward steps from the won layout.
    fn unplayed_position(seed: u64, steps: usize) -> VirginiaReel {
        let mut rng = TestRng::new(seed);
        let mut unplay = Unplay::won();
        let mut done = 0;
        while done < steps {
            if unplay.step(&mut rng) {
                done += 1;
            }
        }
        unplay.to_state()
    }

    /// How many test positions the slow tier has: late positions of deals
    /// 1 to 1,000 and 500 built backwards from a win.
    const FULL_POSITIONS: u64 = 1500;

    /// The test positions of this run: all in the slow tier, a fifth of
    /// each kind otherwise.
    fn n_positions() -> u64 {
        crate::slow_tier::count("virginia_reel::tests::test_positions", FULL_POSITIONS, 300)
    }

    /// A floor set for all `FULL_POSITIONS` test positions, scaled to this
    /// run's.
    fn floor(at_full: usize) -> usize {
        crate::slow_tier::floor(at_full, FULL_POSITIONS, n_positions())
    }

    /// The positions the rule tests share: late positions of deals 1 to
    /// 1,000 and 500 positions built backwards from a win (in the slow tier;
    /// the same share of each otherwise).
    fn test_positions() -> &'static [(String, VirginiaReel)] {
        static POSITIONS: OnceLock<Vec<(String, VirginiaReel)>> = OnceLock::new();
        POSITIONS.get_or_init(|| {
            let mut positions = Vec::new();
            let deals = 1000 * n_positions() / FULL_POSITIONS;
            for seed in 1..=deals {
                positions.push((
                    format!("deal {seed}"),
                    played_position(seed, (seed % 2) as usize),
                ));
            }
            for seed in 1..=500 * n_positions() / FULL_POSITIONS {
                let steps = 30 + (seed as usize % 50);
                positions.push((format!("unplayed {seed}"), unplayed_position(seed, steps)));
            }
            positions
        })
    }

    // ---- Soundness of each rule ----

    /// Small, so that the suite stays fast in debug builds.
    const RULE_BUDGET: u64 = 400;

    /// The verdict of every test position with every rule on, computed once.
    fn verdicts_with_every_rule() -> &'static [Verdict<ReelMove>] {
        static VERDICTS: OnceLock<Vec<Verdict<ReelMove>>> = OnceLock::new();
        VERDICTS.get_or_init(|| {
            test_positions()
                .iter()
                .map(|(_, position)| {
                    solve(
                        &ReelSearch::new(position.clone()),
                        Budget::positions(RULE_BUDGET),
                    )
                    .expect("a line that replays")
                    .verdict
                })
                .collect()
        })
    }

    /// Solves every test position with `change` applied to a search with
    /// every rule on, and checks that no settled verdict differs from the one
    /// with every rule, that no position built backwards from a win is
    /// called lost either way, and that most positions settle both ways.
    fn check_rule(rule: &str, change: impl Fn(&mut ReelSearch)) {
        let mut compared = 0;
        for ((name, position), with) in test_positions().iter().zip(verdicts_with_every_rule()) {
            let mut search = ReelSearch::new(position.clone());
            change(&mut search);
            let without = solve(&search, Budget::positions(RULE_BUDGET))
                .expect("a line that replays")
                .verdict;
            if name.starts_with("unplayed") {
                assert_ne!(with.name(), "unwinnable", "{name} is winnable");
                assert_ne!(
                    without.name(),
                    "unwinnable",
                    "{name} is winnable, without {rule}"
                );
            }
            if with.is_settled() && without.is_settled() {
                assert_eq!(
                    with.name(),
                    without.name(),
                    "{name}, with and without {rule}"
                );
                compared += 1;
            }
        }
        assert!(
            compared >= floor(1200),
            "only {compared} positions settled both with and without {rule}"
        );
    }

    #[test]
    fn safe_builds_keep_every_verdict() {
        check_rule("safe builds", |search| search.pruning.safe_builds = false);
    }

    #[test]
    fn safe_releases_keep_every_verdict() {
        check_rule("safe releases", |search| {
            search.pruning.safe_releases = false
        });
    }

    #[test]
    fn freezing_keeps_every_verdict() {
        check_rule("freezing", |search| {
            search.pruning.freeze_passed_moves = false
        });
    }

    #[test]
    fn the_relaxation_keeps_every_verdict() {
        check_rule("the relaxation", |search| search.pruning.relaxation = false);
    }

    #[test]
    fn the_precedence_counts_keep_every_verdict() {
        check_rule("the precedence counts", |search| {
            search.pruning.precedence = false
        });
    }

    #[test]
    fn the_matchings_keep_every_verdict() {
        check_rule("the matchings", |search| search.pruning.matchings = false);
    }

    #[test]
    fn the_deals_in_the_counts_keep_every_verdict() {
        check_rule("the deals in the counts", |search| {
            search.pruning.deal_order = false
        });
    }

    #[test]
    fn the_relaxations_deals_in_the_counts_keep_every_verdict() {
        check_rule("the relaxation's deals in the counts", |search| {
            search.pruning.relaxed_deals = false
        });
    }

    #[test]
    fn the_lost_table_keeps_every_verdict() {
        check_rule("the lost table", |search| search.pruning.lost_table = false);
    }

    #[test]
    fn passes_that_search_the_endgame_to_the_end_keep_every_verdict() {
        check_rule("the passes' endgame searched to the end", |search| {
            search.endgame_unlimited = false
        });
    }

    /// The passes do search the endgame to the end: of the test positions
    /// with the stock out that are lost, many more are proved lost in fewer
    /// positions than in more when the first pass may prove the loss by
    /// itself, against every pass cut at its limit and the full search
    /// after them (most need the same either way: a position whose every
    /// line has one move, or one a dead-position check ends at once, is
    /// never cut).
    #[test]
    fn the_first_pass_proves_a_lost_endgame_by_itself() {
        let (mut sooner, mut later, mut lost) = (0, 0, 0);
        for (_, position) in test_positions()
            .iter()
            .filter(|(_, position)| position.stock().is_empty())
        {
            let solve_with = |endgame_unlimited: bool| {
                let mut search = ReelSearch::new(position.clone());
                search.endgame_unlimited = endgame_unlimited;
                search.restart_unit = None;
                // The matchings end most of these endgames at their first
                // position, where no pass has anything to cut.
                search.pruning.matchings = false;
                solve(&search, Budget::positions(RULE_BUDGET)).expect("replay")
            };
            let (with, without) = (solve_with(true), solve_with(false));
            if with.verdict == Verdict::Unwinnable && without.verdict == Verdict::Unwinnable {
                lost += 1;
                sooner += usize::from(with.positions < without.positions);
                later += usize::from(with.positions > without.positions);
            }
        }
        assert!(
            lost >= floor(100) && sooner >= floor(40) && sooner > 2 * later,
            "of {lost} losses, {sooner} proved sooner and {later} later"
        );
    }

    #[test]
    fn discrepancy_passes_keep_every_verdict() {
        check_rule("discrepancy passes", |search| search.passes = 0);
    }

    #[test]
    fn restarts_keep_every_verdict() {
        // The test budget is far below one unit of the real schedule, so the
        // searches here restart every few positions instead, which exercises
        // the shuffled orders; the check is against the search without any.
        check_rule("restarts", |search| search.restart_unit = None);
        check_rule("restarts every few positions", |search| {
            search.restart_unit = Some(64)
        });
    }

    /// The best-first phase beside the restarts (on at every budget here,
    /// on half of what the passes leave) changes the order of the search,
    /// never a verdict.
    #[test]
    fn the_best_first_phase_keeps_every_verdict() {
        check_rule("the best-first phase", |search| {
            search.best_first_from = 0;
            search.best_first_percent = 50;
        });
    }

    /// The best-first search alone proves a position lost (its queue
    /// empties) exactly when one round of the depth-first search does, after
    /// as many positions: both generate every position reachable through
    /// `search_moves` once by key, with the same freezes (module docs,
    /// "Best-first phase"). The table of lost positions is off in both, since
    /// a depth-first round fills it as it goes and so skips positions the
    /// best-first search, which never fills it, expands.
    #[test]
    fn the_best_first_search_alone_proves_the_losses_a_round_proves() {
        let solve_with = |position: &VirginiaReel, best_first_percent: u64| {
            let mut search = ReelSearch::new(position.clone());
            search.passes = 0;
            search.restart_unit = None;
            search.pruning.lost_table = false;
            search.best_first_from = 0;
            search.best_first_percent = best_first_percent;
            solve(&search, Budget::positions(RULE_BUDGET)).expect("a line that replays")
        };
        let (mut lost, mut won) = (0, 0);
        for (name, position) in test_positions() {
            let depth_first = solve_with(position, 0);
            let best_first = solve_with(position, 100);
            if depth_first.verdict == Verdict::Unwinnable
                || best_first.verdict == Verdict::Unwinnable
            {
                assert_eq!(depth_first.verdict, best_first.verdict, "{name}");
                assert_eq!(depth_first.positions, best_first.positions, "{name}");
                lost += 1;
            } else if best_first.verdict.is_settled() {
                won += 1;
            }
        }
        assert!(
            lost >= floor(800) && won >= floor(350),
            "{lost} losses, {won} wins"
        );
    }

    /// `solve` replays every line it finds through the rules and reports a
    /// line that fails as an error (`a_line_that_does_not_replay_is_reported_not_trusted`
    /// in `solver` shows it does), so the lines are counted, not replayed again.
    #[test]
    fn winning_lines_replay_through_the_rules() {
        let mut replayed = verdicts_with_every_rule()
            .iter()
            .filter(|verdict| matches!(verdict, Verdict::Winnable(_)))
            .count();
        // Whole deals too: these seeds are won within a few thousand positions.
        for seed in [8, 13, 19] {
            let deal = VirginiaReel::deal(seed);
            let verdict = solve(&ReelSearch::new(deal), Budget::positions(5_000))
                .expect("replay")
                .verdict;
            assert_eq!(verdict.name(), "winnable", "seed {seed}");
            replayed += 1;
        }
        assert!(replayed >= floor(400), "only {replayed} lines");
    }

    // ---- The key and the moves during play ----

    /// Plays `moves` random search moves from the deal of `seed` (a random
    /// legal move now and then), checking at each step that every search move
    /// is legal, that the key kept up to date equals the key computed afresh,
    /// and that a build passed over is not offered again while frozen; then
    /// takes every move back, checking the key again.
    fn play_and_take_back(seed: u64) {
        let mut rng = TestRng::new(seed);
        let mut search = ReelSearch::new(VirginiaReel::deal(seed));
        let mut played = Vec::new();
        let (mut moves, mut legal) = (Vec::new(), Vec::new());
        loop {
            search.search_moves(&mut moves);
            search.state().legal_moves(&mut legal);
            for mv in &moves {
                assert!(
                    legal.contains(mv),
                    "seed {seed}: {} is not legal",
                    search.state().format_move(*mv)
                );
            }
            let mv = if legal.is_empty() {
                break;
            } else if moves.is_empty() || rng.below(8) == 0 {
                legal[rng.below(legal.len())]
            } else {
                moves[rng.below(moves.len())]
            };
            // With, for a build, the depth of its card on its reserve.
            let passed_over: Vec<(ReelMove, usize)> = if moves.contains(&mv) && moves.len() > 1 {
                moves
                    .iter()
                    .copied()
                    .take_while(|&other| other != mv)
                    .map(|other| match other {
                        ReelMove::Build { reserve, .. } => (
                            other,
                            search.state().reserve(usize::from(reserve)).len() - 1,
                        ),
                        _ => (other, 0),
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let outcome = search
                .apply(mv)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert_eq!(
                search.canonical_key(),
                search.key_from_scratch(),
                "seed {seed} after {mv:?}"
            );
            search.search_moves(&mut moves);
            for (other, depth) in passed_over {
                // The same build may come back for a card dealt onto the
                // frozen one (its other copy), which is not frozen.
                if let ReelMove::Build { reserve, .. } = other
                    && search.frozen.builds[usize::from(reserve)] & (1 << depth) != 0
                    && search.state().reserve(usize::from(reserve)).len() == depth + 1
                {
                    assert!(
                        !moves.contains(&other),
                        "seed {seed}: frozen {other:?} offered again"
                    );
                }
                if !matches!(other, ReelMove::Build { .. }) && search.is_frozen(other) {
                    assert!(
                        !moves.contains(&other),
                        "seed {seed}: frozen {other:?} offered again"
                    );
                }
            }
            played.push((mv, outcome));
        }
        while let Some((mv, outcome)) = played.pop() {
            search.undo(mv, &outcome);
            assert_eq!(
                search.canonical_key(),
                search.key_from_scratch(),
                "seed {seed} undoing {mv:?}"
            );
        }
        assert_eq!(
            search.canonical_key(),
            ReelSearch::new(VirginiaReel::deal(seed)).canonical_key()
        );
    }

    #[test]
    fn keys_stay_fresh_and_moves_legal_through_play_and_undo() {
        for seed in 1..=40 {
            play_and_take_back(seed);
        }
    }

    const KEYED: &str = "
        A: 2h.5h Qs Kd 2c 7c 9d Ac 2s
        B: 3c 3d.6d Jh 5s 3h Td 8c Ks
        C: 4s 4d Qh 6c 9s 4h.7h 2d Jc
        r: 8h.9c Th - 5c.3s 7d 2h Qd.6h Js
        s: 9h Kc 8d 7s 6s Tc Jd Qc
    ";

    #[test]
    fn the_key_ignores_columns_within_a_row() {
        let shuffled = KEYED
            .replace(
                "A: 2h.5h Qs Kd 2c 7c 9d Ac 2s",
                "A: 2h.5h 2s Ac 9d 7c 2c Kd Qs",
            )
            .replace(
                "C: 4s 4d Qh 6c 9s 4h.7h 2d Jc",
                "C: 4s 4h.7h Jc 2d Qh 9s 6c 4d",
            );
        assert_eq!(key(KEYED), key(&shuffled));
        // Column 1 is a column like the others once it is home.
        let first = KEYED.replace(
            "B: 3c 3d.6d Jh 5s 3h Td 8c Ks",
            "B: 3d.6d 3c Jh 5s 3h Td 8c Ks",
        );
        assert_eq!(key(KEYED), key(&first));
    }

    #[test]
    fn reserve_piles_are_interchangeable_only_with_their_futures() {
        let no_stock = KEYED.replace("s: 9h Kc 8d 7s 6s Tc Jd Qc", "");
        let swapped = no_stock.replace("r: 8h.9c Th -", "r: Th 8h.9c -");
        assert_eq!(
            key(&no_stock),
            key(&swapped),
            "no stock: piles form a multiset"
        );
        // With stock, r1 will be dealt Qc and r2 Jd: swapping the piles alone
        // changes the game, swapping their futures with them does not.
        let piles_only = KEYED.replace("r: 8h.9c Th -", "r: Th 8h.9c -");
        assert_ne!(key(KEYED), key(&piles_only));
        let with_futures =
            piles_only.replace("s: 9h Kc 8d 7s 6s Tc Jd Qc", "s: 9h Kc 8d 7s 6s Tc Qc Jd");
        assert_eq!(key(KEYED), key(&with_futures));
    }

    /// `KEYED` with the stock out and a base card of row A on r1 and r2,
    /// which a release from row A could take.
    const HELD: &str = "
        A: 2h.5h Qs Kd 2c 7c 9d Ac 2s
        B: 3c 3d.6d Jh 5s 3h Td 8c Ks
        C: 4s 4d Qh 6c 9s 4h.7h 2d Jc
        r: 8h.2d Th.2h - 5c.3s 7d 9c Qd.6h Js
    ";

    /// A search of `fixture` with `frozen` in force, every freeze one that
    /// can matter (else the test would compare less than it says).
    fn with_freezes(fixture: &str, frozen: &Frozen) -> ReelSearch {
        let mut search = ReelSearch::new(board(fixture));
        search.set_frozen(frozen.clone());
        assert_eq!(&search.frozen, frozen, "a freeze that cannot matter");
        assert_eq!(search.canonical_key(), search.key_from_scratch());
        search
    }

    #[test]
    fn a_freeze_on_interchangeable_reserves_moves_with_the_reserve() {
        // The stock is out, so r1 and r2 swapped are the same position when
        // their freezes move with them, and a different one when the freezes
        // stay at the same index and so name other cards.
        let swapped = HELD.replace("r: 8h.2d Th.2h", "r: Th.2h 8h.2d");
        let build = |pile: usize, depth: usize| {
            let mut frozen = Frozen::default();
            frozen.builds[pile] |= 1 << depth;
            frozen
        };
        let queen = Card::new(Suit::Spades, 12);
        let release = |pile: u8| {
            let mut frozen = Frozen::default();
            frozen.moves.push(FrozenMove {
                class: class_of(0, queen),
                partners: [0; FROZEN_CHAIN],
                n_partners: 0,
                pile,
                depth: 1,
                lifts: true,
            });
            frozen
        };
        let cases = [
            (build(0, 0), build(1, 0), true, "the 8h frozen in both"),
            (
                build(0, 0),
                build(0, 0),
                false,
                "the 8h frozen, then the Th",
            ),
            (release(0), release(1), true, "the Qs with the 2d in both"),
            (
                release(0),
                release(0),
                false,
                "the Qs with the 2d, then the 2h",
            ),
            (build(0, 0), release(1), false, "a build, then a release"),
        ];
        let wrong: Vec<&str> = cases
            .iter()
            .filter(|(frozen, frozen_swapped, same, _)| {
                let key = with_freezes(HELD, frozen).canonical_key();
                let other = with_freezes(&swapped, frozen_swapped).canonical_key();
                (key == other) != *same
            })
            .map(|&(_, _, _, what)| what)
            .collect();
        assert!(
            wrong.is_empty(),
            "keys wrongly equal or different: {wrong:?}"
        );
    }

    #[test]
    fn the_key_tells_different_positions_apart() {
        let moved_between_rows = KEYED
            .replace("A: 2h.5h Qs Kd", "A: 2h.5h Jh Kd")
            .replace("B: 3c 3d.6d Jh", "B: 3c 3d.6d Qs");
        let reordered_pile = KEYED.replace("5c.3s", "3s.5c");
        let deeper = KEYED
            .replace("3d.6d", "3d")
            .replace("2h Qd.6h", "2h Qd.6h.6d");
        for other in [moved_between_rows, reordered_pile, deeper] {
            assert_ne!(key(KEYED), key(&other), "{other}");
        }
    }

    // ---- Safe moves, freezes and dead positions on small boards ----

    #[test]
    fn a_build_onto_the_last_free_parent_is_played_alone() {
        let fixture = "
            A: 2h.5h 2h.5h.8h 2c* 2c* 2d* 2d* 2s* 2s*
            B: 3c* 3c* 3d* 3d* 3h* 3h* 3s* 3s*
            C: 4c* 4c* 4d* 4d* 4h* 4h* 4s* 4s*
            r: Jh 8h - - - - - -
            x: Ac Ac Ad Ad Ah Ah As As
        ";
        assert_eq!(moves_of(fixture, |_| {}), "r2>A1");
        assert_eq!(
            moves_of(fixture, |pruning| pruning.safe_builds = false),
            "r1>A2 r2>A1"
        );
    }

    /// Every rule on but the dead-position checks, which would see through
    /// the small boards below (their missing cards can never come home).
    fn moves_of(fixture: &str, change: impl Fn(&mut Pruning)) -> String {
        let mut pruning = Pruning {
            relaxation: false,
            precedence: false,
            ..Pruning::ALL
        };
        change(&mut pruning);
        moves_text(&ReelSearch::with_pruning(board(fixture), pruning))
    }

    #[test]
    fn a_build_whose_other_copy_lies_under_it_is_played_alone() {
        let fixture = "
            A: 2h.5h Qs Qs Qd Qd Qc Qc Jh
            B: 3c 3c 3d 3d 3h 3h 3s 3s
            C: 4c 4c 4d 4d 4h 4h 4s 4s
            r: 8h.Kd.8h - - - - - - -
            s: Kh Kh Ks Ks Kc Kc Jd Jd
        ";
        assert_eq!(moves_of(fixture, |_| {}), "r1>A1");
        assert_eq!(
            moves_of(fixture, |pruning| pruning.safe_builds = false),
            "r1>A1 d"
        );
    }

    #[test]
    fn the_release_of_a_rows_last_misplaced_card_is_played_alone() {
        let fixture = "
            A: 2h.5h 2h.5h 2c 2c 2d 2s 2s 8h
            B: 3c 3c 3d 3d 3h 3h 3s 3s
            C: 4c 4c 4d 4d 4h 4h 4s 4s
            r: 2d 5d - - - - - -
            s: Kh Kh Kd Kd Ks Ks Kc Kc
        ";
        assert_eq!(moves_of(fixture, |_| {}), "A8>A1/r1");
        assert_eq!(
            moves_of(fixture, |pruning| pruning.safe_releases = false),
            "r2>A5 A8>A1/r1 d"
        );
    }

    #[test]
    fn a_build_passed_over_stays_frozen_until_its_other_copy_is_home() {
        // The 8h on r1 can go onto the one 5h at home; the deal comes after
        // it, so dealing freezes it. The other 8h is dealt onto r8.
        let pruning = Pruning {
            relaxation: false,
            precedence: false,
            ..Pruning::ALL
        };
        let mut search = ReelSearch::with_pruning(
            board(
                "
                A: 2h.5h Qs Qs Qd Qd Qc Qc 5h
                B: 3c 3c 3d 3d 3h 3h 3s 3s
                C: 4c 4c 4d 4d 4h 4h 4s 4s
                r: 8h 2h Jh - - - - -
                s: 8h Kd Kd Ks Ks Kc Kc Kh
                ",
            ),
            pruning,
        );
        assert_eq!(moves_text(&search), "r1>A1 d");
        search
            .apply(ReelMove::Deal)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(search.frozen.builds[0], 1, "the 8h passed over is frozen");
        assert_eq!(moves_text(&search), "r8>A1");
        search
            .apply(ReelMove::Build { reserve: 7, to: 0 })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            search.frozen.builds[0], 0,
            "its other copy is home: the freeze lifts"
        );
        assert_eq!(search.canonical_key(), search.key_from_scratch());
    }

    #[test]
    fn a_card_under_the_card_that_needs_it_is_a_dead_position() {
        let search = ReelSearch::new(board(
            "
            A: 2h 2c 2c 2d 2d 2s 2s 2h
            B: 3h 3c 3c 3d 3d 3s 3s 3h
            C: 4c 4c 4d 4d 4h 4h 4s 4s
            r: 6h.6h.9h 5h.5h - - - - - -
            ",
        ));
        assert!(search.is_dead());
        assert_eq!(moves_text(&search), "");
    }

    #[test]
    fn a_row_short_of_gaps_for_the_fillers_a_card_needs_is_a_dead_position() {
        // Js must wait for the 8s, which waits for the 5s under the 2c, which
        // waits for the other 2s: two arrivals into row A before Js leaves,
        // and only the 7h's gap to take them.
        let search = ReelSearch::new(board(
            "
            A: 2h* 2d* 7h 2d 2s* 2h.5h.8h 2c.5c Js
            B: 3d.6d.9d 3h.6h.9h 3d.6d.9d 3h.6h Jc 3c* 3s* 3s
            C: 4s* 4c.7c 4d 4h* Kd 4s.7s.Ts Qs 4c*
            r: 9c.Ks.Jd.Jc.3c Td.Qh.8d.Kd.8s.Jh Td.7d.5c.5d.4h.Tc Qc.Kh Qd.9h.7d.8c.Qh.4d.Th 8c.6c.2s.9s.Kc 6s Qd.5s.2c
            x: Ac As Ad Ah Ac Ah As Ad
            ",
        ));
        assert!(!search.is_dead(), "the relaxation alone does not see it");
        assert!(search.is_dead_by_precedence());
        assert_lost_to_the_unpruned_search(&search);
    }

    /// The search with every pruning rule off proves `search`'s position
    /// lost: what a dead-position check claims holds without it.
    fn assert_lost_to_the_unpruned_search(search: &ReelSearch) {
        let outcome = solve(
            &ReelSearch::with_pruning(search.state().clone(), Pruning::NONE),
            Budget::positions(100_000),
        );
        assert_eq!(
            outcome.map(|solution| solution.verdict.name()),
            Ok("unwinnable")
        );
    }

    /// The matchings (module docs): the 5s on top must go onto the only 2s
    /// pile that can open before the other 5s, which then has none, since
    /// the other 2s lies under it. Neither the relaxation (which lets any
    /// number of 5s onto one 2s) nor the counts without the matchings see
    /// it.
    #[test]
    fn two_copies_that_need_one_parent_pile_are_a_dead_position() {
        let mut search = ReelSearch::new(board(
            "
            A: 2c* 2c* 2d* 2d* 2h* 2h* Ad Ad
            B: 3c* 3c* 3d* 3d* 3h* 3h* 3s* 3s*
            C: 4c* 4c* 4d* 4d* 4h* 4h* 4s* 4s*
            r: 2s.5s.5s 2s Js.8s Js.8s - - - -
            x: Ac Ac Ah Ah As As
            ",
        ));
        assert!(!search.is_dead(), "the relaxation alone does not see it");
        assert!(search.is_dead_by_precedence());
        search.pruning.matchings = false;
        assert!(!search.is_dead_by_precedence(), "nor the counts alone");
        assert_lost_to_the_unpruned_search(&search);
    }

    /// The matchings prove late positions of real deals lost that the
    /// counts without them do not (and `the_matchings_keep_every_verdict`
    /// checks they change no verdict).
    #[test]
    fn the_matchings_prove_more_positions_lost() {
        let (with, without) = dead_with_and_without(
            test_positions()
                .iter()
                .map(|(_, position)| position.clone()),
            |pruning| pruning.matchings = false,
        );
        assert!(
            2 * with > 3 * without,
            "{with} dead with the matchings, {without} without"
        );
    }

    /// How many of `positions` the precedence counts call dead with every
    /// rule on, and with one switched off by `switch_off`.
    fn dead_with_and_without(
        positions: impl Iterator<Item = VirginiaReel>,
        switch_off: impl Fn(&mut Pruning),
    ) -> (usize, usize) {
        let (mut with, mut without) = (0, 0);
        for position in positions {
            let mut search = ReelSearch::new(position);
            with += usize::from(search.is_dead_by_precedence());
            switch_off(&mut search.pruning);
            without += usize::from(search.is_dead_by_precedence());
        }
        (with, without)
    }

    /// The deals in the counts (module docs): the 3s under the 8h fills
    /// the Jd's gap (the 5h's gap must take the 3d, since the 5h must go
    /// home before the 8h over the 3s), the Jd waits for the 8d of the
    /// next deal, so the 3s is still on its pile when the deal puts the 6s
    /// on it, and the 6s needs that 3s. The relaxation (which lets the 3s
    /// into its row once any card of the row has left) and the counts
    /// without the deals call it alive.
    #[test]
    fn a_card_the_next_deal_buries_under_its_child_is_a_dead_position() {
        let mut search = ReelSearch::new(board(
            "
            A: 2c* 2c* 2d* 2d.5d 2h* 2h 2s* 2s*
            B: 3c* 3c* 3d* 3h* 3h* 3s* 5h Jd
            C: 4c* 4c* 4d* 4d* 4h* 4h* 4s* 4s*
            r: 3s.8h - 3d 6d 9d Qd Jh Qs.9s
            s: Ac Ac Ad Ad Ah Ah 8d 6s
            x: As As
            ",
        ));
        assert!(!search.is_dead(), "the relaxation alone does not see it");
        assert!(search.is_dead_by_precedence());
        search.pruning.deal_order = false;
        assert!(
            !search.is_dead_by_precedence(),
            "nor the counts without the deals"
        );
        assert_lost_to_the_unpruned_search(&search);
    }

    /// The deals in the counts prove positions with two to four deals
    /// left lost that the counts without them do not (and
    /// `the_deals_in_the_counts_keep_every_verdict` checks they change no
    /// verdict).
    #[test]
    fn the_deals_in_the_counts_prove_more_positions_lost() {
        let (with, without) = dead_with_and_without(
            (1..=150u64).map(|seed| played_position(seed, 2 + (seed % 3) as usize)),
            |pruning| pruning.deal_order = false,
        );
        assert!(
            4 * with > 5 * without,
            "{with} dead with the deals, {without} without"
        );
    }

    /// The relaxation's deals in the counts (module docs), on a position of
    /// deal 376 with one deal left: no gap of row C can open before the
    /// deal (the Jd waits for the 8d it deals, the Qh for a 9h under other
    /// cards, the Qd for the 9d, which needs the 3d it deals to fill its
    /// gap in row B, and the 7c for a 4c, which needs a gap), so the
    /// relaxation brings no 4c or 4d home before it, and the counts put all
    /// four after it; so the cards the deal puts on them go home first: the
    /// 2c on one 4c, the 7c and the 7d on the two 4d, and the 8s on the 7d
    /// over the other 4c, and the counts find no order for the rest. The
    /// relaxation (which lets any 4 into row C once a gap opens after the
    /// deal) and the counts without it call the position alive.
    #[test]
    fn cards_the_relaxation_keeps_out_until_a_deal_follow_it_in_the_counts() {
        let mut search = ReelSearch::new(board(
            "
            A: 2d* 2s* 2h* 2h.5h.8h Th Jh 2d.5d 2s.5s
            B: 3d.6d 6h 9d 3s.6s.9s 3s.6s.9s 3c.6c.9c 3c 3h
            C: 4s* Jd 4h.7h.Th 4h.7h Qh Qd 4s* 7c
            r: 9h.Qs.9c.8c.4c Kh.Qs Jc.Td.8c.3h.Jc.6d 5c.Tc.4d Qc.Kd.Qd.4d Td.9d.Tc.2c Kd.Js.6h.5c.Qc.Qh Kh.6c.9h.Kc.4c.7d
            s: 8s 3d 8d 7d 7c Kc As 2c
            x: Ac Ad Ah Ah As Ad Ac
            ",
        ));
        assert!(!search.is_dead(), "the relaxation alone does not see it");
        assert!(search.is_dead_by_precedence());
        search.pruning.relaxed_deals = false;
        assert!(
            !search.is_dead_by_precedence(),
            "nor the counts without the relaxation's deals"
        );
        assert_lost_to_the_unpruned_search(&search);
    }

    /// The relaxation's deals in the counts prove positions with one to
    /// three deals left lost that the counts without them do not (and
    /// `the_relaxations_deals_in_the_counts_keep_every_verdict` checks they
    /// change no verdict).
    #[test]
    fn the_relaxations_deals_in_the_counts_prove_more_positions_lost() {
        let (with, without) = dead_with_and_without(
            (1..=150u64).map(|seed| played_position(seed, 1 + (seed % 3) as usize)),
            |pruning| pruning.relaxed_deals = false,
        );
        assert!(
            with > without,
            "{with} dead with the relaxation's deals, {without} without"
        );
    }

    #[test]
    fn a_position_where_only_a_swap_is_left_is_not_dead() {
        // The 3s in row A and the 2s in row B belong in each other's rows.
        let search = ReelSearch::new(board(
            "
            A: 2c* 2c* 2d* 2d* 2h* 2h* 2s* 3s
            B: 3c* 3c* 3d* 3d* 3h* 3h* 3s* 2s
            C: 4c* 4c* 4d* 4d* 4h* 4h* 4s* 4s*
            r: Js.8s.5s Qs.9s.6s - - - - - -
            x: Ac Ac Ad Ad Ah Ah As As
            ",
        ));
        assert!(!search.is_dead());
        assert!(!search.is_dead_by_precedence());
        let verdict =
            solve(&search, Budget::positions(100)).map(|solution| solution.verdict.name());
        assert_eq!(verdict, Ok("winnable"));
    }

    #[test]
    fn sub_multisets() {
        let cases: [(&[u64], &[u64], bool); 7] = [
            (&[], &[], true),
            (&[], &[3], true),
            (&[3], &[], false),
            (&[1, 3], &[1, 2, 3], true),
            (&[1, 4], &[1, 2, 3], false),
            (&[2, 2], &[1, 2, 3], false),
            (&[2, 2], &[2, 2, 3], true),
        ];
        for (small, large, expected) in cases {
            assert_eq!(
                is_sub_multiset(small, large),
                expected,
                "{small:?} in {large:?}"
            );
        }
    }

    /// `KEYED` with the stock out, so that its reserves are interchangeable.
    fn stock_out(fixture: &str) -> ReelSearch {
        ReelSearch::new(board(&fixture.replace("s: 9h Kc 8d 7s 6s Tc Jd Qc", "")))
    }

    /// A search whose position has these reserve cards frozen, by pile and depth.
    fn with_frozen_builds(mut search: ReelSearch, builds: &[(usize, usize)]) -> ReelSearch {
        let mut frozen = Frozen::default();
        for &(pile, depth) in builds {
            frozen.builds[pile] |= 1 << depth;
        }
        search.set_frozen(frozen);
        assert_eq!(
            search
                .frozen
                .builds
                .iter()
                .map(|bits| bits.count_ones())
                .sum::<u32>() as usize,
            builds.len(),
            "every freeze is one that can matter"
        );
        search
    }

    #[test]
    fn a_loss_under_fewer_freezes_covers_more_and_not_the_reverse() {
        // Proved lost with the 9c on r1 frozen (pile 0, depth 1).
        let mut proved = with_frozen_builds(stock_out(KEYED), &[(0, 1)]);
        proved.proved_lost();
        let table = Rc::clone(&proved.lost);
        let check = |search: ReelSearch, expected: bool, what: &str| {
            let search = ReelSearch {
                lost: Rc::clone(&table),
                ..search
            };
            assert_eq!(search.is_known_lost(), expected, "{what}");
            if expected {
                let mut moves = Vec::new();
                search.search_moves(&mut moves);
                assert!(moves.is_empty(), "{what}: moves offered");
            }
        };
        check(
            with_frozen_builds(stock_out(KEYED), &[(0, 1)]),
            true,
            "the same freezes",
        );
        check(
            with_frozen_builds(stock_out(KEYED), &[(0, 1), (4, 0)]),
            true,
            "one more freeze",
        );
        check(
            with_frozen_builds(stock_out(KEYED), &[]),
            false,
            "nothing frozen",
        );
        check(
            with_frozen_builds(stock_out(KEYED), &[(4, 0)]),
            false,
            "another freeze instead",
        );
        // The stock is out, so r1 and r2 are interchangeable: the same
        // position with them swapped is covered when the freeze moves along.
        let swapped = KEYED.replace("r: 8h.9c Th -", "r: Th 8h.9c -");
        check(
            with_frozen_builds(stock_out(&swapped), &[(1, 1)]),
            true,
            "reserves swapped",
        );
        check(
            with_frozen_builds(stock_out(&swapped), &[(1, 0)]),
            false,
            "reserves swapped, the card under frozen instead",
        );
    }

    /// Virginia Reel's search, keeping every position it is told was proved
    /// lost while nothing was frozen.
    #[derive(Clone)]
    struct Recording {
        search: ReelSearch,
        proved: Rc<RefCell<Vec<VirginiaReel>>>,
    }

    impl SolverGame for Recording {
        type Game = VirginiaReel;

        fn state(&self) -> &VirginiaReel {
            self.search.state()
        }

        fn apply(&mut self, mv: ReelMove) -> Result<Outcome, MoveError> {
            self.search.apply(mv)
        }

        fn undo(&mut self, mv: ReelMove, outcome: &Outcome) {
            self.search.undo(mv, outcome);
        }

        fn canonical_key(&self) -> u64 {
            self.search.canonical_key()
        }

        fn search_moves(&self, moves: &mut Vec<ReelMove>) {
            self.search.search_moves(moves);
        }

        fn discrepancy_passes(&self) -> u32 {
            self.search.discrepancy_passes()
        }

        fn discrepancy_budget(&self, budget: u64) -> u64 {
            self.search.discrepancy_budget(budget)
        }

        fn restart_unit(&self, budget: u64) -> Option<u64> {
            self.search.restart_unit(budget)
        }

        fn set_round(&mut self, round: u64) {
            self.search.set_round(round);
        }

        fn unlimited_below(&self) -> bool {
            self.search.unlimited_below()
        }

        fn proved_lost(&mut self) {
            if self.search.frozen == Frozen::default() {
                self.proved.borrow_mut().push(self.search.state().clone());
            }
            self.search.proved_lost();
        }
    }

    /// The search tells a game a position is proved lost only when nothing
    /// below it was cut short: positions so told while nothing was frozen,
    /// in the passes and rounds of searches from winnable positions, are
    /// never won by the unpruned search. The starts themselves are among
    /// them when a search wrongly says so, as a pass that cut its lines would.
    #[test]
    fn positions_told_lost_are_lost() {
        let proved = Rc::new(RefCell::new(Vec::new()));
        for (_, position) in test_positions()
            .iter()
            .filter(|(name, _)| name.starts_with("unplayed"))
            .take(100)
        {
            let search = Recording {
                search: ReelSearch::new(position.clone()),
                proved: Rc::clone(&proved),
            };
            solve(&search, Budget::positions(RULE_BUDGET)).expect("replay");
        }
        let proved = proved.borrow();
        assert!(proved.len() >= 20, "only {} told lost", proved.len());
        // Every fifth, so that the plain search stays fast.
        for position in proved.iter().step_by(5) {
            let plain = solve(&Plain(position.clone()), Budget::positions(1_000)).expect("replay");
            assert_ne!(plain.verdict.name(), "winnable", "told lost:\n{position:?}");
        }
    }

    /// The table fires: on late positions of deals it saves positions
    /// (and `the_lost_table_keeps_every_verdict` checks it changes no verdict).
    #[test]
    fn the_lost_table_saves_positions() {
        let spent = |lost_table: bool| -> u64 {
            test_positions()
                .iter()
                .filter(|(name, _)| name.starts_with("deal"))
                .take(200)
                .map(|(_, position)| {
                    let mut search = ReelSearch::new(position.clone());
                    search.pruning.lost_table = lost_table;
                    solve(&search, Budget::positions(RULE_BUDGET))
                        .expect("replay")
                        .positions
                })
                .sum()
        };
        let (with, without) = (spent(true), spent(false));
        assert!(
            with < without,
            "{with} positions with the table, {without} without"
        );
    }

    #[test]
    fn the_plain_search_agrees_on_small_positions() {
        // The unpruned reference, on positions small enough for it.
        let mut compared = 0;
        for ((name, position), reel) in test_positions()
            .iter()
            .zip(verdicts_with_every_rule())
            .filter(|((name, _), _)| name.starts_with("unplayed"))
            .take(100)
        {
            let plain = solve(&Plain(position.clone()), Budget::positions(2_000)).expect("replay");
            if reel.is_settled() && plain.verdict.is_settled() {
                assert_eq!(reel.name(), plain.verdict.name(), "{name}");
                compared += 1;
            }
        }
        assert!(compared >= 50, "only {compared}");
    }
}
