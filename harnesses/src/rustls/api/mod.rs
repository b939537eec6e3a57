//! The rustls API the harnesses call, for each API generation they cover.
//!
//! The harnesses themselves (`super::config`, `super::tls`, `super::check`,
//! ...) are written once. What they need from rustls and what differs
//! between generations is here, under the same names in each:
//!
//! - `v0_23`: rustls 0.23 with its built-in aws-lc-rs provider (the
//!   default build);
//! - `v0_24`: rustls 0.24.0-dev (feature `rustls-0-24`) with the
//!   `rustls-aws-lc-rs` provider crate, in two variants of its IO
//!   (`v0_24::release` for the crates.io 0.24.0-dev.1 release,
//!   `v0_24::main` for rustls main after it, feature `rustls-0-24-main`).
//!
//! What each provides:
//!
//! - the rustls items the harnesses name, re-exported under one path
//!   (`ClientConfig`, `Outputs`, `Ticket`, `webpki`, ...);
//! - config building: [`pinned_provider`], the builders with the pinned
//!   version, the webpki verifiers, loading a chain and key, tickets;
//! - [`Side`]: one connection with the buffers its generation needs, and
//!   the IO over the shared transport (`flush`, `deliver`); [`transfer`],
//!   the record paths' counted loop (0.23 and the 0.24.0-dev.1 release share
//!   theirs in `queued`, whose IO differs only in where read data waits);
//! - what checks read ([`sni`], [`peer_chain`]);
//! - the trait impls the harnesses' own types need: the noting verifiers
//!   (`super::verify`), the ticket queue's session store
//!   (`super::resumption`), and the webpki verification of the x509
//!   harnesses ([`verify_server`]).
//!
//! `super` documents what differs between the generations.

/// The ticket queue's `ClientSessionStore` (`super::resumption`): TLS 1.3
/// tickets and TLS 1.2 sessions, caught or offered by the queue; no
/// key-exchange hints. The trait's methods have the same names in both
/// generations; `$key` is what identifies a server (0.23: `ServerName`,
/// 0.24: `ClientSessionKey`) and `$tls12` a TLS 1.2 session.
macro_rules! ticket_queue_store {
    ($key:ident, $tls12:ty) => {
        impl ClientSessionStore for TicketQueue {
            fn set_kx_hint(&self, _: $key<'static>, _: NamedGroup) {}

            fn kx_hint(&self, _: &$key<'_>) -> Option<NamedGroup> {
                None
            }

            fn set_tls12_session(&self, _: $key<'static>, session: $tls12) {
                self.catch_tls12(session);
            }

            fn tls12_session(&self, _: &$key<'_>) -> Option<$tls12> {
                self.offer_tls12()
            }

            fn remove_tls12_session(&self, _: &$key<'static>) {}

            fn insert_tls13_ticket(&self, _: $key<'static>, ticket: Ticket) {
                self.catch(ticket);
            }

            fn take_tls13_ticket(&self, _: &$key<'static>) -> Option<Ticket> {
                self.offer()
            }
        }
    };
}

/// The session cache's `StoresServerSessions` (`super::resumption`): the
/// trait's methods have the same names in both generations; `$owned` and
/// `$borrowed` are how a session's key is handed over (0.23: `Vec<u8>` and
/// `&[u8]`, 0.24: `ServerSessionKey`), both read as bytes.
macro_rules! session_cache_store {
    ($owned:ty, $borrowed:ty) => {
        impl StoresServerSessions for SessionCache {
            fn put(&self, key: $owned, value: Vec<u8>) -> bool {
                self.keep(key.as_ref(), value)
            }

            fn get(&self, key: $borrowed) -> Option<Vec<u8>> {
                self.find(key.as_ref())
            }

            fn take(&self, key: $borrowed) -> Option<Vec<u8>> {
                self.remove(key.as_ref())
            }

            fn can_cache(&self) -> bool {
                true
            }
        }
    };
}

#[cfg(not(feature = "rustls-0-24-main"))]
#[macro_use]
mod queued;

#[cfg(not(feature = "rustls-0-24"))]
mod v0_23;
#[cfg(not(feature = "rustls-0-24"))]
pub use v0_23::*;

#[cfg(feature = "rustls-0-24")]
mod v0_24;
#[cfg(feature = "rustls-0-24")]
pub use v0_24::*;
