//! OpenSSL's shutdown ([`Closure`]): `SSL_shutdown` on both sides.

use openssl::ssl::{ShutdownResult, ShutdownState, SslStream};
use regress_measure::HarnessError;

use super::tls::OpenSsl;
use super::transport::Pair;
use crate::common::error::Context as _;
use crate::common::transport::Endpoint;
use crate::tls::shutdown::Closure;

/// Whether `stream` has received its peer's close_notify
/// (`SSL_get_shutdown`'s `SSL_RECEIVED_SHUTDOWN`).
fn received(stream: &mut SslStream<Endpoint>) -> bool {
    stream.get_shutdown().contains(ShutdownState::RECEIVED)
}

impl Closure for OpenSsl {
    /// The client's `SSL_shutdown` (sends its close_notify: 0), the
    /// server's two (the first sends its own, the second reads the
    /// client's: 1), and the client's second (reads the server's: 1).
    fn shutdown(pair: &mut Pair) -> Result<(bool, bool), HarnessError> {
        pair.client.shutdown().context("client SSL_shutdown")?;
        if pair.server.shutdown().context("server SSL_shutdown")? == ShutdownResult::Sent {
            pair.server
                .shutdown()
                .context("server SSL_shutdown reading the client's close_notify")?;
        }
        if !received(&mut pair.client) {
            pair.client
                .shutdown()
                .context("client SSL_shutdown reading the server's close_notify")?;
        }
        Ok((received(&mut pair.client), received(&mut pair.server)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::shutdown::{check_closed, Closed, CLOSED};
    use crate::tls::testing;

    /// After the client's close_notify alone, the server has received it
    /// only once it reads, the client has received nothing, and the check
    /// fails.
    #[test]
    fn one_sided_shutdown_is_not_closed() {
        let (_, mut pair) = testing::one_run::<OpenSsl>(CLOSED);
        assert_eq!(pair.client.shutdown().expect("sent"), ShutdownResult::Sent);
        assert!(!received(&mut pair.client) && !received(&mut pair.server));
        let received = (received(&mut pair.client), received(&mut pair.server));
        let closed = Closed { pair, received };
        assert!(check_closed::<OpenSsl>(&closed).is_err());
    }
}
