//! What a user shares across tasks is `Send + Sync + 'static`, and the futures of the main
//! async methods are `Send` (so `tokio::spawn` takes them), checked when this file builds.
//!
//! The functions below are never called: that they compile is the test. A type or future
//! that stops being `Send` (a `Rc`, a `RefCell` borrow or a `MutexGuard` held across an
//! `.await`) breaks the build here, naming the method, instead of in a user's `tokio::spawn`.
#![allow(dead_code)]

use std::sync::Arc;

use toolsmith::harness::agent::{
    AgentCommands, AgentEvent, AgentRun, AgentSession, AgentSessionBuilder, AgentTool,
    AgenticError, PauseHandle, SubAgentConfig, ToolCallRecord,
};
use toolsmith::harness::mcp::{
    JsonLimits, LineTransport, McpClient, McpClientOptions, McpCommand, McpError, McpHttpOptions,
    McpHttpServer, McpNames, McpServer, McpServerOptions, McpToolBridge, McpTransport,
};
use toolsmith::harness::model::http::{
    AnthropicModel, GeminiModel, HttpModelBuilder, OpenAiChatModel, OpenAiEmbedder,
    OpenAiResponsesModel, PromptCaching,
};
use toolsmith::harness::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, StreamDelta,
};
use toolsmith::harness::retrieval::{
    Document, EmbeddingRetriever, LexicalRetriever, Retriever, RetrieverTool,
};
use toolsmith::harness::{
    FileMemory, FileSystem, FsError, InMemoryFileSystem, InMemoryMemory, LocalFileSystem,
    SearchError, ShellConfig, ShellError, ShellOutcome, ShellRunner,
};
use toolsmith::provider::{ParsedCall, Provider, RejectedCall};
use toolsmith::{
    BatchOptions, CancellationToken, Embedder, FnTool, RegistrationError, ServiceError,
    SessionParts, ShedResult, Tool, ToolArguments, ToolCallContext, ToolCallManager,
    ToolCallOutcome, ToolCallRequest, ToolCallResult, ToolDefinition, ToolError, ToolImpl,
    ToolRetryConfig, ToolShed, ToolShedError, UnbuiltTool, Workflow,
};

/// Shared by reference across tasks (`Arc<T>`, axum state): `Send + Sync + 'static`.
fn shareable<T: Send + Sync + 'static>() {}

/// Moved into a task, not shared: `Send + 'static`.
fn movable<T: Send + 'static>() {}

/// A future `tokio::spawn` would take, once its borrows are `'static`.
fn send_future<F: Future + Send>(_: &F) {}

/// A future `tokio::spawn` takes as it is.
fn spawnable<F: Future + Send + 'static>(_: &F) {}

fn shared_types() {
    // The core.
    shareable::<ToolCallManager>();
    shareable::<Arc<dyn ToolImpl>>();
    shareable::<FnTool>();
    shareable::<UnbuiltTool>();
    shareable::<Tool>();
    shareable::<ToolDefinition>();
    shareable::<ToolCallRequest>();
    shareable::<ToolArguments>();
    shareable::<ToolCallResult>();
    shareable::<ToolCallOutcome>();
    shareable::<ToolError>();
    shareable::<RegistrationError>();
    shareable::<ToolShedError>();
    shareable::<ServiceError>();
    shareable::<ShedResult>();
    shareable::<BatchOptions>();
    shareable::<ToolRetryConfig>();
    shareable::<SessionParts>();
    shareable::<ToolCallContext>();
    shareable::<Provider>();
    shareable::<RejectedCall>();
    shareable::<Arc<dyn Embedder>>();
    // A shed (and a preset) holds its tools' constructors, which run once, when it is built
    // (`FnOnce`, so `Send` but not `Sync`): it is moved to where it is built, never shared.
    movable::<ToolShed>();
    movable::<toolsmith::harness::ToolPreset>();

    // The harness.
    shareable::<AgentSession>();
    movable::<AgentSessionBuilder>();
    shareable::<AgentRun>();
    shareable::<ToolCallRecord>();
    shareable::<AgenticError>();
    shareable::<AgentEvent>();
    shareable::<AgentTool>();
    shareable::<AgentCommands>();
    shareable::<SubAgentConfig>();
    shareable::<PauseHandle>();
    shareable::<CancellationToken>();
    shareable::<Arc<dyn FileSystem>>();
    shareable::<LocalFileSystem>();
    shareable::<InMemoryFileSystem>();
    shareable::<FsError>();
    shareable::<SearchError>();
    shareable::<ShellRunner>();
    shareable::<ShellConfig>();
    shareable::<ShellOutcome>();
    shareable::<ShellError>();
    shareable::<FileMemory>();
    shareable::<InMemoryMemory>();
    shareable::<LexicalRetriever>();
    shareable::<EmbeddingRetriever>();
    shareable::<RetrieverTool>();
    shareable::<Document>();
    shareable::<Arc<dyn Retriever>>();

    // Models.
    shareable::<Arc<dyn ChatModel>>();
    shareable::<ScriptedModel>();
    shareable::<OpenAiChatModel>();
    shareable::<OpenAiResponsesModel>();
    shareable::<AnthropicModel>();
    shareable::<PromptCaching>();
    shareable::<GeminiModel>();
    shareable::<OpenAiEmbedder>();
    shareable::<HttpModelBuilder<OpenAiChatModel>>();
    shareable::<ChatRequest>();
    shareable::<ChatResponse>();
    shareable::<Message>();
    shareable::<StreamDelta>();
    shareable::<ModelError>();

    // MCP.
    shareable::<McpClient>();
    shareable::<McpToolBridge>();
    shareable::<McpServer>();
    shareable::<McpHttpServer>();
    shareable::<McpError>();
    shareable::<McpTransport>();
    shareable::<McpCommand>();
    shareable::<McpClientOptions>();
    shareable::<McpServerOptions>();
    shareable::<McpHttpOptions>();
    shareable::<McpNames>();
    shareable::<JsonLimits>();
    movable::<LineTransport<rmcp::RoleServer, tokio::io::DuplexStream, tokio::io::DuplexStream>>();
}

fn manager_futures(
    manager: &ToolCallManager,
    request: &ToolCallRequest,
    requests: &[ToolCallRequest],
    parsed: &[ParsedCall],
    workflow: &Workflow<'_>,
    options: &BatchOptions,
) {
    send_future(&manager.execute_one(request));
    send_future(&manager.execute_call(&request.name, &request.arguments));
    send_future(&manager.execute_with_retry(request));
    send_future(&manager.execute_batch(requests));
    send_future(&manager.execute_turn(requests));
    send_future(&manager.execute_batch_with(requests, options));
    send_future(&manager.execute_workflow(workflow));
    send_future(&manager.execute_workflow_with(workflow, options));
    send_future(&manager.execute_parsed(parsed));
    send_future(&manager.search_tools("files", 5));
    send_future(&manager.shed("files", None));
}

fn tool_futures(tool: &dyn ToolImpl, arguments: &ToolArguments, context: ToolCallContext) {
    send_future(&tool.execute(arguments.clone()));
    send_future(&context.scope(async {}));
}

fn agent_futures(session: &AgentSession, token: CancellationToken) {
    send_future(&session.run("task"));
    send_future(&session.run_with_cancellation("task", token));
    send_future(&session.send("next"));
    send_future(&session.transcript());
    send_future(&session.reset());
}

fn sub_agent_futures(commands: &AgentCommands) {
    send_future(&commands.start("task".to_owned(), None, None));
    send_future(&commands.result("agent-1".to_owned(), None));
    send_future(&commands.stop("agent-1".to_owned()));
}

/// As a server or an application spawns them: the shared value moved in, owned arguments.
fn spawned_tasks(
    manager: Arc<ToolCallManager>,
    session: Arc<AgentSession>,
    model: Arc<dyn ChatModel>,
    client: Arc<McpClient>,
    request: ToolCallRequest,
    chat: ChatRequest,
) {
    let requests = vec![request.clone()];
    let batch_manager = Arc::clone(&manager);
    spawnable(&async move { manager.execute_one(&request).await });
    spawnable(&async move { batch_manager.execute_batch(&requests).await });
    spawnable(&async move { session.run("task").await });
    spawnable(&async move { model.complete(&chat).await });
    spawnable(&async move { client.refresh_tools().await });
}

fn model_futures(
    request: &ChatRequest,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    openai_chat: &OpenAiChatModel,
    openai_responses: &OpenAiResponsesModel,
    anthropic: &AnthropicModel,
    gemini: &GeminiModel,
) {
    send_future(&openai_chat.complete(request));
    send_future(&openai_responses.complete(request));
    send_future(&anthropic.complete(request));
    send_future(&gemini.complete(request));
    send_future(&openai_chat.stream(request, on_delta));
    send_future(&openai_responses.stream(request, on_delta));
    send_future(&anthropic.stream(request, on_delta));
    send_future(&gemini.stream(request, on_delta));
}

fn other_model_futures(request: &ChatRequest, scripted: &ScriptedModel, embedder: &OpenAiEmbedder) {
    send_future(&scripted.complete(request));
    send_future(&embedder.embed(&[]));
}

fn retrieval_futures(
    embedding: &EmbeddingRetriever,
    lexical: &LexicalRetriever,
    shell: &ShellRunner,
) {
    send_future(&embedding.add(["text"]));
    send_future(&embedding.retrieve("query", 3));
    send_future(&lexical.retrieve("query", 3));
    send_future(&shell.run("true", None));
}

fn mcp_futures(client: &McpClient, owned: McpClient, server: McpServer, http: McpHttpServer) {
    send_future(&McpClient::connect(McpTransport::http(
        "http://127.0.0.1:1/mcp",
    )));
    send_future(&McpClient::connect_with(
        McpTransport::child(McpCommand::new("server")),
        McpClientOptions::default(),
    ));
    send_future(&client.refresh_tools());
    send_future(&owned.close());
    for bridge in client.tools() {
        send_future(&bridge.execute(ToolArguments::default()));
    }
    send_future(&McpHttpServer::start(
        server.for_connection(),
        McpHttpOptions::default(),
    ));
    send_future(&http.shutdown());
    send_future(&toolsmith::harness::mcp::serve_stdio(
        server.for_connection(),
    ));
    let (read, write) = tokio::io::duplex(64);
    send_future(&toolsmith::harness::mcp::serve_io(
        server.for_connection(),
        read,
        write,
        JsonLimits::default(),
    ));
    let (read, write) = tokio::io::duplex(64);
    send_future(&toolsmith::harness::mcp::serve_until_closed(
        server,
        read,
        write,
        JsonLimits::default(),
    ));
}
