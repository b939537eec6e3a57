//! [`Record`]: the record layer, 1 MiB of application data client to server,
//! for each pinned cipher and write size.

use std::task::Poll;

use regress_measure::{Harness, HarnessError};
use s2n_tls::enums::Version;

use super::transport::Pair;
use super::{
    check_negotiated, client_config, ensure, new_pair, policy, server_config, ClientOptions,
    Configs, Context as _, Expected, Hierarchy, ServerOptions, AES256_SERVER_POLICY,
    CHACHA20_POLICY, EXPECTED_SIGNATURE_SCHEME, PINNED_POLICY,
};

/// Application bytes every [`Record`] harness moves per run.
pub const RECORD_BYTES: usize = 1 << 20;

/// The largest plaintext of one TLS record, and the largest write size.
const MAX_FRAGMENT: usize = 16 * 1024;

/// The AEAD protecting the records of a [`Record`] harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordCipher {
    /// TLS 1.3 TLS_AES_128_GCM_SHA256: both sides on
    /// [`PINNED_POLICY`], as in the handshake harnesses.
    Aes128Gcm,
    /// TLS 1.3 TLS_AES_256_GCM_SHA384: the server on
    /// [`AES256_SERVER_POLICY`], which prefers it; the client on
    /// [`PINNED_POLICY`], which offers it.
    Aes256Gcm,
    /// **TLS 1.2** ECDHE-RSA-CHACHA20-POLY1305: both sides on
    /// [`CHACHA20_POLICY`]. Two s2n-tls 0.3.47 peers cannot negotiate
    /// TLS_CHACHA20_POLY1305_SHA256 in TLS 1.3 (see the module documentation
    /// of [`crate::s2n_tls`]).
    ChaCha20Poly1305,
}

impl RecordCipher {
    /// The (client, server) policy names.
    fn policies(self) -> (&'static str, &'static str) {
        match self {
            RecordCipher::Aes128Gcm => (PINNED_POLICY, PINNED_POLICY),
            RecordCipher::Aes256Gcm => (PINNED_POLICY, AES256_SERVER_POLICY),
            RecordCipher::ChaCha20Poly1305 => (CHACHA20_POLICY, CHACHA20_POLICY),
        }
    }

    /// What the handshake before the transfer must negotiate.
    fn expected(self) -> Expected {
        let tls13 = Expected::tls13(Hierarchy::Rsa4096);
        match self {
            RecordCipher::Aes128Gcm => tls13,
            RecordCipher::Aes256Gcm => Expected {
                cipher: "TLS_AES_256_GCM_SHA384",
                ..tls13
            },
            RecordCipher::ChaCha20Poly1305 => Expected {
                version: Version::TLS12,
                cipher: "ECDHE-RSA-CHACHA20-POLY1305",
                server_scheme: Some(EXPECTED_SIGNATURE_SCHEME),
                ..tls13
            },
        }
    }

    /// Bytes a record adds to its plaintext: the 5-byte header and the
    /// 16-byte tag, plus TLS 1.3's 1-byte inner content type.
    pub fn record_overhead(self) -> usize {
        match self {
            RecordCipher::Aes128Gcm | RecordCipher::Aes256Gcm => 5 + 1 + 16,
            RecordCipher::ChaCha20Poly1305 => 5 + 16,
        }
    }
}

/// 1 MiB of application data from client to server over an established
/// connection, written `write_size` bytes per `poll_send` call, protected by
/// `cipher`. One generic harness; `tests/perf.rs` registers it once per
/// cipher and write size (16 KiB: full-size records; 1 KiB: small records,
/// where per-record costs dominate).
///
/// **Counted:** the client's `poll_send` calls, each given the next
/// `write_size` bytes of the payload, which s2n-tls turns into exactly one
/// record each and encrypts (s2n-tls sends a write as soon as it is made, so
/// a 1 KiB write is a 1 KiB record), and the server's `poll_recv` calls that
/// decrypt them into the receive buffer, plus the transport's copies in
/// between. The two alternate, one write then one read. This is the
/// steady-state record layer, the cost that scales with bytes
/// ([`Harness::bytes_per_run`] reports 1 MiB, so results read as
/// instructions per byte).
///
/// **Not counted:** configs and the payload (`setup`); the connections, their
/// full handshake, the receive buffer and the transport's reservation for all
/// records (`prepare`). The handshake is outside the count because the
/// handshake harnesses measure it; buffers are allocated outside so the count
/// is the library's, not the allocator's.
///
/// **Check:** the connection still runs the pinned protocol version and
/// cipher, the server received exactly the bytes sent, and nothing is left
/// in the transport. `prepare` has checked the whole handshake (version,
/// cipher, secp256r1, rsa_pss_rsae_sha256, RSA-4096).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The AEAD, and with it the protocol version and policies.
    pub cipher: RecordCipher,
    /// Plaintext bytes per `poll_send` call: 1 to 16384, a divisor of 1 MiB
    /// being the useful case.
    pub write_size: usize,
}

/// What [`Record`] runs share: configs and the payload.
#[derive(Debug)]
pub struct RecordSetup {
    configs: Configs,
    payload: Vec<u8>,
}

/// A connected pair and the server's receive buffer: the input of one
/// [`Record`] run, and (filled) its output.
#[derive(Debug)]
pub struct Transfer {
    pair: Pair,
    received: Vec<u8>,
}

impl Record {
    /// `record_aes128gcm_16k`: TLS 1.3 AES-128-GCM, 16 KiB writes.
    pub const AES128GCM_16K: Record = Record::new(RecordCipher::Aes128Gcm, 16 * 1024);
    /// `record_aes128gcm_1k`: TLS 1.3 AES-128-GCM, 1 KiB writes.
    pub const AES128GCM_1K: Record = Record::new(RecordCipher::Aes128Gcm, 1024);
    /// `record_aes256gcm_16k`: TLS 1.3 AES-256-GCM, 16 KiB writes.
    pub const AES256GCM_16K: Record = Record::new(RecordCipher::Aes256Gcm, 16 * 1024);
    /// `record_aes256gcm_1k`: TLS 1.3 AES-256-GCM, 1 KiB writes.
    pub const AES256GCM_1K: Record = Record::new(RecordCipher::Aes256Gcm, 1024);
    /// `record_tls12_chacha20poly1305_16k`: **TLS 1.2** ChaCha20-Poly1305, 16 KiB
    /// writes.
    pub const CHACHA20POLY1305_16K: Record = Record::new(RecordCipher::ChaCha20Poly1305, 16 * 1024);
    /// `record_tls12_chacha20poly1305_1k`: **TLS 1.2** ChaCha20-Poly1305, 1 KiB
    /// writes.
    pub const CHACHA20POLY1305_1K: Record = Record::new(RecordCipher::ChaCha20Poly1305, 1024);

    /// Every registered record harness.
    pub const ALL: [Record; 6] = [
        Record::AES128GCM_16K,
        Record::AES128GCM_1K,
        Record::AES256GCM_16K,
        Record::AES256GCM_1K,
        Record::CHACHA20POLY1305_16K,
        Record::CHACHA20POLY1305_1K,
    ];

    /// A record harness for `cipher` in writes of `write_size` bytes.
    pub const fn new(cipher: RecordCipher, write_size: usize) -> Record {
        Record { cipher, write_size }
    }

    /// Records one run sends.
    fn records(&self) -> usize {
        RECORD_BYTES.div_ceil(self.write_size)
    }
}

/// A deterministic, non-repeating-looking payload (xorshift64), so a lost,
/// duplicated or reordered record cannot go unnoticed by the check.
fn payload(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let take = (len - out.len()).min(8);
        out.extend_from_slice(&state.to_le_bytes()[..take]);
    }
    out
}

impl Harness for Record {
    type Setup = RecordSetup;
    type Input = Transfer;
    type Output = Transfer;

    fn bytes_per_run(&self) -> Option<u64> {
        Some(RECORD_BYTES as u64)
    }

    fn setup(&self) -> Result<RecordSetup, HarnessError> {
        ensure((1..=MAX_FRAGMENT).contains(&self.write_size), || {
            format!(
                "write size {} is outside 1..={MAX_FRAGMENT}: one write must be one record",
                self.write_size
            )
        })?;
        let (client_policy, server_policy) = self.cipher.policies();
        let client_policy = policy(client_policy)?;
        let server_policy = policy(server_policy)?;
        Ok(RecordSetup {
            configs: Configs {
                client: client_config(&client_policy, ClientOptions::rsa())?,
                server: server_config(&server_policy, ServerOptions::RSA)?,
            },
            payload: payload(RECORD_BYTES),
        })
    }

    fn prepare(&self, setup: &RecordSetup) -> Result<Transfer, HarnessError> {
        // Every record of the run, with room to spare: the pipe never grows
        // during the run (it empties after each read anyway).
        let capacity = RECORD_BYTES + self.records() * self.cipher.record_overhead() + 4096;
        let mut pair = new_pair(&setup.configs.client, &setup.configs.server, capacity, None)?;
        pair.handshake()
            .context("the handshake before the transfer")?;
        check_negotiated(&pair, &self.cipher.expected())?;
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the handshake: {in_flight:?}")
        })?;
        Ok(Transfer {
            pair,
            received: vec![0; RECORD_BYTES],
        })
    }

    fn run(&self, setup: &RecordSetup, mut transfer: Transfer) -> Result<Transfer, HarnessError> {
        let payload = &setup.payload[..];
        let Transfer { pair, received } = &mut transfer;
        let mut sent = 0;
        let mut got = 0;
        while got < payload.len() {
            let mut progressed = false;
            if sent < payload.len() {
                let end = payload.len().min(sent + self.write_size);
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
        Ok(transfer)
    }

    fn check(&self, setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
        let expected = self.cipher.expected();
        for (side, conn) in [
            ("client", &transfer.pair.client),
            ("server", &transfer.pair.server),
        ] {
            let version = conn
                .actual_protocol_version()
                .context("reading the protocol version")?;
            let cipher = conn.cipher_suite().context("reading the cipher suite")?;
            ensure(
                version == expected.version && cipher == expected.cipher,
                || {
                    format!(
                        "{side}: {version:?} with {cipher}, pinned {:?} with {}",
                        expected.version, expected.cipher
                    )
                },
            )?;
        }
        let received = &transfer.received;
        ensure(received.len() == setup.payload.len(), || {
            format!(
                "received {} bytes, sent {}",
                received.len(),
                setup.payload.len()
            )
        })?;
        if let Some(at) = received
            .iter()
            .zip(&setup.payload)
            .position(|(a, b)| a != b)
        {
            return Err(format!("received data differs from what was sent at byte {at}").into());
        }
        let in_flight = transfer.pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the transfer: {in_flight:?}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress_measure::harness::run_natively;

    #[test]
    fn every_record_harness_runs_natively() {
        for harness in Record::ALL {
            run_natively(&harness).unwrap_or_else(|e| panic!("{harness:?}: {e}"));
            assert_eq!(harness.bytes_per_run(), Some(1_048_576));
        }
    }

    #[test]
    fn record_check_rejects_a_flipped_byte() {
        let harness = Record::AES128GCM_16K;
        let setup = harness.setup().expect("setup");
        let input = harness.prepare(&setup).expect("prepare");
        let mut output = harness.run(&setup, input).expect("run");
        harness.check(&setup, &output).expect("intact transfer");
        output.received[RECORD_BYTES / 2] ^= 0x01;
        let error = harness
            .check(&setup, &output)
            .expect_err("a flipped byte must fail the check");
        assert!(error.to_string().contains("524288"), "{error}");
    }

    /// Each cipher's check rejects a transfer made with another cipher.
    #[test]
    fn record_check_rejects_another_cipher() {
        let aes128 = Record::AES128GCM_16K;
        let aes256 = Record::AES256GCM_16K;
        let chacha = Record::CHACHA20POLY1305_16K;
        let setup = aes128.setup().expect("setup");
        let input = aes128.prepare(&setup).expect("prepare");
        let output = aes128.run(&setup, input).expect("run");
        aes128.check(&setup, &output).expect("aes128");
        assert!(aes256.check(&setup, &output).is_err());
        assert!(chacha.check(&setup, &output).is_err());
    }

    #[test]
    fn write_sizes_outside_one_record_are_rejected() {
        for size in [0, 16 * 1024 + 1] {
            assert!(Record::new(RecordCipher::Aes128Gcm, size).setup().is_err());
        }
    }

    /// One write of `write_size` bytes is exactly one record of that size:
    /// the client's output after the first write is the plaintext plus one
    /// record's overhead, and after all writes `records()` times that.
    #[test]
    fn each_write_is_one_record() {
        for harness in Record::ALL {
            let setup = harness.setup().expect("setup");
            let mut transfer = harness.prepare(&setup).expect("prepare");
            let overhead = harness.cipher.record_overhead();
            let mut sent = 0;
            while sent < RECORD_BYTES {
                let end = RECORD_BYTES.min(sent + harness.write_size);
                match transfer.pair.client.poll_send(&setup.payload[sent..end]) {
                    Poll::Ready(Ok(n)) => {
                        assert_eq!(n, end - sent, "{harness:?}: a partial write");
                        sent += n;
                    }
                    other => panic!("{harness:?}: send did not complete: {other:?}"),
                }
                if sent == harness.write_size {
                    assert_eq!(
                        transfer.pair.in_flight(),
                        (harness.write_size + overhead, 0),
                        "{harness:?}"
                    );
                }
            }
            assert_eq!(
                transfer.pair.in_flight(),
                (RECORD_BYTES + harness.records() * overhead, 0),
                "{harness:?}"
            );
        }
    }

    #[test]
    fn payload_is_deterministic_and_not_constant() {
        let a = payload(RECORD_BYTES);
        assert_eq!(a.len(), RECORD_BYTES);
        assert_eq!(a, payload(RECORD_BYTES));
        assert_ne!(a[..16384], a[16384..32768]);
    }
}
