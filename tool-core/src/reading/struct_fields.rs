//! The field names a type reads its arguments into, asked of its `Deserialize` itself: for
//! the hint of a missing field, which names the arguments sent under a name no field has.

use serde::de::{self, DeserializeOwned, Visitor};
use serde::forward_to_deserialize_any;

/// The names of the fields `T` reads, when `T` is read as a struct (serde's derive asks
/// for one with the list of its fields); `None` for anything else (a map, a flattened
/// struct, a newtype, an enum).
///
/// `T` is read from a deserializer that holds no value: it answers the first thing asked
/// with an error, having noted the fields a struct is asked with.
pub(crate) fn struct_fields<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut fields = None;
    // The read fails by design: only the fields noted on the way count.
    let _ = T::deserialize(FieldsProbe(&mut fields));
    fields
}

/// A deserializer that notes the fields a struct is asked with and reads nothing.
struct FieldsProbe<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> de::Deserializer<'de> for FieldsProbe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("fields noted"))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[test]
    fn a_struct_s_fields_are_its_names_as_sent() {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct Search {
            query_text: String,
            #[serde(rename = "k")]
            top_k: Option<u32>,
        }
        assert_eq!(struct_fields::<Search>(), Some(&["queryText", "k"][..]));
    }

    #[test]
    fn anything_but_a_struct_has_none() {
        #[derive(Deserialize)]
        #[allow(dead_code)]
        struct Wrapped(String);
        #[derive(Deserialize)]
        #[allow(dead_code)]
        struct Flattened {
            a: u8,
            #[serde(flatten)]
            rest: BTreeMap<String, u8>,
        }
        assert_eq!(struct_fields::<Wrapped>(), None);
        assert_eq!(struct_fields::<Flattened>(), None);
        assert_eq!(struct_fields::<BTreeMap<String, u8>>(), None);
        assert_eq!(struct_fields::<u8>(), None);
        assert_eq!(struct_fields::<Option<Wrapped>>(), None);
    }
}
