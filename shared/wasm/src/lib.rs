//! Patience Race's rules engine for the web page: `patience-shared`
//! compiled to WebAssembly, behind a boundary of three exported functions
//! that pass MessagePack bytes, like the wire protocol.
//!
//! Why raw exports and not wasm-bindgen: the page already speaks
//! MessagePack (its decoder is vendored), the questions are few (see
//! [`engine::Request`]), and raw exports need no generated glue and no
//! `wasm-bindgen` command-line tool matching the crate's version; building
//! the page needs only `rustup target add wasm32-unknown-unknown`.
//!
//! The calling convention: the page asks [`request_buffer`] for room for
//! its request, writes the MessagePack bytes there, calls [`answer`] and
//! reads that many bytes from [`answer_buffer`]. One call at a time: each
//! instance (the page's and the hint worker's) is single-threaded.
//!
//! Layout: [`engine`] holds the questions and answers, and is plain safe
//! Rust tested natively; this file holds only the exports.

pub mod engine;

use std::cell::RefCell;

use engine::Engine;

thread_local! {
    /// The request the page writes, the answer it reads, and the engine
    /// (which keeps the hinter's line between calls).
    static STATE: RefCell<(Vec<u8>, Vec<u8>, Engine)> =
        RefCell::new((Vec::new(), Vec::new(), Engine::new()));
}

/// Makes room for a request of `length` bytes and returns where the page
/// writes it.
// Exported under its own name for the page's JavaScript to call; the
// unsafe_code lint counts every `no_mangle`, and this is the crate's only
// reason to allow it.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn request_buffer(length: usize) -> *mut u8 {
    STATE.with_borrow_mut(|(request, _, _)| {
        request.clear();
        request.resize(length, 0);
        request.as_mut_ptr()
    })
}

/// Answers the request written at [`request_buffer`]; returns the
/// answer's length, to read at [`answer_buffer`].
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn answer() -> usize {
    STATE.with_borrow_mut(|(request, answer, engine)| {
        *answer = engine.answer(request);
        answer.len()
    })
}

/// Where the last answer lies.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn answer_buffer() -> *const u8 {
    STATE.with_borrow(|(_, answer, _)| answer.as_ptr())
}
