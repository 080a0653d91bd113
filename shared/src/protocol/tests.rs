//! Wire bytes of every message, pinned by snapshots, and checked against the
//! examples of `docs/PROTOCOL.md` so the document cannot drift from the code.

use super::*;
use crate::card::Suit;
use crate::rules::ZoneView;

fn card(text: &str) -> Card {
    text.parse().unwrap_or(Card::new(Suit::Clubs, 1))
}

/// A small board for the examples: a real one lists every zone of the game.
fn small_view() -> View {
    View {
        game: GameKind::ThreeBlindMice,
        zones: vec![
            ZoneView {
                zone: Zone::Pile(7),
                hidden: 2,
                face_up: vec![card("Kd"), card("7h")],
            },
            ZoneView {
                zone: Zone::Cell(0),
                hidden: 0,
                face_up: vec![card("As")],
            },
        ],
    }
}

fn room() -> RoomInfo {
    RoomInfo {
        code: "K7PQ3M".to_string(),
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: false,
        options: RoomOptions::default(),
        owner: Some(0),
        phase: Phase::Lobby,
        players: vec![PlayerInfo {
            seat: 0,
            name: "ada".to_string(),
            connected: true,
            status: PlayerStatus::Waiting,
            bot: None,
        }],
        spectators: 0,
        series: None,
    }
}

fn progress() -> Progress {
    Progress {
        moves: 12,
        cards_home: 13,
        cards_in_order: 15,
        runs_home: 1,
        cards_uncovered: 4,
        stock_turned: 0,
        elapsed_ms: 45_250,
    }
}

fn result() -> RaceResult {
    RaceResult {
        race_id: Some(731),
        standings: vec![Standing {
            rank: 1,
            seat: 0,
            name: "ada".to_string(),
            status: PlayerStatus::Won,
            progress: Progress {
                moves: 61,
                cards_home: 52,
                cards_in_order: 52,
                runs_home: 4,
                cards_uncovered: 9,
                stock_turned: 0,
                elapsed_ms: 184_020,
            },
            bot: None,
        }],
        reveal: Reveal {
            game: GameKind::ThreeBlindMice,
            seed: 1042,
            salt: "9f86d081884c7d659a2feaa0c55ad015".to_string(),
        },
        logs: vec![MoveLog {
            seat: 0,
            moves: vec!["7h>4".to_string(), "c1>9".to_string()],
        }],
        open_boards: false,
    }
}

/// Every client message, named as in `docs/PROTOCOL.md`.
pub(crate) fn client_examples() -> Vec<(&'static str, ClientMessage)> {
    vec![
        (
            "hello",
            ClientMessage::Hello {
                version: PROTOCOL_VERSION,
                name: "ada".to_string(),
            },
        ),
        (
            "create_room",
            ClientMessage::CreateRoom {
                game: GameKind::ThreeBlindMice,
                max_players: 2,
                public: false,
                options: RoomOptions {
                    undo_allowed: false,
                    time_limit_ms: Some(600_000),
                    open_boards: false,
                    best_of: None,
                    rated: false,
                },
                bots: Vec::new(),
            },
        ),
        (
            "create_room_with_bots",
            ClientMessage::CreateRoom {
                game: GameKind::ThreeBlindMice,
                max_players: 2,
                public: false,
                options: RoomOptions::default(),
                bots: vec![BotSeat {
                    level: BotLevel::Normal,
                    pace_ms: None,
                }],
            },
        ),
        (
            "join_room",
            ClientMessage::JoinRoom {
                code: "K7PQ3M".to_string(),
            },
        ),
        (
            "quick_race",
            ClientMessage::QuickRace {
                game: GameKind::Indian,
            },
        ),
        (
            "spectate",
            ClientMessage::Spectate {
                code: "K7PQ3M".to_string(),
            },
        ),
        ("leave", ClientMessage::Leave),
        ("start_early", ClientMessage::StartEarly),
        (
            "move",
            ClientMessage::Move {
                text: "7h>4".to_string(),
                seat: None,
            },
        ),
        ("undo", ClientMessage::Undo),
        ("resign", ClientMessage::Resign),
        (
            "resume",
            ClientMessage::Resume {
                token: "3b1f0c9a2d7e4f6a8b0c1d2e3f405162".to_string(),
                last_seq: 17,
            },
        ),
        (
            "register",
            ClientMessage::Register {
                name: "ada".to_string(),
            },
        ),
        (
            "authenticate",
            ClientMessage::Authenticate {
                token: "c2f1e0d9c8b7a6958473625140302f1e0d1c2b3a49586776".to_string(),
            },
        ),
        (
            "daily_play",
            ClientMessage::DailyPlay {
                game: GameKind::ThreeBlindMice,
            },
        ),
        (
            "leaderboard",
            ClientMessage::Leaderboard {
                game: GameKind::ThreeBlindMice,
                date: Some("2026-12-01".to_string()),
                limit: Some(10),
            },
        ),
        ("replay", ClientMessage::Replay { race_id: 731 }),
        (
            "follow",
            ClientMessage::Follow {
                game: GameKind::ThreeBlindMice,
                date: None,
                limit: Some(10),
            },
        ),
        (
            "unfollow",
            ClientMessage::Unfollow {
                game: GameKind::ThreeBlindMice,
            },
        ),
        (
            "daily_days",
            ClientMessage::DailyDays {
                game: GameKind::ThreeBlindMice,
                before: Some("2026-12-01".to_string()),
                limit: Some(7),
            },
        ),
        ("player_stats", ClientMessage::PlayerStats { name: None }),
        (
            "standings",
            ClientMessage::Standings {
                game: GameKind::ThreeBlindMice,
                period: Period::Week,
                key: Some("2026-W49".to_string()),
                limit: Some(10),
            },
        ),
        (
            "replay_boards",
            ClientMessage::ReplayBoards { race_id: 731 },
        ),
        ("request_sign_in_code", ClientMessage::RequestSignInCode),
        (
            "redeem_sign_in_code",
            ClientMessage::RedeemSignInCode {
                code: "K7PQ-3M9X".to_string(),
            },
        ),
        ("sign_out", ClientMessage::SignOut),
        (
            "create_room_best_of",
            ClientMessage::CreateRoom {
                game: GameKind::Indian,
                max_players: 2,
                public: false,
                options: RoomOptions {
                    best_of: Some(3),
                    ..RoomOptions::default()
                },
                bots: Vec::new(),
            },
        ),
        (
            "lobby",
            ClientMessage::Lobby {
                game: Some(GameKind::Indian),
            },
        ),
        ("rematch", ClientMessage::Rematch { accept: true }),
        (
            "quick_race_answer",
            ClientMessage::QuickRaceAnswer { bot: true },
        ),
        (
            "create_room_rated",
            ClientMessage::CreateRoom {
                game: GameKind::ThreeBlindMice,
                max_players: 2,
                public: false,
                options: RoomOptions {
                    rated: true,
                    ..RoomOptions::default()
                },
                bots: Vec::new(),
            },
        ),
        (
            "ratings",
            ClientMessage::Ratings {
                game: GameKind::ThreeBlindMice,
                limit: Some(10),
            },
        ),
        (
            "rating_history",
            ClientMessage::RatingHistory {
                game: GameKind::ThreeBlindMice,
                name: None,
                limit: Some(20),
            },
        ),
    ]
}

fn series() -> SeriesScore {
    SeriesScore {
        best_of: 3,
        races: 1,
        wins: vec![
            SeriesWins {
                name: "ada".to_string(),
                wins: 1,
            },
            SeriesWins {
                name: "bob".to_string(),
                wins: 0,
            },
        ],
        winner: None,
    }
}

/// Every server message, named as in `docs/PROTOCOL.md`.
pub(crate) fn server_examples() -> Vec<(&'static str, ServerMessage)> {
    vec![
        (
            "welcome",
            ServerMessage::Welcome {
                version: PROTOCOL_VERSION,
                server: "patience-server 0.1.0".to_string(),
                limits: Limits {
                    max_message_bytes: 4096,
                    messages_per_second: 20,
                    burst: 40,
                },
            },
        ),
        (
            "error",
            ServerMessage::Error {
                code: ErrorCode::RoomNotFound,
                message: "no room has the code K7PQ3X".to_string(),
            },
        ),
        (
            "room_joined",
            ServerMessage::RoomJoined {
                seq: 1,
                room: room(),
                seat: Some(0),
                resume_token: Some("3b1f0c9a2d7e4f6a8b0c1d2e3f405162".to_string()),
            },
        ),
        (
            "room_update",
            ServerMessage::RoomUpdate {
                seq: 2,
                room: room(),
            },
        ),
        (
            "countdown",
            ServerMessage::Countdown {
                seq: 3,
                starts_in_ms: 5000,
            },
        ),
        (
            "race_started",
            ServerMessage::RaceStarted {
                seq: 4,
                commitment: "5e8f2a3c9d6b1e4f7a0c3d6e9b2f5a8c1d4e7f0a3b6c9d2e5f8a1b4c7d0e3f6a"
                    .to_string(),
                board: small_view(),
                time_limit_ms: 600_000,
            },
        ),
        (
            "move_accepted",
            ServerMessage::MoveAccepted {
                seq: 5,
                text: "7h>4".to_string(),
                effects: vec![Effect::TurnedUp {
                    zone: Zone::Pile(7),
                    card: card("Qc"),
                }],
                board: small_view(),
                progress: progress(),
            },
        ),
        (
            "move_rejected",
            ServerMessage::MoveRejected {
                text: "7h>5".to_string(),
                code: ErrorCode::IllegalMove,
                reason: Some(MoveError::DoesNotBuild {
                    card: card("7h"),
                    onto: card("9c"),
                }),
                message: "7h does not go on 9c".to_string(),
            },
        ),
        (
            "progress",
            ServerMessage::Progress {
                seq: 6,
                seat: 1,
                progress: progress(),
                text: None,
                board: None,
            },
        ),
        (
            "progress_open_boards",
            ServerMessage::Progress {
                seq: 6,
                seat: 1,
                progress: progress(),
                text: Some("Qs>2".to_string()),
                board: Some(small_view()),
            },
        ),
        (
            "finished",
            ServerMessage::Finished {
                seq: 7,
                seat: 0,
                status: PlayerStatus::Won,
                elapsed_ms: 184_020,
            },
        ),
        ("stuck", ServerMessage::Stuck { seq: 8 }),
        (
            "race_ended",
            ServerMessage::RaceEnded {
                seq: 9,
                result: result(),
            },
        ),
        (
            "snapshot",
            ServerMessage::Snapshot {
                seq: 6,
                room: RoomInfo {
                    phase: Phase::Racing,
                    ..room()
                },
                race: Some(RaceSnapshot {
                    commitment: "5e8f2a3c9d6b1e4f7a0c3d6e9b2f5a8c1d4e7f0a3b6c9d2e5f8a1b4c7d0e3f6a"
                        .to_string(),
                    elapsed_ms: 50_000,
                    time_limit_ms: 600_000,
                    boards: vec![
                        SeatBoard {
                            seat: 0,
                            status: PlayerStatus::Racing,
                            board: Some(small_view()),
                            progress: progress(),
                        },
                        SeatBoard {
                            seat: 1,
                            status: PlayerStatus::Racing,
                            board: None,
                            progress: Progress::default(),
                        },
                    ],
                    result: None,
                }),
            },
        ),
        (
            "resumed",
            ServerMessage::Resumed {
                seq: 6,
                room: RoomInfo {
                    phase: Phase::Racing,
                    ..room()
                },
                seat: 0,
                resume_token: "c4a7d2f1e0b9c8a7f6e5d4c3b2a19080".to_string(),
                elapsed_ms: Some(50_000),
            },
        ),
        (
            "left",
            ServerMessage::Left {
                code: "K7PQ3M".to_string(),
            },
        ),
        (
            "shutting_down",
            ServerMessage::ShuttingDown {
                message: "the server is restarting".to_string(),
            },
        ),
        (
            "redirect",
            ServerMessage::Redirect {
                url: "ws://10.0.0.8:7878".to_string(),
            },
        ),
        (
            "registered",
            ServerMessage::Registered {
                player: 17,
                name: "ada".to_string(),
                token: "c2f1e0d9c8b7a6958473625140302f1e0d1c2b3a49586776".to_string(),
            },
        ),
        (
            "authenticated",
            ServerMessage::Authenticated {
                player: 17,
                name: "ada".to_string(),
            },
        ),
        (
            "daily_started",
            ServerMessage::DailyStarted {
                attempt: DailyAttempt {
                    game: GameKind::ThreeBlindMice,
                    date: "2026-12-01".to_string(),
                    commitment: "5e8f2a3c9d6b1e4f7a0c3d6e9b2f5a8c1d4e7f0a3b6c9d2e5f8a1b4c7d0e3f6a"
                        .to_string(),
                    board: small_view(),
                    moves: vec!["7h>4".to_string()],
                    progress: progress(),
                    time_limit_ms: 3_600_000,
                    resumed: true,
                    finishers: 41,
                    winning_times_ms: vec![98_400, 131_250],
                    unranked: None,
                },
            },
        ),
        (
            "daily_started_new_account",
            ServerMessage::DailyStarted {
                attempt: DailyAttempt {
                    game: GameKind::ThreeBlindMice,
                    date: "2026-12-01".to_string(),
                    commitment: "5e8f2a3c9d6b1e4f7a0c3d6e9b2f5a8c1d4e7f0a3b6c9d2e5f8a1b4c7d0e3f6a"
                        .to_string(),
                    board: small_view(),
                    moves: Vec::new(),
                    progress: Progress::default(),
                    time_limit_ms: 3_600_000,
                    resumed: false,
                    finishers: 41,
                    winning_times_ms: vec![98_400, 131_250],
                    unranked: Some(Unranked::NewAccount),
                },
            },
        ),
        (
            "daily_finished",
            ServerMessage::DailyFinished {
                result: DailyResult {
                    game: GameKind::ThreeBlindMice,
                    date: "2026-12-01".to_string(),
                    status: PlayerStatus::Won,
                    progress: progress(),
                    rank: 3,
                    finishers: 41,
                    race_id: 731,
                    unranked: None,
                },
            },
        ),
        (
            "leaderboard_page",
            ServerMessage::LeaderboardPage {
                page: LeaderboardPage {
                    game: GameKind::ThreeBlindMice,
                    date: "2026-12-01".to_string(),
                    day_over: false,
                    finishers: 41,
                    unranked: 2,
                    playing: 5,
                    rows: vec![leaderboard_row()],
                    own: Some(LeaderboardRow {
                        rank: 4,
                        name: "bo".to_string(),
                        status: PlayerStatus::Resigned,
                        elapsed_ms: 61_000,
                        moves: 4,
                        cards_home: 13,
                        race_id: 733,
                        unranked: Some(Unranked::NewAccount),
                        place: 6,
                    }),
                    reveal: None,
                },
            },
        ),
        (
            "replay_data",
            ServerMessage::ReplayData {
                race: RaceRecord {
                    race_id: 731,
                    daily: None,
                    ended_at_ms: 1_764_547_200_000,
                    result: result(),
                },
            },
        ),
        (
            "attempt_replay",
            ServerMessage::AttemptReplay {
                attempt: OwnAttempt {
                    game: GameKind::ThreeBlindMice,
                    date: "2026-12-01".to_string(),
                    race_id: 733,
                    status: PlayerStatus::Resigned,
                    progress: Progress {
                        moves: 1,
                        cards_home: 0,
                        cards_in_order: 0,
                        runs_home: 0,
                        cards_uncovered: 1,
                        stock_turned: 0,
                        elapsed_ms: 4_200,
                    },
                    moves: vec!["7h>4".to_string()],
                    boards: vec![
                        View {
                            game: GameKind::ThreeBlindMice,
                            zones: vec![ZoneView {
                                zone: Zone::Pile(7),
                                hidden: 2,
                                face_up: vec![card("7h")],
                            }],
                        },
                        View {
                            game: GameKind::ThreeBlindMice,
                            zones: vec![ZoneView {
                                zone: Zone::Pile(7),
                                hidden: 1,
                                face_up: vec![card("Kd")],
                            }],
                        },
                    ],
                },
            },
        ),
        (
            "leaderboard_update",
            ServerMessage::LeaderboardUpdate {
                update: LeaderboardUpdate {
                    game: GameKind::ThreeBlindMice,
                    date: "2026-12-01".to_string(),
                    row: Some(leaderboard_row()),
                    finishers: 42,
                    unranked: 3,
                    playing: 7,
                },
            },
        ),
        (
            "days_page",
            ServerMessage::DaysPage {
                page: DaysPage {
                    game: GameKind::ThreeBlindMice,
                    days: vec![DaySummary {
                        date: "2026-11-30".to_string(),
                        finishers: 40,
                        winners: 31,
                        podium: vec![leaderboard_row()],
                        reveal: Reveal {
                            game: GameKind::ThreeBlindMice,
                            seed: 18_446_744_073,
                            salt: "9f86d081884c7d659a2feaa0c55ad015".to_string(),
                        },
                    }],
                    more: true,
                },
            },
        ),
        (
            "player_record",
            ServerMessage::PlayerRecord {
                record: PlayerRecord {
                    name: "ada".to_string(),
                    through: Some("2026-11-30".to_string()),
                    games: vec![GameRecord {
                        game: GameKind::ThreeBlindMice,
                        days_played: 12,
                        wins: 9,
                        best_rank: Some(1),
                        median_rank: Some(4),
                        best_time_ms: Some(151_300),
                        median_time_ms: Some(204_800),
                        play_streak: 5,
                        best_play_streak: 8,
                        win_streak: 2,
                        best_win_streak: 4,
                        last_played: Some("2026-11-30".to_string()),
                    }],
                },
            },
        ),
        (
            "standings_page",
            ServerMessage::StandingsPage {
                page: StandingsPage {
                    game: GameKind::ThreeBlindMice,
                    period: Period::Week,
                    key: "2026-W49".to_string(),
                    first_date: "2026-11-30".to_string(),
                    last_date: "2026-12-06".to_string(),
                    live: true,
                    players: 57,
                    rows: vec![StandingRow {
                        rank: 1,
                        name: "ada".to_string(),
                        points: 43,
                        days: 2,
                        wins: 2,
                        win_time_ms: 335_320,
                    }],
                    own: None,
                },
            },
        ),
        (
            "boards_replay",
            ServerMessage::BoardsReplay {
                replay: BoardsReplay {
                    race_id: 731,
                    daily: None,
                    reveal: Reveal {
                        game: GameKind::ThreeBlindMice,
                        seed: 18_446_744_073,
                        salt: "9f86d081884c7d659a2feaa0c55ad015".to_string(),
                    },
                    seats: vec![SeatReplay {
                        seat: 0,
                        name: "ada".to_string(),
                        rank: 1,
                        status: PlayerStatus::Resigned,
                        moves: vec!["7h>4".to_string()],
                        boards: vec![small_view(), small_view()],
                    }],
                },
            },
        ),
        (
            "room_update_with_bot",
            ServerMessage::RoomUpdate {
                seq: 2,
                room: RoomInfo {
                    players: vec![
                        PlayerInfo {
                            seat: 0,
                            name: "ada".to_string(),
                            connected: true,
                            status: PlayerStatus::Waiting,
                            bot: None,
                        },
                        PlayerInfo {
                            seat: 1,
                            name: "bot (normal)".to_string(),
                            connected: true,
                            status: PlayerStatus::Waiting,
                            bot: Some(BotLevel::Normal),
                        },
                    ],
                    ..room()
                },
            },
        ),
        (
            "sign_in_code",
            ServerMessage::SignInCode {
                code: "K7PQ-3M9X".to_string(),
                expires_in_ms: SIGN_IN_CODE_MS,
            },
        ),
        (
            "signed_in",
            ServerMessage::SignedIn {
                player: 17,
                name: "ada".to_string(),
                token: "c2f1e0d9c8b7a6958473625140302f1e0d1c2b3a49586776".to_string(),
            },
        ),
        ("signed_out", ServerMessage::SignedOut),
        (
            "lobby_page",
            ServerMessage::LobbyPage {
                page: LobbyPage {
                    rooms: vec![LobbyRoom {
                        code: "K7PQ3M".to_string(),
                        game: GameKind::Indian,
                        max_players: 4,
                        players: vec!["ada".to_string()],
                        phase: Phase::Lobby,
                        series: None,
                        ratings: Vec::new(),
                    }],
                    refresh_ms: LOBBY_REFRESH_MS,
                },
            },
        ),
        (
            "lobby_page_rated",
            ServerMessage::LobbyPage {
                page: LobbyPage {
                    rooms: vec![LobbyRoom {
                        code: "K7PQ3M".to_string(),
                        game: GameKind::Indian,
                        max_players: 4,
                        players: vec!["ada".to_string(), "Bot 1".to_string()],
                        phase: Phase::Lobby,
                        series: None,
                        ratings: vec![
                            Some(SeatRating {
                                rating: 344,
                                provisional: true,
                            }),
                            None,
                        ],
                    }],
                    refresh_ms: LOBBY_REFRESH_MS,
                },
            },
        ),
        (
            "room_update_series",
            ServerMessage::RoomUpdate {
                seq: 14,
                room: RoomInfo {
                    phase: Phase::Finished,
                    series: Some(series()),
                    ..room()
                },
            },
        ),
        (
            "rematch_offer",
            ServerMessage::RematchOffer {
                seq: 15,
                offer: RematchOffer {
                    status: RematchStatus::Open,
                    accepted: vec![0],
                    declined: Vec::new(),
                    waiting: vec![1],
                    expires_in_ms: 30_000,
                },
            },
        ),
        (
            "rematch_ready",
            ServerMessage::RematchReady {
                seq: 17,
                code: "M3QT9A".to_string(),
                resume_token: "9f8e7d6c5b4a39281706f5e4d3c2b1a0".to_string(),
            },
        ),
        (
            "room_closed",
            ServerMessage::RoomClosed {
                code: "K7PQ3M".to_string(),
                race_id: 731,
            },
        ),
        (
            "quick_race_wait",
            ServerMessage::QuickRaceWait {
                game: GameKind::Indian,
                waited_ms: 90_000,
                window: None,
                bot_offer: true,
                waiting: 3,
                racing: 12,
            },
        ),
        (
            "ratings_page",
            ServerMessage::RatingsPage {
                game: GameKind::ThreeBlindMice,
                players: 2,
                rows: vec![rating_row(), rating_row_of_grace()],
                own: Some(rating_row_of_grace()),
            },
        ),
        (
            "rating_history_page",
            ServerMessage::RatingHistoryPage {
                game: GameKind::ThreeBlindMice,
                name: "ada".to_string(),
                rating: Some(RatingRow {
                    rank: None,
                    ..rating_row()
                }),
                races: vec![RatingHistoryEntry {
                    race_id: 731,
                    at_ms: 1_764_547_200_000,
                    place: 1,
                    racers: 2,
                    before: 0,
                    after: 344,
                }],
            },
        ),
    ]
}

/// A first race won against another new player: mu 27.64, sigma 8.07.
fn rating_row() -> RatingRow {
    RatingRow {
        rank: Some(1),
        name: "ada".to_string(),
        rating: 344,
        mu: 2764,
        sigma: 807,
        races: 1,
        provisional: true,
    }
}

/// The same race lost.
fn rating_row_of_grace() -> RatingRow {
    RatingRow {
        rank: Some(2),
        name: "grace".to_string(),
        rating: -183,
        mu: 2236,
        sigma: 807,
        races: 1,
        provisional: true,
    }
}

fn leaderboard_row() -> LeaderboardRow {
    LeaderboardRow {
        rank: 1,
        name: "ada".to_string(),
        status: PlayerStatus::Won,
        elapsed_ms: 184_020,
        moves: 61,
        cards_home: 52,
        race_id: 731,
        unranked: None,
        place: 1,
    }
}

/// Hex bytes, space-separated, 32 to a line: the layout of the document.
pub(crate) fn hex_lines(bytes: &[u8]) -> String {
    bytes
        .chunks(32)
        .map(|line| {
            line.iter()
                .map(|byte| to_hex(&[*byte]))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn rendered<T: Serialize>(message: &T) -> String {
    let json = serde_json::to_string(message).unwrap_or_default();
    format!("{json}\n{}", hex_lines(&encode(message)))
}

#[test]
fn client_messages_bytes() {
    for (name, message) in client_examples() {
        insta::assert_snapshot!(format!("client_{name}"), rendered(&message));
        assert_eq!(decode_client(&encode(&message)), Ok(message), "{name}");
    }
}

#[test]
fn server_messages_bytes() {
    for (name, message) in server_examples() {
        insta::assert_snapshot!(format!("server_{name}"), rendered(&message));
        assert_eq!(decode_server(&encode(&message)), Ok(message), "{name}");
    }
}

#[test]
fn the_document_shows_every_message_with_its_bytes() {
    let document: String = include_str!("../../../docs/PROTOCOL.md")
        .split_whitespace()
        .collect();
    let mut missing = Vec::new();
    let client = client_examples()
        .into_iter()
        .map(|(name, message)| (name, encode(&message)));
    let server = server_examples()
        .into_iter()
        .map(|(name, message)| (name, encode(&message)));
    for (name, bytes) in client.chain(server) {
        let hex: String = hex_lines(&bytes).split_whitespace().collect();
        if !document.contains(&hex) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/PROTOCOL.md lacks the bytes of {missing:?}"
    );
}

#[test]
fn every_error_code_is_in_the_document() {
    let document = include_str!("../../../docs/PROTOCOL.md");
    for code in ErrorCode::ALL {
        let name = code.as_str();
        assert!(
            document.contains(&format!("| `{name}` |")),
            "{name} is not in the table of errors"
        );
    }
}

#[test]
fn every_error_code_is_named_as_serde_names_it() {
    let names: std::collections::HashSet<&str> =
        ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
    assert_eq!(names.len(), ErrorCode::ALL.len(), "ALL lists a code twice");
    for code in ErrorCode::ALL {
        let name = code.as_str();
        assert_eq!(
            serde_json::to_value(code).ok(),
            Some(serde_json::Value::from(name)),
            "{code:?}"
        );
        // On the wire: a MessagePack string of the same text.
        assert_eq!(encode(&code), encode(&name), "{code:?}");
        let decoded: Result<ErrorCode, _> = rmp_serde::from_slice(&encode(&name));
        assert_eq!(decoded.ok(), Some(code), "{name}");
    }
}

/// What decoding a client's frame gives, in short.
#[derive(Debug, PartialEq, Eq)]
enum Decoded {
    Message,
    Malformed,
    Unknown(String),
    UnknownGame(String),
}

/// Decodes each frame and checks what it gives; every mismatch is reported
/// at once, not only the first.
fn check_decode(cases: impl IntoIterator<Item = (Vec<u8>, Decoded)>) {
    let mut wrong = Vec::new();
    for (bytes, expected) in cases {
        let decoded = match decode_client(&bytes) {
            Ok(_) => Decoded::Message,
            Err(DecodeError::Malformed(_)) => Decoded::Malformed,
            Err(DecodeError::Unknown(kind)) => Decoded::Unknown(kind),
            Err(DecodeError::UnknownGame(game)) => Decoded::UnknownGame(game),
        };
        if decoded != expected {
            wrong.push(format!(
                "{}: {decoded:?}, expected {expected:?}",
                hex_lines(&bytes).trim_end()
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

fn json(value: serde_json::Value) -> Vec<u8> {
    encode(&value)
}

#[test]
fn malformed_and_unknown_frames_are_told_apart() {
    use serde_json::json as j;
    let cases = [
        // Not MessagePack; not a map; no type; a type that is no string.
        (vec![0xc1], Decoded::Malformed),
        (json(j!(["move", "7h>4"])), Decoded::Malformed),
        (json(j!("move")), Decoded::Malformed),
        (json(j!({"text": "7h>4"})), Decoded::Malformed),
        (json(j!({"type": null})), Decoded::Malformed),
        // rmp-serde would read an integer type as a variant's index (3 is
        // join_room, 5 leave).
        (json(j!({"type": 3})), Decoded::Malformed),
        (json(j!({"type": 5})), Decoded::Malformed),
        (json(j!({"type": 3, "code": "K7PQ3M"})), Decoded::Malformed),
        (json(j!({"type": true})), Decoded::Malformed),
        // A key that is not a string.
        (
            b"\x82\xa4type\xa4move\x00\xa1s".to_vec(),
            Decoded::Malformed,
        ),
        // Two types.
        (
            b"\x82\xa4type\xa5leave\xa4type\xa6resign".to_vec(),
            Decoded::Malformed,
        ),
        // A type in a MessagePack bin, not a string.
        (b"\x81\xa4type\xc4\x05leave".to_vec(), Decoded::Malformed),
        // A whole message followed by anything: a second message, a nil.
        (
            b"\x81\xa4type\xa5leave\x81\xa4type\xa5leave".to_vec(),
            Decoded::Malformed,
        ),
        (b"\x81\xa4type\xa5leave\xc0".to_vec(), Decoded::Malformed),
        (b"\x81\xa4type\xa5leave".to_vec(), Decoded::Message),
        // Unknown types, whatever their fields.
        (
            b"\x81\xa4type\xa5dance".to_vec(),
            Decoded::Unknown("dance".into()),
        ),
        (
            json(j!({"type": "teleport", "to": 3})),
            Decoded::Unknown("teleport".into()),
        ),
        (
            json(j!({"type": "Leave"})),
            Decoded::Unknown("Leave".into()),
        ),
        (json(j!({"type": ""})), Decoded::Unknown("".into())),
        // A known type with a field missing or of the wrong type is malformed.
        (b"\x81\xa4type\xa4move".to_vec(), Decoded::Malformed),
        (json(j!({"type": "move", "text": 7})), Decoded::Malformed),
        (
            json(j!({"type": "join_room", "code": null})),
            Decoded::Malformed,
        ),
        // The optional seat of a move may be omitted or nil; unknown keys
        // are ignored, wherever the type comes.
        (
            json(j!({"type": "move", "text": "s", "seat": null})),
            Decoded::Message,
        ),
        (
            json(j!({"text": "s", "type": "move", "later": [1, 2]})),
            Decoded::Message,
        ),
        (json(j!({"type": "leave"})), Decoded::Message),
    ];
    check_decode(cases);
}

#[test]
fn a_game_this_protocol_lacks_is_unknown_game_not_malformed() {
    use serde_json::json as j;
    let cases = [
        (
            j!({"type": "create_room", "game": "klondike", "max_players": 2, "public": false}),
            Decoded::UnknownGame("klondike".into()),
        ),
        (
            j!({"type": "quick_race", "game": "klondike"}),
            Decoded::UnknownGame("klondike".into()),
        ),
        (
            j!({"type": "daily_play", "game": "spider"}),
            Decoded::UnknownGame("spider".into()),
        ),
        (
            j!({"type": "leaderboard", "game": "freecell", "date": null}),
            Decoded::UnknownGame("freecell".into()),
        ),
        // The wire takes slugs only: the command line's aliases are unknown.
        (
            j!({"type": "quick_race", "game": "tbm"}),
            Decoded::UnknownGame("tbm".into()),
        ),
        (
            j!({"type": "quick_race", "game": "Indian"}),
            Decoded::UnknownGame("Indian".into()),
        ),
        // The game is told first, whatever else is wrong.
        (
            j!({"type": "create_room", "game": "klondike"}),
            Decoded::UnknownGame("klondike".into()),
        ),
        // A known game with another field wrong; a game that is no string.
        (
            j!({"type": "create_room", "game": "indian", "max_players": "two", "public": false}),
            Decoded::Malformed,
        ),
        (j!({"type": "quick_race", "game": 1}), Decoded::Malformed),
        (j!({"type": "quick_race"}), Decoded::Malformed),
        // Messages without a game field keep their own errors.
        (
            j!({"type": "join_room", "game": "klondike"}),
            Decoded::Malformed,
        ),
        (
            j!({"type": "quick_race", "game": "midshipman"}),
            Decoded::Message,
        ),
    ];
    check_decode(cases.map(|(value, expected)| (json(value), expected)));
}

#[test]
fn game_messages_are_the_client_messages_with_a_game() {
    for (name, message) in client_examples() {
        let value = serde_json::to_value(&message).unwrap_or_default();
        let kind = value["type"].as_str().unwrap_or_default();
        assert_eq!(
            GAME_MESSAGES.contains(&kind),
            value.get("game").is_some(),
            "{name}"
        );
    }
}

#[test]
fn every_message_type_is_known_and_no_other() {
    for (name, message) in client_examples() {
        let value = serde_json::to_value(&message).unwrap_or_default();
        let kind = value["type"].as_str().unwrap_or_default();
        assert!(is_known_type::<ClientMessage>(kind), "{name}");
        assert!(!is_known_type::<ServerMessage>(kind), "{name}");
    }
    for (name, message) in server_examples() {
        let value = serde_json::to_value(&message).unwrap_or_default();
        let kind = value["type"].as_str().unwrap_or_default();
        assert!(is_known_type::<ServerMessage>(kind), "{name}");
    }
    for kind in ["", "dance", "Move", "move ", "create-room"] {
        assert!(!is_known_type::<ClientMessage>(kind), "{kind:?}");
    }
}

#[test]
fn display_names_follow_the_rules() {
    let check = |name: &str, expected: Result<&str, NameError>| {
        assert_eq!(display_name(name), expected, "{name:?}");
    };
    let accepted = [
        ("ada", "ada"),
        ("  Ada Lovelace  ", "Ada Lovelace"),
        ("ada\n", "ada"),
        ("Zoë", "Zoë"),
        // Combining marks and zero-width joiners that sit on something.
        ("Zoe\u{308}", "Zoe\u{308}"),
        (
            "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",
            "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",
        ),
        // A zero-width joiner between emoji, after a skin tone and after
        // an emoji presentation selector.
        ("\u{1F469}\u{200D}\u{1F4BB}", "\u{1F469}\u{200D}\u{1F4BB}"),
        (
            "\u{1F469}\u{1F3FD}\u{200D}\u{1F680}",
            "\u{1F469}\u{1F3FD}\u{200D}\u{1F680}",
        ),
        (
            "\u{2764}\u{FE0F}\u{200D}\u{1F525}",
            "\u{2764}\u{FE0F}\u{200D}\u{1F525}",
        ),
        // Brackets that are not the server's mark.
        ("ada (the first)", "ada (the first)"),
        ("(2) ada", "(2) ada"),
        ("ada ()", "ada ()"),
        // Right-to-left scripts need no control to show right to left.
        ("\u{5D0}\u{5D1}\u{5D2}", "\u{5D0}\u{5D1}\u{5D2}"),
        (
            "\u{627}\u{644}\u{639}\u{631}\u{628}\u{64A}\u{629}",
            "\u{627}\u{644}\u{639}\u{631}\u{628}\u{64A}\u{629}",
        ),
        ("\u{4E2D}\u{6587}", "\u{4E2D}\u{6587}"),
        ("123456789012345678901234", "123456789012345678901234"),
    ];
    for (name, trimmed) in accepted {
        check(name, Ok(trimmed));
    }
    let refused = [
        ("", NameError::Length),
        ("   ", NameError::Length),
        ("1234567890123456789012345", NameError::Length),
        ("a\nda", NameError::Control),
        ("a\u{7}da", NameError::Control),
        ("a\u{85}da", NameError::Control),
        // Every bidirectional formatting character, anywhere in the name.
        ("\u{202A}ada", NameError::Bidi),
        ("ada\u{202B}", NameError::Bidi),
        ("a\u{202C}da", NameError::Bidi),
        ("\u{202D}ada", NameError::Bidi),
        ("\u{202E}ada", NameError::Bidi),
        ("\u{2066}ada\u{2069}", NameError::Bidi),
        ("\u{2067}ada", NameError::Bidi),
        ("\u{2068}ada", NameError::Bidi),
        ("ada\u{200E}", NameError::Bidi),
        ("ada\u{200F}", NameError::Bidi),
        ("ada\u{61C}", NameError::Bidi),
        // Nothing to see.
        ("\u{200B}", NameError::Invisible),
        ("\u{200B}\u{200C}\u{200D}", NameError::Invisible),
        ("\u{2060}", NameError::Invisible),
        ("\u{FEFF}\u{FEFF}", NameError::Invisible),
        ("\u{AD}", NameError::Invisible),
        ("\u{301}\u{302}\u{20DD}", NameError::Invisible),
        (" \u{200B} \u{3000} ", NameError::Invisible),
        ("\u{3164}", NameError::Invisible),
        ("\u{115F}\u{1160}", NameError::Invisible),
        ("\u{FFA0}", NameError::Invisible),
        ("\u{2800}\u{2800}", NameError::Invisible),
        ("\u{E0041}\u{E0044}\u{E0041}", NameError::Invisible),
        // Invisible characters inside a name.
        ("a\u{200D}da", NameError::Hidden),
        ("a\u{200B}da", NameError::Hidden),
        ("a\u{200B}b", NameError::Hidden),
        ("\u{FEFF}ada", NameError::Hidden),
        ("ad\u{2060}a", NameError::Hidden),
        ("a\u{AD}da", NameError::Hidden),
        ("a\u{200C}da", NameError::Hidden),
        ("ada\u{E0041}\u{E0044}", NameError::Hidden),
        ("ada\u{E007F}", NameError::Hidden),
        // A zero-width joiner not between two emoji.
        ("ada\u{200D}\u{1F4BB}", NameError::Hidden),
        ("\u{1F469}\u{200D}ada", NameError::Hidden),
        ("\u{1F469}\u{200D}", NameError::Hidden),
        // Blank letters beside visible ones.
        ("ada\u{3164}", NameError::Hidden),
        ("\u{3164}ada", NameError::Hidden),
        ("a\u{115F}da", NameError::Hidden),
        ("ada\u{2800}", NameError::Hidden),
        // The server's mark for a repeated name, and look-alikes of it.
        ("ada (2)", NameError::Numbered),
        ("ada (12)", NameError::Numbered),
        ("ada(2)", NameError::Numbered),
        ("ada \u{FF08}\u{FF12}\u{FF09}", NameError::Numbered),
        ("ada (l)", NameError::Numbered),
    ];
    for (name, error) in refused {
        check(name, Err(error));
    }
}

#[test]
fn look_alike_names_share_a_key() {
    let same = |first: &str, second: &str| {
        assert_eq!(name_key(first), name_key(second), "{first:?} {second:?}");
    };
    let different = |first: &str, second: &str| {
        assert_ne!(name_key(first), name_key(second), "{first:?} {second:?}");
    };
    same("ada", "ADA");
    same("ada", "Ada");
    // Cyrillic а, fullwidth letters, mixed.
    same("ada", "\u{430}da");
    same("ada", "\u{430}d\u{430}");
    same("ada", "\u{FF41}\u{FF44}\u{FF41}");
    same("ADA", "\u{FF21}\u{FF24}\u{FF21}");
    // Look-alikes within ASCII.
    same("modern", "rnodern");
    same("Ian", "lan");
    same("bob1", "bobl");
    same("b0b", "bOb");
    // An accent spelled as one character or as a letter and a mark.
    same("Zo\u{EB}", "Zoe\u{308}");
    different("ada", "ida");
    different("ada", "adam");
    different("Zo\u{EB}", "Zoe");
}

#[test]
fn registered_names_are_display_names_too() {
    // A name refused as a display name is refused for an account.
    for name in ["\u{202E}ada", "ada\u{200F}", "\u{200B}ada", "ada\u{3164}"] {
        assert!(!valid_player_name(name), "{name:?}");
    }
    for name in ["ada", "Ada_Lovelace-1815"] {
        assert_eq!(display_name(name), Ok(name));
        assert!(valid_player_name(name), "{name}");
    }
}

#[test]
fn sign_in_codes_are_read_whatever_their_case_spaces_and_dash() {
    let cases = [
        ("K7PQ-3M9X", Some("K7PQ3M9X")),
        ("k7pq3m9x", Some("K7PQ3M9X")),
        (" k7pq - 3m9x ", Some("K7PQ3M9X")),
        ("K7PQ-3M9", None),
        ("K7PQ-3M9XX", None),
        // 0, 1, 2, 5, 8, B, O, I, L, S, U, V, Z are not in the alphabet.
        ("K7PQ-3M90", None),
        ("K7PQ-3M9B", None),
        ("", None),
    ];
    for (typed, expected) in cases {
        assert_eq!(
            normalize_sign_in_code(typed).as_deref(),
            expected,
            "{typed:?}"
        );
    }
    assert_eq!(show_sign_in_code("K7PQ3M9X"), "K7PQ-3M9X");
}

#[test]
fn commitment_is_sha256_of_the_documented_text() {
    // echo -n 'patience-race:v1:three-blind-mice:1042:9f86d081884c7d659a2feaa0c55ad015' | sha256sum
    let expected = commitment(
        GameKind::ThreeBlindMice,
        1042,
        "9f86d081884c7d659a2feaa0c55ad015",
    );
    assert_eq!(
        expected,
        "330521493d0cdd459f1db36f67fb5bd403ccdd122530754345d4ae1e551ada03"
    );
}

#[test]
fn every_move_error_reason_is_in_the_document() {
    let document = include_str!("../../../docs/PROTOCOL.md");
    let (zone, card) = (Zone::Pile(0), card("7h"));
    let reasons = [
        MoveError::NoSuchZone { zone },
        MoveError::EmptySource { zone },
        MoveError::NotEnoughCards { zone, count: 2 },
        MoveError::CardNotInPlay { card },
        MoveError::DoesNotBuild { card, onto: card },
        MoveError::EmptyPileNeedsKing { card },
        MoveError::ChangesNothing,
        MoveError::NotNextForFoundation { card },
        MoveError::SameZone,
        MoveError::ZoneTakesNothing { zone },
        MoveError::ZoneGivesNothing { zone },
        MoveError::StockEmpty,
        MoveError::GameOver,
        MoveError::WrongGame,
        MoveError::CannotFill { card, zone },
        MoveError::NotAnAce { card },
        MoveError::CannotSwap {
            first: card,
            second: card,
        },
        MoveError::SwapOutOfOrder,
    ];
    for reason in reasons {
        let json = serde_json::to_value(&reason).unwrap_or_default();
        let name = json["reason"].as_str().unwrap_or_default().to_string();
        assert!(
            document.contains(&format!("| `{name}` |")),
            "{name} is not documented"
        );
    }
}

#[test]
fn cards_home_counts_foundations_discards_and_home_piles() {
    let check = |zones: Vec<(Zone, &[&str])>, expected: u16| {
        let view = View {
            game: GameKind::VirginiaReel,
            zones: zones
                .into_iter()
                .map(|(zone, cards)| ZoneView {
                    zone,
                    hidden: 0,
                    face_up: cards.iter().map(|text| card(text)).collect(),
                })
                .collect(),
        };
        assert_eq!(cards_home(&view), expected);
    };
    check(
        vec![
            (Zone::Foundation(0), &["Ac", "2c"]),
            (Zone::Pile(0), &["Kd"]),
        ],
        2,
    );
    check(vec![(Zone::Discard, &["Ah", "As"])], 2);
    // Row A's base is a 2, row B's a 3, row C's a 4.
    check(
        vec![
            (Zone::Position(0), &["2c", "5c"]),
            (Zone::Position(1), &["3c"]),
        ],
        2,
    );
    check(
        vec![
            (Zone::Position(8), &["3d", "6d", "9d"]),
            (Zone::Position(16), &["4s"]),
        ],
        4,
    );
    check(
        vec![(Zone::Position(9), &["2d"]), (Zone::Reserve(0), &["4h"])],
        0,
    );
}

fn view_of(zones: Vec<(Zone, u8, &[&str])>) -> View {
    View {
        game: GameKind::VirginiaReel,
        zones: zones
            .into_iter()
            .map(|(zone, hidden, cards)| ZoneView {
                zone,
                hidden,
                face_up: cards.iter().map(|text| card(text)).collect(),
            })
            .collect(),
    }
}

#[test]
fn runs_home_are_full_foundations_and_full_home_piles() {
    let check = |zones: Vec<(Zone, u8, &[&str])>, expected: u8| {
        assert_eq!(runs_home(&view_of(zones)), expected);
    };
    let suit: Vec<String> = (1..=13)
        .map(|rank| Card::new(Suit::Hearts, rank).to_string())
        .collect();
    let suit: Vec<&str> = suit.iter().map(String::as_str).collect();
    check(vec![(Zone::Foundation(0), 0, &suit)], 1);
    check(vec![(Zone::Foundation(0), 0, &suit[..12])], 0);
    check(
        vec![
            (Zone::Position(0), 0, &["2c", "5c", "8c", "Jc"]),
            (Zone::Position(8), 0, &["3c", "6c", "9c", "Qc"]),
            (Zone::Position(16), 0, &["4c", "7c", "Tc"]),
        ],
        2,
    );
    // Four cards on a misplaced position cannot be; one card is not a run.
    check(vec![(Zone::Position(1), 0, &["3c"])], 0);
}

#[test]
fn progress_counts_what_left_the_face_down_places_and_the_stock() {
    let deal = view_of(vec![
        (Zone::Pile(0), 3, &["Kd"]),
        (Zone::Pile(1), 2, &["Qd"]),
        (Zone::Stock, 20, &[]),
    ]);
    let now = view_of(vec![
        (Zone::Pile(0), 1, &["5c", "4c"]),
        (Zone::Pile(1), 2, &["Qd"]),
        (Zone::Stock, 13, &[]),
        (Zone::Waste, 0, &["9h"]),
        (Zone::Foundation(0), 0, &["Ac"]),
    ]);
    let progress = Progress::measure(&deal, &now, 9, 1234);
    assert_eq!(
        progress,
        Progress {
            moves: 9,
            cards_home: 1,
            cards_in_order: 1,
            runs_home: 0,
            cards_uncovered: 2,
            stock_turned: 7,
            elapsed_ms: 1234,
        }
    );
    assert_eq!(
        Progress::measure(&deal, &deal, 0, 0),
        Progress::default(),
        "the deal itself has made no progress"
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn client_message() -> impl Strategy<Value = ClientMessage> {
        prop_oneof![
            (any::<u32>(), ".{0,30}")
                .prop_map(|(version, name)| ClientMessage::Hello { version, name }),
            ".{0,12}".prop_map(|code| ClientMessage::JoinRoom { code }),
            (".{0,20}", proptest::option::of(any::<u8>()))
                .prop_map(|(text, seat)| ClientMessage::Move { text, seat }),
            (".{0,64}", any::<u64>())
                .prop_map(|(token, last_seq)| ClientMessage::Resume { token, last_seq }),
            (
                2u8..=8,
                any::<bool>(),
                any::<bool>(),
                proptest::option::of(any::<u64>()),
                any::<bool>(),
            )
                .prop_map(
                    |(max_players, public, undo_allowed, time_limit_ms, open_boards)| {
                        ClientMessage::CreateRoom {
                            game: GameKind::Midshipman,
                            max_players,
                            public,
                            options: RoomOptions {
                                undo_allowed,
                                time_limit_ms,
                                open_boards,
                                best_of: None,
                                rated: false,
                            },
                            bots: Vec::new(),
                        }
                    }
                ),
            Just(ClientMessage::Resign),
            ".{0,30}".prop_map(|name| ClientMessage::Register { name }),
            ".{0,64}".prop_map(|token| ClientMessage::Authenticate { token }),
            (
                proptest::option::of("[0-9-]{0,12}"),
                proptest::option::of(any::<u32>())
            )
                .prop_map(|(date, limit)| ClientMessage::Leaderboard {
                    game: GameKind::VirginiaReel,
                    date,
                    limit,
                }),
            any::<u64>().prop_map(|race_id| ClientMessage::Replay { race_id }),
        ]
    }

    #[test]
    fn a_win_ranks_after_every_faster_or_equal_win() {
        let attempt = DailyAttempt {
            game: GameKind::ThreeBlindMice,
            date: "2026-12-01".to_string(),
            commitment: String::new(),
            board: small_view(),
            moves: Vec::new(),
            progress: Progress::default(),
            time_limit_ms: 1,
            resumed: false,
            finishers: 5,
            winning_times_ms: vec![100, 200, 200, 300],
            unranked: None,
        };
        for (elapsed, rank) in [(50, 1), (100, 2), (150, 2), (200, 4), (999, 5)] {
            assert_eq!(attempt.rank_if_won_at(elapsed), rank, "{elapsed}");
        }
    }

    #[test]
    fn player_names_follow_the_rules() {
        let good = ["ada", "Ada_Lovelace-1815", "abc", "a2345678901234567890"];
        let bad = [
            "",
            "ab",
            "1ada",
            "_ada",
            "ada lovelace",
            "adä",
            "a23456789012345678901",
        ];
        for name in good {
            assert!(valid_player_name(name), "{name}");
        }
        for name in bad {
            assert!(!valid_player_name(name), "{name}");
        }
    }

    proptest! {
        #[test]
        fn client_messages_round_trip(message in client_message()) {
            prop_assert_eq!(decode_client(&encode(&message)), Ok(message));
        }

        /// Whatever bytes arrive, decoding answers with a message or an
        /// error, never a panic.
        #[test]
        fn any_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode_client(&bytes);
            let _ = decode_server(&bytes);
        }

        /// A message with one byte damaged decodes to some message or
        /// fails cleanly (unknown keys are ignored, as the document says).
        #[test]
        fn damaged_messages_fail_cleanly(message in client_message(), index in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let mut bytes = encode(&message);
            let at = index.index(bytes.len());
            bytes[at] = byte;
            let _ = decode_client(&bytes);
        }
    }
}

/// A Three Blind Mice deal whose face-up cards are every card but
/// `face_down` (its zones' places do not matter to the count).
fn deal_hiding(face_down: &[&str]) -> View {
    let hidden: Vec<Card> = face_down.iter().map(|text| card(text)).collect();
    let face_up = (0..52)
        .map(Card::from_index)
        .filter(|card| !hidden.contains(card))
        .collect();
    View {
        game: GameKind::ThreeBlindMice,
        zones: vec![
            ZoneView {
                zone: Zone::Pile(0),
                hidden: 0,
                face_up,
            },
            ZoneView {
                zone: Zone::Pile(7),
                hidden: u8::try_from(hidden.len()).unwrap_or(u8::MAX),
                face_up: Vec::new(),
            },
        ],
    }
}

#[test]
fn cards_in_order_counts_a_three_blind_mice_build_down_from_a_bare_king() {
    // (cards dealt face down, the board's zones) → the count
    let check = |face_down: &[&str], zones: Vec<(Zone, u8, &[&str])>, expected: u16| {
        let view = View {
            game: GameKind::ThreeBlindMice,
            ..view_of(zones)
        };
        assert_eq!(
            cards_in_order(&deal_hiding(face_down), &view),
            expected,
            "{face_down:?} {view:?}"
        );
    };
    check(&[], vec![(Zone::Pile(0), 0, &["Kd", "Qd", "Jd"])], 3);
    // A card face down under the King: the build is not yet in place.
    check(&[], vec![(Zone::Pile(0), 1, &["Kd", "Qd"])], 0);
    // Another suit, or a gap, ends the build.
    check(&[], vec![(Zone::Pile(0), 0, &["Kd", "Qh", "Jh"])], 1);
    check(&[], vec![(Zone::Pile(0), 0, &["Kd", "Jd"])], 1);
    // Not on a King.
    check(&[], vec![(Zone::Pile(0), 0, &["Qd", "Jd"])], 0);
    // Runs home count with the builds, whatever cards were dealt face down.
    let run = [
        "Kc", "Qc", "Jc", "Tc", "9c", "8c", "7c", "6c", "5c", "4c", "3c", "2c", "Ac",
    ];
    check(
        &["5c", "Jc"],
        vec![(Zone::Discard, 0, &run), (Zone::Pile(3), 0, &["Ks"])],
        14,
    );
    // In the other games, the cards home.
    let view = view_of(vec![
        (Zone::Pile(0), 0, &["Kd", "Qd"]),
        (Zone::Foundation(0), 0, &["Ac", "2c"]),
    ]);
    assert_eq!(cards_in_order(&view, &view), 2);
}

#[test]
fn cards_in_order_skips_a_king_laid_bare_and_stops_at_a_card_dealt_face_down() {
    // (cards dealt face down, the board's zones) → the count
    let check = |face_down: &[&str], zones: Vec<(Zone, u8, &[&str])>, expected: u16| {
        let view = View {
            game: GameKind::ThreeBlindMice,
            ..view_of(zones)
        };
        assert_eq!(
            cards_in_order(&deal_hiding(face_down), &view),
            expected,
            "{face_down:?} {view:?}"
        );
    };
    // A King dealt face down, laid bare at the bottom of its pile: a rival
    // who counted it would learn where its own King lies.
    check(&["Kd"], vec![(Zone::Pile(7), 0, &["Kd"])], 0);
    check(&["Kd"], vec![(Zone::Pile(7), 0, &["Kd", "Qd", "Jd"])], 0);
    // A Jack dealt face down, turned up and built on a Q-K run: the run
    // counts up to it, and nothing after it.
    check(
        &["Jd"],
        vec![(Zone::Pile(0), 0, &["Kd", "Qd", "Jd", "Td"])],
        2,
    );
    // A King dealt face up moved into a pile emptied of face-down cards.
    check(&["Jd"], vec![(Zone::Pile(8), 0, &["Kh", "Qh"])], 2);
}

/// `view` with each card in `from` replaced by the card at the same place
/// in `to`.
fn relabelled(view: &View, from: &[Card], to: &[Card]) -> View {
    let mut view = view.clone();
    for zone in &mut view.zones {
        for card in &mut zone.face_up {
            if let Some(at) = from.iter().position(|hidden| hidden == card) {
                *card = to[at];
            }
        }
    }
    view
}

/// What a rival cannot tell apart, the count does not tell apart: in Three
/// Blind Mice deals played by random legal moves, swapping the identities
/// of the cards dealt face down among themselves leaves the count as it
/// is, at every step.
#[test]
fn cards_in_order_is_the_same_whichever_card_dealt_face_down_lies_where() {
    use crate::any::AnyGame;
    use crate::conformance::TestRng;
    use crate::rules::Rules;
    let mut rng = TestRng::new(38);
    let mut boards_with_a_card_dealt_face_down_in_place = 0;
    for seed in 0..200 {
        let mut game = AnyGame::deal(GameKind::ThreeBlindMice, seed);
        let deal = game.view();
        let face_down: Vec<Card> = (0..52)
            .map(Card::from_index)
            .filter(|card| !deal.zones.iter().any(|zone| zone.face_up.contains(card)))
            .collect();
        assert_eq!(face_down.len(), 9, "seed {seed}");
        let mut moves = Vec::new();
        for step in 0..200 {
            let board = game.view();
            let count = cards_in_order(&deal, &board);
            if board.zones.iter().any(|zone| {
                matches!(zone.zone, Zone::Pile(_))
                    && zone.hidden == 0
                    && zone
                        .face_up
                        .first()
                        .is_some_and(|bottom| bottom.rank() == 13 && face_down.contains(bottom))
            }) {
                boards_with_a_card_dealt_face_down_in_place += 1;
            }
            for _ in 0..4 {
                let mut shuffled = face_down.clone();
                for at in (1..shuffled.len()).rev() {
                    shuffled.swap(at, rng.below(at + 1));
                }
                assert_eq!(
                    cards_in_order(&deal, &relabelled(&board, &face_down, &shuffled)),
                    count,
                    "seed {seed}, step {step}: {board:?}"
                );
            }
            moves.clear();
            game.legal_moves(&mut moves);
            let Some(&mv) = moves.get(rng.below(moves.len())) else {
                break;
            };
            game.apply(mv).expect("a legal move applies");
        }
    }
    assert!(
        boards_with_a_card_dealt_face_down_in_place > 0,
        "the play lays bare a King dealt face down somewhere"
    );
}

#[test]
fn a_series_is_won_by_the_first_to_a_majority_and_a_rematch_starts_afresh() {
    // (best of, first places in order) → (line, races)
    let check = |best_of: u8, firsts: &[&str], line: &str, races: u8| {
        let mut series = SeriesScore::new(best_of);
        series.enter("ada");
        series.enter("bob");
        for first in firsts {
            series.record(first);
        }
        assert_eq!(series.line(), line, "{firsts:?}");
        assert_eq!(series.races, races, "{firsts:?}");
        series
    };
    check(3, &[], "ada 0 - bob 0 (best of 3)", 0);
    check(3, &["ada", "bob"], "ada 1 - bob 1 (best of 3)", 2);
    let won = check(
        3,
        &["ada", "bob", "ada", "bob"],
        "ada 2 - bob 1 (best of 3): ada wins the series",
        3,
    );
    assert_eq!(won.for_rematch().line(), "ada 0 - bob 0 (best of 3)");
    let running = check(5, &["bob"], "ada 0 - bob 1 (best of 5)", 1);
    assert_eq!(running.for_rematch(), running);
    // Three players, best of three: two wins are needed, however many races.
    let mut three = SeriesScore::new(3);
    for first in ["ada", "bob", "cy", "cy"] {
        three.record(first);
    }
    assert_eq!(
        three.line(),
        "ada 1 - bob 1 - cy 2 (best of 3): cy wins the series"
    );
}
