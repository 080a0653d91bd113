//! Reconnection: a dropped player keeps its seat for the grace period and
//! comes back with its secret token and the last event number it saw.

use patience_shared::protocol::{
    ClientMessage, ErrorCode, PlayerStatus, RoomOptions, ServerMessage,
};
use patience_tests::{Client, first_deal, seq_of, start_server, two_player_race};

async fn resume(server: &patience_server::Server, token: &str, last_seq: u64) -> (Client, String) {
    let mut client = Client::hello(server, "ada again").await;
    client
        .send(&ClientMessage::Resume {
            token: token.to_string(),
            last_seq,
        })
        .await;
    match client.recv().await {
        ServerMessage::Resumed {
            resume_token,
            seat: 0,
            ..
        } => (client, resume_token),
        other => panic!("expected resumed, got {other:?}"),
    }
}

#[tokio::test]
async fn a_dropped_player_resumes_mid_race_and_gets_the_events_it_missed() {
    let server = start_server(|_| {}).await;
    let (_, line) = first_deal();
    let (mut ada, mut bob, _, ada_token, _) =
        two_player_race(&server, RoomOptions::default()).await;
    ada.play(&line[0]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    let last_seq = ada.last_seq;
    ada.drop_connection();
    // Bob sees Ada drop, then plays two moves Ada does not see.
    bob.recv_until(|message| {
        matches!(message, ServerMessage::RoomUpdate { room, .. } if !room.players[0].connected)
    })
    .await;
    let bob_line: Vec<String> = line.iter().take(2).cloned().collect();
    let mut missed_seqs = Vec::new();
    for text in &bob_line {
        bob.play(text).await;
        let answer = bob.move_answer().await;
        assert!(
            matches!(answer, ServerMessage::MoveAccepted { .. }),
            "{answer:?}"
        );
    }
    let (mut ada, new_token) = resume(&server, &ada_token, last_seq).await;
    assert_ne!(new_token, ada_token, "each use replaces the token");
    // The missed events follow, in order: Ada's drop, then Bob's two moves
    // (one `progress`, or two if they were a tick apart).
    let mut progress = Vec::new();
    while progress.last() != Some(&2) {
        let message = ada.recv().await;
        if let Some(seq) = seq_of(&message) {
            missed_seqs.push(seq);
        }
        if let ServerMessage::Progress {
            seat: 1,
            progress: counts,
            ..
        } = message
        {
            progress.push(counts.moves);
        }
    }
    assert!(
        progress == [1, 2] || progress == [2],
        "Bob's two moves, as counts: {progress:?}"
    );
    assert!(missed_seqs.iter().all(|&seq| seq > last_seq));
    assert!(missed_seqs.windows(2).all(|pair| pair[0] < pair[1]));
    // Ada plays on from where she was.
    ada.play(&line[1]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));

    // The old token is used up.
    let mut thief = Client::hello(&server, "mallory").await;
    thief
        .send(&ClientMessage::Resume {
            token: ada_token.clone(),
            last_seq: 0,
        })
        .await;
    assert!(matches!(
        thief.recv().await,
        ServerMessage::Error {
            code: ErrorCode::InvalidResumeToken,
            ..
        }
    ));
    server.shutdown().await;
}

#[tokio::test]
async fn a_resume_past_the_kept_events_gets_a_snapshot() {
    let server = start_server(|config| config.event_log_capacity = 2).await;
    let (_, line) = first_deal();
    let (ada, mut bob, _, ada_token, _) = two_player_race(&server, RoomOptions::default()).await;
    ada.drop_connection();
    for text in line.iter().take(3) {
        bob.play(text).await;
        assert!(matches!(
            bob.move_answer().await,
            ServerMessage::MoveAccepted { .. }
        ));
    }
    let (mut ada, _) = resume(&server, &ada_token, 1).await;
    let ServerMessage::Snapshot {
        race: Some(race), ..
    } = ada.recv().await
    else {
        panic!("expected a snapshot");
    };
    assert_eq!(race.boards[1].progress.moves, 3);
    assert_eq!(race.boards[0].progress.moves, 0);
    server.shutdown().await;
}

#[tokio::test]
async fn a_seat_not_taken_back_in_time_is_given_up() {
    let server = start_server(|config| config.grace_period_ms = 100).await;
    let (ada, mut bob, _, ada_token, _) = two_player_race(&server, RoomOptions::default()).await;
    ada.drop_connection();
    let gone = bob
        .recv_until(|message| matches!(message, ServerMessage::Finished { .. }))
        .await;
    assert!(matches!(
        gone,
        ServerMessage::Finished {
            seat: 0,
            status: PlayerStatus::Left,
            ..
        }
    ));
    let mut late = Client::hello(&server, "ada").await;
    late.send(&ClientMessage::Resume {
        token: ada_token,
        last_seq: 0,
    })
    .await;
    assert!(matches!(
        late.recv().await,
        ServerMessage::Error {
            code: ErrorCode::InvalidResumeToken,
            ..
        }
    ));
    server.shutdown().await;
}

#[tokio::test]
async fn a_token_used_while_connected_takes_the_seat_and_closes_the_old_connection() {
    let server = start_server(|_| {}).await;
    let (mut ada, _bob, _, ada_token, _) = two_player_race(&server, RoomOptions::default()).await;
    let (mut second, _) = resume(&server, &ada_token, ada.last_seq).await;
    let closed = ada.closed().await;
    assert!(
        closed.messages.iter().any(|message| matches!(
            message,
            ServerMessage::Error {
                code: ErrorCode::Replaced,
                ..
            }
        )),
        "{closed:?}"
    );
    let (_, line) = first_deal();
    second.play(&line[0]).await;
    assert!(matches!(
        second.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    server.shutdown().await;
}
