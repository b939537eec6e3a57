//! OpenSSL's default configuration ([`Defaults`]): `SSL_CTX_new` with
//! `TLS_method()` on both sides and nothing pinned, plus what it cannot
//! default: the server's web ECDSA chain, a client trusting only the web
//! root that verifies the peer and its host name (OpenSSL checks no name
//! unless told; every correct client sets it), the fixed verification time,
//! and the deterministic RNG with no configuration file ([`init`]).

use openssl::ssl::{SslContext, SslMethod, SslVerifyMode};
use regress_measure::HarnessError;

use super::context::{load_identity, trust_store, Contexts, FIXED_VERIFY_TIME};
use super::system::{init, supports_mlkem};
use super::tls::OpenSsl;
use crate::common::error::Context as _;
use crate::common::pins::{CipherSuite, NamedGroup, Pins, TlsVersion};
use crate::common::pki::SERVER_NAME;
use crate::paths::{Profile, Resumption};
use crate::tls::defaults::{self, Defaults, DEFAULTS_PKI};

impl Defaults for OpenSsl {
    /// TLS 1.3, TLS_AES_256_GCM_SHA384, and from OpenSSL 3.5 on the
    /// post-quantum X25519MLKEM768 (its default groups put it first; before
    /// 3.5, X25519); the server sends two TLS 1.3 tickets after the
    /// handshake.
    fn defaults() -> Profile {
        defaults::profile(
            Pins {
                version: TlsVersion::Tls13,
                suite: CipherSuite::Tls13Aes256GcmSha384,
                group: if supports_mlkem() {
                    NamedGroup::X25519MlKem768
                } else {
                    NamedGroup::X25519
                },
                scheme: DEFAULTS_PKI.signature_scheme(),
            },
            Some(Resumption::Ticket),
        )
    }

    fn default_configs() -> Result<Contexts, HarnessError> {
        init()?;
        let pki = DEFAULTS_PKI;
        let mut server = SslContext::builder(SslMethod::tls()).context("SSL_CTX_new")?;
        load_identity(&mut server, pki.server_chain_pem(), pki.server_key_pem())?;
        let mut client = SslContext::builder(SslMethod::tls()).context("SSL_CTX_new")?;
        client
            .set_verify_cert_store(trust_store(pki.ca_pem())?)
            .context("setting the client's verify store")?;
        client.set_verify(SslVerifyMode::PEER);
        client.verify_param_mut().set_time(FIXED_VERIFY_TIME);
        client
            .verify_param_mut()
            .set_host(SERVER_NAME)
            .context("setting the host to verify")?;
        Ok(Contexts {
            client: client.build(),
            server: server.build(),
            profile: OpenSsl::defaults(),
        })
    }
}
