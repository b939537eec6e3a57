//! [`Records`]: the record layer of any TLS library, 1 MiB of application
//! data client to server, for each pinned cipher and write size.

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError};

use super::Tls;
use crate::common::error::{ensure, Context as _};
use crate::common::payload::{check_received, payload, RECORD_BYTES};
use crate::paths::Record;

/// 1 MiB of application data from client to server over an established
/// connection of library `L`, as its [`Record`] path says: `write_size`
/// bytes per write, each one record of the pinned suite (16 KiB: full-size
/// records, where the cipher's per-byte cost dominates; 1 KiB: the
/// per-record cost weighs sixteen times more).
///
/// **Counted:** [`Tls::transfer`]: for each write, the client's write call
/// (which encrypts the plaintext into one record), the transport's copies,
/// and the server's calls that read and decrypt it into the receive buffer,
/// until all 1,048,576 bytes have arrived. One write is read before the
/// next is made, the pattern of a server that keeps up with its peer, so
/// one record at most is in flight. This is the steady-state record layer,
/// the cost that scales with bytes ([`Harness::bytes_per_run`] reports
/// 1 MiB, so results read as instructions per byte).
///
/// **The harness's share:** the library's loop and the transport's
/// bookkeeping are a few dozen instructions per record, under 1 % of the
/// region even with 1 KiB writes (`regress compare` prints the measured
/// share). Not in that figure: the transport copies every byte twice, in and
/// out, with glibc's `memcpy` (what a socket would do in the kernel, where
/// Valgrind does not count it), for every library alike
/// (`crate::common::transport`): about 200 K instructions per run with
/// 16 KiB records (measured: OpenSSL's count rose by 199,552 in `memcpy`
/// when its transport moved onto it) and about 270 K with 1 KiB records
/// (measured apart for the rustls transport).
///
/// **Not counted:** configs and the payload (`setup`); the connection, its
/// full handshake (which the handshake paths measure) and the zeroed 1 MiB
/// receive buffer (`prepare`), allocated outside so the count is the
/// library's, not the allocator's.
///
/// **Check:** `prepare` checked the whole handshake ([`Tls::check`]); after
/// the run both sides still report the pinned version, suite and group, the
/// server received exactly the bytes sent, and nothing is left in the
/// transport.
pub struct Records<L> {
    pub path: Record,
    library: PhantomData<fn() -> L>,
}

impl<L> Records<L> {
    /// The harness of `path`.
    pub const fn new(path: Record) -> Records<L> {
        Records {
            path,
            library: PhantomData,
        }
    }
}

/// What the runs of a record harness share: configs and the payload.
pub struct RecordSetup<L: Tls> {
    configs: L::Configs,
    pub(super) payload: Vec<u8>,
}

/// A connected pair and the server's receive buffer: the input of one run,
/// and (filled) its output.
pub struct Transfer<L: Tls> {
    pub(crate) pair: L::Pair,
    pub(crate) received: Vec<u8>,
    pub(crate) got: usize,
}

impl<L: Tls> Harness for Records<L> {
    type Setup = RecordSetup<L>;
    type Input = Transfer<L>;
    type Output = Transfer<L>;

    fn bytes_per_run(&self) -> Option<u64> {
        Some(RECORD_BYTES as u64)
    }

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    fn setup(&self) -> Result<RecordSetup<L>, HarnessError> {
        Ok(RecordSetup {
            configs: L::configs(&self.path.profile())?,
            payload: payload(),
        })
    }

    fn prepare(&self, setup: &RecordSetup<L>) -> Result<Transfer<L>, HarnessError> {
        let configs = &setup.configs;
        let pair = L::handshake(configs, L::fresh(configs)?)
            .context("the handshake before the transfer")?;
        L::check(configs, &pair, &self.path.profile().expected(false))?;
        Ok(Transfer {
            pair,
            received: vec![0; RECORD_BYTES],
            got: 0,
        })
    }

    fn run(
        &self,
        setup: &RecordSetup<L>,
        mut transfer: Transfer<L>,
    ) -> Result<Transfer<L>, HarnessError> {
        transfer.got = L::transfer(
            &mut transfer.pair,
            &setup.payload,
            self.path.write_size,
            &mut transfer.received,
        )?;
        Ok(transfer)
    }

    fn check(&self, setup: &RecordSetup<L>, transfer: &Transfer<L>) -> Result<(), HarnessError> {
        let pair = &transfer.pair;
        let expected = self.path.profile().expected(false);
        expected.check(&L::negotiated(&setup.configs, pair, false)?)?;
        check_received(&setup.payload, &transfer.received, transfer.got)?;
        let in_flight = L::in_flight(pair);
        ensure(in_flight == (0, 0), || {
            format!("bytes left in the transport after the transfer: {in_flight:?}")
        })?;
        L::check_transfer(pair)
    }
}
