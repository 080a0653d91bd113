//! The web port as a person meets it, through the real binary: the start
//! message names the page, a finished race keeps its page (`/race/ID`)
//! after its room is gone and after a restart, and a bad path gets the
//! site's own `404` page.

use std::io::{BufRead as _, Read as _, Write as _};
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use patience_shared::protocol::{ClientMessage, ErrorCode, RoomOptions, ServerMessage};
use patience_tests::{Client, ServerProcess, binary, read_printed_address};

/// `GET path` on `address`: the whole answer, head and body.
fn get(address: SocketAddr, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).expect("connects");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\n\r\n").expect("request sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("an answer");
    answer
}

fn status_line(answer: &str) -> &str {
    answer.split("\r\n").next().unwrap_or_default()
}

#[test]
fn the_start_message_names_the_page_and_the_websocket() {
    let mut child = Command::new(binary("patience-server", "patience-server"))
        .args(["--listen", "127.0.0.1:0", "--no-admin", "--in-memory"])
        .args(["--games", "three-blind-mice", "--deal-pool-size", "1"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout is piped"));
    let address = read_printed_address(&mut stdout);
    let mut line = String::new();
    stdout.read_line(&mut line).expect("a second line");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(line.trim(), format!("the web page: http://{address}/"));
}

#[tokio::test]
async fn a_finished_race_keeps_its_page_after_its_room_and_a_restart() {
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");
    let server = ServerProcess::start(&data, &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    let mut bob = Client::hello_to(server.address, "bob").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    // While it runs, the race has no page: what the page would ask of any
    // race id is refused, and nothing of this race is sent.
    let mut early = Client::hello_to(server.address, "web spectator").await;
    for race_id in 1..=3 {
        early.send(&ClientMessage::Replay { race_id }).await;
        assert_eq!(early.next_error().await, ErrorCode::RaceNotFound);
        early.send(&ClientMessage::ReplayBoards { race_id }).await;
        assert_eq!(early.next_error().await, ErrorCode::RaceNotFound);
    }
    ada.send(&ClientMessage::Resign).await;
    bob.send(&ClientMessage::Resign).await;
    let ended = |message: &ServerMessage| matches!(message, ServerMessage::RaceEnded { .. });
    let ServerMessage::RaceEnded { result, .. } = ada.recv_until(ended).await else {
        unreachable!("recv_until returned another message");
    };
    let race_id = result.race_id.expect("the race is kept");
    assert!(server.terminate(), "a clean stop");

    // Another life, from the same data: the room is gone, the race's page
    // is served and has its race.
    let server = ServerProcess::start(&data, &[]);
    let page = get(server.address, &format!("/race/{race_id}"));
    assert_eq!(status_line(&page), "HTTP/1.1 200 OK", "{page}");
    assert!(page.contains("<script type=\"module\" src=\"/app.js\">"));
    // What the page asks, as a spectator who never raced.
    let mut visitor = Client::hello_to(server.address, "web spectator").await;
    visitor.send(&ClientMessage::Replay { race_id }).await;
    match visitor.recv().await {
        ServerMessage::ReplayData { race } => {
            assert_eq!(race.race_id, race_id);
            assert_eq!(race.result.standings, result.standings);
            assert_eq!(race.result.reveal, result.reveal);
        }
        other => panic!("expected replay_data, got {other:?}"),
    }
    visitor.send(&ClientMessage::ReplayBoards { race_id }).await;
    match visitor.recv().await {
        ServerMessage::BoardsReplay { replay } => assert_eq!(replay.seats.len(), 2),
        other => panic!("expected boards_replay, got {other:?}"),
    }
    // The room's code leads to its race, for a seat or to watch; a code
    // nothing was raced under is refused.
    for ask in [
        ClientMessage::JoinRoom { code: code.clone() },
        ClientMessage::Spectate { code: code.clone() },
    ] {
        visitor.send(&ask).await;
        assert_eq!(
            visitor.recv().await,
            ServerMessage::RoomClosed {
                code: code.clone(),
                race_id
            },
            "{ask:?}"
        );
    }
    visitor
        .send(&ClientMessage::Spectate {
            code: "ZZZZZZ".to_string(),
        })
        .await;
    assert_eq!(visitor.next_error().await, ErrorCode::RoomNotFound);

    // Paths the site does not have: its own page, 404, with the way back.
    for path in ["/race/0", "/race/12x", "/nothing", "/room/K7PQ3"] {
        let answer = get(server.address, path);
        assert_eq!(status_line(&answer), "HTTP/1.1 404 Not Found", "{path}");
        assert!(answer.contains("Content-Type: text/html; charset=utf-8\r\n"));
        assert!(answer.contains("<link rel=\"stylesheet\" href=\"/style.css\">"));
        assert!(
            answer.contains("<a href=\"/\" id=\"way-back\">"),
            "{answer}"
        );
    }
    assert!(server.terminate());
}
