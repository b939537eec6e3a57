//! Full handshakes: TLS 1.3 with each certificate hierarchy, with and without
//! client authentication, and TLS 1.2.
//!
//! Every harness here counts the same thing, the handshake between a fresh
//! client and server connection, and differs only in the configs `setup`
//! builds and in what `check` demands. [`HandshakeRsa4096`] documents the
//! shared shape; the others document their differences.

use regress_measure::{Harness, HarnessError};

use super::transport::Pair;
use super::{
    check_negotiated, client_config, ensure, new_pair, pinned_policy, policy, server_config,
    ClientOptions, Configs, Context as _, Expected, Hierarchy, ServerOptions,
    HANDSHAKE_PIPE_CAPACITY, TLS12_CLIENT_POLICY,
};

/// Configs for a full handshake: the client on `client_policy`, the server
/// on [`PINNED_POLICY`](super::PINNED_POLICY), both of `hierarchy`, with a
/// required client certificate when `mutual`. No tickets anywhere.
fn full_handshake_configs(
    client_policy: &str,
    hierarchy: Hierarchy,
    mutual: bool,
) -> Result<Configs, HarnessError> {
    let server_policy = pinned_policy()?;
    let client_policy = policy(client_policy)?;
    Ok(Configs {
        client: client_config(
            &client_policy,
            ClientOptions {
                hierarchy,
                tickets: None,
                client_cert: mutual,
            },
        )?,
        server: server_config(
            &server_policy,
            ServerOptions {
                hierarchy,
                tickets: false,
                client_auth: mutual,
            },
        )?,
    })
}

/// A fresh, unconnected pair on `configs`: the input of one handshake run.
fn fresh_pair(configs: &Configs) -> Result<Pair, HarnessError> {
    new_pair(
        &configs.client,
        &configs.server,
        HANDSHAKE_PIPE_CAPACITY,
        None,
    )
}

/// The counted part of every full-handshake harness.
fn handshake(mut pair: Pair) -> Result<Pair, HarnessError> {
    pair.handshake()?;
    Ok(pair)
}

// ---------------------------------------------------------------------------
// HandshakeRsa4096
// ---------------------------------------------------------------------------

/// One full TLS 1.3 handshake between an s2n-tls client and server, the
/// server authenticating with an RSA-4096 certificate.
///
/// **Counted:** both sides' `poll_negotiate` calls, alternating client and
/// server until both are done, and the in-memory transport's copies between
/// them: ClientHello with a secp256r1 key share, the server's key exchange,
/// certificate chain and RSA-PSS-SHA256 CertificateVerify (an RSA-4096
/// private-key operation), the client validating the chain against the test
/// CA and checking CertificateVerify (RSA-4096 public-key operations), the
/// hostname callback and both Finished messages. That is the cost of one new
/// connection on both ends.
///
/// **Not counted:** building the configs (`setup`; see
/// [`ConfigBuild`](super::ConfigBuild)), creating and wiring the two
/// connections (`prepare`), and freeing them. Session tickets are disabled on
/// both sides, so the server issues no ticket and nothing resumes: every run
/// is a full handshake.
///
/// **Check:** both sides complete TLS 1.3 with
/// [`EXPECTED_CIPHER`](super::EXPECTED_CIPHER),
/// [`EXPECTED_GROUP`](super::EXPECTED_GROUP) and
/// [`EXPECTED_SIGNATURE_SCHEME`](super::EXPECTED_SIGNATURE_SCHEME), a full
/// (not resumed) handshake without HelloRetryRequest or client
/// authentication, and an RSA-4096 server key.
#[derive(Debug, Clone, Copy, Default)]
pub struct HandshakeRsa4096;

impl Harness for HandshakeRsa4096 {
    type Setup = Configs;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        full_handshake_configs(super::PINNED_POLICY, Hierarchy::Rsa4096, false)
    }

    fn prepare(&self, configs: &Configs) -> Result<Pair, HarnessError> {
        fresh_pair(configs)
    }

    fn run(&self, _: &Configs, pair: Pair) -> Result<Pair, HarnessError> {
        handshake(pair)
    }

    fn check(&self, _: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, &Expected::tls13(Hierarchy::Rsa4096))
    }
}

// ---------------------------------------------------------------------------
// HandshakeEcdsaP256
// ---------------------------------------------------------------------------

/// One full TLS 1.3 handshake, the server authenticating with an ECDSA P-256
/// certificate; the client trusts only the ECDSA test CA.
///
/// **Counted:** as [`HandshakeRsa4096`], with the server's CertificateVerify
/// an ECDSA P-256 signature with SHA-256 (ecdsa_secp256r1_sha256) and the
/// client verifying a P-256 chain and signature. Next to the RSA-4096 count
/// it shows what the certificate's key type costs.
///
/// **Not counted:** configs (`setup`), connections (`prepare`).
///
/// **Check:** TLS 1.3, TLS_AES_128_GCM_SHA256, secp256r1,
/// ecdsa_secp256r1_sha256, an `ecdsa_secp256r1` server key, a full handshake
/// without client authentication.
#[derive(Debug, Clone, Copy, Default)]
pub struct HandshakeEcdsaP256;

impl Harness for HandshakeEcdsaP256 {
    type Setup = Configs;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        full_handshake_configs(super::PINNED_POLICY, Hierarchy::EcdsaP256, false)
    }

    fn prepare(&self, configs: &Configs) -> Result<Pair, HarnessError> {
        fresh_pair(configs)
    }

    fn run(&self, _: &Configs, pair: Pair) -> Result<Pair, HarnessError> {
        handshake(pair)
    }

    fn check(&self, _: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, &Expected::tls13(Hierarchy::EcdsaP256))
    }
}

// ---------------------------------------------------------------------------
// MtlsRsa4096, MtlsEcdsaP256
// ---------------------------------------------------------------------------

/// One full TLS 1.3 handshake with client authentication, RSA-4096 on both
/// sides.
///
/// **Counted:** as [`HandshakeRsa4096`], plus the server's
/// CertificateRequest, the client's Certificate and rsa_pss_rsae_sha256
/// CertificateVerify (a second RSA-4096 private-key operation), and the
/// server validating the client's chain against the RSA test CA, checking its
/// `localhost` name and verifying its signature.
///
/// **Not counted:** configs (`setup`: the server requires client
/// certificates (`ClientAuthType::Required`) and trusts only the RSA test CA;
/// the client loads the RSA client chain and key), connections (`prepare`).
///
/// **Check:** everything [`HandshakeRsa4096`] checks, plus: the handshake
/// type has `CLIENT_AUTH`, the client sent its certificate, the server holds
/// the verified client chain (`client_cert_chain_bytes()` non-empty) with an
/// `rsa4096` key, and both sides saw the client sign with RSA-PSS-RSAE and
/// SHA-256.
#[derive(Debug, Clone, Copy, Default)]
pub struct MtlsRsa4096;

impl Harness for MtlsRsa4096 {
    type Setup = Configs;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        full_handshake_configs(super::PINNED_POLICY, Hierarchy::Rsa4096, true)
    }

    fn prepare(&self, configs: &Configs) -> Result<Pair, HarnessError> {
        fresh_pair(configs)
    }

    fn run(&self, _: &Configs, pair: Pair) -> Result<Pair, HarnessError> {
        handshake(pair)
    }

    fn check(&self, _: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, &Expected::mtls(Hierarchy::Rsa4096))
    }
}

/// One full TLS 1.3 handshake with client authentication, ECDSA P-256 on
/// both sides.
///
/// **Counted:** as [`HandshakeEcdsaP256`], plus the CertificateRequest, the
/// client's Certificate and ecdsa_secp256r1_sha256 CertificateVerify, and the
/// server validating the client's chain against the ECDSA test CA, checking
/// its `localhost` name and verifying its signature.
///
/// **Not counted:** configs (`setup`), connections (`prepare`).
///
/// **Check:** everything [`HandshakeEcdsaP256`] checks, plus the client
/// authentication checks of [`MtlsRsa4096`] with an `ecdsa_secp256r1` client
/// key signing with ECDSA and SHA-256.
#[derive(Debug, Clone, Copy, Default)]
pub struct MtlsEcdsaP256;

impl Harness for MtlsEcdsaP256 {
    type Setup = Configs;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        full_handshake_configs(super::PINNED_POLICY, Hierarchy::EcdsaP256, true)
    }

    fn prepare(&self, configs: &Configs) -> Result<Pair, HarnessError> {
        fresh_pair(configs)
    }

    fn run(&self, _: &Configs, pair: Pair) -> Result<Pair, HarnessError> {
        handshake(pair)
    }

    fn check(&self, _: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, &Expected::mtls(Hierarchy::EcdsaP256))
    }
}

// ---------------------------------------------------------------------------
// HandshakeTls12Rsa4096
// ---------------------------------------------------------------------------

/// One full TLS 1.2 handshake, RSA-4096 server certificate:
/// ECDHE-RSA-AES128-GCM-SHA256 over secp256r1, rsa_pss_rsae_sha256, extended
/// master secret (RFC 7627).
///
/// **Counted:** both sides' `poll_negotiate` until done: ClientHello,
/// ServerHello, Certificate, ServerKeyExchange (an RSA-4096 PSS signature
/// over the ECDHE parameters), ServerHelloDone, the client validating the
/// chain and the signature, ClientKeyExchange, the extended-master-secret
/// derivation over the session hash, ChangeCipherSpec and Finished both
/// ways. Two round trips instead of TLS 1.3's one.
///
/// **Not counted:** configs (`setup`: the client uses
/// [`TLS12_CLIENT_POLICY`], which offers no TLS 1.3 suite; the server keeps
/// [`PINNED_POLICY`](super::PINNED_POLICY), whose TLS 1.2 preference for an
/// RSA certificate starts with ECDHE-RSA-AES128-GCM-SHA256), connections
/// (`prepare`).
///
/// No tickets and no session IDs to resume from: the client has tickets off
/// and sends an empty session ID, the server has no ticket key and no session
/// cache. (s2n-tls still puts a random 32-byte session ID in every TLS 1.2
/// ServerHello of a full handshake; with no cache, nothing is stored under it
/// and nothing can resume from it.)
///
/// **Check:** both sides complete TLS 1.2 with ECDHE-RSA-AES128-GCM-SHA256,
/// secp256r1, rsa_pss_rsae_sha256 and an RSA-4096 server key, a full
/// handshake without a ticket and without client authentication; the client
/// offered an empty session ID; the extended master secret was negotiated.
/// The s2n-tls crate has no accessor for that last one: the check reads the
/// `ems_negotiated` flag at the end of the client's serialized TLS 1.2
/// session state, after checking the state has the 0.3.47 layout and
/// describes this connection (version, cipher suite, and the master secret
/// both sides report, which must also be equal).
#[derive(Debug, Clone, Copy, Default)]
pub struct HandshakeTls12Rsa4096;

impl Harness for HandshakeTls12Rsa4096 {
    type Setup = Configs;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        full_handshake_configs(TLS12_CLIENT_POLICY, Hierarchy::Rsa4096, false)
    }

    fn prepare(&self, configs: &Configs) -> Result<Pair, HarnessError> {
        fresh_pair(configs)
    }

    fn run(&self, _: &Configs, pair: Pair) -> Result<Pair, HarnessError> {
        handshake(pair)
    }

    fn check(&self, _: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, &Expected::TLS12_RSA)?;
        let offered = pair
            .server
            .client_hello()
            .context("reading the ClientHello on the server")?
            .session_id()
            .context("reading the ClientHello's session ID")?;
        ensure(offered.is_empty(), || {
            format!("the client offered a {}-byte session ID", offered.len())
        })?;
        check_extended_master_secret(pair)
    }
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
/// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256.
const ECDHE_RSA_AES128_GCM_SHA256: [u8; 2] = [0xc0, 0x2f];

/// Proves the TLS 1.2 handshake used the extended master secret (RFC 7627).
///
/// The s2n-tls crate has no accessor for it, but the client's serialized
/// TLS 1.2 session state ends with the connection's `ems_negotiated` flag,
/// which the client sets only after the ServerHello carried the
/// extended_master_secret extension in reply to its own. The parse is
/// self-checking: the state must have the 0.3.47 layout, name TLS 1.2 and
/// ECDHE-RSA-AES128-GCM-SHA256, and carry the same master secret that both
/// connections report, or the check fails rather than read a moved byte.
/// Equal master secrets on both sides also show the server derived it the
/// same way.
fn check_extended_master_secret(pair: &Pair) -> Result<(), HarnessError> {
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
            && tls12[2..4] == ECDHE_RSA_AES128_GCM_SHA256
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
    use regress_measure::harness::run_natively;

    #[test]
    fn handshake_rsa4096_runs_natively() {
        run_natively(&HandshakeRsa4096).expect("HandshakeRsa4096");
    }

    #[test]
    fn handshake_ecdsa_p256_runs_natively() {
        run_natively(&HandshakeEcdsaP256).expect("HandshakeEcdsaP256");
    }

    #[test]
    fn mtls_rsa4096_runs_natively() {
        run_natively(&MtlsRsa4096).expect("MtlsRsa4096");
    }

    #[test]
    fn mtls_ecdsa_p256_runs_natively() {
        run_natively(&MtlsEcdsaP256).expect("MtlsEcdsaP256");
    }

    #[test]
    fn handshake_tls12_rsa4096_runs_natively() {
        run_natively(&HandshakeTls12Rsa4096).expect("HandshakeTls12Rsa4096");
    }

    /// Runs `harness` once and returns its output.
    fn one_run<H: Harness<Input = Pair, Output = Pair, Setup = Configs>>(harness: &H) -> Pair {
        let setup = harness.setup().expect("setup");
        let input = harness.prepare(&setup).expect("prepare");
        harness.run(&setup, input).expect("run")
    }

    /// A handshake without client authentication fails the mTLS checks, and
    /// an mTLS handshake fails the plain checks.
    #[test]
    fn mtls_and_plain_checks_tell_each_other_apart() {
        let configs =
            full_handshake_configs(super::super::PINNED_POLICY, Hierarchy::Rsa4096, false)
                .expect("configs");
        let plain = one_run(&HandshakeRsa4096);
        let error = MtlsRsa4096
            .check(&configs, &plain)
            .expect_err("no client certificate");
        assert!(error.to_string().contains("client auth"), "{error}");
        let mutual = one_run(&MtlsRsa4096);
        assert!(HandshakeRsa4096.check(&configs, &mutual).is_err());
        let ecdsa = one_run(&HandshakeEcdsaP256);
        assert!(HandshakeRsa4096.check(&configs, &ecdsa).is_err());
        assert!(MtlsEcdsaP256.check(&configs, &ecdsa).is_err());
    }

    /// The server really verifies the client certificate: a client presenting
    /// the ECDSA client chain to a server that trusts only the RSA CA fails.
    #[test]
    fn mtls_fails_with_a_client_certificate_from_the_other_hierarchy() {
        let policy = pinned_policy().expect("policy");
        let server = server_config(
            &policy,
            ServerOptions {
                hierarchy: Hierarchy::Rsa4096,
                tickets: false,
                client_auth: true,
            },
        )
        .expect("server");
        let mut builder = super::super::base_builder(&policy).expect("builder");
        let (chain, key) = Hierarchy::EcdsaP256.client_pem();
        builder
            .trust_pem(Hierarchy::Rsa4096.ca_pem())
            .expect("trust")
            .set_verify_host_callback(super::super::AcceptHost::LOCALHOST)
            .expect("callback")
            .load_pem(chain, key)
            .expect("client cert");
        let client = builder.build().expect("client");
        let mut pair = new_pair(&client, &server, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    /// A server that requires a certificate rejects a client without one.
    #[test]
    fn mtls_fails_without_a_client_certificate() {
        let configs =
            full_handshake_configs(super::super::PINNED_POLICY, Hierarchy::EcdsaP256, true)
                .expect("configs");
        let plain =
            full_handshake_configs(super::super::PINNED_POLICY, Hierarchy::EcdsaP256, false)
                .expect("configs");
        let mut pair = new_pair(
            &plain.client,
            &configs.server,
            HANDSHAKE_PIPE_CAPACITY,
            None,
        )
        .expect("pair");
        assert!(pair.handshake().is_err());
    }

    #[test]
    fn tls12_check_rejects_tls13_and_tls13_check_rejects_tls12() {
        let configs = HandshakeTls12Rsa4096.setup().expect("setup");
        let tls12 = one_run(&HandshakeTls12Rsa4096);
        let tls13 = one_run(&HandshakeRsa4096);
        assert!(HandshakeTls12Rsa4096.check(&configs, &tls13).is_err());
        assert!(HandshakeRsa4096.check(&configs, &tls12).is_err());
        assert!(check_extended_master_secret(&tls13).is_err());
    }
}
