//! rustls as the shared harnesses drive it ([`Tls`]): the full handshakes
//! and the record paths.

use std::io::{Read as _, Write as _};

use regress_measure::HarnessError;

use super::check::{both_sides, check_handshake};
use super::config::Configs;
use super::transport::{Accepting, Pair};
use crate::common::error::ensure;
use crate::common::error::with_context;
use crate::common::pins::{Expected, Negotiated};
use crate::paths::Profile;
use crate::tls::Tls;

/// rustls 0.23 with its aws-lc-rs provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rustls;

/// The error of a failed step in the counted record loop, built out of line
/// so that the loop itself stays small.
#[cold]
#[inline(never)]
fn failed(what: &'static str, error: impl Into<HarnessError>) -> HarnessError {
    with_context(what, error)
}

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
    /// handshake.
    fn fresh(configs: &Configs) -> Result<Accepting, HarnessError> {
        configs.accept()
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

    /// For each write, the client's `writer().write` (rustls encrypts the
    /// plaintext into one record at once), `write_tls` into the transport,
    /// and the server's `read_tls` (rustls reads at most 4 KiB per call,
    /// growing its buffer to a record's size), `process_new_packets`
    /// (decryption) and `reader().read` into `received`.
    ///
    /// Written for a small footprint: with 1 KiB writes the loop runs 1,024
    /// times, so each of its own instructions is 0.01 % of the region. Error
    /// paths are out of line.
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
        let mut sent = 0;
        let mut got = 0;
        while sent < payload.len() {
            let end = payload.len().min(sent + write_size);
            match client.writer().write(&payload[sent..end]) {
                Ok(n) => sent += n,
                Err(e) => return Err(failed("client write", e)),
            }
            // One call moves every queued record (rustls hands them all to
            // one vectored write); anything left behind would show up as an
            // incomplete transfer in `check`.
            if let Err(e) = client.write_tls(client_end) {
                return Err(failed("client write_tls", e));
            }
            while server_end.has_incoming() {
                if let Err(e) = server.read_tls(server_end) {
                    return Err(failed("server read_tls", e));
                }
                match server.process_new_packets() {
                    Ok(state) if state.plaintext_bytes_to_read() == 0 => {}
                    Ok(_) => match server.reader().read(&mut received[got..]) {
                        Ok(n) => got += n,
                        Err(e) => return Err(failed("server read", e)),
                    },
                    Err(e) => return Err(failed("server process_new_packets", e)),
                }
            }
        }
        Ok(got)
    }

    fn in_flight(pair: &Pair) -> (usize, usize) {
        pair.in_flight()
    }

    /// `writer().write` of all of `bytes`, then `write_tls` until nothing
    /// is queued.
    fn client_send(pair: &mut Pair, bytes: &[u8]) -> Result<(), HarnessError> {
        pair.client
            .writer()
            .write_all(bytes)
            .map_err(|e| failed("client write", e))?;
        super::transport::flush(&mut pair.client, &mut pair.client_end)
            .map_err(|e| failed("client write_tls", e))
    }

    /// `read_tls` and `process_new_packets` of what arrived, then
    /// `reader().read` of the plaintext; 0 when nothing is readable yet.
    fn server_receive(pair: &mut Pair, out: &mut [u8]) -> Result<usize, HarnessError> {
        super::transport::deliver(&mut pair.server, &mut pair.server_end)?;
        match pair.server.reader().read(out) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(failed("server read", e)),
        }
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

    use ::rustls::pki_types::ServerName;
    use ::rustls::ClientConnection;
    use regress_measure::Harness;

    use super::*;
    use crate::common::pins::Cipher;
    use crate::common::pki::{PemCopies, Pki};
    use crate::paths::{Handshake, Record};
    use crate::rustls::config::{client_config, Pinned};
    use crate::rustls::transport::flush;
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
        let client = ClientConnection::new(configs.client.clone(), name).expect("client");
        let mut pair = configs.accept().expect("accept").connect(client);
        assert!(pair.handshake().is_err());
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
        for cipher in Cipher::ALL {
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
    #[test]
    fn each_write_is_one_record() {
        for size in Record::WRITE_SIZES {
            let path = testing::tls13(Cipher::Aes128Gcm, size);
            let (payload, mut pair) = testing::prepared::<Rustls>(path);
            let written = pair.client.writer().write(&payload[..size]).expect("write");
            assert_eq!(written, size);
            flush(&mut pair.client, &mut pair.client_end).expect("flush");
            assert_eq!(pair.client_end.outgoing_records(), Some(vec![size + 17]));
            assert_eq!(pair.in_flight().0, size + path.overhead());
            assert_eq!(
                pair.server_end.incoming_bytes()[0],
                0x17,
                "application data"
            );
        }
    }
}
