//! The blocks of call futures, kept per thread: a started call's future is boxed
//! ([`ToolFuture`]), and a call that finishes on its first poll would otherwise pay an
//! allocation and a free for it, the largest single cost of a trivial `async` call.
//!
//! The manager takes a finished future apart itself ([`recycle`]): it drops the future in
//! place and keeps its block as the thread's spare, and [`boxed`] places the next future
//! of the same size and alignment (the same tool's, in the usual run of calls) in that
//! block rather than asking the allocator. Any other future is boxed as `Box::pin` does.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
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

/// The trait object a [`ToolFuture`] boxes (spelled out again here: the boxing casts its
/// block's pointer to it, and an inferred cast could leave the box of the tool's own type).
pub(crate) type FutureObject<'a> =
    dyn Future<Output = Result<ToolCallResult, ToolError>> + Send + 'a;

/// `future`, boxed: in the thread's spare block when that has `F`'s layout, else in a new
/// allocation, as `Box::pin` boxes it.
#[inline]
pub(crate) fn boxed<'a, F>(future: F) -> ToolFuture<'a>
where
    F: Future<Output = Result<ToolCallResult, ToolError>> + Send + 'a,
{
    box_in_block!(future, F)
}

/// The body of [`boxed`] for a future `$future` of type `$ty`, as a macro so that
/// `generated::call::start`, the one function each `async` tool instantiates, holds it
/// rather than calling `boxed` (one more function per tool).
///
/// It calls nothing generic over `$ty` but the intrinsics, since each tool's future is a type
/// of its own and all of this is compiled for every tool, in debug builds too: the layout is
/// a constant, the block is found by a function of its own, the future is written with
/// `ptr::write` (where `Box::new` and `<*mut T>::write` are each one more function per
/// tool), and the box is made of the trait object's pointer, whose functions every tool
/// shares.
macro_rules! box_in_block {
    ($future:expr, $ty:ty) => {{
        let future: $ty = $future;
        let layout = const { ::std::alloc::Layout::new::<$ty>() };
        let block = $crate::tool::future_block::block_for(layout).as_ptr() as *mut $ty;
        // SAFETY: the block is allocated by the global allocator with the future's layout
        // (or is the dangling pointer a zero-sized value is boxed at), holds no value and is
        // owned by no one else: writing the future there makes it what `Box::new` would have
        // allocated. Boxed futures are pinned from here on, as `Box::pin` pins them.
        unsafe {
            ::std::ptr::write(block, future);
            let block = block as *mut $crate::tool::future_block::FutureObject<'_>;
            ::std::pin::Pin::new_unchecked(::std::boxed::Box::from_raw(block))
        }
    }};
}
pub(crate) use box_in_block;

/// An empty block for a value of `layout`: the thread's spare when it has that layout, else a
/// new allocation, or for a zero-sized value the dangling pointer `Box` uses. Not generic.
#[inline]
pub(crate) fn block_for(layout: Layout) -> NonNull<u8> {
    match take_spare(layout) {
        Some(block) => block,
        None => allocate(layout),
    }
}

/// A new block for `layout` from the global allocator (none for a zero-sized value).
#[inline(never)]
fn allocate(layout: Layout) -> NonNull<u8> {
    if layout.size() == 0 {
        // A zero-sized value is never allocated: a `Box` of one holds a well-aligned,
        // dangling pointer, and frees nothing.
        return NonNull::new(std::ptr::without_provenance_mut(layout.align()))
            .unwrap_or_else(|| handle_alloc_error(layout));
    }
    // SAFETY: `layout` is not zero-sized.
    NonNull::new(unsafe { alloc(layout) }).unwrap_or_else(|| handle_alloc_error(layout))
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
        // A finished `ready` future holds nothing of its own to drop.
        recycle(boxed(ready(Ok(ToolCallResult::text("")))));
        // Zero-sized: boxed at a dangling, aligned address (never allocated, nothing kept),
        // polled there, and recycled without a block.
        struct Empty;
        impl Future for Empty {
            type Output = Result<ToolCallResult, ToolError>;

            fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
                Poll::Ready(Ok(ToolCallResult::text("empty")))
            }
        }
        assert_eq!(size_of::<Empty>(), 0);
        let mut empty = boxed(Empty);
        assert_eq!(address(&empty) as usize, align_of::<Empty>());
        match poll(&mut empty) {
            Poll::Ready(Ok(result)) => assert_eq!(result.content.to_text(), "empty"),
            _ => panic!("ready with its text"),
        }
        recycle(empty);
        // The next future of a layout that was kept still finds its block.
        let drops = Arc::new(AtomicUsize::new(0));
        let kept = boxed(Counted(Arc::clone(&drops), 5));
        let block = address(&kept);
        recycle(kept);
        recycle(boxed(Empty));
        assert_eq!(address(&boxed(Counted(Arc::clone(&drops), 6))), block);
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
