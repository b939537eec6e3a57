//! The application data every record path moves, and the check that it
//! arrived.
//!
//! One run of a record path sends [`RECORD_BYTES`] from client to server.
//! The payload is deterministic and non-repeating-looking (xorshift64), so
//! a lost, duplicated or reordered record changes the received bytes and
//! [`check_received`] notices, naming the first byte that differs.

use regress_measure::HarnessError;

use super::error::ensure;

/// Application bytes one run of a record path moves: 1 MiB.
pub const RECORD_BYTES: usize = 1 << 20;

/// The payload of every record path: [`RECORD_BYTES`] bytes of xorshift64.
pub fn payload() -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(RECORD_BYTES);
    while out.len() < RECORD_BYTES {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let take = (RECORD_BYTES - out.len()).min(8);
        out.extend_from_slice(&state.to_le_bytes()[..take]);
    }
    out
}

/// Checks that the server received exactly `sent`: `received` holds what it
/// read, `got` how many bytes its reads returned.
pub fn check_received(sent: &[u8], received: &[u8], got: usize) -> Result<(), HarnessError> {
    ensure(got == sent.len() && received.len() >= got, || {
        format!(
            "the server received {got} bytes, the client sent {}",
            sent.len()
        )
    })?;
    match received.iter().zip(sent).position(|(a, b)| a != b) {
        Some(at) => Err(format!("received data differs from what was sent at byte {at}").into()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_is_deterministic_and_not_constant() {
        let a = payload();
        assert_eq!(a.len(), RECORD_BYTES);
        assert_eq!(a, payload());
        assert_ne!(a[..16384], a[16384..32768]);
    }

    #[test]
    fn check_rejects_a_flipped_byte_and_names_it() {
        let sent = payload();
        let mut received = sent.clone();
        check_received(&sent, &received, RECORD_BYTES).expect("intact");
        received[RECORD_BYTES / 2] ^= 0x01;
        let error = check_received(&sent, &received, RECORD_BYTES).expect_err("flipped");
        assert!(error.to_string().contains("524288"), "{error}");
    }

    #[test]
    fn check_rejects_a_short_or_long_transfer() {
        let sent = payload();
        for got in [0, RECORD_BYTES - 1, RECORD_BYTES + 1] {
            let error = check_received(&sent, &sent, got).expect_err("wrong length");
            assert!(error.to_string().contains(&got.to_string()), "{error}");
        }
    }
}
