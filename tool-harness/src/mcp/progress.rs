//! A served call's progress reports ([`ToolCallContext::progress`]) as MCP
//! `notifications/progress`, in order, all sent before the call's result.
//!
//! Nothing is started for a call that reports nothing (rmcp's client sends a progress token
//! with every request): the forwarding task starts with the first report.
//!
//! A tool may report faster than the client takes notifications (a loop reporting each item
//! to a client reading slowly): at most [`MAX_WAITING_REPORTS`] wait to be sent, and a report
//! made when they are that many replaces the last one waiting. Reports say how far a call
//! has got, so the newest supersedes those it replaces; the client still sees progress rise
//! in order and always receives the last report made.
//!
//! [`ToolCallContext::progress`]: toolsmith_core::ToolCallContext::progress

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use toolsmith_core::{Progress, ProgressSink};

/// How many of a call's reports may wait to be sent.
pub(crate) const MAX_WAITING_REPORTS: usize = 64;

/// Forwards the progress of one call to the client that asked for it (with a progress token).
pub(crate) struct ProgressForwarder {
    sink: Arc<ReportQueue>,
}

/// Where a call's reports wait for the task that sends them, started at the first report.
struct ReportQueue {
    shared: Arc<Shared>,
}

/// What the queue and its task share.
struct Shared {
    state: Mutex<QueueState>,
    /// Woken at each report and when the queue closes.
    more: Notify,
}

struct QueueState {
    stage: Stage,
    waiting: VecDeque<Progress>,
}

enum Stage {
    /// No report yet: what the task needs.
    Idle {
        peer: Peer<RoleServer>,
        token: ProgressToken,
        runtime: Handle,
    },
    /// Forwarding.
    Running(JoinHandle<()>),
    /// The call ended: the task sends what waits and stops; later reports (from a task the
    /// tool left behind) go nowhere.
    Closed,
}

impl ProgressSink for ReportQueue {
    fn report(&self, progress: Progress) {
        let mut state = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Stage::Idle { .. } = &state.stage {
            let Stage::Idle {
                peer,
                token,
                runtime,
            } = std::mem::replace(&mut state.stage, Stage::Closed)
            else {
                unreachable!("matched above");
            };
            let task = runtime.spawn(forward(Arc::clone(&self.shared), peer, token));
            state.stage = Stage::Running(task);
        }
        if !matches!(state.stage, Stage::Running(_)) {
            return;
        }
        if state.waiting.len() >= MAX_WAITING_REPORTS {
            state.waiting.pop_back();
        }
        state.waiting.push_back(progress);
        drop(state);
        self.shared.more.notify_one();
    }
}

/// Sends each report as a notification, in order, until the queue is closed and empty.
async fn forward(queue: Arc<Shared>, peer: Peer<RoleServer>, token: ProgressToken) {
    loop {
        let next = {
            let mut state = queue.state.lock().unwrap_or_else(PoisonError::into_inner);
            match state.waiting.pop_front() {
                Some(progress) => Some(progress),
                None if matches!(state.stage, Stage::Closed) => return,
                None => None,
            }
        };
        let Some(progress) = next else {
            // `notify_one` keeps a permit when no one waits: a report or the close made
            // between the look above and this wait is not missed.
            queue.more.notified().await;
            continue;
        };
        let mut param = ProgressNotificationParam::new(token.clone(), progress.done);
        if let Some(total) = progress.total {
            param = param.with_total(total);
        }
        if let Some(message) = progress.message {
            param = param.with_message(message);
        }
        if peer.notify_progress(param).await.is_err() {
            // The client is gone; nothing more to tell it.
            return;
        }
    }
}

impl ProgressForwarder {
    /// Forwards to `peer` under `token`, once the call reports (on the current runtime).
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Option<Self> {
        let runtime = Handle::try_current().ok()?;
        Some(Self {
            sink: Arc::new(ReportQueue {
                shared: Arc::new(Shared {
                    state: Mutex::new(QueueState {
                        stage: Stage::Idle {
                            peer,
                            token,
                            runtime,
                        },
                        waiting: VecDeque::new(),
                    }),
                    more: Notify::new(),
                }),
            }),
        })
    }

    /// The sink to give the call's context.
    pub(crate) fn sink(&self) -> Arc<dyn ProgressSink> {
        Arc::clone(&self.sink) as Arc<dyn ProgressSink>
    }

    /// Closes the queue and waits until every report waiting in it has been sent.
    pub(crate) async fn finish(self) {
        let task = self.sink.close();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl ReportQueue {
    /// Ends the queue; the forwarding task, if started, ends once it has sent what waits.
    fn close(&self) -> Option<JoinHandle<()>> {
        let mut state = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let task = match std::mem::replace(&mut state.stage, Stage::Closed) {
            Stage::Running(task) => Some(task),
            Stage::Idle { .. } | Stage::Closed => None,
        };
        drop(state);
        self.shared.more.notify_one();
        task
    }
}

impl Drop for ProgressForwarder {
    /// A call dropped before its end (cancelled) reports nothing more.
    fn drop(&mut self) {
        drop(self.sink.close());
    }
}
