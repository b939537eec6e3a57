//! The fairness checks of every TLS library, against the shared harness
//! shapes: each library's check must accept the handshake and transfer its
//! path pins, and reject every other pin, kind of handshake and transfer.
//! (Test-only; it sits above the libraries so that nothing below imports
//! upwards.) The hostile paths' are in `hostile.rs`.

mod hostile;

use regress_measure::Harness;

use crate::common::payload::RECORD_BYTES;
use crate::common::pins::{every_other_expectation, Cipher, NamedGroup, TlsVersion};
use crate::common::pki::Pki;
use crate::openssl::tls::OpenSsl;
use crate::paths::{Alert, Benchmark, Handshake, Library, Path};
use crate::registry::not_applicable;
use crate::rustls::tls::Rustls;
use crate::s2n_tls::tls::S2nTls;
use crate::tls::defaults::{DefaultHandshake, Defaults};
use crate::tls::handshake::FullHandshake;
use crate::tls::record::Records;
use crate::tls::rejected::{RejectedHandshake, Rejection, REJECTED};
use crate::tls::testing::{one_run, tls12, tls13};
use crate::tls::Tls;

/// The full handshakes `library` (as this build links it) has.
fn full_handshakes(library: Library) -> impl Iterator<Item = Handshake> {
    Handshake::ALL
        .into_iter()
        .chain(Handshake::REAL_WORLD)
        .filter(move |path| {
            let benchmark = Benchmark {
                library,
                path: Path::Handshake(*path),
            };
            path.resumption.is_none() && not_applicable(&benchmark).is_none()
        })
}

/// On every full-handshake path, `L`'s reports reach the shared
/// comparison: it accepts the real handshake and rejects every other pin,
/// client authentication, resumption and HelloRetryRequest. A library that
/// cannot report a HelloRetryRequest (OpenSSL) must reject the wrong one in
/// its own check.
fn check_rejects_every_other_expectation<L: Tls>(library: Library) {
    for path in full_handshakes(library) {
        let (configs, pair) = one_run::<L>(path);
        let sides = L::negotiated(&configs, &pair, true).expect("reports");
        let sees_retry = sides.iter().all(|(_, seen)| seen.retried.is_some());
        let good = path.expected();
        good.check(&sides).expect("the real parameters");
        for (what, wrong) in every_other_expectation(&good) {
            let rejected = if what == "hello retry" && !sees_retry {
                L::check(&configs, &pair, &wrong).is_err()
            } else {
                wrong.check(&sides).is_err()
            };
            assert!(rejected, "{path}: {what}");
        }
    }
}

/// The checks of the 2026 paths fail on the handshake they do not name: a
/// client that offers only secp256r1 fails the post-quantum check and the
/// other way round, a handshake without a HelloRetryRequest fails the
/// retry's check and the other way round. (Which chain a handshake sent is
/// checked against the configs' own PKI, by each library's check.)
fn real_world_checks_need_their_path<L: Tls>(library: Library) {
    let pq = Handshake::REAL_WORLD[0];
    let retry = Handshake::REAL_WORLD[6];
    let plain = |path: Handshake| path.on(NamedGroup::Secp256r1);
    let mut pairs = vec![
        (retry, Handshake::ALL[1]),
        (Handshake::ALL[1], retry),
        (retry, Handshake::ALL[1].on(NamedGroup::X25519)),
    ];
    let pq_applies = not_applicable(&Benchmark {
        library,
        path: Path::Handshake(pq),
    })
    .is_none();
    if pq_applies {
        pairs.extend([(plain(pq), pq), (pq, plain(pq))]);
    }
    for (ran, checked) in pairs {
        let (configs, pair) = one_run::<L>(ran);
        let checker = FullHandshake::<L>::new(checked);
        assert!(
            checker.check(&configs, &pair).is_err(),
            "{ran} passed the check of {checked}"
        );
    }
}

/// The warning path's alert waits first in the client's way and the client
/// reads it in the run: the path passes its check (which finds nothing left
/// in the transport), and the same alert at fatal level ends the run's
/// handshake, so the record is read there and not skipped.
fn the_first_alert_is_read_in_the_run<L: Tls>() {
    let path = Handshake::REAL_WORLD[12];
    assert_eq!(
        path.profile().first_alert,
        Some(Alert::UNRECOGNIZED_NAME),
        "{path}"
    );
    let (configs, pair) = one_run::<L>(path);
    FullHandshake::<L>::new(path)
        .check(&configs, &pair)
        .expect("the warning path");
    let mut profile = path.profile();
    profile.first_alert = profile.first_alert.map(Alert::fatal);
    let configs = L::configs(&profile).expect("configs");
    let fresh = L::fresh(&configs).expect("fresh");
    assert!(
        L::handshake(&configs, fresh).is_err(),
        "{path}: a fatal first alert must end the handshake"
    );
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

/// A CBC record path's check fails on a transfer that TLS 1.2's AES-128-GCM
/// protected, and the other way round: the path really runs CBC records.
fn cbc_check_needs_cbc<L: Tls>() {
    let cbc = Records::<L>::new(tls12(Cipher::Aes128CbcSha, 1024));
    let gcm = Records::<L>::new(tls12(Cipher::Aes128Gcm, 1024));
    for (ran, checked) in [(&cbc, &gcm), (&gcm, &cbc)] {
        let setup = ran.setup().expect("setup");
        let input = ran.prepare(&setup).expect("prepare");
        let output = ran.run(&setup, input).expect("run");
        ran.check(&setup, &output).expect("its own check");
        assert!(
            checked.check(&setup, &output).is_err(),
            "{} passed the check of {}",
            ran.path,
            checked.path
        );
    }
}

/// A DHE handshake's check fails on the ECDHE handshake of the same version
/// and PKI, and the other way round: the path really exchanges keys over
/// the server's finite-field parameters.
fn dhe_check_needs_dhe<L: Tls>() {
    let ecdhe = Handshake::full(Pki::Rsa4096, TlsVersion::Tls12);
    let dhe = ecdhe.on(NamedGroup::Ffdhe2048);
    for (ran, checked) in [(ecdhe, dhe), (dhe, ecdhe)] {
        let (configs, pair) = one_run::<L>(ran);
        FullHandshake::<L>::new(ran)
            .check(&configs, &pair)
            .expect("its own check");
        assert!(
            FullHandshake::<L>::new(checked)
                .check(&configs, &pair)
                .is_err(),
            "{ran} passed the check of {checked}"
        );
    }
}

#[test]
fn dhe_handshakes_are_told_from_ecdhe_ones() {
    dhe_check_needs_dhe::<S2nTls>();
    dhe_check_needs_dhe::<OpenSsl>();
}

#[test]
fn cbc_records_are_told_from_aead_ones() {
    cbc_check_needs_cbc::<S2nTls>();
    cbc_check_needs_cbc::<OpenSsl>();
    // rustls implements no CBC suite: its configs refuse the path rather
    // than negotiate something else.
    let cbc = tls12(Cipher::Aes128CbcSha, 1024);
    assert!(Rustls::configs(&cbc.profile()).is_err());
}

#[test]
fn every_library_rejects_every_other_expectation() {
    check_rejects_every_other_expectation::<S2nTls>(Library::S2nTls);
    check_rejects_every_other_expectation::<Rustls>(Library::Rustls);
    check_rejects_every_other_expectation::<OpenSsl>(Library::OpenSsl);
}

/// The defaults check holds the library to its table: a handshake of pinned
/// configs (web ECDSA, X25519, TLS_AES_128_GCM_SHA256, which no library
/// picks on its own) fails it.
fn defaults_check_needs_the_defaults<L: Defaults>() {
    let harness = DefaultHandshake::<L>::new();
    let configs = harness.setup().expect("default configs");
    let fresh = harness.prepare(&configs).expect("prepare");
    let pair = harness.run(&configs, fresh).expect("run");
    harness
        .check(&configs, &pair)
        .expect("the library's defaults");
    let (pinned, pair) = one_run::<L>(Handshake::REAL_WORLD[5]);
    assert!(
        L::check(&pinned, &pair, &L::defaults().expected(false)).is_err(),
        "a pinned handshake passed as the defaults"
    );
}

/// The rejected path fails, and passes its check, only because the client
/// trusts another CA: with the right CA the run is an error.
fn rejection_needs_an_untrusted_server<L: Rejection>() {
    let harness = RejectedHandshake::<L>::new();
    let configs = harness.setup().expect("setup");
    let fresh = harness.prepare(&configs).expect("prepare");
    let output = harness.run(&configs, fresh).expect("a failed handshake");
    harness
        .check(&configs, &output)
        .expect("rejected on the certificate");
    let trusting = L::configs(&REJECTED.profile()).expect("configs");
    let fresh = L::fresh(&trusting).expect("fresh");
    assert!(
        L::reject(&trusting, fresh).is_err(),
        "a trusted server was rejected"
    );
}

#[test]
fn every_library_rejects_only_an_untrusted_server() {
    rejection_needs_an_untrusted_server::<S2nTls>();
    // Not yet written for rustls 0.24's API (`registry::not_applicable`).
    #[cfg(not(feature = "rustls-0-24"))]
    rejection_needs_an_untrusted_server::<Rustls>();
    rejection_needs_an_untrusted_server::<OpenSsl>();
}

#[test]
fn every_library_is_held_to_its_defaults() {
    defaults_check_needs_the_defaults::<S2nTls>();
    defaults_check_needs_the_defaults::<Rustls>();
    defaults_check_needs_the_defaults::<OpenSsl>();
}

#[test]
fn every_library_needs_the_real_world_path() {
    real_world_checks_need_their_path::<S2nTls>(Library::S2nTls);
    real_world_checks_need_their_path::<Rustls>(Library::Rustls);
    real_world_checks_need_their_path::<OpenSsl>(Library::OpenSsl);
}

#[test]
fn every_library_reads_the_first_alert() {
    the_first_alert_is_read_in_the_run::<S2nTls>();
    the_first_alert_is_read_in_the_run::<Rustls>();
    the_first_alert_is_read_in_the_run::<OpenSsl>();
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
