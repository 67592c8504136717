//! A served call's progress reports ([`ToolCallContext::progress`]) as MCP
//! `notifications/progress`, in order, all sent before the call's result.
//!
//! [`ToolCallContext::progress`]: toolsmith_core::ToolCallContext::progress

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolsmith_core::{Progress, ProgressSink};

/// Forwards the progress of one call to the client that asked for it (with a progress token).
pub(crate) struct ProgressForwarder {
    sink: Arc<ChannelSink>,
    task: Option<JoinHandle<()>>,
}

/// The sink a call reports into: a channel the forwarding task drains. Closed when the call
/// ends, so that reports made later (by a task the tool left behind) go nowhere.
struct ChannelSink {
    sender: Mutex<Option<mpsc::UnboundedSender<Progress>>>,
}

impl ProgressSink for ChannelSink {
    fn report(&self, progress: Progress) {
        let sender = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = sender.as_ref() {
            let _ = sender.send(progress);
        }
    }
}

impl ProgressForwarder {
    /// Starts forwarding to `peer` under `token`.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (sender, mut receiver) = mpsc::unbounded_channel::<Progress>();
        let task = tokio::spawn(async move {
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
        });
        Self {
            sink: Arc::new(ChannelSink {
                sender: Mutex::new(Some(sender)),
            }),
            task: Some(task),
        }
    }

    /// The sink to give the call's context.
    pub(crate) fn sink(&self) -> Arc<dyn ProgressSink> {
        Arc::clone(&self.sink) as Arc<dyn ProgressSink>
    }

    /// Closes the sink and waits until every report made so far has been sent.
    pub(crate) async fn finish(mut self) {
        self.sink.close();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl ChannelSink {
    fn close(&self) {
        self.sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

impl Drop for ProgressForwarder {
    /// A call dropped before its end (cancelled) reports nothing more; the task ends once it
    /// has sent what was reported.
    fn drop(&mut self) {
        self.sink.close();
    }
}
