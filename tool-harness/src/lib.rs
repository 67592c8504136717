//! Ready-made tools for Toolsmith sessions: files, shell, search, memory and context recall,
//! bundled as [`ToolPreset`]s.
//!
//! It is normally used through the `toolsmith` crate, as `toolsmith::harness` (its feature
//! `harness`, on by default); the examples use those paths, and `toolsmith::` for the core.
//!
//! - [`FileSystem`] is the handle the file tools work through: [`LocalFileSystem`] (a
//!   directory on disk, confined with `cap-std`) or [`InMemoryFileSystem`].
//! - The tools (module [`tools`]): `read`, `write`, `edit`, `search_file`, `bash`, `memory`
//!   (`add` / `list` / `remove` / `replace`) and `search_context`.
//! - [`ToolPreset`] bundles them: `files(fs)`, `shell()`, `memory(h)`, `session_memory()`,
//!   `search_context()`, `minimal_sub_agent(fs)`, `standard(fs)`.
//! - With the `mcp` feature, module `mcp` serves any manager's tools over MCP and turns an
//!   MCP server's tools into Toolsmith tools.
//!
//! ```
//! use std::sync::Arc;
//! use toolsmith::{ToolArguments, ToolCallRequest};
//! use toolsmith::harness::{LocalFileSystem, ToolPreset};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let dir = tempfile::tempdir().unwrap();
//! let fs = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
//! let manager = ToolPreset::minimal_sub_agent(fs).into_manager("demo").unwrap();
//!
//! let call = |name: &str, args| ToolCallRequest::new("1", name, ToolArguments::try_from(args).unwrap());
//! manager.execute_one(&call("write", json!({"path": "hello.txt", "content": "hi\n"}))).await.unwrap();
//! let shown = manager.execute_one(&call("bash", json!({"command": "cat hello.txt"}))).await.unwrap();
//! assert_eq!(shown.content.to_text(), "hi\n[exit code: 0]");
//!
//! let refused = manager.execute_one(&call("read", json!({"path": "../../etc/passwd"}))).await;
//! assert!(refused.unwrap_err().to_string().contains("outside the root"));
//! # }
//! ```
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod agent;
mod char_boundary;
#[cfg(any(feature = "http-models", feature = "mcp"))]
mod error_causes;
mod expired_limit;
mod fs;
#[cfg(feature = "mcp")]
pub mod mcp;
mod memory;
pub mod model;
mod preset;
mod readable_duration;
#[cfg(any(feature = "http-models", feature = "mcp"))]
mod redacted_url;
pub mod retrieval;
mod serialized_len;
mod shell;
#[cfg(any(feature = "http-models", feature = "mcp"))]
mod tls;
pub mod tools;

pub use toolsmith_core as core;

#[cfg(any(feature = "http-models", feature = "mcp"))]
pub use redacted_url::redacted_url;

pub use fs::FileSystem;
pub use fs::error::FsError;
pub use fs::in_memory::InMemoryFileSystem;
pub use fs::local::{DEFAULT_MAX_READ_BYTES, LocalFileSystem};
pub use fs::sandbox_path::{MAX_NAME_BYTES, MAX_PATH_BYTES};
pub use fs::search::{
    DEFAULT_MAX_MATCHES, IgnoreFileSkip, MAX_IGNORE_FILE_BYTES, MAX_IGNORE_FILE_PATTERNS,
    MAX_IGNORE_PATTERN_BYTES_PER_SEARCH, MAX_IGNORE_PATTERNS_PER_SEARCH, MAX_MATCH_LINE_CHARS,
    MAX_SEARCHED_LINE_BYTES, MAX_SKIPPED_IGNORE_FILES_LISTED, MAX_UNSEARCHED_LISTED, SearchError,
    SearchMatch, SearchQuery, SearchReport, SkippedIgnoreFile,
};
pub use memory::FileMemory;
pub use preset::{ToolPreset, register_file_tools, register_shell_tool};
pub use shell::environment::ShellEnvironment;
pub use shell::landlock_policy::LandlockPolicy;
pub use shell::output_cap::HeadTailBuffer;
pub use shell::{SandboxStatus, ShellConfig, ShellError, ShellOutcome, ShellRunner, ShellSandbox};
/// The session's default memory, from the core: here too, beside [`FileMemory`].
pub use toolsmith_core::in_memory::InMemoryMemory;
