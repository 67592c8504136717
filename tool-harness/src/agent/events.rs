//! [`AgentEvent`]: what a session reports while it runs, for a UI to show progress.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolsmith_core::{Progress, drop_panic_payload, panic_message};

use super::context_overflow::ContextEstimate;
use crate::model::{StopReason, Usage};

/// Something that happened in a run. Handlers get them in order, on the run's task (a
/// sub-agent's events, [`SubAgent`](Self::SubAgent), on the sub-agent's).
///
/// Serialized (for a server that sends a run's events on, [`AgentSession::events_of`](super::AgentSession::events_of))
/// as `{"type": "<variant in snake_case>", "data": <its fields>}`:
///
/// ```
/// use serde_json::json;
/// use toolsmith::harness::agent::AgentEvent;
///
/// let event = AgentEvent::ToolCallStarted { call_id: "c1".into(), name: "add".into() };
/// assert_eq!(
///     serde_json::to_value(&event).unwrap(),
///     json!({"type": "tool_call_started", "data": {"call_id": "c1", "name": "add"}})
/// );
/// let delta = AgentEvent::TextDelta("Hel".into());
/// assert_eq!(serde_json::to_value(&delta).unwrap(), json!({"type": "text_delta", "data": "Hel"}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
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
    /// The model answered. An answer that came as the run was cancelled is reported too
    /// (its tokens were spent), though the run ends without using it: it is not in the
    /// transcript, and its calls have no events.
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
    /// [`ToolCallFinished`](Self::ToolCallFinished). Every other call of an answer has one
    /// event instead, and no `after_tool`: a call a `before_tool` hook or the approval
    /// denied, [`ToolCallDenied`](Self::ToolCallDenied); one kept from running for another
    /// reason (its arguments could not be read, its id was repeated, the answer was cut
    /// off, the run was cancelled or a hook stopped it), [`ToolCallNotRun`](Self::ToolCallNotRun).
    /// Two exceptions, where the answer's calls are dropped, not reported (no request follows
    /// that would need their results): calls in the final answer asked for at the turn limit
    /// ([`with_final_answer_on_limit`](super::AgentSessionBuilder::with_final_answer_on_limit)),
    /// whose text alone the transcript keeps; and the calls of an answer that came as the
    /// run was cancelled, which the transcript does not keep at all (its
    /// [`ModelResponse`](Self::ModelResponse) is still sent, for the tokens it spent).
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
    /// A call the model made was not run, for a reason other than a denial (`why`): the
    /// model is shown `summary` as the call's error result.
    ///
    /// Sent when that is decided, as [`ToolCallDenied`](Self::ToolCallDenied) is: after its
    /// answer's [`ModelResponse`](Self::ModelResponse), before the
    /// [`ToolCallStarted`](Self::ToolCallStarted) events of that answer's calls that run and
    /// its [`TurnFinished`](Self::TurnFinished) (which a stopped or cancelled run does not
    /// send). The calls the hooks refuse or that never reach them are decided as the hooks
    /// go through the answer, in call order; the calls the hooks let through are decided
    /// after that (their approval is asked once the hooks have seen every call), in call
    /// order: so a call that a later call's stopping hook, or a cancellation during an
    /// approval, kept from running is reported after the events of the calls before it was
    /// decided. Once a call, and a call reported so has no other call event; its record in
    /// the run's [`tool_calls`](super::AgentRun::tool_calls) has the same result.
    ToolCallNotRun {
        /// The call's id.
        call_id: String,
        /// The tool it named (empty when it named none).
        name: String,
        /// Why it was not run.
        why: NotRunReason,
        /// The error result the model is shown, as text.
        summary: String,
    },
    /// A running tool reported progress.
    ToolCallProgress(Progress),
    /// A tool call ended, and its `after_tool` hooks have run.
    ///
    /// Sent as the call ends, while the answer's other calls may still run, so the calls of
    /// one answer finish in the order they end (not the order the model wrote them): a
    /// quick call beside a slow one is reported when it is done. All come after the
    /// answer's [`ToolCallStarted`](Self::ToolCallStarted) events and before its
    /// [`TurnFinished`](Self::TurnFinished); the run's records and the results the model
    /// reads keep the call order.
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
    /// The session's [`ContextOverflow`](super::ContextOverflow) policy shortened the
    /// conversation: either the model said the request was longer than its context window
    /// (`estimate` is `None`), and the same model call is asked again as request
    /// `turn + 1`; or the session's estimate of request `turn`, not yet sent, passed the
    /// window it was given
    /// ([`with_context_window`](super::AgentSessionBuilder::with_context_window)), and
    /// the request goes out shortened (or is estimated again) under the same number.
    ContextShortened {
        /// The model call (1-based) the model refused, or the one about to be sent.
        turn: usize,
        /// How many times the policy has been asked for this model call (1 the first).
        attempt: usize,
        /// Messages removed from the conversation.
        dropped: usize,
        /// Tool results whose content was replaced by a placeholder.
        emptied: usize,
        /// The estimate that passed the window, when it was the estimate (not the model's
        /// refusal) that had the conversation shortened.
        estimate: Option<ContextEstimate>,
    },
    /// The older part of the conversation was summarised by the model before request
    /// `turn` ([`Compaction`](super::Compaction)): `summarized` messages replaced by one
    /// user message holding the summary and the user's latest message. The summary's own
    /// model call is the one before `turn`.
    ContextCompacted {
        /// The model call (1-based) about to be sent with the compacted conversation.
        turn: usize,
        /// Messages replaced by the summary's message.
        summarized: usize,
        /// The estimate that passed the compaction's share of the window.
        estimate: ContextEstimate,
    },
    /// The model refused request `turn` because it could not read one of its images
    /// ([`ModelError::ImageRefused`](crate::model::ModelError::ImageRefused)): the image the
    /// refusal named (`image`), or every image of the request where it named none, was
    /// replaced by a note naming its media type and size, and the same model call is asked
    /// again as request `turn + 1` (after every image was removed, a refusal ends the
    /// run). Not sent by a session built
    /// [`with_unreadable_images_removed(false)`](super::AgentSessionBuilder::with_unreadable_images_removed).
    ImagesRemoved {
        /// The model call (1-based) the model refused.
        turn: usize,
        /// How many images were replaced.
        removed: usize,
        /// The one replaced, when the refusal said which: its index among request
        /// `turn`'s images ([`ModelError::ImageRefused`](crate::model::ModelError::ImageRefused)'s
        /// `image`); `None` when every image was.
        image: Option<usize>,
        /// The API's message, as the refusal quoted it.
        reason: String,
    },
    /// Before request `turn` was sent, the images of the conversation that the model's
    /// [`ImageLimits`](crate::model::ImageLimits) refuse
    /// ([`ChatModel::image_limits`](crate::model::ChatModel::image_limits): a type the model
    /// does not take, too many pixels a side, animated where the model takes none, past the
    /// most images or the most bytes of images a request, or too large for a request of
    /// many images) were replaced by a note saying why, in the
    /// request and in the conversation the session keeps, so that each is removed once.
    /// Sent apart from [`ImagesRemoved`](Self::ImagesRemoved), which follows the model's
    /// own refusal. Not sent by a session built
    /// [`with_unreadable_images_removed(false)`](super::AgentSessionBuilder::with_unreadable_images_removed).
    ImagesOverLimits {
        /// The model call (1-based) about to be sent.
        turn: usize,
        /// The note that replaced each removed image, oldest image first, each saying why
        /// ("[image removed: 9000x4000 px, more than the 8000 px a side the model takes]").
        removed: Vec<String>,
    },
    /// A model call's tool calls all ended and their results are in the transcript.
    TurnFinished {
        /// The model call's number.
        turn: usize,
        /// Tokens used by the run's own model calls so far (its sub-agents' are apart, in
        /// [`AgentRun::child_usage`](super::AgentRun::child_usage) once the run ends).
        usage: Usage,
    },
    /// An event of a sub-agent's run: a run made or started by one of this run's tool calls
    /// (the `agent` group's `start`, an [`AgentTool`](super::AgentTool) call, any session
    /// run inside a call), whose tokens count in this run's
    /// [`child_usage`](super::AgentRun::child_usage). Every event the sub-agent's run
    /// reports comes so, in its order, wrapped once a level: a grandchild's event is a
    /// `SubAgent` of the child holding a `SubAgent` of the grandchild.
    ///
    /// The session's handlers get them whenever the sub-agent reports them, from the
    /// sub-agent's task: a background sub-agent (`agent start`) goes on after the run that
    /// started it has ended, and its later events still reach the handlers. The stream of
    /// [`AgentSession::events_of`](super::AgentSession::events_of) gets them while the run
    /// that started the sub-agent lasts, and not after: a stream that has ended stays ended,
    /// and a run that collects the sub-agent's `result` later does not stream its events
    /// (it did not start it).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::harness::agent::AgentEvent;
    ///
    /// let event = AgentEvent::SubAgent {
    ///     agent: "agent-1".into(),
    ///     event: Box::new(AgentEvent::TextDelta("Hel".into())),
    /// };
    /// assert_eq!(
    ///     serde_json::to_value(&event).unwrap(),
    ///     json!({"type": "sub_agent", "data": {
    ///         "agent": "agent-1",
    ///         "event": {"type": "text_delta", "data": "Hel"}
    ///     }})
    /// );
    /// ```
    SubAgent {
        /// The sub-agent, as this run's model knows it: the id `agent start` gave
        /// (`"agent-1"`) for a child of the `agent` group; the id of the tool call it runs in
        /// (as in this run's [`ToolCallStarted`](Self::ToolCallStarted)) for an
        /// [`AgentTool`](super::AgentTool)'s, or any run made inside a call.
        agent: String,
        /// The sub-agent's event (itself a `SubAgent` when it is of the sub-agent's own
        /// sub-agent).
        event: Box<AgentEvent>,
    },
}

/// Who denied a tool call ([`AgentEvent::ToolCallDenied`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeniedBy {
    /// A [`ToolHook::before_tool`](super::ToolHook::before_tool) answered
    /// [`HookDecision::Deny`](super::HookDecision::Deny).
    Hook,
    /// The session's [`ToolApproval`](super::ToolApproval) answered
    /// [`ApprovalDecision::Deny`](super::ApprovalDecision::Deny).
    Approval,
}

/// Why a call was not run ([`AgentEvent::ToolCallNotRun`]), when no hook or approval denied
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NotRunReason {
    /// Its arguments (or the call itself) could not be read, e.g. JSON that does not parse,
    /// or a call that names no tool; no hook sees such a call.
    Unreadable,
    /// An earlier call of the same answer has its id: the two results could not be told
    /// apart.
    RepeatedId,
    /// The answer was cut off at the output token limit while the model wrote its calls,
    /// so the arguments may be incomplete.
    CutOff,
    /// The run was cancelled before the call could run (while a hook or the approval was
    /// deciding, or before they were asked).
    Cancelled,
    /// A `before_tool` hook answered [`HookDecision::Stop`](super::HookDecision::Stop),
    /// for this call or another of the answer: nothing of the answer runs.
    Stopped,
    /// A `before_tool` hook or the approval panicked, for this call or another of the
    /// answer: nothing of the answer runs, and the run ends with
    /// [`AgenticError::Panicked`](super::AgenticError::Panicked).
    Panicked,
}

impl NotRunReason {
    /// The reason's name, `snake_case` as it serializes: `"unreadable"`, `"repeated_id"`,
    /// `"cut_off"`, `"cancelled"`, `"stopped"`, `"panicked"` (the `error.type` of the call's
    /// `execute_tool` span).
    ///
    /// ```
    /// use toolsmith_harness::agent::NotRunReason;
    ///
    /// assert_eq!(NotRunReason::RepeatedId.as_str(), "repeated_id");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unreadable => "unreadable",
            Self::RepeatedId => "repeated_id",
            Self::CutOff => "cut_off",
            Self::Cancelled => "cancelled",
            Self::Stopped => "stopped",
            Self::Panicked => "panicked",
        }
    }
}

/// Receives a session's events.
///
/// A handler that panics does not end the run: the panic is caught and logged
/// (`tracing::error!`), the session's other handlers still get the event, and the handler
/// gets the next events. Events only report what the run does, they decide nothing in it;
/// and they are sent from places a run cannot end cleanly from (a tool's progress, sent
/// while the tool runs; the model's text, while it streams), so a run that ended there
/// would leave calls without results. A handler that must stop the run on some event can
/// cancel the run's token instead.
///
/// Handlers are called on the run's task, and the run waits for each to return: a handler
/// that blocks holds the run up (and, on a current-thread runtime, every other task), so
/// slow work goes to a channel. The runs of one session that go on at once (from tasks
/// sharing an `Arc<AgentSession>`) send their events to the same handlers, interleaved,
/// with nothing telling the runs apart: where that matters, read each run's events from
/// a stream of its own ([`AgentSession::events_of`](super::AgentSession::events_of)).
/// The events of a session's sub-agents ([`AgentEvent::SubAgent`]) are sent from the
/// sub-agent's run: a background sub-agent's (the `agent` group's) from its own task, at
/// the same time as the events of the run that started it.
pub trait AgentEventHandler: Send + Sync {
    /// Called for each event; keep it short (send it to a channel for slow work).
    fn on_event(&self, event: &AgentEvent);
}

/// Sends `event` to each of `handlers` in order, a handler's panic caught and logged (see
/// [`AgentEventHandler`]).
pub(super) fn deliver(handlers: &[Arc<dyn AgentEventHandler>], event: &AgentEvent) {
    for handler in handlers {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| handler.on_event(event))) {
            handler_panicked(event, payload);
        }
    }
}

/// Logs a handler's panic and drops its payload, the handler's value, with
/// [`drop_panic_payload`]: a payload whose `Drop` panics must not unwind into the run.
#[cold]
#[inline(never)]
fn handler_panicked(event: &AgentEvent, payload: Box<dyn std::any::Any + Send>) {
    tracing::error!(
        event = event.kind(),
        panic = %panic_message(payload.as_ref()),
        "an agent event handler panicked; the run goes on"
    );
    drop_panic_payload(payload);
}

impl AgentEvent {
    /// The event's variant, for a log line (the events themselves may be long).
    fn kind(&self) -> &'static str {
        match self {
            Self::ModelRequest { .. } => "ModelRequest",
            Self::TextDelta(_) => "TextDelta",
            Self::ModelResponse { .. } => "ModelResponse",
            Self::ToolCallStarted { .. } => "ToolCallStarted",
            Self::ToolCallDenied { .. } => "ToolCallDenied",
            Self::ToolCallNotRun { .. } => "ToolCallNotRun",
            Self::ToolCallProgress(_) => "ToolCallProgress",
            Self::ToolCallFinished { .. } => "ToolCallFinished",
            Self::ContextShortened { .. } => "ContextShortened",
            Self::ContextCompacted { .. } => "ContextCompacted",
            Self::ImagesRemoved { .. } => "ImagesRemoved",
            Self::ImagesOverLimits { .. } => "ImagesOverLimits",
            Self::TurnFinished { .. } => "TurnFinished",
            Self::SubAgent { .. } => "SubAgent",
        }
    }
}

impl<F: Fn(&AgentEvent) + Send + Sync> AgentEventHandler for F {
    fn on_event(&self, event: &AgentEvent) {
        self(event);
    }
}
