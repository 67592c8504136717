//! [`Args`]: a JSON Schema that describes a tool's arguments or result.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::tool::nesting::{check_depth, clone_value, free_value, values_equal};

/// A JSON Schema (draft 2020-12) value describing a tool's arguments or its result.
///
/// ```
/// use toolsmith::{Args, scheme};
///
/// let args = Args::new(scheme::object().required("path", scheme::string()).build());
/// assert_eq!(args.schema()["properties"]["path"]["type"], "string");
/// ```
///
/// A schema nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is refused when its
/// tool is registered or rendered; until then it is copied, compared, shown and dropped
/// without recursion.
///
/// A definition that a [`ToolCallManager`](crate::ToolCallManager) holds alone (one its tool
/// built when asked, rather than one the tool keeps and shares) has its schemas kept as
/// their JSON text, several times smaller than the tree: [`schema`](Self::schema)
/// reads the tree back on first use and keeps it, and the schema is the same either way.
pub struct Args(Form);

/// How a schema is held.
enum Form {
    /// As built or edited: the tree is the schema.
    Tree(Value),
    /// Compacted ([`Args::compact`]), as the registry keeps a definition it holds alone.
    Text(SchemaText),
}

/// A schema as its JSON text, which serde_json reads back to the same tree: every number in
/// it an integer (a float's text is not always read back to the same bits), nested no
/// deeper than serde_json reads.
struct SchemaText {
    text: Box<str>,
    /// The tree, once [`Args::schema`] asked for it (boxed: an `Args` of either form is the
    /// size of a tree's root).
    tree: OnceLock<Box<Value>>,
}

/// The deepest a schema kept as text may nest: what serde_json reads back.
const TEXT_MAX_DEPTH: usize = crate::MAX_JSON_DEPTH - 1;

impl SchemaText {
    /// The text of `schema`, when it reads back to the same tree.
    fn of(schema: &Value) -> Option<Self> {
        if !reads_back_alike(schema) {
            return None;
        }
        let text = serde_json::to_string(schema).ok()?;
        Some(Self {
            text: text.into_boxed_str(),
            tree: OnceLock::new(),
        })
    }

    /// The tree the text was written from, read again.
    fn read(&self) -> Value {
        serde_json::from_str(&self.text)
            .expect("a schema's text was written from a tree that serde_json reads back")
    }

    /// The tree, when [`Args::schema`] has made it already, else read now and not kept.
    fn tree(&self) -> Cow<'_, Value> {
        match self.tree.get() {
            Some(tree) => Cow::Borrowed(&**tree),
            None => Cow::Owned(self.read()),
        }
    }
}

/// Whether `value`'s text reads back to `value`: it nests no deeper than serde_json reads,
/// and every number is an integer. A loop over the containers, as
/// [`nests_within`](crate::nests_within) walks them.
fn reads_back_alike(value: &Value) -> bool {
    let mut pending: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, depth)) = pending.pop() {
        let is_container = matches!(value, Value::Array(_) | Value::Object(_));
        if is_container && depth > TEXT_MAX_DEPTH {
            return false;
        }
        match value {
            Value::Number(number) if number.is_f64() => return false,
            Value::Array(items) => pending.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(map) => pending.extend(map.values().map(|item| (item, depth + 1))),
            _ => {}
        }
    }
    true
}

impl Clone for Args {
    fn clone(&self) -> Self {
        Self(match &self.0 {
            Form::Tree(tree) => Form::Tree(clone_value(tree)),
            // The text alone: the copy reads its tree when asked, as the original did.
            Form::Text(text) => Form::Text(SchemaText {
                text: text.text.clone(),
                tree: OnceLock::new(),
            }),
        })
    }
}

impl PartialEq for Args {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Form::Text(a), Form::Text(b)) if a.text == b.text => true,
            _ => values_equal(&self.tree(), &other.tree()),
        }
    }
}

impl std::fmt::Debug for Args {
    /// `Args(schema)`, or `Args(<nested deeper than 128 levels>)` for a schema too deep to
    /// print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tree = self.tree();
        match check_depth(&tree) {
            Ok(()) => f.debug_tuple("Args").field(&*tree).finish(),
            Err(too_deep) => write!(f, "Args(<{too_deep}>)"),
        }
    }
}

impl Drop for Args {
    fn drop(&mut self) {
        // A tree read from text nests no deeper than serde_json reads: dropped as it is.
        if let Form::Tree(tree) = &mut self.0 {
            free_value(std::mem::take(tree));
        }
    }
}

impl Serialize for Args {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.tree().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::new)
    }
}

/// The root `type` of `schema` when it refuses every object (see
/// [`Args::root_type_refusing_objects`]).
fn root_type_refusing_objects(schema: &Value) -> Option<&Value> {
    let declared = schema.get("type")?;
    (type_names(declared, "object") == Some(false)).then_some(declared)
}

/// Whether a schema's `type` (a name, or a list of names) names `wanted`; `None` for a
/// `type` of another shape.
pub(crate) fn type_names(declared: &Value, wanted: &str) -> Option<bool> {
    match declared {
        Value::String(name) => Some(name == wanted),
        Value::Array(names) => Some(names.iter().any(|name| name == wanted)),
        _ => None,
    }
}

impl Args {
    /// Wraps a JSON Schema value.
    pub fn new(schema: impl Into<Value>) -> Self {
        Self(Form::Tree(schema.into()))
    }

    /// The schema of a tool that takes no arguments: an object with no properties.
    pub fn empty() -> Self {
        Self::new(
            serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
    }

    /// The schema value. For a schema kept as text (see [`Args`]), the first call reads the
    /// tree, which is kept from then on.
    pub fn schema(&self) -> &Value {
        match &self.0 {
            Form::Tree(tree) => tree,
            Form::Text(text) => text.tree.get_or_init(|| Box::new(text.read())),
        }
    }

    /// The schema value, borrowed when there is a tree and read from the text (and not
    /// kept) when there is not: for what reads a registered tool's schema once (compiling
    /// it, indexing it, rendering it), which leaves the registry holding the text alone.
    pub(crate) fn tree(&self) -> Cow<'_, Value> {
        match &self.0 {
            Form::Tree(tree) => Cow::Borrowed(tree),
            Form::Text(text) => text.tree(),
        }
    }

    /// The schema as a value of its own: a copy of the tree, or the text read again.
    pub(crate) fn to_value(&self) -> Value {
        match self.tree() {
            Cow::Borrowed(tree) => clone_value(tree),
            Cow::Owned(tree) => tree,
        }
    }

    /// Whether the schema nests no deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH)
    /// (a schema kept as text always does).
    pub(crate) fn nests_within_limit(&self) -> bool {
        match &self.0 {
            Form::Tree(tree) => check_depth(tree).is_ok(),
            Form::Text(_) => true,
        }
    }

    /// Keeps the schema as its JSON text rather than as a tree, several times smaller (a
    /// tree's every object is an index map, every key and string a block of its own), and
    /// tells whether it now is. For schemas held in large numbers and read rarely: a tool
    /// registry imported from a server or built from a configuration.
    ///
    /// The schema stays the same. Whatever reads it once (registration's checks, compiling it
    /// on the tool's first call, `shed`'s index, rendering it for a provider) reads the text
    /// into a tree that it drops; [`schema`](Self::schema) reads it once and keeps the tree,
    /// until `compact` is called again. A schema whose text
    /// would not read back to the same tree stays a tree (`false`): one holding a float
    /// (serde_json reads a float's text back to the same bits only on a best effort), or
    /// one nested deeper than the 127 levels serde_json reads.
    ///
    /// A [`ToolCallManager`](crate::ToolCallManager) does this itself to a definition it
    /// holds alone (one its tool built when asked); a definition the tool keeps and shares
    /// (as [`FnTool`](crate::FnTool) does) stays as the tool made it.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::Args;
    ///
    /// let mut args = Args::new(json!({"type": "object", "properties": {"path": {"type": "string"}}}));
    /// assert!(args.compact());
    /// assert!(args.is_compact());
    /// assert_eq!(args.schema()["properties"]["path"]["type"], "string");
    ///
    /// let mut with_a_float = Args::new(json!({"type": "number", "minimum": 0.5}));
    /// assert!(!with_a_float.compact());
    /// ```
    pub fn compact(&mut self) -> bool {
        match &mut self.0 {
            Form::Tree(tree) => {
                if let Some(text) = SchemaText::of(tree) {
                    // The tree (within serde_json's depth, as `of` checked) is dropped here.
                    self.0 = Form::Text(text);
                }
            }
            // The tree `schema` read back, if it did, is dropped.
            Form::Text(text) => drop(text.tree.take()),
        }
        self.is_compact()
    }

    /// Whether the schema is kept as its JSON text alone: [`compact`](Self::compact)ed, and
    /// no tree read back by [`schema`](Self::schema) since.
    pub fn is_compact(&self) -> bool {
        matches!(&self.0, Form::Text(text) if text.tree.get().is_none())
    }

    /// The root `type` of the schema when it refuses every object: a type name other than
    /// `object`, or a list of names without it (`"string"`, `["string", "number"]`). A
    /// call's arguments are always a JSON object, so no call could pass such a schema, and
    /// registration refuses it ([`RegistrationError::ArgumentsNotAnObject`]). `None` when the
    /// root's `type` allows objects or says nothing usable (none, `object`, a list holding
    /// it; a `type` of another shape is the schema compiler's to refuse).
    ///
    /// ```
    /// use toolsmith::Args;
    /// use serde_json::json;
    ///
    /// assert_eq!(Args::new(json!({"type": "string"})).root_type_refusing_objects(),
    ///     Some(&json!("string")));
    /// assert_eq!(Args::new(json!({"type": ["object", "null"]})).root_type_refusing_objects(), None);
    /// assert_eq!(Args::new(json!({"properties": {}})).root_type_refusing_objects(), None);
    /// ```
    ///
    /// [`RegistrationError::ArgumentsNotAnObject`]: crate::RegistrationError::ArgumentsNotAnObject
    pub fn root_type_refusing_objects(&self) -> Option<&Value> {
        root_type_refusing_objects(self.schema())
    }

    /// [`root_type_refusing_objects`](Self::root_type_refusing_objects) as JSON text, read
    /// without keeping a tree: what registration checks, which must leave a compacted
    /// schema compact.
    pub(crate) fn root_type_refusing_objects_text(&self) -> Option<String> {
        root_type_refusing_objects(&self.tree()).map(Value::to_string)
    }

    /// The schema value, mutably (for transforms that adjust a schema in place).
    pub fn schema_mut(&mut self) -> &mut Value {
        if let Form::Text(text) = &mut self.0 {
            let tree = text.tree.take().map_or_else(|| text.read(), |tree| *tree);
            self.0 = Form::Tree(tree);
        }
        match &mut self.0 {
            Form::Tree(tree) => tree,
            Form::Text(_) => unreachable!("made a tree above"),
        }
    }

    /// Unwraps the schema value.
    pub fn into_inner(mut self) -> Value {
        std::mem::take(self.schema_mut())
    }

    /// The names of the schema's top-level properties, in declaration order.
    pub fn property_names(&self) -> impl Iterator<Item = &str> {
        self.schema()
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|props| props.keys().map(String::as_str))
    }
}

impl Default for Args {
    fn default() -> Self {
        Self::empty()
    }
}

impl From<Value> for Args {
    fn from(schema: Value) -> Self {
        Self::new(schema)
    }
}

impl From<Args> for Value {
    fn from(args: Args) -> Self {
        args.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::Args;
    use crate::tool::nesting::testing::{nested, on_small_stack};
    use crate::tool::nesting::{free_value, values_identical};

    fn compacted(schema: &Value) -> Args {
        let mut args = Args::new(schema.clone());
        args.compact();
        args
    }

    /// Keys out of alphabetical order, integers at both ends of their range, strings that
    /// JSON escapes.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "zeta": {"type": "integer", "minimum": i64::MIN, "maximum": u64::MAX},
                "alpha": {"type": "string", "enum": ["quote \" and\nnewline", "é ☃"]},
                "list": {"type": "array", "items": {"type": "boolean"}, "default": [true, null]}
            },
            "required": ["zeta"]
        })
    }

    #[test]
    fn a_schema_kept_as_text_reads_as_the_tree_it_was() {
        let schema = schema();
        let args = compacted(&schema);
        assert!(args.is_compact());

        // Read for one use, and not kept.
        assert!(values_identical(&args.tree(), &schema));
        assert!(values_identical(&args.to_value(), &schema));
        assert_eq!(args.root_type_refusing_objects_text(), None);
        assert!(args.is_compact());
        assert_eq!(
            serde_json::to_string(&args).unwrap(),
            serde_json::to_string(&schema).unwrap()
        );
        assert_eq!(
            format!("{args:?}"),
            format!("{:?}", Args::new(schema.clone()))
        );
        assert_eq!(args, Args::new(schema.clone()));
        assert_eq!(args.clone(), args);
        assert!(args.clone().is_compact());
        assert!(args.is_compact());

        // `schema` reads it once and keeps it, in the tree's key order, until compacted again.
        let mut args = args;
        assert!(values_identical(args.schema(), &schema));
        assert!(!args.is_compact());
        assert!(std::ptr::eq(args.schema(), args.schema()));
        assert!(args.compact());
        assert!(args.is_compact());
        assert!(values_identical(args.schema(), &schema));
        assert_eq!(
            args.property_names().collect::<Vec<_>>(),
            ["zeta", "alpha", "list"]
        );
        assert_eq!(args.root_type_refusing_objects(), None);
    }

    #[test]
    fn either_form_is_the_size_of_a_tree() {
        assert_eq!(size_of::<Args>(), size_of::<Value>());
    }

    #[test]
    fn schemas_kept_as_text_are_equal_as_trees_are() {
        let a = compacted(&json!({"type": "object", "required": ["x"]}));
        let b = compacted(&json!({"required": ["x"], "type": "object"}));
        let c = compacted(&json!({"type": "object", "required": ["y"]}));
        assert!(a.is_compact() && b.is_compact() && c.is_compact());
        // Equality leaves out key order, as `==` on the trees does.
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, Args::new(json!({"type": "object"})));
    }

    #[test]
    fn a_schema_kept_as_text_is_edited_and_unwrapped_as_a_tree() {
        let mut args = compacted(&schema());
        args.schema_mut()["required"] = json!(["alpha"]);
        assert!(!args.is_compact());
        assert_eq!(args.schema()["required"], json!(["alpha"]));
        assert_eq!(args.schema()["properties"], schema()["properties"]);

        let unwrapped = compacted(&schema()).into_inner();
        assert!(values_identical(&unwrapped, &schema()));
        let read_first = compacted(&schema());
        let _ = read_first.schema();
        assert!(values_identical(&read_first.into_inner(), &schema()));
    }

    #[test]
    fn schemas_whose_text_would_not_read_back_alike_stay_trees() {
        // A float's shortest text is not always read back to the same bits.
        let float = compacted(&json!({"type": "number", "minimum": 0.1}));
        assert!(!float.is_compact());
        assert_eq!(float.schema()["minimum"], json!(0.1));
        let nested_float = compacted(&json!({"properties": {"x": {"default": [1.5]}}}));
        assert!(!nested_float.is_compact());
        // Integers written as floats are floats too.
        assert!(!compacted(&json!({"maximum": 3.0})).is_compact());

        on_small_stack(|| {
            // serde_json reads 127 levels back, not 128.
            let deepest = nested(127);
            let kept = compacted(&deepest);
            assert!(kept.is_compact());
            assert!(values_identical(kept.schema(), &deepest));
            drop(kept);
            free_value(deepest);

            let too_deep = nested(128);
            let kept = compacted(&too_deep);
            assert!(!kept.is_compact());
            assert!(values_identical(kept.schema(), &too_deep));
            drop(kept);
            free_value(too_deep);
        });
    }

    /// Any JSON value: every kind of number (floats included), strings with escapes and
    /// non-ASCII characters, keys in any order, a few levels of nesting.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "\\PC{0,8}".prop_map(Value::from),
            "[\"\\\\\n\t\u{1}é☃]{0,4}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("\\PC{0,6}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    /// Whether `value` holds a float anywhere.
    fn has_float(value: &Value) -> bool {
        match value {
            Value::Number(number) => number.is_f64(),
            Value::Array(items) => items.iter().any(has_float),
            Value::Object(map) => map.values().any(has_float),
            _ => false,
        }
    }

    proptest! {
        /// A schema is kept as text exactly when it holds no float, and then reads back to the
        /// same tree, key order included, whichever way it is read.
        #[test]
        fn a_schema_kept_as_text_reads_back_identical(schema in any_json()) {
            let args = compacted(&schema);
            prop_assert_eq!(args.is_compact(), !has_float(&schema));
            prop_assert!(values_identical(&args.tree(), &schema));
            prop_assert!(values_identical(&args.clone().into_inner(), &schema));
            prop_assert!(values_identical(args.schema(), &schema));
            prop_assert!(args == Args::new(schema.clone()));
        }
    }
}
