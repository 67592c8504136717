//! Quickstart: two tools written with `#[tool_fn]`, an agent session that finds them with
//! `shed`, calls them (one call wrong, then corrected), runs two calls at once, and answers.
//!
//! Run with `cargo run --example quickstart`. The model is scripted, so it runs anywhere; the
//! trace shows each request, each call and its result.
//!
//! With `OPENAI_API_KEY` (or `OPENAI_BASE_URL`, for a local OpenAI-compatible server such as
//! llama.cpp's, vLLM or Ollama) or `ANTHROPIC_API_KEY` set, the same session runs against
//! that model instead (`OPENAI_MODEL` / `ANTHROPIC_MODEL` pick the model, and
//! `ANTHROPIC_BASE_URL` another server). Set but unusable (a base URL without `http://`, say),
//! they are named in an error, and the example exits with code 2.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use toolsmith::harness::agent::{AgentEvent, AgentRun, AgentSession, AgenticError};
use toolsmith::harness::model::http::{AnthropicModel, OpenAiChatModel};
use toolsmith::harness::model::{ChatModel, ScriptedModel, ScriptedTurn, Usage};
use toolsmith::{ToolShed, tool_fn};

/// Current weather conditions for a city: temperature in °C and the sky.
#[tool_fn(category = "weather", read_only)]
async fn get_weather(
    /// The city, e.g. "Paris".
    city: String,
) -> Result<String, String> {
    match city.as_str() {
        "Paris" => Ok("18 °C, cloudy".to_owned()),
        "Rome" => Ok("24 °C, sunny".to_owned()),
        other => Err(format!("no weather station in {other}")),
    }
}

/// Convert a temperature from degrees Celsius to degrees Fahrenheit.
#[tool_fn(category = "units", read_only)]
fn to_fahrenheit(
    /// Degrees Celsius.
    celsius: f64,
) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}

/// The model's side of the conversation, scripted: what a model does on this task.
pub fn scripted_model() -> ScriptedModel {
    let usage = Usage::new(120, 20);
    ScriptedModel::new([
        // It sees only `shed`, and looks for what it needs.
        ScriptedTurn::call(
            "shed",
            json!({"description": "weather in a city and temperature conversion", "limit": 2}),
        )
        .with_usage(usage),
        // Two calls; the second names an argument wrongly.
        ScriptedTurn::call("get_weather", json!({"city": "Paris"}))
            .and_call("get_weather", json!({"town": "Rome"}))
            .with_usage(usage),
        // It reads the error and corrects itself.
        ScriptedTurn::call("get_weather", json!({"city": "Rome"})).with_usage(usage),
        // Two independent conversions in one answer: they run concurrently.
        ScriptedTurn::call("to_fahrenheit", json!({"celsius": 18}))
            .and_call("to_fahrenheit", json!({"celsius": 24}))
            .with_usage(usage),
        ScriptedTurn::text("Paris: 64.4 °F and cloudy. Rome: 75.2 °F and sunny.").with_usage(usage),
    ])
}

/// Whether the trace is in the middle of a streamed answer's line.
static ANSWERING: AtomicBool = AtomicBool::new(false);

/// Prints each event of the run as one line of a trace.
fn trace(event: &AgentEvent) {
    match event {
        AgentEvent::ModelRequest { turn, tools } => {
            println!("\n[model call {turn}] tools declared: {tools:?}");
        }
        AgentEvent::ToolCallStarted { call_id, name } => println!("  -> {name} ({call_id})"),
        AgentEvent::ToolCallFinished {
            name,
            is_error,
            summary,
            ..
        } => {
            let mark = if *is_error { "error" } else { "ok" };
            println!("  <- {name} {mark}: {summary}");
        }
        // A call the model wrote but that did not run (its arguments unreadable, its answer
        // cut off at the token limit, …): the model is told why, and reads it next turn.
        AgentEvent::ToolCallNotRun { name, summary, .. } => {
            println!("  x  {name} not run: {summary}");
        }
        // The answer as it streams: a real model sends it in pieces.
        AgentEvent::TextDelta(text) => {
            if !ANSWERING.swap(true, Ordering::Relaxed) {
                print!("  answer: ");
            }
            print!("{text}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
        }
        AgentEvent::ModelResponse { .. } if ANSWERING.swap(false, Ordering::Relaxed) => {
            println!();
        }
        _ => {}
    }
}

/// A model client, and the model to request of it.
pub type NamedModel = (Arc<dyn ChatModel>, String);

/// A real model when `var` (the environment, in `main`) names one, with the model name to
/// request; `Ok(None)` when it names none. Variables set but unusable (a base URL that is not
/// one, say) are an error naming them, for `main` to print.
pub fn model_from_env(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<NamedModel>, String> {
    // Blank counts as unset, as for the clients' own `from_env`.
    let var = |name: &str| var(name).filter(|value| !value.trim().is_empty());
    let (key, base_url) = (var("OPENAI_API_KEY"), var("OPENAI_BASE_URL"));
    if key.is_some() || base_url.is_some() {
        let mut builder = OpenAiChatModel::builder();
        if let Some(key) = key {
            builder = builder.api_key(key);
        }
        if let Some(url) = base_url {
            builder = builder.base_url(url);
        }
        let model = builder
            .build()
            .map_err(|err| format!("OPENAI_API_KEY / OPENAI_BASE_URL: {err}"))?;
        let name = var("OPENAI_MODEL").unwrap_or_else(|| "gpt-4.1-mini".to_owned());
        return Ok(Some((Arc::new(model), name)));
    }
    if let Some(key) = var("ANTHROPIC_API_KEY") {
        let mut builder = AnthropicModel::builder().api_key(key);
        if let Some(url) = var("ANTHROPIC_BASE_URL") {
            builder = builder.base_url(url);
        }
        let model = builder
            .build()
            .map_err(|err| format!("ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL: {err}"))?;
        let name = var("ANTHROPIC_MODEL").unwrap_or_else(|| "claude-sonnet-4-5".to_owned());
        return Ok(Some((Arc::new(model), name)));
    }
    Ok(None)
}

/// The session of the two tools on `model` (asking for the model `name`), asked the
/// question, its trace printed as it runs.
pub async fn ask(model: Arc<dyn ChatModel>, name: String) -> Result<AgentRun, AgenticError> {
    let session = AgentSession::builder(model)
        .with_model(name)
        .with_system_prompt("You answer questions about the weather.")
        .with_toolshed(ToolShed::new().tool(GetWeather).tool(ToFahrenheit))
        .with_event_handler(trace)
        .with_streaming(true)
        .build()?;
    let question = "What is the weather in Paris and Rome, in Fahrenheit?";
    println!("user: {question}");
    session.run(question).await
}

#[tokio::main]
async fn main() {
    let (model, name) = match model_from_env(&|name| std::env::var(name).ok()) {
        Ok(Some(named)) => named,
        Ok(None) => (
            Arc::new(scripted_model()) as Arc<dyn ChatModel>,
            "scripted".to_owned(),
        ),
        Err(err) => {
            eprintln!("quickstart: the model the environment names cannot be used: {err}");
            std::process::exit(2);
        }
    };
    println!("model: {} ({name})", model.name());
    let run = match ask(model, name).await {
        Ok(run) => run,
        Err(err) => {
            eprintln!("the run failed: {err}");
            std::process::exit(1);
        }
    };

    println!("\nfinal answer: {}", run.text);
    println!(
        "{} model calls, {} tool calls, {} input and {} output tokens",
        run.model_calls,
        run.tool_calls.len(),
        run.usage.input_tokens,
        run.usage.output_tokens
    );
}
