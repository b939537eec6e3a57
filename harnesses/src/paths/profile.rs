//! What each library builds its configs from.

use crate::common::pins::{Expected, NamedGroup, Pins};
use crate::common::pki::Pki;

use super::handshake::Resumption;

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
