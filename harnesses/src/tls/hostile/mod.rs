//! [`HostileFlight`]: what a hostile client can make a server pay with one
//! flight, for any TLS library (issue 26).
//!
//! The client is not a TLS library: `flights.rs` builds the flight byte by
//! byte ([`wire`]) in `setup`, outside the count, from the path's
//! [`Hostile`] input. The counted run is the victim's work only: a server
//! of its library's defaults ([`Defaults::default_configs`]) reading the
//! whole flight from the in-memory transport and writing whatever it
//! answers, until it waits for the client again or fails
//! ([`Victim::serve`]). The flight is written into the transport in
//! `prepare`. `flood.rs` is the other shape: records on an established
//! connection, from the library's own client.
//!
//! The check (`check.rs`) proves the server did the work and behaved
//! correctly: it read every byte sent, and its answer is the one the input
//! calls for ([`expected`]), which it can only have chosen by reading the
//! lists to their ends (the real code points are last): a ServerHello for
//! the group and suite of the library's defaults (a HelloRetryRequest for
//! [`Hostile::Retry`]), with no pre-shared key accepted; or, for an input
//! that must be refused, a failure and its alert. A server that crashes on
//! an input fails the run naming it.
//!
//! `search.rs` looks for flights that cost a server more per byte than
//! these paths (`harnesses search`, driven by `scripts/hostile-search.sh`).

mod check;
pub mod client_chain;
pub mod flights;
pub mod flood;
pub mod search;
pub mod wire;

pub use check::{check_served, expected, refused, Refusal, DECRYPT_ERROR, ILLEGAL_PARAMETER};
pub use flights::{corrupt_tickets, flight, tamper_binder, valid_share_flight};

use std::marker::PhantomData;

use regress_measure::program::AnyHarness;
use regress_measure::{Harness, HarnessError, Received};

use crate::common::pki::ClientChain;

use super::defaults::Defaults;
use super::key_update::KeyUpdate;
use crate::common::transport::{split_records, Endpoint};
use crate::paths::Hostile;

/// A library whose server the hostile paths attack.
pub trait Victim: Defaults {
    /// The attacker's end of `fresh`'s transport: what is sent from it, the
    /// server reads; what the server answers waits there.
    fn attacker(fresh: &Self::Fresh) -> &Endpoint;

    /// The server's calls on everything waiting in its transport: it reads
    /// the flight and writes its answer, until it waits for more or fails.
    fn serve(fresh: &mut Self::Fresh) -> Result<(), ServeError>;

    /// A real client's first flight resuming a session of `configs`'s
    /// server: a full handshake, the client reading its ticket, then a
    /// fresh client offering it ([`Hostile::InvalidBinder`]).
    fn resumption_flight(_configs: &Self::Configs) -> Result<Vec<u8>, HarnessError> {
        Err("this library's default server issues no tickets".into())
    }

    /// How the server refuses `input` where it must ([`refused`]): the
    /// fatal alert [`expected`] names, unless the library refuses it
    /// otherwise.
    fn refusal(_input: Hostile) -> Refusal {
        Refusal::Alert
    }

    /// The longest client chain the server's verifier accepts by default
    /// ([`Hostile::LongestClientChain`]).
    const LONGEST_CLIENT_CHAIN: ClientChain;

    /// The mTLS handshake of `fresh` on `configs` up to the client's second
    /// flight (its Certificate, CertificateVerify and Finished) written and
    /// waiting at the server, unread; and that flight's size
    /// ([`client_chain::client_flight_size`]).
    fn client_flight(
        configs: &Self::Configs,
        fresh: Self::Fresh,
    ) -> Result<(Self::Pair, Received), HarnessError>;

    /// The server's calls on the client's second flight until its
    /// handshake is done, or it fails.
    fn finish(pair: &mut Self::Pair) -> Result<(), HarnessError>;
}

/// How a victim's calls on a hostile flight ended, when not by waiting for
/// more of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeError {
    /// The library failed, in its own words.
    Library(String),
    /// The library failed writing its answer, in its own words.
    Writing(String),
    /// The server finished a handshake no client made.
    Finished,
    /// The server still had the flight to read after this many calls.
    Unread { calls: usize },
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Library(error) => f.write_str(error),
            ServeError::Writing(error) => write!(f, "writing its answer: {error}"),
            ServeError::Finished => f.write_str("the server finished a handshake no client made"),
            ServeError::Unread { calls } => {
                write!(f, "the server left the flight unread after {calls} calls")
            }
        }
    }
}

impl std::error::Error for ServeError {}
/// The harness of `input` against library `L`.
pub fn harness<L: Victim + KeyUpdate>(input: Hostile) -> Box<dyn AnyHarness> {
    match input {
        Hostile::KeyUpdateFlood
        | Hostile::TinyRecords
        | Hostile::KeyUpdateFloodSent
        | Hostile::TinyRecordsSent => Box::new(flood::RecordFlood::<L>::new(input)),
        other => match client_chain::ClientChainFlight::<L>::client_of(other) {
            Some(client) => Box::new(client_chain::ClientChainFlight::<L>::with_client(client)),
            None => Box::new(HostileFlight::<L>::new(other)),
        },
    }
}
/// One hostile flight into a server of library `L`'s defaults.
///
/// **Counted:** [`Victim::serve`]: the server reading the whole flight
/// (every record) and parsing it, and, where it goes on, its key exchange,
/// its flight and its signature (ECDSA P-256, the defaults' web chain), or
/// its HelloRetryRequest.
///
/// **Not counted:** the default configs and the flight (`setup`: the key
/// shares are generated there), the fresh connection and writing the flight
/// into the transport (`prepare`). What building the flight cost the
/// attacker is not measured.
///
/// **Check:** the server read every byte, did not fail, and its first
/// record is [`expected`]'s reply.
pub struct HostileFlight<L> {
    input: Hostile,
    library: PhantomData<fn() -> L>,
}

impl<L> HostileFlight<L> {
    /// The harness of `input`.
    pub const fn new(input: Hostile) -> HostileFlight<L> {
        HostileFlight {
            input,
            library: PhantomData,
        }
    }
}

/// What every run shares: the victim's configs and the flight.
pub struct Attack<C> {
    pub configs: C,
    pub flight: Vec<u8>,
}

/// A run's input: a fresh connection with the flight waiting at its server,
/// and the flight's size.
pub struct Sent<F> {
    pub fresh: F,
    pub flight: Received,
}

/// A run's result: the connection, how the server's calls ended, and what
/// the flight was.
pub struct Served<F> {
    pub fresh: F,
    pub outcome: Result<(), ServeError>,
    pub flight: Received,
}

/// The size of `flight`: its bytes, its records (a flight cut short, as a
/// test cuts one, ends in part of a record, which counts as one), and one
/// message (every flight of [`HostileFlight`] is one ClientHello).
pub fn flight_size(flight: &[u8]) -> Received {
    let (whole, rest) = split_records(flight);
    Received {
        bytes: flight.len() as u64,
        records: whole.len() as u64 + u64::from(!rest.is_empty()),
        messages: 1,
    }
}
impl<L: Victim> Harness for HostileFlight<L> {
    type Setup = Attack<L::Configs>;
    type Input = Sent<L::Fresh>;
    type Output = Served<L::Fresh>;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        L::runtime_libraries()
    }

    fn setup(&self) -> Result<Attack<L::Configs>, HarnessError> {
        Ok(Attack {
            configs: L::default_configs()?,
            flight: match self.input {
                // Captured in `prepare`: a ticket may be single-use.
                input if input.captured() => Vec::new(),
                input => flight(input, &L::defaults())?,
            },
        })
    }

    fn prepare(&self, attack: &Attack<L::Configs>) -> Result<Sent<L::Fresh>, HarnessError> {
        let captured;
        let flight = match self.input {
            Hostile::InvalidBinder => {
                captured = tamper_binder(L::resumption_flight(&attack.configs)?)?;
                &captured
            }
            Hostile::CorruptTickets => {
                captured = corrupt_tickets(&L::resumption_flight(&attack.configs)?)?;
                &captured
            }
            _ => &attack.flight,
        };
        let fresh = L::fresh(&attack.configs)?;
        L::attacker(&fresh)
            .send(flight)
            .map_err(|e| format!("writing the hostile flight: {e}"))?;
        Ok(Sent {
            fresh,
            flight: flight_size(flight),
        })
    }

    fn run(
        &self,
        _: &Attack<L::Configs>,
        sent: Sent<L::Fresh>,
    ) -> Result<Served<L::Fresh>, HarnessError> {
        let Sent { mut fresh, flight } = sent;
        let outcome = L::serve(&mut fresh);
        Ok(Served {
            fresh,
            outcome,
            flight,
        })
    }

    fn received(&self, _: &Attack<L::Configs>, served: &Served<L::Fresh>) -> Option<Received> {
        Some(served.flight)
    }

    fn check(&self, _: &Attack<L::Configs>, served: &Served<L::Fresh>) -> Result<(), HarnessError> {
        check_served(
            self.input,
            L::refusal(self.input),
            &L::defaults(),
            L::attacker(&served.fresh),
            &served.outcome,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flight_cut_short_counts_its_last_part_as_a_record() {
        let whole = [22, 3, 1, 0, 2, 1, 0, 22, 3, 1, 0, 3, 1, 0, 0];
        assert_eq!(flight_size(&whole).records, 2);
        assert_eq!(flight_size(&whole[..9]).records, 2);
        assert_eq!(flight_size(&whole[..3]).records, 1);
        assert_eq!(flight_size(&[]).records, 0);
    }
}
