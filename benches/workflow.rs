//! The execution engine: planning (`build_workflow`) on large graphs of three shapes,
//! concurrency of a batch against running the same calls one by one, and the per-call
//! overhead of `execute_batch` against `execute_one` in a loop.
//!
//! Run with `cargo bench --bench workflow -- --warm-up-time 1 --measurement-time 3`; the
//! figures are recorded in `docs/PERFORMANCE.md` under "Execution engine".

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use futures::FutureExt as _;
use toolsmith::{
    Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult,
    Workflow, scheme,
};

/// Makes a batch of `n` calls of one shape.
type MakeGraph = fn(usize) -> Vec<ToolCallRequest>;

fn request(i: usize, deps: impl IntoIterator<Item = usize>) -> ToolCallRequest {
    ToolCallRequest::new(format!("call-{i}"), "noop", ToolArguments::new())
        .depends_on(deps.into_iter().map(|d| format!("call-{d}")))
}

/// Each call depends on the one before: `n` stages of one call.
fn chain(n: usize) -> Vec<ToolCallRequest> {
    (0..n).map(|i| request(i, i.checked_sub(1))).collect()
}

/// One root, every other call depends on it: two stages.
fn fan_out(n: usize) -> Vec<ToolCallRequest> {
    (0..n).map(|i| request(i, (i > 0).then_some(0))).collect()
}

/// Each call depends on up to three random earlier calls; requests in a random order.
fn random_dag(n: usize) -> Vec<ToolCallRequest> {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let mut requests: Vec<ToolCallRequest> = (0..n)
        .map(|i| {
            let count = if i == 0 { 0 } else { rng.usize(0..=3) };
            let deps: Vec<usize> = (0..count).map(|_| rng.usize(0..i)).collect();
            request(i, deps)
        })
        .collect();
    rng.shuffle(&mut requests);
    requests
}

/// The baseline: the least any planner does, resolving every dependency id to its call
/// through a std `HashMap` of the ids.
fn resolve_ids(requests: &[ToolCallRequest]) -> Vec<usize> {
    let index: HashMap<&str, usize> = requests
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();
    requests
        .iter()
        .flat_map(|r| r.depends_on.iter().map(|d| index[d.as_str()]))
        .collect()
}

fn build_workflow(c: &mut Criterion) {
    let shapes: [(&str, MakeGraph); 3] = [
        ("chain", chain),
        ("fan_out", fan_out),
        ("random_dag", random_dag),
    ];
    for (shape, make) in shapes {
        let mut group = c.benchmark_group(format!("build_workflow/{shape}"));
        group.sample_size(10);
        for n in [1_000, 10_000, 100_000] {
            let requests = make(n);
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(
                BenchmarkId::new("build", n),
                &requests,
                |bench, requests| {
                    bench.iter(|| black_box(Workflow::build(black_box(requests)).expect("a DAG")));
                },
            );
            group.bench_with_input(
                BenchmarkId::new("baseline_resolve_ids", n),
                &requests,
                |bench, requests| bench.iter(|| black_box(resolve_ids(black_box(requests)))),
            );
        }
        group.finish();
    }
}

fn sleeper(ms: u64) -> FnTool {
    FnTool::new(
        "sleep",
        "Sleeps.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(ToolCallResult::text("slept"))
        },
    )
}

fn concurrency(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let manager = ToolCallManager::new("bench");
    manager.register(Arc::new(sleeper(20))).expect("registers");
    let requests: Vec<ToolCallRequest> = (0..100)
        .map(|i| ToolCallRequest::new(format!("call-{i}"), "sleep", ToolArguments::new()))
        .collect();

    let mut group = c.benchmark_group("concurrency_100x20ms");
    group.sample_size(10);
    manager.set_concurrency_limit(100);
    group.bench_function("execute_batch_limit_100", |bench| {
        bench.iter(|| runtime.block_on(manager.execute_batch(&requests)));
    });
    manager.set_concurrency_limit(16);
    group.bench_function("execute_batch_limit_16", |bench| {
        bench.iter(|| runtime.block_on(manager.execute_batch(&requests)));
    });
    // A fresh manager: the default limit, as a user gets it.
    let default = ToolCallManager::new("bench-default");
    default.register(Arc::new(sleeper(20))).expect("registers");
    group.bench_function("execute_batch_default_options", |bench| {
        bench.iter(|| runtime.block_on(default.execute_batch(&requests)));
    });
    group.bench_function("execute_one_sequential", |bench| {
        bench.iter(|| {
            runtime.block_on(async {
                for request in &requests {
                    black_box(manager.execute_one(request).await.expect("runs"));
                }
            })
        });
    });
    group.finish();
}

fn overhead(c: &mut Criterion) {
    let manager = ToolCallManager::new("bench");
    manager
        .register(Arc::new(FnTool::new(
            "noop",
            "Does nothing.",
            Args::new(scheme::object().build()),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("ok")) },
        )))
        .expect("registers");
    let calls = 100;
    let independent: Vec<ToolCallRequest> = (0..calls).map(|i| request(i, None)).collect();
    let chained = chain(calls);

    let mut group = c.benchmark_group("overhead_100_trivial_calls");
    group.throughput(Throughput::Elements(calls as u64));
    group.bench_function("execute_one_loop", |bench| {
        bench.iter(|| {
            for request in &independent {
                let result = manager
                    .execute_one(request)
                    .now_or_never()
                    .expect("a trivial tool finishes on its first poll");
                black_box(result.expect("runs"));
            }
        });
    });
    group.bench_function("execute_batch_independent", |bench| {
        bench.iter(|| {
            black_box(futures::executor::block_on(
                manager.execute_batch(&independent),
            ))
        });
    });
    let planned = Workflow::build(&independent).expect("a DAG");
    group.bench_function("execute_workflow_planned_independent", |bench| {
        bench.iter(|| {
            black_box(futures::executor::block_on(
                manager.execute_workflow(&planned),
            ))
        });
    });
    group.bench_function("execute_batch_chain", |bench| {
        bench.iter(|| black_box(futures::executor::block_on(manager.execute_batch(&chained))));
    });
    group.finish();
}

criterion_group!(benches, build_workflow, concurrency, overhead);

/// `cargo bench --bench workflow -- --plan chain|fan_out|random_dag N ITERATIONS` plans one
/// graph of N calls ITERATIONS times and exits, for instruction counts that a busy machine
/// cannot blur (`valgrind --tool=callgrind target/release/deps/workflow-* --plan random_dag
/// 10000 20`; per plan = difference of two iteration counts, divided).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--plan") {
        let make: MakeGraph = match args.get(at + 1).map(String::as_str) {
            Some("chain") => chain,
            Some("fan_out") => fan_out,
            _ => random_dag,
        };
        let number = |offset: usize, default: usize| {
            args.get(at + offset)
                .and_then(|n| n.parse().ok())
                .unwrap_or(default)
        };
        let requests = make(number(2, 10_000));
        for _ in 0..number(3, 10) {
            black_box(Workflow::build(black_box(&requests)).expect("a DAG"));
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
