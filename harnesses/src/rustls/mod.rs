//! rustls harnesses (being written).
