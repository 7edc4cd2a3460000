//! `--capture`: run the GPU monitor when a load completes, with a timeout, and read what it printed with the
//! same parser as a `--smi` file, so the result is joined to the load exactly as a capture file would be.
//!
//! nvidia-smi is asked twice, in the CSV forms its documentation gives for scripts (`--format=csv,nounits`: a
//! header naming every column, whole MiB): the GPUs (index, UUID, bus id, used, total) and the compute
//! processes (pid, name, used, GPU UUID), which is what splits a GPU's memory into the runner and the others.
//! rocm-smi prints one JSON document (`--showmeminfo vram --showbus --json`).

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::model::Snapshot;
use crate::smi::file::read_capture;

/// Which GPU monitor `--capture` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    NvidiaSmi,
    RocmSmi,
}

impl Tool {
    pub fn program(self) -> &'static str {
        match self {
            Tool::NvidiaSmi => "nvidia-smi",
            Tool::RocmSmi => "rocm-smi",
        }
    }

    /// The runs that make one capture: arguments for each.
    fn queries(self) -> &'static [&'static [&'static str]] {
        match self {
            Tool::NvidiaSmi => &[
                &[
                    "--query-gpu=index,uuid,pci.bus_id,memory.used,memory.total",
                    "--format=csv,nounits",
                ],
                &[
                    "--query-compute-apps=pid,process_name,used_memory,gpu_uuid",
                    "--format=csv,nounits",
                ],
            ],
            Tool::RocmSmi => &[&["--showmeminfo", "vram", "--showbus", "--json"]],
        }
    }
}

/// How long one run of the monitor may take before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Takes captures and says once when it cannot.
pub struct Capturer {
    tool: Tool,
    timeout: Duration,
    warned: bool,
}

impl Capturer {
    pub fn new(tool: Tool, timeout: Duration) -> Self {
        Capturer {
            tool,
            timeout,
            warned: false,
        }
    }

    pub fn program(&self) -> &'static str {
        self.tool.program()
    }

    /// Run the monitor now. `Err` says why there is no capture; it is worded for the user and given once
    /// (`None` after the first failure, so a missing tool is not reported for every load).
    pub fn take(&mut self) -> Result<Vec<Snapshot>, Option<String>> {
        match self.run() {
            Ok(snapshots) => Ok(snapshots),
            Err(_) if self.warned => Err(None),
            Err(e) => {
                self.warned = true;
                Err(Some(format!(
                    "--capture {}: {e}; reports go on without a live capture",
                    self.tool.program()
                )))
            }
        }
    }

    fn run(&self) -> Result<Vec<Snapshot>, String> {
        let mut text = Vec::new();
        for args in self.tool.queries() {
            text.extend(run_with_timeout(self.tool.program(), args, self.timeout)?);
            if text.last().is_some_and(|&b| b != b'\n') {
                text.push(b'\n');
            }
        }
        let name = format!("{} (at the load's completion)", self.tool.program());
        let summary = read_capture(&name, &text[..], None);
        if summary.captures.iter().all(|s| s.gpus.is_empty()) {
            let why = summary
                .warnings
                .first()
                .map(|w| w.message.clone())
                .unwrap_or_else(|| "no GPU in its output".to_string());
            return Err(format!("its output could not be read ({why})"));
        }
        Ok(summary.captures)
    }
}

/// Run `program args`, return its standard output; kill it after `timeout`.
fn run_with_timeout(program: &str, args: &[&str], timeout: Duration) -> Result<Vec<u8>, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "not found on PATH".to_string(),
            _ => format!("cannot start it: {e}"),
        })?;
    let mut stdout = child.stdout.take().ok_or("no standard output")?;
    // The output is read on a thread so that a tool that hangs can be killed; the thread is not joined after
    // a timeout (a grandchild may hold the pipe open), it ends when the pipe closes.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let result = stdout.read_to_end(&mut out).map(|_| out);
        let _ = tx.send(result);
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{program} {}` took longer than {} s and was stopped",
                    args.join(" "),
                    timeout.as_secs_f64()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    let out = rx
        .recv_timeout(deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1))
        .map_err(|_| "its output did not close".to_string())?
        .map_err(|e| format!("cannot read its output: {e}"))?;
    if !status.success() {
        let first = String::from_utf8_lossy(&out);
        let first = first.lines().next().unwrap_or("").trim();
        return Err(format!(
            "`{program} {}` failed ({status}){}",
            args.join(" "),
            if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            }
        ));
    }
    Ok(out)
}
