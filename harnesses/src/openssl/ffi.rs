//! The few OpenSSL 3.0 calls the `openssl` crate does not wrap, with safe
//! wrappers.
//!
//! They are declared here rather than taken from `openssl-sys` because
//! `openssl-sys` 0.9 lacks them (`SSL_get_peer_signature_type_nid`,
//! `SSL_get_signature_type_nid`, `SSL_group_to_name`, `SSL_SESSION_set_time`,
//! `SSL_SESSION_has_ticket`), or because they are C
//! macros over `SSL_ctrl` in OpenSSL's headers (`SSL_get_negotiated_group`,
//! `SSL_get_peer_signature_nid`, `SSL_get_signature_nid`). Every function here
//! exists in OpenSSL 3.0's `libssl.so.3` / `libcrypto.so.3`, which
//! `openssl-sys` links; the signatures are copied from 3.0's `ssl.h` and
//! `tls1.h`. (The RNG's two declarations live with the RNG, in `rng.rs`.)

use std::ffi::{c_char, c_int, c_long, c_void, CStr};

use foreign_types::ForeignTypeRef;
use openssl::nid::Nid;
use openssl::ssl::{SslRef, SslSessionRef};
use openssl_sys::{SSL, SSL_SESSION};

/// `SSL_CTRL_GET_PEER_SIGNATURE_NID` (ssl.h): the digest of the peer's
/// handshake signature.
const SSL_CTRL_GET_PEER_SIGNATURE_NID: c_int = 108;
/// `SSL_CTRL_GET_SIGNATURE_NID` (ssl.h): the digest of our own handshake
/// signature.
const SSL_CTRL_GET_SIGNATURE_NID: c_int = 132;
/// `SSL_CTRL_GET_NEGOTIATED_GROUP` (ssl.h): the key-exchange group.
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;

/// `OPENSSL_INIT_NO_LOAD_CONFIG` (crypto.h): do not read `openssl.cnf`.
pub const OPENSSL_INIT_NO_LOAD_CONFIG: u64 = 0x0000_0080;

/// `OPENSSL_INFO_CPU_SETTINGS` (crypto.h): the capability vector the
/// library's assembly dispatches on, after `OPENSSL_ia32cap`.
const OPENSSL_INFO_CPU_SETTINGS: c_int = 1008;

extern "C" {
    fn OPENSSL_info(kind: c_int) -> *const c_char;
    fn SSL_get_peer_signature_type_nid(s: *const SSL, pnid: *mut c_int) -> c_int;
    fn SSL_get_signature_type_nid(s: *const SSL, pnid: *mut c_int) -> c_int;
    fn SSL_group_to_name(s: *mut SSL, id: c_int) -> *const c_char;
    fn SSL_SESSION_set_time(s: *mut SSL_SESSION, t: c_long) -> c_long;
    fn SSL_SESSION_has_ticket(s: *const SSL_SESSION) -> c_int;
}

/// The signature algorithm (key type) of the handshake signature this side
/// verified, if there was one: `RSASSAPSS` for `rsa_pss_*`,
/// `X9_62_ID_ECPUBLICKEY` for `ecdsa_*`. `None` after a resumption (no
/// CertificateVerify) and, on a server, without client authentication.
pub fn peer_signature_type(ssl: &SslRef) -> Option<Nid> {
    let mut nid: c_int = 0;
    // SAFETY: `ssl` is a live `SSL`; OpenSSL writes one int through `pnid`
    // and keeps neither pointer.
    let ok = unsafe { SSL_get_peer_signature_type_nid(ssl.as_ptr(), &mut nid) };
    (ok == 1 && nid != 0).then(|| Nid::from_raw(nid))
}

/// The signature algorithm (key type) of the handshake signature this side
/// made, if any (see [`peer_signature_type`]).
pub fn own_signature_type(ssl: &SslRef) -> Option<Nid> {
    let mut nid: c_int = 0;
    // SAFETY: as in `peer_signature_type`.
    let ok = unsafe { SSL_get_signature_type_nid(ssl.as_ptr(), &mut nid) };
    (ok == 1 && nid != 0).then(|| Nid::from_raw(nid))
}

/// The digest of the handshake signature this side verified
/// (`SSL_get_peer_signature_nid`).
pub fn peer_signature_digest(ssl: &SslRef) -> Option<Nid> {
    ctrl_nid(ssl, SSL_CTRL_GET_PEER_SIGNATURE_NID)
}

/// The digest of the handshake signature this side made
/// (`SSL_get_signature_nid`).
pub fn own_signature_digest(ssl: &SslRef) -> Option<Nid> {
    ctrl_nid(ssl, SSL_CTRL_GET_SIGNATURE_NID)
}

fn ctrl_nid(ssl: &SslRef, cmd: c_int) -> Option<Nid> {
    let mut nid: c_int = 0;
    // SAFETY: both controls write one int through `parg` and return 1 on
    // success; `ssl` is live. `SSL_ctrl` takes `*mut SSL` but these
    // controls only read the connection.
    let ok = unsafe {
        openssl_sys::SSL_ctrl(ssl.as_ptr(), cmd, 0, &mut nid as *mut c_int as *mut c_void)
    };
    (ok == 1 && nid != 0).then(|| Nid::from_raw(nid))
}

/// The negotiated key-exchange group (`SSL_get_negotiated_group`), as a NID.
pub fn negotiated_group(ssl: &SslRef) -> Option<Nid> {
    // SAFETY: a read-only control on a live `SSL`; `parg` is unused.
    let nid = unsafe {
        openssl_sys::SSL_ctrl(
            ssl.as_ptr(),
            SSL_CTRL_GET_NEGOTIATED_GROUP,
            0,
            std::ptr::null_mut(),
        )
    };
    let nid = c_int::try_from(nid).ok()?;
    (nid > 0).then(|| Nid::from_raw(nid))
}

/// The TLS name of a group NID (`secp256r1` for P-256), as OpenSSL knows it.
pub fn group_name(ssl: &SslRef, group: Nid) -> Option<&'static str> {
    // SAFETY: `ssl` is live; OpenSSL returns a pointer into its static group
    // table (or null), never to something owned by `ssl`.
    let name = unsafe { SSL_group_to_name(ssl.as_ptr(), group.as_raw()) };
    if name.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string in OpenSSL's static table.
    unsafe { CStr::from_ptr(name) }.to_str().ok()
}

/// Whether the connection negotiated the extended master secret (TLS 1.2).
pub fn extended_master_secret(ssl: &SslRef) -> bool {
    // SAFETY: a read-only control on a live `SSL`.
    unsafe { openssl_sys::SSL_get_extms_support(ssl.as_ptr()) == 1 }
}

/// Sets a session's creation time (`SSL_SESSION_set_time`).
///
/// # Safety
///
/// OpenSSL sessions are meant to be immutable once shared: no connection may
/// be using `session`, and no other thread may read it, during the call.
pub unsafe fn set_session_time(session: &SslSessionRef, time: i64) -> Result<(), &'static str> {
    let time = c_long::try_from(time).map_err(|_| "session time out of range")?;
    // SAFETY: `session` is live; the caller guarantees exclusive use.
    if unsafe { SSL_SESSION_set_time(session.as_ptr(), time) } == 0 {
        return Err("SSL_SESSION_set_time failed");
    }
    Ok(())
}

/// Whether a session carries a session ticket (`SSL_SESSION_has_ticket`).
pub fn session_has_ticket(session: &SslSessionRef) -> bool {
    // SAFETY: a read-only getter on a live session.
    unsafe { SSL_SESSION_has_ticket(session.as_ptr()) == 1 }
}

/// The CPU settings OpenSSL's assembly dispatches on, as OpenSSL prints
/// them (`OPENSSL_ia32cap=0x...:0x... env:...`, what `openssl info
/// -cpusettings` shows); `None` when it has none (a build without
/// assembly, or not x86).
pub fn cpu_settings() -> Option<String> {
    // SAFETY: OPENSSL_info returns a pointer to a static NUL-terminated
    // string (or null), valid for the life of the process.
    let text = unsafe { OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS) };
    if text.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated, static (above).
    let text = unsafe { std::ffi::CStr::from_ptr(text) };
    Some(text.to_string_lossy().into_owned())
}
