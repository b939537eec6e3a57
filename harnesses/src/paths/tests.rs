use super::*;
use crate::common::pins::{Cipher, CipherSuite, NamedGroup, SignatureScheme, TlsVersion};
use crate::common::pki::Pki;

#[test]
fn names_are_derived_from_the_data() {
    let names: Vec<String> = Handshake::ALL.iter().map(Handshake::to_string).collect();
    assert_eq!(
        names,
        [
            "handshake_rsa4096",
            "handshake_ecdsa_p256",
            "mtls_rsa4096",
            "mtls_ecdsa_p256",
            "handshake_tls12_rsa4096",
            "session_resumption"
        ]
    );
    let record = Record {
        cipher: Cipher::ChaCha20Poly1305,
        version: TlsVersion::Tls12,
        write_size: 1024,
    };
    assert_eq!(record.to_string(), "record_tls12_chacha20poly1305_1k");
    let aead = Aead {
        cipher: Cipher::Aes256Gcm,
        direction: Direction::Open,
        message_len: 16384,
    };
    assert_eq!(aead.to_string(), "aead_aes256gcm_open_16384");
    let benchmark = Benchmark {
        library: Library::S2nTls,
        path: Path::Record(Record {
            cipher: Cipher::Aes128Gcm,
            version: TlsVersion::Tls13,
            write_size: 16384,
        }),
    };
    assert_eq!(benchmark.name(), "s2n_tls::record_aes128gcm_16k");
    assert_eq!(Path::KeyUpdate.to_string(), "key_update");
    let hostile: Vec<String> = Hostile::ALL
        .iter()
        .map(|hostile| Path::Hostile(*hostile).to_string())
        .collect();
    assert_eq!(
        hostile,
        [
            "hostile_hello_max",
            "hostile_hello_key_shares",
            "hostile_hello_retry",
            "hostile_hello_1_byte_records",
            "hostile_hello_minimal",
            "hostile_hello_minimal_secp384r1",
            "hostile_hello_minimal_secp521r1",
            "hostile_hello_minimal_ffdhe3072",
            "hostile_hello_zero_share",
            "hostile_hello_off_curve_share",
            "hostile_hello_bad_mlkem_share",
            "hostile_hello_unknown_tickets",
            "hostile_hello_max_unknown_tickets",
            "hostile_hello_corrupt_tickets",
            "hostile_psk_invalid_binder",
            "hostile_key_update_flood",
            "hostile_tiny_records",
            "hostile_mtls_longest_chain",
            "hostile_mtls_chain_decoys",
            "hostile_mtls_rsa8192_client",
            "hostile_key_update_flood_attacker",
            "hostile_tiny_records_attacker"
        ]
    );
    let features: Vec<String> = Feature::ALL
        .iter()
        .map(|feature| Path::Feature(*feature).to_string())
        .collect();
    assert_eq!(
        features,
        [
            "psk_handshake",
            "connection_serialize",
            "async_private_key",
            "client_hello_callback",
            "connection_info"
        ]
    );
}

#[test]
fn real_world_names_carry_the_group_and_the_retry() {
    let names: Vec<String> = Handshake::REAL_WORLD
        .iter()
        .map(Handshake::to_string)
        .collect();
    assert_eq!(
        names,
        [
            "handshake_ecdsa_p256_x25519mlkem768",
            "mtls_ecdsa_p256_x25519mlkem768",
            "session_resumption_x25519mlkem768",
            "handshake_web_rsa2048_x25519mlkem768",
            "handshake_web_ecdsa_p256_x25519mlkem768",
            "handshake_web_ecdsa_p256_x25519",
            "hello_retry_ecdsa_p256",
            "session_resumption_tls12",
            "session_resumption_cache",
            "handshake_tls12_rsa4096_ffdhe2048",
            "handshake_ecdsa_p256_cn_only",
            "handshake_ecdsa_p256_ip_san",
            "handshake_ecdsa_p256_after_warning",
        ]
    );
    let retry = Handshake::REAL_WORLD[6].profile();
    assert_eq!(
        retry.client_groups(),
        [NamedGroup::X25519, NamedGroup::Secp256r1]
    );
    assert!(retry.expected(false).retried);
    let pq = Handshake::REAL_WORLD[0].profile();
    assert_eq!(pq.client_groups(), [NamedGroup::X25519MlKem768]);
    assert!(!pq.expected(false).retried);
}

#[test]
fn pins_follow_from_the_path() {
    let tls12 = Handshake::full(Pki::Rsa4096, TlsVersion::Tls12).profile();
    assert_eq!(tls12.pins.suite, CipherSuite::EcdheRsaAes128GcmSha256);
    let dhe = Handshake::full(Pki::Rsa4096, TlsVersion::Tls12).on(NamedGroup::Ffdhe2048);
    assert_eq!(dhe.profile().pins.suite, CipherSuite::DheRsaAes128GcmSha256);
    assert_eq!(dhe.profile().pins.scheme, SignatureScheme::RsaPkcs1Sha256);
    // Neither library names the group of a TLS 1.2 DHE handshake.
    assert_eq!(dhe.expected().group(), None);
    let ecdsa = Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13).expected();
    assert_eq!(ecdsa.pins.suite, CipherSuite::Tls13Aes128GcmSha256);
    assert_eq!(
        ecdsa.server_signature(),
        Some(Pki::EcdsaP256.signature_scheme())
    );
    assert_eq!(ecdsa.client_signature(), None);
    let resumption = Handshake::ALL[5];
    assert!(resumption.profile().resumption.is_some() && resumption.expected().resumed);
    assert_eq!(resumption.expected().server_signature(), None);
    let record = Record {
        cipher: Cipher::Aes256Gcm,
        version: TlsVersion::Tls13,
        write_size: 1024,
    };
    assert_eq!(
        record.profile().pins.suite,
        CipherSuite::Tls13Aes256GcmSha384
    );
    assert_eq!(
        (record.records(), record.record_len(1024, false)),
        (1024, 1024 + 22)
    );
    let cbc = Record {
        cipher: Cipher::Aes128CbcSha,
        version: TlsVersion::Tls12,
        write_size: 1024,
    };
    assert_eq!(cbc.to_string(), "record_tls12_aes128cbc_sha_1k");
    assert_eq!(cbc.profile().pins.suite, CipherSuite::EcdheRsaAes128CbcSha);
    assert_eq!(cbc.profile().pins.scheme, SignatureScheme::RsaPkcs1Sha256);
    // MAC-then-encrypt: 1024 + 20 bytes of MAC padded to 1056, after a
    // 16-byte IV; encrypt-then-MAC: 1024 padded to 1040, then the MAC.
    assert_eq!(cbc.record_len(1024, false), 5 + 16 + 1056);
    assert_eq!(cbc.record_len(1024, true), 5 + 16 + 1040 + 20);
    assert_eq!(cbc.record_len(16 * 1024, false), 5 + 16 + 16416);
}

#[test]
fn validation_refuses_what_no_name_stands_for() {
    for handshake in Handshake::ALL.into_iter().chain(Handshake::REAL_WORLD) {
        Path::Handshake(handshake).validate().expect("measured");
    }
    let web_mtls = Handshake {
        client_auth: true,
        ..Handshake::full(Pki::WebRsa2048, TlsVersion::Tls13)
    };
    assert!(Path::Handshake(web_mtls).validate().is_err());
    let retry_to_the_guess = Handshake {
        retry: true,
        ..Handshake::RSA4096.on(Handshake::RETRY_GUESS)
    };
    assert!(Path::Handshake(retry_to_the_guess).validate().is_err());
    let pq_tls12 = Handshake::full(Pki::Rsa4096, TlsVersion::Tls12).on(NamedGroup::X25519MlKem768);
    assert!(Path::Handshake(pq_tls12).validate().is_err());
    let ecdsa_tls12 = Handshake::full(Pki::EcdsaP256, TlsVersion::Tls12);
    assert!(Path::Handshake(ecdsa_tls12).validate().is_err());
    let ffdhe_tls13 = Handshake::RSA4096.on(NamedGroup::Ffdhe2048);
    assert!(Path::Handshake(ffdhe_tls13).validate().is_err());
    let ffdhe_mtls = Handshake {
        client_auth: true,
        ..Handshake::full(Pki::Rsa4096, TlsVersion::Tls12).on(NamedGroup::Ffdhe2048)
    };
    assert!(Path::Handshake(ffdhe_mtls).validate().is_err());
    let cache_tls12 = Handshake {
        resumption: Some(Resumption::Cache),
        ..Handshake::full(Pki::Rsa4096, TlsVersion::Tls12)
    };
    assert!(Path::Handshake(cache_tls12).validate().is_err());
    let mtls_resumption = Handshake {
        client_auth: true,
        ..Handshake::ALL[5]
    };
    assert!(Path::Handshake(mtls_resumption).validate().is_err());
    for write_size in [0, 1000, 16 * 1024 + 1024] {
        let record = Record {
            cipher: Cipher::Aes128Gcm,
            version: TlsVersion::Tls13,
            write_size,
        };
        assert!(Path::Record(record).validate().is_err(), "{write_size}");
    }
    let aead = Aead {
        cipher: Cipher::Aes128Gcm,
        direction: Direction::Seal,
        message_len: 48,
    };
    assert!(Path::Aead(aead).validate().is_err());
    let cbc_aead = Aead {
        cipher: Cipher::Aes128CbcSha,
        direction: Direction::Seal,
        message_len: 64,
    };
    assert!(Path::Aead(cbc_aead).validate().is_err());
    let cbc_tls13 = Record {
        cipher: Cipher::Aes128CbcSha,
        version: TlsVersion::Tls13,
        write_size: 1024,
    };
    assert!(Path::Record(cbc_tls13).validate().is_err());
}
