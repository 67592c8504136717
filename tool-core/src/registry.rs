//! [`Registry`]: a manager's tools by name, written under a lock and read on the call path
//! from a published snapshot.
//!
//! A call reads the snapshot through `arc-swap` (no lock taken, nothing that a registration
//! waits for) and borrows the tool from it, so a tool that answers synchronously runs
//! without a reference count being touched; only a tool still running after its first step
//! takes its own reference. Registration writes the map under a lock and bumps a
//! generation; the next call that finds the snapshot older than the generation publishes
//! the map as it is (sharing it, not copying it). A change after a publication copies the
//! map once, so a burst of registrations costs one copy, not one per tool.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};

use arc_swap::ArcSwap;
use indexmap::IndexMap;

use crate::manager::RegisteredTool;

/// The registered tools by name, in registration order. Hashed with foldhash: names are
/// short and looked up on every call, where SipHash would cost more than the lookup.
pub(crate) type ToolMap = IndexMap<Arc<str>, Arc<RegisteredTool>, foldhash::fast::RandomState>;

/// The map as of one generation.
struct Snapshot {
    generation: u64,
    tools: Arc<ToolMap>,
}

/// A manager's tools: see the module documentation.
pub(crate) struct Registry {
    /// The map as written. Shared with the published snapshot until the next change.
    tools: RwLock<Arc<ToolMap>>,
    /// Bumped by every change, while the write lock is held.
    generation: AtomicU64,
    /// What calls read.
    published: ArcSwap<Snapshot>,
}

impl Default for Registry {
    fn default() -> Self {
        let tools = Arc::new(ToolMap::default());
        Self {
            published: ArcSwap::from_pointee(Snapshot {
                generation: 0,
                tools: Arc::clone(&tools),
            }),
            tools: RwLock::new(tools),
            generation: AtomicU64::new(0),
        }
    }
}

impl Registry {
    /// The map as written, for readers off the call path (listings, search indexing).
    /// Holding it makes registrations wait.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Arc<ToolMap>> {
        self.tools.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the map under the write lock. `f` gets the shared map and calls
    /// `Arc::make_mut` when it changes it (copying it only if a snapshot still shares it).
    pub(crate) fn write<R>(&self, f: impl FnOnce(&mut Arc<ToolMap>) -> R) -> R {
        let mut tools = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        let result = f(&mut tools);
        // SeqCst: a call that starts after this change returned must see it.
        self.generation.fetch_add(1, Ordering::SeqCst);
        result
    }

    /// Runs `f` with the tool `name` (or `None`), read from the current snapshot.
    ///
    /// No lock is held while `f` runs, so `f` may run a tool: registering meanwhile, even
    /// from inside the tool, neither waits nor deadlocks.
    pub(crate) fn with_entry<R>(
        &self,
        name: &str,
        f: impl FnOnce(Option<&Arc<RegisteredTool>>) -> R,
    ) -> R {
        let snapshot = self.published.load();
        if snapshot.generation == self.generation.load(Ordering::SeqCst) {
            return f(snapshot.tools.get(name));
        }
        drop(snapshot);
        let tools = self.publish();
        f(tools.get(name))
    }

    /// Publishes the map as written, and returns it. Called by the first call after a change,
    /// and after a removal, so that the removed tool is released once running calls finish.
    pub(crate) fn publish(&self) -> Arc<ToolMap> {
        let (generation, tools) = {
            let tools = self.read();
            // Read under the lock: the generation cannot move while it is held.
            (self.generation.load(Ordering::SeqCst), Arc::clone(&tools))
        };
        let fresh = Arc::new(Snapshot {
            generation,
            tools: Arc::clone(&tools),
        });
        // A slower publisher never replaces a newer snapshot with an older one.
        self.published.rcu(|current| {
            if current.generation >= generation {
                Arc::clone(current)
            } else {
                Arc::clone(&fresh)
            }
        });
        tools
    }
}
