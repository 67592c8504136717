//! The macros' attributes: `#[tool_fn(...)]`, `#[arg(...)]`, `#[command(...)]`, `#[ctx]`,
//! `#[bind]`, `#[args]`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitStr};

use crate::duration;
use crate::errors::Errors;
use crate::spelled::spelled;

/// The keys `#[tool_fn(...)]` accepts.
const TOOL_KEYS: &str = "name, description, category, struct_name, crate (or crate_path), timeout, retries, blocking, read_only, destructive, idempotent, open_world";
/// The keys `#[arg(...)]` accepts.
const ARG_KEYS: &str = "rename, description, default";
/// The keys `#[command(...)]` accepts.
const COMMAND_KEYS: &str =
    "name, description, skip, read_only, destructive, idempotent, open_world";
/// The keys `#[command(...)]` accepts on a variant of a command enum: the hints alone (a
/// variant is named, described and left out with `#[arg]`, `#[serde]` and its doc comment).
const VARIANT_COMMAND_KEYS: &str = "read_only, destructive, idempotent, open_world";

/// A string value with the span of its literal.
#[derive(Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl Spanned<String> {
    /// The value of a string literal, spanned at it.
    pub fn from_lit(lit: &LitStr) -> Self {
        Self {
            value: lit.value(),
            span: lit.span(),
        }
    }
}

/// The behaviour hints of a tool or command: each flag's value when given (`read_only` is
/// `true`, `read_only = false` says so explicitly).
#[derive(Default, Clone, Copy)]
pub struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Parses a flag (`read_only` or `read_only = false`) into `self`, a flag given twice
    /// going to `errors`; `Ok(false)` when `meta` is not one.
    fn parse_flag(&mut self, meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<bool> {
        let slot = if meta.path.is_ident("read_only") {
            &mut self.read_only
        } else if meta.path.is_ident("destructive") {
            &mut self.destructive
        } else if meta.path.is_ident("idempotent") {
            &mut self.idempotent
        } else if meta.path.is_ident("open_world") {
            &mut self.open_world
        } else {
            return Ok(false);
        };
        let value = if meta.input.peek(syn::Token![=]) {
            let lit: syn::LitBool = meta.value()?.parse().map_err(|err| {
                syn::Error::new(
                    err.span(),
                    "a hint is given alone (`read_only`) or with `= true` / `= false`",
                )
            })?;
            lit.value
        } else {
            true
        };
        set(slot, value, meta, errors);
        Ok(true)
    }

    /// Whether any flag is set.
    pub fn any(&self) -> bool {
        self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }
}

/// `#[tool_fn(...)]`.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    /// `description` was given but could not be read (an error says so): the tool is not
    /// also reported as having none.
    pub description_unread: bool,
    pub category: Option<Spanned<String>>,
    /// `struct_name = "..."`: the generated struct's name, instead of the function's name in
    /// PascalCase.
    pub struct_name: Option<syn::Ident>,
    /// `struct_name` was given but could not be read (or the attribute was not read to its
    /// end): the struct's name is unknown, so no stand-in is generated on the error path.
    pub struct_name_unread: bool,
    pub krate: Option<syn::Path>,
    /// As `struct_name_unread`, for `crate = "..."`: the path the code would name is unknown.
    pub krate_unread: bool,
    /// `timeout = "..."` in milliseconds, with the span of its key.
    pub timeout_millis: Option<Spanned<u64>>,
    /// `retries = N`: how many times a failed call is retried (0: never).
    pub retries: Option<u32>,
    pub blocking: Option<Span>,
    pub annotations: Annotations,
}

fn string_value(meta: &ParseNestedMeta<'_>, example: &str) -> syn::Result<Spanned<String>> {
    let lit = quoted(meta, example)?;
    Ok(Spanned::from_lit(&lit))
}

/// The string literal of `key = "..."`. A value without quotes (`category = math`,
/// `timeout = 10`) is an error naming the key and what to write, `example`: syn's own said
/// only "expected string literal".
fn quoted(meta: &ParseNestedMeta<'_>, example: &str) -> syn::Result<LitStr> {
    let input = meta.value()?;
    if input.peek(LitStr) {
        return input.parse();
    }
    let path = &meta.path;
    let key = spelled(path);
    Err(syn::Error::new(
        input.span(),
        format!("`{key}` takes a string in quotes, e.g. `{key} = \"{example}\"`"),
    ))
}

fn duplicate(meta: &ParseNestedMeta<'_>, errors: &mut Errors) {
    let key = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    errors.spanned(&meta.path, format!("`{key}` is given twice"));
}

/// Records a parsed value in `slot`, or a "given twice" error.
fn set<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>, errors: &mut Errors) {
    if slot.is_some() {
        duplicate(meta, errors);
    } else {
        *slot = Some(value);
    }
}

/// Parses the arguments of `#[tool_fn(...)]`; problems go to `errors`.
pub fn parse_tool_attr(args: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let mut local = Errors::default();
    let parser = syn::meta::parser(each_key(&mut local, |meta, local| {
        if meta.path.is_ident("name") {
            let value = string_value(meta, "get_weather")?;
            set(&mut attr.name, value, meta, local);
        } else if meta.path.is_ident("description") {
            let value = string_value(meta, "What the tool does.")
                .inspect_err(|_| attr.description_unread = true)?;
            set(&mut attr.description, value, meta, local);
        } else if meta.path.is_ident("category") {
            let value = string_value(meta, "math")?;
            set(&mut attr.category, value, meta, local);
        } else if meta.path.is_ident("struct_name") {
            let ident = struct_name_value(meta).inspect_err(|_| attr.struct_name_unread = true)?;
            set(&mut attr.struct_name, ident, meta, local);
        } else if let Some(key) = crate_key(meta) {
            let path = crate_value(meta, key).inspect_err(|_| attr.krate_unread = true)?;
            if attr.krate.is_some() {
                local.spanned(
                    &meta.path,
                    "the crate's path is given twice (`crate` and `crate_path` are one key)",
                );
            } else {
                attr.krate = Some(path);
            }
        } else if meta.path.is_ident("timeout") {
            let lit = quoted(meta, "10s")?;
            let millis = duration::parse_millis(&lit.value())
                .map_err(|reason| syn::Error::new(lit.span(), reason))?;
            let millis = Spanned {
                value: millis,
                span: meta.path.span(),
            };
            set(&mut attr.timeout_millis, millis, meta, local);
        } else if meta.path.is_ident("retries") {
            let retries = retries_value(meta)?;
            set(&mut attr.retries, retries, meta, local);
        } else if meta.path.is_ident("blocking") {
            set(&mut attr.blocking, meta.path.span(), meta, local);
        } else if !attr.annotations.parse_flag(meta, local)? {
            return Err(unknown_key(meta, "#[tool_fn]", TOOL_KEYS));
        }
        Ok(())
    }));
    if let Err(err) = parser.parse2(args) {
        errors.push(err);
        // The keys after the one that stopped the parser are unread, names among them.
        attr.struct_name_unread = true;
        attr.krate_unread = true;
    }
    if let Err(err) = local.finish() {
        errors.push(err);
    }
    attr
}

/// The identifier of `struct_name = "..."`.
fn struct_name_value(meta: &ParseNestedMeta<'_>) -> syn::Result<syn::Ident> {
    let lit = quoted(meta, "ConstrainedTool")?;
    lit.parse::<syn::Ident>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!(
                "`struct_name` must be a type name (one identifier, not a keyword), e.g. `struct_name = \"ConstrainedTool\"`; {:?} is not",
                lit.value()
            ),
        )
    })
}

/// The value of `retries = N`: a whole number that fits a `u32`.
fn retries_value(meta: &ParseNestedMeta<'_>) -> syn::Result<u32> {
    const EXPECTED: &str = "`retries` must be a whole number of retries, e.g. `retries = 3` (`retries = 0`: never retry)";
    let value: syn::Expr = meta.value()?.parse()?;
    match &value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) if int.suffix().is_empty() => int.base10_parse::<u32>().map_err(|_| {
            syn::Error::new(
                int.span(),
                format!("`retries = {int}` is too many: at most {}", u32::MAX),
            )
        }),
        other => Err(syn::Error::new_spanned(other, EXPECTED)),
    }
}

/// `crate` or `crate_path` (the specification's name for it), if `meta` is either.
fn crate_key(meta: &ParseNestedMeta<'_>) -> Option<&'static str> {
    ["crate", "crate_path"]
        .into_iter()
        .find(|key| meta.path.is_ident(key))
}

/// The path of `crate = "..."` / `crate_path = "..."`.
fn crate_value(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<syn::Path> {
    let lit = quoted(meta, "::my_tools::toolsmith")?;
    lit.parse::<syn::Path>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("`{key}` must be a path, e.g. `{key} = \"::my_tools::toolsmith\"`"),
        )
    })
}

/// `default` (the type's `Default`) or `default = "path"` (a function), in `#[arg]` or
/// `#[serde]`; spanned at the key, or at the path's string.
pub(crate) fn default_key(meta: &ParseNestedMeta<'_>) -> syn::Result<Spanned<FieldDefault>> {
    let span = meta
        .path
        .get_ident()
        .map_or_else(proc_macro2::Span::call_site, syn::Ident::span);
    if !meta.input.peek(syn::Token![=]) {
        return Ok(Spanned {
            value: FieldDefault::Trait,
            span,
        });
    }
    let value = meta.value()?;
    if !value.peek(LitStr) {
        return Err(syn::Error::new(
            value.span(),
            "`default` takes a function's name in quotes, e.g. `default = \"default_limit\"`, \
             or no value (`default` alone) for the type's `Default`",
        ));
    }
    let lit: LitStr = value.parse()?;
    let path = lit.parse::<syn::Path>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            "`default` must name a function, e.g. `default = \"default_limit\"`",
        )
    })?;
    Ok(Spanned {
        value: FieldDefault::Function(path),
        span: lit.span(),
    })
}

/// syn's reader of an attribute's keys, reading each with `parse`: a problem with a key is
/// recorded in `errors` and the rest of its tokens (up to the next `,`) are skipped, so the
/// keys after it are read too and one build reports every problem.
pub(crate) fn each_key<'e>(
    errors: &'e mut Errors,
    mut parse: impl FnMut(&ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()> + 'e,
) -> impl FnMut(ParseNestedMeta<'_>) -> syn::Result<()> + 'e {
    move |meta| {
        if let Err(error) = parse(&meta, errors) {
            errors.push(error);
            while !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                meta.input.parse::<proc_macro2::TokenTree>()?;
            }
        }
        Ok(())
    }
}

/// Parses every `#[name(...)]` among `attrs` key by key with `parse` (see [`each_key`]),
/// each attribute's problems into `errors` in the order found.
fn parse_each_attr(
    attrs: &[Attribute],
    name: &str,
    errors: &mut Errors,
    mut parse: impl FnMut(&ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident(name)) {
        let mut local = Errors::default();
        let result = attr.parse_nested_meta(each_key(&mut local, &mut parse));
        errors.take(result);
        if let Err(err) = local.finish() {
            errors.push(err);
        }
    }
}

fn unknown_key(meta: &ParseNestedMeta<'_>, attribute: &str, valid: &str) -> syn::Error {
    let path = &meta.path;
    let key = spelled(path);
    let hint = key_hint(&key, attribute, valid);
    meta.error(format!(
        "unknown attribute key `{key}` in {attribute}{hint}; the valid keys are: {valid}"
    ))
}

/// What the writer of an unknown key most likely meant: the valid key it misspells
/// (`readonly`, `categroy`), or, for `#[arg(optional)]`, how an argument is made optional.
/// Empty when nothing is close.
fn key_hint(key: &str, attribute: &str, valid: &str) -> String {
    if attribute == "#[arg]" && matches!(key, "optional" | "skip_if_none") {
        return ": an argument is optional when its type is `Option<T>`, or with `#[arg(default)]`"
            .to_owned();
    }
    // Case, `_` and `-` aside, then at most two edits (a transposition is one).
    let folded = |name: &str| -> String {
        name.chars()
            .filter(|c| *c != '_' && *c != '-')
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let wanted = folded(key);
    valid
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|candidate| !candidate.is_empty() && *candidate != "or")
        .map(|candidate| {
            let distance = strsim::damerau_levenshtein(&wanted, &folded(candidate));
            (distance, candidate)
        })
        .filter(|(distance, _)| *distance <= 2.min(wanted.len() / 3))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| format!(" (did you mean `{candidate}`?)"))
        .unwrap_or_default()
}

/// `#[arg(...)]` on a field, parameter or variant.
#[derive(Default)]
pub struct ArgAttr {
    pub rename: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub default: Option<FieldDefault>,
}

/// Where an argument's value comes from when it is left out.
#[derive(Clone)]
pub enum FieldDefault {
    /// `Default::default()`.
    Trait,
    /// A function: `default = "path::to::fn"`.
    Function(syn::Path),
    /// The field's value in the struct's own default (`#[serde(default)]` on the struct):
    /// from `Default::default()`, or from the function named (`default = "path"`); spanned
    /// at the struct's `default` key, or at the path's string.
    FromStruct(Spanned<Option<syn::Path>>),
}

impl FieldDefault {
    /// Whether two defaults of a field give the same value (the same function, or both
    /// `Default`).
    pub fn same_as(&self, other: &Self) -> bool {
        let path = |path: &syn::Path| quote::quote!(#path).to_string();
        match (self, other) {
            (Self::Trait, Self::Trait) => true,
            (Self::Function(a), Self::Function(b)) => path(a) == path(b),
            _ => false,
        }
    }

    /// How `#[arg]` or `#[serde]` writes this default, for messages.
    pub fn describe(&self) -> String {
        match self {
            Self::Trait | Self::FromStruct(Spanned { value: None, .. }) => "default".to_owned(),
            Self::Function(path)
            | Self::FromStruct(Spanned {
                value: Some(path), ..
            }) => {
                format!("default = \"{}\"", spelled(path))
            }
        }
    }
}

/// Parses every `#[arg(...)]` in `attrs`.
pub fn parse_arg_attrs(attrs: &[Attribute], errors: &mut Errors) -> ArgAttr {
    let mut out = ArgAttr::default();
    parse_each_attr(attrs, "arg", errors, |meta, local| {
        if meta.path.is_ident("rename") {
            let value = string_value(meta, "query")?;
            set(&mut out.rename, value, meta, local);
        } else if meta.path.is_ident("description") {
            let value = string_value(meta, "What the argument is.")?;
            set(&mut out.description, value, meta, local);
        } else if meta.path.is_ident("default") {
            let default = default_key(meta)?.value;
            set(&mut out.default, default, meta, local);
        } else {
            return Err(unknown_key(meta, "#[arg]", ARG_KEYS));
        }
        Ok(())
    });
    out
}

/// `#[command(...)]` on a method of a command group.
#[derive(Default)]
pub struct CommandAttr {
    pub name: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    /// As [`ToolAttr::description_unread`].
    pub description_unread: bool,
    pub skip: bool,
    pub annotations: Annotations,
}

/// Parses every `#[command(...)]` in `attrs`.
pub fn parse_command_attrs(attrs: &[Attribute], errors: &mut Errors) -> CommandAttr {
    let mut out = CommandAttr::default();
    parse_each_attr(attrs, "command", errors, |meta, local| {
        if meta.path.is_ident("name") {
            let value = string_value(meta, "add")?;
            set(&mut out.name, value, meta, local);
        } else if meta.path.is_ident("description") {
            let value = string_value(meta, "What the command does.")
                .inspect_err(|_| out.description_unread = true)?;
            set(&mut out.description, value, meta, local);
        } else if meta.path.is_ident("skip") {
            out.skip = true;
        } else if !out.annotations.parse_flag(meta, local)? {
            return Err(unknown_key(meta, "#[command]", COMMAND_KEYS));
        }
        Ok(())
    });
    out
}

/// Parses every `#[command(...)]` on a variant of a command enum: the command's hints.
/// `name`, `description` and `skip`, which a method takes, are refused pointing to how a
/// variant says each (`#[arg]`/`#[serde]` and its doc comment), so that a variant has one
/// spelling of each, as it had before it took `#[command]`.
pub fn parse_variant_command_attrs(attrs: &[Attribute], errors: &mut Errors) -> Annotations {
    let mut annotations = Annotations::default();
    parse_each_attr(attrs, "command", errors, |meta, local| {
        let elsewhere = if meta.path.is_ident("name") {
            Some(
                "a command variant is named with `#[arg(rename = \"...\")]` or `#[serde(rename = \"...\")]`",
            )
        } else if meta.path.is_ident("description") {
            Some(
                "a command variant is described by its doc comment, or `#[arg(description = \"...\")]`",
            )
        } else if meta.path.is_ident("skip") {
            Some("a variant is left out of the commands with `#[serde(skip)]`")
        } else {
            None
        };
        if let Some(elsewhere) = elsewhere {
            let key = spelled(&meta.path);
            return Err(meta.error(format!(
                "`{key}` is not a key of `#[command]` on a variant: {elsewhere}; \
                     the keys there are: {VARIANT_COMMAND_KEYS}"
            )));
        }
        if !annotations.parse_flag(meta, local)? {
            return Err(unknown_key(
                meta,
                "#[command] on a variant",
                VARIANT_COMMAND_KEYS,
            ));
        }
        Ok(())
    });
    annotations
}

/// The `#[ctx]` attribute among `attrs`, if any; `#[ctx]` takes no arguments.
pub fn ctx_attr<'a>(attrs: &'a [Attribute], errors: &mut Errors) -> Option<&'a Attribute> {
    let attr = attrs.iter().find(|a| a.path().is_ident("ctx"))?;
    if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(
            attr,
            "`#[ctx]` takes no arguments: the parameter's type says what it takes from the session",
        );
    }
    Some(attr)
}

/// The `#[bind]` attribute among `attrs`, if any; `#[bind]` takes no arguments.
pub fn bind_attr<'a>(attrs: &'a [Attribute], errors: &mut Errors) -> Option<&'a Attribute> {
    let attr = attrs.iter().find(|a| a.path().is_ident("bind"))?;
    if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(
            attr,
            "`#[bind]` takes no arguments: the value is given to the generated `new`",
        );
    }
    Some(attr)
}

/// The `#[args]` attribute among `attrs`, if any; `#[args]` takes no arguments.
pub fn args_attr<'a>(attrs: &'a [Attribute], errors: &mut Errors) -> Option<&'a Attribute> {
    let attr = attrs.iter().find(|a| a.path().is_ident("args"))?;
    if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(
            attr,
            "`#[args]` takes no arguments: the parameter's type (deriving `ToolArgs`) says what the arguments are",
        );
    }
    Some(attr)
}

/// Reports each helper attribute of the macros in `attrs` that does not go on `place` (not
/// named in `allowed`): it would be taken out, or passed over, having no effect there.
pub fn misplaced_helpers(attrs: &[Attribute], allowed: &[&str], place: &str, errors: &mut Errors) {
    for attr in attrs {
        let goes_on = [
            (
                "arg",
                "a parameter, a field, or a variant of a command enum",
            ),
            ("ctx", "a parameter of a tool function"),
            ("bind", "a parameter of a tool function"),
            (
                "args",
                "a parameter of a tool function or command, whose type derives `ToolArgs`",
            ),
            (
                "command",
                "a method of a command group (with a `self` receiver), or a variant of a command enum",
            ),
            ("toolsmith", "the type that derives `ToolArgs`"),
        ];
        if let Some((name, goes_on)) = goes_on
            .iter()
            .find(|(name, _)| attr.path().is_ident(name) && !allowed.contains(name))
        {
            errors.spanned(
                attr,
                format!("`#[{name}]` has no effect on {place}: it goes on {goes_on}"),
            );
        }
    }
}

/// Whether an attribute is one of the macros' own helper attributes (removed from output).
pub fn is_helper(attr: &Attribute) -> bool {
    ["arg", "ctx", "bind", "args", "command"]
        .iter()
        .any(|name| attr.path().is_ident(name))
}

/// The `crate = "path"` (or `crate_path = "path"`) of `#[toolsmith(...)]` on a derived type.
pub struct CrateOverride {
    /// The path, when one was read.
    pub path: Option<syn::Path>,
    /// A path was given but could not be read (or an attribute not read to its end): the
    /// crate the generated code would name is unknown.
    pub unread: bool,
}

/// Reads the [`CrateOverride`] of a derived type's attributes; problems go to `errors`.
pub fn parse_crate_override(attrs: &[Attribute], errors: &mut Errors) -> CrateOverride {
    let mut krate = None;
    let mut unread = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("toolsmith")) {
        let result = attr.parse_nested_meta(each_key(errors, |meta, errors| {
            if let Some(key) = crate_key(meta) {
                let path = crate_value(meta, key).inspect_err(|_| unread = true)?;
                if krate.is_some() {
                    errors.spanned(
                        &meta.path,
                        "the crate's path is given twice (`crate` and `crate_path` are one key)",
                    );
                } else {
                    krate = Some(path);
                }
                Ok(())
            } else {
                Err(unknown_key(meta, "#[toolsmith]", "crate (or crate_path)"))
            }
        }));
        if errors.take(result).is_none() {
            unread = true;
        }
    }
    CrateOverride {
        path: krate,
        unread,
    }
}
