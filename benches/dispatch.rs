//! `execute_one` on a trivial validated tool against the bare baseline of
//! `serde_json::from_value` into the arguments struct plus a direct call.
//!
//! The tool (two integer arguments, returns their sum) is written four ways: with
//! `#[tool_fn]` on a plain function (the baseline's own shape: a synchronous call), with
//! `#[tool_fn]` on an `async` one, as a hand-written `ToolImpl` reading with `ToolArgs`, and
//! as an `FnTool` (a closure reading with `ToolArgs`, returning a future).
//! Every variant builds the JSON argument value inside the measured loop, and the call's
//! future is polled once in place, as an executor polls a task (each finishes on its first
//! poll). For scale, the same run also measures the floor of any validated dispatch
//! (`reference/validator_then_call`: a `jsonschema` validator compiled once for the tool, then
//! the baseline; no registry, no panic containment, no result value). Both `#[tool_fn]` tools
//! are also called with a fresh request a call (the synchronous one also with an id as long
//! as a provider's), and the synchronous tool through `execute_call` with a borrowed name, and
//! with its arguments out of the schema's order (`{"b": …, "a": …}`; models mostly follow
//! the schema's order, which validation and reading take first).
//!
//! After criterion's measurements, the bench prints paired ratios: rounds of each variant,
//! each timed right after a run of the baseline, in shuffled order, so that a machine whose
//! speed drifts (a shared VM) moves both sides of each ratio alike; then the same with two
//! threads calling at once, where the dispatched calls share one manager. Run with
//! `cargo bench --bench dispatch`; the figures are recorded in `docs/PERFORMANCE.md`.
//! Last, the fresh-request variants are paired with the baseline given the same parsed call
//! (an id and a name made and dropped, the name matched; `parsed_call_baseline`), as any
//! dispatcher of a provider's calls receives them.
//! `--calls <variant> <n>` runs only calls, for counting instructions (see `counted_calls`).
//!
//! The two `#[tool_fn]` tools, the baseline, the paired runner and `counted_calls` are in
//! `dispatch_shared/`, which the same-run peer (`benches/peers/daimon`: the same tool under
//! daimon, outside the workspace so that CI never builds it) shares.

mod dispatch_shared;

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group};
use dispatch_shared::{
    AddArgs, Calls, Contestant, PROVIDER_CALL_ID, SHORT_CALL_ID, add, baseline_call,
    dispatched_call, dispatched_calls, fresh_request_calls, parsed_call_baseline,
};
use serde_json::json;
use toolsmith::{
    Args, FnTool, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    ToolDefinition, ToolError, ToolImpl, scheme,
};

/// The hand-written tool: an `async_trait` body reading with `ToolArgs`.
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

/// The closure tool: reads with `ToolArgs`, returns a future that owns the sum.
fn add_closure() -> FnTool {
    let schema = scheme::object()
        .required("a", scheme::integer())
        .required("b", scheme::integer())
        .build();
    FnTool::new(
        "add_closure",
        "Add two integers.",
        Args::new(schema),
        |args: ToolArgs<'_>| {
            let sum = args.i64("a").and_then(|a| Ok(a + args.i64("b")?));
            async move { Ok(ToolCallResult::json(json!(sum?))) }
        },
    )
}

/// The variants measured against the baseline: a label, the name `--calls` knows the variant
/// by, and the registered tool's name.
const VARIANTS: [(&str, &str, &str); 4] = [
    ("execute_one/tool_fn_sync", "sync", "add_sync"),
    ("execute_one/tool_fn_async", "async", "add_async"),
    ("execute_one/hand_written", "hand_written", "add"),
    ("execute_one/fn_tool", "fn_tool", "add_closure"),
];

/// The label of the reference: the least any validated dispatch does (a validator compiled
/// once, then the baseline), with no registry, no panic containment and no result value.
const CACHED_VALIDATOR: &str = "reference/validator_then_call";

/// The shared manager (the two `#[tool_fn]` tools) with the hand-written and closure tools.
fn manager() -> ToolCallManager {
    let manager = dispatch_shared::manager();
    manager.register(Arc::new(Add)).expect("registers");
    manager
        .register(Arc::new(add_closure()))
        .expect("registers");
    manager
}

/// The reference, for scale in the same run: a `jsonschema` validator compiled once for the
/// tool (as frameworks cache one per tool), then the baseline's `from_value` and call. No
/// registry look-up, no panic containment, no result value: the floor of validated dispatch.
fn validated_baseline_call(validator: &jsonschema::Validator) -> Option<i64> {
    let value = json!({"a": black_box(20), "b": black_box(22)});
    if !validator.is_valid(&value) {
        return None;
    }
    let args: AddArgs = serde_json::from_value(value).ok()?;
    Some(add(args))
}

fn cached_validator() -> jsonschema::Validator {
    let schema = Add.definition().function_spec().parameters;
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn dispatch(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("baseline_from_value_and_call", |bench| {
        bench.iter(|| black_box(baseline_call()));
    });
    let validator = cached_validator();
    group.bench_function(CACHED_VALIDATOR, |bench| {
        bench.iter(|| black_box(validated_baseline_call(&validator)));
    });
    let manager = manager();
    for (label, _, tool) in VARIANTS {
        let mut request = ToolCallRequest::new("call-1", tool, ToolArguments::new());
        group.bench_function(label, |bench| {
            bench.iter(|| black_box(dispatched_call(&manager, &mut request)));
        });
    }
    group.finish();
}

/// The calls of the registered tool `tool` through `execute_call`, each with arguments of
/// its own and the tool's name borrowed (no request built), as a server that holds the name
/// in its own request makes them.
fn borrowed_calls<'a>(manager: &'a ToolCallManager, tool: &'static str) -> Calls<'a> {
    Box::new(move |calls| {
        for _ in 0..calls {
            let value = json!({"a": black_box(20), "b": black_box(22)});
            let arguments = ToolArguments::try_from(value).expect("an object");
            let call = manager.execute_call(black_box(tool), &arguments);
            black_box(dispatch_shared::first_poll(call).expect("valid"));
        }
    })
}

/// The calls of the registered tool `tool` through `execute_one`, one request reused, with
/// the arguments sent in the reverse of the schema's order (`{"b": …, "a": …}`): models mostly
/// follow the schema's order, which validation and reading take first; this is the cost of
/// the other case.
fn reordered_calls<'a>(manager: &'a ToolCallManager, tool: &'static str) -> Calls<'a> {
    Box::new(move |calls| {
        let mut request = ToolCallRequest::new("call-1", tool, ToolArguments::new());
        for _ in 0..calls {
            let value = json!({"b": black_box(22), "a": black_box(20)});
            request.arguments = ToolArguments::try_from(value).expect("an object");
            black_box(dispatch_shared::first_poll(manager.execute_one(&request)).expect("valid"));
        }
    })
}

/// Everything the contestants share (the manager and the validator are shared by threads,
/// as a server's would be).
struct Arena {
    manager: ToolCallManager,
    validator: jsonschema::Validator,
}

impl Arena {
    fn new() -> Self {
        Self {
            manager: manager(),
            validator: cached_validator(),
        }
    }

    /// The variants through `execute_one`, then the reference (`--calls reference`).
    fn contestants(&self) -> Vec<Contestant<'_>> {
        let reference = Contestant {
            label: CACHED_VALIDATOR,
            name: "reference",
            calls: Box::new(|calls| {
                for _ in 0..calls {
                    black_box(validated_baseline_call(&self.validator));
                }
            }),
        };
        VARIANTS
            .iter()
            .map(|&(label, name, tool)| Contestant {
                label,
                name,
                calls: dispatched_calls(&self.manager, tool),
            })
            .chain([
                Contestant {
                    label: "execute_one/tool_fn_sync, a fresh request a call",
                    name: "sync_fresh_request",
                    calls: fresh_request_calls(&self.manager, "add_sync", SHORT_CALL_ID),
                },
                Contestant {
                    label: "execute_one/tool_fn_async, a fresh request a call",
                    name: "async_fresh_request",
                    calls: fresh_request_calls(&self.manager, "add_async", SHORT_CALL_ID),
                },
                Contestant {
                    label: "execute_one/tool_fn_sync, a fresh request a call, a provider's id",
                    name: "sync_fresh_provider_id",
                    calls: fresh_request_calls(&self.manager, "add_sync", PROVIDER_CALL_ID),
                },
                Contestant {
                    label: "execute_one/tool_fn_sync, arguments out of order",
                    name: "sync_out_of_order",
                    calls: reordered_calls(&self.manager, "add_sync"),
                },
                Contestant {
                    label: "execute_call/tool_fn_sync, borrowed name",
                    name: "sync_borrowed_call",
                    calls: borrowed_calls(&self.manager, "add_sync"),
                },
                Contestant {
                    label: "the baseline given a parsed call",
                    name: "parsed_call_baseline",
                    calls: Box::new(|calls| {
                        for _ in 0..calls {
                            black_box(parsed_call_baseline(SHORT_CALL_ID, "add_sync"));
                        }
                    }),
                },
                reference,
            ])
            .collect()
    }

    /// The fresh-request calls against the baseline given the same parsed call (its id and
    /// name made and dropped), the id short and then a provider's.
    fn fresh_requests_over_parsed_calls(&self) {
        for (id, tools) in [
            (SHORT_CALL_ID, &["add_sync", "add_async"][..]),
            (PROVIDER_CALL_ID, &["add_sync"][..]),
        ] {
            let contestants: Vec<Contestant<'_>> = tools
                .iter()
                .map(|&tool| Contestant {
                    label: if tool == "add_sync" {
                        "execute_one/tool_fn_sync, a fresh request a call"
                    } else {
                        "execute_one/tool_fn_async, a fresh request a call"
                    },
                    name: tool,
                    calls: fresh_request_calls(&self.manager, tool, id),
                })
                .collect();
            let baseline = move |calls: usize| {
                for _ in 0..calls {
                    black_box(parsed_call_baseline(id, "add_sync"));
                }
            };
            dispatch_shared::paired_ratios_over(
                &baseline,
                &format!("the baseline given a parsed call (id {id:?})"),
                &contestants,
                1,
            );
        }
    }
}

criterion_group!(benches, dispatch);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arena = Arena::new();
    let contestants = arena.contestants();
    if dispatch_shared::counted_calls(&args, &contestants) {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Skipped when criterion only lists or tests the benches (`--list`, `--test`).
    let quick = args.iter().any(|arg| arg == "--list" || arg == "--test");
    if !quick {
        dispatch_shared::paired_ratios(&contestants, 1);
        dispatch_shared::paired_ratios(&contestants, 2);
        arena.fresh_requests_over_parsed_calls();
    }
}
