//! Property test of the agent loop: random model answers (quick, slow, failing, flaky and
//! panicking tools, unknown names, unreadable, schema-invalid and repeated calls, `shed`,
//! `agent start` of a sub-agent, answers cut off at the output limit), random hooks and
//! approval (allowing, denying, rewriting, stopping, panicking), a retry policy, a turn
//! deadline and a turn limit, and a cancellation fired at (or the `send` dropped after) a
//! random event, then a second `send`.
//!
//! Checked for every case, from the docs of `hooks.rs`, `events.rs` and `error.rs`:
//! 1. every call the model made has exactly one result, under its id, right after its
//!    answer, and the transcript renders for every provider format with each call paired to
//!    its result;
//! 2. each `ToolCallStarted` has one `ToolCallFinished` after it; every other call has one
//!    `ToolCallDenied` or `ToolCallNotRun`, for a reason that happened; no event names a
//!    call the model did not make;
//! 3. a tool ran only for a call no hook or approval refused, with valid arguments, never
//!    after the run was cancelled, as many times as its record's `attempts` and at most
//!    1 + the policy's retries (a flaky call exactly as many as it needed, when nothing
//!    ended the run); a call the turn deadline cut is an error saying so; no tool is still
//!    running once the run returned (or its `send` was dropped);
//! 4. the run ends as what happened says (a stop, a cancellation, a panic, the turn limit,
//!    or `Ok`); the sub-agents its calls started are stopped when it ended cancelled,
//!    stopped, panicked or was dropped, and left running otherwise; a dropped `send` leaves
//!    the kept conversation as it was; and the next `send` completes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::common::assert_every_call_answered;
use crate::common::stalled::NeverAnswers;
use async_trait::async_trait;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};
use toolsmith_core::provider::{AssistantCall, CallReply, Provider};
use toolsmith_core::{
    Args, CancellationToken, FnTool, Jitter, ToolAnnotations, ToolArgs, ToolCallContext,
    ToolCallRequest, ToolCallResult, ToolError, ToolRetryConfig, ToolShed,
};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{
    AgentEvent, AgentRun, AgentSession, AgenticError, ApprovalDecision, DeniedBy, HookDecision,
    NotRunReason, SubAgentConfig, ToolApproval, ToolHook,
};
use toolsmith_harness::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn,
    StopReason,
};

/// The tools whose bodies run (and are logged): `quick` takes `{"x": integer}`, the others
/// `{}`; `wipe` is destructive.
const BODY_TOOLS: [&str; 6] = ["quick", "slow", "fails", "boom", "wipe", "flaky"];

/// How long `slow` sleeps: a turn deadline below it cuts the call.
const SLOW_SLEEP: Duration = Duration::from_secs(5);

/// The wait before each retry of the session's retry policy: turn deadlines of 1 and 2 s
/// leave room for 1 and 2 retries.
const RETRY_WAIT: Duration = Duration::from_millis(700);

/// One call of a scripted answer.
#[derive(Debug, Clone)]
enum CallKind {
    Quick,
    /// `quick` with arguments its schema refuses.
    QuickInvalid,
    /// Sleeps on Tokio's (paused) clock, so that the answer's other calls end first.
    Slow,
    Fails,
    Boom,
    Wipe,
    Unknown,
    /// Arguments that are not JSON.
    Unreadable,
    /// `quick` under the id of an earlier call of the same answer.
    RepeatsId(Index),
    Shed,
    /// `flaky`, failing with a (retried) network error this many times before it succeeds.
    Flaky(u8),
    /// `agent start`: a sub-agent whose model never answers, so it runs until stopped.
    StartsChild,
}

/// One scripted answer with calls.
#[derive(Debug, Clone)]
struct Answer {
    text: bool,
    calls: Vec<CallKind>,
    cut_off: bool,
}

/// What a `before_tool` hook answers for a call.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Before {
    Allow,
    Deny,
    RewriteValid,
    RewriteInvalid,
    Stop,
    Panic,
}

/// What an `after_tool` hook does to a result.
#[derive(Debug, Clone, Copy, PartialEq)]
enum After {
    Keep,
    Edit,
    Panic,
}

/// What the approval answers for a destructive call.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Approve {
    Yes,
    No,
    Panic,
}

/// A hook's choices, one per call of the run (cycled).
#[derive(Debug, Clone)]
struct HookPlan {
    before: Vec<Before>,
    after: Vec<After>,
}

#[derive(Debug, Clone)]
struct Case {
    answers: Vec<Answer>,
    final_cut_off: bool,
    hooks: Vec<HookPlan>,
    approval: Option<Vec<Approve>>,
    first: FirstRun,
    /// The session's retry policy: this many retries of network errors.
    retries: Option<u32>,
    /// The session's turn deadline, in seconds.
    turn_deadline: Option<u64>,
    /// The session's limit of model calls.
    max_turns: Option<usize>,
}

/// How the first run is made.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FirstRun {
    /// A plain `send`.
    Send,
    /// A run with a token cancelled as the event of this index (0-based) is delivered.
    CancelAt(usize),
    /// A `send` whose future is dropped once it yields after the event of this index: at
    /// once when it is waiting then, else at its next wait (never, if it ends first).
    DropAt(usize),
}

fn call_kind() -> impl Strategy<Value = CallKind> {
    prop_oneof![
        4 => Just(CallKind::Quick),
        1 => Just(CallKind::QuickInvalid),
        3 => Just(CallKind::Slow),
        1 => Just(CallKind::Fails),
        1 => Just(CallKind::Boom),
        2 => Just(CallKind::Wipe),
        1 => Just(CallKind::Unknown),
        1 => Just(CallKind::Unreadable),
        1 => any::<Index>().prop_map(CallKind::RepeatsId),
        1 => Just(CallKind::Shed),
        2 => (0u8..=3).prop_map(CallKind::Flaky),
        2 => Just(CallKind::StartsChild),
    ]
}

fn answer() -> impl Strategy<Value = Answer> {
    (
        any::<bool>(),
        prop::collection::vec(call_kind(), 1..=5),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(text, calls, cut_off)| Answer {
            text,
            calls,
            cut_off,
        })
}

fn hook_plan() -> impl Strategy<Value = HookPlan> {
    let before = prop_oneof![
        14 => Just(Before::Allow),
        2 => Just(Before::Deny),
        1 => Just(Before::RewriteValid),
        1 => Just(Before::RewriteInvalid),
        1 => Just(Before::Stop),
        1 => Just(Before::Panic),
    ];
    let after = prop_oneof![
        10 => Just(After::Keep),
        3 => Just(After::Edit),
        1 => Just(After::Panic),
    ];
    (
        prop::collection::vec(before, 1..8),
        prop::collection::vec(after, 1..8),
    )
        .prop_map(|(before, after)| HookPlan { before, after })
}

fn case() -> impl Strategy<Value = Case> {
    let approve = prop_oneof![
        4 => Just(Approve::Yes),
        2 => Just(Approve::No),
        1 => Just(Approve::Panic),
    ];
    let first = prop_oneof![
        5 => Just(FirstRun::Send),
        3 => (0usize..40).prop_map(FirstRun::CancelAt),
        // A run has some 5 to 30 events: most drops fall inside it.
        3 => (0usize..24).prop_map(FirstRun::DropAt),
    ];
    // Deadlines on either side of the slow tool's sleep (never on it), some cutting the
    // flaky tool's retries short.
    let limits = (
        prop::option::weighted(0.6, 0u32..=3),
        prop::option::weighted(0.5, prop::sample::select(vec![1u64, 1, 2, 4, 6, 9])),
        prop::option::weighted(0.3, 1usize..=3),
    );
    (
        prop::collection::vec(answer(), 0..4),
        prop::bool::weighted(0.1),
        prop::collection::vec(hook_plan(), 0..=2),
        prop::option::of(prop::collection::vec(approve, 1..6)),
        first,
        limits,
    )
        .prop_map(
            |(answers, final_cut_off, hooks, approval, first, limits)| Case {
                answers,
                final_cut_off,
                hooks,
                approval,
                first,
                retries: limits.0,
                turn_deadline: limits.1,
                max_turns: limits.2,
            },
        )
}

/// One call as scripted: its id, the tool it names, and what it is.
#[derive(Debug, Clone)]
struct Scripted {
    id: String,
    name: &'static str,
    kind: CallKind,
}

/// The calls of each answer, ids given: `t<answer>c<call>`, or an earlier call's for
/// [`CallKind::RepeatsId`].
fn script(case: &Case) -> Vec<Vec<Scripted>> {
    case.answers
        .iter()
        .enumerate()
        .map(|(turn, answer)| {
            let mut calls: Vec<Scripted> = Vec::new();
            for (index, kind) in answer.calls.iter().enumerate() {
                let fresh = format!("t{turn}c{index}");
                let (id, name) = match kind {
                    CallKind::Quick | CallKind::QuickInvalid | CallKind::Unreadable => {
                        (fresh, "quick")
                    }
                    CallKind::Slow => (fresh, "slow"),
                    CallKind::Fails => (fresh, "fails"),
                    CallKind::Boom => (fresh, "boom"),
                    CallKind::Wipe => (fresh, "wipe"),
                    CallKind::Unknown => (fresh, "nope"),
                    CallKind::Shed => (fresh, "shed"),
                    CallKind::Flaky(_) => (fresh, "flaky"),
                    CallKind::StartsChild => (fresh, "agent"),
                    CallKind::RepeatsId(earlier) if index > 0 => {
                        (calls[earlier.index(index)].id.clone(), "quick")
                    }
                    CallKind::RepeatsId(_) => (fresh, "quick"),
                };
                calls.push(Scripted {
                    id,
                    name,
                    kind: kind.clone(),
                });
            }
            calls
        })
        .collect()
}

fn scripted_turns(case: &Case, calls: &[Vec<Scripted>]) -> Vec<ScriptedTurn> {
    let mut turns: Vec<ScriptedTurn> = case
        .answers
        .iter()
        .zip(calls)
        .map(|(answer, calls)| {
            let mut turn = ScriptedTurn::calls(std::iter::empty::<(&str, Value)>());
            for call in calls {
                let arguments = match &call.kind {
                    CallKind::Quick | CallKind::RepeatsId(_) => json!({"x": 1}),
                    CallKind::QuickInvalid => json!({"x": "one"}),
                    CallKind::Unreadable => Value::String("{\"x\": ".to_owned()),
                    CallKind::Shed => json!({"description": "a quick tool"}),
                    CallKind::Flaky(failures) => json!({"fail": failures}),
                    CallKind::StartsChild => json!({"command": "start", "task": "wait"}),
                    _ => json!({}),
                };
                turn = turn.and_call_with_id(call.id.clone(), call.name, arguments);
            }
            if answer.text {
                turn = turn.with_text("working on it");
            }
            if answer.cut_off {
                turn = turn.with_stop_reason(StopReason::MaxTokens);
            }
            turn
        })
        .collect();
    let mut last = ScriptedTurn::text("all done");
    if case.final_cut_off {
        last = last.with_stop_reason(StopReason::MaxTokens);
    }
    turns.push(last);
    turns
}

/// Whether `arguments` are valid for the body tool `tool`.
fn valid_arguments(tool: &str, arguments: &Value) -> bool {
    let Some(object) = arguments.as_object() else {
        return false;
    };
    if tool == "quick" {
        object.len() == 1 && object.get("x").is_some_and(Value::is_i64)
    } else if tool == "flaky" {
        object
            .iter()
            .all(|(key, value)| key == "fail" && value.is_u64())
    } else {
        object.is_empty()
    }
}

/// Something that decides how a run ends, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
enum Happening {
    /// A hook answered `Stop` with `reason`, before event `before` was sent.
    Stop { reason: String, before: usize },
    /// A hook or the approval panicked, before event `before` was sent: `during` is what the
    /// error must name.
    Panic { during: String, before: usize },
    /// The test fired the run's cancellation as event `at` was delivered.
    Cancel { at: usize },
}

impl Happening {
    /// Whether it happened before the event of index `event` was sent.
    fn before_event(&self, event: usize) -> bool {
        match self {
            Self::Stop { before, .. } | Self::Panic { before, .. } => *before <= event,
            Self::Cancel { at } => *at < event,
        }
    }
}

/// A tool body that ran.
#[derive(Debug, Clone)]
struct ToolRan {
    call_id: String,
    tool: String,
    arguments: Value,
    cancelled_at_start: bool,
}

/// What the hooks, the approval, the tools and the event handler saw and did.
#[derive(Default)]
struct Journal {
    events: Vec<AgentEvent>,
    happenings: Vec<Happening>,
    /// `(hook number, call id, what it answered)`.
    before: Vec<(usize, String, Before)>,
    /// `(hook number, call id)`.
    after: Vec<(usize, String)>,
    /// `(call id, what it answered)`.
    approvals: Vec<(String, Approve)>,
    ran: Vec<ToolRan>,
    /// The index of the event whose delivery fires the cancellation.
    cancel_at: Option<usize>,
    cancel: Option<CancellationToken>,
    /// The index of the event after which the first `send` is dropped, and the signal that
    /// tells the test to drop it.
    drop_at: Option<usize>,
    drop_signal: Arc<tokio::sync::Notify>,
    /// How many tool bodies are running now (started, not yet ended or dropped).
    live: usize,
}

/// Counts a tool body out of [`Journal::live`] when it ends or is dropped.
struct LiveBody(Shared);

impl LiveBody {
    fn start(journal: &Shared) -> Self {
        journal.lock().live += 1;
        Self(journal.clone())
    }
}

impl Drop for LiveBody {
    fn drop(&mut self) {
        self.0.lock().live -= 1;
    }
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Journal>>);

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A hook whose answers for each call come from its plan.
struct PlannedHook {
    number: usize,
    before: HashMap<String, Before>,
    after: HashMap<String, After>,
    journal: Shared,
}

impl PlannedHook {
    fn stop_reason(&self) -> String {
        format!("hook {} stops", self.number)
    }
}

#[async_trait]
impl ToolHook for PlannedHook {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        let decision = self.before.get(&call.id).copied().unwrap_or(Before::Allow);
        {
            let mut journal = self.journal.lock();
            journal
                .before
                .push((self.number, call.id.clone(), decision));
            let before = journal.events.len();
            match decision {
                Before::Stop => journal.happenings.push(Happening::Stop {
                    reason: self.stop_reason(),
                    before,
                }),
                Before::Panic => journal.happenings.push(Happening::Panic {
                    during: format!(
                        "the before_tool hook #{} of call {} ({})",
                        self.number, call.id, call.name
                    ),
                    before,
                }),
                _ => {}
            }
        }
        let quick = call.name == "quick";
        match decision {
            Before::Allow => HookDecision::Allow,
            Before::Deny => HookDecision::Deny(format!("hook {} says no", self.number)),
            Before::RewriteValid => HookDecision::Rewrite(
                if quick { json!({"x": 2}) } else { json!({}) }
                    .try_into()
                    .expect("an object"),
            ),
            Before::RewriteInvalid => HookDecision::Rewrite(
                if quick {
                    json!({"x": "two"})
                } else {
                    json!({"junk": 1})
                }
                .try_into()
                .expect("an object"),
            ),
            Before::Stop => HookDecision::Stop(self.stop_reason()),
            Before::Panic => panic!("before_tool hook {} broke on {}", self.number, call.id),
        }
    }

    async fn after_tool(&self, call: &ToolCallRequest, result: &mut ToolCallResult) {
        let action = self.after.get(&call.id).copied().unwrap_or(After::Keep);
        {
            let mut journal = self.journal.lock();
            journal.after.push((self.number, call.id.clone()));
            if action == After::Panic {
                let before = journal.events.len();
                journal.happenings.push(Happening::Panic {
                    during: format!(
                        "the after_tool hook #{} of call {} ({})",
                        self.number, call.id, call.name
                    ),
                    before,
                });
            }
        }
        match action {
            After::Keep => {}
            After::Edit => {
                let edited = format!("{} [hook {}]", result.content.to_text(), self.number);
                *result = if result.is_error() {
                    ToolCallResult::error(edited)
                } else {
                    ToolCallResult::text(edited)
                };
            }
            After::Panic => {
                *result = ToolCallResult::text("half written");
                panic!("after_tool hook {} broke on {}", self.number, call.id);
            }
        }
    }
}

/// An approval whose answers for each call come from the case.
struct PlannedApproval {
    answers: HashMap<String, Approve>,
    journal: Shared,
}

#[async_trait]
impl ToolApproval for PlannedApproval {
    async fn approve(&self, call: &ToolCallRequest) -> ApprovalDecision {
        let answer = self.answers.get(&call.id).copied().unwrap_or(Approve::Yes);
        {
            let mut journal = self.journal.lock();
            journal.approvals.push((call.id.clone(), answer));
            if answer == Approve::Panic {
                let before = journal.events.len();
                journal.happenings.push(Happening::Panic {
                    during: format!("the approval of call {} ({})", call.id, call.name),
                    before,
                });
            }
        }
        match answer {
            Approve::Yes => ApprovalDecision::Approve,
            Approve::No => ApprovalDecision::Deny("the user said no".to_owned()),
            Approve::Panic => panic!("approval broke on {}", call.id),
        }
    }
}

/// A body tool that logs its run in `journal`, then does what its name says.
fn body_tool(name: &'static str, journal: &Shared) -> FnTool {
    let schema = if name == "quick" {
        json!({"type": "object", "properties": {"x": {"type": "integer"}},
               "required": ["x"], "additionalProperties": false})
    } else if name == "flaky" {
        json!({"type": "object", "properties": {"fail": {"type": "integer", "minimum": 0}},
               "additionalProperties": false})
    } else {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    };
    let journal = journal.clone();
    let tool = FnTool::new(
        name,
        format!("The {name} tool."),
        Args::new(schema),
        move |args: ToolArgs<'_>| {
            let arguments = args.arguments().as_value().clone();
            let failures = arguments.get("fail").and_then(Value::as_u64).unwrap_or(0);
            let journal = journal.clone();
            async move {
                let context = ToolCallContext::current().expect("a call runs with its context");
                let _live = LiveBody::start(&journal);
                let earlier_attempts;
                {
                    let mut journal = journal.lock();
                    earlier_attempts = journal
                        .ran
                        .iter()
                        .filter(|ran| ran.call_id == context.call_id())
                        .count();
                    // The test's token (the caller's) counts as the run's: it fired when the
                    // handler cancelled it, whether or not it has reached the call's yet.
                    let cancelled = context.is_cancelled()
                        || journal
                            .happenings
                            .iter()
                            .any(|h| matches!(h, Happening::Cancel { .. }));
                    journal.ran.push(ToolRan {
                        call_id: context.call_id().to_owned(),
                        tool: name.to_owned(),
                        arguments,
                        cancelled_at_start: cancelled,
                    });
                }
                match name {
                    "slow" => {
                        context.progress(0.0, Some(1.0), "sleeping");
                        tokio::time::sleep(SLOW_SLEEP).await;
                        Ok(ToolCallResult::text("slept"))
                    }
                    "flaky" => {
                        if (earlier_attempts as u64) < failures {
                            Err(ToolError::network(name, "connection reset"))
                        } else {
                            Ok(ToolCallResult::text("flaky ran"))
                        }
                    }
                    "fails" => Err(ToolError::execution(name, "it always fails")),
                    "boom" => panic!("the boom tool blew up"),
                    _ => Ok(ToolCallResult::text(format!("{name} ran"))),
                }
            }
        },
    );
    if name == "wipe" {
        tool.with_annotations(ToolAnnotations {
            destructive: Some(true),
            ..ToolAnnotations::default()
        })
    } else {
        tool
    }
}

/// A model whose script can be replaced between runs (the first run may leave turns unused).
#[derive(Clone)]
struct Phased(Arc<Mutex<ScriptedModel>>);

impl Phased {
    fn current(&self) -> ScriptedModel {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn replace(&self, model: ScriptedModel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = model;
    }
}

#[async_trait]
impl ChatModel for Phased {
    fn name(&self) -> &str {
        "scripted"
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.current().complete(request).await
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ending {
    Ok,
    Stopped,
    Cancelled,
    Panicked,
    MaxTurns,
}

fn ending(ended: &Result<AgentRun, AgenticError>) -> Ending {
    match ended {
        Ok(_) => Ending::Ok,
        Err(AgenticError::Stopped { .. }) => Ending::Stopped,
        Err(AgenticError::Cancelled { .. }) => Ending::Cancelled,
        Err(AgenticError::Panicked { .. }) => Ending::Panicked,
        Err(AgenticError::MaxTurns { .. }) => Ending::MaxTurns,
        Err(other) => panic!("the run ended with an unexpected error: {other}"),
    }
}

/// Runs `case` and checks every invariant, panicking (for proptest to shrink) on the first
/// broken one.
fn check(case: &Case) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(check_on_runtime(case));
}

async fn check_on_runtime(case: &Case) {
    let calls = script(case);
    let journal = Shared::default();
    let model = Phased(Arc::new(Mutex::new(ScriptedModel::new(scripted_turns(
        case, &calls,
    )))));
    // Each distinct id's place in the run, for the plans (cycled).
    let mut order: Vec<&str> = Vec::new();
    for call in calls.iter().flatten() {
        if !order.contains(&call.id.as_str()) {
            order.push(&call.id);
        }
    }
    let mut builder = AgentSession::builder(model.clone()).with_model("m");
    for (number, plan) in case.hooks.iter().enumerate() {
        let pick = |choices: &[Before]| -> HashMap<String, Before> {
            order
                .iter()
                .enumerate()
                .map(|(i, id)| ((*id).to_owned(), choices[i % choices.len()]))
                .collect()
        };
        let after = order
            .iter()
            .enumerate()
            .map(|(i, id)| ((*id).to_owned(), plan.after[i % plan.after.len()]))
            .collect();
        builder = builder.with_hook(PlannedHook {
            number: number + 1,
            before: pick(&plan.before),
            after,
            journal: journal.clone(),
        });
    }
    if let Some(answers) = &case.approval {
        builder = builder.with_approval(PlannedApproval {
            answers: order
                .iter()
                .enumerate()
                .map(|(i, id)| ((*id).to_owned(), answers[i % answers.len()]))
                .collect(),
            journal: journal.clone(),
        });
    }
    let sink = journal.clone();
    let mut shed = ToolShed::new().tools(ToolPreset::agent(SubAgentConfig::new(
        NeverAnswers,
        "child",
    )));
    for name in BODY_TOOLS {
        shed = shed.tool(body_tool(name, &journal));
    }
    if let Some(retries) = case.retries {
        builder = builder.with_retry_policy(
            ToolRetryConfig::fixed(retries, RETRY_WAIT).with_jitter(Jitter::None),
        );
    }
    if let Some(seconds) = case.turn_deadline {
        builder = builder.with_turn_deadline(Duration::from_secs(seconds));
    }
    if let Some(max_turns) = case.max_turns {
        builder = builder.with_max_turns(max_turns);
    }
    let session = builder
        .with_toolshed(shed)
        .with_event_handler(move |event: &AgentEvent| {
            // The run's own events: its sub-agents' (`StartsChild`) come from their tasks,
            // at times of the scheduler's, and are checked in `subagent_events`.
            if matches!(event, AgentEvent::SubAgent { .. }) {
                return;
            }
            let mut journal = sink.lock();
            journal.events.push(event.clone());
            let at = journal.events.len() - 1;
            if journal.cancel_at == Some(at)
                && let Some(token) = journal.cancel.take()
            {
                token.cancel();
                journal.happenings.push(Happening::Cancel { at });
            }
            if journal.drop_at == Some(at) {
                journal.drop_signal.notify_one();
            }
        })
        .build()
        .expect("the session builds");
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);

    // The first run: `send`, a run with a token the test cancels at an event, or a `send`
    // dropped after an event (`None` when it was).
    let ended = match case.first {
        FirstRun::Send => Some(session.send("go").await),
        FirstRun::CancelAt(at) => {
            let token = CancellationToken::new();
            {
                let mut journal = journal.lock();
                journal.cancel_at = Some(at);
                journal.cancel = Some(token.clone());
            }
            Some(session.run_with_cancellation("go", token).await)
        }
        FirstRun::DropAt(at) => {
            let signal = {
                let mut journal = journal.lock();
                journal.drop_at = Some(at);
                Arc::clone(&journal.drop_signal)
            };
            tokio::select! {
                biased;
                () = signal.notified() => None,
                ended = session.send("go") => Some(ended),
            }
        }
    };
    assert_eq!(
        journal.lock().live,
        0,
        "a tool body still runs after the first run returned or was dropped"
    );
    let first = std::mem::take(&mut *journal.lock());
    let children = children_started(&session).await;
    let first_run = match &ended {
        None => {
            // Dropped: the kept conversation is as it was (empty), and the children stop.
            assert_eq!(
                session.transcript().await,
                [],
                "a dropped send keeps nothing"
            );
            assert_children(&session, &children, true).await;
            None
        }
        Some(ended) => {
            let run = match ended {
                Ok(run) => run,
                Err(error) => error.run().expect("an ending error carries its run"),
            };
            check_transcript(&calls, run);
            check_events(case, &calls, &first, run);
            check_tools_ran(case, &calls, &first, run);
            check_ending(case, &first, ended);
            let abandoned = matches!(
                ended,
                Err(AgenticError::Cancelled { .. }
                    | AgenticError::Stopped { .. }
                    | AgenticError::Panicked { .. })
            );
            assert_children(&session, &children, abandoned).await;
            Some(run)
        }
    };

    // The second `send` on the same session, with a plain answer.
    let again = ScriptedModel::new([ScriptedTurn::text("again")]);
    model.replace(again.clone());
    let second = session
        .send("go on")
        .await
        .unwrap_or_else(|error| panic!("the second send failed: {error}"));
    assert_eq!(second.text, "again");
    let request = again
        .requests()
        .pop()
        .expect("the second send asked the model");
    match (case.first, first_run) {
        (FirstRun::CancelAt(_), _) => {}
        // It went on from the first run's transcript.
        (_, Some(run)) => assert_eq!(
            &request.messages[..run.transcript.len()],
            &run.transcript[..],
            "the second send starts from the first run's transcript"
        ),
        (_, None) => assert_eq!(
            request.messages,
            [Message::user("go on")],
            "the send after a dropped one starts from the conversation before it"
        ),
    }
    assert_every_call_answered(&request.messages);
    assert_renders_paired(&request.messages);
    let later = std::mem::take(&mut *journal.lock());
    assert!(
        later.ran.is_empty() && later.before.is_empty() && later.happenings.is_empty(),
        "the second send ran nothing"
    );
}

/// Runs the `agent` command `arguments` on `session`'s manager, as the model would.
async fn agent_command(session: &AgentSession, arguments: Value) -> Result<String, ToolError> {
    let request = ToolCallRequest::new("probe", "agent", arguments.try_into().expect("an object"));
    session
        .tool_manager()
        .execute_one(&request)
        .await
        .map(|result| result.content.to_text())
}

/// The ids of the sub-agents started on `session` (numbered from 1, in order).
async fn children_started(session: &AgentSession) -> Vec<String> {
    let mut ids = Vec::new();
    loop {
        let id = format!("agent-{}", ids.len() + 1);
        if agent_command(session, json!({"command": "check", "id": id}))
            .await
            .is_err()
        {
            return ids;
        }
        ids.push(id);
    }
}

/// Every child in `children` is stopped (waiting for it to end, on the paused clock), when
/// `stopped`; else each still runs (its model never answers).
async fn assert_children(session: &AgentSession, children: &[String], stopped: bool) {
    for id in children {
        if stopped {
            let result = agent_command(
                session,
                json!({"command": "result", "id": id, "wait_ms": 60_000}),
            )
            .await;
            assert!(
                result
                    .as_ref()
                    .is_err_and(|e| e.to_string().contains("was stopped before it finished")),
                "sub-agent {id} of an abandoned run is stopped: {result:?}"
            );
        } else {
            let report = agent_command(session, json!({"command": "check", "id": id}))
                .await
                .expect("check on a child");
            assert!(
                report.contains("\"running\""),
                "sub-agent {id} of a run that ended so is left running: {report}"
            );
        }
    }
}

/// Invariant 1: each answer the model gave is in the transcript with its calls, each call
/// has one result right after, the records list every call, and every format pairs them.
fn check_transcript(calls: &[Vec<Scripted>], run: &AgentRun) {
    let transcript = &run.transcript;
    assert_every_call_answered(transcript);
    assert_renders_paired(transcript);
    let made: Vec<Vec<&str>> = transcript
        .iter()
        .filter(|m| matches!(m, Message::Assistant { calls, .. } if !calls.is_empty()))
        .map(|m| m.calls().iter().map(|c| c.id.as_str()).collect())
        .collect();
    let scripted: Vec<Vec<&str>> = calls
        .iter()
        .take(made.len())
        .map(|answer| answer.iter().map(|c| c.id.as_str()).collect())
        .collect();
    assert_eq!(made, scripted, "the transcript holds the answers as made");
    let recorded: Vec<&str> = run.tool_calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(
        recorded,
        made.concat(),
        "one record per call, in the order made"
    );
}

/// A rendered conversation entry's part, as far as pairing goes.
#[derive(Debug, PartialEq)]
enum Part {
    Call(String),
    Result(String),
    Other,
}

/// The transcript in `provider`'s format, as the HTTP clients render it.
fn render(provider: Provider, transcript: &[Message]) -> Vec<Value> {
    let mut rendered = Vec::new();
    for message in transcript {
        match message {
            Message::User { text, images } => {
                rendered.push(provider.render_user_with_images(text, images))
            }
            Message::Assistant { text, calls, .. } => {
                rendered.extend(provider.render_assistant(
                    text.as_deref(),
                    calls.iter().map(|call| AssistantCall {
                        as_written: call.as_written.as_deref(),
                        ..AssistantCall::new(&call.id, &call.name, call.arguments.as_value())
                    }),
                ));
            }
            Message::ToolResults { results } => {
                let outcomes: Vec<Result<ToolCallResult, ToolError>> =
                    results.iter().map(|r| Ok(r.result.clone())).collect();
                rendered.extend(provider.render_results(results.iter().zip(&outcomes).map(
                    |(r, result)| CallReply {
                        id: &r.call_id,
                        name: &r.name,
                        result,
                    },
                )));
            }
            other => panic!("an unexpected message: {other:?}"),
        }
    }
    rendered
}

/// The calls and results of `entries` in order, each named as `provider` pairs them (by id;
/// Gemini by name and the id where it writes one; the text format by name, calls carrying no
/// id).
fn parts(provider: Provider, entries: &[Value]) -> Vec<Part> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let mut parts = Vec::new();
    for entry in entries {
        match provider {
            Provider::OpenAiChat => {
                if entry["role"] == "tool" {
                    parts.push(Part::Result(text(&entry["tool_call_id"])));
                    continue;
                }
                parts.push(Part::Other);
                for call in entry["tool_calls"].as_array().into_iter().flatten() {
                    parts.push(Part::Call(text(&call["id"])));
                }
            }
            Provider::OpenAiResponses => parts.push(match entry["type"].as_str() {
                Some("function_call") => Part::Call(text(&entry["call_id"])),
                Some("function_call_output") => Part::Result(text(&entry["call_id"])),
                _ => Part::Other,
            }),
            Provider::Anthropic => {
                parts.push(Part::Other);
                for block in entry["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("tool_use") => parts.push(Part::Call(text(&block["id"]))),
                        Some("tool_result") => {
                            parts.push(Part::Result(text(&block["tool_use_id"])));
                        }
                        _ => parts.push(Part::Other),
                    }
                }
            }
            Provider::Gemini => {
                parts.push(Part::Other);
                for part in entry["parts"].as_array().into_iter().flatten() {
                    let key =
                        |call: &Value| format!("{}#{}", text(&call["name"]), text(&call["id"]));
                    if let Some(call) = part.get("functionCall") {
                        parts.push(Part::Call(key(call)));
                    } else if let Some(response) = part.get("functionResponse") {
                        parts.push(Part::Result(key(response)));
                    } else {
                        parts.push(Part::Other);
                    }
                }
            }
            Provider::Text => {
                parts.push(Part::Other);
                let content = text(&entry["content"]);
                let blocks = |tag: &str| -> Vec<String> {
                    content
                        .split(&format!("<{tag}>"))
                        .skip(1)
                        .map(|block| {
                            let body = block.split(&format!("</{tag}>")).next().unwrap_or("");
                            let value: Value = serde_json::from_str(body.trim())
                                .unwrap_or_else(|_| panic!("a {tag} block of JSON: {body}"));
                            text(&value["name"])
                        })
                        .collect()
                };
                parts.extend(blocks("tool_call").into_iter().map(Part::Call));
                parts.extend(blocks("tool_response").into_iter().map(Part::Result));
            }
            other => panic!("a provider this test does not know: {other}"),
        }
    }
    parts
}

/// In every provider format, each run of calls is followed at once by the results of the
/// same calls in the same order, and no result follows anything else.
fn assert_renders_paired(transcript: &[Message]) {
    for provider in Provider::ALL {
        let rendered = render(provider, transcript);
        let parts = parts(provider, &rendered);
        let mut index = 0;
        while index < parts.len() {
            match &parts[index] {
                Part::Other => index += 1,
                Part::Result(key) => panic!(
                    "{provider}: the result {key} answers no call just before it: {rendered:#?}"
                ),
                Part::Call(_) => {
                    let mut called = Vec::new();
                    while let Some(Part::Call(key)) = parts.get(index) {
                        called.push(key);
                        index += 1;
                    }
                    // Entries that hold nothing to pair (an empty wrapper) may stand between.
                    while parts.get(index) == Some(&Part::Other) {
                        index += 1;
                    }
                    let mut answered = Vec::new();
                    while let Some(Part::Result(key)) = parts.get(index) {
                        answered.push(key);
                        index += 1;
                    }
                    assert_eq!(
                        called, answered,
                        "{provider}: calls paired with their results: {rendered:#?}"
                    );
                }
            }
        }
    }
}

/// What an event says of one call.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CallEvent {
    Started,
    Finished,
    Denied(DeniedBy),
    NotRun(NotRunReason),
}

/// Invariant 2, answer by answer: each call has one `Started` and one `Finished` after it,
/// or one `Denied` or `NotRun`, decided before the answer's calls start, for a reason that
/// happened; nothing names a call the answer did not make; `after_tool` ran for the calls
/// that started, and only for them; no hook saw a call it must not see.
fn check_events(case: &Case, calls: &[Vec<Scripted>], journal: &Journal, run: &AgentRun) {
    let events = &journal.events;
    let happened_before = |event: usize, what: fn(&Happening) -> bool| {
        journal
            .happenings
            .iter()
            .any(|h| what(h) && h.before_event(event))
    };
    // The events of each answer, from its `ModelResponse` to the next request.
    let mut answers: Vec<(usize, Vec<(usize, &AgentEvent)>)> = Vec::new();
    for (at, event) in events.iter().enumerate() {
        match event {
            AgentEvent::ModelResponse {
                turn, calls: count, ..
            } => {
                let made = calls.get(turn - 1).map_or(0, Vec::len);
                assert_eq!(
                    *count, made,
                    "ModelResponse {turn} counts the answer's calls"
                );
                answers.push((*turn, Vec::new()));
            }
            AgentEvent::ModelRequest { .. } => {}
            _ => answers
                .last_mut()
                .unwrap_or_else(|| panic!("event {at} before any answer: {events:#?}"))
                .1
                .push((at, event)),
        }
    }
    assert_eq!(
        answers.len(),
        run.model_calls,
        "one ModelResponse per model call"
    );
    // An answer that came with the cancellation is dropped whole (its tokens reported by
    // its `ModelResponse`): it is not in the transcript, and its calls have no events.
    let kept = run
        .transcript
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count();
    let mut started_ids: Vec<&str> = Vec::new();
    for (turn, list) in &answers {
        if *turn > kept {
            assert!(
                *turn == answers.len() && list.is_empty(),
                "answer {turn}, dropped, is the last and has no events after it: {events:#?}"
            );
            assert!(
                journal
                    .happenings
                    .iter()
                    .any(|h| matches!(h, Happening::Cancel { .. })),
                "only a cancellation drops an answer: {events:#?}"
            );
            continue;
        }
        let made: &[Scripted] = calls.get(turn - 1).map_or(&[], Vec::as_slice);
        let cut_off = case.answers.get(turn - 1).is_some_and(|a| a.cut_off);
        let mut per_id: HashMap<&str, Vec<(usize, CallEvent)>> = HashMap::new();
        let mut last_call_event = None;
        for &(at, event) in list {
            let (id, what) = match event {
                AgentEvent::ToolCallStarted { call_id, .. } => (call_id, CallEvent::Started),
                AgentEvent::ToolCallFinished { call_id, .. } => (call_id, CallEvent::Finished),
                AgentEvent::ToolCallDenied { call_id, by, .. } => (call_id, CallEvent::Denied(*by)),
                AgentEvent::ToolCallNotRun { call_id, why, .. } => {
                    (call_id, CallEvent::NotRun(*why))
                }
                AgentEvent::ToolCallProgress(progress) => {
                    let started = per_id
                        .get(progress.call_id.as_str())
                        .is_some_and(|e| e.iter().any(|(_, what)| *what == CallEvent::Started));
                    assert!(started, "progress of a call not started: {events:#?}");
                    continue;
                }
                AgentEvent::TurnFinished { turn: finished, .. } => {
                    assert_eq!(finished, turn, "{events:#?}");
                    // A stopped, cancelled or panicked run does not finish its turn.
                    assert!(
                        !journal.happenings.iter().any(|h| h.before_event(at)),
                        "TurnFinished {turn} sent after {:?}: {events:#?}",
                        journal.happenings
                    );
                    assert!(
                        last_call_event.is_none_or(|last| last < at),
                        "TurnFinished after every call event: {events:#?}"
                    );
                    continue;
                }
                other => panic!("an unexpected event inside answer {turn}: {other:?}"),
            };
            let Some(call) = made.iter().find(|c| c.id == *id) else {
                panic!("event {at} names call {id}, which answer {turn} did not make: {events:#?}");
            };
            last_call_event = Some(at);
            // The reason given happened.
            match what {
                CallEvent::Started => {
                    assert!(
                        !cut_off && !matches!(call.kind, CallKind::Unreadable),
                        "call {id} of a cut-off answer or unreadable started: {events:#?}"
                    );
                    started_ids.push(id);
                }
                CallEvent::Finished => {}
                CallEvent::Denied(DeniedBy::Hook) => assert!(
                    journal
                        .before
                        .iter()
                        .any(|(_, seen, said)| seen == id && *said == Before::Deny),
                    "call {id} reported denied by a hook that did not deny it"
                ),
                CallEvent::Denied(DeniedBy::Approval) => assert!(
                    journal.approvals.contains(&(id.clone(), Approve::No)),
                    "call {id} reported denied by an approval that did not deny it"
                ),
                CallEvent::Denied(other) => panic!("denied by {other:?}?"),
                CallEvent::NotRun(why) => {
                    let justified = match why {
                        NotRunReason::Unreadable => made
                            .iter()
                            .any(|c| c.id == *id && matches!(c.kind, CallKind::Unreadable)),
                        NotRunReason::RepeatedId => made.iter().filter(|c| c.id == *id).count() > 1,
                        NotRunReason::CutOff => cut_off,
                        NotRunReason::Cancelled => {
                            happened_before(at, |h| matches!(h, Happening::Cancel { .. }))
                        }
                        NotRunReason::Stopped => {
                            happened_before(at, |h| matches!(h, Happening::Stop { .. }))
                        }
                        NotRunReason::Panicked => {
                            happened_before(at, |h| matches!(h, Happening::Panic { .. }))
                        }
                        other => panic!("a reason this test does not know: {other:?}"),
                    };
                    assert!(
                        justified,
                        "call {id} not run ({why:?}) for nothing that happened: {events:#?}"
                    );
                }
            }
            per_id.entry(id).or_default().push((at, what));
        }
        let mut decided_last = None;
        let mut started_first = None;
        for call in made {
            let times = made.iter().filter(|c| c.id == call.id).count();
            let seen = per_id.get(call.id.as_str()).cloned().unwrap_or_default();
            let of = |wanted: fn(&CallEvent) -> bool| -> Vec<usize> {
                seen.iter()
                    .filter(|(_, what)| wanted(what))
                    .map(|(at, _)| *at)
                    .collect()
            };
            let started = of(|w| *w == CallEvent::Started);
            let finished = of(|w| *w == CallEvent::Finished);
            let decided = of(|w| matches!(w, CallEvent::Denied(_) | CallEvent::NotRun(_)));
            assert_eq!(
                started.len() + decided.len(),
                times,
                "answer {turn}: call {} has one Started, Denied or NotRun per time made: {events:#?}",
                call.id
            );
            assert_eq!(
                finished.len(),
                started.len(),
                "answer {turn}: call {} is finished once per start: {events:#?}",
                call.id
            );
            for (start, finish) in started.iter().zip(&finished) {
                assert!(
                    start < finish,
                    "call {} finished before it started",
                    call.id
                );
            }
            decided_last = decided.iter().copied().chain(decided_last).max();
            started_first = started.iter().copied().chain(started_first).min();
        }
        if let (Some(decided), Some(started)) = (decided_last, started_first) {
            assert!(
                decided < started,
                "answer {turn}: denials and calls not run are reported before calls start: {events:#?}"
            );
        }
    }

    // `after_tool`: each hook once per started call, and only for those.
    for (number, _) in case.hooks.iter().enumerate() {
        let mut seen: Vec<&str> = journal
            .after
            .iter()
            .filter(|(hook, _)| *hook == number + 1)
            .map(|(_, id)| id.as_str())
            .collect();
        seen.sort_unstable();
        let mut started = started_ids.clone();
        started.sort_unstable();
        assert_eq!(
            seen,
            started,
            "after_tool hook #{} runs once for each started call",
            number + 1
        );
    }
    // `before_tool` never sees an unreadable call, nor one of a cut-off answer; each hook
    // sees a call once at most. The approval is asked about destructive calls only.
    let all: Vec<(&Scripted, bool)> = calls
        .iter()
        .zip(&case.answers)
        .flat_map(|(calls, answer)| calls.iter().map(move |call| (call, answer.cut_off)))
        .collect();
    for (number, id, _) in &journal.before {
        let (call, cut_off) = all
            .iter()
            .find(|(call, _)| call.id == *id)
            .unwrap_or_else(|| panic!("a hook saw call {id}, never made"));
        assert!(
            !cut_off && !matches!(call.kind, CallKind::Unreadable),
            "before_tool saw call {id}, unreadable or cut off"
        );
        let times = journal
            .before
            .iter()
            .filter(|(n, seen, _)| n == number && seen == id)
            .count();
        assert_eq!(times, 1, "hook #{number} saw call {id} {times} times");
    }
    for (id, _) in &journal.approvals {
        let asked = all.iter().find(|(call, _)| call.id == *id);
        assert!(
            asked.is_some_and(|(call, _)| call.name == "wipe"),
            "the approval was asked about {id}, not a destructive call"
        );
    }
}

/// Invariant 3: a tool body ran only for a call that started, that no hook or approval
/// refused, with valid arguments (those recorded), never once the run was cancelled, as
/// many times as its record says and at most 1 + the policy's retries (once for a tool whose
/// errors are not retried); when nothing ended the run, every started call with valid
/// arguments ran, a flaky call as many times as it needed (its result an error when that
/// was more than the policy allows), and a slow call the turn deadline cut is an error.
fn check_tools_ran(case: &Case, calls: &[Vec<Scripted>], journal: &Journal, run: &AgentRun) {
    let retries = case.retries.unwrap_or(0);
    let started: Vec<(&str, &str)> = journal
        .events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallStarted { call_id, name } => {
                Some((call_id.as_str(), name.as_str()))
            }
            _ => None,
        })
        .collect();
    for ran in &journal.ran {
        let id = ran.call_id.as_str();
        assert!(
            !ran.cancelled_at_start,
            "{} ran for call {id} after the run was cancelled",
            ran.tool
        );
        assert!(
            valid_arguments(&ran.tool, &ran.arguments),
            "{} ran for call {id} with invalid arguments {}",
            ran.tool,
            ran.arguments
        );
        assert!(
            started.contains(&(id, ran.tool.as_str())),
            "{} ran for call {id}, never reported started",
            ran.tool
        );
        let refused = journal.before.iter().any(|(_, seen, said)| {
            seen == id && matches!(said, Before::Deny | Before::Stop | Before::Panic)
        }) || journal
            .approvals
            .iter()
            .any(|(seen, said)| seen == id && *said != Approve::Yes);
        assert!(
            !refused,
            "{} ran for call {id}, which was refused",
            ran.tool
        );
        let times = journal.ran.iter().filter(|r| r.call_id == id).count();
        // Only `flaky`'s network errors are retried (`fails` and `boom` end in execution
        // errors).
        let most = if ran.tool == "flaky" { 1 + retries } else { 1 };
        assert!(
            times <= most as usize,
            "call {id} to {} ran {times} times, at most {most} allowed",
            ran.tool
        );
        let record = run
            .tool_calls
            .iter()
            .find(|record| record.call_id == id)
            .expect("a record of each call");
        assert_eq!(
            record.arguments.as_value(),
            &ran.arguments,
            "call {id} is recorded with the arguments it ran with"
        );
        assert_eq!(
            record.attempts as usize, times,
            "call {id} is recorded with as many attempts as it ran: {record:?}"
        );
    }
    // Each record: attempts only for calls whose body ran (body tools), or which started.
    for record in &run.tool_calls {
        let id = record.call_id.as_str();
        let body_runs = journal.ran.iter().filter(|r| r.call_id == id).count();
        if BODY_TOOLS.contains(&record.name.as_str()) && record.attempts > 0 {
            // A call repeated under the same id is recorded once more, unrun.
            let first_of_id = run
                .tool_calls
                .iter()
                .position(|r| r.call_id == id)
                .is_some_and(|first| std::ptr::eq(&run.tool_calls[first], record));
            assert!(
                first_of_id && body_runs == record.attempts as usize,
                "call {id} recorded with {} attempts, its body ran {body_runs} times",
                record.attempts
            );
        }
    }
    if journal.happenings.is_empty() {
        for (id, name) in &started {
            let record = run
                .tool_calls
                .iter()
                .find(|record| record.call_id == *id)
                .expect("a record of each call");
            let should_run =
                BODY_TOOLS.contains(name) && valid_arguments(name, record.arguments.as_value());
            let ran = journal.ran.iter().any(|r| r.call_id == *id);
            assert_eq!(
                ran, should_run,
                "with nothing ending the run, started call {id} to {name} ran: {ran}; \
                 calls: {calls:?}"
            );
            if !should_run {
                continue;
            }
            let finished = journal
                .events
                .iter()
                .find_map(|event| match event {
                    AgentEvent::ToolCallFinished {
                        call_id,
                        is_error,
                        summary,
                        ..
                    } if call_id == id => Some((*is_error, summary.as_str())),
                    _ => None,
                })
                .expect("a started call is finished");
            if *name == "flaky" {
                let failures = record.arguments.as_value()["fail"].as_u64().unwrap_or(0);
                let needed = failures.min(u64::from(retries)) + 1;
                // Attempts start `RETRY_WAIT` apart from the turn's start; one that could
                // start only at or after the turn deadline is not made.
                let in_time = (0..needed)
                    .take_while(|&k| {
                        case.turn_deadline.is_none_or(|seconds| {
                            RETRY_WAIT * u32::try_from(k).expect("a few")
                                < Duration::from_secs(seconds)
                        })
                    })
                    .count() as u64;
                assert_eq!(
                    u64::from(record.attempts),
                    in_time,
                    "flaky call {id} failing {failures} times ran as often as it needed and \
                     had time for, with {retries} retries and turn deadline {:?}: {record:?}",
                    case.turn_deadline
                );
                assert_eq!(
                    finished.0,
                    failures >= in_time,
                    "flaky call {id} failing {failures} times, run {in_time} times, ended: \
                     {finished:?}"
                );
                assert!(
                    !finished.0 || finished.1.contains("connection reset"),
                    "a flaky call whose retries ran out ends with its last error: {finished:?}"
                );
            }
            if *name == "slow" {
                let cut = case
                    .turn_deadline
                    .is_some_and(|seconds| Duration::from_secs(seconds) < SLOW_SLEEP);
                assert_eq!(
                    finished.0, cut,
                    "slow call {id}, turn deadline {:?}: {finished:?}",
                    case.turn_deadline
                );
                assert!(
                    !cut || finished.1.contains("deadline"),
                    "a call the turn deadline cut says so: {finished:?}"
                );
            }
        }
    }
}

/// Invariant 4: the run ended as what happened says. A panic (a hook's or the approval's)
/// ends it `Panicked`, naming the first; otherwise the first of a stop and a cancellation
/// decides; with neither, `Ok`. A cancellation that came with the final answer (as its
/// `ModelResponse` was delivered) may leave the run `Ok`: the answer was in.
fn check_ending(case: &Case, journal: &Journal, ended: &Result<AgentRun, AgenticError>) {
    let got = ending(ended);
    let first_panic = journal.happenings.iter().find_map(|h| match h {
        Happening::Panic { during, .. } => Some(during),
        _ => None,
    });
    let expected = match (first_panic, journal.happenings.first()) {
        (Some(_), _) => Ending::Panicked,
        // The script needs one model call more than it has answers with calls.
        (None, None)
            if case
                .max_turns
                .is_some_and(|most| case.answers.len() >= most) =>
        {
            Ending::MaxTurns
        }
        (None, None) => Ending::Ok,
        (None, Some(Happening::Stop { .. })) => Ending::Stopped,
        (None, Some(_)) => Ending::Cancelled,
    };
    let with_final_answer = |at: usize| {
        at + 1 == journal.events.len()
            && matches!(
                journal.events[at],
                AgentEvent::ModelResponse { calls: 0, .. }
            )
    };
    let allowed = got == expected
        || (expected == Ending::Cancelled
            && got == Ending::Ok
            && matches!(journal.happenings[..], [Happening::Cancel { at }] if with_final_answer(at)));
    assert!(
        allowed,
        "the run ended {got:?} ({ended:?}), but {:?} happened: expected {expected:?}",
        journal.happenings
    );
    match ended {
        Err(AgenticError::Panicked { during, .. }) => {
            assert_eq!(Some(during), first_panic, "Panicked names the first panic");
        }
        Err(AgenticError::Stopped { reason, .. }) => {
            let first_stop = journal.happenings.iter().find_map(|h| match h {
                Happening::Stop { reason, .. } => Some(reason),
                _ => None,
            });
            assert_eq!(Some(reason), first_stop, "Stopped gives the stop's reason");
        }
        Err(AgenticError::MaxTurns { max_turns, run }) => {
            assert_eq!(Some(*max_turns), case.max_turns, "MaxTurns names the limit");
            assert_eq!(
                run.model_calls, *max_turns,
                "the limit's model calls were made"
            );
        }
        _ => {}
    }
}

proptest! {
    // Each case builds a session and runs two sends on a paused clock: a few seconds in all.
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn agent_runs_keep_their_invariants(case in case()) {
        check(&case);
    }
}

/// A case of one answer with `calls`, under `retries` and `turn_deadline`, its first run
/// made as `first`.
fn one_answer(
    calls: Vec<CallKind>,
    first: FirstRun,
    retries: Option<u32>,
    turn_deadline: Option<u64>,
) -> Case {
    Case {
        answers: vec![Answer {
            text: false,
            calls,
            cut_off: false,
        }],
        final_cut_off: false,
        hooks: Vec::new(),
        approval: None,
        first,
        retries,
        turn_deadline,
        max_turns: None,
    }
}

/// Two retries 700 ms apart under a 1 s turn deadline: the second could start only after
/// it, so it is not made, and the call ends with its own network error (not the deadline's,
/// as it would were the retry made and cut).
#[test]
fn a_retry_the_turn_deadline_leaves_no_time_for_is_not_made() {
    check(&one_answer(
        vec![CallKind::Flaky(2)],
        FirstRun::Send,
        Some(2),
        Some(1),
    ));
}

/// A `send` dropped while a slow call runs, after a call started a sub-agent: the slow call
/// is dropped, the child stopped, and the next `send` starts from the conversation before.
#[test]
fn a_dropped_send_stops_its_calls_and_its_sub_agents() {
    check(&one_answer(
        vec![CallKind::StartsChild, CallKind::Slow],
        FirstRun::DropAt(2),
        None,
        None,
    ));
}
