//! What an s2n-tls handshake negotiated, checked against what its path
//! pins.
//!
//! [`negotiated`] maps one side's report to the shared
//! [`Negotiated`], which the shared
//! [`Expected::check`] compares. What only s2n-tls reports is checked here
//! too: the handshake type (full or resumed, no HelloRetryRequest, no
//! TLS 1.2 ticket, client authentication), the key types of both
//! certificates, and that nothing is left in the transport.

use regress_measure::HarnessError;
use s2n_tls::connection::Connection;
use s2n_tls::enums::{HashAlgorithm, Mode, SignatureAlgorithm, Version};

use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{
    CipherSuite, Expected, NamedGroup, Negotiated, Seen, SignatureScheme, TlsVersion,
};
use crate::common::pki::Pki;
use crate::paths::Profile;

/// What one side reports, in the shared vocabulary.
pub fn negotiated(conn: &Connection) -> Result<Negotiated, HarnessError> {
    let version = match conn
        .actual_protocol_version()
        .context("reading the protocol version")?
    {
        Version::TLS12 => Seen::Is(TlsVersion::Tls12),
        Version::TLS13 => Seen::Is(TlsVersion::Tls13),
        other => Seen::Other(format!("{other:?}")),
    };
    let algorithm = conn
        .selected_client_signature_algorithm()
        .context("reading the client signature algorithm")?;
    let hash = conn
        .selected_client_hash_algorithm()
        .context("reading the client signature hash")?;
    // In TLS 1.3 the pair names the scheme uniquely (ECDSA with SHA-256
    // implies P-256).
    let client_signature = match (algorithm, hash) {
        (None, None) => Seen::Nothing,
        (Some(SignatureAlgorithm::RSA_PSS_RSAE), Some(HashAlgorithm::SHA256)) => {
            Seen::Is(SignatureScheme::RsaPssRsaeSha256)
        }
        (Some(SignatureAlgorithm::ECDSA), Some(HashAlgorithm::SHA256)) => {
            Seen::Is(SignatureScheme::EcdsaSecp256r1Sha256)
        }
        other => Seen::Other(format!("{other:?}")),
    };
    Ok(Negotiated {
        version,
        suite: CipherSuite::from_name(conn.cipher_suite().context("reading the cipher suite")?),
        group: conn
            .selected_key_exchange_group()
            .map_or(Seen::Nothing, NamedGroup::from_name),
        resumed: conn.resumed(),
        server_signature: conn
            .signature_scheme()
            .map_or(Seen::Nothing, SignatureScheme::from_name),
        client_signature,
    })
}

/// Both sides' reports, named.
pub fn both_sides(pair: &Pair) -> Result<[(&'static str, Negotiated); 2], HarnessError> {
    Ok([
        ("client", negotiated(&pair.client)?),
        ("server", negotiated(&pair.server)?),
    ])
}

/// The key type s2n-tls reports for a PKI's leaves.
fn key_type(pki: Pki) -> &'static str {
    match pki {
        Pki::Rsa4096 => "rsa4096",
        Pki::EcdsaP256 => "ecdsa_secp256r1",
    }
}

/// Checks both sides finished the `expected` handshake, on configs built
/// from `profile` (whose PKI and tickets it checks against).
///
/// A full TLS 1.2 handshake also offered an empty session ID and negotiated
/// the extended master secret ([`check_tls12_extras`]).
pub fn check_handshake(
    pair: &Pair,
    profile: &Profile,
    expected: &Expected,
) -> Result<(), HarnessError> {
    let resumed = expected.resumed;
    for (side, conn) in [("client", &pair.client), ("server", &pair.server)] {
        ensure(conn.handshake_complete(), || {
            format!("{side}: handshake is not complete")
        })?;
        check_handshake_type(side, conn, expected)?;
    }
    expected.check(&both_sides(pair)?)?;
    if !profile.tickets {
        // In particular no TLS 1.3 NewSessionTicket, which a server with
        // tickets sends right after the handshake.
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the handshake: {in_flight:?}")
        })?;
    }
    if resumed {
        return Ok(());
    }
    if expected.pins.version == TlsVersion::Tls12 {
        check_tls12_extras(pair, expected.pins.suite)?;
    }
    let pki = key_type(profile.pki);
    let key = pair
        .client
        .signature_public_key_type(Mode::Server)
        .context("reading the server's key type")?;
    ensure(key == pki, || {
        format!("server key is {key}, expected {pki}")
    })?;
    if expected.client_auth {
        ensure(pair.client.client_cert_used(), || {
            "the client did not send its certificate".to_owned()
        })?;
        let chain = pair
            .server
            .client_cert_chain_bytes()
            .context("reading the client's chain on the server")?;
        ensure(chain.is_some_and(|chain| !chain.is_empty()), || {
            "the server holds no verified client certificate chain".to_owned()
        })?;
        let key = pair
            .server
            .signature_public_key_type(Mode::Client)
            .context("reading the client's key type on the server")?;
        ensure(key == pki, || {
            format!("client key is {key}, expected {pki}")
        })?;
    }
    Ok(())
}

/// What s2n-tls's handshake type string must (not) contain.
fn check_handshake_type(
    side: &str,
    conn: &Connection,
    expected: &Expected,
) -> Result<(), HarnessError> {
    let handshake_type = conn
        .handshake_type()
        .context("reading the handshake type")?;
    let resumed = expected.resumed;
    ensure(handshake_type.contains("FULL_HANDSHAKE") != resumed, || {
        format!("{side}: handshake type {handshake_type}, expected resumed={resumed}")
    })?;
    ensure(!handshake_type.contains("HELLO_RETRY_REQUEST"), || {
        format!("{side}: handshake type {handshake_type}: a HelloRetryRequest was needed")
    })?;
    ensure(!handshake_type.contains("WITH_SESSION_TICKET"), || {
        format!("{side}: handshake type {handshake_type}: a TLS 1.2 ticket was issued")
    })?;
    let client_auth = expected.client_auth && !resumed;
    ensure(
        handshake_type.contains("CLIENT_AUTH") == client_auth,
        || format!("{side}: handshake type {handshake_type}, expected client auth {client_auth}"),
    )
}

/// Layout of the TLS 1.2 client session state that
/// `s2n_connection_get_session` writes (s2n-tls 0.3.47, `tls/s2n_resume.c`):
/// `S2N_STATE_WITH_SESSION_ID` (0), the session-ID length and bytes, then the
/// `S2N_SERIALIZED_FORMAT_TLS12_V3` (4) state: protocol version, cipher suite
/// (2 bytes), time (8), master secret (48) and `ems_negotiated` (1).
const STATE_WITH_SESSION_ID: u8 = 0;
const SERIALIZED_FORMAT_TLS12_V3: u8 = 4;
const TLS12_STATE_LEN: usize = 1 + 1 + 2 + 8 + 48 + 1;
/// `S2N_TLS12` in s2n.h.
const S2N_TLS12: u8 = 33;

/// Proves a TLS 1.2 handshake used the extended master secret (RFC 7627)
/// and the client offered an empty session ID (nothing to resume from).
///
/// The s2n-tls crate has no accessor for the extended master secret, but
/// the client's serialized TLS 1.2 session state ends with the connection's
/// `ems_negotiated` flag, which the client sets only after the ServerHello
/// carried the extended_master_secret extension in reply to its own. The
/// parse is self-checking: the state must have the 0.3.47 layout, name
/// TLS 1.2 and the pinned suite, and carry the same master secret that both
/// connections report, or the check fails rather than read a moved byte.
/// Equal master secrets on both sides also show the server derived it the
/// same way.
pub fn check_tls12_extras(pair: &Pair, suite: CipherSuite) -> Result<(), HarnessError> {
    let offered = pair
        .server
        .client_hello()
        .context("reading the ClientHello on the server")?
        .session_id()
        .context("reading the ClientHello's session ID")?;
    ensure(offered.is_empty(), || {
        format!("the client offered a {}-byte session ID", offered.len())
    })?;
    let client_secret = pair
        .client
        .master_secret()
        .context("reading the client's master secret")?;
    let server_secret = pair
        .server
        .master_secret()
        .context("reading the server's master secret")?;
    ensure(client_secret == server_secret, || {
        "client and server derived different master secrets".to_owned()
    })?;

    let len = pair
        .client
        .session_ticket_length()
        .context("reading the client's session-state length")?;
    let mut state = vec![0; len];
    let written = pair
        .client
        .session_ticket(&mut state)
        .context("serializing the client's session state")?;
    state.truncate(written);
    let layout = || {
        format!(
            "unexpected TLS 1.2 session-state layout ({} bytes)",
            state.len()
        )
    };
    let (&format, rest) = state.split_first().ok_or_else(layout)?;
    let (&id_len, rest) = rest.split_first().ok_or_else(layout)?;
    let tls12 = rest.get(usize::from(id_len)..).ok_or_else(layout)?;
    ensure(
        format == STATE_WITH_SESSION_ID && tls12.len() == TLS12_STATE_LEN,
        layout,
    )?;
    ensure(
        tls12[0] == SERIALIZED_FORMAT_TLS12_V3
            && tls12[1] == S2N_TLS12
            && tls12[2..4] == suite.iana().to_be_bytes()
            && tls12[12..60] == client_secret[..],
        || format!("session state does not describe this connection: {tls12:02x?}"),
    )?;
    ensure(tls12[60] == 1, || {
        format!(
            "the extended master secret was not negotiated (ems flag {})",
            tls12[60]
        )
    })
}
