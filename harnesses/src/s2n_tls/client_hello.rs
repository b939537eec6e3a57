//! [`ClientHelloHandshake`]: a full handshake whose server runs a
//! ClientHello callback.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use regress_measure::{Harness, HarnessError};
use std::pin::Pin;

use s2n_tls::callbacks::{ClientHelloCallback, ConnectionFuture};
use s2n_tls::connection::Connection;

use super::check::check_handshake;
use super::config::{base_builder, client_config, policy, Configs, PINNED_POLICY};
use super::features::waiting;
use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::TlsVersion;
use crate::common::pki::{Pki, SERVER_NAME};
use crate::paths::Handshake;

/// The handshake the feature runs on: ECDSA P-256, so that the callback's
/// cost is seen against a ~5 M instruction handshake rather than RSA-4096's
/// ~77 M.
pub const HANDSHAKE: Handshake = Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13);

/// What the callback saw, counted across the connections of one config.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Times the callback ran.
    calls: Arc<AtomicU32>,
    /// Times it read the server name `localhost`.
    localhost: Arc<AtomicU32>,
}

impl Seen {
    /// `(calls, of which saw localhost)`, and both back to 0.
    fn take(&self) -> (u32, u32) {
        (
            self.calls.swap(0, Ordering::Relaxed),
            self.localhost.swap(0, Ordering::Relaxed),
        )
    }
}

/// A ClientHello callback that does what servers do with it: reads the
/// server name the client asked for (to pick a certificate or a config;
/// here the one config serves `localhost`) and resolves at once.
#[derive(Debug)]
struct ReadServerName(Seen);

impl ClientHelloCallback for ReadServerName {
    fn on_client_hello(
        &self,
        connection: &mut Connection,
    ) -> Result<Option<Pin<Box<dyn ConnectionFuture>>>, s2n_tls::error::Error> {
        self.0.calls.fetch_add(1, Ordering::Relaxed);
        if connection.server_name() == Some(SERVER_NAME) {
            self.0.localhost.fetch_add(1, Ordering::Relaxed);
        }
        Ok(None)
    }
}

/// One full TLS 1.3 handshake of [`HANDSHAKE`]'s configs whose server
/// config has a ClientHello callback (`set_client_hello_callback`,
/// `s2n_config_set_client_hello_cb`) that reads the server name.
///
/// **Counted:** what `handshake_ecdsa_p256` counts, plus s2n-tls parsing
/// the ClientHello for the callback, the bindings' trampoline into Rust
/// (finding the config's context, the callback's `Ok(None)` marking it
/// done with `s2n_client_hello_cb_done`), and the callback itself
/// (`server_name()`, a comparison, two atomic increments). Compare with
/// `s2n_tls::handshake_ecdsa_p256`: the configs are built the same way
/// (see `ClientHelloSetup::new`), so the difference is the callback's
/// price.
///
/// **Not counted:** configs (`setup`), the fresh pair and zeroing the
/// callback's counters (`prepare`), where the server also gets
/// the no-op waker the bindings need to run a callback ([`waiting`]).
///
/// **Check:** the full handshake's check (pins, chain, handshake type), and
/// the callback ran exactly once and read `localhost`. A server without the
/// callback, or a client asking for another name, fails it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientHelloHandshake;

/// The configs, the server's carrying the callback, and what it saw.
#[derive(Debug)]
pub struct ClientHelloSetup {
    configs: Configs,
    seen: Seen,
}

impl ClientHelloSetup {
    /// [`HANDSHAKE`]'s configs, with the callback on the server's. Built
    /// as `Configs::new` builds them, client first, then the server with
    /// the same calls plus the callback, so the process draws the same
    /// random bytes before the handshake as `handshake_ecdsa_p256`'s: the
    /// server's ECDSA nonce, and with it the signature the client verifies
    /// (whose cost varies with its value), are the same, and the difference
    /// of the two counts is the callback's alone.
    fn new() -> Result<ClientHelloSetup, HarnessError> {
        let profile = HANDSHAKE.profile();
        let pki = profile.pki;
        let client = client_config(&policy(PINNED_POLICY)?, pki, pki.host(), None, None)?;
        let seen = Seen::default();
        let mut builder = base_builder(&policy(PINNED_POLICY)?)?;
        builder
            .load_pem(pki.server_chain_pem(), pki.server_key_pem())
            .context("loading the server chain and key")?
            .set_client_hello_callback(ReadServerName(seen.clone()))
            .context("setting the ClientHello callback")?;
        let server = builder.build().context("building the server config")?;
        Ok(ClientHelloSetup {
            configs: Configs {
                client,
                server,
                profile,
                tickets: None,
            },
            seen,
        })
    }
}

impl Harness for ClientHelloHandshake {
    type Setup = ClientHelloSetup;
    type Input = Pair;
    type Output = Pair;

    fn sides(&self) -> bool {
        true
    }

    fn first_record(&self, _: &ClientHelloSetup, pair: &mut Pair) -> Result<bool, HarnessError> {
        crate::tls::first_record::<S2nTls>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<ClientHelloSetup, HarnessError> {
        ClientHelloSetup::new()
    }

    fn prepare(&self, setup: &ClientHelloSetup) -> Result<Pair, HarnessError> {
        setup.seen.take();
        waiting(Pair::new(&setup.configs)?)
    }

    fn run(&self, _: &ClientHelloSetup, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, setup: &ClientHelloSetup, pair: &Pair) -> Result<(), HarnessError> {
        // What the callback saw first: the handshake's check also finds
        // another SNI, but not whether the callback read it.
        let seen = setup.seen.take();
        ensure(seen == (1, 1), || {
            format!(
                "the ClientHello callback ran {} time(s) and read localhost {} time(s); \
                 once each expected",
                seen.0, seen.1
            )
        })?;
        check_handshake(pair, &setup.configs.profile, &HANDSHAKE.expected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the callback on the server, or with a client asking for
    /// another name, the check fails on what the callback saw.
    #[test]
    fn check_fails_without_the_callback_or_the_name() {
        let harness = ClientHelloHandshake;
        let setup = harness.setup().expect("setup");
        regress_measure::harness::run_natively(&harness).expect("the path");

        let plain = Configs::new(&HANDSHAKE.profile()).expect("configs");
        let mut pair =
            waiting(Pair::with_configs(&setup.configs.client, &plain.server).expect("pair"))
                .expect("waker");
        pair.handshake().expect("a handshake without the callback");
        let error = harness.check(&setup, &pair).expect_err("no callback ran");
        assert!(error.to_string().contains("ran 0 time(s)"), "{error}");

        let mut pair = harness.prepare(&setup).expect("prepare");
        pair.client
            .set_server_name("example.com")
            .expect("another name");
        let pair = harness.run(&setup, pair).expect("the handshake");
        let error = harness.check(&setup, &pair).expect_err("another name");
        assert!(
            error
                .to_string()
                .contains("ran 1 time(s) and read localhost 0"),
            "{error}"
        );
    }
}
