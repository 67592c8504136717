//! The client's copy of a server's tool list, listed again each time the server sends
//! `notifications/tools/list_changed`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::ServiceError;
use rmcp::model::{
    ClientConfig, ClientRequest, CustomRequest, CustomResult, ErrorCode, ErrorData,
    ListToolsRequest, ListToolsResult, PaginatedRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleClient};
use serde_json::Value;
use serde_path_to_error::Segment;
use tokio::sync::{Notify, watch};
use toolsmith_core::ToolImpl as _;

use super::bridge::McpToolBridge;
use super::error::McpError;
use super::left_out::{LeftOutReason, LeftOutTool};
use super::names::McpNames;
use super::server::cut;
use super::unreadable::UNREADABLE_REQUEST;
use crate::serialized_len::serialized_len;

/// rmcp's client handler of an [`McpClient`](super::McpClient): its identity, and a signal
/// when the server's tool list changed.
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
}

impl ToolLister {
    /// Lists the server's tools (every page), as the server lists them.
    pub(crate) async fn list(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        tokio::time::timeout(self.list_timeout, self.pages())
            .await
            .map_err(|_| {
                self.failure(format!(
                    "listing every page took longer than {:?}",
                    self.list_timeout
                ))
            })?
    }

    /// The bridges of `listed`, the server's newest listing, kept in `list`, and the tools
    /// left out of them: a tool listed before keeps its name, and the names of tools no
    /// longer listed, or left out, are released.
    ///
    /// Left out, each with a warning, so that every bridge registers (but for a name a
    /// manager holds already): a name the server lists again (one tool on the wire: the
    /// first listing is kept), and a tool registration would refuse ([`Tool::check`]: a
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
        listed: Vec<rmcp::model::Tool>,
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
            let bridge = McpToolBridge::new(
                self.peer.clone(),
                Arc::clone(&self.label),
                local,
                tool,
                &self.category,
                self.call_timeout,
                Weak::clone(list),
            );
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
    /// empty, a list may not go on for ever) and `max_listing_bytes` bytes of them.
    async fn pages(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        let mut bytes = 0_usize;
        for _ in 0..=self.max_tools {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let page = match self.peer.list_tools(Some(params.clone())).await {
                Ok(page) => page,
                Err(ServiceError::UnexpectedResponse) => {
                    return Err(self.failure(self.unreadable_page(params).await));
                }
                Err(error) => return Err(self.failure(error.to_string())),
            };
            for tool in page.tools {
                let size = serialized_len(&tool);
                bytes = bytes.saturating_add(size);
                if bytes > self.max_listing_bytes {
                    return Err(self.failure(format!(
                        "the listing passes {} bytes at the tool `{}` ({size} bytes of name, \
                         description and schemas, after {} bytes of {} tools before it; \
                         McpClientOptions::with_max_listing_bytes)",
                        self.max_listing_bytes,
                        cut(&tool.name),
                        bytes - size,
                        tools.len(),
                    )));
                }
                tools.push(tool);
            }
            if tools.len() > self.max_tools {
                break;
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
        Err(self.failure(format!(
            "the list goes on past {} tools or pages (McpClientOptions::with_max_tools)",
            self.max_tools
        )))
    }

    /// Why a page that rmcp could not read as a tool list (it says only "Unexpected response
    /// type") is not one, from the same page asked for again as it is sent: the field, and the
    /// tool it is in.
    async fn unreadable_page(&self, params: PaginatedRequestParams) -> String {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
        match self.peer.send_request(request).await {
            Ok(answer) => match serde_json::to_value(&answer) {
                Ok(value) => not_a_tool_list(value),
                Err(error) => format!("the answer is not a tool list: {error}"),
            },
            Err(error) => format!("the answer is not a tool list; asked again: {error}"),
        }
    }

    fn failure(&self, reason: String) -> McpError {
        McpError::Request {
            request: "tools/list".to_owned(),
            peer: self.label.to_string(),
            reason,
        }
    }
}

/// Why `page`, a server's answer to `tools/list`, does not read as a tool list: the path of
/// the field that does not read and what was expected there, with the name of the tool it is
/// in when that tool has one.
fn not_a_tool_list(page: Value) -> String {
    let tool_at = |index: usize| {
        page.get("tools")
            .and_then(|tools| tools.get(index))
            .and_then(|tool| tool.get("name"))
            .and_then(Value::as_str)
            .map(|name| format!(" (the tool `{}`)", cut(name)))
            .unwrap_or_default()
    };
    match serde_path_to_error::deserialize::<_, ListToolsResult>(&page) {
        // Read here but not by rmcp: nothing more precise to say.
        Ok(_) => "the answer is not a tool list".to_owned(),
        Err(error) => {
            let tool = match error.path().iter().nth(1) {
                Some(Segment::Seq { index }) => tool_at(*index),
                _ => String::new(),
            };
            // serde quotes the value it could not read: a string schema of megabytes is cut.
            format!(
                "the answer is not a tool list: {}{tool}: {}",
                error.path(),
                cut(&error.inner().to_string())
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
        listed: Vec<rmcp::model::Tool>,
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
    /// holds the list weakly and is aborted when the connection ends). A failed listing is
    /// logged and the previous list kept: the next notice, or an explicit refresh, retries.
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
                let listed = lister.list().await;
                let Some(list) = list.upgrade() else { return };
                match listed {
                    Ok(tools) => list.replace(ticket, tools, &lister),
                    Err(error) => tracing::warn!(
                        server = %lister.label,
                        %error,
                        "listing an MCP server's tools after list_changed failed; keeping the previous list"
                    ),
                }
            }
        })
    }
}
