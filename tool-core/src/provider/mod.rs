//! Provider wire formats: tools declared in each provider's `tools` array, the calls of a
//! provider response read into [`ToolCallRequest`](crate::ToolCallRequest)s, and the calls' results written back;
//! around them, the rest of a conversation: user messages
//! ([`render_user`](Provider::render_user)), the model's earlier turns echoed back
//! ([`render_assistant`](Provider::render_assistant)), and an answer's text and
//! [`StopReason`] ([`parse_text`](Provider::parse_text),
//! [`parse_stop_reason`](Provider::parse_stop_reason)).
//!
//! [`Provider`] names the format: OpenAI Chat Completions, OpenAI Responses, Anthropic
//! Messages, Google Gemini, or a text-based backend (llama.cpp, Candle and other local models
//! whose tool calls are text). Everything here is JSON in, JSON out: no network.
//!
//! ```
//! use std::sync::Arc;
//! use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult, scheme};
//! use toolsmith::provider::{Declared, Provider, RenderOptions};
//! use serde_json::json;
//!
//! # futures::executor::block_on(async {
//! let manager = ToolCallManager::new("demo");
//! manager.register(Arc::new(FnTool::new(
//!     "add", "Add two integers.",
//!     Args::new(scheme::object().required("a", scheme::integer()).required("b", scheme::integer()).build()),
//!     |args: ToolArgs<'_>| {
//!         let sum = args.i64("a").and_then(|a| Ok(a + args.i64("b")?));
//!         async move { Ok(ToolCallResult::text(sum?.to_string())) }
//!     },
//! ))).unwrap();
//!
//! // Declare the tools (cached until the registry or the active set changes).
//! let rendered = manager.rendered_tools(Provider::Anthropic, Declared::All, &RenderOptions::default()).unwrap();
//! assert_eq!(rendered.tools[0]["input_schema"]["required"], json!(["a", "b"]));
//!
//! // Read the model's calls, run them, and answer.
//! let response = json!({"role": "assistant", "content": [
//!     {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
//! ]});
//! let mut results = Vec::new();
//! for call in Provider::Anthropic.parse_calls(&response).unwrap() {
//!     match call {
//!         Ok(request) => results.push((request.id.clone(), request.name.clone(),
//!             manager.execute_one(&request).await)),
//!         Err(rejected) => results.push(rejected.into_parts()),
//!     }
//! }
//! let messages = manager.render_results(Provider::Anthropic, &results);
//! assert_eq!(messages[0]["content"][0], json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}));
//! # });
//! ```

mod answer;
mod anthropic;
mod cache;
mod calls;
pub(crate) mod feedback;
mod gemini;
mod openai_chat;
mod openai_responses;
pub(crate) mod refs;
mod repair;
mod reply;
mod strict;
mod text;
mod turns;

use std::fmt;

use serde_json::Value;

use crate::ToolDeclarations;

pub use crate::tool::echo::cut_to;
pub use answer::ParsedAnswer;
pub use cache::Declared;
pub(crate) use cache::RenderCache;
pub use calls::{
    GENERATED_CALL_ID_PREFIX, ParsedCall, RejectedCall, UNNAMED_CALL_NAME, repeated_id_reason,
    repeated_ids,
};
pub use feedback::error_for_model;
pub use repair::{BrokenJson, repair_json};
pub use reply::CallReply;
pub use strict::strict_schema;
pub use text::{parse_text_calls, tools_prompt};
pub use turns::{AssistantCall, StopReason};

/// A provider's wire format: how tools are declared to it
/// ([`render_tools`](Self::render_tools)), how its calls are read
/// ([`parse_calls`](Self::parse_calls)) and how results go back
/// ([`render_results`](Self::render_results)).
///
/// ```
/// use serde_json::json;
/// use toolsmith::{Provider, ToolCallResult};
///
/// let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
///     {"id": "call_1", "type": "function",
///      "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}
/// ]}}]});
/// let calls = Provider::OpenAiChat.parse_calls(&response).unwrap();
/// let call = calls[0].as_ref().unwrap();
/// assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "add"));
/// assert_eq!(call.arguments.get("b"), Some(&json!(3)));
///
/// let result = Ok(ToolCallResult::text("5"));
/// let messages = Provider::OpenAiChat.render_results([(call.id.as_str(), "add", &result)]);
/// assert_eq!(messages, [json!({"role": "tool", "tool_call_id": "call_1", "content": "5"})]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions: `tools: [{"type": "function", "function": {…}}]`, calls in
    /// `message.tool_calls`, results as `role: tool` messages.
    #[serde(rename = "openai_chat")]
    OpenAiChat,
    /// OpenAI Responses: `tools: [{"type": "function", name, …}]`, calls as `function_call`
    /// output items, results as `function_call_output` items.
    #[serde(rename = "openai_responses")]
    OpenAiResponses,
    /// Anthropic Messages: `tools: [{name, description, input_schema}]`, calls as `tool_use`
    /// blocks, results as `tool_result` blocks in a user message.
    Anthropic,
    /// Google Gemini: `tools: [{"functionDeclarations": […]}]` with the OpenAPI schema subset,
    /// calls as `functionCall` parts, results as `functionResponse` parts.
    Gemini,
    /// Text-based backends: tools as `{name, description, parameters}`, calls written as
    /// `<tool_call>{…}</tool_call>` blocks, fenced JSON or bare JSON, results as
    /// `<tool_response>` blocks.
    Text,
}

impl Provider {
    /// Every provider format.
    pub const ALL: [Provider; 5] = [
        Self::OpenAiChat,
        Self::OpenAiResponses,
        Self::Anthropic,
        Self::Gemini,
        Self::Text,
    ];

    /// A short name: `openai_chat`, `openai_responses`, `anthropic`, `gemini`, `text` (also
    /// its serde name).
    pub const fn name(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai_chat",
            Self::OpenAiResponses => "openai_responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Text => "text",
        }
    }

    /// Renders the declared tools as this provider's `tools` array (`shed` first), with the
    /// tools that were to be strict and could not be.
    ///
    /// Tools are rendered strict (OpenAI `strict: true` with the
    /// [strict transform](strict_schema), Anthropic `strict: true`) as `options` say: by
    /// default ([`StrictMode::WhenReturnsDeclared`]) those that declare a `returns` schema.
    /// Gemini and text backends have no strict mode. Gemini declares a tool's parameters in
    /// its OpenAPI subset (`parameters`), or, for a tool whose arguments the subset cannot say
    /// (a map, a value of any type, an array of any elements, a tuple), in the JSON Schema
    /// keywords it documents (`parametersJsonSchema`).
    ///
    /// A tool that cannot be strict (an open map, an untyped value, a tuple, recursion where
    /// the provider forbids it, a schema past OpenAI's size limits, or one strict tool too
    /// many for Anthropic's request limits) does not fail the rendering: it is rendered as it
    /// is, non-strict, and listed in [`RenderedTools::not_strict`] with the JSON path and the
    /// reason, every such tool at once. Only what no rendering can express is an error: a
    /// schema Gemini's subset cannot hold (recursion), or one nested deeper than
    /// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH), fails naming the tool and the path.
    ///
    /// ```
    /// use toolsmith::{Args, Tool, ToolDeclarations, ToolDefinition, scheme};
    /// use toolsmith::provider::{Provider, RenderOptions, StrictMode};
    /// use serde_json::json;
    ///
    /// let search = ToolDefinition::new("search", "Search the docs.", Args::new(scheme::object()
    ///     .required("query", scheme::string().min_len(1))
    ///     .optional("limit", scheme::integer())
    ///     .build()));
    /// // An open map (any key) cannot be strict.
    /// let set_env = ToolDefinition::new("set_env", "Set variables.", Args::new(scheme::object()
    ///     .required("vars", json!({"type": "object", "additionalProperties": {"type": "string"}}))
    ///     .build()));
    /// let declarations = ToolDeclarations {
    ///     shed: None,
    ///     tools: vec![Tool::SingleCommand(search), Tool::SingleCommand(set_env)],
    /// };
    /// let strict = RenderOptions { strict: StrictMode::Always };
    /// let rendered = Provider::OpenAiChat.render_tools(&declarations, &strict).unwrap();
    /// let tools = &rendered.tools;
    /// assert_eq!(tools[0]["function"]["strict"], true);
    /// assert_eq!(tools[0]["function"]["parameters"], json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "query": {"type": "string", "description": "(minLength: 1)"},
    ///         "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    ///     },
    ///     "required": ["query", "limit"],
    ///     "additionalProperties": false
    /// }));
    /// // `set_env` is declared as it is, and reported.
    /// assert_eq!(tools[1]["function"].get("strict"), None);
    /// let not_strict = &rendered.not_strict[0];
    /// assert_eq!((not_strict.tool.as_str(), not_strict.path.as_str()),
    ///     ("set_env", "/properties/vars/additionalProperties"));
    /// assert!(not_strict.reason.contains("open map"));
    /// ```
    pub fn render_tools(
        self,
        declarations: &ToolDeclarations,
        options: &RenderOptions,
    ) -> Result<RenderedTools, RenderError> {
        // Rendering copies and transforms schemas recursively: a schema nested too deep is
        // refused first (registered tools were checked already; these may not be).
        for tool in declarations.iter() {
            self.refuse_deep(tool)?;
        }
        let specs = declarations.iter().map(crate::Tool::function_spec);
        Ok(match self {
            Self::OpenAiChat => openai_chat::render_tools(specs, options),
            Self::OpenAiResponses => openai_responses::render_tools(specs, options),
            Self::Anthropic => anthropic::render_tools(specs, options),
            Self::Gemini => RenderedTools::all(gemini::render_tools(specs)?),
            Self::Text => RenderedTools::all(text::render_tools(specs)),
        })
    }

    /// Whether each of `tools` can be declared in this format: the error
    /// [`render_tools`](Self::render_tools) would give for the first that cannot (named,
    /// with the path and why), found by the same conversion, tool by tool, without rendering
    /// a `tools` array. For a client to refuse before a run what its first request (or a
    /// later one, once `shed` activates the tool) would.
    ///
    /// Only what no rendering can express fails: a schema nested deeper than
    /// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH), and for Gemini a recursive schema or a
    /// name its API refuses. Strict mode never fails (a tool that cannot be strict is
    /// declared non-strict), and limits of one request (how many tools) are not checked:
    /// a request declares only the tools offered.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{Args, Tool, ToolDefinition};
    /// use toolsmith::provider::Provider;
    ///
    /// let tree = Tool::SingleCommand(ToolDefinition::new("plant", "Plant a tree.", Args::new(json!({
    ///     "type": "object",
    ///     "properties": {"root": {"$ref": "#/$defs/node"}},
    ///     "$defs": {"node": {"type": "object", "properties": {
    ///         "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}
    /// }))));
    /// assert!(Provider::OpenAiChat.check_tools([&tree]).is_ok());
    /// let refused = Provider::Gemini.check_tools([&tree]).unwrap_err();
    /// assert_eq!(refused.tool, "plant");
    /// assert!(refused.reason.contains("recursi"), "{refused}");
    /// ```
    pub fn check_tools<'a>(
        self,
        tools: impl IntoIterator<Item = &'a crate::Tool>,
    ) -> Result<(), RenderError> {
        for tool in tools {
            self.refuse_deep(tool)?;
            match self {
                // Its conversion of one tool is its conversion in a request.
                Self::Gemini => drop(gemini::render_tools(std::iter::once(tool.function_spec()))?),
                // These render every tool that is not too deep (`render_tools` returns no
                // error of theirs): a tool that cannot be strict is declared non-strict.
                Self::OpenAiChat | Self::OpenAiResponses | Self::Anthropic | Self::Text => {}
            }
        }
        Ok(())
    }

    /// `tool` refused when a schema of it is nested deeper than rendering recurses.
    fn refuse_deep(self, tool: &crate::Tool) -> Result<(), RenderError> {
        match tool.deep_schema() {
            Some(deep) => Err(RenderError {
                provider: self,
                tool: tool.name().to_owned(),
                path: String::new(),
                reason: deep.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Reads the tool calls of a provider response.
    ///
    /// Takes the whole response or the part that holds the calls (OpenAI Chat: the response,
    /// its message or its `tool_calls`; Responses: the response or its `output`; Anthropic:
    /// the message or its `content`; Gemini: the response, a candidate's `content` or its
    /// `parts`; text: the completion as a JSON string, `{"content": …}`, or an OpenAI-style
    /// response). A call whose arguments cannot be read, even after
    /// [repair](repair_json), is an `Err(RejectedCall)` carrying an
    /// [`InvalidArguments`](crate::ToolError::InvalidArguments) error for that call alone;
    /// the other calls are read as usual. A call the response gives no id gets
    /// `toolsmith-call-N` (`N` its place among the calls; with a suffix when another call of
    /// the response has that id). A response of the wrong shape is a [`ResponseError`].
    pub fn parse_calls(self, response: &Value) -> Result<Vec<ParsedCall>, ResponseError> {
        let calls = match self {
            Self::OpenAiChat => openai_chat::parse_calls(response),
            Self::OpenAiResponses => openai_responses::parse_calls(response),
            Self::Anthropic => anthropic::parse_calls(response),
            Self::Gemini => gemini::parse_calls(response),
            Self::Text => text::parse_response(response),
        }?;
        Ok(answer::finished_calls(calls))
    }

    /// Renders the results of a turn's calls as the entries to append to the conversation,
    /// keeping each call's id: OpenAI Chat `role: tool` messages, Responses
    /// `function_call_output` items, one Anthropic user message of `tool_result` blocks, one
    /// Gemini user content of `functionResponse` parts, one text user message of
    /// `<tool_response>` blocks. An id Anthropic refuses (outside `^[a-zA-Z0-9_-]+$`, made
    /// by another provider) is rewritten as [`render_assistant`](Self::render_assistant)
    /// rewrites it for the call.
    ///
    /// A result's images ([`UserModelContent::Parts`](crate::UserModelContent::Parts), and
    /// [`JsonWithImages`](crate::UserModelContent::JsonWithImages), given as parts of the value's
    /// JSON text then its images) go where each API takes them: Anthropic `image` blocks in the
    /// `tool_result`'s content, Responses `input_image` items in the `function_call_output`'s
    /// output, Gemini `inlineData` parts in a user content after the `functionResponse` content,
    /// and for OpenAI Chat (whose `tool` messages are text only) one user message of `image_url`
    /// parts after the `tool` messages. The text format carries no images: each is a placeholder
    /// saying it is not shown.
    ///
    /// Errors are written for the model to correct itself. Rendering through
    /// [`ToolCallManager::render_results`](crate::ToolCallManager::render_results) also checks
    /// results against their tools' `returns` schemas and suggests the closest names for an
    /// unknown tool.
    pub fn render_results<'a, I>(self, replies: I) -> Vec<Value>
    where
        I: IntoIterator,
        I::Item: Into<CallReply<'a>>,
    {
        let replies: Vec<reply::Reply<'a>> = replies
            .into_iter()
            .map(|r| reply::Reply::plain(r.into()))
            .collect();
        reply::render(self, &replies)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When tools are rendered in the providers' strict mode (OpenAI Chat and Responses,
/// Anthropic; Gemini and text backends have none).
///
/// The default is [`WhenReturnsDeclared`](Self::WhenReturnsDeclared). OpenAI recommends
/// strict mode for every function (the model's arguments then always match the schema), so
/// [`Always`](Self::Always) is worth choosing: a tool that cannot be strict is then rendered
/// non-strict and reported in [`RenderedTools::not_strict`], never failing the rendering.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StrictMode {
    /// Tools that declare a `returns` schema (the rule of the tool model). The default.
    #[default]
    WhenReturnsDeclared,
    /// Every tool that can be strict.
    Always,
    /// No tool.
    Never,
}

/// How tools are rendered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RenderOptions {
    /// Which tools are rendered strict (default [`StrictMode::WhenReturnsDeclared`]).
    pub strict: StrictMode,
}

impl RenderOptions {
    /// Whether a tool (with or without a `returns` schema) is to be rendered strict.
    pub(crate) fn is_strict(&self, has_returns: bool) -> bool {
        match self.strict {
            StrictMode::WhenReturnsDeclared => has_returns,
            StrictMode::Always => true,
            StrictMode::Never => false,
        }
    }
}

/// A provider's `tools` array ([`Provider::render_tools`],
/// [`ToolCallManager::rendered_tools`](crate::ToolCallManager::rendered_tools)), and the
/// report of the tools that were to be strict and are not.
///
/// ```
/// use toolsmith::{Args, Tool, ToolDeclarations, ToolDefinition};
/// use toolsmith::provider::{Provider, RenderOptions};
///
/// let ping = ToolDefinition::new("ping", "Answer pong.", Args::empty());
/// let declarations = ToolDeclarations { shed: None, tools: vec![Tool::SingleCommand(ping)] };
/// let rendered = Provider::Anthropic.render_tools(&declarations, &RenderOptions::default()).unwrap();
/// assert!(rendered.not_strict.is_empty());
/// let body = serde_json::json!({"model": "claude", "tools": rendered.tools});
/// assert_eq!(body["tools"][0]["name"], "ping");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RenderedTools {
    /// The `tools` array, ready for the request body.
    pub tools: Value,
    /// The tools the [`RenderOptions`] chose for strict mode that are rendered non-strict,
    /// in declaration order: each names the tool, the JSON path in its parameter schema
    /// (`""` for the whole tool) and why it cannot be strict. Empty when every chosen tool
    /// is strict.
    pub not_strict: Vec<RenderError>,
}

impl RenderedTools {
    /// A rendering in which nothing was left non-strict.
    fn all(tools: Value) -> Self {
        Self {
            tools,
            not_strict: Vec::new(),
        }
    }
}

/// A tool that cannot be rendered for a provider, or (in [`RenderedTools::not_strict`]) not
/// in its strict mode: which tool, where in its schema (a JSON pointer, `""` for the whole
/// tool), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot render tool '{tool}' for {provider}{}: {reason}",
    if .path.is_empty() { String::new() } else { format!(" at {}", .path) })]
pub struct RenderError {
    /// The provider format.
    pub provider: Provider,
    /// The tool.
    pub tool: String,
    /// The JSON pointer, in the tool's parameter schema, of the part that cannot be rendered.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// A provider response that does not have the shape its format documents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid {provider} response: {reason}")]
pub struct ResponseError {
    /// The provider format.
    pub provider: Provider,
    /// What was expected and not found.
    pub reason: String,
}

impl ResponseError {
    pub(crate) fn new(provider: Provider, reason: impl Into<String>) -> Self {
        Self {
            provider,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Provider;

    #[test]
    fn a_call_that_named_no_tool_is_echoed_under_a_name_the_apis_take() {
        use super::{AssistantCall, CallReply, UNNAMED_CALL_NAME};
        use crate::ToolError;
        use serde_json::json;

        let arguments = json!({});
        let call = AssistantCall::new("call_1", "", &arguments);
        let named = |provider: Provider| {
            let turn = provider.render_assistant(None, [call]).remove(0);
            match provider {
                Provider::OpenAiChat => turn["tool_calls"][0]["function"]["name"].clone(),
                Provider::OpenAiResponses => turn["name"].clone(),
                Provider::Anthropic => turn["content"][0]["name"].clone(),
                Provider::Gemini => turn["parts"][0]["functionCall"]["name"].clone(),
                _ => unreachable!(),
            }
        };
        for provider in [
            Provider::OpenAiChat,
            Provider::OpenAiResponses,
            Provider::Anthropic,
            Provider::Gemini,
        ] {
            assert_eq!(named(provider), UNNAMED_CALL_NAME, "{provider:?}");
        }
        // Gemini matches results by name: the result goes under the same one.
        let result = Err(ToolError::UnknownTool(String::new()));
        let reply = CallReply {
            id: "call_1",
            name: "",
            result: &result,
        };
        let results = Provider::Gemini.render_results([reply]);
        assert_eq!(
            results[0]["parts"][0]["functionResponse"]["name"],
            UNNAMED_CALL_NAME
        );
    }

    #[test]
    fn calls_with_empty_ids_get_ids_of_their_own() {
        use super::repeated_ids;
        use serde_json::json;

        // Gemini's and LM Studio's OpenAI-compatible endpoints send `"id": ""`, and
        // compatible servers of the other formats may too. (Responses and Anthropic turns go
        // back as written, with these ids written into them.)
        let responses = [
            (
                Provider::OpenAiResponses,
                json!([
                    {"type": "function_call", "call_id": "", "name": "a", "arguments": "{}"},
                    {"type": "function_call", "call_id": "", "id": "", "name": "b", "arguments": "{}"}
                ]),
            ),
            (
                Provider::Anthropic,
                json!({"content": [
                    {"type": "tool_use", "id": "", "name": "a", "input": {}},
                    {"type": "tool_use", "id": "", "name": "b", "input": {}}
                ]}),
            ),
            (
                Provider::OpenAiChat,
                json!({"role": "assistant", "tool_calls": [
                    {"id": "", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                    {"id": "", "type": "function", "function": {"name": "b", "arguments": "{}"}}
                ]}),
            ),
            (
                Provider::Gemini,
                json!({"parts": [
                    {"functionCall": {"id": "", "name": "a", "args": {}}},
                    {"functionCall": {"id": "", "name": "b", "args": {}}}
                ]}),
            ),
            (
                Provider::Text,
                json!(
                    "<tool_call>{\"id\": \"\", \"name\": \"a\", \"arguments\": {}}</tool_call>\
                       <tool_call>{\"id\": \"\", \"name\": \"b\", \"arguments\": {}}</tool_call>"
                ),
            ),
        ];
        for (provider, response) in responses {
            let calls = provider.parse_calls(&response).unwrap();
            let ids: Vec<&str> = calls
                .iter()
                .map(|call| call.as_ref().unwrap().id.as_str())
                .collect();
            assert_eq!(ids, ["toolsmith-call-0", "toolsmith-call-1"], "{provider}");
            assert_eq!(repeated_ids(&calls), [false, false], "{provider}");
        }
    }

    #[test]
    fn a_call_with_arguments_nested_too_deep_is_echoed_without_them() {
        use crate::tool::nesting::testing::{nested, on_small_stack};
        use crate::{ToolArguments, ToolCallRequest};
        use serde_json::json;

        on_small_stack(|| {
            // Arguments a caller built (a provider's are refused when read).
            let arguments = ToolArguments::from_iter([("x", nested(100_000))]);
            let request = ToolCallRequest::new("c1", "t", arguments);
            for provider in Provider::ALL {
                let turn = provider.render_assistant(None, [&request]);
                let echoed = match provider {
                    Provider::OpenAiChat => {
                        turn[0]["tool_calls"][0]["function"]["arguments"].clone()
                    }
                    Provider::OpenAiResponses => turn[0]["arguments"].clone(),
                    Provider::Anthropic => turn[0]["content"][0]["input"].clone(),
                    Provider::Gemini => turn[0]["parts"][0]["functionCall"]["args"].clone(),
                    _ => turn[0]["content"].clone(),
                };
                let expected = match provider {
                    Provider::OpenAiChat | Provider::OpenAiResponses => json!("{}"),
                    Provider::Anthropic | Provider::Gemini => json!({}),
                    _ => json!("<tool_call>\n{\"name\":\"t\",\"arguments\":{}}\n</tool_call>"),
                };
                assert_eq!(echoed, expected, "{provider}");
            }
        });
    }

    #[test]
    fn images_in_results_reach_every_format_that_takes_them() {
        use crate::{ContentPart, Image, ToolCallResult};
        use serde_json::json;

        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let result = Ok(ToolCallResult::parts([
            ContentPart::text("The page:"),
            image.clone().into(),
        ]));
        let rendered = |provider: Provider| provider.render_results([("c1", "shot", &result)]);
        let anthropic = rendered(Provider::Anthropic);
        assert_eq!(
            anthropic[0]["content"][0]["content"],
            json!([{"type": "text", "text": "The page:"}, {"type": "image", "source":
                {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}])
        );
        let text = rendered(Provider::Text);
        let written = text[0]["content"].as_str().unwrap();
        assert!(
            written.contains("The page:\\n[image: image/png, 8 bytes; not shown: this model's text format carries no images]"),
            "{written}"
        );
        // Parts with nothing to show are an empty text, never an empty array the APIs
        // would refuse.
        let empty = Ok(ToolCallResult::parts([ContentPart::text("")]));
        let anthropic = Provider::Anthropic.render_results([("c1", "shot", &empty)]);
        assert_eq!(anthropic[0]["content"][0]["content"], "");
        let responses = Provider::OpenAiResponses.render_results([("c1", "shot", &empty)]);
        assert_eq!(responses[0]["output"], "");
        let user = Provider::Text.render_user_with_images("Look:", &[image]);
        assert_eq!(
            user["content"],
            "Look:\n[image: image/png, 8 bytes; not shown: this model's text format carries no images]"
        );
    }

    #[test]
    fn serde_names_are_the_short_names() {
        for provider in Provider::ALL {
            let written = serde_json::to_value(provider).expect("serializes");
            assert_eq!(written, provider.name(), "{provider:?}");
            let read: Provider = serde_json::from_value(written).expect("deserializes");
            assert_eq!(read, provider);
        }
    }
}

#[cfg(test)]
mod parameter_roots {
    use super::{Provider, RenderOptions};
    use crate::{Args, Tool, ToolDeclarations, ToolDefinition};
    use serde_json::{Value, json};

    /// The parameter schema `provider` is given for a tool whose arguments are `schema`.
    fn declared(provider: Provider, schema: Value) -> Value {
        let tool = Tool::SingleCommand(ToolDefinition::new("t", "A tool.", Args::new(schema)));
        let declarations = ToolDeclarations {
            shed: None,
            tools: vec![tool],
        };
        let rendered = provider
            .render_tools(&declarations, &RenderOptions::default())
            .unwrap();
        let tool = &rendered.tools[0];
        match provider {
            Provider::OpenAiChat => tool["function"]["parameters"].clone(),
            Provider::OpenAiResponses | Provider::Text => tool["parameters"].clone(),
            Provider::Anthropic => tool["input_schema"].clone(),
            _ => tool["functionDeclarations"][0]["parameters"].clone(),
        }
    }

    #[test]
    fn a_root_that_names_no_type_or_no_properties_is_declared_as_an_object() {
        // OpenAI refuses `{"type": "object"}` ("object schema missing properties"), as MCP
        // servers write tools without arguments.
        for provider in [Provider::OpenAiChat, Provider::OpenAiResponses] {
            assert_eq!(
                declared(provider, json!({"type": "object"})),
                json!({"type": "object", "properties": {}}),
                "{provider}"
            );
        }
        // A root without `type` (OpenAI and Anthropic refuse it; Gemini's conversion dropped
        // its properties, declaring a tool without arguments) or with a list of types.
        let search = json!({"type": "string"});
        for root in [
            json!({"properties": {"q": search}, "required": ["q"]}),
            json!({"type": ["object", "null"], "properties": {"q": search}, "required": ["q"]}),
        ] {
            for provider in Provider::ALL {
                let parameters = declared(provider, root.clone());
                assert_eq!(parameters["type"], "object", "{provider}: {parameters}");
                assert_eq!(
                    parameters["properties"]["q"]["type"], "string",
                    "{provider}: {parameters}"
                );
                assert_eq!(parameters["required"], json!(["q"]), "{provider}");
            }
        }
    }
}
