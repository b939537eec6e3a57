//! Certificate parsing and verification without a handshake, with the webpki
//! code rustls verifies with.

use std::mem::ManuallyDrop;
use std::sync::{Arc, OnceLock};

use regress_measure::{Harness, HarnessError};

use super::api::pki_types::pem::PemObject;
use super::api::pki_types::{CertificateDer, ServerName, TrustAnchor, UnixTime};
use super::api::webpki::{self, EndEntityCert};
use super::api::{self, LeafIdentity, ServerVerified, WebPkiServerVerifier};
use super::config::{fixed_now, parse_chain, trust_only, Pinned};
use crate::common::error::{ensure, Context as _};
use crate::common::pki::{PemCopies, Pki, SERVER_NAME};
use crate::paths::Handshake;

/// The RSA-4096 leaf and CA certificates in DER, decoded from the embedded
/// PEM once per process, into heap buffers that live as long as the process
/// (the parsed objects borrow from them, and a run's output outlives the
/// run).
#[derive(Debug)]
struct ChainDer {
    leaf: CertificateDer<'static>,
    ca: CertificateDer<'static>,
}

static RSA_CHAIN_DER: OnceLock<ChainDer> = OnceLock::new();

fn rsa_chain_der() -> Result<&'static ChainDer, HarnessError> {
    if let Some(der) = RSA_CHAIN_DER.get() {
        return Ok(der);
    }
    let pem = PemCopies::of(Pki::Rsa4096);
    let leaf = parse_chain(&pem.server_chain)?
        .into_iter()
        .next()
        .ok_or("the server chain is empty")?;
    let ca = CertificateDer::from_pem_slice(&pem.ca).context("decoding the CA PEM")?;
    Ok(RSA_CHAIN_DER.get_or_init(|| ChainDer { leaf, ca }))
}

// ---------------------------------------------------------------------------
// X509ParseChain
// ---------------------------------------------------------------------------

/// Parses the RSA-4096 leaf and CA certificates into the objects rustls's
/// verifier works with.
///
/// **Counted:** `webpki::EndEntityCert::try_from` on the leaf's DER and
/// `webpki::anchor_from_trusted_cert` on the CA's DER: the X.509 structure
/// (TBS certificate, signature algorithm, issuer, validity, subject, public
/// key info, and the extensions webpki understands: basic constraints, key
/// usage, extended key usage, subjectAltName, name constraints, CRL
/// distribution points; an unknown critical extension is an error). That is
/// what rustls does with a peer's end-entity certificate, and with each CA it
/// adds to a `RootCertStore` (which then copies the anchor's fields: that
/// copy is not counted here). webpki parses without copying: the objects
/// borrow the DER. No signature is checked.
///
/// **Not counted:** decoding the PEM to DER (`setup`, once per process).
///
/// **Check:** both parses returned `Ok`; and the same DER, parsed again
/// outside the count, gives a leaf that verifies through the anchor for
/// server authentication at the fixed time and is valid for `localhost`, so
/// the inputs are the right certificates and their parsed forms are usable.
/// (See [`ParsedChain`] for why the objects are not returned.)
#[derive(Debug, Clone, Copy, Default)]
pub struct X509ParseChain;

/// What an [`X509ParseChain`] run produced: whether each parse succeeded.
///
/// The parsed objects themselves (a few hundred bytes each) are not returned:
/// moving them out of `run` into the output cost about 150 instructions, 2 %
/// of this small region. They are passed through [`std::hint::black_box`] so
/// the compiler cannot skip building them, and not dropped (see `run`).
/// `check` re-parses the same DER, outside the count, and verifies the
/// result: the parse is deterministic, so that shows what the run built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedChain {
    leaf_ok: bool,
    anchor_ok: bool,
}

/// What [`X509ParseChain`] runs share.
#[derive(Debug)]
pub struct ParseSetup {
    der: &'static ChainDer,
    pinned: Pinned,
    server_name: ServerName<'static>,
}

impl Harness for X509ParseChain {
    type Setup = ParseSetup;
    type Input = ();
    type Output = ParsedChain;

    fn setup(&self) -> Result<ParseSetup, HarnessError> {
        Ok(ParseSetup {
            der: rsa_chain_der()?,
            pinned: Pinned::new(&Handshake::RSA4096.profile().pins),
            server_name: ServerName::try_from(SERVER_NAME).context("the server name")?,
        })
    }

    fn prepare(&self, _: &ParseSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &ParseSetup, _: ()) -> Result<ParsedChain, HarnessError> {
        // `ManuallyDrop`: a successful parse owns nothing (webpki borrows the
        // DER), but the drop glue of the two `Result`s would still test
        // their variants, 20-odd instructions in a 7,700-instruction region.
        // A failed parse's error is leaked, and fails the check.
        let leaf = ManuallyDrop::new(EndEntityCert::try_from(&setup.der.leaf));
        let anchor = ManuallyDrop::new(webpki::anchor_from_trusted_cert(&setup.der.ca));
        Ok(ParsedChain {
            leaf_ok: std::hint::black_box(&*leaf).is_ok(),
            anchor_ok: std::hint::black_box(&*anchor).is_ok(),
        })
    }

    fn check(&self, setup: &ParseSetup, parsed: &ParsedChain) -> Result<(), HarnessError> {
        // Parsing again names webpki's error if the run's parse failed.
        let (leaf, anchor) = parse(setup.der)?;
        ensure(parsed.leaf_ok && parsed.anchor_ok, || {
            format!("the run's parse failed: {parsed:?}")
        })?;
        check_parsed(setup, &leaf, &anchor)
    }
}

/// Parses the leaf and the CA as `run` does, keeping the objects.
fn parse(der: &ChainDer) -> Result<(EndEntityCert<'_>, TrustAnchor<'_>), HarnessError> {
    Ok((
        EndEntityCert::try_from(&der.leaf).context("parsing the leaf")?,
        webpki::anchor_from_trusted_cert(&der.ca).context("parsing the CA")?,
    ))
}

/// The parsed leaf verifies through the parsed anchor for server
/// authentication at the fixed time, and is valid for `localhost`.
// webpki 0.104 (rustls 0.24) takes the usage as `&dyn`, 0.103 (rustls
// 0.23) as `impl` (which a reference also is): one borrow serves both.
#[allow(clippy::needless_borrows_for_generic_args)]
fn check_parsed(
    setup: &ParseSetup,
    leaf: &EndEntityCert<'_>,
    anchor: &TrustAnchor<'_>,
) -> Result<(), HarnessError> {
    leaf.verify_for_usage(
        api::all_algorithms(&setup.pinned.provider),
        std::slice::from_ref(anchor),
        &[],
        fixed_now(),
        &api::Eku::server_auth(),
        None,
        None,
    )
    .context("verifying the parsed leaf through the parsed anchor")?;
    leaf.verify_is_valid_for_subject_name(&setup.server_name)
        .context("the parsed leaf's name")
}

// ---------------------------------------------------------------------------
// X509VerifyChain
// ---------------------------------------------------------------------------

/// Verifies the RSA-4096 leaf for the server name `localhost` at the fixed
/// time, with the test CA as the only trust anchor, exactly as a rustls
/// client does during a handshake.
///
/// **Counted:** `WebPkiServerVerifier::verify_server_cert` (0.24:
/// `verify_identity` of the leaf as a server identity, built in `setup`,
/// which also clones that identity into the `VerifiedIdentity` it returns
/// on rustls main): parsing the leaf,
/// building the path to the trust anchor (issuer match, then the CA's
/// sha256WithRSAEncryption signature over the leaf: an RSA-4096 public-key
/// operation), validity at the fixed time, basic constraints and extended
/// key usage (server authentication), and the subjectAltName match for
/// `localhost`. No intermediates are passed (the leaf's issuer is the
/// anchor; in a handshake the server also sends the CA, which webpki does
/// not look at once an anchor matches), no OCSP response, no CRLs.
///
/// **Not counted:** the verifier with its root store and the pinned
/// provider (`setup`, as a client config holds it), decoding the PEM to DER.
///
/// **Check:** `run` returns the verifier's `ServerCertVerified`, which only a
/// successful verification produces; every failure is an error from `run`.
#[derive(Debug, Clone, Copy, Default)]
pub struct X509VerifyChain;

/// What [`X509VerifyChain`] runs share.
#[derive(Debug)]
pub struct VerifySetup {
    verifier: Arc<WebPkiServerVerifier>,
    /// The leaf as the verifier takes it.
    leaf: LeafIdentity,
    server_name: ServerName<'static>,
    now: UnixTime,
}

impl VerifySetup {
    fn new(ca_pem: &[u8]) -> Result<VerifySetup, HarnessError> {
        let pinned = Pinned::new(&Handshake::RSA4096.profile().pins);
        let verifier = api::server_verifier(trust_only(ca_pem)?, &pinned.provider)?;
        Ok(VerifySetup {
            verifier,
            leaf: api::server_identity(&rsa_chain_der()?.leaf),
            server_name: ServerName::try_from(SERVER_NAME).context("the server name")?,
            now: fixed_now(),
        })
    }

    fn verify(&self) -> Result<ServerVerified, api::Error> {
        api::verify_server(&self.verifier, &self.leaf, &self.server_name, self.now)
    }
}

impl Harness for X509VerifyChain {
    type Setup = VerifySetup;
    type Input = ();
    type Output = ServerVerified;

    fn setup(&self) -> Result<VerifySetup, HarnessError> {
        VerifySetup::new(&PemCopies::of(Pki::Rsa4096).ca)
    }

    fn prepare(&self, _: &VerifySetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &VerifySetup, _: ()) -> Result<ServerVerified, HarnessError> {
        setup.verify().context("verifying the leaf")
    }

    fn check(&self, _: &VerifySetup, _verified: &ServerVerified) -> Result<(), HarnessError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn verification_fails_with_the_wrong_ca() {
        let setup = VerifySetup::new(Pki::EcdsaP256.ca_pem()).expect("setup");
        let error = X509VerifyChain
            .run(&setup, ())
            .expect_err("the ECDSA CA did not issue the RSA leaf");
        assert!(error.to_string().contains("UnknownIssuer"), "{error}");
    }

    #[test]
    fn verification_fails_for_another_name() {
        let mut setup = X509VerifyChain.setup().expect("setup");
        setup.server_name = ServerName::try_from("example.com").expect("name");
        assert!(setup.verify().is_err());
    }

    #[test]
    fn verification_fails_outside_the_validity_period() {
        let mut setup = X509VerifyChain.setup().expect("setup");
        // 2126-01-01, after the certificates expire.
        setup.now = UnixTime::since_unix_epoch(Duration::from_secs(4_922_899_200));
        assert!(setup.verify().is_err());
    }

    #[test]
    fn parse_check_rejects_a_failed_parse() {
        let setup = X509ParseChain.setup().expect("setup");
        let parsed = X509ParseChain.run(&setup, ()).expect("parse");
        assert_eq!(
            parsed,
            ParsedChain {
                leaf_ok: true,
                anchor_ok: true
            }
        );
        X509ParseChain.check(&setup, &parsed).expect("both parsed");
        for failed in [
            ParsedChain {
                leaf_ok: false,
                anchor_ok: true,
            },
            ParsedChain {
                leaf_ok: true,
                anchor_ok: false,
            },
        ] {
            let error = X509ParseChain.check(&setup, &failed).expect_err("failed");
            assert!(error.to_string().contains("parse failed"), "{error}");
        }
    }

    /// What the check verifies would notice the wrong certificates: the
    /// leaf parsed as its own anchor is not the CA, so there is no path.
    #[test]
    fn parse_check_rejects_a_mismatched_anchor() {
        let setup = X509ParseChain.setup().expect("setup");
        let (leaf, anchor) = parse(setup.der).expect("parse");
        check_parsed(&setup, &leaf, &anchor).expect("the right pair");
        let wrong = webpki::anchor_from_trusted_cert(&setup.der.leaf).expect("anchor");
        assert!(check_parsed(&setup, &leaf, &wrong).is_err());
    }

    #[test]
    fn parse_fails_on_garbage() {
        let garbage = CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
        assert!(EndEntityCert::try_from(&garbage).is_err());
        assert!(webpki::anchor_from_trusted_cert(&garbage).is_err());
    }
}
