//! `execute_one` on a trivial validated tool against the bare baseline of
//! `serde_json::from_value` into the arguments struct plus a direct call.
//!
//! The tool (two integer arguments, returns their sum) is written three ways: with
//! `#[tool_fn]` on a plain function and on an `async` one (how most tools are written), and as
//! a hand-written `ToolImpl` reading with `ToolArgs`. Every variant builds the JSON argument
//! value inside the measured loop. Run with `cargo bench --bench dispatch`; the ratios of the
//! medians are recorded in `docs/PERFORMANCE.md`.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use futures::FutureExt as _;
use serde::Deserialize;
use serde_json::json;
use toolsmith::{
    Args, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolDefinition, ToolError, ToolImpl, scheme, tool_fn,
};

/// Add two integers.
#[tool_fn]
fn add_sync(a: i64, b: i64) -> i64 {
    a + b
}

/// Add two integers.
#[tool_fn]
async fn add_async(a: i64, b: i64) -> i64 {
    a + b
}

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn add(args: AddArgs) -> i64 {
    args.a + args.b
}

struct Add;

#[async_trait]
impl ToolImpl for Add {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "add",
            "Add two integers.",
            Args::new(
                scheme::object()
                    .required("a", scheme::integer())
                    .required("b", scheme::integer())
                    .build(),
            ),
        ))
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = ToolArgs::new("add", &arguments);
        Ok(ToolCallResult::json(json!(args.i64("a")? + args.i64("b")?)))
    }
}

fn dispatch(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch");

    group.bench_function("baseline_from_value_and_call", |bench| {
        bench.iter(|| {
            let value = json!({"a": black_box(20), "b": black_box(22)});
            let args: AddArgs = serde_json::from_value(value).expect("valid");
            black_box(add(args))
        });
    });

    let manager = ToolCallManager::new("bench");
    manager.register(Arc::new(AddSync)).expect("registers");
    manager.register(Arc::new(AddAsync)).expect("registers");
    manager.register(Arc::new(Add)).expect("registers");
    for (label, tool) in [
        ("execute_one/tool_fn_sync", "add_sync"),
        ("execute_one/tool_fn_async", "add_async"),
        ("execute_one/hand_written", "add"),
    ] {
        let mut request = ToolCallRequest::new("call-1", tool, ToolArguments::new());
        group.bench_function(label, |bench| {
            bench.iter(|| {
                let value = json!({"a": black_box(20), "b": black_box(22)});
                request.arguments = ToolArguments::try_from(value).expect("an object");
                let result = manager
                    .execute_one(&request)
                    .now_or_never()
                    .expect("a trivial tool finishes on its first poll");
                black_box(result.expect("valid"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
