//! `batch --partition-by era,engine`: the `loads` and `components` tables as a Hive-partitioned Parquet dataset,
//! `DIR/loads/era=0.9/engine=ollama/part-1-of-1.parquet`, which Spark, DuckDB, polars and pyarrow read as one
//! table. A fleet's runs (one per shard, on as many machines) write into the same folder: each file name carries
//! the shard (`part-K-of-N.parquet`), so shards never overwrite each other, and a shard run again (a retried task)
//! first removes what it wrote before, so a retry never leaves two copies of a row.
//!
//! Layout, as Hive and Spark write it: the partition columns are taken out of the files and live only in the
//! folder names; a value is percent-encoded (`%2F` for `/`, `%3D` for `=`, `%25` for `%`, control characters,
//! and the characters Windows forbids in file names), and a null or empty value is `__HIVE_DEFAULT_PARTITION__`
//! (read back as null). Partition values are text: readers that guess types from folder names would read the era
//! `0.30` as the number 0.3, so give them the type (`hive_types={'era': 'VARCHAR'}` in DuckDB, `hive_schema` in
//! polars, a string partitioning schema in pyarrow); docs/guide/batch.md shows each.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::shard::Shard;

/// The columns a dataset can be partitioned by: text columns of both tables with few distinct values.
pub const PARTITION_COLUMNS: [&str; 4] = ["era", "engine", "model", "compute"];

/// The longest folder name written (bytes): what ext4, NTFS and APFS take.
const MAX_SEGMENT: usize = 255;

/// What Hive and Spark name the partition of a null or empty value.
pub const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// `--partition-by`: the partition columns, in folder order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionBy(pub Vec<String>);

impl std::str::FromStr for PartitionBy {
    type Err = String;

    fn from_str(text: &str) -> Result<PartitionBy, String> {
        let mut columns: Vec<String> = Vec::new();
        for name in text.split(',').map(str::trim) {
            if !PARTITION_COLUMNS.contains(&name) {
                return Err(format!(
                    "'{name}' is not a partition column (one or more of: {})",
                    PARTITION_COLUMNS.join(", ")
                ));
            }
            if columns.iter().any(|c| c == name) {
                return Err(format!("'{name}' is named twice"));
            }
            columns.push(name.to_string());
        }
        Ok(PartitionBy(columns))
    }
}

/// A partition value as a folder name segment (without the `column=`).
pub fn encode_value(value: Option<&str>) -> String {
    let value = match value {
        None | Some("") => return DEFAULT_PARTITION.to_string(),
        Some(v) => v,
    };
    let mut out = String::with_capacity(value.len());
    for ch in value.chars() {
        // Spark's escapePathName set, plus what Windows refuses in a file name (`<`, `>`, `|`).
        let escape = ch.is_control()
            || matches!(
                ch,
                '"' | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '{'
                    | '['
                    | ']'
                    | '^'
                    | '<'
                    | '>'
                    | '|'
            );
        if escape {
            let mut buf = [0u8; 4];
            for b in ch.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(ch);
        }
    }
    out
}

/// The file name of a shard's part in every partition folder.
pub fn part_name(shard: Option<Shard>) -> String {
    let shard = shard.unwrap_or(Shard { index: 1, count: 1 });
    format!("part{}.parquet", shard.suffix())
}

/// `part-K-of-N.parquet` → (K, N).
fn parse_part_name(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("part-")?.strip_suffix(".parquet")?;
    let (k, n) = rest.split_once("-of-")?;
    Some((k.parse().ok()?, n.parse().ok()?))
}

/// Remove this shard's files from an earlier run of it, after checking that the dataset holds no run with a
/// different shard count (its rows would be read twice).
fn clear_shard(root: &Path, shard: Option<Shard>) -> anyhow::Result<()> {
    if !root.exists() {
        return Ok(());
    }
    let mine = part_name(shard);
    let count = shard.map_or(1, |s| s.count);
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry?;
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        if name == mine || name == format!(".{mine}.tmp") {
            std::fs::remove_file(entry.path())?;
        } else if let Some((_, n)) = parse_part_name(&name) {
            if n != count {
                anyhow::bail!(
                    "{} is part of a run in {n} shards, this run has {count}: write into an empty folder",
                    entry.path().display()
                );
            }
        }
    }
    Ok(())
}

/// The text values of `column`, one per row (nulls as `None`).
fn values(df: &DataFrame, column: &str) -> PolarsResult<Vec<Option<String>>> {
    Ok(df
        .column(column)?
        .str()?
        .iter()
        .map(|v| v.map(str::to_string))
        .collect())
}

/// Write `df` as `dir/table/col=value/…/part-K-of-N.parquet`, one file per partition, rows in table order.
/// Returns the files written (none for an empty table: there is no partition to put a row in).
pub fn write(
    dir: &Path,
    table: &str,
    df: &DataFrame,
    by: &PartitionBy,
    shard: Option<Shard>,
) -> anyhow::Result<Vec<String>> {
    let root = dir.join(table);
    let columns: Vec<Vec<Option<String>>> =
        by.0.iter()
            .map(|c| values(df, c))
            .collect::<PolarsResult<_>>()?;
    // Partition folder → row indices, in the order of the folders' names (deterministic).
    let mut partitions: std::collections::BTreeMap<PathBuf, Vec<IdxSize>> = Default::default();
    let files = values(df, "file")?;
    let lines = df.column("first_line")?.i64()?.clone();
    for row in 0..df.height() {
        let mut folder = root.clone();
        for (name, vals) in by.0.iter().zip(&columns) {
            let segment = format!("{name}={}", encode_value(vals[row].as_deref()));
            // Log text becomes a folder name here: one that no file system takes is refused before anything
            // is written, naming the load it came from.
            if segment.len() > MAX_SEGMENT {
                anyhow::bail!(
                    "{}:{}: the {name} value is {} bytes as a folder name, more than {MAX_SEGMENT}: partition by \
                     other columns",
                    files[row].as_deref().unwrap_or("?"),
                    lines.get(row).unwrap_or(0),
                    segment.len()
                );
            }
            folder.push(segment);
        }
        partitions.entry(folder).or_default().push(row as IdxSize);
    }
    clear_shard(&root, shard)?;
    let data = df.drop_many(by.0.iter().map(String::as_str));
    let name = part_name(shard);
    let mut written = Vec::new();
    for (folder, rows) in partitions {
        std::fs::create_dir_all(&folder)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", folder.display()))?;
        let mut part = data.take(&IdxCa::from_vec("rows".into(), rows))?;
        // Written under a dot name and renamed: readers skip dot files, so they never see half a file.
        let tmp = folder.join(format!(".{name}.tmp"));
        ParquetWriter::new(File::create(&tmp)?)
            .with_statistics(StatisticsOptions::full())
            .finish(&mut part)?;
        let path = folder.join(&name);
        std::fs::rename(&tmp, &path)?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_encoded_as_hive_does() {
        assert_eq!(encode_value(Some("0.30")), "0.30");
        assert_eq!(encode_value(Some("llama-server")), "llama-server");
        assert_eq!(encode_value(None), DEFAULT_PARTITION);
        assert_eq!(encode_value(Some("")), DEFAULT_PARTITION);
        assert_eq!(encode_value(Some("a/b=c%d")), "a%2Fb%3Dc%25d");
        assert_eq!(encode_value(Some("../..")), "..%2F..");
        assert_eq!(encode_value(Some("x\ny\u{1b}")), "x%0Ay%1B");
        assert_eq!(encode_value(Some("3.7,8.9")), "3.7,8.9");
        assert_eq!(encode_value(Some("gemma ü")), "gemma ü");
    }

    #[test]
    fn partition_columns_are_validated() {
        assert_eq!(
            "era,engine".parse(),
            Ok(PartitionBy(vec!["era".into(), "engine".into()]))
        );
        assert!("era,era"
            .parse::<PartitionBy>()
            .unwrap_err()
            .contains("twice"));
        let e = "file".parse::<PartitionBy>().unwrap_err();
        assert!(e.contains("era, engine, model, compute"), "{e}");
        assert!("".parse::<PartitionBy>().is_err());
    }

    #[test]
    fn a_value_too_long_for_a_folder_name_is_refused_naming_the_load() {
        use crate::batch::rows::LoadRow;
        let row = |model: &str| LoadRow {
            file: "fleet/node-1.log".into(),
            load: 1,
            first_line: 42,
            model: Some(model.into()),
            era: "0.9".into(),
            ..LoadRow::default()
        };
        let df =
            crate::batch::tables::loads_frame(&[&row("gemma3"), &row(&"x".repeat(300))]).unwrap();
        let dir =
            std::env::temp_dir().join(format!("vramdiff-dataset-long-{}", std::process::id()));
        let by: PartitionBy = "model".parse().unwrap();
        let e = write(&dir, "loads", &df, &by, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("fleet/node-1.log:42: the model value is 306 bytes"),
            "{e}"
        );
        assert!(
            !dir.join("loads").join("model=gemma3").exists(),
            "nothing written"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn part_names_carry_the_shard() {
        assert_eq!(part_name(None), "part-1-of-1.parquet");
        let s = Shard { index: 2, count: 3 };
        assert_eq!(part_name(Some(s)), "part-2-of-3.parquet");
        assert_eq!(parse_part_name("part-2-of-3.parquet"), Some((2, 3)));
        assert_eq!(parse_part_name("loads.parquet"), None);
    }
}
