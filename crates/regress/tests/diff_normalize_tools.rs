//! The diff's name normalisation, as Valgrind's own tools apply it.
//!
//! `regress diff` lines functions up twice: in its own comparison
//! (`regress::compare`) and in the `cg_annotate` text people read,
//! whose tools are given copies of the profiles with the names already
//! normalised (`Normalizer::rewrite_profile`). Perl (3.19's `cg_diff`) and
//! Python (3.22+'s tools) must then add up the costs of names that became
//! equal, so this test runs the real tools on two profiles whose names
//! differ the way two builds' do (worktree roots, registry prefixes, symbol
//! hashes) and checks they line the functions up exactly as our own
//! comparison does.
//!
//! It runs with the Valgrind of the environment, and also with the 3.24 that
//! `scripts/fetch-valgrind.sh` puts in `.tools/` when it is there.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use regress::compare::annotated_diff;
use regress::compare::function_deltas;
use regress::compare::Normalizer;
use regress::measure::valgrind::Valgrind;
use regress_profile::{annotated, cachegrind_out};

const BASE: &str = "\
cmd: ./harness calibration::spin_2m
events: Ir
fl=/work/main/target/regress-diff/base-0123456789ab/harnesses/src/calibration.rs
fn=harnesses::calibration::spin::h0123456789abcdef
0 6000000
fl=/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/s2n-tls-0.3.47/src/connection.rs
fn=s2n_tls::connection::Connection::poll_negotiate
0 100000
fl=/aws-lc/crypto/fipsmodule/bn/montgomery.c
fn=aws_lc_0_47_0_bn_mul_mont
0 50000
summary: 6150000
";

const HEAD: &str = "\
cmd: ./harness calibration::spin_2m
events: Ir
fl=/home/ci/work/target/regress-diff/head-fedcba987654/harnesses/src/calibration.rs
fn=harnesses::calibration::spin::hfedcba9876543210
0 6300000
fl=/home/ci/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/s2n-tls-0.3.47/src/connection.rs
fn=s2n_tls::connection::Connection::poll_negotiate
0 90000
fl=/aws-lc/crypto/fipsmodule/bn/montgomery.c
fn=aws_lc_0_47_0_bn_mul_mont
0 50000
summary: 6440000
";

fn skip(reason: &str) {
    if std::env::var(regress::env::REQUIRE_VALGRIND).as_deref() == Ok("1") {
        panic!("REGRESS_REQUIRE_VALGRIND=1 but {reason}");
    }
    let _ = std::io::stderr()
        .write_all(format!("diff_normalize_tools: SKIPPED ({reason})\n").as_bytes());
}

/// Every Valgrind to check: the environment's, and the fetched 3.24.
fn valgrinds() -> Vec<Valgrind> {
    let mut found = Vec::new();
    match Valgrind::from_env() {
        Ok(valgrind) => found.push(valgrind),
        Err(error) => skip(&format!("Valgrind is unavailable: {error}")),
    }
    let fetched: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/valgrind-trixie/bin/valgrind");
    if fetched.is_file() {
        if let Ok(valgrind) = Valgrind::at(&fetched) {
            if !found.iter().any(|v| v.version == valgrind.version) {
                found.push(valgrind);
            }
        }
    }
    found
}

/// The (file, function) -> delta map our own comparison computes.
fn ours() -> BTreeMap<(String, String), i64> {
    let base = cachegrind_out::parse(BASE).expect("base");
    let head = cachegrind_out::parse(HEAD).expect("head");
    function_deltas(&base, &head, &Normalizer::default())
        .into_iter()
        .map(|d| ((d.file, d.function), d.delta))
        .collect()
}

#[test]
fn cg_diff_lines_names_up_like_our_comparison() {
    let expected = ours();
    assert_eq!(
        expected,
        BTreeMap::from([
            (
                (
                    "harnesses/src/calibration.rs".to_owned(),
                    "harnesses::calibration::spin".to_owned()
                ),
                300_000
            ),
            (
                (
                    "s2n-tls/src/connection.rs".to_owned(),
                    "s2n_tls::connection::Connection::poll_negotiate".to_owned()
                ),
                -10_000
            ),
        ])
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, head) = (dir.path().join("base.out"), dir.path().join("head.out"));
    let normalizer = Normalizer::default();
    std::fs::write(&base, normalizer.rewrite_profile(BASE)).expect("write");
    std::fs::write(&head, normalizer.rewrite_profile(HEAD)).expect("write");

    for valgrind in valgrinds() {
        let output = Command::new(&valgrind.cg_diff)
            .arg(&base)
            .arg(&head)
            .output()
            .expect("run cg_diff");
        assert!(
            output.status.success(),
            "cg_diff {} refused the normalised profiles: {}",
            valgrind.version,
            String::from_utf8_lossy(&output.stderr)
        );
        let diff = cachegrind_out::parse(&String::from_utf8_lossy(&output.stdout))
            .expect("cg_diff output");
        let theirs: BTreeMap<(String, String), i64> = diff
            .functions
            .into_iter()
            .filter(|f| f.instructions != 0)
            .map(|f| ((f.file, f.function), f.instructions))
            .collect();
        assert_eq!(theirs, expected, "cg_diff of Valgrind {}", valgrind.version);
    }
}

#[test]
fn the_annotated_diff_names_the_function_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, head) = (dir.path().join("base.out"), dir.path().join("head.out"));
    std::fs::write(&base, BASE).expect("write");
    std::fs::write(&head, HEAD).expect("write");
    for valgrind in valgrinds() {
        let text = annotated_diff(&valgrind, &Normalizer::default(), &base, &head, dir.path())
            .unwrap_or_else(|error| panic!("Valgrind {}: {error}", valgrind.version));
        let annotation = annotated::parse(&text).expect("cg_annotate output");
        assert_eq!(annotation.total_instructions, 290_000, "{text}");
        let spin: Vec<_> = annotation
            .functions
            .iter()
            .filter(|f| f.function.contains("spin"))
            .collect();
        assert_eq!(spin.len(), 1, "Valgrind {}: {text}", valgrind.version);
        assert_eq!(spin[0].function, "harnesses::calibration::spin");
        assert_eq!(spin[0].file, "harnesses/src/calibration.rs");
        assert_eq!(spin[0].instructions, 300_000);
        assert!(!text.contains("regress-diff/"), "{text}");
        assert!(!text.contains("::h0123456789abcdef"), "{text}");
    }
}
