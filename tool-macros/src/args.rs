//! The one generator of argument code: the schema of a set of arguments and the code that
//! reads them. `#[derive(ToolArgs)]` (structs and each enum variant) and `#[tool_fn]` (its
//! parameters, gathered into a hidden struct) both expand through here.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned as _;

use crate::ast::ArgField;
use crate::attr::FieldDefault;

/// An expression building the arguments' object schema (an `Args`).
pub fn schema_expr(krate: &TokenStream, fields: &[ArgField]) -> TokenStream {
    let properties = fields.iter().map(|field| {
        let ty = &field.ty;
        let name = &field.name.value;
        let description = match &field.description {
            Some(d) => quote!(::core::option::Option::Some(#d)),
            None => quote!(::core::option::Option::None),
        };
        // Spanned at the type, so that a type without `JsonSchema`/`Deserialize` is blamed.
        match field.default {
            None => quote_spanned!(ty.span()=> .field::<#ty>(#name, #description)),
            Some(_) => quote_spanned!(ty.span()=> .defaulted_field::<#ty>(#name, #description)),
        }
    });
    quote!(#krate::ArgsObject::new() #(#properties)* .build())
}

/// Reads `fields` from the `ToolArgs` named `reader` in one pass over the arguments sent (as
/// serde's derive does): statements that fill one slot per field, and the `member: value,`
/// initialisers that take each slot or the field's value when absent.
pub fn field_reads(reader: &Ident, fields: &[ArgField]) -> (TokenStream, TokenStream) {
    let slots: Vec<Ident> = (0..fields.len())
        .map(|i| Ident::new(&format!("__toolsmith_slot_{i}"), Span::mixed_site()))
        .collect();
    let name_var = Ident::new("__toolsmith_name", Span::mixed_site());
    let value_var = Ident::new("__toolsmith_value", Span::mixed_site());
    let declarations = fields.iter().zip(&slots).map(|(field, slot)| {
        let ty = &field.ty;
        quote!(let mut #slot: ::core::option::Option<#ty> = ::core::option::Option::None;)
    });
    let arms = fields.iter().zip(&slots).map(|(field, slot)| {
        let ty = &field.ty;
        let name = &field.name.value;
        // Spanned at the type, so that a type without `Deserialize` is blamed.
        let read = quote_spanned!(ty.span()=> #reader.read_field::<#ty>(#name_var, #value_var)?);
        quote!(#name => #slot = ::core::option::Option::Some(#read),)
    });
    let pass = (!fields.is_empty()).then(|| {
        quote! {
            for (#name_var, #value_var) in #reader.present() {
                #[allow(clippy::single_match)]
                match #name_var {
                    #(#arms)*
                    _ => {}
                }
            }
        }
    });
    let inits = fields.iter().zip(&slots).map(|(field, slot)| {
        let member = &field.member;
        let ty = &field.ty;
        let name = &field.name.value;
        let absent = match &field.default {
            None => quote_spanned!(ty.span()=> #reader.absent_field::<#ty>(#name)?),
            Some(FieldDefault::Trait) => {
                quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
            }
            Some(FieldDefault::Function(path)) => quote_spanned!(path.span()=> #path()),
        };
        quote! {
            #member: match #slot {
                ::core::option::Option::Some(#value_var) => #value_var,
                ::core::option::Option::None => #absent,
            },
        }
    });
    (quote!(#(#declarations)* #pass), quote!(#(#inits)*))
}

/// `impl FromToolArgs` and `impl ArgsSchema` for the struct `ident` with `fields`.
pub fn struct_impls(krate: &TokenStream, ident: &Ident, fields: &[ArgField]) -> TokenStream {
    let reader = Ident::new("__toolsmith_args", proc_macro2::Span::mixed_site());
    let (reads, inits) = field_reads(&reader, fields);
    let schema = schema_expr(krate, fields);
    quote! {
        #[automatically_derived]
        impl #krate::FromToolArgs for #ident {
            fn from_tool_args(
                #reader: &#krate::ToolArgs<'_>,
            ) -> ::core::result::Result<Self, #krate::ToolError> {
                #reads
                ::core::result::Result::Ok(Self { #inits })
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
