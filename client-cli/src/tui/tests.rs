//! Snapshot tests of whole frames, rendered with ratatui's `TestBackend`:
//! each game's board at 80×24, the lobby, a race with its panel, watch
//! mode, the results, and the help.

use std::time::{Duration, Instant};

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, MoveLog, Phase, PlayerInfo, PlayerStatus, Progress, RaceResult, Reveal, RoomInfo,
    RoomOptions, ServerMessage, Standing,
};
use patience_shared::rules::Rules;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::*;
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
    // Line 4 is the first face-up row; column 10 is pile 3 (five columns each).
    let spot = board::spot_at(&view, 80, 22, 10, 4);
    assert_eq!(
        spot,
        Some(Spot {
            zone: Zone::Pile(2),
            depth: 1
        })
    );
    assert_eq!(
        board::spot_at(&view, 80, 22, 10, 5).map(|spot| spot.depth),
        Some(0)
    );
    assert_eq!(board::spot_at(&view, 80, 22, 79, 5), None);
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
            })
            .collect(),
        spectators: 1,
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

#[test]
fn without_colors_the_cursor_stays_reversed_and_no_empty_sgr_is_written() {
    use ratatui::backend::{Backend as _, CrosstermBackend};
    use ratatui::style::{Color, Modifier};

    let game = GameKind::ThreeBlindMice;
    let view = AnyGame::deal(game, 7).view();
    let mut ui = Ui::default();
    ui.key(key(KeyCode::Right), Some(&view), false);
    let screen = PracticeScreen {
        game,
        seed: 7,
        view: &view,
        moves: 0,
        state: None,
    };
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("a test terminal");
    terminal
        .draw(|frame| {
            draw_practice(frame, &screen, &ui);
            without_colors(frame.buffer_mut());
        })
        .expect("drawing to a test backend");
    let buffer = terminal.backend().buffer().clone();
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
            .any(|cell| cell.modifier.contains(Modifier::REVERSED)),
        "the cursor cell keeps its reverse video"
    );

    // What crossterm writes for it when NO_COLOR is set: the reverse video,
    // and no empty color change (`ESC[;m`) that would reset it.
    ratatui::crossterm::style::Colored::set_ansi_color_disabled(true);
    let mut output = Vec::<u8>::new();
    let written = CrosstermBackend::new(&mut output).draw(buffer.content.iter().enumerate().map(
        |(index, cell)| {
            let (x, y) = buffer.pos_of(index);
            (x, y, cell)
        },
    ));
    ratatui::crossterm::style::Colored::set_ansi_color_disabled(false);
    written.expect("writing to a vector");
    let bytes = String::from_utf8_lossy(&output).into_owned();
    assert!(bytes.contains("\u{1b}[7m"), "{bytes:?}");
    assert!(!bytes.contains("\u{1b}[;m"), "{bytes:?}");
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

/// Issue 12: whole games of Three Blind Mice won by keys only, every move
/// by pick-and-drop and by two clicks, and the moves that send a run home
/// also by space and by a right click.
#[test]
fn a_whole_game_of_three_blind_mice_is_won_by_keys_and_clicks() {
    use patience_shared::games::three_blind_mice::TbmMove;
    use patience_shared::rules::Effect;
    use patience_shared::solver::Budget;
    use patience_shared::solver::any::solve_deal;

    for seed in [128_917_432, 11, 18, 20, 23] {
        let line = solve_deal(GameKind::ThreeBlindMice, seed, Budget::positions(200_000))
            .expect("the solver's line replays")
            .solution;
        assert!(!line.is_empty(), "seed {seed} is not solved");
        let mut position = AnyGame::deal(GameKind::ThreeBlindMice, seed);
        let mut ui = Ui::default();
        let mut runs_home = 0;
        for text in &line {
            let view = position.view();
            let mv = position
                .parse_move(text)
                .expect("the solver's notation reads");
            let (from, depth, to) = match mv {
                AnyMove::ThreeBlindMice(TbmMove::PileToPile { from, count, to }) => {
                    (Zone::Pile(from), usize::from(count) - 1, Zone::Pile(to))
                }
                AnyMove::ThreeBlindMice(TbmMove::CellToPile { cell, to }) => {
                    (Zone::Cell(cell), 0, Zone::Pile(to))
                }
                other => panic!("not a Three Blind Mice move: {other:?}"),
            };
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
