//! The list of every harness, in one place.
//!
//! The instruction-count tests (`tests/perf.rs`) and the wall-clock
//! benchmarks (`benches/paths.rs`) both expand this list, so a path is
//! defined once and measured the same way by both. Each entry gives the
//! harness its public name, `<library>::<path>`: the block is the library,
//! the key the path.

/// Calls `$callback! { <library> { <path> => <harness>, ... } ... }` with
/// every harness.
#[macro_export]
macro_rules! for_each_harness {
    ($($callback:ident)::+) => {
        $($callback)::+! {
            calibration {
                spin_1m => $crate::calibration::Spin { iterations: 1_000_000 },
                spin_2m => $crate::calibration::Spin { iterations: 2_000_000 },
            }
            s2n_tls {
                config_build => $crate::s2n_tls::ConfigBuild,
                handshake_rsa4096 => $crate::s2n_tls::HandshakeRsa4096,
                session_resumption => $crate::s2n_tls::SessionResumption,
                handshake_ecdsa_p256 => $crate::s2n_tls::HandshakeEcdsaP256,
                mtls_rsa4096 => $crate::s2n_tls::MtlsRsa4096,
                mtls_ecdsa_p256 => $crate::s2n_tls::MtlsEcdsaP256,
                handshake_tls12_rsa4096 => $crate::s2n_tls::HandshakeTls12Rsa4096,
                record_aes128gcm_16k => $crate::s2n_tls::Record::AES128GCM_16K,
                record_aes128gcm_1k => $crate::s2n_tls::Record::AES128GCM_1K,
                record_aes256gcm_16k => $crate::s2n_tls::Record::AES256GCM_16K,
                record_aes256gcm_1k => $crate::s2n_tls::Record::AES256GCM_1K,
                // TLS 1.2: no s2n-tls policy lets two s2n-tls peers agree on ChaCha20 in
                // TLS 1.3, so these are named apart from the TLS 1.3 record paths.
                record_tls12_chacha20poly1305_16k => $crate::s2n_tls::Record::CHACHA20POLY1305_16K,
                record_tls12_chacha20poly1305_1k => $crate::s2n_tls::Record::CHACHA20POLY1305_1K,
            }
            rustls {
                config_build => $crate::rustls::ConfigBuild,
                handshake_rsa4096 => $crate::rustls::HandshakeRsa4096,
                handshake_ecdsa_p256 => $crate::rustls::HandshakeEcdsaP256,
                mtls_rsa4096 => $crate::rustls::MtlsRsa4096,
                mtls_ecdsa_p256 => $crate::rustls::MtlsEcdsaP256,
                handshake_tls12_rsa4096 => $crate::rustls::HandshakeTls12Rsa4096,
                session_resumption => $crate::rustls::SessionResumption,
                record_aes128gcm_16k => $crate::rustls::RecordAes128Gcm16k,
                record_aes128gcm_1k => $crate::rustls::RecordAes128Gcm1k,
                record_aes256gcm_16k => $crate::rustls::RecordAes256Gcm16k,
                record_aes256gcm_1k => $crate::rustls::RecordAes256Gcm1k,
                record_chacha20poly1305_16k => $crate::rustls::RecordChaCha20Poly1305_16k,
                record_chacha20poly1305_1k => $crate::rustls::RecordChaCha20Poly1305_1k,
                x509_parse_chain => $crate::rustls::X509ParseChain,
                x509_verify_chain => $crate::rustls::X509VerifyChain,
            }
            openssl {
                config_build => $crate::openssl::ConfigBuild,
                handshake_rsa4096 => $crate::openssl::HandshakeRsa4096,
                handshake_ecdsa_p256 => $crate::openssl::HandshakeEcdsaP256,
                mtls_rsa4096 => $crate::openssl::MtlsRsa4096,
                mtls_ecdsa_p256 => $crate::openssl::MtlsEcdsaP256,
                handshake_tls12_rsa4096 => $crate::openssl::HandshakeTls12Rsa4096,
                session_resumption => $crate::openssl::SessionResumption,
                record_aes128gcm_16k => $crate::openssl::RecordAes128Gcm16k,
                record_aes128gcm_1k => $crate::openssl::RecordAes128Gcm1k,
                record_aes256gcm_16k => $crate::openssl::RecordAes256Gcm16k,
                record_aes256gcm_1k => $crate::openssl::RecordAes256Gcm1k,
                record_chacha20poly1305_16k => $crate::openssl::RecordChacha20Poly1305_16k,
                record_chacha20poly1305_1k => $crate::openssl::RecordChacha20Poly1305_1k,
                x509_parse_chain => $crate::openssl::X509ParseChain,
                x509_verify_chain => $crate::openssl::X509VerifyChain,
            }
            aws_lc_rs {
                aead_aes128gcm_seal_16 => $crate::aws_lc_rs::Aead::aes128gcm_seal(16),
                aead_aes128gcm_seal_64 => $crate::aws_lc_rs::Aead::aes128gcm_seal(64),
                aead_aes128gcm_seal_256 => $crate::aws_lc_rs::Aead::aes128gcm_seal(256),
                aead_aes128gcm_seal_1024 => $crate::aws_lc_rs::Aead::aes128gcm_seal(1024),
                aead_aes128gcm_seal_8192 => $crate::aws_lc_rs::Aead::aes128gcm_seal(8192),
                aead_aes128gcm_seal_16384 => $crate::aws_lc_rs::Aead::aes128gcm_seal(16384),
                aead_aes128gcm_open_16 => $crate::aws_lc_rs::Aead::aes128gcm_open(16),
                aead_aes128gcm_open_64 => $crate::aws_lc_rs::Aead::aes128gcm_open(64),
                aead_aes128gcm_open_256 => $crate::aws_lc_rs::Aead::aes128gcm_open(256),
                aead_aes128gcm_open_1024 => $crate::aws_lc_rs::Aead::aes128gcm_open(1024),
                aead_aes128gcm_open_8192 => $crate::aws_lc_rs::Aead::aes128gcm_open(8192),
                aead_aes128gcm_open_16384 => $crate::aws_lc_rs::Aead::aes128gcm_open(16384),
                aead_aes256gcm_seal_16 => $crate::aws_lc_rs::Aead::aes256gcm_seal(16),
                aead_aes256gcm_seal_64 => $crate::aws_lc_rs::Aead::aes256gcm_seal(64),
                aead_aes256gcm_seal_256 => $crate::aws_lc_rs::Aead::aes256gcm_seal(256),
                aead_aes256gcm_seal_1024 => $crate::aws_lc_rs::Aead::aes256gcm_seal(1024),
                aead_aes256gcm_seal_8192 => $crate::aws_lc_rs::Aead::aes256gcm_seal(8192),
                aead_aes256gcm_seal_16384 => $crate::aws_lc_rs::Aead::aes256gcm_seal(16384),
                aead_aes256gcm_open_16 => $crate::aws_lc_rs::Aead::aes256gcm_open(16),
                aead_aes256gcm_open_64 => $crate::aws_lc_rs::Aead::aes256gcm_open(64),
                aead_aes256gcm_open_256 => $crate::aws_lc_rs::Aead::aes256gcm_open(256),
                aead_aes256gcm_open_1024 => $crate::aws_lc_rs::Aead::aes256gcm_open(1024),
                aead_aes256gcm_open_8192 => $crate::aws_lc_rs::Aead::aes256gcm_open(8192),
                aead_aes256gcm_open_16384 => $crate::aws_lc_rs::Aead::aes256gcm_open(16384),
            }
        }
    };
}
