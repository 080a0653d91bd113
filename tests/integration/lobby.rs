//! The lobby and rematches through the terminal client against a real
//! server: the lobby screen lists a public room and one key seats a second
//! player in it; two players race, both press `r` on the results, and race
//! again in a new room with the series' score carried on.

use patience_cli::config::Store;
use patience_cli::net::Connection;
use patience_cli::session::{Entry, Session};
use patience_cli::tui::lobby;
use patience_cli::tui::online::{self, Ending};
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, RoomOptions, ServerMessage};
use patience_tests::start_server;

use crate::screen::{PATIENCE, TestScreen, open_private_room};
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::{mpsc, watch};

/// Waits until a frame drawn holds `text`.
pub(crate) async fn until_drawn(frames: &mut watch::Receiver<String>, who: &str, text: &str) {
    let waiting = async {
        while !frames.borrow_and_update().contains(text) {
            if frames.changed().await.is_err() {
                panic!("{who}'s screen ended before drawing {text:?}");
            }
        }
    };
    if tokio::time::timeout(PATIENCE, waiting).await.is_err() {
        panic!(
            "{who}'s screen never drew {text:?}; its last frame:\n{}",
            *frames.borrow()
        );
    }
}

pub(crate) async fn press(keys: &mpsc::Sender<Event>, code: KeyCode) {
    let key = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    keys.send(key).await.expect("the screen takes keys");
}

/// Types `:resign` and Enter: the race's own way to give up.
async fn resign(keys: &mpsc::Sender<Event>) {
    press(keys, KeyCode::Char(':')).await;
    for character in "resign".chars() {
        press(keys, KeyCode::Char(character)).await;
    }
    press(keys, KeyCode::Enter).await;
}

#[tokio::test]
async fn the_lobby_lists_a_public_room_and_one_key_seats_a_second_player_in_it() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let (mut ada, _) = Session::start(
        &url,
        "ada",
        Entry::Create {
            game: GameKind::ThreeBlindMice,
            players: 3,
            public: true,
            options: RoomOptions::default(),
            bots: Vec::new(),
        },
        Store::none(),
    )
    .await
    .expect("ada opens a public room");
    let code = ada
        .state
        .room
        .as_ref()
        .map(|room| room.code.clone())
        .expect("ada's room");

    let mut connection = Connection::open(&url, "bob").await.expect("bob connects");
    let (screen, mut frames) = TestScreen::new(110, 34);
    let (keys, mut events) = mpsc::channel(16);
    let picking = tokio::spawn(async move {
        let mut screen = screen;
        let picked = lobby::run(&mut screen, &mut events, &mut connection, None).await;
        (picked, connection)
    });
    until_drawn(&mut frames, "bob", &format!("1. {code}  Three Blind Mice")).await;
    until_drawn(&mut frames, "bob", "1/3  ada").await;
    press(&keys, KeyCode::Char('1')).await;
    let (picked, connection) = tokio::time::timeout(PATIENCE, picking)
        .await
        .expect("the lobby answers the key")
        .expect("the lobby's task ends");
    assert_eq!(picked.expect("the lobby runs"), Some(code.clone()));
    connection.close().await;

    // The code picked is the one `patience lobby` joins next.
    let (_bob, _) = Session::start(&url, "bob", Entry::Join(code.clone()), Store::none())
        .await
        .expect("bob takes the seat picked");
    let joined = tokio::time::timeout(PATIENCE, async {
        loop {
            let (message, _) = ada.recv().await.expect("ada's room goes on");
            if let ServerMessage::RoomUpdate { room, .. } = message
                && room.players.len() == 2
            {
                return room;
            }
        }
    })
    .await
    .expect("ada sees bob come in");
    assert_eq!(joined.players[1].name, "bob");

    // The lobby of another game lists none of it.
    let mut asker = Connection::open(&url, "eve").await.expect("eve connects");
    asker
        .send(&ClientMessage::Lobby {
            game: Some(GameKind::Midshipman),
        })
        .await
        .expect("sends");
    let answer = tokio::time::timeout(PATIENCE, asker.recv())
        .await
        .expect("an answer")
        .expect("a page");
    assert!(
        matches!(&answer, ServerMessage::LobbyPage { page } if page.rooms.is_empty()),
        "{answer:?}"
    );
}

#[tokio::test]
async fn two_racers_accept_a_rematch_and_race_again_with_the_series_score_carried_on() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let options = RoomOptions {
        best_of: Some(3),
        ..RoomOptions::default()
    };
    let (ada, ada_notes, code) = open_private_room(&url, "ada", options).await;
    let (bob, bob_notes) = Session::start(&url, "bob", Entry::Join(code), Store::none())
        .await
        .expect("bob joins");

    let (ada_screen, mut ada_frames) = TestScreen::new(110, 34);
    let (ada_keys, mut ada_events) = mpsc::channel(64);
    let ada_loop = tokio::spawn(async move {
        let mut screen = ada_screen;
        online::run(&mut screen, &mut ada_events, ada, ada_notes).await
    });
    let (bob_screen, mut bob_frames) = TestScreen::new(110, 34);
    let (bob_keys, mut bob_events) = mpsc::channel(64);
    let bob_loop = tokio::spawn(async move {
        let mut screen = bob_screen;
        online::run(&mut screen, &mut bob_events, bob, bob_notes).await
    });

    // The race panel shows the series from the first race.
    until_drawn(&mut ada_frames, "ada", "series: ada 0 - bob 0 (best of 3)").await;
    // Bob gives up first, then ada: ada played on longer and places first.
    resign(&bob_keys).await;
    until_drawn(&mut ada_frames, "ada", "bob resigned").await;
    resign(&ada_keys).await;
    for (frames, who) in [(&mut ada_frames, "ada"), (&mut bob_frames, "bob")] {
        until_drawn(frames, who, "series: ada 1 - bob 0 (best of 3)").await;
        until_drawn(frames, who, "Press r for a rematch").await;
    }

    press(&ada_keys, KeyCode::Char('r')).await;
    until_drawn(
        &mut bob_frames,
        "bob",
        "Rematch: ada accepted; waiting for bob",
    )
    .await;
    press(&bob_keys, KeyCode::Char('r')).await;

    // A new room and a new race: the results are gone, the score stays.
    for (frames, who) in [(&mut ada_frames, "ada"), (&mut bob_frames, "bob")] {
        let waiting = async {
            loop {
                {
                    let frame = frames.borrow_and_update();
                    if !frame.contains("The race is over")
                        && frame.contains("series: ada 1 - bob 0 (best of 3)")
                        && frame.contains("racing")
                    {
                        return;
                    }
                }
                frames.changed().await.expect("the screen goes on");
            }
        };
        if tokio::time::timeout(PATIENCE, waiting).await.is_err() {
            panic!("{who} never raced the rematch:\n{}", *frames.borrow());
        }
    }
    // This time ada gives up first: bob, who played on, takes the point
    // (unless both gave up within the same millisecond: then the seat
    // breaks the tie, and ada wins the series 2 - 0).
    resign(&ada_keys).await;
    until_drawn(&mut bob_frames, "bob", "ada resigned").await;
    resign(&bob_keys).await;
    for (frames, who) in [(&mut ada_frames, "ada"), (&mut bob_frames, "bob")] {
        let waiting = async {
            loop {
                {
                    let frame = frames.borrow_and_update();
                    if frame.contains("series: ada 1 - bob 1 (best of 3)")
                        || frame.contains("series: ada 2 - bob 0 (best of 3): ada wins the series")
                    {
                        return;
                    }
                }
                frames.changed().await.expect("the screen goes on");
            }
        };
        if tokio::time::timeout(PATIENCE, waiting).await.is_err() {
            panic!(
                "{who} never saw the second race counted:\n{}",
                *frames.borrow()
            );
        }
    }

    for (keys, racing) in [(ada_keys, ada_loop), (bob_keys, bob_loop)] {
        press(&keys, KeyCode::Char('q')).await;
        let ending = tokio::time::timeout(PATIENCE, racing)
            .await
            .expect("q leaves")
            .expect("the loop's task ends")
            .expect("the loop ends well");
        match ending {
            Ending::Leave(session) => session.leave().await,
            _ => panic!("q leaves the room"),
        }
    }
}
