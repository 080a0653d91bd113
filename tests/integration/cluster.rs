//! Several nodes behind one Redis and one PostgreSQL: two real server
//! processes, a real `redis-server` (started here in a directory of its
//! own, on a Unix socket; the tests fail, not pass, without it) and a
//! database of the test's own on the PostgreSQL server `tests/with-services`
//! starts, which every node of the test shares. A room made on one node
//! is joined, watched and resumed through the other by `redirect`, with
//! the test client and with the real client's session; a quick race meets
//! players who came to different nodes; `/healthz` answers 503 once Redis
//! is gone; a renewal never extends a lease another node holds, and a room
//! whose lease another node took closes; a resume token issued while Redis
//! refuses writes reaches it once Redis takes them again; a race
//! whose node is killed runs on at a node that shares its store, reached
//! by the real client through the node it started with; and a player's one
//! daily attempt is the same attempt at every node, and one only, and a day
//! followed at one node is live with the attempts played at the other.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use patience_cli::config::Store;
use patience_cli::session::{Entry, Session};
use patience_server::cluster::{Cluster, Owner, Settings};
use patience_server::metrics::Metrics;
use patience_server::registry::Registry;
use patience_server::store::postgres::ScratchDatabase;
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, ErrorCode, RoomOptions, ServerMessage};
use patience_tests::{Client, RedisProcess, ServerProcess, daily_deal, first_deal, free_port};

/// Leases short enough that a lapse is seen quickly, long enough that a
/// loaded test machine renews in time (every 500 ms).
pub(crate) const LEASE_MS: &str = "1500";

/// Longest a test polls for something to happen.
pub(crate) const DEADLINE: Duration = Duration::from_secs(20);

/// What a test's nodes share: one PostgreSQL database, as a cluster's
/// nodes do, and a directory for their settings and the clients' files.
pub(crate) struct SharedStore {
    database: ScratchDatabase,
    directory: tempfile::TempDir,
}

impl SharedStore {
    pub(crate) fn new() -> SharedStore {
        SharedStore {
            database: ScratchDatabase::create(),
            directory: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    fn path(&self) -> &Path {
        self.directory.path()
    }
}

/// A cluster node on a port of its own, on the test's shared database,
/// whose public URL is returned.
pub(crate) fn node(
    redis: &RedisProcess,
    store: &SharedStore,
    extra: &[&str],
) -> (ServerProcess, String) {
    let (flags, url) = node_flags(redis, extra);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let settings = store
        .path()
        .join(format!("node-{}", address_of(&url).port()));
    std::fs::create_dir_all(&settings).expect("the node's directory is made");
    let server = ServerProcess::start_on_postgres(&settings, store.database.url(), &flags);
    (server, url)
}

fn node_flags(redis: &RedisProcess, extra: &[&str]) -> (Vec<String>, String) {
    let port = free_port();
    let url = format!("ws://127.0.0.1:{port}");
    let mut flags: Vec<String> = [
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--public-url",
        &url,
        "--redis-url",
        &redis.url(),
        "--node-lease-ms",
        LEASE_MS,
    ]
    .iter()
    .map(|flag| flag.to_string())
    .collect();
    flags.extend(extra.iter().map(|flag| flag.to_string()));
    (flags, url)
}

/// The address of a `ws://host:port` URL.
pub(crate) fn address_of(url: &str) -> SocketAddr {
    url.strip_prefix("ws://")
        .map(|rest| rest.trim_end_matches('/'))
        .and_then(|address| address.parse().ok())
        .unwrap_or_else(|| panic!("not a ws:// URL of an address: {url}"))
}

/// Sends `resume` on `client` until the answer is no longer
/// `invalid_resume_token`: the token's pointer reaches Redis off the
/// room's path, a moment after the token is issued.
async fn resume_until_known(client: &mut Client, token: &str, last_seq: u64) -> ServerMessage {
    let deadline = Instant::now() + DEADLINE;
    loop {
        client
            .send(&ClientMessage::Resume {
                token: token.to_string(),
                last_seq,
            })
            .await;
        match client.recv().await {
            ServerMessage::Error {
                code: ErrorCode::InvalidResumeToken,
                ..
            } if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            answer => return answer,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_on_one_node_is_joined_watched_and_resumed_through_the_other() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let (a, a_url) = node(&redis, &data, &[]);
    let (b, _) = node(&redis, &data, &[]);
    assert_eq!(a.address, address_of(&a_url));

    let mut ada = Client::hello_to(a.address, "ada").await;
    let (code, ada_token) = ada.create_room(2, RoomOptions::default()).await;
    assert_eq!(
        redis.cli(&["GET", &format!("patience:room:{code}")]).len(),
        16,
        "the room's lease names A's random node id"
    );

    // Bob asks B, is sent to A, and the same request there seats him.
    let mut bob_at_b = Client::hello_to(b.address, "bob").await;
    let join = ClientMessage::JoinRoom { code: code.clone() };
    bob_at_b.send(&join).await;
    assert_eq!(
        bob_at_b.recv().await,
        ServerMessage::Redirect { url: a_url.clone() }
    );
    // The redirected connection stays open, greeted and in no room; a code
    // no node has is still not found.
    bob_at_b
        .send(&ClientMessage::JoinRoom {
            code: "777777".to_string(),
        })
        .await;
    assert_eq!(bob_at_b.next_error().await, ErrorCode::RoomNotFound);
    let mut bob = Client::hello_to(address_of(&a_url), "bob").await;
    let (joined, _) = bob.join_room(&code).await;
    assert_eq!(joined, code);
    ada.race_started().await;
    bob.race_started().await;

    // Carol watches through B, the same way.
    let mut carol_at_b = Client::hello_to(b.address, "carol").await;
    let spectate = ClientMessage::Spectate { code: code.clone() };
    carol_at_b.send(&spectate).await;
    assert_eq!(
        carol_at_b.recv().await,
        ServerMessage::Redirect { url: a_url.clone() }
    );
    let mut carol = Client::hello_to(a.address, "carol").await;
    carol.send(&spectate).await;
    let watching = carol
        .recv_until(|message| matches!(message, ServerMessage::RoomJoined { .. }))
        .await;
    assert!(
        matches!(watching, ServerMessage::RoomJoined { seat: None, .. }),
        "{watching:?}"
    );

    // Ada's token, used at B, is sent to A: any node finds a token's room.
    let mut ada_at_b = Client::hello_to(b.address, "ada").await;
    let answer = resume_until_known(&mut ada_at_b, &ada_token, ada.last_seq).await;
    assert_eq!(answer, ServerMessage::Redirect { url: a_url.clone() });
    let mut ada_again = Client::hello_to(a.address, "ada").await;
    ada_again
        .send(&ClientMessage::Resume {
            token: ada_token,
            last_seq: ada.last_seq,
        })
        .await;
    let resumed = ada_again
        .recv_until(|message| matches!(message, ServerMessage::Resumed { .. }))
        .await;
    assert!(
        matches!(&resumed, ServerMessage::Resumed { room, .. } if room.code == code),
        "{resumed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_client_follows_a_redirect_and_saves_its_seat_at_the_owner() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let (a, a_url) = node(&redis, &data, &[]);
    let (_b, b_url) = node(&redis, &data, &[]);
    let mut ada = Client::hello_to(a.address, "ada").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;

    let store = Store::in_directory(data.path().join("bob-config"));
    let (bob, _) = Session::start(&b_url, "bob", Entry::Join(code.clone()), store.clone())
        .await
        .expect("bob is seated through the redirect");
    assert_eq!(
        bob.state.room.as_ref().map(|room| room.code.clone()),
        Some(code.clone())
    );
    let seat = store.load().seat.expect("the seat is saved");
    assert_eq!(
        (seat.server.as_str(), seat.code.as_str()),
        (a_url.as_str(), code.as_str()),
        "the saved seat names the node the room is on"
    );
    ada.race_started().await;
    bob.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_race_meets_players_who_came_to_different_nodes() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let (a, a_url) = node(&redis, &data, &[]);
    let (b, _) = node(&redis, &data, &[]);
    let quick = ClientMessage::QuickRace {
        game: GameKind::ThreeBlindMice,
    };

    let mut ada = Client::hello_to(a.address, "ada").await;
    ada.send(&quick).await;
    let code = match ada.recv().await {
        ServerMessage::RoomJoined { room, .. } => room.code,
        other => panic!("expected room_joined, got {other:?}"),
    };
    // A connection's messages are handled in order, and the room is
    // advertised before ada's next one is: its answer says it is done.
    ada.send(&ClientMessage::JoinRoom { code: code.clone() })
        .await;
    assert_eq!(ada.next_error().await, ErrorCode::AlreadyInRoom);
    assert_eq!(
        redis.cli(&["GET", "patience:quick:three-blind-mice"]),
        code,
        "A advertises its waiting room"
    );

    let mut bob_at_b = Client::hello_to(b.address, "bob").await;
    bob_at_b.send(&quick).await;
    assert_eq!(
        bob_at_b.recv().await,
        ServerMessage::Redirect { url: a_url.clone() }
    );
    let mut bob = Client::hello_to(address_of(&a_url), "bob").await;
    bob.send(&quick).await;
    match bob.recv().await {
        ServerMessage::RoomJoined { room, .. } => assert_eq!(room.code, code),
        other => panic!("expected room_joined, got {other:?}"),
    }
    let ada_commitment = ada.race_started().await;
    assert_eq!(bob.race_started().await, ada_commitment, "one race");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_racer_hears_how_many_wait_and_race_on_every_node() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let (a, _) = node(&redis, &data, &[]);
    let (b, _) = node(&redis, &data, &[]);
    // cid and dan race at B, in a private room.
    let mut cid = Client::hello_to(b.address, "cid").await;
    let (code, _) = cid.create_room(2, RoomOptions::default()).await;
    let mut dan = Client::hello_to(b.address, "dan").await;
    dan.join_room(&code).await;
    cid.race_started().await;
    dan.race_started().await;

    // ada waits at A. B's counts reach A with B's next renewal: until then
    // ada asks again (each new wait is told at once).
    let quick = ClientMessage::QuickRace {
        game: GameKind::ThreeBlindMice,
    };
    let mut ada = Client::hello_to(a.address, "ada").await;
    let deadline = Instant::now() + DEADLINE;
    loop {
        ada.send(&quick).await;
        let counts = match ada
            .recv_until(|message| matches!(message, ServerMessage::QuickRaceWait { .. }))
            .await
        {
            ServerMessage::QuickRaceWait {
                waiting, racing, ..
            } => (waiting, racing),
            _ => unreachable!("recv_until returns what it waited for"),
        };
        if counts == (1, 2) {
            break;
        }
        assert_eq!(
            counts,
            (1, 0),
            "ada alone waits; B's racers, once published"
        );
        assert!(
            Instant::now() < deadline,
            "B's racers were never counted at A"
        );
        ada.send(&ClientMessage::Leave).await;
        ada.recv_until(|message| matches!(message, ServerMessage::Left { .. }))
            .await;
    }
}

/// `GET path` on an admin port, the whole answer.
fn http_get(address: SocketAddr, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address).expect("admin port connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").expect("request sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer read");
    answer
}

/// The value of one metric line of `/metrics`.
fn metric(admin: SocketAddr, name: &str) -> Option<String> {
    let text = http_get(admin, "/metrics");
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")).map(str::to_string))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_503_once_redis_is_gone_and_metrics_count_the_cluster() {
    let mut redis = RedisProcess::start();
    let data = tempfile::tempdir().expect("a temporary directory");
    let (flags, _) = node_flags(&redis, &[]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let (a, admin) = ServerProcess::start_with_admin(&data.path().join("a"), &flags);
    let store = SharedStore::new();
    let (b, _) = node(&redis, &store, &[]);
    assert!(
        http_get(admin, "/healthz").starts_with("HTTP/1.1 200 OK"),
        "healthy with Redis up"
    );
    assert_eq!(
        metric(admin, "patience_cluster_leases_held").as_deref(),
        Some("0")
    );
    let mut ada = Client::hello_to(b.address, "ada").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    let mut bob = Client::hello_to(a.address, "bob").await;
    bob.send(&ClientMessage::JoinRoom { code }).await;
    assert!(matches!(bob.recv().await, ServerMessage::Redirect { .. }));
    assert_eq!(
        metric(admin, "patience_cluster_redirects_total").as_deref(),
        Some("1")
    );
    let _ = bob.create_room(2, RoomOptions::default()).await;
    assert_eq!(
        metric(admin, "patience_cluster_leases_held").as_deref(),
        Some("1")
    );

    redis.kill();
    let deadline = Instant::now() + DEADLINE;
    let answer = loop {
        let answer = http_get(admin, "/healthz");
        if answer.starts_with("HTTP/1.1 503") || Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("redis unreachable"), "{answer}");
    // And a room cannot open: its code could not be made unique.
    let mut carol = Client::hello_to(a.address, "carol").await;
    carol
        .send(&ClientMessage::CreateRoom {
            game: GameKind::ThreeBlindMice,
            max_players: 2,
            public: false,
            options: RoomOptions::default(),
            bots: Vec::new(),
        })
        .await;
    assert_eq!(carol.next_error().await, ErrorCode::Internal);
    // A leaderboard change made now (a daily attempt begun) cannot reach
    // the other nodes: it is counted as a write given up.
    assert_eq!(
        metric(admin, "patience_cluster_writes_dropped_total").as_deref(),
        Some("0")
    );
    let mut dan = Client::hello_to(a.address, "dan").await;
    dan.register("dan").await;
    dan.daily_play().await;
    let dropped = metric_until(admin, "patience_cluster_writes_dropped_total", |n| n > 0).await;
    assert_eq!(dropped, 1, "the attempt's change was not relayed");
    drop(a);
}

/// Polls `metric` on `admin` until `wanted` holds of its value, within
/// [`DEADLINE`]; answers the last value read.
async fn metric_until(admin: SocketAddr, name: &str, wanted: impl Fn(u64) -> bool) -> u64 {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let value = metric(admin, name)
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("/metrics shows {name}"));
        if wanted(value) || Instant::now() > deadline {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_issued_while_redis_refuses_writes_reaches_it_once_it_takes_them_again() {
    let redis = RedisProcess::start();
    let data = tempfile::tempdir().expect("a temporary directory");
    let (a_flags, a_url) = node_flags(&redis, &[]);
    let a_flags: Vec<&str> = a_flags.iter().map(String::as_str).collect();
    let (a, a_admin) = ServerProcess::start_with_admin(&data.path().join("a"), &a_flags);
    let (b_flags, _) = node_flags(&redis, &[]);
    let b_flags: Vec<&str> = b_flags.iter().map(String::as_str).collect();
    let (b, _) = ServerProcess::start_with_admin(&data.path().join("b"), &b_flags);
    let tokens = || redis.cli(&["KEYS", "patience:token:*"]).lines().count();

    let mut ada = Client::hello_to(a.address, "ada").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    // Redis now refuses every write (it has no replica), reads still pass.
    assert_eq!(
        redis.cli(&["CONFIG", "SET", "min-replicas-to-write", "1"]),
        "OK"
    );
    let mut bob = Client::hello_to(a.address, "bob").await;
    let (_, bob_token) = bob.join_room(&code).await;
    let deferred = metric_until(a_admin, "patience_cluster_writes_deferred_total", |n| n > 0).await;
    assert!(
        deferred > 0,
        "the pointer of bob's token failed to reach Redis"
    );
    assert_eq!(
        metric(a_admin, "patience_cluster_writes_pending").as_deref(),
        Some("1"),
        "and is still owed"
    );
    assert_eq!(tokens(), 1, "only ada's pointer, set before: {}", tokens());
    assert_eq!(
        redis.cli(&["CONFIG", "SET", "min-replicas-to-write", "0"]),
        "OK"
    );

    // Nobody does anything more at A: its pointer arrives by itself, and
    // bob's token, used at B, is sent to A.
    let mut bob_at_b = Client::hello_to(b.address, "bob").await;
    let answer = resume_until_known(&mut bob_at_b, &bob_token, bob.last_seq).await;
    assert_eq!(answer, ServerMessage::Redirect { url: a_url });
    assert_eq!(tokens(), 2);
    let pending = metric_until(a_admin, "patience_cluster_writes_pending", |n| n == 0).await;
    assert_eq!(pending, 0, "nothing is owed once it is written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_keeps_this_nodes_leases_and_never_extends_another_nodes() {
    let redis = RedisProcess::start();
    let metrics = Arc::new(Metrics::default());
    let settings = Settings {
        redis_url: redis.url(),
        public_url: "ws://127.0.0.1:1".to_string(),
        node_id: Some("node-a".to_string()),
        lease_ms: 60_000,
    };
    let (cluster, _writes) = Cluster::connect(settings, Arc::clone(&metrics))
        .await
        .expect("joins");
    // The node is registered under a lease, with its public URL.
    assert_eq!(
        redis.cli(&["GET", "patience:node:node-a"]),
        "ws://127.0.0.1:1"
    );
    let ttl: i64 = redis
        .cli(&["PTTL", "patience:node:node-a"])
        .parse()
        .expect("a number");
    assert!(
        (1..=60_000).contains(&ttl),
        "the node's key lapses within a lease: {ttl} ms"
    );
    let registry = Registry::default();
    let kept = cluster.claim_new_code(&registry).await.expect("a code");
    let lost = cluster.claim_new_code(&registry).await.expect("a code");
    assert_ne!(kept, lost);
    // `lost`'s lease lapsed and node-b took it, with a short lease.
    let lost_key = format!("patience:room:{lost}");
    redis.cli(&["SET", &lost_key, "node-b", "PX", "5000"]);
    assert!(!cluster.claim_existing(&lost).await.expect("asks"));

    cluster.renew_once(&registry).await.expect("renews");
    assert!(cluster.holds(&kept));
    assert!(!cluster.holds(&lost), "a lost lease is forgotten");
    assert_eq!(metrics.cluster_leases_lost.load(Ordering::Relaxed), 1);
    assert_eq!(redis.cli(&["GET", &lost_key]), "node-b");
    let ttl: u64 = redis.cli(&["PTTL", &lost_key]).parse().expect("a number");
    assert!(ttl <= 5000, "node-b's lease was not extended: {ttl} ms");
    let ttl: u64 = redis
        .cli(&["PTTL", &format!("patience:room:{kept}")])
        .parse()
        .expect("a number");
    assert!(ttl > 5000, "ours was: {ttl} ms");
    assert_eq!(cluster.owner(&kept).await.expect("asks"), Owner::Here);
    // A lease that lapsed with nobody taking it (Redis restarted empty)
    // is taken back by the next renewal.
    let kept_key = format!("patience:room:{kept}");
    redis.cli(&["DEL", &kept_key]);
    cluster.renew_once(&registry).await.expect("renews");
    assert_eq!(redis.cli(&["GET", &kept_key]), "node-a");
    assert!(cluster.holds(&kept));
    assert_eq!(metrics.cluster_leases_lost.load(Ordering::Relaxed), 1);
    // node-b registered no URL: nobody to send a player to.
    assert_eq!(cluster.owner(&lost).await.expect("asks"), Owner::Nobody);

    cluster.release(&kept);
    assert!(!cluster.holds(&kept));
    cluster.leave().await.expect("leaves");
    assert_eq!(redis.cli(&["EXISTS", "patience:node:node-a"]), "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_race_whose_node_dies_is_taken_over_by_the_scan_of_a_node_sharing_its_store() {
    // The scan runs before ada comes back (she waits for B to hold it).
    failover("300", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_race_whose_node_dies_is_taken_over_when_a_player_resumes_at_another_node() {
    // No scan: ada's resume at B, once A's lease lapsed, takes it over.
    failover("0", false).await;
}

/// Two nodes on one store; A runs a race and is killed; ada resumes at B.
async fn failover(scan_ms: &str, wait_for_the_scan: bool) {
    let redis = RedisProcess::start();
    let store = SharedStore::new();
    let scan = ["--failover-scan-ms", scan_ms];
    let (a, a_url) = node(&redis, &store, &scan);
    let (b, _) = node(&redis, &store, &scan);
    let (_, line) = first_deal();

    let mut ada = Client::hello_to(a.address, "ada").await;
    let (code, ada_token) = ada.create_room(2, RoomOptions::default()).await;
    let mut bob = Client::hello_to(a.address, "bob").await;
    bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    // Three moves acknowledged at A.
    let acknowledged = 3;
    ada.play_all(&line[..acknowledged]).await;
    // B sees the race in the store but leaves it to its owner.
    let mut watcher = Client::hello_to(b.address, "carol").await;
    watcher
        .send(&ClientMessage::Spectate { code: code.clone() })
        .await;
    assert_eq!(
        watcher.recv().await,
        ServerMessage::Redirect { url: a_url.clone() }
    );

    let lease_key = format!("patience:room:{code}");
    let a_holder = redis.cli(&["GET", &lease_key]);
    a.kill();
    let killed = Instant::now();
    if wait_for_the_scan {
        let deadline = killed + DEADLINE;
        loop {
            let holder = redis.cli(&["GET", &lease_key]);
            if !holder.is_empty() && holder != a_holder {
                break;
            }
            assert!(Instant::now() < deadline, "B never took the race over");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        eprintln!(
            "failover: B's scan held the race {} ms after A was killed (lease {LEASE_MS} ms, scan {scan_ms} ms)",
            killed.elapsed().as_millis()
        );
    }
    // Ada comes back through B: redirected to A while A's lease lasts,
    // then seated, never refused (a resume during the takeover waits).
    let mut ada_at_b = Client::hello_to(b.address, "ada").await;
    let deadline = killed + DEADLINE;
    let resumed = loop {
        ada_at_b
            .send(&ClientMessage::Resume {
                token: ada_token.clone(),
                last_seq: ada.last_seq,
            })
            .await;
        match ada_at_b.recv().await {
            message @ ServerMessage::Resumed { .. } => break message,
            ServerMessage::Redirect { .. } if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => panic!("expected resumed at B, got {other:?}"),
        }
    };
    eprintln!(
        "failover: ada resumed at B {} ms after A was killed (lease {LEASE_MS} ms, scan {scan_ms} ms)",
        killed.elapsed().as_millis()
    );
    assert!(
        matches!(&resumed, ServerMessage::Resumed { room, .. } if room.code == code),
        "{resumed:?}"
    );
    // Every move A acknowledged is on her board at B (a race rebuilt from
    // the store has no events to replay: she gets a snapshot), and the
    // next one of the line follows them.
    let kept = match ada_at_b
        .recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await
    {
        ServerMessage::Snapshot {
            race: Some(race), ..
        } => race
            .boards
            .iter()
            .find(|board| board.seat == 0)
            .map(|board| board.progress.moves),
        other => panic!("ada gets a snapshot of the race at B: {other:?}"),
    };
    assert_eq!(kept, Some(acknowledged as u32), "moves kept at B");
    ada_at_b.play(&line[acknowledged]).await;
    let answer = ada_at_b.move_answer().await;
    assert!(
        matches!(answer, ServerMessage::MoveAccepted { .. }),
        "{answer:?}"
    );
    let holder = redis.cli(&["GET", &lease_key]);
    assert!(
        holder.len() == 16 && holder != a_holder,
        "B holds the room's lease now: {holder} (A was {a_holder})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_whose_lease_another_node_took_closes_without_a_word() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let (a, _) = node(&redis, &data, &[]);
    let mut ada = Client::hello_to(a.address, "ada").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    redis.cli(&[
        "SET",
        &format!("patience:room:{code}"),
        "node-b",
        "PX",
        "60000",
    ]);
    // At A's next renewal (a third of a lease), the room closes here, and
    // ada is closed with no reason, so that her client resumes (and is
    // sent to node-b).
    let closed = ada.closed().await;
    assert!(
        !closed
            .messages
            .iter()
            .any(|message| matches!(message, ServerMessage::Error { .. })),
        "{closed:?}"
    );
    let mut bob = Client::hello_to(a.address, "bob").await;
    bob.send(&ClientMessage::JoinRoom { code }).await;
    assert_eq!(
        bob.next_error().await,
        ErrorCode::RoomNotFound,
        "node-b has no URL"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_client_resumes_through_the_first_node_when_the_owner_dies() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let scan = ["--failover-scan-ms", "0"];
    let (a, _) = node(&redis, &data, &scan);
    let (_b, b_url) = node(&redis, &data, &scan);
    let mut bob = Client::hello_to(a.address, "bob").await;
    let (code, _) = bob.create_room(2, RoomOptions::default()).await;

    // Ada starts at B and is sent to A, where the race runs.
    let config = Store::in_directory(data.path().join("ada-config"));
    let (mut ada, _) = Session::start(&b_url, "ada", Entry::Join(code.clone()), config.clone())
        .await
        .expect("ada is seated through the redirect");
    bob.race_started().await;
    let patience = Instant::now() + DEADLINE;
    while ada.state.phase() != Some(patience_shared::protocol::Phase::Racing) {
        tokio::time::timeout_at(patience.into(), ada.recv())
            .await
            .expect("the race starts in time")
            .expect("the connection stays up");
    }

    a.kill();
    // Her session finds A gone, tries B, the server it started with, and
    // B, once A's lease lapsed, takes the race over and seats her.
    // The session's own task resumes, and `recv` hands on the answer.
    let (after, _) = tokio::time::timeout(DEADLINE, ada.recv())
        .await
        .expect("ada is back in time")
        .expect("her session reconnects");
    assert!(
        matches!(&after, ServerMessage::Resumed { room, .. } if room.code == code),
        "{after:?}"
    );
    assert_eq!(
        ada.state.room.as_ref().map(|room| room.code.clone()),
        Some(code)
    );
    let seat = config.load().seat.expect("the new token is saved");
    assert_eq!(seat.server, b_url, "the seat is now at B");
}

/// One attempt per player and day, whichever node the player comes to:
/// PostgreSQL holds it, and every node deals the day's deal from the shared
/// daily secret. Begun at A, taken back at B where it stopped and won
/// there; then A grants no second attempt and ranks the one B finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_players_one_daily_attempt_is_the_same_at_every_node_and_granted_once() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let (a, _) = node(&redis, &data, &[]);
    let (b, _) = node(&redis, &data, &[]);

    let mut ada = Client::hello_to(a.address, "ada").await;
    let (_, token) = ada.register("ada").await;
    let begun = ada.daily_play().await;
    assert!(!begun.resumed);
    let (_, line) = daily_deal(&begun.date);
    let (first, rest) = line.split_at(line.len() / 2);
    ada.play_all(first).await;
    ada.drop_connection();

    let mut ada_at_b = Client::hello_to(b.address, "ada").await;
    ada_at_b.authenticate(&token).await;
    let taken_back = ada_at_b.daily_play().await;
    assert!(taken_back.resumed, "B takes back the attempt begun at A");
    assert_eq!(
        taken_back.commitment, begun.commitment,
        "one deal of the day"
    );
    assert_eq!(taken_back.moves, first, "with every move A kept");
    ada_at_b.play_all(rest).await;
    let result = match ada_at_b
        .recv_until(|message| matches!(message, ServerMessage::DailyFinished { .. }))
        .await
    {
        ServerMessage::DailyFinished { result } => result,
        _ => unreachable!("recv_until returned another message"),
    };

    let mut ada_at_a = Client::hello_to(a.address, "ada").await;
    ada_at_a.authenticate(&token).await;
    ada_at_a.assert_daily_win_kept(result.race_id, &line).await;
}

/// Follows today's Three Blind Mice at a node: the page's counts.
async fn follow_today(client: &mut Client) -> (u32, u32, u32) {
    let page = crate::follow::follow(client).await;
    (page.finishers, page.unranked, page.playing)
}

/// The counts of the next `leaderboard_update`.
async fn next_counts(client: &mut Client) -> (u32, u32, u32) {
    match client.recv().await {
        ServerMessage::LeaderboardUpdate { update } => {
            (update.finishers, update.unranked, update.playing)
        }
        other => panic!("expected leaderboard_update, got {other:?}"),
    }
}

#[tokio::test]
async fn a_day_followed_at_one_node_sees_the_attempts_played_at_the_other() {
    let redis = RedisProcess::start();
    let data = SharedStore::new();
    let (a, _) = node(&redis, &data, &[]);
    let (b, _) = node(&redis, &data, &[]);
    let mut watcher_at_a = Client::hello_to(a.address, "watcher").await;
    let mut watcher_at_b = Client::hello_to(b.address, "watcher").await;
    assert_eq!(follow_today(&mut watcher_at_a).await, (0, 0, 0));
    assert_eq!(follow_today(&mut watcher_at_b).await, (0, 0, 0));

    // Registered today, so off the ranking: the changes are counts.
    let mut ada = Client::hello_to(b.address, "ada").await;
    ada.register("ada").await;
    ada.daily_play().await;
    assert_eq!(
        next_counts(&mut watcher_at_a).await,
        (0, 0, 1),
        "begun at B"
    );
    assert_eq!(next_counts(&mut watcher_at_b).await, (0, 0, 1));
    ada.send(&ClientMessage::Resign).await;
    ada.recv_until(|message| matches!(message, ServerMessage::DailyFinished { .. }))
        .await;
    assert_eq!(
        next_counts(&mut watcher_at_a).await,
        (0, 1, 0),
        "finished at B"
    );
    assert_eq!(next_counts(&mut watcher_at_b).await, (0, 1, 0));

    let mut bob = Client::hello_to(a.address, "bob").await;
    bob.register("bob").await;
    bob.daily_play().await;
    assert_eq!(
        next_counts(&mut watcher_at_b).await,
        (0, 1, 1),
        "begun at A"
    );
    assert_eq!(next_counts(&mut watcher_at_a).await, (0, 1, 1));

    // Redis drops the nodes' subscriptions (as when it restarts): each
    // node subscribes again by itself, and changes travel as before.
    let subscribers = || {
        redis
            .cli(&["PUBSUB", "NUMSUB", "patience:leaderboards"])
            .lines()
            .last()
            .map(str::to_string)
    };
    assert_eq!(subscribers().as_deref(), Some("2"));
    redis.cli(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    let deadline = Instant::now() + DEADLINE;
    while subscribers().as_deref() != Some("2") {
        assert!(
            Instant::now() < deadline,
            "the nodes never subscribed again"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut carol = Client::hello_to(b.address, "carol").await;
    carol.register("carol").await;
    carol.daily_play().await;
    assert_eq!(
        next_counts(&mut watcher_at_a).await,
        (0, 1, 2),
        "begun at B, after the subscriptions were cut"
    );
}
