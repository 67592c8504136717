//! The `tools` arrays a client rendered, one for each set of declarations it was asked
//! with lately: an agent session declares the same `Arc<ToolDeclarations>` on every
//! request until its registry or active set changes (core shares it unchanged,
//! `ToolCallManager::offered_declarations`), so its tools are rendered (and their warnings
//! logged) once a set rather than once a request.
//!
//! A set is known by the identity of its `Arc`, held as a `Weak`: while the entry holds it,
//! the allocation stays, so no other set can be made at its address, and a set that was
//! dropped matches no request (nothing can reach its allocation). An equal set in another
//! `Arc` is rendered again, which costs what every request cost before.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use serde_json::value::RawValue;
use toolsmith_core::ToolDeclarations;
use toolsmith_core::provider::{Provider, RenderOptions};

use crate::model::ModelError;

/// How many sets a client keeps rendered. Several sessions may share one client, each
/// declaring its own set (and a session's set changes when `shed` activates tools): one
/// entry would be rendered again on every request of two sessions taking turns. With more
/// sessions at once than this, the least recently used are rendered again, as before.
const KEPT: usize = 16;

/// A client's rendered sets, the most recently used last. Shared by the clones of a client.
#[derive(Debug, Default)]
pub(crate) struct RenderedSets {
    entries: Mutex<Vec<Entry>>,
}

#[derive(Debug)]
struct Entry {
    set: Weak<ToolDeclarations>,
    provider: Provider,
    options: RenderOptions,
    /// `None`: the set declares no tool.
    tools: Option<Arc<RawValue>>,
}

impl Entry {
    fn is_for(
        &self,
        set: &Arc<ToolDeclarations>,
        provider: Provider,
        options: RenderOptions,
    ) -> bool {
        // The caller holds `set`, so an entry at its address holds this very set.
        std::ptr::eq(self.set.as_ptr(), Arc::as_ptr(set))
            && self.provider == provider
            && self.options == options
    }
}

impl RenderedSets {
    /// `set` as `provider`'s `tools` array with `options` (`None` when it declares no tool),
    /// rendered by `render` unless this client rendered it already. An error is not kept:
    /// the next request with the set renders, and fails, again.
    pub(crate) fn tools(
        &self,
        set: &Arc<ToolDeclarations>,
        provider: Provider,
        options: RenderOptions,
        render: impl FnOnce(&ToolDeclarations) -> Result<Option<Arc<RawValue>>, ModelError>,
    ) -> Result<Option<Arc<RawValue>>, ModelError> {
        {
            let mut entries = self.lock();
            if let Some(at) = entries
                .iter()
                .position(|entry| entry.is_for(set, provider, options))
            {
                let entry = entries.remove(at);
                let tools = entry.tools.clone();
                entries.push(entry);
                return Ok(tools);
            }
        }
        // Rendered unlocked: another session's request need not wait for it. Two requests
        // with a new set at once may both render it (and log its warnings twice).
        let tools = render(set)?;
        let mut entries = self.lock();
        entries
            .retain(|entry| entry.set.strong_count() > 0 && !entry.is_for(set, provider, options));
        if entries.len() >= KEPT {
            entries.remove(0);
        }
        entries.push(Entry {
            set: Arc::downgrade(set),
            provider,
            options,
            tools: tools.clone(),
        });
        Ok(tools)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        // The entries are whole at every await-free step; a panic elsewhere spoils none.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
