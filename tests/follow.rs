//! `vramdiff --follow` end to end: the real binary follows a file that a writer thread fills with real logs in
//! uneven chunks (and rotates), or a standard input left open; a fake `nvidia-smi` (a shell script first on the
//! child's `PATH`) answers the capture queries in nvidia-smi's CSV forms, and a small HTTP server on 127.0.0.1
//! answers `/api/ps` in the shape of Ollama's API documentation. Every wait has a generous bound that only
//! guards against a hang; `benches/follow_latency.sh` measures how quickly a load is reported.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::json_contract::Load;
use crate::util::root;

/// Long enough for a loaded CI machine; a report that takes this long is a hang, not slowness.
const BOUND: Duration = Duration::from_secs(90);

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";
const LOG_511: &str =
    "tests/data/follow/511-docker-cpu-only-driver-too-old-ministral3b-mmproj-bge-m3-2loads.log";

/// nvidia-smi's answers for the founding machine (two Tesla K80 dies), in the `--format=csv,nounits` forms
/// `--capture nvidia-smi` asks for; the figures are those of `sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt`.
pub(crate) const FAKE_NVIDIA_SMI: &str = r#"#!/bin/sh
case "$1" in
--query-gpu=*)
  echo 'index, uuid, pci.bus_id, memory.used [MiB], memory.total [MiB]'
  echo '0, GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27, 00000000:04:00.0, 617, 11441'
  echo '1, GPU-1e96b8d4-53a7-c0f2-8b3e-6a2d9f4c7e10, 00000000:07:00.0, 9866, 11441'
  ;;
--query-compute-apps=*)
  echo 'pid, process_name, used_gpu_memory [MiB], gpu_uuid'
  echo '18732, /usr/local/bin/ollama, 614, GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27'
  echo '18732, /usr/local/bin/ollama, 9863, GPU-1e96b8d4-53a7-c0f2-8b3e-6a2d9f4c7e10'
  ;;
*) exit 2 ;;
esac
"#;

/// A loopback port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A fresh temporary folder for one test.
fn scratch(tag: &str) -> PathBuf {
    crate::util::scratch(&format!("follow-{tag}"))
}

/// A folder holding an executable `nvidia-smi` with this script.
fn fake_tool(dir: &Path, script: &str) -> PathBuf {
    fake_named(dir, "nvidia-smi", script)
}

/// A folder holding an executable `name` with this script.
pub(crate) fn fake_named(dir: &Path, name: &str, script: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tool = bin.join(name);
    std::fs::write(&tool, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// `PATH` with `first` in front.
fn path_with(first: &Path) -> String {
    format!(
        "{}:{}",
        first.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The running `vramdiff -f …`: its stdout lines as they come.
struct Follower {
    child: Child,
    lines: Receiver<String>,
    stderr: Option<ChildStderr>,
}

impl Follower {
    fn start(args: &[&str], path: &str, stdin: Stdio) -> Follower {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vramdiff"))
            .args(args)
            .current_dir(root())
            .env("PATH", path)
            // Reports depend on the log alone, as in tests/util.rs.
            .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("vramdiff runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr = child.stderr.take();
        Follower {
            child,
            lines,
            stderr,
        }
    }

    /// The next line of the report.
    fn line(&self) -> String {
        self.lines
            .recv_timeout(BOUND)
            .expect("a report line within the bound")
    }

    /// The next JSON line, strictly checked against the contract: a `loads[]` element plus `input` and
    /// `schema_version`.
    fn load(&self) -> Value {
        let line = self.line();
        let mut value: Value = serde_json::from_str(&line).expect("one JSON object per line");
        let map = value.as_object_mut().expect("an object");
        let input = map.remove("input").expect("the input's name");
        assert!(input.is_string());
        assert_eq!(map.remove("schema_version"), Some(Value::from(1)));
        let _: Load = serde_json::from_value(Value::Object(map.clone()))
            .expect("the rest is a loads[] element of the JSON contract");
        map.insert("input".to_string(), input);
        value
    }

    /// Stop it the way a user does (SIGINT), and return its exit code and what it said on stderr.
    fn interrupt(self) -> (Option<i32>, String) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.finish()
    }

    /// Wait for it to end by itself.
    fn finish(mut self) -> (Option<i32>, String) {
        let mut err = String::new();
        if let Some(mut e) = self.stderr.take() {
            e.read_to_string(&mut err).unwrap();
        }
        let status = self.child.wait().unwrap();
        (status.code(), err)
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Append `text` to `file` in uneven chunks (1 byte to a few KiB), flushing and pausing between them.
fn append_unevenly(file: &Path, text: &[u8]) {
    let sizes = [1usize, 17, 4096, 3, 700, 64, 2500, 9];
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    let mut at = 0;
    for size in sizes.iter().cycle() {
        if at >= text.len() {
            break;
        }
        let end = (at + size).min(text.len());
        out.write_all(&text[at..end]).unwrap();
        out.flush().unwrap();
        at = end;
        std::thread::sleep(Duration::from_millis(3));
    }
}

/// The loads of a batch run over `files`, as (first line, last line, finding codes).
fn batch_loads(files: &[&Path]) -> Vec<(u64, u64, Vec<String>)> {
    let mut args = vec!["--format", "jsonl", "--fail-on", "never"];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let out = crate::util::run(&args, b"");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| summary(&serde_json::from_str(l).unwrap()))
        .collect()
}

fn summary(load: &Value) -> (u64, u64, Vec<String>) {
    (
        load["source"]["first_line"].as_u64().unwrap(),
        load["source"]["last_line"].as_u64().unwrap(),
        codes(load),
    )
}

fn codes(load: &Value) -> Vec<String> {
    load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn follow_reports_each_load_in_order_across_a_rotation() {
    let dir = scratch("rotation");
    let log = dir.join("ollama.log");
    std::fs::write(&log, b"").unwrap();
    let founding = std::fs::read(root().join(FOUNDING)).unwrap();
    let second = std::fs::read(root().join(LOG_511)).unwrap();
    // Rotate in the middle of 511's second load (its lines 293–488), at a line boundary.
    let cut = second
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(399)
        .map(|(i, _)| i + 1)
        .unwrap();
    let whole = dir.join("whole.log");
    std::fs::write(&whole, [&founding[..], &second[..]].concat()).unwrap();
    let expected = batch_loads(&[&whole]);
    assert_eq!(expected.len(), 3, "the founding load and 511's two");

    let log_arg = log.display().to_string();
    let follower = Follower::start(
        &["-f", "--format", "jsonl", "--fail-on", "never", &log_arg],
        &std::env::var("PATH").unwrap_or_default(),
        Stdio::null(),
    );
    // The founding log first, read back before the rotation: the follower has the file open by then (a file
    // renamed before the follower first opened it would not be followed, as with `tail -F`).
    append_unevenly(&log, &founding);
    let mut got = vec![summary(&follower.load())];
    let writer = {
        let log = log.clone();
        std::thread::spawn(move || {
            append_unevenly(&log, &second[..cut]);
            std::fs::rename(&log, log.with_extension("log.1")).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            append_unevenly(&log, &second[cut..]);
        })
    };
    for _ in 1..expected.len() {
        let load = follower.load();
        assert_eq!(load["input"], Value::from(log_arg.as_str()));
        got.push(summary(&load));
    }
    writer.join().unwrap();
    assert_eq!(got, expected, "the same loads, in order, as a batch run");
    assert!(got[0].2.contains(&"needless-split".to_string()));
    let (code, err) = follower.interrupt();
    assert_eq!(code, Some(0), "Ctrl-C ends quietly: {err}");
    assert!(err.contains("replaced (rotated)"), "{err}");
}

/// Answers every request with `/api/ps`'s documented shape for one model; records the request lines.
pub(crate) fn ollama_server(size: i64, size_vram: i64) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    let body = serde_json::json!({"models": [{
        "name": "gemma3:12b",
        "model": "gemma3:12b",
        "size": size,
        "digest": "f4031aab637d1ffa37b42570452ae0e4fad0314754d17ded67322e4b95836f8a",
        "details": {"parent_model": "", "format": "gguf", "family": "gemma3", "families": ["gemma3"],
                    "parameter_size": "12.2B", "quantization_level": "Q4_K_M"},
        "expires_at": "2025-07-20T09:48:48.058+08:00",
        "size_vram": size_vram,
        "context_length": 4096
    }]})
    .to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                request.push(byte[0]);
            }
            let first = String::from_utf8_lossy(&request)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            seen.lock().unwrap().push(first);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, requests)
}

/// Start following an empty file with `args`, then append the founding log to it.
fn follow_founding(tag: &str, args: &[&str], path: &str) -> Follower {
    let dir = scratch(tag);
    let log = dir.join("server.log");
    std::fs::write(&log, b"").unwrap();
    let log_arg = log.display().to_string();
    let mut all = args.to_vec();
    all.push(&log_arg);
    let follower = Follower::start(&all, path, Stdio::null());
    let founding = std::fs::read(root().join(FOUNDING)).unwrap();
    std::thread::spawn(move || append_unevenly(&log, &founding));
    follower
}

fn mib(load: &Value, row: usize, field: &str) -> i64 {
    load["observed"][row][field]["bytes"].as_i64().unwrap() >> 20
}

#[test]
fn live_capture_and_ollama_ps_are_attached_and_a_mismatch_is_named() {
    let dir = scratch("capture");
    let bin = fake_tool(&dir, FAKE_NVIDIA_SMI);
    // Ollama says the whole model is in VRAM, 12.8 GB; the runner holds 614 + 9863 MiB on the cards.
    let (url, requests) = ollama_server(12_800_000_000, 12_800_000_000);
    let follower = follow_founding(
        "capture-log",
        &[
            "-f",
            "--format",
            "jsonl",
            "--capture",
            "nvidia-smi",
            "--ollama",
            &url,
            "--fail-on",
            "never",
        ],
        &path_with(&bin),
    );
    let load = follower.load();
    let codes = codes(&load);
    assert!(codes.contains(&"needless-split".to_string()), "{codes:?}");
    assert!(codes.contains(&"ps-mismatch".to_string()), "{codes:?}");
    let observed = load["observed"].as_array().unwrap();
    assert_eq!(observed.len(), 2, "both K80 dies");
    assert_eq!(observed[0]["device"], "CUDA0");
    assert_eq!(observed[1]["device"], "CUDA1");
    assert_eq!(observed[0]["join"], "uuid");
    assert_eq!((mib(&load, 0, "used"), mib(&load, 1, "used")), (617, 9866));
    assert_eq!(
        (
            mib(&load, 0, "runner_process"),
            mib(&load, 1, "runner_process")
        ),
        (614, 9863)
    );
    let ps = &load["ollama_ps"];
    assert_eq!(ps["name"], "gemma3:12b");
    assert_eq!(ps["size_vram"]["bytes"], 12_800_000_000i64);
    assert_eq!(ps["context_length"], 4096);
    let mismatch = load["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "ps-mismatch")
        .unwrap();
    assert_eq!(mismatch["severity"], "warning");
    let message = mismatch["message"].as_str().unwrap();
    // 12.8e9 B = 12207.0 MiB against 10477 MiB (± 1 MiB of rounding): 1.69 GiB more.
    assert!(
        message.contains("11.92 GiB")
            && message.contains("10.23 GiB")
            && message.contains("more")
            && message.contains("runner process"),
        "{message}"
    );
    assert_eq!(
        requests.lock().unwrap().as_slice(),
        ["GET /api/ps HTTP/1.1"]
    );
    let (code, err) = follower.interrupt();
    assert_eq!(code, Some(0));
    assert!(err.is_empty(), "no warning when both answered: {err}");
}

#[test]
fn text_report_shows_ollama_ps_as_a_third_figure() {
    let dir = scratch("text");
    let bin = fake_tool(&dir, FAKE_NVIDIA_SMI);
    // 10 990 000 000 B = 10481 MiB: Ollama agrees with the card within the margin.
    let (url, _) = ollama_server(11_800_000_000, 10_990_000_000);
    let follower = follow_founding(
        "text-log",
        &[
            "-f",
            "--capture",
            "nvidia-smi",
            "--ollama",
            &url,
            "--fail-on",
            "never",
        ],
        &path_with(&bin),
    );
    let mut report = Vec::new();
    loop {
        let line = follower.line();
        let last = line.starts_with("  note: nvidia-smi (live)");
        report.push(line);
        if last {
            break;
        }
    }
    let report = report.join("\n");
    assert!(report.starts_with("Load 1: "), "{report}");
    for row in ["buffers", "nvidia-smi", "ollama ps"] {
        assert!(
            report.lines().any(|l| l.trim_start().starts_with(row)),
            "{row} row in:\n{report}"
        );
    }
    assert!(
        report.contains("10.24 GiB") || report.contains("10481"),
        "{report}"
    );
    assert!(report.contains("needless-split"));
    assert!(!report.contains("ps-mismatch"), "{report}");
}

#[test]
fn unreachable_server_and_missing_tool_warn_once_and_reports_go_on() {
    let empty = scratch("no-tools").join("bin");
    std::fs::create_dir_all(&empty).unwrap();
    // A port that was free a moment ago: nothing listens there.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let follower = follow_founding(
        "unreachable-log",
        &[
            "-f",
            "--format",
            "jsonl",
            "--capture",
            "nvidia-smi",
            "--ollama",
            &url,
            "--fail-on",
            "never",
        ],
        &empty.display().to_string(),
    );
    let load = follower.load();
    assert!(codes(&load).contains(&"needless-split".to_string()));
    assert!(load["observed"].as_array().unwrap().is_empty());
    assert!(load.get("ollama_ps").is_none());
    let (code, err) = follower.interrupt();
    assert_eq!(code, Some(0));
    assert!(
        err.contains("--capture nvidia-smi: not found on PATH"),
        "{err}"
    );
    assert!(err.contains(&format!("--ollama {url}")), "{err}");
    assert_eq!(err.lines().count(), 2, "each said once: {err}");
}

#[test]
fn a_capture_that_hangs_is_stopped_and_the_report_still_printed() {
    let dir = scratch("slow");
    let bin = fake_tool(&dir, "#!/bin/sh\nexec sleep 60\n");
    let follower = follow_founding(
        "slow-log",
        &[
            "-f",
            "--format",
            "jsonl",
            "--capture",
            "nvidia-smi",
            "--fail-on",
            "never",
        ],
        &path_with(&bin),
    );
    let load = follower.load();
    assert!(codes(&load).contains(&"needless-split".to_string()));
    assert!(load["observed"].as_array().unwrap().is_empty());
    let (code, err) = follower.interrupt();
    assert_eq!(code, Some(0));
    assert!(
        err.contains("took longer than 5 s and was stopped"),
        "{err}"
    );
}

#[test]
fn rocm_smi_json_is_captured_through_the_same_path() {
    let dir = scratch("rocm");
    // `rocm-smi --showmeminfo vram --showbus --json`, in the shape of docs/log-formats.md §7.6 (bytes).
    let script = r#"#!/bin/sh
[ "$*" = "--showmeminfo vram --showbus --json" ] || exit 2
echo '{"card0": {"PCI Bus": "0000:04:00.0", "VRAM Total Memory (B)": "11996758016", "VRAM Total Used Memory (B)": "646971392"}, "card1": {"PCI Bus": "0000:07:00.0", "VRAM Total Memory (B)": "11996758016", "VRAM Total Used Memory (B)": "10345250816"}}'
"#;
    let bin = fake_named(&dir, "rocm-smi", script);
    let follower = follow_founding(
        "rocm-log",
        &[
            "-f",
            "--format",
            "jsonl",
            "--capture",
            "rocm-smi",
            "--fail-on",
            "never",
        ],
        &path_with(&bin),
    );
    let load = follower.load();
    let observed = load["observed"].as_array().unwrap();
    assert_eq!(observed.len(), 2, "{observed:?}");
    assert_eq!((mib(&load, 0, "used"), mib(&load, 1, "used")), (617, 9866));
    assert_eq!(observed[0]["capture"]["format"], "rocm-smi-json");
    let (code, err) = follower.interrupt();
    assert_eq!(code, Some(0));
    assert!(err.is_empty(), "{err}");
}

#[test]
fn fail_on_stops_after_the_load_that_has_the_finding() {
    let follower = follow_founding(
        "fail-on-log",
        &["-f", "--format", "jsonl", "--fail-on", "warning"],
        &std::env::var("PATH").unwrap_or_default(),
    );
    let load = follower.load();
    assert!(codes(&load).contains(&"needless-split".to_string()));
    let (code, err) = follower.finish();
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("needless-split: warning at --fail-on warning"),
        "{err}"
    );
}

#[test]
fn an_endless_stdin_is_followed_and_its_end_ends_the_follow() {
    let mut follower = Follower::start(
        &["-f", "--format", "jsonl", "--fail-on", "never"],
        &std::env::var("PATH").unwrap_or_default(),
        Stdio::piped(),
    );
    let mut stdin = follower.child.stdin.take().unwrap();
    stdin
        .write_all(&std::fs::read(root().join(FOUNDING)).unwrap())
        .unwrap();
    stdin.flush().unwrap();
    // The pipe stays open: the load is reported because it completed, not because the input ended.
    let load = follower.load();
    assert_eq!(load["input"], "<stdin>");
    assert!(codes(&load).contains(&"needless-split".to_string()));
    drop(stdin);
    let (code, err) = follower.finish();
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_closed_stdout_ends_the_follow_quietly() {
    let dir = scratch("closed");
    let log = dir.join("server.log");
    std::fs::write(&log, b"").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramdiff"))
        .args(["-f", "--fail-on", "never"])
        .arg(&log)
        .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let founding = std::fs::read(root().join(FOUNDING)).unwrap();
    append_unevenly(&log, &founding);
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(err.is_empty(), "{err}");
}

/// A line a rule matched but could not read (a size past 63 bits) is said on stderr with its file and line while
/// following, as the report command says it; the load around it is still reported.
#[test]
fn a_malformed_line_is_warned_with_its_line_while_following() {
    let dir = scratch("malformed-line");
    let log = dir.join("server.log");
    std::fs::write(&log, b"").unwrap();
    let log_arg = log.display().to_string();
    let follower = Follower::start(
        &["-f", "--format", "jsonl", "--fail-on", "never", &log_arg],
        &std::env::var("PATH").unwrap_or_default(),
        Stdio::null(),
    );
    let mut text = std::fs::read(root().join(FOUNDING)).unwrap();
    let bad_line = text.iter().filter(|&&b| b == b'\n').count() + 1;
    text.extend_from_slice(b"load_tensors: CUDA0 model buffer size = 18446744073709551615 MiB\n");
    std::thread::spawn(move || append_unevenly(&log, &text));
    let load = follower.load();
    assert!(codes(&load).contains(&"needless-split".to_string()));
    let (code, err) = follower.interrupt();
    assert_eq!(code, Some(0));
    let want = format!("warning: {log_arg}:{bad_line}: rule ");
    assert!(err.contains(&want), "{want} in: {err}");
    assert!(err.contains("is not a size"), "{err}");
}

/// The samples of an OpenMetrics text: `name{labels}` → value.
fn samples(text: &str) -> std::collections::BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (key, value) = l.rsplit_once(' ').expect("name and value");
            (key.to_string(), value.parse().expect("a number"))
        })
        .collect()
}

/// `--serve`: `/metrics` and `/loads` answer a real HTTP client on loopback while the follow goes on, and every
/// gauge equals the figure of the same load's JSON line.
#[test]
fn serve_answers_metrics_equal_to_the_json_line_of_the_same_load() {
    let dir = scratch("serve-tools");
    let bin = fake_tool(&dir, FAKE_NVIDIA_SMI);
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let follower = follow_founding(
        "serve",
        &[
            "-f",
            "--format",
            "jsonl",
            "--fail-on",
            "never",
            "--capture",
            "nvidia-smi",
            "--serve",
            &addr,
        ],
        &path_with(&bin),
    );
    let load = follower.load();
    let get = |path: &str| {
        let response = minreq::get(format!("http://{addr}{path}"))
            .with_timeout(10)
            .send()
            .expect("the server answers");
        (
            response.status_code,
            response
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
            response.as_str().unwrap().to_string(),
        )
    };
    let (status, content_type, text) = get("/metrics");
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
    let got = samples(&text);
    let gauge = |metric: &str, device: &Value| {
        let key = format!(
            "vramdiff_{metric}_bytes{{model=\"gemma3\",device=\"{}\"}}",
            device.as_str().unwrap()
        );
        *got.get(&key).unwrap_or_else(|| panic!("{key} in\n{text}")) as i64
    };
    let mut compared = 0;
    for d in load["devices"].as_array().unwrap() {
        for (metric, field) in [("estimated", "estimated"), ("actual", "actual")] {
            if let Some(b) = d[field]["bytes"].as_i64() {
                assert_eq!(gauge(metric, &d["device"]), b, "{metric} {}", d["device"]);
                compared += 1;
            }
        }
    }
    let observed = load["observed"].as_array().unwrap();
    assert_eq!(observed.len(), 2, "the fake nvidia-smi's two GPUs");
    for o in observed {
        for (metric, field) in [
            ("observed_used", "used"),
            ("observed_runner", "runner_process"),
            ("unattributed", "unattributed"),
        ] {
            assert_eq!(
                gauge(metric, &o["device"]),
                o[field]["bytes"].as_i64().unwrap()
            );
            compared += 1;
        }
    }
    for g in load["whatif"]["estimate"]["placement"]["gpus"]
        .as_array()
        .unwrap()
    {
        assert_eq!(
            gauge("planned", &g["device"]),
            g["allocation"].as_i64().unwrap()
        );
        compared += 1;
    }
    assert_eq!(
        compared, 13,
        "5 device figures, 6 observed, 2 planned: {text}"
    );
    let layers = |on: &str| got[&format!("vramdiff_layers{{model=\"gemma3\",on=\"{on}\"}}")] as i64;
    let offloaded = load["actual"]["offloaded_layers"].as_i64().unwrap();
    assert_eq!(layers("gpu"), offloaded);
    assert_eq!(
        layers("cpu"),
        load["actual"]["total_layers"].as_i64().unwrap() - offloaded
    );
    for f in load["findings"].as_array().unwrap() {
        let key = format!(
            "vramdiff_findings_total{{code=\"{}\",severity=\"{}\"}}",
            f["code"].as_str().unwrap(),
            f["severity"].as_str().unwrap()
        );
        assert_eq!(got[&key], 1.0, "{key}");
    }
    assert_eq!(got["vramdiff_loads_total"], 1.0);
    assert!(got["vramdiff_last_load_timestamp_seconds"] > 1.7e9);

    let (status, _, loads) = get("/loads");
    assert_eq!(status, 200);
    let lines: Vec<&str> = loads.lines().collect();
    assert_eq!(lines.len(), 1);
    // The same JSON line as stdout's (`load()` took `schema_version` off it).
    let mut served: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(
        served.as_object_mut().unwrap().remove("schema_version"),
        Some(Value::from(1))
    );
    assert!(served == load, "/loads differs from the report's JSON line");
    assert_eq!(get("/nothing").0, 404);
    // Every metric the example Grafana dashboard queries is one the exposition has.
    let dashboard =
        std::fs::read_to_string(root().join("examples/grafana/vramdiff-dashboard.json")).unwrap();
    let names: std::collections::BTreeSet<&str> = dashboard
        .match_indices("vramdiff_")
        .map(|(i, _)| {
            let rest = &dashboard[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect();
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} "))),
            "the dashboard's {name} is not served"
        );
    }
    let (code, err) = follower.interrupt();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!("serving http://{addr}/metrics and /loads")),
        "{err}"
    );
}

/// Issue 54: a server followed while it serves — sample 1201 written in two parts, the second after the first
/// was reported — gives one report per quiet spell, each with the timeline so far (the second continues the
/// first: its checkpoints' peak is the first part's), and `--serve` exports the last sample as gauges.
#[test]
fn follow_updates_the_serving_timeline_and_its_gauges() {
    let dir = scratch("serving-timeline");
    let log = dir.join("server.log");
    std::fs::write(&log, b"").unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let log_arg = log.display().to_string();
    let follower = Follower::start(
        &[
            "-f",
            "--format",
            "jsonl",
            "--fail-on",
            "never",
            "--serve",
            &addr,
            &log_arg,
        ],
        &std::env::var("PATH").unwrap_or_default(),
        Stdio::null(),
    );
    let text = std::fs::read_to_string(root().join(
        "sample-logs/1201-llama-server-rtx5090-gemma4-12b-np1-ctx256k-checkpoints-7-to-10-prompt-cache-2223mib.log",
    ))
    .unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Lines 1–34: checkpoints 7 to 10 of slot 0, no prompt cache yet.
    append_unevenly(&log, lines[..34].concat().as_bytes());
    // An update may come while the lines are still being written (the follower reports when its input goes
    // quiet, and a loaded machine pauses the writer): read updates until the one through the last line.
    let through = |last_line: u64| loop {
        let update = follower.load();
        let last = update["timeline"]["samples"]
            .as_array()
            .and_then(|s| s.last())
            .and_then(|s| s["line"].as_u64())
            .unwrap_or(0);
        assert!(
            last <= last_line,
            "an update past line {last_line}: {update}"
        );
        if last == last_line {
            break update;
        }
    };
    let first = through(34);
    let mib = |v: &Value| v["bytes"].as_i64().unwrap() as f64 / (1 << 20) as f64;
    let t = &first["timeline"];
    assert!(
        (mib(&t["peaks"]["checkpoints"]) - 1700.13).abs() < 0.01,
        "{t}"
    );
    assert_eq!(t["peaks"]["checkpoints"]["line"], 34);
    assert!(t["peaks"].get("prompt_cache").is_none(), "{t}");
    // Lines 35–91: the save into the prompt cache and the checkpoints erased and created after it.
    append_unevenly(&log, lines[34..].concat().as_bytes());
    let second = through(81);
    let t = &second["timeline"];
    assert!(
        (mib(&t["peaks"]["prompt_cache"]) - 2223.52).abs() < 0.01,
        "{t}"
    );
    assert_eq!(t["peaks"]["checkpoints"]["line"], 34, "carried over: {t}");
    assert_eq!(t["limits"]["prompt_cache"]["line"], 59);
    let last = t["samples"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["line"], 81);
    let response = minreq::get(format!("http://{addr}/metrics"))
        .with_timeout(10)
        .send()
        .expect("the server answers");
    let metrics = response.as_str().unwrap().to_string();
    let got = samples(&metrics);
    let gauge = |name: &str| {
        *got.get(&format!("vramdiff_serving_{name}{{model=\"unknown\"}}"))
            .unwrap_or_else(|| panic!("{name} in\n{metrics}"))
    };
    assert_eq!(
        gauge("prompt_cache_bytes") as i64,
        last["prompt_cache"]["bytes"].as_i64().unwrap()
    );
    assert_eq!(
        gauge("checkpoints_bytes") as i64,
        last["checkpoints"]["bytes"].as_i64().unwrap()
    );
    assert_eq!(gauge("prompt_cache_limit_bytes") as i64, 8192 << 20);
    let (code, _) = follower.interrupt();
    assert_eq!(code, Some(0));
}
