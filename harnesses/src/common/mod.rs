//! What the harnesses of every library share, so that it exists once:
//! errors with context, the test PKIs, the fixed time, the record payload,
//! the in-memory transport and the fairness pins.

pub mod error;
pub mod payload;
pub mod pins;
pub mod pki;
pub mod time;
pub mod transport;
