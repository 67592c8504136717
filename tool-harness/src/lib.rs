//! Ready-made tools for Toolsmith sessions: file, shell, memory and search presets, the agent
//! loop and MCP interoperability.
//!
//! The presets arrive with their own issues; this crate re-exports the core so that preset
//! code and user code name the same types.
#![warn(missing_docs)]

pub use toolsmith_core as core;
