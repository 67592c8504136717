//! A fast acceptance check for the most common argument schema: a flat object of scalar
//! properties (`type`, optionally beside `"null"`, bounds, lengths, string enums and
//! `const`s, `required`, `additionalProperties`).
//!
//! It answers only "certainly valid": anything it is not sure of (a schema outside the subset
//! is not compiled at all; a number beyond 2^53 or a failed check falls through) goes to the
//! full `jsonschema` validator, which also explains failures and drives repairs. So it can
//! only save work, never change a verdict: valid calls skip a general validator walk that
//! hashes every key.

use serde_json::{Map, Number, Value};

use crate::tool::names::same_name;

/// Keys a flat root may carry besides what is checked.
const ROOT_ANNOTATIONS: &[&str] = &["title", "description"];
/// The drafts a root's `$schema` may name for the fast check to apply: those whose `integer`
/// includes `1.0`, as the check's does (draft 4's does not).
const SAME_INTEGER_DRAFTS: &[&str] = &["draft-06", "draft-07", "draft/2019-09", "draft/2020-12"];
/// Keys a property may carry that do not affect validity here.
const PROPERTY_ANNOTATIONS: &[&str] = &["title", "description", "default", "examples"];
/// Beyond this magnitude an `f64` no longer holds every integer, so comparisons fall through.
const EXACT_F64_LIMIT: f64 = 9_007_199_254_740_992.0;
/// Properties are tracked in a 64-bit mask.
const MAX_PROPERTIES: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    Integer,
    Number,
    String,
    Boolean,
}

impl Scalar {
    fn named(ty: &str) -> Option<Self> {
        match ty {
            "integer" => Some(Self::Integer),
            "number" => Some(Self::Number),
            "string" => Some(Self::String),
            "boolean" => Some(Self::Boolean),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Bounds {
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
}

#[derive(Debug, Clone)]
struct Property {
    name: String,
    kind: Scalar,
    /// `null` is accepted too (`"type": [.., "null"]`, as schemars writes an `Option`).
    nullable: bool,
    bounds: Bounds,
    min_length: Option<u64>,
    max_length: Option<u64>,
    /// The accepted strings (`enum`, or `const` as a command group's `command` has).
    one_of_strings: Option<Vec<String>>,
    /// Whether any bound is set, and whether any string rule is: decided once, so that a
    /// property without them is accepted on its type alone.
    bounded: bool,
    text_rules: bool,
    /// The integers the bounds admit, both ends included: an integer argument (the common
    /// case for a numeric one) is checked with two comparisons instead of four on `f64`s.
    whole: (i64, i64),
}

/// A compiled flat object schema.
#[derive(Debug, Clone)]
pub(crate) struct FlatSchema {
    properties: Vec<Property>,
    required: u64,
    closed: bool,
}

impl FlatSchema {
    /// The flat form of `schema`, or `None` when it uses anything outside the subset.
    pub(crate) fn compile(schema: &Value) -> Option<Self> {
        let root = schema.as_object()?;
        let mut closed = false;
        let mut properties = Vec::new();
        let mut required_names: Vec<&str> = Vec::new();
        for (key, value) in root {
            match key.as_str() {
                "type" if value == "object" => {}
                "properties" => {
                    for (name, schema) in value.as_object()? {
                        properties.push(Property::compile(name, schema.as_object()?)?);
                    }
                }
                "required" => {
                    for name in value.as_array()? {
                        required_names.push(name.as_str()?);
                    }
                }
                "additionalProperties" => closed = !value.as_bool()?,
                "$schema" => {
                    let draft = value.as_str()?;
                    if !SAME_INTEGER_DRAFTS.iter().any(|d| draft.contains(d)) {
                        return None;
                    }
                }
                other if ROOT_ANNOTATIONS.contains(&other) => {}
                _ => return None,
            }
        }
        if root.get("type")? != "object" || properties.len() > MAX_PROPERTIES {
            return None;
        }
        let mut required = 0u64;
        for name in required_names {
            let index = properties.iter().position(|p| p.name == name)?;
            required |= 1 << index;
        }
        Some(Self {
            properties,
            required,
            closed,
        })
    }

    /// True only when `instance` is certainly valid against the schema.
    pub(crate) fn certainly_accepts(&self, instance: &Value) -> bool {
        let Some(map) = instance.as_object() else {
            return false;
        };
        self.accepts_map(map)
    }

    fn accepts_map(&self, map: &Map<String, Value>) -> bool {
        // Models mostly send arguments in the schema's order: while they come in that order,
        // each is checked against the property at its place, in a loop that holds nothing
        // else. The first one out of place goes on out of line.
        let mut seen = 0u64;
        for (position, (key, value)) in map.iter().enumerate() {
            match self.properties.get(position) {
                Some(property) if same_name(&property.name, key) => {
                    if !property.accepts(value) {
                        return false;
                    }
                    seen |= 1 << position;
                }
                _ => return self.accepts_rest(map, position, seen),
            }
        }
        seen & self.required == self.required
    }

    /// [`accepts_map`](Self::accepts_map) from the argument at `from`, the first that is not
    /// where the schema's order puts it, with `seen` the properties met before it.
    #[inline(never)]
    fn accepts_rest(&self, map: &Map<String, Value>, from: usize, mut seen: u64) -> bool {
        for (key, value) in map.iter().skip(from) {
            let index = match self.position_of(key) {
                Some(index) => index,
                None if self.closed => return false,
                // An argument the schema does not list is accepted as it is, unless it is an
                // array or object: those go to the full check, which first measures their
                // nesting, so nothing certain here is deeper than one.
                None if matches!(value, Value::Array(_) | Value::Object(_)) => return false,
                None => continue,
            };
            if !self.properties[index].accepts(value) {
                return false;
            }
            seen |= 1 << index;
        }
        seen & self.required == self.required
    }

    /// The property `key`, looked up for an argument out of the schema's order (by
    /// [`accepts_rest`](Self::accepts_rest)). Out of line, to keep that loop small.
    #[inline(never)]
    fn position_of(&self, key: &str) -> Option<usize> {
        self.properties.iter().position(|p| same_name(&p.name, key))
    }
}

impl Property {
    fn compile(name: &str, schema: &Map<String, Value>) -> Option<Self> {
        let (kind, nullable) = match schema.get("type") {
            Some(Value::String(ty)) => (Scalar::named(ty)?, false),
            Some(Value::Array(types)) => match types.as_slice() {
                [Value::String(ty)] => (Scalar::named(ty)?, false),
                [Value::String(ty), Value::String(null)] if null == "null" => {
                    (Scalar::named(ty)?, true)
                }
                [Value::String(null), Value::String(ty)] if null == "null" => {
                    (Scalar::named(ty)?, true)
                }
                _ => return None,
            },
            // `{"const": "name"}` alone: a command group's `command`.
            None if schema.get("const").is_some_and(Value::is_string) => (Scalar::String, false),
            _ => return None,
        };
        let mut property = Self {
            name: name.to_owned(),
            kind,
            nullable,
            bounds: Bounds::default(),
            min_length: None,
            max_length: None,
            one_of_strings: None,
            bounded: false,
            whole: (i64::MIN, i64::MAX),
            text_rules: false,
        };
        let numeric = matches!(kind, Scalar::Integer | Scalar::Number);
        for (key, value) in schema {
            match key.as_str() {
                "type" => {}
                // Formats are checked on strings only; on numbers they are annotations.
                "format" if numeric => {}
                "minimum" if numeric => property.bounds.minimum = Some(bound_f64(value)?),
                "maximum" if numeric => property.bounds.maximum = Some(bound_f64(value)?),
                "exclusiveMinimum" if numeric => {
                    property.bounds.exclusive_minimum = Some(bound_f64(value)?)
                }
                "exclusiveMaximum" if numeric => {
                    property.bounds.exclusive_maximum = Some(bound_f64(value)?)
                }
                "minLength" if kind == Scalar::String => {
                    property.min_length = Some(value.as_u64()?)
                }
                "maxLength" if kind == Scalar::String => {
                    property.max_length = Some(value.as_u64()?)
                }
                "enum" if kind == Scalar::String && property.one_of_strings.is_none() => {
                    // A `null` listed beside the strings (an optional enum) is accepted only
                    // if the type allows it too; anything else is outside the subset.
                    let mut options = Vec::new();
                    let mut null_listed = false;
                    for option in value.as_array()? {
                        match option {
                            Value::String(text) => options.push(text.clone()),
                            Value::Null => null_listed = true,
                            _ => return None,
                        }
                    }
                    property.nullable &= null_listed;
                    property.one_of_strings = Some(options);
                }
                "const" if kind == Scalar::String && property.one_of_strings.is_none() => {
                    property.one_of_strings = Some(vec![value.as_str()?.to_owned()]);
                    property.nullable = false;
                }
                other if PROPERTY_ANNOTATIONS.contains(&other) => {}
                _ => return None,
            }
        }
        let bounds = &property.bounds;
        property.bounded = bounds.minimum.is_some()
            || bounds.maximum.is_some()
            || bounds.exclusive_minimum.is_some()
            || bounds.exclusive_maximum.is_some();
        if property.bounded {
            property.whole = bounds.whole_range();
        }
        property.text_rules = property.one_of_strings.is_some()
            || property.min_length.is_some()
            || property.max_length.is_some();
        Some(property)
    }

    // Always inlined: it is the body of the fast check's loop (an out-of-line call of it cost
    // more than its own work for an integer).
    #[inline(always)]
    fn accepts(&self, value: &Value) -> bool {
        // An integer sent for a numeric property, the usual numeric argument, first: the
        // value's kind is matched once, and the property's only for the rest.
        if let Value::Number(n) = value
            && let Some(i) = n.as_i64()
            && matches!(self.kind, Scalar::Integer | Scalar::Number)
        {
            return self.whole.0 <= i && i <= self.whole.1;
        }
        match (self.kind, value) {
            (Scalar::Boolean, Value::Bool(_)) => true,
            (Scalar::String, Value::String(text)) => !self.text_rules || self.accepts_text(text),
            (Scalar::Integer, Value::Number(n)) => {
                (n.is_u64() || self.accepts_integral_float(n))
                    && (!self.bounded || self.bounds.accept(n))
            }
            (Scalar::Number, Value::Number(n)) => !self.bounded || self.bounds.accept(n),
            (_, Value::Null) => self.nullable,
            _ => false,
        }
    }

    /// JSON Schema's integer includes floats without a fractional part (`1.0`).
    #[inline(never)]
    fn accepts_integral_float(&self, n: &Number) -> bool {
        n.as_f64().is_some_and(|f| f.fract() == 0.0)
    }

    #[inline(never)]
    fn accepts_text(&self, text: &str) -> bool {
        if let Some(options) = &self.one_of_strings
            && !options.iter().any(|o| o == text)
        {
            return false;
        }
        if self.min_length.is_none() && self.max_length.is_none() {
            return true;
        }
        // JSON Schema counts lengths in code points.
        let length = text.chars().count() as u64;
        self.min_length.is_none_or(|min| length >= min)
            && self.max_length.is_none_or(|max| length <= max)
    }
}

impl Bounds {
    /// The integers within ±2^53 that [`accept`](Self::accept) admits, as an inclusive
    /// range (empty when `lo > hi`). Every bound is exact in an `f64` here or an infinity
    /// (`bound_f64`), so rounding it to the nearest admitted integer is exact.
    fn whole_range(&self) -> (i64, i64) {
        let limit = EXACT_F64_LIMIT;
        let lowest = [
            self.minimum.map(f64::ceil),
            self.exclusive_minimum.map(|m| m.floor() + 1.0),
        ]
        .into_iter()
        .flatten()
        .fold(-limit, f64::max);
        let highest = [
            self.maximum.map(f64::floor),
            self.exclusive_maximum.map(|m| m.ceil() - 1.0),
        ]
        .into_iter()
        .flatten()
        .fold(limit, f64::min);
        // Both ends are within ±2^53 unless an infinite bound admits nothing here (the full
        // check decides then): an end beyond makes the range empty.
        let whole = |x: f64| match x {
            x if x > limit => i64::MAX,
            x if x < -limit => i64::MIN,
            x => x as i64,
        };
        (whole(lowest), whole(highest))
    }

    #[inline(never)]
    fn accept(&self, n: &Number) -> bool {
        let Some(x) = n.as_f64().filter(|x| x.abs() <= EXACT_F64_LIMIT) else {
            return false;
        };
        self.minimum.is_none_or(|m| x >= m)
            && self.maximum.is_none_or(|m| x <= m)
            && self.exclusive_minimum.is_none_or(|m| x > m)
            && self.exclusive_maximum.is_none_or(|m| x < m)
    }
}

/// A bound as an `f64`: exact within ±2^53, and beyond as an infinity of its sign. Only
/// numbers within ±2^53 are compared (others fall through), and to them a bound beyond is
/// exactly as far as an infinity: `maximum: u64::MAX` (which `u64` and `usize` schemas carry)
/// admits them all, `minimum: 2^60` none.
fn bound_f64(value: &Value) -> Option<f64> {
    let Value::Number(n) = value else {
        return None;
    };
    let beyond = |negative: bool| {
        if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    };
    if let Some(i) = n.as_i64() {
        return Some(if i.unsigned_abs() <= EXACT_F64_LIMIT as u64 {
            i as f64
        } else {
            beyond(i < 0)
        });
    }
    if let Some(u) = n.as_u64() {
        return Some(if u <= EXACT_F64_LIMIT as u64 {
            u as f64
        } else {
            beyond(false)
        });
    }
    let f = n.as_f64().filter(|f| f.is_finite())?;
    Some(if f.abs() <= EXACT_F64_LIMIT {
        f
    } else {
        beyond(f < 0.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "properties": {
                "a": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 10},
                "b": {"type": "number", "exclusiveMinimum": -1.5, "exclusiveMaximum": 2},
                "s": {"type": "string", "minLength": 1, "maxLength": 3, "description": "x"},
                "e": {"type": "string", "enum": ["x", "yz"]},
                "f": {"type": "boolean"}
            }, "required": ["a", "s"], "additionalProperties": false}),
            json!({"type": "object", "properties": {
                "n": {"type": "integer"},
                "u": {"type": "integer", "format": "uint64", "minimum": 0, "maximum": u64::MAX},
                "i": {"type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX},
                "h": {"type": "number", "minimum": -1e300, "exclusiveMaximum": 9007199254740993u64},
                "k": {"type": "integer", "minimum": 9007199254740993u64}
            }}),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            // As schemars writes `Option`s, and as a command group's `command` is.
            json!({"type": "object", "properties": {
                "a": {"type": ["integer", "null"], "minimum": 0},
                "s": {"type": ["null", "string"], "maxLength": 2},
                "e": {"type": ["string", "null"], "enum": ["x", "yz", null]},
                "f": {"type": ["boolean", "null"]},
                "n": {"const": "x"},
                "b": {"type": "string", "enum": ["yz"], "default": "yz"},
                "z": {"type": ["string", "null"], "enum": ["x"]}
            }, "required": ["n"]}),
        ]
    }

    #[test]
    fn arguments_in_and_out_of_the_schemas_order_are_checked_alike() {
        let flat = FlatSchema::compile(&schemas()[0]).unwrap();
        // `a` and `s` are required; `a` comes first in the schema, `s` third.
        for accepted in [
            json!({"a": 1, "s": "x"}),
            json!({"s": "x", "a": 1}),
            json!({"a": 1, "b": 0.5, "s": "x", "f": true}),
            json!({"a": 1, "b": 0.5, "f": true, "s": "x"}),
            json!({"f": true, "e": "yz", "s": "x", "a": 1}),
        ] {
            assert!(flat.certainly_accepts(&accepted), "{accepted}");
        }
        for refused in [
            json!({"a": 1}),
            json!({"a": 1, "f": true}),
            json!({"a": 1, "s": "x", "f": 2}),
            json!({"a": 1, "b": 0.5, "f": "no", "s": "x"}),
            json!({"a": 1, "s": "x", "other": 1}),
            json!({"s": "x", "a": 11}),
        ] {
            assert!(!flat.certainly_accepts(&refused), "{refused}");
        }
    }

    #[test]
    fn unlisted_arrays_and_objects_are_left_to_the_full_check() {
        // The full check measures their nesting first; the fast one looks one level down.
        let open = FlatSchema::compile(&schemas()[1]).unwrap();
        assert!(open.certainly_accepts(&json!({"n": 1, "other": "x"})));
        assert!(!open.certainly_accepts(&json!({"n": 1, "other": [1]})));
        assert!(!open.certainly_accepts(&json!({"n": 1, "other": {}})));
    }

    #[test]
    fn schemas_outside_the_subset_are_not_compiled() {
        for schema in [
            json!({"type": "object", "properties": {"o": {"type": "object"}}}),
            json!({"type": "object", "properties": {"u": {"type": ["string", "integer"]}}}),
            json!({"type": "object", "properties": {"u": {"type": ["string", "null", "integer"]}}}),
            json!({"type": "object", "properties": {"c": {"const": 1}}}),
            json!({"type": "object", "properties": {"c": {"type": "integer", "const": 1}}}),
            json!({"type": "object", "properties": {"d": {"type": "string", "format": "date"}}}),
            json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "a"}}}),
            json!({"type": "object", "properties": {"e": {"type": "string", "enum": [1]}}}),
            json!({"type": "object", "required": ["missing"]}),
            json!({"type": "object", "anyOf": []}),
            json!({"properties": {}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
        ] {
            assert!(FlatSchema::compile(&schema).is_none(), "{schema}");
        }
        for schema in schemas() {
            assert!(FlatSchema::compile(&schema).is_some(), "{schema}");
        }
    }

    #[test]
    fn the_fast_check_agrees_with_the_draft_a_schema_names() {
        // Draft 4 counts only numbers written without a fraction as integers (`1.0` is not).
        for draft in [
            "http://json-schema.org/draft-04/schema#",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2020-12/schema",
        ] {
            let schema = json!({"$schema": draft, "type": "object",
                "properties": {"n": {"type": "integer"}}});
            let full = jsonschema::validator_for(&schema).unwrap();
            let value = json!({"n": 1.0});
            let fast = FlatSchema::compile(&schema).is_some_and(|f| f.certainly_accepts(&value));
            assert!(!fast || full.is_valid(&value), "{draft}");
            // The later drafts, as MCP servers' schemas name them, keep the fast check.
            assert_eq!(fast, !draft.contains("draft-04"), "{draft}");
        }
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..14).prop_map(Value::from),
            prop_oneof![Just(1.0f64), Just(-1.5), Just(2.0), Just(0.5), -3.0f64..3.0]
                .prop_map(Value::from),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(9_007_199_254_740_992u64)),
            Just(json!(-9_007_199_254_740_992i64)),
            Just(json!(9_007_199_254_740_993i64)),
            Just(json!(-9_007_199_254_740_993i64)),
            Just(json!(1e300)),
            prop_oneof![
                Just("x"),
                Just("yz"),
                Just(""),
                Just("ééé"),
                Just("abcd"),
                Just("5")
            ]
            .prop_map(Value::from),
        ]
    }

    fn instance() -> impl Strategy<Value = Value> {
        let keys =
            prop::sample::select(vec!["a", "b", "s", "e", "f", "n", "z", "u", "i", "h", "k"]);
        prop_oneof![
            9 => prop::collection::vec((keys, scalar()), 0..6).prop_map(|pairs| {
                Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
            1 => scalar(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The fast check never accepts what `jsonschema` rejects, and on these schemas it
        /// decides every case.
        #[test]
        fn agrees_with_jsonschema(which in 0usize..4, value in instance()) {
            let schema = &schemas()[which];
            let fast = FlatSchema::compile(schema).unwrap();
            let full = jsonschema::validator_for(schema).unwrap();
            // Beyond ±2^53 (exactly: 2^53 + 1 reads as 2^53 in an `f64`) the fast check
            // may leave a valid number to the full one.
            let beyond = |v: &Value| match v {
                Value::Number(n) => n.as_i64().map_or_else(
                    || n.as_f64().is_some_and(|f| f.abs() > EXACT_F64_LIMIT),
                    |i| i.unsigned_abs() > EXACT_F64_LIMIT as u64,
                ),
                _ => false,
            };
            let big = value.as_object().is_some_and(|m| m.values().any(beyond));
            let (fast_says, full_says) = (fast.certainly_accepts(&value), full.is_valid(&value));
            if big {
                prop_assert!(!fast_says || full_says);
            } else {
                prop_assert_eq!(fast_says, full_says, "{}", value);
            }
        }
    }
}
