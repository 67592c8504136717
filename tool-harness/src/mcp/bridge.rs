//! [`McpToolBridge`]: one tool of an MCP server as a Toolsmith [`ToolImpl`].

use std::borrow::Cow;
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ErrorCode, GetExtensions as _, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use toolsmith_core::{
    Tool, ToolArguments, ToolCallContext, ToolCallResult, ToolError, ToolImpl, record_call_end,
};
use tracing::Instrument as _;

use super::call_result::{from_mcp, refused_arguments};
use super::remote_progress::{ProgressRoute, ProgressRoutes};
use super::server::cut;
use super::tool_list::{LiveToolList, ToolLister};
use super::tool_mapping::definition_from_mcp;
use super::unreadable::unreadable_reason;

/// The most characters of a server's own text (its error's message, a transport's account of
/// its answer) that a call's error repeats to the model: room for a Toolsmith server's
/// refusal naming eight violations (up to 240 characters each, with their paths and hints),
/// not for the 8 MiB one message may hold.
const MAX_SERVER_TEXT_CHARS: usize = 4_096;

/// `text`, a server's, cut after [`MAX_SERVER_TEXT_CHARS`] characters (marked with `…`).
fn server_text(text: &str) -> Cow<'_, str> {
    toolsmith_core::provider::cut_to(text, MAX_SERVER_TEXT_CHARS)
}

/// A tool of an MCP server, callable like any Toolsmith tool.
///
/// Its definition is the server's: description, input schema (which the manager validates
/// calls against before anything is sent), output schema and annotation hints (a hint the
/// server leaves out is MCP's default: a tool not said to be read-only or non-destructive is
/// destructive, so approval is asked for it and a batch runs it alone), under a
/// provider-safe name ([`McpNames`](super::McpNames)); the server's own name is used on the
/// wire. A result marked `isError` becomes [`ToolError::Execution`] with the server's
/// message (without the "Tool 'name' failed: " a Toolsmith server writes before it, which
/// the error says itself); structured content is kept as a JSON result (beside `image`
/// blocks, as the value's JSON text then the images, a result of parts). A server's "invalid
/// params" error, and a Toolsmith server's refusal of the arguments, is
/// [`ToolError::InvalidArguments`] naming this tool (a Toolsmith server's reason without its
/// frame and its request to call again, which the error and its rendering say themselves),
/// unless the server says it has no such tool (or no longer lists it): then an execution
/// error says there is no tool of that name on the server. A server's error message (and
/// a transport's account of an answer) is repeated up to 4,096 characters, cut with `…`
/// after. A call dropped before its answer
/// (cancelled, or past its time limit) is cancelled on the server too.
///
/// The server's progress for a call (`notifications/progress` under the call's progress
/// token) reaches the local call's [`ToolCallContext::progress`], in the order the server
/// sent it: a batch's progress sink, an agent run's `ToolCallProgress` events. At most 64
/// reports wait for the call to pass them on (the newest replacing the last waiting when
/// more come), each message cut after 1,000 characters.
///
/// Made by [`McpClient::tools`](super::McpClient::tools), only for a tool whose definition
/// passes [`Tool::check`]: every bridge registers (unless its name is taken).
///
/// ```no_run
/// use toolsmith::ToolImpl;
/// use toolsmith::harness::mcp::{McpClient, McpTransport};
///
/// # async fn run() -> Result<(), toolsmith::harness::mcp::McpError> {
/// let client = McpClient::connect(McpTransport::http("http://127.0.0.1:8080/mcp")).await?;
/// for tool in client.tools() {
///     // The name to call it by here, and the name it has on its server.
///     println!("{} = {} on {}", tool.name(), tool.original_name(), tool.server());
///     assert_eq!(tool.definition().name(), tool.name());
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpToolBridge {
    peer: Peer<RoleClient>,
    server: Arc<str>,
    original: Arc<str>,
    /// Always one command; shared with the managers the tool is registered with.
    definition: Arc<Tool>,
    remote: Arc<rmcp::model::Tool>,
    /// The server wraps results in `{"result": …}` and says so in the output schema: the
    /// value itself is given back.
    wrapped: bool,
    timeout: Option<Duration>,
    /// The client's list of the server's tools, to tell a call to a tool the server no
    /// longer lists (held weakly: the list holds its bridges).
    listing: Weak<LiveToolList>,
    /// Where the connection routes the server's progress for a call.
    progress: ProgressRoutes,
}

impl std::fmt::Debug for McpToolBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolBridge")
            .field("name", &self.name())
            .field("original", &self.original)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl McpToolBridge {
    /// The bridge of `remote`, named `local` here, on the connection of `lister`.
    pub(crate) fn new(
        lister: &ToolLister,
        local: String,
        remote: rmcp::model::Tool,
        listing: Weak<LiveToolList>,
    ) -> Self {
        let (definition, wrapped) = definition_from_mcp(&local, &remote, &lister.category);
        Self {
            peer: lister.peer.clone(),
            server: Arc::clone(&lister.label),
            original: Arc::from(remote.name.as_ref()),
            definition: Arc::new(Tool::SingleCommand(definition)),
            remote: Arc::new(remote),
            wrapped,
            timeout: lister.call_timeout,
            listing,
            progress: lister.progress.clone(),
        }
    }

    /// The name this tool is registered and called by (provider-safe).
    pub fn name(&self) -> &str {
        self.definition.name()
    }

    /// The tool's name on its server, sent on the wire.
    pub fn original_name(&self) -> &str {
        &self.original
    }

    /// The server, as its command or URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tool as the server listed it.
    pub fn remote(&self) -> &rmcp::model::Tool {
        &self.remote
    }

    /// Whether an "invalid params" error (`message`, JSON-RPC's `-32602`, which MCP servers
    /// also answer a call to an unknown tool with) means the server has no such tool: its
    /// message says so, or the client's newest listing of the server lacks the tool.
    fn unknown_to_server(&self, message: &str) -> bool {
        if self
            .listing
            .upgrade()
            .is_some_and(|listing| !listing.lists(&self.original))
        {
            return true;
        }
        says_tool_unknown(message, &self.original)
    }

    /// A server's "invalid params" answer (`-32602`) to a call, saying `message`: bad
    /// arguments (a Toolsmith server's refusal as its reason alone, any other server's words
    /// as they are), or no such tool on the server.
    fn invalid_params(&self, message: &str) -> ToolError {
        let name = self.name();
        if let Some(reason) = refused_arguments(&self.original, message) {
            return ToolError::invalid_arguments(name, server_text(reason));
        }
        if self.unknown_to_server(message) {
            return ToolError::execution(
                name,
                format!(
                    "no tool named '{}' on the MCP server {} (it said: {}); its tools may have \
                     changed since they were listed",
                    cut(&self.original),
                    self.server,
                    cut(message)
                ),
            );
        }
        ToolError::invalid_arguments(name, format!("the server said: {}", server_text(message)))
    }

    /// A call's failure as a Toolsmith error naming this tool, the server's texts in it cut
    /// ([`server_text`]).
    fn failure(&self, error: ServiceError) -> ToolError {
        let name = self.name();
        if let Some(reason) = unreadable_reason(&error) {
            // Not retried as a network failure: the same answer would come back.
            return ToolError::execution(
                name,
                format!(
                    "the answer of the MCP server {} could not be read: {}",
                    self.server,
                    server_text(&reason)
                ),
            );
        }
        match error {
            ServiceError::McpError(data) if data.code == ErrorCode::INVALID_PARAMS => {
                self.invalid_params(&data.message)
            }
            ServiceError::McpError(data) => ToolError::execution(
                name,
                format!(
                    "the server {} answered with error {}: {}",
                    self.server,
                    data.code.0,
                    server_text(&data.message)
                ),
            ),
            // rmcp says "closed" also when a streamed answer ended without the answer (its
            // events unreadable, say) while the connection stays open.
            ServiceError::TransportClosed if !self.peer.is_transport_closed() => {
                ToolError::network(
                    name,
                    format!(
                        "the MCP server {} ended the answer's stream without an answer it could read",
                        self.server
                    ),
                )
            }
            ServiceError::TransportClosed => ToolError::network(
                name,
                format!("the connection to the MCP server {} is closed", self.server),
            ),
            ServiceError::TransportSend(error) => ToolError::network(
                name,
                format!(
                    "the request to the MCP server {} failed: {}",
                    self.server,
                    server_text(&error.error.to_string())
                ),
            ),
            ServiceError::Timeout { .. } => ToolError::timeout(name),
            ServiceError::Cancelled { reason } => ToolError::Cancelled(format!(
                "the call to '{name}' was cancelled{}",
                reason
                    .map(|r| format!(": {}", server_text(&r)))
                    .unwrap_or_default()
            )),
            other => ToolError::execution(
                name,
                format!(
                    "the MCP server {}: {}",
                    self.server,
                    server_text(&other.to_string())
                ),
            ),
        }
    }
}

#[async_trait]
impl ToolImpl for McpToolBridge {
    fn definition(&self) -> Tool {
        Tool::clone(&self.definition)
    }

    fn shared_definition(&self) -> Arc<Tool> {
        Arc::clone(&self.definition)
    }

    /// The call as a `tools/call` request, in an `mcp.request` span (OpenTelemetry's MCP
    /// client span) that records how it ended.
    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let span = tracing::info_span!(
            "mcp.request",
            otel.name = %format_args!("tools/call {}", self.original),
            otel.kind = "client",
            mcp.method.name = "tools/call",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %self.original,
            toolsmith.mcp.server = %self.server,
            error.type = tracing::field::Empty,
        );
        let ended = self.call(arguments).instrument(span.clone()).await;
        if !span.is_disabled() {
            record_call_end(&span, &ended);
        }
        ended
    }

    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

impl McpToolBridge {
    /// Sends the call to the server and reads its answer.
    async fn call(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let params = CallToolRequestParams::new(self.original.to_string())
            .with_arguments(arguments.as_map().clone());
        let context = ToolCallContext::current();
        let outcome = match &context {
            Some(context) => {
                let call = self.send(params, Some(context));
                tokio::select! {
                    outcome = call => outcome,
                    () = context.cancellation().cancelled() => {
                        return Err(ToolError::Cancelled(format!(
                            "the call to '{}' was cancelled", self.name()
                        )));
                    }
                }
            }
            None => self.send(params, None).await,
        };
        match outcome {
            Ok(result) => from_mcp((self.name(), &self.original), result, self.wrapped),
            Err(error) => Err(self.failure(error)),
        }
    }

    /// Sends a `tools/call` of `params` and awaits its answer, the server's progress for it
    /// passed to `context`'s when there is one. Dropping this future (the manager's time
    /// limit, a cancelled batch) sends the server `notifications/cancelled`.
    ///
    /// rmcp's `call_tool` does this but for the progress: it keeps the request's token to
    /// itself, which a route needs bound before the request goes out.
    async fn send(
        &self,
        params: CallToolRequestParams,
        context: Option<&ToolCallContext>,
    ) -> Result<CallToolResult, ServiceError> {
        let mut request = CallToolRequest::new(params);
        let route: Option<(ProgressRoute, &ToolCallContext)> =
            context.map(|context| (self.progress.open(), context));
        if let Some((route, _)) = &route {
            request.extensions_mut().insert(route.request());
        }
        let handle = self
            .peer
            .send_request_with_option(
                ClientRequest::CallToolRequest(request),
                PeerRequestOptions::no_options(),
            )
            .await?;
        let mut abandoned = CancelOnDrop {
            peer: &self.peer,
            id: Some(handle.id.clone()),
        };
        let answer = handle.await_response();
        let answer = match &route {
            Some((route, context)) => route.pass_on_until(answer, context).await,
            None => answer.await,
        };
        abandoned.id = None;
        call_tool_result(answer?)
    }
}

/// `answer`, a server's to `tools/call`, as a tool's result. rmcp types an answer by the
/// fields it has, so a result without content comes typed as another kind: nothing at all, a
/// task's acknowledgement (its `resultType` alone), or its `_meta` alone. Each is a result
/// with no content, keeping what it says of itself, as rmcp's own `call_tool` takes them
/// (this function stands in for that one: kept in step with it on an rmcp upgrade).
fn call_tool_result(answer: ServerResult) -> Result<CallToolResult, ServiceError> {
    let mut contentless = CallToolResult::default();
    match answer {
        ServerResult::CallToolResult(result) => return Ok(result),
        ServerResult::EmptyResult(_) => {}
        ServerResult::TaskAckResult(ack) => {
            contentless.result_type = Some(ack.result_type);
            contentless.meta = ack.meta;
        }
        // An object of one field, `_meta`, an object itself.
        ServerResult::CustomResult(custom) => {
            let serde_json::Value::Object(mut fields) = custom.0 else {
                return Err(ServiceError::UnexpectedResponse);
            };
            let meta = fields.remove("_meta").filter(|_| fields.is_empty());
            let meta = meta.and_then(|meta| serde_json::from_value(meta).ok());
            contentless.meta = Some(meta.ok_or(ServiceError::UnexpectedResponse)?);
        }
        _ => return Err(ServiceError::UnexpectedResponse),
    }
    Ok(contentless)
}

/// Sends the server `notifications/cancelled` for the request `id` when dropped while it is
/// set: the call's future was dropped before its answer.
struct CancelOnDrop<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        let param = CancelledNotificationParam::new(
            Some(id),
            Some("the client stopped waiting for the call".to_owned()),
        );
        // Best effort: a closed connection has nothing left to cancel.
        runtime.spawn(async move {
            let _ = peer.notify_cancelled(param).await;
        });
    }
}

/// Whether a server's error `message` to a call of `original` says it has no such tool, as
/// the SDKs word it: rmcp's "tool not found", TypeScript's "Tool NAME not found", Toolsmith's
/// and Python's "Unknown tool 'NAME'" / "Unknown tool: NAME", "no such tool". Quotes around
/// the name and case do not matter; a message that only mentions a missing thing ("file not
/// found") is not one.
fn says_tool_unknown(message: &str, original: &str) -> bool {
    let plain = |text: &str| -> String {
        text.chars()
            .filter(|c| !matches!(c, '\'' | '"' | '`'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let message = plain(message);
    let original = plain(original);
    ["unknown tool", "no such tool", "tool not found"]
        .iter()
        .any(|phrase| message.contains(phrase))
        || [
            format!("tool {original} not found"),
            format!("tool {original} does not exist"),
        ]
        .iter()
        .any(|phrase| message.contains(phrase.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read as rmcp's `call_tool` reads them: a result without content may come as `{}` or
    /// as its `_meta` alone; an answer of another request's kind is unexpected.
    #[test]
    fn answers_without_content_are_results_and_others_are_unexpected() {
        let answer = |value: serde_json::Value| {
            call_tool_result(serde_json::from_value::<ServerResult>(value).unwrap())
        };
        let empty = answer(serde_json::json!({})).unwrap();
        assert!(
            empty.content.is_empty() && empty.meta.is_none(),
            "{empty:?}"
        );
        let meta = answer(serde_json::json!({"_meta": {"trace": "t1"}})).unwrap();
        assert_eq!(meta.meta.unwrap().0["trace"], "t1");
        let content = answer(serde_json::json!({"content": [{"type": "text", "text": "hi"}]}));
        assert_eq!(content.unwrap().content.len(), 1);
        // A task's acknowledgement that the call is complete, with or without its `_meta`.
        for value in [
            serde_json::json!({"resultType": "complete"}),
            serde_json::json!({"resultType": "complete", "_meta": {"trace": "t2"}}),
        ] {
            let ack = answer(value.clone()).unwrap();
            assert!(ack.content.is_empty(), "{value}: {ack:?}");
            assert!(ack.result_type.is_some(), "{value}: {ack:?}");
        }
        // `_meta` beside an unknown field, or not an object, is no result.
        for value in [
            serde_json::json!({"_meta": {"trace": "t1"}, "other": 1}),
            serde_json::json!({"_meta": 3}),
        ] {
            assert!(answer(value.clone()).is_err(), "{value}");
        }
        let listing = answer(serde_json::json!({"tools": []})).unwrap_err();
        assert!(
            matches!(listing, ServiceError::UnexpectedResponse),
            "{listing}"
        );
    }

    #[test]
    fn the_sdks_words_for_an_unknown_tool_are_read_as_such() {
        for message in [
            "Unknown tool 'read'; did you mean 'reads'?",
            "Unknown tool: read",
            "tool not found",
            "Tool read not found",
            "MCP error -32602: Tool \"read\" does not exist",
            "no such tool",
        ] {
            assert!(says_tool_unknown(message, "read"), "{message}");
        }
        for message in [
            "Invalid arguments for tool 'read': /path: file not found",
            "params.arguments: missing field `path`",
            "Tool write not found",
        ] {
            assert!(!says_tool_unknown(message, "read"), "{message}");
        }
    }
}
