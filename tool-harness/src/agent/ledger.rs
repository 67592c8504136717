//! [`RunLedger`]: the tokens a run's sub-agents spend, counted in the run that caused them;
//! with it, where the run's events go besides its session's handlers: the run's own event
//! stream, if its caller asked for one, and the runs above it, if it is a sub-agent's.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use toolsmith_core::{CancellationToken, SessionState, ToolCallContext};

use super::AgentSession;
use super::events::{AgentEvent, AgentEventHandler, deliver};
use super::run_events::EventStream;
use crate::model::Usage;

/// How many runs a run may be nested under (a run made by a tool call of a run made by a
/// tool call of ..., or a sub-agent started by one): a run deeper than this is refused before
/// its first model call ([`AgenticError::NestedTooDeep`](super::AgenticError::NestedTooDeep)).
///
/// A model that calls an [`AgentTool`](super::AgentTool) whose agent can reach itself (or a
/// long chain of them) would nest runs as deep as it likes, each level a model call's cost
/// at least, and the caller waiting on all of them. (Each nested run is on a task of its own,
/// so the depth costs no stack: polled inside their callers', ten levels overflowed a 2 MB
/// thread in a debug build.) The bound also keeps a sub-agent's [`AgentEvent::SubAgent`]
/// nesting, and what each of its events and tokens walks up, short.
pub const MAX_NESTED_RUNS: usize = 8;

/// A session's event handlers, shared by its runs.
pub(crate) type Handlers = Arc<[Arc<dyn AgentEventHandler>]>;

/// The tokens of one run's descendants: the runs its tool calls made or started (an
/// [`AgentTool`](super::AgentTool) call, a sub-agent of the `agent` group, any session run
/// inside one of its calls), theirs, and so on.
///
/// Each run has its own, lent to each of its tool calls in the call's
/// [`ToolCallContext`] ([`call_values`](Self::call_values)); a run made inside a call, or
/// started by one, takes the ledger it finds there as its parent and adds every token it
/// spends to it and to the parent's ancestors, as it spends them. So tokens count in the
/// run whose call caused them and in no other (two runs of one session at once each count
/// their own), a failed, stopped or dropped sub-agent counts what it spent, and the tokens
/// of a run made by a call of a call count in every run above it.
///
/// The same link carries the sub-agent's events up ([`send`](Self::send)): each run above
/// gets them as [`AgentEvent::SubAgent`], wrapped once a level, through its session's
/// handlers and, while it lasts, its own stream.
pub(crate) struct RunLedger {
    descendants: Mutex<Usage>,
    /// The run this one's run counts in, when it is a sub-agent's.
    parent: Option<ParentRun>,
    /// Fired when the run ends cancelled, stopped by a hook, by a panic or by its token
    /// budget (whose bound the children would pass otherwise), or is dropped: the
    /// background sub-agents its calls started stop with it (one that ends with an answer
    /// leaves them running, for a later run to collect).
    abandoned: Mutex<Abandoned>,
    /// Where the run's events go besides the session's handlers, when its caller asked for
    /// them ([`AgentSession::events_of`]).
    events: Option<EventStream>,
    /// Whether the run is still going on: once it has ended, its stream takes no more
    /// events, its sub-agents' or its tools' (a background child, or a tool's work on a task
    /// of its own, may outlive it; the stream ends with the run, and a stream kept unread
    /// would otherwise queue them for ever).
    streaming: AtomicBool,
    /// The handlers of the run's session, which hear its sub-agents' events; `None` when it
    /// has none (and for a run that lends nothing to calls, so is nobody's parent).
    handlers: Option<Handlers>,
    /// Whether a run above this one hears its events: someone listens there (handlers or a
    /// stream), or further up. Nothing is built or sent up otherwise.
    heard_above: bool,
    /// The run's token budget, when its session has one: it bounds the runs below it too
    /// ([`caller_over_budget`](Self::caller_over_budget)).
    budget: Option<u64>,
    /// The tokens of the run's own model calls so far, counted only under a budget (its
    /// sub-agents compare it with the budget; the run itself counts in its `AgentRun`).
    own_tokens: AtomicU64,
    /// How many runs this one is nested under (0: none).
    depth: usize,
}

impl std::fmt::Debug for RunLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLedger")
            .field("descendants", &self.descendants)
            .field("parent", &self.parent)
            .field("streams", &self.events.is_some())
            .field("handlers", &self.handlers.as_ref().map_or(0, |h| h.len()))
            .field("heard_above", &self.heard_above)
            .finish_non_exhaustive()
    }
}

/// The run a sub-agent's run counts in, and the name it knows the sub-agent by.
#[derive(Debug, Clone)]
pub(crate) struct ParentRun {
    ledger: Arc<RunLedger>,
    /// The sub-agent's name in the parent run's events ([`AgentEvent::SubAgent`]'s `agent`).
    agent: Arc<str>,
}

/// Where a run starts from: the run whose tool call it is made in, if any (its tokens count
/// there, its events go up there), and the event stream its caller offered it, if any.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunOrigin {
    pub(crate) parent: Option<ParentRun>,
    pub(crate) events: Option<EventStream>,
    /// Where the run leaves its ledger and span for the typed answer's exchange that
    /// follows it ([`leaving_its_ledger`](Self::leaving_its_ledger)).
    left: Option<Arc<OnceLock<LeftRun>>>,
}

/// What a run leaves to the typed answer's exchange that follows it: its ledger, in which
/// the exchange's calls count, and its `invoke_agent` span, which the exchange's model
/// calls sit under and which says how the typed run ended.
#[derive(Debug, Clone)]
pub(crate) struct LeftRun {
    pub(crate) ledger: Arc<RunLedger>,
    pub(crate) span: tracing::Span,
}

impl RunOrigin {
    /// How many runs a run starting from here is nested under.
    pub(crate) fn depth(&self) -> usize {
        self.parent
            .as_ref()
            .map_or(0, |parent| parent.ledger.depth + 1)
    }

    /// The origin of a run of `session` starting on this task: the run whose call is
    /// running here, which knows it by the call's id, and the stream a
    /// [`RunEvents`](super::RunEvents) polling here offers the session's runs (taken: a run
    /// typed or not takes it once, at its start).
    pub(crate) fn here(session: &AgentSession) -> Self {
        let parent = ToolCallContext::current().and_then(|context| {
            let ledger = context.value::<RunLedger>()?;
            Some(ParentRun {
                ledger,
                agent: Arc::from(context.call_id()),
            })
        });
        Self {
            parent,
            events: EventStream::claim(session),
            left: None,
        }
    }

    /// This origin, its run leaving its ledger and span behind
    /// ([`ledger_slot`](Self::ledger_slot)) for the typed answer's exchange that follows it
    /// (`send_as`): the exchange's model calls are the run's, counted where the run's
    /// sub-agents look for its budget (a child left working after the run's text would spend
    /// on past the budget the exchange spent), and traced in the run's span.
    pub(crate) fn leaving_its_ledger(mut self) -> Self {
        self.left = Some(Arc::default());
        self
    }

    /// Where a run starting from this origin is to leave its ledger and span, if it is:
    /// taken out before the ledger is built from the origin, and filled once it is built.
    pub(crate) fn ledger_slot(&mut self) -> Option<Arc<OnceLock<LeftRun>>> {
        self.left.take()
    }

    /// The ledger and span the run from this origin left, if it asked to and has started.
    pub(crate) fn left_run(&self) -> Option<LeftRun> {
        self.left.as_ref()?.get().cloned()
    }

    /// The origin of a run that counts in `parent`'s run, which knows it as `agent`, and
    /// streams nowhere of its own (a sub-agent started on a task of its own).
    pub(crate) fn under(parent: Option<Arc<RunLedger>>, agent: &str) -> Self {
        Self {
            parent: parent.map(|ledger| ParentRun {
                ledger,
                agent: Arc::from(agent),
            }),
            events: None,
            left: None,
        }
    }
}

/// The token a run's background children follow, made when the first one starts: most runs
/// start none, and a token is an allocation.
#[derive(Debug, Default)]
struct Abandoned {
    token: Option<CancellationToken>,
    /// The run was abandoned (a token made later is cancelled at once).
    already: bool,
}

impl RunLedger {
    /// The ledger of a run that starts from `origin`.
    pub(crate) fn from_origin(origin: RunOrigin) -> Self {
        Self::lent(origin, None, None)
    }

    /// The ledger of a run that starts from `origin` and lends it to its calls, its
    /// sub-agents' events heard by `handlers` (its session's; kept only when there are
    /// some), their tokens bounded by the run's `budget` as its own are. Built in place: a
    /// ledger is made every run.
    pub(crate) fn lent(
        origin: RunOrigin,
        handlers: Option<&Handlers>,
        budget: Option<u64>,
    ) -> Self {
        let heard_above = origin
            .parent
            .as_ref()
            .is_some_and(|parent| parent.ledger.heard());
        let depth = origin.depth();
        Self {
            descendants: Mutex::default(),
            parent: origin.parent,
            abandoned: Mutex::default(),
            events: origin.events,
            streaming: AtomicBool::new(true),
            handlers: handlers
                .filter(|handlers| !handlers.is_empty())
                .map(Arc::clone),
            heard_above,
            budget,
            own_tokens: AtomicU64::new(0),
            depth,
        }
    }

    /// Whether the run's events go anywhere besides its session's handlers: a stream of the
    /// caller's own, or a run above it that listens.
    pub(crate) fn heard_elsewhere(&self) -> bool {
        self.events.is_some() || self.heard_above
    }

    /// Whether the events of a sub-agent of this ledger's run are heard: by the run's
    /// session's handlers, its stream, or a run above.
    fn heard(&self) -> bool {
        self.handlers.is_some() || self.heard_elsewhere()
    }

    /// `event` of this ledger's run sent to `handlers` (its session's), then to the runs
    /// above it, then to its own stream while the run lasts (a tool's work handed to a task
    /// of its own may report progress after the run ended: the stream had ended).
    pub(crate) fn send(&self, handlers: &[Arc<dyn AgentEventHandler>], event: AgentEvent) {
        deliver(handlers, &event);
        if self.heard_above {
            self.send_up(&event);
        }
        if let Some(events) = self.open_stream() {
            events.send(event);
        }
    }

    /// `event` passed to each run above this one, wrapped once more a level (a loop, as
    /// [`spent`](Self::spent) is): each run's handlers hear it, and its stream while the run
    /// lasts.
    #[inline(never)]
    fn send_up(&self, event: &AgentEvent) {
        let mut wrapped = event.clone();
        let mut child = self;
        while let Some(parent) = child.parent.as_ref().filter(|_| child.heard_above) {
            wrapped = AgentEvent::SubAgent {
                agent: parent.agent.to_string(),
                event: Box::new(wrapped),
            };
            let ledger = &parent.ledger;
            if let Some(handlers) = &ledger.handlers {
                deliver(handlers, &wrapped);
            }
            if let Some(events) = ledger.open_stream() {
                events.send(wrapped.clone());
            }
            child = ledger;
        }
    }

    /// The run's own stream, while the run lasts: none once it has ended.
    fn open_stream(&self) -> Option<&EventStream> {
        self.events
            .as_ref()
            .filter(|_| self.streaming.load(Ordering::Acquire))
    }

    /// This ledger's run has ended (or was dropped): its stream takes no more events.
    pub(crate) fn run_ended(&self) {
        if self.events.is_some() {
            self.streaming.store(false, Ordering::Release);
        }
    }

    /// The ledger of the run whose tool call is running on this task, if any: the parent of
    /// a run made here.
    pub(crate) fn of_calling_run() -> Option<Arc<Self>> {
        ToolCallContext::current().and_then(|context| context.value::<Self>())
    }

    /// What a run lends each of its tool calls: this ledger.
    pub(crate) fn call_values(self: &Arc<Self>) -> SessionState {
        let mut values = SessionState::new();
        values.insert_arc(Arc::clone(self));
        values
    }

    /// This ledger's run spent `usage` on a model call of its own: it counts in every run
    /// above it (a loop, not recursion: `AgentTool`s may nest as deep as their callers go).
    pub(crate) fn spent(&self, usage: Usage) {
        if self.budget.is_some() {
            // Saturating, as `Usage` adds: a wrapped count (a model's absurd usage) would
            // read as a budget barely touched to the run's sub-agents.
            let _ = self
                .own_tokens
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |spent| {
                    Some(spent.saturating_add(usage.total_tokens()))
                });
        }
        let mut ancestor = self.parent.as_ref();
        while let Some(parent) = ancestor {
            *parent
                .ledger
                .descendants
                .lock()
                .unwrap_or_else(PoisonError::into_inner) += usage;
            ancestor = parent.ledger.parent.as_ref();
        }
    }

    /// The budget and the tokens spent of the nearest run above this one whose budget is
    /// spent, if any: its own model calls' tokens and all its sub-agents', this run's
    /// included. A sub-agent stops there as its caller would, rather than spending on while
    /// the caller waits for it (or after the caller has ended: what it spends counts there).
    #[inline]
    pub(crate) fn caller_over_budget(&self) -> Option<(u64, u64)> {
        // Checked before each model call of every run: most have no run above.
        self.parent.as_ref()?;
        self.ancestor_over_budget()
    }

    /// [`caller_over_budget`](Self::caller_over_budget) for a run that has one above.
    #[inline(never)]
    fn ancestor_over_budget(&self) -> Option<(u64, u64)> {
        let mut ancestor = self.parent.as_ref();
        while let Some(parent) = ancestor {
            let ledger = &parent.ledger;
            if let Some(limit) = ledger.budget {
                let spent = ledger
                    .own_tokens
                    .load(Ordering::Relaxed)
                    .saturating_add(ledger.descendants().total_tokens());
                if spent >= limit {
                    return Some((limit, spent));
                }
            }
            ancestor = ledger.parent.as_ref();
        }
        None
    }

    /// The tokens this ledger's run's descendants have spent so far.
    pub(crate) fn descendants(&self) -> Usage {
        *self
            .descendants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The token fired when this ledger's run is cancelled, stopped or dropped (see
    /// [`abandon`](Self::abandon)).
    pub(crate) fn abandoned(&self) -> CancellationToken {
        let mut abandoned = self
            .abandoned
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let already = abandoned.already;
        let token = abandoned.token.get_or_insert_with(CancellationToken::new);
        if already {
            token.cancel();
        }
        token.clone()
    }

    /// This ledger's run ended cancelled or stopped, or was dropped: what it started in the
    /// background stops.
    pub(crate) fn abandon(&self) {
        let mut abandoned = self
            .abandoned
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        abandoned.already = true;
        if let Some(token) = &abandoned.token {
            token.cancel();
        }
    }
}
