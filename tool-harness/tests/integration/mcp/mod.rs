//! MCP both ways: our server under rmcp's client, our client against our server, bad input,
//! and child processes that must not outlive their client.

mod bad_input;
mod bridged_progress;
mod child;
mod client;
mod endless_lists;
mod fake_http;
mod http;
mod images;
mod io_client;
mod malformed_lists;
mod remote_definitions;
mod remote_refusals;
mod server;
mod slow_clients;
mod unreadable_answers;
mod unusable_schemas;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{ClientConfig, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::service::{RunningService, ServiceExt as _};
use rmcp::{ClientHandler, RoleServer};
use serde_json::json;
use tokio::sync::{Notify, mpsc};
use toolsmith_core::{
    Args, FnTool, ToolAnnotations, ToolArgs, ToolCallContext, ToolCallManager, ToolCallResult,
    scheme,
};
use toolsmith_harness::mcp::{
    JsonLimits, McpClient, McpClientOptions, McpError, McpNames, McpServer, McpServerOptions,
    serve_io, serve_until_closed,
};

/// What the demo tools saw.
#[derive(Default)]
pub struct Probe {
    /// Calls that reached `add`'s body.
    pub add_runs: AtomicUsize,
    /// `slow` saw its cancellation token fire.
    pub slow_cancelled: AtomicBool,
    /// `slow`'s future was dropped before it finished.
    pub slow_dropped: AtomicBool,
    /// `slow` has begun to wait: its cancellation or drop from now on is seen.
    pub slow_started: Notify,
}

impl Probe {
    /// Waits (five seconds at most) until `slow` has begun, so that a cancellation sent
    /// after it reaches a running call, however slow the machine.
    pub async fn wait_slow_started(&self) {
        tokio::time::timeout(Duration::from_secs(5), self.slow_started.notified())
            .await
            .expect("the server never started `slow`");
    }
}

/// Sets a flag when dropped before being disarmed.
struct DropFlag(Arc<Probe>, bool);

impl Drop for DropFlag {
    fn drop(&mut self) {
        if !self.1 {
            self.0.slow_dropped.store(true, Ordering::SeqCst);
        }
    }
}

/// A manager with `add` (integer result, read-only), `stats` (object result), `echo`,
/// `fail` (a result marked as an error), `slow` (waits for cancellation) and `progress`.
pub fn demo_manager() -> (Arc<ToolCallManager>, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let manager = ToolCallManager::new("mcp-test");
    let seen = Arc::clone(&probe);
    manager
        .register(Arc::new(
            FnTool::new(
                "add",
                "Add two non-negative integers.",
                Args::new(
                    scheme::object()
                        .required("a", scheme::integer().minimum(0))
                        .required("b", scheme::integer().minimum(0))
                        .build(),
                ),
                move |args: ToolArgs<'_>| {
                    seen.add_runs.fetch_add(1, Ordering::SeqCst);
                    let sum = args.i64("a").and_then(|a| Ok(a + args.i64("b")?));
                    async move { Ok(ToolCallResult::json(json!(sum?))) }
                },
            )
            .with_returns(Args::new(scheme::integer().build()))
            .with_annotations(ToolAnnotations::read_only()),
        ))
        .unwrap();
    manager
        .register(Arc::new(
            FnTool::new(
                "stats",
                "Count and average numbers.",
                Args::new(
                    scheme::object()
                        .required("values", scheme::array(scheme::number()))
                        .build(),
                ),
                |args: ToolArgs<'_>| {
                    let values: Result<Vec<f64>, _> = args.get("values");
                    async move {
                        let values = values?;
                        let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
                        Ok(ToolCallResult::json(
                            json!({"count": values.len(), "mean": mean}),
                        ))
                    }
                },
            )
            .with_returns(Args::new(
                scheme::object()
                    .required("count", scheme::integer())
                    .required("mean", scheme::number())
                    .build(),
            )),
        ))
        .unwrap();
    manager
        .register(Arc::new(FnTool::new(
            "echo",
            "Repeat a text.",
            Args::new(scheme::object().required("text", scheme::string()).build()),
            |args: ToolArgs<'_>| {
                let text = args.str("text").map(str::to_owned);
                async move { Ok(ToolCallResult::text(text?)) }
            },
        )))
        .unwrap();
    manager
        .register(Arc::new(FnTool::new(
            "fail",
            "Always fails.",
            Args::empty(),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::error("it failed, as it always does")) },
        )))
        .unwrap();
    let seen = Arc::clone(&probe);
    manager
        .register(Arc::new(FnTool::new(
            "slow",
            "Wait until cancelled (at most ten seconds).",
            Args::empty(),
            move |_: ToolArgs<'_>| {
                let seen = Arc::clone(&seen);
                async move {
                    let mut flag = DropFlag(Arc::clone(&seen), false);
                    seen.slow_started.notify_one();
                    let context = ToolCallContext::current();
                    let cancelled = async {
                        match &context {
                            Some(context) => context.cancellation().cancelled().await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        () = cancelled => seen.slow_cancelled.store(true, Ordering::SeqCst),
                        () = tokio::time::sleep(Duration::from_secs(10)) => {}
                    }
                    flag.1 = true;
                    Ok(ToolCallResult::text("slept"))
                }
            },
        )))
        .unwrap();
    manager
        .register(Arc::new(FnTool::new(
            "progress",
            "Report progress in steps.",
            Args::new(
                scheme::object()
                    .required("steps", scheme::integer().minimum(1))
                    .build(),
            ),
            |args: ToolArgs<'_>| {
                let steps = args.i64("steps");
                async move {
                    let steps = steps?;
                    let context = ToolCallContext::current();
                    for step in 1..=steps {
                        if let Some(context) = &context {
                            context.progress(step as f64, Some(steps as f64), "working");
                        }
                        tokio::task::yield_now().await;
                    }
                    Ok(ToolCallResult::text(format!("{steps} steps")))
                }
            },
        )))
        .unwrap();
    (Arc::new(manager), probe)
}

/// A client handler that passes progress and list-changed notifications on.
#[derive(Clone)]
pub struct Listener {
    pub progress: mpsc::UnboundedSender<ProgressNotificationParam>,
    pub list_changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Listener {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

/// The names the server gave the tools `client` lists, in order.
pub fn original_names(client: &toolsmith_harness::mcp::McpClient) -> Vec<String> {
    client
        .tools()
        .iter()
        .map(|tool| tool.original_name().to_owned())
        .collect()
}

/// What a connected test client receives.
pub struct Inbox {
    pub progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    pub list_changed: mpsc::UnboundedReceiver<()>,
}

/// Our client (named `label`, the server's names kept) connected in memory to our server of
/// `manager`, and the server's task, which ends once the client is dropped.
pub async fn our_client_of(
    manager: Arc<ToolCallManager>,
    label: &str,
) -> (McpClient, tokio::task::JoinHandle<Result<(), McpError>>) {
    our_client_of_server(McpServer::new(manager), label).await
}

/// Our client (named `label`, the server's names kept) connected in memory to `server`, and
/// the server's task, which ends once the client is dropped.
pub async fn our_client_of_server(
    server: McpServer,
    label: &str,
) -> (McpClient, tokio::task::JoinHandle<Result<(), McpError>>) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving = tokio::spawn(serve_until_closed(
        server,
        server_read,
        server_write,
        JsonLimits::for_server(),
    ));
    let (read, write) = tokio::io::split(client_end);
    let options = McpClientOptions::default().with_names(McpNames::new());
    let client = McpClient::connect_io(label, read, write, options)
        .await
        .unwrap();
    (client, serving)
}

/// rmcp's client connected in memory to our server of `manager`.
pub async fn connect(
    manager: Arc<ToolCallManager>,
    options: McpServerOptions,
) -> (
    RunningService<RoleClient, Listener>,
    Inbox,
    tokio::task::JoinHandle<()>,
) {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let server = McpServer::with_options(manager, options);
    let serving = tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let running: RunningService<RoleServer, McpServer> =
            serve_io(server, read, write, JsonLimits::default())
                .await
                .unwrap();
        let _ = running.waiting().await;
    });
    let (progress, progress_rx) = mpsc::unbounded_channel();
    let (list_changed, list_rx) = mpsc::unbounded_channel();
    let client = Listener {
        progress,
        list_changed,
    }
    .serve(client_end)
    .await
    .unwrap();
    (
        client,
        Inbox {
            progress: progress_rx,
            list_changed: list_rx,
        },
        serving,
    )
}
