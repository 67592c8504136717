//! The session both `benches/agent_loop.rs` (its `session-build` variant, the time to build
//! one) and `benches/session_memory.rs` (the heap one holds) measure: four `#[tool_fn]`
//! tools of a few shapes, built from a `ToolShed` as each new conversation builds its own.

use std::sync::Arc;

use toolsmith::{SessionParts, ToolCallManager, ToolImpl, ToolShed, tool_fn};

/// Add two integers.
#[tool_fn]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Search the notes for a phrase.
#[tool_fn]
async fn search_notes(
    /// The phrase.
    query: String,
    /// At most this many notes.
    limit: Option<u32>,
    /// Only notes with all these tags.
    tags: Vec<String>,
) -> Vec<String> {
    let _ = (limit, tags);
    vec![query]
}

/// When a meeting is.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Window {
    /// Its start, RFC 3339.
    start: String,
    /// Its end, RFC 3339.
    end: String,
}

/// Book a meeting.
#[tool_fn]
async fn book_meeting(
    /// What it is about.
    title: String,
    /// When.
    window: Window,
    /// Who comes.
    attendees: Vec<String>,
) -> Result<String, String> {
    Ok(format!(
        "{title} from {} to {} with {attendees:?}",
        window.start, window.end
    ))
}

/// Convert a value between units.
#[tool_fn(read_only)]
fn convert_units(
    /// The value.
    value: f64,
    /// Its unit.
    from: String,
    /// The unit wanted.
    to: String,
) -> String {
    format!("{value} {from} in {to}")
}

/// The shed of the four tools, each wrapped by `wrap` (the identity for the session as it is
/// built).
pub fn session_shed(wrap: impl Fn(Arc<dyn ToolImpl>) -> Arc<dyn ToolImpl>) -> ToolShed {
    ToolShed::new()
        .tool(wrap(Arc::new(Add)))
        .tool(wrap(Arc::new(SearchNotes)))
        .tool(wrap(Arc::new(BookMeeting)))
        .tool(wrap(Arc::new(ConvertUnits)))
}

/// The four tools, each wrapped by `wrap`, built into a session's manager.
pub fn session_tools(wrap: impl Fn(Arc<dyn ToolImpl>) -> Arc<dyn ToolImpl>) -> ToolCallManager {
    session_shed(wrap)
        .build(SessionParts::in_memory("bench"))
        .expect("the four tools make a session")
}

/// A session's manager with the four tools above: the cost of starting a conversation,
/// besides the model.
pub fn build_session_tools() -> ToolCallManager {
    session_tools(|tool| tool)
}
