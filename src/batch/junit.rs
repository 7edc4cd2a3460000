//! `batch --junit FILE`: the run as JUnit XML for the CI servers that read it (GitLab, Jenkins, …): a suite per
//! log, a case per load, a failure per finding at or above `--fail-on`. The same document as the report's
//! `--format junit` ([`crate::report::junit`]), built from the batch's rows and findings, since a batch keeps no
//! concluded loads.

use super::ingest::FileResult;
use crate::model::Severity;
use crate::report::junit::{finding_failure, input_properties, Case, Suite};

/// A suite per file read (an unreadable one carries its error), a case per load named by its model × settings
/// key and first line.
pub fn suites(results: &[FileResult], threshold: Option<Severity>) -> Vec<Suite> {
    results
        .iter()
        .map(|r| Suite {
            name: r.summary.path.clone(),
            cases: r
                .loads
                .iter()
                .map(|row| Case {
                    name: format!("{} (line {})", row.key, row.first_line),
                    classname: format!("vramdiff.{}", row.file),
                    failures: r
                        .findings
                        .iter()
                        .filter(|(load, f)| {
                            *load == row.load && threshold.is_some_and(|t| f.severity >= t)
                        })
                        .map(|(_, f)| finding_failure(&row.file, f))
                        .collect(),
                    system_out: None,
                })
                .collect(),
            error: r.summary.error.clone(),
            properties: input_properties(&r.summary),
        })
        .collect()
}
