//! The real server binary on PostgreSQL (`--database-url`): a player
//! registers, plays the daily deal and wins a race, the server stops and
//! starts again on the same database, and everything reads back; and a
//! race killed mid-line runs on from every move kept, as on SQLite. Each
//! test's database is one of its own on the server `tests/with-services`
//! starts.

use patience_server::store::postgres::ScratchDatabase;
use patience_shared::protocol::{ClientMessage, PlayerStatus, RoomOptions, ServerMessage};
use patience_tests::{Client, ServerProcess, daily_deal, first_deal};

#[tokio::test]
async fn a_server_on_postgresql_keeps_players_attempts_and_races_across_a_restart() {
    let database = ScratchDatabase::create();
    let directory = tempfile::tempdir().expect("temp dir");

    // First life: Ada registers and wins today's deal; then she wins a
    // race against Bob, who resigns.
    let server = ServerProcess::start_on_postgres(directory.path(), database.url(), &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    let (player, token) = ada.register("ada").await;
    let attempt = ada.daily_play().await;
    let (_, line) = daily_deal(&attempt.date);
    ada.play_all(&line).await;
    let daily = match ada
        .recv_until(|message| matches!(message, ServerMessage::DailyFinished { .. }))
        .await
    {
        ServerMessage::DailyFinished { result } => result,
        _ => unreachable!("recv_until returned another message"),
    };
    assert_eq!(daily.status, PlayerStatus::Won);

    let (_, race_line) = first_deal();
    let mut racer = Client::hello_to(server.address, "ada").await;
    let mut bob = Client::hello_to(server.address, "bob").await;
    let (code, _) = racer.create_room(2, RoomOptions::default()).await;
    bob.join_room(&code).await;
    racer.race_started().await;
    bob.race_started().await;
    racer.play_all(&race_line).await;
    bob.send(&ClientMessage::Resign).await;
    let race = match racer
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await
    {
        ServerMessage::RaceEnded { result, .. } => result,
        _ => unreachable!("recv_until returned another message"),
    };
    let race_id = race.race_id.expect("a stored race has its id");
    assert!(server.terminate(), "SIGTERM stops the server cleanly");

    // Second life, on the same database: the account, the attempt, its
    // rank and both replays are there.
    let server = ServerProcess::start_on_postgres(directory.path(), database.url(), &[]);
    let mut ada = Client::hello_to(server.address, "ada").await;
    assert_eq!(ada.authenticate(&token).await, player);
    ada.assert_daily_win_kept(daily.race_id, &line).await;
    ada.send(&ClientMessage::Replay { race_id }).await;
    match ada.recv().await {
        ServerMessage::ReplayData { race: replay } => assert_eq!(replay.result, race),
        other => panic!("expected replay_data, got {other:?}"),
    }
    assert!(server.terminate(), "SIGTERM stops the server cleanly");
}

#[tokio::test]
async fn a_race_killed_mid_line_on_postgresql_resumes_with_every_acknowledged_move() {
    let database = ScratchDatabase::create();
    let directory = tempfile::tempdir().expect("temp dir");
    crate::durability::race_killed_mid_line_resumes(|| {
        ServerProcess::start_on_postgres(directory.path(), database.url(), &[])
    })
    .await;
}
