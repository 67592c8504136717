//! The code that turns a tool function's return value into a result, and its result schema.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::Ident;

use crate::ast::Output;
use crate::crate_path;

/// An expression giving the [`Conversion`] of the function's return value into
/// `Result<ToolCallResult, ToolError>`: chosen from the return type by the compiler, made of
/// functions of the core shared by every tool returning that type. Spanned at the return
/// type, so that a type that cannot become a result is blamed there.
///
/// [`Conversion`]: ../../toolsmith_core/generated/result_conversion/struct.Conversion.html
pub fn conversion(output: &Output) -> TokenStream {
    let span = output.span;
    let out_ty = &output.ty;
    // Picked by the core's `conversion!`, from the type alone. The whole invocation is
    // spanned at the type, down to the alias, since rustc blames an error in it on its start.
    let krate = crate_path::alias_at(span);
    quote_spanned!(span=> #krate::conversion!(#out_ty))
}

/// An expression giving the function that builds the tool's result schema (the core's
/// `ReturnsSchema`, giving an `Option<Args>`): its success type's, picked by the compiler
/// from the whole type (the core's `ReturnType`), so that an alias of `Result` is split and
/// a user's own type named `Result` is not.
pub fn schema(krate: &Ident, output: &Output) -> TokenStream {
    let schema_ty = &output.schema_ty;
    quote_spanned! {output.span=>
        (&&&&&#krate::ReturnType::<#schema_ty>::NEW).returns_schema()
    }
}
