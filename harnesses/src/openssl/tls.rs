//! OpenSSL as the shared harnesses drive it ([`Tls`]): the full handshakes
//! and the record paths.

use regress_measure::HarnessError;

use super::check::{both_sides, check_handshake};
use super::context::Contexts;
use super::system;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::{Expected, Negotiated};
use crate::paths::Profile;
use crate::tls::Tls;

/// The system OpenSSL (3.0 on Debian 12) through the `openssl` crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenSsl;

impl Tls for OpenSsl {
    type Configs = Contexts;
    type Fresh = Pair;
    type Pair = Pair;

    fn configs(profile: &Profile) -> Result<Contexts, HarnessError> {
        Contexts::new(profile)
    }

    /// The two `SSL`s, the client's SNI set, wired to the transport; then
    /// the profile's first alert, if any ([`crate::tls::send_first_alert`]).
    fn fresh(contexts: &Contexts) -> Result<Pair, HarnessError> {
        let pair = Pair::new(contexts, None)?;
        crate::tls::send_first_alert(pair.server.get_ref(), contexts.profile.first_alert)?;
        Ok(pair)
    }

    /// Both sides' `SSL_do_handshake` calls, alternating client and server
    /// until both are done ([`Pair::handshake`]).
    fn handshake(_: &Contexts, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn negotiated(
        _: &Contexts,
        pair: &Pair,
        _handshake: bool,
    ) -> Result<[(&'static str, Negotiated); 2], HarnessError> {
        Ok(both_sides(pair))
    }

    /// [`check_handshake`]: also the extended master secret in TLS 1.2, SNI,
    /// both verifications and key types, and no ticket, session ID or byte
    /// left behind.
    fn check(contexts: &Contexts, pair: &Pair, expected: &Expected) -> Result<(), HarnessError> {
        check_handshake(pair, &contexts.profile, expected)
    }

    /// The client's `SSL_write` calls, each sealing one record (copying the
    /// plaintext into OpenSSL's write buffer, the per-record nonce and AEAD
    /// setup, the encryption), and the server's `SSL_read` calls, each
    /// opening one record (header, decryption and tag check, the copy into
    /// `received`), the server reading until it has caught up before the
    /// next write.
    fn transfer(
        pair: &mut Pair,
        payload: &[u8],
        write_size: usize,
        received: &mut [u8],
    ) -> Result<usize, HarnessError> {
        let mut sent = 0;
        let mut got = 0;
        while sent < payload.len() {
            let end = (sent + write_size).min(payload.len());
            let n = pair
                .client
                .ssl_write(&payload[sent..end])
                .context("client write failed")?;
            if n != end - sent {
                return Err(format!("client wrote {n} of {} bytes", end - sent).into());
            }
            sent = end;
            while got < sent {
                let n = pair
                    .server
                    .ssl_read(&mut received[got..])
                    .context("server read failed")?;
                if n == 0 {
                    return Err("server read 0 bytes".into());
                }
                got += n;
            }
        }
        Ok(got)
    }

    fn in_flight(pair: &Pair) -> (usize, usize) {
        pair.in_flight()
    }

    /// `SSL_write` of all of `bytes` (one record up to 16 KiB).
    fn client_send(pair: &mut Pair, bytes: &[u8]) -> Result<(), HarnessError> {
        let n = pair
            .client
            .ssl_write(bytes)
            .context("client write failed")?;
        ensure(n == bytes.len(), || {
            format!("client wrote {n} of {} bytes", bytes.len())
        })
    }

    /// One `SSL_read`; 0 when it wants more than has arrived.
    fn server_receive(pair: &mut Pair, out: &mut [u8]) -> Result<usize, HarnessError> {
        match pair.server.ssl_read(out) {
            Ok(n) => Ok(n),
            Err(e) if e.code() == openssl::ssl::ErrorCode::WANT_READ => Ok(0),
            Err(e) => Err(e).context("server read failed"),
        }
    }

    /// The system library's version string: `Cargo.lock` only knows the
    /// crate versions, and the counts belong to the library.
    fn runtime_libraries() -> Vec<regress_measure::RuntimeLibrary> {
        system::runtime_libraries()
    }
}

#[cfg(test)]
mod tests {
    use regress_measure::Harness;

    use super::*;
    use crate::common::pins::Cipher;
    use crate::common::pki::{Host, Pki, SERVER_IP};
    use crate::openssl::context::{client_context, server_context};
    use crate::paths::Handshake;
    use crate::tls::handshake::FullHandshake;
    use crate::tls::testing;

    /// Contexts whose client is built by `client` from the RSA-4096
    /// handshake's profile, and whose server requires client certificates
    /// or not.
    fn with_client(
        client: impl FnOnce(&Profile) -> openssl::ssl::SslContext,
        client_auth: bool,
    ) -> Contexts {
        let profile = Profile {
            client_auth,
            ..Handshake::RSA4096.profile()
        };
        let pki = profile.pki;
        Contexts {
            client: client(&Handshake::RSA4096.profile()),
            server: server_context(&profile, pki.server_chain_pem(), pki.server_key_pem())
                .expect("server"),
            profile,
        }
    }

    /// The client really verifies the server's name.
    #[test]
    fn handshake_fails_for_another_host() {
        let contexts = with_client(
            |profile| {
                client_context(profile, Pki::Rsa4096.ca_pem(), Host::Dns("example.com"))
                    .expect("client")
            },
            false,
        );
        let mut pair = Pair::new(&contexts, None).expect("pair");
        assert!(pair.handshake().is_err());
        assert_eq!(
            pair.client.ssl().verify_result().as_raw(),
            openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH
        );
    }

    /// One handshake of `profile`'s server with a client that verifies
    /// `host` (and trusts the PKI's CA): the pair, and whether it completed.
    fn connecting_to(profile: &Profile, host: Host) -> (Pair, bool) {
        let pki = profile.pki;
        let contexts = Contexts {
            client: client_context(profile, pki.ca_pem(), host).expect("client"),
            server: server_context(profile, pki.server_chain_pem(), pki.server_key_pem())
                .expect("server"),
            profile: *profile,
        };
        let mut pair = Pair::new(&contexts, None).expect("pair");
        let completed = pair.handshake().is_ok();
        (pair, completed)
    }

    /// The CN-only path verifies the host by CN fallback: a client expecting
    /// another name rejects the CN-only leaf, one expecting `localhost`
    /// accepts it; and the laboratory ECDSA path's check fails it.
    #[test]
    fn a_cn_only_leaf_is_verified_by_its_cn() {
        let path = Handshake::REAL_WORLD[10];
        assert!(path.pki.names_host_in_cn_only(), "{path}");
        let profile = path.profile();
        for (host, accepted) in [(Host::LOCALHOST, true), (Host::Dns("example.com"), false)] {
            let (_, handshake) = connecting_to(&profile, host);
            assert_eq!(handshake, accepted, "{host:?}");
        }
        let (_, cn_only) = testing::one_run::<OpenSsl>(path);
        let san = Handshake::full(Pki::EcdsaP256, path.version);
        assert!(check_handshake(&cn_only, &san.profile(), &san.expected()).is_err());
    }

    /// The IP-SAN path verifies the address (`X509_VERIFY_PARAM_set1_ip`): a
    /// client expecting 127.0.0.1 accepts the leaf, one expecting 127.0.0.2
    /// or the host `localhost` rejects it; the client sends no SNI; and the
    /// laboratory ECDSA path's check fails the IP-SAN handshake.
    #[test]
    fn an_ip_san_leaf_is_verified_by_its_address() {
        let path = Handshake::REAL_WORLD[11];
        assert!(path.pki.names_server_by_ip(), "{path}");
        let profile = path.profile();
        for (host, accepted) in [
            (Host::Ip(SERVER_IP), true),
            (Host::Ip("127.0.0.2"), false),
            (Host::LOCALHOST, false),
        ] {
            let (pair, handshake) = connecting_to(&profile, host);
            assert_eq!(handshake, accepted, "{host:?}");
            if accepted {
                check_handshake(&pair, &profile, &path.expected()).expect("the IP-SAN path");
            } else {
                assert_eq!(
                    pair.client.ssl().verify_result().as_raw(),
                    match host {
                        Host::Ip(_) => openssl_sys::X509_V_ERR_IP_ADDRESS_MISMATCH,
                        Host::Dns(_) => openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH,
                    },
                    "{host:?}"
                );
            }
        }
        let (_, ip_san) = testing::one_run::<OpenSsl>(path);
        let san = Handshake::full(Pki::EcdsaP256, path.version);
        assert!(check_handshake(&ip_san, &san.profile(), &san.expected()).is_err());
    }

    /// The client really verifies the chain: trusting only the ECDSA CA, it
    /// rejects the RSA server.
    #[test]
    fn handshake_fails_with_the_wrong_ca() {
        let contexts = with_client(
            |profile| {
                client_context(profile, Pki::EcdsaP256.ca_pem(), Host::LOCALHOST).expect("client")
            },
            false,
        );
        let mut pair = Pair::new(&contexts, None).expect("pair");
        assert!(pair.handshake().is_err());
    }

    /// An mTLS server really requires a client certificate.
    #[test]
    fn mtls_server_rejects_a_client_without_certificate() {
        let contexts = with_client(
            |profile| {
                client_context(profile, Pki::Rsa4096.ca_pem(), Host::LOCALHOST).expect("client")
            },
            true,
        );
        let mut pair = Pair::new(&contexts, None).expect("pair");
        // The TLS 1.3 client finishes before the server has judged it; the
        // server's failure is what matters.
        let error = pair.handshake().expect_err("no client certificate");
        assert!(error.to_string().contains("server"), "{error}");
    }

    /// The handshake contexts really turn resumption off: a session from one
    /// handshake, offered on the next, is not resumed.
    #[test]
    fn handshake_contexts_do_not_resume() {
        let (contexts, first) = testing::one_run::<OpenSsl>(Handshake::RSA4096);
        let session = first.client.ssl().session().expect("session").to_owned();
        let mut second = Pair::new(&contexts, Some(&session)).expect("pair");
        second.handshake().expect("second handshake");
        FullHandshake::<OpenSsl>::new(Handshake::RSA4096)
            .check(&contexts, &second)
            .expect("a full handshake");
    }

    /// OpenSSL's name for the pinned TLS 1.2 cipher is the IANA suite the
    /// other libraries pin.
    #[test]
    fn tls12_cipher_is_the_standard_suite() {
        let path = Handshake::ALL[4];
        let (_, pair) = testing::one_run::<OpenSsl>(path);
        let cipher = pair.client.ssl().current_cipher().expect("cipher");
        assert_eq!(
            cipher.standard_name(),
            Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
        );
        assert_eq!(
            u16::from_be_bytes(cipher.protocol_id()),
            path.suite().iana()
        );
    }

    /// One write is one record of exactly the write's size: full-size
    /// (16 KiB) records for the 16k paths, 1 KiB for the 1k ones.
    #[test]
    fn one_write_is_one_record() {
        for (cipher, size) in [
            (Cipher::Aes128Gcm, 16 * 1024),
            (Cipher::Aes128Gcm, 1024),
            (Cipher::Aes256Gcm, 16 * 1024),
            (Cipher::ChaCha20Poly1305, 1024),
            (Cipher::Aes128CbcSha, 16 * 1024),
            (Cipher::Aes128CbcSha, 1024),
        ] {
            let path = match cipher {
                Cipher::Aes128CbcSha => testing::tls12(cipher, size),
                _ => testing::tls13(cipher, size),
            };
            let (payload, mut pair) = testing::prepared::<OpenSsl>(path);
            let n = pair.client.ssl_write(&payload[..size]).expect("write");
            assert_eq!(n, size);
            assert_eq!(
                pair.client_records(),
                // Two OpenSSL peers negotiate encrypt-then-MAC for CBC.
                Some(vec![path.record_len(size, true) - 5]),
                "{path}"
            );
        }
    }
}
