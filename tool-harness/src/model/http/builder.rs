//! [`HttpModelBuilder`]: the settings every HTTP client takes.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::anthropic_cache::PromptCaching;
use super::api::HttpClient;
use super::context_overflow::OverflowShape;
use super::openai_embeddings::EmbeddingSettings;
use super::transport::{Transport, TransportConfig};
use super::{DEFAULT_MAX_RETRIES, DEFAULT_STREAM_DEADLINE, DEFAULT_TIMEOUT};
use crate::model::{ImageLimits, ModelError};

/// The first wait before retrying, when the API does not say how long to wait.
const DEFAULT_RETRY_DELAY: Duration = Duration::from_millis(500);
/// The longest wait before a retry; an API asking for longer is not retried.
const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// Builds an HTTP model client `M` ([`OpenAiChatModel`](super::OpenAiChatModel),
/// [`OpenAiResponsesModel`](super::OpenAiResponsesModel),
/// [`AnthropicModel`](super::AnthropicModel), [`GeminiModel`](super::GeminiModel), or the
/// embedder [`OpenAiEmbedder`](super::OpenAiEmbedder)): the key, the base URL, the time
/// limit and the retry policy. Each client's `builder()` starts
/// one; `build()` makes the client (no request is sent).
///
/// ```
/// use std::time::Duration;
/// use toolsmith::harness::model::ChatModel;
/// use toolsmith::harness::model::http::OpenAiChatModel;
///
/// let model = OpenAiChatModel::builder()
///     .api_key("sk-test")
///     .base_url("http://127.0.0.1:8000/v1")
///     .timeout(Duration::from_secs(30))
///     .max_retries(1)
///     .build()
///     .unwrap();
/// assert_eq!(model.name(), "openai_chat");
/// ```
pub struct HttpModelBuilder<M> {
    pub(crate) settings: Settings,
    model: PhantomData<fn() -> M>,
}

/// The builder's settings (`None`: the client's default).
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) api_key: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) stream_deadline: Duration,
    pub(crate) max_retries: u32,
    pub(crate) retry_delay: Duration,
    pub(crate) max_retry_wait: Duration,
    pub(crate) max_output_tokens: Option<u32>,
    /// The limits on images the client reports in place of its API's.
    pub(crate) image_limits: Option<ImageLimits>,
    pub(crate) headers: Vec<(String, String)>,
    /// Fields every request body carries, where the client writes none of its own.
    pub(crate) body_fields: Map<String, Value>,
    /// OpenAI Chat only: send `max_tokens` rather than `max_completion_tokens`.
    pub(crate) legacy_max_tokens: bool,
    /// Anthropic only: the prompt-cache marks its requests carry.
    pub(crate) prompt_caching: PromptCaching,
    /// Embedders only: the model and its vectors.
    pub(crate) embedding: EmbeddingSettings,
}

/// The body fields a client writes or leaves out itself, depending on how it is asked:
/// each client's `build()` refuses them as [`HttpModelBuilder::body_field`]s, since a
/// `"stream": true` in every request would make [`complete`](crate::model::ChatModel::complete)
/// ask for events it does not read.
const CLIENT_FIELDS: &[&str] = &["stream", "stream_options"];

/// What a client needs to know to resolve its settings. (`pub` for the sealed `Configured`
/// trait to name it; the module is private, so no user can.)
#[derive(Debug)]
pub struct Endpoint {
    /// What errors call the API (a provider's short name).
    pub(crate) name: &'static str,
    /// The official API's base URL.
    pub(crate) default_base_url: &'static str,
    /// The environment variables that may hold the key, in order of preference.
    pub(crate) key_vars: &'static [&'static str],
    /// The environment variable that may hold the base URL.
    pub(crate) base_url_var: &'static str,
    /// How its errors say that a request is longer than the model's context window.
    pub(crate) overflow: OverflowShape,
}

impl<M> Default for HttpModelBuilder<M> {
    fn default() -> Self {
        Self {
            settings: Settings {
                api_key: None,
                base_url: None,
                timeout: DEFAULT_TIMEOUT,
                stream_deadline: DEFAULT_STREAM_DEADLINE,
                max_retries: DEFAULT_MAX_RETRIES,
                retry_delay: DEFAULT_RETRY_DELAY,
                max_retry_wait: DEFAULT_MAX_RETRY_WAIT,
                max_output_tokens: None,
                image_limits: None,
                headers: Vec::new(),
                body_fields: Map::new(),
                legacy_max_tokens: false,
                prompt_caching: PromptCaching::default(),
                embedding: EmbeddingSettings::default(),
            },
            model: PhantomData,
        }
    }
}

impl<M> Clone for HttpModelBuilder<M> {
    fn clone(&self) -> Self {
        Self {
            settings: self.settings.clone(),
            model: PhantomData,
        }
    }
}

impl<M> fmt::Debug for HttpModelBuilder<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.settings;
        f.debug_struct("HttpModelBuilder")
            .field("api_key", &s.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "base_url",
                &s.base_url.as_deref().map(crate::redacted_url::redacted_url),
            )
            .field("timeout", &s.timeout)
            .field("stream_deadline", &s.stream_deadline)
            .field("max_retries", &s.max_retries)
            .field("retry_delay", &s.retry_delay)
            .field("max_retry_wait", &s.max_retry_wait)
            .field("max_output_tokens", &s.max_output_tokens)
            .field("image_limits", &s.image_limits)
            .field(
                "headers",
                &s.headers.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            )
            .field("body_fields", &s.body_fields.keys().collect::<Vec<_>>())
            .field("embedding", &s.embedding)
            .finish()
    }
}

impl<M> HttpModelBuilder<M> {
    /// The API key (sent as the provider's auth header; never printed).
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.settings.api_key = Some(key.into());
        self
    }

    /// The base URL: an OpenAI-compatible server's (`http://localhost:11434/v1` for Ollama),
    /// a proxy's, or a test server's. A trailing `/` is ignored.
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.settings.base_url = Some(url.into());
        self
    }

    /// The time limit of one attempt, from connecting to the last byte of the answer
    /// (default 120 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = timeout;
        self
    }

    /// The time limit of a whole streamed answer
    /// ([`ChatModel::stream`](crate::model::ChatModel::stream)), from the request's sending to
    /// the answer's last event, its retries included (default 30 min,
    /// [`DEFAULT_STREAM_DEADLINE`](super::DEFAULT_STREAM_DEADLINE)). The
    /// [`timeout`](Self::timeout) bounds each wait for more of a stream, so a server whose
    /// bytes keep coming (a keep-alive comment every few seconds) never passes it; past this
    /// deadline the stream is dropped and the call fails with
    /// [`ModelError::StreamDeadline`](crate::model::ModelError::StreamDeadline), naming the
    /// model and the deadline. It is not retried, as a time-out is not.
    #[must_use]
    pub fn stream_deadline(mut self, deadline: Duration) -> Self {
        self.settings.stream_deadline = deadline;
        self
    }

    /// How many times a request is retried (default 2), counting together its 429 and 5xx
    /// answers, its connections refused, reset or closed before any answer, and its streams
    /// that failed or were cut off before anything of them was delivered.
    #[must_use]
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.settings.max_retries = retries;
        self
    }

    /// The first wait before a retry when the API does not say how long to wait (`Retry-After`);
    /// it doubles with each retry (default 500 ms).
    #[must_use]
    pub fn retry_delay(mut self, delay: Duration) -> Self {
        self.settings.retry_delay = delay;
        self
    }

    /// The longest wait before a retry (default 60 s): an API whose `Retry-After` asks for
    /// longer is not retried, and its error says how long it asked for.
    #[must_use]
    pub fn max_retry_wait(mut self, wait: Duration) -> Self {
        self.settings.max_retry_wait = wait;
        self
    }

    /// One more header for every request (an organisation or project id, a proxy's token).
    /// A header of the same name replaces the client's own.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.headers.push((name.into(), value.into()));
        self
    }

    /// One more field for every request body, for what the API offers and the client has
    /// no setting for: OpenAI's `reasoning` or `reasoning_effort`, Anthropic's `thinking`,
    /// Gemini's `generationConfig.thinkingConfig`, a `top_p`, a `service_tier`. It fills in
    /// what the client leaves out and never replaces what the client writes: an object the
    /// client also writes (Gemini's `generationConfig`) gets the field's keys it lacks, key
    /// by key, and a value the client sets (the model, the messages, the tools, Responses'
    /// `store`, a limit or temperature the request sets) stays the client's.
    ///
    /// `stream` and `stream_options` are the client's alone: it writes them when asked
    /// through [`ChatModel::stream`](crate::model::ChatModel::stream), and `build()` refuses
    /// them as body fields with a [`ModelError::Config`].
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::harness::model::http::AnthropicModel;
    ///
    /// let model = AnthropicModel::builder()
    ///     .api_key("sk-ant-test")
    ///     .max_output_tokens(16_000)
    ///     .body_field("thinking", json!({"type": "enabled", "budget_tokens": 10_000}))
    ///     .build()
    ///     .unwrap();
    /// ```
    #[must_use]
    pub fn body_field(mut self, name: impl Into<String>, value: Value) -> Self {
        self.settings.body_fields.insert(name.into(), value);
        self
    }

    /// Takes what was not set from the client's environment variables: the key (the
    /// first of them set, e.g. `OPENAI_API_KEY`; for Gemini `GEMINI_API_KEY`, then
    /// `GOOGLE_API_KEY`) and the base URL (e.g. `OPENAI_BASE_URL`). A value set on the
    /// builder, before or after, wins. The client's `from_env()` is `builder()` with this.
    ///
    /// ```
    /// use toolsmith::harness::model::http::OpenAiChatModel;
    ///
    /// // A local server's URL, and its key from `OPENAI_API_KEY` where that is set.
    /// let model = OpenAiChatModel::builder()
    ///     .base_url("http://127.0.0.1:8080/v1")
    ///     .env_defaults()
    ///     .build()
    ///     .unwrap();
    /// # let _ = model;
    /// ```
    #[must_use]
    pub fn env_defaults(mut self) -> Self
    where
        M: sealed::Configured,
    {
        let endpoint = &M::ENDPOINT;
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if self.settings.api_key.is_none() {
            self.settings.api_key = endpoint.key_vars.iter().find_map(|name| var(name));
        }
        if self.settings.base_url.is_none() {
            self.settings.base_url = var(endpoint.base_url_var);
        }
        self
    }

    /// The client's parts these settings describe, with `auth` the headers carrying the key
    /// and `fixed` the provider's other headers. Without a key, only a server other than the
    /// official API is accepted (a local server may need none); a body field the client
    /// decides itself ([`CLIENT_FIELDS`]) is refused.
    pub(crate) fn client(
        self,
        auth: impl FnOnce(&str) -> Vec<(String, String)>,
        fixed: &[(&str, &str)],
    ) -> Result<HttpClient, ModelError>
    where
        M: Configured,
    {
        let endpoint = &M::ENDPOINT;
        if let Some(field) = CLIENT_FIELDS
            .iter()
            .find(|field| self.settings.body_fields.contains_key(**field))
        {
            return Err(ModelError::Config {
                provider: endpoint.name.to_owned(),
                reason: format!(
                    "the body field `{field}` is the client's own: a streamed answer is asked \
                     for with `ChatModel::stream` (in an agent session, \
                     `AgentSessionBuilder::with_streaming(true)`), a whole one with `complete`"
                ),
            });
        }
        let transport = self.transport(auth, fixed)?;
        Ok(HttpClient {
            transport,
            max_output_tokens: self.settings.max_output_tokens,
            image_limits: self.settings.image_limits,
            body_fields: self.settings.body_fields,
            rendered: Arc::default(),
        })
    }

    /// The transport these settings describe (see [`client`](Self::client)).
    fn transport(
        &self,
        auth: impl FnOnce(&str) -> Vec<(String, String)>,
        fixed: &[(&str, &str)],
    ) -> Result<Transport, ModelError>
    where
        M: Configured,
    {
        let endpoint = &M::ENDPOINT;
        let s = &self.settings;
        let base_url = s
            .base_url
            .clone()
            .unwrap_or_else(|| endpoint.default_base_url.to_owned());
        let mut headers: Vec<(String, String, bool)> = fixed
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned(), false))
            .collect();
        match s
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            Some(key) => headers.extend(
                auth(key)
                    .into_iter()
                    .map(|(name, value)| (name, value, true)),
            ),
            None if base_url.trim().trim_end_matches('/') == endpoint.default_base_url => {
                return Err(ModelError::Config {
                    provider: endpoint.name.to_owned(),
                    reason: format!(
                        "no API key for {}: set {} or call .api_key(..)",
                        endpoint.default_base_url,
                        endpoint.key_vars.join(" or ")
                    ),
                });
            }
            None => {}
        }
        headers.extend(
            s.headers
                .iter()
                .map(|(name, value)| (name.clone(), value.clone(), true)),
        );
        Transport::new(TransportConfig {
            name: endpoint.name,
            overflow: endpoint.overflow,
            base_url,
            headers,
            timeout: s.timeout,
            stream_deadline: s.stream_deadline,
            max_retries: s.max_retries,
            retry_delay: s.retry_delay,
            max_retry_wait: s.max_retry_wait,
            api_key: s
                .api_key
                .as_deref()
                .map(str::trim)
                .filter(|key| !key.is_empty())
                .map(str::to_owned),
        })
    }
}

impl<M: ChatClient> HttpModelBuilder<M> {
    /// The output token limit of requests whose options set none (Anthropic, which requires
    /// one, otherwise gets 4096).
    #[must_use]
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.settings.max_output_tokens = Some(tokens);
        self
    }

    /// The limits on images the client reports
    /// ([`ChatModel::image_limits`](crate::model::ChatModel::image_limits)) in place of its
    /// API's documented ones: for a server that speaks the API with limits of its own (a
    /// local model behind the OpenAI Chat API), or a model whose own are other
    /// ([`ImageLimits::none`] checks nothing before sending).
    ///
    /// ```
    /// use toolsmith::harness::model::{ChatModel, ImageLimits};
    /// use toolsmith::harness::model::http::AnthropicModel;
    ///
    /// // A computer-use agent that sends only its latest 10 screenshots (fewer tokens a
    /// // turn); the older ones become notes in the conversation.
    /// let model = AnthropicModel::builder()
    ///     .api_key("sk-ant-test")
    ///     .image_limits(ImageLimits::anthropic().with_max_images(10))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(model.image_limits().max_images, Some(10));
    /// assert_eq!(model.image_limits().max_side, Some(8000));
    /// ```
    #[must_use]
    pub fn image_limits(mut self, limits: ImageLimits) -> Self {
        self.settings.image_limits = Some(limits);
        self
    }
}

/// The HTTP chat clients ([`OpenAiChatModel`](super::OpenAiChatModel),
/// [`OpenAiResponsesModel`](super::OpenAiResponsesModel),
/// [`AnthropicModel`](super::AnthropicModel), [`GeminiModel`](super::GeminiModel)), whose
/// builders take the settings of a model that writes text
/// ([`max_output_tokens`](HttpModelBuilder::max_output_tokens)); an
/// [`OpenAiEmbedder`](super::OpenAiEmbedder)'s does not. Sealed: implemented by these four
/// only.
pub trait ChatClient: sealed::Configured {}

impl ChatClient for super::OpenAiChatModel {}
impl ChatClient for super::OpenAiResponsesModel {}
impl ChatClient for super::AnthropicModel {}
impl ChatClient for super::GeminiModel {}

pub(crate) use sealed::Configured;

mod sealed {
    /// A client of the crate, with the settings its builder resolves against. Private, so
    /// that it also keeps [`ChatClient`](super::ChatClient) to the crate's clients.
    pub trait Configured {
        /// Its API's name, official base URL and environment variables.
        const ENDPOINT: super::Endpoint;
    }
}

impl<M> HttpModelBuilder<M> {
    /// A builder with the defaults.
    pub(crate) fn new() -> Self {
        Self::default()
    }
}
