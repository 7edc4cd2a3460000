//! Which GPU each rank of a vLLM or SGLang start is (see `mod.rs`'s module doc for the rule), and the GPUs of
//! the load built from them. Why a file of its own: the rank labels both engines' prefixes give
//! (`frame::prefix`) are the one thing about a serving load that is about devices rather than memory.

use super::ServingLedger;
use crate::model::{Backend, Device, RankFigures, ServingFigures};

impl ServingLedger {
    /// The GPU backend the log names (vLLM's detected platform), else unknown (`GPU0`).
    fn backend(&self) -> Backend {
        match self.platform.as_deref() {
            Some("cuda") => Backend::Cuda,
            Some("rocm") => Backend::Rocm,
            _ => Backend::Unknown,
        }
    }

    /// The GPU index of each rank (see the module doc).
    fn index_of(&self, label: &str, pids_before: u32) -> Option<u32> {
        let part = |prefix: &str| {
            label.split('_').find_map(|p| {
                p.strip_prefix(prefix)
                    .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|n| n.parse::<u32>().ok())
            })
        };
        if let Ok(n) = label.parse::<u32>() {
            return Some(n);
        }
        if let Some(n) = label.strip_prefix("rank").and_then(|n| n.parse().ok()) {
            return Some(n);
        }
        if label.starts_with("pid") {
            return Some(pids_before.saturating_add(1));
        }
        if self.sglang {
            return part("TP");
        }
        if let Some(ep) = part("EP") {
            return Some(ep);
        }
        let tp_size = self.args.tp.and_then(|size| u32::try_from(size).ok());
        match (part("PP"), part("TP"), tp_size) {
            // A pipeline stage's workers: stage × TP size + TP rank (`(Worker_PP1_TP0 pid=…)`), the stage alone
            // when it is the only rank named (`(Worker_PP6 pid=…)`, TP 1).
            (Some(pp), Some(tp), Some(size)) => {
                return pp.checked_mul(size).and_then(|x| x.checked_add(tp))
            }
            (Some(pp), None, _) => return Some(pp),
            (Some(_), Some(_), None) => return None,
            (None, _, _) => {}
        }
        match (part("DP"), part("TP"), self.args.tp) {
            (Some(dp), Some(tp), Some(size)) => u32::try_from(size)
                .ok()
                .and_then(|s| dp.checked_mul(s))
                .and_then(|x| x.checked_add(tp)),
            (None, Some(tp), _) => Some(tp),
            // An engine core with its worker in-process (`(EngineCore_DP3 pid=…)`, TP 1): its DP rank.
            (Some(dp), None, size) => u32::try_from(size.unwrap_or(1))
                .ok()
                .and_then(|s| dp.checked_mul(s)),
            // DP and TP ranks without the TP size, or no rank word: not placed here.
            (Some(_), Some(_), None) | (None, None, _) => None,
        }
    }

    /// The figures per rank, each on its GPU, in device order. The ranks the lines' prefixes name are placed
    /// first: lines without a prefix (rank `0`: a progress bar, the engine's own) that came before them, as in
    /// a fragment that starts at `Capturing CUDA graphs`, must not push `TP0` off GPU 0; beside named ranks,
    /// such a rank without a figure of its own adds no GPU (as `ServingLedger::known_rank` keeps a later
    /// unnamed line from adding one).
    pub(super) fn ranks(&self) -> Vec<RankFigures> {
        let backend = self.backend();
        let mut pids = 0u32;
        let mut taken: Vec<u32> = Vec::new();
        let mut out: Vec<RankFigures> = Vec::new();
        let named = self.ranks.iter().any(|(l, _)| l != "0");
        let ordered = self.ranks.iter().filter(|(l, _)| l != "0").chain(
            self.ranks
                .iter()
                .filter(|(l, r)| l == "0" && (!named || r.has_figures())),
        );
        for (label, r) in ordered {
            let index = self.index_of(label, pids);
            if label.starts_with("pid") {
                pids = pids.saturating_add(1);
            }
            // A rank the rules cannot place, or two ranks on one index: the next free one.
            let mut index = index.unwrap_or(0);
            while taken.contains(&index) {
                index = index.saturating_add(1);
            }
            taken.push(index);
            let mut r = r.clone();
            r.device = Device::gpu(backend.clone(), index);
            r.lines.sort_unstable();
            out.push(r);
        }
        out.sort_by(|a, b| a.device.cmp(&b.device));
        out
    }
}

/// The GPUs of a vLLM or SGLang load: one per rank, with the total and the free memory at startup its lines
/// gave, its id the device index (how the load's devices are joined to a capture).
pub(in crate::load) fn gpus_of(figures: &ServingFigures) -> Vec<crate::model::Gpu> {
    figures
        .ranks
        .iter()
        .map(|r| crate::model::Gpu {
            id: r.device.position().unwrap_or(0).to_string(),
            library: match &r.device {
                Device::Gpu {
                    backend: Backend::Cuda,
                    ..
                } => Some("CUDA".to_string()),
                Device::Gpu {
                    backend: Backend::Rocm,
                    ..
                } => Some("ROCm".to_string()),
                _ => None,
            },
            total: r.total.map(|f| f.size),
            free: r.free_at_start.map(|f| f.size),
            line: r.lines.first().copied().unwrap_or(0),
            ..crate::model::Gpu::default()
        })
        .collect()
}
