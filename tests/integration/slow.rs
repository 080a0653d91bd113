//! Slow consumers, as `docs/PROTOCOL.md` describes them: a client that stops
//! reading while a rival floods moves. A player is closed `too_slow` (the
//! error, and the close frame's reason, reach it when it reads again; the
//! stale frames queued for it do not) and resumes with its token; a
//! spectator is kept, skips events and catches up with one snapshot.
//!
//! Each case runs twice: once where only the outbox's byte bound can notice
//! the stall, once where only the write timeout can. Nothing waits on the
//! clock: the rival plays until the server has reacted, then the stalled
//! client reads.

use std::sync::atomic::Ordering;

use patience_server::{Config, Server};
use patience_shared::protocol::{ClientMessage, ErrorCode, RoomOptions, ServerMessage};
use patience_tests::{
    Client, a_lazy_spectator_catches_up, first_deal, lazy_spectator, play_and_take_back,
    start_server,
};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// Small kernel and WebSocket buffers, so that a client that stops reading
/// blocks the server's writes after a few kilobytes.
fn small_buffers(config: &mut Config) {
    config.socket_send_buffer_bytes = Some(4096);
    config.write_buffer_bytes = 1024;
}

/// Only the byte bound can notice: frames are not counted and the write
/// timeout is far away.
fn byte_bound_only(config: &mut Config) {
    small_buffers(config);
    config.outbox_capacity = 100_000;
    config.outbox_bytes = config.max_message_bytes;
    config.write_timeout_ms = 600_000;
}

/// Only the write timeout can notice: the outbox's bounds are far away.
fn write_timeout_only(config: &mut Config) {
    small_buffers(config);
    config.outbox_capacity = 100_000;
    config.outbox_bytes = 1 << 30;
    config.write_timeout_ms = 100;
}

fn undo_room() -> RoomOptions {
    RoomOptions {
        undo_allowed: true,
        time_limit_ms: None,
        open_boards: false,
        best_of: None,
        rated: false,
    }
}

/// Ada plays a move and takes it back, each answered, until `enough` holds
/// of what she was sent since she began.
async fn flood_until(ada: &mut Client, first_move: &str, enough: impl Fn(&ServerMessage) -> bool) {
    let already = ada.received().len();
    for _ in 0..20_000 {
        play_and_take_back(ada, first_move).await;
        if ada.received().iter().skip(already).any(&enough) {
            return;
        }
    }
    panic!("the server never reacted to the stalled client");
}

async fn a_stalled_player_learns_it_was_too_slow_and_resumes(server: &Server) {
    let (_, line) = first_deal();
    let mut ada = Client::hello(server, "ada").await;
    let mut bob = Client::connect_with_small_buffer(server).await;
    bob.say_hello("bob").await;
    let (code, _) = ada.create_room(2, undo_room()).await;
    let (_, bob_token) = bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    let last_seq = bob.last_seq;
    // Bob reads nothing more; Ada floods until the room says he is gone.
    flood_until(&mut ada, &line[0], |message| {
        matches!(message, ServerMessage::RoomUpdate { room, .. }
            if room.players.get(1).is_some_and(|bob| !bob.connected))
    })
    .await;
    // Bob reads again: what the kernel already held, then why, then a
    // close frame naming it.
    let closed = bob.closed().await;
    let frame = closed.frame.as_ref().expect("a close frame");
    assert_eq!(frame.code, CloseCode::Policy, "{closed:?}");
    assert_eq!(frame.reason.as_str(), "too_slow");
    assert!(
        matches!(
            closed.messages.last(),
            Some(ServerMessage::Error {
                code: ErrorCode::TooSlow,
                ..
            })
        ),
        "the error comes last, after the stale frames: {:?}",
        closed.messages.last()
    );
    // The seat was kept: he resumes on a new connection and plays on.
    let mut bob = Client::hello(server, "bob").await;
    bob.send(&ClientMessage::Resume {
        token: bob_token,
        last_seq,
    })
    .await;
    let resumed = bob.recv().await;
    assert!(
        matches!(resumed, ServerMessage::Resumed { seat: 1, .. }),
        "{resumed:?}"
    );
    bob.play(&line[0]).await;
    assert!(matches!(
        bob.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
}

async fn a_stalled_spectator_is_kept_and_catches_up_with_a_snapshot(server: &Server) {
    let (_, line) = first_deal();
    let mut ada = Client::hello(server, "ada").await;
    let mut bob = Client::hello(server, "bob").await;
    let (code, _) = ada.create_room(2, undo_room()).await;
    bob.join_room(&code).await;
    ada.race_started().await;
    let lazy = lazy_spectator(server, code, &mut ada).await;
    a_lazy_spectator_catches_up(server, &mut ada, lazy, &line[0]).await;
}

/// How many times the server saw a socket take no writes for its timeout.
fn write_stalls(server: &Server) -> u64 {
    server.metrics().write_stalls.load(Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_byte_bound_closes_a_stalled_player_too_slow_and_it_resumes() {
    let server = start_server(byte_bound_only).await;
    a_stalled_player_learns_it_was_too_slow_and_resumes(&server).await;
    assert_eq!(write_stalls(&server), 0, "the byte bound noticed first");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_timeout_closes_a_stalled_player_too_slow_and_it_resumes() {
    let server = start_server(write_timeout_only).await;
    a_stalled_player_learns_it_was_too_slow_and_resumes(&server).await;
    assert!(write_stalls(&server) >= 1, "the write timeout noticed");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_byte_bound_coalesces_a_stalled_spectator() {
    let server = start_server(byte_bound_only).await;
    a_stalled_spectator_is_kept_and_catches_up_with_a_snapshot(&server).await;
    assert_eq!(write_stalls(&server), 0, "the byte bound noticed first");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_timeout_coalesces_a_stalled_spectator() {
    let server = start_server(write_timeout_only).await;
    a_stalled_spectator_is_kept_and_catches_up_with_a_snapshot(&server).await;
    assert!(write_stalls(&server) >= 1, "the write timeout noticed");
    server.shutdown().await;
}
