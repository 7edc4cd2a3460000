//! An external command run with a bound on its time: what `--capture` (nvidia-smi, rocm-smi) and `vramdiff
//! doctor` (journalctl, docker) run. A tool that hangs (a wedged driver, a journal on a dead disk, a docker
//! daemon that does not answer) is killed when the bound passes, and the caller goes on without it.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a command that ended printed.
#[derive(Debug)]
pub struct Ran {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// Empty unless asked for (`keep_stderr`).
    pub stderr: Vec<u8>,
}

/// Why a command gave nothing.
#[derive(Debug)]
pub enum Failed {
    /// Not on `PATH`.
    NotFound,
    /// It ran longer than the bound and was killed: the command line and the bound, in words.
    TimedOut(String),
    /// Anything else, in words.
    Other(String),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::NotFound => f.write_str("not found on PATH"),
            Failed::TimedOut(why) | Failed::Other(why) => f.write_str(why),
        }
    }
}

/// A pipe read to its end on a thread, so that the command can be killed while it is being read.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<std::io::Result<Vec<u8>>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let result = pipe.read_to_end(&mut out).map(|_| out);
            let _ = tx.send(result);
        });
    } else {
        let _ = tx.send(Ok(Vec::new()));
    }
    rx
}

/// Run `program args` with standard input closed; its standard output (and standard error when
/// `keep_stderr`) once it ends; killed after `timeout`. The reading threads are not joined after a timeout (a
/// grandchild may hold a pipe open): each ends when its pipe closes.
pub fn run(
    program: &str,
    args: &[&str],
    timeout: Duration,
    keep_stderr: bool,
) -> Result<Ran, Failed> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(if keep_stderr {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Failed::NotFound,
            _ => Failed::Other(format!("cannot start it: {e}")),
        })?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Failed::TimedOut(format!(
                    "`{program} {}` took longer than {} s and was stopped",
                    args.join(" "),
                    timeout.as_secs_f64()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(Failed::Other(format!("cannot wait for it: {e}"))),
        }
    };
    // The command ended; its pipes close with it unless a child of its own keeps them.
    let grace = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
    let read = |rx: mpsc::Receiver<std::io::Result<Vec<u8>>>| {
        rx.recv_timeout(grace)
            .map_err(|_| Failed::Other("its output did not close".to_string()))?
            .map_err(|e| Failed::Other(format!("cannot read its output: {e}")))
    };
    Ok(Ran {
        status,
        stdout: read(stdout)?,
        stderr: read(stderr)?,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_hangs_is_stopped_and_named() {
        match run("sleep", &["30"], Duration::from_millis(100), false) {
            Err(Failed::TimedOut(why)) => {
                assert_eq!(why, "`sleep 30` took longer than 0.1 s and was stopped")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn both_outputs_of_a_command_that_ends() {
        let ran = run(
            "sh",
            &["-c", "echo out; echo err >&2; exit 3"],
            Duration::from_secs(30),
            true,
        )
        .unwrap();
        assert_eq!(ran.stdout, b"out\n");
        assert_eq!(ran.stderr, b"err\n");
        assert_eq!(ran.status.code(), Some(3));
        assert!(matches!(
            run("no-such-program-here", &[], Duration::from_secs(1), false),
            Err(Failed::NotFound)
        ));
    }
}
