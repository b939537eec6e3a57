//! Property tests of everything the runner reads back from a file: records,
//! baselines and diff reports. Whatever the bytes or the structure, a
//! reader returns a value or an error, never panics; and what it accepts
//! is within bounds, so nothing computed from it can overflow.

use std::path::Path;

use proptest::prelude::*;
use regress::diff::render;
use regress::diff::report::{DiffReport, DIFF_SCHEMA};
use regress::judge::baseline::BaselineFile;
use regress::judge::gate;
use regress::limits::MAX_COUNT;
use regress::{fixtures, HarnessName, Measurement};
use serde_json::{json, Value};

/// JSON values that stress a reader: edge numbers, odd strings, wrong types.
fn hostile_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MAX)),
        Just(json!(1u64 << 63)),
        Just(json!(1e300)),
        Just(json!(-0.0)),
        Just(json!("")),
        Just(json!("../../../tmp/x")),
        Just(json!("a::b")),
        Just(json!("é€😀")),
        Just(json!("<!-- regress-diff --> @user [x](https://e)")),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,30}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(".{0,8}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// `value` with the field at `path` (keys and indices, as far as they go)
/// replaced by `replacement`.
fn mutate(mut value: Value, path: &[usize], replacement: Value) -> Value {
    replace(&mut value, path, replacement);
    value
}

fn replace(node: &mut Value, path: &[usize], replacement: Value) {
    let Some((&step, rest)) = path.split_first() else {
        *node = replacement;
        return;
    };
    match node {
        Value::Object(map) if !map.is_empty() => {
            let key = map
                .keys()
                .nth(step % map.len())
                .cloned()
                .unwrap_or_default();
            if let Some(child) = map.get_mut(&key) {
                replace(child, rest, replacement);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let index = step % items.len();
            replace(&mut items[index], rest, replacement);
        }
        other => *other = replacement,
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

fn good_report() -> Value {
    json!({
        "schema": DIFF_SCHEMA,
        "base": { "ref": "main", "commit": "a".repeat(40) },
        "head": { "ref": "HEAD", "commit": "b".repeat(40) },
        "valgrind": "3.22.0",
        "method": "markers",
        "shards": [{ "index": 1, "count": 2 }],
        "harnesses": [{
            "harness": "a::b", "verdict": "regressed", "base": 1000000, "head": 1100000,
            "delta": 100000, "threshold": { "relative_percent": 0.05, "absolute": 1000 },
            "allowance": 1000, "significant": true,
            "origins": [{ "origin": "harness", "delta": 100000 }],
            "functions": [{ "file": "a.rs", "function": "f", "origin": "harness",
                            "base": 5, "head": 100005, "delta": 100000 }],
            "annotated_diff": "perf_outputs/diff/a.b.diff.txt", "error": null
        }],
        "problems": []
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic_a_reader(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let _ = Measurement::read(&write(dir.path(), "a.b.json", &bytes));
        let _ = DiffReport::read(&write(dir.path(), "report.json", &bytes));
        write(dir.path(), "s2n_tls.x.json", &bytes);
        let _ = BaselineFile::load(dir.path(), &HarnessName::new("s2n_tls::x").expect("name"));
    }

    /// A baseline with any one field replaced either is refused or is one
    /// the gate can judge with exact arithmetic.
    #[test]
    fn a_mutated_baseline_loads_within_bounds_or_is_refused(
        path in proptest::collection::vec(any::<usize>(), 0..5),
        replacement in hostile_value(),
    ) {
        let harness = "s2n_tls::handshake_rsa4096";
        let file = fixtures::baseline(harness, &[("3.19.0", 1_000_000)]);
        let value = mutate(serde_json::to_value(&file).expect("json"), &path, replacement);
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "s2n_tls.handshake_rsa4096.json", value.to_string().as_bytes());
        let name = HarnessName::new(harness).expect("name");
        if let Ok(Some(loaded)) = BaselineFile::load(dir.path(), &name) {
            prop_assert!(loaded.threshold.validate().is_ok());
            for entry in &loaded.entries {
                prop_assert!((1..=MAX_COUNT).contains(&entry.instructions));
                prop_assert!((1..=MAX_COUNT).contains(&entry.operations_per_run));
            }
            let measurement = fixtures::measurement(harness, MAX_COUNT, None);
            let _ = gate::evaluate(&measurement, Ok(Some(loaded)));
        }
    }

    #[test]
    fn a_mutated_record_is_read_within_bounds_or_refused(
        path in proptest::collection::vec(any::<usize>(), 0..4),
        replacement in hostile_value(),
    ) {
        let record = fixtures::measurement("a::b", 1_000, Some(64));
        let value = mutate(serde_json::to_value(&record).expect("json"), &path, replacement);
        let dir = tempfile::tempdir().expect("tempdir");
        let written = write(dir.path(), "a.b.json", value.to_string().as_bytes());
        if let Ok(read) = Measurement::read(&written) {
            prop_assert_eq!(read.harness.as_str(), "a::b");
            prop_assert!((1..=MAX_COUNT).contains(&read.instructions));
            let _ = read.instructions_per_byte();
        }
    }

    /// A mutated report is refused, or merges and renders into a comment
    /// with exactly one marker.
    #[test]
    fn a_mutated_report_is_refused_or_renders_safely(
        path in proptest::collection::vec(any::<usize>(), 0..6),
        replacement in hostile_value(),
    ) {
        let value = mutate(good_report(), &path, replacement);
        let dir = tempfile::tempdir().expect("tempdir");
        let written = write(dir.path(), "report.json", value.to_string().as_bytes());
        if let Ok(report) = DiffReport::read(&written) {
            let _ = render::text(&report);
            let _ = render::bmf(&report);
            let comment = render::comment(&report);
            prop_assert!(comment.is_some());
            if let Ok(merged) = DiffReport::merge(vec![report]) {
                let _ = render::markdown(&merged);
            }
        }
    }
}

/// The unmutated inputs of the properties above are accepted, so the
/// properties test both branches.
#[test]
fn the_unmutated_inputs_are_accepted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let written = write(
        dir.path(),
        "report.json",
        good_report().to_string().as_bytes(),
    );
    let report = DiffReport::read(&written).expect("the good report reads");
    let comment = render::comment(&report).expect("one marker");
    assert!(comment.starts_with(render::COMMENT_MARKER));
    let record = fixtures::measurement("a::b", 1_000, Some(64));
    let written = write(
        dir.path(),
        "a.b.json",
        serde_json::to_string(&record).expect("json").as_bytes(),
    );
    assert_eq!(Measurement::read(&written).expect("reads"), record);
}
