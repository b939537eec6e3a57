//! The CPU features that crypto code dispatches on, as this process sees them.
//!
//! aws-lc and OpenSSL pick their assembly (AES-NI, AVX2, ADX, SHA extensions,
//! ...) from CPUID at run time. Under Valgrind, CPUID answers for Valgrind's
//! emulated CPU, which is a subset of the host's. The count therefore depends
//! on what the measured process sees, so the child reports it from inside.

/// The names of the features this process sees, in a stable order.
pub fn features() -> Vec<String> {
    detected().into_iter().map(str::to_owned).collect()
}

#[cfg(target_arch = "x86_64")]
fn detected() -> Vec<&'static str> {
    let mut found = Vec::new();
    macro_rules! probe {
        ($($feature:tt),* $(,)?) => {
            $(if std::arch::is_x86_feature_detected!($feature) { found.push($feature); })*
        };
    }
    probe!(
        "sse2",
        "ssse3",
        "sse4.1",
        "sse4.2",
        "popcnt",
        "aes",
        "pclmulqdq",
        "avx",
        "avx2",
        "fma",
        "bmi1",
        "bmi2",
        "adx",
        "sha",
        "rdrand",
        "rdseed",
        "movbe",
        "avx512f",
        "avx512bw",
        "avx512vl",
        "avx512ifma",
        "vaes",
        "vpclmulqdq",
        "gfni",
    );
    found
}

/// The CPUID words that aws-lc and OpenSSL build their capability vector
/// from, as this process sees them: leaf 1's ECX and EDX, leaf 7's EBX and
/// ECX. A heap child that runs natively hides from both libraries (through
/// `OPENSSL_ia32cap`) what the host has and Valgrind's CPU does not, so
/// that they take the paths they take under Valgrind.
#[cfg(target_arch = "x86_64")]
pub fn ids() -> Option<[u32; 4]> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    // SAFETY: CPUID exists on every x86_64 CPU; leaf 7 exists when leaf 0
    // says so.
    unsafe {
        let max = __cpuid(0).eax;
        let one = __cpuid(1);
        let seven = if max >= 7 {
            __cpuid_count(7, 0)
        } else {
            std::mem::zeroed()
        };
        Some([one.ecx, one.edx, seven.ebx, seven.ecx])
    }
}

/// No CPUID words elsewhere.
#[cfg(not(target_arch = "x86_64"))]
pub fn ids() -> Option<[u32; 4]> {
    None
}

#[cfg(target_arch = "aarch64")]
fn detected() -> Vec<&'static str> {
    let mut found = Vec::new();
    macro_rules! probe {
        ($($feature:tt),* $(,)?) => {
            $(if std::arch::is_aarch64_feature_detected!($feature) { found.push($feature); })*
        };
    }
    probe!("neon", "aes", "pmull", "sha2", "sha3", "sve", "sve2");
    found
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detected() -> Vec<&'static str> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    #[test]
    fn features_are_sorted_by_probe_order_and_unique() {
        let features = super::features();
        let mut unique = features.clone();
        unique.dedup();
        assert_eq!(features, unique);
        #[cfg(target_arch = "x86_64")]
        assert!(
            features.iter().any(|f| f == "sse2"),
            "every x86_64 CPU has SSE2"
        );
    }
}
