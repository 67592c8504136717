//! The client's copy of a server's tool list, listed again each time the server sends
//! `notifications/tools/list_changed`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::ServiceError;
use rmcp::model::{
    ClientConfig, ClientRequest, Cursor, CustomRequest, CustomResult, ErrorCode, ErrorData,
    ListToolsRequest, ListToolsResult, PaginatedRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleClient};
use serde::Deserialize as _;
use serde_json::Value;
use tokio::sync::{Notify, watch};
use toolsmith_core::ToolImpl as _;
use tracing::Instrument as _;

use super::bridge::McpToolBridge;
use super::error::McpError;
use super::left_out::{LeftOutReason, LeftOutTool};
use super::names::McpNames;
use super::remote_progress::ProgressRoutes;
use super::server::{cut, quoted_cut};
use super::unreadable::UNREADABLE_REQUEST;
use crate::serialized_len::serialized_len;

/// rmcp's client handler of an [`McpClient`](super::McpClient): its identity, and a signal
/// when the server's tool list changed.
///
/// Progress notifications are not taken here (rmcp hands each to the handler on a task of
/// its own, in no set order): the connection's transport routes them to their calls
/// ([`ProgressTap`](super::remote_progress::ProgressTap)).
pub(crate) struct ListChangeListener {
    info: ClientConfig,
    changed: Arc<Notify>,
}

impl ListChangeListener {
    pub(crate) fn new(info: ClientConfig) -> (Self, Arc<Notify>) {
        let changed = Arc::new(Notify::new());
        let listener = Self {
            info,
            changed: Arc::clone(&changed),
        };
        (listener, changed)
    }
}

impl ClientHandler for ListChangeListener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // A stored permit: a notification that comes while a listing runs is not lost.
        self.changed.notify_one();
    }

    /// The stand-in for a request of the server's that the transport could not read
    /// ([`unreadable_request`](super::unreadable::unreadable_request)) is answered with the
    /// error it carries; any other method is not known.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != UNREADABLE_REQUEST {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let params = request.params.unwrap_or_default();
        let code = params
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|code| i32::try_from(code).ok())
            .unwrap_or(ErrorCode::INVALID_REQUEST.0);
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the request could not be read")
            .to_owned();
        Err(ErrorData::new(ErrorCode(code), message, None))
    }

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}

/// The most tools a client reads from one server's list unless configured otherwise
/// ([`McpClientOptions::with_max_tools`](super::McpClientOptions::with_max_tools)): far more
/// than a server offers, few enough that a server whose list never ends cannot exhaust memory.
pub const DEFAULT_MAX_TOOLS: usize = 10_000;

/// The most bytes of tools (names, descriptions, schemas, annotations, as JSON) a client
/// keeps from one server's list unless configured otherwise
/// ([`McpClientOptions::with_max_listing_bytes`](super::McpClientOptions::with_max_listing_bytes)).
///
/// [`DEFAULT_MAX_TOOLS`] bounds the count, not the size: at up to 8 MiB a page, a server
/// could otherwise make a client keep gigabytes. Real servers list a few hundred tools of a
/// few kilobytes (well under 2 MiB); 32 MiB leaves room for ten thousand tools of 3 KB.
pub const DEFAULT_MAX_LISTING_BYTES: usize = 32 * 1024 * 1024;

/// One tool of a server's listing, as read.
pub(crate) enum ListedTool {
    /// Read as rmcp's `Tool`.
    Read(rmcp::model::Tool),
    /// A tool whose definition does not read as one: left out of the bridges, the rest of
    /// its page kept.
    Unreadable {
        /// Its `name` when that is a string, else its place ("tool 3 of page 1").
        name: String,
        /// [`LeftOutReason::Unreadable`]: the field that does not read, and why.
        reason: LeftOutReason,
        /// Its size as sent (JSON), counted against the listing's byte bound.
        bytes: usize,
    },
}

impl ListedTool {
    /// The tool's name on the server (a place for an unreadable tool without one).
    fn name(&self) -> &str {
        match self {
            Self::Read(tool) => &tool.name,
            Self::Unreadable { name, .. } => name,
        }
    }

    /// The bytes of the tool as JSON, which the listing's byte bound counts.
    fn bytes(&self) -> usize {
        match self {
            Self::Read(tool) => serialized_len(tool),
            Self::Unreadable { bytes, .. } => *bytes,
        }
    }
}

/// How a server's tools become bridges: names claimed for this client, its category and
/// time limit, and the bounds on reading its list.
#[derive(Clone)]
pub(crate) struct ToolLister {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) label: Arc<str>,
    pub(crate) names: McpNames,
    pub(crate) owner: u64,
    pub(crate) prefix: Option<String>,
    pub(crate) category: String,
    pub(crate) call_timeout: Option<Duration>,
    /// The most tools read from the list.
    pub(crate) max_tools: usize,
    /// The most bytes of tools (as JSON) kept from the list.
    pub(crate) max_listing_bytes: usize,
    /// How long one listing (every page) may take.
    pub(crate) list_timeout: Duration,
    /// Where the connection routes the server's progress for the bridges' calls.
    pub(crate) progress: ProgressRoutes,
}

impl ToolLister {
    /// Lists the server's tools (every page), as the server lists them: each read, or left
    /// out as [`Unreadable`](ListedTool::Unreadable).
    /// In an `mcp.request` span (OpenTelemetry's MCP client span) that records how many
    /// tools were listed (`toolsmith.mcp.tools`) or why the listing failed (`error.type`:
    /// `timeout`, or `request` for any other failure).
    pub(crate) async fn list(&self) -> Result<Vec<ListedTool>, McpError> {
        let span = tracing::info_span!(
            "mcp.request",
            otel.name = %"tools/list",
            otel.kind = "client",
            mcp.method.name = "tools/list",
            toolsmith.mcp.server = %self.label,
            toolsmith.mcp.tools = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let listed = tokio::time::timeout(self.list_timeout, self.pages())
            .instrument(span.clone())
            .await;
        match listed {
            Ok(Ok(tools)) => {
                span.record("toolsmith.mcp.tools", tools.len());
                Ok(tools)
            }
            Ok(Err(error)) => {
                span.record("error.type", "request");
                Err(error)
            }
            Err(_) => {
                span.record("error.type", "timeout");
                Err(self.failure(format!(
                    "listing every page took longer than {:?}",
                    self.list_timeout
                )))
            }
        }
    }

    /// The bridges of `listed`, the server's newest listing, kept in `list`, and the tools
    /// left out of them: a tool listed before keeps its name, and the names of tools no
    /// longer listed, or left out, are released.
    ///
    /// Left out, each with a warning, so that every bridge registers (but for a name a
    /// manager holds already): a tool whose definition did not read
    /// ([`ListedTool::Unreadable`]), a name the server lists again (one tool on the wire:
    /// the first listing is kept), and a tool registration would refuse ([`Tool::check`]: a
    /// schema that does not compile, or nested too deep, or an `inputSchema` whose root
    /// `type` is not `object`, which no call's arguments could pass).
    ///
    /// The new names are claimed first, so that a name released here is not given at once
    /// to another tool of the same listing. A tool checked is named as its bridge would be
    /// (its refusal names it so), and its name is released with those of tools gone.
    ///
    /// A tool `previous` (the listing before) bridged exactly as the server lists it now,
    /// under the same name, is kept as it was, not checked again: a server that announces a
    /// change re-lists every tool, and checking compiles each one's schemas (under the list's
    /// lock), which would make every `list_changed` of a server with many tools cost what
    /// registering all of them costs.
    ///
    /// [`Tool::check`]: toolsmith_core::Tool::check
    fn bridges(
        &self,
        listed: Vec<ListedTool>,
        previous: &[McpToolBridge],
        list: &Weak<LiveToolList>,
    ) -> (Vec<McpToolBridge>, Vec<LeftOutTool>) {
        let previous: HashMap<&str, &McpToolBridge> = previous
            .iter()
            .map(|bridge| (bridge.original_name(), bridge))
            .collect();
        let mut seen = HashSet::with_capacity(listed.len());
        let mut bridges = Vec::with_capacity(listed.len());
        let mut left_out = Vec::new();
        for tool in listed {
            let tool = match tool {
                ListedTool::Read(tool) => tool,
                ListedTool::Unreadable { name, reason, .. } => {
                    left_out.push(self.leave_out(&name, reason));
                    continue;
                }
            };
            if !seen.insert(tool.name.clone()) {
                left_out.push(self.leave_out(&tool.name, LeftOutReason::ListedAgain));
                continue;
            }
            let local =
                self.names
                    .claim_with_prefix(self.owner, self.prefix.as_deref(), &tool.name);
            if let Some(&unchanged) = previous.get(tool.name.as_ref())
                && unchanged.name() == local
                && *unchanged.remote() == tool
            {
                bridges.push(unchanged.clone());
                continue;
            }
            let bridge = McpToolBridge::new(self, local, tool, Weak::clone(list));
            // Its schemas compiled and dropped, as registration does (under the list's lock:
            // a listing costs what registering its tools costs).
            match bridge.shared_definition().check() {
                Ok(()) => bridges.push(bridge),
                Err(refusal) => left_out
                    .push(self.leave_out(bridge.original_name(), LeftOutReason::Refused(refusal))),
            }
        }
        let originals: HashSet<&str> = bridges.iter().map(McpToolBridge::original_name).collect();
        self.names
            .retain(self.owner, |original| originals.contains(original));
        (bridges, left_out)
    }

    /// A tool of the server's listing left out of the bridges, with a warning.
    fn leave_out(&self, name: &str, reason: LeftOutReason) -> LeftOutTool {
        tracing::warn!(
            server = %self.label,
            tool = %name,
            %reason,
            "an MCP server's tool is left out of its client's tools"
        );
        LeftOutTool {
            name: name.to_owned(),
            reason,
        }
    }

    /// Every page of the list, up to `max_tools` tools (and as many pages: a page may be
    /// empty, a list may not go on for ever) and `max_listing_bytes` bytes of them; tools
    /// that do not read count as the others do.
    async fn pages(&self) -> Result<Vec<ListedTool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        let mut bytes = 0_usize;
        for page_number in 1..=self.max_tools.saturating_add(1) {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let (page, next_cursor) = match self.peer.list_tools(Some(params.clone())).await {
                Ok(page) => (
                    page.tools.into_iter().map(ListedTool::Read).collect(),
                    page.next_cursor,
                ),
                Err(ServiceError::UnexpectedResponse) => self
                    .unreadable_page(params, page_number)
                    .await
                    .map_err(|reason| self.failure(reason))?,
                Err(error) => return Err(self.failure(error.to_string())),
            };
            for tool in page {
                let size = tool.bytes();
                bytes = bytes.saturating_add(size);
                if bytes > self.max_listing_bytes {
                    return Err(self.failure(format!(
                        "the listing passes {} bytes at the tool `{}` ({size} bytes of name, \
                         description and schemas, after {} bytes of {} tools before it; \
                         McpClientOptions::with_max_listing_bytes)",
                        self.max_listing_bytes,
                        cut(tool.name()),
                        bytes - size,
                        tools.len(),
                    )));
                }
                tools.push(tool);
            }
            if tools.len() > self.max_tools {
                break;
            }
            match next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
        Err(self.failure(format!(
            "the list goes on past {} tools or pages (McpClientOptions::with_max_tools)",
            self.max_tools
        )))
    }

    /// A page that rmcp could not read as a tool list (it says only "Unexpected response
    /// type"), asked for again as it is sent and read one tool at a time ([`read_page`]): its
    /// tools and its next cursor, or why the page itself is not a tool list.
    async fn unreadable_page(
        &self,
        params: PaginatedRequestParams,
        page_number: usize,
    ) -> Result<(Vec<ListedTool>, Option<Cursor>), String> {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
        let answer = self
            .peer
            .send_request(request)
            .await
            .map_err(|error| format!("the answer is not a tool list; asked again: {error}"))?;
        let page = serde_json::to_value(&answer)
            .map_err(|error| format!("the answer is not a tool list: {error}"))?;
        read_page(page, page_number)
    }

    fn failure(&self, reason: String) -> McpError {
        McpError::Request {
            request: "tools/list".to_owned(),
            peer: self.label.to_string(),
            reason,
        }
    }
}

/// `page`, a server's answer to `tools/list` (page `page_number`, from 1) that rmcp could not
/// read, read one tool at a time: each entry of `tools` that reads as rmcp's `Tool` is kept,
/// each that does not is [`ListedTool::Unreadable`], named by its `name` when that is a
/// string, else by its place. Fails, saying why ([`not_a_tool_list`]), only when the page
/// itself is not a tool list: not an object, no `tools` array, or another of its fields
/// (`nextCursor`) that does not read.
///
/// The page was read from the transport within its bounds (bytes, depth, values); each
/// tool's size is counted against the listing's by [`ToolLister::pages`].
fn read_page(page: Value, page_number: usize) -> Result<(Vec<ListedTool>, Option<Cursor>), String> {
    let Value::Object(mut fields) = page else {
        // Not read as `ListToolsResult`, which serde would read from an array field by field.
        let problem = serde_json::Map::<String, Value>::deserialize(&page)
            .err()
            .map_or_else(|| "not an object".to_owned(), |error| error.to_string());
        return Err(format!(
            "the answer is not a tool list: {}",
            quoted_cut(&problem)
        ));
    };
    let Some(Value::Array(tools)) = fields.get_mut("tools") else {
        return Err(not_a_tool_list(&Value::Object(fields)));
    };
    let tools = std::mem::take(tools);
    // The page with its tools taken out: what does not read now is the page's own.
    let rest = Value::Object(fields);
    let next_cursor = match ListToolsResult::deserialize(&rest) {
        Ok(read) => read.next_cursor,
        Err(_) => return Err(not_a_tool_list(&rest)),
    };
    let listed = tools
        .into_iter()
        .enumerate()
        .map(|(index, tool)| read_tool(tool, index, page_number))
        .collect();
    Ok((listed, next_cursor))
}

/// `tool`, the entry `index` (from 0) of page `page_number`'s `tools`, read as rmcp's `Tool`,
/// or why not: the path of the field that does not read and what was wrong there, cut.
fn read_tool(tool: Value, index: usize, page_number: usize) -> ListedTool {
    let error = match serde_path_to_error::deserialize::<_, rmcp::model::Tool>(&tool) {
        Ok(read) => return ListedTool::Read(read),
        Err(error) => error,
    };
    let name = match tool.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => format!("tool {} of page {page_number}", index.saturating_add(1)),
    };
    // serde_path_to_error writes the tool itself as ".".
    let field = match error.path().to_string() {
        path if path == "." => String::new(),
        path => cut(&path).into_owned(),
    };
    ListedTool::Unreadable {
        name,
        reason: LeftOutReason::Unreadable {
            field,
            // serde quotes the value it could not read: a string schema of megabytes is cut.
            problem: quoted_cut(&error.inner().to_string()),
        },
        bytes: serialized_len(&tool),
    }
}

/// Why `page`, a server's answer to `tools/list`, is not a tool list (read without its
/// tools, [`read_page`]): the path of the field that does not read and what was expected
/// there.
fn not_a_tool_list(page: &Value) -> String {
    match serde_path_to_error::deserialize::<_, ListToolsResult>(page) {
        // Read here but not by rmcp: nothing more precise to say.
        Ok(_) => "the answer is not a tool list".to_owned(),
        Err(error) => {
            // serde_path_to_error writes the page itself as ".".
            let field = match error.path().to_string() {
                path if path == "." => String::new(),
                path => format!("{}: ", cut(&path)),
            };
            // serde quotes the value it could not read: a cursor of megabytes is cut.
            format!(
                "the answer is not a tool list: {field}{}",
                quoted_cut(&error.inner().to_string())
            )
        }
    }
}

/// What one listing gave: the bridges, the tools left out, and the listing's ticket.
#[derive(Default)]
struct Listing {
    bridges: Vec<McpToolBridge>,
    left_out: Vec<LeftOutTool>,
    ticket: u64,
}

/// The current bridges, and a counter of listings that subscribers watch.
pub(crate) struct LiveToolList {
    /// The newest listing kept.
    tools: RwLock<Listing>,
    version: watch::Sender<u64>,
    /// The last ticket given to a listing ([`start_listing`](Self::start_listing)).
    tickets: AtomicU64,
}

impl LiveToolList {
    /// An empty list, until a listing replaces it.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            tools: RwLock::new(Listing::default()),
            version: watch::Sender::new(0),
            tickets: AtomicU64::new(0),
        })
    }

    /// Whether the newest listing has a tool named `original` on the server.
    pub(crate) fn lists(&self, original: &str) -> bool {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .bridges
            .iter()
            .any(|tool| tool.original_name() == original)
    }

    pub(crate) fn tools(&self) -> Vec<McpToolBridge> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .bridges
            .clone()
    }

    /// The tools the newest listing left out of [`tools`](Self::tools).
    pub(crate) fn left_out(&self) -> Vec<LeftOutTool> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .left_out
            .clone()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// The ticket of a listing about to start, to [`replace`](Self::replace) the list with.
    pub(crate) fn start_listing(&self) -> u64 {
        self.tickets.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Replaces the list with the bridges of what the listing of `ticket` found, unless a
    /// listing that started later has replaced it already: answers to listings at once (the
    /// follower's, an explicit refresh) may come back in any order, and the last to start saw
    /// the newest list. The bridges hold the list weakly, to ask whether the server still
    /// lists them.
    ///
    /// Names are claimed and released here, under the list's lock, only for a listing that
    /// is kept: an older listing answering late would otherwise release the names of tools
    /// the newer one holds.
    pub(crate) fn replace(
        self: &Arc<Self>,
        ticket: u64,
        listed: Vec<ListedTool>,
        lister: &ToolLister,
    ) {
        let mut current = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        if ticket < current.ticket {
            return;
        }
        let (bridges, left_out) = lister.bridges(listed, &current.bridges, &Arc::downgrade(self));
        *current = Listing {
            bridges,
            left_out,
            ticket,
        };
        drop(current);
        self.version.send_modify(|version| *version += 1);
    }

    /// Lists again after each change notice, for as long as the client lives (the task
    /// holds the list weakly and is aborted when the connection ends), each time in an
    /// `mcp.tools_changed` span naming the server. A failed listing is logged and the
    /// previous list kept: the next notice, or an explicit refresh, retries.
    pub(crate) fn follow(
        list: &Arc<Self>,
        lister: ToolLister,
        changed: Arc<Notify>,
    ) -> tokio::task::JoinHandle<()> {
        let list: Weak<Self> = Arc::downgrade(list);
        tokio::spawn(async move {
            loop {
                changed.notified().await;
                let Some(ticket) = list.upgrade().map(|list| list.start_listing()) else {
                    return;
                };
                // A root span: the notice came from the server, not from anything traced
                // here. It holds the listing's `mcp.request` and the warnings about it.
                let span = tracing::info_span!(
                    parent: None,
                    "mcp.tools_changed",
                    toolsmith.mcp.server = %lister.label,
                );
                let listed = lister.list().instrument(span.clone()).await;
                let Some(list) = list.upgrade() else { return };
                span.in_scope(|| match listed {
                    Ok(tools) => list.replace(ticket, tools, &lister),
                    Err(error) => tracing::warn!(
                        server = %lister.label,
                        %error,
                        "listing an MCP server's tools after list_changed failed; keeping the previous list"
                    ),
                });
            }
        })
    }
}
