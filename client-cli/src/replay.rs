//! `patience replay RACE_ID`: a finished race, or a finished daily attempt,
//! played back from the server's record.
//!
//! [`fetch`] asks for the race (signed in when an account is stored: until
//! a daily deal's day is closed, the server shows an attempt only to its own
//! player, and then only as that player saw it). A [`RaceRecord`] comes
//! with the seed: [`Replay::new`] deals it with `AnyGame::deal` and replays
//! every seat's move log through the rules engine (`undo` takes back the
//! move before it), keeping each step's board. One's own attempt of an open
//! day comes as an [`OwnAttempt`], the boards the player saw, face-down
//! cards hidden and no seed: [`Replay::own`] steps through those;
//! [`Cursor`] walks the steps (forward, back, play at a speed, another
//! seat), for the terminal UI (`tui::replay`); [`plain_text`] prints every
//! step, for scripts and tests.

use std::time::Duration;

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::protocol::{
    ClientMessage, ErrorCode, OwnAttempt, RaceRecord, ServerMessage, Standing, UNDO_TEXT,
};
use patience_shared::rules::{Board, Effect, Outcome, Rules, View, Zone, ZoneView};

use crate::account::{self, AccountError, Anonymous};
use crate::config::Store;
use crate::net::{Connection, message_name};
use crate::race::{effect_text, status_text, tenths_text};
use crate::text::view_text;

/// What the server gave for a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// A whole race, seed included: a room's race, or a closed day's attempt.
    Race(RaceRecord),
    /// The asker's own attempt of a day not yet closed, as they saw it.
    Own(OwnAttempt),
}

/// Signs in if an account is stored for `server`, then asks for the race.
/// Returns it and lines for standard error. A refusal the server types
/// (`replay_not_yet`) comes back as [`AccountError::Refused`] with words
/// that say what is refused and until when.
///
/// Cancel-safe: it changes nothing on the server; dropped early, its
/// connection is dropped.
pub async fn fetch(
    server: &str,
    store: &Store,
    race_id: u64,
) -> Result<(Fetched, Vec<String>), AccountError> {
    let mut warnings = Vec::new();
    let mut connection = match account::connect(server, store, Anonymous::Allowed).await {
        Ok((connection, _, _)) => connection,
        Err(error @ AccountError::UnknownToken { .. }) => {
            warnings.push(format!("warning: {error}; asking anonymously"));
            Connection::open(server, "player").await?
        }
        Err(error) => return Err(error),
    };
    connection.send(&ClientMessage::Replay { race_id }).await?;
    let answer = connection.recv().await?;
    connection.close().await;
    match answer {
        ServerMessage::ReplayData { race } => Ok((Fetched::Race(race), warnings)),
        ServerMessage::AttemptReplay { attempt } => Ok((Fetched::Own(attempt), warnings)),
        ServerMessage::Error {
            code: code @ ErrorCode::ReplayNotYet,
            message,
        } => Err(AccountError::Refused {
            code,
            message: format!(
                "{message} (until then you may replay only your own attempt, as you saw it)"
            ),
        }),
        ServerMessage::Error { code, message } => Err(AccountError::Refused { code, message }),
        other => Err(AccountError::Unexpected(message_name(&other))),
    }
}

/// A finished race's board as a replay shows it: the cards that lay face
/// down turned face up, for the deal is public once the race is over. The
/// stock stays a face-down count: its order shows as it is dealt.
pub fn revealed_view(board: &Board) -> View {
    View {
        game: board.game,
        zones: board
            .zones
            .iter()
            .map(|zone| {
                if zone.zone == Zone::Stock {
                    let face_down = usize::from(zone.face_down).min(zone.cards.len());
                    ZoneView {
                        zone: zone.zone,
                        hidden: zone.face_down,
                        face_up: zone.cards[face_down..].to_vec(),
                    }
                } else {
                    ZoneView {
                        zone: zone.zone,
                        hidden: 0,
                        face_up: zone.cards.clone(),
                    }
                }
            })
            .collect(),
    }
}

/// One move of a log, replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The move as logged (`undo` for a take-back).
    pub text: String,
    /// What it did beyond itself.
    pub effects: Vec<Effect>,
    /// The board after it, as the replay shows it (face-down cards face
    /// up, once the deal is public).
    pub board: View,
    /// The board after it as its player saw it, which the progress words
    /// count, as they did during the race.
    pub seen: View,
}

/// One seat's moves, replayed from the deal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Track {
    /// The seat.
    pub seat: u8,
    /// Who sat there.
    pub name: String,
    /// How its race ended, from the standings.
    pub standing: Option<Standing>,
    /// The deal, as the replay shows it.
    pub start: View,
    /// The deal as its player saw it.
    pub start_seen: View,
    /// Each move and the board after it.
    pub steps: Vec<Step>,
    /// The first move that did not replay, and why: the log stops there.
    pub broken: Option<String>,
}

impl Track {
    /// The board after `step` moves (0: the deal).
    pub fn board(&self, step: usize) -> &View {
        match step.checked_sub(1).and_then(|index| self.steps.get(index)) {
            Some(step) => &step.board,
            None => &self.start,
        }
    }

    /// The board after `step` moves as its player saw it.
    pub fn seen(&self, step: usize) -> &View {
        match step.checked_sub(1).and_then(|index| self.steps.get(index)) {
            Some(step) => &step.seen,
            None => &self.start_seen,
        }
    }
}

/// A finished race, every seat's log replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The heading: race, game, seed, and the day for a daily attempt.
    title: String,
    /// The race's standings.
    pub standings: Vec<Standing>,
    /// One track per move log, in seat order.
    pub tracks: Vec<Track>,
}

impl Replay {
    /// Deals the revealed seed and replays every log.
    pub fn new(record: RaceRecord) -> Replay {
        let reveal = &record.result.reveal;
        let mut logs: Vec<_> = record.result.logs.iter().collect();
        logs.sort_by_key(|log| log.seat);
        let tracks = logs
            .into_iter()
            .map(|log| {
                let standing = record
                    .result
                    .standings
                    .iter()
                    .find(|standing| standing.seat == log.seat)
                    .cloned();
                let mut position = AnyGame::deal(reveal.game, reveal.seed);
                let start = revealed_view(&position.board());
                let start_seen = position.view();
                let mut history: Vec<(AnyMove, Outcome)> = Vec::new();
                let mut steps = Vec::with_capacity(log.moves.len());
                let mut broken = None;
                for (index, text) in log.moves.iter().enumerate() {
                    let effects = if text == UNDO_TEXT {
                        match history.pop() {
                            Some((mv, outcome)) => {
                                position.undo(mv, &outcome);
                                Vec::new()
                            }
                            None => {
                                broken = Some(format!(
                                    "move {} ({text}) does not replay: nothing to take back",
                                    index + 1
                                ));
                                break;
                            }
                        }
                    } else {
                        let played = position
                            .parse_move(text)
                            .map_err(|error| error.reason.to_string())
                            .and_then(|mv| {
                                position
                                    .apply(mv)
                                    .map(|outcome| (mv, outcome))
                                    .map_err(|error| error.to_string())
                            });
                        match played {
                            Ok((mv, outcome)) => {
                                let effects = outcome.effects.to_vec();
                                history.push((mv, outcome));
                                effects
                            }
                            Err(reason) => {
                                broken = Some(format!(
                                    "move {} ({text}) does not replay: {reason}",
                                    index + 1
                                ));
                                break;
                            }
                        }
                    };
                    steps.push(Step {
                        text: text.clone(),
                        effects,
                        board: revealed_view(&position.board()),
                        seen: position.view(),
                    });
                }
                Track {
                    seat: log.seat,
                    name: standing
                        .as_ref()
                        .map_or_else(|| format!("seat {}", log.seat + 1), |s| s.name.clone()),
                    standing,
                    start,
                    start_seen,
                    steps,
                    broken,
                }
            })
            .collect();
        let mut title = format!(
            "Replay of race {} · {} · seed {}",
            record.race_id,
            reveal.game.title(),
            reveal.seed
        );
        if let Some(date) = &record.daily {
            title.push_str(&format!(" · daily deal of {date}"));
        }
        if record.result.open_boards {
            title.push_str(" · open boards (shown live)");
        }
        Replay {
            title,
            standings: record.result.standings,
            tracks,
        }
    }

    /// One's own attempt of a day not yet closed: the boards as the server
    /// sent them (the player's views), one track, no seed.
    pub fn own(attempt: OwnAttempt) -> Replay {
        let mut boards = attempt.boards.into_iter();
        let start = boards.next().unwrap_or(View {
            game: attempt.game,
            zones: Vec::new(),
        });
        let steps: Vec<Step> = attempt
            .moves
            .iter()
            .zip(boards)
            .map(|(text, board)| Step {
                text: text.clone(),
                // The views tell what was turned; the server sends no effects.
                effects: Vec::new(),
                seen: board.clone(),
                board,
            })
            .collect();
        let broken = (steps.len() < attempt.moves.len()).then(|| {
            format!(
                "the server sent {} boards for {} moves",
                steps.len() + 1,
                attempt.moves.len()
            )
        });
        let standing = Standing {
            rank: 1,
            seat: 0,
            name: "you".to_string(),
            status: attempt.status,
            progress: attempt.progress,
            bot: None,
        };
        Replay {
            title: format!(
                "Your attempt {} · {} · daily deal of {} · as you saw it (the seed comes once the day is over)",
                attempt.race_id,
                attempt.game.title(),
                attempt.date
            ),
            standings: vec![standing.clone()],
            tracks: vec![Track {
                seat: 0,
                name: "you".to_string(),
                standing: Some(standing),
                start_seen: start.clone(),
                start,
                steps,
                broken,
            }],
        }
    }

    /// What the server gave, ready to step through.
    pub fn of(fetched: Fetched) -> Replay {
        match fetched {
            Fetched::Race(record) => Replay::new(record),
            Fetched::Own(attempt) => Replay::own(attempt),
        }
    }

    /// The heading: race, game, seed, and the day for a daily attempt.
    pub fn title(&self) -> String {
        self.title.clone()
    }

    /// The track of `seat` (0-based), if it has one.
    pub fn track_of(&self, seat: u8) -> Option<usize> {
        self.tracks.iter().position(|track| track.seat == seat)
    }
}

/// A standing in words.
pub fn standing_text(standing: &Standing) -> String {
    format!(
        "{}. {} {} in {}, {} moves, {} cards home",
        standing.rank,
        standing.name,
        status_text(standing.status),
        tenths_text(standing.progress.elapsed_ms),
        standing.progress.moves,
        standing.progress.cards_home
    )
}

/// A step in words: `12. 7h>4; K♦ turned up on pile 8`.
pub fn step_text(number: usize, step: &Step) -> String {
    let mut line = if step.text == UNDO_TEXT {
        format!("{number}. undo (takes back the move before)")
    } else {
        format!("{number}. {}", step.text)
    };
    for effect in &step.effects {
        line.push_str("; ");
        line.push_str(&effect_text(effect));
    }
    line
}

/// The whole replay as text: for each seat (or only `seat`, 0-based), the
/// deal and every step with the board after it; then the standings.
pub fn plain_text(replay: &Replay, seat: Option<u8>) -> String {
    let mut out = vec![replay.title()];
    for track in replay
        .tracks
        .iter()
        .filter(|track| seat.is_none_or(|seat| track.seat == seat))
    {
        out.push(String::new());
        out.push(format!(
            "== seat {}: {} ({} moves) ==",
            track.seat + 1,
            track.name,
            track.steps.len()
        ));
        out.push("deal:".into());
        out.push(view_text(&track.start));
        for (index, step) in track.steps.iter().enumerate() {
            out.push(String::new());
            out.push(step_text(index + 1, step));
            out.push(view_text(&step.board));
        }
        if let Some(broken) = &track.broken {
            out.push(String::new());
            out.push(format!("the log stops: {broken}"));
        }
    }
    out.push(String::new());
    out.push("Standings:".into());
    for standing in &replay.standings {
        out.push(standing_text(standing));
    }
    out.join("\n")
}

/// Where a person is in a replay, and whether it plays by itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Cursor {
    /// Which track is shown.
    pub track: usize,
    /// Moves played on it (0: the deal).
    pub step: usize,
    /// Playing at `speed` moves per second.
    pub playing: bool,
    /// Moves per second when playing.
    pub speed: f64,
}

/// What a key asks of a replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayKey {
    /// One move forward.
    Forward,
    /// One move back.
    Back,
    /// To the deal.
    First,
    /// To the last move.
    Last,
    /// Play or pause.
    PlayPause,
    /// The next seat.
    NextSeat,
    /// Seat N (1-based, as shown).
    Seat(u8),
    /// Faster.
    Faster,
    /// Slower.
    Slower,
}

impl Cursor {
    /// At the deal of `track`, paused.
    pub fn new(track: usize, speed: f64) -> Cursor {
        Cursor {
            track,
            step: 0,
            playing: false,
            speed: clamp_speed(speed),
        }
    }

    /// How long one move shows when playing.
    pub fn interval(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.speed)
    }

    /// Applies a key to a replay's cursor.
    pub fn key(&mut self, replay: &Replay, key: ReplayKey) {
        let last = replay
            .tracks
            .get(self.track)
            .map_or(0, |track| track.steps.len());
        match key {
            ReplayKey::Forward => {
                self.step = (self.step + 1).min(last);
                self.playing = false;
            }
            ReplayKey::Back => {
                self.step = self.step.saturating_sub(1);
                self.playing = false;
            }
            ReplayKey::First => {
                self.step = 0;
                self.playing = false;
            }
            ReplayKey::Last => {
                self.step = last;
                self.playing = false;
            }
            ReplayKey::PlayPause => {
                if self.step >= last {
                    // Playing from the end starts over.
                    self.step = 0;
                }
                self.playing = !self.playing && last > 0;
            }
            ReplayKey::NextSeat => {
                self.track = (self.track + 1) % replay.tracks.len().max(1);
                self.step = self.step.min(self.last(replay));
            }
            ReplayKey::Seat(number) => {
                if let Some(track) = number.checked_sub(1).and_then(|seat| replay.track_of(seat)) {
                    self.track = track;
                    self.step = self.step.min(self.last(replay));
                }
            }
            ReplayKey::Faster => self.speed = clamp_speed(self.speed * 2.0),
            ReplayKey::Slower => self.speed = clamp_speed(self.speed / 2.0),
        }
    }

    /// A tick of the playing clock: one move on, pausing at the end.
    pub fn tick(&mut self, replay: &Replay) {
        if !self.playing {
            return;
        }
        let last = self.last(replay);
        self.step = (self.step + 1).min(last);
        if self.step >= last {
            self.playing = false;
        }
    }

    fn last(&self, replay: &Replay) -> usize {
        replay
            .tracks
            .get(self.track)
            .map_or(0, |track| track.steps.len())
    }
}

/// Speeds from one move in ten seconds to a hundred moves a second.
fn clamp_speed(speed: f64) -> f64 {
    if speed.is_finite() {
        speed.clamp(0.1, 100.0)
    } else {
        1.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use patience_shared::game::GameKind;
    use patience_shared::protocol::{MoveLog, PlayerStatus, Progress, RaceResult, Reveal};

    use super::*;

    /// A race of Three Blind Mice seed 1: ada plays two moves, takes the
    /// second back and plays it again; bob's log breaks at its second move.
    pub(crate) fn record() -> (RaceRecord, Vec<String>) {
        let game = GameKind::ThreeBlindMice;
        let mut position = AnyGame::deal(game, 1);
        let mut texts = Vec::new();
        for _ in 0..2 {
            let mut legal = Vec::new();
            position.legal_moves(&mut legal);
            texts.push(position.format_move(legal[0]));
            position.apply(legal[0]).expect("a legal move");
        }
        let standing = |rank, seat, name: &str, status| Standing {
            rank,
            seat,
            name: name.into(),
            status,
            progress: Progress {
                moves: 4,
                cards_home: 0,
                elapsed_ms: 61_000,
                ..Progress::default()
            },
            bot: None,
        };
        let record = RaceRecord {
            race_id: 731,
            daily: Some("2026-12-01".into()),
            ended_at_ms: 1_764_547_200_000,
            result: RaceResult {
                race_id: Some(731),
                standings: vec![
                    standing(1, 0, "ada", PlayerStatus::Resigned),
                    standing(2, 1, "bob", PlayerStatus::Left),
                ],
                reveal: Reveal {
                    game,
                    seed: 1,
                    salt: "9f86d081884c7d659a2feaa0c55ad015".into(),
                },
                logs: vec![
                    MoveLog {
                        seat: 1,
                        moves: vec![texts[0].clone(), "1>1".into(), texts[1].clone()],
                    },
                    MoveLog {
                        seat: 0,
                        moves: vec![
                            texts[0].clone(),
                            texts[1].clone(),
                            UNDO_TEXT.into(),
                            texts[1].clone(),
                        ],
                    },
                ],
                open_boards: false,
            },
        };
        (record, texts)
    }

    #[test]
    fn every_log_replays_from_the_deal_with_take_backs_and_stops_where_it_breaks() {
        let (record, texts) = record();
        let replay = Replay::new(record);
        let deal = AnyGame::deal(GameKind::ThreeBlindMice, 1);
        assert_eq!(replay.tracks.len(), 2);
        let ada = &replay.tracks[0];
        assert_eq!((ada.seat, ada.name.as_str()), (0, "ada"));
        assert_eq!(ada.steps.len(), 4);
        assert_eq!(ada.broken, None);
        // The deal is public: the cards that lay face down show face up.
        assert_eq!(ada.board(0), &revealed_view(&deal.board()));
        assert_ne!(ada.board(0), &deal.view(), "the deal hid cards");
        assert!(
            ada.board(0).zones.iter().all(|zone| zone.hidden == 0),
            "no face-down card in a finished race's replay"
        );
        let every_card: usize = (0..=4)
            .map(|step| {
                ada.board(step)
                    .zones
                    .iter()
                    .map(|zone| zone.face_up.len())
                    .sum::<usize>()
            })
            .min()
            .unwrap_or_default();
        assert_eq!(every_card, 52, "every card of the deck shows at every step");
        // The take-back returns to the board after the first move.
        assert_eq!(ada.board(3), ada.board(1));
        assert_eq!(ada.board(4), ada.board(2));
        assert_ne!(ada.board(1), ada.board(2));
        assert_eq!(ada.steps[0].text, texts[0]);
        let bob = &replay.tracks[1];
        assert_eq!(bob.steps.len(), 1);
        assert!(
            bob.broken
                .as_deref()
                .is_some_and(|why| why.starts_with("move 2 (1>1) does not replay: ")),
            "{:?}",
            bob.broken
        );
        assert_eq!(replay.track_of(1), Some(1));
        assert_eq!(
            replay.title(),
            "Replay of race 731 · Three Blind Mice · seed 1 · daily deal of 2026-12-01"
        );
        let (mut open, _) = self::record();
        open.result.open_boards = true;
        assert!(
            Replay::new(open)
                .title()
                .ends_with(" · open boards (shown live)"),
            "a race with open boards says so on its replay"
        );
    }

    #[test]
    fn plain_text_shows_each_step_and_its_board_then_the_standings() {
        let (record, texts) = record();
        let replay = Replay::new(record);
        let text = plain_text(&replay, Some(0));
        assert!(text.starts_with("Replay of race 731"), "{text}");
        assert!(text.contains("== seat 1: ada (4 moves) =="), "{text}");
        assert!(!text.contains("seat 2: bob"), "only the seat asked for");
        assert!(text.contains(&format!("\n1. {}", texts[0])), "{text}");
        assert!(
            text.contains("\n3. undo (takes back the move before)"),
            "{text}"
        );
        assert_eq!(text.matches("Piles").count(), 5, "the deal and 4 boards");
        assert!(text.ends_with(
            "Standings:\n1. ada resigned in 1:01.0, 4 moves, 0 cards home\n2. bob left in 1:01.0, 4 moves, 0 cards home"
        ));
        let both = plain_text(&replay, None);
        assert!(both.contains("== seat 2: bob (1 moves) =="));
        assert!(both.contains("the log stops: move 2 (1>1) does not replay"));
    }

    #[test]
    fn the_cursor_steps_plays_and_changes_seats() {
        let (record, _) = record();
        let replay = Replay::new(record);
        let mut cursor = Cursor::new(0, 4.0);
        assert_eq!(cursor.interval(), Duration::from_millis(250));
        let mut check = |key: Option<ReplayKey>, step: usize, track: usize, playing: bool| {
            match key {
                Some(key) => cursor.key(&replay, key),
                None => cursor.tick(&replay),
            }
            assert_eq!(
                (cursor.step, cursor.track, cursor.playing),
                (step, track, playing),
                "after {key:?}"
            );
        };
        check(Some(ReplayKey::Back), 0, 0, false);
        check(Some(ReplayKey::Forward), 1, 0, false);
        check(None, 1, 0, false); // paused: ticks do nothing
        check(Some(ReplayKey::PlayPause), 1, 0, true);
        check(None, 2, 0, true);
        check(None, 3, 0, true);
        check(None, 4, 0, false); // the end pauses
        check(Some(ReplayKey::Forward), 4, 0, false);
        check(Some(ReplayKey::PlayPause), 0, 0, true); // from the end: again
        check(Some(ReplayKey::Last), 4, 0, false);
        check(Some(ReplayKey::NextSeat), 1, 1, false); // bob has one step
        check(Some(ReplayKey::Seat(1)), 1, 0, false);
        check(Some(ReplayKey::Seat(9)), 1, 0, false); // no such seat
        check(Some(ReplayKey::First), 0, 0, false);
        cursor.key(&replay, ReplayKey::Faster);
        assert_eq!(cursor.speed, 8.0);
        for _ in 0..20 {
            cursor.key(&replay, ReplayKey::Slower);
        }
        assert_eq!(cursor.speed, 0.1);
        assert_eq!(Cursor::new(0, f64::NAN).speed, 1.0);
    }

    /// Ada's own attempt of an open day: the deal as she saw it and the
    /// board after each of two moves, as the server sends it.
    fn own_attempt() -> OwnAttempt {
        let (record, texts) = record();
        let mut position = AnyGame::deal(GameKind::ThreeBlindMice, 1);
        let mut boards = vec![position.view()];
        for text in &texts {
            if let Ok(mv) = position.parse_move(text) {
                let _ = position.apply(mv);
            }
            boards.push(position.view());
        }
        OwnAttempt {
            game: GameKind::ThreeBlindMice,
            date: "2026-12-01".into(),
            race_id: record.race_id,
            status: PlayerStatus::Resigned,
            progress: Progress {
                moves: 2,
                cards_home: 0,
                elapsed_ms: 9_000,
                ..Progress::default()
            },
            moves: texts,
            boards,
        }
    }

    #[test]
    fn ones_own_attempt_steps_through_the_boards_the_server_sent() {
        let attempt = own_attempt();
        let replay = Replay::own(attempt.clone());
        assert_eq!(replay.tracks.len(), 1);
        let track = &replay.tracks[0];
        assert_eq!(track.broken, None);
        assert_eq!(track.steps.len(), 2);
        for (step, board) in attempt.boards.iter().enumerate() {
            assert_eq!(track.board(step), board);
        }
        assert!(
            replay.title().contains("as you saw it"),
            "{}",
            replay.title()
        );
        assert!(!replay.title().contains("seed 1"), "{}", replay.title());
        let text = plain_text(&replay, None);
        assert!(text.contains("1. you resigned"), "{text}");
        // Fewer boards than moves: the track stops where the boards do.
        let mut short = attempt;
        short.boards.truncate(2);
        let track = &Replay::own(short).tracks[0];
        assert_eq!(track.steps.len(), 1);
        assert!(track.broken.is_some());
    }

    #[tokio::test]
    async fn fetch_takes_ones_own_attempt_and_says_what_is_refused() {
        let (url, _) = crate::fake_server::start(|message| match message {
            ClientMessage::Replay { race_id: 9 } => vec![ServerMessage::AttemptReplay {
                attempt: own_attempt(),
            }],
            ClientMessage::Replay { .. } => vec![ServerMessage::Error {
                code: ErrorCode::ReplayNotYet,
                message: "that is another player's daily attempt".into(),
            }],
            _ => Vec::new(),
        })
        .await;
        let (fetched, _) = fetch(&url, &Store::none(), 9).await.expect("own attempt");
        assert_eq!(fetched, Fetched::Own(own_attempt()));
        match fetch(&url, &Store::none(), 10).await {
            Err(AccountError::Refused { code, message }) => {
                assert_eq!(code, ErrorCode::ReplayNotYet);
                assert!(message.contains("only your own attempt"), "{message}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn fetch_asks_for_the_race_and_types_a_refusal() {
        let (url, _) = crate::fake_server::start(|message| match message {
            ClientMessage::Replay { race_id: 731 } => {
                vec![ServerMessage::ReplayData { race: record().0 }]
            }
            ClientMessage::Replay { .. } => vec![ServerMessage::Error {
                code: patience_shared::protocol::ErrorCode::RaceNotFound,
                message: "no race has that id".into(),
            }],
            _ => Vec::new(),
        })
        .await;
        let (fetched, warnings) = fetch(&url, &Store::none(), 731).await.expect("the race");
        assert_eq!(fetched, Fetched::Race(record().0));
        assert!(warnings.is_empty());
        let missing = fetch(&url, &Store::none(), 5).await;
        assert!(matches!(
            missing,
            Err(AccountError::Refused {
                code: patience_shared::protocol::ErrorCode::RaceNotFound,
                ..
            })
        ));
    }
}
