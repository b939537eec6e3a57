//! aws-lc-rs's constant-flow operations: AEAD open, ECDSA P-256 and RSA-PSS
//! signing, ECDH P-256 and X25519.

use ::aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
use ::aws_lc_rs::agreement::{self, PrivateKey, UnparsedPublicKey};
use ::aws_lc_rs::digest::{self, Digest};
use ::aws_lc_rs::rsa::KeyPair as RsaKeyPair;
use ::aws_lc_rs::signature::{
    EcdsaKeyPair, Signature, ECDSA_P256_SHA256_FIXED_SIGNING, RSA_PSS_SHA256,
};
use regress_measure::{Harness, HarnessError};

use super::secrets::{self, RsaKey, Scalar};
use super::{Control, Curve, Primitives, Tamper, MESSAGE_LEN, OPENS_PER_RUN};
use crate::aws_lc_rs::aead::{algorithm, TAG_LEN};
use crate::common::error::ensure;
use crate::common::pins::Cipher;
use regress_measure::program::AnyHarness;

/// aws-lc-rs's harness of each primitive operation ([`super::primitives`]).
pub struct AwsLcRs;

impl Primitives for AwsLcRs {
    const LIBRARY: &'static str = "aws_lc_rs";

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

/// [`OPENS_PER_RUN`] `open_in_place` calls on copies of one sealed
/// [`MESSAGE_LEN`]-byte message, tampered with as the variant says.
///
/// **Counted:** the opens alone. **Not counted:** the key (`setup`), the
/// sealed message and its copies (`prepare`). **Check:** every open
/// succeeded (valid tag) or every open failed (tampered tag).
#[derive(Debug, Clone, Copy)]
pub struct AeadOpen {
    pub cipher: Cipher,
    pub tamper: Tamper,
}

/// The key and the (tampered) sealed message.
pub struct AeadSetup {
    key: LessSafeKey,
    sealed: Vec<u8>,
}

impl Harness for AeadOpen {
    type Setup = AeadSetup;
    type Input = Vec<u8>;
    type Output = usize;

    fn operations_per_run(&self) -> u64 {
        OPENS_PER_RUN as u64
    }

    fn setup(&self) -> Result<AeadSetup, HarnessError> {
        let algorithm = algorithm(self.cipher)?;
        let key = UnboundKey::new(algorithm, &secrets::AEAD_KEY[..algorithm.key_len()])
            .map_err(|_| format!("{:?} rejected its key", self.cipher))?;
        let key = LessSafeKey::new(key);
        let mut sealed = secrets::plaintext(MESSAGE_LEN);
        key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(secrets::AEAD_NONCE),
            Aad::from(secrets::AEAD_AAD),
            &mut sealed,
        )
        .map_err(|_| "sealing the message failed")?;
        self.tamper.apply(&mut sealed, TAG_LEN);
        Ok(AeadSetup { key, sealed })
    }

    fn prepare(&self, setup: &AeadSetup) -> Result<Vec<u8>, HarnessError> {
        Ok(setup.sealed.repeat(OPENS_PER_RUN))
    }

    /// Returns how many opens succeeded.
    fn run(&self, setup: &AeadSetup, mut messages: Vec<u8>) -> Result<usize, HarnessError> {
        let mut opened = 0;
        for message in messages.chunks_exact_mut(setup.sealed.len()) {
            let result = setup.key.open_in_place(
                Nonce::assume_unique_for_key(secrets::AEAD_NONCE),
                Aad::from(secrets::AEAD_AAD),
                message,
            );
            opened += usize::from(result.is_ok());
        }
        Ok(opened)
    }

    fn check(&self, _: &AeadSetup, opened: &usize) -> Result<(), HarnessError> {
        let expected = match self.tamper {
            Tamper::None => OPENS_PER_RUN,
            _ => 0,
        };
        ensure(*opened == expected, || {
            format!("{opened} of {OPENS_PER_RUN} opens succeeded, expected {expected}")
        })
    }
}

/// The SHA-256 digest of [`secrets::MESSAGE`]: what every signature signs.
fn message_digest() -> Digest {
    digest::digest(&digest::SHA256, secrets::MESSAGE)
}

/// One ECDSA P-256 signature (`sign_digest`, fixed-length `r || s`, so no
/// DER encoding whose length depends on the public signature) of a fixed
/// digest under the variant's private scalar. The nonce comes from aws-lc's
/// RNG, a fixed stream in the measurement build.
#[derive(Debug, Clone, Copy)]
pub struct EcdsaSign {
    pub scalar: Scalar,
    pub control: Control,
}

impl Harness for EcdsaSign {
    type Setup = (EcdsaKeyPair, Digest);
    type Input = ();
    type Output = Signature;

    fn setup(&self) -> Result<(EcdsaKeyPair, Digest), HarnessError> {
        if self.control == Control::NonceShifted {
            use ::aws_lc_rs::rand::SecureRandom;
            ::aws_lc_rs::rand::SystemRandom::new()
                .fill(&mut [0u8; 64])
                .map_err(|_| "drawing random bytes failed")?;
        }
        let private = PrivateKey::from_private_key(&agreement::ECDH_P256, &self.scalar.bytes)
            .map_err(|e| format!("{}: {e}", self.scalar.name))?;
        let public = private
            .compute_public_key()
            .map_err(|_| "computing the public key failed")?;
        let key = EcdsaKeyPair::from_private_key_and_public_key(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &self.scalar.bytes,
            public.as_ref(),
        )
        .map_err(|e| format!("{}: {e}", self.scalar.name))?;
        Ok((key, message_digest()))
    }

    fn prepare(&self, _: &(EcdsaKeyPair, Digest)) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(
        &self,
        (key, digest): &(EcdsaKeyPair, Digest),
        _: (),
    ) -> Result<Signature, HarnessError> {
        key.sign_digest(digest).map_err(|_| "signing failed".into())
    }

    fn check(
        &self,
        (key, _): &(EcdsaKeyPair, Digest),
        sig: &Signature,
    ) -> Result<(), HarnessError> {
        use ::aws_lc_rs::signature::{KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key().as_ref())
            .verify(secrets::MESSAGE, sig.as_ref())
            .map_err(|_| "the signature does not verify".into())
    }
}

/// One RSA-PSS (SHA-256) signature of a fixed digest under the variant's
/// RSA-2048 key. The salt and the blinding factor come from aws-lc's RNG, a
/// fixed stream in the measurement build.
#[derive(Debug, Clone, Copy)]
pub struct RsaPssSign {
    pub key: RsaKey,
    pub control: Control,
}

impl Harness for RsaPssSign {
    type Setup = (RsaKeyPair, Digest);
    type Input = Vec<u8>;
    type Output = Vec<u8>;

    fn setup(&self) -> Result<(RsaKeyPair, Digest), HarnessError> {
        self.control.shift_heap();
        let key = RsaKeyPair::from_der(self.key.rsa_der)
            .map_err(|e| format!("{}: {e}", self.key.name))?;
        Ok((key, message_digest()))
    }

    fn prepare(&self, (key, _): &(RsaKeyPair, Digest)) -> Result<Vec<u8>, HarnessError> {
        Ok(vec![0; key.public_modulus_len()])
    }

    fn run(
        &self,
        (key, digest): &(RsaKeyPair, Digest),
        mut signature: Vec<u8>,
    ) -> Result<Vec<u8>, HarnessError> {
        key.sign_digest(&RSA_PSS_SHA256, digest, &mut signature)
            .map_err(|_| "signing failed")?;
        Ok(signature)
    }

    fn check(&self, (key, _): &(RsaKeyPair, Digest), sig: &Vec<u8>) -> Result<(), HarnessError> {
        use ::aws_lc_rs::signature::{KeyPair, UnparsedPublicKey, RSA_PSS_2048_8192_SHA256};
        UnparsedPublicKey::new(&RSA_PSS_2048_8192_SHA256, key.public_key().as_ref())
            .verify(secrets::MESSAGE, sig)
            .map_err(|_| "the signature does not verify".into())
    }
}

impl Curve {
    fn algorithm(self) -> &'static agreement::Algorithm {
        match self {
            Curve::P256 => &agreement::ECDH_P256,
            Curve::X25519 => &agreement::X25519,
        }
    }
}

/// One key agreement (`agreement::agree`) of the variant's private scalar
/// with a fixed peer public key; the shared secret is copied out.
#[derive(Debug, Clone, Copy)]
pub struct Ecdh {
    pub curve: Curve,
    pub scalar: Scalar,
}

/// The variant's private key, the peer's public key, and the secret they
/// must agree on (computed the other way round, outside the count).
pub struct EcdhSetup {
    private: PrivateKey,
    peer_public: Vec<u8>,
    expected: Vec<u8>,
}

impl Harness for Ecdh {
    type Setup = EcdhSetup;
    type Input = ();
    type Output = Vec<u8>;

    fn setup(&self) -> Result<EcdhSetup, HarnessError> {
        let algorithm = self.curve.algorithm();
        let private = PrivateKey::from_private_key(algorithm, &self.scalar.bytes)
            .map_err(|e| format!("{}: {e}", self.scalar.name))?;
        let peer = PrivateKey::from_private_key(algorithm, &secrets::PEER_SCALAR)
            .map_err(|e| format!("the peer: {e}"))?;
        let peer_public = peer
            .compute_public_key()
            .map_err(|_| "the peer's public key")?
            .as_ref()
            .to_vec();
        let public = private
            .compute_public_key()
            .map_err(|_| "the variant's public key")?;
        let expected = agreement::agree(
            &peer,
            UnparsedPublicKey::new(algorithm, public.as_ref()),
            "agreeing from the peer's side failed",
            |secret| Ok(secret.to_vec()),
        )?;
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
        Ok(agreement::agree(
            &setup.private,
            UnparsedPublicKey::new(self.curve.algorithm(), &setup.peer_public),
            "key agreement failed",
            |secret| Ok(secret.to_vec()),
        )?)
    }

    fn check(&self, setup: &EcdhSetup, secret: &Vec<u8>) -> Result<(), HarnessError> {
        ensure(*secret == setup.expected, || {
            "the two sides agreed on different secrets".to_owned()
        })
    }
}
