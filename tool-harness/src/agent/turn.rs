//! The tool calls of one model answer: hooks and approval, the calls run together through
//! the manager, their results written for the model and recorded.

use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _};
use tokio::time::Instant;
use toolsmith_core::provider::{ParsedCall, error_for_model, repeated_id_reason, repeated_ids};
use toolsmith_core::{
    BatchOptions, CancellationToken, Progress, SHED_TOOL_NAME, ToolArguments, ToolCallOutcome,
    ToolCallRequest, ToolCallResult, ToolError, trace_call_not_run,
};

use super::error::CaughtPanic;
use super::events::{AgentEvent, DeniedBy, NotRunReason};
use super::hooks::{ApprovalDecision, HookDecision};
use super::ledger::RunLedger;
use super::{AgentSession, ToolCallRecord};
use crate::expired_limit::{ExpiredLimit, changes_nothing};
use crate::model::ToolResultMessage;

/// How a turn's calls ended.
pub(super) enum CallsEnded {
    /// Every call has its result.
    Normally,
    /// A hook stopped the run.
    Stopped(String),
    /// The run was cancelled while the calls ran.
    Cancelled,
    /// A hook or the approval panicked: the run ends.
    Panicked(CaughtPanic),
}

/// The results of a turn's calls, in call order, and how they ended.
pub(super) struct TurnOutcome {
    pub(super) results: Vec<ToolResultMessage>,
    pub(super) end: CallsEnded,
}

/// A call after the hooks: settled (answered without running), or let run by them, its
/// approval still to come.
enum Admitted {
    Settled(Slot, bool, Admission),
    /// A call the hooks let run, whether they rewrote it, and the arguments the tool is given
    /// when they did not and the hooks saw them with whole floats as integers.
    Pending(ToolCallRequest, bool, Option<ToolArguments>),
}

/// What became of one call before the batch.
enum Admission {
    /// Its arguments could not be read, or a hook or the approval denied it.
    Answered(ToolCallResult, Option<String>),
    /// It runs, as the `index`-th call of the batch.
    Runs(usize),
}

/// Runs the calls of model answer `turn` for `session`.
pub(super) struct TurnCalls<'s> {
    session: &'s AgentSession,
    turn: usize,
    cancel: &'s CancellationToken,
    /// The caller's token of [`AgentSession::run_with_cancellation`], which stops the run
    /// too.
    caller: Option<&'s CancellationToken>,
    options: &'s BatchOptions,
    /// The run's ledger, which says where its events go besides the session's handlers.
    ledger: &'s RunLedger,
    /// The answer was cut off at the output token limit: its calls may be cut short too.
    cut_off: bool,
}

impl<'s> TurnCalls<'s> {
    pub(super) fn new(
        session: &'s AgentSession,
        turn: usize,
        (cancel, caller): (&'s CancellationToken, Option<&'s CancellationToken>),
        (options, ledger): (&'s BatchOptions, &'s RunLedger),
    ) -> Self {
        Self {
            session,
            turn,
            cancel,
            caller,
            options,
            ledger,
            cut_off: false,
        }
    }

    /// For an answer cut off at the output token limit: none of its calls runs (JSON repair
    /// would close a call's arguments where they were cut, and the tool would run on part
    /// of them); each is answered so that the model writes it again.
    pub(super) fn cut_off(mut self, cut_off: bool) -> Self {
        self.cut_off = cut_off;
        self
    }

    pub(super) async fn run(
        self,
        calls: Vec<ParsedCall>,
        records: &mut Vec<ToolCallRecord>,
    ) -> TurnOutcome {
        let session = self.session;
        let known = KnownTools::new(session);

        // Each call as the model sent it, first through the hooks.
        let mut admitted: Vec<Admitted> = Vec::with_capacity(calls.len());
        let mut stop: Option<TurnStop> = None;
        // A call whose id an earlier call of the answer has: its result could not be told
        // apart, so it does not run (the others do).
        let repeated = repeated_ids(&calls);
        for (call, repeated) in calls.into_iter().zip(repeated) {
            let request = match call {
                Err(rejected) => {
                    let text = known.error_text(&rejected.error);
                    let answer = self.not_run(
                        &rejected.id,
                        &rejected.name,
                        NotRunReason::Unreadable,
                        ToolCallResult::error(text),
                    );
                    admitted.push(Admitted::Settled(
                        Slot::Unread(rejected.id, rejected.name),
                        false,
                        answer,
                    ));
                    continue;
                }
                Ok(request) => request,
            };
            let held = if repeated {
                Some((
                    NotRunReason::RepeatedId,
                    ToolCallResult::error(repeated_id_reason(&request.id)),
                ))
            } else if self.cut_off {
                Some((
                    NotRunReason::CutOff,
                    ToolCallResult::error(
                        "not run: your answer was cut off at the output token limit while you \
                         wrote the calls, so their arguments may be incomplete; make the call \
                         again (with shorter arguments, or fewer calls at once)",
                    ),
                ))
            } else if let Some(stop) = &stop {
                Some(stop.held())
            } else if self.cancelled() {
                Some((NotRunReason::Cancelled, cancelled()))
            } else {
                None
            };
            if let Some((why, result)) = held {
                let answer = self.not_run(&request.id, &request.name, why, result);
                admitted.push(Admitted::Settled(Slot::Held(request), false, answer));
                continue;
            }
            let mut request = request;
            let as_repaired = self.as_the_tool_reads(&mut request);
            // A hook may wait on a person: the run's cancellation ends the wait.
            let decided = tokio::select! {
                biased;
                decided = self.hooks(&mut request) => Some(decided),
                () = self.cancel.cancelled() => None,
            };
            let Some((rewritten, decision)) = decided else {
                let answer = self.not_run(
                    &request.id,
                    &request.name,
                    NotRunReason::Cancelled,
                    cancelled(),
                );
                admitted.push(Admitted::Settled(Slot::Held(request), false, answer));
                continue;
            };
            admitted.push(match decision {
                Decision::Run => Admitted::Pending(request, rewritten, as_repaired),
                Decision::Deny(reason) => {
                    let answer = self.denied(&request, DeniedBy::Hook, reason);
                    Admitted::Settled(Slot::Held(request), rewritten, answer)
                }
                Decision::Stop(ended) => {
                    let (why, result) = ended.held();
                    let answer = self.not_run(&request.id, &request.name, why, result);
                    stop = Some(ended);
                    Admitted::Settled(Slot::Held(request), rewritten, answer)
                }
            });
        }

        // Then the approval of the destructive calls the hooks let run, now that it is known
        // whether a search of this answer runs (and may give a tool the others call). A call
        // that runs moves into the batch, and its slot keeps the index (no copy of it).
        let searches = stop.is_none()
            && admitted.iter().any(|admitted| {
                matches!(admitted, Admitted::Pending(request, ..) if request.name == SHED_TOOL_NAME)
            });
        let mut slots: Vec<(Slot, bool, Admission)> = Vec::with_capacity(admitted.len());
        let mut batch: Vec<ToolCallRequest> = Vec::with_capacity(admitted.len());
        // The calls of the batch refused already, by their index in it (see
        // `Approval::NotOffered`).
        let mut refused: Vec<(usize, ToolError)> = Vec::new();
        for admitted in admitted {
            let (mut request, rewritten, as_repaired) = match admitted {
                Admitted::Settled(slot, rewritten, admission) => {
                    slots.push((slot, rewritten, admission));
                    continue;
                }
                Admitted::Pending(request, rewritten, as_repaired) => {
                    (request, rewritten, as_repaired)
                }
            };
            let (id, name) = (&request.id, &request.name);
            let admission = if let Some(stop) = &stop {
                // Nothing of a stopped turn runs.
                let (why, result) = stop.held();
                self.not_run(id, name, why, result)
            } else if self.cancelled() {
                self.not_run(id, name, NotRunReason::Cancelled, cancelled())
            } else {
                // An approval may wait on a person: the run's cancellation ends the wait.
                let approved = tokio::select! {
                    biased;
                    approved = self.approval(&request, searches) => Some(approved),
                    () = self.cancel.cancelled() => None,
                };
                match approved {
                    None => self.not_run(id, name, NotRunReason::Cancelled, cancelled()),
                    Some(Err(panic)) => {
                        let ended = TurnStop::Panicked(panic);
                        let (why, result) = ended.held();
                        stop = Some(ended);
                        self.not_run(id, name, why, result)
                    }
                    Some(Ok(Approval::Decided(ApprovalDecision::Deny(reason)))) => {
                        self.denied(&request, DeniedBy::Approval, reason)
                    }
                    Some(Ok(approval)) => {
                        // The tool gets its whole floats as the model sent them, as in a
                        // session without hooks; only a hook's rewrite changes what it gets.
                        if let Some(arguments) = as_repaired.filter(|_| !rewritten) {
                            request.arguments = arguments;
                        }
                        batch.push(request);
                        let index = batch.len() - 1;
                        if let Approval::NotOffered(error) = approval {
                            refused.push((index, error));
                        }
                        slots.push((Slot::Batched(index), rewritten, Admission::Runs(index)));
                        continue;
                    }
                }
            };
            slots.push((Slot::Held(request), rewritten, admission));
        }
        if let Some(stop) = &stop
            && !batch.is_empty()
        {
            // The approval of a later call panicked: the calls approved before it do not run
            // either.
            self.hold_batch(&mut batch, &mut slots, stop);
            refused.clear();
        }

        if session.listened(self.ledger) {
            for request in &batch {
                session.emit(
                    self.ledger,
                    AgentEvent::ToolCallStarted {
                        call_id: request.id.clone(),
                        name: request.name.clone(),
                    },
                );
            }
        }
        // An event handler, a hook or the approval may have cancelled the caller's token:
        // the batch's calls then end cancelled, as with the run's own token.
        self.cancelled();
        let (mut finished, after_tool_panic) = self.execute(&batch, refused, &known).await;

        let mut results = Vec::with_capacity(slots.len());
        for (slot, rewritten, admission) in slots {
            let (result, denied, attempts, duration) = match admission {
                Admission::Answered(result, denied) => (result, denied, 0, Duration::ZERO),
                Admission::Runs(index) => {
                    let call = finished[index].take().expect("one end per call run");
                    (call.result, None, call.attempts, call.duration)
                }
            };
            let (call_id, name, arguments) = match slot {
                Slot::Unread(id, name) => (id, name, ToolArguments::new()),
                Slot::Held(request) => (request.id, request.name, request.arguments),
                Slot::Batched(index) => {
                    // Taken, not cloned: `batch` is not read again for this call.
                    let request = &mut batch[index];
                    (
                        std::mem::take(&mut request.id),
                        std::mem::take(&mut request.name),
                        request.arguments.clone(),
                    )
                }
            };
            records.push(ToolCallRecord {
                turn: self.turn,
                call_id: call_id.clone(),
                name: name.clone(),
                arguments,
                rewritten,
                denied,
                result: result.clone(),
                attempts,
                duration,
            });
            results.push(ToolResultMessage {
                call_id,
                name,
                result,
            });
        }
        let end = match stop {
            Some(TurnStop::Hook(reason)) => CallsEnded::Stopped(reason),
            Some(TurnStop::Panicked(panic)) => CallsEnded::Panicked(panic),
            None => match after_tool_panic {
                Some(panic) => CallsEnded::Panicked(panic),
                None if self.cancelled() => CallsEnded::Cancelled,
                None => CallsEnded::Normally,
            },
        };
        TurnOutcome { results, end }
    }

    /// Whether the run is cancelled, by its own token or the caller's. The caller's reaches
    /// the run's only while the run waits; the run's own code (an event handler, a hook, the
    /// approval) may cancel it while the run goes on without waiting, so it is passed on
    /// here, before anything more of the answer runs.
    fn cancelled(&self) -> bool {
        super::session::is_cancelled(self.cancel, self.caller)
    }

    /// Takes back the calls of `batch` (none has started) as calls kept from running by
    /// `stop`, each reported now.
    #[cold]
    fn hold_batch(
        &self,
        batch: &mut Vec<ToolCallRequest>,
        slots: &mut [(Slot, bool, Admission)],
        stop: &TurnStop,
    ) {
        let mut held: Vec<Option<ToolCallRequest>> = batch.drain(..).map(Some).collect();
        for (slot, _, admission) in slots {
            if let Slot::Batched(index) = *slot {
                let request = held[index].take().expect("one slot per batched call");
                let (why, result) = stop.held();
                *admission = self.not_run(&request.id, &request.name, why, result);
                *slot = Slot::Held(request);
            }
        }
    }

    /// Runs the admitted calls, each finished as it ends while the others run on: one end
    /// each, in their order, and the first panic of an `after_tool` hook (which cancels the
    /// calls still running: the run ends). When the answer both searches (`shed`) and calls
    /// other tools, the searches run first, so that a tool they find is offered to the
    /// calls after them in the same answer. The calls `refused` (by index, with why) end
    /// so without going to the batch.
    async fn execute(
        &self,
        running: &[ToolCallRequest],
        refused: Vec<(usize, ToolError)>,
        known: &KnownTools<'_>,
    ) -> (Vec<Option<FinishedCall>>, Option<CaughtPanic>) {
        let mut finished: Vec<Option<FinishedCall>> = Vec::new();
        finished.resize_with(running.len(), || None);
        if running.is_empty() {
            return (finished, None);
        }
        let deadline = TurnDeadline::start(self.options);
        if self.session.hooks.is_empty() {
            // Nothing to wait for: each call is finished in the batch's loop as it ends.
            self.run_batches((running, refused), deadline, |index, outcome, expired| {
                let request = &running[index];
                let (attempts, elapsed) = (outcome.attempts, outcome.elapsed);
                let result = self.shown_result(request, outcome, expired, known);
                finished[index] = Some(self.finished(request, result, attempts, elapsed));
            })
            .await;
            return (finished, None);
        }
        // Outcomes go from the batch to the hooks through a channel, so that an `after_tool`
        // hook that waits holds up neither the calls still running nor their timing. The
        // sender goes with the batch's future, which `join` drops when it is done.
        let (ended, mut to_finish) = futures::channel::mpsc::unbounded();
        let run = self.run_batches(
            (running, refused),
            deadline,
            move |index, outcome, expired| {
                // The receiver lives until every outcome is in: a send cannot fail.
                let _ = ended.unbounded_send((index, outcome, expired));
            },
        );
        let mut first_panic = None;
        let finish_each = async {
            while let Some((index, outcome, expired)) = to_finish.next().await {
                let request = &running[index];
                let (attempts, elapsed) = (outcome.attempts, outcome.elapsed);
                let result = self.shown_result(request, outcome, expired, known);
                let (result, panicked) = self.after_tool(request, result).await;
                if let Some(panic) = panicked
                    && first_panic.is_none()
                {
                    // The run ends: the calls still running are cancelled, and end (and are
                    // finished here, hooks and event included) as for a cancellation.
                    self.cancel.cancel();
                    first_panic = Some(panic);
                }
                finished[index] = Some(self.finished(request, result, attempts, elapsed));
            }
        };
        futures::future::join(run, finish_each).await;
        (finished, first_panic)
    }

    /// Runs `running` (the searches first when the answer mixes them with other calls),
    /// handing each outcome to `ended` with the call's index as the call ends, and the
    /// turn's `deadline` when it had passed then (and the run was not cancelled). The calls
    /// `refused` do not go to the manager: each ends at once, not run, with its error.
    async fn run_batches(
        &self,
        (running, refused): (&[ToolCallRequest], Vec<(usize, ToolError)>),
        deadline: Option<TurnDeadline>,
        mut ended: impl FnMut(usize, ToolCallOutcome, Option<Duration>),
    ) {
        let manager = &self.session.manager;
        // The turn's deadline is for the answer's calls together: every batch of them counts
        // it from when the first started, as the results that name it do.
        let counted;
        let options = match deadline {
            Some(deadline) => {
                counted = self.options.clone().with_deadline_from(deadline.start);
                &counted
            }
            None => self.options,
        };
        // Asked as each call ends, not when its result is written (an `after_tool` hook may
        // hold that up past the deadline): the batch stops the calls still running when the
        // deadline passes, and a cancellation wins a tie, as in the batch.
        let expired = || {
            deadline
                .filter(|deadline| deadline.passed() && !self.cancelled())
                .map(|deadline| deadline.length)
        };
        let is_shed = |request: &ToolCallRequest| request.name == SHED_TOOL_NAME;
        let mixed = running.iter().any(is_shed) && !running.iter().all(is_shed);
        if !mixed && refused.is_empty() {
            let mut outcomes = pin!(manager.execute_batch_stream(running, options));
            while let Some((index, outcome)) = outcomes.next().await {
                ended(index, outcome, expired());
            }
            return;
        }
        let mut runs = vec![true; running.len()];
        for (index, error) in refused {
            runs[index] = false;
            let request = &running[index];
            trace_call_not_run(&request.id, &request.name, error.kind().as_str());
            let outcome = ToolCallOutcome {
                id: request.id.clone(),
                name: request.name.clone(),
                result: Err(error),
                attempts: 0,
                elapsed: Duration::ZERO,
            };
            ended(index, outcome, None);
        }
        let (searches, others): (Vec<_>, Vec<_>) = (0..running.len())
            .filter(|&index| runs[index])
            .partition(|&index| mixed && is_shed(&running[index]));
        for group in [searches, others] {
            if group.is_empty() {
                continue;
            }
            let requests: Vec<ToolCallRequest> =
                group.iter().map(|&index| running[index].clone()).collect();
            let mut outcomes = pin!(manager.execute_batch_stream(&requests, options));
            while let Some((index, outcome)) = outcomes.next().await {
                ended(group[index], outcome, expired());
            }
        }
    }

    /// The result the model is shown for a call of the batch that ended as `outcome`, the
    /// turn's deadline of length `expired` having passed by then: its tool's result checked
    /// against the tool's result schema, or an error written for the model.
    fn shown_result(
        &self,
        request: &ToolCallRequest,
        outcome: ToolCallOutcome,
        expired: Option<Duration>,
        known: &KnownTools<'_>,
    ) -> ToolCallResult {
        let error = match outcome.result {
            Ok(result) => match self.session.manager.check_result(&request.name, &result) {
                Ok(()) => return result,
                Err(error) => error,
            },
            Err(error) => error,
        };
        // A time limit that ended the call is named, with its length, so that the model can
        // ask for less: the call's own timeout, or the turn's deadline (which the batch
        // reports as a cancellation, as the run's own cancellation is).
        let manager = &self.session.manager;
        let changes_nothing = || changes_nothing(manager, &request.name, &request.arguments);
        let text = match &error {
            ToolError::Timeout { tool } => ExpiredLimit::of_call(manager, tool, outcome.elapsed)
                .map(|limit| limit.timed_out(tool, changes_nothing())),
            ToolError::Cancelled(_) => expired.map(|deadline| {
                if outcome.attempts == 0 {
                    ExpiredLimit::not_run(deadline)
                } else {
                    ExpiredLimit::Turn(deadline).timed_out(&request.name, changes_nothing())
                }
            }),
            _ => None,
        };
        ToolCallResult::error(text.unwrap_or_else(|| known.error_text(&error)))
    }

    /// `result` after every `after_tool` hook, and the first hook's panic. Every call that
    /// went to the batch was announced as started, so each gets the hooks, whether the tool
    /// ran or was refused there.
    ///
    /// A hook that panics leaves the result as it was before it (what it changed is
    /// dropped, as it may be half done), and the next hooks still run: one that redacts the
    /// result must not be skipped because another panicked.
    async fn after_tool(
        &self,
        request: &ToolCallRequest,
        mut result: ToolCallResult,
    ) -> (ToolCallResult, Option<CaughtPanic>) {
        let mut first_panic = None;
        for (number, hook) in self.session.hooks.iter().enumerate() {
            let before = result.clone();
            // Not waited for past the run's cancellation: the result is kept as the hook left
            // it, and the next hooks are still asked (a hook that does not wait, one that
            // redacts, still changes it): one that waits must not keep a later one from
            // redacting what the kept conversation sends the model next.
            let ran = tokio::select! {
                biased;
                ran = AssertUnwindSafe(async { hook.after_tool(request, &mut result).await })
                    .catch_unwind() => ran,
                () = self.cancel.cancelled() => continue,
            };
            if let Err(payload) = ran {
                result = before;
                let panic = hook_panic("after_tool", number, request, payload);
                first_panic.get_or_insert(panic);
            }
        }
        (result, first_panic)
    }

    /// A call of the batch that ended, shown to the model as `result`: the event handlers
    /// hear of it now.
    fn finished(
        &self,
        request: &ToolCallRequest,
        result: ToolCallResult,
        attempts: u32,
        duration: Duration,
    ) -> FinishedCall {
        let session = self.session;
        if session.listened(self.ledger) {
            session.emit(
                self.ledger,
                AgentEvent::ToolCallFinished {
                    call_id: request.id.clone(),
                    name: request.name.clone(),
                    duration,
                    is_error: result.is_error(),
                    summary: result.content.to_text(),
                },
            );
            // A handler may have cancelled the caller's token: the calls not started yet
            // (an answer's other calls run after its searches) do not start.
            self.cancelled();
        }
        FinishedCall {
            result,
            attempts,
            duration,
        }
    }

    /// The admission of `request`, which `by` denied for `reason`: the model is told why,
    /// and the event handlers hear of it now, when it is decided.
    fn denied(&self, request: &ToolCallRequest, by: DeniedBy, reason: String) -> Admission {
        trace_call_not_run(&request.id, &request.name, "denied");
        let session = self.session;
        if session.listened(self.ledger) {
            session.emit(
                self.ledger,
                AgentEvent::ToolCallDenied {
                    call_id: request.id.clone(),
                    name: request.name.clone(),
                    by,
                    reason: reason.clone(),
                },
            );
        }
        let text = format!("The call was not run: {reason}");
        Admission::Answered(ToolCallResult::error(text), Some(reason))
    }

    /// The admission of the call `call_id` to `name`, kept from running (`why`) with
    /// `result`: the event handlers hear of it now, when it is decided.
    fn not_run(
        &self,
        call_id: &str,
        name: &str,
        why: NotRunReason,
        result: ToolCallResult,
    ) -> Admission {
        trace_call_not_run(call_id, name, why.as_str());
        let session = self.session;
        if session.listened(self.ledger) {
            session.emit(
                self.ledger,
                AgentEvent::ToolCallNotRun {
                    call_id: call_id.to_owned(),
                    name: name.to_owned(),
                    why,
                    summary: result.content.to_text(),
                },
            );
        }
        Admission::Answered(result, None)
    }

    /// `request`'s arguments as its tool will read them, when a hook or the approval is to
    /// judge them: the spellings validation repairs (a boolean or number sent as a string,
    /// an optional argument sent as `null`) repaired, so that `"recursive": "true"` is seen
    /// as the `true` the tool gets, not passed as a string no check matches; and whole
    /// floats as integers (`0.0` as the 0 the tool reads). Arguments that do not validate
    /// are left as sent: the batch refuses them.
    ///
    /// Returns the repaired arguments with their floats as sent when that form differs, for
    /// the tool: a `Value` argument keeps `2.0`, as in a session without hooks.
    fn as_the_tool_reads(&self, request: &mut ToolCallRequest) -> Option<ToolArguments> {
        let session = self.session;
        if session.hooks.is_empty() && session.approval.is_none() {
            return None;
        }
        let arguments = session
            .manager
            .validate_arguments(&request.name, &request.arguments)
            .ok()?;
        match arguments.with_whole_floats_as_integers() {
            Some(judged) => {
                request.arguments = judged;
                Some(arguments)
            }
            None => {
                request.arguments = arguments;
                None
            }
        }
    }

    /// The `before_tool` hooks (which may rewrite `request`): whether the arguments were
    /// rewritten, and the decision. A hook's panic stops the turn.
    async fn hooks(&self, request: &mut ToolCallRequest) -> (bool, Decision) {
        let mut rewritten = false;
        for (number, hook) in self.session.hooks.iter().enumerate() {
            let asked = &*request;
            // Caught inside the `async` block, so that a hook whose method panics before it
            // returns its future is caught too.
            let decided = AssertUnwindSafe(async { hook.before_tool(asked).await })
                .catch_unwind()
                .await;
            let decision = match decided {
                Ok(decision) => decision,
                Err(payload) => {
                    let panic = hook_panic("before_tool", number, request, payload);
                    return (rewritten, Decision::Stop(TurnStop::Panicked(panic)));
                }
            };
            match decision {
                HookDecision::Allow => {}
                HookDecision::Rewrite(arguments) => {
                    request.arguments = arguments;
                    rewritten = true;
                }
                HookDecision::Deny(reason) => return (rewritten, Decision::Deny(reason)),
                HookDecision::Stop(reason) => {
                    return (rewritten, Decision::Stop(TurnStop::Hook(reason)));
                }
            }
        }
        (rewritten, Decision::Run)
    }

    /// The approval of `request` when it is destructive, or the approval's panic. Nobody is
    /// asked about a call the batch would refuse: a tool `shed` has not given, unless a
    /// search of this answer that runs (`searches`) may give it. Such a call is refused
    /// here ([`Approval::NotOffered`]), not left to the batch's check.
    async fn approval(
        &self,
        request: &ToolCallRequest,
        searches: bool,
    ) -> Result<Approval, CaughtPanic> {
        let session = self.session;
        let Some(approval) = &session.approval else {
            return Ok(Approval::Decided(ApprovalDecision::Approve));
        };
        let destructive = session
            .manager
            .call_annotations(&request.name, &request.arguments)
            .is_some_and(|annotations| annotations.destructive == Some(true));
        if !destructive {
            return Ok(Approval::Decided(ApprovalDecision::Approve));
        }
        if !searches && let Err(not_offered) = session.manager.check_offered(&request.name) {
            return Ok(Approval::NotOffered(not_offered));
        }
        AssertUnwindSafe(async { approval.approve(request).await })
            .catch_unwind()
            .await
            .map(Approval::Decided)
            .map_err(|payload| {
                let during = format!("the approval of call {} ({})", request.id, request.name);
                CaughtPanic::new(during, payload)
            })
    }
}

/// The panic of the `which` hook at `index` (counted from 0) with `request`, named as the
/// run's error names it: "the before_tool hook #1 of call c2 (ping)".
#[cold]
fn hook_panic(
    which: &str,
    index: usize,
    request: &ToolCallRequest,
    payload: Box<dyn std::any::Any + Send>,
) -> CaughtPanic {
    let during = format!(
        "the {which} hook #{} of call {} ({})",
        index + 1,
        request.id,
        request.name
    );
    CaughtPanic::new(during, payload)
}

/// How a run's batches run: offered tools only, stopped by the run's token (`cancel`, and
/// the caller's, `caller`), the run's `ledger` lent to each call, progress reported as events
/// when a handler or the run's stream listens, the session's deadline. Made once a run; it owns the run's token.
pub(super) fn batch_options(
    session: &AgentSession,
    (cancel, caller): (CancellationToken, Option<&CancellationToken>),
    ledger: &Arc<RunLedger>,
) -> BatchOptions {
    let mut options = BatchOptions::new()
        .with_offer_check(true)
        .with_call_values(ledger.call_values());
    if session.listened(ledger) {
        let events = Arc::clone(&session.events);
        let run_events = Arc::clone(ledger);
        // A handler may cancel the caller's token while the batch goes on without waiting:
        // passed on at once (see `TurnCalls::cancelled`), so that no call starts after it.
        let follow = caller.map(|caller| (cancel.clone(), caller.clone()));
        let progress = move |progress: Progress| {
            run_events.send(&events, AgentEvent::ToolCallProgress(progress));
            if let Some((run, caller)) = &follow {
                super::session::is_cancelled(run, Some(caller));
            }
        };
        options = options.with_progress(Arc::new(progress));
    }
    options = options.with_cancellation(cancel);
    if let Some(deadline) = session.batch_deadline {
        options = options.with_deadline(deadline);
    }
    options
}

/// The turn's deadline, counted from when its first batch started.
#[derive(Debug, Clone, Copy)]
struct TurnDeadline {
    start: Instant,
    length: Duration,
    /// When it passes; `None` when too far to represent (no deadline, as for the batch).
    at: Option<Instant>,
}

impl TurnDeadline {
    /// The deadline of `options`, if they have one, counted from now.
    fn start(options: &BatchOptions) -> Option<Self> {
        let start = Instant::now();
        options.deadline().map(|length| Self {
            start,
            length,
            at: start.checked_add(length),
        })
    }

    /// Whether it has passed.
    fn passed(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }
}

/// The names an error for the model may suggest ("did you mean"), listed only when a
/// turn has an error to write.
struct KnownTools<'s> {
    session: &'s AgentSession,
    /// A lock, not a cell: the turn's calls are finished beside the batch that runs them.
    names: std::sync::OnceLock<Vec<String>>,
}

impl<'s> KnownTools<'s> {
    fn new(session: &'s AgentSession) -> Self {
        Self {
            session,
            names: std::sync::OnceLock::new(),
        }
    }

    /// `error` written for the model.
    fn error_text(&self, error: &toolsmith_core::ToolError) -> String {
        let names = self
            .names
            .get_or_init(|| self.session.manager.names_for_the_model());
        let known: Vec<&str> = names.iter().map(String::as_str).collect();
        error_for_model(error, &known)
    }
}

/// Where a call of the turn is kept until its result is written.
enum Slot {
    /// Its arguments could not be read: only its id and name are known.
    Unread(String, String),
    /// It does not run (denied, or the turn was stopped).
    Held(ToolCallRequest),
    /// It is call `index` of the batch.
    Batched(usize),
}

/// The result shown for a call the run's cancellation kept from running.
fn cancelled() -> ToolCallResult {
    ToolCallResult::error("not run: the run was cancelled")
}

/// The result shown for a call a `Stop` hook kept from running.
fn stopped(reason: &str) -> ToolCallResult {
    ToolCallResult::error(format!("not run: the run was stopped ({reason})"))
}

/// How a call of the batch ended, as the model is shown it.
struct FinishedCall {
    result: ToolCallResult,
    attempts: u32,
    duration: Duration,
}

/// What the approval step decided for a call the hooks let run.
enum Approval {
    /// The approval's answer, or `Approve` for a call it is not asked about.
    Decided(ApprovalDecision),
    /// A destructive call to a tool not offered when its approval was due, which no search
    /// of the answer could offer: nobody was asked, so it must not run even when the tool
    /// is offered by the time the batch would start it (another run of the session may
    /// find it meanwhile, while an approval waits on a person). It ends with this error,
    /// the one the batch's offer check gives, as it would have then.
    NotOffered(ToolError),
}

/// What the hooks decided for a call.
enum Decision {
    Run,
    Deny(String),
    Stop(TurnStop),
}

/// Why nothing more of a turn runs, and the run ends after it.
enum TurnStop {
    /// A `before_tool` hook answered `Stop` with this reason.
    Hook(String),
    /// A `before_tool` hook or the approval panicked.
    Panicked(CaughtPanic),
}

impl TurnStop {
    /// Why a call this stop keeps from running did not run, and the result it is shown.
    fn held(&self) -> (NotRunReason, ToolCallResult) {
        match self {
            Self::Hook(reason) => (NotRunReason::Stopped, stopped(reason)),
            Self::Panicked(panic) => (
                NotRunReason::Panicked,
                ToolCallResult::error(format!(
                    "not run: the run ended, as {} panicked",
                    panic.during
                )),
            ),
        }
    }
}
