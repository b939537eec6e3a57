//! [`ConfigBuild`]: building an s2n-tls `Config`.

use regress_measure::{Harness, HarnessError};
use s2n_tls::config::Config;
use s2n_tls::security::Policy;

use super::check::check_handshake;
use super::config::{base_builder, policy, AcceptHost, PINNED_POLICY};
use super::transport::Pair;
use crate::common::error::Context as _;
use crate::common::pki::{PemCopies, Pki};
use crate::paths::Handshake;

/// Builds one s2n-tls `Config` ready to serve and to verify `localhost`:
/// the configs of [`Handshake::RSA4096`] in one.
///
/// **Counted:** `Builder::new` (`s2n_config_new_minimal`), the pinned policy,
/// both fixed clocks, the verify-host callback, loading the RSA-4096 chain and
/// private key (PEM parsing, key parsing and the key/certificate match check),
/// adding the CA to the trust store, and `build`. This is what an application
/// pays once per config, and why configs should be reused.
///
/// **Not counted:** s2n-tls's one-time library initialisation (`setup` calls
/// it, since the first `Builder::new` in a process would otherwise pay it)
/// and constructing the policy. The PEM files are copied to the heap in
/// `setup` ([`PemCopies`]). The system trust store is *not* loaded.
///
/// **Check:** a native handshake between two connections using the built
/// config (as client and as server), which must negotiate the pinned
/// parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigBuild;

/// What [`ConfigBuild`] runs share: the policy and the PEM inputs.
#[derive(Debug)]
pub struct ConfigBuildSetup {
    policy: Policy,
    pem: PemCopies,
}

impl Harness for ConfigBuild {
    type Setup = ConfigBuildSetup;
    type Input = ();
    type Output = Config;

    fn setup(&self) -> Result<ConfigBuildSetup, HarnessError> {
        s2n_tls::init::init();
        Ok(ConfigBuildSetup {
            policy: policy(PINNED_POLICY)?,
            pem: PemCopies::of(Pki::Rsa4096),
        })
    }

    fn prepare(&self, _: &ConfigBuildSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &ConfigBuildSetup, _: ()) -> Result<Config, HarnessError> {
        let mut builder = base_builder(&setup.policy)?;
        builder
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .context("setting the verify-host callback")?
            .load_pem(&setup.pem.server_chain, &setup.pem.server_key)
            .context("loading the chain and key")?
            .trust_pem(&setup.pem.ca)
            .context("trusting the CA")?;
        builder.build().context("building the config")
    }

    fn check(&self, _: &ConfigBuildSetup, config: &Config) -> Result<(), HarnessError> {
        let mut pair = Pair::with_configs(config, config)?;
        pair.handshake()
            .context("handshaking with the built config")?;
        check_handshake(
            &pair,
            &Handshake::RSA4096.profile(),
            &Handshake::RSA4096.expected(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built config carries the key: as a server without it (a config
    /// that only trusts the CA) the check's handshake fails.
    #[test]
    fn check_rejects_a_config_without_a_certificate() {
        let harness = ConfigBuild;
        let setup = harness.setup().expect("setup");
        let mut builder = base_builder(&setup.policy).expect("builder");
        builder
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .expect("callback")
            .trust_pem(&setup.pem.ca)
            .expect("trust");
        let config = builder.build().expect("config");
        assert!(harness.check(&setup, &config).is_err());
    }
}
