//! Serving an [`McpServer`] over stdio, or over any reader and writer.

use rmcp::service::{RoleServer, RunningService, ServerInitializeError, ServiceExt as _};
use tokio::io::{AsyncRead, AsyncWrite};

use super::error::McpError;
use super::json_limits::JsonLimits;
use super::line_transport::LineTransport;
use super::server::McpServer;

/// Serves `server` on this process's stdin and stdout until the client closes stdin (or the
/// connection fails). Stdout carries only JSON-RPC messages; nothing else may write to it
/// while this runs (log to stderr). Each message is bounded by [`JsonLimits::for_server`]
/// ([`serve_until_closed`] takes other limits).
///
/// Returns `Ok(())` when the client closed the connection, before or after the handshake.
/// Answers still being written then get a few seconds (rmcp drains them for up to five, the
/// transport's close waits two more), so a client that closes stdin without reading stdout
/// cannot keep the server from ending.
pub async fn serve_stdio(server: McpServer) -> Result<(), McpError> {
    serve_until_closed(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        JsonLimits::for_server(),
    )
    .await
}

/// Serves `server` over `read` and `write` (a socket, a pipe, one end of
/// [`tokio::io::duplex`]) and returns the running service once the client has initialized:
/// `waiting()` on it runs to the end of the connection, `cancel()` stops it.
pub async fn serve_io<R, W>(
    server: McpServer,
    read: R,
    write: W,
    limits: JsonLimits,
) -> Result<RunningService<RoleServer, McpServer>, McpError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let transport = LineTransport::<RoleServer, R, W>::new(read, write).with_limits(limits);
    server
        .serve(transport)
        .await
        .map_err(|error| McpError::Handshake {
            peer: "the client".to_owned(),
            reason: error.to_string(),
        })
}

/// [`serve_io`], then waits for the connection's end; a client that leaves before the
/// handshake ends it cleanly too.
pub async fn serve_until_closed<R, W>(
    server: McpServer,
    read: R,
    write: W,
    limits: JsonLimits,
) -> Result<(), McpError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let transport = LineTransport::<RoleServer, R, W>::new(read, write).with_limits(limits);
    let running = match server.serve(transport).await {
        Ok(running) => running,
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => {
            return Err(McpError::Handshake {
                peer: "the client".to_owned(),
                reason: error.to_string(),
            });
        }
    };
    running
        .waiting()
        .await
        .map(|_reason| ())
        .map_err(|error| McpError::io("serving MCP", std::io::Error::other(error)))
}
