//! The shed: the session's tools ([`ToolShed`]), the `shed` meta-tool through which a model
//! finds them ([`shed_tool`], [`ShedResult`]), and [`ToolDiscovery`], the search behind it.
//!
//! A model is first offered only `shed`. It describes what it needs; `shed` returns the best
//! matching tools, and those become active: declared on every later request.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolsmith::{Args, FnTool, SessionParts, ToolArgs, ToolArguments, ToolCallRequest,
//!     ToolCallResult, ToolErrorKind, scheme};
//! use toolsmith::shed::{ShedResult, ToolShed};
//!
//! # futures::executor::block_on(async {
//! let tool = |name: &str, description: &str| FnTool::new(name, description,
//!     Args::new(scheme::object().required("city", scheme::string()).build()),
//!     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("ok")) });
//! let manager = ToolShed::new()
//!     .tool(tool("get_weather", "Current weather for a city."))
//!     .tool(tool("find_hotels", "Hotels with rooms free in a city."))
//!     .build(SessionParts::in_memory("trip"))
//!     .unwrap();
//!
//! // Only `shed` is offered, and other tools are refused until it returns them.
//! assert_eq!(manager.offered_tools().len(), 1);
//! assert_eq!(manager.check_offered("get_weather").unwrap_err().kind(), ToolErrorKind::NotActive);
//!
//! let call = ToolCallRequest::new("c1", "shed",
//!     ToolArguments::try_from(json!({"description": "weather forecast", "limit": 1})).unwrap());
//! let result = manager.execute_one(&call).await.unwrap();
//! let found: ShedResult = serde_json::from_str(&result.content.to_text()).unwrap();
//! assert_eq!(found.tools[0].name, "get_weather");
//! assert!(manager.check_offered("get_weather").is_ok());
//! assert_eq!(manager.offered_tools().len(), 2);
//! # });
//! ```

mod discovery;
mod embedding_index;
mod lexical;
mod meta_tool;
pub(crate) mod name_directory;
pub(crate) mod rendered_summary;
mod tool_shed;
mod tool_text;

pub use discovery::{DiscoveryHit, MatchedBy, ToolDiscovery};
pub(crate) use lexical::analyze;
pub use lexical::{TextHit, TextIndex};
pub use meta_tool::{
    DEFAULT_SHED_LIMIT, MAX_CLOSEST, MAX_SELECTED, MAX_SHED_LIMIT, SELECT_PREFIX, SHED_CATEGORY,
    ShedResult, ToolSummary, shed_tool,
};
pub use tool_shed::{ToolShed, ToolShedError};
