//! Durability: the real server binary killed with SIGKILL mid-attempt and
//! right after announcing results, restarted on the same data directory.
//! Whatever a client was told is there after the restart.

use std::process::Command;

use patience_shared::protocol::{
    ClientMessage, ErrorCode, PlayerStatus, RoomOptions, ServerMessage,
};
use patience_tests::{Client, ServerProcess, binary, daily_deal, first_deal, stderr};

async fn authenticated(server: &ServerProcess, token: &str) -> Client {
    let mut client = Client::hello_to(server.address, "ada").await;
    client.authenticate(token).await;
    client
}

#[tokio::test]
async fn a_killed_server_keeps_every_acknowledged_daily_move_and_result() {
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");

    // First life: moves sent back to back; the server dies after some of
    // their answers have arrived, others perhaps still in flight.
    let server = ServerProcess::start(&data, &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    let (_, token) = ada.register("ada").await;
    let attempt = ada.daily_play().await;
    let (_, line) = daily_deal(&attempt.date);
    let half = line.len() / 2;
    let quarter = half / 2;
    for text in &line[..half] {
        ada.play(text).await;
    }
    for text in &line[..quarter] {
        match ada.move_answer().await {
            ServerMessage::MoveAccepted { text: played, .. } => assert_eq!(&played, text),
            other => panic!("expected move_accepted, got {other:?}"),
        }
    }
    server.kill();

    // Second life: the attempt resumes with every acknowledged move (and
    // perhaps some that were written but not yet answered), in order.
    let server = ServerProcess::start(&data, &[]);
    let mut ada = authenticated(&server, &token).await;
    let resumed = ada.daily_play().await;
    assert!(resumed.resumed);
    assert_eq!(resumed.date, attempt.date);
    assert!(
        resumed.moves.len() >= quarter,
        "{} < {quarter}",
        resumed.moves.len()
    );
    assert!(
        line.starts_with(&resumed.moves),
        "the stored moves are the line's prefix"
    );
    ada.play_all(&line[resumed.moves.len()..]).await;
    let result = match ada
        .recv_until(|message| matches!(message, ServerMessage::DailyFinished { .. }))
        .await
    {
        ServerMessage::DailyFinished { result } => result,
        _ => unreachable!("recv_until returned another message"),
    };
    assert_eq!(result.status, PlayerStatus::Won);
    // Killed the moment the result is told.
    server.kill();

    // Third life: the result stands, the attempt is not granted again.
    let server = ServerProcess::start(&data, &[]);
    let mut ada = authenticated(&server, &token).await;
    ada.assert_daily_win_kept(result.race_id, &line).await;
    server.kill();
}

#[tokio::test]
async fn a_killed_server_keeps_every_race_result_it_announced() {
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");
    let server = ServerProcess::start(&data, &[]);
    let (_, line) = first_deal();
    let mut ada = Client::hello_to(server.address, "ada").await;
    let mut bob = Client::hello_to(server.address, "bob").await;
    let (code, _) = ada.create_room(2, RoomOptions::default()).await;
    bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    ada.play_all(&line).await;
    bob.send(&ClientMessage::Resign).await;
    let result = match ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await
    {
        ServerMessage::RaceEnded { result, .. } => result,
        _ => unreachable!("recv_until returned another message"),
    };
    // Killed in the race's bookkeeping: the room is still open, lingering.
    server.kill();

    let server = ServerProcess::start(&data, &[]);
    let race_id = result.race_id.expect("an announced result has its id");
    let mut viewer = Client::hello_to(server.address, "viewer").await;
    viewer.send(&ClientMessage::Replay { race_id }).await;
    match viewer.recv().await {
        ServerMessage::ReplayData { race } => assert_eq!(race.result, result),
        other => panic!("expected replay_data, got {other:?}"),
    }
    server.kill();
}

#[test]
fn a_data_file_that_is_not_a_database_stops_the_server_with_a_clear_error() {
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(
        data.join("patience.sqlite3"),
        b"not a database at all, just bytes\n".repeat(300),
    )
    .expect("writes");
    let output = Command::new(binary("patience-server", "patience-server"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--no-admin",
            "--games",
            "tbm",
            "--data",
        ])
        .arg(&data)
        .output()
        .expect("patience-server runs");
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("patience.sqlite3"), "{message}");
    assert!(message.contains("not a database"), "{message}");
}

#[tokio::test]
async fn a_race_running_at_sigterm_runs_again_after_the_restart() {
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");
    let (_, line) = first_deal();

    // First life: a race is under way when the server is asked to stop.
    let server = ServerProcess::start(&data, &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    let mut bob = Client::hello_to(server.address, "bob").await;
    let (code, ada_token) = ada.create_room(2, RoomOptions::default()).await;
    let (_, bob_token) = bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    ada.play_all(&line[..2]).await;
    let ada_seq = ada.last_seq;
    assert!(server.terminate(), "SIGTERM stops the server cleanly");
    // The players are told the server is going, and that the race is kept.
    let closed = ada.closed().await;
    assert!(
        closed.messages.iter().any(|message| matches!(
            message,
            ServerMessage::ShuttingDown { message } if message.contains("resume")
        )),
        "{:?}",
        closed.messages
    );

    // Second life: both take their seats back with the tokens they had,
    // and the race goes on from where it was.
    let server = ServerProcess::start(&data, &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    ada.send(&ClientMessage::Resume {
        token: ada_token,
        last_seq: ada_seq,
    })
    .await;
    let ServerMessage::Resumed {
        seat: 0,
        room,
        elapsed_ms: Some(_),
        ..
    } = ada.recv().await
    else {
        panic!("ada resumes her seat: {:?}", ada.received());
    };
    assert_eq!(room.code, code);
    let mut bob = Client::hello_to(server.address, "bob").await;
    bob.send(&ClientMessage::Resume {
        token: bob_token,
        last_seq: 0,
    })
    .await;
    assert!(matches!(
        bob.recv().await,
        ServerMessage::Resumed { seat: 1, .. }
    ));
    bob.send(&ClientMessage::Resign).await;
    ada.play_all(&line[2..]).await;
    let result = ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await;
    let ServerMessage::RaceEnded { result, .. } = result else {
        unreachable!("waited for race_ended");
    };
    assert_eq!(result.standings[0].status, PlayerStatus::Won);
    assert_eq!(result.logs[0].moves, line);
    assert!(result.race_id.is_some());
    server.kill();
}

/// The moves acknowledged among `messages`.
fn acknowledged(messages: &[ServerMessage]) -> usize {
    messages
        .iter()
        .filter(|message| matches!(message, ServerMessage::MoveAccepted { .. }))
        .count()
}

/// Resumes a seat in a race `server` rebuilt from the store (so the room
/// has no missed events to replay, and sends a snapshot); returns the
/// client, the moves the server has on the seat's board and the seat's new
/// resume token.
async fn resume_seat(
    server: &ServerProcess,
    name: &str,
    token: &str,
    seat: u8,
) -> (Client, u32, String) {
    let mut client = Client::hello_to(server.address, name).await;
    client
        .send(&ClientMessage::Resume {
            token: token.to_string(),
            last_seq: 0,
        })
        .await;
    let token = match client.recv().await {
        ServerMessage::Resumed {
            seat: got,
            resume_token,
            ..
        } if got == seat => resume_token,
        other => panic!("{name} resumes seat {seat}: {other:?}"),
    };
    let moves = match client
        .recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await
    {
        ServerMessage::Snapshot {
            race: Some(race), ..
        } => {
            let own = race.boards.iter().find(|board| board.seat == seat);
            let own = own.expect("the snapshot has the seat");
            assert!(own.board.is_some(), "{name} sees its own board");
            own.progress.moves
        }
        other => panic!("{name} gets a snapshot of the race: {other:?}"),
    };
    (client, moves, token)
}

#[tokio::test]
async fn a_race_killed_mid_line_resumes_with_every_acknowledged_move_and_is_stored_once() {
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");
    race_killed_mid_line_resumes(|| ServerProcess::start(&data, &[])).await;
}

/// The race killed mid-line, on whatever storage `start` starts the server
/// with (each call on the same data): PostgreSQL's test runs it too.
pub(crate) async fn race_killed_mid_line_resumes(start: impl Fn() -> ServerProcess) {
    let (_, line) = first_deal();
    let (ada_sent, ada_waited, bob_sent) = (line.len() / 2, line.len() / 4, 3);

    // First life: both players mid-line; Bob reconnects once, so his token
    // changes; Ada's last moves are still in flight when the server dies.
    let server = start();
    let mut ada = Client::hello_to(server.address, "ada").await;
    let mut bob = Client::hello_to(server.address, "bob").await;
    let (code, ada_token) = ada.create_room(2, RoomOptions::default()).await;
    let (_, bob_token) = bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    bob.play_all(&line[..bob_sent]).await;
    let bob_seq = bob.last_seq;
    bob.drop_connection();
    let mut bob = Client::hello_to(server.address, "bob").await;
    bob.send(&ClientMessage::Resume {
        token: bob_token,
        last_seq: bob_seq,
    })
    .await;
    let ServerMessage::Resumed {
        resume_token: bob_token,
        ..
    } = bob.recv().await
    else {
        panic!("bob resumes: {:?}", bob.received());
    };
    for text in &line[..ada_sent] {
        ada.play(text).await;
    }
    for _ in 0..ada_waited {
        assert!(matches!(
            ada.move_answer().await,
            ServerMessage::MoveAccepted { .. }
        ));
    }
    server.kill();
    // Every acknowledgement that reached Ada before the connection broke.
    let told = acknowledged(&ada.received()) + acknowledged(&ada.closed().await.messages);
    assert!(told >= ada_waited);

    // Second life: both take their seats back with the tokens they last
    // had, and the server has every move either was told it accepted.
    let server = start();
    let (mut ada, kept, ada_token) = resume_seat(&server, "ada", &ada_token, 0).await;
    let kept = kept as usize;
    assert!(
        (told..=ada_sent).contains(&kept),
        "kept {kept}, told {told}, sent {ada_sent}"
    );
    let (mut bob, bob_moves, _) = resume_seat(&server, "bob", &bob_token, 1).await;
    assert_eq!(bob_moves as usize, bob_sent);
    bob.send(&ClientMessage::Resign).await;
    ada.play_all(&line[kept..]).await;
    let ServerMessage::RaceEnded { result, .. } = ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await
    else {
        unreachable!("waited for race_ended");
    };
    assert_eq!(result.standings[0].status, PlayerStatus::Won);
    assert_eq!(result.logs[0].moves, line);
    assert_eq!(result.logs[1].moves, line[..bob_sent]);
    let race_id = result.race_id.expect("stored");
    server.kill();

    // Third life: the race is stored once and runs no more.
    let server = start();
    let mut viewer = Client::hello_to(server.address, "viewer").await;
    viewer.send(&ClientMessage::Replay { race_id }).await;
    assert!(matches!(
        viewer.recv().await,
        ServerMessage::ReplayData { .. }
    ));
    viewer
        .send(&ClientMessage::Replay {
            race_id: race_id + 1,
        })
        .await;
    assert_eq!(viewer.next_error().await, ErrorCode::RaceNotFound);
    let mut ada = Client::hello_to(server.address, "ada").await;
    ada.send(&ClientMessage::Resume {
        token: ada_token,
        last_seq: 0,
    })
    .await;
    assert_eq!(ada.next_error().await, ErrorCode::InvalidResumeToken);
    server.kill();
}
