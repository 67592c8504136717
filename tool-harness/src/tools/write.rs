//! The `write` tool: replaces a file's content atomically.

use std::path::Path;
use std::sync::Arc;

use toolsmith_core::{ToolError, tool_fn};

use crate::FileSystem;
use crate::tools::file_lock::lock_file;

/// The tool's name.
pub const WRITE_TOOL: &str = "write";

/// The `write` tool's logic: writes the content atomically through `fs`. The tool is
/// `WriteTool::new(fs)`.
#[tool_fn(
    name = "write",
    category = "write",
    read_only = false,
    destructive,
    idempotent,
    open_world = false,
    description = "Create a file of the workspace, or replace its whole content. The write is \
                   atomic and missing parent directories are created. To change part of a file, \
                   use `edit`."
)]
pub async fn write_tool(
    #[bind] fs: Arc<dyn FileSystem>,
    /// The file to write, relative to the workspace root; missing directories are created.
    path: String,
    /// The file's whole new content.
    content: String,
) -> Result<String, ToolError> {
    let bytes = content.len();
    // Not between an edit's read and its write of the same file.
    let _lock = lock_file(&path).await;
    let created = fs
        .write(Path::new(&path), content.into_bytes())
        .await
        .map_err(|err| ToolError::execution(WRITE_TOOL, err))?;
    let size = match bytes {
        1 => "1 byte".to_owned(),
        n => format!("{n} bytes"),
    };
    Ok(if created {
        format!("Created {path:?} ({size})")
    } else {
        format!("Replaced the content of {path:?} ({size})")
    })
}
