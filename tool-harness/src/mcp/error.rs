//! [`McpError`]: why serving or consuming MCP failed.

use std::time::Duration;

/// Why an MCP server could not be served, or an MCP server could not be reached or used.
/// Every message says what was being done and to what.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// Reading, writing, binding or spawning failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done ("spawning `npx -y server`", "binding 127.0.0.1:8080", …).
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The MCP handshake (initialize) failed.
    #[error("the MCP handshake with {peer} failed: {reason}")]
    Handshake {
        /// The peer: the command or URL of a server, or "the client".
        peer: String,
        /// What went wrong: for a server in a child process that exited, that it did, its
        /// exit status and where its stderr went; else what rmcp reported. Either way, the
        /// lines the server wrote that are not JSON-RPC messages, if any (to its stdout, for a
        /// child process; to the connection, for `McpClient::connect_io`).
        reason: String,
    },
    /// A request to the server failed (transport closed, bad response, JSON-RPC error).
    #[error("{request} to {peer} failed: {reason}")]
    Request {
        /// The request ("tools/list", …).
        request: String,
        /// The server.
        peer: String,
        /// What went wrong.
        reason: String,
    },
    /// Something did not finish in time.
    #[error(
        "{what} did not finish within {after:?}{}",
        .seen.as_ref().map(|seen| format!("; {seen}")).unwrap_or_default()
    )]
    Timeout {
        /// What was waited for.
        what: String,
        /// The time limit.
        after: Duration,
        /// What was seen meanwhile that may say why, if anything: the lines a server wrote
        /// that are not JSON-RPC messages, to its stdout (a child process) or to the
        /// connection (`McpClient::connect_io`): how many, and the start of the first, quoted
        /// (the server's own output, which is as secret as what the server prints).
        seen: Option<String>,
    },
    /// A setting that cannot work (an address, a URL, a token).
    #[error("invalid MCP setting: {0}")]
    Config(String),
}

impl McpError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}
