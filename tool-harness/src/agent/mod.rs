//! The agent session: a model-agnostic loop over a [`ChatModel`](crate::model::ChatModel) and
//! a session's tools.
//!
//! [`AgentSession::builder`] takes a model client; `.with_toolshed(..)` gives the tools;
//! `run(..)` or `send(..)` drives the loop until the model answers, and gives an
//! [`AgentRun`]: the answer, the transcript, every tool call, the model calls and the tokens
//! used. [`ToolHook`]s and a [`ToolApproval`] callback see every call; [`AgentEvent`]s report
//! progress, to the session's handlers or, one run's alone, as a stream
//! ([`AgentSession::events_of`]); spans follow OpenTelemetry's GenAI conventions (`invoke_agent`, `chat`,
//! `execute_tool`).

mod budget;
mod builder;
mod children;
mod compaction;
mod context_overflow;
mod declaration_check;
mod error;
mod events;
mod hooks;
mod images_over_limits;
mod ledger;
mod pause;
mod refused_counts;
mod run;
mod run_events;
mod session;
mod token_estimate;
mod tool;
mod turn;
mod typed;
mod unreadable_images;
mod user_input;

pub use builder::AgentSessionBuilder;
pub use children::{
    AGENT_TOOL, AgentCommands, DEFAULT_CHILD_MAX_TURNS, DEFAULT_MAX_CHILDREN, MAX_ENDED_CHILDREN,
    MAX_RESULT_WAIT, SubAgentConfig,
};
pub use compaction::{
    Compaction, DEFAULT_COMPACTION_INSTRUCTIONS, DEFAULT_COMPACTION_KEEP_PERCENT,
    DEFAULT_COMPACTION_START_PERCENT, SUMMARIZED_QUESTION_HEADING, SUMMARY_HEADING,
};
pub use context_overflow::{
    ContextEstimate, ContextOverflow, DROPPED_RESULT, DropOldestExchanges, MAX_OVERFLOW_ATTEMPTS,
    Overflow, OverflowCause, REFUSED_MARGIN_PERCENT, Shortened,
};
pub use error::AgenticError;
pub use events::{AgentEvent, AgentEventHandler, DeniedBy, NotRunReason};
pub use hooks::{ApprovalDecision, HookDecision, ToolApproval, ToolHook};
pub use ledger::MAX_NESTED_RUNS;
pub use pause::PauseHandle;
pub use run::{AgentRun, ToolCallRecord};
pub use run_events::RunEvents;
pub use session::{AgentSession, DEFAULT_MAX_TURNS};
pub use token_estimate::estimate_message_tokens;
pub use tool::AgentTool;
pub use typed::{FINAL_ANSWER_TOOL, MAX_ANSWER_ATTEMPTS, TypedRun};
pub use user_input::UserInput;
