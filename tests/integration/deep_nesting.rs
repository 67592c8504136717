//! Deeply nested JSON never aborts the process: every path that parses, repairs, clones,
//! validates, reads or renders a value refuses nesting deeper than [`MAX_JSON_DEPTH`] with an
//! error that says so, and values Toolsmith owns are freed without recursion.
//!
//! Each test runs on a thread with a Tokio worker's 2 MiB stack, at 10,000 and 100,000
//! levels: before the limit existed, a stack overflow aborted the whole test binary. Deep
//! values are built and freed by `support::deep` without recursion (see there).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolsmith::provider::{
    ParsedCall, Provider, RenderOptions, parse_text_calls, repair_json, strict_schema, tools_prompt,
};
use toolsmith::{
    Args, FnTool, Image, MAX_JSON_DEPTH, RegistrationError, Tool, ToolArgs, ToolArguments,
    ToolCallManager, ToolCallRequest, ToolCallResult, ToolDeclarations, ToolDefinition, ToolError,
    ToolErrorKind, lenient,
};

use crate::support::deep::{self, LEVELS, free, on_small_stack};

/// What every refusal says.
fn too_deep() -> String {
    format!("nested deeper than {MAX_JSON_DEPTH} levels")
}

fn assert_too_deep(error: &ToolError, tool: &str) {
    match error {
        ToolError::InvalidArguments {
            tool: named,
            reason,
        } => {
            assert_eq!(named, tool, "{error}");
            assert!(reason.contains(&too_deep()), "{error}");
        }
        other => panic!("expected InvalidArguments for '{tool}', got {other:?}"),
    }
}

#[test]
fn repair_json_refuses_deep_text() {
    on_small_stack(|| {
        for levels in LEVELS {
            for text in deep::texts(levels) {
                let err = repair_json(&text).unwrap_err();
                assert!(err.too_deep, "{levels}: {err}");
                assert!(err.message.contains(&too_deep()), "{levels}: {err}");
                // Inside a Markdown fence, as text backends write it.
                let fenced = format!("```json\n{text}\n```");
                assert!(repair_json(&fenced).unwrap_err().too_deep);
            }
        }
    });
}

#[test]
fn repair_json_reads_up_to_the_limit() {
    on_small_stack(|| {
        // At the limit, through every reader: strict JSON, the JSON5 repair (a trailing
        // comma), and the closing of a cut-off text.
        for text in [
            deep::array_text(MAX_JSON_DEPTH, true),
            format!(
                "{}1,{}",
                "[".repeat(MAX_JSON_DEPTH),
                "]".repeat(MAX_JSON_DEPTH)
            ),
            deep::array_text(MAX_JSON_DEPTH, false),
            deep::object_text(MAX_JSON_DEPTH, true),
            format!(
                "{}1,{}",
                "{a:".repeat(MAX_JSON_DEPTH),
                "}".repeat(MAX_JSON_DEPTH)
            ),
            deep::object_text(MAX_JSON_DEPTH, false),
        ] {
            let value = repair_json(&text).unwrap_or_else(|err| panic!("{text}: {err}"));
            free(value);
        }
        // One past it, the same texts are refused.
        for text in deep::texts(MAX_JSON_DEPTH + 1) {
            assert!(repair_json(&text).unwrap_err().too_deep, "{text}");
        }
        // Brackets inside strings do not count.
        let quoted = format!(
            r#"{{"a": "{}", 'b': '{}'}}"#,
            "[".repeat(500),
            "{".repeat(500)
        );
        assert!(repair_json(&quoted).is_ok());
    });
}

/// A response of `provider` with two calls: `deep` with `arguments` (placed as they are), and
/// `add` with ordinary arguments.
fn response(provider: Provider, arguments: Value) -> Value {
    let add = r#"{"a": 1, "b": 2}"#;
    let (mut response, slot) = match provider {
        Provider::OpenAiChat => (
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "deep", "arguments": null}},
                {"id": "c2", "type": "function", "function": {"name": "add", "arguments": add}}
            ]}}]}),
            "/choices/0/message/tool_calls/0/function/arguments",
        ),
        Provider::OpenAiResponses => (
            json!({"output": [
                {"type": "function_call", "call_id": "c1", "name": "deep", "arguments": null},
                {"type": "function_call", "call_id": "c2", "name": "add", "arguments": add}
            ]}),
            "/output/0/arguments",
        ),
        Provider::Anthropic => (
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "c1", "name": "deep", "input": null},
                {"type": "tool_use", "id": "c2", "name": "add", "input": {"a": 1, "b": 2}}
            ]}),
            "/content/0/input",
        ),
        Provider::Gemini => (
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"id": "c1", "name": "deep", "args": null}},
                {"functionCall": {"id": "c2", "name": "add", "args": {"a": 1, "b": 2}}}
            ]}}]}),
            "/candidates/0/content/parts/0/functionCall/args",
        ),
        _ => unreachable!("text responses are written as text"),
    };
    // Moved in, not through `json!`, which would copy the value recursively.
    *response.pointer_mut(slot).expect("the slot exists") = arguments;
    response
}

/// The deep call is rejected, with the limit in its error, and the other call is read.
fn assert_only_deep_rejected(calls: &[ParsedCall], deep_id: &str) {
    assert_eq!(calls.len(), 2, "{calls:?}");
    let rejected = calls[0].as_ref().unwrap_err();
    assert_eq!(
        (rejected.id.as_str(), rejected.name.as_str()),
        (deep_id, "deep")
    );
    assert_too_deep(&rejected.error, "deep");
    let add = calls[1].as_ref().unwrap();
    assert_eq!(add.name, "add");
    assert_eq!(add.arguments.as_value(), &json!({"a": 1, "b": 2}));
}

#[test]
fn every_provider_rejects_a_deep_arguments_string_alone() {
    on_small_stack(|| {
        for provider in [
            Provider::OpenAiChat,
            Provider::OpenAiResponses,
            Provider::Anthropic,
            Provider::Gemini,
        ] {
            for levels in LEVELS {
                for text in deep::texts(levels) {
                    // A JSON string holding the deep text as a string (encoded twice) too.
                    let twice = Value::String(text.clone()).to_string();
                    for arguments in [text, twice] {
                        let response = response(provider, Value::String(arguments));
                        let calls = provider.parse_calls(&response).unwrap();
                        assert_only_deep_rejected(&calls, "c1");
                    }
                }
            }
        }
    });
}

#[test]
fn every_provider_rejects_deep_argument_values_alone() {
    on_small_stack(|| {
        for provider in [
            Provider::OpenAiChat,
            Provider::OpenAiResponses,
            Provider::Anthropic,
            Provider::Gemini,
        ] {
            for levels in LEVELS {
                for arguments in [deep::object(levels), deep::array(levels)] {
                    // The caller built this response; it frees it without recursion.
                    let response = response(provider, arguments);
                    let calls = provider.parse_calls(&response).unwrap();
                    assert_only_deep_rejected(&calls, "c1");
                    free(response);
                }
                // The arguments object itself at the limit is read, one past it is not.
                let mut at_limit = deep::object(MAX_JSON_DEPTH);
                let calls = provider
                    .parse_calls(&response(provider, at_limit.clone()))
                    .unwrap();
                assert!(calls[0].is_ok(), "{provider}: {:?}", calls[0]);
                at_limit = json!({"a": at_limit});
                let calls = provider.parse_calls(&response(provider, at_limit)).unwrap();
                assert_only_deep_rejected(&calls, "c1");
            }
        }
    });
}

#[test]
fn text_calls_reject_deep_json() {
    on_small_stack(|| {
        let add = r#"<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>"#;
        for levels in LEVELS {
            for text in deep::texts(levels) {
                // Inline arguments, and arguments as a JSON string.
                let quoted = Value::String(text.clone()).to_string();
                for arguments in [&text, &quoted] {
                    let completion = format!(
                        "<tool_call>{{\"name\": \"deep\", \"arguments\": {arguments}}}</tool_call>\n{add}"
                    );
                    let calls = parse_text_calls(&completion);
                    assert_eq!(calls.len(), 2, "{calls:?}");
                    let rejected = calls[0].as_ref().unwrap_err();
                    assert_eq!(rejected.name, "deep");
                    assert_too_deep(&rejected.error, "deep");
                    assert_eq!(calls[1].as_ref().unwrap().name, "add");
                    let calls = Provider::Text
                        .parse_calls(&Value::String(completion))
                        .unwrap();
                    assert_eq!(calls.len(), 2);
                }
                // Bare and fenced deep JSON, as the whole answer: no call, or a rejected one.
                for completion in [text.clone(), format!("Here:\n```json\n{text}\n```")] {
                    for call in parse_text_calls(&completion) {
                        assert_eq!(
                            call.unwrap_err().error.kind(),
                            ToolErrorKind::InvalidArguments
                        );
                    }
                }
            }
        }
    });
}

/// A manager with `open` (any object: the fast check would pass anything), `nested` (a
/// schema only the full validator checks) and `count` runs of either.
fn manager() -> (ToolCallManager, Arc<AtomicUsize>) {
    let manager = ToolCallManager::new("deep");
    let runs = Arc::new(AtomicUsize::new(0));
    for (name, schema) in [
        ("open", json!({"type": "object"})),
        (
            "nested",
            json!({"type": "object", "properties": {"x": {"type": "array"}}}),
        ),
    ] {
        let runs = Arc::clone(&runs);
        manager
            .register(Arc::new(FnTool::new(
                name,
                "Count the call.",
                Args::new(schema),
                move |_: ToolArgs<'_>| {
                    runs.fetch_add(1, Ordering::SeqCst);
                    async { Ok(ToolCallResult::text("ran")) }
                },
            )))
            .unwrap();
    }
    (manager, runs)
}

#[test]
fn validation_and_execution_refuse_deep_arguments() {
    on_small_stack(|| {
        let (manager, runs) = manager();
        for levels in LEVELS {
            for value in [deep::array(levels), deep::object(levels)] {
                let arguments = ToolArguments::from_iter([("x", value)]);
                for tool in ["open", "nested"] {
                    let err = manager.validate_arguments(tool, &arguments).unwrap_err();
                    assert_too_deep(&err, tool);
                    let request = ToolCallRequest::new("1", tool, arguments.clone());
                    let err =
                        futures::executor::block_on(manager.execute_one(&request)).unwrap_err();
                    assert_too_deep(&err, tool);
                    let outcomes = futures::executor::block_on(
                        manager.execute_batch(std::slice::from_ref(&request)),
                    );
                    assert_too_deep(outcomes[0].result.as_ref().unwrap_err(), tool);
                }
                // Dropped here, with clones shared by the requests above: freed by
                // Toolsmith without recursion.
                drop(arguments);
            }
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0, "no deep call ran");
        // At the limit the call runs.
        let arguments = ToolArguments::from_iter([("x", deep::array(MAX_JSON_DEPTH - 1))]);
        let request = ToolCallRequest::new("1", "nested", arguments);
        futures::executor::block_on(manager.execute_one(&request)).unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn deep_tool_arguments_are_copied_shown_and_freed_without_recursion() {
    on_small_stack(|| {
        for levels in LEVELS {
            let arguments = ToolArguments::from_iter([("x", deep::array(levels))]);
            let shared = arguments.clone();
            assert!(arguments == shared);
            // A write to shared arguments copies them.
            let mut written = shared.clone();
            written.insert("y", 1);
            assert!(written != arguments);
            // The copy is a real one.
            assert_eq!(written.len(), 2);
            // Shown and serialised without following the nesting down.
            assert!(arguments.to_string().contains(&too_deep()));
            assert!(format!("{arguments:?}").contains(&too_deep()));
            let err = serde_json::to_string(&arguments).unwrap_err();
            assert!(err.to_string().contains(&too_deep()), "{err}");
            // Taken out while shared: a copy, which the test now owns.
            free(shared.into_value());
            drop((arguments, written));
        }
    });
}

#[test]
fn lenient_reads_refuse_deep_values() {
    on_small_stack(|| {
        for levels in LEVELS {
            for value in [deep::array(levels), deep::object(levels)] {
                let err = lenient::from_value::<Value>(&value).unwrap_err();
                assert!(err.message.contains(&too_deep()), "{err}");
                let arguments = ToolArguments::from_iter([("x", value)]);
                let err = ToolArgs::new("t", &arguments)
                    .field::<Value>("x")
                    .unwrap_err();
                assert_too_deep(&err, "t");
            }
        }
        let at_limit = deep::array(MAX_JSON_DEPTH);
        assert_eq!(lenient::from_value::<Value>(&at_limit).unwrap(), at_limit);
    });
}

#[test]
fn deep_results_are_refused_when_rendered() {
    on_small_stack(|| {
        let manager = ToolCallManager::new("deep-results");
        manager
            .register(Arc::new(
                FnTool::new(
                    "make",
                    "Make a value.",
                    Args::empty(),
                    |_: ToolArgs<'_>| async { Ok(ToolCallResult::json(json!({"ok": true}))) },
                )
                .with_returns(Args::new(json!({"type": "object"}))),
            ))
            .unwrap();
        // A value with images beside it is refused as one alone is.
        let alone = |value| ToolCallResult::json(value);
        let with_image = |value| {
            let png = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
            ToolCallResult::json_with_images(value, [png])
        };
        for levels in LEVELS {
            for (value, make) in [
                (
                    deep::array(levels),
                    &alone as &dyn Fn(Value) -> ToolCallResult,
                ),
                (deep::object(levels), &alone),
                (deep::array(levels), &with_image),
                (deep::object(levels), &with_image),
            ] {
                let results = vec![
                    ("1".to_owned(), "make".to_owned(), Ok(make(value))),
                    (
                        "2".to_owned(),
                        "make".to_owned(),
                        Ok(ToolCallResult::error("failed")),
                    ),
                ];
                let err = manager
                    .check_result("make", results[0].2.as_ref().unwrap())
                    .unwrap_err();
                assert_eq!(err.kind(), ToolErrorKind::Execution);
                assert!(err.to_string().contains(&too_deep()), "{err}");
                for provider in Provider::ALL {
                    for rendered in [
                        manager.render_results(provider, &results),
                        provider.render_results(&results),
                    ] {
                        let text = Value::Array(rendered).to_string();
                        assert!(text.contains(&too_deep()), "{provider}: {text}");
                        assert!(text.contains("failed"), "{provider}: {text}");
                    }
                }
                let content = &results[0].2.as_ref().unwrap().content;
                assert!(content.to_text().contains(&too_deep()));
                for (_, _, result) in results {
                    match result {
                        Ok(ToolCallResult {
                            content: toolsmith::UserModelContent::Json(value),
                            ..
                        }) => free(value),
                        Ok(ToolCallResult {
                            content: toolsmith::UserModelContent::JsonWithImages(json),
                            ..
                        }) => free(json.into_parts().0),
                        _ => {}
                    }
                }
            }
        }
    });
}

#[test]
fn deep_schemas_are_refused_when_registered_or_rendered() {
    on_small_stack(|| {
        let manager = ToolCallManager::new("deep-schemas");
        let noop = |_: ToolArgs<'_>| async { Ok(ToolCallResult::empty()) };
        for levels in LEVELS {
            let tool = FnTool::new("deep", "Deep.", Args::new(deep::schema(levels)), noop);
            match manager.register(Arc::new(tool)).unwrap_err() {
                err @ RegistrationError::InvalidSchema { .. } => {
                    assert!(err.to_string().contains(&too_deep()), "{err}")
                }
                other => panic!("{other:?}"),
            }
            let tool = FnTool::new("deep", "Deep.", Args::empty(), noop)
                .with_returns(Args::new(deep::schema(levels)));
            match manager.register(Arc::new(tool)).unwrap_err() {
                err @ RegistrationError::InvalidReturnsSchema { .. } => {
                    assert!(err.to_string().contains(&too_deep()), "{err}")
                }
                other => panic!("{other:?}"),
            }
            assert!(manager.is_empty());

            // Declarations a caller put together, never registered.
            let definition = ToolDefinition::new("deep", "Deep.", Args::new(deep::schema(levels)));
            let declarations = ToolDeclarations {
                shed: None,
                tools: vec![Tool::MultiCommands("group".into(), vec![definition])],
            };
            for provider in Provider::ALL {
                let err = provider
                    .render_tools(&declarations, &RenderOptions::default())
                    .unwrap_err();
                assert_eq!(err.tool, "group");
                assert!(err.to_string().contains(&too_deep()), "{err}");
            }
            assert!(format!("{declarations:?}").contains(&too_deep()));
            assert!(declarations.clone() == declarations);

            let schema = deep::schema(levels);
            for provider in [Provider::OpenAiChat, Provider::Anthropic] {
                let err = strict_schema(provider, "deep", &schema).unwrap_err();
                assert!(err.to_string().contains(&too_deep()), "{err}");
            }
            let mut tool = serde_json::Map::new();
            tool.insert("name".into(), json!("deep"));
            tool.insert("parameters".into(), schema);
            let tools = Value::Array(vec![Value::Object(tool)]);
            assert!(tools_prompt(&tools).contains(&too_deep()));
            free(tools);
        }

        // One level past the limit, refused; at the limit, a tool registers, renders for
        // every provider, and validates and runs a call.
        let tool = FnTool::new(
            "deepest",
            "Deepest.",
            Args::new(deep::schema(MAX_JSON_DEPTH + 1)),
            noop,
        );
        assert!(manager.register(Arc::new(tool)).is_err());
        let tool = FnTool::new(
            "deepest",
            "Deepest.",
            Args::new(deep::schema(MAX_JSON_DEPTH)),
            noop,
        );
        manager.register(Arc::new(tool)).unwrap();
        for provider in Provider::ALL {
            provider
                .render_tools(&manager.all_declarations(), &RenderOptions::default())
                .unwrap();
        }
        let arguments = ToolArguments::from_iter([("a", deep::array(MAX_JSON_DEPTH - 3))]);
        let request = ToolCallRequest::new("1", "deepest", arguments);
        futures::executor::block_on(manager.execute_one(&request)).unwrap();
        let wrong = ToolArguments::try_from(json!({"a": "x"})).unwrap();
        let err = manager.validate_arguments("deepest", &wrong).unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);

        // `shed` writes its results as JSON text, but not one too deep to read back: that one
        // is a value, refused when checked or rendered as any tool's too-deep result is.
        let select = ToolArguments::try_from(json!({"description": "select:deepest"})).unwrap();
        let request = ToolCallRequest::new("2", "shed", select);
        let found = futures::executor::block_on(manager.execute_one(&request)).unwrap();
        assert!(matches!(
            found.content,
            toolsmith::UserModelContent::Json(_)
        ));
        let err = manager.check_result("shed", &found).unwrap_err();
        assert!(err.to_string().contains(&too_deep()), "{err}");
        let rendered = manager.render_results(Provider::OpenAiChat, [("2", "shed", &Ok(found))]);
        assert!(
            rendered[0]["content"]
                .as_str()
                .unwrap()
                .contains(&too_deep())
        );
    });
}
