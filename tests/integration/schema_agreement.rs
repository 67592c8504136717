//! A differential check of argument schemas against serde: for argument types written with
//! the serde attributes users write (renames of every case, aliases, defaults, skips,
//! flattening, every enum tagging, options of options, maps, tuples, arrays, every integer
//! width, `f32`, `NonZeroU32`, `Duration`, `PathBuf`, `Value`, generics, a recursive tree),
//!
//! 1. every value serde writes passes the tool's validation and reads back equal, through
//!    the manager as a tool's argument (`ArgsObject::field` for the schema, as the macros
//!    declare an argument, and `ToolArgs::field` to read it, as they read one);
//! 2. for JSON near the values serde writes, validation and the reader agree: what one
//!    refuses, the other does, and a refusal names the argument's path.
//!
//! Where serde reads more than the schema says (an alias, a second spelling), the call is
//! refused by validation: that is pinned below, each with its reason.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt as _;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::{
    ArgsObject, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolError, lenient,
};

/// What an argument type needs here.
trait Arg: Serialize + DeserializeOwned + JsonSchema + PartialEq + Debug + Send + 'static {}

impl<T: Serialize + DeserializeOwned + JsonSchema + PartialEq + Debug + Send + 'static> Arg for T {}

/// A tool taking one argument `value` of type `T`, declared and read as the macros do; the
/// value a call read is kept for the test.
struct Probe<T> {
    manager: ToolCallManager,
    read: Arc<Mutex<Option<T>>>,
}

impl<T: Arg> Probe<T> {
    fn new() -> Self {
        let schema = ArgsObject::new().field::<T>("value", None).build();
        let read: Arc<Mutex<Option<T>>> = Arc::default();
        let slot = read.clone();
        let tool = FnTool::new(
            "t",
            "Reads one value.",
            schema,
            move |args: ToolArgs<'_>| {
                let read = args.field::<T>("value").map(|value| {
                    *slot.lock().unwrap() = Some(value);
                    ToolCallResult::text("read")
                });
                async move { read }
            },
        );
        let manager = ToolCallManager::new("agreement");
        manager.register(Arc::new(tool)).expect("registers");
        Self { manager, read }
    }

    /// Calls the tool with `sent` as `value`: what it read, or the call's error.
    fn call(&self, sent: &Value) -> Result<T, ToolError> {
        let arguments = ToolArguments::try_from(json!({ "value": sent })).unwrap();
        let request = ToolCallRequest::new("c", "t", arguments);
        self.manager
            .execute_one(&request)
            .now_or_never()
            .expect("a synchronous tool answers at once")?;
        Ok(self
            .read
            .lock()
            .unwrap()
            .take()
            .expect("the tool read a value"))
    }

    /// Property 1 for `value`: serde's form of it is accepted and read back as it was.
    fn round_trips(&self, value: &T) -> Result<(), TestCaseError> {
        let written = serde_json::to_value(value).expect("serializes");
        match self.call(&written) {
            Ok(read) => prop_assert_eq!(&read, value, "read back from {}", written),
            Err(err) => prop_assert!(false, "{written} (serde's own form) refused: {err}"),
        }
        Ok(())
    }

    /// Property 2 for `sent`: the call is accepted exactly when the reader reads `sent`, or
    /// the copy validation repaired (numbers spelled as strings inside a tagged enum are
    /// repaired by validation, not by the reader), as what the reader reads; a refusal names
    /// `/value`. The disagreement, if any.
    fn disagreement(&self, sent: &Value) -> Option<String> {
        let alone = lenient::from_value::<T>(sent);
        let arguments = ToolArguments::try_from(json!({ "value": sent })).unwrap();
        let validated = self.manager.validate_arguments("t", &arguments);
        match (alone, validated, self.call(sent)) {
            (Ok(alone), Ok(_), Ok(called)) if alone == called => None,
            (Ok(alone), Ok(_), Ok(called)) => {
                Some(format!("{sent}: read as {called:?}, not {alone:?}"))
            }
            (Err(_), Ok(repaired), Ok(called)) => {
                let repaired = repaired.get("value").cloned().unwrap_or(Value::Null);
                match lenient::from_value::<T>(&repaired) {
                    Ok(read) if read == called => None,
                    read => Some(format!(
                        "{sent}: accepted as {called:?}, unreadable alone; repaired {repaired}, read {read:?}"
                    )),
                }
            }
            (_, Ok(_), Err(err)) => Some(format!("{sent}: validated, then refused: {err}")),
            (Ok(read), Err(err), _) => {
                Some(format!("{sent}: refused ({err}), read alone {read:?}"))
            }
            (Err(_), Err(err), _) if err.to_string().contains("/value") => None,
            (Err(_), Err(err), _) => Some(format!("{sent}: refused without its path: {err}")),
        }
    }
}

/// Runs property 1 over `values` (few cases: each is a call, and CI has a time budget).
fn check_round_trips<T: Arg>(values: impl Strategy<Value = T>) {
    let probe = Probe::<T>::new();
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(failure) = runner.run(&values, |value| probe.round_trips(&value)) {
        panic!("{}: {failure}", std::any::type_name::<T>());
    }
}

/// Checks property 2 for every one of `sent`.
fn check_near_misses<T: Arg>(sent: &[Value]) {
    let probe = Probe::<T>::new();
    let failures: Vec<String> = sent.iter().filter_map(|s| probe.disagreement(s)).collect();
    assert!(
        failures.is_empty(),
        "{}:\n{}",
        std::any::type_name::<T>(),
        failures.join("\n")
    );
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _é😀-]{0,6}"
}

// ---- Names: `rename_all` of every case, `rename`, `alias` ----

macro_rules! renamed {
    ($($name:ident $case:literal),* $(,)?) => {$(
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = $case, deny_unknown_fields)]
        struct $name {
            first_field: u8,
            #[serde(rename = "Other")]
            second_field_name: Option<String>,
            #[serde(alias = "third")]
            third_x: bool,
        }

        impl $name {
            fn values() -> impl Strategy<Value = Self> {
                (any::<u8>(), proptest::option::of(text()), any::<bool>()).prop_map(
                    |(first_field, second_field_name, third_x)| Self {
                        first_field,
                        second_field_name,
                        third_x,
                    },
                )
            }
        }
    )*};
}

renamed! {
    Lower "lowercase",
    Upper "UPPERCASE",
    Pascal "PascalCase",
    Camel "camelCase",
    Snake "snake_case",
    ScreamingSnake "SCREAMING_SNAKE_CASE",
    Kebab "kebab-case",
    ScreamingKebab "SCREAMING-KEBAB-CASE",
}

#[test]
fn every_rename_case_round_trips() {
    check_round_trips(Lower::values());
    check_round_trips(Upper::values());
    check_round_trips(Pascal::values());
    check_round_trips(Camel::values());
    check_round_trips(Snake::values());
    check_round_trips(ScreamingSnake::values());
    check_round_trips(Kebab::values());
    check_round_trips(ScreamingKebab::values());
}

#[test]
fn renamed_fields_near_misses_agree() {
    check_near_misses::<Camel>(&[
        json!({"firstField": 1, "thirdX": true}),
        json!({"firstField": 1, "Other": "o", "thirdX": false}),
        json!({"firstField": 1, "Other": null, "thirdX": false}),
        json!({"firstField": 256, "thirdX": true}),
        json!({"firstField": -1, "thirdX": true}),
        json!({"firstField": "7", "thirdX": "true"}),
        json!({"first_field": 1, "thirdX": true}),
        json!({"firstField": 1, "thirdX": true, "extra": 1}),
        json!({"firstField": 1}),
        json!({"firstField": 1, "thirdX": 1}),
    ]);
    check_near_misses::<ScreamingKebab>(&[
        json!({"FIRST-FIELD": 1, "THIRD-X": true}),
        json!({"FIRST_FIELD": 1, "THIRD-X": true}),
        json!({"FIRST-FIELD": 1.0, "THIRD-X": true}),
        json!({"FIRST-FIELD": 1.5, "THIRD-X": true}),
    ]);
}

// ---- Defaults, skips, `skip_serializing_if`, flattening ----

fn seven() -> u32 {
    7
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Fields {
    #[serde(default)]
    count: u32,
    #[serde(default = "seven")]
    page: u32,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip)]
    cache: u8,
    #[serde(flatten)]
    window: Window,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Window {
    offset: i64,
    limit: Option<u16>,
}

impl Fields {
    fn values() -> impl Strategy<Value = Self> {
        (
            any::<u32>(),
            any::<u32>(),
            proptest::collection::vec(text(), 0..3),
            proptest::option::of(text()),
            any::<i64>(),
            proptest::option::of(any::<u16>()),
        )
            .prop_map(|(count, page, tags, note, offset, limit)| Self {
                count,
                page,
                tags,
                note,
                cache: 0,
                window: Window { offset, limit },
            })
    }
}

/// Every field defaulted from the struct's default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
struct Settings {
    level: i8,
    name: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            level: 3,
            name: "default".into(),
        }
    }
}

/// A map flattened beside a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Labelled {
    label: String,
    #[serde(flatten)]
    extra: BTreeMap<String, u32>,
}

#[test]
fn defaulted_skipped_and_flattened_fields_round_trip() {
    check_round_trips(Fields::values());
    check_round_trips((any::<i8>(), text()).prop_map(|(level, name)| Settings { level, name }));
    check_round_trips(
        (
            "[a-z]{0,4}",
            proptest::collection::btree_map("[a-z]{1,4}", any::<u32>(), 0..3),
        )
            .prop_map(|(label, mut extra)| {
                extra.remove("label");
                Labelled { label, extra }
            }),
    );
}

#[test]
fn defaulted_skipped_and_flattened_near_misses_agree() {
    check_near_misses::<Fields>(&[
        json!({"offset": 1}),
        json!({"offset": "1", "limit": "2"}),
        json!({"offset": 1, "limit": null, "note": null}),
        json!({"offset": 1, "limit": 65536}),
        json!({"offset": 1, "count": -1}),
        json!({"offset": 1, "tags": ["a", 1]}),
        json!({"offset": 1.5}),
        json!({"count": 1}),
        json!({}),
        json!([]),
    ]);
    check_near_misses::<Settings>(&[
        json!({}),
        json!({"level": 128}),
        json!({"level": -128, "name": "n"}),
        json!({"name": 1}),
    ]);
    check_near_misses::<Labelled>(&[
        json!({"label": "l"}),
        json!({"label": "l", "a": 1, "b": "2"}),
        json!({"label": "l", "a": -1}),
        json!({"label": "l", "a": "x"}),
        json!({"a": 1}),
    ]);
}

// ---- Enums: externally, internally, adjacently tagged, untagged ----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum External {
    Stop,
    Wait(u16),
    Move { dx: i32, dy: i32 },
    Pair(u8, String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
enum Internal {
    Stop,
    Circle { radius: f64 },
    Boxed(Window),
    Keyed(BTreeMap<String, u8>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", content = "by", rename_all = "UPPERCASE")]
enum Adjacent {
    Stop,
    Advance(u32),
    Turn { degrees: i16 },
    Pair(bool, char),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Nothing,
    Small(u8),
    Many(Vec<i8>),
    Named { name: String },
    Text(String),
}

fn external() -> impl Strategy<Value = External> {
    prop_oneof![
        Just(External::Stop),
        any::<u16>().prop_map(External::Wait),
        (any::<i32>(), any::<i32>()).prop_map(|(dx, dy)| External::Move { dx, dy }),
        (any::<u8>(), text()).prop_map(|(n, s)| External::Pair(n, s)),
    ]
}

fn internal() -> impl Strategy<Value = Internal> {
    prop_oneof![
        Just(Internal::Stop),
        (-1e9f64..1e9).prop_map(|radius| Internal::Circle { radius }),
        (any::<i64>(), proptest::option::of(any::<u16>()))
            .prop_map(|(offset, limit)| Internal::Boxed(Window { offset, limit })),
        proptest::collection::btree_map("[a-j]{1,3}", any::<u8>(), 0..3).prop_map(|mut map| {
            map.remove("kind");
            Internal::Keyed(map)
        }),
    ]
}

fn adjacent() -> impl Strategy<Value = Adjacent> {
    prop_oneof![
        Just(Adjacent::Stop),
        any::<u32>().prop_map(Adjacent::Advance),
        any::<i16>().prop_map(|degrees| Adjacent::Turn { degrees }),
        (any::<bool>(), any::<char>()).prop_map(|(b, c)| Adjacent::Pair(b, c)),
    ]
}

fn untagged() -> impl Strategy<Value = Untagged> {
    prop_oneof![
        Just(Untagged::Nothing),
        any::<u8>().prop_map(Untagged::Small),
        proptest::collection::vec(any::<i8>(), 0..4).prop_map(Untagged::Many),
        text().prop_map(|name| Untagged::Named { name }),
        text().prop_map(Untagged::Text),
    ]
}

#[test]
fn every_enum_tagging_round_trips() {
    check_round_trips(external());
    check_round_trips(internal());
    check_round_trips(adjacent());
    check_round_trips(untagged());
    check_round_trips(proptest::option::of(external()));
}

#[test]
fn enum_near_misses_agree() {
    check_near_misses::<External>(&[
        json!("stop"),
        json!("Stop"),
        json!("wait"),
        json!({"wait": 70000}),
        json!({"wait": "7"}),
        json!({"move": {"dx": 1}}),
        json!({"move": {"dx": 1, "dy": 2}, "wait": 1}),
        json!({"pair": [1]}),
        json!({"pair": [1, "a", 2]}),
        json!({"other": 1}),
    ]);
    check_near_misses::<Internal>(&[
        json!({"kind": "stop"}),
        json!({"kind": "circle", "radius": "2.5"}),
        json!({"kind": "circle"}),
        json!({"kind": "boxed", "offset": 1}),
        json!({"kind": "boxed", "offset": 1, "limit": -1}),
        json!({"kind": "keyed", "a": 1}),
        json!({"kind": "keyed", "a": 256}),
        json!({"kind": "square"}),
        json!({"radius": 1.0}),
    ]);
    check_near_misses::<Adjacent>(&[
        json!({"op": "STOP"}),
        json!({"op": "ADVANCE", "by": 3}),
        json!({"by": 3, "op": "ADVANCE"}),
        json!({"op": "ADVANCE", "by": -3}),
        json!({"op": "ADVANCE"}),
        json!({"op": "TURN", "by": {"degrees": 40000}}),
        json!({"op": "PAIR", "by": [true, "ab"]}),
        json!({"op": "PAIR", "by": [true, "a"]}),
        json!({"op": "advance", "by": 3}),
    ]);
    check_near_misses::<Untagged>(&[
        json!(null),
        json!(7),
        json!(300),
        json!(-3),
        json!([1, -1]),
        json!([1, 200]),
        json!({"name": "n"}),
        json!({"name": 1}),
        json!(true),
    ]);
}

// ---- Containers and scalars ----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Tagged<T> {
    item: T,
    items: Vec<T>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
    next: Option<Box<Tree>>,
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = text().prop_map(|label| Tree {
        label,
        children: Vec::new(),
        next: None,
    });
    leaf.prop_recursive(3, 12, 3, |inner| {
        (
            text(),
            proptest::collection::vec(inner.clone(), 0..3),
            proptest::option::of(inner),
        )
            .prop_map(|(label, children, next)| Tree {
                label,
                children,
                next: next.map(Box::new),
            })
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    scalar.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            proptest::collection::vec(("[a-c]{1,2}", inner), 0..3)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

#[test]
fn containers_round_trip() {
    check_round_trips(proptest::collection::vec(any::<u16>(), 0..4));
    check_round_trips(any::<u8>().prop_map(Box::new));
    check_round_trips(proptest::collection::hash_map(text(), any::<i32>(), 0..3));
    check_round_trips(proptest::collection::btree_map(
        text(),
        proptest::option::of(any::<u8>()),
        0..3,
    ));
    check_round_trips((any::<u8>(), text(), any::<bool>()));
    check_round_trips(any::<[i16; 3]>());
    check_round_trips(
        (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..3))
            .prop_map(|(item, items)| Tagged { item, items }),
    );
    check_round_trips(
        (text(), proptest::collection::vec(text(), 0..3))
            .prop_map(|(item, items)| Tagged { item, items }),
    );
    check_round_trips(tree());
    check_round_trips(json_value());
    // `Some(None)` is written as `null`, which serde reads as `None`: serde's own loss.
    check_round_trips(proptest::option::of(any::<u8>().prop_map(Some)));
}

#[test]
fn scalars_round_trip() {
    check_round_trips(any::<u8>());
    check_round_trips(any::<u16>());
    check_round_trips(any::<u32>());
    check_round_trips(any::<u64>());
    check_round_trips(any::<usize>());
    check_round_trips(any::<i8>());
    check_round_trips(any::<i16>());
    check_round_trips(any::<i32>());
    check_round_trips(any::<i64>());
    check_round_trips(any::<isize>());
    // Within 64 bits: `serde_json::Value` holds no wider integer.
    check_round_trips(any::<i64>().prop_map(i128::from));
    check_round_trips(any::<u64>().prop_map(u128::from));
    check_round_trips(any::<f64>().prop_filter("finite", |f| f.is_finite()));
    check_round_trips(any::<char>());
    check_round_trips(any::<bool>());
    check_round_trips(text());
    check_round_trips((1u32..).prop_map(|n| NonZeroU32::new(n).unwrap()));
    check_round_trips(
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(secs, nanos)| Duration::new(secs, nanos)),
    );
    check_round_trips("[a-z/.]{0,8}".prop_map(PathBuf::from));
}

#[test]
fn scalar_near_misses_agree() {
    check_near_misses::<u8>(&[json!(255), json!(256), json!(-1), json!(2.0), json!(2.5)]);
    check_near_misses::<i64>(&[
        json!(i64::MIN),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(-9.3e18),
    ]);
    check_near_misses::<u64>(&[json!(u64::MAX), json!(1.8e19), json!(2e19), json!(-1)]);
    check_near_misses::<NonZeroU32>(&[json!(0), json!(1), json!(4294967296u64)]);
    check_near_misses::<char>(&[json!("a"), json!("😀"), json!(""), json!("ab"), json!(1)]);
    check_near_misses::<[u8; 3]>(&[json!([1, 2, 3]), json!([1, 2]), json!([1, 2, 3, 4])]);
    check_near_misses::<(u8, String)>(&[json!([1, "a"]), json!(["a", 1]), json!([1])]);
    check_near_misses::<Duration>(&[
        json!({"secs": 1, "nanos": 5}),
        json!({"secs": 1, "nanos": 2_000_000_000u32}),
        json!({"secs": 1}),
        json!({"secs": -1, "nanos": 0}),
    ]);
    check_near_misses::<PathBuf>(&[json!("a/b"), json!(""), json!(1)]);
    check_near_misses::<HashMap<String, u8>>(&[json!({}), json!({"a": 1}), json!({"a": 300})]);
}

/// A `null` entry of a map is no absent argument, as a `null` for an optional property is:
/// the entry is refused at its path, not dropped (the tool read `{}` for `{"a": null}`).
#[test]
fn a_null_entry_of_a_map_is_refused_not_dropped() {
    fn refused_at<T: Arg>(sent: Value, at: &str) {
        let probe = Probe::<T>::new();
        let err = probe.call(&sent).unwrap_err();
        assert_eq!(
            err.kind(),
            toolsmith::ToolErrorKind::InvalidArguments,
            "{err}"
        );
        assert!(err.to_string().contains(at), "{sent}: {err}");
    }
    refused_at::<HashMap<String, u8>>(json!({"a": null}), "/value/a");
    refused_at::<HashMap<String, u8>>(json!({"a": 1, "b": null}), "/value/b");
    refused_at::<BTreeMap<String, Vec<u8>>>(json!({"a": null}), "/value/a");
    // A map of optional values takes `null` as it is.
    let probe = Probe::<HashMap<String, Option<u8>>>::new();
    let read = probe.call(&json!({"a": null})).unwrap();
    assert_eq!(read, HashMap::from([("a".to_owned(), None)]));
}

/// Spellings serde reads that the schema does not offer: validation refuses them, naming the
/// argument, and the model is shown the one spelling the schema has. None of these is the only
/// way to send its value.
#[test]
fn spellings_serde_reads_beyond_the_schema_are_refused_at_their_path() {
    fn refused<T: Arg>(sent: Value) {
        let probe = Probe::<T>::new();
        assert!(
            lenient::from_value::<T>(&sent).is_ok(),
            "serde reads {sent}"
        );
        let err = probe.call(&sent).expect_err(&sent.to_string());
        assert!(err.to_string().contains("/value"), "{sent}: {err}");
    }
    // An alias: schemars lists the field's one name.
    refused::<Camel>(json!({"firstField": 1, "third": true}));
    // A unit variant written as a map with `null`.
    refused::<External>(json!({"stop": null}));
    // A `Duration` as `[secs, nanos]`.
    refused::<Duration>(json!([1, 2]));
}

/// What the schema cannot say, the reader refuses, naming the argument: a `Duration` whose
/// nanoseconds carry its seconds past `u64::MAX` (schemars' schema bounds each field alone).
#[test]
fn a_duration_past_its_range_is_refused_by_the_reader_at_its_path() {
    let probe = Probe::<Duration>::new();
    let sent = json!({"secs": u64::MAX, "nanos": 1_999_999_999u32});
    let arguments = ToolArguments::try_from(json!({ "value": sent })).unwrap();
    assert!(probe.manager.validate_arguments("t", &arguments).is_ok());
    let err = probe.call(&sent).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 't': /value: overflow deserializing Duration"
    );
}

/// An `f32` beyond its range is refused at its path by validation (whose compiled schema
/// has the range; the declared one does not spell it, two numbers of 39 digits in every `f32`
/// a model reads), as the reader refuses it, rather than read infinity.
#[test]
fn an_f32_past_its_range_is_refused_at_its_path() {
    let probe = Probe::<f32>::new();
    for sent in [json!(1e39), json!(-1e39)] {
        let arguments = ToolArguments::try_from(json!({ "value": sent })).unwrap();
        let refused = probe
            .manager
            .validate_arguments("t", &arguments)
            .unwrap_err();
        assert!(refused.to_string().contains("/value"), "{refused}");
        let err = probe.call(&sent).unwrap_err();
        assert_eq!(
            err.kind(),
            toolsmith::ToolErrorKind::InvalidArguments,
            "{err}"
        );
        assert!(err.to_string().contains("/value"), "{err}");
    }
    assert_eq!(probe.call(&json!(3.4028235e38)).unwrap(), f32::MAX);
    check_near_misses::<f32>(&[json!(1e39), json!(-1e39), json!(3.4028235e38), json!(1.5)]);
}
