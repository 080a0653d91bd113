//! A cluster keeps its players through what happens to Redis and to its
//! nodes, on real `redis-server`s, real server processes and one shared
//! PostgreSQL database (through `tests/with-services`): a resume token
//! leads to its race from the store once a Redis restart lost its pointer,
//! even after the owner then dies; a live owner, not another node, holds
//! its races again after a Redis restart; players and a spectator who come
//! back through another node while their node's race is taken over are
//! each seated with no error, and the race is taken over once; and quick
//! races asked at the same moment on two nodes meet, since of two rooms
//! advertised at once one is, and the other node learns which.

use std::sync::Arc;
use std::time::{Duration, Instant};

use patience_server::cluster::{Advert, Cluster, Owner, Settings};
use patience_server::matchmaking::Waiter;
use patience_server::metrics::Metrics;
use patience_server::registry::Registry;
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, RoomOptions, ServerMessage};
use patience_tests::{Client, RedisProcess, first_deal};

use crate::cluster::{DEADLINE, SharedStore, address_of, node};

/// Redis's value of `key` ("" if none).
fn get(redis: &RedisProcess, key: &str) -> String {
    redis.cli(&["GET", key])
}

/// Polls Redis until `key` holds a value, within [`DEADLINE`]; that value.
async fn first_holder(redis: &RedisProcess, key: &str) -> String {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let holder = get(redis, key);
        if !holder.is_empty() {
            return holder;
        }
        assert!(Instant::now() < deadline, "nobody ever held {key}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Polls Redis until `n` resume-token pointers are kept, within [`DEADLINE`].
async fn token_pointers(redis: &RedisProcess, n: usize) {
    let deadline = Instant::now() + DEADLINE;
    while redis.cli(&["KEYS", "patience:token:*"]).lines().count() != n {
        assert!(
            Instant::now() < deadline,
            "the token pointers never reached Redis"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Sends `request` at `address` as `name` until it is answered by anything
/// but a `redirect` (which, while a dead node's lease lasts, names that
/// node: a real client tries it, fails, and comes back), within
/// [`DEADLINE`]; that answer and the client it came on.
async fn ask_until_seated(
    address: std::net::SocketAddr,
    name: &str,
    request: ClientMessage,
) -> (ServerMessage, Client) {
    let mut client = Client::hello_to(address, name).await;
    let deadline = Instant::now() + DEADLINE;
    loop {
        client.send(&request).await;
        match client.recv().await {
            ServerMessage::Redirect { .. } if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            answer => return (answer, client),
        }
    }
}

/// A race of two on `ada`'s node: ada made it, bob joined; both
/// tokens and the code.
async fn race_of_two(ada: &mut Client, bob: &mut Client) -> (String, String, String) {
    let (code, ada_token) = ada.create_room(2, RoomOptions::default()).await;
    let (_, bob_token) = bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    (code, ada_token, bob_token)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_token_leads_to_its_race_from_the_store_after_redis_restarts() {
    let mut redis = RedisProcess::start();
    let store = SharedStore::new();
    let scan = ["--failover-scan-ms", "0"];
    let (a, a_url) = node(&redis, &store, &scan);
    let (b, _) = node(&redis, &store, &scan);
    let (_, line) = first_deal();
    let mut ada = Client::hello_to(a.address, "ada").await;
    let mut bob = Client::hello_to(a.address, "bob").await;
    let (code, ada_token, bob_token) = race_of_two(&mut ada, &mut bob).await;
    ada.play_all(&line[..2]).await;
    token_pointers(&redis, 2).await;

    // Redis comes back empty: no token leads anywhere through it.
    redis.restart();
    let restarted = Instant::now();
    assert_eq!(redis.cli(&["DBSIZE"]), "0");
    let mut ada_at_b = Client::hello_to(b.address, "ada").await;
    ada_at_b
        .send(&ClientMessage::Resume {
            token: ada_token,
            last_seq: ada.last_seq,
        })
        .await;
    assert_eq!(
        ada_at_b.recv().await,
        ServerMessage::Redirect { url: a_url },
        "the store leads B to the race, and B sends ada to its owner"
    );
    eprintln!(
        "redis restart: ada's resume at B redirected to A {} ms after Redis came back",
        restarted.elapsed().as_millis()
    );

    // The owner dies: bob's seat is still his, through B.
    a.kill();
    let killed = Instant::now();
    let resume = ClientMessage::Resume {
        token: bob_token,
        last_seq: bob.last_seq,
    };
    let (answer, mut bob_at_b) = ask_until_seated(b.address, "bob", resume).await;
    assert!(
        matches!(&answer, ServerMessage::Resumed { room, .. } if room.code == code),
        "{answer:?}"
    );
    eprintln!(
        "redis restart, then owner killed: bob resumed at B {} ms after A was killed",
        killed.elapsed().as_millis()
    );
    bob_at_b.play(&line[0]).await;
    let moved = bob_at_b.move_answer().await;
    assert!(
        matches!(moved, ServerMessage::MoveAccepted { .. }),
        "{moved:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_owner_holds_its_races_again_after_redis_restarts() {
    let mut redis = RedisProcess::start();
    let store = SharedStore::new();
    // B scans for orphaned races far more often than A renews its leases
    // (every 500 ms): B has every chance to take A's race if it may.
    let scan = ["--failover-scan-ms", "20"];
    let (a, _) = node(&redis, &store, &scan);
    let (_b, _) = node(&redis, &store, &scan);
    let (_, line) = first_deal();
    let mut ada = Client::hello_to(a.address, "ada").await;
    let mut bob = Client::hello_to(a.address, "bob").await;
    let (code, _, _) = race_of_two(&mut ada, &mut bob).await;
    token_pointers(&redis, 2).await;
    let lease_key = format!("patience:room:{code}");
    let a_holder = get(&redis, &lease_key);
    assert_eq!(a_holder.len(), 16, "A holds the race: {a_holder}");

    redis.restart();
    let restarted = Instant::now();
    let holder = first_holder(&redis, &lease_key).await;
    eprintln!(
        "redis restart: the race's lease held again {} ms after Redis came back",
        restarted.elapsed().as_millis()
    );
    assert_eq!(
        holder, a_holder,
        "the first node to hold the race after the restart is its live owner"
    );
    // Its players' token pointers, lost with Redis, are written again by
    // the renewal that took the lease back.
    token_pointers(&redis, 2).await;
    // And A's race runs on, unfenced.
    ada.play(&line[0]).await;
    let moved = ada.move_answer().await;
    assert!(
        matches!(moved, ServerMessage::MoveAccepted { .. }),
        "{moved:?}"
    );
    assert_eq!(get(&redis, &lease_key), a_holder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_a_takeover_resumes_and_a_spectator_wait_and_are_seated_by_one_takeover() {
    let redis = RedisProcess::start();
    let store = SharedStore::new();
    // No scan: the players' own resumes take the race over, at once.
    let scan = ["--failover-scan-ms", "0"];
    let (a, _) = node(&redis, &store, &scan);
    let (b, _) = node(&redis, &store, &scan);
    let (_, line) = first_deal();
    let mut ada = Client::hello_to(a.address, "ada").await;
    let mut bob = Client::hello_to(a.address, "bob").await;
    let (code, ada_token, bob_token) = race_of_two(&mut ada, &mut bob).await;
    ada.play_all(&line[..2]).await;
    token_pointers(&redis, 2).await;

    a.kill();
    let killed = Instant::now();
    // Both players and a spectator come back through B at the same moment.
    let ada_back = ClientMessage::Resume {
        token: ada_token,
        last_seq: ada.last_seq,
    };
    let bob_back = ClientMessage::Resume {
        token: bob_token,
        last_seq: bob.last_seq,
    };
    let watch = ClientMessage::Spectate { code: code.clone() };
    let (ada_answer, bob_answer, carol_answer) = tokio::join!(
        ask_until_seated(b.address, "ada", ada_back),
        ask_until_seated(b.address, "bob", bob_back),
        ask_until_seated(b.address, "carol", watch),
    );
    eprintln!(
        "failover: two players and a spectator seated at B {} ms after A was killed",
        killed.elapsed().as_millis()
    );
    let (ada_answer, mut ada_at_b) = ada_answer;
    let (bob_answer, mut bob_at_b) = bob_answer;
    for answer in [&ada_answer, &bob_answer] {
        assert!(
            matches!(answer, ServerMessage::Resumed { room, .. } if room.code == code),
            "{answer:?}"
        );
    }
    assert!(
        matches!(&carol_answer.0, ServerMessage::RoomJoined { room, seat: None, .. } if room.code == code),
        "{:?}",
        carol_answer.0
    );
    // One takeover: the room B runs was not fenced by a second claim, so
    // both players' next moves are acknowledged.
    ada_at_b.play(&line[2]).await;
    let moved = ada_at_b.move_answer().await;
    assert!(
        matches!(moved, ServerMessage::MoveAccepted { .. }),
        "{moved:?}"
    );
    bob_at_b.play(&line[0]).await;
    let moved = bob_at_b.move_answer().await;
    assert!(
        matches!(moved, ServerMessage::MoveAccepted { .. }),
        "{moved:?}"
    );
}

/// Reads the answer to `name`'s quick race on `client`, following
/// redirects (at most three, as the real client bounds them); the room's
/// code and the client seated in it.
async fn quick_seat(name: &str, mut client: Client) -> (String, Client) {
    let quick = ClientMessage::QuickRace {
        game: GameKind::ThreeBlindMice,
    };
    let mut hops = 0;
    loop {
        match client.recv().await {
            ServerMessage::RoomJoined { room, .. } => return (room.code, client),
            ServerMessage::Redirect { url } if hops < 3 => {
                hops += 1;
                client = Client::hello_to(address_of(&url), name).await;
                client.send(&quick).await;
            }
            other => panic!("{name} expected room_joined, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_races_asked_at_the_same_moment_on_two_nodes_meet() {
    let redis = RedisProcess::start();
    let store = SharedStore::new();
    let (a, _) = node(&redis, &store, &[]);
    let (b, _) = node(&redis, &store, &[]);
    let quick = ClientMessage::QuickRace {
        game: GameKind::ThreeBlindMice,
    };
    for round in 0..5 {
        let mut ada = Client::hello_to(a.address, "ada").await;
        let mut bob = Client::hello_to(b.address, "bob").await;
        tokio::join!(ada.send(&quick), bob.send(&quick));
        let ((ada_code, mut ada), (bob_code, mut bob)) =
            tokio::join!(quick_seat("ada", ada), quick_seat("bob", bob));
        assert_eq!(ada_code, bob_code, "round {round}: one room for both");
        // Both leave, so that the next round starts with no room waiting.
        for client in [&mut ada, &mut bob] {
            client.send(&ClientMessage::Leave).await;
            client
                .recv_until(|message| matches!(message, ServerMessage::Left { .. }))
                .await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_quick_race_rooms_advertised_at_once_one_is_and_a_stale_one_is_replaced() {
    let redis = RedisProcess::start();
    let metrics = Arc::new(Metrics::default());
    let join = |node: &str| {
        Cluster::connect(
            Settings {
                redis_url: redis.url(),
                public_url: format!("ws://{node}.test:7878"),
                node_id: Some(node.to_string()),
                lease_ms: 60_000,
            },
            Arc::clone(&metrics),
        )
    };
    let ((a, _a_writes), (b, _b_writes)) = match tokio::join!(join("node-a"), join("node-b")) {
        (Ok(a), Ok(b)) => (a, b),
        other => panic!("both nodes join: {other:?}"),
    };
    let registry = Registry::default();
    let a_code = a.claim_new_code(&registry).await.expect("a code");
    let b_code = b.claim_new_code(&registry).await.expect("a code");
    let game = GameKind::ThreeBlindMice;
    // Each room's waiter: its rating's estimate and when its wait began.
    let a_waiter = Waiter {
        mu: 21.5,
        since_ms: 1_000,
    };
    let b_waiter = Waiter {
        mu: 30.0,
        since_ms: 2_000,
    };
    let (a_won, b_won) = tokio::join!(
        a.advertise(game, &a_code, None, &a_waiter),
        b.advertise(game, &b_code, None, &b_waiter)
    );
    let (a_won, b_won) = (a_won.expect("asks"), b_won.expect("asks"));
    assert!(a_won != b_won, "exactly one is advertised: {a_won} {b_won}");
    let (winner_code, winner_url, winner_waiter, loser, loser_code, loser_waiter) = if a_won {
        (
            &a_code,
            "ws://node-a.test:7878",
            a_waiter,
            &b,
            &b_code,
            b_waiter,
        )
    } else {
        (
            &b_code,
            "ws://node-b.test:7878",
            b_waiter,
            &a,
            &a_code,
            a_waiter,
        )
    };
    // The other node learns which, where, and who waits there: it sends
    // its player there if their rating windows meet.
    assert_eq!(
        loser.advertised(game).await.expect("asks"),
        Some(Advert {
            code: winner_code.to_string(),
            owner: Owner::Elsewhere {
                url: winner_url.to_string()
            },
            waiter: Some(winner_waiter),
        })
    );
    // A room replaces the advertised one only if it names it as stale.
    assert!(
        !loser
            .advertise(game, loser_code, Some("ZZZZZZ"), &loser_waiter)
            .await
            .expect("asks")
    );
    assert!(
        loser
            .advertise(game, loser_code, Some(winner_code), &loser_waiter)
            .await
            .expect("asks")
    );
    assert_eq!(
        redis.cli(&["GET", "patience:quick:three-blind-mice"]),
        **loser_code
    );
    let advert = a.advertised(game).await.expect("asks");
    assert_eq!(
        advert.map(|advert| advert.waiter),
        Some(Some(loser_waiter)),
        "the new room's waiter replaces the old"
    );
}
