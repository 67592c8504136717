//! [`ToolCallRequest`]: one call the model asked for.

use serde::{Deserialize, Serialize};

use crate::ToolArguments;

/// How a call wants to be scheduled relative to the others of its stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionHint {
    /// No preference: the call may run concurrently with others.
    #[default]
    Unspecified,
    /// The call's stage runs in order, stopping at the first failure.
    Sequential,
    /// The call may run concurrently with others.
    Parallel,
}

/// One tool call: which tool, with what arguments, after which other calls.
///
/// ```
/// use toolsmith::{ExecutionHint, ToolArguments, ToolCallRequest};
/// use serde_json::json;
///
/// let call = ToolCallRequest::new("call-2", "summarise", ToolArguments::new())
///     .depends_on(["call-1"])
///     .with_hint(ExecutionHint::Sequential);
/// assert_eq!(call.depends_on, ["call-1"]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The call's id, unique within a batch; results carry it back.
    pub id: String,
    /// The tool to call.
    pub name: String,
    /// The arguments, a JSON object.
    #[serde(default)]
    pub arguments: ToolArguments,
    /// Ids of calls of the same batch that must finish first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// Scheduling preference.
    #[serde(default)]
    pub execution_hint: ExecutionHint,
    /// Gemini's `thoughtSignature` for the call: opaque, and sent back with the call when
    /// the conversation is (Gemini 3 refuses a conversation whose calls lack it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

impl ToolCallRequest {
    /// A call with no dependencies and no scheduling preference.
    #[must_use]
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: ToolArguments) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            depends_on: Vec::new(),
            execution_hint: ExecutionHint::Unspecified,
            thought_signature: None,
        }
    }

    /// Adds dependencies on other calls of the batch.
    #[must_use]
    pub fn depends_on<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.depends_on.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Sets the scheduling preference.
    #[must_use]
    pub fn with_hint(mut self, hint: ExecutionHint) -> Self {
        self.execution_hint = hint;
        self
    }
}
