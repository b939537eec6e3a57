//! The test certificates the harnesses ship with, embedded in the binary.
//!
//! They are compiled in with `include_bytes!` so that a measured child process
//! reads nothing from disk and cannot fail on a working directory that differs
//! from `cargo test`'s. `scripts/generate-test-certs.sh` made them; see
//! `harnesses/certs/README.md`. They are test-only keys, published on purpose.

/// The name the leaf certificate is issued for (its only SAN, `DNS:localhost`),
/// the name clients send as SNI, and the only name the harnesses' verify-host
/// callback accepts.
pub const SERVER_NAME: &str = "localhost";

/// Self-signed RSA-4096 CA: the only certificate clients trust.
pub const CA_PEM: &[u8] = include_bytes!("../certs/ca.pem");

/// RSA-4096 leaf for `localhost`, followed by the CA: the chain the server
/// sends.
pub const LEAF_CHAIN_PEM: &[u8] = include_bytes!("../certs/leaf.pem");

/// The leaf's private key (PKCS#8 PEM).
pub const LEAF_KEY_PEM: &[u8] = include_bytes!("../certs/leaf.key");

/// RSA-4096 client certificate (CN "regress test client"), signed by
/// [`CA_PEM`], followed by the CA: what an mTLS client presents.
pub const CLIENT_RSA_CHAIN_PEM: &[u8] = include_bytes!("../certs/client-rsa.pem");

/// The RSA client certificate's private key (PKCS#8 PEM).
pub const CLIENT_RSA_KEY_PEM: &[u8] = include_bytes!("../certs/client-rsa.key");

/// Self-signed ECDSA P-256 CA: trust anchor of the ECDSA hierarchy.
pub const ECDSA_CA_PEM: &[u8] = include_bytes!("../certs/ecdsa-ca.pem");

/// ECDSA P-256 leaf for `localhost`, followed by [`ECDSA_CA_PEM`].
pub const ECDSA_LEAF_CHAIN_PEM: &[u8] = include_bytes!("../certs/ecdsa-leaf.pem");

/// The ECDSA leaf's private key (PKCS#8 PEM).
pub const ECDSA_LEAF_KEY_PEM: &[u8] = include_bytes!("../certs/ecdsa-leaf.key");

/// ECDSA P-256 client certificate, followed by [`ECDSA_CA_PEM`].
pub const CLIENT_ECDSA_CHAIN_PEM: &[u8] = include_bytes!("../certs/client-ecdsa.pem");

/// The ECDSA client certificate's private key (PKCS#8 PEM).
pub const CLIENT_ECDSA_KEY_PEM: &[u8] = include_bytes!("../certs/client-ecdsa.key");

#[cfg(test)]
mod tests {
    use super::*;

    fn count(pem: &[u8], label: &str) -> usize {
        let needle = format!("-----BEGIN {label}-----");
        pem.windows(needle.len())
            .filter(|w| *w == needle.as_bytes())
            .count()
    }

    #[test]
    fn files_have_the_expected_shape() {
        assert_eq!(count(CA_PEM, "CERTIFICATE"), 1);
        assert_eq!(count(LEAF_CHAIN_PEM, "CERTIFICATE"), 2, "leaf then CA");
        assert!(
            LEAF_CHAIN_PEM.ends_with(CA_PEM),
            "the chain must end with the CA"
        );
        assert_eq!(count(LEAF_KEY_PEM, "PRIVATE KEY"), 1);
        for (chain, ca) in [
            (CLIENT_RSA_CHAIN_PEM, CA_PEM),
            (ECDSA_LEAF_CHAIN_PEM, ECDSA_CA_PEM),
            (CLIENT_ECDSA_CHAIN_PEM, ECDSA_CA_PEM),
        ] {
            assert_eq!(count(chain, "CERTIFICATE"), 2, "leaf then CA");
            assert!(chain.ends_with(ca), "the chain must end with its CA");
        }
        for key in [CLIENT_RSA_KEY_PEM, ECDSA_LEAF_KEY_PEM, CLIENT_ECDSA_KEY_PEM] {
            assert_eq!(count(key, "PRIVATE KEY"), 1);
        }
    }
}
