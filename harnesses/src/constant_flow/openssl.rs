//! The system OpenSSL's constant-flow operations (libcrypto 3 through the
//! `openssl` crate): AEAD open, ECDSA P-256 and RSA-PSS signing, ECDH P-256
//! and X25519. Every harness initialises OpenSSL with the deterministic RNG
//! of the perf harnesses ([`crate::openssl::system::init`]) in `setup`.

use ::openssl::bn::{BigNum, BigNumContext};
use ::openssl::derive::Deriver;
use ::openssl::ec::{EcGroup, EcKey, EcPoint};
use ::openssl::ecdsa::EcdsaSig;
use ::openssl::md::Md;
use ::openssl::nid::Nid;
use ::openssl::pkey::{Id, PKey, Private, Public};
use ::openssl::pkey_ctx::PkeyCtx;
use ::openssl::rsa::Padding;
use ::openssl::sign::RsaPssSaltlen;
use ::openssl::symm::{self, Cipher as SymmCipher};
use regress_measure::{Harness, HarnessError};

use super::secrets::{self, RsaKey, Scalar};
use super::{Control, Curve, Primitives, Tamper, MESSAGE_LEN, OPENS_PER_RUN};
use crate::common::error::{ensure, Context as _};
use crate::common::pins::Cipher;
use crate::openssl::system;
use regress_measure::program::AnyHarness;

const TAG_LEN: usize = 16;

/// OpenSSL's harness of each primitive operation ([`super::primitives`]).
pub struct OpenSsl;

impl Primitives for OpenSsl {
    const LIBRARY: &'static str = "openssl";

    fn aead_open(cipher: Cipher, tamper: Tamper) -> Box<dyn AnyHarness> {
        Box::new(AeadOpen { cipher, tamper })
    }

    fn ecdsa_p256_sign(scalar: Scalar, control: Control) -> Box<dyn AnyHarness> {
        Box::new(EcdsaSign { scalar, control })
    }

    fn rsa2048_pss_sign(key: RsaKey, control: Control) -> Box<dyn AnyHarness> {
        Box::new(RsaPssSign { key, control })
    }

    fn ecdh(curve: Curve, scalar: Scalar) -> Box<dyn AnyHarness> {
        Box::new(Ecdh { curve, scalar })
    }
}

/// OpenSSL's implementation of an AEAD.
fn symm_cipher(cipher: Cipher) -> Result<SymmCipher, HarnessError> {
    match cipher {
        Cipher::Aes128Gcm => Ok(SymmCipher::aes_128_gcm()),
        Cipher::Aes256Gcm => Ok(SymmCipher::aes_256_gcm()),
        Cipher::ChaCha20Poly1305 => Ok(SymmCipher::chacha20_poly1305()),
        Cipher::Aes128CbcSha => Err(cipher.not_an_aead().into()),
    }
}

/// [`OPENS_PER_RUN`] `symm::decrypt_aead` calls (an `EVP_CIPHER_CTX` each:
/// key schedule, IV, AAD, decryption and the tag check) on one sealed
/// [`MESSAGE_LEN`]-byte message, tampered with as the variant says.
#[derive(Debug, Clone, Copy)]
pub struct AeadOpen {
    pub cipher: Cipher,
    pub tamper: Tamper,
}

impl Harness for AeadOpen {
    /// Ciphertext, tag.
    type Setup = (Vec<u8>, Vec<u8>);
    type Input = ();
    type Output = usize;

    fn operations_per_run(&self) -> u64 {
        OPENS_PER_RUN as u64
    }

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        system::runtime_libraries()
    }

    fn setup(&self) -> Result<(Vec<u8>, Vec<u8>), HarnessError> {
        system::init()?;
        let cipher = symm_cipher(self.cipher)?;
        let mut tag = vec![0; TAG_LEN];
        let ciphertext = symm::encrypt_aead(
            cipher,
            &secrets::AEAD_KEY[..cipher.key_len()],
            Some(&secrets::AEAD_NONCE),
            &secrets::AEAD_AAD,
            &secrets::plaintext(MESSAGE_LEN),
            &mut tag,
        )
        .context("sealing the message")?;
        let mut sealed = [ciphertext, tag].concat();
        self.tamper.apply(&mut sealed, TAG_LEN);
        let tag = sealed.split_off(MESSAGE_LEN);
        Ok((sealed, tag))
    }

    fn prepare(&self, _: &(Vec<u8>, Vec<u8>)) -> Result<(), HarnessError> {
        Ok(())
    }

    /// Returns how many opens succeeded.
    fn run(&self, (ciphertext, tag): &(Vec<u8>, Vec<u8>), _: ()) -> Result<usize, HarnessError> {
        let cipher = symm_cipher(self.cipher)?;
        let key = &secrets::AEAD_KEY[..cipher.key_len()];
        let mut opened = 0;
        for _ in 0..OPENS_PER_RUN {
            let result = symm::decrypt_aead(
                cipher,
                key,
                Some(&secrets::AEAD_NONCE),
                &secrets::AEAD_AAD,
                ciphertext,
                tag,
            );
            opened += usize::from(result.is_ok());
        }
        Ok(opened)
    }

    fn check(&self, _: &(Vec<u8>, Vec<u8>), opened: &usize) -> Result<(), HarnessError> {
        let expected = match self.tamper {
            Tamper::None => OPENS_PER_RUN,
            _ => 0,
        };
        ensure(*opened == expected, || {
            format!("{opened} of {OPENS_PER_RUN} opens succeeded, expected {expected}")
        })
    }
}

/// The P-256 key of private scalar `scalar` (its public point computed).
fn p256_key(scalar: &Scalar) -> Result<EcKey<Private>, HarnessError> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let private = BigNum::from_slice(&scalar.bytes)?;
    let mut context = BigNumContext::new()?;
    let mut public = EcPoint::new(&group)?;
    public.mul_generator2(&group, &private, &mut context)?;
    let key = EcKey::from_private_components(&group, &private, &public)?;
    key.check_key().context("the P-256 key")?;
    Ok(key)
}

/// SHA-256 of [`secrets::MESSAGE`].
fn message_digest() -> Vec<u8> {
    ::openssl::sha::sha256(secrets::MESSAGE).to_vec()
}

/// One ECDSA P-256 signature (`ECDSA_do_sign`: `r` and `s` as numbers, no
/// DER encoding whose length depends on the public signature) of a fixed
/// digest under the variant's private scalar. The nonce comes from the
/// deterministic RNG.
#[derive(Debug, Clone, Copy)]
pub struct EcdsaSign {
    pub scalar: Scalar,
    pub control: Control,
}

impl Harness for EcdsaSign {
    type Setup = (EcKey<Private>, Vec<u8>);
    type Input = ();
    type Output = EcdsaSig;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        system::runtime_libraries()
    }

    fn setup(&self) -> Result<(EcKey<Private>, Vec<u8>), HarnessError> {
        system::init()?;
        if self.control == Control::NonceShifted {
            ::openssl::rand::rand_bytes(&mut [0u8; 64])?;
        }
        Ok((p256_key(&self.scalar)?, message_digest()))
    }

    fn prepare(&self, _: &(EcKey<Private>, Vec<u8>)) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(
        &self,
        (key, digest): &(EcKey<Private>, Vec<u8>),
        _: (),
    ) -> Result<EcdsaSig, HarnessError> {
        Ok(EcdsaSig::sign(digest, key)?)
    }

    fn check(
        &self,
        (key, digest): &(EcKey<Private>, Vec<u8>),
        sig: &EcdsaSig,
    ) -> Result<(), HarnessError> {
        let public: EcKey<Public> = EcKey::from_public_key(key.group(), key.public_key())?;
        ensure(sig.verify(digest, &public)?, || {
            "the signature does not verify".to_owned()
        })
    }
}

/// One RSA-PSS (SHA-256, salt of the digest's length) signature of a fixed
/// digest under the variant's RSA-2048 key: `EVP_PKEY_sign` on a context
/// set up outside the count. The salt and blinding come from the
/// deterministic RNG.
#[derive(Debug, Clone, Copy)]
pub struct RsaPssSign {
    pub key: RsaKey,
    pub control: Control,
}

impl Harness for RsaPssSign {
    type Setup = (PKey<Private>, Vec<u8>);
    type Input = PkeyCtx<Private>;
    type Output = Vec<u8>;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        system::runtime_libraries()
    }

    fn setup(&self) -> Result<(PKey<Private>, Vec<u8>), HarnessError> {
        system::init()?;
        self.control.shift_heap();
        let key = PKey::private_key_from_pem(self.key.key_pem).context("the RSA key")?;
        Ok((key, message_digest()))
    }

    fn prepare(
        &self,
        (key, _): &(PKey<Private>, Vec<u8>),
    ) -> Result<PkeyCtx<Private>, HarnessError> {
        let mut context = PkeyCtx::new(key)?;
        context.sign_init()?;
        context.set_rsa_padding(Padding::PKCS1_PSS)?;
        context.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
        context.set_signature_md(Md::sha256())?;
        Ok(context)
    }

    fn run(
        &self,
        (_, digest): &(PKey<Private>, Vec<u8>),
        mut context: PkeyCtx<Private>,
    ) -> Result<Vec<u8>, HarnessError> {
        let mut signature = Vec::with_capacity(256);
        context.sign_to_vec(digest, &mut signature)?;
        Ok(signature)
    }

    fn check(
        &self,
        (key, digest): &(PKey<Private>, Vec<u8>),
        sig: &Vec<u8>,
    ) -> Result<(), HarnessError> {
        let mut context = PkeyCtx::new(key)?;
        context.verify_init()?;
        context.set_rsa_padding(Padding::PKCS1_PSS)?;
        context.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
        context.set_signature_md(Md::sha256())?;
        ensure(context.verify(digest, sig)?, || {
            "the signature does not verify".to_owned()
        })
    }
}

impl Curve {
    fn key(self, scalar: &[u8; secrets::SCALAR_LEN]) -> Result<PKey<Private>, HarnessError> {
        match self {
            Curve::P256 => Ok(PKey::from_ec_key(p256_key(&Scalar {
                name: "",
                bytes: *scalar,
            })?)?),
            Curve::X25519 => Ok(PKey::private_key_from_raw_bytes(scalar, Id::X25519)?),
        }
    }
}

/// One key agreement (`EVP_PKEY_derive`, its context made in the count) of
/// the variant's private scalar with a fixed peer public key.
#[derive(Debug, Clone, Copy)]
pub struct Ecdh {
    pub curve: Curve,
    pub scalar: Scalar,
}

/// The variant's key, the peer's public key, and the secret expected.
pub struct EcdhSetup {
    private: PKey<Private>,
    peer_public: PKey<Public>,
    expected: Vec<u8>,
}

/// `key`'s public half.
fn public_of(key: &PKey<Private>) -> Result<PKey<Public>, HarnessError> {
    Ok(PKey::public_key_from_der(&key.public_key_to_der()?)?)
}

impl Harness for Ecdh {
    type Setup = EcdhSetup;
    type Input = ();
    type Output = Vec<u8>;

    fn runtime_libraries(&self) -> Vec<regress_measure::RuntimeLibrary> {
        system::runtime_libraries()
    }

    fn setup(&self) -> Result<EcdhSetup, HarnessError> {
        system::init()?;
        let private = self.curve.key(&self.scalar.bytes)?;
        let peer = self.curve.key(&secrets::PEER_SCALAR)?;
        let peer_public = public_of(&peer)?;
        let public = public_of(&private)?;
        let mut deriver = Deriver::new(&peer)?;
        deriver.set_peer(&public)?;
        let expected = deriver.derive_to_vec()?;
        Ok(EcdhSetup {
            private,
            peer_public,
            expected,
        })
    }

    fn prepare(&self, _: &EcdhSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &EcdhSetup, _: ()) -> Result<Vec<u8>, HarnessError> {
        let mut deriver = Deriver::new(&setup.private)?;
        deriver.set_peer(&setup.peer_public)?;
        Ok(deriver.derive_to_vec()?)
    }

    fn check(&self, setup: &EcdhSetup, secret: &Vec<u8>) -> Result<(), HarnessError> {
        ensure(*secret == setup.expected, || {
            "the two sides agreed on different secrets".to_owned()
        })
    }
}
