//! The paths, as data.
//!
//! A benchmark is a library and a path ([`Benchmark`]); a path is a kind and
//! its parameters ([`Path`]): a handshake is (PKI, client authentication or
//! not, protocol version, resumption or not, key-exchange group, a
//! HelloRetryRequest or not), a record path is (cipher,
//! protocol version, write size), and so on. Everything else follows from
//! the data: the public name `<library>::<path>` (the test name, the
//! baseline file, the output names), the [`Pins`] every library must
//! negotiate on it, and the [`Profile`] each library builds its configs
//! from. Each library has one harness per kind, parameterised by this data
//! (`registry.rs` picks it); [`Path::validate`] refuses data that no name
//! or harness could stand for.

use std::fmt::{self, Write as _};

use crate::common::payload::RECORD_BYTES;
use crate::common::pins::{
    Cipher, CipherSuite, Expected, NamedGroup, Pins, SignatureScheme, TlsVersion,
};
use crate::common::pki::Pki;

/// Who is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Library {
    S2nTls,
    Rustls,
    OpenSsl,
    /// The AEAD floor under the record paths: aws-lc through aws-lc-rs.
    AwsLcRs,
    /// The pipeline itself: a loop of known cost.
    Calibration,
}

impl Library {
    /// The first half of a benchmark's name.
    pub const fn name(self) -> &'static str {
        match self {
            Library::S2nTls => "s2n_tls",
            Library::Rustls => "rustls",
            Library::OpenSsl => "openssl",
            Library::AwsLcRs => "aws_lc_rs",
            Library::Calibration => "calibration",
        }
    }
}

/// One measured path of a library: a kind and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// Building the configs of [`Handshake::RSA4096`] from PEM, both sides.
    ConfigBuild,
    /// One handshake between a fresh client and server.
    Handshake(Handshake),
    /// A handshake the client rejects: it trusts another CA than the one
    /// that issued the server's chain (`crate::tls::rejected`).
    Rejected,
    /// Closing an established connection: a close_notify each way
    /// (`crate::tls::shutdown`).
    Shutdown,
    /// One handshake between a client and a server of the library's default
    /// configuration (`crate::tls::defaults`): what the library chooses,
    /// not a comparison.
    Defaults,
    /// 1 MiB of application data over an established connection.
    Record(Record),
    /// Parsing the RSA-4096 leaf and CA certificates.
    X509Parse,
    /// Verifying the RSA-4096 leaf against its CA for `localhost`.
    X509Verify,
    /// Raw AEAD calls, without TLS.
    Aead(Aead),
    /// One KeyUpdate each way on an established TLS 1.3 connection of
    /// [`Handshake::RSA4096`]'s configs, and one small record each way
    /// under the new keys.
    KeyUpdate,
    /// A feature of one library that its users rely on.
    Feature(Feature),
    /// A server of the library's defaults processing one flight a hostile
    /// client chose (`crate::tls::hostile`): what a peer can make it pay.
    Hostile(Hostile),
    /// The calibration loop: `iterations` iterations of three instructions,
    /// named `spin_<label>`. The label is given, not derived: the pipeline's
    /// own end-to-end test changes a spin's iterations under a fixed name to
    /// prove that a diff finds exactly that change.
    Spin {
        label: &'static str,
        iterations: u64,
    },
}

/// The second half of a benchmark's name.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::ConfigBuild => f.write_str("config_build"),
            Path::Handshake(handshake) => handshake.fmt(f),
            Path::Defaults => f.write_str("handshake_defaults"),
            Path::Shutdown => f.write_str("shutdown"),
            Path::Rejected => f.write_str("handshake_untrusted"),
            Path::Record(record) => record.fmt(f),
            Path::X509Parse => f.write_str("x509_parse_chain"),
            Path::X509Verify => f.write_str("x509_verify_chain"),
            Path::Aead(aead) => aead.fmt(f),
            Path::KeyUpdate => f.write_str("key_update"),
            Path::Feature(feature) => f.write_str(feature.name()),
            Path::Hostile(hostile) => write!(f, "hostile_{}", hostile.name()),
            Path::Spin { label, .. } => write!(f, "spin_{label}"),
        }
    }
}

impl Path {
    /// Whether the data names a path: every combination a name and the
    /// harnesses can stand for.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Path::Handshake(handshake) => handshake.validate(),
            Path::Record(record) => record.validate(),
            Path::Aead(aead) => aead.validate(),
            Path::Spin { label: "", .. } => Err("a spin needs a label".into()),
            _ => Ok(()),
        }
    }
}

/// A library measured on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Benchmark {
    pub library: Library,
    pub path: Path,
}

/// The longest name [`Benchmark::name`] allocates room for at once.
pub const NAME_CAPACITY: usize = 64;

impl Benchmark {
    /// `<library>::<path>`: the test name, the baseline file's stem (with
    /// `.` for `::`) and the output names. Baselines are keyed on it.
    ///
    /// Written into one allocation of [`NAME_CAPACITY`] bytes, with no
    /// temporary string: the measured program names every benchmark before
    /// it measures one, and freed temporaries would leave the allocator in
    /// a state that moves the cost of allocations inside the counted run.
    pub fn name(&self) -> String {
        let mut name = String::with_capacity(NAME_CAPACITY);
        // Writing to a `String` cannot fail.
        let _ = write!(name, "{}::{}", self.library.name(), self.path);
        name
    }
}

/// A feature path: what one library's users rely on beyond the paths every
/// library shares. Each runs on the pins of [`Handshake::RSA4096`] (TLS 1.3,
/// AES-128-GCM, secp256r1) unless its harness says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// A TLS 1.3 handshake with an external pre-shared key (psk_dhe_ke):
    /// no certificate, a secp256r1 key exchange.
    ExternalPsk,
    /// Serializing an established TLS 1.3 connection and deserializing it
    /// into a fresh one.
    Serialization,
    /// A full ECDSA P-256 handshake whose server signs through an
    /// asynchronous private-key callback.
    AsyncPrivateKey,
    /// A full ECDSA P-256 handshake whose server runs a ClientHello
    /// callback that reads the server name.
    ClientHelloCallback,
    /// After an mTLS ECDSA P-256 handshake, the server reading what an
    /// access log records about the connection (version, suite, group,
    /// signature scheme, handshake type, the client's chain) and the
    /// client's identity from a private extension of its leaf.
    ConnectionInfo,
}

impl Feature {
    /// Every feature path.
    pub const ALL: [Feature; 5] = [
        Feature::ExternalPsk,
        Feature::Serialization,
        Feature::AsyncPrivateKey,
        Feature::ClientHelloCallback,
        Feature::ConnectionInfo,
    ];

    /// The second half of its benchmark's name.
    pub const fn name(self) -> &'static str {
        match self {
            Feature::ExternalPsk => "psk_handshake",
            Feature::Serialization => "connection_serialize",
            Feature::AsyncPrivateKey => "async_private_key",
            Feature::ClientHelloCallback => "client_hello_callback",
            Feature::ConnectionInfo => "connection_info",
        }
    }
}

/// A flight a hostile client sends a server: every input is within the
/// protocol's limits and each server's own, built by hand
/// (`crate::tls::hostile`) in `setup`, outside the count. The server is of
/// the library's defaults ([`crate::tls::defaults`]), what a deployment that
/// changes nothing runs; the side that pays is always the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hostile {
    /// One ClientHello filling one record (16 KiB): thousands of unknown
    /// cipher suites, groups, signature schemes and extensions, the real
    /// ones last, so a server walks every list to the end.
    MaxHello,
    /// A ClientHello with a key share for every group it offers:
    /// X25519MLKEM768, X25519, secp256r1, secp384r1, secp521r1.
    KeyShares,
    /// A ClientHello whose only key share is for a group no server knows
    /// (a GREASE value), forcing a HelloRetryRequest.
    Retry,
    /// [`Hostile::KeyShares`]'s ClientHello in records of one byte each.
    Fragmented,
    /// A ClientHello offering [`Hostile::TICKETS`] session tickets the
    /// server never issued, each with a binder, before a full handshake.
    UnknownTickets,
    /// A real client's resumption ClientHello (captured in `prepare`) whose
    /// one ticket is replaced by [`Hostile::TICKETS`] copies, each with one
    /// byte flipped: tickets of the server's own format and key that fail
    /// to decrypt or to be found, before a full handshake. Only where the
    /// defaults' server issues tickets.
    CorruptTickets,
    /// A real client's resumption ClientHello (the ticket the server issued
    /// it, captured in `prepare`) with the last byte of its binder flipped:
    /// the server decrypts the ticket and hashes the transcript before it
    /// refuses. Only where the defaults' server issues tickets.
    InvalidBinder,
    /// On an established TLS 1.3 connection, KeyUpdate after KeyUpdate,
    /// each followed by a one-byte record (`crate::tls::hostile::flood`).
    KeyUpdateFlood,
}

impl Hostile {
    /// The inputs that are a first flight: a ClientHello.
    pub const HELLOS: [Hostile; 5] = [
        Hostile::MaxHello,
        Hostile::KeyShares,
        Hostile::Retry,
        Hostile::Fragmented,
        Hostile::UnknownTickets,
    ];

    /// Every hostile input.
    pub const ALL: [Hostile; 8] = [
        Hostile::MaxHello,
        Hostile::KeyShares,
        Hostile::Retry,
        Hostile::Fragmented,
        Hostile::UnknownTickets,
        Hostile::CorruptTickets,
        Hostile::InvalidBinder,
        Hostile::KeyUpdateFlood,
    ];

    /// Whether a real client of the library writes the flight (in
    /// `prepare`, from a ticket of the victim's own server): only where the
    /// defaults' server issues tickets.
    pub const fn captured(self) -> bool {
        matches!(self, Hostile::CorruptTickets | Hostile::InvalidBinder)
    }

    /// PSK identities [`Hostile::UnknownTickets`] offers.
    pub const TICKETS: usize = 8;

    /// Its path's name after `hostile_`.
    pub const fn name(self) -> &'static str {
        match self {
            Hostile::MaxHello => "hello_max",
            Hostile::KeyShares => "hello_key_shares",
            Hostile::Retry => "hello_retry",
            Hostile::Fragmented => "hello_1_byte_records",
            Hostile::UnknownTickets => "hello_unknown_tickets",
            Hostile::CorruptTickets => "hello_corrupt_tickets",
            Hostile::InvalidBinder => "psk_invalid_binder",
            Hostile::KeyUpdateFlood => "key_update_flood",
        }
    }
}

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

    fn validate(&self) -> Result<(), String> {
        let tls12_group = matches!(self.group, NamedGroup::Secp256r1 | NamedGroup::Ffdhe2048);
        if self.version == TlsVersion::Tls12
            && (self.pki != Pki::Rsa4096 || !tls12_group || self.retry)
        {
            return Err(
                "TLS 1.2 paths pin an ECDHE-RSA suite over secp256r1 or a DHE-RSA one over \
                 ffdhe2048: RSA-4096 only, no HelloRetryRequest"
                    .into(),
            );
        }
        if self.group.is_finite_field()
            && (self.version != TlsVersion::Tls12 || self.client_auth || self.resumption.is_some())
        {
            return Err("a finite-field group is a full TLS 1.2 handshake's, without mTLS".into());
        }
        if let Some(resumption) = self.resumption {
            if (self.pki, self.client_auth, self.retry) != (Pki::Rsa4096, false, false) {
                return Err(
                    "session_resumption resumes handshake_rsa4096 or its TLS 1.2 twin, \
                     nothing else"
                        .into(),
                );
            }
            if resumption == Resumption::Cache && self.version != TlsVersion::Tls13 {
                return Err("a session-cache resumption path is TLS 1.3's".into());
            }
        }
        if self.client_auth && self.pki.is_web() {
            return Err("a web PKI has no client identity: no mTLS on it".into());
        }
        if self.warning
            && (self.version != TlsVersion::Tls13
                || self.client_auth
                || self.resumption.is_some()
                || self.retry)
        {
            return Err(
                "a warning before the ServerHello is a full TLS 1.3 handshake's, without mTLS \
                 or a HelloRetryRequest"
                    .into(),
            );
        }
        if self.retry && (self.group == Handshake::RETRY_GUESS || self.resumption.is_some()) {
            return Err(format!(
                "a HelloRetryRequest path needs a group other than the client's guess {} \
                 and a full handshake",
                Handshake::RETRY_GUESS.name()
            ));
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
fn version_prefix(version: TlsVersion) -> &'static str {
    match version {
        TlsVersion::Tls12 => "tls12_",
        TlsVersion::Tls13 => "",
    }
}

/// A record path: [`RECORD_BYTES`] from client to server in writes of
/// `write_size` bytes, each one record, after a [`Handshake::RSA4096`]-like
/// handshake (outside the count) that pins the record's suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    pub cipher: Cipher,
    pub version: TlsVersion,
    /// Plaintext bytes per write, and per record: 1 KiB to 16 KiB.
    pub write_size: usize,
}

impl Record {
    /// The largest plaintext of one TLS record.
    pub const MAX_FRAGMENT: usize = 16 * 1024;

    /// The write sizes every record path is measured with: full-size
    /// records, where the cipher's per-byte cost dominates, and 1 KiB
    /// records, where the per-record cost weighs sixteen times more.
    pub const WRITE_SIZES: [usize; 2] = [16 * 1024, 1024];

    /// The suite both sides pin.
    pub const fn suite(&self) -> CipherSuite {
        CipherSuite::new(self.version, self.cipher)
    }

    /// The handshake's profile, with the record's suite. A CBC path's
    /// peers are of the suite's era: they sign with PKCS#1 v1.5
    /// (s2n-tls's policies that prefer ECDHE-RSA-AES128-SHA offer no PSS
    /// scheme).
    pub const fn profile(&self) -> Profile {
        let mut profile = Handshake::full(Pki::Rsa4096, self.version).profile();
        profile.pins.suite = self.suite();
        if !self.cipher.is_aead() {
            profile.pins.scheme = SignatureScheme::RsaPkcs1Sha256;
        }
        profile
    }

    /// Records one run sends.
    pub const fn records(&self) -> usize {
        RECORD_BYTES.div_ceil(self.write_size)
    }

    /// Bytes one record of `plaintext` bytes takes on the wire, its 5-byte
    /// header included. An AEAD adds its 16-byte tag (and TLS 1.3 its inner
    /// content type). AES-128-CBC with HMAC-SHA1 adds a 16-byte explicit IV,
    /// a 20-byte MAC and 1 to 16 bytes of padding, which pads the MAC too
    /// unless the peers negotiated `encrypt_then_mac` (RFC 7366).
    pub const fn record_len(&self, plaintext: usize, encrypt_then_mac: bool) -> usize {
        const HEADER: usize = 5;
        const TAG: usize = 16;
        const IV: usize = 16;
        const MAC: usize = 20;
        const BLOCK: usize = 16;
        // Padding always adds 1 to 16 bytes: at least its length byte.
        const fn padded(len: usize) -> usize {
            (len / BLOCK + 1) * BLOCK
        }
        HEADER
            + match (self.cipher.is_aead(), self.version, encrypt_then_mac) {
                (true, TlsVersion::Tls12, _) => plaintext + TAG,
                (true, TlsVersion::Tls13, _) => plaintext + 1 + TAG,
                (false, _, false) => IV + padded(plaintext + MAC),
                (false, _, true) => IV + padded(plaintext) + MAC,
            }
    }

    fn validate(&self) -> Result<(), String> {
        if !self.cipher.is_aead() && self.version != TlsVersion::Tls12 {
            return Err(format!("{} records are TLS 1.2's", self.cipher.label()));
        }
        if self.write_size == 0
            || self.write_size > Record::MAX_FRAGMENT
            || !self.write_size.is_multiple_of(1024)
        {
            return Err(format!(
                "write size {} is not a whole number of KiB up to one full record",
                self.write_size
            ));
        }
        Ok(())
    }
}

/// `record_[tls12_]<cipher>_<KiB>k`.
impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record_{}{}_{}k",
            version_prefix(self.version),
            self.cipher.label(),
            self.write_size / 1024
        )
    }
}

/// What an [`Aead`] path does to each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Encrypt and authenticate.
    Seal,
    /// Verify and decrypt.
    Open,
}

/// An AEAD path: calls on `message_len`-byte messages, repeated over
/// [`Aead::RUN_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Aead {
    pub cipher: Cipher,
    pub direction: Direction,
    pub message_len: usize,
}

impl Aead {
    /// Plaintext bytes one run processes, whatever the size of one call: a
    /// run of `message_len`-byte messages makes `RUN_BYTES / message_len`
    /// calls.
    ///
    /// One 16-byte seal is about 900 instructions of aws-lc. Around a single
    /// call, the harness's own glue (moving the buffer and tag in and out of
    /// `run`, the measurement loop) was 30-45 instructions, 1-3.4 % of the
    /// region, too much to call the count aws-lc's. Repeating the call over
    /// 16 KiB of independent messages spreads that fixed glue over many calls
    /// and leaves the few instructions of loop per call (under 1 %; `regress
    /// compare` prints the measured share). Every call is the same call on
    /// the same bytes, so the count is exactly `operations * per-call cost`
    /// plus the glue, and instructions per call and per byte are reported.
    pub const RUN_BYTES: usize = 16384;

    /// The message lengths the paths are measured with: from a tiny message
    /// to a full TLS record.
    pub const MESSAGE_LENS: [usize; 6] = [16, 64, 256, 1024, 8192, 16384];

    /// Calls one run makes: as many messages as fit in [`Aead::RUN_BYTES`].
    pub const fn operations(&self) -> usize {
        Aead::RUN_BYTES / self.message_len
    }

    fn validate(&self) -> Result<(), String> {
        if !self.cipher.is_aead() {
            return Err(self.cipher.not_an_aead());
        }
        if self.message_len == 0 || !Aead::RUN_BYTES.is_multiple_of(self.message_len) {
            return Err(format!(
                "message length {} does not divide a run's {} bytes",
                self.message_len,
                Aead::RUN_BYTES
            ));
        }
        Ok(())
    }
}

/// `aead_<cipher>_<seal|open>_<message_len>`.
impl fmt::Display for Aead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let direction = match self.direction {
            Direction::Seal => "seal",
            Direction::Open => "open",
        };
        write!(
            f,
            "aead_{}_{direction}_{}",
            self.cipher.label(),
            self.message_len
        )
    }
}

/// What a library builds a client and a server config from: derived from a
/// path, never written by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Profile {
    /// Whose certificates both sides load and trust.
    pub pki: Pki,
    pub pins: Pins,
    /// The server requires and verifies a client certificate; the client
    /// presents the PKI's.
    pub client_auth: bool,
    /// The server issues exactly one ticket per handshake (stateless, or
    /// the key of its session cache) and the client keeps it; `None`:
    /// tickets and session caches are off.
    pub resumption: Option<Resumption>,
    /// The client offers this group first, with its only key share, and
    /// `pins.group` second; the server offers `pins.group` only, so it asks
    /// for a HelloRetryRequest. `None`: both offer exactly `pins.group`.
    pub retry_from: Option<NamedGroup>,
    /// The client trusts another PKI's CA ([`Pki::other`]), so it must
    /// reject the server's chain: the path of a failed handshake.
    pub untrusted: bool,
    /// The server sends this alert before anything else (in `prepare`: it
    /// waits in the transport when the client starts), and the client must
    /// read it before the ServerHello; a client that fails on warnings is
    /// told to ignore them. `None`: no alert.
    pub first_alert: Option<Alert>,
}

/// A TLS alert (RFC 8446 section 6): its level and its description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Alert {
    /// 1: warning, 2: fatal.
    pub level: u8,
    pub description: u8,
}

impl Alert {
    /// The warning a server sends when it does not recognize the name the
    /// client asked for and carries on (RFC 6066 section 3: "unrecognized_name"
    /// may be sent at warning level; servers of OpenSSL's and Java's lineage
    /// do).
    pub const UNRECOGNIZED_NAME: Alert = Alert {
        level: 1,
        description: 112,
    };

    /// The same alert at fatal level: what a client must not ignore.
    pub const fn fatal(self) -> Alert {
        Alert { level: 2, ..self }
    }

    /// The plaintext record that carries it, as a server writes it before
    /// any version is negotiated: content type 21, legacy version TLS 1.2,
    /// length 2.
    pub const fn record(self) -> [u8; 7] {
        [21, 3, 3, 0, 2, self.level, self.description]
    }
}

impl Profile {
    /// What a handshake of configs built from this profile must show.
    pub const fn expected(&self, resumed: bool) -> Expected {
        Expected {
            pins: self.pins,
            client_auth: self.client_auth,
            resumed,
            retried: self.retry_from.is_some(),
        }
    }

    /// The PKI whose CA the client trusts.
    pub const fn trusted_ca(&self) -> Pki {
        if self.untrusted {
            self.pki.other()
        } else {
            self.pki
        }
    }

    /// The groups the client offers, in order (its key share is for the
    /// first).
    pub fn client_groups(&self) -> Vec<NamedGroup> {
        self.retry_from
            .into_iter()
            .chain(std::iter::once(self.pins.group))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                "hostile_hello_unknown_tickets",
                "hostile_hello_corrupt_tickets",
                "hostile_psk_invalid_binder",
                "hostile_key_update_flood"
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
        let pq_tls12 =
            Handshake::full(Pki::Rsa4096, TlsVersion::Tls12).on(NamedGroup::X25519MlKem768);
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
}
