//! Toolsmith turns Rust functions into tools that LLMs call: JSON Schemas for their
//! arguments, validation before every call, errors the model can correct, execution with
//! contained failures, and an agent loop over real model APIs.
//!
//! Write a tool with [`#[tool_fn]`](macro@tool_fn): the function's parameters and doc comments
//! become the tool's schema, and the macro generates a struct (here `Add`) that implements
//! [`ToolImpl`]:
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, tool_fn};
//!
//! /// Add two integers.
//! #[tool_fn(category = "math")]
//! async fn add(
//!     /// The first number.
//!     a: i64,
//!     /// The second number.
//!     b: i64,
//! ) -> i64 {
//!     a + b
//! }
//!
//! let manager = ToolCallManager::new("session");
//! manager.register(Arc::new(Add)).unwrap();
//! let call = ToolCallRequest::new("1", "add",
//!     ToolArguments::try_from(json!({"a": 2, "b": 40})).unwrap());
//! let result = futures::executor::block_on(manager.execute_one(&call)).unwrap();
//! assert_eq!(result.content.to_text(), "42");
//!
//! // Invalid arguments never reach the function; the error says what and where.
//! let wrong = ToolCallRequest::new("2", "add",
//!     ToolArguments::try_from(json!({"a": "two"})).unwrap());
//! let err = futures::executor::block_on(manager.execute_one(&wrong)).unwrap_err();
//! assert!(err.to_string().contains("/a"));
//! ```
//!
//! The crate re-exports the core ([`toolsmith_core`]) at its root: the tool model
//! ([`ToolImpl`], [`Tool`], [`ToolDefinition`]), the [`ToolCallManager`], batches, the
//! [`ToolShed`] and its `shed` meta-tool, and the [`provider`] wire formats. The [`harness`]
//! module has the ready tool presets, the agent session
//! ([`harness::agent::AgentSession`]) and the model clients ([`harness::model`]).
//!
//! A tool whose arguments are one struct takes it whole as a parameter marked `#[args]`, the
//! struct deriving [`ToolArgs`](derive@ToolArgs): the tool's schema is the struct's. A command
//! enum deriving it, taken so, makes the function a command group, one command per variant
//! ([`#[tool_fn]`](macro@tool_fn)'s page, "`#[args]`").
//!
//! A tool can also be written by hand ([`ToolImpl`], whose page has an example) or from a
//! closure ([`FnTool`]). Its async methods take the [`async_trait`](macro@async_trait)
//! attribute, which the crate re-exports, so no `async-trait` dependency of your own is
//! needed: `use toolsmith::async_trait;`.
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]

#[doc(inline)]
pub use toolsmith_core::*;
// The macros' entry points whose generated code names `::toolsmith` (the core's name
// `::toolsmith_core`, which a crate depending on the facade alone cannot name).
pub use toolsmith_macros::{ToolArgs, tool_fn};

/// Ready tool presets (files, shell, search, memory), the agent session and the model clients
/// (feature `harness`, on by default).
#[cfg(feature = "harness")]
#[doc(inline)]
pub use toolsmith_harness as harness;

/// The README's examples, compiled and run as doctests so that they cannot drift.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "cli", feature = "http-models"))]
pub struct ReadmeDoctests;
