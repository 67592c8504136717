//! [`AgentSessionBuilder`]: what an [`AgentSession`] is built from, and the checks made
//! when it is built (a model name, the tools' declarations, a window with its policy).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use toolsmith_core::{
    CancellationToken, ContextSearch, Embedder, MemoryAccess, SessionParts, ToolRetryConfig,
    ToolShed,
};

use super::AgenticError;
use super::children::SessionSubAgents;
use super::compaction::Compaction;
use super::context_overflow::{ContextOverflow, SessionContextOverflow};
use super::declaration_check::check_declarations;
use super::events::AgentEventHandler;
use super::hooks::{ToolApproval, ToolHook};
use super::pause::PauseHandle;
use super::session::{
    AgentSession, DEFAULT_MAX_TURNS, Kept, SessionCancellation, SessionGuards, SessionPause,
};
use crate::model::{ChatModel, ChatOptions, DebugName};

/// Builds an [`AgentSession`]; see [`AgentSession::builder`].
#[must_use = "a builder does nothing until `build()`"]
pub struct AgentSessionBuilder {
    model: Arc<dyn ChatModel>,
    model_name: Option<String>,
    system_prompt: Option<String>,
    shed: ToolShed,
    session_id: Option<String>,
    embedder: Option<Arc<dyn Embedder>>,
    memory: Option<Arc<dyn MemoryAccess>>,
    context: Option<Arc<dyn ContextSearch>>,
    max_turns: usize,
    pub(super) token_budget: Option<u64>,
    final_answer_on_limit: bool,
    streaming: bool,
    every_tool_declared: bool,
    retry_policy: Option<ToolRetryConfig>,
    options: ChatOptions,
    hooks: Vec<Arc<dyn ToolHook>>,
    approval: Option<Arc<dyn ToolApproval>>,
    events: Vec<Arc<dyn AgentEventHandler>>,
    batch_deadline: Option<Duration>,
    cancellation: Option<CancellationToken>,
    pause: Option<PauseHandle>,
    context_overflow: Option<Arc<dyn ContextOverflow>>,
    context_window: Option<u64>,
    compaction: Option<Arc<Compaction>>,
    unreadable_images_removed: bool,
}

impl std::fmt::Debug for AgentSessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSessionBuilder")
            .field("model", &DebugName(self.model.as_ref()))
            .field("model_name", &self.model_name)
            .field("session_id", &self.session_id)
            .field("tools", &self.shed.names())
            .field("max_turns", &self.max_turns)
            .field("token_budget", &self.token_budget)
            .field("streaming", &self.streaming)
            .field("every_tool_declared", &self.every_tool_declared)
            .field("hooks", &self.hooks.len())
            .field("approval", &self.approval.is_some())
            .field("event_handlers", &self.events.len())
            .field("context_overflow", &self.context_overflow.is_some())
            .field("context_window", &self.context_window)
            .field("compaction", &self.compaction)
            .field("unreadable_images_removed", &self.unreadable_images_removed)
            .finish_non_exhaustive()
    }
}

impl AgentSessionBuilder {
    pub(super) fn new(model: Arc<dyn ChatModel>) -> Self {
        Self {
            model,
            model_name: None,
            system_prompt: None,
            shed: ToolShed::new(),
            session_id: None,
            embedder: None,
            memory: None,
            context: None,
            max_turns: DEFAULT_MAX_TURNS,
            token_budget: None,
            final_answer_on_limit: false,
            streaming: false,
            every_tool_declared: false,
            retry_policy: None,
            options: ChatOptions::default(),
            hooks: Vec::new(),
            approval: None,
            events: Vec::new(),
            batch_deadline: None,
            cancellation: None,
            pause: None,
            context_overflow: None,
            context_window: None,
            compaction: None,
            unreadable_images_removed: true,
        }
    }

    /// The model's name, as its API knows it (required).
    pub fn with_model(mut self, name: impl Into<String>) -> Self {
        self.model_name = Some(name.into());
        self
    }

    /// The system prompt sent with every request.
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The session's tools; `build()` constructs each from the session's parts.
    pub fn with_toolshed(mut self, shed: ToolShed) -> Self {
        self.shed = shed;
        self
    }

    /// The session's id (default: `session-<n>`).
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// An embedder: `shed` then searches by meaning, and tools built from the session get it.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// The session's working memory (default: an empty in-memory one).
    pub fn with_memory(mut self, memory: Arc<dyn MemoryAccess>) -> Self {
        self.memory = Some(memory);
        self
    }

    /// The session's context stores (default: an empty in-memory one).
    pub fn with_context(mut self, context: Arc<dyn ContextSearch>) -> Self {
        self.context = Some(context);
        self
    }

    /// How many model calls one run may make (default [`DEFAULT_MAX_TURNS`], at least 1).
    pub fn with_max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = max_turns.max(1);
        self
    }

    /// With `true`, a run that reaches `max_turns` (or its
    /// [token budget](Self::with_token_budget)) makes one more model call with tools
    /// disabled ([`ToolChoice::None`](crate::model::ToolChoice::None)) and ends with its text; by default it ends with
    /// [`AgenticError::MaxTurns`] (or [`AgenticError::TokenBudget`]). An answer without text
    /// (calls alone, or blank text) ends the run with that error all the same, the answer
    /// not kept: an empty answer would read as the model's last word.
    pub fn with_final_answer_on_limit(mut self, final_answer: bool) -> Self {
        self.final_answer_on_limit = final_answer;
        self
    }

    /// With `true`, the model is asked through [`ChatModel::stream`] and its text reaches the
    /// event handlers as it arrives ([`AgentEvent::TextDelta`](super::AgentEvent::TextDelta)); by default through
    /// [`ChatModel::complete`], the whole answer at once. The answers are the same either way
    /// (the HTTP clients assemble a streamed answer into the one they would have read whole).
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// With `true`, every tool of the session is declared to the model on every request and
    /// `shed` is not ([`ToolCallManager::set_every_tool_declared`]): for a session of a few
    /// tools, where searching first costs the model a turn. By default (`false`) the model is
    /// offered `shed` alone at first and finds the rest through it, so that a session of
    /// hundreds of tools does not send them all with every request.
    ///
    /// ```
    /// use toolsmith::harness::agent::AgentSession;
    /// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
    /// use toolsmith::{ToolShed, tool_fn};
    ///
    /// /// Adds two numbers.
    /// #[tool_fn]
    /// fn add(a: i64, b: i64) -> i64 {
    ///     a + b
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::call("add", serde_json::json!({"a": 2, "b": 3})),
    ///     ScriptedTurn::text("5"),
    /// ]);
    /// let session = AgentSession::builder(model.clone())
    ///     .with_model("m")
    ///     .with_toolshed(ToolShed::new().tool(Add))
    ///     .with_every_tool_declared(true)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(session.send("2 + 3?").await.unwrap().text, "5");
    /// // The model was sent `add` itself, and no `shed`.
    /// let declared = &model.requests()[0].tools;
    /// assert!(declared.shed.is_none());
    /// assert_eq!(declared.tools[0].name(), "add");
    /// # }
    /// ```
    ///
    /// [`ToolCallManager::set_every_tool_declared`]: toolsmith_core::ToolCallManager::set_every_tool_declared
    pub fn with_every_tool_declared(mut self, every: bool) -> Self {
        self.every_tool_declared = every;
        self
    }

    /// The retry policy of every tool that has none of its own, tools registered on the
    /// session's manager later included (a tool's own policy, from `#[tool_fn(retries = ..)]`
    /// or `ToolImpl::retry_config`, takes precedence): the manager's
    /// [`set_retry_policy`](toolsmith_core::ToolCallManager::set_retry_policy).
    pub fn with_retry_policy(mut self, policy: ToolRetryConfig) -> Self {
        self.retry_policy = Some(policy);
        self
    }

    /// Sampling and output options sent with every request.
    pub fn with_options(mut self, options: ChatOptions) -> Self {
        self.options = options;
        self
    }

    /// A hook run around every tool call; hooks run in the order they were added.
    pub fn with_hook(mut self, hook: impl ToolHook + 'static) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// The approval callback asked before each call to a destructive tool: a
    /// [`ToolApproval`], or a closure `Fn(&ToolCallRequest) -> bool` (`false` denies).
    ///
    /// A closure's parameter needs its type written, `|call: &ToolCallRequest| ..`: Rust does
    /// not infer it through the trait, and `|call| ..` fails to compile ("type annotations
    /// needed", or "implementation of `FnOnce` is not general enough").
    ///
    /// ```
    /// use toolsmith::ToolCallRequest;
    /// use toolsmith::harness::agent::AgentSession;
    /// use toolsmith::harness::model::ScriptedModel;
    ///
    /// let session = AgentSession::builder(ScriptedModel::new([]))
    ///     .with_model("scripted")
    ///     .with_approval(|call: &ToolCallRequest| call.name != "delete_everything")
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn with_approval(mut self, approval: impl ToolApproval + 'static) -> Self {
        self.approval = Some(Arc::new(approval));
        self
    }

    /// A receiver of the session's [`AgentEvent`](super::AgentEvent)s (any number, called in
    /// order): an [`AgentEventHandler`], or a closure `Fn(&AgentEvent)`.
    ///
    /// A closure's parameter needs its type written, `|event: &AgentEvent| ..`: Rust does
    /// not infer it through the trait, and `|event| ..` fails to compile ("implementation of
    /// `FnOnce` is not general enough", or "type annotations needed").
    ///
    /// ```
    /// use toolsmith::harness::agent::{AgentEvent, AgentSession};
    /// use toolsmith::harness::model::ScriptedModel;
    ///
    /// let session = AgentSession::builder(ScriptedModel::new([]))
    ///     .with_model("scripted")
    ///     .with_event_handler(|event: &AgentEvent| eprintln!("{event:?}"))
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn with_event_handler(mut self, handler: impl AgentEventHandler + 'static) -> Self {
        self.events.push(Arc::new(handler));
        self
    }

    /// A time limit for each model answer's tool calls together: calls still running then
    /// end as cancelled, and the model is told the limit ("Tool 'fetch' timed out after
    /// 30 s (the turn's deadline)"; one that had not started: "not run: the turn's deadline
    /// of 30 s passed"). A call that runs past its own time limit is told that one ("… (the
    /// call's timeout)").
    pub fn with_turn_deadline(mut self, deadline: Duration) -> Self {
        self.batch_deadline = Some(deadline);
        self
    }

    /// What to do when the model says the conversation is longer than its context window
    /// ([`ModelError::ContextTooLong`](crate::model::ModelError::ContextTooLong)): `policy` shortens the request's messages
    /// ([`DropOldestExchanges`](super::DropOldestExchanges) drops the oldest exchanges) and
    /// the model call is asked again, at most [`MAX_OVERFLOW_ATTEMPTS`](super::MAX_OVERFLOW_ATTEMPTS) times, each
    /// shortening reported as an [`AgentEvent::ContextShortened`](super::AgentEvent::ContextShortened); the kept conversation of
    /// [`send`](AgentSession::send) is the shortened one. By default there is none: the run
    /// ends with [`AgenticError::Model`] carrying the `ContextTooLong` and the run, and the
    /// kept conversation is left for the caller to shorten
    /// ([`edit_transcript`](AgentSession::edit_transcript)) or [`reset`](AgentSession::reset).
    /// The answer of [`send_as`](AgentSession::send_as) and [`run_as`](AgentSession::run_as)
    /// is asked for under it too, the question being answered and the request for the
    /// answer never shortened; what it shortens there is for that exchange only (the run's
    /// transcript, and the kept conversation, are as the run left them). With
    /// [`with_context_window`](Self::with_context_window), the policy is also asked before
    /// a request the session estimates too long is sent.
    ///
    /// The session's sub-agents (the `agent` group of its shed) inherit the policy, unless
    /// their [`SubAgentConfig`](super::SubAgentConfig) has one of its own.
    pub fn with_context_overflow(mut self, policy: impl ContextOverflow + 'static) -> Self {
        self.context_overflow = Some(Arc::new(policy));
        self
    }

    /// [`with_context_overflow`](Self::with_context_overflow) and
    /// [`with_compaction`](Self::with_compaction) shared with other sessions, and the window
    /// of [`with_context_window`](Self::with_context_window): a sub-agent's.
    pub(crate) fn with_shared_context_overflow(
        mut self,
        policy: Option<Arc<dyn ContextOverflow>>,
        compaction: Option<Arc<Compaction>>,
        window: Option<u64>,
    ) -> Self {
        self.context_overflow = policy;
        self.compaction = compaction;
        self.context_window = window;
        self
    }

    /// Summarises the older part of the conversation with the model before a request that
    /// nears the [context window](Self::with_context_window) (which it needs), instead of
    /// waiting for a [`ContextOverflow`] policy to cut it: see [`Compaction`] for when and
    /// what. The policy, if any, stays the backstop past the window.
    ///
    /// The session's sub-agents inherit it, unless their
    /// [`SubAgentConfig`](super::SubAgentConfig) has one of its own.
    pub fn with_compaction(mut self, compaction: Compaction) -> Self {
        self.compaction = Some(Arc::new(compaction));
        self
    }

    /// The model's context window, in tokens: before each model call, the session
    /// estimates the request's input tokens and, when they and the output the model will
    /// ask for ([`ChatModel::output_limit`](crate::model::ChatModel::output_limit): the
    /// request's `max_output_tokens`, else the client's own, such as the `max_tokens`
    /// Anthropic's client always sends) pass `tokens`, has its [`ContextOverflow`] policy
    /// shorten the conversation before sending it, so that the model is not asked a
    /// request it would refuse (each refusal costs a round trip, and on some APIs money).
    /// Each shortening is an [`AgentEvent::ContextShortened`](super::AgentEvent::ContextShortened) whose `estimate` says so;
    /// the same bound [`MAX_OVERFLOW_ATTEMPTS`](super::MAX_OVERFLOW_ATTEMPTS) holds, counting the refusals of the same
    /// call; and when the policy shortens nothing, the request is sent as it is, and the
    /// model decides.
    ///
    /// The estimate ([`ContextEstimate`](super::ContextEstimate)) is the input tokens the provider reported for
    /// the previous request the conversation continues, exact, plus what was added since
    /// at one token per 3 bytes of text and JSON (tokenizers average about 4 characters a
    /// token: the estimate errs long) and an image at the most any provider counts for its
    /// size in pixels, at most 1,600 tokens (1,600 when its size is unknown; never by its
    /// base64 length); the first request, or one
    /// after a shortening or an [`edit_transcript`](AgentSession::edit_transcript), is
    /// counted whole that way. The
    /// model's refusal ([`ModelError::ContextTooLong`](crate::model::ModelError::ContextTooLong)) is still answered as
    /// [`with_context_overflow`](Self::with_context_overflow) says, should the estimate
    /// fall short.
    ///
    /// A window needs a policy, which decides what the conversation loses, or a
    /// [`with_compaction`](Self::with_compaction): `build()` fails with
    /// [`AgenticError::Config`] naming them when there is neither (none is chosen
    /// silently). A window of 0 is refused too. The session's sub-agents inherit the window
    /// with the policy, unless their [`SubAgentConfig`](super::SubAgentConfig) has one of
    /// its own (give it one when their model's window differs).
    ///
    /// ```
    /// use toolsmith::harness::agent::{AgentEvent, AgentSession, DropOldestExchanges};
    /// use toolsmith::harness::model::{ChatResponse, Message, ScriptedModel, ScriptedTurn, Usage};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     // The provider counts 900 tokens of a window of 1000.
    ///     ScriptedTurn::text("Paris.").with_usage(Usage::new(900, 2)),
    ///     ScriptedTurn::respond(|request| {
    ///         // The next question (600 bytes: at least 200 tokens) would pass it: sent
    ///         // without the first exchange, never refused.
    ///         assert_eq!(request.messages.len(), 1);
    ///         Ok(ChatResponse::text("Rome."))
    ///     }),
    /// ]);
    /// let session = AgentSession::builder(model)
    ///     .with_model("scripted")
    ///     .with_context_overflow(DropOldestExchanges::new())
    ///     .with_context_window(1000)
    ///     .with_event_handler(|event: &AgentEvent| {
    ///         if let AgentEvent::ContextShortened { estimate, .. } = event {
    ///             assert!(estimate.is_some_and(|e| e.input_tokens > 1000));
    ///         }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// session.send("What is the capital of France?").await.unwrap();
    /// let question = format!("{} And of Italy?", " ".repeat(600));
    /// assert_eq!(session.send(question).await.unwrap().text, "Rome.");
    /// # }
    /// ```
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// What to do with the images the model will not take, before a request and after a
    /// refusal.
    ///
    /// Before each request, with `true` (the default), the images the model's
    /// [`ImageLimits`](crate::model::ImageLimits) refuse
    /// ([`ChatModel::image_limits`]: a type it does not take, more pixels a side than it
    /// takes, animated where it takes none, past the most images or the most bytes of
    /// images a request, too large for a request of many images) are replaced by a note
    /// saying why ("[image removed: 9000x4000 px, more than the 8000 px a side the model
    /// takes]"), reported as an [`AgentEvent::ImagesOverLimits`](super::AgentEvent::ImagesOverLimits). Of a request past the
    /// most images or the most bytes, the oldest go; of a request past the many-images
    /// rule (Anthropic's 2000 px a side beyond 20 images), the oldest of the images too
    /// large for it, until the request is within the rule or none is left too large: the
    /// latest screenshots stay. A count rule that removes any removes a quarter of its
    /// limit more, the oldest, never one of the newest it leaves (20 screenshots: down to
    /// 15), so that a conversation gaining one a turn crosses it every few turns: each
    /// removal changes an old message, and a prompt cache is read only up to it. The notes
    /// are kept in the conversation, so each image is removed once.
    ///
    /// When the model refuses a request because it cannot read one of its images
    /// ([`ModelError::ImageRefused`](crate::model::ModelError::ImageRefused): a file that begins as a PNG but is corrupt, an
    /// animated GIF, an image too large in pixels), with `true` the image the
    /// refusal names (its `image`: Anthropic says which, in a path its client maps back to
    /// the request) is replaced by a note naming its media type and size ("[image removed:
    /// the model could not read it (image/png, 1234 bytes)]"; a user message keeps its
    /// text, after the note, a tool result its call id and other parts), reported as an
    /// [`AgentEvent::ImagesRemoved`](super::AgentEvent::ImagesRemoved), and the same model call is asked again; a refusal
    /// naming another image has that one removed too, each time one image fewer. A refusal
    /// that names none (OpenAI, Gemini) has every image of the request (a user message's,
    /// a tool result's) replaced so, and is asked again once: a refusal after that ends the
    /// run with [`AgenticError::Model`] carrying the `ImageRefused` and the run, as does one
    /// when no image is left. The kept conversation of [`send`](AgentSession::send) is the
    /// one without the removed images, so the next `send` does not fail the same way. A
    /// request without images is not asked again. The typed answer's exchange
    /// ([`send_as`](AgentSession::send_as)) is asked under it too.
    ///
    /// On by default because the image stays in the conversation: without removing it,
    /// every later request carries it and is refused the same way, and the session cannot
    /// go on at all. With `false`, nothing is removed before sending either: an image over
    /// the model's limits is sent, and the provider's refusal is the caller's to see; the
    /// run ends with the refusal at once, and the kept conversation is left for the caller
    /// to mend ([`edit_transcript`](AgentSession::edit_transcript)). The sub-agents of the
    /// session ([`ToolPreset::agent`](crate::ToolPreset::agent)) follow its setting.
    ///
    /// ```
    /// use toolsmith::Image;
    /// use toolsmith::harness::agent::{AgentEvent, AgentSession, UserInput};
    /// use toolsmith::harness::model::{ChatResponse, ModelError, ScriptedModel, ScriptedTurn};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::error(ModelError::ImageRefused {
    ///         provider: "anthropic".into(),
    ///         status: 400,
    ///         message: "Could not process image".into(),
    ///         image: None,
    ///     }),
    ///     ScriptedTurn::respond(|request| {
    ///         // Asked again without the image, its text kept.
    ///         assert!(request.messages[0].images().is_empty());
    ///         assert!(request.messages[0].text().unwrap().ends_with("What is this?"));
    ///         Ok(ChatResponse::text("I could not see the image."))
    ///     }),
    /// ]);
    /// let session = AgentSession::builder(model)
    ///     .with_model("scripted")
    ///     .with_event_handler(|event: &AgentEvent| {
    ///         if let AgentEvent::ImagesRemoved { removed, .. } = event {
    ///             assert_eq!(*removed, 1);
    ///         }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let broken = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n(cut off)").unwrap();
    /// let run = session
    ///     .send_input(UserInput::new("What is this?").image(broken))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(run.text, "I could not see the image.");
    /// // The kept conversation has no image left to refuse.
    /// assert!(session.transcript().await[0].images().is_empty());
    /// # }
    /// ```
    pub fn with_unreadable_images_removed(mut self, remove: bool) -> Self {
        self.unreadable_images_removed = remove;
        self
    }

    /// Runs pause between model calls while `pause` says so. The session's sub-agents (the
    /// `agent` group of its shed) are held with it: a child makes no model call while the
    /// session is paused (its status stays `running`; the group's `pause` pauses one alone).
    pub fn with_pause(mut self, pause: PauseHandle) -> Self {
        self.pause = Some(pause);
        self
    }

    /// A parent session's hooks, run before this session's own, its approval where this
    /// session has none, and its setting for images: a sub-agent's.
    pub(crate) fn with_guards(mut self, guards: &SessionGuards) -> Self {
        self.hooks.splice(0..0, guards.hooks.iter().cloned());
        if self.approval.is_none() {
            self.approval.clone_from(&guards.approval);
        }
        self.unreadable_images_removed = guards.unreadable_images_removed;
        self
    }

    /// The session's cancellation token (default: a new one).
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Builds the session: its parts, then every tool of the shed from them.
    ///
    /// A tool the model cannot be declared ([`ChatModel::check_declarations`]: for Gemini,
    /// one whose schema is recursive) is an [`AgenticError::Config`] naming it and the
    /// model's reason, whether or not `shed` offers it at first. A sub-agent's session is
    /// built, and so checked against its own model, when the sub-agent starts: a refusal is
    /// that call's error. Tools registered in the manager after `build()` (an MCP server's
    /// changed list, [`tool_manager`](AgentSession::tool_manager)`().register`) are not
    /// checked: a request declaring one the model refuses fails with
    /// [`ModelError::InvalidRequest`](crate::model::ModelError::InvalidRequest), nothing sent.
    pub fn build(self) -> Result<AgentSession, AgenticError> {
        static SESSIONS: AtomicU64 = AtomicU64::new(1);
        let model_name = self.model_name.filter(|n| !n.is_empty()).ok_or_else(|| {
            AgenticError::Config(
                "no model name: call `.with_model(\"...\")` on the builder".to_owned(),
            )
        })?;
        if self.token_budget == Some(0) {
            return Err(AgenticError::Config(
                "a token budget of 0 allows no model call: give `.with_token_budget(..)` at \
                 least 1"
                    .to_owned(),
            ));
        }
        match (
            self.context_window,
            self.context_overflow.is_some() || self.compaction.is_some(),
        ) {
            (Some(0), _) => {
                return Err(AgenticError::Config(
                    "a context window of 0 tokens fits no request: give \
                     `.with_context_window(..)` the model's window"
                        .to_owned(),
                ));
            }
            (Some(window), false) => {
                return Err(AgenticError::Config(format!(
                    "`.with_context_window({window})` needs a policy to shorten the \
                     conversation with: add `.with_context_overflow(..)` (e.g. \
                     `DropOldestExchanges::new()`) or `.with_compaction(Compaction::new())`"
                )));
            }
            _ => {}
        }
        if let Some(compaction) = &self.compaction {
            if self.context_window.is_none() {
                return Err(AgenticError::Config(
                    "`.with_compaction(..)` starts at a share of the model's context window: \
                     add `.with_context_window(..)`"
                        .to_owned(),
                ));
            }
            if let Some(problem) = compaction.problem() {
                return Err(AgenticError::Config(problem));
            }
        }
        let session_id = self
            .session_id
            .unwrap_or_else(|| format!("session-{}", SESSIONS.fetch_add(1, Ordering::Relaxed)));
        let mut parts = SessionParts::in_memory(session_id);
        if let Some(memory) = self.memory {
            parts.memory = memory;
        }
        if let Some(context) = self.context {
            parts.context = context;
        }
        if let Some(embedder) = self.embedder {
            parts = parts.with_embedder(embedder);
        }
        let cancellation = self.cancellation.unwrap_or_default();
        // Sub-agent tools built from the session stop their children when it is cancelled.
        parts
            .state
            .insert_arc(Arc::new(SessionCancellation(cancellation.clone())));
        // ... and pause with it.
        if let Some(pause) = &self.pause {
            parts
                .state
                .insert_arc(Arc::new(SessionPause(pause.clone())));
        }
        // ... and are found by `stop_sub_agents`.
        parts
            .state
            .insert_arc(Arc::new(SessionSubAgents::default()));
        // ... and hold their children to the session's hooks and approval.
        parts.state.insert_arc(Arc::new(SessionGuards {
            hooks: self.hooks.clone(),
            approval: self.approval.clone(),
            unreadable_images_removed: self.unreadable_images_removed,
        }));
        // ... and let them shorten a conversation as the session does.
        if self.context_overflow.is_some() || self.compaction.is_some() {
            parts.state.insert_arc(Arc::new(SessionContextOverflow {
                policy: self.context_overflow.clone(),
                compaction: self.compaction.clone(),
                window: self.context_window,
            }));
        }
        let manager = self.shed.build(parts.clone())?;
        // Every registered tool, not only those offered first: `shed` activates the others
        // later, and a tool the model cannot be sent should fail here, not in a run.
        check_declarations(&*self.model, &manager, || {
            "a tool of the session (registered in its shed)".to_owned()
        })?;
        if let Some(policy) = self.retry_policy {
            manager.set_retry_policy(Some(policy));
        }
        manager.set_every_tool_declared(self.every_tool_declared);
        Ok(AgentSession {
            model: self.model,
            model_name,
            system_prompt: self.system_prompt,
            manager: Arc::new(manager),
            parts,
            max_turns: self.max_turns,
            token_budget: self.token_budget,
            final_answer_on_limit: self.final_answer_on_limit,
            streaming: self.streaming,
            options: self.options,
            hooks: self.hooks,
            approval: self.approval,
            events: self.events.into(),
            batch_deadline: self.batch_deadline,
            cancellation,
            conversation: tokio::sync::Mutex::new(Kept::default()),
            pause: self.pause,
            context_overflow: self.context_overflow,
            context_window: self.context_window,
            compaction: self.compaction,
            unreadable_images_removed: self.unreadable_images_removed,
        })
    }
}
