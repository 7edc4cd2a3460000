//! `vramdiff mcp` end to end, as a client drives it: newline-delimited JSON-RPC on the real binary's stdin and
//! stdout. Every tool's structured content equals the CLI's JSON for the same input (a path, pasted text, a
//! pasted nvidia-smi capture, a whatif, a model header), malformed calls are JSON-RPC errors carrying the CLI's
//! own message, and the server answers the next call after each. (CI also drives it with the official Python
//! SDK: scripts/check_mcp.py.)

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

use crate::util::{json as cli_json, root, run_in, scratch, stdout};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";
const FOUNDING_SMI: &str = "sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt";

/// A client of one server process.
struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vramdiff"))
            .arg("mcp")
            .current_dir(root())
            .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("vramdiff mcp starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut client = Client {
            child,
            input,
            output,
            next_id: 0,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "vramdiff-tests", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "vramdiff", "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    fn send_line(&mut self, line: &str) {
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
    }

    /// The response to a request (notifications the server sends meanwhile are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// A successful call's structured content, after checking its text parts: a summary, then the same JSON.
    fn structured(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.call(tool, arguments);
        let result = &response["result"];
        assert_eq!(result["isError"], json!(false), "{response}");
        let content = result["content"].as_array().expect("content");
        assert!(content[0]["text"]
            .as_str()
            .unwrap()
            .contains("structured content"));
        let again: Value = serde_json::from_str(content[1]["text"].as_str().unwrap()).unwrap();
        assert_eq!(again, result["structuredContent"]);
        result["structuredContent"].clone()
    }

    /// A call that must fail: its JSON-RPC error message.
    fn error(&mut self, tool: &str, arguments: Value) -> String {
        let response = self.call(tool, arguments);
        assert!(response.get("result").is_none(), "{response}");
        assert_eq!(response["error"]["code"], json!(-32602), "{response}");
        response["error"]["message"].as_str().unwrap().to_string()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_four_tools_are_listed_with_their_schemas() {
    let mut client = Client::start();
    let tools = client.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["analyze_log", "whatif", "inspect_model", "doctor"]);
    for tool in tools {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{tool}");
        // Every argument says what it is for.
        for (name, property) in schema["properties"].as_object().unwrap() {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| d.len() > 20),
                "{}.{name} has no description",
                tool["name"]
            );
        }
    }
}

#[test]
fn analyze_log_is_the_cli_json_for_a_path_pasted_text_and_a_pasted_capture() {
    let mut client = Client::start();
    let by_path = client.structured("analyze_log", json!({"path": FOUNDING}));
    assert_eq!(
        by_path,
        cli_json(&["--format", "json", "--fail-on", "never", FOUNDING])
    );

    // Pasted: the CLI on the same text, as pasted.log in a folder of its own, with the capture beside it.
    let log = std::fs::read_to_string(root().join(FOUNDING)).unwrap();
    let smi = std::fs::read_to_string(root().join(FOUNDING_SMI)).unwrap();
    let pasted = client.structured("analyze_log", json!({"text": log, "nvidia_smi": smi}));
    let dir = scratch("mcp-pasted");
    std::fs::write(dir.join("pasted.log"), &log).unwrap();
    std::fs::write(dir.join("gpu-capture.txt"), &smi).unwrap();
    let out = run_in(
        &dir,
        &["--format", "json", "--smi", "gpu-capture.txt", "pasted.log"],
        b"",
    );
    let cli: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(pasted, cli);
    // The capture was used: the load has what nvidia-smi observed.
    assert_ne!(pasted["loads"][0]["observed"], Value::Null);
    let _ = std::fs::remove_dir_all(dir);

    // format markdown: the text content is the CLI's Markdown report.
    let response = client.call(
        "analyze_log",
        json!({"path": FOUNDING, "format": "markdown"}),
    );
    let markdown = response["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        markdown,
        stdout(&crate::util::run(
            &["--format", "markdown", "--fail-on", "never", FOUNDING],
            b""
        ))
    );
}

#[test]
fn whatif_and_inspect_model_are_the_cli_json() {
    let mut client = Client::start();
    let replay = client.structured(
        "whatif",
        json!({"path": FOUNDING, "gpu_count": 1, "kv_type": "q8_0"}),
    );
    assert_eq!(
        replay,
        cli_json(&[
            "whatif",
            "--format",
            "json",
            "--gpu-count",
            "1",
            "--kv-type",
            "q8_0",
            FOUNDING
        ])
    );
    let max = client.structured("whatif", json!({"path": FOUNDING, "max_ctx": true}));
    assert_eq!(
        max,
        cli_json(&["whatif", "--format", "json", "--max-ctx", FOUNDING])
    );
    let model = "tests/data/oracle/b11549/models/qwen2.gguf";
    let header = client.structured("inspect_model", json!({"model": model}));
    assert_eq!(header, cli_json(&["inspect", "--format", "json", model]));
    assert_eq!(header["architecture"], "qwen2");
}

#[test]
fn doctor_reads_the_log_it_is_given_and_redacts() {
    let mut client = Client::start();
    // A llama-server log whose model path names its user's home folder.
    let log = "sample-logs/708-llama-server-cuda-rtx3090-qwen36-27b-fit-no-change-blog.log";
    let last = client.structured(
        "doctor",
        json!({"log": log, "no_ollama": true, "capture": "none"}),
    );
    assert_eq!(
        last,
        cli_json(&[
            "doctor",
            "--format",
            "json",
            "--fail-on",
            "never",
            "--capture",
            "none",
            "--no-ollama",
            log
        ])
    );
    assert_eq!(last["input"], log);
    let text = last.to_string();
    assert!(
        text.contains("/home/<user>/") && !text.contains("/home/fak"),
        "not redacted: {text}"
    );
    assert!(cli_json(&["--format", "json", log])
        .to_string()
        .contains("/home/fak"));
}

#[test]
fn malformed_calls_are_errors_with_the_cli_message_and_the_server_goes_on() {
    let mut client = Client::start();
    assert!(client
        .error("analyze_log", json!({}))
        .contains("give the log"));
    assert!(client
        .error("analyze_log", json!({"path": "a", "text": "b"}))
        .contains("not both"));
    assert!(client
        .error("analyze_log", json!({"file": FOUNDING}))
        .contains("unknown field `file`"));
    assert!(client
        .error("whatif", json!({"path": FOUNDING, "ctx": "big"}))
        .contains("invalid type"));
    assert!(client
        .error(
            "whatif",
            json!({"path": FOUNDING, "gpus": [0], "gpu_count": 1})
        )
        .contains("cannot be used with"));
    assert!(client
        .error("nonexistent", json!({}))
        .contains("no tool named"));
    // The CLI's own error for a file it cannot read, in its words.
    let missing = client.error("inspect_model", json!({"model": "no-such-model.gguf"}));
    let cli = crate::util::run(&["inspect", "no-such-model.gguf"], b"");
    assert_eq!(format!("vramdiff: {missing}\n"), crate::util::stderr(&cli));
    // Not JSON at all, then a request without params: the server still answers the next call.
    client.send_line("this is not JSON");
    client.send_line(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call"}"#);
    let after = client.structured(
        "inspect_model",
        json!({"model": "tests/data/oracle/b11549/models/gemma3.gguf"}),
    );
    assert_eq!(after["architecture"], "gemma3");
}
