//! openssl harnesses (being written).
