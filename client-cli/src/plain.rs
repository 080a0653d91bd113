//! `--plain`: the line-oriented client. Moves are read as lines of notation
//! from standard input; the board and the events are written as text, so
//! scripts and tests can drive it.
//!
//! Besides moves, a line may be one of: `board` (b), `moves` (m: the legal
//! moves), `undo` (u), `hint` (h, practice only), `resign`, `start` (the
//! owner starts early), `help` (?), `quit` (q).

use std::io::{BufRead, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::game::GameKind;
use patience_shared::position::{guess, move_shapes};
use patience_shared::protocol::{ClientMessage, ServerMessage};
use patience_shared::rules::{Outcome, Rules};
use patience_shared::solver::any::first_winnable_deal;
use patience_shared::solver::hinter::Hinter;
use patience_shared::solver::{Budget, Hint};
use tokio::sync::mpsc;

use crate::race::effect_text;
use crate::session::Session;
use crate::text::view_text;

/// The solver budget for practice deals and hints.
pub const PRACTICE_BUDGET: u64 = 200_000;

/// How many seeds practice tries for a proved-winnable deal.
const PRACTICE_SEEDS: u64 = 50;

/// Help for the line commands.
pub const HELP: &str = "Type a move in the notation (e.g. 7h>4, 3>f, w>7, s, r3>B4, d), or:\n\
  b board   m moves   u undo   h hint (practice)   resign   start (owner starts early)\n\
  ? help    q quit";

/// A deal for practice: `seed`'s, or the first deal from a clock-drawn seed
/// that the solver proves winnable. Returns the seed and a note.
pub fn practice_deal(game: GameKind, seed: Option<u64>) -> (u64, Option<String>) {
    if let Some(seed) = seed {
        return (seed, None);
    }
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |elapsed| elapsed.as_nanos() as u64 % 1_000_000_000);
    match first_winnable_deal(
        game,
        start..start + PRACTICE_SEEDS,
        Budget::positions(PRACTICE_BUDGET),
    ) {
        Ok(Some(deal)) => (deal.seed, Some("a deal the solver proved winnable".into())),
        _ => (
            start,
            Some("no deal proved winnable quickly; this one may not be".into()),
        ),
    }
}

/// Plays a practice game from `input` to `output`, offline. Returns whether
/// the game was won.
pub fn practice(
    game: GameKind,
    seed: u64,
    note: Option<&str>,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<bool> {
    let mut position = AnyGame::deal(game, seed);
    let mut history: Vec<(AnyMove, Outcome)> = Vec::new();
    // Keeps the line of the last hint, so hints in a row follow one line.
    let mut hinter = Hinter::new();
    writeln!(output, "{} · practice · seed {seed}", game.title())?;
    if let Some(note) = note {
        writeln!(output, "({note})")?;
    }
    writeln!(output, "{}\n", view_text(&position.view()))?;
    for line in input.lines() {
        let line = line?;
        let command = line.trim();
        match command {
            "" => continue,
            "q" | "quit" => break,
            "?" | "help" => writeln!(output, "{HELP}")?,
            "b" | "board" => writeln!(output, "{}", view_text(&position.view()))?,
            "m" | "moves" => writeln!(output, "moves: {}", legal_texts(&position).join(" "))?,
            "u" | "undo" => match history.pop() {
                Some((mv, outcome)) => {
                    position.undo(mv, &outcome);
                    writeln!(output, "took back {}", position.format_move(mv))?;
                    writeln!(output, "{}", view_text(&position.view()))?;
                }
                None => writeln!(output, "nothing to take back")?,
            },
            "h" | "hint" => {
                let text = match hinter.hint(&position, Budget::positions(PRACTICE_BUDGET)) {
                    Ok(Hint::Play(mv)) => format!("hint: {}", position.format_move(mv)),
                    Ok(Hint::AlreadyWon) => "hint: the game is won".into(),
                    Ok(Hint::NoWinningLine) => {
                        "hint: no winning line from here; take moves back (u)".into()
                    }
                    Ok(Hint::Unknown) => "hint: the solver found nothing in time".into(),
                    Err(error) => format!("hint failed: {error}"),
                };
                writeln!(output, "{text}")?;
            }
            text => match position.parse_move(text) {
                Err(error) => writeln!(output, "refused: {}", error.reason)?,
                Ok(mv) => {
                    let canonical = position.format_move(mv);
                    match position.apply(mv) {
                        Err(error) => writeln!(output, "refused: {canonical}: {error}")?,
                        Ok(outcome) => {
                            let mut line = format!("played {canonical}");
                            for effect in &outcome.effects {
                                line.push_str("; ");
                                line.push_str(&effect_text(effect));
                            }
                            writeln!(output, "{line}")?;
                            history.push((mv, outcome));
                            writeln!(output, "{}\n", view_text(&position.view()))?;
                            if position.is_won() {
                                writeln!(output, "won in {} moves", history.len())?;
                                return Ok(true);
                            }
                            if position.is_stuck() {
                                writeln!(output, "stuck: no legal move left (u takes back)")?;
                            }
                        }
                    }
                }
            },
        }
        output.flush()?;
    }
    Ok(false)
}

fn legal_texts(position: &AnyGame) -> Vec<String> {
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    moves.iter().map(|&mv| position.format_move(mv)).collect()
}

/// Lines of standard input, read on a thread of their own (reading a
/// terminal blocks) and handed over through a bounded channel. The channel
/// closes at end of input.
pub fn stdin_lines() -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel(64);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if sender.blocking_send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// How often the line mode prints what the session said about its
/// connection (lost, reconnecting) while no message comes.
const CONNECTION_NOTES_EVERY: Duration = Duration::from_millis(250);

/// Plays or watches online, line by line, until the race ends or `quit`.
///
/// Cancel-safe in effect: dropped early, the session is dropped, which
/// closes the connection and keeps the seat for a resume.
pub async fn online(
    mut session: Session,
    notes: Vec<String>,
    mut input: mpsc::Receiver<String>,
    mut output: impl Write,
) -> anyhow::Result<()> {
    for note in notes {
        writeln!(output, "{note}")?;
    }
    let mut input_open = true;
    // The session reconnects by itself; its lines about that come while no
    // message does, so they are printed as they come, not with the next.
    let mut tick = tokio::time::interval(CONNECTION_NOTES_EVERY);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                for note in session.take_connection_notes() {
                    writeln!(output, "{note}")?;
                }
                output.flush()?;
            }
            received = session.recv() => {
                for note in session.take_connection_notes() {
                    writeln!(output, "{note}")?;
                }
                let (message, notes) = match received {
                    Ok(received) => received,
                    // The race is not over (that ends the loop first) and
                    // no reconnect brought it back: a failure.
                    Err(error) => return Err(error.into()),
                };
                for note in &notes {
                    writeln!(output, "{note}")?;
                }
                let show_board = !notes.is_empty()
                    && (session.caught_up()
                        || matches!(
                            message,
                            ServerMessage::RaceStarted { .. } | ServerMessage::MoveAccepted { .. }
                        ));
                if show_board && let Some(board) = session.state.my_board() {
                    writeln!(output, "{}\n", view_text(board))?;
                }
                output.flush()?;
                if session.state.result.is_some() || session.state.closed.is_some() {
                    break;
                }
            }
            line = input.recv(), if input_open => {
                let Some(line) = line else {
                    input_open = false;
                    continue;
                };
                let command = line.trim();
                let message = match command {
                    "" => None,
                    "q" | "quit" => {
                        session.leave().await;
                        writeln!(output, "left the room")?;
                        return Ok(());
                    }
                    "?" | "help" => {
                        writeln!(output, "{HELP}")?;
                        None
                    }
                    "b" | "board" => {
                        if let Some(board) = session.state.my_board() {
                            writeln!(output, "{}", view_text(board))?;
                        }
                        None
                    }
                    "m" | "moves" => {
                        let texts = session
                            .state
                            .my_board()
                            .and_then(|board| guess(board, 0).ok())
                            .map(|position| {
                                move_shapes(&position)
                                    .into_iter()
                                    .map(|shape| shape.text)
                                    .collect::<Vec<_>>()
                            })
                            .unwrap_or_default();
                        writeln!(output, "moves: {}", texts.join(" "))?;
                        None
                    }
                    "h" | "hint" => {
                        writeln!(output, "hints are for practice only")?;
                        None
                    }
                    "u" | "undo" => Some(ClientMessage::Undo),
                    "resign" => Some(ClientMessage::Resign),
                    "start" => Some(ClientMessage::StartEarly),
                    text => Some(ClientMessage::Move {
                        text: text.to_string(),
                        seat: None,
                    }),
                };
                if let Some(message) = message {
                    session.send(&message).await?;
                }
                output.flush()?;
            }
        }
    }
    session.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use patience_shared::solver::any::solve_deal;

    use super::*;

    /// `h` asked before every move follows one line.
    /// Hints solved afresh each time moved Indian's J♦ back and forth; here
    /// each hint must be the next move of the first hint's line.
    #[test]
    fn hints_before_every_move_are_the_moves_of_one_line() {
        let (game, seed) = (GameKind::Indian, 1);
        let deal = AnyGame::deal(game, seed);
        let mut own = Hinter::new();
        let Ok(Hint::Play(_)) = own.hint(&deal, Budget::positions(PRACTICE_BUDGET)) else {
            panic!("Indian seed 1 is won within the practice budget");
        };
        let line = own
            .rest_of_line(&deal)
            .expect("the deal is on its line")
            .to_vec();
        let mut position = deal.clone();
        let mut script = String::new();
        let mut expected = Vec::new();
        for &mv in &line {
            let text = position.format_move(mv);
            script.push_str(&format!("h\n{text}\n"));
            expected.push(format!("hint: {text}"));
            position.apply(mv).expect("the line's moves are legal");
        }
        let mut output = Vec::new();
        let won = practice(game, seed, None, script.as_bytes(), &mut output)
            .expect("writing to a vector");
        let output = String::from_utf8_lossy(&output);
        let hints: Vec<&str> = output
            .lines()
            .filter(|line| line.starts_with("hint"))
            .collect();
        assert_eq!(hints, expected);
        let tail: Vec<&str> = output.lines().rev().take(20).collect();
        assert!(won, "not won: {tail:?}");
        assert!(output.contains(&format!("won in {} moves", line.len())));
    }

    #[test]
    fn a_practice_game_is_won_by_the_solver_line_with_a_refusal_and_an_undo() {
        let game = GameKind::ThreeBlindMice;
        let deal = first_winnable_deal(game, 1.., Budget::positions(PRACTICE_BUDGET))
            .expect("the solver replays")
            .expect("a winnable deal");
        let line = solve_deal(game, deal.seed, Budget::positions(PRACTICE_BUDGET))
            .expect("the solver replays")
            .solution;
        let mut script = format!("nonsense\n{}\nu\n", line[0]);
        for text in &line {
            script.push_str(text);
            script.push('\n');
        }
        let mut output = Vec::new();
        let won = practice(game, deal.seed, None, script.as_bytes(), &mut output)
            .expect("writing to a vector");
        let output = String::from_utf8_lossy(&output);
        assert!(won, "{output}");
        assert!(output.contains("refused: "), "{output}");
        assert!(output.contains("took back"), "{output}");
        assert!(output.contains(&format!("won in {} moves", line.len())));
    }
}
