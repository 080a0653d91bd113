//! The room's secrets and the hashes kept of them: a resume token's
//! SHA-256 ([`TokenHash`]) is all the room and the store hold of it, so a
//! copy of their memory opens no seat. Secrets come from a generator the
//! caller seeds (the server from the OS, a test with a fixed seed).

/// A SHA-256 of a token: the server keeps no token itself.
pub type TokenHash = [u8; 32];

/// A new secret: `bytes` random bytes from `random`, as hex.
pub fn secret_from(random: &mut impl rand::Rng, bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    random.fill_bytes(&mut buffer);
    patience_shared::protocol::to_hex(&buffer)
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
    fn a_hash_is_the_tokens_sha256() {
        // `printf abc | sha256sum`
        assert_eq!(
            patience_shared::protocol::to_hex(&token_hash("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
