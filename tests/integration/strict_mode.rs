//! The strict transform checked against an independent implementation of OpenAI's and
//! Anthropic's published rules, over hand-written, builder-made, schemars-derived and
//! command-group schemas; what cannot be made strict is rendered non-strict and reported with
//! the tool, the path and the reason; a call made against a strict rendering runs as if its
//! nulls were absent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::support::strict_rules::{anthropic_violations, openai_violations};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde_json::{Value, json};
use toolsmith::provider::{Declared, Provider, RenderOptions, StrictMode, strict_schema};
use toolsmith::{
    Args, FnTool, Tool, ToolArgs, ToolCallManager, ToolCallResult, ToolDeclarations,
    ToolDefinition, scheme,
};

/// Nested structs, options, vectors, enums, numbers with formats: what `#[derive(ToolArgs)]`
/// (schemars underneath) produces.
#[allow(dead_code)]
#[derive(JsonSchema)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// How many results.
    limit: Option<u32>,
    /// Only these kinds.
    kinds: Vec<Kind>,
    /// Where to look.
    scope: Option<Scope>,
    sort: Sort,
    ratio: f64,
    flags: Option<Vec<bool>>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
enum Kind {
    File,
    Folder,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Scope {
    /// The root folder.
    root: String,
    depth: Option<u8>,
    exclude: Vec<String>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(tag = "by")]
enum Sort {
    Relevance,
    Date { newest_first: bool },
}

#[allow(dead_code)]
#[derive(JsonSchema)]
enum Action {
    Move { to: String },
    Copy { to: String, overwrite: Option<bool> },
    Delete,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct ActionArgs {
    action: Action,
    paths: Vec<String>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct TreeArgs {
    tree: Tree,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct EnvArgs {
    env: HashMap<String, String>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct AnyArgs {
    payload: serde_json::Value,
}

fn schemars_value<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap()
}

fn memory_group() -> Tool {
    Tool::MultiCommands(
        "memory".into(),
        vec![
            ToolDefinition::new(
                "add",
                "Remember a fact.",
                Args::new(
                    scheme::object()
                        .required("text", scheme::string().min_len(1))
                        .optional("tags", scheme::array(scheme::string()).max_items(5))
                        .build(),
                ),
            ),
            ToolDefinition::new(
                "replace",
                "Replace a fact.",
                Args::new(
                    scheme::object()
                        .required("id", scheme::integer().minimum(0))
                        .required("text", scheme::string())
                        .build(),
                ),
            ),
            ToolDefinition::new(
                "remove",
                "Forget a fact.",
                Args::new(scheme::object().required("id", scheme::string()).build()),
            ),
        ],
    )
}

/// Every schema the strict checkers run over, named.
fn corpus() -> Vec<(&'static str, Value)> {
    vec![
        ("empty", Args::empty().into_inner()),
        ("bare root", json!({"type": "object"})),
        (
            "builder",
            scheme::object()
                .required(
                    "query",
                    scheme::string()
                        .min_len(1)
                        .max_len(200)
                        .pattern("^[a-z ]+$"),
                )
                .optional("limit", scheme::integer().minimum(1).maximum(50))
                .optional(
                    "tags",
                    scheme::array(scheme::string()).min_items(1).max_items(10),
                )
                .optional("exact", scheme::boolean().default_value(false))
                .optional("when", scheme::string().format("date-time"))
                .optional("site", scheme::string().format("uri"))
                .build(),
        ),
        (
            "nested objects and arrays",
            json!({
                "type": "object",
                "properties": {
                    "user": {
                        "type": "object",
                        "title": "User",
                        "properties": {
                            "name": {"type": "string"},
                            "emails": {"type": "array", "items": {"type": "string", "format": "email"}, "uniqueItems": true},
                            "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}}, "required": ["city"]}
                        },
                        "required": ["name"]
                    },
                    "points": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"], "additionalProperties": false}}
                },
                "required": ["user"]
            }),
        ),
        (
            "unions and enums",
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": ["string", "integer"], "minLength": 1, "minimum": 0},
                    "mode": {"oneOf": [{"const": "fast"}, {"const": "safe"}]},
                    "level": {"enum": [1, 2, 3]},
                    "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Maybe."},
                    "color": {"type": "string", "enum": ["red", "green"], "default": "red", "examples": ["red"]},
                    "exclusive": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
                    "not_x": {"type": "string", "not": {"const": "x"}}
                },
                "required": ["id", "mode"]
            }),
        ),
        (
            "refs and allOf",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "a": {"$ref": "#/$defs/Point"},
                    "b": {"$ref": "#/$defs/Point", "description": "Second point."},
                    "c": {"allOf": [{"$ref": "#/$defs/Point"}, {"properties": {"label": {"type": "string"}}, "required": ["label"]}]},
                    "list": {"type": "array", "items": {"$ref": "#/$defs/Point"}, "maxItems": 3}
                },
                "required": ["a"],
                "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x"]}}
            }),
        ),
        ("recursion (OpenAI only)", schemars_value::<TreeArgs>()),
        ("schemars search", schemars_value::<SearchArgs>()),
        ("schemars actions", schemars_value::<ActionArgs>()),
        ("command group", memory_group().function_spec().parameters),
        (
            "fixed-width integers",
            toolsmith::ArgsObject::new()
                .field::<u64>("big", None)
                .field::<Option<i64>>("maybe", None)
                .field::<Vec<std::num::NonZeroI32>>("steps", None)
                .field::<std::num::NonZeroUsize>("count", None)
                .build()
                .into_inner(),
        ),
    ]
}

#[test]
fn openai_strict_output_follows_openai_rules() {
    for (name, schema) in corpus() {
        let strict = strict_schema(Provider::OpenAiChat, name, &schema)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let violations = openai_violations(&strict);
        assert!(violations.is_empty(), "{name}: {violations:#?}\n{strict:#}");
        assert!(
            jsonschema::meta::is_valid(&strict),
            "{name}: not a valid JSON Schema"
        );
    }
}

#[test]
fn anthropic_strict_output_follows_anthropic_rules() {
    for (name, schema) in corpus() {
        let result = strict_schema(Provider::Anthropic, name, &schema);
        if name.starts_with("recursion") {
            let err = result.unwrap_err();
            assert_eq!(err.tool, name);
            assert!(err.reason.contains("recursive"), "{err}");
            assert_eq!(err.path, "/properties/tree");
            continue;
        }
        let strict = result.unwrap_or_else(|err| panic!("{name}: {err}"));
        let violations = anthropic_violations(&strict);
        assert!(violations.is_empty(), "{name}: {violations:#?}\n{strict:#}");
    }
}

#[test]
fn the_checker_catches_what_the_transform_fixes() {
    // The checker is not vacuous: the raw schemas break its rules (all but the empty one,
    // strict as it is).
    for (name, schema) in corpus() {
        if name == "empty" {
            continue;
        }
        assert!(
            !openai_violations(&schema).is_empty(),
            "{name} passes unchanged"
        );
    }
}

#[test]
fn moved_keywords_stay_in_the_description() {
    let corpus = corpus();
    let builder = &corpus.iter().find(|(n, _)| *n == "builder").unwrap().1;
    let strict = strict_schema(Provider::OpenAiResponses, "search", builder).unwrap();
    assert_eq!(
        strict["properties"]["query"],
        json!({"type": "string", "pattern": "^[a-z ]+$", "description": "(minLength: 1; maxLength: 200)"})
    );
    assert_eq!(
        strict["properties"]["site"],
        json!({"anyOf": [{"type": "string", "description": "(format: uri)"}, {"type": "null"}]})
    );
    assert_eq!(
        strict["properties"]["exact"],
        json!({"anyOf": [{"type": "boolean", "description": "(default: false)"}, {"type": "null"}]})
    );
}

fn tool(name: &str, schema: Value) -> Tool {
    Tool::SingleCommand(ToolDefinition::new(name, "A tool.", Args::new(schema)))
}

/// The `strict` flag of the `index`th tool of a rendering (`None` when not written).
fn strict_flag(provider: Provider, tools: &Value, index: usize) -> Option<bool> {
    let tool = &tools[index];
    match provider {
        Provider::OpenAiChat => tool["function"].get("strict"),
        _ => tool.get("strict"),
    }
    .and_then(Value::as_bool)
}

/// The parameter schema of the `index`th tool of a rendering.
fn parameters(provider: Provider, tools: &Value, index: usize) -> &Value {
    match provider {
        Provider::OpenAiChat => &tools[index]["function"]["parameters"],
        Provider::Anthropic => &tools[index]["input_schema"],
        _ => &tools[index]["parameters"],
    }
}

#[test]
fn unstrictable_schemas_are_rendered_non_strict_and_all_reported_in_one_render() {
    let always = RenderOptions {
        strict: StrictMode::Always,
    };
    let cases = [
        (
            "set_env",
            schemars_value::<EnvArgs>(),
            "/properties/env/additionalProperties",
            "open map",
        ),
        (
            "send_any",
            schemars_value::<AnyArgs>(),
            "/properties/payload",
            "untyped",
        ),
    ];
    // Every tool that cannot be strict, with its reason, from one rendering; the others strict.
    let declarations = ToolDeclarations {
        shed: None,
        tools: vec![
            tool("fine", Args::empty().into_inner()),
            tool(cases[0].0, cases[0].1.clone()),
            tool(cases[1].0, cases[1].1.clone()),
        ],
    };
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
    ] {
        let rendered = provider.render_tools(&declarations, &always).unwrap();
        let reported: Vec<(&str, &str)> = rendered
            .not_strict
            .iter()
            .map(|err| (err.tool.as_str(), err.path.as_str()))
            .collect();
        assert_eq!(
            reported,
            [(cases[0].0, cases[0].2), (cases[1].0, cases[1].2)],
            "{provider}"
        );
        for (err, (name, _, _, why)) in rendered.not_strict.iter().zip(&cases) {
            assert_eq!(err.provider, provider);
            assert!(err.reason.contains(why), "{err}");
            assert!(err.to_string().contains(&format!("'{name}'")), "{err}");
        }
        assert_eq!(strict_flag(provider, &rendered.tools, 0), Some(true));
        for (index, (_, schema, _, _)) in cases.iter().enumerate() {
            // Not strict: declared as it is (Responses says `strict: false`, its default
            // being true).
            let expected = (provider == Provider::OpenAiResponses).then_some(false);
            assert_eq!(
                strict_flag(provider, &rendered.tools, index + 1),
                expected,
                "{provider}"
            );
            assert_eq!(parameters(provider, &rendered.tools, index + 1), schema);
        }
    }
    // Not asked to be strict: nothing to report.
    let plain = Provider::OpenAiChat
        .render_tools(
            &declarations,
            &RenderOptions {
                strict: StrictMode::Never,
            },
        )
        .unwrap();
    assert!(plain.not_strict.is_empty());
    assert_eq!(plain.tools[1]["function"]["parameters"], cases[0].1);
    // Gemini cannot express recursion at all: that still fails, naming tool and path.
    let declarations = ToolDeclarations {
        shed: None,
        tools: vec![tool("walk", schemars_value::<TreeArgs>())],
    };
    let err = Provider::Gemini
        .render_tools(&declarations, &RenderOptions::default())
        .unwrap_err();
    assert_eq!(err.tool, "walk");
    assert_eq!(err.path, "/properties/tree/properties/children/items");
}

/// What the default strict mode renders strict: tools with a `returns` schema; one that
/// cannot be strict is reported all the same.
#[test]
fn tools_with_returns_that_cannot_be_strict_are_reported_by_default() {
    let declarations = ToolDeclarations {
        shed: None,
        tools: vec![
            Tool::SingleCommand(
                ToolDefinition::new("set_env", "A tool.", Args::new(schemars_value::<EnvArgs>()))
                    .with_returns(Args::new(scheme::object().build())),
            ),
            tool("send_any", schemars_value::<AnyArgs>()),
        ],
    };
    let rendered = Provider::OpenAiChat
        .render_tools(&declarations, &RenderOptions::default())
        .unwrap();
    assert_eq!(rendered.not_strict.len(), 1);
    assert_eq!(rendered.not_strict[0].tool, "set_env");
    assert_eq!(rendered.tools[0]["function"].get("strict"), None);
    assert_eq!(rendered.tools[1]["function"].get("strict"), None);
}

/// A command group whose every command declares a `returns` schema declares the group's
/// result schema (any of theirs): strict by default, and shown to text backends. One command
/// without leaves the group without, as its results are then not all described.
#[test]
fn a_group_whose_every_command_declares_returns_is_strict_by_default() {
    let with_returns = |every: bool| {
        let Tool::MultiCommands(name, commands) = memory_group() else {
            unreachable!("memory_group is a group");
        };
        let commands = commands
            .into_iter()
            .enumerate()
            .map(|(index, command)| {
                if every || index > 0 {
                    command.with_returns(Args::new(
                        scheme::object().required("id", scheme::integer()).build(),
                    ))
                } else {
                    command
                }
            })
            .collect();
        Tool::MultiCommands(name, commands)
    };

    let group = with_returns(true);
    let result_schema = group.result_schema().expect("every command declares one");
    assert_eq!(group.function_spec().returns, Some(result_schema.clone()));
    let declarations = ToolDeclarations {
        shed: None,
        tools: vec![group],
    };
    for provider in [Provider::OpenAiChat, Provider::Anthropic] {
        let rendered = provider
            .render_tools(&declarations, &RenderOptions::default())
            .unwrap();
        assert!(
            rendered.not_strict.is_empty(),
            "{provider}: {:?}",
            rendered.not_strict
        );
        assert_eq!(
            strict_flag(provider, &rendered.tools, 0),
            Some(true),
            "{provider}"
        );
    }
    let text = Provider::Text
        .render_tools(&declarations, &RenderOptions::default())
        .unwrap();
    let description = text.tools[0]["description"].as_str().unwrap();
    assert!(
        description.ends_with(&format!("\n\nReturns: {result_schema}")),
        "{description}"
    );

    let partly = with_returns(false);
    assert_eq!(partly.function_spec().returns, None);
    let declarations = ToolDeclarations {
        shed: None,
        tools: vec![partly],
    };
    let rendered = Provider::OpenAiChat
        .render_tools(&declarations, &RenderOptions::default())
        .unwrap();
    assert_eq!(strict_flag(Provider::OpenAiChat, &rendered.tools, 0), None);
    let text = Provider::Text
        .render_tools(&declarations, &RenderOptions::default())
        .unwrap();
    assert!(
        !text.tools[0]["description"]
            .as_str()
            .unwrap()
            .contains("Returns:")
    );
}

fn optional_strings(tool_name: &str, count: usize) -> Tool {
    let mut object = scheme::object();
    for i in 0..count {
        object = object.optional(format!("p{i}"), scheme::string());
    }
    tool(tool_name, object.build())
}

/// The names of the tools of an Anthropic rendering declared strict.
fn strict_names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["strict"] == true)
        .map(|tool| tool["name"].as_str().unwrap())
        .collect()
}

#[test]
fn anthropic_request_limits_leave_the_tools_past_them_non_strict() {
    let always = RenderOptions {
        strict: StrictMode::Always,
    };
    let render = |tools: Vec<Tool>| {
        Provider::Anthropic
            .render_tools(&ToolDeclarations { shed: None, tools }, &always)
            .unwrap()
    };
    let many: Vec<Tool> = (0..21)
        .map(|i| tool(&format!("t{i}"), Args::empty().into_inner()))
        .collect();
    let rendered = render(many.clone());
    assert_eq!(rendered.not_strict.len(), 1, "{:?}", rendered.not_strict);
    let err = &rendered.not_strict[0];
    assert_eq!(err.tool, "t20");
    assert!(err.reason.contains("at most 20 strict tools"), "{err}");
    assert_eq!(strict_names(&rendered.tools).len(), 20);
    assert_eq!(rendered.tools[20].get("strict"), None);
    // Twenty are fine, and so are any number when not strict.
    assert!(render(many[..20].to_vec()).not_strict.is_empty());
    let plain = Provider::Anthropic
        .render_tools(
            &ToolDeclarations {
                shed: None,
                tools: many,
            },
            &RenderOptions::default(),
        )
        .unwrap();
    assert!(plain.not_strict.is_empty());
    assert!(strict_names(&plain.tools).is_empty());

    // A tool past the limit is left out of the count: a smaller one after it still fits.
    let rendered = render(vec![
        optional_strings("a", 12),
        optional_strings("b", 12),
        optional_strings("c", 1),
        optional_strings("d", 0),
    ]);
    assert_eq!(rendered.not_strict.len(), 1, "{:?}", rendered.not_strict);
    let err = &rendered.not_strict[0];
    assert_eq!(err.tool, "c");
    assert!(err.reason.contains("24 optional parameters"), "{err}");
    assert_eq!(strict_names(&rendered.tools), ["a", "b", "d"]);

    let unions = |name: &str, n: usize| {
        let mut object = scheme::object();
        for i in 0..n {
            object = object.required(format!("u{i}"), json!({"type": ["string", "integer"]}));
        }
        tool(name, object.build())
    };
    let rendered = render(vec![unions("x", 10), unions("y", 7)]);
    assert_eq!(rendered.not_strict.len(), 1, "{:?}", rendered.not_strict);
    let err = &rendered.not_strict[0];
    assert_eq!(err.tool, "y");
    assert!(err.reason.contains("16 union-typed parameters"), "{err}");
    assert_eq!(strict_names(&rendered.tools), ["x"]);
}

/// A call made against the strict rendering (every property present, optional ones `null`)
/// validates against that rendering, and runs exactly as the same call without the nulls.
#[tokio::test]
async fn strict_calls_with_nulls_run_as_if_absent() {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = Arc::clone(&seen);
    let manager = ToolCallManager::new("strict");
    manager
        .register(Arc::new(FnTool::new(
            "search",
            "Search.",
            Args::new(
                scheme::object()
                    .required("query", scheme::string())
                    .optional("limit", scheme::integer().minimum(1))
                    .optional(
                        "scope",
                        scheme::object()
                            .required("root", scheme::string())
                            .optional("depth", scheme::integer()),
                    )
                    .build(),
            ),
            move |args: ToolArgs<'_>| {
                record
                    .lock()
                    .unwrap()
                    .push(args.arguments().as_value().clone());
                async { Ok(ToolCallResult::text("ok")) }
            },
        )))
        .unwrap();
    manager
        .register(Arc::new(crate::support::provider_tools::Memory::default()))
        .unwrap();

    let options = RenderOptions {
        strict: StrictMode::Always,
    };
    let rendered = manager
        .rendered_tools(Provider::OpenAiChat, Declared::All, &options)
        .unwrap();
    assert!(rendered.not_strict.is_empty(), "{:?}", rendered.not_strict);
    let tools = &rendered.tools;
    let strict_of =
        |i: usize| jsonschema::validator_for(&tools[i]["function"]["parameters"]).unwrap();

    let cases = [
        (
            0,
            json!({"query": "rust", "limit": null, "scope": null}),
            json!({"query": "rust"}),
        ),
        (
            0,
            json!({"query": "rust", "limit": "5", "scope": {"root": "/src", "depth": null}}),
            json!({"query": "rust", "limit": 5, "scope": {"root": "/src"}}),
        ),
        // A command group: the other commands' arguments arrive as null.
        (
            1,
            json!({"command": "add", "text": "a fact", "id": null}),
            json!({"command": "add", "text": "a fact"}),
        ),
    ];
    for (index, strict_call, plain_call) in cases {
        let name = tools[index]["function"]["name"].as_str().unwrap();
        if !strict_call.to_string().contains("\"5\"") {
            assert!(
                strict_of(index).is_valid(&strict_call),
                "{strict_call} is not a strict call"
            );
        }
        let response = json!({"role": "assistant", "tool_calls": [
            {"id": "strict", "type": "function", "function": {"name": name, "arguments": strict_call.to_string()}},
            {"id": "plain", "type": "function", "function": {"name": name, "arguments": plain_call.to_string()}}
        ]});
        let outcomes = crate::support::provider_tools::run_calls(
            &manager,
            Provider::OpenAiChat.parse_calls(&response).unwrap(),
        )
        .await;
        let texts: Vec<String> = outcomes
            .iter()
            .map(|o| {
                o.2.as_ref()
                    .map(|r| r.content.to_text())
                    .unwrap_or_else(|e| e.to_string())
            })
            .collect();
        assert_eq!(texts[0], texts[1], "{strict_call}");
        assert!(outcomes[0].2.is_ok(), "{texts:?}");
        let validated = manager
            .validate_arguments(name, &serde_json::from_value(strict_call).unwrap())
            .unwrap();
        assert_eq!(validated.as_value(), &plain_call);
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0], json!({"query": "rust"}));
    assert_eq!(seen[2], seen[3]);
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        (0u64..5).prop_map(|n| json!({"type": "string", "minLength": n, "maxLength": n + 10})),
        prop::sample::select(vec!["date-time", "uri", "email", "uuid", "ipv4"])
            .prop_map(|f| json!({"type": "string", "format": f})),
        (-5i64..5).prop_map(|n| json!({"type": "integer", "minimum": n, "maximum": n + 3})),
        Just(json!({"type": "number", "exclusiveMaximum": 1.5})),
        Just(json!({"type": "boolean", "default": true})),
        Just(json!({"enum": ["a", "b", "c"]})),
        Just(json!({"const": 3})),
        Just(json!({"type": ["string", "null"]})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec((inner.clone(), any::<bool>()), 0..4),
                any::<bool>()
            )
                .prop_map(|(props, closed)| {
                    let mut properties = serde_json::Map::new();
                    let mut required = Vec::new();
                    for (i, (schema, is_required)) in props.into_iter().enumerate() {
                        properties.insert(format!("p{i}"), schema);
                        if is_required {
                            required.push(json!(format!("p{i}")));
                        }
                    }
                    let mut object =
                        json!({"type": "object", "properties": properties, "required": required});
                    if closed {
                        object["additionalProperties"] = json!(false);
                    }
                    object
                }),
            (inner.clone(), any::<bool>()).prop_map(|(items, unique)| {
                json!({"type": "array", "items": items, "uniqueItems": unique, "minItems": 2})
            }),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
            (inner.clone(), inner)
                .prop_map(|(a, b)| json!({"oneOf": [a, b], "description": "One."})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any schema of this grammar becomes strict for both providers, by both rule books.
    #[test]
    fn generated_schemas_become_strict(property in schema()) {
        let root = json!({"type": "object", "properties": {"x": property}});
        let openai = strict_schema(Provider::OpenAiChat, "gen", &root).unwrap();
        prop_assert!(openai_violations(&openai).is_empty(), "{:#?}\n{:#}", openai_violations(&openai), openai);
        let anthropic = strict_schema(Provider::Anthropic, "gen", &root).unwrap();
        prop_assert!(anthropic_violations(&anthropic).is_empty(), "{:#?}", anthropic_violations(&anthropic));
    }
}
