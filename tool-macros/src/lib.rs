//! Procedural macros of Toolsmith: `#[tool_fn]` and `#[derive(ToolArgs)]`.
//!
//! Use them through the `toolsmith` crate, which re-exports them.
