//! [`LeftOutTool`]: a tool a server listed that its client gives no bridge, and why.

use toolsmith_core::RegistrationError;

/// A tool an MCP server listed that [`McpClient::tools`](super::McpClient::tools) leaves
/// out, from [`McpClient::left_out`](super::McpClient::left_out).
///
/// Displayed as "`name`: reason".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeftOutTool {
    /// The tool's name on the server (no local name is given to a tool left out); for a
    /// tool that does not read ([`LeftOutReason::Unreadable`]) and has no string `name`,
    /// its place in the listing instead ("tool 3 of page 1", counted from 1).
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
    /// The tool's definition does not read as an MCP tool (an `inputSchema` that is not an
    /// object, no `name`, an `annotations` hint that is not a boolean, an entry of `tools`
    /// that is not an object): the rest of the listing is kept. A listing whose page is not
    /// a tool list (no `tools` array, a `nextCursor` that is not a string) still fails.
    #[error(
        "its definition does not read as an MCP tool: {}{problem}",
        at_field(field)
    )]
    Unreadable {
        /// The path of the field that does not read, within the tool
        /// (`inputSchema`, `annotations.readOnlyHint`); empty when the fault is the tool's
        /// as a whole (a field missing, or not an object).
        field: String,
        /// What was wrong there, as serde says it, the value it quotes cut
        /// ("invalid type: integer `5`, expected a map").
        problem: String,
    },
}

/// `field` as the start of a [`LeftOutReason::Unreadable`]'s message: "`field`: ", or
/// nothing for the tool as a whole.
fn at_field(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("`{field}`: ")
    }
}
