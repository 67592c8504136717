//! The bound on how deeply JSON may nest, and the walks that respect it without recursion.
//!
//! Parsing, validating, copying, comparing, printing and dropping a `serde_json::Value` all
//! recurse once per level of nesting. A model can write (and a caller can build) JSON
//! thousands of levels deep, which would overflow a 2 MiB stack (a Tokio worker's) and abort
//! the process. So every entry point measures nesting first, with the loops here (which keep
//! their own stack on the heap), and refuses what is deeper than [`MAX_JSON_DEPTH`]; what
//! Toolsmith owns and frees, copies or compares regardless of depth ([`free_value`],
//! [`clone_value`], [`values_equal`], [`values_identical`]) is handled without recursion too.

use std::fmt;

use serde_json::{Map, Value};

use crate::tool::text_scan::{JsonTextExcess, scan};

/// The deepest nesting of arrays and objects Toolsmith reads, validates or renders.
///
/// `1` and `"a"` nest 0 levels, `[1]` and `{"a": 1}` one, `{"a": [1]}` two. Arguments,
/// results, schemas and provider texts nested deeper are refused before anything walks them
/// recursively: a call's arguments with a
/// [`ToolError::InvalidArguments`](crate::ToolError::InvalidArguments) that says they are
/// "nested deeper than 128 levels". 128 is the recursion limit serde_json parses text with
/// (it reads up to 127 levels; [`repair_json`](crate::provider::repair_json) reads text of
/// exactly 128 through its JSON5 reader), far beyond what any tool's arguments need
/// (OpenAI's strict mode allows 10 levels of objects), and shallow enough that every
/// recursive walk of a value that deep (the JSON5 reader, validation, a strict or Gemini
/// schema transform, printing, dropping) fits in a 2 MiB thread stack, in debug builds too.
pub const MAX_JSON_DEPTH: usize = 128;

/// JSON nested deeper than [`MAX_JSON_DEPTH`]; displayed as "nested deeper than 128 levels",
/// for the caller to say what was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep;

impl fmt::Display for TooDeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nested deeper than {MAX_JSON_DEPTH} levels")
    }
}

impl std::error::Error for TooDeep {}

impl TooDeep {
    /// The reason an [`InvalidArguments`](crate::ToolError::InvalidArguments) error gives for
    /// a call's arguments: "the arguments are nested deeper than 128 levels; …".
    pub(crate) fn in_arguments(self) -> String {
        format!("the arguments are {self}; send them with less nesting")
    }

    /// [`in_arguments`](Self::in_arguments) for arguments at hand, naming the first argument
    /// too deep within them ("…, in '/data'; …"), so that a caller with many arguments knows
    /// which one to send with less nesting. Only for arguments [`check_depth`] refused.
    pub(crate) fn in_arguments_at(self, arguments: &Value) -> String {
        let deepest = match arguments {
            // The arguments object is the first level: each argument has one fewer.
            Value::Object(map) => map
                .iter()
                .find(|(_, value)| !nests_within(value, MAX_JSON_DEPTH - 1)),
            _ => None,
        };
        match deepest {
            Some((name, _)) => format!(
                "the arguments are {self}, in '/{}'; send them with less nesting",
                crate::reading::tool_args::escape_pointer(name)
            ),
            None => self.in_arguments(),
        }
    }
}

/// Whether `value` nests arrays and objects no deeper than [`MAX_JSON_DEPTH`] (see
/// [`nests_within`]).
#[inline]
pub(crate) fn check_depth(value: &Value) -> Result<(), TooDeep> {
    if nests_within(value, MAX_JSON_DEPTH) {
        Ok(())
    } else {
        Err(TooDeep)
    }
}

/// Whether `value` nests arrays and objects no deeper than `max_depth`. A loop over the
/// containers only, stopping at the first one too deep; scalars are never stacked, so a flat
/// object of scalars costs one pass over its values and no allocation.
///
/// Public for code that holds a value it did not parse, to check it against
/// [`MAX_JSON_DEPTH`] before anything copies, compares or prints it recursively.
///
/// ```
/// use serde_json::json;
/// use toolsmith::nests_within;
///
/// assert!(nests_within(&json!({"a": [1]}), 2));
/// assert!(!nests_within(&json!({"a": [[1]]}), 2));
/// assert!(nests_within(&json!([]), 1));
/// ```
#[inline]
pub fn nests_within(value: &Value, max_depth: usize) -> bool {
    // The containers still to look into, with their depth (the root's is 1).
    let mut pending: Vec<(&Value, usize)> = Vec::new();
    let mut next = Some((value, 1));
    while let Some((container, depth)) = next {
        if depth > max_depth {
            return false;
        }
        match container {
            Value::Array(items) => stack_containers(&mut pending, items.iter(), depth + 1),
            Value::Object(map) => stack_containers(&mut pending, map.values(), depth + 1),
            _ => {}
        }
        next = pending.pop();
    }
    true
}

fn stack_containers<'a>(
    pending: &mut Vec<(&'a Value, usize)>,
    children: impl Iterator<Item = &'a Value>,
    depth: usize,
) {
    pending.extend(
        children
            .filter(|child| is_container(child))
            .map(|child| (child, depth)),
    );
}

/// Where JSON (or JSON5) text first nests brackets deeper than `max_depth`: the byte offset
/// of that bracket, or `None`. A byte scan that counts `[` and `{` outside strings and
/// comments, to run before handing untrusted text to a recursive parser.
///
/// ```
/// use toolsmith::json_text_too_deep;
///
/// assert_eq!(json_text_too_deep(br#"{"a": [1, "[[[["]}"#, 2), None);
/// assert_eq!(json_text_too_deep(br#"{"a": [[1]]}"#, 2), Some(7));
/// ```
///
/// It reads strings (either quote, with escapes) and comments (`//` and `/* */`) as the
/// JSON5 reader does, so it never counts less nesting than that reader would walk: where the
/// two could disagree (a quote or a `/` that is not valid where it stands), the reader stops
/// with an error at that byte, and the scan has counted every bracket before it. Scan the
/// very text the reader is given: a quote before it (say, in a Markdown fence's language
/// tag) would hide the brackets after it.
pub fn json_text_too_deep(text: &[u8], max_depth: usize) -> Option<usize> {
    // The one scan, with no bound on values (it counts them all the same: a branch per `,`).
    match scan(text, max_depth, usize::MAX, false) {
        Some(JsonTextExcess::TooDeep { at, .. }) => Some(at),
        _ => None,
    }
}

/// Whether `text` (JSON, or the JSON5 a model may write) nests no deeper than
/// [`MAX_JSON_DEPTH`]; see [`json_text_too_deep`].
pub(crate) fn check_text_depth(text: &str) -> Result<(), TooDeep> {
    match json_text_too_deep(text.as_bytes(), MAX_JSON_DEPTH) {
        Some(_) => Err(TooDeep),
        None => Ok(()),
    }
}

/// Drops `value` one level at a time (serde_json's own drop recurses once per level): the
/// drop for values Toolsmith owns that a caller may have built arbitrarily deep. A value
/// whose children are all scalars (a call's usual arguments) is dropped as serde_json drops
/// it, which goes one level down; only a value with nested containers is taken apart.
///
/// Public for code that holds a value it did not parse, which may be nested deeper than a
/// stack can drop recursively.
///
/// ```
/// use serde_json::Value;
/// use toolsmith::free_value;
///
/// let mut deep = Value::from(1);
/// for _ in 0..100_000 {
///     deep = Value::Array(vec![deep]);
/// }
/// free_value(deep);
/// ```
#[inline]
pub fn free_value(value: Value) {
    if is_shallow(&value) {
        drop(value);
    } else {
        free_nested(value);
    }
}

/// Whether serde_json's own drop (or copy, or comparison) of `value` recurses at most one
/// level: a scalar, or an array or object of scalars.
#[inline]
pub(crate) fn is_shallow(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.iter().any(is_container),
        Value::Object(map) => !map.values().any(is_container),
        _ => true,
    }
}

/// [`free_value`] for a value with nested containers: taken apart with a heap stack.
#[inline(never)]
pub(crate) fn free_nested(value: Value) {
    let mut pending: Vec<Value> = vec![value];
    while let Some(value) = pending.pop() {
        // Containers move to `pending`; scalars (and the emptied container) drop here.
        match value {
            Value::Array(items) => {
                for item in items {
                    if is_container(&item) {
                        pending.push(item);
                    }
                }
            }
            Value::Object(map) => {
                for (_, item) in map {
                    if is_container(&item) {
                        pending.push(item);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A copy of `value` at any depth: serde_json's own (recursive) clone within
/// [`MAX_JSON_DEPTH`], a loop beyond it. Free a copy that may be deep with
/// [`free_value`](crate::free_value).
///
/// ```
/// use serde_json::{Value, json};
/// use toolsmith::{clone_value, free_value};
///
/// assert_eq!(clone_value(&json!({"a": [1]})), json!({"a": [1]}));
/// let mut deep = Value::from(1);
/// for _ in 0..100_000 {
///     deep = Value::Array(vec![deep]);
/// }
/// let copy = clone_value(&deep);
/// free_value(copy);
/// free_value(deep);
/// ```
pub fn clone_value(value: &Value) -> Value {
    if check_depth(value).is_ok() {
        value.clone()
    } else {
        clone_iteratively(value)
    }
}

/// A container being copied: what is left of the original, the copy so far, and the key it
/// goes under in its parent (`None` in an array, or for the root).
struct Partial<'a> {
    rest: Rest<'a>,
    copy: Value,
    key: Option<&'a String>,
}

enum Rest<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(serde_json::map::Iter<'a>),
}

impl<'a> Partial<'a> {
    /// A partial copy of `container`, or `None` for a scalar.
    fn open(container: &'a Value, key: Option<&'a String>) -> Option<Self> {
        let (rest, copy) = match container {
            Value::Array(items) => (
                Rest::Array(items.iter()),
                Value::Array(Vec::with_capacity(items.len())),
            ),
            Value::Object(map) => (Rest::Object(map.iter()), Value::Object(Map::new())),
            _ => return None,
        };
        Some(Self { rest, copy, key })
    }

    /// The next child to copy, with its key in an object.
    fn next_child(&mut self) -> Option<(Option<&'a String>, &'a Value)> {
        match &mut self.rest {
            Rest::Array(items) => items.next().map(|item| (None, item)),
            Rest::Object(entries) => entries.next().map(|(key, value)| (Some(key), value)),
        }
    }

    /// Adds a copied child.
    fn push(&mut self, key: Option<&String>, child: Value) {
        match (&mut self.copy, key) {
            (Value::Array(items), _) => items.push(child),
            (Value::Object(map), Some(key)) => {
                map.insert(key.clone(), child);
            }
            _ => {}
        }
    }
}

fn clone_iteratively(value: &Value) -> Value {
    let Some(root) = Partial::open(value, None) else {
        return value.clone();
    };
    let mut open = vec![root];
    loop {
        let Some(top) = open.last_mut() else {
            return Value::Null;
        };
        match top.next_child() {
            Some((key, child)) => match Partial::open(child, key) {
                Some(partial) => open.push(partial),
                None => top.push(key, child.clone()),
            },
            None => {
                let Some(done) = open.pop() else {
                    return Value::Null;
                };
                match open.last_mut() {
                    Some(parent) => parent.push(done.key, done.copy),
                    None => return done.copy,
                }
            }
        }
    }
}

/// Whether two values are equal, as `==` says, compared with a loop rather than recursion.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    compare(a, b, KeyOrder::Ignored)
}

/// Whether two values are the same JSON text to be: [`values_equal`], and every object's
/// keys in the same order (which `==` does not look at, and a schema's reader sees).
pub(crate) fn values_identical(a: &Value, b: &Value) -> bool {
    compare(a, b, KeyOrder::Compared)
}

/// Whether [`compare`] holds objects with the same keys in another order equal.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyOrder {
    Ignored,
    Compared,
}

fn compare(a: &Value, b: &Value, key_order: KeyOrder) -> bool {
    let mut pending = vec![(a, b)];
    while let Some(pair) = pending.pop() {
        match pair {
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                pending.extend(a.iter().zip(b));
            }
            (Value::Object(a), Value::Object(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                if key_order == KeyOrder::Compared {
                    for ((key_a, a), (key_b, b)) in a.iter().zip(b) {
                        if key_a != key_b {
                            return false;
                        }
                        pending.push((a, b));
                    }
                } else {
                    for (key, a) in a {
                        match b.get(key) {
                            Some(b) => pending.push((a, b)),
                            None => return false,
                        }
                    }
                }
            }
            (a, b) => {
                // Scalars, or a container against something else.
                if is_container(a) || is_container(b) || a != b {
                    return false;
                }
            }
        }
    }
    true
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Array(_) | Value::Object(_))
}

/// Helpers for the depth tests of the crate's modules.
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::Value;

    /// `levels` arrays around `1`, built without recursion (free it with
    /// [`free_value`](super::free_value)).
    pub(crate) fn nested(levels: usize) -> Value {
        let mut value = Value::from(1);
        for _ in 0..levels {
            value = Value::Array(vec![value]);
        }
        value
    }

    /// Runs `test` on a thread with a Tokio worker's 2 MiB stack, where a recursion once per
    /// level of a deep value overflows and aborts the test binary.
    pub(crate) fn on_small_stack(test: impl FnOnce() + Send + 'static) {
        let joined = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(test)
            .expect("spawn a test thread")
            .join();
        if let Err(payload) = joined {
            std::panic::resume_unwind(payload);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{nested, on_small_stack};
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_is_counted_in_containers() {
        assert!(check_depth(&json!("x")).is_ok());
        assert!(check_depth(&nested(MAX_JSON_DEPTH)).is_ok());
        assert_eq!(check_depth(&nested(MAX_JSON_DEPTH + 1)), Err(TooDeep));
        // The deepest branch counts, wherever it is: three levels above `nested`.
        let wide = json!({"a": 1, "b": [2, {"c": nested(MAX_JSON_DEPTH - 3)}], "d": {}});
        assert!(check_depth(&wide).is_ok());
        let wide = json!({"a": 1, "b": [2, {"c": nested(MAX_JSON_DEPTH - 2)}], "d": {}});
        assert!(check_depth(&wide).is_err());
        assert_eq!(
            TooDeep.to_string(),
            format!("nested deeper than {MAX_JSON_DEPTH} levels")
        );
    }

    #[test]
    fn text_depth_counts_brackets_outside_strings() {
        let at = |open: &str, levels: usize| format!("{}1", open.repeat(levels));
        assert!(check_text_depth(&at("[", MAX_JSON_DEPTH)).is_ok());
        assert!(check_text_depth(&at("[", MAX_JSON_DEPTH + 1)).is_err());
        assert!(check_text_depth(&at("{a:", MAX_JSON_DEPTH + 1)).is_err());
        // Siblings do not add up.
        assert!(check_text_depth(&"[[]]".repeat(10_000)).is_ok());
        // Brackets in strings, with escaped quotes, in either quote.
        let quoted = format!(r#"["\"{}", '\'{}']"#, "[".repeat(500), "{".repeat(500));
        assert!(check_text_depth(&quoted).is_ok());
        // Stray closers do not make room for more openers.
        let stray = format!("{}{}", "]".repeat(500), at("[", MAX_JSON_DEPTH + 1));
        assert!(check_text_depth(&stray).is_err());
        // Comments are skipped as JSON5 skips them: a quote in one opens no string.
        let deep = at("[", MAX_JSON_DEPTH + 1);
        for comment in [
            "// it's\n",
            "/* it's */",
            "/* \" */",
            "//\"\r",
            "// ' \u{2028}",
            "// € ' \u{2029}",
        ] {
            let text = format!("[{comment}{deep}");
            assert!(check_text_depth(&text).is_err(), "{comment:?}");
        }
        let commented = format!("[/* {} */ // {}\n1]", "[".repeat(500), "{".repeat(500));
        assert!(check_text_depth(&commented).is_ok());
        // `/*/` does not close the comment it opens, as in JSON5.
        let text = format!("/*/ {} */1", "[".repeat(500));
        assert!(check_text_depth(&text).is_ok());
    }

    #[test]
    fn deep_values_are_measured_copied_compared_and_freed_on_a_small_stack() {
        on_small_stack(|| {
            for levels in [10_000, 100_000] {
                // Not `json!`, which copies the nested value recursively.
                let mut map = Map::new();
                map.insert("k".to_owned(), nested(levels));
                map.insert("s".to_owned(), json!("x"));
                let value = Value::Object(map);
                assert_eq!(check_depth(&value), Err(TooDeep));
                let copy = clone_value(&value);
                assert!(values_equal(&value, &copy));
                assert!(values_identical(&value, &copy));
                let mut other = clone_value(&value);
                other["s"] = json!("y");
                assert!(!values_equal(&value, &other));
                assert!(!values_identical(&value, &other));
                free_value(value);
                free_value(copy);
                free_value(other);
            }
        });
    }

    #[test]
    fn copies_and_comparisons_match_serde_json() {
        let samples = [
            json!(null),
            json!([1, [2, {"a": [], "b": {}}], "x"]),
            json!({"a": {"b": [1.5, true, null]}, "c": "d"}),
        ];
        for a in &samples {
            assert_eq!(&clone_iteratively(a), a);
            for b in &samples {
                assert_eq!(values_equal(a, b), a == b, "{a} {b}");
            }
        }
        // Key order does not matter to equality, as in serde_json.
        assert!(values_equal(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        assert!(!values_equal(&json!({"a": 1}), &json!({"b": 1})));
        assert!(!values_equal(&json!([[]]), &json!([{}])));
    }

    #[test]
    fn identical_values_are_equal_with_their_keys_in_the_same_order() {
        let samples = [
            json!(null),
            json!([1, [2, {"a": [], "b": {}}], "x"]),
            json!({"a": {"b": [1.5, true, null]}, "c": "d"}),
        ];
        for a in &samples {
            for b in &samples {
                assert_eq!(values_identical(a, b), a == b, "{a} {b}");
            }
        }
        let ordered = json!({"p": {"a": 1, "b": 2}});
        assert!(values_identical(&ordered, &json!({"p": {"a": 1, "b": 2}})));
        assert!(!values_identical(&ordered, &json!({"p": {"b": 2, "a": 1}})));
        assert!(!values_identical(
            &json!({"a": 1}),
            &json!({"a": 1, "b": 2})
        ));
        assert!(!values_identical(&json!([[]]), &json!([{}])));
    }
}
