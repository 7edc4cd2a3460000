//! The skim (`frame::skim`: only the lines holding a literal some stage needs are framed, the others counted)
//! gives what framing every line gives: the same summary (lines, warnings, unrecognised lines kept, captures)
//! and the same loads, on every sample, on the samples interleaved with journald noise, and with read buffers
//! cut anywhere (a buffer boundary inside a record, a capture, a hard wrap). Skimming and framing on a thread
//! of their own (`Pipeline::read_ahead`, `src/pipeline/read_ahead.rs`) gives the same again.

use std::io::BufReader;

use vramdiff::pipeline::{Options, Pipeline};

use crate::util::{root, sample_names};

/// The skimmed pipeline, the one framing every line, and the skimmed one reading ahead on a thread.
struct Pipelines {
    skimmed: Pipeline,
    every: Pipeline,
    ahead: Pipeline,
}

fn pipelines() -> Pipelines {
    let options = Options {
        keep_unrecognized: true,
        ..Options::default()
    };
    let skimmed = Pipeline::new(&options).unwrap();
    let mut every = skimmed.clone();
    every.frame_every_line();
    let mut ahead = skimmed.clone();
    ahead.read_ahead();
    Pipelines {
        skimmed,
        every,
        ahead,
    }
}

fn report(p: &mut Pipeline, bytes: &[u8], capacity: usize) -> String {
    let reader = BufReader::with_capacity(capacity, bytes);
    format!("{:#?}", p.run("input.log", reader, &mut []))
}

/// The skimmed and the every-line reports of `bytes`, read through buffers of `capacity` bytes, once the
/// report read ahead on a thread was found the same as the skimmed one.
fn both(pipelines: &mut Pipelines, bytes: &[u8], capacity: usize) -> (String, String) {
    let skimmed = report(&mut pipelines.skimmed, bytes, capacity);
    let ahead = report(&mut pipelines.ahead, bytes, capacity);
    assert!(ahead == skimmed, "read ahead, buffers of {capacity} bytes");
    (skimmed, report(&mut pipelines.every, bytes, capacity))
}

/// Journald noise of the kinds `benches/gen.py` writes (access lines, slog chatter, dots, kernel, free text)
/// between the lines of `log`, every `every` lines.
fn interleave(log: &str, every: usize) -> String {
    let noise = [
        "Nov 30 06:05:00 gpuhost ollama[1234]: [GIN] 2025/11/30 - 06:05:00 | 200 |    1.234567ms |       127.0.0.1 | POST     \"/api/chat\"",
        "Nov 30 06:05:00 gpuhost kernel: nvidia-uvm: Loaded the UVM driver, major device number 235.",
        "Nov 30 06:05:00 gpuhost ollama[1234]: ..........................",
        "Nov 30 06:05:00 gpuhost systemd[1]: logrotate.service: Deactivated successfully.",
        "Nov 30 06:05:01 gpuhost ollama[1234]: why is the sky blue the model said",
        "",
        "   indented noise without literals",
    ];
    let mut out = String::new();
    for (i, line) in log.lines().enumerate() {
        if i % every == 0 {
            out.push_str(noise[i % noise.len()]);
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn skimming_changes_nothing_on_any_sample() {
    let mut pipelines = pipelines();
    let mut inputs: Vec<(String, Vec<u8>)> = sample_names()
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(root().join("sample-logs").join(&name)).unwrap();
            (name, bytes)
        })
        .collect();
    for name in std::fs::read_dir(root().join("tests/fixtures")).unwrap() {
        let path = name.unwrap().path();
        if path.extension().is_some_and(|e| e == "log") {
            inputs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    let mut framed_less = 0;
    for (name, bytes) in &inputs {
        for capacity in [256 * 1024, 4096, 173] {
            let (skimmed, every) = both(&mut pipelines, bytes, capacity);
            assert!(skimmed == every, "{name}, buffers of {capacity} bytes");
        }
        let noisy = interleave(&String::from_utf8_lossy(bytes), 3);
        let (skimmed, every) = both(&mut pipelines, noisy.as_bytes(), 256 * 1024);
        assert!(skimmed == every, "{name} with noise");
        framed_less += usize::from(noisy.len() > bytes.len());
    }
    assert!(inputs.len() > 50 && framed_less > 50, "{}", inputs.len());
}

/// A table pasted into a journald dump, its date line and top border just above it: they are no candidates
/// themselves, but the table takes its date and first line from them.
#[test]
fn a_table_keeps_its_date_line_and_border_above_it() {
    let table = std::fs::read_to_string(
        root().join("sample-logs/038-nvidia-smi-table-2gpu-rtx3060-a2000.nvidia-smi.txt"),
    )
    .unwrap();
    let founding =
        std::fs::read_to_string(root().join("sample-logs/founding-k80-gemma3-12b.log")).unwrap();
    let noise = "Nov 30 06:05:00 gpuhost kernel: nvidia-uvm: Loaded the UVM driver.\n".repeat(40);
    let log = format!("{noise}{founding}{noise}Mon Nov 30 06:05:00 2025\n{table}{noise}");
    let mut pipelines = pipelines();
    for capacity in [256 * 1024, 1000, 97, 64] {
        let (skimmed, every) = both(&mut pipelines, log.as_bytes(), capacity);
        assert!(skimmed == every, "buffers of {capacity} bytes");
        assert!(every.contains("2025"), "the date line is read");
    }
}

/// The founding-today capture (`sample-logs/founding-today-chain-3090-4060-gemma4-31b.log`) in a journald
/// `short-iso` dump, read through buffers of every size from 150 to 1,500 bytes: wherever a buffer ends,
/// the header among its last two lines included (a UTF-16 log is decoded in 4 KiB buffers), the table
/// keeps the date line two lines above its header, as when every line is framed.
#[test]
fn a_table_header_at_a_buffer_end_keeps_its_date_line() {
    let log = std::fs::read_to_string(
        root().join("sample-logs/founding-today-chain-3090-4060-gemma4-31b.log"),
    )
    .unwrap();
    let capture = &log[log.find("PS C:\\Users\\M> nvidia-smi").unwrap()..];
    let noise = "Nov 30 06:05:00 gpuhost kernel: nvidia-uvm: Loaded the UVM driver.\n".repeat(8);
    let dump: String = format!("{noise}{capture}{noise}")
        .lines()
        .map(|l| format!("2026-12-07T03:14:24+00:00 gpu-node ollama[2841]: {l}\n"))
        .collect();
    let mut pipelines = pipelines();
    let every = report(&mut pipelines.every, dump.as_bytes(), 256 * 1024);
    assert!(every.contains("Sun Jun  7 18:12:41 2026"));
    for capacity in 150..=1500 {
        let skimmed = report(&mut pipelines.skimmed, dump.as_bytes(), capacity);
        assert!(skimmed == every, "buffers of {capacity} bytes");
    }
}

/// A line longer than the reader keeps, with and without a literal, between skipped lines: cut the same way,
/// with the same warning, and the numbers of the lines after it unchanged.
#[test]
fn long_lines_are_cut_and_counted_alike() {
    let founding =
        std::fs::read_to_string(root().join("sample-logs/founding-k80-gemma3-12b.log")).unwrap();
    let noise = "Nov 30 06:05:00 gpuhost kernel: noise line\n".repeat(10);
    let long = "x".repeat(vramdiff::source::MAX_LINE_BYTES + 10);
    let log = format!("{noise}{long}\n{noise}{long} memory MiB\r\n{noise}{founding}{noise}{long}");
    let mut pipelines = pipelines();
    for capacity in [256 * 1024, 8 * 1024 * 1024] {
        let (skimmed, every) = both(&mut pipelines, log.as_bytes(), capacity);
        assert!(skimmed == every, "buffers of {capacity} bytes");
    }
}

/// Slog records without any anchor still count: a later one sets the log boundary clock (a record an hour
/// later, then the same log again, is read as a second log), and a record cut in two by a paste is joined
/// whichever piece holds the anchor.
#[test]
fn records_without_anchors_still_move_the_clock_and_take_continuations() {
    let founding =
        std::fs::read_to_string(root().join("sample-logs/founding-k80-gemma3-12b.log")).unwrap();
    let t4 = std::fs::read_to_string(
        root().join("sample-logs/014-multigpu-2x-split37-0-projector-estimate.log"),
    )
    .unwrap();
    let later = "time=2025-07-20T12:00:00.000+08:00 level=INFO source=sched.go:509 msg=\"loaded runners\" count=1\n";
    // corpus 014:2 cut before its `msg=offload` anchor, as a paste re-wraps it.
    let offload = t4.lines().nth(1).unwrap();
    let at = offload.find("msg=offload").unwrap();
    let cut = format!("{}\n{}\n", &offload[..at], &offload[at..]);
    let noise = "Nov 30 06:05:00 gpuhost kernel: noise line\n".repeat(5);
    let log = format!("{founding}{noise}{later}{noise}{founding}{noise}{cut}{noise}");
    let mut pipelines = pipelines();
    for capacity in [256 * 1024, 333] {
        let (skimmed, every) = both(&mut pipelines, log.as_bytes(), capacity);
        assert!(skimmed == every, "buffers of {capacity} bytes");
    }
}

/// Every sample one after another between noise, eight times over, over 4 MiB: read ahead, the lines go over in
/// many batches (cut inside captures, records and wraps), and the report is the one read on one thread.
#[test]
fn reading_ahead_in_many_batches_changes_nothing() {
    let mut once = String::new();
    for name in sample_names() {
        let bytes = std::fs::read(root().join("sample-logs").join(&name)).unwrap();
        once.push_str(&interleave(&String::from_utf8_lossy(&bytes), 2));
    }
    let log = once.repeat(8);
    assert!(log.len() > 4 << 20, "{}", log.len());
    let mut pipelines = pipelines();
    let skimmed = report(&mut pipelines.skimmed, log.as_bytes(), 256 * 1024);
    let ahead = report(&mut pipelines.ahead, log.as_bytes(), 256 * 1024);
    assert!(ahead == skimmed);
    assert!(skimmed.matches("reconciled:").count() > 50);
}

/// A reader that fails by panicking (a bug, never a read error) brings the panic back to the caller of a
/// pipeline that reads ahead, with its message, rather than hanging or losing it.
#[test]
fn a_panic_while_reading_ahead_reaches_the_caller() {
    struct Panicking(usize);
    impl std::io::Read for Panicking {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.0 += 1;
            assert!(self.0 < 3, "the reader broke");
            let line = b"Nov 30 06:05:00 gpuhost kernel: noise line\n";
            let n = line.len().min(buf.len());
            buf[..n].copy_from_slice(&line[..n]);
            Ok(n)
        }
    }
    let mut pipelines = pipelines();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pipelines
            .ahead
            .run("input.log", BufReader::new(Panicking(0)), &mut [])
    }));
    let panic = outcome.expect_err("the panic is raised again");
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied());
    assert_eq!(message, Some("the reader broke"));
}
