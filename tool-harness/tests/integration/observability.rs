//! Observability: the spans a user's subscriber sees for one run (their names, fields and
//! parents) and the events it is told, recorded by [`TraceTree`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use toolsmith_core::{
    Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolError, ToolImpl, ToolRetryConfig, ToolShed, scheme,
};
use toolsmith_harness::agent::{AgentSession, AgentTool};
use toolsmith_harness::model::{ScriptedModel, ScriptedTurn};
use tracing::Instrument as _;

use crate::common::trace_tree::TraceTree;

fn text_tool(name: &str, answer: &'static str) -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        name,
        format!("The {name} tool."),
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| async move { Ok(ToolCallResult::text(answer)) },
    ))
}

/// An `AgentTool`'s run goes on a task of its own; its spans still sit under the parent's
/// call of the tool, as the run sits under the call.
#[tokio::test]
async fn an_agent_tools_run_is_traced_under_the_call_that_started_it() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let child = AgentSession::builder(ScriptedModel::new([
        ScriptedTurn::call("lookup", json!({})),
        ScriptedTurn::text("found it"),
    ]))
    .with_model("child-model")
    .with_toolshed(ToolShed::new().tool(text_tool("lookup", "a hit")))
    .build()
    .unwrap();
    child.tool_manager().activate(&["lookup".into()]);
    let research: Arc<dyn ToolImpl> =
        Arc::new(AgentTool::new(Arc::new(child), "research", "Researches."));
    let parent = AgentSession::builder(ScriptedModel::new([
        ScriptedTurn::call("research", json!({"input": "find it"})),
        ScriptedTurn::text("done"),
    ]))
    .with_model("parent-model")
    .with_toolshed(ToolShed::new().tool(research))
    .build()
    .unwrap();
    parent.tool_manager().activate(&["research".into()]);
    parent.run("delegate").await.unwrap();

    let spans = trace.spans();
    let runs = trace.named("invoke_agent");
    assert_eq!(runs.len(), 2, "{spans:#?}");
    let child_run = runs
        .iter()
        .copied()
        .find(|&run| spans[run].field("gen_ai.request.model") == Some("child-model"))
        .expect("the child's run has a span");
    assert_eq!(
        trace.path(child_run),
        ["invoke_agent", "execute_tool", "invoke_agent"],
        "{spans:#?}"
    );
    let call = spans[child_run].parent.unwrap();
    assert_eq!(spans[call].field("gen_ai.tool.name"), Some("research"));
    // The child's own model call and tool call sit under its run.
    let lookup = trace
        .named("execute_tool")
        .into_iter()
        .find(|&span| spans[span].field("gen_ai.tool.name") == Some("lookup"))
        .expect("the child's call has a span");
    assert_eq!(
        trace.path(lookup),
        [
            "execute_tool",
            "invoke_agent",
            "execute_tool",
            "invoke_agent"
        ]
    );
    let child_chats = trace
        .named("chat")
        .into_iter()
        .filter(|&span| spans[span].parent == Some(child_run))
        .count();
    assert_eq!(child_chats, 2, "{spans:#?}");
}

/// A tool whose calls fail with a network error `failures` times, then answer.
fn flaky(failures: u32) -> Arc<dyn ToolImpl> {
    let left = Arc::new(AtomicU32::new(failures));
    Arc::new(FnTool::new(
        "flaky",
        "Fails, then answers.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let failed = left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            async move {
                if failed {
                    Err(ToolError::network("flaky", "connection reset"))
                } else {
                    Ok(ToolCallResult::text("at last"))
                }
            }
        },
    ))
}

/// A manager with `flaky` (failing twice, retried twice at once), `broken` (an execution
/// error), `refusing` (a result marked as an error) and `fine`.
fn outcome_tools() -> ToolCallManager {
    let manager = ToolCallManager::new("s");
    manager.register(flaky(2)).unwrap();
    manager
        .set_retry_config("flaky", ToolRetryConfig::fixed(2, Duration::ZERO))
        .unwrap();
    manager
        .register(Arc::new(FnTool::new(
            "broken",
            "Fails.",
            Args::new(scheme::object().build()),
            |_: ToolArgs<'_>| async { Err(ToolError::execution("broken", "disk full")) },
        )))
        .unwrap();
    manager
        .register(Arc::new(FnTool::new(
            "refusing",
            "Answers with an error result.",
            Args::new(scheme::object().build()),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::error("not allowed")) },
        )))
        .unwrap();
    manager.register(text_tool("fine", "ok")).unwrap();
    manager
}

fn calls_of(names: &[&str]) -> Vec<ToolCallRequest> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| ToolCallRequest::new(format!("c{i}"), *name, ToolArguments::new()))
        .collect()
}

/// Each call's `execute_tool` span says how the call ended (`error.type`, absent when it
/// succeeded) and how many times the tool ran.
#[tokio::test]
async fn a_calls_span_records_how_it_ended_and_its_attempts() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = outcome_tools();
    let outcomes = manager
        .execute_batch(&calls_of(&["flaky", "broken", "refusing", "fine"]))
        .await;
    assert_eq!(outcomes[0].attempts, 3, "{outcomes:?}");

    let spans = trace.spans();
    let ended = |tool: &str| {
        let span = trace
            .named("execute_tool")
            .into_iter()
            .find(|&span| spans[span].field("gen_ai.tool.name") == Some(tool))
            .unwrap_or_else(|| panic!("no span for {tool}: {spans:#?}"));
        (
            spans[span].field("error.type").map(str::to_owned),
            spans[span]
                .field("toolsmith.tool.attempts")
                .map(str::to_owned),
        )
    };
    let owned =
        |error: Option<&str>, attempts: &str| (error.map(str::to_owned), Some(attempts.to_owned()));
    assert_eq!(ended("flaky"), owned(None, "3"));
    assert_eq!(ended("broken"), owned(Some("\"execution\""), "1"));
    assert_eq!(ended("refusing"), owned(Some("\"tool_error\""), "1"));
    assert_eq!(ended("fine"), owned(None, "1"));
}

/// Each retry is a `debug` event in the call's span, with the attempt that failed and its
/// error's kind, not its text (which may quote the arguments).
#[tokio::test]
async fn each_retry_is_a_debug_event_in_the_calls_span() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = outcome_tools();
    manager.execute_batch(&calls_of(&["flaky"])).await;

    let call = trace.named("execute_tool")[0];
    let retries: Vec<_> = trace
        .events()
        .into_iter()
        .filter(|event| event.line.contains("retrying"))
        .collect();
    assert_eq!(retries.len(), 2, "{retries:#?}");
    for (attempt, event) in (1..).zip(&retries) {
        assert_eq!(event.level, tracing::Level::DEBUG);
        assert_eq!(event.span, Some(call));
        assert!(
            event.line.contains(&format!("attempt={attempt}"))
                && event.line.contains("error.type=\"network\"")
                && event.line.contains("tool=\"flaky\"")
                && !event.line.contains("connection reset"),
            "{event:?}"
        );
    }
}

/// A call served over MCP is an `execute_tool` span named as OpenTelemetry's MCP conventions
/// name it, with the JSON-RPC request's id and how the call ended.
#[cfg(feature = "mcp")]
#[tokio::test]
async fn a_served_mcp_call_is_traced_with_how_it_ended() {
    use rmcp::model::CallToolRequestParams;
    use toolsmith_harness::mcp::McpServerOptions;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let (manager, _) = crate::mcp::demo_manager();
    let (client, _inbox, _server) = crate::mcp::connect(manager, McpServerOptions::default()).await;
    let call = |name: &str, arguments: serde_json::Value| {
        CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().cloned().unwrap_or_default())
    };
    client
        .call_tool(call("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    client.call_tool(call("fail", json!({}))).await.unwrap();
    client
        .call_tool(call("add", json!({"a": -1, "b": 3})))
        .await
        .unwrap();
    client.call_tool(call("nope", json!({}))).await.unwrap_err();
    client.cancel().await.unwrap();

    let spans = trace.spans();
    let served: Vec<_> = trace
        .named("execute_tool")
        .into_iter()
        .map(|span| &spans[span])
        .collect();
    let seen: Vec<_> = served
        .iter()
        .map(|span| {
            (
                span.field("otel.name").unwrap_or_default(),
                span.field("error.type"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("tools/call add", None),
            ("tools/call fail", Some("\"tool_error\"")),
            ("tools/call add", Some("\"invalid_arguments\"")),
            ("tools/call nope", Some("\"unknown_tool\"")),
        ],
        "{served:#?}"
    );
    for span in served {
        assert_eq!(span.field("mcp.method.name"), Some("\"tools/call\""));
        assert!(span.field("jsonrpc.request.id").is_some(), "{span:?}");
    }
}

/// A sub-agent started in the background (the `agent` preset's `start`) outlives the call
/// that started it: its run is a trace of its own (under it, the call's span would last as
/// long as the child), linked to that call (`follows_from`) and named by its id.
#[tokio::test]
async fn a_background_sub_agent_is_its_own_trace_linked_to_the_call_that_started_it() {
    use toolsmith_harness::agent::SubAgentConfig;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let child_model = ScriptedModel::new([ScriptedTurn::text("child done")]);
    let config = SubAgentConfig::new(child_model, "child-model");
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "look"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let parent = crate::common::parent_session(parent_model, config);
    parent.run("delegate").await.unwrap();

    let spans = trace.spans();
    let child_run = trace
        .named("invoke_agent")
        .into_iter()
        .find(|&run| spans[run].field("gen_ai.request.model") == Some("child-model"))
        .expect("the child's run has a span");
    let path = trace.path(child_run);
    assert_eq!(path, ["invoke_agent", "sub_agent"], "{spans:#?}");
    let root = spans[child_run].parent.unwrap();
    assert_eq!(spans[root].field("toolsmith.agent.id"), Some("agent-1"));
    let start = trace
        .named("execute_tool")
        .into_iter()
        .find(|&span| spans[span].field("gen_ai.tool.name") == Some("agent"))
        .unwrap();
    assert_eq!(spans[root].follows_from, [start], "{spans:#?}");
}

/// A model call that fails says so on its `chat` span (`error.type`, the error's kind), as
/// a tool call's span does; one that answers records its usage and stop reason.
#[tokio::test]
async fn a_failed_model_call_says_so_on_its_span() {
    use toolsmith_harness::model::{ModelError, Usage};

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let session = AgentSession::builder(ScriptedModel::new([
        ScriptedTurn::call("fine", json!({})).with_usage(Usage::new(12, 3)),
        ScriptedTurn::error(ModelError::RateLimited {
            provider: "scripted".into(),
            retry_after: None,
            message: "slow down".into(),
        }),
    ]))
    .with_model("m")
    .with_toolshed(ToolShed::new().tool(text_tool("fine", "ok")))
    .build()
    .unwrap();
    session.tool_manager().activate(&["fine".into()]);
    session.run("go").await.unwrap_err();

    let spans = trace.spans();
    let chats: Vec<_> = trace
        .named("chat")
        .into_iter()
        .map(|span| &spans[span])
        .collect();
    assert_eq!(chats.len(), 2, "{spans:#?}");
    assert_eq!(chats[0].field("error.type"), None);
    assert_eq!(chats[0].field("gen_ai.usage.input_tokens"), Some("12"));
    assert_eq!(chats[0].field("gen_ai.usage.output_tokens"), Some("3"));
    assert_eq!(
        chats[0].field("gen_ai.response.finish_reasons"),
        Some("\"tool_calls\"")
    );
    assert_eq!(chats[1].field("error.type"), Some("\"rate_limited\""));
    assert_eq!(chats[1].field("gen_ai.usage.input_tokens"), None);
}

/// A tool that yields once, then logs an event naming itself.
fn logging_tool(name: &'static str) -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        name,
        format!("The {name} tool."),
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| async move {
            tokio::task::yield_now().await;
            tracing::info!(from = name, "working");
            Ok(ToolCallResult::text("done"))
        },
    ))
}

/// Calls running concurrently in one batch each keep their own span across their awaits:
/// what a tool logs lands in its own call's span.
#[tokio::test]
async fn concurrent_calls_log_into_their_own_spans() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = ToolCallManager::new("s");
    for name in ["first", "second", "third"] {
        manager.register(logging_tool(name)).unwrap();
    }
    let outcomes = manager
        .execute_batch(&calls_of(&["first", "second", "third"]))
        .await;
    assert!(outcomes.iter().all(|o| o.result.is_ok()), "{outcomes:?}");

    let spans = trace.spans();
    let working: Vec<_> = trace
        .events()
        .into_iter()
        .filter(|event| event.line.starts_with("working"))
        .collect();
    assert_eq!(working.len(), 3, "{working:#?}");
    for event in working {
        let span = &spans[event.span.expect("logged in a span")];
        let tool = span.field("gen_ai.tool.name").unwrap();
        assert!(
            event.line.contains(&format!("from={tool:?}")),
            "{event:?} in {span:?}"
        );
    }
}

/// The `error.type` and `toolsmith.tool.attempts` of the `execute_tool` span of each call
/// to `tool`, in the order the spans were made.
fn ends_of(trace: &TraceTree, tool: &str) -> Vec<(Option<String>, Option<String>)> {
    let spans = trace.spans();
    trace
        .named("execute_tool")
        .into_iter()
        .map(|span| &spans[span])
        .filter(|span| span.field("gen_ai.tool.name") == Some(tool))
        .map(|span| {
            (
                span.field("error.type").map(str::to_owned),
                span.field("toolsmith.tool.attempts").map(str::to_owned),
            )
        })
        .collect()
}

fn not_run(error_type: &str) -> Vec<(Option<String>, Option<String>)> {
    vec![(Some(format!("{error_type:?}")), Some("0".to_owned()))]
}

/// Calls the batch refuses without running them (an unknown tool, invalid arguments, a tool
/// not offered) each still have an `execute_tool` span saying why, under the caller's span:
/// a trace of a turn shows the model's bad calls too.
#[tokio::test]
async fn a_call_refused_before_it_runs_has_a_span_saying_why() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = outcome_tools();
    manager
        .register(Arc::new(FnTool::new(
            "needs_path",
            "Needs a path.",
            Args::new(scheme::object().required("path", scheme::string()).build()),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("read")) },
        )))
        .unwrap();
    manager.activate(&["needs_path".into()]);
    let turn = tracing::info_span!("turn");
    let outcomes = manager
        .execute_turn(&calls_of(&["nope", "needs_path", "fine"]))
        .instrument(turn)
        .await;
    assert!(outcomes.iter().all(|o| o.attempts == 0), "{outcomes:?}");

    assert_eq!(ends_of(&trace, "nope"), not_run("unknown_tool"));
    assert_eq!(ends_of(&trace, "needs_path"), not_run("invalid_arguments"));
    assert_eq!(ends_of(&trace, "fine"), not_run("not_active"));
    let spans = trace.spans();
    let ids: Vec<_> = trace
        .named("execute_tool")
        .into_iter()
        .map(|span| {
            assert_eq!(trace.path(span), ["execute_tool", "turn"]);
            spans[span].field("gen_ai.tool.call.id").unwrap()
        })
        .collect();
    assert_eq!(ids, ["c0", "c1", "c2"]);
}

/// A call skipped because an earlier one failed (a sequential stage's fail-fast, or a failed
/// dependency) has a span with `error.type = "skipped"`.
#[tokio::test]
async fn a_call_skipped_after_a_failure_has_a_span_saying_so() {
    use toolsmith_core::ExecutionHint;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = outcome_tools();
    let call = |id: &str, name: &str| ToolCallRequest::new(id, name, ToolArguments::new());
    let requests = [
        call("first", "broken").with_hint(ExecutionHint::Sequential),
        call("second", "fine").with_hint(ExecutionHint::Sequential),
        call("after", "refusing").depends_on(["first"]),
    ];
    let outcomes = manager.execute_batch(&requests).await;
    assert_eq!(outcomes[1].attempts, 0, "{outcomes:?}");

    assert_eq!(
        ends_of(&trace, "broken"),
        [(Some("\"execution\"".to_owned()), Some("1".to_owned()))]
    );
    assert_eq!(ends_of(&trace, "fine"), not_run("skipped"));
    assert_eq!(ends_of(&trace, "refusing"), not_run("skipped"));
}

/// A batch that cannot be planned runs none of its calls; each has a span with the planning
/// error's kind.
#[tokio::test]
async fn calls_of_a_batch_that_cannot_be_planned_have_spans() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = outcome_tools();
    let requests =
        [ToolCallRequest::new("c0", "fine", ToolArguments::new()).depends_on(["missing"])];
    manager.execute_batch(&requests).await;

    assert_eq!(ends_of(&trace, "fine"), not_run("invalid_arguments"));
}

/// A manager with `hang` (never ends) and `fine`.
fn hanging_tools() -> ToolCallManager {
    let manager = ToolCallManager::new("s");
    manager
        .register(Arc::new(FnTool::new(
            "hang",
            "Never ends.",
            Args::new(scheme::object().build()),
            |_: ToolArgs<'_>| async {
                std::future::pending::<()>().await;
                Ok(ToolCallResult::text("never"))
            },
        )))
        .unwrap();
    manager.register(text_tool("fine", "ok")).unwrap();
    manager
}

/// `hang` running, and `fine` waiting on it.
fn hang_then_fine() -> [ToolCallRequest; 2] {
    [
        ToolCallRequest::new("c0", "hang", ToolArguments::new()),
        ToolCallRequest::new("c1", "fine", ToolArguments::new()).depends_on(["c0"]),
    ]
}

/// A batch stopped by its deadline ends the span of the call it stops, and of the call it
/// never started, with `error.type = "timeout"`.
#[tokio::test(start_paused = true)]
async fn calls_stopped_by_a_batch_deadline_say_timeout() {
    use toolsmith_core::BatchOptions;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = hanging_tools();
    let options = BatchOptions::new().with_deadline(Duration::from_secs(5));
    let outcomes = manager
        .execute_batch_with(&hang_then_fine(), &options)
        .await;
    assert!(outcomes.iter().all(|o| o.result.is_err()), "{outcomes:?}");

    assert_eq!(
        ends_of(&trace, "hang"),
        [(Some("\"timeout\"".to_owned()), Some("1".to_owned()))]
    );
    assert_eq!(ends_of(&trace, "fine"), not_run("timeout"));
}

/// A batch stopped by its token ends the span of the call it stops, and of the call it
/// never started, with `error.type = "cancelled"`.
#[tokio::test(start_paused = true)]
async fn calls_stopped_by_cancelling_the_batch_say_cancelled() {
    use toolsmith_core::{BatchOptions, CancellationToken};

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = hanging_tools();
    let token = CancellationToken::new();
    let options = BatchOptions::new().with_cancellation(token.clone());
    let cancel = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        token.cancel();
    };
    let requests = hang_then_fine();
    let (outcomes, ()) = futures::join!(manager.execute_batch_with(&requests, &options), cancel);
    assert!(outcomes.iter().all(|o| o.result.is_err()), "{outcomes:?}");

    assert_eq!(
        ends_of(&trace, "hang"),
        [(Some("\"cancelled\"".to_owned()), Some("1".to_owned()))]
    );
    assert_eq!(ends_of(&trace, "fine"), not_run("cancelled"));
}

/// A tool's time limit expiring and a batch's deadline passing are routine (the call's span
/// says `timeout`): each is a `debug` event with the limit (the time limit's in the call's
/// span), not an `info` line per call.
#[tokio::test(start_paused = true)]
async fn expired_time_limits_are_debug_events() {
    use toolsmith_core::BatchOptions;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let manager = hanging_tools();
    manager
        .set_timeout("hang", Some(Duration::from_secs(2)))
        .unwrap();
    manager.execute_batch(&calls_of(&["hang"])).await;
    let options = BatchOptions::new().with_deadline(Duration::from_secs(1));
    manager
        .execute_batch_with(&hang_then_fine(), &options)
        .await;

    let expired: Vec<_> = trace
        .events()
        .into_iter()
        .filter(|event| event.line.contains("time limit") || event.line.contains("deadline"))
        .collect();
    assert_eq!(expired.len(), 2, "{expired:#?}");
    assert!(
        expired[0].line.contains("timed out") && expired[0].line.contains("limit=2s"),
        "{expired:?}"
    );
    assert_eq!(expired[0].span, Some(trace.named("execute_tool")[0]));
    assert!(expired[1].line.contains("deadline=1s"), "{expired:?}");
    for event in expired {
        assert_eq!(event.level, tracing::Level::DEBUG, "{event:?}");
    }
}

/// A run that fails says why on its `invoke_agent` span (`error.type`, the error's
/// `kind_name`); one that answers has none.
#[tokio::test]
async fn a_failed_run_says_why_on_its_span() {
    use toolsmith_harness::model::ModelError;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let session = |turns: Vec<ScriptedTurn>| {
        let session = AgentSession::builder(ScriptedModel::new(turns))
            .with_model("m")
            .with_max_turns(1)
            .with_toolshed(ToolShed::new().tool(text_tool("fine", "ok")))
            .build()
            .unwrap();
        session.tool_manager().activate(&["fine".into()]);
        session
    };
    session(vec![ScriptedTurn::text("done")])
        .run("go")
        .await
        .unwrap();
    let failed = session(vec![ScriptedTurn::error(ModelError::Auth {
        provider: "scripted".into(),
        status: 401,
        message: "bad key".into(),
    })])
    .run("go")
    .await
    .unwrap_err();
    assert_eq!(failed.kind_name(), "model");
    let looped = session(vec![ScriptedTurn::call("fine", json!({}))])
        .run("go")
        .await
        .unwrap_err();
    assert_eq!(looped.kind_name(), "max_turns");

    let spans = trace.spans();
    let ends: Vec<_> = trace
        .named("invoke_agent")
        .into_iter()
        .map(|run| spans[run].field("error.type"))
        .collect();
    assert_eq!(
        ends,
        [None, Some("\"model\""), Some("\"max_turns\"")],
        "{spans:#?}"
    );
}

/// An embedder that is up (every text along one direction) or down, as a test says.
#[derive(Default)]
struct SwitchedEmbedder {
    down: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl toolsmith_core::Embedder for SwitchedEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, toolsmith_core::ServiceError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(toolsmith_core::ServiceError::new(
                "embedder",
                "connection refused",
            ));
        }
        Ok(texts.iter().map(|_| vec![1.0, 0.0, 0.0]).collect())
    }

    fn dimensions(&self) -> usize {
        3
    }
}

/// An embedder that goes down is a warning once, when it starts failing: the searches
/// after it, which answer from the lexical index as the first did, log at `debug` (the
/// tool texts it could not embed too), until one succeeds, which says it recovered.
#[tokio::test]
async fn an_embedder_that_is_down_is_warned_of_once_until_it_recovers() {
    use toolsmith_core::SessionParts;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let embedder = Arc::new(SwitchedEmbedder::default());
    let manager = ToolShed::new()
        .tool(text_tool("read_file", "read"))
        .build(SessionParts::in_memory("s").with_embedder(embedder.clone()))
        .unwrap();
    let discovery = manager.discovery();
    let search = || discovery.search("read a file", 3);
    let embedder_events = || -> Vec<(tracing::Level, String)> {
        trace
            .events()
            .into_iter()
            .filter(|event| event.line.contains("embedder"))
            .map(|event| (event.level, event.line))
            .collect()
    };

    search().await;
    assert_eq!(
        embedder_events(),
        [],
        "an embedder that answers says nothing"
    );

    embedder.down.store(true, Ordering::SeqCst);
    for _ in 0..3 {
        assert!(!search().await.is_empty(), "answered lexically");
    }
    // A tool registered while the embedder is down: its text fails to embed too.
    manager
        .register(text_tool("write_file", "written"))
        .unwrap();
    search().await;
    let down = embedder_events();
    let warnings: Vec<_> = down
        .iter()
        .filter(|(level, _)| *level == tracing::Level::WARN)
        .collect();
    assert_eq!(warnings.len(), 1, "{down:#?}");
    assert!(warnings[0].1.contains("connection refused"), "{down:#?}");
    assert!(
        down.iter()
            .all(|(level, _)| *level == tracing::Level::WARN || *level == tracing::Level::DEBUG),
        "{down:#?}"
    );

    embedder.down.store(false, Ordering::SeqCst);
    search().await;
    search().await;
    let after = &embedder_events()[down.len()..];
    assert_eq!(after.len(), 1, "{after:#?}");
    assert!(after[0].1.contains("recovered"), "{after:#?}");
    assert_eq!(discovery.embedded(), 2);

    // Down again: warned of again.
    embedder.down.store(true, Ordering::SeqCst);
    search().await;
    let again = &embedder_events()[down.len() + 1..];
    assert_eq!(again.len(), 1, "{again:#?}");
    assert_eq!(again[0].0, tracing::Level::WARN);
}

/// Each request an `McpClient` makes is an `mcp.request` span named as OpenTelemetry's MCP
/// conventions name a client's span, with the server's label: its listing at connect, and
/// each bridged tool's call, under the call's `execute_tool`, with how it ended.
#[cfg(feature = "mcp")]
#[tokio::test]
async fn an_mcp_clients_requests_are_traced() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let (served, _) = crate::mcp::demo_manager();
    let (client, serving) = crate::mcp::our_client_of(served, "in-process").await;
    let manager = ToolCallManager::new("consumer");
    let bridged = client.tools().len();
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    let calls = [
        ToolCallRequest::new(
            "c0",
            "add",
            ToolArguments::try_from(json!({"a": 2, "b": 3})).unwrap(),
        ),
        ToolCallRequest::new("c1", "fail", ToolArguments::new()),
    ];
    let outcomes = manager.execute_batch(&calls).await;
    assert!(outcomes[0].result.is_ok(), "{outcomes:?}");
    client.close().await;
    serving.await.unwrap().unwrap();

    let spans = trace.spans();
    let requests: Vec<_> = trace.named("mcp.request");
    let seen: Vec<_> = requests
        .iter()
        .map(|&span| {
            let span = &spans[span];
            assert_eq!(span.field("toolsmith.mcp.server"), Some("in-process"));
            (
                span.field("otel.name").unwrap_or_default(),
                span.field("mcp.method.name").unwrap_or_default(),
                span.field("error.type"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("tools/list", "\"tools/list\"", None),
            ("tools/call add", "\"tools/call\"", None),
            // The bridge reads the server's error result as the call's execution error.
            ("tools/call fail", "\"tools/call\"", Some("\"execution\"")),
        ],
        "{spans:#?}"
    );
    let listed = spans[requests[0]].field("toolsmith.mcp.tools").unwrap();
    assert_eq!(listed, bridged.to_string());
    for &call in &requests[1..] {
        assert_eq!(trace.path(call)[..2], ["mcp.request", "execute_tool"]);
    }
}

/// A `shed` search is a `shed.search` span under the `shed` call's `execute_tool`: how long
/// the query is, the limit, how many tools it found and how many by embedding; never the
/// query's text, which is the model's words.
#[tokio::test]
async fn a_shed_search_is_traced_without_its_query() {
    use toolsmith_core::SessionParts;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let embedder = Arc::new(SwitchedEmbedder::default());
    let manager = ToolShed::new()
        .tool(text_tool("read_file", "read"))
        .tool(text_tool("write_file", "written"))
        .build(SessionParts::in_memory("s").with_embedder(embedder.clone()))
        .unwrap();
    let query = "read_file secret plans";
    let search = |id: &str| {
        ToolCallRequest::new(
            id,
            "shed",
            ToolArguments::try_from(json!({"description": query, "limit": 1})).unwrap(),
        )
    };
    manager.execute_batch(&[search("c0")]).await;
    embedder.down.store(true, Ordering::SeqCst);
    manager.execute_batch(&[search("c1")]).await;

    let spans = trace.spans();
    let searches = trace.named("shed.search");
    assert_eq!(searches.len(), 2, "{spans:#?}");
    for (&search, embedding_hits) in searches.iter().zip(["1", "0"]) {
        let span = &spans[search];
        assert_eq!(trace.path(search), ["shed.search", "execute_tool"]);
        let length = query.chars().count().to_string();
        assert_eq!(
            span.field("toolsmith.shed.query.length"),
            Some(length.as_str())
        );
        assert_eq!(span.field("toolsmith.shed.limit"), Some("1"));
        assert_eq!(span.field("toolsmith.shed.hits"), Some("1"), "{span:?}");
        assert_eq!(
            span.field("toolsmith.shed.embedding_hits"),
            Some(embedding_hits),
            "{span:?}"
        );
    }
    for span in &spans {
        for (_, value) in &span.fields {
            assert!(!value.contains("secret plans"), "{span:?}");
        }
    }
}

/// Denies every call to `guarded`.
struct DenyGuarded;

#[async_trait::async_trait]
impl toolsmith_harness::agent::ToolHook for DenyGuarded {
    async fn before_tool(&self, call: &ToolCallRequest) -> toolsmith_harness::agent::HookDecision {
        if call.name == "guarded" {
            toolsmith_harness::agent::HookDecision::Deny("not today".into())
        } else {
            toolsmith_harness::agent::HookDecision::Allow
        }
    }
}

/// An agent turn's calls that never reach the batch (arguments that do not read, an id
/// given twice, a hook's denial) each have an `execute_tool` span as a run call does, with
/// the same fields, under the run, saying why.
#[tokio::test]
async fn a_turns_calls_kept_from_the_batch_have_spans_saying_why() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let session = AgentSession::builder(ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("c1", "fine", json!({}))
            .and_raw_call("fine", "{\"a\": ")
            .and_call_with_id("c1", "fine", json!({}))
            .and_call_with_id("c3", "guarded", json!({})),
        ScriptedTurn::text("done"),
    ]))
    .with_model("m")
    .with_hook(DenyGuarded)
    .with_toolshed(
        ToolShed::new()
            .tool(text_tool("fine", "ok"))
            .tool(text_tool("guarded", "kept")),
    )
    .build()
    .unwrap();
    session
        .tool_manager()
        .activate(&["fine".into(), "guarded".into()]);
    session.run("go").await.unwrap();

    let spans = trace.spans();
    let calls: Vec<_> = trace
        .named("execute_tool")
        .into_iter()
        .map(|span| &spans[span])
        .collect();
    let ends: Vec<_> = calls
        .iter()
        .map(|span| {
            (
                span.field("gen_ai.tool.name").unwrap_or_default(),
                span.field("error.type"),
                span.field("toolsmith.tool.attempts"),
            )
        })
        .collect();
    assert_eq!(
        ends,
        [
            ("fine", Some("\"unreadable\""), Some("0")),
            ("fine", Some("\"repeated_id\""), Some("0")),
            ("guarded", Some("\"denied\""), Some("0")),
            ("fine", None, Some("1")),
        ],
        "{spans:#?}"
    );
    let run = trace.named("invoke_agent")[0];
    // Every field of a call that ran, in any order; `error.type` aside (it did not fail).
    let names = |span: &crate::common::trace_tree::SpanRecord| {
        span.fields
            .iter()
            .map(|(name, _)| name.clone())
            .filter(|name| name != "error.type")
            .collect::<std::collections::BTreeSet<_>>()
    };
    for span in &calls {
        assert_eq!(span.parent, Some(run), "{span:?}");
        assert_eq!(names(span), names(calls[3]), "{span:?}");
    }
}

/// A destructive call to a tool not offered, which the session refuses before asking its
/// approval (and so before the batch), has a span too.
#[tokio::test]
async fn a_call_refused_before_its_approval_has_a_span() {
    use toolsmith_core::ToolAnnotations;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let wipe = FnTool::new(
        "wipe",
        "Wipes.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("wiped")) },
    )
    .with_annotations(ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    });
    let session = AgentSession::builder(ScriptedModel::new([
        ScriptedTurn::call("wipe", json!({})),
        ScriptedTurn::text("done"),
    ]))
    .with_model("m")
    .with_approval(|_: &ToolCallRequest| true)
    .with_toolshed(ToolShed::new().tool(Arc::new(wipe)))
    .build()
    .unwrap();
    session.run("go").await.unwrap();

    assert_eq!(ends_of(&trace, "wipe"), not_run("not_active"));
}

/// A scripted model whose `name()` panics.
struct Nameless(ScriptedModel);

#[async_trait::async_trait]
impl toolsmith_harness::model::ChatModel for Nameless {
    fn name(&self) -> &str {
        panic!("no name")
    }

    async fn complete(
        &self,
        request: &toolsmith_harness::model::ChatRequest,
    ) -> Result<toolsmith_harness::model::ChatResponse, toolsmith_harness::model::ModelError> {
        self.0.complete(request).await
    }
}

/// A run refused before it starts (its model's `name()` panicking, or nested past
/// `MAX_NESTED_RUNS`) still has its `invoke_agent` span, with the usual fields, saying why:
/// a trace of a failed run is not empty.
#[tokio::test]
async fn a_run_refused_before_it_starts_has_a_span_saying_why() {
    use toolsmith_harness::agent::MAX_NESTED_RUNS;
    use toolsmith_harness::model::{ChatResponse, Message};

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let nameless = AgentSession::builder(Nameless(ScriptedModel::new([])))
        .with_model("nameless-model")
        .build()
        .unwrap();
    let error = nameless.run("go").await.unwrap_err();
    assert_eq!(error.kind_name(), "panicked");

    // Every run calls the session again, a level deeper, until one is refused.
    let recursing = ScriptedModel::new((0..2 * (MAX_NESTED_RUNS + 1)).map(|_| {
        ScriptedTurn::respond(|request| {
            Ok(match request.messages.last() {
                Some(Message::ToolResults { results }) => {
                    ChatResponse::text(results[0].result.content.to_text())
                }
                _ => ChatResponse::calls(vec![Ok(ToolCallRequest::new(
                    "c",
                    "recurse",
                    ToolArguments::try_from(json!({"input": "deeper"})).unwrap(),
                ))]),
            })
        })
    }));
    let session = Arc::new(
        AgentSession::builder(recursing)
            .with_model("recursing-model")
            .build()
            .unwrap(),
    );
    let recurse = AgentTool::new(Arc::clone(&session), "recurse", "Runs this agent again.");
    session.tool_manager().register(Arc::new(recurse)).unwrap();
    session.tool_manager().activate(&["recurse".to_owned()]);
    session.run("deeper").await.unwrap();
    // The session holds the tool that holds it: broken by hand.
    session.tool_manager().deregister("recurse");

    let spans = trace.spans();
    let runs = trace.named("invoke_agent");
    assert_eq!(runs.len(), 1 + MAX_NESTED_RUNS + 2, "{spans:#?}");
    let refused: Vec<_> = runs
        .iter()
        .map(|&run| &spans[run])
        .filter(|run| run.field("error.type").is_some())
        .collect();
    assert_eq!(refused.len(), 2, "{spans:#?}");
    for (run, (model, error)) in refused.iter().zip([
        ("nameless-model", "\"panicked\""),
        ("recursing-model", "\"nested_too_deep\""),
    ]) {
        assert_eq!(run.field("gen_ai.request.model"), Some(model), "{run:?}");
        assert_eq!(run.field("error.type"), Some(error), "{run:?}");
        assert_eq!(run.field("gen_ai.operation.name"), Some("\"invoke_agent\""));
        assert!(run.field("gen_ai.conversation.id").is_some(), "{run:?}");
        assert_eq!(run.field("gen_ai.usage.input_tokens"), Some("0"));
    }
    // The caught panic is logged in the refused run's span.
    let named = runs
        .iter()
        .copied()
        .find(|&run| spans[run].field("gen_ai.request.model") == Some("nameless-model"))
        .unwrap();
    let logged = trace
        .events()
        .into_iter()
        .find(|event| event.line.contains("no name"))
        .expect("the panic is logged");
    assert_eq!(logged.span, Some(named), "{logged:?}");
    // The refused run sits under the call that tried to start it.
    let deepest = *runs.last().unwrap();
    assert_eq!(
        spans[deepest].field("error.type"),
        Some("\"nested_too_deep\"")
    );
    assert_eq!(
        trace.path(deepest).len(),
        2 * (MAX_NESTED_RUNS + 1) + 1,
        "{:?}",
        trace.path(deepest)
    );
}

/// A typed answer's exchange is part of the run: its model calls sit under the run's
/// `invoke_agent` span, whose usage counts them and whose `error.type` says how the
/// exchange failed: `answer_invalid` when no answer fitted, the error's kind otherwise.
#[tokio::test]
async fn a_typed_runs_span_covers_its_answer_and_says_how_it_failed() {
    use toolsmith_harness::agent::{FINAL_ANSWER_TOOL, MAX_ANSWER_ATTEMPTS};
    use toolsmith_harness::model::{ModelError, Usage};

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    struct Celsius {
        #[allow(dead_code)]
        celsius: f64,
    }

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let session = |turns: Vec<ScriptedTurn>| {
        AgentSession::builder(ScriptedModel::new(turns))
            .with_model("m")
            .build()
            .unwrap()
    };
    let answer = |celsius: serde_json::Value| {
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({ "celsius": celsius }))
            .with_usage(Usage::new(10, 1))
    };
    let said = ScriptedTurn::text("Mild.").with_usage(Usage::new(100, 5));

    session(vec![said.clone(), answer(json!(21))])
        .send_as::<Celsius>("Weather?")
        .await
        .unwrap();
    let mut never_fits = vec![said.clone()];
    never_fits.extend((0..MAX_ANSWER_ATTEMPTS).map(|_| answer(json!("mild"))));
    let invalid = session(never_fits)
        .run_as::<Celsius>("Weather?")
        .await
        .unwrap_err();
    assert_eq!(invalid.kind_name(), "answer_invalid");
    let refused = session(vec![
        said,
        ScriptedTurn::error(ModelError::Auth {
            provider: "scripted".into(),
            status: 401,
            message: "bad key".into(),
        }),
    ])
    .send_as::<Celsius>("Weather?")
    .await
    .unwrap_err();
    assert_eq!(refused.kind_name(), "model");

    let spans = trace.spans();
    let runs = trace.named("invoke_agent");
    let ends: Vec<_> = runs
        .iter()
        .map(|&run| {
            (
                spans[run].field("error.type"),
                spans[run].field("gen_ai.usage.input_tokens"),
                spans[run].field("gen_ai.usage.output_tokens"),
            )
        })
        .collect();
    let tokens = 100 + 10 * MAX_ANSWER_ATTEMPTS;
    let tokens = tokens.to_string();
    let output = (5 + MAX_ANSWER_ATTEMPTS).to_string();
    assert_eq!(
        ends,
        [
            (None, Some("110"), Some("6")),
            (
                Some("\"answer_invalid\""),
                Some(tokens.as_str()),
                Some(output.as_str())
            ),
            (Some("\"model\""), Some("100"), Some("5")),
        ],
        "{spans:#?}"
    );
    // Every model call, the exchange's too, under its run.
    let chats = trace.named("chat");
    assert_eq!(chats.len(), 2 + 1 + MAX_ANSWER_ATTEMPTS + 2, "{spans:#?}");
    let per_run: Vec<_> = runs
        .iter()
        .map(|&run| {
            chats
                .iter()
                .filter(|&&chat| spans[chat].parent == Some(run))
                .count()
        })
        .collect();
    assert_eq!(per_run, [2, 1 + MAX_ANSWER_ATTEMPTS, 2], "{spans:#?}");
}

/// A model call that does not come back says why on its `chat` span: `panicked` for a
/// client that panicked, `cancelled` for a run cancelled or dropped (its caller gave up, a
/// deadline passed) while it waited. One that answered as the run was cancelled records
/// its answer: its tokens were spent.
#[tokio::test(start_paused = true)]
async fn a_model_call_that_does_not_come_back_says_why_on_its_span() {
    use toolsmith_core::CancellationToken;
    use toolsmith_harness::model::{ChatResponse, Usage};

    use crate::common::stalled::NeverAnswers;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let panicking = AgentSession::builder(ScriptedModel::new([ScriptedTurn::respond(|_| {
        panic!("the client broke")
    })]))
    .with_model("m")
    .build()
    .unwrap();
    let error = panicking.run("go").await.unwrap_err();
    assert_eq!(error.kind_name(), "panicked");

    let waiting = AgentSession::builder(NeverAnswers)
        .with_model("m")
        .build()
        .unwrap();
    let stop = CancellationToken::new();
    let pressed = stop.clone();
    let (stopped, ()) = tokio::join!(waiting.run_with_cancellation("go", stop), async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        pressed.cancel();
    });
    assert_eq!(stopped.unwrap_err().kind_name(), "cancelled");
    tokio::time::timeout(Duration::from_secs(1), waiting.run("go"))
        .await
        .expect_err("the model never answers");

    let stop = CancellationToken::new();
    let pressed = stop.clone();
    let answering = AgentSession::builder(ScriptedModel::new([ScriptedTurn::respond(move |_| {
        pressed.cancel();
        Ok(ChatResponse::text("too late").with_usage(Usage::new(7, 2)))
    })]))
    .with_model("m")
    .build()
    .unwrap();
    let late = answering.run_with_cancellation("go", stop).await;
    assert_eq!(late.unwrap_err().kind_name(), "cancelled");

    let spans = trace.spans();
    let ends: Vec<_> = trace
        .named("chat")
        .into_iter()
        .map(|chat| {
            (
                spans[chat].field("error.type"),
                spans[chat].field("gen_ai.usage.input_tokens"),
            )
        })
        .collect();
    assert_eq!(
        ends,
        [
            (Some("\"panicked\""), None),
            (Some("\"cancelled\""), None),
            (Some("\"cancelled\""), None),
            (None, Some("7")),
        ],
        "{spans:#?}"
    );
}

/// The listing an `McpClient` makes when its server says its tools changed
/// (`notifications/tools/list_changed`) is an `mcp.request` under an `mcp.tools_changed`
/// span of its own, which names the server: not a root span of unknown cause.
#[cfg(feature = "mcp")]
#[tokio::test]
async fn an_mcp_clients_listing_after_a_change_notice_has_a_span_of_its_own() {
    use toolsmith_harness::mcp::{McpServer, McpServerOptions};

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let (served, _) = crate::mcp::demo_manager();
    let server = McpServer::with_options(served, McpServerOptions::default().with_shed(true));
    let (client, serving) = crate::mcp::our_client_of_server(server, "in-process").await;
    let mut updates = client.tool_list_updates();
    let manager = ToolCallManager::new("consumer");
    let remote_shed = client.tools().remove(0);
    let shed_name = remote_shed.name().to_owned();
    manager.register(Arc::new(remote_shed)).unwrap();
    // The server's shed activates `add` on the connection, then says its tools changed.
    let select = ToolCallRequest::new(
        "c0",
        shed_name,
        ToolArguments::try_from(json!({"description": "select:add"})).unwrap(),
    );
    manager.execute_one(&select).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), updates.changed())
        .await
        .expect("the list is refreshed after list_changed")
        .unwrap();
    client.close().await;
    serving.await.unwrap().unwrap();

    let spans = trace.spans();
    let listings: Vec<_> = trace
        .named("mcp.request")
        .into_iter()
        .filter(|&span| spans[span].field("otel.name") == Some("tools/list"))
        .collect();
    assert_eq!(listings.len(), 2, "{spans:#?}");
    let refresh = listings[1];
    assert_eq!(spans[refresh].field("toolsmith.mcp.tools"), Some("2"));
    assert_eq!(
        trace.path(refresh),
        ["mcp.request", "mcp.tools_changed"],
        "{spans:#?}"
    );
    let changed = spans[refresh].parent.unwrap();
    assert_eq!(
        spans[changed].field("toolsmith.mcp.server"),
        Some("in-process")
    );
    // The listing at connect is not one.
    assert_eq!(trace.named("mcp.tools_changed"), [changed]);
}

/// A run given up by its caller (its future dropped: a timeout around it) ends its
/// `invoke_agent` span saying it was cancelled, as its `chat` span does; a `send` queued
/// behind another and cancelled before its turn came has a span saying so too.
#[tokio::test(start_paused = true)]
async fn a_run_given_up_or_cancelled_in_the_queue_says_so_on_its_span() {
    use toolsmith_core::CancellationToken;

    use crate::common::stalled::NeverAnswers;

    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let session = AgentSession::builder(NeverAnswers)
        .with_model("m")
        .build()
        .unwrap();
    let stop = CancellationToken::new();
    let pressed = stop.clone();
    let (given_up, queued, ()) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(5), session.send("first")),
        session.send_with_cancellation("second", stop),
        async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            pressed.cancel();
        }
    );
    given_up.expect_err("the model never answers");
    assert_eq!(queued.unwrap_err().kind_name(), "cancelled");

    let spans = trace.spans();
    let runs: Vec<_> = trace
        .named("invoke_agent")
        .into_iter()
        .map(|run| {
            (
                spans[run].field("error.type"),
                spans[run].field("gen_ai.usage.input_tokens"),
            )
        })
        .collect();
    // The queued send's span ends first (at 1 s), the given-up run's at 5 s; spans are
    // listed as they were made: the first send's run started first.
    assert_eq!(
        runs,
        [
            (Some("\"cancelled\""), None),
            (Some("\"cancelled\""), Some("0")),
        ],
        "{spans:#?}"
    );
}
