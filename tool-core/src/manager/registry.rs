//! The registered tools of a manager: looked up by calls without a lock, listed in
//! registration order, changed one change at a time.

use std::hash::Hash;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use seize::Guard as _;

use crate::Tool;
use crate::manager::RegisteredTool;
use crate::tool::names::same_name;

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
/// A removed entry is freed once every thread that was inside a call's synchronous part (a
/// look-up, a validation, a synchronous answer, an async tool's first poll) when it was
/// removed has left it (a call that suspends holds a reference of its own), so a removed
/// tool is released as soon as the calls running when it was removed end. That
/// needs the change's reclamation batch handed over at once: see [`RegistryChange`]'s `Drop`.
pub(crate) struct Registry {
    tools: papaya::HashMap<Arc<str>, Arc<RegisteredTool>, Hasher>,
    /// Held for every change, so that a check and the change that follows it are one step,
    /// and so that indexes kept beside the registry change in the registry's order. Holds the
    /// number the next registered tool gets (listings sort by it).
    changes: Mutex<u64>,
    /// Counts the changes of the registry (registrations, removals, a tool's settings
    /// changed), for what is built from it and kept until it changes.
    generation: AtomicU64,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            tools: papaya::HashMap::builder()
                .hasher(Hasher::default())
                .collector(seize::Collector::new().batch_size(RECLAMATION_BATCH))
                .build(),
            changes: Mutex::new(0),
            generation: AtomicU64::new(0),
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
        self.tools.get(&LookedUp(name))
    }
}

/// A name looked up in the registry: hashed as the registered `Arc<str>` names are, and
/// compared with [`same_name`], in place, rather than through `==`'s call to `bcmp` (a call's
/// look-up compares the name once).
struct LookedUp<'a>(&'a str);

impl Hash for LookedUp<'_> {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As `Arc<str>` hashes: as its `str`.
        self.0.hash(state);
    }
}

impl papaya::Equivalent<Arc<str>> for LookedUp<'_> {
    #[inline]
    fn equivalent(&self, key: &Arc<str>) -> bool {
        same_name(self.0, key)
    }
}

/// A change in progress: other changes wait until it is dropped; calls do not.
pub(crate) struct RegistryChange<'r> {
    next_number: MutexGuard<'r, u64>,
    generation: &'r AtomicU64,
    map: &'r papaya::HashMap<Arc<str>, Arc<RegisteredTool>, Hasher>,
    tools: papaya::HashMapRef<'r, Arc<str>, Arc<RegisteredTool>, Hasher, papaya::LocalGuard<'r>>,
}

/// The most threads that may be inside a synchronous section (a look-up, a validation, a
/// synchronous answer, an async tool's first poll) at the moment of a change for what the
/// change removed to be released as soon as they leave; with more, it is released at a
/// later change or when the manager is dropped.
const RECLAMATION_BATCH: usize = 64;

impl Drop for RegistryChange<'_> {
    /// Closes the change's reclamation batch.
    ///
    /// seize collects retired objects in a per-thread batch and hands the batch over for
    /// reclamation only when it holds at least one object for each thread inside a call at
    /// that moment; until then, what a change removed would stay alive, and with it a removed
    /// tool. Padding the batch with empty objects up to its size hands it over now; the
    /// padding left in the next batch costs nothing.
    fn drop(&mut self) {
        let guard = self.map.guard();
        for _ in 0..RECLAMATION_BATCH {
            // SAFETY: a dangling pointer to a zero-sized value is valid for a reclaimer that
            // does nothing, and no thread can reach it.
            unsafe { guard.defer_retire(NonNull::<()>::dangling().as_ptr(), reclaim_nothing) };
        }
    }
}

/// The reclaimer of the padding: there is nothing to free.
unsafe fn reclaim_nothing(_: *mut (), _: &seize::Collector) {}

impl RegistryChange<'_> {
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    /// Adds `entry` as `name`, numbered after every tool registered so far, and returns it as
    /// registered. The caller has checked that the name is free (under this same change).
    pub(crate) fn insert(
        &mut self,
        name: Arc<str>,
        mut entry: RegisteredTool,
    ) -> Arc<RegisteredTool> {
        entry.registration = *self.next_number;
        *self.next_number += 1;
        let entry = Arc::new(entry);
        self.tools.insert(name, Arc::clone(&entry));
        self.generation.fetch_add(1, Ordering::Release);
        entry
    }

    /// Replaces the entry registered as `name` with a copy that `edit` changed (it keeps its
    /// place in the registration order), and returns the copy; `None` when no tool has that
    /// name.
    pub(crate) fn update(
        &mut self,
        name: &str,
        edit: impl FnOnce(&mut RegisteredTool),
    ) -> Option<Arc<RegisteredTool>> {
        let current = self.tools.get(name)?;
        let mut updated = RegisteredTool::clone(current);
        edit(&mut updated);
        let updated = Arc::new(updated);
        self.tools.insert(Arc::from(name), Arc::clone(&updated));
        // A batch's calls checked against the old entry and still waiting take the new one.
        self.generation.fetch_add(1, Ordering::Release);
        Some(updated)
    }

    /// Removes the tool registered as `name`, returning it.
    pub(crate) fn remove(&mut self, name: &str) -> Option<Arc<RegisteredTool>> {
        let removed = self.tools.remove(name).cloned();
        if removed.is_some() {
            self.generation.fetch_add(1, Ordering::Release);
        }
        removed
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
            generation: &self.generation,
            map: &self.tools,
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

    /// The number of changes made so far to the registry: what is built from it at one
    /// number holds until it moves.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.pin().get(name).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }
}
