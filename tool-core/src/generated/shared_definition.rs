//! One definition a `#[tool_fn]` tool, built the first time it is asked for and then shared
//! by every instance of the tool in the process (every session that registers it).
//!
//! A generated tool's definition depends on its code alone (names, docs, types), never on
//! the instance, so building it again for each session (its JSON Schemas generated again,
//! a few kilobytes each time) only cost time and memory: a server that builds a session
//! per conversation held one copy of every definition per conversation.
//!
//! Not part of the public API: the macro's generated code is its only user.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use crate::Tool;

/// The definitions built so far, by the address of the function that builds each.
///
/// Keyed by function address rather than `TypeId` so that a tool type need not be
/// `'static`. Two builders the linker merged (identical code) build the same definition, and
/// one builder copied into two codegen units builds it twice at worst: neither can make a
/// tool share another's definition.
fn built() -> &'static RwLock<HashMap<usize, Arc<Tool>>> {
    static BUILT: OnceLock<RwLock<HashMap<usize, Arc<Tool>>>> = OnceLock::new();
    BUILT.get_or_init(RwLock::default)
}

/// The definition `build` makes, built on the first call for that `build` and shared after.
pub fn shared_definition(build: fn() -> Tool) -> Arc<Tool> {
    let key = build as usize;
    let cached = built()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
        .map(Arc::clone);
    if let Some(definition) = cached {
        return definition;
    }
    // Built outside the lock: a definition's schemas may take a while, and a panic in
    // `build` (a schema that cannot be generated) leaves the map as it was.
    let definition = Arc::new(build());
    let mut built = built().write().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(built.entry(key).or_insert(definition))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Args, ToolDefinition, scheme};

    fn first() -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "first",
            "The first.",
            Args::new(scheme::object().build()),
        ))
    }

    fn second() -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "second",
            "The second.",
            Args::new(scheme::object().required("n", scheme::integer()).build()),
        ))
    }

    #[test]
    fn each_builder_builds_once_and_its_definition_is_shared() {
        let a = shared_definition(first);
        let b = shared_definition(first);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*a, first());
        let c = shared_definition(second);
        assert_eq!(c.name(), "second");
        assert!(!Arc::ptr_eq(&a, &c));
    }
}
