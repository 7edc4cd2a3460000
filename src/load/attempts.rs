//! A scheduler's attempts belong to the load that follows. Before Ollama 0.30 the llama engine's layout prints
//! `loading model`, its `gpu memory` per GPU and, when not every layer fits beside the models already loaded,
//! `model requires more gpu memory than is currently available, evicting a model to make space` with the
//! layers that fit; the scheduler then evicts a model and lays the same load out again (a second `gpu memory`
//! and `loading model`). The first layout is an [`Attempt`] of the load, not an `incomplete-load` of its own.

use crate::model::{Attempt, AttemptGpu, Eviction};

use super::builder::LoadBuilder;

impl LoadBuilder {
    /// The layout just read could not place every layer: keep it as an attempt and let the next `loading
    /// model` lay this same load out again.
    pub(super) fn make_space(&mut self, layers_fit: Option<i64>, line: u64) {
        let mut lines: Vec<u64> = self.gpu_memory.iter().map(|(_, l)| *l).collect();
        lines.extend(self.loading_model.map(|(_, _, l)| l));
        lines.push(line);
        lines.sort_unstable();
        let gpus = std::mem::take(&mut self.gpu_memory)
            .into_iter()
            .map(|(g, l)| AttemptGpu {
                id: g.id,
                library: g.library,
                available: g.available,
                free: g.free,
                line: l,
            })
            .collect();
        self.attempts.push(Attempt::Eviction(Eviction {
            layers: self.loading_model.take().and_then(|(layers, _, _)| layers),
            layers_fit,
            gpus,
            evicted: "a model".to_string(),
            line,
            lines,
        }));
    }
}

#[cfg(test)]
mod tests {
    use crate::load::loads_of;
    use crate::model::Runtime;

    #[test]
    fn an_eviction_to_make_space_is_an_attempt_of_the_load_that_follows() {
        // `sample-logs/1101-…`, lines 1–13: the layout beside another runner, the eviction, the layout again.
        let loads = loads_of(&[
            r#"time=2026-02-25T18:14:52.525+08:00 level=INFO source=server.go:431 msg="starting runner" cmd="/opt/homebrew/Cellar/ollama/0.17.0/bin/ollama runner --model /Users/my/.ollama/models/blobs/sha256-633fc5be925f9a484b61d6f9b9a78021eeb462100bd557309f01ba84cac26adf --port 55334""#,
            r#"time=2026-02-25T18:14:52.528+08:00 level=INFO source=sched.go:498 msg="gpu memory" id=0 library=Metal available="16.4 GiB" free="16.9 GiB" minimum="512.0 MiB" overhead="0 B""#,
            r#"time=2026-02-25T18:14:52.528+08:00 level=INFO source=server.go:498 msg="loading model" "model layers"=33 requested=-1"#,
            r#"time=2026-02-25T18:14:52.529+08:00 level=INFO source=server.go:1029 msg="model requires more gpu memory than is currently available, evicting a model to make space" "loaded layers"=32"#,
            r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=sched.go:498 msg="gpu memory" id=0 library=Metal available="24.5 GiB" free="25.0 GiB" minimum="512.0 MiB" overhead="0 B""#,
            r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=server.go:498 msg="loading model" "model layers"=33 requested=-1"#,
            r#"time=2026-02-25T18:14:52.585+08:00 level=INFO source=device.go:251 msg="kv cache" device=Metal size="12.0 GiB""#,
        ]);
        assert_eq!(loads.len(), 1, "{loads:#?}");
        let l = &loads[0];
        assert_eq!(l.source.first_line, 1);
        assert_ne!(l.runtime, Runtime::Unknown);
        let crate::model::Attempt::Eviction(a) = &l.attempts[0] else {
            panic!("not an eviction: {:?}", l.attempts[0]);
        };
        assert_eq!((a.layers, a.layers_fit, a.line), (Some(33), Some(32), 4));
        assert_eq!(a.lines, [2, 3, 4]);
        let gib = |q: Option<crate::model::Quantity>| q.unwrap().bytes as f64 / (1u64 << 30) as f64;
        assert!((gib(a.gpus[0].available) - 16.4).abs() < 1e-6);
        // The second layout's figures are the load's.
        assert!((gib(l.gpus[0].available) - 24.5).abs() < 1e-6);
    }
}
