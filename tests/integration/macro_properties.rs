//! Property test: the schema `#[tool_fn]` generates and the reader it generates agree.
//!
//! For random argument objects (right types, numbers and booleans spelled as strings, `null`s,
//! wrong types, unknown keys), a call the manager's validation accepts always reads and runs;
//! a call it rejects is `InvalidArguments` and the function never ran.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, ToolErrorKind, tool_fn};

thread_local! {
    // Per thread: tests run in parallel, and a sync tool runs on the calling thread.
    static RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
static ACCEPTED: AtomicUsize = AtomicUsize::new(0);
static CASES: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Slow,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Window {
    start: u32,
    end: Option<u32>,
}

/// A tool with one parameter of each kind.
#[tool_fn]
#[allow(clippy::too_many_arguments)]
fn probe(
    count: u8,
    ratio: f64,
    on: bool,
    name: String,
    mode: Mode,
    tags: Vec<i16>,
    window: Option<Window>,
    #[arg(default)] page: u16,
) -> String {
    RUNS.set(RUNS.get() + 1);
    let window = window.map(|w| (w.start, w.end));
    format!("{count} {ratio} {on} {name} {mode:?} {tags:?} {window:?} {page}")
}

fn manager() -> &'static ToolCallManager {
    static MANAGER: OnceLock<ToolCallManager> = OnceLock::new();
    MANAGER.get_or_init(|| {
        let manager = ToolCallManager::new("props");
        manager.register(Arc::new(Probe)).expect("registers");
        manager
    })
}

/// A value for one argument: mostly plausible, sometimes wrong.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u8>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        any::<u16>().prop_map(|n| Value::from(n.to_string())),
        any::<bool>().prop_map(Value::from),
        any::<bool>().prop_map(|b| Value::from(b.to_string())),
        "[a-z]{0,6}".prop_map(Value::from),
        Just(json!("fast")),
        Just(json!("slow")),
        Just(Value::Null),
        prop::collection::vec(any::<i16>().prop_map(Value::from), 0..3).prop_map(Value::from),
        Just(json!(["1", 2])),
        (any::<u32>(), prop::option::of(any::<u32>()))
            .prop_map(|(s, e)| json!({"start": s, "end": e})),
        Just(json!({"start": "3"})),
        Just(json!({"end": 1})),
    ]
}

/// A valid call, then up to three arguments replaced, added or removed.
fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    let keys = [
        "count", "ratio", "on", "name", "mode", "tags", "window", "page", "extra",
    ];
    let base = (
        any::<u8>(),
        -1e3f64..1e3,
        any::<bool>(),
        "[a-z]{0,4}",
        any::<bool>(),
    )
        .prop_map(|(count, ratio, on, name, fast)| {
            let mut map = Map::new();
            map.insert("count".into(), json!(count));
            map.insert("ratio".into(), json!(ratio));
            map.insert("on".into(), json!(on));
            map.insert("name".into(), json!(name));
            map.insert("mode".into(), json!(if fast { "fast" } else { "slow" }));
            map.insert("tags".into(), json!([]));
            map
        });
    let changes = prop::collection::vec((0..keys.len(), value(), any::<bool>()), 0..4);
    (base, changes).prop_map(move |(mut map, changes)| {
        for (key, value, remove) in changes {
            if remove {
                map.remove(keys[key]);
            } else {
                map.insert(keys[key].to_owned(), value);
            }
        }
        map
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn validation_and_reading_agree(map in arguments()) {
        let arguments = ToolArguments::from(map);
        let accepted = manager().validate_arguments("probe", &arguments).is_ok();
        CASES.fetch_add(1, Ordering::SeqCst);
        ACCEPTED.fetch_add(usize::from(accepted), Ordering::SeqCst);
        let before = RUNS.get();
        let request = ToolCallRequest::new("call", "probe", arguments.clone());
        let outcome = futures::executor::block_on(manager().execute_one(&request));
        let ran = RUNS.get() - before;
        match outcome {
            Ok(_) => {
                prop_assert!(accepted, "ran on arguments validation rejects: {arguments}");
                prop_assert_eq!(ran, 1);
            }
            Err(err) => {
                prop_assert!(!accepted, "validated arguments failed to read: {arguments}: {err}");
                prop_assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
                prop_assert_eq!(ran, 0);
            }
        }
    }
}

#[test]
fn both_outcomes_are_exercised() {
    // Runs the property first (the order of tests is not fixed), then checks that the
    // generated calls were neither all accepted nor all rejected.
    validation_and_reading_agree();
    let (cases, accepted) = (
        CASES.load(Ordering::SeqCst),
        ACCEPTED.load(Ordering::SeqCst),
    );
    assert!(
        accepted > cases / 5 && accepted < cases * 4 / 5,
        "{accepted} of {cases} accepted"
    );
}

#[test]
fn a_complete_call_runs() {
    let request = ToolCallRequest::new(
        "call",
        "probe",
        ToolArguments::try_from(json!({
            "count": "7", "ratio": 0.5, "on": "true", "name": "x", "mode": "slow",
            "tags": ["1", -2], "window": {"start": "3"}
        }))
        .unwrap(),
    );
    let result = futures::executor::block_on(manager().execute_one(&request)).unwrap();
    assert_eq!(
        result.content.to_text(),
        "7 0.5 true x Slow [1, -2] Some((3, None)) 0"
    );
}
