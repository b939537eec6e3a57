//! The test PKIs every library's harnesses use, embedded in the binary.
//!
//! A laboratory PKI ([`Pki::ALL`]) is a self-signed CA, a server leaf for
//! `localhost` and a client leaf (for mTLS), all with keys of one type:
//! RSA-4096 (rsaEncryption) or ECDSA P-256; the CA signs the leaves directly.
//! A web-shaped PKI ([`Pki::WEB`]) is what most of the web serves: a root, an
//! intermediate under it and a server leaf under that (RSA-2048 leaf and
//! intermediate under an RSA-4096 root, or a P-256 leaf under a P-384
//! intermediate and root); the server sends leaf and intermediate, the
//! client trusts only the root. Web PKIs have no client identity: paths
//! refuse client authentication on them. The files are compiled in with `include_bytes!` so that a measured
//! child process reads nothing from disk and cannot fail on a working
//! directory that differs from `cargo test`'s. `scripts/generate-test-certs.sh`
//! made them (see `harnesses/certs/README.md`); they are test-only keys,
//! published on purpose. No harness loads a system trust store: a verifying
//! side trusts exactly its PKI's CA.

use std::net::IpAddr;

use ::rustls::pki_types::{CertificateDer, ServerName};
use regress_measure::HarnessError;

use super::error::{ensure, Context as _};
use super::pins::SignatureScheme;

/// The name the server leaves (all but [`Pki::EcdsaP256IpSan`]'s) are issued
/// for (their only SAN, `DNS:localhost`), the name clients send as SNI and
/// verify, and the only name a verify-host callback accepts.
pub const SERVER_NAME: &str = "localhost";

/// The address the IP-named server leaf is issued for (its only SAN,
/// `IP:127.0.0.1`, [`Pki::EcdsaP256IpSan`]): what its clients connect to and
/// verify, as text (how s2n-tls hands it to a verify-host callback).
pub const SERVER_IP: &str = "127.0.0.1";

/// What a client connects to: the name or address it verifies the server's
/// leaf against, and sends as SNI if it is a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name: sent as SNI, matched against the leaf's DNS names (or,
    /// for a leaf without any, its subject's CN).
    Dns(&'static str),
    /// An IP address, as text: matched against the leaf's IP addresses, and
    /// never sent as SNI (RFC 6066 section 3 allows host names only).
    Ip(&'static str),
}

impl Host {
    /// `localhost`, what every leaf but the IP-named one is issued for.
    pub const LOCALHOST: Host = Host::Dns(SERVER_NAME);

    /// The name or address, as text.
    pub const fn as_str(self) -> &'static str {
        match self {
            Host::Dns(name) | Host::Ip(name) => name,
        }
    }

    /// The SNI a client connecting to it sends: its name, or none for an
    /// address.
    pub const fn sni(self) -> Option<&'static str> {
        match self {
            Host::Dns(name) => Some(name),
            Host::Ip(_) => None,
        }
    }
}

/// A test PKI: its CA (or root and intermediate) and its leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pki {
    /// RSA-4096 CA and leaves.
    Rsa4096,
    /// ECDSA P-256 CA and leaves.
    EcdsaP256,
    /// RSA-2048 server leaf under an RSA-2048 intermediate under an RSA-4096
    /// root, sha256WithRSAEncryption throughout.
    WebRsa2048,
    /// ECDSA P-256 server leaf under a P-384 intermediate under a P-384 root,
    /// ecdsa-with-SHA384 throughout.
    WebEcdsaP256,
    /// The ECDSA P-256 laboratory PKI with a legacy server leaf that names
    /// `localhost` in its subject's CN only, with no subjectAltName: what a
    /// client's CN fallback verifies (RFC 6125 6.4.4 allows it when a
    /// certificate presents no DNS-ID; rustls-webpki never does it). Same
    /// CA and client identity as [`Pki::EcdsaP256`].
    EcdsaP256CnOnly,
    /// The ECDSA P-256 laboratory PKI whose client leaf also carries its
    /// identity in a private extension ([`IDENTITY_OID`], a UTF8String
    /// [`IDENTITY`]): what a server that authorizes clients by such an
    /// extension reads. Same CA and server leaf as [`Pki::EcdsaP256`].
    EcdsaP256ClientId,
    /// The ECDSA P-256 laboratory PKI with a server leaf for an IP address:
    /// its only subjectAltName is `IP:127.0.0.1` ([`SERVER_IP`]), no DNS
    /// name, so its clients connect to and verify that address, and send no
    /// SNI. Same CA and client identity as [`Pki::EcdsaP256`].
    EcdsaP256IpSan,
    /// The ECDSA P-256 laboratory PKI whose mTLS client sends one of the
    /// hostile chains of [`ClientChain`] (ECDSA P-256 throughout): what a
    /// hostile client makes a server's verifier walk. Same CA and server
    /// leaf as [`Pki::EcdsaP256`].
    EcdsaP256ClientChain(ClientChain),
    /// The RSA-4096 laboratory PKI whose mTLS client leaf has a larger RSA
    /// key ([`LargeRsa`]), signed by the same CA: what a server verifies
    /// the client's CertificateVerify with. Same CA and server leaf as
    /// [`Pki::Rsa4096`].
    Rsa4096LargeClient(LargeRsa),
}

/// A client RSA key size past the laboratory's 4096 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LargeRsa {
    /// RSA-8192: the largest rustls-webpki verifies (its RSA algorithms
    /// are `RSA_*_2048_8192_*`).
    Bits8192,
    /// RSA-16384: the largest aws-lc (`is_public_component_of_rsa_key_good`)
    /// and OpenSSL (`OPENSSL_RSA_MAX_MODULUS_BITS`) accept; rustls refuses
    /// it.
    Bits16384,
}

impl LargeRsa {
    /// The modulus's bits.
    pub const fn bits(self) -> u32 {
        match self {
            LargeRsa::Bits8192 => 8192,
            LargeRsa::Bits16384 => 16384,
        }
    }
}

/// A hostile mTLS client's certificate chain the repository carries
/// (`scripts/generate-test-certs.sh`): ladders as long as each verifier
/// accepts by default and one longer, and decoys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientChain {
    /// 5 intermediates in a ladder: with the leaf and the CA, the 7
    /// certificates s2n-tls reads of a peer's chain
    /// (`DEFAULT_MAX_CHAIN_DEPTH`).
    Five,
    /// 6: rustls-webpki's limit on intermediates (`MAX_SUB_CA_COUNT`).
    Six,
    /// 7: one past rustls-webpki's limit.
    Seven,
    /// 100: OpenSSL's default verify depth.
    Hundred,
    /// 101: one past OpenSSL's.
    HundredOne,
    /// 49 decoys, then the leaf's real issuer: intermediates of one name
    /// (the leaf's issuer's), each with a key of its own, signed by the CA,
    /// and no CA after them. rustls-webpki tries each candidate of that
    /// name in the order sent, checking two signatures for each (the CA's
    /// on it, its own on the leaf) until one verifies: 49 decoys and the
    /// real issuer are its 100 signature checks, its budget per
    /// verification. OpenSSL matches the issuer by its key identifier.
    Decoys49,
    /// 50 decoys: one past rustls-webpki's budget.
    Decoys50,
}

impl ClientChain {
    /// Every chain carried.
    pub const ALL: [ClientChain; 7] = [
        ClientChain::Five,
        ClientChain::Six,
        ClientChain::Seven,
        ClientChain::Hundred,
        ClientChain::HundredOne,
        ClientChain::Decoys49,
        ClientChain::Decoys50,
    ];

    /// Certificates the client sends: its leaf, the intermediates (or the
    /// decoys and the real issuer), and the CA after a ladder.
    pub const fn certificates(self) -> usize {
        match self {
            ClientChain::Five => 7,
            ClientChain::Six => 8,
            ClientChain::Seven => 9,
            ClientChain::Hundred => 102,
            ClientChain::HundredOne => 103,
            ClientChain::Decoys49 => 51,
            ClientChain::Decoys50 => 52,
        }
    }

    /// The chain of the same shape one step longer (an intermediate, a
    /// decoy) where the repository carries it: what a verifier at its limit
    /// with `self` must refuse.
    pub const fn next(self) -> Option<ClientChain> {
        match self {
            ClientChain::Five => Some(ClientChain::Six),
            ClientChain::Six => Some(ClientChain::Seven),
            ClientChain::Hundred => Some(ClientChain::HundredOne),
            ClientChain::Decoys49 => Some(ClientChain::Decoys50),
            ClientChain::Seven | ClientChain::HundredOne | ClientChain::Decoys50 => None,
        }
    }

    /// Whether it ends with the CA (a ladder) rather than the leaf's real
    /// issuer (decoys).
    pub const fn ends_with_the_ca(self) -> bool {
        !matches!(self, ClientChain::Decoys49 | ClientChain::Decoys50)
    }

    /// The chain's PEM: leaf, then the rest as sent.
    const fn pem(self) -> &'static [u8] {
        match self {
            ClientChain::Five => include_bytes!("../../certs/client-chain-5.pem"),
            ClientChain::Six => include_bytes!("../../certs/client-chain-6.pem"),
            ClientChain::Seven => include_bytes!("../../certs/client-chain-7.pem"),
            ClientChain::Hundred => include_bytes!("../../certs/client-chain-100.pem"),
            ClientChain::HundredOne => include_bytes!("../../certs/client-chain-101.pem"),
            ClientChain::Decoys49 => include_bytes!("../../certs/client-decoys-49.pem"),
            ClientChain::Decoys50 => include_bytes!("../../certs/client-decoys-50.pem"),
        }
    }
}

/// The private extension of [`Pki::EcdsaP256ClientId`]'s client leaf: an
/// OID under the enterprise number IANA reserves for documentation (32473,
/// RFC 5612; s2n-tls's lookup, through aws-lc's `OBJ_txt2obj`, refused a
/// UUID-based 2.25 OID, whose arc is a 128-bit number, when it was tried),
/// NUL-terminated for C APIs that take it as a C string. `scripts/generate-test-certs.sh`
/// issues the leaf with the same value.
pub const IDENTITY_OID: &[u8] = b"1.3.6.1.4.1.32473.1.1\0";

/// The UTF8String [`IDENTITY_OID`] holds in that leaf.
pub const IDENTITY: &str = "tenant-7/service-checkout";

impl Pki {
    /// The laboratory PKIs: a CA that signs its leaves directly, client
    /// leaves for mTLS.
    pub const ALL: [Pki; 2] = [Pki::Rsa4096, Pki::EcdsaP256];

    /// The web-shaped PKIs: root, intermediate, server leaf.
    pub const WEB: [Pki; 2] = [Pki::WebRsa2048, Pki::WebEcdsaP256];

    /// How paths name it: `rsa4096`, `ecdsa_p256`, `web_rsa2048`,
    /// `web_ecdsa_p256`, `ecdsa_p256_cn_only`, `ecdsa_p256_client_id`,
    /// `ecdsa_p256_ip_san`, `ecdsa_p256_client_chain`.
    pub const fn label(self) -> &'static str {
        match self {
            Pki::Rsa4096 => "rsa4096",
            Pki::EcdsaP256 => "ecdsa_p256",
            Pki::WebRsa2048 => "web_rsa2048",
            Pki::WebEcdsaP256 => "web_ecdsa_p256",
            Pki::EcdsaP256CnOnly => "ecdsa_p256_cn_only",
            Pki::EcdsaP256ClientId => "ecdsa_p256_client_id",
            Pki::EcdsaP256IpSan => "ecdsa_p256_ip_san",
            Pki::EcdsaP256ClientChain(_) => "ecdsa_p256_client_chain",
            Pki::Rsa4096LargeClient(LargeRsa::Bits8192) => "rsa4096_client_rsa8192",
            Pki::Rsa4096LargeClient(LargeRsa::Bits16384) => "rsa4096_client_rsa16384",
        }
    }

    /// Whether the server leaf names an IP address (its only
    /// subjectAltName), not a host name.
    pub const fn names_server_by_ip(self) -> bool {
        matches!(self, Pki::EcdsaP256IpSan)
    }

    /// What a client of this PKI's server connects to and verifies:
    /// [`SERVER_IP`] for the IP-named leaf, `localhost` for every other.
    pub const fn host(self) -> Host {
        if self.names_server_by_ip() {
            Host::Ip(SERVER_IP)
        } else {
            Host::LOCALHOST
        }
    }

    /// Whether the server leaf names its host in the subject's CN only (no
    /// subjectAltName), so that a client verifies it by CN fallback.
    pub const fn names_host_in_cn_only(self) -> bool {
        matches!(self, Pki::EcdsaP256CnOnly)
    }

    /// Whether it is web-shaped: the server sends an intermediate, and there
    /// is no client identity.
    pub const fn is_web(self) -> bool {
        matches!(self, Pki::WebRsa2048 | Pki::WebEcdsaP256)
    }

    /// The one handshake signature scheme the PKI's keys sign with, for the
    /// server's CertificateVerify (or TLS 1.2 ServerKeyExchange) and an mTLS
    /// client's CertificateVerify alike.
    pub const fn signature_scheme(self) -> SignatureScheme {
        match self {
            Pki::Rsa4096 | Pki::WebRsa2048 | Pki::Rsa4096LargeClient(_) => {
                SignatureScheme::RsaPssRsaeSha256
            }
            Pki::EcdsaP256
            | Pki::WebEcdsaP256
            | Pki::EcdsaP256CnOnly
            | Pki::EcdsaP256ClientId
            | Pki::EcdsaP256IpSan
            | Pki::EcdsaP256ClientChain(_) => SignatureScheme::EcdsaSecp256r1Sha256,
        }
    }

    /// The self-signed CA (laboratory) or root (web) certificate, PEM: the
    /// only certificate a verifying side trusts.
    pub const fn ca_pem(self) -> &'static [u8] {
        match self {
            Pki::Rsa4096 | Pki::Rsa4096LargeClient(_) => include_bytes!("../../certs/ca.pem"),
            Pki::EcdsaP256
            | Pki::EcdsaP256CnOnly
            | Pki::EcdsaP256ClientId
            | Pki::EcdsaP256IpSan
            | Pki::EcdsaP256ClientChain(_) => include_bytes!("../../certs/ecdsa-ca.pem"),
            Pki::WebRsa2048 => include_bytes!("../../certs/web-rsa-root.pem"),
            Pki::WebEcdsaP256 => include_bytes!("../../certs/web-ecdsa-root.pem"),
        }
    }

    /// The chain the server sends, PEM: its leaf for `localhost` (or
    /// [`SERVER_IP`], [`Pki::host`]), then the
    /// CA (laboratory) or the intermediate (web; the root is not sent).
    pub const fn server_chain_pem(self) -> &'static [u8] {
        match self {
            Pki::Rsa4096 | Pki::Rsa4096LargeClient(_) => include_bytes!("../../certs/leaf.pem"),
            Pki::EcdsaP256 | Pki::EcdsaP256ClientId | Pki::EcdsaP256ClientChain(_) => {
                include_bytes!("../../certs/ecdsa-leaf.pem")
            }
            Pki::WebRsa2048 => include_bytes!("../../certs/web-rsa-leaf.pem"),
            Pki::WebEcdsaP256 => include_bytes!("../../certs/web-ecdsa-leaf.pem"),
            Pki::EcdsaP256CnOnly => include_bytes!("../../certs/ecdsa-cn-leaf.pem"),
            Pki::EcdsaP256IpSan => include_bytes!("../../certs/ecdsa-ip-leaf.pem"),
        }
    }

    /// The server leaf's private key (PKCS#8 PEM).
    pub const fn server_key_pem(self) -> &'static [u8] {
        match self {
            Pki::Rsa4096 | Pki::Rsa4096LargeClient(_) => include_bytes!("../../certs/leaf.key"),
            Pki::EcdsaP256 | Pki::EcdsaP256ClientId | Pki::EcdsaP256ClientChain(_) => {
                include_bytes!("../../certs/ecdsa-leaf.key")
            }
            Pki::WebRsa2048 => include_bytes!("../../certs/web-rsa-leaf.key"),
            Pki::WebEcdsaP256 => include_bytes!("../../certs/web-ecdsa-leaf.key"),
            Pki::EcdsaP256CnOnly => include_bytes!("../../certs/ecdsa-cn-leaf.key"),
            Pki::EcdsaP256IpSan => include_bytes!("../../certs/ecdsa-ip-leaf.key"),
        }
    }

    /// The mTLS client's chain (leaf, then the CA), PEM. The RSA client leaf
    /// is CN "regress test client"; both client leaves also name `localhost`.
    /// Empty for a web PKI, which has no client identity (paths refuse
    /// client authentication on it, so nothing loads it).
    pub const fn client_chain_pem(self) -> &'static [u8] {
        match self {
            Pki::Rsa4096 => include_bytes!("../../certs/client-rsa.pem"),
            Pki::Rsa4096LargeClient(LargeRsa::Bits8192) => {
                include_bytes!("../../certs/client-rsa8192.pem")
            }
            Pki::Rsa4096LargeClient(LargeRsa::Bits16384) => {
                include_bytes!("../../certs/client-rsa16384.pem")
            }
            Pki::EcdsaP256 | Pki::EcdsaP256CnOnly | Pki::EcdsaP256IpSan => {
                include_bytes!("../../certs/client-ecdsa.pem")
            }
            Pki::EcdsaP256ClientId => include_bytes!("../../certs/client-ecdsa-id.pem"),
            Pki::EcdsaP256ClientChain(chain) => chain.pem(),
            Pki::WebRsa2048 | Pki::WebEcdsaP256 => b"",
        }
    }

    /// The client leaf's private key (PKCS#8 PEM); empty for a web PKI.
    pub const fn client_key_pem(self) -> &'static [u8] {
        match self {
            Pki::Rsa4096 => include_bytes!("../../certs/client-rsa.key"),
            Pki::Rsa4096LargeClient(LargeRsa::Bits8192) => {
                include_bytes!("../../certs/client-rsa8192.key")
            }
            Pki::Rsa4096LargeClient(LargeRsa::Bits16384) => {
                include_bytes!("../../certs/client-rsa16384.key")
            }
            Pki::EcdsaP256 | Pki::EcdsaP256CnOnly | Pki::EcdsaP256IpSan => {
                include_bytes!("../../certs/client-ecdsa.key")
            }
            Pki::EcdsaP256ClientId => include_bytes!("../../certs/client-ecdsa-id.key"),
            Pki::EcdsaP256ClientChain(_) => include_bytes!("../../certs/client-chain.key"),
            Pki::WebRsa2048 | Pki::WebEcdsaP256 => b"",
        }
    }

    /// Another PKI of the same key type's counterpart: a client trusting it
    /// must reject this one's server.
    pub const fn other(self) -> Pki {
        match self {
            Pki::Rsa4096 | Pki::Rsa4096LargeClient(_) => Pki::EcdsaP256,
            Pki::EcdsaP256
            | Pki::EcdsaP256CnOnly
            | Pki::EcdsaP256ClientId
            | Pki::EcdsaP256IpSan
            | Pki::EcdsaP256ClientChain(_) => Pki::Rsa4096,
            Pki::WebRsa2048 => Pki::WebEcdsaP256,
            Pki::WebEcdsaP256 => Pki::WebRsa2048,
        }
    }
}

/// Checks that the server leaf `leaf_der` (DER, as a client received it)
/// names what `pki`'s clients connect to, in the form they connect by:
/// the IP-named PKI's leaf is valid for [`SERVER_IP`] and not for
/// `localhost` (an IP address among its subjectAltNames, no DNS name that
/// matches); every other PKI's leaf is not valid for [`SERVER_IP`] (no IP
/// address). Matched as rustls-webpki matches subjectAltNames (never the
/// CN), which parses without global state: every library's check can call
/// it, outside any count.
pub fn check_leaf_names(pki: Pki, leaf_der: &[u8]) -> Result<(), HarnessError> {
    let der = CertificateDer::from(leaf_der);
    let leaf = ::webpki::EndEntityCert::try_from(&der).context("parsing the server's leaf")?;
    let ip: IpAddr = SERVER_IP.parse().context("parsing the server's address")?;
    let localhost = ServerName::try_from(SERVER_NAME).context("the server name")?;
    let for_ip = leaf
        .verify_is_valid_for_subject_name(&ServerName::from(ip))
        .is_ok();
    let for_localhost = leaf.verify_is_valid_for_subject_name(&localhost).is_ok();
    let by_ip = pki.names_server_by_ip();
    ensure(for_ip == by_ip, || {
        format!(
            "the server's leaf is {}valid for {SERVER_IP}, and the path's PKI {} its server by IP address",
            if for_ip { "" } else { "not " },
            if by_ip { "names" } else { "does not name" }
        )
    })?;
    ensure(!(by_ip && for_localhost), || {
        format!("the IP-named server leaf is also valid for {SERVER_NAME}")
    })
}

/// A PKI's PEM files, copied from the binary to the heap.
///
/// Libraries parse PEM with copies whose instruction count depends on the
/// buffers' alignment. The alignment of data embedded in the binary moves
/// whenever unrelated code changes; a fresh allocation's does not. So every
/// harness that counts parsing (config builds) parses these copies, made in
/// `setup`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PemCopies {
    pub ca: Vec<u8>,
    pub server_chain: Vec<u8>,
    pub server_key: Vec<u8>,
    pub client_chain: Vec<u8>,
    pub client_key: Vec<u8>,
}

impl PemCopies {
    /// Heap copies of `pki`'s files.
    pub fn of(pki: Pki) -> PemCopies {
        PemCopies {
            ca: pki.ca_pem().to_vec(),
            server_chain: pki.server_chain_pem().to_vec(),
            server_key: pki.server_key_pem().to_vec(),
            client_chain: pki.client_chain_pem().to_vec(),
            client_key: pki.client_key_pem().to_vec(),
        }
    }
}

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
        for pki in Pki::ALL {
            assert_eq!(count(pki.ca_pem(), "CERTIFICATE"), 1, "{pki:?}");
            for chain in [pki.server_chain_pem(), pki.client_chain_pem()] {
                assert_eq!(count(chain, "CERTIFICATE"), 2, "{pki:?}: leaf then CA");
                assert!(chain.ends_with(pki.ca_pem()), "{pki:?}: ends with its CA");
            }
            for key in [pki.server_key_pem(), pki.client_key_pem()] {
                assert_eq!(count(key, "PRIVATE KEY"), 1, "{pki:?}");
            }
        }
        assert_ne!(Pki::Rsa4096.ca_pem(), Pki::EcdsaP256.ca_pem());
        for pki in Pki::WEB {
            assert_eq!(count(pki.ca_pem(), "CERTIFICATE"), 1, "{pki:?}");
            let chain = pki.server_chain_pem();
            assert_eq!(
                count(chain, "CERTIFICATE"),
                2,
                "{pki:?}: leaf, intermediate"
            );
            assert!(
                !chain.ends_with(pki.ca_pem()),
                "{pki:?}: the root is not sent"
            );
            assert_eq!(count(pki.server_key_pem(), "PRIVATE KEY"), 1, "{pki:?}");
            assert!(pki.client_chain_pem().is_empty() && pki.is_web());
            assert_eq!(pki.other().other(), pki);
        }
        assert_eq!(Pki::Rsa4096.other(), Pki::EcdsaP256);
        assert_eq!(Pki::EcdsaP256.other(), Pki::Rsa4096);
    }

    /// The DER of `pki`'s server leaf (the first certificate of its chain).
    fn leaf_der(pki: Pki) -> Vec<u8> {
        use ::rustls::pki_types::pem::PemObject;
        CertificateDer::pem_slice_iter(pki.server_chain_pem())
            .next()
            .expect("a certificate")
            .expect("PEM")
            .to_vec()
    }

    /// The IP-named PKI is the laboratory ECDSA one but for its server leaf,
    /// and its host is an address that parses; every other PKI's host is
    /// `localhost`, sent as SNI.
    #[test]
    fn the_ip_named_pki_connects_to_an_address() {
        let pki = Pki::EcdsaP256IpSan;
        assert_eq!(pki.host(), Host::Ip(SERVER_IP));
        assert_eq!(pki.host().sni(), None);
        assert_eq!(
            SERVER_IP.parse::<std::net::IpAddr>(),
            Ok(std::net::Ipv4Addr::LOCALHOST.into())
        );
        assert_eq!(pki.ca_pem(), Pki::EcdsaP256.ca_pem());
        assert_eq!(pki.client_chain_pem(), Pki::EcdsaP256.client_chain_pem());
        assert_ne!(pki.server_chain_pem(), Pki::EcdsaP256.server_chain_pem());
        assert_eq!(count(pki.server_chain_pem(), "CERTIFICATE"), 2);
        assert!(pki.server_chain_pem().ends_with(pki.ca_pem()));
        check_leaf_names(pki, &leaf_der(pki)).expect("the IP leaf names its address");
        assert!(check_leaf_names(Pki::EcdsaP256, &leaf_der(pki)).is_err());
        assert!(check_leaf_names(pki, &leaf_der(Pki::EcdsaP256)).is_err());
        assert!(check_leaf_names(pki, &leaf_der(Pki::EcdsaP256CnOnly)).is_err());
        for other in Pki::ALL.into_iter().chain(Pki::WEB) {
            check_leaf_names(other, &leaf_der(other)).expect("a leaf for localhost");
            assert_eq!(other.host(), Host::LOCALHOST, "{other:?}");
            assert_eq!(other.host().sni(), Some(SERVER_NAME), "{other:?}");
        }
    }

    #[test]
    fn copies_are_equal_to_the_embedded_files() {
        let copies = PemCopies::of(Pki::EcdsaP256);
        assert_eq!(copies.ca, Pki::EcdsaP256.ca_pem());
        assert_eq!(copies.client_key, Pki::EcdsaP256.client_key_pem());
    }
}
