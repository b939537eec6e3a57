//! [`ConnectionInfo`]: what a server reads about a connection once its
//! handshake is done, for its access log and its authorization.

use std::ffi::c_void;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use regress_measure::parts::Side;
use regress_measure::{Harness, HarnessError};
use s2n_tls::enums::Version;
use s2n_tls::ffi;

use super::check::check_handshake;
use super::config::{client_config, policy, server_builder, Configs, PINNED_POLICY};
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::common::pins::TlsVersion;
use crate::common::pki::{Pki, IDENTITY, IDENTITY_OID};
use crate::paths::Handshake;
use crate::tls::sides::Sides;

/// The handshake the feature runs on: mTLS on ECDSA P-256 whose client
/// leaf carries an identity extension, so that the server has a client
/// chain and an identity to read.
pub const HANDSHAKE: Handshake = Handshake {
    client_auth: true,
    ..Handshake::full(Pki::EcdsaP256ClientId, TlsVersion::Tls13)
};

/// Room for the identity extension's DER value and its UTF-8 string: the
/// test leaf's is 27 bytes.
const IDENTITY_CAPACITY: usize = 256;

/// Room for one line of the log: every field below fits many times over.
const LINE_CAPACITY: usize = 512;

/// The fields of one line, in order, separated by one space.
const FIELDS: usize = 7;

/// After an mTLS ECDSA P-256 handshake, the server reads what an access log
/// and an authorization step record about the connection, through
/// s2n-tls's getters, and appends each to one log line; then the client's
/// identity from its leaf's private extension, through the C API (the Rust
/// bindings have no call for certificate extensions; s2n-tls's C users,
/// most of its users, read them so).
///
/// **Counted:** on the server, `actual_protocol_version`
/// (`s2n_connection_get_actual_protocol_version`), `cipher_suite`
/// (`s2n_connection_get_cipher`), `selected_key_exchange_group`
/// (`s2n_connection_get_key_exchange_group`), `signature_scheme`
/// (`s2n_connection_get_signature_scheme`), `handshake_type`
/// (`s2n_connection_get_handshake_type_name`, which builds each type's name
/// once per process and returns it from a cache afterwards: the counted
/// run, the third, reads the cache) and `client_cert_chain_bytes`
/// (`s2n_connection_get_client_cert_chain`), each appended to a line whose
/// room was made in `prepare` (a copy of the bytes; the chain as its
/// length); then `s2n_connection_get_peer_cert_chain` into a chain made in
/// `prepare`, `s2n_cert_chain_get_cert` for the leaf,
/// `s2n_cert_get_x509_extension_value_length` and
/// `s2n_cert_get_x509_extension_value` for [`IDENTITY_OID`] (s2n-tls parses
/// the leaf's DER and walks its extensions), and
/// `s2n_cert_get_utf8_string_from_extension_data_length` and
/// `s2n_cert_get_utf8_string_from_extension_data` for its string, appended
/// too. Marked as the server's second stage.
///
/// **The C API's connection:** the bindings keep a connection's C pointer
/// private. The server config's key-log callback
/// (`s2n_config_set_key_log_callback`, public; s2n-tls calls it with the
/// connection during every TLS 1.3 handshake) notes the pointer during the
/// handshake in `prepare`, and `prepare` proves it is the server's: the C
/// call for the client's chain on it returns the very bytes the bindings
/// return for `pair.server`.
///
/// **Not counted:** the configs (`setup`), the connection pair and its
/// whole handshake, the empty chain and the buffers (`prepare`), freeing the
/// chain, the check.
///
/// **Check:** the handshake's own check (pins, chains, a full handshake
/// with client authentication), then every field of the line against the
/// path's pins: `TLSv1_3`, the suite, the group, the server's signature
/// scheme, a handshake type naming `FULL_HANDSHAKE` and `CLIENT_AUTH`, and
/// the length of the client's chain as the server received it, the identity
/// the leaf was issued with. A server that did not ask for a client
/// certificate fails the run; a client leaf without the extension fails it
/// in s2n-tls's extension lookup.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectionInfo;

/// The configs, and where the server config's key-log callback notes the
/// C pointer of the connection it runs on.
#[derive(Debug)]
pub struct InfoSetup {
    configs: Configs,
    /// Boxed: the callback's context pointer must stay put for the config's
    /// life.
    noted: Box<AtomicPtr<ffi::s2n_connection>>,
}

impl InfoSetup {
    /// [`HANDSHAKE`]'s configs as `Configs::new` builds them, with the
    /// key-log callback on the server's.
    fn new() -> Result<InfoSetup, HarnessError> {
        let profile = HANDSHAKE.profile();
        let pki = profile.pki;
        let pinned = policy(PINNED_POLICY)?;
        let client = client_config(&pinned, pki, pki.host(), None, Some(pki))?;
        let noted = Box::new(AtomicPtr::new(ptr::null_mut()));
        let mut builder = server_builder(
            &pinned,
            (pki.server_chain_pem(), pki.server_key_pem()),
            pki,
            false,
            true,
            None,
        )?;
        let context = ptr::from_ref::<AtomicPtr<ffi::s2n_connection>>(&noted)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: `note_connection` only stores the pointer it is given into
        // the `AtomicPtr` behind `context`, which `InfoSetup` keeps, boxed,
        // as long as the config that calls it.
        unsafe { builder.set_key_log_callback(Some(note_connection), context) }
            .context("setting the key-log callback")?;
        let server = builder.build().context("building the server config")?;
        Ok(InfoSetup {
            configs: Configs {
                client,
                server,
                profile,
                tickets: None,
            },
            noted,
        })
    }
}

/// The key-log callback: notes the connection it runs on, logs nothing.
///
/// # Safety
///
/// `context` is the `AtomicPtr` an [`InfoSetup`] keeps.
unsafe extern "C" fn note_connection(
    context: *mut c_void,
    connection: *mut ffi::s2n_connection,
    _line: *mut u8,
    _len: usize,
) -> std::ffi::c_int {
    // SAFETY: the caller's contract above.
    let noted = unsafe { &*context.cast::<AtomicPtr<ffi::s2n_connection>>() };
    noted.store(connection, Ordering::Relaxed);
    0
}

/// What a run appends to: a line, an empty chain and a buffer made outside
/// the count.
#[derive(Debug)]
pub struct Logged {
    pair: Pair,
    /// The server's C pointer, proved to be `pair.server`'s.
    server: NonNull<ffi::s2n_connection>,
    chain: PeerChain,
    line: String,
    identity: [u8; IDENTITY_CAPACITY],
}

/// An empty `s2n_cert_chain_and_key` for the peer's chain, freed on drop.
#[derive(Debug)]
struct PeerChain(NonNull<ffi::s2n_cert_chain_and_key>);

impl PeerChain {
    fn new() -> Result<PeerChain, HarnessError> {
        // SAFETY: allocates a new, empty chain or returns null.
        NonNull::new(unsafe { ffi::s2n_cert_chain_and_key_new() })
            .map(PeerChain)
            .ok_or_else(|| "s2n_cert_chain_and_key_new failed".into())
    }
}

impl Drop for PeerChain {
    fn drop(&mut self) {
        // SAFETY: the chain was made by `s2n_cert_chain_and_key_new` and is
        // freed once, here.
        unsafe { ffi::s2n_cert_chain_and_key_free(self.0.as_ptr()) };
    }
}

impl Harness for ConnectionInfo {
    type Setup = InfoSetup;
    type Input = Logged;
    type Output = Logged;

    fn sides(&self) -> bool {
        true
    }

    fn setup(&self) -> Result<InfoSetup, HarnessError> {
        InfoSetup::new()
    }

    fn prepare(&self, setup: &InfoSetup) -> Result<Logged, HarnessError> {
        setup.noted.store(ptr::null_mut(), Ordering::Relaxed);
        let mut pair = Pair::new(&setup.configs)?;
        pair.handshake()
            .context("the handshake before the server reads it")?;
        let server = NonNull::new(setup.noted.load(Ordering::Relaxed))
            .ok_or("the server's key-log callback never ran")?;
        ensure(same_connection(server, &pair.server)?, || {
            "the connection the key-log callback noted is not the server's".to_owned()
        })?;
        Ok(Logged {
            pair,
            server,
            chain: PeerChain::new()?,
            line: String::with_capacity(LINE_CAPACITY),
            identity: [0; IDENTITY_CAPACITY],
        })
    }

    fn run(&self, _: &InfoSetup, mut logged: Logged) -> Result<Logged, HarnessError> {
        Sides::established().call(Side::Server, || -> Result<(), HarnessError> {
            log(&logged.pair.server, &mut logged.line)?;
            logged.line.push(' ');
            // SAFETY: `server` is `pair.server`'s connection (proved in
            // `prepare`), alive as long as `pair`; the chain is empty.
            let identity =
                unsafe { read_identity(logged.server, &logged.chain, &mut logged.identity) }?;
            logged.line.push_str(identity);
            Ok(())
        })?;
        Ok(logged)
    }

    fn check(&self, setup: &InfoSetup, logged: &Logged) -> Result<(), HarnessError> {
        check_handshake(&logged.pair, &setup.configs.profile, &HANDSHAKE.expected())?;
        check_line(&logged.line, &logged.pair)
    }
}

/// Whether `noted` is `server`'s C connection: the C call for the client's
/// chain returns the same bytes, at the same address, as the bindings'.
fn same_connection(
    noted: NonNull<ffi::s2n_connection>,
    server: &s2n_tls::connection::Connection,
) -> Result<bool, HarnessError> {
    let held = server
        .client_cert_chain_bytes()
        .context("reading the client's chain")?
        .ok_or("the server holds no client chain")?;
    let mut chain: *mut u8 = ptr::null_mut();
    let mut len: u32 = 0;
    // SAFETY: `noted` came from s2n-tls during this pair's handshake, and
    // the config's connections are alive: the pair holds them.
    let status =
        unsafe { ffi::s2n_connection_get_client_cert_chain(noted.as_ptr(), &mut chain, &mut len) };
    Ok(status == 0
        && ptr::eq(chain.cast_const(), held.as_ptr())
        && usize::try_from(len).is_ok_and(|len| len == held.len()))
}

/// Fails with `what` unless a C call returned success.
fn succeeded(status: std::ffi::c_int, what: &str) -> Result<(), HarnessError> {
    ensure(status == 0, || format!("{what} failed"))
}

/// The client's identity: its leaf's [`IDENTITY_OID`] extension as a UTF-8
/// string, read through s2n-tls's C API into `buffer`.
///
/// # Safety
///
/// `server` is a live server connection after its handshake; `chain` is
/// empty.
unsafe fn read_identity<'a>(
    server: NonNull<ffi::s2n_connection>,
    chain: &PeerChain,
    buffer: &'a mut [u8; IDENTITY_CAPACITY],
) -> Result<&'a str, HarnessError> {
    let oid = IDENTITY_OID.as_ptr();
    let mut leaf: *mut ffi::s2n_cert = ptr::null_mut();
    let mut value = [0u8; IDENTITY_CAPACITY];
    let mut value_len: u32 = 0;
    let mut critical = false;
    let mut text_len: u32 = 0;
    let capacity = u32::try_from(IDENTITY_CAPACITY).map_err(|_| "buffer too large")?;
    // SAFETY (every call): the pointers are live (the caller's contract),
    // the OID is NUL-terminated, and each length passed in is its buffer's.
    unsafe {
        succeeded(
            ffi::s2n_connection_get_peer_cert_chain(server.as_ptr(), chain.0.as_ptr()),
            "s2n_connection_get_peer_cert_chain",
        )?;
        succeeded(
            ffi::s2n_cert_chain_get_cert(chain.0.as_ptr(), &mut leaf, 0),
            "s2n_cert_chain_get_cert",
        )?;
        succeeded(
            ffi::s2n_cert_get_x509_extension_value_length(leaf, oid, &mut value_len),
            "s2n_cert_get_x509_extension_value_length",
        )?;
        ensure(value_len <= capacity, || {
            format!("the identity extension is {value_len} bytes, more than {capacity}")
        })?;
        succeeded(
            ffi::s2n_cert_get_x509_extension_value(
                leaf,
                oid,
                value.as_mut_ptr(),
                &mut value_len,
                &mut critical,
            ),
            "s2n_cert_get_x509_extension_value",
        )?;
        succeeded(
            ffi::s2n_cert_get_utf8_string_from_extension_data_length(
                value.as_ptr(),
                value_len,
                &mut text_len,
            ),
            "s2n_cert_get_utf8_string_from_extension_data_length",
        )?;
        ensure(text_len <= capacity, || {
            format!("the identity is {text_len} bytes, more than {capacity}")
        })?;
        text_len = capacity;
        succeeded(
            ffi::s2n_cert_get_utf8_string_from_extension_data(
                value.as_ptr(),
                value_len,
                buffer.as_mut_ptr(),
                &mut text_len,
            ),
            "s2n_cert_get_utf8_string_from_extension_data",
        )?;
    }
    let text = usize::try_from(text_len)
        .ok()
        .and_then(|len| buffer.get(..len))
        .ok_or("s2n-tls returned a longer string than its buffer")?;
    std::str::from_utf8(text).map_err(|_| "the identity is not UTF-8".into())
}

/// One log line of what `server` negotiated, appended to `line`.
fn log(server: &s2n_tls::connection::Connection, line: &mut String) -> Result<(), HarnessError> {
    let version = server
        .actual_protocol_version()
        .context("reading the protocol version")?;
    line.push_str(version_name(version));
    line.push(' ');
    line.push_str(server.cipher_suite().context("reading the cipher suite")?);
    line.push(' ');
    line.push_str(
        server
            .selected_key_exchange_group()
            .ok_or("the server reports no key-exchange group")?,
    );
    line.push(' ');
    line.push_str(
        server
            .signature_scheme()
            .ok_or("the server reports no signature scheme")?,
    );
    line.push(' ');
    line.push_str(
        server
            .handshake_type()
            .context("reading the handshake type")?,
    );
    line.push(' ');
    let chain = server
        .client_cert_chain_bytes()
        .context("reading the client's chain")?
        .ok_or("the server holds no client chain")?;
    push_decimal(line, chain.len());
    Ok(())
}

/// A version's name as the log writes it.
fn version_name(version: Version) -> &'static str {
    match version {
        Version::TLS13 => "TLSv1_3",
        Version::TLS12 => "TLSv1_2",
        _ => "older",
    }
}

/// `n` in decimal, without the formatting machinery.
fn push_decimal(line: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        // A digit: n % 10 < 10 fits in a u8.
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &digits[at..] {
        line.push(char::from(digit));
    }
}

/// Checks each field of `line` against the path's pins and what the server
/// holds.
fn check_line(line: &str, pair: &Pair) -> Result<(), HarnessError> {
    let fields: Vec<&str> = line.split(' ').collect();
    ensure(fields.len() == FIELDS, || {
        format!(
            "the log line {line:?} has {} fields, {FIELDS} expected",
            fields.len()
        )
    })?;
    let pins = HANDSHAKE.profile().pins;
    let expected = [
        "TLSv1_3",
        pins.suite.name(),
        pins.group.name(),
        pins.scheme.name(),
    ];
    for (field, want) in fields.iter().zip(expected) {
        ensure(*field == want, || {
            format!("the log line {line:?} has {field:?} where {want:?} was expected")
        })?;
    }
    let handshake_type = fields[4];
    for label in ["FULL_HANDSHAKE", "CLIENT_AUTH"] {
        ensure(handshake_type.contains(label), || {
            format!("the logged handshake type {handshake_type:?} does not name {label}")
        })?;
    }
    let held = pair
        .server
        .client_cert_chain_bytes()
        .context("reading the client's chain")?
        .map_or(0, <[u8]>::len);
    ensure(held > 0 && fields[5] == held.to_string(), || {
        format!(
            "the log line gives the client's chain as {} bytes; the server holds {held}",
            fields[5]
        )
    })?;
    ensure(fields[6] == IDENTITY, || {
        format!(
            "the log line gives the client's identity as {:?}; its leaf was issued with {IDENTITY:?}",
            fields[6]
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path runs and passes its check; a line with a field changed
    /// fails the check; a client leaf without the identity extension fails
    /// the run in s2n-tls's lookup, and a server that asked for no client
    /// certificate fails it earlier (no chain to log).
    #[test]
    fn the_line_is_checked_field_by_field() {
        let harness = ConnectionInfo;
        regress_measure::harness::run_natively(&harness).expect("the path");

        let setup = harness.setup().expect("setup");
        let logged = harness.prepare(&setup).expect("prepare");
        let mut logged = harness.run(&setup, logged).expect("run");
        harness.check(&setup, &logged).expect("check");
        logged.line = logged.line.replacen("secp256r1 ", "x25519 ", 1);
        let error = harness.check(&setup, &logged).expect_err("a changed group");
        assert!(error.to_string().contains("\"x25519\""), "{error}");

        let lab = Handshake {
            client_auth: true,
            ..Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13)
        };
        let plain = Handshake::full(Pki::EcdsaP256, TlsVersion::Tls13);
        for (path, expected) in [
            (lab, "s2n_cert_get_x509_extension_value_length failed"),
            (plain, "no client chain"),
        ] {
            let other = Configs::new(&path.profile()).expect("configs");
            // The path's server (its key-log callback notes the connection)
            // with the laboratory client; the plain path's own server.
            let server = if path.client_auth {
                &setup.configs.server
            } else {
                &other.server
            };
            setup.noted.store(ptr::null_mut(), Ordering::Relaxed);
            let mut pair = Pair::with_configs(&other.client, server).expect("pair");
            pair.handshake().expect("the handshake");
            let noted = setup.noted.load(Ordering::Relaxed);
            assert_eq!(noted.is_null(), !path.client_auth, "{path}");
            let logged = Logged {
                pair,
                server: NonNull::new(noted).unwrap_or(NonNull::dangling()),
                chain: PeerChain::new().expect("chain"),
                line: String::with_capacity(LINE_CAPACITY),
                identity: [0; IDENTITY_CAPACITY],
            };
            let error = harness.run(&setup, logged).expect_err(expected);
            assert!(error.to_string().contains(expected), "{error}");
        }
    }

    #[test]
    fn decimals_are_written_as_text_writes_them() {
        for n in [0, 7, 10, 1234, usize::MAX] {
            let mut line = String::new();
            push_decimal(&mut line, n);
            assert_eq!(line, n.to_string());
        }
    }
}
