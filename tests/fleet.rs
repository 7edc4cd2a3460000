//! `vramdiff batch` past one machine, end to end: `--shard K/N` runs that together give exactly the rows of the
//! unsharded run, shard assignment that does not depend on where the folder is mounted, and the Hive-partitioned
//! dataset (`--partition-by`) that shards write into side by side and that reads back as the flat tables.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::util::{root, run, stderr};

fn scratch(tag: &str) -> PathBuf {
    crate::util::scratch(&format!("fleet-{tag}"))
}

fn text(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn read(p: &Path) -> DataFrame {
    vramdiff::batch::tables::read_parquet(p).unwrap()
}

fn batch_ok(args: &[&str]) {
    let mut all = vec!["batch", "--quiet"];
    all.extend_from_slice(args);
    let out = run(&all, b"");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
}

/// Rows in the unsharded run's order: files sorted by path, loads (and their component rows) in log order.
fn in_batch_order(df: DataFrame) -> DataFrame {
    df.sort(
        ["file", "load"],
        SortMultipleOptions::default().with_maintain_order(true),
    )
    .unwrap()
}

fn stacked(parts: &[DataFrame]) -> DataFrame {
    let mut all = parts[0].clone();
    for p in &parts[1..] {
        all.vstack_mut(p).unwrap();
    }
    in_batch_order(all)
}

#[test]
fn two_shards_together_give_exactly_the_unsharded_rows() {
    let whole = scratch("whole");
    let shards = scratch("shards");
    batch_ok(&["sample-logs", "--out", text(&whole)]);
    // Both shards write into one folder: every file name carries its shard.
    batch_ok(&["sample-logs", "--shard", "1/2", "--out", text(&shards)]);
    batch_ok(&["sample-logs", "--shard", "2/2", "--out", text(&shards)]);
    for table in ["loads", "components"] {
        let want = read(&whole.join(format!("{table}.parquet")));
        let one = read(&shards.join(format!("{table}-1-of-2.parquet")));
        let two = read(&shards.join(format!("{table}-2-of-2.parquet")));
        assert!(
            one.height() > 0 && two.height() > 0,
            "{table}: both shards hold rows"
        );
        assert_eq!(one.height() + two.height(), want.height(), "{table}");
        let merged = stacked(&[one.clone(), two.clone()]);
        assert!(
            merged.equals_missing(&want),
            "{table}: the shards' rows, in batch order, are the unsharded table"
        );
        // No file is in both shards.
        let files = |df: &DataFrame| -> Vec<String> {
            let mut v: Vec<String> = df
                .column("file")
                .unwrap()
                .str()
                .unwrap()
                .iter()
                .flatten()
                .map(str::to_string)
                .collect();
            v.dedup();
            v
        };
        let (a, b) = (files(&one), files(&two));
        assert!(a.iter().all(|f| !b.contains(f)), "{table}: {a:?} ∩ {b:?}");
    }
    for f in [
        "summary-1-of-2.md",
        "summary-2-of-2.md",
        "calibration-1-of-2.parquet",
    ] {
        assert!(shards.join(f).is_file(), "{f}");
    }
    assert!(!shards.join("summary.md").exists());
    let _ = std::fs::remove_dir_all(&whole);
    let _ = std::fs::remove_dir_all(&shards);
}

/// The files (relative to `base`) a shard of `args` reads, from its `loads` table.
fn shard_files(base: &Path, out: &Path, input: &str, shard: &str) -> Vec<String> {
    batch_ok(&[input, "--shard", shard, "--out", text(out)]);
    let suffix = shard.replace('/', "-of-");
    let loads = read(&out.join(format!("loads-{suffix}.parquet")));
    let mut files: Vec<String> = loads
        .column("file")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .flatten()
        .map(|f| {
            Path::new(f)
                .strip_prefix(base)
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    files.dedup();
    files
}

#[test]
fn a_files_shard_does_not_depend_on_where_the_folder_is() {
    // The same fleet layout under two different prefixes, as two machines would mount it.
    let here = scratch("mount-a");
    let there = scratch("mount-b");
    let deep = there.join("data/fleet/logs");
    let layout = [
        ("node-1/ollama.log", "founding-k80-gemma3-12b.log"),
        ("node-2/ollama.log", "001-kaggle-t4-llama31-8b.log"),
        (
            "node-3/ollama.log",
            "002-runpod-rtx4090-llama31-8b-lora.log",
        ),
        (
            "node-4/ollama.log",
            "founding-today-3090-4060-gemma4-31b.log",
        ),
        (
            "node-5/ollama.log",
            "015-multigpu-4x-split11x4-estimate.log",
        ),
        (
            "node-6/ollama.log",
            "030-journald-mllama-vision-projector-estimate.log",
        ),
    ];
    for base in [&here.join("logs"), &deep] {
        for (to, from) in layout {
            std::fs::create_dir_all(base.join(to).parent().unwrap()).unwrap();
            std::fs::copy(root().join("sample-logs").join(from), base.join(to)).unwrap();
        }
    }
    let a = shard_files(
        &here.join("logs"),
        &here.join("out"),
        text(&here.join("logs")),
        "1/2",
    );
    let b = shard_files(&deep, &there.join("out"), text(&deep), "1/2");
    assert!(
        !a.is_empty() && a.len() < layout.len(),
        "a real share: {a:?}"
    );
    assert_eq!(a, b, "same share under /…/logs and /…/data/fleet/logs");
    // A glob keys the file by its path below the pattern's literal folder: the same share again.
    let pattern = format!("{}/*/ollama.log", text(&deep));
    let c = shard_files(&deep, &there.join("glob-out"), &pattern, "1/2");
    assert_eq!(a, c, "the glob's share is the folder's");
    // The key is FNV-1a 64 of `node-N/ollama.log`: check the assignment against the definition.
    for (to, _) in layout {
        let want = vramdiff::batch::shard::fnv1a64(to.as_bytes()).is_multiple_of(2);
        assert_eq!(a.contains(&to.to_string()), want, "{to}");
    }
    let _ = std::fs::remove_dir_all(&here);
    let _ = std::fs::remove_dir_all(&there);
}

#[test]
fn bad_shard_and_partition_arguments_are_usage_errors() {
    for bad in ["0/2", "3/2", "1/0", "two", "1-2"] {
        let out = run(&["batch", "sample-logs", "--shard", bad], b"");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            stderr(&out).contains("1 <= K <= N"),
            "{bad}: {}",
            stderr(&out)
        );
    }
    let dir = scratch("bad-args");
    let out = run(
        &[
            "batch",
            "sample-logs",
            "--partition-by",
            "era,file",
            "--out",
            text(&dir),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("'file' is not a partition column"),
        "{}",
        stderr(&out)
    );
    let out = run(&["batch", "sample-logs", "--partition-by", "era"], b"");
    assert_eq!(out.status.code(), Some(2), "a dataset needs --out");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `part-*.parquet` under `dir/table`, with its partition columns put back from the folder names.
fn read_dataset(dir: &Path, table: &str, columns: &[&str]) -> (DataFrame, usize) {
    let mut parts = Vec::new();
    for entry in walkdir::WalkDir::new(dir.join(table)).sort_by_file_name() {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().to_string();
        assert!(
            name.starts_with("part-") && name.ends_with(".parquet"),
            "{name}"
        );
        let mut df = read(entry.path());
        for c in columns {
            let folder = entry
                .path()
                .ancestors()
                .filter_map(|a| a.file_name())
                .map(|n| n.to_string_lossy().to_string())
                .find_map(|n| n.strip_prefix(&format!("{c}=")).map(str::to_string))
                .unwrap_or_else(|| panic!("{}: no {c}= folder", entry.path().display()));
            let value = (folder != "__HIVE_DEFAULT_PARTITION__").then_some(folder);
            df.with_column(Column::new((*c).into(), vec![value; df.height()]))
                .unwrap();
        }
        parts.push(df);
    }
    let files = parts.len();
    (stacked(&parts), files)
}

#[test]
fn shards_write_one_partitioned_dataset_that_reads_back_as_the_flat_tables() {
    let flat = scratch("flat");
    let ds = scratch("dataset");
    batch_ok(&["sample-logs", "--out", text(&flat)]);
    let by = "era,engine";
    for shard in ["1/3", "2/3", "3/3"] {
        batch_ok(&[
            "sample-logs",
            "--shard",
            shard,
            "--partition-by",
            by,
            "--out",
            text(&ds),
        ]);
    }
    // A retried shard replaces its own files: no row twice.
    batch_ok(&[
        "sample-logs",
        "--shard",
        "2/3",
        "--partition-by",
        by,
        "--out",
        text(&ds),
    ]);
    for table in ["loads", "components"] {
        let want = read(&flat.join(format!("{table}.parquet")));
        let (got, files) = read_dataset(&ds, table, &["era", "engine"]);
        assert!(
            files > 3,
            "{table}: several partitions × shards, {files} files"
        );
        let order: Vec<&str> = want.get_column_names().iter().map(|c| c.as_str()).collect();
        let got = got.select(order).unwrap();
        assert!(
            got.equals_missing(&want),
            "{table}: the dataset, partition columns restored, is the flat table"
        );
        // The partition columns live in the folder names only, as Hive and Spark write them.
        let one = walkdir::WalkDir::new(ds.join(table))
            .into_iter()
            .filter_map(Result::ok)
            .find(|e| e.file_type().is_file())
            .unwrap();
        assert!(read(one.path()).column("era").is_err());
    }
    assert!(ds.join("loads/era=0.9/engine=ollama").is_dir());
    assert!(!ds.join("loads.parquet").exists());
    // A run split another way into the same dataset would read rows twice: refused, naming the file.
    let out = run(
        &[
            "batch",
            "sample-logs",
            "--shard",
            "1/2",
            "--partition-by",
            by,
            "--out",
            text(&ds),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is part of a run in 3 shards"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&flat);
    let _ = std::fs::remove_dir_all(&ds);
}
