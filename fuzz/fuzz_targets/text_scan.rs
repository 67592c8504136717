//! The scan that bounds JSON text before a parser that is not Toolsmith's reads it
//! (`json_text_excess`, which the MCP transports and `json_text_too_deep` use), against
//! serde_json's reading of the same bytes, differential: arbitrary bytes, and JSON text the
//! fuzzer builds structurally (so that most inputs are valid).
//!
//! Asserts: text the scan passes holds no object keyed with one of serde_json's private keys
//! (core's own reader finds none either; a string value that spells one passes); on text
//! serde_json reads as a value (and holding no such key, which the scan refuses: the first
//! thing this target found), the scan's bounds agree with the value's own
//! depth and number of values (the scan passes with both bounds at the value's, and finds
//! each bound one lower passed, at a byte inside the text); on any bytes, it never panics,
//! and any excess it finds is at a byte of the text.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith::{JsonTextExcess, json_text_excess};

/// JSON built from the fuzzer's bytes; written with varied whitespace and escapes.
#[derive(Debug, Arbitrary)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => Value::from(*i),
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Text(text) => Value::from(text.as_str()),
            Json::Array(items) => Value::Array(items.iter().map(Json::value).collect()),
            Json::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, value)| (key.clone(), value.value()))
                    .collect(),
            ),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Input {
    Bytes(Vec<u8>),
    Built { json: Json, pretty: bool },
}

/// Levels of brackets: a scalar none, `[]` one.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Values as core's bounded reader counts them: each once, wherever it nests (keys not).
fn values(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(values).sum(),
        Value::Object(members) => members.values().map(values).sum(),
        _ => 0,
    }
}

fn at(excess: JsonTextExcess) -> usize {
    match excess {
        JsonTextExcess::TooDeep { at, .. }
        | JsonTextExcess::TooManyValues { at, .. }
        | JsonTextExcess::PrivateKey { at } => at,
        other => panic!("an excess this target does not know: {other:?}"),
    }
}

fuzz_target!(|input: Input| {
    let text = match &input {
        Input::Bytes(bytes) => bytes.clone(),
        Input::Built { json, pretty } => {
            let value = json.value();
            if *pretty {
                serde_json::to_vec_pretty(&value).unwrap()
            } else {
                serde_json::to_vec(&value).unwrap()
            }
        }
    };
    // Any bytes: no panic, and an excess found is at one of them.
    for (max_depth, max_values) in [(0, 0), (1, 1), (3, 5), (64, 1_000)] {
        if let Some(excess) = json_text_excess(&text, max_depth, max_values) {
            assert!(
                at(excess) < text.len(),
                "{excess:?} past {} bytes",
                text.len()
            );
        }
    }
    // An object keyed with one of serde_json's private keys: serde_json's `Value` would
    // read another value than the text's (the fuzzer found it so), and the scan refuses it.
    if let Some(JsonTextExcess::PrivateKey { .. }) = json_text_excess(&text, usize::MAX, usize::MAX)
    {
        return;
    }
    // Passed, the text holds no such key (a string value spelling one is a string): core's
    // own reader, which sees every key as written, finds none either.
    if let Err(error) = toolsmith::value_from_slice(&text) {
        assert!(
            !error.to_string().contains("keeps for itself"),
            "the scan passed a private key that core's reader refuses: {error}: {}",
            String::from_utf8_lossy(&text)
        );
    }
    // serde_json stops at 128 levels; the value's own functions recurse once a level.
    let Ok(value) = serde_json::from_slice::<Value>(&text) else {
        return;
    };
    let (depth, values) = (depth(&value), values(&value));
    assert_eq!(
        json_text_excess(&text, depth, values),
        None,
        "depth {depth}, {values} values: {}",
        String::from_utf8_lossy(&text)
    );
    if depth > 0 {
        match json_text_excess(&text, depth - 1, usize::MAX) {
            Some(JsonTextExcess::TooDeep { .. }) => {}
            other => panic!("depth {depth} within {}: {other:?}", depth - 1),
        }
    }
    // (A bound of no values at all is not one a caller sets: `JsonLimits` keeps it at 1 or
    // more, and the scan counts the root as found.)
    if values > 1 {
        match json_text_excess(&text, usize::MAX, values - 1) {
            Some(JsonTextExcess::TooManyValues { .. }) => {}
            other => panic!("{values} values within {}: {other:?}", values - 1),
        }
    }
});
