//! Secrets the server makes and the hashes it keeps of them.
//!
//! Resume tokens, account tokens and race salts come from the OS's
//! randomness; the server keeps only a token's SHA-256 ([`TokenHash`]), so a
//! copy of its memory or its database opens no seat and no account.

use rand::Rng as _;

/// A SHA-256 of a token: the server keeps no token itself.
pub type TokenHash = [u8; 32];

/// A new secret: `bytes` random bytes from the OS's randomness, as hex.
pub fn new_secret(bytes: usize) -> String {
    secret_from(&mut rand::rng(), bytes)
}

/// A new secret: `bytes` random bytes from `random`, as hex.
pub fn secret_from(random: &mut impl rand::Rng, bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    random.fill_bytes(&mut buffer);
    patience_shared::protocol::to_hex(&buffer)
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

/// The hash under which a token is kept.
pub fn token_hash(token: &str) -> TokenHash {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes()).into()
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

    #[test]
    fn a_hash_is_the_tokens_sha256() {
        // `printf abc | sha256sum`
        assert_eq!(
            patience_shared::protocol::to_hex(&token_hash("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
