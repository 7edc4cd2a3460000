//! Following an input that grows: a file followed by name across rotation and truncation (as `tail -F`
//! does, by polling), or a standard input that does not end (`journalctl -fu ollama -o cat | vramdiff -f`).
//!
//! [`Follow`] is a plain [`Read`], so the rest of the pipeline reads it as it reads any input. It hands out
//! whole lines only, and when it has nothing more for now it returns [`Quiet`] once, between two lines:
//! the framing stage takes that as "the input went quiet" (`Read::Idle` in `src/frame/read.rs`) and the
//! pipeline reports whatever load has completed. It ends (`Ok(0)`) when the stop flag is set (Ctrl-C, a
//! closed stdout, `--fail-on`) or when standard input is closed.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

/// How often a quiet file is looked at again (size, identity), and how long a quiet stdin is waited on before
/// the stop flag is checked again.
pub const POLL: Duration = Duration::from_millis(200);

/// The most bytes read from the input at once.
const CHUNK: usize = 64 * 1024;

/// An unfinished line is held until its end arrives, up to this many bytes (twice the longest line kept).
const MAX_HELD_BYTES: usize = 2 * super::MAX_LINE_BYTES;

/// The error [`Follow`] returns, between two lines, when it has nothing more for now (kind `WouldBlock`).
/// A marker of its own, so that a non-blocking descriptor's `WouldBlock` is still an error elsewhere.
#[derive(Debug)]
pub struct Quiet;

impl std::fmt::Display for Quiet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the followed input has nothing more for now")
    }
}

impl std::error::Error for Quiet {}

impl Quiet {
    /// True when `e` is the follow source's pause.
    pub fn is(e: &io::Error) -> bool {
        e.kind() == io::ErrorKind::WouldBlock
            && e.get_ref().is_some_and(|inner| inner.is::<Quiet>())
    }
}

/// A growing input, read as whole lines.
pub struct Follow {
    feed: Feed,
    /// Bytes read and not yet handed out, from `start`.
    pending: Vec<u8>,
    start: usize,
    /// `WouldBlock` was returned and no byte arrived since.
    quiet_said: bool,
    stop: Arc<AtomicBool>,
    notice: Box<dyn FnMut(String) + Send>,
}

enum Feed {
    File(FileFeed),
    Stdin(Receiver<io::Result<Vec<u8>>>),
}

struct FileFeed {
    path: PathBuf,
    file: Option<File>,
    identity: Option<Identity>,
    /// Bytes of the open file read so far.
    position: u64,
    /// The path was missing when last looked at (said once).
    missing_said: bool,
}

/// What tells one file from the file that replaced it under the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    Some(Identity {
        device: meta.dev(),
        inode: meta.ino(),
    })
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<Identity> {
    // Without inode numbers a rotation is seen as a truncation (the new file is shorter): read from its start.
    None
}

/// What one look at the input found.
enum Fetched {
    Bytes,
    Nothing,
    Ended,
}

impl Follow {
    /// Follow the file at `path` by name, from its first byte. A missing file is waited for.
    pub fn file(
        path: &str,
        stop: Arc<AtomicBool>,
        notice: Box<dyn FnMut(String) + Send>,
    ) -> Follow {
        Follow::new(
            Feed::File(FileFeed {
                path: PathBuf::from(path),
                file: None,
                identity: None,
                position: 0,
                missing_said: false,
            }),
            stop,
            notice,
        )
    }

    /// Follow standard input until it is closed. A thread reads it, so a quiet pipe does not block the stop
    /// flag's check.
    pub fn stdin(stop: Arc<AtomicBool>, notice: Box<dyn FnMut(String) + Send>) -> Follow {
        let (tx, rx) = mpsc::sync_channel(4);
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            loop {
                let mut chunk = vec![0; CHUNK];
                match stdin.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => {
                        chunk.truncate(n);
                        if tx.send(Ok(chunk)).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Follow::new(Feed::Stdin(rx), stop, notice)
    }

    fn new(feed: Feed, stop: Arc<AtomicBool>, notice: Box<dyn FnMut(String) + Send>) -> Follow {
        Follow {
            feed,
            pending: Vec::new(),
            start: 0,
            quiet_said: false,
            stop,
            notice,
        }
    }

    /// Bytes up to and including the last newline held, ready to hand out. A line that grows past
    /// [`MAX_HELD_BYTES`] without its end is handed out as it is (the line reader cuts it).
    fn ready(&self) -> usize {
        let held = &self.pending[self.start..];
        match memchr::memrchr(b'\n', held) {
            Some(i) => i + 1,
            None if held.len() > MAX_HELD_BYTES => held.len(),
            None => 0,
        }
    }

    /// End a line left open (the input ended or was replaced in the middle of it).
    fn close_open_line(&mut self) {
        if self.pending.len() > self.start && self.pending.last() != Some(&b'\n') {
            self.pending.push(b'\n');
        }
    }

    fn fetch(&mut self) -> io::Result<Fetched> {
        let mut closed_line = false;
        let fetched = match &mut self.feed {
            // Until the pause is said, only what has already arrived counts: the pipe is drained.
            Feed::Stdin(rx) if !self.quiet_said => match rx.try_recv() {
                Ok(chunk) => {
                    self.pending.extend_from_slice(&chunk?);
                    Fetched::Bytes
                }
                Err(TryRecvError::Empty) => Fetched::Nothing,
                Err(TryRecvError::Disconnected) => Fetched::Ended,
            },
            Feed::Stdin(rx) => match rx.recv_timeout(POLL) {
                Ok(chunk) => {
                    self.pending.extend_from_slice(&chunk?);
                    Fetched::Bytes
                }
                Err(RecvTimeoutError::Timeout) => Fetched::Nothing,
                Err(RecvTimeoutError::Disconnected) => Fetched::Ended,
            },
            Feed::File(f) => {
                let (fetched, replaced) = f.fetch(&mut self.pending, &mut *self.notice)?;
                closed_line = replaced;
                fetched
            }
        };
        if closed_line {
            self.close_open_line();
        }
        Ok(fetched)
    }
}

impl FileFeed {
    /// Read what the file has now; on nothing new, look for a rotation or a truncation. The flag is true when
    /// reading moved to another file (or back to the start), so a line left open is ended.
    fn fetch(
        &mut self,
        pending: &mut Vec<u8>,
        notice: &mut dyn FnMut(String),
    ) -> io::Result<(Fetched, bool)> {
        if let Some(file) = &mut self.file {
            let before = pending.len();
            let n = file.by_ref().take(CHUNK as u64).read_to_end(pending)?;
            debug_assert_eq!(pending.len(), before + n);
            if n > 0 {
                self.position += n as u64;
                return Ok((Fetched::Bytes, false));
            }
        }
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Rotated away and not yet replaced, or not created yet: keep what is open, wait.
                if self.file.is_none() && !self.missing_said {
                    self.missing_said = true;
                    notice(format!(
                        "{}: not there yet; waiting for it",
                        self.path.display()
                    ));
                }
                return Ok((Fetched::Nothing, false));
            }
            Err(e) => return Err(e),
        };
        let replaced =
            self.file.is_some() && identity(&meta).is_some() && identity(&meta) != self.identity;
        if self.file.is_none() || replaced {
            if replaced {
                notice(format!(
                    "{}: replaced (rotated); following the new file from its start",
                    self.path.display()
                ));
            }
            let file = File::open(&self.path)?;
            self.identity = file.metadata().ok().as_ref().and_then(identity);
            self.file = Some(file);
            self.position = 0;
            self.missing_said = false;
            return Ok((Fetched::Bytes, replaced));
        }
        if meta.len() < self.position {
            notice(format!(
                "{}: truncated; reading it again from its start",
                self.path.display()
            ));
            if let Some(file) = &mut self.file {
                file.seek(SeekFrom::Start(0))?;
            }
            self.position = 0;
            return Ok((Fetched::Bytes, true));
        }
        Ok((Fetched::Nothing, false))
    }
}

impl Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let ready = self.ready();
            if ready > 0 {
                let n = ready.min(buf.len());
                buf[..n].copy_from_slice(&self.pending[self.start..self.start + n]);
                self.start += n;
                if self.start == self.pending.len() {
                    self.pending.clear();
                    self.start = 0;
                } else if self.start > CHUNK {
                    self.pending.drain(..self.start);
                    self.start = 0;
                }
                return Ok(n);
            }
            if self.stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            match self.fetch()? {
                Fetched::Bytes => self.quiet_said = false,
                Fetched::Ended => {
                    self.close_open_line();
                    if self.ready() == 0 {
                        return Ok(0);
                    }
                }
                Fetched::Nothing if !self.quiet_said => {
                    self.quiet_said = true;
                    return Err(io::Error::new(io::ErrorKind::WouldBlock, Quiet));
                }
                Fetched::Nothing => {
                    if matches!(self.feed, Feed::File(_)) {
                        std::thread::sleep(POLL);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "vramdiff-source-follow-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn follow(path: &Path) -> (Follow, Arc<AtomicBool>) {
        let stop = Arc::new(AtomicBool::new(false));
        let f = Follow::file(
            &path.display().to_string(),
            Arc::clone(&stop),
            Box::new(|_| {}),
        );
        (f, stop)
    }

    /// Read until the source says it is quiet; what it handed out.
    fn until_quiet(f: &mut Follow) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 7];
        loop {
            match f.read(&mut buf) {
                Ok(0) => return out,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if Quiet::is(&e) => return out,
                Err(e) => panic!("{e}"),
            }
        }
    }

    use std::path::Path;

    // Lines of sample-logs/founding-k80-gemma3-12b.log (35 and 36).
    const RUNNER_STARTED: &[u8] = b"time=2025-07-20T09:43:48.058+08:00 level=INFO source=server.go:637 msg=\"llama runner started in 21.82 seconds\"\n";
    const GIN: &[u8] = b"[GIN] 2025/07/20 - 09:43:48 | 200 | 22.297513877s |       127.0.0.1 | POST     \"/api/generate\"\n";

    #[test]
    fn whole_lines_only_then_quiet_until_the_line_ends() {
        let dir = scratch("partial");
        let path = dir.join("server.log");
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(RUNNER_STARTED).unwrap();
        file.write_all(&GIN[..20]).unwrap();
        let (mut f, _) = follow(&path);
        assert_eq!(until_quiet(&mut f), RUNNER_STARTED);
        file.write_all(&GIN[20..]).unwrap();
        assert_eq!(until_quiet(&mut f), GIN);
    }

    #[test]
    fn a_truncated_file_is_read_again_from_its_start() {
        let dir = scratch("truncate");
        let path = dir.join("server.log");
        std::fs::write(&path, [RUNNER_STARTED, GIN].concat()).unwrap();
        let (mut f, _) = follow(&path);
        assert_eq!(until_quiet(&mut f), [RUNNER_STARTED, GIN].concat());
        std::fs::write(&path, GIN).unwrap();
        assert_eq!(until_quiet(&mut f), GIN);
    }

    #[test]
    fn a_rotated_file_is_drained_then_the_new_one_read_and_a_cut_line_ended() {
        let dir = scratch("rotate");
        let path = dir.join("server.log");
        std::fs::write(&path, RUNNER_STARTED).unwrap();
        let (mut f, _) = follow(&path);
        assert_eq!(until_quiet(&mut f), RUNNER_STARTED);
        let mut old = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::fs::rename(&path, dir.join("server.log.1")).unwrap();
        // Written to the old file after the rename, as a logger that has not reopened yet does; no newline.
        old.write_all(&GIN[..GIN.len() - 1]).unwrap();
        std::fs::write(&path, RUNNER_STARTED).unwrap();
        // No pause between the old file's last bytes and the new file's: one read-until-quiet gets both.
        assert_eq!(until_quiet(&mut f), [GIN, RUNNER_STARTED].concat());
    }

    #[test]
    fn the_stop_flag_ends_the_stream() {
        let dir = scratch("stop");
        let path = dir.join("server.log");
        std::fs::write(&path, GIN).unwrap();
        let (mut f, stop) = follow(&path);
        assert_eq!(until_quiet(&mut f), GIN);
        stop.store(true, Ordering::Relaxed);
        let mut buf = [0u8; 16];
        assert_eq!(f.read(&mut buf).unwrap(), 0);
    }
}
