//! [`McpClient`]: a connection to an MCP server (a child process over stdio, or streamable
//! HTTP) whose tools become Toolsmith tools ([`McpToolBridge`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceExt as _};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::{ExponentialBackoff, SseRetryPolicy};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::bounded_http_client::BoundedHttpClient;
use super::bridge::McpToolBridge;
use super::child::{ChildProcess, McpCommand};
use super::error::McpError;
use super::json_limits::JsonLimits;
use super::left_out::LeftOutTool;
use super::line_transport::{LineTransport, UnreadableLines};
use super::names::McpNames;
use super::remote_progress::{ProgressRoutes, ProgressTap};
use super::tool_list::{
    DEFAULT_MAX_LISTING_BYTES, DEFAULT_MAX_TOOLS, ListChangeListener, LiveToolList, ToolLister,
};
use crate::error_causes::with_causes;
use crate::redacted_url::{redacted_url, with_url_redacted};

/// The longest wait between two attempts to open a streamable HTTP server's event stream
/// again ([`McpTransport::http`]).
pub const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(30);

/// How the event streams of an HTTP server are opened again: rmcp's backoff from 1 s,
/// doubling, capped at [`MAX_RECONNECT_DELAY`].
fn reconnect_policy() -> Arc<dyn SseRetryPolicy> {
    let mut backoff = ExponentialBackoff::default();
    backoff.max_delay = Some(MAX_RECONNECT_DELAY);
    Arc::new(backoff)
}

/// The time limit of a bridged call unless [`McpClientOptions::with_call_timeout`] says
/// otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// How long connecting (start, handshake, first `tools/list`) may take by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`McpClient::close`] waits for the connection to end before it ends the child
/// regardless: rmcp drains answers for up to two seconds, then closes the transport.
const CONNECTION_END_WAIT: Duration = Duration::from_secs(3);

/// Where an MCP server is.
///
/// ```
/// use toolsmith::harness::mcp::{McpCommand, McpTransport};
///
/// let local = McpTransport::child(McpCommand::new("toolsmith").args(["serve", "--preset", "files"]));
/// let remote = McpTransport::http("http://127.0.0.1:8080/mcp").with_bearer_token("s3cret");
/// assert_eq!(remote.to_string(), "http://127.0.0.1:8080/mcp");
/// # drop(local);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum McpTransport {
    /// A server started as a child process, speaking on its stdin and stdout.
    ChildProcess(McpCommand),
    /// A server reached over streamable HTTP.
    Http {
        /// The server's MCP endpoint.
        url: String,
        /// Sent as `Authorization: Bearer <token>`.
        bearer_token: Option<String>,
    },
}

impl McpTransport {
    /// A server in a child process.
    #[must_use]
    pub fn child(command: McpCommand) -> Self {
        Self::ChildProcess(command)
    }

    /// A server at `url` over streamable HTTP (`http://`, or `https://` verified against the
    /// system's root certificates).
    ///
    /// The server's event stream, when it ends or fails, is opened again after 1 s, then
    /// after twice as long each time it fails again, but never more than
    /// [`MAX_RECONNECT_DELAY`] apart: a server back after an hour's outage is heard from
    /// within half a minute (rmcp's own policy doubles without end).
    #[must_use]
    pub fn http(url: impl Into<String>) -> Self {
        Self::Http {
            url: url.into(),
            bearer_token: None,
        }
    }

    /// Sends `token` as a bearer token (HTTP only; ignored for a child process).
    #[must_use]
    pub fn with_bearer_token(self, token: impl Into<String>) -> Self {
        match self {
            Self::Http { url, .. } => Self::Http {
                url,
                bearer_token: Some(token.into()),
            },
            other => other,
        }
    }
}

impl std::fmt::Debug for McpTransport {
    // Whether there is a token, never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ChildProcess(command) => f.debug_tuple("ChildProcess").field(command).finish(),
            Self::Http { url, bearer_token } => f
                .debug_struct("Http")
                .field("url", &redacted_url(url))
                .field("bearer_token", &bearer_token.as_ref().map(|_| "<redacted>"))
                .finish(),
        }
    }
}

impl std::fmt::Display for McpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ChildProcess(command) => write!(f, "`{command}`"),
            // Errors show it, and are logged: never a password in the URL.
            Self::Http { url, .. } => f.write_str(&redacted_url(url)),
        }
    }
}

/// How an [`McpClient`] connects and names what it finds.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::harness::mcp::{McpClientOptions, McpNames};
///
/// let options = McpClientOptions::default()
///     .with_prefix("github")
///     .with_call_timeout(Some(Duration::from_secs(10)))
///     .with_names(McpNames::new());
/// # drop(options);
/// ```
#[derive(Debug, Clone)]
pub struct McpClientOptions {
    names: McpNames,
    prefix: Option<String>,
    category: String,
    call_timeout: Option<Duration>,
    connect_timeout: Duration,
    limits: JsonLimits,
    max_tools: usize,
    max_listing_bytes: usize,
}

impl Default for McpClientOptions {
    fn default() -> Self {
        Self {
            names: McpNames::shared(),
            prefix: None,
            category: "mcp".to_owned(),
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            limits: JsonLimits::default(),
            max_tools: DEFAULT_MAX_TOOLS,
            max_listing_bytes: DEFAULT_MAX_LISTING_BYTES,
        }
    }
}

impl McpClientOptions {
    /// Names tools in `names` (by default the process-wide [`McpNames::shared`]).
    #[must_use]
    pub fn with_names(mut self, names: McpNames) -> Self {
        self.names = names;
        self
    }

    /// Puts `prefix_` before every tool name (`github` → `github_create_issue`).
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// The category the tools are given (default `mcp`), which `shed` searches too.
    #[must_use]
    pub fn with_category(mut self, category: impl Into<String>) -> Self {
        self.category = category.into();
        self
    }

    /// The time limit of each call (`None`: none of its own; a manager's limit still
    /// applies). A call past it is dropped and the server told to cancel it. It is each
    /// bridged tool's own time limit, kept by the [`ToolCallManager`] that runs the call, as
    /// every tool's is: a bridge's `execute` called directly, outside a manager, has none.
    ///
    /// [`ToolCallManager`]: toolsmith_core::ToolCallManager
    #[must_use]
    pub fn with_call_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long starting the server, the handshake and listing its tools may take; also the
    /// time limit of each later listing.
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Limits on the messages read from the server (default [`JsonLimits::default`]), all of
    /// them checked before rmcp reads a message: each line from a child process, each body
    /// and each event over streamable HTTP. An answer past one fails its call at once, naming
    /// the limit (but for an event past `max_bytes`, which ends its stream, and with it the
    /// call it would answer); any other message past one is dropped, and logged.
    #[must_use]
    pub fn with_limits(mut self, limits: JsonLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The most tools read from the server's list (default [`DEFAULT_MAX_TOOLS`]); a list
    /// that goes on past it (or past as many pages) fails to list, rather than grow without
    /// end.
    #[must_use]
    pub fn with_max_tools(mut self, max_tools: usize) -> Self {
        self.max_tools = max_tools;
        self
    }

    /// The most bytes of tools kept from the server's list, counted as the JSON of each tool
    /// (its name, description, schemas and annotations; default
    /// [`DEFAULT_MAX_LISTING_BYTES`]). A list past it fails to list, naming the tool at which
    /// it passed, and a listing again keeps the previous list.
    #[must_use]
    pub fn with_max_listing_bytes(mut self, bytes: usize) -> Self {
        self.max_listing_bytes = bytes;
        self
    }
}

/// What the bridges share: the running connection.
struct Connection {
    peer: Peer<RoleClient>,
    /// The command or URL, for messages.
    label: Arc<str>,
    service: Mutex<Option<RunningService<RoleClient, ListChangeListener>>>,
    child: Mutex<Option<ChildProcess>>,
    /// The task that lists the tools again after `list_changed`.
    follower: JoinHandle<()>,
}

impl Connection {
    /// `error`, the first listing's, with the exit status of a server in a child process that
    /// exited meanwhile (a server that starts, answers the handshake, then fails on the first
    /// request): the closed connection alone does not say why. The child is taken out (the
    /// connection is not used again) and dropped with it, killed if it still runs, and reaped.
    async fn with_exit_report(&self, error: McpError) -> McpError {
        let child = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(mut child) = child else {
            return error;
        };
        match (child.exit_report("its tools were listed").await, error) {
            (
                Some(exit),
                McpError::Request {
                    request,
                    peer,
                    reason,
                },
            ) => McpError::Request {
                request,
                peer,
                reason: and_also(reason, Some(exit)),
            },
            (_, error) => error,
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.follower.abort();
        // The service's own drop cancels it (closing the child's stdin); the child is then
        // killed and reaped with its process group.
        drop(
            self.service
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        if let Some(mut child) = self
            .child
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            child.kill_now();
        }
    }
}

/// A connection whose handshake is done, before its first listing.
struct Opened {
    service: RunningService<RoleClient, ListChangeListener>,
    /// The server's process, when it is a child.
    child: Option<ChildProcess>,
    /// Signalled when the server's tool list changed.
    changed: Arc<tokio::sync::Notify>,
    /// Where the connection routes the server's progress for the bridges' calls.
    progress: ProgressRoutes,
}

static NEXT_CLIENT_ID: AtomicU64 = AtomicU64::new(1);

/// A connection to an MCP server, whose tools it offers as Toolsmith tools.
///
/// [`connect`](Self::connect) starts the server (or reaches it over HTTP), runs the MCP
/// handshake and lists the server's tools (within the options' bounds on tools and bytes);
/// [`tools`](Self::tools) gives them as [`McpToolBridge`]s, which implement `ToolImpl` and
/// so go into a `ToolShed` or a `ToolCallManager` like any tool (and `shed` finds them).
/// A tool registration would refuse, a tool whose definition does not read, or a name listed
/// twice, is left out of them, with a warning; [`left_out`](Self::left_out) says which and
/// why.
///
/// A server in a child process never outlives its client: dropping the client (or a failed
/// or timed-out connect) kills the server's whole process group and reaps it;
/// [`close`](Self::close) first lets it exit on its own. Once the client is gone, its bridges
/// answer with a [`Network`](toolsmith_core::ToolError::Network) error.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolsmith::ToolCallManager;
/// use toolsmith::harness::mcp::{McpClient, McpCommand, McpTransport};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let transport = McpTransport::child(McpCommand::new("npx").args(["-y", "my-mcp-server"]));
/// let client = McpClient::connect(transport).await?;
/// let manager = ToolCallManager::new("session");
/// for tool in client.tools() {
///     manager.register(Arc::new(tool))?;
/// }
/// // … run the session; then:
/// client.close().await;
/// # Ok(())
/// # }
/// ```
#[must_use = "dropping the client closes its connection and ends its server process"]
pub struct McpClient {
    connection: Arc<Connection>,
    lister: ToolLister,
    list: Arc<LiveToolList>,
    server: Option<Implementation>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.connection.label)
            .field(
                "tools",
                &self
                    .list
                    .tools()
                    .iter()
                    .map(McpToolBridge::name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Connects with the default options (see [`McpClientOptions`]).
    pub async fn connect(transport: McpTransport) -> Result<Self, McpError> {
        Self::connect_with(transport, McpClientOptions::default()).await
    }

    /// Connects: starts the server (or reaches it), runs the handshake and lists its tools,
    /// all within the connect timeout. On any failure a started child is killed and reaped.
    pub async fn connect_with(
        transport: McpTransport,
        options: McpClientOptions,
    ) -> Result<Self, McpError> {
        let label = transport.to_string();
        let limit = options.connect_timeout;
        let unreadable = UnreadableLines::default();
        match tokio::time::timeout(limit, Self::open(transport, &options, &unreadable)).await {
            Ok(opened) => opened,
            // The future was dropped, and with it any child it started (killed and reaped).
            Err(_) => Err(McpError::Timeout {
                what: format!("connecting to the MCP server {label}"),
                after: limit,
                seen: unreadable.account(),
            }),
        }
    }

    /// Connects to a server over `read` and `write`, one JSON-RPC message a line: a socket,
    /// a pipe, one end of [`tokio::io::duplex`] whose other end an [`McpServer`] serves
    /// ([`serve_until_closed`], [`serve_io`]) in this process, in a test say. As [`connect_with`](Self::connect_with)
    /// otherwise: the handshake and the first listing within the connect timeout, the
    /// server's messages checked against the options' [`JsonLimits`] before rmcp reads them.
    /// `peer` names the server in errors and in the bridges' descriptions.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::harness::mcp::{
    ///     JsonLimits, McpClient, McpClientOptions, McpServer, serve_until_closed,
    /// };
    /// use toolsmith::{ToolCallManager, ToolImpl as _, tool_fn};
    ///
    /// /// Adds two numbers.
    /// #[tool_fn]
    /// fn add(a: i64, b: i64) -> i64 {
    ///     a + b
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let manager = Arc::new(ToolCallManager::new("served"));
    /// manager.register(Arc::new(Add)).unwrap();
    /// let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    /// let (server_read, server_write) = tokio::io::split(server_end);
    /// let serving = tokio::spawn(serve_until_closed(
    ///     McpServer::new(manager),
    ///     server_read,
    ///     server_write,
    ///     JsonLimits::for_server(),
    /// ));
    ///
    /// let (read, write) = tokio::io::split(client_end);
    /// let client = McpClient::connect_io("in-process", read, write, McpClientOptions::default())
    ///     .await
    ///     .unwrap();
    /// assert_eq!(client.tools()[0].definition().name(), "add");
    /// // Closing the connection ends the server's side too.
    /// client.close().await;
    /// serving.await.unwrap().unwrap();
    /// # }
    /// ```
    ///
    /// [`McpServer`]: super::McpServer
    /// [`serve_io`]: super::serve_io
    /// [`serve_until_closed`]: super::serve_until_closed
    pub async fn connect_io<R, W>(
        peer: impl Into<String>,
        read: R,
        write: W,
        options: McpClientOptions,
    ) -> Result<Self, McpError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let label = peer.into();
        let limit = options.connect_timeout;
        // Lines that are not messages (a peer that is no MCP server, or logs on the same
        // stream) are counted, for the error should connecting fail.
        let unreadable = UnreadableLines::default();
        let seen = || unreadable.account_on("the connection");
        let opened = async {
            let (listener, changed) = ListChangeListener::new(client_config());
            let progress = ProgressRoutes::default();
            let transport = LineTransport::<RoleClient, _, _>::new(read, write)
                .with_limits(options.limits)
                .with_unreadable_lines(unreadable.clone());
            let service = listener
                .serve(ProgressTap::new(transport, progress.clone()))
                .await
                .map_err(|error| McpError::Handshake {
                    peer: label.clone(),
                    reason: and_also(handshake_reason(&error), seen()),
                })?;
            let connection = Opened {
                service,
                child: None,
                changed,
                progress,
            };
            Self::listing(connection, label.clone(), &options).await
        };
        match tokio::time::timeout(limit, opened).await {
            Ok(opened) => opened,
            Err(_) => Err(McpError::Timeout {
                what: format!("connecting to the MCP server {label}"),
                after: limit,
                seen: seen(),
            }),
        }
    }

    /// Connects to `transport`; the lines a child server writes that are not messages are
    /// counted in `unreadable`, for the error should connecting fail.
    async fn open(
        transport: McpTransport,
        options: &McpClientOptions,
        unreadable: &UnreadableLines,
    ) -> Result<Self, McpError> {
        let label = transport.to_string();
        let handshake =
            |error: rmcp::service::ClientInitializeError| handshake_error(&label, &error);
        let (listener, changed) = ListChangeListener::new(client_config());
        let progress = ProgressRoutes::default();
        let (service, child) = match transport {
            McpTransport::ChildProcess(command) => {
                let (mut child, stdout, stdin) = ChildProcess::spawn(&command)?;
                let transport = LineTransport::<RoleClient, _, _>::new(stdout, stdin)
                    .with_limits(options.limits)
                    .with_unreadable_lines(unreadable.clone());
                // Should the handshake fail, `child` is dropped here: killed and reaped.
                let service = match listener
                    .serve(ProgressTap::new(transport, progress.clone()))
                    .await
                {
                    Ok(service) => service,
                    // A server that exited: its status says why, rmcp's closed pipe does not.
                    Err(error) => {
                        let reason = match child.exit_report("the handshake was done").await {
                            Some(exit) => exit,
                            None => handshake_reason(&error),
                        };
                        return Err(McpError::Handshake {
                            peer: label.clone(),
                            reason: and_also(reason, unreadable.account()),
                        });
                    }
                };
                (service, Some(child))
            }
            McpTransport::Http { url, bearer_token } => {
                // Bodies and events are checked against all of `limits` by our HTTP client
                // before rmcp reads them; rmcp passes these byte limits back to it.
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .max_json_response_size(options.limits.max_bytes)
                    .max_sse_event_size(options.limits.max_bytes);
                config.retry_config = reconnect_policy();
                if let Some(token) = bearer_token {
                    config = config.auth_header(token);
                }
                let client = BoundedHttpClient::new(http_client(&url)?, options.limits);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let service = listener
                    .serve(ProgressTap::new(transport, progress.clone()))
                    .await
                    .map_err(handshake)?;
                (service, None)
            }
        };
        let connection = Opened {
            service,
            child,
            changed,
            progress,
        };
        Self::listing(connection, label, options).await
    }

    /// The client of a connection whose handshake is done, once its first listing is.
    async fn listing(
        opened: Opened,
        label: String,
        options: &McpClientOptions,
    ) -> Result<Self, McpError> {
        let Opened {
            service,
            child,
            changed,
            progress,
        } = opened;
        let server = service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.clone());
        let lister = ToolLister {
            peer: service.peer().clone(),
            label: Arc::from(label.as_str()),
            names: options.names.clone(),
            owner: NEXT_CLIENT_ID.fetch_add(1, Ordering::Relaxed),
            prefix: options.prefix.clone(),
            category: options.category.clone(),
            call_timeout: options.call_timeout,
            max_tools: options.max_tools,
            max_listing_bytes: options.max_listing_bytes,
            list_timeout: options.connect_timeout,
            progress,
        };
        let list = LiveToolList::new();
        let follower = LiveToolList::follow(&list, lister.clone(), changed);
        let connection = Arc::new(Connection {
            peer: service.peer().clone(),
            label: Arc::clone(&lister.label),
            service: Mutex::new(Some(service)),
            child: Mutex::new(child),
            follower,
        });
        let client = Self {
            connection,
            lister,
            list,
            server,
        };
        if let Err(error) = client.refresh_tools().await {
            return Err(client.connection.with_exit_report(error).await);
        }
        Ok(client)
    }

    /// Lists the server's tools again now. A client does this by itself each time the
    /// server sends `notifications/tools/list_changed`; tools listed before keep their names,
    /// and the names of tools no longer listed are released (see [`McpNames`]).
    /// Of listings made at once, the one that started last gives the list, whatever order
    /// their answers come in.
    pub async fn refresh_tools(&self) -> Result<(), McpError> {
        let ticket = self.list.start_listing();
        self.list
            .replace(ticket, self.lister.list().await?, &self.lister);
        Ok(())
    }

    /// Watches the tool list: the value changes after each new listing (on the server's
    /// `list_changed`, or [`refresh_tools`](Self::refresh_tools)), when
    /// [`tools`](Self::tools) has the new list, e.g. to register tools that appeared.
    ///
    /// ```no_run
    /// # async fn run(client: toolsmith::harness::mcp::McpClient) {
    /// let mut updates = client.tool_list_updates();
    /// while updates.changed().await.is_ok() {
    ///     println!("the server now has {} tools", client.tools().len());
    /// }
    /// # }
    /// ```
    pub fn tool_list_updates(&self) -> watch::Receiver<u64> {
        self.list.subscribe()
    }

    /// The server's tools, as tools for a `ToolShed` or `ToolCallManager`: every tool of
    /// the newest listing but those [`left_out`](Self::left_out), so that each registers
    /// (unless a manager holds its name already).
    pub fn tools(&self) -> Vec<McpToolBridge> {
        self.list.tools()
    }

    /// The tools of the newest listing left out of [`tools`](Self::tools), in the server's
    /// order, each with why: a tool whose definition does not read as an MCP tool (no
    /// `name`, an `inputSchema` that is not an object, a hint that is not a boolean: named
    /// by its place in the listing when it has no string name, with the field that is
    /// wrong), a name the server lists again (its first listing is the tool), and a tool
    /// registration would refuse (a schema that does not compile, e.g. a `pattern` that is no
    /// regular expression or a `$ref` to another document, which is never fetched; an
    /// `inputSchema` whose root is typed other than `object`, which no call's arguments could
    /// pass). Each is also logged as a warning, on every listing. Empty when every tool
    /// listed is in `tools`; a listing after `list_changed` (or
    /// [`refresh_tools`](Self::refresh_tools)) that has a tool fixed gives it a bridge.
    ///
    /// ```no_run
    /// # async fn run(client: toolsmith::harness::mcp::McpClient) {
    /// for tool in client.left_out() {
    ///     eprintln!("not offered: {tool}");
    /// }
    /// # }
    /// ```
    pub fn left_out(&self) -> Vec<LeftOutTool> {
        self.list.left_out()
    }

    /// The server's name and version, as it gave them.
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server.as_ref()
    }

    /// The process id of the server's child process, while it runs.
    pub fn child_id(&self) -> Option<u32> {
        self.connection
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(ChildProcess::id)
    }

    /// The rmcp peer, for requests the bridges do not make.
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.connection.peer
    }

    /// Closes the connection: the server's stdin is closed, it gets two seconds to exit,
    /// then `SIGTERM`, then `SIGKILL`; its process group is ended and it is reaped. A server
    /// that no longer reads its stdin is ended all the same, within a few seconds more.
    pub async fn close(self) {
        let service = self
            .connection
            .service
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.connection.follower.abort();
        let child = self
            .connection
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(service) = service {
            if child.is_some() {
                // A write the child does not read holds the transport, and closing it would
                // wait for that write for ever; ending the child below ends the write.
                let _ = tokio::time::timeout(CONNECTION_END_WAIT, service.cancel()).await;
            } else {
                // rmcp bounds the end of an HTTP connection itself (its DELETE included).
                let _ = service.cancel().await;
            }
        }
        if let Some(mut child) = child {
            child.shutdown().await;
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.lister.names.release(self.lister.owner);
        // `connection` ends here: the service is cancelled, the child killed and reaped.
    }
}

/// A failed handshake with the server `label`.
fn handshake_error(label: &str, error: &rmcp::service::ClientInitializeError) -> McpError {
    McpError::Handshake {
        peer: label.to_owned(),
        reason: handshake_reason(error),
    }
}

/// `reason`, then what else was seen that may say why (`also`), when anything was.
fn and_also(reason: String, also: Option<String>) -> String {
    match also {
        Some(also) => format!("{reason}; {also}"),
        None => reason,
    }
}

/// What this client tells servers about itself.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolsmith", env!("CARGO_PKG_VERSION")),
    )
}

/// The HTTP client of a streamable-HTTP connection: TLS set up explicitly (see
/// `crate::tls`), no idle pooling (rmcp's own choice: a reused connection whose last body
/// was not read to the end stalls ~40 ms on delayed ACKs), and no redirects (one would carry
/// the session id and bearer token elsewhere).
fn http_client(url: &str) -> Result<reqwest::Client, McpError> {
    let tls = crate::tls::client_config(url.starts_with("https://")).map_err(McpError::Config)?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("toolsmith/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| {
            McpError::Config(format!(
                "cannot build the HTTP client for {}: {error}",
                redacted_url(url)
            ))
        })
}

/// What a failed handshake says: a transport's failure as its causes ("Connection refused"),
/// not rmcp's frame around them, which names the transport's Rust type.
fn handshake_reason(error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;

    match error {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            let failure = error.error.as_ref();
            // The HTTP client's own error keeps its causes; rmcp's wrapper around it does not.
            // reqwest's message quotes the URL it was asked: its query's values hidden.
            let causes = match failure.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                Some(StreamableHttpError::Client(client)) => {
                    with_url_redacted(with_causes(client), client.url().map(reqwest::Url::as_str))
                }
                _ => with_causes(failure),
            };
            format!("{causes} (rmcp: {context})")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{MAX_RECONNECT_DELAY, reconnect_policy};

    /// rmcp's backoff doubles without end (after ten failures a stream waited 17 minutes,
    /// after twenty, twelve days); ours stops at half a minute.
    #[test]
    fn reconnects_back_off_to_half_a_minute_at_most() {
        let policy = reconnect_policy();
        let waits: Vec<_> = (0..7).map(|times| policy.retry(times)).collect();
        let seconds = |s| Some(Duration::from_secs(s));
        assert_eq!(
            waits,
            [
                seconds(1),
                seconds(2),
                seconds(4),
                seconds(8),
                seconds(16),
                seconds(30),
                seconds(30)
            ]
        );
        assert_eq!(policy.retry(40), Some(MAX_RECONNECT_DELAY));
        assert_eq!(policy.retry(usize::MAX), Some(MAX_RECONNECT_DELAY));
    }
}
