//! [`ChatModel`]: the one trait a model client implements, and [`ModelError`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use toolsmith_core::{Tool, drop_panic_payload};

use super::{ChatRequest, ChatResponse, ImageLimits};

/// Why a model call failed. Each variant quotes what the API said, where it said anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The API refused the key (HTTP 401 or 403).
    #[error("{provider}: authentication failed (HTTP {status}): {message}")]
    Auth {
        /// The client, e.g. `openai_chat`.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The API's error message.
        message: String,
    },
    /// The API answered with an error status (a 400 for a bad request, a 5xx after the
    /// retries ran out), or reported an error inside a streamed answer: its status is then
    /// the one the error's code or type stands for (Anthropic's `overloaded_error` is 529),
    /// or the answer's 200 when it names none known.
    #[error("{provider}: API error (HTTP {status}): {message}")]
    Api {
        /// The client.
        provider: String,
        /// The HTTP status (for an error inside a streamed answer, the one it stands for).
        status: u16,
        /// The API's error message.
        message: String,
    },
    /// The request is longer than the model's context window (or, for Anthropic, than
    /// the 32 MB a request may be): the API said so (OpenAI's `context_length_exceeded`,
    /// Anthropic's "prompt is too long" or `request_too_large`, Gemini's "The input token
    /// count (N) exceeds the maximum number of tokens allowed (M)"), with an error status
    /// or inside a streamed answer. Not retried: the same request fails the same way. An
    /// [`AgentSession`](crate::agent::AgentSession) built
    /// [`with_context_overflow`](crate::agent::AgentSessionBuilder::with_context_overflow)
    /// shortens its conversation and asks again.
    #[error(
        "{provider}: the request is longer than the model's context window (HTTP {status}): {message}"
    )]
    ContextTooLong {
        /// The client, e.g. `anthropic`.
        provider: String,
        /// The HTTP status (400 or 413; for an error inside a streamed answer, the one it
        /// stands for).
        status: u16,
        /// The API's error message, which often gives the counts (`209353 tokens > 199999
        /// maximum`).
        message: String,
    },
    /// The API could not read, or will not take, an image of the request (a file that
    /// begins as a PNG but is corrupt, an animated GIF OpenAI refuses, an image too large
    /// in pixels or bytes), and so refused the whole request: OpenAI's `invalid_image`,
    /// `image_parse_error`, `invalid_image_format`…, Anthropic's "Could not process image"
    /// or "Image does not match the provided media type", Gemini's "Unable to process input
    /// image", with an error status or inside a streamed answer. Not retried: the same
    /// request fails the same way. Where the API says which image it was (Anthropic),
    /// `image` gives it. An [`AgentSession`](crate::agent::AgentSession) replaces that
    /// image (without `image`, every image of the request) with a note and asks again,
    /// unless built
    /// [`with_unreadable_images_removed(false)`](crate::agent::AgentSessionBuilder::with_unreadable_images_removed).
    #[error(
        "{provider}: the model could not read an image of the request (HTTP {status}): {message}"
    )]
    ImageRefused {
        /// The client, e.g. `anthropic`.
        provider: String,
        /// The HTTP status (400; for an error inside a streamed answer, the one it stands
        /// for).
        status: u16,
        /// The API's error message, which may locate the image in the API's own request
        /// (Anthropic's `messages.3.content.0.image.source.base64.data: …`).
        message: String,
        /// Which image was refused, when the API says so: its index among the request's
        /// images, counted in the order of its messages (a user message's images in
        /// order; a tool-results message's results in order, each result's image parts
        /// in order; an error result's images counted too, though no API is sent them).
        /// The Anthropic client reads it from the path its message starts with, mapped
        /// back through the body it sent; `None` when the API does not say (OpenAI,
        /// Gemini) or the path names no image of the request.
        image: Option<usize>,
    },
    /// Still rate limited (HTTP 429) after the retries ran out, or asking for a wait longer
    /// than an HTTP client's `max_retry_wait` (not retried).
    #[error("{provider}: rate limited (HTTP 429): {message}")]
    RateLimited {
        /// The client.
        provider: String,
        /// How long the API asked to wait, if it said.
        retry_after: Option<Duration>,
        /// The API's error message; for a wait longer than the client's `max_retry_wait`,
        /// followed by how long the server asked to wait and that it was not retried.
        message: String,
    },
    /// No complete answer within the client's timeout.
    #[error("{provider}: no answer within {after:?}")]
    Timeout {
        /// The client.
        provider: String,
        /// The timeout.
        after: Duration,
    },
    /// A streamed answer that did not end within the client's stream deadline (the HTTP
    /// clients' `stream_deadline`, 30 min by default): its bytes kept coming, each wait
    /// for more within the client's [`Timeout`](Self::Timeout), but the whole took longer
    /// (a server sending keep-alives without an end, or an answer slower than allowed).
    #[error(
        "{provider}: the streamed answer of model '{model}' did not end within {} (the \
         client's stream deadline)",
        crate::readable_duration::ReadableDuration(*after)
    )]
    StreamDeadline {
        /// The client.
        provider: String,
        /// The model the request asked for.
        model: String,
        /// The deadline.
        after: Duration,
    },
    /// The connection failed (refused, reset, DNS).
    #[error("{provider}: cannot reach {url}: {reason}")]
    Connection {
        /// The client.
        provider: String,
        /// The URL requested.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The answer was not the documented format (not JSON, truncated, wrong shape).
    #[error("{provider}: malformed response: {reason}")]
    MalformedResponse {
        /// The client.
        provider: String,
        /// What was wrong.
        reason: String,
    },
    /// The client cannot be used as configured (no API key for the official API, a bad base
    /// URL or header, no TLS setup).
    #[error("{provider}: client configuration: {reason}")]
    Config {
        /// The client.
        provider: String,
        /// What is wrong, and how to set it.
        reason: String,
    },
    /// The request cannot be sent in the provider's format (a tool schema the format cannot
    /// express, no model name, a user message without content for an API that refuses one,
    /// naming its index). Nothing was sent.
    #[error("{provider}: cannot send the request: {reason}")]
    InvalidRequest {
        /// The client.
        provider: String,
        /// What is wrong, naming the tool or field.
        reason: String,
    },
    /// Every model a [`FallbackModel`](super::FallbackModel) asked failed, two or more (a
    /// primary that alone was asked fails with its own error), each error but the last one
    /// [provider-side](Self::is_provider_side) (or what its own predicate moves on for): the
    /// last is the error that ended the call, the last model's or one not to move on for. What the call failed with is that last error
    /// ([`last_error`](Self::last_error)): an [`AgentSession`](crate::agent::AgentSession)
    /// shortens its conversation for a last [`ContextTooLong`](Self::ContextTooLong) and
    /// removes an image for a last [`ImageRefused`](Self::ImageRefused), as for the error
    /// alone; [`is_transient`](Self::is_transient) and
    /// [`is_provider_side`](Self::is_provider_side) answer for it. The message gives every
    /// error, in the order the models were asked.
    #[error("every model asked failed: {}", FailedInTurn(errors))]
    AllFailed {
        /// Each model asked and its error, in the order asked. Never empty. A
        /// [`FallbackModel`](super::FallbackModel) names a model by its place in its list
        /// (from 1), its [`name`](ChatModel::name) and the model name it was sent the
        /// request under (its own, for one added with
        /// [`or_as`](super::FallbackModel::or_as)): `model 2 (openai_chat, gpt-4.1-mini)`;
        /// a model of a fallback in the list by its place in both: `model 1.2 (…)`.
        errors: Vec<(String, ModelError)>,
    },
    /// A [`ScriptedModel`](super::ScriptedModel) has no turn left, or was scripted to fail.
    #[error("scripted model: {0}")]
    Script(String),
    /// A failure of a custom client.
    #[error("{0}")]
    Other(String),
}

/// The errors of [`ModelError::AllFailed`] written one after the other, each after its model.
struct FailedInTurn<'a>(&'a [(String, ModelError)]);

impl std::fmt::Display for FailedInTurn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (at, (model, error)) in self.0.iter().enumerate() {
            if at > 0 {
                f.write_str("; then ")?;
            }
            write!(f, "{model} -> {error}")?;
        }
        Ok(())
    }
}

impl ModelError {
    /// The variant's name, `snake_case` (`"rate_limited"`): a `chat` span's `error.type`.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Self::Auth { .. } => "auth",
            Self::Api { .. } => "api",
            Self::ContextTooLong { .. } => "context_too_long",
            Self::ImageRefused { .. } => "image_refused",
            Self::RateLimited { .. } => "rate_limited",
            Self::Timeout { .. } => "timeout",
            Self::StreamDeadline { .. } => "stream_deadline",
            Self::Connection { .. } => "connection",
            Self::MalformedResponse { .. } => "malformed_response",
            Self::Config { .. } => "config",
            Self::InvalidRequest { .. } => "invalid_request",
            Self::AllFailed { .. } => "all_failed",
            Self::Script(_) => "script",
            Self::Other(_) => "other",
        }
    }

    /// This error with `f` applied to the text it quotes: the API's message (`Auth`, `Api`,
    /// `ContextTooLong`, `ImageRefused`, `RateLimited`) or what went wrong reaching or
    /// reading it (`Connection`, `MalformedResponse`); any other error as it is.
    #[cfg(feature = "http-models")]
    pub(crate) fn map_quoted(self, f: impl FnOnce(String) -> String) -> Self {
        match self {
            Self::Auth {
                provider,
                status,
                message,
            } => Self::Auth {
                provider,
                status,
                message: f(message),
            },
            Self::Api {
                provider,
                status,
                message,
            } => Self::Api {
                provider,
                status,
                message: f(message),
            },
            Self::ContextTooLong {
                provider,
                status,
                message,
            } => Self::ContextTooLong {
                provider,
                status,
                message: f(message),
            },
            Self::ImageRefused {
                provider,
                status,
                message,
                image,
            } => Self::ImageRefused {
                provider,
                status,
                message: f(message),
                image,
            },
            Self::RateLimited {
                provider,
                retry_after,
                message,
            } => Self::RateLimited {
                provider,
                retry_after,
                message: f(message),
            },
            Self::Connection {
                provider,
                url,
                reason,
            } => Self::Connection {
                provider,
                url,
                reason: f(reason),
            },
            Self::MalformedResponse { provider, reason } => Self::MalformedResponse {
                provider,
                reason: f(reason),
            },
            other => other,
        }
    }

    /// Whether trying the same request again may succeed: rate limits, 408, 409, 5xx
    /// statuses (but 501), time-outs and connection failures. A spent quota (a 429 saying
    /// `insufficient_quota`) is an [`Api`](Self::Api) error, not a rate limit.
    ///
    /// The HTTP clients (`model::http`) have already retried what they could within their
    /// `max_retries`: error statuses and requests that got no answer. A time-out, which
    /// they do not retry, is for the caller to ask again if it will.
    ///
    /// For [`AllFailed`](Self::AllFailed), whether its last error is.
    pub fn is_transient(&self) -> bool {
        match self.last_error() {
            Self::RateLimited { .. }
            | Self::Timeout { .. }
            | Self::StreamDeadline { .. }
            | Self::Connection { .. } => true,
            // 501: the server does not do this at all.
            Self::Api { status, .. } => {
                matches!(status, 408 | 409) || (*status >= 500 && *status != 501)
            }
            _ => false,
        }
    }

    /// Whether another provider may well answer the request this one failed: the failure
    /// is the provider's state, not the request's. Rate limits (after the client's
    /// retries), time-outs, connection failures, and [`Api`](Self::Api) errors of a 5xx
    /// status (Anthropic's 529 `overloaded_error` included, and 501: another server may do
    /// what this one does not), 408 or 409. Not the request's own faults, which every
    /// provider would meet or which are the caller's to fix: [`Auth`](Self::Auth), another
    /// 4xx (a spent quota's 429 too), [`InvalidRequest`](Self::InvalidRequest),
    /// [`ContextTooLong`](Self::ContextTooLong), [`ImageRefused`](Self::ImageRefused),
    /// [`MalformedResponse`](Self::MalformedResponse), [`Config`](Self::Config),
    /// [`Script`](Self::Script), [`Other`](Self::Other). For
    /// [`AllFailed`](Self::AllFailed), whether its last error is.
    ///
    /// What a [`FallbackModel`](super::FallbackModel) moves on to its next model for, unless
    /// given a predicate of its own.
    ///
    /// ```
    /// use toolsmith::harness::model::ModelError;
    ///
    /// let overloaded = ModelError::Api {
    ///     provider: "anthropic".into(),
    ///     status: 529,
    ///     message: "Overloaded".into(),
    /// };
    /// assert!(overloaded.is_provider_side());
    /// let bad_request = ModelError::Api {
    ///     provider: "anthropic".into(),
    ///     status: 400,
    ///     message: "max_tokens: Field required".into(),
    /// };
    /// assert!(!bad_request.is_provider_side());
    /// ```
    pub fn is_provider_side(&self) -> bool {
        match self.last_error() {
            Self::RateLimited { .. }
            | Self::Timeout { .. }
            | Self::StreamDeadline { .. }
            | Self::Connection { .. } => true,
            Self::Api { status, .. } => matches!(status, 408 | 409 | 500..=599),
            _ => false,
        }
    }

    /// The error that ended the call: for [`AllFailed`](Self::AllFailed), its last error
    /// (and that one's last, for a fallback of fallbacks), else the error itself. What to
    /// match on to tell why a call failed.
    ///
    /// ```
    /// use toolsmith::harness::model::ModelError;
    ///
    /// let too_long = ModelError::ContextTooLong {
    ///     provider: "openai_chat".into(),
    ///     status: 400,
    ///     message: "context_length_exceeded".into(),
    /// };
    /// let all = ModelError::AllFailed {
    ///     errors: vec![
    ///         ("anthropic".into(), ModelError::Other("overloaded".into())),
    ///         ("openai_chat".into(), too_long.clone()),
    ///     ],
    /// };
    /// assert_eq!(all.last_error(), &too_long);
    /// assert_eq!(too_long.last_error(), &too_long);
    /// ```
    pub fn last_error(&self) -> &ModelError {
        let mut error = self;
        while let Self::AllFailed { errors } = error {
            match errors.last() {
                Some((_, last)) => error = last,
                None => break,
            }
        }
        error
    }
}

/// A piece of a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamDelta {
    /// More of the answer's text.
    Text(String),
    /// More of a tool call's arguments: the call's index in the answer, and its id and name
    /// once known.
    ToolCallArguments {
        /// The call's position in the answer.
        index: usize,
        /// The call's id, when this delta carries it.
        id: Option<String>,
        /// The tool's name, when this delta carries it.
        name: Option<String>,
        /// A fragment of the arguments' JSON text.
        fragment: String,
    },
}

/// A chat model: takes a provider-neutral [`ChatRequest`] and gives its answer.
///
/// Clients over HTTP live in `model::http`; [`ScriptedModel`](super::ScriptedModel)
/// replays a script for tests. A client of your own implements [`complete`](Self::complete):
///
/// ```
/// use async_trait::async_trait;
/// use toolsmith::harness::model::{ChatModel, ChatRequest, ChatResponse, ModelError};
///
/// /// Answers every request by echoing the last user message.
/// struct Echo;
///
/// #[async_trait]
/// impl ChatModel for Echo {
///     fn name(&self) -> &str { "echo" }
///
///     async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
///         let last = request.messages.iter().rev().find_map(|m| m.text()).unwrap_or("");
///         Ok(ChatResponse::text(last))
///     }
/// }
/// ```
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// The client's name, as spans and errors report it (`openai_chat`, `anthropic`, …).
    fn name(&self) -> &str;

    /// Sends one request and returns the whole answer.
    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError>;

    /// Sends one request and reports the answer as it arrives, then returns it whole (the
    /// same answer [`complete`](Self::complete) gives). The default calls `complete` and
    /// reports its text as one delta.
    async fn stream(
        &self,
        request: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let response = self.complete(request).await?;
        if let Some(text) = &response.text {
            on_delta(StreamDelta::Text(text.clone()));
        }
        Ok(response)
    }

    /// Whether every one of `tools` can be declared to this model, checked before a run
    /// rather than when a request is built: an [`AgentSession`](crate::agent::AgentSession)
    /// asks it at `build()` for every registered tool (those `shed` offers later too) and a
    /// typed answer (`send_as`) for its `final_answer` tool, and reports a refusal as a
    /// configuration error naming the tool. The default accepts everything: a client whose
    /// format has no such limits need not implement it.
    ///
    /// The HTTP clients refuse what their request rendering would (for Gemini, a recursive
    /// schema or a name its API refuses), with the same [`ModelError::InvalidRequest`] a
    /// request declaring the tool fails with; that request-time error stays, for tools
    /// registered after the session was built. Implement it for a client of your own whose
    /// format cannot hold some schemas, with the same conversion its requests use.
    ///
    /// Takes the definitions lent, not copied: a session of thousands of tools builds
    /// without cloning their schemas for a model that checks nothing.
    fn check_declarations(&self, tools: &[&Tool]) -> Result<(), ModelError> {
        let _ = tools;
        Ok(())
    }

    /// The most output tokens this client asks for with `request`: the request's own
    /// [`max_output_tokens`](crate::model::ChatOptions::max_output_tokens), else the
    /// client's default where it sends one (`None`: the API's own, unknown here). An
    /// [`AgentSession`](crate::agent::AgentSession) built
    /// [`with_context_window`](crate::agent::AgentSessionBuilder::with_context_window)
    /// reserves it in the window: a provider counts the output asked for against the
    /// context (Anthropic refuses "input length and `max_tokens` exceed context limit").
    ///
    /// The default is the request's own. The HTTP clients add theirs: the builder's
    /// `max_output_tokens`, and Anthropic's `max_tokens` it always sends
    /// (`DEFAULT_ANTHROPIC_MAX_TOKENS` when nothing else is set).
    fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        request.options.max_output_tokens
    }

    /// What images this model takes in one request: the media types, the largest side in
    /// pixels (and the smaller one when a request carries many images), the most images and
    /// the most bytes of images a request, whether an animated one is taken. An [`AgentSession`](crate::agent::AgentSession) asks it
    /// before each request and replaces the images it refuses by a note
    /// ([`AgentEvent::ImagesOverLimits`](crate::agent::AgentEvent::ImagesOverLimits)),
    /// rather than have the provider refuse the whole request.
    ///
    /// The default is [`ImageLimits::none`]. The HTTP clients give their API's documented
    /// limits ([`ImageLimits::anthropic`], [`ImageLimits::openai`],
    /// [`ImageLimits::gemini`]), which their builders' `image_limits` replaces (a server
    /// that speaks the API with limits of its own, or fewer images for fewer tokens).
    fn image_limits(&self) -> ImageLimits {
        ImageLimits::none()
    }
}

/// A model's [`name`](ChatModel::name) for `Debug` output. `name()` is the user's code: one
/// that panics shows as `<name() panicked>` rather than unwinding out of a `{:?}` (a log
/// line, a `tracing` field).
pub(crate) struct DebugName<'a>(pub(crate) &'a dyn ChatModel);

impl std::fmt::Debug for DebugName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.0.name())) {
            Ok(name) => std::fmt::Debug::fmt(name, f),
            Err(payload) => {
                // The model's value, whose `Drop` may panic too: not out of a `{:?}` either.
                drop_panic_payload(payload);
                f.write_str("<name() panicked>")
            }
        }
    }
}

/// `impl ChatModel` for the pointer `$pointer<M>` to a model: every method, those with a
/// default too, asks the model pointed to (a method left out would silently take the
/// trait's default: a boxed Gemini client would accept every tool).
macro_rules! chat_model_through_pointer {
    ($pointer:ident) => {
        #[async_trait]
        impl<M: ChatModel + ?Sized> ChatModel for $pointer<M> {
            fn name(&self) -> &str {
                (**self).name()
            }

            fn check_declarations(&self, tools: &[&Tool]) -> Result<(), ModelError> {
                (**self).check_declarations(tools)
            }

            fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
                (**self).output_limit(request)
            }

            fn image_limits(&self) -> ImageLimits {
                (**self).image_limits()
            }

            async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
                (**self).complete(request).await
            }

            async fn stream(
                &self,
                request: &ChatRequest,
                on_delta: &mut (dyn FnMut(StreamDelta) + Send),
            ) -> Result<ChatResponse, ModelError> {
                (**self).stream(request, on_delta).await
            }
        }
    };
}

chat_model_through_pointer!(Box);
chat_model_through_pointer!(Arc);

#[cfg(test)]
mod tests {
    use super::*;

    /// A model each of whose methods answers differently from the trait's defaults, so that
    /// a pointer that did not forward one would be seen.
    struct Distinct;

    #[async_trait]
    impl ChatModel for Distinct {
        fn name(&self) -> &str {
            "distinct"
        }

        fn check_declarations(&self, _: &[&Tool]) -> Result<(), ModelError> {
            Err(ModelError::InvalidRequest {
                provider: "distinct".to_owned(),
                reason: "refused".to_owned(),
            })
        }

        fn output_limit(&self, _: &ChatRequest) -> Option<u32> {
            Some(77)
        }

        fn image_limits(&self) -> ImageLimits {
            ImageLimits::none().with_max_images(3)
        }

        async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
            Ok(ChatResponse::text("whole"))
        }

        async fn stream(
            &self,
            _: &ChatRequest,
            on_delta: &mut (dyn FnMut(StreamDelta) + Send),
        ) -> Result<ChatResponse, ModelError> {
            on_delta(StreamDelta::Text("piece".to_owned()));
            Ok(ChatResponse::text("streamed"))
        }
    }

    /// What `model` answers to each method.
    fn answers(
        model: &dyn ChatModel,
    ) -> (
        String,
        bool,
        Option<u32>,
        ImageLimits,
        Option<String>,
        Option<String>,
        usize,
    ) {
        let request = ChatRequest::default();
        let mut deltas = 0;
        let whole = futures::executor::block_on(model.complete(&request)).unwrap();
        let streamed =
            futures::executor::block_on(model.stream(&request, &mut |_| deltas += 1)).unwrap();
        (
            model.name().to_owned(),
            model.check_declarations(&[]).is_err(),
            model.output_limit(&request),
            model.image_limits(),
            whole.text,
            streamed.text,
            deltas,
        )
    }

    #[test]
    fn a_boxed_or_shared_model_answers_every_method_as_the_model() {
        let direct = answers(&Distinct);
        assert_eq!(
            direct,
            (
                "distinct".to_owned(),
                true,
                Some(77),
                ImageLimits::none().with_max_images(3),
                Some("whole".to_owned()),
                Some("streamed".to_owned()),
                1
            )
        );
        assert_eq!(answers(&Box::new(Distinct)), direct, "Box<M>");
        assert_eq!(answers(&Arc::new(Distinct)), direct, "Arc<M>");
        let boxed: Box<dyn ChatModel> = Box::new(Distinct);
        assert_eq!(answers(&boxed), direct, "Box<dyn ChatModel>");
        let shared: Arc<dyn ChatModel> = Arc::new(Distinct);
        assert_eq!(answers(&shared), direct, "Arc<dyn ChatModel>");
    }
}
