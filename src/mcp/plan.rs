//! What each MCP tool's arguments become: the `vramdiff` command line that answers them, as a user would type
//! it, and the pasted texts to write as files beside it. Pure (no process, no file), so the server
//! ([`super::server`]), the tests and the fuzz target all check the same thing: every call the server accepts is
//! a command line clap accepts, and every string the agent gave lands in the argument meant for it (a path after
//! `--`, a value glued to its flag with `=`), never as a flag of its own.

use std::path::{Path, PathBuf};

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

/// The file a pasted log is written to, in the call's private folder (the command's working directory, so the
/// JSON names it `pasted.log`, as the CLI does when run there on the same text).
pub const PASTED_LOG: &str = "pasted.log";
/// The file a pasted nvidia-smi or rocm-smi capture is written to, beside [`PASTED_LOG`].
pub const PASTED_CAPTURE: &str = "gpu-capture.txt";

/// The log to read: a path on this machine or the text a user pasted, one of the two.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeLog {
    /// Path of a server log on this machine: Ollama's server.log, `journalctl -u ollama` output, llama-server,
    /// vLLM or SGLang output; gzip, zstd, UTF-16 and CRLF are read as they are. Give `path` or `text`.
    #[serde(default)]
    pub path: Option<String>,
    /// The log's text as the user pasted it (any part of it that holds a model load). Give `path` or `text`.
    #[serde(default)]
    pub text: Option<String>,
    /// What `nvidia-smi` (table, -q, -q -x, --query-gpu CSV with its header) or `rocm-smi` printed while the
    /// model was loaded: compared with the last load of the log.
    #[serde(default)]
    pub nvidia_smi: Option<String>,
    /// A GGUF model file or its URL (https://…, hf://ORG/REPO/FILE.gguf, ollama://NAME:TAG) whose header gives
    /// exact per-layer sizes; only the header is fetched.
    #[serde(default)]
    pub gguf: Option<String>,
    /// The report format of the text content: `json` (default: a short summary; the full JSON report is the
    /// structured content either way), `markdown` (issue-ready report) or `text` (terminal tables).
    #[serde(default)]
    pub format: Option<ReportFormat>,
}

/// `analyze_log`'s text content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReportFormat {
    Json,
    Markdown,
    Text,
}

/// A log and the changes to replay its placement with.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Whatif {
    /// Path of the server log on this machine. Give `path` or `text`.
    #[serde(default)]
    pub path: Option<String>,
    /// The log's text as the user pasted it. Give `path` or `text`.
    #[serde(default)]
    pub text: Option<String>,
    /// Use only these GPUs: positions in the log's GPU list, as CUDA numbers them for the runner (e.g. `[0]`).
    #[serde(default)]
    pub gpus: Option<Vec<u32>>,
    /// Use only the N GPUs with the most free memory (not with `gpus`).
    #[serde(default)]
    pub gpu_count: Option<u32>,
    /// Context per slot (Ollama's num_ctx, llama.cpp's -c divided by its slots).
    #[serde(default)]
    pub ctx: Option<u64>,
    /// Parallel slots (OLLAMA_NUM_PARALLEL).
    #[serde(default)]
    pub parallel: Option<u64>,
    /// The KV cache type (OLLAMA_KV_CACHE_TYPE, llama.cpp's -ctk/-ctv): f16, q8_0 or q4_0.
    #[serde(default)]
    pub kv_type: Option<KvType>,
    /// The micro-batch (llama.cpp's -ub): compute buffers scale with it. llama.cpp on its own only; an
    /// Ollama load is refused.
    #[serde(default)]
    pub ubatch: Option<u64>,
    /// Layers on the GPUs (-ngl; Ollama's num_gpu), fixed.
    #[serde(default)]
    pub ngl: Option<u64>,
    /// Search the largest num_ctx (per slot, steps of 256) that keeps every layer on the GPUs, per KV cache
    /// type (or `kv_type`). Not with `ctx` or `ngl`.
    #[serde(default)]
    pub max_ctx: bool,
    /// A GGUF model file or URL (https://…, hf://…, ollama://…) for exact per-layer sizes, e.g. another quant
    /// of the logged model.
    #[serde(default)]
    pub gguf: Option<String>,
}

/// `kv_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum KvType {
    #[serde(rename = "f16")]
    F16,
    #[serde(rename = "q8_0")]
    Q8_0,
    #[serde(rename = "q4_0")]
    Q4_0,
}

/// A GGUF model to read the header of.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectModel {
    /// A GGUF file on this machine (an Ollama blob sha256-… is one) or its URL: https://…,
    /// hf://ORG/REPO/FILE.gguf (hf://ORG/REPO@REVISION/FILE.gguf), ollama://NAME:TAG. Only the header is
    /// read or fetched (range requests), never the weights.
    pub model: String,
    /// The vision projector when it is a separate file (llama-server's --mmproj), or its URL.
    #[serde(default)]
    pub mmproj: Option<String>,
    /// Also list every tensor and metadata value (long).
    #[serde(default)]
    pub tensors: bool,
}

/// What `doctor` looks at on this machine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Doctor {
    /// The Ollama log to read instead of looking for it ($OLLAMA_LOGS, journalctl -u ollama,
    /// ~/.ollama/logs/server.log, %LOCALAPPDATA%\Ollama, docker logs).
    #[serde(default)]
    pub log: Option<String>,
    /// The Ollama server whose /api/ps is read (default: $OLLAMA_HOST, else http://127.0.0.1:11434).
    #[serde(default)]
    pub ollama: Option<String>,
    /// Do not ask Ollama's /api/ps.
    #[serde(default)]
    pub no_ollama: bool,
    /// The GPU monitor to run now: nvidia-smi, rocm-smi or none (default: nvidia-smi, then rocm-smi).
    #[serde(default)]
    pub capture: Option<Capture>,
    /// Seconds each command doctor runs and the /api/ps request may take (default 10).
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Also give the redacted, issue-ready Markdown block (`vramdiff doctor --issue`) as the text content.
    #[serde(default)]
    pub issue: bool,
}

/// `capture`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Capture {
    #[serde(rename = "nvidia-smi")]
    NvidiaSmi,
    #[serde(rename = "rocm-smi")]
    RocmSmi,
    #[serde(rename = "none")]
    None,
}

/// The server's tools, each answered by one `vramdiff` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    AnalyzeLog,
    Whatif,
    InspectModel,
    Doctor,
}

impl Tool {
    /// Every tool, in the order `tools/list` gives them.
    pub const ALL: [Tool; 4] = [
        Tool::AnalyzeLog,
        Tool::Whatif,
        Tool::InspectModel,
        Tool::Doctor,
    ];

    /// The tool's name in `tools/call`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::AnalyzeLog => "analyze_log",
            Tool::Whatif => "whatif",
            Tool::InspectModel => "inspect_model",
            Tool::Doctor => "doctor",
        }
    }

    /// The tool a `tools/call` names.
    pub fn named(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A `tools/call`'s tool and arguments (absent arguments are an empty object), planned: the tool's JSON
/// arguments decoded against its schema, then turned into its command lines. `Err`: the message for the
/// agent (serde's or clap's own words).
pub fn call(
    name: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<(Tool, Plan), String> {
    let tool = Tool::named(name).ok_or_else(|| {
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
        format!("no tool named '{name}' (the tools: {})", names.join(", "))
    })?;
    let arguments = serde_json::Value::Object(arguments.unwrap_or_default());
    let decode = |e: serde_json::Error| format!("{}'s arguments: {e}", tool.name());
    let plan = match tool {
        Tool::AnalyzeLog => analyze_log(&serde_json::from_value(arguments).map_err(decode)?),
        Tool::Whatif => whatif(&serde_json::from_value(arguments).map_err(decode)?),
        Tool::InspectModel => inspect_model(&serde_json::from_value(arguments).map_err(decode)?),
        Tool::Doctor => doctor(&serde_json::from_value(arguments).map_err(decode)?),
    }?;
    Ok((tool, plan))
}

/// A run of `vramdiff` that answers a call: its arguments (without the program name) and the pasted texts to
/// write, by file name, into a private folder that becomes its working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub args: Vec<String>,
    pub pasted: Vec<(&'static str, String)>,
}

/// What a call asks: the JSON run (the structured content), and the run whose stdout is the text content when
/// it is not a summary of the JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub json: Invocation,
    pub text: Option<Invocation>,
}

/// The command line flags, values and paths being gathered, with the pasted texts.
#[derive(Default)]
struct Line {
    flags: Vec<String>,
    pasted: Vec<(&'static str, String)>,
}

impl Line {
    fn flag(&mut self, flag: &str) {
        self.flags.push(flag.to_string());
    }

    /// `--flag=value`: glued, so a value starting with `-` stays a value.
    fn value(&mut self, flag: &str, value: impl std::fmt::Display) {
        self.flags.push(format!("{flag}={value}"));
    }

    fn pasted(&mut self, name: &'static str, text: &str) {
        self.pasted.push((name, text.to_string()));
    }

    /// The invocation: the flags, then `--` and the paths (never read as flags).
    fn with_paths(self, paths: Vec<String>) -> Invocation {
        let mut args = self.flags;
        if !paths.is_empty() {
            args.push("--".to_string());
            args.extend(paths);
        }
        Invocation {
            args,
            pasted: self.pasted,
        }
    }
}

/// The log of `path` or `text`: the path to give the command (absolute when the command runs in the private
/// folder, where a relative path would name another file), or the pasted file.
fn log_path(
    path: &Option<String>,
    text: &Option<String>,
    line: &mut Line,
    private_folder: bool,
) -> Result<String, String> {
    match (path, text) {
        (Some(_), Some(_)) => Err("give the log as `path` or as `text`, not both".to_string()),
        (None, None) => {
            Err("give the log: `path` (a file on this machine) or `text` (its content)".to_string())
        }
        (None, Some(text)) => {
            line.pasted(PASTED_LOG, text);
            Ok(PASTED_LOG.to_string())
        }
        (Some(path), None) if path.is_empty() => Err("`path` is empty".to_string()),
        (Some(path), None) if private_folder => Ok(absolute(path)),
        (Some(path), None) => Ok(path.clone()),
    }
}

/// `path` from the server's working directory, for a command run in another.
fn absolute(path: &str) -> String {
    std::path::absolute(Path::new(path))
        .unwrap_or_else(|_| PathBuf::from(path))
        .display()
        .to_string()
}

/// `path` as given unless the command runs in the private folder: then absolute (a URL is kept).
fn model_path(model: &str, private_folder: bool) -> String {
    if private_folder && !model.contains("://") {
        absolute(model)
    } else {
        model.to_string()
    }
}

/// `analyze_log`: `vramdiff --format json --fail-on never [--smi gpu-capture.txt] -- LOG`, and with
/// `format` markdown or text the same in that format.
pub fn analyze_log(call: &AnalyzeLog) -> Result<Plan, String> {
    let private_folder = call.text.is_some() || call.nvidia_smi.is_some();
    let in_format = |format: &str| -> Result<Invocation, String> {
        let mut line = Line::default();
        line.value("--format", format);
        line.value("--fail-on", "never");
        if let Some(capture) = &call.nvidia_smi {
            line.pasted(PASTED_CAPTURE, capture);
            line.value("--smi", PASTED_CAPTURE);
        }
        if let Some(gguf) = &call.gguf {
            line.value("--gguf", model_path(gguf, private_folder));
        }
        let log = log_path(&call.path, &call.text, &mut line, private_folder)?;
        Ok(line.with_paths(vec![log]))
    };
    let text = match call.format.unwrap_or(ReportFormat::Json) {
        ReportFormat::Json => None,
        ReportFormat::Markdown => Some(in_format("markdown")?),
        ReportFormat::Text => Some(in_format("text")?),
    };
    checked(Plan {
        json: in_format("json")?,
        text,
    })
}

/// `whatif`: `vramdiff whatif --format json CHANGES… -- LOG`.
pub fn whatif(call: &Whatif) -> Result<Plan, String> {
    let private_folder = call.text.is_some();
    let mut line = Line::default();
    line.flag("whatif");
    line.value("--format", "json");
    if let Some(gpus) = &call.gpus {
        if gpus.is_empty() {
            return Err("`gpus` is empty: name at least one GPU, or leave it out".to_string());
        }
        let list: Vec<String> = gpus.iter().map(u32::to_string).collect();
        line.value("--gpus", list.join(","));
    }
    if let Some(n) = call.gpu_count {
        line.value("--gpu-count", n);
    }
    if let Some(n) = call.ctx {
        line.value("--ctx", n);
    }
    if let Some(n) = call.parallel {
        line.value("--parallel", n);
    }
    if let Some(kv) = call.kv_type {
        line.value(
            "--kv-type",
            match kv {
                KvType::F16 => "f16",
                KvType::Q8_0 => "q8_0",
                KvType::Q4_0 => "q4_0",
            },
        );
    }
    if let Some(n) = call.ubatch {
        line.value("--ubatch", n);
    }
    if let Some(n) = call.ngl {
        line.value("--ngl", n);
    }
    if call.max_ctx {
        line.flag("--max-ctx");
    }
    if let Some(gguf) = &call.gguf {
        line.value("--gguf", model_path(gguf, private_folder));
    }
    let log = log_path(&call.path, &call.text, &mut line, private_folder)?;
    checked(Plan {
        json: line.with_paths(vec![log]),
        text: None,
    })
}

/// `inspect_model`: `vramdiff inspect --format json [--mmproj=…] [--tensors] -- MODEL`.
pub fn inspect_model(call: &InspectModel) -> Result<Plan, String> {
    if call.model.is_empty() {
        return Err("`model` is empty: give a GGUF path or URL".to_string());
    }
    let mut line = Line::default();
    line.flag("inspect");
    line.value("--format", "json");
    if let Some(mmproj) = &call.mmproj {
        line.value("--mmproj", mmproj);
    }
    if call.tensors {
        line.flag("--tensors");
    }
    checked(Plan {
        json: line.with_paths(vec![call.model.clone()]),
        text: None,
    })
}

/// `doctor`: `vramdiff doctor --format json [--capture=…] [--ollama=…|--no-ollama] [--timeout=…] [-- LOG]`, and
/// with `issue` the same with `--issue`.
pub fn doctor(call: &Doctor) -> Result<Plan, String> {
    let in_format = |issue: bool| {
        let mut line = Line::default();
        line.flag("doctor");
        if issue {
            line.flag("--issue");
        } else {
            line.value("--format", "json");
        }
        line.value("--fail-on", "never");
        if let Some(capture) = call.capture {
            line.value(
                "--capture",
                match capture {
                    Capture::NvidiaSmi => "nvidia-smi",
                    Capture::RocmSmi => "rocm-smi",
                    Capture::None => "none",
                },
            );
        }
        if let Some(url) = &call.ollama {
            line.value("--ollama", url);
        }
        if call.no_ollama {
            line.flag("--no-ollama");
        }
        if let Some(seconds) = call.timeout_seconds {
            line.value("--timeout", seconds);
        }
        line.with_paths(call.log.iter().cloned().collect())
    };
    checked(Plan {
        json: in_format(false),
        text: call.issue.then(|| in_format(true)),
    })
}

/// The plan, once clap has accepted each of its command lines; else clap's own message (as the CLI prints
/// it, without the usage lines that name flags the agent does not see).
fn checked(plan: Plan) -> Result<Plan, String> {
    for invocation in std::iter::once(&plan.json).chain(&plan.text) {
        let argv = std::iter::once("vramdiff").chain(invocation.args.iter().map(String::as_str));
        if let Err(e) = <crate::cli::Args as clap::Parser>::try_parse_from(argv) {
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            return Err(first.to_string());
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyze(json: serde_json::Value) -> Result<Plan, String> {
        analyze_log(&serde_json::from_value(json).unwrap())
    }

    #[test]
    fn a_call_names_a_tool_and_its_arguments_match_its_schema() {
        let args = |v: serde_json::Value| v.as_object().cloned();
        let (tool, _) = call(
            "inspect_model",
            args(serde_json::json!({"model": "m.gguf"})),
        )
        .unwrap();
        assert_eq!(tool, Tool::InspectModel);
        assert!(call("rm", None).unwrap_err().contains("no tool named 'rm'"));
        assert!(call("inspect_model", None)
            .unwrap_err()
            .contains("missing field `model`"));
        let wrong = call(
            "whatif",
            args(serde_json::json!({"path": "l", "ctx": "big"})),
        );
        assert!(wrong
            .unwrap_err()
            .starts_with("whatif's arguments: invalid type"));
        // doctor needs nothing: every argument has a default.
        assert_eq!(
            call("doctor", None).unwrap().1.json.args,
            ["doctor", "--format=json", "--fail-on=never"]
        );
    }

    #[test]
    fn a_path_is_the_cli_command_line_a_user_types() {
        let plan = analyze(serde_json::json!({"path": "sample-logs/x.log"})).unwrap();
        assert_eq!(
            plan.json.args,
            [
                "--format=json",
                "--fail-on=never",
                "--",
                "sample-logs/x.log"
            ]
        );
        assert!(plan.json.pasted.is_empty());
        assert_eq!(plan.text, None);
    }

    #[test]
    fn pasted_text_and_capture_are_files_in_the_private_folder() {
        let plan = analyze(
            serde_json::json!({"text": "a log", "nvidia_smi": "a table", "format": "markdown"}),
        )
        .unwrap();
        assert_eq!(
            plan.json.args,
            [
                "--format=json",
                "--fail-on=never",
                "--smi=gpu-capture.txt",
                "--",
                "pasted.log"
            ]
        );
        assert_eq!(
            plan.json.pasted,
            [
                ("gpu-capture.txt", "a table".to_string()),
                ("pasted.log", "a log".to_string())
            ]
        );
        assert_eq!(plan.text.unwrap().args[0], "--format=markdown");
    }

    #[test]
    fn a_relative_path_beside_a_pasted_capture_is_made_absolute() {
        let plan = analyze(serde_json::json!({"path": "x.log", "nvidia_smi": "t"})).unwrap();
        let log = plan.json.args.last().unwrap();
        assert!(Path::new(log).is_absolute(), "{log}");
        assert!(log.ends_with("x.log"));
    }

    #[test]
    fn a_log_given_twice_or_not_at_all_is_refused() {
        assert!(analyze(serde_json::json!({"path": "a", "text": "b"}))
            .unwrap_err()
            .contains("not both"));
        assert!(analyze(serde_json::json!({}))
            .unwrap_err()
            .contains("give the log"));
        assert!(serde_json::from_value::<AnalyzeLog>(serde_json::json!({"file": "a"})).is_err());
    }

    #[test]
    fn strings_that_look_like_flags_stay_paths_and_values() {
        let plan = analyze(serde_json::json!({"path": "--chart=/etc", "gguf": "--help"})).unwrap();
        assert_eq!(
            plan.json.args,
            [
                "--format=json",
                "--fail-on=never",
                "--gguf=--help",
                "--",
                "--chart=/etc"
            ]
        );
        let plan = inspect_model(&InspectModel {
            model: "-h".into(),
            mmproj: Some("--version".into()),
            tensors: false,
        })
        .unwrap();
        assert_eq!(
            plan.json.args,
            ["inspect", "--format=json", "--mmproj=--version", "--", "-h"]
        );
    }

    #[test]
    fn whatif_changes_become_its_flags_and_clap_judges_them() {
        let call: Whatif = serde_json::from_value(serde_json::json!({
            "path": "l.log", "gpus": [0, 1], "ctx": 8192, "kv_type": "q8_0", "parallel": 2
        }))
        .unwrap();
        assert_eq!(
            whatif(&call).unwrap().json.args,
            [
                "whatif",
                "--format=json",
                "--gpus=0,1",
                "--ctx=8192",
                "--parallel=2",
                "--kv-type=q8_0",
                "--",
                "l.log"
            ]
        );
        // clap's own conflicts and ranges, in its words.
        let both: Whatif =
            serde_json::from_value(serde_json::json!({"path": "l", "gpus": [0], "gpu_count": 1}))
                .unwrap();
        assert!(
            whatif(&both).unwrap_err().contains("cannot be used with"),
            "{:?}",
            whatif(&both)
        );
        let zero: Whatif =
            serde_json::from_value(serde_json::json!({"path": "l", "ubatch": 0})).unwrap();
        assert!(
            whatif(&zero).unwrap_err().contains("--ubatch"),
            "{:?}",
            whatif(&zero)
        );
        let max: Whatif =
            serde_json::from_value(serde_json::json!({"path": "l", "max_ctx": true, "ctx": 4096}))
                .unwrap();
        assert!(whatif(&max).is_err());
        assert!(serde_json::from_value::<Whatif>(
            serde_json::json!({"path": "l", "kv_type": "q5"})
        )
        .is_err());
    }

    #[test]
    fn doctor_asks_json_and_the_issue_block_when_wanted() {
        let call: Doctor = serde_json::from_value(serde_json::json!({
            "no_ollama": true, "capture": "none", "issue": true, "log": "server.log"
        }))
        .unwrap();
        let plan = doctor(&call).unwrap();
        assert_eq!(
            plan.json.args,
            [
                "doctor",
                "--format=json",
                "--fail-on=never",
                "--capture=none",
                "--no-ollama",
                "--",
                "server.log"
            ]
        );
        assert_eq!(plan.text.unwrap().args[1], "--issue");
        let bad: Doctor =
            serde_json::from_value(serde_json::json!({"timeout_seconds": -1.0})).unwrap();
        assert!(
            doctor(&bad).unwrap_err().contains("seconds"),
            "{:?}",
            doctor(&bad)
        );
    }
}
