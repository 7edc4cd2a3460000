//! Compare two runs' loads figure by figure. Every figure is a [`Quantity`] with the bounds its printed text
//! allows, so a change is only a change when the old and the new interval do not overlap (as the reconciler
//! judges estimate against actual): a figure printed `7.4 GiB` in both runs is the same, even if the two
//! builds' true values differed by 50 MiB.
//!
//! A regression, what `--fail-on-regression` gates on, is one of:
//! * more memory used: a GPU's actual grew beyond rounding, or a GPU that held nothing now holds buffers (more
//!   VRAM); or a component's actual grew beyond rounding (host weights excepted; the KV row sums KV buffers on
//!   every device, so a CPU-only load's KV growth counts too);
//! * a layer left the GPU: fewer layers on GPUs than before;
//! * a finding appeared at warning or above (information findings, such as `rounding-limited`, are reported
//!   but do not gate; a finding from a `batch` table, which keeps only codes, counts unless its code is one
//!   that is always information).

use serde::Serialize;

use super::facts::{FindingFact, KvFill, LoadFacts, MatchKey, Placement, RowFacts};
use super::matching::{pair, Pair, Pairing};
use crate::model::{human, FindingCode, Ordering3, Quantity, Severity};

/// How one figure moved between the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Movement {
    /// Both runs have it and the intervals overlap: no change can be claimed.
    Same,
    /// Larger beyond rounding.
    Up,
    /// Smaller beyond rounding.
    Down,
    /// Only the new run has it.
    Appeared,
    /// Only the old run has it.
    Gone,
    /// Neither run has it.
    Absent,
}

impl Movement {
    pub fn as_str(self) -> &'static str {
        match self {
            Movement::Same => "same",
            Movement::Up => "up",
            Movement::Down => "down",
            Movement::Appeared => "appeared",
            Movement::Gone => "gone",
            Movement::Absent => "absent",
        }
    }

    /// A change a reader should see.
    pub fn is_change(self) -> bool {
        !matches!(self, Movement::Same | Movement::Absent)
    }
}

/// One figure in both runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FigureChange {
    pub old: Option<Quantity>,
    pub new: Option<Quantity>,
    /// `new − old` with its bounds, when both runs have the figure.
    pub change: Option<Quantity>,
    pub movement: Movement,
}

impl FigureChange {
    pub fn new(old: Option<Quantity>, new: Option<Quantity>) -> FigureChange {
        let movement = match (&old, &new) {
            (Some(o), Some(n)) => match n.compare(o) {
                Ordering3::Overlap => Movement::Same,
                Ordering3::Above => Movement::Up,
                Ordering3::Below => Movement::Down,
            },
            (None, Some(_)) => Movement::Appeared,
            (Some(_), None) => Movement::Gone,
            (None, None) => Movement::Absent,
        };
        FigureChange {
            change: match (old, new) {
                (Some(o), Some(n)) => Some(n.minus(o)),
                _ => None,
            },
            old,
            new,
            movement,
        }
    }
}

/// A component or a device in both runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowDiff {
    pub name: String,
    pub host: bool,
    pub estimated: FigureChange,
    pub actual: FigureChange,
}

impl RowDiff {
    pub fn is_change(&self) -> bool {
        self.estimated.movement.is_change() || self.actual.movement.is_change()
    }
}

/// The placement in both runs and what changed in it, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacementChange {
    pub old: Placement,
    pub new: Placement,
    /// `split 1,48 → 49`, `layers on GPU 49/49 → 48/49`, `GPUs used CUDA0, CUDA1 → CUDA1`.
    pub changes: Vec<String>,
}

/// Where a load sits in its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    pub path: String,
    pub first_line: u64,
}

/// One load compared (or only in one run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadDiff {
    pub key: MatchKey,
    /// The key in words, for headings.
    pub label: String,
    /// `null` when only the new run has the load.
    pub old: Option<Side>,
    /// `null` when only the old run has the load.
    pub new: Option<Side>,
    /// Settings that differ between the paired loads (`ctx 4096 → 8192`): empty when paired on the full key.
    pub settings_changes: Vec<String>,
    /// Every component either run has, old run's order first.
    pub components: Vec<RowDiff>,
    /// Every device either run has, old run's order first.
    pub devices: Vec<RowDiff>,
    /// While serving: the host-RAM peaks either run has (`prompt_cache_peak`, `checkpoints_peak`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub serving: Vec<RowDiff>,
    /// While serving: the KV cache's fill peak of each run (vLLM, SGLang), omitted when neither has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_fill: Option<KvFillChange>,
    /// `null` unless both runs have the load.
    pub placement: Option<PlacementChange>,
    pub findings_appeared: Vec<FindingFact>,
    pub findings_cleared: Vec<FindingFact>,
    /// Something changed beyond rounding (or the load is only in one run).
    pub changed: bool,
    /// What `--fail-on-regression` gates on, in words.
    pub regressions: Vec<String>,
}

/// The KV cache's fill peak of both runs: a change only when the printed intervals do not overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KvFillChange {
    pub old: Option<KvFill>,
    pub new: Option<KvFill>,
    pub movement: Movement,
}

impl KvFillChange {
    /// `None` when neither run has a fill peak.
    pub fn new(old: Option<KvFill>, new: Option<KvFill>) -> Option<KvFillChange> {
        let movement = match (old, new) {
            (None, None) => return None,
            (Some(_), None) => Movement::Gone,
            (None, Some(_)) => Movement::Appeared,
            (Some(o), Some(n)) if n.low() > o.high() => Movement::Up,
            (Some(o), Some(n)) if n.high() < o.low() => Movement::Down,
            (Some(_), Some(_)) => Movement::Same,
        };
        Some(KvFillChange { old, new, movement })
    }

    /// `99.2% (±0.05) → 58.7% (±0.05), down by 40.4 to 40.6 points`.
    pub fn words(&self) -> String {
        let side = |k: Option<KvFill>| k.map_or("none".to_string(), KvFill::words);
        let by = match (self.old, self.new) {
            (Some(o), Some(n)) if self.movement.is_change() => {
                let (low, high) = if n.hundredths >= o.hundredths {
                    (n.low() - o.high(), n.high() - o.low())
                } else {
                    (o.low() - n.high(), o.high() - n.low())
                };
                format!(
                    " by {:.2} to {:.2} points",
                    low as f64 / 100.0,
                    high as f64 / 100.0
                )
            }
            _ => String::new(),
        };
        format!(
            "{} → {}, {}{by}",
            side(self.old),
            side(self.new),
            self.movement.as_str()
        )
    }
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// What was compared, as named on the command line.
    pub old: String,
    pub new: String,
    /// Matched loads in the new run's order, then loads only the old run has.
    pub loads: Vec<LoadDiff>,
    pub matched: usize,
    pub only_old: usize,
    pub only_new: usize,
    /// Loads with a change (unmatched loads included).
    pub changed: usize,
    /// Loads with a regression.
    pub regressed: usize,
    /// The new run's loads paired with the old run's of one model whose settings differ (`crate::pairs`: the
    /// old load replayed with the new one's settings, beside what the new one measured); two logs only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<crate::model::LoadPair>,
}

impl Diff {
    /// True when a load regressed (what `--fail-on-regression` exits 1 on).
    pub fn has_regression(&self) -> bool {
        self.regressed > 0
    }
}

/// Compare the loads of two runs.
pub fn diff(old_name: &str, new_name: &str, old: &[LoadFacts], new: &[LoadFacts]) -> Diff {
    let loads: Vec<LoadDiff> = pair(old, new)
        .into_iter()
        .map(|p| match p {
            Pair::Both(o, n, how) => matched(&old[o], &new[n], how),
            Pair::OldOnly(o) => alone(&old[o], true),
            Pair::NewOnly(n) => alone(&new[n], false),
        })
        .collect();
    Diff {
        old: old_name.to_string(),
        new: new_name.to_string(),
        matched: loads
            .iter()
            .filter(|l| l.old.is_some() && l.new.is_some())
            .count(),
        only_old: loads.iter().filter(|l| l.new.is_none()).count(),
        only_new: loads.iter().filter(|l| l.old.is_none()).count(),
        changed: loads.iter().filter(|l| l.changed).count(),
        regressed: loads.iter().filter(|l| !l.regressions.is_empty()).count(),
        loads,
        pairs: Vec::new(),
    }
}

fn side(l: &LoadFacts) -> Side {
    Side {
        path: l.path.clone(),
        first_line: l.first_line,
    }
}

/// A load only one run has: listed, never a regression.
fn alone(l: &LoadFacts, in_old: bool) -> LoadDiff {
    LoadDiff {
        key: l.key.clone(),
        label: l.key.label(),
        old: in_old.then(|| side(l)),
        new: (!in_old).then(|| side(l)),
        settings_changes: Vec::new(),
        components: Vec::new(),
        devices: Vec::new(),
        serving: Vec::new(),
        kv_fill: None,
        placement: None,
        findings_appeared: Vec::new(),
        findings_cleared: Vec::new(),
        changed: true,
        regressions: Vec::new(),
    }
}

/// Rows by name: the old run's in order, then the new run's that the old lacks.
fn rows(old: &[RowFacts], new: &[RowFacts]) -> Vec<RowDiff> {
    let mut names: Vec<(&str, bool)> = old.iter().map(|r| (r.name.as_str(), r.host)).collect();
    for r in new {
        if !names.iter().any(|(n, _)| *n == r.name) {
            names.push((&r.name, r.host));
        }
    }
    names
        .into_iter()
        .map(|(name, host)| {
            let o = old.iter().find(|r| r.name == name);
            let n = new.iter().find(|r| r.name == name);
            RowDiff {
                name: name.to_string(),
                host,
                estimated: FigureChange::new(
                    o.and_then(|r| r.estimated),
                    n.and_then(|r| r.estimated),
                ),
                actual: FigureChange::new(o.and_then(|r| r.actual), n.and_then(|r| r.actual)),
            }
        })
        .collect()
}

fn layers(p: &Placement) -> String {
    match (p.layers_on_gpu, p.layers_total) {
        (Some(on), Some(total)) => format!("{on}/{total}"),
        (Some(on), None) => on.to_string(),
        _ => "?".to_string(),
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

fn split(s: &[i64]) -> String {
    if s.is_empty() {
        "none".to_string()
    } else {
        s.iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn placement(old: &Placement, new: &Placement) -> PlacementChange {
    let mut changes = Vec::new();
    if old.split != new.split {
        changes.push(format!(
            "split {} → {}",
            split(&old.split),
            split(&new.split)
        ));
    }
    if (old.layers_on_gpu, old.layers_total) != (new.layers_on_gpu, new.layers_total) {
        changes.push(format!("layers on GPU {} → {}", layers(old), layers(new)));
    }
    if old.gpus_used != new.gpus_used {
        changes.push(format!(
            "GPUs used {} → {}",
            list(&old.gpus_used),
            list(&new.gpus_used)
        ));
    }
    PlacementChange {
        old: old.clone(),
        new: new.clone(),
        changes,
    }
}

/// The findings of `a` that `b` lacks, one for one by identity (code, device, component).
fn missing_from(a: &[FindingFact], b: &[FindingFact]) -> Vec<FindingFact> {
    let mut used = vec![false; b.len()];
    let mut out = Vec::new();
    for f in a {
        match b
            .iter()
            .enumerate()
            .find(|(i, g)| !used[*i] && g.identity() == f.identity())
        {
            Some((i, _)) => used[i] = true,
            None => out.push(f.clone()),
        }
    }
    out
}

fn gates(f: &FindingFact) -> bool {
    match f.severity {
        Some(s) => s >= Severity::Warning,
        // When only the code is known, information never gates.
        None => !FindingCode::parse(&f.code).is_some_and(FindingCode::is_information),
    }
}

fn range(c: &FigureChange) -> String {
    match (c.old, c.new, c.change) {
        (Some(o), Some(n), Some(d)) => format!(
            "{} → {} ({}{}, at least {}{})",
            human(o.bytes),
            human(n.bytes),
            if d.bytes > 0 { "+" } else { "" },
            human(d.bytes),
            if d.low > 0 { "+" } else { "" },
            human(d.low)
        ),
        (None, Some(n), _) => format!("none → {}", human(n.bytes)),
        _ => String::new(),
    }
}

fn matched(old: &LoadFacts, new: &LoadFacts, how: Pairing) -> LoadDiff {
    let settings_changes = match how {
        Pairing::Key => Vec::new(),
        Pairing::Settings => new.key.settings_changes(&old.key),
    };
    let components = rows(&old.components, &new.components);
    let devices = rows(&old.devices, &new.devices);
    let serving = rows(&old.serving, &new.serving);
    let kv_fill = KvFillChange::new(old.kv_fill, new.kv_fill);
    let placement = placement(&old.placement, &new.placement);
    let findings_appeared = missing_from(&new.findings, &old.findings);
    let findings_cleared = missing_from(&old.findings, &new.findings);
    let mut regressions = Vec::new();
    for d in devices.iter().filter(|d| !d.host) {
        if matches!(d.actual.movement, Movement::Up | Movement::Appeared) {
            regressions.push(format!("{}: more VRAM used, {}", d.name, range(&d.actual)));
        }
    }
    for c in components.iter().filter(|c| c.name != "weights_host") {
        if matches!(c.actual.movement, Movement::Up | Movement::Appeared) {
            regressions.push(format!(
                "{}: more memory allocated, {}",
                c.name,
                range(&c.actual)
            ));
        }
    }
    for r in &serving {
        if matches!(r.actual.movement, Movement::Up | Movement::Appeared) {
            regressions.push(format!(
                "{}: more host RAM while serving, {}",
                r.name,
                range(&r.actual)
            ));
        }
    }
    if let (Some(before), Some(after)) = (old.placement.layers_on_gpu, new.placement.layers_on_gpu)
    {
        if after < before {
            regressions.push(format!(
                "{} left the GPU: layers on GPU {} → {}",
                if before - after == 1 {
                    "a layer".to_string()
                } else {
                    format!("{} layers", before - after)
                },
                layers(&old.placement),
                layers(&new.placement)
            ));
        }
    }
    for f in findings_appeared.iter().filter(|f| gates(f)) {
        let about: Vec<&str> = f
            .device
            .iter()
            .chain(&f.component)
            .map(String::as_str)
            .collect();
        regressions.push(format!(
            "finding appeared: {}{}{}",
            f.code,
            f.severity
                .map(|s| format!(" ({})", s.as_str()))
                .unwrap_or_default(),
            if about.is_empty() {
                String::new()
            } else {
                format!(" on {}", about.join(", "))
            }
        ));
    }
    let changed = !settings_changes.is_empty()
        || components.iter().any(RowDiff::is_change)
        || devices.iter().any(RowDiff::is_change)
        || serving.iter().any(RowDiff::is_change)
        || kv_fill.is_some_and(|k| k.movement.is_change())
        || !placement.changes.is_empty()
        || !findings_appeared.is_empty()
        || !findings_cleared.is_empty();
    LoadDiff {
        key: new.key.clone(),
        label: new.key.label(),
        old: Some(side(old)),
        new: Some(side(new)),
        settings_changes,
        components,
        devices,
        serving,
        kv_fill,
        placement: Some(placement),
        findings_appeared,
        findings_cleared,
        changed,
        regressions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::GIB;

    /// Ollama's one-decimal GiB, as `7.4 GiB` is read.
    fn gib_tenths(tenths: u128) -> Quantity {
        Quantity::from_decimal(tenths, 1, GIB).unwrap()
    }

    #[test]
    fn a_kv_fill_change_inside_the_printed_decimals_is_no_change() {
        let vllm = |p: f64| KvFill::of("vllm", p);
        let sglang = |p: f64| KvFill::of("sglang", p);
        // vLLM, one decimal of a percentage: 99.2 → 99.0 is a real fall of 0.1 to 0.3 points.
        let down = KvFillChange::new(vllm(99.2), vllm(99.0)).unwrap();
        assert_eq!(down.movement, Movement::Down);
        assert!(
            down.words().ends_with("down by 0.10 to 0.30 points"),
            "{}",
            down.words()
        );
        // SGLang, two decimals of a fraction: 0.98 → 0.97 touch at 97.5 %, no claim.
        let same = KvFillChange::new(sglang(98.0), sglang(97.0)).unwrap();
        assert_eq!(same.movement, Movement::Same);
        assert_eq!(
            KvFillChange::new(None, sglang(91.0)).unwrap().movement,
            Movement::Appeared
        );
        assert!(KvFillChange::new(None, None).is_none());
        // Not an engine that prints a fill.
        assert!(KvFill::of("ollama", 50.0).is_none());
    }

    #[test]
    fn a_change_inside_the_printed_rounding_is_no_change() {
        // 7.4 GiB printed both times: the same, whatever the true bytes were.
        let same = FigureChange::new(Some(gib_tenths(74)), Some(gib_tenths(74)));
        assert_eq!(same.movement, Movement::Same);
        // 7.4 → 7.5 GiB: the intervals [7.35, 7.45) and [7.45, 7.55) touch at one byte, still no claim.
        let touching = FigureChange::new(Some(gib_tenths(74)), Some(gib_tenths(75)));
        assert_eq!(touching.movement, Movement::Same);
        // 7.4 → 8.4 GiB is a real growth of 1 GiB, between 0.9 and 1.1 GiB by the rounding of both figures.
        let grown = FigureChange::new(Some(gib_tenths(74)), Some(gib_tenths(84)));
        assert_eq!(grown.movement, Movement::Up);
        let d = grown.change.unwrap();
        assert_eq!(d.bytes, GIB);
        assert!(
            (d.low - GIB * 9 / 10).abs() <= 1 && (d.high - GIB * 11 / 10).abs() <= 1,
            "{d:?}"
        );
        assert_eq!(
            FigureChange::new(None, Some(gib_tenths(1))).movement,
            Movement::Appeared
        );
        assert_eq!(
            FigureChange::new(Some(gib_tenths(1)), None).movement,
            Movement::Gone
        );
    }

    #[test]
    fn findings_are_matched_one_for_one_by_code_device_and_component() {
        let f = |code: &str, device: Option<&str>| FindingFact {
            code: code.into(),
            severity: Some(Severity::Warning),
            message: String::new(),
            device: device.map(str::to_string),
            component: None,
            lines: Vec::new(),
        };
        let old = [f("underestimate", Some("CUDA0"))];
        let new = [
            f("underestimate", Some("CUDA0")),
            f("underestimate", Some("CUDA1")),
        ];
        let appeared = missing_from(&new, &old);
        assert_eq!(appeared, vec![f("underestimate", Some("CUDA1"))]);
        assert!(missing_from(&old, &new).is_empty());
    }

    #[test]
    fn only_code_known_information_findings_do_not_gate() {
        let fact = |code: &str| FindingFact {
            code: code.into(),
            severity: None,
            message: String::new(),
            device: None,
            component: None,
            lines: Vec::new(),
        };
        assert!(!gates(&fact("rounding-limited")));
        assert!(gates(&fact("needless-split")));
    }
}
