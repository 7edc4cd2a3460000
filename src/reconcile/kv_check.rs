//! The KV cache computed from the model's layout (the log's hyperparameters, or the GGUF file) at the load's
//! context, slots, micro-batch and cache types, set against the KV lines the same log printed: each cache's
//! summary (`llama_kv_cache: size = … (N cells, L layers, …)`) and the KV buffers summed over devices. It exists
//! to prove the sizing rules of [`crate::model::kv_geometry`] on real logs before the replay and `--max-ctx`
//! lean on them.

use crate::model::kv_geometry::{kv_geometry_of, kv_sizes, CacheSize, KvSizes};
use crate::model::{human, BufferKind, Load};

/// One logged KV figure beside the computed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvLineCheck {
    /// `full`, `window`, `recurrent` (a cache's summary line) or `buffers` (the KV buffer lines' sum).
    pub what: &'static str,
    pub line: u64,
    /// What the log printed, as printed (bytes; a 2-decimal MiB figure is exact for every real cache).
    pub logged: i64,
    pub computed: i64,
    /// Cells and layers the summary line printed and the computation gives (`None` for buffer sums).
    pub logged_shape: Option<(i64, i64)>,
    pub computed_shape: Option<(u64, u64)>,
    /// The width of the printed figure's rounding (the sum's, for several buffer lines).
    pub rounding: i64,
}

impl KvLineCheck {
    /// Bytes and, where printed, cells and layers agree to the byte (within the printed rounding).
    pub fn agrees(&self, tolerance: i64) -> bool {
        (self.logged - self.computed).abs() <= tolerance
            && match (self.logged_shape, self.computed_shape) {
                (Some((c, l)), Some((cc, cl))) => c as u64 == cc && l as u64 == cl,
                _ => true,
            }
    }
}

/// The computed caches and each logged KV figure of `load` beside its computed value; `None` when the load has
/// no layout or lacks the settings the sizing needs.
pub fn check(load: &Load) -> Option<(KvSizes, Vec<KvLineCheck>)> {
    let layout = load.model.layout.as_ref()?;
    let geometry = kv_geometry_of(&load.settings)?;
    let sizes = kv_sizes(layout, &geometry);
    let mut checks = Vec::new();
    let shape = |c: &CacheSize| Some((c.cells, c.layers));
    for cache in &load.actual.kv_caches {
        let (what, computed) = if cache.recurrent {
            ("recurrent", sizes.recurrent)
        } else if cache.cells.is_some_and(|c| c as u64 == sizes.full.cells)
            || sizes.window.is_none()
        {
            ("full", Some(sizes.full))
        } else {
            ("window", sizes.window)
        };
        checks.push(KvLineCheck {
            what,
            line: cache.line,
            logged: cache.size.bytes,
            computed: computed.map_or(0, |c| c.bytes() as i64),
            logged_shape: cache.cells.zip(cache.layers),
            computed_shape: computed.as_ref().and_then(shape),
            rounding: cache.size.spread(),
        });
    }
    let buffers: Vec<_> = load
        .actual
        .buffers
        .iter()
        .filter(|b| b.kind == BufferKind::Kv && !b.projector)
        .collect();
    if let Some(first) = buffers.first() {
        let recurrent = sizes.recurrent.map_or(0, |c| c.bytes());
        checks.push(KvLineCheck {
            what: "buffers",
            line: first.line,
            logged: buffers.iter().map(|b| b.size.bytes).sum(),
            computed: (sizes.total() - recurrent) as i64,
            logged_shape: None,
            computed_shape: None,
            rounding: buffers.iter().map(|b| b.size.spread()).sum(),
        });
    }
    Some((sizes, checks))
}

/// A note per logged KV figure the computation does not reproduce (beyond the printed rounding): the settings
/// or hyperparameters were misread, or llama.cpp sized the cache by a rule vramdiff does not know. The replay
/// and `--max-ctx` lean on the computed KV, so the reader should know. Nothing when everything agrees.
pub fn disagreements(load: &Load) -> Vec<String> {
    let Some((_, checks)) = check(load) else {
        return Vec::new();
    };
    checks
        .iter()
        .filter(|c| !c.agrees(c.rounding))
        .map(|c| {
            format!(
                "KV computed from the model's layout ({} cache): {} where line {} prints {}{}",
                c.what,
                human(c.computed),
                c.line,
                human(c.logged),
                match (c.logged_shape, c.computed_shape) {
                    (Some((lc, ll)), Some((cc, cl))) if (lc as u64, ll as u64) != (cc, cl) =>
                        format!(" ({lc} cells × {ll} layers printed, {cc} × {cl} computed)"),
                    _ => String::new(),
                }
            )
        })
        .collect()
}
