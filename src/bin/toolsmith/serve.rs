//! `toolsmith serve`: a preset over MCP, on stdio or streamable HTTP.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use toolsmith::harness::mcp::{
    JsonLimits, McpError, McpHttpOptions, McpHttpServer, McpServer, McpServerOptions,
    serve_until_closed,
};

use crate::Failure;
use crate::cli::ServeArgs;
use crate::{output, presets};

/// Serves until stdin closes (stdio) or the process is interrupted (HTTP).
pub async fn run(args: ServeArgs) -> Result<(), Failure> {
    let manager = Arc::new(presets::manager(&args.preset)?);
    let options =
        McpServerOptions::new("toolsmith", env!("CARGO_PKG_VERSION")).with_shed(args.shed);
    let server = McpServer::with_options(manager, options);
    let limits = JsonLimits::for_server()
        .with_max_bytes(args.max_message_bytes)
        .with_max_values(args.max_values);
    match args.http {
        None => {
            if let Some(note) = ignored_on_stdio(&args.http_only_flags_given) {
                output::note(format_args!("{note}"));
            }
            serve_until_closed(server, tokio::io::stdin(), tokio::io::stdout(), limits)
                .await
                .map_err(Failure::from)
        }
        Some(addr) => {
            // Values no request could meet are the command line's mistake, said as such.
            if let Some(token) = &args.token {
                let from = if args.token_from_env {
                    "TOOLSMITH_MCP_TOKEN"
                } else {
                    "--token"
                };
                refused_as_usage(McpHttpOptions::default().with_bearer_token(token), from)?;
            }
            for host in &args.allow_host {
                refused_as_usage(McpHttpOptions::default().allow_host(host), "--allow-host")?;
            }
            let idle = (args.session_idle_timeout > 0)
                .then(|| std::time::Duration::from_secs(args.session_idle_timeout));
            let mut options = McpHttpOptions::default()
                .with_addr(addr)
                .with_max_sessions(args.max_sessions)
                .with_session_idle_timeout(idle)
                .with_limits(limits);
            if let Some(token) = args.token {
                options = options.with_bearer_token(token);
            }
            for host in args.allow_host {
                options = options.allow_host(host);
            }
            let http = McpHttpServer::start(server, options).await?;
            output::note(format_args!("toolsmith: serving MCP at {}", http.url()));
            http.wait().await.map_err(Failure::from)
        }
    }
}

/// The note for flags that only `--http` reads, given on stdio; `None` when none was.
fn ignored_on_stdio(flags: &[&str]) -> Option<String> {
    let (last, rest) = flags.split_last()?;
    let (named, verb) = if rest.is_empty() {
        (last.to_string(), "applies")
    } else {
        (format!("{} and {last}", rest.join(", ")), "apply")
    };
    Some(format!(
        "toolsmith: {named} {verb} to --http only; ignored on stdio"
    ))
}

/// A usage error naming `flag` when `options` (holding its value alone) are refused.
fn refused_as_usage(options: McpHttpOptions, flag: &str) -> Result<(), Failure> {
    options.validate().map_err(|error| match error {
        McpError::Config(reason) => Failure::usage(format!("{flag}: {reason}")),
        other => Failure::usage(format!("{flag}: {other}")),
    })
}

/// Reads `--http`: `127.0.0.1:8080`, `[::1]:8080`, `:8080` or `8080` (the last two on
/// 127.0.0.1). Read by clap, so that an address that is not one is a usage error.
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let port_only = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().map_err(|_| {
        "not an address: give IP:PORT (e.g. 127.0.0.1:8080) or a port (names such as \
         localhost are not looked up)"
            .to_owned()
    })
}
