//! What the four HTTP clients share: one `reqwest` client (rustls over `ring`), a POST of a
//! JSON body with retries of 429 and 5xx answers and of requests that got no answer (the
//! connection refused, reset or closed first), a time limit per attempt, a bounded body
//! read with bounded-depth JSON parsing (or, streamed, the answer's events: `events.rs`),
//! and errors that quote the API.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION, RETRY_AFTER, USER_AGENT,
};
use serde::Serialize;
use serde_json::Value;
use toolsmith_core::value_from_slice;

use super::MAX_RESPONSE_BYTES;
use super::context_overflow::{ErrorSigns, OverflowShape, error_object};
use super::events::EventStream;
use super::refusal::Refusal;
use crate::error_causes::with_causes;
use crate::model::ModelError;
use crate::readable_duration::ReadableDuration;
use crate::redacted_url::{redacted_url, with_url_redacted};

/// The most of an API's error message (or of an unreadable body) an error quotes.
pub(super) const MAX_QUOTED_CHARS: usize = 2_000;

/// How a client reaches its API: where, with which headers, how patiently.
#[derive(Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    /// What errors call the API (`openai_chat`, `openai_embeddings`, …).
    name: &'static str,
    /// How the API's errors say that a request is longer than the model's context.
    overflow: OverflowShape,
    base_url: String,
    timeout: Duration,
    /// The time limit of a whole streamed answer, retries included.
    stream_deadline: Duration,
    max_retries: u32,
    retry_delay: Duration,
    max_retry_wait: Duration,
    /// The API key, hidden wherever an error quotes the server (see
    /// [`hiding_key`](Self::hiding_key)).
    hidden_key: Option<String>,
}

/// What an error shows in place of the API key.
const HIDDEN_KEY: &str = "<API key>";

/// The fewest characters a key must have to be hidden: a shorter one is a placeholder
/// (a local server takes any key), and hiding it would garble the server's messages.
const MIN_HIDDEN_KEY_CHARS: usize = 8;

impl fmt::Debug for Transport {
    // No headers: they hold the key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("api", &self.name)
            .field("base_url", &redacted_url(&self.base_url))
            .field("timeout", &self.timeout)
            .field("stream_deadline", &self.stream_deadline)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

/// What a transport is made from (the builder's settings, resolved).
pub(crate) struct TransportConfig {
    /// What errors call the API.
    pub(crate) name: &'static str,
    /// How the API's errors say that a request is longer than the model's context.
    pub(crate) overflow: OverflowShape,
    pub(crate) base_url: String,
    /// Headers sent with every request; `(name, value, sensitive)`.
    pub(crate) headers: Vec<(String, String, bool)>,
    pub(crate) timeout: Duration,
    /// The time limit of a whole streamed answer, retries included.
    pub(crate) stream_deadline: Duration,
    pub(crate) max_retries: u32,
    pub(crate) retry_delay: Duration,
    pub(crate) max_retry_wait: Duration,
    /// The API key, if any, to hide in errors.
    pub(crate) api_key: Option<String>,
}

/// One attempt's failure, before the retry policy decides what it becomes.
enum Failure {
    /// The API answered with an error status.
    Status {
        status: StatusCode,
        retry_after: Option<Duration>,
        body: ErrorBody,
    },
    /// No whole answer came: the connection was refused, reset, or closed before the
    /// answer's head (a pooled keep-alive connection the server had already closed), or a
    /// whole answer's body was cut off before its end. Retried as a 5xx is: the request may
    /// not even have reached the API, and a cut answer is none.
    Unanswered(ModelError),
    /// Anything else: final.
    Final(ModelError),
}

/// Why a body was not read whole.
enum UnreadBody {
    /// The connection ended before the body did: asked again, as a request that got no
    /// answer is.
    CutOff(ModelError),
    /// It is longer than [`MAX_RESPONSE_BYTES`]: final.
    TooLarge(ModelError),
}

impl UnreadBody {
    fn into_error(self) -> ModelError {
        match self {
            Self::CutOff(error) | Self::TooLarge(error) => error,
        }
    }
}

impl From<UnreadBody> for Failure {
    fn from(unread: UnreadBody) -> Self {
        match unread {
            UnreadBody::CutOff(error) => Self::Unanswered(error),
            UnreadBody::TooLarge(error) => Self::Final(error),
        }
    }
}

impl Transport {
    /// A transport for `config`; a bad base URL, header or TLS setup is a
    /// [`ModelError::Config`].
    pub(crate) fn new(config: TransportConfig) -> Result<Self, ModelError> {
        let name = config.name;
        let bad = |reason: String| ModelError::Config {
            provider: name.to_owned(),
            reason,
        };
        let base_url = config.base_url.trim().trim_end_matches('/').to_owned();
        let https = base_url.starts_with("https://");
        // Quoted without the user and key it may carry: the error is printed and logged.
        if !https && !base_url.starts_with("http://") {
            return Err(bad(format!(
                "the base URL {:?} does not start with http:// or https://",
                redacted_url(&base_url)
            )));
        }
        if reqwest::Url::parse(&base_url).is_err() {
            return Err(bad(format!(
                "the base URL {:?} is not a valid URL",
                redacted_url(&base_url)
            )));
        }
        let mut headers = HeaderMap::new();
        for (name, value, sensitive) in &config.headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| bad(format!("{name:?} is not a valid HTTP header name")))?;
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                // Never quote the value: it may be the key.
                bad(format!(
                    "the value of header {name:?} is not a valid HTTP header value (it holds a control character or non-ASCII text)"
                ))
            })?;
            value.set_sensitive(*sensitive);
            headers.insert(header, value);
        }
        let tls = crate::tls::client_config(https).map_err(bad)?;
        // The client's own user agent unless a header of the builder's replaces it
        // (`user_agent` set after `default_headers` would replace theirs).
        if !headers.contains_key(USER_AGENT) {
            headers.insert(
                USER_AGENT,
                HeaderValue::from_static(concat!("toolsmith/", env!("CARGO_PKG_VERSION"))),
            );
        }
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .default_headers(headers)
            // A redirect would carry the key elsewhere: an API never needs one.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| {
                bad(format!(
                    "cannot build the HTTP client: {}",
                    with_causes(&err)
                ))
            })?;
        Ok(Self {
            client,
            name,
            overflow: config.overflow,
            base_url,
            timeout: config.timeout,
            stream_deadline: config.stream_deadline,
            max_retries: config.max_retries,
            retry_delay: config.retry_delay,
            max_retry_wait: config.max_retry_wait,
            hidden_key: config
                .api_key
                .filter(|key| key.chars().count() >= MIN_HIDDEN_KEY_CHARS),
        })
    }

    /// `error` with the API key, wherever its message quotes it, shown as `<API key>`. A
    /// server's words are quoted as they are, and a server (or a proxy before it) may echo
    /// the header it refused: the error is printed and logged, which the key must not be.
    pub(crate) fn hiding_key(&self, error: ModelError) -> ModelError {
        let Some(key) = self.hidden_key.as_deref() else {
            return error;
        };
        error.map_quoted(|text| {
            if text.contains(key) {
                text.replace(key, HIDDEN_KEY)
            } else {
                text
            }
        })
    }

    /// The API's name, as errors give it.
    pub(crate) fn provider_name(&self) -> String {
        self.name.to_owned()
    }

    /// The time limit of a whole streamed answer, retries included.
    pub(crate) fn stream_deadline(&self) -> Duration {
        self.stream_deadline
    }

    /// How the API's errors say that a request is longer than the model's context.
    pub(crate) fn overflow(&self) -> OverflowShape {
        self.overflow
    }

    /// POSTs `body` as JSON to `{base_url}{path}` and returns the answer's JSON, retrying
    /// 429 and 5xx answers, and requests that got no whole answer (see `no_answer`; a body
    /// cut off before its end), up to `max_retries` times in all. Each wait is the API's
    /// `Retry-After` (or `retry-after-ms`) when it gave one, else an exponential backoff
    /// from `retry_delay`; an API that asks for more than `max_retry_wait` is not retried.
    ///
    /// A time-out is not retried: the server may still be working on the request (a
    /// retry would have it generate, and bill, the answer twice), and the attempt already
    /// took the whole time limit the caller set, which retries would multiply.
    /// [`ModelError::is_transient`] tells a caller that it may ask again.
    pub(crate) async fn post_json(
        &self,
        path: &str,
        body: &(impl Serialize + Sync),
    ) -> Result<Value, ModelError> {
        self.check_runtime()?;
        let url = format!("{}{}", self.base_url, path);
        self.with_retries(&url, &mut 0, || self.attempt(&url, body))
            .await
    }

    /// POSTs `body` as [`post_json`](Self::post_json) does (with its retries of error
    /// statuses, counted in `retries` with those made before) and gives the answer's
    /// server-sent events as they arrive. The time limit covers the answer's head; then it
    /// bounds each wait for more of the stream, so that a long answer may take longer than
    /// it as long as it keeps coming. A server that does not stream (a success labelled
    /// JSON) gives its whole answer, read as [`post_json`](Self::post_json) reads one.
    pub(crate) async fn post_for_events(
        &self,
        path: &str,
        body: &(impl Serialize + Sync),
        retries: &mut u32,
    ) -> Result<AnswerBody, ModelError> {
        self.check_runtime()?;
        let url = format!("{}{}", self.base_url, path);
        match self
            .with_retries(&url, retries, || self.attempt_head(&url, body))
            .await?
        {
            Head::Streaming(response) => Ok(AnswerBody::Events(Box::new(EventStream::new(
                response,
                self.name,
                self.timeout,
            )))),
            Head::Whole(bytes) => self.parse_json(&bytes).map(AnswerBody::Whole),
        }
    }

    /// reqwest and the time limit need Tokio's I/O and time drivers; outside a runtime they
    /// would panic.
    fn check_runtime(&self) -> Result<(), ModelError> {
        match tokio::runtime::Handle::try_current() {
            Ok(_) => Ok(()),
            Err(_) => Err(ModelError::Config {
                provider: self.provider_name(),
                reason: "an HTTP model must be called inside a Tokio runtime (with I/O and time enabled)"
                    .to_owned(),
            }),
        }
    }

    /// Runs `attempt` until it succeeds, fails for good, or its error status is not (or no
    /// longer) retried. `retries` counts the retries made for the request so far, these
    /// and any before (a stream that failed before it delivered anything is asked again
    /// within the same count).
    async fn with_retries<T, F, Attempt>(
        &self,
        url: &str,
        retries: &mut u32,
        mut attempt: F,
    ) -> Result<T, ModelError>
    where
        F: FnMut() -> Attempt,
        Attempt: Future<Output = Result<T, Failure>>,
    {
        loop {
            let failure = match attempt().await {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            let (status, retry_after, body) = match failure {
                Failure::Final(error) => return Err(error),
                Failure::Unanswered(error) => {
                    let Some(wait) = self.retry_wait_unanswered(*retries) else {
                        return Err(with_attempts(error, *retries + 1));
                    };
                    let wait = self.next_retry(
                        wait,
                        retries,
                        format_args!("no answer from {} ({error})", redacted_url(url)),
                    );
                    wait.await;
                    continue;
                }
                Failure::Status {
                    status,
                    retry_after,
                    body,
                } => (status, retry_after, body),
            };
            // Asked again, a request too long for the model, or with an image it cannot
            // read, fails the same way.
            if let Some(refused) = body.refusal(self, status) {
                return Err(refused);
            }
            let quota_spent = status == StatusCode::TOO_MANY_REQUESTS && body.says_quota_spent();
            let Some(wait) = self.retry_wait(status, retry_after, quota_spent, *retries) else {
                let message = body.text();
                return Err(self.status_error(url, status, retry_after, message, quota_spent));
            };
            let wait = self.next_retry(
                wait,
                retries,
                format_args!("HTTP {} from {}", status.as_u16(), redacted_url(url)),
            );
            wait.await;
        }
    }

    /// The next retry of a request that failed (`why`): logged, counted in `retries`, and
    /// the `wait` before it, to await (apart: `why` is not `Send`).
    pub(crate) fn next_retry(
        &self,
        wait: Duration,
        retries: &mut u32,
        why: std::fmt::Arguments<'_>,
    ) -> tokio::time::Sleep {
        *retries += 1;
        tracing::debug!(
            "{}: {why}; retry {} of {} in {wait:?}",
            self.name,
            *retries,
            self.max_retries
        );
        tokio::time::sleep(wait)
    }

    /// How long to wait before asking again after a failure with `status`, when the
    /// request is asked again: the status is retried, fewer than `max_retries` retries were
    /// made, and the wait (the API's `retry_after`, else the backoff) is within
    /// `max_retry_wait`. `None` when it is not.
    pub(crate) fn retry_wait(
        &self,
        status: StatusCode,
        retry_after: Option<Duration>,
        quota_spent: bool,
        retries: u32,
    ) -> Option<Duration> {
        let wait = retry_after.unwrap_or_else(|| self.backoff(retries));
        (is_retried(status, quota_spent)
            && retries < self.max_retries
            && wait <= self.max_retry_wait)
            .then_some(wait)
    }

    /// How long to wait before asking again after an attempt that got no answer (a
    /// connection refused, reset or closed, a stream cut off before anything of it was
    /// delivered), when fewer than `max_retries` retries were made: the backoff, which is
    /// within `max_retry_wait`. `None` when no retry is left.
    pub(crate) fn retry_wait_unanswered(&self, retries: u32) -> Option<Duration> {
        (retries < self.max_retries).then(|| self.backoff(retries))
    }

    /// `retry_delay` doubled per retry already made, with up to a quarter more at random
    /// (so that clients refused together do not retry together), capped at
    /// `max_retry_wait`.
    fn backoff(&self, retries: u32) -> Duration {
        let base = self
            .retry_delay
            .saturating_mul(1u32.checked_shl(retries.min(16)).unwrap_or(u32::MAX));
        let jitter_ms = u64::try_from(base.as_millis() / 4).unwrap_or(u64::MAX);
        let jitter = Duration::from_millis(fastrand::u64(0..=jitter_ms));
        base.saturating_add(jitter).min(self.max_retry_wait)
    }

    /// One request, its time limit covering the connection, the answer and its whole body.
    async fn attempt(&self, url: &str, body: &(impl Serialize + Sync)) -> Result<Value, Failure> {
        let bytes = self
            .within_limit(async {
                let response = self.successful(self.send(url, body, false).await?).await?;
                Ok(self.read_body(response).await?)
            })
            .await?;
        self.parse_json(&bytes).map_err(Failure::Final)
    }

    /// One request whose answer is read later: its time limit covers the connection and
    /// the answer's head, and the body of an error status or of a whole answer.
    async fn attempt_head(
        &self,
        url: &str,
        body: &(impl Serialize + Sync),
    ) -> Result<Head, Failure> {
        self.within_limit(async {
            let response = self.successful(self.send(url, body, true).await?).await?;
            if !is_json(response.headers()) {
                return Ok(Head::Streaming(response));
            }
            // A server that does not stream answers whole, whatever the request asked.
            let bytes = self.read_body(response).await?;
            Ok(Head::Whole(bytes))
        })
        .await
    }

    /// POSTs `body` to `url`, asking for an event stream when `events`.
    async fn send(
        &self,
        url: &str,
        body: &(impl Serialize + Sync),
        events: bool,
    ) -> Result<reqwest::Response, Failure> {
        let mut request = self.client.post(url);
        if events {
            request = request.header(ACCEPT, "text/event-stream");
        }
        request.json(body).send().await.map_err(|err| {
            let error = self.send_error(url, &err);
            if no_answer(&err) {
                Failure::Unanswered(error)
            } else {
                Failure::Final(error)
            }
        })
    }

    /// `response` when its status is a success; an error status is a [`Failure::Status`]
    /// with its body, acted on (retried) whatever became of that body.
    async fn successful(&self, response: reqwest::Response) -> Result<reqwest::Response, Failure> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status.is_redirection() {
            return Err(Failure::Final(
                self.redirect_error(status, response.headers()),
            ));
        }
        let retry_after = retry_after(response.headers());
        let body = match self.read_body(response).await {
            Ok(bytes) => ErrorBody::Read(bytes),
            Err(unread) => ErrorBody::Unread(unread.into_error().to_string()),
        };
        Err(Failure::Status {
            status,
            retry_after,
            body,
        })
    }

    /// `exchange` within the time limit of one attempt.
    async fn within_limit<T>(
        &self,
        exchange: impl Future<Output = Result<T, Failure>>,
    ) -> Result<T, Failure> {
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| {
                Failure::Final(ModelError::Timeout {
                    provider: self.provider_name(),
                    after: self.timeout,
                })
            })?
    }

    /// The body, read to its end unless it passes [`MAX_RESPONSE_BYTES`] or is cut off.
    async fn read_body(&self, mut response: reqwest::Response) -> Result<Vec<u8>, UnreadBody> {
        let too_large = |size: String| ModelError::MalformedResponse {
            provider: self.provider_name(),
            reason: format!(
                "the response body is {size}, more than the {} MiB a client reads",
                MAX_RESPONSE_BYTES / (1024 * 1024)
            ),
        };
        if let Some(length) = response.content_length()
            && length > MAX_RESPONSE_BYTES as u64
        {
            return Err(UnreadBody::TooLarge(too_large(format!("{length} bytes"))));
        }
        let mut body = Vec::new();
        loop {
            let chunk = response.chunk().await.map_err(|err| {
                UnreadBody::CutOff(ModelError::MalformedResponse {
                    provider: self.provider_name(),
                    reason: format!(
                        "the response body was cut off after {} bytes: {}",
                        body.len(),
                        with_causes(&err)
                    ),
                })
            })?;
            let Some(chunk) = chunk else {
                return Ok(body);
            };
            if body.len().saturating_add(chunk.len()) > MAX_RESPONSE_BYTES {
                return Err(UnreadBody::TooLarge(too_large("larger".to_owned())));
            }
            body.extend_from_slice(&chunk);
        }
    }

    /// The body as a JSON object, as every API answers (serde_json's recursion limit bounds
    /// its depth, [`value_from_slice`] how many values it holds). An array or a scalar is no answer: the formats' parsers also take the
    /// part of an answer that holds the calls, and would read `[]` as an empty one.
    pub(crate) fn parse_json(&self, bytes: &[u8]) -> Result<Value, ModelError> {
        let begins = || quote(&String::from_utf8_lossy(bytes), 200);
        let reason = match value_from_slice(bytes) {
            Ok(value) if value.is_object() => return Ok(value),
            Ok(_) => format!(
                "the response body is not a JSON object; it begins: {}",
                begins()
            ),
            Err(_) if bytes.is_empty() => "the response body is empty, not JSON".to_owned(),
            Err(err) => format!(
                "the response body is not valid JSON ({err}); it begins: {}",
                begins()
            ),
        };
        Err(ModelError::MalformedResponse {
            provider: self.provider_name(),
            reason,
        })
    }

    /// A request that got no answer.
    fn send_error(&self, url: &str, err: &reqwest::Error) -> ModelError {
        if err.is_timeout() {
            return ModelError::Timeout {
                provider: self.provider_name(),
                after: self.timeout,
            };
        }
        // reqwest's message quotes the URL it was asked: its query's values hidden.
        let causes = with_url_redacted(with_causes(err), err.url().map(reqwest::Url::as_str));
        if err.is_body() || err.is_decode() {
            return ModelError::MalformedResponse {
                provider: self.provider_name(),
                reason: format!("the response could not be read: {causes}"),
            };
        }
        ModelError::Connection {
            provider: self.provider_name(),
            url: redacted_url(url).into_owned(),
            reason: causes,
        }
    }

    /// The error for a redirect, which is not followed (it would carry the key elsewhere):
    /// where it pointed, so that the base URL can be set there. Its body (often empty, or a
    /// page for a browser) says nothing more.
    fn redirect_error(&self, status: StatusCode, headers: &HeaderMap) -> ModelError {
        let message = match headers.get(LOCATION).map(|to| to.to_str()) {
            Some(Ok(to)) => format!(
                "the server redirected the request to {} (redirects are not followed: they would carry the key elsewhere); set the base URL to where the API is",
                quote(&redacted_url(to.trim()), 200)
            ),
            _ => "the server answered with a redirect (not followed: it would carry the key elsewhere) that names no readable `Location`; check the base URL".to_owned(),
        };
        ModelError::Api {
            provider: self.provider_name(),
            status: status.as_u16(),
            message,
        }
    }

    /// The error for an error status that is not (or no longer) retried (see
    /// [`error_for_status`]); a retried status the API asked to wait too long for says so
    /// in its message.
    fn status_error(
        &self,
        url: &str,
        status: StatusCode,
        retry_after: Option<Duration>,
        mut message: String,
        quota_spent: bool,
    ) -> ModelError {
        // Without this a rate limit refused at once reads like one that ran out of retries;
        // a rate limit also keeps the wait in its `retry_after`, for code to read.
        if let Some(asked) = retry_after.filter(|asked| *asked > self.max_retry_wait)
            && is_retried(status, quota_spent)
        {
            message.push_str(&format!(
                " (the server asked to wait {} before a retry, more than the client's max_retry_wait ({}), so it was not retried)",
                ReadableDuration(asked),
                ReadableDuration(self.max_retry_wait)
            ));
        }
        // A base URL that misses a segment (`/v1`) answers 404, often with no body: the
        // message then has to say where the request went.
        if status == StatusCode::NOT_FOUND {
            message.push_str(&format!(
                " (POST {}: check the base URL and the model name)",
                redacted_url(url)
            ));
        }
        error_for_status(
            self.provider_name(),
            status,
            retry_after,
            message,
            quota_spent,
        )
    }
}

/// The error for an error status from `provider`: 401 and 403 are
/// [`ModelError::Auth`], a 429 is [`ModelError::RateLimited`] unless its quota is spent
/// (no wait ends that: an API error), any other status is [`ModelError::Api`].
pub(super) fn error_for_status(
    provider: String,
    status: StatusCode,
    retry_after: Option<Duration>,
    message: String,
    quota_spent: bool,
) -> ModelError {
    let code = status.as_u16();
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ModelError::Auth {
            provider,
            status: code,
            message,
        },
        StatusCode::TOO_MANY_REQUESTS if !quota_spent => ModelError::RateLimited {
            provider,
            retry_after,
            message,
        },
        _ => ModelError::Api {
            provider,
            status: code,
            message,
        },
    }
}

/// How long the API asked to wait: `retry-after-ms` (OpenAI), else `Retry-After` in seconds
/// or as an HTTP date. A wait too long to hold in a `Duration` is `Duration::MAX` (longer
/// than any retry waits, so not retried); a negative or unreadable one is no wait asked (a
/// `retry-after-ms` so leaves the word to `Retry-After`).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    let seconds = |seconds: f64| match Duration::try_from_secs_f64(seconds) {
        Ok(wait) => Some(wait),
        Err(_) if seconds > 0.0 => Some(Duration::MAX),
        Err(_) => None,
    };
    if let Some(wait) = text("retry-after-ms")
        .and_then(|t| t.parse::<f64>().ok())
        .and_then(|ms| seconds(ms / 1000.0))
    {
        return Some(wait);
    }
    let value = text(RETRY_AFTER.as_str())?;
    if let Ok(number) = value.parse::<f64>() {
        return seconds(number);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    // A date already past asks for no wait.
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Whether `err`, from sending a request, means the request got no answer and may be sent
/// again: the connection failed (refused, reset, no address for the host) or closed before
/// the answer's head (hyper's "connection closed before message completed", which a pooled
/// keep-alive connection the server had closed gives). Not a time-out (see
/// [`Transport::post_json`]), not a request that could not be built, and not a TLS failure
/// (a certificate refused, a server that does not speak TLS): asking again meets the same.
fn no_answer(err: &reqwest::Error) -> bool {
    (err.is_connect() || err.is_request()) && !err.is_timeout() && !is_tls_failure(err)
}

/// Whether a cause of `err` is rustls's: the TLS handshake failed. rustls's error reaches
/// reqwest inside an [`std::io::Error`], whose `source` skips it: it is read with `get_ref`.
fn is_tls_failure(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(err);
    while let Some(error) = cause {
        let inner = error
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        if error.is::<rustls::Error>() || inner.is_some_and(is_tls_failure) {
            return true;
        }
        cause = error.source();
    }
    false
}

/// `error`, its reason saying how many attempts were made when there were more than one:
/// a request that got no answer after its retries.
pub(crate) fn with_attempts(error: ModelError, attempts: u32) -> ModelError {
    if attempts < 2 {
        return error;
    }
    match error {
        error @ (ModelError::Connection { .. } | ModelError::MalformedResponse { .. }) => {
            error.map_quoted(|reason| format!("{reason} (after {attempts} attempts)"))
        }
        other => other,
    }
}

/// Whether the response's content type is JSON (`application/json`, or a `+json` type).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(kind) = headers
        .get(CONTENT_TYPE)
        .and_then(|kind| kind.to_str().ok())
    else {
        return false;
    };
    let media = kind.split(';').next().unwrap_or_default().trim();
    media.eq_ignore_ascii_case("application/json") || media.to_ascii_lowercase().ends_with("+json")
}

/// What a request for a streamed answer got back.
enum Head {
    /// The answer's head; its events are still to be read.
    Streaming(reqwest::Response),
    /// A whole answer: a server that does not stream.
    Whole(Vec<u8>),
}

/// A streamed answer's body: its events, or the whole answer of a server that does not
/// stream.
pub(crate) enum AnswerBody {
    /// The events, to be read (boxed: the stream is large beside a whole answer).
    Events(Box<EventStream>),
    /// The answer, whole.
    Whole(Value),
}

/// Whether an error status is worth the same request again: rate limits, 408, 409 and server
/// errors, except a 429 that says the account's quota is spent (OpenAI's `insufficient_quota`: no
/// wait ends it) and 501 (the server does not do this at all).
fn is_retried(status: StatusCode, quota_spent: bool) -> bool {
    match status {
        StatusCode::TOO_MANY_REQUESTS => !quota_spent,
        // A request that timed out on the server's side, or met a conflicting one: the
        // official OpenAI and Anthropic clients retry both.
        StatusCode::REQUEST_TIMEOUT | StatusCode::CONFLICT => true,
        StatusCode::NOT_IMPLEMENTED => false,
        status => status.is_server_error(),
    }
}

/// The body of an error answer.
enum ErrorBody {
    /// Read whole.
    Read(Vec<u8>),
    /// It could not be read (cut off, too large): why.
    Unread(String),
}

impl ErrorBody {
    /// Whether it is OpenAI's "you exceeded your current quota" (`code` or `type`
    /// `insufficient_quota`), which a 429 also carries.
    fn says_quota_spent(&self) -> bool {
        let ErrorBody::Read(bytes) = self else {
            return false;
        };
        let Ok(body) = value_from_slice(bytes) else {
            return false;
        };
        ["code", "type"]
            .iter()
            .any(|key| body["error"][key] == "insufficient_quota")
    }

    /// [`ModelError::ContextTooLong`] when the body (or, unread, the status alone) says in
    /// the API's words (`transport`'s [`OverflowShape`]) that the request was longer than
    /// the model's context window; [`ModelError::ImageRefused`] when it says that an image
    /// of the request could not be read or is not taken. Either way, asking again is no use.
    fn refusal(&self, transport: &Transport, status: StatusCode) -> Option<ModelError> {
        let parsed = match self {
            ErrorBody::Read(bytes) => value_from_slice(bytes).ok(),
            ErrorBody::Unread(_) => None,
        };
        let signs = match &parsed {
            Some(body) => ErrorSigns::of(status, error_object(body)),
            None => ErrorSigns {
                status,
                code: None,
                kind: None,
                message: "",
            },
        };
        Refusal::of(transport.overflow, &signs).map(|refusal| {
            refusal.into_error(transport.provider_name(), status.as_u16(), self.text())
        })
    }

    /// The API's own words.
    fn text(&self) -> String {
        match self {
            ErrorBody::Read(bytes) => api_message(bytes),
            ErrorBody::Unread(reason) => format!("(the error body could not be read: {reason})"),
        }
    }
}

/// The API's own words in an error body: `error.message` (OpenAI, Anthropic, Gemini; Gemini
/// sometimes wraps it in an array), a bare `error` string (Ollama, llama.cpp), `message` or
/// `detail`; else the body itself, shortened.
pub(crate) fn api_message(body: &[u8]) -> String {
    let Ok(value) = value_from_slice(body) else {
        let text = String::from_utf8_lossy(body);
        return if text.trim().is_empty() {
            "(empty body)".to_owned()
        } else {
            quote(text.trim(), MAX_QUOTED_CHARS)
        };
    };
    let value = match &value {
        Value::Array(items) => items.first().unwrap_or(&value),
        _ => &value,
    };
    let found = value
        .pointer("/error/message")
        .or_else(|| value.get("error").filter(|e| e.is_string()))
        .or_else(|| value.get("message"))
        .or_else(|| value.get("detail"))
        .and_then(Value::as_str);
    match found {
        Some(message) => quote(message, MAX_QUOTED_CHARS),
        None => quote(&value.to_string(), MAX_QUOTED_CHARS),
    }
}

/// `text`, cut to `max` characters (marked when cut).
pub(super) fn quote(text: &str, max: usize) -> String {
    toolsmith_core::provider::cut_to(text, max).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_each_api_s_error_message() {
        let openai =
            br#"{"error": {"message": "Invalid 'messages[1]'", "type": "invalid_request_error"}}"#;
        assert_eq!(api_message(openai), "Invalid 'messages[1]'");
        let anthropic = br#"{"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: required"}}"#;
        assert_eq!(api_message(anthropic), "max_tokens: required");
        let gemini = br#"[{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}]"#;
        assert_eq!(api_message(gemini), "API key not valid.");
        assert_eq!(
            api_message(br#"{"error": "model not found"}"#),
            "model not found"
        );
        assert_eq!(api_message(br#"{"detail": "Not Found"}"#), "Not Found");
        assert_eq!(api_message(br#"{"code": 7}"#), r#"{"code":7}"#);
        assert_eq!(api_message(b"Bad Gateway\n"), "Bad Gateway");
        assert_eq!(api_message(b""), "(empty body)");
        let long = "x".repeat(3 * MAX_QUOTED_CHARS);
        assert_eq!(
            api_message(long.as_bytes()).chars().count(),
            MAX_QUOTED_CHARS + 1
        );
    }

    #[test]
    fn reads_retry_after() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        // A `retry-after-ms` that asks for no wait it can say leaves it to `Retry-After`.
        for unusable in ["-5", "NaN", "soon"] {
            headers.insert("retry-after-ms", HeaderValue::from_static(unusable));
            assert_eq!(
                retry_after(&headers),
                Some(Duration::from_secs(2)),
                "{unusable}"
            );
        }
        headers.remove("retry-after-ms");
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        // A date already past asks for no wait.
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("-1"));
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
        // Longer than a `Duration` holds: longer than any wait, not none.
        headers.insert(RETRY_AFTER, HeaderValue::from_static("1e300"));
        assert_eq!(retry_after(&headers), Some(Duration::MAX));
    }

    fn config() -> TransportConfig {
        TransportConfig {
            name: "openai_chat",
            overflow: OverflowShape::OpenAi,
            base_url: "http://127.0.0.1:9".to_owned(),
            headers: Vec::new(),
            timeout: Duration::from_secs(1),
            stream_deadline: Duration::from_secs(1),
            max_retries: 2,
            retry_delay: Duration::from_millis(100),
            max_retry_wait: Duration::from_secs(1),
            api_key: None,
        }
    }

    fn transport() -> Transport {
        Transport::new(config()).unwrap()
    }

    #[test]
    fn outside_tokio_is_an_error_not_a_panic() {
        let error = futures::executor::block_on(transport().post_json("/x", &Value::Null));
        assert!(
            matches!(&error, Err(ModelError::Config { reason, .. }) if reason.contains("Tokio runtime")),
            "{error:?}"
        );
    }

    #[test]
    fn a_key_is_hidden_unless_it_is_a_placeholder() {
        let with_key = |key: &str| {
            Transport::new(TransportConfig {
                api_key: Some(key.to_owned()),
                ..config()
            })
            .unwrap()
        };
        let refused = |key: &str| ModelError::Api {
            provider: "openai_chat".to_owned(),
            status: 400,
            message: format!("key {key} refused; key {key}"),
        };
        let hidden = with_key("sk-1234567").hiding_key(refused("sk-1234567"));
        assert_eq!(
            hidden.to_string(),
            "openai_chat: API error (HTTP 400): key <API key> refused; key <API key>"
        );
        // A local server's placeholder hides nothing: every `x` of the message would go.
        let placeholder = with_key("x").hiding_key(refused("x"));
        assert_eq!(placeholder, refused("x"));
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let transport = transport();
        let first = transport.backoff(0);
        assert!(first >= Duration::from_millis(100) && first <= Duration::from_millis(125));
        let third = transport.backoff(2);
        assert!(third >= Duration::from_millis(400) && third <= Duration::from_millis(500));
        assert_eq!(transport.backoff(30), Duration::from_secs(1));
    }
}
