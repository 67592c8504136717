//! The one generator of argument code: the schema of a set of arguments and the code that
//! reads them. `#[derive(ToolArgs)]` (structs and each enum variant) and `#[tool_fn]` (its
//! parameters, gathered into a hidden struct) both expand through here.

use proc_macro2::TokenStream;
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

/// `member: value,` for each field, read from the `ToolArgs` named `reader`.
pub fn field_inits(reader: &Ident, fields: &[ArgField]) -> TokenStream {
    let inits = fields.iter().map(|field| {
        let member = &field.member;
        let ty = &field.ty;
        let name = &field.name.value;
        let read = match &field.default {
            None => quote_spanned!(ty.span()=> #reader.field::<#ty>(#name)?),
            Some(FieldDefault::Trait) => quote_spanned!(ty.span()=>
                #reader.field_or_else::<#ty>(#name, ::core::default::Default::default)?),
            Some(FieldDefault::Function(path)) => {
                quote_spanned!(path.span()=> #reader.field_or_else::<#ty>(#name, #path)?)
            }
        };
        quote!(#member: #read,)
    });
    quote!(#(#inits)*)
}

/// `impl FromToolArgs` and `impl ArgsSchema` for the struct `ident` with `fields`.
pub fn struct_impls(krate: &TokenStream, ident: &Ident, fields: &[ArgField]) -> TokenStream {
    let reader = Ident::new("__toolsmith_args", proc_macro2::Span::mixed_site());
    let inits = field_inits(&reader, fields);
    let schema = schema_expr(krate, fields);
    quote! {
        #[automatically_derived]
        impl #krate::FromToolArgs for #ident {
            fn from_tool_args(
                #reader: &#krate::ToolArgs<'_>,
            ) -> ::core::result::Result<Self, #krate::ToolError> {
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
