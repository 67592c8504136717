//! The same tools declared to every provider format, a sample response of each read into
//! calls and run, and the results written back in that provider's format.
//!
//! Run with `cargo run --example providers`.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith::async_trait;
use toolsmith::provider::{Declared, Provider, RenderOptions, tools_prompt};
use toolsmith::{
    Args, FnTool, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallResult, ToolDefinition,
    ToolError, ToolImpl, scheme,
};

/// A command group: one function, `command` picks the command.
struct Notes;

#[async_trait]
impl ToolImpl for Notes {
    fn definition(&self) -> Tool {
        Tool::MultiCommands(
            "notes".into(),
            vec![
                ToolDefinition::new(
                    "add",
                    "Add a note.",
                    Args::new(scheme::object().required("text", scheme::string()).build()),
                ),
                ToolDefinition::new("list", "List the notes.", Args::empty()),
            ],
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = ToolArgs::new("notes", &arguments);
        match args.str("command")? {
            "add" => Ok(ToolCallResult::text(format!(
                "Noted: {}",
                args.str("text")?
            ))),
            _ => Ok(ToolCallResult::json(json!(["buy milk"]))),
        }
    }
}

fn manager() -> ToolCallManager {
    let manager = ToolCallManager::new("providers-example");
    let weather = FnTool::new(
        "get_weather",
        "Get the current weather in a city.",
        Args::new(
            scheme::object()
                .required("city", scheme::string().min_len(1).describe("City name."))
                .optional(
                    "unit",
                    scheme::string().enum_values(["celsius", "fahrenheit"]),
                )
                .build(),
        ),
        |args: ToolArgs<'_>| {
            let city = args.str("city").map(str::to_owned);
            async move {
                Ok(ToolCallResult::json(
                    json!({"city": city?, "temperature": 21.5}),
                ))
            }
        },
    )
    // A declared result schema: OpenAI and Anthropic render this tool strict.
    .with_returns(Args::new(
        scheme::object()
            .required("city", scheme::string())
            .required("temperature", scheme::number())
            .build(),
    ));
    manager.register(Arc::new(weather)).expect("registers");
    manager.register(Arc::new(Notes)).expect("registers");
    manager
}

/// What each provider might answer: the weather in Paris, a note, and a misspelt tool.
fn sample_response(provider: Provider) -> Value {
    match provider {
        Provider::OpenAiChat => {
            json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\",\"unit\":null}"}},
            {"id": "call_2", "type": "function", "function": {"name": "notes", "arguments": "{\"command\":\"add\",\"text\":\"pack an umbrella\"}"}},
            {"id": "call_3", "type": "function", "function": {"name": "get_wheather", "arguments": "{}"}}
        ]}, "finish_reason": "tool_calls"}]})
        }
        Provider::OpenAiResponses => json!({"output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\",\"unit\":null}"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "notes", "arguments": "{\"command\":\"add\",\"text\":\"pack an umbrella\"}"},
            {"type": "function_call", "id": "fc_3", "call_id": "call_3", "name": "get_wheather", "arguments": "{}"}
        ]}),
        Provider::Anthropic => json!({"role": "assistant", "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_2", "name": "notes", "input": {"command": "add", "text": "pack an umbrella"}},
            {"type": "tool_use", "id": "toolu_3", "name": "get_wheather", "input": {}}
        ]}),
        Provider::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
            {"functionCall": {"name": "notes", "args": {"command": "add", "text": "pack an umbrella"}}},
            {"functionCall": {"name": "get_wheather", "args": {}}}
        ]}}]}),
        _ => json!(
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>\n\
             <tool_call>{'name': 'notes', 'arguments': {command: 'add', text: 'pack an umbrella',}}</tool_call>\n\
             <tool_call>{\"name\": \"get_wheather\", \"arguments\": {}}</tool_call>"
        ),
    }
}

#[tokio::main]
async fn main() {
    let manager = manager();
    for provider in Provider::ALL {
        println!("==================== {provider} ====================");
        let rendered = manager
            .rendered_tools(provider, Declared::All, &RenderOptions::default())
            .expect("the tools render");
        let tools = &rendered.tools;
        println!("tools:\n{tools:#}\n");
        if provider == Provider::Text {
            println!("system prompt:\n{}\n", tools_prompt(tools));
        }

        let calls = provider
            .parse_calls(&sample_response(provider))
            .expect("a well-formed response");
        let mut results = Vec::new();
        for call in calls {
            match call {
                Ok(request) => {
                    println!("call {} {} {}", request.id, request.name, request.arguments);
                    let result = manager.execute_one(&request).await;
                    results.push((request.id, request.name, result));
                }
                Err(rejected) => results.push(rejected.into_parts()),
            }
        }
        let messages = manager.render_results(provider, &results);
        println!("\nresults:\n{:#}\n", Value::Array(messages));
    }
}
