//! [`RunLedger`]: the tokens a run's sub-agents spend, counted in the run that caused them.

use std::sync::{Arc, Mutex, PoisonError};

use toolsmith_core::{CancellationToken, SessionState, ToolCallContext};

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
    /// The ledger of a run that counts in `parent`'s run, if it has one.
    pub(crate) fn under(parent: Option<Arc<Self>>) -> Self {
        Self {
            descendants: Mutex::default(),
            parent,
            abandoned: Mutex::default(),
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
