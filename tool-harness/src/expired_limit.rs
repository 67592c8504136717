//! The time limit that ended a call, as the model reads it: how long the call was allowed,
//! and whether that was its own timeout or the deadline its turn's calls shared.
//!
//! `ToolError::Timeout` names only the tool (its shape is the specification's), and a
//! turn's deadline ends a call as `Cancelled`: the harness, which knows the limits, writes
//! them into the text, so that the model can ask for less work at once.

use std::time::Duration;

use toolsmith_core::{ToolArguments, ToolCallManager, ToolError};

use crate::readable_duration::ReadableDuration;

/// Whether a call of `tool` with `arguments` changes nothing, by its annotations (the
/// command's, for a command group): only then is a stopped call known to have left nothing
/// behind.
pub(crate) fn changes_nothing(
    manager: &ToolCallManager,
    tool: &str,
    arguments: &ToolArguments,
) -> bool {
    manager
        .call_annotations(tool, arguments)
        .is_some_and(|annotations| annotations.read_only == Some(true))
}

/// A time limit that ended a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExpiredLimit {
    /// The call's own timeout (one attempt's, when the call is retried).
    Call(Duration),
    /// The deadline the calls of one model answer share
    /// ([`with_turn_deadline`](crate::agent::AgentSessionBuilder::with_turn_deadline)).
    Turn(Duration),
}

impl ExpiredLimit {
    /// The time limit `manager` gives `tool`, for a call of it that ended in
    /// `ToolError::Timeout` after `elapsed`: only when the call ran that long, since a tool
    /// may report a timeout of its own, sooner, which says nothing of this limit.
    pub(crate) fn of_call(
        manager: &ToolCallManager,
        tool: &str,
        elapsed: Duration,
    ) -> Option<Self> {
        manager
            .timeout(tool)
            .filter(|&limit| elapsed >= limit)
            .map(Self::Call)
    }

    /// The text for a call of `tool` this limit stopped: "Tool 'x' timed out after 2 s (the
    /// call's timeout)", and unless the call `changes_nothing` ([`changes_nothing`]), that
    /// what it did before it was stopped may stand.
    pub(crate) fn timed_out(self, tool: &str, changes_nothing: bool) -> String {
        // The error's own words first, so that the two cannot drift apart.
        let timed_out = ToolError::timeout(tool);
        let text = match self {
            Self::Call(limit) => format!(
                "{timed_out} after {} (the call's timeout)",
                ReadableDuration(limit)
            ),
            Self::Turn(deadline) => format!(
                "{timed_out} after {} (the turn's deadline)",
                ReadableDuration(deadline)
            ),
        };
        if changes_nothing {
            return text;
        }
        // A stopped call is not undone: work it handed off (a file written on another thread,
        // a request sent) goes on. Told only "timed out", a model calls again and does the
        // change twice.
        format!(
            "{text}; what it did before it was stopped may have taken effect: check before calling it again"
        )
    }

    /// The text for a call the turn's `deadline` kept from starting.
    pub(crate) fn not_run(deadline: Duration) -> String {
        format!(
            "not run: the turn's deadline of {} passed",
            ReadableDuration(deadline)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_is_named_with_its_length() {
        assert_eq!(
            ExpiredLimit::Call(Duration::from_secs(2)).timed_out("fetch", true),
            "Tool 'fetch' timed out after 2 s (the call's timeout)"
        );
        assert_eq!(
            ExpiredLimit::Turn(Duration::from_millis(1500)).timed_out("fetch", true),
            "Tool 'fetch' timed out after 1.5 s (the turn's deadline)"
        );
        assert_eq!(
            ExpiredLimit::Call(Duration::from_secs(2)).timed_out("save", false),
            "Tool 'save' timed out after 2 s (the call's timeout); what it did before it was \
             stopped may have taken effect: check before calling it again"
        );
        assert_eq!(
            ExpiredLimit::not_run(Duration::from_secs(60)),
            "not run: the turn's deadline of 1 min passed"
        );
    }

    #[test]
    fn a_call_changes_nothing_only_when_its_command_is_read_only() {
        use std::sync::Arc;
        let manager = ToolCallManager::new("limits");
        let memory = Arc::new(toolsmith_core::in_memory::InMemoryMemory::new());
        manager
            .register(Arc::new(crate::tools::MemoryTool::new(memory)))
            .unwrap();
        let call = |arguments: serde_json::Value| ToolArguments::try_from(arguments).unwrap();
        let list = call(serde_json::json!({"command": "list"}));
        assert!(changes_nothing(&manager, "memory", &list));
        let add = call(serde_json::json!({"command": "add", "text": "x"}));
        assert!(!changes_nothing(&manager, "memory", &add));
        assert!(!changes_nothing(&manager, "no_such_tool", &list));
    }
}
