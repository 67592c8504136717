//! The `search_file` tool: a regex search over the workspace's files.

use std::sync::Arc;

use toolsmith_core::{ToolError, tool_fn};

#[cfg(doc)]
use crate::DEFAULT_MAX_MATCHES;
use crate::fs::search::quoted;
use crate::{FileSystem, MAX_SEARCHED_LINE_BYTES, SearchError, SearchQuery, SearchReport};

/// The tool's name.
pub const SEARCH_FILE_TOOL: &str = "search_file";

/// Renders a search's result as `search_file` shows it: a summary line, then one
/// `path:line: text` line per match, a note when the results were capped, one naming the
/// files that could not be searched, and one naming the ignore files not applied.
///
/// ```
/// use toolsmith::harness::{SearchMatch, SearchReport, tools::render_report};
///
/// let mut report = SearchReport::default();
/// report.matches = vec![SearchMatch { path: "src/lib.rs".into(), line: 3, text: "fn main() {}".into() }];
/// report.files_searched = 2;
/// assert_eq!(render_report("main", &report), "1 match in 1 file (2 files searched)\nsrc/lib.rs:3: fn main() {}");
/// ```
pub fn render_report(pattern: &str, report: &SearchReport) -> String {
    if report.matches.is_empty() {
        return format!(
            "No matches for {} ({} file{} searched){}{}",
            quoted(pattern),
            report.files_searched,
            plural(report.files_searched),
            unsearched_note(report),
            skipped_ignore_files_note(report),
        );
    }
    let mut files: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
    files.dedup();
    let mut text = format!(
        // Not "the first": capped on disk, which matches are found first is the parallel
        // walk's doing.
        "{} match{} in {} file{} ({} file{} searched)",
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
    text.push_str(&unsearched_note(report));
    text.push_str(&skipped_ignore_files_note(report));
    text
}

/// The note naming the files a search could not search, on a line of its own; empty when
/// there are none.
fn unsearched_note(report: &SearchReport) -> String {
    if report.files_unsearched == 0 {
        return String::new();
    }
    let mut listed = report.unsearched.join(", ");
    if report.files_unsearched > report.unsearched.len() {
        listed.push_str(", …");
    }
    format!(
        "\n[{} file{} could not be searched (unreadable, or a line over {} MiB): {listed}]",
        report.files_unsearched,
        plural(report.files_unsearched),
        MAX_SEARCHED_LINE_BYTES / (1024 * 1024),
    )
}

/// The note naming the ignore files a search did not apply, and why, on a line of its own;
/// empty when there are none.
fn skipped_ignore_files_note(report: &SearchReport) -> String {
    if report.ignore_files_skipped == 0 {
        return String::new();
    }
    let mut listed: Vec<String> = report
        .skipped_ignore_files
        .iter()
        .map(|skipped| format!("{} ({})", skipped.path, skipped.reason))
        .collect();
    if report.ignore_files_skipped > listed.len() {
        listed.push("…".to_owned());
    }
    format!(
        "\n[{} ignore file{} not applied, so what {} would leave out was searched: {}]",
        report.ignore_files_skipped,
        plural(report.ignore_files_skipped),
        if report.ignore_files_skipped == 1 {
            "it"
        } else {
            "they"
        },
        listed.join(", "),
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The `search_file` tool's logic: runs the search through `fs` and renders it. The tool is
/// `SearchFileTool::new(fs, max_matches)` ([`DEFAULT_MAX_MATCHES`] is the usual cap).
#[tool_fn(
    name = "search_file",
    category = "search",
    read_only,
    destructive = false,
    idempotent,
    description = "Search the workspace's files for lines matching a regular expression, as \
                   ripgrep does: files excluded by .gitignore, hidden files and binary files are \
                   skipped. Returns `path:line: text` lines, up to a cap (the result says when \
                   it was reached)."
)]
pub async fn search_file_tool(
    #[bind] fs: Arc<dyn FileSystem>,
    #[bind] max_matches: usize,
    /// A regular expression (Rust regex syntax), matched against each line.
    pattern: String,
    /// The directory or file to search, relative to the workspace root (default: the root).
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.toml`.
    glob: Option<String>,
) -> Result<String, ToolError> {
    let mut query = SearchQuery::new(pattern.clone()).with_max_matches(max_matches);
    query.path = path.map(Into::into);
    query.glob = glob;
    let report = fs.search(query).await.map_err(|err| match err {
        SearchError::InvalidPattern { .. } => {
            ToolError::invalid_arguments(SEARCH_FILE_TOOL, format!("/pattern: {err}"))
        }
        SearchError::InvalidGlob { .. } => {
            ToolError::invalid_arguments(SEARCH_FILE_TOOL, format!("/glob: {err}"))
        }
        other => ToolError::execution(SEARCH_FILE_TOOL, other),
    })?;
    Ok(render_report(&pattern, &report))
}
