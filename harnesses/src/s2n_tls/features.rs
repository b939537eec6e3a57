//! The s2n-tls feature paths ([`Feature`]): what s2n-tls's users rely on
//! beyond the paths every TLS library shares, one harness each.

use std::task::Waker;

use regress_measure::program::AnyHarness;
use regress_measure::HarnessError;

use super::transport::Pair;
use crate::common::error::Context as _;
use crate::paths::{Feature, NoHarness};

/// The harness of `feature`.
pub fn harness(feature: Feature) -> Result<Box<dyn AnyHarness>, NoHarness> {
    Ok(match feature {
        Feature::ExternalPsk => Box::new(super::psk::PskHandshake),
        Feature::Serialization => Box::new(super::serialize::SerializeRoundTrip),
        Feature::AsyncPrivateKey => Box::new(super::async_pkey::AsyncPrivateKeyHandshake),
        Feature::ClientHelloCallback => Box::new(super::client_hello::ClientHelloHandshake),
        Feature::ConnectionInfo => Box::new(super::connection_info::ConnectionInfo),
    })
}

/// `pair` with a waker on its server: s2n-tls's bindings refuse to run a
/// server callback (ClientHello, private key) on a connection without one,
/// even one that completes at once. The waker does nothing: the callbacks
/// here never return a future, so nothing is ever woken.
pub fn waiting(mut pair: Pair) -> Result<Pair, HarnessError> {
    pair.server
        .set_waker(Some(Waker::noop()))
        .context("setting the server's waker")?;
    Ok(pair)
}
