//! The built-in tools, written with `#[tool_fn]`: each is an async function whose state (a
//! file system handle, limits, a shell runner) is `#[bind]`, built with the generated
//! `new(..)` (`ReadTool::new(fs, limits)`); `search_context` takes its store with `#[ctx]`
//! from the session; `memory` is a command group (an `impl` block). `bash` keeps a thin
//! hand-written wrapper only to put the sandbox status in its description.

mod bash;
mod edit;
mod file_lock;
mod memory;
mod read;
mod search_context;
mod search_file;
mod write;

pub use bash::{BASH_TOOL, BashCall, BashTimeoutMs, BashTool, MAX_BASH_TIMEOUT_MS, bash_call};
pub use edit::{EDIT_TOOL, EditTool, MAX_EDIT_GROWTH_BYTES, edit_tool, replace_unique};
pub use memory::{MAX_FACT_BYTES, MEMORY_TOOL, MemoryTool};
pub use read::{MAX_READ_IMAGE_BYTES, READ_TOOL, ReadLimits, ReadTool, read_tool, render_lines};
pub use search_context::{
    ContextHitLimit, DEFAULT_CONTEXT_HITS, MAX_CONTEXT_HITS, SEARCH_CONTEXT_TOOL,
    SearchContextTool, render_hits, search_context_tool,
};
pub use search_file::{SEARCH_FILE_TOOL, SearchFileTool, render_report, search_file_tool};
pub use write::{WRITE_TOOL, WriteTool, write_tool};
