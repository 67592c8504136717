//! The same-run peer of `benches/dispatch.rs`: the trivial `add(a, b)` tool under daimon 0.25.0
//! (`#[daimon::tool_fn]`), dispatched the way daimon's agent loop dispatches a tool call,
//! measured in one run with toolsmith's `#[tool_fn]` tools (synchronous and `async`), each as
//! paired ratios over the same bare baseline (`serde_json::from_value` into the arguments
//! struct plus a direct call). The tools, the baseline and the paired runner are
//! `benches/dispatch_shared/`, the dispatch bench's own.
//!
//! Run, from the repository root (a crate of its own, outside the workspace, so that CI never
//! compiles daimon; release profile, as `cargo bench` builds):
//!
//! ```text
//! CARGO_TARGET_DIR=target/daimon-peer cargo run --release \
//!     --manifest-path benches/peers/daimon/Cargo.toml
//! ```
//!
//! Add `-- --calls <name> <n>` (`baseline`, `sync`, `async`, `daimon` or `daimon_registry`) to
//! run only calls, for counting instructions under `valgrind --tool=callgrind`, as the
//! dispatch bench does.
//! Before timing, it checks that both frameworks answer 42 for `{"a": 20, "b": 22}` and reject
//! a wrong-typed argument. Figures: `docs/PERFORMANCE.md`, "Validated dispatch".

#[path = "../../../dispatch_shared/mod.rs"]
#[allow(dead_code)] // `fresh_request_calls` serves the dispatch bench only
mod dispatch_shared;

use std::hint::black_box;
use std::sync::Arc;

use daimon::DaimonError;
use daimon::hooks::{ErasedAgentHook, NoOpHook};
use daimon::middleware::{MiddlewareAction, MiddlewareStack};
use daimon::tool::{ToolCall, ToolOutput, ToolRegistry, ToolRetryPolicy};
use dispatch_shared::{Calls, Contestant, dispatched_calls, first_poll};
use serde_json::json;
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest};
use tracing::Instrument;

/// Add two integers.
#[daimon::tool_fn]
async fn add(a: i64, b: i64) -> daimon::Result<ToolOutput> {
    ToolOutput::json(&(a + b))
}

/// What daimon's agent holds for dispatching tool calls, as `Agent::builder()` leaves it by
/// default: the registry (validators compiled once, as the agent's `build` does), no
/// middleware, the no-op hooks, no retry policy. Input validation is on, daimon's default.
struct DaimonDispatch {
    tools: ToolRegistry,
    middleware: MiddlewareStack,
    hooks: Arc<dyn ErasedAgentHook>,
    tool_retry_policy: Option<ToolRetryPolicy>,
}

impl DaimonDispatch {
    fn new() -> Self {
        let mut tools = ToolRegistry::new();
        tools.register(Add).expect("registers");
        tools.compile_validators();
        Self {
            tools,
            middleware: MiddlewareStack::new(),
            hooks: Arc::new(NoOpHook),
            tool_retry_policy: None,
        }
    }

    /// One call, step for step as the body of the loop over calls in daimon's
    /// `Agent::execute_tools_parallel` (src/agent/runner.rs), and then its handling of the
    /// task's result: the call cloned, the middleware, the `on_tool_call` hook,
    /// `validate_input`, the tool looked up and its retry policy resolved, a tracing span, the
    /// tool run as `execute_tool_with_retry` runs it with no policy (one attempt), and the
    /// `on_tool_result` hook. Left out: the `tokio` task each call is spawned on and joined
    /// from (its concurrency and panic containment), which needs a runtime where every other
    /// contestant is polled once in place; so this is the least daimon's dispatch does.
    async fn call(&self, call: &ToolCall) -> ToolOutput {
        let mut call = call.clone();
        match self.middleware.run_on_tool_call(&mut call).await {
            Ok(MiddlewareAction::Continue) => {}
            Ok(MiddlewareAction::ShortCircuit(response)) => {
                return ToolOutput::text(response.text());
            }
            Err(err) => return ToolOutput::error(err.to_string()),
        }
        self.hooks.on_tool_call_erased(&call).await.ok();
        if let Some(errors) = self.tools.validate_input(&call.name, &call.arguments) {
            let output = ToolOutput::error(format!(
                "Invalid arguments for tool '{}': {errors}",
                call.name
            ));
            let err = DaimonError::SchemaValidation {
                tool: call.name.clone(),
                errors,
            };
            self.hooks.on_error_erased(&err).await.ok();
            return output;
        }
        let tool = self.tools.get(&call.name).cloned();
        let per_tool_policy = tool.as_ref().and_then(|tool| tool.retry_policy());
        let agent_policy = self.tool_retry_policy.clone();
        assert!(
            per_tool_policy.or(agent_policy).is_none(),
            "one attempt: retries sleep on tokio's timer"
        );
        let span = tracing::info_span!("tool_execute", tool = %call.name, id = %call.id);
        let output = async {
            match &tool {
                Some(tool) => match tool.execute_erased(&call.arguments).await {
                    Ok(output) => output,
                    Err(err) => ToolOutput::error(err.to_string()),
                },
                None => ToolOutput::error(format!("tool '{}' not found", call.name)),
            }
        }
        .instrument(span)
        .await;
        if output.is_error {
            let err = DaimonError::ToolExecution {
                tool: call.name.clone(),
                message: output.content.clone(),
            };
            self.hooks.on_error_erased(&err).await.ok();
        } else {
            self.hooks.on_tool_result_erased(&call, &output).await.ok();
        }
        output
    }

    /// Only the registry's part of a call, as daimon's registry API reads (and as a quick
    /// comparison would measure it): `validate_input`, `get`, `execute`. Less than daimon's
    /// agent does per call (`call` above); measured beside it, to show what the rest costs.
    fn registry_call(&self, name: &str, arguments: &serde_json::Value) -> Option<ToolOutput> {
        if self.tools.validate_input(name, arguments).is_some() {
            return None;
        }
        first_poll(self.tools.get(name)?.execute_erased(arguments)).ok()
    }

    /// The calls of `add` through `registry_call`, with fresh arguments each call.
    fn registry_calls(&self) -> Calls<'_> {
        Box::new(move |calls| {
            for _ in 0..calls {
                let arguments = json!({"a": black_box(20), "b": black_box(22)});
                black_box(self.registry_call("add", &arguments));
            }
        })
    }

    /// The calls of `add` through `call`, one `ToolCall` reused with fresh arguments each call
    /// (as the toolsmith contestants reuse one request).
    fn calls(&self) -> Calls<'_> {
        Box::new(move |calls| {
            let mut call = ToolCall {
                id: "call-1".to_owned(),
                name: "add".to_owned(),
                arguments: json!({}),
            };
            for _ in 0..calls {
                call.arguments = json!({"a": black_box(20), "b": black_box(22)});
                black_box(first_poll(self.call(&call)));
            }
        })
    }
}

/// Both frameworks answer the same sum for the same arguments, and both reject a wrong-typed
/// argument before the tool runs: a bench of a broken call would measure nothing.
fn check(manager: &ToolCallManager, daimon: &DaimonDispatch) {
    let daimon_call = |arguments: serde_json::Value| {
        first_poll(daimon.call(&ToolCall {
            id: "check".to_owned(),
            name: "add".to_owned(),
            arguments,
        }))
    };
    let toolsmith_call = |tool: &str, arguments: serde_json::Value| {
        let arguments = ToolArguments::try_from(arguments).expect("an object");
        first_poll(manager.execute_one(&ToolCallRequest::new("check", tool, arguments)))
    };
    let valid = json!({"a": 20, "b": 22});
    let output = daimon_call(valid.clone());
    assert!(!output.is_error, "daimon: {}", output.content);
    assert_eq!(output.content, "42", "daimon's sum");
    let output = daimon.registry_call("add", &valid).expect("valid");
    assert_eq!(output.content, "42", "daimon's sum through the registry");
    for tool in ["add_sync", "add_async"] {
        let result = toolsmith_call(tool, valid.clone()).expect("valid");
        assert_eq!(result.content.to_text(), "42", "{tool}'s sum");
    }

    let wrong = json!({"a": "twenty", "b": 22});
    assert!(
        daimon.registry_call("add", &wrong).is_none(),
        "daimon's validation passed a string for an integer"
    );
    let output = daimon_call(wrong.clone());
    assert!(
        output.is_error && output.content.starts_with("Invalid arguments"),
        "daimon ran the tool on a wrong-typed argument: {}",
        output.content
    );
    for tool in ["add_sync", "add_async"] {
        let err = toolsmith_call(tool, wrong.clone()).expect_err("a string for an integer");
        assert!(err.to_string().contains("/a"), "{tool}: {err}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let manager = dispatch_shared::manager();
    let daimon = DaimonDispatch::new();
    check(&manager, &daimon);
    let contestants = [
        Contestant {
            label: "execute_one/tool_fn_sync",
            name: "sync",
            calls: dispatched_calls(&manager, "add_sync"),
        },
        Contestant {
            label: "execute_one/tool_fn_async",
            name: "async",
            calls: dispatched_calls(&manager, "add_async"),
        },
        Contestant {
            label: "daimon/agent_dispatch",
            name: "daimon",
            calls: daimon.calls(),
        },
        Contestant {
            label: "daimon/registry_only",
            name: "daimon_registry",
            calls: daimon.registry_calls(),
        },
    ];
    if dispatch_shared::counted_calls(&args, &contestants) {
        return;
    }
    println!("checked: both answer 42 and reject {{\"a\": \"twenty\"}}");
    dispatch_shared::paired_ratios(&contestants, 1);
    dispatch_shared::paired_ratios(&contestants, 2);
}
