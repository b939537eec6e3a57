//! s2n-tls as the shared harnesses drive it ([`Tls`]): the full handshakes
//! and the record paths.

use std::task::Poll;

use regress_measure::HarnessError;

use super::check::{both_sides, check_handshake};
use super::config::Configs;
use super::transport::Pair;
use crate::common::error::Context as _;
use crate::common::pins::{Expected, Negotiated};
use crate::paths::Profile;
use crate::tls::Tls;

/// s2n-tls (0.3.42 to 0.3.47).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S2nTls;

impl Tls for S2nTls {
    type Configs = Configs;
    type Fresh = Pair;
    type Pair = Pair;

    fn configs(profile: &Profile) -> Result<Configs, HarnessError> {
        Configs::new(profile)
    }

    /// Both connections, created and wired to the transport, the client's
    /// SNI set.
    fn fresh(configs: &Configs) -> Result<Pair, HarnessError> {
        let pair = Pair::new(configs)?;
        crate::tls::send_first_alert(&pair.server_end, configs.profile.first_alert)?;
        Ok(pair)
    }

    /// Both sides' `poll_negotiate` calls, alternating client and server
    /// until both are done ([`Pair::handshake`]).
    fn handshake(_: &Configs, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn negotiated(
        _: &Configs,
        pair: &Pair,
        _handshake: bool,
    ) -> Result<[(&'static str, Negotiated); 2], HarnessError> {
        both_sides(pair)
    }

    /// [`check_handshake`]: also the handshake type, both key types,
    /// nothing left in the transport, and for TLS 1.2 the empty session ID
    /// and the extended master secret.
    fn check(configs: &Configs, pair: &Pair, expected: &Expected) -> Result<(), HarnessError> {
        check_handshake(pair, &configs.profile, expected)
    }

    /// The client's `poll_send` calls, each given the next `write_size`
    /// bytes, which s2n-tls turns into exactly one record each and encrypts
    /// (s2n-tls sends a write as soon as it is made, so a 1 KiB write is a
    /// 1 KiB record), and the server's `poll_recv` calls that decrypt them
    /// into `received` (reading each record's header and body with two
    /// receive calls). The two alternate, one write then one read.
    fn transfer(
        pair: &mut Pair,
        payload: &[u8],
        write_size: usize,
        received: &mut [u8],
    ) -> Result<usize, HarnessError> {
        let mut sent = 0;
        let mut got = 0;
        while got < payload.len() {
            let mut progressed = false;
            if sent < payload.len() {
                let end = payload.len().min(sent + write_size);
                match pair.client.poll_send(&payload[sent..end]) {
                    Poll::Ready(Ok(n)) => {
                        sent += n;
                        progressed |= n > 0;
                    }
                    Poll::Ready(Err(e)) => return Err(e).context("client send failed"),
                    Poll::Pending => {}
                }
            }
            match pair.server.poll_recv(&mut received[got..]) {
                Poll::Ready(Ok(0)) => return Err("server saw the connection close".into()),
                Poll::Ready(Ok(n)) => {
                    got += n;
                    progressed = true;
                }
                Poll::Ready(Err(e)) => return Err(e).context("server receive failed"),
                Poll::Pending => {}
            }
            if !progressed {
                return Err(format!("transfer stalled after {sent} sent, {got} received").into());
            }
        }
        Ok(got)
    }

    fn in_flight(pair: &Pair) -> (usize, usize) {
        pair.in_flight()
    }

    /// `poll_send` until all of `bytes` is written (s2n-tls sends each
    /// write at once).
    fn client_send(pair: &mut Pair, bytes: &[u8]) -> Result<(), HarnessError> {
        let mut sent = 0;
        while sent < bytes.len() {
            match pair.client.poll_send(&bytes[sent..]) {
                Poll::Ready(Ok(n)) if n > 0 => sent += n,
                Poll::Ready(Ok(_)) | Poll::Pending => {
                    return Err(format!("client send stalled after {sent} bytes").into())
                }
                Poll::Ready(Err(e)) => return Err(e).context("client send failed"),
            }
        }
        Ok(())
    }

    /// One `poll_recv`: what arrived, or 0 when it would block.
    fn server_receive(pair: &mut Pair, out: &mut [u8]) -> Result<usize, HarnessError> {
        match pair.server.poll_recv(out) {
            Poll::Ready(Ok(n)) => Ok(n),
            Poll::Ready(Err(e)) => Err(e).context("server receive failed"),
            Poll::Pending => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::payload::RECORD_BYTES;
    use crate::common::pki::{Host, Pki, SERVER_IP};
    use crate::paths::{Handshake, Library, Path};
    use crate::registry;
    use crate::s2n_tls::check::check_tls12_extras;
    use crate::s2n_tls::config::{
        base_builder, client_config, policy, server_config, AcceptHost, PINNED_POLICY,
    };
    use crate::tls::testing;

    /// The TLS 1.2 checks fail on a TLS 1.3 handshake (no TLS 1.2 session
    /// state to read the extended master secret from).
    #[test]
    fn tls12_extras_reject_a_tls13_handshake() {
        let (_, tls13) = testing::one_run::<S2nTls>(Handshake::RSA4096);
        let (_, tls12) = testing::one_run::<S2nTls>(Handshake::ALL[4]);
        let suite = Handshake::ALL[4].suite();
        check_tls12_extras(&tls12, suite, false).expect("TLS 1.2 with EMS");
        assert!(check_tls12_extras(&tls13, suite, false).is_err());
    }

    /// A client rejects the server: with another name, without the CA, or
    /// trusting the other PKI's CA.
    #[test]
    fn handshake_fails_when_the_client_must_not_trust_the_server() {
        let pinned = policy(PINNED_POLICY).expect("policy");
        let server = server_config(&pinned, Pki::Rsa4096, false, false).expect("server");
        let mut other_name = base_builder(&pinned).expect("builder");
        other_name
            .trust_pem(Pki::Rsa4096.ca_pem())
            .expect("trust")
            .set_verify_host_callback(AcceptHost("example.com"))
            .expect("callback");
        let mut no_ca = base_builder(&pinned).expect("builder");
        no_ca
            .set_verify_host_callback(AcceptHost::LOCALHOST)
            .expect("callback");
        let other_ca =
            client_config(&pinned, Pki::EcdsaP256, Host::LOCALHOST, None, None).expect("client");
        for (what, client) in [
            ("another name", other_name.build().expect("config")),
            ("no CA", no_ca.build().expect("config")),
            ("the other CA", other_ca),
        ] {
            let mut pair = Pair::with_configs(&client, &server).expect("pair");
            assert!(pair.handshake().is_err(), "{what}");
        }
    }

    /// The CN-only path verifies the host by CN fallback: its leaf has no
    /// subjectAltName, so a client expecting another name rejects it, one
    /// expecting `localhost` accepts it; and the check of the laboratory
    /// ECDSA handshake (a leaf with a SAN) fails the CN-only handshake.
    /// s2n-tls fails on a warning alert by default: the warning path's
    /// client is configured to ignore warnings, and one that is not fails
    /// the handshake on the server's first alert.
    #[test]
    fn a_client_that_fails_on_warnings_fails_the_warning_path() {
        let path = Handshake::REAL_WORLD[12];
        let alert = path
            .profile()
            .first_alert
            .expect("the warning path's alert");
        let mut strict = path.profile();
        strict.first_alert = None;
        let configs = Configs::new(&strict).expect("configs");
        let pair = Pair::new(&configs).expect("pair");
        crate::tls::send_first_alert(&pair.server_end, Some(alert)).expect("the alert");
        let error = S2nTls::handshake(&configs, pair).expect_err("a warning must fail it");
        assert!(error.to_string().contains("client"), "{error}");
        let (configs, pair) = testing::one_run::<S2nTls>(path);
        check_handshake(&pair, &configs.profile, &path.expected()).expect("ignoring warnings");
    }

    #[test]
    fn a_cn_only_leaf_is_verified_by_its_cn() {
        let path = Handshake::REAL_WORLD[10];
        assert!(path.pki.names_host_in_cn_only(), "{path}");
        let configs = Configs::new(&path.profile()).expect("configs");
        let pinned = policy(PINNED_POLICY).expect("policy");
        for (host, accepted) in [
            (AcceptHost::LOCALHOST, true),
            (AcceptHost("example.com"), false),
        ] {
            let mut builder = base_builder(&pinned).expect("builder");
            builder
                .trust_pem(path.pki.ca_pem())
                .expect("trust")
                .set_verify_host_callback(host)
                .expect("callback");
            let client = builder.build().expect("config");
            let mut pair = Pair::with_configs(&client, &configs.server).expect("pair");
            assert_eq!(pair.handshake().is_ok(), accepted, "{host:?}");
        }
        let (_, cn_only) = testing::one_run::<S2nTls>(path);
        let san = Handshake::full(Pki::EcdsaP256, path.version);
        assert!(check_handshake(&cn_only, &san.profile(), &san.expected()).is_err());
    }

    /// The IP-SAN path verifies the address: s2n-tls hands the leaf's IP
    /// address to the verify-host callback as text, so a client expecting
    /// 127.0.0.1 accepts the leaf, one expecting 127.0.0.2 or `localhost`
    /// rejects it; the client sends no SNI; and the check of the laboratory
    /// ECDSA handshake (a leaf for `localhost`, with SNI) fails the IP-SAN
    /// handshake.
    #[test]
    fn an_ip_san_leaf_is_verified_by_its_address() {
        let path = Handshake::REAL_WORLD[11];
        assert!(path.pki.names_server_by_ip(), "{path}");
        let configs = Configs::new(&path.profile()).expect("configs");
        let pinned = policy(PINNED_POLICY).expect("policy");
        for (host, accepted) in [
            (Host::Ip(SERVER_IP), true),
            (Host::Ip("127.0.0.2"), false),
            (Host::LOCALHOST, false),
        ] {
            let client = client_config(&pinned, path.pki, host, None, None).expect("client");
            let mut pair = Pair::connecting(&client, &configs.server, host).expect("pair");
            assert_eq!(pair.handshake().is_ok(), accepted, "{host:?}");
            if accepted {
                assert_eq!(pair.server.server_name(), None, "no SNI for an address");
            }
        }
        let (_, ip_san) = testing::one_run::<S2nTls>(path);
        check_handshake(&ip_san, &path.profile(), &path.expected()).expect("the IP-SAN path");
        let san = Handshake::full(Pki::EcdsaP256, path.version);
        assert!(check_handshake(&ip_san, &san.profile(), &san.expected()).is_err());
    }

    /// The server really verifies the client certificate: a client from the
    /// other PKI, or one without a certificate, fails.
    #[test]
    fn mtls_fails_without_the_right_client_certificate() {
        let pinned = policy(PINNED_POLICY).expect("policy");
        let server = server_config(&pinned, Pki::EcdsaP256, false, true).expect("server");
        let other_pki = client_config(
            &pinned,
            Pki::EcdsaP256,
            Host::LOCALHOST,
            None,
            Some(Pki::Rsa4096),
        )
        .expect("client");
        let anonymous =
            client_config(&pinned, Pki::EcdsaP256, Host::LOCALHOST, None, None).expect("client");
        for (what, client) in [("other PKI", other_pki), ("no certificate", anonymous)] {
            let mut pair = Pair::with_configs(&client, &server).expect("pair");
            assert!(pair.handshake().is_err(), "{what}");
        }
    }

    /// One write of `write_size` bytes is exactly one record of that size,
    /// for every record path s2n-tls is measured on (the registry's list:
    /// ChaCha20 and CBC in TLS 1.2).
    #[test]
    fn each_write_is_one_record() {
        let paths = registry::benchmarks()
            .filter(|benchmark| benchmark.library == Library::S2nTls)
            .filter_map(|benchmark| match benchmark.path {
                Path::Record(record) => Some(record),
                _ => None,
            });
        for path in paths {
            let (payload, mut pair) = testing::prepared::<S2nTls>(path);
            // s2n-tls has no encrypt-then-MAC.
            let body = path.record_len(path.write_size, false) - 5;
            let mut sent = 0;
            while sent < RECORD_BYTES {
                let end = RECORD_BYTES.min(sent + path.write_size);
                match pair.client.poll_send(&payload[sent..end]) {
                    Poll::Ready(Ok(n)) => {
                        assert_eq!(n, end - sent, "{path}: a partial write");
                        sent += n;
                    }
                    other => panic!("{path}: send did not complete: {other:?}"),
                }
                assert_eq!(pair.client_records(), Some(vec![body]), "{path}");
                pair.discard_client_records();
            }
        }
    }
}
