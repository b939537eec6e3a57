//! A TLS 1.2 CBC record with good and bad padding: the Lucky Thirteen
//! question, for OpenSSL and s2n-tls.
//!
//! A TLS 1.2 connection with AES-128-CBC and HMAC-SHA256, MAC-then-encrypt,
//! is made in `prepare`: OpenSSL with ECDHE-RSA-AES128-SHA256 and
//! `SSL_OP_NO_ENCRYPT_THEN_MAC` on both sides (with encrypt-then-MAC the
//! MAC is checked before the padding is looked at, and there is no padding
//! oracle to test); s2n-tls (which has no encrypt-then-MAC) with its
//! numbered policy `20150202` on both sides, which offers only CBC suites
//! and so negotiates AES128-SHA256 (RSA key exchange: no DH parameters are
//! configured, and the key exchange is outside the count anyway); the client writes one record of [`PLAINTEXT_LEN`] bytes,
//! whose padding is then 16 bytes of 15, and the record's bytes are changed
//! in the transport as the variant says. `run` is the server's one
//! `SSL_read` (s2n-tls: `poll_recv`) of it: decryption, the padding check
//! and the MAC check. s2n-tls's own delay after a failed record (its
//! "blinding") is self-service here, so no sleep; the count is of the
//! check itself.
//!
//! Every rejected variant ends in the same public alert (bad_record_mac),
//! so they form one group and must execute the same instructions: a
//! record with good padding and a bad MAC, padding of length 0 (valid, so
//! the MAC covers 15 more bytes: Lucky Thirteen's case), a padding length
//! beyond the record, and a wrong padding byte.
//!
//! rustls has no CBC suite.

use ::openssl::ssl::{
    SslContext, SslContextBuilder, SslMethod, SslOptions, SslVerifyMode, SslVersion,
};
use regress_measure::{Harness, HarnessError};

use super::secrets;
use super::{Add, ACCEPTED, REJECTED};
use crate::common::error::{ensure, Context as _};
use crate::common::pins::TlsVersion;
use crate::common::pki::{Host, Pki};
use crate::openssl::context::Contexts;
use crate::openssl::system;
use crate::openssl::transport::Pair;
use crate::paths::Handshake;

/// Bytes of application data in the record: with a 32-byte HMAC-SHA256 tag,
/// 48 + 32 = 80, so the padding is 16 bytes of value 15 and the encrypted
/// part six AES blocks.
pub const PLAINTEXT_LEN: usize = 48;

/// OpenSSL 3.0's `SSL_OP_NO_ENCRYPT_THEN_MAC` (`ssl.h`), which the crate
/// does not name.
const NO_ENCRYPT_THEN_MAC: u64 = 1 << 19;

/// Bytes of the record header.
const HEADER: usize = 5;
/// Bytes of the explicit IV.
const IV: usize = 16;
/// Bytes of the encrypted part: plaintext, MAC and padding.
const ENCRYPTED: usize = 96;

/// How the record is changed, and so what the server finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Unchanged: accepted.
    Valid,
    /// The IV's first byte flipped: the first plaintext byte changes, the
    /// padding is intact, the MAC fails.
    BadMac,
    /// The padding-length byte turned from 15 into 0: valid padding of one
    /// byte, so the MAC is read 15 bytes later and fails.
    PadLen0,
    /// The padding-length byte turned into 255: longer than the record.
    PadLen255,
    /// The padding's second-to-last byte changed: length 15, a wrong byte.
    PadByteWrong,
}

impl Record {
    const ALL: [Record; 5] = [
        Record::Valid,
        Record::BadMac,
        Record::PadLen0,
        Record::PadLen255,
        Record::PadByteWrong,
    ];

    fn name(self) -> &'static str {
        match self {
            Record::Valid => "valid_record",
            Record::BadMac => "bad_mac",
            Record::PadLen0 => "pad_len_0",
            Record::PadLen255 => "pad_len_255",
            Record::PadByteWrong => "pad_byte_wrong",
        }
    }

    fn group(self) -> &'static str {
        match self {
            Record::Valid => ACCEPTED,
            _ => REJECTED,
        }
    }

    /// The byte to change and what to XOR it with. A byte of the
    /// second-to-last ciphertext block flips the same bit of the last
    /// plaintext block, where the padding is.
    fn change(self) -> Option<(usize, u8)> {
        let last_byte = HEADER + IV + ENCRYPTED - 16 - 1;
        match self {
            Record::Valid => None,
            Record::BadMac => Some((HEADER, 0x01)),
            Record::PadLen0 => Some((last_byte, 0x0f)),
            Record::PadLen255 => Some((last_byte, 0x0f ^ 0xff)),
            Record::PadByteWrong => Some((last_byte - 1, 0x01)),
        }
    }
}

/// Every variant, for both libraries.
pub fn operations(add: &mut Add<'_>) {
    for record in Record::ALL {
        add(
            "openssl",
            "tls12_cbc_record_open",
            record.group(),
            record.name(),
            Box::new(CbcRecord(record)),
        );
    }
    for record in Record::ALL {
        add(
            "s2n_tls",
            "tls12_cbc_record_open",
            record.group(),
            record.name(),
            Box::new(S2nCbcRecord(record)),
        );
    }
}

/// The s2n-tls policy of both sides: CBC suites only.
const S2N_CBC_POLICY: &str = "20150202";

/// The record `client` wrote, taken from the transport, changed as
/// `record` says and put back.
fn change_in_flight(
    record: Record,
    from_client: &crate::common::transport::Endpoint,
    at_server: &crate::common::transport::Endpoint,
) -> Result<(), HarnessError> {
    let mut bytes = at_server.incoming_bytes();
    ensure(bytes.len() == HEADER + IV + ENCRYPTED, || {
        format!(
            "the record is {} bytes, not {}: not an AES-CBC record with HMAC-SHA256",
            bytes.len(),
            HEADER + IV + ENCRYPTED
        )
    })?;
    if let Some((index, mask)) = record.change() {
        bytes[index] ^= mask;
    }
    at_server.discard_incoming();
    from_client
        .send(&bytes)
        .context("putting the record back")?;
    Ok(())
}

/// The s2n-tls server's `poll_recv` of one (changed) TLS 1.2 CBC record.
#[derive(Debug, Clone, Copy)]
pub struct S2nCbcRecord(pub Record);

/// Both s2n-tls configs.
pub struct S2nConfigs {
    client: s2n_tls::config::Config,
    server: s2n_tls::config::Config,
}

impl Harness for S2nCbcRecord {
    type Setup = S2nConfigs;
    type Input = crate::s2n_tls::transport::Pair;
    /// The connections (kept: freeing them is not counted) and whether the
    /// read returned the record (`Err`: s2n-tls refused it).
    type Output = (
        crate::s2n_tls::transport::Pair,
        Result<Vec<u8>, s2n_tls::error::Error>,
    );

    fn setup(&self) -> Result<S2nConfigs, HarnessError> {
        use crate::s2n_tls::config::{client_config, policy, server_config_with};
        let key = secrets::RSA_KEYS[0];
        Ok(S2nConfigs {
            client: client_config(
                &policy(S2N_CBC_POLICY)?,
                Pki::Rsa4096,
                Host::LOCALHOST,
                None,
                None,
            )?,
            server: server_config_with(
                &policy(S2N_CBC_POLICY)?,
                (key.chain_pem, key.key_pem),
                Pki::Rsa4096,
                false,
                false,
                None,
            )?,
        })
    }

    fn prepare(&self, configs: &S2nConfigs) -> Result<Self::Input, HarnessError> {
        use std::task::Poll;
        let mut pair =
            crate::s2n_tls::transport::Pair::with_configs(&configs.client, &configs.server)?;
        pair.handshake()?;
        let data = secrets::plaintext(PLAINTEXT_LEN);
        match pair.client.poll_send(&data) {
            Poll::Ready(Ok(n)) if n == PLAINTEXT_LEN => {}
            other => return Err(format!("the client's record: {other:?}").into()),
        }
        match pair.client.poll_flush() {
            Poll::Ready(Ok(_)) => {}
            Poll::Ready(Err(error)) => return Err(error).context("flushing the record"),
            Poll::Pending => return Err("flushing the record did not finish".into()),
        }
        change_in_flight(self.0, pair.client_endpoint(), pair.server_endpoint())?;
        Ok(pair)
    }

    fn run(&self, _: &S2nConfigs, mut pair: Self::Input) -> Result<Self::Output, HarnessError> {
        use std::task::Poll;
        let mut out = vec![0u8; 2 * PLAINTEXT_LEN];
        let result = match pair.server.poll_recv(&mut out) {
            Poll::Ready(Ok(n)) => {
                out.truncate(n);
                Ok(out)
            }
            Poll::Ready(Err(error)) => Err(error),
            Poll::Pending => return Err("the server waited for more than the record".into()),
        };
        Ok((pair, result))
    }

    fn check(&self, _: &S2nConfigs, output: &Self::Output) -> Result<(), HarnessError> {
        match (self.0, &output.1) {
            (Record::Valid, Ok(data)) => ensure(*data == secrets::plaintext(PLAINTEXT_LEN), || {
                "the record arrived changed".to_owned()
            }),
            (Record::Valid, Err(error)) => {
                Err(format!("the valid record was refused: {error}").into())
            }
            (_, Ok(_)) => Err("a changed record was accepted".into()),
            (_, Err(_)) => Ok(()),
        }
    }
}

/// The server's `SSL_read` of one (changed) TLS 1.2 CBC record.
#[derive(Debug, Clone, Copy)]
pub struct CbcRecord(pub Record);

fn context(server: bool) -> Result<SslContext, HarnessError> {
    let mut builder = SslContextBuilder::new(SslMethod::tls()).context("a context")?;
    builder
        .set_min_proto_version(Some(SslVersion::TLS1_2))
        .context("TLS 1.2")?;
    builder
        .set_max_proto_version(Some(SslVersion::TLS1_2))
        .context("TLS 1.2")?;
    builder
        .set_cipher_list("ECDHE-RSA-AES128-SHA256")
        .context("the CBC suite")?;
    builder.set_groups_list("P-256").context("the group")?;
    builder.set_options(
        SslOptions::NO_TICKET | SslOptions::from_bits_retain(NO_ENCRYPT_THEN_MAC as _),
    );
    builder.set_session_cache_mode(::openssl::ssl::SslSessionCacheMode::OFF);
    if server {
        let key = secrets::RSA_KEYS[0];
        let chain = ::openssl::x509::X509::stack_from_pem(key.chain_pem).context("the chain")?;
        let mut chain = chain.into_iter();
        let leaf = chain.next().ok_or("an empty chain")?;
        builder.set_certificate(&leaf).context("the certificate")?;
        for ca in chain {
            builder.add_extra_chain_cert(ca).context("the chain")?;
        }
        let private =
            ::openssl::pkey::PKey::private_key_from_pem(key.key_pem).context("the key")?;
        builder.set_private_key(&private).context("the key")?;
    } else {
        // The record path is the subject; the certificate is not checked.
        builder.set_verify(SslVerifyMode::NONE);
    }
    Ok(builder.build())
}

impl Harness for CbcRecord {
    type Setup = Contexts;
    type Input = Pair;
    /// The connection (kept, so that freeing it is not counted) and what
    /// the read returned.
    type Output = (Pair, Result<Vec<u8>, ::openssl::ssl::Error>);

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        system::runtime_libraries()
    }

    fn setup(&self) -> Result<Contexts, HarnessError> {
        system::init()?;
        Ok(Contexts {
            client: context(false)?,
            server: context(true)?,
            profile: Handshake::full(Pki::Rsa4096, TlsVersion::Tls12).profile(),
        })
    }

    /// A connection after its handshake, and the client's record in the
    /// server's transport, changed as the variant says.
    fn prepare(&self, contexts: &Contexts) -> Result<Pair, HarnessError> {
        let mut pair = Pair::new(contexts, None)?;
        pair.handshake()?;
        ensure(
            pair.server.ssl().current_cipher().map(|c| c.name()) == Some("ECDHE-RSA-AES128-SHA256"),
            || "the CBC suite was not negotiated".to_owned(),
        )?;
        let written = pair
            .client
            .ssl_write(&secrets::plaintext(PLAINTEXT_LEN))
            .context("the client's record")?;
        ensure(written == PLAINTEXT_LEN, || "a short write".to_owned())?;
        change_in_flight(self.0, pair.client.get_ref(), pair.server.get_ref())?;
        Ok(pair)
    }

    fn run(&self, _: &Contexts, mut pair: Pair) -> Result<Self::Output, HarnessError> {
        let mut out = vec![0u8; 2 * PLAINTEXT_LEN];
        let result = pair.server.ssl_read(&mut out);
        let result = match result {
            Ok(n) => {
                out.truncate(n);
                Ok(out)
            }
            // Kept as it is: formatting it here would be counted.
            Err(error) => Err(error),
        };
        Ok((pair, result))
    }

    fn check(&self, _: &Contexts, output: &Self::Output) -> Result<(), HarnessError> {
        match (self.0, &output.1) {
            (Record::Valid, Ok(data)) => ensure(*data == secrets::plaintext(PLAINTEXT_LEN), || {
                "the record arrived changed".to_owned()
            }),
            (Record::Valid, Err(error)) => {
                Err(format!("the valid record was refused: {error}").into())
            }
            (_, Ok(_)) => Err("a changed record was accepted".into()),
            (_, Err(error)) => {
                let error = error.to_string();
                ensure(
                    error.contains("bad record mac") || error.contains("decryption failed"),
                    || format!("refused for another reason than a bad record MAC: {error}"),
                )
            }
        }
    }
}
