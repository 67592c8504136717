//! A call whose tool suspended on its first poll: the tool's future, and the reference to
//! the tool that keeps alive what that future borrows.
//!
//! `execute_one` starts an async tool and polls it once inside the registry pin, borrowing
//! the tool from the registry (no reference count touched). Most calls end on that first
//! poll. Only a call that suspends takes a reference of its own, here, since the pin cannot
//! cross an await.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::generated::call::ToolFuture;
use crate::manager::RegisteredTool;
use crate::tool::error::panicked_with;
use crate::{ToolCallResult, ToolError};

/// A suspended call and the tool it runs on.
pub(crate) struct RunningCall {
    // Declared before `_tool`, so dropped before it: it borrows the tool.
    future: ToolFuture<'static>,
    // Never read: held so that what `future` borrows stays alive.
    _tool: Arc<RegisteredTool>,
}

impl RunningCall {
    /// Keeps `future`, started on `*tool`, alive past the pin it was started under.
    ///
    /// # Safety
    ///
    /// `future` must borrow nothing but the `RegisteredTool` that `tool` points to (as the
    /// future of `RegisteredTool::start` on that value does).
    pub(crate) unsafe fn new(tool: Arc<RegisteredTool>, future: ToolFuture<'_>) -> Self {
        // SAFETY: only the lifetime changes. What the future borrows is `*tool`, which the
        // `Arc` keeps at its address for as long as this value lives, and the future is
        // dropped before the `Arc` (field order) and never handed out.
        let future = unsafe { std::mem::transmute::<ToolFuture<'_>, ToolFuture<'static>>(future) };
        Self {
            future,
            _tool: tool,
        }
    }

    /// Polls the call; a panic inside the tool is an execution error naming `name`.
    pub(crate) fn poll(
        &mut self,
        name: &str,
        cx: &mut Context<'_>,
    ) -> Poll<Result<ToolCallResult, ToolError>> {
        poll_contained(name, &mut self.future, cx)
    }
}

/// Polls a tool's future once; a panic inside it is an execution error naming `name`.
pub(crate) fn poll_contained(
    name: &str,
    future: &mut ToolFuture<'_>,
    cx: &mut Context<'_>,
) -> Poll<Result<ToolCallResult, ToolError>> {
    std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)))
        .unwrap_or_else(|payload| Poll::Ready(Err(panicked_with(name, payload))))
}
