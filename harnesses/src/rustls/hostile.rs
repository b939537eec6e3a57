//! rustls's server under a hostile client's flight ([`Victim`]; rustls
//! 0.23, not yet written for 0.24's API, where the registry says the paths
//! do not apply).

use std::sync::Arc;

use regress_measure::{HarnessError, Received};

use super::api::Resumption;

use super::config::Configs;
use super::tls::Rustls;
use super::transport::{Accepting, Pair};
use crate::common::error::{ensure, Context as _};
use crate::common::pki::ClientChain;
use crate::common::transport::Endpoint;
use crate::tls::hostile::client_chain::client_flight_size;
use crate::tls::hostile::{ServeError, Victim};

impl Victim for Rustls {
    fn attacker(accepting: &Accepting) -> &Endpoint {
        &accepting.client_end
    }

    /// `read_tls` and `process_new_packets` until the flight is read or
    /// rustls fails, then `write_tls` of what the server queued (its
    /// flight, or its alert after a failure).
    fn serve(accepting: &mut Accepting) -> Result<(), ServeError> {
        let served = accepting
            .server
            .deliver_raw(&mut accepting.server_end)
            .map_err(|error| ServeError::Library(error.to_string()));
        let flushed = accepting
            .server
            .flush(&mut accepting.server_end)
            .map_err(|error| ServeError::Writing(error.to_string()));
        served.and(flushed)
    }

    /// rustls-webpki builds paths of at most 6 intermediates
    /// (`MAX_SUB_CA_COUNT` in `verify_cert.rs`).
    const LONGEST_CLIENT_CHAIN: ClientChain = ClientChain::Six;

    /// The client's ClientHello written, the server's `read_tls`,
    /// `process_new_packets` and `write_tls` (its flight), the client's
    /// (it reads the flight, queues its certificate, signature and
    /// Finished) and its `write_tls`.
    fn client_flight(
        configs: &Configs,
        accepting: Accepting,
    ) -> Result<(Pair, Received), HarnessError> {
        let mut pair = configs.connect(accepting)?;
        pair.client
            .flush(&mut pair.client_end)
            .context("the client's hello")?;
        pair.server
            .deliver(&mut pair.server_end)
            .context("the server reading the hello")?;
        pair.server
            .flush(&mut pair.server_end)
            .context("the server's flight")?;
        pair.client
            .deliver(&mut pair.client_end)
            .context("the client reading the server's flight")?;
        pair.client
            .flush(&mut pair.client_end)
            .context("the client's second flight")?;
        ensure(
            !pair.client.is_handshaking() && pair.server.is_handshaking(),
            || "the client should be done and the server waiting for its flight".into(),
        )?;
        let flight = client_flight_size(&pair.client_end)?;
        Ok((pair, flight))
    }

    /// The server's `read_tls` and `process_new_packets` on the client's
    /// flight, then `write_tls` of anything it queued.
    fn finish(pair: &mut Pair) -> Result<(), HarnessError> {
        pair.server.deliver(&mut pair.server_end)?;
        pair.server
            .flush(&mut pair.server_end)
            .context("the server writing after the client's flight")?;
        ensure(!pair.server.is_handshaking(), || {
            "the server still handshaking after the client's flight".into()
        })
    }

    /// A full handshake with the default configs, the server's tickets
    /// delivered to the client, then a fresh client's ClientHello: it
    /// offers one of them. The client is the defaults path's with rustls's
    /// default resumption (an in-memory store) instead of none. The default
    /// server keeps its sessions in memory (stateful tickets) and takes each
    /// out when it is offered, so every run needs its own.
    fn resumption_flight(configs: &Configs) -> Result<Vec<u8>, HarnessError> {
        let mut client = (*configs.client).clone();
        client.resumption = Resumption::default();
        let client = Arc::new(client);
        let mut pair = configs.connect_with(&client, configs.accept()?)?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        pair.server_to_client()
            .context("delivering the session tickets")?;
        let mut resuming = configs.connect_with(&client, configs.accept()?)?;
        resuming
            .client
            .flush(&mut resuming.client_end)
            .context("the resuming client writing its ClientHello")?;
        Ok(resuming.server_end.incoming_bytes())
    }
}

#[cfg(all(test, not(feature = "rustls-0-24")))]
mod tests {
    use ::rustls::pki_types::pem::PemObject as _;
    use ::rustls::pki_types::CertificateDer;
    use ::rustls::SignatureScheme;
    use openssl::hash::MessageDigest;
    use openssl::pkey::PKey;
    use openssl::rsa::Padding;
    use openssl::sign::{RsaPssSaltlen, Signer};

    use crate::common::pki::{LargeRsa, Pki};

    /// What rustls's server does with a client's TLS 1.3 CertificateVerify
    /// (`verify_tls13_signature`): the first algorithm its provider maps
    /// RSA-PSS-SHA256 to verifies the signature with the leaf's key. An
    /// RSA-8192 leaf's signature verifies; an RSA-16384 leaf's is refused
    /// (rustls-webpki's RSA algorithms take keys of 2048 to 8192 bits), so
    /// `hostile_mtls_rsa8192_client` is at rustls's limit. (Its client
    /// cannot even load an RSA-16384 key: aws-lc-rs signs with at most 8192
    /// bits.)
    #[test]
    fn rustls_verifies_client_rsa_keys_of_at_most_8192_bits() {
        let provider = ::rustls::crypto::aws_lc_rs::default_provider();
        let (_, algorithms) = provider
            .signature_verification_algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == SignatureScheme::RSA_PSS_SHA256)
            .expect("RSA-PSS-SHA256 is supported");
        let message = b"TLS 1.3, client CertificateVerify";
        for (large, verifies) in [(LargeRsa::Bits8192, true), (LargeRsa::Bits16384, false)] {
            let pki = Pki::Rsa4096LargeClient(large);
            let key = PKey::private_key_from_pem(pki.client_key_pem()).expect("key");
            assert_eq!(key.bits(), large.bits());
            let mut signer = Signer::new(MessageDigest::sha256(), &key).expect("signer");
            signer.set_rsa_padding(Padding::PKCS1_PSS).expect("PSS");
            signer
                .set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)
                .expect("salt");
            signer.update(message).expect("update");
            let signature = signer.sign_to_vec().expect("sign");
            let leaf = CertificateDer::pem_slice_iter(pki.client_chain_pem())
                .next()
                .expect("a leaf")
                .expect("PEM");
            let leaf = ::webpki::EndEntityCert::try_from(&leaf).expect("parses");
            let verified = leaf.verify_signature(algorithms[0], message, &signature);
            assert_eq!(verified.is_ok(), verifies, "{large:?}: {verified:?}");
        }
    }
}
