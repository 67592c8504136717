//! Whole floats written as integers: what [`from_value`](super::lenient::from_value) reads
//! once more when a read failed, for the shapes serde reads through its own buffer
//! (untagged and tagged enums, flattened structs), which take no float for an integer.
//!
//! Not generic, so it is compiled once whatever the types read.

use serde_json::Value;

use crate::reading::lenient::{WholeNumber, whole_number};
use crate::tool::nesting::check_depth;

/// A copy of `value` with each whole float (`5.0`, `-2e3`) in the range of `i64` or `u64`
/// written as the integer it is; `None` when `value` holds none, or nests deeper than
/// [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) (which the reader refuses anyway). A whole
/// float beyond 64 bits stays a float: serde's buffer holds no wider integer.
#[inline(never)]
pub(crate) fn as_integers(value: &Value) -> Option<Value> {
    if check_depth(value).is_err() || !holds_one(value) {
        return None;
    }
    let mut copy = value.clone();
    convert(&mut copy);
    Some(copy)
}

/// Drops a copy [`as_integers`] made: out of line, for generic callers, so that the drop is
/// compiled once.
#[inline(never)]
pub(crate) fn discard(copy: Option<Value>) {
    drop(copy);
}

/// The integer a whole float in 64-bit range is, as a JSON integer.
fn integer_of(value: &Value) -> Option<Value> {
    match value {
        Value::Number(n) if n.is_f64() => match whole_number(value)? {
            WholeNumber::I64(i) => Some(i.into()),
            WholeNumber::U64(u) => Some(u.into()),
            WholeNumber::I128(_) | WholeNumber::U128(_) => None,
        },
        _ => None,
    }
}

/// Whether `value` holds a whole float [`integer_of`] converts. Recurses once per level:
/// the nesting is checked first.
fn holds_one(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(holds_one),
        Value::Object(map) => map.values().any(holds_one),
        scalar => integer_of(scalar).is_some(),
    }
}

/// Writes each whole float in `value` as its integer.
fn convert(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(convert),
        Value::Object(map) => map.values_mut().for_each(convert),
        scalar => {
            if let Some(integer) = integer_of(scalar) {
                *scalar = integer;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_floats_in_64_bit_range_become_integers_at_any_depth() {
        let sent = json!({"a": 5.0, "b": [-2.0, 1.5, 3], "c": {"d": 1e19, "e": "6.0"}, "f": -0.0});
        let converted = as_integers(&sent).expect("holds whole floats");
        assert_eq!(
            converted,
            json!({"a": 5, "b": [-2, 1.5, 3], "c": {"d": 10_000_000_000_000_000_000u64, "e": "6.0"}, "f": 0})
        );
        assert!(converted["a"].is_u64());
        assert!(converted["b"][0].is_i64());
    }

    #[test]
    fn nothing_is_copied_without_a_whole_float_to_convert() {
        assert_eq!(as_integers(&json!({"a": 5, "b": [1.5, "7.0", null]})), None);
        // Beyond 64 bits a float stays one.
        assert_eq!(as_integers(&json!([1e20, -1e19])), None);
        assert_eq!(as_integers(&json!(1.0)), Some(json!(1)));
    }

    #[test]
    fn values_nested_too_deep_are_left_alone() {
        use crate::tool::nesting::free_value;
        use crate::tool::nesting::testing::on_small_stack;
        on_small_stack(|| {
            // A whole float at the bottom is not looked for: the walk would recurse.
            let mut deep = json!([5.0]);
            for _ in 0..10_000 {
                deep = Value::Array(vec![deep]);
            }
            assert_eq!(as_integers(&deep), None);
            free_value(deep);
        });
    }
}
