//! [`UnbuiltTool`]: what a constructor yields when the session lacks what the tool needs.

use std::cell::RefCell;
use std::sync::Arc;

use async_trait::async_trait;

use crate::{Tool, ToolArguments, ToolCallResult, ToolError, ToolImpl};

/// A tool that could not be built for its session (a `#[ctx]` value was missing): it keeps
/// its definition, and every call fails with the reason, so the session still builds and the
/// model learns why the tool is unavailable.
#[derive(Debug, Clone)]
pub struct UnbuiltTool {
    definition: Arc<Tool>,
    reason: String,
}

impl UnbuiltTool {
    /// A tool with `definition` that fails every call because of `reason`. Logged as a
    /// warning naming the tool and the reason: the session builds all the same, so without
    /// it the first sign of a missing value would be a model's failed call.
    ///
    /// Made while a shed that requires every tool built
    /// ([`ToolShed::with_every_tool_built`](crate::shed::ToolShed::with_every_tool_built))
    /// builds, it is noted instead, and that build fails naming the tool and the reason.
    pub fn new(definition: Tool, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        if !note_unbuilt(&reason) {
            tracing::warn!(
                tool = definition.name(),
                reason = %reason,
                "a tool could not be built for its session: each call of it fails with the reason"
            );
        }
        Self {
            definition: Arc::new(definition),
            reason,
        }
    }

    /// Why the tool could not be built.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

thread_local! {
    /// While a shed that requires every tool built constructs one of its tools on this
    /// thread (constructors are synchronous), where the reason of an [`UnbuiltTool`] made
    /// meanwhile goes: `Some(None)` until one is made, `None` outside such a build.
    static NOTED: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// Notes `reason` when a build that requires every tool watches this thread; whether it did.
fn note_unbuilt(reason: &str) -> bool {
    NOTED.with(|noted| match &mut *noted.borrow_mut() {
        Some(slot) => {
            // The first reason is the one a constructor gave up on.
            slot.get_or_insert_with(|| reason.to_owned());
            true
        }
        None => false,
    })
}

/// Runs `construct` for a shed: when it requires every tool built (`noting`), gives what
/// `construct` returns with the reason of the first [`UnbuiltTool`] it made, if any; when it
/// does not, with no watch at all, so that an outer shed's watch does not take a tool this
/// one tolerates. The thread's watch is restored after, even when `construct` panics (a
/// constructor building a shed of its own has a watch, or none, of its own).
pub(crate) fn noting_unbuilt<R>(
    noting: bool,
    construct: impl FnOnce() -> R,
) -> (R, Option<String>) {
    struct Restore(Option<Option<Option<String>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                let _ = NOTED.try_with(|noted| noted.replace(outer));
            }
        }
    }
    let watch = noting.then_some(None);
    let mut restore = Restore(Some(NOTED.with(|noted| noted.replace(watch))));
    let built = construct();
    let outer = restore.0.take().unwrap_or_default();
    let noted = NOTED.with(|noted| noted.replace(outer)).flatten();
    (built, noted)
}

#[async_trait]
impl ToolImpl for UnbuiltTool {
    fn definition(&self) -> Tool {
        Tool::clone(&self.definition)
    }

    fn shared_definition(&self) -> Arc<Tool> {
        Arc::clone(&self.definition)
    }

    async fn execute(&self, _arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Err(ToolError::execution(
            self.definition.name(),
            format!("it could not be built for this session: {}", self.reason),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Args, ToolDefinition};

    fn unbuilt(reason: &str) -> UnbuiltTool {
        let definition = ToolDefinition::new("t", "A tool.", Args::empty());
        UnbuiltTool::new(Tool::SingleCommand(definition), reason)
    }

    #[test]
    fn the_first_unbuilt_tool_of_a_watched_construction_is_noted() {
        let (_, noted) = noting_unbuilt(true, || ());
        assert_eq!(noted, None);
        let (tool, noted) = noting_unbuilt(true, || {
            let first = unbuilt("no Db");
            let _second = unbuilt("no Cache");
            first
        });
        assert_eq!(tool.reason(), "no Db");
        assert_eq!(noted.as_deref(), Some("no Db"));
        // Outside a watch nothing is noted: the tool is only logged.
        assert!(!note_unbuilt("unwatched"));
    }

    #[test]
    fn a_watch_inside_another_and_a_panicking_construction_restore_the_outer_one() {
        let (inner, outer) = noting_unbuilt(true, || {
            let (_, inner) = noting_unbuilt(true, || unbuilt("inner"));
            // A shed that tolerates unbuilt tools, built inside, keeps its own to itself.
            let (_, tolerated) = noting_unbuilt(false, || unbuilt("tolerated"));
            assert_eq!(tolerated, None);
            // A constructor that panics leaves the watch as it found it.
            let panicked = std::panic::catch_unwind(|| {
                noting_unbuilt(true, || -> () { panic!("constructor broke") })
            });
            assert!(panicked.is_err());
            let _ = unbuilt("outer");
            inner
        });
        assert_eq!(inner.as_deref(), Some("inner"));
        assert_eq!(outer.as_deref(), Some("outer"));
        assert!(!note_unbuilt("after"));
    }
}
