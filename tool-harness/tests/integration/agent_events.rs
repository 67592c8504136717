//! The session's events for calls that did not run: `ToolCallNotRun`, once a call, for each
//! reason, in the order the events' docs give.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::DecideFor;
use crate::common::recorded_events::{Recorded, counting_tool};
use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::{
    Args, CancellationToken, FnTool, ToolArgs, ToolCallContext, ToolCallRequest, ToolCallResult,
    ToolShed, scheme,
};
use toolsmith_harness::agent::{
    AgentEvent, AgentRun, AgentSession, AgenticError, ApprovalDecision, HookDecision, NotRunReason,
    ToolApproval, ToolHook,
};
use toolsmith_harness::model::{ScriptedModel, ScriptedTurn, StopReason};

/// What the run's record of call `id` says the model was shown.
fn shown(run: &AgentRun, id: &str) -> String {
    let records: Vec<_> = run.tool_calls.iter().filter(|c| c.call_id == id).collect();
    assert_eq!(records.len(), 1, "one record of {id}: {:?}", run.tool_calls);
    assert!(records[0].result.is_error(), "{:?}", records[0]);
    records[0].result.content.to_text()
}

#[tokio::test]
async fn a_call_with_unreadable_arguments_is_reported_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("c1", "ping", json!({}))
            .and_raw_call("ping", "{\"a\": "),
        ScriptedTurn::text("done"),
    ]);
    let recorded = Recorded::default();
    let session = recorded.session(AgentSession::builder(model.clone()), &runs);
    let run = session.run("go").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let unread = run.tool_calls[1].call_id.clone();
    let not_run = recorded.not_run();
    assert_eq!(
        not_run,
        [(
            unread.clone(),
            "ping".to_owned(),
            NotRunReason::Unreadable,
            shown(&run, &unread)
        )]
    );
    assert!(not_run[0].3.contains("not valid JSON"), "{}", not_run[0].3);
    assert_eq!(
        recorded.kinds(),
        [
            "request",
            "response",
            &format!("not-run {unread}"),
            "started c1",
            "finished c1",
            "turn",
            "request",
            "response"
        ]
    );
}

#[tokio::test]
async fn a_call_whose_id_is_repeated_is_reported_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("dup", "ping", json!({}))
            .and_call_with_id("dup", "wipe", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let recorded = Recorded::default();
    let session = recorded.session(AgentSession::builder(model.clone()), &runs);
    let run = session.run("go").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let not_run = recorded.not_run();
    assert_eq!(not_run.len(), 1, "{not_run:?}");
    assert_eq!(
        (&not_run[0].0[..], &not_run[0].1[..], not_run[0].2),
        ("dup", "wipe", NotRunReason::RepeatedId)
    );
    assert_eq!(not_run[0].3, run.tool_calls[1].result.content.to_text());
    assert!(not_run[0].3.contains("an earlier call"), "{}", not_run[0].3);
    assert_eq!(
        recorded.kinds(),
        [
            "request",
            "response",
            "not-run dup",
            "started dup",
            "finished dup",
            "turn",
            "request",
            "response"
        ]
    );
}

#[tokio::test]
async fn the_calls_of_an_answer_cut_off_are_reported_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("c1", "ping", json!({}))
            .and_call_with_id("c2", "ping", json!({}))
            .with_stop_reason(StopReason::MaxTokens),
        ScriptedTurn::text("done"),
    ]);
    let recorded = Recorded::default();
    let session = recorded.session(AgentSession::builder(model.clone()), &runs);
    let run = session.run("go").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let not_run = recorded.not_run();
    let expected: Vec<_> = ["c1", "c2"]
        .into_iter()
        .map(|id| {
            (
                id.to_owned(),
                "ping".to_owned(),
                NotRunReason::CutOff,
                shown(&run, id),
            )
        })
        .collect();
    assert_eq!(not_run, expected);
    assert!(not_run[0].3.contains("cut off"), "{}", not_run[0].3);
    assert_eq!(
        recorded.kinds(),
        [
            "request",
            "response",
            "not-run c1",
            "not-run c2",
            "turn",
            "request",
            "response"
        ]
    );
}

#[tokio::test]
async fn the_calls_of_a_stopped_answer_are_reported_not_run_as_they_are_decided() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "ping", json!({}))
        .and_call_with_id("c2", "wipe", json!({}))
        .and_call_with_id("c3", "ping", json!({}))]);
    let recorded = Recorded::default();
    let session = recorded.session(
        AgentSession::builder(model.clone()).with_hook(DecideFor {
            tool: "wipe",
            decision: HookDecision::Stop("no wiping".into()),
        }),
        &runs,
    );
    let AgenticError::Stopped { run, .. } = session.run("go").await.unwrap_err() else {
        panic!("expected Stopped");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // The stopping call and the one after it are decided as the hooks go; the one before,
    // which the hooks let through, after them.
    let expected: Vec<_> = ["c2", "c3", "c1"]
        .into_iter()
        .map(|id| (id, NotRunReason::Stopped, shown(&run, id)))
        .collect();
    let not_run: Vec<_> = recorded
        .not_run()
        .into_iter()
        .map(|(id, _, why, summary)| (id, why, summary))
        .collect();
    assert_eq!(
        not_run
            .iter()
            .map(|(id, why, summary)| (id.as_str(), *why, summary.clone()))
            .collect::<Vec<_>>(),
        expected
    );
    assert!(not_run[0].2.contains("no wiping"), "{}", not_run[0].2);
    assert_eq!(
        recorded.kinds(),
        [
            "request",
            "response",
            "not-run c2",
            "not-run c3",
            "not-run c1"
        ]
    );
}

/// Cancels `token` when it sees its first call, and lets the call through.
struct CancelAtFirstCall(CancellationToken);

#[async_trait]
impl ToolHook for CancelAtFirstCall {
    async fn before_tool(&self, _: &ToolCallRequest) -> HookDecision {
        self.0.cancel();
        HookDecision::Allow
    }
}

#[tokio::test]
async fn calls_the_cancellation_kept_from_running_are_reported_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "ping", json!({}))
        .and_call_with_id("c2", "ping", json!({}))]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    let session = recorded.session(
        AgentSession::builder(model.clone())
            .with_cancellation(token.clone())
            .with_hook(CancelAtFirstCall(token)),
        &runs,
    );
    let AgenticError::Cancelled { run } = session.run("go").await.unwrap_err() else {
        panic!("expected Cancelled");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // c2 never reaches the hooks; c1, which they let through, is decided after them.
    let expected: Vec<_> = ["c2", "c1"]
        .into_iter()
        .map(|id| {
            (
                id.to_owned(),
                "ping".to_owned(),
                NotRunReason::Cancelled,
                shown(&run, id),
            )
        })
        .collect();
    assert_eq!(recorded.not_run(), expected);
    assert_eq!(expected[0].3, "not run: the run was cancelled");
    assert_eq!(
        recorded.kinds(),
        ["request", "response", "not-run c2", "not-run c1"]
    );
}

/// Says on `asked` that it was asked, then never answers.
struct NeverAnswers(Arc<tokio::sync::Notify>);

#[async_trait]
impl ToolApproval for NeverAnswers {
    async fn approve(&self, _: &ToolCallRequest) -> ApprovalDecision {
        self.0.notify_one();
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_call_whose_approval_the_cancellation_ended_is_reported_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "wipe", json!({}))
        .and_call_with_id("c2", "ping", json!({}))]);
    let recorded = Recorded::default();
    let asked = Arc::new(tokio::sync::Notify::new());
    let session = recorded.session(
        AgentSession::builder(model.clone()).with_approval(NeverAnswers(Arc::clone(&asked))),
        &runs,
    );
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        asked.notified().await;
        cancel.cancel();
    });
    let AgenticError::Cancelled { run } = session
        .run_with_cancellation("go", token)
        .await
        .unwrap_err()
    else {
        panic!("expected Cancelled");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let expected: Vec<_> = [("c1", "wipe"), ("c2", "ping")]
        .into_iter()
        .map(|(id, name)| {
            (
                id.to_owned(),
                name.to_owned(),
                NotRunReason::Cancelled,
                shown(&run, id),
            )
        })
        .collect();
    assert_eq!(recorded.not_run(), expected);
    assert_eq!(
        recorded.kinds(),
        ["request", "response", "not-run c1", "not-run c2"]
    );
}

// The caller's token of `run_with_cancellation`, cancelled by the run's own code (a hook, an
// event handler) while the run goes on without waiting, stops the run as the session's token
// does: nothing more of the answer runs.

#[tokio::test]
async fn a_callers_token_a_hook_cancels_keeps_the_answers_calls_from_running() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "ping", json!({}))
        .and_call_with_id("c2", "ping", json!({}))]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    let session = recorded.session(
        AgentSession::builder(model.clone()).with_hook(CancelAtFirstCall(token.clone())),
        &runs,
    );
    let ended = session.run_with_cancellation("go", token).await;
    assert!(
        matches!(ended, Err(AgenticError::Cancelled { .. })),
        "{ended:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        recorded.kinds(),
        ["request", "response", "not-run c2", "not-run c1"]
    );
}

#[tokio::test]
async fn a_callers_token_a_handler_cancels_at_the_answer_keeps_its_calls_from_running() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("").and_call_with_id("c1", "ping", json!({})),
        ScriptedTurn::text("never asked"),
    ]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let session = recorded.session(
        AgentSession::builder(model.clone()).with_event_handler(move |event: &AgentEvent| {
            if matches!(event, AgentEvent::ModelResponse { .. }) {
                cancel.cancel();
            }
        }),
        &runs,
    );
    let AgenticError::Cancelled { run } = session
        .run_with_cancellation("go", token)
        .await
        .unwrap_err()
    else {
        panic!("expected Cancelled");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(shown(&run, "c1"), "not run: the run was cancelled");
    assert_eq!(recorded.kinds(), ["request", "response", "not-run c1"]);
    assert_eq!(model.remaining(), 1, "the model is not asked again");
}

/// A session whose event handler cancels `token` at the first event `at` picks, and records
/// the events in `recorded`.
fn cancelling_at(
    model: &ScriptedModel,
    recorded: &Recorded,
    runs: &Arc<AtomicUsize>,
    token: &CancellationToken,
    at: fn(&AgentEvent) -> bool,
) -> AgentSession {
    let cancel = token.clone();
    recorded.session(
        AgentSession::builder(model.clone()).with_event_handler(move |event: &AgentEvent| {
            if at(event) {
                cancel.cancel();
            }
        }),
        runs,
    )
}

#[tokio::test]
async fn a_callers_token_a_handler_cancels_as_a_call_starts_keeps_it_from_running() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("").and_call_with_id("c1", "ping", json!({})),
        ScriptedTurn::text("never asked"),
    ]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    let session = cancelling_at(&model, &recorded, &runs, &token, |event| {
        matches!(event, AgentEvent::ToolCallStarted { .. })
    });
    let AgenticError::Cancelled { run } = session
        .run_with_cancellation("go", token)
        .await
        .unwrap_err()
    else {
        panic!("expected Cancelled");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0, "c1 never ran");
    assert_eq!(run.tool_calls[0].attempts, 0, "{:?}", run.tool_calls[0]);
    assert!(run.tool_calls[0].result.is_error());
    // Started, so finished (as cancelled); the turn does not finish.
    assert_eq!(
        recorded.kinds(),
        ["request", "response", "started c1", "finished c1"]
    );
}

#[tokio::test]
async fn a_callers_token_a_handler_cancels_as_the_last_call_finishes_ends_the_turn_cancelled() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("").and_call_with_id("c1", "ping", json!({})),
        ScriptedTurn::text("never asked"),
    ]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    let session = cancelling_at(&model, &recorded, &runs, &token, |event| {
        matches!(event, AgentEvent::ToolCallFinished { .. })
    });
    let ended = session.run_with_cancellation("go", token).await;
    assert!(
        matches!(ended, Err(AgenticError::Cancelled { .. })),
        "{ended:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // As for the session's token: a cancelled run sends no `TurnFinished`.
    assert_eq!(
        recorded.kinds(),
        ["request", "response", "started c1", "finished c1"]
    );
}

#[tokio::test]
async fn a_callers_token_a_handler_cancels_at_a_calls_progress_keeps_the_next_from_starting() {
    let runs = Arc::new(AtomicUsize::new(0));
    // Reports progress as it starts, then waits for ever (until cancelled).
    let crawl = FnTool::new(
        "crawl",
        "Crawls.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            if let Some(call) = ToolCallContext::current() {
                call.progress(0.0, None, "crawling");
            }
            std::future::pending::<()>().await;
            Ok(ToolCallResult::text("never"))
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("c1", "crawl", json!({}))
            .and_call_with_id("c2", "ping", json!({})),
        ScriptedTurn::text("never asked"),
    ]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let sink = Arc::clone(&recorded.0);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new()
                .tool(counting_tool("ping", &runs))
                .tool(crawl),
        )
        .with_event_handler(move |event: &AgentEvent| {
            if matches!(event, AgentEvent::ToolCallProgress(_)) {
                cancel.cancel();
            }
            sink.lock().unwrap().push(event.clone());
        })
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let AgenticError::Cancelled { run } = session
        .run_with_cancellation("go", token)
        .await
        .unwrap_err()
    else {
        panic!("expected Cancelled");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0, "c2 never ran");
    assert_eq!(run.tool_calls[1].attempts, 0, "{:?}", run.tool_calls[1]);
    assert!(run.tool_calls.iter().all(|call| call.result.is_error()));
}

#[tokio::test]
async fn a_callers_token_a_handler_cancels_as_a_search_finishes_keeps_the_other_calls_from_starting()
 {
    let runs = Arc::new(AtomicUsize::new(0));
    // The answer's search runs first, its other calls after it.
    let model = ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("c1", "shed", json!({"description": "ping"}))
            .and_call_with_id("c2", "ping", json!({})),
        ScriptedTurn::text("never asked"),
    ]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    let session = cancelling_at(
        &model,
        &recorded,
        &runs,
        &token,
        |event| matches!(event, AgentEvent::ToolCallFinished { call_id, .. } if call_id == "c1"),
    );
    let AgenticError::Cancelled { run } = session
        .run_with_cancellation("go", token)
        .await
        .unwrap_err()
    else {
        panic!("expected Cancelled");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0, "c2 never ran");
    assert_eq!(run.tool_calls[1].attempts, 0, "{:?}", run.tool_calls[1]);
    assert_eq!(
        recorded.kinds(),
        [
            "request",
            "response",
            "started c1",
            "started c2",
            "finished c1",
            "finished c2"
        ]
    );
}

#[tokio::test]
async fn an_answer_that_came_as_the_run_was_cancelled_is_reported_and_dropped_with_its_calls() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::text("")
        .and_call_with_id("c1", "ping", json!({}))
        .with_usage(toolsmith_harness::model::Usage {
            input_tokens: 7,
            output_tokens: 3,
            cached_input_tokens: 0,
        })]);
    let recorded = Recorded::default();
    let token = CancellationToken::new();
    // Cancelled as the request goes out: the model (which answers at once) still answers.
    let session = cancelling_at(&model, &recorded, &runs, &token, |event| {
        matches!(event, AgentEvent::ModelRequest { .. })
    });
    let AgenticError::Cancelled { run } = session
        .run_with_cancellation("go", token)
        .await
        .unwrap_err()
    else {
        panic!("expected Cancelled");
    };
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(run.usage.output_tokens, 3, "its tokens count");
    assert!(run.tool_calls.is_empty(), "{:?}", run.tool_calls);
    assert_eq!(
        run.transcript.len(),
        1,
        "the answer is dropped: {:?}",
        run.transcript
    );
    // Reported with its call, which has no event.
    let events = recorded.0.lock().unwrap().clone();
    assert!(
        matches!(
            events[..],
            [
                AgentEvent::ModelRequest { .. },
                AgentEvent::ModelResponse { calls: 1, .. }
            ]
        ),
        "{events:?}"
    );
}
