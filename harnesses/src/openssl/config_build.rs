//! [`ConfigBuild`]: building an OpenSSL server and client `SslContext`.

use regress_measure::{Harness, HarnessError};

use super::check::check_handshake;
use super::context::{client_context, server_context, Contexts};
use super::system::{init, runtime_libraries};
use super::transport::Pair;
use crate::common::error::Context as _;
use crate::common::pki::{Host, PemCopies};
use crate::paths::Handshake;

/// Builds what an OpenSSL application needs to serve and to verify
/// `localhost`: a server `SslContext` and a client `SslContext`, those of
/// [`Handshake::RSA4096`].
///
/// s2n-tls's `config_build` builds one `Config` that does both; OpenSSL
/// splits the same work over two contexts, and this harness counts both, so
/// the paths are comparable.
///
/// **Counted:** two `SSL_CTX_new` (each fetches OpenSSL 3.0's cipher, digest,
/// group and signature tables from the provider and draws its ticket keys),
/// pinning version, suite, group, signature scheme, tickets and session
/// cache on both, the fixed verification time; for the server, parsing the
/// RSA-4096 chain and private key from PEM (`PEM_read_bio_X509`,
/// `PEM_read_bio_PrivateKey` through OpenSSL 3.0's decoders), installing
/// them and `check_private_key`; for the client, parsing the CA from PEM, a
/// fresh `X509_STORE` holding only it, peer verification and the host name
/// to verify.
///
/// **Not counted:** OpenSSL's one-time initialisation (`setup` runs
/// [`init`]: the first `SSL_CTX_new` in a process would otherwise pay for
/// loading the default provider). The PEM files are copied to the heap in
/// `setup` ([`PemCopies`]). No file is read, and neither the system trust
/// store nor `openssl.cnf` is loaded.
///
/// **Check:** a handshake between the two built contexts must negotiate the
/// pinned TLS 1.3 parameters with the RSA-4096 certificate (as the RSA-4096
/// handshake's check does).
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigBuild;

impl Harness for ConfigBuild {
    type Setup = PemCopies;
    type Input = ();
    type Output = Contexts;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        runtime_libraries()
    }

    fn setup(&self) -> Result<PemCopies, HarnessError> {
        init()?;
        Ok(PemCopies::of(Handshake::RSA4096.pki))
    }

    fn prepare(&self, _: &PemCopies) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, pem: &PemCopies, _: ()) -> Result<Contexts, HarnessError> {
        let profile = Handshake::RSA4096.profile();
        Ok(Contexts {
            server: server_context(&profile, &pem.server_chain, &pem.server_key)?,
            client: client_context(&profile, &pem.ca, Host::LOCALHOST)?,
            profile,
        })
    }

    fn check(&self, _: &PemCopies, contexts: &Contexts) -> Result<(), HarnessError> {
        let mut pair = Pair::new(contexts, None)?;
        pair.handshake()
            .context("handshaking with the built contexts")?;
        check_handshake(
            &pair,
            &Handshake::RSA4096.profile(),
            &Handshake::RSA4096.expected(),
        )
    }
}
