//! Ratings end to end, through the terminal client's own loop: a rated
//! quick race between two registered players changes both ratings, which
//! the server stored and `patience rating`'s requests read back; the lobby
//! shows a waiting player's rating (and none for a guest); a room with undo
//! leaves them as they were, a private room created rated changes them.

use std::time::Duration;

use patience_cli::config::Store;
use patience_cli::net::Connection;
use patience_cli::ratings;
use patience_cli::session::{Entry, Session};
use patience_cli::tui::lobby::room_line;
use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ClientMessage, Phase, PlayerStatus, RoomOptions, SeatRating, ServerMessage,
};
use patience_shared::rules::{Rules as _, View};
use patience_shared::solver::Budget;
use patience_shared::solver::any::solve_deal;
use patience_tests::{SEED_START, SOLVER_BUDGET, start_server};

/// Longest a test waits for one message: a safety net, never a way to pass time.
const PATIENCE: Duration = Duration::from_secs(20);

const GAME: GameKind = GameKind::ThreeBlindMice;

/// A config directory of this test's own.
fn config_dir(name: &str) -> std::path::PathBuf {
    let directory = std::env::temp_dir().join(format!(
        "patience-ratings-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

/// Reads messages until `done` holds for the session's state.
async fn until(session: &mut Session, done: impl Fn(&Session) -> bool) {
    while !done(session) {
        tokio::time::timeout(PATIENCE, session.recv())
            .await
            .expect("a message within the test's patience")
            .expect("the connection stays up");
    }
}

/// Registers `name` and keeps the account in a config directory of its own.
async fn registered(url: &str, name: &str) -> Store {
    let store = Store::in_directory(config_dir(name));
    let mut connection = Connection::open(url, name).await.expect("connects");
    patience_cli::account::register(&mut connection, name, &store)
        .await
        .expect("registers");
    store
}

/// The solver's line for the deal on `board`: a deal the test server
/// proved from its first seed up (a room takes any of its pool's).
fn winning_line(board: &View) -> Vec<String> {
    let seed = (SEED_START..SEED_START + 10_000)
        .find(|seed| AnyGame::deal(GAME, *seed).view() == *board)
        .expect("the race is on a deal from the test servers' first seed");
    solve_deal(GAME, seed, Budget::positions(SOLVER_BUDGET))
        .expect("the solver's line replays")
        .solution
}

/// Ada and Bob race from `ada_entry` and `bob_entry` (Bob's `None`: he
/// joins Ada's room by its code); Ada plays the solver's line and wins,
/// Bob resigns once she has.
async fn race(url: &str, ada_store: &Store, bob_store: &Store, ada_entry: Entry, bob_quick: bool) {
    let (mut ada, _) = Session::start(url, "ada", ada_entry, ada_store.clone())
        .await
        .expect("ada connects");
    until(&mut ada, |s| s.state.room.is_some()).await;
    let bob_entry = if bob_quick {
        Entry::Quick(GAME)
    } else {
        let code = ada.state.room.as_ref().map(|room| room.code.clone());
        Entry::Join(code.unwrap_or_default())
    };
    let (mut bob, _) = Session::start(url, "bob", bob_entry, bob_store.clone())
        .await
        .expect("bob connects");
    let racing =
        |s: &Session| s.state.phase() == Some(Phase::Racing) && s.state.my_board().is_some();
    until(&mut ada, racing).await;
    until(&mut bob, racing).await;
    let line = winning_line(ada.state.my_board().expect("racing"));
    for text in &line {
        ada.send(&ClientMessage::Move {
            text: text.clone(),
            seat: None,
        })
        .await
        .expect("sent");
        loop {
            let (message, _) = tokio::time::timeout(PATIENCE, ada.recv())
                .await
                .expect("an answer")
                .expect("connected");
            match message {
                ServerMessage::MoveAccepted { .. } => break,
                ServerMessage::MoveRejected { message, .. } => panic!("{text} refused: {message}"),
                _ => {}
            }
        }
    }
    until(&mut ada, |s| s.state.my_status() == Some(PlayerStatus::Won)).await;
    bob.send(&ClientMessage::Resign).await.expect("sent");
    // The result comes once the race is stored, with its rating changes.
    until(&mut bob, |s| s.state.result.is_some()).await;
    until(&mut ada, |s| s.state.result.is_some()).await;
}

#[tokio::test]
async fn a_rated_quick_race_changes_both_ratings_and_a_room_with_undo_none() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let ada_store = registered(&url, "ada").await;
    let bob_store = registered(&url, "bob").await;

    // Before any race: nobody on the list, and no rating of one's own.
    let (list, _) = ratings::fetch_list(&url, &ada_store, GAME, None)
        .await
        .expect("the list");
    assert_eq!((list.players, list.own.clone()), (0, None));

    race(&url, &ada_store, &bob_store, Entry::Quick(GAME), true).await;
    let (list, _) = ratings::fetch_list(&url, &bob_store, GAME, None)
        .await
        .expect("the list");
    let names: Vec<&str> = list.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada", "bob"], "{list:?}");
    let (ada_row, bob_row) = (&list.rows[0], &list.rows[1]);
    // Two new players, the first wins: the crate's worked example.
    assert_eq!((ada_row.mu, bob_row.mu), (2764, 2236));
    assert_eq!((ada_row.races, bob_row.races), (1, 1));
    assert!(ada_row.provisional && bob_row.provisional);
    assert_eq!(list.own.as_ref().map(|own| own.rank), Some(Some(2)));
    let text = ratings::list_text(&list);
    assert!(text.contains("▶  2 bob"), "{text}");

    let (history, _) = ratings::fetch_history(&url, &ada_store, GAME, None, None)
        .await
        .expect("ada's history");
    assert_eq!(history.races.len(), 1);
    assert_eq!((history.races[0].place, history.races[0].racers), (1, 2));
    assert_eq!(history.races[0].before, 0);

    // The lobby: Ada waits in a public room with a guest; whoever looks
    // sees her rating beside her name, and none beside the guest's.
    let public_room = Entry::Create {
        game: GAME,
        players: 3,
        public: true,
        options: RoomOptions::default(),
        bots: Vec::new(),
    };
    let (mut waiting, _) = Session::start(&url, "ada", public_room, ada_store.clone())
        .await
        .expect("ada opens a public room");
    until(&mut waiting, |s| s.state.room.is_some()).await;
    let code = waiting
        .state
        .room
        .as_ref()
        .map(|room| room.code.clone())
        .unwrap_or_default();
    let (mut guest, _) = Session::start(&url, "cyd", Entry::Join(code.clone()), Store::none())
        .await
        .expect("a guest joins");
    until(&mut guest, |s| s.state.room.is_some()).await;
    let mut looking = Connection::open(&url, "eve").await.expect("connects");
    looking
        .send(&ClientMessage::Lobby { game: Some(GAME) })
        .await
        .expect("sent");
    let page = loop {
        let answer = tokio::time::timeout(PATIENCE, looking.recv())
            .await
            .expect("an answer")
            .expect("connected");
        if let ServerMessage::LobbyPage { page } = answer {
            break page;
        }
    };
    let listed = page
        .rooms
        .iter()
        .find(|room| room.code == code)
        .expect("ada's room is listed");
    assert_eq!(listed.players, ["ada", "cyd"]);
    assert_eq!(
        listed.ratings,
        [
            Some(SeatRating {
                rating: ada_row.rating,
                provisional: true,
            }),
            None,
        ]
    );
    let line = room_line(0, listed);
    assert!(line.contains("ada (3.4?), cyd"), "{line}");
    drop(looking);
    for mut session in [guest, waiting] {
        session.send(&ClientMessage::Leave).await.expect("sent");
        until(&mut session, |s| s.state.closed.is_some()).await;
    }

    // A private room with undo is never rated: nothing changes.
    let undo_room = Entry::Create {
        game: GAME,
        players: 2,
        public: false,
        options: RoomOptions {
            undo_allowed: true,
            ..RoomOptions::default()
        },
        bots: Vec::new(),
    };
    race(&url, &ada_store, &bob_store, undo_room, false).await;
    let (after, _) = ratings::fetch_list(&url, &bob_store, GAME, None)
        .await
        .expect("the list");
    assert_eq!(after.rows, list.rows);

    // A private room created rated is: Ada wins again.
    let rated_room = Entry::Create {
        game: GAME,
        players: 2,
        public: false,
        options: RoomOptions {
            rated: true,
            ..RoomOptions::default()
        },
        bots: Vec::new(),
    };
    race(&url, &ada_store, &bob_store, rated_room, false).await;
    let (history, _) = ratings::fetch_history(&url, &bob_store, GAME, Some("ADA".into()), None)
        .await
        .expect("ada's history, by name");
    assert_eq!(history.races.len(), 2);
    assert_eq!(history.rating.as_ref().map(|row| row.races), Some(2));
    assert!(history.races[0].after > history.races[0].before);
    server.shutdown().await;
}

#[tokio::test]
async fn a_rated_room_refuses_undo_and_open_boards() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    for options in [
        RoomOptions {
            rated: true,
            undo_allowed: true,
            ..RoomOptions::default()
        },
        RoomOptions {
            rated: true,
            open_boards: true,
            ..RoomOptions::default()
        },
    ] {
        let mut connection = Connection::open(&url, "ada").await.expect("connects");
        connection
            .send(&ClientMessage::CreateRoom {
                game: GAME,
                max_players: 2,
                public: false,
                options,
                bots: Vec::new(),
            })
            .await
            .expect("sent");
        let answer = tokio::time::timeout(PATIENCE, connection.recv())
            .await
            .expect("an answer")
            .expect("connected");
        assert!(
            matches!(
                &answer,
                ServerMessage::Error { message, .. } if message.contains("rated room")
            ),
            "{answer:?}"
        );
    }
    server.shutdown().await;
}
