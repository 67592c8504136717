//! Which tools are active: offered to the model on every request. A tool becomes active when
//! `shed` returns it (or when activated by hand); a call to an inactive tool is refused with
//! [`ToolError::NotActive`] by loops that check offers.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{PoisonError, RwLock};

use crate::manager::RegisteredTool;
use crate::{Tool, ToolCallManager, ToolError};

/// Names are short and each `shed` call looks up every name it returns: foldhash, not
/// SipHash.
type Hasher = foldhash::fast::RandomState;

/// The set of active tool names, in activation order.
#[derive(Debug, Default)]
pub(crate) struct ActiveSet {
    names: RwLock<(HashSet<String, Hasher>, Vec<String>)>,
}

impl ActiveSet {
    /// Adds the names not yet active, in order; whether any was added.
    pub(crate) fn activate<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> bool {
        let mut guard = self.names.write().unwrap_or_else(PoisonError::into_inner);
        let (set, order) = &mut *guard;
        let mut added = false;
        for name in names {
            // Looked up before copying: a `shed` call mostly returns tools already active.
            if !set.contains(name) {
                set.insert(name.to_owned());
                order.push(name.to_owned());
                added = true;
            }
        }
        added
    }

    pub(crate) fn deactivate(&self, name: &str) {
        let mut guard = self.names.write().unwrap_or_else(PoisonError::into_inner);
        let (set, order) = &mut *guard;
        if set.remove(name) {
            order.retain(|n| n != name);
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        let guard = self.names.read().unwrap_or_else(PoisonError::into_inner);
        guard.0.contains(name)
    }

    pub(crate) fn ordered(&self) -> Vec<String> {
        let guard = self.names.read().unwrap_or_else(PoisonError::into_inner);
        guard.1.clone()
    }
}

/// Set on a registration once its name is in the [`ActiveSet`], so that a `shed` call finding
/// the tool again skips the set (its lock and a look-up by name each). A hint: clear does not
/// mean inactive (a tool activated by name is not marked), only set means active. A name
/// leaves the set only when its tool is deregistered, and a tool registered anew is a new,
/// unmarked registration.
#[derive(Debug, Default)]
pub(crate) struct ActiveMark(AtomicBool);

impl ActiveMark {
    pub(crate) fn is_set(&self) -> bool {
        // Only this flag is read through it: no other memory is ordered by it.
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A registration changed in place (a copy) starts from the mark as it is.
impl Clone for ActiveMark {
    fn clone(&self) -> Self {
        Self(AtomicBool::new(self.is_set()))
    }
}

impl ToolCallManager {
    /// Activates the tools a `shed` call found (each with its name): those marked active are
    /// skipped, the others added to the active set, then marked. A tool deregistered since
    /// it was found is not activated.
    pub(crate) fn activate_found(&self, found: &[(&str, &RegisteredTool)]) {
        let unmarked = || found.iter().filter(|(_, entry)| !entry.active.is_set());
        if unmarked().next().is_none() {
            return;
        }
        // Under a change: a name `deregister` has taken out of the set would otherwise go back
        // in, and activate a tool registered anew under it. A registration changed in place
        // keeps its number, and is still the tool found.
        let change = self.registry.change();
        let registered = |&&(name, entry): &&(&str, &RegisteredTool)| {
            change
                .get(name)
                .is_some_and(|now| now.registration == entry.registration)
        };
        self.activate_registered(unmarked().filter(registered).map(|&(name, _)| name));
        drop(change);
        for (_, entry) in unmarked() {
            entry.active.set();
        }
    }

    /// Marks registered tools as active, so they are declared on later requests. Names that
    /// are not registered are returned (and not activated).
    pub fn activate(&self, names: &[String]) -> Vec<String> {
        // Under a change, as `activate_found`: a `deregister` between the look-up and the
        // activation would leave its name active.
        let change = self.registry.change();
        let (known, unknown): (Vec<&String>, Vec<&String>) =
            names.iter().partition(|name| change.get(name).is_some());
        self.activate_registered(known.into_iter().map(String::as_str));
        drop(change);
        unknown.into_iter().cloned().collect()
    }

    /// Activates tools known to be registered; the cached renderings of the offer are
    /// dropped only when a tool became active.
    pub(crate) fn activate_registered<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        if self.active.activate(names) {
            self.renders.invalidate();
        }
    }

    /// Whether the tool `name` is active.
    pub fn is_active(&self, name: &str) -> bool {
        self.active.contains(name) && self.contains(name)
    }

    /// The definitions of the active tools, in activation order.
    pub fn active_definitions(&self) -> Vec<Tool> {
        self.active
            .ordered()
            .iter()
            .filter_map(|name| self.get_def(name))
            .collect()
    }

    /// Checks that a call may be made: the tool is registered and active (the built-in `shed`
    /// always is). Loops that offer tools through `shed` run this before every call.
    pub fn check_offered(&self, name: &str) -> Result<(), ToolError> {
        if name == crate::SHED_TOOL_NAME && !self.is_empty() {
            return Ok(());
        }
        if !self.contains(name) {
            return Err(ToolError::UnknownTool(name.to_owned()));
        }
        if !self.active.contains(name) {
            return Err(ToolError::NotActive(name.to_owned()));
        }
        Ok(())
    }
}
