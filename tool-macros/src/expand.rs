//! Code generation for `#[tool_fn]` (functions and command groups) and `#[derive(ToolArgs)]`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned as _;

use crate::args;
use crate::ast::{ArgField, ArgsStruct, CommandEnum, Output, Param, ToolFn, ToolGroup};
use crate::attr::{Annotations, ToolAttr};
use crate::crate_path::{self, Home};
use crate::docs::Description;
use crate::fixed;
use crate::returns;

/// The category of a tool that names none.
const DEFAULT_CATEGORY: &str = "custom";

fn annotations_expr(krate: &Ident, annotations: &Annotations) -> Option<TokenStream> {
    if !annotations.any() {
        return None;
    }
    let flag = |set: Option<bool>| match set {
        Some(value) => quote!(#krate::Some(#value)),
        None => quote!(#krate::None),
    };
    let read_only = flag(annotations.read_only);
    let destructive = flag(annotations.destructive);
    let idempotent = flag(annotations.idempotent);
    let open_world = flag(annotations.open_world);
    Some(quote! {
        .with_annotations({
            let mut annotations = <#krate::ToolAnnotations as ::core::default::Default>::default();
            annotations.read_only = #read_only;
            annotations.destructive = #destructive;
            annotations.idempotent = #idempotent;
            annotations.open_world = #open_world;
            annotations
        })
    })
}

/// An expression building one `ToolDefinition`.
fn definition_expr(
    krate: &Ident,
    name: &str,
    description: &Description,
    category: &str,
    arguments: TokenStream,
    output: Option<&Output>,
    annotations: &Annotations,
) -> TokenStream {
    let annotations = annotations_expr(krate, annotations);
    let returns = match output {
        Some(output) => returns::schema(krate, output),
        None => quote!(|| #krate::None),
    };
    // Built by one function of the core for every tool: the code here is its arguments.
    // The result schema's function first: picked before any value is built, it needs no
    // cleanup path dropping one (a landing pad in every tool).
    quote! {
        #krate::definition(
            #returns,
            #name,
            #description,
            #category,
            #arguments,
        )
        #annotations
    }
}

/// `fn timeout(&self)` when the tool has one.
fn timeout_fn(krate: &Ident, attr: &ToolAttr) -> Option<TokenStream> {
    attr.timeout_millis.as_ref().map(|millis| {
        let millis = millis.value;
        quote! {
            fn timeout(&self) -> #krate::Option<::core::time::Duration> {
                #krate::Some(::core::time::Duration::from_millis(#millis))
            }
        }
    })
}

/// `fn retry_config(&self)` when the tool has `retries = N`.
fn retry_config_fn(krate: &Ident, attr: &ToolAttr) -> Option<TokenStream> {
    attr.retries.map(|retries| {
        let config = if retries == 0 {
            quote!(#krate::ToolRetryConfig::never())
        } else {
            quote!(#krate::ToolRetryConfig::exponential(#retries))
        };
        quote! {
            fn retry_config(&self) -> #krate::Option<#krate::ToolRetryConfig> {
                #krate::Some(#config)
            }
        }
    })
}

/// `ToolImpl::execute_lent`, and `execute` (the core's `execute!`) lending it its arguments.
/// `body` evaluates to the boxed future, with the arguments lent as `__toolsmith_arguments`.
fn execute_fn(body: TokenStream) -> TokenStream {
    // The result conversion is spanned at the user's return type (for its errors), so lints
    // would see it as the user's code: these are about the generated code, not theirs.
    let mut execute = fixed::tokens(EXECUTE_LENT);
    execute.extend([fixed::braced(body)]);
    execute
}

/// `execute` (the core's `execute!`) and `execute_lent`'s signature; its body follows.
///
/// The lints allowed are clippy's, so the `allow` is there only when clippy runs (it sets
/// `cfg(clippy)`): a plain build does not run them, and checked every tool's three tool-lint
/// names all the same (2 % of the 200-tool crate's incremental rebuild).
const EXECUTE_LENT: &str = "__toolsmith::execute!();
    #[cfg_attr(clippy, allow(clippy::needless_borrow, clippy::let_unit_value, clippy::unit_arg))]
    fn execute_lent<'__toolsmith_tool>(
        &'__toolsmith_tool self,
        __toolsmith_arguments: &__toolsmith::ToolArguments,
    ) -> __toolsmith::ToolFuture<'__toolsmith_tool>";

/// `ToolImpl::execute_now`: `body` evaluates to the `Option` of the finished result, which
/// is written to the answer (an early answer, a misread, is written and returned by
/// [`answer_now`]).
fn execute_now_fn(body: TokenStream) -> TokenStream {
    let mut execute_now = fixed::tokens(EXECUTE_NOW);
    execute_now.extend([fixed::braced(quote!(*__toolsmith_answer = { #body };))]);
    execute_now
}

/// `execute_now`'s signature; its body follows (clippy's lints allowed as in [`EXECUTE_LENT`]).
const EXECUTE_NOW: &str =
    "#[cfg_attr(clippy, allow(clippy::needless_borrow, clippy::let_unit_value, clippy::unit_arg))]
    fn execute_now(
        &self,
        __toolsmith_arguments: &__toolsmith::ToolArguments,
        __toolsmith_answer: &mut __toolsmith::Option<
            __toolsmith::Result<__toolsmith::ToolCallResult, __toolsmith::ToolError>,
        >,
    )";

/// Inside `execute_now`'s body: `answer` (an `Option`) is the call's answer, given now.
fn answer_now(answer: TokenStream) -> TokenStream {
    quote!({
        *__toolsmith_answer = #answer;
        return;
    })
}

/// `execute_lent` for a call that `execute_now` answers: the finished result as a future.
fn execute_through_now(krate: &Ident, name: &str) -> TokenStream {
    quote!(#krate::run_now(self, #name, __toolsmith_arguments))
}

/// The generated `ToolImpl` for `target`: its definition (`definition` builds it),
/// `execute` and `execute_lent` (and `execute_now` when some calls are synchronous), and the
/// time limit and retries `attr` sets.
fn tool_impl(
    krate: &Ident,
    target: TokenStream,
    definition: &TokenStream,
    attr: &ToolAttr,
    execute: &TokenStream,
    execute_now: Option<&TokenStream>,
) -> TokenStream {
    let timeout = timeout_fn(krate, attr);
    let retry_config = retry_config_fn(krate, attr);
    let mut body = fixed::tokens(DEFINITION);
    body.extend([fixed::braced(definition.clone())]);
    body.extend([execute.clone()]);
    match execute_now {
        Some(execute_now) => body.extend([execute_now.clone()]),
        // Without `execute_now`, the manager need not try it on every call.
        None => body.extend(fixed::tokens(NEVER_NOW)),
    }
    body.extend(timeout);
    body.extend(retry_config);
    let mut tool_impl = fixed::tokens(TOOL_IMPL);
    tool_impl.extend(target);
    tool_impl.extend([fixed::braced(body)]);
    tool_impl
}

/// The generated `ToolImpl`, before its type.
const TOOL_IMPL: &str = "#[automatically_derived] impl __toolsmith::ToolImpl for";

/// `definition`'s signature; its body follows.
const DEFINITION: &str = "fn definition(&self) -> __toolsmith::Tool";

/// `may_answer_now` of a tool without `execute_now`.
const NEVER_NOW: &str = "fn may_answer_now(&self) -> bool { false }";

/// How a function is run.
#[derive(Clone, Copy, PartialEq)]
enum Runner {
    Async,
    Sync,
    Blocking,
}

/// One call of a tool function or command method: for an `async` or blocking function a
/// boxed-future expression, for a synchronous one the expression of its finished result.
struct Call<'a> {
    name: &'a str,
    /// The function (`add`) or method (`self.add`) to call.
    target: TokenStream,
    /// The arguments read.
    fields: &'a [ArgField],
    /// The `#[args]` parameter's type, read from the whole arguments instead of `fields`.
    whole: Option<&'a syn::Type>,
    /// The call's arguments in order.
    call_args: Vec<CallArg>,
    /// The statements binding the `CallArg::Local`s, run once the arguments are read.
    locals: TokenStream,
    runner: Runner,
    output: &'a Output,
}

/// An argument of the function called.
enum CallArg {
    /// The argument `fields[index]`, lent as `&str` when `borrowed`.
    Field { index: usize, borrowed: bool },
    /// A local of that name (a `#[ctx]` value or the call's context).
    Local(Ident),
    /// The value of the `#[args]` parameter.
    Whole,
}

/// The local holding the value of the `#[args]` parameter once read.
fn whole_local() -> Ident {
    Ident::new("__toolsmith_whole", Span::mixed_site())
}

/// The schema of the arguments: the `#[args]` type's, or else `fields`'.
fn arguments_schema(krate: &Ident, whole: Option<&syn::Type>, fields: &[ArgField]) -> TokenStream {
    match whole {
        // Spanned at the type, so that a type without the derive is blamed.
        Some(ty) => quote_spanned!(ty.span()=> <#ty as #krate::ArgsSchema>::args_schema()),
        None => args::schema_expr(krate, fields),
    }
}

/// The call: the arguments read in place (no struct of their own, whose impls every tool
/// would compile), then the function called and its result converted.
fn call_expr(krate: &Ident, call: &Call<'_>) -> TokenStream {
    let Call { name, target, .. } = call;
    // The conversion is picked first, before any argument is read or future made: its calls
    // then run while nothing is alive to drop, and need no cleanup path (a landing pad in
    // every tool, dropping the arguments read or the future).
    let conversion = Ident::new("__toolsmith_conversion", Span::mixed_site());
    let picked = {
        let pick = returns::conversion(call.output);
        quote!(let #conversion = #pick;)
    };
    let borrows = call
        .call_args
        .iter()
        .any(|arg| matches!(arg, CallArg::Field { borrowed: true, .. }));
    let finish = |values: &[Ident]| {
        let call_args = call.call_args.iter().map(|arg| match arg {
            &CallArg::Field { index, borrowed } => {
                let value = &values[index];
                if borrowed {
                    quote!(&#value)
                } else {
                    quote!(#value)
                }
            }
            CallArg::Local(ident) => quote!(#ident),
            CallArg::Whole => {
                let whole = whole_local();
                quote!(#whole)
            }
        });
        let call_target = quote!(#target(#(#call_args),*));
        let run = match call.runner {
            // A `&str` argument is lent from a `String` the future must own.
            Runner::Async if borrows => {
                quote!(#krate::start(#name, #conversion, async move { #call_target.await }))
            }
            Runner::Async => quote!(#krate::start(#name, #conversion, #call_target)),
            Runner::Blocking => {
                quote!(#krate::start_blocking(#name, #conversion, move || #call_target))
            }
            Runner::Sync => quote!(#conversion.apply(#call_target, #name)),
        };
        // The locals are bound as the call starts, outside its future or closure.
        let locals = &call.locals;
        if locals.is_empty() {
            run
        } else {
            quote!({ #locals #run })
        }
    };
    let runner = call.runner;
    let misread = |error: TokenStream| match runner {
        // Answered and returned from `execute_now` (every synchronous call is read there), so
        // that the call's own result is the only value the body makes: it is written in place.
        Runner::Sync => answer_now(quote!(#krate::Some(#krate::Err(#error)))),
        Runner::Async | Runner::Blocking => quote!(#krate::finished(#krate::Err(#error))),
    };
    if let Some(ty) = call.whole {
        // Read as `ToolArgs::parse` reads it: the type's own `FromToolArgs`.
        let (whole, error) = (
            whole_local(),
            Ident::new("__toolsmith_error", Span::mixed_site()),
        );
        let read = quote_spanned! {ty.span()=>
            <#ty as #krate::FromToolArgs>::from_tool_args(
                &#krate::ToolArgs::new(#name, __toolsmith_arguments),
            )
        };
        let (run, misread) = (finish(&[]), misread(quote!(#error)));
        return quote!({
            #picked
            match #read {
                #krate::Ok(#whole) => #run,
                #krate::Err(#error) => #misread,
            }
        });
    }
    let reader = Ident::new("__toolsmith_args", Span::mixed_site());
    let read = args::read_expr(krate, &reader, call.fields, None, finish, misread);
    if call.fields.is_empty() {
        return quote!({ #picked #read });
    }
    quote!({
        #picked
        let #reader = &#krate::ToolArgs::new(#name, __toolsmith_arguments);
        #read
    })
}

/// The function building the tool's definition. Not cached: the manager keeps the definition
/// it got at registration, and a cache per tool would cost compile time for every tool.
fn definition_fn(krate: &Ident, build: TokenStream) -> TokenStream {
    quote! {
        fn __toolsmith_definition() -> #krate::Tool {
            #build
        }
    }
}

/// The unit struct a tool function generates, spanned at its name (the function's name, or
/// `struct_name`'s literal), so that a clash with another item of that name (E0428) points
/// there rather than at `#[tool_fn]`.
///
/// It derives `Debug` only: `Clone`, `Copy` and `Default` were four more impls a tool (`Copy`
/// brings an internal `TrivialClone`), 11 % of what a crate of tools executes on an
/// incremental rebuild, for a zero-sized value that can be written anywhere (`Add`).
///
/// A deprecated function's struct is deprecated as it is (its `#[deprecated]` attributes,
/// `deprecated`), so that registering the tool warns where the function's callers would.
fn struct_item(
    vis: &syn::Visibility,
    struct_ident: &Ident,
    doc: &str,
    deprecated: &[&syn::Attribute],
) -> TokenStream {
    quote_spanned! {struct_ident.span()=>
        #[doc = #doc]
        #(#deprecated)*
        #[derive(Debug)]
        #vis struct #struct_ident;
    }
}

/// The `#[deprecated]` attributes among `attrs`.
fn deprecated_attrs(attrs: &[syn::Attribute]) -> Vec<&syn::Attribute> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("deprecated"))
        .collect()
}

/// `#[allow(deprecated)]` for the generated items when `deprecated`: they call the
/// deprecated function (and name its deprecated struct), which is the tool, not a use the
/// user could change.
fn allow_deprecated(deprecated: bool) -> Option<TokenStream> {
    deprecated.then(|| quote!(#[allow(deprecated)]))
}

/// A check that the generated struct's name means that struct. A proc macro cannot see the
/// other items of the module, but the compiler can: when the module already has a type of
/// that name, rustc reports the clash (E0428) and resolves the name, as a type, to the other
/// type, while the unit struct's value is still ours. The core's `GeneratedStruct`, asked of
/// the value after the generated impls went to "the type of that name", then fails with a
/// message saying what happened and how to fix it (`struct_name`), instead of only the
/// clash and whatever errors the generated impls run into on the other type.
///
/// This is the check, a statement: a struct that is the tool gets `GeneratedStruct` from the
/// core's impl for every `ToolImpl`, so it goes in the tool's `definition` (no item of its
/// own to compile). A constructor struct states it with [`unique_name_items`]. The value is
/// coerced to `&dyn GeneratedStruct`, which asks the bound with neither a function to
/// compile per tool (a generic `is_generated(&Tool)` called at run time: +0.4 % of a
/// 200-tool full build in instructions) nor a constant body to check and evaluate per tool
/// (the same call in an inline `const`: +0.3 % full, +1.2 % incremental).
fn unique_name_check(struct_ident: &Ident) -> TokenStream {
    let krate = crate_path::alias_at(struct_ident.span());
    quote_spanned! {struct_ident.span()=>
        let _: &dyn #krate::GeneratedStruct = &#struct_ident;
    }
}

/// [`unique_name_check`] for a constructor struct (`#[ctx]`), which is not a `ToolImpl`: it
/// states `MacroGenerated` (which gives `GeneratedStruct`; a trait asked only there, so its
/// impls are offered in no other error), and the same coercion is a `const` item.
fn unique_name_items(struct_ident: &Ident) -> TokenStream {
    let krate = crate_path::alias_at(struct_ident.span());
    quote_spanned! {struct_ident.span()=>
        impl #krate::MacroGenerated for #struct_ident {}
        const _: &dyn #krate::GeneratedStruct = &#struct_ident;
    }
}

/// Expands `#[tool_fn]` on a function.
pub fn tool_fn(tool: &ToolFn, home: Home) -> TokenStream {
    let imports = crate_path::imports_of(tool.attr.krate.as_ref(), home, true);
    let krate = crate_path::alias();
    let item = &tool.item;
    let emitted = tool.emitted();
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let struct_ident = &tool.struct_ident;
    let name = &tool.name.value;
    let description = tool
        .description
        .clone()
        .unwrap_or(Description::Text(String::new()));
    let category = tool
        .attr
        .category
        .as_ref()
        .map_or(DEFAULT_CATEGORY.to_owned(), |c| c.value.clone());
    let fields: Vec<ArgField> = tool.arg_fields().map(clone_field).collect();
    let whole = tool.whole_args().next().map(|args| &args.ty);
    // With an `#[args]` parameter the type says what the tool is (one command, or a group
    // for a command enum), built on the function's definition without arguments.
    let arguments = match whole {
        Some(_) => quote!(#krate::Args::empty()),
        None => args::schema_expr(&krate, &fields),
    };
    let function = definition_expr(
        &krate,
        name,
        &description,
        &category,
        arguments,
        Some(&tool.output),
        &tool.attr.annotations,
    );
    let definition = match whole {
        // Spanned at the type, so that a type without the derive is blamed.
        Some(ty) => quote_spanned!(ty.span()=> <#ty as #krate::ToolShape>::tool(#function)),
        None => quote!(#krate::Tool::SingleCommand(#function)),
    };

    let runner = if tool.attr.blocking.is_some() {
        Runner::Blocking
    } else if item.sig.asyncness.is_some() {
        Runner::Async
    } else {
        Runner::Sync
    };
    // `#[ctx]` values (cloned out of the tool) and the call's context are bound before the
    // call, so the future owns them, to locals named apart from the parameters: a parameter
    // named like its function would otherwise hide the function it is passed to.
    let mut bindings = Vec::new();
    let mut field = 0;
    let call_args: Vec<CallArg> = tool
        .params
        .iter()
        .enumerate()
        .map(|(index, param)| {
            let local = || Ident::new(&format!("__toolsmith_bound_{index}"), Span::mixed_site());
            match param {
                Param::Arg { borrowed_str, .. } => {
                    field += 1;
                    CallArg::Field {
                        index: field - 1,
                        borrowed: *borrowed_str,
                    }
                }
                Param::Ctx { ident, ty, .. } => {
                    let local = local();
                    bindings.push(quote_spanned! {ty.span()=>
                        let #local: #ty = ::core::clone::Clone::clone(&self.#ident);
                    });
                    CallArg::Local(local)
                }
                Param::Call { ty, .. } => {
                    let local = local();
                    bindings.push(quote_spanned! {ty.span()=>
                        let #local: #ty = #krate::call_context(#name);
                    });
                    CallArg::Local(local)
                }
                Param::Whole(_) => CallArg::Whole,
            }
        })
        .collect();
    let call = Call {
        name,
        target: quote!(#fn_ident),
        fields: &fields,
        whole,
        call_args,
        locals: quote!(#(#bindings)*),
        runner,
        output: &tool.output,
    };
    let call_expr = call_expr(&krate, &call);
    // A synchronous function is answered by `execute_now`, without a future or a copy of the
    // arguments; `execute_lent` goes through it.
    let (execute, execute_now) = if runner == Runner::Sync {
        (
            execute_fn(execute_through_now(&krate, name)),
            Some(execute_now_fn(quote!(#krate::Some(#call_expr)))),
        )
    } else {
        (execute_fn(call_expr), None)
    };

    // The same `ToolImpl` body serves the unit struct (no `#[ctx]`) and the struct that holds
    // the `#[ctx]` values.
    let impl_for = |target: TokenStream, definition: &TokenStream| {
        tool_impl(
            &krate,
            target,
            definition,
            &tool.attr,
            &execute,
            execute_now.as_ref(),
        )
    };

    let struct_doc =
        format!("The `{name}` tool (generated by `#[tool_fn]` from the function `{fn_ident}`).");
    let deprecated = deprecated_attrs(&item.attrs);
    let allow_deprecated = allow_deprecated(!deprecated.is_empty());
    if !tool.has_ctx() {
        let struct_item = struct_item(vis, struct_ident, &struct_doc, &deprecated);
        // The definition is built in `definition` itself: no function of its own to compile.
        let unique_name_check = unique_name_check(struct_ident);
        // `definition`'s body: the check, then the definition.
        let definition = quote!(#unique_name_check #definition);
        let unit_tool_impl = impl_for(quote!(#struct_ident), &definition);
        return quote! {
            #emitted

            #struct_item

            #allow_deprecated
            const _: () = {
                #imports

                #unit_tool_impl
            };
        };
    }

    // With `#[ctx]` parameters: the struct is a constructor; the tool holds the values.
    let ctx: Vec<(&Ident, &syn::Type)> = tool
        .params
        .iter()
        .filter_map(|p| match p {
            Param::Ctx { ident, ty, .. } => Some((ident, ty)),
            Param::Arg { .. } | Param::Call { .. } | Param::Whole(_) => None,
        })
        .collect();
    let bound = tool.has_bound();
    // The constructor builds the definition too (for a tool it could not build): one
    // function serves both.
    let cached = definition_fn(&krate, definition);
    let ctx_tool_impl = impl_for(quote!(__ToolsmithTool), &quote!(__toolsmith_definition()));
    let ctx_idents: Vec<&Ident> = ctx.iter().map(|(i, _)| *i).collect();
    let ctx_types: Vec<&syn::Type> = ctx.iter().map(|(_, t)| *t).collect();
    let extracts = ctx.iter().map(|(ident, ty)| {
        quote_spanned! {ty.span()=>
            let #ident = match <#ty as #krate::FromSessionParts>::from_session_parts(
                __toolsmith_parts,
            ) {
                #krate::Ok(value) => value,
                #krate::Err(reason) => {
                    return ::std::sync::Arc::new(#krate::UnbuiltTool::new(
                        __toolsmith_definition(),
                        reason,
                    ));
                }
            };
        }
    });
    // With a `#[bind]` value the session cannot build the tool: only `new` can.
    let session_impls = (!bound).then(|| {
        quote! {
            #[automatically_derived]
            impl #krate::ToolConstructor for #struct_ident {
                fn name(&self) -> ::std::string::String {
                    <::std::string::String as ::core::convert::From<&str>>::from(#name)
                }

                // Named apart from the user's parameters (`#[ctx] parts: SessionParts`).
                fn construct(
                    self: ::std::boxed::Box<Self>,
                    __toolsmith_parts: &#krate::SessionParts,
                ) -> ::std::sync::Arc<dyn #krate::ToolImpl> {
                    #(#extracts)*
                    ::std::sync::Arc::new(__ToolsmithTool { #(#ctx_idents,)* })
                }
            }

            #[automatically_derived]
            impl ::core::convert::From<#struct_ident>
                for ::std::boxed::Box<dyn #krate::ToolConstructor>
            {
                fn from(constructor: #struct_ident) -> Self {
                    ::std::boxed::Box::new(constructor)
                }
            }
        }
    });
    let struct_doc = if bound {
        format!(
            "{struct_doc} Build the tool with `{struct_ident}::new(..)` from its `#[bind]` and `#[ctx]` values."
        )
    } else {
        format!(
            "{struct_doc} Add it to a `ToolShed`: it is built from the session's parts (its `#[ctx]` parameters), or with `{struct_ident}::new(..)` from values."
        )
    };
    let struct_item = struct_item(vis, struct_ident, &struct_doc, &deprecated);
    let unique_name_items = unique_name_items(struct_ident);
    quote! {
        #emitted

        #struct_item

        #allow_deprecated
        const _: () = {
            #imports
            #cached
            #unique_name_items

            #[derive(Clone)]
            struct __ToolsmithTool { #(#ctx_idents: #ctx_types,)* }

            #ctx_tool_impl

            impl #struct_ident {
                /// The definition of the tool this constructor builds.
                pub fn definition(&self) -> #krate::Tool {
                    __toolsmith_definition()
                }

                /// Builds the tool from its `#[bind]` and `#[ctx]` values given directly, in the
                /// order of the function's parameters: a ready-made tool that needs no session.
                #[allow(clippy::new_ret_no_self)]
                #vis fn new(#(#ctx_idents: #ctx_types),*)
                    -> impl #krate::ToolImpl + ::core::clone::Clone + 'static
                {
                    __ToolsmithTool { #(#ctx_idents,)* }
                }
            }

            #session_impls
        };
    }
}

fn clone_field(field: &ArgField) -> ArgField {
    ArgField {
        member: field.member.clone(),
        ty: field.ty.clone(),
        name: field.name.clone(),
        description: field.description.clone(),
        default: field.default.clone(),
    }
}

/// Expands `#[tool_fn]` on an impl block.
pub fn tool_group(group: &ToolGroup, home: Home) -> TokenStream {
    let imports = crate_path::imports_of(group.attr.krate.as_ref(), home, true);
    let krate = crate_path::alias();
    let item = &group.item;
    let self_ty = &item.self_ty;
    let name = &group.name.value;
    let category = group
        .attr
        .category
        .as_ref()
        .map_or(DEFAULT_CATEGORY.to_owned(), |c| c.value.clone());

    let mut definitions = Vec::new();
    let mut async_arms = Vec::new();
    let mut sync_arms = Vec::new();
    for command in &group.commands {
        let mut annotations = command.annotations;
        let tool_flags = group.attr.annotations;
        annotations.read_only = annotations.read_only.or(tool_flags.read_only);
        annotations.destructive = annotations.destructive.or(tool_flags.destructive);
        annotations.idempotent = annotations.idempotent.or(tool_flags.idempotent);
        annotations.open_world = annotations.open_world.or(tool_flags.open_world);
        definitions.push(definition_expr(
            &krate,
            &command.name.value,
            command
                .description
                .as_ref()
                .unwrap_or(&Description::Text(String::new())),
            &category,
            arguments_schema(
                &krate,
                command.whole.first().map(|args| &args.ty),
                &command.fields,
            ),
            Some(&command.output),
            &annotations,
        ));
        let method = &command.method;
        let whole = command.whole.first().map(|args| &args.ty);
        let call = Call {
            name,
            target: quote!(self.#method),
            fields: &command.fields,
            whole,
            call_args: match whole {
                Some(_) => vec![CallArg::Whole],
                None => command
                    .borrowed_str
                    .iter()
                    .enumerate()
                    .map(|(index, borrowed)| CallArg::Field {
                        index,
                        borrowed: *borrowed,
                    })
                    .collect(),
            },
            locals: TokenStream::new(),
            runner: if command.is_async {
                Runner::Async
            } else {
                Runner::Sync
            },
            output: &command.output,
        };
        let call_expr = call_expr(&krate, &call);
        let command_name = &command.name.value;
        if command.is_async {
            async_arms.push(quote!(#command_name => #call_expr,));
        } else {
            sync_arms.push(quote!(#command_name => #krate::Some(#call_expr),));
        }
    }
    let listed = group
        .commands
        .iter()
        .map(|c| format!("'{}'", c.name.value))
        .collect::<Vec<_>>()
        .join(", ");
    let tool = match group.description.as_ref().filter(|d| !d.is_blank()) {
        Some(description) => quote!(#krate::Tool::group(
            #name,
            #description,
            ::std::vec![#(#definitions),*],
        )),
        None => quote!(#krate::Tool::MultiCommands(
            <::std::string::String as ::core::convert::From<&str>>::from(#name),
            ::std::vec![#(#definitions),*],
        )),
    };
    // `on_error` ends the function with the command's misread, `error`.
    let read_command = |arguments: TokenStream, on_error: TokenStream| {
        quote! {
            let __toolsmith_command = match #krate::command_name(#name, #arguments) {
                #krate::Ok(command) => command,
                #krate::Err(error) => #on_error,
            };
        }
    };
    let unknown = quote! {
        #krate::Err(#krate::unknown_command(#name, other, #listed))
    };
    // Synchronous commands (and every call `execute_lent` cannot start: no or an unknown
    // `command`) are answered by `execute_now`; `execute_lent` starts the `async` ones.
    let execute_now = (!sync_arms.is_empty()).then(|| {
        let read = read_command(
            quote!(__toolsmith_arguments),
            answer_now(quote!(#krate::Some(#krate::Err(error)))),
        );
        let async_commands: Vec<&String> = group
            .commands
            .iter()
            .filter(|c| c.is_async)
            .map(|c| &c.name.value)
            .collect();
        let async_arm =
            (!async_commands.is_empty()).then(|| quote!(#(#async_commands)|* => #krate::None,));
        execute_now_fn(quote! {
            #read
            match __toolsmith_command.as_str() {
                #(#sync_arms)*
                #async_arm
                other => #krate::Some(#unknown),
            }
        })
    });
    let through_now = execute_through_now(&krate, name);
    let execute = if async_arms.is_empty() {
        execute_fn(through_now)
    } else {
        let read = read_command(
            quote!(__toolsmith_arguments),
            quote!(return #krate::finished(#krate::Err(error))),
        );
        let others = if sync_arms.is_empty() {
            quote!(other => #krate::finished(#unknown),)
        } else {
            quote!(_ => #through_now,)
        };
        execute_fn(quote! {
            #read
            match __toolsmith_command.as_str() {
                #(#async_arms)*
                #others
            }
        })
    };
    let group_tool_impl = tool_impl(
        &krate,
        quote!(#self_ty),
        &tool,
        &group.attr,
        &execute,
        execute_now.as_ref(),
    );
    let any_deprecated = item.items.iter().any(|item| {
        matches!(item, syn::ImplItem::Fn(method) if !deprecated_attrs(&method.attrs).is_empty())
    });
    let allow_deprecated = allow_deprecated(any_deprecated);
    quote! {
        #item

        #allow_deprecated
        const _: () = {
            #imports
            #group_tool_impl
        };
    }
}

/// Expands `#[derive(ToolArgs)]` on a struct.
pub fn args_struct(input: &ArgsStruct, krate: &TokenStream) -> TokenStream {
    let imports = crate_path::imports(krate, false);
    let impls = args::struct_impls(
        &crate_path::alias(),
        &input.ident,
        &input.fields,
        &input.skipped,
    );
    quote!(const _: () = { #imports #impls };)
}

/// Expands `#[derive(ToolArgs)]` on an enum.
pub fn command_enum(input: &CommandEnum, path: &TokenStream) -> TokenStream {
    let imports = crate_path::imports(path, false);
    let krate = &crate_path::alias();
    let ident = &input.ident;
    let reader = Ident::new("__toolsmith_args", Span::mixed_site());
    // Hygienic, as every local a field's default function is called beside.
    let selected = Ident::new("__toolsmith_command", Span::mixed_site());
    let arms = input.variants.iter().map(|variant| {
        let command = &variant.name.value;
        let variant_ident = &variant.ident;
        if variant.unit {
            quote!(#command => #krate::Ok(Self::#variant_ident),)
        } else {
            let read = args::read_into(
                krate,
                &reader,
                &variant.fields,
                &variant.skipped,
                &quote!(Self::#variant_ident),
            );
            quote!(#command => { #read },)
        }
    });
    let definitions = input.variants.iter().map(|variant| {
        let command = &variant.name.value;
        let description = variant.description.clone().unwrap_or_default();
        let schema = args::schema_expr(krate, &variant.fields);
        // Nothing when the variant gives no hint: the expansion stays what it was.
        let annotations = annotations_expr(krate, &variant.annotations);
        quote!(#krate::ToolDefinition::new(#command, #description, #schema) #annotations)
    });
    let listed = input
        .variants
        .iter()
        .map(|v| format!("'{}'", v.name.value))
        .collect::<Vec<_>>()
        .join(", ");
    quote! {
        const _: () = {
            #imports

            #[automatically_derived]
            impl #krate::FromToolArgs for #ident {
                fn from_tool_args(
                    #reader: &#krate::ToolArgs<'_>,
                ) -> #krate::Result<Self, #krate::ToolError> {
                    let #selected: ::std::string::String = #reader.field("command")?;
                    match #selected.as_str() {
                        #(#arms)*
                        other => #krate::Err(#krate::unknown_command(#reader.tool(), other, #listed)),
                    }
                }
            }

            #[automatically_derived]
            impl #krate::ToolCommands for #ident {
                fn command_definitions() -> ::std::vec::Vec<#krate::ToolDefinition> {
                    ::std::vec![#(#definitions),*]
                }
            }

            // A `#[tool_fn]` function taking the enum whole (`#[args]`) is a command group.
            #[automatically_derived]
            impl #krate::ToolShape for #ident {
                fn tool(function: #krate::ToolDefinition) -> #krate::Tool {
                    #krate::command_group(
                        function,
                        <Self as #krate::ToolCommands>::command_definitions(),
                    )
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expansion of `#[tool_fn]` on `source` (a function), as text.
    fn expanded(source: &str) -> String {
        let mut errors = crate::errors::Errors::default();
        let attr = crate::attr::parse_tool_attr(TokenStream::new(), &mut errors);
        let (without_body, body) = crate::ast::FnBody::split(source.parse().unwrap());
        let syn::Item::Fn(item) = syn::parse2(without_body).unwrap() else {
            panic!("not a function: {source}")
        };
        let tool = ToolFn::parse(attr, item, body.unwrap(), &mut errors);
        tool_fn(&tool, Home::Facade).to_string()
    }

    /// The part of `text` from `marker` on (the test fails when `marker` is not there).
    fn from<'a>(text: &'a str, marker: &str) -> &'a str {
        let at = text
            .find(marker)
            .unwrap_or_else(|| panic!("no {marker:?} in {text}"));
        &text[at..]
    }

    /// Asserts that `first` comes before `second` in `text`, both in it.
    fn assert_in_order(text: &str, first: &str, second: &str) {
        let at = |marker: &str| text.len() - from(text, marker).len();
        assert!(
            at(first) < at(second),
            "{first:?} after {second:?} in {text}"
        );
    }

    #[test]
    fn an_async_call_picks_its_conversion_before_making_the_future() {
        for (source, call) in [
            ("async fn add(a: u8) -> u8 { a }", "add ("),
            (
                "async fn greet(name: &str) -> String { name.to_owned() }",
                "greet (",
            ),
        ] {
            let expanded = expanded(source);
            let start = from(&expanded, "__toolsmith :: start (");
            assert_in_order(start, "__toolsmith_conversion", call);
        }
    }

    #[test]
    fn a_call_picks_its_conversion_before_reading_its_arguments() {
        for source in [
            "async fn add(a: u8) -> u8 { a }",
            "fn add(a: u8) -> u8 { a }",
            "async fn greet(name: String, polite: bool) -> String { name }",
        ] {
            assert_in_order(&expanded(source), "conversion !", "ToolArgs :: new");
        }
    }

    #[test]
    fn a_definition_picks_its_result_schema_before_building_the_arguments_schema() {
        let expanded = expanded("async fn add(a: u8) -> u8 { a }");
        let definition = from(&expanded, "__toolsmith :: definition (");
        assert_in_order(definition, "ReturnType", "ArgsObject");
    }

    /// A function of `count` parameters, `p0: String` then `u8`s, named `name`.
    fn with_parameters(name: &str, count: usize, asynchronous: bool) -> String {
        let parameters: Vec<String> = (0..count)
            .map(|i| format!("p{i}: {}", if i == 0 { "String" } else { "u8" }))
            .collect();
        let asynchronous = if asynchronous { "async " } else { "" };
        format!(
            "{asynchronous}fn {name}({}) -> String {{ p0 }}",
            parameters.join(", ")
        )
    }

    #[test]
    fn parameters_are_read_together_by_the_core_up_to_twelve() {
        for asynchronous in [true, false] {
            let twelve = expanded(&with_parameters("twelve", 12, asynchronous));
            assert!(twelve.contains("as __toolsmith :: ReadFields > :: read"));
            assert!(!twelve.contains("Misreads"), "{twelve}");
            let thirteen = expanded(&with_parameters("thirteen", 13, asynchronous));
            assert!(!thirteen.contains("ReadFields"), "{thirteen}");
            assert!(thirteen.contains("Misreads"));
        }
    }

    #[test]
    fn a_misread_drops_the_values_read_before_making_its_error() {
        // Thirteen parameters are read in place (twelve and fewer by the core, which drops
        // them itself).
        for asynchronous in [true, false] {
            let expanded = expanded(&with_parameters("greet", 13, asynchronous));
            // The error arm takes the values read out of the `match` (no `_` keeping them in
            // it) and drops them before the error is made.
            let arm = from(&expanded, "__toolsmith_unread =>");
            assert_in_order(arm, "let _ = { __toolsmith_unread }", "into_error");
        }
    }

    #[test]
    fn values_needing_no_drop_are_read_first() {
        for source in [
            "async fn search(query: String, limit: Option<u32>) -> String { query }",
            "fn search(query: String, limit: u32) -> String { query }",
        ] {
            let expanded = expanded(source);
            // The kinds and their table in the order read, each name with its parameter's
            // place.
            let read = from(&expanded, "ReadFields");
            assert_in_order(
                &expanded,
                "__toolsmith :: Required < String > ,) as",
                "ReadFields",
            );
            assert_in_order(read, "(\"limit\" , 1usize)", "(\"query\" , 0usize)");
            // Each value still goes to its own parameter.
            let arm = from(
                read,
                "__toolsmith :: Ok ((__toolsmith_value_1 , __toolsmith_value_0 ,))",
            );
            from(arm, "search (__toolsmith_value_0 , __toolsmith_value_1)");
        }
        // Read in place (more than twelve parameters): the same order.
        let expanded = expanded(
            "fn search(query: String, p1: u8, p2: u8, p3: u8, p4: u8, p5: u8, p6: u8, p7: u8, \
             p8: u8, p9: u8, p10: u8, p11: u8, limit: u32) -> String { query }",
        );
        assert_in_order(
            &expanded,
            "\"limit\" , __toolsmith_slot_12",
            "\"query\" , __toolsmith_slot_0",
        );
    }

    #[test]
    fn the_fixed_code_lexes() {
        for code in [EXECUTE_LENT, EXECUTE_NOW, TOOL_IMPL, DEFINITION, NEVER_NOW] {
            let tokens = fixed::tokens(code).to_string();
            assert!(!tokens.contains("compile_error"), "{code}");
        }
    }
}
