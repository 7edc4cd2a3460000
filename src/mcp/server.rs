//! The MCP server's request handling: `tools/list` gives the four tools with their input schemas (from
//! [`super::plan`]'s argument types, whose doc comments are the descriptions an agent reads), `tools/call` plans
//! the call ([`super::plan::call`]), runs `vramdiff` for it ([`super::invoke`]) and answers with the command's
//! JSON report as structured content, a short summary (or the asked text report) as text, and the JSON again as
//! text for clients that read no structured content. A call that cannot be answered is a JSON-RPC error with the
//! CLI's own message; the server goes on answering.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::invoke::{run, Ran};
use super::plan::{self, Invocation, Tool};
use super::summary::summary;

/// The server: the `vramdiff` binary it runs for each call.
#[derive(Debug, Clone)]
pub struct Server {
    binary: Arc<PathBuf>,
}

impl Server {
    /// A server whose calls run `binary` (the server's own executable; in tests, the built one).
    pub fn new(binary: PathBuf) -> Server {
        Server {
            binary: Arc::new(binary),
        }
    }
}

/// Each tool as `tools/list` gives it.
pub fn tools() -> Vec<rmcp::model::Tool> {
    Tool::ALL
        .into_iter()
        .map(|tool| {
            let (description, schema, read_only) = match tool {
                Tool::AnalyzeLog => (
                    "Read an LLM server log (Ollama, llama.cpp's llama-server, vLLM, SGLang) and reconcile the \
                     GPU memory each model load was estimated to need with what it really allocated, per \
                     component and per GPU; findings (needless split, layers on CPU with VRAM free, over- or \
                     underestimate, out of memory…) name the figures, the log lines and the knob to change. \
                     Give the log as a path on this machine or as pasted text; add nvidia-smi output if the user \
                     has it. The structured content is `vramdiff --format json` (schema_version 1).",
                    schema_for_type::<plan::AnalyzeLog>(),
                    true,
                ),
                Tool::Whatif => (
                    "Replay a logged load's GPU placement with changes: other GPUs (gpus, gpu_count), context \
                     (ctx, parallel), KV cache type, micro-batch, layers on GPU; or search the largest context \
                     that keeps every layer on the GPUs (max_ctx). Answers \"would it fit on one GPU?\" and \
                     \"how much context can I have?\" from the log's own figures. The structured content is \
                     `vramdiff whatif --format json`.",
                    schema_for_type::<plan::Whatif>(),
                    true,
                ),
                Tool::InspectModel => (
                    "What a GGUF model needs before it is downloaded or loaded: weights per layer (experts \
                     apart), output, projector, KV cache bytes per token, trained context. From a local file or \
                     a URL (https://, hf://ORG/REPO/FILE.gguf, ollama://NAME:TAG): only the header is fetched. \
                     The structured content is `vramdiff inspect --format json`.",
                    schema_for_type::<plan::InspectModel>(),
                    true,
                ),
                Tool::Doctor => (
                    "Diagnose this machine's Ollama: find its log (journald, ~/.ollama/logs, docker, \
                     $OLLAMA_LOGS), take its last model load, look at the GPUs (nvidia-smi/rocm-smi) and \
                     Ollama's /api/ps now, and report that load. Host names, user names, IP addresses and \
                     tokens are redacted. The structured content is `vramdiff doctor --format json`.",
                    schema_for_type::<plan::Doctor>(),
                    true,
                ),
            };
            let mut listed = rmcp::model::Tool::new(tool.name(), description, schema);
            listed.annotations = Some(ToolAnnotations::from_raw(
                None,
                Some(read_only),
                Some(false),
                Some(true),
                // inspect_model may fetch a URL, doctor asks the local Ollama and runs its tools.
                Some(matches!(tool, Tool::InspectModel | Tool::Doctor)),
            ));
            listed
        })
        .collect()
}

/// One `tools/call`, answered; blocking (it runs the command), so the server runs it off its event loop.
pub fn answer(
    binary: &std::path::Path,
    name: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> Result<CallToolResult, ErrorData> {
    let (tool, plan) =
        plan::call(name, arguments).map_err(|m| ErrorData::invalid_params(m, None))?;
    let (json, notes) = json_of(binary, &plan.json)?;
    let text = match &plan.text {
        Some(invocation) => {
            String::from_utf8_lossy(&succeeded(binary, invocation)?.stdout).into_owned()
        }
        None => summary(tool, &json, &notes),
    };
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(text),
        ContentBlock::text(json.to_string()),
    ]);
    result.structured_content = Some(json);
    Ok(result)
}

/// The command's JSON output and its notes.
fn json_of(
    binary: &std::path::Path,
    invocation: &Invocation,
) -> Result<(Value, Vec<String>), ErrorData> {
    let ran = succeeded(binary, invocation)?;
    let json = serde_json::from_slice(&ran.stdout).map_err(|e| {
        ErrorData::internal_error(format!("vramdiff printed no JSON report ({e})"), None)
    })?;
    Ok((json, ran.messages))
}

/// The command run; exit 0 or 1 (a finding at the threshold: the tools ask `--fail-on never`, so never) is an
/// answer, exit 2 the CLI's error messages, a signal an internal error.
fn succeeded(binary: &std::path::Path, invocation: &Invocation) -> Result<Ran, ErrorData> {
    let ran = run(binary, invocation).map_err(|m| ErrorData::internal_error(m, None))?;
    match ran.code {
        Some(0 | 1) => Ok(ran),
        Some(code) => Err(ErrorData::invalid_params(
            if ran.messages.is_empty() {
                format!("vramdiff exited with status {code}")
            } else {
                ran.messages.join("\n")
            },
            Some(serde_json::json!({ "exit_code": code, "messages": ran.messages })),
        )),
        None => Err(ErrorData::internal_error(
            format!(
                "vramdiff was stopped by a signal while answering{}",
                ran.messages
                    .last()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
            None,
        )),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("vramdiff", env!("CARGO_PKG_VERSION"))
                    .with_title("vramdiff: GPU memory of LLM servers, estimated against allocated"),
            )
            .with_instructions(
                "vramdiff reads Ollama, llama.cpp, vLLM and SGLang logs and says where GPU memory went: \
                 analyze_log for a log (path or pasted text), whatif to replay it with other GPUs, context or KV \
                 type, inspect_model for a GGUF file or URL before loading it, doctor for this machine's Ollama.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let binary = Arc::clone(&self.binary);
        let name: Cow<'static, str> = request.name;
        let arguments = request.arguments;
        tokio::task::spawn_blocking(move || answer(&binary, &name, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the call stopped: {e}"), None))?
            .map(CallToolResponse::from)
    }
}
