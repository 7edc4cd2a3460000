//! Link the `vramdiff` binary with packed relative relocations (`-z pack-relative-relocs`, DT_RELR) on
//! Linux with glibc, for its memory at start.
//!
//! The binary is position-independent and carries about 290,000 relative relocations (every pointer in its
//! read-only data: vtables, string tables, the embedded grammar and font). As RELA entries of 24 bytes each
//! they make a 6.9 MB table that the loader reads page by page before `main`, and those pages stay in the
//! process's resident memory: a quarter of a run's peak RSS (`docs/performance.md`, "Memory at start").
//! Packed as RELR bitmaps the same relocations take 56 KB. The code and data are unchanged; only how the
//! loader is told to relocate them.
//!
//! glibc reads RELR from 2.36 and GNU ld writes it from 2.38 (lld from 15, mold too); a binary linked this way
//! names the glibc version `GLIBC_ABI_DT_RELR`, so an older glibc refuses it at start with that name. So the
//! flag is used only when a probe proves it here: a one-line program built by the same `rustc` and linker with
//! the flag, then run. Where the linker cannot write RELR, or writes it for a glibc that cannot read it (a linker
//! newer than the C library, as on Ubuntu 22.04's ld 2.38 and glibc 2.35), the probe fails and the binary links
//! as before. A cross build (host ≠ target) cannot run its probe and links without it. Setting
//! `VRAMDIFF_NO_RELR=1` when building links without it (for a binary meant for an older system).

use std::path::Path;
use std::process::Command;

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=VRAMDIFF_NO_RELR");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let opted_out = std::env::var_os("VRAMDIFF_NO_RELR").is_some_and(|v| !v.is_empty() && v != "0");
    let native = var("HOST") == var("TARGET");
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && native
        && !opted_out
        && probe_links_and_runs(Path::new(&var("OUT_DIR")))
    {
        println!("cargo:rustc-link-arg-bins={FLAG}");
    }
}

/// Builds an empty program with the flag, with the build's own `rustc` and flags, and runs it.
fn probe_links_and_runs(out_dir: &Path) -> bool {
    let source = out_dir.join("relr_probe.rs");
    let program = out_dir.join("relr_probe");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let mut build = Command::new(rustc);
    // The flags the build itself passes (a linker chosen in RUSTFLAGS, say), so the probe links as it will.
    let encoded = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    build.args(encoded.split('\x1f').filter(|f| !f.is_empty()));
    build
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .arg("-C")
        .arg(format!("link-arg={FLAG}"));
    let built = build.output().is_ok_and(|o| o.status.success());
    built
        && Command::new(&program)
            .output()
            .is_ok_and(|o| o.status.success())
}
