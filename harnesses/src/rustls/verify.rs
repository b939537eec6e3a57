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

use super::api::{self, DigitallySignedStruct, SignatureScheme, Verified};

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
/// accepts; every other call is passed through unchanged (the trait impls
/// are in [`super::api`], as the verifier traits differ by rustls version).
/// [`NotingServerVerifier`] wraps rustls's `WebPkiServerVerifier`,
/// [`NotingClientVerifier`] its `WebPkiClientVerifier` (client certificate
/// required).
#[derive(Debug)]
pub struct Noting<V: ?Sized> {
    pub(in crate::rustls) inner: Arc<V>,
    /// Schemes of the peer's signatures this verifier accepted.
    pub log: SchemeLog,
}

/// A client's verifier of the server.
pub type NotingServerVerifier = Noting<api::WebPkiServerVerifier>;

/// A server's verifier of the client.
pub type NotingClientVerifier = Noting<api::ClientVerifier>;

impl<V: ?Sized> Noting<V> {
    /// Wraps `inner` with an empty log.
    pub fn new(inner: Arc<V>) -> Noting<V> {
        Noting {
            inner,
            log: SchemeLog::default(),
        }
    }

    /// `verified`, noting the signature's scheme if it verified.
    pub(in crate::rustls) fn noted(
        &self,
        dss: &DigitallySignedStruct,
        verified: Verified,
    ) -> Verified {
        if verified.is_ok() {
            self.log.note(dss.scheme);
        }
        verified
    }
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
