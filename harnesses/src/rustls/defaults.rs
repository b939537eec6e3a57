//! rustls's default configuration ([`Defaults`]): the aws-lc-rs provider's
//! defaults and rustls's default protocol versions on both sides, plus the
//! trust anchor, the web ECDSA chain, the fixed clock and the deterministic
//! random source. One deviation, so that every run is a new connection:
//! the client keeps no sessions (rustls's default client would resume its
//! second handshake from the first one's ticket, and every counted run
//! would be a resumption).

use std::sync::Arc;

use regress_measure::HarnessError;

use super::api::{self, Resumption};
use super::config::{parse_chain, parse_key, trust_only, Configs, FixedTime};
use super::rng;
use super::tls::Rustls;
use super::verify::NotingServerVerifier;
use crate::common::error::Context as _;
use crate::common::pins::{CipherSuite, NamedGroup, Pins, TlsVersion};
use crate::common::pki::PemCopies;
use crate::paths::Profile;
use crate::tls::defaults::{self, Defaults, DEFAULTS_PKI};

/// The TLS 1.3 suite the default provider lists first: rustls 0.23's
/// aws-lc-rs provider puts TLS_AES_256_GCM_SHA384 first (on a machine with
/// AES-NI), the 0.24 generation's `rustls-aws-lc-rs` puts
/// TLS_AES_128_GCM_SHA256 first (its `DEFAULT_TLS13_CIPHER_SUITES`).
const DEFAULT_SUITE: CipherSuite = if cfg!(feature = "rustls-0-24") {
    CipherSuite::Tls13Aes128GcmSha256
} else {
    CipherSuite::Tls13Aes256GcmSha384
};

impl Defaults for Rustls {
    /// rustls 0.23.46 with aws-lc-rs and its default feature
    /// `prefer-post-quantum` (which `harnesses/Cargo.toml` turns on, as
    /// rustls's default features do): TLS 1.3, [`DEFAULT_SUITE`],
    /// X25519MLKEM768; the server sends TLS 1.3 tickets from its in-memory
    /// session cache after the handshake. The 0.24 generation differs in
    /// the suite only.
    fn defaults() -> Profile {
        defaults::profile(
            Pins {
                version: TlsVersion::Tls13,
                suite: DEFAULT_SUITE,
                group: NamedGroup::X25519MlKem768,
                scheme: DEFAULTS_PKI.signature_scheme(),
            },
            Some(crate::paths::Resumption::Cache),
        )
    }

    fn default_configs() -> Result<Configs, HarnessError> {
        let provider = Arc::new(api::default_provider(&rng::DETERMINISTIC_RANDOM));
        let time: Arc<dyn api::TimeProvider> = Arc::new(FixedTime);
        let pem = PemCopies::of(DEFAULTS_PKI);
        let server = api::with_single_cert(
            api::default_server_builder(&provider, &time)?.with_no_client_auth(),
            parse_chain(&pem.server_chain)?,
            parse_key(&pem.server_key)?,
        )
        .context("loading the server chain and key")?;
        let inner = api::server_verifier(trust_only(&pem.ca)?, &provider)?;
        let verifier = Arc::new(NotingServerVerifier::new(inner));
        let builder = api::default_client_builder(&provider, &time)?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone());
        let mut client =
            api::with_no_client_auth(builder).context("finishing the client config")?;
        client.resumption = Resumption::disabled();
        Configs::assemble(
            Arc::new(client),
            Arc::new(server),
            verifier,
            None,
            &Rustls::defaults(),
            &pem,
        )
    }
}
