//! What an OpenSSL handshake negotiated, checked against what its path
//! pins.
//!
//! [`negotiated`] maps one side's report to the shared
//! [`Negotiated`]. OpenSSL reports a
//! handshake signature as a signature type and a digest, on both sides (the
//! signer's "own", the verifier's "peer"); together with the key type,
//! which `check_key` asserts, that pins the scheme: an `rsa_pss_*`
//! signature by an rsaEncryption key is `rsa_pss_rsae_*`, an ECDSA-SHA256
//! one by a P-256 key is `ecdsa_secp256r1_sha256`. [`check_handshake`] adds
//! what only OpenSSL reports: the extended master secret in TLS 1.2, SNI,
//! both certificate verifications, and that no ticket or session ID was
//! issued where resumption is off.

use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::ssl::{NameType, SslRef, SslVersion};
use openssl::x509::{X509Ref, X509VerifyResult};
use regress_measure::HarnessError;

use super::ffi;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{
    CipherSuite, Expected, NamedGroup, Negotiated, Seen, SignatureScheme, TlsVersion,
};
use crate::common::pki::{Pki, SERVER_IP};
use crate::paths::Profile;

/// A handshake signature as OpenSSL reports it (type and digest).
fn scheme(kind: Option<Nid>, digest: Option<Nid>) -> Seen<SignatureScheme> {
    match (kind, digest) {
        (None, None) => Seen::Nothing,
        (Some(Nid::RSASSAPSS), Some(Nid::SHA256)) => Seen::Is(SignatureScheme::RsaPssRsaeSha256),
        (Some(Nid::RSAENCRYPTION), Some(Nid::SHA256)) => Seen::Is(SignatureScheme::RsaPkcs1Sha256),
        (Some(Nid::X9_62_ID_ECPUBLICKEY), Some(Nid::SHA256)) => {
            Seen::Is(SignatureScheme::EcdsaSecp256r1Sha256)
        }
        other => Seen::Other(format!("{other:?}")),
    }
}

/// What one side reports, in the shared vocabulary; `server` says which
/// side it is (whose signatures are its own).
pub fn negotiated(ssl: &SslRef, server: bool) -> Negotiated {
    let version = match ssl.version2() {
        Some(SslVersion::TLS1_2) => Seen::Is(TlsVersion::Tls12),
        Some(SslVersion::TLS1_3) => Seen::Is(TlsVersion::Tls13),
        None => Seen::Nothing,
        Some(_) => Seen::Other(ssl.version_str().to_owned()),
    };
    let group = ffi::negotiated_group(ssl);
    let own = scheme(ffi::own_signature_type(ssl), ffi::own_signature_digest(ssl));
    let peer = scheme(
        ffi::peer_signature_type(ssl),
        ffi::peer_signature_digest(ssl),
    );
    let (server_signature, client_signature) = if server { (own, peer) } else { (peer, own) };
    Negotiated {
        version,
        suite: ssl.current_cipher().map_or(Seen::Nothing, |cipher| {
            CipherSuite::from_name(cipher.name())
        }),
        group: match group.and_then(|nid| ffi::group_name(ssl, nid)) {
            // A resumed TLS 1.2 handshake exchanges no key; OpenSSL reports
            // the group of the session it resumed, not a negotiation.
            _ if ssl.session_reused() && ssl.version2() == Some(SslVersion::TLS1_2) => {
                Seen::Nothing
            }
            Some(name) => NamedGroup::from_name(name),
            None => group.map_or(Seen::Nothing, |nid| Seen::Other(format!("{nid:?}"))),
        },
        resumed: ssl.session_reused(),
        // OpenSSL 3.0 has no API that says so: `check_handshake` proves it
        // from the key share the client sent.
        retried: None,
        server_signature,
        client_signature,
    }
}

/// Both sides' reports, named.
pub fn both_sides(pair: &Pair) -> [(&'static str, Negotiated); 2] {
    [
        ("client", negotiated(pair.client.ssl(), false)),
        ("server", negotiated(pair.server.ssl(), true)),
    ]
}

/// Checks that `cert`, the client's leaf when `client`, else the server's,
/// carries a key of `pki`'s type for that side.
fn check_key(pki: Pki, cert: &X509Ref, client: bool) -> Result<(), HarnessError> {
    let key = cert
        .public_key()
        .context("reading a peer certificate's key")?;
    match pki {
        Pki::Rsa4096 | Pki::WebRsa2048 | Pki::Rsa4096LargeClient(_) => {
            let bits = match pki {
                Pki::Rsa4096LargeClient(large) if client => large.bits(),
                Pki::WebRsa2048 => 2048,
                _ => 4096,
            };
            ensure(key.id() == Id::RSA && key.bits() == bits, || {
                format!(
                    "peer key is {:?}/{} bits, expected RSA-{bits}",
                    key.id(),
                    key.bits()
                )
            })
        }
        Pki::EcdsaP256
        | Pki::WebEcdsaP256
        | Pki::EcdsaP256CnOnly
        | Pki::EcdsaP256ClientId
        | Pki::EcdsaP256IpSan
        | Pki::EcdsaP256ClientChain(_) => {
            let curve = key.ec_key().ok().and_then(|ec| ec.group().curve_name());
            ensure(
                key.id() == Id::EC && curve == Some(Nid::X9_62_PRIME256V1),
                || format!("peer key is {:?} on {curve:?}, expected P-256", key.id()),
            )
        }
    }
}

/// Proves a HelloRetryRequest happened exactly where the path has one.
/// OpenSSL reports none, but its client sends one key share, for the first
/// group of its list ([`super::context`]), and the server can only choose
/// a group it has a share for or ask for another with a HelloRetryRequest.
/// So with the client's list `[guess, pinned]` and the pinned group
/// negotiated (which `Expected::check` has compared), the server retried;
/// with a list of the pinned group alone, it cannot have.
fn check_retry(profile: &Profile, expected: &Expected) -> Result<(), HarnessError> {
    let groups = profile.client_groups();
    let first_share = groups.first().copied();
    let retried = first_share != Some(expected.pins.group);
    ensure(retried == expected.retried, || {
        format!(
            "the client's one key share was for {}, the handshake negotiated {}: \
             HelloRetryRequest {retried}, expected {}",
            first_share.map_or("nothing", |group| group.name()),
            expected.pins.group.name(),
            expected.retried
        )
    })
}

/// Checks that the server's leaf names an IP address exactly when `pki`
/// names its server by one: then its subjectAltNames are [`SERVER_IP`] alone
/// (no DNS name); otherwise they hold no IP address.
fn check_ip_names(pki: Pki, leaf: &X509Ref) -> Result<(), HarnessError> {
    let names = leaf.subject_alt_names();
    let names: Vec<_> = names.iter().flatten().collect();
    let ips: Vec<&[u8]> = names.iter().filter_map(|name| name.ipaddress()).collect();
    let dns = names.iter().filter(|name| name.dnsname().is_some()).count();
    let address: std::net::IpAddr = SERVER_IP.parse().context("parsing the server's address")?;
    let octets = match address {
        std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
        std::net::IpAddr::V6(v6) => v6.octets().to_vec(),
    };
    let ok = if pki.names_server_by_ip() {
        ips == [octets.as_slice()] && dns == 0
    } else {
        ips.is_empty()
    };
    ensure(ok, || {
        format!(
            "the server's leaf has IP addresses {ips:?} and {dns} DNS names among its \
             subjectAltNames; the path's PKI {} its server by IP address",
            if pki.names_server_by_ip() {
                "names"
            } else {
                "does not name"
            }
        )
    })
}

/// Checks that both sides finished the `expected` handshake, on contexts
/// built from `profile` (whose PKI and tickets it checks against).
///
/// Without tickets, also: nothing is left in the transport (so no ticket or
/// other message was sent after the handshake), the client's session holds
/// no ticket, and in TLS 1.2 no session ID (with the server's session cache
/// off, OpenSSL sends an empty one: nothing to resume statefully either).
pub fn check_handshake(
    pair: &Pair,
    profile: &Profile,
    expected: &Expected,
) -> Result<(), HarnessError> {
    for (side, stream) in [("client", &pair.client), ("server", &pair.server)] {
        let ssl = stream.ssl();
        ensure(ssl.is_init_finished(), || {
            format!("{side}: the handshake is not finished")
        })?;
        if expected.pins.version == TlsVersion::Tls12 {
            ensure(ffi::extended_master_secret(ssl), || {
                format!("{side}: no extended master secret")
            })?;
        }
    }
    expected.check(&both_sides(pair))?;
    check_retry(profile, expected)?;

    let client = pair.client.ssl();
    let server = pair.server.ssl();
    // A server resuming a TLS 1.2 session takes its name from the session
    // (RFC 6066, section 3), which OpenSSL keeps only when the full
    // handshake's SNI callback acknowledged it: none here.
    let servername = server.servername(NameType::HOST_NAME);
    let resumed_tls12 = expected.resumed && expected.pins.version == TlsVersion::Tls12;
    // The client connected to the PKI's host: SNI `localhost`, none for an
    // IP address.
    let sni = profile.pki.host().sni().filter(|_| !resumed_tls12);
    ensure(servername == sni, || {
        format!("server saw SNI {servername:?}, expected {sni:?}")
    })?;
    // Certificates: the client verified the server's (kept in the session
    // when resumed); with mTLS the server verified the client's.
    let server_cert = client
        .peer_certificate()
        .ok_or("the client has no server certificate")?;
    check_key(profile.pki, &server_cert, false)?;
    // A CN-only leaf verified (below) with the host name set proves the CN
    // fallback ran; a leaf with a subjectAltName would not need it.
    ensure(
        server_cert.subject_alt_names().is_some() != profile.pki.names_host_in_cn_only(),
        || {
            format!(
                "the server's leaf {} a subjectAltName, and the path's PKI {} CN-only",
                if server_cert.subject_alt_names().is_some() {
                    "has"
                } else {
                    "has no"
                },
                if profile.pki.names_host_in_cn_only() {
                    "is"
                } else {
                    "is not"
                }
            )
        },
    )?;
    check_ip_names(profile.pki, &server_cert)?;
    // With the host (or, on the IP path, the address alone) set to verify.
    ensure(client.verify_result() == X509VerifyResult::OK, || {
        format!("client's verification: {}", client.verify_result())
    })?;
    match server.peer_certificate() {
        Some(client_cert) if expected.client_auth => {
            check_key(profile.pki, &client_cert, true)?;
            ensure(server.verify_result() == X509VerifyResult::OK, || {
                format!("server's verification: {}", server.verify_result())
            })?;
        }
        None if !expected.client_auth => {}
        Some(_) => return Err("the server holds a client certificate without mTLS".into()),
        None => return Err("the server has no client certificate".into()),
    }

    if profile.resumption.is_some() {
        return Ok(());
    }
    let in_flight = pair.in_flight();
    ensure(in_flight == (0, 0), || {
        format!("bytes left in the transport after the handshake: {in_flight:?}")
    })?;
    let session = client.session().ok_or("the client has no session")?;
    ensure(!ffi::session_has_ticket(session), || {
        "the client received a session ticket".to_owned()
    })?;
    if expected.pins.version == TlsVersion::Tls12 {
        ensure(session.id().is_empty(), || {
            format!(
                "the server issued a session ID of {} bytes",
                session.id().len()
            )
        })?;
    }
    Ok(())
}
