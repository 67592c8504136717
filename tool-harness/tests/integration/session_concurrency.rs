//! One session shared by many callers at once (`Arc<AgentSession>`), and torn down mid-flight:
//! sends that take turns on the kept conversation, runs beside them, a send stopped or given
//! up on while it waits, children whose runtime shut down, starts past `max_children` at once,
//! a pause made while the model answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt as _;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolsmith_core::{
    Args, CancellationToken, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
    ToolCallResult, ToolError, ToolShed, scheme,
};
use toolsmith_harness::agent::{
    AgentCommands, AgentSession, AgenticError, PauseHandle, SubAgentConfig,
};
use toolsmith_harness::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn,
};

use crate::common::stalled::{NeverAnswers, waits_for_ever};

/// A model that says on `asked` which question it was asked (a request's last user text),
/// then answers "re: " and the question once the test lets that question through.
#[derive(Clone)]
struct Gated {
    asked: tokio::sync::mpsc::UnboundedSender<String>,
    let_through: Arc<tokio::sync::watch::Sender<Vec<String>>>,
    calls: Arc<AtomicUsize>,
}

/// The test's side of a [`Gated`] model.
struct Gate {
    asked: tokio::sync::mpsc::UnboundedReceiver<String>,
    let_through: Arc<tokio::sync::watch::Sender<Vec<String>>>,
    calls: Arc<AtomicUsize>,
}

fn gated() -> (Gated, Gate) {
    let (sender, asked) = tokio::sync::mpsc::unbounded_channel();
    let let_through = Arc::new(tokio::sync::watch::Sender::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let model = Gated {
        asked: sender,
        let_through: Arc::clone(&let_through),
        calls: Arc::clone(&calls),
    };
    (
        model,
        Gate {
            asked,
            let_through,
            calls,
        },
    )
}

#[async_trait]
impl ChatModel for Gated {
    fn name(&self) -> &str {
        "gated"
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let question = request
            .messages
            .iter()
            .rev()
            .find(|message| matches!(message, Message::User { .. }))
            .and_then(Message::text)
            .unwrap_or_default()
            .to_owned();
        let mut through = self.let_through.subscribe();
        let _ = self.asked.send(question.clone());
        let _ = through
            .wait_for(|through| through.contains(&question))
            .await;
        Ok(ChatResponse::text(format!("re: {question}")))
    }
}

impl Gate {
    /// The next question the model is asked (five seconds at most).
    async fn asked(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(5), self.asked.recv())
            .await
            .expect("the model was never asked")
            .expect("the model is alive")
    }

    /// Lets the model answer `question`.
    fn answer(&self, question: &str) {
        self.let_through
            .send_modify(|through| through.push(question.to_owned()));
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

/// The text of each of `messages`.
fn texts(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .map(|message| message.text().unwrap_or_default())
        .collect()
}

fn session_of(model: &Gated) -> Arc<AgentSession> {
    Arc::new(
        AgentSession::builder(model.clone())
            .with_model("gated")
            .with_toolshed(ToolShed::new())
            .build()
            .expect("the session builds"),
    )
}

/// A `send_with_cancellation` queued behind a `send` under way ends as soon as its token is
/// cancelled: a chat's "stop" button works on a message still waiting its turn. The kept
/// conversation is the other send's alone, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_waiting_its_turn_ends_when_its_token_is_cancelled() {
    let (model, mut gate) = gated();
    let session = session_of(&model);
    let first = tokio::spawn({
        let session = Arc::clone(&session);
        async move { session.send("first").await }
    });
    assert_eq!(gate.asked().await, "first");
    let stop = CancellationToken::new();
    let queued = tokio::spawn({
        let (session, stop) = (Arc::clone(&session), stop.clone());
        async move { session.send_with_cancellation("queued", stop).await }
    });
    // Give the queued send time to reach the lock (it cannot get past it).
    tokio::time::sleep(Duration::from_millis(20)).await;
    stop.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(1), queued)
        .await
        .expect("the queued send ended when its token was cancelled")
        .unwrap();
    match ended {
        Err(AgenticError::Cancelled { run }) => {
            assert_eq!(run.model_calls, 0);
            assert_eq!(run.transcript, [Message::user("queued")]);
        }
        other => panic!("expected a cancelled send, got {other:?}"),
    }
    gate.answer("first");
    let first = first.await.unwrap().unwrap();
    assert_eq!(first.text, "re: first");
    assert_eq!(gate.calls(), 1, "the queued send asked nothing");
    assert_eq!(texts(&session.transcript().await), ["first", "re: first"]);
}

/// Calls `agent` with `arguments` on `manager`, as the model would.
async fn agent(manager: &ToolCallManager, arguments: Value) -> Result<String, ToolError> {
    let request = ToolCallRequest::new("c", "agent", arguments.try_into().expect("an object"));
    manager
        .execute_one(&request)
        .await
        .map(|result| result.content.to_text())
}

fn manager_with(commands: AgentCommands) -> ToolCallManager {
    let manager = ToolCallManager::new("parent");
    manager.register(Arc::new(commands)).unwrap();
    manager
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
}

/// A child whose task went with its Tokio runtime (a sync caller that makes a runtime per
/// call, a test's runtime) is not left "running" for ever: it ends failed, saying why, and
/// frees its place for the next `start`, on the next runtime.
#[test]
fn a_child_whose_runtime_shut_down_ends_failed_and_frees_its_place() {
    let config = SubAgentConfig::new(NeverAnswers, "m").with_max_children(1);
    let manager = manager_with(AgentCommands::new(config));
    let first = runtime();
    let started = first
        .block_on(agent(&manager, json!({"command": "start", "task": "wait"})))
        .unwrap();
    assert!(started.contains("agent-1"), "{started}");
    drop(first);

    let second = runtime();
    second.block_on(async {
        let report: Value = serde_json::from_str(
            &agent(&manager, json!({"command": "check", "id": "agent-1"}))
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(report["status"], "failed", "{report}");
        let err = agent(&manager, json!({"command": "result", "id": "agent-1"}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("runtime"), "{err}");
        let again = agent(&manager, json!({"command": "start", "task": "wait again"}))
            .await
            .expect("the ended child's place is free");
        assert!(again.contains("agent-2"), "{again}");
    });
}

/// Two sends at once take turns: the second continues the conversation the first left, and
/// each caller's run holds the exchanges in the order they were kept. A `run` made meanwhile
/// neither waits for them nor joins their conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sends_at_once_take_turns_and_a_run_beside_them_does_not_wait() {
    let (model, mut gate) = gated();
    let session = session_of(&model);
    let first = tokio::spawn({
        let session = Arc::clone(&session);
        async move { session.send("one").await }
    });
    assert_eq!(gate.asked().await, "one");
    let second = tokio::spawn({
        let session = Arc::clone(&session);
        async move { session.send("two").await }
    });
    // The first send holds the conversation: a run goes on beside it, and ends first.
    let beside = async {
        let (beside, ()) = tokio::join!(session.run("aside"), async {
            assert_eq!(gate.asked().await, "aside");
            gate.answer("aside");
        });
        beside
    };
    let beside = tokio::time::timeout(Duration::from_secs(5), beside)
        .await
        .expect("the run did not wait for the sends")
        .unwrap();
    assert_eq!(texts(&beside.transcript), ["aside", "re: aside"]);
    assert!(!first.is_finished() && !second.is_finished());
    gate.answer("one");
    let first = first.await.unwrap().unwrap();
    assert_eq!(texts(&first.transcript), ["one", "re: one"]);
    assert_eq!(gate.asked().await, "two");
    gate.answer("two");
    let second = second.await.unwrap().unwrap();
    assert_eq!(
        texts(&second.transcript),
        ["one", "re: one", "two", "re: two"]
    );
    assert_eq!(
        texts(&session.transcript().await),
        texts(&second.transcript)
    );
    assert_eq!(gate.calls(), 3);
}

/// A send given up on while its tool runs (its caller's request aborted) drops that tool at
/// once, holds nothing after it (the next caller gets the conversation at once, as it was),
/// and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_given_up_on_drops_its_tool_and_frees_the_session_at_once() {
    let (started, dropped) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
    let model = ScriptedModel::new([
        ScriptedTurn::call("wait", json!({})),
        ScriptedTurn::text("Back."),
    ]);
    let session = Arc::new(
        AgentSession::builder(model.clone())
            .with_model("m")
            .with_toolshed(
                ToolShed::new().tool(waits_for_ever(Arc::clone(&started), Arc::clone(&dropped))),
            )
            .build()
            .unwrap(),
    );
    session.tool_manager().activate(&["wait".to_owned()]);
    let send = tokio::spawn({
        let session = Arc::clone(&session);
        async move { session.send("wait for me").await }
    });
    tokio::time::timeout(Duration::from_secs(5), started.notified())
        .await
        .expect("the tool started");
    send.abort();
    assert!(send.await.unwrap_err().is_cancelled());
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "the tool was dropped");
    let kept = session
        .transcript()
        .now_or_never()
        .expect("nothing holds the conversation");
    assert!(kept.is_empty(), "{kept:?}");
    let run = session.send("Still there?").await.unwrap();
    assert_eq!(run.text, "Back.");
    assert_eq!(texts(&run.transcript), ["Still there?", "Back."]);
}

/// Many `start`s at once, from many tasks, start exactly `max_children` children: the count
/// and the insertion are one step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_starts_at_once_start_exactly_max_children() {
    let config = SubAgentConfig::new(NeverAnswers, "m").with_max_children(3);
    let manager = Arc::new(manager_with(AgentCommands::new(config)));
    let barrier = Arc::new(tokio::sync::Barrier::new(12));
    let starts: Vec<_> = (0..12)
        .map(|n| {
            let (manager, barrier) = (Arc::clone(&manager), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                agent(
                    &manager,
                    json!({"command": "start", "task": format!("task {n}")}),
                )
                .await
            })
        })
        .collect();
    let mut started = Vec::new();
    for start in starts {
        match start.await.unwrap() {
            Ok(text) => started.push(text),
            Err(refused) => assert!(
                refused
                    .to_string()
                    .contains("3 sub-agents are already running"),
                "{refused}"
            ),
        }
    }
    assert_eq!(started.len(), 3, "{started:?}");
}

/// A parent run whose `result` waits long on a child that never answers (a child of an
/// earlier run, which this run's end does not stop) ends at once when cancelled; the child
/// goes on, as documented, until stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_waiting_long_ends_when_the_parent_run_is_cancelled() {
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "t"})),
        ScriptedTurn::text("started"),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 600_000}),
        ),
    ]);
    let parent = AgentSession::builder(parent_model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(toolsmith_harness::ToolPreset::agent(
            SubAgentConfig::new(NeverAnswers, "m"),
        )))
        .build()
        .unwrap();
    parent.tool_manager().activate(&["agent".into()]);
    parent.run("start one").await.unwrap();
    let stop = CancellationToken::new();
    let waited = async {
        tokio::join!(
            parent.run_with_cancellation("wait for it", stop.clone()),
            async {
                // Cancelled once the result's wait is under way.
                tokio::time::sleep(Duration::from_millis(20)).await;
                stop.cancel();
            }
        )
    };
    let (ended, ()) = tokio::time::timeout(Duration::from_secs(2), waited)
        .await
        .expect("the run ended when cancelled");
    let Err(AgenticError::Cancelled { run }) = ended else {
        panic!("expected a cancelled run, got {ended:?}");
    };
    assert_eq!(run.tool_calls.len(), 1);
    assert!(run.tool_calls[0].result.is_error());
    let check = agent(
        parent.tool_manager(),
        json!({"command": "check", "id": "agent-1"}),
    )
    .await
    .unwrap();
    assert!(check.contains("\"running\""), "{check}");
}

/// A pause made while the run waits on the model holds the run before its next model call
/// (the answer's tool still runs); resuming twice is resuming once; a cancellation ends a
/// paused run at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_during_a_model_call_holds_the_next_and_a_cancellation_ends_it() {
    let pause = PauseHandle::new();
    let pressed = pause.clone();
    let model = ScriptedModel::new([
        ScriptedTurn::respond(move |_| {
            // Paused while the model is answering.
            pressed.pause();
            let call = ToolCallRequest::new("c1", "wait", ToolArguments::new());
            Ok(ChatResponse::calls(vec![Ok(call)]))
        }),
        ScriptedTurn::text("Resumed."),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_pause(pause.clone())
        .with_toolshed(ToolShed::new().tool(counting("wait", &ran)))
        .build()
        .unwrap();
    session.tool_manager().activate(&["wait".to_owned()]);
    let run = session.run("go");
    tokio::pin!(run);
    // The run goes as far as the pause lets it.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), &mut run)
            .await
            .is_err()
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1, "the answer's tool ran");
    assert_eq!(model.requests().len(), 1, "no model call while paused");
    pause.resume();
    pause.resume();
    let run = tokio::time::timeout(Duration::from_secs(2), run)
        .await
        .expect("the run went on when resumed")
        .unwrap();
    assert_eq!(run.text, "Resumed.");

    pause.pause();
    let stop = CancellationToken::new();
    let (ended, ()) = tokio::join!(
        session.run_with_cancellation("again", stop.clone()),
        async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            stop.cancel();
        }
    );
    assert!(
        matches!(ended, Err(AgenticError::Cancelled { .. })),
        "{ended:?}"
    );
    assert_eq!(model.requests().len(), 2, "nothing asked while paused");
}

/// A tool `name` that counts its runs in `ran`.
fn counting(name: &str, ran: &Arc<AtomicUsize>) -> FnTool {
    let ran = Arc::clone(ran);
    FnTool::new(
        name,
        "Counts its runs.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            ran.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolCallResult::text("counted")) }
        },
    )
}
