//! The event of a line only one runtime prints (`docs/log-formats.md` §0.1, the rules
//! `grammar::signatures` builds from its table): which runtime, and which engine when the line tells.

use super::event::{EventKind, RuntimeSign, SignedRuntime};
use super::kind::{EventSpec, Words};
use crate::model::Engine;

const RUNTIMES: &[&str] = &["llama-server", "ollama", "ollama-llama-server"];
const ENGINES: &[&str] = &["llama", "ollama", "unknown"];

pub const SPECS: &[EventSpec] = &[EventSpec {
    kind: "runtime_sign",
    required: &["runtime", "engine"],
    optional: &[],
    settable: &[
        ("runtime", Words::List(RUNTIMES)),
        ("engine", Words::List(ENGINES)),
    ],
    build: |f| {
        let runtime = match f.need("runtime")? {
            "llama-server" => SignedRuntime::LlamaServer,
            "ollama" => SignedRuntime::Ollama,
            "ollama-llama-server" => SignedRuntime::OllamaLlamaServer,
            other => return Err(format!("unknown runtime '{other}'")),
        };
        let engine = match f.need("engine")? {
            "llama" => Engine::Llama,
            "ollama" => Engine::Ollama,
            "unknown" => Engine::Unknown,
            other => return Err(format!("unknown engine '{other}'")),
        };
        Ok(EventKind::RuntimeSign(RuntimeSign { runtime, engine }))
    },
}];
