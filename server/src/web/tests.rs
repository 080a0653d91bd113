//! Routing, head parsing and the byte-handing stream, data-driven.

use tokio::io::AsyncReadExt as _;

use super::*;

fn get(target: &str) -> Request {
    request("GET", target)
}

fn request(method: &str, target: &str) -> Request {
    Request {
        method: method.to_string(),
        target: target.to_string(),
        minor_version: 1,
        headers: vec![("host".to_string(), "127.0.0.1:7878".to_string())],
    }
}

#[test]
fn requests_are_routed_to_the_page_files_or_refused() {
    // (method, target, status, content type)
    let cases = [
        ("GET", "/", 200, HTML),
        ("GET", "/?from=link", 200, HTML),
        ("GET", "/index.html", 200, HTML),
        ("GET", "/app.js", 200, JAVASCRIPT),
        ("GET", "/cards.js", 200, JAVASCRIPT),
        ("GET", "/protocol.js", 200, JAVASCRIPT),
        ("GET", "/style.css", 200, CSS),
        ("GET", "/favicon.svg", 200, SVG),
        ("GET", "/vendor/msgpack-3.1.3.min.js", 200, JAVASCRIPT),
        ("GET", "/vendor/LICENSE", 200, TEXT),
        ("GET", "/engine.js", 200, JAVASCRIPT),
        ("GET", "/hint-worker.js", 200, JAVASCRIPT),
        ("GET", "/practice.js", 200, JAVASCRIPT),
        ("GET", "/engine.wasm", 200, WASM),
        ("GET", "/practice", 200, HTML),
        ("GET", "/practice/indian", 200, HTML),
        ("GET", "/practice/virginia-reel?seed=7", 200, HTML),
        ("GET", "/practice/klondike", 404, HTML),
        ("GET", "/race.js", 200, JAVASCRIPT),
        ("GET", "/race/indian", 200, HTML),
        ("GET", "/race/indian?private", 200, HTML),
        ("GET", "/race/klondike", 404, HTML),
        ("GET", "/race/731", 200, HTML),
        ("GET", "/race/18446744073709551615", 200, HTML),
        ("GET", "/race/18446744073709551616", 404, HTML),
        ("GET", "/race/0731", 404, HTML),
        ("GET", "/race/0", 404, HTML),
        ("GET", "/race/-1", 404, HTML),
        ("GET", "/account", 200, HTML),
        ("GET", "/daily/indian", 200, HTML),
        ("GET", "/daily/klondike", 404, HTML),
        ("GET", "/account/x", 404, HTML),
        ("GET", "/days/three-blind-mice", 200, HTML),
        ("GET", "/days/virginia-reel", 200, HTML),
        ("GET", "/days/klondike", 404, HTML),
        ("GET", "/days/", 404, HTML),
        ("GET", "/days/indian/extra", 404, HTML),
        ("GET", "/room/K7PQ3M", 200, HTML),
        ("GET", "/room/k7pq3m", 200, HTML),
        ("GET", "/room/K7PQ3", 404, HTML),
        ("GET", "/room/K7PQ3MM", 404, HTML),
        ("GET", "/room/K0PQ3M", 404, HTML),
        ("GET", "/room/K7PQ3M/", 404, HTML),
        ("GET", "/nothing", 404, HTML),
        ("GET", "/../etc/passwd", 404, HTML),
        ("GET", "/vendor/msgpack.min.js", 404, HTML),
        ("POST", "/", 405, TEXT),
        ("HEAD", "/", 405, TEXT),
        ("DELETE", "/room/K7PQ3M", 405, TEXT),
        ("PUT", "/nothing", 405, TEXT),
    ];
    for (method, target, status, content_type) in cases {
        let response = respond(&request(method, target));
        assert_eq!(response.status, status, "{method} {target}");
        assert_eq!(response.content_type, content_type, "{method} {target}");
        assert!(!response.body.is_empty(), "{method} {target}");
        let allow = response
            .extra
            .iter()
            .any(|&(name, value)| name == "Allow" && value == "GET");
        assert_eq!(allow, status == 405, "{method} {target}: Allow only on 405");
    }
}

#[test]
fn every_page_route_gets_the_same_page() {
    for target in [
        "/",
        "/days/indian",
        "/room/ACDEF3",
        "/practice",
        "/practice/midshipman",
        "/race/731",
    ] {
        assert_eq!(&*respond(&get(target)).body, INDEX_HTML, "{target}");
    }
}

/// A bad path gets a page in the site's look (its stylesheet, its
/// header) with the way back to the front page, and the status `404`.
#[test]
fn a_bad_path_gets_the_sites_own_not_found_page() {
    let answer = respond(&get("/no/such/page"));
    assert_eq!((answer.status, answer.reason), (404, "Not Found"));
    assert_eq!(answer.content_type, HTML);
    let page = String::from_utf8_lossy(&answer.body).into_owned();
    for part in [
        "<link rel=\"stylesheet\" href=\"/style.css\">",
        "<header class=\"top\">",
        "<a href=\"/\" id=\"way-back\">",
    ] {
        assert!(page.contains(part), "{part} in {page}");
    }
    // Nothing inline, so the strict CSP holds: no script at all.
    assert!(!page.contains("<script") && !page.contains("style="));
}

#[test]
fn the_vendored_library_is_cached_for_good_and_the_rest_revalidated() {
    let cases = [
        ("/vendor/msgpack-3.1.3.min.js", IMMUTABLE),
        ("/", REVALIDATE),
        ("/app.js", REVALIDATE),
        ("/nothing", "no-store"),
        ("/race/731", REVALIDATE),
    ];
    for (target, cache_control) in cases {
        assert_eq!(
            respond(&get(target)).cache_control,
            cache_control,
            "{target}"
        );
    }
    assert!(
        include_str!("../../web/index.html").contains(&format!("msgpack-{MSGPACK_VERSION}.min.js")),
        "the page loads the vendored version"
    );
}

/// The rules engine the page runs is a WebAssembly module (its magic
/// number and version 1), built from `shared/wasm` by `build.rs`.
#[test]
fn the_engine_is_embedded() {
    let body = respond(&get("/engine.wasm")).body;
    assert_eq!(body.get(..8), Some(&b"\0asm\x01\0\0\0"[..]));
}

#[test]
fn an_answer_carries_length_type_and_the_security_headers() {
    let bytes = respond(&get("/style.css")).to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    assert_eq!(body.as_bytes(), STYLE_CSS);
    let expected = [
        "HTTP/1.1 200 OK".to_string(),
        "Content-Type: text/css; charset=utf-8".to_string(),
        format!("Content-Length: {}", STYLE_CSS.len()),
        "Cache-Control: no-cache".to_string(),
        format!("Content-Security-Policy: {CONTENT_SECURITY_POLICY}"),
        "X-Content-Type-Options: nosniff".to_string(),
        "Connection: close".to_string(),
    ];
    let lines: Vec<&str> = head.split("\r\n").collect();
    for line in expected {
        assert!(lines.contains(&line.as_str()), "{line:?} in {lines:?}");
    }
    assert!(CONTENT_SECURITY_POLICY.contains("script-src 'self' 'wasm-unsafe-eval';"));
    // WebAssembly's is the only relaxation: no inline script, no eval.
    assert!(
        !CONTENT_SECURITY_POLICY
            .replace("'wasm-unsafe-eval'", "")
            .contains("unsafe")
    );
    let refused = String::from_utf8_lossy(&respond(&request("POST", "/")).to_bytes()).into_owned();
    assert!(refused.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    assert!(refused.contains("\r\nAllow: GET\r\n"));
}

#[test]
fn heads_parse_or_are_refused() {
    /// What a head parses to: method, target, whether it is an upgrade;
    /// `None` for a head refused as malformed.
    type Parsed = Option<(&'static str, &'static str, bool)>;
    let cases: [(&[u8], Parsed); 10] = [
        (
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            Some(("GET", "/", false)),
        ),
        (
            b"GET /room/K7PQ3M HTTP/1.0\r\n\r\n",
            Some(("GET", "/room/K7PQ3M", false)),
        ),
        (
            b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\n\r\n",
            Some(("GET", "/", true)),
        ),
        (
            b"GET / HTTP/1.1\r\nupgrade: h2c, websocket\r\n\r\n",
            Some(("GET", "/", true)),
        ),
        (
            b"GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
            Some(("GET", "/", false)),
        ),
        (b"GET / HTTP/2.0\r\n\r\n", None),
        (b"GET /\r\n\r\n", None),
        (b"GET http://x/ HTTP/1.1\r\n\r\n", None),
        (b"G@T / HTTP/1.1\r\n\r\n", None),
        (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", None),
    ];
    for (head, expected) in cases {
        let parsed = parse_head(head);
        let shown = String::from_utf8_lossy(head);
        match (parsed, expected) {
            (Ok(Some((request, length))), Some((method, target, upgrade))) => {
                assert_eq!(length, head.len(), "{shown}");
                assert_eq!(request.method, method, "{shown}");
                assert_eq!(request.target, target, "{shown}");
                assert_eq!(request.is_websocket_upgrade(), upgrade, "{shown}");
            }
            (Err(HeadError::Malformed(_)), None) => {}
            (parsed, expected) => panic!("{shown}: {parsed:?}, expected {expected:?}"),
        }
    }
}

#[tokio::test]
async fn a_head_is_read_whole_with_what_follows_it_and_capped() {
    let (mut client, mut server) = tokio::io::duplex(64 * 1024);
    tokio::io::AsyncWriteExt::write_all(&mut client, b"GET / HTTP/1.1\r\nHost: x\r\n\r\nextra")
        .await
        .expect("written");
    let (request, rest) = read_request(&mut server).await.expect("a head");
    assert_eq!(request.target, "/");
    assert_eq!(rest, b"extra", "the bytes after the head are kept");

    let (mut client, mut server) = tokio::io::duplex(64 * 1024);
    let long = format!(
        "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
        "a".repeat(MAX_HEAD_BYTES)
    );
    tokio::io::AsyncWriteExt::write_all(&mut client, long.as_bytes())
        .await
        .expect("written");
    assert!(matches!(
        read_request(&mut server).await,
        Err(HeadError::TooLarge)
    ));

    let (client, mut server) = tokio::io::duplex(1024);
    drop(client);
    assert!(matches!(
        read_request(&mut server).await,
        Err(HeadError::Closed)
    ));
}

/// The `http` fuzz target's checks, over its committed seeds, every
/// prefix of each, and each with every byte in turn flipped.
#[test]
fn the_fuzz_targets_checks_hold_over_its_seeds() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/http");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&folder)
        .expect("the seeds folder")
        .map(|entry| std::fs::read(entry.expect("an entry").path()).expect("a seed"))
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 10, "{} seeds", seeds.len());
    for seed in &seeds {
        for length in 0..=seed.len() {
            super::fuzzing::exercise(&seed[..length]);
        }
        for at in 0..seed.len() {
            let mut flipped = seed.clone();
            flipped[at] ^= 0x20;
            super::fuzzing::exercise(&flipped);
        }
    }
}

#[test]
fn a_valid_upgrade_is_accepted_and_a_bad_one_refused() {
    let head = b"GET /room/K7PQ3M HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\n\
                 Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
                 Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let (request, _) = parse_head(head).expect("a head").expect("whole");
    let accept = String::from_utf8(websocket_accept(&request).expect("accepted")).expect("text");
    assert!(
        accept.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{accept}"
    );
    assert!(accept.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "{accept}");
    for refused in [
        &b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n"[..],
        b"GET / HTTP/1.0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
           Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        b"POST / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
           Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
           Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n",
    ] {
        let (request, _) = parse_head(refused).expect("a head").expect("whole");
        assert!(request.is_websocket_upgrade());
        assert!(
            websocket_accept(&request).is_err(),
            "{}",
            String::from_utf8_lossy(refused)
        );
    }
}

#[tokio::test]
async fn a_prefixed_stream_gives_back_its_prefix_then_the_rest() {
    let (mut client, server) = tokio::io::duplex(1024);
    tokio::io::AsyncWriteExt::write_all(&mut client, b" world")
        .await
        .expect("written");
    drop(client);
    let mut stream = Prefixed::new(b"hello".to_vec(), server);
    let mut read = String::new();
    stream.read_to_string(&mut read).await.expect("read");
    assert_eq!(read, "hello world");
}

// ----- Over a real socket -----

mod over_a_socket {
    use std::net::SocketAddr;

    use futures::{SinkExt as _, StreamExt as _};
    use patience_shared::game::GameKind;
    use patience_shared::protocol::{self, ClientMessage, PROTOCOL_VERSION, ServerMessage};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpStream;
    use tokio_tungstenite::tungstenite::Message;

    use crate::{Config, Server};

    async fn server() -> Server {
        crate::start(Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            admin_listen: None,
            data_dir: None,
            deal_games: vec![GameKind::ThreeBlindMice],
            deal_pool_size: 1,
            solver_budget_positions: 200_000,
            shutdown_grace_ms: 100,
            ..Config::default()
        })
        .await
        .expect("the server starts")
    }

    /// Sends `chunks` one write at a time and reads the answer to its end.
    async fn exchange(address: SocketAddr, chunks: &[&[u8]]) -> Vec<u8> {
        let mut stream = TcpStream::connect(address).await.expect("connects");
        for chunk in chunks {
            stream.write_all(chunk).await.expect("written");
            stream.flush().await.expect("flushed");
            tokio::task::yield_now().await;
        }
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .await
            .expect("read to the end");
        answer
    }

    fn status_line(answer: &[u8]) -> String {
        let text = String::from_utf8_lossy(answer);
        text.split("\r\n").next().unwrap_or_default().to_string()
    }

    async fn greeted(
        socket: &mut tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<TcpStream>,
        >,
    ) {
        let hello = ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: "ada".to_string(),
        };
        socket
            .send(Message::binary(protocol::encode(&hello)))
            .await
            .expect("hello sent");
        let Some(Ok(Message::Binary(bytes))) = socket.next().await else {
            panic!("no answer to hello");
        };
        let welcome = protocol::decode_server(&bytes).expect("a server message");
        assert!(
            matches!(welcome, ServerMessage::Welcome { .. }),
            "{welcome:?}"
        );
    }

    #[tokio::test]
    async fn the_game_port_serves_the_page_refuses_the_rest_and_still_upgrades() {
        let server = server().await;
        let address = server.address();
        // A WebSocket client connected first is not disturbed by the rest.
        let (mut first, _) = tokio_tungstenite::connect_async(format!("ws://{address}/"))
            .await
            .expect("the upgrade goes through");
        greeted(&mut first).await;

        let page = exchange(address, &[b"GET /room/K7PQ3M HTTP/1.1\r\nHost: x\r\n\r\n"]).await;
        assert_eq!(status_line(&page), "HTTP/1.1 200 OK");
        let text = String::from_utf8_lossy(&page);
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.contains(&format!(
            "\r\nContent-Length: {}\r\n",
            super::INDEX_HTML.len()
        )));
        assert!(head.contains("\r\nContent-Type: text/html; charset=utf-8\r\n"));
        assert!(head.contains("\r\nX-Content-Type-Options: nosniff\r\n"));
        assert_eq!(body.as_bytes(), super::INDEX_HTML);

        // A head that comes in pieces is read whole.
        let split = exchange(
            address,
            &[b"GET /nothing HT", b"TP/1.1\r\nHost: x\r\n", b"\r\n"],
        )
        .await;
        assert_eq!(status_line(&split), "HTTP/1.1 404 Not Found");
        let posted = exchange(address, &[b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"]).await;
        assert_eq!(status_line(&posted), "HTTP/1.1 405 Method Not Allowed");
        let garbage = exchange(address, &[b"\x16\x03\x01 not http\r\n\r\n"]).await;
        assert_eq!(status_line(&garbage), "HTTP/1.1 400 Bad Request");
        // An upgrade that is no WebSocket's is told so, not dropped.
        let bad_upgrade = exchange(
            address,
            &[b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"],
        )
        .await;
        assert_eq!(status_line(&bad_upgrade), "HTTP/1.1 400 Bad Request");
        let huge = vec![b'a'; super::MAX_HEAD_BYTES + 10];
        let too_long = exchange(address, &[b"GET / HTTP/1.1\r\nX: ", &huge]).await;
        assert_eq!(status_line(&too_long), "HTTP/1.1 400 Bad Request");

        // An upgrade whose head comes in pieces still goes through.
        let request = format!(
            "GET / HTTP/1.1\r\nHost: {address}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        );
        let (start, end) = request.as_bytes().split_at(40);
        let mut raw = TcpStream::connect(address).await.expect("connects");
        raw.write_all(start).await.expect("written");
        raw.flush().await.expect("flushed");
        tokio::task::yield_now().await;
        raw.write_all(end).await.expect("written");
        let mut answer = vec![0u8; 512];
        let read = raw.read(&mut answer).await.expect("an answer");
        let answer = String::from_utf8_lossy(&answer[..read]).into_owned();
        assert!(
            answer.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
            "{answer}"
        );
        assert!(answer.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "{answer}");

        // The first client is still served, and a new one upgrades too.
        let again = ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: "ada".to_string(),
        };
        first
            .send(Message::binary(protocol::encode(&again)))
            .await
            .expect("sent");
        let Some(Ok(Message::Binary(bytes))) = first.next().await else {
            panic!("the first client is no longer answered");
        };
        let answer = protocol::decode_server(&bytes).expect("a server message");
        assert!(
            matches!(&answer, ServerMessage::Error { code, .. } if *code == protocol::ErrorCode::AlreadyGreeted),
            "{answer:?}"
        );
        let (mut second, _) =
            tokio_tungstenite::connect_async(format!("ws://{address}/room/K7PQ3M"))
                .await
                .expect("an upgrade on a page's path goes through too");
        greeted(&mut second).await;
        server.shutdown().await;
    }
}
