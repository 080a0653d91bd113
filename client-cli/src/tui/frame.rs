//! The frame every screen shares: a title line, the body, the message
//! lines and the [`key_bar`] of the [`Context`]'s keys, always at the
//! bottom; and the overlay and "too small" notice drawn over it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::input::Ui;

/// What leaving asks in practice.
pub(super) const PRACTICE_QUIT: &str = "Leave practice? (y/n)";

/// What leaving asks in a race (a watcher, a lobby or a finished race is
/// left at once).
pub(super) const RACE_QUIT: &str =
    "Resign? You stay to see the standings and the result; q then leaves. (y/n)";

/// The smallest terminal a board fits in: ten piles of four columns, and
/// the title, a few rows, the message and the key bar.
pub const MIN_WIDTH: u16 = 40;
/// See [`MIN_WIDTH`].
pub const MIN_HEIGHT: u16 = 12;

/// Which keys work on a screen: the key bar and the help follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Practice, offline: undo and hints.
    Practice,
    /// A room before the race; the owner may start it.
    Lobby {
        /// This client owns the room.
        owner: bool,
    },
    /// Racing.
    Race {
        /// The room allows taking moves back.
        undo: bool,
    },
    /// This client is out of a race that goes on (resigned, stuck, won).
    RaceOut,
    /// Watching a race.
    Watch {
        /// Tab cycles boards (open boards that do not fit side by side).
        boards: bool,
    },
    /// The race is over: its result.
    Results,
    /// The daily attempt, running.
    Daily,
    /// The daily attempt, over.
    DailyOver,
    /// A day's leaderboard, followed live.
    Leaderboard,
}

/// The key bar: every key that works here, the most used first; what does
/// not fit `width` is left out before `?` and `q`, which always show.
pub fn key_bar(context: Context, width: u16) -> Line<'static> {
    let board = [
        ("←→↑↓", "choose"),
        ("space", "send"),
        ("enter", "pick/drop"),
        ("click", "pick/drop"),
        ("right-click", "send"),
        (":", "type a move"),
    ];
    let mut items: Vec<(&str, &str)> = match context {
        Context::Practice => {
            let mut items = board.to_vec();
            items.insert(3, ("u", "undo"));
            items.insert(4, ("h", "hint"));
            items
        }
        Context::Race { undo } => {
            let mut items = board.to_vec();
            if undo {
                items.insert(3, ("u", "undo"));
            }
            items
        }
        Context::Daily => {
            let mut items = board.to_vec();
            items.push((":resign", "give up"));
            items
        }
        Context::Lobby { owner: true } => vec![("s", "start now")],
        Context::Results => vec![("tab", "boards")],
        Context::Leaderboard => vec![("↑↓", "scroll")],
        Context::Lobby { owner: false } | Context::RaceOut => vec![],
        Context::Watch { boards: true } => vec![("tab", "next board")],
        Context::Watch { boards: false } | Context::DailyOver => vec![],
    };
    let leave = match context {
        Context::Race { .. } => "resign",
        Context::Daily => "leave (stays open)",
        _ => "leave",
    };
    let last = [("?", "help"), ("q", leave)];
    // Each item is "key what", joined by " · ".
    let length = |items: &[(&str, &str)]| -> usize {
        items
            .iter()
            .map(|(key, what)| key.chars().count() + what.chars().count() + 1 + 3)
            .sum::<usize>()
            - 3
    };
    while !items.is_empty() && length(&items) + 3 + length(&last) > usize::from(width) {
        items.pop();
    }
    let mut spans = Vec::new();
    for (index, (key, what)) in items.iter().chain(last.iter()).enumerate() {
        if index > 0 {
            spans.push(Span::styled(" · ", Style::default().fg(Color::DarkGray)));
        }
        spans.push(Span::styled(
            (*key).to_string(),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::styled(
            format!(" {what}"),
            Style::default().fg(Color::DarkGray),
        ));
    }
    Line::from(spans)
}

/// `text` broken into lines of at most `width` characters at spaces (a
/// longer word is cut), at most `most` lines, the last ending in `…` when
/// more was left out.
pub(super) fn wrap_text(text: &str, width: usize, most: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = current.chars().count();
            let gap = usize::from(used > 0);
            if used + gap + word.len() <= width {
                if gap > 0 {
                    current.push(' ');
                }
                current.extend(word.drain(..));
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut current));
                continue;
            }
            current.extend(word.drain(..width));
            lines.push(std::mem::take(&mut current));
            if word.is_empty() {
                break;
            }
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    if lines.len() > most {
        lines.truncate(most);
        if let Some(last) = lines.last_mut() {
            let mut chars: Vec<char> = last.chars().collect();
            chars.truncate(width.saturating_sub(1));
            *last = chars.into_iter().collect::<String>() + "…";
        }
    }
    lines
}

/// The most lines a message takes above the key bar.
const MESSAGE_LINES: usize = 3;

/// The message lines for a screen `width` wide: the command line, the
/// question leaving asks (`quit`), or the last feedback, wrapped (an error
/// is never cut at the edge).
pub(super) fn message_lines(ui: &Ui, quit: &'static str, width: u16) -> Vec<Line<'static>> {
    if let Some(command) = &ui.command {
        return vec![Line::from(vec![
            Span::styled("move: ", Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(format!("{command}▏")),
        ])];
    }
    let (text, style) = if ui.confirm_quit {
        (
            quit.to_string(),
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        )
    } else if let Some((text, error)) = &ui.message {
        let style = if *error {
            Style::default().fg(Color::Red)
        } else {
            Style::default().fg(Color::Green)
        };
        (text.clone(), style)
    } else {
        return vec![Line::from("")];
    };
    wrap_text(&text, usize::from(width), MESSAGE_LINES)
        .into_iter()
        .map(|line| Line::from(Span::styled(line, style)))
        .collect()
}

/// A screen's frame: a title line, the body, the message lines and the
/// key bar at the bottom, always there.
struct Framed {
    /// The body.
    body: Rect,
    message: Rect,
    keys: Rect,
}

/// Lays out a screen of `area` whose message takes `message_height` lines.
fn frame_areas(area: Rect, message_height: u16) -> (Rect, Framed) {
    let [title, body, message, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(message_height),
        Constraint::Length(1),
    ])
    .areas(area);
    (
        title,
        Framed {
            body,
            message,
            keys,
        },
    )
}

/// Draws a screen's title, message and key bar; returns the body.
pub(super) fn framed_screen(
    frame: &mut Frame,
    heading: String,
    ui: &Ui,
    quit: &'static str,
    context: Context,
) -> Rect {
    let area = frame.area();
    let message = message_lines(ui, quit, area.width);
    let (title, framed) = frame_areas(area, message.len() as u16);
    let line = Line::from(Span::styled(
        heading,
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
    ));
    frame.render_widget(Paragraph::new(line), title);
    frame.render_widget(Paragraph::new(message), framed.message);
    frame.render_widget(Paragraph::new(key_bar(context, area.width)), framed.keys);
    framed.body
}

/// The body of a screen of `area` drawn by [`framed_screen`] for `ui`.
pub(super) fn body_area(area: Rect, ui: &Ui, quit: &'static str) -> Rect {
    let height = message_lines(ui, quit, area.width).len() as u16;
    frame_areas(area, height).1.body
}

/// Splits the screen into a title line, a body and a footer line, draws
/// `heading` as the title, and returns the body and the footer (the
/// replay's screen, which has its own keys in its panel).
pub(super) fn titled_screen(frame: &mut Frame, heading: String) -> [Rect; 2] {
    let [title, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let line = Line::from(Span::styled(
        heading,
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
    ));
    frame.render_widget(Paragraph::new(line), title);
    [body, foot]
}

/// Whether `area` is too small for a screen that needs `width` × `height`;
/// if so, says so on the whole screen.
pub(super) fn too_small(frame: &mut Frame, width: u16, height: u16) -> bool {
    let area = frame.area();
    if area.width >= width && area.height >= height {
        return false;
    }
    let text = format!(
        "The terminal is too small: {}×{}, this screen needs {width}×{height}. \
         Enlarge it, or press q to leave.",
        area.width, area.height
    );
    let lines: Vec<Line<'static>> =
        wrap_text(&text, usize::from(area.width), usize::from(area.height))
            .into_iter()
            .map(|line| Line::from(Span::styled(line, Style::default().fg(Color::Yellow))))
            .collect();
    frame.render_widget(Paragraph::new(lines), area);
    true
}

pub(super) fn overlay(frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>) {
    let width = area.width.min(78);
    let height = area.height.min(lines.len() as u16 + 2);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL)),
        popup,
    );
}
