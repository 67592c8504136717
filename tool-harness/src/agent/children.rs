//! Background sub-agents as one command group, `agent`: `start`, `check`, `result`, `pause`,
//! `resume`, `stop` (spec 01 §4 and §7). Built by [`ToolPreset::agent`](crate::ToolPreset::agent).

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroU32;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use futures::FutureExt as _;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use toolsmith_core::{
    CancellationToken, SessionParts, ToolError, ToolImpl, ToolShed, drop_panic_payload, is_blank,
    tool_fn,
};
use tracing::Instrument as _;

use super::compaction::Compaction;
use super::context_overflow::{ContextOverflow, SessionContextOverflow};
use super::events::AgentEvent;
use super::ledger::{RunLedger, RunOrigin};
use super::pause::PauseHandle;
use super::session::{SessionCancellation, SessionGuards, SessionPause};
use super::token_estimate::TokenEstimate;
use super::tool::{answer, failure};
use super::{AgentRun, AgentSession, AgenticError};
use crate::model::{ChatModel, DebugName, Message, Usage};

/// The command group's name.
pub const AGENT_TOOL: &str = "agent";
/// How many model calls a child may make unless its `start` says otherwise.
pub const DEFAULT_CHILD_MAX_TURNS: usize = 10;
/// How many children may run at once unless configured otherwise.
pub const DEFAULT_MAX_CHILDREN: usize = 4;
/// The longest `result { wait_ms }` waits.
pub const MAX_RESULT_WAIT: Duration = Duration::from_secs(600);
/// How many of a child's latest tool calls `check` reports.
const LAST_CALLS: usize = 5;
/// How many ended children (finished, failed or stopped) a parent keeps, with their answers
/// and transcripts; starting another lets the oldest go.
pub const MAX_ENDED_CHILDREN: usize = 32;
/// How long `stop` waits for the child's run to end (it ends at its next await).
const STOP_WAIT: Duration = Duration::from_secs(5);
/// How many characters of an id or a tool name a model sent an error (or `check`) quotes.
const MAX_QUOTED_CHARS: usize = 240;

/// How sub-agents are made: their model, system prompt and tools, and the limits on them.
///
/// ```
/// use toolsmith::harness::agent::SubAgentConfig;
/// use toolsmith::harness::model::ScriptedModel;
///
/// let config = SubAgentConfig::new(ScriptedModel::default(), "child-model")
///     .with_system_prompt("You do one small task and report.")
///     .with_max_children(2)
///     .with_max_depth(1);
/// assert_eq!(config.max_children(), 2);
/// ```
#[derive(Clone)]
pub struct SubAgentConfig {
    model: Arc<dyn ChatModel>,
    model_name: String,
    system_prompt: Option<String>,
    tools: Vec<Arc<dyn ToolImpl>>,
    max_turns: usize,
    max_children: usize,
    max_depth: usize,
    token_budget: Option<u64>,
    context_overflow: Option<Arc<dyn ContextOverflow>>,
    context_window: Option<u64>,
    compaction: Option<Arc<Compaction>>,
    streaming: bool,
}

impl std::fmt::Debug for SubAgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgentConfig")
            .field("model", &DebugName(self.model.as_ref()))
            .field("model_name", &self.model_name)
            .field("tools", &self.tool_names())
            .field("max_turns", &self.max_turns)
            .field("max_children", &self.max_children)
            .field("max_depth", &self.max_depth)
            .field("token_budget", &self.token_budget)
            .field("context_overflow", &self.context_overflow.is_some())
            .field("context_window", &self.context_window)
            .field("compaction", &self.compaction)
            .field("streaming", &self.streaming)
            .finish()
    }
}

impl SubAgentConfig {
    /// Children that talk to `model` (requesting `model_name`), with no tools, at most
    /// [`DEFAULT_CHILD_MAX_TURNS`] model calls each, [`DEFAULT_MAX_CHILDREN`] at once, and no
    /// grandchildren (depth 1).
    #[must_use]
    pub fn new(model: impl ChatModel + 'static, model_name: impl Into<String>) -> Self {
        Self {
            model: Arc::new(model),
            model_name: model_name.into(),
            system_prompt: None,
            tools: Vec::new(),
            max_turns: DEFAULT_CHILD_MAX_TURNS,
            max_children: DEFAULT_MAX_CHILDREN,
            max_depth: 1,
            token_budget: None,
            context_overflow: None,
            context_window: None,
            compaction: None,
            streaming: false,
        }
    }

    /// The children's system prompt.
    #[must_use]
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The tools every child gets (a `start` may narrow them), e.g.
    /// `ToolPreset::minimal_sub_agent(fs).as_child_tools()?`. A child's model is sent each of
    /// them from its first call, and no `shed`.
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<Arc<dyn ToolImpl>>) -> Self {
        self.tools = tools;
        self
    }

    /// The most model calls a child may make when its `start` does not say (at least 1).
    #[must_use]
    pub fn with_max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = max_turns.max(1);
        self
    }

    /// The token budget of each child's run (at least 1), as
    /// [`AgentSessionBuilder::with_token_budget`](super::AgentSessionBuilder::with_token_budget)
    /// bounds a session's: a child that spends it ends failed, and its `result` says so. It
    /// is the child's own. The parent's budget bounds it too: a child's tokens count in the
    /// run that started it as they are spent, and a child's model call is not made once
    /// that run (or one above it) has spent its budget, even after that run has ended (the
    /// child ends failed, [`AgenticError::CallerTokenBudget`](super::AgenticError::CallerTokenBudget)).
    /// By default a child has no budget of its own.
    #[must_use]
    pub fn with_token_budget(mut self, tokens: u64) -> Self {
        self.token_budget = Some(tokens.max(1));
        self
    }

    /// The children's [`ContextOverflow`] policy
    /// ([`AgentSessionBuilder::with_context_overflow`](super::AgentSessionBuilder::with_context_overflow)).
    /// Without one, children built with a session (the `agent` group of its shed,
    /// [`ToolPreset::agent`](crate::ToolPreset::agent)) share the session's policy, if it
    /// has one: a child's conversation outgrows the model's window as the parent's does,
    /// and a child that fails on it loses its work. To keep a policy from the children,
    /// give them one that shortens nothing
    /// (`|_: &mut Vec<Message>, _: &Overflow<'_>| Shortened::NOTHING`).
    #[must_use]
    pub fn with_context_overflow(mut self, policy: impl ContextOverflow + 'static) -> Self {
        self.context_overflow = Some(Arc::new(policy));
        self
    }

    /// The children's model's context window, in tokens
    /// ([`AgentSessionBuilder::with_context_window`](super::AgentSessionBuilder::with_context_window)):
    /// a child's request estimated to pass it is shortened by the children's policy before
    /// it is sent. Without one, children built with a session share the session's window
    /// (with its policy), if it has one; give them their own when their model's window is
    /// not the session's model's. A window needs a policy or a [`Compaction`], the config's
    /// or the session's: without any, a child's `start` fails, saying so.
    #[must_use]
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// The children's [`Compaction`]
    /// ([`AgentSessionBuilder::with_compaction`](super::AgentSessionBuilder::with_compaction)),
    /// which needs a window, the config's or the session's. Without one, children built with
    /// a session share the session's, if it has one.
    #[must_use]
    pub fn with_compaction(mut self, compaction: Compaction) -> Self {
        self.compaction = Some(Arc::new(compaction));
        self
    }

    /// Whether the children stream their model's answers
    /// ([`AgentSessionBuilder::with_streaming`](super::AgentSessionBuilder::with_streaming)),
    /// so that their text comes as it is written, each piece an
    /// [`AgentEvent::TextDelta`] that reaches the parent's handlers and its run's stream as
    /// an [`AgentEvent::SubAgent`]. Off by default: only a UI showing a child's text needs it.
    #[must_use]
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// How many children of one parent may run (or be paused) at once (at least 1).
    #[must_use]
    pub fn with_max_children(mut self, max_children: usize) -> Self {
        self.max_children = max_children.max(1);
        self
    }

    /// How deep sub-agents may nest: 1 (the default) lets the session start children that
    /// cannot start their own; 2 lets those start one more level; and so on. 0 lets it start
    /// none: every `start` is refused, saying the limit. Past
    /// [`MAX_NESTED_RUNS`](super::MAX_NESTED_RUNS) runs above it (the session's own run among
    /// them), a child fails before its first model call whatever this says.
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// How many children may run at once.
    pub fn max_children(&self) -> usize {
        self.max_children
    }

    fn tool_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|t| t.shared_definition().name().to_owned())
            .collect()
    }
}

/// A child's state, as `check` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Running,
    Paused,
    Finished,
    Failed,
    Stopped,
}

impl Status {
    fn is_live(self) -> bool {
        matches!(self, Self::Running | Self::Paused)
    }
}

/// One of a child's recent tool calls.
#[derive(Debug, Clone, Serialize)]
struct CallSummary {
    tool: String,
    is_error: bool,
    result: String,
}

#[derive(Debug, Clone)]
struct ChildState {
    status: Status,
    turns: usize,
    usage: Usage,
    last_calls: VecDeque<CallSummary>,
    answer: Option<String>,
    failure: Option<String>,
    transcript: Vec<Message>,
}

/// What a child's task ends with: its run's outcome, or the payload of a panic that unwound
/// out of the run.
type ChildOutcome = std::thread::Result<Result<AgentRun, AgenticError>>;

impl ChildState {
    /// A child that has just started.
    fn running() -> Self {
        Self {
            status: Status::Running,
            turns: 0,
            usage: Usage::default(),
            last_calls: VecDeque::new(),
            answer: None,
            failure: None,
            transcript: Vec::new(),
        }
    }

    /// Records how the child `name` ended. A panic's payload is dropped with
    /// [`drop_panic_payload`]: it is the user's value, whose `Drop` may panic too, which
    /// must not unwind out of the child's task (the state's waiters would not be told).
    fn end(&mut self, name: &str, outcome: ChildOutcome) {
        match outcome {
            Err(panic) => {
                self.status = Status::Failed;
                self.failure = Some(ToolError::panicked(name, panic.as_ref()).to_string());
                drop_panic_payload(panic);
            }
            Ok(Ok(run)) => {
                match answer(name, &run) {
                    Ok(()) => {
                        self.status = Status::Finished;
                        self.answer = Some(run.text);
                    }
                    Err(failed) => {
                        self.status = Status::Failed;
                        self.failure = Some(failed);
                    }
                }
                self.transcript = run.transcript;
            }
            Ok(Err(AgenticError::Cancelled { run })) => {
                self.status = Status::Stopped;
                self.transcript = run.transcript;
            }
            Ok(Err(other)) => {
                self.status = Status::Failed;
                self.failure = Some(failure(name, &other));
                self.transcript = other
                    .run()
                    .map(|r| r.transcript.clone())
                    .unwrap_or_default();
            }
        }
    }
}

struct Child {
    state: watch::Sender<ChildState>,
    cancel: CancellationToken,
    pause: PauseHandle,
    task: JoinHandle<()>,
}

/// The children of one parent. Dropped with the parent's tools: every child still running
/// is cancelled then, so no child outlives its parent session.
struct Children {
    config: Arc<SubAgentConfig>,
    depth: usize,
    /// The token of the session these are the children of: cancelling it stops them.
    parent_cancel: CancellationToken,
    /// The pause handle of the session these are the children of, if it has one: pausing
    /// it holds them too.
    parent_pause: Option<PauseHandle>,
    /// The hooks and approval of the session these are the children of (and of its
    /// ancestors), which every call of theirs passes.
    guards: Arc<SessionGuards>,
    next_id: AtomicU64,
    agents: Mutex<HashMap<String, Child>>,
}

impl Children {
    /// Stops every child still running or paused (its grandchildren with it, whose tokens
    /// follow its token); how many were.
    fn stop_live(&self) -> usize {
        let agents = self.agents.lock().unwrap_or_else(PoisonError::into_inner);
        agents
            .values()
            .filter(|child| child.state.borrow().status.is_live())
            .inspect(|child| child.cancel.cancel())
            .count()
    }
}

/// The `agent` groups built with a session ([`AgentCommands::for_session`]), for
/// [`AgentSession::stop_sub_agents`]. Weak: the groups live with the session's tools.
#[derive(Default)]
pub(crate) struct SessionSubAgents(Mutex<Vec<Weak<Children>>>);

impl SessionSubAgents {
    fn register(&self, children: &Arc<Children>) {
        let mut groups = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        groups.retain(|group| group.strong_count() > 0);
        groups.push(Arc::downgrade(children));
    }

    /// Stops every running or paused child of these groups; how many were.
    pub(crate) fn stop_all(&self) -> usize {
        let groups: Vec<Arc<Children>> = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        groups.iter().map(|group| group.stop_live()).sum()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        let agents = self
            .agents
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for child in agents.values() {
            child.cancel.cancel();
            child.task.abort();
        }
    }
}

/// The `agent` command group: background sub-agents of the session it belongs to.
///
/// Usually built by [`ToolPreset::agent`](crate::ToolPreset::agent) inside a session's shed,
/// so that the children stop with the session and pass its hooks and approval. A child's
/// tokens count in the [`AgentRun::child_usage`](super::AgentRun::child_usage) of the run
/// whose call started it, built either way, and that run stops it if it ends cancelled,
/// stopped by a hook, by a panic or by its token budget, or is dropped before it ends. A run
/// that ends otherwise (with an answer, its model's error, its turns spent) leaves it
/// running: a `send` that continues the conversation (a retry after a passing error)
/// collects what the model started, and the children are bounded by their own turns and
/// the run's budget; [`AgentSession::stop_sub_agents`] stops those no run will collect. A
/// child runs on a task of the Tokio runtime its
/// `start` was called on: when that runtime shuts down before the child ends, the child ends
/// failed (its `result` says why) and frees its place, so that a session kept across
/// runtimes starts children on the next one.
#[derive(Clone)]
pub struct AgentCommands {
    children: Arc<Children>,
}

impl std::fmt::Debug for AgentCommands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentCommands")
            .field("config", &self.children.config)
            .field("depth", &self.children.depth)
            .finish_non_exhaustive()
    }
}

fn error(message: impl std::fmt::Display) -> ToolError {
    ToolError::execution(AGENT_TOOL, message)
}

/// `count` and the noun it counts, `one` or `many` by the count: `1 message`, `3 messages`.
fn counted(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// `text` the model sent, cut to [`MAX_QUOTED_CHARS`] (marked when cut), for an error to
/// quote: an id or a name of any length is the model's to send.
fn quoted(text: &str) -> std::borrow::Cow<'_, str> {
    toolsmith_core::provider::cut_to(text, MAX_QUOTED_CHARS)
}

impl AgentCommands {
    /// The commands for a session without a parent (depth 0): no session's cancellation
    /// stops the children, and no session's hooks hold them.
    pub fn new(config: SubAgentConfig) -> Self {
        Self::at_depth(
            Arc::new(config),
            0,
            (CancellationToken::new(), None),
            Arc::default(),
        )
    }

    /// The commands of the session `parts` belong to: cancelling it stops the children, its
    /// hooks and approval hold them, and its context overflow policy and window are theirs
    /// when `config` has none.
    pub(crate) fn for_session(mut config: SubAgentConfig, parts: &SessionParts) -> Self {
        if let Some(session) = parts.state.get::<SessionContextOverflow>() {
            if config.context_overflow.is_none() {
                config.context_overflow.clone_from(&session.policy);
            }
            if config.compaction.is_none() {
                config.compaction.clone_from(&session.compaction);
            }
            if config.context_window.is_none() {
                config.context_window = session.window;
            }
        }
        let cancel = parts
            .state
            .get::<SessionCancellation>()
            .map_or_else(CancellationToken::new, |session| session.0.clone());
        let pause = parts
            .state
            .get::<SessionPause>()
            .map(|session| session.0.clone());
        let guards = parts.state.get::<SessionGuards>().unwrap_or_default();
        let commands = Self::at_depth(Arc::new(config), 0, (cancel, pause), guards);
        if let Some(groups) = parts.state.get::<SessionSubAgents>() {
            groups.register(&commands.children);
        }
        commands
    }

    fn at_depth(
        config: Arc<SubAgentConfig>,
        depth: usize,
        (parent_cancel, parent_pause): (CancellationToken, Option<PauseHandle>),
        guards: Arc<SessionGuards>,
    ) -> Self {
        Self {
            children: Arc::new(Children {
                config,
                depth,
                parent_cancel,
                parent_pause,
                guards,
                next_id: AtomicU64::new(1),
                agents: Mutex::new(HashMap::new()),
            }),
        }
    }

    fn agents(&self) -> std::sync::MutexGuard<'_, HashMap<String, Child>> {
        self.children
            .agents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The state of the child `id` and its pause handle, or an error naming the ids there
    /// are.
    fn state(&self, id: &str) -> Result<(watch::Receiver<ChildState>, PauseHandle), ToolError> {
        let agents = self.agents();
        match agents.get(id) {
            Some(child) => Ok((child.state.subscribe(), child.pause.clone())),
            None => Err(self.unknown(id, &agents)),
        }
    }

    fn unknown(&self, id: &str, agents: &HashMap<String, Child>) -> ToolError {
        // Ids are taken only by children that were made, from 1 up: one below the next that
        // is not kept named a child that was let go.
        let started = self.children.next_id.load(Ordering::Relaxed);
        let id_quoted = quoted(id);
        if number_of(id).is_some_and(|n| n < started) {
            return error(format!(
                "sub-agent '{id_quoted}' ended and was let go: a session keeps the last \
                 {MAX_ENDED_CHILDREN} sub-agents that ended"
            ));
        }
        let mut ids: Vec<&str> = agents.keys().map(String::as_str).collect();
        ids.sort_unstable();
        if ids.is_empty() {
            error(format!("no sub-agent '{id_quoted}': none has been started"))
        } else {
            error(format!(
                "no sub-agent '{id_quoted}'; the sub-agents are {}",
                ids.join(", ")
            ))
        }
    }

    /// The tools a child whose token is `cancel` and pause handle `pause` gets: the
    /// configured ones, narrowed to `names`, and the `agent` commands one level deeper when
    /// the depth allows.
    fn child_tools(
        &self,
        names: Option<&[String]>,
        (cancel, pause): (&CancellationToken, &PauseHandle),
    ) -> Result<Vec<Arc<dyn ToolImpl>>, ToolError> {
        let children = &self.children;
        let mut tools = children.config.tools.clone();
        if children.depth + 1 < children.config.max_depth {
            tools.push(Arc::new(Self::at_depth(
                Arc::clone(&children.config),
                children.depth + 1,
                (cancel.clone(), Some(pause.clone())),
                Arc::clone(&children.guards),
            )));
        }
        let Some(names) = names else {
            return Ok(tools);
        };
        let available: Vec<String> = tools
            .iter()
            .map(|t| t.shared_definition().name().to_owned())
            .collect();
        if let Some(unknown) = names.iter().find(|n| !available.contains(n)) {
            return Err(ToolError::invalid_arguments(
                AGENT_TOOL,
                format!(
                    "/tools: a sub-agent cannot have the tool '{}'; it can have {}",
                    quoted(unknown),
                    if available.is_empty() {
                        "none".to_owned()
                    } else {
                        available.join(", ")
                    }
                ),
            ));
        }
        Ok(tools
            .into_iter()
            .zip(available)
            .filter(|(_, name)| names.contains(name))
            .map(|(tool, _)| tool)
            .collect())
    }

    fn child_session(
        &self,
        tools: Vec<Arc<dyn ToolImpl>>,
        max_turns: usize,
        state: &watch::Sender<ChildState>,
        pause: &PauseHandle,
        cancel: &CancellationToken,
    ) -> Result<AgentSession, ToolError> {
        let config = &self.children.config;
        let shed = ToolShed::new().tools(tools);
        let progress = state.clone();
        let mut builder = AgentSession::builder(Arc::clone(&config.model))
            .with_model(config.model_name.clone())
            .with_toolshed(shed)
            // A child's tools are few and chosen for it: each is declared from the start,
            // and no `shed` (which could find only them) takes a place beside them.
            .with_every_tool_declared(true)
            .with_max_turns(max_turns)
            .with_streaming(config.streaming)
            .with_shared_context_overflow(
                config.context_overflow.clone(),
                config.compaction.clone(),
                config.context_window,
            )
            .with_cancellation(cancel.clone())
            .with_pause(pause.clone())
            .with_guards(&self.children.guards)
            .with_event_handler(move |event: &AgentEvent| match event {
                AgentEvent::ModelResponse { usage, .. } => {
                    progress.send_modify(|s| {
                        s.turns += 1;
                        s.usage += *usage;
                    });
                }
                AgentEvent::ToolCallFinished {
                    name,
                    is_error,
                    summary,
                    ..
                } => progress.send_modify(|s| {
                    if s.last_calls.len() == LAST_CALLS {
                        s.last_calls.pop_front();
                    }
                    s.last_calls.push_back(CallSummary {
                        // The child's model names its calls: a made-up name of any length
                        // would reach the parent's model whole.
                        tool: quoted(name).into_owned(),
                        is_error: *is_error,
                        result: summary.chars().take(200).collect(),
                    });
                }),
                _ => {}
            });
        if let Some(prompt) = &config.system_prompt {
            builder = builder.with_system_prompt(prompt.clone());
        }
        if let Some(tokens) = config.token_budget {
            builder = builder.with_token_budget(tokens);
        }
        builder.build().map_err(error)
    }
}

/// The number of an id `agent-N` as the session writes it (`N` from 1, no sign, no leading
/// zero): `agent-01` or `agent-+1` names no child.
fn number_of(id: &str) -> Option<u64> {
    let digits = id.strip_prefix("agent-")?;
    let canonical = !digits.is_empty()
        && !digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit());
    canonical.then(|| digits.parse().ok()).flatten()
}

/// Ends a child as failed when its task is dropped armed, before its run ended: the Tokio
/// runtime it ran on shut down (a runtime made per call, a test's). It would otherwise be
/// "running" for ever, and hold its place among the `max_children`.
struct UnfinishedTask(Option<(watch::Sender<ChildState>, String)>);

impl UnfinishedTask {
    /// The run ended: its outcome says how the child did, in the state given back with the
    /// child's id.
    fn disarm(mut self) -> (watch::Sender<ChildState>, String) {
        self.0.take().expect("armed until disarmed")
    }
}

impl Drop for UnfinishedTask {
    fn drop(&mut self) {
        if let Some((state, name)) = &self.0 {
            state.send_modify(|s| {
                s.status = Status::Failed;
                s.failure = Some(format!(
                    "sub-agent '{name}' ended unfinished: the Tokio runtime it ran on shut \
                     down (or its task was dropped) before it answered"
                ));
            });
        }
    }
}

/// Lets the oldest ended children go, so that one more may end with at most
/// [`MAX_ENDED_CHILDREN`] kept: a long session would otherwise keep every transcript.
fn forget_oldest_ended(agents: &mut HashMap<String, Child>) {
    let mut ended: Vec<(u64, String)> = agents
        .iter()
        .filter(|(_, child)| !child.state.borrow().status.is_live())
        .map(|(id, _)| (number_of(id).unwrap_or(0), id.clone()))
        .collect();
    if ended.len() < MAX_ENDED_CHILDREN {
        return;
    }
    ended.sort_unstable();
    for (_, id) in &ended[..=ended.len() - MAX_ENDED_CHILDREN] {
        agents.remove(id);
    }
}

/// The status a child is reported with: a running one held by a paused session above it
/// (its pause handle follows the session's) makes no model call, so it is paused too.
fn reported(state: &ChildState, pause: &PauseHandle) -> Status {
    if state.status == Status::Running && pause.is_paused() {
        Status::Paused
    } else {
        state.status
    }
}

fn report(id: &str, state: &ChildState, pause: &PauseHandle) -> Value {
    json!({
        "id": id,
        "status": reported(state, pause),
        "turns": state.turns,
        "usage": {"input_tokens": state.usage.input_tokens, "output_tokens": state.usage.output_tokens},
        "last_calls": state.last_calls,
    })
}

/// Background sub-agents: start one on a task, check on it, collect its result, pause,
/// resume or stop it.
#[tool_fn(name = "agent", category = "agent")]
impl AgentCommands {
    /// Start a sub-agent on a task in the background; returns its id at once.
    pub async fn start(
        &self,
        /// The task, self-contained: the sub-agent sees nothing else.
        task: String,
        /// The names of the tools it may use (default: all that sub-agents get).
        tools: Option<Vec<String>>,
        /// The most model calls it may make.
        max_turns: Option<NonZeroU32>,
    ) -> Result<Value, ToolError> {
        let children = &self.children;
        // Only the session's own group can be at the limit: a child gets the group one level
        // deeper only below it. So it is the session that may start none.
        if children.depth >= children.config.max_depth {
            return Err(error(format!(
                "no sub-agent can be started here: the nesting limit is {}",
                children.config.max_depth
            )));
        }
        if is_blank(&task) {
            return Err(ToolError::invalid_arguments(
                AGENT_TOOL,
                "/task: the task is empty",
            ));
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Err(error("sub-agents need a Tokio runtime"));
        };
        // A child of a cancelled session is stopped with it, grandchildren too.
        let cancel = children.parent_cancel.child_token();
        // ... and paused with it.
        let pause = children
            .parent_pause
            .as_ref()
            .map_or_else(PauseHandle::new, PauseHandle::following);
        let tools = self.child_tools(tools.as_deref(), (&cancel, &pause))?;
        // The model may ask for fewer turns than the configured limit, never more; the
        // schema's `minimum: 1` refuses a start of none.
        let max_turns = max_turns.map_or(children.config.max_turns, |n| {
            usize::try_from(n.get()).map_or(children.config.max_turns, |n| {
                n.min(children.config.max_turns)
            })
        });
        let mut agents = self.agents();
        let live = agents
            .values()
            .filter(|c| c.state.borrow().status.is_live())
            .count();
        if live >= children.config.max_children {
            let running = counted(
                live,
                "sub-agent is already running",
                "sub-agents are already running",
            );
            return Err(error(format!(
                "{running}, the most allowed at once; wait for one to finish or stop one"
            )));
        }
        let state = watch::Sender::new(ChildState::running());
        let session = self.child_session(tools, max_turns, &state, &pause, &cancel)?;
        // Only a child that will run takes an ended one's place.
        forget_oldest_ended(&mut agents);
        // Taken once the child is made: every id below `next_id` named a child, so one not
        // kept was let go (see `unknown`).
        let id = format!("agent-{}", children.next_id.fetch_add(1, Ordering::Relaxed));
        // A task dropped before its run ended, polled or not (its runtime shut down), ends
        // the child as failed.
        let unfinished = UnfinishedTask(Some((state.clone(), id.clone())));
        // The child runs on a task of its own, outside this call: it is told the run it
        // counts in, the one whose call this is.
        let calling_run = RunLedger::of_calling_run();
        // A run cancelled or stopped stops the children its calls started.
        let abandoned = calling_run.as_ref().map(|ledger| ledger.abandoned());
        let child_cancel = cancel.clone();
        // The name the parent run's events give the child's ([`AgentEvent::SubAgent`]).
        let child_id = id.clone();
        // The child outlives this call: its run is a trace of its own, linked to the call
        // that started it. As the call's child, it would keep the call's span open (a span
        // ends after its children) as long as the child runs.
        let span = tracing::info_span!(parent: None, "sub_agent", toolsmith.agent.id = %id);
        span.follows_from(tracing::Span::current());
        let task = runtime.spawn(
            async move {
                let follow_parent_run = async {
                    match abandoned {
                        Some(abandoned) => abandoned.cancelled().await,
                        None => std::future::pending().await,
                    }
                    child_cancel.cancel();
                    std::future::pending::<()>().await;
                };
                // A panic in the child's model or tools ends it as failed, not running for ever.
                let mut estimate = TokenEstimate::default();
                let origin = RunOrigin::under(calling_run, &child_id);
                let run = AssertUnwindSafe(session.run_under(task.into(), origin, &mut estimate))
                    .catch_unwind();
                let outcome = tokio::select! {
                    outcome = run => outcome,
                    () = follow_parent_run => unreachable!("following the parent's run never ends"),
                };
                let (ended, name) = unfinished.disarm();
                ended.send_modify(|s| s.end(&name, outcome));
            }
            .instrument(span),
        );
        agents.insert(
            id.clone(),
            Child {
                state,
                cancel,
                pause,
                task,
            },
        );
        Ok(json!({"id": id, "status": Status::Running}))
    }

    /// How a sub-agent is doing, without waiting: its status, turns, tokens and latest calls.
    #[command(read_only)]
    pub fn check(
        &self,
        /// The sub-agent's id, as `start` gave it.
        id: String,
    ) -> Result<Value, ToolError> {
        let (state, pause) = self.state(&id)?;
        let state = state.borrow();
        Ok(report(&id, &state, &pause))
    }

    /// A sub-agent's final answer, waiting up to `wait_ms` for it to finish (a paused one is
    /// not waited for: it cannot finish until resumed).
    #[command(read_only)]
    pub async fn result(
        &self,
        /// The sub-agent's id, as `start` gave it.
        id: String,
        /// How long to wait for it to finish, in milliseconds (default 0: do not wait).
        wait_ms: Option<u64>,
    ) -> Result<String, ToolError> {
        let (mut state, pause) = self.state(&id)?;
        let wait = Duration::from_millis(wait_ms.unwrap_or(0)).min(MAX_RESULT_WAIT);
        if !wait.is_zero() {
            // Ended or not, the state below says what there is. A paused child makes no
            // model call, so waiting for its answer would wait out the whole time. One held
            // by its paused session is waited for: this call is that session's, and goes on
            // when the session resumes, the child with it.
            let _ = tokio::time::timeout(
                wait,
                state.wait_for(|s| !s.status.is_live() || s.status == Status::Paused),
            )
            .await;
        }
        let state = state.borrow();
        match reported(&state, &pause) {
            Status::Finished => Ok(state.answer.clone().unwrap_or_default()),
            Status::Failed => Err(error(state.failure.clone().unwrap_or_default())),
            Status::Stopped => Err(error(format!(
                "sub-agent '{id}' was stopped before it finished; it has no result (its \
                 transcript of {} is kept)",
                counted(state.transcript.len(), "message", "messages")
            ))),
            Status::Paused if state.status == Status::Running => Err(error(format!(
                "sub-agent '{id}' has not finished (paused after {}): its parent session is \
                 paused, and it makes no model call until that session is resumed",
                counted(state.turns, "model call", "model calls")
            ))),
            Status::Paused => Err(error(format!(
                "sub-agent '{id}' has not finished (paused after {}): it makes no model \
                 call until `resume`d; resume it, then call `result` with a `wait_ms`",
                counted(state.turns, "model call", "model calls")
            ))),
            Status::Running => Err(error(format!(
                "sub-agent '{id}' has not finished (running after {}); call `result` again \
                 with a `wait_ms`, or `check` on it",
                counted(state.turns, "model call", "model calls")
            ))),
        }
    }

    /// Pause a running sub-agent: its current tool calls finish, and it makes no new model
    /// call until resumed.
    pub fn pause(
        &self,
        /// The sub-agent's id.
        id: String,
    ) -> Result<Value, ToolError> {
        self.switch(&id, Status::Running, Status::Paused, |c| c.pause.pause())
    }

    /// Resume a paused sub-agent.
    pub fn resume(
        &self,
        /// The sub-agent's id.
        id: String,
    ) -> Result<Value, ToolError> {
        self.switch(&id, Status::Paused, Status::Running, |c| c.pause.resume())
    }

    /// Stop a sub-agent: its running tools are cancelled and it makes no further call; its
    /// transcript is kept.
    #[command(destructive)]
    pub async fn stop(
        &self,
        /// The sub-agent's id.
        id: String,
    ) -> Result<Value, ToolError> {
        let (mut state, pause) = {
            let agents = self.agents();
            let Some(child) = agents.get(&id) else {
                return Err(self.unknown(&id, &agents));
            };
            let status = child.state.borrow().status;
            if !status.is_live() {
                return Err(error(format!(
                    "sub-agent '{id}' is not running: it is {}",
                    serde_json::to_value(status)
                        .unwrap_or_default()
                        .as_str()
                        .unwrap_or("done")
                )));
            }
            child.cancel.cancel();
            (child.state.subscribe(), child.pause.clone())
        };
        let _ = tokio::time::timeout(STOP_WAIT, state.wait_for(|s| !s.status.is_live())).await;
        let state = state.borrow();
        Ok(report(&id, &state, &pause))
    }
}

impl AgentCommands {
    /// Moves the child `id` from `from` to `to`, doing `act` on it; any other state is an
    /// error naming the state it is in.
    fn switch(
        &self,
        id: &str,
        from: Status,
        to: Status,
        act: impl FnOnce(&Child),
    ) -> Result<Value, ToolError> {
        let agents = self.agents();
        let Some(child) = agents.get(id) else {
            return Err(self.unknown(id, &agents));
        };
        let mut moved = false;
        child.state.send_if_modified(|s| {
            moved = s.status == from;
            if moved {
                s.status = to;
            }
            moved
        });
        if !moved {
            let status = child.state.borrow().status;
            // Not paused itself, but held by its session.
            if from == Status::Paused
                && reported(&child.state.borrow(), &child.pause) == Status::Paused
            {
                return Err(error(format!(
                    "sub-agent '{id}' is held by its parent session, which is paused: it goes \
                     on when that session is resumed"
                )));
            }
            let name = |s: Status| {
                serde_json::to_value(s)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            };
            return Err(error(format!(
                "sub-agent '{id}' is {}, not {}",
                name(status),
                name(from)
            )));
        }
        act(child);
        Ok(report(id, &child.state.borrow(), &child.pause))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic payload whose own drop panics (`panic_any(PanicsOnDrop)`).
    struct PanicsOnDrop;

    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("the payload's drop broke");
        }
    }

    /// A child whose run unwound with such a payload is recorded as failed, and nothing
    /// unwinds out of the recording (before, the payload's drop panicked out of the child's
    /// task, past the state's `send_modify`, whose waiters were not told).
    #[test]
    fn a_panic_payload_whose_drop_panics_ends_the_child_as_failed_without_unwinding() {
        let payload = std::panic::catch_unwind(|| std::panic::panic_any(PanicsOnDrop)).unwrap_err();
        let mut state = ChildState::running();
        let recorded = std::panic::catch_unwind(AssertUnwindSafe(|| {
            state.end("agent-1", Err(payload));
        }));
        assert!(recorded.is_ok(), "the payload's drop unwound out of end()");
        assert!(matches!(state.status, Status::Failed));
        let failure = state.failure.expect("a failure");
        assert!(
            failure.contains("agent-1") && failure.contains("a panic with a non-text payload"),
            "{failure}"
        );
    }
}
