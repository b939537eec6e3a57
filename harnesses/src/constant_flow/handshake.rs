//! The server's processing of a ClientHello under different server private
//! keys, for s2n-tls, rustls and OpenSSL.
//!
//! Each variant is one full TLS 1.3 handshake of the shared shape
//! ([`crate::tls::Tls`]), pinned as `handshake_rsa4096` is (TLS 1.3,
//! TLS_AES_128_GCM_SHA256, secp256r1, rsa_pss_rsae_sha256), whose server
//! holds one of three RSA-2048 keys ([`secrets::RSA_KEYS`]: leaves of the
//! same length, signed by the RSA-4096 test CA). Its sides are marked, and
//! the runner compares only the server's first stage, `server_flight`:
//! reading the ClientHello, the key exchange, and the flight up to its
//! Finished, with the CertificateVerify signed under the secret key. The
//! client's stages verify a different (public) certificate per variant and
//! are not compared.

use std::marker::PhantomData;
use std::sync::Arc;

use regress_measure::program::AnyHarness;
use regress_measure::{Harness, HarnessError};

use super::secrets::{self, RsaKey};
use super::{Add, Control, OK};
use crate::common::pki::PemCopies;
use crate::paths::{Handshake, Profile};
use crate::tls::Tls;

/// The operation's name.
pub const OPERATION: &str = "server_client_hello_rsa2048";

/// Every library's variants.
pub fn operations(add: &mut Add<'_>) {
    fn each<L: ServerIdentity>(library: &str, add: &mut Add<'_>) {
        for (key, control) in secrets::with_control(&secrets::RSA_KEYS, Control::HeapShifted) {
            let harness: Box<dyn AnyHarness> = Box::new(ServerHello::<L>::new(key, control));
            let variant = format!("{}{}", key.name, control.suffix());
            add(library, OPERATION, OK, &variant, harness);
        }
    }
    each::<crate::s2n_tls::tls::S2nTls>("s2n_tls", add);
    each::<crate::rustls::tls::Rustls>("rustls", add);
    each::<crate::openssl::tls::OpenSsl>("openssl", add);
}

/// A library whose configs can carry another server identity than its
/// PKI's leaf.
pub trait ServerIdentity: Tls {
    /// Both configs of `profile`, the server's identity `key` (its chain and
    /// private key) instead of the PKI's server leaf.
    fn configs_for(profile: &Profile, key: &RsaKey) -> Result<Self::Configs, HarnessError>;
}

impl ServerIdentity for crate::s2n_tls::tls::S2nTls {
    fn configs_for(profile: &Profile, key: &RsaKey) -> Result<Self::Configs, HarnessError> {
        use crate::s2n_tls::config::{
            client_config, policies, policy, server_config_with, Configs,
        };
        let (client_policy, server_policy) = policies(profile)?;
        Ok(Configs {
            client: client_config(
                &policy(client_policy)?,
                profile.pki,
                profile.pki.host(),
                None,
                None,
            )?,
            server: server_config_with(
                &policy(server_policy)?,
                (key.chain_pem, key.key_pem),
                profile.pki,
                false,
                false,
                None,
            )?,
            profile: *profile,
            tickets: None,
        })
    }
}

impl ServerIdentity for crate::rustls::tls::Rustls {
    fn configs_for(profile: &Profile, key: &RsaKey) -> Result<Self::Configs, HarnessError> {
        use crate::rustls::config::{client_config, server_config, Configs, Pinned};
        let pinned = Pinned::new(&profile.pins);
        let mut pem = PemCopies::of(profile.pki);
        pem.server_chain = key.chain_pem.to_vec();
        pem.server_key = key.key_pem.to_vec();
        let (server, client_verifier) = server_config(&pinned, &pem, false, None)?;
        let (client, server_verifier) = client_config(&pinned, &pem, false, None)?;
        Configs::assemble(
            Arc::new(client),
            Arc::new(server),
            server_verifier,
            client_verifier,
            profile,
            &pem,
        )
    }
}

impl ServerIdentity for crate::openssl::tls::OpenSsl {
    fn configs_for(profile: &Profile, key: &RsaKey) -> Result<Self::Configs, HarnessError> {
        use crate::openssl::context::{client_context, server_context, Contexts};
        crate::openssl::system::init()?;
        Ok(Contexts {
            server: server_context(profile, key.chain_pem, key.key_pem)?,
            client: client_context(profile, profile.pki.ca_pem(), profile.pki.host())?,
            profile: *profile,
        })
    }
}

/// One full handshake whose server holds `key`; the runner compares its
/// `server_flight` part.
///
/// **Check:** the handshake completed with the pins of `handshake_rsa4096`
/// on both sides (the client verified the chain against the CA).
pub struct ServerHello<L> {
    key: RsaKey,
    control: Control,
    library: PhantomData<fn() -> L>,
}

impl<L> ServerHello<L> {
    pub const fn new(key: RsaKey, control: Control) -> ServerHello<L> {
        ServerHello {
            key,
            control,
            library: PhantomData,
        }
    }

    const PATH: Handshake = Handshake::RSA4096;
}

impl<L: ServerIdentity> Harness for ServerHello<L> {
    type Setup = L::Configs;
    type Input = L::Fresh;
    type Output = L::Pair;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    /// The driver marks each side's calls: the runner compares the
    /// server's first stage.
    fn sides(&self) -> bool {
        true
    }

    fn setup(&self) -> Result<L::Configs, HarnessError> {
        self.control.shift_heap();
        L::configs_for(&Self::PATH.profile(), &self.key)
    }

    fn prepare(&self, configs: &L::Configs) -> Result<L::Fresh, HarnessError> {
        L::fresh(configs)
    }

    fn run(&self, configs: &L::Configs, fresh: L::Fresh) -> Result<L::Pair, HarnessError> {
        L::handshake(configs, fresh)
    }

    fn check(&self, configs: &L::Configs, pair: &L::Pair) -> Result<(), HarnessError> {
        Self::PATH
            .expected()
            .check(&L::negotiated(configs, pair, true)?)
    }
}
