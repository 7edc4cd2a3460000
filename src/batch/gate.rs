//! The CI gate: `--fail-on SEVERITY` and `--max-error COMPONENT=PCT` turn findings and estimate errors into an
//! exit code of 1, with the offending loads listed (file:line and why).

use super::ingest::FileResult;
use super::rows::COMPONENTS;
use super::scorecard::PairRow;
use crate::model::Severity;

/// `--max-error prediction=PCT`: a pair's prediction may miss what the second load measured by at most PCT %
/// beyond the rounding of both.
pub const PREDICTION: &str = "prediction";

/// `graph=25`: the component's actual/estimated may differ from 1 by at most 25 %; `prediction=10`: a pair of
/// loads' prediction may miss the measurement by at most 10 %.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxError {
    pub component: String,
    pub percent: f64,
}

impl std::str::FromStr for MaxError {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (component, percent) = s
            .split_once('=')
            .ok_or_else(|| format!("'{s}': expected COMPONENT=PCT, e.g. graph=25"))?;
        let mut names: Vec<&str> = COMPONENTS.iter().map(|c| c.as_str()).collect();
        // The error of a pair's prediction (`super::scorecard`), beyond the rounding.
        names.push(PREDICTION);
        if !names.contains(&component) {
            return Err(format!(
                "'{component}' is not a component ({})",
                names.join(", ")
            ));
        }
        let percent: f64 = percent
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("'{percent}' is not a percentage"))?;
        if !(percent.is_finite() && percent >= 0.0) {
            return Err("the percentage must be a number ≥ 0".into());
        }
        Ok(MaxError {
            component: component.to_string(),
            percent,
        })
    }
}

/// Why loads fail the gate; empty when the gate passes.
pub fn offenders(
    results: &[FileResult],
    pairs: &[PairRow],
    fail_on: Option<Severity>,
    max_errors: &[MaxError],
) -> Vec<String> {
    let mut out = Vec::new();
    for m in max_errors.iter().filter(|m| m.component == PREDICTION) {
        for p in pairs {
            if let Some(error) = p.error_percent().filter(|e| e.abs() > m.percent) {
                out.push(format!(
                    "{}:{}: loads {} ({}): {} predicted {error:+.1} % off what was measured (limit {} %)",
                    p.file,
                    p.first_line,
                    p.loads(),
                    p.setting,
                    p.component,
                    m.percent
                ));
            }
        }
    }
    for r in results {
        if let Some(threshold) = fail_on {
            for (load, f) in r.findings.iter().filter(|(_, f)| f.severity >= threshold) {
                let line = r
                    .loads
                    .iter()
                    .find(|l| l.load == *load)
                    .map(|l| l.first_line)
                    .unwrap_or(0);
                out.push(format!(
                    "{}:{line}: {} {}: {}",
                    r.summary.path,
                    f.severity.as_str(),
                    f.code,
                    f.message
                ));
            }
        }
        for m in max_errors {
            let Some(k) = COMPONENTS.iter().position(|c| c.as_str() == m.component) else {
                continue;
            };
            for l in &r.loads {
                if let Some(ratio) = l.components.get(k).and_then(|c| c.ratio) {
                    let error = (ratio - 1.0).abs() * 100.0;
                    if error > m.percent {
                        out.push(format!(
                            "{}:{}: {} actual/estimated {ratio:.3} ({error:.1} % off, limit {} %)",
                            l.file, l.first_line, m.component, m.percent
                        ));
                    }
                }
            }
        }
    }
    out
}
