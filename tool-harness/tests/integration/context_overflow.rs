//! A conversation that outgrows the model's context window: with a `ContextOverflow` policy
//! the session shortens it and asks again (the system prompt and the latest user message
//! kept, no call split from its result), keeps the shortened conversation, and gives up
//! after its bound; without one the run ends with the typed error. And `edit_transcript`.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith_core::{ToolShed, tool_fn};
use toolsmith_harness::agent::{
    AgentEvent, AgentSession, AgenticError, DROPPED_RESULT, DropOldestExchanges,
    MAX_OVERFLOW_ATTEMPTS, Overflow, Shortened,
};
use toolsmith_harness::model::{
    ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn,
};

use crate::common::assert_every_call_answered;

/// Add two integers.
#[tool_fn]
fn add(
    /// The first.
    a: i64,
    /// The second.
    b: i64,
) -> i64 {
    a + b
}

const SYSTEM: &str = "You add numbers.";

/// A refusal by 10 tokens: `DropOldestExchanges` sheds 15 of its estimate (the margin),
/// about one small exchange of these conversations.
fn too_long() -> ModelError {
    ModelError::ContextTooLong {
        provider: "anthropic".into(),
        status: 400,
        message: "prompt is too long: 200010 tokens > 200000 maximum".into(),
    }
}

/// A session over `model` with `add`, the system prompt, events recorded in `events`, and
/// `DropOldestExchanges` when `policy`.
fn session(
    model: &ScriptedModel,
    policy: bool,
    events: &Arc<Mutex<Vec<AgentEvent>>>,
) -> AgentSession {
    let seen = Arc::clone(events);
    let builder = AgentSession::builder(model.clone())
        .with_model("test-model")
        .with_system_prompt(SYSTEM)
        .with_toolshed(ToolShed::new().tool(Add))
        .with_event_handler(move |event: &AgentEvent| {
            if matches!(event, AgentEvent::ContextShortened { .. }) {
                seen.lock().unwrap().push(event.clone());
            }
        });
    let builder = if policy {
        builder.with_context_overflow(DropOldestExchanges::new())
    } else {
        builder
    };
    builder.build().unwrap()
}

/// The user messages' texts in `messages`.
fn questions(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::User { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The conversation the request sends, checked: the system prompt is there, it begins
/// with a user message, and every call has its result right after it.
fn checked(request: &ChatRequest) -> &[Message] {
    assert_eq!(request.system.as_deref(), Some(SYSTEM));
    assert!(matches!(
        request.messages.first(),
        Some(Message::User { .. })
    ));
    assert_every_call_answered(&request.messages);
    &request.messages
}

#[tokio::test]
async fn the_oldest_exchange_is_dropped_whole_and_the_call_asked_again() {
    let model = ScriptedModel::new([
        // Two exchanges with a call each.
        ScriptedTurn::call("shed", json!({"description": "add"})),
        ScriptedTurn::call("add", json!({"a": 1, "b": 2})),
        ScriptedTurn::text("3"),
        ScriptedTurn::call("add", json!({"a": 3, "b": 4})),
        ScriptedTurn::text("7"),
        // The third question no longer fits.
        ScriptedTurn::error(too_long()),
        ScriptedTurn::respond(|request| {
            let messages = checked(request);
            // The first exchange (six messages: two calls) went; the second is whole (four);
            // the latest user message is last.
            assert_eq!(questions(messages), ["And 3 + 4?", "And 5 + 6?"]);
            assert_eq!(messages.len(), 5);
            assert_eq!(messages[1].calls()[0].name, "add");
            Ok(ChatResponse::text("11"))
        }),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let session = session(&model, true, &events);
    session.send("What is 1 + 2?").await.unwrap();
    session.send("And 3 + 4?").await.unwrap();
    let run = session.send("And 5 + 6?").await.unwrap();
    assert_eq!(run.text, "11");
    // Both requests count.
    assert_eq!(run.model_calls, 2);
    assert_eq!(
        *events.lock().unwrap(),
        [AgentEvent::ContextShortened {
            turn: 1,
            attempt: 1,
            dropped: 6,
            emptied: 0,
            estimate: None,
        }]
    );
    // The kept conversation is the shortened one, with the answer.
    let kept = session.transcript().await;
    assert_eq!(questions(&kept), ["And 3 + 4?", "And 5 + 6?"]);
    assert_eq!(kept.last().and_then(Message::text), Some("11"));
    model.assert_complete();
}

#[tokio::test]
async fn within_the_current_exchange_the_oldest_results_are_emptied_not_their_calls() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("shed", json!({"description": "add"})),
        ScriptedTurn::call("add", json!({"a": 1, "b": 2})),
        // Two results in: the next request does not fit.
        ScriptedTurn::error(too_long()),
        ScriptedTurn::respond(|request| {
            let messages = checked(request);
            assert_eq!(questions(messages), ["What is 1 + 2?"]);
            assert_eq!(messages.len(), 5);
            // The older result (shed's) emptied, the call kept; add's result whole.
            assert_eq!(messages[1].calls()[0].name, "shed");
            assert_eq!(
                messages[2].results()[0].result.content.to_text(),
                DROPPED_RESULT
            );
            assert_eq!(messages[4].results()[0].result.content.to_text(), "3");
            Ok(ChatResponse::text("3"))
        }),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let run = session(&model, true, &events)
        .run("What is 1 + 2?")
        .await
        .unwrap();
    assert_eq!(run.text, "3");
    assert_eq!(
        *events.lock().unwrap(),
        [AgentEvent::ContextShortened {
            turn: 3,
            attempt: 1,
            dropped: 0,
            emptied: 1,
            estimate: None,
        }]
    );
}

#[tokio::test]
async fn the_policy_is_asked_a_bounded_number_of_times_then_the_typed_error_ends_the_run() {
    // More refusals than the bound allows.
    let model = ScriptedModel::new(
        std::iter::repeat_with(|| ScriptedTurn::error(too_long()))
            .take(MAX_OVERFLOW_ATTEMPTS + 2)
            .collect::<Vec<_>>(),
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let session = session(&model, true, &events);
    // A long conversation the policy could go on shortening.
    session
        .edit_transcript(|messages| {
            for n in 0..64 {
                messages.push(Message::user(format!("question {n}")));
                messages.push(Message::assistant(format!("answer {n}")));
            }
        })
        .await;
    let error = session.send("The last question").await.unwrap_err();
    let AgenticError::Model { source, run } = &error else {
        panic!("expected the model's error, got {error:?}");
    };
    assert_eq!(source, &too_long());
    assert_eq!(run.model_calls, MAX_OVERFLOW_ATTEMPTS + 1);
    assert_eq!(model.requests().len(), MAX_OVERFLOW_ATTEMPTS + 1);
    assert_eq!(events.lock().unwrap().len(), MAX_OVERFLOW_ATTEMPTS);
    // Shortened each time, the latest user message kept; the kept conversation is the
    // last one sent.
    let sent: Vec<usize> = model.requests().iter().map(|r| r.messages.len()).collect();
    assert!(sent.windows(2).all(|pair| pair[1] < pair[0]), "{sent:?}");
    let kept = session.transcript().await;
    assert_eq!(kept, run.transcript);
    assert_eq!(kept.last(), Some(&Message::user("The last question")));
    assert_eq!(kept, model.requests().last().unwrap().messages);
}

#[tokio::test]
async fn a_policy_that_shortens_nothing_ends_the_run_at_once() {
    let model = ScriptedModel::new([ScriptedTurn::error(too_long())]);
    let events = Arc::new(Mutex::new(Vec::new()));
    // Only the user's message: nothing the policy may drop.
    let error = session(&model, true, &events)
        .run("A question far too long")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, AgenticError::Model { source: ModelError::ContextTooLong { .. }, run }
            if run.model_calls == 1),
        "{error:?}"
    );
    assert!(events.lock().unwrap().is_empty());
}

#[tokio::test]
async fn without_a_policy_the_run_ends_with_the_typed_error_and_the_run() {
    let model = ScriptedModel::new([ScriptedTurn::text("Hi."), ScriptedTurn::error(too_long())]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let session = session(&model, false, &events);
    session.send("Hello").await.unwrap();
    let error = session.send("A question far too long").await.unwrap_err();
    let AgenticError::Model { source, run } = &error else {
        panic!("expected the model's error, got {error:?}");
    };
    assert_eq!(source, &too_long());
    assert_eq!(run.model_calls, 1);
    assert_eq!(
        questions(&run.transcript),
        ["Hello", "A question far too long"]
    );
    assert_eq!(model.requests().len(), 2);
    assert!(events.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_policy_of_one_s_own_and_its_panic() {
    // A closure is a policy: here it forgets everything before the latest message.
    let model = ScriptedModel::new([
        ScriptedTurn::text("Hi."),
        ScriptedTurn::error(too_long()),
        ScriptedTurn::respond(|request| {
            assert_eq!(request.messages, [Message::user("Again")]);
            Ok(ChatResponse::text("Hello again."))
        }),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("test-model")
        .with_context_overflow(|messages: &mut Vec<Message>, _: &Overflow<'_>| {
            let dropped = messages.len() - 1;
            messages.drain(..dropped);
            Shortened::new(dropped, 0)
        })
        .build()
        .unwrap();
    session.send("Hello").await.unwrap();
    assert_eq!(session.send("Again").await.unwrap().text, "Hello again.");

    let model = ScriptedModel::new([ScriptedTurn::error(too_long())]);
    let session = AgentSession::builder(model)
        .with_model("test-model")
        .with_context_overflow(|_: &mut Vec<Message>, _: &Overflow<'_>| -> Shortened {
            panic!("the policy broke")
        })
        .build()
        .unwrap();
    let error = session.run("Hello").await.unwrap_err();
    assert!(
        matches!(&error, AgenticError::Panicked { during, message, .. }
            if during.contains("context overflow policy") && message == "the policy broke"),
        "{error:?}"
    );
}

#[tokio::test]
async fn edit_transcript_changes_what_the_next_send_sends() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Noted."),
        ScriptedTurn::respond(|request| {
            assert_eq!(
                request.messages,
                [
                    Message::user("A summary of what came before."),
                    Message::user("Go on.")
                ]
            );
            Ok(ChatResponse::text("Going on."))
        }),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let session = session(&model, false, &events);
    session.send("A long story.").await.unwrap();
    let before = session
        .edit_transcript(|messages| {
            let before = messages.len();
            *messages = vec![Message::user("A summary of what came before.")];
            before
        })
        .await;
    assert_eq!(before, 2);
    assert_eq!(session.send("Go on.").await.unwrap().text, "Going on.");
    model.assert_complete();
}
