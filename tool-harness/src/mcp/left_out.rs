//! [`LeftOutTool`]: a tool a server listed that its client gives no bridge, and why.

use toolsmith_core::RegistrationError;

/// A tool an MCP server listed that [`McpClient::tools`](super::McpClient::tools) leaves
/// out, from [`McpClient::left_out`](super::McpClient::left_out).
///
/// Displayed as "`name`: reason".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeftOutTool {
    /// The tool's name on the server (no local name is given to a tool left out).
    pub name: String,
    /// Why it is left out.
    pub reason: LeftOutReason,
}

impl std::fmt::Display for LeftOutTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.name, self.reason)
    }
}

/// Why a listed tool is left out of a client's tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LeftOutReason {
    /// The server lists the name more than once: the first listing is the tool (a call
    /// names the tool on the wire, so the server would run one of them for both).
    #[error("the server lists this tool name more than once; the first is kept")]
    ListedAgain,
    /// Registration would refuse the tool ([`Tool::check`](toolsmith_core::Tool::check)): a
    /// schema that does not compile (a `pattern` that is no regular expression, a `$ref` to
    /// another document, which is never fetched) or is nested too deep. The error names the
    /// tool by the local name it would have had.
    #[error("{0}")]
    Refused(RegistrationError),
}
