//! CPU profiles, end to end on the real measured program: a profile
//! reaches aws-lc and OpenSSL (other implementations run, the count moves,
//! OpenSSL says it no longer holds the features), and the check that
//! proves it would catch a library that ignored the mask (it fails on the
//! default profile's own evidence).
//!
//! Needs Valgrind: without it each test says so and passes, unless
//! `REGRESS_REQUIRE_VALGRIND` is set (CI), where its absence fails.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use regress::measure::cpu_profile::CpuProfile;
use regress::{HarnessName, Measurement, Runner};
use regress_profile::cachegrind_out;
use support::Scratch;

/// The measured program cargo built for these tests.
const PROGRAM: &str = env!("CARGO_BIN_EXE_harnesses");

/// The runner of profile `cpu` in `scratch`, or `None` (with a visible
/// notice) when Valgrind is absent.
fn runner(scratch: &Scratch, cpu: CpuProfile) -> Option<Runner> {
    let valgrind = support::valgrind()?;
    let workspace = scratch.workspace().with_cpu(cpu);
    Some(Runner::new(workspace, valgrind, Duration::from_secs(600)).expect("runner"))
}

/// The `(file, function)` pairs that ran in a measurement's region.
fn functions(runner: &Runner, measurement: &Measurement) -> Vec<(String, String)> {
    let path = runner.workspace.root().join(&measurement.profile);
    let profile = cachegrind_out::read(&path).expect("the region's profile");
    profile
        .functions
        .into_iter()
        .filter(|function| function.instructions != 0)
        .map(|function| (function.file, function.function))
        .collect()
}

fn any_function(functions: &[(String, String)], part: &str) -> bool {
    functions
        .iter()
        .any(|(_, function)| function.contains(part))
}

/// aws-lc's AES-GCM under `no-aesni`: the AES-NI code no longer runs, its
/// SSSE3 vector-permute AES does, and the count moves. The default run's
/// own functions fail the `no-aesni` check: had aws-lc ignored the mask,
/// the measurement would have failed, not been recorded.
#[test]
fn no_aesni_reaches_aws_lc_and_its_check_is_not_vacuous() {
    let scratch = Scratch::new();
    let harness = &HarnessName::new("aws_lc_rs::aead_aes128gcm_seal_1024").expect("a name");
    let Some(default) = runner(&scratch, CpuProfile::Default) else {
        return;
    };
    let Some(no_aesni) = runner(&scratch, CpuProfile::NoAesni) else {
        return;
    };
    let program = Path::new(PROGRAM);
    let with = default.measure(harness, program).expect("default profile");
    let without = no_aesni
        .measure(harness, program)
        .expect("no-aesni profile");

    let ran_with = functions(&default, &with);
    assert!(any_function(&ran_with, "aes_hw_"), "{ran_with:?}");
    let caught = CpuProfile::NoAesni.check(
        ran_with.iter().map(|(f, n)| (f.as_str(), n.as_str())),
        &BTreeMap::new(),
    );
    let not = caught.expect_err("the default run's AES-NI code fails the no-aesni check");
    assert_eq!(not.library, "aws-lc");
    assert!(not.evidence.contains("aes"), "{}", not.evidence);

    let ran_without = functions(&no_aesni, &without);
    assert!(!any_function(&ran_without, "aes_hw_"), "{ran_without:?}");
    assert!(any_function(&ran_without, "vpaes_"), "{ran_without:?}");
    assert_ne!(with.instructions, without.instructions);
    assert_eq!(without.fingerprint.cpu_profile, CpuProfile::NoAesni);
    assert_eq!(with.fingerprint.cpu_profile, CpuProfile::Default);
    // Each profile's outputs have their own folder.
    assert!(
        without.profile.starts_with("perf_outputs/cpu-no-aesni"),
        "{}",
        without.profile.display()
    );
}

/// OpenSSL under `baseline`: it says it holds none of leaf 1's ECX
/// features or leaf 7's, where under the default profile it holds AES-NI
/// and AVX2 (Valgrind's CPU has both, and the mask gives both values, so
/// OpenSSL keeps leaf 7).
#[test]
fn baseline_reaches_openssl_as_openssl_reports_it() {
    let scratch = Scratch::new();
    let harness = &HarnessName::new("openssl::record_aes128gcm_1k").expect("a name");
    let Some(default) = runner(&scratch, CpuProfile::Default) else {
        return;
    };
    let Some(baseline) = runner(&scratch, CpuProfile::Baseline) else {
        return;
    };
    let program = Path::new(PROGRAM);
    let with = default.measure(harness, program).expect("default profile");
    let without = baseline
        .measure(harness, program)
        .expect("baseline profile");

    let held = with.library_cpu.get("libssl").expect("OpenSSL's CPU words");
    let (aes, avx2) = (1 << 25, 1 << 5);
    assert_ne!(held[0] & aes, 0, "{held:x?}");
    assert_ne!(held[2] & avx2, 0, "{held:x?}");
    let caught = CpuProfile::Baseline.check([], &with.library_cpu);
    assert_eq!(
        caught.expect_err("the default holds AES-NI").library,
        "libssl"
    );

    let left = without
        .library_cpu
        .get("libssl")
        .expect("OpenSSL's CPU words");
    assert_eq!([left[0], left[2], left[3]], [0, 0, 0], "{left:x?}");
    assert!(
        without.instructions > with.instructions * 5,
        "AES-GCM without AES-NI or SSSE3 costs several times more: {} against {}",
        without.instructions,
        with.instructions
    );
}
