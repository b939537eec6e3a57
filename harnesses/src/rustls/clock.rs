//! A clock that never moves.
//!
//! rustls asks its configs' [`TimeProvider`] for the time whenever it
//! validates a certificate (both sides), issues a session ticket (its
//! creation time) and judges a ticket's age on resumption. A real clock would
//! make counts depend on the day the measurement runs, so every config the
//! harnesses build, and the x509 verification, use [`FixedTime`].

use std::time::Duration;

use ::rustls::pki_types::UnixTime;
use ::rustls::time_provider::TimeProvider;

/// 2026-01-01T00:00:00Z, in seconds since the Unix epoch: inside the test
/// certificates' validity (2025-01-01 to 2125-01-01). The same instant the
/// s2n-tls harnesses use (a test keeps the two equal).
pub const FIXED_UNIX_SECS: u64 = 1_767_225_600;

/// The fixed time as a [`UnixTime`], for APIs that take one directly
/// (`ServerCertVerifier::verify_server_cert`).
pub fn fixed_now() -> UnixTime {
    UnixTime::since_unix_epoch(Duration::from_secs(FIXED_UNIX_SECS))
}

/// A [`TimeProvider`] stuck at [`FIXED_UNIX_SECS`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedTime;

impl TimeProvider for FixedTime {
    fn current_time(&self) -> Option<UnixTime> {
        Some(fixed_now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_time_is_new_year_2026_like_the_s2n_tls_clock() {
        assert_eq!(FIXED_UNIX_SECS, (56 * 365 + 14) * 86_400);
        assert_eq!(
            FIXED_UNIX_SECS,
            crate::s2n_tls::clock::FIXED_WALL_CLOCK_SECS
        );
        assert_eq!(FixedTime.current_time(), Some(fixed_now()));
        assert_eq!(fixed_now().as_secs(), FIXED_UNIX_SECS);
    }
}
