//! The tool calls of one model answer: hooks and approval, the calls run together through
//! the manager, their results written for the model and recorded.

use std::sync::Arc;
use std::time::Duration;

use toolsmith_core::provider::{ParsedCall, error_for_model};
use toolsmith_core::{
    BatchOptions, CancellationToken, Progress, SHED_TOOL_NAME, ToolCallRequest, ToolCallResult,
};

use super::events::AgentEvent;
use super::hooks::{ApprovalDecision, HookDecision};
use super::{AgentSession, ToolCallRecord};
use crate::model::ToolResultMessage;

/// How a turn's calls ended.
pub(super) enum CallsEnded {
    /// Every call has its result.
    Normally,
    /// A hook stopped the run.
    Stopped(String),
    /// The run was cancelled while the calls ran.
    Cancelled,
}

/// The results of a turn's calls, in call order, and how they ended.
pub(super) struct TurnOutcome {
    pub(super) results: Vec<ToolResultMessage>,
    pub(super) end: CallsEnded,
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
}

impl<'s> TurnCalls<'s> {
    pub(super) fn new(
        session: &'s AgentSession,
        turn: usize,
        cancel: &'s CancellationToken,
    ) -> Self {
        Self {
            session,
            turn,
            cancel,
        }
    }

    pub(super) async fn run(
        self,
        calls: Vec<ParsedCall>,
        records: &mut Vec<ToolCallRecord>,
    ) -> TurnOutcome {
        let session = self.session;
        let known = KnownTools::new(session);

        // Each call's id and name as the model sent them, and the request it runs as.
        let mut slots: Vec<(String, String, Option<ToolCallRequest>, bool)> = Vec::new();
        let mut admissions = Vec::with_capacity(calls.len());
        let mut batch: Vec<ToolCallRequest> = Vec::new();
        let mut stop: Option<String> = None;
        for call in calls {
            let request = match call {
                Err(rejected) => {
                    let text = known.error_text(&rejected.error);
                    slots.push((rejected.id, rejected.name, None, false));
                    admissions.push(Admission::Answered(ToolCallResult::error(text), None));
                    continue;
                }
                Ok(request) => request,
            };
            if let Some(reason) = &stop {
                let text = format!("not run: the run was stopped ({reason})");
                slots.push((
                    request.id.clone(),
                    request.name.clone(),
                    Some(request),
                    false,
                ));
                admissions.push(Admission::Answered(ToolCallResult::error(text), None));
                continue;
            }
            let (request, rewritten, decision) = self.before_tool(request).await;
            let admission = match decision {
                Decision::Run => {
                    batch.push(request.clone());
                    Admission::Runs(batch.len() - 1)
                }
                Decision::Deny(reason) => {
                    let text = format!("The call was not run: {reason}");
                    Admission::Answered(ToolCallResult::error(text), Some(reason))
                }
                Decision::Stop(reason) => {
                    let text = format!("not run: the run was stopped ({reason})");
                    stop = Some(reason);
                    Admission::Answered(ToolCallResult::error(text), None)
                }
            };
            slots.push((
                request.id.clone(),
                request.name.clone(),
                Some(request),
                rewritten,
            ));
            admissions.push(admission);
        }
        if stop.is_some() {
            // Nothing of a stopped turn runs.
            for admission in &mut admissions {
                if let Admission::Runs(_) = admission {
                    let reason = stop.clone().unwrap_or_default();
                    let text = format!("not run: the run was stopped ({reason})");
                    *admission = Admission::Answered(ToolCallResult::error(text), None);
                }
            }
            batch.clear();
        }

        let reporting = !session.events.is_empty();
        let mut options = BatchOptions::new()
            .with_offer_check(true)
            .with_cancellation(self.cancel.clone());
        if reporting {
            for request in &batch {
                session.emit(AgentEvent::ToolCallStarted {
                    call_id: request.id.clone(),
                    name: request.name.clone(),
                });
            }
            let events = Arc::clone(&session.events);
            let progress = move |progress: Progress| {
                let event = AgentEvent::ToolCallProgress(progress);
                for handler in events.iter() {
                    handler.on_event(&event);
                }
            };
            options = options.with_progress(Arc::new(progress));
        }
        if let Some(deadline) = session.batch_deadline {
            options = options.with_deadline(deadline);
        }
        let mut outcomes: Vec<Option<_>> = if batch.is_empty() {
            Vec::new()
        } else {
            session
                .manager
                .execute_batch_with(&batch, &options)
                .await
                .into_iter()
                .map(Some)
                .collect()
        };

        let mut results = Vec::with_capacity(slots.len());
        for ((id, name, request, rewritten), admission) in slots.into_iter().zip(admissions) {
            let batched = matches!(admission, Admission::Runs(_));
            let (mut result, denied, attempts, duration) = match admission {
                Admission::Answered(result, denied) => (result, denied, 0, Duration::ZERO),
                Admission::Runs(index) => {
                    let outcome = outcomes[index].take().expect("one outcome per call run");
                    let result = match outcome.result {
                        Ok(result) => match session.manager.check_result(&name, &result) {
                            Ok(()) => result,
                            Err(error) => ToolCallResult::error(known.error_text(&error)),
                        },
                        Err(error) => ToolCallResult::error(known.error_text(&error)),
                    };
                    (result, None, outcome.attempts, outcome.elapsed)
                }
            };
            // Calls that went to the batch were announced as started: each gets its end,
            // and the `after_tool` hooks, whether the tool ran or was refused there.
            if let Some(request) = request.as_ref().filter(|_| batched) {
                for hook in &session.hooks {
                    hook.after_tool(request, &mut result).await;
                }
            }
            if batched && reporting {
                session.emit(AgentEvent::ToolCallFinished {
                    call_id: id.clone(),
                    name: name.clone(),
                    duration,
                    is_error: result.is_error(),
                    summary: result.content.to_text(),
                });
            }
            records.push(ToolCallRecord {
                turn: self.turn,
                call_id: id.clone(),
                name: name.clone(),
                arguments: request
                    .as_ref()
                    .map(|r| r.arguments.as_value().clone())
                    .unwrap_or_default(),
                rewritten,
                denied,
                result: result.clone(),
                attempts,
                duration,
            });
            results.push(ToolResultMessage {
                call_id: id,
                name,
                result,
            });
        }
        let end = match stop {
            Some(reason) => CallsEnded::Stopped(reason),
            None if self.cancel.is_cancelled() => CallsEnded::Cancelled,
            None => CallsEnded::Normally,
        };
        TurnOutcome { results, end }
    }

    /// The `before_tool` hooks, then the approval of a destructive call.
    async fn before_tool(&self, mut request: ToolCallRequest) -> (ToolCallRequest, bool, Decision) {
        let session = self.session;
        let mut rewritten = false;
        for hook in &session.hooks {
            match hook.before_tool(&request).await {
                HookDecision::Allow => {}
                HookDecision::Rewrite(arguments) => {
                    request.arguments = arguments;
                    rewritten = true;
                }
                HookDecision::Deny(reason) => return (request, rewritten, Decision::Deny(reason)),
                HookDecision::Stop(reason) => return (request, rewritten, Decision::Stop(reason)),
            }
        }
        if let Some(approval) = &session.approval {
            let destructive = session.manager.get_def(&request.name).is_some_and(|tool| {
                tool.call_annotations(&request.arguments).destructive == Some(true)
            });
            if destructive && let ApprovalDecision::Deny(reason) = approval.approve(&request).await
            {
                return (request, rewritten, Decision::Deny(reason));
            }
        }
        (request, rewritten, Decision::Run)
    }
}

/// The names an error for the model may suggest ("did you mean"), listed only when a
/// turn has an error to write.
struct KnownTools<'s> {
    session: &'s AgentSession,
    names: std::cell::OnceCell<Vec<String>>,
}

impl<'s> KnownTools<'s> {
    fn new(session: &'s AgentSession) -> Self {
        Self {
            session,
            names: std::cell::OnceCell::new(),
        }
    }

    /// `error` written for the model.
    fn error_text(&self, error: &toolsmith_core::ToolError) -> String {
        let names = self.names.get_or_init(|| {
            let mut names = self.session.manager.names();
            names.push(SHED_TOOL_NAME.to_owned());
            names
        });
        let known: Vec<&str> = names.iter().map(String::as_str).collect();
        error_for_model(error, &known)
    }
}

/// What the hooks and the approval decided for a call.
enum Decision {
    Run,
    Deny(String),
    Stop(String),
}
