//! Where the server's log is on this machine, for `vramdiff doctor` (and `vramdiff` with no file on a
//! terminal). Tried in order, the first that holds text wins: a path given, `$OLLAMA_LOGS` (a file, or a folder
//! of `server*.log`), journald's `ollama` unit (the system's, then the user's: `journalctl -u ollama` and
//! `journalctl --user -u ollama`, `-o cat` so no host name is read), `~/.ollama/logs/server.log` (macOS and
//! the install script's user service), `%LOCALAPPDATA%\Ollama\server*.log` (Windows; the newest), and `docker
//! logs` of a running `ollama/ollama` container. Each place tried is said, so a miss tells the user where to
//! look next.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
pub type Tried = Vec<String>;

/// The first place that holds a log, and what was tried before it.
pub fn locate(given: Option<&str>) -> (Option<Found>, Tried) {
    let mut tried = Vec::new();
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
        if let Some(found) = printed("journalctl", &args, origin, &mut tried) {
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
    if let Some(found) = docker(&mut tried) {
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
fn printed(program: &str, args: &[&str], origin: &str, tried: &mut Tried) -> Option<Found> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            tried.push(format!("{origin}: {program} not found"));
            return None;
        }
        Err(e) => {
            tried.push(format!("{origin}: {e}"));
            return None;
        }
    };
    let mut text = Vec::new();
    if program == "docker" {
        text.extend_from_slice(&output.stderr);
    }
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

/// `docker logs` of the first running container of the `ollama/ollama` image.
fn docker(tried: &mut Tried) -> Option<Found> {
    let listed = Command::new("docker")
        .args([
            "ps",
            "--filter",
            "ancestor=ollama/ollama",
            "--format",
            "{{.Names}}",
        ])
        .stdin(Stdio::null())
        .output();
    let names = match listed {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            tried.push(format!("docker ps: failed ({})", o.status));
            return None;
        }
        Err(_) => {
            tried.push("docker ps: docker not found".to_string());
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
        tried,
    )
}
