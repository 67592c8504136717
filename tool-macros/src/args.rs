//! The one generator of argument code: the schema of a set of arguments and the code that
//! reads them. `#[derive(ToolArgs)]` (structs and each enum variant) and `#[tool_fn]` (its
//! parameters, read in place where the call starts) both expand through here.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned as _;

use crate::ast::{ArgField, SkippedField};
use crate::attr::FieldDefault;

/// The value a field of type `ty` takes from `default`.
fn default_value(ty: &syn::Type, member: &Ident, default: &FieldDefault) -> TokenStream {
    match default {
        FieldDefault::Trait => {
            quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
        }
        FieldDefault::Function(path) => quote_spanned!(path.span()=> #path()),
        FieldDefault::FromStruct(None) => {
            quote_spanned!(ty.span()=> <Self as ::core::default::Default>::default().#member)
        }
        FieldDefault::FromStruct(Some(path)) => quote_spanned!(path.span()=> #path().#member),
    }
}

/// An expression building the arguments' object schema (an `Args`).
pub fn schema_expr(krate: &TokenStream, fields: &[ArgField]) -> TokenStream {
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

/// An expression reading `fields` from the `ToolArgs` named `reader`: `read` gives what it
/// evaluates to from the locals holding the fields' values (in the order of `fields`,
/// defaults applied), `misread` what it evaluates to from the error to report. The pass over the
/// arguments, the reading of each type and the choice of the error are functions of
/// `toolsmith-core` (`generated::read`, shared by every tool): what is written here is the
/// table of names, a call per field and a `match` on the values, as little code per tool as
/// reading in one pass allows.
pub fn read_expr(
    krate: &TokenStream,
    reader: &Ident,
    fields: &[ArgField],
    read: impl FnOnce(&[Ident]) -> TokenStream,
    misread: impl FnOnce(TokenStream) -> TokenStream,
) -> TokenStream {
    if fields.is_empty() {
        return read(&[]);
    }
    let misreads = Ident::new("__toolsmith_misreads", Span::mixed_site());
    let slots: Vec<Ident> = (0..fields.len())
        .map(|i| Ident::new(&format!("__toolsmith_slot_{i}"), Span::mixed_site()))
        .collect();
    let values: Vec<Ident> = (0..fields.len())
        .map(|i| Ident::new(&format!("__toolsmith_value_{i}"), Span::mixed_site()))
        .collect();
    let names = fields.iter().map(|field| &field.name.value);
    let reads = fields.iter().zip(&slots).map(|(field, slot)| {
        let ty = &field.ty;
        let name = &field.name.value;
        // Spanned at the type, so that a type without `Deserialize` is blamed.
        match field.default {
            None => quote_spanned!(ty.span()=> #misreads.required::<#ty>(#reader, #name, #slot)),
            Some(_) => {
                quote_spanned!(ty.span()=> #misreads.defaulted::<#ty>(#reader, #name, #slot))
            }
        }
    });
    // Only hygienic locals are in scope here, so a default function's path cannot be taken
    // for one of the user's names.
    let defaults = fields.iter().zip(&values).map(|(field, value)| {
        let absent = default_value(&field.ty, &field.member, field.default.as_ref()?);
        Some(quote! {
            let #value = match #value {
                #krate::Some(#value) => #value,
                #krate::None => #absent,
            };
        })
    });
    let read = read(&values);
    let misread = misread(quote!(#misreads.into_error(#reader)));
    quote! {{
        let [#(#slots),*] = #krate::slots(#reader, &[#(#names),*]);
        let mut #misreads = #krate::Misreads::new();
        match (#(#reads,)*) {
            (#(#krate::Some(#values),)*) => {
                #(#defaults)*
                #read
            }
            _ => #misread,
        }
    }}
}

/// [`read_expr`] building `constructor { member: value, .. }` (a struct or an enum variant)
/// as the `Result` of `FromToolArgs::from_tool_args`, the `skipped` fields from their
/// defaults.
pub fn read_into(
    krate: &TokenStream,
    reader: &Ident,
    fields: &[ArgField],
    skipped: &[SkippedField],
    constructor: &TokenStream,
) -> TokenStream {
    read_expr(
        krate,
        reader,
        fields,
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
    krate: &TokenStream,
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
