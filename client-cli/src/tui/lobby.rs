//! `patience lobby`: the open public rooms still forming, on every node of
//! the server, and one key to take a seat in one.
//!
//! [`LobbyList`] is the screen's state, sans I/O: the last page the server
//! sent and what a key means on it (a digit picks the room of that number).
//! [`run`] is the terminal UI's loop: it asks the server for the lobby
//! again every `refresh_ms` the server names, draws the list, and returns
//! the code of the room picked; the caller then joins it as `patience join`
//! does. [`plain`] prints the list once, for `--plain`.

use std::time::Duration;

use anyhow::Context as _;
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, LobbyPage, LobbyRoom, Phase, ServerMessage};
use patience_shared::rating::show_hundredths;
use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use tokio::sync::mpsc;

use super::Screen;
use crate::net::{Connection, NetError};

/// The most rooms a key can pick: the digits 1 to 9.
pub const PICKABLE: usize = 9;

/// The lobby as the screen shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LobbyList {
    /// Only rooms of this game, if set.
    pub game: Option<GameKind>,
    /// The last page the server sent.
    pub page: Option<LobbyPage>,
}

/// What a key on the lobby means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Nothing: redraw.
    None,
    /// Take a seat in the room of this code.
    Join(String),
    /// Leave the lobby.
    Quit,
}

impl LobbyList {
    /// The rooms, in the server's order.
    pub fn rooms(&self) -> &[LobbyRoom] {
        self.page.as_ref().map_or(&[], |page| &page.rooms)
    }

    /// What `key` means: a digit picks that room, `q` (or Ctrl-C) leaves.
    pub fn key(&self, code: KeyCode, modifiers: KeyModifiers) -> Pick {
        match code {
            KeyCode::Char('q') | KeyCode::Esc => Pick::Quit,
            KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => Pick::Quit,
            KeyCode::Char(digit @ '1'..='9') => {
                let index = usize::from(digit as u8 - b'1');
                self.rooms()
                    .get(index)
                    .map_or(Pick::None, |room| Pick::Join(room.code.clone()))
            }
            _ => Pick::None,
        }
    }

    /// The list as lines of text, numbered for the keys.
    pub fn lines(&self) -> Vec<String> {
        let Some(page) = &self.page else {
            return vec!["asking the server for its open rooms...".to_string()];
        };
        if page.rooms.is_empty() {
            let game = self
                .game
                .map_or(String::new(), |game| format!(" of {}", game.title()));
            return vec![format!(
                "no open public room{game} right now: `patience play GAME` opens one"
            )];
        }
        page.rooms
            .iter()
            .enumerate()
            .map(|(index, room)| room_line(index, room))
            .collect()
    }
}

/// One room as a line: its number (a key for the first nine), code, game,
/// seats taken of seats, who is in (with each registered player's rating
/// at the game, `?` while provisional), and its series.
pub fn room_line(index: usize, room: &LobbyRoom) -> String {
    let number = if index < PICKABLE {
        format!("{}.", index + 1)
    } else {
        "  ".to_string()
    };
    let phase = match room.phase {
        Phase::Countdown => "  starting",
        Phase::Dealing => "  dealing",
        _ => "",
    };
    let mut line = format!(
        "{number} {}  {:<16} {}/{}  {}{phase}",
        room.code,
        room.game.title(),
        room.players.len(),
        room.max_players,
        seated(room),
    );
    if let Some(series) = &room.series {
        line.push_str(&format!("  (series: {})", series.line()));
    }
    line
}

/// The players of a room, each registered one followed by their rating:
/// "ada (3.4?), Bot 1".
fn seated(room: &LobbyRoom) -> String {
    room.players
        .iter()
        .enumerate()
        .map(
            |(index, name)| match room.ratings.get(index).copied().flatten() {
                Some(rating) => format!(
                    "{name} ({}{})",
                    show_hundredths(rating.rating),
                    if rating.provisional { "?" } else { "" }
                ),
                None => name.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join(", ")
}

/// Asks for the lobby and waits for its page.
async fn ask(connection: &mut Connection, game: Option<GameKind>) -> Result<LobbyPage, NetError> {
    connection.send(&ClientMessage::Lobby { game }).await?;
    loop {
        match connection.recv().await? {
            ServerMessage::LobbyPage { page } => return Ok(page),
            ServerMessage::Error { code, message } => {
                return Err(NetError::NotAdmitted { code, message });
            }
            _ => {}
        }
    }
}

/// `--plain`: the lobby once, as lines, then the command that joins.
///
/// Cancel-safe in effect: it only asks and prints; dropped early, nothing
/// changed.
pub async fn plain(connection: &mut Connection, game: Option<GameKind>) -> anyhow::Result<()> {
    let page = ask(connection, game).await?;
    let list = LobbyList {
        game,
        page: Some(page),
    };
    for line in list.lines() {
        println!("{line}");
    }
    if !list.rooms().is_empty() {
        println!("take a seat with: patience join CODE");
    }
    Ok(())
}

/// The lobby screen: draws the list on `screen`, asks for it again every
/// `refresh_ms`, and returns the code of the room a key picked (`None`:
/// the player left, or the terminal is gone).
///
/// Cancel-safe in effect: dropped early, nothing was joined.
pub async fn run(
    screen: &mut impl Screen,
    events: &mut mpsc::Receiver<Event>,
    connection: &mut Connection,
    game: Option<GameKind>,
) -> anyhow::Result<Option<String>> {
    screen.clear().context("clearing the screen")?;
    let mut list = LobbyList { game, page: None };
    loop {
        let page = ask(connection, game).await?;
        let refresh = Duration::from_millis(u64::from(page.refresh_ms.max(250)));
        list.page = Some(page);
        screen
            .draw_frame(&mut |frame| draw(frame, &list))
            .context("drawing")?;
        let wait = tokio::time::sleep(refresh);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = &mut wait => break,
                event = events.recv() => match event {
                    None => return Ok(None),
                    Some(Event::Key(key)) if key.kind != KeyEventKind::Release => {
                        match list.key(key.code, key.modifiers) {
                            Pick::Join(code) => return Ok(Some(code)),
                            Pick::Quit => return Ok(None),
                            Pick::None => {}
                        }
                    }
                    Some(_) => {}
                },
            }
        }
    }
}

fn draw(frame: &mut ratatui::Frame, list: &LobbyList) {
    let [body, footer] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(frame.area());
    let title = match list.game {
        Some(game) => format!(" Open rooms: {} ", game.title()),
        None => " Open rooms ".to_string(),
    };
    let lines: Vec<Line> = list.lines().into_iter().map(Line::from).collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(title)),
        body,
    );
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            "1-9 takes a seat in that room · q leaves · the list refreshes by itself",
            Style::default().add_modifier(Modifier::DIM),
        ))),
        footer,
    );
}

#[cfg(test)]
mod tests {
    use patience_shared::protocol::{SeatRating, SeriesScore};

    use super::*;

    fn room(code: &str, players: &[&str]) -> LobbyRoom {
        LobbyRoom {
            code: code.to_string(),
            game: GameKind::Indian,
            max_players: 4,
            players: players.iter().map(|name| name.to_string()).collect(),
            phase: Phase::Lobby,
            series: None,
            ratings: Vec::new(),
        }
    }

    fn list(rooms: Vec<LobbyRoom>) -> LobbyList {
        LobbyList {
            game: None,
            page: Some(LobbyPage {
                rooms,
                refresh_ms: 2_000,
            }),
        }
    }

    #[test]
    fn a_digit_picks_the_room_of_that_number_and_q_leaves() {
        let lobby = list(vec![room("K7PQ3M", &["ada"]), room("M3QT9A", &[])]);
        let key = |code| lobby.key(code, KeyModifiers::NONE);
        assert_eq!(key(KeyCode::Char('1')), Pick::Join("K7PQ3M".to_string()));
        assert_eq!(key(KeyCode::Char('2')), Pick::Join("M3QT9A".to_string()));
        assert_eq!(key(KeyCode::Char('3')), Pick::None);
        assert_eq!(key(KeyCode::Char('q')), Pick::Quit);
        assert_eq!(
            lobby.key(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Pick::Quit
        );
    }

    #[test]
    fn each_room_shows_its_seats_players_and_series() {
        let mut series = SeriesScore::new(3);
        series.record("ada");
        let mut started = room("M3QT9A", &["bob", "cy"]);
        started.phase = Phase::Countdown;
        started.series = Some(series);
        assert_eq!(
            list(vec![room("K7PQ3M", &["ada"]), started]).lines(),
            [
                "1. K7PQ3M  Indian           1/4  ada",
                "2. M3QT9A  Indian           2/4  bob, cy  starting  (series: ada 1 (best of 3))",
            ]
        );
        // Registered players show their rating; a guest or a bot none.
        let mut rated = room("Q2W3E4", &["ada", "Bot 1", "bea"]);
        rated.ratings = vec![
            Some(SeatRating {
                rating: 344,
                provisional: true,
            }),
            None,
            Some(SeatRating {
                rating: 1844,
                provisional: false,
            }),
        ];
        assert_eq!(
            list(vec![rated]).lines(),
            ["1. Q2W3E4  Indian           3/4  ada (3.4?), Bot 1, bea (18.4)"]
        );
        assert_eq!(
            list(Vec::new()).lines(),
            ["no open public room right now: `patience play GAME` opens one"]
        );
    }
}
