//! [`RunLedger`]: the tokens a run's sub-agents spend, counted in the run that caused them;
//! with it, the run's own event stream, if its caller asked for one.

use std::sync::{Arc, Mutex, PoisonError};

use toolsmith_core::{CancellationToken, SessionState, ToolCallContext};

use super::AgentSession;
use super::events::AgentEvent;
use super::run_events::EventStream;
use crate::model::Usage;

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
#[derive(Debug, Default)]
pub(crate) struct RunLedger {
    descendants: Mutex<Usage>,
    /// The ledger of the run this one's run counts in, when it is a sub-agent's.
    parent: Option<Arc<RunLedger>>,
    /// Fired when the run ends cancelled, stopped by a hook, by a panic or by its token
    /// budget (whose bound the children would pass otherwise), or is dropped: the
    /// background sub-agents its calls started stop with it (one that ends with an answer
    /// leaves them running, for a later run to collect).
    abandoned: Mutex<Abandoned>,
    /// Where the run's events go besides the session's handlers, when its caller asked for
    /// them ([`AgentSession::events_of`]).
    events: Option<EventStream>,
}

/// Where a run starts from: the run whose tool call it is made in, if any (its tokens count
/// there), and the event stream its caller offered it, if any.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunOrigin {
    pub(crate) parent: Option<Arc<RunLedger>>,
    pub(crate) events: Option<EventStream>,
}

impl RunOrigin {
    /// The origin of a run of `session` starting on this task: the run whose call is
    /// running here, and the stream a [`RunEvents`](super::RunEvents) polling here offers
    /// the session's runs (taken: a run typed or not takes it once, at its start).
    pub(crate) fn here(session: &AgentSession) -> Self {
        Self {
            parent: RunLedger::of_calling_run(),
            events: EventStream::claim(session),
        }
    }

    /// The origin of a run that counts in `parent`'s run and streams nowhere (a sub-agent
    /// started on a task of its own).
    pub(crate) fn under(parent: Option<Arc<RunLedger>>) -> Self {
        Self {
            parent,
            events: None,
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
        Self {
            descendants: Mutex::default(),
            parent: origin.parent,
            abandoned: Mutex::default(),
            events: origin.events,
        }
    }

    /// Whether the run's caller reads its events from a stream of their own.
    pub(crate) fn streams_events(&self) -> bool {
        self.events.is_some()
    }

    /// `event` sent to the run's own stream, when it has one.
    pub(crate) fn stream_event(&self, event: AgentEvent) {
        if let Some(events) = &self.events {
            events.send(event);
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
        let mut ancestor = self.parent.as_deref();
        while let Some(ledger) = ancestor {
            *ledger
                .descendants
                .lock()
                .unwrap_or_else(PoisonError::into_inner) += usage;
            ancestor = ledger.parent.as_deref();
        }
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
