//! Round trips through each provider format (render → scripted response → parse → execute →
//! render results), broken JSON, errors written for the model, result checks and caching.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::support::provider_tools::{manager, run_calls};
use serde_json::{Value, json};
use toolsmith::provider::{Declared, Provider, RenderOptions, repair_json};
use toolsmith::{
    Args, FnTool, JsonText, ToolArgs, ToolCallManager, ToolCallResult, ToolErrorKind, scheme,
};

/// A response of `provider` calling `name` with `arguments` (a JSON value; for the formats
/// that carry arguments as a string, its text, or `raw` when given).
fn response(provider: Provider, calls: &[(&str, &str, Value, Option<&str>)]) -> Value {
    let text =
        |args: &Value, raw: Option<&str>| raw.map_or_else(|| args.to_string(), str::to_owned);
    match provider {
        Provider::OpenAiChat => {
            json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": calls.iter().map(|(id, name, args, raw)| json!({
                "id": id, "type": "function", "function": {"name": name, "arguments": text(args, *raw)}
            })).collect::<Vec<_>>()}}]})
        }
        Provider::OpenAiResponses => {
            json!({"output": calls.iter().map(|(id, name, args, raw)| json!({
            "type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
            "arguments": text(args, *raw)
        })).collect::<Vec<_>>()})
        }
        Provider::Anthropic => {
            json!({"role": "assistant", "content": calls.iter().map(|(id, name, args, _)| json!({
            "type": "tool_use", "id": id, "name": name, "input": args
        })).collect::<Vec<_>>()})
        }
        Provider::Gemini => {
            json!({"candidates": [{"content": {"role": "model", "parts": calls.iter().map(|(id, name, args, _)| json!({
            "functionCall": {"id": id, "name": name, "args": args}
        })).collect::<Vec<_>>()}}]})
        }
        _ => Value::String(
            calls
                .iter()
                .map(|(id, name, args, raw)| match raw {
                    Some(raw) => format!("<tool_call>{raw}</tool_call>"),
                    None => format!(
                        "<tool_call>{}</tool_call>",
                        json!({"id": id, "name": name, "arguments": args})
                    ),
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// The text each rendered result carries, in call order, with its id.
fn rendered_texts(provider: Provider, rendered: &[Value]) -> Vec<(String, String, bool)> {
    match provider {
        Provider::OpenAiChat => rendered
            .iter()
            .map(|m| {
                (
                    s(&m["tool_call_id"]),
                    s(&m["content"]),
                    s(&m["content"]).starts_with("Error: "),
                )
            })
            .collect(),
        Provider::OpenAiResponses => rendered
            .iter()
            .map(|m| {
                (
                    s(&m["call_id"]),
                    s(&m["output"]),
                    s(&m["output"]).starts_with("Error: "),
                )
            })
            .collect(),
        Provider::Anthropic => rendered[0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    s(&b["tool_use_id"]),
                    s(&b["content"]),
                    b["is_error"] == json!(true),
                )
            })
            .collect(),
        Provider::Gemini => rendered[0]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let r = &p["functionResponse"];
                let error = r["response"].get("error").is_some();
                let body = if error {
                    &r["response"]["error"]
                } else {
                    &r["response"]["output"]
                };
                (s(&r["id"]), s(body), error)
            })
            .collect(),
        _ => {
            let text = rendered[0]["content"].as_str().unwrap();
            text.split("<tool_response>\n")
                .skip(1)
                .map(|block| {
                    let body = block.split_once("\n</tool_response>").unwrap().0;
                    let body: Value = serde_json::from_str(body).unwrap();
                    (
                        s(&body["id"]),
                        s(&body["content"]),
                        body["is_error"] == json!(true),
                    )
                })
                .collect()
        }
    }
}

fn s(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn every_provider_round_trips_with_ids_kept() {
    for provider in Provider::ALL {
        let (manager, memory) = manager();
        manager
            .rendered_tools(provider, Declared::All, &RenderOptions::default())
            .unwrap();
        let calls = [
            ("c1", "add", json!({"a": 20, "b": 22}), None),
            ("c2", "memory", json!({"command": "remove", "id": 3}), None),
            ("c3", "add", json!({"a": 1, "bb": 2}), None),
            ("c4", "memory", json!({"command": "forget", "id": 3}), None),
            (
                "c5",
                "get_weather",
                json!({"city": "Oslo", "unit": "fahrenheit"}),
                None,
            ),
        ];
        let parsed = provider.parse_calls(&response(provider, &calls)).unwrap();
        let outcomes = run_calls(&manager, parsed).await;
        assert_eq!(
            memory.runs.load(Ordering::SeqCst),
            1,
            "{provider}: only the valid memory call ran"
        );
        let rendered = manager.render_results(provider, &outcomes);
        let texts = rendered_texts(provider, &rendered);
        assert_eq!(texts.len(), 5, "{provider}");
        for (i, (id, text, is_error)) in texts.iter().enumerate() {
            assert_eq!(id, calls[i].0, "{provider}: ids are kept");
            assert_eq!(*is_error, i == 2 || i == 3, "{provider} {i}: {text}");
        }
        assert_eq!(texts[0].1, "42", "{provider}");
        assert_eq!(texts[1].1, "Forgot #3", "{provider}");
        assert!(
            texts[2]
                .1
                .contains("('bb' was unexpected) (for 'bb', did you mean 'b'?)"),
            "{provider}: {}",
            texts[2].1
        );
        assert!(
            texts[2]
                .1
                .contains("Correct the arguments and call 'add' again."),
            "{provider}: {}",
            texts[2].1
        );
        assert!(
            texts[3].1.contains("unknown command \"forget\""),
            "{provider}: {}",
            texts[3].1
        );
        assert!(
            texts[4].1.contains("fahrenheit"),
            "{provider}: {}",
            texts[4].1
        );
    }
}

#[tokio::test]
async fn a_broken_call_fails_alone_and_the_others_run() {
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Text,
    ] {
        let (manager, _) = manager();
        let calls = [
            (
                "ok1",
                "add",
                json!({}),
                Some(r#"{"name": "add", "arguments": {a: 1, 'b': 2,}}"#),
            ),
            (
                "bad",
                "add",
                json!({}),
                Some(r#"{"name": "add", "arguments": {"a": 1, "b": }}"#),
            ),
            (
                "ok2",
                "add",
                json!({}),
                Some(r#"{"name": "add", "arguments": {"a": 3, "b": 4"#),
            ),
        ];
        // For the OpenAI formats the raw text is the arguments string alone.
        let calls: Vec<_> = calls
            .iter()
            .map(|(id, name, args, raw)| {
                let raw = raw.unwrap();
                let raw = if provider == Provider::Text {
                    raw.to_owned()
                } else {
                    raw.split_once("\"arguments\": ")
                        .unwrap()
                        .1
                        .trim_end_matches('}')
                        .to_owned()
                        + "}"
                };
                (*id, *name, args.clone(), raw)
            })
            .collect();
        let calls: Vec<_> = calls
            .iter()
            .map(|(i, n, a, r)| (*i, *n, a.clone(), Some(r.as_str())))
            .collect();
        let parsed = provider.parse_calls(&response(provider, &calls)).unwrap();
        let outcomes = run_calls(&manager, parsed).await;
        assert_eq!(outcomes.len(), 3, "{provider}");
        assert_eq!(
            outcomes[0].2.as_ref().unwrap().content.to_text(),
            "3",
            "{provider}"
        );
        let err = outcomes[1].2.as_ref().unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{provider}");
        assert!(
            err.to_string().contains("expected value at line 1 column"),
            "{provider}: {err}"
        );
        assert_eq!(
            outcomes[2].2.as_ref().unwrap().content.to_text(),
            "7",
            "{provider}"
        );
    }
}

#[test]
fn broken_json_cases() {
    let repaired = [
        ("{\"a\": 1,}", json!({"a": 1})),
        ("{\"list\": [1, 2, 3,],}", json!({"list": [1, 2, 3]})),
        (
            "{'path': 'src/main.rs', 'mode': 'r'}",
            json!({"path": "src/main.rs", "mode": "r"}),
        ),
        (
            "{path: \"a\", max_lines: 10}",
            json!({"path": "a", "max_lines": 10}),
        ),
        ("```json\n{\"a\": 1}\n```", json!({"a": 1})),
        ("```\n{\"a\": 1}\n```", json!({"a": 1})),
        (
            "{\"a\": {\"b\": [1, {\"c\": 2}",
            json!({"a": {"b": [1, {"c": 2}]}}),
        ),
        (
            "{\"text\": \"braces } and ] in strings\"",
            json!({"text": "braces } and ] in strings"}),
        ),
        ("{\"a\": 1, // why\n\"b\": 2}", json!({"a": 1, "b": 2})),
    ];
    for (text, expected) in repaired {
        assert_eq!(
            repair_json(text).unwrap_or_else(|e| panic!("{text}: {e}")),
            expected,
            "{text}"
        );
    }
    let refused = [
        ("{\"a\": \"cut off mid-str", "EOF while parsing a string"),
        ("{\"a\": }", "expected value"),
        ("{\"a\":", "EOF while parsing a value"),
        ("{\"a\" 1}", "expected `:`"),
        ("Sure! Here are the arguments.", "expected value"),
        ("{\"a\": 1}}", "trailing characters"),
    ];
    for (text, message) in refused {
        let err = repair_json(text).unwrap_err();
        assert!(err.message.contains(message), "{text}: {err}");
    }
}

#[tokio::test]
async fn results_that_break_their_returns_schema_become_execution_errors() {
    let manager = ToolCallManager::new("returns");
    manager
        .register(Arc::new(
            FnTool::new(
                "count",
                "Count things.",
                Args::empty(),
                |_: ToolArgs<'_>| async {
                    Ok(ToolCallResult::json(
                        json!({"count": "three", "items": [1, "x"]}),
                    ))
                },
            )
            .with_returns(Args::new(
                scheme::object()
                    .required("count", scheme::integer())
                    .optional("items", scheme::array(scheme::integer()))
                    .build(),
            )),
        ))
        .unwrap();
    let request = toolsmith::ToolCallRequest::new("c1", "count", toolsmith::ToolArguments::new());
    let result = manager.execute_one(&request).await;
    let outcomes = vec![("c1".to_owned(), "count".to_owned(), result)];
    let rendered = manager.render_results(Provider::Anthropic, &outcomes);
    let block = &rendered[0]["content"][0];
    assert_eq!(block["is_error"], json!(true));
    assert_eq!(
        block["content"],
        json!(
            "Tool 'count' failed: its result does not match its `returns` schema: /count: \"three\" is not of type \"integer\"; /items/1: \"x\" is not of type \"integer\""
        )
    );
    // Without the manager nothing is checked: the provider renders what it is given.
    let unchecked = Provider::Anthropic.render_results(&outcomes);
    assert!(unchecked[0]["content"][0].get("is_error").is_none());

    // A text result, or a result that reports an error itself, is not checked.
    assert!(
        manager
            .check_result("count", &ToolCallResult::text("three"))
            .is_ok()
    );
    assert!(
        manager
            .check_result("count", &ToolCallResult::error("no"))
            .is_ok()
    );

    // A result written as JSON text is checked as its value is.
    let written = |text: &str| ToolCallResult::json_text(JsonText::new(text).unwrap());
    assert!(
        manager
            .check_result("count", &written(r#"{"count": 3, "items": [1]}"#))
            .is_ok()
    );
    let err = manager
        .check_result("count", &written(r#"{"count": "three"}"#))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool 'count' failed: its result does not match its `returns` schema: /count: \"three\" is not of type \"integer\""
    );
}

#[test]
fn a_registered_returns_schema_must_compile() {
    let manager = ToolCallManager::new("returns");
    let err = manager
        .register(Arc::new(
            FnTool::new("bad", "Bad.", Args::empty(), |_: ToolArgs<'_>| async {
                Ok(ToolCallResult::empty())
            })
            .with_returns(Args::new(json!({"type": "frobnicate"}))),
        ))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("result schema (`returns`) of tool 'bad'"),
        "{err}"
    );
}

#[test]
fn rendered_tools_are_cached_until_the_registry_or_active_set_changes() {
    let (manager, _) = manager();
    let options = RenderOptions::default();
    let render = |declared| {
        manager
            .rendered_tools(Provider::OpenAiResponses, declared, &options)
            .unwrap()
    };
    let all = render(Declared::All);
    assert!(Arc::ptr_eq(&all, &render(Declared::All)));
    let active = render(Declared::Active);
    assert_eq!(active.tools, json!([]));

    assert!(manager.activate(&["add".to_owned()]).is_empty());
    let active = render(Declared::Active);
    assert_eq!(active.tools[0]["name"], "add");
    assert!(Arc::ptr_eq(&active, &render(Declared::Active)));
    let all_again = render(Declared::All);
    assert!(!Arc::ptr_eq(&all, &all_again), "a change renders again");
    assert_eq!(*all, *all_again);

    manager.deregister("add");
    assert_eq!(render(Declared::Active).tools, json!([]));
    assert_eq!(render(Declared::All).tools.as_array().unwrap().len(), 2);

    // Other providers and options are cached apart.
    let strict = RenderOptions {
        strict: toolsmith::provider::StrictMode::Always,
    };
    let chat = manager
        .rendered_tools(Provider::OpenAiChat, Declared::All, &strict)
        .unwrap();
    assert_eq!(chat.tools[1]["function"]["strict"], json!(true));
}

#[test]
fn response_shapes() {
    let err = Provider::Anthropic
        .parse_calls(&json!({"foo": 1}))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("not a valid anthropic response"),
        "{err}"
    );
    assert!(
        Provider::OpenAiChat
            .parse_calls(&json!({"role": "assistant", "content": "Hi"}))
            .unwrap()
            .is_empty()
    );
    assert!(Provider::OpenAiChat.parse_calls(&json!(42)).is_err());
    assert!(
        Provider::Gemini
            .parse_calls(&json!({"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]}))
            .unwrap()
            .is_empty()
    );
    assert!(
        Provider::Text
            .parse_calls(&json!({"content": "The answer is 4."}))
            .unwrap()
            .is_empty()
    );
    let chat = json!({"choices": [{"message": {"content": "<tool_call>{\"name\": \"add\", \"arguments\": {}}</tool_call>"}}]});
    assert_eq!(Provider::Text.parse_calls(&chat).unwrap().len(), 1);
    assert!(Provider::Text.parse_calls(&json!([1])).is_err());
    // A call without a name is rejected alone.
    let calls = Provider::Anthropic
        .parse_calls(&json!([{"type": "tool_use", "id": "x", "input": {}}, {"type": "tool_use", "id": "y", "name": "add", "input": {}}]))
        .unwrap();
    assert_eq!(
        calls[0].as_ref().unwrap_err().error.kind(),
        ToolErrorKind::UnknownTool
    );
    assert!(calls[1].is_ok());
}

#[test]
fn tool_reported_errors_are_flagged_per_provider() {
    let outcomes = vec![(
        "e1".to_owned(),
        "add".to_owned(),
        Ok(ToolCallResult::error("Division by zero")),
    )];
    let chat = Provider::OpenAiChat.render_results(&outcomes);
    assert_eq!(chat[0]["content"], "Error: Division by zero");
    let anthropic = Provider::Anthropic.render_results(&outcomes);
    assert_eq!(anthropic[0]["content"][0]["is_error"], json!(true));
    let gemini = Provider::Gemini.render_results(&outcomes);
    assert_eq!(
        gemini[0]["parts"][0]["functionResponse"],
        json!({"id": "e1", "name": "add", "response": {"error": "Division by zero"}})
    );
    assert!(
        Provider::Anthropic
            .render_results(Vec::<(
                &str,
                &str,
                &Result<ToolCallResult, toolsmith::ToolError>
            )>::new())
            .is_empty()
    );
}

#[test]
fn the_cache_never_serves_a_stale_rendering_after_concurrent_changes() {
    let manager = Arc::new(ToolCallManager::new("concurrent"));
    let options = RenderOptions::default();
    std::thread::scope(|scope| {
        let writer = Arc::clone(&manager);
        scope.spawn(move || {
            for i in 0..50 {
                writer
                    .register(Arc::new(FnTool::new(
                        format!("t{i}"),
                        "T.",
                        Args::empty(),
                        |_: ToolArgs<'_>| async { Ok(ToolCallResult::empty()) },
                    )))
                    .unwrap();
            }
        });
        for _ in 0..2 {
            let reader = Arc::clone(&manager);
            scope.spawn(move || {
                for _ in 0..200 {
                    let tools = reader
                        .rendered_tools(Provider::Gemini, Declared::All, &options)
                        .unwrap();
                    assert!(tools.tools.is_array());
                }
            });
        }
    });
    let cached = manager
        .rendered_tools(Provider::Gemini, Declared::All, &options)
        .unwrap();
    let fresh = Provider::Gemini
        .render_tools(&manager.all_declarations(), &options)
        .unwrap();
    assert_eq!(*cached, fresh);
    assert_eq!(
        cached.tools[0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .len(),
        50
    );
}

/// Parse → `execute_parsed` → render, for every format: each call of the response, rejected
/// or run, gets its result in order under its id.
#[tokio::test]
async fn parse_execute_render_is_three_lines_and_keeps_every_call_in_order() {
    for provider in Provider::ALL {
        let (manager, _) = manager();
        let names = manager.names();
        manager.activate(&names);
        let response = response(
            provider,
            &[
                ("c1", "get_weather", json!({"city": "Oslo"}), None),
                ("c2", "get_weather", json!({}), Some("{\"city\": ")),
                ("c3", "nope", json!({}), None),
                ("c4", "get_weather", json!({"city": "Rome"}), None),
            ],
        );

        let calls = provider.parse_calls(&response).unwrap();
        let outcomes = manager.execute_parsed(&calls).await;
        let rendered = manager.render_results(provider, &outcomes);

        let texts = rendered_texts(provider, &rendered);
        assert_eq!(texts.len(), 4, "{provider}: {texts:?}");
        let ids: Vec<&str> = texts.iter().map(|(id, _, _)| id.as_str()).collect();
        if provider != Provider::Text {
            assert_eq!(ids, ["c1", "c2", "c3", "c4"], "{provider}");
        }
        let errors: Vec<bool> = texts.iter().map(|(_, _, error)| *error).collect();
        assert_eq!(errors, [false, true, true, false], "{provider}: {texts:?}");
        // Anthropic and Gemini send arguments as objects: there the second call is `{}`,
        // refused by validation; elsewhere its text is unreadable JSON.
        let refusal = match provider {
            Provider::Anthropic | Provider::Gemini => "\"city\" is a required property",
            _ => "not valid JSON",
        };
        assert!(texts[1].1.contains(refusal), "{provider}: {}", texts[1].1);
        assert!(texts[2].1.contains("nope"), "{provider}: {}", texts[2].1);
        assert_eq!(outcomes[1].attempts, 0);
        assert_eq!(outcomes[3].attempts, 1);
    }
}

#[tokio::test]
async fn a_number_json_cannot_hold_is_refused_not_run_as_null() {
    let (manager, _) = manager();
    manager.activate(&["add".into()]);
    for arguments in [
        r#"{"a": 1e400, "b": 1}"#,
        r#"{"a": NaN, "b": 1}"#,
        r#"{'a': -Infinity, 'b': 1}"#,
    ] {
        let response = json!({"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": arguments}}]});
        let calls = Provider::OpenAiChat.parse_calls(&response).unwrap();
        let rejected = calls[0].as_ref().expect_err(arguments);
        assert_eq!(
            rejected.error.kind(),
            ToolErrorKind::InvalidArguments,
            "{arguments}"
        );
        assert_eq!(rejected.as_written.as_deref(), Some(arguments));
        let outcomes = manager.execute_parsed(&calls).await;
        assert!(outcomes[0].result.is_err(), "{arguments}");
        assert_eq!(outcomes[0].attempts, 0, "{arguments}: the tool ran");
    }
}

#[tokio::test]
async fn generated_ids_stay_apart_from_the_ids_a_model_writes() {
    let (manager, _) = manager();
    manager.activate(&["add".into()]);
    // A call without an id, and one whose id is the one the first would be given (a model
    // copying an id of an earlier turn).
    let gemini = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}},
        {"functionCall": {"id": "toolsmith-call-0", "name": "add", "args": {"a": 3, "b": 4}}}]}}]});
    let calls = Provider::Gemini.parse_calls(&gemini).unwrap();
    let ids: Vec<&str> = calls
        .iter()
        .map(|c| c.as_ref().unwrap().id.as_str())
        .collect();
    assert_eq!(ids, ["toolsmith-call-0-1", "toolsmith-call-0"]);
    let outcomes = manager.execute_parsed(&calls).await;
    let texts: Vec<String> = outcomes
        .iter()
        .map(|o| o.result.as_ref().unwrap().content.to_text())
        .collect();
    assert_eq!(texts, ["3", "7"]);

    // Two ids the model itself repeated: the first call runs, the repeat is answered alone.
    let chat = json!({"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 1}"}},
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 2}"}},
        {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 3, \"b\": 3}"}}]});
    let calls = Provider::OpenAiChat.parse_calls(&chat).unwrap();
    let outcomes = manager.execute_parsed(&calls).await;
    assert_eq!(outcomes[0].result.as_ref().unwrap().content.to_text(), "2");
    let repeat = outcomes[1].result.as_ref().unwrap_err().to_string();
    assert!(
        repeat.contains("an earlier call of this answer has the id 'c1'"),
        "{repeat}"
    );
    assert_eq!(outcomes[1].attempts, 0);
    assert_eq!(outcomes[2].result.as_ref().unwrap().content.to_text(), "6");
}
