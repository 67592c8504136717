//! A request that gets no answer at all (the connection refused, closed or reset before the
//! answer's head) is asked again as a 5xx is, within the same `max_retries`, after the
//! backoff; so is a streamed answer cut off before anything of it was delivered. A TLS
//! failure, and a stream cut after text, are not.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith_harness::model::{ModelError, StreamDelta};

use super::conversation::first_request;
use super::server::{OnConnection, connection_server, refused_base, sse_text};
use super::{Api, Client};

/// `body` as a whole `200` JSON answer.
fn json_answer(body: &Value) -> OnConnection {
    let body = body.to_string();
    OnConnection::Answer(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// A `200` event stream whose chunks are `events` (chunked transfer), ended properly when
/// `ended`, else cut off after them.
fn event_stream(events: &[String], ended: bool) -> OnConnection {
    let mut answer = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    );
    for event in events {
        answer.push_str(&format!("{:x}\r\n{event}\r\n", event.len()));
    }
    if ended {
        answer.push_str("0\r\n\r\n");
    }
    OnConnection::Answer(answer.into_bytes())
}

/// An OpenAI Chat chunk whose delta is `delta`.
fn chat_chunk(delta: Value, finish: Value) -> String {
    sse_text([(
        None,
        json!({"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )])
}

/// OpenAI Chat's stream of `text`, whole.
fn chat_stream(text: &str) -> OnConnection {
    event_stream(
        &[
            chat_chunk(json!({"role": "assistant"}), Value::Null),
            chat_chunk(json!({"content": text}), Value::Null),
            chat_chunk(json!({}), json!("stop")) + "data: [DONE]\n\n",
        ],
        true,
    )
}

#[tokio::test]
async fn a_connection_closed_without_an_answer_is_retried() {
    for api in Api::ALL {
        let (base, accepted, _server) = connection_server(vec![
            OnConnection::Close,
            OnConnection::CloseAfterRequest,
            json_answer(&api.text_answer("fine")),
        ])
        .await;
        let answer = api
            .model(&base, &Client::default())
            .complete(&first_request(api))
            .await
            .unwrap_or_else(|error| panic!("{api:?}: {error}"));
        assert_eq!(answer.text.as_deref(), Some("fine"), "{api:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 3, "{api:?}");
    }
}

#[tokio::test]
async fn when_the_retries_run_out_the_error_says_the_connection_failed_and_how_often() {
    let (base, accepted, _server) =
        connection_server(vec![OnConnection::CloseAfterRequest; 3]).await;
    let error = Api::Anthropic
        .model(&base, &Client::default())
        .complete(&first_request(Api::Anthropic))
        .await
        .expect_err("no answer");
    match &error {
        ModelError::Connection { url, reason, .. } => {
            assert!(url.starts_with(&base), "{url}");
            assert!(
                reason.contains("connection closed before message completed"),
                "{reason}"
            );
            assert!(reason.ends_with("(after 3 attempts)"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(error.to_string().contains("cannot reach"), "{error}");
    assert!(error.is_transient());
    // `max_retries` is 2: three attempts, no more.
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_refused_connection_is_retried_after_the_backoff_then_returned() {
    let (base, _unlistened) = refused_base();
    let client = Client {
        max_retries: 2,
        retry_delay: Duration::from_millis(100),
        ..Client::default()
    };
    let started = Instant::now();
    let error = Api::Gemini
        .model(&base, &client)
        .complete(&first_request(Api::Gemini))
        .await
        .expect_err("nothing listens");
    // Two backoffs: 100 ms, then 200 ms.
    assert!(started.elapsed() >= Duration::from_millis(300), "{error}");
    assert!(
        matches!(&error, ModelError::Connection { reason, .. }
            if reason.to_lowercase().contains("refused") && reason.ends_with("(after 3 attempts)")),
        "{error:?}"
    );

    // No retry allowed: one attempt, which the error does not count.
    let none = Client {
        max_retries: 0,
        ..client
    };
    let error = Api::Gemini
        .model(&base, &none)
        .complete(&first_request(Api::Gemini))
        .await
        .expect_err("nothing listens");
    assert!(
        matches!(&error, ModelError::Connection { reason, .. }
            if reason.to_lowercase().contains("refused") && !reason.contains("attempts")),
        "{error:?}"
    );
}

#[tokio::test]
async fn error_statuses_and_lost_connections_share_the_retries() {
    let overloaded = Api::Chat.error_body(503, "overloaded").to_string();
    let status = OnConnection::Answer(
        format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{overloaded}",
            overloaded.len()
        )
        .into_bytes(),
    );
    let script = vec![
        status,
        OnConnection::CloseAfterRequest,
        json_answer(&Api::Chat.text_answer("fine")),
    ];
    let (base, accepted, _server) = connection_server(script.clone()).await;
    let answer = Api::Chat
        .model(&base, &Client::default())
        .complete(&first_request(Api::Chat))
        .await
        .expect("answered after two retries");
    assert_eq!(answer.text.as_deref(), Some("fine"));
    assert_eq!(accepted.load(Ordering::SeqCst), 3);

    // One retry in all: the 503 takes it, and the lost connection is the error.
    let one = Client {
        max_retries: 1,
        ..Client::default()
    };
    let (base, accepted, _server) = connection_server(script).await;
    let error = Api::Chat
        .model(&base, &one)
        .complete(&first_request(Api::Chat))
        .await
        .expect_err("no retry left");
    assert!(
        matches!(&error, ModelError::Connection { reason, .. } if reason.ends_with("(after 2 attempts)")),
        "{error:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_tls_failure_is_not_retried() {
    // A server that answers a TLS hello in plain HTTP.
    let plain = OnConnection::WriteAtOnce(b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec());
    let (base, accepted, _server) = connection_server(vec![plain; 3]).await;
    let base = base.replace("http://", "https://");
    let error = Api::Chat
        .model(&base, &Client::default())
        .complete(&first_request(Api::Chat))
        .await
        .expect_err("no TLS");
    assert!(matches!(error, ModelError::Connection { .. }), "{error:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "{error}");
}

#[tokio::test]
async fn a_stream_cut_before_anything_was_delivered_is_retried() {
    let (base, accepted, _server) = connection_server(vec![
        // Cut right after the answer's head.
        event_stream(&[], false),
        // Cut after an event that delivers nothing (the role alone).
        event_stream(
            &[chat_chunk(json!({"role": "assistant"}), Value::Null)],
            false,
        ),
        chat_stream("fine"),
    ])
    .await;
    let mut deltas = Vec::new();
    let answer = Api::Chat
        .model(&base, &Client::default())
        .stream(&first_request(Api::Chat), &mut |delta| deltas.push(delta))
        .await
        .expect("answered after two retries");
    assert_eq!(answer.text.as_deref(), Some("fine"));
    assert_eq!(deltas, [StreamDelta::Text("fine".into())]);
    assert_eq!(accepted.load(Ordering::SeqCst), 3);

    // Cut every time: the cut, after the attempts made.
    let (base, accepted, _server) = connection_server(vec![event_stream(&[], false); 3]).await;
    let error = Api::Chat
        .model(&base, &Client::default())
        .stream(&first_request(Api::Chat), &mut |_| {})
        .await
        .expect_err("cut off");
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. }
            if reason.contains("cut off") && reason.ends_with("(after 3 attempts)")),
        "{error:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_stream_cut_after_text_was_delivered_is_not_retried() {
    let (base, accepted, _server) = connection_server(vec![
        event_stream(
            &[
                chat_chunk(json!({"role": "assistant"}), Value::Null),
                chat_chunk(json!({"content": "Half an"}), Value::Null),
            ],
            false,
        ),
        chat_stream("unused"),
    ])
    .await;
    let mut deltas = Vec::new();
    let error = Api::Chat
        .model(&base, &Client::default())
        .stream(&first_request(Api::Chat), &mut |delta| deltas.push(delta))
        .await
        .expect_err("cut off");
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. }
            if reason.contains("cut off") && !reason.contains("attempts")),
        "{error:?}"
    );
    assert_eq!(deltas, [StreamDelta::Text("Half an".into())]);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

/// A whole answer whose body the connection cuts before its end is no answer: asked again,
/// as one that never came is; when every attempt is cut, the error says so, and how often.
#[tokio::test]
async fn a_whole_answer_cut_off_mid_body_is_retried() {
    let cut = || {
        OnConnection::Answer(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{\"choices\": [{\"message\": {"
                .to_vec(),
        )
    };
    for api in Api::ALL {
        let (base, accepted, _server) =
            connection_server(vec![cut(), json_answer(&api.text_answer("whole"))]).await;
        let answer = api
            .model(&base, &Client::default())
            .complete(&first_request(api))
            .await
            .unwrap_or_else(|error| panic!("{api:?}: {error}"));
        assert_eq!(answer.text.as_deref(), Some("whole"), "{api:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 2, "{api:?}");
    }

    let (base, accepted, _server) = connection_server(vec![cut(), cut(), cut()]).await;
    let error = Api::Chat
        .model(&base, &Client::default())
        .complete(&first_request(Api::Chat))
        .await
        .expect_err("every answer cut");
    assert!(
        matches!(&error, ModelError::MalformedResponse { reason, .. }
            if reason.contains("cut off after") && reason.ends_with("(after 3 attempts)")),
        "{error:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}
