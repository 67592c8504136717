//! The macros: a function tool, a command group, a derived argument type, a derived command
//! enum taken whole by a function (a command group), a `#[ctx]` parameter, a `#[bind]`
//! parameter and `retries = N`, with the schemas they produce, then a few calls through a
//! manager.
//!
//! Run with `cargo run --example macros`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolsmith::async_trait;
use toolsmith::{
    ArgsSchema, ContextHit, ContextSearch, MemoryAccess, MemoryFact, ServiceError, SessionParts,
    SessionState, Tool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest, ToolConstructor,
    ToolError, ToolImpl, Versioned, tool_fn,
};

// ---- A function tool ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize, JsonSchema)]
struct Conversion {
    /// The converted temperature.
    value: f64,
    /// Its unit's symbol.
    symbol: &'static str,
}

/// Converts a temperature to another unit.
///
/// # Arguments
///
/// * `value` - The temperature to convert.
/// * `to` - The unit to convert to.
#[tool_fn(category = "math", read_only, idempotent)]
async fn convert_temperature(value: f64, to: Unit) -> Result<Conversion, ToolError> {
    Ok(match to {
        Unit::Celsius => Conversion {
            value: (value - 32.0) * 5.0 / 9.0,
            symbol: "°C",
        },
        Unit::Fahrenheit => Conversion {
            value: value * 9.0 / 5.0 + 32.0,
            symbol: "°F",
        },
    })
}

// ---- A command group ----

#[derive(Default)]
struct Todo {
    items: Mutex<Vec<String>>,
}

/// A to-do list.
#[tool_fn(name = "todo", category = "productivity")]
impl Todo {
    /// Add an item to the list.
    async fn add(
        &self,
        /** What to do. */
        item: String,
    ) -> String {
        let mut items = self.items.lock().unwrap();
        items.push(item);
        format!("item #{} added", items.len() - 1)
    }

    /// Mark an item done, removing it.
    #[command(destructive)]
    fn done(
        &self,
        /** The item's number. */
        index: usize,
    ) -> Result<String, String> {
        let mut items = self.items.lock().unwrap();
        if index < items.len() {
            Ok(format!("done: {}", items.remove(index)))
        } else {
            Err(format!("there is no item #{index}"))
        }
    }

    /// List the items.
    #[command(read_only)]
    fn list(&self) -> Vec<String> {
        self.items.lock().unwrap().clone()
    }
}

// ---- A derived argument type ----

/// The arguments of a hand-written search tool.
#[derive(toolsmith::ToolArgs)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// At most this many hits.
    #[arg(default)]
    limit: u32,
}

// ---- A derived command enum, taken whole: a command group ----

/// The commands of the playlist tool: each variant a command, its fields the arguments, and
/// `#[command(..)]` its hints (which the function's own fill where a variant gives none).
#[derive(toolsmith::ToolArgs, Debug)]
enum PlaylistCommand {
    /// Add a song at the end.
    Add {
        /// The song's title.
        title: String,
    },
    /// Remove a song by its position.
    Remove {
        /// Its position, from 0.
        position: usize,
    },
    /// List the songs, in order.
    #[command(read_only)]
    List,
    /// Empty the playlist.
    #[command(destructive)]
    Clear,
}

/// The songs to play next, in order.
#[tool_fn(category = "music")]
async fn playlist(
    #[bind] songs: Arc<Mutex<Vec<String>>>,
    #[args] command: PlaylistCommand,
) -> Result<String, ToolError> {
    let mut songs = songs.lock().unwrap();
    Ok(match command {
        PlaylistCommand::Add { title } => {
            songs.push(title);
            match songs.len() {
                1 => "1 song queued".to_owned(),
                n => format!("{n} songs queued"),
            }
        }
        PlaylistCommand::Remove { position } if position < songs.len() => {
            format!("removed {:?}", songs.remove(position))
        }
        PlaylistCommand::Remove { position } => {
            return Err(ToolError::execution(
                "playlist",
                format!(
                    "there is no song at {position}: the playlist has {}",
                    songs.len()
                ),
            ));
        }
        PlaylistCommand::List if songs.is_empty() => "the playlist is empty".to_owned(),
        PlaylistCommand::List => songs.join(", "),
        PlaylistCommand::Clear => {
            songs.clear();
            "the playlist is empty".to_owned()
        }
    })
}

// ---- A `#[bind]` parameter: state the tool is built with ----

/// Shortens a text to at most the tool's number of characters.
#[tool_fn(category = "text", read_only)]
fn shorten(
    #[bind] max_chars: usize,
    /// The text to shorten.
    text: String,
) -> String {
    if text.chars().count() <= max_chars {
        return text;
    }
    let kept: String = text.chars().take(max_chars).collect();
    format!("{kept}…")
}

// ---- `retries = N`: the tool's own retry config ----

/// How many times `define` has been called.
static LOOKUPS: AtomicU32 = AtomicU32::new(0);

/// Defines a word, from a dictionary service that is sometimes unreachable.
#[tool_fn(category = "search", read_only, retries = 3)]
async fn define(
    /// The word to define.
    word: String,
) -> Result<String, ToolError> {
    // The first two attempts fail the way a flaky network does: those errors are retried.
    if LOOKUPS.fetch_add(1, Ordering::SeqCst) < 2 {
        return Err(ToolError::network("define", "connection reset by peer"));
    }
    Ok(format!("{word}: the day's first light"))
}

// ---- A `#[ctx]` parameter ----

/// Searches the session's documents.
#[tool_fn(category = "search")]
async fn recall(
    #[ctx] context: Arc<dyn ContextSearch>,
    /// What to look for.
    query: String,
    /// How many hits (default 3).
    limit: Option<usize>,
) -> Result<Vec<ContextHit>, ServiceError> {
    context.search(&query, limit.unwrap_or(3)).await
}

/// A stand-in for a session's document store.
struct Library;

#[async_trait]
impl ContextSearch for Library {
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        Ok((0..limit.min(2))
            .map(|i| ContextHit {
                source: format!("book-{i}"),
                text: format!("a page about {query}"),
                score: 0.9 - i as f32 * 0.1,
            })
            .collect())
    }
}

/// A stand-in for a session's memory.
struct NoMemory;

#[async_trait]
impl MemoryAccess for NoMemory {
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError> {
        Ok(Vec::new())
    }
    async fn add(&self, _text: String) -> Result<Versioned<MemoryFact>, ServiceError> {
        Err(ServiceError::new("memory", "read-only"))
    }
    async fn remove(&self, _id: u64) -> Result<Versioned<bool>, ServiceError> {
        Ok(Versioned {
            value: false,
            version: 0,
        })
    }
    async fn replace(&self, _id: u64, _text: String) -> Result<Versioned<bool>, ServiceError> {
        Ok(Versioned {
            value: false,
            version: 0,
        })
    }
    fn version(&self) -> u64 {
        0
    }
}

fn print_tool(tool: &Tool) {
    if let Some(description) = tool.group_description() {
        println!("# {} (a command group): {description}\n", tool.name());
    }
    for command in tool.commands() {
        let title = match tool {
            Tool::SingleCommand(_) => command.name.clone(),
            Tool::MultiCommands(group, _) => format!("{group} {}", command.name),
        };
        println!("## {title} ({}): {}", command.category, command.description);
        println!(
            "arguments: {}",
            serde_json::to_string_pretty(command.arguments.schema()).unwrap()
        );
        if let Some(returns) = &command.returns {
            println!("returns: {}", returns.schema());
        }
        if !command.annotations.is_empty() {
            println!(
                "annotations: {}",
                serde_json::to_string(&command.annotations).unwrap()
            );
        }
        println!();
    }
}

#[tokio::main]
async fn main() {
    // What a session gives its constructors (the ToolShed does this when it builds a session).
    let parts = SessionParts {
        session_id: "example".into(),
        context: Arc::new(Library),
        memory: Arc::new(NoMemory),
        embedder: None,
        state: SessionState::new(),
    };
    let recall: Box<dyn ToolConstructor> = Recall.into();
    let tools: Vec<Arc<dyn ToolImpl>> = vec![
        Arc::new(ConvertTemperature),
        Arc::new(Todo::default()),
        // `#[args]` with a command enum: one command per variant, the function matches.
        Arc::new(Playlist::new(Arc::default())),
        // `#[bind]`: the generated `new` takes the bound values, in parameter order.
        Arc::new(Shorten::new(12)),
        Arc::new(Define),
        recall.construct(&parts),
    ];

    let manager = ToolCallManager::new("example");
    for tool in tools {
        print_tool(&tool.definition());
        manager.register(tool).expect("a valid tool");
    }
    println!(
        "## SearchArgs (derived)\n{}\n",
        serde_json::to_string_pretty(SearchArgs::args_schema().schema()).unwrap()
    );
    let arguments = ToolArguments::try_from(json!({"query": "tides", "limit": "5"})).unwrap();
    let search: SearchArgs = ToolArgs::new("search", &arguments).parse().unwrap();
    println!("parsed: query {:?}, limit {}\n", search.query, search.limit);

    let calls = [
        (
            "convert_temperature",
            json!({"value": 100, "to": "fahrenheit"}),
        ),
        (
            "convert_temperature",
            json!({"value": "212", "to": "celsius"}),
        ),
        ("convert_temperature", json!({"value": 1, "to": "kelvin"})),
        (
            "todo",
            json!({"command": "add", "item": "water the plants"}),
        ),
        ("todo", json!({"command": "list"})),
        ("todo", json!({"command": "done", "index": 4})),
        ("todo", json!({"command": "archive"})),
        (
            "playlist",
            json!({"command": "add", "title": "Blue in Green"}),
        ),
        ("playlist", json!({"command": "remove", "position": 3})),
        ("playlist", json!({"command": "list"})),
        ("playlist", json!({"command": "clear"})),
        (
            "shorten",
            json!({"text": "A tool is what the model calls."}),
        ),
        ("recall", json!({"query": "the moon"})),
    ];
    for (i, (tool, arguments)) in calls.into_iter().enumerate() {
        let request = ToolCallRequest::new(
            format!("call-{i}"),
            tool,
            ToolArguments::try_from(arguments).expect("an object"),
        );
        match manager.execute_one(&request).await {
            Ok(result) => println!(
                "{tool} {} -> ok: {}",
                request.arguments,
                result.content.to_text()
            ),
            Err(err) => println!("{tool} {} -> error: {err}", request.arguments),
        }
    }

    // Retries apply where batches run (`execute_batch`, `execute_turn`, the agent loop).
    if let Some(config) = Define.retry_config() {
        println!(
            "\ndefine retries up to {} times, after {:?} doubling, on {:?} errors",
            config.max_retries, config.initial_backoff, config.retry_on
        );
    }
    let request = ToolCallRequest::new(
        "call-define",
        "define",
        ToolArguments::try_from(json!({"word": "dawn"})).expect("an object"),
    );
    for outcome in manager.execute_batch(&[request]).await {
        match &outcome.result {
            Ok(result) => println!(
                "define -> ok after {} attempts: {}",
                outcome.attempts,
                result.content.to_text()
            ),
            Err(err) => println!("define -> error after {} attempts: {err}", outcome.attempts),
        }
    }
}
