//! The records tests are built from, defined once: a fingerprint, a
//! measurement, a baseline file. Unit tests, the integration tests in
//! `tests/` and other crates' tests use the same values, so a field added to
//! [`Fingerprint`] or [`Measurement`] is added here and nowhere else.
//!
//! Compiled into the library (not only under `cfg(test)`) because
//! integration tests link the library as any user does; it is small and
//! touches nothing.

use std::path::PathBuf;

use crate::harness_name::HarnessName;
use crate::judge::baseline::{BaselineEntry, BaselineFile, BASELINE_SCHEMA};
use crate::judge::Threshold;
use crate::measure::fingerprint::Fingerprint;
use crate::measure::measurement::{Measurement, MEASUREMENT_SCHEMA};
use crate::measure::valgrind::{Method, Valgrind, Version};

/// The fingerprint of this project's machine under Valgrind `valgrind`
/// (`"3.19.0"`, `"3.24.0"`), with the method that version uses.
pub fn fingerprint(valgrind: &str) -> Fingerprint {
    let method = Version::parse(valgrind).map_or(Method::Subtraction, Method::for_version);
    Fingerprint {
        valgrind: valgrind.into(),
        method,
        cpu_profile: Default::default(),
        rustc: "rustc 1.95.0".into(),
        target: "x86_64-unknown-linux-gnu".into(),
        cpu_features: vec!["aes".into(), "avx2".into()],
        libraries: [("s2n-tls".to_owned(), "0.3.47".to_owned())].into(),
        c_compilers: Some(vec!["GCC: (Debian 12.2.0-14+deb12u1) 12.2.0".into()]),
        linker: None,
    }
}

/// A checked harness name, for names a test writes itself (panics on a bad
/// one: a test's mistake).
pub fn name(harness: &str) -> HarnessName {
    HarnessName::new(harness).expect("a fixture's harness name is valid")
}

/// A record of `harness` counting `instructions` (moving `bytes` per run)
/// under Valgrind 3.19.0, one call per run.
pub fn measurement(harness: &str, instructions: u64, bytes: Option<u64>) -> Measurement {
    let harness = name(harness);
    let stem = harness.file_stem();
    Measurement {
        schema: MEASUREMENT_SCHEMA,
        harness,
        instructions,
        bytes_per_run: bytes,
        operations_per_run: 1,
        fingerprint: fingerprint("3.19.0"),
        sides: false,
        metrics: Default::default(),
        library_cpu: Default::default(),
        annotated: PathBuf::from(format!("perf_outputs/{stem}.annotated.txt")),
        profile: PathBuf::from(format!("perf_outputs/{stem}.cachegrind.out")),
    }
}

/// A baseline file of `harness` with the default threshold and one entry
/// per `(valgrind version, instructions)`.
pub fn baseline(harness: &str, entries: &[(&str, u64)]) -> BaselineFile {
    BaselineFile {
        heap_threshold: crate::judge::Threshold::heap_default(),
        schema: BASELINE_SCHEMA,
        harness: name(harness),
        threshold: Threshold::default(),
        entries: entries
            .iter()
            .map(|(valgrind, instructions)| BaselineEntry {
                metrics: Default::default(),
                fingerprint: fingerprint(valgrind),
                instructions: *instructions,
                bytes_per_run: None,
                operations_per_run: 1,
            })
            .collect(),
    }
}

/// A Valgrind description for code that only reads its version and method
/// (no program is run).
pub fn valgrind(version: &str) -> Valgrind {
    let version = Version::parse(version).unwrap_or(Version::new(3, 19, 0));
    Valgrind {
        program: PathBuf::from("/usr/bin/valgrind"),
        cg_annotate: PathBuf::from("/usr/bin/cg_annotate"),
        cg_diff: PathBuf::from("/usr/bin/cg_diff"),
        version,
        method: Method::for_version(version),
    }
}

/// Runs git in `dir` for a test's repository (a fixed author, any
/// failure fails the test) and returns its trimmed output.
#[cfg(test)]
pub(crate) fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .output()
        .expect("run git");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A repository whose `main` has one commit, of `a.txt` ("one\n").
#[cfg(test)]
pub(crate) fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join("a.txt"), "one\n").expect("write");
    git(dir.path(), &["add", "a.txt"]);
    git(dir.path(), &["commit", "-q", "-m", "one"]);
    dir
}
