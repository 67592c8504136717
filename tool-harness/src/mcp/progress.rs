//! A served call's progress reports ([`ToolCallContext::progress`]) as MCP
//! `notifications/progress`, in order, all sent before the call's result.
//!
//! Nothing is started for a call that reports nothing (rmcp's client sends a progress token
//! with every request): the forwarding task starts with the first report.
//!
//! [`ToolCallContext::progress`]: toolsmith_core::ToolCallContext::progress

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolsmith_core::{Progress, ProgressSink};

/// Forwards the progress of one call to the client that asked for it (with a progress token).
pub(crate) struct ProgressForwarder {
    sink: Arc<ChannelSink>,
}

/// Where a call's reports go: a channel drained by a task started at the first report.
struct ChannelSink {
    state: Mutex<SinkState>,
}

enum SinkState {
    /// No report yet: what the task needs.
    Idle {
        peer: Peer<RoleServer>,
        token: ProgressToken,
        runtime: Handle,
    },
    /// Forwarding.
    Running {
        sender: mpsc::UnboundedSender<Progress>,
        task: JoinHandle<()>,
    },
    /// The call ended: later reports (from a task the tool left behind) go nowhere.
    Closed,
}

impl ProgressSink for ChannelSink {
    fn report(&self, progress: Progress) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let SinkState::Idle { .. } = &*state {
            let SinkState::Idle {
                peer,
                token,
                runtime,
            } = std::mem::replace(&mut *state, SinkState::Closed)
            else {
                unreachable!("matched above");
            };
            let (sender, receiver) = mpsc::unbounded_channel();
            let task = runtime.spawn(forward(peer, token, receiver));
            *state = SinkState::Running { sender, task };
        }
        if let SinkState::Running { sender, .. } = &*state {
            let _ = sender.send(progress);
        }
    }
}

/// Sends each report as a notification, in order, until the channel closes.
async fn forward(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    mut receiver: mpsc::UnboundedReceiver<Progress>,
) {
    while let Some(progress) = receiver.recv().await {
        let mut param = ProgressNotificationParam::new(token.clone(), progress.done);
        if let Some(total) = progress.total {
            param = param.with_total(total);
        }
        if let Some(message) = progress.message {
            param = param.with_message(message);
        }
        if peer.notify_progress(param).await.is_err() {
            // The client is gone; nothing more to tell it.
            break;
        }
    }
}

impl ProgressForwarder {
    /// Forwards to `peer` under `token`, once the call reports (on the current runtime).
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Option<Self> {
        let runtime = Handle::try_current().ok()?;
        Some(Self {
            sink: Arc::new(ChannelSink {
                state: Mutex::new(SinkState::Idle {
                    peer,
                    token,
                    runtime,
                }),
            }),
        })
    }

    /// The sink to give the call's context.
    pub(crate) fn sink(&self) -> Arc<dyn ProgressSink> {
        Arc::clone(&self.sink) as Arc<dyn ProgressSink>
    }

    /// Closes the sink and waits until every report made so far has been sent.
    pub(crate) async fn finish(self) {
        let task = self.sink.close();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl ChannelSink {
    /// Ends the sink; the forwarding task, if started, ends once it has sent what it has.
    fn close(&self) -> Option<JoinHandle<()>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *state, SinkState::Closed) {
            SinkState::Running { sender, task } => {
                drop(sender);
                Some(task)
            }
            SinkState::Idle { .. } | SinkState::Closed => None,
        }
    }
}

impl Drop for ProgressForwarder {
    /// A call dropped before its end (cancelled) reports nothing more.
    fn drop(&mut self) {
        drop(self.sink.close());
    }
}
