//! Tells the rustls harnesses which rustls version they are built against.
//!
//! `Cargo.lock` holds two rustls versions (0.23, and 0.24 for the feature
//! `rustls-0-24`), so the lock alone does not say which one a build
//! measured. The rustls harnesses report `REGRESS_RUSTLS_VERSION` through
//! `Harness::runtime_libraries`, which the measurement fingerprint records
//! over the lock's list, so a baseline of one generation never judges the
//! other's counts.

use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let lock = Path::new(&manifest).join("..").join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed=build.rs");
    let generation = if std::env::var_os("CARGO_FEATURE_RUSTLS_0_24").is_some() {
        "0.24."
    } else {
        "0.23."
    };
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let version = match locked_version(&text, "rustls", generation) {
        Some(version) => version,
        None => {
            println!(
                "cargo:warning=no rustls {generation}x in {}: the rustls harnesses report \
                 their version as \"unknown\"",
                lock.display()
            );
            "unknown".to_owned()
        }
    };
    println!("cargo:rustc-env=REGRESS_RUSTLS_VERSION={version}");
}

/// The version of the `[[package]]` named `name` whose version starts with
/// `prefix`, from the text of a `Cargo.lock`.
fn locked_version(lock: &str, name: &str, prefix: &str) -> Option<String> {
    let mut current = None;
    for line in lock.lines().map(str::trim) {
        if line == "[[package]]" {
            current = None;
        } else if let Some(value) = line.strip_prefix("name = ") {
            current = Some(value.trim_matches('"'));
        } else if let Some(value) = line.strip_prefix("version = ") {
            let value = value.trim_matches('"');
            if current == Some(name) && value.starts_with(prefix) {
                return Some(value.to_owned());
            }
        }
    }
    None
}
