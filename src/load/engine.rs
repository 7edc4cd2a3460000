//! Which engine ran a load (Ollama's own or llama.cpp), from the signs the log gives, and the Ollama version
//! those signs lean on. Who placed the layers is [`super::runtime`]'s.

use crate::model::Engine;

use super::builder::LoadBuilder;

impl LoadBuilder {
    /// The engine, from the strongest sign the log gives: `--ollama-engine` or the Ollama engine's own lines;
    /// then llama-server, `ollama_llama_server`, `ollama runner --model` without `--ollama-engine`, Ollama's
    /// projector decision for llama-server, llama.cpp buffer lines, a line only llama.cpp's programs print
    /// (`docs/log-formats.md` §0.1); last, a `llama_model_loader` dump (which the server's vocab-only load prints
    /// too).
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

    #[test]
    fn versions_read_with_their_suffixes() {
        assert_eq!(parse_version("0.9.6"), Some((0, 9, 6)));
        assert_eq!(parse_version("0.12.3-rc1"), Some((0, 12, 3)));
        assert_eq!(parse_version("0.5.4-0-g2ddc32d-dirty"), Some((0, 5, 4)));
        assert_eq!(parse_version("v0.30"), Some((0, 30, 0)));
        assert_eq!(parse_version("dev"), None);
    }
}
