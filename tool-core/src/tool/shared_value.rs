//! [`SharedValue`]: a reference-counted JSON value whose last owner frees it without an
//! atomic read-modify-write, and without recursion.

use std::mem::ManuallyDrop;
use std::ops::Deref;

use serde_json::Value;
use triomphe::{Arc, UniqueArc};

use crate::tool::nesting::{clone_value, free_nested, is_shallow, values_equal};

/// A JSON value shared by reference counting, as `std::sync::Arc<Value>` would be, but
/// cheaper to drop when it is not shared.
///
/// Dropping a `std` `Arc` takes two locked instructions even when it is the only reference
/// (the strong count, then the weak one). Call arguments are usually unshared when dropped,
/// and a locked instruction costs as much as a good part of a trivial call, so the last
/// owner here checks the count with a plain load and frees the value directly (`triomphe`
/// has no weak references, so a count of one means no one else can reach it). Only a
/// shared value pays the decrement.
///
/// A caller can build arguments nested arbitrarily deep (deeper than the manager accepts),
/// and serde_json copies, compares and drops a value recursively, once per level, which
/// would overflow the stack. So the value is freed, copied and compared with loops
/// (`tool::nesting`); the usual flat object of scalars costs one look at its values before
/// it is dropped as serde_json drops it.
pub(crate) struct SharedValue(ManuallyDrop<Arc<Value>>);

impl SharedValue {
    pub(crate) fn new(value: Value) -> Self {
        Self(ManuallyDrop::new(Arc::new(value)))
    }

    /// The value, copied first if it is shared.
    pub(crate) fn make_mut(&mut self) -> &mut Value {
        if !self.0.is_unique() {
            *self = Self::new(clone_value(&self.0));
        }
        // Unique now, so nothing is copied here.
        Arc::make_mut(&mut self.0)
    }

    /// The value itself when unshared; a copy otherwise.
    pub(crate) fn into_inner(self) -> Value {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the `Arc` taken here is taken once.
        let shared = unsafe { ManuallyDrop::take(&mut this.0) };
        match Arc::try_unique(shared) {
            Ok(unique) => UniqueArc::into_inner(unique),
            Err(shared) => clone_value(&shared),
        }
    }
}

impl Drop for SharedValue {
    fn drop(&mut self) {
        // SAFETY: this is the drop of `self`; the `Arc` is not used after it is taken.
        let shared = unsafe { ManuallyDrop::take(&mut self.0) };
        // Unshared: freed with no atomic write. Shared: an ordinary decrement.
        if let Ok(unique) = Arc::try_unique(shared) {
            // Moved out rather than dropped in place: a `UniqueArc`'s drop decrements the
            // count. A shallow value (the usual arguments) is then dropped as serde_json drops
            // it; a nested one is taken apart without recursion.
            let shallow = is_shallow(&unique);
            let value = UniqueArc::into_inner(unique);
            if shallow {
                drop(value);
            } else {
                free_nested(value);
            }
        }
    }
}

impl Clone for SharedValue {
    #[inline]
    fn clone(&self) -> Self {
        Self(ManuallyDrop::new(Arc::clone(&self.0)))
    }
}

impl Deref for SharedValue {
    type Target = Value;

    #[inline]
    fn deref(&self) -> &Value {
        &self.0
    }
}

impl PartialEq for SharedValue {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || values_equal(self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        use crate::tool::nesting::free;
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
                free(second.into_inner());
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
