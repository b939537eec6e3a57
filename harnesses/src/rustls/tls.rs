//! rustls as the shared harnesses drive it ([`Tls`]): the full handshakes
//! and the record paths.

use regress_measure::HarnessError;

use super::api;
use super::check::{both_sides, check_handshake};
use super::config::Configs;
use super::transport::{Accepting, Pair};
use crate::common::error::ensure;
use crate::common::pins::{Expected, Negotiated};
use crate::paths::Profile;
use crate::tls::Tls;

/// rustls with its aws-lc-rs provider (0.23, or 0.24 with the feature
/// `rustls-0-24`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rustls;

impl Tls for Rustls {
    type Configs = Configs;
    type Fresh = Accepting;
    type Pair = Pair;

    /// Both configs, without resumption: clients use
    /// `Resumption::disabled()` (rustls otherwise resumes its second
    /// handshake from the same config).
    fn configs(profile: &Profile) -> Result<Configs, HarnessError> {
        Configs::build(profile, None)
    }

    /// A server connection and the transport: allocation only, a rustls
    /// server does nothing before it reads a ClientHello. The client is not
    /// created here: `ClientConnection::new` is the first step of the
    /// handshake. Then the profile's first alert, if any
    /// ([`crate::tls::send_first_alert`]).
    fn fresh(configs: &Configs) -> Result<Accepting, HarnessError> {
        let accepting = configs.accept()?;
        crate::tls::send_first_alert(&accepting.server_end, configs.profile.first_alert)?;
        Ok(accepting)
    }

    /// `ClientConnection::new`, where rustls generates the client's key
    /// share and writes the ClientHello, then both sides' `write_tls` /
    /// `read_tls` / `process_new_packets` in turn until neither is
    /// handshaking ([`Pair::handshake`]).
    fn handshake(configs: &Configs, accepting: Accepting) -> Result<Pair, HarnessError> {
        let mut pair = configs.connect(accepting)?;
        pair.handshake()?;
        Ok(pair)
    }

    /// With `handshake`, the signature schemes come from the verifiers' logs
    /// (and are taken from them); later in a connection's life they are not
    /// compared.
    fn negotiated(
        configs: &Configs,
        pair: &Pair,
        handshake: bool,
    ) -> Result<[(&'static str, Negotiated); 2], HarnessError> {
        Ok(both_sides(configs, pair, handshake))
    }

    /// [`check_handshake`]: also the handshake kind, SNI, the chains each
    /// side received, and nothing queued or left in the transport.
    fn check(configs: &Configs, pair: &Pair, expected: &Expected) -> Result<(), HarnessError> {
        check_handshake(configs, pair, expected)
    }

    /// For each write, the client encrypting the plaintext into one record
    /// and handing it to the transport, and the server reading it (at most
    /// 4 KiB per read, growing its buffer to a record's size), decrypting it
    /// and copying the plaintext into `received`: `api::transfer`, whose
    /// loop is written for a small footprint (0.23: `writer().write`,
    /// `write_tls`, `read_tls`, `process_new_packets`, `reader().read`).
    fn transfer(
        pair: &mut Pair,
        payload: &[u8],
        write_size: usize,
        received: &mut [u8],
    ) -> Result<usize, HarnessError> {
        let Pair {
            client,
            server,
            client_end,
            server_end,
        } = pair;
        api::transfer(
            client, server, client_end, server_end, payload, write_size, received,
        )
    }

    fn in_flight(pair: &Pair) -> (usize, usize) {
        pair.in_flight()
    }

    /// All of `bytes` encrypted and handed to the transport
    /// ([`api::Side::send_all`]: `writer().write` and `write_tls` in 0.23).
    fn client_send(pair: &mut Pair, bytes: &[u8]) -> Result<(), HarnessError> {
        pair.client.send_all(bytes, &mut pair.client_end)
    }

    /// What arrived read, processed and its plaintext copied into `out`
    /// ([`api::Side::receive`]: `read_tls`, `process_new_packets` and
    /// `reader().read` in 0.23); 0 when nothing is readable yet.
    fn server_receive(pair: &mut Pair, out: &mut [u8]) -> Result<usize, HarnessError> {
        pair.server.receive(&mut pair.server_end, out)
    }

    /// The client has no record it never sent.
    fn check_transfer(pair: &Pair) -> Result<(), HarnessError> {
        ensure(!pair.client.wants_write(), || {
            "the client has records it never sent".into()
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use regress_measure::Harness;

    use super::*;
    use crate::common::pins::Cipher;
    use crate::common::pki::{Host, PemCopies, Pki, SERVER_IP};
    use crate::paths::{Handshake, Record};
    use crate::rustls::api;
    use crate::rustls::api::pki_types::ServerName;
    use crate::rustls::config::{client_config, server_name, Pinned};
    use crate::tls::handshake::FullHandshake;
    use crate::tls::testing;

    /// The verifier logs are taken by a check: a second check of the same
    /// handshake has no scheme to see, so no check can pass on an earlier
    /// handshake's signature.
    #[test]
    fn a_check_takes_the_noted_schemes() {
        let harness = FullHandshake::<Rustls>::new(Handshake::RSA4096);
        let (configs, pair) = testing::one_run::<Rustls>(Handshake::RSA4096);
        harness
            .check(&configs, &pair)
            .expect("the pinned parameters");
        assert!(harness.check(&configs, &pair).is_err());
    }

    /// Without resumption configured, a second handshake from the same
    /// configs is full again (rustls's default would resume it).
    #[test]
    fn full_handshakes_never_resume() {
        let harness = FullHandshake::<Rustls>::new(Handshake::RSA4096);
        let configs = harness.setup().expect("setup");
        for _ in 0..3 {
            let accepting = harness.prepare(&configs).expect("prepare");
            let pair = harness.run(&configs, accepting).expect("run");
            harness.check(&configs, &pair).expect("full");
        }
    }

    /// The client really verifies the chain: a client trusting the other
    /// PKI's CA fails the handshake.
    #[test]
    fn handshake_fails_with_the_wrong_ca() {
        let profile = Handshake::RSA4096.profile();
        let configs = Configs::build(&profile, None).expect("configs");
        let mut wrong = PemCopies::of(Pki::Rsa4096);
        wrong.ca = Pki::EcdsaP256.ca_pem().to_vec();
        let (client, _) =
            client_config(&Pinned::new(&profile.pins), &wrong, false, None).expect("client");
        let mut pair = configs
            .connect_with(&Arc::new(client), configs.accept().expect("accept"))
            .expect("connect");
        let error = pair.handshake().expect_err("untrusted server certificate");
        assert!(error.to_string().contains("client processing"), "{error}");
    }

    /// The client really checks the server's name.
    #[test]
    fn handshake_fails_for_another_server_name() {
        let configs = Configs::build(&Handshake::RSA4096.profile(), None).expect("configs");
        let name = ServerName::try_from("example.com").expect("name");
        let accepting = configs.accept().expect("accept");
        let mut pair = accepting.connect(&configs.client, name).expect("client");
        assert!(pair.handshake().is_err());
    }

    /// The IP-SAN path verifies the address (`ServerName::IpAddress`): a
    /// client connecting to 127.0.0.1 accepts the leaf and sends no SNI, one
    /// connecting to 127.0.0.2 or `localhost` rejects it; and the check of
    /// the laboratory ECDSA handshake fails the IP-SAN handshake.
    #[test]
    fn an_ip_san_leaf_is_verified_by_its_address() {
        let path = Handshake::REAL_WORLD[11];
        assert!(path.pki.names_server_by_ip(), "{path}");
        let configs = Configs::build(&path.profile(), None).expect("configs");
        assert_eq!(
            configs.server_name,
            server_name(Host::Ip(SERVER_IP)).expect("name")
        );
        for (host, accepted) in [
            (Host::Ip(SERVER_IP), true),
            (Host::Ip("127.0.0.2"), false),
            (Host::LOCALHOST, false),
        ] {
            let name = server_name(host).expect("name");
            let accepting = configs.accept().expect("accept");
            let mut pair = accepting.connect(&configs.client, name).expect("client");
            assert_eq!(pair.handshake().is_ok(), accepted, "{host:?}");
            if accepted {
                assert_eq!(api::sni(&pair.server), None, "no SNI for an address");
            }
        }
        let (ip_configs, ip_san) = testing::one_run::<Rustls>(path);
        check_handshake(&ip_configs, &ip_san, &path.expected()).expect("the IP-SAN path");
        let san = Handshake::full(Pki::EcdsaP256, path.version);
        let san_configs = Configs::build(&san.profile(), None).expect("configs");
        assert!(check_handshake(&san_configs, &ip_san, &san.expected()).is_err());
    }

    /// An mTLS server rejects a client that presents no certificate.
    #[test]
    fn mtls_server_requires_a_client_certificate() {
        let profile = Handshake::ALL[3].profile();
        assert!(profile.client_auth && profile.pki == Pki::EcdsaP256);
        let configs = Configs::build(&profile, None).expect("configs");
        let pinned = Pinned::new(&profile.pins);
        let (anonymous, _) =
            client_config(&pinned, &PemCopies::of(Pki::EcdsaP256), false, None).expect("client");
        let mut pair = configs
            .connect_with(&Arc::new(anonymous), configs.accept().expect("accept"))
            .expect("connect");
        let error = pair.handshake().expect_err("no client certificate");
        assert!(error.to_string().contains("server processing"), "{error}");
    }

    #[test]
    fn each_record_path_negotiates_its_suite() {
        for cipher in Cipher::AEADS {
            let path = testing::tls13(cipher, 1024);
            let (_, pair) = testing::prepared::<Rustls>(path);
            let negotiated = pair.client.negotiated_cipher_suite();
            assert_eq!(
                negotiated.map(|s| u16::from(s.suite())),
                Some(path.suite().iana())
            );
        }
    }

    /// One write is one record: 16 KiB (a full-size record) or 1 KiB of
    /// plaintext plus TLS 1.3's 22 bytes (5 header, 1 content type, 16 tag).
    /// rustls main since commit 86e066192 counts the 17 bytes of encryption
    /// overhead against the 16 KiB limit, so there a 16 KiB write is two
    /// records ([`api::max_record_plaintext`]).
    #[test]
    fn each_write_is_one_record() {
        for size in Record::WRITE_SIZES {
            let path = testing::tls13(Cipher::Aes128Gcm, size);
            let (payload, mut pair) = testing::prepared::<Rustls>(path);
            let written = pair
                .client
                .send(&payload[..size], &mut pair.client_end)
                .expect("send");
            assert_eq!(written, size);
            let limit = api::max_record_plaintext(17);
            let records: Vec<usize> = payload[..size]
                .chunks(limit)
                .map(|c| c.len() + 17)
                .collect();
            assert_eq!(records.len() == 1, limit >= 16 * 1024 || size <= limit);
            assert_eq!(pair.client_end.outgoing_records(), Some(records.clone()));
            let wire: usize = records
                .iter()
                .map(|&r| path.record_len(r - 17, false))
                .sum();
            assert_eq!(pair.in_flight().0, wire);
            assert_eq!(
                pair.server_end.incoming_bytes()[0],
                0x17,
                "application data"
            );
        }
    }
}
