//! The runner's command line: the flags that decide memory, as Ollama's runner (`ollama runner`,
//! `ollama_llama_server`) and upstream llama.cpp (`llama-server`, `llama-cli` …) spell them.
//!
//! Ollama logs the command it starts (`msg="starting llama server" cmd="…"`, `msg="starting runner"`,
//! `msg="starting llama-server"`): [`runner_command`]. llama.cpp never prints its own command line, but users
//! paste it above their log and wrappers log it (`$ ./llama-server -m … -c 8192`, `argv: llama-server …`):
//! [`shell_command`]. This module is the one place that knows those flag names, so the rest of vramdiff sees
//! settings, not argv.

use super::event::RunnerCommand;
use super::fields::Fields;
use super::values::{parse_int, parse_int_list};

/// What a flag's value means for [`RunnerCommand`].
fn apply(c: &mut RunnerCommand, flag: &str, value: Option<&str>) -> bool {
    let int = || value.and_then(parse_int);
    let text = || value.map(str::to_string);
    match flag {
        "--model" | "-m" => c.model = text(),
        // A Hugging Face repository llama.cpp downloads the model from: the model, unless `-m` names it.
        "--hf-repo" | "-hf" | "-hfr" => c.model = c.model.take().or_else(text),
        // 0 (`-c 0`) is llama.cpp's "the model's training context": no figure.
        "--ctx-size" | "-c" => c.ctx_size = int().filter(|&n| n > 0),
        "--batch-size" | "-b" => c.batch_size = int(),
        "--ubatch-size" | "-ub" => c.ubatch_size = int(),
        // -1 is llama.cpp's "auto" for both (`n_parallel is set to auto`, `--fit` places the layers).
        "--parallel" | "-np" => c.parallel = int().filter(|&n| n > 0),
        "--n-gpu-layers" | "-ngl" | "--gpu-layers" => c.gpu_layers = int().filter(|&n| n >= 0),
        "--tensor-split" | "-ts" => {
            c.tensor_split = value
                .map(|v| v.replace('/', ","))
                .and_then(|v| parse_int_list(&v))
                .unwrap_or_default()
        }
        "--mmproj" | "-mm" => c.mmproj = text(),
        "--kv-cache-type" | "--cache-type-k" | "-ctk" => c.kv_cache_type = text(),
        "--cache-type-v" | "-ctv" => c.kv_cache_type_v = text(),
        "--split-mode" | "-sm" => c.split_mode = text(),
        "--main-gpu" | "-mg" => c.main_gpu = int(),
        "--spec-type" => c.speculative = text(),
        "--model-draft" | "-md" => {
            c.speculative = c.speculative.take().or(Some("draft model".to_string()))
        }
        "--fit-target" | "-fitt" => c.fit_target = int(),
        "--flash-attn" | "-fa" => {
            // Ollama's old runners take no value; llama-server takes on/off/auto.
            return match value {
                Some("on" | "1" | "true") => {
                    c.flash_attention = Some(true);
                    true
                }
                Some("off" | "0" | "false") => {
                    c.flash_attention = Some(false);
                    true
                }
                Some("auto") => true,
                _ => {
                    c.flash_attention = Some(true);
                    false
                }
            };
        }
        _ => return false,
    }
    true
}

/// Flags without a value.
fn switch(c: &mut RunnerCommand, flag: &str) {
    match flag {
        "--ollama-engine" => c.ollama_engine = true,
        "--no-mmproj-offload" => c.projector_offload = Some(false),
        "--mmproj-offload" => c.projector_offload = Some(true),
        "--no-mmap" => c.mmap = Some(false),
        _ => {}
    }
}

/// Flags that take a value (so the next word is not a flag of its own).
const VALUED: &[&str] = &[
    "--model",
    "-m",
    "--hf-repo",
    "-hf",
    "-hfr",
    "--ctx-size",
    "-c",
    "--batch-size",
    "-b",
    "--ubatch-size",
    "-ub",
    "--parallel",
    "-np",
    "--n-gpu-layers",
    "-ngl",
    "--gpu-layers",
    "--tensor-split",
    "-ts",
    "--mmproj",
    "-mm",
    "--kv-cache-type",
    "--cache-type-k",
    "-ctk",
    "--cache-type-v",
    "-ctv",
    "--split-mode",
    "-sm",
    "--main-gpu",
    "-mg",
    "--spec-type",
    "--model-draft",
    "-md",
    "--fit-target",
    "-fitt",
];

/// Undo Go's quoting of the `cmd="…"` value (`\\` → `\`, `\"` → `"`), as the grammar captures it raw.
fn unquote(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push(' '),
                Some('t') => out.push(' '),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The memory-relevant flags of a runner command line. `fields` carries the raw `cmd` value (Go-quoted) and
/// whether its closing quote was seen: a command cut short is never taken for a model-less discovery runner.
pub fn runner_command(cmd: &str, fields: &Fields) -> RunnerCommand {
    let cmd = unquote(cmd);
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let mut c = RunnerCommand {
        llama_server: fields.get("runner") == Some("llama-server"),
        cut: fields.get("closed").is_none() && fields.get("cmd").is_some(),
        ..RunnerCommand::default()
    };
    read_flags(&mut c, &words);
    let program = words.first().copied().unwrap_or("");
    if program.contains("llama-server") {
        c.llama_server = true;
    }
    if program.contains("ollama_llama_server") || words.get(1) == Some(&"runner") {
        c.ollama_runner = true;
    }
    c.version = keg_version(program);
    c
}

/// The version of a Homebrew keg's program (`/opt/homebrew/Cellar/ollama/0.17.0/bin/ollama`): Homebrew installs
/// every formula under `Cellar/<formula>/<version>/`, so the path names the version the program is.
fn keg_version(program: &str) -> Option<String> {
    let rest = program.split("/Cellar/ollama/").nth(1)?;
    let version = rest.split('/').next()?;
    // `0.17.0`, `0.17.0_1` (a Homebrew revision): digits and dots first.
    let core = version.split('_').next()?;
    (core.split('.').count() >= 2
        && core
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
    .then(|| core.to_string())
}

/// A llama.cpp program's own command line as a shell would split it (`llama-server -m "my model.gguf" -c
/// 8192`): words split at blanks outside quotes, the quotes removed, backslashes kept (Windows paths). The
/// program is upstream llama.cpp, whichever of its tools it is, so the command counts as llama-server's.
pub fn shell_command(cmd: &str) -> RunnerCommand {
    let words = shell_words(cmd);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut c = RunnerCommand {
        llama_server: true,
        ..RunnerCommand::default()
    };
    read_flags(&mut c, &words);
    c
}

/// Words split at blanks outside single or double quotes, the quotes removed.
fn shell_words(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for ch in cmd.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(ch);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Every flag of `words` that decides memory, into `c` (`--flag value`, `--flag=value` and switches).
fn read_flags(c: &mut RunnerCommand, words: &[&str]) {
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (word, None),
        };
        if let Some(v) = inline {
            apply(c, flag, Some(v));
            i += 1;
            continue;
        }
        let next = words.get(i + 1).copied();
        if VALUED.contains(&flag) || flag == "--flash-attn" || flag == "-fa" {
            let consumed = apply(c, flag, next);
            i += if consumed { 2 } else { 1 };
        } else {
            switch(c, flag);
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_homebrew_kegs_path_names_the_version() {
        // `sample-logs/1101-…:1`.
        let c = runner_command("/opt/homebrew/Cellar/ollama/0.17.0/bin/ollama runner --model /Users/my/.ollama/models/blobs/sha256-633f --port 55334", &Fields::default());
        assert_eq!(c.version.as_deref(), Some("0.17.0"));
        assert!(c.ollama_runner);
        assert_eq!(
            keg_version("/usr/local/Cellar/ollama/0.5.7_1/bin/ollama").as_deref(),
            Some("0.5.7")
        );
        assert_eq!(keg_version("/usr/local/bin/ollama"), None);
        assert_eq!(
            keg_version("/usr/local/Cellar/ollama/HEAD-1234/bin/ollama"),
            None
        );
    }

    #[test]
    fn ollama_runner_flags() {
        // corpus 015.
        let c = runner_command("/teamspace/studios/this_studio/ollama/ollama runner --model /x/blobs/sha256-feef --ctx-size 64000 --batch-size 512 --n-gpu-layers 44 --threads 24 --flash-attn --parallel 1 --tensor-split 11,11,11,11 --port 1", &Fields::default());
        assert_eq!(c.ctx_size, Some(64000));
        assert_eq!(c.gpu_layers, Some(44));
        assert_eq!(c.flash_attention, Some(true));
        assert_eq!(c.parallel, Some(1));
        assert_eq!(c.tensor_split, vec![11, 11, 11, 11]);
        assert!(!c.ollama_engine && c.ollama_runner && !c.llama_server);
    }

    #[test]
    fn llama_server_flags_of_ollama_0_30() {
        // corpus 501 (Windows, the cmd as logfmt unquotes it).
        let c = runner_command(
            r"C:\Users\M\AppData\Local\Programs\Ollama\lib\ollama\llama-server.exe --model C:\Users\M\.ollama\models\blobs\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --port 51282 --host 127.0.0.1 --no-webui --offline -c 16384 -np 1 --log-verbosity 4 --no-log-prefix --no-log-timestamps --no-jinja --chat-template chatml --mmproj C:\Users\M\.ollama\models\blobs\sha256-280af6832eca23cb322c4dcc65edfea98a21b8f8ab07dc7553bd6f7e6e7a3313 --no-mmproj-offload --no-mmap --cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on -b 1024 -ub 1024",
            &Fields::default(),
        );
        assert!(c.llama_server && !c.ollama_runner);
        assert_eq!((c.ctx_size, c.parallel), (Some(16384), Some(1)));
        assert_eq!((c.batch_size, c.ubatch_size), (Some(1024), Some(1024)));
        assert_eq!(c.projector_offload, Some(false));
        assert_eq!(c.mmap, Some(false));
        assert_eq!(c.kv_cache_type.as_deref(), Some("q8_0"));
        assert_eq!(c.kv_cache_type_v.as_deref(), Some("q8_0"));
        assert_eq!(c.flash_attention, Some(true));
        assert!(c.mmproj.is_some() && c.model.is_some());
        assert_eq!(c.gpu_layers, None, "no -ngl: --fit may move layers");
    }

    #[test]
    fn llama_server_with_forced_layers_and_a_draft() {
        // corpus 505.
        let c = runner_command("/usr/lib/ollama/llama-server --model /root/.ollama/models/blobs/sha256-415aad607fc297a2ad84cda238febbde295f49f17c17ad7784e2246060fb06d0 --port 36103 --host 127.0.0.1 --no-webui --offline -c 65536 -np 1 --log-verbosity 4 --no-log-prefix --no-log-timestamps --no-jinja --chat-template chatml --mmproj /root/.ollama/models/blobs/sha256-c24919d9eb66eda0af3d7a62ef49bef7948389099de880e0cb5eefe2d3c31769 --spec-type draft-mtp --spec-draft-n-max 4 --spec-draft-backend-sampling --flash-attn auto -b 512 -ub 512 -ngl 999 --context-shift --keep 4", &Fields::default());
        assert_eq!(c.gpu_layers, Some(999));
        assert_eq!(c.speculative.as_deref(), Some("draft-mtp"));
        assert_eq!(c.flash_attention, None, "auto is neither on nor off");
        assert_eq!(c.projector_offload, None);
        assert_eq!(c.batch_size, Some(512));
    }

    #[test]
    fn main_gpu_and_split_mode() {
        let c = runner_command(
            "/usr/lib/ollama/llama-server --model /m --split-mode none --main-gpu 1 -c 4096",
            &Fields::default(),
        );
        assert_eq!(
            (c.split_mode.as_deref(), c.main_gpu),
            (Some("none"), Some(1))
        );
    }

    #[test]
    fn a_discovery_runner_has_no_model() {
        // Ollama >= 0.12 bootstraps discovery with a model-less runner.
        let c = runner_command(
            "/usr/local/bin/ollama runner --ollama-engine --port 39511",
            &Fields::default(),
        );
        assert!(c.is_discovery() && c.ollama_engine);
    }

    #[test]
    fn a_command_cut_before_its_model_is_not_a_discovery_runner() {
        // corpus 022's last line: the paste ends inside the model path.
        let mut fields = Fields::default();
        fields.push(
            "cmd",
            r"C:\\Users\\ksh\\ollama.exe runner --ollama-engine --model O:\\models\\blobs\\sh",
        );
        let c = runner_command(fields.get("cmd").unwrap(), &fields);
        assert_eq!(c.model.as_deref(), Some(r"O:\models\blobs\sh"));
        assert!(c.cut && !c.is_discovery());
        fields.push("closed", "\"");
        let c = runner_command("/usr/bin/ollama runner --port 1", &fields);
        assert!(!c.cut && c.is_discovery());
    }

    #[test]
    fn a_pasted_llama_server_command_as_a_shell_splits_it() {
        // corpus 706:1, the command a benchmark wrapper logged above llama-server's output.
        let c = shell_command("llama-server --host 127.0.0.1 --port 42651 --model <drive>/models/chat/qwen3.8-27b-ud-q5km.gguf --ctx-size 8192 --threads 10 --batch-size 2048 --ubatch-size 512 --jinja --reasoning-format deepseek -lv 4 --spec-type draft-mtp --spec-draft-n-max 2");
        assert!(c.llama_server && !c.ollama_runner && !c.cut);
        assert_eq!(
            c.model.as_deref(),
            Some("<drive>/models/chat/qwen3.8-27b-ud-q5km.gguf")
        );
        assert_eq!(
            (c.ctx_size, c.batch_size, c.ubatch_size),
            (Some(8192), Some(2048), Some(512))
        );
        assert_eq!(c.speculative.as_deref(), Some("draft-mtp"));
        assert_eq!(
            (c.parallel, c.gpu_layers),
            (None, None),
            "neither -np nor -ngl given"
        );
    }

    #[test]
    fn a_windows_command_keeps_its_backslashes_and_its_quoted_path() {
        // corpus 044:1 (Windows; no Go quoting to undo), then a path with a blank in quotes.
        let c = shell_command(
            r"<drive>\runtime\llama.cpp\win\llama-server.exe --host 127.0.0.1 --port 52804 --model <drive>\models\chat\qwen3.5-9b-ud-q4kxl.gguf --ctx-size 8192",
        );
        assert_eq!(
            c.model.as_deref(),
            Some(r"<drive>\models\chat\qwen3.5-9b-ud-q4kxl.gguf")
        );
        let c = shell_command(
            r#".\llama-server.exe -m "C:\My Models\gemma.gguf" -ngl 99 -c 16384 -np 1 -ctk q8_0"#,
        );
        assert_eq!(c.model.as_deref(), Some(r"C:\My Models\gemma.gguf"));
        assert_eq!(
            (c.gpu_layers, c.ctx_size, c.parallel),
            (Some(99), Some(16384), Some(1))
        );
        assert_eq!(c.kv_cache_type.as_deref(), Some("q8_0"));
    }

    #[test]
    fn llama_cpp_auto_values_state_no_figure() {
        // `-c 0` is the model's training context, `-np -1` and `-ngl -1` are llama.cpp's "auto".
        let c = shell_command("llama-server -hf ggml-org/gemma-3-1b-it-GGUF -c 0 -np -1 -ngl -1");
        assert_eq!((c.ctx_size, c.parallel, c.gpu_layers), (None, None, None));
        assert_eq!(c.model.as_deref(), Some("ggml-org/gemma-3-1b-it-GGUF"));
        // `-m` names the file even after `-hf`.
        let c = shell_command("llama-cli -hf org/repo -m /models/x.gguf");
        assert_eq!(c.model.as_deref(), Some("/models/x.gguf"));
    }
}
