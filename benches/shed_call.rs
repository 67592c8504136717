//! A whole `shed` call at 10,000 tools, beside the index search it makes: how much the call
//! adds to the search (argument validation, the summaries of the tools found with their
//! schemas, the JSON result, activation).
//!
//! Criterion measures both one after the other (`shed_call/index_search/10000`,
//! `shed_call/whole_call/10000`); then the bench prints a paired measurement: the two
//! alternate, query by query, for a few thousand rounds, and their medians, 95th percentiles
//! and the ratio of the medians are printed from those samples (on a shared machine, two
//! criterion runs minutes apart do not compare, samples taken side by side do; each takes
//! its own query, so that neither runs on postings the other just read, and both take as
//! many short queries as long ones). The pool and
//! queries are those of `shed_search` (`shed_pool/`); `limit` is 10 in both.
//!
//! Run with `cargo bench --bench shed_call -- --warm-up-time 1 --measurement-time 3`.
//!
//! With `SHED_CALL_PROFILE` set, the bench instead runs 500 searches, then 500 whole calls,
//! then the same 500 calls again, each batch in a function of its own, and stops: for
//! instruction counts, e.g.
//! `SHED_CALL_PROFILE=1 valgrind --tool=callgrind target/release/deps/shed_call-… --bench`
//! and `callgrind_annotate --inclusive=yes` on `shed_call::index_searches`,
//! `shed_call::whole_calls` and `shed_call::whole_calls_again`. The first calls are the
//! first to return most of their tools (a `shed` result's summaries are rendered once per
//! registered tool, then kept); the second run returns the same tools again, as the
//! criterion and paired measurements mostly do (they go over the queries several times).

mod shed_pool;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest};

use shed_pool::{Definition, pool, sources};

const TOOLS: usize = 10_000;
const LIMIT: usize = 10;
/// A description in words no tool has (a model's question in a script the tools do not
/// use finds nothing the same way).
const NOTHING_MATCHES: &str = "qzxv wibblefrotz glorpnik snarfblat";
/// Rounds of the paired measurement (each runs one search and one whole call).
const PAIRED_ROUNDS: usize = 4_000;

struct Setup {
    manager: ToolCallManager,
    queries: Vec<String>,
    requests: Vec<ToolCallRequest>,
    runtime: tokio::runtime::Runtime,
}

fn setup() -> Setup {
    let (records, queries) = sources();
    let manager = ToolCallManager::new("bench");
    for tool in pool(&records, 0..TOOLS) {
        // A few records' names repeat once cut to 48 characters: the first stays.
        let _ = manager.register(Arc::new(Definition::new(tool)));
    }
    // Built beforehand: the JSON of a call's arguments is the provider parser's work.
    let requests = queries
        .iter()
        .map(|query| {
            let arguments = json!({"description": query, "limit": LIMIT});
            ToolCallRequest::new(
                "b",
                "shed",
                ToolArguments::try_from(arguments).expect("an object"),
            )
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    Setup {
        manager,
        queries,
        requests,
        runtime,
    }
}

fn whole_call(setup: &Setup, i: usize) -> bool {
    let call = setup.manager.execute_one(&setup.requests[i]);
    setup.runtime.block_on(call).is_ok()
}

fn index_search(setup: &Setup, i: usize) -> usize {
    let discovery = setup.manager.discovery();
    discovery.search_lexical(&setup.queries[i], LIMIT).len()
}

/// Rounds of each batch of the profiling run.
const PROFILE_ROUNDS: usize = 500;

#[inline(never)]
fn index_searches(setup: &Setup) {
    for i in 0..PROFILE_ROUNDS {
        black_box(index_search(setup, i % setup.queries.len()));
    }
}

#[inline(never)]
fn whole_calls(setup: &Setup) {
    for i in 0..PROFILE_ROUNDS {
        black_box(whole_call(setup, i % setup.requests.len()));
    }
}

/// The calls of [`whole_calls`] again, finding the tools they found (counting the calls
/// that succeed, so that the two functions differ and are not merged into one).
#[inline(never)]
fn whole_calls_again(setup: &Setup) -> usize {
    (0..PROFILE_ROUNDS)
        .filter(|i| black_box(whole_call(setup, i % setup.requests.len())))
        .count()
}

fn shed_call(c: &mut Criterion) {
    let setup = setup();
    if std::env::var_os("SHED_CALL_PROFILE").is_some() {
        index_searches(&setup);
        whole_calls(&setup);
        black_box(whole_calls_again(&setup));
        return;
    }
    let mut group = c.benchmark_group("shed_call");
    group.sample_size(30);
    let mut next = 0;
    group.bench_function(BenchmarkId::new("index_search", TOOLS), |b| {
        b.iter(|| {
            next = (next + 1) % setup.queries.len();
            black_box(index_search(&setup, next))
        })
    });
    let mut next = 0;
    group.bench_function(BenchmarkId::new("whole_call", TOOLS), |b| {
        b.iter(|| {
            next = (next + 1) % setup.requests.len();
            black_box(whole_call(&setup, next))
        })
    });
    // A call that finds nothing answers with the closest names and the categories, which
    // compares the description with every tool's name: its own row, since a handful of
    // such queries among thousands do not move the median above.
    // The same words five times over (180 bytes): a long description, whose characters
    // cover many names, so that the names it contains are found by the automaton.
    let long_nothing = format!("{NOTHING_MATCHES} ").repeat(5);
    for (label, description) in [
        ("finds_nothing", NOTHING_MATCHES),
        ("finds_nothing_long", long_nothing.as_str()),
    ] {
        let nothing = ToolCallRequest::new(
            "b",
            "shed",
            ToolArguments::try_from(json!({"description": description, "limit": LIMIT}))
                .expect("an object"),
        );
        assert!(
            setup
                .manager
                .discovery()
                .search_lexical(description, LIMIT)
                .is_empty(),
            "the query must find nothing"
        );
        group.bench_function(BenchmarkId::new(label, TOOLS), |b| {
            b.iter(|| black_box(setup.runtime.block_on(setup.manager.execute_one(&nothing))))
        });
    }
    group.finish();
    paired(&setup);
}

/// The value at quantile `q` of sorted samples.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index]
}

fn paired(setup: &Setup) {
    let mut search = Vec::with_capacity(PAIRED_ROUNDS);
    let mut call = Vec::with_capacity(PAIRED_ROUNDS);
    let queries = setup.requests.len();
    for round in 0..PAIRED_ROUNDS {
        // Each on a query of its own, so that neither finds the other's postings in cache,
        // and in turn first. Half the list apart, so that both meet short (bfcl) and long
        // (seal) queries alike: the list alternates them, and taking the two halves of a
        // pair (`2r`, `2r + 1`) gave the call two long queries for every short one.
        let (for_search, for_call) = (round % queries, (round + queries / 2) % queries);
        let mut time_search = || {
            let start = Instant::now();
            black_box(index_search(setup, for_search));
            search.push(start.elapsed());
        };
        let mut time_call = || {
            let start = Instant::now();
            black_box(whole_call(setup, for_call));
            call.push(start.elapsed());
        };
        if round % 2 == 0 {
            time_search();
            time_call();
        } else {
            time_call();
            time_search();
        }
    }
    search.sort_unstable();
    call.sort_unstable();
    let (search_median, call_median) = (quantile(&search, 0.5), quantile(&call, 0.5));
    println!(
        "paired, {PAIRED_ROUNDS} rounds, {TOOLS} tools, limit {LIMIT}: \
         index search median {:.1} µs p95 {:.1} µs; whole call median {:.1} µs p95 {:.1} µs; \
         ratio of medians {:.2}",
        search_median.as_secs_f64() * 1e6,
        quantile(&search, 0.95).as_secs_f64() * 1e6,
        call_median.as_secs_f64() * 1e6,
        quantile(&call, 0.95).as_secs_f64() * 1e6,
        call_median.as_secs_f64() / search_median.as_secs_f64(),
    );
}

criterion_group!(benches, shed_call);
criterion_main!(benches);
