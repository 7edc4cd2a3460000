//! `inspect URL` and `--gguf URL` (issue 37) against servers started here, on loopback: a GGUF served with
//! ranges, a redirect shaped like Hugging Face's, a server without ranges, 401, 404, a cut header, a web page,
//! a silent server, a fake Ollama registry, the header cache and a split model. The remote answer must equal
//! the local file's; a padded file must cost a few ranges, never its data; each error is one line, exit 2.
//! The servers are `std::net` threads answering one request per connection (`Connection: close`).

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::founding_models::{materialise, GEMMA3_12B, K80_LOG};
use crate::util::{root, scratch, stderr, stdout};

/// One request as the server saw it, and the body bytes it sent back.
#[derive(Debug, Clone, Default)]
struct Seen {
    path: String,
    range: Option<String>,
    authorization: Option<String>,
    if_none_match: Option<String>,
    accept: Option<String>,
    sent: u64,
}

/// What the server answers.
enum Reply {
    /// A file on disk, with ranges (206) or, `ranges: false`, whole (200), with this ETag.
    File {
        path: PathBuf,
        ranges: bool,
        etag: String,
    },
    /// A file whose Content-Range total is `claimed` (less than the file: the header is cut).
    Shortened {
        path: PathBuf,
        claimed: u64,
    },
    /// A 206 that promises the range asked but closes after `send` bytes.
    Closes {
        path: PathBuf,
        send: u64,
    },
    Status(u16, &'static str),
    Redirect(u16, String),
    Body(&'static str, Vec<u8>),
    /// Accept, read the request, never answer.
    Silent,
}

type Route = dyn Fn(&Seen) -> Reply + Send + Sync;

struct Server {
    base: String,
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(route: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let route: Arc<Route> = Arc::new(route);
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let route = Arc::clone(&route);
                let log = Arc::clone(&log);
                std::thread::spawn(move || answer(stream, &*route, &log));
            }
        });
        Server {
            base: format!("http://127.0.0.1:{port}"),
            port,
            seen,
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn sent(&self) -> u64 {
        self.seen().iter().map(|s| s.sent).sum()
    }

    fn forget(&self) {
        self.seen.lock().unwrap().clear();
    }
}

fn answer(stream: TcpStream, route: &Route, log: &Mutex<Vec<Seen>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut seen = Seen {
        path: line.split_whitespace().nth(1).unwrap_or("").to_string(),
        ..Seen::default()
    };
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = Some(value.trim().to_string());
        match name.trim().to_ascii_lowercase().as_str() {
            "range" => seen.range = value,
            "authorization" => seen.authorization = value,
            "if-none-match" => seen.if_none_match = value,
            "accept" => seen.accept = value,
            _ => {}
        }
    }
    let reply = route(&seen);
    let mut out = stream;
    let head = |out: &mut TcpStream, status: &str, headers: &[(String, String)]| {
        let mut text = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
        for (k, v) in headers {
            text.push_str(&format!("{k}: {v}\r\n"));
        }
        text.push_str("\r\n");
        let _ = out.write_all(text.as_bytes());
    };
    let range = seen.range.as_deref().and_then(parse_range);
    let mut sent = 0u64;
    match reply {
        Reply::Silent => {
            std::thread::sleep(Duration::from_secs(5));
        }
        Reply::Status(code, reason) => {
            let body = format!("{code} {reason}\n");
            head(
                &mut out,
                &format!("{code} {reason}"),
                &[("Content-Length".into(), body.len().to_string())],
            );
            let _ = out.write_all(body.as_bytes());
        }
        Reply::Redirect(code, location) => head(
            &mut out,
            &format!("{code} Found"),
            &[
                ("Location".into(), location),
                ("Content-Length".into(), "0".into()),
            ],
        ),
        Reply::Body(content_type, body) => {
            head(
                &mut out,
                "200 OK",
                &[
                    ("Content-Type".into(), content_type.into()),
                    ("Content-Length".into(), body.len().to_string()),
                ],
            );
            if out.write_all(&body).is_ok() {
                sent = body.len() as u64;
            }
        }
        Reply::File { path, ranges, etag } => {
            let len = std::fs::metadata(&path).unwrap().len();
            if seen.if_none_match.as_deref() == Some(etag.as_str()) {
                head(&mut out, "304 Not Modified", &[("ETag".into(), etag)]);
            } else if let (true, Some((a, b))) = (ranges, range) {
                let b = b.min(len - 1);
                head(
                    &mut out,
                    "206 Partial Content",
                    &[
                        ("Content-Range".into(), format!("bytes {a}-{b}/{len}")),
                        ("Content-Length".into(), (b + 1 - a).to_string()),
                        ("Content-Type".into(), "application/octet-stream".into()),
                        ("ETag".into(), etag),
                    ],
                );
                sent = send(&mut out, &path, a, b + 1 - a);
            } else {
                head(
                    &mut out,
                    "200 OK",
                    &[
                        ("Content-Length".into(), len.to_string()),
                        ("ETag".into(), etag),
                    ],
                );
                sent = send(&mut out, &path, 0, len);
            }
        }
        Reply::Shortened { path, claimed } => {
            let (a, b) = range.unwrap_or((0, claimed - 1));
            let b = b.min(claimed - 1);
            head(
                &mut out,
                "206 Partial Content",
                &[
                    ("Content-Range".into(), format!("bytes {a}-{b}/{claimed}")),
                    ("Content-Length".into(), (b + 1 - a).to_string()),
                ],
            );
            sent = send(&mut out, &path, a, b + 1 - a);
        }
        Reply::Closes { path, send: n } => {
            let len = std::fs::metadata(&path).unwrap().len();
            let (a, b) = range.unwrap_or((0, len - 1));
            let b = b.min(len - 1);
            head(
                &mut out,
                "206 Partial Content",
                &[
                    ("Content-Range".into(), format!("bytes {a}-{b}/{len}")),
                    ("Content-Length".into(), (b + 1 - a).to_string()),
                ],
            );
            sent = send(&mut out, &path, a, n.min(b + 1 - a));
        }
    }
    let _ = out.flush();
    let _ = out.shutdown(std::net::Shutdown::Both);
    seen.sent = sent;
    log.lock().unwrap().push(seen);
}

/// `bytes=A-B` (or `A-`).
fn parse_range(text: &str) -> Option<(u64, u64)> {
    let (a, b) = text.strip_prefix("bytes=")?.split_once('-')?;
    Some((a.parse().ok()?, b.parse().unwrap_or(u64::MAX)))
}

/// Send `n` bytes of `path` from `start`; the bytes that went out.
fn send(out: &mut TcpStream, path: &Path, start: u64, n: u64) -> u64 {
    let mut file = std::fs::File::open(path).unwrap();
    file.seek(SeekFrom::Start(start)).unwrap();
    let mut left = n;
    let mut buf = vec![0u8; 64 << 10];
    let mut sent = 0;
    while left > 0 {
        let want = left.min(buf.len() as u64) as usize;
        let got = file.read(&mut buf[..want]).unwrap();
        if got == 0 || out.write_all(&buf[..got]).is_err() {
            break;
        }
        sent += got as u64;
        left -= got as u64;
    }
    sent
}

/// Run vramdiff with `env` set, no proxy, no token unless given, the cache in `cache` (or none).
fn vramdiff(args: &[&str], env: &[(&str, &str)], cache: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
    command
        .args(args)
        .current_dir(root())
        .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in [
        "RUST_BACKTRACE",
        "HF_TOKEN",
        "HF_ENDPOINT",
        "VRAMDIFF_OLLAMA_REGISTRY",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "XDG_CACHE_HOME",
    ] {
        command.env_remove(name);
    }
    match cache {
        Some(dir) => command.env("VRAMDIFF_CACHE_DIR", dir),
        None => command.arg("--no-cache"),
    };
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("vramdiff runs")
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/data/gguf").join(name)
}

/// `inspect --format json` of `target`, its `file` replaced by `shown`.
fn inspect_json(target: &str, env: &[(&str, &str)], cache: Option<&Path>) -> serde_json::Value {
    let out = vramdiff(&["inspect", target, "--format", "json"], env, cache);
    assert_eq!(out.status.code(), Some(0), "{target}: {}", stderr(&out));
    let mut json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    json["file"] = serde_json::Value::Null;
    json
}

/// The one line of a failed run, checked: exit 2, one line, naming `address`.
fn one_error(out: &Output, address: &str) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    let text = stderr(out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {text}");
    assert!(
        lines[0].starts_with(&format!("vramdiff: {address}: ")),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    lines[0].to_string()
}

fn file_route(path: PathBuf, etag: &'static str) -> impl Fn(&Seen) -> Reply + Send + Sync {
    move |_| Reply::File {
        path: path.clone(),
        ranges: true,
        etag: etag.into(),
    }
}

/// llama-tiny with a 600 KB metadata string inserted after its counts (a header past the first range), and
/// zeros after its tensors to 64 MiB (the last tensor runs to the end of the file). The inserted entry is a
/// multiple of the alignment, so every offset stays valid.
fn padded(dir: &Path) -> PathBuf {
    let tiny = std::fs::read(fixture("llama-tiny.gguf")).unwrap();
    let key = b"vramdiff.test.padding";
    let fixed = 8 + key.len() + 4 + 8;
    let mut value_len = 600_000;
    while !(fixed + value_len).is_multiple_of(32) {
        value_len += 1;
    }
    let mut out = Vec::new();
    out.extend_from_slice(&tiny[..16]);
    let kvs = u64::from_le_bytes(tiny[16..24].try_into().unwrap());
    out.extend_from_slice(&(kvs + 1).to_le_bytes());
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&(value_len as u64).to_le_bytes());
    out.extend(std::iter::repeat_n(b'x', value_len));
    out.extend_from_slice(&tiny[24..]);
    let path = dir.join("padded.gguf");
    std::fs::write(&path, &out).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    path
}

#[test]
fn inspect_over_http_equals_the_local_file() {
    let names = [
        "llama-tiny.gguf",
        "moe-tiny.gguf",
        "swa-tiny.gguf",
        "hybrid-tiny.gguf",
    ];
    let server = Server::start(|seen| Reply::File {
        path: fixture(seen.path.trim_start_matches('/')),
        ranges: true,
        etag: "\"t\"".into(),
    });
    for name in names {
        let local = inspect_json(fixture(name).to_str().unwrap(), &[], None);
        let url = format!("{}/{name}", server.base);
        assert_eq!(inspect_json(&url, &[], None), local, "{name}");
    }
    // The text report too, the file's name apart.
    let url = format!("{}/swa-tiny.gguf", server.base);
    let out = vramdiff(
        &[
            "inspect",
            &url,
            "--mmproj",
            &format!("{}/mmproj-tiny.gguf", server.base),
        ],
        &[],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let p = fixture("swa-tiny.gguf");
    let m = fixture("mmproj-tiny.gguf");
    let local = vramdiff(
        &[
            "inspect",
            p.to_str().unwrap(),
            "--mmproj",
            m.to_str().unwrap(),
        ],
        &[],
        None,
    );
    let remote = stdout(&out).replace(&url, p.to_str().unwrap()).replace(
        &format!("{}/mmproj-tiny.gguf", server.base),
        m.to_str().unwrap(),
    );
    assert_eq!(remote, stdout(&local));
    assert!(
        stderr(&out).contains("bytes (") && stderr(&out).contains("request"),
        "{}",
        stderr(&out)
    );
}

/// A 64 MiB file whose header (~670 KB) is past the first range: a few growing ranges, under 5 % of the file.
#[test]
fn a_padded_file_costs_a_few_ranges_not_its_data() {
    let dir = scratch("remote-padded");
    let path = padded(&dir);
    let server = Server::start(file_route(path.clone(), "\"p\""));
    let url = format!("{}/padded.gguf", server.base);
    let local = inspect_json(path.to_str().unwrap(), &[], None);
    assert_eq!(local["file_bytes"], 64 << 20);
    assert_eq!(inspect_json(&url, &[], None), local);
    let seen = server.seen();
    let sent = server.sent();
    let total = 64u64 << 20;
    assert!(seen.len() >= 2, "the ranges grew: {seen:?}");
    assert!(sent * 20 < total, "{sent} of {total} bytes fetched");
    assert!(seen.iter().all(|s| s.range.is_some()), "{seen:?}");
    eprintln!(
        "padded: {sent} of {total} bytes ({:.2} %) in {} requests",
        sent as f64 * 100.0 / total as f64,
        seen.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hf://ORG/REPO/FILE.gguf` with `$HF_ENDPOINT` on loopback: `/resolve/main/` redirects (302) to a signed
/// CDN URL on another host (`localhost`, the same server); the token goes to the Hugging Face host only.
#[test]
fn a_hugging_face_redirect_is_followed_and_the_token_stays_home() {
    let file = fixture("llama-tiny.gguf");
    let local = inspect_json(file.to_str().unwrap(), &[], None);
    let port = Arc::new(Mutex::new(0u16));
    let p = Arc::clone(&port);
    let server = Server::start(move |seen| {
        if seen.path == "/org/repo/resolve/main/llama-tiny.gguf" {
            let port = *p.lock().unwrap();
            Reply::Redirect(
                302,
                format!(
                    "http://localhost:{port}/cdn/sha256/abc?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=0f1e2d"
                ),
            )
        } else if seen.path.starts_with("/cdn/sha256/abc?") {
            Reply::File {
                path: file.clone(),
                ranges: true,
                etag: "\"cdn\"".into(),
            }
        } else {
            Reply::Status(404, "Not Found")
        }
    });
    *port.lock().unwrap() = server.port;
    let env = [
        ("HF_ENDPOINT", server.base.as_str()),
        ("HF_TOKEN", "hf_secret"),
    ];
    assert_eq!(
        inspect_json("hf://org/repo/llama-tiny.gguf", &env, None),
        local
    );
    let seen = server.seen();
    assert_eq!(seen[0].path, "/org/repo/resolve/main/llama-tiny.gguf");
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer hf_secret"));
    assert_eq!(seen[0].range.as_deref(), Some("bytes=0-262143"));
    let cdn: Vec<_> = seen
        .iter()
        .filter(|s| s.path.starts_with("/cdn/"))
        .collect();
    assert!(!cdn.is_empty(), "{seen:?}");
    assert!(
        cdn.iter()
            .all(|s| s.authorization.is_none() && s.range.is_some()),
        "{seen:?}"
    );
    // A plain URL on another host never gets the token.
    server.forget();
    let other = format!(
        "http://localhost:{}/org/repo/resolve/main/llama-tiny.gguf",
        server.port
    );
    assert_eq!(inspect_json(&other, &env, None), local);
    assert!(server.seen().iter().all(|s| s.authorization.is_none()));
}

#[test]
fn a_server_without_ranges_is_refused_unless_allowed() {
    let dir = scratch("remote-noranges");
    let path = padded(&dir);
    let server = Server::start({
        let path = path.clone();
        move |_| Reply::File {
            path: path.clone(),
            ranges: false,
            etag: "\"n\"".into(),
        }
    });
    let url = format!("{}/padded.gguf", server.base);
    let out = vramdiff(&["inspect", &url], &[], None);
    let line = one_error(&out, &url);
    assert!(
        line.contains("does not answer range requests") && line.contains("--allow-full-download"),
        "{line}"
    );
    let out = vramdiff(
        &["inspect", &url, "--format", "json", "--allow-full-download"],
        &[],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut remote: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    remote["file"] = serde_json::Value::Null;
    assert_eq!(remote, inspect_json(path.to_str().unwrap(), &[], None));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn http_errors_are_one_line_a_user_can_act_on() {
    let dir = scratch("remote-errors");
    let tiny = fixture("llama-tiny.gguf");
    let server = Server::start(move |seen| match seen.path.as_str() {
        "/gated.gguf" => Reply::Status(401, "Unauthorized"),
        "/forbidden.gguf" => Reply::Status(403, "Forbidden"),
        "/missing.gguf" => Reply::Status(404, "Not Found"),
        "/broken.gguf" => Reply::Status(500, "Internal Server Error"),
        "/shortened.gguf" => Reply::Shortened {
            path: tiny.clone(),
            claimed: 3000,
        },
        "/closes.gguf" => Reply::Closes {
            path: tiny.clone(),
            send: 5000,
        },
        "/page.gguf" => Reply::Body(
            "text/html; charset=utf-8",
            b"<!DOCTYPE html><html>a model page</html>".to_vec(),
        ),
        "/loop.gguf" => Reply::Redirect(302, "/loop.gguf".into()),
        "/readme.gguf" => Reply::File {
            path: root().join("README.md"),
            ranges: true,
            etag: "\"r\"".into(),
        },
        "/silent.gguf" => Reply::Silent,
        _ => Reply::Status(404, "Not Found"),
    });
    let fails = |name: &str, extra: &[&str], env: &[(&str, &str)]| {
        let url = format!("{}/{name}", server.base);
        let mut args = vec!["inspect", url.as_str()];
        args.extend_from_slice(extra);
        one_error(&vramdiff(&args, env, None), &url)
    };
    let gated = fails("gated.gguf", &[], &[]);
    assert!(
        gated.contains("HTTP 401") && gated.contains("download the file"),
        "{gated}"
    );
    let gated_hf = fails("gated.gguf", &[], &[("HF_ENDPOINT", server.base.as_str())]);
    assert!(
        gated_hf.contains("HTTP 401")
            && gated_hf.contains("set HF_TOKEN")
            && gated_hf.contains("Authorization: Bearer"),
        "{gated_hf}"
    );
    let forbidden = fails(
        "forbidden.gguf",
        &[],
        &[("HF_ENDPOINT", server.base.as_str()), ("HF_TOKEN", "t")],
    );
    assert!(
        forbidden.contains("HTTP 403") && forbidden.contains("was sent"),
        "{forbidden}"
    );
    assert!(fails("missing.gguf", &[], &[]).contains("HTTP 404: no such file"));
    assert!(fails("broken.gguf", &[], &[]).contains("HTTP 500 Internal Server Error"));
    let shortened = fails("shortened.gguf", &[], &[]);
    assert!(
        shortened.contains("the file ends inside")
            && shortened.contains("gives the file's length as 3000 bytes"),
        "{shortened}"
    );
    let closes = fails("closes.gguf", &[], &[]);
    assert!(closes.contains("the reply was cut: 5000 of"), "{closes}");
    let page = fails("page.gguf", &[], &[]);
    assert!(
        page.contains("web page") && page.contains("/resolve/"),
        "{page}"
    );
    assert!(fails("loop.gguf", &[], &[]).contains("redirects"));
    let readme = fails("readme.gguf", &[], &[]);
    assert!(
        readme.contains("at byte 0: not a GGUF file: it starts with \"# vr\""),
        "{readme}"
    );
    let started = std::time::Instant::now();
    let silent = fails("silent.gguf", &["--timeout", "1"], &[]);
    assert!(
        silent.contains("no answer within 1 s") && silent.contains("--timeout"),
        "{silent}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    // `whatif --gguf URL`: the same line, exit 2.
    let url = format!("{}/missing.gguf", server.base);
    let log = root().join(K80_LOG);
    let out = vramdiff(
        &["whatif", log.to_str().unwrap(), "--gguf", &url, "--max-ctx"],
        &[],
        None,
    );
    assert!(one_error(&out, &url).contains("HTTP 404"));
    let out = vramdiff(&["inspect", "hf://just-a-name"], &[], None);
    assert!(one_error(&out, "hf://just-a-name").contains("hf:// takes ORG/REPO/FILE.gguf"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ollama://NAME:TAG` against a fake registry: the manifest (asked with the v2 manifest's Accept), then the
/// model layer's blob, redirected to storage as the real registry does.
#[test]
fn an_ollama_name_reads_the_registry_manifest_then_the_blob() {
    let digest = "sha256:8eeb52dfb3bb9aefdf9d1ef24b3bdbcfbe82238798c4b918278320b6fcef18fe";
    let projector = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    let file = fixture("swa-tiny.gguf");
    let mmproj = fixture("mmproj-tiny.gguf");
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
        "config":{{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:00","size":10}},
        "layers":[{{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:11","size":5}},
        {{"mediaType":"application/vnd.ollama.image.model","digest":"{digest}","size":{}}},
        {{"mediaType":"application/vnd.ollama.image.projector","digest":"{projector}","size":1}},
        {{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:22","size":5}}]}}"#,
        std::fs::metadata(&file).unwrap().len()
    );
    let projector_blob = format!("/v2/library/tiny/blobs/{projector}");
    let blob = format!("/v2/library/tiny/blobs/{digest}");
    let server = Server::start(move |seen| {
        if seen.path == "/v2/library/tiny/manifests/1b" {
            Reply::Body(
                "application/vnd.docker.distribution.manifest.v2+json",
                manifest.clone().into_bytes(),
            )
        } else if seen.path == blob {
            Reply::Redirect(307, "/storage/blob?sig=1".into())
        } else if seen.path == projector_blob {
            Reply::File {
                path: mmproj.clone(),
                ranges: true,
                etag: "\"p\"".into(),
            }
        } else if seen.path == "/storage/blob?sig=1" {
            Reply::File {
                path: file.clone(),
                ranges: true,
                etag: "\"b\"".into(),
            }
        } else {
            Reply::Status(404, "Not Found")
        }
    });
    let env = [("VRAMDIFF_OLLAMA_REGISTRY", server.base.as_str())];
    // The model and its projector layer, as `inspect MODEL --mmproj PROJECTOR` on the two files.
    let out = vramdiff(
        &[
            "inspect",
            fixture("swa-tiny.gguf").to_str().unwrap(),
            "--mmproj",
            fixture("mmproj-tiny.gguf").to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
        None,
    );
    let mut local: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    local["file"] = serde_json::Value::Null;
    local["projector_file"]["file"] = serde_json::Value::Null;
    let mut remote = inspect_json("ollama://tiny:1b", &env, None);
    assert_eq!(
        remote["projector_file"]["file"],
        "ollama://tiny:1b (projector)"
    );
    remote["projector_file"]["file"] = serde_json::Value::Null;
    assert_eq!(remote, local);
    let seen = server.seen();
    let manifests = seen
        .iter()
        .filter(|s| s.path.contains("/manifests/"))
        .count();
    assert_eq!(manifests, 1, "the manifest is read once: {seen:?}");
    assert_eq!(
        seen[0].accept.as_deref(),
        Some("application/vnd.docker.distribution.manifest.v2+json")
    );
    assert!(seen
        .iter()
        .any(|s| s.path.starts_with("/storage/") && s.range.is_some()));
    let out = vramdiff(&["inspect", "ollama://tiny:nope"], &env, None);
    assert!(one_error(&out, "ollama://tiny:nope").contains("no such model or tag"));
}

/// The cache: a second run asks once (`If-None-Match`, answered 304) and fetches nothing; a new ETag fetches
/// the header again; a URL pinned at a commit is not asked at all.
#[test]
fn the_header_cache_makes_a_second_run_instant() {
    let cache = scratch("remote-cache");
    let file = fixture("moe-tiny.gguf");
    let etag = Arc::new(Mutex::new("\"v1\"".to_string()));
    let e = Arc::clone(&etag);
    let server = Server::start(move |_| Reply::File {
        path: file.clone(),
        ranges: true,
        etag: e.lock().unwrap().clone(),
    });
    let url = format!("{}/moe-tiny.gguf", server.base);
    let local = inspect_json(fixture("moe-tiny.gguf").to_str().unwrap(), &[], None);
    assert_eq!(inspect_json(&url, &[], Some(&cache)), local);
    assert!(server.sent() > 0);
    server.forget();
    let out = vramdiff(&["inspect", &url], &[], Some(&cache));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("unchanged on the server (1 request, nothing fetched)"),
        "{}",
        stderr(&out)
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].if_none_match.as_deref(), Some("\"v1\""));
    assert_eq!(server.sent(), 0);
    *etag.lock().unwrap() = "\"v2\"".to_string();
    server.forget();
    assert_eq!(inspect_json(&url, &[], Some(&cache)), local);
    assert!(server.sent() > 0, "a new ETag fetches again");
    // Pinned at a commit: no request at all the second time.
    let env = [("HF_ENDPOINT", server.base.as_str())];
    let pinned = "hf://org/repo@0123456789abcdef0123456789abcdef01234567/moe-tiny.gguf";
    assert_eq!(inspect_json(pinned, &env, Some(&cache)), local);
    server.forget();
    let out = vramdiff(
        &[
            "whatif",
            root().join(K80_LOG).to_str().unwrap(),
            "--gguf",
            pinned,
        ],
        &env,
        Some(&cache),
    );
    // moe-tiny is not the log's model: its block count differs, the warning says so; no request was made.
    assert!(
        stderr(&out).contains("header from the cache, no request made"),
        "{}",
        stderr(&out)
    );
    assert!(server.seen().is_empty(), "{:?}", server.seen());
    let _ = std::fs::remove_dir_all(&cache);
}

/// A split model named by its first part: every part's header, the tensors of both, as the local files.
#[test]
fn a_split_model_reads_every_part() {
    let dir = scratch("remote-split");
    std::fs::copy(
        fixture("llama-tiny.gguf"),
        dir.join("m-00001-of-00002.gguf"),
    )
    .unwrap();
    std::fs::copy(
        fixture("mmproj-tiny.gguf"),
        dir.join("m-00002-of-00002.gguf"),
    )
    .unwrap();
    let d = dir.clone();
    let server = Server::start(move |seen| Reply::File {
        path: d.join(seen.path.trim_start_matches('/')),
        ranges: true,
        etag: "\"s\"".into(),
    });
    let local = inspect_json(
        dir.join("m-00001-of-00002.gguf").to_str().unwrap(),
        &[],
        None,
    );
    assert_eq!(local["tensors"], 21 + 11, "{local}");
    let both = std::fs::metadata(fixture("llama-tiny.gguf")).unwrap().len()
        + std::fs::metadata(fixture("mmproj-tiny.gguf"))
            .unwrap()
            .len();
    assert_eq!(local["file_bytes"], both);
    let url = format!("{}/m-00001-of-00002.gguf", server.base);
    assert_eq!(inspect_json(&url, &[], None), local);
    let paths: Vec<String> = server.seen().iter().map(|s| s.path.clone()).collect();
    assert!(
        paths.contains(&"/m-00002-of-00002.gguf".to_string()),
        "{paths:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `whatif --gguf URL --max-ctx` on the K80 founding log with gemma3:12b at full size (8 GB, sparse) gives
/// the answer the file on disk gives, byte for byte once the name is swapped, for a few KB of the 8 GB.
#[test]
fn whatif_max_ctx_over_http_equals_the_file_on_disk() {
    let dir = scratch("remote-whatif");
    let path = materialise(GEMMA3_12B, &dir, "gemma3.gguf");
    let server = Server::start(file_route(path.clone(), "\"g\""));
    let url = format!("{}/gemma3.gguf", server.base);
    let log = root().join(K80_LOG);
    let p = path.to_str().unwrap();
    for format in ["text", "json"] {
        let args = |gguf: &str| {
            vec![
                "whatif".to_string(),
                log.to_str().unwrap().to_string(),
                "--gguf".to_string(),
                gguf.to_string(),
                "--max-ctx".to_string(),
                "--format".to_string(),
                format.to_string(),
            ]
        };
        let on_disk = vramdiff(
            &args(p).iter().map(String::as_str).collect::<Vec<_>>(),
            &[],
            None,
        );
        assert_eq!(on_disk.status.code(), Some(0), "{}", stderr(&on_disk));
        server.forget();
        let remote = vramdiff(
            &args(&url).iter().map(String::as_str).collect::<Vec<_>>(),
            &[],
            None,
        );
        assert_eq!(remote.status.code(), Some(0), "{}", stderr(&remote));
        assert!(stdout(&remote).contains(&url), "the URL is named");
        assert_eq!(
            stdout(&remote).replace(&url, p),
            stdout(&on_disk),
            "{format}"
        );
        let total = std::fs::metadata(&path).unwrap().len();
        assert!(server.sent() * 20 < total);
        eprintln!(
            "whatif {format}: {} of {total} bytes in {} requests",
            server.sent(),
            server.seen().len()
        );
    }
    // The report (the default command) reads `--gguf URL` the same way.
    let report = |gguf: &str| {
        let out = vramdiff(
            &["--format", "json", "--gguf", gguf, log.to_str().unwrap()],
            &[],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let remote = report(&url);
    assert!(
        remote.contains(&format!("model file: {url} (--gguf)")),
        "{remote}"
    );
    assert_eq!(remote.replace(&url, p), report(p));
    let _ = std::fs::remove_dir_all(&dir);
}
