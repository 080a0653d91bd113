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
//! move's own acknowledgement or progress). Every board sent must also equal
//! the truth's own `view()`.
//!
//! Two races: Three Blind Mice (face-down cards, a seed far from every other
//! number on the wire, so that it can be looked for) and Indian (a stock
//! turned card by card: no stock card may show before its turn).

use std::collections::HashSet;

use patience_shared::any::AnyGame;
use patience_shared::card::Card;
use patience_shared::conformance::TestRng;
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
    seed: Option<u64>,
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
        if let Some(seed) = seed {
            assert!(
                !integers.contains(&seed),
                "the seed was sent before the end: {value}"
            );
            let seed_text = seed.to_string();
            assert!(
                !strings.iter().any(|text| text.contains(&seed_text)),
                "the seed was sent: {value}"
            );
        }
        checked += cards.len();
    }
    checked
}

/// Three clients in one race (Ada in seat 0, Bob in seat 1, Carol
/// watching) and the truth beside them.
struct Watch {
    clients: [Client; 3],
    read: [usize; 3],
    positions: [AnyGame; 2],
    moves_played: [u32; 2],
    seed: u64,
    checked: usize,
    turned_up: usize,
}

impl Watch {
    /// Opens the room, has Carol watch from the lobby, starts the race, and
    /// checks everything received so far.
    async fn start(server: &patience_server::Server, game: GameKind, seed: u64) -> Watch {
        let mut ada = Client::hello(server, "ada").await;
        let mut bob = Client::hello(server, "bob").await;
        let mut carol = Client::hello(server, "carol").await;
        ada.send(&ClientMessage::CreateRoom {
            game,
            max_players: 2,
            public: false,
            options: RoomOptions::default(),
        })
        .await;
        let ServerMessage::RoomJoined { room, .. } = ada.recv().await else {
            panic!("room_joined expected");
        };
        carol
            .send(&ClientMessage::Spectate {
                code: room.code.clone(),
            })
            .await;
        carol
            .recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
            .await;
        bob.join_room(&room.code).await;
        for client in [&mut ada, &mut bob, &mut carol] {
            client.race_started().await;
        }
        let positions = [AnyGame::deal(game, seed), AnyGame::deal(game, seed)];
        let initial = face_up_cards(&positions);
        let mut watch = Watch {
            clients: [ada, bob, carol],
            read: [0; 3],
            positions,
            moves_played: [0; 2],
            seed,
            checked: 0,
            turned_up: 0,
        };
        watch.check_new(&initial, None);
        watch
    }

    fn check_new(&mut self, before: &HashSet<Card>, after: Option<&HashSet<Card>>) {
        for (index, client) in self.clients.iter().enumerate() {
            // A small seed cannot be told apart from other numbers on the
            // wire; the test servers' large seeds can.
            let seed = (self.seed > u64::from(u32::MAX)).then_some(self.seed);
            self.checked += check_frames(client, self.read[index], before, after, seed);
            self.read[index] = client.frames.len();
        }
    }

    /// Plays a move for `seat` on the server and on the truth, then checks
    /// every frame each client received meanwhile.
    async fn play(&mut self, seat: usize, text: &str) {
        let before = face_up_cards(&self.positions);
        let mv = self.positions[seat]
            .parse_move(text)
            .expect("the move parses");
        let outcome = self.positions[seat].apply(mv).expect("the move is legal");
        self.turned_up += outcome
            .effects
            .iter()
            .filter(|effect| matches!(effect, Effect::TurnedUp { .. } | Effect::Drew { .. }))
            .count();
        self.moves_played[seat] += 1;
        let after = face_up_cards(&self.positions);
        let view = self.positions[seat].view();
        let played = self.moves_played[seat];
        let [ada, bob, carol] = &mut self.clients;
        let (mover, observer) = if seat == 0 { (ada, bob) } else { (bob, ada) };
        mover.play(text).await;
        let ServerMessage::MoveAccepted { board, .. } = mover.move_answer().await else {
            panic!("{text} refused");
        };
        assert_eq!(board, view);
        for watcher in [observer, carol] {
            let progress = watcher
                .recv_until(|message| {
                    matches!(message, ServerMessage::Progress { seat: s, progress, .. }
                        if usize::from(*s) == seat && progress.moves == played)
                })
                .await;
            let ServerMessage::Progress { board, .. } = progress else {
                unreachable!()
            };
            assert_eq!(board, view, "others see the mover's public board");
        }
        // Each client's last frame is the move's own message, sent after the
        // move; everything before it was sent before the move.
        self.check_new(&before, Some(&after));
    }

    /// Ends the race (whoever still races resigns) and checks the frames
    /// before the end, then that the end reveals the seed and the salt
    /// appeared nowhere before.
    async fn finish(
        &mut self,
        still_racing: &[usize],
    ) -> Vec<patience_shared::protocol::RaceResult> {
        for &seat in still_racing {
            self.clients[seat].send(&ClientMessage::Resign).await;
        }
        let public = face_up_cards(&self.positions);
        let mut results = Vec::new();
        for index in 0..3 {
            let client = &mut self.clients[index];
            let ended = client
                .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
                .await;
            let end = client.frames.len() - 1;
            let client = &self.clients[index];
            for frame in &client.frames[self.read[index]..end] {
                let value: Value = rmp_serde::from_slice(frame).expect("MessagePack");
                let (mut cards, mut integers, mut strings) = (Vec::new(), Vec::new(), Vec::new());
                scan(&value, None, &mut cards, &mut integers, &mut strings);
                assert!(cards.iter().all(|card| public.contains(card)));
            }
            let ServerMessage::RaceEnded { result, .. } = ended else {
                unreachable!()
            };
            assert_eq!(result.reveal.seed, self.seed);
            for frame in &client.frames[..end] {
                let text = String::from_utf8_lossy(frame);
                assert!(!text.contains(&result.reveal.salt), "the salt leaked early");
            }
            results.push(result);
        }
        results
    }
}

#[tokio::test]
async fn no_face_down_card_and_no_seed_reach_anyone_before_the_end() {
    let server = start_server(|_| {}).await;
    let (seed, line) = first_deal();
    let mut watch = Watch::start(&server, GameKind::ThreeBlindMice, seed).await;
    assert!(
        face_up_cards(&watch.positions).len() < 52,
        "the deal has face-down cards"
    );
    let mut bob_racing = true;
    let mut legal = Vec::new();
    for (step, ada_move) in line.iter().enumerate() {
        watch.play(0, ada_move).await;
        // Bob plays a move of his own every third step while he can.
        if step % 3 == 1 && bob_racing {
            watch.positions[1].legal_moves(&mut legal);
            if let Some(&mv) = legal.first() {
                let text = watch.positions[1].format_move(mv);
                watch.play(1, &text).await;
            }
            bob_racing = !watch.positions[1].is_stuck();
        }
    }
    assert!(watch.positions[0].is_won());
    assert!(
        watch.turned_up > 0,
        "secret cards were turned up, so the check had something to catch"
    );
    let results = watch.finish(if bob_racing { &[1] } else { &[] }).await;
    assert!(
        watch.checked > 1_000,
        "the frames named cards: {} checked",
        watch.checked
    );
    assert_eq!(results[0].standings[0].status, PlayerStatus::Won);
    server.shutdown().await;
}

/// Where the Indian test server's seed stream starts: a seed the solver
/// proves in about a second.
const INDIAN_SEED_START: u64 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_stock_card_reaches_anyone_before_it_is_turned() {
    let server = start_server(|config| {
        config.deal_games = vec![GameKind::Indian];
        config.deal_pool_size = 1;
        config.deal_seed_start = Some(INDIAN_SEED_START);
        config.solver_budget_positions = patience_shared::solver::DEFAULT_BUDGET;
    })
    .await;
    let seed = tokio::task::spawn_blocking(|| {
        patience_shared::solver::any::first_winnable_deal(
            GameKind::Indian,
            INDIAN_SEED_START..,
            patience_shared::solver::Budget::positions(patience_shared::solver::DEFAULT_BUDGET),
        )
    })
    .await
    .expect("joins")
    .expect("replays")
    .expect("a winnable Indian deal")
    .seed;
    let mut watch = Watch::start(&server, GameKind::Indian, seed).await;
    // Both play: Ada turns the stock often, Bob makes other moves when he can.
    let mut rng = TestRng::new(11);
    let mut legal = Vec::new();
    for step in 0..60 {
        let seat = usize::from(step % 4 == 3);
        watch.positions[seat].legal_moves(&mut legal);
        if legal.is_empty() {
            continue;
        }
        let texts: Vec<String> = legal
            .iter()
            .map(|&mv| watch.positions[seat].format_move(mv))
            .collect();
        let text = match texts.iter().find(|text| *text == "s") {
            Some(draw) if seat == 0 && step % 2 == 0 => draw.clone(),
            _ => texts[rng.below(texts.len())].clone(),
        };
        watch.play(seat, &text).await;
        if watch.positions[seat].is_stuck() {
            break;
        }
    }
    assert!(
        watch.turned_up >= 10,
        "stock cards were turned: {}",
        watch.turned_up
    );
    let racing: Vec<usize> = (0..2)
        .filter(|&seat| !watch.positions[seat].is_stuck())
        .collect();
    watch.finish(&racing).await;
    assert!(watch.checked > 500, "{} cards checked", watch.checked);
    server.shutdown().await;
}
