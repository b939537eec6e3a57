//! Hostile inputs: the flights a hostile client sends a server.

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
    /// The smallest ClientHello that buys a whole handshake: one suite,
    /// one group (X25519) and its key share, one signature scheme (ECDSA
    /// P-256, the defaults' chain's), no server name: what the server's key
    /// exchange, flight and signature cost per byte the client sent.
    MinimalHello,
    /// [`Hostile::MinimalHello`] on secp384r1: the costliest group rustls's
    /// defaults accept (`scripts/hostile-search.sh` found it).
    MinimalSecp384r1,
    /// [`Hostile::MinimalHello`] on secp521r1, where the defaults accept it
    /// (s2n-tls, OpenSSL): the costliest key share a client can choose
    /// (`scripts/hostile-search.sh` found it).
    MinimalSecp521r1,
    /// [`Hostile::MinimalHello`] on ffdhe3072 (RFC 7919), where the defaults
    /// accept a finite-field group in TLS 1.3 (OpenSSL 3.0 and later; 3.5's
    /// default list ends with ffdhe2048 and ffdhe3072): the large-group
    /// Diffie-Hellman a client chooses and the server pays for, D(HE)at's
    /// asymmetry (CVE-2002-20001) on the defaults.
    MinimalFfdhe3072,
    /// [`Hostile::MinimalHello`] whose X25519 key share is 32 zero bytes, a
    /// point of small order: the shared secret comes out all zero, which
    /// RFC 8446 (section 7.4.2) and RFC 7748 make the server refuse, after
    /// it computed it.
    ZeroShare,
    /// [`Hostile::MinimalHello`] on secp256r1 whose key share is a point
    /// off the curve (x = 1, y = 1): RFC 8446 (section 4.2.8.2) makes the
    /// server validate it, and refuse.
    OffCurveShare,
    /// [`Hostile::MinimalHello`] on X25519MLKEM768 whose ML-KEM-768
    /// encapsulation key fails FIPS 203's modulus check (every coefficient
    /// 4095, above q = 3329), with a valid X25519 half: the server must
    /// check the key before it encapsulates to it, and refuse.
    BadMlKemShare,
    /// A ClientHello offering [`Hostile::TICKETS`] session tickets the
    /// server never issued, each with a binder, before a full handshake.
    UnknownTickets,
    /// [`Hostile::UnknownTickets`] with as many tickets as fit one record
    /// (16 KiB): what each identity and binder a server parses and refuses
    /// costs, to the limit of the record.
    MaxUnknownTickets,
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
    /// On an established TLS 1.3 connection, the smallest records a
    /// library's client writes (one byte of data each), without KeyUpdates:
    /// what opening a record costs per byte (`crate::tls::hostile::flood`).
    TinyRecords,
    /// An mTLS client's second flight whose certificate chain is as long
    /// as the server's verifier accepts by default: one signature check per
    /// intermediate for a few hundred bytes each
    /// (`crate::tls::hostile::client_chain`). The server is the library's
    /// pinned laboratory one asking for a client certificate, not its
    /// defaults (no default server asks for one).
    LongestClientChain,
    /// An mTLS client's second flight whose chain is 49 decoys named like
    /// its leaf's issuer, then the real issuer
    /// (`crate::common::pki::ClientChain::Decoys49`): rustls-webpki's 100
    /// signature checks per verification, to the last one.
    ClientChainDecoys,
    /// An mTLS client's second flight whose leaf has an RSA-8192 key (under
    /// the laboratory RSA-4096 CA), the largest rustls verifies: the server
    /// verifies the client's CertificateVerify with it. s2n-tls and OpenSSL
    /// accept up to RSA-16384, which is not run: the attacker's own
    /// signature in `prepare` would cost each run seconds under Valgrind.
    LargeRsaClient,
    /// What [`Hostile::KeyUpdateFlood`] costs the attacker: its client
    /// writing the flood (`crate::tls::hostile::flood`).
    KeyUpdateFloodSent,
    /// What [`Hostile::TinyRecords`] costs the attacker: its client writing
    /// the records.
    TinyRecordsSent,
}

impl Hostile {
    /// The inputs that are a first flight: a ClientHello.
    pub const HELLOS: [Hostile; 13] = [
        Hostile::MaxHello,
        Hostile::KeyShares,
        Hostile::Retry,
        Hostile::Fragmented,
        Hostile::MinimalHello,
        Hostile::MinimalSecp384r1,
        Hostile::MinimalSecp521r1,
        Hostile::MinimalFfdhe3072,
        Hostile::ZeroShare,
        Hostile::OffCurveShare,
        Hostile::BadMlKemShare,
        Hostile::UnknownTickets,
        Hostile::MaxUnknownTickets,
    ];

    /// The inputs that come after a handshake or from the library's own
    /// client: a real client's resumption ClientHello, tampered with,
    /// floods on an established connection, an mTLS client's chain.
    pub const LATER: [Hostile; 9] = [
        Hostile::CorruptTickets,
        Hostile::InvalidBinder,
        Hostile::KeyUpdateFlood,
        Hostile::TinyRecords,
        Hostile::LongestClientChain,
        Hostile::ClientChainDecoys,
        Hostile::LargeRsaClient,
        Hostile::KeyUpdateFloodSent,
        Hostile::TinyRecordsSent,
    ];

    /// Every hostile input: [`Hostile::HELLOS`], then [`Hostile::LATER`].
    pub const ALL: [Hostile; Hostile::HELLOS.len() + Hostile::LATER.len()] = {
        let mut all = [Hostile::MaxHello; Hostile::HELLOS.len() + Hostile::LATER.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = if i < Hostile::HELLOS.len() {
                Hostile::HELLOS[i]
            } else {
                Hostile::LATER[i - Hostile::HELLOS.len()]
            };
            i += 1;
        }
        all
    };

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
            Hostile::MinimalHello => "hello_minimal",
            Hostile::MinimalSecp384r1 => "hello_minimal_secp384r1",
            Hostile::MinimalSecp521r1 => "hello_minimal_secp521r1",
            Hostile::MinimalFfdhe3072 => "hello_minimal_ffdhe3072",
            Hostile::ZeroShare => "hello_zero_share",
            Hostile::OffCurveShare => "hello_off_curve_share",
            Hostile::BadMlKemShare => "hello_bad_mlkem_share",
            Hostile::UnknownTickets => "hello_unknown_tickets",
            Hostile::MaxUnknownTickets => "hello_max_unknown_tickets",
            Hostile::CorruptTickets => "hello_corrupt_tickets",
            Hostile::InvalidBinder => "psk_invalid_binder",
            Hostile::KeyUpdateFlood => "key_update_flood",
            Hostile::TinyRecords => "tiny_records",
            Hostile::LongestClientChain => "mtls_longest_chain",
            Hostile::ClientChainDecoys => "mtls_chain_decoys",
            Hostile::LargeRsaClient => "mtls_rsa8192_client",
            Hostile::KeyUpdateFloodSent => "key_update_flood_attacker",
            Hostile::TinyRecordsSent => "tiny_records_attacker",
        }
    }
}
