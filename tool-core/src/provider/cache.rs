//! Rendered `tools` arrays, cached per manager and rebuilt only when the registry or the
//! active set changes.
//!
//! The manager bumps a generation counter on every change (register, deregister, activate);
//! a cached rendering is used while its generation is current.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::{Provider, RenderError, RenderOptions, RenderedTools};
use crate::{ToolCallManager, ToolDeclarations};

/// Which of a manager's tools are declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Declared {
    /// Every registered tool ([`ToolCallManager::all_declarations`]).
    All,
    /// The active tools ([`ToolCallManager::active_definitions`]), without `shed`.
    Active,
    /// What the model is offered: `shed` and the active tools
    /// ([`ToolCallManager::offered_tools`]), as an agent loop declares on each request.
    Offered,
}

type Key = (Provider, Declared, RenderOptions);

/// The cache of one manager.
#[derive(Debug, Default)]
pub(crate) struct RenderCache {
    generation: AtomicU64,
    rendered: Mutex<HashMap<Key, (u64, Arc<RenderedTools>)>>,
    /// The offered declarations, shared by every request until the next change.
    offered: Mutex<Option<(u64, Arc<ToolDeclarations>)>>,
}

impl RenderCache {
    /// Marks every cached rendering stale: the registry or the active set changed.
    pub(crate) fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

impl ToolCallManager {
    /// The declarations of the `declared` tools.
    pub fn declarations(&self, declared: Declared) -> ToolDeclarations {
        match declared {
            Declared::All => self.all_declarations(),
            Declared::Active => ToolDeclarations {
                shed: None,
                tools: self.active_definitions(),
            },
            Declared::Offered => self.offered_tools(),
        }
    }

    /// [`offered_tools`](Self::offered_tools), shared: the same `Arc` until the registry or
    /// the active set changes, so a loop that declares the offer on every request copies no
    /// definition.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
    ///
    /// let manager = ToolCallManager::new("demo");
    /// manager.register(Arc::new(FnTool::new("ping", "Answer pong.", Args::empty(),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))).unwrap();
    /// let first = manager.offered_declarations();
    /// assert!(Arc::ptr_eq(&first, &manager.offered_declarations()));
    /// manager.activate(&["ping".into()]);
    /// assert_eq!(manager.offered_declarations().tools[0].name(), "ping");
    /// ```
    pub fn offered_declarations(&self) -> Arc<ToolDeclarations> {
        // Read before the declarations, as in `rendered_tools`.
        let generation = self.renders.generation.load(Ordering::Acquire);
        let mut offered = self
            .renders
            .offered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match &*offered {
            Some((at, declarations)) if *at == generation => Arc::clone(declarations),
            _ => {
                let declarations = Arc::new(self.offered_tools());
                *offered = Some((generation, Arc::clone(&declarations)));
                declarations
            }
        }
    }

    /// The `declared` tools rendered as `provider`'s `tools` array, with the report of the
    /// tools left non-strict (see [`Provider::render_tools`]), from the cache when neither
    /// the registry nor the active set changed since it was rendered.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
    /// use toolsmith::provider::{Declared, Provider, RenderOptions};
    ///
    /// let manager = ToolCallManager::new("demo");
    /// let noop = |name: &str| Arc::new(FnTool::new(name, "Do nothing.", Args::empty(),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::empty()) }));
    /// manager.register(noop("a")).unwrap();
    /// let options = RenderOptions::default();
    /// let first = manager.rendered_tools(Provider::OpenAiChat, Declared::All, &options).unwrap();
    /// let again = manager.rendered_tools(Provider::OpenAiChat, Declared::All, &options).unwrap();
    /// assert!(Arc::ptr_eq(&first, &again));
    ///
    /// manager.register(noop("b")).unwrap();
    /// let changed = manager.rendered_tools(Provider::OpenAiChat, Declared::All, &options).unwrap();
    /// assert_eq!(changed.tools.as_array().unwrap().len(), 2);
    /// assert!(changed.not_strict.is_empty());
    /// ```
    pub fn rendered_tools(
        &self,
        provider: Provider,
        declared: Declared,
        options: &RenderOptions,
    ) -> Result<Arc<RenderedTools>, RenderError> {
        let key = (provider, declared, *options);
        // Read before the declarations: a change made while rendering leaves the entry
        // stale, so the next call renders again.
        let generation = self.renders.generation.load(Ordering::Acquire);
        {
            let rendered = self
                .renders
                .rendered
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some((at, value)) = rendered.get(&key)
                && *at == generation
            {
                return Ok(Arc::clone(value));
            }
        }
        let value = Arc::new(provider.render_tools(&self.declarations(declared), options)?);
        let mut rendered = self
            .renders
            .rendered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        rendered.insert(key, (generation, Arc::clone(&value)));
        Ok(value)
    }
}
