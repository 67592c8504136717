//! Hooks around tool calls: [`ToolHook`] (`before_tool` / `after_tool`) and the approval of
//! destructive tools ([`ToolApproval`]).
//!
//! For each call the model makes, in this fixed order:
//! 1. a call whose arguments could not be read gets its error back; no hook sees it (nor a
//!    call whose id an earlier call of the answer has, nor the calls of an answer cut off at
//!    the output token limit); the event handlers get an
//!    [`AgentEvent::ToolCallNotRun`](super::AgentEvent::ToolCallNotRun), as they do for each
//!    call a stop or the run's cancellation keeps from running;
//! 2. every `before_tool` hook, in the order they were added, with the arguments as the tool
//!    will read them (a boolean or number the model sent as a string, `"true"`, given as
//!    the `true` validation makes of it; an optional argument sent as `null` left out; a
//!    whole float, `0.0`, as the integer 0; arguments that do not validate as sent): the
//!    first that does not
//!    [`Allow`](HookDecision::Allow) decides ([`Deny`](HookDecision::Deny): the model gets
//!    the reason as an error result, the event handlers an
//!    [`AgentEvent::ToolCallDenied`](super::AgentEvent::ToolCallDenied);
//!    [`Stop`](HookDecision::Stop): the run ends); a
//!    [`Rewrite`](HookDecision::Rewrite) replaces the arguments and the next hooks see the
//!    rewritten call;
//! 3. the approval callback, only for tools (or commands) annotated destructive; a denial is
//!    shown to the model (and reported as a `ToolCallDenied` too). It is asked once the hooks have seen every call of the answer (so
//!    nothing is asked in a turn a hook stops, nor for a tool only a search the hooks denied
//!    could have given: such a destructive call is refused then, not offered, even if
//!    another run of the session offers the tool before the answer's calls start);
//! 4. the call runs with the turn's other admitted calls (offer check, validation, retries);
//! 5. every `after_tool` hook, in order, with the result the model will be shown, as soon
//!    as the call has ended, while the answer's other calls still run. One call's hooks
//!    are done before the next ended call's begin (in the order the calls end), and a
//!    hook that waits holds up neither the running calls nor their timing.
//!
//! A panic in a hook or the approval ends the run with
//! [`AgenticError::Panicked`](super::AgenticError::Panicked), naming the hook and the call,
//! and leaves every call of the answer with a result (the section
//! [Panics](ToolHook#panics) says what becomes of each); so does a panic of the model
//! client. An event handler's panic is caught and logged, and the run goes on
//! ([`AgentEventHandler`](super::AgentEventHandler) says why).
//!
//! A session's sub-agents ([`ToolPreset::agent`](crate::ToolPreset::agent)) are held to its
//! hooks and approval too: their calls pass the parent's hooks first, then their own.

use async_trait::async_trait;
use toolsmith_core::{ToolArguments, ToolCallRequest, ToolCallResult};

/// What a `before_tool` hook decides for a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HookDecision {
    /// Run the call as it is (or pass it to the next hook).
    Allow,
    /// Do not run it; the model is told why.
    Deny(String),
    /// Run it with these arguments instead.
    Rewrite(ToolArguments),
    /// Do not run it and end the run ([`AgenticError::Stopped`](super::AgenticError::Stopped)).
    Stop(String),
}

/// Code that runs around every tool call of a session.
///
/// # Panics
///
/// A hook (or a [`ToolApproval`]) that panics does not unwind out of the run: the panic is
/// caught, logged, and the run ends with
/// [`AgenticError::Panicked`](super::AgenticError::Panicked), whose `during` names the place
/// and the call ("the before_tool hook #2 of call c1 (read_file)": hooks are numbered from
/// 1 in the order they were added, a sub-agent's parent's first). As for a
/// [`HookDecision::Stop`], every call the model made has its result in the transcript, so
/// the session can run again from it:
/// - `before_tool`: the call does not run, nor does any other call of the answer; each is
///   reported [`ToolCallNotRun`](super::AgentEvent::ToolCallNotRun) with
///   [`NotRunReason::Panicked`](super::NotRunReason::Panicked), and the model is shown
///   that the run ended;
/// - the approval: the same; the calls already approved do not run either (none has
///   started: calls start once every approval is given);
/// - `after_tool`: the call ran; its result is the one the hook was given (what the hook
///   changed before it panicked is dropped) and the call's later hooks still run on it.
///   The answer's calls still running are cancelled (their tokens fire), and end as in a
///   cancelled run: each is finished, its `after_tool` hooks run (not waited for) and
///   [`ToolCallFinished`](super::AgentEvent::ToolCallFinished) is sent, so every started
///   call is reported finished. A later panic of a hook is logged; the error names the
///   first.
///
/// ```
/// use async_trait::async_trait;
/// use toolsmith::ToolCallRequest;
/// use toolsmith::harness::agent::{HookDecision, ToolHook};
///
/// /// Keeps the agent out of `rm`.
/// struct NoRm;
///
/// #[async_trait]
/// impl ToolHook for NoRm {
///     async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
///         let command = call.arguments.get("command").and_then(|c| c.as_str()).unwrap_or("");
///         if call.name == "bash" && command.contains("rm ") {
///             HookDecision::Deny("deleting files is not allowed here".into())
///         } else {
///             HookDecision::Allow
///         }
///     }
/// }
/// ```
#[async_trait]
pub trait ToolHook: Send + Sync {
    /// Called before a call runs. The default allows it.
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        let _ = call;
        HookDecision::Allow
    }

    /// Called after a call ended, with the result the model will be shown; may change it.
    ///
    /// Once the run is cancelled, a hook is not waited for: it runs until it first waits,
    /// the result is kept as it left it, and the next hooks are still asked, so that a hook
    /// that changes the result without waiting (one that redacts it) does so even after an
    /// earlier one that waits.
    async fn after_tool(&self, call: &ToolCallRequest, result: &mut ToolCallResult) {
        let _ = (call, result);
    }
}

/// The answer of an approval callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call.
    Approve,
    /// Do not run it; the model is told why.
    Deny(String),
}

/// Asked before every call to a tool annotated destructive (and only then).
///
/// A closure `Fn(&ToolCallRequest) -> bool` is an approval callback (`false` denies).
#[async_trait]
pub trait ToolApproval: Send + Sync {
    /// Whether `call` may run.
    async fn approve(&self, call: &ToolCallRequest) -> ApprovalDecision;
}

#[async_trait]
impl<F> ToolApproval for F
where
    F: Fn(&ToolCallRequest) -> bool + Send + Sync,
{
    async fn approve(&self, call: &ToolCallRequest) -> ApprovalDecision {
        if self(call) {
            ApprovalDecision::Approve
        } else {
            ApprovalDecision::Deny(format!(
                "the user did not approve this call to '{}'",
                call.name
            ))
        }
    }
}
