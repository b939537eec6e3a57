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
//!
//! Built against OpenSSL 1.1.1 (the `openssl_1_1` generation, chosen by
//! `harnesses/build.rs`), three of them do not exist, and 1.1.1's way to the
//! same fact is used: the negotiated group from the peer's ephemeral key (or
//! a TLS 1.2 server's first shared group, which is the one it chose), the
//! group's TLS name from a table, and the CPU settings from
//! `OPENSSL_ia32cap_P`, the capability vector itself.

#[cfg(not(openssl_1_1))]
use std::ffi::{c_char, CStr};
use std::ffi::{c_int, c_long, c_void};

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
#[cfg(not(openssl_1_1))]
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;

/// `OPENSSL_INIT_NO_LOAD_CONFIG` (crypto.h): do not read `openssl.cnf`.
pub const OPENSSL_INIT_NO_LOAD_CONFIG: u64 = 0x0000_0080;

/// `OPENSSL_INFO_CPU_SETTINGS` (crypto.h): the capability vector the
/// library's assembly dispatches on, after `OPENSSL_ia32cap`.
#[cfg(not(openssl_1_1))]
const OPENSSL_INFO_CPU_SETTINGS: c_int = 1008;

extern "C" {
    fn SSL_get_peer_signature_type_nid(s: *const SSL, pnid: *mut c_int) -> c_int;
    fn SSL_get_signature_type_nid(s: *const SSL, pnid: *mut c_int) -> c_int;
    fn SSL_SESSION_set_time(s: *mut SSL_SESSION, t: c_long) -> c_long;
    fn SSL_SESSION_has_ticket(s: *const SSL_SESSION) -> c_int;
}

#[cfg(not(openssl_1_1))]
extern "C" {
    fn OPENSSL_info(kind: c_int) -> *const c_char;
    fn SSL_group_to_name(s: *mut SSL, id: c_int) -> *const c_char;
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
#[cfg(not(openssl_1_1))]
pub fn negotiated_group(ssl: &SslRef) -> Option<Nid> {
    returned_nid(ssl, SSL_CTRL_GET_NEGOTIATED_GROUP)
}

/// The NID a read-only control of `ssl` returns (rather than writes
/// through `parg`): the negotiated group (3.0), a shared group (1.1.1).
fn returned_nid(ssl: &SslRef, cmd: c_int) -> Option<Nid> {
    // SAFETY: a read-only control on a live `SSL`; `parg` is unused.
    let nid = unsafe { openssl_sys::SSL_ctrl(ssl.as_ptr(), cmd, 0, std::ptr::null_mut()) };
    let nid = c_int::try_from(nid).ok()?;
    (nid > 0).then(|| Nid::from_raw(nid))
}

/// The TLS name of a group NID (`secp256r1` for P-256), as OpenSSL knows it.
#[cfg(not(openssl_1_1))]
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
#[cfg(not(openssl_1_1))]
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

#[cfg(openssl_1_1)]
pub use v1_1::{cpu_settings, group_name, negotiated_group};

/// OpenSSL 1.1.1's way to what 3.0's calls above say.
#[cfg(openssl_1_1)]
mod v1_1 {
    use std::ffi::{c_int, c_uint, c_void};

    use foreign_types::ForeignType as _;
    use foreign_types::ForeignTypeRef as _;
    use openssl::nid::Nid;
    use openssl::pkey::{Id, PKey, Public};
    use openssl::ssl::{SslRef, SslVersion};

    /// `SSL_CTRL_GET_SHARED_GROUP` (1.1.1's ssl.h).
    const SSL_CTRL_GET_SHARED_GROUP: c_int = 93;
    /// `SSL_CTRL_GET_PEER_TMP_KEY` (1.1.1's ssl.h).
    const SSL_CTRL_GET_PEER_TMP_KEY: c_int = 109;

    extern "C" {
        /// 1.1.1's `cryptlib.c`: the x86 capability vector its assembly
        /// dispatches on, what 3.0's `OPENSSL_info` prints.
        static OPENSSL_ia32cap_P: [c_uint; 4];
    }

    /// The negotiated key-exchange group, as a NID. 1.1.1 has no
    /// `SSL_get_negotiated_group`. A TLS 1.2 server's first shared group
    /// (`SSL_get_shared_group(s, 0)`) is the one it chose for its
    /// ServerKeyExchange; everywhere else the peer's ephemeral key
    /// (`SSL_get_peer_tmp_key`) is of the negotiated group.
    pub fn negotiated_group(ssl: &SslRef) -> Option<Nid> {
        // SAFETY: `SSL_is_server` only reads a flag of a live `SSL`.
        let server = unsafe { openssl_sys::SSL_is_server(ssl.as_ptr()) } == 1;
        if server && ssl.version2() == Some(SslVersion::TLS1_2) {
            return super::returned_nid(ssl, SSL_CTRL_GET_SHARED_GROUP);
        }
        let mut key: *mut openssl_sys::EVP_PKEY = std::ptr::null_mut();
        // SAFETY: the control writes one pointer through `parg`, a key whose
        // reference count it raised for the caller, and returns 1; `ssl` is
        // live.
        let ok = unsafe {
            openssl_sys::SSL_ctrl(
                ssl.as_ptr(),
                SSL_CTRL_GET_PEER_TMP_KEY,
                0,
                &mut key as *mut *mut openssl_sys::EVP_PKEY as *mut c_void,
            )
        };
        if ok != 1 || key.is_null() {
            return None;
        }
        // SAFETY: a key this call owns one reference of (above), released
        // when `key` drops.
        let key: PKey<Public> = unsafe { PKey::from_ptr(key) };
        match key.id() {
            // A key type's id is its algorithm's NID (`EVP_PKEY_X25519` is
            // `NID_X25519`).
            id @ (Id::X25519 | Id::X448) => Some(Nid::from_raw(id.as_raw())),
            Id::EC => key.ec_key().ok()?.group().curve_name(),
            _ => None,
        }
    }

    /// The TLS name of a group NID, from 1.1.1's table of the groups it
    /// implements (it has no `SSL_group_to_name`).
    pub fn group_name(_: &SslRef, group: Nid) -> Option<&'static str> {
        match group {
            Nid::X9_62_PRIME256V1 => Some("secp256r1"),
            Nid::SECP384R1 => Some("secp384r1"),
            Nid::SECP521R1 => Some("secp521r1"),
            _ if group.as_raw() == Id::X25519.as_raw() => Some("x25519"),
            _ if group.as_raw() == Id::X448.as_raw() => Some("x448"),
            _ => None,
        }
    }

    /// The CPU settings, in the form 3.0's `OPENSSL_info` prints them
    /// (`OPENSSL_ia32cap=0x...:0x...`).
    pub fn cpu_settings() -> Option<String> {
        // SAFETY: OpenSSL writes the vector once, in its initialisation,
        // which `system::init` ran before any reader; afterwards it is only
        // read.
        let cap = unsafe { OPENSSL_ia32cap_P };
        let low = u64::from(cap[0]) | (u64::from(cap[1]) << 32);
        let high = u64::from(cap[2]) | (u64::from(cap[3]) << 32);
        Some(format!("OPENSSL_ia32cap=0x{low:x}:0x{high:x}"))
    }
}
