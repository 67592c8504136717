//! [`Message`]: one entry of a conversation, in no provider's format.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith_core::provider::{ParsedCall, Provider, RejectedCall, StopReason};
use toolsmith_core::{Image, ToolArguments, ToolCallRequest, ToolCallResult};

/// A tool call as the model made it: the id it gave, the tool it named and the arguments it
/// sent (an object; for a call whose arguments could not be read, an empty object, with the
/// text the model wrote in [`as_written`](Self::as_written)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// The call's id, as the provider gave it (or as generated for one that gave none).
    pub id: String,
    /// The tool named.
    pub name: String,
    /// The arguments, a JSON object (shared with the request the call runs as, so keeping
    /// it in the transcript copies nothing).
    pub arguments: ToolArguments,
    /// Gemini's `thoughtSignature` of the call, sent back with it on later turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    /// For a call whose arguments could not be read, what the model wrote
    /// ([`RejectedCall::as_written`]): echoed back in place of the empty arguments, and
    /// replayed by [`ScriptedModel::replaying`](super::ScriptedModel::replaying).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_written: Option<String>,
}

impl ModelCall {
    /// A call of `name` with id `id` and `arguments`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: ToolArguments) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            thought_signature: None,
            as_written: None,
        }
    }

    /// The call as the model made it, read or rejected.
    pub fn of(call: &ParsedCall) -> Self {
        match call {
            Ok(request) => Self::from(request),
            Err(RejectedCall {
                id,
                name,
                as_written,
                ..
            }) => Self {
                as_written: as_written.as_deref().map(str::to_owned),
                ..Self::new(id.clone(), name.clone(), ToolArguments::new())
            },
        }
    }

    /// The call as a request to run.
    pub fn to_request(&self) -> ToolCallRequest {
        let mut request =
            ToolCallRequest::new(self.id.clone(), self.name.clone(), self.arguments.clone());
        request
            .thought_signature
            .clone_from(&self.thought_signature);
        request
    }
}

impl From<&ToolCallRequest> for ModelCall {
    fn from(request: &ToolCallRequest) -> Self {
        Self {
            thought_signature: request.thought_signature.clone(),
            ..Self::new(
                request.id.clone(),
                request.name.clone(),
                request.arguments.clone(),
            )
        }
    }
}

/// One of the model's turns as its provider wrote it
/// ([`Provider::parse_turn_entries`]): sent back verbatim to the same provider, so that
/// what the message's text and calls cannot hold (reasoning items, thinking blocks,
/// thought signatures) goes back with the turn. Another provider is sent the message's text
/// and calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderTurn {
    /// The provider whose format the entries are in.
    pub provider: Provider,
    /// The conversation entries, in that provider's format.
    pub entries: Vec<Value>,
}

/// One call's result as the model is shown it: errors already written for the model (an
/// error result, [`ToolCallResult::is_error`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The id of the call answered.
    pub call_id: String,
    /// The tool called.
    pub name: String,
    /// The result, or the error written for the model.
    pub result: ToolCallResult,
}

/// One entry of a conversation.
///
/// ```
/// use serde_json::json;
/// use toolsmith::ToolArguments;
/// use toolsmith::harness::model::{Message, ModelCall};
///
/// let asked = Message::user("What is 2 + 3?");
/// let arguments = ToolArguments::try_from(json!({"a": 2, "b": 3})).unwrap();
/// let called = Message::assistant_calls(None, vec![ModelCall::new("c1", "add", arguments)]);
/// assert_eq!(asked.text(), Some("What is 2 + 3?"));
/// assert_eq!(called.calls().len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// What the user said, and the images they gave with it
    /// ([`user_with_images`](Self::user_with_images)).
    User {
        /// The text.
        text: String,
        /// The images, shown to the model before the text; absent from a transcript
        /// written without any (and so from every transcript saved before images were).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<ModelCall>,
        /// The turn as the provider wrote it, where its format keeps one
        /// ([`ChatResponse::to_message`](super::ChatResponse::to_message) sets it): that
        /// provider is sent these entries instead of `text` and `calls`, so an edit of
        /// those reaches only other providers; set it to `None` with an edit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_turn: Option<ProviderTurn>,
        /// Why the model stopped, where the message records an answer
        /// ([`ChatResponse::to_message`](super::ChatResponse::to_message) sets it): an
        /// answer cut off at the output limit has its calls answered without running, and a
        /// replay ([`ScriptedModel::replaying`](super::ScriptedModel::replaying)) cuts it
        /// off the same way.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
    },
    /// The results of the previous assistant message's calls, in call order.
    ToolResults {
        /// One result per call.
        results: Vec<ToolResultMessage>,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::user_with_images(text, Vec::new())
    }

    /// A user message with images: each HTTP client sends them in its API's shape (see
    /// [`Provider::render_user_with_images`]).
    ///
    /// ```
    /// use toolsmith::Image;
    /// use toolsmith::harness::model::Message;
    ///
    /// let photo = Image::from_bytes("image/jpeg", b"\xFF\xD8\xFF\xE0").unwrap();
    /// let asked = Message::user_with_images("What is in this photo?", vec![photo]);
    /// assert_eq!(asked.text(), Some("What is in this photo?"));
    /// assert_eq!(asked.images()[0].media_type(), "image/jpeg");
    /// ```
    pub fn user_with_images(text: impl Into<String>, images: Vec<Image>) -> Self {
        Self::User {
            text: text.into(),
            images,
        }
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::Assistant {
            text: Some(text.into()),
            calls: Vec::new(),
            provider_turn: None,
            stop_reason: None,
        }
    }

    /// An assistant message with tool calls (and optional text).
    pub fn assistant_calls(text: Option<String>, calls: Vec<ModelCall>) -> Self {
        Self::Assistant {
            text,
            calls,
            provider_turn: None,
            stop_reason: None,
        }
    }

    /// The message's text: a user's or an assistant's.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::User { text, .. } => Some(text),
            Self::Assistant { text, .. } => text.as_deref(),
            Self::ToolResults { .. } => None,
        }
    }

    /// The images of a user message (empty for the others).
    pub fn images(&self) -> &[Image] {
        match self {
            Self::User { images, .. } => images,
            _ => &[],
        }
    }

    /// The tool calls of an assistant message (empty for the others).
    pub fn calls(&self) -> &[ModelCall] {
        match self {
            Self::Assistant { calls, .. } => calls,
            _ => &[],
        }
    }

    /// The results of a tool-results message (empty for the others).
    pub fn results(&self) -> &[ToolResultMessage] {
        match self {
            Self::ToolResults { results } => results,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolsmith_core::{ContentPart, Image, ToolCallResult};

    use super::{Message, ToolResultMessage};

    #[test]
    fn a_transcript_with_images_reads_back_and_one_without_reads_as_before() {
        let photo = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let transcript = vec![
            Message::user_with_images("What is this?", vec![photo.clone()]),
            Message::ToolResults {
                results: vec![ToolResultMessage {
                    call_id: "c1".into(),
                    name: "shot".into(),
                    result: ToolCallResult::parts([ContentPart::text("Here:"), photo.into()]),
                }],
            },
        ];
        let written = serde_json::to_value(&transcript).unwrap();
        assert_eq!(
            written[0],
            json!({"role": "user", "text": "What is this?",
                "images": [{"media_type": "image/png", "data": "iVBORw0KGgo="}]})
        );
        let back: Vec<Message> = serde_json::from_value(written).unwrap();
        assert_eq!(back, transcript);

        // Saved before images were: no `images` field, and none is written for a message
        // without images.
        let old: Message = serde_json::from_value(json!({"role": "user", "text": "Hi"})).unwrap();
        assert_eq!(old, Message::user("Hi"));
        assert_eq!(
            serde_json::to_value(&old).unwrap(),
            json!({"role": "user", "text": "Hi"})
        );
        // An image edited into something the providers would refuse is refused on reading.
        let edited = json!({"role": "user", "text": "Hi",
            "images": [{"media_type": "image/png", "data": "AAAA"}]});
        let err = serde_json::from_value::<Message>(edited).unwrap_err();
        assert!(err.to_string().contains("not image/png"), "{err}");
    }
}
