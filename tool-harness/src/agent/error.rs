//! [`AgenticError`]: the one error type of an agent session.

use toolsmith_core::ToolShedError;

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
}

impl AgenticError {
    /// The run so far, for the errors that end a run.
    pub fn run(&self) -> Option<&AgentRun> {
        match self {
            Self::Model { run, .. }
            | Self::MaxTurns { run, .. }
            | Self::Cancelled { run }
            | Self::Stopped { run, .. } => Some(run),
            Self::ToolShed(_) | Self::Config(_) => None,
        }
    }
}
