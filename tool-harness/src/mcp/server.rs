//! [`McpServer`]: any [`ToolCallManager`]'s tools served over MCP, through rmcp's
//! macro-free [`ServerHandler`] (`list_tools` and `call_tool` written by hand over the
//! manager).

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;
use toolsmith_core::shed::{ShedResult, shed_tool};
use toolsmith_core::{
    CancellationToken, SHED_TOOL_NAME, Tool, ToolArguments, ToolCallContext, ToolCallManager,
    ToolCallResult, ToolError, closest_names, record_call_end,
};
use tracing::Instrument as _;

use super::call_result::{ResultShape, to_mcp};
use super::pagination::{DEFAULT_PAGE_SIZE, page};
use super::progress::ProgressForwarder;
use super::tool_mapping::{is_stateless_revision, mcp_tool, output_schema};
use crate::expired_limit::{ExpiredLimit, changes_nothing};

/// How an [`McpServer`] serves its manager.
///
/// ```
/// use toolsmith::harness::mcp::McpServerOptions;
///
/// let options = McpServerOptions::new("files", "1.0.0").with_shed(true).with_page_size(50);
/// assert!(options.shed());
/// ```
#[derive(Debug, Clone)]
pub struct McpServerOptions {
    name: String,
    version: String,
    instructions: Option<String>,
    shed: bool,
    page_size: usize,
}

impl Default for McpServerOptions {
    fn default() -> Self {
        Self::new("toolsmith", env!("CARGO_PKG_VERSION"))
    }
}

impl McpServerOptions {
    /// A server that calls itself `name` at `version`, listing every tool, 100 a page.
    #[must_use]
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            instructions: None,
            shed: false,
            page_size: DEFAULT_PAGE_SIZE,
        }
    }

    /// Instructions sent to the client when it connects.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Shed mode: `tools/list` shows `shed` and the tools it has activated on this
    /// connection, and `notifications/tools/list_changed` follows each activation.
    ///
    /// Per protocol revision: up to 2025-11-25 each connection has its own list, as above.
    /// From 2026-07-28 on, a server may not keep per-connection lists (every request stands
    /// alone), so there `tools/list` shows `shed` and every tool, and `shed` only searches.
    #[must_use]
    pub fn with_shed(mut self, shed: bool) -> Self {
        self.shed = shed;
        self
    }

    /// How many tools one `tools/list` page holds (at least 1).
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Whether shed mode is on.
    pub fn shed(&self) -> bool {
        self.shed
    }

    /// The size of a `tools/list` page.
    pub fn page_size(&self) -> usize {
        self.page_size
    }
}

/// A [`ToolCallManager`]'s tools as an MCP server (an rmcp [`ServerHandler`]).
///
/// - `tools/list`: every tool ([`Tool::function_spec`], so a command group is one tool with a
///   `command` argument), with title, `outputSchema` (from `returns`; a result that is not an
///   object is wrapped as `{"result": …}` for revisions before 2026-07-28) and annotations;
///   paginated, a cursor this server did not give being `-32602`.
/// - `tools/call`: runs [`ToolCallManager::execute_call`] under a [`ToolCallContext`] whose
///   token the client's `notifications/cancelled` fires (the call's future is dropped) and
///   whose progress reports become `notifications/progress` when the client sent a progress
///   token (at most 64 wait to be sent; a report made when they are that many replaces the
///   last one waiting, so a tool reporting faster than the client reads holds no more). Text comes back as text, structured results as `structuredContent` mirrored as
///   text, and every failure (invalid arguments — the tool does not run —, a failed,
///   timed-out or panicking tool, a result breaking its `returns` schema) as `isError: true`
///   with the message a model can act on. An unknown tool, or a malformed request, is a
///   JSON-RPC error.
///
/// Serve it with [`serve_stdio`](super::serve_stdio), [`serve_io`](super::serve_io) or
/// [`McpHttpServer`](super::McpHttpServer), or give it to rmcp's `ServiceExt::serve`.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
/// use toolsmith::harness::mcp::{McpServer, McpServerOptions};
///
/// let manager = Arc::new(ToolCallManager::new("served"));
/// manager.register(Arc::new(FnTool::new("ping", "Answer pong.", Args::empty(),
///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))).unwrap();
/// let server = McpServer::with_options(manager, McpServerOptions::default().with_shed(true));
/// assert!(server.options().shed());
/// ```
#[derive(Clone)]
pub struct McpServer {
    manager: Arc<ToolCallManager>,
    options: Arc<McpServerOptions>,
    /// The tools `shed` has activated on this connection, in order (shed mode).
    offered: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("manager", &self.manager)
            .field("options", &self.options)
            .field("offered", &self.offered_names())
            .finish()
    }
}

impl McpServer {
    /// A server of `manager`'s tools with the default options.
    pub fn new(manager: Arc<ToolCallManager>) -> Self {
        Self::with_options(manager, McpServerOptions::default())
    }

    /// A server of `manager`'s tools.
    pub fn with_options(manager: Arc<ToolCallManager>, options: McpServerOptions) -> Self {
        Self {
            manager,
            options: Arc::new(options),
            offered: Arc::default(),
        }
    }

    /// A server for a new connection: the same manager and options, nothing offered yet.
    #[must_use]
    pub fn for_connection(&self) -> Self {
        Self {
            manager: Arc::clone(&self.manager),
            options: Arc::clone(&self.options),
            offered: Arc::default(),
        }
    }

    /// The manager served.
    pub fn manager(&self) -> &Arc<ToolCallManager> {
        &self.manager
    }

    /// The options.
    pub fn options(&self) -> &McpServerOptions {
        &self.options
    }

    /// The tools `shed` has activated on this connection (shed mode), in order.
    pub fn offered_names(&self) -> Vec<String> {
        self.offered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Adds names to this connection's offer; whether any was new.
    fn offer(&self, names: impl IntoIterator<Item = String>) -> bool {
        let mut offered = self.offered.lock().unwrap_or_else(PoisonError::into_inner);
        let before = offered.len();
        for name in names {
            if !offered.contains(&name) {
                offered.push(name);
            }
        }
        offered.len() > before
    }

    /// Whether this connection keeps its own list: shed mode on a revision before 2026-07-28.
    fn per_connection(&self, context: &RequestContext<RoleServer>) -> bool {
        self.options.shed && !is_stateless_revision(context.protocol_version().as_ref())
    }

    /// The tools a `tools/list` shows on this connection, in order.
    fn listed(&self, context: &RequestContext<RoleServer>) -> Vec<Tool> {
        let all = || self.manager.all_declarations().tools;
        if !self.options.shed {
            return all();
        }
        let mut tools = vec![shed_tool()];
        if self.per_connection(context) {
            tools.extend(
                self.offered_names()
                    .iter()
                    .filter_map(|name| self.manager.get_def(name)),
            );
        } else {
            tools.extend(all());
        }
        tools
    }

    /// Names to suggest for a mistaken tool name: what this connection lists.
    fn known_names(&self, context: &RequestContext<RoleServer>) -> Vec<String> {
        self.listed(context)
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }

    /// The JSON-RPC error for a call to a tool this server does not have.
    fn unknown_tool(&self, name: &str, context: &RequestContext<RoleServer>) -> ErrorData {
        let known = self.known_names(context);
        let suggestions = closest_names(name, known.iter().map(String::as_str));
        let hint = match suggestions.as_slice() {
            [] => String::new(),
            names => format!(
                "; did you mean {}?",
                names
                    .iter()
                    .map(|n| format!("'{n}'"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        };
        let name = cut(name);
        ErrorData::invalid_params(
            format!("Unknown tool '{name}'{hint}"),
            Some(json!({ "tool": name })),
        )
    }

    /// Runs one call under a context the client's cancellation and progress token reach.
    /// The name and arguments are lent to the manager (`execute_call`): no request is built
    /// only to be read.
    async fn run_call(
        &self,
        name: &str,
        arguments: &ToolArguments,
        context: &RequestContext<RoleServer>,
    ) -> Result<ToolCallResult, ToolError> {
        let cancellation: CancellationToken = context.ct.clone();
        let mut call_context =
            ToolCallContext::new(context.id.to_string(), name, cancellation.clone());
        let forwarder = context
            .meta
            .get_progress_token()
            .and_then(|token| ProgressForwarder::start(context.peer.clone(), token));
        if let Some(forwarder) = &forwarder {
            call_context = call_context.with_progress(forwarder.sink());
        }
        let outcome = tokio::select! {
            outcome = call_context.scope(self.manager.execute_call(name, arguments)) => outcome,
            () = cancellation.cancelled() => Err(ToolError::Cancelled(format!(
                "the client cancelled the call to '{name}'"
            ))),
        };
        if let Some(forwarder) = forwarder {
            forwarder.finish().await;
        }
        match outcome {
            Ok(result) => match self.manager.check_result(name, &result) {
                Ok(()) => Ok(result),
                Err(broken) => Err(broken),
            },
            Err(error) => Err(error),
        }
    }

    /// Answers a `tools/call` (in its span, whose `error.type` it records when the call
    /// fails).
    async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        // An integer past i64 is one rmcp cannot read back to send progress under.
        if let Some(token) = context.meta.get("progressToken")
            && !(token.is_string() || token.is_i64())
        {
            let integers = if token.is_u64() {
                format!(" from {} to {}", i64::MIN, i64::MAX)
            } else {
                String::new()
            };
            tracing::Span::current().record("error.type", "invalid_arguments");
            return Err(ErrorData::invalid_params(
                format!(
                    "invalid tools/call request: params._meta.progressToken must be a string or an integer{integers}, got {}",
                    cut(&token.to_string())
                ),
                None,
            ));
        }
        let is_shed = name == SHED_TOOL_NAME;
        if (is_shed && !self.options.shed) || (!is_shed && !self.manager.contains(name)) {
            tracing::Span::current().record("error.type", "unknown_tool");
            return Err(self.unknown_tool(name, &context));
        }
        let stateless = is_stateless_revision(context.protocol_version().as_ref());

        let per_connection = self.per_connection(&context);
        let started = tokio::time::Instant::now();
        let arguments = ToolArguments::from(request.arguments.unwrap_or_default());
        let outcome =
            if per_connection && !is_shed && !self.offered_names().iter().any(|n| n == name) {
                Err(ToolError::NotActive(name.to_owned()))
            } else {
                self.run_call(name, &arguments, &context).await
            };

        record_call_end(&tracing::Span::current(), &outcome);

        // A shed call activates what it returns on this connection; the client re-lists.
        if is_shed
            && per_connection
            && let Ok(result) = &outcome
        {
            let found: Option<ShedResult> = serde_json::from_str(&result.content.to_text()).ok();
            let names = found
                .map(|f| f.tools.into_iter().map(|t| t.name))
                .into_iter()
                .flatten();
            if self.offer(names) {
                let _ = context.peer.notify_tool_list_changed().await;
            }
        }

        // Only a structured result needs the output schema, and only a failure the names to
        // suggest: neither is worked out for the common case.
        let structured = matches!(&outcome, Ok(result) if !result.is_error()
            && result.content.is_json());
        let output = if structured {
            let definition = if is_shed {
                Some(shed_tool())
            } else {
                self.manager.get_def(name)
            };
            definition.and_then(|tool| output_schema(&tool, !stateless))
        } else {
            None
        };
        let known = if outcome.is_err() {
            self.known_names(&context)
        } else {
            Vec::new()
        };
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let expired = match &outcome {
            Err(ToolError::Timeout { tool }) => {
                ExpiredLimit::of_call(&self.manager, tool, started.elapsed())
                    .map(|limit| (limit, changes_nothing(&self.manager, tool, &arguments)))
            }
            _ => None,
        };
        let shape = ResultShape {
            output: output.as_ref(),
            any_structured: stateless,
            known_tools: &known,
            expired,
        };
        Ok(to_mcp(outcome, &shape).into())
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        if self.options.shed
            && let Some(tools) = capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        let mut config = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.options.name.clone(),
            self.options.version.clone(),
        ));
        let instructions = match (&self.options.instructions, self.options.shed) {
            (Some(text), _) => Some(text.clone()),
            (None, true) => Some(format!(
                "Call `{SHED_TOOL_NAME}` first: describe what you need and the matching tools \
                 are added to your tool list."
            )),
            (None, false) => None,
        };
        if let Some(instructions) = instructions {
            config = config.with_instructions(instructions);
        }
        config
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let objects_only = !is_stateless_revision(context.protocol_version().as_ref());
        let tools = self.listed(&context);
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (start, end, next) = page(cursor, tools.len(), self.options.page_size)?;
        let mut result = ListToolsResult::with_all_items(
            tools[start..end]
                .iter()
                .map(|tool| mcp_tool(tool, objects_only))
                .collect(),
        );
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A served call is traced as the manager's batches trace theirs (`execute_tool`),
        // named as OpenTelemetry's MCP conventions name a server's span ("tools/call NAME").
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = %format_args!("tools/call {}", request.name),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %request.name,
            mcp.method.name = "tools/call",
            jsonrpc.request.id = %context.id,
            error.type = tracing::field::Empty,
        );
        self.answer_call(request, context).instrument(span).await
    }

    /// A request rmcp could not read as any method it knows lands here. For a method MCP
    /// defines, that means its parameters are malformed: `-32602`, naming what is wrong.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let CustomRequest { method, params, .. } = request;
        let problem = match method.as_str() {
            "tools/call" => Some(describe::<CallToolRequestParams>(params)),
            "tools/list" => Some(describe::<Option<PaginatedRequestParams>>(params)),
            "initialize"
            | "ping"
            | "resources/list"
            | "prompts/list"
            | "completion/complete"
            | "logging/setLevel"
            | "resources/read"
            | "prompts/get" => Some(format!("the parameters of {method} are malformed")),
            _ => None,
        };
        match problem {
            Some(problem) => Err(ErrorData::invalid_params(
                format!("invalid {method} request: {problem}"),
                Some(json!({ "method": method })),
            )),
            None => Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", cut(&method)),
                None,
            )),
        }
    }
}

/// The most characters of a client's text (a tool name, a cursor) an error quotes, as
/// validation quotes a value: a name of 100,000 characters is not echoed whole.
const MAX_QUOTED_CHARS: usize = 240;

/// `text` cut after [`MAX_QUOTED_CHARS`] characters, marked with `…` when cut.
pub(crate) fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    toolsmith_core::provider::cut_to(text, MAX_QUOTED_CHARS)
}

/// What is wrong with `params` read as `T`: the path of the offending field and what serde
/// expected there.
fn describe<T: serde::de::DeserializeOwned>(params: Option<serde_json::Value>) -> String {
    let params = params.unwrap_or(serde_json::Value::Null);
    match serde_path_to_error::deserialize::<_, T>(params) {
        Err(error) => {
            let path = error.path().to_string();
            let problem = quoted_cut(&error.inner().to_string());
            if path == "." {
                format!("params: {problem}")
            } else {
                format!("params.{}: {problem}", cut(&path))
            }
        }
        Ok(_) => "the request does not match the method's schema".to_owned(),
    }
}

/// serde's message `message` with the peer's value it quotes cut, and what was expected
/// kept: `invalid type: string "xxx…", expected a map`. The expectation is the last
/// `, expected ` (the value quoted before it may hold the same words).
pub(crate) fn quoted_cut(message: &str) -> String {
    match message.rsplit_once(", expected ") {
        Some((found, expected)) => format!("{}, expected {}", cut(found), cut(expected)),
        None => cut(message).into_owned(),
    }
}
