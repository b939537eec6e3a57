//! The flights a hostile client sends, built byte by byte ([`super::wire`])
//! from the path's [`Hostile`] input: ClientHellos by hand, and a real
//! client's resumption ClientHello tampered with.

use aws_lc_rs::agreement;
use aws_lc_rs::kem::{EncapsulationKey, ML_KEM_768};
use regress_measure::HarnessError;

use super::wire::{self, ext, ClientHello};
use crate::common::error::ensure;
use crate::common::pins::NamedGroup;
use crate::common::pki::SERVER_NAME;
use crate::paths::{Hostile, Profile};

/// `flight` with the last byte flipped: in a resumption ClientHello, the
/// last byte of the last binder (pre_shared_key is the last extension, its
/// binders end it). An error unless it is one record of one ClientHello.
pub fn tamper_binder(mut flight: Vec<u8>) -> Result<Vec<u8>, HarnessError> {
    let one_hello = flight.len() > 9
        && flight[0] == wire::HANDSHAKE
        && usize::from(u16::from_be_bytes([flight[3], flight[4]])) + 5 == flight.len()
        && flight[5] == 1;
    ensure(one_hello, || {
        format!(
            "the resumption flight is not one ClientHello record ({} bytes)",
            flight.len()
        )
    })?;
    if let Some(last) = flight.last_mut() {
        *last ^= 0x01;
    }
    Ok(flight)
}

/// `flight`, a real resumption ClientHello, with its pre_shared_key
/// replaced by [`Hostile::TICKETS`] copies of its first identity, copy `i`
/// with byte `len / 2 + i` flipped, each with the first binder.
pub fn corrupt_tickets(flight: &[u8]) -> Result<Vec<u8>, HarnessError> {
    let mut hello = ClientHello::parse(flight)?;
    let Some((ext::PRE_SHARED_KEY, psk)) = hello.extensions.last_mut() else {
        return Err("the resumption ClientHello ends in no pre_shared_key".into());
    };
    let (identity, binder) = wire::first_psk(psk)?;
    ensure(identity.len() > 2 * Hostile::TICKETS, || {
        format!("a ticket of {} bytes", identity.len())
    })?;
    let copies: Vec<Vec<u8>> = (0..Hostile::TICKETS)
        .map(|i| {
            let mut copy = identity.clone();
            copy[identity.len() / 2 + i] ^= 0x01;
            copy
        })
        .collect();
    *psk = wire::pre_shared_key(&copies, &binder)?;
    Ok(wire::records(&hello.encode()?, wire::MAX_FRAGMENT)?)
}

/// Group code points beyond [`NamedGroup`]'s.
const SECP384R1: u16 = 24;
const SECP521R1: u16 = 25;
/// RFC 7919's ffdhe3072.
pub(super) const FFDHE3072: u16 = 0x0101;
/// A GREASE group (RFC 8701): a client may offer it; no server knows it.
const GREASE_GROUP: u16 = 0x0a0a;

/// The groups every hostile ClientHello offers, with a key share for each
/// in [`Hostile::KeyShares`]: the post-quantum hybrid first, as clients of
/// 2026 send it.
pub(super) const GROUPS: [u16; 5] = [
    NamedGroup::X25519MlKem768.iana(),
    NamedGroup::X25519.iana(),
    NamedGroup::Secp256r1.iana(),
    SECP384R1,
    SECP521R1,
];

/// The TLS 1.3 suites of RFC 8446, the one `defaults` negotiates first:
/// rustls and OpenSSL servers take the client's order, s2n-tls its own, so
/// every server then picks its defaults' suite.
fn suites(defaults: &Profile) -> Vec<u16> {
    let first = defaults.pins.suite.iana();
    std::iter::once(first)
        .chain([0x1301, 0x1302, 0x1303].into_iter().filter(|s| *s != first))
        .collect()
}

/// Signature schemes: ECDSA and RSA-PSS/PKCS#1 of every hash, ECDSA P-256
/// first (the defaults' web chain signs with it).
pub(super) const SCHEMES: [u16; 9] = [
    0x0403, 0x0503, 0x0603, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601,
];

/// Unknown code points [`Hostile::MaxHello`] fills its lists with: ranges
/// no registry assigns (cipher suites 0x1a00.., groups 0x2a00..,
/// signature schemes 0x2b00.., extensions 0xe000..; GREASE values among
/// them are ignored all the same).
const FILLER_SUITES: u16 = 0x1a00;
const FILLER_GROUPS: u16 = 0x2a00;
const FILLER_SCHEMES: u16 = 0x2b00;
const FILLER_EXTENSIONS: u16 = 0xe000;
/// Where the extension filler must stop: private use from 0xff00, ECH's
/// 0xfe0d before.
const FILLER_EXTENSIONS_END: u16 = 0xf000;

/// Unknown entries of each list in [`Hostile::MaxHello`]; the extensions
/// then fill the record.
const FILLER_SUITE_COUNT: u16 = 2000;
const FILLER_GROUP_COUNT: u16 = 1000;
/// s2n-tls refuses a signature_algorithms list of more than 128 schemes
/// ("Max supported length of SignatureAlgorithms/SignatureSchemes list is
/// 128"): the list stays within it.
const MAX_SCHEMES: u16 = 128;

/// The length of each unknown ticket of [`Hostile::UnknownTickets`]: the
/// size of a real one (s2n-tls, rustls and OpenSSL issue tickets of about
/// 100 to 250 bytes).
const TICKET_LEN: usize = 192;

/// A public key of `group`, the same in every process: what a client
/// sends. A fresh random key would make a server's count depend on it
/// where its arithmetic is not constant-flow (OpenSSL's generic P-384 and
/// P-521 code), and the count must be repeatable for the same binary and
/// inputs. The private scalars are fixed (every byte 1, below every
/// curve's order); the ML-KEM-768 encapsulation key is built from fixed
/// coefficients below q (FIPS 203's modulus check passes), which is all a
/// server can check of it.
pub(super) fn public_key(group: u16) -> Result<Vec<u8>, HarnessError> {
    let ecdh =
        |algorithm: &'static agreement::Algorithm, len: usize| -> Result<Vec<u8>, HarnessError> {
            let key = agreement::PrivateKey::from_private_key(algorithm, &vec![1; len])
                .map_err(|_| "a fixed private key")?;
            let public = key.compute_public_key().map_err(|_| "a public key")?;
            Ok(public.as_ref().to_vec())
        };
    match group {
        23 => ecdh(&agreement::ECDH_P256, 32),
        29 => ecdh(&agreement::X25519, 32),
        SECP384R1 => ecdh(&agreement::ECDH_P384, 48),
        SECP521R1 => ecdh(&agreement::ECDH_P521, 66),
        FFDHE3072 => ffdhe3072_share(),
        0x11ec => {
            // X25519MLKEM768: the ML-KEM-768 encapsulation key, then X25519's
            // (draft-ietf-tls-ecdhe-mlkem).
            let mut share = mlkem768_encapsulation_key();
            EncapsulationKey::new(&ML_KEM_768, &share).map_err(|_| "an ML-KEM key")?;
            share.extend_from_slice(&ecdh(&agreement::X25519, 32)?);
            Ok(share)
        }
        other => Err(format!("no key share for group {other:#06x}").into()),
    }
}

/// An ffdhe3072 key share (RFC 7919): g^x mod p for a fixed 256-bit x
/// (every byte 1), left-padded to the prime's 384 bytes, as RFC 8446
/// section 4.2.8.1 asks. A share in the group's prime-order subgroup, as a
/// real client's is, so a server's checks of it pass (an all-but-one-limb
/// share such as 4 would let a server's arithmetic take shortcuts a real
/// share does not).
fn ffdhe3072_share() -> Result<Vec<u8>, HarnessError> {
    use openssl::bn::{BigNum, BigNumContext};
    let params = openssl::dh::Dh::params_from_pem(include_bytes!("../../../certs/ffdhe3072.pem"))
        .map_err(|e| format!("the ffdhe3072 parameters: {e}"))?;
    let bn = |e: openssl::error::ErrorStack| format!("ffdhe3072 arithmetic: {e}");
    let exponent = BigNum::from_slice(&[1; 32]).map_err(bn)?;
    let mut share = BigNum::new().map_err(bn)?;
    let mut context = BigNumContext::new().map_err(bn)?;
    share
        .mod_exp(
            params.generator(),
            &exponent,
            params.prime_p(),
            &mut context,
        )
        .map_err(bn)?;
    Ok(share.to_vec_padded(384).map_err(bn)?)
}

/// ML-KEM-768's modulus.
const MLKEM_Q: u32 = 3329;

/// An ML-KEM-768 encapsulation key: 768 coefficients below [`MLKEM_Q`]
/// (a fixed sequence), 12 bits each, then a fixed 32-byte seed rho.
fn mlkem768_encapsulation_key() -> Vec<u8> {
    let coefficient = |i: u32| i.wrapping_mul(2_654_435_761) % MLKEM_Q;
    let mut key = Vec::with_capacity(1184);
    for pair in 0..384u32 {
        let (a, b) = (coefficient(2 * pair), coefficient(2 * pair + 1));
        key.extend_from_slice(&[
            (a & 0xff) as u8,
            ((a >> 8) | ((b & 0x0f) << 4)) as u8,
            (b >> 4) as u8,
        ]);
    }
    key.extend_from_slice(&[0x42; 32]);
    key
}

/// The ClientHello every input starts from: TLS 1.3 only, SNI, the real
/// suites, groups and schemes, and key shares for `shares`.
fn base_hello(
    defaults: &Profile,
    groups: &[u16],
    shares: &[u16],
) -> Result<ClientHello, HarnessError> {
    let shares = shares
        .iter()
        .map(|group| Ok((*group, public_key(*group)?)))
        .collect::<Result<Vec<_>, HarnessError>>()?;
    Ok(ClientHello {
        random: [0x5a; 32],
        session_id: [0xa5; 32],
        suites: suites(defaults),
        extensions: vec![
            (ext::SERVER_NAME, wire::server_name(SERVER_NAME)?),
            (
                ext::SUPPORTED_VERSIONS,
                wire::supported_versions(&[wire::TLS13])?,
            ),
            (ext::SUPPORTED_GROUPS, wire::code_points(groups)?),
            (ext::SIGNATURE_ALGORITHMS, wire::code_points(&SCHEMES)?),
            (ext::KEY_SHARE, wire::key_share(&shares)?),
        ],
    })
}

/// `hello` offering `count` session tickets of [`TICKET_LEN`] bytes the
/// server never issued, each with a binder of SHA-256's length.
fn unknown_tickets(mut hello: ClientHello, count: usize) -> Result<ClientHello, HarnessError> {
    let identities: Vec<Vec<u8>> = (0..count)
        .map(|i| vec![0x40u8.wrapping_add(i as u8); TICKET_LEN])
        .collect();
    hello
        .extensions
        .push((ext::PSK_KEY_EXCHANGE_MODES, wire::psk_dhe_ke()));
    // pre_shared_key must be the last extension (RFC 8446 4.2.11).
    hello.extensions.push((
        ext::PRE_SHARED_KEY,
        wire::pre_shared_key(&identities, &[0xb1; 32])?,
    ));
    Ok(hello)
}

/// More tickets than fit a record: where [`Hostile::MaxUnknownTickets`]'s
/// search for the most that fit stops.
const MAX_FILLING_TICKETS: usize = 128;

/// The smallest ClientHello a server of `defaults` answers with a whole
/// handshake: its suite, `group` alone with `share`, ECDSA P-256 alone, no
/// server name ([`Hostile::MinimalHello`]).
fn minimal_hello(
    defaults: &Profile,
    group: u16,
    share: Vec<u8>,
) -> Result<ClientHello, HarnessError> {
    Ok(ClientHello {
        random: [0x5a; 32],
        session_id: [0xa5; 32],
        suites: vec![defaults.pins.suite.iana()],
        extensions: vec![
            (
                ext::SUPPORTED_VERSIONS,
                wire::supported_versions(&[wire::TLS13])?,
            ),
            (ext::SUPPORTED_GROUPS, wire::code_points(&[group])?),
            (ext::SIGNATURE_ALGORITHMS, wire::code_points(&SCHEMES[..1])?),
            (ext::KEY_SHARE, wire::key_share(&[(group, share)])?),
        ],
    })
}

/// The flight of [`Hostile::ZeroShare`] or [`Hostile::OffCurveShare`]
/// with a valid key share of its group instead: what their checks must
/// fail on (the server goes on with the handshake).
pub fn valid_share_flight(input: Hostile, defaults: &Profile) -> Result<Vec<u8>, HarnessError> {
    let group = match input {
        Hostile::ZeroShare | Hostile::OffCurveShare | Hostile::BadMlKemShare => {
            minimal_group(input).ok_or("no group")?
        }
        other => return Err(format!("{other:?} has no invalid key share").into()),
    };
    let hello = minimal_hello(defaults, group, public_key(group)?)?;
    Ok(wire::records(&hello.encode()?, wire::MAX_FRAGMENT)?)
}

/// The one group of [`Hostile::MinimalHello`]: the cheapest key share to
/// send, and a group every library's defaults accept.
const MINIMAL_GROUP: u16 = NamedGroup::X25519.iana();

/// The one group a minimal ClientHello input offers (and the server must
/// choose, or refuse): `None` for every other input.
pub(super) const fn minimal_group(input: Hostile) -> Option<u16> {
    match input {
        Hostile::MinimalHello | Hostile::ZeroShare => Some(MINIMAL_GROUP),
        Hostile::MinimalSecp384r1 => Some(SECP384R1),
        Hostile::MinimalSecp521r1 => Some(SECP521R1),
        Hostile::MinimalFfdhe3072 => Some(FFDHE3072),
        Hostile::OffCurveShare => Some(NamedGroup::Secp256r1.iana()),
        Hostile::BadMlKemShare => Some(NamedGroup::X25519MlKem768.iana()),
        _ => None,
    }
}

/// The shares a client of 2026 sends: the hybrid and X25519.
const USUAL_SHARES: [u16; 2] = [GROUPS[0], GROUPS[1]];

/// `count` consecutive code points from `start`, then `real`.
fn filled(start: u16, count: u16, real: &[u16]) -> Vec<u16> {
    (0..count)
        .map(|i| start + i)
        .chain(real.iter().copied())
        .collect()
}

/// Replaces the body of `hello`'s extension `kind`.
fn replace(hello: &mut ClientHello, kind: u16, body: Vec<u8>) {
    for (each, old) in &mut hello.extensions {
        if *each == kind {
            *old = body;
            return;
        }
    }
}

/// The flight of `input`: the bytes the hostile client sends.
/// `defaults`: what the victim's defaults negotiate, whose suite the
/// client offers first.
pub fn flight(input: Hostile, defaults: &Profile) -> Result<Vec<u8>, HarnessError> {
    let whole = |hello: ClientHello| -> Result<Vec<u8>, HarnessError> {
        Ok(wire::records(&hello.encode()?, wire::MAX_FRAGMENT)?)
    };
    match input {
        Hostile::MaxHello => {
            let mut hello = base_hello(
                defaults,
                &filled(FILLER_GROUPS, FILLER_GROUP_COUNT, &GROUPS),
                &USUAL_SHARES,
            )?;
            hello.suites = filled(FILLER_SUITES, FILLER_SUITE_COUNT, &suites(defaults));
            let count = MAX_SCHEMES - SCHEMES.len() as u16;
            let schemes = wire::code_points(&filled(FILLER_SCHEMES, count, &SCHEMES))?;
            replace(&mut hello, ext::SIGNATURE_ALGORITHMS, schemes);
            // Empty unknown extensions, before the real ones, until the
            // message fills one record.
            let room = wire::MAX_FRAGMENT.saturating_sub(hello.encode()?.len()) / 4;
            let unknown = u16::try_from(room)
                .ok()
                .filter(|n| *n <= FILLER_EXTENSIONS_END - FILLER_EXTENSIONS)
                .ok_or("more unknown extensions than unassigned code points")?;
            let real = std::mem::take(&mut hello.extensions);
            hello.extensions = (0..unknown)
                .map(|i| (FILLER_EXTENSIONS + i, Vec::new()))
                .chain(real)
                .collect();
            whole(hello)
        }
        Hostile::KeyShares => whole(base_hello(defaults, &GROUPS, &GROUPS)?),
        Hostile::Retry => {
            let mut hello = base_hello(defaults, &[GREASE_GROUP], &[])?;
            let groups: Vec<u16> = std::iter::once(GREASE_GROUP).chain(GROUPS).collect();
            replace(
                &mut hello,
                ext::SUPPORTED_GROUPS,
                wire::code_points(&groups)?,
            );
            replace(
                &mut hello,
                ext::KEY_SHARE,
                wire::key_share(&[(GREASE_GROUP, vec![0])])?,
            );
            whole(hello)
        }
        Hostile::Fragmented => Ok(wire::records(
            &base_hello(defaults, &GROUPS, &GROUPS)?.encode()?,
            1,
        )?),
        Hostile::MinimalHello
        | Hostile::MinimalSecp384r1
        | Hostile::MinimalSecp521r1
        | Hostile::MinimalFfdhe3072 => {
            let group = minimal_group(input).ok_or("no group")?;
            whole(minimal_hello(defaults, group, public_key(group)?)?)
        }
        Hostile::ZeroShare => whole(minimal_hello(defaults, MINIMAL_GROUP, vec![0; 32])?),
        Hostile::OffCurveShare => {
            // An uncompressed point (0x04, x, y) with x = 1 and y = 1:
            // 1 is not 1 + a + b modulo p, so it is not on secp256r1.
            let mut point = vec![0; 65];
            point[0] = 4;
            point[32] = 1;
            point[64] = 1;
            whole(minimal_hello(
                defaults,
                NamedGroup::Secp256r1.iana(),
                point,
            )?)
        }
        Hostile::BadMlKemShare => {
            // 768 coefficients of 12 bits, each 0xfff: 1,152 bytes of 0xff,
            // then the 32-byte seed rho, then a valid X25519 key.
            let mut share = vec![0xff; 1152];
            share.extend_from_slice(&[0x42; 32]);
            share.extend_from_slice(&public_key(NamedGroup::X25519.iana())?);
            whole(minimal_hello(
                defaults,
                NamedGroup::X25519MlKem768.iana(),
                share,
            )?)
        }
        Hostile::UnknownTickets => whole(unknown_tickets(
            base_hello(defaults, &GROUPS, &USUAL_SHARES)?,
            Hostile::TICKETS,
        )?),
        Hostile::MaxUnknownTickets => {
            let base = base_hello(defaults, &GROUPS, &USUAL_SHARES)?;
            // The most tickets whose ClientHello still fits one record.
            let mut fitting = None;
            for count in 1..=MAX_FILLING_TICKETS {
                let hello = unknown_tickets(base.clone(), count)?;
                if hello.encode()?.len() > wire::MAX_FRAGMENT {
                    break;
                }
                fitting = Some(hello);
            }
            whole(fitting.ok_or("not one ticket fits a record")?)
        }
        Hostile::KeyUpdateFlood
        | Hostile::TinyRecords
        | Hostile::KeyUpdateFloodSent
        | Hostile::TinyRecordsSent
        | Hostile::LongestClientChain
        | Hostile::ClientChainDecoys
        | Hostile::LargeRsaClient
        | Hostile::InvalidBinder
        | Hostile::CorruptTickets => {
            Err("no hand-built flight: the library's own client writes it".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::defaults::Defaults;
    use crate::tls::hostile::flight_size;

    #[test]
    fn every_flight_is_within_the_limits() {
        let defaults = crate::rustls::tls::Rustls::defaults();
        for input in Hostile::HELLOS {
            let bytes = flight(input, &defaults).expect("flight");
            let records = {
                let (client, server) = crate::common::transport::connected();
                client.send(&bytes).expect("fits the transport");
                server.incoming_records().expect("whole records")
            };
            let size = flight_size(&bytes);
            assert_eq!(size.bytes, bytes.len() as u64);
            assert_eq!(size.records, records.len() as u64, "{input:?}");
            assert_eq!(size.messages, 1);
            let max = records.iter().max().copied().unwrap_or(0);
            assert!(max <= wire::MAX_FRAGMENT, "{input:?}: a record of {max}");
            match input {
                Hostile::Fragmented => {
                    assert!(records.iter().all(|len| *len == 1));
                    assert!(records.len() > 1500, "{}", records.len());
                }
                Hostile::MaxHello => {
                    assert_eq!(records.len(), 1);
                    assert!(max > wire::MAX_FRAGMENT - 4, "{max}");
                }
                _ => assert_eq!(records.len(), 1, "{input:?}"),
            }
        }
    }

    #[test]
    fn key_shares_have_their_group_s_sizes() {
        for (group, len) in [
            (0x11ec, 1184 + 32),
            (29, 32),
            (23, 65),
            (24, 97),
            (25, 133),
            (FFDHE3072, 384),
        ] {
            assert_eq!(public_key(group).expect("key").len(), len, "{group:#06x}");
        }
        assert!(public_key(GREASE_GROUP).is_err());
        // The same key each time: a flight is the same bytes in every
        // process.
        for group in GROUPS {
            assert_eq!(
                public_key(group).expect("key"),
                public_key(group).expect("key")
            );
        }
    }
}
