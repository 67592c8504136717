//! How sub-agents end when something goes wrong around them: a panic in a child's hook or
//! tool, a child started by a cancelled session, a paused child's place, and an `AgentTool`
//! whose caller is cancelled mid-call or whose inner session panics.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::{
    Args, FnTool, ToolArgs, ToolCallRequest, ToolCallResult, ToolImpl, ToolShed, scheme,
};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{
    AgentRun, AgentSession, AgentTool, AgenticError, HookDecision, SubAgentConfig, ToolHook,
};
use toolsmith_harness::model::{ModelError, ScriptedModel, ScriptedTurn, Usage};

use crate::common::parent_session;
use crate::common::stalled::waits_for_ever;

/// A tool that answers `answer`, or panics when `answer` is `None`.
fn tool(name: &str, answer: Option<&'static str>) -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        name,
        format!("The {name} tool."),
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| async move {
            match answer {
                Some(answer) => Ok(ToolCallResult::text(answer)),
                None => panic!("the tool broke"),
            }
        },
    ))
}

/// A hook that panics before any call of the tool `name`.
struct PanicsBefore(&'static str);

#[async_trait]
impl ToolHook for PanicsBefore {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        assert_ne!(call.name, self.0, "the hook broke on {}", call.name);
        HookDecision::Allow
    }
}

/// A parent that starts a child on `config`, waits for its result, then answers "done".
fn parent_of(config: SubAgentConfig, hook: Option<PanicsBefore>) -> (AgentSession, ScriptedModel) {
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let mut builder = AgentSession::builder(parent_model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)));
    if let Some(hook) = hook {
        builder = builder.with_hook(hook);
    }
    let parent = builder.build().unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    (parent, parent_model)
}

#[tokio::test]
async fn a_child_whose_hook_panics_fails_naming_itself_and_the_parent_goes_on() {
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("lookup", json!({})),
        ScriptedTurn::text("never"),
    ]);
    let config = SubAgentConfig::new(child_model, "m").with_tools(vec![tool("lookup", Some("x"))]);
    // The parent's hooks hold its children: this one breaks on the child's call.
    let (parent, _) = parent_of(config, Some(PanicsBefore("lookup")));
    let run = parent.run("delegate").await.expect("the parent goes on");
    assert_eq!(run.text, "done");
    let result = &run.tool_calls[1].result;
    assert!(result.is_error(), "{result:?}");
    let text = result.content.to_text();
    assert!(
        text.contains("'agent-1'") && text.contains("panicked") && text.contains("the hook broke"),
        "{text}"
    );
    let check = agent_command(&parent, json!({"command": "check", "id": "agent-1"}))
        .await
        .unwrap();
    assert!(check.content.to_text().contains("\"failed\""), "{check:?}");
}

#[tokio::test]
async fn a_child_whose_tool_panics_reads_the_error_and_goes_on() {
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("lookup", json!({})),
        ScriptedTurn::text("recovered"),
    ]);
    let config =
        SubAgentConfig::new(child_model.clone(), "m").with_tools(vec![tool("lookup", None)]);
    let (parent, _) = parent_of(config, None);
    let run = parent.run("delegate").await.unwrap();
    assert_eq!(run.tool_calls[1].result.content.to_text(), "recovered");
    let requests = child_model.requests();
    let told = requests[1].messages.last().unwrap().results()[0]
        .result
        .content
        .to_text();
    assert!(told.contains("the tool broke"), "{told}");
}

#[tokio::test]
async fn a_child_started_by_a_cancelled_session_is_stopped_before_its_first_call() {
    let child_model = ScriptedModel::new([ScriptedTurn::text("never")]);
    let config = SubAgentConfig::new(child_model.clone(), "m");
    let (parent, _) = parent_of(config, None);
    parent.cancellation_token().cancel();
    let manager = parent.tool_manager();
    let call = |arguments: serde_json::Value| {
        ToolCallRequest::new("c", "agent", arguments.try_into().unwrap())
    };
    manager
        .execute_one(&call(json!({"command": "start", "task": "t"})))
        .await
        .unwrap();
    let err = manager
        .execute_one(&call(
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("was stopped before it finished"),
        "{err}"
    );
    assert!(child_model.requests().is_empty());
}

#[tokio::test]
async fn a_paused_child_keeps_its_place() {
    let started = Arc::new(tokio::sync::Notify::new());
    let child_model = ScriptedModel::new([ScriptedTurn::call("wait", json!({}))]);
    let config = SubAgentConfig::new(child_model, "m")
        .with_max_children(1)
        .with_tools(vec![Arc::new(waits_for_ever(
            Arc::clone(&started),
            Arc::default(),
        ))]);
    let (parent, _) = parent_of(config, None);
    let manager = parent.tool_manager();
    let call = |arguments: serde_json::Value| {
        ToolCallRequest::new("c", "agent", arguments.try_into().unwrap())
    };
    manager
        .execute_one(&call(json!({"command": "start", "task": "t"})))
        .await
        .unwrap();
    manager
        .execute_one(&call(json!({"command": "pause", "id": "agent-1"})))
        .await
        .unwrap();
    let refused = manager
        .execute_one(&call(json!({"command": "start", "task": "t2"})))
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("1 sub-agent is already running,"),
        "{refused}"
    );
}

/// A child held because its parent session is paused reports "paused" to `check`, and
/// `result` and `resume` say why it is held; once the session resumes, it is running again.
#[tokio::test]
async fn a_child_held_by_its_paused_session_is_reported_paused() {
    let started = Arc::new(tokio::sync::Notify::new());
    let child_model = ScriptedModel::new([ScriptedTurn::call("wait", json!({}))]);
    let config = SubAgentConfig::new(child_model, "m").with_tools(vec![Arc::new(waits_for_ever(
        Arc::clone(&started),
        Arc::default(),
    ))]);
    let pause = toolsmith_harness::agent::PauseHandle::new();
    let parent = AgentSession::builder(ScriptedModel::default())
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .with_pause(pause.clone())
        .build()
        .unwrap();
    agent_command(&parent, json!({"command": "start", "task": "t"}))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), started.notified())
        .await
        .expect("the child's tool never started");
    pause.pause();
    let check = agent_command(&parent, json!({"command": "check", "id": "agent-1"}))
        .await
        .unwrap()
        .content
        .to_text();
    assert!(check.contains("\"status\":\"paused\""), "{check}");
    let result = agent_command(&parent, json!({"command": "result", "id": "agent-1"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        result.contains("(paused after 1 model call): its parent session is paused"),
        "{result}"
    );
    let resume = agent_command(&parent, json!({"command": "resume", "id": "agent-1"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        resume.contains("is held by its parent session, which is paused"),
        "{resume}"
    );
    pause.resume();
    let check = agent_command(&parent, json!({"command": "check", "id": "agent-1"}))
        .await
        .unwrap()
        .content
        .to_text();
    assert!(check.contains("\"status\":\"running\""), "{check}");
}

/// An inner session whose model calls `wait` (a tool that waits for ever, counting its
/// start and its drop), then would answer "never"; and its model.
fn inner_waiting(
    started: &Arc<tokio::sync::Notify>,
    dropped: &Arc<AtomicUsize>,
) -> (AgentSession, ScriptedModel) {
    let inner_model = ScriptedModel::new([
        ScriptedTurn::call("wait", json!({})),
        ScriptedTurn::text("never"),
    ]);
    let inner = AgentSession::builder(inner_model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(vec![Arc::new(waits_for_ever(
            Arc::clone(started),
            Arc::clone(dropped),
        ))]))
        .build()
        .unwrap();
    inner.tool_manager().activate(&["wait".into()]);
    (inner, inner_model)
}

/// Waits up to 5 s for `count` to reach `expected`.
async fn reaches(count: &AtomicUsize, expected: usize) -> bool {
    tokio::time::timeout(Duration::from_secs(5), async {
        while count.load(Ordering::SeqCst) != expected {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .is_ok()
}

/// An `AgentTool` call dropped midway (its caller gave up, no token fired) takes the inner
/// run with it, though that runs on a task of its own: called by a parent's run, and by a
/// manager directly.
#[tokio::test]
async fn an_agent_tools_inner_run_ends_when_its_call_is_dropped() {
    let (started, dropped) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(AtomicUsize::new(0)),
    );
    let (parent, _parent_model) = parent_calling(inner_waiting(&started, &dropped).0);
    tokio::select! {
        _ = parent.run("go") => panic!("the parent's run ended"),
        () = started.notified() => {}
    }
    assert!(reaches(&dropped, 1).await, "the inner tool was dropped");

    let manager = toolsmith_core::ToolCallManager::new("calls");
    manager
        .register(Arc::new(AgentTool::new(
            Arc::new(inner_waiting(&started, &dropped).0),
            "research",
            "Research.",
        )))
        .unwrap();
    let call = ToolCallRequest::new(
        "c1",
        "research",
        toolsmith_core::ToolArguments::try_from(json!({"input": "go"})).unwrap(),
    );
    tokio::select! {
        _ = manager.execute_one(&call) => panic!("the call ended"),
        () = started.notified() => {}
    }
    assert!(reaches(&dropped, 2).await, "the inner tool was dropped");
}

/// `inner` as the tool `research` of a parent that calls it once, then answers "done".
fn parent_calling(inner: AgentSession) -> (AgentSession, ScriptedModel) {
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("research", json!({"input": "go"})),
        ScriptedTurn::text("done"),
    ]);
    let tool: Arc<dyn ToolImpl> =
        Arc::new(AgentTool::new(Arc::new(inner), "research", "Research."));
    let parent = AgentSession::builder(parent_model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(vec![tool]))
        .build()
        .unwrap();
    parent.tool_manager().activate(&["research".into()]);
    (parent, parent_model)
}

#[tokio::test]
async fn an_agent_tool_whose_caller_is_cancelled_mid_call_cancels_its_inner_run() {
    let (started, dropped) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(AtomicUsize::new(0)),
    );
    let (inner, inner_model) = inner_waiting(&started, &dropped);
    let (parent, parent_model) = parent_calling(inner);
    let stop = toolsmith_core::CancellationToken::new();
    let stopper = stop.clone();
    let (ended, ()) = tokio::join!(parent.run_with_cancellation("go", stop), async move {
        tokio::time::timeout(Duration::from_secs(5), started.notified())
            .await
            .expect("the inner tool never started");
        stopper.cancel();
    });
    assert!(
        matches!(ended, Err(AgenticError::Cancelled { .. })),
        "{ended:?}"
    );
    // The inner run is on a task of its own, aborted as the call is dropped: its tool is
    // dropped when the runtime next gets to it, not before the parent's run returns.
    assert!(reaches(&dropped, 1).await, "the inner tool was dropped");
    assert_eq!(inner_model.requests().len(), 1);
    assert_eq!(parent_model.requests().len(), 1);
}

#[tokio::test]
async fn an_agent_tool_whose_inner_session_panics_is_an_error_result_and_the_caller_goes_on() {
    let inner_model = ScriptedModel::new([ScriptedTurn::respond(|_| panic!("inner model broke"))]);
    let inner = AgentSession::builder(inner_model)
        .with_model("m")
        .build()
        .unwrap();
    let (parent, _) = parent_calling(inner);
    let run = parent.run("go").await.expect("the caller goes on");
    assert_eq!(run.text, "done");
    let result = &run.tool_calls[0].result;
    assert!(result.is_error(), "{result:?}");
    let text = result.content.to_text();
    assert!(
        text.contains("'research'") && text.contains("inner model broke"),
        "{text}"
    );
}

/// A hook that, before the parent's `agent result` call, waits for the child's tool to
/// start, then stops the run.
struct StopsOnceTheChildWorks(Arc<tokio::sync::Notify>);

#[async_trait]
impl ToolHook for StopsOnceTheChildWorks {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        if call.name == "agent" && call.arguments.get("command") == Some(&json!("result")) {
            tokio::time::timeout(Duration::from_secs(5), self.0.notified())
                .await
                .expect("the child's tool never started");
            return HookDecision::Stop("enough".into());
        }
        HookDecision::Allow
    }
}

/// A sub-agent whose one call waits for ever: `started` is told when it starts, `dropped`
/// counts its drops.
fn waiting_child(started: &Arc<tokio::sync::Notify>, dropped: &Arc<AtomicUsize>) -> SubAgentConfig {
    let child_model = ScriptedModel::new([ScriptedTurn::call("wait", json!({}))]);
    SubAgentConfig::new(child_model, "m").with_tools(vec![Arc::new(waits_for_ever(
        Arc::clone(started),
        Arc::clone(dropped),
    ))])
}

/// A parent (stopped by `hook` when given) whose child spends 10 + 5 tokens on a call of a
/// tool that waits for ever; the notify says the tool started, the count that it was dropped.
fn parent_of_a_waiting_child(
    started: &Arc<tokio::sync::Notify>,
    hook: Option<StopsOnceTheChildWorks>,
) -> (AgentSession, Arc<AtomicUsize>) {
    let dropped = Arc::new(AtomicUsize::new(0));
    let child_model =
        ScriptedModel::new([ScriptedTurn::call("wait", json!({})).with_usage(Usage::new(10, 5))]);
    let config = SubAgentConfig::new(child_model, "m").with_tools(vec![Arc::new(waits_for_ever(
        Arc::clone(started),
        Arc::clone(&dropped),
    ))]);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("never"),
    ]);
    let mut builder = AgentSession::builder(parent_model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)));
    if let Some(hook) = hook {
        builder = builder.with_hook(hook);
    }
    let parent = builder.build().unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    (parent, dropped)
}

/// A call of the `agent` command group of `parent` (a caller outside any run).
async fn agent_command(
    parent: &AgentSession,
    arguments: serde_json::Value,
) -> Result<ToolCallResult, toolsmith_core::ToolError> {
    let request = ToolCallRequest::new("c", "agent", arguments.try_into().unwrap());
    parent.tool_manager().execute_one(&request).await
}

/// `agent result` for `agent-1` says the child was stopped before it finished.
async fn assert_result_says_stopped(parent: &AgentSession) {
    let err = agent_command(
        parent,
        json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("was stopped before it finished"),
        "{err}"
    );
}

/// The child `agent-1` of `parent` ends stopped (its tool dropped), its tokens counted in
/// the parent's run.
async fn assert_child_stopped(parent: &AgentSession, dropped: &AtomicUsize, run: &AgentRun) {
    assert_result_says_stopped(parent).await;
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the child's tool was dropped"
    );
    assert_eq!(run.child_usage, Usage::new(10, 5));
}

#[tokio::test]
async fn a_run_cancelled_by_its_callers_token_stops_the_children_it_started() {
    let started = Arc::new(tokio::sync::Notify::new());
    let (parent, dropped) = parent_of_a_waiting_child(&started, None);
    let stop = toolsmith_core::CancellationToken::new();
    let stopper = stop.clone();
    let (ended, ()) = tokio::join!(parent.run_with_cancellation("go", stop), async move {
        tokio::time::timeout(Duration::from_secs(5), started.notified())
            .await
            .expect("the child's tool never started");
        stopper.cancel();
    });
    let Err(AgenticError::Cancelled { run }) = ended else {
        panic!("expected a cancelled run, got {ended:?}");
    };
    assert_child_stopped(&parent, &dropped, &run).await;
}

#[tokio::test]
async fn a_run_stopped_by_a_hook_stops_the_children_it_started() {
    let started = Arc::new(tokio::sync::Notify::new());
    let hook = StopsOnceTheChildWorks(Arc::clone(&started));
    let (parent, dropped) = parent_of_a_waiting_child(&started, Some(hook));
    let ended = parent.run("go").await;
    let Err(AgenticError::Stopped { run, .. }) = ended else {
        panic!("expected a stopped run, got {ended:?}");
    };
    assert_child_stopped(&parent, &dropped, &run).await;
}

#[tokio::test]
async fn a_run_that_answers_leaves_its_children_working_for_a_later_run() {
    let started = Arc::new(tokio::sync::Notify::new());
    let config = waiting_child(&started, &Arc::default());
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::text("started"),
    ]);
    let parent = parent_session(parent_model, config);
    parent.run("go").await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), started.notified())
        .await
        .expect("the child's tool never started");
    let check = agent_command(&parent, json!({"command": "check", "id": "agent-1"}))
        .await
        .unwrap();
    assert!(check.content.to_text().contains("\"running\""), "{check:?}");
}

/// A run that ends on its model's error leaves its children working, for a `send` that
/// continues the conversation to collect; `stop_sub_agents` stops them when none will.
#[tokio::test]
async fn a_run_ended_by_a_model_error_leaves_its_children_which_stop_sub_agents_stops() {
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicUsize::new(0));
    let config = waiting_child(&started, &dropped);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::error(ModelError::Api {
            provider: "p".into(),
            status: 500,
            message: "the parent's model is down".into(),
        }),
    ]);
    let parent = parent_session(parent_model, config);
    let ended = parent.send("go").await;
    assert!(
        matches!(ended, Err(AgenticError::Model { .. })),
        "{ended:?}"
    );
    tokio::time::timeout(Duration::from_secs(5), started.notified())
        .await
        .expect("the child's tool never started");
    let check = agent_command(&parent, json!({"command": "check", "id": "agent-1"}))
        .await
        .unwrap()
        .content
        .to_text();
    assert!(check.contains("\"running\""), "{check}");
    assert_eq!(parent.stop_sub_agents(), 1);
    assert_result_says_stopped(&parent).await;
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the child's tool was dropped"
    );
    // Nothing is left to stop, and the session goes on.
    assert_eq!(parent.stop_sub_agents(), 0);
    assert!(!parent.cancellation_token().is_cancelled());
}

#[tokio::test]
async fn a_run_ended_by_a_panic_stops_the_children_it_started() {
    let config = waiting_child(&Arc::default(), &Arc::default());
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::respond(|_| panic!("the parent's model broke")),
    ]);
    let parent = parent_session(parent_model, config);
    let ended = parent.run("go").await;
    assert!(
        matches!(ended, Err(AgenticError::Panicked { .. })),
        "{ended:?}"
    );
    assert_result_says_stopped(&parent).await;
}

#[tokio::test]
async fn a_send_dropped_midway_stops_the_children_its_run_started() {
    let started = Arc::new(tokio::sync::Notify::new());
    let (parent, dropped) = parent_of_a_waiting_child(&started, None);
    // The caller gives up once the child works (a `select!` with a timeout, a client gone).
    tokio::select! {
        ended = parent.send("go") => panic!("the run ended: {ended:?}"),
        () = async {
            tokio::time::timeout(Duration::from_secs(5), started.notified())
                .await
                .expect("the child's tool never started");
        } => {}
    }
    assert_result_says_stopped(&parent).await;
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the child's tool was dropped"
    );
    // A dropped send leaves the kept conversation as it was.
    assert!(parent.transcript().await.is_empty());
}

/// The depth a recursing run was asked at: its task, `d<N>`.
fn depth_asked(request: &toolsmith_harness::model::ChatRequest) -> usize {
    let task = request.messages[0].text().unwrap_or_default();
    task.trim_start_matches('d').parse().unwrap()
}

/// Each nested run is on a task of its own, so the runs up to the bound fit a thread of
/// 1 MB (polled inside their callers', about 200 KB each in a debug build, they overflowed
/// it: the process aborted), and the run past it is refused.
#[test]
fn an_agent_tool_that_reaches_itself_is_refused_past_the_nesting_bound_not_a_stack_overflow() {
    let thread = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(agent_reaching_itself());
        })
        .unwrap();
    thread.join().unwrap();
}

async fn agent_reaching_itself() {
    use toolsmith_harness::agent::MAX_NESTED_RUNS;
    use toolsmith_harness::model::{ChatResponse, Message};
    // A hostile model: every run of the session calls the session again, a level deeper,
    // and answers with what the level below said.
    let model = ScriptedModel::new((0..200).map(|_| {
        ScriptedTurn::respond(|request| {
            let depth = depth_asked(request);
            Ok(match request.messages.last() {
                Some(Message::ToolResults { results }) => {
                    ChatResponse::text(results[0].result.content.to_text())
                }
                _ => ChatResponse::calls(vec![Ok(toolsmith_core::ToolCallRequest::new(
                    format!("c{depth}"),
                    "recurse",
                    toolsmith_core::ToolArguments::try_from(
                        json!({"input": format!("d{}", depth + 1)}),
                    )
                    .unwrap(),
                ))]),
            })
        })
    }));
    let session = Arc::new(
        AgentSession::builder(model.clone())
            .with_model("m")
            .build()
            .unwrap(),
    );
    let recurse = AgentTool::new(Arc::clone(&session), "recurse", "Runs this agent again.");
    session.tool_manager().register(Arc::new(recurse)).unwrap();
    session.tool_manager().activate(&["recurse".to_owned()]);
    let run = session.run("d0").await.unwrap();
    assert!(
        run.text.contains(&format!(
            "not run: it would be nested under {MAX_NESTED_RUNS}"
        )),
        "{}",
        run.text
    );
    // Runs d0 to d{MAX_NESTED_RUNS} each asked twice (a call, then an answer); the one
    // below them none.
    let requests = model.requests();
    assert_eq!(requests.len(), 2 * (MAX_NESTED_RUNS + 1));
    assert!(requests.iter().all(|r| depth_asked(r) <= MAX_NESTED_RUNS));
    // The session holds the tool that holds it: broken by hand, as its user would.
    session.tool_manager().deregister("recurse");
}

/// A typed answer of `{"ok": true}`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Done {
    #[allow(dead_code)]
    ok: bool,
}

/// A parent whose run starts a child that waits for ever and answers "started"; its typed
/// answer's exchange is cancelled by `stop` as it is asked for (when given), its answer
/// coming long after the test gives up. The count says the child's tool was dropped.
fn parent_asked_for_a_typed_answer(
    stop: Option<toolsmith_core::CancellationToken>,
) -> (AgentSession, Arc<AtomicUsize>) {
    let dropped = Arc::new(AtomicUsize::new(0));
    let child_model =
        ScriptedModel::new([ScriptedTurn::call("wait", json!({})).with_usage(Usage::new(10, 5))]);
    let config = SubAgentConfig::new(child_model, "m").with_tools(vec![Arc::new(waits_for_ever(
        Arc::default(),
        Arc::clone(&dropped),
    ))]);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::text("started"),
        ScriptedTurn::call("final_answer", json!({"ok": true}))
            .with_delay(Duration::from_secs(600)),
    ]);
    let mut builder = AgentSession::builder(parent_model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)));
    if let Some(stop) = stop {
        builder =
            builder.with_event_handler(move |event: &toolsmith_harness::agent::AgentEvent| {
                if let toolsmith_harness::agent::AgentEvent::ModelRequest { turn: 3, .. } = event {
                    stop.cancel();
                }
            });
    }
    let parent = builder.build().unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    (parent, dropped)
}

/// A typed run is cancelled whole, its answer's exchange included: one cancelled while its
/// answer is asked for ends cancelled, and stops the children its run's calls started, as a
/// run cancelled before its answer does.
#[tokio::test]
async fn a_typed_run_cancelled_while_its_answer_is_asked_for_stops_the_children_it_started() {
    let stop = toolsmith_core::CancellationToken::new();
    let (parent, _) = parent_asked_for_a_typed_answer(Some(stop.clone()));
    let ended = tokio::time::timeout(
        Duration::from_secs(60),
        parent.send_as_with_cancellation::<Done>("go", stop),
    )
    .await
    .expect("the stop ended the exchange");
    assert!(
        matches!(ended, Err(AgenticError::Cancelled { .. })),
        "{ended:?}"
    );
    assert_result_says_stopped(&parent).await;
}

/// A typed run dropped while its answer is asked for stops the children its run's calls
/// started, as a run dropped before its answer does.
#[tokio::test]
async fn a_typed_run_dropped_while_its_answer_is_asked_for_stops_the_children_it_started() {
    let (parent, _) = parent_asked_for_a_typed_answer(None);
    let asked =
        tokio::time::timeout(Duration::from_millis(200), parent.send_as::<Done>("go")).await;
    assert!(asked.is_err(), "the exchange's answer came: {asked:?}");
    assert_result_says_stopped(&parent).await;
}
