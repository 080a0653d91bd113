//! Secrets the server makes and the hashes it keeps of them.
//!
//! Resume tokens, account tokens and race salts come from the OS's
//! randomness; the server keeps only a token's SHA-256 ([`TokenHash`]), so a
//! copy of its memory or its database opens no seat and no account. The
//! hash and the making of a secret from a given generator are the room
//! core's ([`patience_room_core::secrets`]), re-exported here.

use rand::Rng as _;

pub use patience_room_core::secrets::{TokenHash, secret_from, token_hash};

/// A new secret: `bytes` random bytes from the OS's randomness, as hex.
pub fn new_secret(bytes: usize) -> String {
    secret_from(&mut rand::rng(), bytes)
}

/// Thirty-two bytes from the OS's randomness, to seed a room's secrets.
pub fn fresh_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    rand::rng().fill_bytes(&mut seed);
    seed
}

/// A new sign-in code: eight characters of the room codes' alphabet from
/// the OS's randomness, without the dash (see
/// [`show_sign_in_code`](patience_shared::protocol::show_sign_in_code)).
pub fn new_sign_in_code() -> String {
    use rand::RngExt as _;
    let alphabet = patience_shared::protocol::ROOM_CODE_ALPHABET.as_bytes();
    let mut random = rand::rng();
    (0..patience_shared::protocol::SIGN_IN_CODE_CHARS)
        .map(|_| char::from(alphabet[random.random_range(0..alphabet.len())]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_long_and_distinct() {
        let first = new_secret(16);
        assert_eq!(first.len(), 32);
        assert_ne!(first, new_secret(16));
    }

    #[test]
    fn sign_in_codes_are_eight_code_characters() {
        let code = new_sign_in_code();
        assert_eq!(
            patience_shared::protocol::normalize_sign_in_code(&code).as_deref(),
            Some(code.as_str())
        );
    }
}
