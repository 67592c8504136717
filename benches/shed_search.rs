//! Tool search at scale: one `shed` search, and registering one tool, over pools of 1,000,
//! 10,000 and 100,000 tools; with the memory each indexed tool takes.
//!
//! The pools are made from the records in `shared/data/tool-retrieval/{bfcl,seal}` (found
//! through `TOOL_RETRIEVAL_DATA`, or next to the repository), each record repeated under
//! varied names with a few words of other records mixed into its description; without the
//! data, records are generated from a fixed word list. Queries are the sets' own queries.
//!
//! The baseline, in the same run, is a linear scan that scores every tool by the query words
//! it contains (what a search without an index does), so the ratio shows how the index
//! scales. Run with
//! `cargo bench --bench shed_search -- --warm-up-time 1 --measurement-time 3`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolsmith::shed::ToolDiscovery;
use toolsmith::{
    Args, Tool, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, ToolDefinition,
    ToolError, ToolImpl,
};

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

struct Record {
    name: String,
    description: String,
    parameters: Value,
}

fn data_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("TOOL_RETRIEVAL_DATA").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/tool-retrieval")),
        Some(PathBuf::from("/work/shared/data/tool-retrieval")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|dir| dir.join("bfcl/tools.jsonl").is_file())
}

fn read_lines(path: PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Deterministic pseudo-random numbers (xorshift), so every run builds the same pools.
struct Rng(u64);

impl Rng {
    fn next(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}

const FALLBACK_WORDS: &[&str] = &[
    "read",
    "write",
    "file",
    "weather",
    "city",
    "email",
    "send",
    "list",
    "user",
    "search",
    "image",
    "resize",
    "stock",
    "price",
    "convert",
    "unit",
    "date",
    "time",
    "calculate",
    "area",
    "triangle",
    "hotel",
    "book",
    "flight",
    "translate",
    "language",
    "account",
    "balance",
    "order",
    "product",
    "review",
    "movie",
    "song",
    "recipe",
    "distance",
    "route",
    "population",
    "country",
    "history",
    "event",
    "schedule",
    "meeting",
    "invoice",
    "tax",
];

/// The source records and queries: the data sets' if present, generated otherwise.
fn sources() -> (Vec<Record>, Vec<String>) {
    if let Some(dir) = data_dir() {
        let mut records = Vec::new();
        let mut per_set: Vec<Vec<String>> = Vec::new();
        for set in ["bfcl", "seal"] {
            let mut queries = Vec::new();
            for tool in read_lines(dir.join(set).join("tools.jsonl")) {
                records.push(Record {
                    name: tool["name"].as_str().unwrap_or("tool").to_owned(),
                    description: tool["description"].as_str().unwrap_or("").to_owned(),
                    parameters: tool["parameters"].clone(),
                });
            }
            for query in read_lines(dir.join(set).join("queries.jsonl")) {
                queries.push(query["query"].as_str().unwrap_or("").to_owned());
            }
            per_set.push(queries);
        }
        // Short (bfcl) and long (seal) queries alternate, so every sample sees the same mix.
        let longest = per_set.iter().map(Vec::len).max().unwrap_or(0);
        let queries: Vec<String> = (0..longest)
            .flat_map(|i| per_set.iter().filter_map(move |set| set.get(i).cloned()))
            .collect();
        if !records.is_empty() && !queries.is_empty() {
            return (records, queries);
        }
    }
    let mut rng = Rng(0x5eed);
    let mut words = |n: usize, sep: &str| {
        (0..n)
            .map(|_| FALLBACK_WORDS[rng.next(FALLBACK_WORDS.len())])
            .collect::<Vec<_>>()
            .join(sep)
    };
    let records = (0..2_000)
        .map(|_| Record {
            name: words(3, "_"),
            description: words(12, " "),
            parameters: json!({"type": "object", "properties": {
                words(1, ""): {"type": "string", "description": words(6, " ")},
            }}),
        })
        .collect();
    let queries = (0..500).map(|_| words(8, " ")).collect();
    (records, queries)
}

const NAME_PREFIXES: &[&str] = &[
    "", "v2_", "legacy_", "fast_", "batch_", "my", "ext_", "pro_",
];

/// The tools at `range` of an endless pool: each record again and again under a varied name, with a few words of other
/// records mixed into its description so that copies are not identical.
fn pool(records: &[Record], range: std::ops::Range<usize>) -> Vec<Tool> {
    let mut rng = Rng(0x7001 + range.start as u64);
    range
        .map(|i| {
            let record = &records[i % records.len()];
            let copy = i / records.len();
            let prefix = NAME_PREFIXES[copy % NAME_PREFIXES.len()];
            let base: String = record.name.chars().take(48).collect();
            let name = if copy == 0 {
                base
            } else {
                format!("{prefix}{base}_{copy}")
            };
            let mut description = record.description.clone();
            if copy > 0 {
                let other = &records[rng.next(records.len())].description;
                let words: Vec<&str> = other.split_whitespace().collect();
                if !words.is_empty() {
                    for _ in 0..3 {
                        description.push(' ');
                        description.push_str(words[rng.next(words.len())]);
                    }
                }
            }
            Tool::SingleCommand(ToolDefinition::new(
                name,
                description,
                Args::new(record.parameters.clone()),
            ))
        })
        .collect()
}

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

struct Definition(Tool);

#[async_trait]
impl ToolImpl for Definition {
    fn definition(&self) -> Tool {
        self.0.clone()
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::empty())
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

        // The whole `shed` call as a model makes it, at 10,000 tools: argument validation,
        // search, summaries and activation.
        if size == 10_000 {
            let manager = ToolCallManager::new("bench");
            for tool in tools {
                let _ = manager.register(Arc::new(Definition(tool)));
            }
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a runtime");
            let mut next = 0;
            group.bench_function(BenchmarkId::new("shed_call", size), |b| {
                b.iter(|| {
                    next = (next + 1) % queries.len();
                    let request = ToolCallRequest::new(
                        "b",
                        "shed",
                        ToolArguments::try_from(json!({"description": queries[next]}))
                            .expect("an object"),
                    );
                    black_box(runtime.block_on(manager.execute_one(&request)).is_ok())
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, shed_search);
criterion_main!(benches);
