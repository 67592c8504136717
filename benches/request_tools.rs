//! What declaring tools costs an HTTP model client's request: `complete` against a local
//! server on 127.0.0.1 that answers at once, with 1 tool declared and with 200, for
//! OpenAI Chat, Anthropic and Gemini. The 200 are declared two ways:
//!
//! - `200/same_set`: every request carries the same `Arc<ToolDeclarations>`, as an agent
//!   session's requests do until its registry or active set changes;
//! - `200/new_set`: every request carries a set the client has not seen (one of 64 equal
//!   sets, each its own `Arc`, taken in turn), as a session whose set changes every turn.
//!
//! The request-building share of the tools is the difference from `1`; with the tools
//! rendered once a set, `same_set` stays near `1` while `new_set` pays the rendering.
//!
//! Run with `cargo bench --bench request_tools -- --warm-up-time 1 --measurement-time 3`;
//! the figures are in `docs/PERFORMANCE.md` ("Session 29: tool declarations rendered once a
//! set").

use std::hint::black_box;
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::Uri;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolsmith::harness::model::http::{AnthropicModel, GeminiModel, OpenAiChatModel};
use toolsmith::harness::model::{ChatModel, ChatOptions, ChatRequest, Message};
use toolsmith::provider::StrictMode;
use toolsmith::{Tool, ToolDeclarations, ToolDefinition};

mod declared_tools;

const TOOLS: usize = 200;
/// More sets than a client keeps rendered, so that each `new_set` request renders.
const SETS: usize = 64;

/// `count` tools of `declared_tools`, as the `providers` bench renders them (one in four
/// declares a `returns` schema, and so is rendered strict where the format has a strict mode).
fn declarations(count: usize) -> ToolDeclarations {
    let tools = (0..count)
        .map(|i| {
            let tool = ToolDefinition::new(
                declared_tools::name(i),
                declared_tools::description(i),
                declared_tools::arguments(),
            );
            Tool::SingleCommand(match declared_tools::returns(i) {
                Some(returns) => tool.with_returns(returns),
                None => tool,
            })
        })
        .collect();
    ToolDeclarations { shed: None, tools }
}

/// The answer of each API to any request: a short text.
async fn answer(uri: Uri, body: Bytes) -> ([(&'static str, &'static str); 1], String) {
    black_box(body.len());
    let answer = if uri.path().starts_with("/v1/messages") {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 2}})
    } else if uri.path().starts_with("/v1beta/") {
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2}})
    } else {
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
            "finish_reason": "stop"}], "usage": {"prompt_tokens": 10, "completion_tokens": 2}})
    };
    ([("content-type", "application/json")], answer.to_string())
}

fn request_tools(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        let app = axum::Router::new().fallback(answer);
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    });
    let _entered = runtime.enter();
    let clients: [(&str, Box<dyn ChatModel>, StrictMode); 3] = [
        (
            "openai_chat",
            Box::new(
                OpenAiChatModel::builder()
                    .base_url(format!("{base}/v1"))
                    .build()
                    .expect("a client"),
            ),
            StrictMode::WhenReturnsDeclared,
        ),
        // Anthropic takes at most 20 strict tools a request.
        (
            "anthropic",
            Box::new(
                AnthropicModel::builder()
                    .api_key("k")
                    .base_url(&base)
                    .build()
                    .expect("a client"),
            ),
            StrictMode::Never,
        ),
        (
            "gemini",
            Box::new(
                GeminiModel::builder()
                    .api_key("k")
                    .base_url(&base)
                    .build()
                    .expect("a client"),
            ),
            StrictMode::WhenReturnsDeclared,
        ),
    ];
    let one = Arc::new(declarations(1));
    let same = Arc::new(declarations(TOOLS));
    let sets: Vec<Arc<ToolDeclarations>> =
        (0..SETS).map(|_| Arc::new(declarations(TOOLS))).collect();
    let mut group = c.benchmark_group("request_tools");
    for (name, model, strict) in &clients {
        let request = |tools: &Arc<ToolDeclarations>| ChatRequest {
            model: "m".to_owned(),
            messages: vec![Message::user("Find the config file.")],
            tools: Arc::clone(tools),
            options: ChatOptions {
                strict: *strict,
                ..ChatOptions::default()
            },
            ..ChatRequest::default()
        };
        let ask = |request: &ChatRequest| {
            black_box(
                runtime
                    .block_on(model.complete(request))
                    .expect("an answer"),
            )
        };
        let one = request(&one);
        group.bench_function(format!("{name}/1"), |b| b.iter(|| ask(&one)));
        let same = request(&same);
        group.bench_function(format!("{name}/200/same_set"), |b| b.iter(|| ask(&same)));
        let mut requests = sets
            .iter()
            .map(request)
            .collect::<Vec<_>>()
            .into_iter()
            .cycle();
        group.bench_function(format!("{name}/200/new_set"), |b| {
            b.iter(|| ask(&requests.next().expect("cycles")));
        });
    }
    group.finish();
}

criterion_group!(benches, request_tools);
criterion_main!(benches);
