//! [`ClientChainFlight`]: an mTLS client's second flight carrying the
//! longest certificate chain the server's verifier accepts
//! ([`Hostile::LongestClientChain`]): a signature check per intermediate,
//! each paid by the server for a few hundred bytes the client sent.

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError, Received};

use super::Victim;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{Expected, TlsVersion};
use crate::common::pki::{ClientChain, Pki};
use crate::common::transport::Endpoint;
use crate::paths::{Handshake, Profile};

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
/// chain is as long as its verifier accepts
/// ([`Victim::LONGEST_CLIENT_CHAIN`]).
///
/// **Counted:** [`Victim::finish`]: the server reading the client's
/// Certificate (the leaf, [`ClientChain::intermediates`] intermediates, the
/// CA; each parsed), building and verifying the chain to the CA it trusts
/// (a signature check per certificate), the client's CertificateVerify (an
/// ECDSA P-256 signature) and its Finished.
///
/// **Not counted:** the configs (`setup`: [`handshake`]'s profile, the
/// library's pinned laboratory configs, not its defaults: no default server
/// asks for a client certificate), the fresh connections, and the handshake
/// up to the client's second flight waiting at the server (`prepare`): the
/// ClientHello, the server's flight and signature, the client's
/// verification of it and its own signature: what the attacker pays.
///
/// **Check:** both sides finished the mTLS handshake the profile pins, and
/// the server validated the client's chain as sent (every library's own
/// handshake check); with a chain one longer
/// ([`ClientChainFlight::beyond_the_limit`]) the server refuses, which
/// proves the chain is at the verifier's limit, not below it.
pub struct ClientChainFlight<L> {
    chain: ClientChain,
    library: PhantomData<fn() -> L>,
}

impl<L: Victim> ClientChainFlight<L> {
    /// The harness of [`Hostile::LongestClientChain`] against `L`.
    pub const fn new() -> ClientChainFlight<L> {
        ClientChainFlight {
            chain: L::LONGEST_CLIENT_CHAIN,
            library: PhantomData,
        }
    }

    /// The same harness with a chain of `chain`'s length instead: a
    /// negative test's, one past the limit, which the server must refuse.
    pub const fn with_chain(chain: ClientChain) -> ClientChainFlight<L> {
        ClientChainFlight {
            chain,
            library: PhantomData,
        }
    }

    /// The chain one intermediate longer than `L`'s limit, if the
    /// repository carries it.
    pub fn beyond_the_limit() -> Option<ClientChain> {
        ClientChain::of(L::LONGEST_CLIENT_CHAIN.intermediates() + 1)
    }

    fn profile(&self) -> Profile {
        handshake(self.chain).profile()
    }

    fn expected(&self) -> Expected {
        handshake(self.chain).expected()
    }
}

impl<L: Victim> Default for ClientChainFlight<L> {
    fn default() -> Self {
        ClientChainFlight::new()
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
            flight.bytes > 100 * self.chain.intermediates() as u64,
            || {
                format!(
                    "the client's flight is {} bytes, too short for a chain of {} intermediates",
                    flight.bytes,
                    self.chain.intermediates()
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
                "the server refused a client chain of {} intermediates: {error}",
                self.chain.intermediates()
            )
            .into());
        }
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
            assert_eq!(certificates, chain.intermediates() + 2, "{chain:?}");
            assert!(pem.ends_with(Pki::EcdsaP256.ca_pem()), "{chain:?}");
            assert_eq!(ClientChain::of(chain.intermediates()), Some(chain));
        }
        assert_eq!(
            crate::paths::Hostile::LongestClientChain.name(),
            "mtls_longest_chain"
        );
    }
}
