//! s2n-tls's default configuration ([`Defaults`]): `config::Builder::new()`
//! on both sides, with no security policy set (s2n-tls's `default`), plus
//! the trust anchor, the web ECDSA chain, the fixed clocks, and no system
//! trust store.

use regress_measure::HarnessError;
use s2n_tls::config::{self, Config};

use super::config::{Configs, FixedMonotonicClock, FixedWallClock};
use super::tls::S2nTls;
use crate::common::error::Context as _;
use crate::common::pins::{CipherSuite, NamedGroup, Pins, TlsVersion};
use crate::paths::Profile;
use crate::tls::defaults::{self, Defaults, DEFAULTS_PKI};

/// A builder of s2n-tls's defaults and what it cannot default: no system
/// trust store and the fixed clocks.
fn builder() -> Result<config::Builder, HarnessError> {
    let mut builder = config::Builder::new();
    builder
        .with_system_certs(false)
        .context("skipping the system trust store")?
        .set_wall_clock(FixedWallClock)
        .context("setting the wall clock")?
        .set_monotonic_clock(FixedMonotonicClock)
        .context("setting the monotonic clock")?;
    Ok(builder)
}

impl Defaults for S2nTls {
    /// s2n-tls 0.3.47's `default` policy is `20251014`: TLS 1.3 with
    /// TLS_AES_128_GCM_SHA256 first and the post-quantum X25519MLKEM768
    /// first among its groups; no tickets (a server has none without a
    /// ticket key).
    fn defaults() -> Profile {
        defaults::profile(
            Pins {
                version: TlsVersion::Tls13,
                suite: CipherSuite::Tls13Aes128GcmSha256,
                group: NamedGroup::X25519MlKem768,
                scheme: DEFAULTS_PKI.signature_scheme(),
            },
            None,
        )
    }

    fn default_configs() -> Result<Configs, HarnessError> {
        let pki = DEFAULTS_PKI;
        let mut server = builder()?;
        server
            .load_pem(pki.server_chain_pem(), pki.server_key_pem())
            .context("loading the server chain and key")?;
        let mut client = builder()?;
        client
            .trust_pem(pki.ca_pem())
            .context("trusting the web root")?;
        let build = |builder: config::Builder, side: &str| -> Result<Config, HarnessError> {
            builder
                .build()
                .map_err(|error| format!("building the {side} config: {error}").into())
        };
        Ok(Configs {
            client: build(client, "client")?,
            server: build(server, "server")?,
            profile: S2nTls::defaults(),
            tickets: None,
        })
    }
}
