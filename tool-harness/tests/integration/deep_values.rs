//! JSON values nested far deeper than any parser allows, handed to the harness's model
//! paths as values (a user's script, a transcript built or replayed): refused or passed on
//! without a recursion once per level, which would overflow a 2 MiB stack and abort.

use std::future::Future;

use futures::executor::block_on;
use serde_json::{Map, Value, json};
use toolsmith_core::provider::Provider;
use toolsmith_core::{
    MAX_JSON_DEPTH, ToolArguments, ToolCallResult, ToolShed, free_value, tool_fn,
};
use toolsmith_harness::agent::{AgentSession, AgenticError};
use toolsmith_harness::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelCall, ModelError, ProviderTurn,
    ScriptedModel, ScriptedTurn,
};

/// Far past the limit, and far past what a recursive walk fits in 2 MiB.
const LEVELS: usize = 10_000;

/// Runs `test` on a thread with a Tokio worker's 2 MiB stack: a stack overflow there aborts
/// the test binary (which is how these tests fail); a panic is passed on.
fn on_small_stack(test: impl FnOnce() + Send + 'static) {
    let joined = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(test)
        .expect("spawn a test thread")
        .join();
    if let Err(payload) = joined {
        std::panic::resume_unwind(payload);
    }
}

/// `{"a": [[…1…]]}`, the array `levels` deep, built without recursion.
fn deep_arguments(levels: usize) -> Value {
    let mut value = Value::from(1);
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    let mut object = Map::new();
    object.insert("a".to_owned(), value);
    Value::Object(object)
}

/// The reason a call's arguments nested too deep are refused with: it names the argument.
fn too_deep_reason() -> String {
    format!(
        "Invalid arguments for tool 't': the arguments are nested deeper than {MAX_JSON_DEPTH} levels, in '/a'; send them with less nesting"
    )
}

/// The error the model's only call was rejected with.
fn rejection(model: &ScriptedModel) -> String {
    let response = block_on(model.complete(&ChatRequest::default())).expect("an answer");
    let [call] = response.calls.as_slice() else {
        panic!("one call expected, got {}", response.calls.len());
    };
    call.as_ref()
        .expect_err("a rejected call")
        .error
        .to_string()
}

#[test]
fn a_scripted_call_nested_too_deep_is_rejected_as_a_providers_is() {
    on_small_stack(|| {
        let turn = ScriptedTurn::call("t", deep_arguments(LEVELS));
        // A copy of the turn, answered, and the turn dropped unused.
        let model = ScriptedModel::new([turn.clone(), turn]);
        assert_eq!(rejection(&model), too_deep_reason());
        drop(model);
    });
}

#[test]
fn a_replayed_call_nested_too_deep_is_rejected_as_a_providers_is() {
    on_small_stack(|| {
        let arguments = ToolArguments::try_from(deep_arguments(LEVELS)).expect("an object");
        let transcript = [
            Message::user("Deep?"),
            Message::assistant_calls(None, vec![ModelCall::new("c1", "t", arguments)]),
        ];
        let model = ScriptedModel::replaying(&transcript);
        assert_eq!(rejection(&model), too_deep_reason());
    });
}

/// Answers with a JSON value nested `LEVELS` deep.
#[tool_fn]
async fn deep_result() -> ToolCallResult {
    let mut deep = Value::from(1);
    for _ in 0..LEVELS {
        deep = Value::Array(vec![deep]);
    }
    ToolCallResult::json(deep)
}

/// Runs `test` on a current-thread runtime on a 2 MiB stack.
fn on_small_runtime<F: Future<Output = ()> + 'static>(test: impl FnOnce() -> F + Send + 'static) {
    on_small_stack(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(test());
    });
}

// Bounded before this file's fixes too (the manager checks a result before the transcript
// keeps it): kept so that it stays so.
#[test]
fn a_tool_result_nested_too_deep_reaches_the_model_as_an_error() {
    on_small_runtime(|| async {
        let model = ScriptedModel::new([
            ScriptedTurn::call("deep_result", json!({})),
            ScriptedTurn::text("Done."),
        ]);
        let session = AgentSession::builder(model.clone())
            .with_model("m")
            .with_toolshed(ToolShed::new().tool(DeepResult))
            .build()
            .expect("a session");
        session.tool_manager().activate(&["deep_result".to_owned()]);
        let run = session.send("Deep?").await.expect("a run");
        let Message::ToolResults { results } = &run.transcript[2] else {
            panic!("{:?}", run.transcript[2]);
        };
        assert!(results[0].result.is_error());
        assert_eq!(
            results[0].result.content.to_text(),
            format!(
                "Tool 'deep_result' failed: its result is nested deeper than {MAX_JSON_DEPTH} levels"
            )
        );
    });
}

#[test]
fn a_provider_turn_nested_too_deep_is_a_malformed_response() {
    on_small_runtime(|| async {
        // A client of the user's that built the provider's turn itself, from a stream.
        let model = ScriptedModel::new([ScriptedTurn::respond(|_| {
            let mut response = ChatResponse::text("Deep.");
            response.provider_turn = Some(ProviderTurn {
                provider: Provider::OpenAiChat,
                entries: vec![json!({"role": "assistant"}), deep_arguments(LEVELS)],
            });
            Ok(response)
        })]);
        let session = AgentSession::builder(model.clone())
            .with_model("m")
            .build()
            .expect("a session");
        let err = session.send("Deep?").await.expect_err("a refused answer");
        let AgenticError::Model { source, .. } = &err else {
            panic!("{err}");
        };
        assert!(
            matches!(source, ModelError::MalformedResponse { .. }),
            "{source:?}"
        );
        assert!(
            source.to_string().ends_with(&format!(
                "malformed response: the answer's provider turn is nested deeper than {MAX_JSON_DEPTH} levels"
            )),
            "{source}"
        );
        // The conversation so far is kept, without the refused answer.
        assert_eq!(err.run().map(|run| run.transcript.len()), Some(1));
    });
}

#[test]
fn a_scripted_or_replayed_provider_turn_nested_too_deep_is_a_malformed_response() {
    on_small_runtime(|| async {
        let deep_turn = || ProviderTurn {
            provider: Provider::OpenAiChat,
            entries: vec![deep_arguments(LEVELS)],
        };
        let scripted = ScriptedTurn::text("Deep.").with_provider_turn(deep_turn());
        let transcript = [
            Message::user("Deep?"),
            Message::Assistant {
                text: Some("Deep.".to_owned()),
                calls: Vec::new(),
                provider_turn: Some(deep_turn()),
                stop_reason: None,
            },
        ];
        // A copy of the scripted turn, answered, and the turn itself dropped unused.
        let models = [
            ScriptedModel::new([scripted.clone(), scripted]),
            ScriptedModel::replaying(&transcript),
        ];
        // The test's own transcript is dropped as the harness drops one.
        let [_, Message::Assistant { provider_turn, .. }] = transcript else {
            unreachable!()
        };
        provider_turn
            .into_iter()
            .flat_map(|turn| turn.entries)
            .for_each(free_value);
        for model in models {
            let session = AgentSession::builder(model)
                .with_model("m")
                .build()
                .expect("a session");
            let err = session.send("Deep?").await.expect_err("a refused answer");
            assert!(
                matches!(
                    &err,
                    AgenticError::Model {
                        source: ModelError::MalformedResponse { .. },
                        ..
                    }
                ),
                "{err}"
            );
        }
    });
}
