//! The HTTP side of `--serve ADDR`: a std `TcpListener` on one thread (no async runtime) that answers
//! `GET /metrics` with the OpenMetrics text of [`Metrics`] and `GET /loads` with the last loads' JSON lines;
//! anything else is 404, a method other than GET or HEAD 405. One request per connection, read with a timeout,
//! so a client that sends nothing cannot hold the follow's metrics.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::metrics::Metrics;

/// The address `--serve` listens on when given none, or only a port: loopback.
pub const DEFAULT_HOST: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 9464;

/// `ADDR` as the user wrote it (`:9464`, `9464`, `0.0.0.0:9464`, `[::1]:9464`), resolved.
pub fn address(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    let full = if text.is_empty() {
        format!("{DEFAULT_HOST}:{DEFAULT_PORT}")
    } else if let Some(port) = text.strip_prefix(':') {
        format!("{DEFAULT_HOST}:{port}")
    } else if text.chars().all(|c| c.is_ascii_digit()) {
        format!("{DEFAULT_HOST}:{text}")
    } else {
        text.to_string()
    };
    full.to_socket_addrs()
        .map_err(|e| format!("--serve {text}: {e}"))?
        .next()
        .ok_or_else(|| format!("--serve {text}: no address"))
}

/// Listen on `addr` and answer from `metrics` on a thread of its own; the bound address (its port when 0 was
/// asked).
pub fn start(addr: SocketAddr, metrics: Arc<Mutex<Metrics>>) -> Result<SocketAddr, String> {
    let listener = TcpListener::bind(addr).map_err(|e| format!("--serve {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("--serve {addr}: {e}"))?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = answer(stream, &metrics);
        }
    });
    Ok(bound)
}

fn answer(stream: TcpStream, metrics: &Mutex<Metrics>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers are read and ignored (bounded: a client that sends more is cut off).
    let mut header = String::new();
    for _ in 0..100 {
        header.clear();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("");
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics.lock().map(|m| m.exposition()).unwrap_or_default(),
        ),
        ("GET" | "HEAD", "/loads") => (
            "200 OK",
            "application/jsonl; charset=utf-8",
            metrics.lock().map(|m| m.loads()).unwrap_or_default(),
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "vramdiff serves /metrics and /loads\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "GET only\n".to_string(),
        ),
    };
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        stream.write_all(body.as_bytes())?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::address;

    #[test]
    fn an_address_without_a_host_is_loopback() {
        assert_eq!(address("").unwrap().to_string(), "127.0.0.1:9464");
        assert_eq!(address(":9100").unwrap().to_string(), "127.0.0.1:9100");
        assert_eq!(address("9100").unwrap().to_string(), "127.0.0.1:9100");
        assert_eq!(address("[::1]:9100").unwrap().to_string(), "[::1]:9100");
        assert!(address("not an address").is_err());
    }
}
