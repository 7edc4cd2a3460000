//! `--capture`: run the GPU monitor when a load completes, with a timeout, and read what it printed with the
//! same parser as a `--smi` file, so the result is joined to the load exactly as a capture file would be.
//!
//! nvidia-smi is asked twice, in the CSV forms its documentation gives for scripts (`--format=csv,nounits`: a
//! header naming every column, whole MiB): the GPUs (index, UUID, bus id, used, total) and the compute
//! processes (pid, name, used, GPU UUID), which is what splits a GPU's memory into the runner and the others.
//! rocm-smi prints one JSON document (`--showmeminfo vram --showbus --json`).

use std::time::Duration;

use crate::model::Snapshot;
use crate::smi::file::read_capture;

use super::bounded;

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
    let ran = bounded::run(program, args, timeout, false).map_err(|e| e.to_string())?;
    if !ran.status.success() {
        let first = String::from_utf8_lossy(&ran.stdout);
        let first = first.lines().next().unwrap_or("").trim();
        return Err(format!(
            "`{program} {}` failed ({}){}",
            args.join(" "),
            ran.status,
            if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            }
        ));
    }
    Ok(ran.stdout)
}
