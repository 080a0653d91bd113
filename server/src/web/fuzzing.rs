//! The body of the `http` fuzz target (`fuzz/fuzz_targets/http.rs`), also
//! run by this crate's unit tests over the target's seeds: arbitrary bytes
//! as a request head, through what the game port does with one.
//!
//! Checks, beyond "does not panic":
//! - the head read in two pieces (split where the first byte says) is read
//!   as it is read whole: the same request, or refused both ways;
//! - a request that is a valid WebSocket upgrade is answered `101` with the
//!   accept key of its `Sec-WebSocket-Key`;
//! - any other request is answered with a whole HTTP/1.1 response that
//!   `httparse` reads back, whose `Content-Length` is its body's length,
//!   with the status [`respond`] chose.
//!
//! A failed check panics on purpose: that is how a fuzz target reports a
//! finding.

use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::{HeadError, HeadReader, Request, Response, respond, websocket_accept};

/// Runs `data` through the head reader and the answers; panics on a
/// broken property.
pub fn exercise(data: &[u8]) {
    let whole = read_whole(data);
    let split_at = usize::from(data.first().copied().unwrap_or(0)).min(data.len());
    let (first, second) = data.split_at(split_at);
    let in_pieces = read_in_pieces(&[first, second]);
    match (&whole, &in_pieces) {
        (Ok(Some(whole)), Ok(Some(in_pieces))) => assert_eq!(whole, in_pieces),
        (Ok(None), Ok(None)) | (Err(_), Err(_)) => {}
        (whole, in_pieces) => {
            panic!("read whole: {whole:?}; read split at {split_at}: {in_pieces:?}")
        }
    }
    let Ok(Some((request, _))) = whole else {
        return;
    };
    if request.is_websocket_upgrade()
        && let Ok(accept) = websocket_accept(&request)
    {
        check_accept(&request, &accept);
        return;
    }
    check_response(&respond(&request));
}

/// The head read from `data` given at once.
fn read_whole(data: &[u8]) -> Result<Option<(Request, Vec<u8>)>, HeadError> {
    HeadReader::new().feed(data)
}

/// The head read from `pieces` given one after the other, as reads.
fn read_in_pieces(pieces: &[&[u8]]) -> Result<Option<(Request, Vec<u8>)>, HeadError> {
    let mut reader = HeadReader::new();
    let mut done = None;
    for piece in pieces {
        match done.as_mut() {
            Some((_, rest)) => Vec::extend_from_slice(rest, piece),
            None => done = reader.feed(piece)?,
        }
    }
    Ok(done)
}

/// A `101` that names the accept key of the request's key.
fn check_accept(request: &Request, accept: &[u8]) {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut response = httparse::Response::new(&mut headers);
    let parsed = response.parse(accept);
    assert!(
        matches!(parsed, Ok(httparse::Status::Complete(length)) if length == accept.len()),
        "the 101 is one whole head: {parsed:?}"
    );
    assert_eq!(response.code, Some(101));
    let key = request
        .header("sec-websocket-key")
        .expect("a valid upgrade has a key");
    let expected = derive_accept_key(key.as_bytes());
    let named = response
        .headers
        .iter()
        .find(|header| header.name.eq_ignore_ascii_case("sec-websocket-accept"))
        .map(|header| header.value);
    assert_eq!(named, Some(expected.as_bytes()));
}

/// A whole response whose length header tells its body.
fn check_response(answer: &Response) {
    let bytes = answer.to_bytes();
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut response = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(head_length)) = response.parse(&bytes) else {
        panic!("the answer's head does not read back");
    };
    assert_eq!(response.code, Some(answer.status));
    let length = response
        .headers
        .iter()
        .find(|header| header.name.eq_ignore_ascii_case("content-length"))
        .and_then(|header| std::str::from_utf8(header.value).ok())
        .and_then(|value| value.parse::<usize>().ok());
    assert_eq!(length, Some(bytes.len() - head_length));
    assert_eq!(&bytes[head_length..], &*answer.body);
}
