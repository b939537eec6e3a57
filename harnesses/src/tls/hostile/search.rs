//! A search for flights that cost a server more per byte than the hostile
//! paths do (issue 26): `harnesses search LIBRARY` serves every candidate
//! of a grid of ClientHellos to a server of the library's defaults, each
//! counted by Callgrind on its own, when the program runs under
//! `valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no`
//! (`scripts/hostile-search.sh` runs it and ranks what it counted).
//!
//! The grid is what a client chooses in the smallest ClientHello that buys
//! a whole handshake ([`Hostile::MinimalHello`]): the one group and its key
//! share, whether it names the server, how many signature schemes it
//! offers, and whether it sends the hello whole or in one-byte records.
//! Each candidate is served twice, on fresh connections: once to warm the
//! server's code and caches, then counted (Callgrind collects only between
//! two toggles around the server's calls, and dumps the count with the
//! candidate's label). What the server answered is printed beside it, so a
//! candidate that was refused is seen as such.

use std::ffi::CString;
use std::io::Write as _;

use regress_measure::region::{
    self, CALLGRIND_DUMP_STATS_AT, CALLGRIND_START_INSTRUMENTATION, CALLGRIND_TOGGLE_COLLECT,
};
use regress_measure::HarnessError;

use super::flights::{public_key, FFDHE3072, GROUPS, SCHEMES};
use super::wire::{self, ext, ClientHello};
use super::{flight_size, Victim};
use crate::common::pki::SERVER_NAME;
use crate::paths::Profile;

/// The groups the grid tries: every hostile ClientHello's, and ffdhe3072,
/// the largest finite-field group a default server takes (OpenSSL 3.5's).
const SEARCHED_GROUPS: [u16; GROUPS.len() + 1] = [
    GROUPS[0], GROUPS[1], GROUPS[2], GROUPS[3], GROUPS[4], FFDHE3072,
];

/// One flight of the grid and what it is.
pub struct Candidate {
    /// `group=0x001d sni=no schemes=1 records=whole`.
    pub label: String,
    pub flight: Vec<u8>,
}

/// Every candidate of the grid for a server of `defaults`.
pub fn candidates(defaults: &Profile) -> Result<Vec<Candidate>, HarnessError> {
    let mut all = Vec::new();
    for group in SEARCHED_GROUPS {
        for named in [false, true] {
            for schemes in [1, SCHEMES.len()] {
                let mut extensions = Vec::new();
                if named {
                    extensions.push((ext::SERVER_NAME, wire::server_name(SERVER_NAME)?));
                }
                extensions.extend([
                    (
                        ext::SUPPORTED_VERSIONS,
                        wire::supported_versions(&[wire::TLS13])?,
                    ),
                    (ext::SUPPORTED_GROUPS, wire::code_points(&[group])?),
                    (
                        ext::SIGNATURE_ALGORITHMS,
                        wire::code_points(&SCHEMES[..schemes])?,
                    ),
                    (
                        ext::KEY_SHARE,
                        wire::key_share(&[(group, public_key(group)?)])?,
                    ),
                ]);
                let hello = ClientHello {
                    random: [0x5a; 32],
                    session_id: [0xa5; 32],
                    suites: vec![defaults.pins.suite.iana()],
                    extensions,
                }
                .encode()?;
                for (records, fragment) in [("whole", wire::MAX_FRAGMENT), ("1-byte", 1)] {
                    all.push(Candidate {
                        label: format!(
                            "group={group:#06x} sni={} schemes={schemes} records={records}",
                            if named { "yes" } else { "no" }
                        ),
                        flight: wire::records(&hello, fragment)?,
                    });
                }
            }
        }
    }
    Ok(all)
}

/// Serves `flight` to a fresh server of `configs` and says what it
/// answered; `counted` brackets the server's calls with Callgrind's
/// toggles.
fn serve<L: Victim>(
    configs: &L::Configs,
    flight: &[u8],
    counted: bool,
) -> Result<String, HarnessError> {
    let mut fresh = L::fresh(configs)?;
    L::attacker(&fresh).send(flight)?;
    if counted {
        region::request(CALLGRIND_TOGGLE_COLLECT, 0);
    }
    let outcome = L::serve(&mut fresh);
    if counted {
        region::request(CALLGRIND_TOGGLE_COLLECT, 0);
    }
    let answer = L::attacker(&fresh).incoming_bytes();
    let reply = wire::reply(&answer).map_or_else(|_| "nothing".to_owned(), |r| r.to_string());
    Ok(match outcome {
        Ok(()) => reply,
        Err(error) => format!("{reply}, then failed: {error}"),
    })
}

/// Serves every candidate, each counted and dumped under its index, and
/// prints `index<TAB>bytes<TAB>label<TAB>answer` for each.
pub fn run<L: Victim>() -> Result<(), HarnessError> {
    let configs = L::default_configs()?;
    let mut out = std::io::stdout().lock();
    // Instrumented from here on, collected only between the toggles.
    region::request(CALLGRIND_START_INSTRUMENTATION, 0);
    for (index, candidate) in candidates(&L::defaults())?.iter().enumerate() {
        serve::<L>(&configs, &candidate.flight, false)?;
        let answer = serve::<L>(&configs, &candidate.flight, true)?;
        let label = CString::new(format!("candidate {index}"))?;
        region::request(CALLGRIND_DUMP_STATS_AT, label.as_ptr() as usize);
        let bytes = flight_size(&candidate.flight).bytes;
        writeln!(out, "{index}\t{bytes}\t{}\t{answer}", candidate.label)?;
    }
    Ok(())
}

/// `harnesses search LIBRARY`.
pub fn main(args: &[String]) -> Result<(), HarnessError> {
    match args {
        [library] => match library.as_str() {
            "s2n_tls" => run::<crate::s2n_tls::tls::S2nTls>(),
            #[cfg(not(feature = "rustls-0-24"))]
            "rustls" => run::<crate::rustls::tls::Rustls>(),
            "openssl" => run::<crate::openssl::tls::OpenSsl>(),
            other => Err(format!("no search for {other:?}: s2n_tls, rustls or openssl").into()),
        },
        _ => Err(
            "usage: harnesses search LIBRARY (under Callgrind: scripts/hostile-search.sh)".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::defaults::Defaults;

    /// Every candidate is one ClientHello within the limits, and natively
    /// every library answers the whole-record ones on X25519 with a
    /// ServerHello for it: the grid reaches the handshake it is meant to.
    #[test]
    fn the_grid_is_within_the_limits_and_reaches_a_handshake() {
        let defaults = crate::rustls::tls::Rustls::defaults();
        let grid = candidates(&defaults).expect("grid");
        assert_eq!(grid.len(), SEARCHED_GROUPS.len() * 2 * 2 * 2);
        for candidate in &grid {
            let size = flight_size(&candidate.flight);
            assert!(
                size.bytes > 100 && size.bytes < 10_000,
                "{}",
                candidate.label
            );
        }
        fn answers<L: Victim>(grid: &[Candidate]) {
            let configs = L::default_configs().expect("configs");
            for candidate in grid.iter().filter(|c| c.label.starts_with("group=0x001d")) {
                let answer = serve::<L>(&configs, &candidate.flight, false).expect("serve");
                assert!(
                    answer.starts_with("ServerHello suite"),
                    "{}: {answer}",
                    candidate.label
                );
                assert!(
                    answer.contains("group Some(29)"),
                    "{}: {answer}",
                    candidate.label
                );
            }
        }
        answers::<crate::s2n_tls::tls::S2nTls>(&grid);
        #[cfg(not(feature = "rustls-0-24"))]
        answers::<crate::rustls::tls::Rustls>(&grid);
        answers::<crate::openssl::tls::OpenSsl>(&grid);
    }
}
