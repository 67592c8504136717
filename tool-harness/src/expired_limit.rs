//! The time limit that ended a call, as the model reads it: how long the call was allowed,
//! and whether that was its own timeout or the deadline its turn's calls shared.
//!
//! `ToolError::Timeout` names only the tool (its shape is the specification's), and a
//! turn's deadline ends a call as `Cancelled`: the harness, which knows the limits, writes
//! them into the text, so that the model can ask for less work at once.

use std::time::Duration;

use toolsmith_core::{ToolCallManager, ToolError};

use crate::readable_duration::ReadableDuration;

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
    /// call's timeout)".
    pub(crate) fn timed_out(self, tool: &str) -> String {
        // The error's own words first, so that the two cannot drift apart.
        let timed_out = ToolError::timeout(tool);
        match self {
            Self::Call(limit) => format!(
                "{timed_out} after {} (the call's timeout)",
                ReadableDuration(limit)
            ),
            Self::Turn(deadline) => format!(
                "{timed_out} after {} (the turn's deadline)",
                ReadableDuration(deadline)
            ),
        }
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
            ExpiredLimit::Call(Duration::from_secs(2)).timed_out("fetch"),
            "Tool 'fetch' timed out after 2 s (the call's timeout)"
        );
        assert_eq!(
            ExpiredLimit::Turn(Duration::from_millis(1500)).timed_out("fetch"),
            "Tool 'fetch' timed out after 1.5 s (the turn's deadline)"
        );
        assert_eq!(
            ExpiredLimit::not_run(Duration::from_secs(60)),
            "not run: the turn's deadline of 1 min passed"
        );
    }
}
