//! The `search_context` tool: recall over the session's context stores.

use std::sync::Arc;

use toolsmith_core::{ContextHit, ContextSearch, ToolError, tool_fn};

/// The tool's name.
pub const SEARCH_CONTEXT_TOOL: &str = "search_context";

/// Hits returned when the call gives no `limit`.
pub const DEFAULT_CONTEXT_HITS: usize = 5;

/// The most hits a call may ask for.
pub const MAX_CONTEXT_HITS: usize = 50;

/// How many hits `search_context` returns: its schema carries the bounds (1 to
/// [`MAX_CONTEXT_HITS`]), so the manager refuses a call outside them before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct ContextHitLimit(#[schemars(range(min = 1, max = 50))] pub usize);

/// Renders hits as `search_context` shows them: one numbered entry per hit with its source and
/// score.
///
/// ```
/// use toolsmith::ContextHit;
/// use toolsmith::harness::tools::render_hits;
///
/// let hits = [ContextHit { source: "notes.md".into(), text: "Deploy on Fridays.".into(), score: 0.9 }];
/// assert_eq!(render_hits("deploy", &hits), "1. [notes.md] (score 0.900)\nDeploy on Fridays.");
/// ```
pub fn render_hits(query: &str, hits: &[ContextHit]) -> String {
    if hits.is_empty() {
        return format!("Nothing in the session's context matches {query:?}");
    }
    hits.iter()
        .enumerate()
        .map(|(i, hit)| {
            format!(
                "{}. [{}] (score {:.3})\n{}",
                i + 1,
                hit.source,
                hit.score,
                hit.text
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The `search_context` tool's logic. The tool is built from a session's parts (add
/// `SearchContextTool` to a session's shed) or from a store with
/// `SearchContextTool::new(context)`.
#[tool_fn(
    name = "search_context",
    category = "search",
    read_only,
    destructive = false,
    idempotent,
    description = "Recall passages from the session's context stores (documents, earlier \
                   conversation) that match a query, best first."
)]
pub async fn search_context_tool(
    #[ctx] context: Arc<dyn ContextSearch>,
    /// What to recall, in words.
    query: String,
    /// How many hits to return at most (default 5, at most 50).
    limit: Option<ContextHitLimit>,
) -> Result<String, ToolError> {
    // The schema bounds the limit; the clamp keeps a direct call (no manager) in range too.
    let limit = limit.map_or(DEFAULT_CONTEXT_HITS, |limit| {
        limit.0.clamp(1, MAX_CONTEXT_HITS)
    });
    let hits = context
        .search(&query, limit)
        .await
        .map_err(|err| ToolError::execution(SEARCH_CONTEXT_TOOL, err))?;
    Ok(render_hits(&query, &hits[..hits.len().min(limit)]))
}
