//! Lenient reading of JSON values into Rust types.
//!
//! Text-based backends (llama.cpp, Candle, small local models) often send every scalar as a
//! string: `"42"` for 42, `"true"` for true. [`from_value`] reads a value into any
//! `Deserialize` type and accepts those spellings where the target is a number or a boolean,
//! and integral floats (`5.0`) where it is an integer, inside untagged and tagged enums and
//! flattened structs too. Everything else is read exactly as `serde_json` would, and an
//! error names the JSON path of the offending value.

use std::fmt;
use std::mem::ManuallyDrop;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Value};

use crate::reading::whole_floats;
use crate::tool::nesting::check_depth;

/// A failure to read a value, with the JSON pointer of the place that failed (`""` for the
/// root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LenientError {
    /// The JSON pointer of the offending value, e.g. `/items/0/count`.
    pub path: String,
    /// What was wrong there.
    pub message: String,
}

impl fmt::Display for LenientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for LenientError {}

/// Reads `value` into `T`, accepting numbers and booleans spelled as strings.
///
/// ```
/// use serde::Deserialize;
/// use serde_json::json;
///
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct Page { offset: usize, limit: Option<u32>, exact: bool }
///
/// let page: Page = toolsmith::lenient::from_value(
///     &json!({"offset": "10", "limit": 5.0, "exact": "true"})).unwrap();
/// assert_eq!(page, Page { offset: 10, limit: Some(5), exact: true });
///
/// let err = toolsmith::lenient::from_value::<Page>(
///     &json!({"offset": "ten", "exact": false})).unwrap_err();
/// assert_eq!(err.path, "/offset");
/// ```
///
/// A value nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is refused before
/// any of it is read (reading recurses once per level), with an error at the root that says
/// so; a scalar read costs nothing more for it.
#[inline]
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, LenientError> {
    // Reading is pure, so the common case (success) skips path tracking, and a failure is
    // read once more with tracking to say where it failed.
    match T::deserialize(Lenient::root(value)) {
        Ok(read) => Ok(read),
        Err(_) => from_value_again(value),
    }
}

/// [`from_value`] after a failed read: once more, with the path of the value that fails
/// tracked, and with whole floats as integers if `value` holds any. Out of line: only a
/// failed read takes it.
///
/// serde reads an untagged, internally or adjacently tagged enum and a flattened struct from
/// a copy of the value in its own form, which refuses a float where an integer is wanted
/// (`{"r": 5.0}` for `Circle { r: u32 }`), while validation, as JSON Schema has it, counts
/// `5.0` as an integer. Converting those floats only after a failure keeps every read that
/// succeeds as it was: a `serde_json::Value` gets the `5.0` that was sent (it gets `5` only
/// inside a value whose first read failed).
#[inline(never)]
fn from_value_again<T: DeserializeOwned>(value: &Value) -> Result<T, LenientError> {
    // One read for both (this is compiled for each type read): a success, or the error that
    // remains once whole floats are integers, which is the one to report. The copy is
    // dropped by `discard`, compiled once, not by a drop (and its unwinding path) compiled
    // here for each type; a `Deserialize` that panics leaves it undropped.
    let converted = ManuallyDrop::new(whole_floats::as_integers(value));
    let mut track = serde_path_to_error::Track::new();
    let deserializer = serde_path_to_error::Deserializer::new(
        Lenient::root(converted.as_ref().unwrap_or(value)),
        &mut track,
    );
    let read = T::deserialize(deserializer).map_err(|err| LenientError {
        path: pointer(&track.path()),
        message: err.to_string(),
    });
    whole_floats::discard(ManuallyDrop::into_inner(converted));
    read
}

/// Reads `value` into `T` like [`from_value`], without the path of an error: for scalars,
/// whose path is known to the caller.
pub(crate) fn scalar_from_value<T: DeserializeOwned>(
    value: &Value,
) -> Result<T, serde_json::Error> {
    T::deserialize(Lenient::root(value))
}

/// Converts a serde path (`a.b[0]`) into a JSON pointer (`/a/b/0`).
fn pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => {
                out.push('/');
                out.push_str(&index.to_string());
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push('/');
                out.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// 2^63: the magnitude of `i64::MIN`, the first whole float `i64` cannot hold.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
/// 2^64: the first whole float `u64` cannot hold.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
/// 2^127: the magnitude of `i128::MIN`.
const TWO_POW_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
/// 2^128: the first whole float `u128` cannot hold.
const TWO_POW_128: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

/// A deserializer over a borrowed value that accepts the lenient spellings.
///
/// Reading a container recurses once per level, so the first time a reader walks into one
/// it measures the nesting of the whole value (`checked` is then set for everything below):
/// a value nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is an error, and a
/// scalar read (most arguments) measures nothing.
#[derive(Clone, Copy)]
struct Lenient<'a> {
    value: &'a Value,
    /// Whether the nesting of `value` is known to be within the limit.
    checked: bool,
}

type Error = serde_json::Error;

impl<'de> Lenient<'de> {
    /// A reader at the root of a value whose nesting is not known yet.
    fn root(value: &'de Value) -> Self {
        Self {
            value,
            checked: false,
        }
    }

    /// A reader of a part of a value already measured.
    fn within(value: &'de Value) -> Self {
        Self {
            value,
            checked: true,
        }
    }

    /// Before walking into a container: the nesting of the root, measured once.
    fn check_nesting(self) -> Result<(), Error> {
        if self.checked {
            Ok(())
        } else {
            measure(self.value)
        }
    }
    fn invalid(&self, exp: &dyn de::Expected) -> Error {
        use de::Unexpected;
        let unexpected = match self.value {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Unexpected::Signed(i),
                (_, Some(u), _) => Unexpected::Unsigned(u),
                (_, _, Some(f)) => Unexpected::Float(f),
                _ => Unexpected::Other("number"),
            },
            Value::String(s) => Unexpected::Str(s),
            Value::Array(_) => Unexpected::Seq,
            Value::Object(_) => Unexpected::Map,
        };
        de::Error::invalid_type(unexpected, exp)
    }

    /// The value as an integer: a JSON integer, an integral float, or a string holding one.
    /// The common case, an integer that fits `i64`, is decided inline (an argument read is a
    /// handful of instructions); the others go out of line.
    #[inline]
    fn integer<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if let Value::Number(n) = self.value
            && let Some(i) = n.as_i64()
        {
            return visitor.visit_i64(i);
        }
        self.integer_otherwise(visitor)
    }

    /// [`integer`](Self::integer) of anything but an integer that fits `i64`. The value is
    /// read by [`whole_number`], compiled once: this part is compiled for each visitor.
    #[inline(never)]
    fn integer_otherwise<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match whole_number(self.value) {
            Some(WholeNumber::I64(i)) => visitor.visit_i64(i),
            Some(WholeNumber::U64(u)) => visitor.visit_u64(u),
            Some(WholeNumber::I128(i)) => visitor.visit_i128(i),
            Some(WholeNumber::U128(u)) => visitor.visit_u128(u),
            None => Err(self.invalid(&visitor)),
        }
    }

    /// The value as a number: a JSON number, or a string holding a finite one. A JSON
    /// number is read inline, as [`integer`](Self::integer) reads one.
    #[inline]
    fn float<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if let Value::Number(n) = self.value
            && let Some(f) = n.as_f64()
        {
            return visitor.visit_f64(f);
        }
        self.float_otherwise(visitor)
    }

    /// [`float`](Self::float) of anything but a JSON number an `f64` holds.
    #[inline(never)]
    fn float_otherwise<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match finite_number(self.value) {
            Some(f) => visitor.visit_f64(f),
            None => Err(self.invalid(&visitor)),
        }
    }

    /// The value as an `f32`: as [`float`](Self::float) reads it, and within `f32`'s range.
    /// A finite number beyond it (`1e39`) is an error, not the infinity serde's `f32` makes
    /// of it (`as f32`): a tool would get an infinity the model never sent, where the reader
    /// refuses one spelled out (`"inf"`).
    #[inline]
    fn single_float<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if let Value::Number(n) = self.value
            && let Some(f) = n.as_f64()
            && (f as f32).is_finite()
        {
            return visitor.visit_f64(f);
        }
        self.single_float_otherwise(visitor)
    }

    /// [`single_float`](Self::single_float) of anything but a JSON number in `f32`'s range.
    #[inline(never)]
    fn single_float_otherwise<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match finite_number(self.value) {
            Some(f) if (f as f32).is_finite() => visitor.visit_f64(f),
            Some(f) => Err(de::Error::invalid_value(de::Unexpected::Float(f), &visitor)),
            None => Err(self.invalid(&visitor)),
        }
    }
}

/// The finite number `value` is: a JSON number, or a string holding one (`" 2.5 "`).
fn finite_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// An integer as [`whole_number`] reads it, in the narrowest of these that holds it.
pub(super) enum WholeNumber {
    I64(i64),
    U64(u64),
    I128(i128),
    U128(u128),
}

/// The integer `value` is, when it is one: a JSON integer; a whole float, at any magnitude
/// a 128-bit integer holds (as validation, which counts `1e20` as an integer, sees it; a
/// narrower type then says it is out of its range: the conversions below are exact in these
/// ranges); or a string holding an integer.
#[inline(never)]
pub(super) fn whole_number(value: &Value) -> Option<WholeNumber> {
    match value {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Some(WholeNumber::I64(i));
            }
            if let Some(u) = n.as_u64() {
                return Some(WholeNumber::U64(u));
            }
            let f = n.as_f64().filter(|f| f.fract() == 0.0)?;
            if (-TWO_POW_63..0.0).contains(&f) {
                Some(WholeNumber::I64(f as i64))
            } else if (0.0..TWO_POW_64).contains(&f) {
                Some(WholeNumber::U64(f as u64))
            } else if (-TWO_POW_127..0.0).contains(&f) {
                Some(WholeNumber::I128(f as i128))
            } else if (0.0..TWO_POW_128).contains(&f) {
                Some(WholeNumber::U128(f as u128))
            } else {
                None
            }
        }
        Value::String(s) => {
            let t = s.trim();
            if let Ok(i) = t.parse::<i64>() {
                Some(WholeNumber::I64(i))
            } else if let Ok(u) = t.parse::<u64>() {
                Some(WholeNumber::U64(u))
            } else if let Ok(i) = t.parse::<i128>() {
                Some(WholeNumber::I128(i))
            } else {
                t.parse::<u128>().ok().map(WholeNumber::U128)
            }
        }
        _ => None,
    }
}

/// The error for a value nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH), if
/// `value` is one. Out of line: only a container's first read takes it.
#[inline(never)]
fn measure(value: &Value) -> Result<(), Error> {
    check_depth(value).map_err(|too_deep| de::Error::custom(format!("the value is {too_deep}")))
}

macro_rules! integer_methods {
    ($($method:ident)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.integer(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Lenient<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Array(items) => {
                self.check_nesting()?;
                let mut seq = LenientSeq(items.iter());
                let read = visitor.visit_seq(&mut seq)?;
                // A tuple, an array or a struct stops at its length: elements left over
                // would be dropped unread (`[1, 2, 3]` as `(1, 2)`), so, as serde_json
                // says, the array is too long.
                if seq.0.len() == 0 {
                    Ok(read)
                } else {
                    Err(de::Error::invalid_length(
                        items.len(),
                        &"fewer elements in array",
                    ))
                }
            }
            Value::Object(map) => {
                self.check_nesting()?;
                visitor.visit_map(LenientMap {
                    iter: map.iter(),
                    value: None,
                })
            }
            other => de::Deserializer::deserialize_any(other, visitor),
        }
    }

    integer_methods!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128);

    #[inline]
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.single_float(visitor)
    }

    #[inline]
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.float(visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" => visitor.visit_bool(true),
                "false" => visitor.visit_bool(false),
                _ => Err(self.invalid(&visitor)),
            },
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if matches!(self.value, Value::Array(_) | Value::Object(_)) {
            self.check_nesting()?;
        }
        match self.value {
            // `{"Variant": content}`: the content is read leniently too (`{"Circle": {"r":
            // 5.0}}` for `Circle { r: u32 }`, as validation takes it).
            Value::Object(map) if map.len() == 1 => {
                let (variant, content) = map.iter().next().expect("one entry");
                visitor.visit_enum(LenientEnum { variant, content })
            }
            _ => de::Deserializer::deserialize_enum(self.value, name, variants, visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// An externally tagged enum's `{"Variant": content}`.
struct LenientEnum<'a> {
    variant: &'a str,
    content: &'a Value,
}

impl<'a> de::EnumAccess<'a> for LenientEnum<'a> {
    type Error = Error;
    type Variant = LenientVariant<'a>;

    fn variant_seed<V: DeserializeSeed<'a>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Error> {
        let variant = seed.deserialize(MapKey(self.variant))?;
        Ok((variant, LenientVariant(self.content)))
    }
}

/// A variant's content, read as the rest of the value is.
struct LenientVariant<'a>(&'a Value);

impl<'a> de::VariantAccess<'a> for LenientVariant<'a> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Value::Null => Ok(()),
            _ => Err(Lenient::within(self.0).invalid(&"a unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'a>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(Lenient::within(self.0))
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_seq(Lenient::within(self.0), visitor)
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_map(Lenient::within(self.0), visitor)
    }
}

struct LenientSeq<'a>(std::slice::Iter<'a, Value>);

impl<'a> de::SeqAccess<'a> for LenientSeq<'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|value| seed.deserialize(Lenient::within(value)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct LenientMap<'a> {
    iter: <&'a Map<String, Value> as IntoIterator>::IntoIter,
    value: Option<&'a Value>,
}

impl<'a> de::MapAccess<'a> for LenientMap<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(MapKey(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Lenient::within(value)),
            None => Err(de::Error::custom("a map value was read before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// A map's key, which JSON writes as a string whatever the key type: read as a string, or
/// parsed when the type asks for a number, a bool or a char (a `HashMap<u32, _>` argument
/// takes `{"1": …}`, as serde_json reads it).
struct MapKey<'a>(&'a str);

impl MapKey<'_> {
    fn parsed<T: std::str::FromStr>(&self, what: &str) -> Result<T, Error> {
        self.0
            .parse()
            .map_err(|_| de::Error::custom(format_args!("the key {:?} is not {what}", self.0)))
    }
}

/// `deserialize_x` parsing the key as `T` and giving it to `visit_x`.
macro_rules! key_methods {
    ($($method:ident => $visit:ident: $ty:ty, $what:literal;)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                visitor.$visit(self.parsed::<$ty>($what)?)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for MapKey<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    key_methods! {
        deserialize_i8 => visit_i8: i8, "an integer from -128 to 127";
        deserialize_i16 => visit_i16: i16, "an integer from -32768 to 32767";
        deserialize_i32 => visit_i32: i32, "a 32-bit integer";
        deserialize_i64 => visit_i64: i64, "a 64-bit integer";
        deserialize_i128 => visit_i128: i128, "a 128-bit integer";
        deserialize_u8 => visit_u8: u8, "an integer from 0 to 255";
        deserialize_u16 => visit_u16: u16, "an integer from 0 to 65535";
        deserialize_u32 => visit_u32: u32, "a 32-bit unsigned integer";
        deserialize_u64 => visit_u64: u64, "a 64-bit unsigned integer";
        deserialize_u128 => visit_u128: u128, "a 128-bit unsigned integer";
        deserialize_f32 => visit_f32: f32, "a number";
        deserialize_f64 => visit_f64: f64, "a number";
        deserialize_bool => visit_bool: bool, "`true` or `false`";
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // A unit variant named by the key.
        de::value::BorrowedStrDeserializer::<Error>::new(self.0)
            .deserialize_enum(name, variants, visitor)
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf option unit unit_struct seq tuple tuple_struct map
        struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        n: i32,
        ratio: f64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Shape {
        Circle { r: u32 },
        Square(u32),
        Pair(u8, u8),
        Dot,
    }

    #[test]
    fn an_enum_variant_s_content_is_read_leniently() {
        let read = |value: Value| from_value::<Shape>(&value);
        assert_eq!(
            read(json!({"Circle": {"r": 5.0}})),
            Ok(Shape::Circle { r: 5 })
        );
        assert_eq!(
            read(json!({"Circle": {"r": "6"}})),
            Ok(Shape::Circle { r: 6 })
        );
        assert_eq!(read(json!({"Square": 7.0})), Ok(Shape::Square(7)));
        assert_eq!(read(json!({"Pair": [1.0, "2"]})), Ok(Shape::Pair(1, 2)));
        assert_eq!(read(json!("Dot")), Ok(Shape::Dot));
        assert_eq!(read(json!({"Dot": null})), Ok(Shape::Dot));
        let error = read(json!({"Circle": {"r": 5.5}})).unwrap_err();
        assert_eq!(error.path, "/Circle/r");
        let error = read(json!({"Pair": [1, 300]})).unwrap_err();
        assert_eq!(error.path, "/Pair/1");
        assert!(
            read(json!({"Hexagon": 1}))
                .unwrap_err()
                .message
                .contains("Hexagon")
        );
        assert!(read(json!({"Dot": 1})).is_err());
    }

    #[test]
    fn map_keys_are_read_as_their_type() {
        let value = json!({"1": "one", "20": "twenty"});
        let numbers: BTreeMap<u32, String> = from_value(&value).unwrap();
        assert_eq!(
            numbers,
            BTreeMap::from([(1, "one".into()), (20, "twenty".into())])
        );
        let signed: BTreeMap<i64, u8> = from_value(&json!({"-3": 1})).unwrap();
        assert_eq!(signed, BTreeMap::from([(-3, 1)]));
        let flags: BTreeMap<bool, u8> = from_value(&json!({"true": 1, "false": 0})).unwrap();
        assert_eq!(flags, BTreeMap::from([(false, 0), (true, 1)]));
        #[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
        #[serde(rename_all = "snake_case")]
        enum Speed {
            Fast,
        }
        let speeds: BTreeMap<Speed, u8> = from_value(&json!({"fast": 1})).unwrap();
        assert_eq!(speeds, BTreeMap::from([(Speed::Fast, 1)]));
        let letters: BTreeMap<char, u8> = from_value(&json!({"a": 1})).unwrap();
        assert_eq!(letters, BTreeMap::from([('a', 1)]));
        // A key that is not the type is an error naming the key.
        let err = from_value::<BTreeMap<u8, u8>>(&json!({"300": 1})).unwrap_err();
        assert!(
            err.to_string()
                .contains(r#"the key "300" is not an integer from 0 to 255"#),
            "{err}"
        );
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        items: Vec<Inner>,
        flags: BTreeMap<String, bool>,
        mode: Mode,
        note: Option<String>,
        any: Value,
    }

    #[test]
    fn reads_strings_as_scalars_at_any_depth() {
        let v = json!({
            "items": [{"n": "7", "ratio": "0.5"}, {"n": 8.0, "ratio": 1}],
            "flags": {"a": "TRUE", "b": false},
            "mode": "slow",
            "any": "42",
        });
        let got: Outer = from_value(&v).unwrap();
        assert_eq!(
            got.items,
            [Inner { n: 7, ratio: 0.5 }, Inner { n: 8, ratio: 1.0 }]
        );
        assert!(got.flags["a"]);
        assert_eq!(got.mode, Mode::Slow);
        assert_eq!(got.note, None);
        // A `Value` target keeps what was sent.
        assert_eq!(got.any, json!("42"));
    }

    #[test]
    fn errors_name_the_path() {
        let v = json!({"items": [{"n": 1, "ratio": 1}, {"n": "x", "ratio": 1}],
            "flags": {}, "mode": "fast", "any": null});
        let err = from_value::<Outer>(&v).unwrap_err();
        assert_eq!(err.path, "/items/1/n");
        assert!(err.message.contains("\"x\""), "{err}");

        let err = from_value::<Inner>(&json!({"n": 1})).unwrap_err();
        assert_eq!(err.to_string(), "missing field `ratio`");

        let err = from_value::<Inner>(&json!({"n": 1.5, "ratio": 1})).unwrap_err();
        assert_eq!(err.path, "/n");
        let err = from_value::<u8>(&json!("300")).unwrap_err();
        assert!(err.message.contains("300"), "{err}");
        let err = from_value::<usize>(&json!(-1)).unwrap_err();
        assert!(err.message.contains("-1"), "{err}");
    }

    #[test]
    fn whole_floats_read_as_integers_at_any_64_bit_magnitude() {
        assert_eq!(
            from_value::<u64>(&json!(1e18)).unwrap(),
            1_000_000_000_000_000_000
        );
        assert_eq!(
            from_value::<i64>(&json!(i64::MIN as f64)).unwrap(),
            i64::MIN
        );
        assert_eq!(from_value::<u64>(&json!(-0.0)).unwrap(), 0);
        assert!(from_value::<u64>(&json!(1.8446744073709552e19)).is_err());
        assert!(from_value::<i64>(&json!(-(i64::MIN as f64))).is_err());
        assert!(from_value::<i64>(&json!(-9.3e18)).is_err());
        assert!(from_value::<u32>(&json!(1e19)).is_err());
    }

    #[test]
    fn whole_floats_and_strings_beyond_64_bits_read_as_128_bit_integers() {
        // Validation counts them as integers (a 128-bit schema has no `maximum`).
        assert_eq!(
            from_value::<u128>(&json!(1e20)).unwrap(),
            100_000_000_000_000_000_000
        );
        assert_eq!(
            from_value::<i128>(&json!(-1e20)).unwrap(),
            -100_000_000_000_000_000_000
        );
        assert_eq!(
            from_value::<u128>(&json!("123456789012345678901")).unwrap(),
            123_456_789_012_345_678_901
        );
        assert_eq!(
            from_value::<i128>(&json!(" -170141183460469231731687303715884105728 ")).unwrap(),
            i128::MIN
        );
        assert!(from_value::<u128>(&json!(3.5e38)).is_err());
        assert!(from_value::<i128>(&json!(1.8e38)).is_err());
        // A narrower type says the value is out of its range.
        let err = from_value::<u64>(&json!(1e20)).unwrap_err();
        assert!(err.message.contains("100000000000000000000"), "{err}");
    }

    #[test]
    fn whole_floats_read_as_integers_in_the_shapes_serde_buffers() {
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(tag = "kind")]
        enum Tagged {
            Count { n: u8, extra: Value },
        }
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(untagged)]
        enum Either {
            Whole(i32),
            Any(Value),
        }
        let read = from_value::<Tagged>(&json!({"kind": "Count", "n": 5.0, "extra": 2.5}));
        assert_eq!(
            read,
            Ok(Tagged::Count {
                n: 5,
                extra: json!(2.5)
            })
        );
        // Read once more only after a failure: a value beside the integer is then read
        // with its whole floats as integers too.
        let read = from_value::<Tagged>(&json!({"kind": "Count", "n": 5.0, "extra": 1.0}));
        assert_eq!(
            read.unwrap(),
            Tagged::Count {
                n: 5,
                extra: json!(1)
            }
        );
        // A read that succeeds as sent is kept as sent.
        assert_eq!(
            from_value::<Either>(&json!(5.0)),
            Ok(Either::Any(json!(5.0)))
        );
        assert_eq!(from_value::<Either>(&json!(5)), Ok(Either::Whole(5)));
        // What still fails is reported, as serde sees it once whole floats are integers.
        let err =
            from_value::<Tagged>(&json!({"kind": "Count", "n": 300.0, "extra": 1})).unwrap_err();
        assert!(err.message.contains("integer `300`"), "{err}");
        let err =
            from_value::<Tagged>(&json!({"kind": "Count", "n": 1.5, "extra": 1})).unwrap_err();
        assert!(err.message.contains("floating point `1.5`"), "{err}");
    }

    #[test]
    fn a_finite_number_beyond_f32_is_refused_rather_than_read_as_infinity() {
        for sent in [json!(1e39), json!(-1e39), json!("3.5e38"), json!(1e300)] {
            let err = from_value::<f32>(&sent).unwrap_err();
            assert!(err.message.contains("expected f32"), "{sent}: {err}");
            assert!(err.message.starts_with("invalid value"), "{sent}: {err}");
        }
        let err = from_value::<Vec<f32>>(&json!([1, "1e39"])).unwrap_err();
        assert_eq!(err.path, "/1");
        // Within the range, its ends included (a number rounding to them too), and whatever
        // an `f64` holds.
        assert_eq!(from_value::<f32>(&json!(f64::from(f32::MAX))), Ok(f32::MAX));
        assert_eq!(
            from_value::<f32>(&json!(-f64::from(f32::MAX))),
            Ok(f32::MIN)
        );
        assert_eq!(
            from_value::<f32>(&json!(f64::from(f32::MAX) * (1.0 + 1e-9))),
            Ok(f32::MAX)
        );
        assert_eq!(from_value::<f32>(&json!(" 2.5 ")), Ok(2.5));
        assert_eq!(from_value::<f32>(&json!(1e-50)), Ok(0.0));
        assert_eq!(from_value::<f64>(&json!(1e300)), Ok(1e300));
    }

    #[test]
    fn an_array_longer_than_its_type_is_refused_as_serde_json_refuses_it() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Point(f64, f64);
        #[derive(Debug, Deserialize, PartialEq)]
        struct Named {
            x: u8,
            y: u8,
        }
        let three = json!([1, 2, 3]);
        let refusals = [
            from_value::<(u8, u8)>(&three).unwrap_err(),
            from_value::<[u8; 2]>(&three).unwrap_err(),
            from_value::<Point>(&three).unwrap_err(),
            from_value::<Named>(&three).unwrap_err(),
            from_value::<Shape>(&json!({"Pair": [1, 2, 3]})).unwrap_err(),
        ];
        for err in refusals {
            assert!(
                err.message
                    .contains("invalid length 3, expected fewer elements in array"),
                "{err}"
            );
        }
        // Named where it is.
        let err = from_value::<Vec<(u8, u8)>>(&json!([[1, 2], ["3", 4, 5]])).unwrap_err();
        assert_eq!(err.path, "/1");
        // As many as the type reads, or a sequence of any length: read as before.
        assert_eq!(from_value::<(u8, u8)>(&json!(["1", 2.0])), Ok((1, 2)));
        assert_eq!(from_value::<Vec<u8>>(&three), Ok(vec![1, 2, 3]));
        assert_eq!(
            from_value::<Shape>(&json!({"Pair": [1, 2]})),
            Ok(Shape::Pair(1, 2))
        );
    }

    #[test]
    fn strictness_is_kept_elsewhere() {
        assert!(from_value::<String>(&json!(5)).is_err());
        assert!(from_value::<bool>(&json!("yes")).is_err());
        assert!(from_value::<f64>(&json!("NaN")).is_err());
        assert!(from_value::<Mode>(&json!("medium")).is_err());
    }

    #[test]
    fn values_nested_too_deep_are_refused_before_they_are_read() {
        use crate::tool::nesting::free_value;
        use crate::tool::nesting::testing::{nested, on_small_stack};
        #[derive(Debug, Deserialize)]
        enum Holder {
            Value(#[allow(dead_code)] Value),
        }
        on_small_stack(|| {
            let deep = nested(10_000);
            let errors = [
                from_value::<Value>(&deep).unwrap_err(),
                from_value::<Option<Vec<Value>>>(&deep).unwrap_err(),
            ];
            for err in errors {
                assert_eq!(err.path, "");
                assert_eq!(err.message, "the value is nested deeper than 128 levels");
            }
            // An enum's content is read by serde_json's own reader: measured first too.
            let mut map = Map::new();
            map.insert("Value".to_owned(), nested(10_000));
            let held = Value::Object(map);
            let err = from_value::<Holder>(&held).unwrap_err();
            assert!(err.message.contains("nested deeper"), "{err}");
            // A scalar read never walks the value.
            assert!(from_value::<i64>(&deep).is_err());
            // Within the limit, read as before.
            let within = nested(crate::MAX_JSON_DEPTH);
            assert_eq!(from_value::<Value>(&within).unwrap(), within);
            free_value(deep);
            free_value(held);
        });
    }
}
