//! OpenSSL's server under a hostile client's flight ([`Victim`]).

use openssl::ssl::ErrorCode;

use super::tls::OpenSsl;
use super::transport::Pair;
use crate::common::transport::{Endpoint, MAX_HANDSHAKE_ROUNDS};
use crate::tls::hostile::Victim;

impl Victim for OpenSsl {
    fn attacker(pair: &Pair) -> &Endpoint {
        pair.client.get_ref()
    }

    /// The server's `SSL_do_handshake` until it has read the whole flight
    /// and wants to read more (OpenSSL writes its answer, or its alert,
    /// inside the call), or fails.
    fn serve(pair: &mut Pair) -> Result<(), String> {
        for _ in 0..MAX_HANDSHAKE_ROUNDS {
            match pair.server.do_handshake() {
                Err(error) if error.code() == ErrorCode::WANT_READ => {
                    if !pair.server.get_ref().has_incoming() {
                        return Ok(());
                    }
                }
                Err(error) => return Err(error.to_string()),
                Ok(()) => return Err("the server finished a handshake no client made".into()),
            }
        }
        Err(format!(
            "the server left the flight unread after {MAX_HANDSHAKE_ROUNDS} calls"
        ))
    }
}
