//! The conversation around the tools: user messages, the model's earlier turns echoed back,
//! and the text and stop reason of an answer. Each format's half lives in its own module.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Provider, ResponseError};
use crate::ToolCallRequest;
use crate::tool::nesting::check_depth;

/// A call the model made on an earlier turn, to echo back in the conversation: its id, the
/// tool it named and its arguments (a JSON object).
///
/// Made from a [`ToolCallRequest`] or from its parts:
///
/// ```
/// use toolsmith::{ToolArguments, ToolCallRequest};
/// use toolsmith::provider::{AssistantCall, Provider};
/// use serde_json::json;
///
/// let request = ToolCallRequest::new("call_1", "add", ToolArguments::try_from(json!({"a": 2})).unwrap());
/// let from_request = Provider::OpenAiChat.render_assistant(None, [&request]);
/// let arguments = json!({"a": 2});
/// let by_hand = AssistantCall::new("call_1", "add", &arguments);
/// assert_eq!(Provider::OpenAiChat.render_assistant(None, [by_hand]), from_request);
///
/// // A call whose arguments could not be read goes back as the model wrote it.
/// let empty = json!({});
/// let broken = AssistantCall { as_written: Some("{\"a\": 2,"), ..AssistantCall::new("call_2", "add", &empty) };
/// let echoed = Provider::OpenAiChat.render_assistant(None, [broken]);
/// assert_eq!(echoed[0]["tool_calls"][0]["function"]["arguments"], "{\"a\": 2,");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AssistantCall<'a> {
    /// The call's id, as the provider gave it (or as generated for one that gave none).
    pub id: &'a str,
    /// The tool the call named.
    pub name: &'a str,
    /// The arguments, a JSON object.
    pub arguments: &'a Value,
    /// Gemini's `thoughtSignature` of the call, written back with it (the other formats
    /// have none).
    pub thought_signature: Option<&'a str>,
    /// For a call that could not be read, the arguments as the model wrote them
    /// ([`RejectedCall::as_written`](super::RejectedCall::as_written)): OpenAI's formats
    /// write them back as the arguments string, the text format as the call's `arguments`
    /// (the JSON they hold, else the text as a string), in place of `arguments`. The
    /// formats whose arguments are an object (Anthropic, Gemini) send `arguments`.
    pub as_written: Option<&'a str>,
}

impl<'a> AssistantCall<'a> {
    /// A call of `name` with id `id` and `arguments` (a JSON object), with no thought
    /// signature and nothing written apart.
    pub fn new(id: &'a str, name: &'a str, arguments: &'a Value) -> Self {
        Self {
            id,
            name,
            arguments,
            thought_signature: None,
            as_written: None,
        }
    }

    /// The arguments as JSON text: as the model wrote them where that is known, else
    /// `arguments` serialized (`{}` for arguments too deep to echo, see
    /// [`echoed_arguments`](Self::echoed_arguments)).
    pub(crate) fn written_arguments(&self) -> String {
        match self.as_written {
            Some(text) => text.to_owned(),
            None if check_depth(self.arguments).is_ok() => self.arguments.to_string(),
            None => "{}".to_owned(),
        }
    }

    /// The arguments as the formats that send them as a JSON object echo them: a copy, or an
    /// empty object for arguments nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH)
    /// (no provider's call has them, and copying or printing them would recurse once per
    /// level).
    pub(crate) fn echoed_arguments(&self) -> Value {
        match check_depth(self.arguments) {
            Ok(()) => self.arguments.clone(),
            Err(_) => Value::Object(serde_json::Map::new()),
        }
    }
}

impl<'a> From<&'a ToolCallRequest> for AssistantCall<'a> {
    fn from(request: &'a ToolCallRequest) -> Self {
        Self {
            thought_signature: request.thought_signature.as_deref(),
            ..Self::new(&request.id, &request.name, request.arguments.as_value())
        }
    }
}

/// Why the model stopped writing, in no provider's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants its tool calls run.
    ToolCalls,
    /// It hit the output token limit (or the context window).
    MaxTokens,
    /// The provider filtered its output (or refused the prompt).
    ContentFilter,
    /// Another reason, as the provider named it.
    Other(String),
}

impl StopReason {
    /// The reason to report when the answer carries tool calls: an answer that "ended
    /// normally" with calls in it (Gemini always says `STOP`; some OpenAI-compatible servers
    /// say `stop`) is a request for its calls to run.
    pub(crate) fn with_calls(self, has_calls: bool) -> Self {
        match self {
            Self::EndTurn if has_calls => Self::ToolCalls,
            other => other,
        }
    }

    /// The reason inferred when the response names none.
    pub(crate) fn inferred(has_calls: bool) -> Self {
        Self::EndTurn.with_calls(has_calls)
    }

    /// The reason's name, as traces write it (a `chat` span's
    /// `gen_ai.response.finish_reasons`): `"end_turn"`, `"tool_calls"`, `"max_tokens"`,
    /// `"content_filter"` (as events serialize them), or another reason's own name, as the
    /// provider gave it.
    ///
    /// ```
    /// use toolsmith::provider::StopReason;
    ///
    /// assert_eq!(StopReason::ToolCalls.as_str(), "tool_calls");
    /// assert_eq!(StopReason::Other("pause_turn".into()).as_str(), "pause_turn");
    /// ```
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolCalls => "tool_calls",
            Self::MaxTokens => "max_tokens",
            Self::ContentFilter => "content_filter",
            Self::Other(reason) => reason,
        }
    }
}

impl Provider {
    /// Renders a user's text as one entry of this provider's conversation: an OpenAI or text
    /// `{"role": "user", "content": …}` message, a Responses input message, an Anthropic user
    /// message, a Gemini user content of one text part.
    ///
    /// ```
    /// use toolsmith::provider::Provider;
    /// use serde_json::json;
    ///
    /// assert_eq!(Provider::Gemini.render_user("Hi"), json!({"role": "user", "parts": [{"text": "Hi"}]}));
    /// assert_eq!(Provider::Anthropic.render_user("Hi"), json!({"role": "user", "content": "Hi"}));
    /// ```
    pub fn render_user(self, text: &str) -> Value {
        match self {
            Self::OpenAiChat => super::openai_chat::render_user(text),
            Self::OpenAiResponses => super::openai_responses::render_user(text),
            Self::Anthropic => super::anthropic::render_user(text),
            Self::Gemini => super::gemini::render_user(text),
            Self::Text => super::text::render_user(text),
        }
    }

    /// Renders a user's text with images as one entry of this provider's conversation, the
    /// images first (Anthropic's advice for vision; the others take any order), then the
    /// text (left out when empty): Anthropic `image` blocks (base64 source), Responses
    /// `input_image` items and OpenAI Chat `image_url` parts (data URLs), Gemini
    /// `inlineData` parts. The text format carries no images: each is a line saying so.
    /// Without images, this is [`render_user`](Self::render_user).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::Image;
    /// use toolsmith::provider::Provider;
    ///
    /// let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
    /// let images = [image];
    /// assert_eq!(
    ///     Provider::OpenAiChat.render_user_with_images("What is this?", &images),
    ///     json!({"role": "user", "content": [
    ///         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ///         {"type": "text", "text": "What is this?"}
    ///     ]})
    /// );
    /// assert_eq!(Provider::Gemini.render_user_with_images("Hi", &[]), Provider::Gemini.render_user("Hi"));
    /// ```
    pub fn render_user_with_images(self, text: &str, images: &[crate::Image]) -> Value {
        if images.is_empty() {
            return self.render_user(text);
        }
        match self {
            Self::OpenAiChat => super::openai_chat::render_user_with_images(text, images),
            Self::OpenAiResponses => super::openai_responses::render_user_with_images(text, images),
            Self::Anthropic => super::anthropic::render_user_with_images(text, images),
            Self::Gemini => super::gemini::render_user_with_images(text, images),
            Self::Text => super::text::render_user_with_images(text, images),
        }
    }

    /// The id a call (and the result answering it) is sent to this provider with, given the
    /// id it has: for Anthropic, an id outside `^[a-zA-Z0-9_-]+$` (another provider's
    /// `functions.add:0`, an empty one) with each other character made `_` and a hash of the
    /// id appended, as [`render_assistant`](Self::render_assistant) and
    /// [`render_results`](Self::render_results) send it; for the others, the id as it is. An
    /// id already as sent is sent as it is, so a caller that renames ids (to keep them
    /// distinct in a conversation) can compare them in this form.
    ///
    /// ```
    /// use toolsmith::provider::Provider;
    ///
    /// assert_eq!(Provider::Anthropic.call_id_as_sent("toolu_1"), "toolu_1");
    /// let sent = Provider::Anthropic.call_id_as_sent("functions.add:0");
    /// assert!(sent.starts_with("functions_add_0_"));
    /// assert_eq!(Provider::Anthropic.call_id_as_sent(&sent), sent);
    /// assert_eq!(Provider::OpenAiResponses.call_id_as_sent("functions.add:0"), "functions.add:0");
    /// ```
    pub fn call_id_as_sent(self, id: &str) -> std::borrow::Cow<'_, str> {
        match self {
            Self::Anthropic => super::anthropic::wire_id(id),
            _ => std::borrow::Cow::Borrowed(id),
        }
    }

    /// Renders one of the model's earlier turns (its text, its tool calls, or both) as the
    /// entries to append to the conversation, so that the results that follow answer calls
    /// the provider has seen: an OpenAI Chat assistant message with `tool_calls` (arguments as
    /// a JSON string), Responses items (an assistant message, then one `function_call` item
    /// per call), an Anthropic assistant message of `text` and `tool_use` blocks, a Gemini
    /// `model` content of `text` and `functionCall` parts, a text assistant message with one
    /// `<tool_call>` block per call.
    ///
    /// Call ids are kept, except generated ones (prefix
    /// [`GENERATED_CALL_ID_PREFIX`](super::GENERATED_CALL_ID_PREFIX)) where Gemini matches by
    /// name, and ids Anthropic refuses (a character outside `[a-zA-Z0-9_-]`, as in another
    /// provider's `functions.add:0`), sent to it with each such character made `_` and a
    /// hash of the id appended (the same in the results, and distinct ids stay distinct).
    /// Text of whitespace alone counts as none. A turn with neither text nor calls
    /// gives no entry where the format has no empty message (Responses, Anthropic, Gemini)
    /// and an empty message elsewhere. Arguments
    /// nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) (which no provider's call
    /// has) are echoed as an empty object.
    ///
    /// ```
    /// use toolsmith::provider::{AssistantCall, Provider};
    /// use serde_json::json;
    ///
    /// let arguments = json!({"a": 2, "b": 3});
    /// let call = AssistantCall::new("toolu_1", "add", &arguments);
    /// let turn = Provider::Anthropic.render_assistant(Some("Adding."), [call]);
    /// assert_eq!(turn, vec![json!({"role": "assistant", "content": [
    ///     {"type": "text", "text": "Adding."},
    ///     {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
    /// ]})]);
    /// let turn = Provider::OpenAiChat.render_assistant(None, [call]);
    /// assert_eq!(turn[0]["tool_calls"][0]["function"]["arguments"], r#"{"a":2,"b":3}"#);
    /// ```
    pub fn render_assistant<'a, I>(self, text: Option<&str>, calls: I) -> Vec<Value>
    where
        I: IntoIterator,
        I::Item: Into<AssistantCall<'a>>,
    {
        let calls: Vec<AssistantCall<'a>> = calls.into_iter().map(Into::into).collect();
        // Whitespace alone says nothing, and Anthropic refuses a text block of it.
        let text = text.filter(|t| !t.trim().is_empty());
        match self {
            Self::OpenAiChat => super::openai_chat::render_assistant(text, &calls),
            Self::OpenAiResponses => super::openai_responses::render_assistant(text, &calls),
            Self::Anthropic => super::anthropic::render_assistant(text, &calls),
            Self::Gemini => super::gemini::render_assistant(text, &calls),
            Self::Text => super::text::render_assistant(text, &calls),
        }
    }

    /// Reads the text of a provider response: OpenAI Chat `message.content` (or its
    /// `refusal`), the Responses `output_text` and `refusal` parts of its `message` items,
    /// Anthropic `text` blocks, Gemini `text` parts (thoughts left out), the text around a
    /// text model's calls (its `<tool_call>` blocks, or the fenced blocks or bare JSON its
    /// calls were read from). Several pieces are joined in order; an answer with
    /// no text, or only empty text, gives `None`.
    ///
    /// Takes what [`parse_calls`](Self::parse_calls) takes. A response of the wrong shape is a
    /// [`ResponseError`]; a Gemini response without candidates (a blocked prompt) has no text.
    ///
    /// ```
    /// use toolsmith::provider::Provider;
    /// use serde_json::json;
    ///
    /// let response = json!({"choices": [{"message": {"role": "assistant", "content": "5"}, "finish_reason": "stop"}]});
    /// assert_eq!(Provider::OpenAiChat.parse_text(&response).unwrap().as_deref(), Some("5"));
    /// let calls_only = json!({"content": [{"type": "tool_use", "id": "t", "name": "add", "input": {}}]});
    /// assert_eq!(Provider::Anthropic.parse_text(&calls_only).unwrap(), None);
    /// ```
    pub fn parse_text(self, response: &Value) -> Result<Option<String>, ResponseError> {
        let text = match self {
            Self::OpenAiChat => super::openai_chat::parse_text(response)?,
            Self::OpenAiResponses => super::openai_responses::parse_text(response)?,
            Self::Anthropic => super::anthropic::parse_text(response)?,
            Self::Gemini => super::gemini::parse_text(response)?,
            Self::Text => super::text::parse_text(response)?,
        };
        Ok(super::answer::finished_text(text))
    }

    /// Reads why the model stopped: OpenAI Chat `finish_reason`, the Responses `status` and
    /// `incomplete_details.reason`, Anthropic `stop_reason`, Gemini `finishReason` (or the
    /// prompt's `blockReason`). An answer that ended normally with tool calls in it is
    /// [`StopReason::ToolCalls`] whatever the provider said; where the response names no
    /// reason (a message passed alone), it is inferred from whether the answer has calls.
    ///
    /// ```
    /// use toolsmith::provider::{Provider, StopReason};
    /// use serde_json::json;
    ///
    /// let cut = json!({"role": "assistant", "content": [{"type": "text", "text": "The"}], "stop_reason": "max_tokens"});
    /// assert_eq!(Provider::Anthropic.parse_stop_reason(&cut).unwrap(), StopReason::MaxTokens);
    /// let called = json!({"candidates": [{"content": {"role": "model", "parts": [
    ///     {"functionCall": {"name": "add", "args": {}}}]}, "finishReason": "STOP"}]});
    /// assert_eq!(Provider::Gemini.parse_stop_reason(&called).unwrap(), StopReason::ToolCalls);
    /// ```
    pub fn parse_stop_reason(self, response: &Value) -> Result<StopReason, ResponseError> {
        match self {
            Self::OpenAiChat => super::openai_chat::parse_stop_reason(response),
            Self::OpenAiResponses => super::openai_responses::parse_stop_reason(response),
            Self::Anthropic => super::anthropic::parse_stop_reason(response),
            Self::Gemini => super::gemini::parse_stop_reason(response),
            Self::Text => super::text::parse_stop_reason(response),
        }
    }

    /// Reads the answer as this provider's own conversation entries, to send back verbatim on
    /// later turns in place of [`render_assistant`](Self::render_assistant)'s rendering of its
    /// text and calls. This is how each API documents a tool-use turn is continued, and it
    /// keeps what the rendering cannot rebuild: the Responses `reasoning` items (which must
    /// precede the items that followed them, ids included), Anthropic's `thinking` and
    /// `redacted_thinking` blocks (required back when extended thinking uses tools), and
    /// Gemini's thought parts and signatures.
    ///
    /// The entries are: the Responses `output` items, each `function_call` with the
    /// `call_id` its result is sent with (a missing one the item's `id`, else generated)
    /// and its `arguments` as JSON text, as the API takes them back (an object written out,
    /// none as `"{}"`); one Anthropic assistant message of the
    /// `content` blocks, less any text block of whitespace alone (which Anthropic refuses),
    /// each `tool_use` with the id its results are sent with (an id outside
    /// `[a-zA-Z0-9_-]+`, which only another server writes, rewritten as
    /// [`render_assistant`](Self::render_assistant) does; a missing one generated). Those
    /// are the ids [`parse_calls`](Self::parse_calls) gives the calls, a generated id
    /// another call also has made distinct the same way;
    /// one Gemini `model` content of the candidate's parts. A call that names no tool is
    /// given the name it is rendered with, [`UNNAMED_CALL_NAME`](super::UNNAMED_CALL_NAME)
    /// (each API refuses a conversation holding a call without a name). `None` for an
    /// answer with nothing in it (the APIs refuse an empty turn), and for the formats whose
    /// answers are rebuilt from text and calls: OpenAI Chat (its message holds nothing the
    /// rendering loses, and compatible servers differ in the extra fields they take back)
    /// and text backends.
    ///
    /// ```
    /// use toolsmith::provider::Provider;
    /// use serde_json::json;
    ///
    /// let answer = json!({"content": [
    ///     {"type": "thinking", "thinking": "2 + 3…", "signature": "EqQB"},
    ///     {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
    /// ], "stop_reason": "tool_use"});
    /// let entries = Provider::Anthropic.parse_turn_entries(&answer).unwrap().unwrap();
    /// assert_eq!(entries, vec![json!({"role": "assistant", "content": answer["content"]})]);
    /// assert_eq!(Provider::OpenAiChat.parse_turn_entries(&json!({"choices": []})).unwrap(), None);
    /// ```
    pub fn parse_turn_entries(self, response: &Value) -> Result<Option<Vec<Value>>, ResponseError> {
        match self {
            Self::OpenAiResponses => super::openai_responses::parse_turn_entries(response),
            Self::Anthropic => super::anthropic::parse_turn_entries(response),
            Self::Gemini => super::gemini::parse_turn_entries(response),
            Self::OpenAiChat | Self::Text => Ok(None),
        }
    }
}
