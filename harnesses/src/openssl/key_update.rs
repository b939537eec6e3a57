//! OpenSSL's key updates, as the shared [`KeyUpdates`] harness drives them.
//!
//! The client calls `SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED)`, and
//! its next `SSL_write` sends the KeyUpdate under the old keys, then
//! changes its sending keys. The server's `SSL_read` processes it
//! (`tls_process_key_update`): it changes its receiving keys and, because
//! an update was requested, sets its own pending update to
//! `SSL_KEY_UPDATE_NOT_REQUESTED`, which its next `SSL_write` sends.

use std::ffi::c_int;

use foreign_types::ForeignTypeRef as _;
use openssl::ssl::ErrorCode;
use regress_measure::HarnessError;

use super::tls::OpenSsl;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::tls::key_update::KeyUpdate;
#[cfg(doc)]
use crate::tls::key_update::KeyUpdates;

/// `SSL_KEY_UPDATE_NONE` in ssl.h: no update pending.
pub const SSL_KEY_UPDATE_NONE: c_int = -1;
/// `SSL_KEY_UPDATE_NOT_REQUESTED` in ssl.h.
pub const SSL_KEY_UPDATE_NOT_REQUESTED: c_int = 0;
/// `SSL_KEY_UPDATE_REQUESTED` in ssl.h.
pub const SSL_KEY_UPDATE_REQUESTED: c_int = 1;

extern "C" {
    // Both in OpenSSL 1.1.1 and later (not bound by openssl-sys 0.9).
    fn SSL_key_update(ssl: *mut openssl_sys::SSL, updatetype: c_int) -> c_int;
    fn SSL_get_key_update_type(ssl: *const openssl_sys::SSL) -> c_int;
}

/// The update `stream`'s connection has pending.
fn pending(stream: &openssl::ssl::SslStream<crate::common::transport::Endpoint>) -> c_int {
    // SAFETY: a live SSL; the call only reads a field.
    unsafe { SSL_get_key_update_type(stream.ssl().as_ptr()) }
}

impl KeyUpdate for OpenSsl {
    /// `SSL_key_update(SSL_KEY_UPDATE_REQUESTED)` on the client.
    fn update_client(pair: &mut Pair) -> Result<(), HarnessError> {
        // SAFETY: a live SSL whose handshake is complete.
        let ok = unsafe { SSL_key_update(pair.client.ssl().as_ptr(), SSL_KEY_UPDATE_REQUESTED) };
        ensure(ok == 1, || {
            format!(
                "SSL_key_update failed: {}",
                openssl::error::ErrorStack::get()
            )
        })
    }

    /// Nothing: the server's answer is pending since it read the request.
    fn update_server(_: &mut Pair) -> Result<(), HarnessError> {
        Ok(())
    }

    /// `SSL_write` of all of `bytes` (its pending KeyUpdate goes first).
    fn server_send(pair: &mut Pair, bytes: &[u8]) -> Result<(), HarnessError> {
        let n = pair
            .server
            .ssl_write(bytes)
            .context("server write failed")?;
        ensure(n == bytes.len(), || {
            format!("server wrote {n} of {} bytes", bytes.len())
        })
    }

    /// One `SSL_read`; 0 when it wants more than has arrived.
    fn client_receive(pair: &mut Pair, out: &mut [u8]) -> Result<usize, HarnessError> {
        match pair.client.ssl_read(out) {
            Ok(n) => Ok(n),
            Err(e) if e.code() == ErrorCode::WANT_READ => Ok(0),
            Err(e) => Err(e).context("client read failed"),
        }
    }

    /// `SSL_get_key_update_type` on the server right after its read: one
    /// FFI call that reads a field, inside the count.
    fn server_state(pair: &Pair) -> i32 {
        pending(&pair.server)
    }

    /// OpenSSL 3.0 has no key-update count and no sequence-number accessor.
    /// What it does report: right after the server read the client's
    /// record, its pending update was `SSL_KEY_UPDATE_NOT_REQUESTED`, which
    /// only `tls_process_key_update` sets on a server that never called
    /// `SSL_key_update`, on receiving update_requested, just before it
    /// changes its receiving keys (`tls13_update_key(s, 0)`); and after the
    /// run nothing is pending on either side, so the client's request and
    /// the server's answer both went out. The flights' sizes and the records
    /// each side then opened under its peer's new keys are the shared
    /// check's.
    fn check_updates(pair: Pair, updates: u8, server_state: i32) -> Result<(), HarnessError> {
        let expected = if updates == 0 {
            SSL_KEY_UPDATE_NONE
        } else {
            SSL_KEY_UPDATE_NOT_REQUESTED
        };
        ensure(server_state == expected, || {
            format!(
                "after reading the client's record the server's pending key update was \
                 {server_state}, not {expected}: it {} an update request",
                if updates == 0 {
                    "received"
                } else {
                    "did not receive"
                }
            )
        })?;
        let after = (pending(&pair.client), pending(&pair.server));
        ensure(after == (SSL_KEY_UPDATE_NONE, SSL_KEY_UPDATE_NONE), || {
            format!("key updates still pending after the run (client, server): {after:?}")
        })
    }
}

#[cfg(test)]
mod tests {
    use regress_measure::Harness as _;

    use super::*;
    use crate::tls::key_update::{self, KeyUpdates, FLIGHT_LEN};

    #[test]
    fn check_fails_without_an_update() {
        key_update::check_fails_without_an_update::<OpenSsl>();
    }

    /// What OpenSSL reports fails a connection that did not update, even
    /// with the flights of one that did; and a client whose requested
    /// update never went out fails on what is pending.
    #[test]
    fn pending_updates_fail_without_an_update() {
        let harness = KeyUpdates::<OpenSsl>::new();
        let setup = harness.setup().expect("setup");
        let plain = key_update::without_update(&harness, &setup, (FLIGHT_LEN, FLIGHT_LEN));
        let error = harness.check(&setup, &plain).expect_err("no update");
        assert!(error.to_string().contains("did not receive"), "{error}");

        let mut pair = key_update::take_pair(&key_update::without_update(&harness, &setup, (0, 0)));
        OpenSsl::update_client(&mut pair).expect("update");
        let error = OpenSsl::check_updates(pair, 1, SSL_KEY_UPDATE_NOT_REQUESTED)
            .expect_err("requested, never sent");
        assert!(error.to_string().contains("still pending"), "{error}");
    }
}
