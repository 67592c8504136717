//! Code generation for `#[tool_fn]` (functions and command groups) and `#[derive(ToolArgs)]`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned as _;

use crate::args;
use crate::ast::{ArgField, ArgsStruct, Command, CommandEnum, Output, Param, ToolFn, ToolGroup};
use crate::attr::{Annotations, ToolAttr};
use crate::crate_path;
use crate::returns;

/// The category of a tool that names none.
const DEFAULT_CATEGORY: &str = "custom";

fn annotations_expr(krate: &TokenStream, annotations: &Annotations) -> Option<TokenStream> {
    if !annotations.any() {
        return None;
    }
    let flag = |set: Option<bool>| match set {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let read_only = flag(annotations.read_only);
    let destructive = flag(annotations.destructive);
    let idempotent = flag(annotations.idempotent);
    let open_world = flag(annotations.open_world);
    Some(quote! {
        .with_annotations({
            let mut annotations = #krate::ToolAnnotations::default();
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
    krate: &TokenStream,
    name: &str,
    description: &str,
    category: &str,
    arguments: TokenStream,
    output: Option<&Output>,
    annotations: &Annotations,
) -> TokenStream {
    let annotations = annotations_expr(krate, annotations);
    let returns = match output {
        Some(output) => returns::schema(krate, output),
        None => quote!(::core::option::Option::None),
    };
    // Built by one function of the core for every tool: the code here is its arguments.
    quote! {
        #krate::__private::generated_call::definition(
            #name,
            #description,
            #category,
            #arguments,
            #returns,
        )
        #annotations
    }
}

/// `fn timeout(&self)` when the tool has one.
fn timeout_fn(attr: &ToolAttr) -> Option<TokenStream> {
    attr.timeout_millis.map(|millis| {
        quote! {
            fn timeout(&self) -> ::core::option::Option<::core::time::Duration> {
                ::core::option::Option::Some(::core::time::Duration::from_millis(#millis))
            }
        }
    })
}

/// `fn retry_config(&self)` when the tool has `retries = N`.
fn retry_config_fn(krate: &TokenStream, attr: &ToolAttr) -> Option<TokenStream> {
    attr.retries.map(|retries| {
        let config = if retries == 0 {
            quote!(#krate::ToolRetryConfig::never())
        } else {
            quote!(#krate::ToolRetryConfig::exponential(#retries))
        };
        quote! {
            fn retry_config(&self) -> ::core::option::Option<#krate::ToolRetryConfig> {
                ::core::option::Option::Some(#config)
            }
        }
    })
}

/// `ToolImpl::execute_lent`, and `execute` (boxed the way `#[async_trait]` declares it,
/// written out rather than expanded by `async_trait`, which would cost compile time per
/// tool) lending it its arguments. `body` evaluates to the boxed future, with the arguments
/// lent as `__toolsmith_arguments`.
fn execute_fn(krate: &TokenStream, body: TokenStream) -> TokenStream {
    // The result conversion is spanned at the user's return type (for its errors), so lints
    // would see it as the user's code: these are about the generated code, not theirs.
    quote! {
        fn execute<'life0, 'async_trait>(
            &'life0 self,
            __toolsmith_arguments: #krate::ToolArguments,
        ) -> #krate::__private::generated_call::ToolFuture<'async_trait>
        where
            'life0: 'async_trait,
            Self: 'async_trait,
        {
            #krate::ToolImpl::execute_lent(self, &__toolsmith_arguments)
        }

        #[allow(clippy::needless_borrow, clippy::let_unit_value, clippy::unit_arg)]
        fn execute_lent<'__toolsmith_tool>(
            &'__toolsmith_tool self,
            __toolsmith_arguments: &#krate::ToolArguments,
        ) -> #krate::__private::generated_call::ToolFuture<'__toolsmith_tool> {
            #body
        }
    }
}

/// `ToolImpl::execute_now`: `body` evaluates to the `Option` of the finished result.
fn execute_now_fn(krate: &TokenStream, body: TokenStream) -> TokenStream {
    quote! {
        #[allow(clippy::needless_borrow, clippy::let_unit_value, clippy::unit_arg)]
        fn execute_now(
            &self,
            __toolsmith_arguments: &#krate::ToolArguments,
        ) -> ::core::option::Option<
            ::core::result::Result<#krate::ToolCallResult, #krate::ToolError>,
        > {
            #body
        }
    }
}

/// `execute_lent` for a call that `execute_now` answers: the finished result as a future.
fn execute_through_now(krate: &TokenStream, name: &str) -> TokenStream {
    quote!(#krate::__private::generated_call::run_now(self, #name, __toolsmith_arguments))
}

/// The generated `ToolImpl` for `target`: its definition (`definition` builds it),
/// `execute` and `execute_lent` (and `execute_now` when some calls are synchronous), and the
/// time limit and retries `attr` sets.
fn tool_impl(
    krate: &TokenStream,
    target: TokenStream,
    definition: &TokenStream,
    attr: &ToolAttr,
    execute: &TokenStream,
    execute_now: Option<&TokenStream>,
) -> TokenStream {
    let timeout = timeout_fn(attr);
    let retry_config = retry_config_fn(krate, attr);
    // Without `execute_now`, the manager need not try it on every call.
    let never_now = execute_now.is_none().then(|| {
        quote! {
            fn may_answer_now(&self) -> bool {
                false
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #krate::ToolImpl for #target {
            fn definition(&self) -> #krate::Tool {
                #definition
            }
            #execute
            #execute_now
            #never_now
            #timeout
            #retry_config
        }
    }
}

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
    args_ident: &'a Ident,
    /// The function (`add`) or method (`self.add`) to call.
    target: TokenStream,
    /// The arguments read (bound from the hidden struct), and whether each is `&str`.
    fields: Vec<(&'a ArgField, bool)>,
    /// The call's arguments in order: each an argument member or a `#[ctx]` ident.
    call_args: Vec<TokenStream>,
    runner: Runner,
    output: &'a Output,
}

fn call_expr(krate: &TokenStream, call: &Call<'_>) -> TokenStream {
    let generated = quote!(#krate::__private::generated_call);
    let Call {
        name,
        args_ident,
        target,
        ..
    } = call;
    let args = Ident::new("__toolsmith_args", Span::mixed_site());
    let binds = call.fields.iter().map(|(field, _)| {
        let member = &field.member;
        quote!(let #member = #args.#member;)
    });
    let call_args = &call.call_args;
    let borrows = call.fields.iter().any(|(_, borrowed)| *borrowed);
    let conversion = returns::conversion(krate, call.output);
    // Read in place rather than through a generic function of the core: one function fewer
    // to compile per tool.
    let read = quote! {
        <#args_ident as #krate::FromToolArgs>::from_tool_args(
            &#krate::ToolArgs::new(#name, __toolsmith_arguments),
        )
    };
    let call_target = quote!(#target(#(#call_args),*));
    let finish = match call.runner {
        Runner::Async if borrows => {
            // A `&str` argument is lent from a `String` the future must own.
            quote! {
                #generated::start(#name, async move { #(#binds)* #call_target.await }, #conversion)
            }
        }
        Runner::Async => quote!({ #(#binds)* #generated::start(#name, #call_target, #conversion) }),
        Runner::Blocking => quote! {
            #generated::start_blocking(#name, move || { #(#binds)* #call_target }, #conversion)
        },
        Runner::Sync => quote!({ #(#binds)* (#conversion).apply(#call_target, #name) }),
    };
    let failed = match call.runner {
        Runner::Sync => quote!(::core::result::Result::Err(error)),
        Runner::Async | Runner::Blocking => {
            quote!(#generated::finished(::core::result::Result::Err(error)))
        }
    };
    quote! {
        match #read {
            ::core::result::Result::Ok(#args) => #finish,
            ::core::result::Result::Err(error) => #failed,
        }
    }
}

/// The function building the tool's definition. Not cached: the manager keeps the definition
/// it got at registration, and a cache per tool would cost compile time for every tool.
fn definition_fn(krate: &TokenStream, build: TokenStream) -> TokenStream {
    quote! {
        fn __toolsmith_definition() -> #krate::Tool {
            #build
        }
    }
}

/// The hidden struct that gathers a function's arguments, with its reading and schema code
/// (the same code `#[derive(ToolArgs)]` writes).
fn hidden_args_struct(krate: &TokenStream, ident: &Ident, fields: &[ArgField]) -> TokenStream {
    let members = fields.iter().map(|f| &f.member);
    let types = fields.iter().map(|f| &f.ty);
    let impls = args::struct_impls(krate, ident, fields);
    quote! {
        #[allow(non_camel_case_types)]
        struct #ident { #(#members: #types,)* }
        #impls
    }
}

/// The unit struct a tool function generates, spanned at its name (the function's name, or
/// `struct_name`'s literal), so that a clash with another item of that name (E0428) points
/// there rather than at `#[tool_fn]`.
fn struct_item(vis: &syn::Visibility, struct_ident: &Ident, doc: &str) -> TokenStream {
    quote_spanned! {struct_ident.span()=>
        #[doc = #doc]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #struct_ident;
    }
}

/// A check that the generated struct's name means that struct. A proc macro cannot see the
/// other items of the module, but the compiler can: when the module already has a type of
/// that name, rustc reports the clash (E0428) and resolves the name, as a type, to the other
/// type, while the unit struct's value is still ours. Asking for a trait implemented for
/// "the type of that name" on the value then fails with a message saying what happened and
/// how to fix it (`struct_name`), instead of only the errors the derives cascade into.
fn unique_name_check(tool: &ToolFn) -> TokenStream {
    let struct_ident = &tool.struct_ident;
    let fn_ident = &tool.item.sig.ident;
    let message = format!(
        "`#[tool_fn]` generates a struct `{struct_ident}` for `fn {fn_ident}`, but this module already has a type named `{struct_ident}`"
    );
    let label = format!("`{struct_ident}` here is the struct generated for this tool");
    let note = format!(
        "name the generated struct otherwise with `#[tool_fn(struct_name = \"{struct_ident}Tool\")]`, or rename the other type"
    );
    let check = quote_spanned! {struct_ident.span()=>
        __toolsmith_is_generated(#struct_ident);
    };
    quote! {
        #[allow(dead_code, non_camel_case_types)]
        fn __toolsmith_unique_name() {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait __ToolsmithGeneratedStruct {}
            impl __ToolsmithGeneratedStruct for #struct_ident {}
            fn __toolsmith_is_generated<T: __ToolsmithGeneratedStruct>(_: T) {}
            #check
        }
    }
}

/// Expands `#[tool_fn]` on a function.
pub fn tool_fn(tool: &ToolFn) -> TokenStream {
    let krate = crate_path::resolve(tool.attr.krate.as_ref());
    let item = &tool.item;
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let struct_ident = &tool.struct_ident;
    let name = &tool.name.value;
    let description = tool.description.clone().unwrap_or_default();
    let category = tool
        .attr
        .category
        .as_ref()
        .map_or(DEFAULT_CATEGORY.to_owned(), |c| c.value.clone());
    let args_ident = format_ident!("__{}Args", struct_ident);
    let fields: Vec<&ArgField> = tool.arg_fields().collect();
    let owned_fields: Vec<ArgField> = fields.iter().map(|f| clone_field(f)).collect();
    let args_struct = hidden_args_struct(&krate, &args_ident, &owned_fields);
    let definition = definition_expr(
        &krate,
        name,
        &description,
        &category,
        quote!(<#args_ident as #krate::ArgsSchema>::args_schema()),
        Some(&tool.output),
        &tool.attr.annotations,
    );
    let definition = quote!(#krate::Tool::SingleCommand(#definition));

    let runner = if tool.attr.blocking.is_some() {
        Runner::Blocking
    } else if item.sig.asyncness.is_some() {
        Runner::Async
    } else {
        Runner::Sync
    };
    let call = Call {
        name,
        args_ident: &args_ident,
        target: quote!(#fn_ident),
        fields: tool
            .params
            .iter()
            .filter_map(|p| match p {
                Param::Arg {
                    field,
                    borrowed_str,
                } => Some((field, *borrowed_str)),
                Param::Ctx { .. } | Param::Call { .. } => None,
            })
            .collect(),
        call_args: tool
            .params
            .iter()
            .map(|param| match param {
                Param::Arg {
                    field,
                    borrowed_str: true,
                } => {
                    let member = &field.member;
                    quote!(&#member)
                }
                Param::Arg { field, .. } => {
                    let member = &field.member;
                    quote!(#member)
                }
                Param::Ctx { ident, .. } | Param::Call { ident, .. } => quote!(#ident),
            })
            .collect(),
        runner,
        output: &tool.output,
    };
    // `#[ctx]` values are cloned out of the tool before the call, so the future owns them.
    let ctx_clones = tool.params.iter().filter_map(|param| match param {
        Param::Ctx { ident, ty, .. } => Some(quote_spanned! {ty.span()=>
            let #ident: #ty = ::core::clone::Clone::clone(&self.#ident);
        }),
        // The running call's context, read as the call starts.
        Param::Call { ident, ty } => Some(quote_spanned! {ty.span()=>
            let #ident: #ty = #krate::__private::generated_call::call_context(#name);
        }),
        Param::Arg { .. } => None,
    });
    let call_expr = call_expr(&krate, &call);
    // A synchronous function is answered by `execute_now`, without a future or a copy of the
    // arguments; `execute_lent` goes through it.
    let (execute, execute_now) = if runner == Runner::Sync {
        (
            execute_fn(&krate, execute_through_now(&krate, name)),
            Some(execute_now_fn(
                &krate,
                quote!(#(#ctx_clones)* ::core::option::Option::Some(#call_expr)),
            )),
        )
    } else {
        (execute_fn(&krate, quote!(#(#ctx_clones)* #call_expr)), None)
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
    let unique_name_check = unique_name_check(tool);
    if !tool.has_ctx() {
        let struct_item = struct_item(vis, struct_ident, &struct_doc);
        // The definition is built in `definition` itself: no function of its own to compile.
        let unit_tool_impl = impl_for(quote!(#struct_ident), &definition);
        return quote! {
            #item

            #struct_item

            const _: () = {
                #args_struct
                #unique_name_check

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
            Param::Arg { .. } | Param::Call { .. } => None,
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
            let #ident = match <#ty as #krate::FromSessionParts>::from_session_parts(parts) {
                ::core::result::Result::Ok(value) => value,
                ::core::result::Result::Err(reason) => {
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
                    ::std::string::String::from(#name)
                }

                fn construct(
                    self: ::std::boxed::Box<Self>,
                    parts: &#krate::SessionParts,
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
    let struct_item = struct_item(vis, struct_ident, &struct_doc);
    quote! {
        #item

        #struct_item

        const _: () = {
            #args_struct
            #cached
            #unique_name_check

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

/// The hidden argument struct's name for a command.
fn command_args_ident(command: &Command) -> Ident {
    format_ident!("__ToolsmithArgs_{}", command.method)
}

/// Expands `#[tool_fn]` on an impl block.
pub fn tool_group(group: &ToolGroup) -> TokenStream {
    let krate = crate_path::resolve(group.attr.krate.as_ref());
    let item = &group.item;
    let self_ty = &item.self_ty;
    let name = &group.name.value;
    let category = group
        .attr
        .category
        .as_ref()
        .map_or(DEFAULT_CATEGORY.to_owned(), |c| c.value.clone());

    let mut structs = Vec::new();
    let mut definitions = Vec::new();
    let mut async_arms = Vec::new();
    let mut sync_arms = Vec::new();
    for command in &group.commands {
        let args_ident = command_args_ident(command);
        structs.push(hidden_args_struct(&krate, &args_ident, &command.fields));
        let mut annotations = command.annotations;
        let tool_flags = group.attr.annotations;
        annotations.read_only = annotations.read_only.or(tool_flags.read_only);
        annotations.destructive = annotations.destructive.or(tool_flags.destructive);
        annotations.idempotent = annotations.idempotent.or(tool_flags.idempotent);
        annotations.open_world = annotations.open_world.or(tool_flags.open_world);
        definitions.push(definition_expr(
            &krate,
            &command.name.value,
            command.description.as_deref().unwrap_or_default(),
            &category,
            quote!(<#args_ident as #krate::ArgsSchema>::args_schema()),
            Some(&command.output),
            &annotations,
        ));
        let method = &command.method;
        let call = Call {
            name,
            args_ident: &args_ident,
            target: quote!(self.#method),
            fields: command
                .fields
                .iter()
                .zip(command.borrowed_str.iter().copied())
                .collect(),
            call_args: command
                .fields
                .iter()
                .zip(&command.borrowed_str)
                .map(|(f, borrowed)| {
                    let member = &f.member;
                    if *borrowed {
                        quote!(&#member)
                    } else {
                        quote!(#member)
                    }
                })
                .collect(),
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
            sync_arms.push(quote!(#command_name => ::core::option::Option::Some(#call_expr),));
        }
    }
    let listed = group
        .commands
        .iter()
        .map(|c| format!("'{}'", c.name.value))
        .collect::<Vec<_>>()
        .join(", ");
    let tool = match group
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
    {
        Some(description) => quote!(#krate::Tool::group(
            #name,
            #description,
            ::std::vec![#(#definitions),*],
        )),
        None => quote!(#krate::Tool::MultiCommands(
            ::std::string::String::from(#name),
            ::std::vec![#(#definitions),*],
        )),
    };
    let generated = quote!(#krate::__private::generated_call);
    let read_command = |arguments: TokenStream, on_error: TokenStream| {
        quote! {
            let __toolsmith_command = match #generated::command_name(#name, #arguments) {
                ::core::result::Result::Ok(command) => command,
                ::core::result::Result::Err(error) => return #on_error,
            };
        }
    };
    let unknown = quote! {
        ::core::result::Result::Err(#krate::ToolError::invalid_arguments(
            #name,
            ::std::format!(
                "/command: unknown command {:?}; valid commands are {}",
                other, #listed,
            ),
        ))
    };
    // Synchronous commands (and every call `execute_lent` cannot start: no or an unknown
    // `command`) are answered by `execute_now`; `execute_lent` starts the `async` ones.
    let execute_now = (!sync_arms.is_empty()).then(|| {
        let read = read_command(
            quote!(__toolsmith_arguments),
            quote!(::core::option::Option::Some(::core::result::Result::Err(
                error
            ))),
        );
        let async_commands: Vec<&String> = group
            .commands
            .iter()
            .filter(|c| c.is_async)
            .map(|c| &c.name.value)
            .collect();
        let async_arm = (!async_commands.is_empty())
            .then(|| quote!(#(#async_commands)|* => ::core::option::Option::None,));
        execute_now_fn(
            &krate,
            quote! {
                #read
                match __toolsmith_command.as_str() {
                    #(#sync_arms)*
                    #async_arm
                    other => ::core::option::Option::Some(#unknown),
                }
            },
        )
    });
    let through_now = execute_through_now(&krate, name);
    let execute = if async_arms.is_empty() {
        execute_fn(&krate, through_now)
    } else {
        let read = read_command(
            quote!(__toolsmith_arguments),
            quote!(#generated::finished(::core::result::Result::Err(error))),
        );
        let others = if sync_arms.is_empty() {
            quote!(other => #generated::finished(#unknown),)
        } else {
            quote!(_ => #through_now,)
        };
        execute_fn(
            &krate,
            quote! {
                #read
                match __toolsmith_command.as_str() {
                    #(#async_arms)*
                    #others
                }
            },
        )
    };
    let group_tool_impl = tool_impl(
        &krate,
        quote!(#self_ty),
        &tool,
        &group.attr,
        &execute,
        execute_now.as_ref(),
    );
    quote! {
        #item

        const _: () = {
            #(#structs)*

            #group_tool_impl
        };
    }
}

/// Expands `#[derive(ToolArgs)]` on a struct.
pub fn args_struct(input: &ArgsStruct, krate: &TokenStream) -> TokenStream {
    let impls = args::struct_impls(krate, &input.ident, &input.fields);
    quote!(const _: () = { #impls };)
}

/// Expands `#[derive(ToolArgs)]` on an enum.
pub fn command_enum(input: &CommandEnum, krate: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let reader = Ident::new("__toolsmith_args", Span::mixed_site());
    let arms = input.variants.iter().map(|variant| {
        let command = &variant.name.value;
        let variant_ident = &variant.ident;
        if variant.unit {
            quote!(#command => ::core::result::Result::Ok(Self::#variant_ident),)
        } else {
            let read = args::read_expr(
                krate,
                &reader,
                &variant.fields,
                &quote!(Self::#variant_ident),
            );
            quote!(#command => #read,)
        }
    });
    let definitions = input.variants.iter().map(|variant| {
        let command = &variant.name.value;
        let description = variant.description.clone().unwrap_or_default();
        let schema = args::schema_expr(krate, &variant.fields);
        quote!(#krate::ToolDefinition::new(#command, #description, #schema))
    });
    let listed = input
        .variants
        .iter()
        .map(|v| format!("'{}'", v.name.value))
        .collect::<Vec<_>>()
        .join(", ");
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::FromToolArgs for #ident {
                fn from_tool_args(
                    #reader: &#krate::ToolArgs<'_>,
                ) -> ::core::result::Result<Self, #krate::ToolError> {
                    let command: ::std::string::String = #reader.field("command")?;
                    match command.as_str() {
                        #(#arms)*
                        other => ::core::result::Result::Err(#krate::ToolError::invalid_arguments(
                            #reader.tool(),
                            ::std::format!("/command: unknown command {:?}; valid commands are {}", other, #listed),
                        )),
                    }
                }
            }

            #[automatically_derived]
            impl #krate::ToolCommands for #ident {
                fn command_definitions() -> ::std::vec::Vec<#krate::ToolDefinition> {
                    ::std::vec![#(#definitions),*]
                }
            }
        };
    }
}
