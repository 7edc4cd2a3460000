//! What every command leaves for the terminal, so that the binary alone prints: the bytes for stdout, the
//! messages for stderr and the exit code.

/// What a command leaves for the terminal.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The report, for stdout (empty for `--follow`, which writes each load as it completes).
    pub stdout: Vec<u8>,
    /// Messages for stderr, one per line (the binary prefixes them with `vramdiff: `).
    pub messages: Vec<String>,
    /// 0 ok, 1 a finding or a gate at or above the threshold, 2 an error.
    pub code: u8,
}

impl Outcome {
    /// A command that could not run at all.
    pub fn error(message: String) -> Outcome {
        Outcome {
            messages: vec![message],
            code: 2,
            ..Outcome::default()
        }
    }
}
