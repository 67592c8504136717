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
    /// The place, and the keys `ToolArgs` reads there.
    fn describe(self) -> (&'static str, &'static str) {
        match self {
            Self::Struct => (
                "a struct",
                "`rename_all`, `default` and `deny_unknown_fields`",
            ),
            Self::Enum => (
                "an enum",
                "`rename_all`, `rename_all_fields` and `tag = \"command\"`",
            ),
            Self::Field => (
                "a field",
                "`rename`, `default`, `skip` and `skip_deserializing`",
            ),
            Self::Variant => (
                "a variant",
                "`rename`, `rename_all`, `skip` and `skip_deserializing`",
            ),
        }
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
    let honoured = match (key.as_str(), place) {
        ("rename", Place::Field | Place::Variant) => {
            if let Some(name) = deserialize_name(meta)? {
                out.rename = Some(name);
            }
            true
        }
        ("rename_all", Place::Struct | Place::Enum | Place::Variant) => {
            out.rename_all = rename_rule(meta)?.or(out.rename_all);
            true
        }
        ("rename_all_fields", Place::Enum) => {
            out.rename_all_fields = rename_rule(meta)?.or(out.rename_all_fields);
            true
        }
        ("default", Place::Struct | Place::Field) => {
            out.default = Some(default_key(meta)?);
            true
        }
        ("skip" | "skip_deserializing", Place::Field | Place::Variant) => {
            out.skip = true;
            true
        }
        // A `ToolArgs` schema is closed already: unknown arguments are refused.
        ("deny_unknown_fields", Place::Struct) => true,
        ("tag", Place::Enum) => {
            let tag: LitStr = meta.value()?.parse()?;
            if tag.value() != "command" {
                return Err(refused(meta, &key, place));
            }
            true
        }
        _ => false,
    };
    if honoured {
        return Ok(());
    }
    if serialize_only(&key, place) {
        return skip_value(meta);
    }
    Err(refused(meta, &key, place))
}

/// The error for a key `ToolArgs` does not take at `place`: refused with its reason, or
/// unknown there.
fn refused(meta: &ParseNestedMeta<'_>, key: &str, place: Place) -> syn::Error {
    let message = match refusal(key, place) {
        Some(reason) => {
            format!("`#[serde({key})]` is not supported by `#[derive(ToolArgs)]`: {reason}")
        }
        None => {
            let (place, keys) = place.describe();
            format!(
                "`#[derive(ToolArgs)]` does not take `#[serde({key})]` on {place}; there it reads {keys} (and passes over the keys that only change serialization)"
            )
        }
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
