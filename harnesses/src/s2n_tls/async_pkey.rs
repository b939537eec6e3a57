//! [`AsyncPrivateKeyHandshake`]: a full handshake whose server signs
//! through s2n-tls's asynchronous private-key callback.

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use aws_lc_rs::digest::{Digest, SHA256};
use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use regress_measure::{Harness, HarnessError};
use s2n_tls::callbacks::{ConnectionFuture, PrivateKeyCallback, PrivateKeyOperation};
use s2n_tls::connection::Connection;
use s2n_tls::enums::{HashAlgorithm, SignatureAlgorithm};
use s2n_tls::error::Error as S2nError;

use super::check::check_handshake;
use super::client_hello::HANDSHAKE;
use super::config::{base_builder, policy, Configs, PINNED_POLICY};
use super::features::waiting;
use super::tls::S2nTls;
use super::transport::Pair;
use crate::common::error::{ensure, Context as _};
use crate::rustls::api::pki_types::pem::PemObject as _;
use crate::rustls::api::pki_types::PrivatePkcs8KeyDer;

/// The operations the callback handled, counted across the connections of
/// one config: `(signed, refused)`.
#[derive(Debug, Clone, Default)]
pub struct Operations {
    signed: Arc<AtomicU32>,
    refused: Arc<AtomicU32>,
}

impl Operations {
    /// `(signed, refused)`, and both back to 0.
    fn take(&self) -> (u32, u32) {
        (
            self.signed.swap(0, Ordering::Relaxed),
            self.refused.swap(0, Ordering::Relaxed),
        )
    }
}

/// A private-key callback that holds the server's P-256 key outside
/// s2n-tls, as a key in another process or a hardware module would be, and
/// completes each operation within the callback: it reads the digest
/// s2n-tls hashed, signs it with aws-lc (through aws-lc-rs, the libcrypto
/// s2n-tls itself uses), and hands the DER signature back.
struct Signer {
    key: EcdsaKeyPair,
    operations: Operations,
}

impl Signer {
    fn sign(&self, conn: &mut Connection, operation: PrivateKeyOperation) -> Result<(), S2nError> {
        let mut digest = vec![0; operation.input_size()?];
        operation.input(&mut digest)?;
        let digest = Digest::import_less_safe(&digest, &SHA256)
            .map_err(|_| refused("the input is not a SHA-256 digest"))?;
        let signature = self
            .key
            .sign_digest(&digest)
            .map_err(|_| refused("aws-lc could not sign the digest"))?;
        operation.set_output(conn, signature.as_ref())
    }
}

/// The error a callback returns to s2n-tls, which fails the handshake.
#[cold]
fn refused(why: &'static str) -> S2nError {
    S2nError::application(why.into())
}

impl PrivateKeyCallback for Signer {
    fn handle_operation(
        &self,
        conn: &mut Connection,
        operation: PrivateKeyOperation,
    ) -> Result<Option<Pin<Box<dyn ConnectionFuture>>>, S2nError> {
        let is_sign = matches!(
            operation.kind()?,
            s2n_tls::callbacks::OperationType::Sign(
                SignatureAlgorithm::ECDSA,
                HashAlgorithm::SHA256
            )
        );
        if !is_sign {
            self.operations.refused.fetch_add(1, Ordering::Relaxed);
            return Err(refused("not an ECDSA signature over SHA-256"));
        }
        self.sign(conn, operation)?;
        self.operations.signed.fetch_add(1, Ordering::Relaxed);
        Ok(None)
    }
}

/// One full TLS 1.3 handshake of the ECDSA P-256 configs
/// ([`HANDSHAKE`]) whose server holds no private key: its config has the
/// certificate chain alone (`load_public_pem`) and a private-key callback
/// (`set_private_key_callback`, `s2n_config_set_async_pkey_callback`) that
/// signs the CertificateVerify.
///
/// **Counted:** what `handshake_ecdsa_p256` counts, except that the
/// server's signature is made through the callback: s2n-tls hashing the
/// CertificateVerify content and creating the operation, the bindings'
/// trampoline into Rust, the callback copying the digest out, aws-lc's
/// P-256 signature of it (the same libcrypto that signs inside s2n-tls;
/// its nonce comes from aws-lc's RNG, deterministic in measurement builds),
/// and `set_output` plus `s2n_async_pkey_op_apply` handing it back. The
/// operation completes inside the callback (`Ok(None)`), so the handshake
/// never blocks on it. Compare with `s2n_tls::handshake_ecdsa_p256`.
///
/// **Not counted:** configs and parsing the key (`setup`), the fresh pair
/// and zeroing the counters (`prepare`), where the server also gets
/// the no-op waker the bindings need to run a callback ([`waiting`]).
///
/// **Check:** the full handshake's check (pins, ecdsa_secp256r1_sha256, the
/// chain the client validated, which holds the key the client verified the
/// signature with), and the callback signed exactly once and refused
/// nothing. A server with its key in the config (no callback) fails it.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsyncPrivateKeyHandshake;

/// The configs, the server's without a key but with the callback, and what
/// the callback did.
#[derive(Debug)]
pub struct AsyncPrivateKeySetup {
    configs: Configs,
    operations: Operations,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").finish_non_exhaustive()
    }
}

impl AsyncPrivateKeySetup {
    fn new() -> Result<AsyncPrivateKeySetup, HarnessError> {
        let mut configs = Configs::new(&HANDSHAKE.profile())?;
        let pki = HANDSHAKE.pki;
        let der = PrivatePkcs8KeyDer::from_pem_slice(pki.server_key_pem())
            .context("parsing the server's PKCS#8 key")?;
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, der.secret_pkcs8_der())
            .map_err(|error| format!("loading the server's P-256 key: {error}"))?;
        let operations = Operations::default();
        let mut builder = base_builder(&policy(PINNED_POLICY)?)?;
        builder
            .load_public_pem(pki.server_chain_pem())
            .context("loading the server chain without its key")?
            .set_private_key_callback(Signer {
                key,
                operations: operations.clone(),
            })
            .context("setting the private-key callback")?;
        configs.server = builder.build().context("building the server config")?;
        Ok(AsyncPrivateKeySetup {
            configs,
            operations,
        })
    }
}

impl Harness for AsyncPrivateKeyHandshake {
    type Setup = AsyncPrivateKeySetup;
    type Input = Pair;
    type Output = Pair;

    fn sides(&self) -> bool {
        true
    }

    fn first_record(
        &self,
        _: &AsyncPrivateKeySetup,
        pair: &mut Pair,
    ) -> Result<bool, HarnessError> {
        crate::tls::first_record::<S2nTls>(pair)?;
        Ok(true)
    }

    fn setup(&self) -> Result<AsyncPrivateKeySetup, HarnessError> {
        AsyncPrivateKeySetup::new()
    }

    fn prepare(&self, setup: &AsyncPrivateKeySetup) -> Result<Pair, HarnessError> {
        setup.operations.take();
        waiting(Pair::new(&setup.configs)?)
    }

    fn run(&self, _: &AsyncPrivateKeySetup, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, setup: &AsyncPrivateKeySetup, pair: &Pair) -> Result<(), HarnessError> {
        check_handshake(pair, &setup.configs.profile, &HANDSHAKE.expected())?;
        let operations = setup.operations.take();
        ensure(operations == (1, 0), || {
            format!(
                "the private-key callback signed {} time(s) and refused {} operation(s); \
                 one signature expected",
                operations.0, operations.1
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that signs with its own key (no callback) fails the check.
    #[test]
    fn check_fails_without_the_callback() {
        let harness = AsyncPrivateKeyHandshake;
        let setup = harness.setup().expect("setup");
        regress_measure::harness::run_natively(&harness).expect("the path");

        let plain = Configs::new(&HANDSHAKE.profile()).expect("configs");
        let mut pair =
            waiting(Pair::with_configs(&setup.configs.client, &plain.server).expect("pair"))
                .expect("waker");
        pair.handshake().expect("a handshake signed in s2n-tls");
        let error = harness.check(&setup, &pair).expect_err("no callback ran");
        assert!(error.to_string().contains("signed 0 time(s)"), "{error}");
    }
}
