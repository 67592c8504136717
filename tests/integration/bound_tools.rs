//! `#[bind]` and `#[ctx]` values given to the generated `new`: tools that carry state without
//! a session, run through the manager.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use toolsmith::async_trait;
use toolsmith::{
    ContextHit, ContextSearch, ServiceError, ToolArguments, ToolCallManager, ToolCallRequest,
    ToolConstructor, ToolError, ToolErrorKind, ToolImpl, tool_fn,
};

/// A counter shared by the tool and the test.
#[derive(Default)]
struct Counter(AtomicU32);

/// Adds to the counter and returns its new value.
#[tool_fn(category = "test")]
async fn bump(
    #[bind] counter: Arc<Counter>,
    #[bind] step: u32,
    /// How many steps to add.
    times: u32,
) -> Result<u32, ToolError> {
    Ok(counter.0.fetch_add(step * times, Ordering::SeqCst) + step * times)
}

struct Notes;

#[async_trait]
impl ContextSearch for Notes {
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        Ok(vec![ContextHit {
            source: "notes".into(),
            text: format!("{query} (limit {limit})"),
            score: 1.0,
        }])
    }
}

/// Recalls from the context.
#[tool_fn]
async fn recall(
    #[ctx] context: Arc<dyn ContextSearch>,
    query: String,
) -> Result<String, ToolError> {
    let hits = context
        .search(&query, 1)
        .await
        .map_err(|err| ToolError::execution("recall", err))?;
    Ok(hits[0].text.clone())
}

fn request(name: &str, arguments: serde_json::Value) -> ToolCallRequest {
    ToolCallRequest::new("c1", name, ToolArguments::try_from(arguments).unwrap())
}

#[tokio::test]
async fn a_bound_tool_runs_with_its_values() {
    let counter = Arc::new(Counter::default());
    let manager = ToolCallManager::new("bound");
    manager
        .register(Arc::new(Bump::new(Arc::clone(&counter), 5)))
        .unwrap();
    let result = manager
        .execute_one(&request("bump", json!({"times": 2})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "10");
    assert_eq!(counter.0.load(Ordering::SeqCst), 10);

    // Bound values are not arguments: the schema has only `times`, and a call that sends
    // `step` is refused before the tool runs.
    let definition = Bump.definition();
    let schema = definition.commands()[0].arguments.schema().clone();
    assert_eq!(schema["required"], json!(["times"]));
    assert!(schema["properties"].get("step").is_none());
    assert!(schema["properties"].get("counter").is_none());
    let err = manager
        .execute_one(&request("bump", json!({"times": 1, "step": 100})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(counter.0.load(Ordering::SeqCst), 10);
}

#[tokio::test]
async fn a_bound_tool_is_a_ready_made_constructor_and_clones_share_state() {
    let counter = Arc::new(Counter::default());
    let tool = Bump::new(Arc::clone(&counter), 1);
    let copy = tool.clone();
    let arguments = ToolArguments::try_from(json!({"times": 3})).unwrap();
    tool.execute(arguments.clone()).await.unwrap();
    copy.execute(arguments).await.unwrap();
    assert_eq!(counter.0.load(Ordering::SeqCst), 6);
    let constructor: Box<dyn ToolConstructor> = tool.into();
    assert!(!constructor.needs_session());
    assert_eq!(constructor.name(), "bump");
}

#[tokio::test]
async fn a_ctx_tool_is_built_from_a_value_without_a_session() {
    let tool = Recall::new(Arc::new(Notes));
    let result = tool
        .execute(ToolArguments::try_from(json!({"query": "deploys"})).unwrap())
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "deploys (limit 1)");
    // The same struct is still the session constructor.
    let constructor: Box<dyn ToolConstructor> = Recall.into();
    assert!(constructor.needs_session());
}

/// Appends to a log.
#[tool_fn(read_only = false, destructive = true, idempotent = false)]
fn append(#[bind] log: Arc<std::sync::Mutex<Vec<String>>>, line: String) -> usize {
    let mut log = log.lock().unwrap();
    log.push(line);
    log.len()
}

#[tokio::test]
async fn hints_can_be_stated_false() {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tool = Append::new(Arc::clone(&log));
    let result = tool
        .execute(ToolArguments::try_from(json!({"line": "one"})).unwrap())
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "1");
    assert_eq!(*log.lock().unwrap(), ["one"]);
    let definition = tool.definition();
    let hints = definition.commands()[0].annotations;
    assert_eq!(hints.read_only, Some(false));
    assert_eq!(hints.destructive, Some(true));
    assert_eq!(hints.idempotent, Some(false));
    assert_eq!(hints.open_world, None);
}

/// Greets with the bound greeting.
#[tool_fn]
fn greeting(#[bind] greeting: Arc<String>, name: String) -> String {
    format!("{greeting}, {name}!")
}

/// Reports the call's id; the context parameter has the function's name.
#[tool_fn]
async fn call_id(#[ctx] call_id: toolsmith::ToolCallContext) -> String {
    call_id.call_id().to_owned()
}

#[tokio::test]
async fn a_bound_or_context_parameter_may_share_its_functions_name() {
    let manager = ToolCallManager::new("bound");
    manager
        .register(Arc::new(Greeting::new(Arc::new("Hello".to_owned()))))
        .unwrap();
    manager.register(Arc::new(CallId)).unwrap();
    let result = manager
        .execute_one(&request("greeting", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "Hello, Ada!");
    // A batch runs each call in its context: the parameter is that context.
    let outcomes = manager
        .execute_batch(&[request("call_id", json!({}))])
        .await;
    assert_eq!(outcomes[0].result.as_ref().unwrap().content.to_text(), "c1");
}

/// Reports the id of the call it runs in, read where it runs (Tokio's blocking pool).
#[tool_fn(blocking)]
fn blocking_call_id() -> String {
    toolsmith::ToolCallContext::current().map_or_else(
        || "no context".to_owned(),
        |context| context.call_id().to_owned(),
    )
}

/// Reports whether the context it reads where it runs is cancelled once its time limit
/// passed.
#[tool_fn(blocking, timeout = "20ms")]
fn blocking_cancelled(#[bind] seen: Arc<std::sync::Mutex<Vec<bool>>>) -> String {
    let context = toolsmith::ToolCallContext::current().expect("the call's context");
    while !context.is_cancelled() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    seen.lock().unwrap().push(true);
    "stopped".to_owned()
}

#[tokio::test]
async fn a_blocking_tool_reads_its_calls_context_where_it_runs() {
    let manager = ToolCallManager::new("bound");
    manager.register(Arc::new(BlockingCallId)).unwrap();
    let outcomes = manager
        .execute_batch(&[request("blocking_call_id", json!({}))])
        .await;
    assert_eq!(outcomes[0].result.as_ref().unwrap().content.to_text(), "c1");
    // Under a bare `execute_one` there is none, as for any tool.
    let result = manager
        .execute_one(&request("blocking_call_id", json!({})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "no context");

    // With a time limit, the attempt's context: the limit reaches the blocking body, which
    // can stop (its thread is not stopped for it).
    let seen = Arc::default();
    manager
        .register(Arc::new(BlockingCancelled::new(Arc::clone(&seen))))
        .unwrap();
    let outcomes = manager
        .execute_batch(&[request("blocking_cancelled", json!({}))])
        .await;
    assert!(
        matches!(outcomes[0].result, Err(ToolError::Timeout { .. })),
        "{:?}",
        outcomes[0].result
    );
    for _ in 0..200 {
        if !seen.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(*seen.lock().unwrap(), [true]);
}

/// Keeps the token of the context it is given, as work it handed elsewhere would, and never
/// ends.
#[tool_fn(timeout = "20ms")]
async fn hold(
    #[bind] seen: Arc<std::sync::Mutex<Vec<toolsmith::CancellationToken>>>,
    #[ctx] context: toolsmith::ToolCallContext,
) -> String {
    seen.lock().unwrap().push(context.cancellation().clone());
    std::future::pending::<String>().await
}

#[tokio::test(start_paused = true)]
async fn a_context_parameter_hears_of_the_tools_time_limit() {
    let manager = ToolCallManager::new("bound");
    let seen = Arc::default();
    manager
        .register(Arc::new(Hold::new(Arc::clone(&seen))))
        .unwrap();
    let outcomes = manager.execute_batch(&[request("hold", json!({}))]).await;
    assert!(
        matches!(outcomes[0].result, Err(ToolError::Timeout { .. })),
        "{:?}",
        outcomes[0].result
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    // The limit fired the token of the context the tool was given.
    assert!(seen[0].is_cancelled());
}
