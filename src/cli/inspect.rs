//! `vramdiff inspect`'s flags.

use std::path::PathBuf;

use clap::{Args as ClapArgs, ValueEnum};

use super::MannersArgs;

/// `vramdiff inspect`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Reads the header only (metadata and tensor infos), never the weights.\n\nExit status: 0 ok, 2 the file could not be read or is not a valid GGUF file."
)]
pub struct InspectArgs {
    /// The GGUF model file (an Ollama blob `sha256-…` is one).
    pub model: PathBuf,

    /// The vision projector when it is a separate file (llama-server's `--mmproj`).
    #[arg(long, value_name = "FILE")]
    pub mmproj: Option<PathBuf>,

    /// Output format (Markdown is the text in a code block).
    #[arg(long, value_enum, default_value_t = InspectFormatArg::Text)]
    pub format: InspectFormatArg,

    /// Also list every tensor (name, type, shape, offset, bytes) and every metadata value.
    #[arg(long)]
    pub tensors: bool,

    #[command(flatten)]
    pub manners: MannersArgs,
}

/// `inspect`'s output formats: a model file has no findings, so no JUnit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InspectFormatArg {
    Text,
    Json,
    Markdown,
}
