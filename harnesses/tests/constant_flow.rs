//! The constant-flow check as a test.
//!
//! - `every_operation_works_natively`: each constant-flow operation's
//!   variants run natively and pass their checks (always).
//! - `a_planted_early_exit_tag_comparison_is_caught`: this binary is the
//!   measured program of two fixture copies of a small encrypt-then-MAC
//!   AEAD open (AES-128-CTR and HMAC-SHA256 with aws-lc-rs), one comparing
//!   tags with an early-exit loop, the other in constant time. Under
//!   Valgrind, the check must fail on the first, naming the early-exit
//!   function, and pass the second. Runs whenever Valgrind is usable.
//! - `the_constant_flow_check_passes`: with `ENABLE_VALGRIND=true`, the
//!   whole check over the measured program (`regress constant-flow`, with
//!   the committed allowlist) must find nothing.
//!
//! Without Valgrind the measured parts are skipped with a visible reason,
//! unless `REGRESS_REQUIRE_VALGRIND=1` makes that a failure.

mod support;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use aws_lc_rs::cipher::{
    DecryptingKey, DecryptionContext, EncryptingKey, EncryptionContext, UnboundCipherKey, AES_128,
};
use aws_lc_rs::hmac;
use aws_lc_rs::iv::FixedLength;
use harnesses::constant_flow::{self, Tamper};
use regress::constant_flow::{check, select, Allowlist, Request};
use regress::harness_test::notice;
use regress::report::events::Silent;
use regress::workspace::Workspace;
use regress::Runner;
use regress_measure::program::{self, Entry};
use regress_measure::{Harness, HarnessError};

harnesses::embed_library_versions!();

/// How a fixture copy compares tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    EarlyExit,
    ConstantTime,
}

/// The fixture operations: each copy of the open, under every tamper.
fn fixtures() -> Vec<Entry> {
    let mut entries = Vec::new();
    for (operation, compare) in [
        ("leaky_etm_open", Compare::EarlyExit),
        ("constant_time_etm_open", Compare::ConstantTime),
    ] {
        for tamper in Tamper::ALL {
            entries.push(Entry::new(
                constant_flow::name("fixture", operation, tamper.group(), tamper.name()),
                EtmOpen { compare, tamper },
            ));
        }
    }
    entries
}

fn main() -> ExitCode {
    program::serve(&fixtures());
    let tests: [(&'static str, fn()); 3] = [
        (
            "every_operation_works_natively",
            every_operation_works_natively,
        ),
        (
            "a_planted_early_exit_tag_comparison_is_caught",
            a_planted_early_exit_tag_comparison_is_caught,
        ),
        (
            "the_constant_flow_check_passes",
            the_constant_flow_check_passes,
        ),
    ];
    support::run_tests(&tests)
}

/// Bytes of the HMAC-SHA256 tag.
const TAG_LEN: usize = 32;
/// Bytes of plaintext.
const MESSAGE_LEN: usize = 64;
/// Opens per run, as the real AEAD operations do.
const OPENS: usize = constant_flow::OPENS_PER_RUN;
const ENC_KEY: [u8; 16] = [7; 16];
const MAC_KEY: [u8; 32] = [9; 32];
const IV: [u8; 16] = [3; 16];

/// Encrypt-then-MAC open: HMAC-SHA256 over the ciphertext, compared with
/// the received tag, and only when they are equal AES-128-CTR decryption.
struct EtmOpen {
    compare: Compare,
    tamper: Tamper,
}

struct EtmSetup {
    mac_key: hmac::Key,
    decrypting: DecryptingKey,
    sealed: Vec<u8>,
}

/// The leaky comparison: returns at the first differing byte, so a tag
/// wrong in its first byte is rejected sooner than one wrong in its last.
/// `black_box` keeps the compiler from turning the loop into `bcmp`.
#[inline(never)]
fn tags_equal_early_exit(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    for i in 0..a.len() {
        if std::hint::black_box(a[i]) != std::hint::black_box(b[i]) {
            return false;
        }
    }
    true
}

/// The constant-time comparison aws-lc-rs offers.
#[inline(never)]
fn tags_equal_constant_time(a: &[u8], b: &[u8]) -> bool {
    aws_lc_rs::constant_time::verify_slices_are_equal(a, b).is_ok()
}

impl EtmOpen {
    /// Opens one `ciphertext || tag` in place; `true` when the tag verified.
    #[inline(never)]
    fn open(&self, setup: &EtmSetup, message: &mut [u8]) -> bool {
        let (ciphertext, tag) = message.split_at_mut(MESSAGE_LEN);
        let expected = hmac::sign(&setup.mac_key, ciphertext);
        let equal = match self.compare {
            Compare::EarlyExit => tags_equal_early_exit(expected.as_ref(), tag),
            Compare::ConstantTime => tags_equal_constant_time(expected.as_ref(), tag),
        };
        if !equal {
            return false;
        }
        setup
            .decrypting
            .decrypt(ciphertext, DecryptionContext::Iv128(FixedLength::from(IV)))
            .is_ok()
    }
}

impl Harness for EtmOpen {
    type Setup = EtmSetup;
    type Input = Vec<u8>;
    type Output = usize;

    fn operations_per_run(&self) -> u64 {
        OPENS as u64
    }

    fn setup(&self) -> Result<EtmSetup, HarnessError> {
        let encrypting = EncryptingKey::ctr(UnboundCipherKey::new(&AES_128, &ENC_KEY)?)?;
        let mut sealed = vec![0x5a; MESSAGE_LEN];
        encrypting
            .less_safe_encrypt(&mut sealed, EncryptionContext::Iv128(FixedLength::from(IV)))?;
        let mac_key = hmac::Key::new(hmac::HMAC_SHA256, &MAC_KEY);
        let tag = hmac::sign(&mac_key, &sealed);
        sealed.extend_from_slice(tag.as_ref());
        self.tamper.apply(&mut sealed, TAG_LEN);
        Ok(EtmSetup {
            mac_key,
            decrypting: DecryptingKey::ctr(UnboundCipherKey::new(&AES_128, &ENC_KEY)?)?,
            sealed,
        })
    }

    fn prepare(&self, setup: &EtmSetup) -> Result<Vec<u8>, HarnessError> {
        Ok(setup.sealed.repeat(OPENS))
    }

    fn run(&self, setup: &EtmSetup, mut messages: Vec<u8>) -> Result<usize, HarnessError> {
        Ok(messages
            .chunks_exact_mut(MESSAGE_LEN + TAG_LEN)
            .map(|message| usize::from(self.open(setup, message)))
            .sum())
    }

    fn check(&self, _: &EtmSetup, opened: &usize) -> Result<(), HarnessError> {
        let expected = if self.tamper == Tamper::None {
            OPENS
        } else {
            0
        };
        if *opened == expected {
            Ok(())
        } else {
            Err(format!("{opened} opens succeeded, expected {expected}").into())
        }
    }
}

/// The runner, or `None` with a visible notice when Valgrind is unusable.
fn runner(workspace: Workspace) -> Option<Runner> {
    let valgrind = support::valgrind()?;
    Some(Runner::new(workspace, valgrind, Duration::from_secs(600)).expect("runner"))
}

fn every_operation_works_natively() {
    for entry in constant_flow::entries().iter().chain(&fixtures()) {
        entry
            .harness
            .run_natively()
            .unwrap_or_else(|error| panic!("{} does not work natively: {error}", entry.name));
    }
}

fn a_planted_early_exit_tag_comparison_is_caught() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let Some(runner) = runner(Workspace::new(scratch.path())) else {
        return;
    };
    let binary = std::env::current_exe().expect("current exe");
    let names: Vec<String> = fixtures().into_iter().map(|entry| entry.name).collect();
    let run = |operation: &str| {
        let variants = select(&names, Some(operation)).expect("fixture variants");
        check(&Request {
            runner: &runner,
            binary: &binary,
            variants: &variants,
            runs: 1,
            allowlist: &Allowlist::default(),
            all_operations: false,
            workers: regress::parallel::workers(None),
            listener: &Silent,
        })
        .expect("the check runs")
    };

    let leaky = run("fixture::leaky_etm_open");
    let within: Vec<_> = leaky.operations[0]
        .comparisons
        .iter()
        .filter(|comparison| comparison.groups[0] == comparison.groups[1])
        .collect();
    assert_eq!(within.len(), 1, "tag_first_byte vs tag_last_byte");
    let named: Vec<&str> = within[0]
        .findings()
        .map(|difference| difference.diff.function.as_str())
        .collect();
    assert!(
        named
            .iter()
            .any(|function| function.contains("tags_equal_early_exit")),
        "the finding must name the early-exit comparison; it named {named:?}\n{}",
        leaky.findings_text()
    );
    assert!(leaky.findings() > 0);

    let constant = run("fixture::constant_time_etm_open");
    for comparison in &constant.operations[0].comparisons {
        if comparison.groups[0] == comparison.groups[1] {
            assert!(
                comparison.differences.is_empty(),
                "the constant-time copy must count the same under both bad tags:\n{}",
                constant.findings_text()
            );
        }
    }
}

fn the_constant_flow_check_passes() {
    if !regress::harness_test::valgrind_enabled() {
        notice(
            "SKIPPED (ENABLE_VALGRIND is not true): the constant-flow check counts every \
             operation under Callgrind; the operations ran natively in \
             every_operation_works_natively",
        );
        return;
    }
    let workspace = Workspace::find_from(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("workspace");
    let Some(runner) = runner(workspace.clone()) else {
        return;
    };
    let binary = Path::new(env!("CARGO_BIN_EXE_harnesses"));
    let allowlist = Allowlist::load(
        &workspace
            .root()
            .join(regress::constant_flow::allowlist::PATH),
    )
    .expect("the committed allowlist");
    let names = regress::program::list_all(binary).expect("the program's entries");
    let variants = select(&names, None).expect("constant-flow entries");
    let report = check(&Request {
        runner: &runner,
        binary,
        variants: &variants,
        runs: 1,
        allowlist: &allowlist,
        all_operations: true,
        workers: regress::parallel::workers(None),
        listener: &Silent,
    })
    .expect("the check runs");
    let written = report
        .write(&runner.output_dir().join("constant-flow"))
        .expect("the report is written");
    notice(&format!(
        "constant-flow: {} operations, {} findings; {}",
        report.operations.len(),
        report.findings(),
        written[1].display()
    ));
    assert_eq!(
        report.findings(),
        0,
        "secret-dependent differences:\n{}",
        report.findings_text()
    );
}
