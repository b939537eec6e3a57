//! The linked OpenSSL, initialised for measurement, and what it is.
//!
//! By default the harnesses link an OpenSSL built from source (the
//! `vendored-openssl` feature: `openssl-src`, pinned in `Cargo.lock`, built
//! statically with line tables); with `--no-default-features`, the
//! system's libssl. [`runtime_libraries`] tells the two apart in the
//! fingerprint, and [`supports_mlkem`] says what the linked one can run.

use std::sync::OnceLock;

use regress_measure::{HarnessError, RuntimeLibrary};

use super::{ffi, rng};
use crate::common::error::ensure;
use crate::common::pins::NamedGroup;
use crate::paths::NotApplicable;

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

/// How the linked OpenSSL was built, as `harnesses/build.rs` learnt it from
/// `openssl-sys`: `vendored` (from source by `openssl-src`, linked
/// statically) or `system` (the machine's libssl, found by `pkg-config`).
pub const BUILD: &str = env!("REGRESS_OPENSSL_BUILD");

/// The first OpenSSL release with ML-KEM, and so with the hybrid
/// X25519MLKEM768 key exchange, as an `OPENSSL_VERSION_NUMBER`
/// (`0xMNN00PP0`: major, minor, patch).
const FIRST_WITH_MLKEM: i64 = 0x3050_0000;

/// The first OpenSSL release that negotiates the finite-field groups of
/// RFC 7919 (`ffdhe2048`, ...) by name, as an `OPENSSL_VERSION_NUMBER`.
const FIRST_WITH_FFDHE_GROUPS: i64 = 0x3000_0000;

/// Whether the linked OpenSSL can negotiate the X25519MLKEM768 group: it is
/// OpenSSL 3.5 or later, as it says at run time (`OpenSSL_version_num`), so
/// a system libssl is judged by what is loaded, not by the headers it was
/// built against.
pub fn supports_mlkem() -> bool {
    openssl::version::number() >= FIRST_WITH_MLKEM
}

/// Why the linked OpenSSL cannot negotiate `group`, if it cannot: its
/// version, read at run time ([`supports_mlkem`]).
pub fn unsupported_group(group: NamedGroup) -> Option<NotApplicable> {
    let version = openssl::version::number();
    let arrived = if group.is_post_quantum() && version < FIRST_WITH_MLKEM {
        "ML-KEM arrived in OpenSSL 3.5"
    } else if group.is_finite_field() && version < FIRST_WITH_FFDHE_GROUPS {
        "the finite-field groups of RFC 7919 arrived in OpenSSL 3.0"
    } else {
        return None;
    };
    Some(NotApplicable::Lacks {
        linked: openssl::version::version().to_owned(),
        what: group.name(),
        arrived,
    })
}

/// Why the linked OpenSSL cannot take a TLS 1.3 key share of RFC 7919's
/// `what` (`"ffdhe3072"`), if it cannot: its version, as
/// [`unsupported_group`] judges the finite-field groups.
pub fn lacks_finite_field_groups(what: &'static str) -> Option<NotApplicable> {
    let version = openssl::version::number();
    (version < FIRST_WITH_FFDHE_GROUPS).then(|| NotApplicable::Lacks {
        linked: openssl::version::version().to_owned(),
        what,
        arrived: "the finite-field groups of RFC 7919 arrived in OpenSSL 3.0",
    })
}

/// The linked OpenSSL, for every harness's
/// [`Harness::runtime_libraries`](regress_measure::Harness::runtime_libraries):
/// `libssl`, its version string (`Cargo.lock` only knows the crate
/// versions, and the counts belong to the library) and the CPU features its
/// assembly dispatches on; and `libssl-build`, how it was built
/// ([`build_description`]), so that a system libssl's count never matches
/// a baseline of the one built from source, and the gate names the
/// difference. OpenSSL is initialised first, so that reading its settings
/// is never its first call ([`init`]).
pub fn runtime_libraries() -> Vec<RuntimeLibrary> {
    let cpu = init()
        .ok()
        .and_then(|()| ffi::cpu_settings())
        .and_then(|settings| cpu_words(&settings));
    vec![
        RuntimeLibrary {
            name: "libssl".into(),
            version: openssl::version::version().into(),
            cpu,
        },
        RuntimeLibrary {
            name: "libssl-build".into(),
            version: build_description(
                BUILD,
                openssl::version::platform(),
                openssl::version::c_flags(),
            ),
            cpu: None,
        },
    ]
}

/// `vendored, linux-x86_64, gcc -fPIC ... -O3 ...`: the kind of build, and
/// the platform and compiler command line the library reports
/// (`OPENSSL_PLATFORM`, `OPENSSL_CFLAGS`, without their `platform: ` and
/// `compiler: ` labels). Not `OPENSSL_BUILT_ON`: a date, which would make
/// every rebuild a new fingerprint.
fn build_description(build: &str, platform: &str, c_flags: &str) -> String {
    let platform = platform.strip_prefix("platform: ").unwrap_or(platform);
    let c_flags = c_flags.strip_prefix("compiler: ").unwrap_or(c_flags);
    format!("{build}, {platform}, {c_flags}")
}

/// The CPUID words in OpenSSL's settings
/// (`OPENSSL_ia32cap=0x<words 1,0>:0x<words 3,2> ...`), in
/// [`regress_measure::cpu::ids`]'s order: leaf 1's ECX and EDX, leaf 7's
/// EBX and ECX. OpenSSL keeps leaf 1's EDX in its word 0 and ECX in word
/// 1, leaf 7's EBX in word 2 and ECX in word 3.
fn cpu_words(settings: &str) -> Option<[u32; 4]> {
    let vector = settings.strip_prefix("OPENSSL_ia32cap=")?;
    let vector = vector.split_whitespace().next()?;
    // 3.0 prints two values; 3.4 and later five (leaf 7's EDX, leaf 7.1
    // and AVX10 follow), of which these words are the first two.
    let mut values = vector.split(':');
    let (first, second) = (values.next()?, values.next()?);
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
    fn runtime_libraries_name_the_linked_openssl_and_its_build() {
        let libraries = runtime_libraries();
        assert_eq!(libraries.len(), 2);
        assert_eq!(libraries[0].name, "libssl");
        assert!(
            libraries[0].version.starts_with("OpenSSL 3."),
            "{libraries:?}"
        );
        assert_eq!(libraries[1].name, "libssl-build");
        let build = &libraries[1].version;
        assert!(build.starts_with(&format!("{BUILD}, ")), "{build}");
        // The compiler command line, with OpenSSL's own optimisation
        // level last when built from source (scripts/openssl-configure).
        assert!(build.contains(" -D"), "{build}");
        if BUILD == "vendored" {
            assert!(
                libraries[0].version.starts_with("OpenSSL 3.5."),
                "{libraries:?}"
            );
            let last_level = build
                .split_whitespace()
                .rfind(|flag| flag.starts_with("-O"));
            assert_eq!(last_level, Some("-O3"), "{build}");
            assert!(
                build.split_whitespace().any(|flag| flag.starts_with("-g")),
                "{build}"
            );
        }
        // x86_64 builds of OpenSSL have assembly, and say what it sees.
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = libraries[0].cpu.expect("OpenSSL's CPU settings");
            let sse2 = 1 << 26;
            assert_ne!(cpu[1] & sse2, 0, "every x86_64 CPU has SSE2: {cpu:x?}");
        }
    }

    /// ML-KEM is there exactly from OpenSSL 3.5 on, by the version the
    /// loaded library reports.
    #[test]
    fn mlkem_support_follows_the_run_time_version() {
        let version = openssl::version::version();
        let minor_at_least_5 = version
            .strip_prefix("OpenSSL 3.")
            .and_then(|rest| rest.split('.').next())
            .and_then(|minor| minor.parse::<u32>().ok())
            .is_some_and(|minor| minor >= 5);
        let later_major = !version.starts_with("OpenSSL 3.") && !version.starts_with("OpenSSL 1.");
        assert_eq!(
            supports_mlkem(),
            minor_at_least_5 || later_major,
            "{version}"
        );
        if BUILD == "vendored" {
            assert!(supports_mlkem(), "{version}");
        }
    }

    #[test]
    fn build_description_drops_the_labels() {
        assert_eq!(
            build_description(
                "system",
                "platform: debian-amd64",
                "compiler: gcc -O2 -DNDEBUG"
            ),
            "system, debian-amd64, gcc -O2 -DNDEBUG"
        );
    }

    /// OpenSSL's words land in `cpu::ids` order; the `env:` tail is not
    /// part of the vector.
    #[test]
    fn settings_are_read_into_cpuid_order() {
        let words = cpu_words("OPENSSL_ia32cap=0xfdfa3201078bffff:0x405fc6f1bf07ab env:~0x2:~0x0");
        assert_eq!(words, Some([0xfdfa3201, 0x078bffff, 0xf1bf07ab, 0x405fc6]));
        let five = "OPENSSL_ia32cap=0xfdfa3201078bffff:0x405fc6f1bf07ab:0x0:0x0:0x0 env:~0x2";
        assert_eq!(cpu_words(five), words);
        assert_eq!(cpu_words("OPENSSL_ia32cap=0x1"), None);
        assert_eq!(cpu_words("something else"), None);
        assert_eq!(cpu_words("OPENSSL_ia32cap=0xzz:0x0"), None);
    }
}
