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
#![warn(missing_docs)]

mod activation;
mod args;
mod arguments;
mod constructor;
mod declarations;
mod definition;
mod error;
mod extract;
mod fn_tool;
pub mod in_memory;
pub mod lenient;
mod manager;
mod names;
mod request;
mod result;
pub mod scheme;
mod session;
pub mod shed;
mod tool;
mod tool_args;
mod tool_impl;
mod validation;

pub use args::Args;
pub use arguments::{NotAnObject, ToolArguments};
pub use constructor::{ToolConstructor, tool_fn};
pub use declarations::ToolDeclarations;
pub use definition::{DEFAULT_CATEGORY, ToolAnnotations, ToolDefinition};
pub use error::{ToolError, ToolErrorKind};
pub use extract::{FromSessionParts, State};
pub use fn_tool::FnTool;
pub use manager::{RegistrationError, ToolCallManager};
pub use names::{MAX_NAME_LEN, SHED_TOOL_NAME, check_name};
pub use request::{ExecutionHint, ToolCallRequest};
pub use result::{ToolCallResult, UserModelContent};
pub use session::{
    ContextHit, ContextSearch, Embedder, MemoryAccess, MemoryFact, ServiceError, SessionParts,
    SessionState,
};
pub use shed::{ShedResult, ToolDiscovery, ToolShed, ToolShedError, ToolSummary};
pub use tool::{COMMAND_ARGUMENT, Tool, ToolFunctionSpec};
pub use tool_args::{ArgsSchema, FromToolArgs, ToolArgs};
pub use tool_impl::ToolImpl;

/// Re-exports used by generated code; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use async_trait::async_trait;
    pub use schemars;
    pub use serde;
    pub use serde_json;
}
