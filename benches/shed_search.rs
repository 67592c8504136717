//! Tool search at scale: one `shed` search, and registering one tool, over pools of 1,000,
//! 10,000 and 100,000 tools; with the memory each indexed tool takes.
//!
//! The pools and queries are those of `shed_pool/` (the bfcl and seal records, repeated
//! under varied names). The whole `shed` call is measured by the `shed_call` bench, and what
//! a registered tool holds by `shed_memory`.
//!
//! The baseline, in the same run, is a linear scan that scores every tool by the query words
//! it contains (what a search without an index does), so the ratio shows how the index
//! scales. Run with
//! `cargo bench --bench shed_search -- --warm-up-time 1 --measurement-time 3`.

mod shed_pool;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use toolsmith::Tool;
use toolsmith::shed::ToolDiscovery;

use shed_pool::{pool, sources};

/// Counts live heap bytes, to report memory per indexed tool.
struct CountingAllocator;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to the system allocator; only adds bookkeeping.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same layout, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same pointer and layout, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const POOLS: [usize; 3] = [1_000, 10_000, 100_000];

/// The no-index baseline: every tool's word set, scanned for each query.
struct LinearScan {
    tools: Vec<(String, HashSet<String>)>,
}

impl LinearScan {
    fn new(tools: &[Tool]) -> Self {
        let words = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect()
        };
        Self {
            tools: tools
                .iter()
                .map(|tool| {
                    let spec = tool.function_spec();
                    let mut set: HashSet<String> = words(&spec.name).into_iter().collect();
                    set.extend(words(&spec.description));
                    (spec.name, set)
                })
                .collect(),
        }
    }

    fn search(&self, query: &str, limit: usize) -> Vec<&str> {
        let query: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, &str)> = self
            .tools
            .iter()
            .map(|(name, words)| {
                (
                    query.iter().filter(|q| words.contains(*q)).count(),
                    name.as_str(),
                )
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        scored.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        scored.truncate(limit);
        scored.into_iter().map(|(_, name)| name).collect()
    }
}

fn shed_search(c: &mut Criterion) {
    let (records, queries) = sources();
    let mut group = c.benchmark_group("shed_search");
    group.sample_size(30);
    // The fixed cost of a query: analysing its text (the index holds a single tool).
    let tiny = ToolDiscovery::new();
    tiny.insert(&pool(&records, 0..1)[0]);
    let mut next = 0;
    group.bench_function("query_analysis_only", |b| {
        b.iter(|| {
            next = (next + 1) % queries.len();
            black_box(tiny.search_lexical(&queries[next], 5))
        })
    });

    for size in POOLS {
        let tools = pool(&records, 0..size);
        let before = LIVE_BYTES.load(Ordering::Relaxed);
        let discovery = ToolDiscovery::new();
        for tool in &tools {
            discovery.insert(tool);
        }
        let bytes = LIVE_BYTES.load(Ordering::Relaxed).saturating_sub(before);
        println!(
            "pool {size}: {} terms, {} bytes per indexed tool (allocator), {} (estimate)",
            discovery.vocabulary_len(),
            bytes / size,
            discovery.lexical_heap_bytes() / size
        );

        let mut next = 0;
        group.bench_function(BenchmarkId::new("search", size), |b| {
            b.iter(|| {
                next = (next + 1) % queries.len();
                black_box(discovery.search_lexical(&queries[next], 5))
            })
        });

        let scan = LinearScan::new(&tools);
        let mut next = 0;
        group.bench_function(BenchmarkId::new("baseline_linear_scan", size), |b| {
            b.iter(|| {
                next = (next + 1) % queries.len();
                black_box(scan.search(&queries[next], 5).len())
            })
        });

        // One tool registered into the populated index (timed), then removed again (not
        // timed), so the pool keeps its size.
        let extra = pool(&records, size..size + 500);
        let mut next = 0;
        group.bench_function(BenchmarkId::new("register", size), |b| {
            b.iter_custom(|iterations| {
                let mut spent = Duration::ZERO;
                for _ in 0..iterations {
                    let tool = &extra[next % extra.len()];
                    next += 1;
                    let start = Instant::now();
                    discovery.insert(black_box(tool));
                    spent += start.elapsed();
                    discovery.remove(tool.name());
                }
                spent
            })
        });
    }
    group.finish();
}

criterion_group!(benches, shed_search);
criterion_main!(benches);
