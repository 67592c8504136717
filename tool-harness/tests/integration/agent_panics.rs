//! A panic in the user's code around a run (a hook, the approval, the model client, an event
//! handler) ends the run with `AgenticError::Panicked` naming the place and the call, or is
//! logged and the run goes on; never an unwinding `run`. Each run leaves a transcript the
//! session goes on from: every call with exactly one result.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::common::assert_every_call_answered;
use crate::common::recorded_events::Recorded;
use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::{
    Args, FnTool, ToolArgs, ToolCallContext, ToolCallRequest, ToolCallResult, scheme,
};
use toolsmith_harness::agent::{
    AgentEvent, AgentRun, AgentSession, AgenticError, ApprovalDecision, HookDecision,
    SubAgentConfig, ToolApproval, ToolHook,
};
use toolsmith_harness::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn,
};

/// A tool that never ends; when its future is dropped, it says on `cancelled` whether its
/// call was cancelled then.
fn never_ends(cancelled: &Arc<AtomicBool>) -> FnTool {
    let cancelled = Arc::clone(cancelled);
    FnTool::new(
        "crawl",
        "Crawls for ever.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let probe = DropProbe(Arc::clone(&cancelled));
            async move {
                let _probe = probe;
                std::future::pending::<()>().await;
                Ok(ToolCallResult::text("never"))
            }
        },
    )
}

/// Records whether the call's context was cancelled when the call's future was dropped.
struct DropProbe(Arc<AtomicBool>);

impl Drop for DropProbe {
    fn drop(&mut self) {
        let cancelled = ToolCallContext::current().is_some_and(|c| c.is_cancelled());
        self.0.store(cancelled, Ordering::SeqCst);
    }
}

/// Whether a panic is still to come: true once, for the first caller.
#[derive(Default)]
struct Once(AtomicBool);

impl Once {
    fn fire(&self) -> bool {
        !self.0.swap(true, Ordering::SeqCst)
    }
}

/// A hook that panics in `before_tool` (or, with `after`, in `after_tool` once it has
/// scribbled on the result) the first time it sees call `id`.
struct PanicsAt {
    id: &'static str,
    after: bool,
    once: Once,
}

impl PanicsAt {
    fn before(id: &'static str) -> Self {
        Self {
            id,
            after: false,
            once: Once::default(),
        }
    }

    fn after(id: &'static str) -> Self {
        Self {
            id,
            after: true,
            once: Once::default(),
        }
    }
}

#[async_trait]
impl ToolHook for PanicsAt {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        if !self.after && call.id == self.id && self.once.fire() {
            panic!("hook broke on {}", call.id);
        }
        HookDecision::Allow
    }

    async fn after_tool(&self, call: &ToolCallRequest, result: &mut ToolCallResult) {
        if self.after && call.id == self.id && self.once.fire() {
            *result = ToolCallResult::text("half written");
            panic!("after_tool broke on {}", call.id);
        }
    }
}

/// An `after_tool` hook that marks every result it sees, as a redacting hook would change it.
struct Marks;

#[async_trait]
impl ToolHook for Marks {
    async fn after_tool(&self, _: &ToolCallRequest, result: &mut ToolCallResult) {
        let marked = format!("{} [marked]", result.content.to_text());
        *result = if result.is_error() {
            ToolCallResult::error(marked)
        } else {
            ToolCallResult::text(marked)
        };
    }
}

/// The `Panicked` error's place, message and run; any other ending fails the test.
fn panicked(ended: Result<AgentRun, AgenticError>) -> (String, String, AgentRun) {
    match ended {
        Err(AgenticError::Panicked {
            during,
            message,
            run,
        }) => (during, message, *run),
        other => panic!("expected Panicked, got {other:?}"),
    }
}

/// The session, run again (`send`) from the transcript the panicked run left, completes; its
/// model saw that transcript with every call answered.
async fn continues(session: &AgentSession, model: &ScriptedModel, left: &[Message]) {
    model.push([ScriptedTurn::text("done")]);
    let again = session.send("go on").await.expect("the session goes on");
    assert_eq!(again.text, "done");
    let request = model.requests().pop().expect("a request");
    assert_eq!(&request.messages[..left.len()], left);
    assert_every_call_answered(&request.messages);
    model.assert_complete();
}

#[tokio::test]
async fn a_panicking_before_tool_hook_ends_the_run_and_no_call_of_the_answer_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "ping", json!({}))
        .and_call_with_id("c2", "ping", json!({}))
        .and_call_with_id("c3", "ping", json!({}))]);
    let recorded = Recorded::default();
    let session = recorded.session_with(
        AgentSession::builder(model.clone()).with_hook(PanicsAt::before("c2")),
        &runs,
        None,
    );
    let ended = session.send("go").await;
    let message = ended.as_ref().unwrap_err().to_string();
    let (during, panic, run) = panicked(ended);
    assert_eq!(during, "the before_tool hook #1 of call c2 (ping)");
    assert_eq!(panic, "hook broke on c2");
    assert_eq!(
        message,
        "the before_tool hook #1 of call c2 (ping) panicked: hook broke on c2"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing of the answer runs");
    let ids: Vec<&str> = run.tool_calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    for call in &run.tool_calls {
        assert!(call.result.is_error(), "{call:?}");
        assert_eq!(
            call.result.content.to_text(),
            "not run: the run ended, as the before_tool hook #1 of call c2 (ping) panicked"
        );
    }
    assert_every_call_answered(&run.transcript);
    // c2 and c3 are decided as the hooks go, c1 (which they let through) after them.
    assert_eq!(
        recorded.kinds_and_reasons(),
        [
            "request",
            "response",
            "not-run c2 Panicked",
            "not-run c3 Panicked",
            "not-run c1 Panicked"
        ]
    );
    continues(&session, &model, &run.transcript).await;
}

#[tokio::test]
async fn a_panicking_approval_ends_the_run_and_the_calls_approved_before_it_do_not_run() {
    /// Approves the first call it is asked about and panics at the second.
    struct PanicsAtSecond(AtomicUsize);

    #[async_trait]
    impl ToolApproval for PanicsAtSecond {
        async fn approve(&self, call: &ToolCallRequest) -> ApprovalDecision {
            if self.0.fetch_add(1, Ordering::SeqCst) == 1 {
                panic!("approval broke on {}", call.id);
            }
            ApprovalDecision::Approve
        }
    }

    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "wipe", json!({}))
        .and_call_with_id("c2", "wipe", json!({}))
        .and_call_with_id("c3", "ping", json!({}))]);
    let recorded = Recorded::default();
    let session = recorded.session_with(
        AgentSession::builder(model.clone()).with_approval(PanicsAtSecond(AtomicUsize::new(0))),
        &runs,
        None,
    );
    let (during, panic, run) = panicked(session.send("go").await);
    assert_eq!(during, "the approval of call c2 (wipe)");
    assert_eq!(panic, "approval broke on c2");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing of the answer runs");
    let ids: Vec<&str> = run.tool_calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    assert!(
        run.tool_calls
            .iter()
            .all(|c| c.attempts == 0 && c.result.is_error())
    );
    assert_every_call_answered(&run.transcript);
    // c1 was approved, but had not started: it is taken back once c3 is decided.
    assert_eq!(
        recorded.kinds_and_reasons(),
        [
            "request",
            "response",
            "not-run c2 Panicked",
            "not-run c3 Panicked",
            "not-run c1 Panicked"
        ]
    );
    continues(&session, &model, &run.transcript).await;
}

#[tokio::test]
async fn a_panicking_after_tool_hook_keeps_the_result_as_it_was_and_cancels_the_calls_running() {
    let runs = Arc::new(AtomicUsize::new(0));
    let crawl_cancelled = Arc::new(AtomicBool::new(false));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "ping", json!({}))
        .and_call_with_id("c2", "crawl", json!({}))]);
    let recorded = Recorded::default();
    let session = recorded.session_with(
        AgentSession::builder(model.clone())
            .with_hook(PanicsAt::after("c1"))
            .with_hook(Marks),
        &runs,
        Some(never_ends(&crawl_cancelled)),
    );
    let (during, panic, run) = panicked(session.send("go").await);
    assert_eq!(during, "the after_tool hook #1 of call c1 (ping)");
    assert_eq!(panic, "after_tool broke on c1");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "c1 ran");
    assert!(crawl_cancelled.load(Ordering::SeqCst), "c2 was cancelled");
    let [c1, c2] = &run.tool_calls[..] else {
        panic!("two records: {:?}", run.tool_calls);
    };
    // What the panicking hook wrote is dropped; the hook after it still ran.
    assert_eq!(c1.result.content.to_text(), "ran [marked]");
    assert!(!c1.result.is_error());
    assert!(c2.result.is_error(), "{c2:?}");
    assert_eq!(
        c2.result.content.to_text(),
        "Cancelled: stopped: the batch was cancelled [marked]"
    );
    assert_every_call_answered(&run.transcript);
    // Every call started is finished; no turn ends.
    assert_eq!(
        recorded.kinds_and_reasons(),
        [
            "request",
            "response",
            "started c1",
            "started c2",
            "finished c1",
            "finished c2"
        ]
    );
    continues(&session, &model, &run.transcript).await;
}

#[tokio::test]
async fn a_panicking_model_ends_the_run_with_the_transcript_as_it_was() {
    for streaming in [false, true] {
        let runs = Arc::new(AtomicUsize::new(0));
        let model = ScriptedModel::new([
            ScriptedTurn::text("").and_call_with_id("c1", "ping", json!({})),
            ScriptedTurn::respond(|_| panic!("model broke")),
        ]);
        let recorded = Recorded::default();
        let session = recorded.session_with(
            AgentSession::builder(model.clone()).with_streaming(streaming),
            &runs,
            None,
        );
        let (during, panic, run) = panicked(session.send("go").await);
        assert_eq!(during, "the model (scripted) answering request 2");
        assert_eq!(panic, "model broke");
        assert_eq!(run.model_calls, 2);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(run.transcript.len(), 3, "{:#?}", run.transcript);
        assert_every_call_answered(&run.transcript);
        let kinds: Vec<String> = recorded
            .kinds_and_reasons()
            .into_iter()
            .filter(|kind| !kind.starts_with("TextDelta"))
            .collect();
        assert_eq!(
            kinds,
            [
                "request",
                "response",
                "started c1",
                "finished c1",
                "turn",
                "request"
            ]
        );
        continues(&session, &model, &run.transcript).await;
    }
}

/// A scripted model whose `name()` panics.
struct Nameless(ScriptedModel);

#[async_trait]
impl ChatModel for Nameless {
    fn name(&self) -> &str {
        panic!("no name")
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.0.complete(request).await
    }
}

/// A subscriber that takes every span and event and keeps nothing: spans are built, so their
/// fields are evaluated.
struct EveryOn;

impl tracing::Subscriber for EveryOn {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Traced or not: the span of each request named the client (before, with a subscriber, a
/// panicking `name()` unwound out of `run`).
#[tokio::test]
async fn a_model_whose_name_panics_ends_the_run_before_any_request() {
    {
        // A test runs on its own thread: the subscriber is this test's only.
        let _traced = tracing::subscriber::set_default(EveryOn);
        a_model_whose_name_panics_ends_the_run().await;
    }
    a_model_whose_name_panics_ends_the_run().await;
}

async fn a_model_whose_name_panics_ends_the_run() {
    let model = ScriptedModel::new([ScriptedTurn::text("never asked")]);
    let session = AgentSession::builder(Nameless(model.clone()))
        .with_model("m")
        .build()
        .unwrap();
    let (during, panic, run) = panicked(session.send("go").await);
    assert_eq!(during, "the model's name()");
    assert_eq!(panic, "no name");
    assert_eq!(run.model_calls, 0);
    // The conversation as it was sent, kept for the next `send`.
    assert_eq!(run.transcript, [Message::user("go")]);
    assert_eq!(session.transcript().await, [Message::user("go")]);
    let (during, _, _) = panicked(session.run("again").await);
    assert_eq!(during, "the model's name()");
    assert!(model.requests().is_empty());
}

/// `{:?}` of a session, its builder or a sub-agent setup reads the model's name: a panicking
/// `name()` shows as such instead of unwinding out of the caller's log line.
#[test]
fn debug_output_survives_a_model_whose_name_panics() {
    let builder = AgentSession::builder(Nameless(ScriptedModel::new([]))).with_model("m");
    assert!(format!("{builder:?}").contains(r#"model: <name() panicked>, model_name: Some("m")"#));
    let session = builder.build().unwrap();
    assert!(format!("{session:?}").contains("model: <name() panicked>"));
    let config = SubAgentConfig::new(Nameless(ScriptedModel::new([])), "m");
    assert!(format!("{config:?}").contains("model: <name() panicked>"));
}

#[tokio::test]
async fn a_panicking_event_handler_is_contained_and_the_run_goes_on() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("").and_call_with_id("c1", "ping", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let recorded = Recorded::default();
    // Panics at every event but the first; added before the recorder, which still gets every
    // event.
    let seen = AtomicUsize::new(0);
    let session = recorded.session_with(
        AgentSession::builder(model.clone()).with_event_handler(move |event: &AgentEvent| {
            if seen.fetch_add(1, Ordering::SeqCst) > 0 {
                panic!("handler broke at {event:?}");
            }
        }),
        &runs,
        None,
    );
    let run = session.run("go").await.expect("the run goes on");
    assert_eq!(run.text, "done");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        recorded.kinds_and_reasons(),
        [
            "request",
            "response",
            "started c1",
            "finished c1",
            "turn",
            "request",
            "response"
        ]
    );
}

/// A scripted model whose `output_limit` or `image_limits` (as `which` says) panics.
struct PanickingLimit(ScriptedModel, &'static str);

#[async_trait]
impl ChatModel for PanickingLimit {
    fn name(&self) -> &str {
        "scripted"
    }

    fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        if self.1 == "output_limit" {
            panic!("no output limit");
        }
        request.options.max_output_tokens
    }

    fn image_limits(&self) -> toolsmith_harness::model::ImageLimits {
        if self.1 == "image_limits" {
            panic!("no image limits");
        }
        toolsmith_harness::model::ImageLimits::none()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.0.complete(request).await
    }
}

/// `AgenticError::Panicked` covers the model's other methods a run asks before a request, as
/// its doc says: `output_limit` (asked in a session that knows its window) and
/// `image_limits` end the run before the request is sent, naming the method and the request.
#[tokio::test]
async fn a_model_whose_limits_panic_ends_the_run_before_the_request() {
    for (which, during, message) in [
        (
            "output_limit",
            "the model's output_limit (before request 1)",
            "no output limit",
        ),
        (
            "image_limits",
            "the model's image_limits (before request 1)",
            "no image limits",
        ),
    ] {
        let model = ScriptedModel::new([ScriptedTurn::text("never asked")]);
        let session = AgentSession::builder(PanickingLimit(model.clone(), which))
            .with_model("m")
            .with_context_window(100_000)
            .with_context_overflow(toolsmith_harness::agent::DropOldestExchanges::new())
            .build()
            .unwrap();
        let (seen, panic, run) = panicked(session.send("go").await);
        assert_eq!(
            (seen.as_str(), panic.as_str()),
            (during, message),
            "{which}"
        );
        assert_eq!(run.model_calls, 0, "{which}");
        assert!(model.requests().is_empty(), "{which}");
        assert_eq!(session.transcript().await, [Message::user("go")], "{which}");
    }
}
