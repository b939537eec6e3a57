//! [`ClientChainFlight`]: an mTLS client's second flight carrying a
//! hostile certificate chain: the longest the server's verifier accepts
//! ([`Hostile::LongestClientChain`]: a signature check per intermediate,
//! each paid by the server for a few hundred bytes the client sent), decoys
//! that spend a verifier's budget of signature checks
//! ([`Hostile::ClientChainDecoys`]), or a leaf with an RSA-8192 key
//! ([`Hostile::LargeRsaClient`]).

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError, Received};

use super::Victim;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{Expected, TlsVersion};
use crate::common::pki::{ClientChain, LargeRsa, Pki};
use crate::common::transport::Endpoint;
use crate::paths::{Handshake, Hostile, Profile};

/// The handshake whose client sends `client`'s chain: TLS 1.3, mTLS, on
/// secp256r1, with the PKI's signature scheme (ECDSA P-256 for the chains,
/// RSA-PSS for the RSA leaves).
pub const fn handshake(client: Pki) -> Handshake {
    Handshake {
        client_auth: true,
        ..Handshake::full(client, TlsVersion::Tls13)
    }
}

/// Handshake messages in a TLS 1.3 client's second flight with a
/// certificate: Certificate, CertificateVerify, Finished.
const CLIENT_FLIGHT_MESSAGES: u64 = 3;

/// Bytes a client's second flight may hold beyond its certificates and its
/// signature: the Certificate message's headers, the CertificateVerify's,
/// the Finished, a ChangeCipherSpec, and each record's header and tag.
const FLIGHT_SLACK: u64 = 1024;

/// The bytes `client`'s certificates take in a TLS 1.3 Certificate
/// message (each certificate's DER, its 3-byte length and its 2-byte
/// empty extensions), and at most the bytes of its CertificateVerify's
/// signature: the bounds of the flight, less [`FLIGHT_SLACK`].
fn certificate_list_len(client: Pki) -> Result<(u64, u64), HarnessError> {
    use ::rustls::pki_types::pem::PemObject as _;
    let mut len = 0;
    let mut certificates = 0;
    for certificate in
        ::rustls::pki_types::CertificateDer::pem_slice_iter(client.client_chain_pem())
    {
        let certificate = certificate.context("parsing a client chain's PEM")?;
        len += certificate.len() as u64 + 5;
        certificates += 1;
    }
    if let Pki::EcdsaP256ClientChain(chain) = client {
        ensure(certificates == chain.certificates(), || {
            format!(
                "{chain:?}'s PEM holds {certificates} certificates, not {}",
                chain.certificates()
            )
        })?;
    }
    let signature = match client {
        Pki::Rsa4096LargeClient(large) => u64::from(large.bits() / 8),
        _ => 72,
    };
    Ok((len, signature))
}

/// The size of the client's second flight, waiting unread at its server:
/// its bytes and records, read from the client's end of the transport.
pub fn client_flight_size(client_end: &Endpoint) -> Result<Received, HarnessError> {
    let records = client_end
        .outgoing_records()
        .ok_or("the client's flight ends in part of a record")?;
    Ok(Received {
        bytes: client_end.in_flight().0 as u64,
        records: records.len() as u64,
        messages: CLIENT_FLIGHT_MESSAGES,
    })
}

/// The server of library `L` reading an mTLS client's second flight whose
/// chain is hostile: as long as its verifier accepts
/// ([`Victim::LONGEST_CLIENT_CHAIN`]), [`ClientChain::Decoys49`], or an
/// RSA-8192 leaf ([`LargeRsa::Bits8192`]).
///
/// **Counted:** [`Victim::finish`]: the server reading the client's
/// Certificate (every certificate parsed), building and verifying a path to
/// the CA it trusts (a signature check per certificate on the path, and on
/// every path it tries), the client's CertificateVerify (an ECDSA P-256
/// signature, or RSA-PSS with the leaf's key) and its Finished.
///
/// **Not counted:** the configs (`setup`: [`handshake`]'s profile, the
/// library's pinned laboratory configs, not its defaults: no default server
/// asks for a client certificate), the fresh connections, and the handshake
/// up to the client's second flight waiting at the server (`prepare`): the
/// ClientHello, the server's flight and signature, the client's
/// verification of it and its own signature: what the attacker pays.
///
/// **Check:** both sides finished the mTLS handshake the profile pins, and
/// the server validated the client's chain (every library's own handshake
/// check); and the flight held this chain: its certificates' bytes, and at
/// most its signature and [`FLIGHT_SLACK`] more. With the chain one step
/// longer ([`ClientChain::next`]) a verifier at its limit refuses, which
/// proves the chain is at the limit, not below it; rustls refuses an
/// RSA-16384 leaf (`fairness.rs`).
pub struct ClientChainFlight<L> {
    client: Pki,
    library: PhantomData<fn() -> L>,
}

impl<L: Victim> ClientChainFlight<L> {
    /// The client PKI `input` authenticates with to `L`'s server, if it
    /// sends a client certificate.
    pub const fn client_of(input: Hostile) -> Option<Pki> {
        match input {
            Hostile::LongestClientChain => Some(Pki::EcdsaP256ClientChain(L::LONGEST_CLIENT_CHAIN)),
            Hostile::ClientChainDecoys => Some(Pki::EcdsaP256ClientChain(ClientChain::Decoys49)),
            Hostile::LargeRsaClient => Some(Pki::Rsa4096LargeClient(LargeRsa::Bits8192)),
            _ => None,
        }
    }

    /// The harness of `client`: an input's
    /// ([`ClientChainFlight::client_of`]), or a negative test's, past a
    /// limit, which the server must refuse.
    pub const fn with_client(client: Pki) -> ClientChainFlight<L> {
        ClientChainFlight {
            client,
            library: PhantomData,
        }
    }

    fn profile(&self) -> Profile {
        handshake(self.client).profile()
    }

    fn expected(&self) -> Expected {
        handshake(self.client).expected()
    }
}

/// A pair with the client's second flight waiting at the server; after the
/// run, how the server's calls ended.
pub struct ChainSent<P> {
    pair: P,
    flight: Received,
    outcome: Result<(), HarnessError>,
}

impl<L: Victim> Harness for ClientChainFlight<L> {
    type Setup = L::Configs;
    type Input = ChainSent<L::Pair>;
    type Output = ChainSent<L::Pair>;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    fn setup(&self) -> Result<L::Configs, HarnessError> {
        L::configs(&self.profile())
    }

    fn prepare(&self, configs: &L::Configs) -> Result<ChainSent<L::Pair>, HarnessError> {
        let (pair, flight) = L::client_flight(configs, L::fresh(configs)?)
            .context("the handshake up to the client's certificate")?;
        Ok(ChainSent {
            pair,
            flight,
            outcome: Ok(()),
        })
    }

    fn run(
        &self,
        _: &L::Configs,
        mut sent: ChainSent<L::Pair>,
    ) -> Result<ChainSent<L::Pair>, HarnessError> {
        sent.outcome = L::finish(&mut sent.pair);
        Ok(sent)
    }

    fn received(&self, _: &L::Configs, sent: &ChainSent<L::Pair>) -> Option<Received> {
        Some(sent.flight)
    }

    fn check(&self, configs: &L::Configs, sent: &ChainSent<L::Pair>) -> Result<(), HarnessError> {
        if let Err(error) = &sent.outcome {
            return Err(format!(
                "the server refused the client's chain ({}): {error}",
                self.client.label()
            )
            .into());
        }
        let (list, signature) = certificate_list_len(self.client)?;
        ensure(
            (list..=list + signature + FLIGHT_SLACK).contains(&sent.flight.bytes),
            || {
                format!(
                    "the client's flight was {} bytes; the certificates of {} take {list}",
                    sent.flight.bytes,
                    self.client.label()
                )
            },
        )?;
        L::check(configs, &sent.pair, &self.expected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chain_length_has_its_certificates() {
        for chain in ClientChain::ALL {
            let pem = Pki::EcdsaP256ClientChain(chain).client_chain_pem();
            let certificates = pem
                .windows(b"BEGIN CERTIFICATE".len())
                .filter(|w| *w == b"BEGIN CERTIFICATE")
                .count();
            assert_eq!(certificates, chain.certificates(), "{chain:?}");
            assert_eq!(
                pem.ends_with(Pki::EcdsaP256.ca_pem()),
                chain.ends_with_the_ca(),
                "{chain:?}"
            );
            if let Some(next) = chain.next() {
                assert_eq!(next.certificates(), chain.certificates() + 1);
                assert_eq!(next.ends_with_the_ca(), chain.ends_with_the_ca());
            }
        }
        assert_eq!(Hostile::LongestClientChain.name(), "mtls_longest_chain");
        assert_eq!(Hostile::ClientChainDecoys.name(), "mtls_chain_decoys");
        assert_eq!(Hostile::LargeRsaClient.name(), "mtls_rsa8192_client");
    }
}
