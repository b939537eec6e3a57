//! Property tests: the parsers read files a killed run, a full disk or a
//! hostile commit may have written. Whatever the bytes, they return a
//! profile or an error, never panic, and what they return is consistent.

use proptest::prelude::*;
use regress_profile::{annotated, cachegrind_out};

/// Lines that look like a profile's, in any order and number, with
/// numbers at the edges of the integer types.
fn profile_like() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        Just("0".to_owned()),
        Just("-1".to_owned()),
        Just(i64::MAX.to_string()),
        Just(i64::MIN.to_string()),
        Just(u64::MAX.to_string()),
        Just("99999999999999999999999".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
    ];
    let line = prop_oneof![
        Just("events: Ir".to_owned()),
        Just("events: Ir Dr".to_owned()),
        Just("cmd: ./harness".to_owned()),
        Just("fl=a.c".to_owned()),
        Just("fn=f".to_owned()),
        Just("fi=b.h".to_owned()),
        Just("fe=a.c".to_owned()),
        number.clone().prop_map(|n| format!("summary: {n}")),
        (number.clone(), number.clone()).prop_map(|(a, b)| format!("{a} {b}")),
        number.prop_map(|n| format!("0 {n} {n}")),
        ".{0,40}",
    ];
    proptest::collection::vec(line, 0..40).prop_map(|lines| lines.join("\n"))
}

/// Lines that look like `cg_annotate`'s, from both generations.
fn annotation_like() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("-".repeat(80)),
        Just("-- Summary".to_owned()),
        Just("Ir_______________ ".to_owned()),
        Just("Ir".to_owned()),
        any::<i64>().prop_map(|n| format!("{n} (100.0%)  PROGRAM TOTALS")),
        any::<u64>().prop_map(|n| format!("{n}  PROGRAM TOTALS")),
        any::<i64>().prop_map(|n| format!("{n} (50.0%)  a.c:f")),
        any::<i64>().prop_map(|n| format!("{n} (50.0%, 50.0%)  < a.c:f (1, 2)")),
        Just("-- Function summary".to_owned()),
        Just("-- File:function summary".to_owned()),
        ".{0,60}",
    ];
    proptest::collection::vec(line, 0..40).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn any_text_is_a_profile_or_an_error(text in ".{0,400}") {
        let _ = cachegrind_out::parse(&text);
        let _ = annotated::parse(&text);
    }

    #[test]
    fn profile_like_text_is_a_consistent_profile_or_an_error(text in profile_like()) {
        if let Ok(profile) = cachegrind_out::parse(&text) {
            // A parsed profile's summary is the sum of its costs.
            if let Ok(total) = profile.instructions() {
                let sum: i128 = profile.functions.iter().map(|f| i128::from(f.instructions)).sum();
                prop_assert_eq!(i128::from(total), sum);
            }
        }
    }

    #[test]
    fn annotation_like_text_is_an_annotation_or_an_error(text in annotation_like()) {
        let _ = annotated::parse(&text);
    }

    #[test]
    fn arbitrary_bytes_are_read_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..2_000)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cachegrind.out");
        std::fs::write(&path, &bytes).expect("write");
        let _ = cachegrind_out::read(&path);
        let _ = annotated::read(&path);
    }
}
