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
//! the baseline; no registry, no panic containment, no result value).
//!
//! After criterion's measurements, the bench prints paired ratios: rounds of each variant,
//! each timed right after a run of the baseline, in shuffled order, so that a machine whose
//! speed drifts (a shared VM) moves both sides of each ratio alike; then the same with two
//! threads calling at once, where the dispatched calls share one manager. Run with
//! `cargo bench --bench dispatch`; the figures are recorded in `docs/PERFORMANCE.md`.
//! `--calls <variant> <n>` runs only calls, for counting instructions (see `counted_calls`).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group};
use serde::Deserialize;
use serde_json::json;
use toolsmith::{
    Args, FnTool, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
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

/// The variants measured against the baseline: a label and the registered tool's name.
const VARIANTS: [(&str, &str); 4] = [
    ("execute_one/tool_fn_sync", "add_sync"),
    ("execute_one/tool_fn_async", "add_async"),
    ("execute_one/hand_written", "add"),
    ("execute_one/fn_tool", "add_closure"),
];

/// The label of the reference: the least any validated dispatch does (a validator compiled
/// once, then the baseline), with no registry, no panic containment and no result value.
const CACHED_VALIDATOR: &str = "reference/validator_then_call";

fn manager() -> ToolCallManager {
    let manager = ToolCallManager::new("bench");
    manager.register(Arc::new(AddSync)).expect("registers");
    manager.register(Arc::new(AddAsync)).expect("registers");
    manager.register(Arc::new(Add)).expect("registers");
    manager
        .register(Arc::new(add_closure()))
        .expect("registers");
    manager
}

/// Polls `future` once, in place; every call here finishes on its first poll.
fn first_poll<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a trivial tool finishes on its first poll"),
    }
}

fn baseline_call() -> i64 {
    let value = json!({"a": black_box(20), "b": black_box(22)});
    let args: AddArgs = serde_json::from_value(value).expect("valid");
    add(args)
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

fn dispatched_call(manager: &ToolCallManager, request: &mut ToolCallRequest) -> ToolCallResult {
    let value = json!({"a": black_box(20), "b": black_box(22)});
    request.arguments = ToolArguments::try_from(value).expect("an object");
    first_poll(manager.execute_one(request)).expect("valid")
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
    for (label, tool) in VARIANTS {
        let mut request = ToolCallRequest::new("call-1", tool, ToolArguments::new());
        group.bench_function(label, |bench| {
            bench.iter(|| black_box(dispatched_call(&manager, &mut request)));
        });
    }
    group.finish();
}

/// Rounds of the paired measurement, and calls per timed run (per thread).
const ROUNDS: usize = 60;
const CALLS_PER_RUN: usize = 20_000;

/// What a paired run times: the baseline, a registered tool through `execute_one`, or the
/// reference.
#[derive(Clone, Copy)]
enum Contestant {
    Baseline,
    Dispatched(&'static str),
    Reference,
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

    /// `calls` calls of `contestant` on this thread.
    fn run(&self, contestant: Contestant, calls: usize) {
        match contestant {
            Contestant::Baseline => {
                for _ in 0..calls {
                    black_box(baseline_call());
                }
            }
            Contestant::Dispatched(tool) => {
                let mut request = ToolCallRequest::new("call-1", tool, ToolArguments::new());
                for _ in 0..calls {
                    black_box(dispatched_call(&self.manager, &mut request));
                }
            }
            Contestant::Reference => {
                for _ in 0..calls {
                    black_box(validated_baseline_call(&self.validator));
                }
            }
        }
    }

    /// Seconds for `threads` threads to make `CALLS_PER_RUN` calls each, started together.
    fn time(&self, contestant: Contestant, threads: usize) -> f64 {
        if threads == 1 {
            let started = Instant::now();
            self.run(contestant, CALLS_PER_RUN);
            return started.elapsed().as_secs_f64();
        }
        let start = Barrier::new(threads + 1);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    start.wait();
                    self.run(contestant, CALLS_PER_RUN);
                });
            }
            start.wait();
            let started = Instant::now();
            // The scope joins every thread before returning.
            started
        })
        .elapsed()
        .as_secs_f64()
    }
}

/// Each variant's time over the baseline's, in rounds where each variant's run directly
/// follows a baseline run and the variants' order is shuffled: the median of those ratios,
/// with the quartiles. With `threads` above one, every run is that many threads calling at
/// once (the baseline's threads share nothing; the dispatched calls share the manager).
fn paired_ratios(threads: usize) {
    let arena = Arena::new();
    let contestants: Vec<(&str, Contestant)> = VARIANTS
        .iter()
        .map(|&(label, tool)| (label, Contestant::Dispatched(tool)))
        .chain([(CACHED_VALIDATOR, Contestant::Reference)])
        .collect();
    let mut ratios = vec![Vec::with_capacity(ROUNDS); contestants.len()];
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..ROUNDS {
        let mut order: Vec<usize> = (0..contestants.len()).collect();
        rng.shuffle(&mut order);
        for index in order {
            let baseline = arena.time(Contestant::Baseline, threads);
            let measured = arena.time(contestants[index].1, threads);
            ratios[index].push(measured / baseline);
        }
    }
    println!(
        "\npaired ratios over the baseline ({ROUNDS} rounds of {CALLS_PER_RUN} calls{}):",
        if threads == 1 {
            String::new()
        } else {
            format!(" on each of {threads} threads at once")
        }
    );
    for ((label, _), mut ratios) in contestants.into_iter().zip(ratios) {
        ratios.sort_by(f64::total_cmp);
        println!(
            "  {label:<30} median {:.3}×  (quartiles {:.3}× – {:.3}×)",
            ratios[ROUNDS / 2],
            ratios[ROUNDS / 4],
            ratios[3 * ROUNDS / 4],
        );
    }
}

/// `--calls <variant> <n>`: only runs `n` calls of one variant (`baseline`, `sync`, `async`,
/// `hand_written`, `fn_tool`, or `reference`) and exits, for counting instructions under
/// `valgrind --tool=callgrind`. The difference between two counts (say 100,000 and 200,000
/// calls) divided by the difference in calls is the cost of one call, setup excluded.
fn counted_calls(args: &[String]) -> bool {
    let Some(at) = args.iter().position(|arg| arg == "--calls") else {
        return false;
    };
    let variant = args.get(at + 1).map(String::as_str).unwrap_or_default();
    let calls: usize = args
        .get(at + 2)
        .and_then(|n| n.parse().ok())
        .expect("--calls <variant> <n>");
    let contestant = match variant {
        "baseline" => Contestant::Baseline,
        "reference" => Contestant::Reference,
        "sync" => Contestant::Dispatched("add_sync"),
        "async" => Contestant::Dispatched("add_async"),
        "hand_written" => Contestant::Dispatched("add"),
        "fn_tool" => Contestant::Dispatched("add_closure"),
        other => panic!(
            "unknown variant {other:?}: baseline, reference, sync, async, hand_written or fn_tool"
        ),
    };
    Arena::new().run(contestant, calls);
    true
}

criterion_group!(benches, dispatch);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if counted_calls(&args) {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Skipped when criterion only lists or tests the benches (`--list`, `--test`).
    let quick = args.iter().any(|arg| arg == "--list" || arg == "--test");
    if !quick {
        paired_ratios(1);
        paired_ratios(2);
    }
}
