//! Verifiers that note the signature scheme they verified.
//!
//! rustls does not report the scheme of the peer's CertificateVerify (or
//! TLS 1.2 ServerKeyExchange), so the harnesses' verifiers wrap rustls's own
//! webpki verifiers and note it in a [`SchemeLog`]: an atomic store per
//! verified signature, a few instructions per handshake. A side's verifier
//! sees only its peer's signature: what a side signed itself with is not
//! visible to it (`Seen::NotVisible` in the shared comparison).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ::rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use ::rustls::client::WebPkiServerVerifier;
use ::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use ::rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use ::rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// The signature scheme of the last handshake signature a verifier accepted.
///
/// Configs are shared by every connection, and so are their verifiers:
/// `check` [`take`](SchemeLog::take)s the scheme right after each handshake,
/// so that it sees this handshake's, not an earlier one's.
#[derive(Debug, Default)]
pub struct SchemeLog(AtomicU32);

/// Set in a [`SchemeLog`] value once a scheme has been noted.
const NOTED: u32 = 1 << 16;

impl SchemeLog {
    fn note(&self, scheme: SignatureScheme) {
        self.0
            .store(NOTED | u32::from(u16::from(scheme)), Ordering::Relaxed);
    }

    /// The last scheme noted since the previous `take`, if any.
    pub fn take(&self) -> Option<SignatureScheme> {
        let value = self.0.swap(0, Ordering::Relaxed);
        (value & NOTED != 0).then(|| SignatureScheme::from(value as u16))
    }
}

/// A rustls verifier that notes the scheme of every handshake signature it
/// accepts; every other call is passed through unchanged.
/// [`NotingServerVerifier`] wraps rustls's [`WebPkiServerVerifier`],
/// [`NotingClientVerifier`] its `WebPkiClientVerifier` (client certificate
/// required).
#[derive(Debug)]
pub struct Noting<V: ?Sized> {
    inner: Arc<V>,
    /// Schemes of the peer's signatures this verifier accepted.
    pub log: SchemeLog,
}

/// A client's verifier of the server.
pub type NotingServerVerifier = Noting<WebPkiServerVerifier>;

/// A server's verifier of the client.
pub type NotingClientVerifier = Noting<dyn ClientCertVerifier>;

/// What a signature check returns.
type Verified = Result<HandshakeSignatureValid, ::rustls::Error>;

impl<V: ?Sized> Noting<V> {
    /// Wraps `inner` with an empty log.
    pub fn new(inner: Arc<V>) -> Noting<V> {
        Noting {
            inner,
            log: SchemeLog::default(),
        }
    }

    /// `verified`, noting the signature's scheme if it verified.
    fn noted(&self, dss: &DigitallySignedStruct, verified: Verified) -> Verified {
        if verified.is_ok() {
            self.log.note(dss.scheme);
        }
        verified
    }
}

/// The methods both verifier traits have: the two handshake-signature
/// checks, noting what verified, and the scheme list and raw-key flag,
/// passed through.
macro_rules! signature_checks {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Verified {
            self.noted(dss, self.inner.verify_tls12_signature(message, cert, dss))
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Verified {
            self.noted(dss, self.inner.verify_tls13_signature(message, cert, dss))
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.inner.supported_verify_schemes()
        }

        fn requires_raw_public_keys(&self) -> bool {
            self.inner.requires_raw_public_keys()
        }
    };
}

impl ServerCertVerifier for NotingServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, ::rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    signature_checks!();

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}

impl ClientCertVerifier for NotingClientVerifier {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, ::rustls::Error> {
        self.inner
            .verify_client_cert(end_entity, intermediates, now)
    }

    signature_checks!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_log_keeps_the_last_scheme_until_taken() {
        let log = SchemeLog::default();
        assert_eq!(log.take(), None);
        log.note(SignatureScheme::RSA_PKCS1_SHA256);
        log.note(SignatureScheme::RSA_PSS_SHA256);
        assert_eq!(log.take(), Some(SignatureScheme::RSA_PSS_SHA256));
        assert_eq!(log.take(), None);
    }
}
