//! Where the server's log is on this machine, for `vramdiff doctor` (and `vramdiff` with no file on a
//! terminal). Tried in order, the first that holds text wins: a path given, `$OLLAMA_LOGS` (a file, or a folder
//! of `server*.log`), journald's `ollama` unit (the system's, then the user's: `journalctl -u ollama` and
//! `journalctl --user -u ollama`, `-o cat` so no host name is read), `~/.ollama/logs/server.log` (macOS and
//! the install script's user service), `%LOCALAPPDATA%\Ollama\server*.log` (Windows; the newest), and `docker
//! logs` of a running `ollama/ollama` container. Each place tried is said, so a miss tells the user where to
//! look next. Each command run is bounded in time ([`crate::live::bounded`]): one that hangs is stopped, said,
//! and the search goes on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::live::bounded::{self, Failed};

/// How many of the newest lines are read from journald and docker: several loads' worth, a bounded read.
pub const TAIL_LINES: &str = "100000";

/// A log found: where (in words), and its text or its path.
#[derive(Debug)]
pub struct Found {
    /// Where it was found, as the user would look for it (`journalctl -u ollama`, a path).
    pub origin: String,
    pub log: Log,
}

/// A log as a file to read, or as text a command printed.
#[derive(Debug)]
pub enum Log {
    File(PathBuf),
    Printed(Vec<u8>),
}

/// The places tried, in order, with why each gave nothing.
#[derive(Debug, Default)]
pub struct Tried {
    /// Every place tried before the one found (or all of them), with why it gave nothing.
    pub places: Vec<String>,
    /// The commands stopped at the bound, worth saying even when a log was found elsewhere.
    pub stopped: Vec<String>,
}

impl Tried {
    fn push(&mut self, place: String) {
        self.places.push(place);
    }
}

/// The first place that holds a log, and what was tried before it; each command run may take `timeout`.
pub fn locate(given: Option<&str>, timeout: Duration) -> (Option<Found>, Tried) {
    let mut tried = Tried::default();
    if let Some(path) = given {
        return (file(Path::new(path), &mut tried), tried);
    }
    if let Some(dir) = std::env::var_os("OLLAMA_LOGS") {
        let path = PathBuf::from(dir);
        let found = if path.is_dir() {
            newest_server_log(&path, &mut tried)
        } else {
            file(&path, &mut tried)
        };
        if found.is_some() {
            return (found, tried);
        }
    }
    for user in [false, true] {
        let mut args = vec![];
        if user {
            args.push("--user");
        }
        args.extend(["-u", "ollama", "--no-pager", "-o", "cat", "-n", TAIL_LINES]);
        let origin = if user {
            "journalctl --user -u ollama"
        } else {
            "journalctl -u ollama"
        };
        if let Some(found) = printed("journalctl", &args, origin, timeout, &mut tried) {
            return (Some(found), tried);
        }
    }
    if let Some(home) = home() {
        let path = home.join(".ollama").join("logs").join("server.log");
        if let Some(found) = file(&path, &mut tried) {
            return (Some(found), tried);
        }
    }
    if let Some(local) = std::env::var_os("LOCALAPPDATA") {
        if let Some(found) = newest_server_log(&PathBuf::from(local).join("Ollama"), &mut tried) {
            return (Some(found), tried);
        }
    }
    if let Some(found) = docker(timeout, &mut tried) {
        return (Some(found), tried);
    }
    (None, tried)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
}

/// A file that exists and is not empty.
fn file(path: &Path, tried: &mut Tried) -> Option<Found> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() > 0 => Some(Found {
            origin: path.display().to_string(),
            log: Log::File(path.to_path_buf()),
        }),
        Ok(m) if m.is_file() => {
            tried.push(format!("{}: empty", path.display()));
            None
        }
        Ok(_) => {
            tried.push(format!("{}: not a file", path.display()));
            None
        }
        Err(e) => {
            tried.push(format!("{}: {e}", path.display()));
            None
        }
    }
}

/// The newest `server*.log` of a folder (Ollama on Windows rotates `server.log` to `server-1.log`, …).
fn newest_server_log(dir: &Path, tried: &mut Tried) -> Option<Found> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        tried.push(format!("{}: no such folder", dir.display()));
        return None;
    };
    let newest = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_lowercase();
            name.starts_with("server") && name.ends_with(".log")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
    match newest {
        Some((_, path)) => file(&path, tried),
        None => {
            tried.push(format!("{}: no server*.log", dir.display()));
            None
        }
    }
}

/// What a command printed (standard error, where Ollama logs, then standard output), when it ran and printed
/// log lines.
fn printed(
    program: &str,
    args: &[&str],
    origin: &str,
    timeout: Duration,
    tried: &mut Tried,
) -> Option<Found> {
    let output = match bounded::run(program, args, timeout, program == "docker") {
        Ok(o) => o,
        Err(e) => {
            failed(origin, program, e, tried);
            return None;
        }
    };
    let mut text = output.stderr;
    text.extend_from_slice(&output.stdout);
    let lines = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty() && !l.starts_with(b"-- No entries --"))
        .count();
    if !output.status.success() || lines == 0 {
        tried.push(format!(
            "{origin}: {}",
            if output.status.success() {
                "no lines".to_string()
            } else {
                format!("failed ({})", output.status)
            }
        ));
        return None;
    }
    Some(Found {
        origin: origin.to_string(),
        log: Log::Printed(text),
    })
}

/// A command that gave nothing, said: a timeout also among the commands stopped.
fn failed(origin: &str, program: &str, failure: Failed, tried: &mut Tried) {
    match failure {
        Failed::NotFound => tried.push(format!("{origin}: {program} not found")),
        Failed::TimedOut(why) => {
            tried.push(format!("{origin}: {why}"));
            tried.stopped.push(format!("{origin}: {why}"));
        }
        Failed::Other(why) => tried.push(format!("{origin}: {why}")),
    }
}

/// `docker logs` of the first running container of the `ollama/ollama` image.
fn docker(timeout: Duration, tried: &mut Tried) -> Option<Found> {
    let listed = bounded::run(
        "docker",
        &[
            "ps",
            "--filter",
            "ancestor=ollama/ollama",
            "--format",
            "{{.Names}}",
        ],
        timeout,
        false,
    );
    let names = match listed {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            tried.push(format!("docker ps: failed ({})", o.status));
            return None;
        }
        Err(e) => {
            failed("docker ps", "docker", e, tried);
            return None;
        }
    };
    let Some(name) = names.lines().map(str::trim).find(|n| !n.is_empty()) else {
        tried.push("docker ps: no running ollama/ollama container".to_string());
        return None;
    };
    let origin = format!("docker logs {name}");
    printed(
        "docker",
        &["logs", "--tail", TAIL_LINES, name],
        &origin,
        timeout,
        tried,
    )
}
