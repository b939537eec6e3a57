//! What a hostile path's check wants: the server's answer to each input
//! ([`expected`]) and what it did with the flight ([`check_served`]).

use regress_measure::HarnessError;

use super::flights::minimal_group;
use super::wire::{self, Reply, ServerHello};
use super::ServeError;
use crate::common::error::ensure;
use crate::common::transport::Endpoint;
use crate::paths::{Hostile, Profile};

/// The TLS alert a server sends on a binder that does not verify
/// (RFC 8446 section 4.2.11).
pub const DECRYPT_ERROR: u8 = 51;

/// Whether `input` must be refused rather than answered.
pub const fn refused(input: Hostile) -> bool {
    matches!(
        input,
        Hostile::InvalidBinder
            | Hostile::ZeroShare
            | Hostile::OffCurveShare
            | Hostile::BadMlKemShare
    )
}

/// The ChangeCipherSpec record of TLS 1.3's middlebox compatibility mode
/// (RFC 8446 appendix D.4).
const CHANGE_CIPHER_SPEC: &[u8] = &[20, 3, 3, 0, 1, 1];

/// The TLS alert a server sends on a key share it cannot use.
pub const ILLEGAL_PARAMETER: u8 = 47;
/// The reply `input` calls for from a server of `defaults`: its suite and
/// group (X25519, the only one offered, for [`Hostile::MinimalHello`]), no
/// pre-shared key; a HelloRetryRequest for [`Hostile::Retry`] (which names
/// the group and the suite too).
pub fn expected(input: Hostile, defaults: &Profile) -> Reply {
    if refused(input) {
        return Reply::Alert {
            level: 2,
            description: match input {
                Hostile::ZeroShare | Hostile::OffCurveShare | Hostile::BadMlKemShare => {
                    ILLEGAL_PARAMETER
                }
                _ => DECRYPT_ERROR,
            },
        };
    }
    Reply::Hello(ServerHello {
        retry: input == Hostile::Retry,
        version: Some(wire::TLS13),
        suite: defaults.pins.suite.iana(),
        group: Some(minimal_group(input).unwrap_or(defaults.pins.group.iana())),
        psk: false,
    })
}
/// How a library's server refuses an input it must refuse (an invalid
/// key share), as its [`Victim::refusal`](super::Victim::refusal) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// [`expected`]'s fatal alert (rustls and OpenSSL, every input).
    Alert,
    /// Its ServerHello for the share's group, then a failure without an
    /// alert: it computes the shared secret after it wrote the ServerHello
    /// (s2n-tls on [`Hostile::ZeroShare`]: "Error computing ECDHE shared
    /// secret").
    HelloThenFailure,
    /// A HelloRetryRequest for the share's own group, and it waits for
    /// another share: it set the unusable one aside (s2n-tls on
    /// [`Hostile::OffCurveShare`]).
    RetrySameGroup,
    /// A failure, having written nothing (s2n-tls on
    /// [`Hostile::BadMlKemShare`]: "An error occurred in a post-quantum
    /// crypto function").
    Silence,
}

/// Checks what a server did with `input`'s flight; `refusal`: how its
/// library refuses the input, if it must.
pub fn check_served(
    input: Hostile,
    refusal: Refusal,
    defaults: &Profile,
    attacker: &Endpoint,
    outcome: &Result<(), ServeError>,
) -> Result<(), HarnessError> {
    let name = input.name();
    let answer = attacker.incoming_bytes();
    let reply = wire::reply(&answer);
    ensure(attacker.in_flight().0 == 0, || {
        format!(
            "the server left {} bytes of hostile_{name} unread",
            attacker.in_flight().0
        )
    })?;
    if refused(input) && refusal != Refusal::Alert {
        return ensure(
            refuses_as(input, refusal, &answer, reply.as_ref().ok(), outcome),
            || {
                format!(
                    "hostile_{name}: the server did not refuse it as its library does \
                     ({refusal:?}): it answered {} and {}",
                    reply
                        .as_ref()
                        .map_or_else(|e| format!("nothing readable ({e})"), |r| r.to_string()),
                    outcome
                        .as_ref()
                        .map_or_else(|e| format!("failed: {e}"), |()| "waits".to_owned())
                )
            },
        );
    }
    if refused(input) {
        ensure(outcome.is_err(), || {
            format!("the server accepted hostile_{name}")
        })?;
    } else if let Err(error) = outcome {
        return Err(format!(
            "the server failed on hostile_{name}: {error} (it answered {})",
            reply.map_or_else(|e| format!("nothing readable: {e}"), |r| r.to_string())
        )
        .into());
    }
    let reply = reply.map_err(|e| format!("hostile_{name}: the server's answer: {e}"))?;
    let want = expected(input, defaults);
    ensure(reply == want, || {
        format!("hostile_{name}: the server answered {reply}, not {want}")
    })
}

/// Whether `answer` (read as `reply`) and `outcome` are `refusal` of
/// `input`'s key share, one of the refusals other than [`expected`]'s
/// alert ([`Refusal`]).
fn refuses_as(
    input: Hostile,
    refusal: Refusal,
    answer: &[u8],
    reply: Option<&Reply>,
    outcome: &Result<(), ServeError>,
) -> bool {
    if refusal == Refusal::Silence {
        return answer.is_empty() && outcome.is_err();
    }
    let Some(Reply::Hello(hello)) = reply else {
        return false;
    };
    // Its first record alone, or followed by the ChangeCipherSpec a
    // middlebox-compatible server sends after a HelloRetryRequest.
    let first = answer.get(3..5).map_or(0, |len| {
        5 + usize::from(u16::from_be_bytes([len[0], len[1]]))
    });
    let rest = answer.get(first..).unwrap_or_default();
    let alone = (rest.is_empty() || rest == CHANGE_CIPHER_SPEC) && !hello.psk;
    let its_group = alone && hello.group == minimal_group(input);
    match refusal {
        Refusal::HelloThenFailure => its_group && outcome.is_err() && !hello.retry,
        Refusal::RetrySameGroup => its_group && outcome.is_ok() && hello.retry,
        Refusal::Alert | Refusal::Silence => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::defaults::Defaults;

    #[test]
    fn the_check_wants_the_reply_of_the_input() {
        let defaults = crate::rustls::tls::Rustls::defaults();
        let hello = expected(Hostile::KeyShares, &defaults);
        let retry = expected(Hostile::Retry, &defaults);
        assert_ne!(hello, retry);
        let served = |bytes: &[u8], outcome: Result<(), ServeError>, input| {
            let (client, server) = crate::common::transport::connected();
            server.send(bytes).expect("answer");
            check_served(input, Refusal::Alert, &defaults, &client, &outcome)
        };
        let alert = [21, 3, 3, 0, 2, 2, 47];
        assert!(served(&alert, Ok(()), Hostile::KeyShares).is_err());
        assert!(served(
            &alert,
            Err(ServeError::Library("refused".into())),
            Hostile::KeyShares
        )
        .is_err());
        assert!(served(&[], Ok(()), Hostile::Retry).is_err());
    }
}
