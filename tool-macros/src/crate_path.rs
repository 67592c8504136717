//! Which crate the generated code names: the facade `toolsmith` when the calling crate
//! depends on it, else `toolsmith-core`, unless `crate = "path"` says otherwise.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};

/// The path to the core API in generated code, e.g. `::toolsmith`.
pub fn resolve(overridden: Option<&syn::Path>) -> TokenStream {
    if let Some(path) = overridden {
        return path.to_token_stream();
    }
    for (package, library) in [
        ("toolsmith", "toolsmith"),
        ("toolsmith-core", "toolsmith_core"),
    ] {
        match crate_name(package) {
            Ok(FoundCrate::Name(name)) => {
                let ident = syn::Ident::new(&name, Span::call_site());
                return quote!(::#ident);
            }
            // The package's own tests, examples and doctests are other crates that name it.
            Ok(FoundCrate::Itself) => {
                let ident = syn::Ident::new(library, Span::call_site());
                return quote!(::#ident);
            }
            Err(_) => {}
        }
    }
    quote!(::toolsmith)
}
