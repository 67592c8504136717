//! [`AgentRun`]: what a run produced — the answer, the transcript, every tool call, the model
//! calls and the tokens used.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolsmith_core::{ToolArguments, ToolCallResult};

use crate::model::{Message, StopReason, Usage};

/// How one tool call of a run went, hooks included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The model call (1-based) whose answer made the call.
    pub turn: usize,
    /// The call's id.
    pub call_id: String,
    /// The tool called.
    pub name: String,
    /// The arguments of the call: in a session with hooks or an approval, as the tool reads
    /// them (the spellings validation repairs repaired, then a hook's rewrite), which the
    /// hooks saw, except that the hooks saw whole floats as integers, and a call that ran
    /// keeps them as the tool was given them (as sent); in a session without, as the model
    /// sent them (the tool reads them repaired). Shared with the request, not copied. Empty
    /// for a call whose arguments could not be read.
    pub arguments: ToolArguments,
    /// Whether a `before_tool` hook rewrote the arguments.
    pub rewritten: bool,
    /// Why the call was not run, when a hook or the approval callback denied it.
    pub denied: Option<String>,
    /// The result the model was shown (errors written for it, `is_error` set).
    pub result: ToolCallResult,
    /// How many times the tool ran (retries included; 0 when it did not run).
    pub attempts: u32,
    /// How long the call took.
    pub duration: Duration,
}

/// The outcome of [`AgentSession::run`](super::AgentSession::run) or
/// [`send`](super::AgentSession::send).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentRun {
    /// The model's final text (empty when the run ended without one).
    pub text: String,
    /// The whole conversation, in order: user messages, the model's answers and calls, and
    /// the calls' results under their ids.
    pub transcript: Vec<Message>,
    /// Every tool call of this run, in the order the model made them.
    pub tool_calls: Vec<ToolCallRecord>,
    /// How many times the model was called in this run.
    pub model_calls: usize,
    /// Tokens used by this run's model calls, summed.
    pub usage: Usage,
    /// Tokens used, until this run ended, by the sub-agents its tool calls made or started
    /// (through `agent`, an [`AgentTool`](super::AgentTool), or any session run inside one
    /// of its calls) and by theirs, counted apart. Only this run's: another run of the same
    /// session at the same time counts its own. A sub-agent still running when the run ends
    /// is not waited for; what it spends later shows in its `check` only. (A run cancelled,
    /// stopped by a hook, ended by a panic or by its token budget, or dropped before it
    /// ended stops the `agent` children its calls started.)
    pub child_usage: Usage,
    /// Why the model's last answer ended (`None` before any answer): a final text that is
    /// empty or partial says why here ([`StopReason::ContentFilter`] when the provider
    /// blocked it, [`StopReason::MaxTokens`] when it was cut off).
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
}

impl AgentRun {
    /// The run's tokens and its sub-agents' together.
    pub fn total_usage(&self) -> Usage {
        self.usage + self.child_usage
    }
}
