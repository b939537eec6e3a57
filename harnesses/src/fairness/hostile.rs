//! The fairness checks of the hostile paths: each check passes only on
//! the server's answer to its own input, refused the way its library
//! refuses, and each limit a path claims is the library's.

use regress_measure::Harness;

use crate::common::pki::{ClientChain, LargeRsa, Pki};
use crate::openssl::tls::OpenSsl;
use crate::paths::{Benchmark, Hostile, Library, Path};
use crate::registry::not_applicable;
use crate::rustls::tls::Rustls;
use crate::s2n_tls::tls::S2nTls;
use crate::tls::hostile::client_chain::ClientChainFlight;
use crate::tls::hostile::flood::RecordFlood;
use crate::tls::hostile::{
    check_served, valid_share_flight, wire, HostileFlight, Refusal, ServeError, Victim,
};
use crate::tls::key_update::KeyUpdate;

/// Whether `L`'s check of `input` passes on what `fresh`'s server answered
/// and how its calls ended.
fn passes<L: Victim>(input: Hostile, fresh: &L::Fresh, outcome: &Result<(), ServeError>) -> bool {
    check_served(
        input,
        L::refusal(input),
        &L::defaults(),
        L::attacker(fresh),
        outcome,
    )
    .is_ok()
}

/// Each hostile path's check passes only on the server's answer to its own
/// flight: the answer to another input fails it, and so does a server that
/// received half the flight (it answers nothing, waiting for the rest).
fn hostile_checks_need_their_flight<L: Victim>(library: Library) {
    let served = |input: Hostile, half: bool| {
        let harness = HostileFlight::<L>::new(input);
        let mut attack = harness.setup().expect("setup");
        if half {
            attack.flight.truncate(attack.flight.len() / 2);
        }
        let fresh = harness.prepare(&attack).expect("prepare");
        let served = harness.run(&attack, fresh).expect("run");
        (harness, attack, served)
    };
    let applies = |input| {
        not_applicable(&Benchmark {
            library,
            path: Path::Hostile(input),
        })
        .is_none()
    };
    for input in Hostile::HELLOS.into_iter().filter(|input| applies(*input)) {
        let (harness, attack, whole) = served(input, false);
        harness.check(&attack, &whole).expect("its own flight");
        let (_, _, half) = served(input, true);
        assert!(harness.check(&attack, &half).is_err(), "{input:?}: half");
        let other = match input {
            Hostile::Retry => Hostile::KeyShares,
            _ => Hostile::Retry,
        };
        let (_, _, answer) = served(other, false);
        assert!(
            harness.check(&attack, &answer).is_err(),
            "{input:?}: the answer to {other:?}"
        );
    }
}

/// The invalid key shares' checks need the invalid share: the server's
/// answer to the same ClientHello with a valid share of the same group (a
/// ServerHello, the handshake going on) fails each.
fn share_checks_need_the_invalid_share<L: Victim>() {
    for input in [
        Hostile::ZeroShare,
        Hostile::OffCurveShare,
        Hostile::BadMlKemShare,
    ] {
        let harness = HostileFlight::<L>::new(input);
        let attack = harness.setup().expect("setup");
        let refused = harness.run(&attack, harness.prepare(&attack).expect("prepare"));
        let refused = refused.expect("run");
        harness.check(&attack, &refused).expect("refused");
        // Refused, but not as another library refuses: the check holds each
        // library to its own way.
        let other = match L::refusal(input) {
            Refusal::Alert => Refusal::Silence,
            _ => Refusal::Alert,
        };
        assert!(
            check_served(
                input,
                other,
                &L::defaults(),
                L::attacker(&refused.fresh),
                &refused.outcome
            )
            .is_err(),
            "{input:?}: passed as {other:?}"
        );
        let flight = valid_share_flight(input, &L::defaults()).expect("flight");
        let mut fresh = L::fresh(&attack.configs).expect("fresh");
        L::attacker(&fresh).send(&flight).expect("send");
        let outcome = L::serve(&mut fresh);
        assert!(outcome.is_ok(), "{input:?}: a valid share: {outcome:?}");
        assert!(
            !passes::<L>(input, &fresh, &outcome),
            "{input:?}: passed on a valid share"
        );
    }
}

#[test]
fn every_library_refuses_only_the_invalid_shares() {
    share_checks_need_the_invalid_share::<S2nTls>();
    #[cfg(not(feature = "rustls-0-24"))]
    share_checks_need_the_invalid_share::<Rustls>();
    share_checks_need_the_invalid_share::<OpenSsl>();
}

#[test]
fn every_hostile_check_needs_its_flight() {
    hostile_checks_need_their_flight::<S2nTls>(Library::S2nTls);
    // Not yet written for rustls 0.24's API (`registry::not_applicable`).
    #[cfg(not(feature = "rustls-0-24"))]
    hostile_checks_need_their_flight::<Rustls>(Library::Rustls);
    hostile_checks_need_their_flight::<OpenSsl>(Library::OpenSsl);
}

/// The key-update flood's check needs the updates: the same one-byte
/// records without them fail it; and the tiny-records flood's check fails
/// on records that came with updates.
fn flood_check_needs_the_updates<L: KeyUpdate>() {
    let updating = RecordFlood::<L>::new(Hostile::KeyUpdateFlood);
    let tiny = RecordFlood::<L>::new(Hostile::TinyRecords);
    assert!(updating.updates && !tiny.updates);
    let setup = updating.setup().expect("setup");
    let flooded = updating.prepare(&setup).expect("prepare");
    let flooded = updating.run(&setup, flooded).expect("run");
    updating.check(&setup, &flooded).expect("the flood");
    let plain = tiny.prepare(&setup).expect("prepare");
    let plain = tiny.run(&setup, plain).expect("run");
    tiny.check(&setup, &plain).expect("the tiny records");
    assert!(
        updating.check(&setup, &plain).is_err(),
        "records without updates"
    );
    assert!(
        tiny.check(&setup, &flooded).is_err(),
        "records with updates"
    );
    let records =
        |harness: &RecordFlood<L>, flood| harness.received(&setup, flood).map(|r| r.records);
    assert_eq!(records(&updating, &flooded), Some(64));
    assert_eq!(records(&tiny, &plain), Some(32));
    // The attacker's side: the client writing each flood in the run; each
    // check fails on the other flood's writing, and neither reports a
    // flight received (the client receives nothing).
    let sent_updating = RecordFlood::<L>::new(Hostile::KeyUpdateFloodSent);
    let sent_tiny = RecordFlood::<L>::new(Hostile::TinyRecordsSent);
    assert!(sent_updating.sent && sent_updating.updates && sent_tiny.sent && !sent_tiny.updates);
    let written = sent_updating.prepare(&setup).expect("prepare");
    let written = sent_updating.run(&setup, written).expect("run");
    sent_updating
        .check(&setup, &written)
        .expect("the flood written");
    let tiny_written = sent_tiny.prepare(&setup).expect("prepare");
    let tiny_written = sent_tiny.run(&setup, tiny_written).expect("run");
    sent_tiny
        .check(&setup, &tiny_written)
        .expect("the records written");
    assert!(sent_updating.check(&setup, &tiny_written).is_err());
    assert!(sent_tiny.check(&setup, &written).is_err());
    assert_eq!(sent_updating.received(&setup, &written), None);
}

#[test]
fn every_library_floods_only_with_updates() {
    flood_check_needs_the_updates::<S2nTls>();
    #[cfg(not(feature = "rustls-0-24"))]
    flood_check_needs_the_updates::<Rustls>();
    flood_check_needs_the_updates::<OpenSsl>();
}

/// The invalid-binder path's flight is a real resumption: untampered, the
/// server resumes (a ServerHello accepting the PSK), and the path's check,
/// which wants decrypt_error, fails on that answer.
fn binder_check_needs_the_tampered_binder<L: Victim>() {
    let harness = HostileFlight::<L>::new(Hostile::InvalidBinder);
    let attack = harness.setup().expect("setup");
    let fresh = harness.prepare(&attack).expect("prepare");
    let served = harness.run(&attack, fresh).expect("run");
    harness.check(&attack, &served).expect("refused");
    let mut fresh = L::fresh(&attack.configs).expect("fresh");
    let flight = L::resumption_flight(&attack.configs).expect("a resumption");
    L::attacker(&fresh).send(&flight).expect("send");
    let outcome = L::serve(&mut fresh);
    let answer = wire::reply(&L::attacker(&fresh).incoming_bytes()).expect("an answer");
    assert!(
        matches!(answer, wire::Reply::Hello(ref hello) if hello.psk && !hello.retry),
        "{answer}"
    );
    for input in [Hostile::InvalidBinder, Hostile::CorruptTickets] {
        assert!(
            !passes::<L>(input, &fresh, &outcome),
            "{input:?} passed on a resumption"
        );
    }
    let harness = HostileFlight::<L>::new(Hostile::CorruptTickets);
    let attack = harness.setup().expect("setup");
    let fresh = harness.prepare(&attack).expect("prepare");
    let served = harness.run(&attack, fresh).expect("run");
    harness.check(&attack, &served).expect("a full handshake");
}

#[test]
fn the_binder_path_needs_a_tampered_binder() {
    #[cfg(not(feature = "rustls-0-24"))]
    binder_check_needs_the_tampered_binder::<Rustls>();
    binder_check_needs_the_tampered_binder::<OpenSsl>();
}

/// The client-chain paths' checks need their chains, and the chains are at
/// the limits they claim: the longest chain passes and one intermediate
/// more is refused by every server in the run, which fails the check; 50
/// decoys are refused by rustls (past webpki's budget of 100 signature
/// checks) and accepted by OpenSSL, which matches the issuer by its key
/// identifier; s2n-tls and OpenSSL accept an RSA-16384 client; and each
/// path's check fails on another's handshake.
fn client_chains_are_at_their_limits<L: Victim>(library: Library) {
    let served = |client: Pki| {
        let harness = ClientChainFlight::<L>::with_client(client);
        let configs = harness.setup().expect("setup");
        let sent = harness.prepare(&configs).expect("prepare");
        let sent = harness.run(&configs, sent).expect("run");
        (harness, configs, sent)
    };
    let client = |input| ClientChainFlight::<L>::client_of(input).expect("a client");
    let (ladder, ladder_configs, ladder_sent) = served(client(Hostile::LongestClientChain));
    ladder
        .check(&ladder_configs, &ladder_sent)
        .expect("the longest chain");
    let Pki::EcdsaP256ClientChain(longest) = client(Hostile::LongestClientChain) else {
        panic!("the longest chain is not a chain");
    };
    let beyond = longest.next().expect("a longer chain is carried");
    let (harness, configs, sent) = served(Pki::EcdsaP256ClientChain(beyond));
    let error = harness
        .check(&configs, &sent)
        .expect_err("one past the limit");
    assert!(error.to_string().contains("refused"), "{error}");
    let (large, large_configs, large_sent) = served(client(Hostile::LargeRsaClient));
    large.check(&large_configs, &large_sent).expect("RSA-8192");
    assert!(large.check(&large_configs, &ladder_sent).is_err());
    if library != Library::Rustls {
        // rustls's client cannot load the key (aws-lc-rs signs with RSA
        // keys of at most 8192 bits); its server's refusal is tested on
        // its verifier (`rustls::hostile`).
        let (harness, configs, sent) = served(Pki::Rsa4096LargeClient(LargeRsa::Bits16384));
        harness.check(&configs, &sent).expect("RSA-16384");
    }
    if library == Library::S2nTls {
        return;
    }
    let (decoys, decoy_configs, decoy_sent) = served(client(Hostile::ClientChainDecoys));
    decoys
        .check(&decoy_configs, &decoy_sent)
        .expect("49 decoys");
    let (harness, configs, sent) = served(Pki::EcdsaP256ClientChain(ClientChain::Decoys50));
    assert_eq!(
        harness.check(&configs, &sent).is_err(),
        library == Library::Rustls,
        "50 decoys"
    );
    assert!(decoys.check(&decoy_configs, &ladder_sent).is_err());
    assert!(ladder.check(&ladder_configs, &decoy_sent).is_err());
}

#[test]
fn every_verifier_holds_its_client_chain_limits() {
    client_chains_are_at_their_limits::<S2nTls>(Library::S2nTls);
    #[cfg(not(feature = "rustls-0-24"))]
    client_chains_are_at_their_limits::<Rustls>(Library::Rustls);
    client_chains_are_at_their_limits::<OpenSsl>(Library::OpenSsl);
}
