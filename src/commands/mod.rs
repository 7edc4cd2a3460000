//! The command layer: from the parsed command line ([`crate::cli`]) to what the terminal gets. The arguments
//! are resolved once into clap-free options ([`resolve`]); each command, one file each, runs the stages with
//! them and returns an [`Outcome`] (stdout bytes, messages, exit code) for the binary to print. Only this layer
//! and `cli` know the command line; the stages below never import either.

#[cfg(feature = "batch")]
pub mod batch;
pub mod config;
pub mod diff;
pub mod doctor;
pub mod follow;
pub mod generate;
pub mod inspect;
pub mod locate;
#[cfg(feature = "mcp")]
pub mod mcp;
mod outcome;
pub mod remote;
pub mod report;
pub mod resolve;
pub mod step_summary;
pub mod whatif;

pub use crate::live::Terminal;
pub use outcome::Outcome;
use resolve::{Manners, Request, Resolved};

/// Run the command the arguments name. `--follow` writes to `terminal` as it goes (each load's report, the
/// messages of a live input), and the report writes each load's part to its stdout as it completes when its
/// format allows (painted there with `paint`); every command leaves the rest in its [`Outcome`], which gets the command's
/// manners here, the same for every command: the text report painted with `--color`, and with `-q` no notes
/// unless the command failed (exit 2).
pub fn run(args: &crate::cli::Args, terminal: Terminal<'_>) -> Outcome {
    let Resolved {
        mut request,
        manners,
    } = match resolve::resolve(args) {
        Ok(r) => r,
        Err(e) => return Outcome::error(e),
    };
    let fetched = match remote::prepare(&mut request) {
        Ok(note) => note,
        Err(e) => return Outcome::error(e),
    };
    let paint = manners.color && request.writes_text();
    let mut outcome = match request {
        Request::Report(r) => report::report(&r, terminal.stdout, paint),
        Request::Follow(f) => {
            let Terminal { stdout, message } = terminal;
            let mut quiet = |m: String| {
                if !manners.quiet {
                    message(m)
                }
            };
            let terminal = Terminal {
                stdout,
                message: &mut quiet,
            };
            follow::follow(&f, terminal)
        }
        Request::Whatif(w) => whatif::whatif(&w),
        Request::Inspect(i) => inspect::inspect(&i),
        #[cfg(feature = "batch")]
        Request::Batch(b) => batch::batch(&b, manners),
        Request::Diff(d) => diff::diff(&d),
        Request::Doctor(d) => doctor::doctor(&d),
        Request::Completions(shell) => generate::completions(shell),
        Request::Man => generate::man(),
        #[cfg(feature = "mcp")]
        Request::Mcp => mcp::mcp(),
    };
    outcome.messages.splice(0..0, fetched);
    behave(&mut outcome, manners, paint);
    outcome
}

/// The manners applied to what a command left: its text report painted (`paint`), its notes dropped with `-q`
/// unless it failed.
fn behave(outcome: &mut Outcome, manners: Manners, paint: bool) {
    if paint {
        outcome.stdout =
            crate::report::color::paint(&String::from_utf8_lossy(&outcome.stdout)).into_bytes();
    }
    if manners.quiet && outcome.code != 2 {
        outcome.messages.clear();
    }
}
