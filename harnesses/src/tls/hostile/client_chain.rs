//! [`ClientChainFlight`]: an mTLS client's second flight carrying a
//! hostile certificate chain ([`ClientChain`]): the longest the server's
//! verifier accepts ([`Hostile::LongestClientChain`]: a signature check
//! per intermediate, each paid by the server for a few hundred bytes the
//! client sent), or decoys that spend a verifier's budget of signature
//! checks ([`Hostile::ClientChainDecoys`]).

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError, Received};

use super::Victim;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{Expected, TlsVersion};
use crate::common::pki::{ClientChain, Pki};
use crate::common::transport::Endpoint;
use crate::paths::{Handshake, Hostile, Profile};

/// The handshake whose client sends `chain`: TLS 1.3, mTLS, the laboratory
/// ECDSA P-256 PKI and its pins (secp256r1, ECDSA P-256 signatures), the
/// client's leaf under `chain`'s ladder of intermediates.
pub const fn handshake(chain: ClientChain) -> Handshake {
    Handshake {
        client_auth: true,
        ..Handshake::full(Pki::EcdsaP256ClientChain(chain), TlsVersion::Tls13)
    }
}

/// Handshake messages in a TLS 1.3 client's second flight with a
/// certificate: Certificate, CertificateVerify, Finished.
const CLIENT_FLIGHT_MESSAGES: u64 = 3;

/// Bytes a client's second flight may hold beyond its certificates: the
/// Certificate message's headers, the CertificateVerify (an ECDSA P-256
/// signature), the Finished, a ChangeCipherSpec, and each record's header
/// and tag.
const FLIGHT_SLACK: u64 = 1024;

/// The bytes `chain`'s certificates take in a TLS 1.3 Certificate message:
/// each certificate's DER, its 3-byte length and its 2-byte (empty)
/// extensions.
fn certificate_list_len(chain: ClientChain) -> Result<u64, HarnessError> {
    use ::rustls::pki_types::pem::PemObject as _;
    let mut len = 0;
    let mut certificates = 0;
    for certificate in ::rustls::pki_types::CertificateDer::pem_slice_iter(
        Pki::EcdsaP256ClientChain(chain).client_chain_pem(),
    ) {
        let certificate = certificate.context("parsing a client chain's PEM")?;
        len += certificate.len() as u64 + 5;
        certificates += 1;
    }
    ensure(certificates == chain.certificates(), || {
        format!(
            "{chain:?}'s PEM holds {certificates} certificates, not {}",
            chain.certificates()
        )
    })?;
    Ok(len)
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
/// ([`Victim::LONGEST_CLIENT_CHAIN`]), or [`ClientChain::Decoys49`].
///
/// **Counted:** [`Victim::finish`]: the server reading the client's
/// Certificate ([`ClientChain::certificates`], each parsed), building and
/// verifying a path to the CA it trusts (a signature check per certificate
/// on the path, and on every path it tries), the client's
/// CertificateVerify (an ECDSA P-256 signature) and its Finished.
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
/// most [`FLIGHT_SLACK`] more. With the chain one step longer
/// ([`ClientChain::next`]) a verifier at its limit refuses, which proves the
/// chain is at the limit, not below it (`fairness.rs`).
pub struct ClientChainFlight<L> {
    chain: ClientChain,
    library: PhantomData<fn() -> L>,
}

impl<L: Victim> ClientChainFlight<L> {
    /// The chain `input` sends to `L`'s server, if it sends one.
    pub const fn chain_of(input: Hostile) -> Option<ClientChain> {
        match input {
            Hostile::LongestClientChain => Some(L::LONGEST_CLIENT_CHAIN),
            Hostile::ClientChainDecoys => Some(ClientChain::Decoys49),
            _ => None,
        }
    }

    /// The harness of `chain`: an input's ([`ClientChainFlight::chain_of`]),
    /// or a negative test's, one past a limit, which the server must refuse.
    pub const fn with_chain(chain: ClientChain) -> ClientChainFlight<L> {
        ClientChainFlight {
            chain,
            library: PhantomData,
        }
    }

    fn profile(&self) -> Profile {
        handshake(self.chain).profile()
    }

    fn expected(&self) -> Expected {
        handshake(self.chain).expected()
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
        ensure(
            flight.bytes > 100 * self.chain.certificates() as u64,
            || {
                format!(
                    "the client's flight is {} bytes, too short for a chain of {} certificates",
                    flight.bytes,
                    self.chain.certificates()
                )
            },
        )?;
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
                "the server refused the client's chain ({:?}, {} certificates): {error}",
                self.chain,
                self.chain.certificates()
            )
            .into());
        }
        let list = certificate_list_len(self.chain)?;
        ensure(
            (list..=list + FLIGHT_SLACK).contains(&sent.flight.bytes),
            || {
                format!(
                    "the client's flight was {} bytes; {:?}'s certificates take {list}",
                    sent.flight.bytes, self.chain
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
    }
}
