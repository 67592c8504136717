//! The core of Toolsmith: the tool model, validation and execution.
//!
//! A tool implements [`ToolImpl`]: a [`Tool`] definition (one command or a group of
//! commands, each a [`ToolDefinition`] with a JSON Schema for its arguments) and an async
//! `execute`. A [`ToolCallManager`] holds a session's tools, validates every call against the
//! tool's schema before it runs, and contains panics and time limits.
//!
//! ```
//! use std::sync::Arc;
//! use toolsmith_core::{Args, FnTool, ToolArgs, ToolArguments, ToolCallManager,
//!     ToolCallRequest, ToolCallResult, scheme};
//! use serde_json::json;
//!
//! let manager = ToolCallManager::new("demo");
//! manager.register(Arc::new(FnTool::new(
//!     "greet",
//!     "Greet someone by name.",
//!     Args::new(scheme::object().required("name", scheme::string().min_len(1)).build()),
//!     |args: ToolArgs<'_>| {
//!         let name = args.str("name").map(str::to_owned);
//!         async move { Ok(ToolCallResult::text(format!("Hello, {}!", name?))) }
//!     },
//! ))).unwrap();
//!
//! let request = ToolCallRequest::new("call-1", "greet",
//!     ToolArguments::from_iter([("name", json!("Ada"))]));
//! let result = futures::executor::block_on(manager.execute_one(&request)).unwrap();
//! assert_eq!(result.content.to_text(), "Hello, Ada!");
//! ```
//!
//! Most tools are written with the macros this crate re-exports: `#[tool_fn]` on an async (or
//! sync) function or on an `impl` block, and `#[derive(ToolArgs)]` on an argument struct or a
//! command enum. They work in crates that depend on `toolsmith-core` directly as well as
//! through the `toolsmith` facade:
//!
//! ```
//! use std::sync::Arc;
//! use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest, tool_fn};
//! use serde_json::json;
//!
//! /// Repeat a text.
//! #[tool_fn(category = "text")]
//! fn repeat(text: &str, times: usize) -> String {
//!     text.repeat(times)
//! }
//!
//! let manager = ToolCallManager::new("demo");
//! manager.register(Arc::new(Repeat)).unwrap();
//! let call = ToolCallRequest::new("1", "repeat",
//!     ToolArguments::from_iter([("text", json!("ab")), ("times", json!("3"))]));
//! let result = futures::executor::block_on(manager.execute_one(&call)).unwrap();
//! assert_eq!(result.content.to_text(), "ababab");
//! ```
#![warn(missing_docs)]

mod activation;
mod arg_field;
mod args;
mod arguments;
mod batch;
mod call_annotations;
mod constructor;
mod declarations;
mod definition;
mod error;
mod execution_settings;
mod extract;
mod flat_schema;
mod fn_tool;
#[doc(hidden)]
pub mod generated_call;
pub mod in_memory;
pub mod lenient;
mod manager;
mod names;
mod outcome;
pub mod provider;
mod registry;
mod request;
mod result;
#[doc(hidden)]
pub mod result_conversion;
mod retry;
mod returns;
mod running_call;
pub mod scheme;
mod session;
mod shared_value;
pub mod shed;
mod suggestion;
mod tool;
mod tool_args;
mod tool_commands;
mod tool_impl;
mod type_schema;
mod unbuilt_tool;
mod validation;
mod workflow;

pub use args::Args;
pub use arguments::{NotAnObject, ToolArguments};
pub use batch::BatchOptions;
pub use constructor::{ToolConstructor, tool_fn};
pub use declarations::ToolDeclarations;
pub use definition::{DEFAULT_CATEGORY, ToolAnnotations, ToolDefinition};
pub use error::{ToolError, ToolErrorKind};
pub use execution_settings::DEFAULT_CONCURRENCY_LIMIT;
pub use extract::{FromSessionParts, State};
pub use fn_tool::FnTool;
pub use manager::{RegistrationError, ToolCallManager};
pub use names::{MAX_NAME_LEN, SHED_TOOL_NAME, check_name};
pub use outcome::ToolCallOutcome;
pub use provider::Provider;
pub use request::{ExecutionHint, ToolCallRequest};
pub use result::{ToolCallResult, UserModelContent};
pub use retry::{Jitter, ToolRetryConfig};
pub use session::{
    ContextHit, ContextSearch, Embedder, MemoryAccess, MemoryFact, ServiceError, SessionParts,
    SessionState,
};
pub use shed::{ShedResult, ToolDiscovery, ToolShed, ToolShedError, ToolSummary};
pub use suggestion::closest_names;
/// The token that cancels a batch ([`BatchOptions::with_cancellation`]), from `tokio-util`.
pub use tokio_util::sync::CancellationToken;
pub use tool::{COMMAND_ARGUMENT, Tool, ToolFunctionSpec};
pub use tool_args::{ArgsSchema, FromToolArgs, ToolArgs};
pub use tool_commands::ToolCommands;
pub use tool_impl::{ToolFuture, ToolImpl};
pub use toolsmith_macros::{ToolArgs, tool_fn};
pub use type_schema::{ArgsObject, is_optional, returns_schema, type_schema};
pub use unbuilt_tool::UnbuiltTool;
pub use workflow::{FailMode, StageMode, Workflow, WorkflowStage};

/// Re-exports used by generated code; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use async_trait::async_trait;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::generated_call;
    pub use crate::result_conversion;
}
