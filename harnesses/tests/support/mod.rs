//! What the end-to-end test binaries share: a workspace of their own and
//! the Valgrind they need. Each binary uses part of it.
#![allow(dead_code)]

use std::path::Path;

use regress::harness_test::notice;
use regress::measure::valgrind::Valgrind;
use regress::workspace::Workspace;

/// A workspace of its own in a temporary folder, with the real Cargo.lock
/// (the fingerprint reads library versions from it) and an empty
/// `baselines/`, so that a test never touches the project's
/// `perf_outputs/` or `baselines/`.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = Workspace::find_from(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("workspace");
        std::fs::copy(real.cargo_lock(), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
        std::fs::create_dir(dir.path().join("baselines")).expect("mkdir baselines");
        Scratch { dir }
    }

    pub fn workspace(&self) -> Workspace {
        Workspace::new(self.dir.path())
    }
}

/// The Valgrind of the environment, or `None` with a visible notice when it
/// is absent; with `REGRESS_REQUIRE_VALGRIND` set (CI), its absence fails
/// the test instead.
pub fn valgrind() -> Option<Valgrind> {
    match Valgrind::from_env() {
        Ok(valgrind) => Some(valgrind),
        Err(error) => {
            if std::env::var_os(regress::env::REQUIRE_VALGRIND).is_some() {
                panic!("REGRESS_REQUIRE_VALGRIND is set but Valgrind is unusable: {error}");
            }
            notice(&format!("SKIPPED (Valgrind unavailable): {error}"));
            None
        }
    }
}

/// Runs `tests` (name, body) as one libtest binary's tests, with the
/// command line's filters and options; a body fails by panicking.
pub fn run_tests(tests: &[(&'static str, fn())]) -> std::process::ExitCode {
    let trials = tests
        .iter()
        .map(|&(name, test)| {
            libtest_mimic::Trial::test(name, move || {
                test();
                Ok(())
            })
        })
        .collect();
    libtest_mimic::run(&libtest_mimic::Arguments::from_args(), trials).exit_code()
}
