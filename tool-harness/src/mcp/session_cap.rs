//! The cap on open MCP sessions over streamable HTTP: [`CappedSessionManager`] refuses a new
//! session past it, and [`refuse_sessions_past_cap`] answers a refused `initialize` with `503`
//! before rmcp sees it. The manager also reports each session's traffic to its idle timeout
//! ([`SessionActivity`]).
//!
//! Two parts because rmcp answers a failed `create_session` with a `500` whose body is plain
//! text (and logs it as an internal error), and its client shows only "HTTP 500" for a `5xx`
//! body that is not a JSON-RPC error. The middleware gives the clear answer; the manager keeps
//! the count right, since two `initialize`s can both pass the middleware while one place is
//! left: the one that loses gets rmcp's `500`, whose body still gives the reason.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::payload_too_large;
use super::rebinding_guard::{McpService, rmcp_refusal};
use super::session_idle::{SessionActivity, StreamTraffic};
use super::unreadable::is_request_id;

/// The JSON-RPC error code of a refused session: the range -32000 to -32099 is the
/// implementation's own ("server error").
const TOO_MANY_SESSIONS_CODE: i64 = -32000;

/// Why the session manager could not do what rmcp asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionCapError {
    /// The cap is reached: no new session until one ends.
    #[error(
        "this MCP server has too many open sessions (its limit is {limit}); try again when \
         one has ended"
    )]
    TooManySessions {
        /// The cap.
        limit: usize,
    },
    /// rmcp's own session manager failed.
    #[error(transparent)]
    Session(#[from] LocalSessionManagerError),
}

/// rmcp's [`LocalSessionManager`] with a cap on how many sessions it holds at once, and
/// (given one) an idle timeout that running requests hold off.
///
/// The count is the inner manager's own map of sessions, not a counter of ours: rmcp calls
/// `close_session`, which removes the session from that map, on a client's `DELETE` and
/// whenever the session's worker ends (idle timeout, shutdown, a failed handshake), so a
/// place is freed however a session ends and the count cannot drift.
///
/// The idle timeout is [`SessionActivity`]'s, not rmcp's (whose timer counts a running call
/// as idle): the inner manager's sessions are configured without one.
#[derive(Debug)]
pub(crate) struct CappedSessionManager {
    inner: Arc<LocalSessionManager>,
    max_sessions: usize,
    /// Held from the count to the insertion, so that two creations at once cannot both
    /// take the last place.
    creating: tokio::sync::Mutex<()>,
    /// The sessions' traffic, when they end after a time idle.
    idle: Option<Arc<SessionActivity>>,
}

impl CappedSessionManager {
    /// A manager holding at most `max_sessions` sessions, each ended after `idle_timeout`
    /// without traffic (`None`: never). The inner manager's own idle timeout is turned off.
    pub(crate) fn new(max_sessions: usize, idle_timeout: Option<std::time::Duration>) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = None;
        Self {
            inner: Arc::new(inner),
            max_sessions,
            creating: tokio::sync::Mutex::new(()),
            idle: idle_timeout.map(SessionActivity::new),
        }
    }

    /// The cap.
    pub(crate) fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// How many sessions are open.
    pub(crate) async fn open_sessions(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// Whether a new session would be refused now.
    pub(crate) async fn is_full(&self) -> bool {
        self.open_sessions().await >= self.max_sessions
    }

    /// Notes traffic of session `id`, when sessions have an idle timeout.
    fn touch(&self, id: &SessionId) {
        if let Some(idle) = &self.idle {
            idle.touch(id);
        }
    }

    /// The traffic of a new stream of session `id` (a request's answers when `request`),
    /// when sessions have an idle timeout.
    fn stream_traffic(&self, id: &SessionId, request: bool) -> Option<StreamTraffic> {
        self.idle.as_ref().map(|idle| idle.stream(id, request))
    }
}

/// `stream`, reporting each message it carries to `traffic`, and its end when dropped.
fn counted(
    stream: impl Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    traffic: Option<StreamTraffic>,
) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
    stream.inspect(move |_| {
        if let Some(traffic) = &traffic {
            traffic.passed();
        }
    })
}

impl SessionManager for CappedSessionManager {
    type Error = SessionCapError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _creating = self.creating.lock().await;
        if self.is_full().await {
            return Err(SessionCapError::TooManySessions {
                limit: self.max_sessions,
            });
        }
        let (id, transport) = self.inner.create_session().await?;
        if let Some(idle) = &self.idle {
            let inner = Arc::clone(&self.inner);
            let expired = id.clone();
            idle.watch(id.clone(), async move {
                if let Err(error) = inner.close_session(&expired).await {
                    tracing::warn!(session = %expired, %error, "ending an idle MCP session");
                }
            });
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Some(idle) = &self.idle {
            idle.forget(id);
        }
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // Busy from before the request reaches the session, so that it cannot time out
        // between the two.
        let traffic = self.stream_traffic(id, true);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(counted(stream, traffic))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(counted(stream, self.stream_traffic(id, false)))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(counted(stream, self.stream_traffic(id, false)))
    }

    // `restore_session` and `event_store` keep the trait's defaults (no restoring, no store):
    // the router configures no session store, so rmcp never restores a session, and the
    // inner manager has no event store.
}

/// What the cap middleware needs: the sessions, how much of a body it may read, and rmcp's
/// service, whose `Host` / `Origin` check comes before the cap's refusal.
#[derive(Clone)]
pub(crate) struct SessionCapState {
    /// The sessions the cap is on.
    pub(crate) sessions: Arc<CappedSessionManager>,
    /// The options' largest request body (rmcp's own limit for the same body).
    pub(crate) max_body_bytes: usize,
    /// rmcp's service, asked whether it refuses a request's head ([`rmcp_refusal`]).
    pub(crate) rmcp: McpService,
}

/// The parts of a JSON-RPC message that say whether it opens a session.
#[derive(Deserialize)]
struct MessageHead {
    #[serde(default)]
    id: Value,
    #[serde(default)]
    method: Option<String>,
}

/// Answers `503` with a JSON-RPC error to an `initialize` request (its id a string or an
/// integer) that would open a session past the cap; passes everything else on, untouched.
///
/// Only a `POST` without `Mcp-Session-Id` can open a session, and only while the cap is
/// reached is its body read: a request of the stateless revision (2026-07-28) opens none
/// and is served whatever the count.
pub(crate) async fn refuse_sessions_past_cap(
    State(cap): State<SessionCapState>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST
        || request.headers().contains_key(HEADER_SESSION_ID)
        || !cap.sessions.is_full().await
    {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // A foreign page learns nothing, not even that the server is full.
    if let Some(refusal) = rmcp_refusal(&cap.rmcp, &parts).await {
        return refusal;
    }
    let Ok(bytes) = axum::body::to_bytes(body, cap.max_body_bytes).await else {
        // Too long, or the client stopped sending (then no one reads this answer).
        return payload_too_large(cap.max_body_bytes);
    };
    match serde_json::from_slice::<MessageHead>(&bytes) {
        // Only a request (its id a string or an integer) opens a session: anything else is
        // malformed, and rmcp says so as it does below the cap.
        Ok(head) if head.method.as_deref() == Some("initialize") && is_request_id(&head.id) => {
            too_many_sessions(head.id, cap.sessions.max_sessions())
        }
        // Anything else is rmcp's to answer, from the same bytes.
        _ => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// The answer to an `initialize` refused for the cap: `503` and a JSON-RPC error to request
/// `id`, which rmcp's client shows as the handshake's error (a `5xx` without a JSON-RPC body
/// it shows as its status alone).
fn too_many_sessions(id: Value, limit: usize) -> Response {
    let message = SessionCapError::TooManySessions { limit }.to_string();
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": TOO_MANY_SESSIONS_CODE,
            "message": message,
            "data": {"maxSessions": limit},
        },
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_past_the_cap_are_refused_until_one_closes() {
        let sessions = CappedSessionManager::new(2, None);
        let (first, _first_transport) = sessions.create_session().await.unwrap();
        let (_second, _second_transport) = sessions.create_session().await.unwrap();
        assert!(sessions.is_full().await);
        let refused = sessions.create_session().await.err().unwrap();
        assert!(
            matches!(refused, SessionCapError::TooManySessions { limit: 2 }),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("its limit is 2"), "{refused}");
        assert_eq!(sessions.open_sessions().await, 2);

        sessions.close_session(&first).await.unwrap();
        assert_eq!(sessions.open_sessions().await, 1);
        // Closing twice (a client's DELETE, then rmcp when the worker ends) frees one place.
        sessions.close_session(&first).await.unwrap();
        assert_eq!(sessions.open_sessions().await, 1);
        let (third, _third_transport) = sessions.create_session().await.unwrap();
        assert!(sessions.has_session(&third).await.unwrap());
        assert!(sessions.create_session().await.is_err());
    }

    #[tokio::test]
    async fn creations_at_once_take_no_more_than_the_places_left() {
        let sessions = Arc::new(CappedSessionManager::new(3, None));
        // Holding the map makes every creation wait at the count, then all go on at once.
        let held = sessions.inner.sessions.write().await;
        let attempts: Vec<_> = (0..16)
            .map(|_| {
                let sessions = Arc::clone(&sessions);
                tokio::spawn(async move { sessions.create_session().await.ok() })
            })
            .collect();
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
        drop(held);
        let mut created = Vec::new();
        for attempt in attempts {
            created.extend(attempt.await.unwrap());
        }
        assert_eq!(created.len(), 3);
        assert_eq!(sessions.open_sessions().await, 3);
    }

    #[tokio::test]
    async fn a_cap_of_zero_refuses_every_session() {
        let sessions = CappedSessionManager::new(0, None);
        assert!(sessions.is_full().await);
        assert!(sessions.create_session().await.is_err());
    }
}
