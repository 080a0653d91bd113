//! Player accounts from the client's side: `patience register`, signing
//! in with the stored token before the daily deal, a leaderboard or a replay,
//! and carrying an account to another device with a one-time sign-in code
//! (`patience sign-in-code` prints one, `patience sign-in CODE` redeems one
//! from the page or another terminal).
//!
//! [`register`] and [`authenticate`] each send one request on an open
//! [`Connection`] and read its answer; [`connect`] opens a connection as
//! the account stored for the server (registering first when asked to and
//! none is stored). The account lives in `account.json` beside the client's
//! config ([`Store::save_account`]).

use patience_shared::protocol::{ClientMessage, ErrorCode, ServerMessage, valid_player_name};

use crate::config::{Account, Store, server_key};
use crate::net::{Connection, NetError, message_name};

/// Why an account could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// Another player has the name (names are unique whatever their case).
    #[error("the name {0:?} is taken on this server: choose another")]
    NameTaken(String),
    /// The name is taken, and an account of that name is stored for
    /// another URL: likely the same server under another address.
    #[error(
        "the name {name:?} is taken on this server; an account {name} is stored for {stored_for}: if that is the same server, give that URL with --server"
    )]
    NameTakenStoredElsewhere {
        /// The name.
        name: String,
        /// The URL the account is stored for.
        stored_for: String,
    },
    /// The name breaks the naming rules.
    #[error(
        "{0:?} is not a valid player name: 3 to 20 characters, ASCII letters, digits, `_` and `-`, starting with a letter"
    )]
    InvalidName(String),
    /// No name to register under.
    #[error("no player name: give one with --name (3 to 20 characters, starting with a letter)")]
    NoName,
    /// The server does not know the stored token.
    #[error(
        "the server does not know the stored account {name} (player {player}); its token in {path} no longer works"
    )]
    UnknownToken {
        /// The stored name.
        name: String,
        /// The stored id.
        player: u64,
        /// Where the account is stored.
        path: String,
    },
    /// An account is stored for the server already.
    #[error(
        "an account is stored for {server} already ({name}, player {player}); registering again replaces its token, the only key to it: pass --force to do so"
    )]
    AlreadyRegistered {
        /// The server.
        server: String,
        /// The stored name.
        name: String,
        /// The stored id.
        player: u64,
    },
    /// Registered, but the token could not be saved. The message shows the
    /// token, or the account would be lost with it.
    #[error(
        "registered {name} (player {player}) but could not save the account: {error}. Keep this token, the only key to the account: {token}"
    )]
    NotSaved {
        /// The new player's name.
        name: String,
        /// The new player's id.
        player: u64,
        /// The secret token.
        token: String,
        /// Why saving failed.
        error: std::io::Error,
    },
    /// The server refused for another reason.
    #[error("the server refused: {message}")]
    Refused {
        /// Its code.
        code: ErrorCode,
        /// Its words.
        message: String,
    },
    /// No account is stored for the server, so there is none to carry.
    #[error(
        "no account is stored for {0}: register with `patience register NAME`, or sign in with a code from another device (`patience sign-in CODE`)"
    )]
    NoAccount(String),
    /// The sign-in code is unknown, used already, or expired.
    #[error(
        "that sign-in code is unknown, used already, or expired: ask for a new one on the other device"
    )]
    InvalidCode,
    /// Signed in with a code, but the new token could not be saved.
    #[error(
        "signed in as {name} (player {player}) but could not save the account: {error}. Keep this token, the key to the account on this device: {token}"
    )]
    SignedInNotSaved {
        /// The player's name.
        name: String,
        /// The player's id.
        player: u64,
        /// The new token.
        token: String,
        /// Why saving failed.
        error: std::io::Error,
    },
    /// The server answered with something else.
    #[error("the server answered {0} instead")]
    Unexpected(&'static str),
    /// The connection failed.
    #[error(transparent)]
    Net(#[from] NetError),
}

/// Registers `name` on `connection` and stores the new account. Returns the
/// account and the file it is kept in.
///
/// Not cancel-safe: dropped after the request went out, the server may
/// have registered the name while its token is never stored.
pub async fn register(
    connection: &mut Connection,
    name: &str,
    store: &Store,
) -> Result<(Account, String), AccountError> {
    if !valid_player_name(name) {
        return Err(AccountError::InvalidName(name.to_string()));
    }
    connection
        .send(&ClientMessage::Register {
            name: name.to_string(),
        })
        .await?;
    match connection.recv().await? {
        ServerMessage::Registered {
            player,
            name,
            token,
        } => {
            let account = Account {
                server: server_key(connection.server()).to_string(),
                player,
                name,
                token,
            };
            keep_account(store, account).map_err(|(account, error)| AccountError::NotSaved {
                name: account.name,
                player: account.player,
                token: account.token,
                error,
            })
        }
        ServerMessage::Error { code, message } => Err(match code {
            ErrorCode::NameTaken => match store
                .accounts()
                .into_iter()
                .find(|account| account.name.eq_ignore_ascii_case(name))
            {
                Some(account) => AccountError::NameTakenStoredElsewhere {
                    name: name.to_string(),
                    stored_for: account.server,
                },
                None => AccountError::NameTaken(name.to_string()),
            },
            ErrorCode::InvalidName => AccountError::InvalidName(name.to_string()),
            code => AccountError::Refused { code, message },
        }),
        other => Err(AccountError::Unexpected(message_name(&other))),
    }
}

/// Says which player `connection` is, with the stored account's token.
///
/// Not cancel-safe: dropped between the request and its answer, the
/// answer is left unread on `connection`.
pub async fn authenticate(
    connection: &mut Connection,
    account: &Account,
    store: &Store,
) -> Result<(), AccountError> {
    connection
        .send(&ClientMessage::Authenticate {
            token: account.token.clone(),
        })
        .await?;
    match connection.recv().await? {
        ServerMessage::Authenticated { .. } => Ok(()),
        ServerMessage::Error {
            code: ErrorCode::InvalidToken,
            ..
        } => Err(AccountError::UnknownToken {
            name: account.name.clone(),
            player: account.player,
            path: store
                .account_path()
                .map_or_else(|| "the config".into(), |path| path.display().to_string()),
        }),
        ServerMessage::Error { code, message } => Err(AccountError::Refused { code, message }),
        other => Err(AccountError::Unexpected(message_name(&other))),
    }
}

/// Asks the server for a one-time sign-in code of the account
/// `connection` is signed in as: the code as shown (`K7PQ-3M9X`) and how
/// many milliseconds it works.
///
/// Not cancel-safe: dropped between the request and its answer, the
/// answer is left unread on `connection`.
pub async fn request_sign_in_code(
    connection: &mut Connection,
) -> Result<(String, u64), AccountError> {
    connection.send(&ClientMessage::RequestSignInCode).await?;
    match connection.recv().await? {
        ServerMessage::SignInCode {
            code,
            expires_in_ms,
        } => Ok((code, expires_in_ms)),
        ServerMessage::Error { code, message } => Err(AccountError::Refused { code, message }),
        other => Err(AccountError::Unexpected(message_name(&other))),
    }
}

/// Stores `account` as the one for its server and remembers its name for
/// the next commands; the account and the file it is kept in, or, if it
/// could not be stored, the account (whose token would otherwise be lost)
/// and why.
fn keep_account(
    store: &Store,
    account: Account,
) -> Result<(Account, String), (Account, std::io::Error)> {
    match store.save_account(&account) {
        Ok(path) => {
            let remembered = account.name.clone();
            let _ = store.update(|settings| settings.name = Some(remembered));
            Ok((account, path.display().to_string()))
        }
        Err(error) => Err((account, error)),
    }
}

/// Redeems a sign-in code on `connection` and stores the new token as the
/// account for the server (replacing any account stored for it). Returns
/// the account and the file it is kept in.
///
/// Not cancel-safe: dropped after the request went out, the code may be
/// used while its token is never stored.
pub async fn redeem_sign_in_code(
    connection: &mut Connection,
    code: &str,
    store: &Store,
) -> Result<(Account, String), AccountError> {
    connection
        .send(&ClientMessage::RedeemSignInCode {
            code: code.to_string(),
        })
        .await?;
    match connection.recv().await? {
        ServerMessage::SignedIn {
            player,
            name,
            token,
        } => {
            let account = Account {
                server: server_key(connection.server()).to_string(),
                player,
                name,
                token,
            };
            keep_account(store, account).map_err(|(account, error)| {
                AccountError::SignedInNotSaved {
                    name: account.name,
                    player: account.player,
                    token: account.token,
                    error,
                }
            })
        }
        ServerMessage::Error {
            code: ErrorCode::InvalidSignInCode,
            ..
        } => Err(AccountError::InvalidCode),
        ServerMessage::Error { code, message } => Err(AccountError::Refused { code, message }),
        other => Err(AccountError::Unexpected(message_name(&other))),
    }
}

/// What `patience sign-in-code` prints: the code, how long it works, and
/// what a person who sees it could do.
pub fn sign_in_code_text(account: &Account, code: &str, expires_in_ms: u64) -> String {
    format!(
        "{code}
         Type this code on another device (the web page, or `patience sign-in {code}`)          within {} minutes to sign in there as {} on {}. It works once.
         Anyone who types it first signs in as you: keep it to yourself.",
        expires_in_ms.div_ceil(60_000),
        account.name,
        account.server
    )
}

/// The plain warning shown once an account is made.
pub fn registered_text(account: &Account, path: &str) -> String {
    format!(
        "registered {} as player {} on {}\n\
         The account's token is saved in {path}.\n\
         That token is the only key to the account: the server keeps no copy \
         it could give back. Keep the file safe (back it up); if it is lost, \
         so is the account.",
        account.name, account.player, account.server
    )
}

/// What [`connect`] does without a stored account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Anonymous {
    /// Stay anonymous (leaderboards, replays).
    Allowed,
    /// Register under this name first, if any (the first daily play).
    Register(Option<String>),
}

/// A connection to `server` past `hello`, authenticated as the account
/// stored for it. Without one it registers (`Anonymous::Register`) or stays
/// anonymous. Returns the account, if any, and lines to show.
///
/// Cancel-safe in effect, except while it registers (see [`register`]):
/// dropped early, the connection it opened is dropped.
pub async fn connect(
    server: &str,
    store: &Store,
    without_account: Anonymous,
) -> Result<(Connection, Option<Account>, Vec<String>), AccountError> {
    let stored = store.account(server);
    let hello_name = match (&stored, &without_account) {
        (Some(account), _) => account.name.clone(),
        (None, Anonymous::Register(Some(name))) => name.clone(),
        (None, _) => store
            .load()
            .name
            .filter(|name| valid_player_name(name))
            .unwrap_or_else(|| "player".into()),
    };
    if let (None, Anonymous::Register(name)) = (&stored, &without_account) {
        match name {
            None => return Err(AccountError::NoName),
            Some(name) if !valid_player_name(name) => {
                return Err(AccountError::InvalidName(name.clone()));
            }
            Some(_) => {}
        }
    }
    let mut connection = Connection::open(server, &hello_name).await?;
    let mut notes = Vec::new();
    let account = match (stored, without_account) {
        (Some(account), _) => {
            authenticate(&mut connection, &account, store).await?;
            Some(account)
        }
        (None, Anonymous::Register(name)) => {
            let name = name.unwrap_or_default();
            let (account, path) = register(&mut connection, &name, store).await?;
            notes.extend(registered_text(&account, &path).lines().map(String::from));
            Some(account)
        }
        (None, Anonymous::Allowed) => None,
    };
    Ok((connection, account, notes))
}

/// A connection to `server`, signed in as the account stored for it if
/// any (so that answers carry the player's own row). A stored token the
/// server no longer knows is a warning, for standard error, and the
/// connection is anonymous: `doing` says what goes on, e.g. "showing the
/// leaderboard".
///
/// Cancel-safe: dropped early, the connection it opened is dropped.
pub async fn connect_signed_in_if_stored(
    server: &str,
    store: &Store,
    doing: &str,
) -> Result<(Connection, Vec<String>), AccountError> {
    match connect(server, store, Anonymous::Allowed).await {
        Ok((connection, _, _)) => Ok((connection, Vec::new())),
        Err(error @ AccountError::UnknownToken { .. }) => {
            let warning = format!("warning: {error}; {doing} anonymously");
            // The failed authentication leaves the connection usable, but
            // a fresh one keeps this simple.
            let connection = Connection::open(server, "player").await?;
            Ok((connection, vec![warning]))
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_the_file_and_says_the_token_is_the_only_key() {
        let account = Account {
            server: "ws://127.0.0.1:7878".into(),
            player: 17,
            name: "ada".into(),
            token: "secret".into(),
        };
        let text = registered_text(&account, "/home/ada/.config/patience/account.json");
        assert!(text.starts_with("registered ada as player 17 on ws://127.0.0.1:7878\n"));
        assert!(text.contains("/home/ada/.config/patience/account.json"));
        assert!(text.contains("only key to the account"));
        assert!(
            !text.contains("secret"),
            "the token itself is never printed"
        );
    }

    #[test]
    fn the_code_text_says_how_long_it_works_and_to_keep_it() {
        let account = Account {
            server: "ws://127.0.0.1:7878".into(),
            player: 17,
            name: "ada".into(),
            token: "secret".into(),
        };
        let text = sign_in_code_text(&account, "K7PQ-3M9X", 600_000);
        assert!(text.starts_with("K7PQ-3M9X\n"), "{text}");
        assert!(text.contains("within 10 minutes"));
        assert!(text.contains("patience sign-in K7PQ-3M9X"));
        assert!(text.contains("as ada on ws://127.0.0.1:7878"));
        assert!(
            !text.contains("secret"),
            "the token itself is never printed"
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let check = |error: AccountError, expected: &str| {
            let text = error.to_string();
            assert!(text.contains(expected), "{text:?} lacks {expected:?}");
        };
        check(AccountError::NameTaken("ada".into()), "\"ada\" is taken");
        check(
            AccountError::InvalidName("1x".into()),
            "\"1x\" is not a valid player name",
        );
        check(AccountError::NoName, "--name");
        check(
            AccountError::NameTakenStoredElsewhere {
                name: "ada".into(),
                stored_for: "ws://localhost:7878".into(),
            },
            "stored for ws://localhost:7878: if that is the same server, give that URL with --server",
        );
        check(
            AccountError::AlreadyRegistered {
                server: "ws://s".into(),
                name: "ada".into(),
                player: 1,
            },
            "--force",
        );
    }

    #[tokio::test]
    async fn a_bad_name_is_refused_before_anything_is_sent() {
        let directory =
            std::env::temp_dir().join(format!("patience-account-none-{}", std::process::id()));
        let store = Store::in_directory(&directory);
        // No server listens on port 9 of this host; the name is refused first.
        let refused = connect(
            "ws://127.0.0.1:9",
            &store,
            Anonymous::Register(Some("x".into())),
        )
        .await;
        assert!(matches!(refused, Err(AccountError::InvalidName(name)) if name == "x"));
        let refused = connect("ws://127.0.0.1:9", &store, Anonymous::Register(None)).await;
        assert!(matches!(refused, Err(AccountError::NoName)));
    }
}
