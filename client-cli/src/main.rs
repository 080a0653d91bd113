//! `patience`: thin entry point; the commands live in the `patience_cli` library.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use patience_cli::cli::{Cli, Command};
use patience_cli::{app, inspect, solve};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(output) => {
            if !output.is_empty() {
                // A closed pipe (`patience deal ... | head`) is the reader's choice, not an error.
                let _ = writeln!(std::io::stdout().lock(), "{output}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("patience: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<String> {
    Ok(match cli.command {
        Command::Deal { game, seed, json } => inspect::deal(game, seed, json),
        Command::Moves {
            game,
            seed,
            play,
            json,
        } => inspect::moves(game, seed, &play, json)?,
        Command::Solve {
            game,
            seed,
            budget,
            max_seconds,
            json,
        } => solve::solve(game, seed, budget, max_seconds, json)?,
        Command::Survey {
            game,
            deals,
            from,
            budget,
            threads,
            json,
        } => solve::survey(game, deals, from, budget, threads, json)?,
        client => {
            app::run_client(client)?;
            String::new()
        }
    })
}
