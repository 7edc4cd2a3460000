//! Which engine ran a load (Ollama's own or llama.cpp), from the signs the log gives, and the Ollama version
//! those signs lean on. Who placed the layers is [`super::runtime`]'s.

use crate::model::{Engine, OffloadShape};

use super::builder::LoadBuilder;

impl LoadBuilder {
    /// The engine, from the strongest sign the log gives: `--ollama-engine` or the Ollama engine's own lines;
    /// then llama-server, `ollama_llama_server`, `ollama runner --model` without `--ollama-engine`, Ollama's
    /// projector decision for llama-server, llama.cpp buffer lines, a line only llama.cpp's programs print
    /// (`docs/log-formats.md` §0.1), a `llama_model_loader` dump (which the server's vocab-only load prints
    /// too), an estimate line of Ollama ≤ 0.5.11 (before its own engine); last, a line only Ollama's own engine
    /// prints (§0.1).
    pub(super) fn engine(&self) -> Engine {
        let cmd = self.command().map(|(c, _)| c);
        if cmd.is_some_and(|c| c.ollama_engine) || self.ollama_engine_hint {
            Engine::Ollama
        } else if self.llama_engine_hint
            || cmd.is_some_and(|c| c.llama_server || c.ollama_runner)
            // llama.cpp's own programs: a failure line only they print, or a line only llama-server prints.
            || self.llama_cpp_tool
            || self.signs.iter().any(|s| s.engine == Engine::Llama)
            // Ollama decides the projector's offload only for llama-server (0.30 and later).
            || self.projector_offload_disabled.is_some()
            || (self.runner.is_some() && !self.ledger.is_empty())
            || self.model_loader_seen
            // An estimate line of a shape Ollama printed only before its own engine existed (E1–E6, up to
            // 0.5.11; `--ollama-engine` came with 0.5.12's `msg=offload library=…`, `docs/log-formats.md` §0):
            // every load of those releases ran the llama engine.
            || self.estimator.estimate().is_some_and(|(e, _)| {
                match e.form {
                    OffloadShape::E1 | OffloadShape::E2 | OffloadShape::E3 | OffloadShape::E4E6 => true,
                    // 0.5.12 and later, either engine; a rule that names no shape says nothing.
                    OffloadShape::E7E8 | OffloadShape::Eviction | OffloadShape::Unnamed => false,
                }
            })
        {
            Engine::Llama
        } else if self.signs.iter().any(|s| s.engine == Engine::Ollama) {
            Engine::Ollama
        } else {
            Engine::Unknown
        }
    }
}

/// `0.9.6`, `0.12.3-rc1`, `0.5.4-0-g2ddc32d-dirty` → (0, 9, 6).
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let core = text.trim_start_matches('v').split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

#[cfg(test)]
mod tests {
    use super::parse_version;
    use crate::load::loads_of;
    use crate::model::Engine;

    #[test]
    fn an_estimate_of_ollama_before_its_own_engine_names_the_llama_engine() {
        // `sample-logs/005-macos-metal-qwen2-7b-estimate-only.log:1` (`offload to metal`, E4–E6: ≤ 0.5.11).
        let loads = loads_of(&[
            r#"time=2024-08-14T16:27:00.222+08:00 level=INFO source=memory.go:309 msg="offload to metal" layers.requested=-1 layers.model=29 layers.offload=29 layers.split="" memory.available="[21.3 GiB]" memory.required.full="5.4 GiB" memory.required.partial="5.4 GiB" memory.required.kv="448.0 MiB" memory.required.allocations="[5.4 GiB]" memory.weights.total="3.9 GiB" memory.weights.repeating="3.4 GiB" memory.weights.nonrepeating="426.4 MiB" memory.graph.full="478.0 MiB" memory.graph.partial="478.0 MiB""#,
        ]);
        assert_eq!(loads[0].engine, Engine::Llama);
        // `sample-logs/014-multigpu-2x-split37-0-projector-estimate.log:2` (`msg=offload library=…`, E7:
        // 0.5.12–0.11.4, when `--ollama-engine` existed): either engine, so the line alone names none.
        let loads = loads_of(&[
            r#"time=2025-05-23T17:16:43.377Z level=INFO source=server.go:168 msg=offload library=cuda layers.requested=49 layers.model=49 layers.offload=37 layers.split=37,0 memory.available="[11.5 GiB 4.6 GiB]" memory.gpu_overhead="0 B" memory.required.full="14.9 GiB" memory.required.partial="11.4 GiB" memory.required.kv="2.0 GiB" memory.required.allocations="[11.4 GiB 0 B]" memory.weights.total="7.5 GiB" memory.weights.repeating="5.6 GiB" memory.weights.nonrepeating="1.9 GiB" memory.graph.full="1.3 GiB" memory.graph.partial="1.3 GiB" projector.weights="806.2 MiB" projector.graph="1.0 GiB""#,
        ]);
        assert_eq!(loads[0].engine, Engine::Unknown);
    }

    #[test]
    fn versions_read_with_their_suffixes() {
        assert_eq!(parse_version("0.9.6"), Some((0, 9, 6)));
        assert_eq!(parse_version("0.12.3-rc1"), Some((0, 12, 3)));
        assert_eq!(parse_version("0.5.4-0-g2ddc32d-dirty"), Some((0, 5, 4)));
        assert_eq!(parse_version("v0.30"), Some((0, 30, 0)));
        assert_eq!(parse_version("dev"), None);
    }
}
