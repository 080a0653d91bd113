//! What the client remembers between runs: the player's name and the seat
//! of a race in progress, so a client that crashed or lost its network takes
//! its seat back when started again; and the registered accounts.
//!
//! Stored as JSON in the user's config directory (`$XDG_CONFIG_HOME/patience`
//! on Linux), or in `$PATIENCE_CONFIG_DIR` when that is set, which keeps
//! tests hermetic:
//!
//! - `client.json`: [`Settings`]. A missing or unreadable file is an empty
//!   configuration, never an error: losing it only costs a resume.
//! - `account.json`: [`Account`]s, one per server, each with its secret
//!   token, the only key to the account (the server keeps only a hash).
//!   Written readable by its owner only (0600 on Unix). An unreadable file
//!   reads as no account, but is never overwritten by accident: saving over
//!   a file that does not parse is refused.

use std::path::PathBuf;

use patience_shared::bot::BotLevel;
use patience_shared::game::GameKind;
use serde::{Deserialize, Serialize};

/// The environment variable that overrides the config directory.
pub const CONFIG_DIR_ENV: &str = "PATIENCE_CONFIG_DIR";

/// The file name inside the config directory.
const FILE_NAME: &str = "client.json";

/// The accounts' file name inside the config directory.
pub const ACCOUNT_FILE_NAME: &str = "account.json";

/// A registered player on one server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The server's URL as given, without a trailing `/`.
    pub server: String,
    /// The player's id.
    pub player: u64,
    /// The player's name, as the server stored it.
    pub name: String,
    /// The secret token: the only key to the account.
    pub token: String,
}

/// The contents of `account.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Accounts {
    #[serde(default)]
    accounts: Vec<Account>,
}

/// A server URL as accounts are keyed: `ws://host:port/` and
/// `ws://host:port` are the same server.
pub fn server_key(server: &str) -> &str {
    server.trim().trim_end_matches('/')
}

/// A seat held in a race, enough to take it back with `resume`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSeat {
    /// The server's URL, so a token is only offered to the server that issued it.
    pub server: String,
    /// The room's code, for messages.
    pub code: String,
    /// The secret resume token.
    pub token: String,
    /// The last room event seen.
    pub last_seq: u64,
    /// The room's game, to name the race when asking whether to take it
    /// back (absent in files written before it was kept).
    #[serde(default)]
    pub game: Option<GameKind>,
    /// For a bot's seat: its seconds per move, in milliseconds, so a bot
    /// brought back races at the pace it was started with.
    #[serde(default)]
    pub pace_ms: Option<u64>,
    /// For a bot's seat: its level, so a bot brought back plays as hard as
    /// it was started to (absent in files written before it was kept,
    /// which read as [`BotLevel::Strong`], the default).
    #[serde(default)]
    pub level: Option<BotLevel>,
}

/// The remembered settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The name last used.
    #[serde(default)]
    pub name: Option<String>,
    /// The seat of a race in progress.
    #[serde(default)]
    pub seat: Option<SavedSeat>,
    /// The seat of the bot `play --bot` started in the process that holds
    /// [`Settings::seat`]: a restarted client brings the bot back into that
    /// race with it.
    #[serde(default)]
    pub bot_seat: Option<SavedSeat>,
}

/// Serialises [`Store::update`] within this process.
static UPDATES: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Where the settings live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    path: Option<PathBuf>,
}

impl Store {
    /// The store in `$PATIENCE_CONFIG_DIR`, else the user's config directory.
    pub fn from_environment() -> Store {
        let directory = std::env::var_os(CONFIG_DIR_ENV)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                directories::ProjectDirs::from("", "", "patience")
                    .map(|dirs| dirs.config_dir().to_path_buf())
            });
        Store {
            path: directory.map(|directory| directory.join(FILE_NAME)),
        }
    }

    /// A store in `directory`.
    pub fn in_directory(directory: impl Into<PathBuf>) -> Store {
        Store {
            path: Some(directory.into().join(FILE_NAME)),
        }
    }

    /// A store that remembers nothing (no home directory).
    pub fn none() -> Store {
        Store { path: None }
    }

    /// The settings, empty if there are none or they cannot be read.
    pub fn load(&self) -> Settings {
        self.path
            .as_ref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Writes the settings, creating the directory if needed.
    pub fn save(&self, settings: &Settings) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if let Some(directory) = path.parent() {
            std::fs::create_dir_all(directory)?;
        }
        let text = serde_json::to_string_pretty(settings).map_err(std::io::Error::other)?;
        // Write then rename, so a crash never leaves half a file.
        let temporary = path.with_extension("json.tmp");
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, path)
    }

    /// Changes the settings with `change` and saves them. Failing to save
    /// only loses a resume, so the error is returned for a warning at most.
    pub fn update(&self, change: impl FnOnce(&mut Settings)) -> std::io::Result<()> {
        // A player's and its bot's sessions both keep their seats in this
        // file: one read-change-write at a time, so neither loses the
        // other's new token.
        let _one_at_a_time = UPDATES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut settings = self.load();
        change(&mut settings);
        self.save(&settings)
    }

    /// Where the accounts are kept, if anywhere.
    pub fn account_path(&self) -> Option<PathBuf> {
        let directory = self.path.as_ref()?.parent()?;
        Some(directory.join(ACCOUNT_FILE_NAME))
    }

    /// The account stored for `server`, if any (and if the file reads).
    pub fn account(&self, server: &str) -> Option<Account> {
        self.accounts()
            .into_iter()
            .find(|account| account.server == server_key(server))
    }

    /// Every stored account, whatever its server.
    pub fn accounts(&self) -> Vec<Account> {
        self.account_path()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .and_then(|text| serde_json::from_str::<Accounts>(&text).ok())
            .map(|accounts| accounts.accounts)
            .unwrap_or_default()
    }

    /// Stores `account`, replacing any account of the same server, in a file
    /// only its owner may read. Returns the file's path.
    pub fn save_account(&self, account: &Account) -> std::io::Result<PathBuf> {
        let Some(path) = self.account_path() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no config directory to keep the account in (set PATIENCE_CONFIG_DIR)",
            ));
        };
        let mut accounts = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str::<Accounts>(&text).map_err(|error| {
                // Other accounts' tokens may be in there: never write over them.
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "{} does not read as accounts ({error}); move it away first",
                        path.display()
                    ),
                )
            })?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Accounts::default(),
            Err(error) => return Err(error),
        };
        let mut account = account.clone();
        account.server = server_key(&account.server).to_string();
        accounts
            .accounts
            .retain(|kept| kept.server != account.server);
        accounts.accounts.push(account);
        if let Some(directory) = path.parent() {
            std::fs::create_dir_all(directory)?;
        }
        let text = serde_json::to_string_pretty(&accounts).map_err(std::io::Error::other)?;
        let temporary = path.with_extension("json.tmp");
        write_private(&temporary, text.as_bytes())?;
        std::fs::rename(&temporary, &path)?;
        Ok(path)
    }
}

/// Writes a file that only its owner may read or write (0600 on Unix),
/// from its creation on: the secret is never readable by others, not even
/// for an instant.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let _ = std::fs::remove_file(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_missing_files_are_empty() {
        let directory =
            std::env::temp_dir().join(format!("patience-config-{}", std::process::id()));
        let store = Store::in_directory(&directory);
        let _ = std::fs::remove_dir_all(&directory);
        assert_eq!(store.load(), Settings::default());
        let seat = SavedSeat {
            server: "ws://127.0.0.1:7878".into(),
            code: "K7PQ3M".into(),
            token: "secret".into(),
            last_seq: 9,
            game: Some(GameKind::Indian),
            pace_ms: None,
            level: None,
        };
        store
            .update(|settings| {
                settings.name = Some("ada".into());
                settings.seat = Some(seat.clone());
            })
            .expect("the temp dir is writable");
        assert_eq!(store.load().seat, Some(seat));
        assert_eq!(store.load().name.as_deref(), Some("ada"));
        // A seat saved before the game, the pace and the level were kept
        // still reads; a bot's level reads by its name.
        std::fs::write(
            directory.join(FILE_NAME),
            r#"{"seat":{"server":"s","code":"K7PQ3M","token":"t","last_seq":3},
                "bot_seat":{"server":"s","code":"K7PQ3M","token":"b","last_seq":3,"pace_ms":900,"level":"easy"}}"#,
        )
        .expect("writable");
        let settings = store.load();
        let old = settings.seat.expect("an old seat reads");
        assert_eq!(
            (old.game, old.pace_ms, old.level, old.last_seq),
            (None, None, None, 3)
        );
        let bot = settings.bot_seat.expect("a bot's seat reads");
        assert_eq!((bot.pace_ms, bot.level), (Some(900), Some(BotLevel::Easy)));
        std::fs::write(directory.join(FILE_NAME), "not json").expect("writable");
        assert_eq!(store.load(), Settings::default());
        let _ = std::fs::remove_dir_all(&directory);
    }

    fn account(server: &str, player: u64, name: &str) -> Account {
        Account {
            server: server.into(),
            player,
            name: name.into(),
            token: format!("token-of-{name}"),
        }
    }

    #[test]
    fn accounts_are_kept_per_server_in_a_private_file() {
        let directory =
            std::env::temp_dir().join(format!("patience-account-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        let store = Store::in_directory(&directory);
        assert_eq!(store.account("ws://a:1"), None);
        let path = store
            .save_account(&account("ws://a:1/", 1, "ada"))
            .expect("the temp dir is writable");
        store
            .save_account(&account("ws://b:2", 2, "bob"))
            .expect("writable");
        // A trailing slash names the same server.
        assert_eq!(
            store.account("ws://a:1"),
            Some(account("ws://a:1", 1, "ada"))
        );
        assert_eq!(store.account("ws://b:2/").map(|a| a.player), Some(2));
        // Registering again on a server replaces its account only.
        store
            .save_account(&account("ws://a:1", 3, "cyd"))
            .expect("writable");
        assert_eq!(
            store.account("ws://a:1").map(|a| a.name),
            Some("cyd".into())
        );
        assert_eq!(
            store.account("ws://b:2").map(|a| a.name),
            Some("bob".into())
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path)
                .expect("saved")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A damaged file reads as no account and is never written over.
        std::fs::write(&path, "{ not json").expect("writable");
        assert_eq!(store.account("ws://b:2"), None);
        assert!(store.save_account(&account("ws://c:3", 4, "dan")).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("{ not json")
        );
        assert!(
            Store::none()
                .save_account(&account("ws://a:1", 1, "ada"))
                .is_err()
        );
        let _ = std::fs::remove_dir_all(&directory);
    }
}
