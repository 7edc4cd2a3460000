//! `vramdiff mcp`: a Model Context Protocol server over stdio, for the coding agents people debug their
//! setup with (configurations: `docs/guide/mcp.md`). Built on the official Rust SDK, rmcp (feature `mcp`).
//! Each tool is the CLI command that answers it ([`plan`]), run as a process of its own ([`invoke`]), so its
//! result is byte for byte the versioned JSON contract the CLI prints, and nothing a log does to the analysis
//! can end the server ([`server`]). [`summary`] writes the few lines an agent reads first.

pub mod invoke;
pub mod plan;
pub mod server;
pub mod summary;

use std::path::PathBuf;

use rmcp::ServiceExt;

/// Serve MCP on stdin/stdout until the client closes them, running `binary` for each call. `Err`: the channel
/// failed (what to say on stderr).
pub fn serve(binary: PathBuf) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the MCP server: {e}"))?;
    runtime.block_on(async move {
        let service = server::Server::new(binary)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("MCP initialization failed: {e}"))?;
        service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP server stopped: {e}"))
    })
}
