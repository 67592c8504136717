//! `toolsmith mcp list`: a remote server's tools, through the MCP bridge.

use std::ffi::OsString;

use toolsmith::ToolImpl as _;
use toolsmith::harness::mcp::{McpClient, McpCommand, McpTransport};

use crate::{Failure, output};

/// Connects, prints one line a tool (its name here, its name on the server when they
/// differ, its description's first line), and closes the connection.
pub async fn list(
    url: Option<String>,
    token: Option<String>,
    command: Vec<OsString>,
) -> Result<(), Failure> {
    let transport = match url {
        Some(url) => {
            // The HTTP client would refuse it only as a "builder error".
            let scheme = url.split_once("://").map(|(scheme, _)| scheme);
            if !scheme
                .is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
            {
                return Err(Failure(format!(
                    "--url {url:?} does not start with http:// or https://"
                )));
            }
            let transport = McpTransport::http(url);
            match token {
                Some(token) => transport.with_bearer_token(token),
                None => transport,
            }
        }
        None => {
            let mut parts = command.into_iter();
            let Some(program) = parts.next() else {
                return Err(Failure(
                    "give the server's command after `--`, or --url".into(),
                ));
            };
            McpTransport::child(McpCommand::new(program).args(parts))
        }
    };
    let client = McpClient::connect(transport).await?;
    let printed = print_tools(&client);
    // Closed whether or not the printing went through: the server is a child to end.
    client.close().await;
    printed
}

/// The server's name, then a line a tool: its name and the first line of its description.
fn print_tools(client: &McpClient) -> Result<(), Failure> {
    if let Some(info) = client.server_info() {
        output::line(format_args!("# {} {}", info.name, info.version))?;
    }
    for tool in client.tools() {
        let definition = tool.definition();
        let description = definition.description();
        let first_line = description.lines().next().unwrap_or_default();
        if tool.name() == tool.original_name() {
            output::line(format_args!("{}\t{first_line}", tool.name()))?;
        } else {
            output::line(format_args!(
                "{}\t{first_line} (on the server: {})",
                tool.name(),
                tool.original_name()
            ))?;
        }
    }
    Ok(())
}
