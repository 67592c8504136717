//! rmcp's DNS-rebinding check asked ahead of time: [`rmcp_refusal`] is rmcp's answer to a
//! request whose `Host` or `Origin` it refuses, for a layer of ours that would otherwise
//! answer before rmcp looks at them.
//!
//! rmcp checks `Host` and `Origin` (against [`McpHttpOptions`](super::McpHttpOptions)'
//! allowed hosts and origins, in its `StreamableHttpServerConfig`) only once a request
//! reaches it, after our layers: a full server answered a foreign `Host` with the cap's
//! `503`, telling a page that rebinds its name to this machine how loaded the server is. The
//! check is rmcp's own, not a copy of it: the request's head is handed to rmcp under a
//! method that rmcp serves none of, which rmcp answers after the check with `405` and no
//! other effect (no session, no body read). It is asked only where one of our layers is
//! about to answer in rmcp's place (the session cap), not for every request: on a request
//! rmcp serves anyway, it cost about 3 % of a local HTTP call.

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{Method, Request, StatusCode};
use axum::response::Response;
use rmcp::transport::StreamableHttpService;

use super::server::McpServer;
use super::session_cap::CappedSessionManager;

/// rmcp's service as the router mounts it: here, only asked whether it refuses a head.
pub(crate) type McpService = StreamableHttpService<McpServer, CappedSessionManager>;

/// The method the probe is sent with: one the streamable HTTP transport has no use for, so
/// that rmcp answers it `405` once the head has passed its check.
const PROBE_METHOD: Method = Method::TRACE;

/// rmcp's refusal of the request whose head is `head` (`400` for a malformed `Host`, `403`
/// for a `Host` or `Origin` not allowed), or `None` when rmcp would take it.
///
/// Any other answer to the probe is taken as a pass: should rmcp ever serve the probe's
/// method, the request goes on to rmcp, which checks the head again itself.
pub(crate) async fn rmcp_refusal(rmcp: &McpService, head: &Parts) -> Option<Response> {
    let mut probe = Request::new(Body::empty());
    *probe.method_mut() = PROBE_METHOD;
    *probe.uri_mut() = head.uri.clone();
    *probe.headers_mut() = head.headers.clone();
    let answer = rmcp.handle(probe).await;
    matches!(
        answer.status(),
        StatusCode::BAD_REQUEST | StatusCode::FORBIDDEN
    )
    .then(|| answer.map(Body::new))
}
