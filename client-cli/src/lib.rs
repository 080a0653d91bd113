//! The `patience` command: the terminal client of Patience Race and its
//! inspection tools.
//!
//! `main.rs` only parses arguments and reports errors; every command lives
//! here so the end-to-end tests drive the same code people run.
//!
//! - [`bot`]: bots that race at a human pace on a solver line.
//! - [`thinking`]: how long a bot may think about a move (its deadline).
//! - [`cli`]: the command-line grammar (clap).
//! - [`inspect`]: `deal` and `moves`, which show deals and legal moves as
//!   text or JSON.
//! - [`solve`]: `solve` and `survey`, the solver's commands.
//! - [`text`]: boards rendered as plain text.
//! - [`config`]: the name and the resume token kept between runs.
//! - [`net`]: the protocol client, one WebSocket to the race server.
//! - [`race`]: a room and its race as one client sees them (sans I/O).
//! - [`plain`]: the `--plain` line mode, online and in practice.
//! - [`session`]: entering a room, resuming a seat, reconnecting (and
//!   taking a rematch's seat).
//! - [`tui::lobby`]: `lobby`, the open public rooms, one key to take a seat.
//! - [`account`]: `register`, and signing in with the stored token.
//! - [`daily`]: `daily`, the player's attempt at the day's deal.
//! - [`leaderboard`]: `leaderboard`, a day's ranking as a table or JSON.
//! - [`live`]: a day's leaderboard followed live (`leaderboard --follow`,
//!   and beside the daily attempt).
//! - [`tournament`]: past days, a player's records and the weekly and
//!   monthly standings (`leaderboard --days`, `stats`, `standings`).
//! - [`ratings`]: `ratings` and `rating`, a game's rating list and a
//!   player's rating with its history.
//! - [`replay`]: `replay`, a finished race played back from its logs.

pub mod account;
pub mod app;
pub mod bot;
pub mod cli;
pub mod config;
pub mod daily;
#[cfg(test)]
mod fake_server;
pub mod inspect;
pub mod leaderboard;
pub mod live;
pub mod net;
pub mod plain;
pub mod race;
pub mod ratings;
pub mod replay;
pub mod session;
pub mod solve;
pub mod text;
pub mod thinking;
pub mod tournament;
pub mod tui;

#[cfg(test)]
mod tests {
    /// The public `async fn`s of `dir` (recursively) whose doc comment does
    /// not say how they bear being dropped (cancelled), as `path: line`.
    fn undocumented_cancel_safety(dir: &std::path::Path, found: &mut Vec<String>) {
        let entries = std::fs::read_dir(dir).expect("the source directory reads");
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                undocumented_cancel_safety(&path, found);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).expect("a source file reads");
            let lines: Vec<&str> = source.lines().collect();
            for (index, line) in lines.iter().enumerate() {
                let line = line.trim_start();
                if !(line.starts_with("pub async fn") || line.starts_with("pub(crate) async fn")) {
                    continue;
                }
                let doc: String = lines[..index]
                    .iter()
                    .rev()
                    .map(|line| line.trim_start())
                    .take_while(|line| line.starts_with("///") || line.starts_with("#["))
                    .collect();
                if !doc.to_lowercase().contains("cancel-safe") {
                    found.push(format!("{}: {line}", path.display()));
                }
            }
        }
    }

    /// Every public `async fn` of the client says whether it is
    /// cancel-safe: front ends `select!` them, and a cancel at the wrong
    /// point can lose a rotated resume token.
    #[test]
    fn every_public_async_fn_documents_its_cancel_safety() {
        let mut found = Vec::new();
        undocumented_cancel_safety(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut found,
        );
        assert!(
            found.is_empty(),
            "no word on cancel safety:\n{}",
            found.join("\n")
        );
    }

    /// The client's top-level modules import each other in layers: no
    /// cycle, as in the server.
    #[test]
    fn the_modules_form_no_cycle() {
        use patience_shared::module_graph::{cycle, module_graph};
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let graph = module_graph(&source, &[]);
        // The check sees real edges: the session uses the connection.
        assert!(graph["session"].contains("net"), "{graph:?}");
        assert_eq!(cycle(&graph), None, "{graph:#?}");
    }
}
