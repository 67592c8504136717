//! What `benches/dispatch.rs` and its same-run peer (`benches/peers/daimon`) share, so that
//! both measure the same tool against the same baseline in the same way: the trivial `add`
//! tool as `#[tool_fn]` (a synchronous and an `async` function), the bare baseline
//! (`serde_json::from_value` into the arguments struct plus a direct call), a call through
//! `execute_one`, and the paired-ratio runner with its `--calls` mode.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use serde::Deserialize;
use serde_json::json;
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, tool_fn};

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
pub struct AddArgs {
    a: i64,
    b: i64,
}

pub fn add(args: AddArgs) -> i64 {
    args.a + args.b
}

/// A manager with the two `#[tool_fn]` tools, `add_sync` and `add_async`.
pub fn manager() -> ToolCallManager {
    let manager = ToolCallManager::new("bench");
    manager.register(Arc::new(AddSync)).expect("registers");
    manager.register(Arc::new(AddAsync)).expect("registers");
    manager
}

/// Polls `future` once, in place; every call here finishes on its first poll.
pub fn first_poll<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a trivial tool finishes on its first poll"),
    }
}

pub fn baseline_call() -> i64 {
    let value = json!({"a": black_box(20), "b": black_box(22)});
    let args: AddArgs = serde_json::from_value(value).expect("valid");
    add(args)
}

/// A model's call as a provider's parser hands it over: its id, the tool's name, the
/// arguments.
struct ParsedCall {
    id: String,
    name: String,
    arguments: serde_json::Value,
}

/// The bare baseline given what a fresh request is made from: a parsed call, whose id and
/// name are made (as parsing a provider's answer makes them) and dropped, whose name picks
/// the function, then `from_value` and the call. The fresh-request contestants do the same
/// and validate, look up, contain panics and return a result value; against this baseline
/// their ratio shows the dispatch's cost apart from making the call's strings, which any
/// dispatcher receiving a provider's call pays.
pub fn parsed_call_baseline(id: &str, tool: &str) -> Option<i64> {
    let call = ParsedCall {
        id: black_box(id).to_owned(),
        name: black_box(tool).to_owned(),
        arguments: json!({"a": black_box(20), "b": black_box(22)}),
    };
    let ParsedCall {
        id,
        name,
        arguments,
    } = call;
    let sum = match name.as_str() {
        "add_sync" | "add_async" => add(serde_json::from_value(arguments).ok()?),
        _ => return None,
    };
    black_box(&id);
    Some(sum)
}

pub fn dispatched_call(manager: &ToolCallManager, request: &mut ToolCallRequest) -> ToolCallResult {
    let value = json!({"a": black_box(20), "b": black_box(22)});
    request.arguments = ToolArguments::try_from(value).expect("an object");
    first_poll(manager.execute_one(request)).expect("valid")
}

/// Rounds of the paired measurement, and calls per timed run (per thread).
pub const ROUNDS: usize = 60;
pub const CALLS_PER_RUN: usize = 20_000;

/// `n` calls of one contestant on the calling thread. `Sync`: with more than one thread, each
/// runs the same calls at once on shared state (a manager, a registry), as a server's would.
pub type Calls<'a> = Box<dyn Fn(usize) + Sync + 'a>;

/// One contestant against the baseline: its label in the paired ratios, its name for
/// `--calls`, and its calls.
pub struct Contestant<'a> {
    pub label: &'static str,
    pub name: &'static str,
    pub calls: Calls<'a>,
}

fn baseline_calls(calls: usize) {
    for _ in 0..calls {
        black_box(baseline_call());
    }
}

/// The calls of the registered tool `tool` through `execute_one`, one request reused with
/// fresh arguments each call.
pub fn dispatched_calls<'a>(manager: &'a ToolCallManager, tool: &'static str) -> Calls<'a> {
    Box::new(move |calls| {
        let mut request = ToolCallRequest::new("call-1", tool, ToolArguments::new());
        for _ in 0..calls {
            black_box(dispatched_call(manager, &mut request));
        }
    })
}

/// A call id as short as the bench's other requests' (`call-1`).
pub const SHORT_CALL_ID: &str = "call-1";

/// A call id shaped as OpenAI's (`call_` and 24 characters; Anthropic's `toolu_` ids are 30).
pub const PROVIDER_CALL_ID: &str = "call_9xQ2mB7rT4kL8vN1pZ6wY3sD";

/// The calls of the registered tool `tool` through `execute_one`, each with a request of its
/// own made from `id` and the name, as a provider's parsed call arrives: [`SHORT_CALL_ID`],
/// or [`PROVIDER_CALL_ID`], as long as the ids OpenAI and Anthropic give (a small-string type
/// holds the first inline and not the second: see docs/PERFORMANCE.md, "Session 28").
pub fn fresh_request_calls<'a>(
    manager: &'a ToolCallManager,
    tool: &'static str,
    id: &'static str,
) -> Calls<'a> {
    Box::new(move |calls| {
        for _ in 0..calls {
            let value = json!({"a": black_box(20), "b": black_box(22)});
            let arguments = ToolArguments::try_from(value).expect("an object");
            let request = ToolCallRequest::new(black_box(id), tool, arguments);
            black_box(first_poll(manager.execute_one(&request)).expect("valid"));
        }
    })
}

/// Runs `f` `depth` frames further down the stack than it would run: a call's speed on this
/// machine depends on where its frames fall (their offsets within a page against the heap's
/// blocks, and within cache lines), by up to a tenth of a trivial call, so each round of the
/// paired measurement runs at a depth of its own and the medians are over many placements.
#[inline(never)]
fn deeper(depth: usize, f: &mut dyn FnMut()) {
    // The frame's size, with this padding, is an odd multiple of 16 bytes on x86-64, so
    // depths 0..256 place the calls at every 16-byte offset within a page.
    let padding = [0u8; 40];
    black_box(&padding);
    if depth == 0 {
        f();
    } else {
        deeper(depth - 1, f);
    }
    black_box(&padding);
}

/// Seconds for `threads` threads to make `CALLS_PER_RUN` calls each, started together, at
/// `depth` frames down their stacks (see [`deeper`]).
fn time(calls: &(dyn Fn(usize) + Sync), threads: usize, depth: usize) -> f64 {
    if threads == 1 {
        let mut elapsed = 0.0;
        deeper(depth, &mut || {
            let started = Instant::now();
            calls(CALLS_PER_RUN);
            elapsed = started.elapsed().as_secs_f64();
        });
        return elapsed;
    }
    let start = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                start.wait();
                deeper(depth, &mut || calls(CALLS_PER_RUN));
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

/// Each contestant's time over the baseline's, in rounds where each contestant's run
/// directly follows a baseline run and the contestants' order is shuffled: the median of
/// those ratios, with the quartiles. A machine whose speed drifts (a shared VM) moves both
/// sides of each ratio alike. With `threads` above one, every run is that many threads
/// calling at once (the baseline's threads share nothing; the contestants' share their state).
pub fn paired_ratios(contestants: &[Contestant<'_>], threads: usize) {
    paired_ratios_over(&baseline_calls, "the baseline", contestants, threads);
}

/// [`paired_ratios`] over the baseline `baseline`, named `baseline_label` in the heading.
pub fn paired_ratios_over(
    baseline: &(dyn Fn(usize) + Sync),
    baseline_label: &str,
    contestants: &[Contestant<'_>],
    threads: usize,
) {
    let mut ratios = vec![Vec::with_capacity(ROUNDS); contestants.len()];
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..ROUNDS {
        let mut order: Vec<usize> = (0..contestants.len()).collect();
        rng.shuffle(&mut order);
        for index in order {
            let depth = rng.usize(0..256);
            let baseline = time(baseline, threads, depth);
            let measured = time(&*contestants[index].calls, threads, depth);
            ratios[index].push(measured / baseline);
        }
    }
    println!(
        "\npaired ratios over {baseline_label} ({ROUNDS} rounds of {CALLS_PER_RUN} calls{}):",
        if threads == 1 {
            String::new()
        } else {
            format!(" on each of {threads} threads at once")
        }
    );
    for (contestant, mut ratios) in contestants.iter().zip(ratios) {
        ratios.sort_by(f64::total_cmp);
        println!(
            "  {:<30} median {:.3}×  (quartiles {:.3}× – {:.3}×)",
            contestant.label,
            ratios[ROUNDS / 2],
            ratios[ROUNDS / 4],
            ratios[3 * ROUNDS / 4],
        );
    }
}

/// `--calls <name> <n>`: only runs `n` calls of one contestant (or of `baseline`) and exits,
/// for counting instructions under `valgrind --tool=callgrind`. The difference between two
/// counts (say 100,000 and 200,000 calls) divided by the difference in calls is the cost of
/// one call, setup excluded. False when `args` has no `--calls`.
pub fn counted_calls(args: &[String], contestants: &[Contestant<'_>]) -> bool {
    let Some(at) = args.iter().position(|arg| arg == "--calls") else {
        return false;
    };
    let name = args.get(at + 1).map(String::as_str).unwrap_or_default();
    let calls: usize = args
        .get(at + 2)
        .and_then(|n| n.parse().ok())
        .expect("--calls <name> <n>");
    if name == "baseline" {
        baseline_calls(calls);
        return true;
    }
    match contestants
        .iter()
        .find(|contestant| contestant.name == name)
    {
        Some(contestant) => (contestant.calls)(calls),
        None => {
            let names: Vec<&str> = contestants.iter().map(|c| c.name).collect();
            panic!("unknown variant {name:?}: baseline or one of {names:?}")
        }
    }
    true
}
