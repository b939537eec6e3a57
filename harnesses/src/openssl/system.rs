//! The system OpenSSL, initialised for measurement.

use std::sync::OnceLock;

use regress_measure::HarnessError;

use super::{ffi, rng};
use crate::common::error::ensure;

/// Initialises OpenSSL for measurement, once per process: without reading
/// `openssl.cnf`, and with the deterministic RNG ([`rng::install`]).
///
/// Every harness's `setup` calls it first, before any other OpenSSL call, so
/// the library's one-time initialisation stays out of every count and no
/// random byte is ever drawn from OpenSSL's own DRBG. By default OpenSSL
/// reads the machine's `openssl.cnf`, which can load providers and apply
/// system-wide `ssl_conf` settings (some distributions set a `CipherString`
/// or a minimum protocol) to every `SSL_CTX_new`: counts would depend on a
/// file outside the project. (This machine's Debian 12 file sets nothing of
/// the kind.)
pub fn init() -> Result<(), HarnessError> {
    static LIBRARY: OnceLock<bool> = OnceLock::new();
    let initialised = *LIBRARY.get_or_init(|| {
        let options = ffi::OPENSSL_INIT_NO_LOAD_CONFIG
            | openssl_sys::OPENSSL_INIT_LOAD_SSL_STRINGS
            | openssl_sys::OPENSSL_INIT_NO_ATEXIT;
        // SAFETY: OPENSSL_init_ssl is thread-safe and may be called any
        // number of times; null settings mean the defaults. Running it
        // before the crate's own `init` makes "no config" the outcome of
        // OpenSSL's one-time config step, which later calls then skip.
        let ok = unsafe { openssl_sys::OPENSSL_init_ssl(options, std::ptr::null()) };
        openssl::init();
        ok == 1
    });
    ensure(initialised, || "OPENSSL_init_ssl failed".to_owned())?;
    rng::install()
}

/// The system OpenSSL's version string, for every harness's
/// [`Harness::runtime_libraries`](regress_measure::Harness::runtime_libraries):
/// `Cargo.lock` only knows the crate versions, and the counts belong to the
/// library.
pub fn runtime_libraries() -> Vec<(String, String)> {
    vec![("libssl".into(), openssl::version::version().into())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_library_is_the_system_openssl() {
        let libraries = runtime_libraries();
        assert_eq!(libraries.len(), 1);
        assert_eq!(libraries[0].0, "libssl");
        assert!(libraries[0].1.starts_with("OpenSSL 3."), "{libraries:?}");
    }
}
