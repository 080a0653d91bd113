//! A day's leaderboard followed live, and a finished race's boards, against
//! a real server on a virtual clock.

use patience_server::clock::Clock;
use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, LeaderboardPage, LeaderboardUpdate, PlayerStatus, RoomOptions,
    ServerMessage, Unranked,
};
use patience_shared::rules::Rules as _;
use patience_tests::{
    Client, DAY, DAY_BEFORE_NOON, DAY_MORNING, HOUR, NEXT_DAY, daily_deal, first_deal,
    start_server, two_player_race,
};

use crate::daily::{daily_server_with, finished, play_paced, player};

/// Follows today's Three Blind Mice: the first page.
pub(crate) async fn follow(client: &mut Client) -> LeaderboardPage {
    client
        .send(&ClientMessage::Follow {
            game: GameKind::ThreeBlindMice,
            date: None,
            limit: None,
        })
        .await;
    match client.recv().await {
        ServerMessage::LeaderboardPage { page } => page,
        other => panic!("expected leaderboard_page, got {other:?}"),
    }
}

async fn update(client: &mut Client) -> LeaderboardUpdate {
    match client.recv().await {
        ServerMessage::LeaderboardUpdate { update } => update,
        other => panic!("expected leaderboard_update, got {other:?}"),
    }
}

/// The counts of an update: (finishers, unranked, playing).
fn counts(update: &LeaderboardUpdate) -> (u32, u32, u32) {
    (update.finishers, update.unranked, update.playing)
}

#[tokio::test]
async fn a_follower_sees_each_attempt_begin_and_finish_and_nothing_of_the_deal() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server = daily_server_with(data.path(), &clock, |_| {}).await;
    let (mut ada, _) = player(&server, "ada").await;
    let (mut bob, _) = player(&server, "bob").await;
    clock.set(DAY_MORNING);
    // Registered on the day: plays off the ranking.
    let (mut cal, _) = player(&server, "cal").await;
    let mut watcher = Client::hello(&server, "watcher").await;

    let page = follow(&mut watcher).await;
    assert_eq!(page.date, DAY);
    assert_eq!((page.finishers, page.unranked, page.playing), (0, 0, 0));
    assert!(page.rows.is_empty());

    let attempt = ada.daily_play().await;
    let begun = update(&mut watcher).await;
    assert_eq!((begun.row.clone(), counts(&begun)), (None, (0, 0, 1)));
    let (seed, line) = daily_deal(&attempt.date);
    play_paced(&mut ada, &clock, &line).await;
    let won = finished(&mut ada).await;
    let ada_row = update(&mut watcher).await;
    assert_eq!(counts(&ada_row), (1, 0, 0));
    let row = ada_row.row.expect("a ranked finish has its row");
    assert_eq!((row.rank, row.name.as_str()), (1, "ada"));
    assert_eq!(row.status, PlayerStatus::Won);
    assert_eq!(row.elapsed_ms, won.progress.elapsed_ms);
    assert_eq!(row.moves as usize, line.len());
    assert_eq!(row.cards_home, 52);

    // Bob resigns: he takes place 2, below Ada.
    bob.daily_play().await;
    assert_eq!(counts(&update(&mut watcher).await), (1, 0, 1));
    bob.send(&ClientMessage::Resign).await;
    finished(&mut bob).await;
    let bob_row = update(&mut watcher).await;
    assert_eq!(counts(&bob_row), (2, 0, 0));
    let row = bob_row.row.expect("a ranked finish has its row");
    assert_eq!((row.rank, row.status), (2, PlayerStatus::Resigned));

    // Cal's finish is off the ranking: it stands on the board, marked,
    // below the two who rank.
    cal.daily_play().await;
    assert_eq!(counts(&update(&mut watcher).await), (2, 0, 1));
    cal.send(&ClientMessage::Resign).await;
    finished(&mut cal).await;
    let cal_finish = update(&mut watcher).await;
    assert_eq!(counts(&cal_finish), (2, 1, 0));
    let row = cal_finish
        .row
        .expect("an unranked finish has its marked row");
    assert_eq!(
        (row.name.as_str(), row.place, row.unranked),
        ("cal", 3, Some(Unranked::NewAccount))
    );

    // Nothing the watcher was sent tells of the open day's deal: no move,
    // no seed.
    let mut needles: Vec<Vec<u8>> = line
        .iter()
        .map(|text| rmp_serde::to_vec(text).expect("a string encodes"))
        .collect();
    needles.push([0xcf].into_iter().chain(seed.to_be_bytes()).collect());
    needles.push(seed.to_string().into_bytes());
    for frame in &watcher.frames {
        for needle in &needles {
            assert!(
                !frame.windows(needle.len()).any(|window| window == needle),
                "a secret of the open day went to a follower: {:?}",
                protocol::decode_server(frame)
            );
        }
    }

    // A second follower that joins late gets the day as it is, then only
    // what follows.
    let mut late = Client::hello(&server, "late").await;
    let page = follow(&mut late).await;
    assert_eq!((page.finishers, page.unranked, page.playing), (2, 1, 0));
    let names: Vec<&str> = page.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada", "bob", "cal"]);
    let (mut dan, _) = player(&server, "dan").await;
    dan.daily_play().await;
    assert_eq!(counts(&update(&mut late).await), (2, 1, 1));
    assert_eq!(counts(&update(&mut watcher).await), (2, 1, 1));

    // A bad date is refused as for `leaderboard`.
    watcher
        .send(&ClientMessage::Follow {
            game: GameKind::ThreeBlindMice,
            date: Some("tomorrow".to_string()),
            limit: None,
        })
        .await;
    assert_eq!(watcher.next_error().await, ErrorCode::InvalidRequest);

    // Once the day closes, its followers are sent the final page, with the
    // deal revealed.
    clock.set(NEXT_DAY + 2 * HOUR);
    for client in [&mut watcher, &mut late] {
        let last = client
            .recv_until(|message| {
                matches!(message, ServerMessage::LeaderboardPage { page } if page.day_over)
            })
            .await;
        let ServerMessage::LeaderboardPage { page } = last else {
            unreachable!("recv_until returned another message");
        };
        assert_eq!(page.reveal.map(|reveal| reveal.seed), Some(seed));
        assert_eq!(page.date, DAY);
    }
}

#[tokio::test]
async fn a_finished_race_s_boards_are_its_logs_played_back() {
    let server = start_server(|_| {}).await;
    let (seed, line) = first_deal();
    let (mut ada, mut bob, _, _, _) = two_player_race(&server, RoomOptions::default()).await;
    ada.play_all(&line[..2]).await;
    bob.send(&ClientMessage::Resign).await;
    ada.send(&ClientMessage::Resign).await;
    let race_id = match ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await
    {
        ServerMessage::RaceEnded { result, .. } => result.race_id.expect("stored"),
        _ => unreachable!("recv_until returned another message"),
    };

    let mut guest = Client::hello(&server, "guest").await;
    guest.send(&ClientMessage::ReplayBoards { race_id }).await;
    let replay = match guest.recv().await {
        ServerMessage::BoardsReplay { replay } => replay,
        other => panic!("expected boards_replay, got {other:?}"),
    };
    assert_eq!((replay.race_id, replay.reveal.seed), (race_id, seed));
    let names: Vec<&str> = replay.seats.iter().map(|seat| seat.name.as_str()).collect();
    assert_eq!(names, ["ada", "bob"]);
    let mut position = AnyGame::deal(GameKind::ThreeBlindMice, seed);
    let mut expected = vec![position.view()];
    for text in &line[..2] {
        let mv = position.parse_move(text).expect("the line's move reads");
        position.apply(mv).expect("the line's move is legal");
        expected.push(position.view());
    }
    assert_eq!(replay.seats[0].moves, line[..2]);
    assert_eq!(replay.seats[0].boards, expected);
    assert_eq!(replay.seats[1].boards, expected[..1]);

    guest
        .send(&ClientMessage::ReplayBoards { race_id: 999_999 })
        .await;
    assert_eq!(guest.next_error().await, ErrorCode::RaceNotFound);
}

#[tokio::test]
async fn a_daily_attempt_s_boards_wait_for_its_day_to_close_but_for_its_player() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server = daily_server_with(data.path(), &clock, |_| {}).await;
    let mut guest = Client::hello(&server, "guest").await;
    let (mut ada, _) = player(&server, "ada").await;
    clock.set(DAY_MORNING);
    let attempt = ada.daily_play().await;
    let (_, daily_line) = daily_deal(&attempt.date);
    play_paced(&mut ada, &clock, &daily_line[..3]).await;
    ada.send(&ClientMessage::Resign).await;
    let result = finished(&mut ada).await;
    ada.send(&ClientMessage::ReplayBoards {
        race_id: result.race_id,
    })
    .await;
    assert!(matches!(
        ada.recv().await,
        ServerMessage::AttemptReplay { attempt } if attempt.boards.len() == 4
    ));
    guest
        .send(&ClientMessage::ReplayBoards {
            race_id: result.race_id,
        })
        .await;
    assert_eq!(guest.next_error().await, ErrorCode::ReplayNotYet);
    clock.set(NEXT_DAY + 2 * HOUR);
    guest
        .send(&ClientMessage::ReplayBoards {
            race_id: result.race_id,
        })
        .await;
    match guest.recv().await {
        ServerMessage::BoardsReplay { replay } => {
            assert_eq!(replay.daily.as_deref(), Some(DAY));
            assert_eq!(replay.seats[0].boards.len(), 4);
        }
        other => panic!("expected boards_replay, got {other:?}"),
    }
}
