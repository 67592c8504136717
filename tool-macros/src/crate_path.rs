//! Which crate the generated code names: the facade `toolsmith` when the calling crate
//! depends on it, else `toolsmith-core`, unless `crate = "path"` says otherwise; and the
//! import through which the rest of the generated code names it.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};

/// The path to the core API, e.g. `::toolsmith`: named once per expansion, by [`imports`].
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

/// How the generated code names everything it uses from the core (`__toolsmith::start`),
/// once [`imports`] has imported it: short paths, because an incremental build pays for
/// every token a tool expands to.
pub fn alias() -> TokenStream {
    alias_at(Span::call_site())
}

/// [`alias`] with the span of the code it is part of, for errors that point there.
pub fn alias_at(span: Span) -> TokenStream {
    syn::Ident::new("__toolsmith", span).into_token_stream()
}

/// The imports opening each expansion's `const _: () = { … };` block, which scopes them to
/// the generated items: the core's `expansion` module as [`alias`], and with `kinds` the
/// traits that pick a return value's conversion and schema.
pub fn imports(krate: &TokenStream, kinds: bool) -> TokenStream {
    let kinds = kinds.then(|| {
        quote! {
            #[allow(unused_imports)]
            use __toolsmith::kinds::*;
        }
    });
    quote! {
        use #krate::__private::expansion as __toolsmith;
        #kinds
    }
}
