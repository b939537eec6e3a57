//! rustls's server under a hostile client's flight ([`Victim`]; rustls
//! 0.23, not yet written for 0.24's API, where the registry says the paths
//! do not apply).

use super::tls::Rustls;
use super::transport::Accepting;
use crate::common::transport::Endpoint;
use crate::tls::hostile::Victim;

impl Victim for Rustls {
    fn attacker(accepting: &Accepting) -> &Endpoint {
        &accepting.client_end
    }

    /// `read_tls` and `process_new_packets` until the flight is read or
    /// rustls fails, then `write_tls` of what the server queued (its
    /// flight, or its alert after a failure).
    fn serve(accepting: &mut Accepting) -> Result<(), String> {
        let served = accepting
            .server
            .deliver_raw(&mut accepting.server_end)
            .map_err(|error| error.to_string());
        let flushed = accepting
            .server
            .flush(&mut accepting.server_end)
            .map_err(|error| format!("writing its answer: {error}"));
        served.and(flushed)
    }
}
