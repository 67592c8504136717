//! The heap a session holds: a `ToolCallManager` built from a `ToolShed` of four `#[tool_fn]`
//! tools (`session_tools/`, the session `agent_loop`'s `session-build` times), 1,000 of them
//! kept alive, counted by a global allocator (`counting_allocator/`) and divided by 1,000.
//!
//! Two variants in the same run: the session as it is built (each tool's definition shared
//! by every session, `ToolImpl::shared_definition`'s default), and the baseline, the same
//! tools wrapped so that each session gets a definition of its own (built fresh, as before
//! definitions were shared). The difference is what sharing saves a session; the four
//! definitions alone are printed beside it.
//!
//! Run with `cargo bench --bench session_memory` (no criterion: one pass, well under a
//! second; the heap counts are exact, so one pass is enough).

mod counting_allocator;
mod session_tools;

use std::sync::Arc;
use std::time::Duration;

use toolsmith::{
    Tool, ToolArguments, ToolCallManager, ToolCallResult, ToolError, ToolFuture, ToolImpl,
    ToolRetryConfig, async_trait,
};

use session_tools::{build_session_tools, session_tools};

/// How many sessions are kept alive at once.
const SESSIONS: usize = 1_000;

/// A tool whose [`shared_definition`](ToolImpl::shared_definition) is a definition of its
/// own, built when asked: the baseline, each session holding its tools' schemas once more.
/// Everything else is the wrapped tool's.
struct FreshDefinition(Arc<dyn ToolImpl>);

#[async_trait]
impl ToolImpl for FreshDefinition {
    fn definition(&self) -> Tool {
        self.0.definition()
    }

    fn shared_definition(&self) -> Arc<Tool> {
        Arc::new(self.0.definition())
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        self.0.execute(arguments).await
    }

    fn execute_now(
        &self,
        arguments: &ToolArguments,
        answer: &mut Option<Result<ToolCallResult, ToolError>>,
    ) {
        self.0.execute_now(arguments, answer);
    }

    fn may_answer_now(&self) -> bool {
        self.0.may_answer_now()
    }

    fn execute_lent<'a>(&'a self, arguments: &ToolArguments) -> ToolFuture<'a> {
        self.0.execute_lent(arguments)
    }

    fn timeout(&self) -> Option<Duration> {
        self.0.timeout()
    }

    fn retry_config(&self) -> Option<ToolRetryConfig> {
        self.0.retry_config()
    }
}

/// How a session's tools hold their definitions.
#[derive(Clone, Copy)]
enum Held {
    /// As built: one definition a tool type, shared by every session.
    Shared,
    /// The baseline: each session's tools build a definition of their own.
    Fresh,
}

impl Held {
    fn build(self) -> ToolCallManager {
        match self {
            Held::Shared => build_session_tools(),
            Held::Fresh => session_tools(|tool| Arc::new(FreshDefinition(tool))),
        }
    }
}

/// The heap bytes a session built as `held` says holds: [`SESSIONS`] of them built and kept,
/// after one built and dropped (so that what the first session of a process sets up once,
/// such as the table of shared definitions, is not counted).
fn heap_a_session(held: Held) -> usize {
    let first = held.build();
    assert_eq!(first.len(), 4, "the session has its four tools");
    drop(first);
    let before = counting_allocator::live_bytes();
    // Counted: a session's own bytes (the manager itself) are on the heap too, here.
    let mut sessions = Vec::with_capacity(SESSIONS);
    for _ in 0..SESSIONS {
        sessions.push(held.build());
    }
    let held_bytes = counting_allocator::live_bytes().saturating_sub(before);
    drop(sessions);
    held_bytes / SESSIONS
}

/// The heap the four tools' definitions take on their own (each built anew).
fn definitions_alone() -> usize {
    let manager = build_session_tools();
    let tools: Vec<Arc<dyn ToolImpl>> = ["add", "search_notes", "book_meeting", "convert_units"]
        .into_iter()
        .map(|name| {
            manager
                .get(name)
                .unwrap_or_else(|| panic!("the session has `{name}`"))
        })
        .collect();
    let mut definitions = Vec::with_capacity(tools.len());
    let before = counting_allocator::live_bytes();
    definitions.extend(tools.iter().map(|tool| tool.definition()));
    counting_allocator::live_bytes().saturating_sub(before)
}

fn main() {
    let fresh = heap_a_session(Held::Fresh);
    let shared = heap_a_session(Held::Shared);
    let definitions = definitions_alone();
    println!(
        "a session of four #[tool_fn] tools from a ToolShed ({SESSIONS} kept alive): heap \
         {shared} B a session with shared definitions, {fresh} B with a definition of its own \
         a tool (the baseline): {:.2}x, {} B saved a session; the four definitions alone \
         {definitions} B (a manager's own bytes, {} B, are counted in a session's)",
        fresh as f64 / shared as f64,
        fresh.saturating_sub(shared),
        size_of::<ToolCallManager>(),
    );
}
