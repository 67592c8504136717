//! Batches: a turn's calls planned into a dependency [`Workflow`] (`workflow`), retried
//! per policy (`retry`), and run stage by stage, each call ending in a
//! [`ToolCallOutcome`](crate::ToolCallOutcome) (`outcome`).
//!
//! Running a batch of calls: stage after stage of a [`Workflow`], parallel stages
//! concurrently up to a limit, sequential stages in order with fail-fast, failed dependencies
//! propagated, and the whole batch under an optional deadline and cancellation token.
//!
//! The calls of a stage run as futures polled together by the batch's own future (no task
//! is spawned), so a batch runs on any executor, borrows its requests, and stops its running
//! calls by dropping them. Tools that compute for long should move that work off the async
//! thread themselves (e.g. `tokio::task::spawn_blocking`).

pub(crate) mod call_span;
pub(crate) mod outcome;
pub(crate) mod retry;
pub(crate) mod workflow;

use std::collections::VecDeque;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt as _;
use futures::Stream;
use futures::StreamExt as _;
use futures::future::Either;
use futures::stream::FuturesUnordered;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use tracing::Instrument as _;

use crate::batch::call_span::{execute_tool_span, record_call_end, trace_call_not_run};
use crate::batch::retry::PreparedCall;
use crate::{
    ProgressSink, SessionState, StageMode, ToolCallContext, ToolCallManager, ToolCallOutcome,
    ToolCallRequest, ToolCallResult, ToolError, Workflow, WorkflowStage,
};

/// How a batch runs: its concurrency limit, deadline, cancellation token, and whether calls
/// must be to offered tools.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::{BatchOptions, CancellationToken};
///
/// let token = CancellationToken::new();
/// let options = BatchOptions::new()
///     .with_concurrency_limit(4)
///     .with_deadline(Duration::from_secs(30))
///     .with_cancellation(token.clone())
///     .with_offer_check(true);
/// assert_eq!(options.concurrency_limit(), Some(4));
/// // Elsewhere: token.cancel() stops the batch; its outcomes still come back complete.
/// ```
#[derive(Clone, Default)]
pub struct BatchOptions {
    concurrency_limit: Option<usize>,
    deadline: Option<Duration>,
    /// When the deadline counts from, if not from the batch's start.
    deadline_from: Option<Instant>,
    cancellation: Option<CancellationToken>,
    check_offers: bool,
    progress: Option<Arc<dyn ProgressSink>>,
    /// Given to every call's context; shared, so a call costs one reference more.
    call_values: Option<Arc<SessionState>>,
}

impl std::fmt::Debug for BatchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchOptions")
            .field("concurrency_limit", &self.concurrency_limit)
            .field("deadline", &self.deadline)
            .field("deadline_from", &self.deadline_from)
            .field("cancellation", &self.cancellation)
            .field("check_offers", &self.check_offers)
            .field("progress", &self.progress.is_some())
            .field(
                "call_values",
                &self.call_values.as_ref().map_or(0, |values| values.len()),
            )
            .finish()
    }
}

impl BatchOptions {
    /// The manager's concurrency limit, no deadline, no cancellation, no offer check.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `limit` calls of a parallel stage run at once (at least 1), instead of the
    /// manager's [limit](ToolCallManager::concurrency_limit).
    #[must_use]
    pub fn with_concurrency_limit(mut self, limit: usize) -> Self {
        self.concurrency_limit = Some(limit.max(1));
        self
    }

    /// The whole batch must end within `deadline` of its start: then running calls are
    /// dropped and the calls not yet run are not started, all ending
    /// [`Cancelled`](ToolError::Cancelled). A retry that could start only at or after the
    /// deadline is not made: its call ends with the error it failed with. Needs a Tokio
    /// runtime.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The [deadline](Self::with_deadline) counts from `start` rather than from the batch's
    /// start, so that batches run one after another share one time limit (each given the
    /// same `start`); a deadline already past when a batch starts runs none of its calls.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolsmith::BatchOptions;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let start = tokio::time::Instant::now();
    /// let first = BatchOptions::new()
    ///     .with_deadline(Duration::from_secs(10))
    ///     .with_deadline_from(start);
    /// // ... the first batch runs; a second one given `first` ends by the same instant.
    /// assert_eq!(first.deadline(), Some(Duration::from_secs(10)));
    /// # }
    /// ```
    #[must_use]
    pub fn with_deadline_from(mut self, start: Instant) -> Self {
        self.deadline_from = Some(start);
        self
    }

    /// Cancelling `token` stops the batch as its deadline would.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// With `true`, each call is first checked with
    /// [`check_offered`](ToolCallManager::check_offered): a call to a tool not offered to the
    /// model ends in [`NotActive`](ToolError::NotActive) (or `UnknownTool`) without running.
    /// The check happens when the call's stage runs, so a tool activated by an earlier stage
    /// counts as offered.
    #[must_use]
    pub fn with_offer_check(mut self, check: bool) -> Self {
        self.check_offers = check;
        self
    }

    /// Progress reports of the batch's calls ([`ToolCallContext::progress`]) go to `sink`.
    #[must_use]
    pub fn with_progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Every call of the batch carries `values` in its context, where the tool looks them up
    /// by type ([`ToolCallContext::value`]): what the runner of the batch lends its calls,
    /// such as an agent run's token ledger.
    #[must_use]
    pub fn with_call_values(mut self, values: SessionState) -> Self {
        self.call_values = Some(Arc::new(values));
        self
    }

    /// The token that cancels the batch, if one was given.
    pub fn cancellation(&self) -> Option<&CancellationToken> {
        self.cancellation.as_ref()
    }

    /// The concurrency limit set on these options, if any.
    pub fn concurrency_limit(&self) -> Option<usize> {
        self.concurrency_limit
    }

    /// The deadline set on these options, if any.
    pub fn deadline(&self) -> Option<Duration> {
        self.deadline
    }
}

/// Why a batch stopped before its end.
#[derive(Debug, Clone, Copy)]
enum Stop {
    Cancelled,
    DeadlinePassed(Duration),
}

impl Stop {
    /// The `error.type` of the spans of the calls it stops or keeps from starting.
    fn error_type(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::DeadlinePassed(_) => "timeout",
        }
    }

    fn describe(self) -> String {
        match self {
            Self::Cancelled => "the batch was cancelled".to_owned(),
            Self::DeadlinePassed(deadline) => {
                format!("the batch deadline of {deadline:?} passed")
            }
        }
    }
}

/// Resolves when the batch must stop; never when it has neither token nor deadline.
async fn stop_signal(
    token: Option<CancellationToken>,
    deadline: Option<(Instant, Duration)>,
) -> Stop {
    let cancelled = async {
        match &token {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let expired = async {
        match deadline {
            Some((at, _)) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    // Cancellation wins a tie: it is the caller's explicit word.
    match futures::future::select(pin!(cancelled), pin!(expired)).await {
        Either::Left(((), _)) => Stop::Cancelled,
        Either::Right(((), _)) => Stop::DeadlinePassed(deadline.map_or(Duration::ZERO, |d| d.1)),
    }
}

/// Receives each call's outcome, with the call's index, as the call ends.
type OutcomeSink<'s> = dyn FnMut(usize, ToolCallOutcome) + Send + 's;

/// How far a call of a running batch has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallEnd {
    Pending,
    Succeeded,
    Failed,
}

/// The state of one batch as it runs: what has ended, and when each started call started.
struct BatchRun<'m, 'w, 's> {
    manager: &'m ToolCallManager,
    workflow: &'w Workflow<'w>,
    limit: usize,
    check_offers: bool,
    /// How each call ended; its outcome went to `sink` then.
    ends: Vec<CallEnd>,
    sink: &'s mut OutcomeSink<'s>,
    started: Vec<Option<Instant>>,
    /// Admitted calls of the current stage waiting for a slot; kept across stages to reuse
    /// their buffers. Destructive calls wait in their own queue so that at most one runs at
    /// a time while the others of the stage go on around it.
    ordinary: VecDeque<(usize, Option<PreparedCall>)>,
    destructive: VecDeque<(usize, Option<PreparedCall>)>,
    cancellation: Option<CancellationToken>,
    deadline: Option<(Instant, Duration)>,
}

impl<'m, 'w, 's> BatchRun<'m, 'w, 's> {
    fn request(&self, index: usize) -> &'w ToolCallRequest {
        &self.workflow.requests()[index]
    }

    /// Whether the batch must stop now: its token is cancelled or its deadline has passed.
    fn stop_now(&self) -> Option<Stop> {
        if self
            .cancellation
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
        {
            return Some(Stop::Cancelled);
        }
        match self.deadline {
            Some((at, deadline)) if Instant::now() >= at => Some(Stop::DeadlinePassed(deadline)),
            _ => None,
        }
    }

    /// Records how call `index` ended and hands its outcome on; returns whether it failed.
    fn record(&mut self, index: usize, outcome: ToolCallOutcome) -> bool {
        let failed = outcome.failed();
        self.ends[index] = if failed {
            CallEnd::Failed
        } else {
            CallEnd::Succeeded
        };
        (self.sink)(index, outcome);
        failed
    }

    /// Records that call `index` did not run, with `error`, and traces it with the error's
    /// kind as `error.type`.
    fn record_not_run(&mut self, index: usize, error: ToolError) {
        self.record_not_run_as(index, error.kind().as_str(), error);
    }

    /// Records that call `index` did not run, with `error`, and traces it as `error_type`.
    fn record_not_run_as(&mut self, index: usize, error_type: &'static str, error: ToolError) {
        let request = self.request(index);
        trace_call_not_run(&request.id, &request.name, error_type);
        let outcome = ToolCallOutcome::not_run(&request.id, &request.name, error);
        self.record(index, outcome);
    }

    fn failed(&self, index: usize) -> bool {
        self.ends[index] == CallEnd::Failed
    }

    /// Checks that call `index` may run (its dependencies succeeded, its tool is offered if
    /// offers are checked, its tool exists and its arguments are valid) and prepares it;
    /// otherwise records why it did not run.
    fn admit(&mut self, index: usize) -> Option<PreparedCall> {
        let failed_dependency = self
            .workflow
            .dependencies(index)
            .iter()
            .copied()
            .find(|&d| self.failed(d));
        let admitted = match failed_dependency {
            Some(dependency) => {
                let reason = format!("dependency {} failed", self.request(dependency).id);
                self.record_not_run_as(index, SKIPPED, ToolError::Cancelled(reason));
                return None;
            }
            None if self.check_offers => self
                .manager
                .check_offered(&self.request(index).name)
                .and_then(|()| self.manager.prepare_call(self.request(index))),
            None => self.manager.prepare_call(self.request(index)),
        };
        admitted
            .map_err(|error| self.record_not_run(index, error))
            .ok()
    }

    /// Runs one stage to its end, or until `stop` fires. `launch` makes the future of an
    /// admitted call; `in_flight` is empty on entry and on a normal return.
    async fn run_stage<F, L, S>(
        &mut self,
        stage: WorkflowStage<'_>,
        in_flight: &mut FuturesUnordered<DropContained<F>>,
        launch: &L,
        attempts: &[AtomicU32],
        mut stop: Option<Pin<&mut S>>,
    ) -> Result<(), Stop>
    where
        F: Future<Output = (usize, Result<ToolCallResult, ToolError>)>,
        L: Fn(usize, PreparedCall) -> F,
        S: Future<Output = Stop>,
    {
        let (limit, fail_fast) = match stage.mode() {
            StageMode::Sequential { fail_fast } => (1, fail_fast),
            StageMode::Parallel { .. } => (self.limit, false),
        };
        // The registry's and retry settings' generations when the stage's calls were admitted.
        let mut admitted_at = (0, 0);
        if limit == 1 {
            // One at a time, so each call is admitted just before it runs: a failure before
            // it cancels it instead.
            self.ordinary
                .extend(stage.calls().iter().map(|&i| (i, None)));
        } else {
            // Admitted up front (dependencies cannot change within the stage) to know which
            // calls are destructive.
            admitted_at = self.manager.preparation_generation();
            for &index in stage.calls() {
                if let Some(call) = self.admit(index) {
                    let queue = if call.annotations.destructive == Some(true) {
                        &mut self.destructive
                    } else {
                        &mut self.ordinary
                    };
                    queue.push_back((index, Some(call)));
                }
            }
        }
        let mut running_destructive: Option<usize> = None;
        let mut stopped_by: Option<usize> = None;
        loop {
            while in_flight.len() < limit {
                let next_destructive = self
                    .destructive
                    .front()
                    .filter(|_| running_destructive.is_none());
                let next = match (self.ordinary.front(), next_destructive) {
                    (Some(&(o, _)), Some(&(d, _))) if d < o => self.destructive.pop_front(),
                    (Some(_), _) => self.ordinary.pop_front(),
                    (None, Some(_)) => self.destructive.pop_front(),
                    (None, None) => None,
                };
                let Some((index, prepared)) = next else { break };
                if let Some(failed) = stopped_by {
                    let reason = format!(
                        "call {} failed earlier in this sequential stage",
                        self.request(failed).id
                    );
                    self.record_not_run_as(index, SKIPPED, ToolError::Cancelled(reason));
                    continue;
                }
                // A call that waited for a slot while tools were registered or removed, or
                // retry settings changed, is admitted again: its tool may be gone (or its
                // offer withdrawn), its retry config another.
                let prepared =
                    prepared.filter(|_| self.manager.preparation_generation() == admitted_at);
                let Some(call) = prepared.or_else(|| self.admit(index)) else {
                    if fail_fast {
                        stopped_by = Some(index);
                    }
                    continue;
                };
                let is_destructive = call.annotations.destructive == Some(true) && limit > 1;
                if is_destructive && running_destructive.is_some() {
                    // Admitted again from the ordinary queue, its tool replaced by a
                    // destructive one meanwhile: it waits its turn among the destructive
                    // calls (admitted again then, the registry having moved).
                    let at = self.destructive.partition_point(|&(d, _)| d < index);
                    self.destructive.insert(at, (index, None));
                    continue;
                }
                // Checked before each start, since a call's first poll runs right here.
                if let Some(stop) = self.stop_now() {
                    return Err(stop);
                }
                self.started[index] = Some(Instant::now());
                // Polled once here: a call that finishes on its first poll (most quick tools)
                // never needs a slot in `in_flight`. One that does not is polled again by
                // `in_flight` with a real waker before it can be woken.
                let mut future = Box::pin(launch(index, call));
                let mut first_poll = Context::from_waker(futures::task::noop_waker_ref());
                if let Poll::Ready((index, result)) = future.as_mut().poll(&mut first_poll) {
                    if self.complete(index, result, attempts) && fail_fast && stopped_by.is_none() {
                        stopped_by = Some(index);
                    }
                    continue;
                }
                if is_destructive {
                    running_destructive = Some(index);
                }
                in_flight.push(DropContained(Some(future)));
            }
            if in_flight.is_empty() {
                return Ok(());
            }
            let next = match stop.as_mut() {
                Some(stop) => {
                    match futures::future::select(stop.as_mut(), in_flight.next()).await {
                        Either::Left((stop, _)) => return Err(stop),
                        Either::Right((next, _)) => next,
                    }
                }
                None => in_flight.next().await,
            };
            let Some((index, result)) = next else {
                unreachable!("in_flight is not empty")
            };
            if running_destructive == Some(index) {
                running_destructive = None;
            }
            if self.complete(index, result, attempts) && fail_fast && stopped_by.is_none() {
                stopped_by = Some(index);
            }
        }
    }

    /// Records how call `index` ended; returns whether it failed.
    fn complete(
        &mut self,
        index: usize,
        result: Result<ToolCallResult, ToolError>,
        attempts: &[AtomicU32],
    ) -> bool {
        let request = self.request(index);
        let outcome = ToolCallOutcome {
            id: request.id.clone(),
            name: request.name.clone(),
            result,
            attempts: attempts[index].load(Ordering::Relaxed),
            elapsed: self.started[index].map_or(Duration::ZERO, |s| s.elapsed()),
        };
        self.record(index, outcome)
    }

    /// Gives every call without an outcome one: stopped if its tool had started, not run if
    /// not.
    fn finish_stopped(&mut self, stop: Stop, attempts: &[AtomicU32]) {
        if let Stop::DeadlinePassed(deadline) = stop {
            tracing::debug!(
                deadline = ?deadline,
                "a batch deadline passed: its unfinished calls are stopped or not run"
            );
        }
        let reason = stop.describe();
        let requests = self.workflow.requests();
        let error_type = stop.error_type();
        for index in 0..requests.len() {
            if self.ends[index] != CallEnd::Pending {
                continue;
            }
            let request = &requests[index];
            // A call launched but never polled did not run: "not run", like a pending one.
            let ran = attempts[index].load(Ordering::Relaxed) > 0;
            let outcome = match self.started[index].filter(|_| ran) {
                Some(started) => ToolCallOutcome {
                    id: request.id.clone(),
                    name: request.name.clone(),
                    result: Err(ToolError::Cancelled(format!("stopped: {reason}"))),
                    attempts: attempts[index].load(Ordering::Relaxed),
                    elapsed: started.elapsed(),
                },
                None => {
                    // A call launched has its span already, ended as it was dropped.
                    if self.started[index].is_none() {
                        trace_call_not_run(&request.id, &request.name, error_type);
                    }
                    ToolCallOutcome::not_run(
                        &request.id,
                        &request.name,
                        ToolError::Cancelled(format!("not run: {reason}")),
                    )
                }
            };
            self.record(index, outcome);
        }
    }
}

impl ToolCallManager {
    /// How many calls of a parallel stage run at once by default (initially
    /// [`DEFAULT_CONCURRENCY_LIMIT`](crate::DEFAULT_CONCURRENCY_LIMIT), 128).
    pub fn concurrency_limit(&self) -> usize {
        self.execution.concurrency_limit()
    }

    /// Sets how many calls of a parallel stage run at once by default (at least 1).
    pub fn set_concurrency_limit(&self, limit: usize) {
        self.execution.set_concurrency_limit(limit);
    }

    /// Plans and runs a batch of calls: one outcome per request, in request order.
    ///
    /// Stages run one after the other. A parallel stage runs its calls concurrently (up to
    /// the [concurrency limit](Self::concurrency_limit); calls to tools annotated destructive
    /// run one at a time), each looked up and validated once, then run and retried as
    /// [`execute_with_retry`](Self::execute_with_retry) would. A
    /// sequential stage runs its calls in request order and, after the first failure,
    /// cancels the rest naming the failed call. A call whose dependency failed does not run:
    /// it ends `Cancelled("dependency call-1 failed")`. A batch that cannot be planned
    /// ([`build_workflow`](Self::build_workflow) fails) runs nothing: every outcome carries
    /// the planning error.
    ///
    /// The calls of a stage are futures polled together by the batch's own future (nothing
    /// is spawned), so a batch runs on any executor, and a tool that computes for long
    /// should move that work off the async thread (e.g. `tokio::task::spawn_blocking`).
    /// Time limits, backoffs and deadlines need a Tokio runtime.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolArguments, ToolCallManager,
    ///     ToolCallRequest, ToolCallResult, ToolError, scheme};
    /// use serde_json::json;
    ///
    /// # futures::executor::block_on(async {
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(FnTool::new("div", "Divide a by b.",
    ///     Args::new(scheme::object()
    ///         .required("a", scheme::integer())
    ///         .required("b", scheme::integer())
    ///         .build()),
    ///     |args: ToolArgs<'_>| {
    ///         let quotient = args.i64("a").and_then(|a| match args.i64("b")? {
    ///             0 => Err(ToolError::execution("div", "division by zero")),
    ///             b => Ok(a / b),
    ///         });
    ///         async move { Ok(ToolCallResult::json(json!(quotient?))) }
    ///     }))).unwrap();
    ///
    /// let div = |id: &str, a: i64, b: i64| ToolCallRequest::new(id, "div",
    ///     ToolArguments::from_iter([("a", json!(a)), ("b", json!(b))]));
    /// let outcomes = manager.execute_batch(&[
    ///     div("call-1", 1, 0),
    ///     div("call-2", 8, 2),
    ///     div("call-3", 9, 3).depends_on(["call-1"]),
    /// ]).await;
    ///
    /// assert_eq!(outcomes.len(), 3);
    /// assert!(outcomes[0].result.is_err());
    /// assert_eq!(outcomes[1].result.as_ref().unwrap().content.to_text(), "4");
    /// assert_eq!(outcomes[2].result, Err(ToolError::Cancelled("dependency call-1 failed".into())));
    /// assert_eq!(outcomes[2].attempts, 0);
    /// # });
    /// ```
    pub async fn execute_batch(&self, requests: &[ToolCallRequest]) -> Vec<ToolCallOutcome> {
        self.execute_batch_with(requests, &BatchOptions::new())
            .await
    }

    /// [`execute_batch`](Self::execute_batch) with offer checking, as an agent loop runs a
    /// model's turn: a call to a tool that is not offered
    /// ([`check_offered`](Self::check_offered)) ends in [`ToolError::NotActive`] (or
    /// `UnknownTool`) and does not run.
    pub async fn execute_turn(&self, requests: &[ToolCallRequest]) -> Vec<ToolCallOutcome> {
        self.execute_batch_with(requests, &BatchOptions::new().with_offer_check(true))
            .await
    }

    /// [`execute_batch`](Self::execute_batch) with explicit [`BatchOptions`].
    pub async fn execute_batch_with(
        &self,
        requests: &[ToolCallRequest],
        options: &BatchOptions,
    ) -> Vec<ToolCallOutcome> {
        let mut outcomes = vec![None; requests.len()];
        self.run_batch(requests, options, &mut |index, outcome| {
            outcomes[index] = Some(outcome);
        })
        .await;
        in_request_order(outcomes)
    }

    /// [`execute_batch_with`](Self::execute_batch_with), handing out each call's outcome as
    /// the call ends: a stream of `(index of the request, outcome)`, one item a request, in
    /// the order the calls end. A call that does not run (its dependency failed, its tool
    /// is not offered, its arguments are invalid, the batch cannot be planned) has its item
    /// when that is decided; when the batch is stopped (cancelled, deadline passed), the
    /// calls it stopped and those it never started have theirs then.
    ///
    /// The calls run only while the stream is polled, as a batch's calls run only while its
    /// future is: to do slow work for an outcome without holding the others up (a UI, a
    /// hook that waits), hand it to other code that runs beside the stream, e.g. through a
    /// channel. Dropping the stream stops the calls still running, as dropping
    /// [`execute_batch`](Self::execute_batch)'s future does. The batch runs inside the
    /// stream, unboxed, so the stream is not `Unpin`: pin it (`std::pin::pin!`) to call
    /// `StreamExt::next` on it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use futures::StreamExt as _;
    /// use toolsmith::{Args, BatchOptions, FnTool, ToolArgs, ToolArguments,
    ///     ToolCallManager, ToolCallRequest, ToolCallResult, scheme};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(FnTool::new("wait", "Wait for ms milliseconds.",
    ///     Args::new(scheme::object().required("ms", scheme::integer()).build()),
    ///     |args: ToolArgs<'_>| {
    ///         let ms = args.get::<u64>("ms");
    ///         async move {
    ///             tokio::time::sleep(Duration::from_millis(ms?)).await;
    ///             Ok(ToolCallResult::text("done"))
    ///         }
    ///     }))).unwrap();
    ///
    /// let wait = |id: &str, ms: u64| ToolCallRequest::new(id, "wait",
    ///     ToolArguments::from_iter([("ms", json!(ms))]));
    /// let requests = [wait("slow", 200), wait("quick", 1)];
    /// let options = BatchOptions::new();
    /// let ended: Vec<(usize, String)> = manager
    ///     .execute_batch_stream(&requests, &options)
    ///     .map(|(index, outcome)| (index, outcome.id))
    ///     .collect()
    ///     .await;
    /// // The quick call's outcome comes first, while the slow one still runs.
    /// assert_eq!(ended, [(1, "quick".to_owned()), (0, "slow".to_owned())]);
    /// # }
    /// ```
    pub fn execute_batch_stream<'a>(
        &'a self,
        requests: &'a [ToolCallRequest],
        options: &'a BatchOptions,
    ) -> impl Stream<Item = (usize, ToolCallOutcome)> + Send + 'a {
        OutcomeStream::new(move |ended| async move {
            let mut sink = |index, outcome| ended.push(index, outcome);
            self.run_batch(requests, options, &mut sink).await;
        })
    }

    /// Runs a planned workflow; see [`execute_batch`](Self::execute_batch).
    pub async fn execute_workflow(&self, workflow: &Workflow<'_>) -> Vec<ToolCallOutcome> {
        self.execute_workflow_with(workflow, &BatchOptions::new())
            .await
    }

    /// Runs a planned workflow with explicit [`BatchOptions`]. When the batch is cancelled or
    /// its deadline passes, running calls are dropped (`Cancelled("stopped: …")`, their
    /// [context](ToolCallContext)'s token cancelled) and calls not yet started end
    /// `Cancelled("not run: …")`; the outcomes are still complete.
    pub async fn execute_workflow_with(
        &self,
        workflow: &Workflow<'_>,
        options: &BatchOptions,
    ) -> Vec<ToolCallOutcome> {
        let mut outcomes = vec![None; workflow.len()];
        self.run_workflow(workflow, options, &mut |index, outcome| {
            outcomes[index] = Some(outcome);
        })
        .await;
        in_request_order(outcomes)
    }

    /// [`execute_workflow_with`](Self::execute_workflow_with), handing out each call's
    /// outcome as the call ends; see [`execute_batch_stream`](Self::execute_batch_stream).
    pub fn execute_workflow_stream<'a>(
        &'a self,
        workflow: &'a Workflow<'a>,
        options: &'a BatchOptions,
    ) -> impl Stream<Item = (usize, ToolCallOutcome)> + Send + 'a {
        OutcomeStream::new(move |ended| async move {
            let mut sink = |index, outcome| ended.push(index, outcome);
            self.run_workflow(workflow, options, &mut sink).await;
        })
    }

    /// Plans and runs `requests`, handing each outcome to `sink` as its call ends.
    async fn run_batch(
        &self,
        requests: &[ToolCallRequest],
        options: &BatchOptions,
        sink: &mut OutcomeSink<'_>,
    ) {
        match self.build_workflow(requests) {
            Ok(workflow) => self.run_workflow(&workflow, options, sink).await,
            Err(error) => {
                for (index, r) in requests.iter().enumerate() {
                    trace_call_not_run(&r.id, &r.name, error.kind().as_str());
                    sink(
                        index,
                        ToolCallOutcome::not_run(&r.id, &r.name, error.clone()),
                    );
                }
            }
        }
    }

    /// Runs `workflow`, handing each outcome to `sink` as its call ends: every call's, once.
    async fn run_workflow(
        &self,
        workflow: &Workflow<'_>,
        options: &BatchOptions,
        sink: &mut OutcomeSink<'_>,
    ) {
        let count = workflow.len();
        let attempts: Vec<AtomicU32> = (0..count).map(|_| AtomicU32::new(0)).collect();
        let deadline = match options.deadline {
            Some(_) if tokio::runtime::Handle::try_current().is_err() => {
                let error = ToolError::Cancelled(
                    "not run: a batch deadline needs a Tokio runtime".to_owned(),
                );
                for (index, r) in workflow.requests().iter().enumerate() {
                    trace_call_not_run(&r.id, &r.name, error.kind().as_str());
                    sink(
                        index,
                        ToolCallOutcome::not_run(&r.id, &r.name, error.clone()),
                    );
                }
                return;
            }
            // A deadline too far to represent is no deadline.
            Some(deadline) => options
                .deadline_from
                .unwrap_or_else(Instant::now)
                .checked_add(deadline)
                .map(|at| (at, deadline)),
            None => None,
        };
        let mut run = BatchRun {
            manager: self,
            workflow,
            limit: options
                .concurrency_limit
                .unwrap_or_else(|| self.concurrency_limit()),
            check_offers: options.check_offers,
            ends: vec![CallEnd::Pending; count],
            sink,
            started: vec![None; count],
            ordinary: VecDeque::new(),
            destructive: VecDeque::new(),
            cancellation: options.cancellation.clone(),
            deadline,
        };
        let stoppable = deadline.is_some() || options.cancellation.is_some();
        let mut stop = pin!(stop_signal(options.cancellation.clone(), deadline));
        let requests = workflow.requests();
        // Each call runs with its context (id, a cancellation token that the batch's token
        // reaches, progress reporting) and in an OpenTelemetry GenAI `execute_tool` span.
        // The calls' tokens hang from one of the batch's own, cancelled when the batch gives
        // up on its calls (stopped, or its future dropped), so that work a tool handed
        // elsewhere hears of it; the caller's token is left as it is.
        let batch_token = options
            .cancellation
            .as_ref()
            .map_or_else(CancellationToken::new, CancellationToken::child_token);
        let cancel_on_drop = batch_token.clone().drop_guard();
        let deadline_at = deadline.map(|(at, _)| at);
        // Why the batch stopped, set before it drops its running calls: their spans say so.
        let stopped_by = OnceLock::new();
        let launch = |index: usize, call: PreparedCall| {
            let request = &requests[index];
            let mut context = ToolCallContext::new(
                request.id.as_str(),
                request.name.as_str(),
                batch_token.child_token(),
            );
            if let Some(sink) = &options.progress {
                context = context.with_progress(Arc::clone(sink));
            }
            if let Some(values) = &options.call_values {
                context = context.with_values(Arc::clone(values));
            }
            let span = execute_tool_span(&request.id, &request.name);
            let attempts = &attempts[index];
            let ending = SpanEnding {
                span: span.clone(),
                attempts,
                stopped_by: &stopped_by,
                ended: false,
            };
            context
                .scope(call.run(self, request, attempts, deadline_at))
                .instrument(span)
                .map(move |result| {
                    ending.ended(&result);
                    (index, result)
                })
        };
        let mut in_flight = FuturesUnordered::new();
        for stage in workflow.stages() {
            let stop = stoppable.then_some(stop.as_mut());
            let ended = run
                .run_stage(stage, &mut in_flight, &launch, &attempts, stop)
                .await;
            if let Err(stop) = ended {
                let _ = stopped_by.set(stop);
                batch_token.cancel();
                // Running calls are dropped here, before their outcomes are written.
                in_flight.clear();
                run.finish_stopped(stop, &attempts);
                break;
            }
        }
        // Every call has ended: their tokens stay as they are.
        cancel_on_drop.disarm();
    }
}

/// The `error.type` of a call not run because a call before it failed: a sequential stage's
/// earlier call (fail-fast), or a call it depends on.
const SKIPPED: &str = "skipped";

/// Records on a launched call's `execute_tool` span how it ended: when it ends
/// ([`ended`](Self::ended)), or, dropped unfinished, as the batch's stop (`timeout` for its
/// deadline, `cancelled` for its token or for the batch's own future dropped).
struct SpanEnding<'a> {
    span: tracing::Span,
    attempts: &'a AtomicU32,
    stopped_by: &'a OnceLock<Stop>,
    ended: bool,
}

impl SpanEnding<'_> {
    /// Records `error.type`, the error's kind (or `tool_error` for a result the tool marked
    /// as an error), and how many times the call ran. Nothing is built for a span no
    /// subscriber records.
    fn ended(mut self, result: &Result<ToolCallResult, ToolError>) {
        self.ended = true;
        if self.span.is_disabled() {
            return;
        }
        record_call_end(&self.span, result);
        self.record_attempts();
    }

    fn record_attempts(&self) {
        let attempts = self.attempts.load(Ordering::Relaxed);
        self.span.record("toolsmith.tool.attempts", attempts);
    }
}

impl Drop for SpanEnding<'_> {
    fn drop(&mut self) {
        if self.ended || self.span.is_disabled() {
            return;
        }
        let stop = self.stopped_by.get().copied().unwrap_or(Stop::Cancelled);
        self.span.record("error.type", stop.error_type());
        self.record_attempts();
    }
}

/// The outcomes a sink collected, in request order.
fn in_request_order(outcomes: Vec<Option<ToolCallOutcome>>) -> Vec<ToolCallOutcome> {
    outcomes
        .into_iter()
        .map(|outcome| outcome.expect("a batch gives every call an outcome"))
        .collect()
}

pin_project_lite::pin_project! {
    /// Outcomes in the order their calls end: the batch's future, polled by the stream, puts
    /// each into `ended` as its call ends. The future is kept in place (pinned with the
    /// stream), not boxed: a batch's future is large, and allocating it cost more than the
    /// rest of a one-call turn's stream.
    struct OutcomeStream<F> {
        #[pin]
        batch: F,
        // The batch has run to its end (and is not polled again).
        done: bool,
        ended: EndedQueue,
    }
}

impl<F: Future<Output = ()>> OutcomeStream<F> {
    /// The stream of the batch `run` makes, given the queue to put its outcomes in.
    fn new(run: impl FnOnce(EndedQueue) -> F) -> Self {
        let ended = EndedQueue::default();
        Self {
            batch: run(ended.clone()),
            done: false,
            ended,
        }
    }
}

impl<F: Future<Output = ()>> Stream for OutcomeStream<F> {
    type Item = (usize, ToolCallOutcome);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        if let Some(ended) = this.ended.pop() {
            return Poll::Ready(Some(ended));
        }
        if !*this.done && this.batch.poll(cx).is_ready() {
            *this.done = true;
        }
        match this.ended.pop() {
            Some(ended) => Poll::Ready(Some(ended)),
            None if *this.done => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

/// The outcomes of ended calls not yet taken from an [`OutcomeStream`].
#[derive(Clone)]
struct EndedQueue(Arc<Mutex<VecDeque<(usize, ToolCallOutcome)>>>);

impl Default for EndedQueue {
    /// Room for one outcome: a reader takes each as it comes, so more are rarely waiting. The
    /// room for four that a first push makes (704 bytes) cost a one-call agent turn 7 % more
    /// instructions (callgrind, `benches/agent_loop.rs`), in glibc's allocator.
    fn default() -> Self {
        Self(Arc::new(Mutex::new(VecDeque::with_capacity(1))))
    }
}

impl EndedQueue {
    fn push(&self, index: usize, outcome: ToolCallOutcome) {
        self.lock().push_back((index, outcome));
    }

    fn pop(&self) -> Option<(usize, ToolCallOutcome)> {
        self.lock().pop_front()
    }

    /// No code panics while holding the queue, so a poisoned lock still holds it whole.
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(usize, ToolCallOutcome)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A running call's future, whose drop cannot unwind: a batch stopped by its deadline or
/// token drops the calls still running, and a tool whose future panics as it is dropped
/// (a guard of its own, say) would otherwise unwind into the batch's caller, losing every
/// outcome. The call keeps its "stopped" outcome; the panic is logged. `execute_with_retry`
/// wraps its call in one for a caller that gives up on it.
pub(crate) struct DropContained<F>(pub(crate) Option<Pin<Box<F>>>);

impl<F: Future> Future for DropContained<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.0.as_mut() {
            Some(future) => future.as_mut().poll(cx),
            None => Poll::Pending,
        }
    }
}

impl<F> Drop for DropContained<F> {
    fn drop(&mut self) {
        let future = self.0.take();
        crate::tool::error::drop_stopped_call(|| drop(future));
    }
}
