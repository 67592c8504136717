//! `#[serde(...)]` on a type deriving `ToolArgs`, read as schemars reads it: the keys that say
//! how a value is read (names, defaults, skipped fields) are honoured, so that the tool's
//! schema and reader agree with the type's serde form; the keys whose shape the derive cannot
//! follow are refused, each saying what to write instead; serialize-only keys are passed
//! over, since arguments are only read.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

use crate::attr::{FieldDefault, Spanned, default_key, each_key};
use crate::errors::Errors;
use crate::rename_rule::RenameRule;

/// Where a `#[serde(...)]` attribute is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// On a struct.
    Struct,
    /// On an enum of commands.
    Enum,
    /// On a field of a struct or a variant.
    Field,
    /// On a variant of a command enum.
    Variant,
}

impl Place {
    /// The place, as messages name it.
    fn name(self) -> &'static str {
        match self {
            Self::Struct => "a struct",
            Self::Enum => "an enum",
            Self::Field => "a field",
            Self::Variant => "a variant",
        }
    }

    /// The keys `ToolArgs` reads here, as messages list them: "`a`, `b` and `c`".
    fn honoured_keys(self) -> String {
        let keys: Vec<String> = HONOURED
            .iter()
            .filter(|honoured| honoured.places.contains(&self))
            .map(|honoured| match honoured.only_value {
                Some(value) => format!("`{} = {value:?}`", honoured.name),
                None => format!("`{}`", honoured.name),
            })
            .collect();
        match keys.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// What an honoured key does: `parse_key` matches on it, so a key of [`HONOURED`] cannot go
/// unread (and a variant no entry names is never built: a dead-code warning).
#[derive(Clone, Copy)]
enum Key {
    Rename,
    RenameAll,
    RenameAllFields,
    Default,
    Skip,
    DenyUnknownFields,
    Tag,
}

/// A key `ToolArgs` honours: as written, what it does, where it is read.
struct Honoured {
    /// The key as written: `skip` and `skip_deserializing` are two entries of one [`Key`].
    name: &'static str,
    /// What reading it does.
    key: Key,
    /// Where it is read; elsewhere it is passed over or refused.
    places: &'static [Place],
    /// The one value it takes (`tag = "command"`), listed with it in messages.
    only_value: Option<&'static str>,
}

/// Every `#[serde]` key `ToolArgs` honours, in the order messages list them. Both reading a
/// key and the message refusing one at a place where it is not read come from here.
const HONOURED: &[Honoured] = &[
    honoured("rename", Key::Rename, &[Place::Field, Place::Variant]),
    honoured(
        "rename_all",
        Key::RenameAll,
        &[Place::Struct, Place::Enum, Place::Variant],
    ),
    honoured("rename_all_fields", Key::RenameAllFields, &[Place::Enum]),
    honoured("default", Key::Default, &[Place::Struct, Place::Field]),
    honoured("skip", Key::Skip, &[Place::Field, Place::Variant]),
    honoured(
        "skip_deserializing",
        Key::Skip,
        &[Place::Field, Place::Variant],
    ),
    // A `ToolArgs` schema is closed already: unknown arguments are refused.
    honoured(
        "deny_unknown_fields",
        Key::DenyUnknownFields,
        &[Place::Struct],
    ),
    Honoured {
        only_value: Some("command"),
        ..honoured("tag", Key::Tag, &[Place::Enum])
    },
];

/// An entry of [`HONOURED`] taking any value.
const fn honoured(name: &'static str, key: Key, places: &'static [Place]) -> Honoured {
    Honoured {
        name,
        key,
        places,
        only_value: None,
    }
}

/// What the `#[serde(...)]` attributes of one place say about reading it.
#[derive(Default)]
pub struct SerdeAttr {
    /// `rename = "..."` or `rename(deserialize = "...")`: the field's or variant's name.
    pub rename: Option<Spanned<String>>,
    /// `rename_all`: on a struct its fields' case, on an enum its variants', on a variant its
    /// fields'.
    pub rename_all: Option<RenameRule>,
    /// `rename_all_fields` on an enum: the case of every variant's fields.
    pub rename_all_fields: Option<RenameRule>,
    /// `default` or `default = "path"`: on a field, its value when left out; on a struct,
    /// every field's (taken from the struct's default value).
    pub default: Option<Spanned<FieldDefault>>,
    /// `skip` or `skip_deserializing`: the field is not an argument (filled from its
    /// default), the variant not a command.
    pub skip: bool,
}

/// Why a key is refused, and what to do instead.
fn refusal(key: &str, place: Place) -> Option<&'static str> {
    Some(match (key, place) {
        ("flatten", _) => {
            "each field of a `ToolArgs` type is one argument of a flat schema; list the inner type's fields here, or keep the field as one argument holding an object (a type deriving `Deserialize` and `JsonSchema`)"
        }
        ("with" | "deserialize_with", _) => {
            "an argument is read by its type's `Deserialize` and described by its `JsonSchema`, which a function of its own would not follow; wrap the value in a type implementing both"
        }
        ("alias", _) => {
            "a call is checked against the tool's schema before it is read, and the schema, closed to other names, gives each argument and command one name: an alias would be refused before it is read; keep one name (`rename`)"
        }
        ("borrow", _) => "arguments are read into owned values; remove `borrow`",
        ("tag", Place::Enum) => {
            "a command enum is read by its `command` argument, the tag `ToolArgs` uses already: write `tag = \"command\"` or leave `tag` out"
        }
        ("content" | "untagged", Place::Enum) => {
            "a command enum is read by its `command` argument, with the variant's fields as arguments beside it; remove it"
        }
        ("untagged", Place::Variant) => {
            "every command is picked by name through the `command` argument; give this command a name instead"
        }
        ("other", Place::Variant) => {
            "an unknown command is an error that lists the commands; no variant takes its place"
        }
        ("transparent", _) => {
            "a `ToolArgs` type is an object of arguments; take the inner type as the argument instead (a `#[tool_fn]` parameter, or a field)"
        }
        ("from" | "try_from", _) => {
            "`ToolArgs` reads this type's own fields; derive it on the type converted from and convert after reading"
        }
        ("remote", _) => "derive `ToolArgs` on a type of this crate",
        ("variant_identifier" | "field_identifier", _) => {
            "a command enum's variants are commands with arguments, not identifiers"
        }
        _ => return None,
    })
}

/// Keys that only change how a value is written: arguments are only read.
fn serialize_only(key: &str, place: Place) -> bool {
    match place {
        Place::Struct | Place::Enum => {
            // `rename` names the type in serde's own messages; `bound`, `crate` and
            // `expecting` change nothing an argument's schema or reading shows.
            matches!(key, "into" | "rename" | "bound" | "crate" | "expecting")
        }
        Place::Field => matches!(
            key,
            "skip_serializing" | "skip_serializing_if" | "serialize_with" | "getter" | "bound"
        ),
        Place::Variant => matches!(key, "skip_serializing" | "serialize_with" | "bound"),
    }
}

/// Reads every `#[serde(...)]` in `attrs` at `place`; problems go to `errors`.
pub fn parse(attrs: &[Attribute], place: Place, errors: &mut Errors) -> SerdeAttr {
    let mut out = SerdeAttr::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result =
            attr.parse_nested_meta(each_key(errors, |meta, _| parse_key(meta, place, &mut out)));
        errors.take(result);
    }
    out
}

/// Reads one key into `out`.
fn parse_key(meta: &ParseNestedMeta<'_>, place: Place, out: &mut SerdeAttr) -> syn::Result<()> {
    let key = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    let honoured = HONOURED
        .iter()
        .find(|honoured| honoured.name == key && honoured.places.contains(&place));
    let Some(honoured) = honoured else {
        if serialize_only(&key, place) {
            return skip_value(meta);
        }
        return Err(refused(meta, &key, place));
    };
    match honoured.key {
        Key::Rename => {
            if let Some(name) = deserialize_name(meta)? {
                out.rename = Some(name);
            }
        }
        Key::RenameAll => out.rename_all = rename_rule(meta)?.or(out.rename_all),
        Key::RenameAllFields => {
            out.rename_all_fields = rename_rule(meta)?.or(out.rename_all_fields);
        }
        Key::Default => out.default = Some(default_key(meta)?),
        Key::Skip => out.skip = true,
        Key::DenyUnknownFields => {}
        Key::Tag => {
            let value: LitStr = meta.value()?.parse()?;
            if Some(value.value().as_str()) != honoured.only_value {
                return Err(refused(meta, &key, place));
            }
        }
    }
    Ok(())
}

/// The error for a key `ToolArgs` does not take at `place`: refused with its reason, or
/// unknown there.
fn refused(meta: &ParseNestedMeta<'_>, key: &str, place: Place) -> syn::Error {
    let message = match refusal(key, place) {
        Some(reason) => {
            format!("`#[serde({key})]` is not supported by `#[derive(ToolArgs)]`: {reason}")
        }
        None => format!(
            "`#[derive(ToolArgs)]` does not take `#[serde({key})]` on {}; there it reads {} (and passes over the keys that only change serialization)",
            place.name(),
            place.honoured_keys()
        ),
    };
    syn::Error::new_spanned(&meta.path, message)
}

/// The name `rename = "..."` or `rename(deserialize = "...")` reads by (`None` when only a
/// `serialize` name is given).
fn deserialize_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Spanned<String>>> {
    if meta.input.peek(syn::Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        return Ok(Some(Spanned::from_lit(&lit)));
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            let lit: LitStr = inner.value()?.parse()?;
            name = Some(Spanned::from_lit(&lit));
            Ok(())
        } else if inner.path.is_ident("serialize") {
            skip_value(&inner)
        } else {
            Err(inner.error("expected `serialize` or `deserialize`"))
        }
    })?;
    Ok(name)
}

/// The rule `rename_all = "..."` or `rename_all(deserialize = "...")` reads by.
fn rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<RenameRule>> {
    deserialize_name(meta)?
        .map(|name| {
            RenameRule::from_name(&name.value).map_err(|reason| syn::Error::new(name.span, reason))
        })
        .transpose()
}

/// Passes over a key's value: `= value` or `(...)`, or nothing.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `#[serde(...)]` with `key` as a type would write it.
    fn written(key: &str) -> Attribute {
        let key = match key {
            "rename" => "rename = \"x\"",
            "rename_all" | "rename_all_fields" => return written_rule(key),
            "tag" => "tag = \"command\"",
            other => other,
        };
        syn::parse_str::<syn::DeriveInput>(&format!("#[serde({key})] struct S;"))
            .unwrap()
            .attrs
            .remove(0)
    }

    fn written_rule(key: &str) -> Attribute {
        syn::parse_str::<syn::DeriveInput>(&format!("#[serde({key} = \"camelCase\")] struct S;"))
            .unwrap()
            .attrs
            .remove(0)
    }

    /// The error reading `attr` at `place`, if any.
    fn error(attr: &Attribute, place: Place) -> Option<String> {
        let mut errors = Errors::default();
        parse(std::slice::from_ref(attr), place, &mut errors);
        errors.finish().err().map(|err| err.to_string())
    }

    #[test]
    fn each_place_reads_the_keys_its_refusals_list_and_only_those() {
        let places = [Place::Struct, Place::Enum, Place::Field, Place::Variant];
        for place in places {
            let listed = place.honoured_keys();
            for honoured in HONOURED {
                let attr = written(honoured.name);
                let shown = format!("`{}", honoured.name);
                if honoured.places.contains(&place) {
                    assert_eq!(
                        error(&attr, place),
                        None,
                        "{} on {}",
                        honoured.name,
                        place.name()
                    );
                    assert!(listed.contains(&shown), "{listed} lacks {shown}");
                } else {
                    // Refused there, or passed over as only changing serialization (a type's
                    // own `rename`).
                    assert!(
                        error(&attr, place).is_some() || serialize_only(honoured.name, place),
                        "{} on {}",
                        honoured.name,
                        place.name()
                    );
                    assert!(
                        !listed.contains(&format!("{shown}`")),
                        "{listed} has {shown}"
                    );
                }
            }
        }
        assert_eq!(
            Place::Field.honoured_keys(),
            "`rename`, `default`, `skip` and `skip_deserializing`"
        );
        assert_eq!(
            Place::Enum.honoured_keys(),
            "`rename_all`, `rename_all_fields` and `tag = \"command\"`"
        );
    }

    #[test]
    fn a_tag_other_than_command_is_refused_with_its_reason() {
        let attr = syn::parse_str::<syn::DeriveInput>("#[serde(tag = \"kind\")] enum E {}")
            .unwrap()
            .attrs
            .remove(0);
        let err = error(&attr, Place::Enum).unwrap();
        assert!(
            err.starts_with("`#[serde(tag)]` is not supported by `#[derive(ToolArgs)]`"),
            "{err}"
        );
    }
}
