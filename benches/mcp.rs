//! A `tools/call` round trip of a trivial tool (add two integers) served over MCP, in process
//! (rmcp's client over an in-memory duplex) and over HTTP on 127.0.0.1, beside the same call
//! through `execute_one`, and beside rmcp's own macro-declared tool serving the same function
//! in the same run (the peer baseline: the one place rmcp's macros are used).
//!
//! Criterion measures each variant; then the bench prints paired ratios (rounds of each
//! variant timed right after a round of its baseline, median over the rounds), which hold up
//! on a machine whose speed drifts. Run with `cargo bench --bench mcp`; the figures are in
//! `docs/PERFORMANCE.md`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use rmcp::{
    self, RoleClient, ServerHandler, ServiceExt as _,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolRequestParams, ClientConfig, ServerCapabilities, ServerConfig},
    service::RunningService,
    tool, tool_handler, tool_router,
    transport::streamable_http_server::session::local::LocalSessionManager,
    transport::{StreamableHttpClientTransport, StreamableHttpServerConfig, StreamableHttpService},
};
use serde_json::json;
use toolsmith::harness::mcp::{JsonLimits, McpHttpOptions, McpHttpServer, McpServer, serve_io};
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, tool_fn};

/// Add two integers. (The sum comes back as text, as from the macro-declared peer.)
#[tool_fn]
fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// The arguments of rmcp's macro-declared `add`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

/// The same tool declared with rmcp's macros.
#[derive(Clone)]
struct MacroServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router(router = tool_router)]
impl MacroServer {
    /// Add two integers.
    #[tool(description = "Add two integers.")]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
        (args.a + args.b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MacroServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn macro_server() -> MacroServer {
    MacroServer {
        tool_router: MacroServer::tool_router(),
    }
}

fn manager() -> Arc<ToolCallManager> {
    let manager = ToolCallManager::new("bench");
    manager.register(Arc::new(Add)).unwrap();
    Arc::new(manager)
}

type Client = RunningService<RoleClient, ClientConfig>;

/// rmcp's client over an in-memory duplex to `server`.
async fn in_process<S: ServerHandler>(server: S) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.unwrap();
        let _ = running.waiting().await;
    });
    ClientConfig::default().serve(client_end).await.unwrap()
}

/// rmcp's client over an in-memory duplex to our server (through our line transport).
async fn in_process_toolsmith() -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let running = serve_io(
            McpServer::new(manager()),
            read,
            write,
            JsonLimits::default(),
        )
        .await
        .unwrap();
        let _ = running.waiting().await;
    });
    ClientConfig::default().serve(client_end).await.unwrap()
}

/// rmcp's own HTTP client builds reqwest's default client, which in this build (reqwest's
/// `rustls-no-provider`) needs a process-wide rustls provider.
/// (The ring provider is deprecated since rustls 0.23.48 for want of post-quantum key exchange;
/// it is the one this build has.)
#[allow(deprecated)]
fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// rmcp's client over HTTP to our server on 127.0.0.1.
async fn http_toolsmith() -> (Client, McpHttpServer) {
    install_tls_provider();
    let server = McpHttpServer::start(McpServer::new(manager()), McpHttpOptions::default())
        .await
        .unwrap();
    let client = ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_uri(server.url()))
        .await
        .unwrap();
    (client, server)
}

/// rmcp's client over HTTP to the macro server, mounted the same way on axum.
async fn http_macros() -> Client {
    install_tls_provider();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = StreamableHttpService::new(
        || Ok(macro_server()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().route_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, app).await });
    ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .unwrap()
}

fn params() -> CallToolRequestParams {
    CallToolRequestParams::new("add").with_arguments(
        json!({"a": 2, "b": 40})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

async fn mcp_call(client: &Client) {
    let result = client.call_tool(params()).await.unwrap();
    black_box(result);
}

async fn direct_call(manager: &ToolCallManager) {
    let request = ToolCallRequest::new(
        "1",
        "add",
        ToolArguments::try_from(json!({"a": 2, "b": 40})).unwrap(),
    );
    black_box(manager.execute_one(&request).await.unwrap());
}

struct Subjects {
    runtime: tokio::runtime::Runtime,
    manager: Arc<ToolCallManager>,
    toolsmith_in_process: Client,
    /// Our server on rmcp's own stdio transport: isolates the cost of our line transport.
    toolsmith_rmcp_transport: Client,
    macros_in_process: Client,
    toolsmith_http: Client,
    macros_http: Client,
    _http_server: McpHttpServer,
}

fn subjects() -> Subjects {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (
        toolsmith_in_process,
        toolsmith_rmcp_transport,
        macros_in_process,
        (toolsmith_http, server),
        macros_http,
    ) = runtime.block_on(async {
        (
            in_process_toolsmith().await,
            in_process(McpServer::new(manager())).await,
            in_process(macro_server()).await,
            http_toolsmith().await,
            http_macros().await,
        )
    });
    Subjects {
        runtime,
        manager: manager(),
        toolsmith_in_process,
        toolsmith_rmcp_transport,
        macros_in_process,
        toolsmith_http,
        macros_http,
        _http_server: server,
    }
}

fn bench(c: &mut Criterion) {
    let s = subjects();
    let mut group = c.benchmark_group("mcp_call");
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("execute_one", |b| {
        b.iter(|| s.runtime.block_on(direct_call(&s.manager)));
    });
    group.bench_function("in_process/toolsmith", |b| {
        b.iter(|| s.runtime.block_on(mcp_call(&s.toolsmith_in_process)));
    });
    group.bench_function("in_process/toolsmith_on_rmcp_transport", |b| {
        b.iter(|| s.runtime.block_on(mcp_call(&s.toolsmith_rmcp_transport)));
    });
    group.bench_function("in_process/rmcp_macros", |b| {
        b.iter(|| s.runtime.block_on(mcp_call(&s.macros_in_process)));
    });
    group.bench_function("http/toolsmith", |b| {
        b.iter(|| s.runtime.block_on(mcp_call(&s.toolsmith_http)));
    });
    group.bench_function("http/rmcp_macros", |b| {
        b.iter(|| s.runtime.block_on(mcp_call(&s.macros_http)));
    });
    group.finish();
}

/// Which calls a paired measurement times.
#[derive(Clone, Copy)]
enum Subject {
    Direct,
    ToolsmithInProcess,
    ToolsmithRmcpTransport,
    MacrosInProcess,
    ToolsmithHttp,
    MacrosHttp,
}

fn time(s: &Subjects, subject: Subject, calls: u32) -> Duration {
    let start = Instant::now();
    s.runtime.block_on(async {
        for _ in 0..calls {
            match subject {
                Subject::Direct => direct_call(&s.manager).await,
                Subject::ToolsmithInProcess => mcp_call(&s.toolsmith_in_process).await,
                Subject::ToolsmithRmcpTransport => mcp_call(&s.toolsmith_rmcp_transport).await,
                Subject::MacrosInProcess => mcp_call(&s.macros_in_process).await,
                Subject::ToolsmithHttp => mcp_call(&s.toolsmith_http).await,
                Subject::MacrosHttp => mcp_call(&s.macros_http).await,
            }
        }
    });
    start.elapsed()
}

/// The median ratio of `subject` to `baseline` over rounds, each timed right after the
/// other, and the median time of one call of each.
fn paired(
    s: &Subjects,
    baseline: Subject,
    subject: Subject,
    calls: u32,
) -> (f64, Duration, Duration) {
    let rounds = 15;
    let mut ratios = Vec::new();
    let mut base_times = Vec::new();
    let mut subject_times = Vec::new();
    for _ in 0..rounds {
        let base = time(s, baseline, calls);
        let measured = time(s, subject, calls);
        ratios.push(measured.as_secs_f64() / base.as_secs_f64());
        base_times.push(base / calls);
        subject_times.push(measured / calls);
    }
    ratios.sort_by(f64::total_cmp);
    base_times.sort();
    subject_times.sort();
    (
        ratios[rounds / 2],
        base_times[rounds / 2],
        subject_times[rounds / 2],
    )
}

fn paired_ratios() {
    let s = subjects();
    println!("\npaired ratios (median of 15 rounds; per-call medians in brackets)");
    for (label, baseline, subject, calls) in [
        (
            "in process: toolsmith / rmcp macros",
            Subject::MacrosInProcess,
            Subject::ToolsmithInProcess,
            400,
        ),
        (
            "in process, rmcp's transport: toolsmith / rmcp macros",
            Subject::MacrosInProcess,
            Subject::ToolsmithRmcpTransport,
            400,
        ),
        (
            "http: toolsmith / rmcp macros",
            Subject::MacrosHttp,
            Subject::ToolsmithHttp,
            200,
        ),
        (
            "in process toolsmith / execute_one",
            Subject::Direct,
            Subject::ToolsmithInProcess,
            400,
        ),
        (
            "http toolsmith / execute_one",
            Subject::Direct,
            Subject::ToolsmithHttp,
            200,
        ),
    ] {
        let (ratio, base, measured) = paired(&s, baseline, subject, calls);
        println!("  {label:<56} {ratio:>8.2}   [{measured:?} vs {base:?}]");
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    paired_ratios();
}
