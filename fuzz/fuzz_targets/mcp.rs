//! The MCP server's request handling (`src/mcp/`): arbitrary bytes as one JSON-RPC message from a client,
//! decoded by rmcp's own message types as the stdio transport decodes each line, and every `tools/call` in it
//! planned by the server ([`vramdiff::mcp::plan::call`]: the tool's arguments against its schema, then clap).
//! Arbitrary bytes also go straight in as a call's arguments, so the planning sees every shape of object.
//! Invariants: no panic; a call the server accepts is a command line clap accepts whose every path comes after
//! `--`, and whose pasted texts are the ones given, under their fixed names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use vramdiff::mcp::plan::{self, Invocation, Tool, PASTED_CAPTURE, PASTED_LOG};

fn check(name: &str, arguments: Option<serde_json::Map<String, serde_json::Value>>) {
    let given = arguments.clone();
    let Ok((tool, planned)) = plan::call(name, arguments) else {
        return;
    };
    assert_eq!(tool.name(), name);
    for invocation in std::iter::once(&planned.json).chain(&planned.text) {
        checked(tool, invocation, given.as_ref());
    }
}

fn checked(tool: Tool, invocation: &Invocation, given: Option<&serde_json::Map<String, serde_json::Value>>) {
    let argv = std::iter::once("vramdiff").chain(invocation.args.iter().map(String::as_str));
    assert!(
        <vramdiff::cli::Args as clap::Parser>::try_parse_from(argv).is_ok(),
        "{:?}",
        invocation.args
    );
    // Before `--`: the subcommand and `--flag` or `--flag=value` only.
    let split = invocation.args.iter().position(|a| a == "--");
    let flags = &invocation.args[..split.unwrap_or(invocation.args.len())];
    for (i, arg) in flags.iter().enumerate() {
        assert!(arg.starts_with("--") || i == 0, "{:?}", invocation.args);
    }
    let text = |key: &str| given.and_then(|g| g.get(key)).and_then(|v| v.as_str());
    for (name, pasted) in &invocation.pasted {
        match *name {
            PASTED_LOG => assert_eq!(Some(pasted.as_str()), text("text")),
            PASTED_CAPTURE => assert_eq!(Some(pasted.as_str()), text("nvidia_smi")),
            other => panic!("{tool:?} pastes into {other}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(data) {
        if let JsonRpcMessage::Request(request) = message {
            if let ClientRequest::CallToolRequest(call) = request.request {
                check(&call.params.name, call.params.arguments);
            }
        }
    }
    // The first byte picks the tool; the rest, when it is a JSON object, is its arguments.
    if let Some((&pick, rest)) = data.split_first() {
        let tool = Tool::ALL[usize::from(pick) % Tool::ALL.len()];
        if let Ok(serde_json::Value::Object(arguments)) = serde_json::from_slice(rest) {
            check(tool.name(), Some(arguments));
        }
    }
});
