//! Batches: stages, concurrency and its limit, fail-fast and collect-all, dependency
//! failures, offer checking, annotations, deadlines and cancellation. Time is Tokio's paused
//! clock, so every duration below is exact and nothing really sleeps.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{Probe, call, probe_tool};
use serde_json::json;
use tokio::time::Instant;
use toolsmith::{
    BatchOptions, CancellationToken, ExecutionHint, Jitter, ToolAnnotations, ToolCallManager,
    ToolCallOutcome, ToolCallRequest, ToolError, ToolErrorKind, ToolRetryConfig,
};

fn manager_with(probe: &Arc<Probe>) -> ToolCallManager {
    let manager = ToolCallManager::new("batch-tests");
    manager
        .register(Arc::new(probe_tool(
            "work",
            ToolAnnotations::default(),
            probe,
        )))
        .unwrap();
    let destructive = ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    };
    manager
        .register(Arc::new(probe_tool("wipe", destructive, probe)))
        .unwrap();
    manager
}

fn ids(outcomes: &[ToolCallOutcome]) -> Vec<&str> {
    outcomes.iter().map(|o| o.id.as_str()).collect()
}

fn cancelled(reason: &str) -> Result<toolsmith::ToolCallResult, ToolError> {
    Err(ToolError::Cancelled(reason.to_owned()))
}

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn independent_calls_run_concurrently_and_outcomes_keep_request_order() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager.set_concurrency_limit(100);
    // Later calls sleep less, so they finish first; outcomes still follow request order.
    let requests: Vec<ToolCallRequest> = (0..100)
        .map(|i| call(&format!("c{i}"), "work", json!({"ms": 20 + (99 - i) / 10})))
        .collect();
    let started = Instant::now();
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(started.elapsed(), 29 * MS, "all 100 ran at once");
    assert_eq!(probe.max_running(), 100);
    let expected: Vec<String> = (0..100).map(|i| format!("c{i}")).collect();
    assert_eq!(ids(&outcomes), expected);
    for (i, outcome) in outcomes.iter().enumerate() {
        assert_eq!(
            outcome.result.as_ref().unwrap().content.to_text(),
            outcome.id
        );
        assert_eq!(outcome.name, "work");
        assert_eq!(outcome.attempts, 1);
        assert_eq!(outcome.elapsed, (20 + (99 - i as u32) / 10) * MS);
    }
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_limit_is_respected() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    assert_eq!(manager.concurrency_limit(), 128, "the default");
    // The default lets a model's whole answer run at once; past it, calls run in waves.
    let requests: Vec<ToolCallRequest> = (0..300)
        .map(|i| call(&format!("c{i}"), "work", json!({"ms": 10})))
        .collect();
    let started = Instant::now();
    manager.execute_batch(&requests).await;
    assert_eq!(probe.max_running(), 128);
    assert_eq!(started.elapsed(), 30 * MS, "300 calls in waves of 128");

    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager.set_concurrency_limit(16);
    let requests: Vec<ToolCallRequest> = (0..40)
        .map(|i| call(&format!("c{i}"), "work", json!({"ms": 10})))
        .collect();
    let started = Instant::now();
    manager.execute_batch(&requests).await;
    assert_eq!(probe.max_running(), 16);
    assert_eq!(started.elapsed(), 30 * MS, "40 calls in waves of 16");

    let probe = Probe::new();
    let manager = manager_with(&probe);
    let options = BatchOptions::new().with_concurrency_limit(3);
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert_eq!(probe.max_running(), 3);
    assert!(outcomes.iter().all(|o| o.result.is_ok()));

    manager.set_concurrency_limit(0);
    assert_eq!(manager.concurrency_limit(), 1, "a limit is at least 1");
}

#[tokio::test(start_paused = true)]
async fn stages_wait_for_their_dependencies() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("merge", "work", json!({"ms": 5})).depends_on(["a", "b"]),
        call("a", "work", json!({"ms": 10})),
        call("b", "work", json!({"ms": 30})),
        call("c", "work", json!({"ms": 1})),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(ids(&outcomes), ["merge", "a", "b", "c"]);
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
    let starts = probe.starts();
    let merge = starts.iter().find(|(tag, _)| tag == "merge").unwrap();
    assert_eq!(
        merge.1,
        30 * MS,
        "merge starts when the slower dependency ends"
    );
}

#[tokio::test(start_paused = true)]
async fn a_parallel_stage_collects_every_failure() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("a", "work", json!({"fail": "execution"})),
        call("b", "work", json!({"ms": 10})),
        call("c", "work", json!({"ms": 5, "fail": "error_result"})),
        call("d", "work", json!({"ms": 20})),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(
        outcomes[0].result,
        Err(ToolError::execution("work", "a broke"))
    );
    assert!(outcomes[1].result.is_ok());
    assert!(outcomes[2].failed() && outcomes[2].result.is_ok());
    assert!(outcomes[3].result.is_ok());
    assert_eq!(probe.total_runs(), 4, "no failure cancels the others");
}

#[tokio::test(start_paused = true)]
async fn a_sequential_stage_runs_in_order_and_stops_at_the_first_failure() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let seq = |id: &str, extra| call(id, "work", extra).with_hint(ExecutionHint::Sequential);
    let requests = [
        seq("s1", json!({"ms": 10})),
        call("p", "work", json!({"ms": 10})),
        seq("s2", json!({"ms": 10, "fail": "execution"})),
        seq("s3", json!({"ms": 10})),
        call("q", "work", json!({"ms": 10})),
    ];
    let started = Instant::now();
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(probe.started_tags(), ["s1", "p", "s2"]);
    assert_eq!(probe.max_running(), 1);
    assert_eq!(started.elapsed(), 30 * MS);
    assert!(outcomes[0].result.is_ok() && outcomes[1].result.is_ok());
    assert_eq!(
        outcomes[2].result.as_ref().unwrap_err().kind(),
        ToolErrorKind::Execution
    );
    for later in &outcomes[3..] {
        assert_eq!(
            later.result,
            cancelled("call s2 failed earlier in this sequential stage")
        );
        assert_eq!((later.attempts, later.elapsed), (0, Duration::ZERO));
    }
}

#[tokio::test(start_paused = true)]
async fn a_failed_dependency_cancels_its_dependents_transitively() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("call-1", "work", json!({"fail": "network"})),
        call("call-2", "work", json!({})).depends_on(["call-1"]),
        call("call-3", "work", json!({})).depends_on(["call-4", "call-2"]),
        call("call-4", "work", json!({})),
        call("call-5", "work", json!({"fail": "error_result"})),
        call("call-6", "work", json!({})).depends_on(["call-5"]),
        call("call-7", "work", json!({})).depends_on(["call-4"]),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(outcomes[1].result, cancelled("dependency call-1 failed"));
    assert_eq!(outcomes[2].result, cancelled("dependency call-2 failed"));
    assert_eq!(outcomes[5].result, cancelled("dependency call-5 failed"));
    assert!(outcomes[6].result.is_ok());
    let mut ran = probe.started_tags();
    ran.sort();
    assert_eq!(ran, ["call-1", "call-4", "call-5", "call-7"]);
}

#[tokio::test(start_paused = true)]
async fn a_batch_that_cannot_be_planned_runs_nothing() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("a", "work", json!({})),
        call("b", "work", json!({})).depends_on(["c"]),
        call("c", "work", json!({})).depends_on(["b"]),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(ids(&outcomes), ["a", "b", "c"]);
    for outcome in &outcomes {
        let err = outcome.result.as_ref().unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        assert!(err.to_string().contains("b -> c -> b"), "{err}");
        assert_eq!(outcome.attempts, 0);
    }
    assert_eq!(probe.total_runs(), 0);
}

#[tokio::test(start_paused = true)]
async fn unknown_tools_and_invalid_arguments_end_their_call_only() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("a", "nope", json!({})),
        call("b", "work", json!({"ms": "soon"})),
        call("c", "work", json!({})),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(
        outcomes[0].result,
        Err(ToolError::UnknownTool("nope".into()))
    );
    let invalid = outcomes[1].result.as_ref().unwrap_err();
    assert_eq!(invalid.kind(), ToolErrorKind::InvalidArguments);
    assert!(invalid.to_string().contains("ms"), "{invalid}");
    assert_eq!((outcomes[0].attempts, outcomes[1].attempts), (0, 0));
    assert!(outcomes[2].result.is_ok());
    assert_eq!(probe.started_tags(), ["c"]);
}

#[tokio::test(start_paused = true)]
async fn a_turn_runs_only_offered_tools() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager.activate(&["work".into()]);
    let requests = [
        call("a", "work", json!({})),
        call("b", "wipe", json!({})),
        call("c", "ghost", json!({})),
        call("d", "work", json!({})).depends_on(["b"]),
    ];
    let outcomes = manager.execute_turn(&requests).await;
    assert!(outcomes[0].result.is_ok());
    assert_eq!(outcomes[1].result, Err(ToolError::NotActive("wipe".into())));
    assert_eq!(
        outcomes[2].result,
        Err(ToolError::UnknownTool("ghost".into()))
    );
    assert_eq!(outcomes[3].result, cancelled("dependency b failed"));
    assert_eq!(probe.started_tags(), ["a"]);

    // Without offer checking (a standalone batch), any registered tool runs.
    let outcomes = manager.execute_batch(&requests[..2]).await;
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
}

#[tokio::test(start_paused = true)]
async fn destructive_calls_of_a_stage_run_one_at_a_time() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests: Vec<ToolCallRequest> = (0..4)
        .flat_map(|i| {
            [
                call(&format!("wipe{i}"), "wipe", json!({"ms": 10})),
                call(&format!("work{i}"), "work", json!({"ms": 10})),
            ]
        })
        .collect();
    let started = Instant::now();
    let outcomes = manager.execute_batch(&requests).await;
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
    assert_eq!(
        started.elapsed(),
        40 * MS,
        "four destructive calls, one after another"
    );
    let starts = probe.starts();
    for i in 0..4u32 {
        let at = |tag: String| starts.iter().find(|(t, _)| *t == tag).unwrap().1;
        assert_eq!(at(format!("wipe{i}")), i * 10 * MS);
        assert_eq!(
            at(format!("work{i}")),
            Duration::ZERO,
            "ordinary calls run alongside"
        );
    }
    assert_eq!(probe.max_running(), 5);
}

#[tokio::test(start_paused = true)]
async fn the_batch_deadline_stops_running_calls_and_skips_pending_ones() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("quick", "work", json!({"ms": 100})),
        call("slow", "work", json!({"ms": 10_000})),
        call("after", "work", json!({})).depends_on(["quick"]),
        call("last", "work", json!({})).depends_on(["slow"]),
    ];
    let options = BatchOptions::new().with_deadline(Duration::from_secs(1));
    let started = Instant::now();
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert_eq!(started.elapsed(), Duration::from_secs(1));
    assert_eq!(ids(&outcomes), ["quick", "slow", "after", "last"]);
    assert!(outcomes[0].result.is_ok());
    assert_eq!(
        outcomes[1].result,
        cancelled("stopped: the batch deadline of 1s passed")
    );
    assert_eq!(
        (outcomes[1].attempts, outcomes[1].elapsed),
        (1, Duration::from_secs(1))
    );
    for pending in &outcomes[2..] {
        assert_eq!(
            pending.result,
            cancelled("not run: the batch deadline of 1s passed")
        );
        assert_eq!(pending.attempts, 0);
    }
    assert_eq!(probe.running(), 0, "the slow call's future was dropped");
}

#[tokio::test(start_paused = true)]
async fn an_unrepresentable_deadline_is_no_deadline() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [call("a", "work", json!({"ms": 10}))];
    let options = BatchOptions::new().with_deadline(Duration::MAX);
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert!(outcomes[0].result.is_ok());
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_token_stops_the_batch_with_complete_outcomes() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("a", "work", json!({"ms": 10})),
        call("b", "work", json!({"ms": 500})),
        call("c", "work", json!({"ms": 10})).depends_on(["a"]),
        call("d", "work", json!({})).depends_on(["c"]),
    ];
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let options = BatchOptions::new().with_cancellation(token);
    let started = Instant::now();
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert_eq!(started.elapsed(), 100 * MS);
    assert!(outcomes[0].result.is_ok());
    assert_eq!(
        outcomes[1].result,
        cancelled("stopped: the batch was cancelled")
    );
    assert_eq!(outcomes[1].elapsed, 100 * MS);
    assert_eq!(
        outcomes[2].result,
        cancelled("not run: the batch was cancelled")
    );
    assert_eq!(
        outcomes[3].result,
        cancelled("not run: the batch was cancelled")
    );
    assert_eq!(probe.running(), 0);

    // A token cancelled before the batch starts runs nothing.
    let token = CancellationToken::new();
    token.cancel();
    let options = BatchOptions::new().with_cancellation(token);
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert_eq!(outcomes.len(), 4);
    assert!(
        outcomes
            .iter()
            .all(|o| o.result.is_err() && o.attempts == 0)
    );
    assert_eq!(
        probe.total_runs(),
        2,
        "only a and b of the first batch ever ran"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_timeout_applies_to_each_call() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager.set_timeout("work", Some(50 * MS)).unwrap();
    let requests = [
        call("fast", "work", json!({"ms": 10})),
        call("slow", "work", json!({"ms": 80})),
    ];
    let started = Instant::now();
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(started.elapsed(), 50 * MS);
    assert!(outcomes[0].result.is_ok());
    assert_eq!(outcomes[1].result, Err(ToolError::timeout("work")));
    assert_eq!(
        outcomes[1].attempts, 1,
        "work is not annotated safe to retry"
    );
}

#[test]
fn batches_run_without_a_tokio_runtime_when_no_timer_is_needed() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("a", "work", json!({})),
        call("b", "work", json!({})).depends_on(["a"]),
    ];
    let outcomes = futures::executor::block_on(manager.execute_batch(&requests));
    assert!(outcomes.iter().all(|o| o.result.is_ok()));

    // A deadline needs Tokio's timer: without a runtime the batch says so instead of panicking.
    let options = BatchOptions::new().with_deadline(Duration::from_secs(1));
    let outcomes = futures::executor::block_on(manager.execute_batch_with(&requests, &options));
    for outcome in outcomes {
        let err = outcome.result.unwrap_err();
        assert!(err.to_string().contains("needs a Tokio runtime"), "{err}");
    }
}

#[test]
fn batch_futures_can_be_spawned() {
    fn assert_send<T: Send>(_: &T) {}
    let manager = ToolCallManager::new("s");
    let requests = [call("a", "work", json!({}))];
    assert_send(&manager.execute_batch(&requests));
    assert_send(&manager.execute_turn(&requests));
    assert_send(&manager.execute_with_retry(&requests[0]));
}

/// Panics when dropped before it is marked finished: a tool's guard that misbehaves.
struct PanicsIfDroppedEarly(bool);

impl Drop for PanicsIfDroppedEarly {
    fn drop(&mut self) {
        if !self.0 {
            panic!("dropped before finishing");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_that_panics_as_the_deadline_drops_it_stays_inside_the_batch() {
    use futures::FutureExt as _;
    let manager = ToolCallManager::new("batch-tests");
    let slow = toolsmith::FnTool::new(
        "slow",
        "Slow, and panics when dropped before the end.",
        toolsmith::Args::new(json!({"type": "object"})),
        |_: toolsmith::ToolArgs<'_>| async {
            let mut guard = PanicsIfDroppedEarly(false);
            tokio::time::sleep(Duration::from_secs(5)).await;
            guard.0 = true;
            Ok(toolsmith::ToolCallResult::text("done"))
        },
    );
    manager.register(Arc::new(slow)).unwrap();
    manager
        .register(Arc::new(probe_tool(
            "work",
            ToolAnnotations::default(),
            &Probe::new(),
        )))
        .unwrap();
    let requests = [
        call("a", "slow", json!({})),
        call("b", "work", json!({"ms": 10})),
    ];
    let options = BatchOptions::new().with_deadline(Duration::from_millis(50));
    let outcomes = std::panic::AssertUnwindSafe(manager.execute_batch_with(&requests, &options))
        .catch_unwind()
        .await
        .expect("the tool's panic stays inside the batch");
    assert_eq!(outcomes.len(), 2);
    match &outcomes[0].result {
        Err(ToolError::Cancelled(reason)) => assert!(reason.contains("stopped"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(outcomes[1].result.is_ok(), "{:?}", outcomes[1].result);
}

/// The tokens a [`holding_tool`] was given, one a run, in order.
type HeldTokens = Arc<std::sync::Mutex<Vec<CancellationToken>>>;

/// A tool whose work could go on elsewhere (a task it spawned, a server it called): it keeps
/// each run's token in `tokens`, as such work would, and never ends by itself.
fn holding_tool(name: &str, tokens: &HeldTokens) -> toolsmith::FnTool {
    let seen = Arc::clone(tokens);
    toolsmith::FnTool::new(
        name,
        "Waits until its call is cancelled.",
        toolsmith::Args::new(json!({"type": "object"})),
        move |_: toolsmith::ToolArgs<'_>| {
            let seen = Arc::clone(&seen);
            async move {
                let context = toolsmith::ToolCallContext::current().expect("set by the batch");
                seen.lock().unwrap().push(context.cancellation().clone());
                std::future::pending::<()>().await;
                Ok(toolsmith::ToolCallResult::text("never"))
            }
        },
    )
}

#[tokio::test(start_paused = true)]
async fn stopping_a_batch_cancels_the_tokens_of_the_calls_it_stops() {
    let manager = ToolCallManager::new("batch-tests");
    let tokens = HeldTokens::default();
    let hold = holding_tool("hold", &tokens);
    manager.register(Arc::new(hold)).unwrap();
    let requests = [call("a", "hold", json!({}))];
    let token = |i: usize| tokens.lock().unwrap()[i].clone();

    // Stopped by its deadline.
    let options = BatchOptions::new().with_deadline(50 * MS);
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert_eq!(
        outcomes[0].result,
        cancelled("stopped: the batch deadline of 50ms passed")
    );
    assert!(token(0).is_cancelled(), "the deadline gave up on the call");

    // Dropped by its caller while the call runs.
    {
        let mut batch = std::pin::pin!(manager.execute_batch(&requests));
        assert!(futures::poll!(batch.as_mut()).is_pending());
        assert!(!token(1).is_cancelled());
    }
    assert!(
        token(1).is_cancelled(),
        "the dropped batch gave up on the call"
    );

    // The caller's own token stays as it was: only the batch's calls are cancelled.
    let caller = CancellationToken::new();
    let options = BatchOptions::new()
        .with_deadline(50 * MS)
        .with_cancellation(caller.clone());
    manager.execute_batch_with(&requests, &options).await;
    assert!(token(2).is_cancelled());
    assert!(!caller.is_cancelled());
}

#[tokio::test(start_paused = true)]
async fn a_time_limit_cancels_its_attempts_token_and_a_retry_gets_a_fresh_one() {
    let manager = ToolCallManager::new("batch-tests");
    let tokens = HeldTokens::default();
    let hold = holding_tool("slow", &tokens).with_timeout(20 * MS);
    manager.register(Arc::new(hold)).unwrap();
    manager
        .set_retry_config(
            "slow",
            toolsmith::ToolRetryConfig::fixed(1, MS).with_jitter(toolsmith::Jitter::None),
        )
        .unwrap();
    let caller = CancellationToken::new();
    let options = BatchOptions::new().with_cancellation(caller.clone());
    let outcomes = manager
        .execute_batch_with(&[call("a", "slow", json!({}))], &options)
        .await;
    assert_eq!(outcomes[0].attempts, 2);
    assert!(matches!(outcomes[0].result, Err(ToolError::Timeout { .. })));
    let tokens = tokens.lock().unwrap();
    assert_eq!(tokens.len(), 2);
    // Each attempt's limit fired its own token; the second attempt began with a live one.
    assert!(tokens.iter().all(CancellationToken::is_cancelled));
    assert!(!caller.is_cancelled());
}

#[tokio::test(start_paused = true)]
async fn a_call_waiting_for_a_slot_does_not_run_a_tool_removed_meanwhile() {
    let probe = Probe::new();
    let manager = Arc::new(manager_with(&probe));
    manager
        .register(Arc::new(probe_tool(
            "gone",
            ToolAnnotations::default(),
            &probe,
        )))
        .unwrap();
    manager.activate(&["work".into(), "gone".into()]);
    let requests = [
        call("a", "work", json!({"ms": 10})),
        call("b", "work", json!({"ms": 10})),
        call("c", "gone", json!({})),
    ];
    let remover = Arc::clone(&manager);
    tokio::spawn(async move {
        tokio::time::sleep(5 * MS).await;
        remover.deregister("gone");
    });
    // Two slots: c waits for one while "gone" is removed.
    let options = BatchOptions::new()
        .with_concurrency_limit(2)
        .with_offer_check(true);
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert!(outcomes[0].result.is_ok() && outcomes[1].result.is_ok());
    assert_eq!(
        outcomes[2].result,
        Err(ToolError::UnknownTool("gone".into()))
    );
    assert_eq!(outcomes[2].attempts, 0);
    assert_eq!(probe.started_tags(), ["a", "b"]);
}

/// What a run lends its calls in the tests below.
struct RunTag(&'static str);

/// A tool that answers with the `RunTag` its call's context carries ("none" without one).
fn tag_reader(name: &str) -> toolsmith::FnTool {
    toolsmith::FnTool::new(
        name,
        "Answers with the run tag its call was lent.",
        toolsmith::Args::new(
            toolsmith::scheme::object()
                .optional("tag", toolsmith::scheme::string())
                .build(),
        ),
        |_: toolsmith::ToolArgs<'_>| async {
            let context = toolsmith::ToolCallContext::current().expect("set by the batch");
            let tag = context.value::<RunTag>().map_or("none", |tag| tag.0);
            Ok(toolsmith::ToolCallResult::text(tag))
        },
    )
}

#[tokio::test(start_paused = true)]
async fn a_batch_lends_its_call_values_to_every_call_and_attempt() {
    let manager = ToolCallManager::new("batch-tests");
    manager.register(Arc::new(tag_reader("plain"))).unwrap();
    // A time limit gives each attempt a context of its own: it keeps the call's values.
    let limited = tag_reader("limited").with_timeout(20 * MS);
    manager.register(Arc::new(limited)).unwrap();
    let requests = [
        call("a", "plain", json!({})),
        call("b", "limited", json!({})),
    ];
    let answers = |outcomes: Vec<ToolCallOutcome>| -> Vec<String> {
        outcomes
            .into_iter()
            .map(|o| o.result.unwrap().content.to_text())
            .collect()
    };

    let mut values = toolsmith::SessionState::new();
    values.insert(RunTag("run-1"));
    let options = BatchOptions::new().with_call_values(values);
    let lent = manager.execute_batch_with(&requests, &options).await;
    assert_eq!(answers(lent), ["run-1", "run-1"]);

    // Options without values lend nothing; another batch's values are its own.
    let bare = manager
        .execute_batch_with(&requests, &BatchOptions::new())
        .await;
    assert_eq!(answers(bare), ["none", "none"]);
    let mut other = toolsmith::SessionState::new();
    other.insert(RunTag("run-2"));
    let other = BatchOptions::new().with_call_values(other);
    let (first, second) = futures::join!(
        manager.execute_batch_with(&requests, &options),
        manager.execute_batch_with(&requests, &other),
    );
    assert_eq!(answers(first), ["run-1", "run-1"]);
    assert_eq!(answers(second), ["run-2", "run-2"]);
}

/// Each item of `stream`, with how long after `started` it came.
async fn timed_items(
    stream: impl futures::Stream<Item = (usize, ToolCallOutcome)>,
    started: Instant,
) -> Vec<(usize, ToolCallOutcome, Duration)> {
    use futures::StreamExt as _;
    stream
        .map(|(index, outcome)| (index, outcome, started.elapsed()))
        .collect()
        .await
}

/// Which call each item was, and when it came.
fn ends(items: &[(usize, ToolCallOutcome, Duration)]) -> Vec<(usize, Duration)> {
    items.iter().map(|(index, _, at)| (*index, *at)).collect()
}

#[tokio::test(start_paused = true)]
async fn a_batch_stream_hands_out_each_outcome_as_its_call_ends() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("slow", "work", json!({"ms": 300})),
        call("quick", "work", json!({"ms": 100})),
        call("middle", "work", json!({"ms": 200})),
        call("after", "work", json!({})).depends_on(["quick"]),
        call("nope", "missing", json!({})),
    ];
    let options = BatchOptions::new();
    let started = Instant::now();
    let items = timed_items(manager.execute_batch_stream(&requests, &options), started).await;
    let order = ends(&items);
    assert_eq!(
        order,
        [
            // Refused when its stage is admitted, before anything runs.
            (4, Duration::ZERO),
            (1, 100 * MS),
            (2, 200 * MS),
            (0, 300 * MS),
            // Its stage starts when the first stage has ended.
            (3, 300 * MS),
        ]
    );
    // The same outcomes as the batch's, which keeps request order.
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    for (index, outcome, _) in &items {
        assert_eq!(outcome, &outcomes[*index]);
    }
    assert_eq!(
        items[0].1.result,
        Err(ToolError::UnknownTool("missing".into()))
    );
    assert_eq!(
        probe.total_runs(),
        8,
        "each of the four runnable calls ran once a batch"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stopped_workflow_stream_still_hands_out_every_outcome_once() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("slow", "work", json!({"ms": 300})),
        call("quick", "work", json!({"ms": 100})),
        call("after", "work", json!({})).depends_on(["slow"]),
    ];
    let workflow = manager.build_workflow(&requests).unwrap();
    let options = BatchOptions::new().with_deadline(150 * MS);
    let started = Instant::now();
    let items = timed_items(
        manager.execute_workflow_stream(&workflow, &options),
        started,
    )
    .await;
    let order = ends(&items);
    assert_eq!(order, [(1, 100 * MS), (0, 150 * MS), (2, 150 * MS)]);
    assert!(items[0].1.result.is_ok());
    assert_eq!(
        items[1].1.result,
        cancelled("stopped: the batch deadline of 150ms passed")
    );
    assert_eq!(
        items[2].1.result,
        cancelled("not run: the batch deadline of 150ms passed")
    );
    assert_eq!(probe.running(), 0, "the slow call's future was dropped");
}

#[tokio::test(start_paused = true)]
async fn a_batch_stream_that_cannot_be_planned_hands_out_the_error_for_each_call() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("a", "work", json!({})),
        call("b", "work", json!({})).depends_on(["a", "b"]),
    ];
    let options = BatchOptions::new();
    let items = timed_items(
        manager.execute_batch_stream(&requests, &options),
        Instant::now(),
    )
    .await;
    let indexes: Vec<usize> = items.iter().map(|(i, _, _)| *i).collect();
    assert_eq!(indexes, [0, 1]);
    for (index, outcome, _) in &items {
        assert_eq!(outcome.id, requests[*index].id);
        let err = outcome.result.as_ref().unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        assert!(err.to_string().contains('b'), "{err}");
    }
    assert_eq!(probe.total_runs(), 0);
}

#[tokio::test(start_paused = true)]
async fn dropping_a_batch_stream_cancels_the_calls_still_running() {
    use futures::StreamExt as _;
    let manager = ToolCallManager::new("batch-tests");
    let tokens = HeldTokens::default();
    manager
        .register(Arc::new(holding_tool("hold", &tokens)))
        .unwrap();
    manager
        .register(Arc::new(probe_tool(
            "work",
            ToolAnnotations::default(),
            &Probe::new(),
        )))
        .unwrap();
    let requests = [
        call("held", "hold", json!({})),
        call("done", "work", json!({})),
    ];
    let options = BatchOptions::new();
    {
        let mut stream = std::pin::pin!(manager.execute_batch_stream(&requests, &options));
        let (index, outcome) = stream.next().await.expect("the quick call's outcome");
        assert_eq!((index, outcome.id.as_str()), (1, "done"));
        assert!(
            futures::poll!(stream.next()).is_pending(),
            "the held call runs"
        );
        assert!(!tokens.lock().unwrap()[0].is_cancelled());
    }
    assert!(
        tokens.lock().unwrap()[0].is_cancelled(),
        "the dropped stream gave up on the call"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_whose_tool_turns_destructive_while_it_waits_still_runs_alone() {
    // "swap" is an ordinary tool when the stage is admitted, and is replaced by a destructive
    // one while its call waits for a slot: re-admitted, the call is destructive, and waits
    // for the destructive call already running.
    let probe = Probe::new();
    let destructive_runs = Probe::new();
    let manager = Arc::new(ToolCallManager::new("batch-tests"));
    let destructive = ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    };
    for (name, annotations, probe) in [
        ("wipe", destructive, &destructive_runs),
        ("work", ToolAnnotations::default(), &probe),
        ("swap", ToolAnnotations::default(), &probe),
    ] {
        manager
            .register(Arc::new(probe_tool(name, annotations, probe)))
            .unwrap();
    }
    let requests = [
        call("wipe", "wipe", json!({"ms": 20})),
        call("work", "work", json!({"ms": 10})),
        call("swap", "swap", json!({"ms": 10})),
    ];
    let replacer = Arc::clone(&manager);
    let replaced_by = Arc::clone(&destructive_runs);
    tokio::spawn(async move {
        tokio::time::sleep(5 * MS).await;
        replacer.deregister("swap");
        replacer
            .register(Arc::new(probe_tool("swap", destructive, &replaced_by)))
            .unwrap();
    });
    let options = BatchOptions::new().with_concurrency_limit(2);
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert!(outcomes.iter().all(|o| o.result.is_ok()), "{outcomes:?}");
    assert_eq!(destructive_runs.started_tags(), ["wipe", "swap"]);
    assert_eq!(
        destructive_runs.max_running(),
        1,
        "two destructive calls ran at once: {:?}",
        destructive_runs.starts()
    );
    assert_eq!(destructive_runs.starts()[1].1, 20 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_time_limit_set_during_a_batch_reaches_the_calls_still_waiting() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    // Two at a time: the third call is checked with the others up front, then waits.
    manager.set_concurrency_limit(2);
    let requests = [
        call("first", "work", json!({"ms": 20})),
        call("second", "work", json!({"ms": 20})),
        call("third", "work", json!({"ms": 20})),
    ];
    let set_limit = async {
        tokio::time::sleep(5 * MS).await;
        manager.set_timeout("work", Some(10 * MS)).unwrap();
    };
    let (outcomes, ()) = tokio::join!(manager.execute_batch(&requests), set_limit);
    // The running calls keep the limit they started with; the waiting one gets the new one.
    assert_eq!(
        outcomes[0].result.as_ref().unwrap().content.to_text(),
        "first"
    );
    assert_eq!(
        outcomes[1].result.as_ref().unwrap().content.to_text(),
        "second"
    );
    let error = outcomes[2].result.as_ref().unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::Timeout, "{error}");
    assert_eq!(outcomes[2].elapsed, 10 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_retry_config_set_during_a_batch_reaches_the_calls_still_waiting() {
    // For the tool, and as the manager's policy.
    let setters: [fn(&ToolCallManager, ToolRetryConfig); 2] = [
        |manager, config| manager.set_retry_config("work", config).unwrap(),
        |manager, config| manager.set_retry_policy(Some(config)),
    ];
    for set in setters {
        let probe = Probe::new();
        let manager = manager_with(&probe);
        // Two at a time: the third call is checked with the others up front, then waits.
        manager.set_concurrency_limit(2);
        let fails_once = json!({"ms": 20, "fail": "network", "fail_times": 1});
        let requests = [
            call("first", "work", fails_once.clone()),
            call("second", "work", json!({"ms": 20})),
            call("third", "work", fails_once),
        ];
        let set_config = async {
            tokio::time::sleep(5 * MS).await;
            set(
                &manager,
                ToolRetryConfig::fixed(2, 10 * MS).with_jitter(Jitter::None),
            );
        };
        let (outcomes, ()) = tokio::join!(manager.execute_batch(&requests), set_config);
        // The running call keeps the config it started with (none: `work` is not retried by
        // default); the waiting one gets the new one, and its retry succeeds.
        assert_eq!(
            outcomes[0].result,
            Err(ToolError::network("work", "connection reset"))
        );
        assert_eq!(outcomes[0].attempts, 1);
        assert_eq!(
            outcomes[2].result.as_ref().map(|r| r.content.to_text()),
            Ok("third".to_owned()),
            "{:?}",
            outcomes[2]
        );
        assert_eq!(outcomes[2].attempts, 2);
        assert_eq!(outcomes[2].elapsed, 50 * MS);
        assert_eq!(
            outcomes[1].result.as_ref().map(|r| r.content.to_text()),
            Ok("second".to_owned())
        );
    }

    // Cleared during the batch: the running call keeps its retries, the waiting one has none.
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager.set_concurrency_limit(2);
    manager
        .set_retry_config(
            "work",
            ToolRetryConfig::fixed(2, 10 * MS).with_jitter(Jitter::None),
        )
        .unwrap();
    let fails_once = json!({"ms": 20, "fail": "network", "fail_times": 1});
    let requests = [
        call("first", "work", fails_once.clone()),
        call("second", "work", json!({"ms": 20})),
        call("third", "work", fails_once),
    ];
    let clear = async {
        tokio::time::sleep(5 * MS).await;
        manager.clear_retry_config("work");
    };
    let (outcomes, ()) = tokio::join!(manager.execute_batch(&requests), clear);
    assert_eq!(
        (
            outcomes[0].result.as_ref().map(|r| r.content.to_text()),
            outcomes[0].attempts
        ),
        (Ok("first".to_owned()), 2)
    );
    assert_eq!(
        (
            outcomes[2].result.clone().map(|r| r.content.to_text()),
            outcomes[2].attempts
        ),
        (Err(ToolError::network("work", "connection reset")), 1)
    );
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_calls_keep_their_order_their_limit_and_destructive_ones_alone() {
    let (work, wipe) = (Probe::new(), Probe::new());
    let manager = ToolCallManager::new("batch-tests");
    manager
        .register(Arc::new(probe_tool(
            "work",
            ToolAnnotations::default(),
            &work,
        )))
        .unwrap();
    let destructive = ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    };
    manager
        .register(Arc::new(probe_tool("wipe", destructive, &wipe)))
        .unwrap();
    // Every 100th call destructive (and slower, to overlap if it could), every third one
    // depending on the call before it.
    let requests: Vec<ToolCallRequest> = (0..10_000)
        .map(|i| {
            let (tool, ms) = if i % 100 == 7 {
                ("wipe", 5)
            } else {
                ("work", 1)
            };
            let request = call(&format!("c{i}"), tool, json!({"ms": ms}));
            if i % 3 == 1 {
                request.depends_on([format!("c{}", i - 1)])
            } else {
                request
            }
        })
        .collect();
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(outcomes.len(), requests.len());
    for (i, outcome) in outcomes.iter().enumerate() {
        assert_eq!(outcome.id, format!("c{i}"));
        assert_eq!(outcome.attempts, 1, "{outcome:?}");
        assert_eq!(
            outcome.result.as_ref().map(|r| r.content.to_text()),
            Ok(outcome.id.clone())
        );
    }
    assert_eq!(wipe.total_runs(), 100);
    assert_eq!(wipe.max_running(), 1, "wipe overlapped");
    // The limit counts a running destructive call too: at most one slot is a wipe's.
    let limit = toolsmith::DEFAULT_CONCURRENCY_LIMIT;
    assert!(
        (limit - 1..=limit).contains(&work.max_running()),
        "{}",
        work.max_running()
    );
}
