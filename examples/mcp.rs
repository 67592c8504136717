//! MCP both ways in one process, offline: `#[tool_fn]` tools served over streamable HTTP on
//! 127.0.0.1, an `McpClient` that lists and calls them (a bad call too), and an agent session
//! that uses the remote tools as its own.
//!
//! Run with `cargo run --example mcp`.
//!
//! The same over stdio, a server in a child process (nothing of it runs here):
//!
//! - serving: in the server program's `main`, `serve_stdio(McpServer::new(manager)).await?`
//!   (stdout then carries only JSON-RPC: log to stderr); `serve_until_closed(server, read,
//!   write, JsonLimits::for_server())` does the same over any reader and writer (`serve_io`
//!   returns the running service instead of waiting for its end). The `toolsmith`
//!   command serves its presets this way: `toolsmith serve --root DIR --preset files`.
//! - consuming: `McpClient::connect(McpTransport::child(McpCommand::new("toolsmith")
//!   .args(["serve", "--preset", "files"]))).await?`, after which `client.tools()` is as
//!   below; the child never outlives its client.

use std::error::Error;
use std::io::Write;
use std::sync::Arc;

use serde_json::json;
use toolsmith::harness::agent::AgentSession;
use toolsmith::harness::mcp::{McpClient, McpHttpOptions, McpHttpServer, McpServer, McpTransport};
use toolsmith::harness::model::{ChatResponse, ScriptedModel, ScriptedTurn};
use toolsmith::{ToolArguments, ToolCallManager, ToolImpl, ToolShed, tool_fn};

/// The weather forecast for a city (made up: the example needs no network).
#[tool_fn(read_only)]
fn forecast(
    /// The city.
    city: String,
    /// How many days ahead: 0 for today.
    days_ahead: u8,
) -> String {
    let celsius = 18 + (city.len() + usize::from(days_ahead)) % 10;
    let when = match days_ahead {
        0 => "today".to_owned(),
        1 => "tomorrow".to_owned(),
        days => format!("in {days} days"),
    };
    format!("{city}, {when}: sunny, {celsius} °C")
}

/// Convert degrees Celsius to degrees Fahrenheit.
#[tool_fn(read_only, idempotent)]
fn celsius_to_fahrenheit(
    /// Degrees Celsius.
    celsius: f64,
) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}

#[tokio::main]
async fn main() {
    if let Err(error) = run(&mut std::io::stdout()).await {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

/// The whole example, writing what it shows to `out` (the tests read it from there).
pub async fn run(out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    // ---- The server: any ToolCallManager's tools, over streamable HTTP ----
    let manager = ToolCallManager::new("weather");
    manager.register(Arc::new(Forecast))?;
    manager.register(Arc::new(CelsiusToFahrenheit))?;
    // Port 0: a free port the system picks; the URL says which.
    let server =
        McpHttpServer::start(McpServer::new(Arc::new(manager)), McpHttpOptions::default()).await?;
    writeln!(out, "MCP server at {}", server.url())?;

    // ---- The client: the server's tools as local ones ----
    let client = McpClient::connect(McpTransport::http(server.url())).await?;
    let tools = client.tools();
    writeln!(out, "\nthe server's tools:")?;
    for tool in &tools {
        writeln!(
            out,
            "  {}: {}",
            tool.name(),
            tool.definition().description()
        )?;
    }

    let forecast = tools
        .iter()
        .find(|tool| tool.name() == "forecast")
        .ok_or("the server lists no `forecast` tool")?;
    let result = forecast
        .execute(ToolArguments::try_from(
            json!({"city": "Lisbon", "days_ahead": 1}),
        )?)
        .await?;
    writeln!(out, "\nforecast(Lisbon, 1) -> {}", result.content.to_text())?;

    // The server checks the arguments against the tool's schema and says what was wrong,
    // and where, without running the tool: the bridge's error is `InvalidArguments`, named
    // by the local tool, as a refusal here would be. (Called through a manager, as in the
    // session below, the bridge's copy of that schema is checked here first.)
    let wrong = forecast
        .execute(ToolArguments::try_from(
            json!({"city": "Lisbon", "days_ahead": "tomorrow"}),
        )?)
        .await;
    match wrong {
        Err(error) => writeln!(out, "forecast with bad arguments -> error: {error}")?,
        Ok(result) => writeln!(
            out,
            "forecast with bad arguments -> unexpectedly ran: {}",
            result.content.to_text()
        )?,
    }

    // ---- An agent session with the remote tools ----
    let model = ScriptedModel::new([
        ScriptedTurn::call("forecast", json!({"city": "Porto", "days_ahead": 0})),
        // The answer quotes the remote tool's result, as a model would.
        ScriptedTurn::respond(|request| {
            let result = request
                .messages
                .last()
                .and_then(|message| message.results().first())
                .map(|result| result.result.content.to_text())
                .unwrap_or_default();
            Ok(ChatResponse::text(format!("The forecast says: {result}.")))
        }),
    ]);
    let names: Vec<String> = tools.iter().map(|tool| tool.name().to_owned()).collect();
    let session = AgentSession::builder(model)
        .with_model("scripted")
        .with_toolshed(ToolShed::new().tools(tools))
        .build()?;
    // A shed offers the model only `shed`, to find tools with; these are declared at once.
    session.tool_manager().activate(&names);
    let run = session.run("What is the weather in Porto today?").await?;
    writeln!(out, "\nthe session's calls:")?;
    for call in &run.tool_calls {
        writeln!(
            out,
            "  {}({}) -> {}",
            call.name,
            call.arguments.as_value(),
            call.result.content.to_text()
        )?;
    }
    writeln!(out, "the session's answer: {}", run.text)?;

    // ---- Shut down: the client's session first, then the server ----
    client.close().await;
    server.shutdown().await?;
    writeln!(out, "\nserver shut down")?;
    Ok(())
}
