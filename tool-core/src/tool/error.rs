//! The errors a tool call can end in, as the model and the caller see them.

use std::fmt;

/// Why a tool call did not produce a result.
///
/// Every variant names the tool (or the call) it concerns, so an error that reaches the model
/// says what to correct. [`ToolError::kind`] gives the variant without its payload, which is
/// what retry policies match on.
///
/// ```
/// use toolsmith::{ToolError, ToolErrorKind};
///
/// let err = ToolError::network("weather", "connection reset by peer");
/// assert_eq!(err.kind(), ToolErrorKind::Network);
/// assert_eq!(err.to_string(), "Network error in tool 'weather': connection reset by peer");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool of that name is registered.
    #[error("Unknown tool '{0}'")]
    UnknownTool(String),
    /// The arguments do not satisfy the tool's schema (or could not be read); the tool did
    /// not run.
    #[error("Invalid arguments for tool '{tool}': {reason}")]
    InvalidArguments {
        /// The tool that was called.
        tool: String,
        /// Every violation, each with its JSON path.
        reason: String,
    },
    /// The tool ran and failed (or panicked).
    #[error("Tool '{tool}' failed: {reason}")]
    Execution {
        /// The tool that failed.
        tool: String,
        /// What went wrong, in the tool's words.
        reason: String,
    },
    /// The tool did not finish within its time limit; its future was dropped.
    ///
    /// The variant names the tool only (the specification's shape): the manager's `tracing`
    /// event for it names the limit, and so does the text an agent session shows the model.
    #[error("Tool '{tool}' timed out")]
    Timeout {
        /// The tool that timed out.
        tool: String,
    },
    /// The call was not run, or was stopped, for the reason given.
    #[error("Cancelled: {0}")]
    Cancelled(String),
    /// The tool is registered but has not been offered to the model yet.
    #[error(
        "Tool '{0}' is not active: look it up with the `shed` tool first (describe what you need), then call it"
    )]
    NotActive(String),
    /// A transient network failure inside the tool; retried by the default retry policy.
    #[error("Network error in tool '{tool}': {reason}")]
    Network {
        /// The tool whose request failed.
        tool: String,
        /// What the network said.
        reason: String,
    },
}

/// The variant of a [`ToolError`], without its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// [`ToolError::UnknownTool`].
    UnknownTool,
    /// [`ToolError::InvalidArguments`].
    InvalidArguments,
    /// [`ToolError::Execution`].
    Execution,
    /// [`ToolError::Timeout`].
    Timeout,
    /// [`ToolError::Cancelled`].
    Cancelled,
    /// [`ToolError::NotActive`].
    NotActive,
    /// [`ToolError::Network`].
    Network,
}

impl ToolErrorKind {
    /// The kind's name as events and traces write it, `snake_case` as it serializes:
    /// `"unknown_tool"`, `"invalid_arguments"`, `"execution"`, `"timeout"`, `"cancelled"`,
    /// `"not_active"`, `"network"` (an `execute_tool` span's `error.type`).
    ///
    /// ```
    /// use toolsmith::ToolErrorKind;
    ///
    /// assert_eq!(ToolErrorKind::InvalidArguments.as_str(), "invalid_arguments");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownTool => "unknown_tool",
            Self::InvalidArguments => "invalid_arguments",
            Self::Execution => "execution",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::NotActive => "not_active",
            Self::Network => "network",
        }
    }
}

impl ToolError {
    /// The variant of this error.
    pub fn kind(&self) -> ToolErrorKind {
        match self {
            Self::UnknownTool(_) => ToolErrorKind::UnknownTool,
            Self::InvalidArguments { .. } => ToolErrorKind::InvalidArguments,
            Self::Execution { .. } => ToolErrorKind::Execution,
            Self::Timeout { .. } => ToolErrorKind::Timeout,
            Self::Cancelled(_) => ToolErrorKind::Cancelled,
            Self::NotActive(_) => ToolErrorKind::NotActive,
            Self::Network { .. } => ToolErrorKind::Network,
        }
    }

    /// An [`InvalidArguments`](Self::InvalidArguments) error for `tool`.
    pub fn invalid_arguments(tool: impl Into<String>, reason: impl fmt::Display) -> Self {
        Self::InvalidArguments {
            tool: tool.into(),
            reason: reason.to_string(),
        }
    }

    /// An [`Execution`](Self::Execution) error for `tool`.
    pub fn execution(tool: impl Into<String>, reason: impl fmt::Display) -> Self {
        Self::Execution {
            tool: tool.into(),
            reason: reason.to_string(),
        }
    }

    /// The [`Execution`](Self::Execution) error of `tool` for a panic whose payload (as
    /// `catch_unwind` gives it) is `payload`: `panicked: <its message>`.
    ///
    /// ```
    /// use toolsmith::ToolError;
    ///
    /// let payload = std::panic::catch_unwind(|| panic!("index out of range")).unwrap_err();
    /// assert_eq!(
    ///     ToolError::panicked("grep", payload.as_ref()),
    ///     ToolError::execution("grep", "panicked: index out of range")
    /// );
    /// ```
    pub fn panicked(tool: impl Into<String>, payload: &(dyn std::any::Any + Send)) -> Self {
        Self::execution(tool, format!("panicked: {}", panic_message(payload)))
    }

    /// A [`Network`](Self::Network) error for `tool`: a transient failure worth retrying.
    pub fn network(tool: impl Into<String>, reason: impl fmt::Display) -> Self {
        Self::Network {
            tool: tool.into(),
            reason: reason.to_string(),
        }
    }

    /// A [`Timeout`](Self::Timeout) error for `tool`.
    pub fn timeout(tool: impl Into<String>) -> Self {
        Self::Timeout { tool: tool.into() }
    }

    /// The tool this error concerns, where it names one.
    pub fn tool(&self) -> Option<&str> {
        match self {
            Self::UnknownTool(tool) | Self::NotActive(tool) => Some(tool),
            Self::InvalidArguments { tool, .. }
            | Self::Execution { tool, .. }
            | Self::Timeout { tool }
            | Self::Network { tool, .. } => Some(tool),
            Self::Cancelled(_) => None,
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::UnknownTool => "unknown tool",
            Self::InvalidArguments => "invalid arguments",
            Self::Execution => "execution",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::NotActive => "not active",
            Self::Network => "network",
        })
    }
}

/// The message of a panic whose payload (as `catch_unwind` gives it) is `payload`: the text
/// `panic!` was given, or "a panic with a non-text payload". [`ToolError::panicked`] reads
/// it so, and so does the harness's agent session for a panic in a user's hook or model
/// (`AgenticError::Panicked`).
///
/// ```
/// use toolsmith::panic_message;
///
/// let payload = std::panic::catch_unwind(|| panic!("no {} here", "file")).unwrap_err();
/// assert_eq!(panic_message(payload.as_ref()), "no file here");
/// let payload = std::panic::catch_unwind(|| std::panic::panic_any(7)).unwrap_err();
/// assert_eq!(panic_message(payload.as_ref()), "a panic with a non-text payload");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic with a non-text payload")
}

/// Drops a stopped call's future (through `drop_it`), keeping a panic of its drop inside:
/// logged, never unwound into whoever gave up on the call.
#[inline(never)]
pub(crate) fn drop_stopped_call(drop_it: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(drop_it)) {
        tracing::warn!(
            panic = %panic_message(panic.as_ref()),
            "a stopped tool call panicked as it was dropped"
        );
        drop_panic_payload(panic);
    }
}

/// [`ToolError::panicked`] for a payload the caller owns, which is dropped here with
/// [`drop_panic_payload`]: for every place that contains a tool's panic.
#[cold]
#[inline(never)]
pub(crate) fn panicked_with(tool: &str, payload: Box<dyn std::any::Any + Send>) -> ToolError {
    let error = ToolError::panicked(tool, payload.as_ref());
    drop_panic_payload(payload);
    error
}

/// Drops a caught panic's payload (what [`std::panic::catch_unwind`] gives back) without
/// letting anything unwind from the drop.
///
/// The payload is whatever value the panicking code gave (`std::panic::panic_any`), whose
/// `Drop` may panic in turn: dropped as usual, that second panic would unwind out of the
/// code that contained the first (a batch, an agent run), into its caller. It is caught
/// here too, and its own payload leaked rather than dropped, so that nothing can unwind
/// from here. Use it wherever the payload of another's code is caught and not re-raised.
///
/// ```
/// use toolsmith::drop_panic_payload;
///
/// struct PanicsOnDrop;
/// impl Drop for PanicsOnDrop {
///     fn drop(&mut self) {
///         panic!("dropped");
///     }
/// }
///
/// let payload = std::panic::catch_unwind(|| std::panic::panic_any(PanicsOnDrop)).unwrap_err();
/// drop_panic_payload(payload); // returns: the drop's panic is contained
/// ```
pub fn drop_panic_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(payload))) {
        std::mem::forget(again);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_covers_every_variant() {
        let cases = [
            (
                ToolError::UnknownTool("x".into()),
                ToolErrorKind::UnknownTool,
            ),
            (
                ToolError::invalid_arguments("x", "bad"),
                ToolErrorKind::InvalidArguments,
            ),
            (ToolError::execution("x", "boom"), ToolErrorKind::Execution),
            (ToolError::timeout("x"), ToolErrorKind::Timeout),
            (
                ToolError::Cancelled("stop".into()),
                ToolErrorKind::Cancelled,
            ),
            (ToolError::NotActive("x".into()), ToolErrorKind::NotActive),
            (ToolError::network("x", "reset"), ToolErrorKind::Network),
        ];
        for (err, kind) in cases {
            assert_eq!(err.kind(), kind, "{err}");
            // The name traces write is the one events serialize.
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::Value::from(kind.as_str())
            );
        }
    }

    #[test]
    fn messages_name_the_tool() {
        for err in [
            ToolError::UnknownTool("calc".into()),
            ToolError::invalid_arguments("calc", "/a: bad"),
            ToolError::execution("calc", "boom"),
            ToolError::timeout("calc"),
            ToolError::NotActive("calc".into()),
            ToolError::network("calc", "reset"),
        ] {
            assert!(err.to_string().contains("'calc'"), "{err}");
            assert_eq!(err.tool(), Some("calc"));
        }
        assert!(
            ToolError::NotActive("calc".into())
                .to_string()
                .contains("shed")
        );
    }
}
