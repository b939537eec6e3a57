//! [`FullHandshake`]: one full handshake, for every PKI, with and without
//! client authentication, TLS 1.3 and TLS 1.2.

use regress_measure::{Harness, HarnessError};

use super::check::{check_handshake, check_tls12_extras};
use super::config::Configs;
use super::transport::Pair;
use crate::common::pins::TlsVersion;
use crate::paths::Handshake;

/// One full handshake between an s2n-tls client and server, as its
/// [`Handshake`] path says.
///
/// **Counted:** both sides' `poll_negotiate` calls, alternating client and
/// server until both are done, and the in-memory transport's copies between
/// them. For TLS 1.3: the ClientHello with a secp256r1 key share, the
/// server's key exchange, certificate chain and CertificateVerify (an
/// RSA-4096 private-key operation with rsa_pss_rsae_sha256, or a P-256
/// signature with ecdsa_secp256r1_sha256), the client validating the chain
/// against the PKI's CA and checking CertificateVerify, the hostname
/// callback and both Finished messages: the cost of one new connection on
/// both ends. With client authentication, also the CertificateRequest, the
/// client's Certificate and CertificateVerify (a second private-key
/// operation) and the server validating the client's chain against the CA,
/// checking its `localhost` name and its signature. For TLS 1.2
/// (ECDHE-RSA-AES128-GCM-SHA256, RSA-4096): ClientHello, ServerHello,
/// Certificate, ServerKeyExchange (an RSA-4096 PSS signature over the ECDHE
/// parameters), ServerHelloDone, the client's validation,
/// ClientKeyExchange, the extended-master-secret derivation, ChangeCipherSpec
/// and Finished both ways: two round trips instead of one.
///
/// **Not counted:** building the configs (`setup`; see
/// [`ConfigBuild`](super::config_build::ConfigBuild)), creating and wiring
/// the two connections (`prepare`), and freeing them. Session tickets are
/// off on both sides and no server has a session cache, so nothing resumes:
/// every run is a full handshake. (In TLS 1.2 s2n-tls still puts a random
/// 32-byte session ID in every ServerHello of a full handshake; with no
/// cache, nothing is stored under it and nothing can resume from it.)
///
/// **Check:** both sides complete the pinned version, suite, secp256r1 and
/// the PKI's signature scheme (for the server's signature and, with mTLS,
/// the client's), a full handshake without HelloRetryRequest, client
/// authentication exactly when the path asks (the client sent its
/// certificate, the server holds the verified chain), the PKI's key types,
/// nothing left in the transport. TLS 1.2 also: the client offered an
/// empty session ID, and the extended master secret was negotiated
/// ([`check_tls12_extras`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullHandshake(pub Handshake);

impl Harness for FullHandshake {
    type Setup = Configs;
    type Input = Pair;
    type Output = Pair;

    fn setup(&self) -> Result<Configs, HarnessError> {
        Configs::new(&self.0.profile())
    }

    fn prepare(&self, configs: &Configs) -> Result<Pair, HarnessError> {
        Pair::new(configs, None)
    }

    fn run(&self, _: &Configs, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, _: &Configs, pair: &Pair) -> Result<(), HarnessError> {
        let profile = self.0.profile();
        check_handshake(pair, &profile, false)?;
        if self.0.version == TlsVersion::Tls12 {
            check_tls12_extras(pair, profile.pins.suite)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::pins::every_other_expectation;
    use crate::common::pki::Pki;
    use crate::s2n_tls::check::both_sides;
    use crate::s2n_tls::config::{
        base_builder, client_config, policy, server_config, AcceptHost, PINNED_POLICY,
    };

    /// Runs `path`'s harness once and returns its configs and output.
    fn one_run(path: Handshake) -> (Configs, Pair) {
        let harness = FullHandshake(path);
        let configs = harness.setup().expect("setup");
        let pair = harness.prepare(&configs).expect("prepare");
        let pair = harness.run(&configs, pair).expect("run");
        (configs, pair)
    }

    /// The check rejects every pin the handshake did not negotiate, on
    /// every path: s2n-tls's reports reach the shared comparison.
    #[test]
    fn check_rejects_every_other_expectation() {
        for path in &Handshake::ALL[..5] {
            let (_, pair) = one_run(*path);
            let sides = both_sides(&pair).expect("reports");
            path.expected().check(&sides).expect("the real parameters");
            for (what, wrong) in every_other_expectation(&path.expected()) {
                assert!(wrong.check(&sides).is_err(), "{path:?}: {what}");
            }
        }
    }

    /// A handshake without client authentication fails the mTLS checks, and
    /// the other way round; an ECDSA handshake fails the RSA checks.
    #[test]
    fn mtls_and_plain_checks_tell_each_other_apart() {
        let [rsa, ecdsa, mtls_rsa, mtls_ecdsa, _, _] = Handshake::ALL.map(FullHandshake);
        let (configs, plain) = one_run(rsa.0);
        let error = mtls_rsa
            .check(&configs, &plain)
            .expect_err("no client certificate");
        assert!(error.to_string().contains("client auth"), "{error}");
        let (mutual_configs, mutual) = one_run(mtls_rsa.0);
        assert!(rsa.check(&mutual_configs, &mutual).is_err());
        let (ecdsa_configs, ecdsa_pair) = one_run(ecdsa.0);
        assert!(rsa.check(&configs, &ecdsa_pair).is_err());
        assert!(mtls_ecdsa.check(&ecdsa_configs, &ecdsa_pair).is_err());
    }

    #[test]
    fn tls12_check_rejects_tls13_and_tls13_check_rejects_tls12() {
        let tls12 = FullHandshake(Handshake::ALL[4]);
        let tls13 = FullHandshake(Handshake::RSA4096);
        let (tls12_configs, tls12_pair) = one_run(tls12.0);
        let (tls13_configs, tls13_pair) = one_run(tls13.0);
        assert!(tls12.check(&tls12_configs, &tls13_pair).is_err());
        assert!(tls13.check(&tls13_configs, &tls12_pair).is_err());
        let suite = tls12_configs.profile.pins.suite;
        check_tls12_extras(&tls12_pair, suite).expect("TLS 1.2 with EMS");
        assert!(check_tls12_extras(&tls13_pair, suite).is_err());
    }

    /// A client rejects the server: with another name, without the CA, or
    /// trusting the other PKI's CA.
    #[test]
    fn handshake_fails_when_the_client_must_not_trust_the_server() {
        let pinned = policy(PINNED_POLICY).expect("policy");
        let server = server_config(&pinned, Pki::Rsa4096, false, false).expect("server");
        let mut other_name = base_builder(&pinned).expect("builder");
        other_name
            .trust_pem(Pki::Rsa4096.ca_pem())
            .expect("trust")
            .set_verify_host_callback(AcceptHost("example.com"))
            .expect("callback");
        let mut no_ca = base_builder(&pinned).expect("builder");
        no_ca
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .expect("callback");
        let other_ca = client_config(&pinned, Pki::EcdsaP256, None, None).expect("client");
        for (what, client) in [
            ("another name", other_name.build().expect("config")),
            ("no CA", no_ca.build().expect("config")),
            ("the other CA", other_ca),
        ] {
            let mut pair = Pair::with_configs(&client, &server, None).expect("pair");
            assert!(pair.handshake().is_err(), "{what}");
        }
    }

    /// The server really verifies the client certificate: a client from the
    /// other PKI, or one without a certificate, fails.
    #[test]
    fn mtls_fails_without_the_right_client_certificate() {
        let pinned = policy(PINNED_POLICY).expect("policy");
        let server = server_config(&pinned, Pki::Rsa4096, false, true).expect("server");
        let other_pki =
            client_config(&pinned, Pki::Rsa4096, None, Some(Pki::EcdsaP256)).expect("client");
        let anonymous = client_config(&pinned, Pki::Rsa4096, None, None).expect("client");
        for (what, client) in [("other PKI", other_pki), ("no certificate", anonymous)] {
            let mut pair = Pair::with_configs(&client, &server, None).expect("pair");
            assert!(pair.handshake().is_err(), "{what}");
        }
    }
}
