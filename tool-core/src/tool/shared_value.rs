//! [`SharedValue`]: a reference-counted JSON value whose last owner frees it without an
//! atomic read-modify-write.

use std::mem::ManuallyDrop;
use std::ops::Deref;

use serde_json::Value;
use triomphe::{Arc, UniqueArc};

/// A JSON value shared by reference counting, as `std::sync::Arc<Value>` would be, but
/// cheaper to drop when it is not shared.
///
/// Dropping a `std` `Arc` takes two locked instructions even when it is the only reference
/// (the strong count, then the weak one). Call arguments are usually unshared when dropped,
/// and a locked instruction costs as much as a good part of a trivial call, so the last
/// owner here checks the count with a plain load and frees the value directly (`triomphe`
/// has no weak references, so a count of one means no one else can reach it). Only a
/// shared value pays the decrement.
pub(crate) struct SharedValue(ManuallyDrop<Arc<Value>>);

impl SharedValue {
    pub(crate) fn new(value: Value) -> Self {
        Self(ManuallyDrop::new(Arc::new(value)))
    }

    /// The value, copied first if it is shared.
    pub(crate) fn make_mut(&mut self) -> &mut Value {
        Arc::make_mut(&mut self.0)
    }

    /// The value itself when unshared; a copy otherwise.
    pub(crate) fn into_inner(self) -> Value {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the `Arc` taken here is taken once.
        let shared = unsafe { ManuallyDrop::take(&mut this.0) };
        match Arc::try_unique(shared) {
            Ok(unique) => UniqueArc::into_inner(unique),
            Err(shared) => Value::clone(&shared),
        }
    }
}

impl Drop for SharedValue {
    fn drop(&mut self) {
        // SAFETY: this is the drop of `self`; the `Arc` is not used after it is taken.
        let shared = unsafe { ManuallyDrop::take(&mut self.0) };
        // Unshared: freed with no atomic write. Shared: an ordinary decrement.
        if let Ok(unique) = Arc::try_unique(shared) {
            drop(UniqueArc::into_inner(unique));
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
        **self == **other
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
