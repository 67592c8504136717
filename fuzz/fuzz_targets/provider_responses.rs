//! Provider responses (model output as an API sends it): bytes read as JSON with
//! serde_json's own depth limit, then every reader of every provider format.
//!
//! Asserts, beyond "no panic": `parse_answer` is what `parse_calls`, `parse_text` and
//! `parse_stop_reason` read apart (or the first of their errors), as its doc promises; every
//! call has a non-empty id and a readable call's arguments are an object; a call whose id is
//! the generated one of its place (`toolsmith-call-N`) shares it with no other call of the
//! answer (`distinct_generated_ids`); a turn sent back as the provider wrote it (Anthropic,
//! Responses, Gemini) holds its calls under the ids their results are sent with, in order,
//! each with a name.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith::provider::{GENERATED_CALL_ID_PREFIX, ParsedCall, Provider};

fuzz_target!(|data: &[u8]| {
    let Ok(response) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for provider in Provider::ALL {
        check(provider, &response);
    }
});

fn check(provider: Provider, response: &Value) {
    let calls = provider.parse_calls(response);
    let text = provider.parse_text(response);
    let stop = provider.parse_stop_reason(response);
    let answer = provider.parse_answer(response);
    let entries = provider.parse_turn_entries(response);
    if let Ok(calls) = &calls {
        check_calls(provider, calls);
        if let Ok(Some(entries)) = &entries {
            check_turn(provider, calls, entries, response);
        }
    }
    match (answer, calls, text, stop) {
        (Ok(answer), Ok(calls), Ok(text), Ok(stop)) => {
            assert_eq!(answer.calls, calls, "{provider}: calls of {response}");
            assert_eq!(answer.text, text, "{provider}: text of {response}");
            assert_eq!(answer.stop_reason, stop, "{provider}: stop of {response}");
        }
        (Err(whole), calls, text, stop) => {
            let first = calls
                .err()
                .or_else(|| text.err())
                .or_else(|| stop.err())
                .unwrap_or_else(|| {
                    panic!(
                        "{provider}: parse_answer failed ({whole}) where every part read {response}"
                    )
                });
            assert_eq!(whole, first, "{provider}: the error of {response}");
        }
        (Ok(_), calls, text, stop) => panic!(
            "{provider}: parse_answer read {response} where a part failed: {:?} {:?} {:?}",
            calls.err(),
            text.err(),
            stop.err()
        ),
    }
}

fn check_calls(provider: Provider, calls: &[ParsedCall]) {
    let ids: Vec<&str> = calls
        .iter()
        .map(|call| match call {
            Ok(request) => request.id.as_str(),
            Err(rejected) => rejected.id.as_str(),
        })
        .collect();
    for (index, call) in calls.iter().enumerate() {
        assert!(
            !ids[index].is_empty(),
            "{provider}: call {index} has an empty id"
        );
        if let Ok(request) = call {
            assert!(
                request.arguments.as_value().is_object(),
                "{provider}: call {index}"
            );
            assert!(
                !request.name.is_empty(),
                "{provider}: call {index} runs with no name"
            );
        }
        if ids[index] == format!("{GENERATED_CALL_ID_PREFIX}{index}") {
            let sharing = ids.iter().filter(|id| **id == ids[index]).count();
            assert_eq!(
                sharing, 1,
                "{provider}: generated id {} shared: {ids:?}",
                ids[index]
            );
        }
    }
}

/// The calls of a turn sent back as written, by (id, name): Anthropic's `tool_use` blocks,
/// Responses' `function_call` items, Gemini's `functionCall` parts (which carry no id of
/// their own to check).
fn turn_calls(provider: Provider, entries: &[Value]) -> Vec<(Option<String>, Option<String>)> {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    match provider {
        Provider::Anthropic => entries
            .iter()
            .filter_map(|entry| entry.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|block| (text(block.get("id")), text(block.get("name"))))
            .collect(),
        Provider::OpenAiResponses => entries
            .iter()
            .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
            .map(|item| (text(item.get("call_id")), text(item.get("name"))))
            .collect(),
        Provider::Gemini => entries
            .iter()
            .filter_map(|entry| entry.get("parts").and_then(Value::as_array))
            .flatten()
            .filter_map(|part| part.get("functionCall"))
            .map(|call| (None, text(call.get("name"))))
            .collect(),
        _ => Vec::new(),
    }
}

fn check_turn(provider: Provider, calls: &[ParsedCall], entries: &[Value], response: &Value) {
    let in_turn = turn_calls(provider, entries);
    if !matches!(
        provider,
        Provider::Anthropic | Provider::OpenAiResponses | Provider::Gemini
    ) {
        return;
    }
    assert_eq!(
        in_turn.len(),
        calls.len(),
        "{provider}: the turn holds another number of calls than were read from {response}"
    );
    for (index, ((id, name), call)) in in_turn.iter().zip(calls).enumerate() {
        let call_id = match call {
            Ok(request) => &request.id,
            Err(rejected) => &rejected.id,
        };
        if provider != Provider::Gemini {
            let sent = provider.call_id_as_sent(call_id);
            assert_eq!(
                id.as_deref(),
                Some(sent.as_ref()),
                "{provider}: call {index} of the turn of {response}"
            );
        }
        assert!(
            name.as_deref().is_some_and(|name| !name.is_empty()),
            "{provider}: call {index} of the turn has no name: {response}"
        );
    }
}
