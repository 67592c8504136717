//! What a registered tool costs in memory, and what its first call costs once its schema is
//! compiled on first use.
//!
//! For pools of 10,000 and 100,000 tools (those of `shed_search`, `shed_pool/`), each in a
//! process of its own and built before measuring, every tool is registered on a new
//! `ToolCallManager`, twice over: tools that keep their definition and share it with the
//! manager (`ToolImpl::shared_definition`, as `FnTool` and tools imported over MCP do), and
//! the same tools answering with a new copy when asked (as a hand-written `ToolImpl` that
//! builds its definition when asked does), of which the manager keeps its own copy. The
//! bench prints the heap added per tool (a counting global allocator,
//! `counting_allocator/`), its peak while registering, the time registering took a tool
//! (the counting allocator's own cost included), the resident set added per tool
//! (`/proc/self/statm`) and the process's peak resident set (`VmHWM`, the pool's own tools
//! included), and the heap a first
//! `shed` search that finds nothing adds (the names its explanations compare with, kept
//! until the names change). Then, in the same process: the lexical index alone
//! (`ToolDiscovery`) and the definitions alone (a copy of each `Tool`, then each again with
//! its schema compacted, `Args::compact`), so that the rest is what the registry adds.
//!
//! Then the first call of a tool against its later calls: 300 tools of a flat schema and 300
//! of a nested one, held each way, are each called once with valid arguments (the median
//! printed), then 30 rounds more (the median round's mean printed). A copied definition's
//! first call reads its schema's text before compiling it. With them, the time to render the
//! 300 tools' declarations for OpenAI Chat (the median of 30), which reads a copied
//! definition's schemas from their text.
//!
//! Run with `cargo bench --bench shed_memory` (no criterion: one pass, a few seconds).

mod counting_allocator;
mod shed_pool;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::provider::{Declared, Provider, RenderOptions};
use toolsmith::shed::ToolDiscovery;
use toolsmith::{
    Args, Tool, ToolArguments, ToolCallManager, ToolCallRequest, ToolDefinition, ToolImpl, scheme,
};

use shed_pool::{BuiltOnRequest, Definition, pool, sources};

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
    let heap_before = counting_allocator::reset_peak();
    let resident_before = resident_bytes();
    let built = build();
    let footprint = Footprint {
        heap: counting_allocator::live_bytes().saturating_sub(heap_before),
        peak: counting_allocator::peak_bytes().saturating_sub(heap_before),
        resident: resident_bytes().saturating_sub(resident_before),
    };
    (built, footprint)
}

/// The process's peak resident set so far, in bytes (`VmHWM` of `/proc/self/status`).
fn peak_resident_bytes() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<usize>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// How the measured tools hold their definitions.
#[derive(Clone, Copy, PartialEq)]
enum Held {
    /// Kept by the tool and shared with the manager ([`Definition`]).
    Shared,
    /// Made anew when asked; the manager keeps a copy ([`BuiltOnRequest`]).
    Copied,
}

impl Held {
    const ALL: [Held; 2] = [Held::Shared, Held::Copied];

    fn name(self) -> &'static str {
        match self {
            Held::Shared => "shared",
            Held::Copied => "copied",
        }
    }

    fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|held| held.name() == name)
    }

    fn tool(self, definition: Tool) -> Arc<dyn ToolImpl> {
        match self {
            Held::Shared => Arc::new(Definition::new(definition)),
            Held::Copied => Arc::new(BuiltOnRequest(definition)),
        }
    }
}

/// Measures one pool of `size` tools held as `held` says, in a process of its own (so that
/// the resident set is not lowered by memory an earlier measurement freed): registration
/// first, then the index alone and the definitions alone.
fn per_tool_memory(size: usize, held: Held) {
    let (records, _) = sources();
    let tools = pool(&records, 0..size);
    let pool_resident = resident_bytes();
    let started = Instant::now();
    let (manager, registered) = footprint(|| {
        let manager = ToolCallManager::new("bench");
        // Moved in: the heap counts what the manager adds to the tools it is given.
        for tool in tools {
            // A few records' names repeat once cut to 48 characters: the first stays.
            let _ = manager.register(held.tool(tool));
        }
        manager
    });
    let registering = started.elapsed();
    let count = manager.len();
    let peak_resident = peak_resident_bytes();
    // A search that finds nothing keeps the names it compared with, for the next one.
    let (found, explained) =
        footprint(|| futures::executor::block_on(manager.shed("qzxv wibblefrotz glorpnik", None)));
    assert!(found.tools.is_empty(), "the search finds nothing");
    drop(manager);
    let tools = pool(&records, 0..size);
    let (index, index_only) = footprint(|| {
        let discovery = ToolDiscovery::new();
        for tool in &tools {
            discovery.insert(tool);
        }
        discovery
    });
    drop(index);
    let (copies, definitions) = footprint(|| {
        tools
            .iter()
            .map(|t| Arc::new(t.clone()))
            .collect::<Vec<_>>()
    });
    drop(copies);
    // The same copies with their schemas kept as text (`Args::compact`), as the manager keeps
    // a definition it holds alone.
    let (compacted, compacted_definitions) = footprint(|| {
        tools
            .iter()
            .map(|t| {
                let mut copy = t.clone();
                if let Tool::SingleCommand(definition) = &mut copy {
                    definition.arguments.compact();
                }
                Arc::new(copy)
            })
            .collect::<Vec<_>>()
    });
    drop(compacted);
    println!(
        "{count} tools registered (of {size}), their definitions {}: heap {} B a tool ({} MB; peak while \
         registering {} MB; {:.1} µs a tool), resident {} B a tool ({} MB); the process's peak resident set \
         {} MB (the pool's tools, {} MB, included); the index alone {} B a tool, the \
         definitions alone {} B ({} B with their schemas compacted); then a search that finds nothing keeps {} B a tool (the \
         names it compares with)",
        held.name(),
        registered.heap / count,
        registered.heap >> 20,
        registered.peak >> 20,
        registering.as_secs_f64() * 1e6 / count as f64,
        registered.resident / count,
        registered.resident >> 20,
        peak_resident >> 20,
        pool_resident >> 20,
        index_only.heap / count,
        definitions.heap / count,
        compacted_definitions.heap / count,
        explained.heap / count,
    );
}

/// The median of `samples`.
fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn first_calls(label: &str, held: Held, schema: &Value, arguments: &Value) {
    const TOOLS: usize = 300;
    const LATER_ROUNDS: usize = 30;
    let manager = ToolCallManager::new("bench");
    let requests: Vec<ToolCallRequest> = (0..TOOLS)
        .map(|i| {
            let name = format!("{label}_{i}");
            let definition = ToolDefinition::new(&name, "A tool.", Args::new(schema.clone()));
            manager
                .register(held.tool(Tool::SingleCommand(definition)))
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
    // Rendering every tool's declaration for a provider, as a request declaring them all
    // does once a set (a copied definition's schema is read from its text each time).
    let declarations = manager.declarations(Declared::All);
    let options = RenderOptions::default();
    let mut rendering: Vec<Duration> = (0..LATER_ROUNDS)
        .map(|_| {
            let start = Instant::now();
            let rendered = Provider::OpenAiChat.render_tools(&declarations, &options);
            let spent = start.elapsed();
            black_box(rendered.expect("the tools render"));
            spent
        })
        .collect();
    let mut first: Vec<Duration> = requests.iter().map(call).collect();
    // Later calls: the mean of a round over every tool, for the median round.
    let mut later: Vec<Duration> = (0..LATER_ROUNDS)
        .map(|_| requests.iter().map(call).sum::<Duration>() / TOOLS as u32)
        .collect();
    black_box(&manager);
    println!(
        "{label} schema, definitions {}: first call {:.1} µs (median of {TOOLS} tools), later \
         calls {:.2} µs (median of {LATER_ROUNDS} rounds over them); rendering the {TOOLS} \
         declarations for OpenAI Chat {:.0} µs (median of {LATER_ROUNDS})",
        held.name(),
        median(&mut first).as_secs_f64() * 1e6,
        median(&mut later).as_secs_f64() * 1e6,
        median(&mut rendering).as_secs_f64() * 1e6,
    );
}

/// Set to a pool size, the process measures that pool alone, its tools held as
/// `HELD_VARIABLE` says (`shared` or `copied`).
const POOL_VARIABLE: &str = "SHED_MEMORY_POOL";
const HELD_VARIABLE: &str = "SHED_MEMORY_HELD";

fn main() {
    if let Some(size) = std::env::var(POOL_VARIABLE)
        .ok()
        .and_then(|s| s.parse().ok())
    {
        let held = std::env::var(HELD_VARIABLE).unwrap_or_default();
        per_tool_memory(size, Held::named(&held).expect("shared or copied"));
        return;
    }
    for size in [10_000, 100_000] {
        for held in Held::ALL {
            let status = std::process::Command::new(std::env::current_exe().expect("this bench"))
                .env(POOL_VARIABLE, size.to_string())
                .env(HELD_VARIABLE, held.name())
                .status()
                .expect("the bench runs itself");
            assert!(status.success(), "the pool of {size} failed: {status}");
        }
    }
    let flat = (
        "flat",
        scheme::object()
            .required("city", scheme::string().min_len(1))
            .optional("days", scheme::integer().minimum(1))
            .build(),
        json!({"city": "Rome", "days": 3}),
    );
    let nested = (
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
    for (label, schema, arguments) in [&flat, &nested] {
        for held in Held::ALL {
            first_calls(label, held, schema, arguments);
        }
    }
}
