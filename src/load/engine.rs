//! Which engine ran a load (Ollama's own or llama.cpp) and which era placed its layers (Ollama's estimator or
//! llama.cpp's `--fit`), from the signs the log gives, and the Ollama version those signs lean on.

use crate::model::{Engine, Era};

use super::builder::LoadBuilder;

impl LoadBuilder {
    /// The engine, from the strongest sign the log gives: `--ollama-engine` or the Ollama engine's own lines;
    /// then llama-server, `ollama_llama_server`, `ollama runner --model` without `--ollama-engine`, llama.cpp
    /// buffer lines; last, a `llama_model_loader` dump (which the server's vocab-only load prints too).
    pub(super) fn engine(&self) -> Engine {
        let cmd = self.runner.as_ref().map(|(c, _)| c);
        if cmd.is_some_and(|c| c.ollama_engine) || self.ollama_engine_hint {
            Engine::Ollama
        } else if self.llama_engine_hint
            || cmd.is_some_and(|c| c.llama_server || c.ollama_runner)
            || (self.runner.is_some() && !self.ledger.is_empty())
            || self.model_loader_seen
        {
            Engine::Llama
        } else {
            Engine::Unknown
        }
    }

    /// Who placed the layers: llama.cpp's `--fit` (llama-server, Ollama ≥ 0.30) or Ollama's estimator.
    pub(super) fn era(&self) -> Era {
        let version = self.version.as_deref().and_then(parse_version);
        let cmd = self.runner.as_ref().map(|(c, _)| c);
        if cmd.is_some_and(|c| c.llama_server)
            || self.model_path.is_some()
            || !self.fit.is_empty()
            || version.is_some_and(|v| v >= (0, 30, 0))
        {
            Era::LlamaServer
        } else if self.estimate.is_some()
            || !self.load_requests.is_empty()
            || !self.summary_estimate.is_empty()
            || version.is_some()
            || cmd.is_some_and(|c| c.ollama_runner)
            || self.loading_model.is_some()
        {
            Era::Ollama
        } else {
            Era::Unknown
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
    use crate::model::{Engine, Era};

    #[test]
    fn versions_read_with_their_suffixes() {
        assert_eq!(parse_version("0.9.6"), Some((0, 9, 6)));
        assert_eq!(parse_version("0.12.3-rc1"), Some((0, 12, 3)));
        assert_eq!(parse_version("0.5.4-0-g2ddc32d-dirty"), Some((0, 5, 4)));
        assert_eq!(parse_version("v0.30"), Some((0, 30, 0)));
        assert_eq!(parse_version("dev"), None);
    }

    #[test]
    fn the_runner_command_names_engine_and_era() {
        // `sample-logs/004-windows-rocm-780m-gemma3-27b-newengine.log:12`: `runner --ollama-engine`.
        let loads = loads_of(&[
            r#"time=2025-07-24T18:29:07.517+09:00 level=INFO source=server.go:438 msg="starting llama server" cmd="C:\\Users\\araki\\AppData\\Local\\Programs\\Ollama\\ollama.exe runner --ollama-engine --model C:\\Users\\araki\\.ollama\\models\\blobs\\sha256-e796792eba26c4d3b04b0ac5adb01a453dd9ec2dfd83b6c59cbf6fe5f30b0f68 --ctx-size 8192 --batch-size 512 --n-gpu-layers 63 --threads 8 --parallel 2 --port 49262""#,
        ]);
        assert_eq!(
            (loads[0].engine, loads[0].era),
            (Engine::Ollama, Era::Ollama)
        );
        // `sample-logs/002-runpod-rtx4090-llama31-8b-lora.log:23`: `ollama_llama_server runner`.
        let loads = loads_of(&[
            r#"time=2025-12-01T20:28:54.084Z level=INFO source=server.go:376 msg="starting llama server" cmd="/usr/lib/ollama/runners/cuda_v12_avx/ollama_llama_server runner --model /runpod-volume/blobs/sha256-667b0c1932bc6ffc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29 --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 --lora /runpod-volume/blobs/sha256-27152a06f8a83c9b950a1c0e85c9cfc1ef8e52c9da9e1df6cd0dfa38184819c8 --threads 24 --parallel 4 --port 46753""#,
        ]);
        assert_eq!(
            (loads[0].engine, loads[0].era),
            (Engine::Llama, Era::Ollama)
        );
        // `sample-logs/501-…-start-excerpt.log:1`: `starting llama-server` (Ollama 0.30+).
        let loads = loads_of(&[
            r#"time=2026-06-07T18:12:00.136+07:00 level=INFO source=llama_server.go:403 msg="starting llama-server" cmd="C:\\Users\\M\\AppData\\Local\\Programs\\Ollama\\lib\\ollama\\llama-server.exe --model C:\\Users\\M\\.ollama\\models\\blobs\\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --port 51282 --host 127.0.0.1 --no-webui --offline -c 16384 -np 1 --log-verbosity 4 --no-log-prefix --no-log-timestamps --no-jinja --chat-template chatml --mmproj C:\\Users\\M\\.ollama\\models\\blobs\\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --no-mmproj-offload --no-mmap --cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on -b 1024 -ub 1024""#,
        ]);
        assert_eq!(
            (loads[0].engine, loads[0].era),
            (Engine::Llama, Era::LlamaServer)
        );
    }
}
