//! What validation accepts, the tool reads: for each shape of parameter that serde reads
//! through its own buffer (untagged, internally and adjacently tagged enums, flattened
//! structs) and for maps keyed by non-string types, a call that passes validation runs and
//! the tool reads the value the model sent; a call the tool could not read is refused by
//! validation, before the tool, naming where.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::{ToolCallManager, ToolError, ToolImpl, tool_fn};

use crate::support::json_calls::{arguments, run_json as run};

/// Untagged: the first variant that reads.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
enum Amount {
    Count(u32),
    Range { from: i16, to: i16 },
    Many(Vec<u8>),
    Huge(u64),
    Label(String),
}

/// Untagged, with a variant that takes any value.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
enum Payload {
    Count(u32),
    Any(Value),
}

/// Internally tagged.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { r: u32 },
    Square { side: u8, rotation: Option<i64> },
}

/// Adjacently tagged.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "op", content = "by", rename_all = "snake_case")]
enum Step {
    Advance(u32),
    Turn { degrees: i16 },
}

/// A flattened struct and its neighbour.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Page {
    query: String,
    #[serde(flatten)]
    window: Window,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Window {
    offset: u64,
    limit: Option<u8>,
}

/// A unit enum used as a map key.
#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
enum Colour {
    Red,
    Green,
}

/// Echoes an untagged enum.
#[tool_fn]
async fn read_amount(amount: Amount) -> Result<Value, ToolError> {
    Ok(json!(amount))
}

/// Echoes an internally tagged enum.
#[tool_fn]
async fn read_shape(shape: Shape) -> Result<Value, ToolError> {
    Ok(json!(shape))
}

/// Echoes an adjacently tagged enum.
#[tool_fn]
async fn read_step(step: Step) -> Result<Value, ToolError> {
    Ok(json!(step))
}

/// Echoes a struct with a flattened part.
#[tool_fn]
async fn read_page(page: Page) -> Result<Value, ToolError> {
    Ok(json!(page))
}

/// Echoes a JSON value as it came.
#[tool_fn]
async fn raw(
    value: Value,
    amount: Option<Amount>,
    payload: Option<Payload>,
) -> Result<Value, ToolError> {
    let payload = payload.map(|payload| match payload {
        Payload::Count(n) => json!({"count": n}),
        Payload::Any(any) => json!({"any": any}),
    });
    Ok(json!({"value": value, "amount": amount, "payload": payload}))
}

/// Echoes maps keyed by every kind of key.
#[tool_fn]
#[allow(clippy::too_many_arguments)]
async fn keyed(
    flags: Option<HashMap<bool, u8>>,
    letters: Option<BTreeMap<char, u8>>,
    ids: Option<BTreeMap<NonZeroU32, u8>>,
    small: Option<BTreeMap<u8, u8>>,
    signed: Option<BTreeMap<i64, u8>>,
    wide: Option<BTreeMap<u128, u8>>,
    wide_signed: Option<BTreeMap<i128, u8>>,
    colours: Option<BTreeMap<Colour, u8>>,
) -> Result<Value, ToolError> {
    Ok(json!({
        "flags": flags, "letters": letters, "ids": ids, "small": small, "signed": signed,
        "wide": wide, "wide_signed": wide_signed, "colours": colours,
    }))
}

fn manager() -> ToolCallManager {
    let manager = ToolCallManager::new("test");
    let tools: [Arc<dyn ToolImpl>; 6] = [
        Arc::new(ReadAmount),
        Arc::new(ReadShape),
        Arc::new(ReadStep),
        Arc::new(ReadPage),
        Arc::new(Raw),
        Arc::new(Keyed),
    ];
    for tool in tools {
        manager.register(tool).expect("registers");
    }
    manager
}

/// Calls that validation accepts, with what the tool must have read (echoed as JSON).
fn accepted() -> Vec<(&'static str, Value, Value)> {
    vec![
        // Untagged: whole floats where a variant wants an integer.
        ("read_amount", json!({"amount": 5}), json!(5)),
        ("read_amount", json!({"amount": 5.0}), json!(5)),
        (
            "read_amount",
            json!({"amount": {"from": -2.0, "to": 3.0}}),
            json!({"from": -2, "to": 3}),
        ),
        ("read_amount", json!({"amount": [1.0, 2]}), json!([1, 2])),
        (
            "read_amount",
            json!({"amount": 1e19}),
            json!(10_000_000_000_000_000_000u64),
        ),
        ("read_amount", json!({"amount": "five"}), json!("five")),
        // Internally tagged.
        (
            "read_shape",
            json!({"shape": {"kind": "circle", "r": 5.0}}),
            json!({"kind": "circle", "r": 5}),
        ),
        (
            "read_shape",
            json!({"shape": {"kind": "square", "side": 2.0, "rotation": -90.0}}),
            json!({"kind": "square", "side": 2, "rotation": -90}),
        ),
        // Adjacently tagged, the tag first and last (then the content is buffered).
        (
            "read_step",
            json!({"step": {"op": "advance", "by": 4.0}}),
            json!({"op": "advance", "by": 4}),
        ),
        (
            "read_step",
            json!({"step": {"by": 4.0, "op": "advance"}}),
            json!({"op": "advance", "by": 4}),
        ),
        (
            "read_step",
            json!({"step": {"by": {"degrees": -45.0}, "op": "turn"}}),
            json!({"op": "turn", "by": {"degrees": -45}}),
        ),
        // Flattened.
        (
            "read_page",
            json!({"page": {"query": "q", "offset": 10.0, "limit": 3.0}}),
            json!({"query": "q", "offset": 10, "limit": 3}),
        ),
        // A `Value` keeps what was sent, beside a buffered shape that needed the whole float
        // read as an integer.
        (
            "raw",
            json!({"value": {"n": 5.0}, "amount": 7.0}),
            json!({"value": {"n": 5.0}, "amount": 7, "payload": null}),
        ),
        // A read that succeeds as sent is kept: the first variant to take `5.0` is `Any`.
        (
            "raw",
            json!({"value": 5.0, "payload": 5.0}),
            json!({"value": 5.0, "amount": null, "payload": {"any": 5.0}}),
        ),
        (
            "raw",
            json!({"value": 5, "payload": 5}),
            json!({"value": 5, "amount": null, "payload": {"count": 5}}),
        ),
        (
            "raw",
            json!({"value": [1.0, "2"]}),
            json!({"value": [1.0, "2"], "amount": null, "payload": null}),
        ),
        // Map keys.
        (
            "keyed",
            json!({"flags": {"true": 1, "false": 0}}),
            keyed_echo(json!({"flags": {"true": 1, "false": 0}})),
        ),
        (
            "keyed",
            json!({"letters": {"a": 1, "é": 2}}),
            keyed_echo(json!({"letters": {"a": 1, "é": 2}})),
        ),
        (
            "keyed",
            json!({"ids": {"1": 1, "4294967295": 2}}),
            keyed_echo(json!({"ids": {"1": 1, "4294967295": 2}})),
        ),
        (
            "keyed",
            json!({"small": {"0": 1, "255": 2}}),
            keyed_echo(json!({"small": {"0": 1, "255": 2}})),
        ),
        (
            "keyed",
            json!({"signed": {"-9223372036854775808": 1, "7": 2}}),
            keyed_echo(json!({"signed": {"-9223372036854775808": 1, "7": 2}})),
        ),
        (
            "keyed",
            json!({"wide": {"340282366920938463463374607431768211455": 1}}),
            keyed_echo(json!({"wide": {"340282366920938463463374607431768211455": 1}})),
        ),
        (
            "keyed",
            json!({"wide_signed": {"-170141183460469231731687303715884105728": 1}}),
            keyed_echo(json!({"wide_signed": {"-170141183460469231731687303715884105728": 1}})),
        ),
        (
            "keyed",
            json!({"colours": {"red": 1, "green": 2}}),
            keyed_echo(json!({"colours": {"green": 2, "red": 1}})),
        ),
    ]
}

/// `keyed`'s echo with the maps in `sent` and every other map `null`.
fn keyed_echo(sent: Value) -> Value {
    let mut echo = json!({
        "flags": null, "letters": null, "ids": null, "small": null, "signed": null,
        "wide": null, "wide_signed": null, "colours": null,
    });
    for (name, map) in sent.as_object().expect("an object") {
        echo[name] = map.clone();
    }
    echo
}

/// Calls the tool could not read: validation must refuse them, naming the path.
fn refused() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("read_amount", json!({"amount": 5.5}), "/amount"),
        (
            "read_shape",
            json!({"shape": {"kind": "circle", "r": 5.5}}),
            "/shape",
        ),
        (
            "read_step",
            json!({"step": {"by": 4.5, "op": "advance"}}),
            "/step",
        ),
        (
            "read_page",
            json!({"page": {"query": "q", "offset": -1.0}}),
            "/page",
        ),
        ("keyed", json!({"small": {"1.0": 1}}), "/small"),
        ("keyed", json!({"signed": {"+7": 1}}), "/signed"),
        ("keyed", json!({"colours": {"blue": 1}}), "/colours"),
    ]
}

/// Map keys that validation cannot tell from readable ones, with the error of the call: the
/// schema schemars writes for a map says only "any key" (a `bool` or `char` key) or "digits"
/// (an integer key, of any width), so these reach the reader, which refuses them before the
/// tool runs, naming the argument and the key.
fn unreadable_keys() -> Vec<(Value, &'static str)> {
    vec![
        (
            json!({"flags": {"yes": 1}}),
            r#"/flags: the key "yes" is not `true` or `false`"#,
        ),
        (
            json!({"letters": {"ab": 1}}),
            r#"/letters/ab: invalid value: string "ab", expected a character"#,
        ),
        (
            json!({"ids": {"0": 1}}),
            "/ids/0: invalid value: integer `0`, expected a nonzero u32",
        ),
        (
            json!({"small": {"256": 1}}),
            r#"/small: the key "256" is not an integer from 0 to 255"#,
        ),
        (
            json!({"signed": {"9223372036854775808": 1}}),
            r#"/signed: the key "9223372036854775808" is not a 64-bit integer"#,
        ),
        (
            json!({"wide": {"340282366920938463463374607431768211456": 1}}),
            r#"/wide: the key "340282366920938463463374607431768211456" is not a 128-bit unsigned integer"#,
        ),
    ]
}

#[tokio::test]
async fn every_call_validation_accepts_is_read_as_sent() {
    let manager = manager();
    let mut failures = Vec::new();
    for (tool, args, read) in accepted() {
        let sent = format!("{tool} {args}");
        if let Err(err) = manager.validate_arguments(tool, &arguments(args.clone())) {
            failures.push(format!("{sent}: validation refused it: {err}"));
            continue;
        }
        match run(&manager, tool, args).await {
            Ok(echo) if echo == read => {}
            Ok(echo) => failures.push(format!("{sent}: read as {echo}, not {read}")),
            Err(err) => failures.push(format!("{sent}: the tool refused it: {err}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn every_call_the_tool_cannot_read_is_refused_by_validation() {
    let manager = manager();
    let mut failures = Vec::new();
    for (tool, args, path) in refused() {
        let sent = format!("{tool} {args}");
        match manager.validate_arguments(tool, &arguments(args.clone())) {
            Ok(_) => {
                let read = run(&manager, tool, args).await;
                failures.push(format!(
                    "{sent}: validation accepted it; the call: {read:?}"
                ));
            }
            Err(ToolError::InvalidArguments { reason, .. }) => {
                if !reason.starts_with(path) {
                    failures.push(format!("{sent}: refused, but not at {path}: {reason}"));
                }
            }
            Err(other) => failures.push(format!("{sent}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn map_keys_validation_cannot_check_are_refused_by_the_reader_naming_the_key() {
    let manager = manager();
    for (args, reason) in unreadable_keys() {
        manager
            .validate_arguments("keyed", &arguments(args.clone()))
            .unwrap_or_else(|err| panic!("{args}: {err}"));
        let err = run(&manager, "keyed", args.clone())
            .await
            .expect_err(&format!("{args} was read"));
        assert!(
            matches!(&err, ToolError::InvalidArguments { reason: got, .. } if got == reason),
            "{args}: {err:?}"
        );
    }
}
