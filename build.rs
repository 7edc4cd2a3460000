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
//! names the glibc version `GLIBC_ABI_DT_RELR`, so an older glibc refuses it at start with that name. Setting
//! `VRAMDIFF_NO_RELR=1` when building links without it (for a binary meant for an older system).

fn main() {
    println!("cargo:rerun-if-env-changed=VRAMDIFF_NO_RELR");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let opted_out = std::env::var_os("VRAMDIFF_NO_RELR").is_some_and(|v| !v.is_empty() && v != "0");
    if os == "linux" && env == "gnu" && !opted_out {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
