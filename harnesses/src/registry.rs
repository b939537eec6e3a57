//! The list of every harness, in one place.
//!
//! The measured program (`src/main.rs`), the tests (`tests/perf.rs`) and the
//! wall-clock benchmarks (`benches/paths.rs`) all read this list, so a path
//! is defined once and measured the same way by all three. Each entry gives
//! the harness its public name, `<library>::<path>`: the test name, the
//! baseline file and the output names all use it.

use regress_measure::program::Entry;

/// Every harness, in a fixed order.
pub fn all() -> Vec<Entry> {
    vec![
        Entry::new(
            "calibration::spin_1m",
            crate::calibration::Spin {
                iterations: 1_000_000,
            },
        ),
        Entry::new(
            "calibration::spin_2m",
            crate::calibration::Spin {
                iterations: 2_000_000,
            },
        ),
        Entry::new("s2n_tls::config_build", crate::s2n_tls::ConfigBuild),
        Entry::new(
            "s2n_tls::handshake_rsa4096",
            crate::s2n_tls::HandshakeRsa4096,
        ),
        Entry::new(
            "s2n_tls::session_resumption",
            crate::s2n_tls::SessionResumption,
        ),
        Entry::new(
            "s2n_tls::handshake_ecdsa_p256",
            crate::s2n_tls::HandshakeEcdsaP256,
        ),
        Entry::new("s2n_tls::mtls_rsa4096", crate::s2n_tls::MtlsRsa4096),
        Entry::new("s2n_tls::mtls_ecdsa_p256", crate::s2n_tls::MtlsEcdsaP256),
        Entry::new(
            "s2n_tls::handshake_tls12_rsa4096",
            crate::s2n_tls::HandshakeTls12Rsa4096,
        ),
        Entry::new(
            "s2n_tls::record_aes128gcm_16k",
            crate::s2n_tls::Record::AES128GCM_16K,
        ),
        Entry::new(
            "s2n_tls::record_aes128gcm_1k",
            crate::s2n_tls::Record::AES128GCM_1K,
        ),
        Entry::new(
            "s2n_tls::record_aes256gcm_16k",
            crate::s2n_tls::Record::AES256GCM_16K,
        ),
        Entry::new(
            "s2n_tls::record_aes256gcm_1k",
            crate::s2n_tls::Record::AES256GCM_1K,
        ),
        // TLS 1.2: no s2n-tls policy lets two s2n-tls peers agree on ChaCha20 in
        // TLS 1.3, so these are named apart from the TLS 1.3 record paths.
        Entry::new(
            "s2n_tls::record_tls12_chacha20poly1305_16k",
            crate::s2n_tls::Record::CHACHA20POLY1305_16K,
        ),
        Entry::new(
            "s2n_tls::record_tls12_chacha20poly1305_1k",
            crate::s2n_tls::Record::CHACHA20POLY1305_1K,
        ),
        Entry::new("rustls::config_build", crate::rustls::ConfigBuild),
        Entry::new("rustls::handshake_rsa4096", crate::rustls::HandshakeRsa4096),
        Entry::new(
            "rustls::handshake_ecdsa_p256",
            crate::rustls::HandshakeEcdsaP256,
        ),
        Entry::new("rustls::mtls_rsa4096", crate::rustls::MtlsRsa4096),
        Entry::new("rustls::mtls_ecdsa_p256", crate::rustls::MtlsEcdsaP256),
        Entry::new(
            "rustls::handshake_tls12_rsa4096",
            crate::rustls::HandshakeTls12Rsa4096,
        ),
        Entry::new(
            "rustls::session_resumption",
            crate::rustls::SessionResumption,
        ),
        Entry::new(
            "rustls::record_aes128gcm_16k",
            crate::rustls::RecordAes128Gcm16k,
        ),
        Entry::new(
            "rustls::record_aes128gcm_1k",
            crate::rustls::RecordAes128Gcm1k,
        ),
        Entry::new(
            "rustls::record_aes256gcm_16k",
            crate::rustls::RecordAes256Gcm16k,
        ),
        Entry::new(
            "rustls::record_aes256gcm_1k",
            crate::rustls::RecordAes256Gcm1k,
        ),
        Entry::new(
            "rustls::record_chacha20poly1305_16k",
            crate::rustls::RecordChaCha20Poly1305_16k,
        ),
        Entry::new(
            "rustls::record_chacha20poly1305_1k",
            crate::rustls::RecordChaCha20Poly1305_1k,
        ),
        Entry::new("rustls::x509_parse_chain", crate::rustls::X509ParseChain),
        Entry::new("rustls::x509_verify_chain", crate::rustls::X509VerifyChain),
        Entry::new("openssl::config_build", crate::openssl::ConfigBuild),
        Entry::new(
            "openssl::handshake_rsa4096",
            crate::openssl::HandshakeRsa4096,
        ),
        Entry::new(
            "openssl::handshake_ecdsa_p256",
            crate::openssl::HandshakeEcdsaP256,
        ),
        Entry::new("openssl::mtls_rsa4096", crate::openssl::MtlsRsa4096),
        Entry::new("openssl::mtls_ecdsa_p256", crate::openssl::MtlsEcdsaP256),
        Entry::new(
            "openssl::handshake_tls12_rsa4096",
            crate::openssl::HandshakeTls12Rsa4096,
        ),
        Entry::new(
            "openssl::session_resumption",
            crate::openssl::SessionResumption,
        ),
        Entry::new(
            "openssl::record_aes128gcm_16k",
            crate::openssl::RecordAes128Gcm16k,
        ),
        Entry::new(
            "openssl::record_aes128gcm_1k",
            crate::openssl::RecordAes128Gcm1k,
        ),
        Entry::new(
            "openssl::record_aes256gcm_16k",
            crate::openssl::RecordAes256Gcm16k,
        ),
        Entry::new(
            "openssl::record_aes256gcm_1k",
            crate::openssl::RecordAes256Gcm1k,
        ),
        Entry::new(
            "openssl::record_chacha20poly1305_16k",
            crate::openssl::RecordChacha20Poly1305_16k,
        ),
        Entry::new(
            "openssl::record_chacha20poly1305_1k",
            crate::openssl::RecordChacha20Poly1305_1k,
        ),
        Entry::new("openssl::x509_parse_chain", crate::openssl::X509ParseChain),
        Entry::new(
            "openssl::x509_verify_chain",
            crate::openssl::X509VerifyChain,
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_seal_16",
            crate::aws_lc_rs::Aead::aes128gcm_seal(16),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_seal_64",
            crate::aws_lc_rs::Aead::aes128gcm_seal(64),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_seal_256",
            crate::aws_lc_rs::Aead::aes128gcm_seal(256),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_seal_1024",
            crate::aws_lc_rs::Aead::aes128gcm_seal(1024),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_seal_8192",
            crate::aws_lc_rs::Aead::aes128gcm_seal(8192),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_seal_16384",
            crate::aws_lc_rs::Aead::aes128gcm_seal(16384),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_open_16",
            crate::aws_lc_rs::Aead::aes128gcm_open(16),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_open_64",
            crate::aws_lc_rs::Aead::aes128gcm_open(64),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_open_256",
            crate::aws_lc_rs::Aead::aes128gcm_open(256),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_open_1024",
            crate::aws_lc_rs::Aead::aes128gcm_open(1024),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_open_8192",
            crate::aws_lc_rs::Aead::aes128gcm_open(8192),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes128gcm_open_16384",
            crate::aws_lc_rs::Aead::aes128gcm_open(16384),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_seal_16",
            crate::aws_lc_rs::Aead::aes256gcm_seal(16),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_seal_64",
            crate::aws_lc_rs::Aead::aes256gcm_seal(64),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_seal_256",
            crate::aws_lc_rs::Aead::aes256gcm_seal(256),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_seal_1024",
            crate::aws_lc_rs::Aead::aes256gcm_seal(1024),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_seal_8192",
            crate::aws_lc_rs::Aead::aes256gcm_seal(8192),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_seal_16384",
            crate::aws_lc_rs::Aead::aes256gcm_seal(16384),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_open_16",
            crate::aws_lc_rs::Aead::aes256gcm_open(16),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_open_64",
            crate::aws_lc_rs::Aead::aes256gcm_open(64),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_open_256",
            crate::aws_lc_rs::Aead::aes256gcm_open(256),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_open_1024",
            crate::aws_lc_rs::Aead::aes256gcm_open(1024),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_open_8192",
            crate::aws_lc_rs::Aead::aes256gcm_open(8192),
        ),
        Entry::new(
            "aws_lc_rs::aead_aes256gcm_open_16384",
            crate::aws_lc_rs::Aead::aes256gcm_open(16384),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let entries = all();
        let mut names: Vec<&str> = entries.iter().map(|entry| entry.name.as_str()).collect();
        for name in &names {
            let (library, path) = name.split_once("::").expect("library::path");
            for part in [library, path] {
                assert!(
                    !part.is_empty()
                        && part
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                    "{name}"
                );
            }
        }
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a name is listed twice");
    }
}
