//! The client's commands, from parsed arguments to a finished run: practice
//! offline, play, create, join and watch online, the bot, and the player's
//! commands: register, daily, leaderboard and replay. `main.rs` calls
//! [`run_client`]; each race front end (`--plain` or the terminal UI) gets
//! a started [`Session`], the daily front ends an opened attempt.

use std::io::IsTerminal as _;
use std::time::Duration;

use anyhow::Context as _;
use patience_shared::bot::BotLevel;
use patience_shared::game::GameKind;
use patience_shared::protocol::{BotSeat, Period, RoomOptions, valid_player_name};

use crate::account::{self, AccountError};
use crate::cli::{Command, Online};
use crate::config::Store;
use crate::daily::{self, Opened};
use crate::net::{Connection, NetError};
use crate::replay::{Cursor, Replay};
use crate::session::{Entry, Session};
use crate::{leaderboard, live, plain, ratings, tournament};

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
                .block_on(crate::bot::run(
                    &server,
                    &name,
                    &join,
                    pace_of(pace),
                    level,
                    Store::none(),
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
                // The server runs the bot, in the room's second seat.
                let pace_ms =
                    pace.map(|pace| u32::try_from(pace_of(pace).as_millis()).unwrap_or(u32::MAX));
                Entry::Create {
                    game,
                    players: 2,
                    public: false,
                    options: RoomOptions::default(),
                    bots: vec![BotSeat {
                        level: bot_level,
                        pace_ms,
                    }],
                }
            } else {
                Entry::Quick(game)
            };
            online_command(entry, online, None)
        }
        Command::Create {
            game,
            players,
            private,
            undo,
            open_boards,
            best_of,
            rated,
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
                    best_of,
                    rated,
                },
                bots: Vec::new(),
            },
            online,
            None,
        ),
        Command::Join { code, online } => online_command(Entry::Join(code), online, None),
        Command::Lobby { game, online } => {
            let store = Store::from_environment();
            let name = resolve_name(online.name.clone(), &store);
            let plain = use_plain(online.plain);
            let picked = runtime()?.block_on(async {
                let mut connection = Connection::open(&online.server, &name).await?;
                if plain {
                    crate::tui::lobby::plain(&mut connection, game).await?;
                    return Ok(None);
                }
                crate::tui::online::lobby(&mut connection, game).await
            })?;
            match picked {
                Some(code) => online_command(Entry::Join(code), online, None),
                None => Ok(()),
            }
        }
        Command::Watch { code, online } => online_command(Entry::Watch(code), online, None),
        Command::Register {
            name,
            server,
            force,
        } => register(&name, &server, force),
        Command::SignInCode { server } => sign_in_code(&server),
        Command::SignIn {
            code,
            server,
            force,
        } => sign_in(&code, &server, force),
        Command::Daily { game, online } => daily_command(game, online),
        Command::Leaderboard {
            game,
            date,
            limit,
            json,
            follow,
            plain,
            days,
            before,
            server,
        } => {
            if days {
                days_command(game, before, limit, json, &server)
            } else if follow {
                follow_command(game, date, limit, json, plain, &server)
            } else {
                leaderboard_command(game, date, limit, json, &server)
            }
        }
        Command::Stats { name, json, server } => runtime()?.block_on(async {
            let store = Store::from_environment();
            let (record, warnings) = tournament::fetch_record(&server, &store, name)
                .await
                .with_context(|| format!("asking {server} for the records"))?;
            print_answer(&warnings, json, &record, tournament::record_text);
            Ok(())
        }),
        Command::Standings {
            game,
            week,
            month,
            limit,
            json,
            server,
        } => {
            let (period, key) = match (week, month) {
                (_, Some(key)) => (Period::Month, key),
                (Some(key), None) => (Period::Week, key),
                (None, None) => (Period::Week, None),
            };
            runtime()?.block_on(async {
                let store = Store::from_environment();
                let (page, warnings) =
                    tournament::fetch_standings(&server, &store, game, period, key, limit)
                        .await
                        .with_context(|| format!("asking {server} for the standings"))?;
                print_answer(&warnings, json, &page, tournament::standings_text);
                Ok(())
            })
        }
        Command::Ratings {
            game,
            limit,
            json,
            server,
        } => runtime()?.block_on(async {
            let store = Store::from_environment();
            let (list, warnings) = ratings::fetch_list(&server, &store, game, limit)
                .await
                .with_context(|| format!("asking {server} for the ratings"))?;
            print_answer(&warnings, json, &list, ratings::list_text);
            Ok(())
        }),
        Command::Rating {
            game,
            name,
            limit,
            json,
            server,
        } => runtime()?.block_on(async {
            let store = Store::from_environment();
            let (history, warnings) = ratings::fetch_history(&server, &store, game, name, limit)
                .await
                .with_context(|| format!("asking {server} for the rating"))?;
            print_answer(&warnings, json, &history, ratings::history_text);
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

/// Prints an answer's warnings to standard error, then the answer as JSON
/// or as `text` draws it.
fn print_answer<T: serde::Serialize>(
    warnings: &[String],
    json: bool,
    answer: &T,
    text: impl FnOnce(&T) -> String,
) {
    for warning in warnings {
        eprintln!("{warning}");
    }
    if json {
        println!("{}", tournament::json(answer));
    } else {
        println!("{}", text(answer));
    }
}

/// `patience leaderboard GAME`: one day's page.
fn leaderboard_command(
    game: GameKind,
    date: Option<String>,
    limit: Option<u32>,
    json: bool,
    server: &str,
) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let store = Store::from_environment();
        let (page, warnings) = leaderboard::fetch(server, &store, game, date, limit)
            .await
            .with_context(|| format!("asking {server} for the leaderboard"))?;
        print_answer(&warnings, json, &page, leaderboard::page_text);
        Ok(())
    })
}

/// `patience leaderboard GAME --days`: the past days.
fn days_command(
    game: GameKind,
    before: Option<String>,
    limit: Option<u32>,
    json: bool,
    server: &str,
) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let store = Store::from_environment();
        let (page, warnings) = tournament::fetch_days(server, &store, game, before, limit)
            .await
            .with_context(|| format!("asking {server} for the past days"))?;
        print_answer(&warnings, json, &page, tournament::days_text);
        Ok(())
    })
}

/// `patience leaderboard GAME --follow`: the day's page, live, on the
/// screen, as lines (`--plain`) or as JSON lines (`--json`).
fn follow_command(
    game: GameKind,
    date: Option<String>,
    limit: Option<u32>,
    json: bool,
    plain: bool,
    server: &str,
) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let store = Store::from_environment();
        let (connection, board, warnings) =
            live::follow(server, &store, game, date, limit)
                .await
                .with_context(|| format!("asking {server} to follow the leaderboard"))?;
        for warning in warnings {
            eprintln!("{warning}");
        }
        if json || use_plain(plain) {
            let output = if json {
                live::Output::JsonLines
            } else {
                live::Output::Text
            };
            live::plain(connection, board, output, std::io::stdout())
                .await
                .context("following the leaderboard")
        } else {
            crate::tui::live::run(connection, board).await
        }
    })
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

/// `patience sign-in-code`: a one-time code for the account stored for
/// `server`, to sign in on another device.
fn sign_in_code(server: &str) -> anyhow::Result<()> {
    let store = Store::from_environment();
    if store.account(server).is_none() {
        return Err(AccountError::NoAccount(server.to_string()).into());
    }
    runtime()?.block_on(async {
        let (mut connection, account, _) =
            account::connect(server, &store, account::Anonymous::Allowed)
                .await
                .with_context(|| format!("signing in on {server}"))?;
        let asked = account::request_sign_in_code(&mut connection).await;
        connection.close().await;
        let (code, expires_in_ms) = asked?;
        let account = account.ok_or_else(|| AccountError::NoAccount(server.to_string()))?;
        println!(
            "{}",
            account::sign_in_code_text(&account, &code, expires_in_ms)
        );
        Ok(())
    })
}

/// `patience sign-in CODE`: redeems a code from another device and keeps
/// the new token as the account for `server`.
fn sign_in(code: &str, server: &str, force: bool) -> anyhow::Result<()> {
    let store = Store::from_environment();
    if !force && let Some(stored) = store.account(server) {
        anyhow::bail!(
            "an account is stored for {} already ({}, player {}); signing in replaces its token: pass --force to do so",
            stored.server,
            stored.name,
            stored.player
        );
    }
    let hello_name = store
        .load()
        .name
        .filter(|name| valid_player_name(name))
        .unwrap_or_else(|| "player".into());
    runtime()?.block_on(async {
        let mut connection = Connection::open(server, &hello_name)
            .await
            .with_context(|| format!("connecting to {server}"))?;
        let redeemed = account::redeem_sign_in_code(&mut connection, code, &store).await;
        connection.close().await;
        let (account, path) = redeemed?;
        println!(
            "signed in as {} (player {}) on {}; the token for this device is saved in {path}",
            account.name, account.player, account.server
        );
        Ok(())
    })
}

/// `patience daily GAME`: signs in, shows the terms, opens the attempt when
/// the player starts (its clock starts then) and plays it in the chosen
/// front end. Today's deal played already is not an error (exit status 0),
/// nor is leaving before the start.
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
        let mut connection =
            daily::connect(&online.server, &store, name, |line| println!("{line}")).await?;
        if !plain {
            return crate::tui::daily::run(connection, game).await;
        }
        // The player starts the clock: nothing of the deal comes before.
        let mut input = plain::stdin_lines();
        if !daily::wait_for_start(&mut connection, game, &mut input, std::io::stdout()).await? {
            connection.close().await;
            return Ok(());
        }
        match daily::start(connection, game).await? {
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
                daily::plain(connection, state, notes, input, std::io::stdout()).await
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
    // NaN (a pace of "nan") is no pace: 0.
    Duration::try_from_secs_f64(seconds.clamp(0.0, 600.0)).unwrap_or_default()
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

/// A saved seat this command would take the place of, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryChoice {
    /// How the session enters: the command's own entry, or a join of the
    /// saved seat's room (which takes the seat back).
    pub entry: Entry,
    /// What to tell the player about the saved seat.
    pub notes: Vec<String>,
    /// When taking the seat back: the command's own entry, to go on with
    /// if the room will not have us back.
    pub instead: Option<Entry>,
}

/// Decides between a seat saved for `server` and the command's `entry`.
/// `join` of the saved room takes it back, `watch` leaves it be; any other
/// command asks `ask` (`Some(true)`: take the seat back, `Some(false)`: go
/// on with the command, `None`: nobody to ask, so the command goes on).
/// A seat not taken back is forgotten, with its bot's, and the player is
/// told so: the command typed wins, but never in silence.
pub fn choose_entry(
    entry: Entry,
    server: &str,
    store: &Store,
    ask: impl FnOnce(&str) -> Option<bool>,
) -> EntryChoice {
    let Some(seat) = store.load().seat.filter(|seat| seat.server == server) else {
        return EntryChoice {
            entry,
            notes: Vec::new(),
            instead: None,
        };
    };
    let race = match seat.game {
        Some(game) => format!("your {} race in room {}", game.title(), seat.code),
        None => format!("your race in room {}", seat.code),
    };
    match &entry {
        Entry::Join(code) if code.eq_ignore_ascii_case(&seat.code) => EntryChoice {
            entry,
            notes: Vec::new(),
            instead: None,
        },
        Entry::Watch(_) => EntryChoice {
            entry,
            notes: vec![format!(
                "{race} is still open: `patience join {}` takes it back",
                seat.code
            )],
            instead: None,
        },
        _ => {
            let question = format!("{race} is still open. Take it back instead? [Y/n] ");
            if ask(&question) == Some(true) {
                return EntryChoice {
                    entry: Entry::Join(seat.code.clone()),
                    notes: vec![format!("taking back {race}")],
                    instead: Some(entry),
                };
            }
            let _ = store.update(|settings| {
                settings.seat = None;
                if settings
                    .bot_seat
                    .as_ref()
                    .is_some_and(|bot| bot.code == seat.code)
                {
                    settings.bot_seat = None;
                }
            });
            EntryChoice {
                entry,
                notes: vec![format!(
                    "not taking back {race}: its seat is given up for this command"
                )],
                instead: None,
            }
        }
    }
}

/// Asks a yes-or-no question on the terminal; `None` when there is no
/// terminal to ask on. An empty answer is yes.
fn ask_on_terminal(question: &str) -> Option<bool> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return None;
    }
    eprint!("{question}");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).ok()?;
    Some(!answer.trim().to_ascii_lowercase().starts_with('n'))
}

fn online_command(
    entry: Entry,
    online: Online,
    bot: Option<(Duration, BotLevel)>,
) -> anyhow::Result<()> {
    let store = Store::from_environment();
    let name = resolve_name(online.name, &store);
    let plain = use_plain(online.plain);
    let choice = choose_entry(entry, &online.server, &store, ask_on_terminal);
    if !plain {
        // The screen's footer shows only the last line: these stay readable
        // in the terminal after it.
        for note in &choice.notes {
            eprintln!("{note}");
        }
    }
    runtime()?.block_on(async move {
        let mut notes = choice.notes;
        let mut started = Session::start(&online.server, &name, choice.entry, store.clone()).await;
        if let (
            Err(NetError::NotAdmitted { message, .. } | NetError::RoomClosed { message, .. }),
            Some(entry),
        ) = (&started, choice.instead)
        {
            // The seat is gone and its room will not seat us anew: the
            // command typed goes on.
            notes.push(format!("{message}; going on with this command"));
            started = Session::start(&online.server, &name, entry, store.clone()).await;
        }
        let (mut session, started_notes) = started.map_err(|error| match error {
            // These say what went wrong, and where, on their own.
            NetError::Unreachable { .. }
            | NetError::NotAdmitted { .. }
            | NetError::RoomClosed { .. } => anyhow::Error::new(error),
            other => anyhow::Error::new(other).context(format!("connecting to {}", online.server)),
        })?;
        notes.extend(started_notes);
        let (server, bots) = (online.server.clone(), store.clone());
        start_bot(
            &mut session,
            &online.server,
            &store,
            bot,
            &mut notes,
            |start| {
                spawn_bot(server.clone(), start, bots.clone());
            },
        )
        .await?;
        let code = session.state.room.as_ref().map(|room| room.code.clone());
        let outcome = if plain {
            plain::online(session, notes, plain::stdin_lines(), std::io::stdout()).await
        } else {
            crate::tui::online::play(session, notes).await
        };
        forget_orphaned_bot(&store, code.as_deref());
        outcome
    })
}

/// Once the player has left room `code` (its seat is no longer saved), the
/// bot that raced there with it ends with this process: its seat is not
/// worth keeping.
fn forget_orphaned_bot(store: &Store, code: Option<&str>) {
    let Some(code) = code else { return };
    let settings = store.load();
    let same_room = |seat: &crate::config::SavedSeat| seat.code.eq_ignore_ascii_case(code);
    if settings.bot_seat.as_ref().is_some_and(same_room)
        && !settings.seat.as_ref().is_some_and(same_room)
    {
        let _ = store.update(|settings| settings.bot_seat = None);
    }
}

/// A bot to start in a room: `play --bot`'s, or the one a restarted client
/// brings back.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BotStart {
    /// The room's code.
    code: String,
    /// Its time per move.
    pace: Duration,
    /// How hard it plays.
    level: BotLevel,
}

/// Starts the bot that goes with `session`, through `spawn`: a resumed
/// race brings back the bot saved with it (at the pace and level it was
/// started with, `strong` for a seat saved before levels were kept); a new
/// race with `bot` asked for waits for the room's code and starts one.
///
/// Not cancel-safe: dropped while waiting for the room, the messages
/// already read are lost to the session's state.
async fn start_bot(
    session: &mut Session,
    server: &str,
    store: &Store,
    bot: Option<(Duration, BotLevel)>,
    notes: &mut Vec<String>,
    mut spawn: impl FnMut(BotStart),
) -> anyhow::Result<()> {
    let saved_bot = store.load().bot_seat.filter(|bot| {
        bot.server == server
            && session
                .state
                .room
                .as_ref()
                .is_some_and(|room| room.code.eq_ignore_ascii_case(&bot.code))
    });
    if session.resumed() {
        // The bot this race was started with died with the client: it
        // takes its own seat back, as it was.
        if let Some(bot) = saved_bot {
            spawn(BotStart {
                code: bot.code,
                pace: Duration::from_millis(bot.pace_ms.unwrap_or(0)),
                level: bot.level.unwrap_or_default(),
            });
            notes.push("the bot is back too".into());
        }
    } else if let Some((pace, level)) = bot {
        // The room's code comes with `room_joined`; the bot joins with it.
        while session.state.room.is_none() {
            let (_, more) = session.recv().await?;
            notes.extend(more);
            if session.state.closed.is_some() {
                anyhow::bail!("the server refused the room: {}", notes.join("; "));
            }
        }
        if let Some(room) = &session.state.room {
            spawn(BotStart {
                code: room.code.clone(),
                pace,
                level,
            });
        }
    }
    Ok(())
}

/// Starts a bot in its room, keeping its seat in `store` so that it comes
/// back with a restarted client.
fn spawn_bot(server: String, start: BotStart, store: Store) {
    tokio::spawn(async move {
        let BotStart { code, pace, level } = start;
        let bot = crate::bot::run(&server, "bot", &code, pace, level, store, |_| {});
        if let Err(error) = bot.await {
            eprintln!("the bot stopped: {error}");
        }
    });
}

#[cfg(test)]
mod tests {
    use patience_shared::protocol::RoomOptions;

    use super::*;
    use crate::config::SavedSeat;

    fn seat(code: &str) -> SavedSeat {
        SavedSeat {
            server: "ws://s".into(),
            code: code.into(),
            token: "t".into(),
            last_seq: 1,
            game: Some(GameKind::ThreeBlindMice),
            pace_ms: None,
            level: None,
        }
    }

    #[test]
    fn a_saved_seat_is_taken_back_only_when_asked_for_and_never_in_silence() {
        let directory =
            std::env::temp_dir().join(format!("patience-entry-choice-{}", std::process::id()));
        let bot = Entry::Create {
            game: GameKind::Indian,
            players: 2,
            public: false,
            options: RoomOptions::default(),
            bots: Vec::new(),
        };
        let join_saved = Entry::Join("K7PQ3M".into());
        // (command, answer, the entry chosen, the seat still saved, a note?)
        let cases = [
            (join_saved.clone(), None, join_saved.clone(), true, false),
            (
                Entry::Watch("ZZZZZZ".into()),
                None,
                Entry::Watch("ZZZZZZ".into()),
                true,
                true,
            ),
            (bot.clone(), Some(true), join_saved.clone(), true, true),
            (bot.clone(), Some(false), bot.clone(), false, true),
            (bot.clone(), None, bot.clone(), false, true),
            (
                Entry::Join("OTHER1".into()),
                Some(false),
                Entry::Join("OTHER1".into()),
                false,
                true,
            ),
            (
                Entry::Quick(GameKind::Indian),
                Some(true),
                join_saved.clone(),
                true,
                true,
            ),
        ];
        for (command, answer, expected, kept, noted) in cases {
            let _ = std::fs::remove_dir_all(&directory);
            let store = Store::in_directory(&directory);
            store
                .update(|settings| {
                    settings.seat = Some(seat("K7PQ3M"));
                    settings.bot_seat = Some(seat("K7PQ3M"));
                })
                .expect("the temp dir is writable");
            let mut asked = false;
            let choice = choose_entry(command.clone(), "ws://s", &store, |question| {
                asked = true;
                assert!(
                    question.contains("Three Blind Mice race in room K7PQ3M"),
                    "{question}"
                );
                answer
            });
            let settings = store.load();
            assert_eq!(choice.entry, expected, "{command:?}");
            assert_eq!(settings.seat.is_some(), kept, "{command:?}");
            assert_eq!(
                settings.bot_seat.is_some(),
                kept,
                "{command:?}: the bot's seat goes too"
            );
            assert_eq!(!choice.notes.is_empty(), noted, "{command:?}");
            assert_eq!(choice.instead.is_some(), expected != command, "{command:?}");
            let asks = !matches!(command, Entry::Watch(_)) && command != join_saved;
            assert_eq!(asked, asks, "{command:?}");
        }
        // A bot whose player left its room is forgotten; one whose player
        // will come back is kept.
        for (player_kept, bot_kept) in [(true, true), (false, false)] {
            let _ = std::fs::remove_dir_all(&directory);
            let store = Store::in_directory(&directory);
            store
                .update(|settings| {
                    settings.seat = player_kept.then(|| seat("K7PQ3M"));
                    settings.bot_seat = Some(seat("K7PQ3M"));
                })
                .expect("the temp dir is writable");
            forget_orphaned_bot(&store, Some("K7PQ3M"));
            assert_eq!(store.load().bot_seat.is_some(), bot_kept, "{player_kept}");
        }
        // Another server's seat is not this command's business.
        let store = Store::in_directory(&directory);
        let choice = choose_entry(bot.clone(), "ws://elsewhere", &store, |_| Some(true));
        assert_eq!(choice.entry, bot);
        let _ = std::fs::remove_dir_all(&directory);
    }

    /// A restarted client brings back the bot of its race at the pace and
    /// level it was started with (`strong` for a seat saved before levels
    /// were kept); a new race with `--bot` starts one at the level asked
    /// for. Driven through a real session against the fake server.
    #[tokio::test]
    async fn a_restarted_client_brings_its_bot_back_at_the_level_it_was_started_with() {
        use patience_shared::protocol::{ClientMessage, Phase, ServerMessage};

        let room = patience_shared::protocol::RoomInfo {
            code: "K7PQ3M".into(),
            game: GameKind::Indian,
            max_players: 2,
            public: false,
            options: RoomOptions::default(),
            owner: Some(0),
            phase: Phase::Racing,
            players: Vec::new(),
            spectators: 0,
            series: None,
        };
        let (url, _) = crate::fake_server::start(move |message| match message {
            ClientMessage::Resume { .. } => vec![ServerMessage::Resumed {
                seq: 3,
                room: room.clone(),
                seat: 0,
                resume_token: "next".into(),
                elapsed_ms: Some(1_000),
            }],
            ClientMessage::CreateRoom { .. } => vec![ServerMessage::RoomJoined {
                seq: 1,
                room: patience_shared::protocol::RoomInfo {
                    phase: Phase::Lobby,
                    ..room.clone()
                },
                seat: Some(0),
                resume_token: Some("first".into()),
            }],
            _ => Vec::new(),
        })
        .await;
        let create = Entry::Create {
            game: GameKind::Indian,
            players: 2,
            public: false,
            options: RoomOptions::default(),
            bots: Vec::new(),
        };
        let pace = Duration::from_millis(900);
        // (the bot's saved level, or no saved race at all; --bot asked for;
        // the bot started)
        let cases = [
            (Some(Some(BotLevel::Easy)), None, BotLevel::Easy),
            (Some(Some(BotLevel::Normal)), None, BotLevel::Normal),
            (Some(None), None, BotLevel::Strong),
            (None, Some((pace, BotLevel::Easy)), BotLevel::Easy),
        ];
        for (saved, asked, expected) in cases {
            let directory = std::env::temp_dir().join(format!(
                "patience-bot-level-{}-{expected:?}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&directory);
            let store = Store::in_directory(&directory);
            let entry = match saved {
                Some(level) => {
                    store
                        .update(|settings| {
                            let saved_seat = |token: &str| SavedSeat {
                                server: url.clone(),
                                token: token.into(),
                                ..seat("K7PQ3M")
                            };
                            settings.seat = Some(saved_seat("player"));
                            settings.bot_seat = Some(SavedSeat {
                                pace_ms: Some(900),
                                level,
                                ..saved_seat("bot")
                            });
                        })
                        .expect("the temp dir is writable");
                    Entry::Join("K7PQ3M".into())
                }
                None => create.clone(),
            };
            let (mut session, _) = Session::start(&url, "ada", entry, store.clone())
                .await
                .expect("seated");
            assert_eq!(session.resumed(), saved.is_some(), "{saved:?}");
            let mut started = Vec::new();
            let mut notes = Vec::new();
            start_bot(&mut session, &url, &store, asked, &mut notes, |start| {
                started.push(start)
            })
            .await
            .expect("the bot starts");
            let expected = BotStart {
                code: "K7PQ3M".into(),
                pace,
                level: expected,
            };
            assert_eq!(started, vec![expected], "{saved:?} {asked:?}");
            let _ = std::fs::remove_dir_all(&directory);
        }
    }
}
