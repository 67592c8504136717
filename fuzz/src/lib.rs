//! What the fuzz targets share: a JSON value edited at a path the fuzzer picks, so that a
//! target can start from a valid example (a tool's arguments, an API's event) and change it
//! one place at a time.

use arbitrary::Arbitrary;
use serde_json::Value;

/// One step of a path: a member of an object (made when missing), named by the target's own
/// key type `K`, or an item of an array (its index taken modulo the array's length).
#[derive(Debug, Arbitrary)]
pub enum Step<K> {
    /// The member named by the key.
    Member(K),
    /// The item at this index, modulo the length.
    Item(u8),
}

/// Sets (`Some`) or removes (`None`) the value at `path` in `value`; `name` turns a key into
/// a member's name. A step that does not fit what it meets (a member of an array, an item of
/// an empty one) ends the edit unmade; an item set past an empty array is pushed.
pub fn apply<K>(
    value: &mut Value,
    path: &[Step<K>],
    set: Option<Value>,
    name: impl Fn(&K) -> String,
) {
    let Some((last, path)) = path.split_last() else {
        if let Some(set) = set {
            *value = set;
        }
        return;
    };
    let mut place = value;
    for step in path {
        place = match (step, place) {
            (Step::Member(key), Value::Object(members)) => {
                members.entry(name(key)).or_insert(Value::Null)
            }
            (Step::Item(i), Value::Array(items)) if !items.is_empty() => {
                let len = items.len();
                &mut items[usize::from(*i) % len]
            }
            _ => return,
        };
    }
    match (last, place, set) {
        (Step::Member(key), Value::Object(members), Some(set)) => {
            members.insert(name(key), set);
        }
        (Step::Member(key), Value::Object(members), None) => {
            members.shift_remove(&name(key));
        }
        (Step::Item(i), Value::Array(items), set) if !items.is_empty() => {
            let index = usize::from(*i) % items.len();
            match set {
                Some(set) => items[index] = set,
                None => {
                    items.remove(index);
                }
            }
        }
        (Step::Item(_), Value::Array(items), Some(set)) => items.push(set),
        _ => {}
    }
}
