//! [`FullHandshake`]: one full handshake of any TLS library, for every PKI,
//! with and without client authentication, TLS 1.3 and TLS 1.2.

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError};

use super::Tls;
use crate::paths::Handshake;

/// One full handshake between a client and a server of library `L`, as its
/// [`Handshake`] path says.
///
/// **Counted:** [`Tls::handshake`]: both sides' handshake calls until both
/// are done, with the in-memory transport's copies between them (each
/// library's implementation says what that is in its API). For TLS 1.3 that
/// is the ClientHello with a secp256r1 key share, the server's key exchange,
/// certificate chain and CertificateVerify (an RSA-4096 private-key
/// operation with rsa_pss_rsae_sha256, or a P-256 signature with
/// ecdsa_secp256r1_sha256), the client validating the chain against the
/// PKI's CA at the fixed time, checking the name `localhost` and the
/// CertificateVerify, and both Finished messages: the cost of one new
/// connection on both ends. With client authentication, also the server's
/// CertificateRequest, the client's chain and CertificateVerify (a second
/// private-key operation) and the server verifying them. For TLS 1.2
/// (ECDHE-RSA-AES128-GCM-SHA256, RSA-4096): ClientHello, ServerHello,
/// Certificate, a ServerKeyExchange signed with rsa_pss_rsae_sha256 over a
/// secp256r1 ECDHE share, ServerHelloDone, the client's validation,
/// ClientKeyExchange, the extended-master-secret derivation,
/// ChangeCipherSpec and Finished both ways: two round trips instead of one.
///
/// **Not counted:** building the configs (`setup`, as a server builds its
/// config once; the `config_build` paths count that), making the fresh
/// connection pair (`prepare`), and freeing. Tickets and session caches are
/// off, so nothing resumes: every run is a full handshake.
///
/// **Check:** [`Tls::check`] with the path's expectation: the pinned
/// version, suite, secp256r1 and the PKI's signature scheme for the server
/// and (with mTLS) the client, a full handshake, and what each library can
/// tell besides.
pub struct FullHandshake<L> {
    pub path: Handshake,
    library: PhantomData<fn() -> L>,
}

impl<L> FullHandshake<L> {
    /// The harness of `path`.
    pub const fn new(path: Handshake) -> FullHandshake<L> {
        FullHandshake {
            path,
            library: PhantomData,
        }
    }
}

impl<L: Tls> Harness for FullHandshake<L> {
    type Setup = L::Configs;
    type Input = L::Fresh;
    type Output = L::Pair;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    /// Every library's driver marks its sides' calls (`super::sides`).
    fn sides(&self) -> bool {
        true
    }

    fn first_record(&self, _: &L::Configs, pair: &mut L::Pair) -> Result<bool, HarnessError> {
        super::first_record::<L>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<L::Configs, HarnessError> {
        L::configs(&self.path.profile())
    }

    fn prepare(&self, configs: &L::Configs) -> Result<L::Fresh, HarnessError> {
        L::fresh(configs)
    }

    fn run(&self, configs: &L::Configs, fresh: L::Fresh) -> Result<L::Pair, HarnessError> {
        L::handshake(configs, fresh)
    }

    fn check(&self, configs: &L::Configs, pair: &L::Pair) -> Result<(), HarnessError> {
        L::check(configs, pair, &self.path.expected())
    }
}
