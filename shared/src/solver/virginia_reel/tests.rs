//! The Virginia Reel solver's tests: each rule's soundness, checked by
//! comparing verdicts with and without it on many positions (the slow tier
//! runs them all), the key's symmetries, move generation against the rules
//! engine, and the dead-position checks and the lost table on fixtures.

use std::sync::OnceLock;

use super::freezing::{FROZEN_CHAIN, FrozenMove, class_of};
use super::lost::is_sub_multiset;
use super::*;
use crate::conformance::TestRng;
use crate::games::virginia_reel::COLUMNS;
use crate::solver::plain::Plain;
use crate::solver::{Budget, Verdict, solve};

/// A position from a fixture; a bad fixture is a bug in the test.
fn board(fixture: &str) -> VirginiaReel {
    VirginiaReel::from_fixture(fixture).unwrap_or_else(|e| panic!("bad fixture: {e}\n{fixture}"))
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
                let (first, second) = (lone[rng.below(lone.len())], lone[rng.below(lone.len())]);
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
                if self.deals_left() >= MAX_DEALS_LEFT || self.reserves.iter().any(Vec::is_empty) {
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
/// `search_moves` once by key, with the same freezes (the search
/// driver's module docs, "Best-first phase"). The table of lost positions is off in both, since
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
        if depth_first.verdict == Verdict::Unwinnable || best_first.verdict == Verdict::Unwinnable {
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

/// The matchings (`precedence` module docs): the 5s on top must go onto the only 2s
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

/// The deals in the counts (`precedence` module docs): the 3s under the 8h fills
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

/// The relaxation's deals in the counts (`precedence` module docs), on a position of
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
    let verdict = solve(&search, Budget::positions(100)).map(|solution| solution.verdict.name());
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
