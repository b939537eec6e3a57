//! The list of every benchmark, in one place.
//!
//! The measured program (`src/main.rs`), the tests (`tests/perf.rs`) and the
//! wall-clock benchmarks (`benches/paths.rs`) all read [`all`], so a path is
//! defined once and measured the same way by all three. The list is data
//! ([`benchmarks`]: a library and a path each); [`all`] validates it once
//! (every path valid, every name unique and well formed, every library able
//! to run its paths) and gives each benchmark its harness under its derived
//! name, `<library>::<path>`: the test name, the baseline file and the
//! output names all use it.
//!
//! A path can be valid and still not apply to the library as this build
//! links it (OpenSSL before 3.5 has no X25519MLKEM768): [`not_applicable`]
//! says so with the reason, and such a benchmark is left out of [`all`]
//! and reported by the tests as ignored, never measured and never passing.

use std::fmt;

use regress_measure::program::{AnyHarness, Entry};

use crate::common::pins::{Cipher, TlsVersion};
use crate::paths::{
    Aead, Benchmark, Direction, Feature, Handshake, Hostile, InvalidPath, Library, NoHarness,
    NotApplicable, Path, Record, Resumption, NAME_CAPACITY,
};

/// The calibration loop of `iterations`, named `spin_<label>`.
const fn spin(label: &'static str, iterations: u64) -> Path {
    Path::Spin { label, iterations }
}

/// The calibration paths: the two must differ by exactly 3,000,000
/// instructions.
const SPINS: &[Path] = &[spin("1m", 1_000_000), spin("2m", 2_000_000)];

/// The TLS libraries, each measured on the same paths where it can.
const TLS_LIBRARIES: [Library; 3] = [Library::S2nTls, Library::Rustls, Library::OpenSsl];

/// The paths a TLS library is measured on.
fn tls_paths(library: Library) -> impl Iterator<Item = Path> + Clone {
    let records = Cipher::AEADS.into_iter().flat_map(move |cipher| {
        // No s2n-tls policy lets two s2n-tls peers agree on ChaCha20 in
        // TLS 1.3 (see `s2n_tls`): its ChaCha20 records are TLS 1.2.
        let version = match (library, cipher) {
            (Library::S2nTls, Cipher::ChaCha20Poly1305) => TlsVersion::Tls12,
            _ => TlsVersion::Tls13,
        };
        Record::WRITE_SIZES.map(|write_size| {
            Path::Record(Record {
                cipher,
                version,
                write_size,
            })
        })
    });
    // TLS 1.2 CBC records: rustls implements no CBC suite.
    let cbc = match library {
        Library::Rustls => [].iter(),
        _ => Record::WRITE_SIZES.iter(),
    }
    .map(|&write_size| {
        Path::Record(Record {
            cipher: Cipher::Aes128CbcSha,
            version: TlsVersion::Tls12,
            write_size,
        })
    });
    // The s2n-tls crate has no standalone X.509 API.
    let x509 = match library {
        Library::S2nTls => [].iter(),
        _ => [Path::X509Parse, Path::X509Verify].iter(),
    };
    // The feature paths are s2n-tls's.
    let features = match library {
        Library::S2nTls => Feature::ALL.iter(),
        _ => [].iter(),
    };
    std::iter::once(Path::ConfigBuild)
        .chain(Handshake::ALL.map(Path::Handshake))
        .chain(records)
        .chain(x509.copied())
        .chain(Handshake::REAL_WORLD.map(Path::Handshake))
        .chain(cbc)
        .chain([
            Path::Defaults,
            Path::Rejected,
            Path::Shutdown,
            Path::KeyUpdate,
        ])
        .chain(features.copied().map(Path::Feature))
        .chain(
            Hostile::ALL
                .into_iter()
                // s2n-tls's default server issues no tickets.
                .filter(move |input| !(library == Library::S2nTls && input.captured()))
                .map(Path::Hostile),
        )
}

/// Why the library, as this build links it, cannot run `benchmark`'s path,
/// if it cannot: a fact of the build (a library version without a
/// feature), not a mistake in the list.
pub fn not_applicable(benchmark: &Benchmark) -> Option<NotApplicable> {
    match (benchmark.library, benchmark.path) {
        (Library::OpenSsl, Path::Handshake(handshake)) => {
            crate::openssl::system::unsupported_group(handshake.group)
        }
        (Library::Rustls, Path::Handshake(handshake)) if handshake.group.is_finite_field() => {
            Some(NotApplicable::ByDesign(
                "rustls implements no finite-field Diffie-Hellman in TLS 1.2 (no DHE suite)",
            ))
        }
        (Library::Rustls, Path::Handshake(handshake)) if handshake.pki.names_host_in_cn_only() => {
            Some(NotApplicable::ByDesign(
                "rustls (webpki) matches host names against subjectAltName only and never \
                 falls back to the subject's CN, so it rejects a CN-only leaf",
            ))
        }
        (Library::Rustls, Path::Hostile(Hostile::MinimalSecp521r1)) => {
            Some(NotApplicable::ByDesign(
                "rustls's default key-exchange groups (aws-lc-rs provider) leave out \
                 secp521r1: it refuses a ClientHello offering only that group with \
                 handshake_failure (scripts/hostile-search.sh counts the refusal)",
            ))
        }
        (Library::OpenSsl, Path::Hostile(Hostile::MinimalFfdhe3072)) => {
            crate::openssl::system::lacks_finite_field_groups("ffdhe3072")
        }
        (Library::S2nTls, Path::Hostile(Hostile::MinimalFfdhe3072)) => {
            Some(NotApplicable::ByDesign(
                "s2n-tls negotiates no finite-field group in TLS 1.3: it refuses a \
                 ClientHello offering only ffdhe3072, before any key exchange \
                 (scripts/hostile-search.sh counts the refusal)",
            ))
        }
        (Library::Rustls, Path::Hostile(Hostile::MinimalFfdhe3072)) => {
            Some(NotApplicable::ByDesign(
                "rustls's key-exchange groups (aws-lc-rs provider) have no finite-field \
                 group: it refuses a ClientHello offering only ffdhe3072 with \
                 handshake_failure (scripts/hostile-search.sh counts the refusal)",
            ))
        }
        (Library::S2nTls, Path::Hostile(Hostile::ClientChainDecoys)) => {
            Some(NotApplicable::ByDesign(
                "s2n-tls reads at most 7 certificates of a peer's chain \
                 (DEFAULT_MAX_CHAIN_DEPTH): it refuses the 51 of the decoys before it \
                 verifies one (hostile_mtls_longest_chain is its limit)",
            ))
        }
        (Library::OpenSsl, Path::Hostile(Hostile::CorruptTickets)) => {
            Some(NotApplicable::Unrepeatable(
                "its count moves with the wall clock (about 160 instructions in some runs on \
                 Valgrind 3.19 and 3.24; OpenSSL reads the time without a hook): not gated \
                 until the cause is found and pinned",
            ))
        }
        (
            Library::S2nTls,
            Path::Handshake(Handshake {
                resumption: Some(Resumption::Cache),
                ..
            }),
        ) => Some(NotApplicable::ByDesign(
            "s2n-tls resumes TLS 1.3 sessions from tickets only: its session cache \
             serves TLS 1.2 session ids (usage guide, \"Session Resumption\")",
        )),
        #[cfg(feature = "rustls-0-24")]
        (Library::Rustls, Path::Shutdown | Path::Rejected | Path::KeyUpdate | Path::Hostile(_)) => {
            Some(NotApplicable::NotYetWritten("rustls 0.24's API"))
        }
        _ => None,
    }
}

/// The benchmarks this build cannot run, each with the reason.
pub fn not_applicable_benchmarks() -> Vec<(String, NotApplicable)> {
    benchmarks()
        .filter_map(|benchmark| not_applicable(&benchmark).map(|why| (benchmark.name(), why)))
        .collect()
}

/// The raw AEAD paths of aws-lc-rs: AES-GCM, both directions, every
/// message length.
fn aead_paths() -> impl Iterator<Item = Path> + Clone {
    [Cipher::Aes128Gcm, Cipher::Aes256Gcm]
        .into_iter()
        .flat_map(|cipher| [Direction::Seal, Direction::Open].map(|direction| (cipher, direction)))
        .flat_map(|(cipher, direction)| {
            Aead::MESSAGE_LENS.map(|message_len| {
                Path::Aead(Aead {
                    cipher,
                    direction,
                    message_len,
                })
            })
        })
}

/// Every benchmark, in a fixed order. A lazy iterator: listing allocates
/// nothing (see [`Benchmark::name`] on why that matters).
pub fn benchmarks() -> impl Iterator<Item = Benchmark> + Clone {
    let calibration = SPINS.iter().map(|path| (Library::Calibration, *path));
    let tls = TLS_LIBRARIES
        .into_iter()
        .flat_map(|library| tls_paths(library).map(move |path| (library, path)));
    let aead = aead_paths().map(|path| (Library::AwsLcRs, path));
    calibration
        .chain(tls)
        .chain(aead)
        .map(|(library, path)| Benchmark { library, path })
}

/// The harness of `benchmark`, or why its library cannot run its path.
fn harness(benchmark: &Benchmark) -> Result<Box<dyn AnyHarness>, NoHarness> {
    let path = &benchmark.path;
    match benchmark.library {
        Library::S2nTls => crate::s2n_tls::harness(path),
        Library::Rustls => crate::rustls::harness(path),
        Library::OpenSsl => crate::openssl::harness(path),
        Library::AwsLcRs => crate::aws_lc_rs::harness(path),
        Library::Calibration => crate::calibration::harness(path),
    }
}

/// Whether `name` is a harness name (the one rule,
/// [`regress_measure::is_harness_name`]) of this list's shape:
/// `<library>::<path>`, two parts, within the capacity the name is written
/// into ([`NAME_CAPACITY`]).
fn well_formed(name: &str) -> bool {
    regress_measure::is_harness_name(name)
        && name.split("::").count() == 2
        && name.len() <= NAME_CAPACITY
}

/// `benchmarks`, validated, as entries of the measured program: every
/// path valid, every name well formed and unique, every library able to run
/// its path. Allocates only what it returns.
pub fn entries<I>(benchmarks: I) -> Result<Vec<Entry>, ListError>
where
    I: IntoIterator<Item = Benchmark>,
    I::IntoIter: Clone,
{
    let benchmarks = benchmarks.into_iter();
    let mut entries: Vec<Entry> = Vec::with_capacity(benchmarks.clone().count());
    for benchmark in benchmarks {
        if not_applicable(&benchmark).is_some() {
            continue;
        }
        let name = benchmark.name();
        if !well_formed(&name) {
            return Err(ListError::BadName { name });
        }
        if entries.iter().any(|entry| entry.name == name) {
            return Err(ListError::Twice { name });
        }
        if let Err(source) = benchmark.path.validate() {
            return Err(ListError::InvalidPath { name, source });
        }
        let harness = match harness(&benchmark) {
            Ok(harness) => harness,
            Err(why) => return Err(ListError::CannotRun { name, why }),
        };
        entries.push(Entry { name, harness });
    }
    Ok(entries)
}

/// Why a list of benchmarks is not a measured program's ([`entries`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListError {
    /// A name that is not `<library>::<path>` in `[a-z0-9_]` within
    /// [`NAME_CAPACITY`] bytes.
    BadName { name: String },
    /// A name listed twice.
    Twice { name: String },
    /// Path data that names no path.
    InvalidPath { name: String, source: InvalidPath },
    /// A library that cannot run its path, and why.
    CannotRun { name: String, why: NoHarness },
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListError::BadName { name } => write!(
                f,
                "{name:?} is not <library>::<path> in [a-z0-9_], at most {NAME_CAPACITY} bytes"
            ),
            ListError::Twice { name } => write!(f, "{name} is listed twice"),
            ListError::InvalidPath { name, source } => write!(f, "{name}: {source}"),
            ListError::CannotRun { name, why } => write!(f, "{name}: {why}"),
        }
    }
}

impl std::error::Error for ListError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ListError::InvalidPath { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Every benchmark's harness under its name, in a fixed order.
///
/// # Panics
///
/// When the list is invalid: a programming error, which the unit tests
/// (and every run of the measured program) report with the offending name.
pub fn all() -> Vec<Entry> {
    entries(benchmarks()).unwrap_or_else(|error| panic!("invalid benchmark list: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_valid() {
        let entries = all();
        let skipped = not_applicable_benchmarks();
        // s2n-tls has no captured-ticket hostile paths (its default server
        // issues no tickets).
        let captured = Hostile::ALL.iter().filter(|input| input.captured()).count();
        // TLS 1.2 CBC records: s2n-tls and OpenSSL, every write size.
        let cbc = 2 * Record::WRITE_SIZES.len();
        assert_eq!(
            entries.len() + skipped.len(),
            69 + 3 * (Handshake::REAL_WORLD.len() + 4 + Hostile::ALL.len()) + Feature::ALL.len()
                - captured
                + cbc
        );
        for (name, why) in &skipped {
            let text = why.to_string();
            match why {
                // rustls 0.24 builds lack the harnesses not yet written for
                // its API; its other skips are rustls's own, below.
                NotApplicable::NotYetWritten(api) => {
                    if !cfg!(feature = "rustls-0-24") {
                        panic!("{name}: {text}, in a build of rustls 0.23");
                    }
                    assert!(name.starts_with("rustls::") && api.contains("rustls 0.24"));
                }
                NotApplicable::Unrepeatable(_) => {
                    assert_eq!(name, "openssl::hostile_hello_corrupt_tickets");
                    assert!(text.contains("wall clock"), "{text}");
                }
                NotApplicable::ByDesign(_) => match name.as_str() {
                    "s2n_tls::session_resumption_cache" => {
                        assert!(text.contains("tickets only"), "{text}")
                    }
                    "rustls::handshake_tls12_rsa4096_ffdhe2048" => {
                        assert!(text.contains("no finite-field"), "{text}")
                    }
                    "rustls::handshake_ecdsa_p256_cn_only" => {
                        assert!(text.contains("never falls back"), "{text}")
                    }
                    "rustls::hostile_hello_minimal_secp521r1" => {
                        assert!(text.contains("leave out secp521r1"), "{text}")
                    }
                    "s2n_tls::hostile_mtls_chain_decoys" => {
                        assert!(text.contains("at most 7 certificates"), "{text}")
                    }
                    "s2n_tls::hostile_hello_minimal_ffdhe3072"
                    | "rustls::hostile_hello_minimal_ffdhe3072" => {
                        assert!(text.contains("only ffdhe3072"), "{text}")
                    }
                    other => panic!("{other}: not applicable by design? {text}"),
                },
                // The linked OpenSSL's release: ML-KEM before 3.5 (a system
                // libssl), the RFC 7919 groups before 3.0 (1.1.1).
                NotApplicable::Lacks { what, arrived, .. } => {
                    assert!(name.starts_with("openssl::"), "{name}");
                    if name.ends_with("_x25519mlkem768") {
                        assert_eq!(*what, "X25519MLKEM768");
                        assert_eq!(*arrived, "ML-KEM arrived in OpenSSL 3.5");
                    } else {
                        assert!(what.starts_with("ffdhe"), "{name}: {text}");
                    }
                }
            }
        }
        for entry in &entries {
            let record = entry.name.contains("::record_");
            let expected = record.then_some(1 << 20);
            if !entry.name.starts_with("aws_lc_rs::") {
                assert_eq!(entry.harness.bytes_per_run(), expected, "{}", entry.name);
            } else {
                assert_eq!(entry.harness.bytes_per_run(), Some(16384), "{}", entry.name);
            }
        }
    }

    #[test]
    fn invalid_lists_are_refused_with_the_name() {
        let first = benchmarks().next().expect("a benchmark");
        let twice = [first; 2];
        let error = entries(twice).expect_err("twice");
        assert_eq!(
            error,
            ListError::Twice {
                name: "calibration::spin_1m".to_owned()
            }
        );
        assert_eq!(error.to_string(), "calibration::spin_1m is listed twice");

        let chacha13 = Benchmark {
            library: Library::S2nTls,
            path: Path::Record(Record {
                cipher: Cipher::ChaCha20Poly1305,
                version: TlsVersion::Tls13,
                write_size: 1024,
            }),
        };
        let error = entries([chacha13]).expect_err("s2n-tls cannot");
        assert!(
            matches!(&error, ListError::CannotRun { name, .. } if name == "s2n_tls::record_chacha20poly1305_1k"),
            "{error}"
        );
        let cbc13 = Benchmark {
            library: Library::OpenSsl,
            path: Path::Record(Record {
                cipher: Cipher::Aes128CbcSha,
                version: TlsVersion::Tls13,
                write_size: 1024,
            }),
        };
        let error = entries([cbc13]).expect_err("CBC is TLS 1.2's");
        assert!(
            matches!(
                &error,
                ListError::InvalidPath {
                    source: InvalidPath::RecordVersion { .. },
                    ..
                }
            ),
            "{error}"
        );
        assert!(
            error.to_string().ends_with("records are TLS 1.2's"),
            "{error}"
        );
        for (library, path) in [
            (Library::S2nTls, Path::X509Verify),
            (Library::AwsLcRs, Path::ConfigBuild),
            (
                Library::Rustls,
                Path::Aead(Aead {
                    cipher: Cipher::Aes128Gcm,
                    direction: Direction::Seal,
                    message_len: 16,
                }),
            ),
            (Library::Calibration, Path::X509Parse),
            (Library::Rustls, Path::Feature(Feature::ExternalPsk)),
            (
                Library::OpenSsl,
                Path::Feature(Feature::ClientHelloCallback),
            ),
            (Library::AwsLcRs, Path::KeyUpdate),
        ] {
            assert!(
                entries([Benchmark { library, path }]).is_err(),
                "{library:?}"
            );
        }
        let bad_name = Benchmark {
            library: Library::Calibration,
            path: spin("Two Million", 2_000_000),
        };
        assert!(entries([bad_name]).is_err());
    }
}
