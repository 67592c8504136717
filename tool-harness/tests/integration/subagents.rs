//! Sub-agents (`ToolPreset::agent`: start, check, result, pause, resume, stop) and
//! `AgentTool`, with scripted models for parents and children.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{
    Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolError, ToolImpl, ToolShed, scheme,
};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{AgentCommands, AgentSession, AgentTool, SubAgentConfig};
use toolsmith_harness::model::{Message, ModelError, ScriptedModel, ScriptedTurn, Usage};

fn text_tool(name: &str, answer: &str) -> Arc<dyn ToolImpl> {
    let answer = answer.to_owned();
    Arc::new(FnTool::new(
        name,
        format!("The {name} tool."),
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let answer = answer.clone();
            async move { Ok(ToolCallResult::text(answer)) }
        },
    ))
}

/// A tool that waits for `gate` (or forever), recording when its future is dropped.
fn gated_tool(gate: Arc<tokio::sync::Notify>, dropped: Arc<AtomicUsize>) -> Arc<dyn ToolImpl> {
    gated_tool_telling(gate, dropped, Arc::default())
}

/// `gated_tool`, which also says on `started` that a call has begun to wait.
fn gated_tool_telling(
    gate: Arc<tokio::sync::Notify>,
    dropped: Arc<AtomicUsize>,
    started: Arc<tokio::sync::Notify>,
) -> Arc<dyn ToolImpl> {
    struct Probe(Arc<AtomicUsize>);
    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    Arc::new(FnTool::new(
        "wait_for_gate",
        "Waits until the test opens the gate.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let (gate, probe) = (Arc::clone(&gate), Probe(Arc::clone(&dropped)));
            started.notify_one();
            async move {
                gate.notified().await;
                drop(probe);
                Ok(ToolCallResult::text("gate opened"))
            }
        },
    ))
}

/// Waits (five seconds at most) until `started` says the child's tool call has begun.
async fn wait_started(started: &tokio::sync::Notify) {
    tokio::time::timeout(Duration::from_secs(5), started.notified())
        .await
        .expect("the child never started its tool call");
}

/// Calls `agent` with `arguments` directly.
async fn agent(manager: &ToolCallManager, arguments: Value) -> Result<String, ToolError> {
    let request =
        ToolCallRequest::new("call", "agent", ToolArguments::try_from(arguments).unwrap());
    manager
        .execute_one(&request)
        .await
        .map(|r| r.content.to_text())
}

fn manager_with(commands: AgentCommands) -> ToolCallManager {
    let manager = ToolCallManager::new("parent");
    manager.register(Arc::new(commands)).unwrap();
    manager
}

/// Starts a child with `arguments` (a `start` command); its id.
async fn start(manager: &ToolCallManager, arguments: Value) -> String {
    let started: Value = serde_json::from_str(&agent(manager, arguments).await.unwrap()).unwrap();
    started["id"].as_str().unwrap().to_owned()
}

async fn status(manager: &ToolCallManager, id: &str) -> Value {
    let text = agent(manager, json!({"command": "check", "id": id}))
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Waits (Tokio's clock) until `check` reports `wanted`.
async fn wait_for_status(manager: &ToolCallManager, id: &str, wanted: &str) -> Value {
    for _ in 0..500 {
        let report = status(manager, id).await;
        if report["status"] == wanted {
            return report;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{id} never became {wanted}: {}", status(manager, id).await);
}

#[tokio::test]
async fn a_parent_session_starts_checks_and_collects_a_child() {
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("lookup", json!({}))
            .and_call("summarize", json!({}))
            .with_usage(Usage::new(10, 5)),
        ScriptedTurn::text("child done: found and summarized").with_usage(Usage::new(20, 7)),
    ]);
    let config = SubAgentConfig::new(child_model.clone(), "child-model")
        .with_system_prompt("Do the task.")
        .with_tools(vec![
            text_tool("lookup", "3 hits"),
            text_tool("summarize", "a summary"),
        ]);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call(
            "agent",
            json!({"command": "start", "task": "find and summarize"}),
        ),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::call("agent", json!({"command": "check", "id": "agent-1"})),
        ScriptedTurn::text("The child finished."),
    ]);
    let parent = AgentSession::builder(parent_model.clone())
        .with_model("parent-model")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .build()
        .unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    let run = parent.run("delegate").await.unwrap();

    let results: Vec<String> = run
        .tool_calls
        .iter()
        .map(|c| c.result.content.to_text())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&results[0]).unwrap(),
        json!({"id": "agent-1", "status": "running"})
    );
    assert_eq!(results[1], "child done: found and summarized");
    let check: Value = serde_json::from_str(&results[2]).unwrap();
    assert_eq!(check["status"], "finished");
    assert_eq!(check["turns"], 2);
    let tools: Vec<&str> = check["last_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["lookup", "summarize"]);
    // The child saw its own system prompt and task, and its tools without `agent` (depth 1),
    // each declared from the start: no `shed`, which could find only them.
    let first = &child_model.requests()[0];
    assert_eq!(first.system.as_deref(), Some("Do the task."));
    assert_eq!(first.messages[0].text(), Some("find and summarize"));
    assert_eq!(first.tool_names(), ["lookup", "summarize"]);
    // The child's tokens roll up into the parent's run, counted apart.
    assert_eq!(run.child_usage, Usage::new(30, 12));
    assert_eq!(run.total_usage(), run.usage + Usage::new(30, 12));
    child_model.assert_complete();
}

#[tokio::test]
async fn pause_holds_the_child_between_turns_and_resume_lets_it_go_on() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("wait_for_gate", json!({})),
        ScriptedTurn::text("after the gate"),
    ]);
    let config = SubAgentConfig::new(child_model.clone(), "m")
        .with_tools(vec![gated_tool(Arc::clone(&gate), Arc::default())]);
    let manager = manager_with(AgentCommands::new(config));
    agent(&manager, json!({"command": "start", "task": "wait"}))
        .await
        .unwrap();
    // The child is in its tool call: pause it, then let the tool finish.
    while child_model.requests().is_empty() {
        tokio::task::yield_now().await;
    }
    let paused = agent(&manager, json!({"command": "pause", "id": "agent-1"}))
        .await
        .unwrap();
    assert!(paused.contains("\"paused\""), "{paused}");
    gate.notify_one();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        child_model.requests().len(),
        1,
        "a paused child called its model"
    );
    let err = agent(&manager, json!({"command": "pause", "id": "agent-1"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is paused, not running"), "{err}");
    // A wait for a paused child's answer ends at once: it cannot finish until resumed.
    let err = tokio::time::timeout(
        Duration::from_secs(5),
        agent(
            &manager,
            json!({"command": "result", "id": "agent-1", "wait_ms": 60000}),
        ),
    )
    .await
    .expect("the wait ended at once")
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("has not finished (paused after 1 model call)"),
        "{err}"
    );
    assert!(err.to_string().contains("resume it"), "{err}");

    agent(&manager, json!({"command": "resume", "id": "agent-1"}))
        .await
        .unwrap();
    let answer = agent(
        &manager,
        json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
    )
    .await
    .unwrap();
    assert_eq!(answer, "after the gate");
    assert_eq!(child_model.requests().len(), 2);
    let err = agent(&manager, json!({"command": "resume", "id": "agent-1"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is finished, not paused"), "{err}");
}

#[tokio::test]
async fn stop_cancels_a_running_tool_and_keeps_the_transcript() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("wait_for_gate", json!({})),
        ScriptedTurn::text("never"),
    ]);
    let started = Arc::new(tokio::sync::Notify::new());
    let config =
        SubAgentConfig::new(child_model.clone(), "m").with_tools(vec![gated_tool_telling(
            Arc::new(tokio::sync::Notify::new()),
            Arc::clone(&dropped),
            Arc::clone(&started),
        )]);
    let manager = manager_with(AgentCommands::new(config));
    agent(
        &manager,
        json!({"command": "start", "task": "wait forever"}),
    )
    .await
    .unwrap();
    wait_started(&started).await;
    // Running, in its tool call: no result yet, and the error says where it is.
    let err = agent(&manager, json!({"command": "result", "id": "agent-1"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("has not finished (running after 1 model call)"),
        "{err}"
    );
    let stopped: Value = serde_json::from_str(
        &agent(&manager, json!({"command": "stop", "id": "agent-1"}))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(stopped["status"], "stopped");
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the running tool was cancelled"
    );
    assert_eq!(child_model.requests().len(), 1);
    let err = agent(&manager, json!({"command": "result", "id": "agent-1"}))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("was stopped") && message.contains("transcript of 3 messages"),
        "{message}"
    );
    let err = agent(&manager, json!({"command": "stop", "id": "agent-1"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("not running: it is stopped"),
        "{err}"
    );
}

/// Stopped in its first model call, a child keeps the task alone: the error counts it in
/// the singular.
#[tokio::test(start_paused = true)]
async fn a_child_stopped_in_its_first_model_call_keeps_one_message() {
    let child_model =
        ScriptedModel::new([ScriptedTurn::text("too late").with_delay(Duration::from_secs(3600))]);
    let manager = manager_with(AgentCommands::new(SubAgentConfig::new(
        child_model.clone(),
        "m",
    )));
    start(&manager, json!({"command": "start", "task": "think"})).await;
    while child_model.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    agent(&manager, json!({"command": "stop", "id": "agent-1"}))
        .await
        .unwrap();
    let err = agent(&manager, json!({"command": "result", "id": "agent-1"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("it has no result (its transcript of 1 message is kept)"),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_ids_count_and_depth_limits_are_clear_errors() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("wait_for_gate", json!({})),
        ScriptedTurn::call("wait_for_gate", json!({})),
    ]);
    let config = SubAgentConfig::new(child_model.clone(), "m")
        .with_tools(vec![gated_tool(Arc::clone(&gate), Arc::default())])
        .with_max_children(1);
    let manager = manager_with(AgentCommands::new(config.clone()));
    let err = agent(&manager, json!({"command": "check", "id": "agent-9"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("no sub-agent 'agent-9': none has been started"),
        "{err}"
    );
    // A task of nothing visible is no task.
    for blank in [" \n", "\u{200B}", "\u{FEFF}\u{200D}"] {
        let err = agent(&manager, json!({"command": "start", "task": blank}))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("/task: the task is empty"),
            "{blank:?}: {err}"
        );
    }
    agent(&manager, json!({"command": "start", "task": "one"}))
        .await
        .unwrap();
    let err = agent(&manager, json!({"command": "start", "task": "two"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("1 sub-agent is already running,"),
        "{err}"
    );
    let err = agent(&manager, json!({"command": "check", "id": "agent-9"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("the sub-agents are agent-1"),
        "{err}"
    );
    let err = agent(&manager, json!({"command": "resume", "id": "agent-1"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is running, not paused"), "{err}");
    let err = agent(
        &manager,
        json!({"command": "start", "task": "x", "tools": ["rm_rf"]}),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot have the tool 'rm_rf'; it can have wait_for_gate"),
        "{err}"
    );
    // A stopped child frees its place.
    agent(&manager, json!({"command": "stop", "id": "agent-1"}))
        .await
        .unwrap();
    agent(&manager, json!({"command": "start", "task": "two"}))
        .await
        .unwrap();

    // Depth: at the limit, `start` is refused; below it, children get the commands one level
    // deeper, and the deepest children get none.
    let none = manager_with(AgentCommands::new(config.clone().with_max_depth(0)));
    let err = agent(&none, json!({"command": "start", "task": "x"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("no sub-agent can be started here: the nesting limit is 0"),
        "{err}"
    );

    // One script serves child and grandchild, answering by the request: the child starts a
    // grandchild, waits for its result, and answers with it.
    let grand_model = ScriptedModel::default();
    for _ in 0..4 {
        grand_model.push([ScriptedTurn::respond(|request| {
            use toolsmith_harness::model::{ChatResponse, Message};
            if request.messages[0].text() == Some("grandchild task") {
                return Ok(ChatResponse::text("grandchild answer"));
            }
            let call = |arguments: Value| {
                Ok(ChatResponse::calls(vec![Ok(ToolCallRequest::new(
                    format!("c{}", request.messages.len()),
                    "agent",
                    ToolArguments::try_from(arguments).unwrap(),
                ))]))
            };
            match request.messages.last() {
                Some(Message::User { .. }) => {
                    call(json!({"command": "start", "task": "grandchild task"}))
                }
                Some(message) if request.messages.len() == 3 => {
                    let id = message.results()[0].result.content.to_text();
                    assert!(id.contains("agent-1"), "{id}");
                    call(json!({"command": "result", "id": "agent-1", "wait_ms": 5000}))
                }
                Some(message) => Ok(ChatResponse::text(format!(
                    "child answer with {}",
                    message.results()[0].result.content.to_text()
                ))),
                None => unreachable!(),
            }
        })]);
    }
    let nested = manager_with(AgentCommands::new(
        SubAgentConfig::new(grand_model.clone(), "m").with_max_depth(2),
    ));
    agent(&nested, json!({"command": "start", "task": "child task"}))
        .await
        .unwrap();
    let answer = agent(
        &nested,
        json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
    )
    .await
    .unwrap();
    assert_eq!(answer, "child answer with grandchild answer");
    let requests = grand_model.requests();
    let child = requests
        .iter()
        .find(|r| r.messages[0].text() == Some("child task"))
        .unwrap();
    let grandchild = requests
        .iter()
        .find(|r| r.messages[0].text() == Some("grandchild task"))
        .expect("the grandchild ran");
    assert_eq!(child.tool_names(), ["agent"]);
    assert!(grandchild.tools.is_empty(), "{:?}", grandchild.tool_names());
}

/// A parent session whose child has started a tool that waits for ever; the count of that
/// tool's futures dropped.
async fn parent_with_a_waiting_child() -> (AgentSession, Arc<AtomicUsize>) {
    let dropped = Arc::new(AtomicUsize::new(0));
    let child_model = ScriptedModel::new([ScriptedTurn::call("wait_for_gate", json!({}))]);
    let started = Arc::new(tokio::sync::Notify::new());
    let config = SubAgentConfig::new(child_model, "m").with_tools(vec![gated_tool_telling(
        Arc::new(tokio::sync::Notify::new()),
        Arc::clone(&dropped),
        Arc::clone(&started),
    )]);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "wait"})),
        ScriptedTurn::text("started it"),
    ]);
    let parent = crate::common::parent_session(parent_model, config);
    parent.run("start a child").await.unwrap();
    wait_started(&started).await;
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        0,
        "the child is still working"
    );
    (parent, dropped)
}

/// Waits (a second at most) for the child's waiting tool to be dropped.
async fn assert_dropped_soon(dropped: &AtomicUsize, what: &str) {
    for _ in 0..200 {
        if dropped.load(Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the child's tool went on after {what}");
}

#[tokio::test]
async fn no_child_outlives_its_parent_session() {
    let (parent, dropped) = parent_with_a_waiting_child().await;
    drop(parent);
    assert_dropped_soon(&dropped, "its parent session was dropped").await;
}

#[tokio::test]
async fn a_cancelled_session_stops_its_children() {
    let (parent, dropped) = parent_with_a_waiting_child().await;
    parent.cancellation_token().cancel();
    assert_dropped_soon(&dropped, "its session was cancelled").await;
}

/// `session` as the tool `research`, called with `input`.
async fn research(session: AgentSession, input: &str) -> Result<ToolCallResult, ToolError> {
    let manager = ToolCallManager::new("parent");
    manager
        .register(Arc::new(AgentTool::new(
            Arc::new(session),
            "research",
            "Research.",
        )))
        .unwrap();
    let call = ToolCallRequest::new(
        "1",
        "research",
        ToolArguments::try_from(json!({ "input": input })).unwrap(),
    );
    manager.execute_one(&call).await
}

#[tokio::test]
async fn agent_tool_answers_fails_and_runs_out_of_turns_as_results() {
    let run_tool = |model: ScriptedModel, max_turns: usize| {
        let session = AgentSession::builder(model)
            .with_model("m")
            .with_toolshed(ToolShed::new().tool(text_tool("lookup", "hit")))
            .with_max_turns(max_turns)
            .build()
            .unwrap();
        session.tool_manager().activate(&["lookup".into()]);
        async move { research(session, "find it").await.unwrap() }
    };
    let ok = run_tool(
        ScriptedModel::new([
            ScriptedTurn::call("lookup", json!({})),
            ScriptedTurn::text("found: hit"),
        ]),
        5,
    )
    .await;
    assert_eq!(ok.content.to_text(), "found: hit");
    assert!(!ok.is_error());

    let failed = run_tool(
        ScriptedModel::new([ScriptedTurn::error(ModelError::Other(
            "the model is down".into(),
        ))]),
        5,
    )
    .await;
    assert!(failed.is_error());
    assert!(
        failed
            .content
            .to_text()
            .contains("the agent 'research' failed"),
        "{failed:?}"
    );
    assert!(failed.content.to_text().contains("the model is down"));

    let endless = (0..5).map(|_| ScriptedTurn::call("lookup", json!({})));
    let out_of_turns = run_tool(ScriptedModel::new(endless), 2).await;
    assert!(out_of_turns.is_error());
    assert!(
        out_of_turns
            .content
            .to_text()
            .contains("stopped after 2 model calls"),
        "{out_of_turns:?}"
    );
    // Whitespace or zero-width characters alone are no task: refused without a model call.
    let idle = ScriptedModel::default();
    for blank in [" \n\t ", "\u{200B}\u{FEFF}", "\u{2060}"] {
        let session = AgentSession::builder(idle.clone())
            .with_model("m")
            .build()
            .unwrap();
        let error = research(session, blank).await.unwrap_err().to_string();
        assert!(
            error.contains("/input: the input is empty"),
            "{blank:?}: {error}"
        );
    }
    assert!(idle.requests().is_empty(), "the agent was run");
    // The schema asks for one non-empty `input`.
    let tool = AgentTool::new(
        Arc::new(
            AgentSession::builder(ScriptedModel::default())
                .with_model("m")
                .build()
                .unwrap(),
        ),
        "research",
        "Research.",
    );
    let schema = tool.definition().function_spec().parameters;
    assert_eq!(schema["required"], json!(["input"]));
}

/// Two children in parallel, each answering from its task (a shared scripted model that
/// answers by the request).
#[tokio::test]
async fn two_children_run_in_parallel() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let child_model = ScriptedModel::default();
    for _ in 0..2 {
        let record = Arc::clone(&record);
        child_model.push([ScriptedTurn::respond(move |request| {
            let task = request.messages[0].text().unwrap_or_default().to_owned();
            record.lock().unwrap().push(task.clone());
            Ok(toolsmith_harness::model::ChatResponse::text(format!(
                "done: {task}"
            )))
        })]);
    }
    let manager = manager_with(AgentCommands::new(SubAgentConfig::new(child_model, "m")));
    agent(&manager, json!({"command": "start", "task": "alpha"}))
        .await
        .unwrap();
    agent(&manager, json!({"command": "start", "task": "beta"}))
        .await
        .unwrap();
    let mut answers = Vec::new();
    for id in ["agent-1", "agent-2"] {
        answers.push(
            agent(
                &manager,
                json!({"command": "result", "id": id, "wait_ms": 5000}),
            )
            .await
            .unwrap(),
        );
    }
    answers.sort();
    assert_eq!(answers, ["done: alpha", "done: beta"]);
    wait_for_status(&manager, "agent-2", "finished").await;
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_child_that_panics_fails_and_frees_its_place() {
    let child_model = ScriptedModel::new([ScriptedTurn::respond(|_| {
        panic!("a bug in the model client")
    })]);
    let config = SubAgentConfig::new(child_model, "m").with_max_children(1);
    let manager = manager_with(AgentCommands::new(config));
    let id = start(&manager, json!({"command": "start", "task": "crash"})).await;
    wait_for_status(&manager, &id, "failed").await;
    let result = agent(&manager, json!({"command": "result", "id": id}))
        .await
        .unwrap_err();
    assert!(
        result
            .to_string()
            .contains("panicked: a bug in the model client"),
        "{result}"
    );
    // Its place is free again.
    agent(&manager, json!({"command": "start", "task": "again"}))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_start_may_lower_the_turn_limit_but_not_raise_it() {
    let endless = (0..10).map(|_| ScriptedTurn::call("lookup", json!({})));
    let child_model = ScriptedModel::new(endless);
    let config = SubAgentConfig::new(child_model.clone(), "m")
        .with_max_turns(2)
        .with_tools(vec![text_tool("lookup", "nothing yet")]);
    let manager = manager_with(AgentCommands::new(config));
    let id = start(
        &manager,
        json!({"command": "start", "task": "look", "max_turns": 4_000_000_000_u32}),
    )
    .await;
    let report = wait_for_status(&manager, &id, "failed").await;
    assert_eq!(report["turns"], 2);
    assert_eq!(child_model.requests().len(), 2);
}

/// A start asking for no turn is refused by the schema, naming the argument and its
/// minimum, rather than made a start of one turn without a word.
#[tokio::test]
async fn a_start_asking_for_no_turn_is_refused() {
    let child_model = ScriptedModel::new([ScriptedTurn::text("unused")]);
    let manager = manager_with(AgentCommands::new(SubAgentConfig::new(
        child_model.clone(),
        "m",
    )));
    let tool = manager.get_def("agent").unwrap();
    let max_turns = &tool.command("start").unwrap().arguments.schema()["properties"]["max_turns"];
    assert_eq!(max_turns["minimum"], 1, "{max_turns}");
    let err = agent(
        &manager,
        json!({"command": "start", "task": "look", "max_turns": 0}),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("/max_turns: 0 is less than the minimum of 1"),
        "{err}"
    );
    assert!(child_model.requests().is_empty());
    assert_eq!(child_model.remaining(), 1);
}

#[tokio::test]
async fn a_parent_keeps_the_last_ended_children_and_lets_older_ones_go() {
    use toolsmith_harness::agent::MAX_ENDED_CHILDREN;
    let answers = (0..MAX_ENDED_CHILDREN + 3).map(|i| ScriptedTurn::text(format!("done {i}")));
    let config = SubAgentConfig::new(ScriptedModel::new(answers), "m").with_max_children(1);
    let manager = manager_with(AgentCommands::new(config));
    for n in 1..=MAX_ENDED_CHILDREN + 3 {
        let id = format!("agent-{n}");
        agent(&manager, json!({"command": "start", "task": "answer"}))
            .await
            .unwrap();
        wait_for_status(&manager, &id, "finished").await;
    }
    // The newest are kept with their answers; the oldest were let go, and say so.
    let newest = format!("agent-{}", MAX_ENDED_CHILDREN + 3);
    let result = agent(&manager, json!({"command": "result", "id": newest}))
        .await
        .unwrap();
    assert!(result.contains("done"), "{result}");
    let kept_oldest = format!("agent-{}", 4);
    agent(&manager, json!({"command": "check", "id": kept_oldest}))
        .await
        .unwrap();
    let err = agent(&manager, json!({"command": "check", "id": "agent-3"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ended and was let go"), "{err}");
    let err = agent(&manager, json!({"command": "check", "id": "agent-999"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("no sub-agent 'agent-999'"),
        "{err}"
    );
}

/// A start that fails while building its child lets no ended child go: the record is
/// dropped only when a new child takes its place.
#[tokio::test]
async fn a_start_that_fails_keeps_every_ended_child() {
    use toolsmith_harness::agent::MAX_ENDED_CHILDREN;
    let answers = (0..MAX_ENDED_CHILDREN).map(|i| ScriptedTurn::text(format!("done {i}")));
    // A configured tool named like the `agent` commands: a child given every tool (the
    // commands one level deeper included) cannot be built; one given `lookup` can.
    let config = SubAgentConfig::new(ScriptedModel::new(answers), "m")
        .with_max_children(1)
        .with_max_depth(2)
        .with_tools(vec![
            text_tool("lookup", "nothing"),
            text_tool("agent", "a clash"),
        ]);
    let manager = manager_with(AgentCommands::new(config));
    for n in 1..=MAX_ENDED_CHILDREN {
        agent(
            &manager,
            json!({"command": "start", "task": "answer", "tools": ["lookup"]}),
        )
        .await
        .unwrap();
        wait_for_status(&manager, &format!("agent-{n}"), "finished").await;
    }
    let err = agent(&manager, json!({"command": "start", "task": "answer"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("'agent' was added to the shed twice"),
        "{err}"
    );
    for n in 1..=MAX_ENDED_CHILDREN {
        let result = agent(
            &manager,
            json!({"command": "result", "id": format!("agent-{n}")}),
        )
        .await
        .unwrap();
        assert!(result.contains("done"), "agent-{n}: {result}");
    }
}

#[tokio::test]
async fn a_stopped_childs_last_answer_counts_in_the_parents_child_usage() {
    use toolsmith_harness::agent::AgenticError;
    use toolsmith_harness::model::ChatResponse;
    let session_token = toolsmith_core::CancellationToken::new();
    let cancel = session_token.clone();
    let child_model = ScriptedModel::new([ScriptedTurn::respond(move |_| {
        // The parent session is cancelled while the child's answer is on its way.
        cancel.cancel();
        Ok(ChatResponse::text("late").with_usage(Usage::new(100, 50)))
    })]);
    let config = SubAgentConfig::new(child_model.clone(), "m");
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::text("never").with_delay(Duration::from_secs(5)),
    ]);
    let parent = AgentSession::builder(parent_model)
        .with_model("m")
        .with_cancellation(session_token)
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .build()
        .unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    let error = parent.run("delegate").await.unwrap_err();
    let AgenticError::Cancelled { run } = error else {
        panic!("expected a cancelled run, got {error}");
    };
    assert_eq!(child_model.requests().len(), 1, "the child made its call");
    let check = status(parent.tool_manager(), "agent-1").await;
    assert_eq!(check["status"], "stopped", "{check}");
    assert_eq!(check["usage"]["input_tokens"], 100, "{check}");
    assert_eq!(run.child_usage, Usage::new(100, 50), "{check}");
}

#[tokio::test]
async fn ids_that_never_named_a_child_are_said_to_be_unknown() {
    let child_model = ScriptedModel::new([ScriptedTurn::call("wait_for_gate", json!({}))]);
    let config = SubAgentConfig::new(child_model, "m").with_tools(vec![gated_tool(
        Arc::new(tokio::sync::Notify::new()),
        Arc::default(),
    )]);
    let manager = manager_with(AgentCommands::new(config));
    let check = |id: &'static str| {
        let manager = &manager;
        async move {
            agent(manager, json!({"command": "check", "id": id}))
                .await
                .unwrap_err()
                .to_string()
        }
    };
    let before = check("agent-0").await;
    assert!(before.contains("no sub-agent 'agent-0'"), "{before}");
    assert!(before.contains("none has been started"), "{before}");
    agent(&manager, json!({"command": "start", "task": "wait"}))
        .await
        .unwrap();
    // agent-1 runs; these are not its id, nor any other's.
    for id in ["agent-01", "agent-+1", "agent-0", "agent-2"] {
        let error = check(id).await;
        assert!(error.contains(&format!("no sub-agent '{id}'")), "{error}");
        assert!(error.contains("agent-1"), "the ids there are: {error}");
    }
}

#[tokio::test]
async fn an_id_or_tool_name_of_any_length_is_quoted_cut() {
    let manager = manager_with(AgentCommands::new(SubAgentConfig::new(
        ScriptedModel::default(),
        "m",
    )));
    let long = "x".repeat(100_000);
    for arguments in [
        json!({"command": "check", "id": long}),
        json!({"command": "result", "id": long}),
        json!({"command": "stop", "id": long}),
        json!({"command": "start", "task": "t", "tools": [long]}),
    ] {
        let error = agent(&manager, arguments).await.unwrap_err().to_string();
        assert!(error.len() < 1_000, "{} bytes", error.len());
        assert!(
            error.contains(&format!("'{}…'", "x".repeat(240))),
            "{error}"
        );
    }
}

#[tokio::test]
async fn check_quotes_a_tool_name_the_child_made_up_cut() {
    // The child's model names its tools as it likes: five calls of a tool named with 100,000
    // characters made `check` give the parent's model half a megabyte.
    let long = "x".repeat(100_000);
    let child_model = ScriptedModel::new([
        ScriptedTurn::call(&long, json!({})),
        ScriptedTurn::text("done"),
    ]);
    let manager = manager_with(AgentCommands::new(SubAgentConfig::new(child_model, "m")));
    let id = start(&manager, json!({"command": "start", "task": "t"})).await;
    let report = wait_for_status(&manager, &id, "finished").await;
    let tool = report["last_calls"][0]["tool"].as_str().unwrap();
    assert_eq!(tool, format!("{}…", "x".repeat(240)));
    assert_eq!(report["last_calls"][0]["is_error"], true);
}

#[tokio::test]
async fn a_sub_agents_answer_left_empty_by_a_block_or_the_output_limit_is_a_failure() {
    use toolsmith_harness::model::StopReason;
    let left_empty = |reason: StopReason| ScriptedTurn::text("").with_stop_reason(reason);
    // A background child: `result` fails, saying why.
    let child_model = ScriptedModel::new([
        left_empty(StopReason::ContentFilter),
        left_empty(StopReason::MaxTokens),
        ScriptedTurn::text("").with_stop_reason(StopReason::EndTurn),
    ]);
    let manager = manager_with(AgentCommands::new(SubAgentConfig::new(child_model, "m")));
    for (id, said) in [
        ("agent-1", Some("the provider blocked its answer")),
        (
            "agent-2",
            Some("its answer was cut off at the output token limit"),
        ),
        ("agent-3", None),
    ] {
        start(&manager, json!({"command": "start", "task": "t"})).await;
        let result = agent(
            &manager,
            json!({"command": "result", "id": id, "wait_ms": 5000}),
        )
        .await;
        match said {
            Some(said) => {
                let error = result.unwrap_err().to_string();
                assert!(
                    error.contains(&format!("the agent '{id}' gave no answer: {said}")),
                    "{error}"
                );
                assert_eq!(status(&manager, id).await["status"], "failed");
            }
            // An answer of nothing the model chose to give is its answer.
            None => assert_eq!(result.unwrap(), ""),
        }
    }

    // An agent as a tool: an error result.
    let session =
        AgentSession::builder(ScriptedModel::new([left_empty(StopReason::ContentFilter)]))
            .with_model("m")
            .build()
            .unwrap();
    let result = research(session, "find it").await.unwrap();
    assert!(result.is_error(), "{result:?}");
    assert!(
        result
            .content
            .to_text()
            .contains("the agent 'research' gave no answer: the provider blocked its answer"),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_child_s_calls_pass_its_parent_s_hooks_and_approval() {
    use toolsmith_core::ToolAnnotations;
    use toolsmith_harness::agent::{HookDecision, ToolHook};

    /// Denies `summarize`, and counts the calls it sees.
    struct NoSummaries(Arc<AtomicUsize>);
    #[async_trait]
    impl ToolHook for NoSummaries {
        async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
            self.0.fetch_add(1, Ordering::SeqCst);
            if call.name == "summarize" {
                HookDecision::Deny("no summaries here".into())
            } else {
                HookDecision::Allow
            }
        }
    }

    let erased = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&erased);
    let erase = FnTool::new(
        "erase",
        "Erases everything.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolCallResult::text("erased")) }
        },
    )
    .with_annotations(ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    });
    let child_model = ScriptedModel::new([
        ScriptedTurn::calls([
            ("erase", json!({})),
            ("summarize", json!({})),
            ("lookup", json!({})),
        ]),
        ScriptedTurn::text("child done"),
    ]);
    let config = SubAgentConfig::new(child_model.clone(), "child-model").with_tools(vec![
        Arc::new(erase),
        text_tool("summarize", "a summary"),
        text_tool("lookup", "3 hits"),
    ]);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "clean up"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("The child finished."),
    ]);
    let (hooked, asked) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(Mutex::new(Vec::new())),
    );
    let asked_for = Arc::clone(&asked);
    let parent = AgentSession::builder(parent_model)
        .with_model("parent-model")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .with_hook(NoSummaries(Arc::clone(&hooked)))
        .with_approval(move |call: &ToolCallRequest| {
            asked_for.lock().unwrap().push(call.name.clone());
            false
        })
        .build()
        .unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    let run = parent.run("delegate").await.unwrap();
    assert_eq!(run.tool_calls[1].result.content.to_text(), "child done");

    // The parent's approval refused the child's destructive call, which did not run; its
    // hook denied `summarize` and let `lookup` through.
    assert_eq!(erased.load(Ordering::SeqCst), 0);
    assert_eq!(*asked.lock().unwrap(), ["erase"]);
    // The parent's two calls and the child's three.
    assert_eq!(hooked.load(Ordering::SeqCst), 5);
    let results: Vec<String> = child_model.requests()[1]
        .messages
        .iter()
        .flat_map(|message| match message {
            Message::ToolResults { results } => results.clone(),
            _ => Vec::new(),
        })
        .map(|result| result.result.content.to_text())
        .collect();
    assert!(results[0].contains("did not approve"), "{results:?}");
    assert!(results[1].contains("no summaries here"), "{results:?}");
    assert_eq!(results[2], "3 hits");
}

#[tokio::test]
async fn pausing_the_session_holds_its_children_too() {
    let (gate, started) = (Arc::new(tokio::sync::Notify::new()), Arc::default());
    let tool = gated_tool_telling(Arc::clone(&gate), Arc::default(), Arc::clone(&started));
    let child = ScriptedModel::new([
        ScriptedTurn::call("wait_for_gate", json!({})),
        ScriptedTurn::text("child done"),
    ]);
    let config = SubAgentConfig::new(child.clone(), "child").with_tools(vec![tool]);
    let parent = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "wait"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 10_000}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let pause = toolsmith_harness::agent::PauseHandle::new();
    let session = AgentSession::builder(parent)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .with_pause(pause.clone())
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let session = Arc::new(session);
    let running = tokio::spawn({
        let session = Arc::clone(&session);
        async move { session.run("delegate").await }
    });
    wait_started(&started).await;
    // The session is paused while its child is in a tool call: the child's next model call
    // waits, as the session's would.
    pause.pause();
    gate.notify_one();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        child.requests().len(),
        1,
        "the child asked its model while paused"
    );
    pause.resume();
    let run = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("the run ends once resumed")
        .unwrap()
        .unwrap();
    assert_eq!(run.tool_calls[1].result.content.to_text(), "child done");
    child.assert_complete();
}

/// An `AgentTool` called where no Tokio runtime runs (a caller on another executor) is an
/// error result naming the tool and what it needs, not a panic.
#[test]
fn an_agent_tool_called_without_a_tokio_runtime_says_it_needs_one() {
    let inner = AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("never asked")]))
        .with_model("m")
        .build()
        .unwrap();
    let manager = ToolCallManager::new("outer");
    manager
        .register(Arc::new(AgentTool::new(
            Arc::new(inner),
            "research",
            "Researches.",
        )))
        .unwrap();
    let call = ToolCallRequest::new(
        "1",
        "research",
        ToolArguments::try_from(json!({"input": "Rust's age?"})).unwrap(),
    );
    let error = futures::executor::block_on(manager.execute_one(&call)).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("'research'") && message.contains("needs a Tokio runtime"),
        "{message}"
    );
    assert!(!message.contains("panicked"), "{message}");
}
