//! Helpers for tests of the shared harness shapes: one run of a path, a
//! prepared connection. The shapes' own tests, run against every library,
//! are in `crate::fairness`.

use regress_measure::Harness;

use super::handshake::FullHandshake;
use super::record::Records;
use super::Tls;
use crate::common::pins::{Cipher, TlsVersion};
use crate::paths::{Handshake, Record};

/// One handshake of `path`: its configs and the finished pair.
pub fn one_run<L: Tls>(path: Handshake) -> (L::Configs, L::Pair) {
    let harness = FullHandshake::<L>::new(path);
    let configs = harness.setup().expect("setup");
    let fresh = harness.prepare(&configs).expect("prepare");
    let pair = harness.run(&configs, fresh).expect("run");
    (configs, pair)
}

/// A TLS 1.3 record path.
pub fn tls13(cipher: Cipher, write_size: usize) -> Record {
    Record {
        cipher,
        version: TlsVersion::Tls13,
        write_size,
    }
}

/// A TLS 1.2 record path.
pub fn tls12(cipher: Cipher, write_size: usize) -> Record {
    Record {
        cipher,
        version: TlsVersion::Tls12,
        write_size,
    }
}

/// The payload and a prepared connection of `path`, for tests that write
/// themselves.
pub fn prepared<L: Tls>(path: Record) -> (Vec<u8>, L::Pair) {
    let harness = Records::<L>::new(path);
    let setup = harness.setup().expect("setup");
    let transfer = harness.prepare(&setup).expect("prepare");
    (setup.payload, transfer.pair)
}
