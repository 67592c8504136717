//! Sub-agents: a parent session delegates two tasks to background children (the `agent`
//! preset), lets them run in parallel, and collects both results.
//!
//! Run with `cargo run --example subagents`. Parent and children are scripted models; the
//! children answer from their task, so the run is the same every time.

use serde_json::json;
use toolsmith::harness::ToolPreset;
use toolsmith::harness::agent::{AgentEvent, AgentSession, SubAgentConfig};
use toolsmith::harness::model::{ChatResponse, ScriptedModel, ScriptedTurn, Usage};
use toolsmith::{ToolShed, tool_fn};

/// Count the words of a text.
#[tool_fn(read_only)]
fn count_words(
    /// The text.
    text: String,
) -> usize {
    text.split_whitespace().count()
}

/// A child's model: it counts the words of its task's text with the tool, then reports.
fn child_model() -> ScriptedModel {
    let model = ScriptedModel::default();
    for _ in 0..4 {
        model.push([ScriptedTurn::respond(|request| {
            let task = request.messages[0].text().unwrap_or_default();
            let text = task.split_once(": ").map_or(task, |(_, text)| text);
            let usage = Usage::new(80, 10);
            Ok(match request.messages.last().map(|m| m.results()) {
                Some([result, ..]) => ChatResponse::text(format!(
                    "\"{text}\" has {} words",
                    result.result.content.to_text()
                ))
                .with_usage(usage),
                _ => ChatResponse::calls(vec![Ok(toolsmith::ToolCallRequest::new(
                    "count",
                    "count_words",
                    toolsmith::ToolArguments::try_from(json!({ "text": text })).unwrap(),
                ))])
                .with_usage(usage),
            })
        })]);
    }
    model
}

#[tokio::main]
async fn main() {
    let children = SubAgentConfig::new(child_model(), "child-model")
        .with_system_prompt("Do exactly the task you are given, then report in one line.")
        .with_tools(vec![std::sync::Arc::new(CountWords)])
        .with_max_children(2);

    let parent_model = ScriptedModel::new([
        // Two children at once.
        ScriptedTurn::call(
            "agent",
            json!({"command": "start", "task": "Count the words of: the quick brown fox"}),
        )
        .and_call(
            "agent",
            json!({"command": "start", "task": "Count the words of: jumps over the lazy dog today"}),
        ),
        // Collect both, waiting up to a second each.
        ScriptedTurn::call("agent", json!({"command": "result", "id": "agent-1", "wait_ms": 1000}))
            .and_call("agent", json!({"command": "result", "id": "agent-2", "wait_ms": 1000})),
        ScriptedTurn::text("Both counted: 4 and 6 words."),
    ]);
    let parent = AgentSession::builder(parent_model)
        .with_model("parent-model")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(children)))
        .with_event_handler(|event: &AgentEvent| {
            if let AgentEvent::ToolCallFinished { summary, .. } = event {
                println!("  agent -> {summary}");
            }
        })
        .build()
        .expect("the session builds");
    parent.tool_manager().activate(&["agent".into()]);

    let run = parent
        .run("Count the words of two sentences, in parallel.")
        .await
        .expect("the run ends with an answer");
    println!("\nparent's answer: {}", run.text);
    println!(
        "parent used {} tokens, its children {}",
        run.usage.total_tokens(),
        run.child_usage.total_tokens()
    );
}
