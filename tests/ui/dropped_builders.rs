// A builder, a configuration or a client made and dropped unused is a mistake the compiler
// reports (here denied): each of these is `#[must_use]`.
#![deny(unused_must_use)]

use std::time::Duration;

use toolsmith::harness::ToolPreset;
use toolsmith::harness::mcp::{McpClient, McpCommand, McpTransport};
use toolsmith::harness::model::Usage;
use toolsmith::harness::model::http::OpenAiChatModel;
use toolsmith::{BatchOptions, ToolCallRequest, ToolRetryConfig, ToolShed, scheme};

async fn connect() -> Result<(), toolsmith::harness::mcp::McpError> {
    McpClient::connect(McpTransport::http("http://127.0.0.1:1/mcp")).await?;
    Ok(())
}

fn main() {
    ToolShed::new();
    ToolPreset::shell();
    BatchOptions::new();
    ToolRetryConfig::fixed(2, Duration::from_millis(10));
    ToolCallRequest::new("1", "read", Default::default());
    scheme::string().build();
    OpenAiChatModel::builder();
    McpCommand::new("server");
    Usage::new(10, 5).saturating_sub(Usage::new(1, 1));
    drop(connect());
}
