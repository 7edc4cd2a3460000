//! `vramdiff diff` on two `batch --out` folders: read `loads.parquet` and `components.parquet` back into the
//! [`LoadFacts`] the comparison reads, so a folder compares like a log. The tables keep what the comparison
//! needs — the key's parts, every component and device figure with its bounds, the split, the layers the
//! estimate offloaded, the finding codes — but not the findings' severities or messages: a finding from a
//! table is a code (see `diff::compare` for how it gates).

use std::collections::BTreeMap;
use std::path::Path;

use polars::prelude::*;

use super::tables::{float_at, int_at, read_parquet, text_at};
use crate::diff::facts::{
    gpus_used, model_word, FindingFact, LoadFacts, MatchKey, Placement, RowFacts,
};
use crate::model::{Device, Quantity};

/// A figure with its bounds, from the columns `name`, `name_low`, `name_high`.
fn quantity(df: &DataFrame, name: &str, row: usize) -> Option<Quantity> {
    let bytes = int_at(df, name, row)?;
    let low = int_at(df, &format!("{name}_low"), row).unwrap_or(bytes);
    let high = int_at(df, &format!("{name}_high"), row).unwrap_or(bytes);
    Some(Quantity::with_bounds(bytes, low, high))
}

/// The columns every table of a `batch` folder must have, to name what is missing rather than compare less.
const LOAD_COLUMNS: [&str; 10] = [
    "file",
    "load",
    "first_line",
    "model",
    "blob",
    "gpu_names",
    "ctx",
    "parallel",
    "layers_offload",
    "findings",
];
const COMPONENT_COLUMNS: [&str; 5] = ["file", "load", "kind", "name", "estimated"];

fn require(df: &DataFrame, path: &Path, columns: &[&str]) -> anyhow::Result<()> {
    for c in columns {
        if df.column(c).is_err() {
            anyhow::bail!(
                "{}: no column '{c}' (not a vramdiff batch table?)",
                path.display()
            );
        }
    }
    Ok(())
}

/// A table of a `batch --out` folder: `NAME.parquet`, or else the shards' `NAME-K-of-N.parquet` (`batch --shard`
/// runs writing into one folder) stacked in shard order.
fn read_table(dir: &Path, name: &str, columns: &[&str]) -> anyhow::Result<DataFrame> {
    let whole = dir.join(format!("{name}.parquet"));
    let paths = if whole.is_file() {
        vec![whole]
    } else {
        let prefix = format!("{name}-");
        let mut shards: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir(dir)
            .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                let file = path.file_name()?.to_str()?;
                let (k, _) = file
                    .strip_prefix(&prefix)?
                    .strip_suffix(".parquet")?
                    .split_once("-of-")?;
                Some((k.parse().ok()?, path))
            })
            .collect();
        shards.sort();
        shards.into_iter().map(|(_, p)| p).collect()
    };
    if paths.is_empty() {
        anyhow::bail!(
            "{}: no {name}.parquet nor {name}-K-of-N.parquet shards (a --partition-by dataset: compare its \
             merged tables)",
            dir.display()
        );
    }
    let mut table: Option<DataFrame> = None;
    for path in &paths {
        let part = read_parquet(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        require(&part, path, columns)?;
        table = Some(match table {
            None => part,
            Some(mut t) => {
                t.vstack_mut(&part)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                t
            }
        });
    }
    table.ok_or_else(|| anyhow::anyhow!("{}: no {name} table", dir.display()))
}

/// The loads of a `batch --out` folder, in file and load order.
pub fn read_folder(dir: &Path) -> anyhow::Result<Vec<LoadFacts>> {
    let loads = read_table(dir, "loads", &LOAD_COLUMNS)?;
    let components = read_table(dir, "components", &COMPONENT_COLUMNS)?;
    // Component and device rows by (file, load), in table order.
    let mut rows: BTreeMap<(String, i64), (Vec<RowFacts>, Vec<RowFacts>)> = BTreeMap::new();
    for r in 0..components.height() {
        let (Some(file), Some(load), Some(kind), Some(name)) = (
            text_at(&components, "file", r),
            int_at(&components, "load", r),
            text_at(&components, "kind", r),
            text_at(&components, "name", r),
        ) else {
            continue;
        };
        let entry = rows.entry((file, load)).or_default();
        let device = kind == "device";
        let facts = RowFacts {
            host: device && Device::named(&name).is_host(),
            name,
            estimated: quantity(&components, "estimated", r),
            actual: quantity(&components, "actual", r),
        };
        if device {
            entry.1.push(facts);
        } else {
            entry.0.push(facts);
        }
    }
    let mut out: Vec<((String, i64), LoadFacts)> = Vec::new();
    for r in 0..loads.height() {
        let (Some(file), Some(load)) = (text_at(&loads, "file", r), int_at(&loads, "load", r))
        else {
            continue;
        };
        let (components, devices) = rows.remove(&(file.clone(), load)).unwrap_or_default();
        let split: Vec<i64> = text_at(&loads, "layers_split", r)
            .unwrap_or_default()
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        let placement = Placement {
            split,
            layers_on_gpu: int_at(&loads, "layers_offload", r),
            layers_total: int_at(&loads, "layers_model", r),
            gpus_used: gpus_used(&devices),
        };
        let findings = text_at(&loads, "findings", r)
            .unwrap_or_default()
            .split(',')
            .filter(|c| !c.is_empty())
            .map(|code| FindingFact {
                code: code.to_string(),
                severity: None,
                message: String::new(),
                device: None,
                component: None,
                lines: Vec::new(),
            })
            .collect();
        let facts = LoadFacts {
            path: file.clone(),
            first_line: int_at(&loads, "first_line", r).unwrap_or(0).max(0) as u64,
            key: MatchKey::new(
                model_word(
                    text_at(&loads, "model", r).as_deref(),
                    text_at(&loads, "blob", r).as_deref(),
                ),
                int_at(&loads, "ctx", r),
                int_at(&loads, "parallel", r),
                text_at(&loads, "gpu_names", r)
                    .unwrap_or_default()
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            ),
            blob: text_at(&loads, "blob", r),
            components,
            devices,
            serving: crate::diff::facts::serving_rows(
                int_at(&loads, "serving_prompt_cache_peak", r).map(Quantity::exact),
                int_at(&loads, "serving_checkpoints_peak", r).map(Quantity::exact),
            ),
            kv_fill: text_at(&loads, "runtime", r)
                .zip(float_at(&loads, "serving_kv_percent_peak", r))
                .and_then(|(era, percent)| crate::diff::facts::KvFill::of(&era, percent)),
            placement,
            findings,
        };
        out.push(((file, load), facts));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out.into_iter().map(|(_, f)| f).collect())
}
