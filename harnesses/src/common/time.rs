//! The one instant every harness's clocks are stuck at.
//!
//! TLS libraries read the time to validate certificates and to issue, age
//! and accept session tickets. A real clock would make counts depend on the
//! day the measurement runs (certificate lifetimes, ticket ages, ticket-key
//! choice), so every library is given this instant instead: s2n-tls through
//! fixed wall and monotonic clocks, rustls through a `TimeProvider`,
//! OpenSSL as its verification time (`X509_VERIFY_PARAM_set_time`; OpenSSL
//! 3.0 has no clock hook for the rest of TLS, see its session resumption).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 2026-01-01T00:00:00Z in seconds since the Unix epoch: inside the test
/// certificates' validity (2025-01-01 to 2125-01-01).
pub const FIXED_UNIX_SECS: u64 = 1_767_225_600;

/// [`FIXED_UNIX_SECS`] as a [`SystemTime`].
pub fn fixed_system_time() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(FIXED_UNIX_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_time_is_new_year_2026() {
        // 56 years of 365 days plus the 14 leap days from 1972 to 2024.
        assert_eq!(FIXED_UNIX_SECS, (56 * 365 + 14) * 86_400);
        assert_eq!(
            fixed_system_time().duration_since(UNIX_EPOCH).ok(),
            Some(Duration::from_secs(FIXED_UNIX_SECS))
        );
    }
}
