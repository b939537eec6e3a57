//! Known answers: aws-lc-rs against published AES-GCM test vectors
//! (`harnesses/tests/vectors/gcm.txt`, sources named there). The AEAD
//! harnesses' checks compare with a reference seal made by the same
//! library; these vectors show the library itself is right.

use ::aws_lc_rs::aead::{Aad, Nonce, NONCE_LEN};

use super::aead::{algorithm, key, TAG_LEN};
use crate::common::pins::Cipher;

/// The AES-GCM cipher whose key is `len` bytes long.
fn cipher_for_key(len: usize) -> Option<Cipher> {
    [Cipher::Aes128Gcm, Cipher::Aes256Gcm]
        .into_iter()
        .find(|cipher| algorithm(*cipher).is_ok_and(|a| a.key_len() == len))
}

/// One known-answer vector.
#[derive(Debug, Default)]
struct Vector {
    name: String,
    key: Vec<u8>,
    iv: Vec<u8>,
    pt: Vec<u8>,
    aad: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex length: {text:?}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// Parses the vector file: `Field = hex` blocks separated by blank lines,
/// `#` comments.
fn vectors() -> Vec<Vector> {
    let text = include_str!("../../tests/vectors/gcm.txt");
    let mut out = Vec::new();
    let mut current: Option<Vector> = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            out.extend(current.take());
            continue;
        }
        let (field, value) = line.split_once('=').expect("a `Field = value` line");
        let (field, value) = (field.trim(), value.trim());
        let vector = current.get_or_insert_with(Vector::default);
        match field {
            "Name" => vector.name = value.to_owned(),
            "Key" => vector.key = unhex(value),
            "IV" => vector.iv = unhex(value),
            "PT" => vector.pt = unhex(value),
            "AAD" => vector.aad = unhex(value),
            "CT" => vector.ct = unhex(value),
            "Tag" => vector.tag = unhex(value),
            other => panic!("unknown field {other:?}"),
        }
    }
    out.extend(current);
    out
}

#[test]
fn vector_file_has_the_promised_vectors() {
    let vectors = vectors();
    assert_eq!(vectors.len(), 12);
    for v in &vectors {
        assert!(!v.name.is_empty());
        assert_eq!(v.iv.len(), NONCE_LEN, "{}: 96-bit IVs only", v.name);
        assert_eq!(v.tag.len(), TAG_LEN, "{}", v.name);
        assert_eq!(v.pt.len(), v.ct.len(), "{}", v.name);
        assert!(cipher_for_key(v.key.len()).is_some(), "{}", v.name);
    }
    for key_len in [16, 32] {
        let with_aad_and_text = vectors
            .iter()
            .filter(|v| v.key.len() == key_len && !v.aad.is_empty() && !v.pt.is_empty())
            .count();
        assert!(
            with_aad_and_text >= 2,
            "{key_len}-byte keys: {with_aad_and_text}"
        );
    }
}

/// aws-lc-rs seals every vector's plaintext to its ciphertext and tag, and
/// opens ciphertext and tag back to the plaintext; a flipped tag or AAD
/// byte does not open.
#[test]
fn aws_lc_rs_matches_the_gcm_vectors() {
    for v in vectors() {
        let cipher = cipher_for_key(v.key.len()).expect("algorithm");
        let key = key(cipher, &v.key).expect("key");
        let nonce = || Nonce::try_assume_unique_for_key(&v.iv).expect("96-bit nonce");

        let mut buffer = v.pt.clone();
        let tag = key
            .seal_in_place_separate_tag(nonce(), Aad::from(&v.aad), &mut buffer)
            .expect("seal");
        assert_eq!(buffer, v.ct, "{}: ciphertext", v.name);
        assert_eq!(tag.as_ref(), &v.tag[..], "{}: tag", v.name);

        let mut sealed = [&v.ct[..], &v.tag[..]].concat();
        let opened = key
            .open_in_place(nonce(), Aad::from(&v.aad), &mut sealed)
            .expect("open");
        assert_eq!(opened, &v.pt[..], "{}: plaintext", v.name);

        let mut forged = [&v.ct[..], &v.tag[..]].concat();
        forged[v.ct.len()] ^= 1;
        assert!(
            key.open_in_place(nonce(), Aad::from(&v.aad), &mut forged)
                .is_err(),
            "{}: a flipped tag byte opened",
            v.name
        );
        let mut other_aad = v.aad.clone();
        other_aad.push(0);
        let mut sealed = [&v.ct[..], &v.tag[..]].concat();
        assert!(
            key.open_in_place(nonce(), Aad::from(&other_aad), &mut sealed)
                .is_err(),
            "{}: another AAD opened",
            v.name
        );
    }
}

#[test]
fn only_aes_gcm_keys_are_recognised() {
    assert_eq!(cipher_for_key(16), Some(Cipher::Aes128Gcm));
    assert_eq!(cipher_for_key(32), Some(Cipher::Aes256Gcm));
    assert_eq!(cipher_for_key(24), None);
}
