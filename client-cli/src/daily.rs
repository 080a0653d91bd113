//! `patience daily GAME`: the player's one attempt at the day's deal.
//!
//! [`connect`] signs in (registering on the first daily play when no
//! account is stored). Then the player is shown the terms and starts when
//! ready ([`wait_for_start`] line by line, `tui::daily` on a screen of its
//! own): nothing of the deal has come yet, and the clock has not started.
//! [`start`] sends `daily_play`, which starts the clock, and reads the
//! answer: a new or resumed attempt, or the news that today's deal was
//! played already ([`open`] is the two at once). The attempt itself is
//! [`DailyState`], a sans-I/O state machine fed with the server's messages
//! and the instants they arrived, drawn by the terminal UI (`tui::daily`)
//! or played line by line by [`plain`].
//!
//! The clock is the server's: it starts when the server opens the attempt,
//! which is when the player starts; the attempt's elapsed time comes in
//! `daily_started` and the final time in `daily_finished`; between the two
//! the client only counts on from the server's figure.
//!
//! The terminal UI also follows the day's standings on the attempt's own
//! connection ([`DailyState::follow_request`]): the page and its updates
//! may come between any two answers to moves, and the state folds them into
//! [`DailyState::standings`] wherever they fall.
//!
//! A dropped connection ends the client; the attempt stays open on the
//! server with its clock running, and `patience daily GAME` again takes it
//! back where it stopped (`resumed`). When today's deal is played already,
//! the command says so, shows the player's row of the leaderboard and exits
//! successfully: nothing went wrong.

use std::io::Write;
use std::time::{Duration, Instant};

use patience_shared::game::GameKind;
use patience_shared::position::{guess, move_shapes};
use patience_shared::protocol::{
    ClientMessage, DailyAttempt, DailyResult, ErrorCode, LeaderboardRow, PlayerStatus,
    ServerMessage,
};
use patience_shared::rules::{Effect, Rules as _, View};
use tokio::sync::mpsc;

use crate::account::{self, AccountError, Anonymous};
use crate::config::Store;
use crate::leaderboard::unranked_text;
use crate::live::LiveBoard;
use crate::net::{Connection, NetError, message_name};
use crate::race::{played_text, status_text, tenths_text};
use crate::text::view_text;

/// Why a daily attempt could not be opened or went wrong.
#[derive(Debug, thiserror::Error)]
pub enum DailyError {
    /// Signing in or registering failed.
    #[error(transparent)]
    Account(#[from] AccountError),
    /// The server refused the attempt.
    #[error("the server refused the daily deal: {message}")]
    Refused {
        /// Its code.
        code: ErrorCode,
        /// Its words.
        message: String,
    },
    /// The server answered with something else.
    #[error("the server answered daily_play with {0}")]
    Unexpected(&'static str),
    /// The connection failed.
    #[error(
        "{0}; the attempt stays open on the server with its clock running: run `patience daily` again to take it back"
    )]
    Net(#[from] NetError),
    /// The server closed the connection (stopping, or the attempt was
    /// taken over by another connection).
    #[error(
        "the server closed the connection ({0}); the attempt stays open with its clock running: run `patience daily` again to take it back"
    )]
    Closed(String),
    /// Another connection took the attempt over.
    #[error("another client took the attempt over ({0}); this one stops here")]
    Replaced(String),
}

/// An attempt opened, new or resumed: play it on this connection.
pub struct Attempt {
    /// The connection, signed in.
    pub connection: Connection,
    /// The attempt so far.
    pub state: DailyState,
    /// Lines to show first (registration, start or resume).
    pub notes: Vec<String>,
}

/// What `daily_play` opened.
pub enum Opened {
    /// The attempt: play it.
    Attempt(Box<Attempt>),
    /// Today's deal of this game is played already.
    AlreadyPlayed {
        /// Lines to show: the server's words and the player's row.
        notes: Vec<String>,
    },
}

/// Signs in to `server` (registering as `name` if no account is stored) and
/// opens the day's attempt at `game` at once: [`connect`], then [`start`].
///
/// Cancel-safe in effect: dropped after `daily_play` went out, the attempt
/// may be open on the server with its clock running, and running
/// `patience daily` again takes it back.
pub async fn open(
    server: &str,
    store: &Store,
    game: GameKind,
    name: Option<String>,
    announce: impl FnMut(&str),
) -> Result<Opened, DailyError> {
    let connection = connect(server, store, name, announce).await?;
    start(connection, game).await
}

/// Signs in to `server`, registering as `name` if no account is stored. A
/// registration's lines go to `announce` at once, whatever happens next:
/// they carry the warning about the new account's token. Nothing of the
/// daily deal is asked yet.
///
/// Cancel-safe in effect: dropped early, the connection is dropped and
/// nothing of the daily has started (a registration may have been made,
/// and its lines announced).
pub async fn connect(
    server: &str,
    store: &Store,
    name: Option<String>,
    mut announce: impl FnMut(&str),
) -> Result<Connection, DailyError> {
    let (connection, _, registered) =
        account::connect(server, store, Anonymous::Register(name)).await?;
    for line in &registered {
        announce(line);
    }
    Ok(connection)
}

/// What the player is told before the attempt starts: the terms, and that
/// the clock starts when they do.
pub fn start_lines(game: GameKind) -> Vec<String> {
    vec![
        format!("Today's {} deal: one attempt, no undo.", game.title()),
        "The clock starts when you start, and runs until the attempt ends, even if you leave; \
         the board shows once it runs."
            .to_string(),
        "An attempt you began already is taken back where it stopped, its clock still running."
            .to_string(),
    ]
}

/// What starts the attempt in the line mode, and what leaves without
/// starting it.
pub const START_PROMPT: &str = "Press Enter to start the clock, or type q to leave.";

/// The line mode's wait for the player to start: the terms, then a line
/// from `input`: an empty one (or `start`) starts, `q` (or the end of
/// input) leaves without opening the attempt. The connection is read
/// meanwhile, so that it answers the server's pings however long the
/// player takes. Whether to start.
///
/// Cancel-safe: it sends nothing, so dropped early nothing has started;
/// a line it read is gone from `input`.
pub async fn wait_for_start(
    connection: &mut Connection,
    game: GameKind,
    input: &mut mpsc::Receiver<String>,
    mut output: impl Write,
) -> anyhow::Result<bool> {
    for line in start_lines(game) {
        writeln!(output, "{line}")?;
    }
    writeln!(output, "{START_PROMPT}")?;
    output.flush()?;
    loop {
        tokio::select! {
            line = input.recv() => match line.as_deref().map(str::trim) {
                None | Some("q" | "quit") => {
                    writeln!(output, "Not started: the clock has not run.")?;
                    output.flush()?;
                    return Ok(false);
                }
                Some("" | "start") => return Ok(true),
                Some(_) => {
                    writeln!(output, "{START_PROMPT}")?;
                    output.flush()?;
                }
            },
            received = connection.recv() => {
                if let Err(error) = received {
                    return Err(DailyError::Net(error).into());
                }
            }
        }
    }
}

/// Sends `daily_play` on a signed-in `connection`, which starts the
/// attempt's clock (or takes an attempt begun already back), and reads the
/// answer.
///
/// Cancel-safe in effect: dropped after `daily_play` went out, the attempt
/// may be open on the server with its clock running, and running
/// `patience daily` again takes it back.
pub async fn start(mut connection: Connection, game: GameKind) -> Result<Opened, DailyError> {
    let mut notes = Vec::new();
    connection.send(&ClientMessage::DailyPlay { game }).await?;
    let message = connection.recv().await?;
    match message {
        ServerMessage::DailyStarted { .. } => {
            let mut state = DailyState::default();
            notes.extend(state.apply(message, Instant::now()));
            Ok(Opened::Attempt(Box::new(Attempt {
                connection,
                state,
                notes,
            })))
        }
        ServerMessage::Error {
            code: ErrorCode::DailyAlreadyPlayed,
            ..
        } => {
            notes.push(format!(
                "You have played today's {} deal already: one attempt per day.",
                game.title()
            ));
            notes.extend(own_row_lines(&mut connection, game).await);
            connection.close().await;
            Ok(Opened::AlreadyPlayed { notes })
        }
        ServerMessage::Error { code, message } => Err(DailyError::Refused { code, message }),
        // The answer to `daily_play` comes first; anything else is a surprise.
        other => Err(DailyError::Unexpected(message_name(&other))),
    }
}

/// The player's row of today's leaderboard, as lines, if the server gives it.
async fn own_row_lines(connection: &mut Connection, game: GameKind) -> Vec<String> {
    let asked = connection
        .send(&ClientMessage::Leaderboard {
            game,
            date: None,
            limit: Some(1),
        })
        .await;
    if asked.is_err() {
        return Vec::new();
    }
    match connection.recv().await {
        Ok(ServerMessage::LeaderboardPage { page }) => match page.own {
            Some(row) => vec![own_row_text(&row, page.finishers)],
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn own_row_text(row: &LeaderboardRow, finishers: u32) -> String {
    let standing = match row.unranked {
        None => format!("rank {} of {} so far", row.rank, finishers),
        Some(unranked) => format!(
            "unranked ({}), it would rank {} of {} so far",
            unranked_text(unranked),
            row.rank,
            finishers
        ),
    };
    format!(
        "Your result: {} in {}, {} moves, {} cards home; {standing}; `patience replay {}` shows it again.",
        status_text(row.status),
        tenths_text(row.elapsed_ms),
        row.moves,
        row.cards_home,
        row.race_id
    )
}

/// The player's daily attempt as the client knows it.
#[derive(Clone, Debug, Default)]
pub struct DailyState {
    /// The attempt as `daily_started` gave it, kept up to date by each
    /// accepted move (board, moves, progress).
    pub attempt: Option<DailyAttempt>,
    /// When the attempt began by this client's clock (from the server's
    /// elapsed time at `daily_started`), and its time limit.
    pub clock: Option<(Instant, Duration)>,
    /// The end, once the server has committed it.
    pub result: Option<DailyResult>,
    /// The last refusal, in words, until the next accepted move.
    pub last_rejection: Option<String>,
    /// What the last accepted move did.
    pub last_effects: Vec<Effect>,
    /// No legal move is left.
    pub stuck: bool,
    /// The server closed the attempt's connection, and why.
    pub closed: Option<String>,
    /// It closed it because another connection took the attempt.
    pub replaced: bool,
    /// The day's standings, followed on the attempt's connection once
    /// [`DailyState::follow_request`] was sent and its page came.
    pub standings: Option<LiveBoard>,
    /// `follow` was sent: its page (or a refusal) is due.
    pub following: bool,
    /// Why the standings are not shown: the server refused to follow.
    pub standings_refused: Option<String>,
}

impl DailyState {
    /// The board.
    pub fn board(&self) -> Option<&View> {
        self.attempt.as_ref().map(|attempt| &attempt.board)
    }

    /// Whether moves may still be sent.
    pub fn can_move(&self) -> bool {
        self.attempt.is_some() && self.result.is_none() && self.closed.is_none()
    }

    /// Whether the board shows the attempt over (won, or no legal move
    /// left) while the server's result has not come yet: it follows, and a
    /// client that has nothing more to send still waits for it.
    pub fn result_due(&self) -> bool {
        self.result.is_none()
            && (self.stuck
                || self
                    .board()
                    .and_then(|board| guess(board, 0).ok())
                    .is_some_and(|position| position.is_won() || position.is_stuck()))
    }

    /// Where a win at `now` would rank, and among how many finishers (the
    /// day's finishers when the attempt opened, and this one); `None` once
    /// the attempt is over.
    pub fn rank_if_won(&self, now: Instant) -> Option<(u32, u32)> {
        let attempt = self.attempt.as_ref().filter(|_| self.result.is_none())?;
        let elapsed_ms = u64::try_from(self.elapsed(now).as_millis()).unwrap_or(u64::MAX);
        Some((
            attempt.rank_if_won_at(elapsed_ms),
            attempt.finishers.saturating_add(1),
        ))
    }

    /// Where a win would rank, in words, said as unranked when the attempt
    /// is known to be kept off the ranking.
    pub fn rank_if_won_line(&self, rank: u32, among: u32) -> String {
        match self.attempt.as_ref().and_then(|attempt| attempt.unranked) {
            Some(_) => format!("unranked: a win now would place {rank} of {among}"),
            None => rank_if_won_text(rank, among),
        }
    }

    /// The attempt's time on the server's clock at `now`: counted on from
    /// the server's figure while it runs, the server's final figure after.
    pub fn elapsed(&self, now: Instant) -> Duration {
        if let Some(result) = &self.result {
            return Duration::from_millis(result.progress.elapsed_ms);
        }
        match self.clock {
            Some((started, limit)) => now.saturating_duration_since(started).min(limit),
            None => Duration::ZERO,
        }
    }

    /// The request that follows the attempt's day on its connection, once:
    /// `None` before the attempt opens or once sent. The server then sends
    /// the day's page, and an update each time an attempt of the day begins
    /// or finishes, interleaved with the answers to moves.
    pub fn follow_request(&mut self) -> Option<ClientMessage> {
        let attempt = self.attempt.as_ref().filter(|_| !self.following)?;
        self.following = true;
        Some(ClientMessage::Follow {
            game: attempt.game,
            date: Some(attempt.date.clone()),
            limit: Some(STANDINGS_ROWS),
        })
    }

    /// Applies a server message received at `now`; returns lines for people.
    pub fn apply(&mut self, message: ServerMessage, now: Instant) -> Vec<String> {
        let mut notes = Vec::new();
        match message {
            ServerMessage::DailyStarted { attempt } => {
                let elapsed = Duration::from_millis(attempt.progress.elapsed_ms);
                self.clock = Some((
                    now.checked_sub(elapsed).unwrap_or(now),
                    Duration::from_millis(attempt.time_limit_ms),
                ));
                notes.push(format!(
                    "{} · daily deal of {}",
                    attempt.game.title(),
                    attempt.date
                ));
                notes.push(if attempt.resumed {
                    format!(
                        "resumed: {} moves played, {} on the server's clock (limit {})",
                        attempt.progress.moves,
                        tenths_text(attempt.progress.elapsed_ms),
                        tenths_text(attempt.time_limit_ms)
                    )
                } else {
                    format!(
                        "started: one attempt, the server's clock runs (limit {}); no undo",
                        tenths_text(attempt.time_limit_ms)
                    )
                });
                notes.push(standing_text(&attempt));
                if let Some(unranked) = attempt.unranked {
                    notes.push(format!(
                        "this attempt is played unranked: {}",
                        unranked_text(unranked)
                    ));
                }
                self.attempt = Some(attempt);
            }
            ServerMessage::MoveAccepted {
                text,
                effects,
                board,
                progress,
                ..
            } => {
                notes.push(played_text(&text, &effects));
                self.last_rejection = None;
                self.last_effects = effects;
                if let Some(attempt) = &mut self.attempt {
                    attempt.board = board;
                    attempt.moves.push(text);
                    attempt.progress = progress;
                }
                // The server's time of the move keeps this clock on the
                // server's, whatever this machine's clock did meanwhile.
                if let Some((started, _)) = &mut self.clock {
                    *started = now
                        .checked_sub(Duration::from_millis(progress.elapsed_ms))
                        .unwrap_or(now);
                }
            }
            ServerMessage::MoveRejected { text, message, .. } => {
                let line = format!("{text:?} refused: {message}");
                self.last_rejection = Some(line.clone());
                notes.push(line);
            }
            ServerMessage::Stuck { .. } => {
                self.stuck = true;
                notes.push("you have no legal move left".into());
            }
            ServerMessage::DailyFinished { result } => {
                notes.extend(result_lines(&result));
                if let Some(standings) = &mut self.standings {
                    standings.set_own_race(result.race_id);
                }
                self.result = Some(result);
            }
            // The followed day's page: the first, or the whole page again
            // after updates were missed.
            ServerMessage::LeaderboardPage { page }
                if self.following
                    && self.attempt.as_ref().is_some_and(|attempt| {
                        attempt.game == page.game && attempt.date == page.date
                    }) =>
            {
                match &mut self.standings {
                    Some(standings) => {
                        standings.replace(page);
                    }
                    None => {
                        let mut standings = LiveBoard::new(page, STANDINGS_ROWS as usize);
                        if let Some(result) = &self.result {
                            standings.set_own_race(result.race_id);
                        }
                        self.standings = Some(standings);
                    }
                }
            }
            // Standings are shown, not said: the panel changes, and the
            // message line keeps the player's own news.
            ServerMessage::LeaderboardUpdate { update } => {
                if let Some(standings) = &mut self.standings {
                    standings.apply(&update);
                }
            }
            // The only request that is not a move is `follow`: a refusal
            // before its page is its answer (a server without live
            // standings), and the attempt goes on without them.
            ServerMessage::Error { code, message }
                if self.following
                    && self.standings.is_none()
                    && self.standings_refused.is_none()
                    && !code.is_fatal() =>
            {
                notes.push(format!("no live standings: {message}"));
                self.standings_refused = Some(message);
            }
            ServerMessage::Error { code, message } => {
                notes.push(format!("error: {message}"));
                if code.is_fatal() {
                    self.replaced = code == ErrorCode::Replaced;
                    self.closed = Some(message);
                }
            }
            ServerMessage::ShuttingDown { message } => {
                notes.push(format!("the server is stopping: {message}"));
                self.closed = Some(message);
            }
            // Room events and other answers do not concern the attempt.
            _ => {}
        }
        notes
    }
}

/// Rows of the day's standings followed beside the attempt.
pub const STANDINGS_ROWS: u32 = 20;

/// Where the day stands when an attempt opens, in words.
fn standing_text(attempt: &DailyAttempt) -> String {
    match (attempt.finishers, attempt.winning_times_ms.first()) {
        (0, _) => "nobody has finished today's deal yet: a win would rank first".into(),
        (finishers, None) => {
            format!("{finishers} finished so far, none won: a win would rank first")
        }
        (finishers, Some(&fastest)) => format!(
            "{finishers} finished so far, {} won, the fastest in {}",
            attempt.winning_times_ms.len(),
            tenths_text(fastest)
        ),
    }
}

/// Where a win now would rank, in words.
pub fn rank_if_won_text(rank: u32, among: u32) -> String {
    format!("a win now would rank {rank} of {among}")
}

/// A finished attempt in words.
pub fn result_lines(result: &DailyResult) -> Vec<String> {
    let verdict = match result.status {
        PlayerStatus::Won => "won",
        status => status_text(status),
    };
    vec![
        format!(
            "daily {} {}: {verdict} in {}, {} moves, {} cards home",
            result.game.title(),
            result.date,
            tenths_text(result.progress.elapsed_ms),
            result.progress.moves,
            result.progress.cards_home
        ),
        match result.unranked {
            None => format!(
                "rank {} of {} finishers so far",
                result.rank, result.finishers
            ),
            Some(unranked) => format!(
                "unranked: {}; it would rank {} of {} ranked finishers so far",
                unranked_text(unranked),
                result.rank,
                result.finishers
            ),
        },
        format!(
            "race id {}: `patience replay {}` plays it back",
            result.race_id, result.race_id
        ),
    ]
}

/// Help for the daily's line commands.
pub const HELP: &str = "Type a move in the notation (e.g. 7h>4, 3>f, w>7, s, r3>B4, d), or:\n\
  b board   m moves   resign (ends the attempt)   ? help\n\
  q quit (the attempt stays open, its clock runs: `patience daily` takes it back)";

/// Plays the attempt line by line: moves from `input`, board and events to
/// `output`, until the attempt ends, `quit`, or the end of input once every
/// move sent is answered (the attempt then stays open).
///
/// Cancel-safe in effect: dropped early, the connection is dropped and the
/// attempt stays open, as after `q`; moves sent stand.
pub async fn plain(
    mut connection: Connection,
    mut state: DailyState,
    notes: Vec<String>,
    mut input: mpsc::Receiver<String>,
    mut output: impl Write,
) -> anyhow::Result<()> {
    for note in notes {
        writeln!(output, "{note}")?;
    }
    if let Some(board) = state.board() {
        writeln!(output, "{}\n", view_text(board))?;
    }
    output.flush()?;
    let mut input_open = true;
    // Moves and resignations sent and not answered yet.
    let mut pending = 0usize;
    loop {
        if state.result.is_some() {
            break;
        }
        if let Some(reason) = &state.closed {
            output.flush()?;
            let reason = reason.clone();
            return Err(if state.replaced {
                DailyError::Replaced(reason)
            } else {
                DailyError::Closed(reason)
            }
            .into());
        }
        if !input_open && pending == 0 && !state.result_due() {
            writeln!(
                output,
                "end of input: the attempt stays open, its clock runs; `patience daily` takes it back"
            )?;
            break;
        }
        tokio::select! {
            received = connection.recv() => {
                let message = match received {
                    Ok(message) => message,
                    Err(error) => {
                        output.flush()?;
                        return Err(DailyError::Net(error).into());
                    }
                };
                // Each move or resignation gets one answer: accepted,
                // rejected, the end, or an error.
                let answered = matches!(
                    message,
                    ServerMessage::MoveAccepted { .. }
                        | ServerMessage::MoveRejected { .. }
                        | ServerMessage::DailyFinished { .. }
                        | ServerMessage::Error { .. }
                );
                let show_board = matches!(message, ServerMessage::MoveAccepted { .. });
                if answered {
                    pending = pending.saturating_sub(1);
                }
                for note in state.apply(message, Instant::now()) {
                    writeln!(output, "{note}")?;
                }
                if show_board && let Some(board) = state.board() {
                    writeln!(output, "{}\n", view_text(board))?;
                }
                output.flush()?;
            }
            line = input.recv(), if input_open => {
                let Some(line) = line else {
                    input_open = false;
                    continue;
                };
                let message = match line.trim() {
                    "" => None,
                    "q" | "quit" => {
                        writeln!(
                            output,
                            "left: the attempt stays open, its clock runs; `patience daily` takes it back"
                        )?;
                        break;
                    }
                    "?" | "help" => {
                        writeln!(output, "{HELP}")?;
                        None
                    }
                    "b" | "board" => {
                        if let Some(board) = state.board() {
                            writeln!(output, "{}", view_text(board))?;
                        }
                        if let Some((rank, among)) = state.rank_if_won(Instant::now()) {
                            writeln!(output, "{}", state.rank_if_won_line(rank, among))?;
                        }
                        None
                    }
                    "m" | "moves" => {
                        writeln!(output, "moves: {}", legal_texts(state.board()).join(" "))?;
                        None
                    }
                    "u" | "undo" => {
                        writeln!(output, "the daily deal has no undo")?;
                        None
                    }
                    "h" | "hint" => {
                        writeln!(output, "hints are for practice only")?;
                        None
                    }
                    "resign" => Some(ClientMessage::Resign),
                    text => Some(ClientMessage::Move {
                        text: text.to_string(),
                        seat: None,
                    }),
                };
                if let Some(message) = message {
                    if let Err(error) = connection.send(&message).await {
                        return Err(DailyError::Net(error).into());
                    }
                    pending += 1;
                }
                output.flush()?;
            }
        }
    }
    output.flush()?;
    connection.close().await;
    Ok(())
}

/// The legal moves of a board as notation, computed from what is face up.
pub fn legal_texts(board: Option<&View>) -> Vec<String> {
    board
        .and_then(|board| guess(board, 0).ok())
        .map(|position| {
            move_shapes(&position)
                .into_iter()
                .map(|shape| shape.text)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    use patience_shared::any::AnyGame;
    use patience_shared::protocol::Progress;
    use patience_shared::rules::Rules;

    use patience_shared::protocol::Unranked;

    use super::*;

    /// Today's attempt at Three Blind Mice seed 1, `moves` in, begun
    /// `elapsed_ms` ago on the server's clock.
    pub(crate) fn attempt(resumed: bool, elapsed_ms: u64) -> DailyAttempt {
        DailyAttempt {
            game: GameKind::ThreeBlindMice,
            date: "2026-12-01".into(),
            commitment: "5e8f".into(),
            board: AnyGame::deal(GameKind::ThreeBlindMice, 1).view(),
            moves: Vec::new(),
            progress: Progress {
                moves: 0,
                cards_home: 0,
                elapsed_ms,
                ..Progress::default()
            },
            time_limit_ms: 3_600_000,
            resumed,
            finishers: 41,
            winning_times_ms: vec![98_400, 131_250],
            unranked: None,
        }
    }

    pub(crate) fn result(status: PlayerStatus) -> DailyResult {
        DailyResult {
            game: GameKind::ThreeBlindMice,
            date: "2026-12-01".into(),
            status,
            progress: Progress {
                moves: 61,
                cards_home: 52,
                elapsed_ms: 184_020,
                ..Progress::default()
            },
            rank: 3,
            finishers: 41,
            race_id: 731,
            unranked: None,
        }
    }

    #[test]
    fn the_clock_is_the_servers_and_stops_at_its_final_time() {
        let start = Instant::now();
        let mut state = DailyState::default();
        let notes = state.apply(
            ServerMessage::DailyStarted {
                attempt: attempt(true, 45_250),
            },
            start,
        );
        assert_eq!(
            notes,
            [
                "Three Blind Mice · daily deal of 2026-12-01",
                "resumed: 0 moves played, 0:45.2 on the server's clock (limit 60:00.0)",
                "41 finished so far, 2 won, the fastest in 1:38.4",
            ]
        );
        // A win now would come first; after 98.4 s second; after 131.25 s third.
        let at = |seconds: f64| state.rank_if_won(start + Duration::from_secs_f64(seconds - 45.25));
        assert_eq!(at(50.0), Some((1, 42)));
        assert_eq!(at(98.4), Some((2, 42)));
        assert_eq!(at(131.3), Some((3, 42)));
        assert!(state.can_move());
        let later = start + Duration::from_secs(10);
        assert_eq!(state.elapsed(later), Duration::from_millis(55_250));
        // Never beyond the time limit.
        assert_eq!(
            state.elapsed(start + Duration::from_secs(7200)),
            Duration::from_secs(3600)
        );
        let notes = state.apply(
            ServerMessage::DailyFinished {
                result: result(PlayerStatus::Won),
            },
            later,
        );
        assert_eq!(
            notes,
            [
                "daily Three Blind Mice 2026-12-01: won in 3:04.0, 61 moves, 52 cards home",
                "rank 3 of 41 finishers so far",
                "race id 731: `patience replay 731` plays it back",
            ]
        );
        assert!(!state.can_move());
        assert_eq!(state.elapsed(later), Duration::from_millis(184_020));
        assert_eq!(state.rank_if_won(later), None);
    }

    #[test]
    fn a_new_account_is_told_at_the_start_that_its_attempt_plays_unranked() {
        let start = Instant::now();
        let check = |unranked: Option<Unranked>, said: Option<&str>, line: &str| {
            let mut state = DailyState::default();
            let notes = state.apply(
                ServerMessage::DailyStarted {
                    attempt: DailyAttempt {
                        unranked,
                        ..attempt(false, 0)
                    },
                },
                start,
            );
            assert_eq!(
                notes
                    .iter()
                    .find(|note| note.contains("unranked"))
                    .map(String::as_str),
                said
            );
            let (rank, among) = state.rank_if_won(start).expect("the attempt is open");
            assert_eq!(state.rank_if_won_line(rank, among), line);
        };
        check(None, None, "a win now would rank 1 of 42");
        check(
            Some(Unranked::NewAccount),
            Some(
                "this attempt is played unranked: your account was registered on the day, \
                 and only accounts registered before the day began (UTC) rank",
            ),
            "unranked: a win now would place 1 of 42",
        );
    }

    #[test]
    fn moves_update_the_board_and_refusals_are_kept_until_the_next_move() {
        let start = Instant::now();
        let mut state = DailyState::default();
        state.apply(
            ServerMessage::DailyStarted {
                attempt: attempt(false, 0),
            },
            start,
        );
        let mut position = AnyGame::deal(GameKind::ThreeBlindMice, 1);
        let mut legal = Vec::new();
        position.legal_moves(&mut legal);
        let text = position.format_move(legal[0]);
        let outcome = position.apply(legal[0]).expect("a legal move");
        let refused = state.apply(
            ServerMessage::MoveRejected {
                text: "1>1".into(),
                code: ErrorCode::BadNotation,
                reason: None,
                message: "no such move".into(),
            },
            start,
        );
        assert_eq!(refused, ["\"1>1\" refused: no such move"]);
        assert!(state.last_rejection.is_some());
        let played = state.apply(
            ServerMessage::MoveAccepted {
                seq: 1,
                text: text.clone(),
                effects: outcome.effects.to_vec(),
                board: position.view(),
                progress: Progress {
                    moves: 1,
                    cards_home: 0,
                    elapsed_ms: 1_500,
                    ..Progress::default()
                },
            },
            start,
        );
        assert!(played[0].starts_with(&format!("you played {text}")));
        // The clock follows the server's time of the move.
        assert_eq!(state.elapsed(start), Duration::from_millis(1_500));
        assert_eq!(state.last_rejection, None);
        let attempt = state.attempt.as_ref().expect("an attempt");
        assert_eq!(attempt.moves, [text]);
        assert_eq!(attempt.progress.moves, 1);
        assert_eq!(state.board(), Some(&position.view()));
        // A fatal error closes the attempt's connection.
        assert!(!state.replaced);
        state.apply(
            ServerMessage::Error {
                code: ErrorCode::Replaced,
                message: "another connection took the attempt".into(),
            },
            start,
        );
        assert!(!state.can_move());
        assert!(state.replaced);
    }

    #[test]
    fn the_days_standings_are_taken_wherever_they_come() {
        use crate::live::tests::{page, update};
        let start = Instant::now();
        let mut state = DailyState::default();
        assert_eq!(
            state.follow_request(),
            None,
            "no attempt, nothing to follow"
        );
        state.apply(
            ServerMessage::DailyStarted {
                attempt: attempt(false, 0),
            },
            start,
        );
        // A page nobody asked for is not the standings.
        state.apply(
            ServerMessage::LeaderboardPage {
                page: page(&["1 ada won 98.4 11"]),
            },
            start,
        );
        assert!(state.standings.is_none());
        assert!(state.follow_request().is_some());
        // An update before the page has nothing to change.
        let notes = state.apply(
            ServerMessage::LeaderboardUpdate {
                update: update(None, 1, 2),
            },
            start,
        );
        assert!(notes.is_empty() && state.standings.is_none());
        let mut other_day = page(&["1 zed won 1.0 99"]);
        other_day.date = "2026-11-30".into();
        state.apply(ServerMessage::LeaderboardPage { page: other_day }, start);
        assert!(state.standings.is_none(), "another day's page");
        state.apply(
            ServerMessage::LeaderboardPage {
                page: page(&["1 ada won 98.4 11"]),
            },
            start,
        );
        let notes = state.apply(
            ServerMessage::LeaderboardUpdate {
                update: update(Some("1 bob won 90.0 12"), 2, 1),
            },
            start,
        );
        assert!(notes.is_empty(), "shown, not said: {notes:?}");
        let mut finished = result(PlayerStatus::Won);
        finished.race_id = 13;
        state.apply(ServerMessage::DailyFinished { result: finished }, start);
        // Updates missed: the whole page again, the own race kept.
        state.apply(
            ServerMessage::LeaderboardPage {
                page: page(&[
                    "1 bob won 90.0 12",
                    "2 eve won 95.0 13",
                    "3 ada won 98.4 11",
                ]),
            },
            start,
        );
        let standings = state.standings.as_ref().expect("followed");
        let names: Vec<&str> = standings
            .page
            .rows
            .iter()
            .map(|row| row.name.as_str())
            .collect();
        assert_eq!(names, ["bob", "eve", "ada"]);
        assert_eq!(standings.page.own.as_ref().map(|own| own.rank), Some(2));
        assert!(state.standings_refused.is_none());
    }

    #[test]
    fn a_server_that_will_not_follow_leaves_the_attempt_be() {
        let start = Instant::now();
        let mut state = DailyState::default();
        state.apply(
            ServerMessage::DailyStarted {
                attempt: attempt(false, 0),
            },
            start,
        );
        state.follow_request();
        let notes = state.apply(
            ServerMessage::Error {
                code: ErrorCode::InvalidRequest,
                message: "unknown message".into(),
            },
            start,
        );
        assert_eq!(notes, ["no live standings: unknown message"]);
        assert!(state.can_move() && state.closed.is_none());
        // A later error is the attempt's, as before.
        let notes = state.apply(
            ServerMessage::Error {
                code: ErrorCode::InvalidRequest,
                message: "slow down".into(),
            },
            start,
        );
        assert_eq!(notes, ["error: slow down"]);
    }

    #[test]
    fn a_won_board_waits_for_the_servers_result() {
        use patience_shared::solver::Budget;
        use patience_shared::solver::any::{first_winnable_deal, solve_deal};
        let game = GameKind::ThreeBlindMice;
        let budget = Budget::positions(crate::plain::PRACTICE_BUDGET);
        let deal = first_winnable_deal(game, 1.., budget)
            .expect("the solver replays")
            .expect("a winnable deal");
        let line = solve_deal(game, deal.seed, budget)
            .expect("the solver replays")
            .solution;
        let mut position = AnyGame::deal(game, deal.seed);
        let mut state = DailyState::default();
        let mut started = attempt(false, 0);
        started.board = position.view();
        state.apply(
            ServerMessage::DailyStarted { attempt: started },
            Instant::now(),
        );
        for text in &line {
            assert!(!state.result_due(), "before {text}");
            let mv = position.parse_move(text).expect("the solver's notation");
            position.apply(mv).expect("the solver's line is legal");
            state.apply(
                ServerMessage::MoveAccepted {
                    seq: 1,
                    text: text.clone(),
                    effects: Vec::new(),
                    board: position.view(),
                    progress: Progress::default(),
                },
                Instant::now(),
            );
        }
        assert!(state.result_due());
        state.apply(
            ServerMessage::DailyFinished {
                result: result(PlayerStatus::Won),
            },
            Instant::now(),
        );
        assert!(!state.result_due());
    }

    #[test]
    fn the_day_so_far_in_words() {
        let check = |finishers: u32, wins: &[u64], expected: &str| {
            let mut opened = attempt(false, 0);
            opened.finishers = finishers;
            opened.winning_times_ms = wins.to_vec();
            assert_eq!(standing_text(&opened), expected);
        };
        check(
            0,
            &[],
            "nobody has finished today's deal yet: a win would rank first",
        );
        check(
            3,
            &[],
            "3 finished so far, none won: a win would rank first",
        );
        check(
            3,
            &[61_000, 70_000],
            "3 finished so far, 2 won, the fastest in 1:01.0",
        );
    }

    #[test]
    fn an_unranked_result_says_why_and_where_it_would_rank() {
        let mut unranked = result(PlayerStatus::Won);
        unranked.unranked = Some(Unranked::Review);
        assert_eq!(
            result_lines(&unranked)[1],
            "unranked: the moves came faster than a person plays; the attempt is held for the server operator's review; it would rank 3 of 41 ranked finishers so far"
        );
    }

    #[test]
    fn an_earlier_result_reads_as_one_line() {
        let row = LeaderboardRow {
            rank: 2,
            name: "ada".into(),
            status: PlayerStatus::Resigned,
            elapsed_ms: 61_000,
            moves: 4,
            cards_home: 13,
            race_id: 9,
            unranked: None,
        };
        assert_eq!(
            own_row_text(&row, 5),
            "Your result: resigned in 1:01.0, 4 moves, 13 cards home; rank 2 of 5 so far; `patience replay 9` shows it again."
        );
    }

    fn temporary_store(name: &str) -> Store {
        let directory =
            std::env::temp_dir().join(format!("patience-daily-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        Store::in_directory(directory)
    }

    /// Opens the attempt, collecting what is announced.
    async fn open_collecting(
        url: &str,
        store: &Store,
        name: Option<&str>,
    ) -> (Result<Opened, DailyError>, Vec<String>) {
        let mut announced = Vec::new();
        let opened = open(
            url,
            store,
            GameKind::ThreeBlindMice,
            name.map(String::from),
            |line| announced.push(line.to_string()),
        )
        .await;
        (opened, announced)
    }

    /// Plays `lines` through [`plain`] on an opened attempt; returns the output.
    async fn play(opened: Opened, lines: &[&str]) -> String {
        let Opened::Attempt(attempt) = opened else {
            panic!("an attempt was expected");
        };
        let (sender, receiver) = mpsc::channel(16);
        for line in lines {
            sender
                .send(line.to_string())
                .await
                .expect("the channel is open");
        }
        drop(sender);
        let Attempt {
            connection,
            state,
            notes,
        } = *attempt;
        let mut output = Vec::new();
        plain(connection, state, notes, receiver, &mut output)
            .await
            .expect("the attempt plays");
        String::from_utf8_lossy(&output).into_owned()
    }

    #[tokio::test]
    async fn the_first_daily_play_registers_then_plays_and_resigns_line_by_line() {
        let position = AnyGame::deal(GameKind::ThreeBlindMice, 1);
        let mut legal = Vec::new();
        position.legal_moves(&mut legal);
        let first = position.format_move(legal[0]);
        let (url, received) = crate::fake_server::start({
            let first = first.clone();
            move |message| match message {
                ClientMessage::Register { name } => vec![ServerMessage::Registered {
                    player: 17,
                    name: name.clone(),
                    token: "c2f1".into(),
                }],
                ClientMessage::DailyPlay { .. } => vec![ServerMessage::DailyStarted {
                    attempt: attempt(false, 0),
                }],
                ClientMessage::Move { text, .. } if *text == first => {
                    let mut position = AnyGame::deal(GameKind::ThreeBlindMice, 1);
                    let mut legal = Vec::new();
                    position.legal_moves(&mut legal);
                    let outcome = position.apply(legal[0]).expect("a legal move");
                    vec![ServerMessage::MoveAccepted {
                        seq: 1,
                        text: text.clone(),
                        effects: outcome.effects.to_vec(),
                        board: position.view(),
                        progress: Progress::default(),
                    }]
                }
                ClientMessage::Move { text, .. } => vec![ServerMessage::MoveRejected {
                    text: text.clone(),
                    code: ErrorCode::BadNotation,
                    reason: None,
                    message: "no such move".into(),
                }],
                ClientMessage::Resign => vec![ServerMessage::DailyFinished {
                    result: result(PlayerStatus::Resigned),
                }],
                _ => Vec::new(),
            }
        })
        .await;
        let store = temporary_store("first");
        let (opened, announced) = open_collecting(&url, &store, Some("ada")).await;
        let output = play(
            opened.expect("the attempt opens"),
            &["m", &first, "1>1", "u", "resign"],
        )
        .await;
        let output = format!("{}\n{output}", announced.join("\n"));
        for wanted in [
            "registered ada as player 17",
            "only key to the account",
            "started: one attempt",
            "moves: ",
            &format!("you played {first}"),
            "\"1>1\" refused: no such move",
            "the daily deal has no undo",
            "resigned in 3:04.0",
            "rank 3 of 41",
            "patience replay 731",
        ] {
            assert!(
                output.contains(wanted),
                "{wanted:?} missing from:\n{output}"
            );
        }
        assert!(!output.contains("c2f1"), "the token is never printed");
        let account = store.account(&url).expect("the account is stored");
        assert_eq!((account.player, account.token.as_str()), (17, "c2f1"));
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        assert!(matches!(sent[1], ClientMessage::Register { ref name } if name == "ada"));
        assert!(matches!(sent[2], ClientMessage::DailyPlay { .. }));
    }

    /// A fake server where ada is signed in and `daily_play` opens a new
    /// attempt; a store with ada's account for it.
    async fn signed_in_server(name: &str) -> (String, crate::fake_server::Received, Store) {
        let (url, received) = crate::fake_server::start(|message| match message {
            ClientMessage::Authenticate { .. } => vec![ServerMessage::Authenticated {
                player: 17,
                name: "ada".into(),
            }],
            ClientMessage::DailyPlay { .. } => vec![ServerMessage::DailyStarted {
                attempt: attempt(false, 0),
            }],
            _ => Vec::new(),
        })
        .await;
        let store = temporary_store(name);
        store
            .save_account(&crate::config::Account {
                server: url.clone(),
                player: 17,
                name: "ada".into(),
                token: "c2f1".into(),
            })
            .expect("writable");
        (url, received, store)
    }

    #[tokio::test]
    async fn the_attempt_is_asked_for_only_when_the_player_starts() {
        let (url, received, store) = signed_in_server("start").await;
        let mut connection = connect(&url, &store, None, |_| {})
            .await
            .expect("signed in");
        let (sender, mut input) = mpsc::channel(4);
        for line in ["what?", ""] {
            sender.send(line.to_string()).await.expect("open");
        }
        let mut output = Vec::new();
        let started = wait_for_start(
            &mut connection,
            GameKind::ThreeBlindMice,
            &mut input,
            &mut output,
        )
        .await
        .expect("the connection holds");
        assert!(started);
        let said = String::from_utf8_lossy(&output).into_owned();
        assert!(said.contains("Today's Three Blind Mice deal"), "{said}");
        assert!(said.contains("The clock starts when you start"), "{said}");
        assert_eq!(said.matches(START_PROMPT).count(), 2, "{said}");
        // Nothing of the deal was asked for before the start.
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        assert!(
            !sent
                .iter()
                .any(|message| matches!(message, ClientMessage::DailyPlay { .. })),
            "{sent:?}"
        );
        let opened = start(connection, GameKind::ThreeBlindMice)
            .await
            .expect("the attempt opens");
        assert!(matches!(opened, Opened::Attempt(_)));
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        assert!(matches!(sent.last(), Some(ClientMessage::DailyPlay { .. })));
    }

    #[tokio::test]
    async fn leaving_before_the_start_opens_nothing() {
        for lines in [&["q"][..], &[]] {
            let (url, received, store) = signed_in_server("leave").await;
            let mut connection = connect(&url, &store, None, |_| {})
                .await
                .expect("signed in");
            let (sender, mut input) = mpsc::channel(4);
            for line in lines {
                sender.send(line.to_string()).await.expect("open");
            }
            drop(sender);
            let mut output = Vec::new();
            let started = wait_for_start(
                &mut connection,
                GameKind::ThreeBlindMice,
                &mut input,
                &mut output,
            )
            .await
            .expect("the connection holds");
            assert!(!started, "{lines:?}");
            let said = String::from_utf8_lossy(&output).into_owned();
            assert!(said.contains("Not started"), "{said}");
            let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
            assert!(
                !sent
                    .iter()
                    .any(|message| matches!(message, ClientMessage::DailyPlay { .. })),
                "{sent:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_stored_account_signs_in_and_takes_the_attempt_back() {
        let (url, received) = crate::fake_server::start(|message| match message {
            ClientMessage::Authenticate { .. } => vec![ServerMessage::Authenticated {
                player: 17,
                name: "ada".into(),
            }],
            ClientMessage::DailyPlay { .. } => vec![ServerMessage::DailyStarted {
                attempt: attempt(true, 45_250),
            }],
            _ => Vec::new(),
        })
        .await;
        let store = temporary_store("resume");
        store
            .save_account(&crate::config::Account {
                server: url.clone(),
                player: 17,
                name: "ada".into(),
                token: "c2f1".into(),
            })
            .expect("writable");
        let (opened, announced) = open_collecting(&url, &store, None).await;
        assert!(announced.is_empty(), "no registration: {announced:?}");
        let output = play(opened.expect("the attempt opens"), &[]).await;
        assert!(
            output.contains("resumed: 0 moves played, 0:45.2"),
            "{output}"
        );
        assert!(
            output.contains("end of input: the attempt stays open"),
            "{output}"
        );
        let sent = received.lock().map(|log| log.clone()).unwrap_or_default();
        assert!(matches!(sent[1], ClientMessage::Authenticate { ref token } if token == "c2f1"));
    }

    #[tokio::test]
    async fn a_deal_played_already_shows_the_players_result() {
        let (url, _) = crate::fake_server::start(|message| match message {
            ClientMessage::Register { .. } => vec![ServerMessage::Registered {
                player: 1,
                name: "bob".into(),
                token: "t".into(),
            }],
            ClientMessage::DailyPlay { .. } => vec![ServerMessage::Error {
                code: ErrorCode::DailyAlreadyPlayed,
                message: "played already".into(),
            }],
            ClientMessage::Leaderboard { .. } => {
                vec![ServerMessage::LeaderboardPage {
                    page: patience_shared::protocol::LeaderboardPage {
                        game: GameKind::ThreeBlindMice,
                        date: "2026-12-01".into(),
                        day_over: false,
                        finishers: 5,
                        playing: 0,
                        rows: Vec::new(),
                        own: Some(LeaderboardRow {
                            rank: 2,
                            name: "bob".into(),
                            status: PlayerStatus::Won,
                            elapsed_ms: 1_000,
                            moves: 3,
                            cards_home: 52,
                            race_id: 9,
                            unranked: None,
                        }),
                        reveal: None,
                        unranked: 0,
                    },
                }]
            }
            _ => Vec::new(),
        })
        .await;
        let store = temporary_store("played");
        let (opened, _) = open_collecting(&url, &store, Some("bob")).await;
        let Opened::AlreadyPlayed { notes } = opened.expect("an answer") else {
            panic!("the deal was played already");
        };
        assert_eq!(
            notes.last().map(String::as_str),
            Some(
                "Your result: won in 0:01.0, 3 moves, 52 cards home; rank 2 of 5 so far; `patience replay 9` shows it again."
            )
        );
    }

    #[tokio::test]
    async fn refusals_are_typed() {
        let (url, _) = crate::fake_server::start(|message| match message {
            ClientMessage::Register { .. } => vec![ServerMessage::Error {
                code: ErrorCode::NameTaken,
                message: "taken".into(),
            }],
            ClientMessage::Authenticate { .. } => vec![ServerMessage::Error {
                code: ErrorCode::InvalidToken,
                message: "unknown".into(),
            }],
            _ => Vec::new(),
        })
        .await;
        let store = temporary_store("refusals");
        let (taken, _) = open_collecting(&url, &store, Some("ada")).await;
        assert!(
            matches!(taken, Err(DailyError::Account(AccountError::NameTaken(ref name))) if name == "ada"),
            "{:?}",
            taken.err()
        );
        assert_eq!(store.account(&url), None, "nothing stored");
        store
            .save_account(&crate::config::Account {
                server: url.clone(),
                player: 17,
                name: "ada".into(),
                token: "old".into(),
            })
            .expect("writable");
        let (unknown, _) = open_collecting(&url, &store, None).await;
        assert!(
            matches!(
                unknown,
                Err(DailyError::Account(AccountError::UnknownToken {
                    player: 17,
                    ..
                }))
            ),
            "{:?}",
            unknown.err()
        );
    }
}
