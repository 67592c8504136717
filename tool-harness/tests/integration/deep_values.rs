//! JSON values nested far deeper than any parser allows, handed to the harness's model
//! paths as values (a user's script, a transcript built or replayed): refused or passed on
//! without a recursion once per level, which would overflow a 2 MiB stack and abort.

use futures::executor::block_on;
use serde_json::{Map, Value};
use toolsmith_core::{MAX_JSON_DEPTH, ToolArguments};
use toolsmith_harness::model::{
    ChatModel, ChatRequest, Message, ModelCall, ScriptedModel, ScriptedTurn,
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

/// The reason a call's arguments nested too deep are refused with.
fn too_deep_reason() -> String {
    format!(
        "Invalid arguments for tool 't': the arguments are nested deeper than {MAX_JSON_DEPTH} levels; send them with less nesting"
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
