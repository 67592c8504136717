//! Retries: backoff schedules (with and without jitter), which errors and which tools are
//! retried, and attempt counts. Time is Tokio's paused clock: schedules are exact.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{Probe, call, probe_tool};
use serde_json::json;
use tokio::time::Instant;
use toolsmith::async_trait;
use toolsmith::{
    Args, FnTool, Jitter, Tool, ToolAnnotations, ToolArgs, ToolArguments, ToolCallManager,
    ToolCallRequest, ToolCallResult, ToolDefinition, ToolError, ToolErrorKind, ToolImpl,
    ToolRetryConfig, scheme,
};

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);

fn idempotent() -> ToolAnnotations {
    ToolAnnotations {
        idempotent: Some(true),
        ..ToolAnnotations::default()
    }
}

/// A manager with `safe` (idempotent), `reader` (read-only) and `plain` (no annotations)
/// probe tools, and the spec's default retry config without jitter.
fn manager_with(probe: &Arc<Probe>) -> ToolCallManager {
    let manager = ToolCallManager::new("retry-tests");
    for (name, annotations) in [
        ("safe", idempotent()),
        ("reader", ToolAnnotations::read_only()),
        ("plain", ToolAnnotations::default()),
    ] {
        manager
            .register(Arc::new(probe_tool(name, annotations, probe)))
            .unwrap();
    }
    manager.set_default_retry_config(ToolRetryConfig::default().with_jitter(Jitter::None));
    manager
}

fn start_times(probe: &Probe) -> Vec<Duration> {
    probe.starts().into_iter().map(|(_, at)| at).collect()
}

#[tokio::test(start_paused = true)]
async fn safe_tools_follow_the_default_exponential_schedule() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let outcome = manager
        .execute_with_retry(&call(
            "c",
            "safe",
            json!({"fail": "network", "fail_times": 3}),
        ))
        .await;
    assert_eq!(outcome.result.unwrap().content.to_text(), "c");
    assert_eq!(outcome.attempts, 4);
    assert_eq!(start_times(&probe), [0, 1, 3, 7].map(|s| s * SECOND));
    assert_eq!(outcome.elapsed, 7 * SECOND);
}

#[tokio::test(start_paused = true)]
async fn retries_stop_after_max_retries_with_the_last_error() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let outcome = manager
        .execute_with_retry(&call("c", "reader", json!({"fail": "network"})))
        .await;
    assert_eq!(
        outcome.result,
        Err(ToolError::network("reader", "connection reset"))
    );
    assert_eq!(outcome.attempts, 4);
    assert_eq!(outcome.elapsed, 7 * SECOND);
}

#[tokio::test(start_paused = true)]
async fn the_backoff_is_capped() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let config = ToolRetryConfig {
        max_retries: 5,
        max_backoff: 3 * SECOND,
        ..ToolRetryConfig::default().with_jitter(Jitter::None)
    };
    manager.set_retry_config("safe", config).unwrap();
    manager
        .execute_with_retry(&call("c", "safe", json!({"fail": "network"})))
        .await;
    // Waits 1, 2, 3, 3, 3 s.
    assert_eq!(start_times(&probe), [0, 1, 3, 6, 9, 12].map(|s| s * SECOND));
}

#[tokio::test(start_paused = true)]
async fn tools_not_known_to_be_safe_are_not_retried_by_default() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let outcome = manager
        .execute_with_retry(&call("c", "plain", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 1);
    assert_eq!(outcome.result.unwrap_err().kind(), ToolErrorKind::Network);
    assert!(manager.retry_config("plain").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_config_set_on_the_manager_retries_any_tool() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager
        .set_retry_config(
            "plain",
            ToolRetryConfig::exponential(2).with_jitter(Jitter::None),
        )
        .unwrap();
    assert_eq!(
        manager.retry_config("plain").unwrap().initial_backoff,
        100 * MS
    );
    let outcome = manager
        .execute_with_retry(&call("c", "plain", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 3);
    assert_eq!(start_times(&probe), [0, 100, 300].map(|ms| ms * MS));

    assert_eq!(
        manager.set_retry_config("ghost", ToolRetryConfig::default()),
        Err(ToolError::UnknownTool("ghost".into()))
    );
    manager.clear_retry_config("plain");
    assert!(manager.retry_config("plain").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_config_set_on_the_manager_goes_with_its_tool() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager
        .set_retry_config("plain", ToolRetryConfig::fixed(3, 10 * MS))
        .unwrap();
    manager.deregister("plain").unwrap();
    // Kept by name, it outlived the tool: an unknown name had a config, and a tool
    // registered anew under the name, with none of its own, was retried 3 times.
    assert_eq!(manager.retry_config("plain"), None);
    manager
        .register(Arc::new(probe_tool(
            "plain",
            ToolAnnotations::default(),
            &probe,
        )))
        .unwrap();
    assert_eq!(manager.retry_config("plain"), None);
    let outcome = manager
        .execute_with_retry(&call("c", "plain", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 1);
    // Another tool's config stays.
    manager
        .set_retry_config("safe", ToolRetryConfig::never())
        .unwrap();
    manager.deregister("reader").unwrap();
    assert_eq!(manager.retry_config("safe"), Some(ToolRetryConfig::never()));
}

#[tokio::test(start_paused = true)]
async fn the_retry_policy_covers_every_tool_without_a_config_even_later_ones() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager
        .set_retry_config("safe", ToolRetryConfig::never())
        .unwrap();
    let policy = ToolRetryConfig::fixed(2, 10 * MS).with_jitter(Jitter::None);
    manager.set_retry_policy(Some(policy.clone()));
    manager
        .register(Arc::new(probe_tool(
            "late",
            ToolAnnotations::default(),
            &probe,
        )))
        .unwrap();
    assert_eq!(manager.retry_policy(), Some(policy.clone()));
    assert_eq!(manager.retry_config("late"), Some(policy.clone()));
    assert_eq!(manager.retry_config("safe"), Some(ToolRetryConfig::never()));

    // Unannotated, registered before or after the policy: retried by it.
    for name in ["plain", "late"] {
        let outcome = manager
            .execute_with_retry(&call(name, name, json!({"fail": "network"})))
            .await;
        assert_eq!(outcome.attempts, 3, "{name}");
        assert_eq!(
            outcome.result,
            Err(ToolError::network(name, "connection reset"))
        );
    }
    // The policy's own error kinds still decide: a failure it does not name is final.
    let outcome = manager
        .execute_with_retry(&call("x", "late", json!({"fail": "execution"})))
        .await;
    assert_eq!(outcome.attempts, 1);
    // A config set for the tool comes first.
    let outcome = manager
        .execute_with_retry(&call("s", "safe", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 1);

    manager.set_retry_policy(None);
    assert_eq!(manager.retry_policy(), None);
    assert!(manager.retry_config("late").is_none());
    let outcome = manager
        .execute_with_retry(&call("y", "late", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn fixed_delays_and_custom_jitter_shape_the_schedule() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let fixed = ToolRetryConfig::fixed(3, 2 * SECOND).with_jitter(Jitter::None);
    manager.set_retry_config("plain", fixed).unwrap();
    manager
        .execute_with_retry(&call("c", "plain", json!({"fail": "network"})))
        .await;
    assert_eq!(start_times(&probe), [0, 2, 4, 6].map(|s| s * SECOND));

    let probe = Probe::new();
    let manager = manager_with(&probe);
    let quarter = Jitter::Custom(Arc::new(|backoff: Duration| backoff / 4));
    manager
        .set_retry_config("plain", ToolRetryConfig::default().with_jitter(quarter))
        .unwrap();
    manager
        .execute_with_retry(&call("c", "plain", json!({"fail": "network"})))
        .await;
    assert_eq!(start_times(&probe), [0, 250, 750, 1750].map(|ms| ms * MS));
}

#[tokio::test(start_paused = true)]
async fn seeded_full_jitter_is_reproducible_and_within_the_backoff() {
    let schedule = |seed| async move {
        let probe = Probe::new();
        let manager = manager_with(&probe);
        let config = ToolRetryConfig::default().with_jitter(Jitter::FullSeeded(seed));
        manager.set_retry_config("plain", config).unwrap();
        manager
            .execute_with_retry(&call("c", "plain", json!({"fail": "network"})))
            .await;
        let starts = start_times(&probe);
        starts.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>()
    };
    let waits = schedule(42).await;
    assert_eq!(waits.len(), 3);
    for (retry, wait) in waits.iter().enumerate() {
        assert!(*wait <= SECOND * 2u32.pow(retry as u32), "{waits:?}");
    }
    assert_eq!(waits, schedule(42).await, "same seed, same schedule");
    assert_ne!(waits, schedule(43).await, "another seed, another schedule");
    assert_ne!(waits, [1, 2, 4].map(|s| s * SECOND), "jitter applied");
}

#[tokio::test(start_paused = true)]
async fn unseeded_full_jitter_never_waits_longer_than_the_backoff() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager
        .set_retry_config("plain", ToolRetryConfig::default())
        .unwrap();
    let started = Instant::now();
    let outcome = manager
        .execute_with_retry(&call("c", "plain", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 4);
    assert!(started.elapsed() <= 7 * SECOND);
}

#[tokio::test(start_paused = true)]
async fn patterns_choose_which_messages_are_retried() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let on = |patterns: &[&str]| {
        ToolRetryConfig::fixed(2, MS)
            .with_jitter(Jitter::None)
            .retryable_on(patterns.iter().copied())
    };
    manager.set_retry_config("plain", on(&["broke"])).unwrap();
    let outcome = manager
        .execute_with_retry(&call("a", "plain", json!({"fail": "execution"})))
        .await;
    assert_eq!(outcome.attempts, 3, "'a broke' matches");

    manager.set_retry_config("plain", on(&["503"])).unwrap();
    let outcome = manager
        .execute_with_retry(&call("b", "plain", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 1, "patterns replace the kinds");
}

/// Spec 02's patterns (`retryable_on(["timeout", "rate limit"])`, `["503", "timeout"]`)
/// retry a tool's time limit, which says "timed out": either word names it.
#[tokio::test(start_paused = true)]
async fn the_pattern_timeout_retries_a_time_limit() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager.set_timeout("plain", Some(50 * MS)).unwrap();
    for pattern in ["timeout", "timed out"] {
        let config = ToolRetryConfig::fixed(2, MS)
            .with_jitter(Jitter::None)
            .retryable_on([pattern, "rate limit"]);
        manager.set_retry_config("plain", config).unwrap();
        let outcome = manager
            .execute_with_retry(&call("c", "plain", json!({"ms": 80})))
            .await;
        assert_eq!(outcome.result, Err(ToolError::timeout("plain")));
        assert_eq!(outcome.attempts, 3, "{pattern:?} names a time limit");
    }
    // A pattern that says neither still leaves a time limit alone.
    let config = ToolRetryConfig::fixed(2, MS).retryable_on(["503"]);
    manager.set_retry_config("plain", config).unwrap();
    let outcome = manager
        .execute_with_retry(&call("c", "plain", json!({"ms": 80})))
        .await;
    assert_eq!(outcome.attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn some_errors_are_never_retried() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let everything = ToolRetryConfig::fixed(5, MS).retry_on([
        ToolErrorKind::Cancelled,
        ToolErrorKind::InvalidArguments,
        ToolErrorKind::UnknownTool,
        ToolErrorKind::NotActive,
        ToolErrorKind::Execution,
    ]);
    manager.set_retry_config("safe", everything).unwrap();
    for fail in ["cancelled", "invalid"] {
        let outcome = manager
            .execute_with_retry(&call(fail, "safe", json!({"fail": fail})))
            .await;
        assert_eq!(outcome.attempts, 1, "{fail}");
    }
    let outcome = manager
        .execute_with_retry(&call("x", "safe", json!({"fail": "execution"})))
        .await;
    assert_eq!(outcome.attempts, 6, "Execution was asked for");

    // Lookup and validation fail before any attempt.
    let unknown = manager
        .execute_with_retry(&call("u", "ghost", json!({})))
        .await;
    assert_eq!(unknown.result, Err(ToolError::UnknownTool("ghost".into())));
    let invalid = manager
        .execute_with_retry(&call("i", "safe", json!({"ms": -1})))
        .await;
    assert_eq!(
        invalid.result.unwrap_err().kind(),
        ToolErrorKind::InvalidArguments
    );
    assert_eq!((unknown.attempts, invalid.attempts), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn timeouts_are_retried_each_attempt_with_its_own_limit() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    manager.set_timeout("safe", Some(50 * MS)).unwrap();
    let outcome = manager
        .execute_with_retry(&call("c", "safe", json!({"ms": 80})))
        .await;
    assert_eq!(outcome.result, Err(ToolError::timeout("safe")));
    assert_eq!(outcome.attempts, 4);
    assert_eq!(outcome.elapsed, 7 * SECOND + 4 * 50 * MS);
    assert_eq!(probe.running(), 0);
}

#[tokio::test(start_paused = true)]
async fn batches_retry_and_report_attempts() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [
        call("flaky", "safe", json!({"fail": "network", "fail_times": 2})),
        call("next", "plain", json!({})).depends_on(["flaky"]),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(outcomes[0].attempts, 3);
    assert!(outcomes[0].result.is_ok());
    assert_eq!(outcomes[0].elapsed, 3 * SECOND);
    assert!(outcomes[1].result.is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_retry_that_would_wait_past_the_batch_deadline_is_not_made() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let requests = [call("c", "safe", json!({"ms": 10, "fail": "network"}))];
    let options = toolsmith::BatchOptions::new().with_deadline(2500 * MS);
    let started = Instant::now();
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    // Retried after 1 s; the second run fails at 1.02 s, and the next wait (2 s) would end
    // past the deadline: the call ends there, with its error rather than a cancellation.
    assert_eq!(
        outcomes[0].result,
        Err(ToolError::network("safe", "connection reset"))
    );
    assert_eq!(outcomes[0].attempts, 2);
    assert_eq!(started.elapsed(), 1020 * MS);
}

/// Real time: a batch's token and deadline must stop a call whose retries never wait,
/// which Tokio's paused clock, never idle under such a call, could not show.
#[tokio::test]
async fn a_batch_stops_retries_that_do_not_wait() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let runs = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&runs);
    let manager = ToolCallManager::new("retry-tests");
    let busy = FnTool::new(
        "busy",
        "Works a millisecond, then fails.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(MS);
            async { Err(ToolError::network("busy", "connection reset")) }
        },
    );
    manager.register(Arc::new(busy)).unwrap();
    manager
        .set_retry_config("busy", ToolRetryConfig::fixed(1_000, Duration::ZERO))
        .unwrap();
    let requests = [ToolCallRequest::new("c", "busy", ToolArguments::new())];

    let token = toolsmith::CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(50 * MS).await;
        canceller.cancel();
    });
    let options = toolsmith::BatchOptions::new().with_cancellation(token);
    let started = std::time::Instant::now();
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    assert_eq!(
        outcomes[0].result,
        Err(ToolError::Cancelled(
            "stopped: the batch was cancelled".into()
        ))
    );
    assert!(started.elapsed() < 500 * MS, "{:?}", started.elapsed());
    assert!(runs.load(Ordering::SeqCst) < 500);

    // The deadline ends it too (stopped, or with its error when no retry could start
    // before the deadline).
    runs.store(0, Ordering::SeqCst);
    let options = toolsmith::BatchOptions::new().with_deadline(50 * MS);
    let started = std::time::Instant::now();
    manager.execute_batch_with(&requests, &options).await;
    assert!(started.elapsed() < 500 * MS, "{:?}", started.elapsed());
    assert!(runs.load(Ordering::SeqCst) < 500);
}

#[test]
fn without_a_runtime_a_call_is_not_retried_after_a_backoff() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let outcome = futures::executor::block_on(manager.execute_with_retry(&call(
        "c",
        "safe",
        json!({"fail": "network"}),
    )));
    assert_eq!(outcome.attempts, 1);
    assert_eq!(outcome.result.unwrap_err().kind(), ToolErrorKind::Network);
}

/// A tool with its own retry config.
struct OwnConfig(FnTool);

#[async_trait]
impl ToolImpl for OwnConfig {
    fn definition(&self) -> Tool {
        self.0.definition()
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        self.0.execute(arguments).await
    }

    fn retry_config(&self) -> Option<ToolRetryConfig> {
        Some(ToolRetryConfig::fixed(1, 10 * MS).with_jitter(Jitter::None))
    }
}

#[tokio::test(start_paused = true)]
async fn a_tools_own_config_applies_unless_the_manager_sets_one() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let own = probe_tool("own", ToolAnnotations::default(), &probe);
    manager.register(Arc::new(OwnConfig(own))).unwrap();
    assert_eq!(manager.retry_config("own").unwrap().max_retries, 1);
    let outcome = manager
        .execute_with_retry(&call("a", "own", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 2);
    assert_eq!(outcome.elapsed, 10 * MS);

    manager
        .set_retry_config("own", ToolRetryConfig::never())
        .unwrap();
    let outcome = manager
        .execute_with_retry(&call("b", "own", json!({"fail": "network"})))
        .await;
    assert_eq!(outcome.attempts, 1);
}

/// A command group whose `get` is read-only and whose `put` has no annotations.
struct Store;

#[async_trait]
impl ToolImpl for Store {
    fn definition(&self) -> Tool {
        let schema = || Args::new(scheme::object().build());
        Tool::MultiCommands(
            "store".into(),
            vec![
                ToolDefinition::new("get", "Read.", schema())
                    .with_annotations(ToolAnnotations::read_only()),
                ToolDefinition::new("put", "Write.", schema()),
            ],
        )
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Err(ToolError::network("store", "connection reset"))
    }
}

#[tokio::test(start_paused = true)]
async fn annotations_are_read_per_command_of_a_group() {
    let manager = ToolCallManager::new("s");
    manager.register(Arc::new(Store)).unwrap();
    let command = |id: &str, name: &str| {
        ToolCallRequest::new(
            id,
            "store",
            ToolArguments::from_iter([("command", json!(name))]),
        )
    };
    let get = manager.execute_with_retry(&command("g", "get")).await;
    let put = manager.execute_with_retry(&command("p", "put")).await;
    assert_eq!((get.attempts, put.attempts), (4, 1));
}

#[tokio::test(start_paused = true)]
async fn fn_tools_with_annotations_are_retried_by_default() {
    let manager = ToolCallManager::new("s");
    let tries = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = Arc::clone(&tries);
    manager
        .register(Arc::new(
            FnTool::new(
                "lookup",
                "Looks something up.",
                Args::new(scheme::object().build()),
                move |_: ToolArgs<'_>| {
                    let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    async move {
                        if n == 0 {
                            Err(ToolError::timeout("lookup"))
                        } else {
                            Ok(ToolCallResult::text("found"))
                        }
                    }
                },
            )
            .with_annotations(ToolAnnotations::read_only()),
        ))
        .unwrap();
    let outcome = manager
        .execute_with_retry(&ToolCallRequest::new("c", "lookup", ToolArguments::new()))
        .await;
    assert_eq!(outcome.attempts, 2);
    // Full jitter on the default 1 s backoff.
    assert!(outcome.elapsed <= SECOND);
}

#[tokio::test(start_paused = true)]
async fn a_custom_jitter_that_panics_waits_the_backoff_and_loses_no_outcome() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let panicking = Jitter::Custom(Arc::new(|_: Duration| panic!("jitter bug")));
    manager
        .set_retry_config("plain", ToolRetryConfig::default().with_jitter(panicking))
        .unwrap();
    // Alone: the call is retried on the schedule without jitter, and succeeds.
    let outcome = manager
        .execute_with_retry(&call(
            "alone",
            "plain",
            json!({"fail": "network", "fail_times": 2}),
        ))
        .await;
    assert_eq!(outcome.result.unwrap().content.to_text(), "alone");
    assert_eq!(outcome.attempts, 3);
    assert_eq!(outcome.elapsed, 3 * SECOND);

    // In a batch: its outcome and the others' all come back.
    let requests = [
        call(
            "flaky",
            "plain",
            json!({"fail": "network", "fail_times": 1}),
        ),
        call("other", "safe", json!({})),
        call("failing", "plain", json!({"fail": "network"})),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(outcomes.len(), 3);
    assert_eq!(outcomes[0].attempts, 2);
    assert!(outcomes[0].result.is_ok(), "{:?}", outcomes[0].result);
    assert!(outcomes[1].result.is_ok());
    assert_eq!(outcomes[2].attempts, 4);
    assert_eq!(
        outcomes[2].result,
        Err(ToolError::network("plain", "connection reset"))
    );
}

/// A tool whose own retry config panics as it is asked for.
struct ConfigPanics(FnTool);

#[async_trait]
impl ToolImpl for ConfigPanics {
    fn definition(&self) -> Tool {
        self.0.definition()
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        self.0.execute(arguments).await
    }

    fn retry_config(&self) -> Option<ToolRetryConfig> {
        panic!("no config today")
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_config_that_panics_fails_its_call_only() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    let tool = probe_tool("moody", ToolAnnotations::default(), &probe);
    manager.register(Arc::new(ConfigPanics(tool))).unwrap();
    let requests = [call("a", "moody", json!({})), call("b", "plain", json!({}))];
    // The panic is the call's, as a panic of the tool's own code while it runs is: the
    // batch still gives every call its outcome.
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(
        outcomes[0].result,
        Err(ToolError::execution("moody", "panicked: no config today"))
    );
    assert_eq!(outcomes[0].attempts, 0);
    assert_eq!(outcomes[1].result.as_ref().unwrap().content.to_text(), "b");
    let outcome = manager.execute_with_retry(&requests[0]).await;
    assert_eq!(
        outcome.result,
        Err(ToolError::execution("moody", "panicked: no config today"))
    );
    assert_eq!(probe.started_tags(), ["b"]);
}

#[tokio::test(start_paused = true)]
async fn endless_retries_with_an_overflowing_backoff_end_at_the_batch_deadline() {
    let probe = Probe::new();
    let manager = manager_with(&probe);
    // Every bound as large as it goes: the second backoff overflows every representation.
    let endless = ToolRetryConfig {
        max_retries: u32::MAX,
        initial_backoff: SECOND,
        backoff_multiplier: f64::MAX,
        max_backoff: Duration::MAX,
        ..ToolRetryConfig::default()
    }
    .with_jitter(Jitter::None);
    manager.set_retry_config("plain", endless).unwrap();
    let requests = [call("c", "plain", json!({"fail": "network"}))];
    let options = toolsmith::BatchOptions::new().with_deadline(Duration::from_secs(60));
    let started = Instant::now();
    let outcomes = manager.execute_batch_with(&requests, &options).await;
    // Retried after 1 s; the next wait (capped at Duration::MAX) cannot end before the
    // deadline, so the call ends at once with its own error rather than a cancellation.
    assert_eq!(
        outcomes[0].result,
        Err(ToolError::network("plain", "connection reset"))
    );
    assert_eq!(outcomes[0].attempts, 2);
    assert_eq!(started.elapsed(), SECOND);
}
