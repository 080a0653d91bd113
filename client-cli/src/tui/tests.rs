//! Snapshot tests of whole frames, rendered with ratatui's `TestBackend`:
//! each game's board at 80×24, the lobby, a race with its panel, watch
//! mode, the results, and the help.

use std::time::{Duration, Instant};

use patience_shared::any::AnyGame;
use patience_shared::any::AnyMove;
use patience_shared::card::Card;
use patience_shared::game::GameKind;
use patience_shared::position::move_shapes;
use patience_shared::protocol::{
    self, MoveLog, Phase, PlayerInfo, PlayerStatus, Progress, RaceResult, Reveal, RoomInfo,
    RoomOptions, ServerMessage, Standing,
};
use patience_shared::rules::Rules;
use patience_shared::rules::{Effect, View, Zone};
use patience_shared::solver::{Budget, Hint};
use ratatui::Frame;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::text::Line;

use super::board::*;
use super::draw::*;
use super::frame::*;
use super::input::*;
use super::practice::*;
use super::screens::*;
use super::terminal::*;
use super::*;
use crate::plain::PRACTICE_BUDGET;
use crate::race::RaceState;

fn render(width: u16, height: u16, draw: impl FnOnce(&mut Frame)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal.draw(draw).expect("drawing to a test backend");
    terminal.backend().to_string()
}

fn practice_frame(game: GameKind, seed: u64, ui: &Ui) -> String {
    let view = AnyGame::deal(game, seed).view();
    let screen = PracticeScreen {
        game,
        seed,
        view: &view,
        moves: 0,
        state: None,
    };
    render(80, 24, |frame| draw_practice(frame, &screen, ui))
}

#[test]
fn three_blind_mice_board() {
    insta::assert_snapshot!(practice_frame(GameKind::ThreeBlindMice, 1, &Ui::default()));
}

#[test]
fn a_wide_terminal_gets_wider_columns() {
    let frame = practice_frame_sized(GameKind::Indian, 120, 16, &Ui::default());
    insta::assert_snapshot!(frame);
}

#[test]
fn indian_board() {
    insta::assert_snapshot!(practice_frame(GameKind::Indian, 1, &Ui::default()));
}

#[test]
fn midshipman_board() {
    insta::assert_snapshot!(practice_frame(GameKind::Midshipman, 1, &Ui::default()));
}

#[test]
fn virginia_reel_board() {
    insta::assert_snapshot!(practice_frame(GameKind::VirginiaReel, 1, &Ui::default()));
}

#[test]
fn help_overlay() {
    let ui = Ui {
        help: true,
        ..Ui::default()
    };
    insta::assert_snapshot!(practice_frame(GameKind::ThreeBlindMice, 1, &ui));
}

#[test]
fn long_piles_fold_to_fit_a_short_terminal() {
    use patience_shared::rules::ZoneView;
    let card = |text: &str| text.parse().expect("a card");
    let run: Vec<_> = [
        "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s", "6s", "5s", "4s", "3s", "2s",
    ]
    .iter()
    .map(|text| card(text))
    .collect();
    let mut zones = vec![ZoneView {
        zone: Zone::Pile(0),
        hidden: 3,
        face_up: run,
    }];
    zones.extend((1..10).map(|pile| ZoneView {
        zone: Zone::Pile(pile),
        hidden: if pile > 6 { 1 } else { 0 },
        face_up: vec![card("Ah")],
    }));
    zones.extend((0..2).map(|cell| ZoneView {
        zone: Zone::Cell(cell),
        hidden: 0,
        face_up: vec![],
    }));
    let view = View {
        game: GameKind::ThreeBlindMice,
        zones,
    };
    let screen = PracticeScreen {
        game: GameKind::ThreeBlindMice,
        seed: 0,
        view: &view,
        moves: 40,
        state: Some("stuck: u takes back"),
    };
    insta::assert_snapshot!(render(60, 12, |frame| draw_practice(
        frame,
        &screen,
        &Ui::default()
    )));
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::from(code)
}

#[test]
fn keys_pick_a_card_and_drop_it_or_send_it_to_its_natural_place() {
    let position = AnyGame::deal(GameKind::Indian, 1);
    let view = position.view();
    let mut legal = Vec::new();
    position.legal_moves(&mut legal);
    let texts: Vec<String> = legal.iter().map(|&mv| position.format_move(mv)).collect();
    // The stock turns with space on the stock.
    let mut ui = Ui::default();
    assert_eq!(
        ui.key(key(KeyCode::Char('s')), Some(&view), false),
        Action::None
    );
    assert_eq!(
        ui.key(key(KeyCode::Char(' ')), Some(&view), false),
        Action::Move("s".into())
    );
    // Every pile-to-pile move of the deal can be made with pile keys and Enter.
    for text in texts
        .iter()
        .filter(|text| text.contains('>') && !text.ends_with('f'))
    {
        let (from, to) = text.split_once('>').expect("a pile move");
        let digit = |number: &str| {
            let number: u32 = number.parse().expect("a pile number");
            char::from_digit(number % 10, 10).expect("a digit")
        };
        let mut ui = Ui::default();
        ui.key(key(KeyCode::Char(digit(from))), Some(&view), false);
        assert_eq!(
            ui.key(key(KeyCode::Enter), Some(&view), false),
            Action::None
        );
        ui.key(key(KeyCode::Char(digit(to))), Some(&view), false);
        assert_eq!(
            ui.key(key(KeyCode::Enter), Some(&view), false),
            Action::Move(text.clone())
        );
    }
    // A card with nowhere to go says so.
    let mut ui = Ui::default();
    for pile in 0..10u8 {
        ui.key(
            key(KeyCode::Char(char::from(b'0' + (pile + 1) % 10))),
            Some(&view),
            false,
        );
        if ui.key(key(KeyCode::Char(' ')), Some(&view), false) == Action::None {
            assert!(
                ui.message
                    .as_ref()
                    .is_some_and(|(text, error)| *error && text.contains("nowhere"))
            );
        }
    }
    // `:` opens the command line; `q` asks first.
    let mut ui = Ui::default();
    ui.key(key(KeyCode::Char(':')), Some(&view), false);
    for c in "w>f".chars() {
        ui.key(key(KeyCode::Char(c)), Some(&view), false);
    }
    assert_eq!(
        ui.key(key(KeyCode::Enter), Some(&view), false),
        Action::Move("w>f".into())
    );
    assert_eq!(
        ui.key(key(KeyCode::Char('q')), Some(&view), false),
        Action::None
    );
    assert_eq!(
        ui.key(key(KeyCode::Char('y')), Some(&view), false),
        Action::Quit
    );
}

#[test]
fn a_click_finds_the_card_drawn_there_and_picks_it_up() {
    let view = AnyGame::deal(GameKind::Indian, 1).view();
    // Line 4 is the first face-up row; column 15 is pile 3 (seven columns
    // each: ten piles of seven fit in 80).
    let spot = board::spot_at(&view, None, 80, 22, 15, 4);
    assert_eq!(
        spot,
        Some(Spot {
            zone: Zone::Pile(2),
            depth: 1
        })
    );
    assert_eq!(
        board::spot_at(&view, None, 80, 22, 15, 5).map(|spot| spot.depth),
        Some(0)
    );
    assert_eq!(board::spot_at(&view, None, 80, 22, 79, 5), None);
    let mut ui = Ui::default();
    let top = Spot {
        zone: Zone::Pile(2),
        depth: 0,
    };
    assert_eq!(ui.click(&view, top, false), Action::None);
    assert_eq!(ui.marks(&view).picked, Some(top));
}

fn room(phase: Phase, players: &[(&str, PlayerStatus)], max_players: u8) -> RoomInfo {
    room_with(phase, players, max_players, RoomOptions::default())
}

fn room_with(
    phase: Phase,
    players: &[(&str, PlayerStatus)],
    max_players: u8,
    options: RoomOptions,
) -> RoomInfo {
    RoomInfo {
        code: "K7PQ3M".into(),
        game: GameKind::ThreeBlindMice,
        max_players,
        public: false,
        options,
        owner: Some(0),
        phase,
        players: players
            .iter()
            .enumerate()
            .map(|(seat, (name, status))| PlayerInfo {
                seat: seat as u8,
                name: (*name).into(),
                connected: *name != "carol",
                status: *status,
                bot: None,
            })
            .collect(),
        spectators: 1,
        series: None,
    }
}

/// A race seen from seat `seat` (`None`: a spectator): Ada, Bob and Carol
/// race the deal of seed 1; Bob has played one move.
fn racing(seat: Option<u8>) -> (RaceState, Instant, String) {
    racing_with(seat, false)
}

/// The race of [`racing`], in a room with open boards or without.
fn racing_with(seat: Option<u8>, open_boards: bool) -> (RaceState, Instant, String) {
    let options = RoomOptions {
        open_boards,
        ..RoomOptions::default()
    };
    let room = |phase, players: &[(&str, PlayerStatus)], max_players| {
        room_with(phase, players, max_players, options)
    };
    let start = Instant::now();
    let mut state = RaceState::default();
    let racers = [
        ("ada", PlayerStatus::Waiting),
        ("bob", PlayerStatus::Waiting),
        ("carol", PlayerStatus::Waiting),
    ];
    state.apply(
        ServerMessage::RoomJoined {
            seq: 1,
            room: room(Phase::Lobby, &racers, 3),
            seat,
            resume_token: seat.map(|_| "token".into()),
        },
        start,
    );
    let deal = AnyGame::deal(GameKind::ThreeBlindMice, 1);
    let salt = "9f86d081884c7d659a2feaa0c55ad015".to_string();
    let commitment = protocol::commitment(GameKind::ThreeBlindMice, 1, &salt);
    state.apply(
        ServerMessage::RaceStarted {
            seq: 2,
            commitment,
            board: deal.view(),
            time_limit_ms: 600_000,
        },
        start,
    );
    let racing = racers.map(|(name, _)| (name, PlayerStatus::Racing));
    state.apply(
        ServerMessage::RoomUpdate {
            seq: 3,
            room: room(Phase::Racing, &racing, 3),
        },
        start,
    );
    let mut moved = deal.clone();
    let mut legal = Vec::new();
    moved.legal_moves(&mut legal);
    let first = moved.format_move(legal[0]);
    let outcome = moved.apply(legal[0]).expect("a legal move");
    state.apply(
        ServerMessage::Progress {
            seq: 4,
            seat: 1,
            text: open_boards.then(|| first.clone()),
            board: open_boards.then(|| moved.view()),
            progress: Progress {
                moves: 1,
                cards_home: if outcome.effects.is_empty() { 0 } else { 13 },
                elapsed_ms: 3_000,
                ..Progress::default()
            },
        },
        start + Duration::from_secs(3),
    );
    (state, start + Duration::from_secs(42), first)
}

#[test]
fn lobby() {
    let start = Instant::now();
    let mut state = RaceState::default();
    state.apply(
        ServerMessage::RoomJoined {
            seq: 1,
            room: room(
                Phase::Lobby,
                &[
                    ("ada", PlayerStatus::Waiting),
                    ("carol", PlayerStatus::Waiting),
                ],
                3,
            ),
            seat: Some(0),
            resume_token: Some("token".into()),
        },
        start,
    );
    insta::assert_snapshot!(render(80, 24, |frame| draw_online(
        frame,
        &state,
        &Ui::default(),
        start
    )));
}

/// A watcher's lobby speaks of the racers' progress, not of "your"
/// progress: a watcher has none.
#[test]
fn a_watchers_lobby_says_it_will_show_each_racers_progress() {
    let start = Instant::now();
    let mut state = RaceState::default();
    state.apply(
        ServerMessage::RoomJoined {
            seq: 1,
            room: room(Phase::Lobby, &[("ada", PlayerStatus::Waiting)], 2),
            seat: None,
            resume_token: None,
        },
        start,
    );
    let frame = render(80, 24, |frame| {
        draw_online(frame, &state, &Ui::default(), start)
    });
    assert!(!frame.contains("your progress"), "{frame}");
    assert!(frame.contains("each racer's progress"), "{frame}");
}

#[test]
fn race_with_its_panel() {
    let (state, now, _) = racing(Some(0));
    insta::assert_snapshot!(render(80, 24, |frame| draw_online(
        frame,
        &state,
        &Ui::default(),
        now
    )));
}

#[test]
fn watching_shows_each_racers_progress_but_no_board() {
    let (state, now, _) = racing(None);
    let screen = render(80, 24, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    assert!(!screen.contains('♥'), "no card of any board is drawn");
    insta::assert_snapshot!("watch_counts", screen);
}

#[test]
fn watching_open_boards_side_by_side_or_one_at_a_time() {
    let (state, now, _) = racing_with(None, true);
    insta::assert_snapshot!(
        "watch_wide",
        render(190, 24, |frame| draw_online(
            frame,
            &state,
            &Ui::default(),
            now
        ))
    );
    let ui = Ui {
        watched: 1,
        ..Ui::default()
    };
    insta::assert_snapshot!(
        "watch_narrow",
        render(80, 24, |frame| draw_online(frame, &state, &ui, now))
    );
}

/// A racer in a room with open boards sees a rival's board under its own
/// (the server sends it), with the rival's name and progress; without
/// open boards, none. Tab turns to the next rival's, and a click still
/// lands on the racer's own board, drawn shorter.
#[test]
fn a_racer_sees_a_rivals_board_under_its_own_where_boards_are_open() {
    let (state, now, _) = racing_with(Some(0), true);
    let screen = render(80, 30, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    assert!(
        screen.contains(" bob · "),
        "bob's board is named:\n{screen}"
    );
    assert_eq!(screen.matches("cells").count(), 2, "two boards:\n{screen}");
    insta::assert_snapshot!("race_open_boards", screen);

    assert!(screen.contains("tab: next rival"), "{screen}");

    // Tab turns to Carol's board (the deal: she has not moved).
    let tabbed = Ui {
        watched: 1,
        ..Ui::default()
    };
    assert_eq!(shown_rival(&state, &tabbed).map(|(seat, _)| seat), Some(2));
    let screen = render(80, 30, |frame| draw_online(frame, &state, &tabbed, now));
    assert!(screen.contains(" carol · 0/52 in suit order"), "{screen}");

    // Too short for both: the racer's own board only.
    let short = render(80, 20, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    assert_eq!(short.matches("cells").count(), 1, "{short}");

    // The own board is drawn shorter, and clicks are read on it.
    let area = Rect::new(0, 0, 80, 30);
    let view = state.my_board().expect("ada's board");
    let with_rival = race_board_area(area, &Ui::default(), &state, view);
    let (alone, _, _) = racing_with(Some(0), false);
    let without = race_board_area(area, &Ui::default(), &alone, view);
    assert!(
        with_rival.height < without.height,
        "{with_rival:?} {without:?}"
    );

    let (state, now, _) = racing_with(Some(0), false);
    let screen = render(80, 30, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    assert!(!screen.contains(" bob · "), "{screen}");
    assert_eq!(screen.matches("cells").count(), 1, "{screen}");
}

#[test]
fn results() {
    let (mut state, now, first) = racing(Some(0));
    let standing = |rank: u8, seat: u8, name: &str, status, cards_home, moves| Standing {
        rank,
        seat,
        name: name.into(),
        status,
        progress: Progress {
            moves,
            cards_home,
            elapsed_ms: 61_000,
            ..Progress::default()
        },
        bot: None,
    };
    state.apply(
        ServerMessage::RaceEnded {
            seq: 9,
            result: RaceResult {
                race_id: Some(7),
                standings: vec![
                    standing(1, 1, "bob", PlayerStatus::Resigned, 0, 1),
                    standing(2, 0, "ada", PlayerStatus::Resigned, 0, 0),
                    standing(3, 2, "carol", PlayerStatus::Left, 0, 0),
                ],
                reveal: Reveal {
                    game: GameKind::ThreeBlindMice,
                    seed: 1,
                    salt: "9f86d081884c7d659a2feaa0c55ad015".into(),
                },
                logs: vec![
                    MoveLog {
                        seat: 0,
                        moves: vec![],
                    },
                    MoveLog {
                        seat: 1,
                        moves: vec![first],
                    },
                    MoveLog {
                        seat: 2,
                        moves: vec!["1>1".into()],
                    },
                ],
                open_boards: false,
            },
        },
        now,
    );
    insta::assert_snapshot!(render(80, 24, |frame| draw_online(
        frame,
        &state,
        &Ui::default(),
        now
    )));
}

#[test]
fn frames_of_any_size_draw_without_panicking() {
    let (spectating, now, _) = racing(None);
    let (playing, _, _) = racing(Some(1));
    let help = Ui {
        help: true,
        ..Ui::default()
    };
    for (width, height) in [(1, 1), (10, 4), (40, 10), (80, 24), (200, 60)] {
        for game in GameKind::ALL {
            practice_frame_sized(game, width, height, &help);
        }
        for state in [&spectating, &playing] {
            render(width, height, |frame| draw_online(frame, state, &help, now));
        }
    }
}

fn practice_frame_sized(game: GameKind, width: u16, height: u16, ui: &Ui) -> String {
    let view = AnyGame::deal(game, 3).view();
    let screen = PracticeScreen {
        game,
        seed: 3,
        view: &view,
        moves: 0,
        state: None,
    };
    render(width, height, |frame| draw_practice(frame, &screen, ui))
}

/// The daily attempt of Three Blind Mice seed 1, resumed 45.25 s in on the
/// server's clock, seen 10 s later.
fn daily_state() -> (crate::daily::DailyState, Instant) {
    let start = Instant::now();
    let mut state = crate::daily::DailyState::default();
    state.apply(
        ServerMessage::DailyStarted {
            attempt: crate::daily::tests::attempt(true, 45_250),
        },
        start,
    );
    (state, start + Duration::from_secs(10))
}

#[test]
fn daily_attempt_with_the_servers_clock() {
    let (state, now) = daily_state();
    insta::assert_snapshot!(render(80, 24, |frame| daily::draw_daily(
        frame,
        &state,
        &Ui::default(),
        now
    )));
}

#[test]
fn daily_before_the_start_says_the_terms_and_shows_no_board() {
    insta::assert_snapshot!(render(80, 24, |frame| daily::draw_start(
        frame,
        GameKind::ThreeBlindMice
    )));
}

/// The screen before the daily: keys that do nothing, then Enter starts;
/// `q` leaves; the end of the keys leaves. Nothing is sent meanwhile.
#[tokio::test]
async fn the_daily_starts_on_enter_and_leaves_on_q_without_asking_for_the_deal() {
    let press = |code: KeyCode| Event::Key(key(code));
    for (presses, starts) in [
        (vec![press(KeyCode::Char('x')), press(KeyCode::Enter)], true),
        (vec![press(KeyCode::Char('s'))], true),
        (vec![press(KeyCode::Char('q'))], false),
        (vec![press(KeyCode::Esc)], false),
        (Vec::new(), false),
    ] {
        let (url, received) = crate::fake_server::start(|_| Vec::new()).await;
        let mut connection = crate::net::Connection::open(&url, "ada")
            .await
            .expect("the fake server answers");
        let (keys, mut events) = tokio::sync::mpsc::channel(8);
        for event in presses.clone() {
            keys.send(event).await.expect("the loop reads keys");
        }
        drop(keys);
        let mut screen = Scripted::new(80, 24, false);
        let started = daily::wait_for_start_on(
            &mut screen,
            &mut events,
            &mut connection,
            GameKind::ThreeBlindMice,
        )
        .await
        .expect("the screen draws")
        .expect("the connection holds");
        assert_eq!(started, starts, "{presses:?}");
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        assert!(
            sent.iter().all(|message| matches!(
                message,
                patience_shared::protocol::ClientMessage::Hello { .. }
            )),
            "{sent:?}"
        );
    }
}

#[test]
fn daily_finished_with_its_rank_and_race_id() {
    let (mut state, now) = daily_state();
    state.apply(
        ServerMessage::DailyFinished {
            result: crate::daily::tests::result(PlayerStatus::Won),
        },
        now,
    );
    insta::assert_snapshot!(render(80, 24, |frame| daily::draw_daily(
        frame,
        &state,
        &Ui::default(),
        now
    )));
}

#[test]
fn daily_finished_unranked_says_why_and_where_it_would_rank() {
    let (mut state, now) = daily_state();
    let mut result = crate::daily::tests::result(PlayerStatus::Won);
    result.unranked = Some(patience_shared::protocol::Unranked::NewAccount);
    state.apply(ServerMessage::DailyFinished { result }, now);
    insta::assert_snapshot!(render(80, 24, |frame| daily::draw_daily(
        frame,
        &state,
        &Ui::default(),
        now
    )));
}

#[test]
fn daily_help() {
    let (state, now) = daily_state();
    let ui = Ui {
        help: true,
        ..Ui::default()
    };
    insta::assert_snapshot!(render(80, 24, |frame| daily::draw_daily(
        frame, &state, &ui, now
    )));
}

#[test]
fn daily_leave_asks_first_and_keeps_the_attempt_open() {
    let (state, now) = daily_state();
    let mut ui = Ui::default();
    let board = state.board().cloned();
    assert_eq!(
        ui.key(key(KeyCode::Char('q')), board.as_ref(), false),
        Action::None
    );
    let frame = render(80, 24, |frame| daily::draw_daily(frame, &state, &ui, now));
    assert!(
        frame.contains("The attempt stays open and its clock runs"),
        "{frame}"
    );
    // `:resign` is typed, never a single key.
    let mut ui = Ui::default();
    ui.key(key(KeyCode::Char(':')), board.as_ref(), false);
    for c in "resign".chars() {
        ui.key(key(KeyCode::Char(c)), board.as_ref(), false);
    }
    assert_eq!(
        ui.key(key(KeyCode::Enter), board.as_ref(), false),
        Action::Resign
    );
}

fn replay_at(step: usize, playing: bool) -> (crate::replay::Replay, crate::replay::Cursor) {
    let (record, _) = crate::replay::tests::record();
    let replay = crate::replay::Replay::new(record);
    let mut cursor = crate::replay::Cursor::new(0, 2.0);
    cursor.step = step;
    cursor.playing = playing;
    (replay, cursor)
}

#[test]
fn replay_at_the_deal() {
    let (replay, cursor) = replay_at(0, false);
    insta::assert_snapshot!(render(80, 24, |frame| replay::draw_replay(
        frame, &replay, &cursor
    )));
}

#[test]
fn replay_playing_at_the_end_with_the_standing() {
    let (replay, cursor) = replay_at(4, true);
    insta::assert_snapshot!(render(80, 24, |frame| replay::draw_replay(
        frame, &replay, &cursor
    )));
}

#[test]
fn replay_keys() {
    use crate::replay::ReplayKey;
    let check = |code: KeyCode, expected: Option<Option<ReplayKey>>| {
        assert_eq!(replay::replay_key(key(code)), expected, "{code:?}");
    };
    check(KeyCode::Right, Some(Some(ReplayKey::Forward)));
    check(KeyCode::Left, Some(Some(ReplayKey::Back)));
    check(KeyCode::Char(' '), Some(Some(ReplayKey::PlayPause)));
    check(KeyCode::Home, Some(Some(ReplayKey::First)));
    check(KeyCode::End, Some(Some(ReplayKey::Last)));
    check(KeyCode::Tab, Some(Some(ReplayKey::NextSeat)));
    check(KeyCode::Char('2'), Some(Some(ReplayKey::Seat(2))));
    check(KeyCode::Char('+'), Some(Some(ReplayKey::Faster)));
    check(KeyCode::Char('-'), Some(Some(ReplayKey::Slower)));
    check(KeyCode::Char('q'), Some(None));
    check(KeyCode::Char('x'), None);
}

#[test]
fn daily_and_replay_frames_of_any_size_draw_without_panicking() {
    let (state, now) = daily_state();
    let (replay, cursor) = replay_at(2, false);
    for (width, height) in [(1, 1), (10, 4), (40, 10), (80, 24), (200, 60)] {
        render(width, height, |frame| {
            daily::draw_daily(frame, &state, &Ui::default(), now)
        });
        render(width, height, |frame| {
            replay::draw_replay(frame, &replay, &cursor)
        });
    }
}

/// The keys that put the cursor on the card `depth` from the top of `zone`
/// in Three Blind Mice: a pile's digit or `c` for the cells, then Up.
fn keys_to(ui: &mut Ui, view: &View, zone: Zone, depth: usize) {
    let presses = match zone {
        Zone::Pile(pile) => vec![KeyCode::Char(char::from(b'0' + (pile + 1) % 10))],
        Zone::Cell(cell) => vec![KeyCode::Char('c'); usize::from(cell) + 1],
        other => panic!("the cursor does not go to {other}"),
    };
    // Start from a pile so that `c` always starts from the first cell.
    ui.key(key(KeyCode::Char('1')), Some(view), false);
    for code in presses
        .into_iter()
        .chain(std::iter::repeat_n(KeyCode::Up, depth))
    {
        assert_eq!(ui.key(key(code), Some(view), false), Action::None);
    }
    assert_eq!(ui.marks(view).cursor, Some(Spot { zone, depth }));
}

/// The solver's winning line of Three Blind Mice deal `seed`.
fn tbm_line(seed: u64) -> Vec<String> {
    use patience_shared::solver::any::solve_deal;

    let line = solve_deal(GameKind::ThreeBlindMice, seed, Budget::positions(200_000))
        .expect("the solver's line replays")
        .solution;
    assert!(!line.is_empty(), "seed {seed} is not solved");
    line
}

/// Where a Three Blind Mice move picks its card up (the zone and the
/// card's depth from the top) and where it drops it.
fn tbm_shape(mv: AnyMove) -> (Zone, usize, Zone) {
    use patience_shared::games::three_blind_mice::TbmMove;

    match mv {
        AnyMove::ThreeBlindMice(TbmMove::PileToPile { from, count, to }) => {
            (Zone::Pile(from), usize::from(count) - 1, Zone::Pile(to))
        }
        AnyMove::ThreeBlindMice(TbmMove::CellToPile { cell, to }) => {
            (Zone::Cell(cell), 0, Zone::Pile(to))
        }
        other => panic!("not a Three Blind Mice move: {other:?}"),
    }
}

/// Whole games of Three Blind Mice won by keys only, every move
/// by pick-and-drop and by two clicks, and the moves that send a run home
/// also by space and by a right click.
#[test]
fn a_whole_game_of_three_blind_mice_is_won_by_keys_and_clicks() {
    use patience_shared::rules::Effect;

    for seed in [128_917_432, 11, 18, 20, 23] {
        let line = tbm_line(seed);
        let mut position = AnyGame::deal(GameKind::ThreeBlindMice, seed);
        let mut ui = Ui::default();
        let mut runs_home = 0;
        for text in &line {
            let view = position.view();
            let mv = position
                .parse_move(text)
                .expect("the solver's notation reads");
            let (from, depth, to) = tbm_shape(mv);
            let played = Action::Move(text.clone());
            // Pick and drop with keys.
            keys_to(&mut ui, &view, from, depth);
            assert_eq!(
                ui.key(key(KeyCode::Enter), Some(&view), false),
                Action::None
            );
            keys_to(&mut ui, &view, to, 0);
            assert_eq!(
                ui.key(key(KeyCode::Enter), Some(&view), false),
                played,
                "seed {seed}: {:?}",
                ui.message
            );
            // Two clicks.
            let mut clicks = Ui::default();
            assert_eq!(
                clicks.click(&view, Spot { zone: from, depth }, false),
                Action::None
            );
            assert_eq!(
                clicks.click(&view, Spot { zone: to, depth: 0 }, false),
                played,
                "seed {seed}"
            );
            let mut after = position.clone();
            let outcome = after.apply(mv).expect("the solver's move is legal");
            if outcome
                .effects
                .iter()
                .any(|effect| matches!(effect, Effect::RunRemoved { .. }))
            {
                runs_home += 1;
                let mut space = Ui::default();
                keys_to(&mut space, &view, from, depth);
                assert_eq!(
                    space.key(key(KeyCode::Char(' ')), Some(&view), false),
                    played,
                    "seed {seed}: {:?}",
                    space.message
                );
                let mut right = Ui::default();
                assert_eq!(right.click(&view, Spot { zone: from, depth }, true), played);
            }
            ui.show_effects(&outcome.effects);
            position = after;
        }
        assert!(position.is_won(), "seed {seed}");
        assert!(runs_home > 0, "seed {seed}");
    }
}

#[test]
fn q_and_ctrl_c_ask_only_when_leaving_would_resign() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for (leaving_is_free, press) in [
        (false, key(KeyCode::Char('q'))),
        (false, ctrl_c),
        (true, key(KeyCode::Char('q'))),
        (true, ctrl_c),
    ] {
        let mut ui = Ui {
            leaving_is_free,
            ..Ui::default()
        };
        let first = ui.key(press, None, false);
        if leaving_is_free {
            assert_eq!(first, Action::Quit, "nothing to lose: {press:?} leaves");
        } else {
            assert_eq!(first, Action::None, "{press:?} asks first in a race");
            assert!(ui.confirm_quit);
            assert_eq!(ui.key(key(KeyCode::Char('y')), None, false), Action::Quit);
        }
    }
    // Answering anything but yes stays.
    let mut ui = Ui::default();
    ui.key(ctrl_c, None, false);
    assert_eq!(ui.key(key(KeyCode::Char('n')), None, false), Action::None);
    assert!(!ui.confirm_quit);
}

/// A [`Screen`] for the event loops in tests: a ratatui terminal on any
/// backend, counting suspends.
struct Scripted<B: ratatui::backend::Backend> {
    painter: Painter<B>,
    suspended: usize,
}

/// A terminal size the script asks for, taken by the test backend before
/// the next frame, as a real terminal changes size under the program.
type Resizes = std::rc::Rc<std::cell::Cell<Option<(u16, u16)>>>;

/// A test-backend screen that follows [`Resizes`].
struct Resizable {
    inner: Scripted<TestBackend>,
    resizes: Resizes,
}

impl Screen for Resizable {
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()> {
        if let Some((width, height)) = self.resizes.take() {
            self.inner
                .painter
                .terminal
                .backend_mut()
                .resize(width, height);
        }
        self.inner.draw_frame(render)
    }

    fn area(&self) -> Rect {
        self.inner.area()
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        self.inner.suspend()
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.inner.clear()
    }
}

impl Scripted<TestBackend> {
    fn new(width: u16, height: u16, colorless: bool) -> Self {
        Scripted {
            painter: Painter {
                terminal: Terminal::new(TestBackend::new(width, height)).expect("a test terminal"),
                colorless,
            },
            suspended: 0,
        }
    }

    fn frame(&self) -> String {
        self.painter.terminal.backend().to_string()
    }

    fn buffer(&self) -> &ratatui::buffer::Buffer {
        self.painter.terminal.backend().buffer()
    }
}

impl<B: ratatui::backend::Backend> Screen for Scripted<B> {
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()> {
        self.painter.draw(render)
    }

    fn area(&self) -> Rect {
        self.painter.area()
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        self.suspended += 1;
        Ok(())
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.painter.clear()
    }
}

fn pressed(code: KeyCode) -> std::io::Result<Event> {
    Ok(Event::Key(key(code)))
}

fn mouse_down(button: MouseButton, column: u16, row: u16) -> std::io::Result<Event> {
    Ok(Event::Mouse(MouseEvent {
        kind: MouseEventKind::Down(button),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }))
}

/// The keys that put the practice loop's cursor on `zone`, `depth` cards
/// from its top (Three Blind Mice).
fn keys_for(zone: Zone, depth: usize) -> Vec<KeyCode> {
    // From a pile first, so that `c` always starts from the first cell.
    let mut keys = vec![KeyCode::Char('1')];
    match zone {
        Zone::Pile(pile) => keys.push(KeyCode::Char(char::from(b'0' + (pile + 1) % 10))),
        Zone::Cell(cell) => keys.extend(vec![KeyCode::Char('c'); usize::from(cell) + 1]),
        other => panic!("the cursor does not go to {other}"),
    }
    keys.extend(std::iter::repeat_n(KeyCode::Up, depth));
    keys
}

/// Where on a `width`-wide practice screen the spot is drawn, for a click
/// (the message above the key bar takes one line at this width).
fn screen_position(view: &View, spot: Spot, width: u16, height: u16) -> (u16, u16) {
    use ratatui::style::Modifier;
    let body = Rect::new(0, 1, width, height - 3);
    let marks = Marks {
        cursor: Some(spot),
        ..Marks::default()
    };
    for (row, line) in board_lines(view, marks, body.width, body.height)
        .iter()
        .enumerate()
    {
        let mut left = 0;
        for span in &line.spans {
            if span.style.add_modifier.contains(Modifier::REVERSED) {
                return (left as u16 + body.x, row as u16 + body.y);
            }
            left += span.width();
        }
    }
    panic!("{spot:?} is not drawn");
}

/// How the moves that send a run home are made in a scripted game.
#[derive(Clone, Copy, Debug)]
enum Finish {
    Space,
    PickAndDrop,
    Clicks,
    RightClick,
}

/// A whole Three Blind Mice game for the practice loop: the solver's line,
/// every move by pick-and-drop keys, the moves that send a run home in
/// turn by each way of `finishes`.
fn scripted_game(
    seed: u64,
    finishes: &[Finish],
    width: u16,
    height: u16,
) -> Vec<std::io::Result<Event>> {
    let line = tbm_line(seed);
    let mut position = AnyGame::deal(GameKind::ThreeBlindMice, seed);
    let mut events = Vec::new();
    let mut runs = 0;
    for text in &line {
        let view = position.view();
        let mv = position
            .parse_move(text)
            .expect("the solver's notation reads");
        let (from, depth, to) = tbm_shape(mv);
        let outcome = position.apply(mv).expect("the solver's move is legal");
        let sends_home = outcome
            .effects
            .iter()
            .any(|effect| matches!(effect, Effect::RunRemoved { .. }));
        let finish = sends_home.then(|| {
            runs += 1;
            finishes[(runs - 1) % finishes.len()]
        });
        let source = Spot { zone: from, depth };
        let target = Spot { zone: to, depth: 0 };
        match finish {
            None | Some(Finish::PickAndDrop) => {
                events.extend(keys_for(from, depth).into_iter().map(pressed));
                events.push(pressed(KeyCode::Enter));
                events.extend(keys_for(to, 0).into_iter().map(pressed));
                events.push(pressed(KeyCode::Enter));
            }
            Some(Finish::Space) => {
                events.extend(keys_for(from, depth).into_iter().map(pressed));
                events.push(pressed(KeyCode::Char(' ')));
            }
            Some(Finish::Clicks) => {
                for spot in [source, target] {
                    let (column, row) = screen_position(&view, spot, width, height);
                    events.push(mouse_down(MouseButton::Left, column, row));
                }
            }
            Some(Finish::RightClick) => {
                let (column, row) = screen_position(&view, source, width, height);
                events.push(mouse_down(MouseButton::Right, column, row));
            }
        }
    }
    assert!(position.is_won());
    assert!(
        runs >= finishes.len(),
        "seed {seed}: {runs} moves send a run home"
    );
    events
}

/// Whole practice games of Three Blind Mice through the real
/// event loop, won by keys only (the runs sent home by space and by
/// pick-and-drop), and won again with the runs sent home by clicks and
/// right clicks.
#[test]
fn the_practice_loop_wins_three_blind_mice_by_keys_and_by_mouse() {
    const WIDTH: u16 = 120;
    const HEIGHT: u16 = 40;
    let seed = 128_917_432;
    for finishes in [
        &[Finish::Space, Finish::PickAndDrop][..],
        &[Finish::Clicks, Finish::RightClick][..],
    ] {
        let events = scripted_game(seed, finishes, WIDTH, HEIGHT);
        let mut screen = Scripted::new(WIDTH, HEIGHT, false);
        let end = practice_loop(&mut screen, events, GameKind::ThreeBlindMice, seed, None)
            .expect("the loop runs");
        let frame = screen.frame();
        assert!(
            end.won,
            "{finishes:?}: not won after {} moves\n{frame}",
            end.moves
        );
        assert!(frame.contains("won in "), "{frame}");
        assert!(frame.contains("52/52 in suit order"), "{frame}");
    }
}

/// A won practice game says its time, leaves on q without asking, and n
/// deals the next seed, through the real event loop.
#[test]
fn a_won_practice_game_shows_its_time_leaves_at_once_and_deals_anew() {
    const WIDTH: u16 = 120;
    const HEIGHT: u16 = 40;
    let seed = 128_917_432;
    let mut events = scripted_game(seed, &[Finish::Space], WIDTH, HEIGHT);
    events.push(pressed(KeyCode::Char('q')));
    let mut screen = Scripted::new(WIDTH, HEIGHT, false);
    let end = practice_loop(&mut screen, events, GameKind::ThreeBlindMice, seed, None)
        .expect("the loop runs");
    let frame = screen.frame();
    assert!(end.won, "{frame}");
    assert!(!frame.contains("Leave practice?"), "{frame}");
    assert!(frame.contains("won in 0:"), "{frame}");
    assert!(
        frame.contains(&format!("won! {} moves in 0:", end.moves)),
        "{frame}"
    );
    assert!(frame.contains("n deals a new game"), "{frame}");

    let mut events = scripted_game(seed, &[Finish::Space], WIDTH, HEIGHT);
    events.push(pressed(KeyCode::Char('n')));
    let mut screen = Scripted::new(WIDTH, HEIGHT, false);
    let end = practice_loop(&mut screen, events, GameKind::ThreeBlindMice, seed, None)
        .expect("the loop runs");
    let frame = screen.frame();
    assert!(!end.won, "{frame}");
    assert_eq!(end.moves, 0, "{frame}");
    assert!(frame.contains(&format!("seed {}", seed + 1)), "{frame}");
}

/// Under NO_COLOR the cursor stays reversed after a
/// key, in the bytes the practice loop writes to a crossterm terminal, and
/// no empty color change (`ESC[;m`) resets it.
#[test]
fn the_practice_loop_keeps_the_cursor_reversed_without_colors() {
    use ratatui::backend::CrosstermBackend;
    use ratatui::{TerminalOptions, Viewport};

    /// Bytes written by the terminal, kept for the test to read.
    #[derive(Clone, Default)]
    struct Written(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
    impl std::io::Write for Written {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    // What TerminalGuard::new does whatever NO_COLOR says.
    ratatui::crossterm::style::Colored::set_ansi_color_disabled(false);
    let written = Written::default();
    let terminal = Terminal::with_options(
        CrosstermBackend::new(written.clone()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 80, 24)),
        },
    )
    .expect("a terminal writing to a vector");
    let mut screen = Scripted {
        painter: Painter {
            terminal,
            colorless: true,
        },
        suspended: 0,
    };
    let events = [KeyCode::Right, KeyCode::Right, KeyCode::Up].map(pressed);
    practice_loop(&mut screen, events, GameKind::ThreeBlindMice, 7, None).expect("the loop runs");
    let bytes = String::from_utf8_lossy(&written.0.borrow()).into_owned();
    assert!(
        bytes.contains("\u{1b}[7m"),
        "the cursor is reversed: {bytes:?}"
    );
    assert!(!bytes.contains("\u{1b}[;m"), "{bytes:?}");
    assert!(!bytes.contains("38;5;"), "no colors: {bytes:?}");
    // The same loop on a test backend: every cell without color, the
    // cursor's cell reversed.
    let mut screen = Scripted::new(80, 24, true);
    let events = [KeyCode::Right].map(pressed);
    practice_loop(&mut screen, events, GameKind::ThreeBlindMice, 7, None).expect("the loop runs");
    let buffer = screen.buffer();
    assert!(
        buffer
            .content
            .iter()
            .all(|cell| cell.fg == Color::Reset && cell.bg == Color::Reset)
    );
    assert!(
        buffer
            .content
            .iter()
            .any(|cell| cell.modifier.contains(Modifier::REVERSED))
    );
}

/// The online loop wipes the screen first (a client restarted after one
/// that died must not draw over its leftovers) while the thread reading
/// keys already waits in crossterm, which then cannot read the terminal's
/// answer to "where is the cursor?": the wipe must not ask it. A backend
/// that cannot answer, as crossterm's then, must still be wiped, and the
/// next frame drawn whole.
#[test]
fn wiping_the_screen_asks_the_terminal_nothing() {
    use ratatui::backend::{Backend, ClearType, WindowSize};
    use ratatui::buffer::Cell;
    use ratatui::layout::{Position, Size};

    /// A test backend whose cursor position cannot be read.
    struct NoCursorAnswer(TestBackend);
    impl Backend for NoCursorAnswer {
        type Error = std::io::Error;
        fn draw<'a, I>(&mut self, content: I) -> std::io::Result<()>
        where
            I: Iterator<Item = (u16, u16, &'a Cell)>,
        {
            let Ok(()) = self.0.draw(content);
            Ok(())
        }
        fn hide_cursor(&mut self) -> std::io::Result<()> {
            Ok(())
        }
        fn show_cursor(&mut self) -> std::io::Result<()> {
            Ok(())
        }
        fn get_cursor_position(&mut self) -> std::io::Result<Position> {
            Err(std::io::Error::other(
                "The cursor position could not be read within a normal duration",
            ))
        }
        fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> std::io::Result<()> {
            let Ok(()) = self.0.set_cursor_position(position);
            Ok(())
        }
        fn clear(&mut self) -> std::io::Result<()> {
            let Ok(()) = self.0.clear();
            Ok(())
        }
        fn clear_region(&mut self, clear_type: ClearType) -> std::io::Result<()> {
            let Ok(()) = self.0.clear_region(clear_type);
            Ok(())
        }
        fn size(&self) -> std::io::Result<Size> {
            let Ok(size) = self.0.size();
            Ok(size)
        }
        fn window_size(&mut self) -> std::io::Result<WindowSize> {
            let Ok(size) = self.0.window_size();
            Ok(size)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let mut painter = Painter {
        terminal: Terminal::new(NoCursorAnswer(TestBackend::new(12, 2))).expect("a test terminal"),
        colorless: false,
    };
    let frame = |frame: &mut Frame| frame.render_widget("left over", frame.area());
    painter.draw(frame).expect("drawing");
    painter.clear().expect("the screen is wiped without asking");
    let shown = painter.terminal.backend().0.to_string();
    assert!(!shown.contains("left over"), "{shown}");
    // The same frame again: drawn whole, not diffed against the old one.
    painter.draw(frame).expect("drawing");
    let shown = painter.terminal.backend().0.to_string();
    assert!(shown.contains("left over"), "{shown}");
}

/// The last line of a rendered frame.
fn last_line(frame: &str) -> &str {
    frame.lines().last().unwrap_or_default()
}

#[test]
fn the_key_bar_follows_the_screen_and_stays_under_any_message() {
    let check = |context: Context, present: &[&str], absent: &[&str]| {
        let bar: String = key_bar(context, 200)
            .spans
            .iter()
            .map(|span| span.content.as_ref())
            .collect();
        for text in present {
            assert!(
                bar.contains(text),
                "{context:?}: {text:?} missing from {bar:?}"
            );
        }
        for text in absent {
            assert!(!bar.contains(text), "{context:?}: {text:?} in {bar:?}");
        }
    };
    check(
        Context::Practice,
        &[
            "space send",
            "enter pick/drop",
            "u undo",
            "h hint",
            "? help",
            "q leave",
        ],
        &["tab", "resign"],
    );
    check(
        Context::Race { undo: true },
        &["u undo", "q resign"],
        &["h hint"],
    );
    check(
        Context::Race { undo: false },
        &["space send"],
        &["u undo", "h hint"],
    );
    check(
        Context::Lobby { owner: true },
        &["s start now", "q leave"],
        &["space"],
    );
    check(Context::Lobby { owner: false }, &["q leave"], &["s start"]);
    check(
        Context::Watch { boards: true },
        &["tab next board"],
        &["space"],
    );
    check(
        Context::Watch { boards: false },
        &["q leave"],
        &["tab", "space"],
    );
    check(
        Context::Results,
        &["q leave", "? help"],
        &["space", "resign"],
    );
    check(Context::RaceOut, &["q leave"], &["space", "u undo"]);
    check(
        Context::Daily,
        &[":resign", "q leave (stays open)"],
        &["u undo", "h hint"],
    );
    // Narrow: what does not fit is left out, `?` and `q` stay.
    let narrow: String = key_bar(Context::Practice, 40)
        .spans
        .iter()
        .map(|span| span.content.as_ref())
        .collect();
    assert!(narrow.chars().count() <= 40, "{narrow}");
    assert!(
        narrow.contains("? help") && narrow.contains("q leave"),
        "{narrow}"
    );

    // A message (even a long error) goes above the key bar, wrapped whole.
    let error = "7♦ cannot go to pile 1: the card must go onto the card of its suit one rank \
                 higher, or be a King going into an empty pile, and this sentence is long";
    let ui = Ui {
        message: Some((error.to_string(), true)),
        ..Ui::default()
    };
    let frame = practice_frame(GameKind::ThreeBlindMice, 1, &ui);
    assert!(last_line(&frame).contains("? help"), "{frame}");
    let flat: String = frame
        .lines()
        .map(|line| line.trim_matches('"').trim_end())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("and this sentence is long"), "{frame}");
    let idle = practice_frame(GameKind::ThreeBlindMice, 1, &Ui::default());
    assert!(last_line(&idle).contains("? help"), "{idle}");
}

#[test]
fn long_messages_wrap_at_spaces_and_stop_at_three_lines() {
    assert_eq!(wrap_text("a bb ccc", 4, 3), ["a bb", "ccc"]);
    assert_eq!(wrap_text("abcdefgh", 3, 5), ["abc", "def", "gh"]);
    assert_eq!(wrap_text("", 10, 3), [""]);
    assert_eq!(wrap_text("aa bb cc dd", 2, 2), ["aa", "b…"]);
}

#[test]
fn help_is_per_game_with_its_rules_keys_and_mouse_and_fits_80_by_24() {
    for game in GameKind::ALL {
        for context in [
            Context::Practice,
            Context::Race { undo: true },
            Context::Daily,
            Context::Watch { boards: true },
        ] {
            let lines = help_lines(game, context);
            assert!(
                lines.len() + 2 <= 24,
                "{game:?} {context:?}: {} lines",
                lines.len()
            );
            let text: String = lines
                .iter()
                .flat_map(|line| line.spans.iter().map(|span| span.content.to_string()))
                .collect::<Vec<_>>()
                .join("\n");
            assert!(text.contains(game.title()), "{text}");
            assert!(text.contains("Win:"), "{game:?}: the rules say what wins");
            let plays = !matches!(context, Context::Watch { .. });
            assert_eq!(
                text.contains("right: send"),
                plays,
                "{game:?} {context:?}: mouse"
            );
            for line in &lines {
                assert!(
                    line.width() <= 76,
                    "{game:?}: {line:?} is wider than the box"
                );
            }
        }
    }
    let mice: String = help_lines(GameKind::ThreeBlindMice, Context::Practice)
        .iter()
        .flat_map(|line| line.spans.iter().map(|span| span.content.to_string()))
        .collect();
    assert!(mice.contains("No stock and no waste"), "{mice}");
    assert!(
        !mice.contains("w waste"),
        "Three Blind Mice has no waste key: {mice}"
    );
    assert!(!mice.contains("reserve"), "its cells are cells: {mice}");
    assert!(mice.contains("h") && mice.contains("hint"), "{mice}");
}

#[test]
fn a_hint_lights_up_the_card_and_where_it_goes() {
    let mut screen = Scripted::new(80, 24, false);
    let events = [KeyCode::Char('h')].map(pressed);
    practice_loop(
        &mut screen,
        events,
        GameKind::ThreeBlindMice,
        128_917_432,
        None,
    )
    .expect("the loop runs");
    let frame = screen.frame();
    assert!(frame.contains("hint: "), "{frame}");
    let lit: Vec<(u16, u16)> = screen
        .buffer()
        .content
        .iter()
        .enumerate()
        .filter(|(_, cell)| cell.bg == Color::Cyan)
        .map(|(index, _)| screen.buffer().pos_of(index))
        .collect();
    // Seven columns a pile at this width: the lit cells are the hinted
    // card's pile and its target's, as the solver's move says.
    let piles: std::collections::BTreeSet<u16> = lit.iter().map(|&(x, _)| x / 7).collect();
    let position = AnyGame::deal(GameKind::ThreeBlindMice, 128_917_432);
    let mut hinter = patience_shared::solver::hinter::Hinter::new();
    let Ok(Hint::Play(mv)) = hinter.hint(&position, Budget::positions(PRACTICE_BUDGET)) else {
        panic!("the deal has a hint");
    };
    let shape = move_shapes(&position)
        .into_iter()
        .find(|shape| shape.mv == mv)
        .expect("the hint is a legal move");
    let pile = |zone: Option<Zone>| match zone {
        Some(Zone::Pile(pile)) => u16::from(pile),
        other => panic!("not a pile: {other:?}"),
    };
    let expected = [pile(Some(shape.from)), pile(shape.to)]
        .into_iter()
        .collect();
    assert_eq!(piles, expected, "{lit:?}\n{frame}");
}

/// `h` in practice follows one line.
/// Hints solved afresh at each `h` moved Indian's J♦ back and forth for
/// 40 moves; here each hint shown is played (typed, as a person would copy
/// it) until the game is won, which must take exactly the first hint's
/// line, found by the one search the whole game needs.
#[test]
fn practice_hints_in_a_row_follow_one_line_to_the_win() {
    use patience_shared::solver::hinter::Hinter;
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::rc::Rc;

    /// A practice screen whose last frame the scripted player reads.
    struct Watched {
        inner: Scripted<TestBackend>,
        last_frame: Rc<RefCell<String>>,
    }
    impl Screen for Watched {
        fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()> {
            self.inner.draw_frame(render)?;
            *self.last_frame.borrow_mut() = self.inner.frame();
            Ok(())
        }
        fn area(&self) -> Rect {
            self.inner.area()
        }
        fn suspend(&mut self) -> std::io::Result<()> {
            self.inner.suspend()
        }
        fn clear(&mut self) -> std::io::Result<()> {
            self.inner.clear()
        }
    }

    let (game, seed) = (GameKind::Indian, 1);
    let deal = AnyGame::deal(game, seed);
    let mut own = Hinter::new();
    let Ok(Hint::Play(_)) = own.hint(&deal, Budget::positions(PRACTICE_BUDGET)) else {
        panic!("Indian seed 1 is won within the practice budget");
    };
    let length = own.rest_of_line(&deal).map_or(0, <[AnyMove]>::len);
    let last_frame = Rc::new(RefCell::new(String::new()));
    let mut screen = Watched {
        inner: Scripted::new(80, 24, false),
        last_frame: Rc::clone(&last_frame),
    };
    let mut pending: VecDeque<KeyCode> = VecDeque::new();
    let mut hints_asked = 0;
    let events = std::iter::from_fn(|| {
        if pending.is_empty() {
            let frame = last_frame.borrow();
            if frame.contains("won!") || hints_asked > 2 * length {
                return None;
            }
            match frame.split_once("hint: ") {
                // The hint shown: type its move.
                Some((_, rest)) => {
                    let text = rest.split_once(": ").map_or(rest, |(text, _)| text);
                    pending.push_back(KeyCode::Char(':'));
                    pending.extend(text.chars().map(KeyCode::Char));
                    pending.push_back(KeyCode::Enter);
                }
                None => {
                    hints_asked += 1;
                    pending.push_back(KeyCode::Char('h'));
                }
            }
        }
        pending.pop_front().map(pressed)
    });
    let end = practice_loop(&mut screen, events, game, seed, None).expect("the loop runs");
    let frame = screen.inner.frame();
    assert!(end.won, "not won after {} moves\n{frame}", end.moves);
    assert_eq!(end.moves, length, "the line's length\n{frame}");
    assert_eq!(end.hint_searches, 1, "one search for the whole game");
}
#[test]
fn leaving_a_race_resigns_and_stays_for_the_standings_a_watcher_leaves_at_once() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for press in [key(KeyCode::Char('q')), ctrl_c] {
        let (state, now, _) = racing(Some(0));
        let mut ui = Ui::default();
        ui.follow_race(&state);
        assert_eq!(ui.key(press, state.my_board(), false), Action::None);
        let frame = render(80, 24, |frame| draw_online(frame, &state, &ui, now));
        assert!(frame.contains("Resign?"), "{frame}");
        assert!(!frame.contains("this resigns"), "{frame}");
        assert_eq!(
            ui.key(key(KeyCode::Char('y')), state.my_board(), false),
            Action::Resign
        );
    }
    // A watcher, and a racer once the race is over, leave at once.
    let (watching, _, _) = racing(None);
    let mut ui = Ui::default();
    ui.follow_race(&watching);
    assert_eq!(ui.key(key(KeyCode::Char('q')), None, false), Action::Quit);
    // After resigning: the standings, and q leaves.
    let (mut state, now, _) = racing(Some(0));
    state.apply(
        ServerMessage::Finished {
            seq: 5,
            seat: 0,
            status: PlayerStatus::Resigned,
            elapsed_ms: 40_000,
        },
        now,
    );
    let mut ui = Ui::default();
    ui.follow_race(&state);
    assert_eq!(online_context(&state), Context::RaceOut);
    let frame = render(80, 24, |frame| draw_online(frame, &state, &ui, now));
    assert!(frame.contains("resigned"), "{frame}");
    assert!(frame.contains("bob") && frame.contains("carol"), "{frame}");
    assert_eq!(
        ui.key(key(KeyCode::Char('q')), state.my_board(), false),
        Action::Quit
    );
}

#[test]
fn three_blind_mice_progress_counts_cards_in_suit_order_on_a_king() {
    use patience_shared::rules::ZoneView;
    let cards = |text: &str| -> Vec<Card> {
        text.split_whitespace()
            .map(|card| card.parse().expect("a card"))
            .collect()
    };
    let check = |piles: &[(u8, &str)], home: &[&str], expected: usize| {
        let mut zones: Vec<ZoneView> = piles
            .iter()
            .enumerate()
            .map(|(index, (hidden, text))| ZoneView {
                zone: Zone::Pile(index as u8),
                hidden: *hidden,
                face_up: cards(text),
            })
            .collect();
        zones.extend(home.iter().enumerate().map(|(index, text)| ZoneView {
            zone: Zone::Foundation(index as u8),
            hidden: 0,
            face_up: cards(text),
        }));
        let view = View {
            game: GameKind::ThreeBlindMice,
            zones,
        };
        // A deal with every card face up: the counting, not what it skips
        // (the rules library tests that).
        let deal = View {
            game: GameKind::ThreeBlindMice,
            zones: vec![ZoneView {
                zone: Zone::Pile(0),
                hidden: 0,
                face_up: (0..52).map(Card::from_index).collect(),
            }],
        };
        assert_eq!(
            screens::cards_in_place(&deal, &view),
            expected,
            "{piles:?} {home:?}"
        );
    };
    check(&[(0, "Kd Qd Jd 5c")], &[], 3);
    check(&[(0, "Kd Qd Jh")], &[], 2);
    check(&[(1, "Kd Qd")], &[], 0);
    check(&[(0, "Qd Jd")], &[], 0);
    check(&[(0, "Ks"), (0, "Kh Qh")], &[], 3);
    check(
        &[(0, "Kc")],
        &["Kd Qd Jd Td 9d 8d 7d 6d 5d 4d 3d 2d Ad"],
        14,
    );
}

#[test]
fn the_race_panel_shows_a_three_blind_mice_board_moving() {
    let (state, now, _) = racing(Some(0));
    let frame = render(80, 24, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    let own = screens::cards_in_place(
        &AnyGame::deal(GameKind::ThreeBlindMice, 1).view(),
        state.my_board().expect("a board"),
    );
    assert!(frame.contains(&format!("{own:>3}")), "{frame}");
}

#[test]
fn a_folded_pile_unfolds_where_the_cursor_goes() {
    use patience_shared::rules::ZoneView;
    let run: Vec<Card> = "Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s"
        .split_whitespace()
        .map(|card| card.parse().expect("a card"))
        .collect();
    let view = View {
        game: GameKind::ThreeBlindMice,
        zones: vec![ZoneView {
            zone: Zone::Pile(0),
            hidden: 0,
            face_up: run.clone(),
        }],
    };
    for depth in 0..run.len() {
        let spot = Spot {
            zone: Zone::Pile(0),
            depth,
        };
        let marks = Marks {
            cursor: Some(spot),
            unfold: Some(spot),
            ..Marks::default()
        };
        let lines = board_lines(&view, marks, 40, 8);
        let card = card_label(run[run.len() - 1 - depth]);
        let shown = lines.iter().any(|line| {
            line.spans.iter().any(|span| {
                span.content.trim() == card
                    && span
                        .style
                        .add_modifier
                        .contains(ratatui::style::Modifier::REVERSED)
            })
        });
        assert!(shown, "depth {depth}: {card} is not drawn under the cursor");
        // A click where it is drawn finds it.
        let (mut column, mut row) = (None, None);
        for (y, line) in lines.iter().enumerate() {
            let mut left = 0;
            for span in &line.spans {
                if span
                    .style
                    .add_modifier
                    .contains(ratatui::style::Modifier::REVERSED)
                {
                    (column, row) = (Some(left as u16), Some(y as u16));
                }
                left += span.width();
            }
        }
        let (column, row) = (column.expect("drawn"), row.expect("drawn"));
        assert_eq!(
            board::spot_at(&view, Some(spot), 40, 8, column, row),
            Some(spot)
        );
    }
}

#[test]
fn a_refused_drop_gives_the_engines_reason() {
    let position = AnyGame::deal(GameKind::Indian, 1);
    let view = position.view();
    let shapes = patience_shared::position::move_shapes(&position);
    // A pile top that cannot go onto another pile: the reason is the one a
    // typed move gets from the engine.
    let mut found = false;
    for from in 0..10u8 {
        for to in 0..10u8 {
            let legal = shapes
                .iter()
                .any(|shape| shape.from == Zone::Pile(from) && shape.to == Some(Zone::Pile(to)));
            if from == to || legal {
                continue;
            }
            let text = format!("{}>{}", from + 1, to + 1);
            let mv = position.parse_move(&text).expect("pile to pile reads");
            let engine = position.clone().apply(mv).expect_err("illegal").to_string();
            let mut ui = Ui::default();
            let digit = |pile: u8| KeyCode::Char(char::from(b'0' + (pile + 1) % 10));
            ui.key(key(digit(from)), Some(&view), false);
            ui.key(key(KeyCode::Enter), Some(&view), false);
            ui.key(key(digit(to)), Some(&view), false);
            assert_eq!(
                ui.key(key(KeyCode::Enter), Some(&view), false),
                Action::None
            );
            let (message, error) = ui.message.clone().expect("a message");
            assert!(error);
            assert!(message.ends_with(&engine), "{message:?} vs {engine:?}");
            found = true;
        }
    }
    assert!(found);
    // Three Blind Mice: a card dropped on a pile it does not build on.
    let position = AnyGame::deal(GameKind::ThreeBlindMice, 1);
    let view = position.view();
    let mut ui = Ui::default();
    ui.key(key(KeyCode::Char('1')), Some(&view), false);
    ui.key(key(KeyCode::Enter), Some(&view), false);
    ui.key(key(KeyCode::Char('c')), Some(&view), false);
    ui.key(key(KeyCode::Enter), Some(&view), false);
    let (message, _) = ui.message.clone().expect("a message");
    assert!(message.contains("goes home by itself"), "{message}");
}

#[test]
fn a_small_terminal_says_it_is_too_small() {
    for (width, height) in [(39, 24), (80, 11), (20, 5)] {
        let frame = practice_frame_sized(GameKind::ThreeBlindMice, width, height, &Ui::default());
        let flat: String = frame
            .lines()
            .map(|line| line.trim_matches('"').trim_end())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains("too small"), "{width}×{height}\n{frame}");
    }
    let frame = practice_frame_sized(GameKind::ThreeBlindMice, 40, 12, &Ui::default());
    assert!(!frame.contains("too small"), "{frame}");
    let (state, now, _) = racing(Some(0));
    let frame = render(60, 24, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    assert!(
        frame.contains("too small"),
        "a race needs room for its panel\n{frame}"
    );
}

#[test]
fn ctrl_z_suspends_the_practice_loop() {
    let mut screen = Scripted::new(80, 24, false);
    let events = [Ok(Event::Key(KeyEvent::new(
        KeyCode::Char('z'),
        KeyModifiers::CONTROL,
    )))];
    practice_loop(&mut screen, events, GameKind::ThreeBlindMice, 1, None).expect("the loop runs");
    assert_eq!(screen.suspended, 1);
}

#[test]
fn the_header_counts_one_move_and_many_moves() {
    let view = AnyGame::deal(GameKind::Indian, 1).view();
    for (moves, expected) in [(0, "0 moves"), (1, "1 move ·"), (2, "2 moves")] {
        let screen = PracticeScreen {
            game: GameKind::Indian,
            seed: 1,
            view: &view,
            moves,
            state: None,
        };
        let frame = render(80, 24, |frame| {
            draw_practice(frame, &screen, &Ui::default())
        });
        assert!(frame.contains(expected), "{frame}");
    }
}

/// A wide terminal's spare width goes to the race panel, measured
/// from the game's own board, so Virginia Reel's narrow board leaves no empty
/// middle; the board keeps its widest columns and loses nothing.
#[test]
fn a_wide_race_screen_gives_the_board_its_width_and_the_panel_the_rest() {
    for game in GameKind::ALL {
        let view = AnyGame::deal(game, 1).view();
        let board = board::widest_board_width(&view);
        let [left, right] = race_columns(Rect::new(0, 0, 140, 30), &view);
        assert_eq!(left.width, board, "{game:?}");
        assert!(right.width >= screens::RICH_PANEL, "{game:?}: {right:?}");
        let lines = board_lines(&view, Marks::default(), left.width, left.height);
        let drawn = lines.iter().map(Line::width).max();
        assert_eq!(drawn, Some(usize::from(board)), "{game:?}: nothing cut");
        let [_, narrow] = race_columns(Rect::new(0, 0, 80, 30), &view);
        assert_eq!(narrow.width, PANEL_WIDTH, "{game:?}");
    }
}

#[test]
fn a_wide_race_gives_the_panel_every_count_and_the_pace() {
    let (state, now, _) = racing(Some(0));
    let frame = render(160, 30, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    assert!(frame.contains("/9 uncovered"), "{frame}");
    assert!(frame.contains("/min"), "{frame}");
    insta::assert_snapshot!("race_wide", frame);
}

/// The result of [`racing`]'s race, as the server sends it.
fn race_over(state: &mut RaceState, now: Instant, first: &str) {
    let standing = |rank: u8, seat: u8, name: &str, status, moves| Standing {
        rank,
        seat,
        name: name.into(),
        status,
        progress: Progress {
            moves,
            elapsed_ms: 61_000,
            ..Progress::default()
        },
        bot: None,
    };
    state.apply(
        ServerMessage::RaceEnded {
            seq: 9,
            result: RaceResult {
                race_id: Some(7),
                standings: vec![
                    standing(1, 1, "bob", PlayerStatus::Resigned, 1),
                    standing(2, 0, "ada", PlayerStatus::Resigned, 0),
                    standing(3, 2, "carol", PlayerStatus::Left, 0),
                ],
                reveal: Reveal {
                    game: GameKind::ThreeBlindMice,
                    seed: 1,
                    salt: "9f86d081884c7d659a2feaa0c55ad015".into(),
                },
                logs: vec![
                    MoveLog {
                        seat: 0,
                        moves: vec![],
                    },
                    MoveLog {
                        seat: 1,
                        moves: vec![first.to_string()],
                    },
                ],
                open_boards: false,
            },
        },
        now,
    );
}

#[test]
fn a_watcher_sees_every_board_once_the_race_is_over() {
    let (mut state, now, first) = racing(None);
    race_over(&mut state, now, &first);
    let boards = final_boards(&state);
    assert_eq!(boards.len(), 2);
    let mut bob = AnyGame::deal(GameKind::ThreeBlindMice, 1);
    let mv = bob.parse_move(&first).expect("a move");
    bob.apply(mv).expect("legal");
    // The deal is public: the cards that lay face down show face up.
    assert_eq!(boards[1], (1, crate::replay::revealed_view(&bob.board())));
    let frame = render(200, 30, |frame| {
        draw_online(frame, &state, &Ui::default(), now)
    });
    assert!(frame.contains("Deal: Three Blind Mice seed 1"), "{frame}");
    assert!(frame.contains("patience replay 7"), "{frame}");
    assert!(frame.contains('♥') || frame.contains('♦'), "{frame}");
    insta::assert_snapshot!("results_wide_with_boards", frame);
    // Narrow: Tab turns from the result to each board and back.
    let narrow = |watched: usize| {
        let ui = Ui {
            watched,
            ..Ui::default()
        };
        render(80, 24, |frame| draw_online(frame, &state, &ui, now))
    };
    assert!(narrow(0).contains("The race is over"));
    assert!(
        narrow(1).contains("ada · 0/52 in suit order"),
        "{}",
        narrow(1)
    );
    assert!(narrow(2).contains("bob · "), "{}", narrow(2));
    assert!(narrow(3).contains("The race is over"));
}

/// A resize mid-game: the next frame fills the new size with the key bar
/// at its bottom, and a click lands on the card drawn at the new size.
#[test]
fn after_a_resize_the_frame_fits_and_clicks_follow_the_new_layout() {
    let resizes = Resizes::default();
    let mut screen = Resizable {
        inner: Scripted::new(80, 24, false),
        resizes: resizes.clone(),
    };
    let game = GameKind::Indian;
    let seed = 1;
    let view = AnyGame::deal(game, seed).view();
    let top_of_third = Spot {
        zone: Zone::Pile(2),
        depth: 0,
    };
    let (column, row) = screen_position(&view, top_of_third, 120, 40);
    let mut script = vec![Ok(Event::Resize(120, 40))].into_iter();
    let mut click = Some(mouse_down(MouseButton::Left, column, row));
    let events = std::iter::from_fn(move || match script.next() {
        Some(Ok(Event::Resize(width, height))) => {
            resizes.set(Some((width, height)));
            Some(Ok(Event::Resize(width, height)))
        }
        Some(other) => Some(other),
        None => click.take(),
    });
    practice_loop(&mut screen, events, game, seed, None).expect("the loop runs");
    let frame = screen.inner.frame();
    assert_eq!(frame.lines().count(), 40, "{frame}");
    assert!(
        frame.lines().all(|line| line.chars().count() == 122),
        "{frame}"
    );
    assert!(last_line(&frame).contains("? help"), "{frame}");
    let card = card_label(*view.zones[2].face_up.last().expect("a face-up card"));
    assert!(
        frame.contains(&format!("{card} picked")),
        "the click picked {card}:\n{frame}"
    );
}

/// The replay's real loop, driven by a script where `None` is a wait that
/// passed with no key: keys step back and forth, space plays, each passing
/// wait plays a move, and it pauses at the end with the standing shown.
#[test]
fn the_replay_loop_steps_plays_by_the_clock_and_leaves() {
    let (record, _) = crate::replay::tests::record();
    let replay = crate::replay::Replay::new(record);
    let last = replay.tracks[0].steps.len();
    let ctrl_z = Event::Key(KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL));
    let mut script: std::collections::VecDeque<Option<Event>> = [
        Some(Event::Key(key(KeyCode::Right))),
        Some(Event::Key(key(KeyCode::Right))),
        Some(Event::Key(key(KeyCode::Left))),
        Some(ctrl_z),
        Some(Event::Key(key(KeyCode::Char(' ')))),
    ]
    .into_iter()
    .chain(std::iter::repeat_n(None, last + 2))
    .chain([Some(Event::Key(key(KeyCode::Char('q'))))])
    .collect();
    let mut screen = Scripted::new(80, 24, false);
    let events = |_wait: Duration| {
        script
            .pop_front()
            .ok_or_else(|| std::io::Error::other("the script ran out before q"))
    };
    let cursor = replay::run_on(
        &mut screen,
        events,
        &replay,
        crate::replay::Cursor::new(0, 2.0),
    )
    .expect("the loop runs");
    assert_eq!(cursor.step, last);
    assert!(!cursor.playing, "it pauses at the end");
    assert_eq!(screen.suspended, 1);
    let frame = screen.frame();
    assert!(frame.contains(&format!("move {last} / {last}")), "{frame}");
}

/// A screen that hands every drawn frame to the test, so that it can wait
/// for what the loop shows before it presses the next key.
struct Tapped {
    inner: Scripted<TestBackend>,
    frames: tokio::sync::mpsc::Sender<String>,
}

impl Screen for Tapped {
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()> {
        self.inner.draw_frame(render)?;
        // A frame the test has not read yet is as good as this one.
        let _ = self.frames.try_send(self.inner.frame());
        Ok(())
    }

    fn area(&self) -> Rect {
        self.inner.area()
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        self.inner.suspend()
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.inner.clear()
    }
}

/// The daily's real loop against the fake server: a move by pick-and-drop
/// keys is sent and its answer drawn, `:resign` ends the attempt and the
/// result is shown, then `q` leaves at once.
#[tokio::test]
async fn the_daily_loop_plays_a_move_resigns_and_leaves() {
    use patience_shared::games::three_blind_mice::TbmMove;
    use patience_shared::protocol::ClientMessage;

    let deal = AnyGame::deal(GameKind::ThreeBlindMice, 1);
    let mut legal = Vec::new();
    deal.legal_moves(&mut legal);
    let first = legal[0];
    let first_text = deal.format_move(first);
    let (url, received) = crate::fake_server::start({
        let first_text = first_text.clone();
        let deal = deal.clone();
        move |message| match message {
            ClientMessage::Move { text, .. } if *text == first_text => {
                let mut position = deal.clone();
                let outcome = position.apply(first).expect("a legal move");
                vec![ServerMessage::MoveAccepted {
                    seq: 1,
                    text: text.clone(),
                    effects: outcome.effects.to_vec(),
                    board: position.view(),
                    progress: Progress {
                        moves: 1,
                        ..Progress::default()
                    },
                }]
            }
            ClientMessage::Resign => vec![ServerMessage::DailyFinished {
                result: crate::daily::tests::result(PlayerStatus::Resigned),
            }],
            _ => Vec::new(),
        }
    })
    .await;
    let mut connection = crate::net::Connection::open(&url, "ada")
        .await
        .expect("the fake server answers");
    let mut state = crate::daily::DailyState::default();
    state.apply(
        ServerMessage::DailyStarted {
            attempt: crate::daily::tests::attempt(false, 0),
        },
        Instant::now(),
    );
    let (from, depth, to) = match first {
        AnyMove::ThreeBlindMice(TbmMove::PileToPile { from, count, to }) => {
            (Zone::Pile(from), usize::from(count) - 1, Zone::Pile(to))
        }
        AnyMove::ThreeBlindMice(TbmMove::CellToPile { cell, to }) => {
            (Zone::Cell(cell), 0, Zone::Pile(to))
        }
        other => panic!("not a Three Blind Mice move: {other:?}"),
    };
    let (frames_sender, mut frames) = tokio::sync::mpsc::channel(8);
    let (keys, events) = tokio::sync::mpsc::channel(64);
    let mut screen = Tapped {
        inner: Scripted::new(80, 24, false),
        frames: frames_sender,
    };
    let driver = tokio::spawn(async move {
        let press = |code: KeyCode| Event::Key(key(code));
        let mut wait_for = async |wanted: &str| -> String {
            while let Some(frame) = frames.recv().await {
                if frame.contains(wanted) {
                    return frame;
                }
            }
            panic!("the loop ended before showing {wanted:?}");
        };
        wait_for("daily deal").await;
        let mut presses = keys_for(from, depth);
        presses.push(KeyCode::Enter);
        presses.extend(keys_for(to, 0));
        presses.push(KeyCode::Enter);
        for code in presses {
            keys.send(press(code)).await.expect("the loop reads keys");
        }
        let played = wait_for("you played").await;
        keys.send(press(KeyCode::Char(':'))).await.expect("keys");
        for letter in "resign".chars() {
            keys.send(press(KeyCode::Char(letter))).await.expect("keys");
        }
        keys.send(press(KeyCode::Enter)).await.expect("keys");
        let over = wait_for("patience replay").await;
        keys.send(press(KeyCode::Char('q'))).await.expect("keys");
        (played, over)
    });
    // A guard, not a synchronisation: a loop that stops answering fails
    // the test instead of hanging it.
    let (state, outcome) = tokio::time::timeout(
        Duration::from_secs(60),
        daily::run_on(&mut screen, events, &mut connection, state, Vec::new()),
    )
    .await
    .expect("the loop answers within a minute")
    .expect("the loop runs");
    outcome.expect("the connection held");
    let (played, over) = driver.await.expect("the driver finishes");
    assert!(played.contains(&first_text), "{played}");
    assert!(over.contains("resigned"), "{over}");
    assert_eq!(
        state.result.as_ref().map(|result| result.status),
        Some(PlayerStatus::Resigned)
    );
    let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
    assert!(
        sent.iter().any(
            |message| matches!(message, ClientMessage::Move { text, .. } if *text == first_text)
        ),
        "{sent:?}"
    );
    assert!(sent.contains(&ClientMessage::Resign), "{sent:?}");
}

#[test]
fn help_pages_of_the_other_games() {
    let page = |game: GameKind, context: Context| {
        render(80, 24, |frame| {
            let area = frame.area();
            overlay(frame, area, help_lines(game, context));
        })
    };
    insta::assert_snapshot!(
        "help_indian_race",
        page(GameKind::Indian, Context::Race { undo: false })
    );
    insta::assert_snapshot!(
        "help_virginia_reel_practice",
        page(GameKind::VirginiaReel, Context::Practice)
    );
    insta::assert_snapshot!(
        "help_watching",
        page(GameKind::Midshipman, Context::Watch { boards: true })
    );
}

/// The daily attempt of [`daily_state`] with the day's standings followed:
/// three rows, then a fourth that came in as the attempt ran.
fn daily_state_with_standings() -> (crate::daily::DailyState, Instant) {
    use crate::live::tests::{page, update};
    let (mut state, now) = daily_state();
    assert!(state.follow_request().is_some(), "the day is followed once");
    assert!(state.follow_request().is_none(), "only once");
    state.apply(
        ServerMessage::LeaderboardPage {
            page: page(&[
                "1 ada won 98.4 11",
                "2 bob won 131.25 12",
                "3 carol resigned 30.0 13",
            ]),
        },
        now,
    );
    state.apply(
        ServerMessage::LeaderboardUpdate {
            update: update(Some("2 dan won 120.0 14"), 42, 3),
        },
        now,
    );
    (state, now)
}

#[test]
fn daily_attempt_with_the_days_standings_under_the_panel() {
    let (state, now) = daily_state_with_standings();
    insta::assert_snapshot!(render(80, 24, |frame| daily::draw_daily(
        frame,
        &state,
        &Ui::default(),
        now
    )));
}

#[test]
fn daily_finished_with_the_own_row_marked_in_a_column_of_its_own() {
    let (mut state, now) = daily_state_with_standings();
    let mut result = crate::daily::tests::result(PlayerStatus::Won);
    result.rank = 2;
    result.race_id = 15;
    state.apply(ServerMessage::DailyFinished { result }, now);
    state.apply(
        ServerMessage::LeaderboardUpdate {
            update: crate::live::tests::update(Some("2 ada2 won 110.0 15"), 43, 2),
        },
        now,
    );
    let standings = state.standings.as_ref().expect("followed");
    assert_eq!(standings.page.own.as_ref().map(|own| own.rank), Some(2));
    insta::assert_snapshot!(render(120, 24, |frame| daily::draw_daily(
        frame,
        &state,
        &Ui::default(),
        now
    )));
}

#[test]
fn the_live_leaderboard_marks_the_latest_row_and_keeps_the_own_row_in_sight() {
    use crate::live::tests::{page, row, update};
    let rows: Vec<String> = (1..=20)
        .map(|rank| format!("{rank} p{rank} won {}.0 {}", 60 + rank, 100 + rank))
        .collect();
    let texts: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut first = page(&texts);
    first.own = Some(row("21 dan resigned 30.0 700"));
    let mut board = crate::live::LiveBoard::new(first, 100);
    let change = board
        .apply(&update(Some("3 eve won 62.5 300"), 21, 4))
        .expect("the followed day");
    let view = live::LiveView {
        message: Some(crate::live::change_text(&board, &change)),
        ..live::LiveView::default()
    };
    let frame = render(80, 24, |frame| live::draw_live(frame, &board, &view));
    assert!(
        frame.contains("  22  dan"),
        "the own row moved down: {frame}"
    );
    insta::assert_snapshot!(frame);
}

#[test]
fn live_and_daily_standings_frames_of_any_size_draw_without_panicking() {
    let (state, now) = daily_state_with_standings();
    let board = state.standings.clone().expect("followed");
    for (width, height) in [(1, 1), (10, 4), (40, 10), (80, 24), (93, 30), (200, 60)] {
        render(width, height, |frame| {
            daily::draw_daily(frame, &state, &Ui::default(), now)
        });
        render(width, height, |frame| {
            live::draw_live(frame, &board, &live::LiveView::default())
        });
    }
}

/// The daily's real loop with the day followed: the `follow` goes out at
/// once on the attempt's connection, and updates come before and after the
/// answer to a move and after the result; the panel shows each.
#[tokio::test]
async fn the_daily_loop_follows_the_standings_that_arrive_between_the_answers() {
    use crate::live::tests::{page, update};
    use patience_shared::protocol::ClientMessage;

    let deal = AnyGame::deal(GameKind::ThreeBlindMice, 1);
    let mut legal = Vec::new();
    deal.legal_moves(&mut legal);
    let first = legal[0];
    let first_text = deal.format_move(first);
    let mut finished = crate::daily::tests::result(PlayerStatus::Resigned);
    finished.race_id = 15;
    finished.rank = 4;
    let (url, received) = crate::fake_server::start({
        let first_text = first_text.clone();
        let deal = deal.clone();
        let finished = finished.clone();
        move |message| match message {
            ClientMessage::Follow { .. } => vec![ServerMessage::LeaderboardPage {
                page: page(&["1 ada won 98.4 11", "2 bob won 131.25 12"]),
            }],
            ClientMessage::Move { text, .. } if *text == first_text => {
                let mut position = deal.clone();
                let outcome = position.apply(first).expect("a legal move");
                vec![
                    ServerMessage::LeaderboardUpdate {
                        update: update(Some("1 zoe won 61.0 16"), 3, 2),
                    },
                    ServerMessage::MoveAccepted {
                        seq: 1,
                        text: text.clone(),
                        effects: outcome.effects.to_vec(),
                        board: position.view(),
                        progress: Progress {
                            moves: 1,
                            ..Progress::default()
                        },
                    },
                    ServerMessage::LeaderboardUpdate {
                        update: update(None, 3, 3),
                    },
                ]
            }
            ClientMessage::Resign => vec![
                ServerMessage::DailyFinished {
                    result: finished.clone(),
                },
                ServerMessage::LeaderboardUpdate {
                    update: update(Some("4 ada resigned 70.0 15"), 4, 2),
                },
            ],
            _ => Vec::new(),
        }
    })
    .await;
    let mut connection = crate::net::Connection::open(&url, "ada")
        .await
        .expect("the fake server answers");
    let mut state = crate::daily::DailyState::default();
    state.apply(
        ServerMessage::DailyStarted {
            attempt: crate::daily::tests::attempt(false, 0),
        },
        Instant::now(),
    );
    let (frames_sender, mut frames) = tokio::sync::mpsc::channel(8);
    let (keys, events) = tokio::sync::mpsc::channel(64);
    let mut screen = Tapped {
        inner: Scripted::new(80, 24, false),
        frames: frames_sender,
    };
    let typed = first_text.clone();
    let driver = tokio::spawn(async move {
        let press = |code: KeyCode| Event::Key(key(code));
        let mut wait_for = async |wanted: &[&str]| -> String {
            while let Some(frame) = frames.recv().await {
                if wanted.iter().all(|part| frame.contains(part)) {
                    return frame;
                }
            }
            panic!("the loop ended before showing {wanted:?}");
        };
        let opened = wait_for(&["today's standings", "2 bob"]).await;
        keys.send(press(KeyCode::Char(':'))).await.expect("keys");
        for letter in typed.chars() {
            keys.send(press(KeyCode::Char(letter))).await.expect("keys");
        }
        keys.send(press(KeyCode::Enter)).await.expect("keys");
        let played = wait_for(&["you played", "1 zoe", "3 finished, 3 playing"]).await;
        keys.send(press(KeyCode::Char(':'))).await.expect("keys");
        for letter in "resign".chars() {
            keys.send(press(KeyCode::Char(letter))).await.expect("keys");
        }
        keys.send(press(KeyCode::Enter)).await.expect("keys");
        let over = wait_for(&["patience replay", "▸  4 ada"]).await;
        keys.send(press(KeyCode::Char('q'))).await.expect("keys");
        (opened, played, over)
    });
    // A guard, not a synchronisation: a loop that stops answering fails
    // the test instead of hanging it.
    let (state, outcome) = tokio::time::timeout(
        Duration::from_secs(60),
        daily::run_on(&mut screen, events, &mut connection, state, Vec::new()),
    )
    .await
    .expect("the loop answers within a minute")
    .expect("the loop runs");
    outcome.expect("the connection held");
    let (opened, played, over) = driver.await.expect("the driver finishes");
    assert!(opened.contains("2 finished, 2 playing"), "{opened}");
    assert!(played.contains(&first_text), "{played}");
    assert!(over.contains("resigned"), "{over}");
    let standings = state.standings.expect("the day was followed");
    let names: Vec<(u32, &str)> = standings
        .page
        .rows
        .iter()
        .map(|row| (row.rank, row.name.as_str()))
        .collect();
    assert_eq!(names, [(1, "zoe"), (2, "ada"), (3, "bob"), (4, "ada")]);
    assert_eq!(standings.page.own.as_ref().map(|own| own.race_id), Some(15));
    let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
    assert_eq!(
        sent[1],
        ClientMessage::Follow {
            game: GameKind::ThreeBlindMice,
            date: Some("2026-12-01".into()),
            limit: Some(crate::daily::STANDINGS_ROWS),
        },
        "the follow goes out first: {sent:?}"
    );
}

/// The live leaderboard's real loop: the page from `follow`, updates drawn
/// as they come, arrows scroll, `q` leaves.
#[tokio::test]
async fn the_live_leaderboard_loop_draws_each_update_and_leaves_on_q() {
    use crate::live::tests::{page, update};
    use patience_shared::protocol::ClientMessage;

    let (url, _) = crate::fake_server::start(|message| match message {
        ClientMessage::Follow { .. } => vec![
            ServerMessage::LeaderboardPage {
                page: page(&["1 ada won 98.4 11", "2 bob won 131.25 12"]),
            },
            ServerMessage::LeaderboardUpdate {
                update: update(Some("2 carl won 100.0 13"), 3, 1),
            },
            ServerMessage::LeaderboardUpdate {
                update: update(None, 3, 4),
            },
        ],
        _ => Vec::new(),
    })
    .await;
    let (mut connection, board, _) = crate::live::follow(
        &url,
        &crate::config::Store::none(),
        GameKind::ThreeBlindMice,
        None,
        None,
    )
    .await
    .expect("the page");
    let (frames_sender, mut frames) = tokio::sync::mpsc::channel(8);
    let (keys, events) = tokio::sync::mpsc::channel(64);
    let mut screen = Tapped {
        inner: Scripted::new(80, 24, false),
        frames: frames_sender,
    };
    let driver = tokio::spawn(async move {
        let press = |code: KeyCode| Event::Key(key(code));
        let mut wait_for = async |wanted: &str| -> String {
            while let Some(frame) = frames.recv().await {
                if frame.contains(wanted) {
                    return frame;
                }
            }
            panic!("the loop ended before showing {wanted:?}");
        };
        let live = wait_for("3 finished, 4 playing").await;
        keys.send(press(KeyCode::Down)).await.expect("keys");
        keys.send(press(KeyCode::Char('?'))).await.expect("keys");
        let help = wait_for("any key closes it").await;
        keys.send(press(KeyCode::Char('x'))).await.expect("keys");
        keys.send(press(KeyCode::Char('q'))).await.expect("keys");
        (live, help)
    });
    let (board, outcome) = tokio::time::timeout(
        Duration::from_secs(60),
        live::run_on(&mut screen, events, &mut connection, board),
    )
    .await
    .expect("the loop answers within a minute")
    .expect("the loop runs");
    outcome.expect("the connection held");
    let (live, help) = driver.await.expect("the driver finishes");
    assert!(live.contains("   2  carl"), "{live}");
    assert!(live.contains("   3  bob"), "{live}");
    assert!(help.contains("rows below it move down"), "{help}");
    let names: Vec<&str> = board
        .page
        .rows
        .iter()
        .map(|row| row.name.as_str())
        .collect();
    assert_eq!(names, ["ada", "carl", "bob"]);
}
