//! s2n-tls's shutdown ([`Closure`]): `s2n_shutdown` on both sides.

use std::task::Poll;

use regress_measure::HarnessError;

use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::error::Context as _;
use crate::tls::shutdown::Closure;

/// One `poll_shutdown`: `Ok(true)` once s2n-tls has sent its close_notify
/// and received the peer's (`s2n_shutdown` completes only then),
/// `Ok(false)` while it waits for the peer's.
fn poll_shutdown(
    conn: &mut s2n_tls::connection::Connection,
    what: &'static str,
) -> Result<bool, HarnessError> {
    match conn.poll_shutdown() {
        Poll::Ready(Ok(_)) => Ok(true),
        Poll::Pending => Ok(false),
        Poll::Ready(Err(error)) => Err(error).context(what),
    }
}

impl Closure for S2nTls {
    /// The client's `poll_shutdown` (sends its close_notify, then waits),
    /// the server's (reads it, sends its own), the client's again (reads the
    /// server's).
    fn shutdown(pair: &mut Pair) -> Result<(bool, bool), HarnessError> {
        let first = poll_shutdown(&mut pair.client, "client shutdown")?;
        let server = poll_shutdown(&mut pair.server, "server shutdown")?;
        let client = first || poll_shutdown(&mut pair.client, "client shutdown")?;
        Ok((client, server))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::shutdown::{check_closed, Closed, CLOSED};
    use crate::tls::testing;

    /// A client's shutdown alone waits for the server's close_notify, and a
    /// pair with only one side closed fails the check.
    #[test]
    fn one_sided_shutdown_is_not_closed() {
        let (_, mut pair) = testing::one_run::<S2nTls>(CLOSED);
        assert!(!poll_shutdown(&mut pair.client, "client").expect("sent"));
        let closed = Closed {
            pair,
            received: (false, false),
        };
        assert!(check_closed::<S2nTls>(&closed).is_err());
    }
}
