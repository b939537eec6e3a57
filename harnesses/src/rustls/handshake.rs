//! [`FullHandshake`]: one full handshake, for every PKI, with and without
//! client authentication, TLS 1.3 and TLS 1.2.

use regress_measure::{Harness, HarnessError};

use super::check::check_handshake;
use super::config::Configs;
use super::transport::{Accepting, Pair};
use crate::paths::Handshake;

/// One full handshake between a rustls client and server, as its
/// [`Handshake`] path says.
///
/// **Counted:** `ClientConnection::new`, where rustls generates the
/// client's secp256r1 key share and writes the ClientHello, then both
/// sides' `write_tls` / `read_tls` / `process_new_packets` in turn until
/// neither is handshaking, with the in-memory transport's copies. For
/// TLS 1.3: the server's key exchange, certificate chain and
/// CertificateVerify (an RSA-4096 private-key operation with
/// rsa_pss_rsae_sha256, or a P-256 signature with ecdsa_secp256r1_sha256),
/// the client validating the chain against the PKI's CA at the fixed time,
/// checking the name `localhost` and CertificateVerify, and both Finished
/// messages: one new connection on both ends. With client authentication,
/// also the server's CertificateRequest (naming the CA), the client's chain
/// and CertificateVerify (a second private-key operation), and the server
/// verifying them (rustls's `WebPkiClientVerifier`, certificate required).
/// For TLS 1.2 (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, RSA-4096): the
/// ClientHello with the extended-master-secret extension and no
/// session-ticket extension, then two round trips: ServerHello, chain,
/// ServerKeyExchange signed with rsa_pss_rsae_sha256 over a secp256r1 ECDHE
/// share; the client verifying chain and signature, its ClientKeyExchange,
/// ChangeCipherSpec and Finished; the server's ChangeCipherSpec and Finished.
///
/// **Not counted:** building the configs (`setup`; see
/// [`ConfigBuild`](super::config_build::ConfigBuild)), creating the server
/// connection and the transport (`prepare`: allocation only, a rustls
/// server does nothing before it reads a ClientHello), and freeing. No
/// session store, no session storage, no tickets: every run is a full
/// handshake (a TLS 1.2 ServerHello carries an empty session id); both sides
/// *require* extended master secret.
///
/// **Check:** both sides report the pinned version, suite and secp256r1 and
/// a full handshake (no HelloRetryRequest); the client's verifier accepted a
/// signature with the PKI's scheme, and with client authentication so did
/// the server's; the client received the PKI's server chain, the server the
/// client chain exactly when it asked; the server saw SNI `localhost` and
/// queued nothing after the handshake (no ticket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullHandshake(pub Handshake);

impl Harness for FullHandshake {
    type Setup = Configs;
    type Input = Accepting;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        Configs::build(&self.0.profile(), None)
    }

    fn prepare(&self, configs: &Configs) -> Result<Accepting, HarnessError> {
        configs.accept()
    }

    fn run(&self, configs: &Configs, accepting: Accepting) -> Result<Pair, HarnessError> {
        let mut pair = configs.connect(accepting)?;
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, configs: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        check_handshake(configs, pair, &self.0.expected())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ::rustls::pki_types::ServerName;
    use ::rustls::ClientConnection;

    use super::*;
    use crate::common::pins::every_other_expectation;
    use crate::common::pki::{PemCopies, Pki};
    use crate::rustls::check::both_sides;
    use crate::rustls::config::{client_config, Pinned};

    /// The check rejects every pin the handshake did not negotiate, on
    /// every path: rustls's reports reach the shared comparison.
    #[test]
    fn check_rejects_every_other_expectation() {
        for path in &Handshake::ALL[..5] {
            let configs = Configs::build(&path.profile(), None).expect("configs");
            let pair = configs.handshake().expect("handshake");
            let sides = both_sides(&configs, &pair, true);
            path.expected().check(&sides).expect("the real parameters");
            for (what, wrong) in every_other_expectation(&path.expected()) {
                assert!(wrong.check(&sides).is_err(), "{path:?}: {what}");
            }
        }
    }

    /// The verifier logs are taken by a check: a second check of the same
    /// handshake has no scheme to see, so no check can pass on an earlier
    /// handshake's signature.
    #[test]
    fn a_check_takes_the_noted_schemes() {
        let harness = FullHandshake(Handshake::RSA4096);
        let configs = harness.setup().expect("setup");
        let pair = configs.handshake().expect("handshake");
        harness
            .check(&configs, &pair)
            .expect("the pinned parameters");
        assert!(harness.check(&configs, &pair).is_err());
    }

    /// The client really verifies the chain: a client trusting the other
    /// PKI's CA fails the handshake.
    #[test]
    fn handshake_fails_with_the_wrong_ca() {
        let profile = Handshake::RSA4096.profile();
        let configs = Configs::build(&profile, None).expect("configs");
        let mut wrong = PemCopies::of(Pki::Rsa4096);
        wrong.ca = Pki::EcdsaP256.ca_pem().to_vec();
        let (client, _) =
            client_config(&Pinned::new(&profile.pins), &wrong, false, None).expect("client");
        let mut pair = configs
            .connect_with(&Arc::new(client), configs.accept().expect("accept"))
            .expect("connect");
        let error = pair.handshake().expect_err("untrusted server certificate");
        assert!(error.to_string().contains("client processing"), "{error}");
    }

    /// The client really checks the server's name.
    #[test]
    fn handshake_fails_for_another_server_name() {
        let configs = Configs::build(&Handshake::RSA4096.profile(), None).expect("configs");
        let name = ServerName::try_from("example.com").expect("name");
        let client = ClientConnection::new(configs.client.clone(), name).expect("client");
        let mut pair = configs.accept().expect("accept").connect(client);
        assert!(pair.handshake().is_err());
    }

    /// An mTLS server rejects a client that presents no certificate.
    #[test]
    fn mtls_server_requires_a_client_certificate() {
        let profile = Handshake::ALL[3].profile();
        assert!(profile.client_auth && profile.pki == Pki::EcdsaP256);
        let configs = Configs::build(&profile, None).expect("configs");
        let pinned = Pinned::new(&profile.pins);
        let (anonymous, _) =
            client_config(&pinned, &PemCopies::of(Pki::EcdsaP256), false, None).expect("client");
        let mut pair = configs
            .connect_with(&Arc::new(anonymous), configs.accept().expect("accept"))
            .expect("connect");
        let error = pair.handshake().expect_err("no client certificate");
        assert!(error.to_string().contains("server processing"), "{error}");
    }

    /// Without resumption configured, a second handshake from the same
    /// configs is full again (rustls's default would resume it).
    #[test]
    fn full_handshakes_never_resume() {
        let harness = FullHandshake(Handshake::RSA4096);
        let configs = harness.setup().expect("setup");
        for _ in 0..3 {
            let accepting = harness.prepare(&configs).expect("prepare");
            let pair = harness.run(&configs, accepting).expect("run");
            harness.check(&configs, &pair).expect("full");
        }
    }
}
