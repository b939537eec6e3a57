//! The measured program's loaded image does not depend on where the
//! repository was cloned.
//!
//! A path in a loaded section is data the process carries: its length moves
//! every constant after it, and with their alignment the counts of the
//! routines that copy and compare them. OpenSSL, built from source, used to
//! compile its install prefix (under `target/`) into `.rodata`, so a clone
//! at a path of another length counted differently from the checkout the
//! baselines were blessed in (CI saw five OpenSSL harnesses outside their
//! thresholds). `scripts/openssl-configure` keeps those strings fixed; this
//! test fails if any loaded section of the program names the checkout.

use std::path::{Path, PathBuf};

fn checkout() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

#[test]
fn no_loaded_section_names_the_checkout() {
    let program = Path::new(env!("CARGO_BIN_EXE_harnesses"));
    let root = checkout();
    let needle = root.to_string_lossy().into_owned();
    let sections = regress::toolchain::loaded_sections_naming(program, needle.as_bytes())
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        sections.is_empty(),
        "{} carries the checkout's path {needle} in its loaded sections {sections:?}: its \
         layout, and so its counts, would differ in a clone elsewhere. Find the string \
         (`readelf -p .rodata {}`) and keep it out of the build.",
        program.display(),
        program.display(),
    );
}

/// OpenSSL's build date is the fixed one of `.cargo/config.toml`
/// (`SOURCE_DATE_EPOCH`), not the day of the build: the date is a string in
/// `.rodata`, and the linker orders merged strings by content, so another
/// date moved OpenSSL's constants and its counts (config_build by about
/// 1,500 instructions between two builds of one commit). Only OpenSSL
/// built from source: the system's library is not in the program's image.
#[cfg(feature = "vendored-openssl")]
#[test]
fn openssl_carries_the_fixed_build_date() {
    let program = Path::new(env!("CARGO_BIN_EXE_harnesses"));
    let fixed = b"built on: Thu Jan  1 00:00:00 2026 UTC";
    let sections = regress::toolchain::loaded_sections_naming(program, fixed)
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        sections.iter().any(|name| name == ".rodata"),
        "{} does not carry OpenSSL's fixed build date in .rodata (found in {sections:?}): was          it built without `.cargo/config.toml`'s SOURCE_DATE_EPOCH? `cargo clean -p          openssl-sys` rebuilds OpenSSL with it.",
        program.display(),
    );
}

/// The check itself finds a string that is in a loaded section (s2n-tls's
/// error names are in `.rodata`), and never reports `.comment`, which is not
/// loaded.
#[test]
fn the_check_finds_what_a_loaded_section_holds() {
    let program = Path::new(env!("CARGO_BIN_EXE_harnesses"));
    let found = regress::toolchain::loaded_sections_naming(program, b"S2N_ERR_CRL_EXPIRED")
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        found.iter().any(|name| name == ".rodata"),
        "an s2n-tls error name must be found in .rodata, found in {found:?}"
    );
    let comment = regress::toolchain::loaded_sections_naming(program, b"rustc version")
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        comment.is_empty(),
        ".comment is not loaded, yet found in {comment:?}"
    );
}
