//! `vramdiff inspect`'s flags.

use clap::{Args as ClapArgs, ValueEnum};

use super::MannersArgs;

/// `vramdiff inspect`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Reads the header only (metadata and tensor infos), never the weights; from a URL, only the header's bytes are fetched (range requests), kept in a cache (--no-cache). A gated Hugging Face model needs HF_TOKEN (sent as Authorization: Bearer, to Hugging Face only).\n\nExamples:\n  vramdiff inspect ~/.ollama/models/blobs/sha256-…\n  vramdiff inspect hf://ORG/REPO/FILE.gguf\n  vramdiff inspect ollama://gemma3:12b\n\nExit status: 0 ok, 2 the file could not be read or fetched, or is not a valid GGUF file."
)]
pub struct InspectArgs {
    /// The GGUF model file (an Ollama blob `sha256-…` is one), or its URL: https://…, hf://ORG/REPO/FILE.gguf
    /// (hf://ORG/REPO@REVISION/FILE.gguf), ollama://NAME:TAG (or ollama://NAME). A split model is named by its
    /// first part.
    #[arg(value_name = "MODEL")]
    pub model: String,

    /// The vision projector when it is a separate file (llama-server's `--mmproj`), or its URL.
    #[arg(long, value_name = "FILE|URL")]
    pub mmproj: Option<String>,

    /// Output format (Markdown is the text in a code block).
    #[arg(long, value_enum, default_value_t = InspectFormatArg::Text)]
    pub format: InspectFormatArg,

    /// Also list every tensor (name, type, shape, offset, bytes) and every metadata value.
    #[arg(long)]
    pub tensors: bool,

    #[command(flatten)]
    pub fetch: super::FetchArgs,

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
