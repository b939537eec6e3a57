//! [`ConnectionInfo`]: what a server reads about a connection once its
//! handshake is done, for its access log and its authorization.

use regress_measure::parts::Side;
use regress_measure::{Harness, HarnessError};
use s2n_tls::enums::Version;

use super::check::check_handshake;
use super::config::Configs;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::paths::Handshake;
use crate::tls::sides::Sides;

/// The handshake the feature runs on: mTLS on ECDSA P-256, so that the
/// server has a client chain to read.
pub const HANDSHAKE: Handshake = Handshake::ALL[3];

/// Room for one line of the log: every field below fits many times over.
const LINE_CAPACITY: usize = 512;

/// The fields of one line, in order, separated by one space.
const FIELDS: usize = 6;

/// After an mTLS ECDSA P-256 handshake, the server reads what an access log
/// and an authorization step record about the connection, through
/// s2n-tls's getters, and appends each to one log line.
///
/// **Counted:** on the server, `actual_protocol_version`
/// (`s2n_connection_get_actual_protocol_version`), `cipher_suite`
/// (`s2n_connection_get_cipher`), `selected_key_exchange_group`
/// (`s2n_connection_get_key_exchange_group`), `signature_scheme`
/// (`s2n_connection_get_signature_scheme`), `handshake_type`
/// (`s2n_connection_get_handshake_type_name`, which builds each type's name
/// once per process and returns it from a cache afterwards: the counted
/// run, the third, reads the cache) and `client_cert_chain_bytes`
/// (`s2n_connection_get_client_cert_chain`), each appended to a line whose
/// room was made in `prepare` (a copy of the bytes; the chain as its
/// length). Marked as the server's second stage.
///
/// **Not counted:** the configs (`setup`), the connection pair and its
/// whole handshake (`prepare`), the check.
///
/// **Check:** the handshake's own check (pins, chains, a full handshake
/// with client authentication), then every field of the line against the
/// path's pins: `TLSv1_3`, the suite, the group, the server's signature
/// scheme, a handshake type naming `FULL_HANDSHAKE` and `CLIENT_AUTH`, and
/// the length of the client's chain as the server received it. A server that
/// did not ask for a client certificate fails it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectionInfo;

/// What a run appends to: a line with room made outside the count.
#[derive(Debug)]
pub struct Logged {
    pair: Pair,
    line: String,
}

impl Harness for ConnectionInfo {
    type Setup = Configs;
    type Input = Logged;
    type Output = Logged;

    fn sides(&self) -> bool {
        true
    }

    fn setup(&self) -> Result<Configs, HarnessError> {
        Configs::new(&HANDSHAKE.profile())
    }

    fn prepare(&self, configs: &Configs) -> Result<Logged, HarnessError> {
        let mut pair = Pair::new(configs, None)?;
        pair.handshake()
            .context("the handshake before the server reads it")?;
        Ok(Logged {
            pair,
            line: String::with_capacity(LINE_CAPACITY),
        })
    }

    fn run(&self, _: &Configs, mut logged: Logged) -> Result<Logged, HarnessError> {
        Sides::established().call(Side::Server, || log(&logged.pair.server, &mut logged.line))?;
        Ok(logged)
    }

    fn check(&self, configs: &Configs, logged: &Logged) -> Result<(), HarnessError> {
        check_handshake(&logged.pair, &configs.profile, &HANDSHAKE.expected())?;
        check_line(&logged.line, &logged.pair)
    }
}

/// One log line of what `server` negotiated, appended to `line`.
fn log(server: &s2n_tls::connection::Connection, line: &mut String) -> Result<(), HarnessError> {
    let version = server
        .actual_protocol_version()
        .context("reading the protocol version")?;
    line.push_str(version_name(version));
    line.push(' ');
    line.push_str(server.cipher_suite().context("reading the cipher suite")?);
    line.push(' ');
    line.push_str(
        server
            .selected_key_exchange_group()
            .ok_or("the server reports no key-exchange group")?,
    );
    line.push(' ');
    line.push_str(
        server
            .signature_scheme()
            .ok_or("the server reports no signature scheme")?,
    );
    line.push(' ');
    line.push_str(
        server
            .handshake_type()
            .context("reading the handshake type")?,
    );
    line.push(' ');
    let chain = server
        .client_cert_chain_bytes()
        .context("reading the client's chain")?
        .ok_or("the server holds no client chain")?;
    push_decimal(line, chain.len());
    Ok(())
}

/// A version's name as the log writes it.
fn version_name(version: Version) -> &'static str {
    match version {
        Version::TLS13 => "TLSv1_3",
        Version::TLS12 => "TLSv1_2",
        _ => "older",
    }
}

/// `n` in decimal, without the formatting machinery.
fn push_decimal(line: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        // A digit: n % 10 < 10 fits in a u8.
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &digits[at..] {
        line.push(char::from(digit));
    }
}

/// Checks each field of `line` against the path's pins and what the server
/// holds.
fn check_line(line: &str, pair: &Pair) -> Result<(), HarnessError> {
    let fields: Vec<&str> = line.split(' ').collect();
    ensure(fields.len() == FIELDS, || {
        format!(
            "the log line {line:?} has {} fields, {FIELDS} expected",
            fields.len()
        )
    })?;
    let pins = HANDSHAKE.profile().pins;
    let expected = [
        "TLSv1_3",
        pins.suite.name(),
        pins.group.name(),
        pins.scheme.name(),
    ];
    for (field, want) in fields.iter().zip(expected) {
        ensure(*field == want, || {
            format!("the log line {line:?} has {field:?} where {want:?} was expected")
        })?;
    }
    let handshake_type = fields[4];
    for label in ["FULL_HANDSHAKE", "CLIENT_AUTH"] {
        ensure(handshake_type.contains(label), || {
            format!("the logged handshake type {handshake_type:?} does not name {label}")
        })?;
    }
    let held = pair
        .server
        .client_cert_chain_bytes()
        .context("reading the client's chain")?
        .map_or(0, <[u8]>::len);
    ensure(held > 0 && fields[5] == held.to_string(), || {
        format!(
            "the log line gives the client's chain as {} bytes; the server holds {held}",
            fields[5]
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::pins::TlsVersion;
    use crate::common::pki::Pki;

    /// The path runs and passes its check; a connection whose server asked
    /// for no client certificate fails the run (no chain to log), and a
    /// line with a field changed fails the check.
    #[test]
    fn the_line_is_checked_field_by_field() {
        let harness = ConnectionInfo;
        regress_measure::harness::run_natively(&harness).expect("the path");

        let configs = harness.setup().expect("setup");
        let logged = harness.prepare(&configs).expect("prepare");
        let mut logged = harness.run(&configs, logged).expect("run");
        harness.check(&configs, &logged).expect("check");
        logged.line = logged.line.replacen("secp256r1 ", "x25519 ", 1);
        let error = harness
            .check(&configs, &logged)
            .expect_err("a changed group");
        assert!(error.to_string().contains("\"x25519\""), "{error}");

        let plain = Configs::new(&Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13).profile())
            .expect("configs");
        let mut pair = Pair::new(&plain, None).expect("pair");
        pair.handshake().expect("a handshake without client auth");
        let logged = Logged {
            pair,
            line: String::with_capacity(LINE_CAPACITY),
        };
        let error = harness
            .run(&configs, logged)
            .expect_err("no client chain to log");
        assert!(error.to_string().contains("no client chain"), "{error}");
    }

    #[test]
    fn decimals_are_written_as_text_writes_them() {
        for n in [0, 7, 10, 1234, usize::MAX] {
            let mut line = String::new();
            push_decimal(&mut line, n);
            assert_eq!(line, n.to_string());
        }
    }
}
