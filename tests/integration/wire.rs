//! What players may see: every frame an opponent and a spectator receive
//! during a whole race is decoded and searched for cards, and every card
//! found must lie face up on some racer's board at the moment the frame was
//! sent. No frame before the end holds the seed or the salt.
//!
//! The test keeps the truth beside the server: it knows the seed (the test
//! server's seed stream is fixed) and plays the same moves on its own copies
//! of the positions, so it knows at each step which cards are face down.
//! Moves are played one at a time, and after each the test reads every
//! client up to that move's own message, so each frame is checked against
//! the position before the move (frames sent earlier) or after it (the
//! move's own acknowledgement or progress).

use std::collections::HashSet;

use patience_shared::any::AnyGame;
use patience_shared::card::Card;
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, PlayerStatus, RoomOptions, ServerMessage};
use patience_shared::rules::{Effect, Rules};
use patience_tests::{Client, first_deal, start_server};
use serde_json::Value;

/// Every card lying face up on any of the positions.
fn face_up_cards(positions: &[AnyGame]) -> HashSet<Card> {
    positions
        .iter()
        .flat_map(|position| {
            position.board().zones.into_iter().flat_map(|zone| {
                let first_up = usize::from(zone.face_down).min(zone.cards.len());
                zone.cards[first_up..].to_vec()
            })
        })
        .collect()
}

/// A card written as the protocol writes one: rank then lower-case suit.
fn as_card(text: &str) -> Option<Card> {
    let bytes = text.as_bytes();
    let rank_ok = bytes
        .first()
        .is_some_and(|byte| b"A23456789TJQK".contains(byte));
    let suit_ok = bytes.get(1).is_some_and(|byte| b"cdhs".contains(byte));
    (bytes.len() == 2 && rank_ok && suit_ok)
        .then(|| text.parse().ok())
        .flatten()
}

/// Every card a decoded frame names: card fields, and cards named inside
/// move texts. Also every integer and string, to look for the seed and salt.
fn scan(
    value: &Value,
    key: Option<&str>,
    cards: &mut Vec<Card>,
    integers: &mut Vec<u64>,
    strings: &mut Vec<String>,
) {
    match value {
        Value::String(text) => {
            strings.push(text.clone());
            if let Some(card) = as_card(text) {
                cards.push(card);
            } else if key == Some("text") {
                let chars: Vec<char> = text.chars().collect();
                for pair in chars.windows(2) {
                    let token: String = pair.iter().collect();
                    cards.extend(as_card(&token));
                }
            }
        }
        Value::Number(number) => integers.extend(number.as_u64()),
        Value::Array(items) => items
            .iter()
            .for_each(|item| scan(item, None, cards, integers, strings)),
        Value::Object(fields) => fields
            .iter()
            .for_each(|(name, item)| scan(item, Some(name), cards, integers, strings)),
        Value::Null | Value::Bool(_) => {}
    }
}

/// Checks frames received since `from` against the cards public at the
/// time; the last one against `last_allowed` if given. Returns how many
/// cards it checked.
fn check_frames(
    client: &Client,
    from: usize,
    allowed: &HashSet<Card>,
    last_allowed: Option<&HashSet<Card>>,
    seed: u64,
) -> usize {
    let frames = &client.frames[from..];
    let mut checked = 0;
    for (index, frame) in frames.iter().enumerate() {
        let allowed = match last_allowed {
            Some(last) if index + 1 == frames.len() => last,
            _ => allowed,
        };
        let value: Value = rmp_serde::from_slice(frame).expect("frames are MessagePack");
        let (mut cards, mut integers, mut strings) = (Vec::new(), Vec::new(), Vec::new());
        scan(&value, None, &mut cards, &mut integers, &mut strings);
        for card in &cards {
            assert!(
                allowed.contains(card),
                "{card} was face down everywhere but was sent: {value}"
            );
        }
        assert!(
            !integers.contains(&seed),
            "the seed was sent before the end: {value}"
        );
        let seed_text = seed.to_string();
        assert!(
            !strings.iter().any(|text| text.contains(&seed_text)),
            "the seed was sent: {value}"
        );
        checked += cards.len();
    }
    checked
}

#[tokio::test]
async fn no_face_down_card_and_no_seed_reach_anyone_before_the_end() {
    let server = start_server(|_| {}).await;
    let (seed, line) = first_deal();
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    let mut carol = Client::hello(&server, "carol").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    carol
        .send(&ClientMessage::Spectate { code: code.clone() })
        .await;
    carol
        .recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await;
    bob.join_room(&code).await;
    for client in [&mut ada, &mut bob, &mut carol] {
        client.race_started().await;
    }
    let mut positions = [
        AnyGame::deal(GameKind::ThreeBlindMice, seed),
        AnyGame::deal(GameKind::ThreeBlindMice, seed),
    ];
    let initial = face_up_cards(&positions);
    assert!(
        initial.len() < 52,
        "the deal has face-down cards to keep secret"
    );
    let mut checked = 0;
    let mut read = [0usize; 3];
    for (index, client) in [&ada, &bob, &carol].into_iter().enumerate() {
        checked += check_frames(client, 0, &initial, None, seed);
        read[index] = client.frames.len();
    }

    let mut moves_played = [0u32; 2];
    let mut turned_up = 0;
    let mut bob_racing = true;
    let mut legal = Vec::new();
    for (step, ada_move) in line.iter().enumerate() {
        // Bob plays a move of his own every third step while he can.
        let mut turns = vec![(0usize, ada_move.clone())];
        if step % 3 == 1 && bob_racing {
            positions[1].legal_moves(&mut legal);
            if let Some(&mv) = legal.first() {
                turns.push((1, positions[1].format_move(mv)));
            }
        }
        for (seat, text) in turns {
            let before = face_up_cards(&positions);
            let mv = positions[seat].parse_move(&text).expect("the move parses");
            let outcome = positions[seat].apply(mv).expect("the move is legal");
            turned_up += outcome
                .effects
                .iter()
                .filter(|effect| matches!(effect, Effect::TurnedUp { .. }))
                .count();
            moves_played[seat] += 1;
            let after = face_up_cards(&positions);
            let view = positions[seat].view();
            let clients = [&mut ada, &mut bob, &mut carol];
            let [mover, observer, spectator] = if seat == 0 {
                let [a, b, c] = clients;
                [a, b, c]
            } else {
                let [a, b, c] = clients;
                [b, a, c]
            };
            mover.play(&text).await;
            let ServerMessage::MoveAccepted { board, .. } = mover.move_answer().await else {
                panic!("{text} refused");
            };
            assert_eq!(board, view);
            for watcher in [observer, spectator] {
                let progress = watcher
                    .recv_until(|message| {
                        matches!(message, ServerMessage::Progress { seat: s, progress, .. }
                            if usize::from(*s) == seat && progress.moves == moves_played[seat])
                    })
                    .await;
                let ServerMessage::Progress { board, .. } = progress else {
                    unreachable!()
                };
                assert_eq!(board, view, "others see the mover's public board");
            }
            for (index, client) in [&ada, &bob, &carol].into_iter().enumerate() {
                // Each client's last frame is the move's own message, sent
                // after the move; everything before it, before the move.
                checked += check_frames(client, read[index], &before, Some(&after), seed);
                read[index] = client.frames.len();
            }
            if seat == 1 && positions[1].is_stuck() {
                bob_racing = false;
            }
        }
    }
    assert!(positions[0].is_won());
    assert!(
        turned_up > 0,
        "the race turned up secret cards, so the check had something to catch"
    );

    if bob_racing {
        bob.send(&ClientMessage::Resign).await;
    }
    let mut results = Vec::new();
    let everyone_public = face_up_cards(&positions);
    for (index, client) in [&mut ada, &mut bob, &mut carol].into_iter().enumerate() {
        let ended = client
            .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
            .await;
        // Every frame before the end, checked; the end reveals the seed.
        let end = client.frames.len() - 1;
        let frames_before_end = &client.frames[read[index]..end];
        for frame in frames_before_end {
            let value: Value = rmp_serde::from_slice(frame).expect("MessagePack");
            let (mut cards, mut integers, mut strings) = (Vec::new(), Vec::new(), Vec::new());
            scan(&value, None, &mut cards, &mut integers, &mut strings);
            assert!(cards.iter().all(|card| everyone_public.contains(card)));
            assert!(!integers.contains(&seed));
        }
        let ServerMessage::RaceEnded { result, .. } = ended else {
            unreachable!()
        };
        assert_eq!(result.reveal.seed, seed);
        // The salt appears in no frame before the end either.
        for frame in &client.frames[..end] {
            let text = String::from_utf8_lossy(frame);
            assert!(!text.contains(&result.reveal.salt), "the salt leaked early");
        }
        results.push(result);
    }
    assert!(checked > 1_000, "the frames named cards: {checked} checked");
    assert_eq!(results[0].standings[0].status, PlayerStatus::Won);
    server.shutdown().await;
}
