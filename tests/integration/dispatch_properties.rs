//! Property test: random argument objects against a handful of schemas.
//!
//! `execute_one` never panics; a call it rejects is `InvalidArguments` and the tool body
//! never ran; a call it accepts ran exactly once, with arguments that satisfy the schema; a
//! call the schema accepts as sent is never rejected.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt as _;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolsmith::{
    Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolErrorKind,
};

fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "bounds",
            json!({"type": "object", "properties": {
                "count": {"type": "integer", "minimum": 0, "maximum": 10},
                "ratio": {"type": "number", "exclusiveMaximum": 1.5},
                "name": {"type": "string", "minLength": 1, "maxLength": 4}
            }, "required": ["count"], "additionalProperties": false}),
        ),
        (
            "nested",
            json!({"type": "object", "properties": {
                "filter": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "flag": {"type": "boolean"}
                }, "required": ["name"]},
                "items": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}
            }, "required": ["filter"]}),
        ),
        (
            "enums",
            json!({"type": "object", "properties": {
                "mode": {"enum": ["fast", "slow"]},
                "flag": {"type": "boolean"},
                "name": {"type": ["string", "null"]}
            }, "required": ["mode"], "additionalProperties": false}),
        ),
        (
            "open",
            json!({"type": "object", "properties": {"count": {"type": "integer"}}}),
        ),
    ]
}

const KEYS: &[&str] = &[
    "count", "ratio", "name", "filter", "flag", "items", "mode", "other",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..14).prop_map(Value::from),
        (-2.0f64..3.0).prop_map(Value::from),
        prop_oneof![
            Just("fast".to_owned()),
            Just("slow".to_owned()),
            Just("5".to_owned()),
            Just("true".to_owned()),
            Just(String::new()),
            "[a-z0-9 ]{0,6}",
        ]
        .prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(|pairs| {
                Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((prop::sample::select(KEYS), value()), 0..5)
        .prop_map(|pairs| pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn execute_one_runs_exactly_the_valid_calls(which in 0usize..4, sent in arguments()) {
        let (name, schema) = schemas().swap_remove(which);
        let oracle = jsonschema::validator_for(&schema).expect("schema compiles");
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let manager = ToolCallManager::new("prop");
        manager.register(Arc::new(FnTool::new(name, "Echoes its arguments.", Args::new(schema),
            move |a: ToolArgs<'_>| {
                counter.fetch_add(1, Ordering::SeqCst);
                let echoed = a.arguments().as_value().clone();
                async move { Ok(ToolCallResult::json(echoed)) }
            }))).expect("registers");

        let sent = Value::Object(sent);
        let request = ToolCallRequest::new("c", name, ToolArguments::try_from(sent.clone()).unwrap());
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            manager.execute_one(&request).now_or_never().expect("finishes at once")
        }));
        let outcome = outcome.expect("execute_one never panics");
        match outcome {
            Ok(result) => {
                prop_assert_eq!(runs.load(Ordering::SeqCst), 1);
                let toolsmith::UserModelContent::Json(received) = result.content else {
                    panic!("the echo tool returns JSON");
                };
                prop_assert!(oracle.is_valid(&received), "tool got invalid {received}");
                if oracle.is_valid(&sent) {
                    prop_assert_eq!(received, sent);
                }
            }
            Err(err) => {
                prop_assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
                prop_assert_eq!(runs.load(Ordering::SeqCst), 0);
                prop_assert!(!oracle.is_valid(&sent), "a valid call was rejected: {err}");
                prop_assert!(err.to_string().contains(name));
            }
        }
    }
}
