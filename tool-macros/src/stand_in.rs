//! Stand-ins: on the error path, the items the expansion would have generated, with the same
//! names and trait impls but bodies that never run (the build fails on the macro's
//! `compile_error!` anyway). Without them every use of the tool elsewhere in the crate
//! (`AddNumbers.definition()`, `ToolArgs::parse::<Search>()`) fails too, and the macro's error
//! is lost among errors about names and impls that are missing only because of it.
//!
//! Each item is the least that makes those uses type-check: no definition, no argument
//! reading, no check of the struct's name.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;

use crate::ast::{MarkedParam, ToolFn, ToolGroup};
use crate::attr::CrateOverride;
use crate::crate_path::{self, Home};

/// `fn definition(&self)` and `execute`: the whole of a `ToolImpl` that never runs.
fn tool_impl_items() -> TokenStream {
    quote! {
        fn definition(&self) -> __toolsmith::Tool {
            ::core::unreachable!()
        }
        __toolsmith::execute!();
    }
}

/// The stand-ins of `#[tool_fn]` on a function: its struct, and the struct's impls (a tool's
/// `ToolImpl`; with `#[ctx]` or `#[bind]` parameters a constructor's `definition`, `new` and,
/// without `#[bind]`, `ToolConstructor`). Nothing when the struct's name or the crate's path
/// is what could not be read.
///
/// `new` takes a value for each parameter marked `#[ctx]` or `#[bind]`, however malformed
/// (a pattern, a `#[cfg]`, both markers), as the function will have it once the macro's error
/// is fixed: but for a `ToolCallContext` (read at each call), and with the parameter's
/// `#[cfg]`s. Both markers on one parameter leave unknown whether the tool is a session
/// constructor, so it is one: the lenient guess lets every use through.
///
/// The struct is defined in a module of its own. Its type is glob-imported: a type of that
/// name the module has already (the clash `struct_name` is for) then shadows it silently,
/// instead of this error path adding a clash (E0428) the macro's error did not cause. Its
/// value is a `const` of the module's own, an item as the success path's unit struct is: it
/// shadows a glob import of the same name as that struct does (a glob-imported value would be
/// ambiguous with it, E0659 at each use of the tool).
///
/// The limits, as no emission avoids both clashes, a macro seeing neither the module's items
/// nor its imports: a glob import bringing a type of the struct's name makes a use of the name
/// as a type ambiguous (`Remember::new(..)`, E0659); and a unit or tuple struct of the
/// module's own of that name, also a value, clashes with the `const` (E0428, once, at the
/// function's name, where the success path reports the same clash).
pub fn tool_fn(tool: &ToolFn, home: Home) -> TokenStream {
    let attr = &tool.attr;
    if tool.struct_unnamed || attr.struct_name_unread || attr.krate_unread {
        return TokenStream::new();
    }
    // The same path and import as the success path's.
    let imports = crate_path::imports(&crate_path::resolve(attr.krate.as_ref(), home), false);
    let vis = &tool.item.vis;
    let ident = &tool.struct_ident;
    let module = format_ident!("__toolsmith_stand_in_{}", ident.unraw());
    let path = quote!(#module::#ident);
    let values: Vec<_> = tool.marked.iter().filter(|m| !m.call).collect();
    let impls = if values.is_empty() {
        let items = tool_impl_items();
        quote!(impl __toolsmith::ToolImpl for #path { #items })
    } else {
        let values = values
            .iter()
            .map(|MarkedParam { ty, cfgs, .. }| quote!(#(#cfgs)* _: #ty));
        let session_impls = (!tool.marked.iter().any(|m| m.bound)).then(|| {
            quote! {
                impl __toolsmith::ToolConstructor for #path {
                    fn name(&self) -> ::std::string::String {
                        ::core::unreachable!()
                    }
                    fn construct(
                        self: ::std::boxed::Box<Self>,
                        _: &__toolsmith::SessionParts,
                    ) -> ::std::sync::Arc<dyn __toolsmith::ToolImpl> {
                        ::core::unreachable!()
                    }
                }
                impl ::core::convert::From<#path> for ::std::boxed::Box<dyn __toolsmith::ToolConstructor> {
                    fn from(_: #path) -> Self {
                        ::core::unreachable!()
                    }
                }
            }
        });
        // `new` returns an opaque type, which needs a concrete one behind it.
        quote! {
            impl #path {
                pub fn definition(&self) -> __toolsmith::Tool {
                    ::core::unreachable!()
                }
                #vis fn new(#(#values),*)
                    -> impl __toolsmith::ToolImpl + ::core::clone::Clone + 'static
                {
                    ::core::unreachable!() as __toolsmith::UnbuiltTool
                }
            }
            #session_impls
        }
    };
    // At the function's name, where the success path's struct is: a clash points there.
    let value = quote_spanned! {ident.span()=>
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #ident: #path = #path;
    };
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #module {
            #[derive(Debug)]
            pub struct #ident;
        }
        #[allow(unused_imports)]
        #vis use #module::*;
        #value
        const _: () = {
            #imports
            #impls
        };
    }
}

/// The stand-in of `#[tool_fn]` on an `impl` block: `ToolImpl` for its type. Nothing when the
/// error is the block's shape: a generic block (an impl would need its parameters' bounds) or
/// a trait impl (which may be `ToolImpl` itself, already written); nor when the crate's path
/// could not be read.
pub fn tool_group(group: &ToolGroup, home: Home) -> TokenStream {
    let item = &group.item;
    let generic = !item.generics.params.is_empty() || item.generics.where_clause.is_some();
    if generic || item.trait_.is_some() || group.attr.krate_unread {
        return TokenStream::new();
    }
    let imports = crate_path::imports(&crate_path::resolve(group.attr.krate.as_ref(), home), false);
    let self_ty = &item.self_ty;
    let items = tool_impl_items();
    quote! {
        const _: () = {
            #imports
            impl __toolsmith::ToolImpl for #self_ty { #items }
        };
    }
}

/// The stand-ins of `#[derive(ToolArgs)]`, generics kept: `FromToolArgs` and `ArgsSchema`
/// for a struct (whose `ToolShape` follows), `FromToolArgs`, `ToolCommands` and `ToolShape`
/// for an enum. Nothing for a union, or when
/// the crate's path could not be read.
pub fn tool_args(input: &syn::DeriveInput, krate: &CrateOverride, home: Home) -> TokenStream {
    if krate.unread {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let described = match &input.data {
        syn::Data::Struct(_) => quote! {
            impl #impl_generics __toolsmith::ArgsSchema for #ident #ty_generics #where_clause {
                fn args_schema() -> __toolsmith::Args {
                    ::core::unreachable!()
                }
            }
        },
        syn::Data::Enum(_) => quote! {
            impl #impl_generics __toolsmith::ToolCommands for #ident #ty_generics #where_clause {
                fn command_definitions() -> ::std::vec::Vec<__toolsmith::ToolDefinition> {
                    ::core::unreachable!()
                }
            }
            impl #impl_generics __toolsmith::ToolShape for #ident #ty_generics #where_clause {
                fn tool(_: __toolsmith::ToolDefinition) -> __toolsmith::Tool {
                    ::core::unreachable!()
                }
            }
        },
        syn::Data::Union(_) => return TokenStream::new(),
    };
    let imports = crate_path::imports(&crate_path::resolve(krate.path.as_ref(), home), false);
    quote! {
        const _: () = {
            #imports
            impl #impl_generics __toolsmith::FromToolArgs for #ident #ty_generics #where_clause {
                fn from_tool_args(
                    _: &__toolsmith::ToolArgs<'_>,
                ) -> __toolsmith::Result<Self, __toolsmith::ToolError> {
                    ::core::unreachable!()
                }
            }
            #described
        };
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use super::*;
    use crate::attr::ToolAttr;
    use crate::errors::Errors;
    use crate::{ast, attr};

    /// The stand-ins of `#[tool_fn(#args)]` on the function `item`.
    fn fn_stand_ins(args: TokenStream, item: TokenStream) -> String {
        let mut errors = Errors::default();
        let attr = attr::parse_tool_attr(args, &mut errors);
        let (without_body, body) = ast::FnBody::split(item);
        let item: syn::ItemFn = syn::parse2(without_body).expect("a function");
        let tool = ast::ToolFn::parse(attr, item, body.expect("a body"), &mut errors);
        tool_fn(&tool, Home::Facade).to_string()
    }

    /// The stand-ins of `#[derive(ToolArgs)]` on `item`.
    fn derive_stand_ins(item: TokenStream) -> String {
        let input: syn::DeriveInput = syn::parse2(item).expect("a type");
        let krate = attr::parse_crate_override(&input.attrs, &mut Errors::default());
        tool_args(&input, &krate, Home::Facade).to_string()
    }

    #[test]
    fn a_tool_function_stands_in_as_its_struct_with_its_impl() {
        let out = fn_stand_ins(
            quote!(categroy = "math"),
            quote!(
                fn add_numbers(a: f64) {}
            ),
        );
        assert!(out.contains("pub struct AddNumbers ;"), "{out}");
        assert!(
            out.contains(
                "impl __toolsmith :: ToolImpl for __toolsmith_stand_in_AddNumbers :: AddNumbers"
            ),
            "{out}"
        );
        assert!(
            out.contains("use :: toolsmith :: __private :: expansion"),
            "{out}"
        );
    }

    #[test]
    fn a_constructor_stands_in_with_new_taking_its_values() {
        let out = fn_stand_ins(
            quote!(retries = -1),
            quote!(
                fn remember(#[ctx] parts: SessionParts, #[bind] limit: Limit, fact: String) {}
            ),
        );
        assert!(
            out.contains("fn new (_ : SessionParts , _ : Limit)"),
            "{out}"
        );
        // With a `#[bind]` value the success path is no session constructor either.
        assert!(!out.contains("ToolConstructor for"), "{out}");
        assert!(!out.contains("ToolImpl for"), "{out}");
    }

    #[test]
    fn new_takes_a_value_for_each_marked_parameter_however_malformed() {
        let out = fn_stand_ins(
            quote!(),
            quote!(
                fn remember(
                    #[ctx]
                    #[bind]
                    both: Both,
                    #[bind] (a, b): (u8, u8),
                    #[cfg(any())]
                    #[ctx]
                    gone: Gone,
                    #[ctx] call: ToolCallContext,
                    #[bind]
                    #[ctx]
                    call_too: ToolCallContext,
                    fact: String,
                ) {
                }
            ),
        );
        assert!(
            out.contains(
                "fn new (_ : Both , _ : (u8 , u8) , # [cfg (any ())] _ : Gone , _ : ToolCallContext)"
            ),
            "{out}"
        );
        // `#[bind]` alone says the tool is no session constructor.
        assert!(!out.contains("ToolConstructor for"), "{out}");
        // Both markers leave it unknown: the stand-in is one.
        let both = fn_stand_ins(
            quote!(),
            quote!(
                fn remember(
                    #[ctx]
                    #[bind]
                    both: Both,
                ) {
                }
            ),
        );
        assert!(both.contains("fn new (_ : Both)"), "{both}");
        assert!(both.contains("ToolConstructor for"), "{both}");
    }

    #[test]
    fn the_stand_in_names_the_struct_and_crate_the_attribute_gives() {
        let out = fn_stand_ins(
            quote!(
                struct_name = "Doubler",
                crate = "crate::api::tools",
                timeout = "soon"
            ),
            quote!(
                fn double(x: u32) {}
            ),
        );
        assert!(out.contains("pub struct Doubler ;"), "{out}");
        assert!(
            out.contains("use crate :: api :: tools :: __private :: expansion"),
            "{out}"
        );
    }

    #[test]
    fn no_stand_in_when_the_struct_name_is_unknown() {
        let unreadable = fn_stand_ins(
            quote!(struct_name = "not a name"),
            quote!(
                fn double() {}
            ),
        );
        assert_eq!(unreadable, "");
        let unnamed = fn_stand_ins(
            quote!(),
            quote!(
                fn self_() {}
            ),
        );
        assert_eq!(unnamed, "");
        // The parser stops at the literal: the keys after it are unread.
        let stopped = fn_stand_ins(
            quote!("x", struct_name = "Named"),
            quote!(
                fn double() {}
            ),
        );
        assert_eq!(stopped, "");
    }

    #[test]
    fn no_stand_in_when_the_crate_path_is_unknown() {
        let out = fn_stand_ins(
            quote!(crate = "not a path"),
            quote!(
                fn double() {}
            ),
        );
        assert_eq!(out, "");
        let derived = derive_stand_ins(quote! {
            #[toolsmith(crate_path = "not a path")]
            struct Echo { text: String }
        });
        assert_eq!(derived, "");
    }

    #[test]
    fn a_derived_type_stands_in_with_its_generics() {
        let out = derive_stand_ins(quote!(
            struct Page<T: Clone> {
                items: Vec<T>,
            }
        ));
        assert!(
            out.contains("impl < T : Clone > __toolsmith :: FromToolArgs for Page < T >"),
            "{out}"
        );
        assert!(out.contains("ArgsSchema for Page < T >"), "{out}");
        let commands = derive_stand_ins(quote!(
            enum Command {
                Clear,
            }
        ));
        assert!(commands.contains("ToolCommands for Command"), "{commands}");
        // Taken whole by a `#[tool_fn]` (`#[args]`), it is asked for its shape.
        assert!(commands.contains("ToolShape for Command"), "{commands}");
        assert_eq!(derive_stand_ins(quote!(union Bits { a: u32 })), "");
    }

    #[test]
    fn no_stand_in_for_a_generic_group_or_a_trait_impl() {
        let stand_ins = |item: TokenStream| {
            let mut errors = Errors::default();
            let item: syn::ItemImpl = syn::parse2(item).expect("an impl block");
            let group = ast::ToolGroup::parse(ToolAttr::default(), item, &mut errors);
            tool_group(&group, Home::Facade).to_string()
        };
        let plain = stand_ins(quote!(impl Pinger { fn ping(&self) {} }));
        assert!(plain.contains("ToolImpl for Pinger"), "{plain}");
        assert_eq!(
            stand_ins(quote!(
                impl<T> Pinger<T> {
                    fn ping(&self) {}
                }
            )),
            ""
        );
        assert_eq!(
            stand_ins(quote!(impl Ping for Pinger { fn ping(&self) {} })),
            ""
        );
    }
}
