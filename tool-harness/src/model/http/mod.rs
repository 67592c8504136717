//! Model clients over HTTP: [`OpenAiChatModel`] (OpenAI Chat Completions, and the vLLM,
//! llama.cpp and Ollama servers that speak it), [`OpenAiResponsesModel`] (OpenAI Responses),
//! [`AnthropicModel`] (Anthropic Messages) and [`GeminiModel`] (Gemini `generateContent`);
//! and an [`Embedder`](toolsmith_core::Embedder), [`OpenAiEmbedder`] (OpenAI embeddings,
//! and the local servers that speak them), for the `shed`'s search by meaning and for
//! retrieval.
//!
//! Each is made with its `builder()` ([`HttpModelBuilder`]) or `from_env()`; the chat clients
//! implement [`ChatModel`](super::ChatModel). The request bodies and the answers are rendered and
//! read by `toolsmith_core::provider` (tools, calls, results, text, stop reasons); the
//! clients add the model, the system prompt and the options, and read the usage.
//!
//! What they share (streaming and strict mode are the chat clients'):
//!
//! - **Retries.** A 429 or 5xx answer is retried up to
//!   [`max_retries`](HttpModelBuilder::max_retries) times ([`DEFAULT_MAX_RETRIES`]), after
//!   the API's `Retry-After` (in seconds) or an exponential backoff; an API that asks for a
//!   wait longer than [`max_retry_wait`](HttpModelBuilder::max_retry_wait) is not retried.
//!   A streamed answer whose API reports such an error in the stream (Anthropic's
//!   `overloaded_error` after its `200`) before any text or call was delivered is asked
//!   again the same way, within the same count; once anything was delivered, the error is
//!   returned. A request that got no answer at all (the connection refused or reset, a
//!   pooled keep-alive connection the server had closed, a stream cut off before anything
//!   of it was delivered, a whole answer's body cut off before its end) is retried too, after the backoff, within the same count, as the
//!   official OpenAI and Anthropic SDKs do; when no retry is left, its
//!   [`Connection`](super::ModelError::Connection) or
//!   [`MalformedResponse`](super::ModelError::MalformedResponse) error says how many
//!   attempts were made. A TLS failure (a certificate refused) is not retried: asking again
//!   meets the same. Time-outs are not retried here, since the server may still be working
//!   on the request (a retry would have it answer, and bill, twice) and the attempt already
//!   took the whole time limit: [`ModelError::is_transient`](super::ModelError::is_transient)
//!   tells a caller they may be.
//! - **Time limit.** Each attempt, from connecting to the last byte of the answer, has
//!   [`timeout`](HttpModelBuilder::timeout) ([`DEFAULT_TIMEOUT`]). A streamed answer
//!   ([`ChatModel::stream`](super::ChatModel::stream)) has it until its head arrives, then
//!   for each wait for more: a long answer may take longer as long as it keeps coming,
//!   up to the [`stream_deadline`](HttpModelBuilder::stream_deadline)
//!   ([`DEFAULT_STREAM_DEADLINE`]) of the whole, retries included, past which it is
//!   [`StreamDeadline`](super::ModelError::StreamDeadline).
//! - **Streaming.** `stream` reads the API's server-sent events, reports text and
//!   call-argument pieces as [`StreamDelta`](super::StreamDelta)s, and assembles the
//!   events into the answer the API would have sent whole, read as `complete` reads it:
//!   the same calls, text, usage and stop reason. An error event is the error its HTTP
//!   status would be, the status its numeric `code`, or its documented `type` or `code`,
//!   means (`overloaded_error` 529, `rate_limit_exceeded` 429, …; 200, the answer's, when
//!   it names none known), so that [`is_transient`](super::ModelError::is_transient) is
//!   right for it; a stream that ends before the answer does is
//!   [`MalformedResponse`](super::ModelError::MalformedResponse), since its last call may be
//!   cut off. A server that ignores the request for a stream and answers one JSON body
//!   gives that answer, whatever content type it labels it with.
//! - **Errors** quote the API's own message: 401 and 403 are
//!   [`ModelError::Auth`](super::ModelError::Auth), 429 after the retries
//!   [`RateLimited`](super::ModelError::RateLimited), other statuses
//!   [`Api`](super::ModelError::Api) (a 404's also names the URL asked, which is most often
//!   a base URL missing its `/v1`), except a request the API says is longer than the
//!   model's context window (in its own words, whole or in a stream; not retried):
//!   [`ContextTooLong`](super::ModelError::ContextTooLong), and one whose image the API says
//!   it cannot read or take (the same way): [`ImageRefused`](super::ModelError::ImageRefused); a body that is not the documented JSON (cut off,
//!   truncated, too deep, larger than [`MAX_RESPONSE_BYTES`], holding more than
//!   [`MAX_JSON_VALUES`] values) is
//!   [`MalformedResponse`](super::ModelError::MalformedResponse); no connection is
//!   [`Connection`](super::ModelError::Connection), no answer in time
//!   [`Timeout`](super::ModelError::Timeout).
//! - **Strict mode.** Tools are declared strict as the request's
//!   [`ChatOptions::strict`](super::ChatOptions::strict) says; one that cannot be strict is
//!   declared non-strict and logged as a `tracing` warning naming the tool, the JSON path
//!   and why: the request is sent all the same.
//! - **Declarations rendered once a set.** A client renders a request's tools into its API's
//!   `tools` array once for each `Arc<ToolDeclarations>` (and strictness) it is asked with,
//!   and reuses the array while later requests carry the same `Arc`, as an agent session's
//!   do until its registry or active set changes; a set's warnings are logged once. It keeps
//!   the last 16 sets, by the identity of their `Arc` (held as a `Weak`): an equal set in a
//!   new `Arc` is rendered again.
//! - **TLS** through rustls with the `ring` provider, verified against the system's root
//!   certificates; HTTP/1.1 only; redirects are not followed (they would carry the key).
//!
//! The clients run on Tokio (called outside a Tokio runtime, they answer
//! [`ModelError::Config`](super::ModelError::Config)). Compiled with the `http-models`
//! feature (on by default).

mod anthropic;
mod anthropic_cache;
mod anthropic_image_path;
pub(crate) mod api;
mod body;
mod builder;
mod call_ids;
mod context_overflow;
mod events;
mod gemini;
mod image_refusal;
mod openai;
mod openai_chat;
mod openai_embeddings;
mod openai_responses;
mod refusal;
mod rendered_sets;
mod request_body;
mod streamed;
mod transport;

use std::time::Duration;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicModel, DEFAULT_ANTHROPIC_MAX_TOKENS};
pub use anthropic_cache::{EXTENDED_CACHE_TTL_BETA, PromptCaching};
pub use builder::{ChatClient, HttpModelBuilder};
pub use gemini::GeminiModel;
pub use openai_chat::OpenAiChatModel;
pub use openai_embeddings::{
    DEFAULT_EMBEDDING_BATCH, DEFAULT_EMBEDDING_REQUESTS, MAX_EMBEDDING_BATCH, OpenAiEmbedder,
};
pub use openai_responses::OpenAiResponsesModel;

/// The time limit of one attempt unless the builder sets another.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The time limit of a whole streamed answer unless the builder sets another
/// ([`HttpModelBuilder::stream_deadline`]): long enough for a long answer at a slow model's
/// pace, short enough that a server which keeps a stream alive without ending it (a
/// keep-alive comment every few seconds) cannot hold a turn for ever.
pub const DEFAULT_STREAM_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// How many times a request is retried (after a 429 or 5xx answer, or no answer at all)
/// unless the builder says otherwise.
pub const DEFAULT_MAX_RETRIES: u32 = 2;

/// The largest response body a client reads (32 MiB); a larger one is a
/// [`MalformedResponse`](super::ModelError::MalformedResponse).
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// The most JSON values a client reads in one body or one streamed event (and a model's
/// tool-call arguments may hold): more is a
/// [`MalformedResponse`](super::ModelError::MalformedResponse).
pub use toolsmith_core::MAX_JSON_VALUES;
