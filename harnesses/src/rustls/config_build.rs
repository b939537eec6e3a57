//! [`ConfigBuild`]: building a rustls server and client config.

use std::sync::Arc;

use regress_measure::{Harness, HarnessError};

use super::api::{ClientConfig, ServerConfig};
use super::check::check_handshake;
use super::config::{client_config, server_config, Configs, Pinned};
use super::verify::NotingServerVerifier;
use crate::common::error::Context as _;
use crate::common::pki::PemCopies;
use crate::paths::{Handshake, Profile};

/// Builds a rustls `ServerConfig` and a `ClientConfig` from PEM: the
/// configs of [`Handshake::RSA4096`], the work s2n-tls's `config_build`
/// does in its one combined config.
///
/// **Counted:** parsing the PEM chain, key and CA (rustls-pki-types's PEM
/// decoder); the server builder with the pinned versions, loading the key
/// into aws-lc (`KeyProvider::load_private_key`) and rustls's key/certificate
/// match check (it parses the leaf and compares public keys); turning off
/// session storage and tickets; the client builder: a root store with the CA
/// (parsed into a webpki trust anchor), rustls's `WebPkiServerVerifier` in a
/// [`NotingServerVerifier`] (one extra small allocation), resumption off; and
/// putting both configs in `Arc`s for sharing. This is what an application
/// pays once per config, and why configs should be reused.
///
/// **Not counted:** building the pinned provider and clock ([`Pinned`]),
/// the counterpart of s2n-tls's security policy, and copying the PEM files
/// to the heap ([`PemCopies`]) (`setup`). Nothing is read from disk; no
/// system trust store is loaded.
///
/// **Check:** a native handshake between connections of the two built
/// configs, which must negotiate the pinned TLS 1.3 parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigBuild;

/// What [`ConfigBuild`] runs share: the pins and the PEM inputs.
#[derive(Debug)]
pub struct ConfigBuildSetup {
    profile: Profile,
    pinned: Pinned,
    pem: PemCopies,
}

/// The two configs a [`ConfigBuild`] run built.
#[derive(Debug)]
pub struct BuiltConfigs {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    server_verifier: Arc<NotingServerVerifier>,
}

impl Harness for ConfigBuild {
    type Setup = ConfigBuildSetup;
    type Input = ();
    type Output = BuiltConfigs;

    fn setup(&self) -> Result<ConfigBuildSetup, HarnessError> {
        let profile = Handshake::RSA4096.profile();
        Ok(ConfigBuildSetup {
            pinned: Pinned::new(&profile.pins),
            pem: PemCopies::of(profile.pki),
            profile,
        })
    }

    fn prepare(&self, _: &ConfigBuildSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &ConfigBuildSetup, _: ()) -> Result<BuiltConfigs, HarnessError> {
        let (server, _) = server_config(&setup.pinned, &setup.pem, false, None)?;
        let (client, server_verifier) = client_config(&setup.pinned, &setup.pem, false, None)?;
        Ok(BuiltConfigs {
            client: Arc::new(client),
            server: Arc::new(server),
            server_verifier,
        })
    }

    fn check(&self, setup: &ConfigBuildSetup, built: &BuiltConfigs) -> Result<(), HarnessError> {
        let configs = Configs::assemble(
            built.client.clone(),
            built.server.clone(),
            built.server_verifier.clone(),
            None,
            &setup.profile,
            &setup.pem,
        )?;
        let pair = configs
            .handshake()
            .context("handshaking with the built configs")?;
        check_handshake(&configs, &pair, &setup.profile.expected(false))
    }
}
