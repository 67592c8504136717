//! What a strict model sends for an absent optional value is `null` (strict rendering makes
//! every property required and nullable). For every shape schemars gives an optional value —
//! `oneOf` of `const`s (documented enum variants), internally tagged enums, `$ref`s, `allOf`,
//! nested objects, arrays of optional items, `#[serde(default)]` fields, command groups — such
//! a call is accepted and the function sees `None` or the default.

use std::sync::Arc;

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith::provider::{Provider, strict_schema};
use toolsmith::{
    Tool, ToolArguments, ToolCallManager, ToolCallRequest, ToolError, ToolImpl, tool_fn,
};

/// How urgent an item is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    /// Whenever.
    #[default]
    Low,
    /// Soon.
    High,
}

/// A shape, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        radius: f64,
    },
    /// A square.
    Square {
        /// Its side.
        side: f64,
    },
}

impl Default for Shape {
    fn default() -> Self {
        Self::Circle { radius: 1.0 }
    }
}

/// Plain variants without docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
enum Colour {
    Red,
    Green,
}

/// Where to put an item.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
struct Placement {
    /// The folder.
    folder: String,
    /// How urgent, if at all.
    priority: Option<Priority>,
    /// Its shape, if any.
    shape: Option<Shape>,
    /// Retries, defaulting to 3.
    #[serde(default = "three")]
    retries: u32,
}

fn three() -> u32 {
    3
}

/// One entry of a list.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
struct Entry {
    /// Its name.
    name: String,
    /// Its colour, if any.
    colour: Option<Colour>,
}

/// Optional documented enum.
#[tool_fn]
fn documented_enum(
    /// The title.
    title: String,
    /// The priority.
    priority: Option<Priority>,
) -> String {
    format!("{title} {priority:?}")
}

/// Optional internally tagged enum.
#[tool_fn]
fn tagged_enum(
    /// The shape.
    shape: Option<Shape>,
    /// Some number.
    count: Option<u32>,
) -> String {
    format!("{shape:?} {count:?}")
}

/// Defaults of enum types.
#[tool_fn]
fn defaulted(
    /// The priority.
    #[arg(default)]
    priority: Priority,
    /// The shape.
    #[arg(default)]
    shape: Shape,
    /// How many times.
    retries: Option<u8>,
    /// Whether to notify.
    notify: Option<bool>,
) -> String {
    format!("{priority:?} {shape:?} {retries:?} {notify:?}")
}

/// Nested optional values.
#[tool_fn]
fn nested(
    /// Where.
    placement: Placement,
    /// A second placement, if any.
    backup: Option<Placement>,
) -> String {
    format!("{placement:?} {backup:?}")
}

/// Arrays of optional items and of objects with optional fields.
#[tool_fn]
fn arrays(
    /// Items, some unknown.
    values: Vec<Option<Priority>>,
    /// Entries.
    entries: Vec<Entry>,
    /// Colours, if any.
    colours: Option<Vec<Colour>>,
) -> String {
    format!("{values:?} {entries:?} {colours:?}")
}

/// Plain optional scalars and strings.
#[tool_fn]
fn scalars(
    /// A name.
    name: Option<String>,
    /// A ratio.
    ratio: Option<f64>,
    /// A colour.
    colour: Option<Colour>,
) -> String {
    format!("{name:?} {ratio:?} {colour:?}")
}

/// A group whose commands have optional enum arguments.
struct Tasks;

/// Tasks.
#[tool_fn]
impl Tasks {
    /// Add a task.
    fn add(
        &self,
        /// The title.
        title: String,
        /// The priority.
        priority: Option<Priority>,
        /// The shape.
        #[arg(default)]
        shape: Shape,
    ) -> String {
        format!("add {title} {priority:?} {shape:?}")
    }

    /// Move a task.
    fn relocate(
        &self,
        /// The id.
        id: u32,
        /// Where.
        placement: Option<Placement>,
    ) -> String {
        format!("relocate {id} {placement:?}")
    }
}

fn tools() -> Vec<Arc<dyn ToolImpl>> {
    vec![
        Arc::new(DocumentedEnum),
        Arc::new(TaggedEnum),
        Arc::new(Defaulted),
        Arc::new(Nested),
        Arc::new(Arrays),
        Arc::new(Scalars),
        Arc::new(Tasks),
    ]
}

/// A value the strict schema `schema` accepts, where every nullable value is `null` unless
/// `fill` says to give it a value (so both the absent and present spellings are covered).
/// Arrays get `items` elements. `defs` resolves `$ref`s.
fn strict_instance(
    schema: &Value,
    defs: &Map<String, Value>,
    fill: &mut dyn FnMut() -> bool,
    items: usize,
) -> Value {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap();
        return strict_instance(&defs[name], defs, fill, items);
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(keyword).and_then(Value::as_array) {
            let nullable = branches
                .iter()
                .any(|b| b.get("type") == Some(&json!("null")));
            if nullable && !fill() {
                return Value::Null;
            }
            let branch = branches
                .iter()
                .find(|b| b.get("type") != Some(&json!("null")))
                .expect("a non-null branch");
            return strict_instance(branch, defs, fill, items);
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        return strict_instance(&all[0], defs, fill, items);
    }
    if let Some(constant) = schema.get("const") {
        return constant.clone();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if values.contains(&Value::Null) && !fill() {
            return Value::Null;
        }
        return values.iter().find(|v| !v.is_null()).cloned().unwrap();
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if types.contains(&"null") && !fill() {
        return Value::Null;
    }
    match types.iter().find(|t| **t != "null").copied() {
        Some("object") => {
            let mut object = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    object.insert(name.clone(), strict_instance(property, defs, fill, items));
                }
            }
            Value::Object(object)
        }
        Some("array") => {
            let item = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..items)
                    .map(|_| strict_instance(&item, defs, fill, items))
                    .collect(),
            )
        }
        Some("string") => json!("s"),
        Some("integer") => json!(
            schema
                .get("minimum")
                .and_then(Value::as_i64)
                .unwrap_or(1)
                .max(1)
        ),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        other => panic!("unexpected schema type {other:?} in {schema}"),
    }
}

/// The argument objects a strict model could send to `tool`, one per command, built from
/// OpenAI strict renderings: for a command group, the command's own arguments and `null` for
/// every other command's (the group's one strict object lists them all).
fn strict_calls(tool: &Tool, fill: &mut impl FnMut() -> bool, items: usize) -> Vec<Value> {
    let instance = |name: &str, schema: &Value, fill: &mut dyn FnMut() -> bool| {
        let strict = strict_schema(Provider::OpenAiChat, name, schema).unwrap();
        let defs = strict
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        strict_instance(&strict, &defs, &mut || fill(), items)
    };
    match tool {
        Tool::SingleCommand(definition) => {
            vec![instance(
                &definition.name,
                definition.arguments.schema(),
                fill,
            )]
        }
        Tool::MultiCommands(_, commands) => {
            let group = tool.function_spec().parameters;
            commands
                .iter()
                .map(|command| {
                    let mut call = instance(&command.name, command.arguments.schema(), fill);
                    for name in group["properties"].as_object().unwrap().keys() {
                        call.as_object_mut()
                            .unwrap()
                            .entry(name.clone())
                            .or_insert(Value::Null);
                    }
                    call["command"] = json!(command.name);
                    call
                })
                .collect()
        }
    }
}

fn manager() -> ToolCallManager {
    let manager = ToolCallManager::new("strict-nulls");
    for tool in tools() {
        manager.register(tool).unwrap();
    }
    manager
}

fn run(manager: &ToolCallManager, name: &str, arguments: Value) -> Result<String, ToolError> {
    let request = ToolCallRequest::new("call", name, ToolArguments::try_from(arguments).unwrap());
    futures::executor::block_on(manager.execute_one(&request)).map(|r| r.content.to_text())
}

/// Every call a strict model would send with all optional values `null` is accepted, and
/// each tool sees `None` or its default.
#[test]
fn all_nulls_read_as_absent() {
    let manager = manager();
    let cases = [
        ("documented_enum", "s None"),
        ("tagged_enum", "None None"),
        ("defaulted", "Low Circle { radius: 1.0 } None None"),
        (
            "nested",
            "Placement { folder: \"s\", priority: None, shape: None, retries: 3 } None",
        ),
        (
            "arrays",
            "[None] [Entry { name: \"s\", colour: None }] None",
        ),
        ("scalars", "None None None"),
    ];
    for (name, expected) in cases {
        let tool = manager.get_def(name).unwrap();
        let [call] = &strict_calls(&tool, &mut || false, 1)[..] else {
            panic!("one call for {name}");
        };
        assert_eq!(
            run(&manager, name, call.clone()).as_deref(),
            Ok(expected),
            "{name}: {call}"
        );
    }
    let group = manager.get_def("tasks").unwrap();
    let texts: Vec<_> = strict_calls(&group, &mut || false, 1)
        .into_iter()
        .map(|call| run(&manager, "tasks", call))
        .collect();
    assert_eq!(
        texts,
        [
            Ok("add s None Circle { radius: 1.0 }".to_owned()),
            Ok("relocate 1 None".to_owned()),
        ]
    );
}

/// The reported error names only the values that are wrong: an unrepairable `null` for a
/// required value is reported, the repairable ones beside it are not.
#[test]
fn only_the_unrepairable_null_is_reported() {
    let manager = manager();
    let err = run(
        &manager,
        "documented_enum",
        json!({"title": null, "priority": null}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'documented_enum': /title: null is not of type \"string\""
    );
    let err = run(
        &manager,
        "tasks",
        json!({"command": "add", "title": "t", "priority": "urgent", "shape": null, "id": null, "placement": null}),
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("/priority"), "{message}");
    assert!(!message.contains("/shape"), "{message}");
    assert!(!message.contains("'id'"), "{message}");
    assert!(!message.contains("placement"), "{message}");
    // A required nested value sent as null is still an error, at its own path.
    let err = run(
        &manager,
        "nested",
        json!({"placement": {"folder": null, "priority": null, "shape": null, "retries": null}, "backup": null}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'nested': /placement/folder: null is not of type \"string\""
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any mix of `null` and present values, as a strict model may send, is accepted by
    /// every tool of the set.
    #[test]
    fn strict_calls_are_accepted(choices in prop::collection::vec(any::<bool>(), 64), items in 0usize..3) {
        let manager = manager();
        for tool in tools() {
            let definition = tool.definition();
            let mut next = choices.iter().cycle().copied();
            let mut fill = || next.next().unwrap();
            for call in strict_calls(&definition, &mut fill, items) {
                let result = run(&manager, definition.name(), call.clone());
                prop_assert!(result.is_ok(), "{}: {} -> {:?}", definition.name(), call, result);
            }
        }
    }
}

fn some_five() -> Option<u32> {
    Some(5)
}

/// An optional value whose default is not `None`.
#[tool_fn]
fn defaulted_to_some(
    /// How many, 5 unless said.
    #[arg(default = "some_five")]
    count: Option<u32>,
) -> String {
    format!("{count:?}")
}

/// A `null` is read as left out, whatever the default: an `Option` defaulting to `Some`
/// takes its default for `null` (as a strict model means it), not serde's `None`. The schema
/// declared to models does not admit `null` for it, so a model is not told otherwise.
#[test]
fn a_null_takes_the_default_even_where_it_is_some() {
    let manager = ToolCallManager::new("defaulted-to-some");
    manager.register(Arc::new(DefaultedToSome)).unwrap();
    let sent = |arguments: Value| run(&manager, "defaulted_to_some", arguments);
    assert_eq!(sent(json!({"count": null})).as_deref(), Ok("Some(5)"));
    assert_eq!(sent(json!({})).as_deref(), Ok("Some(5)"));
    assert_eq!(sent(json!({"count": 2})).as_deref(), Ok("Some(2)"));
    let Tool::SingleCommand(declared) = manager.get_def("defaulted_to_some").unwrap() else {
        panic!("one command");
    };
    assert_eq!(
        declared.arguments.schema()["properties"]["count"]["type"],
        json!("integer")
    );
}
