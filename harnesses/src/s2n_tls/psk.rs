//! [`PskHandshake`]: a TLS 1.3 handshake with an external pre-shared key.

use regress_measure::{Harness, HarnessError};
use s2n_tls::enums::PskHmac;
use s2n_tls::psk::Psk;

use super::check::both_sides;
use super::config::Configs;
use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::paths::{Handshake, Profile};

/// The external PSK's identity, as both sides know it.
pub const IDENTITY: &[u8] = b"regress-external-psk";

/// The PSK's secret: fixed, so every process runs the same handshake.
const SECRET: [u8; 32] = [0x3c; 32];

/// An external PSK of `identity` with the fixed secret, for SHA-256 (the
/// hash of the pinned TLS_AES_128_GCM_SHA256).
pub fn psk(identity: &[u8]) -> Result<Psk, HarnessError> {
    let mut builder = Psk::builder().context("creating a PSK")?;
    builder
        .set_identity(identity)
        .context("setting the PSK identity")?
        .set_secret(&SECRET)
        .context("setting the PSK secret")?
        .set_hmac(PskHmac::SHA256)
        .context("setting the PSK hash")?;
    builder.build().context("building the PSK")
}

/// One TLS 1.3 handshake authenticated by an external pre-shared key, in
/// s2n-tls's only PSK key-exchange mode, psk_dhe_ke: on the configs of
/// [`Handshake::RSA4096`] (the server's certificate goes unused), with the
/// same PSK appended to both connections.
///
/// **Counted:** both sides' `poll_negotiate` until done: the client's
/// ClientHello with the pre_shared_key and psk_key_exchange_modes
/// extensions, its early secret from the PSK and its binder (an HMAC over
/// the partial ClientHello); the server matching the identity in its list,
/// deriving the same binder key and verifying the binder; a secp256r1 key
/// exchange (psk_dhe_ke keeps forward secrecy); both Finished messages. No
/// certificate is sent and nothing is signed or verified with a public key:
/// compare with `s2n_tls::handshake_rsa4096` and
/// `s2n_tls::session_resumption` (a ticket is a resumption PSK: the same
/// binder and key schedule, plus the ticket's decryption and a
/// NewSessionTicket).
///
/// **Not counted:** configs and the PSK object (`setup`), the fresh pair
/// and `append_psk` on each connection, which copies the PSK in
/// (`prepare`). Tickets are off, so no NewSessionTicket follows.
///
/// **Check:** both sides negotiated the PSK's identity
/// (`negotiated_psk_identity`) and finished the handshake with the same
/// secrets, the handshake type has no `FULL_HANDSHAKE` (no certificate, no
/// CertificateVerify), and the pinned version, suite and secp256r1 were
/// negotiated with no signature made ([`check_psk_handshake`]). A client
/// without the PSK, or with another identity, makes a full handshake, which
/// fails it.
#[derive(Debug, Clone, Copy, Default)]
pub struct PskHandshake;

/// The configs and the PSK both sides append.
#[derive(Debug)]
pub struct PskSetup {
    configs: Configs,
    psk: Psk,
}

impl Harness for PskHandshake {
    type Setup = PskSetup;
    type Input = Pair;
    type Output = Pair;

    fn sides(&self) -> bool {
        true
    }

    fn first_record(&self, _: &PskSetup, pair: &mut Pair) -> Result<bool, HarnessError> {
        crate::tls::first_record::<S2nTls>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<PskSetup, HarnessError> {
        Ok(PskSetup {
            configs: Configs::new(&Handshake::RSA4096.profile())?,
            psk: psk(IDENTITY)?,
        })
    }

    fn prepare(&self, setup: &PskSetup) -> Result<Pair, HarnessError> {
        let mut pair = Pair::new(&setup.configs)?;
        pair.client
            .append_psk(&setup.psk)
            .context("appending the PSK to the client")?;
        pair.server
            .append_psk(&setup.psk)
            .context("appending the PSK to the server")?;
        Ok(pair)
    }

    fn run(&self, _: &PskSetup, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, setup: &PskSetup, pair: &Pair) -> Result<(), HarnessError> {
        check_psk_handshake(pair, &setup.configs.profile)?;
        for (side, conn) in [("client", &pair.client), ("server", &pair.server)] {
            let len = conn
                .negotiated_psk_identity_length()
                .map_err(|e| format!("reading the {side}'s PSK identity length: {e}"))?;
            let mut identity = vec![0; len];
            conn.negotiated_psk_identity(&mut identity)
                .map_err(|e| format!("reading the {side}'s PSK identity: {e}"))?;
            ensure(identity == IDENTITY, || {
                format!(
                    "the {side} negotiated PSK identity {:?}, not {:?}",
                    String::from_utf8_lossy(&identity),
                    String::from_utf8_lossy(IDENTITY)
                )
            })?;
        }
        Ok(())
    }
}

/// The label of the exporter value both sides must agree on (any label
/// the application chooses; RFC 8446 section 7.5).
const EXPORTER_LABEL: &[u8] = b"EXPORTER-regress-psk";

/// Checks both sides finished a PSK handshake on `profile`'s pins: the same
/// exporter value on both (given out only once the handshake is complete),
/// a handshake type without `FULL_HANDSHAKE` (no certificate, no
/// CertificateVerify), HelloRetryRequest or client authentication, the
/// pinned version, suite and group with no handshake signature, no
/// certificate chain received, and nothing left in the transport. s2n-tls
/// reports an external-PSK handshake as not resumed (`resumed()` is for
/// resumption PSKs, from tickets); that is checked too.
fn check_psk_handshake(pair: &Pair, profile: &Profile) -> Result<(), HarnessError> {
    let mut exported = [[0u8; 32]; 2];
    for (conn, value) in [&pair.client, &pair.server].into_iter().zip(&mut exported) {
        conn.tls_exporter(EXPORTER_LABEL, b"", value)
            .context("exporting a value: the handshake is not complete")?;
    }
    ensure(exported[0] == exported[1], || {
        "client and server completed the handshake with different secrets".into()
    })?;
    for (side, conn) in [("client", &pair.client), ("server", &pair.server)] {
        let handshake_type = conn
            .handshake_type()
            .context("reading the handshake type")?;
        for kind in ["FULL_HANDSHAKE", "HELLO_RETRY_REQUEST", "CLIENT_AUTH"] {
            ensure(!handshake_type.contains(kind), || {
                format!("{side}: handshake type {handshake_type}: a PSK handshake has no {kind}")
            })?;
        }
        ensure(!conn.resumed(), || {
            format!("{side}: an external-PSK handshake reported as resumed")
        })?;
    }
    let mut sides = both_sides(pair)?;
    for (_, seen) in &mut sides {
        // "Resumed" in the shared vocabulary: no certificate, no signature.
        seen.resumed = true;
    }
    profile.expected(true).check(&sides)?;
    ensure(
        pair.client
            .peer_cert_chain()
            .map_or(true, |chain| chain.is_empty()),
        || "the client received a certificate chain".into(),
    )?;
    let in_flight = pair.in_flight();
    ensure(in_flight == (0, 0), || {
        format!("bytes left in the transport after the handshake: {in_flight:?}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client without the PSK, or with another identity, makes a full
    /// handshake with the server's certificate, which fails the check.
    #[test]
    fn check_fails_without_the_psk() {
        let harness = PskHandshake;
        let setup = harness.setup().expect("setup");
        regress_measure::harness::run_natively(&harness).expect("the path");

        let mut without = Pair::new(&setup.configs).expect("pair");
        without.server.append_psk(&setup.psk).expect("server PSK");
        let other = psk(b"another-identity").expect("psk");
        let mut another = Pair::new(&setup.configs).expect("pair");
        another.client.append_psk(&other).expect("client PSK");
        another.server.append_psk(&setup.psk).expect("server PSK");
        for (what, pair) in [("no PSK", without), ("another identity", another)] {
            let pair = harness.run(&setup, pair).expect("a full handshake");
            let error = harness.check(&setup, &pair).expect_err(what);
            assert!(
                error.to_string().contains("FULL_HANDSHAKE"),
                "{what}: {error}"
            );
        }
    }
}
