//! Sub-agents' tokens in `AgentRun::child_usage`: counted in the run whose call caused them
//! (an `AgentTool` call, an `agent start`, their own sub-agents), in no other run, and
//! whether the sub-agent finished, failed or was cancelled.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_core::{
    Args, CancellationToken, FnTool, ToolArgs, ToolArguments, ToolCallRequest, ToolCallResult,
    ToolImpl, ToolShed, scheme,
};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{AgentSession, AgentTool, AgenticError, SubAgentConfig};
use toolsmith_harness::model::{
    ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn, Usage,
};

/// An answer calling `name` with `arguments`.
fn call(name: &str, arguments: Value) -> ChatResponse {
    let request = ToolCallRequest::new("call-1", name, ToolArguments::try_from(arguments).unwrap());
    ChatResponse::calls(vec![Ok(request)])
}

/// A model that answers each of `turns` requests with `answer(request)`, after `delay`:
/// for runs whose requests come in no set order (concurrent runs, children and
/// grandchildren sharing a model).
fn answering(
    turns: usize,
    delay: Duration,
    answer: impl Fn(&ChatRequest) -> ChatResponse + Send + Sync + 'static,
) -> ScriptedModel {
    let answer = Arc::new(answer);
    ScriptedModel::new((0..turns).map(|_| {
        let answer = Arc::clone(&answer);
        ScriptedTurn::respond(move |request| Ok(answer(request))).with_delay(delay)
    }))
}

/// The text of the last tool result of `request`, when its last message is one.
fn last_result(request: &ChatRequest) -> Option<String> {
    match request.messages.last()? {
        Message::ToolResults { results } => Some(results.last()?.result.content.to_text()),
        _ => None,
    }
}

/// The user's task, the conversation's first message.
fn task(request: &ChatRequest) -> String {
    request.messages[0].text().unwrap_or_default().to_owned()
}

/// A session of `model` with the tools of `shed`, all offered from the start.
fn session(model: ScriptedModel, shed: ToolShed) -> AgentSession {
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(shed)
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    session
}

fn agent_tool(session: AgentSession, name: &str) -> Arc<dyn ToolImpl> {
    Arc::new(AgentTool::new(Arc::new(session), name, "Runs an agent."))
}

fn text_tool(name: &str) -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        name,
        format!("The {name} tool."),
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("ok")) },
    ))
}

#[tokio::test]
async fn an_agent_tools_tokens_and_its_own_agent_tools_count_in_the_calling_run() {
    let checker = session(
        ScriptedModel::new([ScriptedTurn::text("checked").with_usage(Usage::new(100, 50))]),
        ToolShed::new(),
    );
    let researcher = session(
        ScriptedModel::new([
            ScriptedTurn::call("fact_check", json!({"input": "is it so?"}))
                .with_usage(Usage::new(10, 5)),
            ScriptedTurn::text("researched and checked").with_usage(Usage::new(20, 7)),
        ]),
        ToolShed::new().tools(vec![agent_tool(checker, "fact_check")]),
    );
    let top = session(
        ScriptedModel::new([
            ScriptedTurn::call("research", json!({"input": "find out"}))
                .with_usage(Usage::new(1, 1)),
            ScriptedTurn::text("done").with_usage(Usage::new(2, 2)),
        ]),
        ToolShed::new().tools(vec![agent_tool(researcher, "research")]),
    );
    let run = top.run("go").await.unwrap();
    assert_eq!(
        run.tool_calls[0].result.content.to_text(),
        "researched and checked"
    );
    assert_eq!(run.usage, Usage::new(3, 3));
    // The researcher's 30 + 12 and its fact checker's (the top run's grandchild) 100 + 50.
    assert_eq!(run.child_usage, Usage::new(130, 62));
    assert_eq!(run.total_usage(), Usage::new(133, 65));
    // A second run counts its own calls only (here: none).
    let alone = session(
        ScriptedModel::new([ScriptedTurn::text("nothing to do").with_usage(Usage::new(4, 4))]),
        ToolShed::new(),
    );
    let quiet = alone.run("rest").await.unwrap();
    assert_eq!(quiet.child_usage, Usage::default());
}

#[tokio::test]
async fn grandchildren_of_the_agent_group_count_in_the_top_run() {
    // Children and grandchildren share one model: each answers by its task.
    let family = answering(4, Duration::ZERO, |request| match task(request).as_str() {
        "inner" => ChatResponse::text("inner done").with_usage(Usage::new(100, 1)),
        _ => match last_result(request) {
            None => call("agent", json!({"command": "start", "task": "inner"})),
            Some(started) if started.contains("\"id\"") => call(
                "agent",
                json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
            ),
            Some(inner) => ChatResponse::text(format!("outer done: {inner}")),
        }
        .with_usage(Usage::new(10, 1)),
    });
    let config = SubAgentConfig::new(family.clone(), "m").with_max_depth(2);
    let parent = session(
        ScriptedModel::new([
            ScriptedTurn::call("agent", json!({"command": "start", "task": "outer"})),
            ScriptedTurn::call(
                "agent",
                json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
            ),
            ScriptedTurn::text("all done"),
        ]),
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let run = parent.run("delegate").await.unwrap();
    assert_eq!(
        run.tool_calls[1].result.content.to_text(),
        "outer done: inner done"
    );
    // The child's three model calls and the grandchild's one.
    assert_eq!(run.child_usage, Usage::new(130, 4));
    family.assert_complete();
}

#[tokio::test]
async fn two_concurrent_runs_of_one_session_each_count_only_their_own_children() {
    // Each child spends by its task; both are still working while both runs go on.
    let children = answering(2, Duration::from_millis(30), |request| {
        match task(request).as_str() {
            "alpha" => ChatResponse::text("alpha done").with_usage(Usage::new(100, 10)),
            _ => ChatResponse::text("beta done").with_usage(Usage::new(1, 2)),
        }
    });
    let parent_model = answering(6, Duration::ZERO, |request| {
        match last_result(request) {
            None => call("agent", json!({"command": "start", "task": task(request)})),
            Some(started) if started.contains("\"id\"") => {
                let id = serde_json::from_str::<Value>(&started).unwrap()["id"].clone();
                call(
                    "agent",
                    json!({"command": "result", "id": id, "wait_ms": 5000}),
                )
            }
            Some(answer) => ChatResponse::text(answer),
        }
        .with_usage(Usage::new(5, 5))
    });
    let config = SubAgentConfig::new(children.clone(), "m");
    let parent = session(
        parent_model,
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let (alpha, beta) = tokio::join!(parent.run("alpha"), parent.run("beta"));
    let (alpha, beta) = (alpha.unwrap(), beta.unwrap());
    assert_eq!(
        (alpha.text.as_str(), beta.text.as_str()),
        ("alpha done", "beta done")
    );
    assert_eq!(alpha.child_usage, Usage::new(100, 10));
    assert_eq!(beta.child_usage, Usage::new(1, 2));
    assert_eq!(alpha.usage, Usage::new(15, 15));
    children.assert_complete();
}

#[tokio::test]
async fn concurrent_agent_tool_calls_through_one_shared_agent_count_in_their_own_runs() {
    let researcher = session(
        answering(2, Duration::from_millis(30), |request| {
            match task(request).as_str() {
                "alpha" => ChatResponse::text("alpha found").with_usage(Usage::new(100, 10)),
                _ => ChatResponse::text("beta found").with_usage(Usage::new(1, 2)),
            }
        }),
        ToolShed::new(),
    );
    let top = session(
        answering(4, Duration::ZERO, |request| match last_result(request) {
            None => call("research", json!({"input": task(request)})),
            Some(found) => ChatResponse::text(found),
        }),
        ToolShed::new().tools(vec![agent_tool(researcher, "research")]),
    );
    let (alpha, beta) = tokio::join!(top.run("alpha"), top.run("beta"));
    let (alpha, beta) = (alpha.unwrap(), beta.unwrap());
    assert_eq!(
        (alpha.text.as_str(), beta.text.as_str()),
        ("alpha found", "beta found")
    );
    assert_eq!(alpha.child_usage, Usage::new(100, 10));
    assert_eq!(beta.child_usage, Usage::new(1, 2));
}

#[tokio::test]
async fn a_failed_or_cancelled_agent_tool_run_still_counts_what_it_spent() {
    // The model fails after a first answer.
    let failing = session(
        ScriptedModel::new([
            ScriptedTurn::call("lookup", json!({})).with_usage(Usage::new(10, 1)),
            ScriptedTurn::error(ModelError::Other("the model is down".into())),
        ]),
        ToolShed::new().tools(vec![text_tool("lookup")]),
    );
    // Out of turns after one answer.
    let endless = AgentSession::builder(ScriptedModel::new([ScriptedTurn::call(
        "lookup",
        json!({}),
    )
    .with_usage(Usage::new(20, 2))]))
    .with_model("m")
    .with_max_turns(1)
    .with_toolshed(ToolShed::new().tools(vec![text_tool("lookup")]))
    .build()
    .unwrap();
    endless.tool_manager().activate(&["lookup".into()]);
    let top = session(
        ScriptedModel::new([
            ScriptedTurn::calls([
                ("failing", json!({"input": "try"})),
                ("endless", json!({"input": "try"})),
            ]),
            ScriptedTurn::text("both failed"),
        ]),
        ToolShed::new().tools(vec![
            agent_tool(failing, "failing"),
            agent_tool(endless, "endless"),
        ]),
    );
    let run = top.run("go").await.unwrap();
    assert!(
        run.tool_calls.iter().all(|c| c.result.is_error()),
        "{run:?}"
    );
    assert_eq!(run.child_usage, Usage::new(30, 3));

    // Cancelled: the caller's run is cancelled while its agent waits in a tool for ever,
    // and the agent's run is dropped with the call.
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let hang: Arc<dyn ToolImpl> = Arc::new(FnTool::new(
        "hang",
        "Cancels the top run, then waits for ever.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            trigger.cancel();
            async { std::future::pending::<Result<ToolCallResult, _>>().await }
        },
    ));
    let hanging = session(
        ScriptedModel::new([ScriptedTurn::call("hang", json!({})).with_usage(Usage::new(7, 7))]),
        ToolShed::new().tools(vec![hang]),
    );
    let top = session(
        ScriptedModel::new([
            ScriptedTurn::call("hanging", json!({"input": "wait"})).with_usage(Usage::new(1, 1))
        ]),
        ToolShed::new().tools(vec![agent_tool(hanging, "hanging")]),
    );
    let error = top.run_with_cancellation("go", cancel).await.unwrap_err();
    let AgenticError::Cancelled { run } = error else {
        panic!("expected a cancelled run, got {error}");
    };
    assert_eq!(run.usage, Usage::new(1, 1));
    assert_eq!(run.child_usage, Usage::new(7, 7));
}

/// `AgentEvent::TurnFinished`'s `usage` is the run's own model calls so far, as its doc says:
/// the tokens of an `AgentTool` called in that turn are not in it (they are the run's
/// `child_usage`).
#[tokio::test]
async fn turn_finished_counts_the_runs_own_tokens_not_its_sub_agents() {
    use std::sync::Mutex;
    use toolsmith_harness::agent::AgentEvent;

    let child = session(
        ScriptedModel::new([ScriptedTurn::text("found").with_usage(Usage::new(100, 10))]),
        ToolShed::new(),
    );
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("research", json!({"input": "look"})).with_usage(Usage::new(5, 1)),
        ScriptedTurn::text("done").with_usage(Usage::new(7, 2)),
    ]);
    let finished = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&finished);
    let parent = AgentSession::builder(parent_model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(vec![agent_tool(child, "research")]))
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::TurnFinished { turn, usage } = event {
                sink.lock().unwrap().push((*turn, *usage));
            }
        })
        .build()
        .unwrap();
    parent.tool_manager().activate(&["research".into()]);
    let run = parent.run("go").await.unwrap();
    assert_eq!(*finished.lock().unwrap(), [(1, Usage::new(5, 1))]);
    assert_eq!(run.usage, Usage::new(12, 3));
    assert_eq!(run.child_usage, Usage::new(100, 10));
}
