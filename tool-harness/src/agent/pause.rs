//! [`PauseHandle`]: pauses a session between model calls.

use std::sync::Arc;

use tokio::sync::watch;
use toolsmith_core::CancellationToken;

/// Pauses and resumes a session's runs between model calls: a paused run lets its running
/// tool calls finish and starts no new model call until resumed (or cancelled). Clones
/// control the same sessions. The session's sub-agents (the `agent` group of its shed) are
/// held too: each has a handle of its own (the group's `pause`) that also follows the
/// session's, so that a child waits while either is paused.
///
/// ```
/// use toolsmith::harness::agent::PauseHandle;
///
/// let pause = PauseHandle::new();
/// pause.pause();
/// assert!(pause.is_paused());
/// pause.resume();
/// assert!(!pause.is_paused());
/// ```
#[derive(Debug, Clone)]
pub struct PauseHandle {
    paused: watch::Sender<bool>,
    /// The handle of the session whose sub-agent this handle's session is: paused, it holds
    /// this one's runs too.
    parent: Option<Arc<PauseHandle>>,
}

impl Default for PauseHandle {
    fn default() -> Self {
        Self::new()
    }
}

impl PauseHandle {
    /// A handle, not paused.
    pub fn new() -> Self {
        Self {
            paused: watch::Sender::new(false),
            parent: None,
        }
    }

    /// A handle, not paused, of a sub-agent's session: paused while `parent` (its parent
    /// session's) is, as well as by its own [`pause`](Self::pause).
    pub(super) fn following(parent: &PauseHandle) -> Self {
        Self {
            parent: Some(Arc::new(parent.clone())),
            ..Self::new()
        }
    }

    /// Pauses before the next model call.
    pub fn pause(&self) {
        self.paused.send_replace(true);
    }

    /// Lets paused runs go on.
    pub fn resume(&self) {
        self.paused.send_replace(false);
    }

    /// Whether runs are paused (a sub-agent's: by its own handle or its parent's).
    pub fn is_paused(&self) -> bool {
        self.handles().any(|handle| *handle.paused.borrow())
    }

    /// This handle and those it follows, itself first.
    fn handles(&self) -> impl Iterator<Item = &PauseHandle> {
        std::iter::successors(Some(self), |handle| handle.parent.as_deref())
    }

    /// Waits while paused; `false` when `cancel` fired first.
    pub(super) async fn wait_while_paused(&self, cancel: &CancellationToken) -> bool {
        // Subscribed before looking: a resume after the look is a change seen below.
        let mut watched: Vec<watch::Receiver<bool>> = self
            .handles()
            .map(|handle| handle.paused.subscribe())
            .collect();
        while self.is_paused() {
            // The senders live in `self` and its parents: no channel closes while we wait.
            let changed = futures::future::select_all(
                watched.iter_mut().map(|seen| Box::pin(seen.changed())),
            );
            tokio::select! {
                biased;
                () = cancel.cancelled() => return false,
                _ = changed => {}
            }
        }
        true
    }
}
