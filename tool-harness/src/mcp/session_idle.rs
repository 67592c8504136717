//! The idle timeout of MCP sessions over streamable HTTP: [`SessionActivity`] ends a session
//! after it has had no request running and no message passing for the timeout.
//!
//! rmcp's own timeout (its session worker's `keep_alive`) restarts only when a message passes
//! the worker, so a tool call running longer than it without progress ended its session, and
//! the client never got the result. Here a request counts as running for as long as the
//! stream of its answers is open: from the request to its response, or to the client going
//! away (which drops the stream; the SSE keep-alive comments rmcp writes every 15 seconds find
//! a connection that went away silently). A session's standalone stream (`GET`) is not a
//! request: only the messages it carries count, as with rmcp.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::SessionId;
use tokio::time::Instant;
use toolsmith_core::CancellationToken;

/// The traffic of each open session, and the timeout that ends the idle ones.
#[derive(Debug)]
pub(crate) struct SessionActivity {
    timeout: Duration,
    sessions: Mutex<HashMap<SessionId, Activity>>,
}

/// One session's traffic.
#[derive(Debug)]
struct Activity {
    /// Requests whose answer stream is open.
    running: usize,
    /// When a message last passed, or a request began or ended.
    last_traffic: Instant,
    /// Cancelled when the session ends otherwise, to end its watch at once.
    ended: CancellationToken,
}

/// What a session's watch does next.
enum Watch {
    /// The session ended otherwise: nothing to watch.
    Gone,
    /// Look again at this instant (the session is busy, or idle since not long enough).
    Until(Instant),
    /// The timeout reaches past any instant the clock can hold (`Duration::MAX`): the
    /// session is never idle long enough, and only its end ends the watch.
    Never,
    /// Idle for the timeout: end it.
    Expired,
}

impl SessionActivity {
    /// Sessions ending after `timeout` idle.
    pub(crate) fn new(timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            timeout,
            sessions: Mutex::new(HashMap::new()),
        })
    }

    /// Starts watching session `id`, which has had traffic now, in a task of the current
    /// runtime: once it is idle for the timeout, the watch runs `end` (which closes it), and
    /// stops. [`forget`](Self::forget) stops it early, when the session ends otherwise.
    pub(crate) fn watch<End>(self: &Arc<Self>, id: SessionId, end: End)
    where
        End: Future<Output = ()> + Send + 'static,
    {
        let ended = CancellationToken::new();
        self.lock().insert(
            id.clone(),
            Activity {
                running: 0,
                last_traffic: Instant::now(),
                ended: ended.clone(),
            },
        );
        let activity = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let wake = match activity.next_watch(&id) {
                    Watch::Gone => return,
                    Watch::Expired => break,
                    Watch::Until(wake) => wake,
                    Watch::Never => {
                        ended.cancelled().await;
                        return;
                    }
                };
                tokio::select! {
                    () = ended.cancelled() => return,
                    () = tokio::time::sleep_until(wake) => {}
                }
            }
            tracing::debug!(
                session = %id,
                timeout = ?activity.timeout,
                "ending an MCP session idle for its timeout"
            );
            end.await;
        });
    }

    /// Stops tracking session `id` (it has ended) and ends its watch.
    pub(crate) fn forget(&self, id: &SessionId) {
        if let Some(activity) = self.lock().remove(id) {
            activity.ended.cancel();
        }
    }

    /// Notes traffic of session `id` now.
    pub(crate) fn touch(&self, id: &SessionId) {
        if let Some(activity) = self.lock().get_mut(id) {
            activity.last_traffic = Instant::now();
        }
    }

    /// The traffic of a stream of session `id`, a request's answers when `request` (the
    /// session counts as busy until the returned value is dropped).
    pub(crate) fn stream(self: &Arc<Self>, id: &SessionId, request: bool) -> StreamTraffic {
        if let Some(activity) = self.lock().get_mut(id) {
            activity.last_traffic = Instant::now();
            activity.running += usize::from(request);
        }
        StreamTraffic {
            activity: Arc::clone(self),
            id: id.clone(),
            request,
        }
    }

    /// What session `id`'s watch does next; an expired session is forgotten at once, under
    /// the same lock, so that no request can begin on it between the look and the end.
    fn next_watch(&self, id: &SessionId) -> Watch {
        let mut sessions = self.lock();
        let Some(activity) = sessions.get(id) else {
            return Watch::Gone;
        };
        let now = Instant::now();
        // A busy session is looked at again a timeout from now; an idle one, a timeout
        // from its last traffic. Added checked: `Instant + Duration` panics past the clock.
        let busy = activity.running > 0;
        let since = if busy { now } else { activity.last_traffic };
        let Some(deadline) = since.checked_add(self.timeout) else {
            return Watch::Never;
        };
        if busy || deadline > now {
            return Watch::Until(deadline);
        }
        sessions.remove(id);
        Watch::Expired
    }

    /// The map; a panic elsewhere while it was held left it consistent (each change is one
    /// statement), so a poisoned lock is used as it is.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Activity>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The traffic of one open stream of a session: each message it carries is traffic, and a
/// request's stream keeps its session busy until dropped.
#[derive(Debug)]
pub(crate) struct StreamTraffic {
    activity: Arc<SessionActivity>,
    id: SessionId,
    request: bool,
}

impl StreamTraffic {
    /// A message passed on the stream.
    pub(crate) fn passed(&self) {
        self.activity.touch(&self.id);
    }
}

impl Drop for StreamTraffic {
    fn drop(&mut self) {
        let mut sessions = self.activity.lock();
        if let Some(activity) = sessions.get_mut(&self.id) {
            activity.last_traffic = Instant::now();
            if self.request {
                activity.running = activity.running.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// A session watched with a timeout of ten seconds, and whether it has been ended.
    fn watched(activity: &Arc<SessionActivity>) -> (SessionId, Arc<AtomicBool>) {
        let id = SessionId::from("s");
        let ended = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ended);
        activity.watch(
            id.clone(),
            async move { flag.store(true, Ordering::SeqCst) },
        );
        (id, ended)
    }

    /// Lets time pass by `by` (the clock is paused: the watch wakes exactly on time).
    async fn after(by: Duration) {
        tokio::time::sleep(by).await;
        // The watch's task runs once woken.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_session_ends_after_the_timeout() {
        let activity = SessionActivity::new(Duration::from_secs(10));
        let (id, ended) = watched(&activity);
        after(Duration::from_secs(9)).await;
        assert!(!ended.load(Ordering::SeqCst));
        after(Duration::from_secs(2)).await;
        assert!(ended.load(Ordering::SeqCst));
        assert!(activity.lock().get(&id).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn traffic_restarts_the_timeout() {
        let activity = SessionActivity::new(Duration::from_secs(10));
        let (id, ended) = watched(&activity);
        after(Duration::from_secs(8)).await;
        activity.touch(&id);
        after(Duration::from_secs(8)).await;
        assert!(!ended.load(Ordering::SeqCst));
        after(Duration::from_secs(3)).await;
        assert!(ended.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn a_running_request_keeps_its_session_however_long_it_runs() {
        let activity = SessionActivity::new(Duration::from_secs(10));
        let (id, ended) = watched(&activity);
        let request = activity.stream(&id, true);
        after(Duration::from_secs(95)).await;
        assert!(!ended.load(Ordering::SeqCst));
        drop(request);
        // Idle from the request's end on.
        after(Duration::from_secs(9)).await;
        assert!(!ended.load(Ordering::SeqCst));
        after(Duration::from_secs(11)).await;
        assert!(ended.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_standalone_stream_alone_is_not_traffic() {
        let activity = SessionActivity::new(Duration::from_secs(10));
        let (id, ended) = watched(&activity);
        let standalone = activity.stream(&id, false);
        after(Duration::from_secs(6)).await;
        standalone.passed();
        after(Duration::from_secs(6)).await;
        assert!(!ended.load(Ordering::SeqCst));
        after(Duration::from_secs(5)).await;
        assert!(ended.load(Ordering::SeqCst));
        drop(standalone);
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_ended_otherwise_is_not_ended_again() {
        let activity = SessionActivity::new(Duration::from_secs(10));
        let (id, ended) = watched(&activity);
        activity.forget(&id);
        after(Duration::from_secs(20)).await;
        assert!(!ended.load(Ordering::SeqCst));
        // A stream of it still open does nothing when it closes.
        activity.stream(&id, true);
        assert!(activity.lock().is_empty());
    }

    /// A timeout no instant reaches (`Duration::MAX`; `toolsmith serve
    /// --session-idle-timeout` takes any `u64` of seconds) ends no session, busy or idle,
    /// and its watch ends with the session. Adding it to an instant panicked.
    #[tokio::test(start_paused = true)]
    async fn a_timeout_past_the_clock_ends_no_session() {
        let activity = SessionActivity::new(Duration::MAX);
        let (id, ended) = watched(&activity);
        assert!(matches!(activity.next_watch(&id), Watch::Never));
        let request = activity.stream(&id, true);
        assert!(matches!(activity.next_watch(&id), Watch::Never));
        drop(request);
        after(Duration::from_secs(400 * 24 * 3600)).await;
        assert!(!ended.load(Ordering::SeqCst));
        // The watch's task holds the other reference until the session ends.
        assert_eq!(Arc::strong_count(&activity), 2);
        activity.forget(&id);
        after(Duration::ZERO).await;
        assert_eq!(Arc::strong_count(&activity), 1);
        assert!(!ended.load(Ordering::SeqCst));
    }
}
