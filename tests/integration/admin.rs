//! The admin port: `/healthz`, `/metrics`, and a graceful shutdown that tells
//! every connection.

use std::io::{Read as _, Write as _};
use std::net::SocketAddr;

use patience_shared::protocol::{RoomOptions, ServerMessage};
use patience_tests::{first_deal, start_server, two_player_race};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

fn get(address: SocketAddr, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).expect("admin port connects");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").expect("request sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response read");
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_metrics_and_a_graceful_shutdown() {
    let server = start_server(|_| {}).await;
    let admin = server.admin_address().expect("admin port");
    let (_, line) = first_deal();
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    ada.play(&line[0]).await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    ada.play("Kc>Kc").await;
    assert!(matches!(
        ada.move_answer().await,
        ServerMessage::MoveRejected { .. }
    ));

    let health = tokio::task::spawn_blocking(move || get(admin, "/healthz"))
        .await
        .expect("joins");
    assert!(health.starts_with("HTTP/1.1 200 OK"), "{health}");
    assert!(health.ends_with("ok\n"));
    let metrics = tokio::task::spawn_blocking(move || get(admin, "/metrics"))
        .await
        .expect("joins");
    for expected in [
        "patience_connections 2\n",
        "patience_rooms 1\n",
        "patience_races_running 1\n",
        "patience_moves_accepted_total 1\n",
        "patience_moves_rejected_total 1\n",
        "patience_send_queue_drops_total 0\n",
        "patience_move_handling_seconds_count 2\n",
        "patience_deal_pool_ready{game=\"three-blind-mice\"}",
    ] {
        assert!(metrics.contains(expected), "{expected} not in\n{metrics}");
    }
    let missing = tokio::task::spawn_blocking(move || get(admin, "/nope"))
        .await
        .expect("joins");
    assert!(missing.starts_with("HTTP/1.1 404"));

    server.shutdown().await;
    for client in [&mut ada, &mut bob] {
        let closed = client.closed().await;
        assert!(
            closed
                .messages
                .iter()
                .any(|message| matches!(message, ServerMessage::ShuttingDown { .. })),
            "{closed:?}"
        );
        assert_eq!(closed.frame.map(|frame| frame.code), Some(CloseCode::Away));
    }
}
