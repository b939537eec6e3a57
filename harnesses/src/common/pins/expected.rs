//! What a finished handshake must show, what a library reported, and the
//! one comparison of the two.

use std::fmt;

use regress_measure::HarnessError;

use super::{CipherSuite, NamedGroup, Pins, SignatureScheme, TlsVersion};

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
    pub(super) fn find(
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
