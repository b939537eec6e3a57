//! What a rustls handshake negotiated, checked against what its path pins.
//!
//! [`both_sides`] maps each side's report to the shared
//! [`Negotiated`]; the schemes of the
//! handshake signatures come from the verifiers' logs ([`super::verify`]).
//! [`check_handshake`] adds what only rustls reports: the handshake kind
//! (a HelloRetryRequest exactly where the path has one), the SNI the server saw, what the server queued
//! after the handshake, the chains each side received, and that the
//! server's leaf names the host the client connected to, in its form.

use regress_measure::HarnessError;

use super::api::{self, HandshakeKind, Outputs, ProtocolVersion};
use super::config::Configs;
use super::transport::Pair;
use crate::common::error::ensure;
use crate::common::pins::{
    CipherSuite, Expected, NamedGroup, Negotiated, Seen, SignatureScheme, TlsVersion,
};
use crate::common::pki::check_leaf_names;

/// One side's version, suite, group and handshake kind.
fn negotiated(
    conn: &Outputs,
    server_signature: Seen<SignatureScheme>,
    client_signature: Seen<SignatureScheme>,
) -> Negotiated {
    let version = match conn.protocol_version() {
        None => Seen::Nothing,
        Some(ProtocolVersion::TLSv1_2) => Seen::Is(TlsVersion::Tls12),
        Some(ProtocolVersion::TLSv1_3) => Seen::Is(TlsVersion::Tls13),
        Some(other) => Seen::Other(format!("{other:?}")),
    };
    Negotiated {
        version,
        suite: conn
            .negotiated_cipher_suite()
            .map_or(Seen::Nothing, |suite| {
                CipherSuite::from_iana(suite.suite().into())
            }),
        group: conn
            .negotiated_key_exchange_group()
            .map_or(Seen::Nothing, |group| {
                NamedGroup::from_iana(group.name().into())
            }),
        resumed: conn.handshake_kind() == Some(HandshakeKind::Resumed),
        retried: conn
            .handshake_kind()
            .map(|kind| kind == HandshakeKind::FullWithHelloRetryRequest),
        server_signature,
        client_signature,
    }
}

/// A scheme a verifier noted, in the shared vocabulary.
fn noted(scheme: Option<api::SignatureScheme>) -> Seen<SignatureScheme> {
    scheme.map_or(Seen::Nothing, |scheme| {
        SignatureScheme::from_iana(scheme.into())
    })
}

/// Both sides' reports, named. With `signatures`, the schemes the verifiers
/// noted since the last check (and taken from their logs); without, they
/// are not compared (a later check in the connection's life, after the
/// handshake's check took them).
pub fn both_sides(
    configs: &Configs,
    pair: &Pair,
    signatures: bool,
) -> [(&'static str, Negotiated); 2] {
    let (server_signature, client_signature) = if signatures {
        let client_signature = match &configs.client_verifier {
            Some(verifier) => noted(verifier.log.take()),
            None => Seen::Nothing,
        };
        (noted(configs.server_verifier.log.take()), client_signature)
    } else {
        (Seen::NotVisible, Seen::NotVisible)
    };
    [
        (
            "client",
            negotiated(pair.client.outputs(), server_signature, Seen::NotVisible),
        ),
        (
            "server",
            negotiated(pair.server.outputs(), Seen::NotVisible, client_signature),
        ),
    ]
}

/// Checks that both sides finished the `expected` handshake on `configs`.
///
/// A full handshake also shows the chains each side received; a resumed one
/// has no certificates and no signatures: its proof is both sides reporting
/// [`HandshakeKind::Resumed`].
pub fn check_handshake(
    configs: &Configs,
    pair: &Pair,
    expected: &Expected,
) -> Result<(), HarnessError> {
    check_kind(pair, expected.resumed, expected.retried)?;
    expected.check(&both_sides(configs, pair, true))?;
    // The client connected to the PKI's host: SNI `localhost`, none for an
    // IP address.
    let sni = api::sni(&pair.server);
    let host_sni = configs.profile.pki.host().sni();
    ensure(sni == host_sni, || {
        format!("server saw SNI {sni:?}, expected {host_sni:?}")
    })?;
    // A TLS 1.2 server sends its ticket within the handshake.
    let tickets =
        configs.profile.resumption.is_some() && configs.profile.pins.version == TlsVersion::Tls13;
    ensure(pair.server.wants_write() == tickets, || {
        format!(
            "server has post-handshake data queued: {}, expected {tickets} (a session ticket)",
            pair.server.wants_write()
        )
    })?;
    ensure(!pair.client.wants_write(), || {
        "the client has data queued after the handshake".into()
    })?;
    let in_flight = pair.in_flight();
    ensure(in_flight == (0, 0), || {
        format!("bytes left in the transport after the handshake: {in_flight:?}")
    })?;
    if expected.resumed {
        return Ok(());
    }
    let received = api::peer_chain(pair.client.outputs());
    ensure(received.as_ref() == Some(&configs.server_chain), || {
        "the client did not receive the test server chain".into()
    })?;
    // The client's verifier accepted that leaf for the configs' server name
    // (an IP address on the IP-named path), which it names.
    let leaf = configs
        .server_chain
        .first()
        .ok_or("the test server chain is empty")?;
    check_leaf_names(configs.profile.pki, leaf)?;
    let received = api::peer_chain(pair.server.outputs());
    if expected.client_auth {
        ensure(received.as_ref() == Some(&configs.client_chain), || {
            "the server did not receive the test client chain".into()
        })
    } else {
        ensure(received.is_none(), || {
            "the server received a client certificate it did not ask for".into()
        })
    }
}

/// Both sides are done with a full handshake (with a HelloRetryRequest
/// exactly when `retried`), or a resumed one.
pub fn check_kind(pair: &Pair, resumed: bool, retried: bool) -> Result<(), HarnessError> {
    let kind = match (resumed, retried) {
        (true, _) => HandshakeKind::Resumed,
        (false, true) => HandshakeKind::FullWithHelloRetryRequest,
        (false, false) => HandshakeKind::Full,
    };
    let sides = [
        (
            "client",
            pair.client.is_handshaking(),
            pair.client.outputs(),
        ),
        (
            "server",
            pair.server.is_handshaking(),
            pair.server.outputs(),
        ),
    ];
    for (side, handshaking, conn) in sides {
        ensure(!handshaking, || format!("{side}: still handshaking"))?;
        let actual = conn.handshake_kind();
        ensure(actual == Some(kind), || {
            format!("{side}: handshake kind {actual:?}, expected {kind:?}")
        })?;
    }
    Ok(())
}
