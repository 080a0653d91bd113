//! A room with open boards in the terminal UI, against a real server: the
//! server sends every board to everyone in the room while the race runs,
//! so a racer's screen shows a rival's board under its own and a
//! watcher's shows every board; the race then ends as any other.

use patience_cli::config::Store;
use patience_cli::session::{Entry, Session};
use patience_cli::tui::online::Ending;
use patience_shared::protocol::{ClientMessage, RoomOptions, ServerMessage};
use patience_tests::{Client, first_deal, start_server};

use crate::screen::{OnScreen, open_private_room};

/// How many boards a frame draws: each Three Blind Mice board has one
/// line of cells.
fn boards_drawn(frame: &str) -> usize {
    frame.matches("cells").count()
}

#[tokio::test]
async fn open_boards_show_a_racer_its_rivals_board_and_a_watcher_every_board() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let (_, line) = first_deal();
    let options = RoomOptions {
        open_boards: true,
        ..RoomOptions::default()
    };
    let (ada, ada_notes, code) = open_private_room(&url, "ada", options).await;
    let (carol, carol_notes) =
        Session::start(&url, "carol", Entry::Watch(code.clone()), Store::none())
            .await
            .expect("carol watches");
    let mut ada = OnScreen::run("ada", ada, ada_notes, 100, 34);
    let mut carol = OnScreen::run("carol", carol, carol_notes, 170, 34);

    let mut bob = Client::hello(&server, "bob").await;
    bob.join_room(&code).await;
    bob.race_started().await;
    bob.play(&line[0]).await;
    assert!(matches!(
        bob.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));

    let frame = ada
        .until("bob's board under her own", |frame| {
            frame.contains(" bob · ") && boards_drawn(frame) == 2
        })
        .await;
    assert!(frame.contains("ada (you)"), "{frame}");
    carol
        .until("both racers' boards", |frame| {
            frame.contains("ada · ") && frame.contains("bob · ") && boards_drawn(frame) == 2
        })
        .await;

    ada.command("resign").await;
    bob.send(&ClientMessage::Resign).await;
    for screen in [&mut ada, &mut carol] {
        screen
            .until("the results", |frame| frame.contains("The race is over"))
            .await;
    }
    for screen in [ada, carol] {
        if let Ending::Leave(session) = screen.quit().await {
            session.leave().await;
        }
    }
}
