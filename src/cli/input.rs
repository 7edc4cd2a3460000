//! The flags every analysis shares: the inputs, the grammar, the captures, the model file, the checks'
//! thresholds; and the size value parser they use.

use std::path::PathBuf;

use clap::Args as ClapArgs;

/// What every analysis reads and how it judges.
#[derive(Debug, Clone, ClapArgs)]
pub struct InputArgs {
    /// Log files to read; '-' or nothing reads standard input.
    pub files: Vec<String>,

    /// A folder of grammar files (*.toml) that add to or replace the built-in ones of the same name.
    #[arg(long, value_name = "DIR")]
    pub grammar_dir: Option<PathBuf>,

    /// An nvidia-smi or rocm-smi capture taken while the model was loaded (table, -q, -q -x, --query-gpu or
    /// --query-compute-apps CSV, rocm-smi); repeatable. Applied to the last load read.
    #[arg(long, value_name = "FILE")]
    pub smi: Vec<String>,

    /// The --query-gpu= field list of a headerless (noheader) CSV capture, e.g. index,memory.used,memory.total.
    #[arg(long, value_name = "FIELDS")]
    pub smi_fields: Option<String>,

    /// A GGUF model file whose header gives exact per-layer sizes for the replay and --max-ctx (by default the
    /// blob the log names is used when it exists on this machine: $OLLAMA_MODELS, ~/.ollama/models), or its
    /// URL (https://…, hf://ORG/REPO/FILE.gguf, ollama://NAME:TAG): only the header is fetched.
    #[arg(long, value_name = "FILE|URL")]
    pub gguf: Option<String>,

    /// Do not look for the model blob the log names on this machine (also: VRAMDIFF_NO_MODEL_SEARCH=1), so the
    /// report depends on the log alone.
    #[arg(long, conflicts_with = "gguf")]
    pub no_model_search: bool,

    /// `overestimate` fires when the estimate exceeds reality by more than this percentage … [default: the
    /// config file's `over-percent`, else 10]
    #[arg(long, value_name = "PCT", env = "VRAMDIFF_OVER_PERCENT", value_parser = clap::value_parser!(i64).range(0..))]
    pub over_percent: Option<i64>,

    /// … and by more than this size (e.g. 256MiB, 1.5GiB, or bytes) [default: the config file's `over-min`,
    /// else 256MiB]
    #[arg(long, value_name = "SIZE", env = "VRAMDIFF_OVER_MIN", value_parser = parse_size_arg)]
    pub over_min: Option<i64>,

    /// `unattributed-memory` fires when nvidia-smi shows at least this much beyond a GPU's buffers [default:
    /// the config file's `unattributed-min`, else 1GiB]
    #[arg(long, value_name = "SIZE", env = "VRAMDIFF_UNATTRIBUTED_MIN", value_parser = parse_size_arg)]
    pub unattributed_min: Option<i64>,

    #[command(flatten)]
    pub fetch: super::FetchArgs,
}

/// `512MiB`, `1.5 GiB`, `2G`, or a byte count.
pub fn parse_size_arg(text: &str) -> Result<i64, String> {
    crate::parse::values::parse_typed_size(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_users_type_them() {
        assert_eq!(parse_size_arg("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size_arg("1.5 GiB"), Ok(3 << 29));
        assert_eq!(parse_size_arg("2G"), Ok(2 << 30));
        assert_eq!(parse_size_arg("1048576"), Ok(1 << 20));
        assert!(parse_size_arg("-5").is_err());
        assert!(parse_size_arg("12 parsecs").is_err());
        assert!(parse_size_arg("1e400GiB").is_err());
        assert!(parse_size_arg("99999999999999TiB").is_err());
    }
}
