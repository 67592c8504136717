//! A panic of the user's code whose payload's own `Drop` panics (`panic_any(PanicsOnDrop)`)
//! is contained as any other panic is: the run ends with `AgenticError::Panicked` (or goes
//! on, after an event handler's), a build with a configuration error, a `{:?}` with its
//! placeholder. Before, the harness dropped such a payload as usual once it had read its
//! message, and the drop's panic unwound out of `send`, `build` or the `{:?}`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::{ToolCallRequest, ToolCallResult};
use toolsmith_harness::agent::{
    AgentEvent, AgentRun, AgentSession, AgenticError, ApprovalDecision, DropOldestExchanges,
    HookDecision, Overflow, Shortened, ToolApproval, ToolHook,
};
use toolsmith_harness::model::{
    ChatModel, ChatRequest, ChatResponse, ImageLimits, Message, ModelError, ScriptedModel,
    ScriptedTurn,
};

use crate::common::assert_every_call_answered;
use crate::common::recorded_events::Recorded;

/// What `panic_message` says of a payload that is not text.
const NOT_TEXT: &str = "a panic with a non-text payload";

/// A panic payload whose drop panics in turn.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("the payload's drop broke");
    }
}

fn panic_with_a_payload_that_panics_on_drop() -> ! {
    std::panic::panic_any(PanicsOnDrop)
}

/// The `Panicked` error's place and run, its message the payload's; any other ending fails.
fn panicked(ended: Result<AgentRun, AgenticError>) -> (String, AgentRun) {
    match ended {
        Err(AgenticError::Panicked {
            during,
            message,
            run,
        }) => {
            assert_eq!(message, NOT_TEXT);
            (during, *run)
        }
        other => panic!("expected Panicked, got {other:?}"),
    }
}

/// A hook that panics in `before_tool` or (`after`) in `after_tool`.
struct PanickingHook {
    after: bool,
}

#[async_trait]
impl ToolHook for PanickingHook {
    async fn before_tool(&self, _: &ToolCallRequest) -> HookDecision {
        if !self.after {
            panic_with_a_payload_that_panics_on_drop();
        }
        HookDecision::Allow
    }

    async fn after_tool(&self, _: &ToolCallRequest, _: &mut ToolCallResult) {
        if self.after {
            panic_with_a_payload_that_panics_on_drop();
        }
    }
}

struct PanickingApproval;

#[async_trait]
impl ToolApproval for PanickingApproval {
    async fn approve(&self, _: &ToolCallRequest) -> ApprovalDecision {
        panic_with_a_payload_that_panics_on_drop()
    }
}

#[tokio::test]
async fn hooks_and_the_approval_whose_payload_panics_on_drop_end_the_run() {
    for (name, during) in [
        ("before_tool", "the before_tool hook #1 of call c1 (wipe)"),
        ("after_tool", "the after_tool hook #1 of call c1 (wipe)"),
        ("approval", "the approval of call c1 (wipe)"),
    ] {
        let runs = Arc::new(AtomicUsize::new(0));
        let model =
            ScriptedModel::new([ScriptedTurn::text("").and_call_with_id("c1", "wipe", json!({}))]);
        let builder = AgentSession::builder(model.clone());
        let builder = match name {
            "before_tool" => builder.with_hook(PanickingHook { after: false }),
            "after_tool" => builder.with_hook(PanickingHook { after: true }),
            _ => builder.with_approval(PanickingApproval),
        };
        let session = Recorded::default().session_with(builder, &runs, None);
        let (seen, run) = panicked(session.send("go").await);
        assert_eq!(seen, during, "{name}");
        assert_every_call_answered(&run.transcript);
    }
}

/// A scripted model whose method `which` panics with a [`PanicsOnDrop`].
struct PanickingModel(ScriptedModel, &'static str);

#[async_trait]
impl ChatModel for PanickingModel {
    fn name(&self) -> &str {
        if self.1 == "name" {
            panic_with_a_payload_that_panics_on_drop();
        }
        "scripted"
    }

    fn check_declarations(&self, _: &[&toolsmith_core::Tool]) -> Result<(), ModelError> {
        if self.1 == "check_declarations" {
            panic_with_a_payload_that_panics_on_drop();
        }
        Ok(())
    }

    fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        if self.1 == "output_limit" {
            panic_with_a_payload_that_panics_on_drop();
        }
        request.options.max_output_tokens
    }

    fn image_limits(&self) -> ImageLimits {
        if self.1 == "image_limits" {
            panic_with_a_payload_that_panics_on_drop();
        }
        ImageLimits::none()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if self.1 == "complete" {
            panic_with_a_payload_that_panics_on_drop();
        }
        self.0.complete(request).await
    }
}

#[tokio::test]
async fn a_model_whose_payload_panics_on_drop_ends_the_run() {
    for (which, during) in [
        ("name", "the model's name()"),
        ("complete", "the model (scripted) answering request 1"),
        (
            "output_limit",
            "the model's output_limit (before request 1)",
        ),
        (
            "image_limits",
            "the model's image_limits (before request 1)",
        ),
    ] {
        let model = ScriptedModel::new([ScriptedTurn::text("never asked")]);
        let session = AgentSession::builder(PanickingModel(model, which))
            .with_model("m")
            .with_context_window(100_000)
            .with_context_overflow(DropOldestExchanges::new())
            .build()
            .unwrap();
        let (seen, run) = panicked(session.send("go").await);
        assert_eq!(seen, during, "{which}");
        assert_eq!(run.transcript, [Message::user("go")], "{which}");
    }
}

#[tokio::test]
async fn a_context_overflow_policy_whose_payload_panics_on_drop_ends_the_run() {
    let model = ScriptedModel::new([ScriptedTurn::error(ModelError::ContextTooLong {
        provider: "anthropic".into(),
        status: 400,
        message: "prompt is too long: 200010 tokens > 200000 maximum".into(),
    })]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_context_overflow(|_: &mut Vec<Message>, _: &Overflow<'_>| -> Shortened {
            panic_with_a_payload_that_panics_on_drop()
        })
        .build()
        .unwrap();
    let (seen, _) = panicked(session.send("go").await);
    assert!(seen.contains("context overflow policy"), "{seen}");
}

#[tokio::test]
async fn an_event_handler_whose_payload_panics_on_drop_is_contained_and_the_run_goes_on() {
    let model = ScriptedModel::new([ScriptedTurn::text("done")]);
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&seen);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_event_handler(move |_: &AgentEvent| {
            counted.fetch_add(1, Ordering::SeqCst);
            panic_with_a_payload_that_panics_on_drop();
        })
        .build()
        .unwrap();
    let run = session.send("go").await.expect("the run goes on");
    assert_eq!(run.text, "done");
    // The request's and the response's events, each handed to the handler.
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[test]
fn a_declaration_check_whose_payload_panics_on_drop_is_a_configuration_error() {
    let model = ScriptedModel::new([]);
    let built = AgentSession::builder(PanickingModel(model, "check_declarations"))
        .with_model("m")
        .build();
    let Err(AgenticError::Config(message)) = built else {
        panic!("expected a configuration error, got {built:?}");
    };
    assert!(
        message.ends_with(&format!("panicked: {NOT_TEXT}")),
        "{message}"
    );
}

#[test]
fn debug_output_of_a_model_whose_name_payload_panics_on_drop_shows_the_placeholder() {
    let builder = AgentSession::builder(PanickingModel(ScriptedModel::new([]), "name"));
    assert!(format!("{builder:?}").contains("model: <name() panicked>"));
}
