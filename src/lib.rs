//! Toolsmith turns async Rust functions into tools that LLMs call: schemas for their
//! arguments, validation before every call, and execution with contained failures.
//!
//! This crate re-exports the core ([`toolsmith_core`]) at its root and the ready-made tool
//! presets as [`harness`].
//!
//! ```
//! use std::sync::Arc;
//! use toolsmith::{Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
//!     ToolCallResult, scheme};
//! use serde_json::json;
//!
//! let manager = ToolCallManager::new("session");
//! manager.register(Arc::new(FnTool::new(
//!     "shout",
//!     "Repeat the text in capitals.",
//!     Args::new(scheme::object().required("text", scheme::string()).build()),
//!     |args: ToolArgs<'_>| {
//!         let text = args.str("text").map(str::to_uppercase);
//!         async move { Ok(ToolCallResult::text(text?)) }
//!     },
//! ))).unwrap();
//! let call = ToolCallRequest::new("1", "shout", ToolArguments::from_iter([("text", json!("hi"))]));
//! let result = futures::executor::block_on(manager.execute_one(&call)).unwrap();
//! assert_eq!(result.content.to_text(), "HI");
//! ```
#![warn(missing_docs)]

pub use toolsmith_core::*;

/// Ready-made tool presets, the agent loop and MCP interoperability.
pub use toolsmith_harness as harness;

/// The README's examples, compiled and run as doctests so that they cannot drift.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
