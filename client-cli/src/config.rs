//! What the client remembers between runs: the player's name and the seat
//! of a race in progress, so a client that crashed or lost its network takes
//! its seat back when started again.
//!
//! Stored as JSON in `client.json` in the user's config directory
//! (`$XDG_CONFIG_HOME/patience` on Linux), or in `$PATIENCE_CONFIG_DIR` when
//! that is set, which keeps tests hermetic. A missing or unreadable file is
//! an empty configuration, never an error: losing it only costs a resume.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The environment variable that overrides the config directory.
pub const CONFIG_DIR_ENV: &str = "PATIENCE_CONFIG_DIR";

/// The file name inside the config directory.
const FILE_NAME: &str = "client.json";

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
}

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
        let mut settings = self.load();
        change(&mut settings);
        self.save(&settings)
    }
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
        };
        store
            .update(|settings| {
                settings.name = Some("ada".into());
                settings.seat = Some(seat.clone());
            })
            .expect("the temp dir is writable");
        assert_eq!(store.load().seat, Some(seat));
        assert_eq!(store.load().name.as_deref(), Some("ada"));
        std::fs::write(directory.join(FILE_NAME), "not json").expect("writable");
        assert_eq!(store.load(), Settings::default());
        let _ = std::fs::remove_dir_all(&directory);
    }
}
