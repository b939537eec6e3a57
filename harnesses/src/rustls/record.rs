//! [`Records`]: application data over an established TLS 1.3 connection,
//! the record layer, per cipher suite and write size.

use std::io::{Read as _, Write as _};

use regress_measure::{Harness, HarnessError};

use super::check::{both_sides, check_handshake, check_kind};
use super::config::Configs;
use super::transport::Pair;
use crate::common::error::{ensure, with_context, Context as _};
use crate::common::payload::{check_received, payload, RECORD_BYTES};
use crate::paths::Record;

/// 1 MiB of application data from client to server, as its [`Record`] path
/// says: `write_size` bytes per write, each one record of the pinned suite.
///
/// **Counted:** for each write, the client's `writer().write` (rustls
/// encrypts the plaintext into one record at once), `write_tls` into the
/// in-memory transport, and the server's `read_tls` (rustls reads at most
/// 4 KiB per call, growing its buffer to a record's size),
/// `process_new_packets` (decryption) and `reader().read` into the receive
/// buffer; until all 1,048,576 bytes have arrived. One write is delivered
/// and read before the next is made, the pattern of a server that keeps up
/// with its peer. This is the steady-state record layer, the cost that
/// scales with bytes ([`Harness::bytes_per_run`] reports 1 MiB, so results
/// read as instructions per byte).
///
/// **Not counted:** configs and the payload (`setup`); the connection, its
/// full handshake (secp256r1, RSA-4096 server, the pinned suite only) and
/// the zeroed 1 MiB receive buffer (`prepare`). The handshake is outside the
/// count because the handshake paths measure it; the buffers are allocated
/// outside so the count is the library's.
///
/// **The harness's share:** the loop below and the transport's bookkeeping
/// are a few dozen instructions per record: well under 1 % of the region
/// even with 1 KiB writes (`regress compare` prints the measured share). Not
/// in that figure: the transport copies every byte twice, in and out, with
/// glibc's `memcpy`, as it does for the other libraries.
///
/// **Check:** the connection runs the pinned version, suite and group, the
/// server received exactly the bytes sent, byte for byte, and nothing is
/// left in the transport or the client's send queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Records(pub Record);

/// What a record harness's runs share: configs pinned to one suite and the
/// payload.
#[derive(Debug)]
pub struct RecordSetup {
    configs: Configs,
    payload: Vec<u8>,
}

/// A connected pair and the server's receive buffer: the input of one run,
/// and (filled) its output.
#[derive(Debug)]
pub struct Transfer {
    pair: Pair,
    received: Vec<u8>,
    got: usize,
}

/// The error of a failed step in the counted loop, built out of line so
/// that the loop itself stays small.
#[cold]
#[inline(never)]
fn failed(what: &'static str, error: impl Into<HarnessError>) -> HarnessError {
    with_context(what, error)
}

impl Harness for Records {
    type Setup = RecordSetup;
    type Input = Transfer;
    type Output = Transfer;

    fn bytes_per_run(&self) -> Option<u64> {
        Some(RECORD_BYTES as u64)
    }

    fn setup(&self) -> Result<RecordSetup, HarnessError> {
        Ok(RecordSetup {
            configs: Configs::build(&self.0.profile(), None)?,
            payload: payload(),
        })
    }

    /// A connection after its full handshake, and a zeroed receive buffer.
    fn prepare(&self, setup: &RecordSetup) -> Result<Transfer, HarnessError> {
        let configs = &setup.configs;
        let pair = configs
            .handshake()
            .context("the handshake before the transfer")?;
        check_handshake(configs, &pair, &configs.profile.expected(false))?;
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the handshake: {in_flight:?}")
        })?;
        ensure(
            !pair.client.wants_write() && !pair.server.wants_write(),
            || "a side has data queued after the handshake".into(),
        )?;
        Ok(Transfer {
            pair,
            received: vec![0; RECORD_BYTES],
            got: 0,
        })
    }

    /// The counted transfer: for each write, the client encrypts it into
    /// one record, the record goes through the transport, and the server
    /// reads, decrypts and copies out the plaintext.
    ///
    /// Written for a small footprint: with 1 KiB writes the loop runs 1,024
    /// times, so each of its own instructions is 0.01 % of the region. Error
    /// paths are out of line.
    fn run(&self, setup: &RecordSetup, mut transfer: Transfer) -> Result<Transfer, HarnessError> {
        let payload = &setup.payload[..];
        let write_size = self.0.write_size;
        let Transfer {
            pair,
            received,
            got: total,
        } = &mut transfer;
        let received = &mut received[..];
        let Pair {
            client,
            server,
            client_end,
            server_end,
        } = pair;
        let mut sent = 0;
        let mut got = *total;
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
        *total = got;
        Ok(transfer)
    }

    /// The data arrived byte-exact, over the pinned suite, and nothing is
    /// left anywhere.
    fn check(&self, setup: &RecordSetup, transfer: &Transfer) -> Result<(), HarnessError> {
        let pair = &transfer.pair;
        check_kind(pair, false)?;
        let expected = self.0.profile().expected(false);
        expected.check(&both_sides(&setup.configs, pair, false))?;
        check_received(&setup.payload, &transfer.received, transfer.got)?;
        let in_flight = pair.in_flight();
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the transfer: {in_flight:?}")
        })?;
        ensure(!pair.client.wants_write(), || {
            "the client has records it never sent".into()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::pins::{Cipher, TlsVersion};
    use crate::rustls::transport::flush;

    fn record(cipher: Cipher, write_size: usize) -> Records {
        Records(Record {
            cipher,
            version: TlsVersion::Tls13,
            write_size,
        })
    }

    #[test]
    fn each_record_harness_negotiates_its_suite() {
        for cipher in Cipher::ALL {
            let harness = record(cipher, 1024);
            let setup = harness.setup().expect("setup");
            let transfer = harness.prepare(&setup).expect("prepare");
            let negotiated = transfer.pair.client.negotiated_cipher_suite();
            let suite = harness.0.suite().iana();
            assert_eq!(negotiated.map(|s| u16::from(s.suite())), Some(suite));
        }
    }

    #[test]
    fn record_check_rejects_a_flipped_byte_and_another_suite() {
        let harness = record(Cipher::Aes128Gcm, 16 * 1024);
        let setup = harness.setup().expect("setup");
        let input = harness.prepare(&setup).expect("prepare");
        let mut output = harness.run(&setup, input).expect("run");
        harness.check(&setup, &output).expect("intact transfer");
        let aes256 = record(Cipher::Aes256Gcm, 16 * 1024);
        assert!(aes256.check(&setup, &output).is_err(), "another suite");
        output.received[RECORD_BYTES / 2] ^= 0x01;
        let error = harness
            .check(&setup, &output)
            .expect_err("a flipped byte must fail the check");
        assert!(error.to_string().contains("524288"), "{error}");
    }

    #[test]
    fn record_check_rejects_a_short_transfer() {
        let harness = record(Cipher::Aes128Gcm, 1024);
        let setup = harness.setup().expect("setup");
        let mut output = harness.prepare(&setup).expect("prepare");
        output.got = RECORD_BYTES - 1;
        output.received.copy_from_slice(&setup.payload);
        assert!(harness.check(&setup, &output).is_err());
    }

    /// One write is one record: 16 KiB (a full-size record) or 1 KiB of
    /// plaintext plus TLS 1.3's 22 bytes (5 header, 1 content type, 16 tag).
    #[test]
    fn each_write_is_one_record() {
        for size in Record::WRITE_SIZES {
            let harness = record(Cipher::Aes128Gcm, size);
            let setup = harness.setup().expect("setup");
            let mut transfer = harness.prepare(&setup).expect("prepare");
            let pair = &mut transfer.pair;
            let written = pair
                .client
                .writer()
                .write(&setup.payload[..size])
                .expect("write");
            assert_eq!(written, size);
            flush(&mut pair.client, &mut pair.client_end).expect("flush");
            assert_eq!(pair.client_end.outgoing_records(), Some(vec![size + 17]));
            assert_eq!(pair.in_flight().0, size + harness.0.overhead());
            assert_eq!(
                pair.server_end.incoming_bytes()[0],
                0x17,
                "application data"
            );
        }
    }
}
