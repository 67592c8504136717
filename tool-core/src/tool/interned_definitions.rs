//! The process's table of definitions shared by the tools of one type whose definitions are
//! equal, which [`ToolImpl::shared_definition`]'s default uses.
//!
//! A tool that builds its definition when asked (every `#[tool_fn]` tool, most hand-written
//! ones) gave each session that registered it a copy of its own: a server with a session per
//! conversation held every tool's schemas (a few kilobytes a tool) once per conversation.
//! Through this table, a definition equal to the one its type gave before is dropped for
//! that one. Sharing is decided by equality, so a type whose instances describe themselves
//! differently (a name or schema from the instance) is correct too: its definitions are
//! not shared once two differ. Equality here includes the order of each schema object's
//! keys, which `==` leaves out: a model reads the properties in the tool's order.
//!
//! Done here rather than by the macro: any code `#[tool_fn]` generated per tool for it (a
//! cache, a key, a method) cost a 200-tool crate's incremental rebuild 5 to 10 % more
//! instructions, and its full build 3 to 10 %.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use crate::tool::nesting::values_identical;
use crate::{Args, Tool, ToolDefinition};

/// What the table knows of the definitions one `definition` method gave.
enum Interned {
    /// All were equal to this one.
    Shared(Arc<Tool>),
    /// Two differed: the type's definitions depend on the instance, and are not shared.
    Varies,
}

/// The table, by the address of the `definition` method of each tool type seen.
///
/// The address identifies the type without a `'static` bound (as `TypeId` would need). A
/// method copied into two codegen units makes two entries at worst, and two methods the
/// linker merged are compared like any two definitions: equality decides, so no key can
/// make a tool share a definition that is not its own.
fn table() -> &'static RwLock<HashMap<usize, Interned>> {
    static TABLE: OnceLock<RwLock<HashMap<usize, Interned>>> = OnceLock::new();
    TABLE.get_or_init(RwLock::default)
}

/// `definition`, built by the method at `key`, as a shared value: the one its type gave
/// before when the two are equal, else a new one (kept for the next).
pub(crate) fn intern(key: *const (), definition: Tool) -> Arc<Tool> {
    let key = key as usize;
    match table()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        Some(Interned::Shared(shared)) if identical(shared, &definition) => {
            return Arc::clone(shared);
        }
        Some(Interned::Varies) => return Arc::new(definition),
        Some(Interned::Shared(_)) | None => {}
    }
    let mut table = table().write().unwrap_or_else(PoisonError::into_inner);
    match table.entry(key) {
        Entry::Vacant(entry) => {
            let shared = Arc::new(definition);
            entry.insert(Interned::Shared(Arc::clone(&shared)));
            shared
        }
        // Another thread may have put an equal one in meanwhile.
        Entry::Occupied(entry) => match entry.get() {
            Interned::Shared(shared) if identical(shared, &definition) => Arc::clone(shared),
            Interned::Shared(_) => {
                *entry.into_mut() = Interned::Varies;
                Arc::new(definition)
            }
            Interned::Varies => Arc::new(definition),
        },
    }
}

/// Whether `a` and `b` are the same definition, down to the order of their schemas' keys:
/// `==`, except that it compares JSON objects as maps.
fn identical(a: &Tool, b: &Tool) -> bool {
    match (a, b) {
        (Tool::SingleCommand(a), Tool::SingleCommand(b)) => same_command(a, b),
        (Tool::MultiCommands(group_a, a), Tool::MultiCommands(group_b, b)) => {
            group_a == group_b
                && a.len() == b.len()
                && a.iter().zip(b).all(|(a, b)| same_command(a, b))
        }
        _ => false,
    }
}

fn same_command(a: &ToolDefinition, b: &ToolDefinition) -> bool {
    // Every field named, so that a field added later is compared too.
    let ToolDefinition {
        name,
        category,
        description,
        arguments,
        returns,
        annotations,
        group_description,
    } = a;
    let same_schema = |a: &Args, b: &Args| values_identical(&a.tree(), &b.tree());
    *name == b.name
        && *category == b.category
        && *description == b.description
        && same_schema(arguments, &b.arguments)
        && match (returns, &b.returns) {
            (Some(a), Some(b)) => same_schema(a, b),
            (None, None) => true,
            _ => false,
        }
        && *annotations == b.annotations
        && *group_description == b.group_description
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Args, ToolDefinition, scheme};

    fn named(name: &str) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            name,
            "A tool.",
            Args::new(scheme::object().build()),
        ))
    }

    /// Distinct keys for the tests, as distinct methods would be.
    static KEYS: [u8; 4] = [0; 4];

    fn key(index: usize) -> *const () {
        std::ptr::from_ref(&KEYS[index]).cast()
    }

    #[test]
    fn equal_definitions_of_one_type_are_shared() {
        let first = intern(key(0), named("same"));
        let again = intern(key(0), named("same"));
        assert!(Arc::ptr_eq(&first, &again));
        // Another type's equal definition is not its: a key is one type.
        let other = intern(key(1), named("same"));
        assert!(!Arc::ptr_eq(&first, &other));
    }

    #[test]
    fn a_type_whose_definitions_differ_shares_none_after() {
        let one = intern(key(2), named("one"));
        let two = intern(key(2), named("two"));
        assert_eq!((one.name(), two.name()), ("one", "two"));
        let one_again = intern(key(2), named("one"));
        assert_eq!(one_again.name(), "one");
        assert!(!Arc::ptr_eq(&one, &one_again), "no longer shared");
    }

    /// A definition whose arguments are `properties`, in that order.
    fn with_properties(properties: &[&str]) -> Tool {
        let schema = properties
            .iter()
            .fold(scheme::object(), |object, &name| {
                object.optional(name, scheme::string())
            })
            .build();
        Tool::SingleCommand(ToolDefinition::new("ordered", "A tool.", Args::new(schema)))
    }

    fn property_names(tool: &Tool) -> Vec<&str> {
        match tool {
            Tool::SingleCommand(definition) => definition.arguments.property_names().collect(),
            Tool::MultiCommands(..) => Vec::new(),
        }
    }

    #[test]
    fn definitions_that_differ_only_in_property_order_are_not_shared() {
        // `==` compares JSON objects as maps; the order is the tool's own (the model reads
        // the properties in it), so the second must not come back in the first's order.
        let first = intern(key(3), with_properties(&["path", "text"]));
        let second = intern(key(3), with_properties(&["text", "path"]));
        assert_eq!(property_names(&first), ["path", "text"]);
        assert_eq!(property_names(&second), ["text", "path"]);
        let first_again = intern(key(3), with_properties(&["path", "text"]));
        assert_eq!(property_names(&first_again), ["path", "text"]);
    }
}
