//! The planner's tests: fair play (the same moves on deals that differ
//! only in hidden cards), the thinking limit on a fake clock, and the
//! choice of lines.

use crate::solver::any::{ProvedDeal, first_winnable_deal};

use super::*;

/// Whether `line` replays from `position` to a win.
fn wins(position: &AnyGame, line: &[AnyMove]) -> bool {
    let mut position = position.clone();
    line.iter().all(|&mv| position.apply(mv).is_ok()) && position.is_won()
}

fn proved(game: GameKind) -> ProvedDeal {
    first_winnable_deal(game, 1..200, Budget::positions(100_000))
        .expect("the solver's lines replay")
        .expect("a deal is proved")
}

/// Fair play: a bot's moves follow from the boards it is shown. Two
/// deals with the same board but different hidden cards get the same
/// moves for as long as their boards agree: every game at the easy
/// level, and Midshipman at the strong level, whose plans judge their
/// first moves against every guess, and Virginia Reel at the strong
/// level, which judges every move against guesses kept from its plan.
#[test]
fn a_bot_plays_the_same_on_deals_that_differ_only_in_hidden_cards() {
    let cases = GameKind::ALL
        .into_iter()
        .map(|game| (game, BotLevel::Easy))
        .chain([
            (GameKind::Midshipman, BotLevel::Strong),
            (GameKind::VirginiaReel, BotLevel::Strong),
        ]);
    for (game, level) in cases {
        let seed = proved(game).seed;
        let mut first = AnyGame::deal(game, seed);
        let mut second = guess(&first.view(), 99).expect("a dealt view reads");
        assert_ne!(first, second, "{game}: the hidden cards differ");
        let (mut first_bot, mut second_bot) = (Bot::new(level, 5), Bot::new(level, 5));
        let mut moves = 0;
        while first.view() == second.view() && !first.is_won() && moves < 400 {
            let text = first_bot.next_move(&first.view());
            assert_eq!(
                text,
                second_bot.next_move(&second.view()),
                "{game} {level:?} seed {seed} move {moves}"
            );
            let Some(text) = text else { break };
            for position in [&mut first, &mut second] {
                let mv = position
                    .parse_move(&text)
                    .expect("the bot's notation reads");
                position.apply(mv).expect("a legal move");
            }
            moves += 1;
        }
        assert!(moves > 0, "{game}: the bots moved");
    }
}

/// Whether `position` has no legal move: the game is over.
fn no_legal_move(position: &AnyGame) -> bool {
    let mut legal = Vec::new();
    position.legal_moves(&mut legal);
    legal.is_empty()
}

/// A deadline that passes from its `strike_at + 1`-th question on: a
/// fake clock, so the tests of the thinking limit are deterministic.
struct StrikesAfter {
    asked: std::sync::atomic::AtomicU64,
    strike_at: u64,
}

impl StrikesAfter {
    fn new(strike_at: u64) -> StrikesAfter {
        StrikesAfter {
            asked: std::sync::atomic::AtomicU64::new(0),
            strike_at,
        }
    }

    fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }
}

impl Deadline for StrikesAfter {
    fn passed(&self) -> bool {
        self.asked.fetch_add(1, Ordering::Relaxed) >= self.strike_at
    }
}

/// A bot whose time runs out, at once or after a few questions of
/// its clock, still plays a legal move on every board of every game,
/// and never resigns for it: the first 30 moves of a proved deal.
#[test]
fn a_bot_out_of_time_still_plays_a_legal_move_in_every_game() {
    for game in GameKind::ALL {
        let seed = proved(game).seed;
        for strike_at in [0, 1, 3] {
            let mut position = AnyGame::deal(game, seed);
            let mut bot = Bot::new(BotLevel::Strong, 5);
            let mut struck = 0;
            for moves in 0..30 {
                if position.is_won() {
                    break;
                }
                let deadline = StrikesAfter::new(strike_at);
                let Some(text) = bot.next_move_within(&position.view(), &deadline) else {
                    // A game with no legal move left is over: the one
                    // resignation a bot out of time may make.
                    assert!(
                        no_legal_move(&position),
                        "{game} strike at {strike_at}: resigned at move {moves}"
                    );
                    break;
                };
                struck += u64::from(deadline.asked() > strike_at);
                let mv = position.parse_move(&text).unwrap_or_else(|error| {
                    panic!("{game} move {moves}: {text} does not read: {error}")
                });
                assert!(
                    position.apply(mv).is_ok(),
                    "{game} strike at {strike_at}: {text} is illegal at move {moves}"
                );
            }
            assert!(
                struck > 0,
                "{game} strike at {strike_at}: the clock never struck"
            );
        }
    }
}

/// Every search the bot starts follows a question of its clock
/// answered "not yet": with `strike_at` such answers it starts at most
/// `strike_at` searches for a move, whatever the game and level.
#[test]
fn a_bot_starts_no_search_after_its_time_is_up() {
    for game in GameKind::ALL {
        let seed = proved(game).seed;
        for strike_at in [0, 1, 2, 4] {
            let mut position = AnyGame::deal(game, seed);
            let mut bot = Bot::new(BotLevel::Strong, 5);
            for moves in 0..20 {
                if position.is_won() {
                    break;
                }
                let before = bot.searches();
                let deadline = StrikesAfter::new(strike_at);
                let Some(text) = bot.next_move_within(&position.view(), &deadline) else {
                    assert!(no_legal_move(&position), "{game}: resigned at move {moves}");
                    break;
                };
                let searches = bot.searches() - before;
                assert!(
                    searches <= strike_at,
                    "{game} move {moves}: {searches} searches with {strike_at} questions before the strike"
                );
                let mv = position
                    .parse_move(&text)
                    .expect("the bot's notation reads");
                position.apply(mv).expect("a legal move");
            }
        }
    }
}

/// The clock reaches inside a search: struck at the solver's first
/// question, a guess's search stops before its budget, where the same
/// guess searched with no limit spends all of it. (The solver asks
/// before each restart round and every 4,096 positions of a pass or
/// round; before it asked at round starts, a Midshipman guess struck
/// here ran 31,743 of its 50,000 positions, now none.)
#[test]
fn the_limit_stops_a_search_under_way() {
    for game in [GameKind::Midshipman, GameKind::VirginiaReel] {
        let seed = proved(game).seed;
        let board = AnyGame::deal(game, seed).view();
        let limits = BotLevel::Strong.limits(game);
        // The first guess whose search runs long: `Bot::new(_, v)`
        // draws its first guess with variation `v + 1`.
        let (variation, unlimited) = (1..50)
            .find_map(|variation| {
                let positions = guess(&board, variation + 1)
                    .expect("a dealt view reads")
                    .search(Budget::positions(limits.budget))
                    .expect("the solver's lines replay")
                    .positions;
                (positions > 40_000).then_some((variation, positions))
            })
            .expect("a guess of the deal runs long");
        let mut bot = Bot::new(BotLevel::Strong, variation);
        // The bot asks once before the guess, the solver next.
        let deadline = StrikesAfter::new(1);
        let text = bot.next_move_within(&board, &deadline);
        assert!(text.is_some(), "{game}: a move");
        assert_eq!(bot.searches(), 1, "{game}: one guess searched");
        let limited = bot.positions_searched();
        assert!(
            limited < unlimited,
            "{game} seed {seed}: {limited} positions with the limit, {unlimited} without"
        );
    }
}

/// With nothing hidden the guess is the position: the bot wins along
/// the line of its one search, a move per line move. (Only Three Blind
/// Mice shows every card before the end: the other games keep a stock.)
#[test]
fn a_bot_that_sees_everything_wins_along_one_line() {
    for game in [GameKind::ThreeBlindMice] {
        let deal = proved(game);
        let mut position = AnyGame::deal(game, deal.seed);
        // Play the proved line until no card is hidden.
        let mut played = 0;
        while position.view().zones.iter().any(|zone| zone.hidden > 0) {
            position.apply(deal.line[played]).expect("the line replays");
            played += 1;
        }
        let rest = deal.line.len() - played;
        assert!(rest > 0, "{game}: the line ends as the last card turns");
        let mut bot = Bot::new(BotLevel::Normal, 1);
        let mut moves = 0;
        while !position.is_won() {
            let text = bot
                .next_move(&position.view())
                .expect("the bot finds a move");
            let mv = position
                .parse_move(&text)
                .expect("the bot's notation reads");
            position.apply(mv).expect("the bot's move is legal");
            moves += 1;
            assert!(moves <= rest, "{game}: {moves} moves and no win");
        }
        assert_eq!(bot.searches(), 1, "{game}: the line was kept");
    }
}

/// `play_alone` reports a win only for a won game, within its moves.
#[test]
fn playing_alone_counts_moves_and_stops_at_the_limit() {
    let deal = proved(GameKind::ThreeBlindMice);
    let start = AnyGame::deal(GameKind::ThreeBlindMice, deal.seed);
    let stopped = play_alone(&start, BotLevel::Normal, 1, 1);
    assert_eq!(
        stopped,
        Alone {
            won: false,
            moves: 1
        }
    );
    // Measured: the strong bot wins this deal (docs/BOTS.md); a move
    // per card and a few more.
    let alone = play_alone(&start, BotLevel::Strong, deal.seed, 500);
    assert!(alone.won, "seed {}: {alone:?}", deal.seed);
    assert!(alone.moves >= 20 && alone.moves < 100, "{alone:?}");
}

/// Of winning lines of different guesses, the one played starts with
/// the move most of them share, and is the shortest of those.
#[test]
fn the_line_played_starts_with_the_most_shared_move_and_is_the_shortest() {
    // (lines, the index of the one played)
    let cases: [(&[&str], Option<usize>); 6] = [
        (&[], None),
        (&["", ""], None),
        (&["ab", "bxy", "bz", "a"], Some(3)),
        (&["abc", "bxy", "bz", "ax"], Some(2)),
        (&["abcd", "bxy", "bz", "acde"], Some(2)),
        (&["ab", "cd", "ef"], Some(0)),
    ];
    for (lines, expected) in cases {
        let lines: Vec<Vec<char>> = lines.iter().map(|line| line.chars().collect()).collect();
        let slices: Vec<&[char]> = lines.iter().map(Vec::as_slice).collect();
        assert_eq!(most_shared_shortest(&slices), expected, "{lines:?}");
    }
}

/// Of the first moves of winning lines, the one played is the one after
/// which the most guesses win, the best-ranked on a tie, and a
/// candidate's guesses stop being asked once it cannot beat the best.
#[test]
fn the_move_played_wins_the_most_guesses_and_no_guess_is_asked_in_vain() {
    // (rows of wins, one per candidate and one column per guess; the
    // candidate chosen; how many questions were asked)
    let cases: [(&[&str], Option<usize>, usize); 7] = [
        (&[], None, 0),
        (&["1100"], Some(0), 4),
        (&["1100", "1111", "0111"], Some(1), 8),
        (&["1111", "1111"], Some(0), 4),
        (&["0000", "0001", "0110"], Some(2), 4 + 4 + 4),
        (&["1110", "0111"], Some(0), 4 + 1),
        (&["0", "0"], Some(0), 1 + 1),
    ];
    for (rows, expected, expected_asked) in cases {
        let guesses = rows.first().map_or(0, |row| row.len());
        let mut asked = 0;
        let chosen = most_robust(rows.len(), guesses, |candidate, guess| {
            asked += 1;
            rows[candidate].as_bytes()[guess] == b'1'
        });
        assert_eq!((chosen, asked), (expected, expected_asked), "{rows:?}");
    }
}

/// A move taken out of a winning line and played first leaves the rest
/// of the line only if the rest still wins after it: every move of a
/// proved Virginia Reel line is tried, some come first (the line's own
/// first move always), some do not, and a move not on the line never.
#[test]
fn a_line_gives_up_a_move_played_first_only_if_the_rest_still_wins() {
    let deal = proved(GameKind::VirginiaReel);
    let start = AnyGame::deal(GameKind::VirginiaReel, deal.seed);
    let line = &deal.line;
    let (mut first, mut not_first) = (0, 0);
    for (at, &mv) in line.iter().enumerate() {
        match line_after(&start, line, mv) {
            Some(rest) => {
                assert_eq!(rest.len(), line.len() - 1, "move {at}");
                let mut after = start.clone();
                after.apply(mv).expect("the move is played first");
                assert!(wins(&after, &rest), "move {at}: the rest does not win");
                first += 1;
            }
            None => {
                assert!(at > 0, "the line's own first move comes first");
                not_first += 1;
            }
        }
    }
    assert!(first > 1 && not_first > 0, "{first} first, {not_first} not");
    let mut legal = Vec::new();
    start.legal_moves(&mut legal);
    let off_line = legal.into_iter().find(|mv| !line.contains(mv));
    if let Some(off_line) = off_line {
        assert_eq!(line_after(&start, line, off_line), None);
    }
}

/// A plan guesses until it has its votes; past its guesses, only while
/// no guess has won.
#[test]
fn a_plan_guesses_more_only_while_it_has_no_line() {
    // (guesses tried, lines found, votes, guesses, another guess?)
    let cases = [
        (0, 0, 4, 8, true),
        (3, 3, 4, 8, true),
        (3, 4, 4, 8, false),
        (7, 1, 4, 8, true),
        (8, 1, 4, 8, false),
        (8, 0, 4, 8, true),
        (15, 0, 4, 8, true),
        (0, 0, 1, 1, true),
        (1, 0, 1, 1, true),
        (1, 1, 1, 1, false),
    ];
    for (tried, won, votes, guesses, expected) in cases {
        assert_eq!(
            keep_guessing(tried, won, votes, guesses),
            expected,
            "{tried} tried, {won} won, {votes} votes, {guesses} guesses"
        );
    }
}

/// A line's first card-showing move comes as early as it commutes with
/// the moves before it: the moves are the same, the line still wins,
/// and it reaches the same position once the card is shown. Solver
/// lines of the games with a stock or face-down cards, with a full
/// view of the deal.
#[test]
fn a_card_showing_move_is_played_as_early_as_it_commutes() {
    let reveal_at = |position: &AnyGame, line: &[AnyMove]| {
        let mut state = position.clone();
        line.iter().position(|&mv| {
            state.apply(mv).is_ok_and(|outcome| {
                outcome.effects.iter().any(|effect| {
                    matches!(
                        effect,
                        Effect::TurnedUp { .. } | Effect::Drew { .. } | Effect::Dealt { .. }
                    )
                })
            })
        })
    };
    let after = |position: &AnyGame, moves: &[AnyMove]| {
        let mut state = position.clone();
        state.play_all(moves).expect("the line replays");
        state
    };
    let mut moved = 0;
    for game in [
        GameKind::ThreeBlindMice,
        GameKind::Indian,
        GameKind::VirginiaReel,
    ] {
        let deal = proved(game);
        let mut position = AnyGame::deal(game, deal.seed);
        for at in 0..deal.line.len() {
            let line = &deal.line[at..];
            // Every seventh position of the line: enough, and quick.
            if at % 7 != 0 {
                position.apply(line[0]).expect("the line replays");
                continue;
            }
            let early = reveal_early(&position, line);
            assert!(wins(&position, &early), "{game} seed {} at {at}", deal.seed);
            let (mut sorted, mut original) = (early.clone(), line.to_vec());
            let key = |mv: &AnyMove| format!("{mv:?}");
            sorted.sort_by_key(key);
            original.sort_by_key(key);
            assert_eq!(sorted, original, "{game}: the same moves");
            if let (Some(was), Some(now)) =
                (reveal_at(&position, line), reveal_at(&position, &early))
            {
                assert!(now <= was, "{game}: the reveal came later");
                assert_eq!(
                    after(&position, &early[..=was]),
                    after(&position, &line[..=was]),
                    "{game} seed {} at {at}: the same position once the card shows",
                    deal.seed
                );
                if now < was {
                    moved += 1;
                }
            }
            position.apply(line[0]).expect("the line replays");
        }
    }
    assert!(moved > 0, "no reveal was brought forward");
}
