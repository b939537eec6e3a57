//! Every harness, as a test named `<library>::<path>`.
//!
//! `cargo test` runs each path natively and checks it works.
//! `ENABLE_VALGRIND=true cargo test` also measures each one under Valgrind
//! Cachegrind and gates its count against `baselines/<library>.<path>.json`.
//! This file is the list of harnesses: the `regress` binary measures exactly
//! the tests in it.

regress::harness_tests! {
    calibration {
        spin_1m => harnesses::calibration::Spin { iterations: 1_000_000 },
        spin_2m => harnesses::calibration::Spin { iterations: 2_000_000 },
    }
    s2n_tls {
        config_build => harnesses::s2n_tls::ConfigBuild,
        handshake_rsa4096 => harnesses::s2n_tls::HandshakeRsa4096,
        session_resumption => harnesses::s2n_tls::SessionResumption,
        handshake_ecdsa_p256 => harnesses::s2n_tls::HandshakeEcdsaP256,
        mtls_rsa4096 => harnesses::s2n_tls::MtlsRsa4096,
        mtls_ecdsa_p256 => harnesses::s2n_tls::MtlsEcdsaP256,
        handshake_tls12_rsa4096 => harnesses::s2n_tls::HandshakeTls12Rsa4096,
        record_aes128gcm_16k => harnesses::s2n_tls::Record::AES128GCM_16K,
        record_aes128gcm_1k => harnesses::s2n_tls::Record::AES128GCM_1K,
        record_aes256gcm_16k => harnesses::s2n_tls::Record::AES256GCM_16K,
        record_aes256gcm_1k => harnesses::s2n_tls::Record::AES256GCM_1K,
        // TLS 1.2: no s2n-tls policy lets two s2n-tls peers agree on ChaCha20 in
        // TLS 1.3, so these are named apart from the TLS 1.3 record paths.
        record_tls12_chacha20poly1305_16k => harnesses::s2n_tls::Record::CHACHA20POLY1305_16K,
        record_tls12_chacha20poly1305_1k => harnesses::s2n_tls::Record::CHACHA20POLY1305_1K,
    }
    rustls {
    }
    openssl {
        config_build => harnesses::openssl::ConfigBuild,
        handshake_rsa4096 => harnesses::openssl::HandshakeRsa4096,
        handshake_ecdsa_p256 => harnesses::openssl::HandshakeEcdsaP256,
        mtls_rsa4096 => harnesses::openssl::MtlsRsa4096,
        mtls_ecdsa_p256 => harnesses::openssl::MtlsEcdsaP256,
        handshake_tls12_rsa4096 => harnesses::openssl::HandshakeTls12Rsa4096,
        session_resumption => harnesses::openssl::SessionResumption,
        record_aes128gcm_16k => harnesses::openssl::RecordAes128Gcm16k,
        record_aes128gcm_1k => harnesses::openssl::RecordAes128Gcm1k,
        record_aes256gcm_16k => harnesses::openssl::RecordAes256Gcm16k,
        record_aes256gcm_1k => harnesses::openssl::RecordAes256Gcm1k,
        record_chacha20poly1305_16k => harnesses::openssl::RecordChacha20Poly1305_16k,
        record_chacha20poly1305_1k => harnesses::openssl::RecordChacha20Poly1305_1k,
        x509_parse_chain => harnesses::openssl::X509ParseChain,
        x509_verify_chain => harnesses::openssl::X509VerifyChain,
    }
    aws_lc_rs {
        aead_aes128gcm_seal_16 => harnesses::aws_lc_rs::Aead::aes128gcm_seal(16),
        aead_aes128gcm_seal_64 => harnesses::aws_lc_rs::Aead::aes128gcm_seal(64),
        aead_aes128gcm_seal_256 => harnesses::aws_lc_rs::Aead::aes128gcm_seal(256),
        aead_aes128gcm_seal_1024 => harnesses::aws_lc_rs::Aead::aes128gcm_seal(1024),
        aead_aes128gcm_seal_8192 => harnesses::aws_lc_rs::Aead::aes128gcm_seal(8192),
        aead_aes128gcm_seal_16384 => harnesses::aws_lc_rs::Aead::aes128gcm_seal(16384),
        aead_aes128gcm_open_16 => harnesses::aws_lc_rs::Aead::aes128gcm_open(16),
        aead_aes128gcm_open_64 => harnesses::aws_lc_rs::Aead::aes128gcm_open(64),
        aead_aes128gcm_open_256 => harnesses::aws_lc_rs::Aead::aes128gcm_open(256),
        aead_aes128gcm_open_1024 => harnesses::aws_lc_rs::Aead::aes128gcm_open(1024),
        aead_aes128gcm_open_8192 => harnesses::aws_lc_rs::Aead::aes128gcm_open(8192),
        aead_aes128gcm_open_16384 => harnesses::aws_lc_rs::Aead::aes128gcm_open(16384),
        aead_aes256gcm_seal_16 => harnesses::aws_lc_rs::Aead::aes256gcm_seal(16),
        aead_aes256gcm_seal_64 => harnesses::aws_lc_rs::Aead::aes256gcm_seal(64),
        aead_aes256gcm_seal_256 => harnesses::aws_lc_rs::Aead::aes256gcm_seal(256),
        aead_aes256gcm_seal_1024 => harnesses::aws_lc_rs::Aead::aes256gcm_seal(1024),
        aead_aes256gcm_seal_8192 => harnesses::aws_lc_rs::Aead::aes256gcm_seal(8192),
        aead_aes256gcm_seal_16384 => harnesses::aws_lc_rs::Aead::aes256gcm_seal(16384),
        aead_aes256gcm_open_16 => harnesses::aws_lc_rs::Aead::aes256gcm_open(16),
        aead_aes256gcm_open_64 => harnesses::aws_lc_rs::Aead::aes256gcm_open(64),
        aead_aes256gcm_open_256 => harnesses::aws_lc_rs::Aead::aes256gcm_open(256),
        aead_aes256gcm_open_1024 => harnesses::aws_lc_rs::Aead::aes256gcm_open(1024),
        aead_aes256gcm_open_8192 => harnesses::aws_lc_rs::Aead::aes256gcm_open(8192),
        aead_aes256gcm_open_16384 => harnesses::aws_lc_rs::Aead::aes256gcm_open(16384),
    }
}
