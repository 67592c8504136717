//! The blocks of call futures, kept per thread: a started call's future is boxed
//! ([`ToolFuture`]), and a call that finishes on its first poll would otherwise pay an
//! allocation and a free for it, the largest single cost of a trivial `async` call.
//!
//! Whoever finishes a future takes it apart itself ([`recycle`]): it drops the future in
//! place and keeps its block as the thread's spare, and [`boxed`] puts the next future of
//! the same size and alignment (the same tool's, in the usual run of calls) in that block
//! rather than asking the allocator. Any other future is boxed as `Box::pin` does. A
//! `#[tool_fn]` tool's first poll borrows the spare block ([`FirstPollBlock`]) and, when
//! its future finishes there, gives it back.

use std::alloc::{Layout, dealloc};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;

use crate::{ToolCallResult, ToolError, ToolFuture};

thread_local! {
    /// The block of the last future recycled on this thread, empty, with its layout. Freed
    /// when the thread ends.
    static SPARE: SpareBlock = const {
        SpareBlock {
            block: Cell::new(std::ptr::null_mut()),
            size: Cell::new(0),
            align: Cell::new(0),
        }
    };
}

/// A thread's spare block and the layout it was allocated with; it holds no value. `align`
/// is 0 when there is none: taking the block clears only that, so that the block a first
/// poll borrowed goes back with one write ([`FirstPollBlock::give_back`]).
struct SpareBlock {
    block: Cell<*mut u8>,
    size: Cell<usize>,
    align: Cell<usize>,
}

impl SpareBlock {
    /// The block, taken, when there is one of `layout`.
    #[inline]
    fn take(&self, layout: Layout) -> Option<NonNull<u8>> {
        if self.align.get() != layout.align() || self.size.get() != layout.size() {
            return None;
        }
        self.align.set(0);
        // Not null: a block is kept with its alignment (see `replace`).
        NonNull::new(self.block.get())
    }

    /// Keeps `block` of `layout` (not zero-sized), returning the block it replaces.
    #[inline]
    fn replace(&self, block: NonNull<u8>, layout: Layout) -> Option<(NonNull<u8>, Layout)> {
        let replaced = self.kept();
        self.block.set(block.as_ptr());
        self.size.set(layout.size());
        self.align.set(layout.align());
        replaced
    }

    /// The block kept, with its layout.
    #[inline]
    fn kept(&self) -> Option<(NonNull<u8>, Layout)> {
        let align = self.align.get();
        if align == 0 {
            return None;
        }
        // SAFETY: `size` and `align` are the layout of a block kept by `replace`.
        let layout = unsafe { Layout::from_size_align_unchecked(self.size.get(), align) };
        NonNull::new(self.block.get()).map(|block| (block, layout))
    }
}

impl Drop for SpareBlock {
    fn drop(&mut self) {
        if let Some((block, layout)) = self.kept() {
            self.align.set(0);
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
            // `keep_spare`), holds no value, and is owned by no one else once taken: writing
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
    SPARE.try_with(|spare| spare.take(layout)).ok().flatten()
}

/// A block for a value that a caller polls in place first, filling the rest of it only if
/// the value is to outlive the poll (a `#[tool_fn]` tool's future, whose conversion is
/// written only when it suspends): the thread's spare when it has the value's layout, else
/// allocated. Not generic: the caller passes the layout, a constant, to each method.
///
/// The usual call finishes on that first poll and gives the block back
/// ([`give_back`](Self::give_back)): the thread's spare is looked up once for both, and the
/// block it lent returns with one write.
pub(crate) struct FirstPollBlock {
    block: NonNull<u8>,
    /// The thread's spare, when the thread still has one (not as it ends).
    spare: Option<NonNull<SpareBlock>>,
}

impl FirstPollBlock {
    /// A block of `layout` (not zero-sized), uninitialised.
    #[inline]
    pub(crate) fn take(layout: Layout) -> Self {
        debug_assert!(layout.size() != 0, "a zero-sized value needs no block");
        // The spare lives until the thread ends, which it cannot do while this block is in
        // use: the pointer is valid for as long as `self` is.
        let spare = SPARE.try_with(|spare| NonNull::from(spare)).ok();
        // SAFETY: see above.
        let kept = spare.and_then(|spare| unsafe { spare.as_ref() }.take(layout));
        let block = kept.unwrap_or_else(|| allocate(layout));
        Self { block, spare }
    }

    /// Where the value goes.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.block.as_ptr()
    }

    /// Gives the block back to the thread's spare (the one it was lent by, with one write,
    /// when no other took its place meanwhile).
    ///
    /// # Safety
    ///
    /// `layout` is the one the block was taken with, and the block holds no value: what
    /// was written there was dropped.
    #[inline]
    pub(crate) unsafe fn give_back(self, layout: Layout) {
        let Some(spare) = self.spare else {
            // SAFETY: allocated with `layout` (see `take`), holding no value.
            unsafe { dealloc(self.block.as_ptr(), layout) };
            return;
        };
        // SAFETY: valid while `self` is (see `take`).
        let spare = unsafe { spare.as_ref() };
        if spare.align.get() == 0 && spare.block.get() == self.block.as_ptr() {
            // Lent by the spare, which kept its place and size.
            spare.align.set(layout.align());
        } else if let Some((old, old_layout)) = spare.replace(self.block, layout) {
            // SAFETY: the spare's block, allocated with that layout, holding no value.
            unsafe { dealloc(old.as_ptr(), old_layout) };
        }
    }

    /// Frees the block (a first poll that panicked, its value dropped).
    ///
    /// # Safety
    ///
    /// As for [`give_back`](Self::give_back).
    #[inline]
    pub(crate) unsafe fn free(self, layout: Layout) {
        // SAFETY: allocated with `layout`, holding no value.
        unsafe { dealloc(self.block.as_ptr(), layout) };
    }
}

/// A new block of `layout` (not zero-sized) from the global allocator.
#[cold]
fn allocate(layout: Layout) -> NonNull<u8> {
    // SAFETY: `layout` is not zero-sized.
    let block = unsafe { std::alloc::alloc(layout) };
    NonNull::new(block).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
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
    // SAFETY: the block of a box with that layout, whose value was just dropped.
    unsafe { keep_spare(future.cast::<u8>(), layout) };
}

/// Keeps `block` as the thread's spare, freeing the spare it replaces (or `block` itself,
/// as the thread ends).
///
/// # Safety
///
/// `block` is the block of a `Box` whose value had `layout` and was dropped, owned by no one.
#[inline]
unsafe fn keep_spare(block: *mut u8, layout: Layout) {
    if layout.size() == 0 {
        // A zero-sized value was never allocated.
        return;
    }
    // SAFETY: a box's pointer is not null.
    let block = unsafe { NonNull::new_unchecked(block) };
    let replaced = SPARE
        .try_with(|spare| spare.replace(block, layout))
        // The thread is ending: the block goes back to the allocator.
        .unwrap_or(Some((block, layout)));
    if let Some((old, old_layout)) = replaced {
        // SAFETY: a box's block (this value's, or the spare it replaced, see above),
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
    fn a_first_poll_block_goes_back_to_the_spare_it_was_lent_by() {
        // The spare of a future's layout, as a finished call leaves it.
        let drops = Arc::new(AtomicUsize::new(0));
        recycle(boxed(Counted(Arc::clone(&drops), 1)));
        let kept = SPARE
            .with(|spare| spare.kept())
            .map(|(block, _)| block.as_ptr());
        assert!(kept.is_some());

        // Lent for a first poll, then given back: the spare again, at the same place.
        let counted = Layout::new::<Counted>();
        let lent = FirstPollBlock::take(counted);
        assert_eq!(Some(lent.as_ptr()), kept);
        assert!(
            SPARE.with(|spare| spare.kept()).is_none(),
            "taken while lent"
        );
        // SAFETY: nothing was written in it.
        unsafe { lent.give_back(counted) };
        let back = SPARE.with(|spare| spare.kept());
        assert_eq!(back.map(|(block, _)| block.as_ptr()), kept);
        assert_eq!(
            back.map(|(_, layout)| layout),
            Some(Layout::new::<Counted>())
        );

        // Another block kept while one is lent (a call inside the first poll): the lent
        // one takes its place when given back, and the other is freed.
        let lent = FirstPollBlock::take(counted);
        let inner = boxed(Counted(Arc::clone(&drops), 2));
        assert_ne!(address(&inner), lent.as_ptr().cast_const());
        recycle(inner);
        // SAFETY: nothing was written in it.
        unsafe { lent.give_back(counted) };
        let back = SPARE
            .with(|spare| spare.kept())
            .map(|(block, _)| block.as_ptr());
        assert_eq!(back, kept);

        // A layout the spare does not have: a block of its own, which then becomes the spare.
        let nine = Layout::new::<[u64; 9]>();
        let other = FirstPollBlock::take(nine);
        let other_block = other.as_ptr();
        // SAFETY: nothing was written in it.
        unsafe { other.give_back(nine) };
        let back = SPARE.with(|spare| spare.kept());
        assert_eq!(back.map(|(block, _)| block.as_ptr()), Some(other_block));
        assert_eq!(
            back.map(|(_, layout)| layout),
            Some(Layout::new::<[u64; 9]>())
        );

        // Freed instead (a first poll that panicked): the spare is left as it is.
        let freed = FirstPollBlock::take(counted);
        // SAFETY: nothing was written in it.
        unsafe { freed.free(counted) };
        let after = SPARE
            .with(|spare| spare.kept())
            .map(|(block, _)| block.as_ptr());
        assert_eq!(after, Some(other_block));
        assert_eq!(drops.load(Ordering::Relaxed), 2);
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
