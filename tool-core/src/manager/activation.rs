//! Which tools are active: offered to the model on every request. A tool becomes active when
//! `shed` returns it (or when activated by hand); a call to an inactive tool is refused with
//! [`ToolError::NotActive`] by loops that check offers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::manager::RegisteredTool;
use crate::{Tool, ToolCallManager, ToolError};

/// Names are short and each `shed` call looks up every name it returns: foldhash, not
/// SipHash.
type Hasher = foldhash::fast::RandomState;

/// The set of active tool names, in activation order.
#[derive(Debug, Default)]
pub(crate) struct ActiveSet {
    names: RwLock<ActiveNames>,
    /// Every registered tool counts as active and `shed` is not offered
    /// ([`ToolCallManager::set_every_tool_declared`]).
    every_tool: AtomicBool,
}

/// The active names and their order.
#[derive(Debug, Default)]
struct ActiveNames {
    /// Each active name, with its place in `order`.
    places: HashMap<Arc<str>, usize, Hasher>,
    /// The names in activation order; `None` where a name was deactivated, until the holes
    /// outnumber the names (removing it from the list there and then made deregistering
    /// many active tools quadratic: 50,000 took minutes).
    order: Vec<Option<Arc<str>>>,
}

/// Holes in the order are kept up to this many even when they outnumber the names: closing
/// them costs a pass over the order.
const MIN_HOLES_CLOSED: usize = 32;

impl ActiveNames {
    /// Drops the holes from `order`, renumbering the places.
    fn close_holes(&mut self) {
        self.order.retain(Option::is_some);
        for (at, name) in self.order.iter().enumerate() {
            if let Some(name) = name
                && let Some(place) = self.places.get_mut(name)
            {
                *place = at;
            }
        }
    }
}

impl ActiveSet {
    /// Adds the names not yet active, in order; whether any was added.
    pub(crate) fn activate<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> bool {
        let mut guard = self.names.write().unwrap_or_else(PoisonError::into_inner);
        let ActiveNames { places, order } = &mut *guard;
        let mut added = false;
        for name in names {
            // Looked up before copying: a `shed` call mostly returns tools already active.
            if !places.contains_key(name) {
                let name: Arc<str> = Arc::from(name);
                places.insert(Arc::clone(&name), order.len());
                order.push(Some(name));
                added = true;
            }
        }
        added
    }

    pub(crate) fn deactivate(&self, name: &str) {
        let mut guard = self.names.write().unwrap_or_else(PoisonError::into_inner);
        let names = &mut *guard;
        if let Some(at) = names.places.remove(name) {
            names.order[at] = None;
            let holes = names.order.len() - names.places.len();
            if holes > MIN_HOLES_CLOSED && holes > names.places.len() {
                names.close_holes();
            }
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        let guard = self.names.read().unwrap_or_else(PoisonError::into_inner);
        guard.places.contains_key(name)
    }

    pub(crate) fn ordered(&self) -> Vec<String> {
        let guard = self.names.read().unwrap_or_else(PoisonError::into_inner);
        guard
            .order
            .iter()
            .flatten()
            .map(|name| String::from(&**name))
            .collect()
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

    /// Whether the tool `name` is active: `shed` returned it, it was activated by hand, or
    /// every tool is declared ([`set_every_tool_declared`](Self::set_every_tool_declared)).
    pub fn is_active(&self, name: &str) -> bool {
        (self.declares_every_tool() || self.active.contains(name)) && self.contains(name)
    }

    /// The definitions of the active tools, in activation order; when every tool is declared,
    /// every registered tool's, in registration order.
    pub fn active_definitions(&self) -> Vec<Tool> {
        if self.declares_every_tool() {
            return self.all_declarations().tools;
        }
        self.active
            .ordered()
            .iter()
            .filter_map(|name| self.get_def(name))
            .collect()
    }

    /// With `true`, every registered tool is declared to the model on every request, and
    /// `shed` is not ([`offered_tools`](Self::offered_tools)): for a session of a few tools,
    /// where a search first would cost the model a turn and the declarations little. Every
    /// registered tool is then active (tools registered later too); `shed` still answers a
    /// model that calls it. With `false` (the default), the model is offered `shed` and the
    /// tools it returned, as the specification says.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
    ///
    /// let manager = ToolCallManager::new("small");
    /// manager.register(Arc::new(FnTool::new("ping", "Answer pong.", Args::empty(),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))).unwrap();
    /// assert!(manager.check_offered("ping").is_err());
    ///
    /// manager.set_every_tool_declared(true);
    /// let offered = manager.offered_tools();
    /// assert!(offered.shed.is_none());
    /// assert_eq!(offered.tools[0].name(), "ping");
    /// assert!(manager.check_offered("ping").is_ok());
    /// ```
    pub fn set_every_tool_declared(&self, every: bool) {
        if self.active.every_tool.swap(every, Ordering::AcqRel) != every {
            self.renders.invalidate();
        }
    }

    /// Whether every registered tool is declared, `shed` not
    /// ([`set_every_tool_declared`](Self::set_every_tool_declared)).
    pub fn declares_every_tool(&self) -> bool {
        self.active.every_tool.load(Ordering::Acquire)
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
        if !self.declares_every_tool() && !self.active.contains(name) {
            return Err(ToolError::NotActive(name.to_owned()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deactivating_most_names_keeps_the_order_of_the_rest() {
        let set = ActiveSet::default();
        let names: Vec<String> = (0..200).map(|i| format!("t{i}")).collect();
        assert!(set.activate(names.iter().map(String::as_str)));
        assert!(!set.activate(["t5"]));
        // Past the point where the holes are closed, and a name deactivated twice.
        for name in names.iter().step_by(3).chain(&names[..150]) {
            set.deactivate(name);
        }
        let rest: Vec<String> = names[150..]
            .iter()
            .enumerate()
            .filter(|(i, _)| (150 + i) % 3 != 0)
            .map(|(_, name)| name.clone())
            .collect();
        assert_eq!(set.ordered(), rest);
        assert!(!set.contains("t0") && set.contains("t151"));
        assert!(set.activate(["t0"]));
        set.deactivate("t151");
        let mut expected = rest;
        expected.retain(|name| name != "t151");
        expected.push("t0".into());
        assert_eq!(set.ordered(), expected);
    }
}
