//! The registered tools of a manager: looked up by calls without a lock, listed in
//! registration order, changed one change at a time.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::Tool;
use crate::manager::RegisteredTool;

/// Names hashed with foldhash: they are short and hashed on every call, where SipHash would
/// cost more than the lookup.
type Hasher = foldhash::fast::RandomState;

/// The tools by name.
///
/// A call looks its tool up in a concurrent map (papaya) under an epoch guard instead of a
/// read lock and a reference count: the guard costs one atomic swap where the lock and the
/// count cost four locked instructions, a measurable share of a trivial call. Changes never
/// wait for calls, so a tool may register or remove tools, itself included, while it runs.
///
/// A removed entry is freed once no guard that could have seen it is held (a batch size of
/// one, instead of the collector's default batching), so a removed tool is released as soon
/// as its running calls end, as it would be with reference counting alone.
pub(crate) struct Registry {
    tools: papaya::HashMap<Arc<str>, Arc<RegisteredTool>, Hasher>,
    /// Held for every change, so that a check and the change that follows it are one step,
    /// and so that indexes kept beside the registry change in the registry's order. Holds the
    /// number the next registered tool gets (listings sort by it).
    changes: Mutex<u64>,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            tools: papaya::HashMap::builder()
                .hasher(Hasher::default())
                .collector(seize::Collector::new().batch_size(1))
                .build(),
            changes: Mutex::new(0),
        }
    }
}

/// The registry pinned for lookups: entries found through it stay valid while it is held.
///
/// Not `Send`: hold it only for synchronous work, and take an `Arc` of the entry for work
/// that awaits.
pub(crate) struct PinnedRegistry<'r> {
    tools: papaya::HashMapRef<'r, Arc<str>, Arc<RegisteredTool>, Hasher, papaya::LocalGuard<'r>>,
}

impl PinnedRegistry<'_> {
    /// The entry registered as `name`, borrowed for as long as the pin is held.
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }
}

/// A change in progress: other changes wait until it is dropped; calls do not.
pub(crate) struct RegistryChange<'r> {
    next_number: MutexGuard<'r, u64>,
    tools: papaya::HashMapRef<'r, Arc<str>, Arc<RegisteredTool>, Hasher, papaya::LocalGuard<'r>>,
}

impl RegistryChange<'_> {
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    /// Adds `entry` as `name`, numbered after every tool registered so far. The caller has
    /// checked that the name is free (under this same change).
    pub(crate) fn insert(&mut self, name: Arc<str>, mut entry: RegisteredTool) {
        entry.registration = *self.next_number;
        *self.next_number += 1;
        self.tools.insert(name, Arc::new(entry));
    }

    /// Puts `entry` in place of the tool registered as `name`, keeping its place in the
    /// registration order.
    pub(crate) fn replace(&mut self, name: &str, mut entry: RegisteredTool) {
        if let Some(old) = self.tools.get(name) {
            entry.registration = old.registration;
            self.tools.insert(Arc::from(name), Arc::new(entry));
        }
    }

    /// Removes the tool registered as `name`, returning it.
    pub(crate) fn remove(&mut self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools.remove(name).cloned()
    }
}

impl Registry {
    /// Pins the registry for lookups (no lock is taken).
    #[inline]
    pub(crate) fn pin(&self) -> PinnedRegistry<'_> {
        PinnedRegistry {
            tools: self.tools.pin(),
        }
    }

    /// The entry registered as `name`, with a reference of its own.
    pub(crate) fn entry(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.pin().get(name).cloned()
    }

    /// Starts a change; other changes wait until it is dropped.
    pub(crate) fn change(&self) -> RegistryChange<'_> {
        let next_number = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        RegistryChange {
            next_number,
            tools: self.tools.pin(),
        }
    }

    /// Runs `f` over every entry, in registration order (entries borrowed, no reference
    /// taken on each).
    pub(crate) fn in_order<R>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &RegisteredTool>) -> R,
    ) -> R {
        let tools = self.tools.pin();
        let mut entries: Vec<&RegisteredTool> = tools.values().map(|entry| &**entry).collect();
        entries.sort_unstable_by_key(|entry| entry.registration);
        f(&mut entries.into_iter())
    }

    /// Runs `f` over every definition, in registration order, while changes wait: an index
    /// built from them is in step with the registry.
    pub(crate) fn with_definitions<R>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &Tool>) -> R,
    ) -> R {
        let _no_changes = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        self.in_order(|entries| f(&mut entries.map(|entry| &*entry.definition)))
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.pin().get(name).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }
}
