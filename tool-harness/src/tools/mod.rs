//! The built-in tools, each a [`ToolImpl`](toolsmith_core::ToolImpl) over its logic: a plain
//! async function (or, for `memory`, one method per command) taking a typed argument struct.

mod args_schema;
mod bash;
mod edit;
mod memory;
mod read;
mod search_context;
mod search_file;
mod write;

pub use bash::{BASH_TOOL, BashArgs, BashTool, run_bash};
pub use edit::{EDIT_TOOL, EditArgs, EditTool, edit_file, replace_unique};
pub use memory::{MEMORY_TOOL, MemoryAddArgs, MemoryRemoveArgs, MemoryReplaceArgs, MemoryTool};
pub use read::{READ_TOOL, ReadArgs, ReadLimits, ReadTool, read_file, render_lines};
pub use search_context::{
    DEFAULT_CONTEXT_HITS, SEARCH_CONTEXT_TOOL, SearchContextArgs, SearchContextTool, render_hits,
    search_context,
};
pub use search_file::{
    SEARCH_FILE_TOOL, SearchFileArgs, SearchFileTool, render_report, search_files,
};
pub use write::{WRITE_TOOL, WriteArgs, WriteTool, write_file};
