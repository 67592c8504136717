//! Arguments against schemas, differential: arbitrary JSON arguments for tools of varied
//! schemas (`#[tool_fn]` with bounded integers, floats, enums, `Option`, `Vec`, maps and
//! nested structs; `#[tool_fn]` with serde enums written as `oneOf` / `anyOf` (externally,
//! internally and un-tagged), schemars' `format`, `pattern` and length attributes and an
//! `Ipv4Addr`; a `#[derive(ToolArgs)]` command enum behind a command group; a
//! `#[derive(ToolArgs)]` struct with a nested struct, `Option<Vec<..>>` and a map of bounded
//! values, read by an `FnTool`; `FnTool`s with hand-written schemas, one of them of string
//! `format`s, a `pattern`, lengths and `uniqueItems`) run through
//! `ToolCallManager::execute_one`, and each judged by a reference validator (`jsonschema`,
//! compiled once from the tool's own schema, asserting formats as core does: see
//! `reference_options`). The
//! arguments are built from the fuzzer's bytes: members and edits (a value set or removed
//! at a path) over nothing or over arguments the tool runs on.
//!
//! Asserts: arguments the reference accepts as sent run the tool; a tool that runs got
//! arguments the reference accepts, and they differ from those sent only by Toolsmith's
//! documented leniencies (see `lenient_only`); `validate_arguments` accepts exactly the calls
//! that run; a call that does not run fails with `InvalidArguments` naming the tool.

#![no_main]

use std::collections::{BTreeMap, HashMap};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use arbitrary::Arbitrary;
use async_trait::async_trait;
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Number, Value, json};
use toolsmith::{
    Args, ArgsSchema, FnTool, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
    ToolCallResult, ToolCommands, ToolError, ToolImpl, scheme, tool_fn,
};

/// How many times a tool body ran (for the current input).
static RAN: AtomicUsize = AtomicUsize::new(0);
/// What the `FnTool` that ran received.
static RECEIVED: Mutex<Option<Value>> = Mutex::new(None);

/// Adds, bounded by the integer types' ranges.
#[tool_fn]
fn bounded(
    /// A small count.
    count: u8,
    /// A signed step.
    delta: i16,
    /// A ratio.
    ratio: f32,
    /// A label, if any.
    label: Option<String>,
    /// A flag.
    flag: bool,
) -> String {
    RAN.fetch_add(1, Ordering::SeqCst);
    format!("{count} {delta} {ratio} {label:?} {flag}")
}

/// A mode.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    /// Quickly.
    Fast,
    /// Slowly.
    Slow,
}

/// A point.
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// A nested argument.
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
struct Inner {
    depth: u16,
    name: Option<String>,
    points: Vec<Point>,
}

/// Takes every shape.
#[tool_fn]
fn shapes(
    /// How.
    mode: Mode,
    /// Tags.
    tags: Vec<String>,
    /// Weights by name.
    weights: HashMap<String, f64>,
    /// Nested.
    inner: Inner,
    /// A limit.
    limit: Option<u32>,
    /// Ordered counts.
    counts: Option<BTreeMap<String, u64>>,
) -> usize {
    RAN.fetch_add(1, Ordering::SeqCst);
    format!("{mode:?} {tags:?} {weights:?} {inner:?} {limit:?} {counts:?}").len()
}

/// The commands of a playlist.
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(toolsmith::ToolArgs, Debug)]
enum PlaylistCommand {
    /// Add a song.
    Add {
        /// Its title.
        title: String,
        /// Where, from 0.
        position: Option<u8>,
    },
    /// Remove a song.
    Remove {
        /// Its position.
        position: usize,
    },
    /// Empty the list.
    Clear,
}

/// A command group read by the derived enum.
struct Playlist;

#[async_trait]
impl ToolImpl for Playlist {
    fn definition(&self) -> Tool {
        Tool::group("playlist", "Songs.", PlaylistCommand::command_definitions())
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let command: PlaylistCommand = ToolArgs::new("playlist", &arguments).parse()?;
        RAN.fetch_add(1, Ordering::SeqCst);
        Ok(ToolCallResult::text(format!("{command:?}")))
    }
}

/// A shape, externally tagged (schemars writes a `oneOf`).
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Shape {
    /// Round.
    Circle { r: f64 },
    /// Four sides.
    Square(u8),
    /// Nothing.
    Empty,
}

/// An event, internally tagged by `kind` (a `oneOf` of objects with a `const` each).
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Event {
    /// A click.
    Click { x: i32, y: Option<i32> },
    /// A key.
    Key { code: u16 },
}

/// An identifier, untagged (an `anyOf`).
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Id {
    Number(u32),
    Text(String),
}

/// A contact whose strings carry schemars' validation attributes.
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
struct Contact {
    #[schemars(email)]
    mail: String,
    #[schemars(url)]
    site: Option<String>,
    #[schemars(regex(pattern = r"^[A-Z]{2}-[0-9]{1,4}$"))]
    code: String,
    #[schemars(length(min = 1, max = 4))]
    nick: String,
    #[schemars(length(min = 1, max = 3))]
    aliases: Option<Vec<String>>,
}

/// Takes serde's enums and validated strings.
#[tool_fn]
fn variants(
    /// A shape.
    shape: Shape,
    /// An event.
    event: Option<Event>,
    /// An id.
    id: Id,
    /// Whom.
    contact: Contact,
    /// Where.
    addr: Option<Ipv4Addr>,
    /// Levels.
    levels: Option<Vec<u8>>,
    /// Bounded values by name.
    caps: BTreeMap<String, i8>,
) -> usize {
    RAN.fetch_add(1, Ordering::SeqCst);
    format!("{shape:?} {event:?} {id:?} {contact:?} {addr:?} {levels:?} {caps:?}").len()
}

fn seven() -> i32 {
    7
}

fn hello() -> String {
    "hello".to_owned()
}

/// Thirteen parameters, four with defaults: past twelve, the generated code reads each
/// parameter alone rather than all together (`ReadFields`), so both of the macro's ways of
/// reading run here. It records what it read, to be compared with what validation passed.
#[tool_fn]
#[allow(clippy::too_many_arguments)]
fn wide(
    /// Steps.
    steps: u8,
    /// An offset.
    #[arg(default = "seven")]
    offset: i32,
    /// A note.
    note: Option<String>,
    /// Whether to say more.
    #[arg(default)]
    verbose: bool,
    /// Ports.
    ports: Vec<u16>,
    /// A weight.
    weight: f64,
    /// A greeting.
    #[arg(default = "hello")]
    greeting: String,
    /// A cap.
    cap: Option<i64>,
    /// A total.
    total: i64,
    /// Words.
    #[arg(default)]
    words: Vec<String>,
    /// A budget.
    budget: Option<u64>,
    /// A small signed number.
    tilt: i8,
    /// A motto.
    motto: String,
) -> String {
    RAN.fetch_add(1, Ordering::SeqCst);
    *RECEIVED.lock().unwrap() = Some(json!({
        "steps": steps, "offset": offset, "note": note, "verbose": verbose, "ports": ports,
        "weight": weight, "greeting": greeting, "cap": cap, "total": total, "words": words,
        "budget": budget, "tilt": tilt, "motto": motto,
    }));
    "ok".to_owned()
}

/// Four parameters, two with defaults, read together; `async`. It records what it read.
#[tool_fn]
async fn narrow(
    /// Steps.
    steps: u8,
    /// An offset.
    #[arg(default = "seven")]
    offset: i32,
    /// Words.
    #[arg(default)]
    words: Vec<String>,
    /// A flag, if any.
    flag: Option<bool>,
) -> String {
    RAN.fetch_add(1, Ordering::SeqCst);
    *RECEIVED.lock().unwrap() = Some(json!({
        "steps": steps, "offset": offset, "words": words, "flag": flag,
    }));
    "ok".to_owned()
}

/// The parameters of `wide` and `narrow`, each with what the function reads when the
/// arguments leave it out: its default, or `null` (`None`) for an `Option`; a required one
/// has none.
fn parameters(tool: &str) -> &'static [(&'static str, Option<fn() -> Value>)] {
    const NONE: Option<fn() -> Value> = Some(|| Value::Null);
    match tool {
        "wide" => &[
            ("steps", None),
            ("offset", Some(|| json!(7))),
            ("note", NONE),
            ("verbose", Some(|| json!(false))),
            ("ports", None),
            ("weight", None),
            ("greeting", Some(|| json!("hello"))),
            ("cap", NONE),
            ("total", None),
            ("words", Some(|| json!([]))),
            ("budget", NONE),
            ("tilt", None),
            ("motto", None),
        ],
        "narrow" => &[
            ("steps", None),
            ("offset", Some(|| json!(7))),
            ("words", Some(|| json!([]))),
            ("flag", NONE),
        ],
        _ => &[],
    }
}

/// Whether two values are the same JSON, numbers compared by value (a whole number sent for
/// an `f64` is read as a float, a whole float sent for an integer as an integer).
fn same_numbers(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_numbers(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_numbers(v, w)))
        }
        _ => a == b,
    }
}

/// An item of an order: a nested struct of a derived one.
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
struct Item {
    sku: String,
    sizes: Option<Vec<u16>>,
    at: Option<Point>,
}

/// An order, read whole by a `#[derive(ToolArgs)]` struct.
// Read only through `Debug`, into what the tool answers.
#[allow(dead_code)]
#[derive(toolsmith::ToolArgs, Debug)]
#[serde(rename_all = "camelCase")]
struct Order {
    /// What.
    item: Item,
    /// How many of each, by name.
    quantities: HashMap<String, u8>,
    /// Notes, if any.
    extra_notes: Option<Vec<String>>,
    /// How urgent.
    #[arg(default)]
    priority: i8,
    /// The shape, if any.
    shape: Option<Shape>,
}

fn formats_schema() -> Value {
    // Built as a user would, with `scheme`; `format`s known to jsonschema and one it does not
    // know.
    scheme::object()
        .required("when", scheme::string().format("date-time"))
        .optional("mail", scheme::string().format("email"))
        .optional("link", scheme::string().format("uri"))
        .optional("day", scheme::string().format("date"))
        .optional("ip", scheme::string().format("ipv4"))
        .optional("uid", scheme::string().format("uuid"))
        .optional("odd", scheme::string().format("no-such-format"))
        .optional(
            "code",
            scheme::string()
                .pattern("^[A-Z]{2}-[0-9]+$")
                .min_len(3)
                .max_len(8),
        )
        .optional(
            "tags",
            scheme::array(scheme::integer().minimum(0).maximum(9))
                .max_items(4)
                .keyword("uniqueItems", true),
        )
        .build()
}

fn hand_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 100},
            "scale": {"type": "number", "exclusiveMinimum": 0, "maximum": 10.5},
            "kind": {"enum": ["a", "b", 3, null]},
            "items": {"type": "array", "items": {"type": "string"}, "maxItems": 3, "uniqueItems": true},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}},
                     "required": ["deep"], "additionalProperties": false},
            "name": {"type": ["string", "null"], "minLength": 1, "maxLength": 5},
            "any": {}
        },
        "required": ["size"],
        "additionalProperties": false
    })
}

const TOOLS: [&str; 9] = [
    "bounded", "shapes", "playlist", "hand", "variants", "order", "formats", "wide", "narrow",
];

/// Every property name the tools know, so that arbitrary objects hit them often.
const KEYS: &[&str] = &[
    "count",
    "delta",
    "ratio",
    "label",
    "flag",
    "mode",
    "tags",
    "weights",
    "inner",
    "limit",
    "counts",
    "depth",
    "name",
    "points",
    "x",
    "y",
    "command",
    "title",
    "position",
    "size",
    "scale",
    "kind",
    "items",
    "opts",
    "deep",
    "any",
    "shape",
    "circle",
    "square",
    "empty",
    "r",
    "event",
    "code",
    "id",
    "contact",
    "mail",
    "site",
    "nick",
    "aliases",
    "addr",
    "levels",
    "caps",
    "item",
    "quantities",
    "extraNotes",
    "priority",
    "sku",
    "sizes",
    "at",
    "when",
    "link",
    "day",
    "ip",
    "uid",
    "odd",
    "steps",
    "offset",
    "note",
    "verbose",
    "ports",
    "weight",
    "greeting",
    "cap",
    "total",
    "words",
    "budget",
    "tilt",
    "motto",
];
const WORDS: &[&str] = &[
    "fast",
    "slow",
    "add",
    "remove",
    "clear",
    "a",
    "b",
    "",
    " 7 ",
    "true",
    "FALSE",
    "1e3",
    "5.0",
    "-1",
    "+4",
    "NaN",
    "inf",
    "256",
    "18446744073709551616",
    "0x10",
    "circle",
    "square",
    "empty",
    "click",
    "key",
    "2024-02-29T12:00:00Z",
    "2023-02-29T25:61:00+01:00",
    "2024-01-01",
    "a@b.co",
    "not an email",
    "https://example.com/a?b#c",
    "//no-scheme",
    "1.2.3.4",
    "01.2.3.4",
    "256.1.1.1",
    "123e4567-e89b-12d3-a456-426614174000",
    "AB-12",
    "ab-12",
    "AB-12\n",
];

/// A JSON value the fuzzer builds structurally.
#[derive(Debug, Arbitrary)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Small(i8),
    Unsigned(u64),
    Float(f64),
    Word(u8),
    Text(String),
    NumberText(i32),
    Array(Vec<Json>),
    Object(Vec<(Key, Json)>),
}

#[derive(Debug, Arbitrary)]
enum Key {
    Known(u8),
    Other(String),
}

impl Key {
    fn name(&self) -> String {
        match self {
            Key::Known(i) => KEYS[usize::from(*i) % KEYS.len()].to_owned(),
            Key::Other(name) => name.clone(),
        }
    }
}

impl Json {
    fn value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => Value::from(*i),
            Json::Small(i) => Value::from(*i),
            Json::Unsigned(u) => Value::from(*u),
            Json::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Word(i) => Value::from(WORDS[usize::from(*i) % WORDS.len()]),
            Json::Text(text) => Value::from(text.as_str()),
            Json::NumberText(i) => Value::from(i.to_string()),
            Json::Array(items) => Value::Array(items.iter().map(Json::value).collect()),
            Json::Object(members) => Value::Object(object(members)),
        }
    }
}

fn object(members: &[(Key, Json)]) -> Map<String, Value> {
    members
        .iter()
        .map(|(key, value)| (key.name(), value.value()))
        .collect()
}

/// A change to a tool's valid example arguments: a value set, or removed, at a path.
#[derive(Debug, Arbitrary)]
struct Edit {
    path: Vec<Step>,
    set: Option<Json>,
}

/// One step of a path to edit (see `toolsmith_fuzz::apply`).
type Step = toolsmith_fuzz::Step<Key>;

#[derive(Debug, Arbitrary)]
struct Input {
    tool: u8,
    /// Whether to start from the tool's valid example arguments (else from nothing).
    example: bool,
    arguments: Vec<(Key, Json)>,
    edits: Vec<Edit>,
}

/// Arguments each tool runs on, for edits to start from: arbitrary objects rarely hold
/// every required argument of a nested schema.
fn example(name: &str) -> Value {
    match name {
        "bounded" => json!({"count": 3, "delta": -2, "ratio": 0.5, "flag": true}),
        "shapes" => json!({"mode": "fast", "tags": ["a"], "weights": {"w": 1.5},
            "inner": {"depth": 1, "points": [{"x": 1, "y": 2}]}, "counts": {"c": 1}}),
        "playlist" => json!({"command": "add", "title": "t", "position": 1}),
        "variants" => json!({"shape": {"circle": {"r": 1.5}}, "event": {"kind": "click", "x": 1},
            "id": 7, "contact": {"mail": "a@b.co", "site": "https://example.com", "code": "AB-12",
            "nick": "al", "aliases": ["x"]}, "addr": "1.2.3.4", "levels": [1, 2], "caps": {"c": -1}}),
        "order" => json!({"item": {"sku": "s", "sizes": [1], "at": {"x": 1, "y": 2}},
            "quantities": {"q": 2}, "extraNotes": ["n"], "priority": 1, "shape": "empty"}),
        "formats" => json!({"when": "2024-02-29T12:00:00Z", "mail": "a@b.co",
            "link": "https://example.com", "day": "2024-01-01", "ip": "1.2.3.4",
            "uid": "123e4567-e89b-12d3-a456-426614174000", "odd": "?", "code": "AB-12",
            "tags": [1, 2]}),
        "wide" => json!({"steps": 3, "note": "n", "ports": [80], "weight": 0.5, "cap": -1,
            "total": 9, "budget": 1, "tilt": -3, "motto": "m"}),
        "narrow" => json!({"steps": 3, "words": ["w"]}),
        _ => json!({"size": 5, "scale": 1.5, "kind": "a", "items": ["x"], "opts": {"deep": true}}),
    }
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    manager: ToolCallManager,
    /// Per tool: the reference validator, or per command of a group.
    reference: HashMap<&'static str, Reference>,
}

enum Reference {
    Single(jsonschema::Validator),
    Commands(HashMap<String, jsonschema::Validator>),
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let manager = ToolCallManager::new("fuzz");
    manager.register(Arc::new(Bounded)).unwrap();
    manager.register(Arc::new(Shapes)).unwrap();
    manager.register(Arc::new(Playlist)).unwrap();
    manager.register(Arc::new(Variants)).unwrap();
    manager.register(Arc::new(Wide)).unwrap();
    manager.register(Arc::new(Narrow)).unwrap();
    for (name, schema) in [("hand", hand_schema()), ("formats", formats_schema())] {
        manager
            .register(Arc::new(FnTool::new(
                name,
                "A hand-written schema.",
                Args::new(schema),
                |args: ToolArgs<'_>| {
                    RAN.fetch_add(1, Ordering::SeqCst);
                    *RECEIVED.lock().unwrap() = Some(args.arguments().as_value().clone());
                    async move { Ok(ToolCallResult::text("ok")) }
                },
            )))
            .unwrap();
    }
    manager
        .register(Arc::new(FnTool::new(
            "order",
            "An order, read by a derived struct.",
            Order::args_schema(),
            |args: ToolArgs<'_>| {
                let order = args.parse::<Order>();
                if order.is_ok() {
                    RAN.fetch_add(1, Ordering::SeqCst);
                    *RECEIVED.lock().unwrap() = Some(args.arguments().as_value().clone());
                }
                async move { order.map(|order| ToolCallResult::text(format!("{order:?}"))) }
            },
        )))
        .unwrap();
    let mut reference = HashMap::new();
    for name in TOOLS {
        let validator = match manager.get_def(name).expect("registered") {
            Tool::SingleCommand(definition) => Reference::Single(
                reference_options()
                    .build(&with_f32_range(definition.arguments.schema().clone()))
                    .expect("a schema"),
            ),
            Tool::MultiCommands(_, commands) => Reference::Commands(
                commands
                    .iter()
                    .map(|command| {
                        // The group's documented contract: `command` names the command, and
                        // the rest is checked against that command's schema.
                        let mut schema = command.arguments.schema().clone();
                        schema["properties"]["command"] = json!({"const": command.name});
                        match schema.get_mut("required").and_then(Value::as_array_mut) {
                            Some(required) => required.push(json!("command")),
                            None => schema["required"] = json!(["command"]),
                        }
                        let schema = with_f32_range(schema);
                        let validator = reference_options().build(&schema).expect("a schema");
                        (command.name.clone(), validator)
                    })
                    .collect(),
            ),
        };
        reference.insert(name, validator);
    }
    Fixture {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap(),
        manager,
        reference,
    }
});

/// `schema` with the range core's validation gives every `f32` (`format: "float"`), which
/// the declared schema does not spell (README, "Validation"): a number that would round to an
/// infinite `f32` is refused. Written here apart from core's pass, as the oracle it checks.
fn with_f32_range(mut schema: Value) -> Value {
    // 2^128 - 2^103: from this magnitude on, a number rounds to an infinite `f32`.
    const LIMIT: f64 = 340_282_356_779_733_661_637_539_395_458_142_568_448.0;
    fn walk(value: &mut Value) {
        match value {
            Value::Object(object) => {
                let number = object.get("type").is_some_and(|ty| {
                    ty == "number"
                        || ty
                            .as_array()
                            .is_some_and(|tys| tys.contains(&json!("number")))
                });
                if number && object.get("format") == Some(&json!("float")) {
                    if !object.contains_key("minimum") && !object.contains_key("exclusiveMinimum") {
                        object.insert("exclusiveMinimum".into(), json!(-LIMIT));
                    }
                    if !object.contains_key("maximum") && !object.contains_key("exclusiveMaximum") {
                        object.insert("exclusiveMaximum".into(), json!(LIMIT));
                    }
                }
                for (key, inner) in object.iter_mut() {
                    if !["const", "enum", "default", "examples"].contains(&key.as_str()) {
                        walk(inner);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}

/// The reference's options: `format` asserted where jsonschema knows the format, and passed
/// over where it does not, as core's validator does (`tool-core/src/schema/validation.rs`).
/// Draft 2020-12 makes `format` an annotation, jsonschema's default; core's choice is not
/// written in its docs (session 29 found it: see docs/FUZZING.md), so this follows the code.
fn reference_options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true)
}

impl Reference {
    fn accepts(&self, arguments: &Value) -> bool {
        match self {
            Reference::Single(validator) => validator.is_valid(arguments),
            Reference::Commands(commands) => arguments
                .get("command")
                .and_then(Value::as_str)
                .and_then(|name| commands.get(name))
                .is_some_and(|validator| validator.is_valid(arguments)),
        }
    }
}

/// Whether `received` differs from `sent` only as Toolsmith documents it may (README,
/// `schema/validation.rs`): a number or boolean spelled as a string (trimmed; booleans in
/// any case) read as that number or boolean, and an object member sent as `null` left out
/// (an optional argument).
fn lenient_only(sent: &Value, received: &Value) -> bool {
    match (sent, received) {
        _ if sent == received => true,
        (Value::String(text), Value::Bool(b)) => text.trim().eq_ignore_ascii_case(&b.to_string()),
        (Value::String(text), Value::Number(n)) => {
            let t = text.trim();
            if let Some(i) = n.as_i64() {
                t.parse::<i64>().ok() == Some(i) || t.parse::<f64>().ok() == Some(i as f64)
            } else if let Some(u) = n.as_u64() {
                t.parse::<u64>().ok() == Some(u) || t.parse::<f64>().ok() == Some(u as f64)
            } else {
                t.parse::<f64>().ok() == n.as_f64()
            }
        }
        (Value::Array(sent), Value::Array(received)) => {
            sent.len() == received.len()
                && sent.iter().zip(received).all(|(s, r)| lenient_only(s, r))
        }
        (Value::Object(sent), Value::Object(received)) => {
            received
                .iter()
                .all(|(key, r)| sent.get(key).is_some_and(|s| lenient_only(s, r)))
                && sent
                    .iter()
                    .all(|(key, s)| received.contains_key(key) || s.is_null())
        }
        _ => false,
    }
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fuzz_target!(|input: Input| {
    let fixture = &*FIXTURE;
    let name = TOOLS[usize::from(input.tool) % TOOLS.len()];
    let mut sent = if input.example {
        example(name)
    } else {
        Value::Object(Map::new())
    };
    if let Value::Object(members) = &mut sent {
        members.extend(object(&input.arguments));
    }
    for edit in &input.edits {
        toolsmith_fuzz::apply(
            &mut sent,
            &edit.path,
            edit.set.as_ref().map(Json::value),
            Key::name,
        );
    }
    if !sent.is_object() {
        return;
    }
    let arguments = ToolArguments::try_from(sent.clone()).expect("an object");
    let request = ToolCallRequest::new("fuzz-1", name, arguments.clone());
    RAN.store(0, Ordering::SeqCst);
    *RECEIVED.lock().unwrap() = None;
    let result = fixture
        .runtime
        .block_on(fixture.manager.execute_one(&request));
    let ran = RAN.load(Ordering::SeqCst);
    assert!(ran <= 1, "{name} ran {ran} times");
    let ran = ran == 1;
    let validated = fixture.manager.validate_arguments(name, &arguments);
    if !ran {
        match &result {
            Err(ToolError::InvalidArguments { tool, .. }) => assert_eq!(tool, name),
            other => panic!("{name} did not run on {sent}, and said {other:?}"),
        }
    }
    // Documented: arguments nested deeper than MAX_JSON_DEPTH are refused unread, whatever
    // the schema says (and the reference, which recurses once per level, is not asked).
    if depth(&sent) > toolsmith::MAX_JSON_DEPTH {
        assert!(!ran, "{name} ran on arguments {} deep", depth(&sent));
        return;
    }
    let reference = &fixture.reference[name];
    let accepted = reference.accepts(&sent);
    // `FUZZ_SHOW=1 cargo fuzz run arguments corpus/arguments -- -runs=0` tells how often
    // the corpus runs each tool, and how often beyond its schema.
    if std::env::var_os("FUZZ_SHOW").is_some() {
        eprintln!("{name} ran={ran} accepted={accepted}");
    }
    assert_eq!(
        validated.is_ok(),
        ran,
        "{name}: validate_arguments said {validated:?} but the tool ran: {ran} ({result:?}) on {sent}"
    );
    if accepted {
        assert!(
            ran,
            "{name} refused arguments its schema accepts: {sent}: {result:?}"
        );
    }
    if let Ok(received) = &validated {
        let received = received.as_value();
        assert!(
            reference.accepts(received),
            "{name} ran on invalid {received} (sent {sent})"
        );
        assert!(
            lenient_only(&sent, received),
            "{name}: {sent} was read as {received}, beyond the documented leniencies"
        );
        if ["hand", "formats", "order"].contains(&name) {
            assert_eq!(
                RECEIVED.lock().unwrap().as_ref(),
                Some(received),
                "{name} got other arguments"
            );
        }
        // What a `#[tool_fn]` read: each parameter as validation passed it, or its default.
        if ["wide", "narrow"].contains(&name) {
            let expected: Map<String, Value> = parameters(name)
                .iter()
                .map(|&(key, absent)| {
                    let value = received.get(key).cloned().or_else(|| absent.map(|f| f()));
                    (
                        key.to_owned(),
                        value.unwrap_or_else(|| panic!("{name} ran without {key}")),
                    )
                })
                .collect();
            let read = RECEIVED.lock().unwrap().clone();
            assert!(
                read.as_ref()
                    .is_some_and(|read| same_numbers(read, &Value::Object(expected.clone()))),
                "{name} read {read:?}, validation passed {received} (sent {sent}); expected {expected:?}"
            );
        }
    }
});
