//! Hostile, broken and huge input through the real binary (issue 8). Each case states what vramdiff must do:
//! a message naming the file (and the line where there is one) on stderr or in the report's warnings, the
//! other inputs still read, no panic, and the documented exit code (docs/guide/report.md, "Exit codes and bad input").

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::{root, run, stderr, stdout};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";
const T4: &str = "sample-logs/001-kaggle-t4-llama31-8b.log";

/// A fresh temporary folder for one test.
fn scratch(tag: &str) -> PathBuf {
    crate::util::scratch(&format!("bad-{tag}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// No panic message, no backtrace hint.
fn no_panic(out: &Output) {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

fn founding() -> Vec<u8> {
    std::fs::read(root().join(FOUNDING)).unwrap()
}

/// The report's warnings for the input at `index`, as `line: message`.
fn warnings(v: &serde_json::Value, index: usize) -> Vec<String> {
    v["inputs"][index]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| format!("{}: {}", w["line"], w["message"].as_str().unwrap()))
        .collect()
}

#[test]
fn an_empty_file_is_named_as_empty_and_exits_0() {
    let dir = scratch("empty");
    let empty = dir.join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    let out = run(&[s(&empty), FOUNDING], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("warning: {}: empty input", empty.display())),
        "{text}"
    );
    assert!(text.contains("Load 1: sample-logs/founding"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn random_bytes_and_an_elf_are_named_as_binary_and_the_other_inputs_are_read() {
    let dir = scratch("binary");
    let random = dir.join("random.bin");
    // xorshift64: the same "random" bytes on every run.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..256 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&random, &bytes).unwrap();
    let elf = dir.join("vramdiff-elf");
    let binary = std::fs::read(env!("CARGO_BIN_EXE_vramdiff")).unwrap();
    // The ELF header and the dynamic symbols: the read-only data after them holds the embedded grammar's
    // example lines, real log lines, and starts within the first 100 KB of the test build since the binary is
    // linked with packed relative relocations (`build.rs`), no longer after 7 MB of relocation entries.
    std::fs::write(&elf, &binary[..binary.len().min(8 * 1024)]).unwrap();
    let out = run(&["--format", "json", s(&random), s(&elf), FOUNDING], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    for i in 0..2 {
        let w = warnings(&v, i);
        assert!(w.iter().any(|w| w.contains("binary data")), "{w:?}");
    }
    assert_eq!(v["loads"].as_array().unwrap().len(), 1);
    assert_eq!(v["loads"][0]["source"]["path"], FOUNDING);
    // The text report names the file and the line of the first NUL byte.
    let text = stdout(&run(&[s(&elf)], b""));
    assert!(
        text.contains(&format!("warning: {}:1: binary data", elf.display())),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_utf8_costs_characters_not_the_load() {
    let mut log = founding();
    // Corrupt a byte inside every tenth line, and add a line that is nothing but invalid UTF-8.
    let mut line = 0;
    for i in 0..log.len() {
        if log[i] == b'\n' {
            line += 1;
            if line % 10 == 0 && i > 3 {
                log[i - 3] = 0xff;
            }
        }
    }
    log.extend_from_slice(b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x90\x28\xbc\n");
    let out = run(&["--format", "json"], &log);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["loads"].as_array().unwrap().len(), 1);
}

/// Peak resident memory of a running child, polled from /proc (Linux); `None` elsewhere.
fn peak_rss_kib(child: &mut std::process::Child) -> Option<u64> {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = None;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(kib) = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<u64>().ok())
            {
                peak = Some(peak.unwrap_or(0).max(kib));
            }
        }
        if child.try_wait().unwrap().is_some() {
            return peak;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_200_mb_line_is_cut_with_a_warning_naming_file_and_line_and_memory_stays_bounded() {
    let dir = scratch("longline");
    let path = dir.join("huge-line.log");
    {
        let mut f =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
        f.write_all(&founding()).unwrap();
        // 200 MiB of one line (no newline inside), written in 1 MiB blocks.
        let block = vec![b'x'; 1 << 20];
        for _ in 0..200 {
            f.write_all(&block).unwrap();
        }
        f.write_all(b"\n").unwrap();
        f.write_all(&std::fs::read(root().join(T4)).unwrap())
            .unwrap();
        f.flush().unwrap();
    }
    let founding_lines = founding().iter().filter(|&&b| b == b'\n').count();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramdiff"))
        .args(["--format", "json", s(&path)])
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain stdout on a thread so the child never blocks on a full pipe while we poll its memory.
    let mut stdout_pipe = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout_pipe, &mut buf).unwrap();
        buf
    });
    let peak = peak_rss_kib(&mut child);
    let out = Output {
        status: child.wait().unwrap(),
        stdout: reader.join().unwrap(),
        stderr: {
            let mut e = Vec::new();
            std::io::Read::read_to_end(&mut child.stderr.take().unwrap(), &mut e).unwrap();
            e
        },
    };
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let long_line = founding_lines + 1;
    let w = warnings(&v, 0);
    assert!(
        w.iter()
            .any(|w| w.starts_with(&format!("{long_line}: line longer than 1 MiB"))),
        "{w:?}"
    );
    // Both loads, before and after the long line, are read.
    assert_eq!(v["loads"].as_array().unwrap().len(), 2);
    if let Some(kib) = peak {
        assert!(
            kib < 160 * 1024,
            "peak RSS {kib} KiB for a 200 MiB line: the line cap does not bound memory"
        );
    }
    // The text report names the file and the line.
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_estimate_line_is_kept_with_a_note() {
    let text = String::from_utf8(founding()).unwrap();
    let cut: Vec<String> = text
        .lines()
        .map(|l| {
            if l.contains("msg=offload") {
                l[..400].to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    let out = run(&["--format", "json"], cut.join("\n").as_bytes());
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let notes = v["loads"][0]["notes"].to_string();
    assert!(notes.contains("the estimate line is cut short"), "{notes}");
}

#[test]
fn sizes_past_64_bits_and_nan_or_inf_are_refused_with_the_line_named() {
    let log = "load_tensors: CUDA0 model buffer size = 18446744073709551615 MiB\n\
time=2025-07-20T09:43:28.905+08:00 level=INFO source=ggml.go:377 msg=\"model weights\" buffer=CUDA1 size=\"18446744073709551615 MiB\"\n\
time=2025-07-20T09:43:28.905+08:00 level=INFO source=ggml.go:377 msg=\"model weights\" buffer=CUDA1 size=\"NaN GiB\"\n\
load_tensors: CUDA0 model buffer size = inf MiB\n\
load_tensors: CUDA0 model buffer size = 99999999999999999999999999999999999999999.99 MiB\n";
    let out = run(&["--show-unrecognized", "-", FOUNDING], log.as_bytes());
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for line in [1, 2, 5] {
        assert!(
            text.contains(&format!("warning: <stdin>:{line}: rule '")),
            "line {line}: {text}"
        );
    }
    // NaN / inf are not numbers to any rule: listed as memory lines not understood, with their line.
    assert!(text.contains("unrecognized <stdin>:3:"), "{text}");
    assert!(text.contains("unrecognized <stdin>:4:"), "{text}");
    assert!(text.contains("Load 1: sample-logs/founding"), "{text}");
}

#[test]
fn negative_and_overflowing_breakdown_cells_do_not_break_the_table() {
    let log = "common_memory_breakdown_print: | memory breakdown [MiB] | total    free     self   model   context   compute    unaccounted |\n\
common_memory_breakdown_print: |   - CUDA0 (RTX 5090)   | 32606 = 30991 + ( 4205 =     0 +       0 +    4205) +       -18446744073709551615 |\n\
common_memory_breakdown_print: |   - CUDA1 (RTX 3090)   | 18446744073709551615 = 23332 + (17829 =  1177 +   15360 +    1292) +      -9223372036854775808 |\n";
    let out = run(&["--format", "json"], log.as_bytes());
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    for q in v["loads"][0]["devices"].as_array().unwrap() {
        let e = &q["estimated"];
        assert!(
            e["low"].as_i64() <= e["bytes"].as_i64() && e["bytes"].as_i64() <= e["high"].as_i64()
        );
    }
}

#[test]
fn a_log_cut_mid_load_reports_the_load_as_partial() {
    let text = String::from_utf8(founding()).unwrap();
    let cut: String = text.lines().take(28).map(|l| format!("{l}\n")).collect();
    let out = run(&["--format", "json"], cut.as_bytes());
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let reasons = v["loads"][0]["source"]["partial_reasons"].to_string();
    assert!(reasons.contains("not seen to finish"), "{reasons}");
    // Cut in the middle of a line too.
    let out = run(&["--format", "json"], &text.as_bytes()[..text.len() / 2]);
    no_panic(&out);
    assert_eq!(json(&out)["loads"].as_array().unwrap().len(), 1);
}

#[test]
fn a_directory_is_an_error_and_the_other_inputs_are_read() {
    let out = run(&["--format", "json", "sample-logs", FOUNDING], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("sample-logs: is a directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out)["loads"].as_array().unwrap().len(), 1);
}

#[test]
fn a_fifo_is_read_like_a_file() {
    let dir = scratch("fifo");
    let fifo = dir.join("server.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !matches!(made, Ok(s) if s.success()) {
        eprintln!("skipped: mkfifo is not available here");
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            // Opening blocks until vramdiff opens the other end.
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            f.write_all(&founding()).unwrap();
        })
    };
    let out = run(&["--format", "json", s(&fifo)], b"");
    writer.join().unwrap();
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["loads"].as_array().unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unreadable_file_is_an_error_naming_it_and_the_others_are_read() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("unreadable");
    let path = dir.join("secret.log");
    std::fs::write(&path, founding()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&path).is_ok() {
        eprintln!(
            "skipped: running as root (or with CAP_DAC_OVERRIDE), mode 000 does not stop reads"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let out = run(&["--format", "json", s(&path), FOUNDING], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(s(&path)) && err.contains("ermission denied"),
        "{err}"
    );
    assert_eq!(json(&out)["loads"].as_array().unwrap().len(), 1);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_utf16le_server_log_with_bom_is_read_like_any_log() {
    let dir = scratch("utf16");
    let path = dir.join("server.log");
    let text = String::from_utf8(founding()).unwrap().replace('\n', "\r\n");
    let mut bytes = vec![0xFF, 0xFE];
    for unit in text.encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    std::fs::write(&path, &bytes).unwrap();
    let out = run(&["--format", "json", s(&path)], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["loads"].as_array().unwrap().len(), 1);
    assert!(warnings(&v, 0).is_empty(), "{:?}", warnings(&v, 0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_xml_entity_bomb_given_with_smi_is_refused_naming_file_and_line() {
    let dir = scratch("xmlbomb");
    let path = dir.join("bomb.xml");
    let mut xml = String::from(
        "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log [\n <!ENTITY a \"lol\">\n",
    );
    for i in 1..10 {
        let prev = if i == 1 {
            "a".to_string()
        } else {
            format!("a{}", i - 1)
        };
        xml.push_str(&format!(
            " <!ENTITY a{i} \"{}\">\n",
            format!("&{prev};").repeat(10)
        ));
    }
    xml.push_str("]>\n<nvidia_smi_log>\n<driver_version>&a9;</driver_version>\n<gpu id=\"00000000:01:00.0\"><product_name>&a9;</product_name>\n<fb_memory_usage><total>16384 MiB</total><used>&a9; MiB</used></fb_memory_usage>\n</gpu>\n</nvidia_smi_log>\n");
    std::fs::write(&path, xml).unwrap();
    let out = run(&["--smi", s(&path), FOUNDING], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("warning: {}:3: nvidia-smi XML", path.display()))
            && text.contains("declares an entity"),
        "{text}"
    );
    assert!(text.contains("Load 1: sample-logs/founding"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_and_zstd_logs_are_read_whatever_their_name() {
    let dir = scratch("compressed");
    let gz = dir.join("server.log.1"); // logrotate's name; no .gz
    std::fs::write(&gz, gzip(&founding())).unwrap();
    let zst = dir.join("server.zst");
    std::fs::write(&zst, zstd::encode_all(&founding()[..], 3).unwrap()).unwrap();
    let out = run(&["--format", "json", s(&gz), s(&zst)], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let plain = json(&run(&["--format", "json", FOUNDING], b""));
    assert_eq!(v["loads"].as_array().unwrap().len(), 2);
    for load in v["loads"].as_array().unwrap() {
        assert_eq!(load["components"], plain["loads"][0]["components"]);
    }
    // Piped in too.
    let out = run(&["--format", "json"], &gzip(&founding()));
    assert_eq!(json(&out)["loads"].as_array().unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cut_gzip_file_keeps_what_was_read_and_is_an_error_naming_the_file() {
    let dir = scratch("cutgz");
    let path = dir.join("cut.log.gz");
    let mut log = founding();
    log.extend(std::fs::read(root().join(T4)).unwrap());
    let gz = gzip(&log);
    std::fs::write(&path, &gz[..gz.len() * 3 / 4]).unwrap();
    let out = run(&["--format", "json", s(&path)], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}: read error after line", path.display())),
        "{err}"
    );
    assert!(!json(&out)["loads"].as_array().unwrap().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_gzip_bomb_is_stopped_with_an_error_naming_the_file() {
    let dir = scratch("gzbomb");
    let path = dir.join("bomb.log.gz");
    // 1100 gzip members of 1 MiB of zeros each: about 1 MiB on disk, 1.07 GiB decompressed (about 1000×).
    let member = gzip(&vec![0u8; 1 << 20]);
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for _ in 0..1100 {
            f.write_all(&member).unwrap();
        }
    }
    let out = run(&["--format", "json", s(&path), FOUNDING], b"");
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(s(&path)) && err.contains("decompression bomb"),
        "{err}"
    );
    // The other input is still read.
    assert_eq!(json(&out)["loads"].as_array().unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_closed_pipe_exits_quietly_with_0() {
    // A report bigger than a pipe buffer (64 KiB), so that writing hits the closed pipe.
    let log = founding().repeat(60);
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramdiff"))
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // `| head -0`: the reader is gone before vramdiff writes
    {
        let mut input = child.stdin.take().unwrap();
        input.write_all(&log).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

/// Terminal control text an attacker could put in a log: an OSC 8 hyperlink, a title change, a CSI colour, a
/// carriage return that overwrites what was printed, a C1 CSI, and a right-to-left override.
/// (OSC strings end with BEL here: a backslash would be read as an escape inside a quoted slog value.)
const HOSTILE: &str =
    "\x1b]8;;http://evil.example/\x07x\x1b]8;;\x07\x1b]0;pwned\x07\x1b[2J\rX\u{9b}31m\u{202e}";

#[test]
fn terminal_control_text_from_logs_and_captures_never_reaches_the_terminal() {
    let dir = scratch("escapes");
    let text = String::from_utf8(founding()).unwrap();
    let log: String = text
        .lines()
        // Without the architecture line the header names the model by its blob, from the model path.
        .filter(|l| !l.contains("architecture="))
        .map(|l| {
            l.replace("blobs/sha256-e8ad", &format!("blobs/sha256-e8ad{HOSTILE}"))
                .replace("name=\"Tesla K80\"", &format!("name=\"Tesla{HOSTILE}K80\""))
                + "\n"
        })
        .collect::<String>()
        + &format!("unknown_print: weird {HOSTILE} buffer size = 12.00 MiB\n");
    let path = dir.join("hostile.log");
    std::fs::write(&path, &log).unwrap();
    let smi = dir.join("apps.csv");
    std::fs::write(
        &smi,
        format!(
            "pid, process_name, used_gpu_memory [MiB]\n4242, /usr/bin/ol{HOSTILE}lama, 9800 MiB\n"
        ),
    )
    .unwrap();
    let out = run(&["--show-unrecognized", "--smi", s(&smi), s(&path)], b"");
    no_panic(&out);
    let report = stdout(&out);
    // Each hostile field was printed (sanitised), so the check below is not vacuous.
    // (The model path itself is not printed: the header shows the blob's hex digits only.)
    assert!(report.contains("Load 1:"), "{report}");
    assert!(report.contains("Tesla"), "{report}");
    assert!(report.contains("/usr/bin/ol"), "{report}");
    assert!(
        report.contains("unrecognized") && report.contains("unknown_print: weird"),
        "{report}"
    );
    let bad: Vec<char> = report
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t') || ('\u{202a}'..='\u{202e}').contains(&c)
        })
        .collect();
    assert!(bad.is_empty(), "control characters {bad:?} in\n{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_older_log_appended_to_a_newer_one_does_not_inherit_its_server() {
    // Found by the two-logs-as-one-stream property: the 2024 T4 log (no server start line) after the 2025 K80
    // log took Ollama 0.9.6 and the K80s from it, and its weights verdict turned from match to over.
    let mut both = founding();
    both.extend(std::fs::read(root().join(T4)).unwrap());
    let joined = json(&run(&["--format", "json"], &both));
    let alone = json(&run(&["--format", "json", T4], b""));
    let second = &joined["loads"][1];
    assert!(
        second["ollama_version"].is_null(),
        "{}",
        second["ollama_version"]
    );
    let names = |v: &serde_json::Value| {
        v["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(second), names(&alone["loads"][0]));
    let verdicts = |v: &serde_json::Value| {
        v["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["component"].to_string(),
                    c["verdict"].to_string(),
                    c["delta"].to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(verdicts(second), verdicts(&alone["loads"][0]));
}

/// Absurd hyperparameters and contexts (a garbled or hostile log): no panic, no overflow, in the report and in
/// `whatif --max-ctx`. The KV lines and buffers are those of `sample-logs/001-kaggle-t4-llama31-8b.log`.
#[test]
fn absurd_hyperparameters_do_not_panic() {
    let mut log = String::new();
    let lines = [
        "llm_load_print_meta: arch             = gemma3",
        "llm_load_print_meta: n_layer          = 99999",
        "llm_load_print_meta: n_head_kv        = [18446744073709551615, 8]",
        "llm_load_print_meta: n_swa            = 18446744073709551615",
        "llm_load_print_meta: n_embd_head_k    = 18446744073709551615",
        "llm_load_print_meta: n_embd_head_v    = 128",
        "llm_load_print_meta: n_embd_k_gqa     = 16000000",
        "llm_load_print_meta: n_embd_v_gqa     = 16000000",
        "llm_load_print_meta: ssm_d_state      = 18446744073709551615",
        "llm_load_print_meta: ssm_d_inner      = 18446744073709551615",
        "llama_new_context_with_model: n_ctx      = 9223372036854775807",
        "llama_new_context_with_model: n_ubatch   = 9223372036854775807",
        "llm_load_tensors: offloaded 33/33 layers to GPU",
        "llm_load_tensors:      CUDA0 buffer size =  4403.50 MiB",
        "llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB",
        "llama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB",
        "llama_new_context_with_model:      CUDA0 compute buffer size =   560.00 MiB",
    ];
    for l in lines {
        log.push_str(l);
        log.push('\n');
    }
    let out = run(&["--format", "json", "-"], log.as_bytes());
    no_panic(&out);
    let out = run(&["whatif", "--max-ctx", "-"], log.as_bytes());
    no_panic(&out);
}

/// Found by the `ps` fuzz target (fuzz/README.md): an `/api/ps` reply listing several models, one with
/// `size_vram` at i64::MIN, overflowed the distance to the load's GPU buffers (a panic where overflow is
/// checked, a wrong pick where it is not). The nearest model is still picked.
#[test]
fn an_api_ps_size_vram_at_the_i64_limit_does_not_overflow_the_match() {
    let reply = br#"{"models":[{"name":"a:1b","size":1,"size_vram":0},{"name":"b:70b","size":45000000000,"size_vram":41000000000,"context_length":null},{"name":"c","size":9223372036854775807,"size_vram":-9223372036854775808}]}"#;
    let json = with_ps_reply(reply);
    assert_eq!(json["ollama_ps"]["name"], "b:70b", "{}", json["ollama_ps"]);
}

/// Found by the `ps` fuzz target once the match above no longer overflowed: the only model listed, at
/// `size_vram` i64::MIN, overflowed the `ps-mismatch` check's gap to the card's figure.
#[test]
fn an_api_ps_size_vram_at_the_i64_limit_does_not_overflow_the_ps_mismatch_check() {
    let reply = br#"{"models":[{"name":"a:1b","size":807,"size_vram":-9223372036854775808}]}"#;
    let json = with_ps_reply(reply);
    assert_eq!(json["ollama_ps"]["name"], "a:1b", "{}", json["ollama_ps"]);
}

/// Sample 024's load through the pipeline with `reply` as the `/api/ps` answer read when it completed; the load
/// as JSON.
fn with_ps_reply(reply: &[u8]) -> serde_json::Value {
    use vramdiff::model::{Concluded, Load};
    use vramdiff::pipeline::{LoadSink, Options, Pipeline};
    use vramdiff::reconcile::observations::Moment;
    struct Sink(vramdiff::reconcile::observations::PsListing, Vec<Concluded>);
    impl LoadSink for Sink {
        fn observe(&mut self, _load: &Load) -> Moment {
            Moment {
                ps: Some(self.0.clone()),
                ..Moment::default()
            }
        }
        fn concluded(&mut self, load: Concluded) {
            self.1.push(load);
        }
    }
    let reply = vramdiff::live::ollama::read_reply(reply).unwrap();
    let mut sink = Sink(
        vramdiff::live::ollama::listing("http://x", reply),
        Vec::new(),
    );
    let log =
        std::fs::read(root().join("sample-logs/024-multigpu-cuda0-cuda2-70b-actual.log")).unwrap();
    Pipeline::new(&Options::default()).unwrap().stream(
        "024.log",
        vramdiff::source::decoded(std::io::Cursor::new(log)),
        &mut [],
        &mut sink,
    );
    assert_eq!(sink.1.len(), 1);
    serde_json::to_value(&sink.1[0]).unwrap()
}
