//! [`ToolCallContext`]: what a running call can know about itself — its id, whether it has
//! been cancelled, the values its runner gave it — and how it reports progress.
//!
//! The context is set for the duration of a call by whoever runs it with one (a batch run with
//! [`BatchOptions`](crate::BatchOptions), so every agent turn; an MCP server) and read by the
//! tool with [`ToolCallContext::current`], so tools need no extra parameter and today's
//! `ToolImpl` implementations keep compiling.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::SessionState;

/// One progress report of a running call.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// The id of the call reporting.
    pub call_id: String,
    /// The tool reporting.
    pub tool: String,
    /// How much is done, in the tool's own unit.
    pub done: f64,
    /// How much there is in all, if known.
    pub total: Option<f64>,
    /// What the tool is doing, if it says.
    pub message: Option<String>,
}

/// Receives the progress reports of running calls (an agent turns them into events, an MCP
/// server into progress notifications).
pub trait ProgressSink: Send + Sync {
    /// Called for each report, on the thread of the call that made it: keep it short.
    fn report(&self, progress: Progress);
}

impl<F: Fn(Progress) + Send + Sync> ProgressSink for F {
    fn report(&self, progress: Progress) {
        self(progress);
    }
}

tokio::task_local! {
    static CURRENT_CALL: ToolCallContext;
}

/// The context of one running call: its id, its tool, a [`CancellationToken`] that fires when
/// whoever runs it gives up on it (a cancelled agent run, a batch's deadline, an MCP client's
/// cancellation, the tool's own time limit), a progress reporter, and values of whoever runs
/// it, looked up by type ([`value`](Self::value): an agent run's token ledger, which the
/// sub-agents a call starts add to).
///
/// A tool reads it with [`current`](Self::current), which is `None` outside such a run (for
/// instance under a bare [`execute_one`](crate::ToolCallManager::execute_one)).
///
/// ```
/// use toolsmith::{CancellationToken, ToolCallContext};
///
/// # futures::executor::block_on(async {
/// let token = CancellationToken::new();
/// let context = ToolCallContext::new("call-1", "index", token.clone());
/// let seen = context.scope(async {
///     let context = ToolCallContext::current().expect("set for the call");
///     context.progress(1.0, Some(4.0), "first file indexed");
///     (context.call_id().to_owned(), context.is_cancelled())
/// }).await;
/// assert_eq!(seen, ("call-1".to_owned(), false));
/// assert!(ToolCallContext::current().is_none());
/// # });
/// ```
#[derive(Clone)]
pub struct ToolCallContext {
    call_id: Arc<str>,
    tool: Arc<str>,
    cancellation: CancellationToken,
    progress: Option<Arc<dyn ProgressSink>>,
    values: Option<Arc<SessionState>>,
}

impl ToolCallContext {
    /// A context for the call `call_id` of `tool`, cancelled by `cancellation`, reporting
    /// progress nowhere.
    #[must_use]
    pub fn new(
        call_id: impl Into<Arc<str>>,
        tool: impl Into<Arc<str>>,
        cancellation: CancellationToken,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            tool: tool.into(),
            cancellation,
            progress: None,
            values: None,
        }
    }

    /// The same context reporting progress to `sink`.
    #[must_use]
    pub fn with_progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = Some(sink);
        self
    }

    /// The same context carrying `values`, which the tool looks up by type with
    /// [`value`](Self::value) (a batch gives every call the values of its
    /// [`BatchOptions::with_call_values`](crate::BatchOptions::with_call_values)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{CancellationToken, SessionState, ToolCallContext};
    ///
    /// struct RunId(u32);
    /// let mut values = SessionState::new();
    /// values.insert(RunId(7));
    /// let context = ToolCallContext::new("call-1", "index", CancellationToken::new())
    ///     .with_values(Arc::new(values));
    /// assert_eq!(context.value::<RunId>().map(|id| id.0), Some(7));
    /// assert!(context.value::<String>().is_none());
    /// ```
    #[must_use]
    pub fn with_values(mut self, values: Arc<SessionState>) -> Self {
        self.values = Some(values);
        self
    }

    /// The value of type `T` that whoever runs the call gave it, if one was given.
    pub fn value<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values.as_ref().and_then(|values| values.get::<T>())
    }

    /// The same call, with a token of its own that this one's reaches: an attempt's, which
    /// its time limit fires without cancelling the call's later attempts.
    pub(crate) fn attempt(&self) -> Self {
        Self {
            cancellation: self.cancellation.child_token(),
            ..self.clone()
        }
    }

    /// The context of the call running on this task, if it was run with one.
    pub fn current() -> Option<Self> {
        CURRENT_CALL.try_with(Self::clone).ok()
    }

    /// Runs `future` with this context as the [current](Self::current) one.
    pub fn scope<F: Future>(self, future: F) -> impl Future<Output = F::Output> {
        CURRENT_CALL.scope(self, future)
    }

    /// Runs `f` with this context as the [current](Self::current) one: what a tool does as
    /// its call starts, before its future runs under [`scope`](Self::scope).
    pub(crate) fn enter<R>(self, f: impl FnOnce() -> R) -> R {
        CURRENT_CALL.sync_scope(self, f)
    }

    /// The call's id, as the model gave it.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The token that fires when the call is cancelled or its time limit passes: work the
    /// tool handed elsewhere (a task it spawned, a request it made) listens on it to stop.
    ///
    /// The call's own future is dropped then (by a batch or an agent run cancelled, a time
    /// limit, an MCP client's `notifications/cancelled`), often before it is polled again: a
    /// `select!` on [`cancelled()`](CancellationToken::cancelled) inside it may never run
    /// its branch. Cleanup that must happen belongs in a value's `Drop` (a guard the future
    /// holds), or in a task of its own that waits on this token.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::time::Duration;
    /// use toolsmith::{
    ///     Args, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
    ///     ToolCallResult, ToolError, scheme,
    /// };
    ///
    /// /// Marks the job abandoned when the call's future is dropped before the job ends.
    /// struct Abandoned(Arc<AtomicBool>, bool);
    /// impl Drop for Abandoned {
    ///     fn drop(&mut self) {
    ///         if !self.1 {
    ///             self.0.store(true, Ordering::SeqCst);
    ///         }
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let abandoned = Arc::new(AtomicBool::new(false));
    /// let flag = Arc::clone(&abandoned);
    /// let job = Args::new(scheme::object().build());
    /// let tool = FnTool::new("job", "A long job.", job, move |_: ToolArgs<'_>| {
    ///     let flag = Arc::clone(&flag);
    ///     async move {
    ///         let mut guard = Abandoned(flag, false);
    ///         tokio::time::sleep(Duration::from_secs(60)).await;
    ///         guard.1 = true;
    ///         Ok(ToolCallResult::text("done"))
    ///     }
    /// })
    /// .with_timeout(Duration::from_millis(20));
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(tool)).unwrap();
    /// let call = ToolCallRequest::new("1", "job", ToolArguments::default());
    /// let outcome = manager.execute_batch(&[call]).await.remove(0);
    /// assert_eq!(outcome.result.unwrap_err(), ToolError::timeout("job"));
    /// assert!(abandoned.load(Ordering::SeqCst));
    /// # }
    /// ```
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Reports progress: `done` of `total` (if known), with a message.
    ///
    /// JSON has no NaN or infinity (serde_json writes them as `null`, which an MCP client
    /// refuses as a progress notification's number): a report whose `done` is not a finite
    /// number (`0.0 / 0.0` for an empty job, say) is not passed on, and a `total` that is
    /// not one is passed on as unknown.
    pub fn progress<'m>(&self, done: f64, total: Option<f64>, message: impl Into<Option<&'m str>>) {
        let Some(sink) = &self.progress else {
            return;
        };
        if !done.is_finite() {
            return;
        }
        sink.report(Progress {
            call_id: self.call_id.to_string(),
            tool: self.tool.to_string(),
            done,
            total: total.filter(|total| total.is_finite()),
            message: message.into().map(str::to_owned),
        });
    }
}

impl fmt::Debug for ToolCallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCallContext")
            .field("call_id", &self.call_id)
            .field("tool", &self.tool)
            .field("cancelled", &self.is_cancelled())
            .field("reports_progress", &self.progress.is_some())
            .field(
                "values",
                &self.values.as_ref().map_or(0, |values| values.len()),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn reports_carry_only_finite_numbers() {
        let reports: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let seen = Arc::clone(&reports);
        let context = ToolCallContext::new("call-1", "index", CancellationToken::new())
            .with_progress(Arc::new(move |progress: Progress| {
                seen.lock().unwrap().push(progress);
            }));
        context.progress(f64::NAN, Some(4.0), "an empty job's share");
        context.progress(f64::INFINITY, None, None);
        context.progress(1.0, Some(f64::NAN), "of an unknown total");
        context.progress(2.0, Some(f64::INFINITY), None);
        context.progress(3.0, Some(4.0), "three of four");
        let reports = reports.lock().unwrap();
        let numbers: Vec<(f64, Option<f64>)> = reports
            .iter()
            .map(|report| (report.done, report.total))
            .collect();
        assert_eq!(numbers, [(1.0, None), (2.0, None), (3.0, Some(4.0))]);
        // Each as JSON has numbers only, as an MCP progress notification needs.
        for report in reports.iter() {
            let json = serde_json::json!({"progress": report.done, "total": report.total});
            assert!(json["progress"].is_number(), "{json}");
        }
        assert_eq!(reports[0].message.as_deref(), Some("of an unknown total"));
        assert_eq!(reports[2].call_id, "call-1");
    }
}
