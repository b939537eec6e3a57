//! The fairness checks of every TLS library, against the shared harness
//! shapes: each library's check must accept the handshake and transfer its
//! path pins, and reject every other pin, kind of handshake and transfer.
//! (Test-only; it sits above the libraries so that nothing below imports
//! upwards.)

use regress_measure::Harness;

use crate::common::payload::RECORD_BYTES;
use crate::common::pins::{every_other_expectation, Cipher};
use crate::openssl::tls::OpenSsl;
use crate::paths::Handshake;
use crate::rustls::tls::Rustls;
use crate::s2n_tls::tls::S2nTls;
use crate::tls::handshake::FullHandshake;
use crate::tls::record::Records;
use crate::tls::testing::{one_run, tls13};
use crate::tls::Tls;

/// On every full-handshake path, `L`'s reports reach the shared
/// comparison: it accepts the real handshake and rejects every other pin,
/// client authentication and resumption.
fn check_rejects_every_other_expectation<L: Tls>() {
    for path in Handshake::ALL.iter().filter(|path| !path.resumption) {
        let (configs, pair) = one_run::<L>(*path);
        let sides = L::negotiated(&configs, &pair, true).expect("reports");
        let good = path.expected();
        good.check(&sides).expect("the real parameters");
        for (what, wrong) in every_other_expectation(&good) {
            assert!(wrong.check(&sides).is_err(), "{path}: {what}");
        }
    }
}

/// The whole check tells the kinds of handshake apart: an mTLS handshake
/// fails the plain check and the other way round, ECDSA fails RSA, TLS 1.2
/// fails TLS 1.3.
fn checks_tell_the_paths_apart<L: Tls>() {
    let [rsa, ecdsa, mtls_rsa, _, tls12, _] = Handshake::ALL;
    for (ran, checked) in [
        (rsa, mtls_rsa),
        (mtls_rsa, rsa),
        (ecdsa, rsa),
        (rsa, ecdsa),
        (tls12, rsa),
        (rsa, tls12),
    ] {
        let (configs, pair) = one_run::<L>(ran);
        let checker = FullHandshake::<L>::new(checked);
        assert!(
            checker.check(&configs, &pair).is_err(),
            "{ran} passed the check of {checked}"
        );
    }
}

/// The record check rejects a transfer with a flipped byte (naming it), a
/// short one, and one made with another suite.
fn record_check_rejects_a_wrong_transfer<L: Tls>() {
    let harness = Records::<L>::new(tls13(Cipher::Aes128Gcm, 16 * 1024));
    let setup = harness.setup().expect("setup");
    let input = harness.prepare(&setup).expect("prepare");
    let mut output = harness.run(&setup, input).expect("run");
    harness.check(&setup, &output).expect("intact transfer");
    let aes256 = Records::<L>::new(tls13(Cipher::Aes256Gcm, 16 * 1024));
    assert!(aes256.check(&setup, &output).is_err(), "another suite");
    output.got -= 1;
    assert!(harness.check(&setup, &output).is_err(), "a short transfer");
    output.got += 1;
    output.received[RECORD_BYTES / 2] ^= 0x01;
    let error = harness
        .check(&setup, &output)
        .expect_err("a flipped byte must fail the check");
    assert!(error.to_string().contains("524288"), "{error}");
}

#[test]
fn every_library_rejects_every_other_expectation() {
    check_rejects_every_other_expectation::<S2nTls>();
    check_rejects_every_other_expectation::<Rustls>();
    check_rejects_every_other_expectation::<OpenSsl>();
}

#[test]
fn every_library_tells_the_paths_apart() {
    checks_tell_the_paths_apart::<S2nTls>();
    checks_tell_the_paths_apart::<Rustls>();
    checks_tell_the_paths_apart::<OpenSsl>();
}

#[test]
fn every_library_rejects_a_wrong_transfer() {
    record_check_rejects_a_wrong_transfer::<S2nTls>();
    record_check_rejects_a_wrong_transfer::<Rustls>();
    record_check_rejects_a_wrong_transfer::<OpenSsl>();
}
