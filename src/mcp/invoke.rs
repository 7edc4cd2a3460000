//! Running the `vramdiff` binary for one call ([`super::plan::Invocation`]): the server's own executable, in
//! a process of its own, so that whatever a log or a model file does to the analysis (a panic, an abort, a run
//! out of memory) ends that call with an error and never the server; and so that a log is streamed from its
//! file exactly as the CLI streams it. Pasted texts are written into a private folder, removed afterwards,
//! which is the command's working directory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use super::plan::Invocation;

/// What the command left: its stdout, its stderr messages (without the `vramdiff: ` prefix) and its exit
/// code (`None`: ended by a signal).
#[derive(Debug)]
pub struct Ran {
    pub stdout: Vec<u8>,
    pub messages: Vec<String>,
    pub code: Option<i32>,
}

/// A folder of this process's own, removed when dropped.
struct PrivateFolder(PathBuf);

impl PrivateFolder {
    fn new() -> std::io::Result<PrivateFolder> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path =
                std::env::temp_dir().join(format!("vramdiff-mcp-{}-{n}", std::process::id()));
            // create_dir fails on an existing name: the folder is new, and ours.
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(PrivateFolder(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for PrivateFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `binary` with the invocation's arguments, its pasted texts written first; standard input is closed
/// (the server's own is the MCP channel).
pub fn run(binary: &Path, invocation: &Invocation) -> Result<Ran, String> {
    let folder = if invocation.pasted.is_empty() {
        None
    } else {
        let folder = PrivateFolder::new()
            .map_err(|e| format!("cannot make a folder for the pasted text: {e}"))?;
        for (name, text) in &invocation.pasted {
            std::fs::write(folder.0.join(name), text)
                .map_err(|e| format!("cannot write the pasted text: {e}"))?;
        }
        Some(folder)
    };
    let mut command = Command::new(binary);
    command
        .args(&invocation.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(folder) = &folder {
        command.current_dir(&folder.0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    // stderr on a thread of its own, so that neither pipe fills while the other is read.
    let mut stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(stderr) = stderr.as_mut() {
            let _ = stderr.read_to_end(&mut text);
        }
        text
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_end(&mut stdout);
    }
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for {}: {e}", binary.display()))?;
    let stderr = errors.join().unwrap_or_default();
    drop(folder);
    Ok(Ran {
        stdout,
        messages: String::from_utf8_lossy(&stderr)
            .lines()
            .map(|l| l.strip_prefix("vramdiff: ").unwrap_or(l).to_string())
            .filter(|l| !l.is_empty())
            .collect(),
        code: status.code(),
    })
}
