//! Sub-agents' events reach the parent: `AgentEvent::SubAgent`, wrapped once a level, to the
//! parent session's handlers and to the stream of the run whose call started the sub-agent
//! (an `agent start`, an `AgentTool` call), in the sub-agent's order, and to no other run.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_core::{
    Args, FnTool, ToolArgs, ToolArguments, ToolCallRequest, ToolCallResult, ToolImpl, ToolShed,
    scheme,
};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{AgentEvent, AgentSession, AgentTool, RunEvents, SubAgentConfig};
use toolsmith_harness::model::{ChatRequest, ChatResponse, Message, ScriptedModel, ScriptedTurn};

use crate::common::recorded_events::Recorded;

/// What a stream had, then the run's outcome.
async fn read_all<F: Future>(mut events: RunEvents<F>) -> (Vec<AgentEvent>, F::Output) {
    let mut read = Vec::new();
    while let Some(event) = events.next().await {
        read.push(event);
    }
    (read, events.finish().await)
}

/// An event in a few words; a sub-agent's as `<agent>: <its words>`.
fn word(event: &AgentEvent) -> String {
    match event {
        AgentEvent::ModelRequest { .. } => "request".to_owned(),
        AgentEvent::ModelResponse { .. } => "response".to_owned(),
        AgentEvent::ToolCallStarted { call_id, .. } => format!("started {call_id}"),
        AgentEvent::ToolCallFinished { call_id, .. } => format!("finished {call_id}"),
        AgentEvent::TextDelta(text) => format!("delta {text}"),
        AgentEvent::TurnFinished { .. } => "turn".to_owned(),
        AgentEvent::SubAgent { agent, event } => format!("{agent}: {}", word(event)),
        other => format!("{other:?}"),
    }
}

/// The sub-agents' events among `events`, in their order, in words.
fn sub_agent_words(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|event| matches!(event, AgentEvent::SubAgent { .. }))
        .map(word)
        .collect()
}

/// `words` each said of `agent`.
fn of(agent: &str, words: &[&str]) -> Vec<String> {
    words
        .iter()
        .map(|word| format!("{agent}: {word}"))
        .collect()
}

/// A tool that answers "seen".
fn look() -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        "look",
        "Looks.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("seen")) },
    ))
}

/// A turn calling `name` with `arguments` under the call id `id`.
fn call_as(id: &str, name: &str, arguments: Value) -> ScriptedTurn {
    ScriptedTurn::calls(Vec::<(String, Value)>::new()).and_call_with_id(id, name, arguments)
}

/// An answer calling `name` with `arguments` under the call id `id`.
fn answer_calling(id: &str, name: &str, arguments: Value) -> ChatResponse {
    let request = ToolCallRequest::new(id, name, ToolArguments::try_from(arguments).unwrap());
    ChatResponse::calls(vec![Ok(request)])
}

/// The user's task, the conversation's first message.
fn task(request: &ChatRequest) -> String {
    request.messages[0].text().unwrap_or_default().to_owned()
}

/// The text of the last tool result of `request`, when its last message is one.
fn last_result(request: &ChatRequest) -> Option<String> {
    match request.messages.last()? {
        Message::ToolResults { results } => Some(results.last()?.result.content.to_text()),
        _ => None,
    }
}

/// A session of `model` with `shed`'s tools, all offered, and no handler.
fn session(builder: toolsmith_harness::agent::AgentSessionBuilder, shed: ToolShed) -> AgentSession {
    let session = builder.with_model("m").with_toolshed(shed).build().unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    session
}

/// A parent model that starts a child on `task`, collects its result, and answers "done".
fn starts_and_collects() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "find"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("done"),
    ])
}

#[tokio::test]
async fn a_started_childs_events_reach_the_parents_handlers_and_its_runs_stream() {
    let child = ScriptedModel::new([
        call_as("c1", "look", json!({})),
        ScriptedTurn::text("found"),
    ]);
    let config = SubAgentConfig::new(child.clone(), "m").with_tools(vec![look()]);
    let recorded = Recorded::default();
    let parent = recorded.session_over(
        AgentSession::builder(starts_and_collects()),
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let (streamed, ran) = read_all(parent.events_of(parent.run("delegate"))).await;
    let run = ran.unwrap();
    assert_eq!(run.tool_calls[1].result.content.to_text(), "found");
    let expected = of(
        "agent-1",
        &[
            "request",
            "response",
            "started c1",
            "finished c1",
            "turn",
            "request",
            "response",
        ],
    );
    assert_eq!(sub_agent_words(&streamed), expected, "{streamed:?}");
    assert_eq!(sub_agent_words(&recorded.0.lock().unwrap()), expected);
    child.assert_complete();
}

#[tokio::test]
async fn children_built_streaming_send_their_text_deltas_to_the_parent() {
    let child = ScriptedModel::new([ScriptedTurn::text("found")]);
    let config = SubAgentConfig::new(child.clone(), "m").with_streaming(true);
    let parent = session(
        AgentSession::builder(starts_and_collects()),
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let (streamed, ran) = read_all(parent.events_of(parent.run("delegate"))).await;
    assert_eq!(ran.unwrap().tool_calls[1].result.content.to_text(), "found");
    assert_eq!(
        sub_agent_words(&streamed),
        of("agent-1", &["request", "delta found", "response"])
    );
    child.assert_complete();
}

#[tokio::test]
async fn an_agent_tools_events_reach_the_caller_under_the_calls_id_text_deltas_too() {
    let research = session(
        AgentSession::builder(ScriptedModel::new([
            call_as("c1", "look", json!({})),
            ScriptedTurn::text("found"),
        ]))
        .with_streaming(true),
        ToolShed::new().tools(vec![look()]),
    );
    let tool = AgentTool::new(Arc::new(research), "research", "Researches.");
    let recorded = Recorded::default();
    let parent = recorded.session_over(
        AgentSession::builder(ScriptedModel::new([
            call_as("r1", "research", json!({"input": "find"})),
            ScriptedTurn::text("done"),
        ])),
        ToolShed::new().tools(vec![Arc::new(tool) as Arc<dyn ToolImpl>]),
    );
    let (streamed, ran) = read_all(parent.events_of(parent.run("delegate"))).await;
    assert_eq!(ran.unwrap().text, "done");
    // One task: the handlers and the stream heard the same, the child's events between the
    // call's start and its end.
    assert_eq!(streamed, *recorded.0.lock().unwrap());
    let words: Vec<String> = streamed.iter().map(word).collect();
    let call_started = words.iter().position(|w| w == "started r1").unwrap();
    let call_finished = words.iter().position(|w| w == "finished r1").unwrap();
    assert_eq!(
        words[call_started + 1..call_finished],
        of(
            "r1",
            &[
                "request",
                "response",
                "started c1",
                "finished c1",
                "turn",
                "request",
                "delta found",
                "response",
            ]
        ),
        "{words:?}"
    );
}

/// A session whose model calls `agent` as the `AgentTool` `name` (call id `id`), then
/// answers `answer`.
fn calling(agent: AgentSession, (id, name): (&str, &str), answer: &str) -> AgentSession {
    session(
        AgentSession::builder(ScriptedModel::new([
            call_as(id, name, json!({"input": "go on"})),
            ScriptedTurn::text(answer),
        ])),
        ToolShed::new().tools(vec![
            Arc::new(AgentTool::new(Arc::new(agent), name, "An agent.")) as Arc<dyn ToolImpl>,
        ]),
    )
}

#[tokio::test]
async fn a_grandchilds_events_are_wrapped_twice_and_a_stream_alone_hears_them() {
    let checker = session(
        AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("checked")])),
        ToolShed::new(),
    );
    let research = calling(checker, ("f1", "fact_check"), "researched");
    // No handler anywhere: the top run's stream is the only listener.
    let top = calling(research, ("r1", "research"), "done");
    let (streamed, ran) = read_all(top.events_of(top.run("go"))).await;
    assert_eq!(ran.unwrap().text, "done");
    assert_eq!(
        sub_agent_words(&streamed),
        of(
            "r1",
            &[
                "request",
                "response",
                "started f1",
                "f1: request",
                "f1: response",
                "finished f1",
                "turn",
                "request",
                "response",
            ]
        )
    );
    // The grandchild's answer, whole, inside two wrappers.
    let twice = streamed
        .iter()
        .find_map(|event| match event {
            AgentEvent::SubAgent { agent, event } if agent == "r1" => match &**event {
                AgentEvent::SubAgent { agent, event } if agent == "f1" => Some(&**event),
                _ => None,
            },
            _ => None,
        })
        .unwrap();
    assert!(
        matches!(twice, AgentEvent::ModelRequest { turn: 1, .. }),
        "{twice:?}"
    );
}

#[tokio::test]
async fn a_grandchild_of_the_agent_group_reaches_the_top_run_through_its_parent() {
    // Children and grandchildren share one model: each answers by its task.
    let family = ScriptedModel::new((0..4).map(|_| {
        ScriptedTurn::respond(|request| {
            Ok(match task(request).as_str() {
                "inner" => ChatResponse::text("inner done"),
                _ => match last_result(request) {
                    None => {
                        answer_calling("s1", "agent", json!({"command": "start", "task": "inner"}))
                    }
                    Some(started) if started.contains("\"id\"") => answer_calling(
                        "w1",
                        "agent",
                        json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
                    ),
                    Some(inner) => ChatResponse::text(format!("outer done: {inner}")),
                },
            })
        })
    }));
    let config = SubAgentConfig::new(family.clone(), "m").with_max_depth(2);
    let recorded = Recorded::default();
    let parent = recorded.session_over(
        AgentSession::builder(starts_and_collects()),
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let (streamed, ran) = read_all(parent.events_of(parent.run("delegate"))).await;
    assert_eq!(
        ran.unwrap().tool_calls[1].result.content.to_text(),
        "outer done: inner done"
    );
    let expected = of(
        "agent-1",
        &[
            "request",
            "response",
            "started s1",
            "finished s1",
            "turn",
            "request",
            "response",
            "started w1",
            "agent-1: request",
            "agent-1: response",
            "finished w1",
            "turn",
            "request",
            "response",
        ],
    );
    // The grandchild runs on a task of its own, beside its parent's: where its events fall
    // among the child's own is the race's, their order within each is not.
    let words = sub_agent_words(&streamed);
    let grandchilds = |w: &String| w.starts_with("agent-1: agent-1: ");
    let (grandchild, child): (Vec<String>, Vec<String>) =
        words.iter().cloned().partition(grandchilds);
    let (expected_grandchild, expected_child): (Vec<String>, Vec<String>) =
        expected.into_iter().partition(grandchilds);
    assert_eq!(child, expected_child, "{words:?}");
    assert_eq!(grandchild, expected_grandchild, "{words:?}");
    assert_eq!(
        sub_agent_words(&recorded.0.lock().unwrap()).len(),
        words.len()
    );
    family.assert_complete();
}

#[tokio::test]
async fn two_concurrent_runs_of_one_session_each_stream_only_their_own_childs_events() {
    // Each child calls `look` under an id of its task's, then answers; both work at once.
    let children = ScriptedModel::new((0..4).map(|_| {
        ScriptedTurn::respond(|request| {
            let task = task(request);
            Ok(match last_result(request) {
                None => answer_calling(&format!("{task}-look"), "look", json!({})),
                Some(_) => ChatResponse::text(format!("{task} done")),
            })
        })
        .with_delay(Duration::from_millis(20))
    }));
    let parent_model = ScriptedModel::new((0..6).map(|_| {
        ScriptedTurn::respond(|request| {
            Ok(match last_result(request) {
                None => answer_calling(
                    "start",
                    "agent",
                    json!({"command": "start", "task": task(request)}),
                ),
                Some(started) if started.contains("\"id\"") => {
                    let id = serde_json::from_str::<Value>(&started).unwrap()["id"].clone();
                    answer_calling(
                        "wait",
                        "agent",
                        json!({"command": "result", "id": id, "wait_ms": 5000}),
                    )
                }
                Some(answer) => ChatResponse::text(answer),
            })
        })
    }));
    let config = SubAgentConfig::new(children.clone(), "m").with_tools(vec![look()]);
    let recorded = Recorded::default();
    let parent = recorded.session_over(
        AgentSession::builder(parent_model),
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let ((alpha, alpha_ran), (beta, beta_ran)) = tokio::join!(
        read_all(parent.events_of(parent.run("alpha"))),
        read_all(parent.events_of(parent.run("beta"))),
    );
    assert_eq!(alpha_ran.unwrap().text, "alpha done");
    assert_eq!(beta_ran.unwrap().text, "beta done");
    for (task, streamed) in [("alpha", &alpha), ("beta", &beta)] {
        let words = sub_agent_words(streamed);
        // Which run's child is `agent-1` is the race's; its events are all of one child.
        let agent = words[0].split(':').next().unwrap().to_owned();
        let look = format!("{task}-look");
        assert_eq!(
            words,
            of(
                &agent,
                &[
                    "request",
                    "response",
                    &format!("started {look}"),
                    &format!("finished {look}"),
                    "turn",
                    "request",
                    "response",
                ]
            ),
            "{task}: {words:?}"
        );
    }
    // The session's handlers heard both children.
    assert_eq!(sub_agent_words(&recorded.0.lock().unwrap()).len(), 14);
    children.assert_complete();
}

#[tokio::test]
async fn a_child_that_outlives_its_run_reaches_the_handlers_and_not_the_ended_stream() {
    let child = ScriptedModel::new([
        ScriptedTurn::text("late answer").with_delay(Duration::from_millis(200))
    ]);
    let config = SubAgentConfig::new(child.clone(), "m");
    let recorded = Recorded::default();
    let parent = recorded.session_over(
        AgentSession::builder(ScriptedModel::new([
            ScriptedTurn::call("agent", json!({"command": "start", "task": "slow"})),
            ScriptedTurn::text("started it"),
        ])),
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let mut events = parent.events_of(parent.run("delegate"));
    while events.next().await.is_some() {}
    // The run has ended with its answer; the child goes on, its answer still to come.
    let heard_answer = || {
        recorded.0.lock().unwrap().iter().any(|event| {
            matches!(event, AgentEvent::SubAgent { agent, event }
                if agent == "agent-1" && matches!(**event, AgentEvent::ModelResponse { .. }))
        })
    };
    assert!(!heard_answer());
    let waited = tokio::time::timeout(Duration::from_secs(5), async {
        while !heard_answer() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "the handlers never heard the child's answer"
    );
    // The ended run's stream, still held, took none of it.
    assert!(events.next().await.is_none());
    assert_eq!(events.finish().await.unwrap().text, "started it");
    child.assert_complete();
}

/// A typed answer of `{"ok": true}`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Done {
    #[allow(dead_code)]
    ok: bool,
}

/// A typed run's stream lasts to the end of its answer's exchange, which is the run's: what
/// a child it started does meanwhile comes to it, as it would have during the run.
#[tokio::test]
async fn a_typed_runs_stream_hears_its_child_while_its_answer_is_asked_for() {
    // The child answers 100 ms after it starts: after the run's text, before the typed
    // answer (300 ms).
    let child =
        ScriptedModel::new([ScriptedTurn::text("found").with_delay(Duration::from_millis(100))]);
    let config = SubAgentConfig::new(child.clone(), "m");
    let parent = session(
        AgentSession::builder(ScriptedModel::new([
            ScriptedTurn::call("agent", json!({"command": "start", "task": "find"})),
            ScriptedTurn::text("started it"),
            ScriptedTurn::call("final_answer", json!({"ok": true}))
                .with_delay(Duration::from_millis(300)),
        ])),
        ToolShed::new().tools(ToolPreset::agent(config)),
    );
    let (streamed, typed) = read_all(parent.events_of(parent.send_as::<Done>("delegate"))).await;
    typed.unwrap();
    child.assert_complete();
    assert!(
        sub_agent_words(&streamed).contains(&"agent-1: response".to_owned()),
        "{streamed:?}"
    );
}
