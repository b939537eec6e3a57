use super::*;

const PINS: Pins = Pins {
    version: TlsVersion::Tls13,
    suite: CipherSuite::Tls13Aes128GcmSha256,
    group: NamedGroup::Secp256r1,
    scheme: SignatureScheme::RsaPssRsaeSha256,
};

fn full(client_auth: bool) -> Negotiated {
    Negotiated {
        version: Seen::Is(TlsVersion::Tls13),
        suite: Seen::Is(CipherSuite::Tls13Aes128GcmSha256),
        group: Seen::Is(NamedGroup::Secp256r1),
        resumed: false,
        retried: Some(false),
        server_signature: Seen::Is(SignatureScheme::RsaPssRsaeSha256),
        client_signature: if client_auth {
            Seen::Is(SignatureScheme::RsaPssRsaeSha256)
        } else {
            Seen::Nothing
        },
    }
}

#[test]
fn names_and_codes_round_trip() {
    for suite in CipherSuite::ALL {
        assert_eq!(CipherSuite::from_name(suite.name()), Seen::Is(suite));
        assert_eq!(CipherSuite::from_iana(suite.iana()), Seen::Is(suite));
    }
    for version in [TlsVersion::Tls12, TlsVersion::Tls13] {
        for cipher in Cipher::AEADS {
            assert_eq!(CipherSuite::new(version, cipher).version(), version);
        }
        // CBC has a TLS 1.2 suite only.
        let cbc = CipherSuite::new(version, Cipher::Aes128CbcSha);
        assert_eq!(cbc.version(), TlsVersion::Tls12);
    }
    for scheme in SignatureScheme::ALL {
        assert_eq!(SignatureScheme::from_name(scheme.name()), Seen::Is(scheme));
        assert_eq!(SignatureScheme::from_iana(scheme.iana()), Seen::Is(scheme));
    }
    assert_eq!(NamedGroup::from_iana(23), Seen::Is(NamedGroup::Secp256r1));
    for group in NamedGroup::ALL {
        assert_eq!(NamedGroup::from_name(group.name()), Seen::Is(group));
        assert_eq!(NamedGroup::from_iana(group.iana()), Seen::Is(group));
    }
    assert_eq!(
        NamedGroup::from_name("X25519"),
        Seen::Is(NamedGroup::X25519)
    );
    assert_eq!(
        NamedGroup::from_name("SecP256r1MLKEM768"),
        Seen::Other("SecP256r1MLKEM768".into())
    );
}

#[test]
fn check_accepts_exactly_the_expected_handshake() {
    for client_auth in [false, true] {
        let good = Expected {
            pins: PINS,
            client_auth,
            resumed: false,
            retried: false,
        };
        let sides = [("client", full(client_auth)), ("server", full(client_auth))];
        good.check(&sides).expect("the real parameters");
        for (what, wrong) in every_other_expectation(&good) {
            assert!(wrong.check(&sides).is_err(), "{what}");
        }
    }
}

#[test]
fn a_resumed_handshake_has_no_signatures() {
    let resumed = Expected {
        pins: PINS,
        client_auth: false,
        resumed: true,
        retried: false,
    };
    let seen = Negotiated {
        resumed: true,
        server_signature: Seen::Nothing,
        ..full(false)
    };
    resumed.check(&[("client", seen.clone())]).expect("resumed");
    let error = resumed
        .check(&[("server", full(false))])
        .expect_err("a full handshake");
    assert!(error.to_string().contains("resumed is false"), "{error}");
}

#[test]
fn the_message_names_side_parameter_and_both_values() {
    let good = Expected {
        pins: PINS,
        client_auth: false,
        resumed: false,
        retried: false,
    };
    let seen = Negotiated {
        group: NamedGroup::from_name("SecP256r1MLKEM768"),
        ..full(false)
    };
    let error = good.check(&[("server", seen)]).expect_err("another group");
    assert_eq!(
        error.to_string(),
        "server: negotiated group SecP256r1MLKEM768 (pinned by no path), expected secp256r1"
    );
}

#[test]
fn what_a_side_cannot_see_is_not_compared() {
    let good = Expected {
        pins: PINS,
        client_auth: true,
        resumed: false,
        retried: false,
    };
    let client = Negotiated {
        client_signature: Seen::NotVisible,
        ..full(true)
    };
    let server = Negotiated {
        server_signature: Seen::NotVisible,
        ..full(true)
    };
    good.check(&[("client", client), ("server", server)])
        .expect("each signature seen by one side");
}
