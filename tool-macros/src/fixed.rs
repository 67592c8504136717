//! Generated code that is the same in every expansion, handed to the compiler as text.
//!
//! `quote!` makes each token in the macro (code that a debug build runs unoptimised) and
//! sends the tokens through the proc-macro bridge one by one; a text is sent whole and lexed
//! by the compiler. The tokens are the same, spanned at the call site as `quote!`'s are, so
//! only code with no span of its own is written this way: no user tokens, nothing spanned
//! elsewhere (`quote_spanned!`), no hygienic (`Span::mixed_site`) names.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::quote;

/// The tokens of `code`, a constant of this crate that is always valid Rust tokens (each is
/// lexed by the tests). Should one not lex, the expansion says so as a compile error rather
/// than panicking.
///
/// Lexed by the compiler itself when the macro runs in it: proc-macro2's own `parse` first
/// lexes the text again in the macro (to turn what the compiler would reject into an
/// error), which costs more than the tokens it saves.
pub fn tokens(code: &'static str) -> TokenStream {
    let lexed = if proc_macro::is_available() {
        code.parse::<proc_macro::TokenStream>()
            .map(TokenStream::from)
            .map_err(drop)
    } else {
        code.parse::<TokenStream>().map_err(drop)
    };
    lexed.unwrap_or_else(|()| {
        let message =
            format!("internal error of `#[tool_fn]`: generated code that does not lex: {code}");
        quote!(::core::compile_error!(#message);)
    })
}

/// `code` in braces: a function's or an impl's body.
pub fn braced(code: TokenStream) -> TokenTree {
    TokenTree::Group(Group::new(Delimiter::Brace, code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_that_does_not_lex_is_a_compile_error() {
        let expanded = tokens("fn f() { \"unterminated").to_string();
        assert!(
            expanded.starts_with(":: core :: compile_error !"),
            "{expanded}"
        );
    }
}
