//! Certificates without a handshake: [`X509ParseChain`] and
//! [`X509VerifyChain`].

use openssl::stack::Stack;
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::verify::X509VerifyParam;
use openssl::x509::{X509PurposeId, X509StoreContext, X509VerifyResult, X509};
use regress_measure::{Harness, HarnessError};

use super::context::FIXED_VERIFY_TIME;
use super::system::{init, runtime_libraries};
use crate::common::error::{ensure, Context as _};
use crate::common::pki::{Pki, SERVER_NAME};

/// The DER of the RSA-4096 leaf (the first certificate of its chain) and of
/// the RSA CA, in fresh heap buffers (see `PemCopies` in
/// `crate::common::pki` on why inputs live on the heap).
fn rsa_leaf_and_ca_der() -> Result<(Vec<u8>, Vec<u8>), HarnessError> {
    let leaf = X509::stack_from_pem(Pki::Rsa4096.server_chain_pem())
        .context("parsing the leaf chain")?
        .into_iter()
        .next()
        .ok_or("the leaf chain is empty")?;
    let ca = X509::from_pem(Pki::Rsa4096.ca_pem()).context("parsing the CA")?;
    Ok((
        leaf.to_der().context("encoding the leaf")?,
        ca.to_der().context("encoding the CA")?,
    ))
}

// ---------------------------------------------------------------------------
// X509ParseChain
// ---------------------------------------------------------------------------

/// Decodes the RSA-4096 leaf and CA certificates from DER, as a TLS client
/// does with the chain in a server's Certificate message.
///
/// **Counted:** two `d2i_X509` calls (`X509::from_der`): the ASN.1 decoding
/// of each certificate into OpenSSL's `X509` structure, with its names,
/// extensions, RSA-4096 public key and signature, and whatever OpenSSL 3.0
/// computes while decoding.
///
/// **Not counted:** decoding the PEM files to DER (`setup`); work OpenSSL
/// defers until a certificate is used (caching extensions, hashing it),
/// which [`X509VerifyChain`] counts for the leaf. No handshake.
///
/// **Check:** each certificate re-encodes to exactly its input, the CA
/// issued the leaf (`X509_check_issued`: names and key identifiers match)
/// and the leaf names `localhost`.
#[derive(Debug, Clone, Copy, Default)]
pub struct X509ParseChain;

/// What [`X509ParseChain`] runs share: the two DER inputs.
#[derive(Debug)]
pub struct ParseSetup {
    leaf_der: Vec<u8>,
    ca_der: Vec<u8>,
}

/// The two decoded certificates.
#[derive(Debug)]
pub struct ParsedChain {
    pub leaf: X509,
    pub ca: X509,
}

impl Harness for X509ParseChain {
    type Setup = ParseSetup;
    type Input = ();
    type Output = ParsedChain;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        runtime_libraries()
    }

    fn setup(&self) -> Result<ParseSetup, HarnessError> {
        init()?;
        let (leaf_der, ca_der) = rsa_leaf_and_ca_der()?;
        Ok(ParseSetup { leaf_der, ca_der })
    }

    fn prepare(&self, _: &ParseSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &ParseSetup, _: ()) -> Result<ParsedChain, HarnessError> {
        Ok(ParsedChain {
            leaf: X509::from_der(&setup.leaf_der).context("decoding the leaf")?,
            ca: X509::from_der(&setup.ca_der).context("decoding the CA")?,
        })
    }

    fn check(&self, setup: &ParseSetup, chain: &ParsedChain) -> Result<(), HarnessError> {
        let leaf_der = chain.leaf.to_der().context("re-encoding the leaf")?;
        ensure(leaf_der == setup.leaf_der, || {
            "the leaf does not re-encode to its input".to_owned()
        })?;
        let ca_der = chain.ca.to_der().context("re-encoding the CA")?;
        ensure(ca_der == setup.ca_der, || {
            "the CA does not re-encode to its input".to_owned()
        })?;
        let issued = chain.ca.issued(&chain.leaf);
        ensure(issued == X509VerifyResult::OK, || {
            format!("the CA did not issue the leaf: {issued}")
        })?;
        let names = chain.leaf.subject_alt_names();
        let localhost = names
            .iter()
            .flatten()
            .any(|name| name.dnsname() == Some(SERVER_NAME));
        ensure(localhost, || {
            format!("the leaf does not name {SERVER_NAME}")
        })
    }
}

// ---------------------------------------------------------------------------
// X509VerifyChain
// ---------------------------------------------------------------------------

/// A store trusting only the CA in `ca_pem`, verifying at `time` for `host`
/// and the TLS server purpose, as a TLS client's verification does.
fn verify_store(ca_pem: &[u8], time: libc::time_t, host: &str) -> Result<X509Store, HarnessError> {
    let ca = X509::from_pem(ca_pem).context("parsing the CA")?;
    let mut param = X509VerifyParam::new().context("X509_VERIFY_PARAM_new")?;
    param.set_time(time);
    param.set_host(host).context("setting the host")?;
    param
        .set_purpose(X509PurposeId::SSL_SERVER)
        .context("setting the purpose")?;
    let mut store = X509StoreBuilder::new().context("X509_STORE_new")?;
    store.add_cert(ca).context("adding the CA")?;
    store
        .set_param(&param)
        .context("setting the store's parameters")?;
    Ok(store.build())
}

/// Verifies the RSA-4096 leaf against a store that trusts only the RSA CA,
/// at the fixed time, for the host `localhost`: the certificate check inside
/// a TLS client's handshake, alone.
///
/// **Counted:** `X509_STORE_CTX_init` (inheriting the store's parameters:
/// fixed time, host, TLS-server purpose), `X509_verify_cert` and
/// `X509_STORE_CTX_cleanup`: building the chain leaf to CA from the store,
/// caching the leaf's extensions (OpenSSL does it on first use, and each run
/// verifies a freshly decoded leaf, as a client does), the purpose and
/// validity checks at the fixed time, the RSA-4096 signature of the leaf by
/// the CA, and the host-name check.
///
/// **Not counted:** the store, with the CA parsed and its parameters set
/// (`setup`: a client builds it once); decoding the leaf and allocating the
/// `X509_STORE_CTX` (`prepare`; [`X509ParseChain`] counts decoding).
///
/// **Check:** verification succeeded with `X509_V_OK` and a chain of two
/// certificates (leaf and CA).
#[derive(Debug, Clone, Copy, Default)]
pub struct X509VerifyChain;

/// What [`X509VerifyChain`] runs share.
pub struct VerifySetup {
    store: X509Store,
    leaf_der: Vec<u8>,
    untrusted: Stack<X509>,
}

impl std::fmt::Debug for VerifySetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifySetup")
            .field("leaf_der", &self.leaf_der.len())
            .field("untrusted", &self.untrusted.len())
            .finish_non_exhaustive()
    }
}

/// A fresh store context and a freshly decoded leaf: one run's input.
pub struct VerifyInput {
    context: X509StoreContext,
    leaf: X509,
}

impl std::fmt::Debug for VerifyInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyInput")
            .field("leaf", &self.leaf)
            .finish_non_exhaustive()
    }
}

/// What one verification found (and the input, kept alive).
#[derive(Debug)]
pub struct VerifyOutcome {
    pub verified: bool,
    pub error: X509VerifyResult,
    pub chain_len: usize,
    _input: VerifyInput,
}

impl X509VerifyChain {
    fn setup_with(
        ca_pem: &[u8],
        time: libc::time_t,
        host: &str,
    ) -> Result<VerifySetup, HarnessError> {
        init()?;
        let (leaf_der, _) = rsa_leaf_and_ca_der()?;
        Ok(VerifySetup {
            store: verify_store(ca_pem, time, host)?,
            leaf_der,
            untrusted: Stack::new().context("creating the empty untrusted stack")?,
        })
    }
}

impl Harness for X509VerifyChain {
    type Setup = VerifySetup;
    type Input = VerifyInput;
    type Output = VerifyOutcome;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        runtime_libraries()
    }

    fn setup(&self) -> Result<VerifySetup, HarnessError> {
        Self::setup_with(Pki::Rsa4096.ca_pem(), FIXED_VERIFY_TIME, SERVER_NAME)
    }

    fn prepare(&self, setup: &VerifySetup) -> Result<VerifyInput, HarnessError> {
        Ok(VerifyInput {
            context: X509StoreContext::new().context("X509_STORE_CTX_new")?,
            leaf: X509::from_der(&setup.leaf_der).context("decoding the leaf")?,
        })
    }

    fn run(&self, setup: &VerifySetup, input: VerifyInput) -> Result<VerifyOutcome, HarnessError> {
        let VerifyInput { mut context, leaf } = input;
        let (verified, error, chain_len) = context
            .init(&setup.store, &leaf, &setup.untrusted, |ctx| {
                let verified = ctx.verify_cert()?;
                let chain_len = ctx.chain().map_or(0, |chain| chain.len());
                Ok((verified, ctx.error(), chain_len))
            })
            .context("verifying the leaf")?;
        Ok(VerifyOutcome {
            verified,
            error,
            chain_len,
            _input: VerifyInput { context, leaf },
        })
    }

    fn check(&self, _: &VerifySetup, outcome: &VerifyOutcome) -> Result<(), HarnessError> {
        ensure(
            outcome.verified && outcome.error == X509VerifyResult::OK,
            || format!("verification failed: {}", outcome.error),
        )?;
        ensure(outcome.chain_len == 2, || {
            format!(
                "verified a chain of {} certificates, expected 2",
                outcome.chain_len
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verify_with(setup: &VerifySetup) -> VerifyOutcome {
        let harness = X509VerifyChain;
        let input = harness.prepare(setup).expect("prepare");
        harness.run(setup, input).expect("run")
    }

    #[test]
    fn verification_fails_with_the_wrong_ca() {
        let setup =
            X509VerifyChain::setup_with(Pki::EcdsaP256.ca_pem(), FIXED_VERIFY_TIME, SERVER_NAME)
                .expect("setup");
        let outcome = verify_with(&setup);
        assert!(!outcome.verified);
        assert_eq!(
            outcome.error.as_raw(),
            openssl_sys::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        );
        assert!(X509VerifyChain.check(&setup, &outcome).is_err());
    }

    /// The fixed time is what is used: in 2200 the leaf has expired.
    #[test]
    fn verification_uses_the_fixed_time() {
        let year_2200: libc::time_t = 7_258_118_400;
        let setup = X509VerifyChain::setup_with(Pki::Rsa4096.ca_pem(), year_2200, SERVER_NAME)
            .expect("setup");
        let outcome = verify_with(&setup);
        assert!(!outcome.verified);
        assert_eq!(
            outcome.error.as_raw(),
            openssl_sys::X509_V_ERR_CERT_HAS_EXPIRED
        );
    }

    #[test]
    fn verification_checks_the_host() {
        let setup =
            X509VerifyChain::setup_with(Pki::Rsa4096.ca_pem(), FIXED_VERIFY_TIME, "example.com")
                .expect("setup");
        let outcome = verify_with(&setup);
        assert!(!outcome.verified);
        assert_eq!(
            outcome.error.as_raw(),
            openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH
        );
    }

    #[test]
    fn parse_check_rejects_swapped_certificates() {
        let harness = X509ParseChain;
        let setup = harness.setup().expect("setup");
        let chain = harness.run(&setup, ()).expect("run");
        let swapped = ParsedChain {
            leaf: chain.ca.clone(),
            ca: chain.leaf.clone(),
        };
        assert!(harness.check(&setup, &swapped).is_err());
    }
}
