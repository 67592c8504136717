//! The `memory` tool: commands `add`, `list`, `remove` and `replace` over a [`MemoryAccess`].

use std::sync::Arc;

use toolsmith_core::{MemoryAccess, ToolError, Versioned, is_blank, tool_fn};

use crate::char_boundary::floor_char_boundary;

/// The tool's name.
pub const MEMORY_TOOL: &str = "memory";

/// The `memory` tool: its logic is one method per command, over the memory it holds.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith::harness::{InMemoryMemory, tools::MemoryTool};
/// use serde_json::json;
///
/// # futures::executor::block_on(async {
/// let manager = ToolCallManager::new("demo");
/// manager.register(Arc::new(MemoryTool::new(Arc::new(InMemoryMemory::new())))).unwrap();
/// let call = ToolCallRequest::new("1", "memory",
///     ToolArguments::try_from(json!({"command": "add", "text": "likes tea"})).unwrap());
/// let result = manager.execute_one(&call).await.unwrap();
/// assert_eq!(result.content.to_text(), "Remembered fact 1 (memory version 1)");
/// # });
/// ```
#[derive(Clone)]
pub struct MemoryTool {
    memory: Arc<dyn MemoryAccess>,
}

impl std::fmt::Debug for MemoryTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTool")
            .field("version", &self.memory.version())
            .finish()
    }
}

/// The most bytes of text a fact may hold (4 KiB), as `add` and `replace` take it: such a
/// fact fits whole in what `list` shows (16 KiB) even with its lines indented there (a line
/// of one character takes five bytes listed), so a fact the model writes is one it can read
/// back whole; three of a few lines each fit together.
pub const MAX_FACT_BYTES: usize = 4 * 1024;

/// How many ids an unknown id's error lists: the message goes to the model, whatever the
/// memory holds.
const MAX_LISTED_IDS: usize = 20;

/// How many bytes of facts `list` shows: the result goes into the conversation.
const MAX_LISTED_BYTES: usize = 16 * 1024;

/// The fewest bytes of a fact's text `list` shows cut: with less room left, the fact is
/// counted among those not shown.
const MIN_CUT_FACT_BYTES: usize = 256;

fn failed(err: impl std::fmt::Display) -> ToolError {
    ToolError::execution(MEMORY_TOOL, err)
}

/// `text` as a fact: refused with nothing visible in it (spaces, zero-width characters), as
/// such a fact would take an id and a place in every list while saying nothing, and refused
/// longer than [`MAX_FACT_BYTES`].
fn fact_text(text: String) -> Result<String, ToolError> {
    if is_blank(&text) {
        return Err(ToolError::invalid_arguments(
            MEMORY_TOOL,
            "/text: the fact is empty; write it as one self-contained statement",
        ));
    }
    if text.len() > MAX_FACT_BYTES {
        return Err(ToolError::invalid_arguments(
            MEMORY_TOOL,
            format!(
                "/text: the fact is {} bytes, more than the {MAX_FACT_BYTES} a fact may hold; \
                 write it shorter, or as several facts",
                text.len()
            ),
        ));
    }
    Ok(text)
}

impl MemoryTool {
    /// `memory` over `memory`.
    pub fn new(memory: Arc<dyn MemoryAccess>) -> Self {
        Self { memory }
    }
}

// One command per method, over the memory the tool holds; the doc comment below is the
// group's description, what the model reads. It is true of a session's own memory and of
// one kept across sessions or shared (`FileMemory`, a clone given to several sessions).
/// Your memory: facts kept to use later, each with an id. It may be kept across sessions
/// or shared with other agents, so it can hold facts you did not add and change between
/// your calls.
#[tool_fn(name = "memory", category = "memory")]
impl MemoryTool {
    /// Remember a new working fact; returns its id.
    pub async fn add(
        &self,
        /// The fact to remember, one self-contained statement (at most 4096 bytes).
        text: String,
    ) -> Result<String, ToolError> {
        let added = self.memory.add(fact_text(text)?).await.map_err(failed)?;
        Ok(format!(
            "Remembered fact {} (memory version {})",
            added.value.id, added.version
        ))
    }

    /// List the facts remembered, with their ids, oldest first (a fact's lines after its
    /// first indented).
    #[command(read_only)]
    pub async fn list(&self) -> Result<String, ToolError> {
        // The facts and the version read together: a write landing between two reads
        // would show these facts under a version that counts a fact not among them.
        let Versioned {
            value: facts,
            version,
        } = self.memory.facts_with_version().await.map_err(failed)?;
        if facts.is_empty() {
            return Ok(format!("The memory is empty (memory version {version})"));
        }
        let mut listed = String::new();
        for (shown, fact) in facts.iter().enumerate() {
            let head = format!("{}: ", fact.id);
            // A fact's lines after its first are indented: as they are, a line of it such as
            // `1: build` would read as fact 1.
            let text = fact.text.lines().collect::<Vec<_>>().join("\n    ");
            let line = format!("{head}{text}\n");
            let room = MAX_LISTED_BYTES.saturating_sub(listed.len());
            if line.len() > room {
                // The fact that does not fit is shown cut where there is room for some of it:
                // skipped, one long fact would hide itself and every fact after it, the
                // whole list when it is the first.
                let text_room = room.saturating_sub(head.len());
                let mut not_shown = facts.len() - shown;
                if text_room >= MIN_CUT_FACT_BYTES {
                    let end = floor_char_boundary(&text, text_room);
                    listed.push_str(&format!(
                        "{head}{}… (cut: the fact is {} bytes)\n",
                        &text[..end],
                        fact.text.len()
                    ));
                    not_shown -= 1;
                }
                if not_shown > 0 {
                    listed.push_str(&format!(
                        "… and {not_shown} more fact{} not shown (the list stops at \
                         {MAX_LISTED_BYTES} bytes; remove facts no longer needed)\n",
                        if not_shown == 1 { "" } else { "s" },
                    ));
                }
                break;
            }
            listed.push_str(&line);
        }
        Ok(format!(
            "{} fact{} (memory version {}):\n{}",
            facts.len(),
            if facts.len() == 1 { "" } else { "s" },
            version,
            listed.trim_end()
        ))
    }

    /// Forget a fact by its id.
    #[command(destructive)]
    pub async fn remove(
        &self,
        /// The id of the fact to forget.
        id: u64,
    ) -> Result<String, ToolError> {
        let removed = self.memory.remove(id).await.map_err(failed)?;
        if removed.value {
            Ok(format!(
                "Forgot fact {id} (memory version {})",
                removed.version
            ))
        } else {
            Err(self.no_such_fact(id).await)
        }
    }

    /// Replace the text of a fact, by its id.
    #[command(destructive)]
    pub async fn replace(
        &self,
        /// The id of the fact to change.
        id: u64,
        /// Its new text (at most 4096 bytes).
        text: String,
    ) -> Result<String, ToolError> {
        let replaced = self
            .memory
            .replace(id, fact_text(text)?)
            .await
            .map_err(failed)?;
        if replaced.value {
            Ok(format!(
                "Replaced fact {id} (memory version {})",
                replaced.version
            ))
        } else {
            Err(self.no_such_fact(id).await)
        }
    }

    #[command(skip)]
    async fn no_such_fact(&self, id: u64) -> ToolError {
        let known = match self.memory.facts().await {
            Ok(facts) if facts.is_empty() => "the memory is empty".to_owned(),
            Ok(facts) => {
                let mut listed = facts
                    .iter()
                    .take(MAX_LISTED_IDS)
                    .map(|fact| fact.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                if facts.len() > MAX_LISTED_IDS {
                    listed.push_str(&format!(", … ({} facts in all)", facts.len()));
                }
                format!("known ids: {listed}")
            }
            Err(err) => format!("the facts could not be listed: {err}"),
        };
        failed(format!("there is no fact with id {id} ({known})"))
    }
}
