//! Handshake paths: PKI, client authentication, version, resumption,
//! group, HelloRetryRequest.

use std::fmt;

use crate::common::pins::{
    Cipher, CipherSuite, Expected, NamedGroup, Pins, SignatureScheme, TlsVersion,
};
use crate::common::pki::Pki;

use super::profile::Alert;
use super::profile::Profile;
use super::InvalidPath;

/// A handshake path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Handshake {
    /// The certificates (and with them the signature scheme) of both sides.
    pub pki: Pki,
    /// The server requires a client certificate of the same PKI (mTLS).
    pub client_auth: bool,
    pub version: TlsVersion,
    /// Resumed from a session obtained outside the count, and how the
    /// server keeps it; tickets and session caches are off on every other
    /// path.
    pub resumption: Option<Resumption>,
    /// The key-exchange group both sides must negotiate.
    pub group: NamedGroup,
    /// The client guesses wrong: its first (and only) key share is for
    /// [`Handshake::RETRY_GUESS`], which the server does not take, so the
    /// server answers with a HelloRetryRequest for `group` and the client
    /// sends a second ClientHello.
    pub retry: bool,
    /// The server's first record is a warning alert, before its ServerHello
    /// ([`Alert::UNRECOGNIZED_NAME`]): what servers that do not know the
    /// name a client asked for send and go on (RFC 6066 section 3), so the
    /// client reads an alert before any version is negotiated.
    pub warning: bool,
}

impl Handshake {
    /// A full handshake without client authentication, on secp256r1.
    pub const fn full(pki: Pki, version: TlsVersion) -> Handshake {
        Handshake {
            pki,
            client_auth: false,
            version,
            resumption: None,
            group: NamedGroup::Secp256r1,
            retry: false,
            warning: false,
        }
    }

    /// The same handshake on another key-exchange group.
    pub const fn on(self, group: NamedGroup) -> Handshake {
        Handshake { group, ..self }
    }

    /// The group a client of a [`Handshake::retry`] path sends its first key
    /// share for: what rustls, OpenSSL and browsers guess when they offer no
    /// post-quantum group.
    pub const RETRY_GUESS: NamedGroup = NamedGroup::X25519;

    /// `handshake_rsa4096`: also the configs `config_build` builds and the
    /// handshake before every record path.
    pub const RSA4096: Handshake = Handshake::full(Pki::Rsa4096, TlsVersion::Tls13);

    /// The handshakes every TLS library is measured on.
    pub const ALL: [Handshake; 6] = [
        Handshake::RSA4096,
        Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13),
        Handshake {
            client_auth: true,
            ..Handshake::RSA4096
        },
        Handshake {
            client_auth: true,
            ..Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13)
        },
        Handshake::full(Pki::Rsa4096, TlsVersion::Tls12),
        Handshake {
            resumption: Some(Resumption::Ticket),
            ..Handshake::RSA4096
        },
    ];

    /// The handshakes of 2026: the post-quantum hybrid every default
    /// negotiates, on the laboratory ECDSA PKI (full, mTLS), on resumption,
    /// and on web-shaped chains; X25519 on a web chain; a
    /// HelloRetryRequest; TLS 1.2 resumption from a ticket and TLS 1.3
    /// resumption from the server's session cache; a TLS 1.2 finite-field
    /// DHE handshake (what a server with DH parameters still serves clients
    /// that prefer DHE, and the server's exponentiation a client can make it
    /// pay); a legacy server whose leaf names its host only in the subject
    /// CN, which clients verify by CN fallback (internal PKIs and devices
    /// still issue them); a server named by an IP address, whose leaf's only
    /// subjectAltName is `IP:127.0.0.1`, which clients connect to and verify
    /// without sending SNI (RFC 6066 section 3); a server that sends a
    /// warning alert before its ServerHello. Only libraries that can
    /// negotiate a path's group, keep its session and verify its leaf have it
    /// (the registry asks each).
    pub const REAL_WORLD: [Handshake; 13] = [
        Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13).on(NamedGroup::X25519MlKem768),
        Handshake {
            client_auth: true,
            ..Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13).on(NamedGroup::X25519MlKem768)
        },
        Handshake {
            resumption: Some(Resumption::Ticket),
            ..Handshake::RSA4096.on(NamedGroup::X25519MlKem768)
        },
        Handshake::full(Pki::WebRsa2048, TlsVersion::Tls13).on(NamedGroup::X25519MlKem768),
        Handshake::full(Pki::WebEcdsaP256, TlsVersion::Tls13).on(NamedGroup::X25519MlKem768),
        Handshake::full(Pki::WebEcdsaP256, TlsVersion::Tls13).on(NamedGroup::X25519),
        Handshake {
            retry: true,
            ..Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13)
        },
        Handshake {
            resumption: Some(Resumption::Ticket),
            ..Handshake::full(Pki::Rsa4096, TlsVersion::Tls12)
        },
        Handshake {
            resumption: Some(Resumption::Cache),
            ..Handshake::RSA4096
        },
        Handshake::full(Pki::Rsa4096, TlsVersion::Tls12).on(NamedGroup::Ffdhe2048),
        Handshake::full(Pki::EcdsaP256CnOnly, TlsVersion::Tls13),
        Handshake::full(Pki::EcdsaP256IpSan, TlsVersion::Tls13),
        Handshake {
            warning: true,
            ..Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13)
        },
    ];

    /// The resumption paths of [`Handshake::ALL`] and
    /// [`Handshake::REAL_WORLD`].
    pub fn resumptions() -> impl Iterator<Item = Handshake> {
        Handshake::ALL
            .into_iter()
            .chain(Handshake::REAL_WORLD)
            .filter(|handshake| handshake.resumption.is_some())
    }

    /// The suite every TLS 1.3 handshake pins is TLS_AES_128_GCM_SHA256;
    /// TLS 1.2 handshakes pin its ECDHE-RSA counterpart, or its DHE-RSA one
    /// on a finite-field group.
    pub const fn suite(&self) -> CipherSuite {
        if self.group.is_finite_field() {
            CipherSuite::DheRsaAes128GcmSha256
        } else {
            CipherSuite::new(self.version, Cipher::Aes128Gcm)
        }
    }

    /// The handshake signature scheme: the PKI's, except on DHE, whose
    /// peers are of its era and sign with PKCS#1 v1.5 (the s2n-tls policies
    /// that prefer a DHE suite offer no PSS scheme).
    pub const fn scheme(&self) -> SignatureScheme {
        if self.group.is_finite_field() {
            SignatureScheme::RsaPkcs1Sha256
        } else {
            self.pki.signature_scheme()
        }
    }

    /// What both sides' configs are built from.
    pub const fn profile(&self) -> Profile {
        Profile {
            pki: self.pki,
            pins: Pins {
                version: self.version,
                suite: self.suite(),
                group: self.group,
                scheme: self.scheme(),
            },
            client_auth: self.client_auth,
            resumption: self.resumption,
            retry_from: if self.retry {
                Some(Handshake::RETRY_GUESS)
            } else {
                None
            },
            untrusted: false,
            first_alert: if self.warning {
                Some(Alert::UNRECOGNIZED_NAME)
            } else {
                None
            },
        }
    }

    /// What the handshake must have negotiated.
    pub const fn expected(&self) -> Expected {
        self.profile().expected(self.resumption.is_some())
    }

    pub(super) fn validate(&self) -> Result<(), InvalidPath> {
        let tls12_group = matches!(self.group, NamedGroup::Secp256r1 | NamedGroup::Ffdhe2048);
        if self.version == TlsVersion::Tls12
            && (self.pki != Pki::Rsa4096 || !tls12_group || self.retry)
        {
            return Err(InvalidPath::Tls12Shape);
        }
        if self.group.is_finite_field()
            && (self.version != TlsVersion::Tls12 || self.client_auth || self.resumption.is_some())
        {
            return Err(InvalidPath::FiniteFieldShape);
        }
        if let Some(resumption) = self.resumption {
            if (self.pki, self.client_auth, self.retry) != (Pki::Rsa4096, false, false) {
                return Err(InvalidPath::ResumptionShape);
            }
            if resumption == Resumption::Cache && self.version != TlsVersion::Tls13 {
                return Err(InvalidPath::CacheResumptionVersion);
            }
        }
        if self.client_auth && self.pki.is_web() {
            return Err(InvalidPath::WebPkiMtls);
        }
        if self.warning
            && (self.version != TlsVersion::Tls13
                || self.client_auth
                || self.resumption.is_some()
                || self.retry)
        {
            return Err(InvalidPath::WarningShape);
        }
        if self.retry && (self.group == Handshake::RETRY_GUESS || self.resumption.is_some()) {
            return Err(InvalidPath::RetryShape);
        }
        Ok(())
    }
}

/// `handshake_[tls12_]<pki>`, `mtls_[tls12_]<pki>`, `hello_retry_<pki>` or
/// `session_resumption[_cache][_tls12]` (which `Handshake::validate` keeps
/// unique), then
/// `_<group>` for any group but secp256r1 (the laboratory pin, whose names
/// predate groups).
impl fmt::Display for Handshake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(resumption) = self.resumption {
            f.write_str("session_resumption")?;
            if resumption == Resumption::Cache {
                f.write_str("_cache")?;
            }
            if self.version == TlsVersion::Tls12 {
                f.write_str("_tls12")?;
            }
        } else {
            let kind = match (self.client_auth, self.retry) {
                (true, _) => "mtls",
                (false, true) => "hello_retry",
                (false, false) => "handshake",
            };
            write!(
                f,
                "{kind}_{}{}",
                version_prefix(self.version),
                self.pki.label()
            )?;
            if self.warning {
                f.write_str("_after_warning")?;
            }
        }
        match self.group {
            NamedGroup::Secp256r1 => Ok(()),
            group => write!(f, "_{}", group.label()),
        }
    }
}

/// How a server keeps the session a client resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resumption {
    /// Stateless: the server encrypts the session into the ticket it sends
    /// and decrypts it when the client offers it (TLS 1.3 PSK identity, or
    /// TLS 1.2's SessionTicket extension).
    Ticket,
    /// Stateful: the server keeps the session in its cache and the ticket
    /// it sends is the key; resuming is a cache lookup (TLS 1.3).
    Cache,
}

/// How names mark a TLS 1.2 path: no comparison may line it up with the
/// TLS 1.3 path of the same name otherwise.
pub(super) fn version_prefix(version: TlsVersion) -> &'static str {
    match version {
        TlsVersion::Tls12 => "tls12_",
        TlsVersion::Tls13 => "",
    }
}
