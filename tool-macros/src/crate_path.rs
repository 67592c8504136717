//! Which crate the generated code names: the crate whose re-export of the macro was invoked
//! (`toolsmith::tool_fn` names `::toolsmith`, `toolsmith_core::tool_fn` names
//! `::toolsmith_core`), unless `crate = "path"` says otherwise; and the import through which
//! the rest of the generated code names it.
//!
//! Each re-exporting crate has an entry point of its own, so the macro never reads the
//! caller's `Cargo.toml` (reading it meant starting `cargo locate-project` once per crate
//! compiled, tens of milliseconds of every incremental build). A crate that renames its
//! dependency on Toolsmith says where it is with `crate = "…"`, as with serde's derives.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::Ident;

/// The crate a macro entry point names by default: the one that re-exports it.
#[derive(Clone, Copy)]
pub enum Home {
    /// `toolsmith`, the facade: `#[tool_fn]` and `#[derive(ToolArgs)]`.
    Facade,
    /// `toolsmith-core`, for crates that depend on it alone (`toolsmith-harness`).
    Core,
}

/// The path to the core API, e.g. `::toolsmith`: named once per expansion, by [`imports`].
pub fn resolve(overridden: Option<&syn::Path>, home: Home) -> TokenStream {
    match (overridden, home) {
        (Some(path), _) => path.to_token_stream(),
        (None, Home::Facade) => quote!(::toolsmith),
        (None, Home::Core) => quote!(::toolsmith_core),
    }
}

/// How the generated code names everything it uses from the core (`__toolsmith::start`),
/// once [`imports`] has imported it: short paths, because an incremental build pays for
/// every token a tool expands to.
pub fn alias() -> Ident {
    alias_at(Span::call_site())
}

/// [`alias`] with the span of the code it is part of, for errors that point there.
///
/// An `Ident`, not a `TokenStream`: interpolating a token stream into `quote!` flushes the
/// tokens gathered so far through the proc-macro bridge and concatenates the two streams in
/// the compiler (a few bridge calls each time), where an identifier is one token appended
/// in the macro's own memory, and the alias is interpolated some 25 times a tool.
pub fn alias_at(span: Span) -> Ident {
    Ident::new("__toolsmith", span)
}

/// The imports opening each expansion's `const _: () = { … };` block, which scopes them to
/// the generated items: the core's `expansion` module as [`alias`], and with `kinds` the
/// traits that pick a return value's conversion and schema. With `kinds` one glob import
/// brings both (the `kinds` module re-exports `expansion` as the alias).
pub fn imports(krate: &TokenStream, kinds: bool) -> TokenStream {
    if kinds {
        // Never unused: the generated code names the alias (no `allow`, an attribute less to
        // check in every tool).
        quote!(use #krate::__private::expansion::kinds::*;)
    } else {
        quote!(use #krate::__private::expansion as __toolsmith;)
    }
}

/// [`imports`] of the crate `overridden` names, or else of `home`: the usual case, a crate
/// path of our own, is written as text ([`fixed`](crate::fixed)), since every tool opens with it.
pub fn imports_of(overridden: Option<&syn::Path>, home: Home, kinds: bool) -> TokenStream {
    let code = match (overridden, home, kinds) {
        (Some(_), ..) => return imports(&resolve(overridden, home), kinds),
        (None, Home::Facade, true) => "use ::toolsmith::__private::expansion::kinds::*;",
        (None, Home::Facade, false) => "use ::toolsmith::__private::expansion as __toolsmith;",
        (None, Home::Core, true) => "use ::toolsmith_core::__private::expansion::kinds::*;",
        (None, Home::Core, false) => "use ::toolsmith_core::__private::expansion as __toolsmith;",
    };
    crate::fixed::tokens(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens, without the spacing (lexed punctuation is joined as written).
    fn tokens_of(stream: &TokenStream) -> String {
        stream.to_string().replace(' ', "")
    }

    #[test]
    fn the_imports_of_our_own_crates_are_those_of_their_paths() {
        for home in [Home::Facade, Home::Core] {
            for kinds in [true, false] {
                assert_eq!(
                    tokens_of(&imports_of(None, home, kinds)),
                    tokens_of(&imports(&resolve(None, home), kinds))
                );
            }
        }
    }
}
