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
        record_aes_gcm => harnesses::s2n_tls::RecordAesGcm,
    }
    rustls {
    }
    openssl {
    }
    aws_lc_rs {
    }
}
