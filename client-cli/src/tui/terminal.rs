//! The terminal's lifecycle: what a loop draws on ([`Screen`]), frames
//! without colors under `NO_COLOR` ([`Painter`]), the real terminal taken
//! and given back (`TerminalGuard`, also on drop, on Ctrl-Z and on
//! panic), and its events read on a thread of their own.

use ratatui::Frame;
use ratatui::crossterm::event::{self, Event};
use ratatui::layout::Rect;
use ratatui::style::Color;
use tokio::sync::mpsc;

/// Whether `NO_COLOR` asks for no colors (set and not empty, as
/// <https://no-color.org> says).
pub(super) fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty())
}

/// Drops every color of a drawn frame and keeps its modifiers, so the
/// cursor (reversed) and the picked card (bold) stay visible without color.
pub(super) fn without_colors(buffer: &mut ratatui::buffer::Buffer) {
    for cell in &mut buffer.content {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}

/// What an event loop draws on: the real terminal (`TerminalGuard`), or a
/// test backend.
pub trait Screen {
    /// Draws one frame with `render`.
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()>;
    /// The terminal's size.
    fn area(&self) -> Rect;
    /// Ctrl-Z: hands the terminal back to the shell, stops this process as
    /// the shell's own Ctrl-Z would, and takes the terminal again when the
    /// shell resumes it (`fg`).
    fn suspend(&mut self) -> std::io::Result<()>;
    /// Wipes the screen: a client started again after one that died
    /// without restoring the terminal must not draw over its leftovers.
    fn clear(&mut self) -> std::io::Result<()>;
}

/// A ratatui terminal whose frames lose their colors when asked (the
/// `NO_COLOR` convention), keeping their modifiers.
pub struct Painter<B: ratatui::backend::Backend> {
    /// The terminal.
    pub terminal: ratatui::Terminal<B>,
    /// Draw without colors.
    pub colorless: bool,
}

impl<B: ratatui::backend::Backend> Painter<B> {
    /// Draws a frame, without its colors if [`Painter::colorless`].
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> std::io::Result<()> {
        let colorless = self.colorless;
        self.terminal
            .draw(|frame| {
                render(frame);
                if colorless {
                    without_colors(frame.buffer_mut());
                }
            })
            .map(|_| ())
            .map_err(|error| std::io::Error::other(error.to_string()))
    }

    /// Wipes the screen, so that the next frame is drawn whole.
    ///
    /// Not `Terminal::clear`: ratatui 0.30 first asks the terminal where
    /// its cursor is, and while a thread of ours waits for keys
    /// (`terminal_events`) crossterm cannot read the answer, so the
    /// question fails after 2 s (the online client then ended with "the
    /// cursor position could not be read") or waits for the next key with
    /// the screen blank. Resizing a full-screen terminal to its own size
    /// wipes the screen and the frame last drawn, and asks nothing.
    pub fn clear(&mut self) -> std::io::Result<()> {
        let size = self
            .terminal
            .size()
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        self.terminal
            .resize(Rect::new(0, 0, size.width, size.height))
            .map_err(|error| std::io::Error::other(error.to_string()))
    }

    /// The terminal's size (empty if it cannot be read).
    pub fn area(&self) -> Rect {
        self.terminal
            .size()
            .map(|size| Rect::new(0, 0, size.width, size.height))
            .unwrap_or_default()
    }
}

/// The crossterm terminal, restored on drop (and on panic, by ratatui).
pub(super) struct TerminalGuard(Painter<ratatui::backend::CrosstermBackend<std::io::Stdout>>);

/// Takes the terminal: raw mode, the alternate screen, mouse clicks.
fn enter_terminal() -> std::io::Result<()> {
    use ratatui::crossterm::{event::EnableMouseCapture, execute, terminal};
    terminal::enable_raw_mode()?;
    execute!(std::io::stdout(), terminal::EnterAlternateScreen)?;
    // Mouse clicks where the terminal supports them; keys work regardless.
    let _ = execute!(std::io::stdout(), EnableMouseCapture);
    Ok(())
}

/// Gives the terminal back as it was.
fn leave_terminal() {
    let _ = ratatui::crossterm::execute!(
        std::io::stdout(),
        ratatui::crossterm::event::DisableMouseCapture
    );
    ratatui::restore();
}

impl TerminalGuard {
    pub(super) fn new() -> TerminalGuard {
        // Left to crossterm, NO_COLOR turns each color change into an empty
        // `ESC[;m`, which resets the reverse video of the cursor. The frames
        // carry no colors instead (see `Painter::draw`) and crossterm
        // writes its color resets as usual.
        ratatui::crossterm::style::Colored::set_ansi_color_disabled(false);
        let terminal = ratatui::init();
        let _ = ratatui::crossterm::execute!(
            std::io::stdout(),
            ratatui::crossterm::event::EnableMouseCapture
        );
        TerminalGuard(Painter {
            terminal,
            colorless: no_color(),
        })
    }

    /// Draws a frame, without its colors under `NO_COLOR`.
    fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> std::io::Result<()> {
        self.0.draw(render)
    }

    fn area(&self) -> Rect {
        self.0.area()
    }

    /// See [`Screen::suspend`].
    fn suspend(&mut self) -> std::io::Result<()> {
        leave_terminal();
        stop_this_process()?;
        enter_terminal()?;
        // The shell drew over the screen meanwhile: draw it all again.
        self.0.clear()
    }
}

impl Screen for TerminalGuard {
    fn draw_frame(&mut self, render: &mut dyn FnMut(&mut Frame)) -> std::io::Result<()> {
        self.draw(render)
    }

    fn area(&self) -> Rect {
        TerminalGuard::area(self)
    }

    fn suspend(&mut self) -> std::io::Result<()> {
        TerminalGuard::suspend(self)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.0.clear()
    }
}

/// Stops this process with SIGTSTP, as the terminal's Ctrl-Z does outside
/// raw mode; returns once the shell resumes it. `kill` does the sending,
/// so that no signal library is needed.
fn stop_this_process() -> std::io::Result<()> {
    if cfg!(unix) {
        std::process::Command::new("kill")
            .arg("-TSTP")
            .arg(std::process::id().to_string())
            .status()?;
    }
    Ok(())
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        leave_terminal();
    }
}

/// Keyboard and mouse events, read on a thread of their own and handed
/// over through a bounded channel.
pub(super) fn terminal_events() -> mpsc::Receiver<Event> {
    let (sender, receiver) = mpsc::channel(64);
    std::thread::spawn(move || {
        while let Ok(event) = event::read() {
            if sender.blocking_send(event).is_err() {
                break;
            }
        }
    });
    receiver
}
