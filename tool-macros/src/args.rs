//! The one generator of argument code: the schema of a set of arguments and the code that
//! reads them. `#[derive(ToolArgs)]` (structs and each enum variant) and `#[tool_fn]` (its
//! parameters, read in place where the call starts) both expand through here.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned as _;

use crate::ast::{ArgField, SkippedField};
use crate::attr::{FieldDefault, Spanned};

/// The value a field of type `ty` takes from `default`: a field taking the struct's default
/// takes its member of the value [`StructDefault`] built.
fn default_value(ty: &syn::Type, member: &Ident, default: &FieldDefault) -> TokenStream {
    match default {
        FieldDefault::Trait => {
            quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
        }
        FieldDefault::Function(path) => quote_spanned!(path.span()=> #path()),
        FieldDefault::FromStruct(_) => {
            let local = struct_default_local();
            quote_spanned!(ty.span()=> #local.#member)
        }
    }
}

/// The local holding the struct's default value while fields take theirs from it.
fn struct_default_local() -> Ident {
    Ident::new("__toolsmith_struct_default", Span::mixed_site())
}

/// The struct's own default value (`#[serde(default)]` on the struct), which the fields left
/// out take their values from: built at most once a read, and only when a field takes a value
/// from it (serde builds it on every read).
pub struct StructDefault {
    /// The expression building it: `Default::default()`, or the function named.
    build: TokenStream,
    /// Whether a skipped field takes its value from it: every read needs it then, and builds
    /// it before the fields left out take theirs.
    every_read: bool,
}

impl StructDefault {
    /// The struct default that `fields` or `skipped` take values from, if any does.
    pub fn of(fields: &[ArgField], skipped: &[SkippedField]) -> Option<Self> {
        let mut defaults = fields
            .iter()
            .filter_map(|field| field.default.as_ref())
            .chain(skipped.iter().map(|field| &field.default));
        let build = defaults.find_map(|default| match default {
            FieldDefault::FromStruct(Spanned { value: None, span }) => {
                Some(quote_spanned!(*span=> <Self as ::core::default::Default>::default()))
            }
            FieldDefault::FromStruct(Spanned {
                value: Some(path), ..
            }) => Some(quote_spanned!(path.span()=> #path())),
            FieldDefault::Trait | FieldDefault::Function(_) => None,
        })?;
        let every_read = skipped
            .iter()
            .any(|field| matches!(field.default, FieldDefault::FromStruct(_)));
        Some(Self { build, every_read })
    }

    /// `let` the local holding the value, when every read needs it.
    fn built_first(&self) -> Option<TokenStream> {
        let (local, build) = (struct_default_local(), &self.build);
        self.every_read.then(|| quote!(let #local = #build;))
    }

    /// Fills the fields left out of `fields` that take their values from the struct's default
    /// (the locals `values` hold `Option`s): the value is built once, and only when one of them
    /// is left out. `None` when it was built first, or no argument takes from it.
    fn fill_left_out(
        &self,
        krate: &Ident,
        fields: &[ArgField],
        values: &[Ident],
    ) -> Option<TokenStream> {
        if self.every_read {
            return None;
        }
        let (taking, absent): (Vec<&Ident>, Vec<TokenStream>) = fields
            .iter()
            .zip(values)
            .filter_map(|(field, value)| match &field.default {
                Some(default @ FieldDefault::FromStruct(_)) => {
                    Some((value, default_value(&field.ty, &field.member, default)))
                }
                _ => None,
            })
            .unzip();
        if taking.is_empty() {
            return None;
        }
        let (local, build) = (struct_default_local(), &self.build);
        // Fields are moved out of the one value, so a field cannot take from a value built
        // lazily in its own `match`: the fields taking from it are matched together.
        Some(quote! {
            let (#(#taking,)*) = match (#(#taking,)*) {
                (#(#krate::Some(#taking),)*) => (#(#taking,)*),
                (#(#taking,)*) => {
                    let #local = #build;
                    (#(match #taking {
                        #krate::Some(#taking) => #taking,
                        #krate::None => #absent,
                    },)*)
                }
            };
        })
    }
}

/// The most parameters read by one call of the core's `ReadFields` (implemented for tuples of
/// one to twelve kinds): a tool or `ToolArgs` type with more reads each in place.
const READ_TOGETHER_AT_MOST: usize = 12;

/// An expression building the arguments' object schema (an `Args`).
pub fn schema_expr(krate: &Ident, fields: &[ArgField]) -> TokenStream {
    let properties = fields.iter().map(|field| {
        let ty = &field.ty;
        let name = &field.name.value;
        let description = match &field.description {
            Some(d) => quote!(#krate::Some(#d)),
            None => quote!(#krate::None),
        };
        // Spanned at the type, so that a type without `JsonSchema`/`Deserialize` is blamed.
        match field.default {
            None => quote_spanned!(ty.span()=> .field::<#ty>(#name, #description)),
            Some(_) => quote_spanned!(ty.span()=> .defaulted_field::<#ty>(#name, #description)),
        }
    });
    quote!(#krate::ArgsObject::new() #(#properties)* .build())
}

/// The contents of a block (statements and the expression it evaluates to) reading `fields`
/// from the `ToolArgs` named `reader`: `read` gives what it evaluates to from the locals
/// holding the fields' values (in the order of `fields`, defaults applied), `misread` what it
/// evaluates to from the error to report. The pass over the arguments, the reading of each
/// type and the choice of the error are functions of `toolsmith-core` (`generated::read`,
/// shared by every tool): up to [`READ_TOGETHER_AT_MOST`] fields are read by one call
/// ([`read_together`]), more by a call per field ([`read_in_place`]). `struct_default` is the
/// struct's default some fields take their values from (`#[serde(default)]` on a struct).
pub fn read_expr(
    krate: &Ident,
    reader: &Ident,
    fields: &[ArgField],
    struct_default: Option<&StructDefault>,
    read: impl FnOnce(&[Ident]) -> TokenStream,
    misread: impl FnOnce(TokenStream) -> TokenStream,
) -> TokenStream {
    let built_first = struct_default.and_then(StructDefault::built_first);
    if fields.is_empty() {
        let read = read(&[]);
        return match built_first {
            Some(built_first) => quote!({ #built_first #read }),
            None => read,
        };
    }
    let values: Vec<Ident> = (0..fields.len())
        .map(|i| Ident::new(&format!("__toolsmith_value_{i}"), Span::mixed_site()))
        .collect();
    // Only hygienic locals are in scope here, so a default function's path cannot be taken
    // for one of the user's names.
    let defaults = fields.iter().zip(&values).map(|(field, value)| {
        let default = field.default.as_ref()?;
        if matches!(default, FieldDefault::FromStruct(_)) && built_first.is_none() {
            return None; // filled together, by `fill_left_out`
        }
        let absent = default_value(&field.ty, &field.member, default);
        Some(quote! {
            let #value = match #value {
                #krate::Some(#value) => #value,
                #krate::None => #absent,
            };
        })
    });
    let from_struct =
        struct_default.and_then(|default| default.fill_left_out(krate, fields, &values));
    let read = read(&values);
    let all_read = quote! {
        #built_first
        #(#defaults)*
        #from_struct
        #read
    };
    let reading = Reading {
        krate,
        reader,
        fields,
        order: read_order(fields),
        values: &values,
    };
    if fields.len() <= READ_TOGETHER_AT_MOST {
        reading.read_together(all_read, misread)
    } else {
        reading.read_in_place(all_read, misread)
    }
}

/// What [`read_expr`] reads: `fields` from `reader`, in `order` (their places), into the
/// locals `values` (one per field, in the fields' order).
struct Reading<'a> {
    krate: &'a Ident,
    reader: &'a Ident,
    fields: &'a [ArgField],
    order: Vec<usize>,
    values: &'a [Ident],
}

impl Reading<'_> {
    /// The kind the field at `index` is read as: `Required<T>`, or `Defaulted<T>` for a field
    /// with a default. Spanned at the type, so that a type without `Deserialize` is blamed.
    fn kind(&self, index: usize) -> TokenStream {
        let (krate, field) = (self.krate, &self.fields[index]);
        let ty = &field.ty;
        match field.default {
            None => quote_spanned!(ty.span()=> #krate::Required<#ty>),
            Some(_) => quote_spanned!(ty.span()=> #krate::Defaulted<#ty>),
        }
    }

    /// The fields' kinds (`Required<T>`, or `Defaulted<T>` for a field with a default) as a
    /// tuple in the order read, read by one call of the core's `ReadFields`, with the table of
    /// each one's name and place: `all_read` runs with the values read, `misread` with the
    /// error. The reading itself is the core's, checked once there, and one copy of its code
    /// serves every tool with the same parameter types.
    fn read_together(
        &self,
        all_read: TokenStream,
        misread: impl FnOnce(TokenStream) -> TokenStream,
    ) -> TokenStream {
        let Self {
            krate,
            reader,
            fields,
            order,
            values,
        } = self;
        let kinds = order.iter().map(|&index| self.kind(index));
        let table = order.iter().map(|&index| {
            let name = &fields[index].name.value;
            quote!((#name, #index))
        });
        let read_values = order.iter().map(|&index| &values[index]);
        let error = Ident::new("__toolsmith_error", Span::mixed_site());
        let misread = misread(quote!(#error));
        quote! {
            match <(#(#kinds,)*) as #krate::ReadFields>::read(#reader, &[#(#table),*]) {
                #krate::Ok((#(#read_values,)*)) => {
                    #all_read
                }
                #krate::Err(#error) => #misread,
            }
        }
    }

    /// The fields read one by one in place: a slot each from the core's `slots`, then a call of
    /// `<Required<T> as ReadField>::read` (or `Defaulted<T>`'s) per field and a `match` on the
    /// values.
    fn read_in_place(
        &self,
        all_read: TokenStream,
        misread: impl FnOnce(TokenStream) -> TokenStream,
    ) -> TokenStream {
        let Self {
            krate,
            reader,
            fields,
            order,
            values,
        } = self;
        let misreads = Ident::new("__toolsmith_misreads", Span::mixed_site());
        let slots: Vec<Ident> = (0..fields.len())
            .map(|i| Ident::new(&format!("__toolsmith_slot_{i}"), Span::mixed_site()))
            .collect();
        let names: Vec<&String> = fields.iter().map(|field| &field.name.value).collect();
        let reads = order.iter().map(|&index| {
            let (field, slot, kind) = (&fields[index], &slots[index], self.kind(index));
            let name = &field.name.value;
            // Spanned at the type, as the kind is.
            quote_spanned!(field.ty.span()=> <#kind as #krate::ReadField>::read(&mut #misreads, #reader, #name, #slot))
        });
        let read_values = order.iter().map(|&index| &values[index]);
        // The names again (not a shared local): the read that succeeds is as it was.
        let misread = misread(quote!(#misreads.into_error(#reader, &[#(#names),*])));
        let unread = Ident::new("__toolsmith_unread", Span::mixed_site());
        // No braces of its own: every caller puts it in a block (a block more per tool to
        // lower and check). Both arms move the whole value out of the `match` (the second
        // drops it before the error is made), so that nothing read is alive while the call
        // runs or the error is made: no cleanup path dropping it, and no drop flag.
        quote! {
            let [#(#slots),*] = #krate::slots(#reader, &[#(#names),*]);
            let mut #misreads = #krate::Misreads::new();
            match (#(#reads,)*) {
                (#(#krate::Some(#read_values),)*) => {
                    #all_read
                }
                #unread => {
                    {
                        let _ = { #unread };
                    }
                    #misread
                }
            }
        }
    }
}

/// The places of `fields` in the order they are read: those whose type plainly needs no
/// drop first, then the others, each group in the fields' order. A value read is alive while
/// the next one is read, and a value with drop glue so alive gets a cleanup path dropping it
/// should that read unwind (in each tool's code read in place, in each copy of the core's
/// `ReadFields` read together): with the values needing no drop read first, a tool with one
/// `String` parameter has none. The order read in changes no error: the one reported does
/// not depend on it (`Misreads`).
fn read_order(fields: &[ArgField]) -> Vec<usize> {
    let (first, then): (Vec<usize>, Vec<usize>) =
        (0..fields.len()).partition(|&index| plainly_needs_no_drop(&fields[index].ty));
    first.into_iter().chain(then).collect()
}

/// Whether `ty` is written as a type without drop glue: a number, `bool` or `char`, or an
/// `Option` of one. Only the read order depends on it, so a name shadowed by a type of the
/// user's costs nothing but a cleanup path.
fn plainly_needs_no_drop(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    if path.qself.is_some() || path.path.segments.len() != 1 {
        return false;
    }
    let segment = &path.path.segments[0];
    match &segment.arguments {
        syn::PathArguments::None => {
            const PLAIN: [&str; 16] = [
                "bool", "char", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8",
                "u16", "u32", "u64", "u128", "usize",
            ];
            PLAIN.iter().any(|plain| segment.ident == plain)
        }
        syn::PathArguments::AngleBracketed(arguments) if segment.ident == "Option" => {
            matches!(
                arguments.args.first(),
                Some(syn::GenericArgument::Type(inner))
                    if arguments.args.len() == 1 && plainly_needs_no_drop(inner)
            )
        }
        _ => false,
    }
}

/// [`read_expr`] building `constructor { member: value, .. }` (a struct or an enum variant)
/// as the `Result` of `FromToolArgs::from_tool_args`, the `skipped` fields from their
/// defaults.
pub fn read_into(
    krate: &Ident,
    reader: &Ident,
    fields: &[ArgField],
    skipped: &[SkippedField],
    constructor: &TokenStream,
) -> TokenStream {
    read_expr(
        krate,
        reader,
        fields,
        StructDefault::of(fields, skipped).as_ref(),
        |values| {
            let members = fields.iter().map(|field| &field.member);
            let skipped = skipped.iter().map(|field| {
                let member = &field.member;
                let value = default_value(&field.ty, member, &field.default);
                quote!(#member: #value,)
            });
            quote!(#krate::Ok(#constructor { #(#members: #values,)* #(#skipped)* }))
        },
        |error| quote!(#krate::Err(#error)),
    )
}

/// `impl FromToolArgs` and `impl ArgsSchema` for the struct `ident` with `fields` (and the
/// `skipped` fields, not arguments).
pub fn struct_impls(
    krate: &Ident,
    ident: &Ident,
    fields: &[ArgField],
    skipped: &[SkippedField],
) -> TokenStream {
    let reader = Ident::new("__toolsmith_args", proc_macro2::Span::mixed_site());
    let read = read_into(krate, &reader, fields, skipped, &quote!(Self));
    let schema = schema_expr(krate, fields);
    quote! {
        #[automatically_derived]
        impl #krate::FromToolArgs for #ident {
            fn from_tool_args(
                #reader: &#krate::ToolArgs<'_>,
            ) -> #krate::Result<Self, #krate::ToolError> {
                #read
            }
        }

        #[automatically_derived]
        impl #krate::ArgsSchema for #ident {
            fn args_schema() -> #krate::Args {
                #schema
            }
        }
    }
}
