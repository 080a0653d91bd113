//! The terminal UI's online loop on a test screen: a `TestBackend` that
//! publishes each frame it draws, keys sent as a person presses them, and
//! a wait on what the screen shows (never on time).

use std::time::Duration;

use patience_cli::config::Store;
use patience_cli::session::{Entry, Session};
use patience_cli::tui::Screen;
use patience_cli::tui::online::{self, Ending};
use patience_shared::game::GameKind;
use patience_shared::protocol::RoomOptions;
use ratatui::Terminal;
use ratatui::backend::{Backend as _, TestBackend};
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// The longest a wait for a frame may take: a safety net, never a way to
/// pass time.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// A `TestBackend` of a given size that publishes each frame it draws, as
/// text.
pub struct TestScreen {
    terminal: Terminal<TestBackend>,
    frames: watch::Sender<String>,
}

impl TestScreen {
    /// A screen of `width` × `height`, and the frames it will draw.
    pub fn new(width: u16, height: u16) -> (TestScreen, watch::Receiver<String>) {
        let (frames, receiver) = watch::channel(String::new());
        let terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
        (TestScreen { terminal, frames }, receiver)
    }
}

impl Screen for TestScreen {
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut ratatui::Frame)) -> std::io::Result<()> {
        let Ok(_) = self.terminal.draw(render);
        self.frames
            .send_replace(self.terminal.backend().to_string());
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

/// A session's online loop running on a test screen of `width` ×
/// `height`: the keys to press, the frames it draws, and its task.
pub struct OnScreen {
    pub keys: mpsc::Sender<Event>,
    pub frames: watch::Receiver<String>,
    pub running: JoinHandle<anyhow::Result<Ending>>,
    who: String,
}

impl OnScreen {
    /// Runs `session`'s online loop (`notes`: what starting it said).
    pub fn run(
        who: &str,
        session: Session,
        notes: Vec<String>,
        width: u16,
        height: u16,
    ) -> OnScreen {
        let (mut screen, frames) = TestScreen::new(width, height);
        let (keys, mut events) = mpsc::channel(64);
        let running =
            tokio::spawn(
                async move { online::run(&mut screen, &mut events, session, notes).await },
            );
        OnScreen {
            keys,
            frames,
            running,
            who: who.to_string(),
        }
    }

    /// Waits until a frame drawn passes `wanted`; returns that frame.
    pub async fn until(&mut self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        let frames = &mut self.frames;
        let waiting = async {
            loop {
                {
                    let frame = frames.borrow_and_update();
                    if wanted(&frame) {
                        return frame.clone();
                    }
                }
                if frames.changed().await.is_err() {
                    return String::new();
                }
            }
        };
        match tokio::time::timeout(PATIENCE, waiting).await {
            Ok(frame) if !frame.is_empty() => frame,
            _ => panic!(
                "{}'s screen never showed {what}; its last frame:\n{}",
                self.who,
                *self.frames.borrow()
            ),
        }
    }

    /// Presses `code`.
    pub async fn press(&self, code: KeyCode) {
        let key = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
        self.keys.send(key).await.expect("the screen takes keys");
    }

    /// Types `text` at the command line (`:`) and presses Enter.
    pub async fn command(&self, text: &str) {
        self.press(KeyCode::Char(':')).await;
        for character in text.chars() {
            self.press(KeyCode::Char(character)).await;
        }
        self.press(KeyCode::Enter).await;
    }

    /// Presses q once the race is over (nothing to confirm then) and
    /// waits for the loop to end; returns how it ended.
    pub async fn quit(self) -> Ending {
        self.press(KeyCode::Char('q')).await;
        tokio::time::timeout(PATIENCE, self.running)
            .await
            .expect("q leaves")
            .expect("the loop's task ends")
            .expect("the loop ends well")
    }
}

/// `name` opens a private Three Blind Mice room of two with `options`;
/// returns the session, what starting it said, and the room's code.
pub async fn open_private_room(
    url: &str,
    name: &str,
    options: RoomOptions,
) -> (Session, Vec<String>, String) {
    let (session, notes) = Session::start(
        url,
        name,
        Entry::Create {
            game: GameKind::ThreeBlindMice,
            players: 2,
            public: false,
            options,
            bots: Vec::new(),
        },
        Store::none(),
    )
    .await
    .expect("a room opens");
    let code = session
        .state
        .room
        .as_ref()
        .map(|room| room.code.clone())
        .expect("the room's code");
    (session, notes, code)
}
