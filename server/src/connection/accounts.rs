//! Accounts: register (under the per-address registration limit),
//! authenticate, sign-in codes (asked for, redeemed for a new token of the
//! account, under a limit of tries per address), and sign out (the token
//! the connection signed in with is revoked). Each awaits the database
//! thread (never the disk on this task), and answers only once what it
//! changed is committed.

use patience_shared::protocol::{self, ErrorCode, ServerMessage};

use super::Session;
use crate::metrics::bump;
use crate::secrets::{new_secret, new_sign_in_code, token_hash};
use crate::store::StoreError;

impl Session {
    pub(super) async fn register(&mut self, name: String) {
        if let Some(player) = &self.player {
            let message = format!("this connection is already {}", player.name);
            return self.error(ErrorCode::InvalidRequest, message);
        }
        if !protocol::valid_player_name(&name) {
            return self.error(
                ErrorCode::InvalidName,
                format!(
                    "a player's name has 3 to {} characters: letters, digits, _ and -, starting with a letter",
                    protocol::MAX_PLAYER_NAME_CHARS
                ),
            );
        }
        let now = self.shared.clock.now_ms();
        // Counted before the database is asked, so that a refused name costs
        // a registration too: the limit is on tries, not only on accounts.
        let bucket = match self.shared.signups.take_counted(self.peer.ip(), now) {
            Ok(bucket) => bucket,
            Err(wait_ms) => {
                bump(&self.shared.metrics.registrations_refused);
                tracing::info!(wait_ms, "registration refused: too many from this address");
                return self.error(
                ErrorCode::RegistrationLimited,
                format!(
                    "too many accounts were registered from your address lately; try again in {} minutes",
                    wait_ms.div_ceil(60_000)
                ),
            );
            }
        };
        let token = new_secret(24);
        let hash = token_hash(&token);
        let stored_name = name.clone();
        // The bucket is kept before the account is made, so that a restart
        // remembers the try whether or not the name was free.
        match self
            .shared
            .database
            .call(move |store| {
                store.save_registration_bucket(&bucket)?;
                store.register(&stored_name, &hash, now)
            })
            .await
        {
            Ok(player) => {
                tracing::info!(player = player.id, "player registered");
                self.name = player.name.clone();
                self.reply(&ServerMessage::Registered {
                    player: player.id,
                    name: player.name.clone(),
                    token,
                });
                self.player = Some(player);
                self.signed_in_with = Some(hash);
            }
            Err(StoreError::NameTaken(_)) => self.error(
                ErrorCode::NameTaken,
                format!("another player is called {name}"),
            ),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn authenticate(&mut self, token: &str) {
        if self.daily.is_some() {
            return self.error(
                ErrorCode::InvalidRequest,
                "finish your daily attempt before changing players",
            );
        }
        let hash = token_hash(token);
        match self
            .shared
            .database
            .call(move |store| store.player_by_token(&hash))
            .await
        {
            Ok(Some(player)) => {
                self.name = player.name.clone();
                self.reply(&ServerMessage::Authenticated {
                    player: player.id,
                    name: player.name.clone(),
                });
                self.player = Some(player);
                self.signed_in_with = Some(hash);
            }
            Ok(None) => self.error(ErrorCode::InvalidToken, "no player has that token"),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn request_sign_in_code(&mut self) {
        let Some(player) = &self.player else {
            return self.error(
                ErrorCode::NotAuthenticated,
                "sign in first: a sign-in code carries the account you are signed in as",
            );
        };
        let player = player.id;
        let code = new_sign_in_code();
        let hash = token_hash(&code);
        let now = self.shared.clock.now_ms();
        let expires_at = now.saturating_add(protocol::SIGN_IN_CODE_MS);
        match self
            .shared
            .database
            .call(move |store| store.save_sign_in_code(player, &hash, now, expires_at))
            .await
        {
            Ok(()) => self.reply(&ServerMessage::SignInCode {
                code: protocol::show_sign_in_code(&code),
                expires_in_ms: protocol::SIGN_IN_CODE_MS,
            }),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn redeem_sign_in_code(&mut self, typed: &str) {
        if self.daily.is_some() {
            return self.error(
                ErrorCode::InvalidRequest,
                "finish your daily attempt before changing players",
            );
        }
        let now = self.shared.clock.now_ms();
        // Counted before anything else, right or wrong, well formed or not:
        // the limit is on tries, which is what makes guessing hopeless.
        if let Err(wait_ms) = self.shared.sign_ins.take(self.peer.ip(), now) {
            tracing::info!(
                wait_ms,
                "sign-in code refused: too many tries from this address"
            );
            return self.error(
                ErrorCode::SignInLimited,
                format!(
                    "too many sign-in codes were tried from your address lately; try again in {} minutes",
                    wait_ms.div_ceil(60_000)
                ),
            );
        }
        let invalid = "that sign-in code is unknown, used already, or expired";
        let Some(code) = protocol::normalize_sign_in_code(typed) else {
            return self.error(ErrorCode::InvalidSignInCode, invalid);
        };
        let code_hash = token_hash(&code);
        let token = new_secret(24);
        let hash = token_hash(&token);
        match self
            .shared
            .database
            .call(move |store| store.redeem_sign_in_code(&code_hash, &hash, now))
            .await
        {
            Ok(Some(player)) => {
                tracing::info!(player = player.id, "signed in with a code");
                self.name = player.name.clone();
                self.reply(&ServerMessage::SignedIn {
                    player: player.id,
                    name: player.name.clone(),
                    token,
                });
                self.player = Some(player);
                self.signed_in_with = Some(hash);
            }
            Ok(None) => self.error(ErrorCode::InvalidSignInCode, invalid),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn sign_out(&mut self) {
        let Some(hash) = self.signed_in_with.filter(|_| self.player.is_some()) else {
            return self.error(ErrorCode::NotAuthenticated, "you are not signed in");
        };
        if self.daily.is_some() {
            return self.error(
                ErrorCode::InvalidRequest,
                "finish your daily attempt before signing out",
            );
        }
        match self
            .shared
            .database
            .call(move |store| store.revoke_token(&hash))
            .await
        {
            // Revoked now or by another connection before: out either way.
            Ok(_) => {
                self.player = None;
                self.signed_in_with = None;
                self.reply(&ServerMessage::SignedOut);
            }
            Err(error) => self.storage_failed(&error),
        }
    }
}
