//! An agent behind HTTP: one session shared by every request, each request's run streamed
//! back to its own client as it goes, one JSON event a line (`AgentSession::events_of`).
//!
//! Run with `cargo run --example agent_server`. The example starts the server on a free
//! port of 127.0.0.1, then asks it two questions at once, as two clients would, and prints
//! what each client reads: its own run's events only, though both runs share the session.
//! The model is scripted, so it runs anywhere; any `ChatModel` takes its place.
//!
//! `POST /ask` with the question as the body answers `application/x-ndjson`: each line an
//! `AgentEvent` as serde writes it (`{"type": "tool_call_started", "data": {..}}`), then
//! `{"type": "answer", "data": "<text>"}` or `{"type": "error", "data": "<message>"}`. A
//! client that hangs up stops its run (the stream is dropped, and the run with it).
//!
//! Copied into a crate of your own, it needs, besides the dependencies the README lists:
//!
//! ```toml
//! axum = { version = "0.8", default-features = false, features = ["http1", "tokio"] }
//! futures = "0.3"
//! reqwest = { version = "0.13", default-features = false }
//! rustls = { version = "0.23", default-features = false, features = ["ring"] }
//! ```

use std::convert::Infallible;
use std::io::Write;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use axum::routing::post;
use serde_json::json;
use tokio::sync::mpsc;
use toolsmith::harness::agent::AgentSession;
use toolsmith::harness::model::{ChatResponse, Message, ScriptedModel, ScriptedTurn};
use toolsmith::{ToolArguments, ToolCallRequest, ToolShed, tool_fn};

/// Count the words of a text.
#[tool_fn(read_only)]
fn word_count(
    /// The text.
    text: String,
) -> usize {
    text.split_whitespace().count()
}

/// Answers one question: streams its run's events, one JSON line each, then its outcome.
async fn ask(State(session): State<Arc<AgentSession>>, question: String) -> Response {
    let (lines, read) = mpsc::channel::<String>(64);
    tokio::spawn(async move {
        let mut events = session.events_of(session.run(question));
        while let Some(event) = events.next().await {
            let line = serde_json::to_string(&event).expect("events serialize");
            if lines.send(line + "\n").await.is_err() {
                // The client hung up: dropping `events` stops the run.
                return;
            }
        }
        let last = match events.finish().await {
            Ok(run) => json!({"type": "answer", "data": run.text}),
            Err(error) => json!({"type": "error", "data": error.to_string()}),
        };
        let _ = lines.send(format!("{last}\n")).await;
    });
    let body = futures::stream::unfold(read, |mut read| async move {
        let line = read.recv().await?;
        Some((Ok::<_, Infallible>(line), read))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(body))
        .expect("a valid response")
}

/// What a model does with these questions, scripted: it counts the words of the question,
/// then says how many there are. Any `ChatModel` takes its place.
fn scripted_model(questions: usize) -> ScriptedModel {
    let turn = || {
        ScriptedTurn::respond(|request| {
            let question = request.messages[0].text().unwrap_or_default().to_owned();
            Ok(match request.messages.last() {
                Some(Message::ToolResults { results }) => ChatResponse::text(format!(
                    "\"{question}\" has {} words.",
                    results[0].result.content.to_text()
                )),
                _ => ChatResponse::calls(vec![Ok(ToolCallRequest::new(
                    format!("count-{}", question.len()),
                    "word_count",
                    ToolArguments::try_from(json!({"text": question})).expect("an object"),
                ))]),
            })
        })
    };
    ScriptedModel::new((0..questions * 2).map(|_| turn()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(&mut std::io::stdout()).await
}

/// Serves, asks two questions at once and prints each client's lines to `out` as they come.
pub async fn run(out: &mut (impl Write + Send)) -> Result<(), Box<dyn std::error::Error>> {
    let questions = ["Is this the real life?", "Is this just fantasy?"];
    let session = AgentSession::builder(scripted_model(questions.len()))
        .with_model("scripted")
        .with_toolshed(ToolShed::new().tool(WordCount))
        .build()?;
    session.tool_manager().activate(&["word_count".to_owned()]);

    let app = Router::new()
        .route("/ask", post(ask))
        .with_state(Arc::new(session));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/ask", listener.local_addr()?);
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    writeln!(out, "serving on {url}\n")?;

    // Two clients at once; each prints its own run's lines as they come. (This reqwest is
    // built without a TLS provider of its own: it is given rustls' ring one.)
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let out = Mutex::new(out);
    let clients = questions.iter().enumerate().map(|(n, question)| {
        let (client, url, out) = (client.clone(), url.clone(), &out);
        async move {
            let mut answer = client.post(&url).body(question.to_string()).send().await?;
            let mut unread = Vec::new();
            while let Some(chunk) = answer.chunk().await? {
                unread.extend_from_slice(&chunk);
                while let Some(end) = unread.iter().position(|&byte| byte == b'\n') {
                    let line: Vec<u8> = unread.drain(..=end).collect();
                    let line = String::from_utf8_lossy(&line);
                    write!(
                        out.lock().expect("not poisoned"),
                        "client {}: {line}",
                        n + 1
                    )?;
                }
            }
            Ok::<_, Box<dyn std::error::Error>>(())
        }
    });
    for read in futures::future::join_all(clients).await {
        read?;
    }
    server.abort();
    Ok(())
}
