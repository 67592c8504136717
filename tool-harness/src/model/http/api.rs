//! What the four clients share: the parts every client holds ([`HttpClient`]), what makes
//! one API differ from another ([`HttpApi`]), and the two ways of asking, whole
//! ([`complete`]) and streamed ([`stream`]), written once for every API.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::body;
use super::rendered_sets::RenderedSets;
use super::request_body::RequestBody;
use super::streamed::{self, Assembler, OnDelta};
use super::transport::Transport;
use crate::model::{ChatRequest, ChatResponse, ImageLimits, ModelError};

/// The parts every HTTP client holds, made by
/// [`HttpModelBuilder::client`](super::HttpModelBuilder).
#[derive(Clone)]
pub(crate) struct HttpClient {
    pub(crate) transport: Transport,
    /// The output limit of requests whose options set none.
    pub(crate) max_output_tokens: Option<u32>,
    /// The builder's limits on images, in place of the API's.
    pub(crate) image_limits: Option<ImageLimits>,
    /// Fields every request body carries, where the client writes none of its own.
    pub(crate) body_fields: Map<String, Value>,
    /// The `tools` arrays of the sets of declarations asked with lately, shared by the
    /// client's clones.
    pub(crate) rendered: Arc<RenderedSets>,
}

impl std::fmt::Debug for HttpClient {
    // The body fields' names only, as the builder shows them: a value may be a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("transport", &self.transport)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("image_limits", &self.image_limits)
            .field("body_fields", &self.body_fields.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// The output limit `request` is sent with: its own, else the client's (`None`: the
    /// API's default, where it has one).
    pub(crate) fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        request.options.max_output_tokens.or(self.max_output_tokens)
    }
}

/// One API: where a request goes, what its body holds, how its stream reads and how its
/// answer does. The requests themselves are [`complete`] and [`stream`].
pub(crate) trait HttpApi: Sync {
    /// The reader of the API's stream.
    type Assembler: Assembler + Default + Send;

    /// The client's parts.
    fn client(&self) -> &HttpClient;

    /// The request body for `request`, before the [body fields](HttpClient::body_fields)
    /// fill it in.
    fn body(&self, request: &ChatRequest) -> Result<RequestBody, ModelError>;

    /// The output limit `request` is sent with (see [`HttpClient::output_limit`]); an API
    /// that always sends one says which.
    fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        self.client().output_limit(request)
    }

    /// The API's documented limits on a request's images (each client cites its source).
    const IMAGE_LIMITS: ImageLimits;

    /// The limits the client reports: the builder's, else the API's.
    fn image_limits(&self) -> ImageLimits {
        self.client().image_limits.unwrap_or(Self::IMAGE_LIMITS)
    }

    /// Where `request` goes under the base URL, streamed or not.
    fn path(request: &ChatRequest, streamed: bool) -> Result<Cow<'static, str>, ModelError>;

    /// Asks for a streamed answer in `body` (`"stream": true` unless the API says so
    /// elsewhere).
    fn ask_to_stream(body: &mut Map<String, Value>) {
        body.insert("stream".to_owned(), Value::Bool(true));
    }

    /// The answer in a whole answer's body, with its usage.
    fn read_answer(answer: &Value) -> Result<ChatResponse, ModelError>;

    /// Which of `request`'s images (see [`ModelError::ImageRefused`]'s `image`) the API's
    /// refusal `message` names, read against the `body` it was sent; `None` for an API
    /// whose refusals do not say (the default).
    fn refused_image(_request: &ChatRequest, _body: &RequestBody, _message: &str) -> Option<usize> {
        None
    }
}

/// `request` asked of `api`, answered whole.
pub(crate) async fn complete<A: HttpApi>(
    api: &A,
    request: &ChatRequest,
) -> Result<ChatResponse, ModelError> {
    let body = filled_in(api, api.body(request)?);
    let transport = &api.client().transport;
    let answer = transport
        .post_json(&A::path(request, false)?, &body)
        .await
        .map_err(|error| locating_refused_image::<A>(error, request, &body))
        .map_err(|error| transport.hiding_key(error))?;
    A::read_answer(&answer).map_err(|error| transport.hiding_key(error))
}

/// `request` asked of `api` for a streamed answer, its pieces reported to `on_delta`; the
/// answer is the one [`complete`] would have read (see [`streamed::request_answer`]).
pub(crate) async fn stream<A: HttpApi>(
    api: &A,
    request: &ChatRequest,
    on_delta: OnDelta<'_>,
) -> Result<ChatResponse, ModelError> {
    let mut body = api.body(request)?;
    A::ask_to_stream(&mut body);
    let body = filled_in(api, body);
    let transport = &api.client().transport;
    // Each wait for more of the stream has the client's time limit; this bounds the whole,
    // which a server sending keep-alives without an end would otherwise hold for ever.
    let deadline = transport.stream_deadline();
    let path = A::path(request, true)?;
    let answer =
        streamed::request_answer::<A::Assembler>(transport, &path, &body, on_delta, A::read_answer);
    tokio::time::timeout(deadline, answer)
        .await
        .unwrap_or_else(|_| {
            Err(ModelError::StreamDeadline {
                provider: transport.provider_name(),
                model: request.model.clone(),
                after: deadline,
            })
        })
        .map_err(|error| locating_refused_image::<A>(error, request, &body))
        .map_err(|error| transport.hiding_key(error))
}

/// `error` with the refused image's index filled in, for an
/// [`ImageRefused`](ModelError::ImageRefused) whose message `A` can map back through the
/// `body` sent for `request` (where the body is known: the refusal is classified from the
/// answer alone).
fn locating_refused_image<A: HttpApi>(
    error: ModelError,
    request: &ChatRequest,
    body: &RequestBody,
) -> ModelError {
    match error {
        ModelError::ImageRefused {
            provider,
            status,
            message,
            image: None,
        } => {
            let image = A::refused_image(request, body, &message);
            ModelError::ImageRefused {
                provider,
                status,
                message,
                image,
            }
        }
        other => other,
    }
}

/// `body` with the client's body fields filled in, as the request sends it.
fn filled_in<A: HttpApi>(api: &A, mut body: RequestBody) -> RequestBody {
    body::fill_in(&mut body, &api.client().body_fields);
    body
}

/// `impl ChatModel` for an HTTP client `$client` of the provider `$provider`: `name` is the
/// provider's, `complete` and `stream` ask through [`complete`] and [`stream`]; the doc
/// lines given say what the client's stream reports.
macro_rules! chat_model_over_api {
    ($client:ty, $provider:expr, $(#[doc = $stream_doc:expr])*) => {
        #[async_trait::async_trait]
        impl $crate::model::ChatModel for $client {
            fn name(&self) -> &str {
                $provider.name()
            }

            /// Refuses the tools its requests could not declare, by the same conversion
            /// (`Provider::check_tools`), with the error such a request would fail with.
            fn check_declarations(
                &self,
                tools: &[&toolsmith_core::Tool],
            ) -> Result<(), $crate::model::ModelError> {
                $crate::model::http::body::check_declarations($provider, tools)
            }

            /// The request's own, else the builder's `max_output_tokens` (Anthropic:
            /// else the `max_tokens` it always sends).
            fn output_limit(&self, request: &$crate::model::ChatRequest) -> Option<u32> {
                $crate::model::http::api::HttpApi::output_limit(self, request)
            }

            /// The API's documented limits on images, unless the builder gave others.
            fn image_limits(&self) -> $crate::model::ImageLimits {
                $crate::model::http::api::HttpApi::image_limits(self)
            }

            async fn complete(
                &self,
                request: &$crate::model::ChatRequest,
            ) -> Result<$crate::model::ChatResponse, $crate::model::ModelError> {
                $crate::model::http::api::complete(self, request).await
            }

            $(#[doc = $stream_doc])*
            async fn stream(
                &self,
                request: &$crate::model::ChatRequest,
                on_delta: &mut (dyn FnMut($crate::model::StreamDelta) + Send),
            ) -> Result<$crate::model::ChatResponse, $crate::model::ModelError> {
                $crate::model::http::api::stream(self, request, on_delta).await
            }
        }
    };
}

pub(crate) use chat_model_over_api;
