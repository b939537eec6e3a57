//! [`DefaultHandshake`]: one full handshake between a client and a server
//! each built with its library's **default configuration**, plus only what
//! a library cannot default: the trust anchor, the server's certificate
//! (the web-shaped ECDSA P-256 chain, what most servers present), the fixed
//! clock and the deterministic random source of every harness, and no
//! system trust store (the machine's, not the library's).
//!
//! What a user who changes nothing gets: each library picks its own
//! version, suite, group and signature scheme, so these paths are **not** a
//! fair comparison of libraries (the fair ones pin those). What each
//! library negotiates is written down in its [`Defaults::defaults`] table,
//! the check asserts it, and the table goes into the measurement's
//! fingerprint (as the run-time "library" `defaults`): when a library
//! changes a default, its check names the parameter, and a baseline
//! blessed before names the old defaults beside the new ones.

use std::marker::PhantomData;

use regress_measure::{Harness, HarnessError, RuntimeLibrary};

use super::Tls;
use crate::common::pins::Pins;
use crate::common::pki::Pki;
use crate::paths::{Profile, Resumption};

/// The certificates every library's defaults path is given: the web-shaped
/// ECDSA P-256 chain.
pub const DEFAULTS_PKI: Pki = Pki::WebEcdsaP256;

/// The profile of a library's defaults: the pins it chooses and how its
/// server keeps sessions by default, on [`DEFAULTS_PKI`], with nothing else
/// (no client certificate, no HelloRetryRequest, a trusted chain).
pub const fn profile(pins: Pins, resumption: Option<Resumption>) -> Profile {
    Profile {
        pki: DEFAULTS_PKI,
        pins,
        client_auth: false,
        resumption,
        retry_from: None,
        untrusted: false,
        first_alert: None,
    }
}

/// A library whose default configuration the defaults path measures.
pub trait Defaults: Tls {
    /// What two default peers of this library version negotiate, as a
    /// profile: the PKI they were given, the pins they chose, whether the
    /// server sends tickets by default.
    fn defaults() -> Profile;

    /// A client and a server config of the library's defaults, with the
    /// trust anchor and certificate of [`Defaults::defaults`]'s PKI and the
    /// determinism every harness has.
    fn default_configs() -> Result<Self::Configs, HarnessError>;
}

/// `version suite group scheme`, as the fingerprint records a profile's
/// negotiated parameters.
pub fn describe(profile: &Profile) -> String {
    let pins = &profile.pins;
    format!(
        "{} {} {} {}{}",
        pins.version.name(),
        pins.suite.name(),
        pins.group.name(),
        pins.scheme.name(),
        match profile.resumption {
            None => "",
            Some(Resumption::Ticket) => " tickets",
            Some(Resumption::Cache) => " session cache",
        }
    )
}

/// One full handshake of library `L`'s defaults.
///
/// **Counted:** [`Tls::handshake`], as for the pinned handshakes.
/// **Not counted:** building the default configs (`setup`) and the fresh
/// connections (`prepare`).
/// **Check:** [`Tls::check`] against [`Defaults::defaults`]: what both sides
/// negotiated, the chain, and what else the library's check proves.
pub struct DefaultHandshake<L>(PhantomData<fn() -> L>);

impl<L> DefaultHandshake<L> {
    /// The harness.
    pub const fn new() -> DefaultHandshake<L> {
        DefaultHandshake(PhantomData)
    }
}

impl<L> Default for DefaultHandshake<L> {
    fn default() -> Self {
        DefaultHandshake::new()
    }
}

impl<L: Defaults> Harness for DefaultHandshake<L> {
    type Setup = L::Configs;
    type Input = L::Fresh;
    type Output = L::Pair;

    fn runtime_libraries(&self) -> Vec<RuntimeLibrary> {
        let mut libraries = L::runtime_libraries();
        libraries.push(RuntimeLibrary {
            name: "defaults".into(),
            version: describe(&L::defaults()),
            cpu: None,
        });
        libraries
    }

    fn sides(&self) -> bool {
        true
    }

    fn first_record(&self, _: &L::Configs, pair: &mut L::Pair) -> Result<bool, HarnessError> {
        super::first_record::<L>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<L::Configs, HarnessError> {
        L::default_configs()
    }

    fn prepare(&self, configs: &L::Configs) -> Result<L::Fresh, HarnessError> {
        L::fresh(configs)
    }

    fn run(&self, configs: &L::Configs, fresh: L::Fresh) -> Result<L::Pair, HarnessError> {
        L::handshake(configs, fresh)
    }

    fn check(&self, configs: &L::Configs, pair: &L::Pair) -> Result<(), HarnessError> {
        L::check(configs, pair, &L::defaults().expected(false))
    }
}
