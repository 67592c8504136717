//! The blocks of call futures, kept per thread: a started call's future is boxed
//! ([`ToolFuture`]), and a call that finishes on its first poll would otherwise pay an
//! allocation and a free for it, the largest single cost of a trivial `async` call.
//!
//! The manager takes a finished future apart itself ([`recycle`]): it drops the future in
//! place and keeps its block as the thread's spare, and [`boxed`] places the next future
//! of the same size and alignment (the same tool's, in the usual run of calls) in that
//! block rather than asking the allocator. Any other future is boxed as `Box::pin` does.

use std::alloc::{Layout, dealloc};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;

use crate::{ToolCallResult, ToolError, ToolFuture};

thread_local! {
    /// The block of the last future recycled on this thread, empty, with its layout. Freed
    /// when the thread ends.
    static SPARE: SpareBlock = const { SpareBlock(Cell::new(None)) };
}

/// A thread's spare block and the layout it was allocated with; it holds no value.
struct SpareBlock(Cell<Option<(NonNull<u8>, Layout)>>);

impl Drop for SpareBlock {
    fn drop(&mut self) {
        if let Some((block, layout)) = self.0.take() {
            // SAFETY: allocated by the global allocator with `layout` (see `recycle`), and
            // holds no value.
            unsafe { dealloc(block.as_ptr(), layout) };
        }
    }
}

/// `future`, boxed: in the thread's spare block when that has `F`'s layout, else as
/// `Box::pin` boxes it.
#[inline]
pub(crate) fn boxed<'a, F>(future: F) -> ToolFuture<'a>
where
    F: Future<Output = Result<ToolCallResult, ToolError>> + Send + 'a,
{
    // What is generic here is compiled once per tool (each tool's future is a type of its
    // own): the layout is a constant and the look-up a function of its own, so that neither
    // is instantiated per tool.
    match take_spare(const { Layout::new::<F>() }) {
        Some(block) => {
            let block = block.as_ptr() as *mut F;
            // SAFETY: the block was allocated by the global allocator with `F`'s layout
            // (size and alignment: a zero-sized future never leaves a block, see
            // `recycle`), holds no value, and is owned by no one else once taken: writing
            // `future` there makes it what `Box::new(future)` would have allocated. Boxed
            // futures are pinned from here on, as `Box::pin` pins them.
            unsafe {
                block.write(future);
                Pin::new_unchecked(Box::from_raw(block))
            }
        }
        None => Box::pin(future),
    }
}

/// The thread's spare block, taken, when it has `layout`.
#[inline]
fn take_spare(layout: Layout) -> Option<NonNull<u8>> {
    SPARE
        .try_with(|spare| match spare.0.get() {
            Some((block, kept)) if kept == layout => {
                spare.0.set(None);
                Some(block)
            }
            _ => None,
        })
        .ok()
        .flatten()
}

/// Drops a call's future and keeps its block as the thread's spare (freeing the spare it
/// replaces), for the next future of its layout that [`boxed`] places.
#[inline]
pub(crate) fn recycle(future: ToolFuture<'_>) {
    // SAFETY: the future is dropped in place below and its memory reused only afterwards,
    // which is all pinning asks of memory that held a pinned value.
    let future = Box::into_raw(unsafe { Pin::into_inner_unchecked(future) });
    // SAFETY: `future` is valid until dropped below.
    let layout = Layout::for_value(unsafe { &*future });
    // SAFETY: the box's value, dropped once; the box is not used as one again.
    unsafe { std::ptr::drop_in_place(future) };
    if layout.size() == 0 {
        // A zero-sized value was never allocated.
        return;
    }
    // SAFETY: a box's pointer is not null.
    let block = unsafe { NonNull::new_unchecked(future.cast::<u8>()) };
    let replaced = SPARE
        .try_with(|spare| spare.0.replace(Some((block, layout))))
        // The thread is ending: the block goes back to the allocator.
        .unwrap_or(Some((block, layout)));
    if let Some((old, old_layout)) = replaced {
        // SAFETY: a box's block (this future's, or the spare it replaced, see above),
        // allocated by the global allocator with that layout, holding no value, owned by
        // no one.
        unsafe { dealloc(old.as_ptr(), old_layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::ready;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Waker};

    use serde_json::json;

    fn poll(future: &mut ToolFuture<'_>) -> Poll<Result<ToolCallResult, ToolError>> {
        future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
    }

    fn address(future: &ToolFuture<'_>) -> *const u8 {
        std::ptr::from_ref(&**future).cast()
    }

    /// A future that counts its drops.
    struct Counted(Arc<AtomicUsize>, u64);

    impl Future for Counted {
        type Output = Result<ToolCallResult, ToolError>;

        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
            Poll::Ready(Ok(ToolCallResult::json(json!(self.1))))
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_recycled_block_holds_the_next_future_of_its_layout() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut first = boxed(Counted(Arc::clone(&drops), 1));
        assert!(poll(&mut first).is_ready());
        let block = address(&first);
        recycle(first);
        assert_eq!(drops.load(Ordering::Relaxed), 1);

        // The same layout: the same block, and the new value in it.
        let mut second = boxed(Counted(Arc::clone(&drops), 2));
        assert_eq!(address(&second), block);
        match poll(&mut second) {
            Poll::Ready(Ok(result)) => assert_eq!(result.content.to_text(), "2"),
            _ => panic!("ready with the second value"),
        }
        // Dropped as a box (not recycled): freed by the allocator, dropped once.
        drop(second);
        assert_eq!(drops.load(Ordering::Relaxed), 2);

        // Another layout does not take the spare; its own block replaces it.
        let third = boxed(Counted(Arc::clone(&drops), 3));
        recycle(third);
        let other = boxed(async move { Ok(ToolCallResult::json(json!([0u8; 100].len()))) });
        assert_ne!(address(&other), block);
        recycle(other);
        let fourth = boxed(Counted(Arc::clone(&drops), 4));
        recycle(fourth);
        assert_eq!(drops.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn zero_sized_and_pending_futures_are_dropped_as_they_are() {
        // Zero-sized: never allocated, nothing kept.
        recycle(boxed(ready(Ok(ToolCallResult::text("")))));
        // A future that never ran: its captures are dropped with it.
        let owned = Arc::new(());
        let held = Arc::clone(&owned);
        let future: ToolFuture<'_> = boxed(async move {
            let _held = held;
            std::future::pending::<()>().await;
            Ok(ToolCallResult::text(""))
        });
        assert_eq!(Arc::strong_count(&owned), 2);
        recycle(future);
        assert_eq!(Arc::strong_count(&owned), 1);
    }

    #[test]
    fn a_spare_block_is_freed_with_its_thread() {
        std::thread::spawn(|| {
            recycle(boxed(async { Ok(ToolCallResult::text("x".repeat(3))) }));
        })
        .join()
        .unwrap();
    }
}
