//! The fairness pins, as typed values every library maps, and the one
//! comparison of what a path pins with what a connection negotiated.
//!
//! On a shared path the three TLS libraries must negotiate the same thing,
//! or their counts compare defaults rather than code (left alone, s2n-tls
//! picks AES-128-GCM with secp256r1, rustls AES-256-GCM with X25519MLKEM768,
//! OpenSSL AES-256-GCM with X25519). So every path pins a protocol version,
//! a cipher suite, a key-exchange group and a handshake signature scheme
//! ([`Pins`]); each library builds its configs from them (a security policy,
//! a crypto provider, an `SslContext`) and, after the handshake, reports
//! what it negotiated as a [`Negotiated`] per side. [`Expected::check`]
//! compares the two and words the error. A library upgrade that changes a
//! default therefore fails a check instead of silently moving a count.

use std::fmt;

use regress_measure::HarnessError;

/// A protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

impl TlsVersion {
    /// `TLS 1.2`, `TLS 1.3`.
    pub const fn name(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "TLS 1.2",
            TlsVersion::Tls13 => "TLS 1.3",
        }
    }
}

/// What protects records: an AEAD, whatever the protocol version, or
/// TLS 1.2's AES-CBC with HMAC-SHA1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cipher {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
    /// AES-128 in CBC mode with an HMAC-SHA1 tag (TLS 1.2 only): what old
    /// clients, embedded stacks and the 2017-era policies still in service
    /// negotiate. Not an AEAD: the MAC is computed over the plaintext and
    /// encrypted with it (MAC-then-encrypt), unless both peers agree on
    /// encrypt-then-MAC (RFC 7366), as two OpenSSL peers do.
    Aes128CbcSha,
}

impl Cipher {
    /// Every AEAD, in the order paths list them.
    pub const AEADS: [Cipher; 3] = [
        Cipher::Aes128Gcm,
        Cipher::Aes256Gcm,
        Cipher::ChaCha20Poly1305,
    ];

    /// How paths name it: `aes128gcm`, `aes256gcm`, `chacha20poly1305`,
    /// `aes128cbc_sha`.
    pub const fn label(self) -> &'static str {
        match self {
            Cipher::Aes128Gcm => "aes128gcm",
            Cipher::Aes256Gcm => "aes256gcm",
            Cipher::ChaCha20Poly1305 => "chacha20poly1305",
            Cipher::Aes128CbcSha => "aes128cbc_sha",
        }
    }

    /// Whether it is an AEAD (every cipher but CBC).
    pub const fn is_aead(self) -> bool {
        !matches!(self, Cipher::Aes128CbcSha)
    }

    /// What a path or library says when it needs an AEAD and was given
    /// this cipher (one wording for every caller).
    pub fn not_an_aead(self) -> String {
        format!("{} is not an AEAD", self.label())
    }
}

/// A cipher suite a path can pin. TLS 1.2 suites are the ECDHE-RSA ones:
/// TLS 1.2 paths authenticate with the RSA-4096 PKI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CipherSuite {
    Tls13Aes128GcmSha256,
    Tls13Aes256GcmSha384,
    Tls13ChaCha20Poly1305Sha256,
    EcdheRsaAes128GcmSha256,
    EcdheRsaAes256GcmSha384,
    EcdheRsaChaCha20Poly1305Sha256,
    EcdheRsaAes128CbcSha,
    /// TLS 1.2's finite-field Diffie-Hellman counterpart of
    /// ECDHE-RSA-AES128-GCM-SHA256.
    DheRsaAes128GcmSha256,
}

impl CipherSuite {
    /// Every suite, for lookups.
    pub const ALL: [CipherSuite; 8] = [
        CipherSuite::Tls13Aes128GcmSha256,
        CipherSuite::Tls13Aes256GcmSha384,
        CipherSuite::Tls13ChaCha20Poly1305Sha256,
        CipherSuite::EcdheRsaAes128GcmSha256,
        CipherSuite::EcdheRsaAes256GcmSha384,
        CipherSuite::EcdheRsaChaCha20Poly1305Sha256,
        CipherSuite::EcdheRsaAes128CbcSha,
        CipherSuite::DheRsaAes128GcmSha256,
    ];

    /// The suite of `version` that protects records with `cipher`. CBC has
    /// a TLS 1.2 suite only, which this gives for either version (a path
    /// pinning TLS 1.3 with it fails `Record::validate`, and would fail the
    /// check: the suite's version is not the pinned one).
    pub const fn new(version: TlsVersion, cipher: Cipher) -> CipherSuite {
        match (version, cipher) {
            (_, Cipher::Aes128CbcSha) => CipherSuite::EcdheRsaAes128CbcSha,
            (TlsVersion::Tls13, Cipher::Aes128Gcm) => CipherSuite::Tls13Aes128GcmSha256,
            (TlsVersion::Tls13, Cipher::Aes256Gcm) => CipherSuite::Tls13Aes256GcmSha384,
            (TlsVersion::Tls13, Cipher::ChaCha20Poly1305) => {
                CipherSuite::Tls13ChaCha20Poly1305Sha256
            }
            (TlsVersion::Tls12, Cipher::Aes128Gcm) => CipherSuite::EcdheRsaAes128GcmSha256,
            (TlsVersion::Tls12, Cipher::Aes256Gcm) => CipherSuite::EcdheRsaAes256GcmSha384,
            (TlsVersion::Tls12, Cipher::ChaCha20Poly1305) => {
                CipherSuite::EcdheRsaChaCha20Poly1305Sha256
            }
        }
    }

    /// Its code point in the IANA registry (what rustls reports).
    pub const fn iana(self) -> u16 {
        match self {
            CipherSuite::Tls13Aes128GcmSha256 => 0x1301,
            CipherSuite::Tls13Aes256GcmSha384 => 0x1302,
            CipherSuite::Tls13ChaCha20Poly1305Sha256 => 0x1303,
            CipherSuite::EcdheRsaAes128GcmSha256 => 0xc02f,
            CipherSuite::EcdheRsaAes256GcmSha384 => 0xc030,
            CipherSuite::EcdheRsaChaCha20Poly1305Sha256 => 0xcca8,
            CipherSuite::EcdheRsaAes128CbcSha => 0xc013,
            CipherSuite::DheRsaAes128GcmSha256 => 0x009e,
        }
    }

    /// Its OpenSSL name, which s2n-tls reports too: the IANA name for
    /// TLS 1.3 suites, OpenSSL's own for TLS 1.2 ones.
    pub const fn name(self) -> &'static str {
        match self {
            CipherSuite::Tls13Aes128GcmSha256 => "TLS_AES_128_GCM_SHA256",
            CipherSuite::Tls13Aes256GcmSha384 => "TLS_AES_256_GCM_SHA384",
            CipherSuite::Tls13ChaCha20Poly1305Sha256 => "TLS_CHACHA20_POLY1305_SHA256",
            CipherSuite::EcdheRsaAes128GcmSha256 => "ECDHE-RSA-AES128-GCM-SHA256",
            CipherSuite::EcdheRsaAes256GcmSha384 => "ECDHE-RSA-AES256-GCM-SHA384",
            CipherSuite::EcdheRsaChaCha20Poly1305Sha256 => "ECDHE-RSA-CHACHA20-POLY1305",
            CipherSuite::EcdheRsaAes128CbcSha => "ECDHE-RSA-AES128-SHA",
            CipherSuite::DheRsaAes128GcmSha256 => "DHE-RSA-AES128-GCM-SHA256",
        }
    }

    /// The protocol version the suite belongs to.
    pub const fn version(self) -> TlsVersion {
        match self {
            CipherSuite::Tls13Aes128GcmSha256
            | CipherSuite::Tls13Aes256GcmSha384
            | CipherSuite::Tls13ChaCha20Poly1305Sha256 => TlsVersion::Tls13,
            _ => TlsVersion::Tls12,
        }
    }

    /// A library's report, by OpenSSL name.
    pub fn from_name(name: &str) -> Seen<CipherSuite> {
        Seen::find(CipherSuite::ALL, |suite| suite.name() == name, name)
    }

    /// A library's report, by IANA code point.
    pub fn from_iana(code: u16) -> Seen<CipherSuite> {
        Seen::find(CipherSuite::ALL, |suite| suite.iana() == code, code)
    }
}

/// A key-exchange group. The laboratory paths pin secp256r1 (every library
/// can, so they compare); X25519 and the post-quantum hybrid X25519MLKEM768
/// (ML-KEM-768 with X25519, the default of rustls, of s2n-tls's `default_pq`
/// policy, of OpenSSL 3.5 and of browsers in 2026) are what real
/// connections negotiate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedGroup {
    Secp256r1,
    X25519,
    X25519MlKem768,
    /// RFC 7919's 2048-bit finite-field group, as the DH parameters a
    /// TLS 1.2 DHE server is configured with ([`NamedGroup::dh_params_pem`]):
    /// s2n-tls and OpenSSL do not negotiate it by name in TLS 1.2, they use
    /// the server's parameters, and report no group
    /// ([`Expected::group`]).
    Ffdhe2048,
}

impl NamedGroup {
    /// Every group, for lookups.
    pub const ALL: [NamedGroup; 4] = [
        NamedGroup::Secp256r1,
        NamedGroup::X25519,
        NamedGroup::X25519MlKem768,
        NamedGroup::Ffdhe2048,
    ];

    /// Its TLS name, as s2n-tls and OpenSSL report it.
    pub const fn name(self) -> &'static str {
        match self {
            NamedGroup::Secp256r1 => "secp256r1",
            NamedGroup::X25519 => "x25519",
            NamedGroup::X25519MlKem768 => "X25519MLKEM768",
            NamedGroup::Ffdhe2048 => "ffdhe2048",
        }
    }

    /// How path names carry it: `secp256r1`, `x25519`, `x25519mlkem768`.
    pub const fn label(self) -> &'static str {
        match self {
            NamedGroup::Secp256r1 => "secp256r1",
            NamedGroup::X25519 => "x25519",
            NamedGroup::X25519MlKem768 => "x25519mlkem768",
            NamedGroup::Ffdhe2048 => "ffdhe2048",
        }
    }

    /// Its IANA code point (what rustls reports).
    pub const fn iana(self) -> u16 {
        match self {
            NamedGroup::Secp256r1 => 23,
            NamedGroup::X25519 => 29,
            NamedGroup::X25519MlKem768 => 0x11ec,
            NamedGroup::Ffdhe2048 => 0x0100,
        }
    }

    /// Whether it is a finite-field (DHE) group.
    pub const fn is_finite_field(self) -> bool {
        matches!(self, NamedGroup::Ffdhe2048)
    }

    /// The PKCS#3 DH parameters a server of this group is configured with
    /// (finite-field groups only).
    pub const fn dh_params_pem(self) -> Option<&'static [u8]> {
        match self {
            NamedGroup::Ffdhe2048 => Some(include_bytes!("../../certs/ffdhe2048.pem")),
            _ => None,
        }
    }

    /// Whether it is a post-quantum hybrid.
    pub const fn is_post_quantum(self) -> bool {
        matches!(self, NamedGroup::X25519MlKem768)
    }

    /// A library's report, by name (OpenSSL writes X25519 in capitals).
    pub fn from_name(name: &str) -> Seen<NamedGroup> {
        Seen::find(
            NamedGroup::ALL,
            |group| group.name().eq_ignore_ascii_case(name),
            name,
        )
    }

    /// A library's report, by IANA code point.
    pub fn from_iana(code: u16) -> Seen<NamedGroup> {
        Seen::find(NamedGroup::ALL, |group| group.iana() == code, code)
    }
}

/// A handshake signature scheme (CertificateVerify, TLS 1.2
/// ServerKeyExchange). Each PKI's keys sign with exactly one
/// (`Pki::signature_scheme`), except on the CBC record paths, whose
/// 2017-era peers sign with PKCS#1 v1.5 (`Record::profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureScheme {
    RsaPssRsaeSha256,
    EcdsaSecp256r1Sha256,
    RsaPkcs1Sha256,
}

impl SignatureScheme {
    /// Its TLS 1.3 name, as s2n-tls reports it and OpenSSL takes it.
    pub const fn name(self) -> &'static str {
        match self {
            SignatureScheme::RsaPssRsaeSha256 => "rsa_pss_rsae_sha256",
            SignatureScheme::EcdsaSecp256r1Sha256 => "ecdsa_secp256r1_sha256",
            SignatureScheme::RsaPkcs1Sha256 => "rsa_pkcs1_sha256",
        }
    }

    /// Its IANA code point (what rustls reports).
    pub const fn iana(self) -> u16 {
        match self {
            SignatureScheme::RsaPssRsaeSha256 => 0x0804,
            SignatureScheme::EcdsaSecp256r1Sha256 => 0x0403,
            SignatureScheme::RsaPkcs1Sha256 => 0x0401,
        }
    }

    const ALL: [SignatureScheme; 3] = [
        SignatureScheme::RsaPssRsaeSha256,
        SignatureScheme::EcdsaSecp256r1Sha256,
        SignatureScheme::RsaPkcs1Sha256,
    ];

    /// A library's report, by name.
    pub fn from_name(name: &str) -> Seen<SignatureScheme> {
        Seen::find(SignatureScheme::ALL, |scheme| scheme.name() == name, name)
    }

    /// A library's report, by IANA code point.
    pub fn from_iana(code: u16) -> Seen<SignatureScheme> {
        Seen::find(SignatureScheme::ALL, |scheme| scheme.iana() == code, code)
    }
}

/// What a path pins: the parameters all libraries must negotiate on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pins {
    pub version: TlsVersion,
    pub suite: CipherSuite,
    pub group: NamedGroup,
    /// The scheme of every handshake signature (server, and mTLS client).
    pub scheme: SignatureScheme,
}

/// What a finished handshake must show: the pins, and what kind of
/// handshake it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub pins: Pins,
    /// The server required, and the client sent, a certificate.
    pub client_auth: bool,
    /// Resumed from a ticket: no certificate, no handshake signature.
    pub resumed: bool,
    /// The server answered the ClientHello with a HelloRetryRequest (the
    /// client's first key share was for a group the server does not take).
    pub retried: bool,
}

impl Expected {
    /// The server's handshake signature, unless the handshake resumed.
    pub fn server_signature(&self) -> Option<SignatureScheme> {
        (!self.resumed).then_some(self.pins.scheme)
    }

    /// The key-exchange group, unless a TLS 1.2 handshake resumed: its
    /// abbreviated handshake exchanges no key (TLS 1.3 resumption keeps
    /// an (EC)DHE exchange for forward secrecy). A TLS 1.2 DHE handshake
    /// reports none either: its group is the server's configured
    /// parameters, not a negotiation, and its suite (DHE-RSA-...) is what
    /// proves the key exchange.
    pub fn group(&self) -> Option<NamedGroup> {
        let tls12 = self.pins.version == TlsVersion::Tls12;
        (!(tls12 && (self.resumed || self.pins.group.is_finite_field()))).then_some(self.pins.group)
    }

    /// The client's handshake signature, with client authentication only.
    pub fn client_signature(&self) -> Option<SignatureScheme> {
        (self.client_auth && !self.resumed).then_some(self.pins.scheme)
    }

    /// Compares what each side (`(name, what it negotiated)`) reports with
    /// what is expected; the error names the side, the parameter, what was
    /// negotiated and what was pinned.
    pub fn check(&self, sides: &[(&str, Negotiated)]) -> Result<(), HarnessError> {
        for (side, seen) in sides {
            compare(side, "version", &seen.version, Some(self.pins.version))?;
            compare(side, "cipher suite", &seen.suite, Some(self.pins.suite))?;
            compare(side, "group", &seen.group, self.group())?;
            if let Some(retried) = seen.retried {
                if retried != self.retried {
                    return Err(format!(
                        "{side}: HelloRetryRequest is {retried}, expected {}",
                        self.retried
                    )
                    .into());
                }
            }
            if seen.resumed != self.resumed {
                return Err(format!(
                    "{side}: resumed is {}, expected {} (a {} handshake)",
                    seen.resumed,
                    self.resumed,
                    if self.resumed { "resumed" } else { "full" }
                )
                .into());
            }
            compare(
                side,
                "server signature",
                &seen.server_signature,
                self.server_signature(),
            )?;
            compare(
                side,
                "client signature",
                &seen.client_signature,
                self.client_signature(),
            )?;
        }
        Ok(())
    }
}

/// One parameter as a library reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen<T> {
    /// There is none (no signature after a resumption, say).
    Nothing,
    /// A value the pins know.
    Is(T),
    /// A value no path pins, in the library's own words.
    Other(String),
    /// This side cannot tell: a rustls endpoint does not report the scheme
    /// it signed with itself (only its verifier sees the peer's, and only
    /// until the handshake's check takes it). Not compared; the other
    /// side's report, or the check right after the handshake, covers it.
    NotVisible,
}

impl<T: Copy> Seen<T> {
    /// The value among `all` that `matches`, or `Other(report)`.
    fn find(
        all: impl IntoIterator<Item = T>,
        matches: impl Fn(T) -> bool,
        report: impl fmt::Display,
    ) -> Seen<T> {
        match all.into_iter().find(|value| matches(*value)) {
            Some(value) => Seen::Is(value),
            None => Seen::Other(report.to_string()),
        }
    }
}

/// What one side of a connection negotiated, as its library reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    pub version: Seen<TlsVersion>,
    pub suite: Seen<CipherSuite>,
    pub group: Seen<NamedGroup>,
    pub resumed: bool,
    /// Whether the handshake took a HelloRetryRequest, where this side's
    /// library can tell (`None`: it cannot; its check proves it otherwise).
    pub retried: Option<bool>,
    /// The server's handshake signature, as this side knows it.
    pub server_signature: Seen<SignatureScheme>,
    /// The client's handshake signature, as this side knows it.
    pub client_signature: Seen<SignatureScheme>,
}

/// Something a [`Seen`] can name in a message.
trait Named: Copy + PartialEq {
    fn named(self) -> &'static str;
}

impl Named for TlsVersion {
    fn named(self) -> &'static str {
        self.name()
    }
}

impl Named for CipherSuite {
    fn named(self) -> &'static str {
        self.name()
    }
}

impl Named for NamedGroup {
    fn named(self) -> &'static str {
        self.name()
    }
}

impl Named for SignatureScheme {
    fn named(self) -> &'static str {
        self.name()
    }
}

fn compare<T: Named>(
    side: &str,
    what: &str,
    seen: &Seen<T>,
    expected: Option<T>,
) -> Result<(), HarnessError> {
    let matches = match (seen, expected) {
        (Seen::NotVisible, _) => true,
        (Seen::Nothing, None) => true,
        (Seen::Is(value), Some(pinned)) => *value == pinned,
        _ => false,
    };
    if matches {
        return Ok(());
    }
    let seen = match seen {
        Seen::Nothing => "none".to_owned(),
        Seen::Is(value) => value.named().to_owned(),
        Seen::Other(report) => format!("{report} (pinned by no path)"),
        Seen::NotVisible => unreachable!("never a mismatch"),
    };
    let expected = expected.map_or("none", Named::named);
    Err(format!("{side}: negotiated {what} {seen}, expected {expected}").into())
}

/// For negative tests, in every library: `good` with each pinned parameter
/// changed in turn, named. A check that accepts the real handshake must
/// reject every one of them.
#[cfg(test)]
pub fn every_other_expectation(good: &Expected) -> Vec<(&'static str, Expected)> {
    let mut wrong = Vec::new();
    let mut with = |what, change: &dyn Fn(&mut Expected)| {
        let mut expected = *good;
        change(&mut expected);
        wrong.push((what, expected));
    };
    with("version", &|e| {
        e.pins.version = match e.pins.version {
            TlsVersion::Tls12 => TlsVersion::Tls13,
            TlsVersion::Tls13 => TlsVersion::Tls12,
        }
    });
    with("suite", &|e| {
        e.pins.suite = match e.pins.suite {
            CipherSuite::Tls13Aes128GcmSha256 => CipherSuite::Tls13Aes256GcmSha384,
            _ => CipherSuite::Tls13Aes128GcmSha256,
        }
    });
    with("group", &|e| {
        e.pins.group = match e.pins.group {
            NamedGroup::X25519 => NamedGroup::Secp256r1,
            _ => NamedGroup::X25519,
        }
    });
    with("hello retry", &|e| e.retried = !e.retried);
    with("scheme", &|e| {
        e.pins.scheme = match e.pins.scheme {
            SignatureScheme::RsaPssRsaeSha256 => SignatureScheme::EcdsaSecp256r1Sha256,
            SignatureScheme::EcdsaSecp256r1Sha256 | SignatureScheme::RsaPkcs1Sha256 => {
                SignatureScheme::RsaPssRsaeSha256
            }
        }
    });
    with("client auth", &|e| e.client_auth = !e.client_auth);
    with("resumed", &|e| e.resumed = !e.resumed);
    wrong
}

#[cfg(test)]
mod tests {
    use super::*;

    const PINS: Pins = Pins {
        version: TlsVersion::Tls13,
        suite: CipherSuite::Tls13Aes128GcmSha256,
        group: NamedGroup::Secp256r1,
        scheme: SignatureScheme::RsaPssRsaeSha256,
    };

    fn full(client_auth: bool) -> Negotiated {
        Negotiated {
            version: Seen::Is(TlsVersion::Tls13),
            suite: Seen::Is(CipherSuite::Tls13Aes128GcmSha256),
            group: Seen::Is(NamedGroup::Secp256r1),
            resumed: false,
            retried: Some(false),
            server_signature: Seen::Is(SignatureScheme::RsaPssRsaeSha256),
            client_signature: if client_auth {
                Seen::Is(SignatureScheme::RsaPssRsaeSha256)
            } else {
                Seen::Nothing
            },
        }
    }

    #[test]
    fn names_and_codes_round_trip() {
        for suite in CipherSuite::ALL {
            assert_eq!(CipherSuite::from_name(suite.name()), Seen::Is(suite));
            assert_eq!(CipherSuite::from_iana(suite.iana()), Seen::Is(suite));
        }
        for version in [TlsVersion::Tls12, TlsVersion::Tls13] {
            for cipher in Cipher::AEADS {
                assert_eq!(CipherSuite::new(version, cipher).version(), version);
            }
            // CBC has a TLS 1.2 suite only.
            let cbc = CipherSuite::new(version, Cipher::Aes128CbcSha);
            assert_eq!(cbc.version(), TlsVersion::Tls12);
        }
        for scheme in SignatureScheme::ALL {
            assert_eq!(SignatureScheme::from_name(scheme.name()), Seen::Is(scheme));
            assert_eq!(SignatureScheme::from_iana(scheme.iana()), Seen::Is(scheme));
        }
        assert_eq!(NamedGroup::from_iana(23), Seen::Is(NamedGroup::Secp256r1));
        for group in NamedGroup::ALL {
            assert_eq!(NamedGroup::from_name(group.name()), Seen::Is(group));
            assert_eq!(NamedGroup::from_iana(group.iana()), Seen::Is(group));
        }
        assert_eq!(
            NamedGroup::from_name("X25519"),
            Seen::Is(NamedGroup::X25519)
        );
        assert_eq!(
            NamedGroup::from_name("SecP256r1MLKEM768"),
            Seen::Other("SecP256r1MLKEM768".into())
        );
    }

    #[test]
    fn check_accepts_exactly_the_expected_handshake() {
        for client_auth in [false, true] {
            let good = Expected {
                pins: PINS,
                client_auth,
                resumed: false,
                retried: false,
            };
            let sides = [("client", full(client_auth)), ("server", full(client_auth))];
            good.check(&sides).expect("the real parameters");
            for (what, wrong) in every_other_expectation(&good) {
                assert!(wrong.check(&sides).is_err(), "{what}");
            }
        }
    }

    #[test]
    fn a_resumed_handshake_has_no_signatures() {
        let resumed = Expected {
            pins: PINS,
            client_auth: false,
            resumed: true,
            retried: false,
        };
        let seen = Negotiated {
            resumed: true,
            server_signature: Seen::Nothing,
            ..full(false)
        };
        resumed.check(&[("client", seen.clone())]).expect("resumed");
        let error = resumed
            .check(&[("server", full(false))])
            .expect_err("a full handshake");
        assert!(error.to_string().contains("resumed is false"), "{error}");
    }

    #[test]
    fn the_message_names_side_parameter_and_both_values() {
        let good = Expected {
            pins: PINS,
            client_auth: false,
            resumed: false,
            retried: false,
        };
        let seen = Negotiated {
            group: NamedGroup::from_name("SecP256r1MLKEM768"),
            ..full(false)
        };
        let error = good.check(&[("server", seen)]).expect_err("another group");
        assert_eq!(
            error.to_string(),
            "server: negotiated group SecP256r1MLKEM768 (pinned by no path), expected secp256r1"
        );
    }

    #[test]
    fn what_a_side_cannot_see_is_not_compared() {
        let good = Expected {
            pins: PINS,
            client_auth: true,
            resumed: false,
            retried: false,
        };
        let client = Negotiated {
            client_signature: Seen::NotVisible,
            ..full(true)
        };
        let server = Negotiated {
            server_signature: Seen::NotVisible,
            ..full(true)
        };
        good.check(&[("client", client), ("server", server)])
            .expect("each signature seen by one side");
    }
}
