//! [`AgenticError`]: the one error type of an agent session.

use toolsmith_core::{ToolShedError, drop_panic_payload, panic_message};

use super::AgentRun;
use crate::model::ModelError;

/// Why a session could not be built or a run did not end with an answer.
///
/// Tool failures are not among them: a tool's error, invalid arguments, an unknown or
/// inactive tool and a timeout all go back to the model as error results, and the run goes
/// on. Errors that end a run carry the run so far ([`AgenticError::run`]): its transcript and
/// token usage are never lost.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgenticError {
    /// The session's tools could not be built.
    #[error(transparent)]
    ToolShed(#[from] ToolShedError),
    /// The session was configured wrongly (named in the message).
    #[error("agent session: {0}")]
    Config(String),
    /// The model call failed (after the client's own retries).
    #[error("model call failed: {source}")]
    Model {
        /// What the client reported, quoting the API.
        #[source]
        source: ModelError,
        /// The run up to the failed call.
        run: Box<AgentRun>,
    },
    /// The model was still calling tools after `max_turns` model calls.
    #[error("the agent reached its limit of {max_turns} model calls without a final answer")]
    MaxTurns {
        /// The limit.
        max_turns: usize,
        /// The run up to the limit.
        run: Box<AgentRun>,
    },
    /// The run's token budget
    /// ([`with_token_budget`](super::AgentSessionBuilder::with_token_budget)) was spent
    /// before a model call: the call was not made. The conversation ends where the last
    /// turn left it, every call the model made answered.
    #[error(
        "the agent run reached its token budget: {spent} tokens spent of {limit} before a \
         model call"
    )]
    TokenBudget {
        /// The budget, in tokens (input and output).
        limit: u64,
        /// The tokens the run and its sub-agents had spent when the call was refused.
        spent: u64,
        /// The run up to the budget.
        run: Box<AgentRun>,
    },
    /// The token budget of a run above this one was spent before a model call of this one:
    /// this run is a sub-agent's (an [`AgentTool`](super::AgentTool) call's, a child of the
    /// `agent` group, theirs), and the run whose tool call made or started it, or a run
    /// above that, has spent its budget
    /// ([`with_token_budget`](super::AgentSessionBuilder::with_token_budget)), its
    /// sub-agents' tokens counted. The call was not made.
    #[error(
        "the run that started this agent reached its token budget: {spent} tokens spent of \
         {limit} before a model call"
    )]
    CallerTokenBudget {
        /// The budget of the run above, in tokens (input and output).
        limit: u64,
        /// The tokens that run and its sub-agents had spent when the call was refused.
        spent: u64,
        /// This run up to the budget.
        run: Box<AgentRun>,
    },
    /// The run was to be nested under more than [`MAX_NESTED_RUNS`](super::MAX_NESTED_RUNS)
    /// runs (an [`AgentTool`](super::AgentTool) called inside an `AgentTool`'s run, and so
    /// on, or a sub-agent of the `agent` group that deep): it made no model call. An
    /// `AgentTool` whose agent can reach itself lets a model recurse without end.
    #[error(
        "the agent run would be nested under {limit} runs already (agents called inside \
         agents' tool calls), the most allowed: it was not run"
    )]
    NestedTooDeep {
        /// The bound, [`MAX_NESTED_RUNS`](super::MAX_NESTED_RUNS).
        limit: usize,
        /// The run, empty but for its conversation.
        run: Box<AgentRun>,
    },
    /// The run's cancellation token fired.
    #[error("the agent run was cancelled")]
    Cancelled {
        /// The run up to the cancellation (calls that were running end as cancelled).
        run: Box<AgentRun>,
    },
    /// A `before_tool` hook stopped the run.
    #[error("a hook stopped the agent run: {reason}")]
    Stopped {
        /// The hook's reason.
        reason: String,
        /// The run up to the stop.
        run: Box<AgentRun>,
    },
    /// The user's code panicked: a `before_tool` or `after_tool` hook, the approval
    /// callback, the [context overflow policy](super::ContextOverflow), or the model client
    /// (`complete` / `stream`, and the `name`, `output_limit` and `image_limits` a run asks
    /// before a request). The panic is caught and the run
    /// ends as a stop does: every call the model made has its result in the transcript (so
    /// a session can run again from it), calls still running are cancelled, and each call
    /// reported started is reported finished. What becomes of each call is in the
    /// [hooks' module doc](super::ToolHook#panics). A tool's own panic is not one of these:
    /// it is the call's error, and the run goes on. A run both cancelled and panicking ends
    /// with this error: the panic is the one a caller must hear of.
    #[error("{during} panicked: {message}")]
    Panicked {
        /// What panicked, and during which call or request: "the before_tool hook #1 of
        /// call c1 (read_file)", "the approval of call c2 (bash)", "the after_tool hook #2
        /// of call c3 (write)", "the model (openai) answering request 4", "the model's
        /// name()", "the model's output_limit (before request 2)", "the context overflow
        /// policy (after request 3)".
        during: String,
        /// The panic's message (the text `panic!` was given).
        message: String,
        /// The run up to the panic.
        run: Box<AgentRun>,
    },
    /// The model's answer did not fit the type asked for
    /// ([`AgentSession::send_as`](super::AgentSession::send_as)), told what was wrong each
    /// time, in any of its [`MAX_ANSWER_ATTEMPTS`](super::MAX_ANSWER_ATTEMPTS) answers.
    #[error("the model's answer did not fit {type_name} in {attempts} attempts: {reason}")]
    AnswerInvalid {
        /// The type asked for.
        type_name: &'static str,
        /// The answers asked for.
        attempts: usize,
        /// What was wrong with the last one (the argument's path and the rule it broke).
        reason: String,
        /// The run, its model calls and usage counting every answer asked for.
        run: Box<AgentRun>,
    },
}

impl AgenticError {
    /// The variant's name, `snake_case`: `"tool_shed"`, `"config"`, `"model"`,
    /// `"max_turns"`, `"token_budget"`, `"caller_token_budget"`, `"nested_too_deep"`,
    /// `"cancelled"`, `"stopped"`, `"panicked"` or `"answer_invalid"`. A name for grouping
    /// failures (metrics, logs); the error's text says the rest. A run's `invoke_agent` span
    /// records it in `error.type` for the errors that end a run under way (`model`,
    /// `max_turns`, the budgets, `cancelled`, `stopped`, `panicked`; a typed run's span
    /// covers its answer's exchange, so `answer_invalid` too) and those that refuse it
    /// before its first model call (`nested_too_deep`, `panicked` for the model's `name()`);
    /// `config` and `tool_shed` come before a run has a span.
    ///
    /// ```
    /// use toolsmith_harness::agent::AgenticError;
    ///
    /// let error = AgenticError::Config("no model name".into());
    /// assert_eq!(error.kind_name(), "config");
    /// ```
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::ToolShed(_) => "tool_shed",
            Self::Config(_) => "config",
            Self::Model { .. } => "model",
            Self::MaxTurns { .. } => "max_turns",
            Self::TokenBudget { .. } => "token_budget",
            Self::CallerTokenBudget { .. } => "caller_token_budget",
            Self::NestedTooDeep { .. } => "nested_too_deep",
            Self::Cancelled { .. } => "cancelled",
            Self::Stopped { .. } => "stopped",
            Self::Panicked { .. } => "panicked",
            Self::AnswerInvalid { .. } => "answer_invalid",
        }
    }

    /// The run so far, for the errors that end a run.
    pub fn run(&self) -> Option<&AgentRun> {
        match self {
            Self::Model { run, .. }
            | Self::MaxTurns { run, .. }
            | Self::TokenBudget { run, .. }
            | Self::CallerTokenBudget { run, .. }
            | Self::NestedTooDeep { run, .. }
            | Self::Cancelled { run }
            | Self::Stopped { run, .. }
            | Self::Panicked { run, .. }
            | Self::AnswerInvalid { run, .. } => Some(run),
            Self::ToolShed(_) | Self::Config(_) => None,
        }
    }
}

/// A panic of the user's code, caught, that ends the run ([`AgenticError::Panicked`]).
#[derive(Debug)]
pub(super) struct CaughtPanic {
    pub(super) during: String,
    pub(super) message: String,
}

impl CaughtPanic {
    /// The panic whose payload (as `catch_unwind` gives it) is `payload`, `during` what.
    /// Logged with where it happened, which the panic hook's own message does not say. The
    /// payload, the user's value, is dropped with [`drop_panic_payload`]: its own `Drop` may
    /// panic, which must not unwind out of the run that contained the first panic.
    #[cold]
    pub(super) fn new(during: String, payload: Box<dyn std::any::Any + Send>) -> Self {
        let message = panic_message(payload.as_ref()).to_owned();
        drop_panic_payload(payload);
        tracing::error!(%during, panic = %message, "the agent run ends: user code panicked");
        Self { during, message }
    }

    pub(super) fn into_error(self, run: Box<AgentRun>) -> AgenticError {
        AgenticError::Panicked {
            during: self.during,
            message: self.message,
            run,
        }
    }
}
