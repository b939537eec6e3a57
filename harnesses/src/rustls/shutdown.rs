//! rustls's shutdown ([`Closure`]): `send_close_notify` on both sides
//! (rustls 0.23; not yet written for 0.24's API, where the registry says
//! the path does not apply).

use regress_measure::HarnessError;

use super::tls::Rustls;
use super::transport::Pair;
use crate::common::error::Context as _;
use crate::tls::shutdown::Closure;

impl Closure for Rustls {
    /// The client queuing its close_notify and `write_tls`, the server's
    /// `read_tls` and `process_new_packets` of it, then the same the other
    /// way.
    fn shutdown(pair: &mut Pair) -> Result<(bool, bool), HarnessError> {
        pair.client.send_close_notify();
        pair.client
            .flush(&mut pair.client_end)
            .context("client writing its close_notify")?;
        pair.server.deliver(&mut pair.server_end)?;
        let server = pair
            .server
            .peer_has_closed()
            .context("server processing the close_notify")?;
        pair.server.send_close_notify();
        pair.server
            .flush(&mut pair.server_end)
            .context("server writing its close_notify")?;
        pair.client.deliver(&mut pair.client_end)?;
        let client = pair
            .client
            .peer_has_closed()
            .context("client processing the close_notify")?;
        Ok((client, server))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::shutdown::{check_closed, Closed, CLOSED};
    use crate::tls::testing;

    /// An established connection reports no close_notify on either side,
    /// and fails the check.
    #[test]
    fn an_open_connection_is_not_closed() {
        let (_, mut pair) = testing::one_run::<Rustls>(CLOSED);
        let received = (
            pair.client.peer_has_closed().expect("client"),
            pair.server.peer_has_closed().expect("server"),
        );
        assert_eq!(received, (false, false));
        assert!(check_closed::<Rustls>(&Closed { pair, received }).is_err());
    }
}
