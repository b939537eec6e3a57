//! The generated tables of what TLS runs in 2026 (`docs/results/libraries.md`):
//! what the post-quantum hybrid X25519MLKEM768 costs each library on the same
//! handshake, and what each library's default configuration negotiates and
//! costs.

use super::compare::Count;
use super::Table;
use crate::format::{count, signed, signed_percent};
use crate::judge::baseline::BaselineFile;

/// The TLS libraries, as harness names spell them, in table order.
const LIBRARIES: &[&str] = &["s2n_tls", "rustls", "openssl"];

/// Pairs of paths that differ only in the key exchange: (what is compared,
/// the classical path, the post-quantum path).
const PAIRS: &[(&str, &str, &str)] = &[
    (
        "full handshake, ECDSA P-256",
        "handshake_ecdsa_p256",
        "handshake_ecdsa_p256_x25519mlkem768",
    ),
    (
        "mTLS, ECDSA P-256",
        "mtls_ecdsa_p256",
        "mtls_ecdsa_p256_x25519mlkem768",
    ),
    (
        "TLS 1.3 resumption",
        "session_resumption",
        "session_resumption_x25519mlkem768",
    ),
];

/// The web-shaped pair: X25519 against X25519MLKEM768.
const WEB_PAIR: (&str, &str, &str) = (
    "web ECDSA chain",
    "handshake_web_ecdsa_p256_x25519",
    "handshake_web_ecdsa_p256_x25519mlkem768",
);

/// The instructions of `<library>::<path>` in `counts`.
fn find(counts: &[Count], library: &str, path: &str) -> Option<u64> {
    counts
        .iter()
        .find(|count| {
            count
                .harness
                .split_once("::")
                .is_some_and(|(lib, name)| lib == library && name == path)
        })
        .map(|count| count.instructions)
}

/// `after - before` as a signed figure and a percentage of `before`.
fn difference(before: u64, after: u64) -> (String, String) {
    (
        signed(i128::from(after) - i128::from(before)),
        signed_percent(before, after),
    )
}

/// The post-quantum table: for each library and each pair of paths that
/// differ only in the key exchange, both counts and the difference. A pair
/// a library lacks (a build without ML-KEM) is left out, never shown as 0.
pub fn post_quantum(counts: &[Count]) -> String {
    let mut table = Table::new(&[
        "library",
        "path",
        "classical group",
        "classical",
        "X25519MLKEM768",
        "difference",
        "%",
    ]);
    for library in LIBRARIES {
        let pairs = PAIRS
            .iter()
            .map(|pair| (pair, "secp256r1"))
            .chain(std::iter::once((&WEB_PAIR, "X25519")));
        for ((what, classical, hybrid), group) in pairs {
            let (Some(before), Some(after)) = (
                find(counts, library, classical),
                find(counts, library, hybrid),
            ) else {
                continue;
            };
            let (delta, percent) = difference(before, after);
            table.row(vec![
                (*library).to_owned(),
                (*what).to_owned(),
                group.to_owned(),
                count(before),
                count(after),
                delta,
                percent,
            ]);
        }
    }
    table.to_markdown()
}

/// The defaults table: what each library's default configuration negotiated
/// (the `defaults` entry its harness adds to the fingerprint) and what its
/// handshake counted.
pub fn defaults(files: &[BaselineFile], counts: &[Count]) -> String {
    let mut table = Table::new(&["library", "negotiated by default", "instructions"]);
    for library in LIBRARIES {
        let name = format!("{library}::handshake_defaults");
        let Some(instructions) = find(counts, library, "handshake_defaults") else {
            continue;
        };
        let negotiated = files
            .iter()
            .find(|file| file.harness == name)
            .and_then(|file| {
                file.entries
                    .iter()
                    .find_map(|entry| entry.fingerprint.libraries.get("defaults"))
            })
            .map_or_else(|| "not recorded".to_owned(), Clone::clone);
        table.row(vec![(*library).to_owned(), negotiated, count(instructions)]);
    }
    table.to_markdown()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(harness: &str, instructions: u64) -> Count {
        Count {
            harness: harness.to_owned(),
            instructions,
            bytes_per_run: None,
            operations_per_run: 1,
            measured_with: "Valgrind 3.24.0 (callgrind)".to_owned(),
            harness_share_percent: None,
            sides: false,
            metrics: Default::default(),
        }
    }

    #[test]
    fn a_pair_shows_both_counts_and_the_difference() {
        let counts = [
            counted("rustls::handshake_ecdsa_p256", 4_000_000),
            counted("rustls::handshake_ecdsa_p256_x25519mlkem768", 4_100_000),
            counted("openssl::handshake_ecdsa_p256", 9_000_000),
        ];
        let table = post_quantum(&counts);
        assert!(table.contains("4,000,000"), "{table}");
        assert!(table.contains("+100,000"), "{table}");
        assert!(table.contains("+2.50%"), "{table}");
        // OpenSSL has no post-quantum row in these counts: it is left out,
        // not shown as 0.
        assert!(!table.contains("openssl"), "{table}");
    }
}
