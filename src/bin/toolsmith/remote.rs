//! `toolsmith mcp list`: a remote server's tools, through the MCP bridge.

use std::ffi::OsString;

use toolsmith::ToolImpl as _;
use toolsmith::harness::mcp::{McpClient, McpCommand, McpTransport};
use toolsmith::harness::redacted_url;

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
                // Quoted without its user and key, which may be a secret.
                return Err(Failure::usage(format!(
                    "--url {:?} does not start with http:// or https://",
                    redacted_url(&url)
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
                return Err(Failure::usage(
                    "mcp list: give a server command (after `--`: mcp list -- CMD ARGS..), \
                     or --url URL",
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
        output::line(format_args!(
            "# {} {}",
            output::escaped(&info.name),
            output::escaped(&info.version)
        ))?;
    }
    for tool in client.tools() {
        let definition = tool.definition();
        output::line(tool_line(
            tool.name(),
            tool.original_name(),
            &definition.description(),
        ))?;
    }
    Ok(())
}

/// A tool's line: its name here, the first line of its description, and its name on the
/// server when that differs. What the server wrote is shown escaped: a description or a
/// name with an escape sequence must not drive the terminal.
fn tool_line(name: &str, original_name: &str, description: &str) -> String {
    let first_line = output::escaped(description.lines().next().unwrap_or_default());
    let shown = output::escaped(name);
    if name == original_name {
        format!("{shown}\t{first_line}")
    } else {
        format!(
            "{shown}\t{first_line} (on the server: {})",
            output::escaped(original_name)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::tool_line;

    #[test]
    fn a_tool_line_shows_what_the_server_wrote_escaped() {
        assert_eq!(
            tool_line("read", "read", "Read a file.\nMore."),
            "read\tRead a file."
        );
        assert_eq!(
            tool_line("get_x", "get.x", "Gets x."),
            "get_x\tGets x. (on the server: get.x)"
        );
        assert_eq!(
            tool_line(
                "clear",
                "clear\u{1b}[2J",
                "Clears\u{1b}]0;owned\u{7} the screen."
            ),
            "clear\tClears\\u{1b}]0;owned\\u{7} the screen. (on the server: clear\\u{1b}[2J)"
        );
    }
}
