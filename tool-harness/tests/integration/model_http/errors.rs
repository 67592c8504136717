//! Failures, for every client: error statuses quoting the API's message, retries of 429 and
//! 5xx, time limits, bodies cut short or too large, no server at all; and the builder's
//! refusals.

use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_harness::model::http::{
    AnthropicModel, GeminiModel, HttpModelBuilder, OpenAiChatModel, OpenAiResponsesModel,
};
use toolsmith_harness::model::{ChatModel, ChatRequest, Message, ModelError};

use super::server::{MockServer, Recorded, Reply, raw_server, refused_base};
use super::{Api, Client, KEY};

fn request(api: Api) -> ChatRequest {
    ChatRequest {
        model: api.model_name().to_owned(),
        messages: vec![Message::user("Hi")],
        ..ChatRequest::default()
    }
}

/// The error of one request to a server answering `replies`, and how many requests it saw.
async fn fail(api: Api, client: &Client, replies: Vec<Reply>) -> (ModelError, usize) {
    let server = MockServer::start(replies).await;
    let model = api.model(&server.base, client);
    let error = match model.complete(&request(api)).await {
        Ok(answer) => panic!("{api:?}: expected an error, got {answer:?}"),
        Err(error) => error,
    };
    (error, server.requests().len())
}

#[tokio::test]
async fn a_bad_request_quotes_the_api_s_message() {
    for api in Api::ALL {
        let message = format!("{} says: messages[0].content is invalid", api.name());
        let reply = Reply::json(400, &api.error_body(400, &message));
        let (error, requests) = fail(api, &Client::default(), vec![reply]).await;
        match &error {
            ModelError::Api {
                provider,
                status: 400,
                message: quoted,
            } => {
                assert_eq!(provider, api.name());
                assert_eq!(quoted, &message);
            }
            other => panic!("{api:?}: {other:?}"),
        }
        assert!(error.to_string().contains(&message), "{error}");
        assert_eq!(requests, 1, "{api:?}: a 400 is not retried");
    }
}

#[tokio::test]
async fn a_redirect_says_where_it_pointed() {
    for api in Api::ALL {
        let to = "https://api.example.com/v1/chat/completions";
        let reply = Reply::raw(308, "").header("location", to);
        let (error, requests) = fail(api, &Client::default(), vec![reply]).await;
        match &error {
            ModelError::Api {
                status: 308,
                message,
                ..
            } => {
                assert!(message.contains(to), "{api:?}: {message}");
                assert!(message.contains("not followed"), "{api:?}: {message}");
            }
            other => panic!("{api:?}: {other:?}"),
        }
        assert_eq!(requests, 1, "{api:?}");
    }
    let reply = Reply::raw(301, "<html>Moved</html>");
    let (error, _) = fail(Api::Chat, &Client::default(), vec![reply]).await;
    assert!(
        matches!(&error, ModelError::Api { status: 301, message, .. } if message.contains("names no readable `Location`")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_404_says_where_the_request_went() {
    // A base URL without its `/v1` answers 404, often with an empty body: the error then
    // names the URL asked, so that the user sees what to correct.
    for api in Api::ALL {
        let (error, requests) = fail(api, &Client::default(), vec![Reply::raw(404, "")]).await;
        assert_eq!(requests, 1, "{api:?}: a 404 is not retried");
        let ModelError::Api {
            status: 404,
            message,
            ..
        } = &error
        else {
            panic!("{api:?}: {error:?}");
        };
        assert!(
            message.starts_with("(empty body) (POST http://127.0.0.1:"),
            "{api:?}: {message}"
        );
        assert!(message.contains(api.path()), "{api:?}: {message}");
        assert!(
            message.ends_with(": check the base URL and the model name)"),
            "{api:?}: {message}"
        );
    }
}

#[tokio::test]
async fn unauthorised_and_forbidden_are_auth_errors() {
    for api in Api::ALL {
        for status in [401, 403] {
            let reply = Reply::json(status, &api.error_body(status, "invalid x-api-key"));
            let (error, requests) = fail(api, &Client::default(), vec![reply]).await;
            assert!(
                matches!(&error, ModelError::Auth { status: s, message, .. }
                    if *s == status && message == "invalid x-api-key"),
                "{api:?} {status}: {error:?}"
            );
            assert!(!error.is_transient());
            assert_eq!(requests, 1);
        }
    }
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    for api in Api::ALL {
        let server = MockServer::start([
            Reply::json(429, &api.error_body(429, "Rate limit reached")).header("retry-after", "0"),
            Reply::json(200, &api.text_answer("fine")),
        ])
        .await;
        let model = api.model(&server.base, &Client::default());
        let answer = model
            .complete(&request(api))
            .await
            .unwrap_or_else(|err| panic!("{api:?}: {err}"));
        assert_eq!(answer.text.as_deref(), Some("fine"));
        assert_eq!(server.requests().len(), 2, "{api:?}");
        // The retry is the same request.
        let sent = server.requests();
        assert_eq!(sent[0].body, sent[1].body);
    }
}

#[tokio::test]
async fn retry_after_in_seconds_is_waited() {
    let api = Api::Anthropic;
    let server = MockServer::start([
        Reply::json(429, &api.error_body(429, "slow down")).header("retry-after", "1"),
        Reply::json(200, &api.text_answer("fine")),
    ])
    .await;
    let model = api.model(&server.base, &Client::default());
    let started = Instant::now();
    model.complete(&request(api)).await.expect("an answer");
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff() {
    let api = Api::Gemini;
    let server = MockServer::start([
        Reply::json(503, &api.error_body(503, "The model is overloaded.")),
        Reply::json(500, &api.error_body(500, "Internal error")),
        Reply::json(200, &api.text_answer("fine")),
    ])
    .await;
    let model = api.model(&server.base, &Client::default());
    let answer = model.complete(&request(api)).await.expect("an answer");
    assert_eq!(answer.text.as_deref(), Some("fine"));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn retries_run_out() {
    let api = Api::Chat;
    let limited =
        || Reply::json(429, &api.error_body(429, "Rate limit reached")).header("retry-after", "0");
    let (error, requests) = fail(
        api,
        &Client::default(),
        vec![limited(), limited(), limited()],
    )
    .await;
    assert_eq!(requests, 3, "one request and two retries");
    assert_eq!(
        error,
        ModelError::RateLimited {
            provider: "openai_chat".into(),
            retry_after: Some(Duration::ZERO),
            message: "Rate limit reached".into()
        }
    );
    assert!(error.is_transient());

    let overloaded = || Reply::json(529, &Api::Anthropic.error_body(529, "Overloaded"));
    let client = Client {
        max_retries: 1,
        ..Client::default()
    };
    let (error, requests) = fail(Api::Anthropic, &client, vec![overloaded(), overloaded()]).await;
    assert_eq!(requests, 2);
    assert!(
        matches!(&error, ModelError::Api { status: 529, message, .. } if message == "Overloaded"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_wait_beyond_the_cap_is_not_retried() {
    let api = Api::Responses;
    let reply = Reply::json(429, &api.error_body(429, "Try again in 2 minutes"))
        .header("retry-after", "120");
    let started = Instant::now();
    let (error, requests) = fail(api, &Client::default(), vec![reply]).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(requests, 1);
    // Its message says why it was not retried, unlike a rate limit whose retries ran out.
    assert_eq!(
        error,
        ModelError::RateLimited {
            provider: "openai_responses".into(),
            retry_after: Some(Duration::from_secs(120)),
            message: "Try again in 2 minutes (the server asked to wait 2 min before a retry, \
                      more than the client's max_retry_wait (5 s), so it was not retried)"
                .into()
        }
    );
}

#[tokio::test]
async fn a_server_error_asking_for_a_wait_beyond_the_cap_says_how_long() {
    // `max_retry_wait`: "its error says how long it asked for", whatever the status.
    let api = Api::Anthropic;
    let reply = Reply::json(503, &api.error_body(503, "Overloaded")).header("retry-after", "120");
    let (error, requests) = fail(api, &Client::default(), vec![reply]).await;
    assert_eq!(requests, 1);
    assert!(
        matches!(&error, ModelError::Api { status: 503, message, .. }
            if message == "Overloaded (the server asked to wait 2 min before a retry, more than the client's max_retry_wait (5 s), so it was not retried)"),
        "{error:?}"
    );
    assert!(error.is_transient());
}

/// On Tokio's paused clock: time moves only when no task is ready, and then to the next timer,
/// so however the threads are scheduled, the client's time limit runs out exactly 200 ms
/// (of that clock) after the request starts, and not before the server has read it.
#[tokio::test(start_paused = true)]
async fn a_slow_answer_times_out() {
    let limit = Duration::from_millis(200);
    for api in Api::ALL {
        let client = Client {
            timeout: limit,
            ..Client::default()
        };
        let slow = Reply::json(200, &api.text_answer("late")).after(Duration::from_secs(3));
        let server = MockServer::start(vec![slow]).await;
        let model = api.model(&server.base, &client);
        let request = request(api);
        let started = tokio::time::Instant::now();
        let (answer, ()) = tokio::join!(
            model.complete(&request),
            server.hold_the_clock_until_read(1)
        );
        let took = started.elapsed();
        assert_eq!(
            answer.unwrap_err(),
            ModelError::Timeout {
                provider: api.name().into(),
                after: limit
            }
        );
        // Not retried: the one request, and one time limit's worth of time (a retry would
        // add its wait and a second limit, whether or not its request was read).
        assert_eq!(server.requests().len(), 1, "{api:?}");
        assert!(took >= limit && took < 2 * limit, "{api:?}: {took:?}");
    }
}

#[tokio::test]
async fn a_truncated_json_body_is_malformed() {
    for api in Api::ALL {
        let whole = api.text_answer("cut").to_string();
        let cut = &whole[..whole.len() / 2];
        let (error, _) = fail(api, &Client::default(), vec![Reply::raw(200, cut)]).await;
        match &error {
            ModelError::MalformedResponse { provider, reason } => {
                assert_eq!(provider, api.name());
                assert!(reason.contains("not valid JSON"), "{reason}");
                assert!(reason.contains("EOF while parsing"), "{reason}");
            }
            other => panic!("{api:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_body_cut_off_mid_transfer_is_malformed() {
    // No retry left (a cut answer is asked again otherwise: `unanswered.rs`).
    let (base, _server) = raw_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{\"choices\": [{\"message\": {",
    )
    .await;
    let model = OpenAiChatModel::builder()
        .api_key(KEY)
        .base_url(base)
        .max_retries(0)
        .build()
        .expect("a client");
    let error = model.complete(&request(Api::Chat)).await.unwrap_err();
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. } if reason.contains("cut off")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_body_larger_than_the_bound_is_refused() {
    let (base, _server) = raw_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40000000\r\n\r\n{",
    )
    .await;
    let model = GeminiModel::builder()
        .api_key(KEY)
        .base_url(base)
        .build()
        .expect("a client");
    let error = model.complete(&request(Api::Gemini)).await.unwrap_err();
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. } if reason.contains("40000000 bytes, more than the 32 MiB")),
        "{error:?}"
    );
}

#[tokio::test]
async fn json_nested_too_deep_is_malformed() {
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let (error, _) = fail(
        Api::Anthropic,
        &Client::default(),
        vec![Reply::raw(200, deep)],
    )
    .await;
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. } if reason.contains("recursion limit")),
        "{error:?}"
    );
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_malformed() {
    let (error, _) = fail(
        Api::Chat,
        &Client::default(),
        vec![Reply::json(
            200,
            &json!({"error": {"message": "upstream failed"}}),
        )],
    )
    .await;
    match &error {
        ModelError::MalformedResponse { reason, .. } => {
            assert!(
                reason.contains("not a valid openai_chat response"),
                "{reason}"
            );
            assert!(reason.contains("upstream failed"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let failed = json!({"status": "failed", "output": [],
        "error": {"code": "server_error", "message": "The model failed to respond."}});
    let (error, _) = fail(
        Api::Responses,
        &Client::default(),
        vec![Reply::json(200, &failed)],
    )
    .await;
    assert!(
        matches!(&error, ModelError::Api { message, .. } if message == "The model failed to respond."),
        "{error:?}"
    );
}

#[tokio::test]
async fn connection_refused_is_a_connection_error() {
    let (base, _unlistened) = refused_base();
    for api in Api::ALL {
        let model = api.model(&base, &Client::default());
        let error = model.complete(&request(api)).await.unwrap_err();
        match &error {
            ModelError::Connection {
                provider,
                url,
                reason,
            } => {
                assert_eq!(provider, api.name());
                assert!(url.starts_with(&base), "{url}");
                assert!(reason.to_lowercase().contains("refused"), "{reason}");
            }
            other => panic!("{api:?}: {other:?}"),
        }
    }
}

#[test]
fn builders_refuse_what_cannot_work() {
    let no_key = AnthropicModel::builder().build().unwrap_err();
    assert!(
        matches!(&no_key, ModelError::Config { reason, .. } if reason.contains("ANTHROPIC_API_KEY")),
        "{no_key:?}"
    );
    let no_key = GeminiModel::builder().build().unwrap_err();
    assert!(
        no_key
            .to_string()
            .contains("GEMINI_API_KEY or GOOGLE_API_KEY"),
        "{no_key}"
    );
    // A local server may need no key.
    OpenAiChatModel::builder()
        .base_url("http://127.0.0.1:11434/v1")
        .build()
        .expect("a keyless local client");
    let bad_url = OpenAiChatModel::builder()
        .api_key(KEY)
        .base_url("localhost:8000")
        .build()
        .unwrap_err();
    assert!(
        bad_url.to_string().contains("http:// or https://"),
        "{bad_url}"
    );
    let bad_key = OpenAiChatModel::builder()
        .api_key("sk-secret\nInjected: yes")
        .build()
        .unwrap_err();
    assert!(matches!(bad_key, ModelError::Config { .. }), "{bad_key:?}");
    assert!(!bad_key.to_string().contains("sk-secret"), "{bad_key}");
}

/// A base URL refused as one quotes it without the user and key it carries: the error is
/// printed and logged.
#[test]
fn a_refused_base_url_is_quoted_without_its_user_and_key() {
    for (url, says) in [
        ("https://me:sk-in-url@host name/v1", "is not a valid URL"),
        ("ftp://me:sk-in-url@host/v1", "http:// or https://"),
        ("https://me:sk-in-url@[::1/v1", "is not a valid URL"),
    ] {
        let refused = OpenAiChatModel::builder()
            .api_key(KEY)
            .base_url(url)
            .build()
            .unwrap_err();
        let shown = refused.to_string();
        assert!(shown.contains(says), "{url}: {shown}");
        assert!(!shown.contains("sk-in-url"), "{url}: {shown}");
    }
}

#[test]
fn builders_refuse_body_fields_that_decide_whether_the_answer_streams() {
    fn refused<M: std::fmt::Debug>(built: Result<M, ModelError>, field: &str) {
        match built {
            Err(ModelError::Config { reason, .. }) => {
                assert!(reason.contains(&format!("`{field}`")), "{reason}");
                assert!(reason.contains("ChatModel::stream"), "{reason}");
            }
            other => panic!("{field}: {other:?}"),
        }
    }
    for field in ["stream", "stream_options"] {
        let value = || json!(true);
        refused(
            OpenAiChatModel::builder()
                .api_key(KEY)
                .body_field(field, value())
                .build(),
            field,
        );
        refused(
            OpenAiResponsesModel::builder()
                .api_key(KEY)
                .body_field(field, value())
                .build(),
            field,
        );
        refused(
            AnthropicModel::builder()
                .api_key(KEY)
                .body_field(field, value())
                .build(),
            field,
        );
        refused(
            GeminiModel::builder()
                .api_key(KEY)
                .body_field(field, value())
                .build(),
            field,
        );
    }
    // Any other field is the user's to add.
    OpenAiChatModel::builder()
        .api_key(KEY)
        .body_field("streaming_hint", json!(true))
        .build()
        .expect("a field the client does not own");
}

#[test]
fn debug_output_never_shows_the_key() {
    let builder = AnthropicModel::builder().api_key("sk-ant-secret");
    assert!(!format!("{builder:?}").contains("sk-ant-secret"));
    let model = builder.build().expect("a client");
    assert!(!format!("{model:?}").contains("sk-ant-secret"));
}

#[tokio::test]
async fn an_empty_model_name_is_refused_before_sending() {
    let server = MockServer::start([]).await;
    for api in Api::ALL {
        let model = api.model(&server.base, &Client::default());
        let mut request = request(api);
        request.model = String::new();
        let error = model.complete(&request).await.unwrap_err();
        assert!(
            matches!(error, ModelError::InvalidRequest { .. }),
            "{api:?}: {error:?}"
        );
    }
    assert!(server.requests().is_empty());
}

/// The request an OpenAI Chat client built by `configure` (from one with a key, at a local
/// server) sends for one answer.
async fn chat_request_sent(
    configure: impl FnOnce(HttpModelBuilder<OpenAiChatModel>) -> HttpModelBuilder<OpenAiChatModel>,
) -> Recorded {
    let server = MockServer::start([Reply::json(200, &Api::Chat.text_answer("a"))]).await;
    let builder = OpenAiChatModel::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1", server.base));
    let model = configure(builder).build().expect("a client");
    model
        .complete(&request(Api::Chat))
        .await
        .expect("an answer");
    server.requests().remove(0)
}

#[tokio::test]
async fn extra_headers_are_sent() {
    let sent = &chat_request_sent(|builder| {
        builder
            .header("OpenAI-Organization", "org-7")
            .legacy_max_tokens(true)
            .max_output_tokens(99)
    })
    .await;
    assert_eq!(sent.header("openai-organization"), Some("org-7"));
    assert_eq!(sent.body["max_tokens"], 99);
    assert_eq!(sent.body.get("max_completion_tokens"), None);
    assert!(
        sent.header("user-agent")
            .is_some_and(|ua| ua.starts_with("toolsmith/"))
    );
}

#[tokio::test]
async fn a_user_agent_header_replaces_the_client_s_own() {
    let sent = chat_request_sent(|builder| builder.header("User-Agent", "my-agent/2.0")).await;
    assert_eq!(sent.header("user-agent"), Some("my-agent/2.0"));
}

#[tokio::test]
async fn a_spent_quota_and_a_501_are_not_retried() {
    let api = Api::Chat;
    let quota = json!({"error": {"message": "You exceeded your current quota.",
        "type": "insufficient_quota", "code": "insufficient_quota"}});
    let (error, requests) = fail(api, &Client::default(), vec![Reply::json(429, &quota)]).await;
    assert_eq!(requests, 1);
    assert!(
        matches!(&error, ModelError::Api { status: 429, message, .. } if message == "You exceeded your current quota."),
        "{error:?}"
    );
    assert!(!error.is_transient());

    let (error, requests) = fail(
        api,
        &Client::default(),
        vec![Reply::json(501, &api.error_body(501, "not here"))],
    )
    .await;
    assert_eq!(requests, 1);
    assert!(!error.is_transient(), "{error:?}");
}

#[tokio::test]
async fn retry_after_as_a_date_or_past_any_duration_is_honoured() {
    let api = Api::Anthropic;
    let in_two_hours =
        httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(7200));
    let reply =
        Reply::json(429, &api.error_body(429, "later")).header("retry-after", &in_two_hours);
    let (error, requests) = fail(api, &Client::default(), vec![reply]).await;
    assert_eq!(requests, 1, "a two-hour wait is past the cap: not retried");
    let ModelError::RateLimited {
        retry_after: Some(wait),
        ..
    } = error
    else {
        panic!("{error:?}");
    };
    assert!(wait > Duration::from_secs(7000), "{wait:?}");

    for huge in ["1e30", "99999999999999999999"] {
        let reply = Reply::json(429, &api.error_body(429, "later")).header("retry-after", huge);
        let (error, requests) = fail(api, &Client::default(), vec![reply]).await;
        assert_eq!(requests, 1, "{huge}");
        assert!(
            matches!(
                error,
                ModelError::RateLimited {
                    retry_after: Some(Duration::MAX),
                    ..
                }
            ),
            "{huge}: {error:?}"
        );
    }
}

#[tokio::test]
async fn an_error_status_whose_body_is_cut_off_is_still_retried() {
    let (base, _server) = raw_server(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{\"error\":",
    )
    .await;
    let model = OpenAiChatModel::builder()
        .api_key(KEY)
        .base_url(base)
        .max_retries(1)
        .retry_delay(Duration::from_millis(1))
        .build()
        .expect("a client");
    // The retry found the (one-shot) server gone: it was made.
    let error = model.complete(&request(Api::Chat)).await.unwrap_err();
    assert!(matches!(error, ModelError::Connection { .. }), "{error:?}");
}

#[tokio::test]
async fn a_password_in_the_base_url_is_not_shown() {
    let (base, _unlistened) = refused_base();
    let base = base.replace("http://", "http://user:PASSWORD123@");
    let model = OpenAiChatModel::builder()
        .api_key(KEY)
        .base_url(&base)
        // The refused connection is retried: quickly.
        .retry_delay(Duration::from_millis(1))
        .build()
        .expect("a client");
    assert!(!format!("{model:?}").contains("PASSWORD123"));
    let error = model.complete(&request(Api::Chat)).await.unwrap_err();
    assert!(matches!(error, ModelError::Connection { .. }), "{error:?}");
    assert!(!error.to_string().contains("PASSWORD123"), "{error}");
    assert!(!format!("{error:?}").contains("PASSWORD123"), "{error:?}");
}

#[tokio::test]
async fn a_password_in_the_base_url_is_not_logged_with_a_retry() {
    // A retried error status is logged (at `debug`) with the URL asked.
    let server = MockServer::start([
        Reply::json(503, &Api::Chat.error_body(503, "busy")),
        Reply::json(200, &Api::Chat.text_answer("fine")),
    ])
    .await;
    let base = server.base.replace("http://", "http://user:PASSWORD123@");
    let model = OpenAiChatModel::builder()
        .api_key(KEY)
        .base_url(format!("{base}/v1"))
        .retry_delay(Duration::from_millis(1))
        .build()
        .expect("a client");
    let trace = crate::common::trace_tree::TraceTree::default();
    let answer = {
        let _guard = tracing::subscriber::set_default(trace.subscriber());
        model.complete(&request(Api::Chat)).await
    };
    assert_eq!(answer.unwrap().text.as_deref(), Some("fine"));
    let lines: Vec<String> = trace
        .events()
        .into_iter()
        .filter(|event| event.level == tracing::Level::DEBUG)
        .map(|event| event.line)
        .collect();
    assert!(
        lines
            .iter()
            .any(|line| line.contains("HTTP 503 from http://127.0.0.1:")
                && line.contains("retry 1 of 2")),
        "{lines:#?}"
    );
    for line in &lines {
        assert!(!line.contains("PASSWORD123"), "{line}");
    }
}

#[tokio::test]
async fn a_408_or_409_is_retried_and_an_answer_that_is_no_object_is_malformed() {
    let api = Api::Chat;
    for status in [408, 409] {
        let server = MockServer::start([
            Reply::json(status, &api.error_body(status, "try again")),
            Reply::json(200, &api.text_answer("fine")),
        ])
        .await;
        let model = api.model(&server.base, &Client::default());
        let answer = model.complete(&request(api)).await.unwrap();
        assert_eq!(answer.text.as_deref(), Some("fine"), "{status}");
        assert_eq!(server.requests().len(), 2, "{status}");
    }
    for api in Api::ALL {
        let (error, requests) =
            fail(api, &Client::default(), vec![Reply::json(200, &json!([]))]).await;
        assert_eq!(requests, 1);
        assert!(
            matches!(&error, ModelError::MalformedResponse { reason, .. } if reason.contains("not a JSON object")),
            "{api:?}: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_key_the_server_echoes_is_hidden_in_the_error() {
    // A server (or a proxy) quoting the header it refused: the error is printed and logged,
    // which the key must not be.
    let echoed = format!("Incorrect API key provided: {KEY}.");
    for api in Api::ALL {
        let refused = Reply::json(401, &api.error_body(401, &echoed));
        let (error, _) = fail(api, &Client::default(), vec![refused]).await;
        // The body of a 200 that is no answer is quoted too.
        let quoted = Reply::json(200, &json!({"error": {"message": echoed}, "key": KEY}));
        let (malformed, _) = fail(api, &Client::default(), vec![quoted]).await;
        let server = MockServer::start([Reply::sse(
            &super::server::error_stream(api, json!({"code": 401, "message": echoed})),
            64,
        )])
        .await;
        let streamed = api
            .model(&server.base, &Client::default())
            .stream(&request(api), &mut |_| {})
            .await
            .expect_err("the stream's error");
        for error in [error, malformed, streamed] {
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains(KEY), "{api:?}: {shown}");
            assert!(
                shown.contains("Incorrect API key provided: <API key>."),
                "{api:?}: {shown}"
            );
        }
    }
}
