//! The `search_context` tool: recall over the session's context stores.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith_core::{
    ContextHit, ContextSearch, Tool, ToolAnnotations, ToolArguments, ToolCallResult,
    ToolDefinition, ToolError, ToolImpl,
};

use crate::tools::args_schema::{args_schema, parse_args};

/// The tool's name.
pub const SEARCH_CONTEXT_TOOL: &str = "search_context";

/// Hits returned when the call gives no `limit`.
pub const DEFAULT_CONTEXT_HITS: usize = 5;

/// The arguments of `search_context`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchContextArgs {
    /// What to recall, in words.
    pub query: String,
    /// How many hits to return at most (default 5, at most 50).
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<usize>,
}

/// Renders hits as `search_context` shows them: one numbered entry per hit with its source and
/// score.
///
/// ```
/// use toolsmith_core::ContextHit;
/// use toolsmith_harness::tools::render_hits;
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

/// `search_context`'s logic.
pub async fn search_context(
    context: &dyn ContextSearch,
    args: SearchContextArgs,
) -> Result<String, ToolError> {
    let limit = args.limit.unwrap_or(DEFAULT_CONTEXT_HITS).clamp(1, 50);
    let hits = context
        .search(&args.query, limit)
        .await
        .map_err(|err| ToolError::execution(SEARCH_CONTEXT_TOOL, err))?;
    Ok(render_hits(&args.query, &hits[..hits.len().min(limit)]))
}

/// The `search_context` tool over a session's [`ContextSearch`].
#[derive(Clone)]
pub struct SearchContextTool {
    context: Arc<dyn ContextSearch>,
}

impl std::fmt::Debug for SearchContextTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchContextTool").finish_non_exhaustive()
    }
}

impl SearchContextTool {
    /// `search_context` over `context`.
    pub fn new(context: Arc<dyn ContextSearch>) -> Self {
        Self { context }
    }
}

#[async_trait]
impl ToolImpl for SearchContextTool {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(
            ToolDefinition::new(
                SEARCH_CONTEXT_TOOL,
                "Recall passages from the session's context stores (documents, earlier \
                 conversation) that match a query, best first.",
                args_schema::<SearchContextArgs>(),
            )
            .with_category("search")
            .with_annotations(ToolAnnotations::read_only()),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = parse_args(SEARCH_CONTEXT_TOOL, &arguments)?;
        search_context(&*self.context, args)
            .await
            .map(ToolCallResult::text)
    }
}
