//! [`McpHttpServer`]: an [`McpServer`] over streamable HTTP, mounted on axum.
//!
//! Bound to 127.0.0.1 by default. Every request's `Host` must name this machine (or a host
//! added with [`McpHttpOptions::allow_host`]) and a browser's `Origin` must be a local one
//! (or one added with [`McpHttpOptions::allow_origin`]), which defeats DNS rebinding; with a
//! bearer token set, a request without it gets `401` before its body is read (and before
//! its `Host` is looked at). At most [`McpHttpOptions::with_max_sessions`] sessions are open
//! at once; past that, an `initialize` with an allowed `Host` and `Origin` gets `503`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::SessionConfig;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use toolsmith_core::CancellationToken;

use super::error::McpError;
use super::json_limits::{INVALID_REQUEST, JsonLimits, PARSE_ERROR};
use super::rebinding_guard::McpService;
use super::server::{McpServer, cut};
use super::session_cap::{CappedSessionManager, SessionCapState, refuse_sessions_past_cap};
use super::unreadable::{Envelope, envelope_problem};

/// How many MCP sessions an [`McpHttpServer`] keeps open at once by default
/// ([`McpHttpOptions::with_max_sessions`]).
///
/// Each `initialize` without a session opens one, and a client that goes away without
/// `DELETE` leaves its session open until its idle timeout (5 minutes by default); unbounded, a client
/// opening sessions in a loop exhausts memory. A thousand is far more than the clients of one
/// server hold (one session each, a few for a client that reconnects), and few enough that
/// their workers, channels and per-session tool lists stay small.
pub const DEFAULT_MAX_SESSIONS: usize = 1_000;

/// How long a client of an [`McpHttpServer`] may take to send a request's head, and then its
/// body, by default ([`McpHttpOptions::with_request_read_timeout`]): hyper's own default for
/// the head, where a timer is given it. Ample for a message of 8 MiB on a slow link.
pub const DEFAULT_REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how an [`McpHttpServer`] listens.
///
/// ```
/// use toolsmith::harness::mcp::McpHttpOptions;
///
/// let options = McpHttpOptions::default()
///     .with_addr("127.0.0.1:8080".parse().unwrap())
///     .with_bearer_token("s3cret")
///     .allow_host("tools.example")
///     .with_max_sessions(100);
/// assert_eq!(options.addr().port(), 8080);
/// assert_eq!(options.path(), "/mcp");
/// assert_eq!(options.max_sessions(), 100);
/// ```
#[derive(Clone)]
pub struct McpHttpOptions {
    addr: SocketAddr,
    path: String,
    bearer_token: Option<String>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    limits: JsonLimits,
    max_sessions: usize,
    session_idle_timeout: Option<Duration>,
    request_read_timeout: Duration,
}

/// How long an MCP session of an [`McpHttpServer`] may see no traffic before it ends, by
/// default ([`McpHttpOptions::with_session_idle_timeout`]): rmcp's own default.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = SessionConfig::DEFAULT_KEEP_ALIVE;

impl std::fmt::Debug for McpHttpOptions {
    // Whether there is a token, never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpOptions")
            .field("addr", &self.addr)
            .field("path", &self.path)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("limits", &self.limits)
            .field("max_sessions", &self.max_sessions)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("request_read_timeout", &self.request_read_timeout)
            .finish()
    }
}

impl Default for McpHttpOptions {
    /// 127.0.0.1 on a port the system picks, at `/mcp`, no token.
    fn default() -> Self {
        Self {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            path: "/mcp".to_owned(),
            bearer_token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            limits: JsonLimits::for_server(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            request_read_timeout: DEFAULT_REQUEST_READ_TIMEOUT,
        }
    }
}

impl McpHttpOptions {
    /// Listens on `addr` (port 0: any free port).
    ///
    /// Bound to an address of the network, the server accepts that address in `Host`. Bound
    /// to every address (`0.0.0.0`, `::`), it knows only the loopback names: a client
    /// reaching it by another name or address needs that one added with
    /// [`allow_host`](Self::allow_host) (a warning at start says so).
    #[must_use]
    pub fn with_addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// Serves MCP at `path` (default `/mcp`).
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Requires `Authorization: Bearer <token>` on every request (the scheme in any case, as
    /// RFC 9110 has it). Spaces around `token` are not part of it (HTTP trims a header's
    /// value, so no client could send them). An empty or blank token, or one holding a
    /// character no header can carry (a line break, a character that is not ASCII), is
    /// refused: [`McpHttpServer::start`] (and [`validate`](Self::validate)) fails with
    /// [`McpError::Config`], and a [`router`] with one refuses every request, rather than
    /// take the token a request without `Authorization` presents (none) for it.
    #[must_use]
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Also accepts requests whose `Host` is `host` (a name or address, or `name:port`),
    /// compared exactly: no wildcards. One that no request's `Host` could be (empty, `a b`,
    /// a URL such as `http://x`, `*.example.com`, port 0) is refused by
    /// [`McpHttpServer::start`] (and [`validate`](Self::validate)).
    #[must_use]
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Also accepts browser requests whose `Origin` is `origin` (`https://app.example:443`,
    /// `http://host:*`).
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// The largest request body accepted (413 beyond; default 8 MiB, the `max_bytes` of
    /// [`with_limits`](Self::with_limits)).
    #[must_use]
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.limits = self.limits.with_max_bytes(bytes);
        self
    }

    /// Limits on each request body (default [`JsonLimits::for_server`]): past `max_bytes` it is
    /// answered `413`; nested deeper than `max_depth`, holding more than `max_values` values
    /// or one of serde_json's private keys, `400` with a JSON-RPC error naming the limit
    /// (`-32700` too deep, else `-32600`; with the request's id when it can be read), before
    /// rmcp reads it.
    #[must_use]
    pub fn with_limits(mut self, limits: JsonLimits) -> Self {
        self.limits = limits;
        self
    }

    /// At most `sessions` MCP sessions open at once (default [`DEFAULT_MAX_SESSIONS`]).
    ///
    /// Past it, an `initialize` is answered `503 Service Unavailable` with a JSON-RPC error
    /// naming the limit, and the open sessions go on; a place is freed when a session ends
    /// (the client's `DELETE`, the idle timeout, shutdown). Requests of the stateless
    /// revision (2026-07-28) open no session and are served whatever the count; `0` serves
    /// only those.
    #[must_use]
    pub fn with_max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Ends a session that has been idle for `timeout` (default
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`]; `None`: never, the session lasting until the
    /// client's `DELETE` or shutdown, and holding its place under
    /// [`with_max_sessions`](Self::with_max_sessions) till then).
    ///
    /// A session is idle while none of its requests is running and no message passes: a call
    /// that runs longer than the timeout keeps its session, and the timeout counts from its
    /// answer on. A client that goes away during a call stops counting as busy once the
    /// server finds the connection gone (at the latest at the next SSE keep-alive, every 15
    /// seconds). Sessions that a client leaves without `DELETE` end this way.
    #[must_use]
    pub fn with_session_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's head (its request line and headers),
    /// and then its body (default [`DEFAULT_REQUEST_READ_TIMEOUT`]; at least a millisecond;
    /// a century or more, such as `Duration::MAX`, is no limit).
    ///
    /// Past it, a head is dropped with its connection and a body answered `408 Request
    /// Timeout`, so that a client sending a byte a second (or stopping half-way) cannot hold
    /// a connection and the task serving it for ever. The time a call runs, or an answer
    /// streams, is not counted. The head's limit is [`McpHttpServer`]'s; a [`router`] mounted
    /// in a server of your own keeps the body's, and the head's is that server's to set.
    #[must_use]
    pub fn with_request_read_timeout(mut self, timeout: Duration) -> Self {
        self.request_read_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The address to listen on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The path MCP is served at.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The most MCP sessions open at once.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Checks what [`McpHttpServer::start`] checks before it binds: settings no request could
    /// ever meet, refused rather than served with every request refused.
    ///
    /// # Errors
    ///
    /// [`McpError::Config`] naming the setting: a bearer token that is empty or blank, or
    /// holds a character an HTTP header cannot carry (a control character such as a line
    /// break, or one that is not ASCII; the token itself is not quoted); an allowed host
    /// that is empty or blank, or is not a host name or address with perhaps a port (`a b`,
    /// `http://x`, `x/y`, `user@x`), or one no `Host` is compared equal to: a wildcard
    /// (`*`, `*.example.com`; hosts are compared exactly) or port 0 (`x:0`); a path a
    /// request cannot have.
    ///
    /// ```
    /// use toolsmith::harness::mcp::McpHttpOptions;
    ///
    /// assert!(McpHttpOptions::default().allow_host("tools.lan:8080").validate().is_ok());
    /// assert!(McpHttpOptions::default().allow_host("http://tools.lan").validate().is_err());
    /// assert!(McpHttpOptions::default().with_bearer_token("s3\ncret").validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), McpError> {
        if let Some(token) = &self.bearer_token {
            token_problem(token).map_or(Ok(()), |problem| {
                Err(McpError::Config(format!("the bearer token {problem}")))
            })?;
        }
        for host in &self.allowed_hosts {
            if let Some(problem) = host_problem(host) {
                return Err(McpError::Config(problem));
            }
        }
        match path_problem(&self.path) {
            Some(problem) => Err(McpError::Config(format!(
                "the MCP path {:?} {problem}",
                self.path
            ))),
            None => Ok(()),
        }
    }

    /// rmcp's configuration for these options, once bound to `bound`.
    fn service_config(
        &self,
        bound: SocketAddr,
        shutdown: CancellationToken,
    ) -> StreamableHttpServerConfig {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if !bound.ip().is_unspecified() && !bound.ip().is_loopback() {
            hosts.push(bound.ip().to_string());
        }
        hosts.extend(self.allowed_hosts.iter().cloned());
        let mut origins: Vec<String> = vec![
            "http://localhost:*".into(),
            "http://127.0.0.1:*".into(),
            "http://[::1]:*".into(),
        ];
        origins.extend(self.allowed_origins.iter().cloned());
        StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(self.limits.max_bytes)
            .with_cancellation_token(shutdown)
    }
}

/// An [`McpServer`] listening for streamable HTTP.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolsmith::ToolCallManager;
/// use toolsmith::harness::mcp::{McpHttpOptions, McpHttpServer, McpServer};
///
/// # async fn run() -> Result<(), toolsmith::harness::mcp::McpError> {
/// let server = McpServer::new(Arc::new(ToolCallManager::new("web")));
/// let http = McpHttpServer::start(server, McpHttpOptions::default()).await?;
/// println!("MCP at {}", http.url());
/// http.shutdown().await
/// # }
/// ```
#[derive(Debug)]
#[must_use = "the server goes on serving, but without it cannot be shut down or waited for"]
pub struct McpHttpServer {
    local_addr: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
}

impl McpHttpServer {
    /// Binds `options.addr()` and serves `server` there (one [`McpServer::for_connection`]
    /// per MCP session), in a task of the current runtime.
    pub async fn start(server: McpServer, options: McpHttpOptions) -> Result<Self, McpError> {
        options.validate()?;
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|e| McpError::io(format!("binding {}", options.addr), e))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| McpError::io("reading the bound address", e))?;
        if !local_addr.ip().is_loopback() && options.bearer_token.is_none() {
            tracing::warn!(
                %local_addr,
                "serving MCP beyond this machine without a bearer token: anyone who can reach \
                 the port can call the tools"
            );
        }
        if local_addr.ip().is_unspecified() && options.allowed_hosts.is_empty() {
            tracing::warn!(
                %local_addr,
                "serving MCP on every address, but a request's Host must be a loopback name \
                 (localhost, 127.0.0.1, ::1): allow the names clients use with allow_host \
                 (toolsmith serve --allow-host)"
            );
        }
        let shutdown = CancellationToken::new();
        let app = router(server, &options, local_addr, shutdown.clone());
        let task = tokio::spawn(serve_connections(
            listener,
            app,
            shutdown.clone(),
            options.request_read_timeout,
        ));
        Ok(Self {
            local_addr,
            path: options.path,
            shutdown,
            task,
        })
    }

    /// The address listened on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL clients connect to, e.g. `http://127.0.0.1:8080/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Stops accepting, ends the sessions, and waits for the server task.
    pub async fn shutdown(self) -> Result<(), McpError> {
        self.shutdown.cancel();
        self.wait().await
    }

    /// Runs until the server stops (after [`shutdown`](Self::shutdown) from a clone of its
    /// token, or an error).
    pub async fn wait(self) -> Result<(), McpError> {
        match self.task.await {
            Ok(result) => {
                result.map_err(|e| McpError::io(format!("serving MCP on {}", self.local_addr), e))
            }
            Err(join) => Err(McpError::io(
                format!("serving MCP on {}", self.local_addr),
                std::io::Error::other(join),
            )),
        }
    }

    /// The token that stops the server when cancelled.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// Serves `app` on each connection `listener` accepts until `shutdown` is cancelled, then
/// ends the connections gracefully (a request running is answered) and returns once they
/// have ended: axum's `serve`, but with a timer, which hyper needs to drop a connection whose
/// request head has not arrived within `head_timeout` (axum's gives it none: no limit).
async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: CancellationToken,
    head_timeout: Duration,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto::Builder;
    use hyper_util::service::TowerToHyperService;

    // Each connection's task holds a sender: once all are dropped, every connection ended.
    let (open, mut all_ended) = tokio::sync::mpsc::channel::<()>(1);
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // The client gave up before it was accepted: nothing wrong here.
            Err(error) if is_connection_error(&error) => continue,
            // Out of file descriptors, say: wait rather than spin, as axum does.
            Err(error) => {
                tracing::error!(%error, "accepting an MCP connection failed; retrying in 1 s");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let app = app.clone();
        let shutdown = shutdown.clone();
        let open = open.clone();
        tokio::spawn(async move {
            let _open = open;
            let mut builder = Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(head_limit(head_timeout));
            let connection =
                builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                // A failed connection (a client gone, a head too slow) is the client's affair.
                _ = connection.as_mut() => return,
                () = shutdown.cancelled() => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        });
    }
    drop(listener);
    drop(open);
    let _ = all_ended.recv().await;
    Ok(())
}

/// A read timeout at least this long is no limit: hyper adds the head's timeout to the clock
/// unchecked (`Duration::MAX` panicked in each connection's task), and a century is far
/// inside what the clock holds.
const NO_READ_LIMIT_FROM: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The limit on a request head's reading to give hyper for `timeout`: none past
/// [`NO_READ_LIMIT_FROM`].
fn head_limit(timeout: Duration) -> Option<Duration> {
    (timeout < NO_READ_LIMIT_FROM).then_some(timeout)
}

/// Why no request could present `token` as its bearer token, if none could. A request's
/// `Authorization` is read as visible ASCII, spaces and tabs (what else a header may hold is
/// not read as text), and the spaces around the token are not part of it.
fn token_problem(token: &str) -> Option<String> {
    let token = token.trim();
    if token.is_empty() {
        return Some("is empty: give a token, or none to serve without one".to_owned());
    }
    let (at, bad) = token
        .chars()
        .enumerate()
        .find(|&(_, c)| !matches!(c, ' '..='~' | '\t'))?;
    // The token is a secret: only the offending character is shown, and only a control one.
    let what = if bad.is_ascii_control() {
        format!("a control character ({})", bad.escape_default())
    } else {
        "a character that is not ASCII".to_owned()
    };
    Some(format!(
        "holds {what} at character {}, which an HTTP header cannot carry: no request could \
         present it",
        at + 1
    ))
}

/// Why no request's `Host` could be `host`, if none could: rmcp reads a `Host` as an
/// authority (`name`, `name:port`, `[v6]:port`), and compares it exactly (no wildcards)
/// with an allowed host read the same way, or as it is (an IPv6 address without brackets,
/// as `::1`, which matches it on any port).
fn host_problem(host: &str) -> Option<String> {
    let trimmed = host.trim();
    if trimmed.is_empty() {
        return Some(
            "an allowed host is empty: give the name (or name:port) clients reach this machine \
             by"
            .to_owned(),
        );
    }
    if trimmed.parse::<std::net::Ipv6Addr>().is_ok() {
        return None;
    }
    let why = match axum::http::uri::Authority::try_from(trimmed) {
        Ok(_) if trimmed.contains('@') => "names a user (`user@`), which a Host never does",
        Ok(_) if trimmed.contains('*') => {
            "holds a `*`: hosts are compared exactly, with no wildcards (name each host)"
        }
        Ok(authority) if authority.port_u16() == Some(0) => {
            "has port 0, which is no port a request names (give the port clients reach, or \
             none for any)"
        }
        // Read with no port, it would match the name on every port.
        Ok(authority) if authority.port_u16().is_none() && authority.host() != trimmed => {
            "has a port that is not one (0 to 65535)"
        }
        Ok(_) => return None,
        Err(_) if trimmed.contains("://") => {
            "is a URL: give its host alone (`name` or `name:port`)"
        }
        Err(_) => {
            "is not a host name or address, with perhaps a port (`name`, `name:port`, `[::1]:8080`)"
        }
    };
    Some(format!(
        "the allowed host {host:?} {why}: no request's Host could match it"
    ))
}

/// What keeps `path` from being served as it is written, if anything: a character a request's
/// path cannot hold unencoded (RFC 3986: a space, a brace, ...), which axum also reads as a
/// capture, or a segment starting with `:` or `*` (axum's old capture syntax, which it
/// refuses with a panic).
fn path_problem(path: &str) -> Option<String> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@%/".contains(c);
    if let Some(bad) = path.chars().find(|&c| !path_char(c)) {
        return Some(format!(
            "holds {bad:?}, which a request's path cannot (percent-encode it)"
        ));
    }
    path.split('/')
        .find(|segment| segment.starts_with([':', '*']))
        .map(|segment| {
            format!("has a segment {segment:?} starting with ':' or '*', which axum refuses")
        })
}

/// Whether an error accepting a connection is that one connection's (it was reset or aborted
/// before it was accepted), not the listener's.
fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// The axum router serving `server` at `options.path()`, for mounting in an application of
/// your own; `bound` is the address it is reached at (its host is accepted in `Host`).
///
/// # Panics
///
/// As axum's `Router::route_service` does, when the path is not one axum can route (a brace,
/// a segment starting with `:` or `*`); [`McpHttpServer::start`] refuses such a path with
/// [`McpError::Config`] instead.
pub fn router(
    server: McpServer,
    options: &McpHttpOptions,
    bound: SocketAddr,
    shutdown: CancellationToken,
) -> Router {
    let config = options.service_config(bound, shutdown);
    let sessions = Arc::new(CappedSessionManager::new(
        options.max_sessions,
        options.session_idle_timeout,
    ));
    let service: McpService = StreamableHttpService::new(
        move || Ok(server.for_connection()),
        Arc::clone(&sessions),
        config,
    );
    let cap = SessionCapState {
        sessions,
        max_body_bytes: options.limits.max_bytes,
        rmcp: service.clone(),
    };
    let body = BodyLimits {
        json: options.limits,
        timeout: options.request_read_timeout,
    };
    // Route layers, so that a request to another path is still a plain 404. From the
    // outside in: the bearer check (below), so that nothing is read or told before the
    // token is; the body's deadline, outside the cap, which may read the body too; the cap,
    // which asks rmcp's Host / Origin check before it refuses.
    let app = Router::new()
        .route_service(&options.path, service)
        .route_layer(axum::middleware::from_fn_with_state(
            cap,
            refuse_sessions_past_cap,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            body,
            read_body_in_time,
        ));
    match &options.bearer_token {
        Some(token) => app.layer(axum::middleware::from_fn_with_state(
            Arc::<str>::from(token.trim()),
            require_bearer,
        )),
        None => app,
    }
}

/// How much of a request body is read, how deep and with how many values, and for how long.
#[derive(Debug, Clone, Copy)]
struct BodyLimits {
    json: JsonLimits,
    timeout: Duration,
}

/// Reads the request's body before passing it on, answering `408` when it has not all come
/// within the timeout (rmcp reads it with no time limit: a client sending a byte a second held
/// the request for ever), `413` past the size limit, and `400` past the depth or the number
/// of values (rmcp would read it into a buffer of 80 bytes or more a value) or holding one of
/// serde_json's private keys (which it would read as JSON of its own). A JSON body that rmcp
/// then cannot read as a message is answered `400` with a JSON-RPC error, not rmcp's `415`.
async fn read_body_in_time(
    State(limits): State<BodyLimits>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let max_bytes = limits.json.max_bytes;
    match tokio::time::timeout(limits.timeout, axum::body::to_bytes(body, max_bytes)).await {
        Ok(Ok(bytes)) => match limits.json.refusal(&bytes) {
            Some((code, message)) => unreadable_body(&bytes, code, &message),
            None => {
                let json_body = has_json_content_type(&parts.headers);
                let answer = next
                    .run(Request::from_parts(
                        parts,
                        axum::body::Body::from(bytes.clone()),
                    ))
                    .await;
                // rmcp answers a JSON body it cannot read as a message `415 Unsupported Media
                // Type` in plain text, which tells the client its `Content-Type` is wrong.
                if json_body && answer.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                    return unreadable_message(&bytes);
                }
                answer
            }
        },
        // Too long, or the client went away (then no one reads this answer).
        Ok(Err(_)) => payload_too_large(max_bytes),
        Err(_) => (
            StatusCode::REQUEST_TIMEOUT,
            [(header::CONNECTION, "close")],
            format!(
                "Request Timeout: the request body did not arrive within {:?}",
                limits.timeout
            ),
        )
            .into_response(),
    }
}

/// Whether the request says its body is JSON (`application/json`, any parameters, any case).
fn has_json_content_type(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The answer to a JSON body that is not a JSON-RPC message: `400` with a JSON-RPC error,
/// `-32700` naming where the text stops being JSON, else `-32600` naming what is wrong (the
/// envelope's member at fault, else why the message does not fit its method), as the line
/// transport names it. The body is within the limits of depth and values (checked first).
fn unreadable_message(body: &[u8]) -> Response {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Err(error) => unreadable_body(body, PARSE_ERROR, &format!("Parse error: {error}")),
        Ok(message) => {
            let problem =
                envelope_problem(&message).unwrap_or_else(|| {
                    match serde_json::from_value::<ClientJsonRpcMessage>(message) {
                        Err(error) => cut(&error.to_string()).into_owned(),
                        Ok(_) => "the body is JSON but not a JSON-RPC request, notification or \
                              response"
                            .to_owned(),
                    }
                });
            unreadable_body(
                body,
                INVALID_REQUEST,
                &format!("Invalid Request: {problem}"),
            )
        }
    }
}

/// The answer to a body past the limits of depth or values, or holding one of serde_json's
/// private keys: `400` with a JSON-RPC error, under
/// the request's id when its envelope shows one (read without reading the rest).
fn unreadable_body(body: &[u8], code: i64, message: &str) -> Response {
    let envelope = Envelope::of(body);
    let id = match envelope.id {
        Some(id) if envelope.has_method => id,
        _ => serde_json::Value::Null,
    };
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

/// The answer to a request body longer than `max_bytes`.
pub(super) fn payload_too_large(max_bytes: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: request body exceeds {max_bytes} bytes"),
    )
        .into_response()
}

/// Refuses a request without the bearer token (compared in constant time); a blank token
/// is no token, and refuses every request.
async fn require_bearer(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token);
    if let Some(presented) = presented
        && !token.trim().is_empty()
        && constant_time_eq(presented.as_bytes(), token.as_bytes())
    {
        return next.run(request).await;
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "Unauthorized: this MCP server needs `Authorization: Bearer <token>`",
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The token of an `Authorization` value of the `Bearer` scheme (in any case, RFC 9110
/// §11.1), the spaces around it ignored; `None` for another scheme or no token.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Whether two byte strings are equal, in time that depends only on their lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_no_request_could_send_is_refused_and_the_others_kept() {
        for host in [
            "tools.lan",
            "tools.lan:8080",
            " Tools.LAN ",
            "192.168.1.5",
            "10.0.0.1:80",
            "[::1]:8080",
            "::1",
            "fe80::1",
            // An IPv6 address (`::1:8080`), which rmcp reads so: it matches `Host: [::1:8080]`.
            "::1:8080",
        ] {
            assert_eq!(host_problem(host), None, "{host:?}");
        }
        for (host, says) in [
            ("a b", "is not a host name or address"),
            ("http://x", "is a URL"),
            ("https://tools.lan:8080/mcp", "is a URL"),
            ("x/y", "is not a host name"),
            ("x:99999", "a port that is not one"),
            ("x:", "a port that is not one"),
            ("tools\n.lan", "is not a host name"),
            ("user@x", "names a user"),
            (" ", "is empty"),
            // rmcp compares a request's Host with each allowed host exactly.
            ("*", "no wildcards"),
            ("*.example.com", "no wildcards"),
            ("tools.*:8080", "no wildcards"),
            ("x:0", "port 0"),
            ("[::1]:0", "port 0"),
        ] {
            let problem = host_problem(host).unwrap_or_default();
            assert!(problem.contains(says), "{host:?}: {problem}");
            if !host.trim().is_empty() {
                assert!(problem.contains(&format!("{host:?}")), "{problem}");
            }
        }
    }

    #[test]
    fn a_token_no_header_could_carry_is_refused_without_being_quoted() {
        for token in ["s3cret", "a b", " padded ", "tab\tinside", "~!@#$%^&*()"] {
            assert_eq!(token_problem(token), None, "{token:?}");
        }
        for (token, says) in [
            ("sec\nret", "a control character (\\n) at character 4"),
            ("sec\rret", "a control character (\\r)"),
            ("sec\u{0}ret", "a control character (\\u{0})"),
            ("sécret", "not ASCII at character 2"),
            ("", "is empty"),
        ] {
            let problem = token_problem(token).unwrap_or_default();
            assert!(problem.contains(says), "{token:?}: {problem}");
            assert!(!problem.contains("ret"), "{problem}");
        }
        let options = McpHttpOptions::default().with_bearer_token("a\nb");
        assert!(
            matches!(options.validate(), Err(McpError::Config(reason)) if reason.starts_with("the bearer token holds"))
        );
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer_token("Bearer s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("bearer s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("BEARER   s3cret  "), Some("s3cret"));
        assert_eq!(bearer_token("Basic czNjcmV0"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token(""), None);
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }

    /// A session whose client goes away without `DELETE` ends after the idle timeout (here
    /// two seconds), and its place is free again: the count is rmcp's map of sessions, which
    /// rmcp empties when a session's worker ends.
    #[tokio::test]
    async fn a_session_ended_by_the_idle_timeout_frees_its_place() {
        use std::time::Instant;

        use toolsmith_core::ToolCallManager;

        use crate::mcp::{McpClient, McpTransport};

        let options = McpHttpOptions::default()
            .with_max_sessions(1)
            .with_session_idle_timeout(Some(Duration::from_secs(2)));
        let listener = tokio::net::TcpListener::bind(options.addr()).await.unwrap();
        let bound = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let server = McpServer::new(Arc::new(ToolCallManager::new("idle")));
        let app = router(server, &options, bound, shutdown.clone());
        let stop = shutdown.clone();
        let serving = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await
        });
        let url = format!("http://{bound}/mcp");

        // Kept, never closed: its session stays open until it has been idle long enough.
        let idle = McpClient::connect(McpTransport::http(&url)).await.unwrap();
        let refused = McpClient::connect(McpTransport::http(&url))
            .await
            .err()
            .unwrap();
        assert!(refused.to_string().contains("its limit is 1"), "{refused}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let next = loop {
            match McpClient::connect(McpTransport::http(&url)).await {
                Ok(client) => break client,
                Err(error) => {
                    assert!(Instant::now() < deadline, "never freed: {error}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        next.close().await;
        drop(idle);
        shutdown.cancel();
        serving.await.unwrap().unwrap();
    }

    #[test]
    fn paths_get_their_slash() {
        assert_eq!(
            McpHttpOptions::default().with_path("tools").path(),
            "/tools"
        );
    }
}
