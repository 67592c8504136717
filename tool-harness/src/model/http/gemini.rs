//! [`GeminiModel`]: Google's Gemini API, `generateContent`.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};
use toolsmith_core::provider::Provider;

use super::api::{self, HttpApi, HttpClient};
use super::body::{self, count};
use super::builder::{Endpoint, HttpModelBuilder};
use super::context_overflow::OverflowShape;
use super::request_body::RequestBody;
use super::streamed::gemini::GeminiAssembler;
use crate::model::{ChatRequest, ChatResponse, ImageLimits, ModelError, ToolChoice, Usage};

const PROVIDER: Provider = Provider::Gemini;

impl super::builder::Configured for GeminiModel {
    const ENDPOINT: Endpoint = Endpoint {
        name: PROVIDER.name(),
        default_base_url: "https://generativelanguage.googleapis.com",
        key_vars: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        base_url_var: "GEMINI_BASE_URL",
        overflow: OverflowShape::Gemini,
    };
}

/// A model behind the Gemini API (`POST {base}/v1beta/models/{model}:generateContent`;
/// streamed, `:streamGenerateContent?alt=sse`).
///
/// The key goes in `x-goog-api-key`. The system prompt is `systemInstruction` (left out
/// when it is empty or whitespace: Gemini refuses a part of empty text); temperature
/// and the output limit go in `generationConfig`; tools are `functionDeclarations` in the
/// OpenAPI subset Gemini reads; the model's turns go back as the parts it answered
/// ([`ProviderTurn`](crate::model::ProviderTurn): thoughts and thought signatures
/// included), calls of messages made elsewhere as `functionCall` parts, and results are
/// sent as `functionResponse` parts, rendered by `toolsmith_core::provider`.
/// Usage counts `usageMetadata.promptTokenCount` plus `toolUsePromptTokenCount` (the
/// input of Gemini's own tools, billed as input; cached: `cachedContentTokenCount`) and,
/// as output, `candidatesTokenCount` plus `thoughtsTokenCount`.
///
/// ```no_run
/// use toolsmith::harness::model::{ChatModel, ChatRequest, Message};
/// use toolsmith::harness::model::http::GeminiModel;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // GEMINI_API_KEY (or GOOGLE_API_KEY).
/// let model = GeminiModel::from_env()?;
/// let request = ChatRequest {
///     model: "gemini-2.5-flash".into(),
///     messages: vec![Message::user("What is 2 + 3?")],
///     ..ChatRequest::default()
/// };
/// println!("{:?}", model.complete(&request).await?.text);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct GeminiModel {
    client: HttpClient,
}

impl GeminiModel {
    /// A builder, for the official API unless given a [`base_url`](HttpModelBuilder::base_url).
    #[must_use]
    pub fn builder() -> HttpModelBuilder<Self> {
        HttpModelBuilder::new()
    }

    /// A client configured from `GEMINI_API_KEY` (or `GOOGLE_API_KEY`) and `GEMINI_BASE_URL`
    /// (default `https://generativelanguage.googleapis.com`). Without a key, only another
    /// base URL is accepted.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::builder().env_defaults().build()
    }
}

/// The method that answers whole.
const GENERATE: &str = "generateContent";

/// The method that streams the answer as server-sent events.
const STREAM_GENERATE: &str = "streamGenerateContent?alt=sse";

/// The path of the request's model's `method` (a `models/` prefix is accepted; other
/// characters than letters, digits, `-`, `.`, `_` and `~` are percent-encoded, so a name
/// cannot reach another path).
fn path(request: &ChatRequest, method: &str) -> Result<String, ModelError> {
    let model = body::model_name(PROVIDER, request)?;
    let model = model.strip_prefix("models/").unwrap_or(model);
    let mut path = String::from("/v1beta/models/");
    for byte in model.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            path.push(char::from(byte));
        } else {
            let _ = write!(path, "%{byte:02X}");
        }
    }
    path.push(':');
    path.push_str(method);
    Ok(path)
}

/// `choice` as Gemini's `toolConfig` says it, `None` for its default (`AUTO`).
fn tool_config(choice: &ToolChoice) -> Option<Value> {
    let calling = match choice {
        ToolChoice::Auto => return None,
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
    };
    Some(json!({"functionCallingConfig": calling}))
}

impl HttpModelBuilder<GeminiModel> {
    /// The client; a bad base URL or header, or no key for the official API, is a
    /// [`ModelError::Config`].
    pub fn build(self) -> Result<GeminiModel, ModelError> {
        let client = self.client(
            |key| vec![("x-goog-api-key".to_owned(), key.to_owned())],
            &[],
        )?;
        Ok(GeminiModel { client })
    }
}

api::chat_model_over_api!(
    GeminiModel,
    PROVIDER,
    /// Streams the answer (`streamGenerateContent?alt=sse`): the answer's text as
    /// [`StreamDelta::Text`](crate::model::StreamDelta::Text) (thoughts left out), each call as one
    /// [`StreamDelta::ToolCallArguments`](crate::model::StreamDelta::ToolCallArguments) with its name, its id when Gemini gave one, and
    /// its whole arguments (Gemini sends a call in one piece); the answer returned is what
    /// [`complete`](crate::model::ChatModel::complete) would have read, its text pieces joined into parts
    /// as Gemini answers unstreamed.
);

impl HttpApi for GeminiModel {
    type Assembler = GeminiAssembler;

    /// [`ImageLimits::gemini`]: its refusals are read in `image_refusal.rs`.
    const IMAGE_LIMITS: ImageLimits = ImageLimits::gemini();

    fn client(&self) -> &HttpClient {
        &self.client
    }

    fn body(&self, request: &ChatRequest) -> Result<RequestBody, ModelError> {
        let mut body = RequestBody::default();
        // Gemini refuses a part of empty text, and the request with it ("it has an empty
        // text parameter"); an empty system prompt says nothing, and is left out.
        let system = request.system.as_deref().filter(|s| !s.trim().is_empty());
        if let Some(system) = system {
            body.insert(
                "systemInstruction".to_owned(),
                json!({"parts": [{"text": system}]}),
            );
        }
        body.insert(
            "contents".to_owned(),
            Value::Array(body::conversation(PROVIDER, &request.messages)?),
        );
        body::declare_tools(
            PROVIDER,
            request,
            &self.client.rendered,
            &mut body,
            "toolConfig",
            tool_config,
            None,
        )?;
        let mut generation = Map::new();
        if let Some(temperature) = request.options.temperature.and_then(body::number) {
            generation.insert("temperature".to_owned(), temperature);
        }
        if let Some(tokens) = self.client.output_limit(request) {
            generation.insert("maxOutputTokens".to_owned(), json!(tokens));
        }
        if !generation.is_empty() {
            body.insert("generationConfig".to_owned(), Value::Object(generation));
        }
        Ok(body)
    }

    fn path(request: &ChatRequest, streamed: bool) -> Result<Cow<'static, str>, ModelError> {
        let method = if streamed { STREAM_GENERATE } else { GENERATE };
        path(request, method).map(Cow::Owned)
    }

    /// Nothing: the path asks for the stream.
    fn ask_to_stream(_: &mut Map<String, Value>) {}

    /// The answer, with its usage.
    fn read_answer(answer: &Value) -> Result<ChatResponse, ModelError> {
        let usage = Usage {
            input_tokens: count(answer, "/usageMetadata/promptTokenCount")
                .saturating_add(count(answer, "/usageMetadata/toolUsePromptTokenCount")),
            output_tokens: count(answer, "/usageMetadata/candidatesTokenCount")
                .saturating_add(count(answer, "/usageMetadata/thoughtsTokenCount")),
            cached_input_tokens: count(answer, "/usageMetadata/cachedContentTokenCount"),
        };
        body::answer(PROVIDER, answer, usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_stay_in_their_path_segment() {
        let request = |model: &str| ChatRequest {
            model: model.to_owned(),
            ..ChatRequest::default()
        };
        assert_eq!(
            path(&request("gemini-2.5-flash"), GENERATE).unwrap(),
            "/v1beta/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            path(&request("gemini-2.5-flash"), STREAM_GENERATE).unwrap(),
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            path(&request("models/gemini-2.5-pro"), GENERATE).unwrap(),
            "/v1beta/models/gemini-2.5-pro:generateContent"
        );
        assert_eq!(
            path(&request("../x?y"), GENERATE).unwrap(),
            "/v1beta/models/..%2Fx%3Fy:generateContent"
        );
        assert!(matches!(
            path(&request(" "), GENERATE),
            Err(ModelError::InvalidRequest { .. })
        ));
    }
}
