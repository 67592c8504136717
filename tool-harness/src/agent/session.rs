//! [`AgentSession`]: a model, a session's tools and the loop between them.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use toolsmith_core::{
    BatchOptions, CancellationToken, ContextSearch, MAX_JSON_DEPTH, MemoryAccess, SessionParts,
    ToolCallManager, free_value, nests_within,
};
use tracing::Instrument as _;

use super::builder::AgentSessionBuilder;
use super::children::SessionSubAgents;
use super::compaction::Compaction;
use super::context_overflow::{
    ContextEstimate, ContextOverflow, MAX_OVERFLOW_ATTEMPTS, Overflow, OverflowCause, Shortened,
};
use super::error::CaughtPanic;
use super::events::{AgentEvent, AgentEventHandler};
use super::hooks::{ToolApproval, ToolHook};
use super::images_over_limits::remove_images_over_limits;
use super::ledger::{LeftRun, MAX_NESTED_RUNS, RunLedger, RunOrigin};
use super::pause::PauseHandle;
use super::token_estimate::TokenEstimate;
use super::turn::{self, CallsEnded, TurnCalls};
use super::unreadable_images::{remove_image, remove_images};
use super::{AgentRun, AgenticError, UserInput};
use crate::model::{
    ChatModel, ChatOptions, ChatRequest, ChatResponse, DebugName, Message, ModelError, StopReason,
    StreamDelta, ToolChoice,
};

/// How many model calls a run may make unless the builder says otherwise.
pub const DEFAULT_MAX_TURNS: usize = 25;

/// An agent: a model, the session's tools (built from a [`ToolShed`](toolsmith_core::ToolShed)) and the loop that runs
/// the model's tool calls until it answers.
///
/// Each request declares what the model may call ([`ToolCallManager::offered_tools`]: `shed`
/// and the tools it has returned, or every tool and no `shed` for a session built
/// [`with_every_tool_declared(true)`](AgentSessionBuilder::with_every_tool_declared)); the
/// model's calls are checked against that offer, run concurrently where their annotations
/// allow (destructive tools one at a time), retried as configured, and their results go back
/// under their call ids. Whatever the model gets
/// wrong — invalid arguments, an unknown or inactive tool, a tool's error, a timeout — goes
/// back to it as an error result it can act on, and the run goes on.
///
/// ```
/// use serde_json::json;
/// use toolsmith::{ToolShed, tool_fn};
/// use toolsmith::harness::agent::AgentSession;
/// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
///
/// /// Add two integers.
/// #[tool_fn]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let model = ScriptedModel::new([
///     ScriptedTurn::call("shed", json!({"description": "add numbers"})),
///     ScriptedTurn::call("add", json!({"a": 2, "b": 3})),
///     ScriptedTurn::text("2 + 3 = 5"),
/// ]);
/// let session = AgentSession::builder(model.clone())
///     .with_model("scripted")
///     .with_toolshed(ToolShed::new().tool(Add))
///     .build()
///     .unwrap();
/// let run = session.run("What is 2 + 3?").await.unwrap();
/// assert_eq!(run.text, "2 + 3 = 5");
/// assert_eq!(run.model_calls, 3);
/// assert_eq!(run.tool_calls[1].result.content.to_text(), "5");
/// // The first request declared only `shed`; the second also the tool it found.
/// assert_eq!(model.requests()[0].tool_names(), ["shed"]);
/// assert_eq!(model.requests()[1].tool_names(), ["shed", "add"]);
/// model.assert_complete();
/// # }
/// ```
pub struct AgentSession {
    pub(super) model: Arc<dyn ChatModel>,
    pub(super) model_name: String,
    pub(super) system_prompt: Option<String>,
    pub(super) manager: Arc<ToolCallManager>,
    pub(super) parts: SessionParts,
    pub(super) max_turns: usize,
    pub(super) token_budget: Option<u64>,
    pub(super) final_answer_on_limit: bool,
    pub(super) streaming: bool,
    pub(super) options: ChatOptions,
    pub(super) hooks: Vec<Arc<dyn ToolHook>>,
    pub(super) approval: Option<Arc<dyn ToolApproval>>,
    pub(super) events: Arc<[Arc<dyn AgentEventHandler>]>,
    pub(super) batch_deadline: Option<Duration>,
    pub(super) cancellation: CancellationToken,
    pub(super) conversation: tokio::sync::Mutex<Kept>,
    pub(super) pause: Option<PauseHandle>,
    pub(super) context_overflow: Option<Arc<dyn ContextOverflow>>,
    pub(super) context_window: Option<u64>,
    pub(super) compaction: Option<Arc<Compaction>>,
    pub(super) unreadable_images_removed: bool,
}

/// The conversation kept by [`AgentSession::send`], and the estimate of its last request:
/// the next `send` continues it.
#[derive(Default)]
pub(super) struct Kept {
    pub(super) messages: Vec<Message>,
    pub(super) estimate: TokenEstimate,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("model", &DebugName(self.model.as_ref()))
            .field("model_name", &self.model_name)
            .field("session_id", &self.parts.session_id)
            .field("tools", &self.manager.len())
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

impl AgentSession {
    /// A builder for a session that talks to `model`.
    pub fn builder(model: impl ChatModel + 'static) -> AgentSessionBuilder {
        AgentSessionBuilder::new(Arc::new(model))
    }

    /// The session's tools.
    ///
    /// The model is offered `shed` and the tools it has found. To declare tools from the
    /// first request, without a search, activate them here once the session is built:
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{ToolShed, tool_fn};
    /// use toolsmith::harness::agent::AgentSession;
    /// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
    ///
    /// /// Add two integers.
    /// #[tool_fn]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::call("add", json!({"a": 2, "b": 3})),
    ///     ScriptedTurn::text("5"),
    /// ]);
    /// let session = AgentSession::builder(model.clone())
    ///     .with_model("scripted")
    ///     .with_toolshed(ToolShed::new().tool(Add))
    ///     .build()
    ///     .unwrap();
    /// let unknown = session.tool_manager().activate(&["add".to_owned(), "sub".to_owned()]);
    /// assert_eq!(unknown, ["sub"]);
    /// let run = session.run("2 + 3?").await.unwrap();
    /// assert_eq!(run.tool_calls[0].result.content.to_text(), "5");
    /// assert_eq!(model.requests()[0].tool_names(), ["shed", "add"]);
    /// # }
    /// ```
    pub fn tool_manager(&self) -> &Arc<ToolCallManager> {
        &self.manager
    }

    /// The session's working memory.
    pub fn memory_hierarchy(&self) -> &Arc<dyn MemoryAccess> {
        &self.parts.memory
    }

    /// Recall over the session's stores.
    pub fn context(&self) -> &Arc<dyn ContextSearch> {
        &self.parts.context
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.parts.session_id
    }

    /// The session's token: cancelling it cancels every run of the session, now and later.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Stops every sub-agent of the session's `agent` group (built with it by
    /// [`ToolPreset::agent`](crate::ToolPreset::agent)) still running or paused, and theirs;
    /// gives how many of the session's own children were. Each ends stopped at its next
    /// await, its transcript kept (`agent result` says it was stopped); the session and its
    /// later runs go on. For the children no run will collect: a run that ends with an
    /// answer, its model's error or its turns spent leaves them working, for a `send` that
    /// continues the conversation; one cancelled, stopped, ended by its budget or dropped
    /// stops its own already.
    pub fn stop_sub_agents(&self) -> usize {
        self.parts
            .state
            .get::<SessionSubAgents>()
            .map_or(0, |groups| groups.stop_all())
    }

    /// The conversation kept by [`send`](Self::send). Read under the lock a `send` holds
    /// while it runs: it waits for a `send` under way, and gives the conversation as that
    /// send left it (a run's messages as they come are in its [`AgentEvent`]s).
    pub async fn transcript(&self) -> Vec<Message> {
        self.conversation.lock().await.messages.clone()
    }

    /// Runs a new conversation that starts with `text` (the kept conversation of
    /// [`send`](Self::send) is neither used nor changed), until the model answers without
    /// calls.
    ///
    /// Run inside a tool call of another run (an [`AgentTool`](super::AgentTool)'s, or any
    /// tool's), its tokens count in that run's [`child_usage`](AgentRun::child_usage); so
    /// for [`run_with_cancellation`](Self::run_with_cancellation) and [`send`](Self::send).
    ///
    /// Text alone; the forms that take images with it (a [`UserInput`]) are
    /// [`run_input`](Self::run_input), [`send_input`](Self::send_input), their
    /// `_with_cancellation` forms, and the typed [`run_input_as`](Self::run_input_as) and
    /// [`send_input_as`](Self::send_input_as).
    pub async fn run(&self, text: impl Into<String>) -> Result<AgentRun, AgenticError> {
        self.run_input(UserInput::new(text)).await
    }

    /// [`run`](Self::run) of text with images (a [`UserInput`]; text alone converts into
    /// one).
    ///
    /// ```
    /// use toolsmith::Image;
    /// use toolsmith::harness::agent::{AgentSession, UserInput};
    /// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let session = AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("A chart.")]))
    ///     .with_model("scripted")
    ///     .build()
    ///     .unwrap();
    /// let chart = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
    /// let run = session
    ///     .run_input(UserInput::new("What is this?").image(chart.clone()))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(run.transcript[0].images(), [chart]);
    /// assert!(session.transcript().await.is_empty()); // a run keeps nothing for `send`
    /// # }
    /// ```
    pub async fn run_input(&self, input: impl Into<UserInput>) -> Result<AgentRun, AgenticError> {
        let mut estimate = TokenEstimate::default();
        self.run_under(input.into(), RunOrigin::here(self), &mut estimate)
            .await
    }

    /// [`run_with_cancellation`](Self::run_with_cancellation) of text with images.
    pub async fn run_input_with_cancellation(
        &self,
        input: impl Into<UserInput>,
        token: CancellationToken,
    ) -> Result<AgentRun, AgenticError> {
        let mut estimate = TokenEstimate::default();
        self.run_with_cancellation_estimated(
            input.into(),
            &token,
            (RunOrigin::here(self), &mut estimate),
        )
        .await
    }

    /// [`run`](Self::run) from `origin`: its tokens counted in the run whose ledger is its
    /// parent (a sub-agent started by a call runs on a task of its own, outside the call's
    /// context), its events streamed where it says; its last request's estimate left in
    /// `estimate` (the typed answer's exchange continues it).
    pub(super) async fn run_under(
        &self,
        input: UserInput,
        origin: RunOrigin,
        estimate: &mut TokenEstimate,
    ) -> Result<AgentRun, AgenticError> {
        self.drive(
            new_conversation(input),
            self.cancellation.child_token(),
            None,
            (origin, estimate),
        )
        .await
    }

    /// [`run`](Self::run), stopped when `token` (or the session's token) is cancelled: the
    /// model is not called again, running tools see the cancellation and are dropped, and
    /// the run ends with [`AgenticError::Cancelled`] carrying what was done.
    pub async fn run_with_cancellation(
        &self,
        text: impl Into<String>,
        token: CancellationToken,
    ) -> Result<AgentRun, AgenticError> {
        self.run_input_with_cancellation(UserInput::new(text), token)
            .await
    }

    /// [`run_with_cancellation`](Self::run_with_cancellation) from `origin`, its last
    /// request's estimate left in `estimate`.
    pub(super) async fn run_with_cancellation_estimated(
        &self,
        input: UserInput,
        token: &CancellationToken,
        (origin, estimate): (RunOrigin, &mut TokenEstimate),
    ) -> Result<AgentRun, AgenticError> {
        self.drive_following(new_conversation(input), token, (origin, estimate))
            .await
    }

    /// Continues the session's conversation with `text`; the conversation (with this run's
    /// messages, whether it succeeded or not) is kept for the next `send`. A `send` dropped
    /// before it ends leaves the conversation as it was.
    ///
    /// Sends take turns on the kept conversation: one made while another is under way (from
    /// another task sharing the session) waits for it to end, then continues the
    /// conversation that one left; a [`run`](Self::run) does not wait. A send that waits
    /// its turn ends at once with [`AgenticError::Cancelled`] when the session's token (or,
    /// for [`send_with_cancellation`](Self::send_with_cancellation), the caller's) is
    /// cancelled: its message was never sent and is not kept, and the error's run holds
    /// that message alone.
    pub async fn send(&self, text: impl Into<String>) -> Result<AgentRun, AgenticError> {
        self.continue_conversation(
            UserInput::new(text),
            None,
            (RunOrigin::here(self), &mut TokenEstimate::default()),
        )
        .await
    }

    /// [`send`](Self::send) of text with images (a [`UserInput`]; text alone converts into
    /// one).
    pub async fn send_input(&self, input: impl Into<UserInput>) -> Result<AgentRun, AgenticError> {
        self.continue_conversation(
            input.into(),
            None,
            (RunOrigin::here(self), &mut TokenEstimate::default()),
        )
        .await
    }

    /// [`send_with_cancellation`](Self::send_with_cancellation) of text with images.
    pub async fn send_input_with_cancellation(
        &self,
        input: impl Into<UserInput>,
        token: CancellationToken,
    ) -> Result<AgentRun, AgenticError> {
        self.continue_conversation(
            input.into(),
            Some(&token),
            (RunOrigin::here(self), &mut TokenEstimate::default()),
        )
        .await
    }

    /// [`send`](Self::send), stopped when `token` (or the session's token) is cancelled, as
    /// [`run_with_cancellation`](Self::run_with_cancellation) stops a run: a chat's "stop"
    /// button. The conversation is kept as the run left it, every call the model made
    /// answered (a call the cancellation kept from running or ended says so), so the next
    /// `send` continues from there; the session's token stays as it was, for later runs.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{CancellationToken, ToolShed, tool_fn};
    /// use toolsmith::harness::agent::{AgentSession, AgenticError};
    /// use toolsmith::harness::model::{Message, ScriptedModel, ScriptedTurn};
    ///
    /// /// Wait for a long time.
    /// #[tool_fn]
    /// async fn wait() -> String {
    ///     std::future::pending().await
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::call("shed", json!({"description": "wait"})),
    ///     ScriptedTurn::call("wait", json!({})),
    ///     ScriptedTurn::text("Stopped waiting, as you asked."),
    /// ]);
    /// let session = AgentSession::builder(model)
    ///     .with_model("scripted")
    ///     .with_toolshed(ToolShed::new().tool(Wait))
    ///     .build()
    ///     .unwrap();
    /// let stop = CancellationToken::new();
    /// let pressed = stop.clone();
    /// let (stopped, ()) = tokio::join!(
    ///     session.send_with_cancellation("Wait for me.", stop),
    ///     // Pressed once the run is under way.
    ///     async move {
    ///         for _ in 0..10 {
    ///             tokio::task::yield_now().await;
    ///         }
    ///         pressed.cancel();
    ///     },
    /// );
    /// assert!(matches!(stopped, Err(AgenticError::Cancelled { .. })));
    /// // The call the stop ended is answered in the kept conversation, which goes on.
    /// let kept = session.transcript().await;
    /// assert!(matches!(kept.last(), Some(Message::ToolResults { .. })));
    /// let run = session.send("Stop?").await.unwrap();
    /// assert_eq!(run.text, "Stopped waiting, as you asked.");
    /// # }
    /// ```
    pub async fn send_with_cancellation(
        &self,
        text: impl Into<String>,
        token: CancellationToken,
    ) -> Result<AgentRun, AgenticError> {
        self.continue_conversation(
            UserInput::new(text),
            Some(&token),
            (RunOrigin::here(self), &mut TokenEstimate::default()),
        )
        .await
    }

    /// The kept conversation with `input` added, run from `origin` (stopped by `caller` too,
    /// when given), and kept again as the run left it, with the estimate of its last request
    /// (also left in `estimate`, for the typed answer's exchange).
    pub(super) async fn continue_conversation(
        &self,
        input: UserInput,
        caller: Option<&CancellationToken>,
        (origin, estimate): (RunOrigin, &mut TokenEstimate),
    ) -> Result<AgentRun, AgenticError> {
        // Sends take turns: one queued behind another ends when it is cancelled, without
        // waiting for the other to end (its message never sent, nothing kept).
        let waited = tokio::select! {
            biased;
            kept = self.conversation.lock() => Ok(kept),
            () = self.cancellation.cancelled() => Err(()),
            () = async {
                match caller {
                    Some(token) => token.cancelled().await,
                    None => std::future::pending().await,
                }
            } => Err(()),
        };
        let Ok(mut kept) = waited else {
            let run = AgentRun {
                transcript: vec![input.into_message()],
                ..AgentRun::default()
            };
            // Refused before it started, as a run nested too deep is: its span says so.
            let cancelled = AgenticError::Cancelled { run: Box::new(run) };
            return Err(refused_run(&self.run_span(), cancelled));
        };
        // The run works on a copy: were it dropped midway, the kept conversation would
        // otherwise go with it.
        let mut messages = Vec::with_capacity(kept.messages.len() + 4);
        messages.extend(kept.messages.iter().cloned());
        messages.push(input.into_message());
        // The kept conversation's last request is the first of this run's.
        estimate.clone_from(&kept.estimate);
        let rewrites = estimate.rewrites();
        let ended = match caller {
            Some(token) => {
                self.drive_following(messages, token, (origin, &mut *estimate))
                    .await
            }
            None => {
                self.drive(
                    messages,
                    self.cancellation.child_token(),
                    None,
                    (origin, &mut *estimate),
                )
                .await
            }
        };
        // Kept whether the run succeeded or not.
        if let Some(run) = match &ended {
            Ok(run) => Some(run),
            Err(error) => error.run(),
        } {
            // A run that only added messages (none shortened, summarised, stripped of
            // images or handed to a policy) leaves the kept ones as they are: only its own
            // are copied, not the whole conversation once more.
            let had = kept.messages.len();
            match run.transcript.get(had..) {
                Some(added) if estimate.rewrites() == rewrites => {
                    // The contract that makes this sound: whatever edits a run's messages
                    // in place calls `TokenEstimate::rewritten` or `forget`. Checked in
                    // debug builds (the tests), where a new edit that does not would show.
                    debug_assert!(
                        run.transcript[..had] == kept.messages[..],
                        "a run's messages were edited without TokenEstimate::rewritten"
                    );
                    kept.messages.extend(added.iter().cloned());
                }
                _ => kept.messages.clone_from(&run.transcript),
            }
            kept.estimate.clone_from(estimate);
        }
        ended
    }

    /// Runs `conversation` from `origin` under a token of its own, which the session's token
    /// cancels, and so does the caller's `token`.
    async fn drive_following(
        &self,
        conversation: Vec<Message>,
        token: &CancellationToken,
        (origin, estimate): (RunOrigin, &mut TokenEstimate),
    ) -> Result<AgentRun, AgenticError> {
        let run_token = self.cancellation.child_token();
        following(
            token,
            &run_token,
            self.drive(
                conversation,
                run_token.clone(),
                Some(token),
                (origin, estimate),
            ),
        )
        .await
    }

    /// Clears the conversation kept by [`send`](Self::send).
    pub async fn reset(&self) {
        let mut kept = self.conversation.lock().await;
        kept.messages.clear();
        kept.estimate.forget();
    }

    /// Changes the conversation kept by [`send`](Self::send) with `edit`, which gets it
    /// under the lock `send` holds while it runs (so it waits for a `send` under way, and a
    /// `send` waits for it), and gives back what `edit` returns. The next `send` sends
    /// what `edit` left, after the session's system prompt: to forget, summarise or redact
    /// part of a long conversation. Keep an assistant message's tool calls and the
    /// tool-results message after it together: every provider refuses one without the
    /// other.
    ///
    /// ```
    /// use toolsmith::harness::agent::AgentSession;
    /// use toolsmith::harness::model::{ChatResponse, Message, ScriptedModel, ScriptedTurn};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::text("Noted: my card number is 4111 1111 1111 1111."),
    ///     ScriptedTurn::respond(|request| {
    ///         assert_eq!(request.messages[..2], [
    ///             Message::user("We talked about a card."),
    ///             Message::assistant("Noted."),
    ///         ]);
    ///         Ok(ChatResponse::text("Yes, we did."))
    ///     }),
    /// ]);
    /// let session = AgentSession::builder(model).with_model("scripted").build().unwrap();
    /// session.send("My card number is 4111 1111 1111 1111.").await.unwrap();
    /// // Redact the exchange before the conversation goes on.
    /// let removed = session
    ///     .edit_transcript(|messages: &mut Vec<Message>| {
    ///         let removed = messages.len();
    ///         *messages = vec![Message::user("We talked about a card."), Message::assistant("Noted.")];
    ///         removed
    ///     })
    ///     .await;
    /// assert_eq!(removed, 2);
    /// let run = session.send("Did we?").await.unwrap();
    /// assert_eq!(run.text, "Yes, we did.");
    /// # }
    /// ```
    pub async fn edit_transcript<R>(&self, edit: impl FnOnce(&mut Vec<Message>) -> R) -> R {
        let mut kept = self.conversation.lock().await;
        // What was counted last may no longer begin the conversation.
        kept.estimate.forget();
        edit(&mut kept.messages)
    }

    /// [`AgentEvent::ModelResponse`] for model call `turn`'s `response`, when a handler
    /// or the run's stream listens.
    fn emit_response(&self, ledger: &RunLedger, turn: usize, response: &ChatResponse) {
        if self.listened(ledger) {
            self.emit(
                ledger,
                AgentEvent::ModelResponse {
                    turn,
                    calls: response.calls.len(),
                    stop_reason: response.stop_reason.clone(),
                    usage: response.usage,
                },
            );
        }
    }

    /// Whether anyone hears the events of the run whose ledger is `ledger`: a handler of the
    /// session's, the run's own stream ([`AgentSession::events_of`]), or a run above it
    /// (when it is a sub-agent's). An event nobody hears is not built.
    pub(super) fn listened(&self, ledger: &RunLedger) -> bool {
        !self.events.is_empty() || ledger.heard_elsewhere()
    }

    /// Sends `event` of the run whose ledger is `ledger` to the session's handlers, then to
    /// the runs above it, then to the run's own stream.
    pub(super) fn emit(&self, ledger: &RunLedger, event: AgentEvent) {
        ledger.send(&self.events, event);
    }

    /// The loop: a model call, its tool calls, their results, until an answer without calls.
    /// `cancel` is the run's token; `caller`, a token of the caller's that also stops it
    /// (see [`is_cancelled`]); `origin`, the ledger of the run this one counts in and the
    /// stream its events go to; `estimate`, of the request the conversation continues, if
    /// any, and left with the run's last.
    ///
    /// The conversation moves into one [`ChatRequest`] for the whole run: each turn appends
    /// to it and the model borrows it, so no message is copied per turn.
    async fn drive(
        &self,
        conversation: Vec<Message>,
        cancel: CancellationToken,
        caller: Option<&CancellationToken>,
        (mut origin, estimate): (RunOrigin, &mut TokenEstimate),
    ) -> Result<AgentRun, AgenticError> {
        let span = self.run_span();
        // A run refused before its first model call has its span too, saying why: a trace
        // of a failed run is not empty.
        let refused = |error: AgenticError| Err(refused_run(&span, error));
        if origin.depth() > MAX_NESTED_RUNS {
            let run = AgentRun {
                transcript: conversation,
                ..AgentRun::default()
            };
            return refused(AgenticError::NestedTooDeep {
                limit: MAX_NESTED_RUNS,
                run: Box::new(run),
            });
        }
        // Its panic's error event in the run's span.
        let provider = match span.in_scope(|| self.provider_name()) {
            Ok(name) => name,
            Err(panic) => {
                let run = AgentRun {
                    transcript: conversation,
                    ..AgentRun::default()
                };
                return refused(panic.into_error(Box::new(run)));
            }
        };
        let mut request = ChatRequest {
            model: self.model_name.clone(),
            system: self.system_prompt.clone(),
            messages: conversation,
            tools: self.manager.offered_declarations(),
            options: self.options.clone(),
        };
        let mut run = AgentRun::default();
        // The run's own ledger, lent to its calls: what they cause counts here and only here.
        let slot = origin.ledger_slot();
        // A typed answer's exchange follows the run in its ledger and span: that ends it.
        let exchange_follows = slot.is_some();
        let ledger = Arc::new(RunLedger::lent(
            origin,
            Some(&self.events),
            self.token_budget,
        ));
        if let Some(slot) = slot {
            // Filled once: the slot is this run's alone.
            let _ = slot.set(LeftRun {
                ledger: Arc::clone(&ledger),
                span: span.clone(),
            });
        }
        // A run dropped before it ends (its caller gave up) stops its children too, and its
        // span says it was cancelled.
        let dropped = AbandonedIfDropped(Some(&ledger));
        let given_up = CancelledIfDropped(Some(&span));
        let ended = {
            let batch_options = turn::batch_options(self, (cancel, caller), &ledger);
            // Pinned in place, the span's wrapper holding only its address: wrapped by value,
            // the loop's future was held twice in the run's, which is moved as the run starts.
            let turns = std::pin::pin!(self.turns(
                (&mut request, estimate),
                &batch_options,
                (caller, provider),
                (&mut run, &ledger),
            ));
            turns.instrument(span.clone()).await
        };
        dropped.disarm();
        given_up.disarm();
        // A run that answers and leaves its ledger to the typed answer's exchange goes on
        // there (its stream hears its children until the exchange ends); any other ends.
        if !exchange_follows || ended.is_err() {
            ledger.run_ended();
        }
        if ended.as_ref().is_err_and(RunEnd::stops_children) {
            ledger.abandon();
        }
        run.child_usage = ledger.descendants();
        span.record("gen_ai.usage.input_tokens", run.usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", run.usage.output_tokens);
        run.transcript = request.messages;
        match ended {
            Ok(text) => {
                run.text = text;
                Ok(run)
            }
            Err(end) => {
                let error = end.into_error(run, self.max_turns);
                span.record("error.type", error.kind_name());
                Err(error)
            }
        }
    }

    /// Waits while the session is paused (a model call is about to be made), cancelled by
    /// `cancel`.
    pub(super) async fn wait_if_paused(&self, cancel: &CancellationToken) -> Result<(), RunEnd> {
        match &self.pause {
            Some(pause) if pause.is_paused() && !pause.wait_while_paused(cancel).await => {
                Err(RunEnd::Cancelled)
            }
            _ => Ok(()),
        }
    }

    /// A run's `invoke_agent` span, its usage and `error.type` recorded when it ends.
    fn run_span(&self) -> tracing::Span {
        tracing::info_span!(
            "invoke_agent",
            otel.name = "invoke_agent",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.conversation.id = %self.parts.session_id,
            gen_ai.request.model = %self.model_name,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            error.type = tracing::field::Empty,
        )
    }

    /// The client's name, for each request's span and a panic's error: read once a run, and
    /// caught as the model's other methods are, since it is the user's code too.
    pub(super) fn provider_name(&self) -> Result<&str, CaughtPanic> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.model.name()))
            .map_err(|payload| CaughtPanic::new("the model's name()".to_owned(), payload))
    }

    async fn turns(
        &self,
        (request, estimate): (&mut ChatRequest, &mut TokenEstimate),
        batch_options: &BatchOptions,
        (caller, provider): (Option<&CancellationToken>, &str),
        (run, ledger): (&mut AgentRun, &RunLedger),
    ) -> Result<String, RunEnd> {
        // The options own the run's token: one token, never cloned per turn.
        let cancel = batch_options
            .cancellation()
            .expect("the run's batch options carry its token");
        loop {
            // Before each model call: a tool turn's end says whether the run's own token was
            // cancelled, not whether the caller's was.
            if is_cancelled(cancel, caller) {
                return Err(RunEnd::Cancelled);
            }
            self.wait_if_paused(cancel).await?;
            // The tools offered now: a turn's `shed` calls may have activated more.
            request.tools = self.manager.offered_declarations();
            let limit = if run.model_calls >= self.max_turns {
                Some(RunEnd::MaxTurns)
            } else {
                self.budget_spent(run, ledger)
            };
            if let Some(limit) = limit {
                // A caller's budget spent is no run's own limit: its answer would spend on.
                if self.final_answer_on_limit && !matches!(limit, RunEnd::CallerTokenBudget { .. })
                {
                    let response = self
                        .call_model_fitting(
                            (request, estimate, 0),
                            ToolChoice::None,
                            cancel,
                            (caller, provider),
                            (run, ledger),
                        )
                        .await?;
                    // Calls in an answer asked for without tools are not run; its text is
                    // the answer.
                    if let Some(text) = response.text.filter(|text| !text.trim().is_empty()) {
                        let message = if response.calls.is_empty() {
                            // Kept as any answer is: the provider's turn (its reasoning
                            // items, signatures) goes back with the next question.
                            Message::Assistant {
                                text: Some(text.clone()),
                                calls: Vec::new(),
                                provider_turn: response.provider_turn,
                                stop_reason: Some(response.stop_reason),
                            }
                        } else {
                            // Its provider turn would send back calls no result answers.
                            Message::assistant(text.clone())
                        };
                        request.messages.push(message);
                        return Ok(text);
                    }
                }
                return Err(limit);
            }
            let response = self
                .call_model_fitting(
                    (request, estimate, 0),
                    ToolChoice::Auto,
                    cancel,
                    (caller, provider),
                    (run, ledger),
                )
                .await?;
            if response.calls.is_empty() {
                let text = response.text.clone().unwrap_or_default();
                request.messages.push(Message::Assistant {
                    text: Some(text.clone()),
                    calls: Vec::new(),
                    provider_turn: response.provider_turn,
                    stop_reason: Some(response.stop_reason),
                });
                return Ok(text);
            }
            request.messages.push(response.to_message());
            let turn = run.model_calls;
            // Pinned in place: awaited by value, the tool turn's future (its batch's with it)
            // was held twice in this loop's, which every run moves as it starts.
            let ended = std::pin::pin!(
                TurnCalls::new(self, turn, (cancel, caller), (batch_options, ledger))
                    .cut_off(response.stop_reason == StopReason::MaxTokens)
                    .run(response.calls, &mut run.tool_calls)
            )
            .await;
            request.messages.push(Message::ToolResults {
                results: ended.results,
            });
            match ended.end {
                CallsEnded::Normally => {}
                CallsEnded::Stopped(reason) => return Err(RunEnd::Stopped(reason)),
                CallsEnded::Cancelled => return Err(RunEnd::Cancelled),
                CallsEnded::Panicked(panic) => return Err(RunEnd::Panicked(panic)),
            }
            self.emit(
                ledger,
                AgentEvent::TurnFinished {
                    turn,
                    usage: run.usage,
                },
            );
        }
    }

    /// [`call_model`](Self::call_model) under the session's [`ContextOverflow`] policy:
    /// before sending, while the session's [`TokenEstimate`] of the request (with the
    /// output it reserves) passes its context window, the policy shortens the request's
    /// messages; after, each time the model says the request is longer than its window,
    /// the policy shortens them and the call is asked again. At most
    /// [`MAX_OVERFLOW_ATTEMPTS`] shortenings a call, either way; each request is counted as
    /// a model call, and the answered one's usage left in `estimate`. The last
    /// `protected` messages (the typed answer's own request) are not shown to the policy,
    /// and the latest user message before them is kept. Before all that, the images the
    /// model's limits refuse are replaced by notes ([`remove_images_over_limits`]); a
    /// refusal for an unreadable image ([`ModelError::ImageRefused`]) has the image it
    /// names, else every image, replaced by a note and the call asked again (after every
    /// image went, a refusal is final); both unless the session was built without them.
    pub(super) async fn call_model_fitting(
        &self,
        (request, estimate, protected): (&mut ChatRequest, &mut TokenEstimate, usize),
        tool_choice: ToolChoice,
        cancel: &CancellationToken,
        (caller, provider): (Option<&CancellationToken>, &str),
        (run, ledger): (&mut AgentRun, &RunLedger),
    ) -> Result<ChatResponse, RunEnd> {
        let mut attempt = 0;
        // The policy shortened nothing on an estimate: the estimate is not asked again,
        // the model decides.
        let mut estimate_spent = false;
        // Every image of the request was removed after a refusal: another one is final. A
        // refusal naming one image removes that one alone, which, each time one image
        // fewer, can happen only as many times as the request has images.
        let mut images_removed = false;
        if self.unreadable_images_removed {
            self.remove_images_over_limits((request, estimate), run.model_calls + 1, ledger)?;
        }
        // The output the request reserves, for a session that knows its window.
        let reserved = match self.context_window {
            Some(_) => self.reserved_output(request, run.model_calls + 1)?,
            None => 0,
        };
        if let (Some(window), Some(compaction), 0) =
            (self.context_window, &self.compaction, protected)
        {
            let estimated = ContextEstimate::new(estimate.estimate(request), reserved, window);
            // Boxed, and only when due: its future (a model call's) would otherwise double
            // the size of every call's, which each call moves.
            if compaction.is_due(&estimated) {
                Box::pin(self.compact(
                    compaction,
                    (request, estimate, estimated),
                    cancel,
                    (caller, provider),
                    (run, ledger),
                ))
                .await?;
            }
        }
        loop {
            if let (Some(window), Some(policy)) = (self.context_window, &self.context_overflow) {
                while !estimate_spent && attempt < MAX_OVERFLOW_ATTEMPTS {
                    let estimated =
                        ContextEstimate::new(estimate.estimate(request), reserved, window);
                    if !estimated.exceeds_window() {
                        break;
                    }
                    attempt += 1;
                    let overflow = Overflow::estimated(attempt, estimated);
                    let turn = run.model_calls + 1;
                    let shortened = self.shorten_request(
                        policy.as_ref(),
                        (request, estimate, protected),
                        &overflow,
                        (turn, ledger),
                    )?;
                    if shortened.is_nothing() {
                        estimate_spent = true;
                        break;
                    }
                    if is_cancelled(cancel, caller) {
                        return Err(RunEnd::Cancelled);
                    }
                }
            }
            let error = match self
                .call_model(
                    request,
                    tool_choice.clone(),
                    true,
                    cancel,
                    (caller, provider),
                    (run, ledger),
                )
                .await
            {
                Ok(response) => {
                    estimate.measured(request, response.usage);
                    return Ok(response);
                }
                // By the error that ended the call: a fallback's last model's
                // (`ModelError::AllFailed`).
                Err(RunEnd::Model(error))
                    if matches!(error.last_error(), ModelError::ContextTooLong { .. }) =>
                {
                    error
                }
                Err(RunEnd::Model(error))
                    if self.unreadable_images_removed
                        && !images_removed
                        && matches!(error.last_error(), ModelError::ImageRefused { .. }) =>
                {
                    let ModelError::ImageRefused { message, image, .. } = error.last_error() else {
                        return Err(RunEnd::Model(error));
                    };
                    // The one named, where the refusal says which and it is there; else all.
                    let (removed, named) = match *image {
                        Some(index) if remove_image(&mut request.messages, index) => {
                            (1, Some(index))
                        }
                        _ => {
                            images_removed = true;
                            (remove_images(&mut request.messages), None)
                        }
                    };
                    if removed == 0 {
                        return Err(RunEnd::Model(error));
                    }
                    // What the provider counted, if anything, held the images.
                    estimate.forget();
                    self.emit(
                        ledger,
                        AgentEvent::ImagesRemoved {
                            turn: run.model_calls,
                            removed,
                            image: named,
                            reason: message.clone(),
                        },
                    );
                    if is_cancelled(cancel, caller) {
                        return Err(RunEnd::Cancelled);
                    }
                    // Asking again is a model call too.
                    if let Some(spent) = self.budget_spent(run, ledger) {
                        return Err(spent);
                    }
                    continue;
                }
                Err(end) => return Err(end),
            };
            let Some(policy) = &self.context_overflow else {
                return Err(RunEnd::Model(error));
            };
            if attempt == MAX_OVERFLOW_ATTEMPTS {
                return Err(RunEnd::Model(error));
            }
            attempt += 1;
            let overflow = Overflow::new(attempt, error.last_error());
            let shortened = self.shorten_request(
                policy.as_ref(),
                (request, estimate, protected),
                &overflow,
                (run.model_calls, ledger),
            )?;
            if shortened.is_nothing() {
                return Err(RunEnd::Model(error));
            }
            if is_cancelled(cancel, caller) {
                return Err(RunEnd::Cancelled);
            }
            // Asking again is a model call too.
            if let Some(spent) = self.budget_spent(run, ledger) {
                return Err(spent);
            }
        }
    }

    /// The output `request` reserves ([`ChatModel::output_limit`](crate::model::ChatModel::output_limit)),
    /// 0 when it says none, before request `turn`: the model's own code, whose panic ends
    /// the run as one, as a policy's does.
    pub(super) fn reserved_output(
        &self,
        request: &ChatRequest,
        turn: usize,
    ) -> Result<u64, RunEnd> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.model.output_limit(request)))
            .map(|limit| limit.map_or(0, u64::from))
            .map_err(|payload| {
                let during = format!("the model's output_limit (before request {turn})");
                RunEnd::Panicked(CaughtPanic::new(during, payload))
            })
    }

    /// Replaces the images of `request` that the model's [`ImageLimits`] refuse by notes, in
    /// place (so in the conversation the run keeps too: each is removed once), before
    /// request `turn` is sent; reported as an [`AgentEvent::ImagesOverLimits`]. The
    /// estimate's count held the images, and is forgotten. A request that only gained
    /// messages without images since its last check is not walked again
    /// ([`TokenEstimate::images_within`]). A panic of the model's `image_limits` ends the
    /// run as one.
    ///
    /// [`ImageLimits`]: crate::model::ImageLimits
    fn remove_images_over_limits(
        &self,
        (request, estimate): (&mut ChatRequest, &mut TokenEstimate),
        turn: usize,
        ledger: &RunLedger,
    ) -> Result<(), RunEnd> {
        let limits = std::panic::catch_unwind(AssertUnwindSafe(|| self.model.image_limits()))
            .map_err(|payload| {
                let during = format!("the model's image_limits (before request {turn})");
                RunEnd::Panicked(CaughtPanic::new(during, payload))
            })?;
        if limits.is_none() {
            return Ok(());
        }
        if !estimate.images_within(&request.messages, &limits) {
            let removed = remove_images_over_limits(&mut request.messages, &limits);
            if !removed.is_empty() {
                estimate.forget();
                self.emit(ledger, AgentEvent::ImagesOverLimits { turn, removed });
            }
        }
        estimate.images_checked(request.messages.len(), limits);
        Ok(())
    }

    /// `request`'s messages shortened by `policy` for `overflow` (its last `protected` kept
    /// from it, see [`shorten`]), about model call `turn`: the one about to be sent for an
    /// estimate, the one refused for a refusal. A shortening forgets `estimate`'s count (it
    /// began with messages now gone) and is reported as an [`AgentEvent::ContextShortened`];
    /// a panic of the policy ends the run as one.
    fn shorten_request(
        &self,
        policy: &dyn ContextOverflow,
        (request, estimate, protected): (&mut ChatRequest, &mut TokenEstimate, usize),
        overflow: &Overflow<'_>,
        (turn, ledger): (usize, &RunLedger),
    ) -> Result<Shortened, RunEnd> {
        // Whatever it says it did, the policy had the messages to change.
        estimate.rewritten();
        let estimated = match overflow.cause {
            OverflowCause::Estimated(estimated) => Some(estimated),
            OverflowCause::Refused(_) => None,
        };
        let shortened =
            shorten(policy, &mut request.messages, overflow, protected).map_err(|payload| {
                let when = if estimated.is_some() {
                    "before"
                } else {
                    "after"
                };
                let during = format!("the context overflow policy ({when} request {turn})");
                RunEnd::Panicked(CaughtPanic::new(during, payload))
            })?;
        if !shortened.is_nothing() {
            estimate.forget();
            self.emit(
                ledger,
                AgentEvent::ContextShortened {
                    turn,
                    attempt: overflow.attempt,
                    dropped: shortened.dropped,
                    emptied: shortened.emptied,
                    estimate: estimated,
                },
            );
        }
        Ok(shortened)
    }

    /// One model call with the tools `request` declares, counted and its usage added to
    /// `run` (and, through its `ledger`, to the runs above it); streamed, in a session built
    /// [`with_streaming`](AgentSessionBuilder::with_streaming), when `streamed` (a summary
    /// of the conversation is not the answer being written).
    pub(super) async fn call_model(
        &self,
        request: &mut ChatRequest,
        tool_choice: ToolChoice,
        streamed: bool,
        cancel: &CancellationToken,
        (caller, provider): (Option<&CancellationToken>, &str),
        (run, ledger): (&mut AgentRun, &RunLedger),
    ) -> Result<ChatResponse, RunEnd> {
        request.options.tool_choice = tool_choice;
        let request = &*request;
        run.model_calls += 1;
        let turn = run.model_calls;
        if self.listened(ledger) {
            self.emit(
                ledger,
                AgentEvent::ModelRequest {
                    turn,
                    tools: request
                        .tool_names()
                        .into_iter()
                        .map(str::to_owned)
                        .collect(),
                },
            );
        }
        let span = tracing::info_span!(
            "chat",
            otel.name = %format_args!("chat {}", self.model_name),
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = %provider,
            gen_ai.request.model = %self.model_name,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            gen_ai.response.finish_reasons = tracing::field::Empty,
            gen_ai.response.model = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let answer = {
            // Through the `dyn` directly: `self.model.stream` would pick the forwarding impl
            // on `Arc<M>` and box the future twice.
            let model = self.model.as_ref();
            // A panic of the model client ends the run with an error, not an unwinding
            // `run`. Caught inside the `async` block, so that a client whose method panics
            // before it returns its future is caught too.
            let call = AssertUnwindSafe(async {
                if self.streaming && streamed {
                    let mut on_delta = |delta: StreamDelta| {
                        if let StreamDelta::Text(text) = delta {
                            self.emit(ledger, AgentEvent::TextDelta(text));
                        }
                    };
                    model.stream(request, &mut on_delta).await
                } else {
                    model.complete(request).await
                }
            })
            .catch_unwind();
            // A call that does not come back, its run cancelled or dropped meanwhile (its
            // caller gave up, a deadline passed), ends its span as cancelled.
            let unanswered = CancelledIfDropped(Some(&span));
            // The answer is polled first: a model that answers at once never registers a
            // waiter on the token. A cancellation that came meanwhile is seen just below.
            let answered = tokio::select! {
                biased;
                answered = call.instrument(span.clone()) => answered,
                () = cancel.cancelled() => return Err(RunEnd::Cancelled),
            };
            unanswered.disarm();
            answered.map_err(|payload| {
                span.record("error.type", "panicked");
                let during = format!("the model ({provider}) answering request {turn}");
                RunEnd::Panicked(CaughtPanic::new(during, payload))
            })?
        };
        let answer = answer.and_then(|response| within_depth(response, provider));
        if is_cancelled(cancel, caller) {
            // The answer came with the cancellation: not used, but its tokens were spent (and
            // reported, so that a handler counting tokens by event, `check`'s, counts them).
            if let Ok(response) = &answer {
                record_answer(&span, response);
                run.usage += response.usage;
                ledger.spent(response.usage);
                self.emit_response(ledger, turn, response);
            }
            return Err(RunEnd::Cancelled);
        }
        let response = answer.map_err(|error| {
            span.record("error.type", error.kind_name());
            RunEnd::Model(error)
        })?;
        record_answer(&span, &response);
        run.usage += response.usage;
        ledger.spent(response.usage);
        run.stop_reason = Some(response.stop_reason.clone());
        self.emit_response(ledger, turn, &response);
        Ok(response)
    }
}

/// `error`, which refused a run before its first model call, recorded on the run's `span`
/// (which then ends at once): no tokens spent, and the error's kind.
fn refused_run(span: &tracing::Span, error: AgenticError) -> AgenticError {
    span.record("gen_ai.usage.input_tokens", 0);
    span.record("gen_ai.usage.output_tokens", 0);
    span.record("error.type", error.kind_name());
    error
}

/// Records on a model call's `chat` span what its answer says: usage, stop reason, model.
fn record_answer(span: &tracing::Span, response: &ChatResponse) {
    if span.is_disabled() {
        return;
    }
    span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
    span.record(
        "gen_ai.response.finish_reasons",
        response.stop_reason.as_str(),
    );
    if let Some(model) = &response.model {
        span.record("gen_ai.response.model", model.as_str());
    }
}

/// Records `error.type = "cancelled"` on a span when dropped armed: a model call's `chat`
/// span, the call's future given up (the run cancelled, or itself dropped) before it
/// answered; a run's `invoke_agent` span, the run's future dropped before it ended (its
/// caller gave up).
pub(super) struct CancelledIfDropped<'a>(pub(super) Option<&'a tracing::Span>);

impl CancelledIfDropped<'_> {
    /// The call or run came back: its span records how.
    pub(super) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelledIfDropped<'_> {
    fn drop(&mut self) {
        if let Some(span) = self.0.filter(|span| !span.is_disabled()) {
            span.record("error.type", "cancelled");
        }
    }
}

/// `response`, unless its provider turn nests deeper than [`MAX_JSON_DEPTH`]: a value a
/// model client built itself (the harness's own clients parse theirs with a bounded depth),
/// which the transcript would copy, compare and drop recursively, once per level, and
/// overflow the stack. Refused as a malformed response, its entries freed without recursion.
fn within_depth(mut response: ChatResponse, provider: &str) -> Result<ChatResponse, ModelError> {
    let too_deep = response.provider_turn.as_ref().is_some_and(|turn| {
        turn.entries
            .iter()
            .any(|entry| !nests_within(entry, MAX_JSON_DEPTH))
    });
    if !too_deep {
        return Ok(response);
    }
    if let Some(turn) = response.provider_turn.take() {
        turn.entries.into_iter().for_each(free_value);
    }
    Err(ModelError::MalformedResponse {
        provider: provider.to_owned(),
        reason: format!("the answer's provider turn is nested deeper than {MAX_JSON_DEPTH} levels"),
    })
}

/// `messages` shortened by `policy` for `overflow`, its last `protected` messages not shown
/// to it; when some are protected (the typed answer's own request), the latest user message
/// before them, the question being answered, is put back if the policy removed it: first
/// (a policy drops from the front, and a conversation begins with a user message). A panic
/// of the policy is caught, its payload given back, `messages` whole again (as far as the
/// policy left them).
fn shorten(
    policy: &dyn ContextOverflow,
    messages: &mut Vec<Message>,
    overflow: &Overflow<'_>,
    protected: usize,
) -> Result<Shortened, Box<dyn std::any::Any + Send>> {
    let tail = messages.split_off(messages.len().saturating_sub(protected));
    let question = (protected > 0)
        .then(|| {
            messages
                .iter()
                .rfind(|message| matches!(message, Message::User { .. }))
                .cloned()
        })
        .flatten();
    let shortened =
        std::panic::catch_unwind(AssertUnwindSafe(|| policy.shorten(messages, overflow)));
    if let Some(question) = question
        && messages
            .iter()
            .rfind(|message| matches!(message, Message::User { .. }))
            != Some(&question)
    {
        messages.insert(0, question);
    }
    messages.extend(tail);
    shortened
}

/// Abandons a run's ledger when dropped armed: a run's future dropped before it ended (a
/// `send` its caller gave up on) stops the sub-agents its calls started, as a cancelled run
/// does.
pub(super) struct AbandonedIfDropped<'a>(pub(super) Option<&'a RunLedger>);

impl AbandonedIfDropped<'_> {
    /// The run ended: what becomes of its children is decided by how.
    pub(super) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for AbandonedIfDropped<'_> {
    fn drop(&mut self) {
        if let Some(ledger) = self.0 {
            ledger.run_ended();
            ledger.abandon();
        }
    }
}

/// Whether the run whose token is `run` is cancelled, `caller` (a token of the caller's,
/// [`AgentSession::run_with_cancellation`]) included. The caller's token reaches the run's
/// while the run waits; one cancelled while the run went on without waiting (by a tool, a
/// hook or an event handler, with a model that answers at once) is passed on here, and by
/// each check of a turn's calls.
pub(super) fn is_cancelled(run: &CancellationToken, caller: Option<&CancellationToken>) -> bool {
    if caller.is_some_and(CancellationToken::is_cancelled) {
        run.cancel();
    }
    run.is_cancelled()
}

/// `work`, whose token is `run_token`, with the caller's `token` followed: its cancellation
/// cancels `run_token` at once, however long `work` waits (the loop itself only looks at
/// the caller's token between steps, with [`is_cancelled`]).
pub(super) async fn following<F: Future>(
    token: &CancellationToken,
    run_token: &CancellationToken,
    work: F,
) -> F::Output {
    let follow = async {
        token.cancelled().await;
        run_token.cancel();
        std::future::pending::<()>().await;
    };
    // Polled first, so that a token cancelled already (or meanwhile) reaches the run
    // before the run goes on.
    tokio::select! {
        biased;
        () = follow => unreachable!("following the caller's token never ends"),
        ended = work => ended,
    }
}

/// A conversation that starts with the user's `input`.
fn new_conversation(input: UserInput) -> Vec<Message> {
    // Room for the user's message, one tool turn (the model's calls and their results) and
    // the answer: most runs never grow the conversation after this.
    let mut conversation = Vec::with_capacity(4);
    conversation.push(input.into_message());
    conversation
}

/// A session's cancellation token, kept in its [`SessionParts`] state for the tools built
/// with the session (sub-agents: cancelling the session stops its children).
pub(crate) struct SessionCancellation(pub(crate) CancellationToken);

/// A session's [`PauseHandle`], kept in its [`SessionParts`] state for the tools built with
/// the session: its sub-agents are paused with it.
pub(crate) struct SessionPause(pub(crate) PauseHandle);

/// A session's hooks and approval, kept in its [`SessionParts`] state for the tools built
/// with the session: its sub-agents' calls pass them too, so that a child cannot do what the
/// parent's hooks deny or its approval refuses. With them, whether the session removes the
/// images its model refuses, which its sub-agents follow.
pub(crate) struct SessionGuards {
    pub(crate) hooks: Vec<Arc<dyn ToolHook>>,
    pub(crate) approval: Option<Arc<dyn ToolApproval>>,
    pub(crate) unreadable_images_removed: bool,
}

impl Default for SessionGuards {
    /// No hooks, no approval, and a session's default for images (removed).
    fn default() -> Self {
        Self {
            hooks: Vec::new(),
            approval: None,
            unreadable_images_removed: true,
        }
    }
}

/// Why the loop ended without an answer.
pub(super) enum RunEnd {
    Model(ModelError),
    MaxTurns,
    TokenBudget {
        limit: u64,
        spent: u64,
    },
    /// The budget of a run above this sub-agent's run is spent.
    CallerTokenBudget {
        limit: u64,
        spent: u64,
    },
    Cancelled,
    Stopped(String),
    Panicked(CaughtPanic),
}

impl RunEnd {
    /// Whether a run that ends so stops the background children its calls started: one
    /// cancelled, stopped by a hook, by a panic or by a token budget. One that fails
    /// otherwise (the model's error, its turns spent) leaves them, as an answer does: a
    /// `send` continuing the conversation may collect them
    /// ([`AgentSession::stop_sub_agents`] stops them otherwise).
    pub(super) fn stops_children(&self) -> bool {
        matches!(
            self,
            Self::Cancelled
                | Self::Stopped(_)
                | Self::Panicked(_)
                | Self::TokenBudget { .. }
                | Self::CallerTokenBudget { .. }
        )
    }

    pub(super) fn into_error(self, run: AgentRun, max_turns: usize) -> AgenticError {
        let run = Box::new(run);
        match self {
            Self::Model(source) => AgenticError::Model { source, run },
            Self::MaxTurns => AgenticError::MaxTurns { max_turns, run },
            Self::TokenBudget { limit, spent } => AgenticError::TokenBudget { limit, spent, run },
            Self::CallerTokenBudget { limit, spent } => {
                AgenticError::CallerTokenBudget { limit, spent, run }
            }
            Self::Cancelled => AgenticError::Cancelled { run },
            Self::Stopped(reason) => AgenticError::Stopped { reason, run },
            Self::Panicked(panic) => panic.into_error(run),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ScriptedModel, ScriptedTurn};

    /// Where the kept conversation's first message keeps its text: a copy of the message
    /// moves it.
    async fn first_text_at(session: &AgentSession) -> *const u8 {
        let kept = session.conversation.lock().await;
        kept.messages[0].text().expect("a user message").as_ptr()
    }

    #[tokio::test]
    async fn a_send_that_only_adds_messages_leaves_the_kept_ones_uncopied() {
        let model = ScriptedModel::new([ScriptedTurn::text("One."), ScriptedTurn::text("Two.")]);
        let session = AgentSession::builder(model)
            .with_model("scripted")
            .build()
            .unwrap();
        session.send("First.").await.unwrap();
        let at = first_text_at(&session).await;
        let run = session.send("Second.").await.unwrap();
        assert_eq!(first_text_at(&session).await, at);
        assert_eq!(session.transcript().await, run.transcript);
        assert_eq!(run.transcript.len(), 4);
    }

    /// A policy that rewrites the first message and says it shortened nothing.
    struct Rewrites;

    impl ContextOverflow for Rewrites {
        fn shorten(&self, conversation: &mut Vec<Message>, _: &Overflow<'_>) -> Shortened {
            conversation[0] = Message::user("Rewritten.");
            Shortened::new(0, 0)
        }
    }

    #[tokio::test]
    async fn a_send_whose_messages_a_policy_had_keeps_the_run_s_conversation() {
        let too_long = ModelError::ContextTooLong {
            provider: "scripted".into(),
            status: 400,
            message: "too long".into(),
        };
        let model = ScriptedModel::new([ScriptedTurn::text("One."), ScriptedTurn::error(too_long)]);
        let session = AgentSession::builder(model)
            .with_model("scripted")
            .with_context_overflow(Rewrites)
            .build()
            .unwrap();
        session.send("First.").await.unwrap();
        let error = session.send("Second.").await.unwrap_err();
        let kept = session.transcript().await;
        assert_eq!(kept[0], Message::user("Rewritten."));
        assert_eq!(Some(&kept), error.run().map(|run| &run.transcript));
    }
}
