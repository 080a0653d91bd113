//! Quick race by rating, on the server's virtual clock: two players whose
//! ratings are far apart wait apart until their windows widen enough, then
//! one moves into the other's room; a player nobody came for is offered a
//! marked bot after the documented wait, declines it in the terminal
//! client, and races it when offered again. On two cluster nodes, a
//! player out of reach of the advertised waiter is sent to its node and
//! meets it there once their windows widen, and a waiter left behind is
//! advertised in turn. Ratings are given by name (`EstimatesByName`), as
//! if each had raced before.

use std::net::SocketAddr;
use std::sync::Arc;

use patience_cli::config::Store;
use patience_cli::session::{Entry, Session};
use patience_cli::tui::online::{self, Ending};
use patience_server::Server;
use patience_server::clock::Clock;
use patience_server::matchmaking::{BOT_OFFER_AFTER_MS, EstimatesByName, Ratings, STEP_MS};
use patience_server::store::postgres::ScratchDatabase;
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, ServerMessage};
use patience_tests::{Client, DAY_START, RedisProcess, free_port, start_server};
use ratatui::crossterm::event::KeyCode;
use tokio::sync::{mpsc, watch};

use crate::lobby::{press, until_drawn};
use crate::screen::{PATIENCE, TestScreen};

const GAME: GameKind = GameKind::ThreeBlindMice;

fn ratings(estimates: &[(&str, f64)]) -> Ratings {
    let by_name = estimates
        .iter()
        .map(|(name, mu)| (name.to_string(), *mu))
        .collect();
    Ratings::new(Arc::new(EstimatesByName(by_name)))
}

/// Asks for a quick race and returns the code of the room given.
async fn quick_race(client: &mut Client) -> String {
    client.send(&ClientMessage::QuickRace { game: GAME }).await;
    match client
        .recv_until(|message| matches!(message, ServerMessage::RoomJoined { .. }))
        .await
    {
        ServerMessage::RoomJoined { room, .. } => room.code,
        _ => unreachable!("recv_until returns what it waited for"),
    }
}

/// The next `quick_race_wait`, as (waited, window, bot offered, waiting,
/// racing).
async fn next_wait(client: &mut Client) -> (u64, Option<u8>, bool, u32, u32) {
    match client
        .recv_until(|message| matches!(message, ServerMessage::QuickRaceWait { .. }))
        .await
    {
        ServerMessage::QuickRaceWait {
            waited_ms,
            window,
            bot_offer,
            waiting,
            racing,
            ..
        } => (waited_ms, window, bot_offer, waiting, racing),
        _ => unreachable!("recv_until returns what it waited for"),
    }
}

/// Waits until a frame drawn no longer holds `text`.
async fn until_gone(frames: &mut watch::Receiver<String>, text: &str) {
    let waiting = async {
        while frames.borrow_and_update().contains(text) {
            if frames.changed().await.is_err() {
                panic!("the screen ended still drawing {text:?}");
            }
        }
    };
    if tokio::time::timeout(PATIENCE, waiting).await.is_err() {
        panic!("the screen kept drawing {text:?}:\n{}", *frames.borrow());
    }
}

#[tokio::test]
async fn far_ratings_wait_apart_until_their_windows_widen_then_meet() {
    let clock = Clock::virtual_at(DAY_START);
    let server = start_server(|config| {
        config.clock = clock.clone();
        // Ten points apart: a window of 4 + 2 per 10 s reaches 10 at 30 s.
        config.ratings = ratings(&[("ada", 20.0), ("bob", 30.0)]);
    })
    .await;
    let mut ada = Client::hello(&server, "ada").await;
    let mut bob = Client::hello(&server, "bob").await;
    let adas_room = quick_race(&mut ada).await;
    assert_eq!(next_wait(&mut ada).await, (0, Some(4), false, 1, 0));
    let bobs_room = quick_race(&mut bob).await;
    assert_ne!(adas_room, bobs_room, "bob is out of ada's window at first");
    assert_eq!(next_wait(&mut bob).await, (0, Some(4), false, 2, 0));

    // Each step both are looked at and told; neither moves before 30 s.
    for step in 1..=2 {
        clock.advance(STEP_MS);
        let waited = step * STEP_MS;
        let window = Some(4 + 2 * u8::try_from(step).expect("a small step"));
        assert_eq!(next_wait(&mut ada).await, (waited, window, false, 2, 0));
        assert_eq!(next_wait(&mut bob).await, (waited, window, false, 2, 0));
    }

    clock.advance(STEP_MS);
    // They began at the same moment: the room with the later code moves.
    let (stays, mover, kept_room, left_room) = if adas_room < bobs_room {
        (&mut ada, &mut bob, adas_room, bobs_room)
    } else {
        (&mut bob, &mut ada, bobs_room, adas_room)
    };
    let mut left = false;
    let joined = loop {
        match mover.recv().await {
            ServerMessage::Left { code } => {
                assert_eq!(code, left_room);
                left = true;
            }
            ServerMessage::RoomJoined { room, seat, .. } => break (room.code, seat),
            _ => {}
        }
    };
    assert_eq!(joined, (kept_room.clone(), Some(1)));
    if !left {
        mover
            .recv_until(
                |message| matches!(message, ServerMessage::Left { code } if *code == left_room),
            )
            .await;
    }
    let update = stays
        .recv_until(|message| {
            matches!(message, ServerMessage::RoomUpdate { room, .. } if room.players.len() == 2)
        })
        .await;
    assert!(matches!(update, ServerMessage::RoomUpdate { room, .. } if room.code == kept_room));
    server.shutdown().await;
}

#[tokio::test]
async fn a_waiting_player_declines_the_bot_then_races_it_in_the_terminal() {
    let clock = Clock::virtual_at(DAY_START);
    let server = start_server(|config| config.clock = clock.clone()).await;
    let url = format!("ws://{}/", server.address());
    let (session, notes) = Session::start(&url, "ada", Entry::Quick(GAME), Store::none())
        .await
        .expect("ada waits for a quick race");
    let (screen, mut frames) = TestScreen::new(110, 34);
    let (keys, mut events) = mpsc::channel(16);
    let playing = tokio::spawn(async move {
        let mut screen = screen;
        online::run(&mut screen, &mut events, session, notes).await
    });
    until_drawn(
        &mut frames,
        "ada",
        "waiting 0s, rivals within 4 rating points",
    )
    .await;
    until_drawn(&mut frames, "ada", "1 waiting, 0 racing").await;

    clock.advance(BOT_OFFER_AFTER_MS);
    until_drawn(&mut frames, "ada", "Press b to race a server bot now").await;
    press(&keys, KeyCode::Char('w')).await;
    // Keeping waiting withdraws the offer and nothing else: the wait is
    // still counted from the start, and the window stays open.
    until_gone(&mut frames, "Press b to race").await;
    assert!(frames.borrow().contains("waiting 90s, open to any rival"));

    clock.advance(BOT_OFFER_AFTER_MS);
    until_drawn(&mut frames, "ada", "Press b to race a server bot now").await;
    press(&keys, KeyCode::Char('b')).await;
    until_drawn(&mut frames, "ada", "2/2 players · private").await;
    until_drawn(&mut frames, "ada", "bot (normal)").await;

    press(&keys, KeyCode::Char('q')).await;
    press(&keys, KeyCode::Char('y')).await;
    let ending = tokio::time::timeout(PATIENCE, playing)
        .await
        .expect("the screen ends")
        .expect("the screen's task ends")
        .expect("the loop runs");
    match ending {
        Ending::Leave(session) => session.leave().await,
        Ending::Close(session) => session.close().await,
        Ending::Failed { error, .. } => panic!("ada's connection failed: {error}"),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_bot_is_refused_to_whoever_was_not_offered_one() {
    let clock = Clock::virtual_at(DAY_START);
    let server = start_server(|config| config.clock = clock.clone()).await;
    let mut ada = Client::hello(&server, "ada").await;
    ada.send(&ClientMessage::QuickRaceAnswer { bot: true })
        .await;
    assert!(matches!(
        ada.recv().await,
        ServerMessage::Error {
            code: patience_shared::protocol::ErrorCode::InvalidRequest,
            ..
        }
    ));
    quick_race(&mut ada).await;
    next_wait(&mut ada).await;
    ada.send(&ClientMessage::QuickRaceAnswer { bot: true })
        .await;
    assert!(matches!(
        ada.recv_until(|message| matches!(message, ServerMessage::Error { .. }))
            .await,
        ServerMessage::Error {
            code: patience_shared::protocol::ErrorCode::InvalidRequest,
            ..
        }
    ));
    server.shutdown().await;
}

/// A cluster node in this process, on the test's Redis, database and
/// virtual clock, with the players' estimates given by name.
async fn cluster_node(
    redis: &RedisProcess,
    database: &ScratchDatabase,
    clock: &Clock,
    estimates: &[(&str, f64)],
) -> (Server, String) {
    let port = free_port();
    let url = format!("ws://127.0.0.1:{port}");
    let server = start_server(|config| {
        config.listen = SocketAddr::from(([127, 0, 0, 1], port));
        config.public_url = Some(url.clone());
        config.redis_url = Some(redis.url());
        config.database_url = Some(database.url().parse().expect("a database URL"));
        config.clock = clock.clone();
        config.ratings = ratings(estimates);
        // A room of two is full once two meet: no third waiter joins its
        // countdown.
        config.quick_race_seats = 2;
    })
    .await;
    (server, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn far_ratings_asked_at_two_nodes_wait_on_one_and_meet_and_a_waiter_left_is_advertised() {
    let redis = RedisProcess::start();
    let database = ScratchDatabase::create();
    let clock = Clock::virtual_at(DAY_START);
    let estimates = [("ada", 20.0), ("bob", 30.0), ("eve", 80.0)];
    let (a, a_url) = cluster_node(&redis, &database, &clock, &estimates).await;
    let (b, _) = cluster_node(&redis, &database, &clock, &estimates).await;
    let advertised = || redis.cli(&["GET", "patience:quick:three-blind-mice"]);

    let mut ada = Client::hello(&a, "ada").await;
    let adas_room = quick_race(&mut ada).await;
    next_wait(&mut ada).await;
    assert_eq!(advertised(), adas_room, "A advertises ada's room");
    // bob asks at B, out of ada's window: he is sent to A to wait there.
    let mut bob_at_b = Client::hello(&b, "bob").await;
    bob_at_b
        .send(&ClientMessage::QuickRace { game: GAME })
        .await;
    assert_eq!(
        bob_at_b.recv().await,
        ServerMessage::Redirect { url: a_url.clone() }
    );
    let mut bob = Client::hello(&a, "bob").await;
    let bobs_room = quick_race(&mut bob).await;
    assert_ne!(bobs_room, adas_room, "bob waits in a room of his own");
    next_wait(&mut bob).await;
    // eve, far from both, waits at A too, unadvertised.
    let mut eve = Client::hello(&a, "eve").await;
    let eves_room = quick_race(&mut eve).await;
    next_wait(&mut eve).await;
    assert_eq!(advertised(), adas_room);

    // At 30 s ada's and bob's windows meet (10 points apart): one moves.
    for _ in 0..3 {
        clock.advance(STEP_MS);
    }
    let (stays, kept_room) = if adas_room < bobs_room {
        (&mut ada, adas_room.clone())
    } else {
        (&mut bob, bobs_room.clone())
    };
    stays
        .recv_until(|message| {
            matches!(message, ServerMessage::RoomUpdate { room, .. }
                if room.code == kept_room && room.players.len() == 2)
        })
        .await;
    // Its countdown runs on the virtual clock too.
    clock.advance(1_000);
    stays
        .recv_until(|message| matches!(message, ServerMessage::RaceStarted { .. }))
        .await;

    // The advertised room races: at eve's next look her room is advertised,
    // so that a quick race asked at any node finds her.
    clock.advance(STEP_MS - 1_000);
    loop {
        let (waited, ..) = next_wait(&mut eve).await;
        if waited >= 4 * STEP_MS {
            break;
        }
    }
    assert_eq!(advertised(), eves_room, "kept {kept_room}");
    a.shutdown().await;
    b.shutdown().await;
}
