//! The code that turns a tool function's return value into a result, and its result schema.

use proc_macro2::TokenStream;
use quote::quote_spanned;

use crate::ast::Output;

/// An expression giving the [`Conversion`] of the function's return value into
/// `Result<ToolCallResult, ToolError>`: chosen from the return type by the compiler, made of
/// functions of the core shared by every tool returning that type. Spanned at the return
/// type, so that a type that cannot become a result is blamed there.
///
/// [`Conversion`]: ../../toolsmith_core/generated/result_conversion/struct.Conversion.html
pub fn conversion(krate: &TokenStream, output: &Output) -> TokenStream {
    let span = output.span;
    let out_ty = &output.ty;
    // The traits these methods come from are in scope through the expansion's imports.
    quote_spanned! {span=>
        {
            let __toolsmith_split = (&&#krate::Returned::<#out_ty>::new()).split_kind();
            let __toolsmith_ok = (&&__toolsmith_split.ok_type()).result_kind().converter();
            let __toolsmith_err = (&&&__toolsmith_split.err_type()).error_kind().converter();
            __toolsmith_split.conversion(__toolsmith_ok, __toolsmith_err)
        }
    }
}

/// An expression giving the tool's result schema (`Option<Args>`).
pub fn schema(krate: &TokenStream, output: &Output) -> TokenStream {
    let ok_ty = &output.ok_ty;
    quote_spanned! {output.span=>
        (&&&#krate::ReturnType::<#ok_ty>::new()).returns_schema()
    }
}
