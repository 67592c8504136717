//! [`AnthropicModel`]: Anthropic's Messages API.

use std::borrow::Cow;

use serde_json::{Value, json};
use toolsmith_core::provider::{ParsedCall, Provider};

use super::anthropic_cache::{
    self, CACHE_CONTROL, EXTENDED_CACHE_TTL_BETA, MAX_MARKS, PromptCaching,
};
use super::api::{self, HttpApi, HttpClient};
use super::body::{self, count};
use super::builder::{Endpoint, HttpModelBuilder};
use super::context_overflow::OverflowShape;
use super::request_body::RequestBody;
use super::streamed::anthropic::AnthropicAssembler;
use crate::model::{
    ChatRequest, ChatResponse, ImageLimits, ModelError, ProviderTurn, ToolChoice, Usage,
};

const PROVIDER: Provider = Provider::Anthropic;

impl super::builder::Configured for AnthropicModel {
    const ENDPOINT: Endpoint = Endpoint {
        name: PROVIDER.name(),
        default_base_url: "https://api.anthropic.com",
        key_vars: &["ANTHROPIC_API_KEY"],
        base_url_var: "ANTHROPIC_BASE_URL",
        overflow: OverflowShape::Anthropic,
    };
}

/// The API version every request names (`anthropic-version`).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The output limit of a request that sets none: Anthropic requires `max_tokens`.
pub const DEFAULT_ANTHROPIC_MAX_TOKENS: u32 = 4096;

/// A model behind Anthropic's Messages API (`POST {base}/v1/messages`).
///
/// The key goes in `x-api-key`, with `anthropic-version: 2023-06-01`. The system prompt is
/// the `system` field; `max_tokens` is the request's limit, else the builder's
/// [`max_output_tokens`](HttpModelBuilder::max_output_tokens), else
/// [`DEFAULT_ANTHROPIC_MAX_TOKENS`]. The model's turns go back as the content blocks it
/// answered ([`ProviderTurn`](crate::model::ProviderTurn): `thinking` blocks with their
/// signatures included, which extended thinking with tools requires); calls of messages
/// made elsewhere are echoed as `tool_use` blocks, results sent as `tool_result` blocks
/// (with `is_error`), rendered by `toolsmith_core::provider`. Requests are marked for
/// Anthropic's prompt cache ([`PromptCaching`], on by default with the five-minute
/// lifetime): the last tool, the system prompt and the last message's last block. Usage
/// counts every input token (`input_tokens` plus `cache_read_input_tokens` and
/// `cache_creation_input_tokens`; cached: `cache_read_input_tokens`) and `output_tokens`.
///
/// ```no_run
/// use toolsmith::harness::model::{ChatModel, ChatRequest, Message};
/// use toolsmith::harness::model::http::AnthropicModel;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let model = AnthropicModel::builder()
///     .api_key(std::env::var("ANTHROPIC_API_KEY")?)
///     .max_output_tokens(1024)
///     .build()?;
/// let request = ChatRequest {
///     model: "claude-sonnet-4-5".into(),
///     messages: vec![Message::user("What is 2 + 3?")],
///     ..ChatRequest::default()
/// };
/// println!("{:?}", model.complete(&request).await?.text);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    client: HttpClient,
    caching: PromptCaching,
    /// The cache marks the client's body fields carry: fixed at `build()`, counted once.
    field_marks: usize,
}

impl AnthropicModel {
    /// A builder, for the official API unless given a [`base_url`](HttpModelBuilder::base_url).
    #[must_use]
    pub fn builder() -> HttpModelBuilder<Self> {
        HttpModelBuilder::new()
    }

    /// A client configured from `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` (default
    /// `https://api.anthropic.com`). Without a key, only another base URL is accepted.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::builder().env_defaults().build()
    }
}

impl HttpModelBuilder<AnthropicModel> {
    /// Whether and how requests are marked for Anthropic's prompt cache (default
    /// [`PromptCaching::FiveMinutes`]; see [`PromptCaching`] for where the marks go and
    /// why it is on).
    ///
    /// ```
    /// use toolsmith::harness::model::http::{AnthropicModel, PromptCaching};
    ///
    /// let model = AnthropicModel::builder()
    ///     .api_key("sk-ant-test")
    ///     .prompt_caching(PromptCaching::Off)
    ///     .build()
    ///     .unwrap();
    /// # let _ = model;
    /// ```
    #[must_use]
    pub fn prompt_caching(mut self, caching: PromptCaching) -> Self {
        self.settings.prompt_caching = caching;
        self
    }

    /// The client; a bad base URL or header, or no key for the official API, is a
    /// [`ModelError::Config`].
    pub fn build(self) -> Result<AnthropicModel, ModelError> {
        let caching = self.settings.prompt_caching;
        let mut fixed = vec![("anthropic-version", ANTHROPIC_VERSION)];
        if caching == PromptCaching::OneHour {
            fixed.push(("anthropic-beta", EXTENDED_CACHE_TTL_BETA));
        }
        let client = self.client(|key| vec![("x-api-key".to_owned(), key.to_owned())], &fixed)?;
        let field_marks = anthropic_cache::marks_in_fields(&client.body_fields);
        Ok(AnthropicModel {
            client,
            caching,
            field_marks,
        })
    }
}

api::chat_model_over_api!(
    AnthropicModel,
    PROVIDER,
    /// Streams the answer (`"stream": true`): text pieces as [`StreamDelta::Text`](crate::model::StreamDelta::Text), each
    /// `tool_use` block as [`StreamDelta::ToolCallArguments`](crate::model::StreamDelta::ToolCallArguments) (its id and name with an
    /// empty fragment when the block starts, then its input's JSON in pieces); thinking is
    /// not reported. The answer returned is what [`complete`](crate::model::ChatModel::complete) would
    /// have read, its content blocks (thinking and signatures included) the same.
);

impl HttpApi for AnthropicModel {
    type Assembler = AnthropicAssembler;

    /// [`ImageLimits::anthropic`]: its refusals are read in `image_refusal.rs`.
    const IMAGE_LIMITS: ImageLimits = ImageLimits::anthropic();

    fn client(&self) -> &HttpClient {
        &self.client
    }

    /// Always one: the API requires `max_tokens`.
    fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        Some(
            self.client
                .output_limit(request)
                .unwrap_or(DEFAULT_ANTHROPIC_MAX_TOKENS),
        )
    }

    fn body(&self, request: &ChatRequest) -> Result<RequestBody, ModelError> {
        let mut body = body::naming_model(PROVIDER, request)?;
        let max_tokens =
            HttpApi::output_limit(self, request).unwrap_or(DEFAULT_ANTHROPIC_MAX_TOKENS);
        body.insert("max_tokens".to_owned(), json!(max_tokens));
        // At most four marks, the API's limit, those of the body fields counted.
        let mark = self.caching.mark();
        let mut marks_spent = self.field_marks;
        if let Some(system) = &request.system {
            let system = anthropic_cache::system(system, mark.as_ref());
            // Blocks only when marked.
            marks_spent += usize::from(system.is_array());
            body.insert("system".to_owned(), system);
        }
        body.insert(
            "messages".to_owned(),
            Value::Array(body::conversation(PROVIDER, &request.messages)?),
        );
        body::declare_tools(
            PROVIDER,
            request,
            &self.client.rendered,
            &mut body,
            "tool_choice",
            tool_choice,
            mark.as_ref().map(|mark| (CACHE_CONTROL, mark)),
        )?;
        if let Some(mark) = &mark {
            // The declared tools (rendered apart, `null` in the map) carry one on their last.
            marks_spent += usize::from(body.contains_key("tools"));
            if let Some(Value::Array(messages)) = body.get_mut("messages") {
                let marks = MAX_MARKS.saturating_sub(marks_spent);
                anthropic_cache::mark_conversation(messages, mark, marks);
            }
        }
        if let Some(temperature) = request.options.temperature.and_then(body::number) {
            body.insert("temperature".to_owned(), temperature);
        }
        Ok(body)
    }

    fn path(_: &ChatRequest, _streamed: bool) -> Result<Cow<'static, str>, ModelError> {
        Ok(Cow::Borrowed("/v1/messages"))
    }

    /// The image the path a refusal's message starts with names
    /// (`messages.2.content.0.tool_result.content.1.image.source.base64: …`), see
    /// [`refused_image`](super::anthropic_image_path::refused_image).
    fn refused_image(request: &ChatRequest, body: &RequestBody, message: &str) -> Option<usize> {
        let Some(Value::Array(messages)) = body.get("messages") else {
            return None;
        };
        super::anthropic_image_path::refused_image(message, messages, &request.messages)
    }

    /// The answer, with its usage: every input token counted (cache reads and
    /// writes included), cache reads as cached.
    fn read_answer(answer: &Value) -> Result<ChatResponse, ModelError> {
        let cache_read = count(answer, "/usage/cache_read_input_tokens");
        let usage = Usage {
            input_tokens: count(answer, "/usage/input_tokens")
                .saturating_add(cache_read)
                .saturating_add(count(answer, "/usage/cache_creation_input_tokens")),
            output_tokens: count(answer, "/usage/output_tokens"),
            cached_input_tokens: cache_read,
        };
        let mut response = body::answer(PROVIDER, answer, usage)?;
        if let Some(turn) = &mut response.provider_turn {
            objects_as_inputs(turn, &response.calls);
        }
        Ok(response)
    }
}

/// `choice` as the Messages API takes it, `None` for its default (`auto`).
fn tool_choice(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::Auto => None,
        ToolChoice::None => Some(json!({"type": "none"})),
        ToolChoice::Required => Some(json!({"type": "any"})),
        ToolChoice::Tool(name) => Some(json!({"type": "tool", "name": name})),
    }
}

/// The turn with every `tool_use` input an object, as the API takes one back (it requires
/// one). An input a compatible server wrote as JSON text, which `calls` (the answer's calls,
/// one a `tool_use` block, in order) read and ran, goes back as the object the call ran
/// with. One that is no object and was not read (a call cut off while streaming keeps the
/// text it was cut at, so that the call is rejected with it), or none, goes back as `{}`,
/// its rejection answering it.
fn objects_as_inputs(turn: &mut ProviderTurn, calls: &[ParsedCall]) {
    let blocks: Vec<&mut Value> = turn
        .entries
        .iter_mut()
        .filter_map(|entry| entry.get_mut("content").and_then(Value::as_array_mut))
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .collect();
    // Each block is its call only when the two agree in number.
    let read = blocks.len() == calls.len();
    for (index, block) in blocks.into_iter().enumerate() {
        if block.get("input").is_some_and(Value::is_object) {
            continue;
        }
        block["input"] = match calls.get(index).filter(|_| read) {
            Some(Ok(call)) => call.arguments.as_value().clone(),
            _ => json!({}),
        };
    }
}
