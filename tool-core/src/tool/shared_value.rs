//! [`SharedValue`]: a reference-counted JSON value whose last owner frees it without an
//! atomic read-modify-write, and without recursion.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering, fence};

use serde_json::Value;

use crate::tool::nesting::{clone_value, free_nested, is_shallow, values_equal};

/// A JSON value shared by reference counting, as `std::sync::Arc<Value>` would be, but
/// cheaper to make and to drop when it is not shared.
///
/// Dropping a `std` `Arc` takes two locked instructions even when it is the only reference
/// (the strong count, then the weak one). Call arguments are usually unshared when dropped,
/// and a locked instruction costs as much as a good part of a trivial call, so the last
/// owner here checks the count with a plain load and frees the value directly (there are no
/// weak references, so a count of one means no one else can reach it). Only a shared value
/// pays the decrement.
///
/// Every call's arguments are made and dropped once, usually on one thread: the block of
/// the last value freed on a thread is kept for the next one made there (see [`SPARE`]),
/// which saves an allocation and a free a call, about as much as the rest of this type's
/// work.
///
/// A caller can build arguments nested arbitrarily deep (deeper than the manager accepts),
/// and serde_json copies, compares and drops a value recursively, once per level, which
/// would overflow the stack. So the value is freed, copied and compared with loops
/// (`tool::nesting`); the usual flat object of scalars costs one look at its values before
/// it is dropped as serde_json drops it.
pub(crate) struct SharedValue(NonNull<Block>);

/// The allocation behind a [`SharedValue`]: the number of its owners, and the value.
struct Block {
    owners: AtomicUsize,
    value: Value,
}

// SAFETY: as for `Arc<Value>`: the value is `Send + Sync`, and it is reached only through
// shared references until its last owner, alone, takes it out.
unsafe impl Send for SharedValue {}
// SAFETY: see `Send`.
unsafe impl Sync for SharedValue {}

/// Past this many owners the count is near overflow; as `Arc` does, abort rather than wrap.
const MAX_OWNERS: usize = isize::MAX as usize;

thread_local! {
    /// One empty block kept for the next value made on this thread: the arguments of a
    /// call are made, validated and dropped on one thread, so a server's calls reuse one
    /// block instead of asking the allocator twice each. Freed when the thread ends.
    static SPARE: SpareBlock = const { SpareBlock(Cell::new(None)) };
}

/// The thread's spare block, if it has one; it holds no value.
struct SpareBlock(Cell<Option<NonNull<Block>>>);

impl Drop for SpareBlock {
    fn drop(&mut self) {
        if let Some(block) = self.0.take() {
            // SAFETY: the block was allocated with this layout, and holds no value.
            unsafe { dealloc(block.as_ptr().cast(), Layout::new::<Block>()) };
        }
    }
}

/// An empty block: the thread's spare one, or a new allocation.
#[inline]
fn take_block() -> NonNull<Block> {
    match SPARE.try_with(|spare| spare.0.take()) {
        Ok(Some(block)) => block,
        // None spare, or the thread is ending (its spare already freed).
        _ => {
            let layout = Layout::new::<Block>();
            // SAFETY: `Block` is not zero-sized.
            NonNull::new(unsafe { alloc(layout) }.cast())
                .unwrap_or_else(|| handle_alloc_error(layout))
        }
    }
}

/// Gives back a block whose value was moved out: kept as the thread's spare, or freed.
///
/// # Safety
///
/// `block` came from [`take_block`], holds no value, and no one uses it afterwards.
#[inline]
unsafe fn give_back(block: NonNull<Block>) {
    let kept = SPARE
        .try_with(|spare| {
            spare.0.get().is_none() && {
                spare.0.set(Some(block));
                true
            }
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: allocated with this layout (by `take_block`), and no longer used.
        unsafe { dealloc(block.as_ptr().cast(), Layout::new::<Block>()) };
    }
}

impl SharedValue {
    pub(crate) fn new(value: Value) -> Self {
        let block = take_block();
        // SAFETY: `block` is allocated for a `Block` and holds none.
        unsafe {
            block.as_ptr().write(Block {
                owners: AtomicUsize::new(1),
                value,
            });
        }
        Self(block)
    }

    #[inline]
    fn block(&self) -> &Block {
        // SAFETY: the block lives as long as any owner, `self` among them.
        unsafe { self.0.as_ref() }
    }

    /// Whether this is the only owner. Acquire: what other owners did before they let go
    /// (with a release decrement) happens before what this one does next.
    #[inline]
    fn is_unique(&self) -> bool {
        self.block().owners.load(Ordering::Acquire) == 1
    }

    /// Moves the value out and gives the block back.
    ///
    /// # Safety
    ///
    /// `self` is the only owner, and is neither used nor dropped afterwards.
    #[inline]
    unsafe fn take_unique(&self) -> Value {
        // SAFETY: the only owner; the value is read once, and the block then given back.
        unsafe {
            let value = std::ptr::addr_of!((*self.0.as_ptr()).value).read();
            give_back(self.0);
            value
        }
    }

    /// The value, copied first if it is shared.
    pub(crate) fn make_mut(&mut self) -> &mut Value {
        if !self.is_unique() {
            *self = Self::new(clone_value(self));
        }
        // SAFETY: unique now: no other owner can reach the value while `self` is borrowed.
        unsafe { &mut (*self.0.as_ptr()).value }
    }

    /// The value itself when unshared; a copy otherwise.
    pub(crate) fn into_inner(self) -> Value {
        if self.is_unique() {
            let this = ManuallyDrop::new(self);
            // SAFETY: the only owner, never dropped (`ManuallyDrop`) nor used again.
            unsafe { this.take_unique() }
        } else {
            clone_value(&self)
        }
    }
}

impl Drop for SharedValue {
    fn drop(&mut self) {
        // Unshared: freed with no atomic write. Shared: an ordinary decrement, and whoever
        // lets go last frees it.
        if !self.is_unique() {
            if self.block().owners.fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            fence(Ordering::Acquire);
        }
        // A shallow value (the usual arguments) is dropped in place as serde_json drops it
        // (not moved out first: a copy of the whole value); a nested one is taken apart
        // without recursion.
        if is_shallow(self) {
            // SAFETY: the last owner, in its drop: the value is dropped once, and the block,
            // holding no value then, given back.
            unsafe {
                std::ptr::drop_in_place(std::ptr::addr_of_mut!((*self.0.as_ptr()).value));
                give_back(self.0);
            }
        } else {
            // SAFETY: the last owner, in its drop.
            free_nested(unsafe { self.take_unique() });
        }
    }
}

impl Clone for SharedValue {
    #[inline]
    fn clone(&self) -> Self {
        // Relaxed, as `Arc` does: a new owner is made from an existing one, which keeps the
        // value alive meanwhile.
        if self.block().owners.fetch_add(1, Ordering::Relaxed) > MAX_OWNERS {
            std::process::abort();
        }
        Self(self.0)
    }
}

impl Deref for SharedValue {
    type Target = Value;

    #[inline]
    fn deref(&self) -> &Value {
        &self.block().value
    }
}

impl PartialEq for SharedValue {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || values_equal(self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_freed_block_is_reused_by_the_next_value_on_the_thread() {
        let first = SharedValue::new(json!({"a": 1}));
        let block = first.0;
        drop(first);
        let second = SharedValue::new(json!({"b": 2}));
        assert_eq!(second.0, block);
        assert_eq!(*second, json!({"b": 2}));
        // Taken out, a value gives its block back too; a shared one is copied out.
        assert_eq!(second.into_inner(), json!({"b": 2}));
        let third = SharedValue::new(json!([3]));
        assert_eq!(third.0, block);
        let fourth = third.clone();
        assert_eq!(third.into_inner(), json!([3]));
        assert_eq!(*fourth, json!([3]));
        drop(fourth);
        // Made on one thread and dropped on another, a value leaves its block there.
        let sent = SharedValue::new(json!({"c": "x".repeat(32)}));
        std::thread::spawn(move || drop(sent)).join().unwrap();
        assert_eq!(*SharedValue::new(json!(null)), json!(null));
    }

    #[test]
    fn an_unshared_value_is_moved_out_and_a_shared_one_copied() {
        let unshared = SharedValue::new(json!({"a": 1}));
        assert_eq!(unshared.into_inner(), json!({"a": 1}));

        let first = SharedValue::new(json!({"a": 1}));
        let second = first.clone();
        assert_eq!(first.into_inner(), json!({"a": 1}));
        assert_eq!(*second, json!({"a": 1}));
    }

    #[test]
    fn changing_a_shared_value_leaves_the_other_owner_as_it_was() {
        let mut first = SharedValue::new(json!({"a": 1}));
        let second = first.clone();
        first.make_mut()["a"] = json!(2);
        assert_eq!(*first, json!({"a": 2}));
        assert_eq!(*second, json!({"a": 1}));
        assert!(first != second);
    }

    #[test]
    fn deep_values_are_freed_copied_and_compared_without_recursion() {
        use crate::tool::nesting::free_value;
        use crate::tool::nesting::testing::{nested, on_small_stack};
        on_small_stack(|| {
            for levels in [10_000, 100_000] {
                // Unshared: freed by the drop.
                drop(SharedValue::new(nested(levels)));
                // Shared: copied on write and when taken out, compared, freed by each owner.
                let mut first = SharedValue::new(nested(levels));
                let second = first.clone();
                assert!(first == second);
                first.make_mut().as_array_mut().unwrap().push(json!(2));
                assert!(first != second);
                let third = second.clone();
                free_value(second.into_inner());
                drop((first, third));
            }
        });
    }

    #[test]
    fn owners_dropped_on_other_threads_free_the_value_once() {
        let value = SharedValue::new(json!({"text": "x".repeat(64)}));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let owned = value.clone();
                std::thread::spawn(move || {
                    assert_eq!(owned["text"].as_str().map(str::len), Some(64));
                    drop(owned);
                })
            })
            .collect();
        drop(value);
        for handle in handles {
            handle.join().unwrap();
        }
    }
}
