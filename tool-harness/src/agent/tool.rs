//! [`AgentTool`]: an agent given to another as a tool that runs it to its answer.

use std::sync::Arc;

use async_trait::async_trait;
use toolsmith_core::{
    Args, Tool, ToolArgs, ToolArguments, ToolCallContext, ToolCallResult, ToolDefinition,
    ToolError, ToolImpl, is_blank, scheme,
};
use tracing::Instrument as _;

use super::{AgentRun, AgentSession, AgenticError};
use crate::model::StopReason;

/// An agent as a tool (daimon's shape): one argument, `input`, the task; the result is the
/// agent's final text. The agent runs a fresh conversation for each call. A failed run —
/// the model's error, its `max_turns` or its token budget reached, a stop, an answer left
/// empty because the provider blocked it or the output limit cut it off — is an error
/// result the calling model reads ([`ToolCallResult::error`]), never a failure of the
/// caller's run; the caller's cancellation cancels the agent's run. The run goes on a task
/// of its own (a Tokio runtime's), aborted if the call is dropped: nested agents take no
/// stack from their callers; called where no Tokio runtime runs, the call fails, saying so.
/// Called by an agent's run, the tokens the agent spends (its sub-agents' too, and what it
/// spent before it failed or was cancelled) count in that run's
/// [`child_usage`](super::AgentRun::child_usage), and so in the caller's token budget.
///
/// The agent's own calls are held by its own session's hooks and approval, not the
/// caller's: the caller's hooks see the call of this tool (its `input`, and its answer), not
/// the tools the agent calls, whose results reach the caller's event handlers as
/// [`AgentEvent::SubAgent`](super::AgentEvent::SubAgent) events unredacted by the caller's
/// hooks. Give the agent's session the hooks it needs (`ToolPreset::agent`'s sub-agents, by
/// contrast, pass the parent session's).
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith::harness::agent::{AgentSession, AgentTool};
/// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let researcher = AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("Rust 1.0: May 2015.")]))
///     .with_model("scripted")
///     .with_system_prompt("You are a research specialist.")
///     .build()
///     .unwrap();
/// let tool = AgentTool::new(Arc::new(researcher), "research", "Research a question in depth.");
/// let manager = ToolCallManager::new("coordinator");
/// manager.register(Arc::new(tool)).unwrap();
/// let call = ToolCallRequest::new("1", "research",
///     ToolArguments::try_from(json!({"input": "When was Rust 1.0 released?"})).unwrap());
/// let result = manager.execute_one(&call).await.unwrap();
/// assert_eq!(result.content.to_text(), "Rust 1.0: May 2015.");
/// # }
/// ```
pub struct AgentTool {
    agent: Arc<AgentSession>,
    name: String,
    description: String,
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.name)
            .field("agent", &self.agent)
            .finish()
    }
}

impl AgentTool {
    /// The tool `name` with `description`, running `agent`.
    pub fn new(
        agent: Arc<AgentSession>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            agent,
            name: name.into(),
            description: description.into(),
        }
    }
}

#[async_trait]
impl ToolImpl for AgentTool {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(
            ToolDefinition::new(
                &self.name,
                &self.description,
                Args::new(
                    scheme::object()
                        .required(
                            "input",
                            scheme::string()
                                .min_len(1)
                                .describe("The task or question for the agent, self-contained."),
                        )
                        .build(),
                ),
            )
            .with_category("agent"),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let input = ToolArgs::new(&self.name, &arguments)
            .str("input")?
            .to_owned();
        // Whitespace and zero-width characters pass the schema's length, but give the agent
        // no task (and some APIs refuse a message of whitespace alone).
        if is_blank(&input) {
            return Err(ToolError::invalid_arguments(
                &self.name,
                "/input: the input is empty",
            ));
        }
        // Checked, not assumed: `tokio::spawn` below panics on any other executor.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Err(ToolError::execution(
                &self.name,
                "the agent needs a Tokio runtime: its run goes on a task of its own, and no \
                 Tokio runtime runs this call",
            ));
        };
        let context = ToolCallContext::current();
        let token = context
            .as_ref()
            .map(|context| context.cancellation().child_token())
            .unwrap_or_default();
        let agent = Arc::clone(&self.agent);
        // In the call's span (`execute_tool`): a spawned task starts in none, and the run's
        // spans would have been roots of their own, not under the call that made them.
        let run = async move { agent.run_with_cancellation(input, token).await }.in_current_span();
        // The agent's run goes on a task of its own, under this call's context (which tells
        // it the run it counts in): polled inside the caller's, each nested level took the
        // stack of every poll above it (about 200 KB in a debug build), and an agent that
        // can reach itself overflowed a thread's 2 MB in ten levels.
        let running = OnTaskOfItsOwn(match context {
            Some(context) => runtime.spawn(context.scope(run)),
            None => runtime.spawn(run),
        });
        let outcome = match running.finish().await {
            Ok(outcome) => outcome,
            // The run catches its own code's panics and the user's; what is left is a bug.
            Err(ended) => {
                return Err(ToolError::execution(
                    &self.name,
                    format!("the agent's run ended without an outcome: {ended}"),
                ));
            }
        };
        Ok(match outcome {
            Ok(run) => match answer(&self.name, &run) {
                Ok(()) => ToolCallResult::text(run.text),
                Err(failed) => ToolCallResult::error(failed),
            },
            Err(error) => ToolCallResult::error(failure(&self.name, &error)),
        })
    }
}

/// A run spawned for a call, aborted if the call is dropped before it ends: the caller gave
/// up, and the run (its children with it) stops as it would have, polled by the caller.
struct OnTaskOfItsOwn<T>(tokio::task::JoinHandle<T>);

impl<T> OnTaskOfItsOwn<T> {
    async fn finish(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for OnTaskOfItsOwn<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Whether a sub-agent's finished run has an answer for the calling model: an answer left
/// empty because the provider blocked it or the output limit cut it off is a failure that
/// says so (an empty result would read as an answer of nothing).
pub(super) fn answer(agent: &str, run: &AgentRun) -> Result<(), String> {
    if !run.text.trim().is_empty() {
        return Ok(());
    }
    let why = match run.stop_reason {
        Some(StopReason::ContentFilter) => "the provider blocked its answer (content filter)",
        Some(StopReason::MaxTokens) => {
            "its answer was cut off at the output token limit before any text"
        }
        _ => return Ok(()),
    };
    Err(format!("the agent '{agent}' gave no answer: {why}"))
}

/// What a calling model is told about a sub-agent's failed run.
pub(super) fn failure(agent: &str, error: &AgenticError) -> String {
    match error {
        AgenticError::MaxTurns { max_turns, .. } => format!(
            "the agent '{agent}' stopped after {max_turns} model calls without an answer; \
             give it a smaller task"
        ),
        AgenticError::TokenBudget { limit, spent, .. } => format!(
            "the agent '{agent}' spent its budget of {limit} tokens ({spent} spent) without an \
             answer; give it a smaller task"
        ),
        AgenticError::CallerTokenBudget { limit, .. } => format!(
            "the agent '{agent}' stopped without an answer: the budget of {limit} tokens of \
             the run that started it is spent"
        ),
        AgenticError::NestedTooDeep { limit, .. } => format!(
            "the agent '{agent}' was not run: it would be nested under {limit} agents' runs, \
             the most allowed; do the task without calling agents deeper"
        ),
        other => format!("the agent '{agent}' failed: {other}"),
    }
}
