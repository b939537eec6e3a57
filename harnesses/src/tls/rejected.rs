//! [`RejectedHandshake`]: a handshake that fails the way real ones most
//! often do, the client refusing the server's certificate, for any TLS
//! library.

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError};

use super::Tls;
use crate::common::error::ensure;
use crate::paths::{Handshake, Profile};

/// The handshake the client rejects: handshake_ecdsa_p256's, but the
/// client trusts the RSA PKI's CA ([`Profile::untrusted`]).
pub const REJECTED: Handshake = Handshake::ALL[1];

/// The profile of the rejected handshake.
pub const fn profile() -> Profile {
    let mut profile = REJECTED.profile();
    profile.untrusted = true;
    profile
}

/// TLS alerts a client sends when it cannot build a trusted chain
/// (RFC 8446 section 6.2): bad_certificate, unsupported_certificate,
/// certificate_unknown, unknown_ca.
pub const CERTIFICATE_ALERTS: [u8; 4] = [42, 43, 46, 48];

/// How a failed handshake ended, as the library reported it to each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The client's error, in the library's words.
    pub client: String,
    /// The server's error, in the library's words.
    pub server: String,
    /// The alert the server received, as the library reports it (`None`:
    /// it reported none).
    pub alert: Option<u8>,
}

/// A TLS library whose failed handshakes the rejected path drives.
pub trait Rejection: Tls {
    /// Whether the client's alert reaches the server within the run. False
    /// where the library holds the alert back (s2n-tls blinds the error:
    /// `s2n_shutdown` refuses to send the alert until 10 to 30 seconds have
    /// passed on the connection's clock, which the fixed clock never lets
    /// pass); then the server is left waiting, as for a client that goes
    /// away, and the check asserts that instead.
    const ALERTS: bool = true;

    /// Both sides' handshake calls until each has failed: the client on
    /// the server's chain (it sends its alert), the server on reading the
    /// alert; then what an application reads of the failure on each side.
    /// An error here means the handshake did not fail that way (it
    /// completed, or hung).
    fn reject(
        configs: &Self::Configs,
        fresh: Self::Fresh,
    ) -> Result<(Self::Pair, Failure), HarnessError>;
}

/// One handshake of library `L` that the client rejects.
///
/// **Counted:** [`Rejection::reject`]: the ClientHello, the server's whole
/// first flight (key exchange, its ECDSA P-256 chain and CertificateVerify),
/// the client failing to build a path to the CA it trusts, encrypting and
/// sending its fatal alert, the server decrypting the alert and failing,
/// and both sides' error reporting.
///
/// **Not counted:** configs (`setup`) and the fresh connections (`prepare`).
///
/// **Check:** the client failed on the certificate, and the server failed
/// because it received a certificate alert (bad_certificate, certificate
/// unknown or unknown_ca) from it; a completed handshake is an error in the
/// run already.
pub struct RejectedHandshake<L>(PhantomData<fn() -> L>);

impl<L> RejectedHandshake<L> {
    /// The harness.
    pub const fn new() -> RejectedHandshake<L> {
        RejectedHandshake(PhantomData)
    }
}

impl<L> Default for RejectedHandshake<L> {
    fn default() -> Self {
        RejectedHandshake::new()
    }
}

/// Checks that `failure` is a client refusing the server's certificate, and
/// with `alerts` a server that failed on the client's certificate alert.
pub fn check_failure(failure: &Failure, alerts: bool) -> Result<(), HarnessError> {
    let client = failure.client.to_ascii_lowercase();
    ensure(
        client.contains("cert") || client.contains("issuer") || client.contains("verif"),
        || {
            format!(
                "the client failed, but not on the certificate: {}",
                failure.client
            )
        },
    )?;
    if !alerts {
        return ensure(failure.alert.is_none(), || {
            format!("the server received alert {:?}", failure.alert)
        });
    }
    ensure(
        failure
            .alert
            .is_some_and(|alert| CERTIFICATE_ALERTS.contains(&alert)),
        || {
            format!(
                "the server failed with {:?} and alert {:?}, not a certificate alert from the client",
                failure.server, failure.alert
            )
        },
    )
}

impl<L: Rejection> Harness for RejectedHandshake<L> {
    type Setup = L::Configs;
    type Input = L::Fresh;
    type Output = (L::Pair, Failure);

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    fn setup(&self) -> Result<L::Configs, HarnessError> {
        L::configs(&profile())
    }

    fn prepare(&self, configs: &L::Configs) -> Result<L::Fresh, HarnessError> {
        L::fresh(configs)
    }

    fn run(
        &self,
        configs: &L::Configs,
        fresh: L::Fresh,
    ) -> Result<(L::Pair, Failure), HarnessError> {
        L::reject(configs, fresh)
    }

    fn check(&self, _: &L::Configs, output: &(L::Pair, Failure)) -> Result<(), HarnessError> {
        check_failure(&output.1, L::ALERTS)
    }
}
