//! The nvidia-smi / rocm-smi capture parsers on every real capture in `sample-logs/` (as `--smi` files), on
//! captures embedded in a log, and on hostile XML.

use vramdiff::model::{Quantity, SmiFormat, SmiGpu, Snapshot, MIB};
use vramdiff::smi::{SmiItem, SmiScanner, MAX_DOCUMENT_BYTES};

use crate::util::{scan_smi, scan_smi_sample};

fn snapshots(items: &[SmiItem]) -> Vec<&Snapshot> {
    items
        .iter()
        .filter_map(|i| match i {
            SmiItem::Snapshot(s) => Some(s),
            _ => None,
        })
        .collect()
}

fn warnings(items: &[SmiItem]) -> Vec<(u64, &str)> {
    items
        .iter()
        .filter_map(|i| match i {
            SmiItem::Warning { line, message } => Some((*line, message.as_str())),
            _ => None,
        })
        .collect()
}

fn only_snapshot(items: &[SmiItem]) -> &Snapshot {
    let s = snapshots(items);
    assert_eq!(s.len(), 1, "{items:#?}");
    s[0]
}

/// Whole MiB as nvidia-smi prints them: nominal value ±0.5 MiB.
fn assert_mib(q: Option<Quantity>, mib: i64) {
    let q = q.unwrap_or_else(|| panic!("expected {mib} MiB, got nothing"));
    assert_eq!(q.bytes, mib * MIB);
    assert_eq!(
        (q.low, q.high),
        ((mib * MIB - MIB / 2).max(0), mib * MIB + MIB / 2)
    );
}

fn assert_gpu(g: &SmiGpu, used: i64, total: i64) {
    assert_mib(g.used, used);
    assert_mib(g.total, total);
}

#[test]
fn smi_founding_k80_table_two_dies_with_processes() {
    let items = scan_smi_sample("founding-k80-gemma3-12b.nvidia-smi.txt");
    assert!(warnings(&items).is_empty(), "{items:#?}");
    let s = only_snapshot(&items);
    assert_eq!(s.format, SmiFormat::Table);
    assert_eq!((s.line, s.end_line), (1, 25));
    assert_eq!(s.timestamp.as_deref(), Some("Sun Jul 20 09:44:10 2025"));
    assert_eq!(s.driver_version.as_deref(), Some("470.256.02"));
    assert_eq!(s.gpus.len(), 2);
    let (g0, g1) = (&s.gpus[0], &s.gpus[1]);
    assert_eq!((g0.index, g1.index), (Some(0), Some(1)));
    assert_eq!(g0.name.as_deref(), Some("Tesla K80"));
    assert_eq!(g0.bus_id.as_deref(), Some("00000000:04:00.0"));
    assert_eq!(g1.bus_id.as_deref(), Some("00000000:07:00.0"));
    assert_gpu(g0, 617, 11441);
    assert_gpu(g1, 9866, 11441);
    assert_eq!((g0.line, g1.line), (10, 14));
    assert!(!g0.mig && !g1.mig);
    let p = s.processes.as_ref().expect("process table");
    assert_eq!(p.len(), 2);
    assert_eq!((p[0].gpu_index, p[0].pid), (Some(0), Some(18732)));
    assert_eq!(p[0].name, "/usr/local/bin/ollama");
    assert_mib(p[0].used, 614);
    assert_eq!((p[1].gpu_index, p[1].pid), (Some(1), Some(18732)));
    assert_mib(p[1].used, 9863);
    assert_eq!((p[0].line, p[1].line), (23, 24));
}

#[test]
fn smi_039_old_layout_v100_after_a_shell_prompt_cut_process_table() {
    let items = scan_smi_sample("039-nvidia-smi-table-470-tesla-v100-docker.nvidia-smi.txt");
    let s = only_snapshot(&items);
    // Line 1 is the shell prompt, line 2 nvidia-smi's date line.
    assert_eq!(s.line, 2);
    assert_eq!(s.timestamp.as_deref(), Some("Thu Jul 31 08:32:16 2025"));
    assert_eq!(s.driver_version.as_deref(), Some("470.223.02"));
    assert_eq!(s.gpus.len(), 1);
    let g = &s.gpus[0];
    assert_eq!(g.name.as_deref(), Some("Tesla V100-PCIE..."));
    assert_eq!(g.bus_id.as_deref(), Some("00000000:00:0d.0"));
    assert_gpu(g, 5038, 32510);
    // The excerpt stops inside the process table's header: unknown, not "no processes".
    assert_eq!(s.processes, None);
    let w = warnings(&items);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].1.contains("cut inside its process table"), "{w:?}");
}

#[test]
fn smi_038_new_layout_two_gpus_cut_before_processes() {
    let items = scan_smi_sample("038-nvidia-smi-table-2gpu-rtx3060-a2000.nvidia-smi.txt");
    let s = only_snapshot(&items);
    assert_eq!((s.line, s.end_line), (1, 15));
    assert_eq!(s.timestamp, None);
    assert_eq!(s.driver_version.as_deref(), Some("550.120"));
    let names: Vec<_> = s.gpus.iter().map(|g| g.name.as_deref().unwrap()).collect();
    assert_eq!(names, ["NVIDIA GeForce RTX 3060", "NVIDIA RTX A2000 12GB"]);
    assert_gpu(&s.gpus[0], 7400, 12288);
    assert_gpu(&s.gpus[1], 8072, 12282);
    assert_eq!(s.gpus[1].bus_id.as_deref(), Some("00000000:05:00.0"));
    assert_eq!(s.processes, None);
    assert!(warnings(&items)[0].1.contains("before its process table"));
}

#[test]
fn smi_040_query_text_k80_cut_before_fb_memory() {
    let items = scan_smi_sample("040-nvidia-smi-q-tesla-k80.nvidia-smi.txt");
    let s = only_snapshot(&items);
    assert_eq!(s.format, SmiFormat::Query);
    assert_eq!((s.line, s.end_line), (1, 34));
    assert_eq!(s.timestamp.as_deref(), Some("Tue Aug 14 17:01:49 2018"));
    assert_eq!(s.driver_version.as_deref(), Some("390.77"));
    let g = &s.gpus[0];
    assert_eq!(g.name.as_deref(), Some("Tesla K80"));
    assert_eq!(
        g.uuid.as_deref(),
        Some("GPU-78b84756-65f8-ec6b-851d-3878b541caf4")
    );
    assert_eq!(g.bus_id.as_deref(), Some("00000000:00:1e.0"));
    assert_eq!(g.index, Some(0)); // Minor Number
    assert_eq!((g.used, g.total), (None, None));
    assert_eq!(s.processes, None);
    let w = warnings(&items);
    assert_eq!(w.len(), 1);
    assert!(w[0].1.contains("no FB Memory Usage"), "{w:?}");
}

#[test]
fn smi_101_xml_idle_p100_with_reserved() {
    let items = scan_smi_sample("101-nvsmi-qx-tesla-p100.xml");
    assert!(warnings(&items).is_empty(), "{items:#?}");
    let s = only_snapshot(&items);
    assert_eq!(s.format, SmiFormat::QueryXml);
    assert_eq!((s.line, s.end_line), (1, 313));
    assert_eq!(s.timestamp.as_deref(), Some("Sat Sep 17 17:06:50 2022"));
    assert_eq!(s.driver_version.as_deref(), Some("510.47.03"));
    let g = &s.gpus[0];
    assert_eq!(g.name.as_deref(), Some("Tesla P100-PCIE-16GB"));
    assert_eq!(
        g.uuid.as_deref(),
        Some("GPU-d3da8716-eaab-75db-efc1-60e88e1cd55e")
    );
    assert_eq!(g.bus_id.as_deref(), Some("00000000:00:04.0"));
    assert_eq!(g.index, Some(0));
    assert_gpu(g, 0, 16384);
    assert_mib(g.reserved, 103);
    assert_mib(g.free, 16280);
    assert_eq!(g.line, 96);
    assert_eq!(s.processes, Some(vec![]));
}

#[test]
fn smi_103_xml_rtx3060_one_process() {
    let items = scan_smi_sample("103-nvsmi-qx-rtx3060.xml");
    let s = only_snapshot(&items);
    let g = &s.gpus[0];
    assert_eq!(
        g.uuid.as_deref(),
        Some("GPU-473d8d0f-d462-185c-6b36-6fc23e23e571")
    );
    assert_gpu(g, 5, 6144);
    assert_mib(g.reserved, 197);
    let p = s.processes.as_ref().unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(
        (p[0].pid, p[0].name.as_str()),
        (Some(28543), "/usr/libexec/Xorg")
    );
    assert_mib(p[0].used, 4);
    assert_eq!(p[0].gpu_uuid, g.uuid);
    assert_eq!(p[0].gpu_bus_id.as_deref(), Some("00000000:01:00.0"));
}

#[test]
fn smi_104_xml_windows_wddm_process_memory_is_unknown() {
    let items = scan_smi_sample("104-nvsmi-qx-rtx2080-windows.xml");
    let s = only_snapshot(&items);
    assert_eq!(s.driver_version.as_deref(), Some("516.59"));
    let g = &s.gpus[0];
    assert_eq!(g.index, None); // <minor_number>N/A</minor_number>
    assert_eq!(g.bus_id.as_deref(), Some("00000000:0a:00.0"));
    assert_eq!(
        g.uuid.as_deref(),
        Some("GPU-fbd55ed4-1eec-4423-0a47-ad594b4333e3")
    );
    assert_gpu(g, 862, 8192);
    let p = s.processes.as_ref().unwrap();
    assert_eq!(p.len(), 26);
    assert!(p.iter().all(|p| p.used.is_none()));
    assert_eq!(p[0].pid, Some(7724));
    assert!(p[0].name.ends_with("PhoneExperienceHost.exe"));
    assert_eq!(p.iter().filter(|p| p.name.is_empty()).count(), 5);
    assert_eq!(
        p.last().unwrap().name,
        r"C:\Program Files (x86)\Microsoft\EdgeWebView\Application\105.0.1343.42\msedgewebview2.exe"
    );
}

#[test]
fn smi_105_xml_a100_mig_instances_beside_the_parent() {
    let items = scan_smi_sample("105-nvsmi-qx-a100-sxm4-mig.xml");
    let s = only_snapshot(&items);
    assert_eq!(s.gpus.len(), 3);
    let parent = &s.gpus[0];
    assert!(!parent.mig);
    assert_eq!(
        parent.uuid.as_deref(),
        Some("GPU-27b94a00-ed54-5c24-b1fd-1054085de32a")
    );
    assert_gpu(parent, 38, 40960);
    assert_mib(parent.reserved, 605);
    for (i, m) in s.gpus[1..].iter().enumerate() {
        assert!(m.mig);
        assert_eq!((m.index, m.mig_device), (Some(0), Some(i as u32)));
        assert_eq!(m.name.as_deref(), Some("NVIDIA A100-SXM4-40GB"));
        assert_eq!(m.bus_id, parent.bus_id);
        assert_gpu(m, 19, 19968);
    }
    // Whole GPUs only: the MIG instances are inside the parent's figure.
    let whole: i64 = s
        .gpus
        .iter()
        .filter(|g| !g.mig)
        .map(|g| g.used.unwrap().bytes)
        .sum();
    assert_eq!(whole, 38 * MIB);
    assert_eq!(s.processes, Some(vec![]));
}

#[test]
fn smi_106_xml_rtx4090_driver_535() {
    let items = scan_smi_sample("106-nvsmi-qx-rtx4090-driver535.xml");
    let s = only_snapshot(&items);
    assert_eq!(s.timestamp.as_deref(), Some("Mon Aug 7 11:10:06 2023"));
    assert_eq!(s.driver_version.as_deref(), Some("535.86.05"));
    let g = &s.gpus[0];
    assert_eq!(g.name.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    assert_eq!(
        g.uuid.as_deref(),
        Some("GPU-71d1acc2-662d-2166-bf9f-65272d2fc437")
    );
    assert_eq!(g.bus_id.as_deref(), Some("00000000:84:00.0"));
    assert_gpu(g, 2, 24564);
    assert_mib(g.reserved, 346);
    assert_mib(g.free, 24214);
    assert_eq!(s.processes, Some(vec![]));
}

#[test]
fn smi_102_query_gpu_csv_p100() {
    let items = scan_smi_sample("102-nvsmi-querygpu-tesla-p100.csv");
    assert!(warnings(&items).is_empty(), "{items:#?}");
    let s = only_snapshot(&items);
    assert_eq!(s.format, SmiFormat::QueryGpuCsv);
    assert_eq!((s.line, s.end_line), (1, 2));
    let g = &s.gpus[0];
    assert_eq!(g.name.as_deref(), Some("Tesla P100-PCIE-16GB"));
    assert_eq!(
        g.uuid.as_deref(),
        Some("GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6")
    );
    assert_mib(g.used, 0);
    assert_mib(g.reserved, 103);
    assert_mib(g.free, 16280);
    assert_eq!(g.total, None); // not queried
    assert_eq!(s.processes, None);
}

/// The founding capture's lines, between log lines of the founding log.
fn founding_table() -> String {
    std::fs::read_to_string(
        crate::util::root().join("sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt"),
    )
    .unwrap()
}

#[test]
fn smi_table_inside_a_log_between_log_lines() {
    let table = founding_table();
    let log = format!(
        "time=2025-07-20T09:44:09.100+08:00 level=INFO source=server.go:637 msg=\"llama runner started in 21.82 seconds\"\n\
         $ nvidia-smi\n{table}\
         [GIN] 2025/07/20 - 09:44:12 | 200 |  4.213456s |       127.0.0.1 | POST     \"/api/generate\"\n"
    );
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &log);
    assert!(warnings(&items).is_empty(), "{items:#?}");
    let s = only_snapshot(&items);
    assert_eq!((s.line, s.end_line), (3, 27));
    assert_eq!(s.timestamp.as_deref(), Some("Sun Jul 20 09:44:10 2025"));
    assert_gpu(&s.gpus[1], 9866, 11441);
    // The table's lines are claimed (its date line and top border only in hindsight, so not those);
    // the log lines around it are not.
    assert_eq!(claimed, (5..=27).collect::<Vec<u64>>());
}

#[test]
fn smi_two_tables_in_one_input_are_a_time_series() {
    let first = founding_table();
    let second = first
        .replace("Sun Jul 20 09:44:10 2025", "Sun Jul 20 09:49:10 2025")
        .replace("   9866MiB / 11441MiB", "     14MiB / 11441MiB")
        .replace(
            "|    1   N/A  N/A     18732      C   /usr/local/bin/ollama            9863MiB |\n",
            "",
        );
    let log =
        format!("{first}time=2025-07-20T09:49:09.000+08:00 level=INFO msg=\"unloading\"\n{second}");
    let (items, _) = scan_smi(SmiScanner::in_log(), &log);
    assert!(warnings(&items).is_empty(), "{items:#?}");
    let s = snapshots(&items);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].timestamp.as_deref(), Some("Sun Jul 20 09:44:10 2025"));
    assert_eq!(s[1].timestamp.as_deref(), Some("Sun Jul 20 09:49:10 2025"));
    assert_eq!((s[1].line, s[1].end_line), (27, 50));
    assert_mib(s[0].gpus[1].used, 9866);
    assert_mib(s[1].gpus[1].used, 14);
    assert_eq!(s[1].processes.as_ref().unwrap().len(), 1);
}

#[test]
fn smi_truncated_table_in_a_log_gives_a_partial_snapshot_and_a_warning() {
    let table = founding_table();
    let cut: String = table.lines().take(11).map(|l| format!("{l}\n")).collect();
    let log = format!("{cut}time=2025-07-20T09:44:12.000+08:00 level=INFO msg=\"next\"\n");
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &log);
    let s = only_snapshot(&items);
    assert_eq!(s.gpus.len(), 1);
    assert_gpu(&s.gpus[0], 617, 11441);
    assert_eq!(s.end_line, 11);
    assert_eq!(s.processes, None);
    let w = warnings(&items);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].0, 11);
    assert!(!claimed.contains(&12));
}

/// The founding-today paste (`sample-logs/founding-today-chain-3090-4060-gemma4-31b.log`, from its `nvidia-smi`
/// prompt to its end): an nvidia-smi 581.57 table of two GPUs, cut before its process table.
fn founding_today_capture() -> String {
    let log = std::fs::read_to_string(
        crate::util::root().join("sample-logs/founding-today-chain-3090-4060-gemma4-31b.log"),
    )
    .unwrap();
    let at = log.find("PS C:\\Users\\M> nvidia-smi\n").unwrap();
    log[at..].to_string()
}

/// Lines other writers printed, as they land between a capture's rows: the same paste's Ollama access line
/// (line 135 of the founding-today log) and a bash trace of the founding CI paste
/// (`sample-logs/founding-k80-gemma3-12b-ci-with-smi.log`, whose `+ ` is no table border).
const OTHER_WRITERS: [&str; 2] = [
    "[GIN] 2026/06/07 - 18:12:26 | 200 |   26.4122197s |       127.0.0.1 | POST     \"/api/chat\"",
    "+ ollama stop gemma3:12b",
];

/// `text` with `foreign` put before each line for which `at` says so.
fn with_lines_between(text: &str, foreign: &[&str], mut at: impl FnMut(&str) -> bool) -> String {
    let mut out = String::new();
    let mut k = 0;
    for line in text.lines() {
        if at(line) {
            out.push_str(foreign[k % foreign.len()]);
            out.push('\n');
            k += 1;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn smi_other_writers_lines_between_table_rows_neither_end_nor_change_it() {
    let capture = founding_today_capture();
    let (want, want_claimed) = scan_smi(SmiScanner::in_log(), &capture);
    let want = only_snapshot(&want).clone();
    assert_eq!(want.gpus.len(), 2);
    assert_gpu(&want.gpus[1], 7105, 8188);
    // A line of another writer before every row after the header: the header, the second GPU (past a
    // border) and its memory row are still the table's.
    let pasted = with_lines_between(&capture, &OTHER_WRITERS, |l| {
        l.starts_with('|') && !l.contains("NVIDIA-SMI")
    });
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &pasted);
    let got = only_snapshot(&items);
    assert_eq!(got.timestamp.as_deref(), Some("Sun Jun  7 18:12:41 2026"));
    assert_eq!(got.driver_version.as_deref(), Some("581.57"));
    assert_eq!(got.gpus.len(), 2, "{items:#?}");
    for (g, w) in got.gpus.iter().zip(&want.gpus) {
        assert_eq!(
            (&g.name, &g.bus_id, g.used, g.total),
            (&w.name, &w.bus_id, w.used, w.total)
        );
    }
    // The other writers' lines are not claimed: the grammar reads them.
    let lines: Vec<&str> = pasted.lines().collect();
    for n in &claimed {
        assert!(!OTHER_WRITERS.contains(&lines[*n as usize - 1]), "line {n}");
    }
    assert_eq!(claimed.len(), want_claimed.len());
    // Still cut before its process table, as the original is: the same one warning.
    assert_eq!(warnings(&items).len(), 1, "{items:#?}");
}

#[test]
fn smi_other_writers_lines_around_a_table_s_head_keep_its_date() {
    // The founding-today paste's table with another writer's line before its top border and before its
    // `NVIDIA-SMI` line: the date line above them is still the table's (it was lost: issue 52).
    let capture = founding_today_capture();
    let table = &capture[capture.find("Sun Jun").unwrap()..];
    let mut heads = 0;
    let pasted = with_lines_between(table, &OTHER_WRITERS, |l| {
        let head = heads < 2 && (l.starts_with("+-") || l.contains("NVIDIA-SMI"));
        heads += usize::from(head);
        head
    });
    assert_eq!(heads, 2);
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &pasted);
    let got = only_snapshot(&items);
    assert_eq!(got.timestamp.as_deref(), Some("Sun Jun  7 18:12:41 2026"));
    assert_eq!(got.gpus.len(), 2, "{items:#?}");
    let lines: Vec<&str> = pasted.lines().collect();
    for n in &claimed {
        assert!(!OTHER_WRITERS.contains(&lines[*n as usize - 1]), "line {n}");
    }
    // As many lines as a table lets by between its rows may come between the date and the header; one more
    // and the date line is no longer the table's.
    for (between, date) in [
        (
            vramdiff::smi::MAX_FOREIGN_LINES,
            Some("Sun Jun  7 18:12:41 2026"),
        ),
        (vramdiff::smi::MAX_FOREIGN_LINES + 1, None),
    ] {
        let (date_line, rest) = table.split_once('\n').unwrap();
        let foreign = format!("{}\n", OTHER_WRITERS[0]).repeat(between as usize);
        let (items, _) = scan_smi(
            SmiScanner::in_log(),
            &format!("{date_line}\n{foreign}{rest}"),
        );
        assert_eq!(
            only_snapshot(&items).timestamp.as_deref(),
            date,
            "{between}"
        );
    }
}

#[test]
fn a_log_with_other_writers_lines_around_a_table_s_head_keeps_its_date() {
    // The whole founding-today log through the pipeline, a kernel line (one of the skim's candidate lines:
    // it names a GPU) before the table's top border and before its `NVIDIA-SMI` line. The skim framed that
    // line and skipped the date line above it before the table's first line said the date was needed; it
    // now looks ahead to the next table start (`frame::read`), and the scanner keeps the date across the
    // lines between.
    let log = std::fs::read_to_string(
        crate::util::root().join("sample-logs/founding-today-chain-3090-4060-gemma4-31b.log"),
    )
    .unwrap();
    let kernel = "kernel: NVRM: GPU at PCI:0000:01:00: GPU-5b1c9e7a-1f0d-4a55-9b8c-0d3f2e6a7b41";
    let mut heads = 0;
    let pasted = with_lines_between(&log, &[kernel], |l| {
        let head = heads < 2 && (l.starts_with("+-") || l.contains("NVIDIA-SMI"));
        heads += usize::from(head);
        head
    });
    assert_eq!(heads, 2);
    for text in [&log, &pasted] {
        let loads =
            crate::properties::loads_json(&crate::properties::analyze("x.log", text.as_bytes()));
        assert_eq!(
            loads[0]["observed"][0]["capture"]["timestamp"], "Sun Jun  7 18:12:41 2026",
            "{text}"
        );
    }
}

#[test]
fn smi_a_cut_table_ends_a_few_lines_after_its_last_row() {
    let capture = founding_today_capture();
    let rows: Vec<&str> = capture.lines().collect();
    // Cut after the first GPU's rows; the log goes on with more lines of its own than the table lets by, then
    // a row-shaped line: it is no longer the table's.
    let first_gpu_end = rows.iter().position(|l| l.contains("14707MiB")).unwrap() + 1;
    let mut log: String = rows[..first_gpu_end]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    for _ in 0..=vramdiff::smi::MAX_FOREIGN_LINES {
        log.push_str(OTHER_WRITERS[0]);
        log.push('\n');
    }
    for l in &rows[first_gpu_end..] {
        log.push_str(l);
        log.push('\n');
    }
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &log);
    let s = snapshots(&items);
    assert_eq!(s.len(), 1, "{items:#?}");
    assert_eq!(s[0].gpus.len(), 1);
    assert_eq!(s[0].end_line, first_gpu_end as u64);
    assert!(
        claimed.iter().all(|&n| n <= first_gpu_end as u64),
        "{claimed:?}"
    );
    // One fewer line between and the second GPU is the table's again.
    let shorter = log.replacen(&format!("{}\n", OTHER_WRITERS[0]), "", 1);
    let (items, _) = scan_smi(SmiScanner::in_log(), &shorter);
    assert_eq!(only_snapshot(&items).gpus.len(), 2, "{items:#?}");
}

#[test]
fn smi_a_date_line_after_a_cut_table_starts_the_next_one() {
    // `nvidia-smi -l` cut by a paste: the second reading's date line ends the first table at once.
    let capture = founding_today_capture();
    let table = &capture[capture.find("Sun Jun").unwrap()..];
    let cut: String = table.lines().take(10).map(|l| format!("{l}\n")).collect();
    let log = format!(
        "{cut}{}\n{}",
        OTHER_WRITERS[0],
        table.replace("18:12:41", "18:12:46")
    );
    let (items, _) = scan_smi(SmiScanner::in_log(), &log);
    let s = snapshots(&items);
    assert_eq!(s.len(), 2, "{items:#?}");
    assert_eq!((s[0].gpus.len(), s[1].gpus.len()), (1, 2));
    assert_eq!(s[1].timestamp.as_deref(), Some("Sun Jun  7 18:12:46 2026"));
}

#[test]
fn smi_csv_rows_after_another_writers_line_are_the_capture_s() {
    // The founding CI paste's `--query-gpu` capture (lines 66–68), the same paste's Ollama access line
    // after its header.
    let log = format!(
        "index, uuid, memory.used [MiB], memory.total [MiB]\n{}\n\
         0, GPU-7c3a1f52-9e04-2b6d-4a81-d05e3c9b6f27, 617 MiB, 11441 MiB\n\
         1, GPU-1e96b8d4-53a7-c0f2-8b3e-6a2d9f4c7e10, 9866 MiB, 11441 MiB\n\
         + ollama stop gemma3:12b\n",
        OTHER_WRITERS[0]
    );
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &log);
    assert!(warnings(&items).is_empty(), "{items:#?}");
    let s = only_snapshot(&items);
    assert_gpu(&s.gpus[1], 9866, 11441);
    assert_eq!(claimed, [1, 3, 4]);
}

/// The same through the whole pipeline: the founding-today log with another writer's line between the
/// rows of its capture gives the same loads (the capture's second GPU decides two findings).
#[test]
fn smi_founding_today_log_with_lines_between_its_capture_rows_keeps_its_facts() {
    let path = "sample-logs/founding-today-chain-3090-4060-gemma4-31b.log";
    let log = std::fs::read_to_string(crate::util::root().join(path)).unwrap();
    let start = log.find("PS C:\\Users\\M> nvidia-smi").unwrap();
    let pasted = format!(
        "{}{}",
        &log[..start],
        with_lines_between(&log[start..], &OTHER_WRITERS[..1], |l| l
            .starts_with("|   1 "))
    );
    assert_ne!(pasted, log);
    let want = crate::properties::loads_json(&crate::properties::analyze(path, log.as_bytes()));
    let got = crate::properties::loads_json(&crate::properties::analyze(path, pasted.as_bytes()));
    assert_eq!(got, want);
}

#[test]
fn smi_csv_in_a_log_needs_its_header_and_file_mode_takes_the_field_list() {
    let rows = "0, Tesla K80, 617 MiB, 11441 MiB\n1, Tesla K80, 9866 MiB, 11441 MiB\n";
    // Inside a log: headerless rows are not a capture.
    let (items, claimed) = scan_smi(SmiScanner::in_log(), rows);
    assert!(items.is_empty() && claimed.is_empty(), "{items:?}");
    // With the header (docs/log-formats.md §7.2) they are.
    let with_header =
        format!("index, name, memory.used [MiB], memory.total [MiB]\n{rows}time=x level=INFO\n");
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &with_header);
    let s = only_snapshot(&items);
    assert_gpu(&s.gpus[1], 9866, 11441);
    assert_eq!(claimed, [1, 2, 3]);
    // A capture file without header: a warning says how to name the columns.
    let (items, _) = scan_smi(SmiScanner::capture_file(None), rows);
    assert!(snapshots(&items).is_empty());
    let w = warnings(&items);
    assert_eq!(w.len(), 1);
    assert!(w[0].1.contains("--query-gpu="), "{w:?}");
    // … and with the field list, `noheader,nounits` rows parse.
    let nounits = "0, Tesla K80, 617, 11441\n1, Tesla K80, 9866, 11441\n";
    let (items, _) = scan_smi(
        SmiScanner::capture_file(Some("index,name,memory.used,memory.total")),
        nounits,
    );
    let s = only_snapshot(&items);
    assert_eq!(s.gpus[1].index, Some(1));
    assert_gpu(&s.gpus[1], 9866, 11441);
}

#[test]
fn smi_rocm_smi_showmeminfo_in_a_log() {
    // No real rocm-smi capture is in the corpus: shape from docs/log-formats.md §7.6.
    let log = "time=2025-07-20T09:44:09.100+08:00 level=INFO msg=\"llama runner started\"\n\
        ======================= ROCm System Management Interface =======================\n\
        ============================= Memory Usage (Bytes) =============================\n\
        GPU[0]\t\t: VRAM Total Memory (B): 17163091968\n\
        GPU[0]\t\t: VRAM Total Used Memory (B): 9663676416\n\
        ================================================================================\n\
        ============================= End of ROCm SMI Log ==============================\n\
        time=2025-07-20T09:44:10.100+08:00 level=INFO msg=next\n";
    let (items, claimed) = scan_smi(SmiScanner::in_log(), log);
    assert!(warnings(&items).is_empty(), "{items:#?}");
    let s = only_snapshot(&items);
    assert_eq!(s.format, SmiFormat::RocmSmi);
    assert_eq!((s.line, s.end_line), (2, 7));
    assert_eq!(s.gpus[0].total, Some(Quantity::exact(17163091968)));
    assert_eq!(s.gpus[0].used, Some(Quantity::exact(9663676416)));
    assert_eq!(claimed, (2..=7).collect::<Vec<u64>>());
}

#[test]
fn smi_rocm_smi_json_capture_file() {
    // No real rocm-smi capture is in the corpus: shape from docs/log-formats.md §7.6.
    let json = "{\n  \"card0\": {\n    \"VRAM Total Memory (B)\": \"17163091968\",\n    \"VRAM Total Used Memory (B)\": \"1073741824\"\n  }\n}\n";
    let (items, _) = scan_smi(SmiScanner::capture_file(None), json);
    let s = only_snapshot(&items);
    assert_eq!(s.format, SmiFormat::RocmSmiJson);
    assert_eq!((s.line, s.end_line), (1, 6));
    assert_eq!(s.gpus[0].index, Some(0));
    assert_eq!(s.gpus[0].used, Some(Quantity::exact(1073741824)));
}

#[test]
fn smi_xml_billion_laughs_is_refused() {
    let doc = r#"<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<nvidia_smi_log>
    <gpu id="00000000:04:00.0">
        <product_name>&lol3;</product_name>
        <fb_memory_usage><total>11441 MiB</total><used>617 MiB</used></fb_memory_usage>
    </gpu>
</nvidia_smi_log>
"#;
    for scanner in [SmiScanner::in_log(), SmiScanner::capture_file(None)] {
        let (items, claimed) = scan_smi(scanner, doc);
        assert!(snapshots(&items).is_empty(), "{items:#?}");
        let w = warnings(&items);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, 3);
        assert!(w[0].1.contains("ENTITY"));
        assert!(!format!("{items:?}").contains("lollol"));
        assert_eq!(claimed.len(), 13);
    }
}

#[test]
fn smi_xml_external_entity_is_refused_and_nothing_is_read() {
    let doc = r#"<?xml version="1.0"?>
<!DOCTYPE nvidia_smi_log [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>
<nvidia_smi_log><gpu id="00000000:04:00.0"><product_name>&xxe;</product_name></gpu></nvidia_smi_log>
"#;
    let (items, _) = scan_smi(SmiScanner::capture_file(None), doc);
    assert!(snapshots(&items).is_empty());
    let w = warnings(&items);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].0, 2);
    assert!(!format!("{items:?}").contains("root:"));
}

#[test]
fn smi_xml_over_the_size_cap_is_cut_with_a_warning() {
    // A real GPU block, then 20 MiB of filler elements before the end of the document.
    let mut doc = String::from(
        "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<timestamp>Sun Jul 20 09:44:10 2025</timestamp>\n\
         <gpu id=\"00000000:04:00.0\">\n<product_name>Tesla K80</product_name>\n\
         <fb_memory_usage>\n<total>11441 MiB</total>\n<used>617 MiB</used>\n</fb_memory_usage>\n",
    );
    let filler = format!("<filler>{}</filler>\n", "x".repeat(1000));
    while doc.len() < 20 * 1024 * 1024 {
        doc.push_str(&filler);
    }
    doc.push_str("</gpu>\n</nvidia_smi_log>\n");
    let lines = doc.lines().count() as u64;
    let (items, claimed) = scan_smi(SmiScanner::in_log(), &doc);
    assert_eq!(claimed.len() as u64, lines);
    let w = warnings(&items);
    assert!(w[0].1.contains("larger than 16 MiB"), "{w:?}");
    // Cut at the first line that would take the buffer over the cap.
    let cut_at = w[0].0 as usize;
    let kept: usize = doc.lines().take(cut_at - 1).map(|l| l.len() + 1).sum();
    let next = doc.lines().nth(cut_at - 1).unwrap().len() + 1;
    assert!(kept <= MAX_DOCUMENT_BYTES && kept + next > MAX_DOCUMENT_BYTES);
    // What was read before the cut is still used.
    let s = only_snapshot(&items);
    assert_gpu(&s.gpus[0], 617, 11441);
    assert_eq!(s.end_line, lines);
}
