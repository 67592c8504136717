//! The `search_file` tool: a regex search over the workspace's files.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith_core::{
    Tool, ToolAnnotations, ToolArguments, ToolCallResult, ToolDefinition, ToolError, ToolImpl,
};

use crate::tools::args_schema::{args_schema, parse_args};
use crate::{DEFAULT_MAX_MATCHES, FileSystem, SearchError, SearchQuery, SearchReport};

/// The tool's name.
pub const SEARCH_FILE_TOOL: &str = "search_file";

/// The arguments of `search_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFileArgs {
    /// A regular expression (Rust regex syntax), matched against each line.
    pub pattern: String,
    /// The directory or file to search, relative to the workspace root (default: the root).
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.toml`.
    pub glob: Option<String>,
}

/// Renders a search's result as `search_file` shows it: a summary line, then one
/// `path:line: text` line per match, and a note when the results were capped.
///
/// ```
/// use toolsmith_harness::{SearchMatch, SearchReport, tools::render_report};
///
/// let report = SearchReport {
///     matches: vec![SearchMatch { path: "src/lib.rs".into(), line: 3, text: "fn main() {}".into() }],
///     files_searched: 2,
///     capped: false,
/// };
/// assert_eq!(render_report("main", &report), "1 match in 1 file (2 files searched)\nsrc/lib.rs:3: fn main() {}");
/// ```
pub fn render_report(pattern: &str, report: &SearchReport) -> String {
    if report.matches.is_empty() {
        return format!(
            "No matches for {pattern:?} ({} file{} searched)",
            report.files_searched,
            plural(report.files_searched)
        );
    }
    let mut files: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
    files.dedup();
    let mut text = format!(
        "{}{} match{} in {} file{} ({} file{} searched)",
        if report.capped { "first " } else { "" },
        report.matches.len(),
        if report.matches.len() == 1 { "" } else { "es" },
        files.len(),
        plural(files.len()),
        report.files_searched,
        plural(report.files_searched),
    );
    for found in &report.matches {
        text.push_str(&format!("\n{}:{}: {}", found.path, found.line, found.text));
    }
    if report.capped {
        text.push_str(&format!(
            "\n[results capped at {} matches; narrow the pattern, path or glob to see the rest]",
            report.matches.len()
        ));
    }
    text
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `search_file`'s logic: runs the search through `fs` and renders it.
pub async fn search_files(
    fs: &dyn FileSystem,
    max_matches: usize,
    args: SearchFileArgs,
) -> Result<String, ToolError> {
    let mut query = SearchQuery::new(args.pattern.clone()).with_max_matches(max_matches);
    query.path = args.path.map(Into::into);
    query.glob = args.glob;
    let report = fs.search(query).await.map_err(|err| match err {
        SearchError::InvalidPattern { .. } => {
            ToolError::invalid_arguments(SEARCH_FILE_TOOL, format!("/pattern: {err}"))
        }
        SearchError::InvalidGlob { .. } => {
            ToolError::invalid_arguments(SEARCH_FILE_TOOL, format!("/glob: {err}"))
        }
        other => ToolError::execution(SEARCH_FILE_TOOL, other),
    })?;
    Ok(render_report(&args.pattern, &report))
}

/// The `search_file` tool over a [`FileSystem`].
#[derive(Debug, Clone)]
pub struct SearchFileTool {
    fs: Arc<dyn FileSystem>,
    max_matches: usize,
}

impl SearchFileTool {
    /// `search_file` over `fs`, returning at most [`DEFAULT_MAX_MATCHES`] matches.
    pub fn new(fs: Arc<dyn FileSystem>) -> Self {
        Self {
            fs,
            max_matches: DEFAULT_MAX_MATCHES,
        }
    }

    /// Sets the cap on matches.
    #[must_use]
    pub fn with_max_matches(mut self, max: usize) -> Self {
        self.max_matches = max;
        self
    }
}

#[async_trait]
impl ToolImpl for SearchFileTool {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(
            ToolDefinition::new(
                SEARCH_FILE_TOOL,
                format!(
                    "Search the workspace's files for lines matching a regular expression, as \
                     ripgrep does: files excluded by .gitignore, hidden files and binary files \
                     are skipped. Returns `path:line: text` lines, at most {}.",
                    self.max_matches
                ),
                args_schema::<SearchFileArgs>(),
            )
            .with_category("search")
            .with_annotations(ToolAnnotations::read_only()),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = parse_args(SEARCH_FILE_TOOL, &arguments)?;
        search_files(&*self.fs, self.max_matches, args)
            .await
            .map(ToolCallResult::text)
    }
}
