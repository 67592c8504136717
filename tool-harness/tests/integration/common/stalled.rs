//! What never ends: a model that never answers (a child runs until it is stopped) and a
//! tool that waits for ever, counting its futures dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tokio::sync::Notify;
use toolsmith_core::{Args, FnTool, ToolArgs, ToolCallResult, scheme};
use toolsmith_harness::model::{ChatModel, ChatRequest, ChatResponse, ModelError};

/// A model that never answers.
pub struct NeverAnswers;

#[async_trait]
impl ChatModel for NeverAnswers {
    fn name(&self) -> &str {
        "never"
    }

    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        std::future::pending().await
    }
}

/// Counts its drops: a tool future's end, whichever way it ends.
struct Probe(Arc<AtomicUsize>);

impl Drop for Probe {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A tool `wait` that says on `started` it began, then waits for ever; `dropped` counts its
/// futures dropped.
pub fn waits_for_ever(started: Arc<Notify>, dropped: Arc<AtomicUsize>) -> FnTool {
    FnTool::new(
        "wait",
        "Waits for ever.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let probe = Probe(Arc::clone(&dropped));
            started.notify_one();
            async move {
                std::future::pending::<()>().await;
                drop(probe);
                Ok(ToolCallResult::text("never"))
            }
        },
    )
}
