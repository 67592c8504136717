//! [`ChatRequest`]: what a model is sent, in no provider's format.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toolsmith_core::ToolDeclarations;
use toolsmith_core::provider::StrictMode;

use super::Message;

/// Whether the model may, or must, call tools on this request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the default).
    #[default]
    Auto,
    /// No tool calls: the model must answer in text (the declarations are still sent, so
    /// the conversation's earlier calls stay meaningful).
    None,
    /// The model must call at least one of the declared tools.
    Required,
    /// The model must call this tool, which the request declares (a request forcing a tool
    /// it does not declare fails before it is sent, naming it).
    Tool(String),
}

/// Sampling and output options. `None` leaves the provider's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatOptions {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The most tokens the model may write (Anthropic requires one; its client supplies a
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Whether tool calls are allowed.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Which tools are declared in the provider's strict mode (default:
    /// [`StrictMode::WhenReturnsDeclared`]). A tool that cannot be strict is declared
    /// non-strict with a `tracing` warning, never failing the request.
    #[serde(skip)]
    pub strict: StrictMode,
}

/// One request to a model: the system prompt, the conversation so far, the tools it may
/// call and the options. Clients render it in their provider's format with
/// `toolsmith_core::provider`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model's name, as its API knows it.
    pub model: String,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// The tools declared: `shed` and the active tools (shared with the manager's cache,
    /// [`ToolCallManager::offered_declarations`](toolsmith_core::ToolCallManager::offered_declarations)).
    pub tools: Arc<ToolDeclarations>,
    /// Sampling and output options.
    #[serde(default)]
    pub options: ChatOptions,
}

impl ChatRequest {
    /// The names of the declared tools, `shed` first.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }
}
