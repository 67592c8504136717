//! The core of Toolsmith: the tool model, validation and execution.
//!
//! It is normally used through the `toolsmith` crate, which re-exports it at its root; the
//! examples use those paths (`toolsmith::ToolCallManager` is this crate's `ToolCallManager`).
//!
//! A tool implements [`ToolImpl`]: a [`Tool`] definition (one command or a group of
//! commands, each a [`ToolDefinition`] with a JSON Schema for its arguments) and an async
//! `execute`. A [`ToolCallManager`] holds a session's tools, validates every call against the
//! tool's schema before it runs, and contains panics and time limits.
//!
//! ```
//! use std::sync::Arc;
//! use toolsmith::{Args, FnTool, ToolArgs, ToolArguments, ToolCallManager,
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
//! command enum. They work through the `toolsmith` facade, as in this example, and in a crate
//! that depends on `toolsmith-core` directly (as the harness does):
//!
//! ```
//! use std::sync::Arc;
//! use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, tool_fn};
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
#![warn(missing_debug_implementations)]

mod batch;
mod generated;
mod manager;
pub mod provider;
mod reading;
mod schema;
mod session;
pub mod shed;
mod tool;

/// The attribute a hand-written [`ToolImpl`] is implemented with (as are the harness's
/// hooks, approvals, embedders and retrievers), from `async-trait`: re-exported so that a
/// crate implementing them needs no `async-trait` dependency of its own.
pub use async_trait::async_trait;
pub use batch::BatchOptions;
pub use batch::call_span::{execute_tool_span, record_call_end, trace_call_not_run};
pub use batch::outcome::ToolCallOutcome;
pub use batch::retry::{Jitter, ToolRetryConfig};
pub use batch::workflow::{FailMode, StageMode, Workflow, WorkflowStage};
pub use manager::declarations::ToolDeclarations;
pub use manager::execution_settings::DEFAULT_CONCURRENCY_LIMIT;
pub use manager::suggestion::closest_names;
pub use manager::{RegistrationError, ToolCallManager};
pub use provider::Provider;
pub use reading::blank::is_blank;
pub use reading::lenient;
pub use reading::tool_args::{ArgsSchema, FromToolArgs, ToolArgs};
pub use schema::scheme;
pub use schema::type_schema::{
    ArgsObject, HasJsonSchema, is_optional, returns_schema, type_schema,
};
pub use session::constructor::{ToolConstructor, tool_fn};
pub use session::extract::{FromSessionParts, State};
pub use session::in_memory;
pub use session::unbuilt_tool::UnbuiltTool;
pub use session::{
    ContextHit, ContextSearch, Embedder, MemoryAccess, MemoryFact, ServiceError, SessionParts,
    SessionState, Versioned, check_embeddings, check_finite_embeddings, unit_vector,
};
pub use shed::{ShedResult, ToolDiscovery, ToolShed, ToolShedError, ToolSummary};
/// The token that cancels a batch ([`BatchOptions::with_cancellation`]), from `tokio-util`.
pub use tokio_util::sync::CancellationToken;
pub use tool::args::Args;
pub use tool::arguments::{NotAnObject, ToolArguments};
pub use tool::bounded_json::{MAX_JSON_VALUES, value_from_slice, value_from_str};
pub use tool::call_context::{Progress, ProgressSink, ToolCallContext};
pub use tool::commands::{ToolCommands, ToolShape};
pub use tool::content_part::ContentPart;
pub use tool::definition::{DEFAULT_CATEGORY, ToolAnnotations, ToolDefinition};
pub use tool::error::{ToolError, ToolErrorKind, drop_panic_payload, panic_message};
pub use tool::fn_tool::FnTool;
pub use tool::image::{IMAGE_MEDIA_TYPES, Image, ImageError, MAX_IMAGE_BASE64_LEN};
pub use tool::json_text::JsonText;
pub use tool::json_with_images::JsonWithImages;
pub use tool::names::{MAX_NAME_LEN, SHED_TOOL_NAME, check_name};
pub use tool::nesting::{
    MAX_JSON_DEPTH, clone_value, free_value, json_text_too_deep, nests_within,
};
pub use tool::request::{ExecutionHint, ToolCallRequest};
pub use tool::result::{ToolCallResult, UserModelContent};
pub use tool::serde_private_keys::SERDE_JSON_PRIVATE_KEYS;
pub use tool::text_scan::{JsonTextExcess, json_text_excess};
pub use tool::tool_impl::{ToolFuture, ToolImpl};
pub use tool::with_images::WithImages;
pub use tool::{COMMAND_ARGUMENT, Tool, ToolFunctionSpec};
// The entry points whose generated code names this crate (`toolsmith` re-exports the ones
// naming itself).
pub use toolsmith_macros::{CoreToolArgs as ToolArgs, core_tool_fn as tool_fn};

/// Re-exports used by generated code; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use async_trait::async_trait;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::generated::expansion;
    // Not named by generated code, but public so that errors about a return type name its
    // traits by a path a user can read (`toolsmith::__private::result_conversion::…`).
    pub use crate::generated::result_conversion;
}
