//! What a registered tool costs in memory, and what its first call costs once its schema is
//! compiled on first use.
//!
//! For pools of 10,000 and 100,000 tools (those of `shed_search`, `shed_pool/`), built
//! before measuring, every tool is registered on a new `ToolCallManager`; the bench prints
//! the heap added per tool (a counting global allocator), its peak while registering, and the
//! resident set added per tool (`/proc/self/statm`). Beside it, in the same run: the lexical
//! index alone (`ToolDiscovery`) and the definitions alone (a copy of each `Tool`), so that
//! the rest is what the registry adds.
//!
//! Then the first call of a tool against its later calls: 300 tools of a flat schema and 300
//! of a nested one are each called twice with valid arguments, and the medians are printed.
//!
//! Run with `cargo bench --bench shed_memory` (no criterion: one pass, a few seconds).

mod shed_pool;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::shed::ToolDiscovery;
use toolsmith::{
    Args, Tool, ToolArguments, ToolCallManager, ToolCallRequest, ToolDefinition, scheme,
};

use shed_pool::{Definition, pool, sources};

/// Counts live heap bytes, and the most live at once since the last reset.
struct CountingAllocator;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static PEAK_BYTES: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE_BYTES.fetch_add(size, Ordering::Relaxed) + size;
    PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: defers to the system allocator; only adds bookkeeping.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: same layout, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same pointer and layout, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size);
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The resident set, in bytes (`/proc/self/statm`, second field, in pages of 4 KiB).
fn resident_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Heap and resident set added by `build`, and the heap's peak above where it started; what
/// `build` returns is kept alive until both are read.
struct Footprint {
    heap: usize,
    peak: usize,
    resident: usize,
}

fn footprint<T>(build: impl FnOnce() -> T) -> (T, Footprint) {
    let heap_before = LIVE_BYTES.load(Ordering::Relaxed);
    PEAK_BYTES.store(heap_before, Ordering::Relaxed);
    let resident_before = resident_bytes();
    let built = build();
    let footprint = Footprint {
        heap: LIVE_BYTES
            .load(Ordering::Relaxed)
            .saturating_sub(heap_before),
        peak: PEAK_BYTES
            .load(Ordering::Relaxed)
            .saturating_sub(heap_before),
        resident: resident_bytes().saturating_sub(resident_before),
    };
    (built, footprint)
}

fn per_tool_memory() {
    let (records, _) = sources();
    for size in [10_000, 100_000] {
        let tools = pool(&records, 0..size);
        let (copies, definitions) = footprint(|| {
            tools
                .iter()
                .map(|t| Arc::new(t.clone()))
                .collect::<Vec<_>>()
        });
        drop(copies);
        let (index, index_only) = footprint(|| {
            let discovery = ToolDiscovery::new();
            for tool in &tools {
                discovery.insert(tool);
            }
            discovery
        });
        drop(index);
        let (manager, registered) = footprint(|| {
            let manager = ToolCallManager::new("bench");
            for tool in tools {
                // A few records' names repeat once cut to 48 characters: the first stays.
                let _ = manager.register(Arc::new(Definition(tool)));
            }
            manager
        });
        let count = manager.len();
        println!(
            "{count} tools registered (of {size}): heap {} B a tool (peak while registering {} MB), \
             resident {} B a tool ({} MB); of which the index alone {} B, the definitions \
             alone {} B",
            registered.heap / count,
            registered.peak >> 20,
            registered.resident / count,
            registered.resident >> 20,
            index_only.heap / count,
            definitions.heap / size,
        );
        drop(manager);
    }
}

/// The median of `samples`.
fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn first_calls(label: &str, schema: Value, arguments: Value) {
    const TOOLS: usize = 300;
    let manager = ToolCallManager::new("bench");
    let requests: Vec<ToolCallRequest> = (0..TOOLS)
        .map(|i| {
            let name = format!("{label}_{i}");
            let definition = ToolDefinition::new(&name, "A tool.", Args::new(schema.clone()));
            manager
                .register(Arc::new(Definition(Tool::SingleCommand(definition))))
                .expect("the tool registers");
            let arguments = ToolArguments::try_from(arguments.clone()).expect("an object");
            ToolCallRequest::new("c", name, arguments)
        })
        .collect();
    let call = |request: &ToolCallRequest| {
        let start = Instant::now();
        let done = futures::executor::block_on(manager.execute_one(request));
        let spent = start.elapsed();
        assert!(done.is_ok(), "{done:?}");
        spent
    };
    let mut first: Vec<Duration> = requests.iter().map(call).collect();
    let mut later: Vec<Duration> = requests.iter().map(call).collect();
    black_box(&manager);
    println!(
        "{label} schema: first call {:.1} µs, later calls {:.2} µs (medians of {TOOLS} tools)",
        median(&mut first).as_secs_f64() * 1e6,
        median(&mut later).as_secs_f64() * 1e6,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter naming neither part runs both.
    per_tool_memory();
    first_calls(
        "flat",
        scheme::object()
            .required("city", scheme::string().min_len(1))
            .optional("days", scheme::integer().minimum(1))
            .build(),
        json!({"city": "Rome", "days": 3}),
    );
    first_calls(
        "nested",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "pattern": "^[a-z ]+$"},
                "filters": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "field": {"type": "string", "enum": ["name", "date", "size"]},
                            "value": {"anyOf": [{"type": "string"}, {"type": "number"}]}
                        },
                        "required": ["field", "value"]
                    }
                }
            },
            "required": ["query"]
        }),
        json!({"query": "big files", "filters": [{"field": "size", "value": 10}]}),
    );
}
