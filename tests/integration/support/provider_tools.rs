//! The tools the provider tests render, call and answer: `get_weather` (with a `returns`
//! schema, so rendered strict), the `memory` command group, and `add`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::json;
use toolsmith::provider::{ParsedCall, Provider};
use toolsmith::{
    Args, FnTool, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallResult, ToolDefinition,
    ToolError, ToolImpl, scheme,
};

/// One call's outcome as results are rendered from it.
pub type Outcome = (String, String, Result<ToolCallResult, ToolError>);

pub fn get_weather() -> FnTool {
    FnTool::new(
        "get_weather",
        "Get the current weather in a city.",
        Args::new(
            scheme::object()
                .required("city", scheme::string().min_len(1).describe("City name."))
                .optional(
                    "unit",
                    scheme::string()
                        .enum_values(["celsius", "fahrenheit"])
                        .describe("Temperature unit."),
                )
                .build(),
        ),
        |args: ToolArgs<'_>| {
            // `unit` sent as null by a strict model arrives absent.
            let unit = args.arguments().get("unit").cloned();
            async move {
                let unit = match unit {
                    None => "celsius".to_owned(),
                    Some(serde_json::Value::String(unit)) => unit,
                    Some(other) => {
                        return Err(ToolError::execution(
                            "get_weather",
                            format!("unit arrived as {other}"),
                        ));
                    }
                };
                Ok(ToolCallResult::json(
                    json!({"temperature": 21.5, "unit": unit}),
                ))
            }
        },
    )
    .with_returns(Args::new(
        scheme::object()
            .required("temperature", scheme::number())
            .required("unit", scheme::string())
            .build(),
    ))
}

pub fn add() -> FnTool {
    FnTool::new(
        "add",
        "Add two integers.",
        Args::new(
            scheme::object()
                .required("a", scheme::integer())
                .required("b", scheme::integer())
                .build(),
        ),
        |args: ToolArgs<'_>| {
            let sum = args.i64("a").and_then(|a| Ok(a + args.i64("b")?));
            async move { Ok(ToolCallResult::text(sum?.to_string())) }
        },
    )
}

/// A command group: `add` remembers a fact, `remove` forgets one. Counts its runs.
#[derive(Default)]
pub struct Memory {
    pub runs: AtomicUsize,
}

#[async_trait]
impl ToolImpl for Memory {
    fn definition(&self) -> Tool {
        Tool::MultiCommands(
            "memory".into(),
            vec![
                ToolDefinition::new(
                    "add",
                    "Remember a fact.",
                    Args::new(
                        scheme::object()
                            .required("text", scheme::string().describe("The fact to remember."))
                            .build(),
                    ),
                ),
                ToolDefinition::new(
                    "remove",
                    "Forget a fact.",
                    Args::new(
                        scheme::object()
                            .required("id", scheme::integer().describe("The fact's id."))
                            .build(),
                    ),
                ),
            ],
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let args = ToolArgs::new("memory", &arguments);
        match args.str("command")? {
            "add" => Ok(ToolCallResult::text(format!(
                "Remembered: {}",
                args.str("text")?
            ))),
            "remove" => Ok(ToolCallResult::text(format!("Forgot #{}", args.i64("id")?))),
            other => Err(ToolError::invalid_arguments(
                "memory",
                format!("no command {other}"),
            )),
        }
    }
}

/// A manager with the three tools, in the order the fixtures list them.
pub fn manager() -> (ToolCallManager, Arc<Memory>) {
    let manager = ToolCallManager::new("provider-tests");
    let memory = Arc::new(Memory::default());
    manager.register(Arc::new(get_weather())).unwrap();
    manager
        .register(Arc::clone(&memory) as Arc<dyn ToolImpl>)
        .unwrap();
    manager.register(Arc::new(add())).unwrap();
    (manager, memory)
}

/// Runs every readable call through `execute_one`; a rejected call keeps its error.
pub async fn run_calls(manager: &ToolCallManager, calls: Vec<ParsedCall>) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for call in calls {
        match call {
            Ok(request) => {
                let result = manager.execute_one(&request).await;
                outcomes.push((request.id, request.name, result));
            }
            Err(rejected) => outcomes.push(rejected.into_parts()),
        }
    }
    outcomes
}

/// The fixture file `name` of `provider`.
pub fn fixture(provider: Provider, name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/providers/{}/{name}",
        env!("CARGO_MANIFEST_DIR"),
        provider.name()
    );
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

pub fn fixture_json(provider: Provider, name: &str) -> serde_json::Value {
    serde_json::from_str(&fixture(provider, name)).expect("fixtures are valid JSON")
}
