//! The system OpenSSL, initialised for measurement.

use std::sync::OnceLock;

use regress_measure::{HarnessError, RuntimeLibrary};

use super::{ffi, rng};
use crate::common::error::ensure;
use crate::common::pins::NamedGroup;

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

/// The first OpenSSL release with the post-quantum hybrid X25519MLKEM768
/// (ML-KEM arrived in 3.5), as `OPENSSL_VERSION_NUMBER` writes it.
const FIRST_WITH_MLKEM: i64 = 0x3050_0000;

/// Why the linked OpenSSL cannot negotiate `group`, if it cannot: its
/// version, read at run time (the library, not the crate, decides).
pub fn unsupported_group(group: NamedGroup) -> Option<String> {
    let number = openssl::version::number();
    (group.is_post_quantum() && number < FIRST_WITH_MLKEM).then(|| {
        format!(
            "{} has no {} (ML-KEM arrived in OpenSSL 3.5)",
            openssl::version::version(),
            group.name()
        )
    })
}

/// The system OpenSSL, for every harness's
/// [`Harness::runtime_libraries`](regress_measure::Harness::runtime_libraries):
/// its version string (`Cargo.lock` only knows the crate versions, and the
/// counts belong to the library) and the CPU features its assembly
/// dispatches on. OpenSSL is initialised first, so that reading its
/// settings is never its first call ([`init`]).
pub fn runtime_libraries() -> Vec<RuntimeLibrary> {
    let cpu = init()
        .ok()
        .and_then(|()| ffi::cpu_settings())
        .and_then(|settings| cpu_words(&settings));
    vec![RuntimeLibrary {
        name: "libssl".into(),
        version: openssl::version::version().into(),
        cpu,
    }]
}

/// The CPUID words in OpenSSL's settings
/// (`OPENSSL_ia32cap=0x<words 1,0>:0x<words 3,2> ...`), in
/// [`regress_measure::cpu::ids`]'s order: leaf 1's ECX and EDX, leaf 7's
/// EBX and ECX. OpenSSL keeps leaf 1's EDX in its word 0 and ECX in word
/// 1, leaf 7's EBX in word 2 and ECX in word 3.
fn cpu_words(settings: &str) -> Option<[u32; 4]> {
    let vector = settings.strip_prefix("OPENSSL_ia32cap=")?;
    let vector = vector.split_whitespace().next()?;
    let (first, second) = vector.split_once(':')?;
    let parse = |text: &str| u64::from_str_radix(text.strip_prefix("0x")?, 16).ok();
    let (first, second) = (parse(first)?, parse(second)?);
    let low = |value: u64| value as u32;
    let high = |value: u64| (value >> 32) as u32;
    Some([high(first), low(first), low(second), high(second)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_library_is_the_system_openssl() {
        let libraries = runtime_libraries();
        assert_eq!(libraries.len(), 1);
        assert_eq!(libraries[0].name, "libssl");
        assert!(
            libraries[0].version.starts_with("OpenSSL 3."),
            "{libraries:?}"
        );
        // x86_64 builds of OpenSSL have assembly, and say what it sees.
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = libraries[0].cpu.expect("OpenSSL's CPU settings");
            let sse2 = 1 << 26;
            assert_ne!(cpu[1] & sse2, 0, "every x86_64 CPU has SSE2: {cpu:x?}");
        }
    }

    /// OpenSSL's words land in `cpu::ids` order; the `env:` tail is not
    /// part of the vector.
    #[test]
    fn settings_are_read_into_cpuid_order() {
        let words = cpu_words("OPENSSL_ia32cap=0xfdfa3201078bffff:0x405fc6f1bf07ab env:~0x2:~0x0");
        assert_eq!(words, Some([0xfdfa3201, 0x078bffff, 0xf1bf07ab, 0x405fc6]));
        assert_eq!(cpu_words("OPENSSL_ia32cap=0x1"), None);
        assert_eq!(cpu_words("something else"), None);
        assert_eq!(cpu_words("OPENSSL_ia32cap=0xzz:0x0"), None);
    }
}
