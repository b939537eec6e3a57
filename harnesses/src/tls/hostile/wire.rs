//! TLS bytes by hand: the ClientHello a hostile client sends, its records,
//! and a reader for what the server answers (the first record only: a
//! plaintext ServerHello, HelloRetryRequest or alert).
//!
//! Only what the hostile paths need, written from RFC 8446 (sections 4.1.2,
//! 4.1.3, 4.2, 5.1) and tested against itself and, through the paths, against
//! three servers that must accept it.

use std::fmt;

/// Record content types (RFC 8446 section 5.1).
pub const ALERT: u8 = 21;
/// A handshake record.
pub const HANDSHAKE: u8 = 22;

/// Handshake message types.
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;

/// Extension types (RFC 8446 section 4.2).
pub mod ext {
    pub const SERVER_NAME: u16 = 0;
    pub const SUPPORTED_GROUPS: u16 = 10;
    pub const SIGNATURE_ALGORITHMS: u16 = 13;
    pub const PRE_SHARED_KEY: u16 = 41;
    pub const SUPPORTED_VERSIONS: u16 = 43;
    pub const PSK_KEY_EXCHANGE_MODES: u16 = 45;
    pub const KEY_SHARE: u16 = 51;
}

/// TLS 1.3's version number; TLS 1.2's is the legacy one every record and
/// hello carries.
pub const TLS13: u16 = 0x0304;
const TLS12: u16 = 0x0303;

/// The ServerHello random that marks a HelloRetryRequest (RFC 8446
/// section 4.1.3): SHA-256 of "HelloRetryRequest".
pub const RETRY_RANDOM: [u8; 32] = [
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
];

/// The largest plaintext of one record.
pub const MAX_FRAGMENT: usize = 16 * 1024;

/// Why bytes could not be written or read as TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// A vector longer than its length field can say.
    TooLong { len: usize, width: usize },
    /// A read past the end.
    Short { wanted: usize, left: usize },
    /// A record size outside 1 to [`MAX_FRAGMENT`].
    Fragment(usize),
    /// Something other than what the protocol puts there.
    Unexpected(&'static str),
    /// Bytes after the first record of a first flight.
    Trailing(usize),
    /// A handshake message that is not a ServerHello.
    NotServerHello(u8),
    /// A record that is neither a handshake nor an alert.
    RecordType(u8),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::TooLong { len, width } => {
                write!(f, "{len} bytes do not fit a {width}-byte length")
            }
            WireError::Short { wanted, left } => write!(f, "{wanted} bytes wanted, {left} left"),
            WireError::Fragment(size) => {
                write!(f, "a record holds 1 to {MAX_FRAGMENT} bytes, not {size}")
            }
            WireError::Unexpected(what) => f.write_str(what),
            WireError::Trailing(len) => write!(f, "{len} bytes after the first record"),
            WireError::NotServerHello(message) => {
                write!(f, "handshake message {message}, not a ServerHello")
            }
            WireError::RecordType(kind) => {
                write!(f, "a record of type {kind}, not a handshake or alert")
            }
        }
    }
}

impl std::error::Error for WireError {}

/// Appends `bytes` behind a big-endian length of `width` bytes (1, 2 or
/// 3); an error if the length does not fit.
fn put_vec(out: &mut Vec<u8>, width: usize, bytes: &[u8]) -> Result<(), WireError> {
    let len = bytes.len();
    if width > 3 || len >> (8 * width) != 0 {
        return Err(WireError::TooLong { len, width });
    }
    out.extend_from_slice(&len.to_be_bytes()[std::mem::size_of::<usize>() - width..]);
    out.extend_from_slice(bytes);
    Ok(())
}

/// A list of 16-bit code points, as its 2-byte-length vector's body.
pub fn u16s(values: &[u16]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|value| value.to_be_bytes())
        .collect()
}

/// A TLS 1.3 ClientHello: what a hostile client chooses to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientHello {
    pub random: [u8; 32],
    /// The legacy session id (32 bytes, as middlebox-compatible clients
    /// send it).
    pub session_id: [u8; 32],
    pub suites: Vec<u16>,
    /// Extensions in order, each a type and its body.
    pub extensions: Vec<(u16, Vec<u8>)>,
}

impl ClientHello {
    /// The handshake message: type, 3-byte length, body.
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let mut body = Vec::with_capacity(1024);
        body.extend_from_slice(&TLS12.to_be_bytes());
        body.extend_from_slice(&self.random);
        put_vec(&mut body, 1, &self.session_id)?;
        put_vec(&mut body, 2, &u16s(&self.suites))?;
        // Legacy compression methods: null only.
        put_vec(&mut body, 1, &[0])?;
        let mut extensions = Vec::new();
        for (kind, data) in &self.extensions {
            extensions.extend_from_slice(&kind.to_be_bytes());
            put_vec(&mut extensions, 2, data)?;
        }
        put_vec(&mut body, 2, &extensions)?;
        let mut message = vec![CLIENT_HELLO];
        put_vec(&mut message, 3, &body)?;
        Ok(message)
    }
}

impl ClientHello {
    /// Reads a ClientHello that is the whole of one handshake record, as a
    /// real client's first flight is.
    pub fn parse(record: &[u8]) -> Result<ClientHello, WireError> {
        let mut outer = Reader(record);
        if outer.u8()? != HANDSHAKE {
            return Err(WireError::Unexpected("not a handshake record"));
        }
        outer.u16()?;
        let mut message = Reader(outer.vec(2)?);
        if !outer.0.is_empty() {
            return Err(WireError::Trailing(outer.0.len()));
        }
        if message.u8()? != CLIENT_HELLO {
            return Err(WireError::Unexpected("not a ClientHello"));
        }
        let mut body = Reader(message.vec(3)?);
        if !message.0.is_empty() {
            return Err(WireError::Unexpected("more than one message in the record"));
        }
        body.u16()?;
        let random = body
            .take(32)?
            .try_into()
            .map_err(|_| WireError::Unexpected("random"))?;
        let session_id = body
            .vec(1)?
            .try_into()
            .map_err(|_| WireError::Unexpected("a session id of other than 32 bytes"))?;
        let suites = body
            .vec(2)?
            .chunks_exact(2)
            .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
            .collect();
        body.vec(1)?;
        let mut list = Reader(body.vec(2)?);
        let mut extensions = Vec::new();
        while !list.0.is_empty() {
            let kind = list.u16()?;
            extensions.push((kind, list.vec(2)?.to_vec()));
        }
        Ok(ClientHello {
            random,
            session_id,
            suites,
            extensions,
        })
    }
}

/// The first identity and the first binder of a pre_shared_key
/// extension's body.
pub fn first_psk(body: &[u8]) -> Result<(Vec<u8>, Vec<u8>), WireError> {
    let mut body = Reader(body);
    let mut identities = Reader(body.vec(2)?);
    let identity = identities.vec(2)?.to_vec();
    let mut binders = Reader(body.vec(2)?);
    let binder = binders.vec(1)?.to_vec();
    Ok((identity, binder))
}

/// The body of a server_name extension naming `host`.
pub fn server_name(host: &str) -> Result<Vec<u8>, WireError> {
    let mut entry = vec![0];
    put_vec(&mut entry, 2, host.as_bytes())?;
    let mut body = Vec::new();
    put_vec(&mut body, 2, &entry)?;
    Ok(body)
}

/// The body of a supported_versions extension offering `versions`.
pub fn supported_versions(versions: &[u16]) -> Result<Vec<u8>, WireError> {
    let mut body = Vec::new();
    put_vec(&mut body, 1, &u16s(versions))?;
    Ok(body)
}

/// The body of a supported_groups or signature_algorithms extension.
pub fn code_points(values: &[u16]) -> Result<Vec<u8>, WireError> {
    let mut body = Vec::new();
    put_vec(&mut body, 2, &u16s(values))?;
    Ok(body)
}

/// The body of a key_share extension with one share per `(group, key)`.
pub fn key_share(shares: &[(u16, Vec<u8>)]) -> Result<Vec<u8>, WireError> {
    let mut entries = Vec::new();
    for (group, key) in shares {
        entries.extend_from_slice(&group.to_be_bytes());
        put_vec(&mut entries, 2, key)?;
    }
    let mut body = Vec::new();
    put_vec(&mut body, 2, &entries)?;
    Ok(body)
}

/// The body of a psk_key_exchange_modes extension: psk_dhe_ke only.
pub fn psk_dhe_ke() -> Vec<u8> {
    vec![1, 1]
}

/// The body of a pre_shared_key extension offering `identities` (ticket
/// age 0 each) with one `binder` each.
pub fn pre_shared_key(identities: &[Vec<u8>], binder: &[u8]) -> Result<Vec<u8>, WireError> {
    let mut ids = Vec::new();
    for identity in identities {
        put_vec(&mut ids, 2, identity)?;
        ids.extend_from_slice(&0u32.to_be_bytes());
    }
    let mut binders = Vec::new();
    for _ in identities {
        put_vec(&mut binders, 1, binder)?;
    }
    let mut body = Vec::new();
    put_vec(&mut body, 2, &ids)?;
    put_vec(&mut body, 2, &binders)?;
    Ok(body)
}

/// `message` as handshake records of at most `fragment` bytes of plaintext
/// each (1 to [`MAX_FRAGMENT`]).
pub fn records(message: &[u8], fragment: usize) -> Result<Vec<u8>, WireError> {
    if fragment == 0 || fragment > MAX_FRAGMENT {
        return Err(WireError::Fragment(fragment));
    }
    let mut out = Vec::with_capacity(message.len() + message.len().div_ceil(fragment) * 5);
    for chunk in message.chunks(fragment) {
        out.push(HANDSHAKE);
        // The legacy record version of a first ClientHello may be TLS 1.0's;
        // TLS 1.2's is what rustls, OpenSSL and s2n-tls send.
        out.extend_from_slice(&TLS12.to_be_bytes());
        put_vec(&mut out, 2, chunk)?;
    }
    Ok(out)
}

/// What a server answered, read from the first record it sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A ServerHello (or HelloRetryRequest) and what it chose.
    Hello(ServerHello),
    /// A plaintext alert: its level and description.
    Alert { level: u8, description: u8 },
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Hello(hello) => write!(
                f,
                "{} suite {:#06x} group {:?}{}",
                if hello.retry {
                    "HelloRetryRequest"
                } else {
                    "ServerHello"
                },
                hello.suite,
                hello.group,
                if hello.psk { " with a PSK" } else { "" }
            ),
            Reply::Alert { level, description } => {
                write!(f, "alert {description} (level {level})")
            }
        }
    }
}

/// What a ServerHello chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerHello {
    /// A HelloRetryRequest.
    pub retry: bool,
    /// The supported_versions extension's version (`None`: absent).
    pub version: Option<u16>,
    pub suite: u16,
    /// The key share's group (in a HelloRetryRequest, the group asked for).
    pub group: Option<u16>,
    /// Whether the server accepted a pre-shared key.
    pub psk: bool,
}

/// A cursor over bytes a server wrote: hostile to us in principle, so every
/// read is bounded.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if n > self.0.len() {
            return Err(WireError::Short {
                wanted: n,
                left: self.0.len(),
            });
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, WireError> {
        let bytes = self.take(2)?;
        Ok(u16::from_be_bytes([bytes[0], bytes[1]]))
    }

    fn vec(&mut self, width: usize) -> Result<&'a [u8], WireError> {
        let len = self
            .take(width)?
            .iter()
            .fold(0usize, |len, byte| (len << 8) | usize::from(*byte));
        self.take(len)
    }
}

/// Reads the first record of `bytes`, what a server sent first.
pub fn reply(bytes: &[u8]) -> Result<Reply, WireError> {
    let mut record = Reader(bytes);
    let kind = record.u8()?;
    record.u16()?;
    let mut body = Reader(record.vec(2)?);
    match kind {
        ALERT => Ok(Reply::Alert {
            level: body.u8()?,
            description: body.u8()?,
        }),
        HANDSHAKE => {
            let message = body.u8()?;
            if message != SERVER_HELLO {
                return Err(WireError::NotServerHello(message));
            }
            server_hello(&mut Reader(body.vec(3)?)).map(Reply::Hello)
        }
        other => Err(WireError::RecordType(other)),
    }
}

fn server_hello(hello: &mut Reader<'_>) -> Result<ServerHello, WireError> {
    hello.u16()?;
    let retry = hello.take(32)? == RETRY_RANDOM;
    hello.vec(1)?;
    let suite = hello.u16()?;
    hello.u8()?;
    let mut extensions = Reader(hello.vec(2)?);
    let mut server = ServerHello {
        retry,
        version: None,
        suite,
        group: None,
        psk: false,
    };
    while !extensions.0.is_empty() {
        let kind = extensions.u16()?;
        let mut data = Reader(extensions.vec(2)?);
        match kind {
            ext::SUPPORTED_VERSIONS => server.version = Some(data.u16()?),
            ext::KEY_SHARE => server.group = Some(data.u16()?),
            ext::PRE_SHARED_KEY => server.psk = true,
            _ => {}
        }
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello() -> ClientHello {
        ClientHello {
            random: [7; 32],
            session_id: [9; 32],
            suites: vec![0x1301, 0x1302],
            extensions: vec![
                (ext::SERVER_NAME, server_name("localhost").expect("name")),
                (
                    ext::SUPPORTED_VERSIONS,
                    supported_versions(&[TLS13]).expect("versions"),
                ),
            ],
        }
    }

    #[test]
    fn a_client_hello_has_the_lengths_of_rfc_8446() {
        let message = hello().encode().expect("encode");
        assert_eq!(message[0], CLIENT_HELLO);
        let body_len = usize::from(message[2]) << 8 | usize::from(message[3]);
        assert_eq!(body_len + 4, message.len());
        // version, random, session id, two suites, compression.
        let fixed = 2 + 32 + 33 + 2 + 4 + 2;
        assert_eq!(&message[4 + fixed - 2..4 + fixed], &[1, 0]);
        let extensions = &message[4 + fixed..];
        let sni = 2 + 2 + 2 + 1 + 2 + 9;
        let versions = 2 + 2 + 1 + 2;
        assert_eq!(
            extensions,
            [
                &[0, (sni + versions) as u8][..],
                &[0, 0, 0, 14, 0, 12, 0, 0, 9],
                b"localhost",
                &[0, 43, 0, 3, 2, 3, 4],
            ]
            .concat()
        );
    }

    #[test]
    fn records_split_a_message_and_refuse_empty_ones() {
        let message: Vec<u8> = (0..10).collect();
        let one = records(&message, 1).expect("1-byte records");
        assert_eq!(one.len(), 10 * 6);
        assert_eq!(&one[..6], &[22, 3, 3, 0, 1, 0]);
        assert_eq!(&one[54..], &[22, 3, 3, 0, 1, 9]);
        let whole = records(&message, MAX_FRAGMENT).expect("one record");
        assert_eq!(whole.len(), 15);
        assert!(records(&message, 0).is_err());
        assert!(records(&message, MAX_FRAGMENT + 1).is_err());
    }

    #[test]
    fn a_client_hello_reads_back_as_written() {
        let mut written = hello();
        written.extensions.push((
            ext::PRE_SHARED_KEY,
            pre_shared_key(&[vec![1, 2, 3], vec![4]], &[9; 32]).expect("psk"),
        ));
        let record = records(&written.encode().expect("encode"), MAX_FRAGMENT).expect("record");
        let read = ClientHello::parse(&record).expect("parse");
        assert_eq!(read, written);
        let (identity, binder) = first_psk(&read.extensions[2].1).expect("psk");
        assert_eq!((identity, binder), (vec![1, 2, 3], vec![9; 32]));
        let mut two = record.clone();
        two.extend_from_slice(&record);
        assert!(ClientHello::parse(&two).is_err());
        assert!(ClientHello::parse(&record[..record.len() - 1]).is_err());
    }

    #[test]
    fn lengths_that_do_not_fit_are_refused() {
        let mut out = Vec::new();
        assert!(put_vec(&mut out, 1, &[0; 256]).is_err());
        assert!(out.is_empty());
        put_vec(&mut out, 3, &[0; 256]).expect("fits");
        assert_eq!(&out[..3], &[0, 1, 0]);
    }

    #[test]
    fn extension_bodies() {
        assert_eq!(
            code_points(&[23, 29]).expect("groups"),
            [0, 4, 0, 23, 0, 29]
        );
        assert_eq!(
            key_share(&[(29, vec![1, 2])]).expect("share"),
            [0, 6, 0, 29, 0, 2, 1, 2]
        );
        assert_eq!(
            pre_shared_key(&[vec![5]], &[6, 6]).expect("psk"),
            [0, 7, 0, 1, 5, 0, 0, 0, 0, 0, 3, 2, 6, 6]
        );
    }

    fn server_hello_record(random: [u8; 32], extensions: &[u8]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&random);
        body.extend_from_slice(&[0, 0x13, 0x01, 0]);
        put_vec(&mut body, 2, extensions).expect("extensions");
        let mut message = vec![SERVER_HELLO];
        put_vec(&mut message, 3, &body).expect("body");
        let mut record = vec![HANDSHAKE, 3, 3];
        put_vec(&mut record, 2, &message).expect("record");
        record
    }

    #[test]
    fn replies_are_read_from_the_first_record() {
        let extensions = [
            0, 43, 0, 2, 3, 4, 0, 51, 0, 4, 0, 29, 0, 0, 0, 41, 0, 2, 0, 0,
        ];
        let mut bytes = server_hello_record([1; 32], &extensions);
        bytes.extend_from_slice(&[20, 3, 3, 0, 1, 1]);
        assert_eq!(
            reply(&bytes).expect("hello"),
            Reply::Hello(ServerHello {
                retry: false,
                version: Some(TLS13),
                suite: 0x1301,
                group: Some(29),
                psk: true,
            })
        );
        let retry = server_hello_record(RETRY_RANDOM, &[0, 51, 0, 2, 0x11, 0xec]);
        let Reply::Hello(retry) = reply(&retry).expect("retry") else {
            panic!("not a hello");
        };
        assert!(retry.retry && !retry.psk);
        assert_eq!(retry.group, Some(0x11ec));
        assert_eq!(
            reply(&[21, 3, 3, 0, 2, 2, 47]).expect("alert"),
            Reply::Alert {
                level: 2,
                description: 47
            }
        );
        assert!(reply(&[21, 3, 3, 0, 2, 2]).is_err(), "truncated");
        assert!(reply(&[23, 3, 3, 0, 1, 0]).is_err(), "application data");
        assert!(reply(&[]).is_err());
    }
}
