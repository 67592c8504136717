//! The DNS-rebinding guard first: [`refuse_what_rmcp_refuses`] answers a request whose
//! `Host` or `Origin` rmcp refuses before any other layer of ours looks at it.
//!
//! rmcp checks `Host` and `Origin` (against [`McpHttpOptions`](super::McpHttpOptions)'
//! allowed hosts and origins, in its `StreamableHttpServerConfig`) only once a request
//! reaches it, after our layers: a full server answered a foreign `Host` with the cap's
//! `503`, telling a page that rebinds its name to this machine how loaded the server is. The
//! check is rmcp's own, asked ahead of time, not a copy of it: the guard hands rmcp the
//! request's head under a method that rmcp serves none of, which rmcp answers after the check
//! with `405` and no other effect (no session, no body read).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::StreamableHttpService;

use super::server::McpServer;
use super::session_cap::CappedSessionManager;

/// rmcp's service as the router mounts it: here, only asked whether it refuses a head.
pub(crate) type McpService = StreamableHttpService<McpServer, CappedSessionManager>;

/// The method the probe is sent with: one the streamable HTTP transport has no use for, so
/// that rmcp answers it `405` once the head has passed its check.
const PROBE_METHOD: Method = Method::TRACE;

/// Answers a request with rmcp's own refusal when rmcp refuses its `Host` or `Origin`
/// (`400` for a malformed `Host`, `403` for one not allowed); passes everything else on,
/// untouched.
///
/// Any other answer to the probe is taken as a pass: should rmcp ever serve the probe's
/// method, requests go on to rmcp, which checks the head again itself.
pub(crate) async fn refuse_what_rmcp_refuses(
    State(rmcp): State<McpService>,
    request: Request,
    next: Next,
) -> Response {
    let mut probe = Request::new(Body::empty());
    *probe.method_mut() = PROBE_METHOD;
    *probe.uri_mut() = request.uri().clone();
    *probe.headers_mut() = request.headers().clone();
    let answer = rmcp.handle(probe).await;
    if matches!(
        answer.status(),
        StatusCode::BAD_REQUEST | StatusCode::FORBIDDEN
    ) {
        return answer.map(Body::new);
    }
    next.run(request).await
}
