//! One session shared by many callers at once (`Arc<AgentSession>`), and torn down mid-flight:
//! sends that take turns on the kept conversation, runs beside them, a send stopped or given
//! up on while it waits, children whose runtime shut down, starts past `max_children` at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolsmith_core::{CancellationToken, ToolCallManager, ToolCallRequest, ToolError, ToolShed};
use toolsmith_harness::agent::{AgentCommands, AgentSession, AgenticError, SubAgentConfig};
use toolsmith_harness::model::{ChatModel, ChatRequest, ChatResponse, Message, ModelError};

/// A model that says on `asked` that a request came, then answers it only once `open` is
/// notified: "re: " and the request's last user text.
#[derive(Clone, Default)]
struct Gated {
    asked: Arc<Notify>,
    open: Arc<Notify>,
    calls: Arc<AtomicUsize>,
}

#[async_trait]
impl ChatModel for Gated {
    fn name(&self) -> &str {
        "gated"
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.asked.notify_one();
        self.open.notified().await;
        let question = request
            .messages
            .iter()
            .rev()
            .find(|message| matches!(message, Message::User { .. }))
            .and_then(Message::text)
            .unwrap_or_default();
        Ok(ChatResponse::text(format!("re: {question}")))
    }
}

impl Gated {
    /// Waits (five seconds at most) until the model has been asked.
    async fn wait_asked(&self) {
        tokio::time::timeout(Duration::from_secs(5), self.asked.notified())
            .await
            .expect("the model was never asked");
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
    let model = Gated::default();
    let session = session_of(&model);
    let first = tokio::spawn({
        let session = Arc::clone(&session);
        async move { session.send("first").await }
    });
    model.wait_asked().await;
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
    model.open.notify_one();
    let first = first.await.unwrap().unwrap();
    assert_eq!(first.text, "re: first");
    assert_eq!(
        model.calls.load(Ordering::SeqCst),
        1,
        "the queued send asked nothing"
    );
    assert_eq!(texts(&session.transcript().await), ["first", "re: first"]);
}

/// A child's model, which never answers: a child runs until it is stopped.
struct NeverAnswers;

#[async_trait]
impl ChatModel for NeverAnswers {
    fn name(&self) -> &str {
        "never"
    }

    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        std::future::pending().await
    }
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
