//! The code that turns a tool function's return value into a result, and its result schema.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::Ident;

use crate::ast::Output;

/// Statements converting the value `out` (the function's return value) into
/// `Result<ToolCallResult, ToolError>`, for the tool `name`. Spanned at the return type, so
/// that a type that cannot become a result is blamed there.
pub fn convert(krate: &TokenStream, output: &Output, out: &Ident, name: &str) -> TokenStream {
    let span = output.span;
    quote_spanned! {span=>
        #[allow(unused_imports)]
        use #krate::__private::result_conversion::{
            AsIsKind as _, DisplayErrorKind as _, EmptyKind as _, IntoToolErrorKind as _,
            JsonKind as _, KeepErrorKind as _, SplitKind as _, TextKind as _, WholeKind as _,
        };
        use #krate::__private::result_conversion::Returned;
        #[allow(unreachable_patterns, unreachable_code)]
        let __toolsmith_ok = match (&&Returned(&#out)).split_kind().split(#out) {
            ::core::result::Result::Ok(value) => value,
            ::core::result::Result::Err(error) => {
                return ::core::result::Result::Err(
                    (&&&Returned(&error)).error_kind().into_error(error, #name),
                );
            }
        };
        (&&Returned(&__toolsmith_ok)).result_kind().into_result(__toolsmith_ok, #name)
    }
}

/// An expression giving the tool's result schema (`Option<Args>`).
pub fn schema(krate: &TokenStream, output: &Output) -> TokenStream {
    let ok_ty = &output.ok_ty;
    quote_spanned! {output.span=>
        {
            #[allow(unused_imports)]
            use #krate::__private::result_conversion::{
                NoSchemaKind as _, SchemaKind as _, UnknownSchemaKind as _,
            };
            (&&&#krate::__private::result_conversion::ReturnType::<#ok_ty>::new()).returns_schema()
        }
    }
}
