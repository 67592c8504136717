//! Deeply nested JSON for the depth tests, and a thread with a Tokio worker's stack to run
//! them on.
//!
//! serde_json builds, clones and drops a `Value` recursively, so a test that made a
//! 100,000-level value the ordinary way would overflow its own stack before reaching the
//! code under test. Here deep values are built from the inside out in a loop ([`array`],
//! [`object`]), and the test frees what it still owns with [`free`], which takes the value
//! apart one level at a time; values handed to Toolsmith (inside `ToolArguments`, a schema)
//! are freed by Toolsmith, which must do the same.

use serde_json::{Map, Value};

/// The depths every path is tested at: far past any limit, and far past a 2 MiB stack.
pub const LEVELS: [usize; 2] = [10_000, 100_000];

/// The stack of a Tokio worker thread (and of `std::thread::spawn`'s default).
pub const SMALL_STACK: usize = 2 << 20;

/// Runs `test` on a thread with a 2 MiB stack. A stack overflow aborts the whole test
/// binary (that is how these tests fail); a panic is passed on.
pub fn on_small_stack<F: FnOnce() + Send + 'static>(test: F) {
    let handle = std::thread::Builder::new()
        .name("small-stack".into())
        .stack_size(SMALL_STACK)
        .spawn(test)
        .expect("spawn a test thread");
    if let Err(payload) = handle.join() {
        std::panic::resume_unwind(payload);
    }
}

/// `[[[…1…]]]`, `levels` arrays deep; `closed: false` leaves out the closing brackets, as a
/// model cut off mid-answer would.
pub fn array_text(levels: usize, closed: bool) -> String {
    let mut text = "[".repeat(levels);
    text.push('1');
    if closed {
        text.push_str(&"]".repeat(levels));
    }
    text
}

/// `{"a":{"a":…1…}}`, `levels` objects deep; `closed: false` leaves out the closing braces.
pub fn object_text(levels: usize, closed: bool) -> String {
    let mut text = r#"{"a":"#.repeat(levels);
    text.push('1');
    if closed {
        text.push_str(&"}".repeat(levels));
    }
    text
}

/// The four deep texts of `levels`: arrays and objects, closed and cut off.
pub fn texts(levels: usize) -> Vec<String> {
    vec![
        array_text(levels, true),
        array_text(levels, false),
        object_text(levels, true),
        object_text(levels, false),
    ]
}

/// `[[[…1…]]]` as a value, `levels` arrays deep, built without recursion.
pub fn array(levels: usize) -> Value {
    let mut value = Value::from(1);
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    value
}

/// `{"a":{"a":…1…}}` as a value, `levels` objects deep, built without recursion.
pub fn object(levels: usize) -> Value {
    let mut value = Value::from(1);
    for _ in 0..levels {
        let mut map = Map::new();
        map.insert("a".to_owned(), value);
        value = Value::Object(map);
    }
    value
}

/// An object schema whose property `a` is an array of arrays of … of integers, nested
/// `levels` JSON levels deep in all (at least 3), built without recursion. It describes
/// `{"a": array(levels - 3)}`.
pub fn schema(levels: usize) -> Value {
    let mut schema = serde_json::json!({"type": "integer"});
    for _ in 0..levels.saturating_sub(3) {
        let mut array = Map::new();
        array.insert("type".to_owned(), Value::from("array"));
        array.insert("items".to_owned(), schema);
        schema = Value::Object(array);
    }
    let mut properties = Map::new();
    properties.insert("a".to_owned(), schema);
    let mut root = Map::new();
    root.insert("type".to_owned(), Value::from("object"));
    root.insert("properties".to_owned(), Value::Object(properties));
    Value::Object(root)
}

/// Drops `value` one level at a time: serde_json's own drop recurses once per level.
pub fn free(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}
