//! [`OpenAiResponsesModel`]: OpenAI's Responses API.

use std::borrow::Cow;

use serde_json::{Value, json};
use toolsmith_core::provider::Provider;

use super::api::{self, HttpApi, HttpClient};
use super::body::{self, count};
use super::builder::{Endpoint, HttpModelBuilder};
use super::context_overflow::OverflowShape;
use super::openai;
use super::request_body::RequestBody;
use super::streamed::ReportedError;
use super::streamed::openai_responses::ResponsesAssembler;
use crate::model::{
    ChatRequest, ChatResponse, ImageLimits, ModelError, ProviderTurn, ToolChoice, Usage,
};

const PROVIDER: Provider = Provider::OpenAiResponses;

impl super::builder::Configured for OpenAiResponsesModel {
    const ENDPOINT: Endpoint = openai::endpoint(PROVIDER.name());
}

/// A model behind OpenAI's Responses API (`POST {base}/responses`).
///
/// Each request carries the whole conversation as `input` items (`store: false`: nothing is
/// kept on OpenAI's side, no `previous_response_id` is used); the system prompt goes in
/// `instructions`, the model's earlier calls are echoed as `function_call` items and results
/// sent as `function_call_output` items, all rendered by `toolsmith_core::provider`. A turn
/// in which a reasoning model reasoned goes back as its output items, its `reasoning` items
/// with their `encrypted_content` (and no item ids, which a request that stores nothing
/// cannot refer to), so the model keeps its reasoning across tool calls. A reasoning item
/// that comes without `encrypted_content` is left out of what goes back; where a server
/// sends it only when asked, ask with
/// `.body_field("include", json!(["reasoning.encrypted_content"]))` (models that do not
/// reason refuse that field). Usage
/// counts `usage.input_tokens` (cached: `input_tokens_details.cached_tokens`) and
/// `usage.output_tokens`. A response whose `status` is `failed` is the error its
/// `error.code` stands for (`server_error` a [`ModelError::Api`] with status 500,
/// `rate_limit_exceeded` a [`ModelError::RateLimited`], …), quoting its `error.message`.
///
/// ```no_run
/// use toolsmith::harness::model::{ChatModel, ChatRequest, Message};
/// use toolsmith::harness::model::http::OpenAiResponsesModel;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let model = OpenAiResponsesModel::from_env()?;
/// let request = ChatRequest {
///     model: "gpt-4.1-mini".into(),
///     system: Some("Answer in one line.".into()),
///     messages: vec![Message::user("What is 2 + 3?")],
///     ..ChatRequest::default()
/// };
/// println!("{:?}", model.complete(&request).await?.text);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiResponsesModel {
    client: HttpClient,
}

impl OpenAiResponsesModel {
    /// A builder, for the official API unless given a [`base_url`](HttpModelBuilder::base_url).
    #[must_use]
    pub fn builder() -> HttpModelBuilder<Self> {
        HttpModelBuilder::new()
    }

    /// A client configured from `OPENAI_API_KEY` and `OPENAI_BASE_URL` (default
    /// `https://api.openai.com/v1`). Without a key, only another base URL is accepted.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::builder().env_defaults().build()
    }
}

impl HttpModelBuilder<OpenAiResponsesModel> {
    /// The client; a bad base URL or header, or no key for the official API, is a
    /// [`ModelError::Config`].
    pub fn build(self) -> Result<OpenAiResponsesModel, ModelError> {
        let client = self.client(openai::bearer, &[])?;
        Ok(OpenAiResponsesModel { client })
    }
}

api::chat_model_over_api!(
    OpenAiResponsesModel,
    PROVIDER,
    /// Streams the answer (`"stream": true`): `output_text` and refusal pieces as
    /// [`StreamDelta::Text`](crate::model::StreamDelta::Text), each call's name and id when it begins and its argument pieces
    /// as [`StreamDelta::ToolCallArguments`](crate::model::StreamDelta::ToolCallArguments); the answer returned is the one the stream's
    /// `response.completed` event carries, read as [`complete`](crate::model::ChatModel::complete) reads
    /// it. A stream that ends before that event is a
    /// [`ModelError::MalformedResponse`]: its last call may be cut off.
);

impl HttpApi for OpenAiResponsesModel {
    type Assembler = ResponsesAssembler;

    const IMAGE_LIMITS: ImageLimits = ImageLimits::openai();

    fn client(&self) -> &HttpClient {
        &self.client
    }

    fn body(&self, request: &ChatRequest) -> Result<RequestBody, ModelError> {
        let mut body = body::naming_model(PROVIDER, request)?;
        if let Some(system) = &request.system {
            body.insert("instructions".to_owned(), json!(system));
        }
        body.insert(
            "input".to_owned(),
            Value::Array(body::conversation(PROVIDER, &request.messages)?),
        );
        body::declare_tools(
            PROVIDER,
            request,
            &self.client.rendered,
            &mut body,
            "tool_choice",
            tool_choice,
            None,
        )?;
        if let Some(temperature) = request.options.temperature.and_then(body::number) {
            body.insert("temperature".to_owned(), temperature);
        }
        if let Some(tokens) = self.client.output_limit(request) {
            body.insert("max_output_tokens".to_owned(), json!(tokens));
        }
        body.insert("store".to_owned(), json!(false));
        Ok(body)
    }

    fn path(_: &ChatRequest, _streamed: bool) -> Result<Cow<'static, str>, ModelError> {
        Ok(Cow::Borrowed("/responses"))
    }

    /// The answer, with its usage; a response whose `status` is `failed` is the
    /// API's error.
    fn read_answer(answer: &Value) -> Result<ChatResponse, ModelError> {
        if answer.get("status").and_then(Value::as_str) == Some("failed") {
            let failed = ReportedError::of_failed_response(answer);
            return Err(failed.into_error(PROVIDER.name(), OverflowShape::OpenAi));
        }
        let usage = Usage {
            input_tokens: count(answer, "/usage/input_tokens"),
            output_tokens: count(answer, "/usage/output_tokens"),
            cached_input_tokens: count(answer, "/usage/input_tokens_details/cached_tokens"),
        };
        let mut response = body::answer(PROVIDER, answer, usage)?;
        response.provider_turn = response.provider_turn.and_then(stateless_turn);
        Ok(response)
    }
}

/// `choice` as the Responses API takes it, `None` for its default (`auto`).
fn tool_choice(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::Auto => None,
        ToolChoice::None => Some(json!("none")),
        ToolChoice::Required => Some(json!("required")),
        ToolChoice::Tool(name) => Some(json!({"type": "function", "name": name})),
    }
}

/// The answer's output items as a request that stores nothing (`store: false`) can send
/// them back, or `None` where the rendered turn says the same. Nothing was kept on
/// OpenAI's side, so no item goes back with its `id` (the API would look it up and answer
/// 404), and a reasoning item goes back only with its `encrypted_content`, which is the
/// reasoning itself (a stateless request's reasoning items carry it). Without reasoning
/// items the output holds nothing the rendering of text and calls lacks.
fn stateless_turn(turn: ProviderTurn) -> Option<ProviderTurn> {
    let is_reasoning = |item: &Value| item.get("type").and_then(Value::as_str) == Some("reasoning");
    let replayable = |item: &Value| {
        !is_reasoning(item)
            || item
                .get("encrypted_content")
                .and_then(Value::as_str)
                .is_some_and(|content| !content.is_empty())
    };
    let entries: Vec<Value> = turn
        .entries
        .into_iter()
        .filter(replayable)
        .map(|mut item| {
            if let Some(fields) = item.as_object_mut() {
                fields.shift_remove("id");
            }
            item
        })
        .collect();
    entries.iter().any(is_reasoning).then_some(ProviderTurn {
        provider: turn.provider,
        entries,
    })
}
