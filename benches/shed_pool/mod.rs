//! The tool pools of the shed benches: the records of `shared/data/tool-retrieval/{bfcl,seal}`
//! (found through `TOOL_RETRIEVAL_DATA`, or next to the repository), each repeated under
//! varied names with a few words of other records mixed into its description; without the
//! data, records generated from a fixed word list. Queries are the sets' own, short (bfcl)
//! and long (seal) alternating.

// Each bench uses its own part of the pool.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith::{Args, Tool, ToolArguments, ToolCallResult, ToolDefinition, ToolError, ToolImpl};

/// One source record: a tool as the data set gives it.
pub struct Record {
    pub name: String,
    pub description: String,
    pub parameters: Value,
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
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self, bound: usize) -> usize {
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
pub fn sources() -> (Vec<Record>, Vec<String>) {
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

/// The tools at `range` of an endless pool: each record again and again under a varied name,
/// with a few words of other records mixed into its description so that copies are not
/// identical.
pub fn pool(records: &[Record], range: std::ops::Range<usize>) -> Vec<Tool> {
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

/// A tool that is only its definition, which it keeps and shares with the manager (as
/// `FnTool` and tools imported over MCP do): registering it costs what the manager adds.
pub struct Definition(pub Arc<Tool>);

impl Definition {
    pub fn new(tool: Tool) -> Self {
        Self(Arc::new(tool))
    }
}

#[async_trait]
impl ToolImpl for Definition {
    fn definition(&self) -> Tool {
        Tool::clone(&self.0)
    }

    fn shared_definition(&self) -> Arc<Tool> {
        Arc::clone(&self.0)
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::empty())
    }
}

/// The same tool answering with a new copy of its definition when asked, as a tool that
/// builds its definition on request does (`#[tool_fn]` tools): the manager keeps a copy of
/// its own.
pub struct BuiltOnRequest(pub Tool);

#[async_trait]
impl ToolImpl for BuiltOnRequest {
    fn definition(&self) -> Tool {
        self.0.clone()
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::empty())
    }
}
