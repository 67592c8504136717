//! The typed model of what the macros read: a tool function, a command group, an argument
//! struct or command enum, each argument an [`ArgField`].

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{ToTokens as _, quote};
use syn::ext::IdentExt as _;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Attribute, FnArg, Ident, ImplItem, ItemFn, ItemImpl, Pat, ReturnType, Token, Type};

use crate::attr::{self, Annotations, CommandAttr, FieldDefault, Spanned, ToolAttr};
use crate::docs::{self, Description, SchemaDoc};
use crate::errors::Errors;
use crate::names;
use crate::rename_rule::RenameRule;
use crate::serde_attr::{self, Place};
use crate::spelled::spelled;

/// One argument of a tool or command: a field of an argument struct or a parameter of a tool
/// function. Both are read and described by the same generator (`args.rs`).
pub struct ArgField {
    /// The Rust name (the field, or the parameter).
    pub member: Ident,
    /// The type the argument is read into.
    pub ty: Type,
    /// The argument's name in the schema, with the span to blame for it.
    pub name: Spanned<String>,
    /// The argument's description.
    pub description: Option<String>,
    /// The value used when the argument is left out.
    pub default: Option<FieldDefault>,
}

/// A field that is no argument (`#[serde(skip)]`): filled from its default when read.
pub struct SkippedField {
    /// The field.
    pub member: Ident,
    /// Its type.
    pub ty: Type,
    /// Where its value comes from.
    pub default: FieldDefault,
}

/// A parameter of a tool function or command method.
pub enum Param {
    /// An argument the model sends. `borrowed_str` when the parameter is `&str` (read as a
    /// `String` and lent).
    Arg { field: ArgField, borrowed_str: bool },
    /// A `#[ctx]` value from the session, or (`bound`) a `#[bind]` value given to the
    /// generated `new` only.
    Ctx { ident: Ident, ty: Type, bound: bool },
    /// A `#[ctx]` parameter of type `ToolCallContext`: the running call's context, read when
    /// each call starts rather than from the session.
    Call { ty: Type },
    /// An `#[args]` parameter: the call's whole arguments, read into its type.
    Whole(WholeArgs),
}

/// An `#[args]` parameter: its type (deriving `ToolArgs`) is the tool's or command's whole
/// arguments, its schema theirs (`ArgsSchema`), read as `ToolArgs::parse` reads it.
pub struct WholeArgs {
    /// The parameter's name.
    pub ident: Ident,
    /// The type the arguments are read into.
    pub ty: Type,
    /// The `#[args]` attribute, where an error about the parameter points.
    pub marker: Attribute,
}

/// A parameter of a tool function marked `#[ctx]` or `#[bind]`, as written: read whether or
/// not the parameter is well-formed (a malformed one makes no [`Param`]). The error path's
/// stand-in `new` takes one value for each, so that a call written for the function as the
/// user meant it is no arity error of its own (`stand_in`).
pub struct MarkedParam {
    /// The parameter's type.
    pub ty: Type,
    /// `#[bind]` without `#[ctx]`: the tool is then surely no session constructor.
    pub bound: bool,
    /// `#[ctx]` without `#[bind]` on a `ToolCallContext`: read at each call, not given to `new`.
    pub call: bool,
    /// The parameter's `#[cfg]`s: a parameter compiled out of this build is none of `new`'s.
    pub cfgs: Vec<Attribute>,
}

impl MarkedParam {
    /// The parameter, if it is marked `#[ctx]` or `#[bind]`.
    fn read(pat_ty: &syn::PatType) -> Option<Self> {
        let marked = |name: &str| pat_ty.attrs.iter().any(|a| a.path().is_ident(name));
        let (ctx, bind) = (marked("ctx"), marked("bind"));
        (ctx || bind).then(|| Self {
            ty: (*pat_ty.ty).clone(),
            bound: bind && !ctx,
            call: ctx && !bind && is_call_context(&pat_ty.ty),
            cfgs: pat_ty
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("cfg"))
                .cloned()
                .collect(),
        })
    }
}

/// What a tool function returns.
pub struct Output {
    /// The type after `->` (`()` when there is none).
    pub ty: Type,
    /// The same type as the tool's definition names it, outside the function's `impl`
    /// (`Self` replaced by the `impl`'s type); its result schema is picked from it.
    pub schema_ty: Type,
    /// Where to point errors about the result.
    pub span: Span,
}

/// `#[tool_fn]` on a function.
pub struct ToolFn {
    pub attr: ToolAttr,
    /// The function as it is emitted (helper attributes removed), but for its body: read
    /// as `{}`, see [`FnBody`].
    pub item: ItemFn,
    /// The function's body, as it came.
    pub body: FnBody,
    pub name: Spanned<String>,
    pub description: Option<Description>,
    pub params: Vec<Param>,
    /// The parameters marked `#[ctx]` or `#[bind]`, in order, malformed ones too.
    pub marked: Vec<MarkedParam>,
    pub output: Output,
    /// The generated unit struct's name (`add_numbers` → `AddNumbers`).
    pub struct_ident: Ident,
    /// The function's name in PascalCase is no struct name (an error says so):
    /// `struct_ident` is a placeholder no use of the tool names.
    pub struct_unnamed: bool,
}

/// A command of a command group: a method with a `self` receiver.
pub struct Command {
    pub method: Ident,
    pub name: Spanned<String>,
    pub description: Option<Description>,
    /// `#[command(description = ..)]` was given but could not be read (an error says so).
    pub description_unread: bool,
    pub fields: Vec<ArgField>,
    /// Which arguments are `&str` (read as `String` and lent), by index into `fields`.
    pub borrowed_str: Vec<bool>,
    /// The `#[args]` parameters (one at most, and then no `fields`: `valid` says so).
    pub whole: Vec<WholeArgs>,
    pub output: Output,
    pub is_async: bool,
    pub annotations: Annotations,
}

/// `#[tool_fn]` on an `impl` block.
pub struct ToolGroup {
    pub attr: ToolAttr,
    /// The impl block as it is emitted (helper attributes removed).
    pub item: ItemImpl,
    pub name: Spanned<String>,
    /// The group's own description: `description = "..."` or the block's doc comment.
    pub description: Option<Description>,
    pub commands: Vec<Command>,
}

/// `#[derive(ToolArgs)]` on a struct with named fields.
pub struct ArgsStruct {
    pub ident: Ident,
    pub fields: Vec<ArgField>,
    /// The fields `#[serde(skip)]` leaves out of the arguments.
    pub skipped: Vec<SkippedField>,
}

/// A variant of a command enum.
pub struct CommandVariant {
    pub ident: Ident,
    pub name: Spanned<String>,
    pub description: Option<String>,
    pub fields: Vec<ArgField>,
    /// The fields `#[serde(skip)]` leaves out of the command's arguments.
    pub skipped: Vec<SkippedField>,
    pub unit: bool,
    /// The command's own hints (`#[command(read_only)]`, ..); the function taking the enum
    /// gives those it leaves unset.
    pub annotations: Annotations,
}

/// `#[derive(ToolArgs)]` on an enum.
pub struct CommandEnum {
    pub ident: Ident,
    pub variants: Vec<CommandVariant>,
}

/// What `#[derive(ToolArgs)]` was applied to.
pub enum DeriveInput {
    Struct(ArgsStruct),
    Enum(CommandEnum),
}

/// Removes the macros' helper attributes and doc comments (rustdoc rejects docs on
/// parameters once the macro has run) from a parameter's attributes.
fn strip_param_attrs(attrs: &mut Vec<Attribute>) {
    attrs.retain(|a| !attr::is_helper(a) && !a.path().is_ident("doc"));
}

/// Whether `ty` is `&str` (any lifetime, not `mut`).
fn is_borrowed_str(ty: &Type) -> bool {
    matches!(ty, Type::Reference(r) if r.mutability.is_none()
        && r.lifetime.as_ref().is_none_or(|l| l.ident == "_")
        && matches!(&*r.elem, Type::Path(p) if p.qself.is_none() && p.path.is_ident("str")))
}

/// A reference in `ty` whose lifetime is elided (or `'_`), or a `'_` lifetime argument
/// (`Cow<'_, str>`): one that would borrow from the function's parameters.
fn elided_borrow(ty: &Type) -> Option<&dyn quote::ToTokens> {
    match ty {
        Type::Reference(reference)
            if reference.lifetime.as_ref().is_none_or(|l| l.ident == "_") =>
        {
            Some(reference)
        }
        Type::Reference(reference) => elided_borrow(&reference.elem),
        Type::Paren(inner) => elided_borrow(&inner.elem),
        Type::Group(inner) => elided_borrow(&inner.elem),
        Type::Slice(slice) => elided_borrow(&slice.elem),
        Type::Array(array) => elided_borrow(&array.elem),
        Type::Tuple(tuple) => tuple.elems.iter().find_map(elided_borrow),
        Type::Path(path) => path.path.segments.iter().find_map(|segment| {
            let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments else {
                return None;
            };
            arguments.args.iter().find_map(|argument| match argument {
                syn::GenericArgument::Type(ty) => elided_borrow(ty),
                syn::GenericArgument::Lifetime(lifetime) if lifetime.ident == "_" => {
                    Some(lifetime as &dyn quote::ToTokens)
                }
                _ => None,
            })
        }),
        _ => None,
    }
}

impl Output {
    fn parse(output: &ReturnType, fallback: Span) -> Self {
        match output {
            ReturnType::Default => Self {
                ty: syn::parse_quote!(()),
                schema_ty: syn::parse_quote!(()),
                span: fallback,
            },
            ReturnType::Type(_, ty) => Self {
                ty: (**ty).clone(),
                schema_ty: (**ty).clone(),
                span: ty.span(),
            },
        }
    }
}

/// Whether a `#[ctx]` parameter's type is the per-call context (`ToolCallContext`, by its
/// last path segment: the macro sees spellings, not types).
fn is_call_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|s| s.ident == "ToolCallContext" && s.arguments.is_none()))
}

/// Reads one typed parameter into an [`ArgField`] (or a `#[ctx]` value).
fn parse_param(
    pat_ty: &syn::PatType,
    doc_arguments: &[(String, String)],
    allow_ctx: bool,
    errors: &mut Errors,
) -> Option<Param> {
    let ident = match &*pat_ty.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            errors.spanned(
                other,
                "a tool parameter must be a plain name (`x: T`): its name is the argument's name; destructure inside the function instead",
            );
            return None;
        }
    };
    attr::misplaced_helpers(
        &pat_ty.attrs,
        &["arg", "ctx", "bind", "args"],
        "a parameter",
        errors,
    );
    // The schema, the reading and the call are generated from every parameter: one that
    // may be compiled out would leave them naming it.
    if let Some(cfg) = pat_ty.attrs.iter().find(|a| a.path().is_ident("cfg")) {
        errors.spanned(
            cfg,
            "`#[cfg]` on a tool parameter is not supported: the tool's schema lists every parameter; give the parameter in all builds, or make two functions",
        );
        return None;
    }
    let ctx = attr::ctx_attr(&pat_ty.attrs, errors);
    let bind = attr::bind_attr(&pat_ty.attrs, errors);
    let whole = attr::args_attr(&pat_ty.attrs, errors);
    if let (Some(whole), Some(_)) = (whole, ctx.or(bind)) {
        let key = if ctx.is_some() { "ctx" } else { "bind" };
        errors.spanned(
            whole,
            format!(
                "a parameter is either `#[args]` (the call's whole arguments) or `#[{key}]` (not an argument), not both"
            ),
        );
        return None;
    }
    if let Some(whole) = whole {
        return parse_whole_args(pat_ty, ident, whole, errors);
    }
    if let (Some(_), Some(bind)) = (ctx, bind) {
        errors.spanned(
            bind,
            "a parameter is either `#[ctx]` (from the session) or `#[bind]` (given to `new`), not both",
        );
        return None;
    }
    if let Some(marker) = ctx.or(bind) {
        if !allow_ctx {
            // A command has no `#[ctx]` of its own: what it would have read, it reads another
            // way, and the message says which.
            let message = if ctx.is_some() {
                "`#[ctx]` is for tool functions; a command group keeps its state in `self` \
                 (set it when the value is made), and a command reads its call's context \
                 (id, cancellation, progress) with `ToolCallContext::current()`"
            } else {
                "`#[bind]` is for tool functions; a command group keeps its state in `self`"
            };
            errors.spanned(marker, message);
            return None;
        }
        // `#[arg]` says how the model sees an argument; this parameter is no argument.
        if let Some(arg) = pat_ty.attrs.iter().find(|a| a.path().is_ident("arg")) {
            let key = if ctx.is_some() { "ctx" } else { "bind" };
            errors.spanned(
                arg,
                format!(
                    "`#[arg]` has no effect on a `#[{key}]` parameter: it is not an argument the model sends"
                ),
            );
        }
        if ctx.is_some() && is_call_context(&pat_ty.ty) {
            return Some(Param::Call {
                ty: (*pat_ty.ty).clone(),
            });
        }
        return Some(Param::Ctx {
            ident,
            ty: (*pat_ty.ty).clone(),
            bound: bind.is_some(),
        });
    }
    let arg = attr::parse_arg_attrs(&pat_ty.attrs, errors);
    let borrowed_str = is_borrowed_str(&pat_ty.ty);
    let ty: Type = if borrowed_str {
        syn::parse_quote_spanned!(pat_ty.ty.span()=> ::std::string::String)
    } else {
        check_param_type(&pat_ty.ty, errors);
        (*pat_ty.ty).clone()
    };
    let plain = ident.unraw().to_string();
    let description = arg
        .description
        .map(|d| d.value)
        .or_else(|| docs::argument_doc(&pat_ty.attrs, SchemaDoc::Argument, errors))
        .or_else(|| {
            doc_arguments
                .iter()
                .find(|(name, _)| *name == plain)
                .map(|(_, d)| d.clone())
        });
    let name = arg.rename.unwrap_or(Spanned {
        value: plain,
        span: ident.span(),
    });
    Some(Param::Arg {
        field: ArgField {
            member: ident,
            ty,
            name,
            description,
            default: arg.default,
        },
        borrowed_str,
    })
}

/// Reads an `#[args]` parameter (`marker` its attribute).
fn parse_whole_args(
    pat_ty: &syn::PatType,
    ident: Ident,
    marker: &Attribute,
    errors: &mut Errors,
) -> Option<Param> {
    // The arguments are the type's fields, named and described there.
    if let Some(arg) = pat_ty.attrs.iter().find(|a| a.path().is_ident("arg")) {
        errors.spanned(
            arg,
            "`#[arg]` has no effect on an `#[args]` parameter: the arguments are its type's fields; put `#[arg(...)]` on those",
        );
    }
    if let Type::Reference(reference) = &*pat_ty.ty {
        let owned = spelled(&reference.elem);
        errors.spanned(
            &pat_ty.ty,
            format!(
                "an `#[args]` parameter takes its value: the call's arguments are read into a new value of its type (write `{owned}`, not `&{owned}`)"
            ),
        );
        return None;
    }
    check_param_type(&pat_ty.ty, errors);
    Some(Param::Whole(WholeArgs {
        ident,
        ty: (*pat_ty.ty).clone(),
        marker: marker.clone(),
    }))
}

/// The names of a function's typed parameters (`#[ctx]` and `#[bind]` ones too), without
/// `r#`.
fn param_names(sig: &syn::Signature) -> Vec<String> {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(pat_ty) => match &*pat_ty.pat {
                Pat::Ident(p) => Some(p.ident.unraw().to_string()),
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect()
}

/// Rejects parameter types the generated code cannot own.
fn check_param_type(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(_) => errors.spanned(
            ty,
            "a tool parameter must be an owned type (the arguments are read from JSON): use `String`, `Vec<T>`, … (`&str`, lent for the call, is the one borrowed type accepted; not `&'static str`)",
        ),
        Type::ImplTrait(_) => errors.spanned(
            ty,
            "a tool parameter cannot be `impl Trait`: the argument is read from JSON into one concrete type",
        ),
        _ => match inner_types(ty).find_map(|inner| find_type(inner, &is_unowned)) {
            Some(inner @ Type::Reference(_)) => errors.spanned(
                inner,
                "a tool parameter must be owned all through (the arguments are read from JSON, and only a whole `&str` is lent): write `Option<String>` for `Option<&str>`, `Vec<String>` for `Vec<&str>`",
            ),
            Some(inner) => errors.spanned(
                inner,
                "a tool parameter cannot hold `impl Trait`: the argument is read from JSON into one concrete type",
            ),
            None => {}
        },
    }
}

/// Whether `ty` is a reference or an `impl Trait`, which no argument read from JSON can be.
fn is_unowned(ty: &Type) -> bool {
    matches!(ty, Type::Reference(_) | Type::ImplTrait(_))
}

/// The first type within `ty` (itself included) for which `wanted` holds, looking into
/// references, tuples, slices, arrays and type arguments.
fn find_type<'t>(ty: &'t Type, wanted: &dyn Fn(&Type) -> bool) -> Option<&'t Type> {
    if wanted(ty) {
        return Some(ty);
    }
    inner_types(ty).find_map(|inner| find_type(inner, wanted))
}

/// The types `ty` is directly made of.
fn inner_types(ty: &Type) -> Box<dyn Iterator<Item = &Type> + '_> {
    match ty {
        Type::Reference(reference) => Box::new(std::iter::once(&*reference.elem)),
        Type::Paren(inner) => Box::new(std::iter::once(&*inner.elem)),
        Type::Group(inner) => Box::new(std::iter::once(&*inner.elem)),
        Type::Slice(slice) => Box::new(std::iter::once(&*slice.elem)),
        Type::Array(array) => Box::new(std::iter::once(&*array.elem)),
        Type::Tuple(tuple) => Box::new(tuple.elems.iter()),
        Type::Path(path) => Box::new(path.path.segments.iter().flat_map(|segment| {
            let arguments = match &segment.arguments {
                syn::PathArguments::AngleBracketed(arguments) => Some(arguments),
                _ => None,
            };
            arguments.into_iter().flat_map(|arguments| {
                arguments.args.iter().filter_map(|argument| match argument {
                    syn::GenericArgument::Type(ty) => Some(ty),
                    _ => None,
                })
            })
        })),
        _ => Box::new(std::iter::empty()),
    }
}

/// The tokens of `generics` an error points at: its `<..>` and its `where` clause (a
/// `Generics` alone prints only the `<..>`, which a `where` clause without parameters leaves
/// empty, and an empty span falls back to the whole attribute).
fn generics_tokens(generics: &syn::Generics) -> TokenStream {
    let where_clause = &generics.where_clause;
    quote!(#generics #where_clause)
}

/// Records an error when `generics` has parameters or a `where` clause: `what` (a tool
/// function, a command, ..) takes neither, `why`.
fn refuse_generics(generics: &syn::Generics, what: &str, why: &str, errors: &mut Errors) {
    if generics.params.is_empty() && generics.where_clause.is_none() {
        return;
    }
    let refused = if generics.params.is_empty() {
        "have a `where` clause"
    } else {
        "be generic"
    };
    errors.spanned(
        generics_tokens(generics),
        format!("{what} cannot {refused}: {why}"),
    );
}

/// Whether `ty` is a future written as a type (`impl Future<..>`, `Pin<Box<dyn Future<..>>>`'s
/// `dyn Future<..>`, `BoxFuture<..>`): a tool returning one is an `async fn`.
fn names_a_future(ty: &Type) -> bool {
    let is_future = |path: &syn::Path| {
        path.segments.last().is_some_and(|segment| {
            ["Future", "IntoFuture", "BoxFuture", "LocalBoxFuture"]
                .iter()
                .any(|name| segment.ident == name)
        })
    };
    let bounds_a_future = |bounds: &Punctuated<syn::TypeParamBound, Token![+]>| {
        bounds.iter().any(|bound| match bound {
            syn::TypeParamBound::Trait(bound) => is_future(&bound.path),
            _ => false,
        })
    };
    match ty {
        Type::ImplTrait(opaque) => bounds_a_future(&opaque.bounds),
        Type::TraitObject(object) => bounds_a_future(&object.bounds),
        Type::Path(path) => path.qself.is_none() && is_future(&path.path),
        _ => false,
    }
}

/// A tool's return type names one concrete type, which a call gives: the result's conversion
/// and schema are picked from it.
fn check_return_type(output: &ReturnType, errors: &mut Errors) {
    let ReturnType::Type(_, ty) = output else {
        return;
    };
    if let Some(future) = find_type(ty, &names_a_future) {
        errors.spanned(
            future,
            "a tool that gives its result later is an `async fn` returning the result (`async fn f(..) -> u32`), not a function returning a future",
        );
    } else if let Some(opaque) = find_type(ty, &|ty| matches!(ty, Type::ImplTrait(_))) {
        errors.spanned(
            opaque,
            "a tool's return type must name a concrete type (how the result is sent, and its schema, are picked from it): write `Vec<u32>`, not `impl Serialize`",
        );
    } else if let Some(never) = find_type(ty, &|ty| matches!(ty, Type::Never(_))) {
        errors.spanned(
            never,
            "a tool cannot return `!`: every call is answered; return `Result<T, E>` for a call that fails",
        );
    }
}

impl ToolFn {
    /// Reads a function; problems go to `errors`.
    pub fn parse(attr: ToolAttr, mut item: ItemFn, body: FnBody, errors: &mut Errors) -> Self {
        refuse_repeated_tool_fn(&mut item.attrs, errors);
        let sig = &item.sig;
        refuse_generics(
            &sig.generics,
            "a tool function",
            "its arguments are read from JSON into concrete types",
            errors,
        );
        if let Some(constness) = &sig.constness {
            errors.spanned(constness, "a tool function cannot be `const`");
        }
        if !matches!(sig.safety, syn::Safety::Default) {
            errors.spanned(sig.fn_token, "a tool function cannot be `unsafe`");
        }
        if let Some(abi) = &sig.abi {
            errors.spanned(abi, "a tool function cannot have an `extern` ABI");
        }
        if let Some(variadic) = &sig.variadic {
            errors.spanned(variadic, "a tool function cannot be variadic");
        }
        let doc = docs::fn_doc(&item.attrs, errors);
        let mut params = Vec::new();
        let mut marked = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(receiver) => errors.spanned(
                    receiver,
                    "`self` is not allowed on a free tool function; to keep state in `self`, put `#[tool_fn]` on the `impl` block (each method becomes a command)",
                ),
                FnArg::Typed(pat_ty) => {
                    marked.extend(MarkedParam::read(pat_ty));
                    params.extend(parse_param(pat_ty, &doc.arguments, true, errors));
                }
            }
        }
        let whole_ty = params.iter().find_map(|param| match param {
            Param::Whole(args) => Some(&args.ty),
            _ => None,
        });
        docs::check_arguments_list(
            &item.attrs,
            &doc.arguments,
            &param_names(sig),
            whole_ty,
            errors,
        );
        check_return_type(&sig.output, errors);
        let output = Output::parse(&sig.output, sig.ident.span());
        // An async or blocking call owns its arguments and drops them when it ends: what it
        // returns cannot borrow from them.
        if (sig.asyncness.is_some() || attr.blocking.is_some())
            && let ReturnType::Type(_, ty) = &sig.output
            && let Some(borrow) = elided_borrow(ty)
        {
            errors.spanned(
                borrow,
                "an async or `blocking` tool cannot return a value borrowed from its arguments (they are dropped when the call ends): return an owned type such as `String`, or a `&'static` one",
            );
        }
        let fn_name = sig.ident.unraw().to_string();
        let name = attr.name.clone().unwrap_or(Spanned {
            value: fn_name.clone(),
            span: sig.ident.span(),
        });
        let description = attr
            .description
            .as_ref()
            .map(|d| Description::Text(d.value.clone()))
            .or(doc.description);
        let mut struct_unnamed = false;
        let struct_ident = attr.struct_name.clone().unwrap_or_else(|| {
            let pascal = names::pascal_case(&fn_name);
            // `self_` and `__` are names of functions, but `Self` and `` are none of a struct.
            if syn::parse_str::<Ident>(&pascal).is_err() {
                errors.spanned(
                    &sig.ident,
                    format!(
                        "the struct `#[tool_fn]` generates would be named `{pascal}` (the \
                         function's name in PascalCase), which is no struct name: name it with \
                         `#[tool_fn(struct_name = \"...\")]`"
                    ),
                );
                struct_unnamed = true;
                return Ident::new("__ToolsmithUnnamed", sig.ident.span());
            }
            Ident::new(&pascal, sig.ident.span())
        });
        // A receiver was reported above; dropping it from the emitted function spares the
        // user rustc's own second error about it.
        item.sig.inputs = std::mem::take(&mut item.sig.inputs)
            .into_pairs()
            .filter(|pair| !matches!(pair.value(), FnArg::Receiver(_)))
            .collect();
        for input in &mut item.sig.inputs {
            if let FnArg::Typed(pat_ty) = input {
                strip_param_attrs(&mut pat_ty.attrs);
            }
        }
        Self {
            attr,
            item,
            body,
            name,
            description,
            params,
            marked,
            output,
            struct_ident,
            struct_unnamed,
        }
    }

    /// The function as it is emitted: its attributes, visibility and signature as read (helper
    /// attributes removed), and its body as it came.
    pub fn emitted(&self) -> TokenStream {
        let ItemFn {
            attrs, vis, sig, ..
        } = &self.item;
        let body = &self.body.0;
        quote!(#(#attrs)* #vis #sig #body)
    }

    /// The arguments the model sends one by one (the parameters without `#[ctx]`, `#[bind]`
    /// or `#[args]`).
    pub fn arg_fields(&self) -> impl Iterator<Item = &ArgField> {
        self.params.iter().filter_map(|p| match p {
            Param::Arg { field, .. } => Some(field),
            Param::Ctx { .. } | Param::Call { .. } | Param::Whole(_) => None,
        })
    }

    /// The `#[args]` parameters (one at most, and then no other argument: `valid` says so).
    pub fn whole_args(&self) -> impl Iterator<Item = &WholeArgs> {
        self.params.iter().filter_map(|p| match p {
            Param::Whole(args) => Some(args),
            Param::Arg { .. } | Param::Ctx { .. } | Param::Call { .. } => None,
        })
    }

    /// Whether the tool takes values from the session.
    pub fn has_ctx(&self) -> bool {
        self.params.iter().any(|p| matches!(p, Param::Ctx { .. }))
    }

    /// Whether a parameter is `#[bind]`: the tool is then built with `new` only.
    pub fn has_bound(&self) -> bool {
        self.params
            .iter()
            .any(|p| matches!(p, Param::Ctx { bound: true, .. }))
    }
}

impl ToolGroup {
    /// Reads an impl block; problems go to `errors`.
    pub fn parse(attr: ToolAttr, mut item: ItemImpl, errors: &mut Errors) -> Self {
        refuse_repeated_tool_fn(&mut item.attrs, errors);
        refuse_generics(
            &item.generics,
            "a command group's `impl` block",
            "the tool is one concrete type",
            errors,
        );
        if let Some((path, _)) = &item.trait_ {
            errors.spanned(
                path,
                "`#[tool_fn]` goes on an inherent `impl` block (`impl Memory { ... }`), not a trait impl",
            );
        }
        if let Some(span) = attr.blocking {
            errors.at(
                span,
                "`blocking` applies to a sync tool function, not to a command group",
            );
        }
        if let Some(ident) = &attr.struct_name {
            errors.spanned(
                ident,
                "`struct_name` names the struct generated for a tool function; a command group is implemented on its `impl` block's own type, and generates none",
            );
        }
        let name = attr.name.clone().unwrap_or_else(|| {
            let ident = match &*item.self_ty {
                Type::Path(p) => p.path.segments.last().map(|s| s.ident.unraw().to_string()),
                _ => None,
            };
            Spanned {
                value: names::snake_case(&ident.unwrap_or_default()),
                span: item.self_ty.span(),
            }
        });
        let mut commands = Vec::new();
        for impl_item in &mut item.items {
            let ImplItem::Fn(method) = impl_item else {
                continue;
            };
            refuse_nested_tool_fn(method, errors);
            let command_attr = attr::parse_command_attrs(&method.attrs, errors);
            let commanded = method.attrs.iter().any(|a| a.path().is_ident("command"));
            attr::misplaced_helpers(&method.attrs, &["command"], "a method", errors);
            method.attrs.retain(|a| !attr::is_helper(a));
            let Some(receiver) = method.sig.receiver() else {
                if commanded {
                    errors.spanned(
                        &method.sig.ident,
                        "`#[command]` is for methods with a `self` receiver",
                    );
                }
                continue;
            };
            if command_attr.skip {
                if command_attr.name.is_some()
                    || command_attr.description.is_some()
                    || command_attr.annotations.any()
                {
                    errors.spanned(
                        &method.sig.ident,
                        "`#[command(skip)]` leaves this method out of the tool: its other `#[command]` keys have no effect; remove them, or `skip`",
                    );
                }
                continue;
            }
            if let Some(cfg) = method.attrs.iter().find(|a| a.path().is_ident("cfg")) {
                errors.spanned(
                    cfg,
                    "`#[cfg]` on a command is not supported: the group's schema and dispatch name every command; mark it `#[command(skip)]` to keep it out of the tool, or move it to another `impl` block",
                );
                continue;
            }
            // `&self`, or the same written out: `self: &Self`, `self: &Memory`.
            let is_shared_ref = match &receiver.kind {
                syn::ReceiverKind::Reference(_, _, None) => true,
                syn::ReceiverKind::Typed(_, ty) => matches!(&**ty, Type::Reference(reference)
                    if reference.mutability.is_none()
                        && (matches!(&*reference.elem, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
                            || reference.elem.to_token_stream().to_string()
                                == item.self_ty.to_token_stream().to_string())),
                _ => false,
            };
            if !is_shared_ref {
                errors.spanned(
                    receiver,
                    "a command takes `&self`: a tool is shared between calls (use interior mutability, e.g. a `Mutex`, for state that changes)",
                );
            }
            commands.push(parse_command(method, &item.self_ty, command_attr, errors));
            for input in &mut method.sig.inputs {
                if let FnArg::Typed(pat_ty) = input {
                    strip_param_attrs(&mut pat_ty.attrs);
                }
            }
        }
        if commands.is_empty() {
            errors.spanned(
                &item.self_ty,
                "a command group needs at least one command: a method with a `&self` receiver",
            );
        }
        let description = attr
            .description
            .as_ref()
            .map(|d| Description::Text(d.value.clone()))
            .or_else(|| docs::item_doc(&item.attrs));
        Self {
            attr,
            item,
            name,
            description,
            commands,
        }
    }
}

/// Reports and removes a `#[tool_fn]` on a function of a command group's block. Left there,
/// it would expand inside the block, where the items it generates cannot go, and read a
/// method's `self` as a free function's: a dozen errors, none saying what to do.
fn refuse_nested_tool_fn(method: &mut syn::ImplItemFn, errors: &mut Errors) {
    let Some(nested) = method.attrs.iter().find(|attr| is_tool_fn(attr)) else {
        return;
    };
    let message = if method.sig.receiver().is_some() {
        "`#[tool_fn]` goes on the `impl` block alone: each `&self` method of a command group is a command already; name it or give it hints with `#[command(...)]`"
    } else {
        "`#[tool_fn]` cannot go on a function inside an `impl` block: a tool function is a free function; move it out of the block (in a command group, each `&self` method is a command)"
    };
    errors.spanned(nested, message);
    method.attrs.retain(|attr| !is_tool_fn(attr));
}

/// Whether `attr` is `#[tool_fn]` (by its last path segment: `#[toolsmith::tool_fn]` too).
fn is_tool_fn(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "tool_fn" || segment.ident == "core_tool_fn")
}

/// Refuses a second `#[tool_fn]` on the item being expanded, and removes it: left in the
/// emitted item it would expand again, and the user would read rustc's errors about a struct
/// or `ToolImpl` defined twice instead of the cause (the keys of one attribute written as
/// several).
fn refuse_repeated_tool_fn(attrs: &mut Vec<Attribute>, errors: &mut Errors) {
    for repeated in attrs.iter().filter(|attr| is_tool_fn(attr)) {
        errors.spanned(
            repeated,
            "`#[tool_fn]` given twice: put all keys in one, e.g. `#[tool_fn(name = \"...\", description = \"...\")]`",
        );
    }
    attrs.retain(|attr| !is_tool_fn(attr));
}

/// Replaces `Self` with the impl's type: argument structs and definitions are generated
/// outside the `impl` block, where `Self` means nothing.
struct ReplaceSelf<'a>(&'a Type);

impl syn::visit_mut::VisitMut for ReplaceSelf<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(path) = ty
            && path.qself.is_none()
            && path
                .path
                .segments
                .first()
                .is_some_and(|s| s.ident == "Self")
        {
            // Located at `Self`, so that an error about the type points at the parameter.
            let self_ty = located_at(self.0.to_token_stream(), path.path.segments[0].ident.span());
            if path.path.segments.len() == 1 {
                *ty = syn::parse_quote!(#self_ty);
            } else {
                let rest = path.path.segments.iter().skip(1);
                *ty = syn::parse_quote!(<#self_ty>::#(#rest)::*);
            }
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// `tokens` with every span's location (not its name resolution) set to `at`.
fn located_at(tokens: TokenStream, at: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner = Group::new(group.delimiter(), located_at(group.stream(), at));
                inner.set_span(group.span().located_at(at));
                TokenTree::Group(inner)
            } else {
                token.set_span(token.span().located_at(at));
                token
            }
        })
        .collect()
}

fn parse_command(
    method: &syn::ImplItemFn,
    self_ty: &Type,
    attr: CommandAttr,
    errors: &mut Errors,
) -> Command {
    let sig = &method.sig;
    refuse_generics(
        &sig.generics,
        "a command",
        "its arguments are read from JSON into concrete types",
        errors,
    );
    // The dispatch calls it with no one to uphold its safety contract.
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        errors.spanned(
            unsafety,
            "a command cannot be `unsafe`: the model's call would run it without an `unsafe` block; mark it `#[command(skip)]`, or make it safe",
        );
    }
    let doc = docs::fn_doc(&method.attrs, errors);
    let mut fields = Vec::new();
    let mut borrowed = Vec::new();
    let mut whole = Vec::new();
    for input in sig.inputs.iter().skip(1) {
        let FnArg::Typed(pat_ty) = input else {
            continue;
        };
        match parse_param(pat_ty, &doc.arguments, false, errors) {
            Some(Param::Arg {
                field,
                borrowed_str,
            }) => {
                fields.push(field);
                borrowed.push(borrowed_str);
            }
            Some(Param::Whole(args)) => whole.push(args),
            // Refused by `parse_param` (`allow_ctx` is false).
            Some(Param::Ctx { .. } | Param::Call { .. }) | None => {}
        }
    }
    docs::check_arguments_list(
        &method.attrs,
        &doc.arguments,
        &param_names(sig),
        whole.first().map(|args| &args.ty),
        errors,
    );
    let mut replace_self = ReplaceSelf(self_ty);
    for field in &mut fields {
        syn::visit_mut::VisitMut::visit_type_mut(&mut replace_self, &mut field.ty);
    }
    for args in &mut whole {
        syn::visit_mut::VisitMut::visit_type_mut(&mut replace_self, &mut args.ty);
    }
    check_return_type(&sig.output, errors);
    let mut output = Output::parse(&sig.output, sig.ident.span());
    syn::visit_mut::VisitMut::visit_type_mut(&mut replace_self, &mut output.schema_ty);
    let method_name = sig.ident.unraw().to_string();
    Command {
        method: sig.ident.clone(),
        name: attr.name.unwrap_or(Spanned {
            value: method_name,
            span: sig.ident.span(),
        }),
        description_unread: attr.description_unread,
        description: attr
            .description
            .map(|d| Description::Text(d.value))
            .or(doc.description),
        fields,
        borrowed_str: borrowed,
        whole,
        output,
        is_async: sig.asyncness.is_some(),
        annotations: attr.annotations,
    }
}

/// What the `#[serde]` around a struct's or variant's fields says of them all.
#[derive(Default)]
struct FieldRules {
    /// The case of their names (`rename_all`).
    rename_all: Option<RenameRule>,
    /// The default of every field (`#[serde(default)]` on the struct).
    struct_default: Option<FieldDefault>,
}

/// The name `#[arg(rename)]` or `#[serde(rename)]` gives an argument or command; the two
/// naming it differently is an error (the tool and serde would call it by different names).
fn explicit_name(
    arg: Option<Spanned<String>>,
    serde: Option<Spanned<String>>,
    what: &str,
    errors: &mut Errors,
) -> Option<Spanned<String>> {
    match (arg, serde) {
        (Some(arg), Some(serde)) if arg.value != serde.value => {
            errors.at(
                serde.span,
                format!(
                    "`#[arg(rename = {:?})]` and `#[serde(rename = {:?})]` name this {what} differently; keep one of them (or give both the same name)",
                    arg.value, serde.value
                ),
            );
            Some(arg)
        }
        (arg, serde) => arg.or(serde),
    }
}

/// A field's default from `#[arg(default ..)]`, `#[serde(default ..)]` or the struct's
/// `#[serde(default)]`, the field's own first; the field's two differing is an error.
fn field_default(
    arg: Option<FieldDefault>,
    serde: Option<Spanned<FieldDefault>>,
    rules: &FieldRules,
    errors: &mut Errors,
) -> Option<FieldDefault> {
    let own = match (arg, serde) {
        (Some(arg), Some(serde)) if !arg.same_as(&serde.value) => {
            errors.at(
                serde.span,
                format!(
                    "`#[arg({})]` and `#[serde({})]` give this field different defaults; keep one of them",
                    arg.describe(),
                    serde.value.describe()
                ),
            );
            Some(arg)
        }
        (arg, serde) => arg.or(serde.map(|serde| serde.value)),
    };
    own.or_else(|| rules.struct_default.clone())
}

/// Reports each of the helper attributes `helpers` (`arg`, and on a variant `command`) on a
/// field or variant that `#[serde(skip)]` leaves out.
fn helpers_on_skipped(attrs: &[Attribute], helpers: &[&str], what: &str, errors: &mut Errors) {
    for attr in attrs {
        let Some(name) = helpers.iter().find(|name| attr.path().is_ident(name)) else {
            continue;
        };
        errors.spanned(
            attr,
            format!("`#[{name}]` has no effect on a {what} that `#[serde(skip)]` leaves out; remove one of them"),
        );
    }
}

/// Reads the named fields of a struct or variant: its arguments, and the fields
/// `#[serde(skip)]` leaves out of them.
fn parse_fields(
    fields: &syn::FieldsNamed,
    rules: &FieldRules,
    errors: &mut Errors,
) -> (Vec<ArgField>, Vec<SkippedField>) {
    let mut arguments = Vec::new();
    let mut skipped = Vec::new();
    for field in &fields.named {
        let Some(ident) = field.ident.clone() else {
            continue;
        };
        attr::misplaced_helpers(&field.attrs, &["arg"], "a field", errors);
        let arg = attr::parse_arg_attrs(&field.attrs, errors);
        let serde = serde_attr::parse(&field.attrs, Place::Field, errors);
        let default = field_default(arg.default, serde.default, rules, errors);
        if serde.skip {
            helpers_on_skipped(&field.attrs, &["arg"], "field", errors);
            skipped.push(SkippedField {
                member: ident,
                ty: field.ty.clone(),
                default: default.unwrap_or(FieldDefault::Trait),
            });
            continue;
        }
        check_param_type(&field.ty, errors);
        let name =
            explicit_name(arg.rename, serde.rename, "argument", errors).unwrap_or_else(|| {
                let plain = ident.unraw().to_string();
                Spanned {
                    value: rules
                        .rename_all
                        .map_or(plain.clone(), |rule| rule.apply_to_field(&plain)),
                    span: ident.span(),
                }
            });
        arguments.push(ArgField {
            description: arg
                .description
                .map(|d| d.value)
                .or_else(|| docs::argument_doc(&field.attrs, SchemaDoc::Argument, errors)),
            member: ident,
            ty: field.ty.clone(),
            name,
            default,
        });
    }
    (arguments, skipped)
}

/// The struct-wide default of `#[serde(default)]` on a struct, as each field takes it.
fn struct_default(default: Option<Spanned<FieldDefault>>) -> Option<FieldDefault> {
    default.map(|default| {
        FieldDefault::FromStruct(Spanned {
            value: match default.value {
                FieldDefault::Function(path) => Some(path),
                _ => None,
            },
            span: default.span,
        })
    })
}

impl DeriveInput {
    /// Reads the input of `#[derive(ToolArgs)]`; problems go to `errors`.
    pub fn parse(input: &syn::DeriveInput, errors: &mut Errors) -> Option<Self> {
        if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
            errors.spanned(
                generics_tokens(&input.generics),
                "`#[derive(ToolArgs)]` does not support generic types: arguments are read into concrete types",
            );
        }
        attr::misplaced_helpers(&input.attrs, &["toolsmith"], "the type itself", errors);
        let place = match &input.data {
            syn::Data::Enum(_) => Place::Enum,
            _ => Place::Struct,
        };
        let serde = serde_attr::parse(&input.attrs, place, errors);
        match &input.data {
            syn::Data::Struct(data) => match &data.fields {
                syn::Fields::Named(fields) => {
                    let rules = FieldRules {
                        rename_all: serde.rename_all,
                        struct_default: struct_default(serde.default),
                    };
                    let (fields, skipped) = parse_fields(fields, &rules, errors);
                    Some(Self::Struct(ArgsStruct {
                        ident: input.ident.clone(),
                        fields,
                        skipped,
                    }))
                }
                syn::Fields::Unnamed(fields) => {
                    errors.spanned(
                        fields,
                        "`#[derive(ToolArgs)]` needs named fields: each field is an argument, and its name is the argument's name",
                    );
                    None
                }
                syn::Fields::Unit => Some(Self::Struct(ArgsStruct {
                    ident: input.ident.clone(),
                    fields: Vec::new(),
                    skipped: Vec::new(),
                })),
            },
            syn::Data::Enum(data) => {
                let mut variants = Vec::new();
                let mut skipped_variants = 0;
                for variant in &data.variants {
                    attr::misplaced_helpers(
                        &variant.attrs,
                        &["arg", "command"],
                        "a variant",
                        errors,
                    );
                    let arg = attr::parse_arg_attrs(&variant.attrs, errors);
                    let annotations = attr::parse_variant_command_attrs(&variant.attrs, errors);
                    if arg.default.is_some() {
                        errors.spanned(&variant.ident, "`default` is for fields, not commands");
                    }
                    let variant_serde = serde_attr::parse(&variant.attrs, Place::Variant, errors);
                    if variant_serde.skip {
                        helpers_on_skipped(&variant.attrs, &["arg", "command"], "variant", errors);
                        skipped_variants += 1;
                        continue;
                    }
                    let rules = FieldRules {
                        rename_all: variant_serde.rename_all.or(serde.rename_all_fields),
                        struct_default: None,
                    };
                    let (fields, skipped, unit) = match &variant.fields {
                        syn::Fields::Named(fields) => {
                            let (fields, skipped) = parse_fields(fields, &rules, errors);
                            (fields, skipped, false)
                        }
                        syn::Fields::Unit => (Vec::new(), Vec::new(), true),
                        syn::Fields::Unnamed(fields) => {
                            errors.spanned(
                                fields,
                                "a command variant needs named fields (`Add { text: String }`) or none (`Clear`): each field is an argument of the command",
                            );
                            continue;
                        }
                    };
                    let name = explicit_name(arg.rename, variant_serde.rename, "command", errors)
                        .unwrap_or_else(|| {
                            let plain = variant.ident.unraw().to_string();
                            Spanned {
                                value: match serde.rename_all {
                                    Some(rule) => rule.apply_to_variant(&plain),
                                    None => names::snake_case(&plain),
                                },
                                span: variant.ident.span(),
                            }
                        });
                    variants.push(CommandVariant {
                        name,
                        description: arg.description.map(|d| d.value).or_else(|| {
                            docs::argument_doc(&variant.attrs, SchemaDoc::Variant, errors)
                        }),
                        ident: variant.ident.clone(),
                        fields,
                        skipped,
                        unit,
                        annotations,
                    });
                }
                if data.variants.is_empty() {
                    errors.spanned(&input.ident, "a command enum needs at least one variant");
                } else if skipped_variants == data.variants.len() {
                    errors.spanned(
                        &input.ident,
                        "a command enum needs at least one command: `#[serde(skip)]` leaves out every variant",
                    );
                }
                Some(Self::Enum(CommandEnum {
                    ident: input.ident.clone(),
                    variants,
                }))
            }
            syn::Data::Union(data) => {
                errors.spanned(
                    data.union_token,
                    "`#[derive(ToolArgs)]` works on a struct with named fields or an enum of commands, not a union",
                );
                None
            }
        }
    }
}

/// A function's body, kept as the tokens it came as. The macros never look inside a tool
/// function's body, so syn does not parse it and the expansion hands the same tokens back,
/// rather than parsing every token of it and printing each back through the proc-macro
/// bridge (work that grows with the body, in every tool of an edited file).
pub struct FnBody(Group);

impl FnBody {
    /// Splits `input`'s last token off when it is a `{ … }` group (an item's body): the input
    /// with `{}` in its place, for syn to read the rest, and the body.
    pub fn split(input: TokenStream) -> (TokenStream, Option<Self>) {
        let mut tokens: Vec<TokenTree> = input.into_iter().collect();
        let Some(TokenTree::Group(body)) = tokens.last() else {
            return (tokens.into_iter().collect(), None);
        };
        if body.delimiter() != Delimiter::Brace {
            return (tokens.into_iter().collect(), None);
        }
        let body = body.clone();
        let mut empty = Group::new(Delimiter::Brace, TokenStream::new());
        empty.set_span(body.span());
        *tokens.last_mut().expect("a last token") = TokenTree::Group(empty);
        (tokens.into_iter().collect(), Some(Self(body)))
    }
}
