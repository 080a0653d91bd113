//! The client's commands, from parsed arguments to a finished run: practice
//! offline, play, create, join and watch online, the bot, and the player's
//! commands: register, daily, leaderboard and replay. `main.rs` calls
//! [`run_client`]; each race front end (`--plain` or the terminal UI) gets
//! a started [`Session`], the daily front ends an opened attempt.

use std::io::IsTerminal as _;
use std::time::Duration;

use anyhow::Context as _;
use patience_shared::game::GameKind;
use patience_shared::protocol::{RoomOptions, valid_player_name};

use crate::account::{self, AccountError};
use crate::bot::BotLevel;
use crate::cli::{Command, Online};
use crate::config::Store;
use crate::daily::{self, Opened};
use crate::net::{Connection, NetError};
use crate::replay::{Cursor, Replay};
use crate::session::{Entry, Session};
use crate::{leaderboard, plain};

/// Whether to use the line mode: asked for, or no terminal to draw on.
fn use_plain(asked: bool) -> bool {
    asked || !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal()
}

/// The name to play under: `--name`, else the remembered one, else the
/// login name, else "player". Remembers it.
fn resolve_name(given: Option<String>, store: &Store) -> String {
    let name = given
        .or_else(|| store.load().name)
        .or_else(|| std::env::var("USER").ok())
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "player".to_string());
    let _ = store.update(|settings| settings.name = Some(name.clone()));
    name
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Runs a client command (the inspection commands are `main`'s).
pub fn run_client(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Practice { game, seed, plain } => practice(game, seed, plain),
        Command::Bot {
            join,
            pace,
            level,
            server,
            name,
        } => runtime().and_then(|runtime| {
            runtime
                .block_on(crate::bot::run_at_level(
                    &server,
                    &name,
                    &join,
                    pace_of(pace),
                    level,
                    |line| println!("{line}"),
                ))
                .context("the bot stopped")
        }),
        Command::Play {
            game,
            bot,
            pace,
            bot_level,
            online,
        } => {
            let entry = if bot {
                Entry::Create {
                    game,
                    players: 2,
                    public: false,
                    options: RoomOptions::default(),
                }
            } else {
                Entry::Quick(game)
            };
            online_command(entry, online, bot.then(|| (pace_of(pace), bot_level)))
        }
        Command::Create {
            game,
            players,
            private,
            undo,
            open_boards,
            online,
        } => online_command(
            Entry::Create {
                game,
                players,
                // Strangers never agreed to open boards: such rooms are private.
                public: !private && !open_boards,
                options: RoomOptions {
                    undo_allowed: undo,
                    time_limit_ms: None,
                    open_boards,
                },
            },
            online,
            None,
        ),
        Command::Join { code, online } => online_command(Entry::Join(code), online, None),
        Command::Watch { code, online } => online_command(Entry::Watch(code), online, None),
        Command::Register {
            name,
            server,
            force,
        } => register(&name, &server, force),
        Command::Daily { game, online } => daily_command(game, online),
        Command::Leaderboard {
            game,
            date,
            limit,
            json,
            server,
        } => runtime()?.block_on(async {
            let store = Store::from_environment();
            let (page, warnings) = leaderboard::fetch(&server, &store, game, date, limit)
                .await
                .with_context(|| format!("asking {server} for the leaderboard"))?;
            for warning in warnings {
                eprintln!("{warning}");
            }
            if json {
                println!("{}", leaderboard::page_json(&page));
            } else {
                println!("{}", leaderboard::page_text(&page));
            }
            Ok(())
        }),
        Command::Replay {
            race_id,
            server,
            plain,
            speed,
            seat,
        } => replay_command(race_id, &server, plain, speed, seat),
        _ => anyhow::bail!("not a client command"),
    }
}

/// `patience register NAME`: a new account, its token saved in the config
/// directory, and the warning that the token is the only key to it.
fn register(name: &str, server: &str, force: bool) -> anyhow::Result<()> {
    if !valid_player_name(name) {
        return Err(AccountError::InvalidName(name.to_string()).into());
    }
    let store = Store::from_environment();
    if !force && let Some(stored) = store.account(server) {
        return Err(AccountError::AlreadyRegistered {
            server: stored.server,
            name: stored.name,
            player: stored.player,
        }
        .into());
    }
    runtime()?.block_on(async {
        let mut connection = Connection::open(server, name)
            .await
            .with_context(|| format!("connecting to {server}"))?;
        let registered = account::register(&mut connection, name, &store).await;
        connection.close().await;
        let (account, path) = registered?;
        println!("{}", account::registered_text(&account, &path));
        Ok(())
    })
}

/// `patience daily GAME`: opens the attempt and plays it in the chosen
/// front end. Today's deal played already is not an error (exit status 0).
fn daily_command(game: GameKind, online: Online) -> anyhow::Result<()> {
    let store = Store::from_environment();
    if let (Some(given), Some(account)) = (&online.name, store.account(&online.server))
        && !given.eq_ignore_ascii_case(&account.name)
    {
        eprintln!(
            "note: --name is for a first registration; an account is stored for this server: playing as {}",
            account.name
        );
    }
    let name = online.name.or_else(|| store.load().name);
    let plain = use_plain(online.plain);
    runtime()?.block_on(async move {
        match daily::open(&online.server, &store, game, name, |line| {
            println!("{line}")
        })
        .await?
        {
            Opened::AlreadyPlayed { notes } => {
                for note in notes {
                    println!("{note}");
                }
                Ok(())
            }
            Opened::Attempt(attempt) => {
                let daily::Attempt {
                    connection,
                    state,
                    notes,
                } = *attempt;
                if plain {
                    daily::plain(
                        connection,
                        state,
                        notes,
                        plain::stdin_lines(),
                        std::io::stdout(),
                    )
                    .await
                } else {
                    crate::tui::daily::run(connection, state, notes).await
                }
            }
        }
    })
}

/// `patience replay RACE_ID`: fetches the race and plays it back.
fn replay_command(
    race_id: u64,
    server: &str,
    plain: bool,
    speed: f64,
    seat: Option<u8>,
) -> anyhow::Result<()> {
    let store = Store::from_environment();
    let (record, warnings) = runtime()?
        .block_on(crate::replay::fetch(server, &store, race_id))
        .with_context(|| format!("asking {server} for race {race_id}"))?;
    for warning in warnings {
        eprintln!("{warning}");
    }
    let replay = Replay::of(record);
    let track = match seat {
        None => 0,
        Some(number) => replay.track_of(number.saturating_sub(1)).with_context(|| {
            format!(
                "race {race_id} has no seat {number}; its seats are 1 to {}",
                replay.tracks.len()
            )
        })?,
    };
    if use_plain(plain) {
        println!(
            "{}",
            crate::replay::plain_text(&replay, seat.map(|number| number.saturating_sub(1)))
        );
        return Ok(());
    }
    crate::tui::replay::run(&replay, Cursor::new(track, speed))
}

fn pace_of(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds.clamp(0.0, 600.0))
}

fn practice(
    game: patience_shared::game::GameKind,
    seed: Option<u64>,
    plain: bool,
) -> anyhow::Result<()> {
    if seed.is_none() && std::io::stderr().is_terminal() {
        eprintln!("Looking for a deal the solver proves winnable…");
    }
    let (seed, note) = plain::practice_deal(game, seed);
    if use_plain(plain) {
        let stdin = std::io::stdin();
        plain::practice(game, seed, note.as_deref(), stdin.lock(), std::io::stdout())?;
        return Ok(());
    }
    crate::tui::practice(game, seed, note)
}

fn online_command(
    entry: Entry,
    online: Online,
    bot: Option<(Duration, BotLevel)>,
) -> anyhow::Result<()> {
    let store = Store::from_environment();
    let name = resolve_name(online.name, &store);
    let plain = use_plain(online.plain);
    runtime()?.block_on(async move {
        let (mut session, mut notes) = Session::start(&online.server, &name, entry, store)
            .await
            .map_err(|error| match error {
                // These say what went wrong, and where, on their own.
                NetError::Unreachable { .. } | NetError::NotAdmitted { .. } => {
                    anyhow::Error::new(error)
                }
                other => {
                    anyhow::Error::new(other).context(format!("connecting to {}", online.server))
                }
            })?;
        if let Some((pace, level)) = bot {
            // The room's code comes with `room_joined`; the bot joins with it.
            while session.state.room.is_none() {
                let (_, more) = session.recv().await?;
                notes.extend(more);
                if session.state.closed.is_some() {
                    anyhow::bail!("the server refused the room: {}", notes.join("; "));
                }
            }
            if let Some(room) = &session.state.room {
                let (server, code) = (online.server.clone(), room.code.clone());
                tokio::spawn(async move {
                    let bot = crate::bot::run_at_level(&server, "bot", &code, pace, level, |_| {});
                    if let Err(error) = bot.await {
                        eprintln!("the bot stopped: {error}");
                    }
                });
            }
        }
        if plain {
            plain::online(session, notes, plain::stdin_lines(), std::io::stdout()).await
        } else {
            crate::tui::online(session, notes).await
        }
    })
}
