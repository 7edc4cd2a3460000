//! The chart writer: the one place that writes chart files. Every load's charts go into the folder given with
//! `--chart`, under names built from `[A-Za-z0-9._-]` only ([`super::stem`]), so log text never becomes a
//! path outside it.

use std::path::Path;

use super::load_charts;
use crate::model::Analysis;
use crate::report::ChartLink;

/// Write every load's charts into `dir` (created if missing). Returns the links per load (for the reporters)
/// and, in writing order, the paths written; an error names what could not be created or written.
pub fn write_charts(
    dir: &Path,
    analysis: &Analysis,
) -> Result<(Vec<Vec<ChartLink>>, Vec<String>), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the chart folder {}: {e}", dir.display()))?;
    let mut links = Vec::new();
    let mut written = Vec::new();
    for (i, load) in analysis.loads.iter().enumerate() {
        let charts =
            load_charts(load, i + 1).map_err(|e| format!("chart of load {}: {e}", i + 1))?;
        let mut load_links = Vec::new();
        for c in charts {
            let path = dir.join(&c.file_name);
            std::fs::write(&path, &c.png)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            written.push(path.display().to_string());
            load_links.push(ChartLink {
                path: path.display().to_string(),
                title: c.title,
            });
        }
        links.push(load_links);
    }
    Ok((links, written))
}
