//! A run's token budget (`with_token_budget`): checked before each model call against the
//! run's tokens and its sub-agents', ending the run with `AgenticError::TokenBudget` and the
//! run, every call answered; the sub-agents' own budget and context overflow policy
//! (`SubAgentConfig`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolsmith_core::{
    Args, FnTool, ToolArgs, ToolCallResult, ToolConstructor, ToolImpl, ToolShed, scheme,
};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{
    AgentSession, AgentSessionBuilder, AgentTool, AgenticError, Overflow, Shortened, SubAgentConfig,
};
use toolsmith_harness::model::{
    ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn, ToolChoice, Usage,
};

use crate::common::assert_every_call_answered;

fn ping() -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        "ping",
        "Answers pong.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) },
    ))
}

/// A builder over `model` with the tools `tools`, all offered from the start.
fn builder<I>(model: &ScriptedModel, tools: I) -> AgentSessionBuilder
where
    I: IntoIterator,
    I::Item: Into<Box<dyn ToolConstructor>>,
{
    AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(tools))
}

fn build(builder: AgentSessionBuilder) -> AgentSession {
    let session = builder.build().unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    session
}

/// A typed answer of `{"ok": true}`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Done {
    #[allow(dead_code)]
    ok: bool,
}

/// A session with a budget of 100 tokens whose model calls `research` (an `AgentTool` over
/// `researcher`, with `ping`) once, spending 10 tokens, then would answer "never asked";
/// and its model.
fn calling_research(researcher: &ScriptedModel) -> (AgentSession, ScriptedModel) {
    let researcher = build(builder(researcher, vec![ping()]));
    let research: Arc<dyn ToolImpl> = Arc::new(AgentTool::new(
        Arc::new(researcher),
        "research",
        "Researches.",
    ));
    let model = ScriptedModel::new([
        ScriptedTurn::call("research", json!({"input": "find out"})).with_usage(Usage::new(8, 2)),
        ScriptedTurn::text("never asked"),
    ]);
    let session = build(builder(&model, vec![research]).with_token_budget(100));
    (session, model)
}

/// Waits for `session`'s sub-agent `agent-1` to end; the error its `result` gives.
async fn childs_failure(session: &AgentSession) -> String {
    tokio::time::timeout(
        Duration::from_secs(5),
        crate::common::error(
            session.tool_manager(),
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
    )
    .await
    .expect("the child ends")
    .to_string()
}

/// Waits for `session`'s sub-agent `agent-1` to end, and asserts it was stopped by the
/// budget (of 100 tokens) of the run that started it.
async fn child_stopped_by_the_callers_budget(session: &AgentSession) {
    let waited = childs_failure(session).await;
    assert!(
        waited.contains("the budget of 100 tokens of the run that started it is spent"),
        "{waited}"
    );
}

/// A model answering with `ping` calls spending `usage` each, then "done".
fn pinging(usages: &[Usage]) -> ScriptedModel {
    ScriptedModel::new(
        usages
            .iter()
            .map(|usage| ScriptedTurn::call("ping", json!({})).with_usage(*usage))
            .chain([ScriptedTurn::text("done")]),
    )
}

fn too_long() -> ModelError {
    ModelError::ContextTooLong {
        provider: "openai".into(),
        status: 400,
        message: "This model's maximum context length is 128000 tokens".into(),
    }
}

#[tokio::test]
async fn a_budget_reached_exactly_refuses_the_next_call_with_the_run() {
    let model = pinging(&[Usage::new(60, 40)]);
    let session = build(builder(&model, vec![ping()]).with_token_budget(100));
    let error = session.run("go").await.unwrap_err();
    let AgenticError::TokenBudget { limit, spent, run } = &error else {
        panic!("expected the budget's error, got {error:?}");
    };
    assert_eq!((*limit, *spent), (100, 100));
    assert_eq!(run.model_calls, 1);
    assert_eq!(run.usage, Usage::new(60, 40));
    assert_eq!(run.tool_calls.len(), 1);
    // The call the model made ran and is answered; the refused call was never sent.
    assert!(matches!(
        run.transcript.last(),
        Some(Message::ToolResults { .. })
    ));
    assert_every_call_answered(&run.transcript);
    assert_eq!(model.requests().len(), 1);
    assert_eq!(
        error.to_string(),
        "the agent run reached its token budget: 100 tokens spent of 100 before a model call"
    );
}

#[tokio::test]
async fn a_call_started_under_the_budget_is_made_and_may_pass_it() {
    // 99 of 100 before the second call: it is made, and ends at 149; the third is not.
    let model = pinging(&[Usage::new(90, 9), Usage::new(40, 10)]);
    let session = build(builder(&model, vec![ping()]).with_token_budget(100));
    let error = session.run("go").await.unwrap_err();
    let AgenticError::TokenBudget { spent, run, .. } = &error else {
        panic!("expected the budget's error, got {error:?}");
    };
    assert_eq!(*spent, 149);
    assert_eq!(run.model_calls, 2);
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn cached_input_tokens_count_as_input_once() {
    // 80 input tokens, 70 of them cached, and 10 output: 90 of a budget of 91.
    let usage = Usage {
        cached_input_tokens: 70,
        ..Usage::new(80, 10)
    };
    let model = pinging(&[usage]);
    let run = build(builder(&model, vec![ping()]).with_token_budget(91))
        .run("go")
        .await
        .unwrap();
    assert_eq!(run.text, "done");
}

#[tokio::test]
async fn without_a_budget_a_run_spends_what_it_needs() {
    let huge = Usage::new(u64::MAX / 8, u64::MAX / 8);
    let model = pinging(&[huge, huge, huge]);
    let run = build(builder(&model, vec![ping()]))
        .run("go")
        .await
        .unwrap();
    assert_eq!(run.text, "done");
    assert_eq!(run.model_calls, 4);
    model.assert_complete();
}

#[test]
fn a_budget_of_0_is_refused_by_build() {
    let session = AgentSession::builder(ScriptedModel::default())
        .with_model("m")
        .with_token_budget(0)
        .build();
    assert!(
        matches!(&session, Err(AgenticError::Config(reason)) if reason.contains("token budget of 0")),
        "{session:?}"
    );
}

#[tokio::test]
async fn send_keeps_the_conversation_the_budget_ended_and_the_next_send_has_a_whole_budget() {
    let model = ScriptedModel::new([
        ScriptedTurn::calls([("ping", json!({})), ("ping", json!({}))])
            .with_usage(Usage::new(100, 20)),
        ScriptedTurn::respond(|request| {
            // The kept conversation goes on from the answered calls.
            assert_every_call_answered(&request.messages);
            assert_eq!(request.messages.len(), 4);
            Ok(ChatResponse::text("pong, twice").with_usage(Usage::new(110, 5)))
        }),
    ]);
    let session = build(builder(&model, vec![ping()]).with_token_budget(120));
    let error = session.send("ping twice").await.unwrap_err();
    assert!(
        matches!(error, AgenticError::TokenBudget { .. }),
        "{error:?}"
    );
    let kept = session.transcript().await;
    assert_eq!(Some(&kept), error.run().map(|run| &run.transcript));
    assert_every_call_answered(&kept);
    assert_eq!(kept[2].results().len(), 2);
    // This run counts its own tokens only.
    let run = session.send("and?").await.unwrap();
    assert_eq!(run.text, "pong, twice");
    model.assert_complete();
}

#[tokio::test]
async fn an_agent_tools_tokens_count_in_the_callers_budget() {
    let (session, model) = calling_research(&ScriptedModel::new([
        ScriptedTurn::call("ping", json!({})).with_usage(Usage::new(40, 5)),
        ScriptedTurn::text("found").with_usage(Usage::new(45, 5)),
    ]));
    let error = session.run("go").await.unwrap_err();
    let AgenticError::TokenBudget { spent, run, .. } = &error else {
        panic!("expected the budget's error, got {error:?}");
    };
    // 10 of its own and the researcher's 95.
    assert_eq!(*spent, 105);
    assert_eq!(run.child_usage, Usage::new(85, 10));
    assert_eq!(run.tool_calls[0].result.content.to_text(), "found");
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn a_sub_agents_tokens_count_in_the_parents_budget_which_stops_the_sub_agent_too() {
    // The child would spend 200 in two calls; after its first, the parent's run has spent
    // 110 of its 100 (10 or 20 of its own, and the child's 100): the child's second call is
    // not made, and the parent's next is not either. The child begins once the parent waits
    // for its result.
    let child = ScriptedModel::new([
        ScriptedTurn::call("ping", json!({}))
            .with_usage(Usage::new(90, 10))
            .with_delay(Duration::from_millis(50)),
        ScriptedTurn::text("never asked").with_usage(Usage::new(90, 10)),
    ]);
    let config = SubAgentConfig::new(child.clone(), "m").with_tools(vec![ping()]);
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"}))
            .with_usage(Usage::new(5, 5)),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        )
        .with_usage(Usage::new(5, 5)),
        ScriptedTurn::text("never asked"),
    ]);
    let session = build(builder(&model, ToolPreset::agent(config)).with_token_budget(100));
    let error = session.run("delegate").await.unwrap_err();
    let AgenticError::TokenBudget { spent, run, .. } = &error else {
        panic!("expected the budget's error, got {error:?}");
    };
    let result = &run.tool_calls[1].result;
    assert!(result.is_error());
    assert_eq!(
        result.content.to_text(),
        "Tool 'agent' failed: the agent 'agent-1' stopped without an answer: the budget of 100 \
         tokens of the run that started it is spent"
    );
    assert_eq!(*spent, 120);
    assert_eq!(run.child_usage, Usage::new(90, 10));
    assert_eq!(model.remaining(), 1);
    assert_eq!(child.remaining(), 1);
}

/// An `AgentTool`'s run stops at its caller's budget as its caller would, and says so; a
/// background child goes on after the run that started it answered, its tokens counting
/// there, until that run's budget is spent.
#[tokio::test]
async fn a_callers_budget_stops_an_agent_tool_and_a_child_that_outlived_its_run() {
    let (session, model) = calling_research(&pinging(&[
        Usage::new(40, 5),
        Usage::new(40, 5),
        Usage::new(40, 5),
    ]));
    let error = session.run("go").await.unwrap_err();
    let AgenticError::TokenBudget { spent, run, .. } = &error else {
        panic!("expected the budget's error, got {error:?}");
    };
    // 10 of its own and two of the researcher's calls; its third was not made.
    assert_eq!(*spent, 100);
    assert_eq!(
        run.tool_calls[0].result.content.to_text(),
        "the agent 'research' stopped without an answer: the budget of 100 tokens of the run \
         that started it is spent"
    );
    // Nor was the caller's model asked again.
    assert_eq!(model.remaining(), 1);

    // The run answers at once, leaving its child to work: the child's calls count there,
    // and its third finds the budget spent (20 + 50 + 50).
    let child = ScriptedModel::new(
        [
            ScriptedTurn::call("ping", json!({})).with_usage(Usage::new(45, 5)),
            ScriptedTurn::call("ping", json!({})).with_usage(Usage::new(45, 5)),
            ScriptedTurn::text("never asked"),
        ]
        .map(|turn| turn.with_delay(Duration::from_millis(20))),
    );
    let config = SubAgentConfig::new(child.clone(), "m").with_tools(vec![ping()]);
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"}))
            .with_usage(Usage::new(5, 5)),
        ScriptedTurn::text("started").with_usage(Usage::new(5, 5)),
    ]);
    let session = build(builder(&model, ToolPreset::agent(config)).with_token_budget(100));
    assert_eq!(session.run("delegate").await.unwrap().text, "started");
    child_stopped_by_the_callers_budget(&session).await;
    assert_eq!(child.remaining(), 1);
}

#[tokio::test]
async fn a_run_ended_by_its_budget_stops_the_children_it_started() {
    // The child would answer long after the parent's run ended.
    let child = ScriptedModel::new([ScriptedTurn::text("child done")
        .with_usage(Usage::new(500, 0))
        .with_delay(Duration::from_secs(30))]);
    let config = SubAgentConfig::new(child, "m");
    // The child starts its call (60 of 100 spent), then the run spends the rest.
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"}))
            .with_usage(Usage::new(50, 10)),
        ScriptedTurn::call("agent", json!({"command": "check", "id": "agent-1"}))
            .with_usage(Usage::new(30, 10))
            // Time for the child's task to begin its call (microseconds, unloaded).
            .with_delay(Duration::from_millis(300)),
        ScriptedTurn::text("never asked"),
    ]);
    let session = build(builder(&model, ToolPreset::agent(config)).with_token_budget(100));
    let error = session.run("delegate").await.unwrap_err();
    assert!(
        matches!(error, AgenticError::TokenBudget { .. }),
        "{error:?}"
    );
    let waited = childs_failure(&session).await;
    assert!(waited.contains("was stopped"), "{waited}");
}

#[tokio::test]
async fn a_sub_agent_config_budget_ends_the_child() {
    let child = ScriptedModel::new([
        ScriptedTurn::call("ping", json!({})).with_usage(Usage::new(40, 10)),
        ScriptedTurn::text("never asked"),
    ]);
    let config = SubAgentConfig::new(child.clone(), "m")
        .with_tools(vec![ping()])
        .with_token_budget(50);
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("the child ran out"),
    ]);
    let run = build(builder(&model, ToolPreset::agent(config)))
        .run("delegate")
        .await
        .unwrap();
    let result = &run.tool_calls[1].result;
    assert!(result.is_error());
    assert!(
        result.content.to_text().contains(
            "the agent 'agent-1' spent its budget of 50 tokens (50 spent) without an answer; \
             give it a smaller task"
        ),
        "{}",
        result.content.to_text()
    );
    assert_eq!(child.remaining(), 1);
}

#[tokio::test]
async fn at_the_budget_the_final_answer_on_limit_is_asked_without_tools() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("ping", json!({})).with_usage(Usage::new(50, 50)),
        ScriptedTurn::respond(|request| {
            assert_eq!(request.options.tool_choice, ToolChoice::None);
            Ok(ChatResponse::text("pong, in the end").with_usage(Usage::new(120, 5)))
        }),
    ]);
    let session = build(
        builder(&model, vec![ping()])
            .with_token_budget(100)
            .with_final_answer_on_limit(true),
    );
    let run = session.run("go").await.unwrap();
    assert_eq!(run.text, "pong, in the end");
    // Past the budget by the last call's tokens.
    assert_eq!(run.usage.total_tokens(), 225);
    model.assert_complete();
}

#[tokio::test]
async fn the_answer_of_send_as_is_a_model_call_under_the_budget() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("21 degrees").with_usage(Usage::new(60, 40)),
        ScriptedTurn::call("final_answer", json!({"answer": 21})),
    ]);
    let session = build(builder(&model, Vec::<Arc<dyn ToolImpl>>::new()).with_token_budget(100));
    let error = session.send_as::<i64>("How warm?").await.unwrap_err();
    let AgenticError::TokenBudget { spent, run, .. } = &error else {
        panic!("expected the budget's error, got {error:?}");
    };
    assert_eq!((*spent, run.text.as_str()), (100, "21 degrees"));
    assert_eq!(model.remaining(), 1);
}

// On a paused clock, which moves only when no task is ready: the child's 50 ms always end
// before the parent's 300 ms, however loaded the machine.
#[tokio::test(start_paused = true)]
async fn a_call_asked_again_after_shortening_is_checked_against_the_budget() {
    // The child, started in the background, spends while the parent's second call waits to
    // be refused as too long: asking again would start over the budget.
    let child = ScriptedModel::new([ScriptedTurn::text("child done")
        .with_usage(Usage::new(500, 0))
        .with_delay(Duration::from_millis(50))]);
    let config = SubAgentConfig::new(child.clone(), "m");
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"}))
            .with_usage(Usage::new(5, 5)),
        ScriptedTurn::error(too_long()).with_delay(Duration::from_millis(300)),
        ScriptedTurn::text("never asked"),
    ]);
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&asked);
    let session = build(
        builder(&model, ToolPreset::agent(config))
            .with_token_budget(100)
            .with_context_overflow(move |_: &mut Vec<Message>, _: &Overflow<'_>| {
                counted.fetch_add(1, Ordering::SeqCst);
                Shortened::new(0, 1)
            }),
    );
    let error = session.run("delegate").await.unwrap_err();
    let AgenticError::TokenBudget { spent, .. } = &error else {
        panic!("expected the budget's error, got {error:?}");
    };
    assert_eq!(*spent, 510);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(model.remaining(), 1);
    child.assert_complete();
}

/// A policy that counts how often it is asked, and claims to have emptied a result.
fn counting(
    asked: &Arc<AtomicUsize>,
) -> impl Fn(&mut Vec<Message>, &Overflow<'_>) -> Shortened + use<> {
    let asked = Arc::clone(asked);
    move |_: &mut Vec<Message>, _: &Overflow<'_>| {
        asked.fetch_add(1, Ordering::SeqCst);
        Shortened::new(0, 1)
    }
}

/// A parent starting one child whose first request is too long, and collecting its result;
/// the parent's policy and the children's, each when given. The child's result.
async fn child_result_with_policies(
    parent: Option<&Arc<AtomicUsize>>,
    child: Option<&Arc<AtomicUsize>>,
) -> ToolCallResult {
    let child_model = ScriptedModel::new([
        ScriptedTurn::error(too_long()),
        ScriptedTurn::text("child done"),
    ]);
    let mut config = SubAgentConfig::new(child_model, "m");
    if let Some(asked) = child {
        config = config.with_context_overflow(counting(asked));
    }
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("done"),
    ]);
    let mut builder = builder(&model, ToolPreset::agent(config));
    if let Some(asked) = parent {
        builder = builder.with_context_overflow(counting(asked));
    }
    let run = build(builder).run("delegate").await.unwrap();
    run.tool_calls[1].result.clone()
}

#[tokio::test]
async fn children_inherit_the_sessions_context_overflow_policy_unless_their_config_has_one() {
    // Inherited.
    let parent = Arc::new(AtomicUsize::new(0));
    let result = child_result_with_policies(Some(&parent), None).await;
    assert_eq!(result.content.to_text(), "child done");
    assert_eq!(parent.load(Ordering::SeqCst), 1);

    // The config's own, in the parent's place.
    let (parent, child) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let result = child_result_with_policies(Some(&parent), Some(&child)).await;
    assert_eq!(result.content.to_text(), "child done");
    assert_eq!(
        (parent.load(Ordering::SeqCst), child.load(Ordering::SeqCst)),
        (0, 1)
    );

    // The config's own, without a parent's.
    let child = Arc::new(AtomicUsize::new(0));
    let result = child_result_with_policies(None, Some(&child)).await;
    assert_eq!(result.content.to_text(), "child done");
    assert_eq!(child.load(Ordering::SeqCst), 1);

    // Neither: the child fails on the model's error.
    let result = child_result_with_policies(None, None).await;
    assert!(result.is_error());
    assert!(
        result.content.to_text().contains("maximum context length"),
        "{}",
        result.content.to_text()
    );
}

#[test]
fn the_config_shows_its_budget_and_policy() {
    let config = SubAgentConfig::new(ScriptedModel::default(), "m")
        .with_token_budget(0)
        .with_context_overflow(|_: &mut Vec<Message>, _: &Overflow<'_>| Shortened::NOTHING);
    let shown = format!("{config:?}");
    // A budget of 0 is raised to 1, as the config's other limits are.
    assert!(shown.contains("token_budget: Some(1)"), "{shown}");
    assert!(shown.contains("context_overflow: true"), "{shown}");
}

/// A typed answer's exchange is part of the run: a child left working after the run
/// answered finds the budget spent once the exchange's call has spent it (20 + 80).
#[tokio::test]
async fn a_typed_answers_exchange_counts_in_the_budget_its_runs_children_stop_at() {
    // The child's calls come after the exchange has answered (its task runs once the
    // parent's waits; each is slow): they find the budget spent.
    let child = ScriptedModel::new(
        [
            ScriptedTurn::call("ping", json!({})).with_usage(Usage::new(1, 1)),
            ScriptedTurn::text("never asked"),
        ]
        .map(|turn| turn.with_delay(Duration::from_millis(50))),
    );
    let config = SubAgentConfig::new(child.clone(), "m").with_tools(vec![ping()]);
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"}))
            .with_usage(Usage::new(5, 5)),
        ScriptedTurn::text("started").with_usage(Usage::new(5, 5)),
        ScriptedTurn::call("final_answer", json!({"ok": true})).with_usage(Usage::new(70, 10)),
    ]);
    let session = build(builder(&model, ToolPreset::agent(config)).with_token_budget(100));
    let typed = session.send_as::<Done>("delegate").await.unwrap();
    assert_eq!(typed.run.usage.total_tokens(), 100);
    child_stopped_by_the_callers_budget(&session).await;
    // Spent unbounded, the child answered "never asked".
    assert!(child.remaining() >= 1);
}

/// What a run's children spend while its typed answer's exchange waits for the model counts
/// in the typed run's `child_usage`, as what they spent during the run does.
#[tokio::test]
async fn a_typed_runs_child_usage_counts_what_its_children_spent_during_the_exchange() {
    // The child's one call (2 tokens) comes 100 ms after its start: after the run has
    // answered "started", before the exchange's answer (300 ms).
    let child = ScriptedModel::new([
        ScriptedTurn::call("ping", json!({}))
            .with_usage(Usage::new(1, 1))
            .with_delay(Duration::from_millis(100)),
        ScriptedTurn::text("done"),
    ]);
    let config = SubAgentConfig::new(child.clone(), "m").with_tools(vec![ping()]);
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"})),
        ScriptedTurn::text("started"),
        ScriptedTurn::call("final_answer", json!({"ok": true}))
            .with_delay(Duration::from_millis(300)),
    ]);
    let session = build(builder(&model, ToolPreset::agent(config)));
    let typed = session.send_as::<Done>("delegate").await.unwrap();
    assert_eq!(typed.run.child_usage.total_tokens(), 2);
}

/// The count a sub-agent compares with its caller's budget stops at the largest count
/// rather than wrapping past it: a model that reports an absurd usage (a broken or hostile
/// provider) must not give the run's children a budget afresh.
#[tokio::test]
async fn a_callers_budget_spent_by_an_absurd_usage_stays_spent_for_its_children() {
    // The child's first call starts while the parent's second waits (10 of 100 spent); its
    // second comes after the parent's run answered, having spent more than any count holds.
    let child = ScriptedModel::new([
        ScriptedTurn::call("ping", json!({}))
            .with_usage(Usage::new(1, 1))
            .with_delay(Duration::from_millis(200)),
        ScriptedTurn::text("never asked"),
    ]);
    let config = SubAgentConfig::new(child.clone(), "m").with_tools(vec![ping()]);
    let model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "work"}))
            .with_usage(Usage::new(5, 5)),
        ScriptedTurn::call("ping", json!({}))
            .with_usage(Usage::new(u64::MAX - 20, 0))
            .with_delay(Duration::from_millis(50)),
        // Asked without tools at the budget; its 30 tokens would wrap a count that adds
        // without bound round to 19.
        ScriptedTurn::text("started").with_usage(Usage::new(30, 0)),
    ]);
    let session = build(
        builder(
            &model,
            ToolPreset::agent(config).into_iter().chain([ping().into()]),
        )
        .with_token_budget(100)
        .with_final_answer_on_limit(true),
    );
    assert_eq!(session.run("delegate").await.unwrap().text, "started");
    child_stopped_by_the_callers_budget(&session).await;
    assert_eq!(child.remaining(), 1);
}
