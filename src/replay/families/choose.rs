//! Which estimator families may have printed an estimate line, most likely first, from the evidence the log
//! gives: the line's `source=file:line` (each build prints it from its own place), the server version when
//! the log prints it, the line's date and the GPUs (a compute 3.7 GPU such as a Tesla K80 is run only by
//! the ollama37 fork). `docs/log-formats.md` §2.4a has the table.

use super::Family;
use crate::load::parse_version;
use crate::model::Reconciled;

/// What a log says about the build that printed its estimate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    /// `server.go:175`, `memory.go:356` …
    pub source_position: Option<String>,
    pub version: Option<(u32, u32, u32)>,
    /// `YYYY-MM-DD`.
    pub logged_on: Option<String>,
    /// A GPU of compute capability 3.7 (Tesla K80) was listed.
    pub compute_37: bool,
}

impl Evidence {
    pub fn of(load: &Reconciled) -> Evidence {
        let l = &load.load;
        let e = l.estimate.as_ref();
        Evidence {
            source_position: e.and_then(|e| e.source_position.clone()),
            version: l.ollama_version.as_deref().and_then(parse_version),
            logged_on: e.and_then(|e| e.logged_on.clone()),
            compute_37: l.gpus.iter().any(|g| {
                g.compute.as_deref() == Some("3.7")
                    || g.name.as_deref().is_some_and(|n| n.contains("K80"))
            }),
        }
    }
}

/// The upstream family of a version.
fn upstream_of(v: (u32, u32, u32)) -> Family {
    if v < (0, 6, 1) {
        Family::Upstream05
    } else if v < (0, 6, 3) {
        Family::Upstream061
    } else if v < (0, 7, 0) {
        Family::Upstream063
    } else if v < (0, 7, 1) {
        Family::Upstream070
    } else if v < (0, 11, 5) {
        Family::Upstream071
    } else {
        Family::Upstream0115
    }
}

/// The candidate families, most likely first, each with why it is a candidate.
pub fn candidates(ev: &Evidence) -> Vec<(Family, String)> {
    let position = ev.source_position.as_deref().unwrap_or("");
    let (file, line) = position.split_once(':').unwrap_or((position, ""));
    let line: u32 = line.parse().unwrap_or(0);
    let from_source = |families: &[Family], builds: &str| -> Vec<(Family, String)> {
        // A printed version narrows the builds a position covers, when it is one of them.
        let narrowed: Vec<Family> = match ev.version.map(upstream_of) {
            Some(f) if families.contains(&f) => vec![f],
            _ => families.to_vec(),
        };
        narrowed
            .into_iter()
            .map(|f| {
                let version = ev
                    .version
                    .filter(|_| families.len() > 1)
                    .map(|(a, b, c)| format!(", version {a}.{b}.{c}"))
                    .unwrap_or_default();
                (
                    f,
                    format!("source={position} is printed by {builds}{version}"),
                )
            })
            .collect()
    };
    let mut out: Vec<(Family, String)> = match (file, line) {
        ("memory.go", _) => from_source(&[Family::Upstream05], "Ollama 0.3–0.5.11"),
        ("server.go", 130) => from_source(&[Family::Upstream05], "Ollama 0.5.12–0.5.13"),
        ("server.go", 138) => from_source(
            &[Family::Upstream05, Family::Upstream061, Family::Upstream063],
            "Ollama 0.6.0–0.6.7",
        ),
        ("server.go", 139) => from_source(&[Family::Upstream063], "Ollama 0.6.8"),
        ("server.go", 168) => from_source(
            &[Family::Upstream070, Family::Upstream071],
            "Ollama 0.7.0–0.9.2",
        ),
        ("server.go", 175) => from_source(
            &[Family::Upstream071],
            "Ollama 0.9.3–0.11.4 (and ollama37 until 2025-11-04)",
        ),
        ("server.go", 507 | 522 | 528 | 531 | 533 | 543 | 544 | 545) => {
            from_source(&[Family::Upstream0115], "Ollama 0.11.5–0.12.10")
        }
        ("server.go", 559) => vec![(
            Family::Ollama37Safety,
            format!("source={position} is printed by the ollama37 fork of 2026"),
        )],
        _ => {
            let why = |f: Family| {
                format!(
                    "no known source position ({}); tried as {}",
                    if position.is_empty() {
                        "none"
                    } else {
                        position
                    },
                    f.builds()
                )
            };
            match ev.version.map(upstream_of) {
                Some(f) => vec![(f, format!("the log prints version {}", version_text(ev)))],
                None => [
                    Family::Upstream071,
                    Family::Upstream0115,
                    Family::Upstream070,
                    Family::Upstream063,
                    Family::Upstream061,
                    Family::Upstream05,
                ]
                .into_iter()
                .map(|f| (f, why(f)))
                .collect(),
            }
        }
    };
    if ev.compute_37 {
        // Upstream never ran on compute 3.7: the ollama37 fork did, with its own estimator changes.
        let fork: Vec<Family> = match (file, line) {
            ("server.go", 175) => {
                if ev.logged_on.as_deref().is_some_and(|d| d >= "2025-11-05") {
                    vec![Family::Ollama37Safety]
                } else {
                    vec![
                        Family::Ollama37Last,
                        Family::Ollama37Scaled,
                        Family::Ollama37Revert,
                    ]
                }
            }
            ("server.go", 507 | 522) | ("", _) => vec![Family::Ollama37Safety],
            _ => Vec::new(),
        };
        let mut forked: Vec<(Family, String)> = fork
            .into_iter()
            .filter(|f| !out.iter().any(|(o, _)| o == f))
            .map(|f| {
                (
                    f,
                    format!(
                        "a compute 3.7 GPU (Tesla K80) runs only on the ollama37 fork; source={position} \
                         is also where {} print the estimate",
                        f.builds()
                    ),
                )
            })
            .collect();
        forked.append(&mut out);
        out = forked;
    }
    out
}

fn version_text(ev: &Evidence) -> String {
    ev.version
        .map(|(a, b, c)| format!("{a}.{b}.{c}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(ev: &Evidence) -> Vec<&'static str> {
        candidates(ev).into_iter().map(|(f, _)| f.name()).collect()
    }

    #[test]
    fn the_source_position_names_the_upstream_family_and_a_version_narrows_it() {
        let at = |p: &str| Evidence {
            source_position: Some(p.to_string()),
            ..Evidence::default()
        };
        assert_eq!(names(&at("server.go:130")), ["upstream-0.5"]);
        assert_eq!(names(&at("memory.go:356")), ["upstream-0.5"]);
        assert_eq!(
            names(&at("server.go:168")),
            ["upstream-0.7.0", "upstream-0.7.1"]
        );
        let mut v = at("server.go:168");
        v.version = Some((0, 7, 0));
        assert_eq!(names(&v), ["upstream-0.7.0"]);
        v.version = Some((0, 9, 0));
        assert_eq!(names(&v), ["upstream-0.7.1"]);
        assert_eq!(names(&at("server.go:544")), ["upstream-0.11.5"]);
    }

    #[test]
    fn a_compute_37_gpu_puts_the_fork_families_first() {
        let ev = Evidence {
            source_position: Some("server.go:175".to_string()),
            version: Some((0, 9, 6)),
            logged_on: Some("2025-07-20".to_string()),
            compute_37: true,
        };
        assert_eq!(
            names(&ev),
            [
                "ollama37-241a0340",
                "ollama37-6d87524e",
                "ollama37-fabe2c5c",
                "upstream-0.7.1"
            ]
        );
        let later = Evidence {
            logged_on: Some("2025-11-20".to_string()),
            ..ev
        };
        assert_eq!(names(&later), ["ollama37-safety", "upstream-0.7.1"]);
    }
}
