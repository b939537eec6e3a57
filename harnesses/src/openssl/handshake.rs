//! [`FullHandshake`]: one full handshake, for every PKI, with and without
//! client authentication, TLS 1.3 and TLS 1.2.

use regress_measure::{Harness, HarnessError};

use super::check::check_handshake;
use super::context::Contexts;
use super::library::runtime_libraries;
use super::transport::Pair;
use crate::paths::Handshake;

/// One full handshake between an OpenSSL client and server, as its
/// [`Handshake`] path says.
///
/// **Counted:** both sides' `SSL_do_handshake` calls, alternating client
/// and server until both are done, and the in-memory transport's copies
/// between them. For TLS 1.3: the ClientHello with a P-256 key share, the
/// server's key exchange, chain (leaf and CA) and CertificateVerify (an
/// RSA-4096 private-key operation with `rsa_pss_rsae_sha256`, or a P-256
/// signature with `ecdsa_secp256r1_sha256`), the client validating the chain
/// against the PKI's CA at the fixed time, checking the host name and the
/// CertificateVerify, and both Finished messages: the cost of one new
/// connection on both ends. With client authentication, also the server's
/// CertificateRequest, the client's chain and CertificateVerify (a second
/// private-key operation), and the server verifying them. For TLS 1.2
/// (ECDHE-RSA-AES128-GCM-SHA256, RSA-4096): ClientHello, ServerHello, the
/// chain, the ServerKeyExchange with a P-256 ECDHE key signed with
/// `rsa_pss_rsae_sha256`, the client's chain validation, signature check and
/// ClientKeyExchange, both ChangeCipherSpec and Finished, with the extended
/// master secret (OpenSSL's default, asserted).
///
/// **Not counted:** building the contexts (`setup`; see
/// [`ConfigBuild`](super::config_build::ConfigBuild)), creating the two
/// `SSL`s, setting SNI and wiring the transport (`prepare`), and freeing
/// them. Tickets (`SSL_OP_NO_TICKET`, no TLS 1.3 tickets) and the session
/// cache are off, so the server sends nothing after the handshake and every
/// run is a full handshake.
///
/// **Check:** both sides finished the pinned version, suite and secp256r1,
/// not resumed, with the PKI's signature scheme (signature type and digest,
/// as the signer made it and as the verifier saw it, and the key type) for
/// the server and, with mTLS, the client; the client verified the chain,
/// and with mTLS the server verified the client's; the server saw SNI
/// `localhost`; nothing is left in the transport; no ticket (and in TLS 1.2
/// no session ID) was issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullHandshake(pub Handshake);

impl Harness for FullHandshake {
    type Setup = Contexts;
    type Input = Pair;
    type Output = Pair;

    fn runtime_libraries(&self) -> Vec<(String, String)> {
        runtime_libraries()
    }

    fn setup(&self) -> Result<Contexts, HarnessError> {
        Contexts::new(&self.0.profile())
    }

    fn prepare(&self, contexts: &Contexts) -> Result<Pair, HarnessError> {
        Pair::new(contexts, None)
    }

    fn run(&self, _: &Contexts, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, _: &Contexts, pair: &Pair) -> Result<(), HarnessError> {
        check_handshake(pair, &self.0.profile(), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::pins::every_other_expectation;
    use crate::common::pki::{Pki, SERVER_NAME};
    use crate::openssl::check::both_sides;
    use crate::openssl::context::{client_context, server_context};

    /// The check rejects every pin the handshake did not negotiate, on
    /// every path: OpenSSL's reports reach the shared comparison.
    #[test]
    fn check_rejects_every_other_expectation() {
        for path in &Handshake::ALL[..5] {
            let harness = FullHandshake(*path);
            let contexts = harness.setup().expect("setup");
            let pair = harness.prepare(&contexts).expect("prepare");
            let pair = harness.run(&contexts, pair).expect("run");
            let sides = both_sides(&pair);
            path.expected().check(&sides).expect("the real parameters");
            for (what, wrong) in every_other_expectation(&path.expected()) {
                assert!(wrong.check(&sides).is_err(), "{path:?}: {what}");
            }
        }
    }

    /// Contexts whose client is built by `client` from the RSA-4096
    /// handshake's profile.
    fn with_client(
        client: impl FnOnce(&crate::paths::Profile) -> openssl::ssl::SslContext,
        client_auth: bool,
    ) -> Contexts {
        let profile = crate::paths::Profile {
            client_auth,
            ..Handshake::RSA4096.profile()
        };
        let pki = profile.pki;
        Contexts {
            client: client(&Handshake::RSA4096.profile()),
            server: server_context(&profile, pki.server_chain_pem(), pki.server_key_pem())
                .expect("server"),
            profile,
        }
    }

    /// The client really verifies the server's name.
    #[test]
    fn handshake_fails_for_another_host() {
        let contexts = with_client(
            |profile| {
                client_context(profile, Pki::Rsa4096.ca_pem(), "example.com").expect("client")
            },
            false,
        );
        let mut pair = Pair::new(&contexts, None).expect("pair");
        assert!(pair.handshake().is_err());
        assert_eq!(
            pair.client.ssl().verify_result().as_raw(),
            openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH
        );
    }

    /// The client really verifies the chain: trusting only the ECDSA CA, it
    /// rejects the RSA server.
    #[test]
    fn handshake_fails_with_the_wrong_ca() {
        let contexts = with_client(
            |profile| {
                client_context(profile, Pki::EcdsaP256.ca_pem(), SERVER_NAME).expect("client")
            },
            false,
        );
        let mut pair = Pair::new(&contexts, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    /// An mTLS server really requires a client certificate.
    #[test]
    fn mtls_server_rejects_a_client_without_certificate() {
        let contexts = with_client(
            |profile| client_context(profile, Pki::Rsa4096.ca_pem(), SERVER_NAME).expect("client"),
            true,
        );
        let mut pair = Pair::new(&contexts, None).expect("pair");
        // The TLS 1.3 client finishes before the server has judged it; the
        // server's failure is what matters.
        let error = pair.handshake().expect_err("no client certificate");
        assert!(error.to_string().contains("server"), "{error}");
    }

    /// The handshake contexts really turn resumption off: a session from one
    /// handshake, offered on the next, is not resumed.
    #[test]
    fn handshake_contexts_do_not_resume() {
        let profile = Handshake::RSA4096.profile();
        let contexts = Contexts::new(&profile).expect("contexts");
        let mut first = Pair::new(&contexts, None).expect("pair");
        first.handshake().expect("first handshake");
        let session = first.client.ssl().session().expect("session").to_owned();
        let mut second = Pair::new(&contexts, Some(&session)).expect("pair");
        second.handshake().expect("second handshake");
        check_handshake(&second, &profile, false).expect("a full handshake");
    }

    /// OpenSSL's name for the pinned TLS 1.2 cipher is the IANA suite the
    /// other libraries pin.
    #[test]
    fn tls12_cipher_is_the_standard_suite() {
        let harness = FullHandshake(Handshake::ALL[4]);
        let contexts = harness.setup().expect("setup");
        let pair = harness.prepare(&contexts).expect("prepare");
        let pair = harness.run(&contexts, pair).expect("run");
        let cipher = pair.client.ssl().current_cipher().expect("cipher");
        assert_eq!(
            cipher.standard_name(),
            Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
        );
        assert_eq!(
            u16::from_be_bytes(cipher.protocol_id()),
            harness.0.suite().iana()
        );
    }
}
