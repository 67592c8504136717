//! Provider responses (model output as an API sends it): bytes read as JSON with
//! serde_json's own depth limit, then every reader of every provider format.
//!
//! Asserts, beyond "no panic": `parse_answer` is what `parse_calls`, `parse_text` and
//! `parse_stop_reason` read apart (or the first of their errors), as its doc promises; every
//! call has a non-empty id (but where `takes_ids_as_written`) and a readable call's
//! arguments are an object; a call whose id is the generated one of its place
//! (`toolsmith-call-N`) shares it with no other call of the answer
//! (`distinct_generated_ids`).

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
    let _ = provider.parse_turn_entries(response);
    if let Ok(calls) = &calls {
        check_calls(provider, calls);
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
            !ids[index].is_empty() || takes_ids_as_written(provider),
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

/// Whether `provider` keeps a call's id as the answer wrote it, even empty: Anthropic and
/// OpenAI Responses turns go back verbatim, and their results must name the ids the turn
/// has (`calls_with_empty_ids_get_ids_of_their_own` in core's `provider/mod.rs`). The other
/// formats give an empty id a generated one.
fn takes_ids_as_written(provider: Provider) -> bool {
    matches!(provider, Provider::Anthropic | Provider::OpenAiResponses)
}
