//! [`ChatResponse`]: what a model answered, in no provider's format, with its [`Usage`].

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};
use toolsmith_core::provider::{ParsedCall, StopReason};

use super::{Message, ModelCall, ProviderTurn};

/// Tokens counted by the API for one request, or summed over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens, cached ones included.
    pub input_tokens: u64,
    /// Output (completion) tokens.
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache, where the API reports them.
    pub cached_input_tokens: u64,
}

impl Usage {
    /// Usage of `input` and `output` tokens, none cached.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            cached_input_tokens: 0,
        }
    }

    /// `self` less `other`, field by field, stopping at zero.
    #[must_use]
    pub fn saturating_sub(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(other.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(other.output_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_sub(other.cached_input_tokens),
        }
    }

    /// Input and output tokens together.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_add(other.cached_input_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// A model's answer to one request: text, tool calls (read, or rejected with the error the
/// model gets back), the tokens used and why it stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The text, if any.
    pub text: Option<String>,
    /// The tool calls, in the order the model made them.
    pub calls: Vec<ParsedCall>,
    /// Tokens used by this request.
    pub usage: Usage,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// The answer as its provider wrote it, to send back verbatim
    /// ([`ProviderTurn`]); `None` where the format keeps none.
    pub provider_turn: Option<ProviderTurn>,
    /// The model that answered, as the API names it (which may be a dated version of the
    /// one asked for); `None` when the API did not say.
    pub model: Option<String>,
}

impl ChatResponse {
    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            calls: Vec::new(),
            usage: Usage::default(),
            stop_reason: StopReason::EndTurn,
            provider_turn: None,
            model: None,
        }
    }

    /// An answer of tool calls.
    pub fn calls(calls: Vec<ParsedCall>) -> Self {
        Self {
            text: None,
            calls,
            usage: Usage::default(),
            stop_reason: StopReason::ToolCalls,
            provider_turn: None,
            model: None,
        }
    }

    /// The same answer with `usage`.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Whether the model asked for tool calls.
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// The answer as the assistant message that continues the conversation: its text, its
    /// calls as the model made them ([`ModelCall::of`]: a rejected call with what the model
    /// wrote), the provider's own turn and why the model stopped.
    ///
    /// ```
    /// use toolsmith::harness::model::{ChatResponse, Message};
    ///
    /// let message = ChatResponse::text("5").to_message();
    /// assert_eq!(message.text(), Some("5"));
    /// assert!(message.calls().is_empty());
    /// ```
    pub fn to_message(&self) -> Message {
        Message::Assistant {
            text: self.text.clone(),
            calls: self.calls.iter().map(ModelCall::of).collect(),
            provider_turn: self.provider_turn.clone(),
            stop_reason: Some(self.stop_reason.clone()),
        }
    }
}
