//! The engine's questions answered natively, as the page asks them.

use patience_shared::rules::Rules;

use super::*;

fn practice(game: GameKind, seed: u64, moves: &[String]) -> PositionSpec {
    PositionSpec {
        game,
        seed: Some(seed),
        view: None,
        moves: moves.to_vec(),
    }
}

/// Following the engine's hints from a proved deal of each game wins it,
/// every hint a legal move of `state`, as the page plays them.
#[test]
fn hints_win_a_proved_deal_of_every_game() {
    for game in GameKind::ALL {
        let deal = proved_deal(game, 1, 40, 200_000).expect("the search runs");
        assert!(deal.proved, "{game}: no deal proved in 40 seeds");
        let mut engine = Engine::new();
        let mut moves = Vec::new();
        for _ in 0..=deal.line {
            let spec = practice(game, deal.seed, &moves);
            let now = state(&spec).expect("the moves replay");
            if now.won {
                break;
            }
            let hint = engine.hint(&spec, 200_000).expect("the hint runs");
            assert_eq!(hint.kind, "play", "{game} seed {}", deal.seed);
            let mv = hint.mv.expect("a move with its shape");
            assert!(now.legal.contains(&mv), "{game}: the hint {mv:?} is legal");
            moves.push(mv.text);
        }
        let last = state(&practice(game, deal.seed, &moves)).expect("the moves replay");
        assert!(last.won, "{game} seed {}: the hints win", deal.seed);
        assert_eq!(
            last.moves, moves,
            "{game}: canonical moves come back as sent"
        );
    }
}

/// A drop the rules refuse gets the engine's reason; a legal one its move.
#[test]
fn drops_answer_a_move_or_the_reason() {
    let is_pile_move =
        |mv: &&MoveInfo| matches!((mv.from, mv.to), (Zone::Pile(_), Some(Zone::Pile(_))));
    let (spec, legal) = (1..50)
        .map(|seed| practice(GameKind::Indian, seed, &[]))
        .map(|spec| {
            let legal = state(&spec).expect("the deal").legal;
            (spec, legal)
        })
        .find(|(_, legal)| legal.iter().any(|mv| is_pile_move(&mv)))
        .expect("an Indian deal with a pile-to-pile move");
    let position = build(&spec).expect("the deal");
    let pile_move = legal.iter().find(is_pile_move).expect("found above");
    let held = Held {
        from: pile_move.from,
        depth: 0,
    };
    let to = pile_move.to.expect("a pile");
    let answer = drop(&spec, held, to).expect("answers");
    assert_eq!(answer.mv.as_ref(), Some(pile_move));
    let lit = targets(&spec, held).expect("answers");
    assert!(lit.contains(&to), "{to:?} is lit among {lit:?}");
    // The same card onto every pile it does not build on: refused, with a
    // reason.
    let mut refused = 0;
    for zone in position.view().zones {
        let is_target = legal
            .iter()
            .any(|mv| mv.from == held.from && mv.to == Some(zone.zone));
        if !matches!(zone.zone, Zone::Pile(_)) || is_target || zone.zone == held.from {
            continue;
        }
        let answer = drop(&spec, held, zone.zone).expect("answers");
        assert_eq!(answer.mv, None);
        assert!(!lit.contains(&zone.zone), "{:?} is not lit", zone.zone);
        let reason = answer.reason.expect("a reason");
        assert!(!reason.is_empty(), "a reason for {:?}", zone.zone);
        refused += 1;
    }
    assert!(refused > 0);
}

/// A position given as a server's board answers the same legal moves as
/// the deal it shows: legality never depends on hidden cards.
#[test]
fn a_board_answers_as_its_deal() {
    for game in GameKind::ALL {
        for seed in 1..=3 {
            let dealt = state(&practice(game, seed, &[])).expect("the deal");
            let from_view = state(&PositionSpec {
                game,
                seed: None,
                view: Some(dealt.view.clone()),
                moves: Vec::new(),
            })
            .expect("the board");
            assert_eq!(from_view.legal, dealt.legal, "{game} seed {seed}");
            assert_eq!(from_view.view, dealt.view, "{game} seed {seed}");
        }
    }
}

#[derive(Serialize)]
struct StateOf {
    op: &'static str,
    position: Spec,
}

#[derive(Serialize)]
struct Spec {
    game: &'static str,
    seed: Option<u64>,
    moves: Vec<&'static str>,
}

/// Bad requests get an error answer, never a panic: garbage, an unknown
/// question, a refused move, a position with neither seed nor board.
#[test]
fn bad_requests_get_errors() {
    #[derive(Deserialize)]
    struct Answer {
        error: Option<String>,
    }
    let state_of = |seed: Option<u64>, moves: Vec<&'static str>| {
        rmp_serde::to_vec_named(&StateOf {
            op: "state",
            position: Spec {
                game: "indian",
                seed,
                moves,
            },
        })
        .expect("encodes")
    };
    let unknown = rmp_serde::to_vec_named(&serde_helpers::Op { op: "teleport" }).expect("encodes");
    let cases: [(Vec<u8>, &str); 4] = [
        (vec![0xc1, 0x00, 0xff], "unreadable request"),
        (unknown, "unreadable request"),
        (state_of(Some(1), vec!["9>9"]), "move 0 (9>9)"),
        (state_of(None, vec![]), "needs a seed or a view"),
    ];
    let mut engine = Engine::new();
    for (request, expected) in cases {
        let answer: Answer =
            rmp_serde::from_slice(&engine.answer(&request)).expect("the answer decodes");
        let error = answer.error.expect("an error");
        assert!(error.contains(expected), "{error:?} says {expected:?}");
    }
}

mod serde_helpers {
    #[derive(serde::Serialize)]
    pub struct Op {
        pub op: &'static str,
    }
}

/// A finished race's boards come whole, face-down cards included, and
/// match the views the players saw, step by step; `undo` takes back.
#[test]
fn revealed_boards_are_the_views_with_their_hidden_cards() {
    let game = GameKind::Indian;
    let seed = 7;
    let first = state(&practice(game, seed, &[])).expect("the deal").legal;
    let Some(mv) = first.first() else {
        panic!("the deal has a move");
    };
    let moves = vec![
        mv.text.clone(),
        patience_shared::protocol::UNDO_TEXT.to_string(),
        mv.text.clone(),
    ];
    let boards = revealed(game, seed, &moves).expect("the log replays");
    assert_eq!(boards.len(), moves.len() + 1);
    assert_eq!(boards[0], AnyGame::deal(game, seed).board());
    assert_eq!(boards[0], boards[2], "undo takes the move back");
    assert_eq!(boards[1], boards[3]);
    let played = state(&practice(game, seed, &moves[..1])).expect("the move");
    assert_eq!(boards[1].to_view(), played.view);
    assert!(
        boards[0].zones.iter().any(|zone| zone.face_down > 0),
        "the deal hides cards"
    );
    let refused = revealed(game, seed, &["undo".to_string()]);
    assert!(matches!(
        refused,
        Err(EngineError::BadMove { index: 0, .. })
    ));
}
