//! Context building and handshakes: [`ConfigBuild`], the full-handshake
//! harnesses and [`SessionResumption`].

use std::ffi::c_long;

use openssl::ssl::{ErrorCode, SslSession};
use regress_measure::{Harness, HarnessError};

use super::transport::Pair;
use super::{
    check_full_handshake, check_negotiated, client_context, ensure, ffi, init, new_pair,
    runtime_libraries, server_context, Context, Contexts, Expect, Profile, Protocol, ECDSA,
    HANDSHAKE_PIPE_CAPACITY, RSA,
};
use crate::certs::{CA_PEM, LEAF_CHAIN_PEM, LEAF_KEY_PEM};

// ---------------------------------------------------------------------------
// ConfigBuild
// ---------------------------------------------------------------------------

/// Builds what an OpenSSL application needs to serve and to verify
/// `localhost`: a server `SslContext` and a client `SslContext`.
///
/// s2n-tls's `config_build` builds one `Config` that does both; OpenSSL
/// splits the same work over two contexts, and this harness counts both, so
/// the paths are comparable.
///
/// **Counted:** two `SSL_CTX_new` (each fetches OpenSSL 3.0's cipher, digest,
/// group and signature tables from the provider and draws its ticket keys),
/// pinning version, suite, group, signature scheme, tickets and session
/// cache on both, the fixed verification time; for the server, parsing the
/// RSA-4096 chain and private key from PEM (`PEM_read_bio_X509`,
/// `PEM_read_bio_PrivateKey` through OpenSSL 3.0's decoders), installing
/// them and `check_private_key`; for the client, parsing the CA from PEM, a
/// fresh `X509_STORE` holding only it, peer verification and the host name
/// to verify.
///
/// **Not counted:** OpenSSL's one-time initialisation (`setup` runs
/// [`init`]: the first `SSL_CTX_new` in a process would otherwise pay for
/// loading the default provider). The PEM bytes are copied from the binary
/// into heap buffers in `setup`: parsing reads them with copies whose count
/// depends on the buffers' alignment, and the alignment of embedded data
/// moves whenever unrelated code in the binary changes, while a fresh
/// allocation's does not. No file is read, and neither the system trust
/// store nor `openssl.cnf` is loaded.
///
/// **Check:** a handshake between the two built contexts must negotiate the
/// pinned TLS 1.3 parameters with the RSA-4096 certificate (as
/// [`HandshakeRsa4096`] checks).
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigBuild;

/// What [`ConfigBuild`] runs share: the PEM inputs, on the heap.
#[derive(Debug)]
pub struct ConfigBuildSetup {
    chain_pem: Vec<u8>,
    key_pem: Vec<u8>,
    ca_pem: Vec<u8>,
}

/// The profile [`ConfigBuild`] builds: [`HandshakeRsa4096`]'s.
const CONFIG_BUILD_PROFILE: Profile = Profile::tls13(&RSA);

impl Harness for ConfigBuild {
    type Setup = ConfigBuildSetup;
    type Input = ();
    type Output = Contexts;

    fn runtime_libraries(&self) -> Vec<(String, String)> {
        runtime_libraries()
    }

    fn setup(&self) -> Result<ConfigBuildSetup, HarnessError> {
        init()?;
        Ok(ConfigBuildSetup {
            chain_pem: LEAF_CHAIN_PEM.to_vec(),
            key_pem: LEAF_KEY_PEM.to_vec(),
            ca_pem: CA_PEM.to_vec(),
        })
    }

    fn prepare(&self, _: &ConfigBuildSetup) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, setup: &ConfigBuildSetup, _: ()) -> Result<Contexts, HarnessError> {
        let profile = CONFIG_BUILD_PROFILE;
        Ok(Contexts {
            server: server_context(&profile, &setup.chain_pem, &setup.key_pem)?,
            client: client_context(&profile, &setup.ca_pem)?,
            profile,
        })
    }

    fn check(&self, _: &ConfigBuildSetup, contexts: &Contexts) -> Result<(), HarnessError> {
        let mut pair = new_pair(contexts, HANDSHAKE_PIPE_CAPACITY, None)?;
        pair.handshake()
            .context("handshaking with the built contexts")?;
        check_full_handshake(contexts, &pair)
    }
}

// ---------------------------------------------------------------------------
// Full handshakes
// ---------------------------------------------------------------------------

/// Declares a full-handshake harness: contexts of `$profile` built in
/// `setup`, a fresh connection pair per run, the handshake counted, and
/// [`check_full_handshake`].
macro_rules! full_handshake {
    ($(#[$doc:meta])* $name:ident, $profile:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        impl $name {
            /// What this harness's contexts negotiate.
            pub const PROFILE: Profile = $profile;
        }

        impl Harness for $name {
            type Setup = Contexts;
            type Input = Pair;
            type Output = Pair;

            fn runtime_libraries(&self) -> Vec<(String, String)> {
                runtime_libraries()
            }

            fn setup(&self) -> Result<Contexts, HarnessError> {
                Contexts::new(Self::PROFILE)
            }

            fn prepare(&self, contexts: &Contexts) -> Result<Pair, HarnessError> {
                new_pair(contexts, HANDSHAKE_PIPE_CAPACITY, None)
            }

            fn run(&self, _: &Contexts, mut pair: Pair) -> Result<Pair, HarnessError> {
                pair.handshake()?;
                Ok(pair)
            }

            fn check(&self, contexts: &Contexts, pair: &Pair) -> Result<(), HarnessError> {
                check_full_handshake(contexts, pair)
            }
        }
    };
}

full_handshake!(
    /// One full TLS 1.3 handshake between an OpenSSL client and server, the
    /// server authenticating with an RSA-4096 certificate.
    ///
    /// **Counted:** both sides' `SSL_do_handshake` calls, alternating client
    /// and server until both are done, and the in-memory transport's copies
    /// between them: the ClientHello with a P-256 key share, the server's
    /// key exchange, chain (leaf and CA) and `rsa_pss_rsae_sha256`
    /// CertificateVerify (an RSA-4096 private-key operation), the client
    /// validating the chain against the test CA at the fixed time, checking
    /// the host name and the CertificateVerify (RSA-4096 public-key
    /// operations), and both Finished messages: the cost of one new
    /// connection on both ends.
    ///
    /// **Not counted:** building the contexts (`setup`; see
    /// [`ConfigBuild`]), creating the two `SSL`s, setting SNI and wiring the
    /// transport (`prepare`), and freeing them. Tickets and the session
    /// cache are off, so the server sends nothing after the handshake and
    /// every run is a full handshake.
    ///
    /// **Check:** both sides finished TLS 1.3 with TLS_AES_128_GCM_SHA256,
    /// secp256r1 and `rsa_pss_rsae_sha256` (signature type RSA-PSS, digest
    /// SHA-256, an RSA-4096 rsaEncryption key), not resumed; the client
    /// verified the chain; the server saw SNI `localhost` and no client
    /// certificate; nothing is left in the transport; no ticket was issued.
    HandshakeRsa4096,
    Profile::tls13(&RSA)
);

full_handshake!(
    /// One full TLS 1.3 handshake, the server authenticating with an ECDSA
    /// P-256 certificate.
    ///
    /// **Counted:** as [`HandshakeRsa4096`], with an
    /// `ecdsa_secp256r1_sha256` CertificateVerify: one P-256 ECDSA signature
    /// by the server, and the client verifying the leaf's and the
    /// CertificateVerify's ECDSA signatures against the P-256 CA.
    ///
    /// **Not counted:** as [`HandshakeRsa4096`].
    ///
    /// **Check:** as [`HandshakeRsa4096`], with `ecdsa_secp256r1_sha256`
    /// (signature type ECDSA, digest SHA-256, a P-256 server key).
    HandshakeEcdsaP256,
    Profile::tls13(&ECDSA)
);

full_handshake!(
    /// One full TLS 1.3 handshake with client authentication (mTLS), RSA-4096
    /// certificates on both sides.
    ///
    /// **Counted:** everything [`HandshakeRsa4096`] counts, plus the server's
    /// CertificateRequest, the client's certificate chain and
    /// `rsa_pss_rsae_sha256` CertificateVerify (a second RSA-4096
    /// private-key operation), and the server verifying that chain against
    /// the RSA CA at the fixed time and the signature. The server requires a
    /// certificate (`SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT`).
    ///
    /// **Not counted:** as [`HandshakeRsa4096`].
    ///
    /// **Check:** as [`HandshakeRsa4096`], and the client's CertificateVerify
    /// used the same scheme (seen by the server as the peer's, by the client
    /// as its own), and the server verified an RSA-4096 client certificate.
    MtlsRsa4096,
    Profile {
        mutual: true,
        ..Profile::tls13(&RSA)
    }
);

full_handshake!(
    /// One full TLS 1.3 handshake with client authentication, ECDSA P-256
    /// certificates on both sides.
    ///
    /// **Counted:** as [`MtlsRsa4096`], with `ecdsa_secp256r1_sha256`
    /// signatures by both sides and the P-256 hierarchy.
    ///
    /// **Not counted:** as [`HandshakeRsa4096`].
    ///
    /// **Check:** as [`MtlsRsa4096`], for `ecdsa_secp256r1_sha256` and P-256
    /// keys.
    MtlsEcdsaP256,
    Profile {
        mutual: true,
        ..Profile::tls13(&ECDSA)
    }
);

full_handshake!(
    /// One full TLS 1.2 handshake, ECDHE-RSA-AES128-GCM-SHA256 with an
    /// RSA-4096 certificate.
    ///
    /// **Counted:** both sides' `SSL_do_handshake` until done: ClientHello,
    /// ServerHello, the chain, the ServerKeyExchange with a P-256 ECDHE key
    /// signed with `rsa_pss_rsae_sha256` (RSA-4096 private-key operation),
    /// the client's chain validation, signature check and
    /// ClientKeyExchange, both ChangeCipherSpec and Finished, with the
    /// extended master secret (OpenSSL's default).
    ///
    /// **Not counted:** as [`HandshakeRsa4096`]. `SSL_OP_NO_TICKET` and the
    /// disabled session cache mean no ticket, no session ID and no
    /// resumption.
    ///
    /// **Check:** both sides finished TLS 1.2 with
    /// ECDHE-RSA-AES128-GCM-SHA256, secp256r1, `rsa_pss_rsae_sha256` and the
    /// extended master secret, not resumed; the client's session has neither
    /// a ticket nor a session ID; nothing is left in the transport.
    HandshakeTls12Rsa4096,
    Profile {
        protocol: Protocol::Tls12,
        ..Profile::tls13(&RSA)
    }
);

// ---------------------------------------------------------------------------
// SessionResumption
// ---------------------------------------------------------------------------

/// How far the client's copy of the resumption session is backdated, in
/// seconds (see [`SessionResumption`]).
pub const SESSION_BACKDATE_SECS: c_long = 60;

/// One TLS 1.3 handshake resumed from a session ticket (PSK with (EC)DHE).
///
/// **Counted:** both sides' `SSL_do_handshake` until done: the client's
/// ClientHello offering the ticket as a PSK identity with its binder and a
/// P-256 key share (OpenSSL clients offer only `psk_dhe_ke`), the server
/// decrypting the ticket, checking the binder and doing the P-256 key
/// exchange (resumption keeps forward secrecy), both Finished messages, and
/// the server encrypting and sending one fresh NewSessionTicket, which it
/// does within its last `SSL_do_handshake` (`set_num_tickets(1)`; OpenSSL
/// sends at most one ticket after a resumption). No certificate is sent and
/// no signature is made or checked: that difference from
/// [`HandshakeRsa4096`] is what this path is for.
///
/// **Not counted:** the contexts and the full handshake in `setup` that
/// obtains the ticket (the client processes the server's post-handshake
/// NewSessionTicket with an `SSL_read`, and keeps `SSL_get1_session`,
/// serialized); decoding a copy of the session, creating the connections and
/// `SSL_set_session` (`prepare`). The client
/// never reads the new ticket sent during the run.
///
/// **Time:** OpenSSL 3.0 has no clock hook. The client computes the ticket's
/// age from `time()` minus the session's time and takes different branches
/// for an age of 0 seconds and more (`if (agesec > 0) agesec--`), so a run
/// that happened to cross a second boundary after `setup` would count a few
/// instructions more. `setup` therefore backdates the client's copy of the
/// session by [`SESSION_BACKDATE_SECS`]: the age is always at least that,
/// and well inside the ticket's lifetime (7200 s). The server's own
/// ticket-age comparison (early-data tolerance) then always takes the
/// same "out of tolerance" branch, which changes nothing here: no early data
/// is sent.
///
/// **Check:** both sides report `session_reused()`, negotiated TLS 1.3 with
/// TLS_AES_128_GCM_SHA256 and secp256r1 (so the PSK mode was `psk_dhe_ke`),
/// and no signature was made or checked by either side; the server sent
/// exactly one record after its Finished (the new ticket). A full handshake
/// fails this check.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionResumption;

impl SessionResumption {
    /// [`HandshakeRsa4096`]'s profile with tickets on.
    pub const PROFILE: Profile = Profile {
        tickets: true,
        ..Profile::tls13(&RSA)
    };
}

/// What [`SessionResumption`] runs share: contexts with tickets on and the
/// client's session from a full handshake, serialized.
///
/// Each run resumes from its own copy of the session, decoded in `prepare`:
/// OpenSSL marks a session "not resumable" when a connection that used it is
/// freed without sending close_notify, so sharing one `SSL_SESSION` would
/// make the runs depend on one another.
#[derive(Debug)]
pub struct ResumptionSetup {
    contexts: Contexts,
    session_der: Vec<u8>,
}

impl Harness for SessionResumption {
    type Setup = ResumptionSetup;
    type Input = Pair;
    type Output = Pair;

    fn runtime_libraries(&self) -> Vec<(String, String)> {
        runtime_libraries()
    }

    fn setup(&self) -> Result<ResumptionSetup, HarnessError> {
        let contexts = Contexts::new(Self::PROFILE)?;
        let mut pair = new_pair(&contexts, HANDSHAKE_PIPE_CAPACITY, None)?;
        pair.handshake()
            .context("the full handshake that obtains a ticket")?;
        check_negotiated(&pair, &contexts.profile, Expect::Full)?;
        let records = pair.pending_server_records();
        ensure(records.as_ref().map(Vec::len) == Some(1), || {
            format!("after a full handshake the server must send one ticket record: {records:?}")
        })?;
        // In TLS 1.3 the ticket arrives after the handshake; a read processes
        // it (and then wants more: there is no application data).
        let mut byte = [0u8; 1];
        match pair.client.ssl_read(&mut byte) {
            Err(e) if e.code() == ErrorCode::WANT_READ => {}
            Ok(n) => return Err(format!("client read {n} unexpected application bytes").into()),
            Err(e) => return Err(e).context("client reading the session ticket"),
        }
        let session = pair
            .client
            .ssl()
            .session()
            .ok_or("the client has no session after the handshake")?
            .to_owned();
        ensure(ffi::session_has_ticket(&session), || {
            "the client's session has no ticket".to_owned()
        })?;
        // Close the connection properly, then free it: the session is then
        // ours alone and may be changed. (Freeing an `SSL` that has not sent
        // close_notify marks its session "bad", never to be resumed.)
        pair.client
            .shutdown()
            .context("client sending close_notify")?;
        drop(pair);
        let backdated = session.time() - SESSION_BACKDATE_SECS;
        // SAFETY: no connection uses the session any more and it has not
        // been shared with another thread.
        unsafe { ffi::set_session_time(&session, backdated) }.context("backdating the session")?;
        let session_der = session.to_der().context("serializing the session")?;
        Ok(ResumptionSetup {
            contexts,
            session_der,
        })
    }

    fn prepare(&self, setup: &ResumptionSetup) -> Result<Pair, HarnessError> {
        let session = SslSession::from_der(&setup.session_der).context("decoding the session")?;
        new_pair(&setup.contexts, HANDSHAKE_PIPE_CAPACITY, Some(&session))
    }

    fn run(&self, _: &ResumptionSetup, mut pair: Pair) -> Result<Pair, HarnessError> {
        pair.handshake()?;
        Ok(pair)
    }

    fn check(&self, setup: &ResumptionSetup, pair: &Pair) -> Result<(), HarnessError> {
        check_negotiated(pair, &setup.contexts.profile, Expect::Resumed)?;
        let (to_server, _) = pair.in_flight();
        ensure(to_server == 0, || {
            format!("{to_server} bytes from the client left unread by the server")
        })?;
        let records = pair.pending_server_records();
        ensure(records.as_ref().map(Vec::len) == Some(1), || {
            format!("the server must send exactly one ticket record after resuming: {records:?}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress_measure::harness::run_natively;

    #[test]
    fn config_build_runs_natively() {
        run_natively(&ConfigBuild).expect("ConfigBuild");
    }

    #[test]
    fn handshake_rsa4096_runs_natively() {
        run_natively(&HandshakeRsa4096).expect("HandshakeRsa4096");
    }

    #[test]
    fn handshake_ecdsa_p256_runs_natively() {
        run_natively(&HandshakeEcdsaP256).expect("HandshakeEcdsaP256");
    }

    #[test]
    fn mtls_rsa4096_runs_natively() {
        run_natively(&MtlsRsa4096).expect("MtlsRsa4096");
    }

    #[test]
    fn mtls_ecdsa_p256_runs_natively() {
        run_natively(&MtlsEcdsaP256).expect("MtlsEcdsaP256");
    }

    #[test]
    fn handshake_tls12_rsa4096_runs_natively() {
        run_natively(&HandshakeTls12Rsa4096).expect("HandshakeTls12Rsa4096");
    }

    #[test]
    fn session_resumption_runs_natively() {
        run_natively(&SessionResumption).expect("SessionResumption");
    }

    #[test]
    fn resumption_check_rejects_a_full_handshake() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        // Same contexts, but the client offers no session.
        let pair = new_pair(&setup.contexts, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        let pair = harness.run(&setup, pair).expect("full handshake");
        check_negotiated(&pair, &setup.contexts.profile, Expect::Full)
            .expect("it was a full handshake");
        let error = harness
            .check(&setup, &pair)
            .expect_err("a full handshake must fail the resumption check");
        assert!(error.to_string().contains("session_reused"), "{error}");
    }

    #[test]
    fn handshake_check_rejects_a_resumed_handshake() {
        let harness = SessionResumption;
        let setup = harness.setup().expect("setup");
        let pair = harness.prepare(&setup).expect("prepare");
        let pair = harness.run(&setup, pair).expect("run");
        harness.check(&setup, &pair).expect("resumed");
        assert!(check_negotiated(&pair, &setup.contexts.profile, Expect::Full).is_err());
    }

    /// The handshake contexts really turn resumption off: a session from one
    /// handshake, offered on the next, is not resumed.
    #[test]
    fn handshake_contexts_do_not_resume() {
        let contexts = Contexts::new(HandshakeRsa4096::PROFILE).expect("contexts");
        let mut first = new_pair(&contexts, HANDSHAKE_PIPE_CAPACITY, None).expect("pair");
        first.handshake().expect("first handshake");
        let session = first.client.ssl().session().expect("session").to_owned();
        let mut second =
            new_pair(&contexts, HANDSHAKE_PIPE_CAPACITY, Some(&session)).expect("pair");
        second.handshake().expect("second handshake");
        check_full_handshake(&contexts, &second).expect("a full handshake");
    }

    /// OpenSSL's name for the pinned TLS 1.2 cipher is the IANA suite the
    /// other libraries pin.
    #[test]
    fn tls12_cipher_is_the_standard_suite() {
        assert_eq!(
            HandshakeTls12Rsa4096::PROFILE.protocol,
            Protocol::Tls12,
            "TLS 1.2 harness"
        );
        let harness = HandshakeTls12Rsa4096;
        let contexts = harness.setup().expect("setup");
        let pair = harness.prepare(&contexts).expect("prepare");
        let pair = harness.run(&contexts, pair).expect("run");
        let cipher = pair.client.ssl().current_cipher().expect("cipher");
        assert_eq!(
            cipher.standard_name(),
            Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
        );
    }
}
