//! What an s2n-tls handshake negotiated, checked against what its path
//! pins.
//!
//! [`negotiated`] maps one side's report to the shared
//! [`Negotiated`], which the shared
//! [`Expected::check`] compares. What only s2n-tls reports is checked here
//! too: the handshake type (full or resumed, a HelloRetryRequest or not
//! (reported in [`Negotiated::retried`] and compared there), no
//! TLS 1.2 ticket, client authentication), that both sides completed the
//! handshake with the same secret, the certificate chains each side
//! validated, and that nothing is left in the transport.
//!
//! Only APIs that s2n-tls 0.3.42 to 0.3.47 all have are used here (0.3.42
//! lacks `Connection::handshake_complete` and
//! `Connection::signature_public_key_type`; see `completion_secret` and
//! `check_chain` for what replaces them).

use regress_measure::HarnessError;
use s2n_tls::cert_chain::{self, CertificateChain};
use s2n_tls::connection::Connection;
use s2n_tls::enums::{HashAlgorithm, SignatureAlgorithm, Version};

use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{
    CipherSuite, Expected, NamedGroup, Negotiated, Seen, SignatureScheme, TlsVersion,
};
use crate::common::pki::{check_leaf_names, Pki};
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
        (Some(SignatureAlgorithm::RSA_PKCS1), Some(HashAlgorithm::SHA256)) => {
            Seen::Is(SignatureScheme::RsaPkcs1Sha256)
        }
        (Some(SignatureAlgorithm::ECDSA), Some(HashAlgorithm::SHA256)) => {
            Seen::Is(SignatureScheme::EcdsaSecp256r1Sha256)
        }
        other => Seen::Other(format!("{other:?}")),
    };
    Ok(Negotiated {
        suite: CipherSuite::from_name(conn.cipher_suite().context("reading the cipher suite")?),
        group: conn
            .selected_key_exchange_group()
            .map_or(Seen::Nothing, NamedGroup::from_name),
        resumed: conn.resumed(),
        retried: Some(
            conn.handshake_type()
                .context("reading the handshake type")?
                .contains("HELLO_RETRY_REQUEST"),
        ),
        // A TLS 1.2 server chooses its scheme as it reads the ClientHello,
        // before it decides to resume, and reports it; a resumed handshake
        // signs nothing (its type has no FULL_HANDSHAKE, which
        // `check_handshake_type` asserts).
        server_signature: match conn.signature_scheme() {
            _ if conn.resumed() && version == Seen::Is(TlsVersion::Tls12) => Seen::Nothing,
            scheme => scheme.map_or(Seen::Nothing, SignatureScheme::from_name),
        },
        version,
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

/// The label of the TLS 1.3 exporter value [`completion_secret`] derives
/// (RFC 8446 section 7.5; any label the application chooses).
const COMPLETION_LABEL: &[u8] = b"EXPORTER-regress-handshake-complete";

/// A secret s2n-tls gives out only once `conn`'s handshake is complete: a
/// 32-byte TLS 1.3 exporter value, or the TLS 1.2 master secret. Both
/// `s2n_connection_tls_exporter` and `s2n_connection_get_master_secret`
/// fail with `S2N_ERR_HANDSHAKE_NOT_COMPLETE` until `is_handshake_complete`
/// holds, the condition `Connection::handshake_complete` (in 0.3.47, not in
/// 0.3.42) reports; and the same value on both sides also shows they derived
/// the same keys.
fn completion_secret(side: &str, conn: &Connection) -> Result<Vec<u8>, HarnessError> {
    let version = conn.actual_protocol_version();
    let secret = match version {
        Ok(Version::TLS13) => {
            let mut value = vec![0; 32];
            conn.tls_exporter(COMPLETION_LABEL, b"", &mut value)
                .map(|()| value)
        }
        Ok(Version::TLS12) => conn.master_secret(),
        other => return Err(format!("{side}: no TLS 1.2 or 1.3 handshake ({other:?})").into()),
    };
    secret.map_err(|error| format!("{side}: handshake is not complete ({error})").into())
}

/// The DER certificates of `chain`, in order.
fn ders(chain: &CertificateChain<'_>) -> Result<Vec<Vec<u8>>, HarnessError> {
    chain.iter().map(|cert| Ok(cert?.der()?.to_vec())).collect()
}

/// Checks that `conn` validated exactly the chain in `pem` (leaf, then CA),
/// as s2n-tls itself parses that PEM. The leaf carries the key the peer
/// signed with, so this also pins the peer's key type (RSA-4096 or P-256),
/// what `signature_public_key_type` reported before.
fn check_chain(conn: &Connection, peer: &str, pem: &[u8]) -> Result<(), HarnessError> {
    let validated = conn
        .peer_cert_chain()
        .map_err(|error| format!("reading the {peer}'s validated chain: {error}"))?;
    let mut expected = cert_chain::Builder::new()?;
    expected
        .load_public_pem(pem)
        .context("parsing the PKI's chain")?;
    let expected = ders(&expected.build()?)?;
    let validated = ders(&validated)?;
    ensure(validated == expected, || {
        format!(
            "the {peer}'s validated chain ({} certificates) is not the test PKI's ({})",
            validated.len(),
            expected.len()
        )
    })
}

/// The chain each side of a `pki` handshake must have validated: what the
/// peer sent, and for a web PKI the root the client trusts after it (the
/// laboratory chains already end with their CA).
fn chains(pki: Pki) -> (Vec<u8>, &'static [u8]) {
    let mut server = pki.server_chain_pem().to_vec();
    if pki.is_web() {
        server.extend_from_slice(pki.ca_pem());
    }
    (server, pki.client_chain_pem())
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
    let client = completion_secret("client", &pair.client)?;
    let server = completion_secret("server", &pair.server)?;
    ensure(client == server, || {
        "client and server completed the handshake with different secrets".to_owned()
    })?;
    // A full TLS 1.2 handshake with tickets on issues one within the
    // handshake; s2n-tls renews none on resumption.
    let tls12_ticket = profile.resumption.is_some()
        && expected.pins.version == TlsVersion::Tls12
        && !expected.resumed;
    for (side, conn) in [("client", &pair.client), ("server", &pair.server)] {
        check_handshake_type(side, conn, expected, tls12_ticket)?;
    }
    expected.check(&both_sides(pair)?)?;
    if profile.resumption.is_none() {
        // In particular no TLS 1.3 NewSessionTicket, which a server with
        // tickets sends right after the handshake.
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the handshake: {in_flight:?}")
        })?;
    }
    // The client connected to the PKI's host: SNI `localhost`, none for an
    // IP address.
    let sni = pair.server.server_name();
    let host_sni = profile.pki.host().sni();
    ensure(sni == host_sni, || {
        format!("server saw SNI {sni:?}, expected {host_sni:?}")
    })?;
    if resumed {
        return Ok(());
    }
    if expected.pins.version == TlsVersion::Tls12 {
        check_tls12_extras(pair, expected.pins.suite, tls12_ticket)?;
    }
    let (server_chain, client_chain) = chains(profile.pki);
    check_chain(&pair.client, "server", &server_chain)?;
    // The leaf the client validated names the host it connected to, in that
    // form (an IP address on the IP-named path): its verify-host callback,
    // which accepts that host alone, accepted it.
    let validated = pair
        .client
        .peer_cert_chain()
        .map_err(|error| format!("reading the server's validated chain: {error}"))?;
    let leaf = ders(&validated)?
        .into_iter()
        .next()
        .ok_or("the server's validated chain is empty")?;
    check_leaf_names(profile.pki, &leaf)?;
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
        check_chain(&pair.server, "client", client_chain)?;
    }
    Ok(())
}

/// What s2n-tls's handshake type string must (not) contain.
fn check_handshake_type(
    side: &str,
    conn: &Connection,
    expected: &Expected,
    tls12_ticket: bool,
) -> Result<(), HarnessError> {
    let handshake_type = conn
        .handshake_type()
        .context("reading the handshake type")?;
    let resumed = expected.resumed;
    ensure(handshake_type.contains("FULL_HANDSHAKE") != resumed, || {
        format!("{side}: handshake type {handshake_type}, expected resumed={resumed}")
    })?;
    ensure(
        handshake_type.contains("WITH_SESSION_TICKET") == tls12_ticket,
        || {
            format!(
                "{side}: handshake type {handshake_type}, expected a TLS 1.2 ticket {tls12_ticket}"
            )
        },
    )?;
    let client_auth = expected.client_auth && !resumed;
    ensure(
        handshake_type.contains("CLIENT_AUTH") == client_auth,
        || format!("{side}: handshake type {handshake_type}, expected client auth {client_auth}"),
    )
}

/// Layout of the TLS 1.2 client session state that
/// `s2n_connection_get_session` writes (s2n-tls 0.3.42 to 0.3.47,
/// `tls/s2n_resume.c`):
/// `S2N_STATE_WITH_SESSION_ID` (0), the session-ID length and bytes, then the
/// `S2N_SERIALIZED_FORMAT_TLS12_V3` (4) state: protocol version, cipher suite
/// (2 bytes), time (8), master secret (48) and `ems_negotiated` (1).
const STATE_WITH_SESSION_ID: u8 = 0;
/// `S2N_STATE_WITH_SESSION_TICKET`: the ticket's length (2 bytes) and
/// bytes come first instead of a session ID.
const STATE_WITH_SESSION_TICKET: u8 = 1;
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
/// parse is self-checking: the state must have that layout, name
/// TLS 1.2 and the pinned suite, and carry the same master secret that both
/// connections report, or the check fails rather than read a moved byte.
/// Equal master secrets on both sides also show the server derived it the
/// same way.
///
/// With `ticket`, the server issued a TLS 1.2 ticket: the state holds it in
/// place of a session ID.
pub fn check_tls12_extras(
    pair: &Pair,
    suite: CipherSuite,
    ticket: bool,
) -> Result<(), HarnessError> {
    let offered = pair
        .server
        .client_hello()
        .context("reading the ClientHello on the server")?
        .session_id()
        .context("reading the ClientHello's session ID")?;
    // A client that asks for a ticket sends a session ID of its own, by
    // which it recognises a resumption (RFC 5077, section 3.4).
    let id_len = if ticket { 32 } else { 0 };
    ensure(offered.len() == id_len, || {
        format!(
            "the client offered a {}-byte session ID, expected {id_len}",
            offered.len()
        )
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
    let tls12 = if ticket {
        ensure(format == STATE_WITH_SESSION_TICKET, layout)?;
        let (len, rest) = rest.split_first_chunk::<2>().ok_or_else(layout)?;
        rest.get(usize::from(u16::from_be_bytes(*len))..)
    } else {
        ensure(format == STATE_WITH_SESSION_ID, layout)?;
        let (&id_len, rest) = rest.split_first().ok_or_else(layout)?;
        rest.get(usize::from(id_len)..)
    }
    .ok_or_else(layout)?;
    ensure(tls12.len() == TLS12_STATE_LEN, layout)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::Handshake;
    use crate::s2n_tls::config::Configs;
    use crate::s2n_tls::tls::S2nTls;
    use crate::tls::testing;

    /// Every pinned handshake passes, each with the chains of its PKI.
    #[test]
    fn finished_handshakes_pass() {
        for path in Handshake::ALL
            .into_iter()
            .filter(|path| path.resumption.is_none())
        {
            let (configs, pair) = testing::one_run::<S2nTls>(path);
            check_handshake(&pair, &configs.profile, &path.expected()).expect("pinned");
        }
    }

    /// A handshake stopped half-way fails the check on both sides: neither
    /// an exporter value nor a master secret is given out before the end
    /// (what `handshake_complete` reported).
    #[test]
    fn an_unfinished_handshake_fails() {
        for path in [Handshake::RSA4096, Handshake::ALL[4]] {
            let configs = Configs::new(&path.profile()).expect("configs");
            let mut pair = Pair::new(&configs).expect("pair");
            let error = check_handshake(&pair, &configs.profile, &path.expected())
                .expect_err("nothing was sent yet");
            assert!(error.to_string().starts_with("client: "), "{path}: {error}");
            // ClientHello, then the server's first flight: the server has
            // negotiated the version but not finished.
            assert!(pair.client.poll_negotiate().is_pending());
            assert!(pair.server.poll_negotiate().is_pending());
            let error = completion_secret("server", &pair.server).expect_err("half-way");
            assert!(
                error.to_string().contains("handshake is not complete"),
                "{path}: {error}"
            );
            pair.handshake().expect("the rest of the handshake");
            check_handshake(&pair, &configs.profile, &path.expected()).expect("finished");
        }
    }

    /// A side that validated another PKI's chain fails: the server's chain
    /// on the client, the client's on an mTLS server.
    #[test]
    fn another_pki_chain_fails() {
        let (_, pair) = testing::one_run::<S2nTls>(Handshake::ALL[2]);
        let (server_chain, client_chain) = chains(Pki::Rsa4096);
        check_chain(&pair.client, "server", &server_chain).expect("the RSA server chain");
        check_chain(&pair.server, "client", client_chain).expect("the RSA client chain");
        let (other_server, other_client) = chains(Pki::EcdsaP256);
        for (conn, peer, pem) in [
            (&pair.client, "server", &other_server[..]),
            (&pair.client, "server", client_chain),
            (&pair.server, "client", other_client),
            (&pair.server, "client", &server_chain[..]),
        ] {
            let error = check_chain(conn, peer, pem).expect_err("not the chain it validated");
            assert!(
                error.to_string().contains("is not the test PKI's"),
                "{error}"
            );
        }
        // The whole check, on a profile naming the other PKI.
        let mut wrong = Handshake::ALL[2].profile();
        wrong.pki = Pki::EcdsaP256;
        let error = check_handshake(&pair, &wrong, &Handshake::ALL[2].expected())
            .expect_err("an RSA handshake checked as ECDSA");
        assert!(
            error.to_string().contains("server's validated chain"),
            "{error}"
        );
    }

    /// Both sides' completion secrets agree, and differ between handshakes.
    #[test]
    fn completion_secrets_agree_per_handshake() {
        let (_, one) = testing::one_run::<S2nTls>(Handshake::RSA4096);
        let (_, two) = testing::one_run::<S2nTls>(Handshake::RSA4096);
        let secret = completion_secret("client", &one.client).expect("complete");
        assert_eq!(secret.len(), 32);
        assert_eq!(
            secret,
            completion_secret("server", &one.server).expect("complete")
        );
        assert_ne!(
            secret,
            completion_secret("client", &two.client).expect("complete")
        );
        assert!(matches!(
            one.client.actual_protocol_version(),
            Ok(Version::TLS13)
        ));
    }
}
