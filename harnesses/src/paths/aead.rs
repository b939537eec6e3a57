//! AEAD paths: one library call sealing or opening a buffer.

use std::fmt;

use crate::common::pins::Cipher;

use super::record::Direction;
use super::InvalidPath;

/// An AEAD path: calls on `message_len`-byte messages, repeated over
/// [`Aead::RUN_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Aead {
    pub cipher: Cipher,
    pub direction: Direction,
    pub message_len: usize,
}

impl Aead {
    /// Plaintext bytes one run processes, whatever the size of one call: a
    /// run of `message_len`-byte messages makes `RUN_BYTES / message_len`
    /// calls.
    ///
    /// One 16-byte seal is about 900 instructions of aws-lc. Around a single
    /// call, the harness's own glue (moving the buffer and tag in and out of
    /// `run`, the measurement loop) was 30-45 instructions, 1-3.4 % of the
    /// region, too much to call the count aws-lc's. Repeating the call over
    /// 16 KiB of independent messages spreads that fixed glue over many calls
    /// and leaves the few instructions of loop per call (under 1 %; `regress
    /// compare` prints the measured share). Every call is the same call on
    /// the same bytes, so the count is exactly `operations * per-call cost`
    /// plus the glue, and instructions per call and per byte are reported.
    pub const RUN_BYTES: usize = 16384;

    /// The message lengths the paths are measured with: from a tiny message
    /// to a full TLS record.
    pub const MESSAGE_LENS: [usize; 6] = [16, 64, 256, 1024, 8192, 16384];

    /// Calls one run makes: as many messages as fit in [`Aead::RUN_BYTES`].
    pub const fn operations(&self) -> usize {
        Aead::RUN_BYTES / self.message_len
    }

    pub(super) fn validate(&self) -> Result<(), InvalidPath> {
        if !self.cipher.is_aead() {
            return Err(InvalidPath::NotAnAead {
                cipher: self.cipher,
            });
        }
        if self.message_len == 0 || !Aead::RUN_BYTES.is_multiple_of(self.message_len) {
            return Err(InvalidPath::AeadMessageLength {
                message_len: self.message_len,
            });
        }
        Ok(())
    }
}

/// `aead_<cipher>_<seal|open>_<message_len>`.
impl fmt::Display for Aead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let direction = match self.direction {
            Direction::Seal => "seal",
            Direction::Open => "open",
        };
        write!(
            f,
            "aead_{}_{direction}_{}",
            self.cipher.label(),
            self.message_len
        )
    }
}
