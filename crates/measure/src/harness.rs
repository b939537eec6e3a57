//! What a harness is.

use serde::{Deserialize, Serialize};

/// The error type harness code returns. Harnesses are test code driving real
/// TLS libraries; a boxed error keeps each library's own error type intact.
pub type HarnessError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A library the measured process loads at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeLibrary {
    /// Its name in the fingerprint (`libssl`).
    pub name: String,
    /// Its version as the library itself reports it.
    pub version: String,
    /// The CPUID words its assembly dispatches on, as the library holds
    /// them after applying `OPENSSL_ia32cap`, in [`crate::cpu::ids`]'s
    /// order (leaf 1's ECX and EDX, leaf 7's EBX and ECX); `None` when the
    /// library does not say. A profile that hides a feature the library
    /// still holds did not reach it, and the runner fails the measurement.
    pub cpu: Option<[u32; 4]>,
}

/// What one run's paying side read from its peer: for a path that counts
/// one side's work on a flight the other side chose (a hostile peer's),
/// the flight's size, so that the reports can say what the work costs per
/// byte and per message the peer sent (its amplification).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Received {
    /// Bytes on the wire, record headers included.
    pub bytes: u64,
    /// TLS records.
    pub records: u64,
    /// Messages: handshake messages, and records of application data.
    pub messages: u64,
}

/// One API path of a TLS library, split so that only the path itself is
/// counted.
///
/// The measured process calls [`setup`](Harness::setup) once, then
/// [`prepare`](Harness::prepare) for every run it will make, and only then
/// [`run`](Harness::run) the path, once per prepared input. Everything but
/// `run` stays outside the counted region; the runner counts one warm `run`
/// (see [`crate::child`]).
///
/// Each harness must be *mutually exclusive* with the others: `run` does the
/// one thing its name says. A handshake harness does not build configs; a
/// record harness does not handshake.
pub trait Harness {
    /// State shared by every run: configs, keys, certificates, buffers.
    type Setup;
    /// What one run consumes: fresh connections, say. Built outside the count.
    type Input;
    /// What one run produced, checked outside the count.
    type Output;

    /// Bytes of application data one run moves, when the path is a
    /// throughput path; used to report instructions per byte.
    fn bytes_per_run(&self) -> Option<u64> {
        None
    }

    /// Calls of the measured API one run makes. A path too small to count
    /// alone (one AEAD call of 16 bytes is ~900 instructions, of which the
    /// harness's own glue around a single call would be several percent)
    /// repeats the call; the reports divide by this to give the cost of one.
    fn operations_per_run(&self) -> u64 {
        1
    }

    /// Libraries the harness loads at run time that `Cargo.lock` cannot
    /// know, such as the system OpenSSL an `openssl` crate links: their
    /// versions become part of the count's fingerprint, and the CPU
    /// features they dispatch on let the runner check that a CPU profile
    /// reached them ([`RuntimeLibrary::cpu`]).
    fn runtime_libraries(&self) -> Vec<RuntimeLibrary> {
        Vec::new()
    }

    /// Whether `run` marks its client's and its server's calls into their
    /// library ([`crate::parts`]), as a handshake does. Only then does the
    /// runner split its count by side and stage and take what each side
    /// holds; a harness that cannot be split says so instead of reporting
    /// zeros.
    fn sides(&self) -> bool {
        false
    }

    /// After the counted run, in a heap child only: moves the first
    /// application record over the connection `run` made (the client
    /// sends, the server reads), marking each side's calls, so that the
    /// heap figures can say what each side holds once data has flowed.
    /// `Ok(false)` when the path has no such record.
    fn first_record(
        &self,
        _setup: &Self::Setup,
        _output: &mut Self::Output,
    ) -> Result<bool, HarnessError> {
        Ok(false)
    }

    /// What the paying side of `output`'s run read from its peer, for a
    /// path that counts one side's work on the other's flight
    /// ([`Received`]); `None` for every other path. Asked in a heap child
    /// after the run, never where instructions are counted.
    fn received(&self, _setup: &Self::Setup, _output: &Self::Output) -> Option<Received> {
        None
    }

    /// Builds what every run shares. Not counted.
    fn setup(&self) -> Result<Self::Setup, HarnessError>;

    /// Builds the input of one run. Not counted.
    fn prepare(&self, setup: &Self::Setup) -> Result<Self::Input, HarnessError>;

    /// The path itself: the only code that is counted.
    fn run(&self, setup: &Self::Setup, input: Self::Input) -> Result<Self::Output, HarnessError>;

    /// Proves that `run` really did what the harness claims (the handshake
    /// completed, the data arrived byte-exact, the session was resumed).
    /// Not counted.
    fn check(&self, setup: &Self::Setup, output: &Self::Output) -> Result<(), HarnessError>;
}

/// Runs a harness natively once through every phase, as `cargo test` does:
/// setup, a run, its check, then a second (warm) run and its check, so a
/// path that only works once is caught too.
pub fn run_natively<H: Harness>(harness: &H) -> Result<(), HarnessError> {
    let setup = harness.setup()?;
    for _ in 0..2 {
        let input = harness.prepare(&setup)?;
        let output = harness.run(&setup, input)?;
        harness.check(&setup, &output)?;
    }
    Ok(())
}
