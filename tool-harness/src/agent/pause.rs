//! [`PauseHandle`]: pauses a session between model calls.

use tokio::sync::watch;
use toolsmith_core::CancellationToken;

/// Pauses and resumes a session's runs between model calls: a paused run lets its running
/// tool calls finish and starts no new model call until resumed (or cancelled). Clones
/// control the same sessions.
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

    /// Whether runs are paused.
    pub fn is_paused(&self) -> bool {
        *self.paused.borrow()
    }

    /// Waits while paused; `false` when `cancel` fired first.
    pub(super) async fn wait_while_paused(&self, cancel: &CancellationToken) -> bool {
        let mut paused = self.paused.subscribe();
        tokio::select! {
            biased;
            () = cancel.cancelled() => false,
            // The sender lives in `self`, so the channel cannot close while we wait.
            result = paused.wait_for(|paused| !paused) => result.is_ok(),
        }
    }
}
