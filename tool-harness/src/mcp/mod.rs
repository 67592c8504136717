//! MCP both ways, over rmcp (the official Rust SDK): serve any [`ToolCallManager`]'s tools to
//! MCP clients, and use an MCP server's tools as [`ToolImpl`]s.
//!
//! Serving: [`McpServer`] implements rmcp's `ServerHandler` by hand over the manager (no
//! tool is declared twice); [`serve_stdio`] serves it on stdio, [`McpHttpServer`] over
//! streamable HTTP.
//!
//! Consuming: [`McpClient::connect`] reaches a server in a child process or over streamable
//! HTTP; [`McpClient::tools`] gives one [`McpToolBridge`] per remote tool, which goes into a
//! `ToolShed` or a `ToolCallManager` like any tool. [`McpNames`] keeps their names
//! provider-safe and distinct.
//!
//! Limits: what a peer sends is bounded before rmcp reads it ([`JsonLimits`]: bytes, depth,
//! values and serde_json's private keys, one scan over the bytes), on the line transport
//! both ways, in the HTTP server's bodies and in the HTTP client's bodies and events; a
//! message past one is answered with a JSON-RPC error naming the limit, or fails the call
//! it answers.
//!
//! [`ToolCallManager`]: toolsmith_core::ToolCallManager
//! [`ToolImpl`]: toolsmith_core::ToolImpl

mod bounded_http_client;
mod bridge;
mod call_result;
mod child;
mod client;
mod error;
mod http;
mod json_limits;
mod left_out;
mod line_transport;
mod names;
mod pagination;
mod progress;
mod rebinding_guard;
mod remote_progress;
mod server;
mod session_cap;
mod session_idle;
mod stdio;
mod tool_list;
mod tool_mapping;
mod unreadable;

pub use bridge::McpToolBridge;
pub use child::McpCommand;
pub use client::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, MAX_RECONNECT_DELAY, McpClient,
    McpClientOptions, McpTransport,
};
pub use error::McpError;
pub use http::{
    DEFAULT_MAX_SESSIONS, DEFAULT_REQUEST_READ_TIMEOUT, DEFAULT_SESSION_IDLE_TIMEOUT,
    McpHttpOptions, McpHttpServer, router,
};
pub use json_limits::{
    DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_SERVER_MAX_VALUES, JsonLimits,
};
pub use left_out::{LeftOutReason, LeftOutTool};
pub use line_transport::LineTransport;
pub use names::{MAX_MCP_NAME_LEN, McpNames, provider_name};
pub use pagination::DEFAULT_PAGE_SIZE;
pub use server::{McpServer, McpServerOptions};
pub use stdio::{serve_io, serve_stdio, serve_until_closed};
pub use tool_list::{DEFAULT_MAX_LISTING_BYTES, DEFAULT_MAX_TOOLS};
pub use tool_mapping::{STATELESS_REVISION, WRAPPED_RESULT_KEY, WRAPPED_RESULT_MARKER};

// rmcp is not re-exported: it re-exports serde and schemars, and compiler messages about
// any user type then named those traits through it. Depend on `rmcp` directly for what
// these types do not wrap (its client service, its model types).
