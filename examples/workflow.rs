//! A batch of calls with dependencies: two fetches run concurrently, a summary waits for
//! both, a save runs as a sequential call, a parse fails (and the call depending on it is
//! cancelled), and a flaky lookup succeeds on its third attempt. Then the same plan again as
//! a stream, each outcome shown as its call ends.
//!
//! Run with `cargo run --example workflow`. Copied into a crate of your own, it needs
//! `futures = "0.3"` (for `StreamExt::next`) besides the dependencies the README lists.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use serde_json::json;
use toolsmith::{
    Args, BatchOptions, ExecutionHint, FnTool, ToolAnnotations, ToolArgs, ToolArguments,
    ToolCallManager, ToolCallRequest, ToolCallResult, ToolError, ToolRetryConfig, scheme,
};

fn text_tool(
    name: &'static str,
    description: &str,
    argument: &str,
    run: impl Fn(String) -> Result<String, ToolError> + Send + Sync + Clone + 'static,
) -> FnTool {
    let argument_name = argument.to_owned();
    FnTool::new(
        name,
        description,
        Args::new(
            scheme::object()
                .required(argument, scheme::string())
                .build(),
        ),
        move |args: ToolArgs<'_>| {
            let input = args.str(&argument_name).map(str::to_owned);
            let run = run.clone();
            async move {
                // Each call takes a little while, as a real tool would.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(ToolCallResult::text(run(input?)?))
            }
        },
    )
}

fn call(id: &str, tool: &str, arguments: serde_json::Value) -> ToolCallRequest {
    ToolCallRequest::new(
        id,
        tool,
        ToolArguments::try_from(arguments).expect("an object"),
    )
}

#[tokio::main]
async fn main() {
    let manager = ToolCallManager::new("workflow-example");
    let fetch = text_tool("fetch", "Fetch a page.", "url", |url| {
        Ok(format!("<page {url}>"))
    })
    .with_annotations(ToolAnnotations::read_only());
    let summarise = text_tool("summarise", "Summarise text.", "text", |text| {
        Ok(format!("summary of {} characters", text.len()))
    });
    let save = text_tool("save", "Save a note.", "note", |note| {
        Ok(format!("saved '{note}'"))
    })
    .with_annotations(ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    });
    let parse = text_tool("parse", "Parse a number.", "text", |text| {
        text.parse::<i64>()
            .map(|n| n.to_string())
            .map_err(|e| ToolError::execution("parse", format!("'{text}': {e}")))
    });
    // Fails with a network error twice, then answers.
    let failures_left = Arc::new(AtomicU32::new(2));
    let lookup = text_tool("lookup", "Look a word up.", "word", move |word| {
        let failed = failures_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if failed {
            Err(ToolError::network("lookup", "connection reset by peer"))
        } else {
            Ok(format!("{word}: a small tool"))
        }
    });
    for tool in [fetch, summarise, save, parse, lookup] {
        manager.register(Arc::new(tool)).expect("registers");
    }
    // The lookup is not annotated safe to repeat, so say that it may be retried.
    manager
        .set_retry_config("lookup", ToolRetryConfig::exponential(3))
        .expect("lookup is registered");

    let requests = [
        call("fetch-a", "fetch", json!({"url": "https://a.example"})),
        call("fetch-b", "fetch", json!({"url": "https://b.example"})),
        call("summary", "summarise", json!({"text": "both pages"}))
            .depends_on(["fetch-a", "fetch-b"]),
        call("save", "save", json!({"note": "summary"}))
            .depends_on(["summary"])
            .with_hint(ExecutionHint::Sequential),
        call("parse", "parse", json!({"text": "forty-two"})),
        call("double", "parse", json!({"text": "84"})).depends_on(["parse"]),
        call("lookup", "lookup", json!({"word": "toolsmith"})),
    ];

    let workflow = manager.build_workflow(&requests).expect("a valid plan");
    println!("plan: {workflow:?}\n");

    let started = tokio::time::Instant::now();
    let outcomes = manager.execute_workflow(&workflow).await;
    for outcome in &outcomes {
        let result = match &outcome.result {
            Ok(result) => format!("ok: {}", result.content.to_text()),
            Err(err) => format!("error: {err}"),
        };
        println!(
            "{:<8} {:<10} attempts={} elapsed={:>7.1?}  {result}",
            outcome.id, outcome.name, outcome.attempts, outcome.elapsed
        );
    }
    println!("\nbatch took {:.1?}", started.elapsed());

    // The same plan as a stream: each outcome as its call ends, for a caller that shows
    // progress (the agent session finishes a turn's calls this way).
    println!("\nagain, as each call ends:");
    let options = BatchOptions::new();
    let started = tokio::time::Instant::now();
    let mut ended = std::pin::pin!(manager.execute_workflow_stream(&workflow, &options));
    while let Some((index, outcome)) = ended.next().await {
        let how = if outcome.failed() { "failed" } else { "ok" };
        println!(
            "{:>7.1?}  {:<8} {how}",
            started.elapsed(),
            requests[index].id
        );
    }
}
