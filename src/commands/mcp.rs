//! `vramdiff mcp`: the MCP server ([`crate::mcp`]) on this process's stdin and stdout until the client closes
//! them; each call runs this same executable.

use super::Outcome;

/// `vramdiff mcp`. Nothing for stdout when it ends (the MCP channel was stdout); an error is exit 2.
pub fn mcp() -> Outcome {
    let binary = match std::env::current_exe() {
        Ok(path) => path,
        Err(e) => {
            return Outcome::error(format!("cannot find this executable to answer calls: {e}"))
        }
    };
    match crate::mcp::serve(binary) {
        Ok(()) => Outcome::default(),
        Err(e) => Outcome::error(e),
    }
}
