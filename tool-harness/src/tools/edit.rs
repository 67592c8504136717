//! The `edit` tool: replaces an exact, unique piece of a text file.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith_core::{
    Tool, ToolAnnotations, ToolArguments, ToolCallResult, ToolDefinition, ToolError, ToolImpl,
};

use crate::FileSystem;
use crate::tools::args_schema::{args_schema, parse_args};

/// The tool's name.
pub const EDIT_TOOL: &str = "edit";

/// The arguments of `edit`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file to edit, relative to the workspace root.
    pub path: String,
    /// The exact text to replace (whitespace included); it must occur exactly once unless
    /// `replace_all` is set.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring a unique one.
    #[serde(default)]
    pub replace_all: bool,
}

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

/// `edit`'s logic: reads the file, replaces the match, writes it back atomically.
pub async fn edit_file(fs: &dyn FileSystem, args: EditArgs) -> Result<String, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::invalid_arguments(
            EDIT_TOOL,
            "/old_string: must not be empty (to create a file, use write)",
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::invalid_arguments(
            EDIT_TOOL,
            "/new_string: is the same as old_string, so nothing would change",
        ));
    }
    let path = Path::new(&args.path);
    let contents = fs
        .read(path)
        .await
        .map_err(|err| ToolError::execution(EDIT_TOOL, err))?;
    let text = String::from_utf8(contents).map_err(|_| {
        ToolError::execution(
            EDIT_TOOL,
            format!(
                "refused {:?}: it is not UTF-8 text; edit works on text files only",
                args.path
            ),
        )
    })?;
    let (edited, count) =
        replace_unique(&text, &args.old_string, &args.new_string, args.replace_all).map_err(
            |reason| ToolError::execution(EDIT_TOOL, format!("in {:?}: {reason}", args.path)),
        )?;
    fs.write(path, edited.into_bytes())
        .await
        .map_err(|err| ToolError::execution(EDIT_TOOL, err))?;
    Ok(format!(
        "Edited {:?}: replaced {count} occurrence{}",
        args.path,
        if count == 1 { "" } else { "s" }
    ))
}

/// The `edit` tool over a [`FileSystem`].
#[derive(Debug, Clone)]
pub struct EditTool {
    fs: Arc<dyn FileSystem>,
}

impl EditTool {
    /// `edit` over `fs`.
    pub fn new(fs: Arc<dyn FileSystem>) -> Self {
        Self { fs }
    }
}

#[async_trait]
impl ToolImpl for EditTool {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(
            ToolDefinition::new(
                EDIT_TOOL,
                "Replace an exact piece of text in a file of the workspace. `old_string` must \
                 occur exactly once (include surrounding lines to make it unique) unless \
                 `replace_all` is set. Read the file first.",
                args_schema::<EditArgs>(),
            )
            .with_category("write")
            .with_annotations(ToolAnnotations {
                read_only: Some(false),
                destructive: Some(true),
                idempotent: Some(false),
                open_world: Some(false),
            }),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = parse_args(EDIT_TOOL, &arguments)?;
        edit_file(&*self.fs, args).await.map(ToolCallResult::text)
    }
}
