//! A scripted streamable-HTTP MCP server on 127.0.0.1, for servers that misbehave in ways our
//! own server never does: it does the handshake, and a test's function answers each request.

use std::sync::{Arc, Mutex};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What the server sends back for one request.
pub enum FakeAnswer {
    /// `{"jsonrpc":"2.0","id":…,"result":…}`.
    Result(Value),
    /// This body with this content type, as it is.
    Raw(String, &'static str),
    /// The same, after a pause.
    Delayed(std::time::Duration, Box<FakeAnswer>),
}

/// The running server; stopped when dropped.
pub struct FakeHttpServer {
    url: String,
    serving: tokio::task::JoinHandle<()>,
    /// The client's answers to the server's requests, as they came.
    answers: Arc<Mutex<Vec<Value>>>,
}

impl FakeHttpServer {
    /// Serves on a free port; `answer(method, id)` answers every request but `initialize`.
    /// The client's answers (to requests of the server's sent in `answer`'s events) are
    /// kept, for [`answers`](Self::answers).
    pub async fn start<F>(answer: F) -> Self
    where
        F: Fn(&str, &Value) -> FakeAnswer + Send + Sync + 'static,
    {
        Self::start_with_params(move |method, id, _| answer(method, id)).await
    }

    /// [`start`](Self::start), with `answer(method, id, params)` also given each request's
    /// `params` (`null` when it has none), e.g. to answer `tools/list` by its cursor.
    pub async fn start_with_params<F>(answer: F) -> Self
    where
        F: Fn(&str, &Value, &Value) -> FakeAnswer + Send + Sync + 'static,
    {
        let answer = Arc::new(answer);
        let answers = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&answers);
        let post = move |body: String| {
            let answer = Arc::clone(&answer);
            let kept = Arc::clone(&kept);
            async move {
                let message: Value = serde_json::from_str(&body).unwrap();
                let Some(id) = message.get("id").cloned() else {
                    return StatusCode::ACCEPTED.into_response();
                };
                if message.get("method").is_none() {
                    kept.lock().unwrap().push(message);
                    return StatusCode::ACCEPTED.into_response();
                }
                let method = message["method"].as_str().unwrap_or_default();
                let answer = if method == "initialize" {
                    FakeAnswer::Result(json!({
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {"listChanged": true}},
                        "serverInfo": {"name": "fake", "version": "1"},
                    }))
                } else {
                    answer(method, &id, message.get("params").unwrap_or(&Value::Null))
                };
                respond(&id, answer).await
            }
        };
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(post)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .delete(|| async { StatusCode::OK }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let serving = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url,
            serving,
            answers,
        }
    }

    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The client's answers to the server's requests so far.
    pub fn answers(&self) -> Vec<Value> {
        self.answers.lock().unwrap().clone()
    }
}

impl Drop for FakeHttpServer {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

async fn respond(id: &Value, mut answer: FakeAnswer) -> Response {
    while let FakeAnswer::Delayed(pause, then) = answer {
        tokio::time::sleep(pause).await;
        answer = *then;
    }
    let (body, content_type) = match answer {
        FakeAnswer::Result(result) => (
            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
            "application/json",
        ),
        FakeAnswer::Raw(body, content_type) => (body, content_type),
        FakeAnswer::Delayed(..) => unreachable!("taken apart above"),
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert("mcp-session-id", HeaderValue::from_static("s1"));
    response
}
