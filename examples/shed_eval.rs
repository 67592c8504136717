//! Measures how well `shed` finds the right tool.
//!
//! `cargo run --release --example shed_eval -- DIR [--misses]`, where DIR holds `tools.jsonl`
//! (one tool a line: `name`, `description`, `parameters`, `category`) and `queries.jsonl`
//! (one query a line: `query`, `expected` tool names). Every tool is registered on a
//! [`ToolCallManager`] with its record as its definition, and every query is sent as a call to
//! the `shed` meta-tool with `limit` 10, exactly as a model's would be. The last line printed
//! is `R@1=… R@5=… R@10=… hit@1=… hit@5=… MRR=…`, averaged over the queries; `--misses`
//! also prints, to stderr, each query whose expected tools are not all in the top 10.
//!
//! Copied into a crate of your own, it needs `futures = "0.3"` besides the dependencies the
//! README lists.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith::async_trait;
use toolsmith::{
    Args, DEFAULT_CATEGORY, ShedResult, Tool, ToolArguments, ToolCallManager, ToolCallRequest,
    ToolCallResult, ToolDefinition, ToolError, ToolImpl,
};

#[derive(Deserialize)]
struct ToolRecord {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Option<Value>,
    #[serde(default)]
    category: String,
}

#[derive(Deserialize)]
struct QueryRecord {
    query: String,
    expected: Vec<String>,
    #[serde(default)]
    id: String,
}

/// A tool that is only its definition: the evaluation searches, it never calls.
struct RecordTool(Tool);

#[async_trait]
impl ToolImpl for RecordTool {
    fn definition(&self) -> Tool {
        self.0.clone()
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::error("an evaluation tool: not callable"))
    }
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    BufReader::new(file)
        .lines()
        .enumerate()
        .filter(|(_, line)| line.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .map(|(i, line)| {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            serde_json::from_str(&line)
                .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))
        })
        .collect()
}

fn tool_of(record: ToolRecord) -> Tool {
    let category = if record.category.trim().is_empty() {
        DEFAULT_CATEGORY.to_owned()
    } else {
        record.category
    };
    let parameters = record
        .parameters
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    Tool::SingleCommand(
        ToolDefinition::new(record.name, record.description, Args::new(parameters))
            .with_category(category),
    )
}

#[derive(Default)]
struct Metrics {
    recall: [f64; 3],
    hit: [f64; 2],
    reciprocal_rank: f64,
    queries: usize,
}

impl Metrics {
    fn add(&mut self, ranked: &[String], expected: &[String]) {
        let found_in = |k: usize| {
            expected
                .iter()
                .filter(|e| ranked.iter().take(k).any(|r| r == *e))
                .count()
        };
        for (slot, k) in [1, 5, 10].into_iter().enumerate() {
            self.recall[slot] += found_in(k) as f64 / expected.len().max(1) as f64;
        }
        for (slot, k) in [1, 5].into_iter().enumerate() {
            self.hit[slot] += f64::from(u8::from(found_in(k) > 0));
        }
        if let Some(rank) = ranked.iter().position(|r| expected.contains(r)) {
            self.reciprocal_rank += 1.0 / (rank + 1) as f64;
        }
        self.queries += 1;
    }

    fn line(&self) -> String {
        let n = self.queries.max(1) as f64;
        format!(
            "R@1={:.3} R@5={:.3} R@10={:.3} hit@1={:.3} hit@5={:.3} MRR={:.3}",
            self.recall[0] / n,
            self.recall[1] / n,
            self.recall[2] / n,
            self.hit[0] / n,
            self.hit[1] / n,
            self.reciprocal_rank / n
        )
    }
}

async fn evaluate(dir: &Path, show_misses: bool) -> Result<String, String> {
    let tools: Vec<ToolRecord> = read_jsonl(&dir.join("tools.jsonl"))?;
    let queries: Vec<QueryRecord> = read_jsonl(&dir.join("queries.jsonl"))?;
    let manager = ToolCallManager::new("shed-eval");
    let mut refused = 0;
    for record in tools {
        let name = record.name.clone();
        if let Err(err) = manager.register(Arc::new(RecordTool(tool_of(record)))) {
            eprintln!("tool '{name}' not registered: {err}");
            refused += 1;
        }
    }
    eprintln!(
        "{} tools registered ({refused} refused), {} queries",
        manager.len(),
        queries.len()
    );
    let mut metrics = Metrics::default();
    for (i, query) in queries.iter().enumerate() {
        let arguments = ToolArguments::try_from(json!({"description": query.query, "limit": 10}))
            .map_err(|e| e.to_string())?;
        let request = ToolCallRequest::new(format!("q{i}"), "shed", arguments);
        let result = manager
            .execute_one(&request)
            .await
            .map_err(|e| format!("query {}: {e}", query.id))?;
        let found: ShedResult = serde_json::from_str(&result.content.to_text())
            .map_err(|e| format!("query {}: unreadable shed result: {e}", query.id))?;
        let ranked: Vec<String> = found.tools.into_iter().map(|t| t.name).collect();
        if show_misses && !query.expected.iter().all(|e| ranked.contains(e)) {
            eprintln!(
                "MISS {}: {:?}\n  expected {:?}\n  got {:?}",
                query.id,
                query.query,
                query.expected,
                &ranked[..ranked.len().min(5)]
            );
        }
        metrics.add(&ranked, &query.expected);
    }
    Ok(metrics.line())
}

/// What the command line asks for: the data set's directory and whether to show the misses.
#[derive(Debug, PartialEq)]
pub struct Options {
    /// The directory holding `tools.jsonl` and `queries.jsonl`.
    pub dir: PathBuf,
    /// `--misses`: print each query whose expected tools are not all found.
    pub show_misses: bool,
}

const USAGE: &str = "usage: shed_eval DIR [--misses]  (DIR holds tools.jsonl and queries.jsonl)";

/// Reads the arguments after the program's name. A second directory or an option other than
/// `--misses` is refused: taken silently, the figures printed would be another set's than
/// the reader thinks.
pub fn parse_options(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut dir: Option<PathBuf> = None;
    let mut show_misses = false;
    for arg in args {
        match arg.as_str() {
            "--misses" => show_misses = true,
            option if option.starts_with("--") => {
                return Err(format!("unknown option {option:?}"));
            }
            _ => {
                if let Some(first) = &dir {
                    let first = first.display().to_string();
                    return Err(format!("one DIR a run: given {first:?} and {arg:?}"));
                }
                dir = Some(PathBuf::from(arg));
            }
        }
    }
    let dir = dir.ok_or("no DIR given")?;
    Ok(Options { dir, show_misses })
}

fn main() -> ExitCode {
    let options = match parse_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("shed_eval: {err}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match futures::executor::block_on(evaluate(&options.dir, options.show_misses)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("shed_eval: {err}");
            ExitCode::FAILURE
        }
    }
}
