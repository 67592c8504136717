//! The client's copy of a server's tool list, listed again each time the server sends
//! `notifications/tools/list_changed`.

use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::ClientConfig;
use rmcp::service::{NotificationContext, Peer, RoleClient};
use tokio::sync::{Notify, watch};

use super::bridge::McpToolBridge;
use super::error::McpError;
use super::names::McpNames;

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

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}

/// How a server's tools become bridges: names claimed for this client, its category and
/// time limit.
#[derive(Clone)]
pub(crate) struct ToolLister {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) label: Arc<str>,
    pub(crate) names: McpNames,
    pub(crate) owner: u64,
    pub(crate) prefix: Option<String>,
    pub(crate) category: String,
    pub(crate) call_timeout: Option<Duration>,
}

impl ToolLister {
    /// Lists the server's tools (every page) as bridges. A tool listed before keeps its name.
    pub(crate) async fn list(&self) -> Result<Vec<McpToolBridge>, McpError> {
        let listed = self
            .peer
            .list_all_tools()
            .await
            .map_err(|error| McpError::Request {
                request: "tools/list".to_owned(),
                peer: self.label.to_string(),
                reason: error.to_string(),
            })?;
        Ok(listed
            .into_iter()
            .map(|tool| {
                let local =
                    self.names
                        .claim_with_prefix(self.owner, self.prefix.as_deref(), &tool.name);
                McpToolBridge::new(
                    self.peer.clone(),
                    Arc::clone(&self.label),
                    local,
                    tool,
                    &self.category,
                    self.call_timeout,
                )
            })
            .collect())
    }
}

/// The current bridges, and a counter of listings that subscribers watch.
pub(crate) struct LiveToolList {
    tools: RwLock<Vec<McpToolBridge>>,
    version: watch::Sender<u64>,
}

impl LiveToolList {
    pub(crate) fn new(tools: Vec<McpToolBridge>) -> Arc<Self> {
        Arc::new(Self {
            tools: RwLock::new(tools),
            version: watch::Sender::new(0),
        })
    }

    pub(crate) fn tools(&self) -> Vec<McpToolBridge> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    pub(crate) fn replace(&self, tools: Vec<McpToolBridge>) {
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = tools;
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
                let listed = lister.list().await;
                let Some(list) = list.upgrade() else { return };
                match listed {
                    Ok(tools) => list.replace(tools),
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
