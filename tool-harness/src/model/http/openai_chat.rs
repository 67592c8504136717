//! [`OpenAiChatModel`]: OpenAI Chat Completions, and the servers that speak it (vLLM,
//! llama.cpp's server, Ollama, …).

use std::borrow::Cow;

use serde_json::{Map, Value, json};
use toolsmith_core::provider::Provider;

use super::api::{self, HttpApi, HttpClient};
use super::body::{self, count};
use super::builder::{Endpoint, HttpModelBuilder};
use super::openai;
use super::request_body::RequestBody;
use super::streamed::openai_chat::ChatAssembler;
use crate::model::{ChatRequest, ChatResponse, ImageLimits, ModelError, ToolChoice, Usage};

const PROVIDER: Provider = Provider::OpenAiChat;

impl super::builder::Configured for OpenAiChatModel {
    const ENDPOINT: Endpoint = openai::endpoint(PROVIDER.name());
}

/// A model behind OpenAI's Chat Completions API (`POST {base}/chat/completions`), which
/// vLLM, llama.cpp's server, Ollama and most local servers also speak: point
/// [`base_url`](HttpModelBuilder::base_url) at them (a local server may need no key).
///
/// The key goes in `Authorization: Bearer`. The system prompt is the first message; tools
/// are declared with `toolsmith_core::provider` (strict as the request's options say), the
/// model's earlier calls are echoed as `tool_calls`, results as `role: tool` messages.
/// Usage counts `usage.prompt_tokens` (cached: `prompt_tokens_details.cached_tokens`) and
/// `usage.completion_tokens`.
///
/// [`from_env`](Self::from_env) reads `OPENAI_API_KEY` and `OPENAI_BASE_URL`. Here, a
/// local server stands in for the API:
///
/// ```
/// use toolsmith::harness::model::{ChatModel, ChatRequest, Message, StopReason};
/// use toolsmith::harness::model::http::OpenAiChatModel;
/// # use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let server = format!("http://{}", listener.local_addr().unwrap());
/// # tokio::spawn(async move {
/// #     let (mut socket, _) = listener.accept().await.unwrap();
/// #     let mut seen = Vec::new();
/// #     let mut buffer = [0u8; 4096];
/// #     while !String::from_utf8_lossy(&seen).contains("gpt-4.1-mini") {
/// #         let n = socket.read(&mut buffer).await.unwrap();
/// #         if n == 0 { return; }
/// #         seen.extend_from_slice(&buffer[..n]);
/// #     }
/// #     let body = r#"{"choices": [{"index": 0, "message": {"role": "assistant", "content": "5"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 12, "completion_tokens": 1}}"#;
/// #     let answer = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
/// #     socket.write_all(answer.as_bytes()).await.unwrap();
/// # });
/// // `server` is e.g. "http://127.0.0.1:8080": vLLM, llama.cpp's server, Ollama, …
/// let model = OpenAiChatModel::builder()
///     .base_url(format!("{server}/v1"))
///     .build()
///     .unwrap();
/// let request = ChatRequest {
///     model: "gpt-4.1-mini".into(),
///     messages: vec![Message::user("What is 2 + 3?")],
///     ..ChatRequest::default()
/// };
/// let answer = model.complete(&request).await.unwrap();
/// assert_eq!(answer.text.as_deref(), Some("5"));
/// assert_eq!(answer.stop_reason, StopReason::EndTurn);
/// assert_eq!(answer.usage.total_tokens(), 13);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiChatModel {
    client: HttpClient,
    legacy_max_tokens: bool,
}

impl OpenAiChatModel {
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

impl HttpModelBuilder<OpenAiChatModel> {
    /// Sends the output limit as `max_tokens` (which older compatible servers read) rather
    /// than `max_completion_tokens` (OpenAI's current name, required by its reasoning models).
    #[must_use]
    pub fn legacy_max_tokens(mut self, legacy: bool) -> Self {
        self.settings.legacy_max_tokens = legacy;
        self
    }

    /// The client; a bad base URL or header, or no key for the official API, is a
    /// [`ModelError::Config`].
    pub fn build(self) -> Result<OpenAiChatModel, ModelError> {
        let legacy_max_tokens = self.settings.legacy_max_tokens;
        let client = self.client(openai::bearer, &[])?;
        Ok(OpenAiChatModel {
            client,
            legacy_max_tokens,
        })
    }
}

api::chat_model_over_api!(
    OpenAiChatModel,
    PROVIDER,
    /// Streams the answer (`"stream": true`, the usage asked for with
    /// `stream_options.include_usage`): text and refusal pieces as [`StreamDelta::Text`](crate::model::StreamDelta::Text),
    /// tool-call pieces as [`StreamDelta::ToolCallArguments`](crate::model::StreamDelta::ToolCallArguments); the answer returned is what
    /// [`complete`](crate::model::ChatModel::complete) would have read.
);

impl HttpApi for OpenAiChatModel {
    type Assembler = ChatAssembler;

    const IMAGE_LIMITS: ImageLimits = ImageLimits::openai();

    fn client(&self) -> &HttpClient {
        &self.client
    }

    fn body(&self, request: &ChatRequest) -> Result<RequestBody, ModelError> {
        let mut body = body::naming_model(PROVIDER, request)?;
        let mut messages = Vec::new();
        if let Some(system) = &request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.extend(body::conversation(PROVIDER, &request.messages)?);
        body.insert("messages".to_owned(), Value::Array(messages));
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
            let field = if self.legacy_max_tokens {
                "max_tokens"
            } else {
                "max_completion_tokens"
            };
            body.insert(field.to_owned(), json!(tokens));
        }
        Ok(body)
    }

    fn path(_: &ChatRequest, _streamed: bool) -> Result<Cow<'static, str>, ModelError> {
        Ok(Cow::Borrowed("/chat/completions"))
    }

    /// `"stream": true`, and the usage asked for in the stream's last chunk.
    fn ask_to_stream(body: &mut Map<String, Value>) {
        body.insert("stream".to_owned(), json!(true));
        body.insert("stream_options".to_owned(), json!({"include_usage": true}));
    }

    fn read_answer(answer: &Value) -> Result<ChatResponse, ModelError> {
        let usage = Usage {
            input_tokens: count(answer, "/usage/prompt_tokens"),
            output_tokens: count(answer, "/usage/completion_tokens"),
            cached_input_tokens: count(answer, "/usage/prompt_tokens_details/cached_tokens"),
        };
        body::answer(PROVIDER, answer, usage)
    }
}

/// `choice` as Chat Completions takes it, `None` for its default (`auto`).
fn tool_choice(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::Auto => None,
        ToolChoice::None => Some(json!("none")),
        ToolChoice::Required => Some(json!("required")),
        ToolChoice::Tool(name) => Some(json!({"type": "function", "function": {"name": name}})),
    }
}
