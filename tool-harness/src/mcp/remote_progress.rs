//! A bridged call's progress: the server's `notifications/progress` under the call's
//! progress token, passed on to the local call's context ([`ToolCallContext::progress`]),
//! which hands them to its sink (a batch's, an agent run's events).
//!
//! rmcp's client puts a token of its own on every request (a counter of the connection,
//! set as the request is sent) and hands each notification to the client's handler on a
//! task of its own: in no set order, and possibly after the call's answer has come. So the
//! reports are taken where the messages pass, in the order the server sent them
//! ([`ProgressTap`], a transport around the connection's): a call's request, as it goes
//! out, binds its token to the call's queue (no report can come before the call listens for
//! it), each notification goes to the queue of its token (ignored when no call waits under
//! it), and the call passes what its queue holds to its context as it runs, and what is
//! left once its answer has come. The call's answer ends its route (a notification the
//! server sends after it is ignored, as one after the call's end is), and so does the call's
//! end (failed, cancelled or dropped): the connection keeps nothing of it.
//!
//! The call's own task passes the reports on, as a sink expects. A run whose events nobody
//! reads does not poll its calls meanwhile, while the server may go on sending: a queue
//! keeps at most [`MAX_WAITING_REPORTS`] (a report that comes when it is full replaces the
//! newest waiting, so the last one sent is never lost), each message cut after
//! [`MAX_REPORT_MESSAGE_CHARS`] characters.
//!
//! [`ToolCallContext::progress`]: toolsmith_core::ToolCallContext::progress

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    GetExtensions as _, GetMeta as _, JsonRpcError, JsonRpcMessage, JsonRpcNotification,
    JsonRpcResponse, ProgressNotificationParam, ProgressToken, RequestId, ServerNotification,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::Notify;
use toolsmith_core::ToolCallContext;

/// How many of a call's reports may wait for the call to pass them on.
pub(crate) const MAX_WAITING_REPORTS: usize = 64;

/// The most characters of a report's message kept (cut with `…` after).
pub(crate) const MAX_REPORT_MESSAGE_CHARS: usize = 1_000;

/// The calls of one connection waiting for progress, by the token their request carries.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes {
    calls: Arc<Mutex<Routed>>,
}

/// The calls whose request has gone out and not been answered.
#[derive(Default)]
struct Routed {
    by_token: HashMap<ProgressToken, Arc<CallReports>>,
    /// The same calls, by their request's id: an answer ends its call's route.
    by_request: HashMap<RequestId, Arc<CallReports>>,
}

impl Routed {
    /// Ends the route of `call`, whose request went out as `request` under `token`.
    fn remove(&mut self, request: &RequestId, token: &ProgressToken, call: &Arc<CallReports>) {
        // A token or a request id used again (rmcp's counters come round) may route a newer
        // call by now: only this call's entries go.
        let this_call = |routed: &Arc<CallReports>| Arc::ptr_eq(routed, call);
        if self.by_request.get(request).is_some_and(this_call) {
            self.by_request.remove(request);
        }
        if self.by_token.get(token).is_some_and(this_call) {
            self.by_token.remove(token);
        }
    }
}

/// One call's reports, waiting for the call to pass them on.
#[derive(Default)]
struct CallReports {
    state: Mutex<ReportsState>,
    /// Woken at each report.
    more: Notify,
}

#[derive(Default)]
struct ReportsState {
    waiting: VecDeque<RemoteReport>,
    /// The id and token the call's request went out with, once it has.
    sent: Option<(RequestId, ProgressToken)>,
    /// The call has ended: nothing more is kept, its request binds nothing.
    ended: bool,
}

/// One `notifications/progress` of the server, as kept.
struct RemoteReport {
    done: f64,
    total: Option<f64>,
    message: Option<String>,
}

/// The mark on a call's request (in its extensions, never sent) that binds the token it
/// goes out with to the call's queue.
#[derive(Clone)]
pub(crate) struct ProgressRequest(Arc<CallReports>);

/// A call's route for its progress, from its request until it is dropped.
pub(crate) struct ProgressRoute {
    routes: ProgressRoutes,
    reports: Arc<CallReports>,
}

impl ProgressRoutes {
    /// A route for a call about to be sent: its request carries [`ProgressRoute::request`].
    pub(crate) fn open(&self) -> ProgressRoute {
        ProgressRoute {
            routes: self.clone(),
            reports: Arc::default(),
        }
    }

    /// The call `request` marks goes out as the request `id` under `token`: reports under it
    /// go to that call from now on, until its answer (unless the call has ended already).
    fn bind(&self, id: RequestId, token: ProgressToken, request: &ProgressRequest) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let mut state = request
            .0
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if state.ended || state.sent.is_some() {
            return;
        }
        state.sent = Some((id.clone(), token.clone()));
        calls.by_token.insert(token, Arc::clone(&request.0));
        calls.by_request.insert(id, Arc::clone(&request.0));
    }

    /// The request `id` has been answered: its call's route ends (what waits is still
    /// passed on).
    fn answered(&self, id: &RequestId) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(call) = calls.by_request.get(id).cloned() else {
            return;
        };
        let sent = call
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sent
            .clone();
        if let Some((id, token)) = sent {
            calls.remove(&id, &token, &call);
        }
    }

    /// Passes `param` to the call waiting under its token, if one is.
    fn deliver(&self, param: &ProgressNotificationParam) {
        let call = self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_token
            .get(&param.progress_token)
            .cloned();
        if let Some(call) = call {
            call.push(RemoteReport {
                done: param.progress,
                total: param.total,
                message: param.message.as_deref().map(|message| {
                    toolsmith_core::provider::cut_to(message, MAX_REPORT_MESSAGE_CHARS).into_owned()
                }),
            });
        }
    }

    /// How many calls wait for progress (entries by token, entries by request).
    #[cfg(test)]
    fn len(&self) -> (usize, usize) {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        (calls.by_token.len(), calls.by_request.len())
    }
}

impl CallReports {
    fn push(&self, report: RemoteReport) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.ended {
            return;
        }
        if state.waiting.len() >= MAX_WAITING_REPORTS {
            state.waiting.pop_back();
        }
        state.waiting.push_back(report);
        drop(state);
        self.more.notify_one();
    }

    fn pop(&self) -> Option<RemoteReport> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .waiting
            .pop_front()
    }
}

impl RemoteReport {
    fn pass_to(self, context: &ToolCallContext) {
        context.progress(self.done, self.total, self.message.as_deref());
    }
}

impl ProgressRoute {
    /// The mark to put in the call's request's extensions.
    pub(crate) fn request(&self) -> ProgressRequest {
        ProgressRequest(Arc::clone(&self.reports))
    }

    /// Awaits `answer`, passing the call's reports to `context` as they come, and those
    /// still waiting once it has come (in the order the server sent them).
    pub(crate) async fn pass_on_until<F: Future>(
        &self,
        answer: F,
        context: &ToolCallContext,
    ) -> F::Output {
        let mut answer = std::pin::pin!(answer);
        loop {
            tokio::select! {
                // The answer first: a server sending progress without pause does not keep
                // the call from ending.
                biased;
                outcome = &mut answer => {
                    while let Some(report) = self.reports.pop() {
                        report.pass_to(context);
                    }
                    return outcome;
                }
                report = self.next() => report.pass_to(context),
            }
        }
    }

    /// The next report, once there is one.
    async fn next(&self) -> RemoteReport {
        loop {
            if let Some(report) = self.reports.pop() {
                return report;
            }
            // `notify_one` keeps a permit when no one waits: a report pushed between the
            // look above and this wait is not missed.
            self.reports.more.notified().await;
        }
    }
}

impl Drop for ProgressRoute {
    /// The call has ended: its token routes nothing more, and what waits is dropped.
    fn drop(&mut self) {
        let mut calls = self
            .routes
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut state = self
            .reports
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.ended = true;
        state.waiting.clear();
        if let Some((id, token)) = state.sent.take() {
            calls.remove(&id, &token, &self.reports);
        }
    }
}

/// A client's transport, with the progress of its bridged calls routed as its messages pass
/// (see the module's documentation).
pub(crate) struct ProgressTap<T> {
    inner: T,
    routes: ProgressRoutes,
}

impl<T> ProgressTap<T> {
    pub(crate) fn new(inner: T, routes: ProgressRoutes) -> Self {
        Self { inner, routes }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    // rmcp names the transport in its errors: the connection's own.
    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item
            && let Some(call) = request.request.extensions().get::<ProgressRequest>()
            && let Some(token) = request.request.get_meta().get_progress_token()
        {
            self.routes.bind(request.id.clone(), token, call);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        match &message {
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ServerNotification::ProgressNotification(progress),
                ..
            }) => self.routes.deliver(&progress.params),
            JsonRpcMessage::Response(JsonRpcResponse { id, .. })
            | JsonRpcMessage::Error(JsonRpcError { id: Some(id), .. }) => {
                self.routes.answered(id);
            }
            _ => {}
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rmcp::model::NumberOrString;
    use toolsmith_core::{CancellationToken, Progress};

    use super::*;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn id(n: i64) -> RequestId {
        NumberOrString::Number(n)
    }

    fn notification(token: ProgressToken, done: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token, done).with_message("m")
    }

    /// Reports passed on, as (done, message).
    type Passed = Arc<Mutex<Vec<(f64, Option<String>)>>>;

    /// A context whose reports are kept.
    fn recording() -> (ToolCallContext, Passed) {
        let reports: Passed = Arc::default();
        let seen = Arc::clone(&reports);
        let context = ToolCallContext::new("c", "t", CancellationToken::new()).with_progress(
            Arc::new(move |progress: Progress| {
                seen.lock().unwrap().push((progress.done, progress.message));
            }),
        );
        (context, reports)
    }

    #[tokio::test]
    async fn a_route_ends_with_its_call_and_keeps_what_a_flood_sends_bounded() {
        let routes = ProgressRoutes::default();
        let route = routes.open();
        routes.bind(id(1), token(7), &route.request());
        assert_eq!(routes.len(), (1, 1));
        // The call is not polled while the server sends ten thousand reports.
        for done in 1..=10_000 {
            routes.deliver(&notification(token(7), f64::from(done)));
        }
        routes.deliver(&notification(token(8), 1.0));
        assert_eq!(
            route.reports.state.lock().unwrap().waiting.len(),
            MAX_WAITING_REPORTS
        );
        let (context, reports) = recording();
        route.pass_on_until(async {}, &context).await;
        let done: Vec<f64> = reports.lock().unwrap().iter().map(|r| r.0).collect();
        let mut expected: Vec<f64> = (1..MAX_WAITING_REPORTS).map(|n| n as f64).collect();
        expected.push(10_000.0);
        assert_eq!(done, expected, "the first 63, then the last");

        drop(route);
        assert_eq!(
            routes.len(),
            (0, 0),
            "no entry left once the call has ended"
        );
        routes.deliver(&notification(token(7), 10_001.0));
        routes.answered(&id(1));
        assert_eq!(routes.len(), (0, 0));
    }

    #[test]
    fn a_request_sent_after_its_call_ended_binds_nothing() {
        let routes = ProgressRoutes::default();
        let route = routes.open();
        let request = route.request();
        drop(route);
        routes.bind(id(1), token(1), &request);
        assert_eq!(routes.len(), (0, 0));
    }

    #[test]
    fn a_token_used_again_leaves_the_newer_calls_route_in_place() {
        let routes = ProgressRoutes::default();
        let older = routes.open();
        routes.bind(id(1), token(1), &older.request());
        // The counter came round while the older call still runs.
        let newer = routes.open();
        routes.bind(id(2), token(1), &newer.request());
        drop(older);
        assert_eq!(routes.len(), (1, 1));
        routes.deliver(&notification(token(1), 5.0));
        assert_eq!(newer.reports.state.lock().unwrap().waiting.len(), 1);
        drop(newer);
        assert_eq!(routes.len(), (0, 0));
    }

    #[tokio::test]
    async fn an_answer_ends_the_route_and_what_waits_is_still_passed_on() {
        let routes = ProgressRoutes::default();
        let route = routes.open();
        routes.bind(id(4), token(4), &route.request());
        routes.deliver(&notification(token(4), 1.0));
        routes.answered(&id(4));
        assert_eq!(routes.len(), (0, 0));
        // Sent after the answer, read before the call saw it.
        routes.deliver(&notification(token(4), 2.0));
        let (context, reports) = recording();
        route.pass_on_until(async {}, &context).await;
        assert_eq!(*reports.lock().unwrap(), [(1.0, Some("m".to_owned()))]);
    }

    #[tokio::test]
    async fn a_long_message_is_cut() {
        let routes = ProgressRoutes::default();
        let route = routes.open();
        routes.bind(id(3), token(3), &route.request());
        let long = "x".repeat(100_000);
        routes.deliver(&ProgressNotificationParam::new(token(3), 1.0).with_message(long));
        let (context, reports) = recording();
        route.pass_on_until(async {}, &context).await;
        let message = reports.lock().unwrap()[0].1.clone().unwrap();
        assert!(
            message.chars().count() <= MAX_REPORT_MESSAGE_CHARS + 1,
            "{}",
            message.len()
        );
        assert!(message.ends_with('…'), "{message}");
    }
}
