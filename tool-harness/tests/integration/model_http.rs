//! The HTTP model clients (`toolsmith_harness::model::http`) against a local HTTP server
//! that records what they send and answers in each API's documented format. Nothing here
//! leaves 127.0.0.1.

mod agent_runs;
mod answering_model;
mod compaction;
mod context_too_long;
mod conversation;
mod declarations;
mod embeddings;
mod endless;
mod errors;
mod fallback;
mod image_refused;
mod images;
mod images_over_limits;
mod many_values;
mod missing_call_ids;
mod prompt_caching;
mod refused_image_located;
mod rendered_once;
mod server;
mod streaming;
mod strict;
mod turns;
mod typed;
mod unanswered;

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_harness::model::http::{
    AnthropicModel, GeminiModel, HttpModelBuilder, OpenAiChatModel, OpenAiResponsesModel,
};
use toolsmith_harness::model::{ChatModel, ChatRequest};

use server::{MockServer, Recorded, Reply};

/// The key every test client sends.
pub const KEY: &str = "test-key-123";

/// One of the four APIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

/// How a test client is configured beyond its key and base URL.
#[derive(Debug, Clone)]
pub struct Client {
    pub timeout: Duration,
    pub max_retries: u32,
    pub retry_delay: Duration,
    pub max_retry_wait: Duration,
    /// The time limit of a whole streamed answer; `None`: the client's default.
    pub stream_deadline: Option<Duration>,
}

impl Default for Client {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            max_retries: 2,
            retry_delay: Duration::from_millis(10),
            max_retry_wait: Duration::from_secs(5),
            stream_deadline: None,
        }
    }
}

fn configure<M>(builder: HttpModelBuilder<M>, base: &str, client: &Client) -> HttpModelBuilder<M> {
    let builder = builder
        .api_key(KEY)
        .base_url(base)
        .timeout(client.timeout)
        .max_retries(client.max_retries)
        .retry_delay(client.retry_delay)
        .max_retry_wait(client.max_retry_wait);
    match client.stream_deadline {
        Some(deadline) => builder.stream_deadline(deadline),
        None => builder,
    }
}

impl Api {
    pub const ALL: [Api; 4] = [Api::Chat, Api::Responses, Api::Anthropic, Api::Gemini];

    /// The client's name, as `ChatModel::name` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Api::Chat => "openai_chat",
            Api::Responses => "openai_responses",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gemini",
        }
    }

    /// A client of this API on the server at `server` (`http://127.0.0.1:<port>`); the
    /// OpenAI clients get the `/v1` base their users would give.
    pub fn model(self, server: &str, client: &Client) -> Box<dyn ChatModel> {
        let built: Result<Box<dyn ChatModel>, _> = match self {
            Api::Chat => configure(OpenAiChatModel::builder(), &format!("{server}/v1"), client)
                .build()
                .map(|m| Box::new(m) as Box<dyn ChatModel>),
            Api::Responses => configure(
                OpenAiResponsesModel::builder(),
                &format!("{server}/v1/"),
                client,
            )
            .build()
            .map(|m| Box::new(m) as Box<dyn ChatModel>),
            Api::Anthropic => configure(AnthropicModel::builder(), server, client)
                .build()
                .map(|m| Box::new(m) as Box<dyn ChatModel>),
            Api::Gemini => configure(GeminiModel::builder(), server, client)
                .build()
                .map(|m| Box::new(m) as Box<dyn ChatModel>),
        };
        built.unwrap_or_else(|err| panic!("{self:?}: cannot build the client: {err}"))
    }

    /// The model name the tests request.
    pub fn model_name(self) -> &'static str {
        match self {
            Api::Chat | Api::Responses => "gpt-4.1-mini",
            Api::Anthropic => "claude-sonnet-4-5",
            Api::Gemini => "gemini-2.5-flash",
        }
    }

    /// The path the API documents for a request.
    pub fn path(self) -> &'static str {
        match self {
            Api::Chat => "/v1/chat/completions",
            Api::Responses => "/v1/responses",
            Api::Anthropic => "/v1/messages",
            Api::Gemini => "/v1beta/models/gemini-2.5-flash:generateContent",
        }
    }

    /// Checks the request's method, path, content type and auth headers.
    pub fn check_request(self, request: &Recorded) {
        assert_eq!(request.method, "POST", "{self:?}");
        assert_eq!(request.path, self.path(), "{self:?}");
        assert_eq!(
            request.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
        match self {
            Api::Chat | Api::Responses => {
                let bearer = format!("Bearer {KEY}");
                assert_eq!(request.header("authorization"), Some(bearer.as_str()));
            }
            Api::Anthropic => {
                assert_eq!(request.header("x-api-key"), Some(KEY));
                assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(request.header("authorization"), None);
            }
            Api::Gemini => {
                assert_eq!(request.header("x-goog-api-key"), Some(KEY));
                assert_eq!(request.header("authorization"), None);
            }
        }
        assert!(!request.path.contains(KEY), "the key is not in the URL");
    }

    /// An error body as the API writes one, carrying `message`.
    pub fn error_body(self, status: u16, message: &str) -> Value {
        match self {
            Api::Chat | Api::Responses => json!({"error": {
                "message": message, "type": "invalid_request_error", "param": null, "code": null}}),
            Api::Anthropic => {
                let kind = match status {
                    401 => "authentication_error",
                    403 => "permission_error",
                    429 => "rate_limit_error",
                    529 => "overloaded_error",
                    500.. => "api_error",
                    _ => "invalid_request_error",
                };
                json!({"type": "error", "error": {"type": kind, "message": message}})
            }
            Api::Gemini => {
                let kind = match status {
                    401 => "UNAUTHENTICATED",
                    403 => "PERMISSION_DENIED",
                    429 => "RESOURCE_EXHAUSTED",
                    503 => "UNAVAILABLE",
                    500.. => "INTERNAL",
                    _ => "INVALID_ARGUMENT",
                };
                json!({"error": {"code": status, "message": message, "status": kind}})
            }
        }
    }

    /// The body a new client of this API sends for `request`, answered with a text.
    pub async fn body_sent(self, request: &ChatRequest) -> Value {
        let server = MockServer::start([Reply::json(200, &self.text_answer("done"))]).await;
        self.model(&server.base, &Client::default())
            .complete(request)
            .await
            .unwrap_or_else(|err| panic!("{self:?}: {err}"));
        server.requests().remove(0).body
    }

    /// A successful answer of `text`, with small usage counts.
    pub fn text_answer(self, text: &str) -> Value {
        match self {
            Api::Chat => json!({
                "id": "chatcmpl-9", "object": "chat.completion", "created": 1_700_000_000,
                "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                    "refusal": null, "annotations": []}, "logprobs": null, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
            }),
            Api::Responses => json!({
                "id": "resp_9", "object": "response", "created_at": 1_700_000_000,
                "status": "completed", "model": "gpt-4.1-mini",
                "output": [{"type": "message", "id": "msg_9", "status": "completed",
                    "role": "assistant", "content": [{"type": "output_text", "text": text,
                    "annotations": []}]}],
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 12}
            }),
            Api::Anthropic => json!({
                "id": "msg_9", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 10, "output_tokens": 2}
            }),
            Api::Gemini => json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2,
                    "totalTokenCount": 12},
                "modelVersion": "gemini-2.5-flash"
            }),
        }
    }
}
