//! [`ToolCallResult`]: what a tool gives back to the model.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::nesting::check_depth;

/// The content of a tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UserModelContent {
    /// Plain text.
    Text(String),
    /// Structured content (checked against the tool's `returns` schema when it has one).
    Json(Value),
}

impl UserModelContent {
    /// The content as text: the text itself, or the JSON serialised compactly (JSON nested
    /// deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is not serialised: the text
    /// says it is "nested deeper than 128 levels").
    pub fn to_text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Json(value) => match check_depth(value) {
                Ok(()) => value.to_string(),
                Err(too_deep) => format!("(a JSON value {too_deep})"),
            },
        }
    }
}

/// A tool's result: its content, and an error detail when the tool reports a failure the
/// model should see and correct (rather than a [`ToolError`](crate::ToolError) the caller
/// handles).
///
/// ```
/// use toolsmith_core::ToolCallResult;
/// use serde_json::json;
///
/// assert_eq!(ToolCallResult::text("done").content.to_text(), "done");
/// assert_eq!(ToolCallResult::json(json!({"sum": 3})).content.to_text(), r#"{"sum":3}"#);
/// let failed = ToolCallResult::error("Division by zero");
/// assert!(failed.is_error());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallResult {
    /// The tool's output.
    pub content: UserModelContent,
    /// Set when the result reports a failure to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<String>,
}

impl ToolCallResult {
    /// A plain-text result.
    #[inline]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: UserModelContent::Text(text.into()),
            error_detail: None,
        }
    }

    /// A structured result.
    #[inline]
    pub fn json(value: Value) -> Self {
        Self {
            content: UserModelContent::Json(value),
            error_detail: None,
        }
    }

    /// A structured result from any serialisable value.
    pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_value(value).map(Self::json)
    }

    /// A successful result with nothing to say.
    pub fn empty() -> Self {
        Self::text("")
    }

    /// A failure the model sees as the tool's answer, so it can adjust and try again.
    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            content: UserModelContent::Text(message.clone()),
            error_detail: Some(message),
        }
    }

    /// Whether this result reports a failure.
    pub fn is_error(&self) -> bool {
        self.error_detail.is_some()
    }
}

impl From<String> for ToolCallResult {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for ToolCallResult {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}
