//! The paths, as data.
//!
//! A benchmark is a library and a path ([`Benchmark`]); a path is a kind and
//! its parameters ([`Path`]): a handshake is (PKI, client authentication or
//! not, protocol version, resumption or not, key-exchange group, a
//! HelloRetryRequest or not), a record path is (cipher,
//! protocol version, write size), and so on. Everything else follows from
//! the data: the public name `<library>::<path>` (the test name, the
//! baseline file, the output names), the [`Pins`] every library must
//! negotiate on it, and the [`Profile`] each library builds its configs
//! from. Each library has one harness per kind, parameterised by this data
//! (`registry.rs` picks it); [`Path::validate`] refuses data that no name
//! or harness could stand for.
//!
//! The kinds, one file each: [`handshake`], [`record`], [`aead`],
//! [`feature`] and [`hostile`] inputs; [`profile`] is what a library builds
//! its configs from for any of them.

mod aead;
mod feature;
mod handshake;
mod hostile;
mod profile;
mod record;
#[cfg(test)]
mod tests;

use std::fmt::{self, Write as _};

use crate::common::pins::Cipher;

pub use aead::Aead;
pub use feature::Feature;
pub use handshake::{Handshake, Resumption};
pub use hostile::Hostile;
pub use profile::{Alert, Profile};
pub use record::{Direction, Record};

/// Who is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Library {
    S2nTls,
    Rustls,
    OpenSsl,
    /// The AEAD floor under the record paths: aws-lc through aws-lc-rs.
    AwsLcRs,
    /// The pipeline itself: a loop of known cost.
    Calibration,
}

impl Library {
    /// The first half of a benchmark's name.
    pub const fn name(self) -> &'static str {
        match self {
            Library::S2nTls => "s2n_tls",
            Library::Rustls => "rustls",
            Library::OpenSsl => "openssl",
            Library::AwsLcRs => "aws_lc_rs",
            Library::Calibration => "calibration",
        }
    }
}

/// One measured path of a library: a kind and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// Building the configs of [`Handshake::RSA4096`] from PEM, both sides.
    ConfigBuild,
    /// One handshake between a fresh client and server.
    Handshake(Handshake),
    /// A handshake the client rejects: it trusts another CA than the one
    /// that issued the server's chain (`crate::tls::rejected`).
    Rejected,
    /// Closing an established connection: a close_notify each way
    /// (`crate::tls::shutdown`).
    Shutdown,
    /// One handshake between a client and a server of the library's default
    /// configuration (`crate::tls::defaults`): what the library chooses,
    /// not a comparison.
    Defaults,
    /// 1 MiB of application data over an established connection.
    Record(Record),
    /// Parsing the RSA-4096 leaf and CA certificates.
    X509Parse,
    /// Verifying the RSA-4096 leaf against its CA for `localhost`.
    X509Verify,
    /// Raw AEAD calls, without TLS.
    Aead(Aead),
    /// One KeyUpdate each way on an established TLS 1.3 connection of
    /// [`Handshake::RSA4096`]'s configs, and one small record each way
    /// under the new keys.
    KeyUpdate,
    /// A feature of one library that its users rely on.
    Feature(Feature),
    /// A server of the library's defaults processing one flight a hostile
    /// client chose (`crate::tls::hostile`): what a peer can make it pay.
    Hostile(Hostile),
    /// The calibration loop: `iterations` iterations of three instructions,
    /// named `spin_<label>`. The label is given, not derived: the pipeline's
    /// own end-to-end test changes a spin's iterations under a fixed name to
    /// prove that a diff finds exactly that change.
    Spin {
        label: &'static str,
        iterations: u64,
    },
}

/// The second half of a benchmark's name.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::ConfigBuild => f.write_str("config_build"),
            Path::Handshake(handshake) => handshake.fmt(f),
            Path::Defaults => f.write_str("handshake_defaults"),
            Path::Shutdown => f.write_str("shutdown"),
            Path::Rejected => f.write_str("handshake_untrusted"),
            Path::Record(record) => record.fmt(f),
            Path::X509Parse => f.write_str("x509_parse_chain"),
            Path::X509Verify => f.write_str("x509_verify_chain"),
            Path::Aead(aead) => aead.fmt(f),
            Path::KeyUpdate => f.write_str("key_update"),
            Path::Feature(feature) => f.write_str(feature.name()),
            Path::Hostile(hostile) => write!(f, "hostile_{}", hostile.name()),
            Path::Spin { label, .. } => write!(f, "spin_{label}"),
        }
    }
}

impl Path {
    /// Whether the data names a path: every combination a name and the
    /// harnesses can stand for.
    pub fn validate(&self) -> Result<(), InvalidPath> {
        match self {
            Path::Handshake(handshake) => handshake.validate(),
            Path::Record(record) => record.validate(),
            Path::Aead(aead) => aead.validate(),
            Path::Spin { label: "", .. } => Err(InvalidPath::SpinWithoutLabel),
            _ => Ok(()),
        }
    }
}

/// Why path data names no path ([`Path::validate`]): each rule a name and
/// the harnesses rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidPath {
    /// A TLS 1.2 handshake on anything but RSA-4096 over secp256r1 or
    /// ffdhe2048, or with a HelloRetryRequest.
    Tls12Shape,
    /// A finite-field group on anything but a full TLS 1.2 handshake
    /// without mTLS.
    FiniteFieldShape,
    /// A resumption of anything but `handshake_rsa4096` or its TLS 1.2
    /// twin.
    ResumptionShape,
    /// A session-cache resumption of TLS 1.2.
    CacheResumptionVersion,
    /// mTLS on a web PKI, which has no client identity.
    WebPkiMtls,
    /// A warning alert on anything but a full TLS 1.3 handshake without
    /// mTLS or a HelloRetryRequest.
    WarningShape,
    /// A HelloRetryRequest to the client's own guess, or on a resumption.
    RetryShape,
    /// A non-AEAD cipher on a TLS 1.3 record path.
    RecordVersion { cipher: Cipher },
    /// A record write size that is not a whole number of KiB up to one
    /// full record.
    RecordWriteSize { write_size: usize },
    /// A non-AEAD cipher on an AEAD path.
    NotAnAead { cipher: Cipher },
    /// An AEAD message length that does not divide a run's bytes.
    AeadMessageLength { message_len: usize },
    /// A spin with an empty label.
    SpinWithoutLabel,
}

impl fmt::Display for InvalidPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidPath::Tls12Shape => f.write_str(
                "TLS 1.2 paths pin an ECDHE-RSA suite over secp256r1 or a DHE-RSA one over \
                 ffdhe2048: RSA-4096 only, no HelloRetryRequest",
            ),
            InvalidPath::FiniteFieldShape => {
                f.write_str("a finite-field group is a full TLS 1.2 handshake's, without mTLS")
            }
            InvalidPath::ResumptionShape => f.write_str(
                "session_resumption resumes handshake_rsa4096 or its TLS 1.2 twin, nothing else",
            ),
            InvalidPath::CacheResumptionVersion => {
                f.write_str("a session-cache resumption path is TLS 1.3's")
            }
            InvalidPath::WebPkiMtls => {
                f.write_str("a web PKI has no client identity: no mTLS on it")
            }
            InvalidPath::WarningShape => f.write_str(
                "a warning before the ServerHello is a full TLS 1.3 handshake's, without mTLS \
                 or a HelloRetryRequest",
            ),
            InvalidPath::RetryShape => write!(
                f,
                "a HelloRetryRequest path needs a group other than the client's guess {} \
                 and a full handshake",
                Handshake::RETRY_GUESS.name()
            ),
            InvalidPath::RecordVersion { cipher } => {
                write!(f, "{} records are TLS 1.2's", cipher.label())
            }
            InvalidPath::RecordWriteSize { write_size } => write!(
                f,
                "write size {write_size} is not a whole number of KiB up to one full record"
            ),
            InvalidPath::NotAnAead { cipher } => f.write_str(&cipher.not_an_aead()),
            InvalidPath::AeadMessageLength { message_len } => write!(
                f,
                "message length {message_len} does not divide a run's {} bytes",
                Aead::RUN_BYTES
            ),
            InvalidPath::SpinWithoutLabel => f.write_str("a spin needs a label"),
        }
    }
}

impl std::error::Error for InvalidPath {}

/// Why a library has no harness for a path: the path is not of its kind, or
/// the library cannot pin what the path pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoHarness {
    /// An AEAD call or the calibration loop, not a TLS connection's path.
    NotTls,
    /// A feature path: s2n-tls's alone.
    OnlyS2nTls,
    /// aws-lc-rs is measured on raw AEAD calls only.
    OnlyAead,
    /// The calibration library measures its loop only.
    OnlyLoop,
    /// s2n-tls's crate has no standalone X.509 API.
    NoX509Api,
    /// A harness written for rustls 0.23's API only.
    NotYetRustls024,
    /// The library cannot pin what the path pins, and why.
    Unpinnable(&'static str),
}

impl fmt::Display for NoHarness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NoHarness::NotTls => "not a TLS path",
            NoHarness::OnlyS2nTls => "the feature paths are measured on s2n-tls only",
            NoHarness::OnlyAead => "aws-lc-rs is measured on raw AEAD calls only",
            NoHarness::OnlyLoop => "calibration measures its loop only",
            NoHarness::NoX509Api => "the s2n-tls crate has no standalone X.509 API",
            NoHarness::NotYetRustls024 => "not yet written for rustls 0.24's API",
            NoHarness::Unpinnable(why) => why,
        })
    }
}

impl std::error::Error for NoHarness {}

/// Why a library, as this build links it, cannot run a path it has a
/// harness for: a fact of the build or of the library, not a mistake in the
/// list (`registry::not_applicable`). `cargo test` shows each as ignored
/// with this reason, never as passing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotApplicable {
    /// The linked release lacks what the path needs, which arrived later.
    Lacks {
        /// The linked library as it names itself (`OpenSSL 1.1.1w  11 Sep 2023`).
        linked: String,
        /// What it lacks (`X25519MLKEM768`).
        what: &'static str,
        /// Where it arrived (`ML-KEM arrived in OpenSSL 3.5`).
        arrived: &'static str,
    },
    /// The library does not do it, by design; the words say where.
    ByDesign(&'static str),
    /// Its count is not repeatable yet: not gated until the cause is found.
    Unrepeatable(&'static str),
    /// The harness is not yet written for this API generation.
    NotYetWritten(&'static str),
}

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotApplicable::Lacks {
                linked,
                what,
                arrived,
            } => write!(f, "{linked} has no {what} ({arrived})"),
            NotApplicable::ByDesign(why) | NotApplicable::Unrepeatable(why) => f.write_str(why),
            NotApplicable::NotYetWritten(api) => {
                write!(f, "this harness is not yet written for {api}")
            }
        }
    }
}

/// A library measured on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Benchmark {
    pub library: Library,
    pub path: Path,
}

/// The longest name [`Benchmark::name`] allocates room for at once.
pub const NAME_CAPACITY: usize = 64;

impl Benchmark {
    /// `<library>::<path>`: the test name, the baseline file's stem (with
    /// `.` for `::`) and the output names. Baselines are keyed on it.
    ///
    /// Written into one allocation of [`NAME_CAPACITY`] bytes, with no
    /// temporary string: the measured program names every benchmark before
    /// it measures one, and freed temporaries would leave the allocator in
    /// a state that moves the cost of allocations inside the counted run.
    pub fn name(&self) -> String {
        let mut name = String::with_capacity(NAME_CAPACITY);
        // Writing to a `String` cannot fail.
        let _ = write!(name, "{}::{}", self.library.name(), self.path);
        name
    }
}
