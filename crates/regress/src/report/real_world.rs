//! The generated tables of what TLS runs in 2026 (`docs/results/libraries.md`):
//! what the post-quantum hybrid X25519MLKEM768 costs each library on the same
//! handshake, what each library's default configuration negotiates and
//! costs, and what one flight of a hostile client costs each library's
//! default server.

use super::compare::Count;
use super::{libraries, Table};
use crate::format::{count, signed, signed_percent};
use crate::judge::baseline::BaselineFile;
use crate::measure::metrics::Metric;

/// The TLS libraries, as harness names spell them, in table order.
fn tls_libraries() -> impl Iterator<Item = &'static str> {
    libraries::tls().map(|library| library.id)
}

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
    for library in tls_libraries() {
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
    for library in tls_libraries() {
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

/// The prefix of the hostile-peer paths (`Path::Hostile` in the harnesses).
const HOSTILE: &str = "hostile_";

/// The hostile-peer table: for each `hostile_*` path, what the one flight
/// costs each library's server (the path counts the server alone), and that
/// as a multiple of the server's instructions in the library's
/// `handshake_defaults`, a whole well-behaved handshake against the same
/// server configuration: how many handshakes' worth of work the flight
/// buys. A path a library has no harness for is `n/a`; a library without
/// the split of `handshake_defaults` shows `-` for the multiple.
pub fn hostile(counts: &[Count]) -> String {
    let mut paths: Vec<&str> = counts
        .iter()
        .filter_map(|count| count.harness.split_once("::").map(|(_, path)| path))
        .filter(|path| path.starts_with(HOSTILE))
        .collect();
    paths.sort_unstable();
    paths.dedup();
    if paths.is_empty() {
        return "No baseline has a hostile-peer path.\n".to_owned();
    }
    let handshake_server = |library: &str| -> Option<u64> {
        counts
            .iter()
            .find(|count| count.harness.split_once("::") == Some((library, "handshake_defaults")))
            .and_then(|count| count.metrics.get(&Metric::Server).copied())
            .filter(|server| *server > 0)
    };
    let mut header = vec!["path".to_owned()];
    for library in tls_libraries() {
        header.push((*library).to_owned());
        header.push(format!("{library} / handshake server"));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for path in paths {
        let mut row = vec![path.to_owned()];
        for library in tls_libraries() {
            match find(counts, library, path) {
                Some(instructions) => {
                    row.push(count(instructions));
                    row.push(handshake_server(library).map_or_else(
                        || "-".to_owned(),
                        |server| format!("{:.2}", instructions as f64 / server as f64),
                    ));
                }
                None => {
                    row.push("n/a".to_owned());
                    row.push("n/a".to_owned());
                }
            }
        }
        table.row(row);
    }
    let mut text = "The server's instructions for one hostile flight (one warm run), and that \
                    as a multiple of the same library's server in `handshake_defaults` (a whole \
                    handshake of the same default configuration, its server's calls only); \
                    `n/a`: no such path for the library.\n\n"
        .to_owned();
    text.push_str(&table.to_markdown());
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(harness: &str, instructions: u64) -> Count {
        Count {
            harness: crate::fixtures::name(harness),
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

    #[test]
    fn the_hostile_table_divides_by_the_default_handshake_server() {
        let mut defaults = counted("rustls::handshake_defaults", 8_000_000);
        defaults.metrics.insert(Metric::Server, 2_000_000);
        let counts = [
            defaults,
            counted("rustls::hostile_hello_max", 3_000_000),
            counted("openssl::hostile_hello_max", 4_000_000),
            counted("openssl::handshake_defaults", 24_000_000),
            counted("rustls::handshake_ecdsa_p256", 4_000_000),
        ];
        let table = hostile(&counts);
        // rustls: 3,000,000 / 2,000,000; OpenSSL has no split: `-`;
        // s2n-tls has no such path: n/a.
        assert!(
            table.contains("| hostile_hello_max | n/a | n/a | 3,000,000 | 1.50 | 4,000,000 | - |"),
            "{table}"
        );
        assert!(!table.contains("handshake_ecdsa_p256 |"), "{table}");
        assert!(hostile(&counts[4..]).contains("No baseline has a hostile-peer path"));
    }
}
