//! The `write` tool: replaces a file's content atomically.

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
pub const WRITE_TOOL: &str = "write";

/// The arguments of `write`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file to write, relative to the workspace root; missing directories are created.
    pub path: String,
    /// The file's whole new content.
    pub content: String,
}

/// `write`'s logic: writes the content atomically through `fs`.
pub async fn write_file(fs: &dyn FileSystem, args: WriteArgs) -> Result<String, ToolError> {
    let bytes = args.content.len();
    let created = fs
        .write(Path::new(&args.path), args.content.into_bytes())
        .await
        .map_err(|err| ToolError::execution(WRITE_TOOL, err))?;
    Ok(if created {
        format!("Created {:?} ({bytes} bytes)", args.path)
    } else {
        format!("Replaced the content of {:?} ({bytes} bytes)", args.path)
    })
}

/// The `write` tool over a [`FileSystem`].
#[derive(Debug, Clone)]
pub struct WriteTool {
    fs: Arc<dyn FileSystem>,
}

impl WriteTool {
    /// `write` over `fs`.
    pub fn new(fs: Arc<dyn FileSystem>) -> Self {
        Self { fs }
    }
}

#[async_trait]
impl ToolImpl for WriteTool {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(
            ToolDefinition::new(
                WRITE_TOOL,
                "Create a file of the workspace, or replace its whole content. The write is \
                 atomic and missing parent directories are created. To change part of a file, \
                 use `edit`.",
                args_schema::<WriteArgs>(),
            )
            .with_category("write")
            .with_annotations(ToolAnnotations {
                read_only: Some(false),
                destructive: Some(true),
                idempotent: Some(true),
                open_world: Some(false),
            }),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = parse_args(WRITE_TOOL, &arguments)?;
        write_file(&*self.fs, args).await.map(ToolCallResult::text)
    }
}
