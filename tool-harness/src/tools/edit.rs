//! The `edit` tool: replaces an exact, unique piece of a text file.

use std::path::Path;
use std::sync::Arc;

use toolsmith_core::{ToolError, tool_fn};

use crate::FileSystem;

/// The tool's name.
pub const EDIT_TOOL: &str = "edit";

/// Replaces `old` by `new` in `text`: exactly one occurrence, or all with `replace_all`.
/// The error says how many occurrences there were.
///
/// ```
/// use toolsmith_harness::tools::replace_unique;
///
/// assert_eq!(replace_unique("a b a", "b", "c", false).unwrap(), ("a c a".to_owned(), 1));
/// assert_eq!(replace_unique("a b a", "a", "x", true).unwrap(), ("x b x".to_owned(), 2));
/// assert!(replace_unique("a b a", "a", "x", false).unwrap_err().contains("occurs 2 times"));
/// assert!(replace_unique("a b a", "z", "x", false).unwrap_err().contains("was not found"));
/// ```
pub fn replace_unique(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<(String, usize), String> {
    let count = text.matches(old).count();
    match count {
        0 => Err(
            "old_string was not found (0 matches); read the file and copy the text exactly, \
             whitespace and indentation included"
                .to_owned(),
        ),
        1 => Ok((text.replacen(old, new, 1), 1)),
        n if replace_all => Ok((text.replace(old, new), n)),
        n => Err(format!(
            "old_string occurs {n} times; add surrounding lines to make it unique, or set \
             replace_all to replace all {n}"
        )),
    }
}

/// The `edit` tool's logic: reads the file, replaces the match, writes it back atomically.
/// The tool is `EditTool::new(fs)`.
#[tool_fn(
    name = "edit",
    category = "write",
    read_only = false,
    destructive,
    idempotent = false,
    open_world = false,
    description = "Replace an exact piece of text in a file of the workspace. `old_string` must \
                   occur exactly once (include surrounding lines to make it unique) unless \
                   `replace_all` is set. Read the file first."
)]
pub async fn edit_tool(
    #[bind] fs: Arc<dyn FileSystem>,
    /// The file to edit, relative to the workspace root.
    path: String,
    /// The exact text to replace (whitespace included); it must occur exactly once unless
    /// `replace_all` is set.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence instead of requiring a unique one.
    #[arg(default)]
    replace_all: bool,
) -> Result<String, ToolError> {
    if old_string.is_empty() {
        return Err(ToolError::invalid_arguments(
            EDIT_TOOL,
            "/old_string: must not be empty (to create a file, use write)",
        ));
    }
    if old_string == new_string {
        return Err(ToolError::invalid_arguments(
            EDIT_TOOL,
            "/new_string: is the same as old_string, so nothing would change",
        ));
    }
    let file = Path::new(&path);
    let contents = fs
        .read(file)
        .await
        .map_err(|err| ToolError::execution(EDIT_TOOL, err))?;
    let text = String::from_utf8(contents).map_err(|_| {
        ToolError::execution(
            EDIT_TOOL,
            format!("refused {path:?}: it is not UTF-8 text; edit works on text files only"),
        )
    })?;
    let (edited, count) = replace_unique(&text, &old_string, &new_string, replace_all)
        .map_err(|reason| ToolError::execution(EDIT_TOOL, format!("in {path:?}: {reason}")))?;
    fs.write(file, edited.into_bytes())
        .await
        .map_err(|err| ToolError::execution(EDIT_TOOL, err))?;
    Ok(format!(
        "Edited {path:?}: replaced {count} occurrence{}",
        if count == 1 { "" } else { "s" }
    ))
}
