//! rustls's failed handshake ([`Rejection`]): the client rejecting the
//! server's chain (rustls 0.23; not yet written for 0.24's API, where the
//! registry says the path does not apply).

use regress_measure::HarnessError;

use super::api;
use super::config::Configs;
use super::tls::Rustls;
use super::transport::{Accepting, Pair};
use crate::common::error::Context as _;
use crate::tls::rejected::{Failure, Rejection};

impl Rejection for Rustls {
    /// `ClientConnection::new` and the ClientHello, the server's first
    /// flight, the client failing on it in `process_new_packets` (rustls
    /// queues the fatal alert), `write_tls` of the alert, and the server
    /// failing on it.
    fn reject(configs: &Configs, accepting: Accepting) -> Result<(Pair, Failure), HarnessError> {
        let mut pair = configs.connect(accepting)?;
        pair.client
            .flush(&mut pair.client_end)
            .context("client writing its ClientHello")?;
        pair.server.deliver(&mut pair.server_end)?;
        pair.server
            .flush(&mut pair.server_end)
            .context("server writing its flight")?;
        let client = match pair.client.deliver_raw(&mut pair.client_end) {
            Ok(()) => return Err("the client accepted the server's flight".into()),
            Err(error) => error.to_string(),
        };
        pair.client
            .flush(&mut pair.client_end)
            .context("client writing its alert")?;
        let (server, alert) = match pair.server.deliver_raw(&mut pair.server_end) {
            Ok(()) => return Err("the server read the client's alert without failing".into()),
            Err(error) => (error.to_string(), api::received_alert(&error)),
        };
        Ok((
            pair,
            Failure {
                client,
                server,
                alert,
            },
        ))
    }
}
