//! [`ConfigBuild`]: building an s2n-tls `Config`.

use regress_measure::{Harness, HarnessError};
use s2n_tls::config::Config;
use s2n_tls::security::Policy;

use super::{
    base_builder, check_negotiated, new_pair, pinned_policy, AcceptHost, Context as _, Expected,
    Hierarchy, HANDSHAKE_PIPE_CAPACITY,
};
use crate::certs::{CA_PEM, LEAF_CHAIN_PEM, LEAF_KEY_PEM};

/// Builds an s2n-tls `Config` ready to serve and to verify `localhost`.
///
/// **Counted:** `Builder::new` (`s2n_config_new_minimal`), the pinned policy,
/// both fixed clocks, the verify-host callback, loading the RSA-4096 chain and
/// private key (PEM parsing, key parsing and the key/certificate match check),
/// adding the CA to the trust store, and `build`. This is what an application
/// pays once per config, and why configs should be reused.
///
/// **Not counted:** s2n-tls's one-time library initialisation (`setup` calls
/// it, since the first `Builder::new` in a process would otherwise pay it)
/// and constructing the policy name. The PEM bytes are embedded in the
/// binary, so no file is read anywhere. The system trust store is *not*
/// loaded (`with_system_certs(false)`): it would add about 57 M instructions
/// that depend on the machine's CA bundle, not on s2n-tls.
///
/// **Check:** a native handshake between two connections using the built
/// config (as client and as server), which must negotiate the pinned
/// parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigBuild;

/// What [`ConfigBuild`] runs share: the policy and the PEM inputs.
///
/// The PEM bytes are copied from the binary into heap buffers: parsing reads
/// them with copies whose instruction count depends on the buffers'
/// alignment, and the alignment of embedded data moves whenever unrelated
/// code in the binary changes, while a fresh allocation's does not.
#[derive(Debug)]
pub struct ConfigBuildSetup {
    policy: Policy,
    chain_pem: Vec<u8>,
    key_pem: Vec<u8>,
    ca_pem: Vec<u8>,
}

impl Harness for ConfigBuild {
    type Setup = ConfigBuildSetup;
    type Input = ();
    type Output = Config;

    fn setup(&self) -> Result<ConfigBuildSetup, HarnessError> {
        s2n_tls::init::init();
        Ok(ConfigBuildSetup {
            policy: pinned_policy()?,
            chain_pem: LEAF_CHAIN_PEM.to_vec(),
            key_pem: LEAF_KEY_PEM.to_vec(),
            ca_pem: CA_PEM.to_vec(),
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
            .load_pem(&setup.chain_pem, &setup.key_pem)
            .context("loading the chain and key")?
            .trust_pem(&setup.ca_pem)
            .context("trusting the CA")?;
        builder.build().context("building the config")
    }

    fn check(&self, _: &ConfigBuildSetup, config: &Config) -> Result<(), HarnessError> {
        let mut pair = new_pair(config, config, HANDSHAKE_PIPE_CAPACITY, None)?;
        pair.handshake()
            .context("handshaking with the built config")?;
        check_negotiated(&pair, &Expected::tls13(Hierarchy::Rsa4096))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress_measure::harness::run_natively;

    #[test]
    fn config_build_runs_natively() {
        run_natively(&ConfigBuild).expect("ConfigBuild");
    }

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
            .trust_pem(&setup.ca_pem)
            .expect("trust");
        let config = builder.build().expect("config");
        assert!(harness.check(&setup, &config).is_err());
    }
}
