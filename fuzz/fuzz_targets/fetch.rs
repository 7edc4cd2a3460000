//! The remote header reader (`src/fetch/`, `src/gguf/remote.rs`): an address through `fetch::url::parse`, and
//! a GGUF header read over HTTP from a loopback server whose replies are the fuzzer's bytes — status lines,
//! headers (`Content-Range`, `Content-Length`, `Location`, `ETag`), bodies; for an `ollama://` address the
//! registry's manifest too. Hermetic: every address fetched is on the loopback server (the short forms'
//! endpoints point at it, and a `Location` header is rewritten to a path on it). Input: a mode byte, an address
//! line for the parser, then the replies, one per request, separated by `\0\0\0`.
//! Invariants: no panic; a header read names no more bytes fetched than the replies held.
#![no_main]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use vramdiff::fetch::{url, Endpoints, FetchOptions};
use vramdiff::gguf::{remote, value::Detail};

/// The replies still to send, in order; an empty queue closes the connection unanswered.
static REPLIES: Mutex<VecDeque<Vec<u8>>> = Mutex::new(VecDeque::new());

/// The loopback server's base URL, started once.
fn server() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("loopback");
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                // The request's head, up to its blank line.
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let reply = REPLIES.lock().unwrap().pop_front();
                if let Some(reply) = reply {
                    let _ = (&stream).write_all(&hermetic(&reply));
                }
            }
        });
        base
    })
}

/// A reply whose `Location` headers point at a path of the loopback server.
fn hermetic(reply: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(reply.len());
    let mut in_head = true;
    for line in reply.split_inclusive(|&b| b == b'\n') {
        if in_head && line.len() >= 9 && line[..9].eq_ignore_ascii_case(b"location:") {
            out.extend_from_slice(b"Location: /moved\r\n");
            continue;
        }
        if line == b"\r\n" || line == b"\n" {
            in_head = false;
        }
        out.extend_from_slice(line);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (address, replies) = match rest.iter().position(|&b| b == b'\n') {
        Some(end) => (&rest[..end], &rest[end + 1..]),
        None => (rest, &[][..]),
    };
    let base = server();
    let endpoints = Endpoints {
        hf: base.to_string(),
        ollama: base.to_string(),
    };
    // The parser on the fuzzer's address (never fetched: it may name any host).
    if let Ok(target) = url::parse(&String::from_utf8_lossy(address), &endpoints) {
        let _ = format!("{target:?}");
    }
    let total: usize = replies.len();
    {
        let mut queue = REPLIES.lock().unwrap();
        queue.clear();
        let mut start = 0;
        while let Some(at) = replies[start..].windows(3).position(|w| w == b"\0\0\0") {
            queue.push_back(replies[start..start + at].to_vec());
            start += at + 3;
        }
        queue.push_back(replies[start..].to_vec());
    }
    let fetched = match mode % 3 {
        0 => format!("{base}/model.gguf"),
        1 => "hf://org/repo/model.gguf".to_string(),
        _ => "ollama://model:tag".to_string(),
    };
    let options = FetchOptions {
        timeout: Duration::from_millis(500),
        allow_full_download: mode & 0x80 != 0,
        endpoints,
        ..FetchOptions::default()
    };
    match remote::read_header(&fetched, &options, Detail::Sizes) {
        Ok((header, cost)) => {
            assert!(cost.bytes <= total as u64, "{} bytes fetched from {total}", cost.bytes);
            let _ = header.architecture();
        }
        Err(message) => assert!(!message.is_empty()),
    }
});
