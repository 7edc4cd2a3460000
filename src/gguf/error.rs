//! What can be wrong with a GGUF file, and where: every error names the file and the byte offset at which the
//! reader found the problem, so that a hostile or truncated header is explained, never a panic.

use std::fmt;

/// A GGUF file that could not be read: which file, at which byte, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufError {
    /// The file as named on the command line.
    pub path: String,
    /// Byte offset in the file where the problem was found (0 when the file could not be opened).
    pub offset: u64,
    pub kind: GgufErrorKind,
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at byte {}: {}", self.path, self.offset, self.kind)
    }
}

impl std::error::Error for GgufError {}

/// Why a GGUF header was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgufErrorKind {
    #[error("cannot read the file: {0}")]
    Io(String),
    #[error("not a GGUF file: it starts with {0:?}, not \"GGUF\"")]
    BadMagic(String),
    #[error("GGUF version {0} is not supported (versions 2 and 3 are; a byte-swapped version means a big-endian file)")]
    UnsupportedVersion(u32),
    #[error("the file ends inside {what}: {needed} bytes needed, {remaining} left")]
    Truncated {
        what: &'static str,
        needed: u64,
        remaining: u64,
    },
    #[error("{what} of {count} cannot fit in the {remaining} bytes left in the file")]
    CountPastEnd {
        what: &'static str,
        count: u64,
        remaining: u64,
    },
    #[error("{what} of {count} is beyond the reader's limit of {limit}")]
    TooLarge {
        what: &'static str,
        count: u64,
        limit: u64,
    },
    #[error("arrays nested more than {0} deep")]
    NestingTooDeep(usize),
    #[error("unknown metadata value type {0}")]
    UnknownValueType(u32),
    #[error("metadata key {key:?}: {problem}")]
    BadMetadata { key: String, problem: String },
    #[error("tensor {name:?}: {problem}")]
    BadTensor { name: String, problem: String },
}
