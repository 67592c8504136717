//! [`AgentEvent`]: what a session reports while it runs, for a UI to show progress.

use std::time::Duration;

use toolsmith_core::Progress;

use crate::model::{StopReason, Usage};

/// Something that happened in a run. Handlers get them in order, on the run's task.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A request is about to be sent to the model.
    ModelRequest {
        /// The model call's number in the run (1-based).
        turn: usize,
        /// The names of the tools declared on it.
        tools: Vec<String>,
    },
    /// More of the model's text, as it streams (in a session built
    /// [`with_streaming(true)`](super::AgentSessionBuilder::with_streaming)).
    TextDelta(String),
    /// The model answered.
    ModelResponse {
        /// The model call's number.
        turn: usize,
        /// How many tool calls it made.
        calls: usize,
        /// Why it stopped.
        stop_reason: StopReason,
        /// Tokens used by this call.
        usage: Usage,
    },
    /// A tool call is starting.
    ///
    /// Only calls that go on to run are reported, each by this event and a
    /// [`ToolCallFinished`](Self::ToolCallFinished). A call a `before_tool` hook or the
    /// approval denied never starts: it has [`ToolCallDenied`](Self::ToolCallDenied)
    /// instead (and no `after_tool`). A call whose arguments could not be read, or that the
    /// run's cancellation or a stopping hook kept from running, has no event; it is found
    /// in the run's [`tool_calls`](super::AgentRun::tool_calls) with the error the model
    /// was shown.
    ToolCallStarted {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
    },
    /// A `before_tool` hook or the approval denied a tool call: it does not run, and the
    /// model is shown the reason as the call's error result.
    ///
    /// Sent when the denial is decided: after its answer's
    /// [`ModelResponse`](Self::ModelResponse), before the
    /// [`ToolCallStarted`](Self::ToolCallStarted) events of that answer's calls that run and
    /// its [`TurnFinished`](Self::TurnFinished). Once a call; its record in the run's
    /// [`tool_calls`](super::AgentRun::tool_calls) has the same reason in `denied`.
    ToolCallDenied {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
        /// Who denied it.
        by: DeniedBy,
        /// Why, as the hook or the approval gave it; the model reads
        /// "The call was not run: " and this.
        reason: String,
    },
    /// A running tool reported progress.
    ToolCallProgress(Progress),
    /// A tool call ended.
    ToolCallFinished {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
        /// How long it took.
        duration: Duration,
        /// Whether the model is shown an error.
        is_error: bool,
        /// The result as the model sees it, as text.
        summary: String,
    },
    /// A model call's tool calls all ended and their results are in the transcript.
    TurnFinished {
        /// The model call's number.
        turn: usize,
        /// Tokens used by the run so far.
        usage: Usage,
    },
}

/// Who denied a tool call ([`AgentEvent::ToolCallDenied`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeniedBy {
    /// A [`ToolHook::before_tool`](super::ToolHook::before_tool) answered
    /// [`HookDecision::Deny`](super::HookDecision::Deny).
    Hook,
    /// The session's [`ToolApproval`](super::ToolApproval) answered
    /// [`ApprovalDecision::Deny`](super::ApprovalDecision::Deny).
    Approval,
}

/// Receives a session's events.
pub trait AgentEventHandler: Send + Sync {
    /// Called for each event; keep it short (send it to a channel for slow work).
    fn on_event(&self, event: &AgentEvent);
}

impl<F: Fn(&AgentEvent) + Send + Sync> AgentEventHandler for F {
    fn on_event(&self, event: &AgentEvent) {
        self(event);
    }
}
