//! The command layer: from the parsed command line ([`crate::cli`]) to what the terminal gets. The arguments
//! are resolved once into clap-free options ([`resolve`]); each command, one file each, runs the stages with
//! them and returns an [`Outcome`] (stdout bytes, messages, exit code) for the binary to print. Only this layer
//! and `cli` know the command line; the stages below never import either.

#[cfg(feature = "batch")]
pub mod batch;
pub mod diff;
pub mod doctor;
pub mod follow;
pub mod generate;
pub mod inspect;
pub mod locate;
mod outcome;
pub mod report;
pub mod resolve;
pub mod step_summary;
pub mod whatif;

pub use crate::live::Terminal;
pub use outcome::Outcome;
use resolve::Request;

/// Run the command the arguments name. Only `--follow` writes to `terminal` as it goes (each load's report, the
/// messages of a live input); every command leaves the rest in its [`Outcome`].
pub fn run(args: &crate::cli::Args, terminal: Terminal<'_>) -> Outcome {
    match resolve::resolve(args) {
        Request::Report(r) => report::report(&r),
        Request::Follow(f) => follow::follow(&f, terminal),
        Request::Whatif(w) => whatif::whatif(&w),
        Request::Inspect(i) => inspect::inspect(&i),
        #[cfg(feature = "batch")]
        Request::Batch(b) => batch::batch(&b),
        Request::Diff(d) => diff::diff(&d),
        Request::Doctor(d) => doctor::doctor(&d),
        Request::Completions(shell) => generate::completions(shell),
        Request::Man => generate::man(),
    }
}
