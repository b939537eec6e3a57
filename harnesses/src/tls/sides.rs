//! Marking whose calls a handshake driver makes: the client's, the
//! server's, or neither (the glue).
//!
//! Every library's handshake driver alternates the two sides over the
//! in-memory transport. It wraps each side's call into its library in
//! [`Sides::call`], which marks the call's [`Part`] (the side and its stage)
//! for the measuring child ([`regress_measure::parts`]), and tells [`Sides`]
//! after each call what is in flight, which is how the stage advances: a
//! side is in its first stage until the call in which it first sends,
//! whatever its library and TLS version (the stages are documented on
//! [`Part`]). Everything between the wrapped calls is glue: the loop, this
//! bookkeeping, the checks of what a call returned. The transport's copies
//! happen inside the libraries' calls (callbacks, BIO, `read_tls` and
//! `write_tls`), so they are the side's, as a socket's would be.
//!
//! Natively, and in a child that counts whole runs, a mark is one call of a
//! few dozen instructions that changes nothing.

use regress_measure::parts::{self, Part, Side};

/// Which side has sent so far in one handshake.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Sides {
    client_sent: bool,
    server_sent: bool,
}

impl Sides {
    /// A handshake that has not started: both sides in their first stage.
    pub fn new() -> Sides {
        Sides::default()
    }

    /// A connection that is past its handshake: both sides in their
    /// second stage (a first record, say).
    pub fn established() -> Sides {
        Sides {
            client_sent: true,
            server_sent: true,
        }
    }

    /// The part `side`'s next call runs in.
    pub fn part(&self, side: Side) -> Part {
        let sent = match side {
            Side::Client => self.client_sent,
            Side::Server => self.server_sent,
        };
        Part::stage(side, sent)
    }

    /// Runs `call`, one call of `side` into its library, marked as the
    /// side's current stage.
    #[inline(always)]
    pub fn call<R>(&self, side: Side, call: impl FnOnce() -> R) -> R {
        parts::within(self.part(side), call)
    }

    /// Notes the bytes in flight after a call, `(client to server, server
    /// to client)`: a side whose bytes wait for its peer has sent, and its
    /// next calls are its second stage.
    #[inline(always)]
    pub fn note(&mut self, (to_server, to_client): (usize, usize)) {
        self.client_sent |= to_server > 0;
        self.server_sent |= to_client > 0;
    }
}

/// Runs `create`, the creation of `side`'s connection (outside the counted
/// run, in `prepare`), marked so that what it allocates counts as held by
/// that side.
#[inline(always)]
pub fn creating<R>(side: Side, create: impl FnOnce() -> R) -> R {
    parts::within(side.creation(), create)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stage advances per side, on the first call after which the side
    /// has bytes in flight; the peer reading them does not move it back.
    #[test]
    fn each_side_moves_to_its_second_stage_after_it_first_sends() {
        let mut sides = Sides::new();
        assert_eq!(sides.part(Side::Client), Part::ClientHello);
        assert_eq!(sides.part(Side::Server), Part::ServerFlight);
        sides.note((0, 0)); // a call that sent nothing
        assert_eq!(sides.part(Side::Client), Part::ClientHello);
        sides.note((300, 0)); // the ClientHello
        assert_eq!(sides.part(Side::Client), Part::ClientFinish);
        assert_eq!(sides.part(Side::Server), Part::ServerFlight);
        sides.note((0, 0)); // the server read it and queued its flight
        assert_eq!(sides.part(Side::Server), Part::ServerFlight);
        sides.note((0, 4000)); // the server's flight
        assert_eq!(sides.part(Side::Server), Part::ServerFinish);
        assert_eq!(sides.part(Side::Client), Part::ClientFinish);
        assert_eq!(Sides::established(), sides);
    }

    #[test]
    fn a_marked_call_returns_its_value_and_leaves_the_part_it_entered() {
        let sides = Sides::new();
        let before = parts::current();
        assert_eq!(sides.call(Side::Server, parts::current), Part::ServerFlight);
        assert_eq!(parts::current(), before);
        assert_eq!(creating(Side::Client, parts::current), Part::ClientNew);
    }
}
