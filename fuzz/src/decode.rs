//! Target `decode`: arbitrary bytes as a WebSocket frame, read both as a
//! client's frame and as a server's.
//!
//! Beyond not panicking, every frame that decodes must survive a round trip:
//! encoding the message and decoding it again gives the same message, and
//! encoding that gives the same bytes (so the encoding of a decoded message is
//! canonical, which the server relies on when it relays what it parsed).

use std::fmt::Debug;

use patience_shared::protocol::{self, DecodeError, ErrorCode};
use serde::Serialize;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    check(data, protocol::decode_client);
    check(data, protocol::decode_server);
}

/// Decodes `data` with `decode` and checks the round trip of what it accepts.
fn check<T: Serialize + PartialEq + Debug>(
    data: &[u8],
    decode: fn(&[u8]) -> Result<T, DecodeError>,
) {
    let message = match decode(data) {
        Ok(message) => message,
        Err(error) => {
            // A refusal must map to one of the codes a server answers a
            // bad frame with (a game named that no server deals included).
            assert!(
                matches!(
                    error.code(),
                    ErrorCode::MalformedMessage
                        | ErrorCode::UnknownMessage
                        | ErrorCode::GameUnavailable
                ),
                "refusal {error:?} has code {:?}",
                error.code()
            );
            return;
        }
    };
    let bytes = protocol::encode(&message);
    assert!(
        !bytes.is_empty(),
        "an accepted message does not encode: {message:?}"
    );
    let again = decode(&bytes)
        .unwrap_or_else(|error| panic!("re-encoded {message:?} does not decode: {error}"));
    assert_eq!(
        again, message,
        "decode → encode → decode changed the message"
    );
    assert_eq!(
        protocol::encode(&again),
        bytes,
        "encoding of {message:?} is not canonical"
    );
}
