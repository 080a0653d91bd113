//! The daily tournament against a real server and database file: days
//! played over a virtual week, closed and tallied, then the past days with
//! their podiums and deals, a player's record with its streaks, and the
//! week's standings with today counted live.

use patience_server::Server;
use patience_server::clock::Clock;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ClientMessage, DaysPage, ErrorCode, GameRecord, Period, PlayerRecord, PlayerStatus,
    ServerMessage, StandingsPage,
};
use patience_tests::{
    Client, DAY, DAY_BEFORE_NOON, DAY_MORNING, HOUR, daily_deal, daily_secret_hex, start_server,
};

const GAME: GameKind = GameKind::ThreeBlindMice;

/// A connected, registered player.
async fn player(server: &Server, name: &str) -> Client {
    let mut client = Client::hello(server, name).await;
    client.register(name).await;
    client
}

/// Plays today's deal to a win, a move a second (a person's pace).
async fn win(client: &mut Client, clock: &Clock) {
    let attempt = client.daily_play().await;
    let (_, line) = daily_deal(&attempt.date);
    for text in &line {
        clock.advance(1_000);
        client.play_all(std::slice::from_ref(text)).await;
    }
    assert_eq!(finished(client).await, PlayerStatus::Won);
}

/// Opens today's deal and resigns it.
async fn resign(client: &mut Client) {
    client.daily_play().await;
    client.send(&ClientMessage::Resign).await;
    assert_eq!(finished(client).await, PlayerStatus::Resigned);
}

async fn finished(client: &mut Client) -> PlayerStatus {
    match client
        .recv_until(|message| matches!(message, ServerMessage::DailyFinished { .. }))
        .await
    {
        ServerMessage::DailyFinished { result } => result.status,
        _ => unreachable!("recv_until returned another message"),
    }
}

async fn days(client: &mut Client, before: Option<&str>, limit: Option<u32>) -> DaysPage {
    client
        .send(&ClientMessage::DailyDays {
            game: GAME,
            before: before.map(str::to_string),
            limit,
        })
        .await;
    match client.recv().await {
        ServerMessage::DaysPage { page } => page,
        other => panic!("expected days_page, got {other:?}"),
    }
}

async fn stats(client: &mut Client, name: Option<&str>) -> Result<PlayerRecord, ErrorCode> {
    client
        .send(&ClientMessage::PlayerStats {
            name: name.map(str::to_string),
        })
        .await;
    match client.recv().await {
        ServerMessage::PlayerRecord { record } => Ok(record),
        ServerMessage::Error { code, .. } => Err(code),
        other => panic!("expected player_record, got {other:?}"),
    }
}

async fn standings(
    client: &mut Client,
    period: Period,
    key: Option<&str>,
) -> Result<StandingsPage, ErrorCode> {
    client
        .send(&ClientMessage::Standings {
            game: GAME,
            period,
            key: key.map(str::to_string),
            limit: None,
        })
        .await;
    match client.recv().await {
        ServerMessage::StandingsPage { page } => Ok(page),
        ServerMessage::Error { code, .. } => Err(code),
        other => panic!("expected standings_page, got {other:?}"),
    }
}

#[tokio::test]
async fn closed_days_list_their_podiums_records_keep_streaks_and_the_week_counts_today_live() {
    let data = tempfile::tempdir().expect("temp dir");
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let data_dir = data.path().to_path_buf();
    let server_clock = clock.clone();
    let server = start_server(move |config| {
        config.data_dir = Some(data_dir);
        config.daily_secret = Some(daily_secret_hex());
        config.clock = server_clock;
    })
    .await;
    // Registered the day before: they rank from the first day.
    let mut ada = player(&server, "ada").await;
    let mut bob = player(&server, "bob").await;
    let mut guest = Client::hello(&server, "guest").await;

    // Tuesday the 1st: Ada wins, Bob resigns. Wednesday: Ada alone.
    // Thursday, still open: Ada wins again, Bob resigns.
    clock.set(DAY_MORNING);
    win(&mut ada, &clock).await;
    resign(&mut bob).await;
    clock.set(DAY_MORNING + 24 * HOUR);
    win(&mut ada, &clock).await;
    clock.set(DAY_MORNING + 48 * HOUR);
    win(&mut ada, &clock).await;
    resign(&mut bob).await;

    // Past days: the two closed ones, newest first, with their deals.
    let page = days(&mut guest, None, None).await;
    let dates: Vec<&str> = page.days.iter().map(|day| day.date.as_str()).collect();
    assert_eq!(dates, ["2026-12-02", DAY], "the open day is not listed");
    assert!(!page.more);
    let first = &page.days[1];
    assert_eq!((first.finishers, first.winners), (2, 1));
    let podium: Vec<(u32, &str, PlayerStatus)> = first
        .podium
        .iter()
        .map(|row| (row.rank, row.name.as_str(), row.status))
        .collect();
    assert_eq!(
        podium,
        [
            (1, "ada", PlayerStatus::Won),
            (2, "bob", PlayerStatus::Resigned)
        ]
    );
    assert_eq!(
        first.reveal.seed,
        daily_deal(DAY).0,
        "the day's deal, revealed"
    );
    assert_eq!(page.days[0].reveal.seed, daily_deal("2026-12-02").0);
    let older = days(&mut guest, Some("2026-12-02"), Some(1)).await;
    assert_eq!(older.days.len(), 1);
    assert_eq!(older.days[0].date, DAY);

    // Records over the closed days: Ada has played and won both; Bob
    // missed Wednesday, so his streak is over.
    let record = stats(&mut guest, Some("ADA")).await.expect("ada's record");
    assert_eq!(record.name, "ada");
    assert_eq!(record.through.as_deref(), Some("2026-12-02"));
    let ada_game = &record.games[..];
    assert_eq!(ada_game.len(), 1);
    let GameRecord {
        days_played,
        wins,
        best_rank,
        median_rank,
        play_streak,
        best_play_streak,
        win_streak,
        ..
    } = ada_game[0].clone();
    assert_eq!(
        (days_played, wins, best_rank, median_rank),
        (2, 2, Some(1), Some(1))
    );
    assert_eq!((play_streak, best_play_streak, win_streak), (2, 2, 2));
    let own = stats(&mut bob, None).await.expect("bob's own record");
    let bob_game = &own.games[0];
    assert_eq!(
        (
            bob_game.days_played,
            bob_game.wins,
            bob_game.best_rank,
            bob_game.play_streak,
            bob_game.best_play_streak
        ),
        (1, 0, Some(2), 0, 1)
    );
    assert_eq!(bob_game.last_played.as_deref(), Some(DAY));

    // The week of the 1st (Monday the 30th to Sunday the 6th), live:
    // Thursday's ranking counts as it stands.
    let week = standings(&mut bob, Period::Week, None)
        .await
        .expect("the week");
    assert_eq!(week.key, "2026-W49");
    assert_eq!(
        (week.first_date.as_str(), week.last_date.as_str()),
        ("2026-11-30", "2026-12-06")
    );
    assert!(week.live);
    let rows: Vec<(u32, &str, u32, u32, u32)> = week
        .rows
        .iter()
        .map(|row| (row.rank, row.name.as_str(), row.points, row.days, row.wins))
        .collect();
    assert_eq!(rows, [(1, "ada", 75, 3, 3), (2, "bob", 36, 2, 0)]);
    assert_eq!(week.players, 2);
    assert_eq!(week.own.map(|row| row.rank), Some(2));
    let november = standings(&mut guest, Period::Month, Some("2026-11"))
        .await
        .expect("november");
    assert!(!november.live && november.rows.is_empty() && november.own.is_none());

    // What is refused, and why.
    assert_eq!(
        stats(&mut guest, None).await,
        Err(ErrorCode::NotAuthenticated)
    );
    assert_eq!(
        stats(&mut guest, Some("nobody")).await,
        Err(ErrorCode::PlayerNotFound)
    );
    for (period, key) in [
        (Period::Week, "2026-W60"),
        (Period::Week, "2026-12"),
        (Period::Month, "2027-01"),
    ] {
        assert_eq!(
            standings(&mut guest, period, Some(key)).await,
            Err(ErrorCode::InvalidRequest),
            "{key}"
        );
    }
    guest
        .send(&ClientMessage::DailyDays {
            game: GAME,
            before: Some("yesterday".to_string()),
            limit: None,
        })
        .await;
    assert_eq!(guest.next_error().await, ErrorCode::InvalidRequest);

    // Once Thursday closes, its tally holds the points it showed live (the
    // week is still live: Friday is open).
    clock.set(DAY_MORNING + 72 * HOUR);
    let week = standings(&mut ada, Period::Week, Some("2026-W49"))
        .await
        .expect("the week");
    assert!(week.live);
    let points: Vec<u32> = week.rows.iter().map(|row| row.points).collect();
    assert_eq!(points, [75, 36]);
    let record = stats(&mut ada, None).await.expect("ada's record");
    assert_eq!(record.through.as_deref(), Some("2026-12-03"));
    assert_eq!(record.games[0].play_streak, 3);
    server.shutdown().await;
}
