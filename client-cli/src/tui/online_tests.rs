//! The real online loop ([`super::online::run`]) driven as a person meets
//! it: a `TestBackend` screen, a scripted stream of terminal events, and
//! the fake server (`crate::fake_server`) dropping the connection mid-race.
//! Nothing waits on wall-clock sleeps: the test follows the frames the loop
//! draws (a `watch` channel) and what the fake server receives; a timeout
//! is only a safety net against a client that never gets there.

use std::time::Duration;

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ClientMessage, ErrorCode, Phase, PlayerInfo, PlayerStatus, RoomInfo, RoomOptions, ServerMessage,
};
use patience_shared::rules::Rules as _;
use ratatui::Terminal;
use ratatui::backend::{Backend as _, TestBackend};
use ratatui::buffer::Cell;
use ratatui::crossterm::event::Event;
use tokio::sync::{mpsc, watch};

use super::Screen;
use super::online::{self, Ending};
use crate::config::Store;
use crate::fake_server::{self, Reply};
use crate::session::{Entry, Session};

/// The longest a test waits for what it expects: a safety net only.
const PATIENCE: Duration = Duration::from_secs(20);

/// A `TestBackend` that publishes each frame it draws, as text.
struct TestScreen {
    terminal: Terminal<TestBackend>,
    frames: watch::Sender<String>,
}

impl TestScreen {
    fn new(width: u16, height: u16) -> (TestScreen, watch::Receiver<String>) {
        let (frames, watching) = watch::channel(String::new());
        let terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
        (TestScreen { terminal, frames }, watching)
    }

    fn text(&self) -> String {
        self.terminal.backend().to_string()
    }
}

impl Screen for TestScreen {
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut ratatui::Frame)) -> std::io::Result<()> {
        let Ok(_) = self.terminal.draw(render);
        self.frames.send_replace(self.text());
        Ok(())
    }

    fn area(&self) -> ratatui::layout::Rect {
        let size = self.terminal.backend().size().unwrap_or_default();
        ratatui::layout::Rect::new(0, 0, size.width, size.height)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        let Ok(()) = self.terminal.clear();
        Ok(())
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn room(phase: Phase) -> RoomInfo {
    let player = |seat: u8, name: &str| PlayerInfo {
        seat,
        name: name.into(),
        connected: true,
        status: PlayerStatus::Racing,
        bot: None,
    };
    RoomInfo {
        code: "K7PQ3M".into(),
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: false,
        options: RoomOptions::default(),
        owner: Some(0),
        phase,
        players: vec![player(0, "ada"), player(1, "bob")],
        spectators: 0,
        series: None,
    }
}

fn race_started(seq: u64) -> ServerMessage {
    ServerMessage::RaceStarted {
        seq,
        commitment: "c".into(),
        board: AnyGame::deal(GameKind::ThreeBlindMice, 7).view(),
        time_limit_ms: 600_000,
    }
}

/// The fake server's answer to a join: seat 0 with the token `first`, the
/// start of the race, then `after` and a dropped connection (no close frame,
/// as a lost network drops it).
fn seated_then_dropped(after: impl IntoIterator<Item = ServerMessage>) -> Reply {
    let mut messages = vec![
        ServerMessage::RoomJoined {
            seq: 1,
            room: room(Phase::Racing),
            seat: Some(0),
            resume_token: Some("first".into()),
        },
        race_started(2),
    ];
    messages.extend(after);
    Reply {
        messages,
        then_drop: true,
    }
}

/// A fake server of one race in room K7PQ3M: a join gets seat 1 and the
/// start of the race, then `after_start` (a kick, say) and a dropped
/// connection; a resume with any token gets the seat back 50 s into the
/// race with the token `second`, then the replayed start. Each resume's
/// token is sent on the returned channel.
async fn dropping_server(after_start: Vec<ServerMessage>) -> (String, mpsc::Receiver<String>) {
    let (resumes, resumed) = mpsc::channel(8);
    let (url, _) = fake_server::start_scripted(move |message| match message {
        ClientMessage::JoinRoom { .. } => seated_then_dropped(after_start.clone()),
        ClientMessage::Resume { token, .. } => {
            let _ = resumes.try_send(token.clone());
            Reply {
                messages: vec![
                    ServerMessage::Resumed {
                        seq: 2,
                        room: room(Phase::Racing),
                        seat: 0,
                        resume_token: "second".into(),
                        elapsed_ms: Some(50_000),
                    },
                    race_started(2),
                ],
                then_drop: false,
            }
        }
        _ => Reply::default(),
    })
    .await;
    (url, resumed)
}

fn config_dir(name: &str) -> std::path::PathBuf {
    let directory = std::env::temp_dir().join(format!(
        "patience-online-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

/// Waits until the loop has drawn a frame for which `wanted` holds.
async fn until_drawn(frames: &mut watch::Receiver<String>, wanted: impl Fn(&str) -> bool) {
    while !wanted(&frames.borrow_and_update()) {
        if frames.changed().await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn a_race_dropped_mid_way_reconnects_with_no_key_pressed_and_keeps_the_servers_clock() {
    let (url, mut resumes) = dropping_server(Vec::new()).await;
    let directory = config_dir("dropped");
    let store = Store::in_directory(&directory);
    let (session, notes) = Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), store.clone())
        .await
        .expect("the fake server seats us");
    let (mut screen, mut frames) = TestScreen::new(100, 30);
    // What a client that died without restoring the terminal left behind.
    let leftover: Vec<(u16, u16, Cell)> = "LEFTOVER"
        .chars()
        .enumerate()
        .map(|(column, c)| {
            let mut cell = Cell::default();
            cell.set_char(c);
            (2 + column as u16, 26, cell)
        })
        .collect();
    screen
        .terminal
        .backend_mut()
        .draw(leftover.iter().map(|(x, y, cell)| (*x, *y, cell)))
        .expect("a test backend draws");
    // No key is ever pressed: the sender is only dropped at the end, which
    // the loop reads as the terminal going away.
    let (keys, mut events) = mpsc::channel::<Event>(8);
    let ending = {
        let looping = online::run(&mut screen, &mut events, session, notes);
        tokio::pin!(looping);
        let watched = async {
            let token = resumes.recv().await;
            assert_eq!(
                token.as_deref(),
                Some("first"),
                "resumed with the saved token"
            );
            until_drawn(&mut frames, |frame| frame.contains("⏱ 0:50")).await;
        };
        tokio::select! {
            ending = &mut looping => panic!(
                "the loop ended before resuming: {}",
                how_it_ended(ending)
            ),
            outcome = tokio::time::timeout(PATIENCE, watched) => outcome
                .unwrap_or_else(|_| panic!("no resume shown at 0:50 within {PATIENCE:?}")),
        }
        drop(keys);
        looping.await.expect("the loop ends cleanly")
    };
    assert!(matches!(ending, Ending::Close(_)), "the terminal went away");
    online::finish(ending)
        .await
        .expect("closing keeps the seat");
    let text = screen.text();
    assert!(
        !text.contains("LEFTOVER"),
        "the screen was cleared:\n{text}"
    );
    let seat = store.load().seat.expect("the seat is kept for a resume");
    assert_eq!(seat.token, "second", "the rotated token is saved");
    let _ = std::fs::remove_dir_all(&directory);
}

#[tokio::test]
async fn a_too_slow_kick_resumes_the_seat_instead_of_ending_the_session() {
    let kick = ServerMessage::Error {
        code: ErrorCode::TooSlow,
        message: "you fell behind; resume to catch up".into(),
    };
    let (url, mut resumes) = dropping_server(vec![kick]).await;
    let directory = config_dir("kicked");
    let store = Store::in_directory(&directory);
    let (mut session, _) = Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), store.clone())
        .await
        .expect("the fake server seats us");
    let resumed = async {
        loop {
            let (message, _) = session.recv().await.expect("the session goes on");
            if matches!(message, ServerMessage::Resumed { .. }) {
                return;
            }
        }
    };
    tokio::time::timeout(PATIENCE, resumed)
        .await
        .expect("resumed within the test's patience");
    assert_eq!(resumes.recv().await.as_deref(), Some("first"));
    assert_eq!(session.state.closed, None);
    assert!(session.state.can_move(), "still racing");
    assert_eq!(
        store.load().seat.map(|seat| seat.token).as_deref(),
        Some("second")
    );
    session.close().await;
    let _ = std::fs::remove_dir_all(&directory);
}

#[tokio::test]
async fn leaving_while_the_session_reconnects_ends_at_once_and_forgets_the_seat() {
    // A server that seats us, drops the connection and never answers a
    // resume: the session is left waiting between attempts.
    let (url, _) = fake_server::start_scripted(|message| match message {
        ClientMessage::JoinRoom { .. } => seated_then_dropped([]),
        _ => Reply::default(),
    })
    .await;
    let directory = config_dir("leaving");
    let store = Store::in_directory(&directory);
    let (mut session, _) = Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), store.clone())
        .await
        .expect("the fake server seats us");
    assert!(store.load().seat.is_some());
    // The start of the race, then the link's word that it reconnects. The
    // note is kept by `recv` even when it is cancelled, as a front end's
    // tick cancels it.
    let reconnecting = async {
        while session.take_connection_notes().is_empty() {
            let _ = tokio::time::timeout(Duration::from_millis(50), session.recv()).await;
        }
    };
    tokio::time::timeout(PATIENCE, reconnecting)
        .await
        .expect("told of the reconnection");
    tokio::time::timeout(PATIENCE, session.leave())
        .await
        .expect("leaving does not wait for the reconnection");
    assert_eq!(store.load().seat, None, "a seat left is forgotten");
    let _ = std::fs::remove_dir_all(&directory);
}

#[tokio::test]
async fn plain_mode_says_it_reconnects_and_follows_the_race_to_its_end() {
    let ended = tbm_race_ended(3, 731, Vec::new());
    let (url, _) = fake_server::start_scripted(move |message| match message {
        ClientMessage::JoinRoom { .. } => seated_then_dropped([]),
        ClientMessage::Resume { .. } => Reply {
            messages: vec![
                ServerMessage::Resumed {
                    seq: 2,
                    room: room(Phase::Racing),
                    seat: 0,
                    resume_token: "second".into(),
                    elapsed_ms: Some(50_000),
                },
                race_started(2),
                ended.clone(),
            ],
            then_drop: false,
        },
        _ => Reply::default(),
    })
    .await;
    let (session, notes) = Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), Store::none())
        .await
        .expect("the fake server seats us");
    // Standard input stays open and silent: nobody types a line.
    let (_typing, lines) = mpsc::channel(8);
    let mut output = Vec::new();
    tokio::time::timeout(
        PATIENCE,
        crate::plain::online(session, notes, lines, &mut output),
    )
    .await
    .expect("the race ends within the test's patience")
    .expect("the race ends well");
    let output = String::from_utf8_lossy(&output);
    let position = |text: &str| {
        output
            .find(text)
            .unwrap_or_else(|| panic!("no {text:?} in:\n{output}"))
    };
    assert!(position("connection lost") < position("back in room K7PQ3M in seat 1"));
    assert!(position("back in room K7PQ3M") < position("the race is over"));
    position("race id 731");
}

#[tokio::test]
async fn a_session_cancelled_at_every_turn_loses_no_message_across_a_reconnection() {
    let progress = |seq: u64| ServerMessage::Progress {
        seq,
        seat: 1,
        progress: patience_shared::protocol::Progress {
            moves: u32::try_from(seq).unwrap_or(u32::MAX),
            ..Default::default()
        },
        text: None,
        board: None,
    };
    let (url, _) = fake_server::start_scripted(move |message| match message {
        ClientMessage::JoinRoom { .. } => seated_then_dropped((3..13).map(progress)),
        ClientMessage::Resume { .. } => Reply {
            messages: [ServerMessage::Resumed {
                seq: 12,
                room: room(Phase::Racing),
                seat: 0,
                resume_token: "second".into(),
                elapsed_ms: Some(5_000),
            }]
            .into_iter()
            .chain((13..23).map(progress))
            .collect(),
            then_drop: false,
        },
        _ => Reply::default(),
    })
    .await;
    let (mut session, _) = Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), Store::none())
        .await
        .expect("the fake server seats us");
    let mut seen = Vec::new();
    let everything = async {
        while seen.last() != Some(&22) {
            // Polled once, then dropped: as a `select!` that another branch wins.
            let polled = {
                let receiving = std::pin::pin!(session.recv());
                futures::poll!(receiving)
            };
            match polled {
                std::task::Poll::Ready(received) => {
                    let (message, _) = received.expect("the session goes on");
                    if let ServerMessage::Progress { seq, .. } = message {
                        seen.push(seq);
                    }
                }
                std::task::Poll::Pending => tokio::task::yield_now().await,
            }
        }
    };
    tokio::time::timeout(PATIENCE, everything)
        .await
        .expect("every message within the test's patience");
    assert_eq!(seen, (3..23).collect::<Vec<_>>(), "none lost, none twice");
}

/// What the race panel (right of the `│`) says of racer `name`: its lines
/// from the name's to the next racer's, joined (a narrow panel gives a
/// racer three lines, a wide one puts the status beside the name).
fn panel_of(frame: &str, name: &str) -> String {
    let panel: Vec<&str> = frame
        .lines()
        .map(|line| {
            line.rsplit('│')
                .next()
                .unwrap_or("")
                .trim_matches([' ', '"'])
        })
        .collect();
    panel
        .iter()
        .position(|line| *line == name || line.starts_with(&format!("{name}  ")))
        .map(|first| panel[first..(first + 3).min(panel.len())].join(" "))
        .unwrap_or_default()
}

/// The lines of `frame` that hold all of `words`.
fn lines_with<'a>(frame: &'a str, words: &[&str]) -> Vec<&'a str> {
    frame
        .lines()
        .filter(|line| words.iter().all(|word| line.contains(word)))
        .collect()
}

#[tokio::test]
async fn rivals_who_resign_are_told_resigned_and_a_bot_that_wins_is_told_won() {
    use patience_shared::protocol::Standing;

    let three = || {
        let mut room = room(Phase::Racing);
        room.max_players = 3;
        room.players[1].name = "bot".into();
        room.players.push(PlayerInfo {
            seat: 2,
            name: "carol".into(),
            connected: true,
            status: PlayerStatus::Racing,
            bot: None,
        });
        room
    };
    // As the server tells it: a racer's `finished` first, then the room
    // update of its client going away (a resigning player's client closes;
    // a bot's ends with its race).
    let gone = |seq: u64, seats: &[(u8, PlayerStatus)]| {
        let mut room = three();
        for &(seat, status) in seats {
            if let Some(player) = room.players.iter_mut().find(|p| p.seat == seat) {
                player.connected = false;
                player.status = status;
            }
        }
        ServerMessage::RoomUpdate { seq, room }
    };
    let finished =
        |seq: u64, seat: u8, status: PlayerStatus, elapsed_ms: u64| ServerMessage::Finished {
            seq,
            seat,
            status,
            elapsed_ms,
        };
    let (resigned, won) = (PlayerStatus::Resigned, PlayerStatus::Won);
    let rivals_done = vec![
        ServerMessage::RoomJoined {
            seq: 1,
            room: three(),
            seat: Some(0),
            resume_token: Some("first".into()),
        },
        race_started(2),
        finished(3, 2, resigned, 20_000),
        gone(4, &[(2, resigned)]),
        finished(5, 1, won, 45_000),
        gone(6, &[(2, resigned), (1, won)]),
    ];
    let standing = |rank: u8, seat: u8, name: &str, status: PlayerStatus| Standing {
        rank,
        seat,
        name: name.into(),
        status,
        progress: Default::default(),
        bot: None,
    };
    let ended = tbm_race_ended(
        8,
        732,
        vec![
            standing(1, 1, "bot", won),
            standing(2, 0, "ada", resigned),
            standing(3, 2, "carol", resigned),
        ],
    );
    let (url, _) = fake_server::start(move |message| match message {
        ClientMessage::JoinRoom { .. } => rivals_done.clone(),
        ClientMessage::Resign => vec![finished(7, 0, resigned, 60_000), ended.clone()],
        _ => Vec::new(),
    })
    .await;
    let (session, notes) = Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), Store::none())
        .await
        .expect("the fake server seats us");
    let (mut screen, mut frames) = TestScreen::new(120, 30);
    let (keys, mut events) = mpsc::channel::<Event>(8);
    let press = |c: char| {
        Event::Key(ratatui::crossterm::event::KeyEvent::from(
            ratatui::crossterm::event::KeyCode::Char(c),
        ))
    };
    let last = frames.clone();
    let (racing, results) = {
        let looping = online::run(&mut screen, &mut events, session, notes);
        tokio::pin!(looping);
        let watched = async {
            // The race panel, while ada still races.
            until_drawn(&mut frames, |frame| {
                panel_of(frame, "bot").contains("won")
                    && panel_of(frame, "carol").contains("resigned")
            })
            .await;
            let racing = frames.borrow().clone();
            // ada resigns too (q, then yes): the race ends, the results show.
            for c in ['q', 'y'] {
                keys.send(press(c)).await.expect("the loop reads keys");
            }
            until_drawn(&mut frames, |frame| frame.contains("race id 732")).await;
            (racing, frames.borrow().clone())
        };
        let seen = tokio::select! {
            ending = &mut looping => panic!(
                "the loop ended early: {}",
                how_it_ended(ending)
            ),
            seen = tokio::time::timeout(PATIENCE, watched) => seen.unwrap_or_else(|_| {
                panic!("not shown within {PATIENCE:?}:\n{}", last.borrow().as_str())
            }),
        };
        drop(keys);
        let _ = looping.await;
        seen
    };
    for frame in [&racing, &results] {
        for wrong in ["lost the connection", "reconnecting"] {
            assert!(!frame.contains(wrong), "{wrong:?} in:\n{frame}");
        }
    }
    assert!(
        racing.contains("bot won after 0:45"),
        "the last word is the bot's win:\n{racing}"
    );
    let standing_of = |name: &str, status: &str| {
        lines_with(&results, &[name, status])
            .into_iter()
            .any(|line| !line.contains("after"))
    };
    assert!(standing_of("bot", "won"), "{results}");
    assert!(standing_of("carol", "resigned"), "{results}");
    // The race's lasting page, on the server raced on.
    let page = format!(
        "{}/race/732",
        crate::race::page_address(&url).expect("a WebSocket URL")
    );
    assert!(
        results.contains(&format!("Its page, to keep or share: {page}")),
        "{results}"
    );
}

/// The end of a Three Blind Mice race of seed 7, stored as `race_id`.
fn tbm_race_ended(
    seq: u64,
    race_id: u64,
    standings: Vec<patience_shared::protocol::Standing>,
) -> ServerMessage {
    use patience_shared::protocol::{RaceResult, Reveal};
    ServerMessage::RaceEnded {
        seq,
        result: RaceResult {
            race_id: Some(race_id),
            standings,
            reveal: Reveal {
                game: GameKind::ThreeBlindMice,
                seed: 7,
                salt: "00".into(),
            },
            logs: Vec::new(),
            open_boards: false,
        },
    }
}

/// How a loop that should still be running ended, for a test's panic.
fn how_it_ended<E: std::fmt::Display>(ending: Result<Ending, E>) -> String {
    match ending {
        Ok(Ending::Failed { error, .. }) => error.to_string(),
        Ok(_) => "left or closed".into(),
        Err(error) => error.to_string(),
    }
}
