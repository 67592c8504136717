//! `#[tool_fn(retries = N)]`: the tool's own retry config, honoured by the manager's retry
//! path. Time is Tokio's paused clock, so the backoffs are exact.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use toolsmith::{
    ToolArguments, ToolCallManager, ToolCallRequest, ToolError, ToolImpl, ToolRetryConfig, tool_fn,
};

static FLAKY_RUNS: AtomicU32 = AtomicU32::new(0);

/// Fails with a network error on its first two runs, then echoes its text.
#[tool_fn(retries = 2)]
async fn flaky(text: String) -> Result<String, ToolError> {
    let run = FLAKY_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    if run < 3 {
        return Err(ToolError::network(
            "flaky",
            format!("run {run}: connection reset"),
        ));
    }
    Ok(format!("{text} on run {run}"))
}

static FRAGILE_RUNS: AtomicU32 = AtomicU32::new(0);

/// Fails with a network error once; never retried.
#[tool_fn(retries = 0)]
async fn fragile() -> Result<String, ToolError> {
    let run = FRAGILE_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    if run < 2 {
        return Err(ToolError::network("fragile", "connection reset"));
    }
    Ok("fine".into())
}

/// A command group whose `get` fails until its third run.
#[derive(Default)]
struct Remote {
    runs: AtomicU32,
}

/// A remote store.
#[tool_fn(name = "remote", retries = 2)]
impl Remote {
    /// Reads a key.
    async fn get(&self, key: String) -> Result<String, ToolError> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        if run < 3 {
            return Err(ToolError::timeout("remote"));
        }
        Ok(format!("{key}={run}"))
    }
}

fn request(name: &str, arguments: serde_json::Value) -> ToolCallRequest {
    ToolCallRequest::new("c1", name, ToolArguments::try_from(arguments).unwrap())
}

#[test]
fn the_attribute_sets_the_tools_retry_config() {
    assert_eq!(Flaky.retry_config(), Some(ToolRetryConfig::exponential(2)));
    assert_eq!(Fragile.retry_config(), Some(ToolRetryConfig::never()));
    assert_eq!(
        Remote::default().retry_config(),
        Some(ToolRetryConfig::exponential(2))
    );
}

#[tokio::test(start_paused = true)]
async fn a_flaky_tool_with_two_retries_succeeds_on_its_third_attempt() {
    let manager = ToolCallManager::new("macro-retries");
    manager.register(Arc::new(Flaky)).unwrap();
    let started = tokio::time::Instant::now();
    let outcome = manager
        .execute_with_retry(&request("flaky", json!({"text": "hello"})))
        .await;
    assert_eq!(outcome.result.unwrap().content.to_text(), "hello on run 3");
    assert_eq!(outcome.attempts, 3);
    assert_eq!(FLAKY_RUNS.load(Ordering::SeqCst), 3);
    // exponential(2): at most 100 ms then 200 ms (full jitter draws below each).
    assert!(started.elapsed() <= Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn retries_zero_never_retries_even_a_network_error() {
    let manager = ToolCallManager::new("macro-retries");
    manager.register(Arc::new(Fragile)).unwrap();
    let outcome = manager
        .execute_with_retry(&request("fragile", json!({})))
        .await;
    assert_eq!(
        outcome.result,
        Err(ToolError::network("fragile", "connection reset"))
    );
    assert_eq!(outcome.attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn a_command_group_with_retries_is_retried_through_a_batch() {
    let manager = ToolCallManager::new("macro-retries");
    manager.register(Arc::new(Remote::default())).unwrap();
    let outcomes = manager
        .execute_batch(&[request("remote", json!({"command": "get", "key": "k"}))])
        .await;
    assert_eq!(outcomes.len(), 1);
    assert_eq!(
        outcomes[0].result.as_ref().unwrap().content.to_text(),
        "k=3"
    );
    assert_eq!(outcomes[0].attempts, 3);
}

#[tokio::test(start_paused = true)]
async fn the_last_error_is_kept_when_retries_run_out() {
    /// Always times out.
    #[tool_fn(retries = 2)]
    async fn hopeless() -> Result<String, ToolError> {
        Err(ToolError::timeout("hopeless"))
    }
    let manager = ToolCallManager::new("macro-retries");
    manager.register(Arc::new(Hopeless)).unwrap();
    let outcome = manager
        .execute_with_retry(&request("hopeless", json!({})))
        .await;
    assert_eq!(outcome.result, Err(ToolError::timeout("hopeless")));
    assert_eq!(outcome.attempts, 3);
}

#[tokio::test(start_paused = true)]
async fn a_synchronous_tool_is_retried_with_its_arguments_each_time() {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    /// Fails with a network error until its third run (answered synchronously).
    #[tool_fn(retries = 3)]
    fn unsteady(n: u32) -> Result<u32, ToolError> {
        let run = RUNS.fetch_add(1, Ordering::SeqCst) + 1;
        if run < 3 {
            return Err(ToolError::network("unsteady", "connection reset"));
        }
        Ok(n * 10 + run)
    }
    let manager = ToolCallManager::new("macro-retries");
    manager.register(Arc::new(Unsteady)).unwrap();
    // "4" is repaired to 4 once, and each attempt reads the same repaired arguments.
    let outcome = manager
        .execute_with_retry(&request("unsteady", json!({"n": "4"})))
        .await;
    assert_eq!(outcome.result.unwrap().content.to_text(), "43");
    assert_eq!(outcome.attempts, 3);
}
