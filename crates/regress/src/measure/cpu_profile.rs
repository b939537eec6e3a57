//! CPU profiles: which of the CPU's features the TLS libraries may use.
//!
//! aws-lc and OpenSSL choose their assembly at run time from CPUID. A CI
//! machine (and Valgrind's CPU) runs one set of those paths; the SSSE3 AES
//! code, the non-AVX2 bignum and ChaCha20 code and the code of CPUs
//! without any extension are never measured unless the libraries are told
//! to ignore features. Both honour the `OPENSSL_ia32cap` mask, which every
//! child gets anyway (it hides RDRAND, [`RDRAND`]); a profile hides more.
//!
//! A profile is part of the fingerprint and of every output's folder, so
//! baselines are kept per profile and never compared across profiles.
//!
//! A mask a library ignores would measure the default paths under another
//! profile's name, so every measurement checks that the profile took
//! effect ([`CpuProfile::check`]): OpenSSL says which features it holds
//! (its CPU settings, read by the child), and aws-lc, linked with its
//! symbols, shows which implementation ran (a function that exists only in
//! a hidden feature's path must not have run).
//!
//! What a profile does not reach: glibc chooses its string functions by
//! its own CPU detection (`__memcpy_avx_unaligned_erms`), and Rust code by
//! `is_x86_feature_detected!`; the profiles are about the TLS libraries'
//! own dispatch.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use regress_profile::cachegrind_out;

use serde::{Deserialize, Serialize};

use super::{MeasureError, Result};
use crate::harness_name::HarnessName;

/// CPUID bits, in [`regress_measure::cpu::ids`]'s order: leaf 1's ECX and
/// EDX, leaf 7's EBX and ECX.
pub type CpuidWords = [u32; 4];

/// RDRAND (leaf 1, ECX bit 30), hidden from every child: Valgrind executes
/// it on the real CPU, so it returns real randomness.
pub const RDRAND: CpuidWords = [1 << 30, 0, 0, 0];

/// A named set of CPU features hidden from aws-lc and OpenSSL.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum CpuProfile {
    /// What Valgrind's CPU offers (SSE2 to AVX2, AES-NI, PCLMULQDQ, BMI1/2,
    /// MOVBE; no SHA extensions, ADX or AVX-512), RDRAND hidden.
    #[default]
    Default,
    /// No AVX, AVX2 or FMA: the SSE code paths, as on CPUs before 2011 and
    /// on VMs that do not pass AVX through.
    NoAvx,
    /// No AES-NI or carry-less multiplication: AES and GHASH in constant-
    /// time software (SSSE3 vector permutes where there is SSSE3).
    NoAesni,
    /// Nothing beyond x86-64's SSE2: every extension of CPUID leaf 1's ECX
    /// and of leaf 7 hidden. The libraries' generic x86-64 assembly still
    /// runs; only a build without assembly removes it, and that is another
    /// program, not a run-time profile.
    Baseline,
}

/// How a function name shows that an implementation ran.
#[derive(Debug, Clone, Copy)]
enum Pattern {
    Prefix(&'static str),
    Suffix(&'static str),
    Contains(&'static str),
}

impl Pattern {
    fn matches(self, name: &str) -> bool {
        match self {
            Pattern::Prefix(prefix) => name.starts_with(prefix),
            Pattern::Suffix(suffix) => name.ends_with(suffix),
            Pattern::Contains(part) => name.contains(part),
        }
    }
}

/// aws-lc's implementations that need AVX (its `*_avx`/`*_avx2` assembly,
/// and the AVX+MOVBE stitched AES-GCM).
const AVX_CODE: &[Pattern] = &[
    Pattern::Suffix("_avx"),
    Pattern::Suffix("_avx2"),
    Pattern::Suffix("_avx512"),
    Pattern::Contains("_avx2_"),
    Pattern::Prefix("aesni_gcm_"),
    Pattern::Prefix("_aesni_ctr32_ghash"),
];

/// aws-lc's implementations that need AES-NI or PCLMULQDQ.
const AESNI_CODE: &[Pattern] = &[
    Pattern::Prefix("aes_hw_"),
    Pattern::Prefix("aesni_"),
    Pattern::Prefix("_aesni_"),
    Pattern::Suffix("_clmul"),
    Pattern::Prefix("gcm_init_avx"),
    Pattern::Prefix("gcm_ghash_avx"),
    Pattern::Prefix("gcm_gmult_avx"),
];

/// aws-lc's implementations that need an extension beyond SSE2 other than
/// the above: SSSE3, SSE4.1, the SHA extensions, BMI2 and ADX.
const EXTENSION_CODE: &[Pattern] = &[
    Pattern::Prefix("vpaes_"),
    Pattern::Prefix("_vpaes_"),
    Pattern::Suffix("_ssse3"),
    Pattern::Contains("_ssse3_"),
    Pattern::Suffix("_sse41"),
    Pattern::Suffix("_shaext"),
    Pattern::Suffix("_adx"),
    Pattern::Contains("mulx"),
    Pattern::Contains("sqrx"),
    Pattern::Suffix("_montx"),
];

impl CpuProfile {
    /// Every profile, the default first.
    pub const ALL: [CpuProfile; 4] = [
        CpuProfile::Default,
        CpuProfile::NoAvx,
        CpuProfile::NoAesni,
        CpuProfile::Baseline,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CpuProfile::Default => "default",
            CpuProfile::NoAvx => "no-avx",
            CpuProfile::NoAesni => "no-aesni",
            CpuProfile::Baseline => "baseline",
        }
    }

    /// One line for tables and `--help`.
    pub fn summary(self) -> &'static str {
        match self {
            CpuProfile::Default => "what Valgrind's CPU offers (SSE2 to AVX2, AES-NI, BMI2)",
            CpuProfile::NoAvx => "no AVX, AVX2 or FMA",
            CpuProfile::NoAesni => "no AES-NI or PCLMULQDQ",
            CpuProfile::Baseline => "nothing beyond x86-64's SSE2",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == CpuProfile::Default
    }

    /// The profile named `text` (one of [`CpuProfile::ALL`]'s names).
    pub fn parse(text: &str) -> Result<CpuProfile> {
        let text = text.trim();
        CpuProfile::ALL
            .into_iter()
            .find(|profile| profile.name() == text)
            .ok_or_else(|| MeasureError::UnknownCpuProfile {
                name: text.chars().take(40).collect(),
                known: CpuProfile::names(),
            })
    }

    /// The profile [`crate::env::CPU`] names; the default when it is unset or
    /// empty.
    pub fn from_env() -> Result<CpuProfile> {
        match std::env::var(crate::env::CPU) {
            Ok(text) if !text.trim().is_empty() => CpuProfile::parse(&text),
            _ => Ok(CpuProfile::Default),
        }
    }

    /// Every profile's name, for messages.
    pub fn names() -> String {
        CpuProfile::ALL.map(CpuProfile::name).join(", ")
    }

    /// The folder of this profile's outputs inside `perf_outputs/`; `None`
    /// for the default, whose outputs are `perf_outputs/` itself.
    pub fn output_folder(self) -> Option<String> {
        (!self.is_default()).then(|| format!("cpu-{}", self.name()))
    }

    /// The CPUID bits this profile hides (RDRAND aside).
    pub fn hidden(self) -> CpuidWords {
        const AVX: u32 = 1 << 28;
        const FMA: u32 = 1 << 12;
        const AES: u32 = 1 << 25;
        const PCLMULQDQ: u32 = 1 << 1;
        const AVX2: u32 = 1 << 5;
        const AVX512F: u32 = 1 << 16;
        const VAES: u32 = 1 << 9;
        const VPCLMULQDQ: u32 = 1 << 10;
        match self {
            CpuProfile::Default => [0; 4],
            CpuProfile::NoAvx => [AVX | FMA, 0, AVX2 | AVX512F, VAES | VPCLMULQDQ],
            CpuProfile::NoAesni => [AES | PCLMULQDQ, 0, 0, VAES | VPCLMULQDQ],
            CpuProfile::Baseline => [u32::MAX, 0, u32::MAX, u32::MAX],
        }
    }

    /// `OPENSSL_ia32cap` for a child of this profile that must also hide
    /// `also` (for a native child: what the host has and Valgrind's CPU
    /// does not).
    pub fn ia32cap(self, also: CpuidWords) -> String {
        ia32cap(union(union(self.hidden(), RDRAND), also))
    }

    /// aws-lc's implementation functions that must not run under this
    /// profile.
    fn forbidden(self) -> Vec<Pattern> {
        match self {
            CpuProfile::Default => Vec::new(),
            CpuProfile::NoAvx => AVX_CODE.to_vec(),
            CpuProfile::NoAesni => AESNI_CODE.to_vec(),
            CpuProfile::Baseline => [AVX_CODE, AESNI_CODE, EXTENSION_CODE].concat(),
        }
    }

    /// Checks that the profile reached the libraries: no run-time library
    /// that says what it dispatches on (`library_cpu`, from the child)
    /// holds a hidden feature, and no function of `functions` (the counted
    /// run's `(file, function)` pairs, from its profile) is an aws-lc
    /// implementation of a hidden feature. Only aws-lc's functions are
    /// looked at (its symbols carry its prefix, its files its folder):
    /// glibc's `__memchr_avx2` runs whatever the profile.
    pub fn check<'a>(
        self,
        functions: impl IntoIterator<Item = (&'a str, &'a str)>,
        library_cpu: &BTreeMap<String, CpuidWords>,
    ) -> std::result::Result<(), NotApplied> {
        let hidden = self.hidden();
        for (library, words) in library_cpu {
            let held = intersection(*words, hidden);
            if held != [0; 4] {
                return Err(NotApplied {
                    profile: self,
                    library: library.clone(),
                    evidence: format!(
                        "it still holds CPUID bits {} (leaf 1 ECX, EDX, leaf 7 EBX, ECX)",
                        held.map(|word| format!("{word:#x}")).join(" ")
                    ),
                });
            }
        }
        let forbidden = self.forbidden();
        for (file, function) in functions {
            let name = without_aws_lc_prefix(function);
            let aws_lc = name.len() != function.len() || file.contains("aws-lc");
            if aws_lc && forbidden.iter().any(|pattern| pattern.matches(name)) {
                return Err(NotApplied {
                    profile: self,
                    library: "aws-lc".to_owned(),
                    evidence: format!(
                        "`{}` ran, which only runs when the CPU has a feature the profile hides",
                        function.chars().take(120).collect::<String>()
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Fails a measurement of `harness` under `cpu` when the profile did not
/// reach a library ([`CpuProfile::check`]): by what the libraries say they
/// hold (`library_cpu`, from the child) and by the functions of the counted
/// run (`region_profile`). Nothing to check under the default profile.
pub fn check_region(
    cpu: CpuProfile,
    harness: &HarnessName,
    region_profile: &Path,
    library_cpu: &BTreeMap<String, CpuidWords>,
) -> Result<()> {
    if cpu.is_default() {
        return Ok(());
    }
    let profile = cachegrind_out::read(region_profile).map_err(|source| MeasureError::Profile {
        path: region_profile.to_path_buf(),
        source,
    })?;
    let functions = profile
        .functions
        .iter()
        .filter(|function| function.instructions != 0)
        .map(|function| (function.file.as_str(), function.function.as_str()));
    cpu.check(functions, library_cpu)
        .map_err(|not| MeasureError::CpuProfileNotApplied {
            harness: harness.clone(),
            profile: not.profile.to_string(),
            library: not.library,
            evidence: not.evidence,
        })
}

impl fmt::Display for CpuProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile that did not reach a library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotApplied {
    pub profile: CpuProfile,
    pub library: String,
    pub evidence: String,
}

/// `OPENSSL_ia32cap` hiding `hidden`. OpenSSL and aws-lc read it alike: the
/// first value masks their words 0 and 1 (leaf 1's EDX, then ECX), the
/// second their words 2 and 3 (leaf 7's EBX, then ECX), `~` meaning "all
/// but". Both values are always given: OpenSSL 3.0 *clears* words 2 and 3
/// when the second is missing (`OPENSSL_ia32cap=~0x4000000000000000`
/// hid AVX2, BMI1/2 and the rest of leaf 7 from it, while aws-lc kept
/// them).
pub fn ia32cap(hidden: CpuidWords) -> String {
    let [ecx1, edx1, ebx7, ecx7] = hidden;
    format!("~0x{ecx1:08x}{edx1:08x}:~0x{ecx7:08x}{ebx7:08x}")
}

/// The bits of `native` that `valgrind` lacks: what a native child hides
/// so that the libraries take the paths they take under Valgrind.
pub fn native_only(valgrind: CpuidWords, native: CpuidWords) -> CpuidWords {
    std::array::from_fn(|index| native[index] & !valgrind[index])
}

fn union(a: CpuidWords, b: CpuidWords) -> CpuidWords {
    std::array::from_fn(|index| a[index] | b[index])
}

fn intersection(a: CpuidWords, b: CpuidWords) -> CpuidWords {
    std::array::from_fn(|index| a[index] & b[index])
}

/// aws-lc-sys prefixes its exported symbols with its version
/// (`aws_lc_0_47_0_aes_hw_encrypt`); local assembly labels have no prefix.
fn without_aws_lc_prefix(name: &str) -> &str {
    let Some(rest) = name.strip_prefix("aws_lc_") else {
        return name;
    };
    // Three numbers, each followed by `_`.
    let mut rest = rest;
    for _ in 0..3 {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[digits..].strip_prefix('_') {
            Some(after) if digits > 0 => rest = after,
            _ => return name,
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_say_what_exists() {
        for profile in CpuProfile::ALL {
            assert_eq!(CpuProfile::parse(profile.name()).ok(), Some(profile));
        }
        let error = CpuProfile::parse("no-sse").unwrap_err().to_string();
        assert!(
            error.contains("no-sse") && error.contains("no-aesni"),
            "{error}"
        );
        assert_eq!(CpuProfile::Default.output_folder(), None);
        assert_eq!(
            CpuProfile::NoAvx.output_folder().as_deref(),
            Some("cpu-no-avx")
        );
    }

    /// The default mask hides RDRAND alone and gives both values; a
    /// profile adds its bits, a native child the host's extra ones.
    #[test]
    fn masks_hide_rdrand_and_the_profile() {
        assert_eq!(
            CpuProfile::Default.ia32cap([0; 4]),
            "~0x4000000000000000:~0x0000000000000000"
        );
        assert_eq!(
            CpuProfile::NoAesni.ia32cap([0; 4]),
            "~0x4200000200000000:~0x0000060000000000"
        );
        assert_eq!(
            CpuProfile::NoAvx.ia32cap([0, 0x10, 0, 0]),
            "~0x5000100000000010:~0x0000060000010020"
        );
        assert_eq!(
            CpuProfile::Baseline.ia32cap([0; 4]),
            "~0xffffffff00000000:~0xffffffffffffffff"
        );
        let valgrind = [0x0000_0001, 0x0000_0010, 0x0000_0100, 0];
        let native = [0x4000_0003, 0x0000_0030, 0x0001_0100, 0x0000_0200];
        assert_eq!(
            native_only(valgrind, native),
            [0x4000_0002, 0x20, 0x0001_0000, 0x200]
        );
    }

    #[test]
    fn a_library_holding_a_hidden_feature_fails_the_check() {
        let aes = 1 << 25;
        let held = BTreeMap::from([("libssl".to_owned(), [aes | 2 | 1, 0, 0, 0])]);
        let error = CpuProfile::NoAesni.check([], &held).unwrap_err();
        assert_eq!(error.library, "libssl");
        assert!(
            error.evidence.contains("0x2000002 0x0"),
            "{}",
            error.evidence
        );
        // The same library passes a profile that does not hide AES-NI.
        assert_eq!(CpuProfile::NoAvx.check([], &held), Ok(()));
        assert_eq!(CpuProfile::Default.check([], &held), Ok(()));
    }

    #[test]
    fn an_aws_lc_implementation_of_a_hidden_feature_fails_the_check() {
        let none = BTreeMap::new();
        let aws_lc = "/aws-lc/generated-src/linux-x86_64/crypto/fipsmodule/x.S";
        let ran = |profile: CpuProfile, function: &str| profile.check([(aws_lc, function)], &none);
        let error = ran(
            CpuProfile::NoAesni,
            "aws_lc_0_47_0_aes_hw_ctr32_encrypt_blocks",
        )
        .unwrap_err();
        assert_eq!(error.library, "aws-lc");
        assert!(
            error.evidence.contains("aes_hw_ctr32"),
            "{}",
            error.evidence
        );
        assert!(ran(CpuProfile::NoAesni, "gcm_gmult_clmul").is_err());
        assert!(ran(
            CpuProfile::NoAvx,
            "aws_lc_0_44_0_ecp_nistz256_avx2_select_w7"
        )
        .is_err());
        assert!(ran(CpuProfile::NoAvx, "chacha20_poly1305_open_avx2").is_err());
        assert!(ran(CpuProfile::Baseline, "aws_lc_0_47_0_vpaes_encrypt").is_err());
        assert!(ran(CpuProfile::Baseline, "sha256_block_data_order_ssse3").is_err());
        // What each profile leaves, and what no profile reaches (glibc).
        assert!(ran(CpuProfile::NoAesni, "aws_lc_0_47_0_vpaes_encrypt").is_ok());
        assert!(ran(CpuProfile::NoAvx, "aws_lc_0_47_0_crypto_gcm_avx512_enabled").is_ok());
        assert!(ran(CpuProfile::NoAvx, "gcm_ghash_clmul").is_ok());
        assert!(ran(CpuProfile::Default, "aes_hw_encrypt").is_ok());
        let glibc = (
            "./string/../sysdeps/x86_64/multiarch/memchr-avx2.S",
            "__memchr_avx2",
        );
        assert_eq!(CpuProfile::Baseline.check([glibc], &none), Ok(()));
        // A prefixed symbol is aws-lc's wherever its file is.
        let unknown = ("???", "aws_lc_0_47_0_aes_hw_encrypt");
        assert!(CpuProfile::NoAesni.check([unknown], &none).is_err());
    }

    #[test]
    fn the_aws_lc_prefix_is_three_numbers() {
        assert_eq!(
            without_aws_lc_prefix("aws_lc_0_47_0_aes_hw_encrypt"),
            "aes_hw_encrypt"
        );
        assert_eq!(without_aws_lc_prefix("aws_lc_x_aes"), "aws_lc_x_aes");
        assert_eq!(without_aws_lc_prefix("aws_lc_1_2"), "aws_lc_1_2");
        assert_eq!(without_aws_lc_prefix("_aesni_ctr32_6x"), "_aesni_ctr32_6x");
    }
}
