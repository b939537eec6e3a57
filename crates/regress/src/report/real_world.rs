//! The generated tables of what TLS runs in 2026 (`docs/results/libraries.md`):
//! what the post-quantum hybrid X25519MLKEM768 costs each library on the same
//! handshake, what each library's default configuration negotiates and
//! costs, and what one flight of a hostile client costs each library's
//! default server, per flight and per byte and message of it
//! (amplification).

use std::fmt::Write as _;

use super::compare::{Comparison, Count};
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
        .filter(|path| path.starts_with(HOSTILE) && !path.ends_with(ATTACKER))
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

/// One hostile path of one library whose flight's size is known: the
/// server's instructions on it, and the flight.
struct Amplified<'a> {
    library: &'a str,
    path: &'a str,
    instructions: u64,
    bytes: u64,
    records: u64,
    messages: u64,
    /// The attacker's instructions writing the same flight, where a path
    /// counts them (`<path>_attacker`).
    attacker: Option<u64>,
}

impl Amplified<'_> {
    /// The server's instructions per byte of the flight.
    fn per_byte(&self) -> f64 {
        self.instructions as f64 / self.bytes as f64
    }

    /// The server's instructions per message of the flight.
    fn per_message(&self) -> f64 {
        self.instructions as f64 / self.messages as f64
    }
}

/// The suffix of a path that counts what writing another path's flight
/// costs the attacker (`hostile_key_update_flood_attacker`).
const ATTACKER: &str = "_attacker";

/// Every hostile path of `comparison` whose run reported its flight (a
/// program from before the wire figures did not), worst per byte first.
fn amplified(comparison: &Comparison) -> Vec<Amplified<'_>> {
    let mut rows: Vec<Amplified<'_>> = comparison
        .paths
        .iter()
        .filter(|row| row.path.starts_with(HOSTILE))
        .flat_map(|row| {
            row.libraries.iter().filter_map(|(library, cell)| {
                let figure = |metric| cell.figures.get(&metric).copied().filter(|n| *n > 0);
                Some(Amplified {
                    library,
                    path: &row.path,
                    instructions: cell.instructions,
                    bytes: figure(Metric::ReceivedBytes)?,
                    records: figure(Metric::ReceivedRecords)?,
                    messages: figure(Metric::ReceivedMessages)?,
                    attacker: comparison
                        .cell(&format!("{}{ATTACKER}", row.path), library)
                        .map(|cell| cell.instructions),
                })
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        b.per_byte()
            .total_cmp(&a.per_byte())
            .then_with(|| (a.library, a.path).cmp(&(b.library, b.path)))
    });
    rows
}

/// A ratio as a whole number with separators (`1,234`), or with two
/// decimals below 10.
fn ratio(value: f64) -> String {
    if value < 10.0 {
        format!("{value:.2}")
    } else {
        count(value.round() as u64)
    }
}

/// What [`amplification_table`] shows, for a page that holds it.
pub const AMPLIFICATION: &str = "What each byte and each message of a hostile flight makes a \
                                 server execute (a default server; for `hostile_mtls_*`, one \
                                 that asks for a client certificate; one warm run; the flight's \
                                 bytes include record headers), worst per byte first; and, where \
                                 a path counts it, what writing the flight cost the attacker's \
                                 client. `-`: not counted (a hand-built ClientHello is the same \
                                 bytes every time, so the attacker can replay it and pays only \
                                 for sending it; an mTLS client's flight costs it a handshake \
                                 up to its own signature, which the path leaves out).";

/// The amplification table: for each library's hostile paths, the server's
/// instructions per byte and per message of the flight that bought them,
/// worst per byte first; `None` when no path reported its flight.
pub fn amplification_table(comparison: &Comparison) -> Option<Table> {
    let rows = amplified(comparison);
    if rows.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        "library",
        "path",
        "server instructions",
        "flight bytes",
        "per byte",
        "records",
        "messages",
        "per message",
        "attacker instructions",
        "server / attacker",
    ]);
    for row in &rows {
        table.row(vec![
            row.library.to_owned(),
            row.path.to_owned(),
            count(row.instructions),
            count(row.bytes),
            ratio(row.per_byte()),
            count(row.records),
            count(row.messages),
            ratio(row.per_message()),
            row.attacker.map_or_else(|| "-".to_owned(), count),
            row.attacker.filter(|attacker| *attacker > 0).map_or_else(
                || "-".to_owned(),
                |attacker| format!("{:.2}", row.instructions as f64 / attacker as f64),
            ),
        ]);
    }
    Some(table)
}

/// [`amplification_table`] as a page's section.
pub fn amplification(comparison: &Comparison) -> String {
    match amplification_table(comparison) {
        Some(table) => format!("{AMPLIFICATION}\n\n{}", table.to_markdown()),
        None => NO_FLIGHT.to_owned(),
    }
}

/// What a section says when no hostile path reported its flight.
const NO_FLIGHT: &str = "No baseline has a hostile-peer path with its flight's size.\n";

/// For each library, its worst amplification: the hostile path whose
/// flight costs its server the most instructions per byte, for the README.
pub fn worst_amplification(comparison: &Comparison) -> String {
    let rows = amplified(comparison);
    let mut text = String::new();
    for library in tls_libraries() {
        // `rows` is sorted worst first.
        let Some(worst) = rows.iter().find(|row| row.library == library) else {
            continue;
        };
        let _ = writeln!(
            text,
            "- **{}**: `{}`, {} instructions per byte of a {}-byte flight ({} for \
             the flight).",
            libraries::display(library),
            worst.path,
            ratio(worst.per_byte()),
            count(worst.bytes),
            count(worst.instructions),
        );
    }
    if text.is_empty() {
        text.push_str(NO_FLIGHT);
    }
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
            counted("rustls::hostile_key_update_flood_attacker", 1_000_000),
        ];
        let table = hostile(&counts);
        // The attacker's side is not a flight a server pays for.
        assert!(!table.contains("_attacker"), "{table}");
        // rustls: 3,000,000 / 2,000,000; OpenSSL has no split: `-`;
        // s2n-tls has no such path: n/a.
        assert!(
            table.contains("| hostile_hello_max | n/a | n/a | 3,000,000 | 1.50 | 4,000,000 | - |"),
            "{table}"
        );
        assert!(!table.contains("handshake_ecdsa_p256 |"), "{table}");
        assert!(hostile(&counts[4..]).contains("No baseline has a hostile-peer path"));
    }

    fn flight(harness: &str, instructions: u64, bytes: u64, messages: u64) -> Count {
        let mut count = counted(harness, instructions);
        count.metrics.insert(Metric::ReceivedBytes, bytes);
        count.metrics.insert(Metric::ReceivedRecords, messages);
        count.metrics.insert(Metric::ReceivedMessages, messages);
        count
    }

    #[test]
    fn amplification_divides_by_the_flight_worst_per_byte_first() {
        let counts = [
            flight("rustls::hostile_hello_retry", 330_000, 165, 1),
            flight("rustls::hostile_hello_max", 3_200_000, 16_000, 1),
            flight("openssl::hostile_key_update_flood", 640_000, 1_600, 64),
            counted("openssl::hostile_key_update_flood_attacker", 320_000),
            // A run from before the wire figures, and a path that is not
            // hostile: neither is a row.
            counted("s2n_tls::hostile_hello_retry", 900_000),
            flight("rustls::handshake_defaults", 1, 1, 1),
        ];
        let table = amplification(&Comparison::new(&counts));
        let retry = table.find("| rustls | hostile_hello_retry | 330,000 | 165 | 2,000 |");
        let flood = table.find("| openssl | hostile_key_update_flood | 640,000 | 1,600 | 400 |");
        let max = table.find("| rustls | hostile_hello_max | 3,200,000 | 16,000 | 200 |");
        assert!(
            retry.is_some() && flood.is_some() && max.is_some(),
            "{table}"
        );
        assert!(
            retry < flood && flood < max,
            "worst per byte first: {table}"
        );
        assert!(
            table.contains("| 64 | 64 | 10,000 | 320,000 | 2.00 |"),
            "{table}"
        );
        assert!(table.contains("| 1 | 1 | 330,000 | - | - |"), "{table}");
        assert!(!table.contains("_attacker"), "{table}");
        assert!(!table.contains("s2n_tls") && !table.contains("handshake_defaults"));
        let worst = worst_amplification(&Comparison::new(&counts));
        assert_eq!(
            worst,
            "- **rustls**: `hostile_hello_retry`, 2,000 instructions per byte of a 165-byte \
             flight (330,000 for the flight).\n- **OpenSSL**: `hostile_key_update_flood`, 400 \
             instructions per byte of a 1,600-byte flight (640,000 for the flight).\n"
        );
        assert!(amplification(&Comparison::new(&counts[3..])).starts_with("No baseline"));
        assert!(worst_amplification(&Comparison::new(&[])).starts_with("No baseline"));
        assert_eq!(ratio(2.345), "2.35");
    }
}
